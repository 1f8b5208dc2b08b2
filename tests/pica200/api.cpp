// The public PICA200 API (include/gpurc/pica200.h) on every backend of the
// host: hand-worked results, cache, errors, faults, threads, geometry.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "gpurc/pica200.h"
#include "recompiler/engine.h"

namespace gpurc_test_pica200_api {  // one namespace per file: unity builds (CMakeLists.txt)

namespace p = gpurc::pica200;

namespace {

std::string read_text(const std::string& rel) {
  std::ifstream in(std::string(GPURC_TEST_DATA) + "/" + rel, std::ios::binary);
  REQUIRE_MESSAGE(in, "cannot open " << rel);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Interpreter plus every JIT tier this host runs.
std::vector<std::string> host_engines() {
  std::vector<std::string> out = p::engines();
  REQUIRE(!out.empty());
  CHECK(out.front() == "interp");
  return out;
}

bool light() { return std::getenv("GPURC_TEST_LIGHT") != nullptr; }

const char* kTransform = R"(
.fvec mvp[4] c0
.constf consts(1.0, 0.0, 0.0, 0.0)
.out outPos position
.out outColor color
.proc main
    mov r0.xyz, v0
    mov r0.w, consts.x
    dp4 outPos.x, mvp[0], r0
    dp4 outPos.y, mvp[1], r0
    dp4 outPos.z, mvp[2], r0
    dp4 outPos.w, mvp[3], r0
    mov outColor, v1
    end
.end
)";

uint32_t bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

}  // namespace

TEST_CASE("pica200 api: transform worked by hand on every backend") {
  p::Uniforms u;
  p::ShaderSetup setup = p::load_shbin(p::assemble(kTransform), 0, &u);
  CHECK(setup.type == p::ShaderType::Vertex);
  CHECK(u.f[95][0] == 1.0f);  // .constf lands at the top of the c file
  u.f[0] = {2, 0, 0, 1};      // x' = 2x + 1
  u.f[1] = {0, 3, 0, -1};     // y' = 3y - 1
  u.f[2] = {0, 0, -1, 0.5f};  // z' = 0.5 - z
  u.f[3] = {0, 0, 0, 1};
  // 37 vertices: one full warp plus a partial one.
  std::vector<p::InputVertex> in(37);
  for (size_t k = 0; k < in.size(); ++k) {
    float t = float(k) * 0.25f;
    in[k].v[0] = {t, -t, 2 * t, 99};
    in[k].v[1] = {float(k), 1, 2, 3};
  }
  for (const std::string& e : host_engines()) {
    setup.engine = e;
    auto shader = p::Shader::compile(setup);
    CAPTURE(shader->backend_name());
    std::vector<p::OutputVertex> out(in.size());
    p::RunResult r = shader->run(u, in, out);
    REQUIRE_MESSAGE(r.ok, r.error);
    for (size_t k = 0; k < in.size(); ++k) {
      float t = float(k) * 0.25f;
      CAPTURE(k);
      CHECK(out[k].o[0][0] == 2 * t + 1);
      CHECK(out[k].o[0][1] == -3 * t - 1);
      CHECK(out[k].o[0][2] == 0.5f - 2 * t);
      CHECK(out[k].o[0][3] == 1.0f);
      CHECK(out[k].o[1][0] == float(k));
      CHECK(out[k].o[1][3] == 3.0f);
      CHECK(out[k].o[2][0] == 0.0f);  // untouched outputs start at zero
    }
  }
}

TEST_CASE("pica200 api: engines by host-neutral backend or by registry name") {
  p::ShaderSetup setup = p::load_shbin(p::assemble(kTransform));
  std::vector<std::string> names = host_engines();
  setup.backend = p::Backend::Interpreter;
  CHECK(std::string(p::Shader::compile(setup)->backend_name()) == "interp");
  setup.backend = p::Backend::Auto;
  CHECK(std::string(p::Shader::compile(setup)->backend_name()) == (names.size() > 1 ? names[1] : "interp"));
  setup.backend = p::Backend::Jit;
  if (names.size() > 1) CHECK(std::string(p::Shader::compile(setup)->backend_name()) == names[1]);
  else CHECK_THROWS_AS(p::Shader::compile(setup), p::Error);
  for (const std::string& name : names) {
    setup.engine = name;  // overrides backend
    CHECK(p::Shader::compile(setup)->backend_name() == name);
  }
  setup.engine = "jit-nonexistent";
  CHECK_THROWS_AS(p::Shader::compile(setup), p::Error);
}

TEST_CASE("pica200 api: compile is cached by content") {
  p::clear_cache();
  p::ShaderSetup setup = p::load_shbin(p::assemble(kTransform));
  setup.backend = p::Backend::Interpreter;
  auto a = p::Shader::compile(setup);
  CHECK(p::cached_shaders() == 1);
  auto b = p::Shader::compile(setup);
  CHECK(p::cached_shaders() == 1);
  CHECK(b->compile_us() == 0);
  setup.entry = 1;  // a different entry is a different shader
  auto c = p::Shader::compile(setup);
  CHECK(p::cached_shaders() == 2);
  setup.entry = 0;
  setup.descriptors.push_back(0x12345);  // so are different descriptors
  p::Shader::compile(setup);
  CHECK(p::cached_shaders() == 3);
  p::clear_cache();
  CHECK(p::cached_shaders() == 0);
  // Shaders handed out stay usable after the cache is dropped.
  std::vector<p::InputVertex> in(1);
  std::vector<p::OutputVertex> out(1);
  CHECK(a->run(p::Uniforms{}, in, out).ok);
}

TEST_CASE("pica200 api: invalid programs throw, bad calls return errors") {
  p::ShaderSetup empty;
  CHECK_THROWS_AS(p::Shader::compile(empty), p::Error);
  p::ShaderSetup big;
  big.code.assign(4097, 0x88000000u);  // NOP words
  CHECK_THROWS_AS(p::Shader::compile(big), p::Error);
  p::ShaderSetup setup = p::load_shbin(p::assemble(kTransform));
  setup.entry = uint32_t(setup.code.size());
  try {
    p::Shader::compile(setup);
    FAIL("no error");
  } catch (const p::Error& e) {
    CHECK(std::string(e.what()).find("entry") != std::string::npos);
  }
  CHECK_THROWS_AS(p::assemble("mov r0, nowhere\n"), p::Error);
  std::vector<uint8_t> junk{1, 2, 3};
  CHECK_THROWS_AS(p::load_shbin(junk), p::Error);
  CHECK_THROWS_AS(p::load_shbin(p::assemble(kTransform), 5), p::Error);

  setup.entry = 0;
  setup.backend = p::Backend::Interpreter;
  auto shader = p::Shader::compile(setup);
  std::vector<p::InputVertex> in(3);
  std::vector<p::OutputVertex> out(2);
  p::RunResult r = shader->run(p::Uniforms{}, in, out);
  CHECK_FALSE(r.ok);
  CHECK(r.error.find("outputs") != std::string::npos);
  std::vector<p::EmittedPrimitive> prims;
  CHECK_FALSE(shader->run_geometry(p::Uniforms{}, in, prims).ok);
}

TEST_CASE("pica200 api: an endless loop is a reported fault on every backend") {
  // jmpu to itself on b0 = false (JMPU jumps when b == !(num & 1)): never ends.
  const char* text = R"(
.proc main
loop:
    mov o0, v0
    jmpu !b0, loop
    end
.end
)";
  p::ShaderSetup setup = p::load_shbin(p::assemble(text));
  std::vector<p::InputVertex> in(40);
  std::vector<p::OutputVertex> out(40);
  p::RunOptions opt;
  opt.budget = 1000;
  for (const std::string& e : host_engines()) {
    setup.engine = e;
    auto shader = p::Shader::compile(setup);
    CAPTURE(shader->backend_name());
    p::RunResult r = shader->run(p::Uniforms{}, in, out, opt);
    CHECK_FALSE(r.ok);
    CHECK_FALSE(r.error.empty());
    CHECK(r.failed_vertex < 32);  // found in the first warp
    // With b0 set the same shader ends.
    p::Uniforms u;
    u.b = 1;
    CHECK(shader->run(u, in, out, opt).ok);
  }
}

TEST_CASE("pica200 api: lighting shader agrees bit for bit with the interpreter, any thread count") {
  p::Uniforms u;
  p::ShaderSetup setup = p::load_shbin(p::assemble(read_text("examples/pica200/lighting.pica")), 0, &u);
  // Light-ish matrices and lights; inputs cover both sides of every light.
  for (int r = 0; r < 8; ++r) u.f[size_t(r)] = {r % 4 == 0 ? 1.5f : 0.25f, r % 4 == 1 ? 1.f : 0.f, r % 4 == 2 ? 1.f : 0.f, r % 4 == 3 ? 1.f : -2.f};
  u.f[8] = {0.6f, 0.0f, 0.8f, 0};
  u.f[9] = {0.3f, 0.1f, 0.9f, 0};
  u.f[10] = {1, 0.75f, 0.5f, 1};
  u.f[11] = {0, 1, 0, 0};
  u.f[12] = {0.2f, 0.3f, 0.4f, 0};
  u.f[13] = {0.1f, 0.1f, 0.1f, 0};
  u.f[14] = {12, 1, 0.125f, 0};
  u.b = 1;
  const size_t n = light() ? 300 : 5000;
  std::vector<p::InputVertex> in(n);
  uint64_t seed = 12345;
  auto rnd = [&] {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return float(int32_t(seed >> 33) % 2000) / 1000.0f;  // [-2, 2)
  };
  for (auto& v : in)
    for (int r = 0; r < 3; ++r) v.v[size_t(r)] = {rnd(), rnd(), rnd(), rnd()};
  setup.backend = p::Backend::Interpreter;
  std::vector<p::OutputVertex> want(n);
  REQUIRE(p::Shader::compile(setup)->run(u, in, want).ok);
  for (const std::string& e : host_engines()) {
    setup.engine = e;
    auto shader = p::Shader::compile(setup);
    for (unsigned threads : {1u, 0u}) {
      CAPTURE(shader->backend_name());
      CAPTURE(threads);
      std::vector<p::OutputVertex> got(n);
      p::RunOptions opt;
      opt.threads = threads;
      p::RunResult r = shader->run(u, in, got, opt);
      REQUIRE_MESSAGE(r.ok, r.error);
      size_t differ = 0, first = n;
      for (size_t k = 0; k < n; ++k)
        for (int o = 0; o < 3; ++o)
          for (int c = 0; c < 4; ++c)
            if (bits(got[k].o[size_t(o)][size_t(c)]) != bits(want[k].o[size_t(o)][size_t(c)])) {
              ++differ;
              first = std::min(first, k);
            }
      CAPTURE(first);
      CHECK(differ == 0);
    }
  }
}

TEST_CASE("pica200 api: geometry shader emits the hand-worked quad") {
  p::Uniforms u;
  p::ShaderSetup setup = p::load_shbin(p::assemble(read_text("examples/pica200/geometry_quad.pica")), 0, &u);
  REQUIRE(setup.type == p::ShaderType::Geometry);
  u.f[0] = {1, 2, 0, 1};        // center
  u.f[1] = {0.5f, 0.25f, 0, 0};  // half size
  std::vector<p::InputVertex> in(3);
  for (const std::string& e : host_engines()) {
    setup.engine = e;
    auto shader = p::Shader::compile(setup);
    CAPTURE(shader->backend_name());
    std::vector<p::EmittedPrimitive> prims;
    p::RunResult r = shader->run_geometry(u, in, prims);
    REQUIRE_MESSAGE(r.ok, r.error);
    REQUIRE(prims.size() == 6);  // two triangles per invocation
    const p::Vec4 a{0.5f, 1.75f, 0, 1}, bb{1.5f, 1.75f, 0, 1}, c{0.5f, 2.25f, 0, 1}, d{1.5f, 2.25f, 0, 1};
    for (size_t k = 0; k < prims.size(); ++k) {
      CAPTURE(k);
      CHECK(prims[k].invocation == k / 2);
      CHECK(prims[k].winding == (k % 2 == 1));
      CHECK(prims[k].vertices[0].o[0] == (k % 2 ? d : a));
      CHECK(prims[k].vertices[1].o[0] == bb);
      CHECK(prims[k].vertices[2].o[0] == c);
      for (const auto& v : prims[k].vertices) CHECK(v.o[1] == p::Vec4{1, 2, 0, 1});
    }
  }
}

TEST_CASE("pica200 api: run_geometry sets b15 after the first invocation (RunOptions::set_b15)") {
  const char* text =
      ".gsh point c0\n.proc main\n  ifu b15\n    mov o0, c1\n  .else\n    mov o0, c2\n  .end\n"
      "  setemit 0, prim\n  emit\n  end\n.end\n";
  p::Uniforms u;
  p::ShaderSetup setup = p::load_shbin(p::assemble(text), 0, &u);
  REQUIRE(setup.type == p::ShaderType::Geometry);
  u.f[1] = {5, 5, 5, 5};  // b15 set
  u.f[2] = {7, 7, 7, 7};  // b15 clear
  std::vector<p::InputVertex> in(40);
  for (const std::string& e : host_engines()) {
    setup.engine = e;
    auto shader = p::Shader::compile(setup);
    CAPTURE(shader->backend_name());
    for (bool set : {true, false}) {
      p::RunOptions opt;
      opt.set_b15 = set;
      std::vector<p::EmittedPrimitive> prims;
      p::RunResult r = shader->run_geometry(u, in, prims, opt);
      REQUIRE_MESSAGE(r.ok, r.error);
      REQUIRE(prims.size() == in.size());
      for (size_t k = 0; k < prims.size(); ++k) {
        CAPTURE(k);
        CHECK(prims[k].vertices[0].o[0][0] == (set && k > 0 ? 5.0f : 7.0f));
      }
    }
  }
}

TEST_CASE("pica200 api: a guest fault names the instruction address on every backend") {
  // EMIT in a vertex shader is a fault at word 1 (the interpreter's rule; the JIT traps with the same message).
  const char* text = ".proc main\n    mov o0, v0\n    emit\n    end\n.end\n";
  p::ShaderSetup setup = p::load_shbin(p::assemble(text));
  std::vector<p::InputVertex> in(5);
  std::vector<p::OutputVertex> out(5);
  for (const std::string& e : host_engines()) {
    setup.engine = e;
    auto shader = p::Shader::compile(setup);
    CAPTURE(shader->backend_name());
    p::RunResult r = shader->run(p::Uniforms{}, in, out);
    CHECK_FALSE(r.ok);
    CHECK(r.error.find("0x001") != std::string::npos);
    CHECK(r.failed_vertex == 0);
  }
}

TEST_CASE("pica200 api: run() follows every change of the uniforms and times the run") {
  // run() rewrites its uniform block only when the uniforms differ from the
  // last call's (seventeenth session): alternate sets that differ in one
  // float component, in the sign of a zero, in the loop count and in a bool,
  // each against the interpreter.
  // loop_sum with its loop count as a uniform (.ivec) instead of a constant,
  // and a bool that chooses the colour.
  std::string text = read_text("examples/pica200/loop_sum.pica");
  const std::string consti = ".consti loopParams(7, 0, 1, 0)";
  REQUIRE(text.find(consti) != std::string::npos);
  text.replace(text.find(consti), consti.size(), ".ivec loopParams\n.bool pick");
  const std::string tail = "    mov outColor, r3\n";
  REQUIRE(text.find(tail) != std::string::npos);
  text.replace(text.find(tail), tail.size(), "    mov outColor, r3\n    ifu pick\n        mov outColor, r0\n    .end\n");
  p::Uniforms base;
  const p::ShaderSetup setup = p::load_shbin(p::assemble(text), 0, &base);
  base.i[0] = {7, 0, 1, 0};
  base.b = 1;  // b0 (pick): the sum as the colour
  for (unsigned n = 0; n < 96; ++n)
    for (unsigned c = 0; c < 4; ++c) base.f[n][c] = float(int((n * 7 + c * 3) % 11) - 5) * 0.25f;
  std::vector<p::Uniforms> sets(5, base);
  sets[1].f[3][2] += 1.0f;           // one component of one array element
  sets[2].i[0][0] = 2;               // three iterations instead of eight
  REQUIRE(base.f[1][3] == 0.0f);
  sets[3].f[1][3] = -0.0f;           // a sign bit only
  sets[3].f[2][1] = std::nanf("");     // a NaN in the sum
  sets[4].b = 0;                     // the colour from values[a0.x + 1]
  const size_t order[] = {0, 0, 1, 0, 2, 2, 0, 4, 0, 3, 4, 3, 1};  // each change alone from set 0
  std::vector<p::InputVertex> in(40);
  for (size_t k = 0; k < in.size(); ++k) {
    in[k].v[0] = {float(k % 9) - 4.0f, float(k % 5), 1, 1};
    in[k].v[1] = {float(k % 6), 0, 0, 0};
  }
  auto interp = [&] {
    p::ShaderSetup s = setup;
    s.engine = "interp";
    return p::Shader::compile(s);
  }();
  // The interpreter's outputs first: run() keeps the state of the last
  // shader its thread ran, so the JIT's calls below follow each other.
  std::vector<std::vector<p::OutputVertex>> wants;
  for (const p::Uniforms& u : sets) {
    wants.emplace_back(in.size());
    REQUIRE(interp->run(u, in, wants.back(), p::RunOptions{1}).ok);
  }
  // The changes show in the outputs.
  auto outputs_differ = [&](size_t a, size_t b) {
    for (size_t k = 0; k < in.size(); ++k)
      if (std::memcmp(&wants[a][k].o[1], &wants[b][k].o[1], 16) != 0) return true;
    return false;
  };
  CHECK(outputs_differ(1, 0));
  CHECK(outputs_differ(2, 0));
  CHECK(outputs_differ(3, 0));
  CHECK(outputs_differ(4, 0));
  for (const std::string& e : host_engines()) {
    if (e == "interp") continue;
    CAPTURE(e);
    p::ShaderSetup s = setup;
    s.engine = e;
    auto shader = p::Shader::compile(s);
    for (size_t step = 0; step < std::size(order); ++step) {
      CAPTURE(step);
      const p::Uniforms& u = sets[order[step]];
      const std::vector<p::OutputVertex>& want = wants[order[step]];
      std::vector<p::OutputVertex> got(in.size());
      REQUIRE(shader->run(u, in, got, p::RunOptions{1}).ok);
      for (size_t k = 0; k < in.size(); ++k)
        for (unsigned r : {0u, 1u})
          for (unsigned c = 0; c < 4; ++c)
            if (bits(got[k].o[r][c]) != bits(want[k].o[r][c]) &&
                !(std::isnan(got[k].o[r][c]) && std::isnan(want[k].o[r][c]))) {
              FAIL_CHECK("vertex " << k << " o" << r << "." << "xyzw"[c] << " = " << got[k].o[r][c] << ", expected "
                                   << want[k].o[r][c]);
              k = in.size();
              break;
            }
    }
    // run_us: the run's wall time, within the caller's own reading of the
    // call (also once the time-stamp counter has been calibrated, 2 ms on).
    const auto start = std::chrono::steady_clock::now();
    bool calibrated_seen = false;
    for (int i = 0; i < 100000 && !calibrated_seen; ++i) {
      std::vector<p::OutputVertex> got(in.size());
      const auto t0 = std::chrono::steady_clock::now();
      const p::RunResult r = shader->run(base, in, got, p::RunOptions{1});
      const double outer = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
      REQUIRE(r.ok);
      CHECK(r.run_us > 0);
      CHECK(r.run_us <= outer * 1.01 + 0.5);
      calibrated_seen = std::chrono::steady_clock::now() - start > std::chrono::milliseconds(5) && i > 10;
    }
  }
}

}  // namespace gpurc_test_pica200_api
