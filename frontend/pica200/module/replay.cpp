// Replay handler of isa pica200 (docs/replay-format.md, docs/pica200-embedding.md):
// a program (words + descriptors, picasso text, or a .shbin), uniforms, one
// input row per vertex, N independent invocations from zeroed state.
#include <bit>
#include <cstring>
#include <fstream>
#include <sstream>

#include "frontend/pica200/assembler.h"
#include "frontend/pica200/module/launch.h"
#include "frontend/pica200/module/module.h"
#include "frontend/pica200/shbin.h"
#include "isa/replay_doc.h"

namespace gpurc::pica {

using namespace replay;

namespace {

// A replay may not ask for more per-vertex state than this (about 1 GiB of VertexState).
constexpr uint64_t kMaxVertices = uint64_t(1) << 20;

struct Loaded {
  pica::Program program;
  pica::Uniforms uniforms;
  pica::TranslateOptions options;
  uint64_t vertices = 0;
  std::vector<pica::VertexState> states;
};

// Index n of a register name such as "c12" with prefix 'c' and n < limit.
unsigned register_index(const std::string& name, char prefix, unsigned limit, const std::string& where) {
  if (name.size() >= 2 && name[0] == prefix && name.find_first_not_of("0123456789", 1) == std::string::npos &&
      name.size() <= 4) {
    unsigned n = unsigned(std::stoul(name.substr(1)));
    if (n < limit) return n;
  }
  throw ReplayError(where + ": expected a register " + prefix + "0.." + prefix + std::to_string(limit - 1) +
                    ", got \"" + name + "\"");
}

std::vector<uint32_t> parse_words(const json& v, size_t limit, const std::string& where) {
  if (!v.is_array()) throw ReplayError(where + ": expected an array of 32-bit words");
  if (v.size() > limit)
    throw ReplayError(where + ": " + std::to_string(v.size()) + " entries (at most " + std::to_string(limit) + ")");
  std::vector<uint32_t> out;
  for (size_t i = 0; i < v.size(); ++i)
    out.push_back(uint32_t(parse_elem(v[i], ElemType::U32, where + "[" + std::to_string(i) + "]")));
  return out;
}

bool is_geometry_type(const json& doc) {
  const json* t = nullptr;
  if (doc["program"].contains("type")) t = &doc["program"]["type"];
  if (doc.contains("type")) t = &doc["type"];
  if (!t) return false;
  if (*t == "vertex") return false;
  if (*t == "geometry") return true;
  throw ReplayError("type: expected \"vertex\" or \"geometry\", got " + t->dump());
}

// Program, entry and the DVLE constants (those become the initial uniforms).
void load_program(const isa::ReplayJob& job, Loaded& out) {
  const json& doc = job.doc;
  if (!doc.contains("program") || !doc["program"].is_object()) throw ReplayError("program: missing or not an object");
  const json& p = doc["program"];
  for (auto it = p.begin(); it != p.end(); ++it) {
    static const char* known[] = {"asm", "asm_file", "binary_file", "words", "descriptors", "entry", "type"};
    bool ok = false;
    for (const char* k : known) ok |= it.key() == k;
    if (!ok) throw ReplayError("program." + it.key() + ": unknown field for isa pica200");
  }
  out.options.geometry = is_geometry_type(doc);
  int sources = int(p.contains("asm")) + int(p.contains("asm_file")) + int(p.contains("binary_file")) +
                int(p.contains("words"));
  if (sources != 1) throw ReplayError("program: give exactly one of \"asm\", \"asm_file\", \"binary_file\", \"words\"");
  if (p.contains("descriptors") && !p.contains("words"))
    throw ReplayError("program.descriptors: only with \"words\" (a .shbin or assembly brings its own table)");

  if (p.contains("words")) {
    out.program.code = parse_words(p["words"], 4096, "program.words");
    if (p.contains("descriptors")) out.program.descs = parse_words(p["descriptors"], 128, "program.descriptors");
    if (p.contains("entry")) {
      if (!p["entry"].is_number_integer() && !(p["entry"].is_string() && p["entry"].get<std::string>().rfind("0x", 0) == 0))
        throw ReplayError("program.entry: raw words have no labels; give a word offset");
      out.options.entry = uint32_t(parse_uint(p["entry"], "program.entry"));
    }
    return;
  }

  pica::Shbin shbin;
  std::string err;
  if (p.contains("binary_file")) {
    if (!p["binary_file"].is_string()) throw ReplayError("program.binary_file: expected a string");
    std::filesystem::path f = job.dir / p["binary_file"].get<std::string>();
    std::ifstream in(f, std::ios::binary);
    if (!in) throw ReplayError("program.binary_file: cannot open " + f.string());
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!pica::parse_shbin(bytes.data(), bytes.size(), shbin, err))
      throw ReplayError("program.binary_file: " + err);
  } else {
    if (!pica::assemble(program_text(doc, job.dir), shbin, err)) throw ReplayError("program: " + err);
  }
  if (shbin.code.size() > 4096) throw ReplayError("program: more than 4096 code words");
  if (shbin.descs.size() > 128) throw ReplayError("program: more than 128 operand descriptors");
  out.program = pica::program_of(shbin);

  // The DVLE: the one holding the entry label, else the first of the wanted type, else the first.
  const pica::Dvle* dvle = nullptr;
  for (const auto& d : shbin.dvles)
    if (!dvle && bool(d.is_geometry) == out.options.geometry) dvle = &d;
  if (!dvle && !shbin.dvles.empty()) dvle = &shbin.dvles[0];
  if (p.contains("entry")) {
    const json& e = p["entry"];
    if (e.is_string() && e.get<std::string>().rfind("0x", 0) != 0) {
      std::string name = e.get<std::string>();
      bool found = false;
      for (const auto& d : shbin.dvles)
        for (const auto& l : d.labels)
          if (!found && l.name == name) {
            out.options.entry = l.offset;
            dvle = &d;
            found = true;
          }
      if (!found) throw ReplayError("program.entry: no label named '" + name + "'");
    } else {
      out.options.entry = uint32_t(parse_uint(e, "program.entry"));
    }
  } else if (dvle) {
    out.options.entry = dvle->main_offset;
  }
  if (dvle) pica::load_constants(*dvle, out.uniforms);
}

pica::Vec4 parse_vec4(const json& v, const std::string& where) {
  if (!v.is_array() || v.size() != 4) throw ReplayError(where + ": expected [x, y, z, w]");
  pica::Vec4 out;
  for (size_t j = 0; j < 4; ++j) {
    uint32_t bits = uint32_t(parse_elem(v[j], ElemType::F32, where + "[" + std::to_string(j) + "]"));
    out[j] = std::bit_cast<float>(bits);
  }
  return out;
}

void load_state(const json& doc, Loaded& out) {
  if (!doc.contains("state")) return;
  const json& s = doc["state"];
  if (!s.is_object()) throw ReplayError("state: expected an object");
  for (auto it = s.begin(); it != s.end(); ++it) {
    const std::string& k = it.key();
    const json& v = it.value();
    std::string where = "state." + k;
    if (!v.is_object()) throw ReplayError(where + ": expected an object of registers");
    for (auto r = v.begin(); r != v.end(); ++r) {
      std::string at = where + "." + r.key();
      if (k == "float_uniforms") {
        out.uniforms.f[register_index(r.key(), 'c', 96, at)] = parse_vec4(r.value(), at);
      } else if (k == "int_uniforms") {
        unsigned n = register_index(r.key(), 'i', 4, at);
        if (!r.value().is_array() || r.value().size() != 4) throw ReplayError(at + ": expected [x, y, z, w] (bytes)");
        for (size_t j = 0; j < 4; ++j)
          out.uniforms.i[n][j] = uint8_t(parse_elem(r.value()[j], ElemType::U8, at + "[" + std::to_string(j) + "]"));
      } else if (k == "bool_uniforms") {
        unsigned n = register_index(r.key(), 'b', 16, at);
        if (!r.value().is_boolean()) throw ReplayError(at + ": expected true or false");
        out.uniforms.b = uint16_t(r.value().get<bool>() ? out.uniforms.b | (1u << n) : out.uniforms.b & ~(1u << n));
      } else {
        throw ReplayError(where + ": unknown field for isa pica200 (float_uniforms, int_uniforms, bool_uniforms)");
      }
    }
  }
}

void load_inputs(const json& doc, Loaded& out) {
  out.states.assign(size_t(out.vertices), pica::VertexState{});
  if (!doc.contains("inputs")) return;
  const json& in = doc["inputs"];
  if (!in.is_object()) throw ReplayError("inputs: expected an object {\"v0\": {...}}");
  const size_t n = size_t(out.vertices);
  for (auto it = in.begin(); it != in.end(); ++it) {
    std::string where = "inputs." + it.key();
    unsigned reg = register_index(it.key(), 'v', 16, where);
    const json& v = it.value();
    if (!v.is_object() || v.size() != 1) throw ReplayError(where + ": expected {\"f32x4\": [[x, y, z, w], ...]} or {\"generate\": {...}}");
    if (v.contains("generate")) {
      const json& g = v["generate"];
      if (!g.is_object() || !g.contains("kind") || !g["kind"].is_string())
        throw ReplayError(where + ".generate.kind: missing (\"random\" or \"iota\")");
      std::string kind = g["kind"].get<std::string>();
      if (kind == "iota") {
        for (size_t k = 0; k < n; ++k) out.states[k].v[reg].fill(float(k));
      } else if (kind == "random") {
        json r = {{"type", "f32"}};
        for (const char* key : {"seed", "min", "max"})
          if (g.contains(key)) r[key] = g[key];
        // The shared "random" init (splitmix64), four floats per vertex.
        std::vector<uint8_t> bytes = init_bytes(json{{"random", r}}, uint64_t(n) * 16, where + ".generate");
        bytes.resize(n * 16, 0);
        for (size_t k = 0; k < n; ++k) std::memcpy(out.states[k].v[reg].data(), bytes.data() + k * 16, 16);
      } else {
        throw ReplayError(where + ".generate.kind: unknown kind \"" + kind + "\" (random, iota)");
      }
      continue;
    }
    TypedValues tv = parse_typed(v, where);
    if (tv.type != ElemType::F32 || !v.contains("f32x4"))
      throw ReplayError(where + ": expected {\"f32x4\": [[x, y, z, w], ...]}");
    if (tv.bits.size() != uint64_t(n) * 4)
      throw ReplayError(where + ".f32x4: " + std::to_string(tv.bits.size() / 4) + " rows for " + std::to_string(n) +
                        " vertices");
    for (size_t k = 0; k < n; ++k)
      for (size_t j = 0; j < 4; ++j) out.states[k].v[reg][j] = std::bit_cast<float>(uint32_t(tv.bits[k * 4 + j]));
  }
}

Loaded load(const isa::ReplayJob& job) {
  const json& doc = job.doc;
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    static const char* known[] = {"gpurc", "isa", "variant", "name", "program", "launch", "state", "inputs",
                                  "expect", "type", "description", "output"};
    bool ok = false;
    for (const char* k : known) ok |= it.key() == k;
    if (!ok) throw ReplayError(it.key() + ": unknown field for isa pica200");
  }
  if (doc.contains("variant") && doc["variant"] != "default")
    throw ReplayError("variant: pica200 has one variant (\"default\"), got " + doc["variant"].dump());
  Loaded out;
  load_program(job, out);
  if (!doc.contains("launch") || !doc["launch"].is_object() || !doc["launch"].contains("vertices"))
    throw ReplayError("launch.vertices: missing (pica200 launches are {\"vertices\": N})");
  for (auto it = doc["launch"].begin(); it != doc["launch"].end(); ++it)
    if (it.key() != "vertices") throw ReplayError("launch." + it.key() + ": unknown field for isa pica200");
  out.vertices = parse_uint(doc["launch"]["vertices"], "launch.vertices");
  if (out.vertices > kMaxVertices)
    throw ReplayError("launch.vertices: " + std::to_string(out.vertices) + " is more than " + std::to_string(kMaxVertices));
  // Each vertex's state, its copy per engine run and its observed outputs.
  if (std::string e = rt::check_memory(out.vertices * (3 * sizeof(pica::VertexState) + 256),
                                       "launch.vertices: the state of " + std::to_string(out.vertices) + " vertices");
      !e.empty())
    throw ReplayError(e);
  load_state(doc, out);
  load_inputs(doc, out);
  return out;
}

// Register `reg` of a register file (o or r) of every vertex, x y z w each.
std::vector<uint8_t> vec4_bytes(const std::vector<pica::VertexState>& states,
                                std::array<pica::Vec4, 16> pica::VertexState::*file, unsigned reg) {
  std::vector<uint8_t> out(states.size() * 16);
  for (size_t k = 0; k < states.size(); ++k) std::memcpy(out.data() + k * 16, (states[k].*file)[reg].data(), 16);
  return out;
}

template <typename T>
std::vector<uint8_t> scalar_bytes(const std::vector<pica::VertexState>& states, T fn) {
  std::vector<uint8_t> out(states.size() * 4);
  for (size_t k = 0; k < states.size(); ++k) {
    uint32_t x = uint32_t(fn(states[k]));
    std::memcpy(out.data() + k * 4, &x, 4);
  }
  return out;
}

}  // namespace

void replay(const isa::ReplayJob& job, ReplayRun& run) {
  Loaded l = load(job);
  pica::PreparedShader shader;
  std::string err;
  if (!pica::prepare_shader(l.program, l.options, job.engine, shader, err)) throw ReplayError("program: " + err);
  // A code-cache hit (compile_us 0) skipped the compile; the translation before it is counted only with it.
  run.compile_us = shader.compiled.compile_us + (shader.compiled.compile_us > 0 ? shader.translate_us : 0);
  run.items = l.vertices;

  pica::BatchOptions bo;
  bo.threads = job.threads;
  bo.count_instructions = job.count_instructions;
  std::vector<pica::GsState> gs;
  pica::BatchResult r = l.options.geometry ? pica::run_geometry(shader, l.uniforms, l.states, gs, bo)
                                           : pica::run_vertices(shader, l.uniforms, l.states, bo);
  run.run_us = r.run_us;
  if (!r.ok) {
    run.fault = r.fault;
    run.fault_kind = r.fault_kind;
  }
  if (job.count_instructions) run.guest_instructions = r.instructions;

  for (unsigned n = 0; n < 16; ++n)
    run.observed.push_back(Observed{"outputs", "o" + std::to_string(n), ElemType::F32,
                                    vec4_bytes(l.states, &pica::VertexState::o, n)});
  for (unsigned n = 0; n < 16; ++n)
    run.observed.push_back(Observed{"registers", "r" + std::to_string(n), ElemType::F32,
                                    vec4_bytes(l.states, &pica::VertexState::r, n)});
  run.observed.push_back(Observed{"registers", "a0.x", ElemType::I32, scalar_bytes(l.states, [](auto& s) { return s.a0x; })});
  run.observed.push_back(Observed{"registers", "a0.y", ElemType::I32, scalar_bytes(l.states, [](auto& s) { return s.a0y; })});
  run.observed.push_back(Observed{"registers", "aL", ElemType::U32, scalar_bytes(l.states, [](auto& s) { return s.aL; })});
  run.observed.push_back(Observed{"registers", "cmp.x", ElemType::U32, scalar_bytes(l.states, [](auto& s) { return s.cmpx; })});
  run.observed.push_back(Observed{"registers", "cmp.y", ElemType::U32, scalar_bytes(l.states, [](auto& s) { return s.cmpy; })});

  if (l.options.geometry) {
    // Emitted triangles in invocation order, three vertices each.
    std::vector<uint8_t> winding, invocation;
    std::array<std::vector<uint8_t>, 16> regs;
    for (size_t k = 0; k < gs.size(); ++k)
      for (const pica::GsPrimitive& prim : gs[k].primitives) {
        uint32_t w = prim.winding, inv = uint32_t(k);
        winding.insert(winding.end(), reinterpret_cast<uint8_t*>(&w), reinterpret_cast<uint8_t*>(&w) + 4);
        invocation.insert(invocation.end(), reinterpret_cast<uint8_t*>(&inv), reinterpret_cast<uint8_t*>(&inv) + 4);
        for (const auto& vtx : prim.vertices)
          for (unsigned n = 0; n < 16; ++n) {
            const uint8_t* p = reinterpret_cast<const uint8_t*>(vtx[n].data());
            regs[n].insert(regs[n].end(), p, p + 16);
          }
      }
    for (unsigned n = 0; n < 16; ++n)
      run.observed.push_back(Observed{"emitted", "o" + std::to_string(n), ElemType::F32, std::move(regs[n])});
    run.observed.push_back(Observed{"emitted", "winding", ElemType::U32, std::move(winding)});
    run.observed.push_back(Observed{"emitted", "invocation", ElemType::U32, std::move(invocation)});
  }
}

}  // namespace gpurc::pica
