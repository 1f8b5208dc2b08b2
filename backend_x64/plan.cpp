#include "backend_x64/plan.h"

namespace gpurc::x64 {

using namespace ir;

bool is_strip_op(const Inst& in) {
  if (in.op == Opcode::LoadVar || in.op == Opcode::StoreVar) return true;
  const OpInfo& info = op_info(in.op);
  return info.pure && !info.cross_lane && in.op != Opcode::Phi;
}

namespace {

// May operand `i` of `phi` (from predecessor B) be stored to the phi's slot
// where it is defined, instead of being copied on the edge B -> phi's block?
// Only when that edge is B's one way out (so the early write is the copy,
// done sooner) and nothing can see the phi's slot between the write and the
// edge: no instruction of B reads the phi, and no phi of the target takes it
// on that edge (the parallel copy must read the old value). The operand is a
// 32-bit strip op of B (a register at its definition; the launch mask is
// applied there, as the edge copy does).
bool direct_phi_write(const Function& f, const Plan& p, ValueId phi, size_t i) {
  const Inst& in = f.insts[phi];
  BlockId to = in.block;
  if (i >= p.preds[to].size()) return false;
  BlockId from = p.preds[to][i];
  ValueId a = in.args[i];
  const Inst& ai = f.insts[a];
  if (a == phi || ai.block != from || ai.op == Opcode::Undef || lane_bytes(ai.type) != 4 || lane_bytes(in.type) != 4)
    return false;
  if (p.segment_of[a] < 0 || !p.segments[p.segment_of[a]].strip) return false;
  if (f.blocks[from].succs.size() != 1) return false;
  for (ValueId u : f.blocks[from].insts)
    for (ValueId x : f.insts[u].args)
      if (x == phi) return false;
  for (ValueId q : f.blocks[to].insts) {
    const Inst& qi = f.insts[q];
    if (qi.op != Opcode::Phi) break;
    if (i < qi.args.size() && qi.args[i] == phi) return false;
  }
  return true;
}

}  // namespace

Plan make_plan(const Function& f) {
  Plan p;
  size_t n = f.insts.size();
  p.segment_of.assign(n, -1);
  p.position.assign(n, -1);
  p.last_use.assign(n, -1);
  p.escapes.assign(n, 0);
  p.block_segments.resize(f.blocks.size());
  // Same order as Function::compute_preds, which defines phi operand order.
  p.preds.resize(f.blocks.size());
  for (BlockId b = 0; b < f.blocks.size(); ++b)
    for (BlockId s : f.blocks[b].succs) p.preds[s].push_back(b);

  for (BlockId b = 0; b < f.blocks.size(); ++b) {
    int32_t open = -1;  // strip segment being filled
    for (ValueId v : f.blocks[b].insts) {
      const Inst& in = f.insts[v];
      if (in.op == Opcode::Phi || op_info(in.op).terminator) continue;
      if (is_strip_op(in)) {
        if (open < 0) {
          open = int32_t(p.segments.size());
          p.segments.push_back(Segment{b, true, {}});
          p.block_segments[b].push_back(uint32_t(open));
        }
        p.segment_of[v] = open;
        p.position[v] = int32_t(p.segments[open].ops.size());
        p.segments[open].ops.push_back(v);
      } else {
        open = -1;
        int32_t s = int32_t(p.segments.size());
        p.segments.push_back(Segment{b, false, {v}});
        p.block_segments[b].push_back(uint32_t(s));
        p.segment_of[v] = s;
        p.position[v] = 0;
      }
    }
  }
  p.direct_phis.resize(n);
  for (ValueId v = 0; v < n; ++v) {
    const Inst& in = f.insts[v];
    if (in.block == kNoBlock) continue;
    if (in.op == Opcode::Phi) {
      for (size_t i = 0; i < in.args.size(); ++i) {
        ValueId a = in.args[i];
        if (a >= n) continue;
        if (direct_phi_write(f, p, v, i)) p.direct_phis[a].push_back(v);
        else p.escapes[a] = 1;
      }
      continue;
    }
    for (ValueId a : in.args) {
      if (a >= n) continue;
      int32_t seg = p.segment_of[v];
      if (seg >= 0 && seg == p.segment_of[a] && p.segments[seg].strip) {
        if (p.position[v] > p.last_use[a]) p.last_use[a] = p.position[v];
      } else {
        p.escapes[a] = 1;
      }
    }
  }
  // Values of warp ops and phis are produced in the frame.
  for (ValueId v = 0; v < n; ++v) {
    const Inst& in = f.insts[v];
    if (in.block == kNoBlock) continue;
    if (in.op == Opcode::Phi) p.escapes[v] = 1;
  }
  return p;
}

}  // namespace gpurc::x64
