#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cstdlib>

// The tests verify every function a frontend builds (ir/verify_policy.h: a
// release build does not by default). Set before main, so before the first
// verify_built_ir() reads it; GPURC_VERIFY_IR=0 given to a test still wins.
namespace {
const bool gpurc_test_verify_ir = [] { return ::setenv("GPURC_VERIFY_IR", "1", 0) == 0; }();
}  // namespace
