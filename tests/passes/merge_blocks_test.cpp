// merge_straight_blocks (pass_merge_blocks.cpp) and the unlaunched-lanes
// contract of construct_ssa (Function::unlaunched_lanes_free).
#include <doctest/doctest.h>

#include "harness.h"
#include "programs.h"

namespace gpurc_test_passes_merge_blocks_test {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace passtest;

namespace {

Function parse_ok(const char* text) {
  Function f;
  std::string err;
  REQUIRE_MESSAGE(parse(text, f, err), err);
  REQUIRE(verify(f) == "");
  return f;
}

// entry -> b1 -> b2 (a phi with one operand) -> a diamond b3 / b4 -> join
// b5 whose phi names its predecessors, then b5 -> b6 -> return.
const char* kChain = R"(func "chain" {
  var "r0" i32
  var "r1" i32
  var "r2" i32
b0 "entry":
  %0 = load_var i32 #0x0
  %1 = const i32 #0x3
  br b1
b1:
  %2 = iadd i32 %0, %1
  br b2
b2:
  %3 = phi i32 [%2, b1]
  %4 = load_var i32 #0x1
  %5 = icmp.ult i1 %3, %4
  cond_br %5, b3, b4
b3:
  %6 = imul i32 %3, %4
  br b5
b4:
  %7 = xor i32 %3, %4
  br b5
b5:
  %8 = phi i32 [%6, b3], [%7, b4]
  br b6
b6:
  store_var %8, #0x2
  return
}
)";

// A loop whose latch is a chain of two blocks: the merged latch must keep
// the header phis' operands of the back edge.
const char* kLoop = R"(func "loop" {
  var "r0" i32
  var "r1" i32
b0 "entry":
  %0 = load_var i32 #0x0
  %1 = const i32 #0x1
  %2 = const i32 #0x0
  br b1
b1 "head":
  %3 = phi i32 [%0, b0], [%6, b3]
  %4 = phi i32 [%2, b0], [%7, b3]
  %5 = icmp.ult i1 %4, %0
  cond_br %5, b2, b4
b2 "body":
  %6 = imul i32 %3, %3
  br b3
b3 "latch":
  %7 = iadd i32 %4, %1
  br b1
b4 "exit":
  store_var %3, #0x1
  return
}
)";

void check_same_behaviour(const Function& before, const Function& after, uint32_t var_range) {
  std::mt19937 rng(7);
  for (uint32_t mask : test_masks(rng))
    for (int k = 0; k < 8; ++k) {
      State s = random_state(before, rng, mask, var_range);
      Outcome a = run(before, s), b = run(after, s);
      CHECK_MESSAGE(describe(a, b, before) == "", print(after));
    }
}

}  // namespace

TEST_CASE("merge_straight_blocks: chains collapse, joins and their phis stay") {
  Function f = parse_ok(kChain);
  const Function before = f;
  REQUIRE(merge_straight_blocks(f));
  REQUIRE(verify(f) == "");
  // b0+b1+b2, b3, b4, b5+b6.
  CHECK(f.blocks.size() == 4);
  CHECK(count_op(f, Opcode::Phi) == 1);  // b2's one-operand phi went, the join's stayed
  CHECK(count_op(f, Opcode::Br) == 2);   // the diamond's arms
  CHECK(f.blocks[0].name == "entry");
  check_same_behaviour(before, f, 16);
  // Nothing left to merge.
  CHECK_FALSE(merge_straight_blocks(f));
}

TEST_CASE("merge_straight_blocks: a loop header is never absorbed, a two-block latch is") {
  Function f = parse_ok(kLoop);
  const Function before = f;
  REQUIRE(merge_straight_blocks(f));
  REQUIRE(verify(f) == "");
  CHECK(f.blocks.size() == 4);  // entry, head, body+latch, exit
  CHECK(count_op(f, Opcode::Phi) == 2);
  check_same_behaviour(before, f, 3);
}

TEST_CASE("merge_straight_blocks: the pipeline leaves a straight-line translation one block") {
  // get_var/set_var form with a separate entry block, as the PICA200 translator emits.
  Prog p;
  BlockId e = p.block("entry"), g = p.block("first");
  p.b.set_block(e);
  p.b.br(g);
  p.b.set_block(g);
  p.set(1, p.add(p.get(0), p.c32(1)));
  p.b.ret();
  Function f = p.f;
  REQUIRE(pipeline(f) == "");
  CHECK(f.blocks.size() == 1);
}

TEST_CASE("construct_ssa: unlaunched_lanes_free stores values without entry_mask selects") {
  Function keep = prog_loop();
  Function free_lanes = prog_loop();
  free_lanes.unlaunched_lanes_free = true;
  // The flag survives the text form.
  {
    Function parsed;
    std::string err;
    REQUIRE_MESSAGE(parse(print(free_lanes), parsed, err), err);
    CHECK(parsed.unlaunched_lanes_free);
    CHECK(print(parsed) == print(free_lanes));
    Function plain;
    REQUIRE(parse(print(keep), plain, err));
    CHECK_FALSE(plain.unlaunched_lanes_free);
  }
  const Function src = free_lanes;
  construct_ssa(keep);
  construct_ssa(free_lanes);
  REQUIRE(verify(free_lanes) == "");
  CHECK(count_op(keep, Opcode::EntryMask) >= 1);
  CHECK(count_op(free_lanes, Opcode::EntryMask) == 0);
  CHECK(count_op(free_lanes, Opcode::Select) == 0);
  CHECK(count_op(free_lanes, Opcode::StoreVar) == count_op(keep, Opcode::StoreVar));
  // Launched lanes end as before; the others may hold anything.
  std::mt19937 rng(3);
  for (uint32_t mask : test_masks(rng)) {
    State s = random_state(src, rng, mask, 8);
    Outcome a = run(src, s), b = run(free_lanes, s);
    REQUIRE(a.status == b.status);
    for (uint32_t v = 0; v < src.vars.size(); ++v) {
      const unsigned lb = lane_bytes(src.vars[v].type);
      for (int l = 0; l < kWarpLanes; ++l) {
        if (!(mask >> l & 1)) continue;
        const size_t off = src.var_offset(v) + size_t(l) * lb;
        CHECK(std::memcmp(&a.vars[off], &b.vars[off], lb) == 0);
      }
    }
  }
}

}  // namespace gpurc_test_passes_merge_blocks_test
