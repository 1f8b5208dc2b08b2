// insert_loop_budget: every cycle of the CFG gets a `budget` op, so a guest
// that never terminates runs out of its watchdog budget and faults instead of
// hanging the host. A cycle always contains a retreating edge of a DFS (for a
// reducible CFG these are exactly the back edges to natural loop headers), so
// a budget at the target of every retreating edge covers irreducible cycles
// too. imm = instructions in the loop body (blocks that reach a latch without
// passing the header, plus the header), at least 1: the cost of one iteration.
// A header that already holds a budget op gets the cost added to it, so a loop
// whose frontend counted it already still pays one budget op per iteration.
#include <algorithm>

#include "ir/pass_util.h"
#include "ir/passes.h"

namespace gpurc::ir {

using namespace passutil;

void insert_loop_budget(Function& f) {
  if (f.blocks.empty()) return;
  const size_t n = f.blocks.size();
  f.compute_preds();
  // Iterative DFS; state 1 = on stack, 2 = finished.
  std::vector<uint8_t> state(n, 0);
  std::vector<std::vector<BlockId>> latches(n);
  std::vector<std::pair<BlockId, size_t>> stack{{0, 0}};
  state[0] = 1;
  while (!stack.empty()) {
    auto& [b, i] = stack.back();
    if (i < f.blocks[b].succs.size()) {
      BlockId s = f.blocks[b].succs[i++];
      if (state[s] == 1)
        latches[s].push_back(b);
      else if (state[s] == 0) {
        state[s] = 1;
        stack.push_back({s, 0});
      }
    } else {
      state[b] = 2;
      stack.pop_back();
    }
  }
  std::vector<uint8_t> reached(n);
  for (BlockId b = 0; b < n; ++b) reached[b] = state[b] != 0;
  for (BlockId h = 0; h < n; ++h) {
    if (latches[h].empty()) continue;
    std::vector<uint8_t> in_body(n, 0);
    in_body[h] = 1;
    for (BlockId l : latches[h]) mark_loop_body(f, l, in_body, &reached);
    uint64_t cost = 0;
    for (BlockId b = 0; b < n; ++b)
      if (in_body[b]) cost += f.blocks[b].insts.size();
    auto& ins = f.blocks[h].insts;
    // A header that already counts (a frontend's own budget) gets this cost
    // added to that op: one budget op per iteration, the same total count.
    auto have = std::find_if(ins.begin(), ins.end(), [&](ValueId v) { return f.insts[v].op == Opcode::Budget; });
    if (have != ins.end()) {
      f.insts[*have].imm += std::max<uint64_t>(cost, 1);
      continue;
    }
    ValueId bud = make_inst(f, Opcode::Budget, Type::Void, {}, h, 0, std::max<uint64_t>(cost, 1));
    size_t at = 0;
    while (at < ins.size() && f.insts[ins[at]].op == Opcode::Phi) ++at;
    ins.insert(ins.begin() + at, bud);
  }
}

}  // namespace gpurc::ir
