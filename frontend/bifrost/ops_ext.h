// ARM Mali Bifrost: the lane/byte-vector integer, fp16, conversion and
// float-classification instructions (docs/bifrost.md "Vector and conversion
// instructions"), defined once and instantiated twice: with ScalarEmit (one
// lane of the reference interpreter, plain C++ arithmetic) and with the IR
// emitter of translate.cpp (one IR op per primitive). Every primitive of the
// emitter interface has a one-line meaning below, so the two instantiations
// compute the same bits; the interpreter-vs-JIT fuzzer and the per-instruction
// edge-value tests check the IR side against the scalar side.
//
// Emitter interface (E::V = 32-bit integer, E::B = bool, E::D = f64, E::Q = 64-bit integer):
//   k(u32) constant; add sub mul and_ or_ xor_ (V,V); not_(V); shl/lshr/ashr(V, unsigned n < 32);
//   shlv/lshrv/ashrv(V, V n) with n already in 0..31; eq ne ult ule slt sle (V,V) -> B;
//   band bor (B,B), bnot(B); sel(B,V,V), seld(B,D,D); b2i(B) = 0/1; clz(V) (32 for 0);
//   kq(u64); zx sx (V) -> Q; lo hi (Q) -> V; addq orq andq mulq (Q,Q); sel_q(B,Q,Q); dbits(D) -> Q, qd(Q) -> D
//   (bit casts); dlog2 / dexp2 (D): the host libm's f64 log2 / exp2 (the IR's flog2/fexp2 on f64 call the same); shlq lshrq ashrq (Q, V n in 0..63);
//   kd(double); f32d(V) / f16d(V low 16 bits) exact widening; i2d(V, signed) exact;
//   d2f32(D, Round) / d2f16(D, Round) one rounding, canonical NaN (0x7fc00000 / 0x7e00), f16 in the low 16 bits;
//   pow2d(V n in [-1000, 1000]) = 2^n exactly; drcp(D) = 1/x, drsq(D) = 1/sqrt(x), dsqrt(D) (f64, correctly rounded each step);
//   dadd dmul (D,D) f64 round to nearest; dfma(D,D,D) f64 fused; dround(D, mode) floor/ceil/trunc/rint in f64;
//   dcmp(cmp code, D, D) with the interpreter's compare meanings; disnan(D);
//   d2i(D, signed, Round) saturating to 32 bits, NaN -> 0.
#pragma once
#include <bit>
#include <cmath>
#include <cstdint>
#include <string>

#include "frontend/bifrost/interp.h"
#include "ir/float_bits.h"

namespace gpurc::bifrost::ext {

// Compare codes (the cmpf modifier), as interp.cpp numbers them.
enum Cmp { kEq, kGt, kGe, kNe, kLt, kLe, kGtLt, kTotal, kNoCmp };
inline int cmp_code(const std::string& c) {
  static const char* names[] = {"eq", "gt", "ge", "ne", "lt", "le", "gtlt", "total"};
  for (int i = 0; i < 8; ++i)
    if (c == names[i]) return i;
  return kNoCmp;
}
enum RoundTo { kRint = 0, kFloor, kCeil, kTrunc };
inline ir::Round round_of(const std::string& r) {
  if (r == "rtp") return ir::Round::Up;
  if (r == "rtn") return ir::Round::Down;
  if (r == "rtz") return ir::Round::TowardZero;
  return ir::Round::NearestEven;
}

// One lane of the reference interpreter.
struct ScalarEmit {
  using V = uint32_t;
  using B = bool;
  using D = double;
  using Q = uint64_t;
  V k(uint32_t x) { return x; }
  V add(V a, V b) { return a + b; }
  V sub(V a, V b) { return a - b; }
  V mul(V a, V b) { return a * b; }
  V and_(V a, V b) { return a & b; }
  V or_(V a, V b) { return a | b; }
  V xor_(V a, V b) { return a ^ b; }
  V not_(V a) { return ~a; }
  V shl(V a, unsigned n) { return a << n; }
  V lshr(V a, unsigned n) { return a >> n; }
  V ashr(V a, unsigned n) { return uint32_t(int32_t(a) >> n); }
  V shlv(V a, V n) { return a << (n & 31); }
  V lshrv(V a, V n) { return a >> (n & 31); }
  V ashrv(V a, V n) { return uint32_t(int32_t(a) >> (n & 31)); }
  B eq(V a, V b) { return a == b; }
  B ne(V a, V b) { return a != b; }
  B ult(V a, V b) { return a < b; }
  B ule(V a, V b) { return a <= b; }
  B slt(V a, V b) { return int32_t(a) < int32_t(b); }
  B sle(V a, V b) { return int32_t(a) <= int32_t(b); }
  B band(B a, B b) { return a && b; }
  B bor(B a, B b) { return a || b; }
  B bnot(B a) { return !a; }
  V sel(B c, V a, V b) { return c ? a : b; }
  D seld(B c, D a, D b) { return c ? a : b; }
  V b2i(B c) { return c ? 1u : 0u; }
  V clz(V a) { return uint32_t(std::countl_zero(a)); }
  Q kq(uint64_t x) { return x; }
  Q zx(V a) { return a; }
  Q sx(V a) { return uint64_t(int64_t(int32_t(a))); }
  V lo(Q a) { return uint32_t(a); }
  V hi(Q a) { return uint32_t(a >> 32); }
  Q addq(Q a, Q b) { return a + b; }
  Q orq(Q a, Q b) { return a | b; }
  Q andq(Q a, Q b) { return a & b; }
  Q dbits(D a) { return std::bit_cast<uint64_t>(a); }
  D qd(Q a) { return std::bit_cast<double>(a); }
  D dlog2(D a) { return std::log2(a); }
  D dexp2(D a) { return std::exp2(a); }
  Q sel_q(B c, Q a, Q b) { return c ? a : b; }
  Q mulq(Q a, Q b) { return a * b; }
  Q shlq(Q a, V n) { return a << (n & 63); }
  Q lshrq(Q a, V n) { return a >> (n & 63); }
  Q ashrq(Q a, V n) { return uint64_t(int64_t(a) >> (n & 63)); }
  D kd(double d) { return d; }
  D f32d(V a) { return double(std::bit_cast<float>(a)); }
  D f16d(V a) { return ir::fbits::to_double(a & 0xffff, ir::Type::F16); }
  D i2d(V a, bool sgn) { return sgn ? double(int32_t(a)) : double(a); }
  V d2f32(D d, ir::Round r) {
    return std::isnan(d) ? 0x7fc00000u : uint32_t(ir::fbits::from_double(d, ir::Type::F32, r));
  }
  V d2f16(D d, ir::Round r) {
    return std::isnan(d) ? 0x7e00u : uint32_t(ir::fbits::from_double(d, ir::Type::F16, r));
  }
  D pow2d(V n) { return std::ldexp(1.0, int32_t(n)); }
  D drcp(D a) { return 1.0 / a; }
  D drsq(D a) { return 1.0 / std::sqrt(a); }
  D dsqrt(D a) { return std::sqrt(a); }
  D dadd(D a, D b) { return a + b; }
  D dmul(D a, D b) { return a * b; }
  D dfma(D a, D b, D c) { return std::fma(a, b, c); }
  D dround(D a, int m) {
    return m == kFloor ? std::floor(a) : m == kCeil ? std::ceil(a) : m == kTrunc ? std::trunc(a) : std::nearbyint(a);
  }
  B disnan(D a) { return std::isnan(a); }
  B dcmp(int c, D a, D b) {
    switch (c) {
      case kEq: return a == b;
      case kGt: return a > b;
      case kGe: return a >= b;
      case kNe: return a != b;
      case kLt: return a < b;
      case kLe: return a <= b;
      case kGtLt: return a < b || a > b;
      case kTotal: return !std::isnan(a) && !std::isnan(b);
      default: return false;
    }
  }
  V d2i(D d, bool sgn, ir::Round r) {
    if (std::isnan(d)) return 0;
    const double v = r == ir::Round::Up ? std::ceil(d) : r == ir::Round::Down ? std::floor(d)
                     : r == ir::Round::TowardZero ? std::trunc(d) : std::nearbyint(d);
    if (sgn) return v >= 2147483647.0 ? 0x7fffffffu : v <= -2147483648.0 ? 0x80000000u : uint32_t(int32_t(v));
    return v >= 4294967295.0 ? 0xffffffffu : v <= 0 ? 0u : uint32_t(v);
  }
};

}  // namespace gpurc::bifrost::ext

#include "frontend/bifrost/ops_ext_defs.h"
