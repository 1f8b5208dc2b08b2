// Native lowering of state, select, integer and f32 ops in 32-bit lanes, and
// of 64-bit moves and integer ops. Each op reads its operands' strip (one q register of four
// lanes, two for a 64-bit value) from their frame slots into v0..v3, computes
// into v4 (v5..v7 scratch) and stores the result to its slot. Narrow integer
// lanes (i1/i8/i16) live zero-extended in 32-bit lanes; every result is
// masked back to its width so it stays canonical.
#include <cstddef>

#include <bit>
#include <utility>

#include "backend_a64/emitter.h"
#include "backend_a64/lowering.h"
#include "ir/transc_pica.h"

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
      a_.ldr(L(4), at(x27, f_.var_offset(uint32_t(in.imm)), 16));
      mask_to_width(4, in.type);
      vstore(v, 4);
      return true;
    case Opcode::StoreVar:
      if (in.imm >= f_.vars.size()) throw CompileError("a64 jit: store_var of unknown var " + std::to_string(in.imm));
      vload(0, in.args[0]);
      a_.str(L(0), at(x27, f_.var_offset(uint32_t(in.imm)), 16));
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
      a_.dup(L(4).s4(), w10);
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
      vload(0, in.args[0]);
      a_.movi(L(4).b16(), 0);
      Label done = a_.newLabel();
      a_.cbz(x22, done);  // no uniform block: every lane reads 0
      mov_imm(x12, f_.uniform_bytes - 4 - in.imm);  // the last offset inside
      add_off(x13, x22, in.imm);
      for (uint32_t i = 0; i < 4; ++i) {
        Label next = a_.newLabel();
        a_.umov(w10, L(0).s(i));
        a_.cmp(x10, x12);
        a_.b_hi(next);
        a_.ldr(w11, ptr(x13, x10));
        a_.ins(L(4).s(i), w11);
        a_.bind(next);
      }
      a_.bind(done);
      vstore(v, 4);
      return true;
    }
    case Opcode::EntryMask:
      a_.ldr(w9, at(x19, CTX(entry_mask), 4));
      a_.lsr(w10, w23, 2);
      a_.lsr(w9, w9, w10);
      a_.dup(L(4).s4(), w9);
      viota(5);
      a_.neg(L(5).s4(), L(5).s4());
      a_.ushl(L(4).s4(), L(4).s4(), L(5).s4());  // lane i: mask >> i
      mask_to_width(4, ir::Type::I1);
      vstore(v, 4);
      return true;
    case Opcode::LaneId:
      a_.lsr(w9, w23, 2);
      a_.dup(L(4).s4(), w9);
      viota(5);
      a_.add(L(4).s4(), L(4).s4(), L(5).s4());
      vstore(v, 4);
      return true;
    case Opcode::Select:
      // The i1 condition becomes a lane mask; BSL picks if_true where it is set.
      vload(0, in.args[0]);
      vload(1, in.args[1]);
      vload(2, in.args[2]);
      a_.shl(L(5).s4(), L(0).s4(), 31);
      a_.sshr(L(5).s4(), L(5).s4(), 31);
      a_.bsl(L(5).b16(), L(1).b16(), L(2).b16());
      vstore(v, 5);
      return true;
    case Opcode::FNeg: case Opcode::FAbs: {
      if (in.type != ir::Type::F32 && in.type != ir::Type::F16) return false;
      uint32_t sign = in.type == ir::Type::F32 ? 0x80000000u : 0x8000u;
      vload(0, in.args[0]);
      if (in.op == Opcode::FNeg) {
        vconst(5, sign);
        a_.eor(L(4).b16(), L(0).b16(), L(5).b16());
      } else {
        vconst(5, uint32_t(type_mask(in.type)) & ~sign);
        a_.and_(L(4).b16(), L(0).b16(), L(5).b16());
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
      a_.str(L(0), at(x28, f_.var_offset(uint32_t(in.imm)) + 16u * unsigned(h), 16));
    }
    return true;
  }
  if (in.op == Opcode::Trunc || in.op == Opcode::ICmp) return lower_int64(v);  // 32-bit-lane results
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
        a_.ldr(L(4), at(x28, f_.var_offset(uint32_t(in.imm)) + 16u * unsigned(h), 16));
        vstore(v, 4, h);
      }
      return true;
    case Opcode::LoadUniform: {
      Label ok = a_.newLabel();
      if (in.imm <= f_.uniform_bytes && f_.uniform_bytes - in.imm >= 8) a_.cbnz(x22, ok);
      emit_fault_return(FaultKind::OutOfBounds, v, in.imm, uint32_t(Space::Const));
      a_.bind(ok);
      a_.ldr(x10, at(x22, in.imm, 8));
      a_.dup(L(4).d2(), x10);
      vstore(v, 4, 0);
      vstore(v, 4, 1);
      return true;
    }
    case Opcode::Select:
      // Lanes 0-1 and 2-3 of the 32-bit condition mask widened to 64 bits.
      vload(0, in.args[0]);
      a_.shl(L(0).s4(), L(0).s4(), 31);
      a_.sshr(L(0).s4(), L(0).s4(), 31);
      a_.sshll(L(3).d2(), L(0).s2(), 0);
      a_.sshll2(L(5).d2(), L(0).s4(), 0);
      for (int h = 0; h < 2; ++h) {
        vload(1, in.args[1], h);
        vload(2, in.args[2], h);
        a_.bsl(L(h ? 5 : 3).b16(), L(1).b16(), L(2).b16());
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
    case Opcode::Zext: case Opcode::Sext:
      // From a 32-bit-lane value: lanes 0-1 / 2-3 widened (USHLL / SSHLL{,2}).
      if (wide(in.args[0]) || !is_int(f_.insts[in.args[0]].type)) return false;
      vload(0, in.args[0]);
      if (in.op == Opcode::Sext) {
        sext_to32(0, 0, f_.insts[in.args[0]].type);
        a_.sshll(L(4).d2(), L(0).s2(), 0);
        a_.sshll2(L(5).d2(), L(0).s4(), 0);
      } else {
        a_.ushll(L(4).d2(), L(0).s2(), 0);
        a_.ushll2(L(5).d2(), L(0).s4(), 0);
      }
      vstore(v, 4, 0);
      vstore(v, 5, 1);
      return true;
    default:
      return lower_int64(v);
  }
}

// Integer ops on 64-bit lanes: per half (two lanes of the strip in one q
// register), 32-bit operands (carry, shift count) widened to the half's two
// lanes. 64-bit multiplies stay with the helper (NEON has no 64-bit MUL).
bool Emitter::lower_int64(ValueId v) {
  const Inst& in = f_.insts[v];
  no_clobber_ = true;  // per half, a 32-bit operand is read (and widened in place) again
  auto d2 = [this](int r) { return L(r).d2(); };
  auto b16 = [this](int r) { return L(r).b16(); };
  // Operand i of half h into q register r (a 32-bit operand zero-extended).
  auto half_arg = [&](int r, size_t i, int h) {
    if (wide(in.args[i])) {
      vload(r, in.args[i], h);
    } else {
      vload(r, in.args[i]);
      if (h) a_.ushll2(d2(r), L(r).s4(), 0);
      else a_.ushll(d2(r), L(r).s2(), 0);
    }
  };
  switch (in.op) {
    case Opcode::Trunc: {
      if (!wide(in.args[0]) || wide(v) || !is_int(in.type)) return false;
      vload(0, in.args[0], 0);
      vload(1, in.args[0], 1);
      a_.xtn(L(4).s2(), d2(0));
      a_.xtn2(L(4).s4(), d2(1));
      mask_to_width(4, in.type);
      vstore(v, 4);
      return true;
    }
    case Opcode::ICmp: {
      if (!wide(in.args[0])) return false;
      IntPred p = IntPred(in.attr);
      // Per half a 64-bit lane mask, narrowed to 32-bit lanes (XTN, XTN2).
      for (int h = 0; h < 2; ++h) {
        half_arg(0, 0, h);
        half_arg(1, 1, h);
        int m = 2 + h;
        switch (p) {
          case IntPred::Eq: case IntPred::Ne: a_.cmeq(d2(m), d2(0), d2(1)); break;
          case IntPred::Slt: a_.cmgt(d2(m), d2(1), d2(0)); break;
          case IntPred::Sle: a_.cmge(d2(m), d2(1), d2(0)); break;
          case IntPred::Sgt: a_.cmgt(d2(m), d2(0), d2(1)); break;
          case IntPred::Sge: a_.cmge(d2(m), d2(0), d2(1)); break;
          case IntPred::Ult: a_.cmhi(d2(m), d2(1), d2(0)); break;
          case IntPred::Ule: a_.cmhs(d2(m), d2(1), d2(0)); break;
          case IntPred::Ugt: a_.cmhi(d2(m), d2(0), d2(1)); break;
          case IntPred::Uge: a_.cmhs(d2(m), d2(0), d2(1)); break;
          default: return false;
        }
      }
      a_.xtn(L(4).s2(), d2(2));
      a_.xtn2(L(4).s4(), d2(3));
      if (p == IntPred::Ne) a_.mvn(b16(4), b16(4));
      bool_from_mask(4);
      vstore(v, 4);
      return true;
    }
    case Opcode::IAdd: case Opcode::ISub: case Opcode::IAddC: case Opcode::And: case Opcode::Or:
    case Opcode::Xor: case Opcode::Not: case Opcode::INeg: case Opcode::IAbs: case Opcode::IMin:
    case Opcode::IMax: case Opcode::Shl: case Opcode::LShr: case Opcode::AShr:
      break;
    default:
      return false;
  }
  if (!wide(v)) return false;
  const bool is_signed = Sign(in.attr) == Sign::Signed;
  for (int h = 0; h < 2; ++h) {
    for (size_t i = 0; i < in.args.size() && i < 3; ++i) half_arg(int(i), i, h);
    switch (in.op) {
      case Opcode::IAdd: a_.add(d2(4), d2(0), d2(1)); break;
      case Opcode::ISub: a_.sub(d2(4), d2(0), d2(1)); break;
      case Opcode::IAddC:
        a_.add(d2(4), d2(0), d2(1));
        a_.add(d2(4), d2(4), d2(2));
        break;
      case Opcode::And: a_.and_(b16(4), b16(0), b16(1)); break;
      case Opcode::Or: a_.orr(b16(4), b16(0), b16(1)); break;
      case Opcode::Xor: a_.eor(b16(4), b16(0), b16(1)); break;
      case Opcode::Not: a_.mvn(b16(4), b16(0)); break;
      case Opcode::INeg: a_.neg(d2(4), d2(0)); break;
      case Opcode::IAbs: a_.abs(d2(4), d2(0)); break;
      case Opcode::IMin: case Opcode::IMax:
        // No 64-bit SMIN/UMIN: a compare picks.
        if (is_signed) a_.cmgt(d2(4), d2(0), d2(1));
        else a_.cmhi(d2(4), d2(0), d2(1));  // a > b
        if (in.op == Opcode::IMin) a_.bsl(b16(4), b16(1), b16(0));
        else a_.bsl(b16(4), b16(0), b16(1));
        break;
      default: {  // shifts: the widened 32-bit count, masked to 63 or capped at 64
        if (ShiftMode(in.attr) == ShiftMode::Mask) {
          vconst64(5, 63);
          a_.and_(b16(1), b16(1), b16(5));
        } else {
          vconst64(5, 64);
          a_.cmhi(d2(6), d2(1), d2(5));
          a_.bit(b16(1), b16(5), b16(6));  // count > 64: 64
        }
        if (in.op == Opcode::Shl) {
          a_.ushl(d2(4), d2(0), d2(1));
        } else {
          a_.neg(d2(1), d2(1));
          if (in.op == Opcode::LShr) a_.ushl(d2(4), d2(0), d2(1));
          else a_.sshl(d2(4), d2(0), d2(1));
        }
        break;
      }
    }
    vstore(v, 4, h);
  }
  return true;
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
    case Opcode::IAdd: load_args(); a_.add(L(4).s4(), L(0).s4(), L(1).s4()); return finish(4);
    case Opcode::ISub: load_args(); a_.sub(L(4).s4(), L(0).s4(), L(1).s4()); return finish(4);
    case Opcode::IMul: load_args(); a_.mul(L(4).s4(), L(0).s4(), L(1).s4()); return finish(4);
    case Opcode::IAddC:
      load_args();
      a_.add(L(4).s4(), L(0).s4(), L(1).s4());
      a_.add(L(4).s4(), L(4).s4(), L(2).s4());
      return finish(4);
    case Opcode::IMad:
      load_args();
      a_.mla(L(2).s4(), L(0).s4(), L(1).s4());  // into c's register (a copy unless c dies here)
      return finish(2);
    case Opcode::INeg: load_args(); a_.neg(L(4).s4(), L(0).s4()); return finish(4);
    case Opcode::IAbs:
      load_args();
      sext_to32(0, 0, t);
      a_.abs(L(4).s4(), L(0).s4());
      return finish(4);
    case Opcode::And: load_args(); a_.and_(L(4).b16(), L(0).b16(), L(1).b16()); return finish(4);
    case Opcode::Or: load_args(); a_.orr(L(4).b16(), L(0).b16(), L(1).b16()); return finish(4);
    case Opcode::Xor: load_args(); a_.eor(L(4).b16(), L(0).b16(), L(1).b16()); return finish(4);
    case Opcode::Not: load_args(); a_.mvn(L(4).b16(), L(0).b16()); return finish(4);
    case Opcode::IMin: case Opcode::IMax: {
      load_args();
      bool is_signed = Sign(in.attr) == Sign::Signed;
      if (is_signed) {
        sext_to32(0, 0, t);
        sext_to32(1, 1, t);
        if (in.op == Opcode::IMin) a_.smin(L(4).s4(), L(0).s4(), L(1).s4());
        else a_.smax(L(4).s4(), L(0).s4(), L(1).s4());
      } else if (in.op == Opcode::IMin) {
        a_.umin(L(4).s4(), L(0).s4(), L(1).s4());
      } else {
        a_.umax(L(4).s4(), L(0).s4(), L(1).s4());
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
        a_.and_(L(1).b16(), L(1).b16(), L(5).b16());
      } else {
        vconst(5, 32);
        a_.umin(L(1).s4(), L(1).s4(), L(5).s4());
      }
      if (in.op == Opcode::Shl) {
        a_.ushl(L(4).s4(), L(0).s4(), L(1).s4());
      } else {
        a_.neg(L(1).s4(), L(1).s4());
        if (in.op == Opcode::LShr) {
          a_.ushl(L(4).s4(), L(0).s4(), L(1).s4());
        } else {
          sext_to32(0, 0, t);
          a_.sshl(L(4).s4(), L(0).s4(), L(1).s4());
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
      auto s4 = [this](int r) { return L(r).s4(); };
      switch (p) {
        case IntPred::Eq: a_.cmeq(s4(4), s4(0), s4(1)); break;
        case IntPred::Ne: a_.cmeq(s4(4), s4(0), s4(1)); a_.mvn(L(4).b16(), L(4).b16()); break;
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
    case Opcode::Extract16:
      load_args();
      if (in.imm & 1) a_.ushr(L(0).s4(), L(0).s4(), 16);
      return finish(0);  // i16: the low half
    case Opcode::Insert16: {
      bool high = in.imm & 1;
      load_args();
      vconst(5, high ? 0x0000ffffu : 0xffff0000u);
      a_.and_(L(0).b16(), L(0).b16(), L(5).b16());  // the half that stays
      if (high) a_.shl(L(1).s4(), L(1).s4(), 16);      // i16 lanes are zero-extended
      a_.orr(L(4).b16(), L(0).b16(), L(1).b16());
      vstore(v, 4);
      return true;
    }
    case Opcode::Lut3: {
      // f(a, b, c) = a ? (b ? h11(c) : h10(c)) : (b ? h01(c) : h00(c)), each
      // hxy one of 0, c, ~c, 1 (table bits xy0 and xy1), combined with BSL.
      load_args();
      auto half = [&](int d, unsigned xy) {
        unsigned bits = unsigned(in.imm >> (xy * 2)) & 3;  // bit 0: c = 0, bit 1: c = 1
        switch (bits) {
          case 0: a_.movi(L(d).b16(), 0); break;
          case 1: a_.mvn(L(d).b16(), L(2).b16()); break;
          case 2: a_.mov(L(d).b16(), L(2).b16()); break;
          default: a_.movi(L(d).b16(), 0xff); break;
        }
      };
      half(4, 0);
      half(5, 1);
      a_.mov(L(3).b16(), L(1).b16());
      a_.bsl(L(3).b16(), L(5).b16(), L(4).b16());  // a = 0: b ? h01 : h00
      half(4, 2);
      half(5, 3);
      a_.mov(L(6).b16(), L(1).b16());
      a_.bsl(L(6).b16(), L(5).b16(), L(4).b16());  // a = 1: b ? h11 : h10
      a_.bsl(L(0).b16(), L(6).b16(), L(3).b16());
      return finish(0);
    }
    case Opcode::BfExtract: {
      // i32 only. USHL / SSHL read the count's low byte as signed, so offset
      // and count (& 0xff) are capped at 32 first: a shift by 32 gives 0 (or
      // the sign fill), which is what bits past the top read as.
      if (t != ir::Type::I32) return false;
      load_args();
      vconst(5, 0xff);
      vconst(6, 32);
      a_.and_(L(1).b16(), L(1).b16(), L(5).b16());
      a_.and_(L(2).b16(), L(2).b16(), L(5).b16());
      a_.umin(L(1).s4(), L(1).s4(), L(6).s4());
      a_.umin(L(2).s4(), L(2).s4(), L(6).s4());
      a_.neg(L(1).s4(), L(1).s4());
      if (Sign(in.attr) == Sign::Unsigned) {
        a_.ushl(L(4).s4(), L(0).s4(), L(1).s4());
        a_.movi(L(5).b16(), 0xff);
        a_.ushl(L(5).s4(), L(5).s4(), L(2).s4());  // ones above the field (none when count is 32)
        a_.bic(L(4).b16(), L(4).b16(), L(5).b16());
      } else {
        a_.sshl(L(4).s4(), L(0).s4(), L(1).s4());
        a_.sub(L(6).s4(), L(6).s4(), L(2).s4());  // 32 - count: count 0 shifts everything out
        a_.ushl(L(4).s4(), L(4).s4(), L(6).s4());
        a_.neg(L(6).s4(), L(6).s4());
        a_.sshl(L(4).s4(), L(4).s4(), L(6).s4());
      }
      vstore(v, 4);
      return true;
    }
    case Opcode::FindMsb: case Opcode::FindLsb: {
      // 31 - CLZ of the highest bit that counts: -1 (all ones) when none.
      ir::Type at_ = f_.insts[in.args[0]].type;
      load_args();
      if (in.op == Opcode::FindLsb) {
        a_.neg(L(1).s4(), L(0).s4());
        a_.and_(L(0).b16(), L(0).b16(), L(1).b16());  // the lowest set bit alone
      } else if (Sign(in.attr) == Sign::Signed) {
        sext_to32(0, 0, at_);
        a_.sshr(L(1).s4(), L(0).s4(), 31);
        a_.eor(L(0).b16(), L(0).b16(), L(1).b16());  // negative: ~v (zero above the width)
      }
      a_.clz(L(0).s4(), L(0).s4());
      vconst(4, 31);
      a_.sub(L(4).s4(), L(4).s4(), L(0).s4());
      vstore(v, 4);
      return true;
    }
    default:
      return false;
  }
}

bool Emitter::lower_float(ValueId v) {
  const Inst& in = f_.insts[v];
  const uint32_t fl = in.fflags;
  auto s4 = [this](int r) { return L(r).s4(); };
  auto load_args = [&] {
    for (size_t i = 0; i < in.args.size() && i < 4; ++i) vload(int(i), in.args[i]);
  };
  // The flags the native forms apply as ir::eval_lane does: the Canonical and
  // AllOnes NaN rules, FtzIn (operands flushed), FtzOut, Sat, and (`extra`)
  // ZeroMul or a rounding mode where the op takes them. Anything else (the
  // Propagate rule, rounding modes of arithmetic: NEON has no per-instruction
  // rounding) stays with the helper.
  auto flags_ok = [&](uint32_t extra) {
    return nan_rule(fl) != NanRule::Propagate &&
           (fl & ~(ff::NanMask | ff::FtzIn | ff::FtzOut | ff::Sat | extra)) == 0;
  };
  auto flush_args = [&](size_t n) {
    if (fl & ff::FtzIn)
      for (size_t i = 0; i < n && i < in.args.size(); ++i)
        if (!plan_.no_subnormal[in.args[i]]) flush_subnormal(int(i));
  };
  // NaN lanes -> the rule's NaN, then FtzOut and Sat (ir finish()), and the store.
  auto finish = [&](int r) {
    if (nan_rule(fl) != NanRule::Any || (fl & ff::Sat))  // Any: the host's NaN will do (Sat wants it quiet)
      canonicalize_nan(r, nan_rule(fl) == NanRule::AllOnes ? kAllOnesNan : kCanonicalNan);
    if (fl & ff::FtzOut) flush_subnormal(r);
    if (fl & ff::Sat) saturate(r);
    vstore(v, r);
    return true;
  };
  switch (in.op) {
    case Opcode::FAdd: case Opcode::FSub: case Opcode::FMul: case Opcode::FFma: case Opcode::FMad: {
      // Host arithmetic is IEEE (FPCR set in the prologue, round to nearest)
      // with exact subnormals. ZeroMul: in lanes where one factor is 0 and
      // the other infinite both factors become +0, so the product is +0.
      if (in.type != ir::Type::F32 || !flags_ok(in.op == Opcode::FAdd || in.op == Opcode::FSub ? 0 : ff::ZeroMul))
        return false;
      load_args();
      flush_args(3);
      // 0 x inf lanes: FMUL gives NaN there, FMULX +-2, and both give NaN
      // only for a NaN factor; so they are the lanes where FMULX is a number
      // and FMUL is not (mask in logical 3).
      const bool zero_mul = (fl & ff::ZeroMul) != 0;
      if (zero_mul) {
        a_.fmul(s4(4), s4(0), s4(1));
        a_.fmulx(s4(3), s4(0), s4(1));
        a_.fcmeq(s4(3), s4(3), s4(3));
        a_.fcmeq(s4(5), s4(4), s4(4));
        a_.bic(L(3).b16(), L(3).b16(), L(5).b16());
        if (in.op == Opcode::FMul || in.op == Opcode::FMad) {
          a_.bic(L(4).b16(), L(4).b16(), L(3).b16());  // +0 there
          if (in.op == Opcode::FMad) a_.fadd(s4(4), s4(4), s4(2));
          return finish(4);
        }
        // ffma: both factors +0 in those lanes, so the lane computes c + 0.
        a_.bic(L(5).b16(), L(0).b16(), L(3).b16());
        rebind(0, 5);
        a_.bic(L(5).b16(), L(1).b16(), L(3).b16());
        rebind(1, 5);
      }
      switch (in.op) {
        case Opcode::FAdd: a_.fadd(s4(4), s4(0), s4(1)); break;
        case Opcode::FSub: a_.fsub(s4(4), s4(0), s4(1)); break;
        case Opcode::FMul: a_.fmul(s4(4), s4(0), s4(1)); break;
        case Opcode::FFma:  // into c's register (a copy unless c dies here)
          a_.fmla(s4(2), s4(0), s4(1));
          return finish(2);
        default:
          a_.fmul(s4(4), s4(0), s4(1));
          a_.fadd(s4(4), s4(4), s4(2));
          break;
      }
      return finish(4);
    }
    case Opcode::FMin: case Opcode::FMax: {
      // FMIN / FMAX give NaN when either operand is NaN and order -0 below
      // +0 (ir::eval_min_max's NanWins); NumberWins then puts the other
      // operand into NaN lanes (not FMINNM: it turns a signalling NaN into
      // NaN), SecondOnNan is one compare and a select.
      if (in.type != ir::Type::F32 || !flags_ok(0)) return false;
      bool is_max = in.op == Opcode::FMax;
      load_args();
      flush_args(2);
      switch (MinMaxNan(in.attr)) {
        case MinMaxNan::SecondOnNan:
          // (a < b) ? a : b for min, (a > b) ? a : b for max.
          if (is_max) a_.fcmgt(s4(4), s4(0), s4(1));
          else a_.fcmgt(s4(4), s4(1), s4(0));
          a_.bsl(L(4).b16(), L(0).b16(), L(1).b16());
          break;
        case MinMaxNan::NumberWins:
          is_max ? a_.fmax(s4(4), s4(0), s4(1)) : a_.fmin(s4(4), s4(0), s4(1));
          a_.fcmeq(s4(5), s4(1), s4(1));
          a_.bif(L(4).b16(), L(0).b16(), L(5).b16());  // b NaN: a
          a_.fcmeq(s4(5), s4(0), s4(0));
          a_.bif(L(4).b16(), L(1).b16(), L(5).b16());  // a NaN: b (both NaN: b, a NaN as well)
          break;
        default:
          is_max ? a_.fmax(s4(4), s4(0), s4(1)) : a_.fmin(s4(4), s4(0), s4(1));
          break;
      }
      return finish(4);
    }
    case Opcode::FExp2: case Opcode::FLog2: {
      // PICA200's ex2 / lg2: the model's sequence of IEEE double operations
      // (ir/transc_pica.h), two lanes per q register.
      if (in.type != ir::Type::F32 || Transc(in.attr) != Transc::Pica || !flags_ok(0)) return false;
      load_args();
      if (!plan_.no_subnormal[in.args[0]]) flush_subnormal(0);
      if (in.op == Opcode::FExp2) lower_pica_ex2(4, 0);
      else lower_pica_lg2(4, 0);
      // The model's out(): NaN canonical (finish replaces every NaN lane
      // anyway), result flushed (finish does it with FtzOut).
      if (!(fl & ff::FtzOut)) flush_subnormal(4);
      if (in.op == Opcode::FLog2) {
        // Special lanes of the flushed operand: +inf -> +inf, +-0 -> -inf,
        // negative or NaN -> the canonical NaN.
        vconst(5, 0x7F800000u);
        a_.cmeq(s4(6), s4(0), s4(5));
        a_.bit(L(4).b16(), L(5).b16(), L(6).b16());
        a_.fcmeq(s4(6), s4(0), 0);  // +-0
        vconst(5, 0xFF800000u);
        a_.bit(L(4).b16(), L(5).b16(), L(6).b16());
        a_.fcmge(s4(6), s4(0), 0);  // false for negative and NaN lanes
        vconst(5, kCanonicalNan);
        a_.bif(L(4).b16(), L(5).b16(), L(6).b16());
      }
      return finish(4);
    }
    case Opcode::FFloor: case Opcode::FCeil: case Opcode::FTrunc: case Opcode::FRint: case Opcode::FSqrt:
    case Opcode::FRcp: case Opcode::FRsqrt: {
      // FRINT{M,P,Z,N} are exact (frint takes the op's rounding mode);
      // FSQRT and FDIV (1 / x) of Transc::Ieee round to nearest. PICA200's
      // rcp and rsq (ir/transc_pica.h) flush the operand, map -0 to +0 (both
      // give +inf), compute 1 / x in f32 and 1 / sqrt(x) in f64 (FCVTL, one
      // rounding by FCVTN) and flush the result.
      if (in.type != ir::Type::F32) return false;
      const bool pica = Transc(in.attr) == Transc::Pica && (in.op == Opcode::FRcp || in.op == Opcode::FRsqrt);
      if (!flags_ok(in.op == Opcode::FRint ? ff::RoundMask : 0)) return false;
      if ((in.op == Opcode::FSqrt || in.op == Opcode::FRcp) && Transc(in.attr) != Transc::Ieee && !pica) return false;
      if (in.op == Opcode::FRsqrt && !pica) return false;
      load_args();
      if (pica) {
        if (!plan_.no_subnormal[in.args[0]]) flush_subnormal(0);
        vconst(5, 0);
        a_.fadd(s4(5), s4(0), s4(5));  // -0 -> +0
        rebind(0, 5);
      } else {
        flush_args(1);
      }
      switch (in.op) {
        case Opcode::FFloor: a_.frintm(s4(4), s4(0)); break;
        case Opcode::FCeil: a_.frintp(s4(4), s4(0)); break;
        case Opcode::FTrunc: a_.frintz(s4(4), s4(0)); break;
        case Opcode::FSqrt: a_.fsqrt(s4(4), s4(0)); break;
        case Opcode::FRcp:
          vconst(5, 0x3F800000u);  // 1.0f
          a_.fdiv(s4(4), s4(5), s4(0));
          break;
        case Opcode::FRsqrt:
          a_.fcvtl(L(5).d2(), L(0).s2());
          a_.fcvtl2(L(6).d2(), L(0).s4());
          a_.fsqrt(L(5).d2(), L(5).d2());
          a_.fsqrt(L(6).d2(), L(6).d2());
          vconst64(7, 0x3FF0000000000000ull);  // 1.0
          a_.fdiv(L(5).d2(), L(7).d2(), L(5).d2());
          a_.fdiv(L(6).d2(), L(7).d2(), L(6).d2());
          a_.fcvtn(L(4).s2(), L(5).d2());
          a_.fcvtn2(L(4).s4(), L(6).d2());
          break;
        default:
          switch (round_mode(fl)) {
            case Round::TowardZero: a_.frintz(s4(4), s4(0)); break;
            case Round::Down: a_.frintm(s4(4), s4(0)); break;
            case Round::Up: a_.frintp(s4(4), s4(0)); break;
            default: a_.frintn(s4(4), s4(0)); break;
          }
          break;
      }
      // The model's out(): NaN canonical (finish replaces every NaN lane
      // anyway), result flushed (finish does it with FtzOut).
      if (pica && !(fl & ff::FtzOut)) flush_subnormal(4);
      return finish(4);
    }
    case Opcode::FCmp: {
      if (f_.insts[in.args[0]].type != ir::Type::F32) return false;
      load_args();
      flush_args(2);
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
            a_.orr(L(4).b16(), L(4).b16(), L(5).b16());
            break;
          default:  // Ord
            a_.fcmeq(s4(4), s4(0), s4(0));
            a_.fcmeq(s4(5), s4(1), s4(1));
            a_.and_(L(4).b16(), L(4).b16(), L(5).b16());
            break;
        }
      };
      FloatPred p = FloatPred(in.attr);
      switch (p) {
        case FloatPred::Oeq: case FloatPred::One: case FloatPred::Olt: case FloatPred::Ole:
        case FloatPred::Ogt: case FloatPred::Oge: case FloatPred::Ord:
          ordered(p);
          break;
        case FloatPred::Uno: ordered(FloatPred::Ord); a_.mvn(L(4).b16(), L(4).b16()); break;
        case FloatPred::Ueq: ordered(FloatPred::One); a_.mvn(L(4).b16(), L(4).b16()); break;
        case FloatPred::Une: ordered(FloatPred::Oeq); a_.mvn(L(4).b16(), L(4).b16()); break;
        case FloatPred::Ult: ordered(FloatPred::Oge); a_.mvn(L(4).b16(), L(4).b16()); break;
        case FloatPred::Ule: ordered(FloatPred::Ogt); a_.mvn(L(4).b16(), L(4).b16()); break;
        case FloatPred::Ugt: ordered(FloatPred::Ole); a_.mvn(L(4).b16(), L(4).b16()); break;
        case FloatPred::Uge: ordered(FloatPred::Olt); a_.mvn(L(4).b16(), L(4).b16()); break;
        default: return false;
      }
      bool_from_mask(4);
      vstore(v, 4);
      return true;
    }
    case Opcode::FToI: {
      // FCVT{N,Z,M,P}{S,U} round in the op's mode, saturate and turn NaN
      // into 0: ir::ftoi for a 32-bit result.
      if (f_.insts[in.args[0]].type != ir::Type::F32 || in.type != ir::Type::I32) return false;
      load_args();
      flush_args(1);
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

// PICA200's EX2 (ir::pica_fp::ex2_double) on the four f32 lanes of q
// register x (flushed, NaN lanes give NaN) into q register d, rounded to f32
// once. v16..v23 are scratch (caller-saved, no helper call in between).
void Emitter::lower_pica_ex2(int d, int x) {
  namespace fp = ir::pica_fp;
  auto d2 = [this](int r) { return L(r).d2(); };
  auto dconst = [&](int r, double c) { vconst64(r, std::bit_cast<uint64_t>(c)); };
  for (int h = 0; h < 2; ++h) {
    if (h) a_.fcvtl2(d2(16), L(x).s4());
    else a_.fcvtl(d2(16), L(x).s2());
    dconst(20, fp::kEx2Lo);
    a_.fmax(d2(16), d2(16), d2(20));
    dconst(20, fp::kEx2Hi);
    a_.fmin(d2(16), d2(16), d2(20));
    a_.frintn(d2(17), d2(16));       // k: nearest, ties to even
    a_.fsub(d2(18), d2(16), d2(17));  // r = x - k, exact
    int p = 19, q = 20;  // p holds the polynomial so far
    dconst(p, fp::kEx2Poly.c[13]);
    for (int i = 12; i >= 0; --i) {
      dconst(q, fp::kEx2Poly.c[i]);
      a_.fmla(d2(q), d2(p), d2(18));  // c[i] + p * r, one rounding
      std::swap(p, q);
    }
    // 2^k: the bits of k + magic shifted left by 52.
    dconst(q, fp::kEx2Magic);
    a_.fadd(d2(17), d2(17), d2(q));
    a_.shl(d2(17), d2(17), 52);
    a_.fmul(d2(p), d2(p), d2(17));
    if (h) a_.fcvtn2(L(d).s4(), d2(p));
    else a_.fcvtn(L(d).s2(), d2(p));
  }
}

// PICA200's LG2 (ir::pica_fp::lg2_double) on positive normal f32 lanes of q
// register x into q register d; other lanes get a value the caller replaces.
// v16..v23 are scratch.
void Emitter::lower_pica_lg2(int d, int x) {
  namespace fp = ir::pica_fp;
  auto d2 = [this](int r) { return L(r).d2(); };
  auto s4 = [this](int r) { return L(r).s4(); };
  auto dconst = [&](int r, double c) { vconst64(r, std::bit_cast<uint64_t>(c)); };
  // e = exponent - 127, m = mantissa | 1.0; m above fp32 sqrt(2): m / 2, e + 1.
  a_.ushr(s4(21), s4(x), 23);
  vconst(20, 127);
  a_.sub(s4(21), s4(21), s4(20));
  vconst(20, 0x7FFFFFu);
  a_.and_(L(22).b16(), L(x).b16(), L(20).b16());
  vconst(20, 0x3F800000u);
  a_.orr(L(22).b16(), L(22).b16(), L(20).b16());
  vconst(20, fp::kLg2SqrtTwoBits);
  a_.cmhi(s4(23), s4(22), s4(20));  // all ones where m > sqrt(2)
  a_.sub(s4(21), s4(21), s4(23));   // e + 1
  vconst(20, 0x00800000u);
  a_.and_(L(20).b16(), L(20).b16(), L(23).b16());
  a_.sub(s4(22), s4(22), s4(20));   // m / 2
  for (int h = 0; h < 2; ++h) {
    if (h) {
      a_.fcvtl2(d2(16), s4(22));
      a_.sshll2(d2(17), s4(21), 0);
    } else {
      a_.fcvtl(d2(16), L(22).s2());
      a_.sshll(d2(17), L(21).s2(), 0);
    }
    a_.scvtf(d2(17), d2(17));  // e, exact
    dconst(20, 1.0);
    a_.fsub(d2(18), d2(16), d2(20));
    a_.fadd(d2(19), d2(16), d2(20));
    a_.fdiv(d2(18), d2(18), d2(19));  // s = (m - 1) / (m + 1)
    a_.fmul(d2(16), d2(18), d2(18));  // z = s * s
    int p = 19, q = 20;  // p holds the polynomial so far
    dconst(p, fp::kLg2Poly.c[10]);
    for (int k = 9; k >= 0; --k) {
      dconst(q, fp::kLg2Poly.c[k]);
      a_.fmla(d2(q), d2(p), d2(16));  // c[k] + p * z
      std::swap(p, q);
    }
    a_.fmla(d2(17), d2(18), d2(p));  // fma(s, p, e)
    if (h) a_.fcvtn2(L(d).s4(), d2(17));
    else a_.fcvtn(L(d).s2(), d2(17));
  }
}

}  // namespace gpurc::a64
