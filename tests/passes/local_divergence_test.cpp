// Divergence stays local: if-conversion of short divergent if/else regions
// (selects, or a uniform vote for longer arms), region-local masking of the
// remaining divergent branches, and the uniformity rule that keeps a counted
// loop's counter uniform next to a divergent branch. Each program is checked
// for the shape the passes must give and, against the IR interpreter, for
// the same end state before and after the pipeline.
#include <doctest/doctest.h>

#include "harness.h"
#include "programs.h"

namespace gpurc_test_passes_local_divergence_test {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace passtest;

namespace {

void check_same_results(const Function& f, const Function& g, uint32_t var_range) {
  std::mt19937 rng(77);
  int states = light() ? 2 : 6;
  for (uint32_t mask : test_masks(rng))
    for (int s = 0; s < states; ++s) {
      State st = random_state(f, rng, mask, var_range);
      Outcome a = run(f, st), b = run(g, st);
      std::string diff = describe(a, b, f);
      if (!diff.empty()) {
        FAIL_CHECK("mask " << std::hex << mask << std::dec << ": " << diff << "\n"
                           << print(f) << "\n--- after ---\n" << print(g));
        return;
      }
    }
}

// Runs the passes up to and including lower_divergence (pre-SSA, vars kept).
Function lowered(const Function& f) {
  Function g = f;
  demote_cross_block_values(g);
  analyze_uniformity(g);
  if_convert_divergent(g);
  lower_divergence(g);
  return g;
}

bool has_var_named(const Function& f, const std::string& prefix) {
  for (auto& v : f.vars)
    if (v.name.rfind(prefix, 0) == 0) return true;
  return false;
}

// A uniform counted loop (count from a uniform), then a divergent if/else
// on r0 whose arms have `arm_ops` additions each:
//   for (i = 0; i < u0; ++i) r1 += i;  if (r0 & 1) r2 = r1 + 1 +..; else r2 = r1 * 3 +..;  r3 = r2 ^ r0
Function loop_then_if(int arm_ops) {
  Prog p;
  p.f.uniform_bytes = 4;
  BlockId b0 = p.block("entry"), h = p.block("head"), body = p.block("body"), cmp = p.block("cmp"),
          t = p.block("then"), e = p.block("else"), j = p.block("join");
  p.b.set_block(b0);
  p.set(1, p.c32(0));
  uint32_t i = p.f.add_var("i", Type::I32);
  p.b.set_var(i, p.c32(0));
  p.b.br(h);
  p.b.set_block(h);
  ValueId n = p.b.binary(Opcode::And, p.b.load_uniform(Type::I32, 0), p.c32(7));
  p.b.cond_br(p.b.icmp(IntPred::Ult, p.b.get_var(i), n), body, cmp);
  p.b.set_block(body);
  p.set(1, p.add(p.get(1), p.b.get_var(i)));
  p.b.set_var(i, p.add(p.b.get_var(i), p.c32(1)));
  p.b.br(h);
  p.b.set_block(cmp);
  p.b.cond_br(p.b.icmp(IntPred::Ne, p.b.binary(Opcode::And, p.get(0), p.c32(1)), p.c32(0)), t, e);
  p.b.set_block(t);
  ValueId x = p.add(p.get(1), p.c32(1));
  for (int k = 0; k < arm_ops; ++k) x = p.add(x, p.c32(uint32_t(k)));
  p.set(2, x);
  p.b.br(j);
  p.b.set_block(e);
  ValueId y = p.b.binary(Opcode::IMul, p.get(1), p.c32(3));
  for (int k = 0; k < arm_ops; ++k) y = p.b.binary(Opcode::Xor, y, p.c32(uint32_t(k * 5)));
  p.set(2, y);
  p.b.br(j);
  p.b.set_block(j);
  p.set(3, p.b.binary(Opcode::Xor, p.get(2), p.get(0)));
  p.b.ret();
  return std::move(p.f);
}

}  // namespace

TEST_CASE("if-conversion: a short divergent if/else becomes selects and the function stays uniform") {
  Function f = loop_then_if(2);
  Function g = lowered(f);
  CHECK(verify(g) == "");
  CHECK(!has_var_named(g, "mask_b"));  // no masked lowering at all
  CHECK(count_op(g, Opcode::Any) == 0);
  CHECK(count_op(g, Opcode::All) == 0);
  CHECK(count_op(g, Opcode::Select) >= 2);
  CHECK(is_lowered(g));
  check_same_results(f, g, 64);
  Function h = f;
  REQUIRE(pipeline(h).empty());
  check_same_results(f, h, 64);
}

TEST_CASE("if-conversion: longer arms get a uniform vote between the unmasked arm and the select copy") {
  Function f = loop_then_if(40);
  Function g = lowered(f);
  CHECK(verify(g) == "");
  CHECK(!has_var_named(g, "mask_b"));
  CHECK(count_op(g, Opcode::All) == 1);
  CHECK(count_op(g, Opcode::Any) == 1);
  CHECK(is_lowered(g));
  check_same_results(f, g, 64);
  // Uniform-at-run-time conditions: every lane odd / even takes an unmasked arm.
  Function h = f;
  REQUIRE(pipeline(h).empty());
  check_same_results(f, h, 64);
  std::mt19937 rng(5);
  for (uint32_t parity : {0u, 1u}) {
    State st = random_state(f, rng, ~0u, 64);
    for (int l = 0; l < kWarpLanes; ++l) {
      uint32_t v = (uint32_t(l) * 2) | parity;
      std::memcpy(&st.vars[f.var_offset(0) + 4 * l], &v, 4);
    }
    CHECK(describe(run(f, st), run(h, st), f) == "");
  }
}

TEST_CASE("if-conversion: nested short ifs convert inside out, memory arms are left to masking") {
  Function f = prog_nested_if();  // the inner else stores: not convertible, its enclosing if neither
  Function g = lowered(f);
  CHECK(verify(g) == "");
  check_same_results(f, g, 16);
  Function h = f;
  REQUIRE(pipeline(h).empty());
  check_same_results(f, h, 16);
  PassOptions no_ifc;
  no_ifc.if_convert = false;
  Function k = loop_then_if(2);
  REQUIRE(pipeline(k, no_ifc).empty());
  check_same_results(loop_then_if(2), k, 64);
}

TEST_CASE("region-local masking: a divergent loop exit masks the loop, not the uniform loop before it") {
  // A uniform counted loop, then prog_loop's divergent loop (lanes leave at
  // different iterations), which if-conversion cannot take.
  Prog p;
  p.f.uniform_bytes = 4;
  BlockId b0 = p.block("entry"), h = p.block("head"), body = p.block("body"), mid = p.block("mid"),
          h2 = p.block("head2"), body2 = p.block("body2"), ex = p.block("exit");
  uint32_t i = p.f.add_var("i", Type::I32);
  p.b.set_block(b0);
  p.b.set_var(i, p.c32(0));
  p.b.br(h);
  p.b.set_block(h);
  ValueId n = p.b.binary(Opcode::And, p.b.load_uniform(Type::I32, 0), p.c32(7));
  p.b.cond_br(p.b.icmp(IntPred::Ult, p.b.get_var(i), n), body, mid);
  p.b.set_block(body);
  p.set(3, p.add(p.get(3), p.b.get_var(i)));
  p.b.set_var(i, p.add(p.b.get_var(i), p.c32(1)));
  p.b.br(h);
  p.b.set_block(mid);
  p.set(2, p.c32(0));
  p.b.br(h2);
  p.b.set_block(h2);
  p.b.cond_br(p.b.icmp(IntPred::Ult, p.get(2), p.get(0)), body2, ex);
  p.b.set_block(body2);
  p.set(1, p.add(p.get(1), p.get(2)));
  p.set(2, p.add(p.get(2), p.c32(1)));
  p.b.br(h2);
  p.b.set_block(ex);
  p.store_lane(256, p.get(1));
  p.b.ret();
  Function f = std::move(p.f);

  Function a = f;
  demote_cross_block_values(a);
  analyze_uniformity(a);
  // The first loop's branch is uniform (its counter phi is no join of the
  // divergent exit of the second loop), the second loop's is not.
  CHECK(a[a.terminator(h)].uniform);
  CHECK(!a[a.terminator(h2)].uniform);
  Function g = lowered(f);
  CHECK(verify(g) == "");
  CHECK(has_var_named(g, "mask_b"));
  CHECK(is_lowered(g));
  // Only the second loop's blocks (head2, body2, a stub for its exit and an
  // entry before head2) have masks: the uniform loop keeps its branch.
  int masks = 0;
  for (auto& v : g.vars) masks += v.name.rfind("mask_b", 0) == 0;
  CHECK(masks <= 4);
  CHECK(masks > 0);
  check_same_results(f, g, 9);
  Function k = f;
  REQUIRE(pipeline(k).empty());
  check_same_results(f, k, 9);
}

TEST_CASE("region-local masking: random reducible CFGs") {
  std::mt19937 rng(4242);
  int programs = light() ? 20 : 200;
  for (int i = 0; i < programs; ++i) {
    Function f = prog_random(rng, 3 + int(rng() % 8), true);
    CAPTURE(i);
    Function g = lowered(f);
    REQUIRE(verify(g) == "");
    CHECK(is_lowered(g));
    check_same_results(f, g, 32);
  }
}

}  // namespace gpurc_test_passes_local_divergence_test
