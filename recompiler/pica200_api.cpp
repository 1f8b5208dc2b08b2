// The public PICA200 API (include/gpurc/pica200.h) over the module's launch
// ABI (frontend/pica200/module/launch.h).
#include <chrono>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include <fmt/format.h>

#include "frontend/pica200/assembler.h"
#include "frontend/pica200/module/launch.h"
#include "frontend/pica200/reachable.h"
#include "frontend/pica200/shbin.h"
#include "gpurc/pica200.h"
#include "recompiler/engine.h"
#include "recompiler/isa_engine.h"
#include "runtime/code_cache.h"

namespace gpurc::pica200 {

struct Shader::Impl {
  pica::PreparedShader prepared;
};

namespace {

struct KeyHash {
  size_t operator()(const rt::CacheKey& k) const { return size_t(k.lo ^ (k.hi * 0x9E3779B97F4A7C15ull)); }
};

// Compiled shaders by content. Translation is skipped on a hit; the IR code
// cache under compile_ir would share the host code anyway. A hit returns the
// same Shader object every time (made on the first hit, with compile_us 0),
// so it costs the key and one lookup, not a copy of the setup.
struct CachedShader {
  std::shared_ptr<const Shader::Impl> impl;
  std::shared_ptr<const Shader> hit;
};
struct ShaderCache {
  std::mutex m;
  std::unordered_map<rt::CacheKey, CachedShader, KeyHash> map;
};
ShaderCache& shader_cache() {
  static ShaderCache c;
  return c;
}

Engine engine_of(const ShaderSetup& s) {
  if (!s.engine.empty()) {
    Engine e;
    if (!parse_engine(s.engine, e))
      throw Error("gpurc::pica200: unknown engine '" + s.engine + "' (expected " + engine_names() + ")");
    return e;
  }
  switch (s.backend) {
    case Backend::Auto: return host_jit_tiers().empty() ? Engine::Interp : Engine::Jit;
    case Backend::Interpreter: return Engine::Interp;
    case Backend::Jit: return Engine::Jit;
  }
  return Engine::Interp;
}

// The cache key: what the translation reads (the words execution can reach
// from the entry, pica::append_reachable_code, and the descriptors) and
// every option, never the whole program memory, so that a hit costs well
// under a microsecond whatever the size of the program memory it came in.
rt::CacheKey key_of(const ShaderSetup& s, Engine resolved) {
  thread_local std::vector<uint32_t> words;
  words.clear();
  words.push_back(s.entry);
  words.push_back((s.type == ShaderType::Geometry ? 1u : 0u) | (s.max_inf_quirk ? 2u : 0u) | (s.f24 ? 4u : 0u));
  words.push_back(uint32_t(s.descriptors.size()));
  words.insert(words.end(), s.descriptors.begin(), s.descriptors.end());
  pica::append_reachable_code(s.code, s.entry, words);
  return rt::make_cache_key(words.data(), words.size() * 4, engine_name(resolved));
}

pica::VertexState state_of(const InputVertex& in) {
  pica::VertexState st;
  st.v = in.v;
  return st;
}

RunResult result_of(const pica::BatchResult& b) {
  RunResult r;
  r.ok = b.ok;
  r.error = b.fault;
  r.failed_vertex = b.fault_vertex;
  r.run_us = b.run_us;
  return r;
}

RunResult failure(std::string message) {
  RunResult r;
  r.ok = false;
  r.error = std::move(message);
  return r;
}

pica::Uniforms uniforms_of(const Uniforms& u) {
  pica::Uniforms pu;
  pu.f = u.f;
  pu.i = u.i;
  pu.b = u.b;
  return pu;
}

std::vector<pica::VertexState> states_of(std::span<const InputVertex> in) {
  std::vector<pica::VertexState> states(in.size());
  for (size_t k = 0; k < in.size(); ++k) states[k] = state_of(in[k]);
  return states;
}

pica::BatchOptions batch_options(const RunOptions& o) {
  pica::BatchOptions b;
  b.threads = o.threads;
  b.budget = o.budget;
  b.set_b15 = o.set_b15;
  return b;
}

}  // namespace

std::shared_ptr<const Shader> Shader::compile(const ShaderSetup& setup) {
  Engine resolved;
  std::string err;
  if (!resolve_engine(engine_of(setup), resolved, err)) throw Error("gpurc::pica200: " + err);
  // Programs over the size limits are never cached (the key reads only the
  // reachable words, so it could match a valid program's): prepare_shader
  // rejects them below.
  const bool cacheable = setup.code.size() <= 4096 && setup.descriptors.size() <= 128;
  rt::CacheKey key = cacheable ? key_of(setup, resolved) : rt::CacheKey{};
  ShaderCache& cache = shader_cache();
  if (cacheable) {
    std::lock_guard<std::mutex> g(cache.m);
    if (auto it = cache.map.find(key); it != cache.map.end()) {
      if (!it->second.hit) it->second.hit = std::make_shared<const Shader>(setup, it->second.impl, 0.0);
      return it->second.hit;
    }
  }
  auto t0 = std::chrono::steady_clock::now();
  pica::Program program{setup.code, setup.descriptors};
  pica::TranslateOptions topt;
  topt.entry = setup.entry;
  topt.geometry = setup.type == ShaderType::Geometry;
  topt.fp.max_inf_quirk = setup.max_inf_quirk;
  topt.fp.f24 = setup.f24;
  auto impl = std::make_shared<Shader::Impl>();
  if (!pica::prepare_shader(program, topt, EngineAsHandle(resolved), impl->prepared, err)) throw Error(err);
  double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  if (!cacheable) return std::make_shared<const Shader>(setup, impl, us);
  {
    // Two threads compiling the same setup at once both succeed; the first stored wins.
    std::lock_guard<std::mutex> g(cache.m);
    auto [it, inserted] = cache.map.emplace(key, CachedShader{impl, nullptr});
    return std::make_shared<const Shader>(setup, it->second.impl, us);
  }
}

std::vector<std::string> engines() {
  std::vector<std::string> out;
  for (Engine e : host_engines()) out.push_back(engine_name(e));
  return out;
}

const char* Shader::backend_name() const { return impl_->prepared.engine.c_str(); }

RunResult Shader::run(const Uniforms& u, std::span<const InputVertex> in, std::span<OutputVertex> out,
                      const RunOptions& opt) const {
  if (out.size() != in.size())
    return failure(fmt::format("gpurc::pica200: {} inputs but room for {} outputs", in.size(), out.size()));
  if (setup_.type != ShaderType::Vertex) return failure("gpurc::pica200: run() on a geometry shader (use run_geometry)");
  std::vector<pica::VertexState> states = states_of(in);
  pica::BatchResult b = pica::run_vertices(impl_->prepared, uniforms_of(u), states, batch_options(opt));
  for (size_t k = 0; k < in.size(); ++k) out[k].o = states[k].o;
  return result_of(b);
}

RunResult Shader::run_geometry(const Uniforms& u, std::span<const InputVertex> in,
                               std::vector<EmittedPrimitive>& emitted, const RunOptions& opt) const {
  if (setup_.type != ShaderType::Geometry)
    return failure("gpurc::pica200: run_geometry() on a vertex shader (use run)");
  std::vector<pica::VertexState> states = states_of(in);
  std::vector<pica::GsState> gs;
  pica::BatchResult b = pica::run_geometry(impl_->prepared, uniforms_of(u), states, gs, batch_options(opt));
  for (size_t k = 0; k < gs.size(); ++k)
    for (const pica::GsPrimitive& p : gs[k].primitives) {
      EmittedPrimitive e;
      for (size_t j = 0; j < 3; ++j) e.vertices[j].o = p.vertices[j];
      e.winding = p.winding;
      e.invocation = uint32_t(k);
      emitted.push_back(e);
    }
  return result_of(b);
}

namespace {
pica::Shbin parse(std::span<const uint8_t> bytes) {
  pica::Shbin s;
  std::string err;
  if (!pica::parse_shbin(bytes.data(), bytes.size(), s, err)) throw Error("gpurc::pica200: SHBIN: " + err);
  return s;
}
}  // namespace

size_t shbin_entries(std::span<const uint8_t> bytes) { return parse(bytes).dvles.size(); }

ShaderSetup load_shbin(std::span<const uint8_t> bytes, size_t dvle, Uniforms* constants) {
  pica::Shbin s = parse(bytes);
  if (dvle >= s.dvles.size())
    throw Error(fmt::format("gpurc::pica200: SHBIN: entry {} requested, the file has {}", dvle, s.dvles.size()));
  const pica::Dvle& d = s.dvles[dvle];
  ShaderSetup setup;
  setup.code = s.code;
  setup.descriptors = s.descs;
  setup.entry = d.main_offset;
  setup.type = d.is_geometry ? ShaderType::Geometry : ShaderType::Vertex;
  if (constants) {
    pica::Uniforms u;
    u.f = constants->f;
    u.i = constants->i;
    u.b = constants->b;
    pica::load_constants(d, u);
    constants->f = u.f;
    constants->i = u.i;
    constants->b = u.b;
  }
  return setup;
}

std::vector<uint8_t> assemble(const std::string& picasso_text) {
  pica::Shbin s;
  std::string err;
  if (!pica::assemble(picasso_text, s, err)) throw Error("gpurc::pica200: assembler: " + err);
  return pica::write_shbin(s);
}

size_t cached_shaders() {
  std::lock_guard<std::mutex> g(shader_cache().m);
  return shader_cache().map.size();
}

void clear_cache() {
  {
    std::lock_guard<std::mutex> g(shader_cache().m);
    shader_cache().map.clear();
  }
  // The IR code cache under the shader cache too, so the next compile is cold.
  code_cache().clear();
}

}  // namespace gpurc::pica200
