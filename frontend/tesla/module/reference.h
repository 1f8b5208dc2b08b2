// The Tesla reference interpreter run by rt::launch: the interpreter core
// (frontend/tesla/interp.h, one warp up to its next stop) as an
// ir::Executable whose warp state (tesla::WarpState) lives in the launch's
// vars, with rt::launch's counted-barrier scheduler (the adapter writes each
// `bar`'s ir::barrier_word into the state's barrier var), s[] as the launch's
// shared memory and l[] as its per-thread stacks. Replay, bench, the public
// runners (launch.h), the fuzzer and the tests run the interpreter through
// here; there is no other warp scheduler.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "frontend/tesla/interp.h"
#include "ir/abi.h"

namespace gpurc::tesla {

// One launch's interpreter (immutable while it runs, thread-safe).
// ctx.vars is the warp's WarpState (vars_bytes = sizeof(WarpState)), its
// barrier var at offset 0 (LaunchConfig::barrier_var = kReferenceBarrierVar);
// the runner fills the state (init_warp, lanes, memory, block_steps) before
// the first run. A fault is ctx.fault (see reference_fault_kind) with the
// interpreter's kind and message in the state.
class ReferenceExecutable final : public ir::Executable {
 public:
  ReferenceExecutable(const std::vector<uint32_t>& code, const Target& target, const BlockConfig& cfg)
      : code_(code), target_(target), cfg_(cfg), cache_(code_, target_) {}
  size_t frame_bytes() const override { return 0; }
  bool frame_needs_zero() const override { return false; }
  // The runner's init writes every byte the interpreter reads.
  bool var_read_ranges(std::vector<std::pair<uint32_t, uint32_t>>& out) const override {
    out.clear();
    return true;
  }
  ir::RunStatus run(ir::WarpContext& ctx) const override;

 private:
  std::vector<uint32_t> code_;
  Target target_;
  BlockConfig cfg_;
  DecodeCache cache_;
};

constexpr uint32_t kReferenceBarrierVar = 0;  // offsetof(WarpState, barrier)

// The interpreter's FaultKind of a fault ReferenceExecutable reported
// (carried in WarpContext::fault_code / LaunchFault::code).
inline FaultKind reference_fault_kind(uint64_t code) { return FaultKind(code); }
const char* fault_kind_name(FaultKind k);  // "trap", "out-of-bounds", ... ("none")

// One block of the interpreter: the same API as before the interpreter ran
// through rt::launch (tests and the fuzzer use it). run() sets up the CUDA
// 1.x launch ABI (s[0x0..0xf] = u16 0, ntid.x/y/z, nctaid.x/y, ctaid.x/y,
// params from s[0x10], $r0 = tid.x | tid.y << 16 | tid.z << 26) for block
// cfg.block_idx; run_with starts the threads from the given registers, s[]
// from shared() (no ABI). After the run, thread(), shared(), local(), out()
// hold the end state (of warps that finished, or of the whole block at a
// fault; a deadlocked block's waiting warps keep their initial state).
class BlockInterpreter {
 public:
  BlockInterpreter(std::vector<uint32_t> code, Target target, BlockConfig cfg, LaunchMemory* mem);
  RunResult run();
  RunResult run_with(const std::vector<ThreadState>& initial);

  const ThreadState& thread(unsigned tid) const { return threads_[tid]; }
  unsigned threads() const { return nthreads_; }
  std::vector<uint8_t>& shared() { return shared_; }
  std::vector<uint8_t>& local(unsigned tid) { return local_[tid]; }
  std::vector<uint8_t>& out(unsigned tid) { return out_[tid]; }
  std::vector<uint8_t>& attr(unsigned tid) { return attr_[tid]; }

 private:
  std::vector<uint32_t> code_;
  Target target_;
  BlockConfig cfg_;
  LaunchMemory* mem_;
  std::vector<ThreadState> threads_;  // padded to whole warps
  unsigned nthreads_ = 0;
  std::vector<uint8_t> shared_;
  std::vector<std::vector<uint8_t>> local_, out_, attr_;
  RunResult execute(bool launch_abi);
};

// A grid of the interpreter through rt::launch (launch.h's reference engine):
// blocks of cfg.block threads, cfg.grid blocks, each with the launch ABI;
// a[] of global thread g from cfg.attr_in at g * attr_bytes; o[] of every
// thread returned in `outputs` (when `want_outputs`) at g * attr_bytes.
struct GridResult {
  RunResult result;           // of the lowest faulting block
  uint64_t fault_block = 0;   // x-major, when result faulted
  std::string error;          // rt::launch refused the configuration
  // With count_lane_instructions: guest instructions executed, summed over
  // the active lanes of each (WarpState::lane_instructions of every warp
  // that finished).
  uint64_t lane_instructions = 0;
};
GridResult run_reference_grid(const std::vector<uint32_t>& code, const Target& target, const BlockConfig& cfg,
                              LaunchMemory& mem, unsigned host_threads, bool want_outputs,
                              std::vector<uint8_t>& outputs, bool count_lane_instructions = false);

}  // namespace gpurc::tesla
