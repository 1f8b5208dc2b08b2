// Replay of isa "ir" (a gpurc extension): the program is IR text, per-thread
// guest state is the function's vars, the uniform block is state.uniforms.
// The worked example of an ISA module's replay handler: the document is read
// with isa/replay_doc.h, the program compiled by the engine handle it is
// given, and run through rt::launch.
#include <chrono>
#include <cstring>
#include <mutex>

#include "frontend/ir/module/module.h"
#include "ir/interp.h"
#include "ir/ir.h"
#include "isa/lane_count.h"
#include "runtime/thread_pool.h"

namespace gpurc::ir_isa {

using namespace replay;

namespace {

using Clock = std::chrono::steady_clock;

// Where each thread's initial value of a var comes from.
struct VarInit {
  uint32_t var = 0;
  int thread_source = -1;       // index into kThreadSources; -1 = per-thread bytes below
  std::vector<uint8_t> bytes;   // threads * lane_bytes
};

const char* kThreadSources[] = {"global_x", "global_y", "global_z", "local_x", "local_y", "local_z",
                                "block_x", "block_y", "block_z", "global_id", "local_id", "block_id",
                                "block_dim_x", "block_dim_y", "block_dim_z", "grid_dim_x", "grid_dim_y",
                                "grid_dim_z"};

// `src` indexes kThreadSources.
uint64_t thread_value(int src, const rt::LaunchConfig& cfg, const rt::WarpInfo& w, unsigned l) {
  const rt::Dim3& t = w.thread[l];
  const rt::Dim3& b = w.block;
  uint64_t local_id = w.thread_linear(l), per_block = cfg.block.count();
  switch (src) {
    case 0: return uint64_t(b.x) * cfg.block.x + t.x;
    case 1: return uint64_t(b.y) * cfg.block.y + t.y;
    case 2: return uint64_t(b.z) * cfg.block.z + t.z;
    case 3: return t.x;
    case 4: return t.y;
    case 5: return t.z;
    case 6: return b.x;
    case 7: return b.y;
    case 8: return b.z;
    case 9: return w.block_linear * per_block + local_id;
    case 10: return local_id;
    case 11: return w.block_linear;
    case 12: return cfg.block.x;
    case 13: return cfg.block.y;
    case 14: return cfg.block.z;
    case 15: return cfg.grid.x;
    case 16: return cfg.grid.y;
    default: return cfg.grid.z;
  }
}

int find_var(const ir::Function& f, const std::string& name) {
  for (size_t i = 0; i < f.vars.size(); ++i)
    if (f.vars[i].name == name) return int(i);
  return -1;
}

ElemType observed_type(ir::Type t) {
  switch (t) {
    case ir::Type::F32: return ElemType::F32;
    case ir::Type::F64: return ElemType::F64;
    case ir::Type::I64: return ElemType::U64;
    default: return ElemType::U32;  // 4-byte lanes: i1..i32, f16 (bits)
  }
}

std::vector<VarInit> parse_var_inits(const json& doc, const ir::Function& f, uint64_t threads) {
  std::vector<VarInit> out;
  if (!doc.contains("state") || !doc["state"].contains("vars")) return out;
  const json& vars = doc["state"]["vars"];
  if (!vars.is_object()) throw ReplayError("state.vars: expected an object {\"var\": {...}}");
  for (auto it = vars.begin(); it != vars.end(); ++it) {
    std::string where = "state.vars." + it.key();
    int idx = find_var(f, it.key());
    if (idx < 0) throw ReplayError(where + ": the program has no var named '" + it.key() + "'");
    ir::Type vt = f.vars[size_t(idx)].type;
    unsigned lb = ir::lane_bytes(vt);
    VarInit vi;
    vi.var = uint32_t(idx);
    const json& v = it.value();
    if (v.is_object() && v.size() == 1 && v.contains("thread")) {
      if (!v["thread"].is_string()) throw ReplayError(where + ".thread: expected a string");
      std::string src = v["thread"].get<std::string>();
      for (int k = 0; k < int(std::size(kThreadSources)); ++k)
        if (src == kThreadSources[k]) vi.thread_source = k;
      if (vi.thread_source < 0)
        throw ReplayError(where + ".thread: unknown source \"" + src + "\" (global_x/y/z, local_x/y/z, block_x/y/z, global_id, local_id, block_id, block_dim_x/y/z, grid_dim_x/y/z)");
      if (!ir::is_int(vt) || ir::bit_width(vt) < 32)
        throw ReplayError(where + ".thread: var '" + it.key() + "' is " + std::string(ir::type_name(vt)) + ", not i32 or i64");
    } else {
      if (v.is_object() && v.size() == 1) {
        ElemType et;
        if (parse_elem_type(v.begin().key(), et) && elem_bytes(et) != lb)
          throw ReplayError(where + ": " + elem_type_name(et) + " values do not match var type " +
                            std::string(ir::type_name(vt)) + " (" + std::to_string(lb) + "-byte lanes)");
      }
      vi.bytes = init_bytes(v, threads * lb, where);
      vi.bytes.resize(size_t(threads * lb), 0);
      // Lanes hold canonical values: a narrow type is zero-extended in its lane.
      uint64_t mask = ir::type_mask(vt);
      for (uint64_t t = 0; t < threads; ++t) {
        uint64_t x = 0;
        std::memcpy(&x, vi.bytes.data() + t * lb, lb);
        if (x & ~mask)
          throw ReplayError(where + "[" + std::to_string(t) + "]: value does not fit in " +
                            std::string(ir::type_name(vt)) + " (narrow values are zero-extended, i1 is 0 or 1)");
      }
    }
    out.push_back(std::move(vi));
  }
  return out;
}

std::vector<uint8_t> parse_uniforms(const json& doc, const ir::Function& f) {
  std::vector<uint8_t> out;
  if (doc.contains("state") && doc["state"].contains("uniforms")) {
    const json& u = doc["state"]["uniforms"];
    if (u.is_array()) {
      TypedValues tv;
      for (size_t i = 0; i < u.size(); ++i) tv.bits.push_back(parse_elem(u[i], ElemType::U32, "state.uniforms[" + std::to_string(i) + "]"));
      out = to_bytes(tv);
    } else if (u.is_object() && u.size() == 1 && u.contains("bytes")) {
      if (!u["bytes"].is_string()) throw ReplayError("state.uniforms.bytes: expected a hex string");
      out = parse_hex_bytes(u["bytes"].get<std::string>(), "state.uniforms.bytes");
    } else {
      out = to_bytes(parse_typed(u, "state.uniforms"));
    }
  }
  if (out.size() < f.uniform_bytes) out.resize(f.uniform_bytes, 0);
  out.resize(rt::align64(out.size()), 0);  // engines may read whole vectors
  return out;
}

struct Prepared {
  ir::Function f;
  rt::LaunchConfig cfg;
  std::vector<VarInit> inits;
  std::vector<uint8_t> uniforms;
  uint64_t threads = 0;
};

Prepared prepare(const isa::ReplayJob& job) {
  Prepared p;
  const json& doc = job.doc;
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    static const char* known[] = {"gpurc", "isa", "variant", "name", "program", "launch", "state", "memory", "expect", "output", "description"};
    bool ok = false;
    for (const char* k : known) ok |= it.key() == k;
    if (!ok) throw ReplayError(it.key() + ": unknown field for isa ir");
  }
  std::string text = program_text(doc, job.dir);
  std::string err;
  if (!ir::parse(text, p.f, err)) throw ReplayError("program: " + err);
  if (std::string v = ir::verify(p.f); !v.empty()) throw ReplayError("program: invalid IR: " + v);
  p.cfg = parse_launch(doc.contains("launch") ? doc["launch"] : json::object());
  p.threads = p.cfg.grid.count() * p.cfg.block.count();
  if (std::string e = rt::check_memory(p.threads * (p.f.vars_bytes() / ir::kWarpLanes + 8),
                                       "launch: the per-thread state of " + std::to_string(p.threads) + " threads");
      !e.empty())
    throw ReplayError(e);
  if (doc.contains("memory") && doc["memory"].is_array())
    for (const json& b : doc["memory"])
      if (b.is_object() && b.contains("space") && b["space"] == "shared" && p.cfg.shared_bytes)
        throw ReplayError("memory: buffer '" + b.value("name", std::string("?")) +
                          "' is in space shared, but launch.shared_bytes gives every block its own shared memory at 0");
  p.inits = parse_var_inits(doc, p.f, p.threads);
  p.uniforms = parse_uniforms(doc, p.f);
  return p;
}

// Runs `exe` over the launch; per-thread final values of vars [0, nvars) are
// stored in `finals[var]` (threads * lane_bytes each) when given.
rt::LaunchResult run_launch(const Prepared& p, const ir::Function& layout, const ir::Executable& exe,
                            uint32_t vars_bytes, rt::Memory& mem, unsigned threads,
                            std::vector<std::vector<uint8_t>>* finals) {
  rt::LaunchConfig cfg = p.cfg;
  cfg.vars_bytes = vars_bytes;
  cfg.uniforms = p.uniforms.data();
  uint64_t per_block = cfg.block.count();
  std::vector<uint32_t> offs;
  for (uint32_t i = 0; i < layout.vars.size(); ++i) offs.push_back(layout.var_offset(i));
  // Lanes are 4 or 8 bytes: fixed-size copies (a variable size would be a
  // library call per lane).
  auto copy_lane = [](uint8_t* dst, const void* src, unsigned lb) {
    if (lb == 8) std::memcpy(dst, src, 8);
    else std::memcpy(dst, src, 4);
  };
  auto init = [&](const rt::WarpInfo& w, uint8_t* vars) {
    const uint64_t gid0 = w.block_linear * per_block + w.thread_linear(0);
    for (const VarInit& vi : p.inits) {
      unsigned lb = ir::lane_bytes(p.f.vars[vi.var].type);
      uint8_t* slot = vars + offs[vi.var];
      if (vi.thread_source < 0) {  // consecutive threads of a warp: one copy
        std::memcpy(slot, vi.bytes.data() + gid0 * lb, size_t(w.lanes) * lb);
        continue;
      }
      if (vi.thread_source == 9 || vi.thread_source == 10) {  // global / local linear id: consecutive
        uint64_t v0 = thread_value(vi.thread_source, cfg, w, 0);
        if (lb == 8) {
          for (unsigned l = 0; l < w.lanes; ++l) {
            uint64_t v = v0 + l;
            std::memcpy(slot + l * 8, &v, 8);
          }
        } else {
          for (unsigned l = 0; l < w.lanes; ++l) {
            uint32_t v = uint32_t(v0 + l);
            std::memcpy(slot + l * 4, &v, 4);
          }
        }
        continue;
      }
      for (unsigned l = 0; l < w.lanes; ++l) {
        uint64_t v = thread_value(vi.thread_source, cfg, w, l);
        copy_lane(slot + l * lb, &v, lb);
      }
    }
  };
  auto finish = [&](const rt::WarpInfo& w, const uint8_t* vars) {
    if (!finals) return;
    const uint64_t gid0 = w.block_linear * per_block + w.thread_linear(0);
    for (size_t v = 0; v < finals->size(); ++v) {
      unsigned lb = ir::lane_bytes(layout.vars[v].type);
      // The warp's threads are consecutive: one copy, disjoint per warp.
      std::memcpy((*finals)[v].data() + gid0 * lb, vars + offs[v], size_t(w.lanes) * lb);
    }
  };
  return rt::launch(exe, mem, cfg, init, finish, threads == 1 ? nullptr : &rt::ThreadPool::shared(threads));
}

}  // namespace

void replay(const isa::ReplayJob& job, ReplayRun& run) {
  Prepared p = prepare(job);
  isa::Compiled compiled;
  std::string err;
  if (!job.engine.compile(p.f, "gpurc_jit", compiled, err)) throw ReplayError("program: " + err);
  run.compile_us = compiled.compile_us;

  rt::Memory mem;
  load_memory(job.doc, mem);
  std::vector<std::vector<uint8_t>> finals(p.f.vars.size());
  for (size_t v = 0; v < finals.size(); ++v) finals[v].assign(size_t(p.threads * ir::lane_bytes(p.f.vars[v].type)), 0);
  auto t0 = Clock::now();
  rt::LaunchResult r = run_launch(p, p.f, *compiled.exe, compiled.vars_bytes, mem, job.threads, &finals);
  run.run_us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
  if (!r.error.empty()) throw ReplayError(r.error);
  if (r.fault) {
    run.fault = r.fault->describe();
    run.fault_kind = rt::fault_kind_name(r.fault->kind);
  }
  for (const auto& b : mem.buffers())
    run.observed.push_back(Observed{"memory", b->name, b->size % 4 ? ElemType::U8 : ElemType::U32,
                                    std::vector<uint8_t>(b->data(), b->data() + b->size)});
  for (size_t v = 0; v < finals.size(); ++v)
    run.observed.push_back(Observed{"vars", p.f.vars[v].name, observed_type(p.f.vars[v].type), std::move(finals[v])});

  if (job.count_instructions && !r.fault) {
    uint32_t counter = 0;
    ir::Function counted = instrument_lane_count(p.f, counter);
    auto exe = ir::make_ir_interpreter(counted);
    rt::Memory scratch;
    load_memory(job.doc, scratch);
    std::vector<std::vector<uint8_t>> all(counted.vars.size());
    for (size_t v = 0; v < all.size(); ++v) all[v].assign(size_t(p.threads * ir::lane_bytes(counted.vars[v].type)), 0);
    rt::LaunchResult cr = run_launch(p, counted, *exe, counted.vars_bytes(), scratch, job.threads, &all);
    if (cr.ok()) {
      uint64_t total = 0;
      for (uint64_t t = 0; t < p.threads; ++t) {
        uint64_t c;
        std::memcpy(&c, all[counter].data() + t * 8, 8);
        total += c;
      }
      run.guest_instructions = total;
    }
  }
}

}  // namespace gpurc::ir_isa
