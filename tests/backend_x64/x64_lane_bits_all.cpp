// The all-lanes test of the lane-bit conversions (eighteenth session,
// Emitter::lane_bits with likely_all in backend_x64/emitter.cpp): on AVX2 an
// access's bound mask, a vote's mask and the `A` of `any(not A)` are first
// tested for "every lane has bit 0" (the four vectors ANDed, one vptest),
// and only otherwise converted lane by lane. Against the interpreter on
// every host tier: masks with exactly one lane off at each of the 32
// positions (each of the four vectors), two lanes off, none off, and
// partial entry masks, for an indexed load under `and A, entry_mask` and
// two votes `any(not C, A & entry)` / `any(not A, C & entry)`.
#include <doctest/doctest.h>

#include <random>

#include "../backend/compare.h"
#include "backend_x64/jit.h"

namespace gpurc_test_backend_x64_lane_bits_all {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::backend::test;
using ir::Opcode;
using ir::Type;

namespace {

constexpr uint64_t kAllMemBase = 0x10000;  // TestMemory's base

// out = x[i] under (p != 0) + 2 * any(not (q != 0)) + 4 * any(not (p != 0))
// with the vote masks (p != 0) & entry and (q != 0) & entry.
ir::Function all_lanes_function() {
  ir::Function f;
  f.add_var("p", Type::I32);
  f.add_var("q", Type::I32);
  f.add_var("i", Type::I32);
  f.add_var("out", Type::I32);
  f.add_block("entry");
  ir::Builder b(f);
  auto p = load_var(b, 0), q = load_var(b, 1), i = load_var(b, 2);
  auto a = b.icmp(ir::IntPred::Ne, p, b.i32(0));
  auto c = b.icmp(ir::IntPred::Ne, q, b.i32(0));
  auto ma = b.and_(a, b.entry_mask());
  auto mc = b.and_(c, b.entry_mask());
  auto addr = b.iadd(b.i64(kAllMemBase), b.shl(b.zext(Type::I64, i), b.i32(2)));
  auto x = b.load(Type::I32, ir::Space::Global, ir::AddrClass::Random, addr, ma);
  auto v1 = b.any(b.not_(c), ma);
  auto v2 = b.any(b.not_(a), mc);
  auto out = b.iadd(x, b.iadd(b.shl(b.zext(Type::I32, v1), b.i32(1)), b.shl(b.zext(Type::I32, v2), b.i32(2))));
  store_var(b, 3, out);
  b.ret();
  f.compute_preds();
  REQUIRE(ir::verify(f) == "");
  return f;
}

}  // namespace

TEST_CASE("backend_x64: lane bits' all-lanes test: one or two lanes off at every position, partial launches") {
  const ir::Function f = all_lanes_function();
  std::mt19937_64 rng(1813);
  int cases = 0;
  // off < 32: that lane of p is 0; 32: none. Likewise for q (off2).
  for (unsigned off = 0; off <= 32; ++off)
    for (unsigned off2 : {32u, off, (off + 9) % 32, (off * 7 + 3) % 32}) {
      for (int launch = 0; launch < 3; ++launch) {
        RunSpec s;
        s.vars.resize(f.vars_bytes());
        s.memory = true;
        s.window = true;
        s.memory_bytes = 4096;
        s.memory_init.resize(s.memory_bytes);
        fill_random(s.memory_init, rng);
        // launch 0: every lane; 1: all but one lane (one not tested by p);
        // 2: all but the lane whose p is 0 (so p & entry is all ones)
        s.entry_mask = launch == 0 ? ~0u : launch == 1 ? ~(1u << ((off + 17) % 32)) : off < 32 ? ~(1u << off) : 0x7fffffffu;
        const bool scattered = rng() % 4 == 0;
        for (unsigned l = 0; l < 32; ++l) {
          set_lane(s.vars, f, 0, l, l == off ? 0 : 1 + rng() % 1000);
          set_lane(s.vars, f, 1, l, l == off2 ? 0 : 1 + rng() % 1000);
          set_lane(s.vars, f, 2, l, scattered ? rng() % 1024 : 64 + l);
          set_lane(s.vars, f, 3, l, rng());
        }
        check_all_tiers(f, s, "p off " + std::to_string(off) + ", q off " + std::to_string(off2) + ", launch " +
                                  std::to_string(launch));
        ++cases;
      }
    }
  CHECK(cases == 33 * 4 * 3);
}

}  // namespace gpurc_test_backend_x64_lane_bits_all
