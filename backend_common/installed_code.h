// The part of a compiled function that no host tier shapes differently: its
// installed code, frame size, the vars it reads and the helper descriptors its
// code points at, and how it is entered. A tier derives from InstalledCode,
// fills these fields in its compile() and adds disassemble() (the listing is
// the host's own).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "backend_common/exec_memory.h"
#include "backend_common/helpers.h"
#include "backend_common/tier.h"

namespace gpurc::backend {

class InstalledCode : public CompiledCode {
 public:
  ExecMemory mem;
  size_t frame = 0;
  std::vector<std::pair<uint32_t, uint32_t>> var_reads;  // merged byte ranges of the vars load_var reads
  // Descriptors the code references by absolute address; they live as long as the code.
  std::vector<std::unique_ptr<rt::EvalOp>> eval_ops;
  std::vector<std::unique_ptr<rt::WarpOp>> warp_ops;

  size_t frame_bytes() const override { return frame; }
  bool frame_needs_zero() const override { return false; }  // the prologue zeroes what is read before written
  bool var_read_ranges(std::vector<std::pair<uint32_t, uint32_t>>& out) const override;
  size_t code_bytes() const override { return mem.size(); }
  const uint8_t* code() const override { return mem.entry(); }
  size_t lane_helper_ops() const override { return eval_ops.size(); }
  size_t warp_helper_ops() const override { return warp_ops.size(); }
  std::vector<ir::Opcode> helper_ops() const override;
  // Calls the code as `uint32_t entry(ir::WarpContext*)` (the host's C calling
  // convention); a frame-using function without a frame faults as Unsupported.
  ir::RunStatus run(ir::WarpContext& ctx) const override;
  // The warp loop's entry, `uint32_t loop(ir::WarpContext*, ir::WarpLoop*)`,
  // as a byte offset from mem.entry(); kNoWarpLoop: the tier emitted none
  // (barriers in the function, or a tier without one).
  static constexpr size_t kNoWarpLoop = ~size_t(0);
  size_t warp_loop_entry = kNoWarpLoop;
  bool has_warp_loop() const override { return warp_loop_entry != kNoWarpLoop; }
  ir::RunStatus run_warps(ir::WarpContext& ctx, ir::WarpLoop& loop) const override;
  // The draw loop: a stub shared by every function of a tier and MXCSR mode,
  // `uint32_t draw(ir::WarpContext*, ir::DrawLoop*)`, that enters this
  // function at its per-warp entry `draw_loop_entry` (a byte offset from
  // mem.entry(); kNoWarpLoop: none). `draw_stub` returns the stub's entry,
  // emitting it on its first call (null: it could not be made).
  size_t draw_loop_entry = kNoWarpLoop;
  using DrawStubGetter = const uint8_t* (*)();
  DrawStubGetter draw_stub = nullptr;
  bool has_draw_loop() const override {
    return draw_loop_entry != kNoWarpLoop && draw_stub && draw_stub() != nullptr;
  }
  ir::RunStatus run_draw_loop(ir::WarpContext& ctx, ir::DrawLoop& loop) const override;
  bool draw_loop_code(const uint8_t*& code, const uint8_t*& warp_entry) const override;
};

}  // namespace gpurc::backend
