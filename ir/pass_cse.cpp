// cse: a pure op equal to an earlier one (same opcode, type, attributes,
// immediate and operands) whose definition dominates it is replaced by that
// one; an and/or equal to one of its operands (x & x, (x & y) & y: masks
// that become so once equal masks are merged) by that operand. Effects
// (loads, stores, atomics, var access, budget) are never merged.
// Cross-lane ops (ballot, reduce, shuffle...) are merged only once every
// branch is uniform: before that, two identical ballots in differently
// active regions see different lanes.
#include <map>
#include <tuple>

#include "ir/pass_util.h"
#include "ir/passes.h"

namespace gpurc::ir {

using namespace passutil;

void cse(Function& f) {
  if (f.blocks.empty()) return;
  auto rpo = reverse_post_order(f);
  auto idom = immediate_dominators(f, rpo);
  const bool lowered = is_lowered(f);
  using Key = std::tuple<uint16_t, uint8_t, uint8_t, uint32_t, uint64_t, std::vector<ValueId>>;
  std::map<Key, std::vector<ValueId>> seen;
  Replacements repl(f);
  for (BlockId b : rpo) {
    std::vector<ValueId> out;
    for (ValueId v : f.blocks[b].insts) {
      Inst& in = f.insts[v];
      for (auto& a : in.args) a = repl.find(a);
      const OpInfo& info = op_info(in.op);
      if (!info.pure || in.op == Opcode::Phi || (info.cross_lane && !lowered)) {
        out.push_back(v);
        continue;
      }
      if (ValueId same = and_or_absorbed(f, in, repl); same != kNoValue) {
        repl.set(v, same);
        kill_inst(f, v);
        continue;
      }
      Key k{uint16_t(in.op), uint8_t(in.type), in.attr, in.fflags, in.imm, in.args};
      auto& cands = seen[k];
      ValueId hit = kNoValue;
      for (ValueId c : cands)
        if (f.insts[c].block != kNoBlock && dominates(idom, f.insts[c].block, b)) {
          hit = c;
          break;
        }
      if (hit != kNoValue) {
        repl.set(v, hit);
        kill_inst(f, v);
        continue;
      }
      cands.push_back(v);
      out.push_back(v);
    }
    f.blocks[b].insts = std::move(out);
  }
  repl.apply(f);
}

}  // namespace gpurc::ir
