// Scalar rules of Tesla arithmetic (see docs/tesla.md for every choice).
#include <cmath>
#include <cstring>

#include "frontend/tesla/interp.h"
#include "ir/transc_tesla.h"

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

// fmad (nvhw fp32_mad, FTZ, round to nearest): the product is truncated to
// 24 bits but keeps an unbounded exponent (it neither overflows to the
// largest float nor flushes before the addition); the sum then rounds to
// nearest once, so a product beyond the float range overflows the sum to
// +-inf. When an input is zero (after flushing) the operation is a plain
// rounded mul followed by a rounded add. The product of two floats is exact
// in a double and so is its sum with a float when their exponents are at
// most 29 apart; otherwise the smaller term is far below half an f32 ulp of
// the larger and the double's rounding cannot move the final f32 rounding.
uint32_t fmad(uint32_t a, uint32_t b, uint32_t c) {
  a = ftz(a);
  b = ftz(b);
  c = ftz(c);
  if (is_nan(a) || is_nan(b) || is_nan(c)) return kNaN;
  bool za = (a & 0x7fffffffu) == 0, zb = (b & 0x7fffffffu) == 0, zc = (c & 0x7fffffffu) == 0;
  if (za || zb || zc) return fadd(fmul(a, b, false), c, false);
  bool inf_a = (a & 0x7fffffffu) == 0x7f800000u, inf_b = (b & 0x7fffffffu) == 0x7f800000u;
  bool inf_c = (c & 0x7fffffffu) == 0x7f800000u;
  uint32_t ps = (a ^ b) & 0x80000000u;
  if (inf_a || inf_b) {
    if (inf_c && (c & 0x80000000u) != ps) return kNaN;
    return ps | 0x7f800000u;
  }
  if (inf_c) return c;
  double p = double(f(a)) * double(f(b));
  uint64_t pb;
  std::memcpy(&pb, &p, 8);
  pb &= ~((uint64_t(1) << 29) - 1);  // keep 24 significant bits
  std::memcpy(&p, &pb, 8);
  double s = p + double(f(c));
  return ftz(u(float(s)));
}

// sat clamps to [0, 1]; a NaN stays the canonical NaN (nvhw fp32_sat without
// the G200 "NaN to zero" configuration bit).
uint32_t fsat(uint32_t a) {
  if (is_nan(a)) return kNaN;
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

// The flags of a comparison with 0 (nvhw fp32_cmp with flushing): +-0 and
// denormals are "equal" (Z only, whatever the sign), NaN is unordered (Z and
// S), a negative number is S.
uint8_t flags_float(uint32_t a) {
  if (is_nan(a)) return 3;
  if ((a & 0x7f800000u) == 0) return 1;
  return (a & 0x80000000u) ? 2 : 0;
}

// The same for f64, without flushing (nvhw fp64_cmp): only +-0 is zero.
uint8_t flags_double(uint64_t a) {
  uint64_t mag = a & 0x7fffffffffffffffull;
  if (mag > 0x7ff0000000000000ull) return 3;
  if (mag == 0) return 1;
  return (a >> 63) ? 2 : 0;
}

// An f32 result of the f64 unit (cvt f32 from f64/u64/s64): its denormals
// are numbers (nvhw fp32_cmp without flushing).
uint8_t flags_float_noftz(uint32_t a) {
  if (is_nan(a)) return 3;
  if ((a & 0x7fffffffu) == 0) return 1;
  return (a & 0x80000000u) ? 2 : 0;
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

// ---------------------------------------------------------------- conversions
// Rounding modes as the instruction encodes them (and nvhw numbers them):
// 0 nearest even, 1 down, 2 up, 3 toward zero.

namespace {

// The rounding mode applied to a magnitude whose number is negative.
int mirror(int rm, bool negative) {
  if (negative && rm == 1) return 2;
  if (negative && rm == 2) return 1;
  return rm;
}

// x >> shift, rounded in `rm` as a magnitude (shift may be 64 or more).
uint64_t shift_round(uint64_t x, int shift, int rm) {
  if (shift <= 0) return x;
  uint64_t q, rest, half;
  bool above_half, at_half;
  if (shift >= 64) {
    q = 0;
    rest = x;
    if (shift > 64) {
      above_half = false;
      at_half = false;
    } else {
      above_half = rest > (1ull << 63);
      at_half = rest == (1ull << 63);
    }
  } else {
    q = x >> shift;
    rest = x & ((1ull << shift) - 1);
    half = 1ull << (shift - 1);
    above_half = rest > half;
    at_half = rest == half;
  }
  if (rm == 2 && rest) ++q;
  if (rm == 0 && (above_half || (at_half && (q & 1)))) ++q;
  return q;
}

}  // namespace

uint32_t f16_to_f32(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t e = (h >> 10) & 0x1f, m = h & 0x3ffu;
  if (e == 31) return m ? kNaN : sign | 0x7f800000u;
  if (e == 0) {
    if (m == 0) return sign;
    // A denormal half is a normal float: normalise the fraction.
    int ex = 113;  // exponent field of 2^-14
    while (!(m & 0x400u)) {
      m <<= 1;
      --ex;
    }
    return sign | uint32_t(ex) << 23 | (m & 0x3ffu) << 13;
  }
  return sign | (e + 112) << 23 | m << 13;
}

// f32 -> f16 (nvhw fp32_to_fp16): the input flushes; below 2^-34 the
// result is a signed zero in every mode; half denormals are produced; the
// significand rounds in `rm` (toward zero when `truncate`, for a value rni
// already made integral) and an overflow gives inf or, toward zero or away
// from inf, the largest half 0x7bff.
uint16_t f32_to_f16(uint32_t x, int rm, bool truncate) {
  uint16_t sign = uint16_t((x >> 16) & 0x8000u);
  uint32_t e = (x >> 23) & 0xff, m = x & 0x7fffffu;
  if (e == 0xff) return m ? 0x7fff : uint16_t(sign | 0x7c00u);
  if (e <= 0x5d) return sign;  // includes zeros and (flushed) denormals
  int eh = int(e) - 112;
  int shift = 13;
  if (eh <= 0) {
    shift += 1 - eh;
    eh = 1;
  }
  uint64_t f = shift_round(m | 0x800000u, shift, truncate ? 3 : mirror(rm, sign != 0));
  if (f == 0x800) {
    f >>= 1;
    ++eh;
  }
  if (f < 0x400) return uint16_t(sign | f);
  if (eh >= 31) {
    bool to_max = rm == 3 || mirror(rm, sign != 0) == 1;
    return uint16_t(sign | (to_max ? 0x7bffu : 0x7c00u));
  }
  return uint16_t(sign | uint32_t(eh) << 10 | (uint32_t(f) - 0x400u));
}

// An unsigned 64-bit magnitude to f32 bits, rounded in `rm` (no sign).
uint32_t u64_to_f32(uint64_t v, int rm) {
  if (v == 0) return 0;
  int lead = 63 - __builtin_clzll(v);
  int e = 127 + lead;
  uint64_t f = lead > 23 ? shift_round(v, lead - 23, rm) : v << (23 - lead);
  if (f == (1ull << 24)) {
    f >>= 1;
    ++e;
  }
  if (e >= 255) return (rm == 3 || rm == 1) ? 0x7f7fffffu : 0x7f800000u;
  return uint32_t(e) << 23 | (uint32_t(f) & 0x7fffffu);
}

// The same to f64 bits.
uint64_t u64_to_f64(uint64_t v, int rm) {
  if (v == 0) return 0;
  int lead = 63 - __builtin_clzll(v);
  int e = 1023 + lead;
  uint64_t f = lead > 52 ? shift_round(v, lead - 52, rm) : v << (52 - lead);
  if (f == (1ull << 53)) {
    f >>= 1;
    ++e;
  }
  return uint64_t(e) << 52 | (f & 0xfffffffffffffull);
}

// A non-negative float magnitude (f32 or f64 bits, sign already removed) to
// an unsigned 64-bit integer rounded in `rm`; all ones when it does not fit
// (nvhw fp32_to_u64 / fp64_to_u64 for a finite or infinite magnitude).
uint64_t float_to_u64(uint64_t bits, bool f64, int rm, bool flush) {
  int ebits = f64 ? 11 : 8, mbits = f64 ? 52 : 23;
  uint64_t e = bits >> mbits & ((1u << ebits) - 1), m = bits & ((1ull << mbits) - 1);
  uint64_t emax = (1u << ebits) - 1;
  if (e == emax) return ~0ull;  // inf (NaN is the caller's)
  int ex;
  uint64_t f;
  if (e == 0) {
    ex = 1;
    f = flush ? 0 : m;
  } else {
    ex = int(e);
    f = m | (1ull << mbits);
  }
  int bias = f64 ? 1023 : 127;
  int shift = bias + mbits - ex;  // value = f >> shift
  if (shift < 0) {
    if (-shift > 63 - mbits) return ~0ull;
    return f << -shift;
  }
  return shift_round(f, shift, rm);
}

// The SFU model lives in ir/transc_tesla.cpp so the IR's Transc::Tesla ops
// and this interpreter share one definition.
uint32_t preex2(uint32_t a) { return ir::tesla_sfu::preex2(a); }
uint32_t presin(uint32_t a) { return ir::tesla_sfu::presin(a); }

uint32_t sfu(Op op, uint32_t a) {
  switch (op) {
    case Op::Rcp: return ir::tesla_sfu::rcp(a);
    case Op::Rsqrt: return ir::tesla_sfu::rsqrt(a);
    case Op::Lg2: return ir::tesla_sfu::lg2(a);
    case Op::Ex2: return ir::tesla_sfu::ex2(a);
    case Op::Sin: return ir::tesla_sfu::sin(a);
    case Op::Cos: return ir::tesla_sfu::cos(a);
    default: return kNaN;
  }
}

}  // namespace gpurc::tesla::sem
