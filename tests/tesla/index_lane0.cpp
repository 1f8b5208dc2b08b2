// The index chain's lane-0 version (docs/backend_x64.md, "Issue 13,
// nineteenth session: saxpy's index in lane 0"): saxpy-shaped kernels whose
// index i = ntid.x * ctaid.x + tid.x, bound compare and `<< 2` the JIT
// decides per warp from lane 0 (and the warp loop writes tid and ctaid as
// lane 0 alone), against the interpreter and the per-warp path: partial
// last blocks, n = 0, n near 2^32, a compared value that wraps inside a
// warp, row lengths that are not multiples of 32, 2-D blocks, single-warp
// launches, one block per call and the grid loop, accesses that leave the
// buffer or cross the 4 GiB edge.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "frontend/tesla/module/launch.h"
#include "recompiler/isa_engine.h"
#include "translate_harness.h"

namespace gpurc_test_tesla_index_lane0 {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;

namespace {

// y[i] = a * x[i] + y[i] for j < n: the index i, then the bound compare
// (kBound*), then the accesses and the MAD.
#define SAXPY_INDEX              \
  "ld $r1 u16 s[0x2]\n"          \
  "ld $r2 u16 s[0xc]\n"          \
  "long mul $r1 u16 $r1l u16 $r2l\n" \
  "cvt u32 $r3 u16 $r0l\n"       \
  "long add b32 $r1 $r1 $r3\n"   /* i */ \
  "ld $r4 b32 s[0x1c]\n"         /* n */
#define SAXPY_BODY               \
  "(lg $c0) bra #done\n"         \
  "shl b32 $r1 $r1 0x2\n"        \
  "ld $r6 b32 s[0x10]\n"         \
  "long add b32 $r6 $r6 $r1\n"   \
  "ld $r7 b32 s[0x14]\n"         \
  "long add b32 $r7 $r7 $r1\n"   \
  "ld b32 $r8 g0[$r6]\n"         \
  "ld b32 $r9 g0[$r7]\n"         \
  "ld $r10 b32 s[0x18]\n"        \
  "long add f32 $r9 (mul $r10 $r8) $r9\n" \
  "st b32 g0[$r7] $r9\n"         \
  "done: exit nop\n"

// j = i + k, k from s[0x20]: a compared value that may wrap inside a warp.
const char* kSaxpyOffset = SAXPY_INDEX
    "ld $r11 b32 s[0x20]\n"
    "long add b32 $r12 $r1 $r11\n"
    "set $c0 $r5 ge u32 $r12 $r4\n" SAXPY_BODY;

// j = i: the bench's saxpy (examples/tesla/saxpy.asm).
const char* kSaxpy = SAXPY_INDEX "set $c0 $r5 ge u32 $r1 $r4\n" SAXPY_BODY;

#undef SAXPY_INDEX
#undef SAXPY_BODY

struct Setup {
  const char* src = kSaxpy;
  rt::Dim3 grid, block;
  uint32_t n = 0, k = 0;
  uint32_t x = 0x100000, y = 0x200000;  // buffer addresses
  uint32_t x_bytes = 0, y_bytes = 0;    // 0: 4 bytes per thread
};

struct Result {
  tesla_run::Outcome r;
  std::vector<uint8_t> x, y;
};

// mode 0: the grid loop; 1: the warp loop, one call per block; 2: every warp on its own.
Result run(const Setup& s, Engine e, int mode) {
  tesla_run::Kernel k;
  std::string err;
  REQUIRE(tesla::parse_target("g200", k.target, err));
  REQUIRE_MESSAGE(tesla::assemble(s.src, k.target, k.code, err), err);
  tesla_run::Launch l;
  l.grid = s.grid;
  l.block = s.block;
  const float a = 2.0f;
  const uint32_t words[5] = {s.x, s.y, 0, s.n, s.k};
  l.params.resize(sizeof words);
  std::memcpy(l.params.data(), words, sizeof words);
  std::memcpy(l.params.data() + 8, &a, 4);
  const uint32_t threads = uint32_t(s.grid.count() * s.block.count());
  std::vector<tesla_run::Buffer> bufs(2);
  bufs[0].name = "x";
  bufs[0].address = s.x;
  bufs[0].bytes.resize(s.x_bytes ? s.x_bytes : 4 * threads);
  bufs[1].name = "y";
  bufs[1].address = s.y;
  bufs[1].bytes.resize(s.y_bytes ? s.y_bytes : 4 * threads);
  for (int b = 0; b < 2; ++b)
    for (size_t w = 0; w + 4 <= bufs[b].bytes.size(); w += 4) {
      const float v = float(w / 4) * (b ? 3.0f : 1.0f) + 0.25f;
      std::memcpy(bufs[b].bytes.data() + w, &v, 4);
    }
  tesla_run::Options o;
  const EngineAsHandle handle(e);
  o.engine = &handle;
  o.threads = 1;
  o.warp_loop = mode < 2;
  o.grid_loop = mode == 0;
  Result res;
  res.r = tesla_run::run(k, l, bufs, o);
  res.x = bufs[0].bytes;
  res.y = bufs[1].bytes;
  return res;
}

std::string hex(uint64_t v) {
  char b[32];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

// Every JIT tier and mode against the interpreter: the same memory, or the
// same fault (the JIT's report the same in every mode, its memory the
// per-warp path's).
// (A buffer the interpreter cannot hold, past 1 GiB: the JIT's modes
// against its per-warp path only; the caller checks the values.)
void check_all(const Setup& s) {
  const Result ref = run(s, Engine::Interp, 0);
  const bool interp = ref.r.error.empty();
  for (Engine e : host_engines()) {
    if (e == Engine::Interp) continue;
    CAPTURE(engine_name(e));
    const Result per_warp = run(s, e, 2);
    if (interp) CHECK(per_warp.r.faulted == ref.r.faulted);
    if (interp && !ref.r.faulted) {
      REQUIRE_MESSAGE(per_warp.r.ok(), per_warp.r.error << per_warp.r.fault_message);
      CHECK(per_warp.y == ref.y);
    }
    for (int mode : {0, 1}) {
      CAPTURE(mode);
      const Result got = run(s, e, mode);
      INFO(got.r.error << got.r.fault_message);
      CHECK(got.r.error == per_warp.r.error);
      CHECK(got.r.faulted == per_warp.r.faulted);
      CHECK(got.r.fault_message == per_warp.r.fault_message);
      CHECK(got.y == per_warp.y);
      CHECK(got.x == per_warp.x);
      if (interp) {
        CHECK(got.r.faulted == ref.r.faulted);
        CHECK(got.r.fault_kind == ref.r.fault_kind);
        if (!ref.r.faulted) CHECK(got.y == ref.y);
      }
    }
  }
}

}  // namespace

TEST_CASE("tesla index lane 0: block shapes, partial last blocks, n = 0 and n near 2^32") {
  struct Shape { rt::Dim3 grid, block; };
  const Shape shapes[] = {{{24, 1, 1}, {256, 1, 1}}, {{7, 1, 1}, {48, 1, 1}},  {{5, 1, 1}, {100, 1, 1}},
                          {{4, 1, 1}, {64, 2, 1}},   {{3, 1, 1}, {16, 4, 1}},  {{1, 1, 1}, {32, 1, 1}},
                          {{1, 1, 1}, {20, 1, 1}},   {{300, 1, 1}, {32, 1, 1}}, {{6, 2, 1}, {96, 1, 1}}};
  for (const Shape& sh : shapes) {
    CAPTURE(sh.grid.x);
    CAPTURE(sh.grid.y);
    CAPTURE(sh.block.x);
    CAPTURE(sh.block.y);
    const uint32_t threads = uint32_t(sh.grid.count() * sh.block.count());
    for (uint32_t n : {threads, threads - 5, threads - 40, 0u, 37u, 0xfffffff0u, 0xffffffffu}) {
      CAPTURE(n);
      Setup s;
      s.grid = sh.grid;
      s.block = sh.block;
      s.n = n;
      check_all(s);
    }
  }
}

TEST_CASE("tesla index lane 0: a compared value that wraps inside a warp (j = i + k)") {
  // k near 2^32: j = i + k carries inside some warp (lanes before it large,
  // lanes after it small); lane 0 and lane 31 alone would disagree with the
  // lanes between only when the carry is missed.
  for (uint32_t k : {0u, 0xfffffff0u, 0xffffffe1u, 0xffffff00u, 0xfffffc10u, 0x80000000u}) {
    for (uint32_t n : {1000u, 0x7fffffffu, 0xfffffff8u, 0u}) {
      CAPTURE(k);
      CAPTURE(n);
      Setup s;
      s.src = kSaxpyOffset;
      s.grid = {8, 1, 1};
      s.block = {128, 1, 1};
      s.n = n;
      s.k = k;
      check_all(s);
    }
  }
}

TEST_CASE("tesla index lane 0: accesses past the buffers fault at the interpreter's warp and lane") {
  // y is short by `missing` threads: the warp holding thread threads -
  // missing faults at its first lane past the end, every earlier lane's
  // store done.
  for (uint32_t missing : {1u, 31u, 32u, 100u, 700u}) {
    CAPTURE(missing);
    Setup s;
    s.grid = {12, 1, 1};
    s.block = {256, 1, 1};
    const uint32_t threads = 12 * 256;
    s.n = threads;
    s.y_bytes = 4 * (threads - missing);
    check_all(s);
    const Result got = run(s, host_engines().back(), 0);
    REQUIRE(got.r.faulted);
    const uint32_t t = threads - missing;
    if (host_engines().back() != Engine::Interp)
      CHECK(got.r.fault_message == "out-of-bounds fault in block (" + std::to_string(t / 256) + ",0,0) warp " +
                                       std::to_string(t % 256 / 32) + " lane " + std::to_string(t % 32) +
                                       " at global address " + hex(0x200000 + 4 * uint64_t(t)));
  }
}

TEST_CASE("tesla index lane 0: x and y at the 4 GiB edge (u + 4 i carrying)") {
  // x ends 0x100 bytes below 2^32: lanes past it wrap to g0 address 0..,
  // where nothing is mapped, unless n stops them first.
  for (uint32_t n : {64u, 65u, 96u, 1024u}) {
    CAPTURE(n);
    Setup s;
    s.grid = {4, 1, 1};
    s.block = {256, 1, 1};
    s.n = n;
    s.x = 0xffffff00u;
    s.x_bytes = 0x100;
    check_all(s);  // (the interpreter holds no buffer there: the JIT's modes agree)
    for (Engine e : host_engines()) {
      if (e == Engine::Interp) continue;
      CAPTURE(engine_name(e));
      for (int mode : {0, 1, 2}) {
        CAPTURE(mode);
        const Result got = run(s, e, mode);
        // Threads 0..63 read x inside it; thread 64 (warp 2, lane 0) reads g0 address 0.
        CHECK(got.r.faulted == (n > 64));
        if (n > 64) CHECK(got.r.fault_message == "out-of-bounds fault in block (0,0,0) warp 2 lane 0 at global address 0x0");
        for (uint32_t t = 0; t < 1024; ++t) {
          float v;
          std::memcpy(&v, got.y.data() + 4 * t, 4);
          const float x = float(t) + 0.25f, y = float(t) * 3.0f + 0.25f;
          CHECK(v == (t < 64 ? 2.0f * x + y : y));
        }
      }
    }
  }
}

}  // namespace gpurc_test_tesla_index_lane0

namespace gpurc_test_tesla_index_lane0 {

// Second round (docs/backend_x64.md, "Issue 13, nineteenth session, second
// round"): a proven warp writes lane 0 alone of `i << 2` and decides the
// first access's lanes from the proven dword. The cold paths that read more
// lanes (a load or store leaving its buffer after many proven warps, in a
// later block of the same call or a later call) rebuild them first; the
// fault must name the interpreter's warp, lane and address, every earlier
// store done.
TEST_CASE("tesla index lane 0: a fault after many proven warps (lazy lanes of i << 2)") {
  struct Shape { rt::Dim3 grid, block; };
  const Shape shapes[] = {{{64, 1, 1}, {256, 1, 1}}, {{40, 1, 1}, {48, 1, 1}}, {{20, 1, 1}, {100, 1, 1}},
                          {{16, 1, 1}, {64, 2, 1}}, {{200, 1, 1}, {32, 1, 1}}};
  for (const Shape& sh : shapes) {
    const uint32_t threads = uint32_t(sh.grid.count() * sh.block.count());
    for (uint32_t missing : {1u, 29u, 100u, 1000u}) {
      for (int short_x = 0; short_x < 2; ++short_x) {
        CAPTURE(sh.grid.x);
        CAPTURE(sh.block.x);
        CAPTURE(missing);
        CAPTURE(short_x);
        Setup s;
        s.grid = sh.grid;
        s.block = sh.block;
        s.n = threads;
        (short_x ? s.x_bytes : s.y_bytes) = 4 * (threads - missing);
        check_all(s);
      }
    }
  }
}

}  // namespace gpurc_test_tesla_index_lane0

namespace gpurc_test_tesla_index_lane0 {

// The bound compare decided for a proven warp lives in the proven dword
// alone (its slot is not written): a cold path after it rebuilds the slot.
// j = i + k with k = 2^32 - d: the warps below i = d compare false (the
// warp holding d partly), the later ones true; a fault in a later warp takes
// its lanes from the rebuilt slot, not the partial warp's.
TEST_CASE("tesla index lane 0: a fault after a partly true compare (lazy compare slot)") {
  for (uint32_t d : {1000u, 40u, 300u}) {
    for (uint32_t missing : {100u, 1u, 700u}) {
      for (int short_x = 0; short_x < 2; ++short_x) {
        CAPTURE(d);
        CAPTURE(missing);
        CAPTURE(short_x);
        Setup s;
        s.src = kSaxpyOffset;
        s.grid = {16, 1, 1};
        s.block = {128, 1, 1};
        s.n = 0x7fffffffu;
        s.k = 0u - d;
        (short_x ? s.x_bytes : s.y_bytes) = 4 * (16 * 128 - missing);
        check_all(s);
      }
    }
  }
}

}  // namespace gpurc_test_tesla_index_lane0
