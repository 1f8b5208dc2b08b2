// The warp-context var layout (docs/architecture.md "The warp ABI"): var i at
// the sum of the slots before it, a slot being 32 lanes of 4 bytes (i1 ..
// i32, f16, f32) or 8 bytes (i64, f64), which are already multiples of 64.
// Function::var_offset, var_offsets and vars_bytes read the slot size from a
// per-type table; this checks it against the documented rule.
#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "ir/ir.h"

namespace gpurc_test_ir_layout_test {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc::ir;

TEST_CASE("layout: var offsets follow the documented slot sizes for every type") {
  const Type types[] = {Type::I1, Type::I8, Type::I16, Type::I32, Type::I64, Type::F16, Type::F32, Type::F64};
  auto documented_slot = [](Type t) -> uint32_t { return t == Type::I64 || t == Type::F64 ? 256u : 128u; };
  std::mt19937 rng(13);
  for (int round = 0; round < 20; ++round) {
    Function f;
    const int n = int(rng() % 40);
    for (int i = 0; i < n; ++i) f.add_var("v", types[rng() % 8]);
    std::vector<uint32_t> expected;
    uint32_t off = 0;
    for (const Var& v : f.vars) {
      expected.push_back(off);
      off += documented_slot(v.type);
    }
    expected.push_back(off);
    CHECK(f.var_offsets() == expected);
    for (uint32_t i = 0; i <= uint32_t(n); ++i) CHECK(f.var_offset(i) == expected[i]);
    CHECK(f.vars_bytes() == off);
  }
}

}  // namespace gpurc_test_ir_layout_test
