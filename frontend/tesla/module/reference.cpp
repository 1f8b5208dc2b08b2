// The Tesla reference interpreter through rt::launch (reference.h).
#include "frontend/tesla/module/reference.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>

#include "ir/barrier_word.h"
#include "runtime/launch.h"
#include "runtime/thread_pool.h"

namespace gpurc::tesla {

const char* fault_kind_name(FaultKind k) {
  switch (k) {
    case FaultKind::None: return "none";
    case FaultKind::Decode: return "decode";
    case FaultKind::Trap: return "trap";
    case FaultKind::OutOfBounds: return "out-of-bounds";
    case FaultKind::Unsupported: return "unsupported";
    case FaultKind::Watchdog: return "watchdog";
    case FaultKind::Stack: return "stack";
  }
  return "unknown";
}

ir::RunStatus ReferenceExecutable::run(ir::WarpContext& ctx) const {
  WarpState& w = *reinterpret_cast<WarpState*>(ctx.vars);
  const WarpProgram p{code_, target_, cfg_, cache_};
  switch (run_warp(p, w)) {
    case WarpStop::Done: return ctx.status = ir::RunStatus::Done;
    case WarpStop::Barrier:
      // As translated code does (launch_abi.h "barrier"): the descriptor for
      // the counted-barrier scheduler. Lane 0 holds it, marked as the only
      // kind, so the scheduler takes it without comparing stop counts.
      w.barrier[0] = w.barrier_word | ir::kBarrierOneKind;
      return ctx.status = ir::RunStatus::Barrier;
    case WarpStop::Fault: break;
  }
  switch (w.fault) {
    case FaultKind::Trap: ctx.fault = ir::FaultKind::Trap; break;
    case FaultKind::OutOfBounds: ctx.fault = ir::FaultKind::OutOfBounds; break;
    case FaultKind::Watchdog: ctx.fault = ir::FaultKind::Watchdog; break;
    default: ctx.fault = ir::FaultKind::Unsupported; break;
  }
  ctx.fault_code = uint64_t(w.fault);
  ctx.fault_lane = 0;
  ctx.fault_addr = w.pc;
  return ctx.status = ir::RunStatus::Fault;
}

namespace {

constexpr unsigned kLanes = ir::kWarpLanes;

// What the warps of the block a host thread is running share: the block's
// instruction count (watchdog, clock), its warps' states (to read the block
// at a fault) and its a[]/o[]. One per host thread, reused from block to
// block (launch runs a block's warps on one thread, blocks one after another).
struct BlockScratch {
  uint64_t steps = 0;
  uint32_t finished = 0;
  std::vector<WarpState*> warps;
  std::vector<uint8_t> attrs, outs;  // thread t's (padded to whole warps) at t * attr_bytes
};

BlockScratch& scratch() {
  thread_local BlockScratch s;
  return s;
}

// One launch of the interpreter: the parts both runners share.
struct Run {
  const std::vector<uint32_t>& code;
  const Target& target;
  BlockConfig cfg;             // smem, lmem, attr_bytes, regs, entry, max_steps, header values
  LaunchMemory* mem = nullptr;
  rt::Dim3 grid, block;        // the launch's shape
  uint64_t shared_bytes = 0;
  bool launch_abi = true;      // ABI header and tid registers; else `initial` and `shared_init`
  const std::vector<ThreadState>* initial = nullptr;
  const std::vector<uint8_t>* shared_init = nullptr;
  bool single_block = false;   // the header's ctaid is cfg.block_idx (else the launch's block)
  bool attrs = true;           // serve a[] / o[]
  unsigned host_threads = 1;
  std::function<void(const rt::WarpInfo&, const WarpState&, BlockScratch&)> warp_finished;
  std::function<void(const rt::WarpInfo&, BlockScratch&)> block_faulted;
  std::atomic<uint64_t>* lane_instructions = nullptr;  // adds each finished warp's WarpState::lane_instructions
};

struct RunEnd {
  rt::LaunchResult launch;
  RunResult result;
};

RunEnd launch_reference(const Run& R) {
  RunEnd end;
  ReferenceExecutable exe(R.code, R.target, R.cfg);
  const uint64_t per_block = R.block.count();
  const uint32_t nwarps = uint32_t((per_block + kLanes - 1) / kLanes);
  const uint32_t regs = std::min(R.cfg.regs, 128u);
  const uint64_t attr_bytes = R.cfg.attr_bytes;

  rt::LaunchConfig lc;
  lc.grid = R.grid;
  lc.block = R.block;
  lc.shared_bytes = R.shared_bytes;
  lc.stack_bytes = R.cfg.lmem;  // l[]: the launch's per-thread stacks, zeroed per block
  lc.stack_stride = R.cfg.lmem;
  lc.vars_bytes = uint32_t(sizeof(WarpState));
  lc.barrier_var = kReferenceBarrierVar;
  lc.init_writes_finish_reads = true;

  rt::WarpHooks hooks;
  hooks.init = [&](const rt::WarpInfo& info, uint8_t* vars) {
    WarpState& w = *reinterpret_cast<WarpState*>(vars);
    BlockScratch& s = scratch();
    if (info.warp == 0) {
      s.steps = 0;
      s.finished = 0;
      s.warps.assign(nwarps, nullptr);
      if (R.attrs) {
        // a[] of this block's threads, o[] zero; the lanes past the block's
        // threads have their own (zero) a[] and o[] (quadon may run them).
        const size_t bytes = size_t(nwarps) * kLanes * attr_bytes;
        s.attrs.assign(bytes, 0);
        s.outs.assign(bytes, 0);
        const std::vector<uint8_t>& in = R.cfg.attr_in;
        const size_t from = size_t(info.block_linear * per_block * attr_bytes);
        if (from < in.size())
          std::memcpy(s.attrs.data(), in.data() + from, std::min<size_t>(in.size() - from, per_block * attr_bytes));
      }
    }
    s.warps[info.warp] = &w;
    init_warp(w, info.warp, info.entry_mask, R.cfg.entry);
    w.block_steps = &s.steps;
    if (!R.launch_abi) {
      for (unsigned l = 0; l < kLanes; ++l) {
        const uint64_t t = info.thread_linear(l);
        w.th[l] = t < R.initial->size() ? (*R.initial)[t] : ThreadState{};
      }
      return;
    }
    // The launch ABI: $r0 = tid, every other register the code may read zero
    // (registers at or above `regs` read 0 whatever they hold).
    for (unsigned l = 0; l < kLanes; ++l) {
      ThreadState& th = w.th[l];
      std::memset(th.r, 0, regs * sizeof th.r[0]);
      std::memset(th.a, 0, sizeof th.a);
      std::memset(th.c, 0, sizeof th.c);
      th.exited = false;
      if (l < info.lanes && regs > 0) th.r[0] = info.thread[l].x | info.thread[l].y << 16 | info.thread[l].z << 26;
    }
  };
  hooks.memory = [&](const rt::WarpInfo& info, ir::GuestMemory& fallback, ir::WarpContext& ctx) -> ir::GuestMemory* {
    WarpState& w = *reinterpret_cast<WarpState*>(ctx.vars);
    BlockScratch& s = scratch();
    const ir::MemWindow& sh = ctx.windows[int(ir::Space::Shared)];
    const ir::MemWindow& lo = ctx.windows[int(ir::Space::Local)];
    w.memory.mem = R.mem;
    w.memory.shared = sh.size ? sh.host : nullptr;
    w.memory.shared_bytes = sh.size;
    w.memory.local = lo.size ? lo.host : nullptr;
    w.memory.local_stride = R.cfg.lmem;
    w.memory.attr = R.attrs ? s.attrs.data() + size_t(info.warp) * kLanes * attr_bytes : nullptr;
    w.memory.out = R.attrs ? s.outs.data() + size_t(info.warp) * kLanes * attr_bytes : nullptr;
    w.memory.attr_stride = attr_bytes;
    if (info.warp == 0 && sh.size) {  // s[] of the block, before any warp runs
      if (!R.launch_abi) {
        std::memcpy(sh.host, R.shared_init->data(), std::min<size_t>(sh.size, R.shared_init->size()));
      } else {
        if (!R.cfg.shared_image.empty())
          std::memcpy(sh.host, R.cfg.shared_image.data(), std::min<size_t>(sh.size, R.cfg.shared_image.size()));
        const unsigned cx = R.single_block ? R.cfg.block_idx[0] : info.block.x;
        const unsigned cy = R.single_block ? R.cfg.block_idx[1] : info.block.y;
        const uint16_t hdr[8] = {0, uint16_t(R.cfg.block[0]), uint16_t(R.cfg.block[1]), uint16_t(R.cfg.block[2]),
                                 uint16_t(R.cfg.grid[0]), uint16_t(R.cfg.grid[1]), uint16_t(cx), uint16_t(cy)};
        std::memcpy(sh.host, hdr, std::min<size_t>(16, sh.size));
        if (!R.cfg.params.empty() && sh.size > 0x10)
          std::memcpy(sh.host + 0x10, R.cfg.params.data(), std::min<size_t>(R.cfg.params.size(), sh.size - 0x10));
      }
    }
    return &fallback;
  };
  if (R.warp_finished || R.lane_instructions)
    hooks.finish = [&](const rt::WarpInfo& info, const uint8_t* vars) {
      BlockScratch& s = scratch();
      ++s.finished;
      const WarpState& w = *reinterpret_cast<const WarpState*>(vars);
      if (R.lane_instructions) R.lane_instructions->fetch_add(w.lane_instructions, std::memory_order_relaxed);
      if (R.warp_finished) R.warp_finished(info, w, s);
    };
  hooks.fault = [&](const rt::WarpInfo& info, const ir::WarpContext& ctx, rt::LaunchFault& f) {
    const WarpState& w = *reinterpret_cast<const WarpState*>(ctx.vars);
    f.detail = w.message;
    if (R.block_faulted) R.block_faulted(info, scratch());
  };
  rt::ThreadPool* pool = R.host_threads == 1 ? nullptr : &rt::ThreadPool::shared(R.host_threads);
  rt::Memory no_buffers;  // every access goes to the state's WarpMemory (g[]/c[]: R.mem)
  end.launch = rt::launch(exe, no_buffers, lc, hooks, pool);
  if (const auto& f = end.launch.fault) {
    if (f->deadlock) {
      end.result.fault = FaultKind::Stack;
      end.result.message = "deadlock: every remaining warp waits at a barrier that cannot complete";
    } else {
      end.result.fault = reference_fault_kind(f->code);
      end.result.message = f->detail;
      end.result.pc = uint32_t(f->addr);
    }
  }
  return end;
}

// Copies warp `w`'s lanes that exist (< count) out of the block.
void copy_warp(const WarpState& w, unsigned warp, const BlockConfig& cfg, std::vector<ThreadState>& threads,
               std::vector<std::vector<uint8_t>>& locals, std::vector<std::vector<uint8_t>>& outs,
               const BlockScratch& s) {
  for (unsigned l = 0; l < kLanes; ++l) {
    const size_t t = size_t(warp) * kLanes + l;
    if (t >= threads.size()) break;
    threads[t] = w.th[l];
    if (w.memory.local && cfg.lmem) std::memcpy(locals[t].data(), w.memory.local + l * w.memory.local_stride, cfg.lmem);
    if (!s.outs.empty()) std::memcpy(outs[t].data(), s.outs.data() + t * cfg.attr_bytes, cfg.attr_bytes);
  }
}

}  // namespace

BlockInterpreter::BlockInterpreter(std::vector<uint32_t> code, Target target, BlockConfig cfg, LaunchMemory* mem)
    : code_(std::move(code)), target_(target), cfg_(std::move(cfg)), mem_(mem) {}

RunResult BlockInterpreter::run() {
  unsigned n = cfg_.block[0] * cfg_.block[1] * cfg_.block[2];
  threads_.assign(n, ThreadState{});
  unsigned t = 0;
  for (unsigned z = 0; z < cfg_.block[2]; ++z)
    for (unsigned y = 0; y < cfg_.block[1]; ++y)
      for (unsigned x = 0; x < cfg_.block[0]; ++x) threads_[t++].r[0] = x | y << 16 | z << 26;
  uint32_t need = 0x10 + uint32_t(cfg_.params.size());
  if (cfg_.smem < need) cfg_.smem = need;
  shared_.assign(cfg_.smem, 0);
  return execute(true);
}

RunResult BlockInterpreter::run_with(const std::vector<ThreadState>& initial) {
  threads_ = initial;
  if (shared_.size() < cfg_.smem) shared_.resize(cfg_.smem, 0);
  return execute(false);
}

RunResult BlockInterpreter::execute(bool launch_abi) {
  nthreads_ = unsigned(threads_.size());
  // Whole warps of state: quadon and quad/cross-lane reads may touch lanes
  // that were never launched.
  const size_t padded = (threads_.size() + kLanes - 1) / kLanes * kLanes;
  std::vector<ThreadState> initial = threads_;
  threads_.resize(padded);
  local_.assign(padded, std::vector<uint8_t>(cfg_.lmem, 0));
  out_.assign(padded, std::vector<uint8_t>(cfg_.attr_bytes, 0));
  attr_.assign(padded, std::vector<uint8_t>(cfg_.attr_bytes, 0));
  for (size_t i = 0; i < attr_.size(); ++i) {
    size_t from = i * cfg_.attr_bytes;
    if (from >= cfg_.attr_in.size()) break;
    std::memcpy(attr_[i].data(), cfg_.attr_in.data() + from, std::min<size_t>(cfg_.attr_bytes, cfg_.attr_in.size() - from));
  }
  if (nthreads_ == 0) return RunResult{};

  Run R{code_, target_, cfg_, nullptr, {}, {}};
  R.mem = mem_;
  R.grid = rt::Dim3{1, 1, 1};
  R.block = launch_abi ? rt::Dim3{cfg_.block[0], cfg_.block[1], cfg_.block[2]} : rt::Dim3{nthreads_, 1, 1};
  R.shared_bytes = shared_.size();
  R.launch_abi = launch_abi;
  R.initial = &initial;
  R.shared_init = &shared_;
  R.single_block = true;
  R.host_threads = 1;
  // The end state: each warp's when it finishes, the whole block's (and s[])
  // at a fault; s[] once the last warp finished.
  const uint32_t nwarps = uint32_t(padded / kLanes);
  std::vector<ThreadState>& threads = threads_;
  auto whole_block = [&](BlockScratch& s) {
    for (uint32_t w = 0; w < nwarps; ++w)
      if (s.warps[w]) copy_warp(*s.warps[w], w, cfg_, threads, local_, out_, s);
    const WarpMemory& m = s.warps[0]->memory;
    if (m.shared) std::memcpy(shared_.data(), m.shared, std::min<size_t>(shared_.size(), m.shared_bytes));
  };
  R.warp_finished = [&](const rt::WarpInfo& info, const WarpState& w, BlockScratch& s) {
    copy_warp(w, info.warp, cfg_, threads, local_, out_, s);
    if (s.finished == nwarps && w.memory.shared)
      std::memcpy(shared_.data(), w.memory.shared, std::min<size_t>(shared_.size(), w.memory.shared_bytes));
  };
  R.block_faulted = [&](const rt::WarpInfo&, BlockScratch& s) { whole_block(s); };
  RunEnd end = launch_reference(R);
  if (!end.launch.error.empty()) {
    end.result.fault = FaultKind::Unsupported;
    end.result.message = end.launch.error;
  }
  end.result.steps = scratch().steps;  // the block ran on this thread
  return end.result;
}

namespace {

// Whether the code names a[] or o[] (vertex and geometry programs do): only
// then does a grid launch keep them.
bool uses_attrs(const std::vector<uint32_t>& code, const Target& t) {
  if (t.ptype != kCP) return true;
  for (size_t pos = 0; pos < code.size();) {
    Insn in = decode(code.data(), code.size(), pos, t);
    for (const auto& a : in.atoms)
      if (a.type == Atom::Opnd && a.op.kind == OKind::Mem && (a.op.space == 'a' || a.op.space == 'o')) return true;
    pos += in.words ? in.words : 1;
  }
  return false;
}

}  // namespace

GridResult run_reference_grid(const std::vector<uint32_t>& code, const Target& target, const BlockConfig& cfg,
                              LaunchMemory& mem, unsigned host_threads, bool want_outputs,
                              std::vector<uint8_t>& outputs, bool count_lane_instructions) {
  GridResult g;
  std::atomic<uint64_t> lanes{0};
  Run R{code, target, cfg, nullptr, {}, {}};
  R.mem = &mem;
  R.grid = rt::Dim3{cfg.grid[0], cfg.grid[1], 1};
  R.block = rt::Dim3{cfg.block[0], cfg.block[1], cfg.block[2]};
  R.shared_bytes = std::max<uint64_t>(cfg.smem, 0x10 + cfg.params.size());
  R.launch_abi = true;
  R.attrs = want_outputs || uses_attrs(code, target);
  R.host_threads = host_threads;
  const uint64_t per_block = R.block.count();
  const uint64_t ab = cfg.attr_bytes;
  if (want_outputs) {
    // o[] of the block's threads: each warp's when it finishes, the whole
    // block's at a fault.
    auto copy = [&outputs, per_block, ab](uint64_t block, uint64_t first, uint64_t end, const BlockScratch& s) {
      for (uint64_t t = first; t < end && t < per_block; ++t)
        std::memcpy(outputs.data() + (block * per_block + t) * ab, s.outs.data() + t * ab, ab);
    };
    R.warp_finished = [copy](const rt::WarpInfo& info, const WarpState&, BlockScratch& s) {
      copy(info.block_linear, uint64_t(info.warp) * kLanes, uint64_t(info.warp + 1) * kLanes, s);
    };
    R.block_faulted = [copy](const rt::WarpInfo& info, BlockScratch& s) { copy(info.block_linear, 0, ~0ull, s); };
  }
  if (count_lane_instructions) R.lane_instructions = &lanes;
  RunEnd end = launch_reference(R);
  g.lane_instructions = lanes.load();
  g.error = end.launch.error;
  g.result = end.result;
  if (end.launch.fault) g.fault_block = uint64_t(end.launch.fault->block.y) * cfg.grid[0] + end.launch.fault->block.x;
  return g;
}

}  // namespace gpurc::tesla
