// Scalar rules of Tesla arithmetic (see docs/tesla.md for every choice).
#include <cmath>
#include <cstring>

#include "frontend/tesla/interp.h"

namespace gpurc::tesla::sem {

namespace {

float f(uint32_t u) {
  float x;
  std::memcpy(&x, &u, 4);
  return x;
}
uint32_t u(float x) {
  uint32_t v;
  std::memcpy(&v, &x, 4);
  return v;
}
bool is_nan(uint32_t a) { return (a & 0x7fffffffu) > 0x7f800000u; }
// Denormal inputs and outputs are flushed to zero of the same sign.
uint32_t ftz(uint32_t a) { return (a & 0x7f800000u) == 0 ? (a & 0x80000000u) : a; }
constexpr uint32_t kNaN = 0x7fffffffu;

// Round the nearest-rounded result r toward zero, given the exact error e
// (exact = r + e).
float toward_zero(float r, float e) {
  if (e == 0.0f || std::isnan(r)) return r;
  if (std::isinf(r)) return std::copysign(3.40282347e38f, r);
  if ((r > 0) != (e > 0)) return std::nextafter(r, 0.0f);
  return r;
}

}  // namespace

uint32_t fadd(uint32_t a, uint32_t b, bool rz) {
  a = ftz(a);
  b = ftz(b);
  if (is_nan(a) || is_nan(b)) return kNaN;
  float x = f(a), y = f(b);
  float r = x + y;
  if (std::isnan(r)) return kNaN;  // inf - inf
  if (rz && std::isfinite(r)) {
    // TwoSum: the exact error of the nearest-rounded sum.
    float bb = r - x;
    float e = (x - (r - bb)) + (y - bb);
    r = toward_zero(r, e);
  } else if (rz && std::isinf(r) && std::isfinite(x) && std::isfinite(y)) {
    r = std::copysign(3.40282347e38f, r);
  }
  return ftz(u(r));
}

uint32_t fmul(uint32_t a, uint32_t b, bool rz) {
  a = ftz(a);
  b = ftz(b);
  if (is_nan(a) || is_nan(b)) return kNaN;
  float x = f(a), y = f(b);
  float r = x * y;
  if (std::isnan(r)) return kNaN;  // 0 * inf
  if (rz) {
    if (std::isinf(r) && std::isfinite(x) && std::isfinite(y)) r = std::copysign(3.40282347e38f, r);
    else if (std::isfinite(r)) {
      // The exact product fits a double (24 + 24 bits); compare to decide the direction.
      double exact = double(x) * double(y);
      if (double(r) != exact && std::fabs(double(r)) > std::fabs(exact)) r = std::nextafter(r, 0.0f);
    }
  }
  return ftz(u(r));
}

uint32_t fmad(uint32_t a, uint32_t b, uint32_t c) {
  a = ftz(a);
  b = ftz(b);
  c = ftz(c);
  if (is_nan(a) || is_nan(b) || is_nan(c)) return kNaN;
  uint32_t p;
  if ((a & 0x7fffffffu) == 0 || (b & 0x7fffffffu) == 0) {
    // An exact zero product keeps its IEEE sign (so -0 + -0 stays -0).
    if (std::isinf(f(a)) || std::isinf(f(b))) return kNaN;
    p = ((a ^ b) & 0x80000000u);
  } else {
    p = fmul(a, b, true);
  }
  return fadd(p, c, false);
}

uint32_t fsat(uint32_t a) {
  if (is_nan(a)) return 0;
  if (a & 0x80000000u) return 0;  // negatives and -0 -> +0
  if (f(a) >= 1.0f) return 0x3f800000u;
  return a;
}

uint8_t flags_int(uint32_t res, unsigned bits) {
  uint32_t m = bits == 16 ? 0xffffu : 0xffffffffu;
  res &= m;
  uint8_t fl = 0;
  if (res == 0) fl |= 1;
  if (res >> (bits - 1) & 1) fl |= 2;
  return fl;
}

uint8_t flags_float(uint32_t a) {
  uint8_t fl = 0;
  bool nan = is_nan(a);
  if (nan || (a & 0x7fffffffu) == 0) fl |= 1;
  if (nan || (a & 0x80000000u)) fl |= 2;
  return fl;
}

bool pred(uint8_t c, unsigned code) {
  bool Z = c & 1, S = (c >> 1) & 1, C = (c >> 2) & 1, O = (c >> 3) & 1;
  switch (code) {
    case 0x00: return false;
    case 0x01: return (S && !Z) != O;
    case 0x02: return Z && !S;
    case 0x03: return S != (Z || O);
    case 0x04: return !Z && !(S != O);
    case 0x05: return !Z;
    case 0x06: return !(S != O);
    case 0x07: return !Z || !S;
    case 0x08: return Z && S;
    case 0x09: return S != O;
    case 0x0a: return Z;
    case 0x0b: return Z || (S != O);
    case 0x0c: return (!S) != (Z || O);
    case 0x0d: return !Z || S;
    case 0x0e: return (!S || Z) != O;
    case 0x0f: return true;
    case 0x10: return O;
    case 0x11: return C;
    case 0x12: return !Z && C;
    case 0x13: return S;
    case 0x1c: return !S;
    case 0x1d: return Z || !C;
    case 0x1e: return !C;
    case 0x1f: return !O;
    default: return false;  // 0x14..0x1b do not decode
  }
}

// preex2/presin produce a sign + 7.23 fixed-point value; 0x40000000 marks NaN
// and 0x40800000 infinity (envydis g80.c notes on preex2).
static uint32_t to_fixed(double v, bool neg) {
  double m = std::fabs(v) * 8388608.0;
  uint32_t bits = m >= 1073741823.0 ? 0x3fffffffu : uint32_t(m);
  return bits | (neg ? 0x80000000u : 0);
}

uint32_t preex2(uint32_t a) {
  a = ftz(a);
  if (is_nan(a)) return 0x40000000u;
  bool neg = a >> 31;
  if ((a & 0x7fffffffu) == 0x7f800000u) return 0x40800000u | (neg ? 0x80000000u : 0);
  return to_fixed(f(a), neg);
}

uint32_t presin(uint32_t a) {
  a = ftz(a);
  if (is_nan(a) || (a & 0x7fffffffu) == 0x7f800000u) return 0x40000000u;
  double x = f(a);
  // Quarter turns, reduced modulo 4 (a full turn), sign kept.
  double q = std::fmod(std::fabs(x) / (M_PI / 2), 4.0);
  return to_fixed(q, x < 0);
}

static double from_fixed(uint32_t v, bool& nan, bool& inf) {
  nan = (v & 0x7fffffffu) == 0x40000000u;
  inf = (v & 0x7fffffffu) == 0x40800000u;
  double m = double(v & 0x3fffffffu) / 8388608.0;
  return (v >> 31) ? -m : m;
}

static uint32_t to_f32(double d) {
  if (std::isnan(d)) return kNaN;
  return ftz(u(float(d)));
}

uint32_t sfu(Op op, uint32_t a) {
  switch (op) {
    case Op::Rcp: {
      a = ftz(a);
      if (is_nan(a)) return kNaN;
      return to_f32(1.0 / double(f(a)));
    }
    case Op::Rsqrt: {
      a = ftz(a);
      if (is_nan(a)) return kNaN;
      double x = f(a);
      if (x < 0) return kNaN;
      if (x == 0) return (a & 0x80000000u) ? 0xff800000u : 0x7f800000u;
      return to_f32(1.0 / std::sqrt(x));
    }
    case Op::Lg2: {
      a = ftz(a);
      if (is_nan(a)) return kNaN;
      double x = f(a);
      if (x < 0) return kNaN;
      if (x == 0) return 0xff800000u;
      return to_f32(std::log2(x));
    }
    case Op::Ex2: {
      bool nan, inf;
      double v = from_fixed(a, nan, inf);
      if (nan) return kNaN;
      if (inf) return (a >> 31) ? 0 : 0x7f800000u;
      return to_f32(std::exp2(v));
    }
    case Op::Sin:
    case Op::Cos: {
      bool nan, inf;
      double v = from_fixed(a, nan, inf);
      if (nan || inf) return kNaN;
      double x = v * (M_PI / 2);
      return to_f32(op == Op::Sin ? std::sin(x) : std::cos(x));
    }
    default: return kNaN;
  }
}

}  // namespace gpurc::tesla::sem
