// The whole pipeline against the IR interpreter: for each program, the
// interpreter's end state (vars of all 32 lanes, memory, status) before and
// after run_pipeline must be identical for many entry masks and inputs.
#include <doctest/doctest.h>

#include "harness.h"
#include "programs.h"

namespace gpurc_test_passes_lowering_test {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace passtest;

namespace {

bool has_var_named(const Function& f, const std::string& prefix) {
  for (auto& v : f.vars)
    if (v.name.rfind(prefix, 0) == 0) return true;
  return false;
}

// Checks the structural guarantees of the pipeline, then equivalence.
void check_equivalent(const Function& f, uint32_t var_range, int states, PassOptions opt = {}) {
  REQUIRE(verify(f) == "");
  Function g = f;
  std::string err = pipeline(g, opt);
  REQUIRE_MESSAGE(err.empty(), err);
  CHECK(verify(g) == "");
  if (opt.divergence) CHECK(is_lowered(g));
  if (opt.ssa) {
    CHECK(count_op(g, Opcode::GetVar) == 0);
    CHECK(count_op(g, Opcode::SetVar) == 0);
    CHECK(g.vars.size() == f.vars.size());
  }
  std::mt19937 rng(1234);
  int n_states = light() ? std::max(1, states / 4) : states;
  int runs = 0, finished = 0;
  for (uint32_t mask : test_masks(rng)) {
    for (int s = 0; s < n_states; ++s) {
      State st = random_state(f, rng, mask, var_range);
      Outcome a = run(f, st), b = run(g, st);
      std::string diff = describe(a, b, f);
      if (!diff.empty()) {
        FAIL_CHECK("mask " << std::hex << mask << std::dec << " state " << s << ": " << diff << "\n"
                           << print(f) << "\n--- after pipeline ---\n" << print(g));
        return;
      }
      if (mask == 0) continue;  // finishes with no effect
      ++runs;
      finished += a.status == RunStatus::Done;
    }
  }
  // Both sides faulting alike (an address out of range, a watchdog stop)
  // compares little of what the pipeline did: none of these programs is
  // meant to fault, so nearly every run must finish.
  REQUIRE(runs > 0);
  CHECK_MESSAGE(finished * 10 >= runs * 9, finished << " of " << runs << " runs finished; the rest faulted on both sides");
}

}  // namespace

TEST_CASE("if/else with a value used across blocks") { check_equivalent(prog_if_else(), 20, 8); }
TEST_CASE("nested if") { check_equivalent(prog_nested_if(), 16, 8); }
TEST_CASE("loop whose lanes leave at different iterations") { check_equivalent(prog_loop(), 9, 8); }
TEST_CASE("break, continue and early return in a loop") {
  check_equivalent(prog_break_continue_return(), 16, 8);
}
TEST_CASE("irreducible control flow") { check_equivalent(prog_irreducible(), 16, 8); }
TEST_CASE("switch with fall-through") { check_equivalent(prog_switch(), 16, 8); }
TEST_CASE("barriers in uniform control flow") { check_equivalent(prog_barrier(), 16, 8); }
TEST_CASE("cross-lane ops in a divergent branch") { check_equivalent(prog_cross_lane(), 16, 8); }
TEST_CASE("phis in the input") { check_equivalent(prog_phis(), 12, 8); }

TEST_CASE("each pipeline step can be switched off") {
  PassOptions no_opt;
  no_opt.const_fold = no_opt.cse = no_opt.dce = no_opt.loop_budget = false;
  check_equivalent(prog_break_continue_return(), 16, 4, no_opt);
  PassOptions no_uniformity;  // every branch then counts as divergent: still correct
  no_uniformity.uniformity = false;
  check_equivalent(prog_barrier(), 16, 4, no_uniformity);
  PassOptions no_lowering;
  no_lowering.divergence = false;
  check_equivalent(prog_nested_if(), 16, 4, no_lowering);
}

TEST_CASE("scheme choice: uniform CFG kept, reducible -> edge masks, irreducible -> lane PC") {
  {
    Function f = prog_barrier();  // only uniform branches
    size_t blocks = f.blocks.size();
    demote_cross_block_values(f);
    analyze_uniformity(f);
    lower_divergence(f);
    CHECK(verify(f) == "");
    CHECK(f.blocks.size() == blocks);
    CHECK(!has_var_named(f, "mask_b"));
    CHECK(!has_var_named(f, "lane_pc"));
  }
  {
    Function f = prog_break_continue_return();
    demote_cross_block_values(f);
    analyze_uniformity(f);
    lower_divergence(f);
    CHECK(verify(f) == "");
    CHECK(has_var_named(f, "mask_b"));
    CHECK(!has_var_named(f, "lane_pc"));
    CHECK(is_lowered(f));
  }
  {
    Function f = prog_irreducible();
    demote_cross_block_values(f);
    analyze_uniformity(f);
    lower_divergence(f);
    CHECK(verify(f) == "");
    CHECK(has_var_named(f, "lane_pc"));
    CHECK(is_lowered(f));
  }
}

TEST_CASE("random reducible CFGs (edge masks)") {
  std::mt19937 rng(99);
  int programs = light() ? 10 : 150;
  for (int i = 0; i < programs; ++i) {
    Function f = prog_random(rng, 3 + int(rng() % 6), true);
    CAPTURE(i);
    check_equivalent(f, 32, 2);
  }
}

TEST_CASE("random CFGs, mostly irreducible (lane PC)") {
  std::mt19937 rng(7);
  int programs = light() ? 10 : 150;
  for (int i = 0; i < programs; ++i) {
    Function f = prog_random(rng, 3 + int(rng() % 6), false);
    CAPTURE(i);
    check_equivalent(f, 32, 2);
  }
}

TEST_CASE("a guest loop that never ends faults with Watchdog") {
  Prog p;
  BlockId b0 = p.block("entry"), h = p.block("spin");
  p.b.set_block(b0);
  p.b.br(h);
  p.b.set_block(h);
  p.set(1, p.add(p.get(1), p.c32(1)));
  p.b.cond_br(p.b.icmp(IntPred::Ult, p.get(0), p.c32(100)), h, h);
  Function g = p.f;
  REQUIRE(pipeline(g) == "");
  REQUIRE(count_op(g, Opcode::Budget) >= 1);
  for (auto& in : g.insts)
    if (in.block != kNoBlock && in.op == Opcode::Budget) CHECK(in.imm >= 1);
  std::mt19937 rng(5);
  State st = random_state(g, rng, ~0u, 200);
  Outcome o = run(g, st, 100000);
  CHECK(o.status == RunStatus::Fault);
  CHECK(o.fault == FaultKind::Watchdog);
}

TEST_CASE("entry mask 0 runs no effect") {
  Function f = prog_break_continue_return();
  Function g = f;
  REQUIRE(pipeline(g) == "");
  std::mt19937 rng(3);
  State st = random_state(f, rng, 0, 16);
  Outcome o = run(g, st);
  CHECK(o.status == RunStatus::Done);
  CHECK(o.vars == st.vars);
  CHECK(o.memory == st.memory);
}

}  // namespace gpurc_test_passes_lowering_test
