// Code the x64 emitter keeps per thread and copies into later functions:
// the warp loop, once per tier, MXCSR mode and draw-loop shape
// (backend_x64/warp_loop.cpp), and the out-of-line float fixes, once per fix
// shape with their constant-pool operands re-pointed (lower_float.cpp). A
// function built from copies, made after other functions put the same code
// elsewhere and the same constants at other pool places, has the bytes of
// the function compiled with nothing copied. Both tiers (AVX-512 as a
// listing when the host lacks it), both MXCSR modes. (The runtime suites and
// the fuzzers run copied code: every compile after the first of its shape
// in a thread takes the copies.)
#include <doctest/doctest.h>

#include <vector>

#include "../backend/float_fix_functions.h"
#include "backend_x64/jit.h"
#include "ir/passes.h"
#include "reference_shader.h"
#include "tests/backend_x64/tier_compile.h"

namespace gpurc_test_backend_x64_code_copies {  // one namespace per file: unity builds (CMakeLists.txt)

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
  auto cf = test::compile_for_tier(f, t);
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

TEST_CASE("x64 jit: copied float fix code gives the bytes of emitted fix code") {
  set_warp_loop_copies(true);
  for (Tier t : {Tier::Avx512, Tier::Avx2})
    for (bool daz : {false, true}) {
      CAPTURE(tier_name(t));
      CAPTURE(daz);
      // Every fix combination (float_fix_function) and the reference shaders
      // after the pipeline (fused products, Pica transcendentals, ZeroMul).
      std::vector<ir::Function> fs;
      fs.push_back(float_fix_function(daz));
      for (const char* name : {"ref_simple", "ref_heavy", "ref_loop"}) {
        ir::Function f = test::translate_reference_shader(name);
        REQUIRE(ir::run_pipeline(f, ir::PassOptions{}) == "");
        fs.push_back(std::move(f));
      }
      set_fix_code_copies(false);
      std::vector<std::vector<uint8_t>> emitted;
      for (const ir::Function& f : fs) emitted.push_back(code_of(f, t));
      CHECK(fix_code_replays() == 0);
      // Forwards (the first function records, the others copy), then
      // backwards, then each after the others.
      set_fix_code_copies(true);
      for (size_t i = 0; i < fs.size(); ++i) CHECK(code_of(fs[i], t) == emitted[i]);
      const uint64_t forwards = fix_code_replays();
      CHECK(forwards > 0);
      set_fix_code_copies(true);
      for (size_t i = fs.size(); i-- > 0;) CHECK(code_of(fs[i], t) == emitted[i]);
      for (size_t i = 0; i < fs.size(); ++i) CHECK(code_of(fs[i], t) == emitted[i]);
      CHECK(fix_code_replays() > forwards);
    }
  set_fix_code_copies(true);
}

}  // namespace gpurc_test_backend_x64_code_copies
