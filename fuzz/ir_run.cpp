#include "fuzz/ir_run.h"

#include <cinttypes>
#include <cstdio>
#include <algorithm>
#include <cstring>

#include "engines/registry.h"
#include "fuzz/ir_gen.h"
#include "ir/interp.h"
#include "ir/passes.h"
#include "runtime/launch.h"
#include "runtime/memory.h"

namespace gpurc::fuzz {

using namespace ir;

namespace {

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
  return buf;
}

void put_lane(std::vector<uint8_t>& bytes, uint32_t offset, unsigned size, uint64_t v) {
  std::memcpy(bytes.data() + offset, &v, size);  // little-endian host
}
uint64_t get_lane(const std::vector<uint8_t>& bytes, uint32_t offset, unsigned size) {
  uint64_t v = 0;
  std::memcpy(&v, bytes.data() + offset, size);
  return v;
}

// Fills `out` with values of mixed types so loads of any width see special
// numbers where they land.
void fill_mixed(Rng& rng, std::vector<uint8_t>& out) {
  static const Type kChunk[] = {Type::F32, Type::F32, Type::I32, Type::F64, Type::I64, Type::F16, Type::I16, Type::I8};
  size_t pos = 0;
  while (pos < out.size()) {
    Type t = kChunk[rng.below(std::size(kChunk))];
    unsigned size = bit_width(t) / 8;
    if (pos % size != 0 || pos + size > out.size()) t = Type::I8, size = 1;
    uint64_t v = interesting_bits(rng, t);
    std::memcpy(out.data() + pos, &v, size);
    pos += size;
  }
}

// A single warp that keeps stopping at barriers after this many resumes is an engine error.
constexpr int kMaxBarrierStops = 1000;

}  // namespace

const char* fault_kind_name(FaultKind k) {
  switch (k) {
    case FaultKind::None: return "none";
    case FaultKind::Trap: return "trap";
    case FaultKind::OutOfBounds: return "out-of-bounds";
    case FaultKind::Watchdog: return "watchdog";
    case FaultKind::Unsupported: return "unsupported";
    case FaultKind::Misaligned: return "misaligned";
  }
  return "?";
}

IrState random_state(const Function& f, Rng& rng) {
  IrState st;
  unsigned r = rng.below(100);
  if (r < 60) st.entry_mask = 0xffffffffu;
  else if (r < 85) st.entry_mask = uint32_t(rng.next()) | (1u << rng.below(32));
  else st.entry_mask = 1u << rng.below(32);
  st.vars.assign(f.vars_bytes(), 0);
  for (uint32_t v = 0; v < f.vars.size(); ++v) {
    Type t = f.vars[v].type;
    // A var is often the same in many lanes in real code: sometimes splat.
    bool splat = rng.chance(15);
    uint64_t first = interesting_bits(rng, t);
    for (int l = 0; l < kWarpLanes; ++l)
      put_lane(st.vars, f.var_offset(v) + l * lane_bytes(t), lane_bytes(t),
               splat ? first : interesting_bits(rng, t));
  }
  st.uniforms.assign(std::max<uint32_t>(f.uniform_bytes, kUniformBytes), 0);
  fill_mixed(rng, st.uniforms);
  st.memory.assign(kGlobalSize, 0);
  fill_mixed(rng, st.memory);
  return st;
}

std::vector<std::string> host_jit_engines() {
  std::vector<std::string> out;
  for (Engine e : host_jit_tiers()) out.push_back(engine_name(e));
  return out;
}

bool is_known_engine(const std::string& name) {
  return name == "interp" || name == "interp-pipeline" || !jit_engine_name(name).empty();
}

std::string jit_engine_name(const std::string& name) {
  Engine e;
  return parse_engine(name, e) && e.tier() ? engine_name(e) : "";
}

IrProgram prepare_program(const Function& f) {
  IrProgram p;
  p.original = f;
  p.lowered = f;
  PassOptions opt;
  opt.verify_each = true;
  p.pipeline_error = run_pipeline(p.lowered, opt);
  // Vars from Function::state_vars on are private to a run: the pipeline drops them.
  const size_t state = std::min<size_t>(f.vars.size(), f.state_vars);
  if (p.pipeline_error.empty() && p.lowered.vars.size() < state)
    p.pipeline_error = "the pipeline dropped guest vars";
  for (size_t v = 0; p.pipeline_error.empty() && v < state; ++v)
    if (p.lowered.vars[v].type != f.vars[v].type ||
        p.lowered.var_offset(uint32_t(v)) != f.var_offset(uint32_t(v)))
      p.pipeline_error = "the pipeline changed the layout of var " + f.vars[v].name;
  return p;
}

std::unique_ptr<Executable> make_executable(const std::string& engine, const IrProgram& p, std::string& error) {
  const bool reference = engine == "interp";
  if (!reference && !p.pipeline_error.empty()) {
    error = "pipeline failed: " + p.pipeline_error;
    return nullptr;
  }
  const Function& f = reference ? p.original : p.lowered;
  std::unique_ptr<Executable> exe;
  if (engine == "interp" || engine == "interp-pipeline") {
    exe = make_ir_interpreter(f);
  }
  else if (Engine e; parse_engine(engine, e) && e.tier()) {
    if (!e.tier()->available()) {
      error = "engine " + engine + " is not supported by this host";
      return nullptr;
    }
    std::string err;
    exe = e.tier()->compile(f, backend::CompileOptions{}, &err);
    if (!exe) {
      error = "compile failed: " + err;
      return nullptr;
    }
  } else {
    error = "engine " + engine + " is not built into this binary";
    return nullptr;
  }
  if (!exe) error = "engine " + engine + " returned no executable";
  return exe;
}

IrOutcome run_engine(const std::string& engine, const IrProgram& p, const IrState& st, int64_t budget) {
  IrOutcome out;
  const Function& f = engine == "interp" ? p.original : p.lowered;
  std::unique_ptr<Executable> exe = make_executable(engine, p, out.error);
  if (!exe) return out;

  // Engines may read the uniform block in whole vectors.
  std::vector<uint8_t> uniforms(rt::align64(std::max<size_t>(st.uniforms.size(), f.uniform_bytes)), 0);
  std::memcpy(uniforms.data(), st.uniforms.data(), st.uniforms.size());
  rt::Memory mem;
  std::string err;
  if (!mem.add_buffer("global", Space::Global, kGlobalBase, kGlobalSize, err)) {
    out.error = "memory: " + err;
    return out;
  }
  std::memcpy(mem.find("global")->data(), st.memory.data(), kGlobalSize);
  for (size_t i = 0; i < st.extra.size(); ++i) {
    const std::string name = "extra" + std::to_string(i);
    if (!mem.add_buffer(name, Space::Global, st.extra[i].base, st.extra[i].bytes.size(), err)) {
      out.error = "memory: " + err;
      return out;
    }
    std::memcpy(mem.find(name)->data(), st.extra[i].bytes.data(), st.extra[i].bytes.size());
  }

  // One warp of one block through the launch path replay and the API use,
  // started from the given vars with the given entry mask (any subset of
  // lanes, which a block shape cannot express: the setup hook sets it).
  rt::LaunchConfig cfg;
  cfg.grid = rt::Dim3{1, 1, 1};
  cfg.block = rt::Dim3{uint32_t(kWarpLanes), 1, 1};
  cfg.vars_bytes = uint32_t(f.vars_bytes());
  cfg.uniforms = uniforms.data();
  cfg.budget = budget;
  // Barriers of a single warp just resume; the bound keeps a broken engine
  // that reports a barrier forever from hanging the fuzzer.
  cfg.max_rounds = kMaxBarrierStops + 1;
  rt::WarpHooks hooks;
  hooks.init = [&](const rt::WarpInfo&, uint8_t* vars) {
    std::memcpy(vars, st.vars.data(), std::min<size_t>(st.vars.size(), cfg.vars_bytes));
  };
  hooks.setup = [&](const rt::WarpInfo&, WarpContext& ctx) { ctx.entry_mask = st.entry_mask; };
  hooks.finish = [&](const rt::WarpInfo&, const uint8_t* vars) {
    out.vars.assign(vars, vars + p.original.vars_bytes());
  };
  // After a fault the vars are what the engine left (compare_outcomes does
  // not look at them, but callers printing a state do).
  hooks.fault = [&](const rt::WarpInfo&, const WarpContext& ctx, rt::LaunchFault&) {
    out.vars.assign(ctx.vars, ctx.vars + p.original.vars_bytes());
  };
  const rt::LaunchResult r = rt::launch(*exe, mem, cfg, hooks);
  if (!r.error.empty()) {
    out.error = "launch: " + r.error;
    return out;
  }
  if (r.fault && r.fault->round_limit) {
    out.error = "more than " + std::to_string(kMaxBarrierStops) + " barrier stops";
    return out;
  }
  out.status = r.fault ? RunStatus::Fault : RunStatus::Done;
  out.fault = r.fault ? r.fault->kind : FaultKind::None;
  out.fault_code = r.fault ? r.fault->code : 0;
  out.memory.assign(mem.find("global")->data(), mem.find("global")->data() + kGlobalSize);
  for (size_t i = 0; i < st.extra.size(); ++i) {
    const uint8_t* d = mem.find("extra" + std::to_string(i))->data();
    out.extra.emplace_back(d, d + st.extra[i].bytes.size());
  }
  return out;
}

std::string compare_outcomes(const Function& f, const IrOutcome& ref, const IrOutcome& got) {
  if (!ref.error.empty()) return "reference failed: " + ref.error;
  if (!got.error.empty()) return got.error;
  auto status_text = [](const IrOutcome& o) {
    if (o.status == RunStatus::Done) return std::string("done");
    if (o.status == RunStatus::Fault) return std::string("fault ") + fault_kind_name(o.fault);
    return std::string("status ") + std::to_string(unsigned(o.status));
  };
  if (ref.status != got.status || (ref.status == RunStatus::Fault && ref.fault != got.fault))
    return "status: expected " + status_text(ref) + ", got " + status_text(got);
  if (ref.status == RunStatus::Fault) {
    if (ref.fault == FaultKind::Trap && ref.fault_code != got.fault_code)
      return "trap code: expected " + std::to_string(ref.fault_code) + ", got " + std::to_string(got.fault_code);
    return "";
  }
  for (uint32_t v = 0; v < f.vars.size(); ++v) {
    Type t = f.vars[v].type;
    for (int l = 0; l < kWarpLanes; ++l) {
      uint32_t off = f.var_offset(v) + l * lane_bytes(t);
      uint64_t a = get_lane(ref.vars, off, lane_bytes(t)), b = get_lane(got.vars, off, lane_bytes(t));
      if (a != b)
        return "var " + f.vars[v].name + " (" + std::string(type_name(t)) + ") lane " + std::to_string(l) +
               ": expected " + hex(a) + ", got " + hex(b);
    }
  }
  for (uint32_t i = 0; i < kGlobalSize; ++i)
    if (ref.memory[i] != got.memory[i]) {
      uint32_t w = i & ~7u;
      return "memory " + hex(kGlobalBase + i) + ": expected byte " + hex(ref.memory[i]) + ", got " +
             hex(got.memory[i]) + " (8 bytes at " + hex(kGlobalBase + w) + ": expected " +
             hex(get_lane(ref.memory, w, 8)) + ", got " + hex(get_lane(got.memory, w, 8)) + ")";
    }
  return "";
}

}  // namespace gpurc::fuzz
