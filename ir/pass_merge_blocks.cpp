// merge_straight_blocks: a block that ends in an unconditional `br` to a
// block with no other predecessor absorbs that block (its phis, one operand
// each, become that operand). Translators leave such chains (PICA200: the
// entry block that sets up the flow state, then the first guest block; a
// branch const_fold made unconditional), and the x64 backend keeps values
// in registers only within a block: every value crossing a block boundary
// goes through a frame slot (a store in the defining block and a load in
// each using block), so an entry block apart from the first guest block
// costs one store and one load per guest var the shader reads.
#include "ir/pass_util.h"
#include "ir/passes.h"

namespace gpurc::ir {

using namespace passutil;

bool merge_straight_blocks(Function& f) {
  if (f.blocks.size() < 2) return false;
  std::vector<std::vector<BlockId>> old_preds = snapshot_preds(f);  // also computes f's preds
  Replacements repl(f);
  bool merged = false;
  for (BlockId a = 0; a < f.blocks.size(); ++a) {
    for (;;) {
      const ValueId term = f.terminator(a);
      if (term == kNoValue || f.insts[term].op != Opcode::Br || f.blocks[a].succs.size() != 1) break;
      const BlockId s = f.blocks[a].succs[0];
      // The entry keeps no predecessors; a self-loop or a join is no chain.
      if (s == a || s == 0 || f.blocks[s].preds.size() != 1) break;
      bool phis_ok = true;
      for (ValueId v : f.blocks[s].insts)
        if (f.insts[v].op == Opcode::Phi && f.insts[v].args.size() != 1) phis_ok = false;
      if (!phis_ok) break;
      Block& into = f.blocks[a];
      Block& from = f.blocks[s];
      into.insts.pop_back();
      kill_inst(f, term);
      for (ValueId v : from.insts) {
        Inst& in = f.insts[v];
        if (in.op == Opcode::Phi) {  // one predecessor: the phi is its operand
          repl.set(v, in.args[0]);
          kill_inst(f, v);
          continue;
        }
        in.block = a;
        into.insts.push_back(v);
      }
      into.succs = std::move(from.succs);
      from.insts.clear();
      from.succs.clear();
      from.preds.clear();
      // The edges that left `s` now leave `a`, in the same order, so the
      // successors' phis keep their operands (remap_phis below).
      for (BlockId x : into.succs)
        for (BlockId& p : f.blocks[x].preds)
          if (p == s) p = a;
      for (BlockId x : into.succs)
        for (BlockId& p : old_preds[x])
          if (p == s) p = a;
      merged = true;
    }
  }
  if (!merged) return false;
  repl.apply(f);
  remap_phis(f, old_preds);
  remove_unreachable_blocks(f);  // the absorbed blocks, now empty and unreachable
  return true;
}

}  // namespace gpurc::ir
