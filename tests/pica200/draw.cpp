// The draw-level PICA200 API (DrawState, VertexInputs, VertexOutputs,
// OutputMap in include/gpurc/pica200.h) against Shader::run and the
// reference interpreter: the reference shaders and every bundled vertex
// example on every backend, masks, strides, packed records, per-register
// arrays, output maps, partial uniform updates, threads, faults, bad
// arguments.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <fstream>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

#include "gpurc/pica200.h"
#include "tests/pica200/reference_draw_case.h"

namespace gpurc_test_pica200_draw {  // one namespace per file: unity builds (CMakeLists.txt)

namespace p = gpurc::pica200;

namespace {

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in, "cannot open " << path.string());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Case {
  std::string name;
  p::ShaderSetup setup;
  p::Uniforms uniforms;
};

// The three reference shaders (bench/pica200-reference) and every vertex
// shader of examples/pica200 with its constants over random c registers.
std::vector<Case> cases() {
  const std::filesystem::path root = GPURC_TEST_DATA;
  std::vector<Case> out;
  for (const char* name : {"ref_simple", "ref_heavy", "ref_loop"}) {
    gpurc::test::ReferenceDrawCase r = gpurc::test::load_reference_draw_case(name);
    out.push_back(Case{std::move(r.name), std::move(r.setup), r.uniforms});
  }
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  size_t examples = 0;
  for (const auto& e : std::filesystem::directory_iterator(root / "examples/pica200")) {
    if (e.path().extension() != ".pica") continue;
    const std::vector<uint8_t> bin = p::assemble(read_file(e.path()));
    Case c;
    c.name = e.path().filename().string();
    for (auto& r : c.uniforms.f)
      for (float& x : r) x = d(rng);
    c.setup = p::load_shbin(bin, 0, &c.uniforms);
    if (c.setup.type != p::ShaderType::Vertex) continue;
    out.push_back(std::move(c));
    ++examples;
  }
  CHECK(examples >= 5);
  return out;
}

std::vector<p::InputVertex> random_inputs(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<p::InputVertex> in(n);
  for (auto& v : in)
    for (auto& r : v.v)
      for (float& x : r) x = d(rng);
  return in;
}

bool same(float a, float b) {
  uint32_t x, y;
  std::memcpy(&x, &a, 4);
  std::memcpy(&y, &b, 4);
  return x == y || (std::isnan(a) && std::isnan(b));
}

// Every output register of every vertex bit for bit (NaN matches NaN).
void check_same(const std::vector<p::OutputVertex>& got, const std::vector<p::OutputVertex>& want, uint16_t mask,
                const std::string& what) {
  REQUIRE(got.size() == want.size());
  for (size_t k = 0; k < got.size(); ++k)
    for (unsigned n = 0; n < 16; ++n)
      if (mask >> n & 1)
        for (unsigned c = 0; c < 4; ++c)
          if (!same(got[k].o[n][c], want[k].o[n][c])) {
            FAIL_CHECK(what << ": vertex " << k << " o" << n << "." << "xyzw"[c] << " = " << got[k].o[n][c]
                            << ", expected " << want[k].o[n][c]);
            return;
          }
}

std::shared_ptr<const p::Shader> compile_on(p::ShaderSetup setup, const std::string& engine) {
  setup.engine = engine;
  return p::Shader::compile(setup);
}

p::OutputVertex garbage_vertex() {
  p::OutputVertex g;
  for (auto& r : g.o) r = {-7.5f, -7.5f, -7.5f, -7.5f};
  return g;
}

}  // namespace

TEST_CASE("pica200 draw: reference shaders and examples agree with Shader::run and the interpreter on every backend") {
  const std::vector<std::string> engines = p::engines();
  for (const Case& c : cases())
    for (size_t count : {size_t(1), size_t(31), size_t(70)}) {
      const std::vector<p::InputVertex> in = random_inputs(count, 11);
      std::vector<p::OutputVertex> ref(count);
      auto interp = compile_on(c.setup, "interp");
      REQUIRE(interp->run(c.uniforms, in, ref, p::RunOptions{1}).ok);
      for (const std::string& e : engines) {
        auto shader = compile_on(c.setup, e);
        std::vector<p::OutputVertex> via_run(count, garbage_vertex()), via_draw(count, garbage_vertex());
        p::RunResult r = shader->run(c.uniforms, in, via_run);
        REQUIRE_MESSAGE(r.ok, c.name << " " << e << ": " << r.error);
        p::DrawState draw(*shader);
        draw.set_uniforms(c.uniforms);
        r = draw.run(p::VertexInputs::records(in.data(), sizeof(p::InputVertex), 0xFFFF),
                     p::VertexOutputs::records(via_draw.data(), sizeof(p::OutputVertex), 0xFFFF), count);
        REQUIRE_MESSAGE(r.ok, c.name << " " << e << ": " << r.error);
        check_same(via_run, ref, 0xFFFF, c.name + " run on " + e + " vs interp");
        check_same(via_draw, ref, 0xFFFF, c.name + " draw on " + e + " vs interp");
      }
    }
}

TEST_CASE("pica200 draw: packed records, odd strides, per-register arrays and masks") {
  const Case c = cases()[2];  // ref_loop: reads v0-v3, writes o0-o2
  const size_t n = 45;
  const std::vector<p::InputVertex> in = random_inputs(n, 3);
  std::vector<p::OutputVertex> ref(n);
  REQUIRE(compile_on(c.setup, "interp")->run(c.uniforms, in, ref, p::RunOptions{1}).ok);
  for (const std::string& e : p::engines()) {
    auto shader = compile_on(c.setup, e);
    p::DrawState draw(*shader);
    draw.set_uniforms(c.uniforms);
    // Inputs: v0-v3 packed in 80-byte records (64 bytes of registers + 16 unused).
    const size_t in_stride = 80;
    std::vector<uint8_t> in_buf(n * in_stride, 0xAB);
    for (size_t k = 0; k < n; ++k)
      for (unsigned r = 0; r < 4; ++r) std::memcpy(&in_buf[k * in_stride + 16 * r], in[k].v[r].data(), 16);
    // Outputs: o0-o2 packed in 52-byte records (an odd stride, not a multiple of 16) with a guard word.
    const size_t out_stride = 52;
    std::vector<uint8_t> out_buf(n * out_stride, 0xCD);
    p::RunResult r = draw.run(p::VertexInputs::records(in_buf.data(), in_stride, 0x000F, true),
                              p::VertexOutputs::records(out_buf.data(), out_stride, 0x0007, true), n);
    REQUIRE_MESSAGE(r.ok, r.error);
    for (size_t k = 0; k < n; ++k) {
      for (unsigned reg = 0; reg < 3; ++reg)
        for (unsigned comp = 0; comp < 4; ++comp) {
          float f;
          std::memcpy(&f, &out_buf[k * out_stride + 16 * reg + 4 * comp], 4);
          CHECK_MESSAGE(same(f, ref[k].o[reg][comp]), e << " vertex " << k << " o" << reg);
        }
      for (size_t b = 48; b < 52; ++b) CHECK(out_buf[k * out_stride + b] == 0xCD);  // past the record: untouched
    }
    // Per-register arrays in, per-register arrays out (o1 only).
    std::array<std::vector<p::Vec4>, 4> arrays;
    std::array<const p::Vec4*, 16> in_ptrs{};
    for (unsigned r = 0; r < 4; ++r) {
      for (size_t k = 0; k < n; ++k) arrays[r].push_back(in[k].v[r]);
      in_ptrs[r] = arrays[r].data();
    }
    std::vector<p::Vec4> o1(n, p::Vec4{9, 9, 9, 9});
    std::array<p::Vec4*, 16> out_ptrs{};
    out_ptrs[1] = o1.data();
    r = draw.run(p::VertexInputs::arrays(in_ptrs, 0x000F), p::VertexOutputs::arrays(out_ptrs, 0x0002), n);
    REQUIRE_MESSAGE(r.ok, r.error);
    for (size_t k = 0; k < n; ++k)
      for (unsigned comp = 0; comp < 4; ++comp) CHECK(same(o1[k][comp], ref[k].o[1][comp]));
  }
}

TEST_CASE("pica200 draw: unsupplied inputs read as zero, unwritten outputs are zero") {
  const Case c = cases()[0];  // ref_simple: o0 = MVP * v0, o1 = v1, o2 = v2
  const size_t n = 37;
  std::vector<p::InputVertex> in = random_inputs(n, 5);
  for (const std::string& e : p::engines()) {
    auto shader = compile_on(c.setup, e);
    p::DrawState draw(*shader);
    draw.set_uniforms(c.uniforms);
    // First a run that loads v1, then one that does not: v1 must not keep the earlier values.
    std::vector<p::OutputVertex> out(n, garbage_vertex());
    REQUIRE(draw.run(p::VertexInputs::records(in.data(), sizeof(p::InputVertex), 0x0007),
                     p::VertexOutputs::records(out.data(), sizeof(p::OutputVertex), 0xFFFF), n)
                .ok);
    out.assign(n, garbage_vertex());
    REQUIRE(draw.run(p::VertexInputs::records(in.data(), sizeof(p::InputVertex), 0x0005),
                     p::VertexOutputs::records(out.data(), sizeof(p::OutputVertex), 0x00FE), n)
                .ok);
    for (size_t k = 0; k < n; ++k) {
      CHECK(out[k].o[0][0] == -7.5f);  // not in the output mask: untouched
      for (unsigned comp = 0; comp < 4; ++comp) {
        CHECK_MESSAGE(out[k].o[1][comp] == 0.0f, e << ": v1 not loaded, o1 = v1 must be zero");
        CHECK(same(out[k].o[2][comp], in[k].v[2][comp]));
        CHECK_MESSAGE(out[k].o[5][comp] == 0.0f, e << ": o5 is never written");
      }
    }
  }
}

TEST_CASE("pica200 draw: an output map scatters components into the emulator's vertex layout") {
  const Case c = cases()[0];
  const size_t n = 33;
  const std::vector<p::InputVertex> in = random_inputs(n, 9);
  std::vector<p::OutputVertex> ref(n);
  REQUIRE(compile_on(c.setup, "interp")->run(c.uniforms, in, ref, p::RunOptions{1}).ok);
  // pos = o0 at floats 0-3; colour = o1 at 4-7 in reverse order (w z y x);
  // texcoord = o2.xy at 8-9; o2.zw dropped; float 10-11 unused.
  p::OutputMap map;
  map.slot[0] = {0, 1, 2, 3};
  map.slot[1] = {7, 6, 5, 4};
  map.slot[2] = {8, 9, p::OutputMap::kUnused, p::OutputMap::kUnused};
  constexpr size_t kFloats = 12;
  for (const std::string& e : p::engines()) {
    auto shader = compile_on(c.setup, e);
    p::DrawState draw(*shader);
    draw.set_uniforms(c.uniforms);
    std::vector<float> out(n * kFloats, 123.0f);
    p::RunResult r = draw.run(p::VertexInputs::records(in.data(), sizeof(p::InputVertex), 0x0007),
                              p::VertexOutputs::mapped(out.data(), kFloats * sizeof(float), map), n);
    REQUIRE_MESSAGE(r.ok, r.error);
    for (size_t k = 0; k < n; ++k) {
      const float* v = &out[k * kFloats];
      for (unsigned comp = 0; comp < 4; ++comp) {
        CHECK(same(v[comp], ref[k].o[0][comp]));
        CHECK(same(v[7 - comp], ref[k].o[1][comp]));
      }
      CHECK(same(v[8], ref[k].o[2][0]));
      CHECK(same(v[9], ref[k].o[2][1]));
      CHECK(v[10] == 123.0f);
      CHECK(v[11] == 123.0f);
    }
  }
}

TEST_CASE("pica200 draw: partial uniform updates change only what was written") {
  const Case c = cases()[2];  // ref_loop: c0-c17 and i0
  const size_t n = 40;
  const std::vector<p::InputVertex> in = random_inputs(n, 13);
  for (const std::string& e : p::engines()) {
    auto shader = compile_on(c.setup, e);
    p::DrawState draw(*shader);
    draw.set_uniforms(c.uniforms);
    p::Uniforms u = c.uniforms;
    auto check_against_run = [&](const char* step) {
      std::vector<p::OutputVertex> want(n), got(n);
      REQUIRE(shader->run(u, in, want, p::RunOptions{1}).ok);
      REQUIRE(draw.run(p::VertexInputs::records(in.data(), sizeof(p::InputVertex), 0xFFFF),
                       p::VertexOutputs::records(got.data(), sizeof(p::OutputVertex), 0xFFFF), n)
                  .ok);
      check_same(got, want, 0xFFFF, std::string(e) + " after " + step);
      CHECK(draw.uniforms().f == u.f);
    };
    check_against_run("set_uniforms");
    draw.set_float(1, {0.5f, 0.25f, -1.0f, 2.0f});
    u.f[1] = {0.5f, 0.25f, -1.0f, 2.0f};
    check_against_run("set_float(c1)");
    const std::array<p::Vec4, 2> blend = {p::Vec4{0.1f, 0.2f, 0.3f, 0.4f}, p::Vec4{-0.4f, 0.3f, -0.2f, 0.1f}};
    draw.set_floats(12, blend);
    u.f[12] = blend[0];
    u.f[13] = blend[1];
    check_against_run("set_floats(c12-c13)");
    draw.set_int(0, {3, 2, 1, 0});  // 4 iterations, aL = 2, 3, 4, 5
    u.i[0] = {3, 2, 1, 0};
    check_against_run("set_int(i0)");
    draw.set_bool(3, true);
    u.b = 1 << 3;
    check_against_run("set_bool(b3)");
    CHECK_THROWS_AS(draw.set_float(96, {}), p::Error);
    CHECK_THROWS_AS(draw.set_floats(95, blend), p::Error);
    CHECK_THROWS_AS(draw.set_int(4, {}), p::Error);
    CHECK_THROWS_AS(draw.set_bool(16, true), p::Error);
  }
}

TEST_CASE("pica200 draw: a large draw gives the same outputs on all cores as on one thread") {
  const Case c = cases()[1];  // ref_heavy
  const size_t n = std::getenv("GPURC_TEST_LIGHT") ? 4200 : 9000;
  const std::vector<p::InputVertex> in = random_inputs(n, 17);
  for (const std::string& e : p::engines()) {
    if (e == "interp") continue;
    auto shader = compile_on(c.setup, e);
    p::DrawState draw(*shader);
    draw.set_uniforms(c.uniforms);
    std::vector<p::OutputVertex> one(n), all(n);
    REQUIRE(draw.run(p::VertexInputs::records(in.data(), sizeof(p::InputVertex), 0xFFFF),
                     p::VertexOutputs::records(one.data(), sizeof(p::OutputVertex), 0xFFFF), n, p::RunOptions{1})
                .ok);
    REQUIRE(draw.run(p::VertexInputs::records(in.data(), sizeof(p::InputVertex), 0xFFFF),
                     p::VertexOutputs::records(all.data(), sizeof(p::OutputVertex), 0xFFFF), n, p::RunOptions{0})
                .ok);
    check_same(all, one, 0xFFFF, e + " all cores vs one thread");
  }
}

TEST_CASE("pica200 draw: faults, geometry shaders and bad arguments give clear errors") {
  const Case simple = cases()[0];
  const std::vector<p::InputVertex> in = random_inputs(40, 1);
  std::vector<p::OutputVertex> out(40);
  const auto rec_in = p::VertexInputs::records(in.data(), sizeof(p::InputVertex), 0x0007);
  const auto rec_out = p::VertexOutputs::records(out.data(), sizeof(p::OutputVertex), 0x0007);
  for (const std::string& e : p::engines()) {
    auto shader = compile_on(simple.setup, e);
    p::DrawState draw(*shader);
    CHECK(draw.run(rec_in, rec_out, 0).ok);
    p::RunResult r = draw.run(p::VertexInputs::records(in.data(), 32, 0x0007), rec_out, 40);
    CHECK_FALSE(r.ok);
    CHECK_MESSAGE(r.error.find("stride 32 is smaller than a record") != std::string::npos, r.error);
    r = draw.run(rec_in, p::VertexOutputs::records(out.data(), 8, 0x0001), 40);
    CHECK_FALSE(r.ok);
    CHECK_MESSAGE(r.error.find("smaller than a register") != std::string::npos, r.error);
    r = draw.run(p::VertexInputs::records(nullptr, 256, 0x0001), rec_out, 40);
    CHECK_FALSE(r.ok);
    CHECK_MESSAGE(r.error.find("v0 has no address (null pointer)") != std::string::npos, r.error);
    r = draw.run(rec_in, p::VertexOutputs::records(nullptr, 256, 0x0004), 40);
    CHECK_FALSE(r.ok);
    CHECK_MESSAGE(r.error.find("o2 has no address") != std::string::npos, r.error);
    p::OutputMap map;
    map.slot[0] = {0, 1, 2, 20};
    r = draw.run(rec_in, p::VertexOutputs::mapped(out.data(), 64, map), 40);
    CHECK_FALSE(r.ok);
    CHECK_MESSAGE(r.error.find("smaller than a record") != std::string::npos, r.error);
  }
  // A program without END runs past the end of program memory: a reported fault.
  p::ShaderSetup no_end;
  no_end.code = {0x4C201004};  // mov o1, v1
  no_end.descriptors = {0, 0, 0, 0, 0x0D86C36F};
  for (const std::string& e : p::engines()) {
    auto shader = compile_on(no_end, e);
    p::DrawState draw(*shader);
    p::RunResult r = draw.run(rec_in, rec_out, 40);
    CHECK_FALSE(r.ok);
    CHECK_MESSAGE(r.error.find("0x001") != std::string::npos, e << ": " << r.error);
  }
  // Geometry shaders are drawn with run_geometry.
  const std::filesystem::path root = GPURC_TEST_DATA;
  p::ShaderSetup gs = p::load_shbin(p::assemble(read_file(root / "examples/pica200/geometry_quad.pica")));
  REQUIRE(gs.type == p::ShaderType::Geometry);
  auto gshader = p::Shader::compile(gs);
  CHECK_THROWS_WITH_AS(p::DrawState{*gshader}, doctest::Contains("run_geometry"), p::Error);
}

TEST_CASE("pica200 draw: pass-through copies only where a register is a plain copy of one input") {
  // o0 = v0 (plain: copied record to record), o1 = v1 swizzled, o2 = -v2,
  // o3.xy = v3 (z, w never written), o4 = v0 again, o5 = v5 on one branch only.
  const char* text = R"(
.out o0 position
.out o1 color
.out o2 texcoord0
.out o3 texcoord1
.out o4 view
.out o5 texcoord2
.bool b0
.proc main
    mov o0, v0
    mov o1, v1.wzyx
    mov o2, -v2
    mov o3.xy, v3
    mov o4, v0
    ifu b0
        mov o5, v5
    .end
    end
.end
)";
  p::Uniforms u;
  p::ShaderSetup setup = p::load_shbin(p::assemble(text), 0, &u);
  const size_t n = 37;
  const std::vector<p::InputVertex> in = random_inputs(n, 21);
  for (bool b0 : {false, true}) {
    u.b = b0 ? 1 : 0;
    std::vector<p::OutputVertex> ref(n);
    REQUIRE(compile_on(setup, "interp")->run(u, in, ref, p::RunOptions{1}).ok);
    CHECK(ref[3].o[3][2] == 0.0f);
    CHECK(same(ref[3].o[1][0], in[3].v[1][3]));
    for (const std::string& e : p::engines()) {
      auto shader = compile_on(setup, e);
      p::DrawState draw(*shader);
      draw.set_uniforms(u);
      // All registers, then v0 missing (o0, o4 must be zero) and o0 through a map.
      std::vector<p::OutputVertex> out(n, garbage_vertex());
      REQUIRE(draw.run(p::VertexInputs::records(in.data(), sizeof(p::InputVertex), 0xFFFF),
                       p::VertexOutputs::records(out.data(), sizeof(p::OutputVertex), 0x003F), n)
                  .ok);
      check_same(out, ref, 0x003F, e + " pass-through shader, b0 = " + std::to_string(b0));
      out.assign(n, garbage_vertex());
      REQUIRE(draw.run(p::VertexInputs::records(in.data(), sizeof(p::InputVertex), 0xFFFE),
                       p::VertexOutputs::records(out.data(), sizeof(p::OutputVertex), 0x003F), n)
                  .ok);
      for (size_t k = 0; k < n; ++k)
        for (unsigned c = 0; c < 4; ++c) {
          CHECK(out[k].o[0][c] == 0.0f);
          CHECK(out[k].o[4][c] == 0.0f);
          CHECK(same(out[k].o[2][c], ref[k].o[2][c]));
        }
      p::OutputMap map;
      map.slot[0] = {3, 2, 1, 0};
      std::vector<float> flat(n * 4, 5.0f);
      REQUIRE(draw.run(p::VertexInputs::records(in.data(), sizeof(p::InputVertex), 0xFFFF),
                       p::VertexOutputs::mapped(flat.data(), 16, map), n)
                  .ok);
      for (size_t k = 0; k < n; ++k)
        for (unsigned c = 0; c < 4; ++c) CHECK(same(flat[k * 4 + 3 - c], in[k].v[0][c]));
    }
  }
}

// Vertex shaders carry the unlaunched-lanes contract (ir::Function::
// unlaunched_lanes_free): in a partial warp the lanes past the draw's end
// compute on whatever the var area holds and their var stores are plain, so
// the runner alone keeps them out of caller memory. Draws of 1, 17 and 33
// vertices (a partial first, first, second warp), after a larger draw left
// other vertices' values in the var area, write exactly `count` output
// records, bit-exact with the interpreter, and not one byte past them; the
// input bytes past the draw (NaNs, which would show in any output) are never
// read into a stored result.
TEST_CASE("pica200 draw: lanes past the end of a partial warp never reach caller memory") {
  for (const Case& c : cases()) {
    auto interp = compile_on(c.setup, "interp");
    for (const std::string& e : p::engines()) {
      auto shader = compile_on(c.setup, e);
      p::DrawState draw(*shader);
      draw.set_uniforms(c.uniforms);
      {
        const std::vector<p::InputVertex> warm = random_inputs(64, 21);
        std::vector<p::OutputVertex> out(64);
        REQUIRE(draw.run(p::VertexInputs::records(warm.data(), sizeof(p::InputVertex), 0xFFFF),
                         p::VertexOutputs::records(out.data(), sizeof(p::OutputVertex), 0xFFFF), 64)
                    .ok);
      }
      for (size_t count : {size_t(1), size_t(17), size_t(33)}) {
        CAPTURE(c.name);
        CAPTURE(e);
        CAPTURE(count);
        const size_t guard = 40;  // records past the draw, in and out
        std::vector<p::InputVertex> in = random_inputs(count + guard, uint32_t(count));
        for (size_t k = count; k < in.size(); ++k)
          for (auto& r : in[k].v) r.fill(std::numeric_limits<float>::quiet_NaN());
        std::vector<p::OutputVertex> ref(count);
        const std::vector<p::InputVertex> in_head(in.begin(), in.begin() + ptrdiff_t(count));
        REQUIRE(interp->run(c.uniforms, in_head, ref, p::RunOptions{1}).ok);
        std::vector<p::OutputVertex> out(count + guard, garbage_vertex());
        const p::RunResult r = draw.run(p::VertexInputs::records(in.data(), sizeof(p::InputVertex), 0xFFFF),
                                        p::VertexOutputs::records(out.data(), sizeof(p::OutputVertex), 0xFFFF), count);
        REQUIRE_MESSAGE(r.ok, r.error);
        check_same(std::vector<p::OutputVertex>(out.begin(), out.begin() + ptrdiff_t(count)), ref, 0xFFFF,
                   c.name + " draw of " + std::to_string(count) + " on " + e);
        const p::OutputVertex g = garbage_vertex();
        for (size_t k = count; k < out.size(); ++k)
          CHECK_MESSAGE(std::memcmp(&out[k], &g, sizeof g) == 0, "output record " << k << " written");
      }
    }
  }
}

// An emulator may run a draw in place: the output records over the input
// records (register n of both at 16n). Every input a warp reads is read
// before that warp writes an output, whatever the order the runner moves
// pass-through registers, computed registers and never-written ones in.
TEST_CASE("pica200 draw: outputs written over the input records (in place)") {
  const char* text = R"(
.out o0 position
.out o1 color
.out o2 texcoord0
.out o3 texcoord1
.out o4 view
.proc main
    mov o0, v0
    mov o1, v0
    mov o2, -v1
    mov o3.xy, v3
    mov o4, v1.wzyx
    end
.end
)";
  // o1 = v0 is a pass-through copy whose record bytes are v1's, which o2
  // and o4 read; o5 (never written, zero) lies over v5.
  p::Uniforms u;
  p::ShaderSetup setup = p::load_shbin(p::assemble(text), 0, &u);
  std::vector<Case> shaders = {cases()[0], Case{"pass-through", setup, u}};
  for (size_t n : {size_t(1), size_t(31), size_t(45)}) {
    const std::vector<p::InputVertex> in = random_inputs(n, 31);
    for (const Case& c : shaders) {
      std::vector<p::OutputVertex> ref(n);
      REQUIRE(compile_on(c.setup, "interp")->run(c.uniforms, in, ref, p::RunOptions{1}).ok);
      for (const std::string& e : p::engines()) {
        auto shader = compile_on(c.setup, e);
        p::DrawState draw(*shader);
        draw.set_uniforms(c.uniforms);
        std::vector<p::InputVertex> buf = in;
        const uint16_t out_mask = c.name == "pass-through" ? 0x003F : 0x0007;
        p::RunResult r = draw.run(p::VertexInputs::records(buf.data(), sizeof(p::InputVertex), 0x000F),
                                  p::VertexOutputs::records(buf.data(), sizeof(p::InputVertex), out_mask), n);
        REQUIRE_MESSAGE(r.ok, r.error);
        for (size_t k = 0; k < n; ++k)
          for (unsigned reg = 0; reg < 16; ++reg)
            for (unsigned comp = 0; comp < 4; ++comp) {
              const float want = out_mask >> reg & 1 ? ref[k].o[reg][comp] : in[k].v[reg][comp];
              CHECK_MESSAGE(same(buf[k].v[reg][comp], want),
                            e << " " << c.name << " n = " << n << ": vertex " << k << " register " << reg);
            }
      }
    }
  }
}

// Pass-through copies in place whose registers move: a copy that writes
// the bytes another copy of the same vertex still reads (o1 = v0 over v1,
// read by o2 = v1), and two registers swapped (o0 = v1, o1 = v0). Every
// input is read before its vertex's outputs are written, so the outputs are
// the interpreter's on the original records. Before the ninth session the
// copies ran in register order, one after the other over a warp: o2 got the
// v0 that o1 had just written, and o1 the v1 that o0 had written. The same
// draws with the copies' records laid out apart from each other (so that
// some are merged into one 32- or 48-byte copy) and not in place agree too.
TEST_CASE("pica200 draw: pass-through copies in place that move registers read what the caller wrote") {
  const char* chain = R"(
.out o0 position
.out o1 color
.out o2 texcoord0
.proc main
    mov o0, v3
    mov o1, v0
    mov o2, v1
    end
.end
)";
  const char* swap = R"(
.out o0 position
.out o1 color
.out o2 texcoord0
.out o3 texcoord1
.proc main
    mov o0, v1
    mov o1, v0
    mov o2, v2
    mov o3, v3
    end
.end
)";
  const char* ident = R"(
.out o0 position
.out o1 color
.out o2 texcoord0
.out o3 texcoord1
.proc main
    mov o0, v0
    mov o1, v1
    mov o2, v2
    mov o3, v3
    end
.end
)";
  for (const char* text : {chain, swap, ident}) {
    p::Uniforms u;
    const p::ShaderSetup setup = p::load_shbin(p::assemble(text), 0, &u);
    for (size_t n : {size_t(1), size_t(7), size_t(32), size_t(45), size_t(96)}) {
      const std::vector<p::InputVertex> in = random_inputs(n, uint32_t(40 + n));
      std::vector<p::OutputVertex> ref(n);
      REQUIRE(compile_on(setup, "interp")->run(u, in, ref, p::RunOptions{1}).ok);
      for (const std::string& e : p::engines()) {
        auto shader = compile_on(setup, e);
        p::DrawState draw(*shader);
        draw.set_uniforms(u);
        std::vector<p::InputVertex> buf = in;
        p::RunResult r = draw.run(p::VertexInputs::records(buf.data(), sizeof(p::InputVertex), 0x000F),
                                  p::VertexOutputs::records(buf.data(), sizeof(p::InputVertex), 0x000F), n);
        REQUIRE_MESSAGE(r.ok, r.error);
        for (size_t k = 0; k < n; ++k)
          for (unsigned reg = 0; reg < 16; ++reg)
            for (unsigned comp = 0; comp < 4; ++comp) {
              const float want = reg < 4 ? ref[k].o[reg][comp] : in[k].v[reg][comp];
              CHECK_MESSAGE(same(buf[k].v[reg][comp], want), e << " n = " << n << ": vertex " << k << " register "
                                                                << reg << "." << "xyzw"[comp] << "\n" << text);
            }
        // Not in place, into records of 128 bytes: o0-o6 (o4-o6 never
        // written: zeros), then 16 bytes that stay untouched.
        std::vector<float> outs(n * 32, -7.5f);
        r = draw.run(p::VertexInputs::records(in.data(), sizeof(p::InputVertex), 0x000F),
                     p::VertexOutputs::records(outs.data(), 128, 0x007F), n);
        REQUIRE_MESSAGE(r.ok, r.error);
        for (size_t k = 0; k < n; ++k) {
          for (unsigned reg = 0; reg < 7; ++reg)
            for (unsigned comp = 0; comp < 4; ++comp)
              CHECK_MESSAGE(same(outs[k * 32 + 4 * reg + comp], reg < 4 ? ref[k].o[reg][comp] : 0.0f),
                            e << " n = " << n << ": vertex " << k << " o" << reg << "\n" << text);
          for (unsigned f = 28; f < 32; ++f) CHECK(outs[k * 32 + f] == -7.5f);
        }
      }
    }
  }
}

// A DrawState reuses the last draw's set-up (checked streams, copy order,
// the draw loop's descriptors) while the stream descriptions stay the same
// (ninth session): every change of a base, stride, mask or component, of
// the count across 1, and back again, must be seen.
TEST_CASE("pica200 draw: repeated draws follow every change of the streams") {
  const Case c = cases()[0];  // ref_simple: o0 computed, o1 = v1 and o2 = v2 copied
  const size_t n = 40;
  for (const std::string& e : p::engines()) {
    auto shader = compile_on(c.setup, e);
    p::DrawState draw(*shader);
    draw.set_uniforms(c.uniforms);
    auto reference = [&](const std::vector<p::InputVertex>& in, uint16_t in_mask) {
      std::vector<p::InputVertex> masked = in;
      for (auto& v : masked)
        for (unsigned r = 0; r < 16; ++r)
          if (!(in_mask >> r & 1)) v.v[r] = {0, 0, 0, 0};
      std::vector<p::OutputVertex> ref(in.size());
      REQUIRE(compile_on(c.setup, "interp")->run(c.uniforms, masked, ref, p::RunOptions{1}).ok);
      return ref;
    };
    std::vector<p::InputVertex> in = random_inputs(n, 91);
    std::vector<p::OutputVertex> y(n, garbage_vertex()), z(n, garbage_vertex());
    const auto vin = p::VertexInputs::records(in.data(), sizeof(p::InputVertex), 0x0007);
    REQUIRE(draw.run(vin, p::VertexOutputs::records(y.data(), sizeof(p::OutputVertex), 0x0007), n).ok);
    check_same(y, reference(in, 0x0007), 0x0007, e + " first draw");
    // The same streams, new contents.
    const std::vector<p::InputVertex> fresh = random_inputs(n, 92);
    std::copy(fresh.begin(), fresh.end(), in.begin());  // the same buffer
    REQUIRE(draw.run(vin, p::VertexOutputs::records(y.data(), sizeof(p::OutputVertex), 0x0007), n).ok);
    const std::vector<p::OutputVertex> ref = reference(in, 0x0007);
    check_same(y, ref, 0x0007, e + " same streams, new inputs");
    // Another output buffer: the old one stays as it was.
    const std::vector<p::OutputVertex> y_before = y;
    in[3].v[1] = {9, 9, 9, 9};
    REQUIRE(draw.run(vin, p::VertexOutputs::records(z.data(), sizeof(p::OutputVertex), 0x0007), n).ok);
    check_same(z, reference(in, 0x0007), 0x0007, e + " other output base");
    check_same(y, y_before, 0xFFFF, e + " old output untouched");
    // Packed output records (another stride).
    std::vector<float> packed(n * 12 + 4, -7.5f);
    REQUIRE(draw.run(vin, p::VertexOutputs::records(packed.data(), 48, 0x0007), n).ok);
    const std::vector<p::OutputVertex> ref3 = reference(in, 0x0007);
    for (size_t k = 0; k < n; ++k)
      for (unsigned r = 0; r < 3; ++r)
        for (unsigned comp = 0; comp < 4; ++comp) CHECK(same(packed[k * 12 + 4 * r + comp], ref3[k].o[r][comp]));
    CHECK(packed[n * 12] == -7.5f);
    // v1 no longer supplied: o1 reads zeros.
    REQUIRE(draw.run(p::VertexInputs::records(in.data(), sizeof(p::InputVertex), 0x0005),
                     p::VertexOutputs::records(z.data(), sizeof(p::OutputVertex), 0x0007), n)
                .ok);
    check_same(z, reference(in, 0x0005), 0x0007, e + " v1 dropped");
    // An output map (components moved), then the records again.
    p::OutputMap map;
    map.slot[1] = {3, 2, 1, 0};
    std::vector<float> flat(n * 4, 5.0f);
    REQUIRE(draw.run(vin, p::VertexOutputs::mapped(flat.data(), 16, map), n).ok);
    for (size_t k = 0; k < n; ++k)
      for (unsigned comp = 0; comp < 4; ++comp) CHECK(same(flat[k * 4 + 3 - comp], in[k].v[1][comp]));
    z.assign(n, garbage_vertex());
    REQUIRE(draw.run(vin, p::VertexOutputs::records(z.data(), sizeof(p::OutputVertex), 0x0007), n).ok);
    check_same(z, ref3, 0x0007, e + " records after a map");
    // A stride below a register passes with one vertex only: the check runs
    // again when the count goes past 1 with the same descriptions.
    const auto narrow = p::VertexInputs::records(in.data(), 8, 0x0001);
    REQUIRE(draw.run(narrow, p::VertexOutputs::records(z.data(), sizeof(p::OutputVertex), 0x0001), 1).ok);
    CHECK_FALSE(draw.run(narrow, p::VertexOutputs::records(z.data(), sizeof(p::OutputVertex), 0x0001), 2).ok);
    REQUIRE(draw.run(narrow, p::VertexOutputs::records(z.data(), sizeof(p::OutputVertex), 0x0001), 1).ok);
  }
}

// The engine's draw loop (generated code moving full warps between the
// records and the vars, ir::DrawLoop) against the interpreter on random
// record layouts: strides (16-byte multiples and odd ones), input and output
// masks, register placements inside the record, draw sizes around warp
// boundaries (the last partial warp runs through the C++ runner), in place
// and into a separate buffer.
TEST_CASE("pica200 draw: random layouts, strides, masks and sizes agree with the interpreter") {
  std::mt19937 rng(99);
  const std::vector<Case> all = cases();
  const bool light = std::getenv("GPURC_TEST_LIGHT") != nullptr;
  const int rounds = light ? 8 : 24;
  for (int round = 0; round < rounds; ++round) {
    const Case& c = all[size_t(rng()) % all.size()];
    const size_t sizes[] = {1, 31, 32, 33, 64, 95, 128, 161};
    const size_t n = sizes[rng() % 8];
    // Input records: 16 register slots in a random order, at a random stride >= 256.
    std::array<unsigned, 16> in_slot{}, out_slot{};
    for (unsigned r = 0; r < 16; ++r) in_slot[r] = out_slot[r] = r;
    std::shuffle(in_slot.begin(), in_slot.end(), rng);
    std::shuffle(out_slot.begin(), out_slot.end(), rng);
    const size_t in_stride = 256 + 4 * (rng() % 9), out_stride = 256 + 4 * (rng() % 9);
    const uint16_t in_mask = uint16_t(rng() | 1), out_mask = uint16_t(rng() | 1);
    const bool in_place = rng() % 3 == 0;
    const std::vector<p::InputVertex> in = random_inputs(n, uint32_t(round));
    std::vector<p::InputVertex> masked = in;  // unsupplied inputs read as zero
    for (auto& v : masked)
      for (unsigned r = 0; r < 16; ++r)
        if (!(in_mask >> r & 1)) v.v[r] = {0, 0, 0, 0};
    std::vector<p::OutputVertex> ref(n);
    REQUIRE(compile_on(c.setup, "interp")->run(c.uniforms, masked, ref, p::RunOptions{1}).ok);
    for (const std::string& e : p::engines()) {
      CAPTURE(c.name);
      CAPTURE(e);
      CAPTURE(n);
      CAPTURE(in_stride);
      CAPTURE(out_stride);
      CAPTURE(in_mask);
      CAPTURE(out_mask);
      CAPTURE(in_place);
      auto shader = compile_on(c.setup, e);
      p::DrawState draw(*shader);
      draw.set_uniforms(c.uniforms);
      const size_t stride = in_place ? in_stride : out_stride;
      const std::array<unsigned, 16>& oslot = in_place ? in_slot : out_slot;
      std::vector<uint8_t> in_buf(n * in_stride + 64, 0xAB), out_buf(n * stride + 64, 0xCD);
      for (size_t k = 0; k < n; ++k)
        for (unsigned r = 0; r < 16; ++r) std::memcpy(&in_buf[k * in_stride + 16 * in_slot[r]], in[k].v[r].data(), 16);
      const std::vector<uint8_t> in_copy = in_buf;
      std::vector<uint8_t>& dst = in_place ? in_buf : out_buf;
      const std::vector<uint8_t> dst_before = dst;
      p::VertexInputs vi;
      p::VertexOutputs vo;
      vi.mask = in_mask;
      vo.mask = out_mask;
      for (unsigned r = 0; r < 16; ++r) {
        vi.reg[r] = &in_buf[16 * in_slot[r]];
        vo.reg[r] = &dst[16 * oslot[r]];
        vi.stride[r] = in_stride;
        vo.stride[r] = stride;
      }
      const p::RunResult r = draw.run(vi, vo, n);
      REQUIRE_MESSAGE(r.ok, r.error);
      bool bad = false;
      for (size_t k = 0; k < n && !bad; ++k)
        for (unsigned reg = 0; reg < 16 && !bad; ++reg) {
          const uint8_t* got = &dst[k * stride + 16 * oslot[reg]];
          for (unsigned comp = 0; comp < 4 && !bad; ++comp) {
            float f, want;
            std::memcpy(&f, got + 4 * comp, 4);
            if (out_mask >> reg & 1) want = ref[k].o[reg][comp];
            else std::memcpy(&want, (in_place ? &in_copy[0] : &dst_before[0]) + k * stride + 16 * oslot[reg] + 4 * comp, 4);
            if (!same(f, want)) {
              FAIL_CHECK("vertex " << k << " o" << reg << "." << "xyzw"[comp] << " = " << f << ", expected " << want);
              bad = true;
            }
          }
        }
      for (size_t b = n * stride; b < dst.size(); ++b) REQUIRE(dst[b] == dst_before[b]);  // nothing past the draw
    }
  }
}

// The draw loop may run the warps of a draw in any order (the JIT's runs
// them from the last one down); a fault still names a vertex of the lowest
// faulting warp, and a draw after a fault runs normally.
TEST_CASE("pica200 draw: a fault in every warp names the first warp") {
  const std::vector<p::InputVertex> in = random_inputs(100, 2);
  std::vector<p::OutputVertex> out(100);
  p::ShaderSetup no_end;  // runs past the end of program memory
  no_end.code = {0x4C201004};  // mov o1, v1
  no_end.descriptors = {0, 0, 0, 0, 0x0D86C36F};
  const Case simple = cases()[0];
  for (const std::string& e : p::engines()) {
    CAPTURE(e);
    auto shader = compile_on(no_end, e);
    p::DrawState draw(*shader);
    for (size_t n : {size_t(100), size_t(64), size_t(40), size_t(31), size_t(5), size_t(1)}) {
      const p::RunResult r = draw.run(p::VertexInputs::records(in.data(), sizeof(p::InputVertex), 0x0003),
                                      p::VertexOutputs::records(out.data(), sizeof(p::OutputVertex), 0x0003), n);
      CHECK_FALSE(r.ok);
      CHECK_MESSAGE(r.failed_vertex < 32, r.failed_vertex << ": " << r.error);
    }
    auto good = compile_on(simple.setup, e);
    p::DrawState ok_draw(*good);
    ok_draw.set_uniforms(simple.uniforms);
    std::vector<p::OutputVertex> ref(100), got(100);
    REQUIRE(compile_on(simple.setup, "interp")->run(simple.uniforms, in, ref, p::RunOptions{1}).ok);
    REQUIRE(ok_draw.run(p::VertexInputs::records(in.data(), sizeof(p::InputVertex), 0xFFFF),
                        p::VertexOutputs::records(got.data(), sizeof(p::OutputVertex), 0xFFFF), 100)
                .ok);
    check_same(got, ref, 0xFFFF, "ref_simple after faults on " + e);
  }
}

// The draw loop is one stub per tier and MXCSR mode, shared by every vertex
// shader (eighth session): each call enters the stub with the shader's own
// per-warp entry, and the shader's epilogue jumps back to the stub's address
// in the call's descriptor. Draws of different shaders, interleaved on one
// thread and with the states kept alive side by side, must each run their
// own code and agree with the interpreter bit for bit.
TEST_CASE("pica200 draw: interleaved draws of different shaders share the draw loop") {
  const std::vector<Case> all = cases();
  const size_t n = 96;  // three full warps: all through the draw loop where the engine has one
  const std::vector<p::InputVertex> in = random_inputs(n, 5);
  std::vector<std::vector<p::OutputVertex>> ref(all.size(), std::vector<p::OutputVertex>(n));
  for (size_t i = 0; i < all.size(); ++i)
    REQUIRE(compile_on(all[i].setup, "interp")->run(all[i].uniforms, in, ref[i], p::RunOptions{1}).ok);
  for (const std::string& e : p::engines()) {
    CAPTURE(e);
    std::vector<std::shared_ptr<const p::Shader>> shaders;
    std::vector<p::DrawState> states;
    for (const Case& c : all) {
      shaders.push_back(compile_on(c.setup, e));
      states.emplace_back(*shaders.back());
      states.back().set_uniforms(c.uniforms);
    }
    for (int pass = 0; pass < 2; ++pass)
      for (size_t i = 0; i < all.size(); ++i) {
        std::vector<p::OutputVertex> got(n, garbage_vertex());
        const p::RunResult r = states[i].run(p::VertexInputs::records(in.data(), sizeof(p::InputVertex), 0xFFFF),
                                             p::VertexOutputs::records(got.data(), sizeof(p::OutputVertex), 0xFFFF), n);
        REQUIRE_MESSAGE(r.ok, r.error);
        check_same(got, ref[i], 0xFFFF, all[i].name + " on " + e);
      }
  }
}

// A draw's last partial warp runs inside the engine's draw loop (eighth
// session; before, it went through the C++ runner): every size from 1 to
// 100 vertices, random input and output masks, strides and register
// placements, in place in a third of the sizes; outputs bit for bit as the
// interpreter's, registers outside the output mask and every byte past the
// draw untouched.
TEST_CASE("pica200 draw: every draw size 1..100 with random layouts agrees with the interpreter") {
  std::mt19937 rng(1234);
  const std::vector<Case> all = cases();
  const bool light = std::getenv("GPURC_TEST_LIGHT") != nullptr;
  for (size_t ci = 0; ci < 3; ++ci) {  // the reference shaders
    const Case& c = all[ci];
    std::vector<std::shared_ptr<const p::Shader>> shaders;
    std::vector<p::DrawState> states;
    const std::vector<std::string> engines = p::engines();
    for (const std::string& e : engines) {
      shaders.push_back(compile_on(c.setup, e));
      states.emplace_back(*shaders.back());
      states.back().set_uniforms(c.uniforms);
    }
    auto interp = compile_on(c.setup, "interp");
    for (size_t n = 1; n <= 100; n += light ? 3 : 1) {
      std::array<unsigned, 16> in_slot{}, out_slot{};
      for (unsigned r = 0; r < 16; ++r) in_slot[r] = out_slot[r] = r;
      std::shuffle(in_slot.begin(), in_slot.end(), rng);
      std::shuffle(out_slot.begin(), out_slot.end(), rng);
      const size_t in_stride = 256 + 4 * (rng() % 9), out_stride = 256 + 4 * (rng() % 9);
      const uint16_t in_mask = uint16_t(rng() | 1), out_mask = uint16_t(rng() | 1);
      const bool in_place = n % 3 == 0;
      const std::vector<p::InputVertex> in = random_inputs(n, uint32_t(n));
      std::vector<p::InputVertex> masked = in;
      for (auto& v : masked)
        for (unsigned r = 0; r < 16; ++r)
          if (!(in_mask >> r & 1)) v.v[r] = {0, 0, 0, 0};
      std::vector<p::OutputVertex> ref(n);
      REQUIRE(interp->run(c.uniforms, masked, ref, p::RunOptions{1}).ok);
      for (size_t ei = 0; ei < engines.size(); ++ei) {
        CAPTURE(c.name);
        CAPTURE(engines[ei]);
        CAPTURE(n);
        CAPTURE(in_mask);
        CAPTURE(out_mask);
        CAPTURE(in_place);
        const size_t stride = in_place ? in_stride : out_stride;
        const std::array<unsigned, 16>& oslot = in_place ? in_slot : out_slot;
        std::vector<uint8_t> in_buf(n * in_stride + 64, 0xAB), out_buf(n * stride + 64, 0xCD);
        for (size_t k = 0; k < n; ++k)
          for (unsigned r = 0; r < 16; ++r) std::memcpy(&in_buf[k * in_stride + 16 * in_slot[r]], in[k].v[r].data(), 16);
        const std::vector<uint8_t> in_copy = in_buf;
        std::vector<uint8_t>& dst = in_place ? in_buf : out_buf;
        const std::vector<uint8_t> dst_before = dst;
        p::VertexInputs vi;
        p::VertexOutputs vo;
        vi.mask = in_mask;
        vo.mask = out_mask;
        for (unsigned r = 0; r < 16; ++r) {
          vi.reg[r] = &in_buf[16 * in_slot[r]];
          vo.reg[r] = &dst[16 * oslot[r]];
          vi.stride[r] = in_stride;
          vo.stride[r] = stride;
        }
        const p::RunResult r = states[ei].run(vi, vo, n);
        REQUIRE_MESSAGE(r.ok, r.error);
        bool bad = false;
        for (size_t k = 0; k < n && !bad; ++k)
          for (unsigned reg = 0; reg < 16 && !bad; ++reg) {
            const uint8_t* got = &dst[k * stride + 16 * oslot[reg]];
            for (unsigned comp = 0; comp < 4 && !bad; ++comp) {
              float f, want;
              std::memcpy(&f, got + 4 * comp, 4);
              if (out_mask >> reg & 1) want = ref[k].o[reg][comp];
              else std::memcpy(&want, (in_place ? &in_copy[0] : &dst_before[0]) + k * stride + 16 * oslot[reg] + 4 * comp, 4);
              if (!same(f, want)) {
                FAIL_CHECK("vertex " << k << " o" << reg << "." << "xyzw"[comp] << " = " << f << ", expected " << want);
                bad = true;
              }
            }
          }
        for (size_t b = n * stride; b < dst.size(); ++b) REQUIRE(dst[b] == dst_before[b]);  // nothing past the draw
      }
    }
  }
}

// The draw keeps the watchdog units of its last budget (tenth session: no
// conversion per call); a changed RunOptions::budget must still take effect
// on the next draw, in both directions. A 256-iteration loop per vertex
// runs to its end under the default budget and stops under a budget of one
// instruction per vertex (the JIT allows a warp a multiple of the budget,
// jit_watchdog_units in frontend/pica200/module/launch.cpp: far fewer than
// 256 iterations of this loop).
TEST_CASE("pica200 draw: a changed budget takes effect on the next draw") {
  const char* src = R"(
.consti n(255, 0, 1, 0)
.constf one(1.0, 0.5, 0.25, 0.0)
.out outPos position
.proc main
    mov r0, one.wwww
    for n
        add r0, one, r0
    .end
    mov outPos, r0
    end
.end
)";
  p::Uniforms u;
  const p::ShaderSetup base = p::load_shbin(p::assemble(src), 0, &u);
  const std::vector<p::InputVertex> in = random_inputs(40, 3);
  std::vector<p::OutputVertex> out(40);
  for (const std::string& e : p::engines()) {
    CAPTURE(e);
    auto shader = compile_on(base, e);
    p::DrawState draw(*shader);
    draw.set_uniforms(u);
    const auto vi = p::VertexInputs::records(in.data(), sizeof(p::InputVertex), 0x0001);
    const auto vo = p::VertexOutputs::records(out.data(), sizeof(p::OutputVertex), 0x0001);
    p::RunOptions big, small;
    big.threads = small.threads = 1;
    small.budget = 1;
    for (int round = 0; round < 2; ++round) {
      CAPTURE(round);
      for (size_t n : {size_t(40), size_t(1)}) {
        CAPTURE(n);
        const p::RunResult a = draw.run(vi, vo, n, big);
        CHECK_MESSAGE(a.ok, a.error);
        if (a.ok) CHECK(out[n - 1].o[0][0] == 256.0f);
        CHECK_FALSE(draw.run(vi, vo, n, small).ok);
      }
    }
  }
}

// run()'s stream compare (fourteenth session: whole four-register groups
// compared in ymm, an exact compare deciding when they differ) against a
// change of each field in each group a shader's masks reach: v0 / v5 / v13
// (input groups 0, 1 and 3), o0-o5 (output groups 0 and 1). Every draw
// runs twice (the second is the repeated draw's short form) and is
// checked against the interpreter; a change the compare missed would run
// the previous streams' set-up.
TEST_CASE("pica200 draw: run() follows a change of any one stream field in every register group") {
  const char* src = R"(
.out q0 position
.out q1 normalquat
.out q2 color
.out q3 texcoord0
.out q4 texcoord1
.out q5 texcoord2
.proc main
    mov r0, v5
    mov r1, v13
    add q0, v0, r0
    mov q1, v13
    add q2, r1, r0
    mov q3, v0
    mul q4, v0, r1
    dp4 q5, v5, r1
    end
.end
)";
  p::Uniforms u;
  const p::ShaderSetup base = p::load_shbin(p::assemble(src), 0, &u);
  constexpr size_t n = 40;
  constexpr uint16_t kIn = 0x2021, kOut = 0x003F;
  const std::vector<p::InputVertex> in = random_inputs(n, 17), in2 = random_inputs(n, 18);
  // The interpreter's outputs for inputs whose registers r come from `src[r]`.
  auto reference = [&](const std::array<const std::vector<p::InputVertex>*, 16>& from, uint16_t mask) {
    std::vector<p::InputVertex> v(n);
    for (size_t k = 0; k < n; ++k)
      for (unsigned r = 0; r < 16; ++r)
        if (mask >> r & 1) v[k].v[r] = (*from[r])[k].v[r];
    std::vector<p::OutputVertex> ref(n);
    REQUIRE(compile_on(base, "interp")->run(u, v, ref, p::RunOptions{1}).ok);
    return ref;
  };
  std::array<const std::vector<p::InputVertex>*, 16> plain;
  plain.fill(&in);
  const std::vector<p::OutputVertex> ref = reference(plain, kIn);
  for (const std::string& e : p::engines()) {
    CAPTURE(e);
    auto shader = compile_on(base, e);
    p::DrawState draw(*shader);
    std::vector<p::OutputVertex> a(n, garbage_vertex()), b(n, garbage_vertex());
    const p::VertexInputs vin = p::VertexInputs::records(in.data(), sizeof(p::InputVertex), kIn);
    const p::VertexOutputs vout = p::VertexOutputs::records(a.data(), sizeof(p::OutputVertex), kOut);
    // Runs twice and checks `got` against `want` (the registers of `mask`).
    auto twice = [&](const p::VertexInputs& i, const p::VertexOutputs& o, const std::vector<p::OutputVertex>& got,
                     const std::vector<p::OutputVertex>& want, uint16_t mask, const std::string& what) {
      for (int round = 0; round < 2; ++round) {
        const p::RunResult r = draw.run(i, o, n, p::RunOptions{1});
        REQUIRE_MESSAGE(r.ok, r.error);
        check_same(got, want, mask, e + " " + what + (round ? " (again)" : ""));
      }
    };
    twice(vin, vout, a, ref, kOut, "first streams");
    {
      // v13 from the other inputs (input group 3, its address).
      p::VertexInputs x = vin;
      x.reg[13] = reinterpret_cast<const uint8_t*>(in2.data()) + 16 * 13;
      std::array<const std::vector<p::InputVertex>*, 16> from = plain;
      from[13] = &in2;
      a.assign(n, garbage_vertex());
      twice(x, vout, a, reference(from, kIn), kOut, "v13 moved");
      twice(vin, vout, a, ref, kOut, "v13 back");
    }
    {
      // v5 from the other inputs (input group 1, its address).
      p::VertexInputs x = vin;
      x.reg[5] = reinterpret_cast<const uint8_t*>(in2.data()) + 16 * 5;
      std::array<const std::vector<p::InputVertex>*, 16> from = plain;
      from[5] = &in2;
      twice(x, vout, a, reference(from, kIn), kOut, "v5 moved");
      // The stride alone: v5 from every other record of `in` (n / 2 vertices).
      p::VertexInputs y = vin;
      y.stride[5] = 2 * sizeof(p::InputVertex);
      std::vector<p::InputVertex> every_other(n);
      for (size_t k = 0; 2 * k < n; ++k) every_other[k].v[5] = in[2 * k].v[5];
      std::array<const std::vector<p::InputVertex>*, 16> from2 = plain;
      from2[5] = &every_other;
      const std::vector<p::OutputVertex> ref2 = reference(from2, kIn);
      a.assign(n, garbage_vertex());
      for (int round = 0; round < 2; ++round) {
        const p::RunResult r = draw.run(y, vout, n / 2, p::RunOptions{1});
        REQUIRE_MESSAGE(r.ok, r.error);
        for (size_t k = 0; k < n / 2; ++k)
          for (unsigned o = 0; o < 6; ++o)
            for (unsigned c = 0; c < 4; ++c) CHECK(same(a[k].o[o][c], ref2[k].o[o][c]));
      }
      twice(vin, vout, a, ref, kOut, "v5 back");
    }
    {
      // o5 into other records (output group 1, its address): a keeps its o5.
      p::VertexOutputs x = vout;
      x.reg[5] = reinterpret_cast<uint8_t*>(b.data()) + 16 * 5;
      a.assign(n, garbage_vertex());
      for (int round = 0; round < 2; ++round) {
        REQUIRE(draw.run(vin, x, n, p::RunOptions{1}).ok);
        check_same(a, ref, 0x001F, e + " o5 moved: o0-o4");
        for (size_t k = 0; k < n; ++k) {
          for (unsigned c = 0; c < 4; ++c) CHECK(same(b[k].o[5][c], ref[k].o[5][c]));
          CHECK(a[k].o[5][0] == -7.5f);
        }
      }
      twice(vin, vout, a, ref, kOut, "o5 back");
    }
    {
      // Component offsets of o2 (output group 0, its second ymm) and o5
      // (group 1), then the stride of o1 (group 0).
      for (unsigned reg : {2u, 5u}) {
        p::VertexOutputs x = vout;
        x.component[reg] = {12, 8, 4, 0};
        a.assign(n, garbage_vertex());
        for (int round = 0; round < 2; ++round) {
          REQUIRE(draw.run(vin, x, n, p::RunOptions{1}).ok);
          for (size_t k = 0; k < n; ++k)
            for (unsigned c = 0; c < 4; ++c) CHECK(same(a[k].o[reg][3 - c], ref[k].o[reg][c]));
        }
        twice(vin, vout, a, ref, kOut, "components back");
      }
      // o1 of vertex k into record 2k (n / 2 vertices: the stride alone).
      p::VertexOutputs x = vout;
      x.stride[1] = 2 * sizeof(p::OutputVertex);
      a.assign(n, garbage_vertex());
      for (int round = 0; round < 2; ++round) {
        REQUIRE(draw.run(vin, x, n / 2, p::RunOptions{1}).ok);
        for (size_t k = 0; k < n / 2; ++k)
          for (unsigned c = 0; c < 4; ++c) {
            CHECK(same(a[2 * k].o[1][c], ref[k].o[1][c]));
            CHECK(a[2 * k + 1].o[1][c] == -7.5f);
            CHECK(same(a[k].o[2][c], ref[k].o[2][c]));
          }
      }
      twice(vin, vout, a, ref, kOut, "o1 back");
    }
    {
      // record_bytes alone: past the stride, the draw is refused; back, it runs.
      p::VertexInputs x = vin;
      x.record_bytes = sizeof(p::InputVertex) + 16;
      CHECK_FALSE(draw.run(x, vout, n, p::RunOptions{1}).ok);
      twice(vin, vout, a, ref, kOut, "record_bytes back");
      p::VertexOutputs y = vout;
      y.record_bytes = sizeof(p::OutputVertex) + 16;
      CHECK_FALSE(draw.run(vin, y, n, p::RunOptions{1}).ok);
      twice(vin, vout, a, ref, kOut, "output record_bytes back");
    }
    {
      // Unmasked entries changed (inside and outside the masks' groups):
      // the same streams.
      p::VertexInputs x = vin;
      x.reg[4] = x.reg[14] = in2.data();
      x.stride[15] = 3;
      p::VertexOutputs y = vout;
      y.reg[7] = b.data();
      y.component[6] = {-1, -1, -1, -1};
      a.assign(n, garbage_vertex());
      twice(x, y, a, ref, kOut, "unmasked entries changed");
      twice(vin, vout, a, ref, kOut, "unmasked entries back");
    }
    {
      // Masks: v13 dropped (reads zero), o5 dropped (not written).
      std::array<const std::vector<p::InputVertex>*, 16> from = plain;
      p::VertexInputs x = vin;
      x.mask = kIn & ~0x2000;
      a.assign(n, garbage_vertex());
      twice(x, vout, a, reference(from, x.mask), kOut, "v13 dropped");
      p::VertexOutputs y = vout;
      y.mask = kOut & ~0x0020;
      a.assign(n, garbage_vertex());
      twice(vin, y, a, ref, 0x001F, "o5 dropped");
      for (size_t k = 0; k < n; ++k) CHECK(a[k].o[5][0] == -7.5f);
      twice(vin, vout, a, ref, kOut, "masks back");
    }
  }
}

// The same for streams inside v0-v3 and o0-o3 (the compare's one-group
// form): each draw's expected bytes come from the descriptions themselves
// (inputs gathered by address and stride, outputs scattered by address,
// stride and component offsets into a copy of the arena).
TEST_CASE("pica200 draw: run() follows every change of streams within v0-v3 and o0-o3") {
  const char* src = R"(
.fvec k
.out q0 position
.out q1 normalquat
.out q2 color
.out q3 texcoord0
.proc main
    add q0, k, v0
    mov r0, v2
    mul q3, v0, r0
    end
.end
)";
  p::Uniforms u;
  const p::ShaderSetup base = p::load_shbin(p::assemble(src), 0, &u);
  u.f[0] = {0.5f, -2.0f, 3.0f, 0.25f};
  constexpr size_t n = 36;
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> d(-2.0f, 2.0f);
  std::vector<float> src_arena(4096);
  for (float& x : src_arena) x = d(rng);
  const uint8_t* sa = reinterpret_cast<const uint8_t*>(src_arena.data());
  const std::vector<uint8_t> blank(2 * n * 256, 0xEE);
  for (const std::string& e : p::engines()) {
    CAPTURE(e);
    auto shader = compile_on(base, e);
    p::DrawState draw(*shader);
    draw.set_uniforms(u);
    std::vector<uint8_t> arena = blank;
    // The interpreter's outputs for the inputs `vi` describes, stored as `vo` says.
    auto expected = [&](const p::VertexInputs& vi, const p::VertexOutputs& vo, size_t count) {
      std::vector<p::InputVertex> ins(count);
      for (size_t k = 0; k < count; ++k)
        for (unsigned r = 0; r < 16; ++r)
          if (vi.mask >> r & 1) std::memcpy(ins[k].v[r].data(), static_cast<const uint8_t*>(vi.reg[r]) + k * vi.stride[r], 16);
      std::vector<p::OutputVertex> outs(count);
      REQUIRE(compile_on(base, "interp")->run(u, ins, outs, p::RunOptions{1}).ok);
      std::vector<uint8_t> want = blank;
      for (size_t k = 0; k < count; ++k)
        for (unsigned r = 0; r < 16; ++r)
          if (vo.mask >> r & 1)
            for (unsigned c = 0; c < 4; ++c)
              if (vo.component[r][c] >= 0) {
                const size_t at = size_t(static_cast<uint8_t*>(vo.reg[r]) - arena.data()) + k * vo.stride[r] +
                                  size_t(vo.component[r][c]);
                std::memcpy(want.data() + at, &outs[k].o[r][c], 4);
              }
      return want;
    };
    const p::VertexInputs vin = p::VertexInputs::records(sa, 64, 0x0005);
    const p::VertexOutputs vout = p::VertexOutputs::records(arena.data(), 64, 0x0009);
    std::vector<std::pair<std::string, std::pair<p::VertexInputs, p::VertexOutputs>>> steps;
    auto add = [&](const std::string& what, const p::VertexInputs& i, const p::VertexOutputs& o) {
      steps.push_back({what, {i, o}});
      steps.push_back({what + ", back", {vin, vout}});
    };
    add("first", vin, vout);
    {
      p::VertexInputs i = vin;
      i.reg[0] = sa + 1024;
      add("v0 address", i, vout);
      i = vin;
      i.stride[2] = 80;
      add("v2 stride", i, vout);
      i = vin;
      i.record_bytes = 0;
      add("input record_bytes", i, vout);
      i = vin;
      i.reg[1] = sa;  // unmasked
      i.stride[3] = 7;
      add("unmasked inputs", i, vout);
    }
    {
      p::VertexOutputs o = vout;
      o.reg[3] = arena.data() + 32 * 64 + 16;
      add("o3 address", vin, o);
      o = vout;
      o.stride[0] = 128;
      add("o0 stride", vin, o);
      o = vout;
      o.component[0] = {4, 0, -1, 8};
      add("o0 components", vin, o);
      o = vout;
      o.component[3] = {12, 8, 4, 0};
      add("o3 components", vin, o);
      o = vout;
      o.record_bytes = 16;
      add("output record_bytes", vin, o);
      o = vout;
      o.reg[2] = arena.data();  // unmasked
      o.component[1] = {-1, -1, -1, -1};
      add("unmasked outputs", vin, o);
      o = vout;
      o.mask = 0x0001;
      add("o3 dropped", vin, o);
    }
    for (const auto& [what, st] : steps) {
      CAPTURE(what);
      // Vertices within the arena at the largest stride (128 bytes).
      const size_t count = what == "o0 stride" ? n / 2 : n;
      const std::vector<uint8_t> want = expected(st.first, st.second, count);
      for (int round = 0; round < 2; ++round) {
        arena = blank;
        const p::RunResult r = draw.run(st.first, st.second, count, p::RunOptions{1});
        REQUIRE_MESSAGE(r.ok, r.error);
        CHECK(arena == want);
      }
    }
  }
}

// run()'s repeated draw goes straight to the short form while one flag of
// the state says the kept set-up is its streams' (fifteenth session,
// DrawState::Impl::fast_draw). Every other path must work that flag out
// again: a bound draw in between makes the kept set-up the bound streams'
// (a stale flag would run those and leave run()'s outputs unwritten); a
// draw whose streams were checked for one vertex only serves one vertex
// (a stale count range would skip the stride check of a longer draw).
TEST_CASE("pica200 draw: run()'s repeated draw after bound draws and after one-vertex draws") {
  const Case simple = cases()[0];
  constexpr size_t n = 40;
  for (const std::string& e : p::engines()) {
    CAPTURE(e);
    auto shader = compile_on(simple.setup, e);
    auto interp = compile_on(simple.setup, "interp");
    p::DrawState draw(*shader);
    const p::OutputVertex garbage = garbage_vertex();
    draw.set_uniforms(simple.uniforms);
    std::vector<p::InputVertex> in_a = random_inputs(n, 11);
    const std::vector<p::InputVertex> in_b = random_inputs(n, 12);
    std::vector<p::OutputVertex> out_a(n, garbage), out_b(n, garbage), want(n);
    const auto va = p::VertexInputs::records(in_a.data(), sizeof(p::InputVertex), 0x0007);
    const auto oa = p::VertexOutputs::records(out_a.data(), sizeof(p::OutputVertex), 0x0007);
    REQUIRE(draw.bind(p::VertexInputs::records(in_b.data(), sizeof(p::InputVertex), 0x0007),
                      p::VertexOutputs::records(out_b.data(), sizeof(p::OutputVertex), 0x0007))
                .ok);
    // New values in the same records (the streams stay the same).
    auto refill = [&](uint32_t seed) {
      const std::vector<p::InputVertex> fresh = random_inputs(n, seed);
      std::copy(fresh.begin(), fresh.end(), in_a.begin());
    };
    for (int round = 0; round < 3; ++round) {
      CAPTURE(round);
      // New inputs each round: outputs left from an earlier draw do not pass.
      refill(20 + round);
      std::fill(out_a.begin(), out_a.end(), garbage);
      REQUIRE(interp->run(simple.uniforms, in_a, want, p::RunOptions{1}).ok);
      for (int k = 0; k < 3; ++k) {
        const p::RunResult r = draw.run(va, oa, n, p::RunOptions{1});
        REQUIRE_MESSAGE(r.ok, r.error);
      }
      check_same(out_a, want, 0x0007, "run() after " + std::to_string(round) + " bound rounds");
      // Bound draws: the kept set-up is the bound streams' after them.
      std::fill(out_b.begin(), out_b.end(), garbage);
      for (int k = 0; k < 2; ++k) REQUIRE(draw.run_bound(0, n, p::RunOptions{1}).ok);
      REQUIRE(interp->run(simple.uniforms, in_b, want, p::RunOptions{1}).ok);
      check_same(out_b, want, 0x0007, "run_bound()");
      // run()'s outputs go to run()'s streams, not the bound ones.
      refill(40 + round);
      std::fill(out_a.begin(), out_a.end(), garbage);
      std::fill(out_b.begin(), out_b.end(), garbage);
      REQUIRE(draw.run(va, oa, n, p::RunOptions{1}).ok);
      REQUIRE(interp->run(simple.uniforms, in_a, want, p::RunOptions{1}).ok);
      check_same(out_a, want, 0x0007, "run() right after run_bound()");
      CHECK(std::memcmp(&out_b[0], &garbage, sizeof(p::OutputVertex)) == 0);
    }
    // Streams with stride 0 are fine for one vertex, not for more.
    const auto v1 = p::VertexInputs::records(in_a.data(), 0, 0x0007);
    const auto o1 = p::VertexOutputs::records(out_a.data(), 0, 0x0007);
    for (int k = 0; k < 3; ++k) REQUIRE(draw.run(v1, o1, 1, p::RunOptions{1}).ok);
    for (size_t count : {size_t(2), size_t(5), size_t(32), size_t(2000)}) {
      CAPTURE(count);
      const p::RunResult r = draw.run(v1, o1, count, p::RunOptions{1});
      CHECK_FALSE(r.ok);
      CHECK_MESSAGE(r.error.find("stride 0 is smaller than a register") != std::string::npos, r.error);
    }
    REQUIRE(draw.run(v1, o1, 1, p::RunOptions{1}).ok);
    REQUIRE(interp->run(simple.uniforms, std::span(in_a).first(1), std::span(want).first(1), p::RunOptions{1}).ok);
    CHECK(std::memcmp(out_a[0].o[0].data(), want[0].o[0].data(), 16) == 0);
  }
}

}  // namespace gpurc_test_pica200_draw
