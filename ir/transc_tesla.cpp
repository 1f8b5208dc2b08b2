// Transc::Tesla: the Tesla SFU model (see transc_tesla.h), shared with the
// reference interpreter. IR mapping (f32 only):
//   frcp, frsqrt, flog2     float input
//   fexp2, fsin, fcos       fixed-point input (the output of preex2/presin)
//   fsin_step a, b          b == 0: presin(a), otherwise preex2(a); fixed-point result
// Translators must not set FtzIn/FtzOut on the fixed-point side of these ops
// (small fixed-point values look like subnormals).
#include "ir/transc_tesla.h"

#include "ir/transc.h"
#include "ir/transc_tesla_tables.h"

namespace gpurc::ir::tesla_sfu {

// The hardware algorithm (envytools nvhw/sfu.c documents it and hwtest checks
// it against G80..GT215 boards): the high bits of the significand select a
// table slice (A, B, C), the low bits r give A + B r + C r^2 in fixed point,
// where r^2 comes from a truncating 17-bit squarer. Everything below is
// integer arithmetic on the bit patterns, so the interpreter and every IR
// engine agree bit for bit.

namespace {

constexpr uint32_t kOne = 0x800000u;  // the implicit significand bit
constexpr uint32_t kInf = 0x7f800000u;
constexpr uint32_t kFixedNaN = 0x40000000u;  // presin/preex2 encodings
constexpr uint32_t kFixedInf = 0x40800000u;

uint32_t sign_of(uint32_t a) { return a & 0x80000000u; }
int exp_of(uint32_t a) { return int(a >> 23 & 0xff); }
uint32_t frac_of(uint32_t a) { return a & 0x7fffffu; }

// The SFU's squarer: partial products of the 17-bit operand, each truncated
// before the sum (so not exactly (r * r) >> 18).
uint32_t square17(uint32_t r) {
  uint32_t sum = 0;
  for (int i = 0; i < 17; ++i)
    if (r >> i & 1) sum += r >> (18 - i);
  return sum >> 1;
}

// A normalised result: `sig` in [kOne, 2 kOne] (2 kOne carries into the
// exponent), exponents <= 0 flush to a signed zero, >= 255 give infinity.
uint32_t pack(uint32_t sign, int e, uint32_t sig) {
  if (sig == 2 * kOne) sig = kOne, ++e;
  if (e <= 0 || sig < kOne) return sign;
  if (e >= 255) return sign | kInf;
  return sign | uint32_t(e) << 23 | (sig - kOne);
}

// Shift a positive value left until bit `top` is its highest set bit.
uint64_t normalise(uint64_t v, int& e, int top) {
  while (!(v >> top & 1)) v <<= 1, --e;
  return v;
}

int64_t poly(const SfuSlice& t, int sa, uint32_t r, uint32_t r2, int sc) {
  return int64_t(t.a) * (int64_t(1) << sa) + int64_t(t.b) * r + int64_t(t.c) * r2 * (int64_t(1) << sc);
}

bool is_nan(uint32_t a) { return exp_of(a) == 255 && frac_of(a); }
bool is_inf(uint32_t a) { return exp_of(a) == 255 && !frac_of(a); }

// sin/cos of the quarter-turn fixed-point argument; the table covers one
// quadrant and the others follow by symmetry (bit 0 of the integer part
// mirrors the fraction, bit 1 negates).
uint32_t sin_cos(uint32_t a, bool cos) {
  uint32_t sign = sign_of(a);
  int q = exp_of(a);  // sign + 7.23 fixed point: bits 23..30 are the integer part
  uint32_t f = frac_of(a);
  if (q & 0x80) return kNaN;  // the NaN and infinity encodings
  if (cos) ++q, sign = 0;
  if (q & 1) f = ~f;
  if (q >> 1 & 1) sign ^= 0x80000000u;
  uint32_t r = f & 0x1ffff;
  int64_t v = poly(kSinTab[f >> 17 & 0x3f], 11, r, square17(r), 0);
  if (v == 0) return sign;
  int e = 127;
  v = int64_t(normalise(uint64_t(v), e, 37));
  return pack(sign, e, uint32_t(v >> 14));  // truncated
}

}  // namespace

uint32_t rcp(uint32_t a) {
  uint32_t sign = sign_of(a);
  int e = exp_of(a);
  if (is_nan(a)) return kNaN;
  if (is_inf(a)) return sign;
  if (e == 0) return sign | kInf;  // zero or denormal (flushed)
  uint32_t f = frac_of(a), r = f & 0xffff;
  int64_t v = (poly(kRcpTab[f >> 16], 13, r, square17(r << 1), 0) + 0x47e7) >> 15;
  return pack(sign, 253 - e, uint32_t(v));
}

uint32_t rsqrt(uint32_t a) {
  uint32_t sign = sign_of(a);
  int e = exp_of(a);
  if (is_nan(a)) return kNaN;
  if (e == 0) return sign | kInf;  // +-0 (and denormals) -> +-infinity
  if (sign) return kNaN;
  if (is_inf(a)) return 0;
  int ue = e - 127;
  uint32_t f = frac_of(a) | uint32_t(ue & 1) << 23;  // [1, 4): odd exponents use the second half
  int re = 126 - (ue >> 1);                          // floor division
  if (f == 0) return pack(0, re + 1, kOne);
  uint32_t r = f & 0x1ffff;
  int64_t v = (poly(kRsqrtTab[f >> 17], 14, r, square17(r), 2) + 0x7fff) >> 16;
  return pack(0, re, uint32_t(v));
}

uint32_t lg2(uint32_t a) {
  int e = exp_of(a);
  if (is_nan(a)) return kNaN;
  if (e == 0) return 0x80000000u | kInf;  // lg2(+-0) = -infinity
  if (sign_of(a)) return kNaN;
  if (is_inf(a)) return a;
  uint32_t f = frac_of(a);
  int64_t v = 0;  // fraction of the result, 36 bits
  if (f != 0 || e != 127) {
    uint32_t r = f & 0x1ffff;
    v = (poly(kLg2Tab[f >> 17], 12, r, square17(r), 1) + 0x3345) >> 2;
  }
  v += int64_t(e - 127) * (int64_t(1) << 36);
  uint32_t sign = 0;
  if (v < 0) sign = 0x80000000u, v = ~v;
  if (v == 0) return 0;
  int re = 127 + 6;
  v = int64_t(normalise(uint64_t(v), re, 42));
  return pack(sign, re, uint32_t(v >> 19));  // truncated
}

uint32_t ex2(uint32_t a) {
  int ip = exp_of(a);  // integer part of the sign + 7.23 fixed-point input
  uint32_t f = frac_of(a);
  if (ip & 0x80) {
    if (!(ip & 1)) return kNaN;
    return sign_of(a) ? 0 : kInf;
  }
  if (sign_of(a)) {  // 2^-x = 2^(-ceil x) * 2^(ceil x - x)
    ip = -ip - 1;
    if (f) f = ~f;
    else ++ip;
  }
  uint32_t r = f & 0x1ffff;
  int64_t v = (poly(kEx2Tab[f >> 17 & 0x3f], 13, r, square17(r), 0) + 0x77e2) >> 15;
  return pack(0, ip + 127, uint32_t(v));
}

uint32_t sin(uint32_t a) { return sin_cos(a, false); }
uint32_t cos(uint32_t a) { return sin_cos(a, true); }

namespace {

// presin (sin = true) and preex2: float -> sign + 7.23 fixed point, truncated.
uint32_t pre(uint32_t a, bool sin) {
  uint32_t sign = sign_of(a);
  if (is_nan(a)) return sign | kFixedNaN;
  if (is_inf(a)) return sign | kFixedInf;
  int e = exp_of(a);
  if (e == 0) return sign;  // zero and flushed denormals
  uint32_t f = frac_of(a) | kOne;
  int sh = e - 127;
  if (sin) {
    f = uint32_t(uint64_t(f) * 0xa2f983u >> 16);  // times 2/pi (0.24 fixed point): quarter turns
    sh -= 8;
  }
  if (!sin && sh >= 7) return sign | kFixedInf;
  if (sh >= 32) f = 0;
  else if (sh >= 0) f <<= sh;
  else f = -sh >= 32 ? 0 : f >> -sh;
  if (sin) f &= 0x1ffffff;  // modulo four quarter turns
  return sign | f;
}

}  // namespace

uint32_t preex2(uint32_t a) { return pre(a, false); }
uint32_t presin(uint32_t a) { return pre(a, true); }

}  // namespace gpurc::ir::tesla_sfu

namespace gpurc::ir::transc {

bool tesla_defines(Opcode op, Type t) {
  if (t != Type::F32) return false;
  switch (op) {
    case Opcode::FRcp: case Opcode::FRsqrt: case Opcode::FLog2: case Opcode::FExp2:
    case Opcode::FSin: case Opcode::FCos: case Opcode::FSinStep:
      return true;
    default:
      return false;
  }
}

uint64_t tesla(const LaneOp& o, uint64_t a, uint64_t b) {
  uint32_t x = uint32_t(a);
  switch (o.op) {
    case Opcode::FRcp: return tesla_sfu::rcp(x);
    case Opcode::FRsqrt: return tesla_sfu::rsqrt(x);
    case Opcode::FLog2: return tesla_sfu::lg2(x);
    case Opcode::FExp2: return tesla_sfu::ex2(x);
    case Opcode::FSin: return tesla_sfu::sin(x);
    case Opcode::FCos: return tesla_sfu::cos(x);
    case Opcode::FSinStep: return b == 0 ? tesla_sfu::presin(x) : tesla_sfu::preex2(x);
    default: return 0;
  }
}

}  // namespace gpurc::ir::transc
