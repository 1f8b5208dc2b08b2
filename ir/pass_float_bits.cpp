// simplify_float_bits: exact rewrites of the sign-bit and bitcast shapes
// that translating guests with untyped registers leaves (Tesla keeps f32 in
// i32 registers and negates an operand by flipping its sign bit):
//  - bitcast T (bitcast U x) with x of type T        -> x
//  - bitcast F (xor I x, sign bit of F)              -> fneg F (bitcast F x)
//    (F a float type of I's width; fneg is exactly the sign-bit flip)
//  - fadd (fneg a), b  /  fadd a, (fneg b)            -> fsub b, a  /  fsub a, b
//  - fsub a, (fneg b)                                 -> fadd a, b
//    when the op's NaN rule is not Propagate: IEEE defines a - b as
//    a + (-b) (every rounding mode, signed zeros included), FtzIn flushes
//    -x to -flush(x), and the Canonical / AllOnes NaN results do not depend
//    on which NaN came in (Propagate returns the first NaN operand, whose
//    sign the rewrite would change).
//  - i1: xor x, true -> not x; not (not x) -> x; not (icmp.P a, b) ->
//    icmp.!P a, b (integer predicates only: a float compare's negation is
//    the unordered counterpart, a different predicate).
// The float rules are limited to f32, the type both x64 tiers and a64 lower
// fneg and fsub natively for.
// Each saves a host instruction on the dependency chain it sits on (hash's
// Newton step `2 - a y`: xor + fadd -> fsub) and the register copies
// bitcasts lower to.
#include "ir/pass_util.h"
#include "ir/passes.h"

namespace gpurc::ir {

using namespace passutil;

namespace {

IntPred negate(IntPred p) {
  switch (p) {
    case IntPred::Eq: return IntPred::Ne;
    case IntPred::Ne: return IntPred::Eq;
    case IntPred::Slt: return IntPred::Sge;
    case IntPred::Sle: return IntPred::Sgt;
    case IntPred::Sgt: return IntPred::Sle;
    case IntPred::Sge: return IntPred::Slt;
    case IntPred::Ult: return IntPred::Uge;
    case IntPred::Ule: return IntPred::Ugt;
    case IntPred::Ugt: return IntPred::Ule;
    case IntPred::Uge: return IntPred::Ult;
  }
  return p;
}

uint64_t sign_bit(Type t) { return uint64_t(1) << (bit_width(t) - 1); }

}  // namespace

bool simplify_float_bits(Function& f) {
  Replacements repl(f);
  bool changed = false;
  auto is_const = [&](ValueId v, uint64_t bits) {
    const Inst& c = f.insts[v];
    return c.op == Opcode::Const && (c.imm & type_mask(c.type)) == bits;
  };
  for (BlockId b : reverse_post_order(f)) {
    std::vector<ValueId> out;
    out.reserve(f.blocks[b].insts.size());
    for (ValueId v : f.blocks[b].insts) {
      for (auto& a : f.insts[v].args) a = repl.find(a);
      const Type t = f.insts[v].type;
      const Opcode op = f.insts[v].op;
      if (op == Opcode::Bitcast) {
        const ValueId x = f.insts[v].args[0];
        const Inst& xi = f.insts[x];
        if (f.insts[x].type == t) {  // bitcast to its own type
          repl.set(v, x), kill_inst(f, v), changed = true;
          continue;
        }
        if (xi.op == Opcode::Bitcast && f.insts[xi.args[0]].type == t) {
          repl.set(v, xi.args[0]), kill_inst(f, v), changed = true;
          continue;
        }
        if (t == Type::F32 && xi.op == Opcode::Xor && is_int(xi.type) && bit_width(xi.type) == bit_width(t)) {
          int k = is_const(xi.args[1], sign_bit(t)) ? 1 : is_const(xi.args[0], sign_bit(t)) ? 0 : -1;
          if (k >= 0) {
            ValueId y = xi.args[1 - k];
            // The inner bitcast folds at once when y is itself a bitcast of an F value.
            if (f.insts[y].op == Opcode::Bitcast && f.insts[f.insts[y].args[0]].type == t) {
              y = f.insts[y].args[0];
            } else {
              const ValueId c = make_inst(f, Opcode::Bitcast, t, {y}, b);
              repl.grow(f);
              out.push_back(c);
              y = c;
            }
            Inst& in = f.insts[v];
            in.op = Opcode::FNeg;
            in.args = {y};
            in.fflags = 0;
            in.attr = 0;
            changed = true;
          }
        }
      } else if ((op == Opcode::FAdd || op == Opcode::FSub) && t == Type::F32 && nan_rule(f.insts[v].fflags) != NanRule::Propagate) {
        Inst& in = f.insts[v];
        const bool neg0 = f.insts[in.args[0]].op == Opcode::FNeg, neg1 = f.insts[in.args[1]].op == Opcode::FNeg;
        if (op == Opcode::FAdd && neg1) {
          in.op = Opcode::FSub;
          in.args[1] = f.insts[in.args[1]].args[0];
          changed = true;
        } else if (op == Opcode::FAdd && neg0) {
          in.op = Opcode::FSub;
          in.args = {in.args[1], f.insts[in.args[0]].args[0]};
          changed = true;
        } else if (op == Opcode::FSub && neg1) {
          in.op = Opcode::FAdd;
          in.args[1] = f.insts[in.args[1]].args[0];
          changed = true;
        }
      } else if (t == Type::I1 && op == Opcode::Xor) {
        Inst& in = f.insts[v];
        int k = is_const(in.args[1], 1) ? 1 : is_const(in.args[0], 1) ? 0 : -1;
        if (k >= 0) {
          in.op = Opcode::Not;
          in.args = {in.args[1 - k]};
          changed = true;
        }
      }
      if (f.insts[v].op == Opcode::Not && t == Type::I1) {
        const ValueId x = f.insts[v].args[0];
        const Inst& xi = f.insts[x];
        if (xi.op == Opcode::Not) {
          repl.set(v, xi.args[0]), kill_inst(f, v), changed = true;
          continue;
        }
        if (xi.op == Opcode::ICmp) {
          Inst& in = f.insts[v];
          in.op = Opcode::ICmp;
          in.attr = uint8_t(negate(IntPred(xi.attr)));
          in.args = xi.args;
          changed = true;
        }
      }
      out.push_back(v);
    }
    f.blocks[b].insts = std::move(out);
  }
  if (changed) repl.apply(f);
  return changed;
}

}  // namespace gpurc::ir
