// Differential fuzzing of PICA200: generated shaders (fuzz/pica200_gen.cpp) on
// the reference interpreter vs their translation on the IR interpreter and
// every JIT tier. See docs/fuzzing.md ("PICA200").
#include "fuzz/pica200_fuzz.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "frontend/pica200/translate.h"
#include "fuzz/ir_gen.h"
#include "fuzz/ir_run.h"
#include "fuzz/isa_fuzz.h"

namespace gpurc::fuzz {

using json = nlohmann::ordered_json;
using pica::fp::bits;

namespace {

constexpr size_t kWarp = 32;
// Far above what generated programs execute (a few thousand steps at most);
// reaching it means a stale-frame program that would take the JIT engines
// ages to hit their watchdog, so such a program is skipped.
constexpr uint64_t kReferenceBudget = 1u << 20;

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

bool warp_faulted(const PicaCaseResult& r, size_t vertex) {
  const size_t first = vertex - vertex % kWarp;
  for (size_t k = first; k < std::min(r.faults.size(), first + kWarp); ++k)
    if (!r.faults[k].empty()) return true;
  return false;
}

}  // namespace

PicaCaseResult run_pica200_case(const PicaCase& c, const std::vector<std::string>& engines,
                                const pica::fp::Options& fp, pica::StackMode stacks) {
  PicaCaseResult res;
  uint32_t emit_capacity = pica::kEmitMaxPerInvocation;  // records per lane of the emit area
  // Reference: one vertex at a time.
  pica::Interpreter interp(c.program, c.uniforms, fp);
  res.expected = c.inputs;
  res.faults.assign(c.inputs.size(), "");
  if (c.geometry) res.expected_gs.resize(c.inputs.size());
  for (size_t k = 0; k < res.expected.size(); ++k) {
    pica::RunResult r = interp.run(c.entry, res.expected[k], c.geometry ? &res.expected_gs[k] : nullptr,
                                   kReferenceBudget);
    if (r.ok) {
      // The emit record area below holds as many records as the reference emitted (abi.h).
      if (c.geometry && res.expected_gs[k].emits > pica::kEmitCapacityLimit)
        res.faults[k] = "more than " + std::to_string(pica::kEmitCapacityLimit) + " EMITs (record area limit)";
      else if (c.geometry) emit_capacity = std::max(emit_capacity, res.expected_gs[k].emits);
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
  if (engines.empty()) return res;
  ir::Function f;
  std::string err;
  pica::TranslateOptions topt;
  topt.entry = c.entry;
  topt.geometry = c.geometry;
  topt.fp = fp;
  topt.stacks = stacks;
  if (!pica::translate(c.program, topt, f, err)) {
    res.diffs.push_back({"translate", "translation failed: " + err});
    return res;
  }
  const IrProgram prog = prepare_program(f);
  std::vector<uint8_t> uniforms = pica::pack_uniforms(c.uniforms);
  std::memcpy(&uniforms[pica::kUniformEmitCapacity], &emit_capacity, sizeof emit_capacity);

  for (const std::string& engine : engines) {
    const std::string runner = engine == "ir-interp" ? "interp" : engine;
    std::vector<pica::VertexState> states = c.inputs;
    std::vector<pica::GsState> gs(c.geometry ? states.size() : 0);
    std::string diff;
    for (size_t first = 0; first < states.size() && diff.empty(); first += kWarp) {
      IrState st;
      st.vars.assign(f.vars_bytes(), 0);
      pica::pack_lanes(f, states, first, st.vars.data(), st.entry_mask);
      st.uniforms = uniforms;
      st.memory.assign(kGlobalSize, 0);
      if (c.geometry) st.extra.push_back({pica::kEmitBase, std::vector<uint8_t>(pica::emit_warp_bytes(emit_capacity), 0)});
      IrOutcome out = run_engine(runner, prog, st);
      ++res.runs;
      const std::string at = "warp at vertex " + std::to_string(first) + ": ";
      size_t faulting = states.size();
      for (size_t k = first; k < std::min(states.size(), first + kWarp) && faulting == states.size(); ++k)
        if (!res.faults[k].empty()) faulting = k;
      auto status_text = [&] {
        return out.status == ir::RunStatus::Fault ? std::string("fault ") + fault_kind_name(out.fault)
                                                  : out.status == ir::RunStatus::Done ? std::string("done")
                                                  : "status " + std::to_string(unsigned(out.status));
      };
      if (!out.error.empty()) {
        diff = at + out.error;
      } else if (faulting != states.size()) {
        if (out.status != ir::RunStatus::Fault || out.fault != ir::FaultKind::Trap)
          diff = at + "expected a trap (reference, vertex " + std::to_string(faulting) + ": " + res.faults[faulting] +
                 "), got " + status_text();
      } else if (out.status != ir::RunStatus::Done) {
        diff = at + "stopped with " + status_text();
      } else {
        pica::unpack_lanes(f, out.vars.data(), first, states);
        if (c.geometry) pica::unpack_emits(f, out.vars.data(), out.extra.at(0).data(), first, gs, kWarp, emit_capacity);
      }
    }
    for (size_t k = 0; k < states.size() && diff.empty(); ++k)
      if (!warp_faulted(res, k)) {
        diff = compare_vertex(k, res.expected[k], states[k]);
        if (diff.empty() && c.geometry) diff = compare_gs(k, res.expected_gs[k], gs[k]);
      }
    if (!diff.empty()) res.diffs.push_back({engine, diff});
  }
  return res;
}

std::string pica200_replay_json(const PicaCase& c, const PicaCaseResult& r, const std::string& name,
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

IsaFuzzReport run_pica200_fuzz(const IsaFuzzOptions& opt) {
  IsaFuzzReport rep;
  pica::fp::Options fp;
  if (opt.variant == "max-inf-quirk") fp.max_inf_quirk = true;
  else if (opt.variant == "f24") fp.f24 = true;
  else if (!opt.variant.empty() && opt.variant != "default") {
    rep.error = "pica200 has no variant " + opt.variant + " (default, max-inf-quirk, f24)";
    return rep;
  }
  std::vector<std::string> engines{"ir-interp"};
  const std::vector<std::string> host = host_jit_engines();
  for (std::string e : opt.engines.empty() ? host : opt.engines) {
    e = jit_engine_name(e);  // the registry name of an alias
    if (std::find(host.begin(), host.end(), e) == host.end()) {
      rep.error = "engine " + e + " is not available on this host";
      return rep;
    }
    engines.push_back(e);
  }
  rep.engines = engines;

  uint64_t saved = 0;
  // GPURC_FUZZ_PROGRESS=N: a line on stderr every N programs (long campaigns).
  const char* progress_env = std::getenv("GPURC_FUZZ_PROGRESS");
  const uint64_t progress = progress_env ? std::strtoull(progress_env, nullptr, 10) : 0;
  for (uint64_t it = 0; it < opt.iterations; ++it) {
    if (progress && it % progress == 0) std::fprintf(stderr, "pica200 fuzz: iteration %llu\n", (unsigned long long)it);
    const PicaCase c = generate_pica200(pica200_program_seed(opt.seed, it));
    PicaCaseResult r = run_pica200_case(c, engines, fp);
    ++rep.programs;
    rep.runs += r.runs;
    if (!r.error.empty()) {
      rep.error = "iteration " + std::to_string(it) + ": generated program is invalid: " + r.error;
      return rep;
    }
    for (const PicaEngineDiff& d : r.diffs) {
      IsaFuzzMismatch m{it, d.engine, d.what, ""};
      if (opt.save_reproducers && saved < opt.max_saved) {
        std::string base = "pica200-s" + std::to_string(opt.seed) + "-i" + std::to_string(it);
        std::string path = opt.out_dir + "/" + base + "-" + d.engine + ".json";
        std::error_code ec;
        std::filesystem::create_directories(opt.out_dir, ec);
        std::ofstream out(path);
        std::string note = "gpurc fuzz --isa pica200" + (opt.variant.empty() ? "" : " --variant " + opt.variant) +
                           " --seed " + std::to_string(opt.seed) + ", iteration " + std::to_string(it) +
                           ", engine " + d.engine + ": " + d.what;
        out << pica200_replay_json(c, r, base, note) << "\n";
        if (out) {
          m.reproducer = path;
          ++saved;
        }
      }
      rep.mismatches.push_back(m);
    }
    if (opt.progress && (it % 64 == 63 || it + 1 == opt.iterations)) opt.progress(it + 1, rep.mismatches.size());
  }
  return rep;
}

}  // namespace gpurc::fuzz
