// PICA200 -> IR: ALU instructions and the PICA float rules (translate_impl.h).
#include <cmath>
#include <string>

#include "frontend/pica200/translate_impl.h"

namespace gpurc::pica::detail {

// fp::flush: subnormal -> zero of the same sign, everything else (NaN payloads too) unchanged.
ir::ValueId Translator::flush(ir::ValueId x) {
  return b_.memo(kMemoFlush, x, [&] {
    ir::ValueId is_zero = b_.fcmp(ir::FloatPred::Oeq, x, b_.f32(0.0f), ir::ff::FtzIn);
    ir::ValueId bits = b_.bitcast(ir::Type::I32, x);
    ir::ValueId zero = b_.bitcast(ir::Type::F32, b_.and_(bits, b_.i32(0x80000000u)));
    return b_.select(is_zero, zero, x);
  });
}

// fp::round24 in integer ops on the bits.
ir::ValueId Translator::round24(ir::ValueId x) {
  ir::ValueId bits = b_.bitcast(ir::Type::I32, x);
  ir::ValueId special = b_.icmp(ir::IntPred::Eq, b_.and_(bits, b_.i32(0x7F800000u)), b_.i32(0x7F800000u));
  ir::ValueId sign = b_.and_(bits, b_.i32(0x80000000u));
  ir::ValueId mag = b_.and_(bits, b_.i32(0x7FFFFFFFu));
  ir::ValueId odd = b_.and_(b_.lshr(mag, b_.i32(7)), b_.i32(1));
  mag = b_.and_(b_.iadd(b_.iadd(mag, b_.i32(0x3F)), odd), b_.i32(~0x7Fu));
  ir::ValueId e = b_.lshr(mag, b_.i32(23));
  ir::ValueId r = b_.or_(sign, mag);
  r = b_.select(b_.icmp(ir::IntPred::Uge, e, b_.i32(191)), b_.or_(sign, b_.i32(0x7F800000u)), r);
  r = b_.select(b_.icmp(ir::IntPred::Ult, e, b_.i32(65)), sign, r);
  r = b_.select(special, bits, r);
  return b_.bitcast(ir::Type::F32, r);
}

// An ALU instruction's effect on the registers (no terminator).
bool Translator::emit_arith(const Instr& in, uint32_t here, std::string& err) {
  const OperandDesc d = OperandDesc::decode(p_.descs[in.desc]);
  const unsigned wide = wide_source(in.op);
  const unsigned nsrc = num_sources(in.op);
  std::array<ir::ValueId, 4> s1 = read(in.src1, wide == 1, in.idx, d.src[0]), s2{}, s3{};
  if (nsrc >= 2) s2 = read(in.src2, wide == 2, in.idx, d.src[1]);
  if (nsrc >= 3) s3 = read(in.src3, wide == 3, in.idx, d.src[2]);
  std::array<ir::ValueId, 4> r{};
  auto each = [&](auto fn) { for (int i = 0; i < 4; ++i) if (d.writes(unsigned(i))) r[size_t(i)] = fn(size_t(i)); };
  auto fill = [&](ir::ValueId v) { r.fill(v); };
  auto dp3 = [&] {
    return b_.fadd(b_.fadd(b_.fmul(s1[0], s2[0], kMul), b_.fmul(s1[1], s2[1], kMul), kArith),
                   b_.fmul(s1[2], s2[2], kMul), kArith);
  };
  auto transc = [&](ir::Opcode op) { return b_.transc(op, ir::Transc::Pica, s1[0], kArith); };
  auto one_zero = [&](ir::FloatPred p, size_t i) {
    return b_.select(b_.fcmp(p, s1[i], s2[i], ir::ff::FtzIn), b_.f32(1.0f), b_.f32(0.0f));
  };
  switch (in.op) {
    case Op::ADD: each([&](size_t i) { return b_.fadd(s1[i], s2[i], kArith); }); break;
    case Op::MUL: each([&](size_t i) { return b_.fmul(s1[i], s2[i], kMul); }); break;
    // fp::mad is a flushed, rounded product and then an add: fmul + fadd
    // (fmad would keep a subnormal product unflushed).
    case Op::MAD: case Op::MADI:
      each([&](size_t i) { return b_.fadd(b_.fmul(s1[i], s2[i], kMul), s3[i], kArith); });
      break;
    case Op::DP3: if (d.mask) fill(dp3()); break;
    case Op::DP4: if (d.mask) fill(b_.fadd(dp3(), b_.fmul(s1[3], s2[3], kMul), kArith)); break;
    case Op::DPH: case Op::DPHI: if (d.mask) fill(b_.fadd(dp3(), s2[3], kArith)); break;
    case Op::DST: case Op::DSTI:
      r = {b_.f32(1.0f), d.writes(1) ? b_.fmul(s1[1], s2[1], kMul) : ir::kNoValue,
           d.writes(2) ? out(s1[2]) : ir::kNoValue,
           d.writes(3) ? out(s2[3]) : ir::kNoValue};
      break;
    case Op::EX2: if (d.mask) fill(transc(ir::Opcode::FExp2)); break;
    case Op::LG2: if (d.mask) fill(transc(ir::Opcode::FLog2)); break;
    case Op::RCP: if (d.mask) fill(transc(ir::Opcode::FRcp)); break;
    case Op::RSQ: if (d.mask) fill(transc(ir::Opcode::FRsqrt)); break;
    case Op::LITP: {
      // cmp flags from the unflushed x and w; x, w = max(flush(v), 0) (NaN -> 0);
      // y = flushed, clamped to +-kLitpLimit, NaN canonical; z = 0.
      b_.set_var(kVarCmpX, b_.fcmp(ir::FloatPred::Oge, s1[0], b_.f32(0.0f)));
      b_.set_var(kVarCmpY, b_.fcmp(ir::FloatPred::Oge, s1[3], b_.f32(0.0f)));
      auto pos = [&](ir::ValueId v) {
        return b_.fmax(ir::MinMaxNan::SecondOnNan, v, b_.f32(0.0f), kArith);
      };
      ir::ValueId y = out(s1[1]);
      ir::ValueId lim = b_.f32(fp::kLitpLimit), nlim = b_.f32(-fp::kLitpLimit);
      y = b_.select(b_.fcmp(ir::FloatPred::Olt, y, nlim), nlim, y);
      y = b_.select(b_.fcmp(ir::FloatPred::Ogt, y, lim), lim, y);
      r = {d.writes(0) ? pos(s1[0]) : ir::kNoValue, y, b_.f32(0.0f), d.writes(3) ? pos(s1[3]) : ir::kNoValue};
      break;
    }
    case Op::SGE: case Op::SGEI: each([&](size_t i) { return one_zero(ir::FloatPred::Oge, i); }); break;
    case Op::SLT: case Op::SLTI: each([&](size_t i) { return one_zero(ir::FloatPred::Olt, i); }); break;
    case Op::FLR: each([&](size_t i) { return b_.fround(ir::Opcode::FFloor, s1[i], kArith); }); break;
    case Op::MAX:
      // fp::fmax returns the selected operand unflushed and unchanged (NaN payloads too).
      each([&](size_t i) {
        ir::ValueId v = b_.select(b_.fcmp(ir::FloatPred::Ogt, s1[i], s2[i]), s1[i], s2[i]);
        if (opt_.fp.max_inf_quirk) {
          ir::ValueId inf = b_.fcmp(ir::FloatPred::Oeq, b_.fabs(s2[i]), b_.f32(INFINITY));
          v = b_.select(inf, s2[i], v);
        }
        return v;
      });
      break;
    case Op::MIN:
      // fp::fmin: both flushed, then (a < b) ? a : b; a NaN b is kept as is.
      each([&](size_t i) {
        ir::ValueId lt = b_.fcmp(ir::FloatPred::Olt, s1[i], s2[i], ir::ff::FtzIn);
        return b_.select(lt, flush(s1[i]), flush(s2[i]));
      });
      break;
    case Op::MOV: each([&](size_t i) { return s1[i]; }); break;
    case Op::MOVA: {
      // Truncation toward zero, NaN -> 0, saturating: ftoi.s with rtz.
      uint32_t rtz = ir::with_round(0, ir::Round::TowardZero);
      if (d.writes(0)) b_.set_var(kVarA0X, b_.ftoi(ir::Type::I32, ir::Sign::Signed, s1[0], rtz));
      if (d.writes(1)) b_.set_var(kVarA0Y, b_.ftoi(ir::Type::I32, ir::Sign::Signed, s1[1], rtz));
      break;
    }
    case Op::CMP: {
      // Unflushed compares; operators 6 and 7 are always true.
      static constexpr ir::FloatPred kPred[6] = {ir::FloatPred::Oeq, ir::FloatPred::Une, ir::FloatPred::Olt,
                                                 ir::FloatPred::Ole, ir::FloatPred::Ogt, ir::FloatPred::Oge};
      auto cmp = [&](unsigned op, ir::ValueId a, ir::ValueId b) {
        return (op & 7) >= 6 ? b_.i1(true) : b_.fcmp(kPred[op & 7], a, b);
      };
      ir::ValueId x = cmp(in.cmpx, s1[0], s2[0]), y = cmp(in.cmpy, s1[1], s2[1]);
      b_.set_var(kVarCmpX, x);
      b_.set_var(kVarCmpY, y);
      break;
    }
    default:
      err = "pica200: no translation for " + std::string(info(in.op).name) + " at " + hex_addr(here);
      return false;
  }
  if (has_dst(in.op)) {
    uint32_t base = in.dst < 0x10 ? kVarOutput + 4 * in.dst : kVarTemp + 4 * (in.dst - 0x10u);
    for (unsigned i = 0; i < 4; ++i)
      if (d.writes(i)) b_.set_var(base + i, opt_.fp.f24 ? round24(r[i]) : r[i]);
  }
  return true;
}

}  // namespace gpurc::pica::detail
