// One PICA200 fuzz case on the reference interpreter and on an engine of its
// translation (fuzz_run.h), both through rt::launch. See docs/fuzzing.md
// ("PICA200").
#include "frontend/pica200/module/fuzz_run.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>

#include "frontend/pica200/module/launch.h"
#include "isa/fuzz_values.h"
#include "runtime/launch.h"
#include "runtime/memory.h"

namespace gpurc::fuzz {

using json = nlohmann::ordered_json;
using pica::fp::bits;

namespace {

constexpr size_t kWarp = 32;
// Far above what generated programs execute (a few thousand steps at most);
// reaching it means a stale-frame program that would take the JIT engines
// ages to hit their watchdog, so such a program is skipped.
constexpr uint64_t kReferenceBudget = 1u << 20;
// The engines' watchdog budget per warp: far above what the generated
// programs' bounded loops need (the IR fuzzer's kFuzzBudget).
constexpr int64_t kEngineBudget = int64_t(1) << 32;
// PICA200 code has no barriers; a broken engine that reports one forever
// stops after this many (the IR fuzzer's bound).
constexpr uint64_t kMaxBarrierStops = 1000;

std::string hex32(uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%08X", v);
  return b;
}

const char* kComp = "xyzw";

// First difference between two vertex end states, or "".
std::string compare_vertex(size_t k, const pica::VertexState& want, const pica::VertexState& got) {
  const std::string at = "vertex " + std::to_string(k) + " ";
  auto regs = [&](const char* name, const std::array<pica::Vec4, 16>& a,
                  const std::array<pica::Vec4, 16>& b) -> std::string {
    for (size_t n = 0; n < 16; ++n)
      for (size_t c = 0; c < 4; ++c)
        if (bits(a[n][c]) != bits(b[n][c]))
          return at + name + std::to_string(n) + "." + kComp[c] + ": expected " + hex32(bits(a[n][c])) +
                 ", got " + hex32(bits(b[n][c]));
    return "";
  };
  for (auto d : {regs("o", want.o, got.o), regs("r", want.r, got.r), regs("v", want.v, got.v)})
    if (!d.empty()) return d;
  auto scalar = [&](const char* name, int64_t a, int64_t b) -> std::string {
    if (a == b) return "";
    return at + name + ": expected " + std::to_string(a) + ", got " + std::to_string(b);
  };
  for (auto d : {scalar("a0.x", want.a0x, got.a0x), scalar("a0.y", want.a0y, got.a0y), scalar("aL", want.aL, got.aL),
                 scalar("cmp.x", want.cmpx, got.cmpx), scalar("cmp.y", want.cmpy, got.cmpy)})
    if (!d.empty()) return d;
  return "";
}

// First difference between two geometry emission states, or "".
std::string compare_gs(size_t k, const pica::GsState& want, const pica::GsState& got) {
  const std::string at = "vertex " + std::to_string(k) + " geometry ";
  if (want.emits != got.emits)
    return at + "emits: expected " + std::to_string(want.emits) + ", got " + std::to_string(got.emits);
  if (want.vtxid != got.vtxid || want.prim != got.prim || want.winding != got.winding)
    return at + "SETEMIT latch differs";
  auto vertex = [&](const std::string& what, const std::array<pica::Vec4, 16>& a,
                    const std::array<pica::Vec4, 16>& b) -> std::string {
    for (size_t n = 0; n < 16; ++n)
      for (size_t c = 0; c < 4; ++c)
        if (bits(a[n][c]) != bits(b[n][c]))
          return at + what + " o" + std::to_string(n) + "." + kComp[c] + ": expected " + hex32(bits(a[n][c])) +
                 ", got " + hex32(bits(b[n][c]));
    return "";
  };
  for (size_t e = 0; e < 4; ++e)
    if (auto d = vertex("buffer[" + std::to_string(e) + "]", want.buffer[e], got.buffer[e]); !d.empty()) return d;
  if (want.primitives.size() != got.primitives.size())
    return at + "primitives: expected " + std::to_string(want.primitives.size()) + ", got " +
           std::to_string(got.primitives.size());
  for (size_t p = 0; p < want.primitives.size(); ++p) {
    if (want.primitives[p].winding != got.primitives[p].winding)
      return at + "primitive " + std::to_string(p) + " winding differs";
    for (size_t v = 0; v < 3; ++v)
      if (auto d = vertex("primitive " + std::to_string(p) + " vertex " + std::to_string(v),
                          want.primitives[p].vertices[v], got.primitives[p].vertices[v]);
          !d.empty())
        return d;
  }
  return "";
}

bool warp_faulted(const PicaReference& r, size_t vertex) {
  const size_t first = vertex - vertex % kWarp;
  for (size_t k = first; k < std::min(r.faults.size(), first + kWarp); ++k)
    if (!r.faults[k].empty()) return true;
  return false;
}

}  // namespace

PicaReference run_pica200_reference(const PicaCase& c, const pica::fp::Options& fp) {
  PicaReference res;
  pica::TranslateOptions topt;
  topt.entry = c.entry;
  topt.geometry = c.geometry;
  topt.fp = fp;
  res.emit_capacity = pica::kEmitMaxPerInvocation;
  res.expected = c.inputs;
  res.faults.assign(c.inputs.size(), "");
  const std::vector<pica::RunResult> runs = pica::run_reference_each(
      c.program, topt, c.uniforms, res.expected, c.geometry ? &res.expected_gs : nullptr, kReferenceBudget);
  // Vertex by vertex in order: the first one that decides the case decides it.
  for (size_t k = 0; k < runs.size(); ++k) {
    const pica::RunResult& r = runs[k];
    if (r.ok) {
      // The emit record area below holds as many records as the reference emitted (abi.h).
      if (c.geometry && res.expected_gs[k].emits > pica::kEmitCapacityLimit)
        res.faults[k] = "more than " + std::to_string(pica::kEmitCapacityLimit) + " EMITs (record area limit)";
      else if (c.geometry) res.emit_capacity = std::max(res.emit_capacity, res.expected_gs[k].emits);
      continue;
    }
    if (!c.shared_ends) {
      res.error = "reference interpreter, vertex " + std::to_string(k) + ": " + r.fault;
      return res;
    }
    if (r.steps >= kReferenceBudget) {
      res.skipped = true;
      return res;
    }
    res.faults[k] = r.fault;
  }
  return res;
}

bool translate_pica200_case(const PicaCase& c, const pica::fp::Options& fp, pica::StackMode stacks, ir::Function& out,
                            std::string& err, bool draw_only) {
  pica::TranslateOptions topt;
  topt.entry = c.entry;
  topt.geometry = c.geometry;
  topt.fp = fp;
  topt.stacks = stacks;
  topt.draw_only = draw_only && !c.geometry;
  std::string e;
  if (pica::translate(c.program, topt, out, e)) return true;
  err = "translation failed: " + e;
  return false;
}

PicaEngineRun run_pica200_translated(const PicaCase& c, const PicaReference& ref, const ir::Function& f,
                                     uint32_t vars_bytes, const ir::Executable& exe) {
  PicaEngineRun res;
  res.states = c.inputs;
  res.gs.resize(c.geometry ? res.states.size() : 0);
  const pica::LaneMap lanes = pica::LaneMap::all(f);
  std::vector<uint8_t> uniforms = pica::pack_uniforms(c.uniforms);
  // The emit record area holds as many records per lane as the reference emitted (abi.h).
  std::memcpy(&uniforms[pica::kUniformEmitCapacity], &ref.emit_capacity, sizeof ref.emit_capacity);
  const uint64_t emit_bytes = pica::emit_warp_bytes(ref.emit_capacity);
  // Engines may read the uniform block in whole vectors.
  uniforms.resize(ir::align64(std::max<size_t>(uniforms.size(), f.uniform_bytes)) + 64, 0);
  // The memory map of the IR fuzzer's runs (a zeroed global buffer) and, for
  // geometry programs, the warp's emit record area; zeroed for every warp.
  rt::Memory memory;
  std::string err;
  if (!memory.add_buffer("global", ir::Space::Global, kGlobalBase, kGlobalSize, err) ||
      (c.geometry && !memory.add_buffer("emits", ir::Space::Global, pica::kEmitBase, emit_bytes, err))) {
    res.diff = "memory: " + err;
    return res;
  }
  rt::Buffer& global = *memory.find("global");
  rt::Buffer* emits = c.geometry ? memory.find("emits") : nullptr;

  rt::LaunchConfig cfg;
  cfg.grid = rt::Dim3{1, 1, 1};
  cfg.block = rt::Dim3{uint32_t(ir::kWarpLanes), 1, 1};
  cfg.vars_bytes = vars_bytes;
  cfg.uniforms = uniforms.data();
  cfg.budget = kEngineBudget;
  cfg.max_rounds = kMaxBarrierStops + 1;
  const size_t n = res.states.size();
  size_t first = 0;
  uint32_t mask = 0;
  bool finished = false;
  rt::WarpHooks hooks;
  // The launch zeroes the vars (there is a finish hook): every state var of
  // the warp's vertices goes in, lanes past the last vertex stay zero.
  hooks.init = [&](const rt::WarpInfo&, uint8_t* vars) {
    pica::pack_lanes(lanes, res.states.data() + first, n - first, vars, mask);
  };
  hooks.setup = [&](const rt::WarpInfo&, ir::WarpContext& ctx) { ctx.entry_mask = mask; };
  hooks.finish = [&](const rt::WarpInfo&, const uint8_t* vars) {
    finished = true;
    // Unpacked only if the warp was to finish (below).
    if (!warp_faulted(ref, first)) {
      pica::unpack_lanes(lanes, vars, res.states.data() + first, n - first);
      if (c.geometry) pica::unpack_emits(f, vars, emits->data(), first, res.gs, ir::kWarpLanes, ref.emit_capacity);
    }
  };
  for (first = 0; first < n && res.diff.empty(); first += kWarp) {
    std::memset(global.data(), 0, kGlobalSize);
    if (emits) std::memset(emits->data(), 0, emit_bytes);
    finished = false;
    const rt::LaunchResult r = rt::launch(exe, memory, cfg, hooks);
    ++res.runs;
    const std::string at = "warp at vertex " + std::to_string(first) + ": ";
    size_t faulting = n;
    for (size_t k = first; k < std::min(n, first + kWarp) && faulting == n; ++k)
      if (!ref.faults[k].empty()) faulting = k;
    const bool fault = r.fault && !r.fault->round_limit;
    auto status_text = [&] {
      return fault ? std::string("fault ") + rt::fault_kind_name(r.fault->kind) : std::string("done");
    };
    if (!r.error.empty()) {
      res.diff = at + "launch: " + r.error;
    } else if (r.fault && r.fault->round_limit) {
      res.diff = at + "more than " + std::to_string(kMaxBarrierStops) + " barrier stops";
    } else if (faulting != n) {
      if (!fault || r.fault->kind != ir::FaultKind::Trap)
        res.diff = at + "expected a trap (reference, vertex " + std::to_string(faulting) + ": " + ref.faults[faulting] +
                   "), got " + status_text();
    } else if (fault || !finished) {
      res.diff = at + "stopped with " + status_text();
    }
  }
  return res;
}

std::string compare_pica200(const PicaCase& c, const PicaReference& ref, const PicaEngineRun& got) {
  if (!got.diff.empty()) return got.diff;
  for (size_t k = 0; k < got.states.size(); ++k)
    if (!warp_faulted(ref, k)) {
      std::string diff = compare_vertex(k, ref.expected[k], got.states[k]);
      if (diff.empty() && c.geometry) diff = compare_gs(k, ref.expected_gs[k], got.gs[k]);
      if (!diff.empty()) return diff;
    }
  return "";
}

std::string pica200_replay_json(const PicaCase& c, const PicaReference& r, const std::string& name,
                                const std::string& note) {
  json doc;
  doc["gpurc"] = 1;
  doc["isa"] = "pica200";
  doc["name"] = name;
  json words = json::array(), descs = json::array();
  for (uint32_t w : c.program.code) words.push_back(hex32(w));
  for (uint32_t d : c.program.descs) descs.push_back(hex32(d));
  doc["program"] = {{"words", words}, {"descriptors", descs}, {"entry", c.entry},
                    {"type", c.geometry ? "geometry" : "vertex"}};
  doc["launch"] = {{"vertices", c.inputs.size()}};
  json fu = json::object(), iu = json::object(), bu = json::object();
  for (size_t n = 0; n < c.uniforms.f.size(); ++n) {
    json v = json::array();
    for (float x : c.uniforms.f[n]) v.push_back(hex32(bits(x)));
    fu["c" + std::to_string(n)] = v;
  }
  for (size_t n = 0; n < c.uniforms.i.size(); ++n) {
    json v = json::array();
    for (uint8_t x : c.uniforms.i[n]) v.push_back(x);
    iu["i" + std::to_string(n)] = v;
  }
  for (unsigned n = 0; n < 16; ++n) bu["b" + std::to_string(n)] = c.uniforms.boolean(n);
  doc["state"] = {{"float_uniforms", fu}, {"int_uniforms", iu}, {"bool_uniforms", bu}};
  auto rows = [](const std::vector<pica::VertexState>& vs, bool output, size_t reg) {
    json out = json::array();
    for (const auto& s : vs) {
      json row = json::array();
      for (float x : output ? s.o[reg] : s.v[reg]) row.push_back(hex32(bits(x)));
      out.push_back(row);
    }
    return json{{"f32x4", out}};
  };
  json inputs = json::object();
  for (size_t n = 0; n < 16; ++n) inputs["v" + std::to_string(n)] = rows(c.inputs, false, n);
  doc["inputs"] = inputs;
  const bool faulted = std::any_of(r.faults.begin(), r.faults.end(), [](const std::string& f) { return !f.empty(); });
  if (!c.geometry && r.error.empty() && !r.skipped && !faulted && r.expected.size() == c.inputs.size()) {
    json outs = json::object();
    for (size_t n = 0; n < 16; ++n) outs["o" + std::to_string(n)] = rows(r.expected, true, n);
    doc["expect"] = {{"outputs", outs}};
  }
  doc["description"] = note;
  // Two levels of keys on their own lines, values compact: one vertex per line.
  std::string text = "{\n";
  bool first = true;
  for (auto& [key, value] : doc.items()) {
    text += std::string(first ? "" : ",\n") + " " + json(key).dump() + ": ";
    first = false;
    if (!value.is_object() || value.empty()) {
      text += value.dump();
      continue;
    }
    text += "{\n";
    bool first_inner = true;
    for (auto& [k2, v2] : value.items()) {
      text += std::string(first_inner ? "" : ",\n") + "  " + json(k2).dump() + ": " + v2.dump();
      first_inner = false;
    }
    text += "\n }";
  }
  return text + "\n}";
}

}  // namespace gpurc::fuzz
