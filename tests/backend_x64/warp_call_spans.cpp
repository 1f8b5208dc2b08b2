// Call spans (Emitter::call_span_ok in backend_x64/memory_fast.cpp): in a
// warp-loop call whose index var the loop writes as base + lane, an indexed
// access under the entry mask whose window holds the whole call's range, with
// every lane launched, moves each warp from one per-call host pointer with
// no lane, window or sequence test; a store home's probe decides its overlap
// with the segment's homed loads once per call when they share its index
// var. Each case runs several warps in one run_warps call and compares with
// the IR interpreter warp by warp (memory, the warp that stopped, fault kind
// / lane / address): c[i] = a[i] + b[i] with c at, inside and beside a's
// span; warp bases stepping by 32 and scattered; a window holding only part
// of the memory (the call's range leaves it: per-warp paths); a last warp
// past the memory (a fault after the earlier warps wrote); a partial entry
// mask; and a store through a second lane var j whose distance from i
// changes per warp (its overlap with the loads cannot be decided per call).
#include <doctest/doctest.h>

#include <cstring>

#include "../backend/compare.h"
#include "backend_x64/jit.h"
#include "tests/backend_x64/tier_compile.h"

namespace gpurc_test_backend_x64_call_spans {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::backend::test;
using ir::Opcode;
using ir::Type;

namespace {

constexpr uint64_t kSpanMemBase = 0x10000;  // TestMemory's base

// vars i, j (i32): a[i] and b[i] loaded, their f32 sum stored to c[i], or to
// c[j] when `store_j` (a, b, c at byte offsets of the memory).
ir::Function span_vector_add(uint64_t oa, uint64_t ob, uint64_t oc, bool store_j) {
  ir::Function f;
  f.add_var("i", Type::I32);
  f.add_var("j", Type::I32);
  f.add_block("entry");
  ir::Builder b(f);
  auto i = b.emit(Opcode::LoadVar, Type::I32, {}, 0, 0, 0);
  auto j = store_j ? b.emit(Opcode::LoadVar, Type::I32, {}, 0, 0, 1) : i;
  auto mask = b.entry_mask();
  auto at = [&](uint64_t off, ir::ValueId x) {
    return b.iadd(b.i64(kSpanMemBase + off), b.shl(b.zext(Type::I64, x), b.i32(2)));
  };
  auto x = b.load(Type::I32, ir::Space::Global, ir::AddrClass::Random, at(oa, i), mask);
  auto y = b.load(Type::I32, ir::Space::Global, ir::AddrClass::Random, at(ob, i), mask);
  auto sum = b.fadd(b.bitcast(Type::F32, x), b.bitcast(Type::F32, y), ir::ff::FtzIn | ir::ff::FtzOut);
  b.store(ir::Space::Global, ir::AddrClass::Random, at(oc, j), b.bitcast(Type::I32, sum), mask);
  b.ret();
  f.compute_preds();
  REQUIRE(ir::verify(f) == "");
  return f;
}

struct SpanCase {
  std::vector<uint64_t> bases;  // per warp: i's base (and j's, when nvars = 2)
  size_t nvars = 1, warps = 0;
  uint32_t entry_mask = ~0u;
  size_t window_bytes = 0;      // ctx.windows[0]'s size (the memory's, or less)
};

// The interpreter warp by warp against the warp loop; "" when alike.
std::string span_run(const ir::Function& f, const ir::Executable& jit, const SpanCase& c, std::mt19937_64& rng) {
  std::vector<uint8_t> init(8 * 1024);
  fill_random(init, rng);
  return compare_warp_loop(f, jit, init, c.bases, c.warps, c.nvars, c.entry_mask, c.window_bytes);
}

}  // namespace

TEST_CASE("x64 call spans: one check per warp-loop call; windows, faults, masks and overlaps as per warp") {
  std::mt19937_64 rng(191);
  const int64_t c_rel[] = {0, 4, 100, 128, -4, -124, 2048};
  for (int64_t rel : c_rel) {
    const ir::Function f = span_vector_add(2048, 4096, uint64_t(2048 + rel), false);
    for (x64::Tier tier : {x64::Tier::Avx512, x64::Tier::Avx2}) {
      if (!x64::host_supports(tier)) continue;
      auto jit = test::compile_warp_loop(f, tier);
      for (int k = 0; k < 16; ++k) {
        SpanCase c;
        c.warps = 2 + rng() % 7;
        // Bases stepping by 32 (the launch's shape) or scattered; now and
        // then a last warp past the memory (c or a faults there).
        const bool stepping = k % 2 == 0;
        const uint64_t start = rng() % 256;
        for (size_t w = 0; w < c.warps; ++w) c.bases.push_back(stepping ? start + 32 * w : rng() % (512 - 32));
        if (k % 4 == 3) c.bases.back() = 1536 + rng() % 64;
        c.window_bytes = k % 8 == 5 ? 2048 + 4 * (rng() % 1024) : 8 * 1024;  // part of a / b / c outside
        c.entry_mask = k % 8 == 6 ? uint32_t(rng()) | 1u : ~0u;
        const std::string d = span_run(f, *jit, c, rng);
        CHECK_MESSAGE(d == "", (tier == x64::Tier::Avx512 ? "avx512" : "avx2")
                                   << " c - a " << rel << " case " << k << ": " << d);
      }
    }
  }
}

TEST_CASE("x64 call spans: a store through another lane var whose distance from the loads' changes per warp") {
  std::mt19937_64 rng(192);
  // c[j] = a[i] + b[i] with c = a: warp w overlaps its loads when 0 < j - i < 32.
  const ir::Function f = span_vector_add(2048, 4096, 2048, true);
  const int64_t dist[] = {0, 40, -3, 5, 31, 32, 1, -40};
  for (x64::Tier tier : {x64::Tier::Avx512, x64::Tier::Avx2}) {
    if (!x64::host_supports(tier)) continue;
    auto jit = test::compile_warp_loop(f, tier);
    for (int k = 0; k < 24; ++k) {
      SpanCase c;
      c.nvars = 2;
      c.warps = 2 + rng() % 6;
      c.window_bytes = 8 * 1024;
      for (size_t w = 0; w < c.warps; ++w) {
        const uint64_t i = 64 + rng() % 256;
        // The first warp does not overlap (the call spans are set there).
        const int64_t dj = w == 0 ? (k % 2 ? 40 : 0) : dist[rng() % std::size(dist)];
        c.bases.push_back(i);
        c.bases.push_back(uint64_t(int64_t(i) + dj));
      }
      const std::string d = span_run(f, *jit, c, rng);
      CHECK_MESSAGE(d == "", (tier == x64::Tier::Avx512 ? "avx512" : "avx2") << " case " << k << ": " << d);
    }
  }
}

}  // namespace gpurc_test_backend_x64_call_spans
