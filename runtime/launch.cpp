#include "runtime/launch.h"

#include "runtime/barrier.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

namespace gpurc::rt {

const char* fault_kind_name(ir::FaultKind k) {
  switch (k) {
    case ir::FaultKind::None: return "none";
    case ir::FaultKind::Trap: return "trap";
    case ir::FaultKind::OutOfBounds: return "out-of-bounds";
    case ir::FaultKind::Watchdog: return "watchdog";
    case ir::FaultKind::Unsupported: return "unsupported";
    case ir::FaultKind::Misaligned: return "misaligned";
  }
  return "unknown";
}

std::string LaunchFault::describe() const {
  if (round_limit)
    return fmt::format("barrier round limit in block ({},{},{}): warps still wait at a barrier after {} rounds",
                       block.x, block.y, block.z, rounds);
  if (deadlock)
    return fmt::format("deadlock in block ({},{},{}): every remaining warp waits at a barrier that cannot complete",
                       block.x, block.y, block.z);
  std::string s = fmt::format("{} fault in block ({},{},{}) warp {} lane {}", fault_kind_name(kind), block.x, block.y,
                              block.z, warp, lane);
  if (kind == ir::FaultKind::OutOfBounds || kind == ir::FaultKind::Misaligned)
    s += fmt::format(" at {} address 0x{:x}", space < unsigned(ir::kNumSpaces) ? space_name(ir::Space(space)) : "?", addr);
  if (kind == ir::FaultKind::Trap) s += fmt::format(" (code {})", code);
  if (!detail.empty()) s += ": " + detail;
  return s;
}

LaunchFault fault_of(const ir::WarpContext& ctx) {
  LaunchFault f;
  f.kind = ctx.fault;
  f.lane = ctx.fault_lane;
  f.space = ctx.fault_space;
  f.addr = ctx.fault_addr;
  f.code = ctx.fault_code;
  return f;
}


namespace {

Dim3 block_coords(const Dim3& grid, uint64_t block_linear) {
  return Dim3{uint32_t(block_linear % grid.x), uint32_t(block_linear / grid.x % grid.y),
              uint32_t(block_linear / (uint64_t(grid.x) * grid.y))};
}

// Fills `w` in place (a launch reuses its WarpInfo objects) for the warp whose
// first thread has coordinates `t` in a block of `shape` at `coords`; sets `t`
// to the coordinates of the thread after its last lane (the next warp's first;
// in place rather than returned: a returned Dim3 went through the stack as
// two stores read back as one load, a store-forwarding stall per warp).
// thread[] past the launched lanes holds unspecified coordinates.
// Without `coords_too` thread[] is left as it is (LaunchConfig::thread_coords).
void fill_warp_info(WarpInfo& w, const Dim3& shape, const Dim3& coords, uint64_t block_linear, uint32_t warp, Dim3& t,
                    bool coords_too = true) {
  w.block_linear = block_linear;
  w.block = coords;
  w.warp = warp;
  uint64_t first = uint64_t(warp) * ir::kWarpLanes;
  w.lanes = uint32_t(std::min<uint64_t>(ir::kWarpLanes, shape.count() - first));
  w.entry_mask = w.lanes >= 32 ? 0xffffffffu : ((1u << w.lanes) - 1);
  if (!coords_too) return;
  if (t.x + w.lanes <= shape.x) {  // the warp lies in one row (block.x >= 32 and a multiple, typically)
    // All 32 entries as 96 words, period 12 (four lanes), in fixed-length
    // loops the compiler vectorises, then one library copy (the empty asm
    // keeps a known-size copy from becoming `rep movsq`, as in copy_object).
    static_assert(sizeof(Dim3) == 12 && sizeof(w.thread) == 12 * ir::kWarpLanes);
    uint32_t words[3 * ir::kWarpLanes];
    const uint32_t pattern[12] = {t.x, t.y, t.z, t.x + 1, t.y, t.z, t.x + 2, t.y, t.z, t.x + 3, t.y, t.z};
    for (unsigned q = 0; q < ir::kWarpLanes / 4; ++q)
      for (unsigned k = 0; k < 12; ++k) words[12 * q + k] = pattern[k] + (k % 3 == 0 ? 4 * q : 0);
    size_t n = sizeof words;
    asm("" : "+r"(n));
    std::memcpy(static_cast<void*>(w.thread.data()), words, n);
    t.x += w.lanes;
    if (t.x == shape.x) {
      t.x = 0;
      if (++t.y == shape.y) t.y = 0, ++t.z;
    }
    return;
  }
  for (unsigned l = 0; l < w.lanes; ++l) {
    w.thread[l] = t;
    if (++t.x == shape.x) {
      t.x = 0;
      if (++t.y == shape.y) t.y = 0, ++t.z;
    }
  }
}

}  // namespace

WarpInfo warp_info(const Dim3& grid, const Dim3& block, uint64_t block_linear, uint32_t warp) {
  WarpInfo w;
  // The first lane's coordinates by division, the others by counting on.
  uint64_t first = uint64_t(warp) * ir::kWarpLanes;
  Dim3 t{uint32_t(first % block.x), uint32_t(first / block.x % block.y), uint32_t(first / (uint64_t(block.x) * block.y))};
  fill_warp_info(w, block, block_coords(grid, block_linear), block_linear, warp, t);
  return w;
}

namespace {

// Per host thread, the block storage of the previous block is kept for the
// next one (up to kReuseBytes): no allocation and no fresh pages per block.
// So are the warps' WarpInfo / WarpContext records.
constexpr uint64_t kReuseBytes = uint64_t(16) << 20;

struct WarpSlot {
  WarpInfo info;
  ir::WarpContext ctx;
  BarrierLanes barrier_seen;  // counted barriers: the barrier var at the previous stop
  StackMemory stack;          // per-thread stacks (LaunchConfig::stack_bytes)
};

class BlockStorage {
 public:
  uint8_t* get(uint64_t bytes) {
    Cache& c = cache();
    if (bytes > kReuseBytes || c.in_use) {  // too large to keep, or a nested launch on this thread
      own_ = allocate_aligned(bytes, false);
      return own_.get();
    }
    c.in_use = took_ = true;
    if (c.bytes < bytes) {
      c.p.reset();
      c.p = allocate_aligned(bytes, false);
      c.bytes = bytes;
    }
    return c.p.get();
  }
  ~BlockStorage() {
    if (took_) cache().in_use = false;
  }
  // `n` words of scratch (contents unspecified), with the storage's reuse rule.
  uint32_t* scratch(size_t n) {
    std::vector<uint32_t>& v = took_ ? cache().scratch : own_scratch_;
    if (v.size() < n) v.resize(n);
    return v.data();
  }
  // `n` warp records (contents unspecified), with the storage's reuse rule.
  WarpSlot* slots(uint32_t n) {
    std::vector<WarpSlot>& v = took_ ? cache().slots : own_slots_;
    if (v.size() < n) v.resize(n);
    return v.data();
  }

 private:
  struct Cache {
    std::unique_ptr<uint8_t[], Buffer::AlignedFree> p;
    uint64_t bytes = 0;
    bool in_use = false;
    std::vector<WarpSlot> slots;
    std::vector<uint32_t> scratch;
  };
  static Cache& cache() {
    thread_local Cache c;
    return c;
  }
  std::unique_ptr<uint8_t[], Buffer::AlignedFree> own_;
  std::vector<WarpSlot> own_slots_;
  std::vector<uint32_t> own_scratch_;
  bool took_ = false;
};

// What must be zeroed in each warp's vars before init: everything, or (when
// `known`) only the ranges the executable may read.
struct VarsZeroing {
  bool known = false;
  std::vector<std::pair<uint32_t, uint32_t>> ranges;
};

// Nobody but the executable reads the vars when there is no finish callback
// (init only writes), so bytes it never reads need not start at zero.
VarsZeroing vars_zeroing(const ir::Executable& exe, const LaunchConfig& cfg, const WarpFinish& finish) {
  VarsZeroing z;
  if ((finish && !cfg.init_writes_finish_reads) || !exe.var_read_ranges(z.ranges)) {
    z.ranges.clear();
    return z;
  }
  z.known = true;
  for (auto& [lo, hi] : z.ranges) {
    lo = std::min(lo, cfg.vars_bytes);
    hi = std::min(std::max(lo, hi), cfg.vars_bytes);
  }
  return z;
}

// The warp loop of a launch (WarpHooks::lane_vars), decided once: empty
// `use` when the launch takes the per-warp path.
struct LoopPlan {
  bool use = false;
  std::vector<uint32_t> zero;  // (offset, bytes) pairs: what is read and no lane var writes, 32-byte granules
  // The lane vars the executable reads, and their indices in the caller's
  // LaneVarsPlan::vars: a lane var whose bytes the code never loads is not
  // written (nothing but the code reads the vars of a loop's warp).
  std::vector<ir::LaneVarInit> vars;
  std::vector<uint32_t> keep;
  bool keep_all = true;  // keep is 0 .. vars.size() - 1
};

LoopPlan loop_plan(const ir::Executable& exe, const LaunchConfig& cfg, const WarpHooks& hooks,
                   const VarsZeroing& zeroing) {
  LoopPlan p;
  const LaneVarsPlan* lv = hooks.lane_vars;
  if (!lv || !(lv->bases || lv->block_bases) || !cfg.warp_loop || !exe.has_warp_loop() || exe.frame_needs_zero() ||
      hooks.finish || hooks.memory || hooks.setup || cfg.stack_bytes ||
      cfg.barrier_var != LaunchConfig::kPlainBarriers || !zeroing.known)
    return p;
  // The read ranges minus the lane vars' bytes, worked out on intervals
  // (per byte over a vars area of tens of KiB cost microseconds per launch).
  std::vector<std::pair<uint32_t, uint32_t>> lane_bytes;
  for (uint32_t i = 0; i < lv->vars.size(); ++i) {
    const ir::LaneVarInit& v = lv->vars[i];
    const uint64_t end = uint64_t(v.offset) + uint64_t(v.width) * ir::kWarpLanes;
    if ((v.width != 4 && v.width != 8) || end > cfg.vars_bytes || !v.lane_add) return p;
    bool read = false;
    for (const auto& [lo, hi] : zeroing.ranges) read = read || (lo < end && v.offset < hi);
    if (!read) continue;
    lane_bytes.emplace_back(v.offset, uint32_t(end));
    p.vars.push_back(v);
    p.keep.push_back(i);
  }
  p.keep_all = p.keep.size() == lv->vars.size();
  if (lv->block_bases && lv->warp_bases.size() < uint64_t(cfg.block.count() / ir::kWarpLanes) * lv->vars.size())
    return p;  // a split form without every full warp's part: the per-warp path
  std::sort(lane_bytes.begin(), lane_bytes.end());
  // The read bytes no lane var writes, widened to whole 32-byte granules
  // (zeroing a little more is harmless: the lane vars are written after
  // it, other bytes the code does not read), as intervals: a scan over
  // every granule of the vars cost microseconds per launch for G13's 16 KiB.
  std::vector<std::pair<uint32_t, uint32_t>> pieces;
  auto piece = [&](uint32_t lo, uint32_t hi) {
    if (lo < hi) pieces.emplace_back(lo / 32 * 32, (hi + 31) / 32 * 32);
  };
  for (auto [lo, hi] : zeroing.ranges) {
    for (const auto& [vlo, vhi] : lane_bytes) {  // cut [lo, hi) around each lane var, in offset order
      if (lo >= hi) break;
      if (vhi <= lo || vlo >= hi) continue;
      piece(lo, std::min(hi, vlo));
      lo = std::max(lo, vhi);
    }
    piece(lo, hi);
  }
  std::sort(pieces.begin(), pieces.end());
  for (const auto& [g0, g1] : pieces) {
    if (!p.zero.empty() && p.zero[p.zero.size() - 2] + p.zero.back() >= g0) {
      const uint32_t start = p.zero[p.zero.size() - 2];
      p.zero.back() = std::max(p.zero.back(), g1 - start);
    } else {
      p.zero.insert(p.zero.end(), {g0, g1 - g0});
    }
  }
  p.use = true;
  return p;
}

// Per host thread: the lane vars' bases of a block's full warps.
uint64_t* loop_bases(size_t n) {
  thread_local std::vector<uint64_t> v;
  if (v.size() < n) v.resize(n);
  return v.data();
}

// Per host thread: the caller's per-block values before they become bases.
uint64_t* block_scratch(size_t n) {
  thread_local std::vector<uint64_t> v;
  if (v.size() < n) v.resize(n);
  return v.data();
}

// The bases (ir::WarpLoop::bases, the kept lane vars of `loop` only) of
// full warps 0 .. warps - 1 of each of the `count` blocks from `first`
// (linear index `linear`), block after block.
void fill_bases(const LaneVarsPlan& lv, const LoopPlan& loop, const Dim3& grid, Dim3 first, uint64_t linear,
                uint32_t count, uint32_t warps, uint64_t* out) {
  const size_t all = lv.vars.size(), kept = loop.keep.size();
  if (kept == 0) return;
  if (lv.block_bases) {
    uint64_t* blk = block_scratch(all * count);
    lv.block_bases(first, linear, count, blk);
    const uint64_t* wb = lv.warp_bases.data();
    for (uint32_t b = 0; b < count; ++b, blk += all) {
      if (loop.keep_all) {
        for (uint32_t w = 0; w < warps; ++w)
          for (size_t i = 0; i < all; ++i) *out++ = wb[w * all + i] + blk[i];
        continue;
      }
      for (uint32_t w = 0; w < warps; ++w)
        for (size_t k = 0; k < kept; ++k) *out++ = wb[w * all + loop.keep[k]] + blk[loop.keep[k]];
    }
    return;
  }
  uint64_t* tmp = loop.keep_all ? nullptr : block_scratch(all * warps);
  for (uint32_t b = 0; b < count; ++b, ++linear, next_block(first, grid)) {
    if (loop.keep_all) {
      lv.bases(first, linear, 0, warps, out);
      out += size_t(warps) * all;
      continue;
    }
    lv.bases(first, linear, 0, warps, tmp);
    for (uint32_t w = 0; w < warps; ++w)
      for (size_t k = 0; k < kept; ++k) *out++ = tmp[w * all + loop.keep[k]];
  }
}

// dst = src (trivially copyable) through the library's memcpy: a struct
// copy of known size is inlined as `rep movsq` under generic tuning, whose
// start-up cost was a good part of launching a small warp. The empty asm
// hides the size from the compiler.
template <class T>
void copy_object(T& dst, const T& src) {
  static_assert(std::is_trivially_copyable_v<T>);
  size_t n = sizeof(T);
  asm("" : "+r"(n));
  std::memcpy(static_cast<void*>(&dst), &src, n);
}

// Runs one block to completion or to its first fault.
std::optional<LaunchFault> run_block(const ir::Executable& exe, Memory& memory, const LaunchConfig& cfg,
                                     const VarsZeroing& zeroing, const LoopPlan& loop, const WarpHooks& hooks,
                                     uint64_t block_linear, uint64_t& warps_done) {
  const WarpInit& init = hooks.init;
  const WarpFinish& finish = hooks.finish;
  uint64_t threads = cfg.block.count();
  uint32_t nwarps = uint32_t((threads + ir::kWarpLanes - 1) / ir::kWarpLanes);
  size_t vars_stride = align64(cfg.vars_bytes), frame_stride = align64(exe.frame_bytes());
  size_t per_warp = vars_stride + frame_stride;
  const uint64_t warp_stacks = align64(cfg.stack_bytes * ir::kWarpLanes);
  // Vars, shared memory and stacks start zeroed; frames only when the engine needs it.
  BlockStorage block_storage;
  uint8_t* storage = block_storage.get(uint64_t(per_warp) * nwarps + cfg.shared_bytes + warp_stacks * nwarps);
  uint8_t* shared = storage + per_warp * nwarps;
  uint8_t* stacks = shared + cfg.shared_bytes;
  // (A call even for no bytes: measurable when a block is a few hundred ns.)
  if (const uint64_t n = cfg.shared_bytes + warp_stacks * nwarps) std::memset(shared, 0, n);
  bool zero_frames = exe.frame_needs_zero();
  BlockMemory view(memory, cfg.shared_bytes ? shared : nullptr, cfg.shared_bytes);

  ir::WarpContext first;  // the fields every warp of the block starts with
  first.uniforms = cfg.uniforms;
  first.budget = cfg.budget;
  first.memory = &view;
  view.fill_windows(first);
  WarpSlot* warps = block_storage.slots(nwarps);
  const Dim3 coords = block_coords(cfg.grid, block_linear);
  Dim3 next_thread{0, 0, 0};  // coordinates of each warp's first thread, counted on from warp to warp
  // Sets up warp w (in warp order: coordinates are counted on) with the
  // vars and frame of storage slot `slot`.
  auto prepare = [&](uint32_t w, uint32_t slot) {
    WarpSlot& s = warps[w];
    fill_warp_info(s.info, cfg.block, coords, block_linear, w, next_thread, cfg.thread_coords);
    copy_object(s.ctx, first);
    s.ctx.vars = storage + per_warp * slot;
    s.ctx.frame = s.ctx.vars + vars_stride;
    if (zeroing.known) {
      for (const auto& [lo, hi] : zeroing.ranges) std::memset(s.ctx.vars + lo, 0, hi - lo);
      if (zero_frames) std::memset(s.ctx.frame, 0, frame_stride);
    } else {
      std::memset(s.ctx.vars, 0, zero_frames ? per_warp : vars_stride);
    }
    // The barrier var starts at zero, as take_barrier_word's record of it.
    if (cfg.barrier_var != LaunchConfig::kPlainBarriers) {
      std::memset(s.ctx.vars + cfg.barrier_var, 0, 4 * ir::kWarpLanes);
      s.barrier_seen = BarrierLanes{};
    }
    s.ctx.entry_mask = s.info.entry_mask;
    if (cfg.stack_bytes) {
      s.stack.reset(&view, stacks + warp_stacks * w, cfg.stack_bytes, cfg.stack_stride);
      s.ctx.memory = &s.stack;
      // Space::Local is the stacks: one inline window when they are
      // contiguous in the guest too (stride = size), else the slow path.
      const int local = int(ir::Space::Local);
      for (ir::MemWindow& x : s.ctx.extra_windows[local]) x = ir::MemWindow{};
      s.ctx.windows[local] = ir::MemWindow{};
      if (cfg.stack_stride == 0 || cfg.stack_stride == cfg.stack_bytes)
        s.ctx.windows[local] = ir::MemWindow{0, cfg.stack_bytes * ir::kWarpLanes, stacks + warp_stacks * w};
    }
    if (init) init(s.info, s.ctx.vars);
    if (hooks.memory) s.ctx.memory = hooks.memory(s.info, *s.ctx.memory, s.ctx);
    if (hooks.setup) hooks.setup(s.info, s.ctx);
  };
  std::optional<LaunchFault> fault;
  // One run of warp w up to its next stop: a fault is recorded and stops the block.
  auto run_warp = [&](uint32_t w) {
    WarpSlot& s = warps[w];
    ir::RunStatus st = exe.run(s.ctx);
    if (st == ir::RunStatus::Fault) {
      fault = fault_of(s.ctx);
      fault->block = s.info.block;
      fault->warp = s.info.warp;
      if (hooks.fault) hooks.fault(s.info, s.ctx, *fault);
      return WarpStep::Stop;
    }
    if (st == ir::RunStatus::Barrier) return WarpStep::Barrier;
    ++warps_done;
    if (finish) finish(s.info, s.ctx.vars);
    return WarpStep::Done;
  };
  if (cfg.barrier_var == LaunchConfig::kPlainBarriers) {
    // The first round runs warp by warp right after its set-up, and a warp
    // that finished in it gives its vars and frame to the next warp: code
    // without barriers runs every warp of the block in one slot that stays
    // in the cache, instead of setting up all the block's warps' state (tens
    // of KiB each for large register files) before the first one runs. The
    // order of runs is that of run_barrier_rounds (round 0 in warp order,
    // then the waiting warps round by round).
    uint32_t* free_slots = block_storage.scratch(2 * size_t(nwarps));
    uint32_t* waiting = free_slots + nwarps;
    uint32_t nfree = 0, nwaiting = 0, next_slot = 0;
    uint32_t w0 = 0;  // the first warp the per-warp path runs
    if (loop.use && threads >= ir::kWarpLanes) {
      // The warp loop: the block's full warps in one call, in slot 0.
      const uint32_t full = uint32_t(threads / ir::kWarpLanes);
      const LaneVarsPlan& lv = *hooks.lane_vars;
      WarpSlot& s = warps[0];
      copy_object(s.ctx, first);
      s.ctx.vars = storage;
      s.ctx.frame = storage + vars_stride;
      s.ctx.entry_mask = 0xffffffffu;
      uint64_t* bases = loop_bases(size_t(full) * loop.vars.size());
      fill_bases(lv, loop, cfg.grid, coords, block_linear, 1, full, bases);
      ir::WarpLoop run{};
      run.vars = loop.vars.data();
      run.nvars = uint32_t(loop.vars.size());
      run.nzero = uint32_t(loop.zero.size() / 2);
      run.zero = loop.zero.data();
      run.bases = bases;
      run.first_warp = 0;
      run.end_warp = full;
      run.budget = cfg.budget;
      ir::RunStatus st = exe.run_warps(s.ctx, run);
      warps_done += run.warp;
      if (st != ir::RunStatus::Done) {
        // The warp that stopped (a fault; the loop has no barriers): reported
        // as the per-warp path reports it; later warps do not run.
        const uint64_t t = uint64_t(run.warp) * ir::kWarpLanes;
        next_thread = Dim3{uint32_t(t % cfg.block.x), uint32_t(t / cfg.block.x % cfg.block.y),
                           uint32_t(t / (uint64_t(cfg.block.x) * cfg.block.y))};
        fill_warp_info(s.info, cfg.block, coords, block_linear, run.warp, next_thread, cfg.thread_coords);
        fault = fault_of(s.ctx);
        if (st != ir::RunStatus::Fault) fault->kind = ir::FaultKind::Unsupported;  // a barrier the plan excluded
        fault->block = s.info.block;
        fault->warp = s.info.warp;
        if (hooks.fault) hooks.fault(s.info, s.ctx, *fault);
        return fault;
      }
      if (full == nwarps) return fault;
      w0 = full;
      const uint64_t t = uint64_t(full) * ir::kWarpLanes;
      next_thread = Dim3{uint32_t(t % cfg.block.x), uint32_t(t / cfg.block.x % cfg.block.y),
                         uint32_t(t / (uint64_t(cfg.block.x) * cfg.block.y))};
    }
    for (uint32_t w = w0; w < nwarps; ++w) {
      const uint32_t slot = nfree ? free_slots[--nfree] : next_slot++;
      prepare(w, slot);
      switch (run_warp(w)) {
        case WarpStep::Stop: return fault;
        case WarpStep::Done: free_slots[nfree++] = slot; break;
        case WarpStep::Barrier: waiting[nwaiting++] = w; break;
      }
    }
    if (nwaiting == 0) return fault;
    RoundsEnd end = cfg.max_rounds == 1
                        ? RoundsEnd::RoundLimit
                        : run_barrier_rounds(nwaiting, [&](uint32_t i) { return run_warp(waiting[i]); },
                                             cfg.max_rounds ? cfg.max_rounds - 1 : 0);
    if (end == RoundsEnd::RoundLimit) {
      fault = LaunchFault{};
      fault->round_limit = true;
      fault->rounds = cfg.max_rounds;
      fault->block = coords;
    }
    return fault;
  }
  for (uint32_t w = 0; w < nwarps; ++w) prepare(w, w);
  CountedEnd end = run_counted_barriers(nwarps, [&](uint32_t w) {
    CountedStep r{run_warp(w), 0};
    if (r.step != WarpStep::Barrier) return r;
    WarpSlot& s = warps[w];
    r.word = take_barrier_word(s.ctx.vars + cfg.barrier_var, s.barrier_seen);
    if (r.word == 0) {  // the code stopped at a barrier without saying which: not a counted-barrier translation
      fault = LaunchFault{};
      fault->kind = ir::FaultKind::Unsupported;
      fault->block = s.info.block;
      fault->warp = s.info.warp;
      r.step = WarpStep::Stop;
    }
    return r;
  });
  if (end == CountedEnd::Deadlock) {
    fault = LaunchFault{};
    fault->deadlock = true;
    fault->block = coords;
  }
  return fault;
}

// GPURC_GRID_LOOP=0: no grid loop in this process (read once).
bool grid_loop_enabled() {
  static const bool yes = [] {
    const char* e = std::getenv("GPURC_GRID_LOOP");
    return !(e && *e == '0');
  }();
  return yes;
}

// The grid loop's chunk: at most this many warps per call of the executable
// (their bases stay in the L1 cache; a chunk's set-up is spread over them).
constexpr uint64_t kGridChunkWarps = 256;

// Runs blocks first .. first + count - 1 of a launch whose blocks are all
// full warps, in one call of the executable's warp loop: one context, one
// vars/frame slot and one shared-memory area for all of them (the loop zeroes
// the shared memory before each block's first warp). A fault is reported as
// run_block reports it (block, warp, lane; hooks.fault with the warp's
// WarpInfo); the blocks after it do not run.
std::optional<LaunchFault> run_grid_chunk(const ir::Executable& exe, Memory& memory, const LaunchConfig& cfg,
                                          const LoopPlan& loop, const WarpHooks& hooks, uint64_t first,
                                          uint32_t count, uint64_t& warps_done) {
  const uint32_t nwarps = uint32_t(cfg.block.count() / ir::kWarpLanes);
  const size_t vars_stride = align64(cfg.vars_bytes), frame_stride = align64(exe.frame_bytes());
  BlockStorage block_storage;
  uint8_t* storage = block_storage.get(vars_stride + frame_stride + cfg.shared_bytes);
  uint8_t* shared = storage + vars_stride + frame_stride;
  BlockMemory view(memory, cfg.shared_bytes ? shared : nullptr, cfg.shared_bytes);
  ir::WarpContext ctx;
  ctx.uniforms = cfg.uniforms;
  ctx.budget = cfg.budget;
  ctx.memory = &view;
  view.fill_windows(ctx);
  ctx.vars = storage;
  ctx.frame = storage + vars_stride;
  ctx.entry_mask = 0xffffffffu;
  uint64_t* bases = loop_bases(size_t(nwarps) * loop.vars.size() * count);
  fill_bases(*hooks.lane_vars, loop, cfg.grid, block_coords(cfg.grid, first), first, count, nwarps, bases);
  ir::WarpLoop run{};
  run.vars = loop.vars.data();
  run.nvars = uint32_t(loop.vars.size());
  run.nzero = uint32_t(loop.zero.size() / 2);
  run.zero = loop.zero.data();
  run.bases = bases;
  run.first_warp = 0;
  run.end_warp = nwarps * count;
  run.budget = cfg.budget;
  run.block_warps = nwarps;
  run.shared = cfg.shared_bytes ? shared : nullptr;
  run.shared_bytes = cfg.shared_bytes;
  const ir::RunStatus st = exe.run_warps(ctx, run);
  warps_done += run.warp;
  if (st == ir::RunStatus::Done) return std::nullopt;
  // The warp that stopped (a fault; the loop has no barriers), as the
  // per-warp path reports it; later warps do not run.
  const uint64_t block_linear = first + run.warp / nwarps;
  const uint32_t w = run.warp % nwarps;
  const uint64_t t = uint64_t(w) * ir::kWarpLanes;
  Dim3 next{uint32_t(t % cfg.block.x), uint32_t(t / cfg.block.x % cfg.block.y),
            uint32_t(t / (uint64_t(cfg.block.x) * cfg.block.y))};
  WarpInfo info;
  fill_warp_info(info, cfg.block, block_coords(cfg.grid, block_linear), block_linear, w, next, cfg.thread_coords);
  LaunchFault fault = fault_of(ctx);
  if (st != ir::RunStatus::Fault) fault.kind = ir::FaultKind::Unsupported;  // a barrier the plan excluded
  fault.block = info.block;
  fault.warp = info.warp;
  if (hooks.fault) hooks.fault(info, ctx, fault);
  return fault;
}

}  // namespace

LaunchResult launch(const ir::Executable& exe, Memory& memory, const LaunchConfig& cfg, const WarpInit& init,
                    const WarpFinish& finish, ThreadPool* pool) {
  WarpHooks hooks;
  hooks.init = init;
  hooks.finish = finish;
  return launch(exe, memory, cfg, hooks, pool);
}

LaunchResult launch(const ir::Executable& exe, Memory& memory, const LaunchConfig& cfg, const WarpHooks& hooks,
                    ThreadPool* pool) {
  LaunchResult r;
  for (uint32_t d : {cfg.grid.x, cfg.grid.y, cfg.grid.z, cfg.block.x, cfg.block.y, cfg.block.z})
    if (d == 0) {
      r.error = "launch: every grid and block dimension must be at least 1";
      return r;
    }
  if (cfg.block.count() > (uint64_t(1) << 20)) {
    r.error = "launch: a block has more than 2^20 threads";
    return r;
  }
  if (cfg.grid.count() > (uint64_t(1) << 32)) {
    r.error = "launch: the grid has more than 2^32 blocks";
    return r;
  }
  if (cfg.shared_bytes > (uint64_t(1) << 30)) {
    r.error = "launch: shared_bytes is larger than 1 GiB";
    return r;
  }
  if (cfg.stack_bytes > (uint64_t(1) << 24) || (cfg.stack_stride && cfg.stack_stride < cfg.stack_bytes)) {
    r.error = "launch: stack_bytes is larger than 16 MiB or than stack_stride";
    return r;
  }
  if (cfg.barrier_var != LaunchConfig::kPlainBarriers &&
      uint64_t(cfg.barrier_var) + 4 * ir::kWarpLanes > cfg.vars_bytes) {
    r.error = "launch: the barrier descriptor var lies outside vars_bytes";
    return r;
  }
  uint64_t blocks = cfg.grid.count();
  {
    // What the blocks that run at once allocate besides the buffers: shared
    // memory, per-thread stacks and one context per warp.
    const uint64_t warps = (cfg.block.count() + ir::kWarpLanes - 1) / ir::kWarpLanes;
    const uint64_t stride = std::max(cfg.stack_stride, cfg.stack_bytes);
    const uint64_t per_block = cfg.shared_bytes + (cfg.stack_bytes ? stride * warps * ir::kWarpLanes : 0) +
                               warps * (uint64_t(cfg.vars_bytes) + 256);
    const uint64_t at_once = std::min<uint64_t>(blocks, pool && pool->threads() > 1 ? pool->threads() : 1);
    const uint64_t need = memory.total_bytes() + per_block * at_once;  // < 2^63: each term is bounded above
    // (The message only when it is needed: formatting it cost about a
    // tenth of a microsecond per launch.)
    if (need > memory_limit()) {
      r.error = check_memory(need, fmt::format("launch: the buffers and {} block(s) of {} threads at once", at_once,
                                               cfg.block.count()));
      return r;
    }
  }
  const VarsZeroing zeroing = vars_zeroing(exe, cfg, hooks.finish);
  const LoopPlan loop = loop_plan(exe, cfg, hooks, zeroing);
  // The grid loop: blocks of full warps only, many blocks per call.
  const bool grid = loop.use && cfg.grid_loop && cfg.block.count() % ir::kWarpLanes == 0 && grid_loop_enabled();
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> warps_done{0};
  std::mutex fault_lock;
  std::optional<LaunchFault> fault;
  uint64_t fault_block = std::numeric_limits<uint64_t>::max();
  auto one = [&](size_t b) {
    if (stop.load(std::memory_order_relaxed)) return;
    uint64_t done = 0;
    std::optional<LaunchFault> f = run_block(exe, memory, cfg, zeroing, loop, hooks, b, done);
    warps_done += done;
    if (f) {
      std::lock_guard<std::mutex> g(fault_lock);
      if (b < fault_block) {
        fault_block = b;
        fault = f;
      }
      stop = true;
    }
  };
  const bool parallel = pool && pool->threads() > 1 && blocks > 1;
  if (grid) {
    // Chunks of consecutive blocks, in block order on one thread; split
    // over the pool by block ranges (about four chunks per thread, so the
    // threads stay busy to the end). A faulting chunk reports the fault of
    // its first faulting block; the lowest over chunks is kept.
    const uint64_t nwarps = cfg.block.count() / ir::kWarpLanes;
    uint64_t per_chunk = std::max<uint64_t>(1, kGridChunkWarps / nwarps);
    if (parallel) per_chunk = std::min(per_chunk, std::max<uint64_t>(1, blocks / (4 * uint64_t(pool->threads()))));
    const uint64_t chunks = (blocks + per_chunk - 1) / per_chunk;
    auto chunk = [&](size_t c) {
      if (stop.load(std::memory_order_relaxed)) return;
      const uint64_t b0 = uint64_t(c) * per_chunk;
      const uint32_t n = uint32_t(std::min(per_chunk, blocks - b0));
      uint64_t done = 0;
      std::optional<LaunchFault> f = run_grid_chunk(exe, memory, cfg, loop, hooks, b0, n, done);
      warps_done += done;
      if (f) {
        const uint64_t b = f->block.x + uint64_t(cfg.grid.x) * (f->block.y + uint64_t(cfg.grid.y) * f->block.z);
        std::lock_guard<std::mutex> g(fault_lock);
        if (b < fault_block) {
          fault_block = b;
          fault = f;
        }
        stop = true;
      }
    };
    if (parallel && chunks > 1) pool->parallel_for(size_t(chunks), chunk);
    else
      for (uint64_t c = 0; c < chunks && !stop; ++c) chunk(size_t(c));
  } else if (parallel) {
    pool->parallel_for(size_t(blocks), one);
  } else {
    for (uint64_t b = 0; b < blocks && !stop; ++b) one(size_t(b));
  }
  r.fault = fault;
  r.warps = warps_done;
  return r;
}

}  // namespace gpurc::rt
