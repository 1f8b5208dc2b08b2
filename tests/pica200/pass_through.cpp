// Pass-through registers taken out of a vertex shader's code
// (frontend/pica200/module/draw.h, drop_pass_through; docs/pica200.md,
// "Issue 13, thirteenth session: the simple shader"): an output register
// that is, on every path, a plain copy of one input register is not written
// by the compiled code; every runner copies it. Checked: which registers are
// taken out and which are not, that the code then neither reads nor writes
// them, and that every runner (run_vertices over VertexState, run_draw over
// records, the public Shader::run and DrawState) writes what the
// interpreter computes, with outputs holding other values beforehand and
// inputs the streams do not supply.
#include <doctest/doctest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "engines/registry.h"
#include "frontend/pica200/abi.h"
#include "frontend/pica200/module/draw.h"
#include "frontend/pica200/module/launch.h"
#include "gpurc/pica200.h"
#include "recompiler/isa_engine.h"
#include "tests/pica200/simple_draw_shader.h"

namespace gpurc_test_pica200_pass_through {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;

namespace {

namespace p = gpurc::pica200;

// o1 = v1 (v1 read for nothing else), o2 = v0 (v0 also read by the MUL) and
// o6 = v2 (v2 also read on one path) are pass-through copies; o3 is written
// on one path only, o4 copies two different registers, o5 is written twice:
// those three stay in the code.
constexpr const char* kMixed = R"(
.fvec k
.bool sw
.in a v0
.in b v1
.in c v2
.in d v3
.in e v4
.in f v5
.out q0 position
.out q1 normalquat
.out q2 color
.out q3 texcoord0
.out q4 texcoord1
.out q5 texcoord2
.out q6 view
.proc main
    mov q1, b
    mul q0, k, a
    mov q2, a
    ifu sw
        mov q3, c
    .end
    mov q4.xy, d
    mov q4.zw, e
    mov q5, f
    mov q5, f
    mov q6, c
    end
.end
)";

// An engine that keeps a copy of the function prepare_shader gives it to
// compile: the IR the code is made from (prepare_shader hands the function
// over, PreparedShader::function keeps its vars only). It overrides only
// compile(), so compile_owned's default forwards to it.
class CapturingEngine final : public isa::EngineHandle {
 public:
  explicit CapturingEngine(Engine e) : inner_(e, true) {}
  std::string name() const override { return inner_.name(); }
  bool is_reference() const override { return inner_.is_reference(); }
  bool compile(const ir::Function& f, const std::string& symbol, isa::Compiled& out, std::string& err) const override {
    compiled = f;
    return inner_.compile(f, symbol, out, err);
  }
  mutable ir::Function compiled;

 private:
  EngineAsHandle inner_;
};

bool prepare(const p::ShaderSetup& setup, Engine e, pica::PreparedShader& ps, std::string& err,
             ir::Function* compiled = nullptr) {
  pica::TranslateOptions to;
  to.entry = setup.entry;
  CapturingEngine engine(e);
  const bool ok = pica::prepare_shader(pica::Program{setup.code, setup.descriptors}, to, engine, ps, err);
  if (compiled) *compiled = engine.compiled;
  return ok;
}

bool prepare_reference(const p::ShaderSetup& setup, pica::PreparedShader& ps, std::string& err) {
  pica::TranslateOptions to;
  to.entry = setup.entry;
  return pica::prepare_shader(pica::Program{setup.code, setup.descriptors}, to, pica::reference_engine(), ps, err);
}

// Output registers the function still writes, and input registers it reads.
void live_vars(const ir::Function& f, uint16_t& written, uint16_t& read) {
  written = read = 0;
  for (const ir::Inst& i : f.insts) {
    if (i.block == ir::kNoBlock) continue;
    if (i.op == ir::Opcode::SetVar && i.imm >= pica::kVarOutput && i.imm < pica::kVarOutput + 64)
      written |= uint16_t(1u << ((i.imm - pica::kVarOutput) / 4));
    if (i.op == ir::Opcode::GetVar && i.imm >= pica::kVarInput && i.imm < pica::kVarInput + 64)
      read |= uint16_t(1u << ((i.imm - pica::kVarInput) / 4));
  }
}

std::vector<pica::VertexState> random_states(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-3.0f, 3.0f);
  std::vector<pica::VertexState> s(n);
  for (auto& v : s) {
    for (auto& r : v.v)
      for (float& x : r) x = d(rng);
    // Outputs hold other values before the run: a copy left out shows.
    for (auto& r : v.o)
      for (float& x : r) x = d(rng);
  }
  return s;
}

bool same_outputs(const pica::VertexState& a, const pica::VertexState& b) {
  return std::memcmp(a.o.data(), b.o.data(), sizeof a.o) == 0;
}

}  // namespace

TEST_CASE("pica200 pass-through: copies of one input register are taken out of the code") {
  p::Uniforms u;
  const p::ShaderSetup mixed = p::load_shbin(p::assemble(kMixed), 0, &u);
  const p::ShaderSetup simple = p::load_shbin(p::assemble(pica::test::kSimpleDrawShader), 0, &u);
  int tiers = 0;
  for (Engine e : host_jit_tiers()) {
    const std::string engine = engine_name(e);
    CAPTURE(engine);
    ++tiers;
    std::string err;
    {
      pica::PreparedShader ps;
      ir::Function compiled;
      REQUIRE_MESSAGE(prepare(mixed, e, ps, err, &compiled), err);
      const std::array<int8_t, 16> want{-1, 1, 0, -1, -1, -1, 2, -1, -1, -1, -1, -1, -1, -1, -1, -1};
      CHECK(ps.dropped == want);
      uint16_t written = 0, read = 0;
      live_vars(compiled, written, read);
      CHECK(written == 0x39);  // o0, o3, o4, o5
      CHECK(read == 0x3D);     // v0, v2 (the MUL, the IF's copy), v3, v4, v5; not v1
      REQUIRE(ps.draw.valid);
      for (unsigned n = 0; n < 16; ++n) {
        CAPTURE(n);
        CHECK(ps.draw.forward[n] == want[n]);
      }
      CHECK(ps.draw.out_written == 0x7F);
      CHECK(ps.draw.forward_only == 0x2);  // v1: read by its copy only
      CHECK((ps.draw.in_read & 0x2) == 0);
    }
    {
      pica::PreparedShader ps;
      ir::Function compiled;
      REQUIRE_MESSAGE(prepare(simple, e, ps, err, &compiled), err);
      CHECK(ps.dropped[1] == 1);
      CHECK(ps.dropped[0] == -1);
      CHECK(ps.dropped[2] == -1);
      uint16_t written = 0, read = 0;
      live_vars(compiled, written, read);
      CHECK(written == 0x5);
      CHECK(read == 0x5);
    }
  }
  CHECK(tiers > 0);
}

TEST_CASE("pica200 pass-through: every runner writes the copies the code leaves out") {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> d(-2.0f, 2.0f);
  p::Uniforms u;
  for (auto& r : u.f)
    for (float& x : r) x = d(rng);
  const p::ShaderSetup mixed = p::load_shbin(p::assemble(kMixed), 0, &u);
  pica::PreparedShader ref;
  std::string err;
  REQUIRE_MESSAGE(prepare_reference(mixed, ref, err), err);
  for (Engine e : host_jit_tiers()) {
    const std::string engine = engine_name(e);
    CAPTURE(engine);
    pica::PreparedShader ps;
    REQUIRE_MESSAGE(prepare(mixed, e, ps, err), err);
    REQUIRE(ps.dropped[1] == 1);
    // run_vertices (launch hooks over VertexState), b0 off and on, sizes
    // with whole and partial warps.
    for (uint16_t b : {uint16_t(0), uint16_t(1)})
      for (size_t n : {size_t(1), size_t(31), size_t(32), size_t(77)}) {
        CAPTURE(b);
        CAPTURE(n);
        pica::Uniforms mu;
        mu.f = u.f;
        mu.b = b;
        std::vector<pica::VertexState> want = random_states(n, unsigned(n + 7 * b));
        std::vector<pica::VertexState> got = want;
        pica::BatchOptions bo;
        bo.threads = 1;
        REQUIRE(pica::run_vertices(ref, mu, want, bo).ok);
        REQUIRE(pica::run_vertices(ps, mu, got, bo).ok);
        size_t bad = 0;
        for (size_t k = 0; k < n; ++k) bad += !same_outputs(got[k], want[k]);
        CHECK(bad == 0);
        // The copies are really in the outputs (not a fluke of equal values).
        CHECK(std::memcmp(got[n - 1].o[1].data(), got[n - 1].v[1].data(), 16) == 0);
        CHECK(std::memcmp(got[n - 1].o[6].data(), got[n - 1].v[2].data(), 16) == 0);
      }
  }

  // The public API: Shader::run and a DrawState with every input supplied,
  // and a DrawState whose streams leave out v1 and v2 (their copies are
  // zero) and store some of the outputs only.
  std::vector<p::InputVertex> in(70);
  for (auto& v : in)
    for (auto& r : v.v)
      for (float& x : r) x = d(rng);
  for (uint16_t b : {uint16_t(0), uint16_t(1)}) {
    CAPTURE(b);
    p::Uniforms ub = u;
    ub.b = b;
    p::ShaderSetup si = mixed;
    si.engine = "interp";
    std::vector<p::OutputVertex> want(in.size());
    REQUIRE(p::Shader::compile(si)->run(ub, in, want, p::RunOptions{1}).ok);
    std::vector<p::InputVertex> partial = in;
    for (auto& v : partial) v.v[1] = v.v[2] = {0, 0, 0, 0};
    std::vector<p::OutputVertex> want_partial(in.size());
    REQUIRE(p::Shader::compile(si)->run(ub, partial, want_partial, p::RunOptions{1}).ok);
    for (const std::string& engine : p::engines()) {
      if (engine == "interp") continue;
      CAPTURE(engine);
      p::ShaderSetup sj = mixed;
      sj.engine = engine;
      const auto shader = p::Shader::compile(sj);
      std::vector<p::OutputVertex> got(in.size());
      for (auto& o : got)
        for (auto& r : o.o) r.fill(7.0f);
      REQUIRE(shader->run(ub, in, got, p::RunOptions{1}).ok);
      for (size_t k = 0; k < in.size(); ++k)
        for (unsigned r = 0; r < 7; ++r) {
          CAPTURE(k);
          CAPTURE(r);
          CHECK(std::memcmp(got[k].o[r].data(), want[k].o[r].data(), 16) == 0);
        }
      p::DrawState st(*shader);
      st.set_uniforms(ub);
      p::VertexInputs vi = p::VertexInputs::records(in.data(), sizeof(p::InputVertex), 0x39);  // v0, v3-v5
      std::vector<p::OutputVertex> got2(in.size());
      for (auto& o : got2)
        for (auto& r : o.o) r.fill(7.0f);
      p::VertexOutputs vo = p::VertexOutputs::records(got2.data(), sizeof(p::OutputVertex), 0x47);  // o0-o2, o6
      for (size_t n : {size_t(70), size_t(33), size_t(70)}) {
        CAPTURE(n);
        REQUIRE(st.run(vi, vo, n, p::RunOptions{1}).ok);
        for (size_t k = 0; k < n; ++k)
          for (unsigned r = 0; r < 7; ++r) {
            CAPTURE(k);
            CAPTURE(r);
            if (0x47 >> r & 1) CHECK(std::memcmp(got2[k].o[r].data(), want_partial[k].o[r].data(), 16) == 0);
            else CHECK(got2[k].o[r][0] == 7.0f);
          }
      }
    }
  }
}

// Random shaders whose seven outputs are each a pass-through copy, a copy
// of two registers, a copy on one path only, a copy written twice, an
// addition or nothing, over random input registers (so copies in place form
// chains and cycles): run_vertices, and DrawState draws in place and into
// other records, against the interpreter.
std::string random_shader(std::mt19937& rng) {
  static const char* kNames[7] = {"position", "normalquat", "color", "texcoord0", "texcoord1", "texcoord2", "view"};
  std::string head = ".fvec k\n.bool sw\n", body;
  for (unsigned n = 0; n < 7; ++n) head += ".out q" + std::to_string(n) + " " + kNames[n] + "\n";
  for (unsigned n = 0; n < 7; ++n) {
    const std::string o = "q" + std::to_string(n), v = "v" + std::to_string(rng() % 7),
                      w = "v" + std::to_string(rng() % 7);
    switch (rng() % 8) {
      case 0: case 1: case 2: body += "    mov " + o + ", " + v + "\n"; break;
      case 3: body += "    mov " + o + ".xy, " + v + "\n    mov " + o + ".zw, " + w + "\n"; break;
      case 4: body += "    ifu sw\n        mov " + o + ", " + v + "\n    .end\n"; break;
      case 5: body += "    mov " + o + ", " + v + "\n    mov " + o + ", " + v + "\n"; break;
      case 6: body += "    add " + o + ", k, " + v + "\n"; break;
      default: break;  // not written
    }
  }
  return head + ".proc main\n" + body + "    end\n.end\n";
}

TEST_CASE("pica200 pass-through: random copies, in place and not, against the interpreter") {
  std::mt19937 rng(13);
  std::uniform_real_distribution<float> d(-2.0f, 2.0f);
  size_t dropped = 0, shaders = 0;
  for (unsigned iter = 0; iter < 60; ++iter) {
    const std::string text = random_shader(rng);
    CAPTURE(text);
    p::Uniforms u;
    for (auto& r : u.f)
      for (float& x : r) x = d(rng);
    u.b = uint16_t(rng() % 2);
    const p::ShaderSetup setup = p::load_shbin(p::assemble(text), 0, &u);
    const size_t n = 1 + rng() % 70;
    std::vector<p::InputVertex> in(n);
    for (auto& v : in)
      for (auto& r : v.v)
        for (float& x : r) x = d(rng);
    p::ShaderSetup si = setup;
    si.engine = "interp";
    std::vector<p::OutputVertex> want(n);
    REQUIRE(p::Shader::compile(si)->run(u, in, want, p::RunOptions{1}).ok);
    ++shaders;
    for (Engine e : host_jit_tiers()) {
      const std::string engine = engine_name(e);
      CAPTURE(engine);
      pica::PreparedShader ps;
      std::string err;
      REQUIRE_MESSAGE(prepare(setup, e, ps, err), err);
      for (int8_t m : ps.dropped) dropped += m >= 0;
      // run_vertices over states whose outputs hold other values.
      pica::Uniforms mu;
      mu.f = u.f;
      mu.b = u.b;
      std::vector<pica::VertexState> states(n);
      for (size_t k = 0; k < n; ++k) {
        for (unsigned r = 0; r < 16; ++r) std::memcpy(states[k].v[r].data(), in[k].v[r].data(), 16);
        for (auto& r : states[k].o) r.fill(5.0f);
      }
      // (The interpreter on the same states: outputs the program leaves
      // alone keep their values.)
      std::vector<pica::VertexState> want_states = states;
      pica::PreparedShader ref;
      REQUIRE_MESSAGE(prepare_reference(setup, ref, err), err);
      pica::BatchOptions bo;
      bo.threads = 1;
      REQUIRE(pica::run_vertices(ref, mu, want_states, bo).ok);
      REQUIRE(pica::run_vertices(ps, mu, states, bo).ok);
      size_t bad = 0;
      for (size_t k = 0; k < n; ++k)
        bad += std::memcmp(states[k].o.data(), want_states[k].o.data(), sizeof states[k].o) != 0;
      CHECK(bad == 0);
      // DrawState: in place (outputs over the inputs, same stride), twice
      // (the second draw takes the kept set-up), and into other records.
      p::ShaderSetup sj = setup;
      sj.engine = engine;
      const auto shader = p::Shader::compile(sj);
      p::DrawState st(*shader);
      st.set_uniforms(u);
      for (int pass = 0; pass < 2; ++pass) {
        std::vector<p::InputVertex> buf = in;
        REQUIRE(st.run(p::VertexInputs::records(buf.data(), sizeof(p::InputVertex), 0x7F),
                       p::VertexOutputs::records(buf.data(), sizeof(p::InputVertex), 0x7F), n, p::RunOptions{1})
                    .ok);
        bad = 0;
        for (size_t k = 0; k < n; ++k)
          for (unsigned r = 0; r < 16; ++r)
            bad += std::memcmp(buf[k].v[r].data(), r < 7 ? want[k].o[r].data() : in[k].v[r].data(), 16) != 0;
        CHECK(bad == 0);
      }
      std::vector<p::OutputVertex> out(n);
      REQUIRE(st.run(p::VertexInputs::records(in.data(), sizeof(p::InputVertex), 0x7F),
                     p::VertexOutputs::records(out.data(), sizeof(p::OutputVertex), 0x7F), n, p::RunOptions{1})
                  .ok);
      bad = 0;
      for (size_t k = 0; k < n; ++k)
        for (unsigned r = 0; r < 7; ++r) bad += std::memcmp(out[k].o[r].data(), want[k].o[r].data(), 16) != 0;
      CHECK(bad == 0);
    }
  }
  CHECK(shaders == 60);
  CHECK(dropped > 0);
}

}  // namespace gpurc_test_pica200_pass_through
