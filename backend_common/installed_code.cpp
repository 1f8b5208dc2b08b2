#include "backend_common/installed_code.h"

namespace gpurc::backend {

bool InstalledCode::var_read_ranges(std::vector<std::pair<uint32_t, uint32_t>>& out) const {
  out = var_reads;
  return true;
}

std::vector<ir::Opcode> InstalledCode::helper_ops() const {
  std::vector<ir::Opcode> out;
  for (const auto& e : eval_ops) out.push_back(e->op.op);
  for (const auto& w : warp_ops) out.push_back(w->op);
  return out;
}

ir::RunStatus InstalledCode::run(ir::WarpContext& ctx) const {
  if (frame > 0 && ctx.frame == nullptr) {
    ctx.fault = ir::FaultKind::Unsupported;
    ctx.status = ir::RunStatus::Fault;
    return ctx.status;
  }
  auto fn = reinterpret_cast<uint32_t (*)(ir::WarpContext*)>(const_cast<uint8_t*>(mem.entry()));
  ctx.status = ir::RunStatus(fn(&ctx));
  return ctx.status;
}

namespace {

// The warp loop and the draw loop are entered the same way: their
// descriptors share first_warp / end_warp / warp, and a missing entry or
// frame faults as Unsupported before any warp runs.
template <class Loop>
ir::RunStatus enter_loop(const uint8_t* code, size_t entry, size_t frame,
                         ir::WarpContext& ctx, Loop& loop) {
  if (entry == InstalledCode::kNoWarpLoop || (frame > 0 && ctx.frame == nullptr)) {
    loop.warp = loop.first_warp;
    ctx.fault = ir::FaultKind::Unsupported;
    ctx.status = ir::RunStatus::Fault;
    return ctx.status;
  }
  if (loop.first_warp >= loop.end_warp) {
    loop.warp = loop.end_warp;
    ctx.status = ir::RunStatus::Done;
    return ctx.status;
  }
  auto fn = reinterpret_cast<uint32_t (*)(ir::WarpContext*, Loop*)>(
      const_cast<uint8_t*>(code + entry));
  ctx.status = ir::RunStatus(fn(&ctx, &loop));
  return ctx.status;
}

}  // namespace

ir::RunStatus InstalledCode::run_warps(ir::WarpContext& ctx, ir::WarpLoop& loop) const {
  return enter_loop(mem.entry(), warp_loop_entry, frame, ctx, loop);
}

ir::RunStatus InstalledCode::run_draw_loop(ir::WarpContext& ctx, ir::DrawLoop& loop) const {
  const uint8_t* stub = draw_loop_entry == kNoWarpLoop || !draw_stub ? nullptr : draw_stub();
  if (!stub) return enter_loop(mem.entry(), kNoWarpLoop, frame, ctx, loop);  // faults as Unsupported
  loop.warp_entry = mem.entry() + draw_loop_entry;
  return enter_loop(stub, 0, frame, ctx, loop);
}

bool InstalledCode::draw_loop_code(const uint8_t*& code, const uint8_t*& warp_entry) const {
  const uint8_t* stub = draw_loop_entry == kNoWarpLoop || !draw_stub ? nullptr : draw_stub();
  if (!stub) return false;
  code = stub;
  warp_entry = mem.entry() + draw_loop_entry;
  return true;
}

}  // namespace gpurc::backend
