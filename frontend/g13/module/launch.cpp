#include "frontend/g13/module/launch.h"

#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>

#include "frontend/g13/reference.h"
#include "frontend/g13/translate.h"
#include "runtime/thread_pool.h"

namespace gpurc {

namespace {

using Clock = std::chrono::steady_clock;

// The thread coordinates of a SIMD-group's lanes, one array per axis; zero
// past the launched lanes (what every special register built from them
// holds there). Filled by coords_of_*; special_from_coords reads it only
// for the registers needs_coords names.
struct LaneCoords {
  std::array<uint32_t, g13::SimdGroup::kLanes> x, y, z;
};

// From WarpInfo::thread (filled by the launch).
void coords_of_info(const rt::WarpInfo& w, LaneCoords& c) {
  for (unsigned l = 0; l < g13::SimdGroup::kLanes; ++l) {
    const bool on = l < w.lanes;
    c.x[l] = on ? w.thread[l].x : 0;
    c.y[l] = on ? w.thread[l].y : 0;
    c.z[l] = on ? w.thread[l].z : 0;
  }
}

// From the SIMD-group's index and the threadgroup's shape (x-major), as the
// launch numbers threads: for a launch that does not fill WarpInfo::thread
// (rt::LaunchConfig::thread_coords).
void coords_of_index(const rt::Dim3& block, const rt::WarpInfo& w, LaneCoords& c) {
  const uint64_t first = uint64_t(w.warp) * g13::SimdGroup::kLanes;
  uint32_t x = uint32_t(first % block.x), y = uint32_t(first / block.x % block.y),
           z = uint32_t(first / (uint64_t(block.x) * block.y));
  if (x + w.lanes <= block.x) {  // one row: fixed-length loops the compiler vectorises
    for (unsigned l = 0; l < g13::SimdGroup::kLanes; ++l) {
      const bool on = l < w.lanes;
      c.x[l] = on ? x + l : 0;
      c.y[l] = on ? y : 0;
      c.z[l] = on ? z : 0;
    }
    return;
  }
  c.x.fill(0), c.y.fill(0), c.z.fill(0);
  for (unsigned l = 0; l < w.lanes; ++l) {
    c.x[l] = x, c.y[l] = y, c.z[l] = z;
    if (++x == block.x) {
      x = 0;
      if (++y == block.y) y = 0, ++z;
    }
  }
}

// Special register `sr` of SIMD-group `w` from its lanes' coordinates `c`.
bool special_from_coords(const rt::Dim3& block, const rt::WarpInfo& w, const LaneCoords& c, unsigned sr,
                         std::array<uint32_t, 32>& out) {
  auto splat = [&](uint32_t v) { out.fill(v); };
  // Lanes past the end of a partial SIMD-group are not launched: zero
  // (their coordinates are zero), the grid positions the group's origin.
  auto grid_pos = [&](uint32_t b, uint32_t size, const std::array<uint32_t, 32>& t) {
    for (unsigned l = 0; l < g13::SimdGroup::kLanes; ++l) out[l] = b * size + t[l];
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
    case 48: out = c.x; return true;
    case 49: out = c.y; return true;
    case 50: out = c.z; return true;
    case 51:
      for (unsigned l = 0; l < g13::SimdGroup::kLanes; ++l) out[l] = l < w.lanes ? uint32_t(w.thread_linear(l)) : 0;
      return true;
    case 80: grid_pos(w.block.x, block.x, c.x); return true;
    case 81: grid_pos(w.block.y, block.y, c.y); return true;
    case 82: grid_pos(w.block.z, block.z, c.z); return true;
    default: return false;
  }
}

// The special registers built from lane coordinates.
bool needs_coords(unsigned sr) { return (sr >= 48 && sr <= 50) || (sr >= 80 && sr <= 82); }


// The special registers a compute launch provides (launch.h), in one list.
constexpr unsigned kLaunchSpecials[] = {0, 1, 2, 4, 5, 6, 8, 9, 10, 20, 21, 48, 49, 50, 51, 53, 80, 81, 82};

// Tells one run_g13's per-thread records (result state) from another's.
std::atomic<uint64_t> next_launch_id{1};

// A SIMD-group at the start of a launch, in place: zero registers (the
// launch zeroed them), the launch's uniforms, every launched lane active and
// the special registers a launch provides.
void init_group(const G13Launch& L, const rt::WarpInfo& w, g13::SimdGroup& sg) {
  sg.uniforms = L.uniforms;
  sg.launched = w.entry_mask;
  sg.pc = L.entry;
  sg.recompute_exec();
  g13_fill_special(L.grid, L.block, w, sg);
}

std::string interp_fault_text(const std::string& message, const rt::WarpInfo& w) {
  return message + " (threadgroup (" + std::to_string(w.block.x) + "," + std::to_string(w.block.y) + "," +
         std::to_string(w.block.z) + ") simdgroup " + std::to_string(w.warp) + ")";
}

// Without stacks (stack_bytes 0) Space::Local is refused, as with empty
// stacks (every stack access faults), rather than sent to the launch's
// memory: one g13::StackMemory of no bytes in front of the launch's memory
// per SIMD-group, kept per host thread for its next threadgroup.
ir::GuestMemory* no_stacks(const rt::WarpInfo& w, ir::GuestMemory& fallback) {
  thread_local std::vector<std::unique_ptr<g13::StackMemory>> mems;
  if (mems.size() <= w.warp) mems.resize(w.warp + 1);
  std::unique_ptr<g13::StackMemory>& m = mems[w.warp];
  if (!m) m = std::make_unique<g13::StackMemory>();
  m->reset(&fallback, 0);
  return m.get();
}

rt::LaunchConfig base_config(const G13Launch& L) {
  rt::LaunchConfig cfg;
  cfg.grid = L.grid;
  cfg.block = L.block;
  cfg.shared_bytes = L.shared_bytes;
  cfg.stack_bytes = L.stack_bytes;
  cfg.stack_stride = L.stack_bytes ? g13::kStackStride : 0;
  cfg.budget = L.budget;
  cfg.warp_loop = L.warp_loop;
  cfg.grid_loop = L.grid_loop;
  return cfg;
}

// A translation with what its launches need, worked out once.
struct JitProgram {
  ir::Function f;
  isa::Compiled compiled;
  std::vector<uint8_t> uniforms;  // the uniform block, padded for vector loads
  g13::VarLayout layout;          // g13::var_layout(f): what pack_vars/unpack_vars copy
  std::vector<unsigned> specials; // the special registers the translation reads (its "srK" vars)
  // Every SIMD-group starts with the same registers and uniforms: the
  // uniform vars are packed once (`image`) and copied (`uniform_ranges`);
  // the registers start at zero, which the launch's zeroing of what the code
  // reads already gives (a register the code only writes is stored before
  // finish reads it), so they are neither packed nor copied. Only exec and
  // the special registers are packed per SIMD-group (g13::pack_group_vars,
  // from `group_layout`: `layout` with only those vars).
  std::vector<uint8_t> image;
  std::vector<std::pair<uint32_t, uint32_t>> uniform_ranges;
  g13::VarLayout group_layout;
  bool reads_coords = false;  // a special register of group_layout is built from lane coordinates
  bool uses_local = false;    // a load, store or atomic of Space::Local (the stack) in the translation
};

bool uses_space(const ir::Function& f, ir::Space space) {
  for (const ir::Inst& in : f.insts) {
    if (in.block == ir::kNoBlock) continue;
    if ((in.op == ir::Opcode::Load || in.op == ir::Opcode::Store) && ir::mem_space(in.attr) == space) return true;
    if ((in.op == ir::Opcode::AtomicRmw || in.op == ir::Opcode::AtomicCas) && in.imm == uint64_t(space)) return true;
  }
  return false;
}

bool prepare(const G13Launch& L, const isa::EngineHandle& engine, bool observes_registers, JitProgram& prog,
             std::string& error) {
  // The translation starts at the entry: branch targets are pc-relative.
  std::string err;
  // A launch starts every SIMD-group with zero registers and exec = its
  // launched lanes (launch_jit's init). Without a finish callback nothing
  // reads them afterwards: they stay private to the generated code (no
  // loads, no final stores, no zeroing of their vars by the launch).
  g13::TranslateOptions topt;
  topt.exec_starts_launched = true;
  topt.registers_unobserved = !observes_registers;
  if (!g13::translate(L.code.data() + L.entry, L.code.size() - L.entry, prog.f, err, topt)) {
    error = err;
    return false;
  }
  g13::SimdGroup probe;
  g13_fill_special(L.grid, L.block, rt::warp_info(L.grid, L.block, 0, 0), probe);
  if (int sr = g13::missing_special(probe, prog.f); sr >= 0) {
    error = "program: reads special register sr" + std::to_string(sr) + ", which a compute launch does not provide";
    return false;
  }
  if (!engine.compile(prog.f, "gpurc_g13", prog.compiled, err)) {
    error = "program: " + err;
    return false;
  }
  prog.layout = g13::var_layout(prog.f);
  for (const g13::VarLayout::Var& v : prog.layout.vars)
    if (v.kind == g13::VarLayout::Kind::Special) prog.specials.push_back(v.index);
  prog.uniforms.assign(ir::align64(std::max<size_t>(g13::kUniformBytes, prog.f.uniform_bytes)), 0);
  probe.uniforms = L.uniforms;
  g13::pack_uniforms(probe, prog.uniforms.data());
  // The start state's registers (zero) and uniforms.
  auto start = std::make_unique<g13::SimdGroup>();
  start->uniforms = L.uniforms;
  start->pc = L.entry;
  prog.image.assign(prog.layout.bytes, 0);
  g13::pack_vars(*start, prog.layout, prog.image.data());
  for (const g13::VarLayout::Var& v : prog.layout.vars)
    if (v.kind == g13::VarLayout::Kind::Uniform && (v.read || v.written)) {
      const uint32_t slot_end = v.offset + g13::SimdGroup::kLanes * 4;  // every var: 32 lanes of 4 bytes
      if (!prog.uniform_ranges.empty() && prog.uniform_ranges.back().second == v.offset)
        prog.uniform_ranges.back().second = slot_end;
      else
        prog.uniform_ranges.emplace_back(v.offset, slot_end);
    }
  prog.group_layout.bytes = prog.layout.bytes;
  for (const g13::VarLayout::Var& v : prog.layout.vars)
    if ((v.read || v.written) && (v.kind == g13::VarLayout::Kind::Exec || v.kind == g13::VarLayout::Kind::Special))
      prog.group_layout.vars.push_back(v);
  for (const g13::VarLayout::Var& v : prog.group_layout.vars)
    if (v.kind == g13::VarLayout::Kind::Special && needs_coords(v.index)) prog.reads_coords = true;
  prog.uses_local = uses_space(prog.f, ir::Space::Local);
  return true;
}

// The reference interpreter: each SIMD-group's g13::ReferenceState lives in
// its vars (zeroed by the launch, so its registers start at zero).
rt::LaunchResult launch_reference(const G13Launch& L, rt::Memory& memory, rt::ThreadPool* pool,
                                  const G13Finish& finish, std::atomic<uint64_t>* lanes) {
  g13::ReferenceExecutable exe(L.code, lanes);
  rt::LaunchConfig cfg = base_config(L);
  cfg.vars_bytes = uint32_t(sizeof(g13::ReferenceState));
  // init writes what finish reads besides the registers (zeroed: the
  // executable's var_read_ranges).
  cfg.init_writes_finish_reads = true;
  rt::WarpHooks hooks;
  hooks.init = [&](const rt::WarpInfo& w, uint8_t* vars) {
    init_group(L, w, reinterpret_cast<g13::ReferenceState*>(vars)->sg);
  };
  if (finish)
    hooks.finish = [&](const rt::WarpInfo& w, const uint8_t* vars) {
      finish(w, reinterpret_cast<const g13::ReferenceState*>(vars)->sg);
    };
  if (!L.stack_bytes) hooks.memory = [](const rt::WarpInfo& w, ir::GuestMemory& fallback, ir::WarpContext&) {
    return no_stacks(w, fallback);
  };
  // The interpreter's words; an error (an instruction it cannot run) is
  // FaultKind::Unsupported, which the interpreter never faults with.
  hooks.fault = [](const rt::WarpInfo& w, const ir::WarpContext& ctx, rt::LaunchFault& f) {
    const g13::ReferenceState& st = *reinterpret_cast<const g13::ReferenceState*>(ctx.vars);
    f.detail = st.stop == g13::StepResult::Kind::Error ? std::string(st.message) : interp_fault_text(st.message, w);
  };
  return rt::launch(exe, memory, cfg, hooks, pool);
}

// The per-lane addends of the warp loop's lane vars (rt::LaneVarsPlan).
struct alignas(64) LaneArrays {
  uint32_t iota[g13::SimdGroup::kLanes], zero[g13::SimdGroup::kLanes], one[g13::SimdGroup::kLanes];
};

// What launch_jit's init writes into a full SIMD-group, as data (the warp
// loop, docs/runtime.md): the uniform vars from the packed image (base 0,
// the image's lanes as addends), exec (every lane launched: 1) and the
// special registers, each an affine function of the lane in a SIMD-group
// that lies in one row of its threadgroup (block.x a multiple of 32, or one
// row). False: no plan (the per-warp path).
bool lane_vars_plan(const G13Launch& L, const JitProgram& P, LaneArrays& a, rt::LaneVarsPlan& plan) {
  if (L.block.x % g13::SimdGroup::kLanes != 0 && L.block.y * L.block.z != 1) return false;
  for (unsigned i = 0; i < g13::SimdGroup::kLanes; ++i) a.iota[i] = i, a.zero[i] = 0, a.one[i] = 1;
  auto bytes = [](const auto* x) { return reinterpret_cast<const uint8_t*>(x); };
  // Per lane var, how its base is made: a constant (uniform vars, exec and
  // the launch constants) or one of the per-SIMD-group values below.
  enum Base : uint8_t { kConst, kBlockX, kBlockY, kBlockZ, kWarp, kX0, kY0, kZ0, kThread0, kGridX, kGridY, kGridZ };
  struct Rule { Base base; uint32_t constant; };
  std::vector<Rule> rules;
  for (const auto& [begin, end] : P.uniform_ranges)
    for (uint32_t o = begin; o < end; o += 4 * g13::SimdGroup::kLanes) {
      plan.vars.push_back({o, 4, P.image.data() + o, nullptr});
      rules.push_back({kConst, 0});
    }
  for (const g13::VarLayout::Var& v : P.group_layout.vars) {
    if (v.kind == g13::VarLayout::Kind::Exec) {
      plan.vars.push_back({v.offset, 4, bytes(a.one), nullptr});
      rules.push_back({kConst, 0});
      continue;
    }
    Rule r{kConst, 0};
    const uint32_t* add = a.zero;
    switch (v.index) {
      case 0: r.base = kBlockX; break;
      case 1: r.base = kBlockY; break;
      case 2: r.base = kBlockZ; break;
      case 4: case 8: r.constant = L.block.x; break;
      case 5: case 9: r.constant = L.block.y; break;
      case 6: case 10: r.constant = L.block.z; break;
      case 20: case 21: break;
      case 53: r.base = kWarp; break;
      case 48: r.base = kX0, add = a.iota; break;
      case 49: r.base = kY0; break;
      case 50: r.base = kZ0; break;
      case 51: r.base = kThread0, add = a.iota; break;
      case 80: r.base = kGridX, add = a.iota; break;
      case 81: r.base = kGridY; break;
      case 82: r.base = kGridZ; break;
      default: return false;  // not a launch register (prepare() refused the program already)
    }
    plan.vars.push_back({v.offset, 4, bytes(add), nullptr});
    rules.push_back(r);
  }
  // The split form (rt::LaneVarsPlan): constants and the SIMD-group's own
  // coordinates are the same in every threadgroup, the threadgroup's
  // position is added per threadgroup.
  const rt::Dim3 shape = L.block, grid = L.grid;
  const uint32_t full = uint32_t(shape.count() / g13::SimdGroup::kLanes);
  plan.warp_bases.reserve(size_t(full) * rules.size());
  uint32_t x0 = 0, y0 = 0, z0 = 0;  // the SIMD-group's first thread, counted on (a full group lies in one row)
  for (uint32_t w = 0; w < full; ++w) {
    if (w != 0) {
      x0 += g13::SimdGroup::kLanes;
      if (x0 >= shape.x) {
        x0 = 0;
        if (++y0 == shape.y) y0 = 0, ++z0;
      }
    }
    for (const Rule& r : rules) {
      uint32_t v = r.constant;
      switch (r.base) {
        case kConst: break;
        case kBlockX: case kBlockY: case kBlockZ: v = 0; break;
        case kWarp: v = w; break;
        case kX0: case kGridX: v = x0; break;
        case kY0: case kGridY: v = y0; break;
        case kZ0: case kGridZ: v = z0; break;
        case kThread0: v = w * g13::SimdGroup::kLanes; break;
      }
      plan.warp_bases.push_back(v);
    }
  }
  plan.block_bases = [rules, shape, grid](const rt::Dim3& first, uint64_t, uint32_t count, uint64_t* out) {
    rt::Dim3 b = first;
    for (uint32_t k = 0; k < count; ++k, rt::next_block(b, grid))
      for (const Rule& r : rules) {
        uint32_t v = 0;
        switch (r.base) {
          case kBlockX: v = b.x; break;
          case kBlockY: v = b.y; break;
          case kBlockZ: v = b.z; break;
          case kGridX: v = b.x * shape.x; break;
          case kGridY: v = b.y * shape.y; break;
          case kGridZ: v = b.z * shape.z; break;
          default: break;
        }
        *out++ = v;
      }
  };
  return true;
}

// A compiled translation: the uniforms packed once and copied per
// SIMD-group (the registers start at zero: the launch zeroes what the code reads), exec and the special registers from a start state per host
// thread (its registers stay zero: recompute_exec reads r0l), unpacked for
// `finish` into a result state per host thread and launch (zeroed registers:
// unpack_vars writes only the vars the program writes).
rt::LaunchResult launch_jit(const G13Launch& L, const JitProgram& P, rt::Memory& memory, rt::ThreadPool* pool,
                            const G13Finish& finish) {
  rt::LaunchConfig cfg = base_config(L);
  cfg.vars_bytes = uint32_t(std::max<size_t>(P.compiled.vars_bytes, P.layout.bytes));
  cfg.uniforms = P.uniforms.data();
  // init packs every var the translation reads or writes except those the
  // finish unpack reads only after the program wrote them.
  cfg.init_writes_finish_reads = true;
  rt::WarpHooks hooks;
  // Straight into the vars, as g13::pack_group_vars would write them from a
  // start state: exec is every launched lane (the start state's r0l is 0,
  // so recompute_exec keeps all of them), a special register its 32 lanes.
  // Without a finish callback nobody reads WarpInfo::thread: the lane
  // coordinates come from the SIMD-group's index (coords_of_index), and only
  // when the program reads a special register built from them.
  cfg.thread_coords = bool(finish);
  hooks.init = [&](const rt::WarpInfo& w, uint8_t* vars) {
    for (const auto& [begin, end] : P.uniform_ranges) std::memcpy(vars + begin, P.image.data() + begin, end - begin);
    LaneCoords c;
    if (P.reads_coords) {
      if (cfg.thread_coords) coords_of_info(w, c);
      else coords_of_index(L.block, w, c);
    }
    for (const g13::VarLayout::Var& v : P.group_layout.vars) {
      std::array<uint32_t, g13::SimdGroup::kLanes> x;
      if (v.kind == g13::VarLayout::Kind::Exec) {
        for (unsigned l = 0; l < g13::SimdGroup::kLanes; ++l) x[l] = w.entry_mask >> l & 1;
      } else if (!special_from_coords(L.block, w, c, v.index, x)) {
        continue;  // not a launch register: prepare() refused the program already
      }
      std::memcpy(vars + v.offset, x.data(), sizeof x);
    }
  };
  const uint64_t id = next_launch_id++;
  if (finish)
    hooks.finish = [&, id](const rt::WarpInfo& w, const uint8_t* vars) {
      thread_local std::unique_ptr<g13::SimdGroup> result;
      thread_local uint64_t result_id = 0;
      if (!result) result = std::make_unique<g13::SimdGroup>();
      if (result_id != id) {
        result_id = id;
        result->regs = {};
        result->uniforms = L.uniforms;
      }
      g13::SimdGroup& r = *result;
      r.launched = r.exec = w.entry_mask;  // the start state's exec, unless the program wrote it
      g13::unpack_vars(vars, P.layout, r);
      finish(w, r);
    };
  // Code that never touches Space::Local needs no refusing stack object.
  if (!L.stack_bytes && P.uses_local) hooks.memory = [](const rt::WarpInfo& w, ir::GuestMemory& fallback, ir::WarpContext&) {
    return no_stacks(w, fallback);
  };
  LaneArrays arrays;
  rt::LaneVarsPlan plan;
  if (!finish && !hooks.memory && lane_vars_plan(L, P, arrays, plan)) hooks.lane_vars = &plan;
  return rt::launch(*P.compiled.exe, memory, cfg, hooks, pool);
}

class ReferenceEngine final : public isa::EngineHandle {
 public:
  std::string name() const override { return "interp"; }
  bool is_reference() const override { return true; }
  bool compile(const ir::Function&, const std::string&, isa::Compiled&, std::string& err) const override {
    err = "the reference engine runs the G13 interpreter, not IR";
    return false;
  }
};

}  // namespace

const isa::EngineHandle& g13_reference_engine() {
  static const ReferenceEngine e;
  return e;
}


bool g13_special(const rt::Dim3& block, const rt::WarpInfo& w, unsigned sr, std::array<uint32_t, 32>& out) {
  LaneCoords c;
  if (needs_coords(sr)) coords_of_info(w, c);
  return special_from_coords(block, w, c, sr, out);
}

void g13_fill_special(const rt::Dim3& grid, const rt::Dim3& block, const rt::WarpInfo& w, g13::SimdGroup& sg) {
  (void)grid;
  for (unsigned sr : kLaunchSpecials) g13_special(block, w, sr, sg.set_special(sr));
}

G13Result run_g13(const G13Launch& L, const isa::EngineHandle& engine, rt::Memory& memory, unsigned threads,
                  const G13Finish& finish, bool count_instructions) {
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
  JitProgram prog;
  const bool jit = !engine.is_reference();
  if (jit) {
    if (!prepare(L, engine, bool(finish), prog, res.error)) return res;
    res.compile_us = prog.compiled.compile_us;
  }
  const unsigned nthreads = threads ? threads : rt::ThreadPool::host_cores();
  rt::ThreadPool* pool = nthreads > 1 ? &rt::ThreadPool::shared(nthreads) : nullptr;
  std::atomic<uint64_t> lanes{0};
  const auto t0 = Clock::now();
  rt::LaunchResult r = jit ? launch_jit(L, prog, memory, pool, finish)
                           : launch_reference(L, memory, pool, finish, count_instructions ? &lanes : nullptr);
  res.run_us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
  res.lane_instructions = lanes;
  if (!r.error.empty()) {
    res.error = r.error;
  } else if (r.fault) {
    rt::LaunchFault f = *r.fault;
    if (!jit && f.kind == ir::FaultKind::Unsupported) {
      res.error = f.detail;  // an instruction the interpreter cannot run
    } else {
      res.fault_message = jit ? f.describe() : f.detail;
      f.detail.clear();
      res.fault = f;
    }
  }
  return res;
}

}  // namespace gpurc
