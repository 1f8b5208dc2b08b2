// fold_complementary_selects: select(c, x, select(d, y, z)) where d is the
// complement of c (an icmp of the same operands with the inverse predicate,
// or `xor c, true`) is select(c, x, y): where c holds, both give x; where it
// does not, d holds and both give y. Likewise select(c, select(d, y, z), x)
// is select(c, z, x). Any type, bit for bit.
//
// The case that matters: a PICA200 IFC with an else block, if-converted
// (pass_if_convert.cpp), writes each register as select(c, then, select(!c,
// else, old)); the register's old value (a load_var in the entry block, for
// each component) is then read by nothing and dce removes it (issue 13,
// twelfth session: ref_loop's r5 and o1, eight loads and eight selects).
#include "ir/pass_util.h"
#include "ir/passes.h"

namespace gpurc::ir {

bool fold_complementary_selects(Function& f) {
  const size_t n = f.insts.size();
  auto is_true = [&](ValueId v) {
    return v < n && f.insts[v].op == Opcode::Const && f.insts[v].type == Type::I1 && (f.insts[v].imm & 1) != 0;
  };
  auto inverse = [](IntPred p) {
    switch (p) {
      case IntPred::Eq: return IntPred::Ne;
      case IntPred::Ne: return IntPred::Eq;
      case IntPred::Slt: return IntPred::Sge;
      case IntPred::Sge: return IntPred::Slt;
      case IntPred::Sle: return IntPred::Sgt;
      case IntPred::Sgt: return IntPred::Sle;
      case IntPred::Ult: return IntPred::Uge;
      case IntPred::Uge: return IntPred::Ult;
      case IntPred::Ule: return IntPred::Ugt;
      default: return IntPred::Ule;  // Ugt
    }
  };
  auto not_of = [&](ValueId x, ValueId c) {  // x = xor c, true
    const Inst& xi = f.insts[x];
    return xi.op == Opcode::Xor && xi.type == Type::I1 && xi.args.size() == 2 &&
           ((xi.args[0] == c && is_true(xi.args[1])) || (xi.args[1] == c && is_true(xi.args[0])));
  };
  auto complement = [&](ValueId c, ValueId d) {
    if (c >= n || d >= n || c == d) return false;
    const Inst& ci = f.insts[c];
    const Inst& di = f.insts[d];
    if (ci.op == Opcode::ICmp && di.op == Opcode::ICmp && ci.args.size() == 2 && ci.args == di.args)
      return inverse(IntPred(ci.attr)) == IntPred(di.attr);
    return not_of(d, c) || not_of(c, d);
  };
  bool changed = false;
  for (const Block& b : f.blocks)
    for (ValueId v : b.insts) {
      if (f.insts[v].op != Opcode::Select || f.insts[v].args.size() != 3) continue;
      // (a chain of them folds one link per visit; the nested select is defined first)
      for (int side = 1; side <= 2; ++side) {
        const ValueId c = f.insts[v].args[0], s = f.insts[v].args[size_t(side)];
        if (s >= n || f.insts[s].op != Opcode::Select || f.insts[s].args.size() != 3 ||
            !complement(c, f.insts[s].args[0]))
          continue;
        // side 2 (false): d holds there, take s's true operand; side 1: its false one.
        f.insts[v].args[size_t(side)] = f.insts[s].args[side == 2 ? 1 : 2];
        changed = true;
      }
    }
  if (!changed) return false;
  // The old values' load_vars read by nothing now (a load_var is not pure to
  // dce, which keeps its order with the stores; a read nothing uses can go).
  std::vector<uint32_t> uses(n, 0);
  for (const Block& b : f.blocks)
    for (ValueId v : b.insts)
      for (ValueId a : f.insts[v].args)
        if (a < n) ++uses[a];
  std::vector<uint8_t> dead(n, 0);
  bool any_dead = false;
  for (const Block& b : f.blocks)
    for (ValueId v : b.insts)
      if (f.insts[v].op == Opcode::Select && uses[v] == 0) {
        // A nested select nothing reads now goes too (it is pure), and a
        // load_var it was the last reader of.
        dead[v] = any_dead = true;
        for (ValueId a : f.insts[v].args)
          if (a < n && --uses[a] == 0 && f.insts[a].op == Opcode::LoadVar) dead[a] = any_dead = true;
      }
  for (const Block& b : f.blocks)
    for (ValueId v : b.insts)
      if (f.insts[v].op == Opcode::LoadVar && uses[v] == 0) dead[v] = any_dead = true;
  if (any_dead)
    for (Block& b : f.blocks) {
      std::vector<ValueId> out;
      out.reserve(b.insts.size());
      for (ValueId v : b.insts) {
        if (dead[v]) passutil::kill_inst(f, v);
        else out.push_back(v);
      }
      b.insts = std::move(out);
    }
  return true;
}

}  // namespace gpurc::ir
