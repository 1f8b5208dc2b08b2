// The warp loop is emitted once per thread and shape (tier, MXCSR mode,
// draw loop) and copied into later functions (backend_x64/warp_loop.cpp):
// a function whose warp loop is a copy, made after another function of the
// same shape at another code size, has the same bytes as the function
// compiled with every warp loop emitted. Both tiers (AVX-512 as a listing
// when the host lacks it), both MXCSR modes, with and without a draw loop.
// (The runtime suites run warp loops of copied code: every compile after
// the first of its shape in a thread takes the copy.)
#include <doctest/doctest.h>

#include <vector>

#include "../backend/float_fix_functions.h"
#include "backend_x64/jit.h"

using namespace gpurc;
using namespace gpurc::x64;
using namespace gpurc::backend::test;

namespace {

// One fmul stored to a var: a small function of the same shape.
ir::Function small_function(bool daz) {
  ir::Function f;
  f.add_var("a", ir::Type::F32);
  f.add_var("b", ir::Type::F32);
  f.add_var("c", ir::Type::F32);
  f.add_block("entry");
  ir::Builder b(f);
  store_var(b, 2, b.fmul(load_var(b, 0), load_var(b, 1), daz ? ir::ff::FtzIn : 0u));
  b.ret();
  return f;
}

std::vector<uint8_t> code_of(const ir::Function& f, Tier t) {
  JitOptions o;
  o.tier = t;
  o.listing_only = !host_supports(t);
  std::string err;
  auto cf = compile(f, o, &err);
  REQUIRE_MESSAGE(cf, err);
  return std::vector<uint8_t>(cf->code(), cf->code() + cf->code_bytes());
}

}  // namespace

TEST_CASE("x64 jit: a copied warp loop gives the bytes of an emitted one") {
  for (Tier t : {Tier::Avx512, Tier::Avx2})
    for (bool daz : {false, true})
      for (bool draw : {false, true}) {
        CAPTURE(tier_name(t));
        CAPTURE(daz);
        CAPTURE(draw);
        ir::Function big = float_fix_function(daz), small = small_function(daz);
        big.unlaunched_lanes_free = small.unlaunched_lanes_free = draw;
        REQUIRE(ir::verify(big) == "");
        REQUIRE(ir::verify(small) == "");
        set_warp_loop_copies(false);
        const std::vector<uint8_t> big_emitted = code_of(big, t), small_emitted = code_of(small, t);
        const uint64_t no_copies = warp_loop_replays();
        set_warp_loop_copies(true);
        // small keeps its loop, big copies it; then the other way round.
        CHECK(code_of(small, t) == small_emitted);
        CHECK(warp_loop_replays() == no_copies);
        CHECK(code_of(big, t) == big_emitted);
        CHECK(warp_loop_replays() == no_copies + 1);
        set_warp_loop_copies(true);
        CHECK(code_of(big, t) == big_emitted);
        CHECK(code_of(small, t) == small_emitted);
        CHECK(code_of(small, t) == small_emitted);
        CHECK(warp_loop_replays() == 2);
      }
  set_warp_loop_copies(true);
}
