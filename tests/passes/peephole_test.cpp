// simplify_float_bits (pass_float_bits.cpp) and fold_uniform_votes
// (pass_uniform_votes.cpp): each rewrite happens where it is exact, not where
// it is not, and the IR interpreter gives the same results before and after.
#include <doctest/doctest.h>

#include "harness.h"

namespace gpurc_test_passes_peephole_test {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace passtest;

namespace {

Function parse_ok(const char* text) {
  Function f;
  std::string err;
  REQUIRE_MESSAGE(parse(text, f, err), err);
  REQUIRE(verify(f) == "");
  return f;
}

// Tesla's `add f32 neg a, 2.0` over untyped registers: the sign flip is an
// i32 xor between bitcasts; then a round trip of bitcasts, and an i1 chain
// of xor-with-true / not / icmp (a counted loop's exit test).
const char* kSignFlip = R"(func "sign_flip" {
  var "a" i32
  var "b" i32
  var "out" i32
  var "p" i32
  var "q" i32
  var "c" i32
b0 "entry":
  %0 = load_var i32 #0x0
  %1 = load_var i32 #0x1
  %2 = bitcast f32 %0
  %3 = bitcast f32 %1
  %4 = fmul f32 %2, %3 [ftz_in, ftz_out, nan=allones]
  %5 = bitcast i32 %4
  %6 = const i32 #0x80000000
  %7 = xor i32 %5, %6
  %8 = bitcast f32 %7
  %9 = const f32 #0x40000000
  %10 = fadd f32 %8, %9 [ftz_in, ftz_out, nan=allones]
  %11 = bitcast i32 %10
  %12 = bitcast f32 %11
  %13 = fmul f32 %12, %2 [ftz_in, ftz_out, nan=allones]
  %14 = bitcast i32 %13
  store_var %14, #0x2
  %15 = xor i32 %6, %1
  %16 = bitcast f32 %15
  %17 = fadd f32 %2, %16 [nan=propagate]
  %18 = bitcast i32 %17
  store_var %18, #0x3
  %19 = fadd f32 %2, %16 [ftz_in]
  %20 = bitcast i32 %19
  store_var %20, #0x4
  %21 = const i32 #0x0
  %22 = icmp.ult i1 %0, %1
  %23 = not i1 %22
  %24 = const i1 #0x1
  %25 = xor i1 %23, %24
  %26 = not i1 %25
  %27 = zext i32 %26
  store_var %27, #0x5
  return
}
)";

// A uniform counted loop whose exit test is a whole-warp `any` of a uniform
// predicate over the entry mask (G13's jmp_exec_any over a uniform exec),
// plus a vote over a per-lane predicate that must stay.
const char* kVoteLoop = R"(func "vote_loop" {
  uniform_bytes 16
  var "x" i32
  var "n" i32
  var "v" i32
b0 "entry":
  %0 = load_var i32 #0x0
  %1 = const i32 #0x0
  %2 = load_uniform i32 #0x0
  br b1
b1 "loop":
  %3 = phi i32 [%1, b0], [%6, b1]
  %4 = phi i32 [%0, b0], [%7, b1]
  %5 = const i32 #0x1
  %6 = iadd i32 %3, %5
  %7 = imul i32 %4, %2
  %8 = entry_mask i1
  %9 = icmp.ult i1 %6, %2
  %10 = any i1 %9, %8
  cond_br %10, b1, b2
b2 "done":
  store_var %7, #0x0
  store_var %6, #0x1
  %11 = icmp.ugt i1 %7, %2
  %12 = any i1 %11, %8
  %13 = zext i32 %12
  store_var %13, #0x2
  return
}
)";

void same_results(const Function& before, const Function& after, uint32_t var_range, bool skip_empty) {
  std::mt19937 rng(13);
  for (uint32_t mask : test_masks(rng)) {
    if (skip_empty && mask == 0) continue;
    for (int k = 0; k < 16; ++k) {
      State s = random_state(before, rng, mask, var_range);
      if (!s.uniforms.empty()) s.uniforms[0] = uint8_t(3 + k), s.uniforms[1] = s.uniforms[2] = s.uniforms[3] = 0;
      Outcome a = run(before, s), b = run(after, s);
      CHECK_MESSAGE(a.vars == b.vars, describe(a, b, after));
      CHECK(a.status == b.status);
    }
  }
}

}  // namespace

TEST_CASE("simplify_float_bits: sign-bit xor + fadd is fsub, bitcast pairs go, i1 negations fold") {
  Function f = parse_ok(kSignFlip);
  const Function before = f;
  CHECK(simplify_float_bits(f));
  REQUIRE(verify(f) == "");
  dce(f);
  REQUIRE(verify(f) == "");
  // The Newton step: no xor on an f32 value left, one fsub, and the
  // bitcast f32 (bitcast i32 fadd) pair is gone.
  int fsub = 0, fadd = 0, fneg = 0, xor_i32 = 0, not_i1 = 0, icmp = 0;
  for (const Block& b : f.blocks)
    for (ValueId v : b.insts) {
      const Inst& in = f.insts[v];
      fsub += in.op == Opcode::FSub;
      fadd += in.op == Opcode::FAdd;
      fneg += in.op == Opcode::FNeg;
      xor_i32 += in.op == Opcode::Xor && in.type == Type::I32;
      not_i1 += in.op == Opcode::Not;
      icmp += in.op == Opcode::ICmp;
    }
  // %10 -> fsub 2.0, a*b; %19 (ftz_in, canonical NaN) -> fsub; %17 (Propagate) keeps fadd of an fneg.
  CHECK(fsub == 2);
  CHECK(fadd == 1);
  CHECK(fneg == 1);
  CHECK(xor_i32 == 0);
  // xor(not(icmp.ult), true), then not: icmp.uge.
  CHECK(not_i1 == 0);
  CHECK(icmp == 1);
  CHECK(count_op(f, Opcode::Bitcast) < count_op(before, Opcode::Bitcast));
  // Full 32-bit random operands: NaNs, infinities, subnormals and zeros of both signs.
  same_results(before, f, 0, false);
  // Small values too (zeros, subnormals), where signed-zero rules matter.
  same_results(before, f, 4, false);
}

TEST_CASE("fold_uniform_votes: any of a uniform predicate over the entry mask is the predicate") {
  Function f = parse_ok(kVoteLoop);
  const Function before = f;
  CHECK(fold_uniform_votes(f));
  REQUIRE(verify(f) == "");
  // The loop's vote goes; the vote over the per-lane %11 stays.
  CHECK(count_op(f, Opcode::Any) == 1);
  for (ValueId v : f.blocks[1].insts) CHECK(f.insts[v].op != Opcode::Any);
  // A second run finds nothing more.
  CHECK(!fold_uniform_votes(f));
  // A launch runs a warp only with launched lanes (the pass's premise).
  same_results(before, f, 0, true);
  // Through the whole pipeline the loop is a uniform loop of strip ops.
  Function g = parse_ok(kVoteLoop);
  REQUIRE(pipeline(g) == "");
  for (const Block& b : g.blocks)
    if (b.name == "loop")
      for (ValueId v : b.insts) CHECK(g.insts[v].op != Opcode::Any);
}

}  // namespace gpurc_test_passes_peephole_test
