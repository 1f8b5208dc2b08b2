// sink_out_of_loops: a pure value computed inside a loop whose every use is in
// one block outside that loop moves into that block, so it is computed once
// after the loop instead of on every iteration.
//
// Why this is exact: an SSA use outside a loop sees the value of the last
// iteration that ran, and so do the operands when the value is recomputed at
// the use (the defining block dominates the using block, so every operand is
// available there with the same last-iteration value). Only the place of the
// computation changes, never the lanes it covers: pure ops compute every lane.
//
// Why it matters: translators write guest state that is live at exit on
// every iteration. Tesla's `add $c1 ...` counter computes four condition
// flags each iteration although the loop branch reads one of them and the
// others are only stored to $c at the end; G13's exec-mask bookkeeping and
// PICA200's flags have the same shape.
#include <algorithm>

#include "ir/pass_util.h"
#include "ir/passes.h"

namespace gpurc::ir {

using namespace passutil;

namespace {

// Ops worth moving and safe to move: pure, not a phi (its place is fixed),
// not a constant or undef (free in every backend), and not cross-lane
// (conservative: such ops read other lanes, which is exact after a move too,
// but backends treat them as warp ops with their own scheduling).
bool movable(const Inst& in) {
  const OpInfo& info = op_info(in.op);
  if (!info.pure || info.cross_lane || info.terminator) return false;
  return in.op != Opcode::Phi && in.op != Opcode::Const && in.op != Opcode::Undef;
}

}  // namespace

void sink_out_of_loops(Function& f) {
  if (f.blocks.empty()) return;
  const size_t n = f.blocks.size();
  f.compute_preds();
  const std::vector<BlockId> rpo = reverse_post_order(f);
  const std::vector<BlockId> idom = immediate_dominators(f, rpo);

  // Natural loops: for every back edge latch -> header (the header dominates
  // the latch) the blocks that reach the latch without passing the header.
  // loops_of[b] lists the headers of the loops holding b. Irreducible cycles
  // have no back edge in this sense and are left alone (no block counts as
  // inside them, so nothing sinks out of them).
  std::vector<uint8_t> reachable(n);
  for (BlockId b = 0; b < n; ++b) reachable[b] = idom[b] != kNoBlock;
  std::vector<std::vector<BlockId>> loops_of(n);
  for (BlockId latch : rpo)
    for (BlockId h : f.blocks[latch].succs) {
      if (idom[h] == kNoBlock || !dominates(idom, h, latch)) continue;
      std::vector<uint8_t> in_body(n, 0);
      in_body[h] = 1;
      mark_loop_body(f, latch, in_body, &reachable);
      for (BlockId b = 0; b < n; ++b)
        if (in_body[b] && std::find(loops_of[b].begin(), loops_of[b].end(), h) == loops_of[b].end())
          loops_of[b].push_back(h);
    }
  // Without loops nothing moves (most shaders): no use lists to build.
  bool any_loop = false;
  for (BlockId b = 0; b < n && !any_loop; ++b) any_loop = !loops_of[b].empty();
  if (!any_loop) return;
  // True when `to` lies outside at least one loop that holds `from`, and
  // inside no loop that does not hold `from`: it then runs less often.
  auto runs_less_often = [&](BlockId from, BlockId to) {
    const auto& lf = loops_of[from];
    const auto& lt = loops_of[to];
    for (BlockId h : lt)
      if (std::find(lf.begin(), lf.end(), h) == lf.end()) return false;
    return lt.size() < lf.size();
  };

  // Users of every value: (block, is_phi_use). A value used by a phi is never
  // moved (the phi reads it at the end of a predecessor, not in its own block).
  std::vector<std::vector<ValueId>> users(f.insts.size());
  for (auto& b : f.blocks)
    for (ValueId v : b.insts)
      for (ValueId a : f.insts[v].args) users[a].push_back(v);

  // Walk each block backwards so that a chain (x = ..; y = op x) moves y
  // first, after which x's only users may be outside the loop as well.
  // Blocks in reverse RPO: a use in a later block is decided first.
  for (auto it = rpo.rbegin(); it != rpo.rend(); ++it) {
    BlockId b = *it;
    if (loops_of[b].empty()) continue;
    auto& insts = f.blocks[b].insts;
    for (size_t i = insts.size(); i-- > 0;) {
      ValueId v = insts[i];
      if (!movable(f.insts[v]) || users[v].empty()) continue;
      BlockId target = kNoBlock;
      bool ok = true;
      for (ValueId u : users[v]) {
        const Inst& ui = f.insts[u];
        if (ui.op == Opcode::Phi || ui.block == b || (target != kNoBlock && ui.block != target)) {
          ok = false;
          break;
        }
        target = ui.block;
      }
      if (!ok || target == kNoBlock || !runs_less_often(b, target)) continue;
      // Place it before its first user in the target (after the phis).
      auto& dst = f.blocks[target].insts;
      size_t at = 0;
      while (at < dst.size() && f.insts[dst[at]].op == Opcode::Phi) ++at;
      size_t first_use = dst.size();
      for (size_t k = at; k < dst.size(); ++k)
        if (std::find(users[v].begin(), users[v].end(), dst[k]) != users[v].end()) {
          first_use = k;
          break;
        }
      dst.insert(dst.begin() + first_use, v);
      insts.erase(insts.begin() + i);
      f.insts[v].block = target;
    }
  }
}

}  // namespace gpurc::ir
