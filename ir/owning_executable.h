#pragma once
// An executable that keeps the function it was compiled from alive as long as
// itself: compiled code and engines may refer to the function (its vars,
// helper descriptors) while they run. Every call goes to the wrapped
// executable.

#include <memory>
#include <utility>

#include "ir/abi.h"
#include "ir/ir.h"

namespace gpurc::ir {

class OwningExecutable final : public Executable {
 public:
  OwningExecutable(std::shared_ptr<const Function> f, std::unique_ptr<Executable> exe)
      : f_(std::move(f)), exe_(std::move(exe)) {}
  size_t frame_bytes() const override { return exe_->frame_bytes(); }
  bool frame_needs_zero() const override { return exe_->frame_needs_zero(); }
  bool var_read_ranges(std::vector<std::pair<uint32_t, uint32_t>>& out) const override {
    return exe_->var_read_ranges(out);
  }
  RunStatus run(WarpContext& ctx) const override { return exe_->run(ctx); }
  bool has_warp_loop() const override { return exe_->has_warp_loop(); }
  RunStatus run_warps(WarpContext& ctx, WarpLoop& loop) const override {
    return exe_->run_warps(ctx, loop);
  }
  bool has_draw_loop() const override { return exe_->has_draw_loop(); }
  RunStatus run_draw_loop(WarpContext& ctx, DrawLoop& loop) const override {
    return exe_->run_draw_loop(ctx, loop);
  }
  bool draw_loop_code(const uint8_t*& code, const uint8_t*& warp_entry) const override {
    return exe_->draw_loop_code(code, warp_entry);
  }

 private:
  std::shared_ptr<const Function> f_;
  std::unique_ptr<Executable> exe_;
};

}  // namespace gpurc::ir
