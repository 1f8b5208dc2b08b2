// Bound streams (DrawState::bind / run_bound, include/gpurc/pica200.h;
// docs/pica200.md, "Issue 13, twelfth session: the simple shader and small
// draws"): streams checked once, then draws by vertex offset and count.
// Through the public API on every engine against the interpreter: every
// size 1..100 at several offsets, nothing outside the draw written, uniform
// writes between draws, draws with other streams in between, a new binding,
// pass-through copies whose order depends on the offset, bad streams, and
// faults.
#include <doctest/doctest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gpurc/pica200.h"
#include "tests/pica200/simple_draw_shader.h"

namespace gpurc_test_pica200_draw_bound {  // one namespace per file: unity builds (CMakeLists.txt)

namespace p = gpurc::pica200;

namespace {

constexpr const char* kBoundShader = gpurc::pica::test::kSimpleDrawShader;

constexpr float kSentinel = 12345.0f;

std::vector<p::InputVertex> random_vertices(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-2.0f, 2.0f);
  std::vector<p::InputVertex> in(n);
  for (auto& v : in)
    for (auto& r : v.v)
      for (float& x : r) x = d(rng);
  return in;
}

// The interpreter's outputs for every vertex of `in` (vertices are independent).
std::vector<p::OutputVertex> reference(const p::ShaderSetup& setup, const p::Uniforms& u,
                                       const std::vector<p::InputVertex>& in) {
  p::ShaderSetup s = setup;
  s.engine = "interp";
  std::vector<p::OutputVertex> ref(in.size());
  REQUIRE(p::Shader::compile(s)->run(u, in, ref, p::RunOptions{1}).ok);
  return ref;
}

std::shared_ptr<const p::Shader> compile_on(p::ShaderSetup s, const std::string& engine) {
  s.engine = engine;
  return p::Shader::compile(s);
}

// Vertices [first, first + n) of `out` hold `ref`'s o0-o2, every other
// vertex and o3 the sentinel.
void check_draw(const std::vector<p::OutputVertex>& out, const std::vector<p::OutputVertex>& ref, size_t first,
                size_t n) {
  size_t bad = 0;
  for (size_t k = 0; k < out.size(); ++k) {
    const bool in_draw = k >= first && k < first + n;
    for (unsigned r = 0; r < 4; ++r) {
      const bool want_ref = in_draw && r < 3;
      for (unsigned c = 0; c < 4; ++c) {
        const float got = out[k].o[r][c];
        const bool ok = want_ref ? std::memcmp(&got, &ref[k].o[r][c], 4) == 0 : got == kSentinel;
        if (!ok && bad++ < 4)
          FAIL_CHECK("vertex " << k << " o" << r << "." << "xyzw"[c] << " = " << got
                               << (want_ref ? " differs from the interpreter" : " written outside the draw"));
      }
    }
  }
  CHECK(bad == 0);
}

void fill(std::vector<p::OutputVertex>& out) {
  for (auto& o : out)
    for (auto& r : o.o) r.fill(kSentinel);
}

}  // namespace

TEST_CASE("pica200 draw: bound streams run draws by offset and count like the interpreter") {
  p::Uniforms u;
  std::mt19937 rng(12);
  std::uniform_real_distribution<float> d(-2.0f, 2.0f);
  for (auto& r : u.f)
    for (float& x : r) x = d(rng);
  const p::ShaderSetup setup = p::load_shbin(p::assemble(kBoundShader), 0, &u);
  constexpr size_t kVertices = 230;
  const std::vector<p::InputVertex> in = random_vertices(kVertices, 5);
  const std::vector<p::OutputVertex> ref = reference(setup, u, in);
  std::vector<p::OutputVertex> out(kVertices);
  const auto rin = p::VertexInputs::records(in.data(), sizeof(p::InputVertex), 0x7);
  const auto rout = p::VertexOutputs::records(out.data(), sizeof(p::OutputVertex), 0x7);

  for (const std::string& e : p::engines()) {
    CAPTURE(e);
    auto shader = compile_on(setup, e);
    p::DrawState draw(*shader);
    draw.set_uniforms(u);
    // Nothing bound yet.
    p::RunResult r = draw.run_bound(0, 8);
    CHECK_FALSE(r.ok);
    CHECK_MESSAGE(r.error.find("no streams bound") != std::string::npos, r.error);
    CHECK(draw.run_bound(0, 0).ok);
    REQUIRE(draw.bind(rin, rout).ok);
    // Every size 1..100 from vertex 0, then at offsets that are and are not
    // whole warps (the kept set-up moves with the offset), and back.
    for (size_t first : {size_t(0), size_t(64), size_t(37), size_t(0), size_t(129), size_t(1)})
      for (size_t n = 1; n <= 100; ++n) {
        CAPTURE(first);
        CAPTURE(n);
        fill(out);
        r = draw.run_bound(first, n, p::RunOptions{1});
        REQUIRE_MESSAGE(r.ok, r.error);
        check_draw(out, ref, first, n);
      }
    // A draw spread over threads (from kDrawParallelMin vertices) takes the bound streams too.
    {
      const std::vector<p::InputVertex> big_in = random_vertices(2100, 6);
      const std::vector<p::OutputVertex> big_ref = reference(setup, u, big_in);
      std::vector<p::OutputVertex> big_out(2100);
      p::DrawState big(*shader);
      big.set_uniforms(u);
      REQUIRE(big.bind(p::VertexInputs::records(big_in.data(), sizeof(p::InputVertex), 0x7),
                       p::VertexOutputs::records(big_out.data(), sizeof(p::OutputVertex), 0x7))
                  .ok);
      for (unsigned threads : {2u, 0u, 1u}) {
        fill(big_out);
        REQUIRE(big.run_bound(40, 2050, p::RunOptions{threads}).ok);
        check_draw(big_out, big_ref, 40, 2050);
      }
    }
    // A uniform written between draws is read by the next one (c0-c4 all
    // changed: whichever the assembler gave m and k).
    {
      p::Uniforms u2 = u;
      for (unsigned n = 0; n < 5; ++n) {
        u2.f[n][0] = 0.5f;
        draw.set_float(n, u2.f[n]);
      }
      const std::vector<p::OutputVertex> ref2 = reference(setup, u2, in);
      CHECK(std::memcmp(ref2[3].o[0].data(), ref[3].o[0].data(), 16) != 0);
      fill(out);
      REQUIRE(draw.run_bound(3, 40).ok);
      check_draw(out, ref2, 3, 40);
      draw.set_uniforms(u);
    }
    // Draws with other streams in between leave the binding alone.
    {
      std::vector<p::OutputVertex> other(kVertices);
      fill(other);
      REQUIRE(draw.run(rin, p::VertexOutputs::records(other.data(), sizeof(p::OutputVertex), 0x7), 50).ok);
      check_draw(other, ref, 0, 50);
      fill(out);
      REQUIRE(draw.run_bound(10, 45).ok);
      check_draw(out, ref, 10, 45);
      fill(other);
      REQUIRE(draw.run(rin, p::VertexOutputs::records(other.data(), sizeof(p::OutputVertex), 0x7), 33).ok);
      check_draw(other, ref, 0, 33);
      fill(out);
    }
    // A new binding replaces the old one; a bad one leaves nothing bound.
    {
      std::vector<p::OutputVertex> other(kVertices);
      fill(other);
      REQUIRE(draw.bind(rin, p::VertexOutputs::records(other.data(), sizeof(p::OutputVertex), 0x7)).ok);
      REQUIRE(draw.run_bound(5, 70).ok);
      check_draw(other, ref, 5, 70);
      check_draw(out, ref, 0, 0);
      r = draw.bind(p::VertexInputs::records(in.data(), 32, 0x7), rout);
      CHECK_FALSE(r.ok);
      CHECK_MESSAGE(r.error.find("stride 32 is smaller than a record") != std::string::npos, r.error);
      r = draw.run_bound(0, 8);
      CHECK_FALSE(r.ok);
      CHECK_MESSAGE(r.error.find("no streams bound") != std::string::npos, r.error);
      r = draw.bind(rin, p::VertexOutputs::records(nullptr, 256, 0x4));
      CHECK_FALSE(r.ok);
      CHECK_MESSAGE(r.error.find("o2 has no address") != std::string::npos, r.error);
    }
  }
}

TEST_CASE("pica200 draw: bound in-place streams whose copy order depends on the offset") {
  // o0 = v1 and o1 = v0 (two pass-through copies), written over the input
  // records at another stride: inputs v0, v1 at bytes 0 and 16 of 64-byte
  // records, outputs o0, o1 at bytes 0 and 16 of 48-byte records of the same
  // buffer. Vertex 0's outputs lie on its own inputs (the copies form a
  // cycle: one of them goes through the code), vertex 1's o1 only on its v0
  // (no order needed), later vertices' on nothing of theirs. With different
  // strides the copies' order depends on where the draw starts, so a bound
  // draw at a new offset must make its set-up again, not move it: a set-up
  // made at vertex 1 and moved to vertex 0 would copy o0 over v0 before o1
  // reads it. Draws of one or two vertices from vertex 0 keep records of
  // different vertices apart (the API's condition for in-place draws).
  constexpr const char* kSwap = R"(
.in a v0
.in b v1
.out oa position
.out ob color
.proc main
    mov oa, b
    mov ob, a
    end
.end
)";
  const p::ShaderSetup setup = p::load_shbin(p::assemble(kSwap));
  constexpr size_t kVertices = 8;
  for (const std::string& e : p::engines()) {
    CAPTURE(e);
    auto shader = compile_on(setup, e);
    p::DrawState draw(*shader);
    std::vector<float> buf(kVertices * 16);
    REQUIRE(draw.bind(p::VertexInputs::records(buf.data(), 64, 0x3), p::VertexOutputs::records(buf.data(), 48, 0x3)).ok);
    const std::pair<size_t, size_t> draws[] = {{1, 1}, {0, 1}, {1, 1}, {0, 1}, {2, 1}, {0, 2}, {3, 1}, {0, 1}, {0, 2}};
    for (const auto& [first, n] : draws) {
      CAPTURE(first);
      CAPTURE(n);
      for (float& x : buf) x = kSentinel;
      for (size_t k = first; k < first + n; ++k)
        for (unsigned c = 0; c < 4; ++c) {
          buf[k * 16 + c] = float(k * 4 + c);           // v0
          buf[k * 16 + 4 + c] = -float(k * 4 + c) - 1;  // v1
        }
      const std::vector<float> before = buf;
      const p::RunResult r = draw.run_bound(first, n, p::RunOptions{1});
      REQUIRE_MESSAGE(r.ok, r.error);
      for (size_t k = first; k < first + n; ++k)
        for (unsigned c = 0; c < 4; ++c) {
          CHECK(buf[k * 12 + c] == before[k * 16 + 4 + c]);  // o0 = v1
          CHECK(buf[k * 12 + 4 + c] == before[k * 16 + c]);  // o1 = v0
        }
    }
  }
}

TEST_CASE("pica200 draw: a bound draw that faults names its vertex counted from the offset") {
  p::ShaderSetup no_end;
  no_end.code = {0x4C201004};  // mov o1, v1, then past the end of the program
  no_end.descriptors = {0, 0, 0, 0, 0x0D86C36F};
  const std::vector<p::InputVertex> in = random_vertices(200, 9);
  std::vector<p::OutputVertex> out(200);
  for (const std::string& e : p::engines()) {
    CAPTURE(e);
    auto shader = compile_on(no_end, e);
    p::DrawState draw(*shader);
    REQUIRE(draw.bind(p::VertexInputs::records(in.data(), sizeof(p::InputVertex), 0x3),
                      p::VertexOutputs::records(out.data(), sizeof(p::OutputVertex), 0x3))
                .ok);
    const p::RunResult whole = draw.run(p::VertexInputs::records(in.data(), sizeof(p::InputVertex), 0x3),
                                        p::VertexOutputs::records(out.data(), sizeof(p::OutputVertex), 0x3), 100);
    REQUIRE_FALSE(whole.ok);
    for (size_t first : {size_t(0), size_t(0), size_t(50), size_t(50), size_t(3)})
      for (size_t n : {size_t(100), size_t(64), size_t(40), size_t(5), size_t(1)}) {
        CAPTURE(first);
        CAPTURE(n);
        const p::RunResult r = draw.run_bound(first, n);
        REQUIRE_FALSE(r.ok);
        CHECK(r.failed_vertex < 32);
        CHECK(r.error.find("0x001") != std::string::npos);
        CHECK(r.error == whole.error);
      }
  }
}

TEST_CASE("pica200 draw: a repeated draw that faults after draws that finished, and the draws after it") {
  // With b0 set the shader loops for ever (the watchdog stops it); with b0
  // clear it adds `one` once. The same streams, budget and set-up
  // throughout, so the draws after the first finished one take the short
  // form of the repeated draw (DrawScratch::again_clean); a fault there must
  // be reported as run_draw reports it, and the draws after it must start
  // from a clean context.
  const char* src = R"(
.bool forever
.constf one(1.0, 0.5, 0.25, 0.0)
.out outPos position
.proc main
    mov r0, one.wwww
spin:
    add r0, one, r0
    jmpu forever, spin
    mov outPos, r0
    end
.end
)";
  p::Uniforms u;
  const p::ShaderSetup base = p::load_shbin(p::assemble(src), 0, &u);
  const std::vector<p::InputVertex> in = random_vertices(70, 4);
  std::vector<p::OutputVertex> out(70);
  const auto vi = p::VertexInputs::records(in.data(), sizeof(p::InputVertex), 0x0001);
  const auto vo = p::VertexOutputs::records(out.data(), sizeof(p::OutputVertex), 0x0001);
  p::RunOptions opt;
  opt.threads = 1;
  opt.budget = 1000;
  for (const std::string& e : p::engines()) {
    CAPTURE(e);
    auto shader = compile_on(base, e);
    p::DrawState draw(*shader);
    draw.set_uniforms(u);
    REQUIRE(draw.bind(vi, vo).ok);
    for (int round = 0; round < 3; ++round)
      for (bool bound : {true, false})
        for (size_t n : {size_t(70), size_t(33), size_t(1)}) {
          CAPTURE(round);
          CAPTURE(bound);
          CAPTURE(n);
          auto draw_n = [&] { return bound ? draw.run_bound(0, n, opt) : draw.run(vi, vo, n, opt); };
          draw.set_bools(0);  // the assembler gives `forever` b0
          for (int k = 0; k < 2; ++k) {
            for (auto& o : out) o.o[0].fill(kSentinel);
            const p::RunResult a = draw_n();
            REQUIRE_MESSAGE(a.ok, a.error);
            CHECK(out[0].o[0][0] == 1.0f);
            CHECK(out[n - 1].o[0][3] == 0.0f);
            CHECK(out[n - 1].o[0][1] == 0.5f);
            if (n < out.size()) CHECK(out[n].o[0][0] == kSentinel);
          }
          draw.set_bools(1);
          const p::RunResult f = draw_n();
          CHECK_FALSE(f.ok);
          CHECK(f.failed_vertex < 32);
          // The interpreter: "instruction budget exhausted"; the JIT: its watchdog.
          CHECK_MESSAGE((f.error.find("budget") != std::string::npos || f.error.find("watchdog") != std::string::npos),
                        f.error);
        }
  }
}

}  // namespace gpurc_test_pica200_draw_bound
