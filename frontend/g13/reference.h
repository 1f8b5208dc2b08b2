// The G13 reference interpreter as an ir::Executable, so a launch runs it
// exactly as it runs a translation (the same warp scheduling, barriers,
// threadgroup memory and stacks): a SIMD-group's state is a ReferenceState in
// the warp's vars, its memory is ctx.memory (device, threadgroup and, at
// Space::Local lane * kStackStride + offset, its stacks).
#pragma once
#include <atomic>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "frontend/g13/interp.h"
#include "ir/abi.h"

namespace gpurc::g13 {

struct ReferenceState {
  static constexpr unsigned kMessageBytes = 1024;
  SimdGroup sg;
  // What stopped the SIMD-group (Fault or Error) and the interpreter's words
  // for it (naming the instruction and pc), NUL-terminated, cut at
  // kMessageBytes - 1 characters.
  StepResult::Kind stop = StepResult::Kind::Running;
  char message[kMessageBytes];
};
static_assert(std::is_trivially_destructible_v<ReferenceState>);

class ReferenceExecutable final : public ir::Executable {
 public:
  // `lane_instructions`: when given, run() steps one instruction at a time and
  // adds the active lanes of each (same watchdog as Interpreter::run, with
  // the message "watchdog: more than N instructions").
  explicit ReferenceExecutable(std::vector<uint8_t> code, std::atomic<uint64_t>* lane_instructions = nullptr);
  size_t frame_bytes() const override { return 0; }
  bool frame_needs_zero() const override { return false; }
  // What a launch must zero before its init: the bytes run() reads that the
  // init of a G13 launch does not write -- the registers (zero at the start)
  // and the special-register presence mask. The init writes the uniforms,
  // the launched lanes, exec, pc and the special registers it provides (or
  // the whole SimdGroup); the rest of ReferenceState is written before it is
  // read. So a launch zeroes 16 KiB per SIMD-group, not the whole ~50 KiB state.
  bool var_read_ranges(std::vector<std::pair<uint32_t, uint32_t>>& out) const override;
  // Runs the ReferenceState at ctx.vars (sg.pc, registers, exec: set by the
  // caller) for up to ctx.budget instructions. Barrier: resume with the same
  // context. Fault: ctx.fault and fault_lane/fault_addr as the interpreter
  // reports them, ReferenceState::stop = Fault and its message; an
  // interpreter error (an instruction it cannot run) is a Fault with
  // FaultKind::Unsupported and stop = Error.
  ir::RunStatus run(ir::WarpContext& ctx) const override;

 private:
  std::vector<uint8_t> code_;
  uint64_t id_;  // tells this program's per-thread interpreter (decode cache) from another's
  std::atomic<uint64_t>* lane_instructions_;
};

}  // namespace gpurc::g13
