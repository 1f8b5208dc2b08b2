// Kernel launch: a grid of blocks of threads, run as 32-lane warps on an
// Executable (the IR interpreter or a JIT tier).
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

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
  // Per-thread stacks: `stack_bytes` zeroed bytes per thread of a block,
  // served to each warp as Space::Local at lane * stack_stride + offset
  // (offset < stack_bytes; rt::StackMemory). 0 = none (Space::Local comes
  // from the launch's Memory). stack_stride >= stack_bytes (0: = stack_bytes).
  uint64_t stack_bytes = 0;
  uint64_t stack_stride = 0;
  uint32_t vars_bytes = 0;    // ir::Function::vars_bytes()
  const uint8_t* uniforms = nullptr;
  int64_t budget = int64_t(1) << 40;  // watchdog budget per warp
  // Counted barriers (runtime/barrier.h): the byte offset in the vars of the
  // 32-bit var that holds the descriptor of the barrier a warp stopped at.
  // kPlainBarriers: every barrier is the block-wide one (run_barrier_rounds).
  static constexpr uint32_t kPlainBarriers = ~0u;
  uint32_t barrier_var = kPlainBarriers;
  // Plain barriers: a block whose warps still wait after this many rounds
  // stops with LaunchFault::round_limit (an engine that reports barriers
  // forever is an error, not a hang). 0 = no limit.
  uint64_t max_rounds = 0;
  // The caller's promise that init writes every var byte finish reads,
  // unless the executable writes it: then only the bytes the executable
  // reads are zeroed even with a finish callback (see WarpInit).
  bool init_writes_finish_reads = false;
  // False: the hooks do not read WarpInfo::thread (it is left unspecified),
  // so the launch does not fill it per warp (a runner that derives lane
  // coordinates from WarpInfo::warp and the block shape itself).
  bool thread_coords = true;
  // Allows the warp-loop fast path (WarpHooks::lane_vars, docs/runtime.md
  // "Warp loop"); false runs every warp through the per-warp path (tests
  // compare the two).
  bool warp_loop = true;
  // With the warp loop: a launch whose blocks have only full warps (block
  // threads a multiple of 32) runs the warps of many blocks in one call of
  // the executable (docs/runtime.md, "Grid loop"); false: one call per block.
  // GPURC_GRID_LOOP=0 in the environment turns it off for the whole process
  // (a measurement switch).
  bool grid_loop = true;
};

struct LaunchFault {
  ir::FaultKind kind = ir::FaultKind::None;
  Dim3 block;
  uint32_t warp = 0, lane = 0, space = 0;
  uint64_t addr = 0, code = 0;
  // Counted barriers only: every remaining warp of the block waits at a
  // barrier that cannot complete (kind stays None; warp/lane are 0).
  bool deadlock = false;
  // Plain barriers with LaunchConfig::max_rounds: the block's warps still
  // waited at a barrier after that many rounds (kind stays None).
  bool round_limit = false;
  uint64_t rounds = 0;  // round_limit: the limit
  // What the engine or the caller's fault hook adds (e.g. a reference
  // interpreter names the instruction and pc); "" = nothing.
  std::string detail;
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
// init, vars are zeroed: all of them when there is a finish callback (unless
// LaunchConfig::init_writes_finish_reads) or the executable cannot tell what
// it reads (Executable::var_read_ranges), else only the bytes it may read. So
// init must only write vars, never read them.
// Calls for different warps may come from different threads at the same time;
// those for one warp come from one thread.
using WarpInit = std::function<void(const WarpInfo&, uint8_t* vars)>;
using WarpFinish = std::function<void(const WarpInfo&, const uint8_t* vars)>;

// What `init` writes, as data, for the warp loop (ir::WarpLoop): the lane
// vars (their lane_add / lane_keep arrays owned by the caller, alive for the
// launch) and per block the bases of its full warps. Given with
// WarpHooks::lane_vars, it is the caller's promise that for every warp with
// all 32 lanes launched, zeroing what the executable reads and then writing
// these vars leaves the vars as zeroing and `init` would.
struct LaneVarsPlan {
  std::vector<ir::LaneVarInit> vars;
  // out[(w - first) * vars.size() + i] = var i's base for warp w, for the
  // `count` warps first .. first + count - 1 of the block at `block`.
  std::function<void(const Dim3& block, uint64_t block_linear, uint32_t first, uint32_t count, uint64_t* out)> bases;
  // The split form, taken instead of `bases` when `block_bases` is given:
  // var i's base for full warp w of block b is warp_bases[w * vars.size()
  // + i] + out_b[i] (mod 2^64), where `warp_bases` holds every full warp of
  // a block (the same in every block) and block_bases(first, linear, count,
  // out) writes, for the `count` blocks from `first` on (x-major,
  // next_block), vars.size() values each. The launch then adds two words
  // per var and warp instead of calling back per block (sixteenth session).
  std::vector<uint64_t> warp_bases;
  std::function<void(const Dim3& first, uint64_t first_linear, uint32_t count, uint64_t* out)> block_bases;
};

// The block after `b` in x-major order in a grid of shape `grid`.
inline void next_block(Dim3& b, const Dim3& grid) {
  if (++b.x == grid.x) {
    b.x = 0;
    if (++b.y == grid.y) b.y = 0, ++b.z;
  }
}

// The per-warp parameters of a launch besides init/finish: all optional, and
// each called once per warp (never per lane), on the thread that runs the
// warp's block, so they add no cost when absent.
struct WarpHooks {
  WarpInit init;
  WarpFinish finish;
  // The guest-memory factory: after init, with the warp's context ready
  // (vars written, ctx.memory = `fallback`, the windows of `fallback`
  // filled), returns the memory the warp runs on. `fallback` is what launch
  // gives without a factory: the launch's Memory with the block's shared
  // memory (BlockMemory) and, with per-thread stacks, the warp's stacks in
  // front (StackMemory). A factory that serves spaces itself must fix the
  // windows of those spaces in `ctx` (or clear them: size 0). The returned
  // object must outlive the launch; launch never frees it.
  std::function<ir::GuestMemory*(const WarpInfo&, ir::GuestMemory& fallback, ir::WarpContext& ctx)> memory;
  // After the memory: may narrow ctx.entry_mask (a single-warp run from a
  // given state with any mask), or replace ctx.uniforms / ctx.budget.
  std::function<void(const WarpInfo&, ir::WarpContext& ctx)> setup;
  // A warp faulted: may add LaunchFault::detail (or read the warp's state
  // from ctx.vars / ctx.frame). Not called for deadlocks or round limits.
  std::function<void(const WarpInfo&, const ir::WarpContext& ctx, LaunchFault& fault)> fault;
  // The warp-loop fast path (docs/runtime.md, "Warp loop"): with it, a launch
  // whose executable has a warp loop and which needs nothing per warp from
  // C++ (no finish, memory or setup hook, no stacks, no counted barriers)
  // runs each block's full warps in one call of the executable, without
  // calling init for them. Null: every warp through init.
  const LaneVarsPlan* lane_vars = nullptr;
};

const char* fault_kind_name(ir::FaultKind k);

// Runs every block; blocks go to `pool` (null: the calling thread only). The
// warps of one block run on one thread, each until it returns Barrier, Done or
// Fault; barrier-waiting warps resume once every warp of the block has arrived
// at the barrier or finished. A fault stops the launch: blocks not yet started
// are skipped and the fault of the lowest faulting block is reported.
LaunchResult launch(const ir::Executable& exe, Memory& memory, const LaunchConfig& cfg, const WarpInit& init,
                    const WarpFinish& finish, ThreadPool* pool = nullptr);
// The same launch with every per-warp parameter (WarpHooks).
LaunchResult launch(const ir::Executable& exe, Memory& memory, const LaunchConfig& cfg, const WarpHooks& hooks,
                    ThreadPool* pool = nullptr);

// What one run of a warp within a block's barrier rounds ended with.
enum class WarpStep { Done, Barrier, Stop };
enum class RoundsEnd { Finished, Stopped, RoundLimit };

// Runs the `warps` warps of one block in barrier rounds: each round calls
// `step` for every unfinished warp, which runs it up to its next barrier or its
// end; a round ends with all of them at the barrier (or finished), so the next
// round passes it. Stops at the first `Stop` (a fault or error the step has
// recorded), or after `max_rounds` rounds (0: no limit). A template, and the
// finished set a bit mask up to 64 warps, so a block costs no allocation (with
// PICA200's one warp per block, a block is a warp).
template <class Step>
RoundsEnd run_barrier_rounds(uint32_t warps, Step&& step, uint64_t max_rounds = 0) {
  constexpr uint32_t kMaskWarps = 64;
  uint64_t done_mask = 0;
  std::vector<bool> done_big(warps > kMaskWarps ? warps : 0, false);
  auto done = [&](uint32_t w) { return warps > kMaskWarps ? bool(done_big[w]) : (done_mask >> w & 1) != 0; };
  auto set_done = [&](uint32_t w) {
    if (warps > kMaskWarps) done_big[w] = true;
    else done_mask |= uint64_t(1) << w;
  };
  for (uint64_t round = 0; max_rounds == 0 || round < max_rounds; ++round) {
    bool pending = false;
    for (uint32_t w = 0; w < warps; ++w) {
      if (done(w)) continue;
      switch (step(w)) {
        case WarpStep::Stop: return RoundsEnd::Stopped;
        case WarpStep::Done: set_done(w); break;
        case WarpStep::Barrier: pending = true; break;
      }
    }
    if (!pending) return RoundsEnd::Finished;
  }
  return RoundsEnd::RoundLimit;
}

// Lane coordinates of warp `warp` of a block of shape `block` (x-major).
WarpInfo warp_info(const Dim3& grid, const Dim3& block, uint64_t block_linear, uint32_t warp);

}  // namespace gpurc::rt
