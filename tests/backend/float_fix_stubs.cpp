// The out-of-line float fixes (NaN rule, FtzOut flush, ZeroMul's 0 * inf
// recompute, the fused product + sum of DAZ mode) are shared between the
// sites that need the same code on the same registers: one stub per key,
// called from each site (backend_x64/lower_float.cpp, emit_cold_code). These
// functions repeat every flag combination many times over a few inputs, so
// the register cache hands out the same registers again and keys recur,
// and their operands are NaNs (quiet, signalling, with payloads), infinities,
// signed zeros, subnormals and ordinary numbers, so every fix runs in some
// strip; each tier's results must equal the IR interpreter's bit for bit.
// (tests/backend_x64/codegen.cpp checks that the x64 code does share stubs.)
#include <doctest/doctest.h>

#include "compare.h"
#include "float_fix_functions.h"

namespace gpurc_test_backend_float_fix_stubs {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::backend::test;

namespace {

uint32_t fix_operand(std::mt19937_64& rng) {
  static const uint32_t kSpecial[] = {
      0x00000000u, 0x80000000u,                            // +-0
      0x00000001u, 0x807FFFFFu, 0x00400000u, 0x80000003u,  // subnormals
      0x00800000u, 0x80800000u,                            // smallest normals
      0x7F800000u, 0xFF800000u,                            // +-inf
      0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFFA00005u, 0x7FC12345u, 0xFFFFFFFFu,  // NaNs
      0x3F800000u, 0xBF800000u, 0x7F7FFFFFu, 0xFF7FFFFFu,
      0x20000000u, 0x1F800000u, 0x9F3504F3u};  // products near and below the smallest normal
  switch (rng() % 3) {
    case 0: return 0x3F000000u + uint32_t(rng() % 0x01000000u);  // [0.5, 2)
    default: return kSpecial[rng() % (sizeof kSpecial / sizeof kSpecial[0])];
  }
}

void check_fix_function(const ir::Function& f, uint64_t seed, const char* what) {
  REQUIRE(ir::verify(f) == "");
  std::mt19937_64 rng(seed);
  const int runs = light() ? 12 : 60;
  for (int k = 0; k < runs; ++k) {
    RunSpec s;
    s.vars.resize(f.vars_bytes());
    fill_random(s.vars, rng);
    for (uint32_t v = 0; v < kFixInputs; ++v)
      for (unsigned l = 0; l < 32; ++l)
        // Some runs keep most lanes ordinary, so a strip's one special lane takes the fix.
        set_lane(s.vars, f, v, l, k % 3 == 2 && rng() % 8 ? 0x3F800000u + uint32_t(rng() % 0x400000u) : fix_operand(rng));
    s.entry_mask = k % 4 == 3 ? uint32_t(rng()) | 1u : ~0u;
    CAPTURE(k);
    check_all_tiers(f, s, what);
  }
}

}  // namespace

TEST_CASE("shared float fix stubs: every NaN rule, FtzOut, ZeroMul, FtzIn on NaN/inf/zero/subnormal operands") {
  check_fix_function(float_fix_function(false), 71, "float fixes (IEEE mode)");
}

TEST_CASE("shared float fix stubs in DAZ mode: products, sums and fused product + sum") {
  check_fix_function(float_fix_function(true), 72, "float fixes (DAZ mode)");
}

}  // namespace gpurc_test_backend_float_fix_stubs
