#include "frontend/bifrost/module/launch.h"

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>

#include "frontend/bifrost/bifrost.h"
#include "frontend/bifrost/translate.h"
#include "runtime/thread_pool.h"

namespace gpurc::bifrost {

namespace {

using Clock = std::chrono::steady_clock;

// The interpreter as an ir::Executable: each host warp's WarpState lives in its vars.
class ReferenceExecutable final : public ir::Executable {
 public:
  ReferenceExecutable(const LaunchEnv& env, std::atomic<uint64_t>* lanes) : env_(env), lanes_(lanes) {}
  size_t frame_bytes() const override { return 0; }
  bool frame_needs_zero() const override { return false; }
  bool var_read_ranges(std::vector<std::pair<uint32_t, uint32_t>>& out) const override {
    out.clear();  // init writes every byte the interpreter reads
    return true;
  }
  ir::RunStatus run(ir::WarpContext& ctx) const override {
    WarpState& st = *reinterpret_cast<WarpState*>(ctx.vars);
    const uint64_t before = st.lane_instructions;
    Stop s = run_warp(env_, st, *ctx.memory, ctx.budget);
    if (lanes_) *lanes_ += st.lane_instructions - before;
    switch (s) {
      case Stop::Done: ctx.status = ir::RunStatus::Done; break;
      case Stop::Barrier: ctx.status = ir::RunStatus::Barrier; break;
      default:
        ctx.status = ir::RunStatus::Fault;
        ctx.fault = st.fault;
        ctx.fault_lane = st.fault_lane;
        ctx.fault_addr = st.fault_addr;
        ctx.fault_space = st.fault_space;
        break;
    }
    return ctx.status;
  }

 private:
  const LaunchEnv& env_;
  std::atomic<uint64_t>* lanes_;
};

// Packs a start state into the translation's vars (translate.h's layout).
void pack_state(const WarpState& st, unsigned W, const std::vector<uint32_t>& offs, uint8_t* vars) {
  for (unsigned r = 0; r < kRegs; ++r) std::memcpy(vars + offs[kVarReg0 + r], st.regs[r], 4 * kHostLanes);
  std::memcpy(vars + offs[kVarPc], st.pc, 4 * kHostLanes);
  std::memset(vars + offs[kVarEnded], 0, 4 * kHostLanes);
  uint32_t gw[kHostLanes];
  for (unsigned l = 0; l < kHostLanes; ++l) gw[l] = st.guest_warp_base + l / W;
  std::memcpy(vars + offs[kVarGuestWarp], gw, sizeof gw);
  std::memset(vars + offs[kVarWaiting], 0, 4 * kHostLanes);
}

}  // namespace

bool translate_launch(const BifrostLaunch& L, ir::Function& f, std::string& err) {
  return translate(L.code.data(), L.code.size(), L.warp_width, f, err);
}

unsigned warp_width_of(const std::string& variant) {
  if (variant.empty() || variant == "default") return models().front().warp_width;
  for (const Model& m : models())
    if (variant == m.name) return m.warp_width;
  return 0;
}

void init_warp(const BifrostLaunch& L, const rt::WarpInfo& w, WarpState& st) {
  std::memset(st.regs, 0, sizeof st.regs);
  st.launched = w.entry_mask;
  st.ended = st.waiting = 0;
  st.stop = Stop::Running;
  st.fault = ir::FaultKind::None;
  st.fault_lane = st.fault_space = 0;
  st.fault_addr = 0;
  st.clauses_run = st.lane_instructions = 0;
  st.message[0] = 0;
  st.guest_warp_base = uint32_t(w.warp * (kHostLanes / L.warp_width));
  for (unsigned l = 0; l < kHostLanes; ++l) {
    st.pc[l] = uint32_t(L.entry);
    if (l >= w.lanes) continue;
    const rt::Dim3& t = w.thread[l];
    st.regs[kPreloadLocal][l] = (t.x & 0xffff) | (t.y << 16);
    st.regs[kPreloadLocal + 1][l] = t.z;
    st.regs[kPreloadGroup][l] = w.block.x;
    st.regs[kPreloadGroup + 1][l] = w.block.y;
    st.regs[kPreloadGroup + 2][l] = w.block.z;
    st.regs[kPreloadGlobal][l] = w.block.x * L.block.x + t.x;
    st.regs[kPreloadGlobal + 1][l] = w.block.y * L.block.y + t.y;
    st.regs[kPreloadGlobal + 2][l] = w.block.z * L.block.z + t.z;
  }
}

namespace {
// A compiled translation through rt::launch: the start state packed per warp
// into the translation's vars, unpacked for `finish`.
BifrostResult run_jit(const BifrostLaunch& L, const isa::EngineHandle& engine, rt::Memory& memory,
                      rt::ThreadPool* pool, const BifrostFinish& finish) {
  BifrostResult res;
  ir::Function f;
  std::string err;
  if (!translate_launch(L, f, err)) {
    res.error = err;
    return res;
  }
  isa::Compiled compiled;
  if (!engine.compile(f, "gpurc_bifrost", compiled, err)) {
    res.error = "program: " + err;
    return res;
  }
  res = run_translation(L, f, *compiled.exe, compiled.vars_bytes, compiled.max_step_cost, memory, pool, finish);
  res.compile_us = compiled.compile_us;
  return res;
}
}  // namespace

BifrostResult run_translation(const BifrostLaunch& L, const ir::Function& f, const ir::Executable& exe,
                              uint32_t vars_bytes, uint64_t max_step_cost, rt::Memory& memory, rt::ThreadPool* pool,
                              const BifrostFinish& finish) {
  BifrostResult res;
  const std::vector<uint32_t> offs = f.var_offsets();
  std::vector<uint8_t> uniforms(ir::align64(std::max<size_t>(kUniformBlockBytes, f.uniform_bytes)), 0);
  std::memcpy(uniforms.data(), L.uniforms.data(), kUniformBlockBytes);
  rt::LaunchConfig cfg;
  cfg.grid = L.grid;
  cfg.block = L.block;
  cfg.shared_bytes = L.shared_bytes;
  cfg.budget = L.budget * int64_t(std::max<uint64_t>(1, max_step_cost));
  cfg.vars_bytes = std::max<uint32_t>(vars_bytes, f.vars_bytes());
  cfg.uniforms = uniforms.data();
  cfg.init_writes_finish_reads = true;
  cfg.max_rounds = 1u << 20;
  rt::WarpHooks hooks;
  hooks.init = [&](const rt::WarpInfo& w, uint8_t* vars) {
    thread_local std::unique_ptr<WarpState> st;
    if (!st) st = std::make_unique<WarpState>();
    init_warp(L, w, *st);
    pack_state(*st, L.warp_width, offs, vars);
  };
  if (finish)
    hooks.finish = [&](const rt::WarpInfo& w, const uint8_t* vars) {
      thread_local std::unique_ptr<WarpState> st;
      if (!st) st = std::make_unique<WarpState>();
      init_warp(L, w, *st);
      for (unsigned r = 0; r < kRegs; ++r) std::memcpy(st->regs[r], vars + offs[kVarReg0 + r], 4 * kHostLanes);
      std::memcpy(st->pc, vars + offs[kVarPc], 4 * kHostLanes);
      finish(w, *st);
    };
  const auto t0 = Clock::now();
  rt::LaunchResult r = rt::launch(exe, memory, cfg, hooks, pool);
  res.run_us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
  if (!r.error.empty()) {
    res.error = r.error;
  } else if (r.fault) {
    res.fault_message = r.fault->describe();
    res.fault = *r.fault;
  }
  return res;
}

namespace {
class ReferenceEngine final : public isa::EngineHandle {
 public:
  std::string name() const override { return "interp"; }
  bool is_reference() const override { return true; }
  bool compile(const ir::Function&, const std::string&, isa::Compiled&, std::string& err) const override {
    err = "the reference engine runs the Bifrost interpreter, not IR";
    return false;
  }
};
}  // namespace

const isa::EngineHandle& reference_engine() {
  static const ReferenceEngine e;
  return e;
}

BifrostResult run_bifrost(const BifrostLaunch& L, const isa::EngineHandle& engine, rt::Memory& memory,
                          unsigned threads, const BifrostFinish& finish) {
  BifrostResult res;
  for (uint32_t d : {L.grid.x, L.grid.y, L.grid.z, L.block.x, L.block.y, L.block.z})
    if (d == 0) {
      res.error = "launch: every grid and block dimension must be at least 1";
      return res;
    }
  if (L.block.count() > 1024) {
    res.error = "launch: a workgroup has more than 1024 threads";
    return res;
  }
  if (L.warp_width != 4 && L.warp_width != 8) {
    res.error = "launch: the guest warp width must be 4 or 8";
    return res;
  }
  std::vector<uint8_t> code(L.code);
  Program prog;
  std::string err;
  if (!prog.load(code, err)) {
    res.error = "program: " + err;
    return res;
  }
  if (!prog.at(L.entry)) {
    res.error = "program: entry " + std::to_string(L.entry) + " is not the start of a clause";
    return res;
  }
  const unsigned nthreads = threads ? threads : rt::ThreadPool::host_cores();
  rt::ThreadPool* pool = nthreads > 1 ? &rt::ThreadPool::shared(nthreads) : nullptr;
  if (!engine.is_reference()) return run_jit(L, engine, memory, pool, finish);
  LaunchEnv env;
  env.program = &prog;
  env.warp_width = L.warp_width;
  env.uniforms = L.uniforms.data();
  std::atomic<uint64_t> lanes{0};
  ReferenceExecutable exe(env, &lanes);
  rt::LaunchConfig cfg;
  cfg.grid = L.grid;
  cfg.block = L.block;
  cfg.shared_bytes = L.shared_bytes;
  cfg.budget = L.budget;
  cfg.vars_bytes = uint32_t(sizeof(WarpState));
  cfg.init_writes_finish_reads = true;
  cfg.max_rounds = 1u << 20;
  rt::WarpHooks hooks;
  hooks.init = [&](const rt::WarpInfo& w, uint8_t* vars) { init_warp(L, w, *reinterpret_cast<WarpState*>(vars)); };
  if (finish)
    hooks.finish = [&](const rt::WarpInfo& w, const uint8_t* vars) {
      finish(w, *reinterpret_cast<const WarpState*>(vars));
    };
  hooks.fault = [](const rt::WarpInfo& w, const ir::WarpContext& ctx, rt::LaunchFault& f) {
    const WarpState& st = *reinterpret_cast<const WarpState*>(ctx.vars);
    f.detail = st.message;
    if (st.stop != Stop::Error)
      f.detail += " (workgroup (" + std::to_string(w.block.x) + "," + std::to_string(w.block.y) + "," +
                  std::to_string(w.block.z) + ") host warp " + std::to_string(w.warp) + ")";
  };
  const auto t0 = Clock::now();
  rt::LaunchResult r = rt::launch(exe, memory, cfg, hooks, pool);
  res.run_us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
  res.lane_instructions = lanes;
  if (!r.error.empty()) {
    res.error = r.error;
  } else if (r.fault) {
    rt::LaunchFault f = *r.fault;
    if (f.kind == ir::FaultKind::Unsupported) {
      res.error = f.detail;
    } else if (f.round_limit || f.deadlock) {
      res.fault_message = f.describe();
      res.fault = f;
    } else {
      res.fault_message = f.detail;
      f.detail.clear();
      res.fault = f;
    }
  }
  return res;
}

}  // namespace gpurc::bifrost
