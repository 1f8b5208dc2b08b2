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
