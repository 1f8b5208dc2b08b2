// The warp loop (docs/runtime.md, "Warp loop"): G13 launches whose full
// SIMD-groups run in one call of the generated code write what the
// per-warp path (G13Launch::warp_loop off) and the interpreter write, with
// every special register the loop computes, for threadgroup shapes the loop
// takes and ones it leaves to the per-warp path; a fault in the loop is
// reported as on the per-warp path.
#include <doctest/doctest.h>

#include <cstring>

#include "frontend/g13/g13.h"
#include "frontend/g13/module/launch.h"
#include "recompiler/isa_engine.h"

namespace gpurc_test_g13_warp_loop {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;

namespace {

// Thread i = thread_index_in_threadgroup + 512 * threadgroup_position.x
// writes, each to its own array at index i: the grid position (x, y), the
// SIMD-group index and the position in its threadgroup (x, y).
const char* kSpecials =
    "get_sr r1, sr51 (thread_index_in_threadgroup)\n"
    "get_sr r9, sr0 (threadgroup_position_in_grid.x)\n"
    "imadd r2, r9, u12, r1\n"
    "get_sr r3, sr80 (thread_position_in_grid.x)\n"
    "device_store 0, i32, x, r3, u0_u1, r2, unsigned, 0\n"
    "get_sr r4, sr81 (thread_position_in_grid.y)\n"
    "device_store 0, i32, x, r4, u2_u3, r2, unsigned, 0\n"
    "get_sr r5, sr53 (simdgroup_index_in_threadgroup)\n"
    "device_store 0, i32, x, r5, u4_u5, r2, unsigned, 0\n"
    "get_sr r6, sr48 (thread_position_in_threadgroup.x)\n"
    "device_store 0, i32, x, r6, u6_u7, r2, unsigned, 0\n"
    "get_sr r7, sr49 (thread_position_in_threadgroup.y)\n"
    "device_store 0, i32, x, r7, u8_u9, r2, unsigned, 0\n"
    "stop";

constexpr uint64_t kBase = 0x100000, kArray = 0x10000;

// mode 0: the grid loop (many threadgroups per call); 1: the warp loop, one
// call per threadgroup; 2: every SIMD-group on its own.
G13Result run(rt::Dim3 grid, rt::Dim3 block, uint32_t array_bytes, Engine e, int mode, std::vector<uint8_t>& out,
              uint16_t stride = 512) {
  G13Launch L;
  std::string err;
  REQUIRE_MESSAGE(g13::assemble(kSpecials, L.code, err), err);
  L.grid = grid;
  L.block = block;
  L.warp_loop = mode < 2;
  L.grid_loop = mode == 0;
  for (unsigned a = 0; a < 5; ++a) {
    const uint64_t addr = kBase + a * kArray;
    L.uniforms[4 * a] = uint16_t(addr);
    L.uniforms[4 * a + 1] = uint16_t(addr >> 16);
  }
  L.uniforms[24] = stride;  // u12: array elements per threadgroup
  rt::Memory mem;
  for (unsigned a = 0; a < 5; ++a)
    REQUIRE(mem.add_buffer("a" + std::to_string(a), ir::Space::Global, kBase + a * kArray, array_bytes, err));
  G13Result r = run_g13(L, EngineAsHandle(e), mem, 1);
  out.clear();
  for (unsigned a = 0; a < 5; ++a) {
    const uint8_t* p = mem.find("a" + std::to_string(a))->data();
    out.insert(out.end(), p, p + array_bytes);
  }
  return r;
}

}  // namespace

TEST_CASE("g13 warp loop: special registers and memory as on the per-warp path and the interpreter") {
  const rt::Dim3 shapes[] = {{256, 1, 1}, {64, 2, 1}, {40, 1, 1}, {16, 4, 1}, {32, 3, 1}};
  for (const rt::Dim3& b : shapes) {
    CAPTURE(b.x);
    CAPTURE(b.y);
    std::vector<uint8_t> ref, out;
    G13Result r0 = run({3, 1, 1}, b, 3 * 512 * 4, Engine::Interp, 0, ref);
    REQUIRE_MESSAGE(r0.ok(), r0.error << r0.fault_message);
    for (Engine e : host_engines()) {
      CAPTURE(engine_name(e));
      for (int mode : {0, 1, 2}) {
        CAPTURE(mode);
        G13Result r = run({3, 1, 1}, b, 3 * 512 * 4, e, mode, out);
        REQUIRE_MESSAGE(r.ok(), r.error << r.fault_message);
        CHECK(out == ref);
      }
    }
  }
}

TEST_CASE("g13 warp loop: a fault inside the loop names the first faulting SIMD-group and lane") {
  // Threadgroup 1's thread 101 (SIMD-group 3, lane 5) is the first whose
  // store leaves the arrays; later SIMD-groups do not run.
  const uint32_t bytes = (512 + 101) * 4;
  for (Engine e : host_engines()) {
    CAPTURE(engine_name(e));
    std::vector<uint8_t> ref;
    for (int mode : {0, 1, 2}) {
      CAPTURE(mode);
      std::vector<uint8_t> out;
      G13Result r = run({2, 1, 1}, {256, 1, 1}, bytes, e, mode, out);
      REQUIRE(r.fault);
      CHECK(r.fault->kind == ir::FaultKind::OutOfBounds);
      CHECK(r.fault->block.x == 1);
      CHECK(r.fault->warp == 3);
      CHECK(r.fault->lane == 5);
      CHECK(r.fault->addr == kBase + bytes);
      if (ref.empty()) ref = out;
      CHECK(out == ref);
    }
  }
}

TEST_CASE("g13 grid loop: many threadgroups and two-dimensional grids as on the other paths and the interpreter") {
  struct Case { rt::Dim3 grid, block; };
  const Case cases[] = {{{300, 1, 1}, {32, 1, 1}}, {{5, 3, 2}, {64, 2, 1}}, {{9, 2, 1}, {96, 1, 1}}};
  for (const Case& c : cases) {
    CAPTURE(c.grid.x);
    CAPTURE(c.block.x);
    const uint16_t stride = uint16_t(c.block.count());  // the arrays hold 64 KiB
    const uint32_t bytes = uint32_t(c.grid.x * stride * 4);
    std::vector<uint8_t> ref, out;
    G13Result r0 = run(c.grid, c.block, bytes, Engine::Interp, 0, ref, stride);
    REQUIRE_MESSAGE(r0.ok(), r0.error << r0.fault_message);
    for (Engine e : host_engines()) {
      CAPTURE(engine_name(e));
      for (int mode : {0, 1, 2}) {
        CAPTURE(mode);
        G13Result r = run(c.grid, c.block, bytes, e, mode, out, stride);
        REQUIRE_MESSAGE(r.ok(), r.error << r.fault_message);
        CHECK(out == ref);
      }
    }
  }
}

}  // namespace gpurc_test_g13_warp_loop
