// The draw contract (pica::TranslateOptions::draw_only; docs/pica200.md,
// "Issue 13, fourteenth session: the loop shader"): a vertex shader the
// public API compiles runs only through draws, which start every register
// at zero and read back only the o-registers, so its code keeps neither the
// temporaries nor a0, aL and cmp. Checked: that the code of such a shader
// has only the v and o vars left (ref_loop: no store of r0, r1, r5, aL or
// cmp), that run_vertices refuses it while a shader prepared without the
// contract still hands back every temporary the interpreter computes, and
// that draws of random programs (temporaries, a0, aL and cmp read before
// they are written, loops, calls, conditions) write every o-register as the
// interpreter does, on every JIT tier of the host.
#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engines/registry.h"
#include "frontend/pica200/abi.h"
#include "frontend/pica200/module/fuzz_gen.h"
#include "frontend/pica200/module/launch.h"
#include "frontend/pica200/translate.h"
#include "gpurc/pica200.h"
#include "ir/passes.h"
#include "recompiler/isa_engine.h"

namespace gpurc_test_pica200_draw_only {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;

namespace {

namespace p = gpurc::pica200;

std::vector<uint32_t> words_of(const nlohmann::json& a) {
  std::vector<uint32_t> out;
  for (const auto& w : a) out.push_back(uint32_t(std::stoul(w.get<std::string>(), nullptr, 16)));
  return out;
}

// ref_loop (bench/pica200-reference/ref_loop.json): words, descriptors, entry.
pica::Program ref_loop_program() {
  const std::filesystem::path file = std::filesystem::path(GPURC_TEST_DATA) / "bench/pica200-reference/ref_loop.json";
  std::ifstream in(file);
  REQUIRE_MESSAGE(in, "cannot open " << file.string());
  const nlohmann::json doc = nlohmann::json::parse(in);
  pica::Program prog;
  prog.code = words_of(doc["program"]["words"]);
  prog.descs = words_of(doc["program"]["descriptors"]);
  REQUIRE(doc["program"]["entry"].get<uint32_t>() == 0);
  return prog;
}

pica::Uniforms loop_uniforms() {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> d(-2.0f, 2.0f);
  pica::Uniforms u;
  for (auto& r : u.f)
    for (float& x : r) x = d(rng);
  u.f[4] = {0.5f, 0.5f, 0.5f, 0.5f};
  u.i[0] = {7, 0, 1, 0};
  return u;
}

std::vector<pica::VertexState> loop_states(size_t n) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<pica::VertexState> s(n);
  for (auto& v : s)
    for (int r = 0; r < 4; ++r) v.v[size_t(r)] = {d(rng), d(rng), d(rng), 1.0f};
  return s;
}

// Whether the compiled code's var area still holds a var after o15: the
// lowered function keeps only vars [0, state_vars) when nothing else is
// read or written (ir/pass_pipeline.cpp), 128 f32 vars of 32 lanes.
constexpr uint32_t kVOBytes = pica::kVarTemp * 32 * 4;

}  // namespace

TEST_CASE("pica200 draw contract: the loop shader's code keeps only v and o, run_vertices keeps the rest") {
  const pica::Program prog = ref_loop_program();
  const pica::Uniforms u = loop_uniforms();
  pica::PreparedShader ref;
  std::string err;
  REQUIRE_MESSAGE(pica::prepare_shader(prog, pica::TranslateOptions{}, pica::reference_engine(), ref, err), err);
  std::vector<pica::VertexState> want = loop_states(45);
  pica::BatchOptions bo;
  bo.threads = 1;
  REQUIRE(pica::run_vertices(ref, u, want, bo).ok);
  // The temporaries this program leaves behind are not zero (so a runner
  // that dropped them would show).
  CHECK(want[0].r[0] != pica::Vec4{0, 0, 0, 0});
  CHECK(want[0].r[1] != pica::Vec4{0, 0, 0, 0});
  CHECK(want[0].r[5] != pica::Vec4{0, 0, 0, 0});
  int tiers = 0;
  for (Engine e : host_jit_tiers()) {
    const std::string engine = engine_name(e);
    CAPTURE(engine);
    ++tiers;
    // Draw contract: only the v and o vars are left in the code, and
    // run_vertices (whole VertexStates) refuses the shader.
    pica::TranslateOptions draw;
    draw.draw_only = true;
    pica::PreparedShader ps;
    REQUIRE_MESSAGE(pica::prepare_shader(prog, draw, EngineAsHandle(e, true), ps, err), err);
    CHECK(ps.compiled.vars_bytes == kVOBytes);
    REQUIRE(ps.draw.valid);
    CHECK(ps.draw.vars_bytes == kVOBytes);
    std::vector<pica::VertexState> refused = loop_states(45);
    const pica::BatchResult r = pica::run_vertices(ps, u, refused, bo);
    CHECK_FALSE(r.ok);
    CHECK(r.fault.find("draw_only") != std::string::npos);
    // Without it the code keeps the state: run_vertices hands back the
    // interpreter's temporaries, aL and cmp, and its outputs.
    pica::PreparedShader full;
    REQUIRE_MESSAGE(pica::prepare_shader(prog, pica::TranslateOptions{}, EngineAsHandle(e, true), full, err), err);
    CHECK(full.compiled.vars_bytes > kVOBytes);
    std::vector<pica::VertexState> got = loop_states(45);
    REQUIRE(pica::run_vertices(full, u, got, bo).ok);
    size_t bad = 0;
    for (size_t k = 0; k < got.size(); ++k)
      bad += std::memcmp(got[k].r.data(), want[k].r.data(), sizeof got[k].r) != 0 ||
             std::memcmp(got[k].o.data(), want[k].o.data(), sizeof got[k].o) != 0 || got[k].aL != want[k].aL || got[k].a0x != want[k].a0x || got[k].a0y != want[k].a0y ||
             got[k].cmpx != want[k].cmpx || got[k].cmpy != want[k].cmpy;
    CHECK(bad == 0);
  }
  CHECK(tiers > 0);
}

TEST_CASE("pica200 draw contract: draws write every o-register as the interpreter does") {
  // Random vertex programs of the fuzzer's generator (every register file,
  // loops with aL, MOVA, CMP and conditions, calls); the inputs of each
  // case in all sixteen input registers, all sixteen outputs stored over
  // records that hold other values before the draw.
  fuzz::PicaGenOptions go;
  go.geometry_percent = 0;
  const int programs = std::getenv("GPURC_TEST_LIGHT") ? 20 : 60;
  int compared = 0, read_before_write = 0;
  for (int s = 0; s < programs; ++s) {
    const fuzz::PicaCase c = fuzz::generate_pica200(fuzz::pica200_program_seed(14, uint64_t(s)));
    if (c.geometry || c.inputs.empty()) continue;
    CAPTURE(s);
    p::ShaderSetup setup;
    setup.code = c.program.code;
    setup.descriptors = c.program.descs;
    setup.entry = c.entry;
    p::Uniforms u;
    for (size_t n = 0; n < 96; ++n) u.f[n] = c.uniforms.f[n];
    for (size_t n = 0; n < 4; ++n) u.i[n] = c.uniforms.i[n];
    u.b = c.uniforms.b;
    std::vector<p::InputVertex> in(c.inputs.size());
    for (size_t k = 0; k < in.size(); ++k)
      for (size_t n = 0; n < 16; ++n) in[k].v[n] = c.inputs[k].v[n];
    p::ShaderSetup si = setup;
    si.engine = "interp";
    std::vector<p::OutputVertex> want(in.size());
    const p::RunResult wr = p::Shader::compile(si)->run(u, in, want, p::RunOptions{1});
    if (!wr.ok) continue;  // a fault: outputs are not compared (api.cpp checks faults)
    // Does the program read a temporary, a0, aL or cmp before writing it
    // (the zero the draw contract states at the entry)?
    {
      pica::TranslateOptions to;
      to.entry = c.entry;
      ir::Function f;
      std::string err;
      REQUIRE_MESSAGE(pica::translate(c.program, to, f, err), err);
      bool loads = false;
      REQUIRE(ir::run_pipeline(f, ir::PassOptions{}) == "");
      for (const ir::Inst& i : f.insts)
        loads |= i.block != ir::kNoBlock && i.op == ir::Opcode::LoadVar && i.imm >= pica::kVarTemp &&
                 i.imm < pica::kNumStateVars;
      read_before_write += loads;
    }
    for (const std::string& engine : p::engines()) {
      if (engine == "interp") continue;
      CAPTURE(engine);
      p::ShaderSetup sj = setup;
      sj.engine = engine;
      const auto shader = p::Shader::compile(sj);
      p::DrawState st(*shader);
      st.set_uniforms(u);
      std::vector<p::OutputVertex> got(in.size());
      for (auto& o : got)
        for (auto& r : o.o) r.fill(-7.5f);
      const p::RunResult gr = st.run(p::VertexInputs::records(in.data(), sizeof(p::InputVertex), 0xFFFF),
                                     p::VertexOutputs::records(got.data(), sizeof(p::OutputVertex), 0xFFFF),
                                     in.size(), p::RunOptions{1});
      REQUIRE_MESSAGE(gr.ok, gr.error);
      size_t bad = 0;
      for (size_t k = 0; k < in.size(); ++k) bad += std::memcmp(got[k].o.data(), want[k].o.data(), sizeof got[k].o) != 0;
      CHECK(bad == 0);
      ++compared;
    }
  }
  CHECK(compared >= programs / 2);
  // The generator's programs do read registers before writing them.
  CHECK(read_before_write > 0);
}

}  // namespace gpurc_test_pica200_draw_only
