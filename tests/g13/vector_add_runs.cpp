// examples/g13/vector_add.s (c[i] = a[i] + b[i], i = thread_position_in_grid.x)
// through the grid loop, where the warp loop writes sr80 as base + lane and
// the accesses test only lane 0's index (backend_x64/memory_fast.cpp,
// plan_lane_run_flags), against the interpreter: buffers that hold the whole
// launch, a c that ends inside the last threadgroup (only its range leaves
// the window: the same fault threadgroup, SIMD-group, lane and address),
// misaligned uniform bases, buffers across 2^32, threadgroups with a partial
// last SIMD-group and two-dimensional threadgroups of 16-thread rows (the
// per-SIMD-group path: the flag stays 0).
#include <doctest/doctest.h>

#include <cstring>
#include <string>

#include "frontend/g13/g13.h"
#include "tests/g13/example_text.h"
#include "frontend/g13/module/launch.h"
#include "recompiler/isa_engine.h"

namespace gpurc_test_g13_vector_add_runs {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;

namespace {

struct Setup {
  rt::Dim3 grid, block;
  uint64_t base;            // a's address; b and c follow at `stride` bytes
  uint64_t stride;
  uint32_t bytes[3];        // buffer sizes
  uint32_t misalign = 0;    // added to every uniform base (the code masks it off)
};

G13Result run(const Setup& s, Engine e, std::vector<uint8_t>& out) {
  G13Launch L;
  std::string err;
  REQUIRE_MESSAGE(g13::assemble(gpurc::test::g13_example_text("vector_add.s"), L.code, err), err);
  L.grid = s.grid;
  L.block = s.block;
  L.warp_loop = true;
  L.grid_loop = true;
  rt::Memory mem;
  for (unsigned a = 0; a < 3; ++a) {
    const uint64_t addr = s.base + a * s.stride, u = addr + s.misalign;
    for (unsigned h = 0; h < 4; ++h) L.uniforms[4 * a + h] = uint16_t(u >> (16 * h));
    REQUIRE(mem.add_buffer("b" + std::to_string(a), ir::Space::Global, addr, s.bytes[a], err));
    if (a < 2) {
      uint8_t* p = mem.find("b" + std::to_string(a))->data();
      for (uint32_t i = 0; i < s.bytes[a]; i += 4) {
        const float f = float(int(i % 997) - 400) * (a ? 0.25f : 1.5f);
        std::memcpy(p + i, &f, 4);
      }
    }
  }
  G13Result r = run_g13(L, EngineAsHandle(e), mem, 1);
  out.assign(mem.find("b2")->data(), mem.find("b2")->data() + s.bytes[2]);
  return r;
}

}  // namespace

TEST_CASE("g13 vector_add through the grid loop: results and faults as the interpreter's") {
  const uint32_t whole = 16 * 256 * 4;
  const Setup cases[] = {
      {{16, 1, 1}, {256, 1, 1}, 0x100000, 0x10000, {whole, whole, whole}},
      // c ends 37 elements into the last threadgroup's fifth SIMD-group
      {{16, 1, 1}, {256, 1, 1}, 0x100000, 0x10000, {whole, whole, (15 * 256 + 4 * 32 + 37) * 4}},
      // a ends inside the last threadgroup
      {{16, 1, 1}, {256, 1, 1}, 0x100000, 0x10000, {(15 * 256 + 200) * 4, whole, whole}},
      {{16, 1, 1}, {256, 1, 1}, 0x100000, 0x10000, {whole, whole, whole}, 3},
      // buffers across 2^32 (a) and just above it (b, c)
      {{16, 1, 1}, {256, 1, 1}, 0x100000000ull - 0x2000, 0x10000, {whole, whole, whole}, 1},
      // a partial last SIMD-group per threadgroup (the per-warp path runs it)
      {{20, 1, 1}, {48, 1, 1}, 0x100000, 0x10000, {20 * 48 * 4, 20 * 48 * 4, 20 * 48 * 4}},
      // two-dimensional threadgroups of 16-thread rows: no warp loop (sr80 is not base + lane)
      {{8, 1, 1}, {16, 4, 1}, 0x100000, 0x10000, {8 * 16 * 4, 8 * 16 * 4, 8 * 16 * 4}},
  };
  int k = 0;
  for (const Setup& s : cases) {
    CAPTURE(k++);
    std::vector<uint8_t> ref, out;
    const G13Result r0 = run(s, Engine::Interp, ref);
    REQUIRE(r0.error.empty());
    for (Engine e : host_engines()) {
      CAPTURE(engine_name(e));
      const G13Result r = run(s, e, out);
      REQUIRE_MESSAGE(r.error.empty(), r.error);
      REQUIRE(bool(r.fault) == bool(r0.fault));
      if (r0.fault) {
        CHECK(r.fault->kind == r0.fault->kind);
        CHECK(r.fault->block.x == r0.fault->block.x);
        CHECK(r.fault->warp == r0.fault->warp);
        CHECK(r.fault->lane == r0.fault->lane);
        CHECK(r.fault->addr == r0.fault->addr);
      }
      if (!r0.fault) CHECK(out == ref);  // (after a fault the engines may have run other threadgroups)
    }
  }
}

}  // namespace gpurc_test_g13_vector_add_runs
