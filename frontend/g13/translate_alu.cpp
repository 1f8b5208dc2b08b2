// G13 -> IR: integer, float and compare instructions (see translate_impl.h).
#include <cstring>
#include <map>
#include <string>

#include "frontend/g13/translate_impl.h"
#include "ir/float_bits.h"
#include "ir/transc_g13.h"

namespace gpurc::g13::detail {

// ---- integer ---------------------------------------------------------------

// iadd/isub and imadd/imsub: a (* b) +- (addend << s), exact in i64 when
// saturating (only with S, shift 0 and operands/destination <= 32 bits),
// modulo 2^64 otherwise and truncated to the destination. Without saturation
// a destination of <= 32 bits only sees the low 32 bits, which depend only on
// the low 32 bits of the sources (+, -, *, << are all compatible with
// reduction modulo 2^32), so that case is computed in i32 (native on every
// tier; i64 lane ops mostly are not). iadd/isub into a 64-bit destination
// (never saturating) works on I32 halves with the carry: the same value
// modulo 2^64 without building I64s from the register pairs.
bool Translator::int_add(const Insn& in, bool is_mul, std::string& why) {
  const Op D = op(in, "D"), A = op(in, "A"), B = op(in, "B");
  const Op C = is_mul ? op(in, "C") : Op{};
  const unsigned shift = unsigned(in.f("s")), dbits = D.bits();
  if (!is_mul && dbits == 64) {
    ValueId alo, ahi, blo, bhi;
    if (!src_halves(A, A.sx, alo, ahi) || !src_halves(B, B.sx, blo, bhi)) return why = "bad source", false;
    const ValueId zero = b_.i32(0), one = b_.i32(1);
    if (in.f("N")) {  // -(hi:lo) = (-hi - (lo != 0)) : -lo
      const ValueId borrow = b_.select(b_.icmp(IntPred::Ne, blo, zero), one, zero);
      bhi = b_.isub(b_.isub(zero, bhi), borrow);
      blo = b_.isub(zero, blo);
    }
    if (shift >= 5) {
      blo = bhi = zero;
    } else if (shift) {
      bhi = b_.or_(b_.shl(bhi, b_.i32(shift)), b_.lshr(blo, b_.i32(32 - shift)));
      blo = b_.shl(blo, b_.i32(shift));
    }
    const ValueId lo = b_.iadd(alo, blo);
    const ValueId carry = b_.select(b_.icmp(IntPred::Ult, lo, alo), one, zero);
    const ValueId hi = b_.iadd(b_.iadd(ahi, bhi), carry);
    if (!write_pair(D, lo, hi, exec())) return why = "bad destination", false;
    return true;
  }
  const bool small = is_mul ? (C.bits() <= 32 && dbits <= 32) : (A.bits() <= 32 && B.bits() <= 32 && dbits <= 32);
  const bool saturate = in.f("S") && shift == 0 && small;
  const bool is_signed = A.sx || B.sx || (is_mul && C.sx);
  const unsigned w = !saturate && dbits <= 32 ? 32 : 64;
  ValueId a, b, x;
  if (!src(A, w, A.sx, a) || !src(B, w, B.sx, b) || (is_mul && !src(C, w, C.sx, x)))
    return why = "bad source", false;
  ValueId addend = is_mul ? x : b;
  if (in.f("N")) addend = b_.ineg(addend);
  if (shift >= 5) addend = b_.constant(ir::int_type(w), 0);
  else if (shift) addend = b_.shl(addend, b_.i32(shift));
  const ValueId base = is_mul ? b_.imul(a, b) : a;
  ValueId r = b_.iadd(base, addend);
  if (saturate) {
    const int64_t lo = is_signed ? -(int64_t(1) << (dbits - 1)) : 0;
    const int64_t hi = is_signed ? (int64_t(1) << (dbits - 1)) - 1 : int64_t((uint64_t(1) << dbits) - 1);
    const ValueId vlo = b_.i64(uint64_t(lo)), vhi = b_.i64(uint64_t(hi));
    ValueId clamped = b_.imax(ir::Sign::Signed, b_.imin(ir::Sign::Signed, r, vhi), vlo);
    if (is_mul) {
      // The exact a*b+c can leave i64: a product of two zero-extended 32-bit
      // values may reach 2^64, and the sum can overflow. Both only happen far
      // outside [lo, hi].
      const ValueId ovf = b_.ioverflow(base, addend, b_.i1(false));
      const ValueId neg_addend = b_.icmp(IntPred::Slt, addend, b_.i64(0));
      clamped = b_.select(ovf, b_.select(neg_addend, vlo, vhi), clamped);
      if (!A.sx && !B.sx && A.bits() == 32 && B.bits() == 32) {
        const ValueId huge = b_.icmp(IntPred::Slt, base, b_.i64(0));
        clamped = b_.select(huge, vhi, clamped);
      }
    }
    r = clamped;
  }
  if (!write(D, r, exec())) return why = "bad destination", false;
  return true;
}

// Bitfield ops per the seed pseudocode with a 64-bit intermediate (only the
// low 32 result bits reach a destination).
bool Translator::bitfield(const Insn& in, const std::string& n, std::string& why) {
  const Op D = op(in, "D"), A = op(in, "A"), B = op(in, "B");
  const bool has_c = n != "asr" && n != "asrh";
  const Op C = has_c ? op(in, "C") : Op{};
  const unsigned m = unsigned(in.f("m"));
  const uint64_t mask = m ? (1ull << m) - 1 : 0xFFFFFFFFull;
  ValueId a, b, c;
  if (!src(A, 64, false, a) || !src(B, 64, false, b) || (has_c && !src(C, 32, false, c)))
    return why = "bad source", false;
  const ValueId sh = b_.and_(has_c ? c : b_.resize(Type::I32, b), b_.i32(0x7F));
  const ValueId M = b_.i64(mask);
  ValueId r;
  if (n == "bfi") {
    r = b_.or_(b_.and_(a, b_.not_(b_.shl(M, sh, kClamp))), b_.shl(b_.and_(b, M), sh, kClamp));
  } else if (n == "bfeil") {
    r = b_.or_(b_.and_(a, b_.not_(M)), b_.and_(b_.lshr(b, sh, kClamp), M));
  } else if (n == "extr") {
    // (b:a) >> sh; b has at most 32 bits, so the pair fits in 64.
    r = b_.and_(b_.lshr(b_.or_(b_.shl(b, b_.i32(32), kClamp), a), sh, kClamp), M);
  } else if (n == "shlhi") {
    const ValueId gt32 = b_.icmp(IntPred::Ugt, sh, b_.i32(32));
    const ValueId smask = b_.shl(M, b_.select(gt32, b_.isub(sh, b_.i32(32)), b_.i32(0)), kClamp);
    const ValueId v = b_.lshr(b_.shl(b, sh, kClamp), b_.i32(32), kClamp);  // bits [32, 64) of b << sh
    r = b_.or_(b_.and_(v, smask), b_.and_(a, b_.not_(smask)));
  } else if (n == "shrhi") {
    const ValueId lt32 = b_.icmp(IntPred::Ult, sh, b_.i32(32));
    const ValueId smask = b_.lshr(b_.shl(M, b_.i32(32), kClamp), b_.select(lt32, sh, b_.i32(32)), kClamp);
    const ValueId v = b_.lshr(b_.shl(b, b_.i32(32), kClamp), sh, kClamp);
    r = b_.or_(b_.and_(v, smask), b_.and_(a, b_.not_(smask)));
  } else {
    ValueId sa;
    if (!src(A, 64, true, sa)) return why = "bad source", false;
    if (n == "asr") {
      r = b_.ashr(sa, sh, kClamp);
    } else {  // asrh: bits [s, s+32) of sa * 2^32
      const ValueId ge32 = b_.icmp(IntPred::Uge, sh, b_.i32(32));
      r = b_.select(ge32, b_.ashr(sa, b_.isub(sh, b_.i32(32)), kClamp),
                    b_.shl(sa, b_.isub(b_.i32(32), sh), kClamp));
    }
  }
  if (!write(D, r, exec())) return why = "bad destination", false;
  return true;
}

bool Translator::int_unary(const Insn& in, const std::string& n, std::string& why) {
  const Op D = op(in, "D"), A = op(in, "A");
  ValueId a, r;
  if (!src(A, 32, false, a)) return why = "bad source", false;
  if (n == "bitrev") r = b_.bit_reverse(a);
  else if (n == "popcount") r = b_.popcount(a);
  else if (n == "ffs") r = b_.find_msb(ir::Sign::Unsigned, a);  // all ones for 0
  else {  // intl: bit i of a -> bit 2i, bit i of b -> bit 2i+1 (low 16 bits each)
    ValueId bb;
    if (!src(op(in, "B"), 32, false, bb)) return why = "bad source", false;
    auto spread = [&](ValueId x) {
      static const uint32_t masks[4] = {0x00FF00FFu, 0x0F0F0F0Fu, 0x33333333u, 0x55555555u};
      x = b_.and_(x, b_.i32(0xFFFF));
      for (unsigned i = 0, s = 8; i < 4; ++i, s >>= 1)
        x = b_.and_(b_.or_(x, b_.shl(x, b_.i32(s))), b_.i32(masks[i]));
      return x;
    };
    r = b_.or_(spread(a), b_.shl(spread(bb), b_.i32(1)));
  }
  if (!write(D, r, exec())) return why = "bad destination", false;
  return true;
}

// convert (§5.2): int -> float rounds once (round 0 = toward zero, 1 = nearest
// even); float -> int truncates/rounds, NaN -> 0, saturates (ftoi does all of it).
bool Translator::convert(const Insn& in, std::string& why) {
  const Op D = op(in, "D"), S = op(in, "src");
  const unsigned mode = unsigned(in.f("mode")), round = unsigned(in.f("round"));
  if (round > 1) return why = convert_round_unmodelled(round), false;
  const uint32_t rnd = ir::with_round(0, round == 0 ? ir::Round::TowardZero : ir::Round::NearestEven);
  ValueId raw;
  if (!src(S, 32, false, raw)) return why = "bad source", false;
  ValueId out;
  switch (mode) {
    case 0: case 1: case 6: case 7: case 10: case 11: {
      const Type it = mode <= 1 ? Type::I8 : mode <= 7 ? Type::I16 : Type::I32;
      const bool sign = mode & 1;
      const Type ft = D.bits() == 32 ? Type::F32 : Type::F16;
      out = b_.itof(ft, signed_if(sign), b_.resize(it, raw), rnd);
      break;
    }
    case 4: case 5: case 8: case 9: {
      const bool from16 = S.bits() == 16;
      const ValueId f = from16 ? b_.bitcast(Type::F16, b_.resize(Type::I16, raw))
                               : b_.bitcast(Type::F32, raw);
      const bool sign = mode == 5 || mode == 9;
      const Type it = mode <= 5 ? Type::I16 : Type::I32;
      out = b_.resize(Type::I32, b_.ftoi(it, signed_if(sign), f, rnd | ff::FtzIn), signed_if(sign));
      break;
    }
    default: return why = "unknown convert mode " + std::to_string(mode), false;
  }
  if (!write(D, out, exec())) return why = "bad destination", false;
  return true;
}

// ---- float -----------------------------------------------------------------

// fmadd/fadd/fmul: one exact operation rounded once (fadd = fma(a, 1, b),
// fmul = fma(a, b, +0) as the interpreter defines them). 32-bit ops and
// 32-bit destinations compute in f32 with input and output flush; a 32-bit op
// writing a 16-bit register then rounds again to f16. 16-bit ops into 16-bit
// registers compute in f16 (no flush), or in f64 when a source is a 32-bit
// uniform.
bool Translator::float_arith(const Insn& in, const std::string& n, std::string& why) {
  const Op D = op(in, "D"), A = op(in, "A"), B = op(in, "B");
  const bool is_fma = n.compare(0, 5, "fmadd") == 0, is_add = n.compare(0, 4, "fadd") == 0;
  const Op C = is_fma ? op(in, "C") : Op{};
  const bool op32 = n.back() == '2';
  auto wide = [](const Op& o) { return o.type == OpType::Reg32 || o.type == OpType::UReg32; };
  Type ct = Type::F32;
  uint32_t flags = kFtz;
  if (!op32 && D.bits() == 16) {
    ct = (wide(A) || wide(B) || (is_fma && wide(C))) ? Type::F64 : Type::F16;
    flags = 0;
  }
  if (in.f("S")) flags |= ff::Sat;
  ValueId a, b, c;
  if (!fsrc(A, ct, a) || !fsrc(B, ct, b) || (is_fma && !fsrc(C, ct, c))) return why = "bad float source", false;
  if (!is_fma) {
    c = is_add ? b : b_.fconst(ct, 0.0);
    b = is_add ? b_.fconst(ct, 1.0) : b;
  }
  ValueId r;
  if (ct == Type::F64) {
    // One rounding to f16 as the interpreter does: the f64 result must be
    // rounded to odd (an f64 rounded to nearest and then to f16 can round
    // twice). Round to odd = truncate, then set the last bit if inexact.
    // Inexact is "rounded up != rounded down": truncation equals one of the
    // two on either side of zero (down for positive results, up for negative
    // ones), so comparing it with one direction misses the other sign.
    // Saturation applies to that exact-enough value.
    const ValueId tz = b_.ffma(a, b, c, ir::with_round(0, ir::Round::TowardZero));
    const ValueId up = b_.ffma(a, b, c, ir::with_round(0, ir::Round::Up));
    const ValueId down = b_.ffma(a, b, c, ir::with_round(0, ir::Round::Down));
    const ValueId tz_bits = b_.bitcast(Type::I64, tz);
    const ValueId inexact =
        b_.icmp(IntPred::Ne, b_.bitcast(Type::I64, down), b_.bitcast(Type::I64, up));
    const ValueId odd = b_.select(inexact, b_.or_(tz_bits, b_.i64(1)), tz_bits);
    r = b_.bitcast(Type::F64, odd);
    if (flags & ff::Sat) {
      const ValueId one = b_.fconst(ct, 1.0), zero = b_.fconst(ct, 0.0);
      r = b_.ffma(r, one, zero, ff::Sat);
    }
  } else if (is_add && ct == Type::F32) {
    // fma(a, 1, b) is a + b rounded once: the same bits in every case (the
    // same flushes, NaN rule, rounding and signs of zero), and an add the
    // hosts do in one op (on x64 in DAZ mode without an operand flush).
    r = b_.fadd(a, c, flags);
  } else {
    r = b_.ffma(a, b, c, flags);
  }
  if (D.bits() == 16 && ct != Type::F16) r = b_.ftof(Type::F16, r);
  if (!write(D, r, exec())) return why = "bad destination", false;
  return true;
}

// Unary float ops: f32 with input/output flush, then f16 if the destination
// is 16-bit. The transcendentals are Transc::G13 (ir/transc_g13.cpp, the one
// model the interpreter also uses); rsqrt_special and the sine steps are
// fsin_step with a selector operand (see ir/transc_g13.h).
bool Translator::float_unary(const Insn& in, const std::string& n, std::string& why) {
  const Op D = op(in, "D"), A = op(in, "A");
  uint32_t flags = kFtz | (in.f("S") ? ff::Sat : 0);
  ValueId a;
  if (!fsrc(A, Type::F32, a)) return why = "bad float source", false;
  const ir::Transc g13 = ir::Transc::G13;
  ValueId r;
  const ValueId ex = exec();
  if (n == "floor") r = b_.fround(Opcode::FFloor, a, flags);
  else if (n == "ceil") r = b_.fround(Opcode::FCeil, a, flags);
  else if (n == "trunc") r = b_.fround(Opcode::FTrunc, a, flags);
  else if (n == "rint") r = b_.fround(Opcode::FRint, a, flags);
  else if (n == "rcp") r = b_.transc(Opcode::FRcp, g13, a, flags);
  else if (n == "rsqrt") r = b_.transc(Opcode::FRsqrt, g13, a, flags);
  else if (n == "log2") r = b_.transc(Opcode::FLog2, g13, a, flags);
  else if (n == "exp2") r = b_.transc(Opcode::FExp2, g13, a, flags);
  else if (n == "rsqrt_special" || n == "sin_pt_1" || n == "sin_pt_2") {
    const double sel = n == "sin_pt_1" ? ir::transc::kG13SinPt1 : n == "sin_pt_2" ? ir::transc::kG13SinPt2
                                                                                  : ir::transc::kG13RsqrtSpecial;
    r = b_.fsin_step(g13, a, b_.fconst(Type::F32, sel), flags);
  } else {  // dfdx/dfdy: quad differences, reading active or inactive quad lanes
    const uint32_t bit = n == "dfdx" ? 1 : 2;
    const ValueId q = b_.and_(b_.lane_id(), b_.i32(3));
    const ValueId hi = b_.quad_shuffle(a, b_.or_(q, b_.i32(bit)));
    const ValueId lo = b_.quad_shuffle(a, b_.and_(q, b_.i32(~bit)));
    const ValueId L = launched_mask();
    const ValueId lo_lane = b_.and_(b_.lane_id(), b_.i32(~bit)), hi_lane = b_.or_(b_.lane_id(), b_.i32(bit));
    const ValueId both = b_.and_(b_.bit_of(L, lo_lane), b_.bit_of(L, hi_lane));
    b_.trap(b_.and_(ex, b_.not_(both)), pc_);
    r = b_.fsub(hi, lo, flags);
  }
  if (D.bits() == 16) r = b_.ftof(Type::F16, r);
  if (!write(D, r, ex)) return why = "bad destination", false;
  return true;
}

// ---- comparisons -----------------------------------------------------------

bool Translator::compare(const Insn& in, bool is_float, ValueId& c, std::string&) {
  cmp_undefined_ = false;
  const Op A = op(in, "A"), B = op(in, "B");
  const unsigned cond = unsigned(in.f("cc") | in.f("ccn") << 3);
  if (!is_float) {
    const bool sign = cond & 4;
    ValueId a, b;
    if ((cond & 3) == 3 || !src(A, 32, sign, a) || !src(B, 32, sign, b)) return undefined_compare(c);
    static const IntPred preds[2][3] = {{IntPred::Eq, IntPred::Ult, IntPred::Ugt},
                                        {IntPred::Eq, IntPred::Slt, IntPred::Sgt}};
    c = b_.icmp(preds[sign][cond & 3], a, b);
  } else {
    ValueId a, b;
    if ((cond & 7) == 4 || !fsrc(A, Type::F32, a) || !fsrc(B, Type::F32, b)) return undefined_compare(c);
    const uint32_t ftz = ff::FtzIn;
    switch (cond & 7) {
      case 0: c = b_.fcmp(FloatPred::Oeq, a, b, ftz); break;
      case 1: c = b_.fcmp(FloatPred::Olt, a, b, ftz); break;
      case 2: c = b_.fcmp(FloatPred::Ogt, a, b, ftz); break;
      case 5: c = b_.fcmp(FloatPred::Oge, a, b, ftz); break;
      case 6: c = b_.fcmp(FloatPred::Ole, a, b, ftz); break;
      case 3: case 7: {  // NaN loses (docs/g13.md)
        const ValueId a_num = b_.fcmp(FloatPred::Ord, a, a, ftz), b_nan = b_.fcmp(FloatPred::Uno, b, b, ftz);
        const ValueId rel = b_.fcmp((cond & 7) == 3 ? FloatPred::Olt : FloatPred::Ogt, a, b, ftz);
        c = b_.and_(a_num, b_.or_(b_nan, rel));
        break;
      }
      default: return undefined_compare(c);
    }
  }
  if (cond & 8) c = b_.not_(c);
  return true;
}

bool Translator::cmpsel(const Insn& in, bool is_float, std::string& why) {
  const Op D = op(in, "D"), X = op(in, "X"), Y = op(in, "Y");
  ValueId c, x, y;
  if (!compare(in, is_float, c, why)) return false;
  const ValueId ex = exec();
  need_compare(ex);
  // An undefined X/Y is an error only for the lanes that select it (as in the
  // interpreter): those trap.
  const bool has_x = src(X, D.bits(), false, x), has_y = src(Y, D.bits(), false, y);
  if (!has_x && !has_y) return why = "bad source", false;
  if (!has_x) x = b_.constant(ir::int_type(D.bits()), 0);
  if (!has_y) y = b_.constant(ir::int_type(D.bits()), 0);
  if (!has_x || !has_y)
    b_.trap(b_.and_(ex, has_x ? b_.not_(c) : c), pc_);
  if (!write(D, b_.select(c, x, y), ex)) return why = "bad destination", false;
  return true;
}

bool Translator::ballot_op(const Insn& in, bool is_float, bool quad, std::string& why) {
  const Op D = op(in, "D");
  ValueId c;
  if (!compare(in, is_float, c, why)) return false;
  const ValueId ex = exec();
  need_compare(ex);
  ValueId bits = b_.ballot(c, ex);
  // Quad ballot: the lane's quad in the low 4 bits (docs/g13.md).
  if (quad) bits = b_.lshr(bits, b_.and_(b_.lane_id(), b_.i32(~3u)));
  if (!write(D, bits, ex)) return why = "bad destination", false;
  return true;
}

}  // namespace gpurc::g13::detail
