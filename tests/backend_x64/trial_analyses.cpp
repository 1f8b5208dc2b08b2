// A strip-outer loop's trial emitters (backend_x64/loops.cpp: the loop body
// emitted into a discarded buffer to find the invariants it reads from
// registers, and on AVX2 the counted strips' fast run, to find whether
// vector registers 3..5 are free) take the function-level analyses of the
// emitter they probe for (seventeenth session) instead of making them again.
// The code must be the code of trials that make their own: both tiers (AVX-512
// as a listing when the host lacks it), the reference shaders with and
// without the draw contract.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "backend_x64/jit.h"
#include "ir/passes.h"
#include "reference_shader.h"
#include "tests/backend_x64/tier_compile.h"

namespace gpurc_test_backend_x64_trial_analyses {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::x64;

namespace {

std::vector<uint8_t> trial_code_of(const ir::Function& f, Tier t) {
  auto cf = test::compile_for_tier(f, t);
  return std::vector<uint8_t>(cf->code(), cf->code() + cf->code_bytes());
}

}  // namespace

TEST_CASE("x64 jit: trial emitters that share the analyses give the code of trials that make their own") {
  for (const char* name : {"ref_loop", "ref_heavy", "ref_simple"})
    for (bool draw_only : {false, true}) {
      ir::Function f = test::translate_reference_shader(name, draw_only);
      REQUIRE(ir::run_pipeline(f, ir::PassOptions{}) == "");
      for (Tier t : {Tier::Avx512, Tier::Avx2}) {
        CAPTURE(name);
        CAPTURE(draw_only);
        CAPTURE(tier_name(t));
        set_trial_analyses_shared(false);
        const uint64_t before = trial_analyses_shares();
        const std::vector<uint8_t> own = trial_code_of(f, t);
        CHECK(trial_analyses_shares() == before);
        set_trial_analyses_shared(true);
        const std::vector<uint8_t> shared = trial_code_of(f, t);
        const uint64_t shares = trial_analyses_shares() - before;
        CHECK(shared == own);
        // ref_loop has one strip-outer loop: the body's trial on both tiers,
        // and on AVX2 the fast run's (its accumulators are left in slots).
        // The other two have no loop, so no trial.
        if (std::string(name) == "ref_loop") CHECK(shares == (t == Tier::Avx2 ? 2u : 1u));
        else CHECK(shares == 0);
        // Twice in a row (the thread's kept buffers and copies are warm).
        CHECK(trial_code_of(f, t) == own);
      }
    }
  set_trial_analyses_shared(true);
}

}  // namespace gpurc_test_backend_x64_trial_analyses
