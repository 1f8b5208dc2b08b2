// Kernel launch: a grid of blocks of threads, run as 32-lane warps on an
// Executable (the IR interpreter or a JIT tier).
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "ir/abi.h"
#include "runtime/memory.h"
#include "runtime/thread_pool.h"

namespace gpurc::rt {

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
  uint64_t count() const { return uint64_t(x) * y * z; }
  bool operator==(const Dim3&) const = default;
};

// What a caller's callbacks learn about one warp.
struct WarpInfo {
  Dim3 block;                 // block index in the grid
  uint64_t block_linear = 0;  // x-major linear block index
  uint32_t warp = 0;          // warp index within the block
  uint32_t lanes = 0;         // launched lanes (the low `lanes` bits of entry_mask)
  uint32_t entry_mask = 0;
  std::array<Dim3, ir::kWarpLanes> thread{};  // thread index within the block, per lane (valid for launched lanes)
  // x-major linear thread index within the block of lane l.
  uint64_t thread_linear(unsigned l) const { return uint64_t(warp) * ir::kWarpLanes + l; }
};

struct LaunchConfig {
  Dim3 grid, block;
  uint64_t shared_bytes = 0;  // per block, Space::Shared at address 0; 0 = no per-block shared memory
  uint32_t vars_bytes = 0;    // ir::Function::vars_bytes()
  const uint8_t* uniforms = nullptr;
  int64_t budget = int64_t(1) << 40;  // watchdog budget per warp
  // Counted barriers (runtime/barrier.h): the byte offset in the vars of the
  // 32-bit var that holds the descriptor of the barrier a warp stopped at.
  // kPlainBarriers: every barrier is the block-wide one (run_barrier_rounds).
  static constexpr uint32_t kPlainBarriers = ~0u;
  uint32_t barrier_var = kPlainBarriers;
};

struct LaunchFault {
  ir::FaultKind kind = ir::FaultKind::None;
  Dim3 block;
  uint32_t warp = 0, lane = 0, space = 0;
  uint64_t addr = 0, code = 0;
  // Counted barriers only: every remaining warp of the block waits at a
  // barrier that cannot complete (kind stays None; warp/lane are 0).
  bool deadlock = false;
  std::string describe() const;
};

// The fault a warp's run reported (kind, lane, space, address, code); the
// caller adds the block and warp it knows.
LaunchFault fault_of(const ir::WarpContext& ctx);

struct LaunchResult {
  std::optional<LaunchFault> fault;  // the launch stopped at this fault
  std::string error;                 // invalid configuration (nothing ran)
  uint64_t warps = 0;                // warps that ran to completion
  bool ok() const { return !fault && error.empty(); }
};

// Called for each warp before its first run and after it finished. Before
// init, vars are zeroed: all of them when there is a finish callback or the
// executable cannot tell what it reads (Executable::var_read_ranges), else
// only the bytes it may read. So init must only write vars, never read them.
// Calls for different warps may come from different threads at the same time;
// those for one warp come from one thread.
using WarpInit = std::function<void(const WarpInfo&, uint8_t* vars)>;
using WarpFinish = std::function<void(const WarpInfo&, const uint8_t* vars)>;

const char* fault_kind_name(ir::FaultKind k);

// Runs every block; blocks go to `pool` (null: the calling thread only). The
// warps of one block run on one thread, each until it returns Barrier, Done or
// Fault; barrier-waiting warps resume once every warp of the block has arrived
// at the barrier or finished. A fault stops the launch: blocks not yet started
// are skipped and the fault of the lowest faulting block is reported.
LaunchResult launch(const ir::Executable& exe, Memory& memory, const LaunchConfig& cfg, const WarpInit& init,
                    const WarpFinish& finish, ThreadPool* pool = nullptr);

// What one run of a warp within a block's barrier rounds ended with.
enum class WarpStep { Done, Barrier, Stop };
enum class RoundsEnd { Finished, Stopped, RoundLimit };

// Runs the `warps` warps of one block in barrier rounds: each round calls
// `step` for every unfinished warp, which runs it up to its next barrier or its
// end; a round ends with all of them at the barrier (or finished), so the next
// round passes it. Stops at the first `Stop` (a fault or error the step has
// recorded), or after `max_rounds` rounds (0: no limit).
RoundsEnd run_barrier_rounds(uint32_t warps, const std::function<WarpStep(uint32_t)>& step,
                             uint64_t max_rounds = 0);

// Lane coordinates of warp `warp` of a block of shape `block` (x-major).
WarpInfo warp_info(const Dim3& grid, const Dim3& block, uint64_t block_linear, uint32_t warp);

}  // namespace gpurc::rt
