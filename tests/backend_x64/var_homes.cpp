// Loads of vars the function never stores have the var as their home
// (Emitter::find_var_homes, issue 13, eleventh session): they are loaded
// where they are used and never spilled to a frame slot. The simple
// reference shader's twelve input loads (v0-v2) came first in its block and,
// with 16 ymm registers, were stored to frame slots right after they were
// loaded and reloaded from there: twelve frame stores per strip. With the
// homes its strip code stores at most a couple of values to the frame, on
// both tiers (the AVX-512 one checked on its listing where the host lacks
// it). Without them (GPURC_VAR_HOMES=0, or main before the change) the
// count check fails. Results: tests/pica200/draw.cpp and the fuzzers
// compare every shader bit for bit with the interpreter.
#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "backend_x64/jit.h"
#include "ir/passes.h"
#include "tests/backend_x64/reference_shader.h"
#include "tests/backend_x64/tier_compile.h"

namespace gpurc_test_backend_x64_var_homes {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::x64;

namespace {

// Instructions that store a vector register into the frame (r12-based):
// a vmovdqu / vmovdqu32 / vmovups whose first operand is [r12+...] (Zydis
// writes "zmmword ptr [r12+..." on AVX-512, "[r12+..." on AVX2).
size_t frame_stores(const std::string& listing) {
  std::istringstream in(listing);
  size_t n = 0;
  for (std::string line; std::getline(in, line);) {
    for (const char* m : {"vmovdqu ", "vmovdqu32 ", "vmovups "}) {
      const size_t at = line.find(m);
      if (at == std::string::npos) continue;
      std::string op = line.substr(at + std::string(m).size());
      for (const char* w : {"zmmword ptr ", "ymmword ptr "})
        if (op.rfind(w, 0) == 0) op = op.substr(std::string(w).size());
      if (op.rfind("[r12+", 0) == 0) ++n;
    }
  }
  return n;
}

}  // namespace

TEST_CASE("x64 jit: loads of vars the function never stores are not spilled to the frame") {
  ir::Function f = test::translate_reference_shader("ref_simple");
  REQUIRE(ir::run_pipeline(f, ir::PassOptions{}) == "");
  for (Tier t : {Tier::Avx512, Tier::Avx2}) {
    const std::string tier = tier_name(t);
    CAPTURE(tier);
    auto cf = test::compile_for_tier(f, t);
    const std::string listing = cf->disassemble();
    const size_t stores = frame_stores(listing);
    CAPTURE(stores);
    // Twelve input components loaded: none of them goes through the frame
    // (a spill of an intermediate value may).
    CHECK(stores <= 2);
    // The input registers are read from the vars: v0's four components,
    // v1's and v2's for the pass-through outputs.
    CHECK(listing.find("[r13+r14*1]") != std::string::npos);
  }
}

}  // namespace gpurc_test_backend_x64_var_homes
