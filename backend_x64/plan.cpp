#include "backend_x64/plan.h"

namespace gpurc::x64 {

using namespace ir;

bool is_strip_op(const Inst& in) {
  if (in.op == Opcode::LoadVar || in.op == Opcode::StoreVar) return true;
  const OpInfo& info = op_info(in.op);
  return info.pure && !info.cross_lane && in.op != Opcode::Phi;
}

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
  for (ValueId v = 0; v < n; ++v) {
    const Inst& in = f.insts[v];
    if (in.block == kNoBlock) continue;
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
