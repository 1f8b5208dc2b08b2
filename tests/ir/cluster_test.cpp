// Cluster widths of the cross-lane ops (docs/ir.md "Clusters"): text
// form, verifier, interpreter results against hand-computed values, and
// what the uniformity analysis and CSE make of them.
#include <doctest/doctest.h>

#include <string>

#include "cluster_program.h"
#include "ir/ir.h"
#include "ir/passes.h"
#include "ir_test_util.h"

namespace gpurc_test_ir_cluster_test {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc::ir;
using irtest::Warp;

namespace {

Function parsed(const std::string& text) {
  Function f;
  std::string err;
  INFO(text);
  REQUIRE_MESSAGE(parse(text, f, err), err);
  return f;
}

// One op `line` (defining %2 from %0 = i1 pred, %1 = i32 value) in a function
// that stores %2 to var 0 of type `out`.
std::string one_op(const std::string& line, const std::string& out) {
  return "func \"t\" {\n  var \"out\" " + out +
         "\nb0:\n  %0 = entry_mask i1\n  %1 = lane_id i32\n  " + line + "\n  store_var %2, #0x0\n  return\n}\n";
}

}  // namespace

TEST_CASE("cluster: the width is the immediate, printed only when narrower than the warp") {
  Function f = parsed(irtest::cluster::kProgram);
  CHECK(verify(f) == "");
  std::string text = print(f);
  CHECK(text.find("ballot i32 %2, %0, #0x8\n") != std::string::npos);
  CHECK(text.find("reduce.umax i32 %1, %12, #0x2\n") != std::string::npos);
  Function g = parsed(text);
  CHECK(print(g) == text);
  // Older text without an immediate means the whole warp: imm 0.
  Function h = parsed(one_op("%2 = ballot i32 %0, %0", "i32"));
  CHECK(h[2].imm == 0);
  CHECK(cluster_width(h[2].imm) == 32);
  CHECK(print(h).find("ballot i32 %0, %0\n") != std::string::npos);
  CHECK(cluster_imm(32) == 0);
  CHECK(cluster_imm(4) == 4);
}

TEST_CASE("cluster: the verifier takes widths 1, 2, 4, 8, 16, 32 (and 0 for 32) on clustered ops only") {
  const char* ops[] = {"%2 = ballot i32 %0, %0", "%2 = any i1 %0, %0",          "%2 = all i1 %0, %0",
                       "%2 = shuffle i32 %1, %1", "%2 = broadcast i32 %1, %1", "%2 = reduce.add i32 %1, %0",
                       "%2 = scan_incl.umin i32 %1, %0", "%2 = scan_excl.xor i32 %1, %0"};
  for (const char* op : ops) {
    std::string out = std::string(op).find(" i1 ") != std::string::npos ? "i1" : "i32";
    for (unsigned w : {0u, 1u, 2u, 4u, 8u, 16u, 32u}) {
      Function f = parsed(one_op(std::string(op) + ", #" + std::to_string(w), out));
      CHECK_MESSAGE(verify(f) == "", op << " width " << w);
    }
    for (unsigned w : {3u, 6u, 12u, 33u, 64u, 256u}) {
      Function f = parsed(one_op(std::string(op) + ", #" + std::to_string(w), out));
      CHECK_MESSAGE(verify(f).find("cluster width " + std::to_string(w) + " is not") != std::string::npos,
                    op << " width " << w);
    }
  }
  CHECK(op_info(Opcode::Ballot).clustered);
  CHECK(op_info(Opcode::ScanExcl).clustered);
  CHECK(!op_info(Opcode::QuadShuffle).clustered);  // a fixed 4-lane group of its own
  CHECK(!op_info(Opcode::IAdd).clustered);
}

TEST_CASE("cluster: interpreter results under a partial launch and mask (hand-computed)") {
  using namespace irtest::cluster;
  Function f = parsed(kProgram);
  REQUIRE(verify(f) == "");
  Warp w(f, kEntryMask);
  for (int l = 0; l < 32; ++l) w.set_var(0, l, kMaskLanes >> l & 1);
  REQUIRE(w.run() == RunStatus::Done);
  for (const Expect& e : kExpect)
    CHECK_MESSAGE(w.var(e.var, int(e.lane)) == e.value, f.vars[e.var].name << " lane " << e.lane);
}

TEST_CASE("cluster: interpreter, whole-warp width 32 written as #32 equals the default") {
  // The same ops at width 0 and 32 give the same results (lanes 3, 9 not launched).
  Function f = parsed(R"(func "t" {
  var "a" i32
  var "b" i32
  var "c" i32
  var "d" i32
b0:
  %0 = lane_id i32
  %1 = trunc i1 %0
  %2 = const i1 #0x1
  %3 = ballot i32 %1, %2
  store_var %3, #0x0
  %4 = ballot i32 %1, %2, #0x20
  store_var %4, #0x1
  %5 = scan_incl.add i32 %0, %2
  store_var %5, #0x2
  %6 = scan_incl.add i32 %0, %2, #0x20
  store_var %6, #0x3
  return
}
)");
  REQUIRE(verify(f) == "");
  Warp w(f, ~((1u << 3) | (1u << 9)));
  REQUIRE(w.run() == RunStatus::Done);
  CHECK(w.var(0, 0) == 0xAAAAA8A2u);  // odd launched lanes: all but 3 and 9
  CHECK(w.var(1, 0) == 0xAAAAA8A2u);
  CHECK(w.var(2, 10) == 0 + 1 + 2 + 4 + 5 + 6 + 7 + 8 + 10);
  CHECK(w.var(3, 10) == 43);
}

TEST_CASE("cluster: an unverified bad width faults Unsupported in the interpreter") {
  Function f = parsed(one_op("%2 = reduce.add i32 %1, %0, #0x3", "i32"));
  REQUIRE(verify(f) != "");
  Warp w(f);
  CHECK(w.run() == RunStatus::Fault);
  CHECK(w.ctx.fault == FaultKind::Unsupported);
}

TEST_CASE("cluster: only whole-warp votes, reduces and broadcasts are uniform; CSE keeps widths apart") {
  Function f = parsed(R"(func "t" {
  var "out" i32
  uniform_bytes 4
b0:
  %0 = entry_mask i1
  %1 = load_uniform i32 #0x0
  %2 = const i1 #0x1
  %3 = ballot i32 %2, %0
  %4 = ballot i32 %2, %0, #0x20
  %5 = ballot i32 %2, %0, #0x8
  %6 = ballot i32 %2, %0, #0x8
  %7 = any i1 %2, %0, #0x4
  %8 = all i1 %2, %0
  %9 = reduce.add i32 %1, %2, #0x10
  %10 = reduce.add i32 %1, %2
  %11 = lane_id i32
  %12 = broadcast i32 %11, %1, #0x2
  %13 = broadcast i32 %11, %1
  %14 = iadd i32 %5, %6
  %15 = iadd i32 %3, %4
  %16 = iadd i32 %14, %15
  %17 = iadd i32 %16, %9
  %18 = iadd i32 %17, %10
  %19 = iadd i32 %18, %12
  %20 = iadd i32 %19, %13
  %21 = select i32 %7, %20, %1
  %22 = select i32 %8, %21, %1
  store_var %22, #0x0
  return
}
)");
  REQUIRE(verify(f) == "");
  auto uni = compute_uniformity(f);
  CHECK(uni[3]);    // whole warp
  CHECK(uni[4]);    // whole warp, written #32
  CHECK(!uni[5]);   // each 8-lane cluster has its own launched lanes
  CHECK(!uni[7]);
  CHECK(uni[8]);
  CHECK(!uni[9]);   // each 16-lane cluster sums its own launched lanes
  CHECK(uni[10]);
  CHECK(!uni[12]);  // each 2-lane cluster reads its own lane
  CHECK(uni[13]);
  CHECK(is_lowered(f));
  cse(f);
  REQUIRE(verify(f) == "");
  CHECK(f[6].block == kNoBlock);  // equal to %5: same width
  CHECK(f[5].block != kNoBlock);
  CHECK(f[4].block != kNoBlock);  // #32 and the default are not textually equal; both stay
  CHECK(f[3].block != kNoBlock);
}

TEST_CASE("cluster: a branch on a narrow-cluster any is divergent, and the lowered function agrees") {
  // Only lane 5 has the predicate: its 4-lane cluster (4..7) takes b1, every
  // other lane b2. Over the whole warp the same branch would be uniform.
  const std::string text = R"(func "t" {
  var "out" i32
b0:
  %0 = lane_id i32
  %1 = const i32 #0x5
  %2 = icmp.eq i1 %0, %1
  %3 = const i1 #0x1
  %4 = any i1 %2, %3, #0x4
  cond_br %4, b1, b2
b1:
  %6 = const i32 #0x1
  set_var %6, #0x0
  br b3
b2:
  %8 = const i32 #0x2
  set_var %8, #0x0
  br b3
b3:
  return
}
)";
  Function f = parsed(text);
  REQUIRE(verify(f) == "");
  CHECK(!compute_uniformity(f)[f.terminator(0)]);
  CHECK(!is_lowered(f));
  Function whole = parsed(std::string(text).replace(text.find(", #0x4"), 6, ""));
  CHECK(compute_uniformity(whole)[whole.terminator(0)]);
  Function g = f;
  PassOptions opt;
  opt.verify_each = true;
  REQUIRE(run_pipeline(g, opt) == "");
  CHECK(is_lowered(g));
  const uint32_t launched = ~(1u << 6);  // lane 6 not launched
  for (const Function* fn : {&f, &g}) {
    Warp w(*fn, launched);
    REQUIRE(w.run() == RunStatus::Done);
    for (int l = 0; l < 32; ++l)
      if (launched >> l & 1) CHECK_MESSAGE(w.var(0, l) == (l >= 4 && l < 8 ? 1u : 2u), "lane " << l);
  }
}

}  // namespace gpurc_test_ir_cluster_test
