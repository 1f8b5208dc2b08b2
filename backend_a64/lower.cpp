// Native lowering of state, select, integer and f32 ops in 32-bit lanes, and
// 64-bit moves. Each op reads its operands' strip (one q register of four
// lanes, two for a 64-bit value) from their frame slots into v0..v3, computes
// into v4 (v5..v7 scratch) and stores the result to its slot. Narrow integer
// lanes (i1/i8/i16) live zero-extended in 32-bit lanes; every result is
// masked back to its width so it stays canonical.
#include <cstddef>

#include "backend_a64/emitter.h"
#include "backend_a64/lowering.h"

namespace gpurc::a64 {

using namespace ir;
using namespace asmjit;
using namespace asmjit::a64;

namespace {
#define CTX(field) uint32_t(offsetof(WarpContext, field))
constexpr uint32_t kCanonicalNan = 0x7FC00000u;
constexpr uint32_t kAllOnesNan = 0x7FFFFFFFu;
}  // namespace

bool Emitter::lower_native(ValueId v) {
  const Inst& in = f_.insts[v];
  bool any_wide = in.type != ir::Type::Void && lane_bytes(in.type) == 8;
  for (ValueId a : in.args) any_wide = any_wide || wide(a);
  const OpLowering& l = kOpLowering[size_t(in.op)];
  LowerFn fn = any_wide ? l.wide : l.narrow;
  return fn != nullptr && (this->*fn)(v);
}

bool Emitter::lower_state(ValueId v) {
  const Inst& in = f_.insts[v];
  switch (in.op) {
    case Opcode::Const:
      vconst(4, uint32_t(in.imm & type_mask(in.type)));
      vstore(v, 4);
      return true;
    case Opcode::Undef:  // unspecified; zero keeps runs deterministic
      vconst(4, 0);
      vstore(v, 4);
      return true;
    case Opcode::LoadVar:
      if (in.imm >= f_.vars.size()) throw CompileError("a64 jit: load_var of unknown var " + std::to_string(in.imm));
      a_.ldr(Q(4), at(x27, f_.var_offset(uint32_t(in.imm)), 16));
      mask_to_width(4, in.type);
      vstore(v, 4);
      return true;
    case Opcode::StoreVar:
      if (in.imm >= f_.vars.size()) throw CompileError("a64 jit: store_var of unknown var " + std::to_string(in.imm));
      vload(0, in.args[0]);
      a_.str(Q(0), at(x27, f_.var_offset(uint32_t(in.imm)), 16));
      return true;
    case Opcode::LoadUniform: {
      unsigned bytes = in.type == ir::Type::I1 ? 1 : bit_width(in.type) / 8;
      Label ok = a_.newLabel();
      if (in.imm <= f_.uniform_bytes && f_.uniform_bytes - in.imm >= bytes) a_.cbnz(x22, ok);
      emit_fault_return(FaultKind::OutOfBounds, v, in.imm, uint32_t(Space::Const));
      a_.bind(ok);
      if (bytes == 4) a_.ldr(w10, at(x22, in.imm, 4));
      else if (bytes == 2) a_.ldrh(w10, at(x22, in.imm, 2));
      else a_.ldrb(w10, at(x22, in.imm, 1));
      if (in.type == ir::Type::I1) {
        a_.cmp(w10, 0);
        a_.cset(w10, CondCode::kNE);
      }
      a_.dup(Q(4).s4(), w10);
      vstore(v, 4);
      return true;
    }
    case Opcode::LoadUniformIdx: {
      // Per lane of the strip: the 4 bytes at imm + offset when they lie in
      // the block, else 0 (never a fault; docs/ir.md).
      if (in.type != Type::I32 && in.type != Type::F32) return false;
      if (f_.uniform_bytes < 4 || in.imm > f_.uniform_bytes - 4) {
        vconst(4, 0);
        vstore(v, 4);
        return true;
      }
      mov_imm(x12, f_.uniform_bytes - 4 - in.imm);  // the last offset inside
      mov_imm(x13, in.imm);
      a_.add(x13, x22, x13);
      for (uint32_t i = 0; i < 4; ++i) {
        Label next = a_.newLabel();
        a_.ldr(w10, at(x25, slot(in.args[0]) + 4 * i, 4));
        a_.mov(w11, 0);
        a_.cbz(x22, next);
        a_.cmp(x10, x12);
        a_.b_hi(next);
        a_.ldr(w11, ptr(x13, x10));
        a_.bind(next);
        a_.str(w11, at(x25, slot(v) + 4 * i, 4));
      }
      return true;
    }
    case Opcode::EntryMask:
      a_.ldr(w9, at(x19, CTX(entry_mask), 4));
      a_.lsr(w10, w23, 2);
      a_.lsr(w9, w9, w10);
      a_.dup(Q(4).s4(), w9);
      a_.ldr(Q(5), ptr(iota_));
      a_.neg(Q(5).s4(), Q(5).s4());
      a_.ushl(Q(4).s4(), Q(4).s4(), Q(5).s4());  // lane i: mask >> i
      mask_to_width(4, ir::Type::I1);
      vstore(v, 4);
      return true;
    case Opcode::LaneId:
      a_.lsr(w9, w23, 2);
      a_.dup(Q(4).s4(), w9);
      a_.ldr(Q(5), ptr(iota_));
      a_.add(Q(4).s4(), Q(4).s4(), Q(5).s4());
      vstore(v, 4);
      return true;
    case Opcode::Select:
      // The i1 condition becomes a lane mask; BSL picks if_true where it is set.
      vload(0, in.args[0]);
      vload(1, in.args[1]);
      vload(2, in.args[2]);
      a_.shl(Q(0).s4(), Q(0).s4(), 31);
      a_.sshr(Q(0).s4(), Q(0).s4(), 31);
      a_.bsl(Q(0).b16(), Q(1).b16(), Q(2).b16());
      vstore(v, 0);
      return true;
    case Opcode::FNeg: case Opcode::FAbs: {
      if (in.type != ir::Type::F32 && in.type != ir::Type::F16) return false;
      uint32_t sign = in.type == ir::Type::F32 ? 0x80000000u : 0x8000u;
      vload(0, in.args[0]);
      if (in.op == Opcode::FNeg) {
        vconst(5, sign);
        a_.eor(Q(4).b16(), Q(0).b16(), Q(5).b16());
      } else {
        vconst(5, uint32_t(type_mask(in.type)) & ~sign);
        a_.and_(Q(4).b16(), Q(0).b16(), Q(5).b16());
      }
      vstore(v, 4);
      return true;
    }
    default:
      return false;
  }
}

bool Emitter::lower_wide(ValueId v) {
  const Inst& in = f_.insts[v];
  if (in.op == Opcode::StoreVar) {  // no result: lower_native picks this form through its 64-bit operand
    if (in.imm >= f_.vars.size()) throw CompileError("a64 jit: store_var of unknown var " + std::to_string(in.imm));
    if (!wide(in.args[0])) return false;
    for (int h = 0; h < 2; ++h) {
      vload(0, in.args[0], h);
      a_.str(Q(0), at(x28, f_.var_offset(uint32_t(in.imm)) + 16u * unsigned(h), 16));
    }
    return true;
  }
  if (!wide(v)) return false;
  switch (in.op) {
    case Opcode::Const: case Opcode::Undef:
      vconst64(4, in.op == Opcode::Const ? in.imm & type_mask(in.type) : 0);
      vstore(v, 4, 0);
      vstore(v, 4, 1);
      return true;
    case Opcode::LoadVar:
      if (in.imm >= f_.vars.size()) throw CompileError("a64 jit: load_var of unknown var " + std::to_string(in.imm));
      for (int h = 0; h < 2; ++h) {
        a_.ldr(Q(4), at(x28, f_.var_offset(uint32_t(in.imm)) + 16u * unsigned(h), 16));
        vstore(v, 4, h);
      }
      return true;
    case Opcode::LoadUniform: {
      Label ok = a_.newLabel();
      if (in.imm <= f_.uniform_bytes && f_.uniform_bytes - in.imm >= 8) a_.cbnz(x22, ok);
      emit_fault_return(FaultKind::OutOfBounds, v, in.imm, uint32_t(Space::Const));
      a_.bind(ok);
      a_.ldr(x10, at(x22, in.imm, 8));
      a_.dup(Q(4).d2(), x10);
      vstore(v, 4, 0);
      vstore(v, 4, 1);
      return true;
    }
    case Opcode::Select:
      // Lanes 0-1 and 2-3 of the 32-bit condition mask widened to 64 bits.
      vload(0, in.args[0]);
      a_.shl(Q(0).s4(), Q(0).s4(), 31);
      a_.sshr(Q(0).s4(), Q(0).s4(), 31);
      a_.sshll(Q(3).d2(), Q(0).s2(), 0);
      a_.sshll2(Q(5).d2(), Q(0).s4(), 0);
      for (int h = 0; h < 2; ++h) {
        vload(1, in.args[1], h);
        vload(2, in.args[2], h);
        a_.bsl(Q(h ? 5 : 3).b16(), Q(1).b16(), Q(2).b16());
        vstore(v, h ? 5 : 3, h);
      }
      return true;
    case Opcode::Bitcast:
      if (!wide(in.args[0])) return false;
      for (int h = 0; h < 2; ++h) {
        vload(4, in.args[0], h);
        vstore(v, 4, h);
      }
      return true;
    default:
      return false;
  }
}

bool Emitter::lower_int(ValueId v) {
  const Inst& in = f_.insts[v];
  ir::Type t = in.type;
  unsigned w = bit_width(t);
  auto load_args = [&] {
    for (size_t i = 0; i < in.args.size() && i < 4; ++i) vload(int(i), in.args[i]);
  };
  auto finish = [&](int r) {
    mask_to_width(r, t);
    vstore(v, r);
    return true;
  };
  switch (in.op) {
    case Opcode::IAdd: load_args(); a_.add(Q(4).s4(), Q(0).s4(), Q(1).s4()); return finish(4);
    case Opcode::ISub: load_args(); a_.sub(Q(4).s4(), Q(0).s4(), Q(1).s4()); return finish(4);
    case Opcode::IMul: load_args(); a_.mul(Q(4).s4(), Q(0).s4(), Q(1).s4()); return finish(4);
    case Opcode::IAddC:
      load_args();
      a_.add(Q(4).s4(), Q(0).s4(), Q(1).s4());
      a_.add(Q(4).s4(), Q(4).s4(), Q(2).s4());
      return finish(4);
    case Opcode::IMad:
      load_args();
      a_.mov(Q(4).b16(), Q(2).b16());
      a_.mla(Q(4).s4(), Q(0).s4(), Q(1).s4());
      return finish(4);
    case Opcode::INeg: load_args(); a_.neg(Q(4).s4(), Q(0).s4()); return finish(4);
    case Opcode::IAbs:
      load_args();
      sext_to32(0, 0, t);
      a_.abs(Q(4).s4(), Q(0).s4());
      return finish(4);
    case Opcode::And: load_args(); a_.and_(Q(4).b16(), Q(0).b16(), Q(1).b16()); return finish(4);
    case Opcode::Or: load_args(); a_.orr(Q(4).b16(), Q(0).b16(), Q(1).b16()); return finish(4);
    case Opcode::Xor: load_args(); a_.eor(Q(4).b16(), Q(0).b16(), Q(1).b16()); return finish(4);
    case Opcode::Not: load_args(); a_.mvn(Q(4).b16(), Q(0).b16()); return finish(4);
    case Opcode::IMin: case Opcode::IMax: {
      load_args();
      bool is_signed = Sign(in.attr) == Sign::Signed;
      if (is_signed) {
        sext_to32(0, 0, t);
        sext_to32(1, 1, t);
        if (in.op == Opcode::IMin) a_.smin(Q(4).s4(), Q(0).s4(), Q(1).s4());
        else a_.smax(Q(4).s4(), Q(0).s4(), Q(1).s4());
      } else if (in.op == Opcode::IMin) {
        a_.umin(Q(4).s4(), Q(0).s4(), Q(1).s4());
      } else {
        a_.umax(Q(4).s4(), Q(0).s4(), Q(1).s4());
      }
      return finish(4);
    }
    case Opcode::Shl: case Opcode::LShr: case Opcode::AShr: {
      // USHL / SSHL shift by the signed low byte of each count lane (negative:
      // right). Mask mode keeps count & (w-1); Clamp mode caps it at 32, which
      // shifts every bit out (or fills with the sign) like any count >= w.
      load_args();
      if (ShiftMode(in.attr) == ShiftMode::Mask) {
        vconst(5, w - 1);
        a_.and_(Q(1).b16(), Q(1).b16(), Q(5).b16());
      } else {
        vconst(5, 32);
        a_.umin(Q(1).s4(), Q(1).s4(), Q(5).s4());
      }
      if (in.op == Opcode::Shl) {
        a_.ushl(Q(4).s4(), Q(0).s4(), Q(1).s4());
      } else {
        a_.neg(Q(1).s4(), Q(1).s4());
        if (in.op == Opcode::LShr) {
          a_.ushl(Q(4).s4(), Q(0).s4(), Q(1).s4());
        } else {
          sext_to32(0, 0, t);
          a_.sshl(Q(4).s4(), Q(0).s4(), Q(1).s4());
        }
      }
      return finish(4);
    }
    case Opcode::ICmp: {
      ir::Type at_ = f_.insts[in.args[0]].type;
      IntPred p = IntPred(in.attr);
      bool is_signed = p == IntPred::Slt || p == IntPred::Sle || p == IntPred::Sgt || p == IntPred::Sge;
      load_args();
      if (is_signed) {
        sext_to32(0, 0, at_);
        sext_to32(1, 1, at_);
      }
      auto s4 = [](int r) { return Q(r).s4(); };
      switch (p) {
        case IntPred::Eq: a_.cmeq(s4(4), s4(0), s4(1)); break;
        case IntPred::Ne: a_.cmeq(s4(4), s4(0), s4(1)); a_.mvn(Q(4).b16(), Q(4).b16()); break;
        case IntPred::Slt: a_.cmgt(s4(4), s4(1), s4(0)); break;
        case IntPred::Sle: a_.cmge(s4(4), s4(1), s4(0)); break;
        case IntPred::Sgt: a_.cmgt(s4(4), s4(0), s4(1)); break;
        case IntPred::Sge: a_.cmge(s4(4), s4(0), s4(1)); break;
        case IntPred::Ult: a_.cmhi(s4(4), s4(1), s4(0)); break;
        case IntPred::Ule: a_.cmhs(s4(4), s4(1), s4(0)); break;
        case IntPred::Ugt: a_.cmhi(s4(4), s4(0), s4(1)); break;
        case IntPred::Uge: a_.cmhs(s4(4), s4(0), s4(1)); break;
        default: return false;
      }
      bool_from_mask(4);
      vstore(v, 4);
      return true;
    }
    case Opcode::Zext: case Opcode::Sext: case Opcode::Trunc: {
      ir::Type st = f_.insts[in.args[0]].type;
      if (!is_int(st) || !is_int(t)) return false;
      load_args();
      if (in.op == Opcode::Sext) sext_to32(0, 0, st);
      return finish(0);
    }
    case Opcode::Bitcast:
      load_args();
      vstore(v, 0);
      return true;
    default:
      return false;
  }
}

bool Emitter::lower_float(ValueId v) {
  const Inst& in = f_.insts[v];
  const uint32_t fl = in.fflags;
  auto s4 = [](int r) { return Q(r).s4(); };
  auto load_args = [&] {
    for (size_t i = 0; i < in.args.size() && i < 4; ++i) vload(int(i), in.args[i]);
  };
  switch (in.op) {
    case Opcode::FAdd: case Opcode::FSub: case Opcode::FMul: case Opcode::FFma: case Opcode::FMad: {
      // Host arithmetic is IEEE (FPCR set in the prologue) with exact
      // subnormals; only the NaN payload differs from ir::eval_lane, fixed
      // per lane. Flushing, Sat, ZeroMul, other rounding modes and the
      // Propagate rule stay with the helper.
      if (in.type != ir::Type::F32) return false;
      NanRule rule = nan_rule(fl);
      if ((fl & ~ff::NanMask) != 0 || rule == NanRule::Propagate) return false;
      load_args();
      switch (in.op) {
        case Opcode::FAdd: a_.fadd(s4(4), s4(0), s4(1)); break;
        case Opcode::FSub: a_.fsub(s4(4), s4(0), s4(1)); break;
        case Opcode::FMul: a_.fmul(s4(4), s4(0), s4(1)); break;
        case Opcode::FFma:
          a_.mov(Q(4).b16(), Q(2).b16());
          a_.fmla(s4(4), s4(0), s4(1));
          break;
        default:
          a_.fmul(s4(4), s4(0), s4(1));
          a_.fadd(s4(4), s4(4), s4(2));
          break;
      }
      canonicalize_nan(4, rule == NanRule::AllOnes ? kAllOnesNan : kCanonicalNan);
      vstore(v, 4);
      return true;
    }
    case Opcode::FCmp: {
      if (f_.insts[in.args[0]].type != ir::Type::F32 || (fl & ff::FtzIn)) return false;
      load_args();
      // Ordered compares are false on NaN; the unordered ones are their negations.
      auto ordered = [&](FloatPred p) {
        switch (p) {
          case FloatPred::Oeq: a_.fcmeq(s4(4), s4(0), s4(1)); break;
          case FloatPred::Olt: a_.fcmgt(s4(4), s4(1), s4(0)); break;
          case FloatPred::Ole: a_.fcmge(s4(4), s4(1), s4(0)); break;
          case FloatPred::Ogt: a_.fcmgt(s4(4), s4(0), s4(1)); break;
          case FloatPred::Oge: a_.fcmge(s4(4), s4(0), s4(1)); break;
          case FloatPred::One:
            a_.fcmgt(s4(4), s4(1), s4(0));
            a_.fcmgt(s4(5), s4(0), s4(1));
            a_.orr(Q(4).b16(), Q(4).b16(), Q(5).b16());
            break;
          default:  // Ord
            a_.fcmeq(s4(4), s4(0), s4(0));
            a_.fcmeq(s4(5), s4(1), s4(1));
            a_.and_(Q(4).b16(), Q(4).b16(), Q(5).b16());
            break;
        }
      };
      FloatPred p = FloatPred(in.attr);
      switch (p) {
        case FloatPred::Oeq: case FloatPred::One: case FloatPred::Olt: case FloatPred::Ole:
        case FloatPred::Ogt: case FloatPred::Oge: case FloatPred::Ord:
          ordered(p);
          break;
        case FloatPred::Uno: ordered(FloatPred::Ord); a_.mvn(Q(4).b16(), Q(4).b16()); break;
        case FloatPred::Ueq: ordered(FloatPred::One); a_.mvn(Q(4).b16(), Q(4).b16()); break;
        case FloatPred::Une: ordered(FloatPred::Oeq); a_.mvn(Q(4).b16(), Q(4).b16()); break;
        case FloatPred::Ult: ordered(FloatPred::Oge); a_.mvn(Q(4).b16(), Q(4).b16()); break;
        case FloatPred::Ule: ordered(FloatPred::Ogt); a_.mvn(Q(4).b16(), Q(4).b16()); break;
        case FloatPred::Ugt: ordered(FloatPred::Ole); a_.mvn(Q(4).b16(), Q(4).b16()); break;
        case FloatPred::Uge: ordered(FloatPred::Olt); a_.mvn(Q(4).b16(), Q(4).b16()); break;
        default: return false;
      }
      bool_from_mask(4);
      vstore(v, 4);
      return true;
    }
    case Opcode::FToI: {
      // FCVT{N,Z,M,P}{S,U} round in the op's mode, saturate and turn NaN
      // into 0: ir::ftoi for a 32-bit result.
      if (f_.insts[in.args[0]].type != ir::Type::F32 || in.type != ir::Type::I32 || (fl & ff::FtzIn)) return false;
      load_args();
      bool sgn = Sign(in.attr) == Sign::Signed;
      switch (round_mode(fl)) {
        case Round::TowardZero: sgn ? a_.fcvtzs(s4(4), s4(0)) : a_.fcvtzu(s4(4), s4(0)); break;
        case Round::Down: sgn ? a_.fcvtms(s4(4), s4(0)) : a_.fcvtmu(s4(4), s4(0)); break;
        case Round::Up: sgn ? a_.fcvtps(s4(4), s4(0)) : a_.fcvtpu(s4(4), s4(0)); break;
        default: sgn ? a_.fcvtns(s4(4), s4(0)) : a_.fcvtnu(s4(4), s4(0)); break;
      }
      vstore(v, 4);
      return true;
    }
    case Opcode::IToF: {
      // i32 -> f32 rounded to nearest (the FPCR mode); other modes and Sat
      // stay with the helper.
      if (f_.insts[in.args[0]].type != ir::Type::I32 || in.type != ir::Type::F32 || fl != 0) return false;
      load_args();
      if (Sign(in.attr) == Sign::Signed) a_.scvtf(s4(4), s4(0));
      else a_.ucvtf(s4(4), s4(0));
      vstore(v, 4);
      return true;
    }
    default:
      return false;
  }
}

}  // namespace gpurc::a64
