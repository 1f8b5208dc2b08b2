// Random whole programs (fuzz/ generator, through the pass pipeline) on both
// tiers against the IR interpreter.
#include <doctest/doctest.h>

#include "fuzz/ir_fuzz.h"
#include "harness.h"
#include "tiers.h"

namespace gpurc_test_backend_fuzz_programs {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;

TEST_CASE("backend: random IR programs match the interpreter on every tier") {
  fuzz::IrFuzzOptions o;
  o.iterations = backend::test::light() ? 100 : 400;
  o.seed = 77;
  for (backend::test::Tier t : backend::test::host_tiers()) o.engines.push_back(t->name);
  REQUIRE(!o.engines.empty());
  o.save_reproducers = false;
  o.minimize = false;
  o.isolate = false;
  fuzz::IrFuzzReport r = fuzz::run_ir_fuzz(o);
  CHECK_MESSAGE(r.error.empty(), r.error);
  for (size_t i = 0; i < r.mismatches.size() && i < 10; ++i)
    FAIL_CHECK("iteration " << r.mismatches[i].iteration << " on " << r.mismatches[i].engine << ": "
                            << r.mismatches[i].what);
  CHECK(r.mismatches.empty());
  MESSAGE(r.programs << " programs, " << r.runs << " runs");
}

}  // namespace gpurc_test_backend_fuzz_programs
