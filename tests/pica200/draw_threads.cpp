// Draws and threads (seventeenth session; docs/pica200.md): the automatic
// thread choice (pica::SplitChooser) driven with made-up clock readings, and
// draws around the split threshold giving the same outputs and the same
// faults on one thread, on two and with the default (automatic) count, through
// DrawState and Shader::run. No timing is checked.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "frontend/pica200/module/draw.h"
#include "gpurc/pica200.h"
#include "tests/pica200/reference_draw_case.h"

namespace gpurc_test_pica200_draw_threads {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
namespace p = gpurc::pica200;
using pica::SplitChooser;

namespace {

// Feeds `draws` large draws of `count` vertices to `c`, each taking
// `single_ns` or `split_ns` (as the chooser picked) and followed by
// `gap_single` / `gap_split` ns of the caller's own work; returns how many
// it split. `clock` carries on between calls.
size_t feed(SplitChooser& c, int64_t& clock, size_t draws, size_t count, int64_t single_ns, int64_t split_ns,
            int64_t gap_single, int64_t gap_split) {
  size_t splits = 0;
  for (size_t d = 0; d < draws; ++d) {
    const bool split = c.begin(count, clock);
    splits += split;
    clock += split ? split_ns : single_ns;
    c.end(clock);
    clock += split ? gap_split : gap_single;
  }
  return splits;
}

using RefCase = gpurc::test::ReferenceDrawCase;

std::vector<RefCase> reference_shaders() {
  std::vector<RefCase> out;
  for (const char* name : {"ref_simple", "ref_heavy", "ref_loop"}) out.push_back(gpurc::test::load_reference_draw_case(name));
  return out;
}

std::vector<p::InputVertex> inputs(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<p::InputVertex> in(n);
  for (auto& v : in)
    for (auto& r : v.v)
      for (float& x : r) x = d(rng);
  return in;
}

// The first differing output word, or "" when all agree bit for bit.
std::string differ(const std::vector<p::OutputVertex>& got, const std::vector<p::OutputVertex>& want, size_t n) {
  for (size_t k = 0; k < n; ++k)
    for (unsigned r = 0; r < 16; ++r)
      if (std::memcmp(&got[k].o[r], &want[k].o[r], 16) != 0) return "vertex " + std::to_string(k) + " o" + std::to_string(r);
  return "";
}

// Sizes around the split threshold and a few larger ones (partial last warps too).
const size_t kSizes[] = {pica::kDrawParallelMin - 1, pica::kDrawParallelMin, pica::kDrawParallelMin + 1,
                         pica::kDrawParallelMin + 31, 2048, 4096 + 7};

}  // namespace

TEST_CASE("draw threads: a draw with too little work never splits, however long the caller waits") {
  SplitChooser c;
  int64_t clock = 1000;
  // 1 ns per vertex: 4096 vertices are 4 us of work, under kMinWorkNs.
  CHECK(feed(c, clock, 3000, 4096, 4096, 100, 0, 0) == 0);
  CHECK(c.one_draw > 0);
  CHECK(c.cycle[1] == 0);
  // Such draws read the clock only now and then; heavier ones always.
  size_t clocked = 0;
  for (int d = 0; d < 320; ++d) clocked += c.wants_clock(4096);
  CHECK(clocked == 320 / SplitChooser::kResample);
  CHECK(c.wants_clock(4096 * 4));
}

TEST_CASE("draw threads: a split that pays is taken, and the other way is probed less and less often") {
  SplitChooser c;
  int64_t clock = 1000;
  // 40 us on one thread, 22 us split, no caller work between draws.
  feed(c, clock, 20, 4096, 40000, 22000, 0, 0);
  const size_t splits = feed(c, clock, 4000, 4096, 40000, 22000, 0, 0);
  // Every draw splits but the probes of one thread (3 draws each, from every
  // 64th draw at first to every 1024th).
  CHECK(splits < 4000);
  CHECK(splits > 4000 - 4000 / 64 * 3);
  CHECK(c.probe_every == SplitChooser::kProbeMax);
  CHECK(c.cycle[1] < SplitChooser::kMargin * c.cycle[0]);
}

TEST_CASE("draw threads: a split that does not pay stays off but for rare probes") {
  SplitChooser c;
  int64_t clock = 1000;
  // Heavy enough to consider, but the split draw is slower (a busy machine).
  feed(c, clock, 20, 4096, 40000, 45000, 1000, 1000);
  const size_t splits = feed(c, clock, 4000, 4096, 40000, 45000, 1000, 1000);
  CHECK(splits > 0);          // it still looks now and then
  CHECK(splits < 4000 / 64 * 3 + 3);
  CHECK(c.probe_every == SplitChooser::kProbeMax);
}

TEST_CASE("draw threads: what a split costs the caller after the draw counts") {
  // The split draw itself is faster (25 us against 40), but the caller's
  // work after it takes 30 us longer (output lines on the other core): the
  // cycle is slower, so no split.
  SplitChooser c;
  int64_t clock = 1000;
  feed(c, clock, 20, 4096, 40000, 25000, 20000, 50000);
  const size_t splits = feed(c, clock, 2000, 4096, 40000, 25000, 20000, 50000);
  CHECK(splits < 2000 / 64 * 3 + 3);
  // The same with equal caller work: the split pays.
  SplitChooser d;
  clock = 1000;
  feed(d, clock, 20, 4096, 40000, 25000, 20000, 20000);
  CHECK(feed(d, clock, 2000, 4096, 40000, 25000, 20000, 20000) > 1900);
}

TEST_CASE("draw threads: a long pause between draws counts only up to kGapCap draws") {
  // 10 ms of other work after every draw, the same either way: without the
  // cap the draw's own 15 us difference would be 0.1% of the cycle and lost
  // in the margin.
  SplitChooser c;
  int64_t clock = 1000;
  feed(c, clock, 20, 4096, 40000, 25000, 10000000, 10000000);
  CHECK(feed(c, clock, 2000, 4096, 40000, 25000, 10000000, 10000000) > 1900);
}

TEST_CASE("draw threads: the choice follows a change of the machine's load") {
  SplitChooser c;
  int64_t clock = 1000;
  feed(c, clock, 2000, 4096, 40000, 22000, 0, 0);  // splitting pays
  CHECK(c.cycle[1] < SplitChooser::kMargin * c.cycle[0]);
  // Now a split draw takes 60 us (the other core is busy): a few draws
  // later the chooser is back on one thread, probing a split at most once
  // per probe interval.
  feed(c, clock, 10, 4096, 40000, 60000, 0, 0);
  CHECK_FALSE(c.cycle[1] < SplitChooser::kMargin * c.cycle[0]);
  CHECK(feed(c, clock, 200, 4096, 40000, 60000, 0, 0) <= SplitChooser::kProbeDraws);
  // And back: once a probe sees the split pay again, it is taken again.
  feed(c, clock, 2 * SplitChooser::kProbeMax, 4096, 40000, 22000, 0, 0);
  CHECK(feed(c, clock, 200, 4096, 40000, 22000, 0, 0) >= 200 - 3 * SplitChooser::kProbeDraws);
}

TEST_CASE("draw threads: results do not depend on the thread count around the split threshold") {
  for (const RefCase& rc : reference_shaders()) {
    for (const std::string& e : p::engines()) {
      if (e == "interp") continue;
      CAPTURE(rc.name);
      CAPTURE(e);
      p::ShaderSetup setup = rc.setup;
      setup.engine = e;
      auto shader = p::Shader::compile(setup);
      p::DrawState draw(*shader);
      draw.set_uniforms(rc.uniforms);
      for (size_t n : kSizes) {
        CAPTURE(n);
        const std::vector<p::InputVertex> in = inputs(n, uint32_t(n));
        std::vector<p::OutputVertex> one(n), got(n);
        const auto is = p::VertexInputs::records(in.data(), sizeof(p::InputVertex), 0xFFFF);
        REQUIRE(draw.run(is, p::VertexOutputs::records(one.data(), sizeof(p::OutputVertex), 0xFFFF), n,
                         p::RunOptions{1})
                    .ok);
        // Two threads (split from kDrawParallelMin) and the default, drawn
        // several times so the automatic choice runs both ways.
        for (unsigned threads : {2u, 0u, 0u, 0u, 0u, 0u, 0u}) {
          CAPTURE(threads);
          std::fill(got.begin(), got.end(), p::OutputVertex{});
          REQUIRE(draw.run(is, p::VertexOutputs::records(got.data(), sizeof(p::OutputVertex), 0xFFFF), n,
                           p::RunOptions{threads})
                      .ok);
          CHECK_MESSAGE(differ(got, one, n).empty(), differ(got, one, n));
          std::fill(got.begin(), got.end(), p::OutputVertex{});
          REQUIRE(shader->run(rc.uniforms, in, got, p::RunOptions{threads}).ok);
          CHECK_MESSAGE(differ(got, one, n).empty(), "Shader::run: " << differ(got, one, n));
        }
      }
    }
  }
}

TEST_CASE("draw threads: a fault in either half of a split draw is reported as on one thread") {
  // v0.x < v1.x runs EMIT, a fault in a vertex shader; the other vertices end.
  const char* text = R"(
.proc main
    cmp v0, lt, lt, v1
    ifc cmp.x
        emit
    .end
    mov o0, v0
    end
.end
)";
  const p::ShaderSetup base = p::load_shbin(p::assemble(text));
  const size_t n = 4096 + 40;
  for (const std::string& e : p::engines()) {
    if (e == "interp") continue;
    CAPTURE(e);
    p::ShaderSetup setup = base;
    setup.engine = e;
    auto shader = p::Shader::compile(setup);
    p::DrawState draw(*shader);
    // Faulting vertices: in the first item, in the last (partial) warp, in
    // both halves, and none.
    const std::vector<std::vector<size_t>> plans = {{70}, {4100}, {2500}, {300, 3900}, {1500, 1501, 4000}, {}};
    for (const auto& bad : plans) {
      CAPTURE(bad.size());
      CAPTURE(bad.empty() ? size_t(0) : bad[0]);
      std::vector<p::InputVertex> in(n);
      for (size_t k = 0; k < n; ++k) {
        in[k].v[0] = {1, 0, 0, 0};
        in[k].v[1] = {0, 0, 0, 0};
      }
      for (size_t k : bad) in[k].v[0] = {-1, 0, 0, 0};
      std::vector<p::OutputVertex> out(n);
      const auto is = p::VertexInputs::records(in.data(), sizeof(p::InputVertex), 0x0003);
      const auto os = p::VertexOutputs::records(out.data(), sizeof(p::OutputVertex), 0x0001);
      const p::RunResult one = draw.run(is, os, n, p::RunOptions{1});
      CHECK(one.ok == bad.empty());
      if (!bad.empty()) {
        CHECK(one.failed_vertex <= bad[0]);
        CHECK(one.failed_vertex / 32 == bad[0] / 32);
        CHECK(one.error.find("0x002") != std::string::npos);
      }
      for (unsigned threads : {2u, 0u, 0u, 0u, 0u}) {
        CAPTURE(threads);
        const p::RunResult r = draw.run(is, os, n, p::RunOptions{threads});
        CHECK(r.ok == one.ok);
        CHECK(r.failed_vertex == one.failed_vertex);
        CHECK(r.error == one.error);
        const p::RunResult s = shader->run(p::Uniforms{}, in, out, p::RunOptions{threads});
        CHECK(s.ok == one.ok);
        CHECK(s.failed_vertex == one.failed_vertex);
        CHECK(s.error == one.error);
      }
    }
  }
}

}  // namespace gpurc_test_pica200_draw_threads
