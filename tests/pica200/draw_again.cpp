// The repeated draw (frontend/pica200/module/draw.h, run_draw_again;
// docs/pica200.md, "Issue 13, eleventh session: the simple shader and small
// draws"): a draw whose streams are those of the previous draw runs the kept
// set-up through the draw-loop stub with none of run_draw's per-call work.
// Checked at the module level: when it applies and when it must not, and
// that what it writes is what the interpreter computes, for every size,
// with faults and budgets.
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
#include "tests/pica200/simple_draw_shader.h"
#include "recompiler/isa_engine.h"
#include "runtime/memory.h"

namespace gpurc_test_pica200_draw_again {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;

namespace {

namespace p = gpurc::pica200;

constexpr const char* kShader = gpurc::pica::test::kSimpleDrawShader;
struct Prepared {
  p::ShaderSetup setup;
  pica::PreparedShader ps;
};

bool prepare(const p::ShaderSetup& setup, Engine e, pica::PreparedShader& ps, std::string& err) {
  pica::TranslateOptions to;
  to.entry = setup.entry;
  return pica::prepare_shader(pica::Program{setup.code, setup.descriptors}, to, EngineAsHandle(e, true), ps, err);
}

pica::DrawStreams records(const void* base, uint16_t mask) {
  pica::DrawStreams s;
  s.mask = mask;
  for (unsigned n = 0; n < 16; ++n)
    if (mask >> n & 1) {
      s.base[n] = const_cast<uint8_t*>(static_cast<const uint8_t*>(base)) + 16 * n;
      s.stride[n] = sizeof(p::InputVertex);
      s.comp[n] = {0, 4, 8, 12};
      s.quad[n] = true;
    }
  return s;
}

}  // namespace

TEST_CASE("pica200 draw: a repeated draw runs the kept set-up again (run_draw_again)") {
  p::Uniforms u;
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> d(-2.0f, 2.0f);
  for (auto& r : u.f)
    for (float& x : r) x = d(rng);
  p::ShaderSetup setup = p::load_shbin(p::assemble(kShader), 0, &u);
  pica::Uniforms mu;
  mu.f = u.f;
  const std::vector<uint8_t> packed = pica::pack_uniforms(mu);

  constexpr size_t kMax = 100;
  std::vector<p::InputVertex> in(kMax);
  for (auto& v : in)
    for (auto& r : v.v)
      for (float& x : r) x = d(rng);
  std::vector<p::OutputVertex> ref(kMax);
  {
    p::ShaderSetup s = setup;
    s.engine = "interp";
    REQUIRE(p::Shader::compile(s)->run(u, in, ref, p::RunOptions{1}).ok);
  }

  int tiers = 0;
  for (Engine e : host_jit_tiers()) {
    const std::string engine = engine_name(e);
    CAPTURE(engine);
    pica::PreparedShader ps;
    std::string err;
    REQUIRE_MESSAGE(prepare(setup, e, ps, err), err);
    REQUIRE(ps.draw.valid);
    const size_t block_bytes =
        rt::align64(std::max<size_t>(pica::kUniformBytes, ps.function ? ps.function->uniform_bytes : 0)) + 64;
    auto block = rt::allocate_aligned(block_bytes, true);
    std::memcpy(block.get(), packed.data(), packed.size());

    std::vector<p::OutputVertex> out(kMax + 1);
    const pica::DrawStreams is = records(in.data(), 0x7), os = records(out.data(), 0x7);
    pica::DrawScratch scratch;
    scratch.streams_id = 1;
    constexpr uint64_t kBudget = 1ull << 40;

    // No set-up yet: nothing runs.
    CHECK(pica::run_draw_again(ps, ps.draw, block.get(), 40, 1, kBudget, scratch) == 0);
    const float sentinel = 12345.0f;
    for (auto& o : out) o.o[0][0] = sentinel;
    CHECK(out[0].o[0][0] == sentinel);

    REQUIRE(pica::run_draw(ps, ps.draw, block.get(), is, os, 40, 1, kBudget, scratch).ok);
    if (!scratch.again_ok) {
      // An engine without the draw-loop stub keeps run_draw for every draw.
      CHECK(pica::run_draw_again(ps, ps.draw, block.get(), 40, 1, kBudget, scratch) == 0);
      continue;
    }
    ++tiers;
    // Every size from 1 to kMax (whole warps, partial last warps, one
    // vertex), each against the interpreter, nothing past the draw written.
    for (size_t n = 1; n <= kMax; ++n) {
      CAPTURE(n);
      for (auto& o : out)
        for (auto& r : o.o) r.fill(sentinel);
      REQUIRE(pica::run_draw_again(ps, ps.draw, block.get(), n, 1, kBudget, scratch) == 1);
      bool same = true;
      for (size_t k = 0; k < n && same; ++k)
        for (unsigned r = 0; r < 3; ++r)
          if (std::memcmp(out[k].o[r].data(), ref[k].o[r].data(), 16) != 0) {
            FAIL_CHECK("vertex " << k << " o" << r << " differs from the interpreter");
            same = false;
            break;
          }
      for (size_t k = n; k <= kMax; ++k) CHECK(out[k].o[0][0] == sentinel);
      // Output registers outside the mask are never written.
      CHECK(out[0].o[3][0] == sentinel);
    }
    // A uniform written into the block between draws is read by the next
    // one (c0-c4 all changed: whichever the assembler gave m and k).
    {
      p::Uniforms u2 = u;
      pica::Uniforms mu2 = mu;
      for (unsigned r = 0; r < 5; ++r) u2.f[r][0] = mu2.f[r][0] = 0.5f;
      const std::vector<uint8_t> packed2 = pica::pack_uniforms(mu2);
      std::memcpy(block.get(), packed2.data(), packed2.size());
      std::vector<p::OutputVertex> ref2(kMax);
      p::ShaderSetup s = setup;
      s.engine = "interp";
      REQUIRE(p::Shader::compile(s)->run(u2, in, ref2, p::RunOptions{1}).ok);
      REQUIRE(pica::run_draw_again(ps, ps.draw, block.get(), 32, 1, kBudget, scratch) == 1);
      for (size_t k = 0; k < 32; ++k)
        for (unsigned r = 0; r < 3; ++r) CHECK(std::memcmp(out[k].o[r].data(), ref2[k].o[r].data(), 16) == 0);
      CHECK(std::memcmp(ref2[5].o[0].data(), ref[5].o[0].data(), 16) != 0);
      std::memcpy(block.get(), packed.data(), packed.size());
    }
    // What must not take this path: other streams, a split draw, no vertices.
    scratch.streams_id = 2;
    CHECK(pica::run_draw_again(ps, ps.draw, block.get(), 40, 1, kBudget, scratch) == 0);
    scratch.streams_id = 1;
    CHECK(pica::run_draw_again(ps, ps.draw, block.get(), 0, 1, kBudget, scratch) == 0);
    CHECK(pica::run_draw_again(ps, ps.draw, block.get(), pica::kDrawParallelMin, 0, kBudget, scratch) == 0);
    pica::PreparedShader other;
    REQUIRE_MESSAGE(prepare(setup, e, other, err), err);
    CHECK(pica::run_draw_again(other, other.draw, block.get(), 40, 1, kBudget, scratch) == 0);
    // A rebuilt set-up for new streams is taken again from the next draw on.
    scratch.streams_id = 3;
    const pica::DrawStreams os2 = records(out.data() + 1, 0x7);
    REQUIRE(pica::run_draw(ps, ps.draw, block.get(), is, os2, 33, 1, kBudget, scratch).ok);
    for (auto& o : out)
      for (auto& r : o.o) r.fill(sentinel);
    REQUIRE(pica::run_draw_again(ps, ps.draw, block.get(), 33, 1, kBudget, scratch) == 1);
    CHECK(out[0].o[0][0] == sentinel);
    CHECK(std::memcmp(out[33].o[0].data(), ref[32].o[0].data(), 16) == 0);
    CHECK(out[34].o[0][0] == sentinel);
  }

  // Faults: a program that runs off the end of program memory faults in
  // every warp; the repeated draw reports the first warp's vertex, as
  // run_draw does, and a later draw of the same state still works.
  p::ShaderSetup no_end;
  no_end.code = {0x4C201004};  // mov o1, v1
  no_end.descriptors = {0, 0, 0, 0, 0x0D86C36F};
  for (Engine e : host_jit_tiers()) {
    const std::string engine = engine_name(e);
    CAPTURE(engine);
    pica::PreparedShader ps;
    std::string err;
    REQUIRE_MESSAGE(prepare(no_end, e, ps, err), err);
    auto block = rt::allocate_aligned(pica::kUniformBytes + 64, true);
    std::memcpy(block.get(), packed.data(), packed.size());
    std::vector<p::OutputVertex> out(kMax);
    pica::DrawScratch scratch;
    scratch.streams_id = 7;
    const pica::DrawResult first =
        pica::run_draw(ps, ps.draw, block.get(), records(in.data(), 0x3), records(out.data(), 0x3), 100, 1, 1ull << 40,
                       scratch);
    CHECK_FALSE(first.ok);
    if (!scratch.again_ok) continue;
    for (size_t n : {size_t(100), size_t(64), size_t(40), size_t(5)}) {
      CAPTURE(n);
      REQUIRE(pica::run_draw_again(ps, ps.draw, block.get(), n, 1, 1ull << 40, scratch) == -1);
      CHECK_FALSE(scratch.again_fault.ok);
      CHECK(scratch.again_fault.fault_vertex < 32);
      CHECK(scratch.again_fault.fault == first.fault);
    }
  }
  MESSAGE("tiers through the repeated draw: " << tiers);
}

}  // namespace gpurc_test_pica200_draw_again
