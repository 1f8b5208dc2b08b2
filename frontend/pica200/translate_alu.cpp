// PICA200 -> IR: ALU instructions and the PICA float rules (translate_impl.h).
#include <cmath>
#include <string>

#include "frontend/pica200/translate_impl.h"

namespace gpurc::pica::detail {

// fp::flush: subnormal -> zero of the same sign, everything else (NaN payloads too) unchanged.
ir::ValueId Translator::flush(ir::ValueId x) {
  ir::ValueId is_zero = b_.fcmp(ir::FloatPred::Oeq, x, fconst(0.0f), ir::ff::FtzIn);
  ir::ValueId bits = b_.convert(ir::Opcode::Bitcast, ir::Type::I32, x);
  ir::ValueId zero = b_.convert(ir::Opcode::Bitcast, ir::Type::F32, b_.binary(ir::Opcode::And, bits, b_.i32(0x80000000u)));
  return b_.select(is_zero, zero, x);
}

// fp::round24 in integer ops on the bits.
ir::ValueId Translator::round24(ir::ValueId x) {
  auto op = [&](ir::Opcode o, ir::ValueId a, ir::ValueId c) { return b_.binary(o, a, c); };
  auto k = [&](uint32_t v) { return b_.i32(v); };
  ir::ValueId bits = b_.convert(ir::Opcode::Bitcast, ir::Type::I32, x);
  ir::ValueId special = b_.icmp(ir::IntPred::Eq, op(ir::Opcode::And, bits, k(0x7F800000u)), k(0x7F800000u));
  ir::ValueId sign = op(ir::Opcode::And, bits, k(0x80000000u));
  ir::ValueId mag = op(ir::Opcode::And, bits, k(0x7FFFFFFFu));
  ir::ValueId odd = op(ir::Opcode::And, op(ir::Opcode::LShr, mag, k(7)), k(1));
  mag = op(ir::Opcode::And, op(ir::Opcode::IAdd, op(ir::Opcode::IAdd, mag, k(0x3F)), odd), k(~0x7Fu));
  ir::ValueId e = op(ir::Opcode::LShr, mag, k(23));
  ir::ValueId r = op(ir::Opcode::Or, sign, mag);
  r = b_.select(b_.icmp(ir::IntPred::Uge, e, k(191)), op(ir::Opcode::Or, sign, k(0x7F800000u)), r);
  r = b_.select(b_.icmp(ir::IntPred::Ult, e, k(65)), sign, r);
  r = b_.select(special, bits, r);
  return b_.convert(ir::Opcode::Bitcast, ir::Type::F32, r);
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
  auto dp3 = [&] { return fadd(fadd(fmul(s1[0], s2[0]), fmul(s1[1], s2[1])), fmul(s1[2], s2[2])); };
  auto transc = [&](ir::Opcode op) {
    return b_.emit(op, ir::Type::F32, {s1[0]}, uint8_t(ir::Transc::Pica), kArith);
  };
  auto one_zero = [&](ir::FloatPred p, size_t i) {
    return b_.select(b_.fcmp(p, s1[i], s2[i], ir::ff::FtzIn), fconst(1.0f), fconst(0.0f));
  };
  switch (in.op) {
    case Op::ADD: each([&](size_t i) { return fadd(s1[i], s2[i]); }); break;
    case Op::MUL: each([&](size_t i) { return fmul(s1[i], s2[i]); }); break;
    // fp::mad is a flushed, rounded product and then an add: fmul + fadd
    // (fmad would keep a subnormal product unflushed).
    case Op::MAD: case Op::MADI: each([&](size_t i) { return fadd(fmul(s1[i], s2[i]), s3[i]); }); break;
    case Op::DP3: if (d.mask) fill(dp3()); break;
    case Op::DP4: if (d.mask) fill(fadd(dp3(), fmul(s1[3], s2[3]))); break;
    case Op::DPH: case Op::DPHI: if (d.mask) fill(fadd(dp3(), s2[3])); break;
    case Op::DST: case Op::DSTI:
      r = {fconst(1.0f), d.writes(1) ? fmul(s1[1], s2[1]) : ir::kNoValue, d.writes(2) ? out(s1[2]) : ir::kNoValue,
           d.writes(3) ? out(s2[3]) : ir::kNoValue};
      break;
    case Op::EX2: if (d.mask) fill(transc(ir::Opcode::FExp2)); break;
    case Op::LG2: if (d.mask) fill(transc(ir::Opcode::FLog2)); break;
    case Op::RCP: if (d.mask) fill(transc(ir::Opcode::FRcp)); break;
    case Op::RSQ: if (d.mask) fill(transc(ir::Opcode::FRsqrt)); break;
    case Op::LITP: {
      // cmp flags from the unflushed x and w; x, w = max(flush(v), 0) (NaN -> 0);
      // y = flushed, clamped to +-kLitpLimit, NaN canonical; z = 0.
      b_.set_var(kVarCmpX, b_.fcmp(ir::FloatPred::Oge, s1[0], fconst(0.0f)));
      b_.set_var(kVarCmpY, b_.fcmp(ir::FloatPred::Oge, s1[3], fconst(0.0f)));
      auto pos = [&](ir::ValueId v) {
        return b_.binary(ir::Opcode::FMax, v, fconst(0.0f), uint8_t(ir::MinMaxNan::SecondOnNan), kArith);
      };
      ir::ValueId y = out(s1[1]);
      ir::ValueId lim = fconst(fp::kLitpLimit), nlim = fconst(-fp::kLitpLimit);
      y = b_.select(b_.fcmp(ir::FloatPred::Olt, y, nlim), nlim, y);
      y = b_.select(b_.fcmp(ir::FloatPred::Ogt, y, lim), lim, y);
      r = {d.writes(0) ? pos(s1[0]) : ir::kNoValue, y, fconst(0.0f), d.writes(3) ? pos(s1[3]) : ir::kNoValue};
      break;
    }
    case Op::SGE: case Op::SGEI: each([&](size_t i) { return one_zero(ir::FloatPred::Oge, i); }); break;
    case Op::SLT: case Op::SLTI: each([&](size_t i) { return one_zero(ir::FloatPred::Olt, i); }); break;
    case Op::FLR: each([&](size_t i) { return b_.unary(ir::Opcode::FFloor, s1[i], 0, kArith); }); break;
    case Op::MAX:
      // fp::fmax returns the selected operand unflushed and unchanged (NaN payloads too).
      each([&](size_t i) {
        ir::ValueId v = b_.select(b_.fcmp(ir::FloatPred::Ogt, s1[i], s2[i]), s1[i], s2[i]);
        if (opt_.fp.max_inf_quirk) {
          ir::ValueId inf = b_.fcmp(ir::FloatPred::Oeq, b_.unary(ir::Opcode::FAbs, s2[i]), fconst(INFINITY));
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
      if (d.writes(0)) b_.set_var(kVarA0X, b_.convert(ir::Opcode::FToI, ir::Type::I32, s1[0], uint8_t(ir::Sign::Signed), rtz));
      if (d.writes(1)) b_.set_var(kVarA0Y, b_.convert(ir::Opcode::FToI, ir::Type::I32, s1[1], uint8_t(ir::Sign::Signed), rtz));
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
