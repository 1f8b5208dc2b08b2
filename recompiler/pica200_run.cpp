#include "recompiler/pica200_run.h"

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>

#include <fmt/format.h>

#include "runtime/launch.h"
#include "runtime/memory.h"
#include "runtime/thread_pool.h"

namespace gpurc::pica {

namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kMaxWords = 4096, kMaxDescs = 128;
constexpr size_t kWarp = ir::kWarpLanes;
// Warps per thread-pool work item: big enough that scheduling costs little,
// small enough that 2-8 threads get even shares of a few thousand vertices.
constexpr size_t kWarpsPerItem = 8;

using rt::align64;

// The first fault of a batch: the one with the lowest vertex index wins, so
// the report does not depend on thread timing.
struct FirstFault {
  std::mutex m;
  std::atomic<bool> any{false};
  size_t vertex = SIZE_MAX;
  std::string message;
  bool watchdog = false;
  void offer(size_t v, std::string msg, bool is_watchdog) {
    std::lock_guard<std::mutex> g(m);
    if (v < vertex) {
      vertex = v;
      message = std::move(msg);
      watchdog = is_watchdog;
    }
    any = true;
  }
  void report(BatchResult& res) const {
    if (!any) return;
    res.ok = false;
    res.fault = fmt::format("{} (vertex {})", message, vertex);
    res.fault_kind = watchdog ? "watchdog" : "trap";
    res.fault_vertex = vertex;
  }
};

// Runs fn(first, count) over [0, n) in items of `per_item`, on the pool when
// the batch is large enough to be worth it.
void for_chunks(size_t n, size_t per_item, const BatchOptions& opt, const std::function<void(size_t, size_t)>& fn) {
  size_t items = (n + per_item - 1) / per_item;
  auto one = [&](size_t i) {
    size_t first = i * per_item;
    fn(first, std::min(per_item, n - first));
  };
  if (opt.threads != 1 && n >= opt.min_parallel && items > 1) {
    rt::ThreadPool::shared(opt.threads).parallel_for(items, one);
  } else {
    for (size_t i = 0; i < items; ++i) one(i);
  }
}

// Both runners work on states[begin, end) (gs likewise) and report faults by
// index into `states`.
BatchResult run_interp(const PreparedShader& s, const Uniforms& u, std::vector<VertexState>& states,
                       std::vector<GsState>* gs, const BatchOptions& opt, size_t begin, size_t end) {
  BatchResult res;
  Interpreter it(s.program, u, s.options.fp);
  FirstFault ff;
  std::atomic<uint64_t> steps{0};
  auto t0 = Clock::now();
  for_chunks(end - begin, kWarp * kWarpsPerItem, opt, [&](size_t first, size_t count) {
    first += begin;
    uint64_t local = 0;
    for (size_t k = first; k < first + count && !ff.any.load(std::memory_order_relaxed); ++k) {
      RunResult r = it.run(s.options.entry, states[k], gs ? &(*gs)[k] : nullptr, opt.budget);
      local += r.steps;
      // The interpreter's only budget fault is the instruction budget (interp.cpp).
      if (!r.ok) ff.offer(k, r.fault, r.steps >= opt.budget);
    }
    steps += local;
  });
  res.run_us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
  res.instructions = steps;
  ff.report(res);
  return res;
}

// `gs` (geometry shaders): each work item gives its warps one emit record
// area at kEmitBase (translate.h); unpack_emits turns it into gs[k]. Only the
// state fields the code touches move in and out (PreparedShader::lanes); the
// var area and frame are cleared once per work item, not per warp (the code
// sets every private var before reading it, and unlaunched lanes are don't-care).
BatchResult run_jit(const PreparedShader& s, const Uniforms& u, std::vector<VertexState>& states,
                    std::vector<GsState>* gs, const BatchOptions& opt, size_t begin, size_t end) {
  BatchResult res;
  const ir::Function& f = *s.function;
  const ir::Executable& exe = *s.compiled.exe;
  std::vector<uint8_t> packed = pack_uniforms(u);
  // Engines may read the uniform block in whole vectors.
  packed.resize(align64(std::max<size_t>(packed.size(), f.uniform_bytes)) + 64, 0);
  const size_t vars_stride = align64(s.compiled.vars_bytes), frame_stride = align64(exe.frame_bytes());
  // One watchdog unit is at least one guest instruction of one warp.
  const int64_t budget = int64_t(std::min<uint64_t>(opt.budget, uint64_t(1) << 40)) * int64_t(kWarp);
  FirstFault ff;
  auto t0 = Clock::now();
  for_chunks(end - begin, kWarp * kWarpsPerItem, opt, [&](size_t first, size_t count) {
    first += begin;
    auto storage = rt::allocate_aligned(vars_stride + frame_stride + 64);
    // Vars are cleared once per work item (pack_lanes rewrites every field the code touches); the
    // frame is cleared per warp only for engines that read it before writing it.
    std::memset(storage.get(), 0, vars_stride + frame_stride);
    const bool zero_frame = exe.frame_needs_zero();
    rt::Memory emits;
    const uint8_t* records = nullptr;
    if (gs) {
      std::string err;
      if (!emits.add_buffer("pica200_gs_emits", ir::Space::Global, kEmitBase, kEmitWarpBytes, err)) {
        ff.offer(first, "pica200: " + err, false);
        return;
      }
      records = emits.find("pica200_gs_emits")->data();
    }
    ir::WarpContext base;
    base.vars = storage.get();
    base.frame = storage.get() + vars_stride;
    base.uniforms = packed.data();
    if (gs) {
      emits.fill_windows(base);
      base.memory = &emits;
    }
    for (size_t w = first; w < first + count && !ff.any.load(std::memory_order_relaxed); w += kWarp) {
      const size_t lanes = std::min(kWarp, first + count - w);
      if (zero_frame && w != first) std::memset(storage.get() + vars_stride, 0, frame_stride);
      ir::WarpContext ctx = base;
      ctx.budget = budget;
      uint32_t mask = 0;
      pack_lanes(s.lanes, states.data() + w, lanes, ctx.vars, mask);
      ctx.entry_mask = mask;
      ir::RunStatus st = exe.run(ctx);
      while (st == ir::RunStatus::Barrier) st = exe.run(ctx);  // PICA has no barriers; resume defensively
      if (st == ir::RunStatus::Fault) {
        const rt::LaunchFault lf = rt::fault_of(ctx);
        size_t v = w + (ctx.fault_lane < kWarp ? ctx.fault_lane : 0);
        // The translator's traps carry the interpreter's fault (reason and address).
        ff.offer(v,
                 ctx.fault == ir::FaultKind::Trap ? describe_trap(ctx.fault_code)
                                                  : fmt::format("pica200 ({}): {}", engine_name(s.engine), lf.describe()),
                 ctx.fault == ir::FaultKind::Watchdog);
        continue;
      }
      unpack_lanes(s.lanes, ctx.vars, states.data() + w, lanes);
      if (gs) unpack_emits(f, ctx.vars, records, w, *gs, lanes);
    }
  });
  res.run_us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
  ff.report(res);
  return res;
}

}  // namespace

bool prepare_shader(const Program& program, const TranslateOptions& options, Engine engine, PreparedShader& out,
                    std::string& err) {
  if (program.code.empty()) {
    err = "pica200: the program has no code words";
    return false;
  }
  if (program.code.size() > kMaxWords) {
    err = fmt::format("pica200: {} code words (at most {})", program.code.size(), kMaxWords);
    return false;
  }
  if (program.descs.size() > kMaxDescs) {
    err = fmt::format("pica200: {} operand descriptors (at most {})", program.descs.size(), kMaxDescs);
    return false;
  }
  if (options.entry >= program.code.size()) {
    err = fmt::format("pica200: entry 0x{:03X} is past the end of the program ({} words)", options.entry,
                      program.code.size());
    return false;
  }
  Engine resolved;
  if (!resolve_engine(engine, resolved, err)) return false;
  out = PreparedShader{};
  out.program = program;
  out.options = options;
  out.engine = resolved;
  if (resolved == Engine::Interp) return true;
  auto t0 = Clock::now();
  auto fn = std::make_shared<ir::Function>();
  if (!translate(program, options, *fn, err)) {
    if (err.empty()) err = "pica200: translation failed";
    return false;
  }
  out.translate_us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
  out.function = fn;
  out.lanes = LaneMap::used(*fn);
  IrCompileOptions co;
  co.symbol = "gpurc_pica200";
  if (!compile_ir(*fn, resolved, co, out.compiled, err)) {
    err = "pica200: " + err;
    return false;
  }
  return true;
}

namespace {

// A whole batch on the shader's engine (`interp`: on the reference
// interpreter whatever the engine). Geometry shaders with
// BatchOptions::set_b15: invocation 0 sees b15 as given, the others b15 = 1
// (the hardware sets b15 after every invocation), so the batch runs as two
// ranges with two uniform blocks unless b15 is already set.
BatchResult run_batch(const PreparedShader& s, const Uniforms& u, std::vector<VertexState>& states,
                      std::vector<GsState>* gs, const BatchOptions& opt, bool interp) {
  auto range = [&](const Uniforms& uu, size_t begin, size_t end) {
    return interp || s.engine == Engine::Interp ? run_interp(s, uu, states, gs, opt, begin, end)
                                                : run_jit(s, uu, states, gs, opt, begin, end);
  };
  if (!gs || !opt.set_b15 || (u.b & 0x8000) || states.size() <= 1) return range(u, 0, states.size());
  BatchResult head = range(u, 0, 1);
  if (!head.ok) return head;
  Uniforms later = u;
  later.b |= 0x8000;
  BatchResult tail = range(later, 1, states.size());
  tail.run_us += head.run_us;
  tail.instructions += head.instructions;
  return tail;
}

}  // namespace

BatchResult run_vertices(const PreparedShader& s, const Uniforms& u, std::vector<VertexState>& states,
                         const BatchOptions& opt) {
  if (s.options.geometry) {
    BatchResult r;
    r.ok = false;
    r.fault = "pica200: a geometry shader needs run_geometry (emitted vertices have nowhere to go)";
    return r;
  }
  // The JIT does not count guest instructions: the reference counts them on a copy of the initial states.
  std::vector<VertexState> initial;
  if (opt.count_instructions && s.engine != Engine::Interp) initial = states;
  BatchResult r = run_batch(s, u, states, nullptr, opt, false);
  if (!initial.empty() && r.ok) r.instructions = run_batch(s, u, initial, nullptr, opt, true).instructions;
  return r;
}

BatchResult run_geometry(const PreparedShader& s, const Uniforms& u, std::vector<VertexState>& states,
                         std::vector<GsState>& gs, const BatchOptions& opt) {
  gs.assign(states.size(), GsState{});
  if (!s.options.geometry) {
    BatchResult r;
    r.ok = false;
    r.fault = "pica200: the shader was prepared as a vertex shader (TranslateOptions::geometry is false)";
    return r;
  }
  std::vector<VertexState> initial;
  if (opt.count_instructions && s.engine != Engine::Interp) initial = states;
  BatchResult r = run_batch(s, u, states, &gs, opt, false);
  if (!initial.empty() && r.ok) {
    std::vector<GsState> scratch(initial.size());
    r.instructions = run_batch(s, u, initial, &scratch, opt, true).instructions;
  }
  return r;
}

}  // namespace gpurc::pica
