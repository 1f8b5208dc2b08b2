#include "frontend/pica200/module/reference.h"

#include <cstring>

namespace gpurc::pica {

ir::RunStatus ReferenceExecutable::run(ir::WarpContext& ctx) const {
  ReferenceWarp w;
  std::memcpy(&w, ctx.vars, sizeof w);
  uint64_t local = 0;
  ir::RunStatus st = ir::RunStatus::Done;
  for (unsigned l = 0; l < ir::kWarpLanes && !observer_.stopped(); ++l) {
    if (!((ctx.entry_mask >> l) & 1)) continue;
    RunResult r = it_.run(entry_, w.states[l], w.gs ? &w.gs[l] : nullptr, budget_);
    local += r.steps;
    if (observer_.lane_done(w.first + l, r)) {
      // The interpreter's only budget fault is the instruction budget (interp.cpp).
      ctx.fault = r.steps >= budget_ ? ir::FaultKind::Watchdog : ir::FaultKind::Trap;
      ctx.fault_lane = l;
      st = ir::RunStatus::Fault;
      break;
    }
  }
  if (steps_) *steps_ += local;
  ctx.status = st;
  return st;
}

}  // namespace gpurc::pica
