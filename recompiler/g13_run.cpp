#include "recompiler/g13_run.h"

#include <atomic>
#include <chrono>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>

#include "frontend/g13/translate.h"
#include "runtime/thread_pool.h"

namespace gpurc {

namespace {

using Clock = std::chrono::steady_clock;
using rt::align64;

// What one threadgroup ended with: nothing (all SIMD-groups done), a fault or an error.
struct BlockOutcome {
  std::optional<rt::LaunchFault> fault;
  std::string message;  // fault or error text
  bool error = false;
  uint64_t lane_instructions = 0;
};

// A SIMD-group at the start of a launch, built in place: zero registers, the
// launch's uniforms, every launched lane active, the special registers (all
// that a launch provides, or only `specials` when given) and zeroed stacks.
void init_group(const G13Launch& L, const rt::WarpInfo& w, g13::SimdGroup& sg,
                const std::vector<unsigned>* specials = nullptr) {
  sg.uniforms = L.uniforms;
  sg.launched = w.entry_mask;
  sg.pc = L.entry;
  sg.recompute_exec();
  if (specials) {
    for (unsigned sr : *specials) g13_special(L.block, w, sr, sg.special[sr]);
  } else {
    g13_fill_special(L.grid, L.block, w, sg);
  }
  if (L.stack_bytes)
    for (unsigned l = 0; l < g13::SimdGroup::kLanes; ++l) sg.stack[l].assign(size_t(L.stack_bytes), 0);
}

std::string interp_fault_text(const g13::StepResult& r, const rt::WarpInfo& w) {
  return r.message + " (threadgroup (" + std::to_string(w.block.x) + "," + std::to_string(w.block.y) + "," +
         std::to_string(w.block.z) + ") simdgroup " + std::to_string(w.warp) + ")";
}

// Runs one threadgroup on the reference interpreter. SIMD-groups run in turn
// up to their next threadgroup_barrier; a round ends with all of them at the
// barrier (or finished), so the next round passes it.
BlockOutcome run_block_interp(const G13Launch& L, const std::vector<uint8_t>& code, rt::Memory& mem,
                              uint64_t block, const G13Finish& finish, bool count) {
  BlockOutcome out;
  const uint64_t threads = L.block.count();
  const uint32_t nwarps = uint32_t((threads + 31) / 32);
  auto shared = rt::allocate_aligned(L.shared_bytes ? L.shared_bytes : 1);
  rt::BlockMemory view(mem, L.shared_bytes ? shared.get() : nullptr, L.shared_bytes);
  g13::Interpreter interp(code, &view);
  std::vector<rt::WarpInfo> info(nwarps);
  std::vector<std::unique_ptr<g13::SimdGroup>> groups(nwarps);
  for (uint32_t w = 0; w < nwarps; ++w) {
    info[w] = rt::warp_info(L.grid, L.block, block, w);
    groups[w] = std::make_unique<g13::SimdGroup>();
    init_group(L, info[w], *groups[w]);
  }
  rt::run_barrier_rounds(nwarps, [&](uint32_t w) {
    g13::SimdGroup& sg = *groups[w];
    g13::StepResult r;
    if (count) {
      // Step by step to count active lanes; same watchdog as run().
      int64_t steps = 0;
      for (;;) {
        if (steps++ >= L.budget) {
          r.kind = g13::StepResult::Kind::Fault;
          r.fault = ir::FaultKind::Watchdog;
          r.message = "watchdog: more than " + std::to_string(L.budget) + " instructions";
          break;
        }
        out.lane_instructions += uint64_t(__builtin_popcount(sg.exec));
        r = interp.step(sg);
        if (r.kind != g13::StepResult::Kind::Running) break;
      }
    } else {
      r = interp.run(sg, uint64_t(L.budget));
    }
    switch (r.kind) {
      case g13::StepResult::Kind::Done:
        if (finish) finish(info[w], sg);
        return rt::WarpStep::Done;
      case g13::StepResult::Kind::Barrier:
      case g13::StepResult::Kind::Running:
        return rt::WarpStep::Barrier;
      case g13::StepResult::Kind::Fault: {
        rt::LaunchFault f;
        f.kind = r.fault;
        f.block = info[w].block;
        f.warp = w;
        f.lane = r.fault_lane;
        f.addr = r.fault_addr;
        out.fault = f;
        out.message = interp_fault_text(r, info[w]);
        return rt::WarpStep::Stop;
      }
      case g13::StepResult::Kind::Error:
        break;
    }
    out.error = true;
    out.message = r.message;
    return rt::WarpStep::Stop;
  });
  return out;
}

struct JitProgram {
  ir::Function f;
  CompiledIr compiled;
  std::vector<uint8_t> uniforms;  // the uniform block, padded for vector loads
  g13::VarLayout layout;          // g13::var_layout(f): what pack_vars/unpack_vars copy
  std::vector<unsigned> specials; // the special registers the translation reads (its "srK" vars)
  // Every SIMD-group starts with the same registers and uniforms: those vars
  // are packed once (`image`) and copied (`shared_ranges`); only exec and the
  // special registers are packed per SIMD-group (g13::pack_group_vars).
  std::vector<uint8_t> image;
  std::vector<std::pair<uint32_t, uint32_t>> shared_ranges;
  // `layout` with only the vars pack_group_vars writes (exec, srK), so the
  // per-SIMD-group pack does not walk the ~130 register vars.
  g13::VarLayout group_layout;
};

// Runs one threadgroup on a compiled translation: the same rounds as the
// interpreter, with each SIMD-group's registers marshalled through the
// translation's var area and its stack served by g13::StackMemory.
BlockOutcome run_block_jit(const G13Launch& L, const JitProgram& P, rt::Memory& mem, uint64_t block,
                           const G13Finish& finish) {
  BlockOutcome out;
  const ir::Executable& exe = *P.compiled.exe;
  const uint64_t threads = L.block.count();
  const uint32_t nwarps = uint32_t((threads + 31) / 32);
  const size_t vars_stride = align64(std::max<size_t>(P.compiled.vars_bytes, P.layout.bytes));
  const size_t frame_stride = align64(exe.frame_bytes());
  // Vars, frames and shared memory of the threadgroup: one buffer per host
  // thread, kept for its next threadgroup (a fresh allocation of this size
  // per threadgroup is an mmap, page faults and an munmap each time).
  const size_t need = (vars_stride + frame_stride) * nwarps + L.shared_bytes + 64;
  thread_local std::unique_ptr<uint8_t[], rt::Buffer::AlignedFree> storage;
  thread_local size_t storage_bytes = 0;
  if (storage_bytes < need) {
    storage = rt::allocate_aligned(need, false);
    storage_bytes = need;
  }
  uint8_t* shared = storage.get() + (vars_stride + frame_stride) * nwarps;
  std::memset(shared, 0, L.shared_bytes + 64);
  // The translation's own vars are packed (those it uses) or never looked
  // at; what the compiled code has beyond them (vars passes added) starts zeroed.
  const size_t own = std::min<size_t>(P.layout.bytes, vars_stride);
  rt::BlockMemory view(mem, L.shared_bytes ? shared : nullptr, L.shared_bytes);
  // Per-warp SIMD-groups only with stacks (StackMemory serves them from
  // SimdGroup::stack). Otherwise one start state serves every warp of the
  // threadgroup (zero registers, the launch's uniforms, no stacks: a stack
  // access faults as with empty stacks), with each warp's launched lanes and
  // special registers set before its pack; and one `result` takes each
  // finished warp's unpack for `finish` (every warp's unpack rewrites the
  // same vars, and `finish` reads the launched lanes). No finish: no unpack.
  // The start state and the per-warp records are kept per host thread for
  // its next threadgroup as well: a SimdGroup is 17 KiB of registers and
  // uniforms, and zeroing and allocating it per threadgroup was a large part
  // of a short kernel's run time. What they carry over is rewritten below
  // before it is read: the start state's registers stay zero (they are only
  // packed from), its uniforms, pc, launched lanes, exec and special
  // registers are set here. `result` is fresh per threadgroup: finish sees
  // its registers the program never writes, which must be the zero start.
  const bool stacks = L.stack_bytes != 0;
  struct Slot {
    rt::WarpInfo info;
    std::unique_ptr<g13::SimdGroup> sg;  // with stacks only
    std::unique_ptr<g13::StackMemory> stack;
    ir::WarpContext ctx;
  };
  struct Reused {
    g13::SimdGroup start;
    std::vector<Slot> slots;
  };
  thread_local std::unique_ptr<Reused> reused;
  if (!reused) reused = std::make_unique<Reused>();
  g13::SimdGroup* start = &reused->start;
  start->uniforms = L.uniforms;
  start->pc = L.entry;
  start->special.clear();
  g13::StackMemory no_stack(*start, &view);
  std::unique_ptr<g13::SimdGroup> result;
  if (finish && !stacks) {
    result = std::make_unique<g13::SimdGroup>();
    result->uniforms = L.uniforms;
  }
  std::vector<Slot>& slots = reused->slots;
  if (slots.size() < nwarps) slots.resize(nwarps);
  ir::WarpContext first;  // the windows of the threadgroup's view, filled once
  view.fill_windows(first);
  for (uint32_t w = 0; w < nwarps; ++w) {
    Slot& s = slots[w];
    s.sg.reset();
    s.stack.reset();
    s.ctx = first;
    s.info = rt::warp_info(L.grid, L.block, block, w);
    g13::SimdGroup* sg = start;
    if (stacks) {
      s.sg = std::make_unique<g13::SimdGroup>();
      init_group(L, s.info, *s.sg, &P.specials);
      s.stack = std::make_unique<g13::StackMemory>(*s.sg, &view);
      sg = s.sg.get();
    } else {
      start->launched = s.info.entry_mask;
      start->recompute_exec();
      for (unsigned sr : P.specials) g13_special(L.block, s.info, sr, start->special[sr]);
    }
    s.ctx.vars = storage.get() + (vars_stride + frame_stride) * w;
    s.ctx.frame = s.ctx.vars + vars_stride;
    std::memset(s.ctx.vars + own, 0, vars_stride - own);
    if (exe.frame_needs_zero()) std::memset(s.ctx.frame, 0, frame_stride);
    s.ctx.uniforms = P.uniforms.data();
    s.ctx.entry_mask = s.info.entry_mask;
    s.ctx.budget = L.budget;
    s.ctx.memory = stacks ? static_cast<ir::GuestMemory*>(s.stack.get()) : &no_stack;
    for (const auto& [begin, end] : P.shared_ranges) std::memcpy(s.ctx.vars + begin, P.image.data() + begin, end - begin);
    g13::pack_group_vars(*sg, P.group_layout, s.ctx.vars);
  }
  rt::run_barrier_rounds(nwarps, [&](uint32_t w) {
    Slot& s = slots[w];
    ir::RunStatus st = exe.run(s.ctx);
    if (st == ir::RunStatus::Fault) {
      rt::LaunchFault f = rt::fault_of(s.ctx);
      f.block = s.info.block;
      f.warp = s.info.warp;
      out.fault = f;
      out.message = f.describe();
      return rt::WarpStep::Stop;
    }
    if (st == ir::RunStatus::Barrier) return rt::WarpStep::Barrier;
    if (finish) {
      g13::SimdGroup& r = stacks ? *s.sg : *result;
      r.launched = r.exec = s.info.entry_mask;  // the start state's exec, unless the program wrote it
      g13::unpack_vars(s.ctx.vars, P.layout, r);
      finish(s.info, r);
    }
    return rt::WarpStep::Done;
  });
  return out;
}

}  // namespace

namespace {
// The special registers a compute launch provides (g13_run.h), in one list.
constexpr unsigned kLaunchSpecials[] = {0, 1, 2, 4, 5, 6, 8, 9, 10, 20, 21, 48, 49, 50, 51, 53, 80, 81, 82};
}  // namespace

bool g13_special(const rt::Dim3& block, const rt::WarpInfo& w, unsigned sr, std::array<uint32_t, 32>& out) {
  auto splat = [&](uint32_t v) { out.fill(v); };
  // Lanes past the end of a partial SIMD-group are not launched: zero.
  auto per_lane = [&](auto value) {
    for (unsigned l = 0; l < g13::SimdGroup::kLanes; ++l) out[l] = l < w.lanes ? uint32_t(value(l)) : 0;
  };
  auto grid_pos = [&](uint32_t b, uint32_t size, uint32_t rt::Dim3::*c) {
    for (unsigned l = 0; l < g13::SimdGroup::kLanes; ++l)
      out[l] = b * size + (l < w.lanes ? w.thread[l].*c : 0);
  };
  switch (sr) {
    case 0: splat(w.block.x); return true;
    case 1: splat(w.block.y); return true;
    case 2: splat(w.block.z); return true;
    case 4: case 8: splat(block.x); return true;
    case 5: case 9: splat(block.y); return true;
    case 6: case 10: splat(block.z); return true;
    case 20: case 21: splat(0); return true;
    case 53: splat(w.warp); return true;
    case 48: per_lane([&](unsigned l) { return w.thread[l].x; }); return true;
    case 49: per_lane([&](unsigned l) { return w.thread[l].y; }); return true;
    case 50: per_lane([&](unsigned l) { return w.thread[l].z; }); return true;
    case 51: per_lane([&](unsigned l) { return w.thread_linear(l); }); return true;
    case 80: grid_pos(w.block.x, block.x, &rt::Dim3::x); return true;
    case 81: grid_pos(w.block.y, block.y, &rt::Dim3::y); return true;
    case 82: grid_pos(w.block.z, block.z, &rt::Dim3::z); return true;
    default: return false;
  }
}

void g13_fill_special(const rt::Dim3& grid, const rt::Dim3& block, const rt::WarpInfo& w, g13::SimdGroup& sg) {
  (void)grid;
  for (unsigned sr : kLaunchSpecials) g13_special(block, w, sr, sg.special[sr]);
}

G13Result run_g13(const G13Launch& L, Engine engine, rt::Memory& memory, unsigned threads, const G13Finish& finish,
                  bool count_instructions) {
  G13Result res;
  for (uint32_t d : {L.grid.x, L.grid.y, L.grid.z, L.block.x, L.block.y, L.block.z})
    if (d == 0) {
      res.error = "launch: every grid and block dimension must be at least 1";
      return res;
    }
  if (L.block.count() > 1024) {
    res.error = "launch: a threadgroup has more than 1024 threads";
    return res;
  }
  if (L.grid.count() > (uint64_t(1) << 32)) {
    res.error = "launch: the grid has more than 2^32 threadgroups";
    return res;
  }
  if (L.shared_bytes > (uint64_t(1) << 16)) {
    res.error = "launch: shared_bytes is larger than 64 KiB (16-bit threadgroup addresses)";
    return res;
  }
  if (L.stack_bytes > g13::kStackStride) {
    res.error = "launch: stack_bytes is larger than " + std::to_string(g13::kStackStride);
    return res;
  }
  if (L.entry >= L.code.size()) {
    res.error = "program: entry " + std::to_string(L.entry) + " is past the end of the code (" +
                std::to_string(L.code.size()) + " bytes)";
    return res;
  }
  if (engine == Engine::Jit) {
    res.error = "run_g13: engine must be resolved";
    return res;
  }

  JitProgram prog;
  const bool jit = engine != Engine::Interp;
  if (jit) {
    // The translation starts at the entry: branch targets are pc-relative.
    std::string err;
    if (!g13::translate(L.code.data() + L.entry, L.code.size() - L.entry, prog.f, err)) {
      res.error = err;
      return res;
    }
    g13::SimdGroup probe;
    g13_fill_special(L.grid, L.block, rt::warp_info(L.grid, L.block, 0, 0), probe);
    if (int sr = g13::missing_special(probe, prog.f); sr >= 0) {
      res.error = "program: reads special register sr" + std::to_string(sr) + ", which a compute launch does not provide";
      return res;
    }
    IrCompileOptions opt;
    opt.symbol = "gpurc_g13";
    if (!compile_ir(prog.f, engine, opt, prog.compiled, err)) {
      res.error = "program: " + err;
      return res;
    }
    res.compile_us = prog.compiled.compile_us;
    prog.layout = g13::var_layout(prog.f);
    for (const g13::VarLayout::Var& v : prog.layout.vars)
      if (v.kind == g13::VarLayout::Kind::Special) prog.specials.push_back(v.index);
    prog.uniforms.assign(align64(std::max<size_t>(g13::kUniformBytes, prog.f.uniform_bytes)), 0);
    probe.uniforms = L.uniforms;
    g13::pack_uniforms(probe, prog.uniforms.data());
    // The start state's registers (zero) and uniforms, as init_group and
    // run_block_jit's start state have them.
    auto start = std::make_unique<g13::SimdGroup>();
    start->uniforms = L.uniforms;
    start->pc = L.entry;
    prog.image.assign(prog.layout.bytes, 0);
    g13::pack_vars(*start, prog.layout, prog.image.data());
    prog.shared_ranges = g13::shared_var_ranges(prog.layout);
    prog.group_layout.bytes = prog.layout.bytes;
    for (const g13::VarLayout::Var& v : prog.layout.vars)
      if ((v.read || v.written) &&
          (v.kind == g13::VarLayout::Kind::Exec || v.kind == g13::VarLayout::Kind::Special))
        prog.group_layout.vars.push_back(v);
  }

  const uint64_t blocks = L.grid.count();
  std::atomic<bool> stop{false};
  std::mutex lock;
  uint64_t first_bad = std::numeric_limits<uint64_t>::max();
  BlockOutcome bad;
  std::atomic<uint64_t> lanes{0};
  auto one = [&](size_t b) {
    if (stop.load(std::memory_order_relaxed)) return;
    BlockOutcome o = jit ? run_block_jit(L, prog, memory, b, finish)
                         : run_block_interp(L, L.code, memory, b, finish, count_instructions);
    lanes += o.lane_instructions;
    if (o.fault || o.error) {
      std::lock_guard<std::mutex> g(lock);
      if (b < first_bad) {
        first_bad = b;
        bad = std::move(o);
      }
      stop = true;
    }
  };
  auto t0 = Clock::now();
  const unsigned nthreads = threads ? threads : rt::ThreadPool::host_cores();
  if (nthreads > 1 && blocks > 1) {
    rt::ThreadPool::shared(nthreads).parallel_for(size_t(blocks), one);
  } else {
    for (uint64_t b = 0; b < blocks && !stop; ++b) one(size_t(b));
  }
  res.run_us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
  res.lane_instructions = lanes;
  if (bad.error) res.error = bad.message;
  else if (bad.fault) {
    res.fault = bad.fault;
    res.fault_message = bad.message;
  }
  return res;
}

}  // namespace gpurc
