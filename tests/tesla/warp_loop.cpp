// The warp loop (docs/runtime.md, "Warp loop"): JIT launches whose full
// warps run in one call of the generated code give the same memory and the
// same fault reports as the per-warp path (rt::LaunchConfig::warp_loop off)
// and the interpreter, for block shapes the loop takes (rows of whole
// warps, one row with a partial last warp) and one it leaves to the
// per-warp path.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "frontend/tesla/module/launch.h"
#include "recompiler/isa_engine.h"
#include "translate_harness.h"

namespace gpurc_test_tesla_warp_loop {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;

namespace {

// out[ctaid.x * 512 + tid.y * ntid.x + tid.x] = $r0 (tid.x | tid.y << 16),
// and the thread's l[] word 0 round trip through local memory.
const char* kIndexKernel =
    "ld $r1 u16 s[0x2]\n"                 // ntid.x
    "ld $r2 u16 s[0xc]\n"                 // ctaid.x
    "shl b32 $r2 $r2 0x9\n"               // ctaid.x * 512
    "cvt u32 $r3 u16 $r0l\n"              // tid.x
    "cvt u32 $r4 u16 $r0h\n"              // tid.y (tid.z = 0)
    "long mul $r5 u16 $r4l u16 $r1l\n"    // tid.y * ntid.x
    "long add b32 $r3 $r3 $r5\n"
    "long add b32 $r3 $r3 $r2\n"          // i
    "shl b32 $r3 $r3 0x2\n"
    "ld $r6 b32 s[0x10]\n"                // out
    "long add b32 $r6 $r6 $r3\n"
    "st b32 g0[$r6] $r0\n"
    "exit nop\n";

// mode 0: the grid loop (many blocks per call); 1: the warp loop, one call
// per block; 2: every warp on its own.
tesla_run::Outcome run(const char* src, rt::Dim3 grid, rt::Dim3 block, uint32_t out_bytes, Engine e, int mode,
                       std::vector<uint8_t>& out, uint32_t smem = 0) {
  tesla_run::Kernel k;
  std::string err;
  REQUIRE(tesla::parse_target("g200", k.target, err));
  REQUIRE_MESSAGE(tesla::assemble(src, k.target, k.code, err), err);
  tesla_run::Launch l;
  l.grid = grid;
  l.block = block;
  l.smem = smem;
  const uint32_t out_addr = 0x10000;
  l.params.resize(4);
  std::memcpy(l.params.data(), &out_addr, 4);
  std::vector<tesla_run::Buffer> bufs(1);
  bufs[0].name = "out";
  bufs[0].address = out_addr;
  bufs[0].bytes.assign(out_bytes, 0xee);
  tesla_run::Options o;
  const EngineAsHandle handle(e);
  o.engine = &handle;
  o.threads = 1;
  o.warp_loop = mode < 2;
  o.grid_loop = mode == 0;
  tesla_run::Outcome r = tesla_run::run(k, l, bufs, o);
  out = bufs[0].bytes;
  return r;
}

std::string hex(uint64_t v) {
  char b[32];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

}  // namespace

TEST_CASE("tesla warp loop: the same memory as the per-warp path and the interpreter for every block shape") {
  const rt::Dim3 shapes[] = {{256, 1, 1}, {64, 2, 1}, {40, 1, 1}, {16, 4, 1}, {32, 3, 1}};
  for (const rt::Dim3& b : shapes) {
    CAPTURE(b.x);
    CAPTURE(b.y);
    std::vector<uint8_t> ref, out;
    REQUIRE(run(kIndexKernel, {3, 1, 1}, b, 3 * 512 * 4, Engine::Interp, 0, ref).ok());
    for (Engine e : host_engines()) {
      CAPTURE(engine_name(e));
      for (int mode : {0, 1, 2}) {
        CAPTURE(mode);
        tesla_run::Outcome r = run(kIndexKernel, {3, 1, 1}, b, 3 * 512 * 4, e, mode, out);
        INFO(r.error << r.fault_message);
        REQUIRE(r.ok());
        CHECK(out == ref);
      }
    }
  }
}

TEST_CASE("tesla warp loop: a fault inside the loop names the first faulting warp and lane; later warps do not run") {
  // Block 1's thread 101 (warp 3, lane 5) is the first whose store leaves
  // the buffer: block 0 and block 1's warps 0..2 wrote theirs, nothing after.
  const uint32_t bytes = (512 + 101) * 4;
  for (Engine e : host_engines()) {
    CAPTURE(engine_name(e));
    std::vector<uint8_t> ref;
    for (int mode : {0, 1, 2}) {
      CAPTURE(mode);
      std::vector<uint8_t> out;
      tesla_run::Outcome r = run(kIndexKernel, {2, 1, 1}, {256, 1, 1}, bytes, e, mode, out);
      REQUIRE(r.faulted);
      CHECK(r.fault_kind == "out-of-bounds");
      if (e == Engine::Interp) {  // the interpreter's own words, the same warp, lane and address
        const std::string& m = r.fault_message;
        CHECK(m.find("block (1,0): g0[$r6] access of 4 bytes at " + hex(0x10000 + bytes) + " outside its") == 0);
        CHECK(m.find("(lane 5)") != std::string::npos);
        CHECK(m.find("(warp 3)") != std::string::npos);
      } else {
        CHECK(r.fault_message ==
              "out-of-bounds fault in block (1,0,0) warp 3 lane 5 at global address " + hex(0x10000 + bytes));
      }
      for (uint32_t t = 0; t < 512 + 96; ++t) {  // block 0's threads, then block 1's warps 0..2
        if (t == 256) t = 512;
        uint32_t v;
        std::memcpy(&v, out.data() + 4 * t, 4);
        CHECK(v == (t & 255));
      }
      if (ref.empty()) ref = out;
      CHECK(out == ref);  // warp 3's lanes before the fault too: the same on both paths
    }
  }
}

TEST_CASE("tesla warp loop: a warp whose last lanes alone leave the buffer faults there, after warps whose window was kept") {
  // Block 1's warp 3 has lanes 0..L-1 inside the buffer and lane L (31: only
  // the last one) past its end; warps 0..2 of the call found the window and
  // kept it (the narrow path's window cache): warp 3 must not pass that test.
  for (uint32_t lane : {31u, 30u, 16u, 1u}) {
    CAPTURE(lane);
    const uint32_t bytes = (512 + 96 + lane) * 4;
    for (Engine e : host_engines()) {
      CAPTURE(engine_name(e));
      if (e == Engine::Interp) continue;
      for (int mode : {0, 1, 2}) {
        CAPTURE(mode);
        std::vector<uint8_t> out;
        tesla_run::Outcome r = run(kIndexKernel, {2, 1, 1}, {256, 1, 1}, bytes, e, mode, out);
        REQUIRE(r.faulted);
        CHECK(r.fault_message == "out-of-bounds fault in block (1,0,0) warp 3 lane " + std::to_string(lane) +
                                     " at global address " + hex(0x10000 + bytes));
        for (uint32_t t = 0; t < 512 + 96 + lane; ++t) {  // block 0, block 1's warps 0..2 and warp 3's lanes before
          if (t == 256) t = 512;
          uint32_t v;
          std::memcpy(&v, out.data() + 4 * t, 4);
          CHECK(v == (t & 255));
        }
      }
    }
  }
}

// out[ctaid.x * 512 + tid] = the count in s[0x40 + 4 * (tid & 31)] before
// this thread adds one to it: the warps of the block before this one (no
// bar: warps run in order), so shared memory must start at zero per block.
const char* kSharedKernel =
    "cvt u32 $r3 u16 $r0l\n"              // tid.x
    "ld $r2 u16 s[0xc]\n"                 // ctaid.x
    "shl b32 $r2 $r2 0x9\n"
    "long add b32 $r4 $r3 $r2\n"
    "shl b32 $r4 $r4 0x2\n"
    "and b32 $r5 $r3 0x1f\n"
    "shl $a1 $r5 0x2\n"
    "ld $r8 b32 s[$a1+0x40]\n"
    "long add b32 $r9 $r8 0x1\n"
    "st b32 s[$a1+0x40] $r9\n"
    "ld $r6 b32 s[0x10]\n"
    "long add b32 $r6 $r6 $r4\n"
    "st b32 g0[$r6] $r8\n"
    "exit nop\n";

TEST_CASE("tesla grid loop: shared memory per block, many blocks, one-warp blocks, against the interpreter") {
  struct Case { rt::Dim3 grid, block; };
  const Case cases[] = {{{40, 1, 1}, {96, 1, 1}}, {{300, 1, 1}, {32, 1, 1}}, {{5, 3, 1}, {64, 2, 1}}, {{7, 1, 1}, {48, 1, 1}}};
  for (const Case& c : cases) {
    CAPTURE(c.grid.x);
    CAPTURE(c.block.x);
    const uint32_t bytes = uint32_t(c.grid.count() * 512 * 4);
    std::vector<uint8_t> ref, out;
    REQUIRE(run(kSharedKernel, c.grid, c.block, bytes, Engine::Interp, 0, ref, 0x100).ok());
    for (Engine e : host_engines()) {
      CAPTURE(engine_name(e));
      for (int mode : {0, 1, 2}) {
        CAPTURE(mode);
        tesla_run::Outcome r = run(kSharedKernel, c.grid, c.block, bytes, e, mode, out, 0x100);
        INFO(r.error << r.fault_message);
        REQUIRE(r.ok());
        CHECK(out == ref);
      }
    }
  }
}

TEST_CASE("tesla grid loop: the watchdog stops a middle block's first warp as on the other paths") {
  // Block 2 (ctaid.x == the second param) spins; every other block exits.
  const char* spin =
      "ld $r2 u16 s[0xc]\n"   // ctaid.x
      "ld $r4 b32 s[0x14]\n"  // 2
      "set $c0 $r5 e u32 $r2 $r4\n"
      "(lg $c0) bra #spin\n"
      "exit nop\n"
      "spin: bra #spin\n";
  tesla_run::Kernel k;
  std::string err;
  REQUIRE(tesla::parse_target("g200", k.target, err));
  REQUIRE_MESSAGE(tesla::assemble(spin, k.target, k.code, err), err);
  tesla_run::Launch l;
  l.grid = {5, 1, 1};
  l.block = {64, 1, 1};
  l.budget = 2000;
  const uint32_t params[2] = {0, 2};
  l.params.resize(8);
  std::memcpy(l.params.data(), params, 8);
  for (Engine e : host_engines()) {
    CAPTURE(engine_name(e));
    std::string first;
    for (int mode : {0, 1, 2}) {
      CAPTURE(mode);
      std::vector<tesla_run::Buffer> bufs;
      tesla_run::Options o;
      const EngineAsHandle handle(e);
      o.engine = &handle;
      o.threads = 1;
      o.warp_loop = mode < 2;
      o.grid_loop = mode == 0;
      tesla_run::Outcome r = tesla_run::run(k, l, bufs, o);
      REQUIRE(r.faulted);
      CHECK(r.fault_kind == "watchdog");
      if (e != Engine::Interp) CHECK(r.fault_message.find("watchdog fault in block (2,0,0) warp 0 lane ") == 0);
      if (first.empty()) first = r.fault_message;
      CHECK(r.fault_message == first);
    }
  }
}

}  // namespace gpurc_test_tesla_warp_loop
