// The build policy for verifying IR a translator builds (ir/verify_policy.h):
// a release build's ordinary compiles skip it, but the test runner turns it
// on (tests/doctest_main.cpp), so every translation the suites make is
// verified whatever the build type. Fails in a release build if the runner
// stops setting it.
#include <doctest/doctest.h>

#include <cstdlib>

#include "ir/verify_policy.h"

namespace gpurc_test_ir_verify_policy {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;

TEST_CASE("ir verify policy: on in the tests, and the override wins") {
  const char* env = std::getenv("GPURC_VERIFY_IR");
  // The runner sets it unless the caller already gave the variable.
  REQUIRE(env != nullptr);
  if (env[0] == '1') CHECK(ir::verify_built_ir());
  ir::set_verify_built_ir(false);
  CHECK(!ir::verify_built_ir());
  ir::set_verify_built_ir(true);
  CHECK(ir::verify_built_ir());
}

}  // namespace gpurc_test_ir_verify_policy
