// Fault sites share one out-of-line tail (emitter.cpp, emit_fault_return and
// emit_fault_common): each site passes its index into a table of fault
// records. Every field of the record must reach the context exactly as the
// interpreter reports it, whichever of many sites faults.
#include <doctest/doctest.h>

#include "compare.h"

namespace gpurc_test_backend_fault_sites {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::backend;
using namespace gpurc::backend::test;
using ir::Opcode;
using ir::Type;

namespace {

// `loads` uniform loads summed into var 0 (each a fault site when there is
// no uniform block), then one load at `last_offset` (out of range when it
// is uniform_bytes or more: a fault site that always faults).
ir::Function uniform_sum(unsigned loads, uint32_t uniform_bytes, uint32_t last_offset) {
  ir::Function f;
  f.add_var("x", Type::I32);
  f.uniform_bytes = uniform_bytes;
  f.add_block("entry");
  ir::Builder b(f);
  b.set_block(0);
  ir::ValueId sum = load_var(b, 0);
  for (unsigned i = 0; i < loads; ++i) sum = b.iadd(sum, b.load_uniform(Type::I32, 4 * (i % (uniform_bytes / 4))));
  sum = b.iadd(sum, b.load_uniform(Type::I32, last_offset));
  store_var(b, 0, sum);
  b.ret();
  return f;
}

ir::WarpContext run_tier(const ir::Function& f, const RunSpec& s, Tier t) {
  JitOptions o;
  o.tier = t;
  std::string err;
  auto jit = compile(f, o, &err);
  REQUIRE_MESSAGE(jit, err);
  return run_one(*jit, f, s).ctx;
}

}  // namespace

TEST_CASE("backend: many fault sites report the faulting site's record, as the interpreter") {
  for (unsigned loads : {1u, 7u, 40u})
    for (uint32_t mask : {~0u, 0xF0u, 0x80000000u}) {
      // Out of range at the end: the uniform block is present, only the last load faults.
      ir::Function f = uniform_sum(loads, 64, 64);
      RunSpec s;
      s.vars.assign(f.vars_bytes(), 0);
      s.uniforms.assign(64, 3);
      s.entry_mask = mask;
      check_all_tiers(f, s, "out-of-range load after " + std::to_string(loads) + " loads");
      auto ref = ir::make_ir_interpreter(f);
      const ir::WarpContext want = run_one(*ref, f, s).ctx;
      REQUIRE(want.fault == ir::FaultKind::OutOfBounds);
      for (Tier t : host_tiers()) {
        const ir::WarpContext got = run_tier(f, s, t);
        CHECK(got.fault == ir::FaultKind::OutOfBounds);
        CHECK(got.fault_code == want.fault_code);
        CHECK(got.fault_addr == 64);
        CHECK(got.fault_space == want.fault_space);
        CHECK(got.fault_space == uint32_t(ir::Space::Const));
        CHECK(got.fault_lane == want.fault_lane);
        CHECK(got.resume == 0);
      }
      // In range: many sites, none taken.
      check_all_tiers(uniform_sum(loads, 64, 60), s, "in-range loads, " + std::to_string(loads));
      // No uniform block: the first load faults (site 0 of many).
      s.uniforms.clear();
      ir::Function g = uniform_sum(loads, 64, 0);
      check_all_tiers(g, s, "null uniforms, " + std::to_string(loads) + " loads");
      const ir::WarpContext want0 = run_one(*ir::make_ir_interpreter(g), g, s).ctx;
      for (Tier t : host_tiers()) {
        const ir::WarpContext got = run_tier(g, s, t);
        CHECK(got.fault == want0.fault);
        CHECK(got.fault_code == want0.fault_code);
        CHECK(got.fault_addr == want0.fault_addr);
        CHECK(got.fault_space == want0.fault_space);
        CHECK(got.fault_lane == want0.fault_lane);
      }
    }
}

}  // namespace gpurc_test_backend_fault_sites
