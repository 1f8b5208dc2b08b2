// analyze_uniformity: which values are the same in all 32 lanes.
//
// Optimistic fixpoint: every value starts uniform except the varying sources,
// and a value becomes varying when one of its inputs is; iterating until
// nothing changes also handles loops (a loop counter phi(0, i+1) stays
// uniform). Rules:
//  - uniform: const, undef (the engine may pick any value, so it picks one
//    for all lanes), load_uniform, ballot/any/all/reduce/broadcast results
//    over the whole warp (cluster width 32); a load from Space::Const with
//    AddrClass::Uniform and a uniform address.
//  - varying: get_var, load_var (per-lane guest state), entry_mask, lane_id,
//    shuffle, quad_shuffle, scans, other loads, atomics, and every clustered
//    op narrower than the warp (each cluster has its own result).
//  - vars: pre-SSA input is analysed on an SSA copy, so a value computed
//    from a var (a loop counter in a var) is uniform when every definition
//    reaching it is (a var read before any write reads per-lane guest state).
//  - a pure op is uniform when all its operands are.
//  - a phi is uniform when all its operands are and its block is not a join
//    of a divergent branch: reachable from the branch before the branch's
//    immediate post-dominator, or that post-dominator (there values from
//    different paths, or from different iterations of a loop the branch
//    leaves, meet even when each is uniform). A counted loop before or after
//    a divergent if keeps a uniform counter.
//  - cond_br / switch: the branch is uniform (Inst::uniform on the
//    terminator) exactly when its condition value is uniform. Inside a
//    divergent region this still means all *active* lanes agree, which is
//    all the lowering needs: it keeps such a branch under the region's mask.
#include <algorithm>

#include "ir/pass_util.h"
#include "ir/passes.h"

namespace gpurc::ir {

namespace {

bool always_uniform(const Function& f, const Inst& in) {
  switch (in.op) {
    case Opcode::Const: case Opcode::Undef: case Opcode::LoadUniform:
      return true;
    case Opcode::Ballot: case Opcode::Any: case Opcode::All: case Opcode::Reduce:
    case Opcode::Broadcast:
      return whole_warp_cluster(in.imm);
    default:
      return false;
  }
}

bool is_branch_op(Opcode op) { return op == Opcode::CondBr || op == Opcode::Switch; }

bool always_varying(const Inst& in) {
  if (op_info(in.op).clustered && !whole_warp_cluster(in.imm)) return true;
  switch (in.op) {
    case Opcode::GetVar: case Opcode::LoadVar: case Opcode::EntryMask: case Opcode::LaneId:
    case Opcode::Shuffle: case Opcode::QuadShuffle: case Opcode::ScanIncl: case Opcode::ScanExcl:
    case Opcode::AtomicRmw: case Opcode::AtomicCas:
      return true;
    default:
      return false;
  }
}

}  // namespace

namespace {

// Blocks where lanes that a divergent branch in block h sent different ways
// can meet: every block reachable from h before h's immediate post-dominator
// p (a loop around h included: lanes may be in different iterations), and p.
// A phi there mixes per-lane paths; anywhere else the lanes arrive together.
void mark_divergent_joins(const Function& f, BlockId h, const std::vector<BlockId>& ipdom,
                          std::vector<uint8_t>& joins) {
  const BlockId exit = BlockId(f.blocks.size());
  const BlockId p = ipdom[h];
  if (p != exit) joins[p] = 1;
  std::vector<uint8_t> seen(f.blocks.size(), 0);
  std::vector<BlockId> work;
  for (BlockId s : f.blocks[h].succs)
    if (s != p && !seen[s]) seen[s] = 1, work.push_back(s);
  while (!work.empty()) {
    BlockId b = work.back();
    work.pop_back();
    joins[b] = 1;
    for (BlockId s : f.blocks[b].succs)
      if (s != p && !seen[s]) seen[s] = 1, work.push_back(s);
  }
}

// Whether value `in` (not always varying, not always uniform) is uniform
// given its operands' flags `uni` and the divergent joins. (Inlined: it runs
// per value and round of the fixed point.)
[[gnu::always_inline]] inline bool uniform_by_rule(const Function& f, const Inst& in, const std::vector<uint8_t>& uni,
                     const std::vector<uint8_t>& joins) {
  if (in.op == Opcode::Load)
    return mem_space(in.attr) == Space::Const && mem_class(in.attr) == AddrClass::Uniform && !in.args.empty() &&
           uni[in.args[0]];
  bool u = true;
  if (in.op == Opcode::Phi) {
    u = in.block < f.blocks.size() && !joins[in.block];
  } else {
    const OpInfo& info = op_info(in.op);
    if (!info.pure && !info.terminator) return false;  // other effects (set_var, store, ...) produce no value
  }
  for (ValueId a : in.args) u = u && uni[a];
  return u;
}

std::vector<uint8_t> compute_uniformity_ssa(const Function& f) {
  std::vector<uint8_t> uni(f.insts.size(), 0);
  // One block without a branch or phi (a straight-line shader after
  // merge_straight_blocks): every operand is defined before its use in block
  // order, so one walk in that order gives the fixpoint the rounds below
  // reach (a value's operands are final when it is visited).
  if (f.blocks.size() == 1) {
    const std::vector<ValueId>& insts = f.blocks[0].insts;
    bool straight = true;
    for (ValueId v : insts) straight = straight && f.insts[v].op != Opcode::Phi && !is_branch_op(f.insts[v].op);
    if (straight) {
      const std::vector<uint8_t> no_joins(1, 0);
      for (ValueId v : insts) {
        const Inst& in = f.insts[v];
        uni[v] = !always_varying(in) && (always_uniform(f, in) || uniform_by_rule(f, in, uni, no_joins));
      }
      return uni;
    }
  }
  std::vector<ValueId> live;
  for (BlockId b = 0; b < f.blocks.size(); ++b)
    for (ValueId v : f.blocks[b].insts) live.push_back(v);
  for (ValueId v : live) uni[v] = !always_varying(f.insts[v]);
  // Phis at the joins of divergent branches are varying (found as branches
  // turn divergent; the set only grows). Past a size limit every phi of a
  // function with a divergent branch is, which is always sound.
  std::vector<uint8_t> joins(f.blocks.size(), 0), div_seen(f.blocks.size(), 0);
  std::vector<BlockId> ipdom;
  size_t join_work = 0;
  bool all_joins = false;
  for (bool changed = true; changed;) {
    changed = false;
    for (ValueId v : live) {
      const Inst& in = f.insts[v];
      if ((in.op == Opcode::CondBr || in.op == Opcode::Switch) && !in.args.empty() && !uni[in.args[0]] &&
          in.block < f.blocks.size() && !div_seen[in.block] && !all_joins) {
        div_seen[in.block] = 1;
        join_work += f.blocks.size();
        if (join_work > (size_t(1) << 22)) {
          all_joins = true;
          std::fill(joins.begin(), joins.end(), 1);
          continue;
        }
        if (ipdom.empty()) ipdom = passutil::immediate_post_dominators(f);
        mark_divergent_joins(f, in.block, ipdom, joins);
      }
    }
    for (ValueId v : live) {
      if (!uni[v]) continue;
      const Inst& in = f.insts[v];
      if (always_uniform(f, in) || uniform_by_rule(f, in, uni, joins)) continue;
      uni[v] = 0;
      changed = true;
    }
  }
  return uni;
}

}  // namespace

std::vector<uint8_t> compute_uniformity(const Function& f) {
  bool has_vars = false;
  for (auto& b : f.blocks)
    for (ValueId v : b.insts)
      has_vars |= f.insts[v].op == Opcode::GetVar || f.insts[v].op == Opcode::SetVar;
  if (!has_vars) return compute_uniformity_ssa(f);
  // Var-level dataflow by way of SSA: analyse an SSA copy (construct_ssa
  // keeps the ValueId of every instruction that is not a var access) and map
  // the result back. A get_var itself stays varying.
  Function g = f;
  construct_ssa(g);
  auto ug = compute_uniformity_ssa(g);
  std::vector<uint8_t> uni(f.insts.size(), 0);
  for (ValueId v = 0; v < f.insts.size(); ++v)
    uni[v] = f.insts[v].op != Opcode::GetVar && v < ug.size() && g.insts[v].block != kNoBlock && ug[v];
  return uni;
}

void analyze_uniformity(Function& f) {
  auto uni = compute_uniformity(f);
  for (ValueId v = 0; v < f.insts.size(); ++v) f.insts[v].uniform = uni[v] != 0;
}

bool is_lowered(const Function& f) {
  auto uni = compute_uniformity(f);
  for (BlockId b = 0; b < f.blocks.size(); ++b) {
    ValueId t = f.terminator(b);
    if (t == kNoValue) continue;
    const Inst& in = f.insts[t];
    if ((in.op == Opcode::CondBr || in.op == Opcode::Switch) && (in.args.empty() || !uni[in.args[0]]))
      return false;
  }
  return true;
}

}  // namespace gpurc::ir
