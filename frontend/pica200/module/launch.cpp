#include "frontend/pica200/module/launch.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <string_view>

#include <fmt/format.h>

#include "frontend/pica200/module/reference.h"
#include "ir/compile_stages.h"
#include "runtime/launch.h"
#include "runtime/memory.h"
#include "runtime/thread_pool.h"

namespace gpurc::pica {

namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kMaxWords = 4096, kMaxDescs = 128;
constexpr size_t kWarpWidth = ir::kWarpLanes;

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

// Runs states[begin, end) (n = end - begin) through rt::launch as warps of
// 32 vertices, one warp per block: the launch gives each warp of a block its
// own var area and sets all of them up before running any, so blocks of 8
// warps (~200 KB of vars for the 197 state vars of a translation) ran out of
// L1 and cost ~15% on a short shader (bench transform); one-warp blocks keep
// the one var area of the thread's reused block storage hot, as the earlier
// hand-written loop did. `first_vertex(info)` gives the hooks the index of a
// warp's lane 0. Stops after a launch whose warps faulted (ff.any).
void launch_warps(const ir::Executable& exe, rt::LaunchConfig cfg, const rt::WarpHooks& hooks,
                  const BatchOptions& opt, size_t begin, size_t end, size_t& first, FirstFault& ff,
                  std::string_view what) {
  const size_t n = end - begin;
  rt::ThreadPool* pool = nullptr;
  if (opt.threads != 1 && n >= opt.min_parallel && n > kWarpWidth) pool = &rt::ThreadPool::shared(opt.threads);
  rt::Memory no_memory;  // vertex shaders touch no guest memory; geometry warps get theirs from hooks.memory
  first = begin;
  // Whole warps, then the last partial one (a launch has one block shape).
  for (size_t left = n; left > 0 && !ff.any;) {
    const size_t block_threads = std::min(left, kWarpWidth), blocks = left / block_threads;
    cfg.grid = rt::Dim3{uint32_t(blocks), 1, 1};
    cfg.block = rt::Dim3{uint32_t(block_threads), 1, 1};
    rt::LaunchResult lr = rt::launch(exe, no_memory, cfg, hooks, blocks > 1 ? pool : nullptr);
    if (!lr.error.empty()) ff.offer(first, fmt::format("pica200 ({}): {}", what, lr.error), false);
    first += blocks * block_threads;
    left -= blocks * block_threads;
  }
}

// A batch's reference run: the first faulting vertex goes to the batch's
// FirstFault with the interpreter's message and stops its warp (and, through
// ff.any, the rest).
class BatchObserver final : public ReferenceObserver {
 public:
  BatchObserver(FirstFault& ff, uint64_t budget) : ff_(ff), budget_(budget) {}
  bool stopped() const override { return ff_.any.load(std::memory_order_relaxed); }
  bool lane_done(size_t vertex, const RunResult& r) override {
    if (r.ok) return false;
    // The interpreter's only budget fault is the instruction budget (interp.cpp).
    ff_.offer(vertex, r.fault, r.steps >= budget_);
    return true;
  }

 private:
  FirstFault& ff_;
  uint64_t budget_;
};

// Both runners work on states[begin, end) (gs likewise) and report faults by
// index into `states`.
BatchResult run_interp(const PreparedShader& s, const Uniforms& u, std::vector<VertexState>& states,
                       std::vector<GsState>* gs, const BatchOptions& opt, size_t begin, size_t end) {
  BatchResult res;
  Interpreter it(s.program, u, s.options.fp);
  FirstFault ff;
  std::atomic<uint64_t> steps{0};
  BatchObserver observer(ff, opt.budget);
  ReferenceExecutable exe(it, s.options.entry, opt.budget, observer, &steps);
  rt::LaunchConfig cfg;
  cfg.vars_bytes = uint32_t(sizeof(ReferenceWarp));
  size_t first = begin;
  rt::WarpHooks hooks;
  hooks.init = [&](const rt::WarpInfo& info, uint8_t* vars) {
    const size_t w = first + size_t(info.block_linear) * kWarpWidth;
    const ReferenceWarp iw{states.data() + w, gs ? gs->data() + w : nullptr, w};
    std::memcpy(vars, &iw, sizeof iw);
  };
  auto t0 = Clock::now();
  launch_warps(exe, cfg, hooks, opt, begin, end, first, ff, "interp");
  res.run_us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
  res.instructions = steps;
  ff.report(res);
  return res;
}

// A geometry shader's emit record area (kEmitWarpBytes at kEmitBase, abi.h)
// for the warps run on this host thread: the warps of a block run one after
// the other and each warp's records are read back (unpack_emits, in the
// launch's finish hook) before the next warp runs, so one area per thread
// serves every warp of every launch. Made on the thread's first geometry
// warp and kept: no allocation per warp or per batch.
struct EmitArea {
  rt::Memory memory;
  const uint8_t* records = nullptr;
  uint32_t capacity = 0;  // records per lane
};
EmitArea& thread_emit_area(uint32_t capacity) {
  thread_local EmitArea area;
  if (!area.records || area.capacity < capacity) {
    std::string err;
    area.memory = rt::Memory{};
    // Cannot fail: one buffer in an empty Memory, at a fixed aligned address.
    area.memory.add_buffer("pica200_gs_emits", ir::Space::Global, kEmitBase, emit_warp_bytes(capacity), err);
    area.records = area.memory.find("pica200_gs_emits")->data();
    area.capacity = capacity;
  }
  return area;
}

// The JIT's watchdog units per warp for `budget` guest steps per vertex.
// A unit is one IR instruction of a loop iteration (insert_loop_budget), and
// one iteration may run as little as one IR block for one lane: with runtime
// stacks every block of the function is one step of lower_divergence's
// scheduler loop, charged its largest budget cost, and a guest instruction
// may take up to kBlocksPerStep of them (its own block, the end checks, the
// dispatch). So the warp may spend budget * lanes * kBlocksPerStep * cost:
// a vertex the interpreter finishes never runs out of units (counting one
// unit per guest instruction of a warp instead, a 14^4 nested-call program
// using 3% of the interpreter's budget hit the JIT's watchdog). An endless
// loop still stops: after budget * 96 * max_step_cost / (its own cost)
// iterations per warp.

}  // namespace

int64_t jit_watchdog_units(uint64_t budget, uint64_t max_step_cost) {
  constexpr uint64_t kBlocksPerStep = 3;
  constexpr uint64_t kMax = uint64_t(std::numeric_limits<int64_t>::max());
  const uint64_t steps = std::min<uint64_t>(budget, uint64_t(1) << 40) * kWarpWidth * kBlocksPerStep;  // < 2^47
  const uint64_t cost = std::max<uint64_t>(max_step_cost, 1);
  return steps > kMax / cost ? int64_t(kMax) : int64_t(steps * cost);
}

namespace {

// The JIT through rt::launch (launch_warps). Only the state fields the code
// touches move in and out (PreparedShader::lanes: the init hook packs them,
// the finish hook unpacks them); since init writes every var byte finish
// reads, the launch zeroes only what the code itself may read. `gs`
// (geometry shaders): the warps run on the thread's EmitArea (the memory
// hook) and the finish hook rebuilds gs[k] from its records.
BatchResult run_jit_once(const PreparedShader& s, const Uniforms& u, std::vector<VertexState>& states,
                         std::vector<GsState>* gs, const BatchOptions& opt, size_t begin, size_t end, uint32_t capacity,
                         bool& emit_overflow) {
  BatchResult res;
  const ir::Function& f = *s.function;
  const ir::Executable& exe = *s.compiled.exe;
  std::vector<uint8_t> packed = pack_uniforms(u);
  // Engines may read the uniform block in whole vectors.
  packed.resize(align64(std::max<size_t>(packed.size(), f.uniform_bytes)) + 64, 0);
  std::memcpy(&packed[kUniformEmitCapacity], &capacity, sizeof capacity);  // records per lane (abi.h)
  FirstFault ff;
  rt::LaunchConfig cfg;
  cfg.vars_bytes = s.compiled.vars_bytes;
  cfg.uniforms = packed.data();
  cfg.budget = jit_watchdog_units(opt.budget, s.compiled.max_step_cost);
  cfg.init_writes_finish_reads = true;
  size_t first = begin;  // lane 0 of the current launch's block 0 (launch_warps)
  rt::WarpHooks hooks;
  auto vertex_of = [&](const rt::WarpInfo& info) { return first + size_t(info.block_linear) * kWarpWidth; };
  hooks.init = [&](const rt::WarpInfo& info, uint8_t* vars) {
    uint32_t mask = 0;
    pack_lanes(s.lanes, states.data() + vertex_of(info), info.lanes, vars, mask);
  };
  hooks.finish = [&](const rt::WarpInfo& info, const uint8_t* vars) {
    const size_t w = vertex_of(info);
    unpack_lanes(s.lanes, vars, states.data() + w, info.lanes);
    // Pass-through registers the code does not write (drop_pass_through):
    // the inputs are read-only, so the copy after the run is the guest's.
    for (unsigned n = 0; n < 16; ++n)
      if (const int m = s.dropped[n]; m >= 0)
        for (size_t l = 0; l < info.lanes; ++l) states[w + l].o[n] = states[w + l].v[size_t(m)];
    if (gs) unpack_emits(f, vars, thread_emit_area(capacity).records, w, *gs, info.lanes, capacity);
  };
  if (gs)
    hooks.memory = [&](const rt::WarpInfo&, ir::GuestMemory&, ir::WarpContext& ctx) -> ir::GuestMemory* {
      EmitArea& area = thread_emit_area(capacity);
      area.memory.fill_windows(ctx);
      return &area.memory;
    };
  hooks.fault = [&](const rt::WarpInfo& info, const ir::WarpContext& ctx, rt::LaunchFault&) {
    const size_t v = vertex_of(info) + (ctx.fault_lane < kWarpWidth ? ctx.fault_lane : 0);
    emit_overflow |= ctx.fault == ir::FaultKind::Trap && TrapReason(ctx.fault_code >> 16) == TrapReason::EmitOverflow;
    // The translator's traps carry the interpreter's fault (reason and address).
    ff.offer(v,
             ctx.fault == ir::FaultKind::Trap
                 ? describe_trap(ctx.fault_code)
                 : fmt::format("pica200 ({}): {}", s.engine, rt::fault_of(ctx).describe()),
             ctx.fault == ir::FaultKind::Watchdog);
  };
  auto t0 = Clock::now();
  launch_warps(exe, cfg, hooks, opt, begin, end, first, ff, s.engine);
  res.run_us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
  ff.report(res);
  return res;
}

// A geometry batch whose EMITs overflow the record area runs again from the
// same inputs with an area four times larger (up to kEmitCapacityLimit
// records per lane), so the JIT runs any EMIT count the interpreter runs.
BatchResult run_jit(const PreparedShader& s, const Uniforms& u, std::vector<VertexState>& states,
                    std::vector<GsState>* gs, const BatchOptions& opt, size_t begin, size_t end) {
  uint32_t capacity = kEmitMaxPerInvocation;
  std::vector<VertexState> in_states;
  std::vector<GsState> in_gs;
  if (gs) {
    in_states.assign(states.begin() + ptrdiff_t(begin), states.begin() + ptrdiff_t(end));
    in_gs.assign(gs->begin() + ptrdiff_t(begin), gs->begin() + ptrdiff_t(end));
  }
  for (;;) {
    bool overflow = false;
    BatchResult r = run_jit_once(s, u, states, gs, opt, begin, end, capacity, overflow);
    if (!gs || !overflow || capacity >= kEmitCapacityLimit) return r;
    std::copy(in_states.begin(), in_states.end(), states.begin() + ptrdiff_t(begin));
    std::copy(in_gs.begin(), in_gs.end(), gs->begin() + ptrdiff_t(begin));
    capacity = std::min(capacity * 4, kEmitCapacityLimit);
  }
}

}  // namespace

namespace {

bool check_program(const Program& program, const TranslateOptions& options, std::string& err) {
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
  return true;
}

class ReferenceEngine final : public isa::EngineHandle {
 public:
  std::string name() const override { return "interp"; }
  bool is_reference() const override { return true; }
  bool compile(const ir::Function&, const std::string&, isa::Compiled&, std::string& err) const override {
    err = "the reference engine runs the PICA200 interpreter, not IR";
    return false;
  }
};

}  // namespace

const isa::EngineHandle& reference_engine() {
  static const ReferenceEngine e;
  return e;
}

bool prepare_shader(Program program, const TranslateOptions& options, const isa::EngineHandle& engine,
                    PreparedShader& out, std::string& err) {
  ir::StageTimer check_time("check and copy the program");
  if (!check_program(program, options, err)) return false;
  out = PreparedShader{};
  out.program = std::move(program);
  out.options = options;
  out.engine = engine.name();
  check_time.stop();
  out.reference = engine.is_reference();
  if (out.reference) return true;
  auto t0 = Clock::now();
  ir::StageTimer translate_time("translate (decode, IR build, verify)");
  auto fn = std::make_shared<ir::Function>();
  if (!translate(out.program, options, *fn, err)) {
    if (err.empty()) err = "pica200: translation failed";
    return false;
  }
  translate_time.stop();
  out.translate_us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
  // Vertex shaders: the pass-through registers are copied by the runners,
  // not by the code (thirteenth session: o1 = v1 and o2 = v2 cost ref_simple
  // 16 of its 83 host instructions per 8 vertices).
  DrawFacts facts;
  if (!options.geometry) {
    if (pass_through_dropping()) out.dropped = drop_pass_through(*fn, &facts);
    else facts = draw_facts(*fn);
  }
  out.lanes = LaneMap::used(*fn);
  // The engine takes the translation itself (compile_owned: its passes run
  // on it, not on a copy); the prepared shader keeps the rest of the
  // function, its vars, uniform block and flags, which is all the runners
  // and the draw plan below read (the plan's facts are taken above).
  {
    std::vector<ir::Inst> insts = std::move(fn->insts);
    std::vector<ir::Block> blocks = std::move(fn->blocks);
    auto layout = std::make_shared<ir::Function>(*fn);
    fn->insts = std::move(insts);
    fn->blocks = std::move(blocks);
    out.function = std::move(layout);
  }
  if (!engine.compile_owned(*fn, "gpurc_pica200", out.compiled, err)) {
    err = "pica200: " + err;
    return false;
  }
  ir::StageTimer draw_time("draw plan");
  if (!options.geometry)
    out.draw = make_draw_plan(*out.function, *out.compiled.exe, out.compiled.vars_bytes, &out.dropped, &facts);
  return true;
}

bool prepare_shader(const Program& program, const TranslateOptions& options,
                    std::shared_ptr<const ir::Function> function, isa::Compiled compiled,
                    const std::string& engine_name, PreparedShader& out, std::string& err) {
  if (!check_program(program, options, err)) return false;
  if (!function || !compiled.exe) {
    err = "pica200: prepare_shader: no translation or no compiled code";
    return false;
  }
  out = PreparedShader{};
  out.program = program;
  out.options = options;
  out.engine = engine_name;
  out.reference = false;
  out.lanes = LaneMap::used(*function);
  out.function = std::move(function);
  out.compiled = std::move(compiled);
  if (!options.geometry) out.draw = make_draw_plan(*out.function, *out.compiled.exe, out.compiled.vars_bytes);
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
    return interp || s.reference ? run_interp(s, uu, states, gs, opt, begin, end)
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

bool draw_only_enabled() {
  static const bool yes = [] {
    const char* e = std::getenv("GPURC_DRAW_ONLY");
    return !(e && *e == '0');
  }();
  return yes;
}

BatchResult run_vertices(const PreparedShader& s, const Uniforms& u, std::vector<VertexState>& states,
                         const BatchOptions& opt) {
  if (s.options.geometry) {
    BatchResult r;
    r.ok = false;
    r.fault = "pica200: a geometry shader needs run_geometry (emitted vertices have nowhere to go)";
    return r;
  }
  if (s.options.draw_only && !s.reference) {
    // Its code keeps neither the temporaries nor a0, aL, cmp (the draw
    // contract, TranslateOptions::draw_only): whole VertexStates would be wrong.
    BatchResult r;
    r.ok = false;
    r.fault = "pica200: a shader prepared for draws only (TranslateOptions::draw_only) runs through run_draw, not run_vertices";
    return r;
  }
  // The JIT does not count guest instructions: the reference counts them on a copy of the initial states.
  std::vector<VertexState> initial;
  if (opt.count_instructions && !s.reference) initial = states;
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
  if (opt.count_instructions && !s.reference) initial = states;
  BatchResult r = run_batch(s, u, states, &gs, opt, false);
  if (!initial.empty() && r.ok) {
    std::vector<GsState> scratch(initial.size());
    r.instructions = run_batch(s, u, initial, &scratch, opt, true).instructions;
  }
  return r;
}

namespace {

// Records every vertex's result and never stops a warp.
class EachObserver final : public ReferenceObserver {
 public:
  explicit EachObserver(std::vector<RunResult>& results) : results_(results) {}
  bool stopped() const override { return false; }
  bool lane_done(size_t vertex, const RunResult& r) override {
    results_[vertex] = r;
    return false;
  }

 private:
  std::vector<RunResult>& results_;
};

}  // namespace

std::vector<RunResult> run_reference_each(const Program& program, const TranslateOptions& options,
                                          const Uniforms& u, std::vector<VertexState>& states,
                                          std::vector<GsState>* gs, uint64_t budget) {
  std::vector<RunResult> results(states.size());
  if (gs) gs->assign(states.size(), GsState{});
  Interpreter it(program, u, options.fp);
  EachObserver observer(results);
  ReferenceExecutable exe(it, options.entry, budget, observer, nullptr);
  rt::LaunchConfig cfg;
  cfg.vars_bytes = uint32_t(sizeof(ReferenceWarp));
  size_t first = 0;
  rt::WarpHooks hooks;
  hooks.init = [&](const rt::WarpInfo& info, uint8_t* vars) {
    const size_t w = first + size_t(info.block_linear) * kWarpWidth;
    const ReferenceWarp rw{states.data() + w, gs ? gs->data() + w : nullptr, w};
    std::memcpy(vars, &rw, sizeof rw);
  };
  BatchOptions opt;
  opt.threads = 1;
  FirstFault ff;  // only a launch error (none: the configuration is always valid) lands here
  launch_warps(exe, cfg, hooks, opt, 0, states.size(), first, ff, "interp");
  if (ff.any)
    for (RunResult& r : results) r = RunResult{false, ff.message, 0, 0};
  return results;
}

}  // namespace gpurc::pica
