#include "frontend/g13/fp.h"

#include <cmath>
#include <cstring>

#include "ir/transc_g13.h"

namespace gpurc::g13::fp {
namespace {
uint64_t bits64(double x) {
  uint64_t u;
  std::memcpy(&u, &x, 8);
  return u;
}
double from64(uint64_t u) {
  double x;
  std::memcpy(&x, &u, 8);
  return x;
}
}  // namespace

double f16_to_f64(uint16_t h) {
  const double sign = (h & 0x8000) ? -1.0 : 1.0;
  const unsigned e = (h >> 10) & 31, m = h & 1023;
  if (e == 31) return m ? std::nan("") : sign * INFINITY;
  if (e == 0) return sign * std::ldexp(double(m), -24);
  return sign * std::ldexp(double(1024 + m), int(e) - 25);
}

double f32_to_f64_ftz(uint32_t f) {
  if ((f & 0x7F800000u) == 0) return (f & 0x80000000u) ? -0.0 : 0.0;
  float x;
  std::memcpy(&x, &f, 4);
  return double(x);
}

uint16_t f64_to_f16(double x) {
  if (std::isnan(x)) return kNaN16;
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  const double a = std::fabs(x);
  if (a >= 65520.0) return sign | 0x7C00;  // rounds to infinity
  if (a < std::ldexp(1.0, -14)) {
    const double q = std::nearbyint(a * std::ldexp(1.0, 24));  // exact scaling, RNE
    return uint16_t(sign | uint16_t(q));                        // q == 1024 is the smallest normal
  }
  int k;
  std::frexp(a, &k);  // a = m * 2^k, m in [0.5, 1)
  int e = k - 1;
  double q = std::nearbyint(std::ldexp(a, 10 - e));  // in [1024, 2048]
  if (q == 2048.0) {
    q = 1024.0;
    ++e;
  }
  if (e + 15 >= 31) return sign | 0x7C00;
  return uint16_t(sign | uint16_t((e + 15) << 10) | uint16_t(q - 1024.0));
}

uint32_t f64_to_f32_ftz(double x) {
  if (std::isnan(x)) return kNaN32;
  if (std::fabs(x) < std::ldexp(1.0, -126)) return std::signbit(x) ? 0x80000000u : 0u;
  const float f = float(x);  // round to nearest even; overflow -> inf
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

double fma_round_odd(double a, double b, double c) {
  if (std::isnan(a) || std::isnan(b) || std::isnan(c)) return std::nan("");
  const double p = a * b;  // exact: f32/f16 significands have at most 24 bits
  if (std::isnan(p)) return std::nan("");  // inf * 0
  const double s = p + c;
  if (std::isnan(s)) return std::nan("");  // inf - inf
  if (std::isinf(s) || std::isinf(p) || std::isinf(c)) return s;
  // TwoSum: s + e == p + c exactly.
  const double bb = s - p;
  const double e = (p - (s - bb)) + (c - bb);
  if (e == 0) return s;
  // Inexact: truncate the exact value toward zero, then force the last bit.
  double t = s;
  if ((s > 0 && e < 0) || (s < 0 && e > 0)) t = std::nextafter(s, 0.0);
  return from64(bits64(t) | 1);
}

double saturate(double x) {
  if (std::isnan(x) || std::signbit(x)) return 0.0;
  return x > 1.0 ? 1.0 : x;
}

uint32_t to_dest(double x, unsigned dest_bits, bool op32) {
  if (dest_bits == 32) return f64_to_f32_ftz(x);
  if (op32) {
    const uint32_t f = f64_to_f32_ftz(x);
    if (f == kNaN32) return kNaN16;
    return f64_to_f16(f32_to_f64_ftz(f));
  }
  return f64_to_f16(x);
}

// The transcendental model lives in ir/transc_g13.cpp (shared with the JIT).
double rcp(double x) { return ir::transc::g13model::rcp(x); }
double rsqrt(double x) { return ir::transc::g13model::rsqrt(x); }
double rsqrt_special(double x) { return ir::transc::g13model::rsqrt_special(x); }
double sin_pt_1(double x) { return ir::transc::g13model::sin_pt_1(x); }
double sin_pt_2(double y) { return ir::transc::g13model::sin_pt_2(y); }
double log2(double x) { return ir::transc::g13model::log2(x); }
double exp2(double x) { return ir::transc::g13model::exp2(x); }
double rint(double x) { return std::nearbyint(x); }

}  // namespace gpurc::g13::fp
