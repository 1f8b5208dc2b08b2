// Structural checks of single passes.
#include <doctest/doctest.h>

#include "harness.h"
#include "ir/scalar.h"
#include "programs.h"

namespace gpurc_test_passes_single_pass_test {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace passtest;

namespace {

ValueId store_var_arg(const Function& f, uint32_t var) {
  for (auto& b : f.blocks)
    for (ValueId v : b.insts)
      if (f.insts[v].op == Opcode::StoreVar && f.insts[v].imm == var) return f.insts[v].args[0];
  return kNoValue;
}

// entry: x = load_var r0; ...build...; store_var r1, result; return
template <class Body>
Function ssa_function(Body body) {
  Function f;
  f.add_var("r0", Type::I32);
  f.add_var("r1", Type::I32);
  f.add_var("r2", Type::F32);
  Builder b(f);
  b.set_block(f.add_block("entry"));
  ValueId x = b.emit(Opcode::LoadVar, Type::I32, {}, 0, 0, 0);
  ValueId y = b.emit(Opcode::LoadVar, Type::F32, {}, 0, 0, 2);
  body(b, x, y);
  b.ret();
  return f;
}

}  // namespace

TEST_CASE("demote: no value is used outside its block and no phi remains") {
  for (Function f : {prog_if_else(), prog_phis()}) {
    demote_cross_block_values(f);
    CHECK(verify(f) == "");
    CHECK(count_op(f, Opcode::Phi) == 0);
    for (BlockId bl = 0; bl < f.blocks.size(); ++bl)
      for (ValueId v : f.blocks[bl].insts)
        for (ValueId a : f.insts[v].args) CHECK(f.insts[a].block == bl);
  }
}

TEST_CASE("lower_divergence_demoted: on demoted input, the same function lower_divergence makes") {
  // run_pipeline demotes first and calls lower_divergence_demoted, which
  // skips the second walk; every lowering scheme (uniform, regions, edge
  // masks, per-lane PC) must come out instruction for instruction the same.
  std::mt19937 rng(13);
  std::vector<Function> progs = {prog_if_else(), prog_nested_if(), prog_loop(), prog_break_continue_return(),
                                 prog_irreducible(), prog_switch(), prog_barrier(), prog_phis()};
  for (int i = 0; i < 12; ++i) progs.push_back(prog_random(rng, 3 + i % 6, i % 3 != 0));
  for (Function& f : progs) {
    demote_cross_block_values(f);
    analyze_uniformity(f);
    Function a = f, b = f;
    lower_divergence(a);
    lower_divergence_demoted(b);
    CHECK(verify(b) == "");
    CHECK(print(a) == print(b));
  }
}

TEST_CASE("uniformity: sources and propagation") {
  Prog p;
  BlockId b0 = p.block("entry"), t = p.block("t"), e = p.block("e");
  p.f.uniform_bytes = 8;
  p.b.set_block(b0);
  ValueId u = p.b.load_uniform(Type::I32, 0);
  ValueId uu = p.add(u, p.c32(3));
  ValueId lane = p.b.emit(Opcode::LaneId, Type::I32, {});
  ValueId vary = p.add(u, lane);
  ValueId any = p.b.emit(Opcode::Any, Type::I1, {p.b.icmp(IntPred::Eq, vary, p.c32(0)), p.b.i1(true)});
  ValueId g = p.get(0);
  ValueId cu = p.b.load(Type::I32, Space::Const, AddrClass::Uniform, uu, p.b.i1(true));
  ValueId cr = p.b.load(Type::I32, Space::Const, AddrClass::Random, uu, p.b.i1(true));
  p.set(1, p.add(g, cu));
  p.set(2, cr);
  p.b.cond_br(any, t, e);
  p.b.set_block(t);
  p.b.ret();
  p.b.set_block(e);
  p.b.ret();
  analyze_uniformity(p.f);
  CHECK(p.f[u].uniform);
  CHECK(p.f[uu].uniform);
  CHECK(!p.f[lane].uniform);
  CHECK(!p.f[vary].uniform);
  CHECK(p.f[any].uniform);
  CHECK(!p.f[g].uniform);
  CHECK(p.f[cu].uniform);
  CHECK(!p.f[cr].uniform);
  CHECK(p.f[p.f.terminator(b0)].uniform);
  CHECK(is_lowered(p.f));
}

TEST_CASE("uniformity: a loop counter phi stays uniform, a phi after a divergent branch does not") {
  Function f = prog_phis();  // i, acc: phis; the branch compares i with r0 (varying)
  analyze_uniformity(f);
  ValueId i = f.blocks[1].insts[0];
  REQUIRE(f[i].op == Opcode::Phi);
  CHECK(!f[i].uniform);  // the loop exit is divergent
  CHECK(!is_lowered(f));
  // Same loop bounded by a uniform value: everything uniform.
  Function g = prog_phis();
  g.uniform_bytes = 4;
  ValueId n = g.blocks[0].insts[0];
  REQUIRE(g[n].op == Opcode::GetVar);
  g[n].op = Opcode::LoadUniform;
  g[n].imm = 0;
  analyze_uniformity(g);
  CHECK(g[g.blocks[1].insts[0]].uniform);
  CHECK(is_lowered(g));
}

TEST_CASE("ssa: no var access remains, entry reads are load_var, exits store written vars") {
  Function f = prog_loop();
  construct_ssa(f);
  CHECK(verify(f) == "");
  CHECK(count_op(f, Opcode::GetVar) == 0);
  CHECK(count_op(f, Opcode::SetVar) == 0);
  CHECK(count_op(f, Opcode::LoadVar) >= 1);                    // r0 is read before any write
  CHECK(count_op(f, Opcode::StoreVar) == 2);                   // r1, r2 written; one return
  CHECK(count_op(f, Opcode::Phi) == 2);                        // r1 and r2 in the loop header
  CHECK(store_var_arg(f, 0) == kNoValue);                      // r0 never written
}

TEST_CASE("ssa: trivial phis are removed") {
  // r0 is written once before a loop and only read inside: no phi for it.
  Prog p;
  BlockId b0 = p.block("entry"), h = p.block("head"), ex = p.block("exit");
  p.b.set_block(b0);
  p.set(0, p.c32(5));
  p.set(1, p.c32(0));
  p.b.br(h);
  p.b.set_block(h);
  p.set(1, p.add(p.get(1), p.get(0)));
  p.b.cond_br(p.b.icmp(IntPred::Ult, p.get(1), p.c32(100)), h, ex);
  p.b.set_block(ex);
  p.b.ret();
  construct_ssa(p.f);
  CHECK(verify(p.f) == "");
  CHECK(count_op(p.f, Opcode::Phi) == 1);  // r1 only
}

TEST_CASE("ssa: stores before a barrier terminator") {
  Function f = prog_barrier();
  construct_ssa(f);
  CHECK(verify(f) == "");
  for (BlockId b = 0; b < f.blocks.size(); ++b) {
    ValueId t = f.terminator(b);
    if (t == kNoValue || f[t].op != Opcode::Barrier) continue;
    auto& ins = f.blocks[b].insts;
    REQUIRE(ins.size() >= 2);
    CHECK(f[ins[ins.size() - 2]].op == Opcode::StoreVar);
  }
}

TEST_CASE("const_fold: pure ops use eval_lane, identities are exact") {
  ValueId add = 0, fsum = 0, ident = 0, fzero = 0, mul0 = 0, sel = 0;
  Function f = ssa_function([&](Builder& b, ValueId x, ValueId y) {
    add = b.binary(Opcode::IAdd, b.i32(3), b.i32(0xfffffffe));
    fsum = b.binary(Opcode::FAdd, b.f32_bits(0x3f800000), b.f32_bits(0x40000000));  // 1 + 2
    ident = b.binary(Opcode::Xor, b.binary(Opcode::IMul, b.binary(Opcode::IAdd, x, b.i32(0)), b.i32(1)), b.i32(0));
    fzero = b.binary(Opcode::FAdd, y, b.f32_bits(0));  // -0 + 0 = +0: must stay
    mul0 = b.binary(Opcode::And, x, b.i32(0));
    sel = b.select(b.i1(false), x, add);
    b.emit(Opcode::StoreVar, Type::Void, {b.binary(Opcode::IAdd, add, mul0)}, 0, 0, 1);
    b.emit(Opcode::StoreVar, Type::Void, {b.binary(Opcode::FAdd, fsum, fzero)}, 0, 0, 2);
    b.emit(Opcode::StoreVar, Type::Void, {b.binary(Opcode::IAdd, ident, sel)}, 0, 0, 0);
  });
  REQUIRE(verify(f) == "");
  const_fold(f);
  dce(f);
  CHECK(verify(f) == "");
  // 3 + (-2) = 1, and x & 0 = 0 folded into it.
  ValueId r1 = store_var_arg(f, 1);
  REQUIRE(f[r1].op == Opcode::Const);
  CHECK(f[r1].imm == 1);
  CHECK(f[fsum].op == Opcode::Const);
  CHECK(f[fsum].imm == 0x40400000);  // 3.0f
  CHECK(f[fzero].op == Opcode::FAdd);
  // ((x + 0) * 1) ^ 0 + select(false, x, 1) = x + 1
  ValueId r0 = store_var_arg(f, 0);
  REQUIRE(f[r0].op == Opcode::IAdd);
  CHECK(f[f[r0].args[0]].op == Opcode::LoadVar);
  CHECK(f[f[r0].args[1]].op == Opcode::Const);
}

TEST_CASE("const_fold: and/or idempotence and absorption, not for other ops") {
  ValueId same = 0, inner = 0, right = 0, left = 0, orin = 0, orabs = 0, mixed = 0, xx = 0;
  Function f = ssa_function([&](Builder& b, ValueId x, ValueId) {
    ValueId k = b.binary(Opcode::IAdd, x, b.i32(7));                  // not a constant
    same = b.binary(Opcode::And, x, x);                               // -> x
    inner = b.binary(Opcode::And, x, k);
    right = b.binary(Opcode::And, inner, k);                          // -> inner
    left = b.binary(Opcode::And, x, inner);                           // -> inner
    orin = b.binary(Opcode::Or, k, x);
    orabs = b.binary(Opcode::Or, x, orin);                            // -> orin
    mixed = b.binary(Opcode::And, b.binary(Opcode::Or, x, k), k);     // or inside and: stays
    xx = b.binary(Opcode::Xor, x, x);                                 // not idempotent: stays
    ValueId s = b.binary(Opcode::IAdd, b.binary(Opcode::IAdd, same, right), b.binary(Opcode::IAdd, left, orabs));
    b.emit(Opcode::StoreVar, Type::Void, {b.binary(Opcode::IAdd, s, b.binary(Opcode::IAdd, mixed, xx))}, 0, 0, 1);
  });
  REQUIRE(verify(f) == "");
  const_fold(f);
  dce(f);
  CHECK(verify(f) == "");
  ValueId r1 = store_var_arg(f, 1);
  REQUIRE(f[r1].op == Opcode::IAdd);
  ValueId s = f[r1].args[0], rest = f[r1].args[1];
  ValueId sa = f[s].args[0], sb = f[s].args[1];
  CHECK(f[f[sa].args[0]].op == Opcode::LoadVar);  // x & x = x
  CHECK(f[sa].args[1] == inner);                  // (x & k) & k
  CHECK(f[sb].args[0] == inner);                  // x & (x & k)
  CHECK(f[sb].args[1] == orin);                   // x | (k | x)
  CHECK(f[rest].args[0] == mixed);
  CHECK(f[mixed].op == Opcode::And);
  CHECK(f[rest].args[1] == xx);
  CHECK(f[xx].op == Opcode::Xor);
  for (ValueId v : {same, right, left, orabs}) CHECK(f[v].block == kNoBlock);
}

TEST_CASE("const_fold: a mask that keeps every bit of a zero-extended value is dropped, not a narrower one") {
  ValueId keep = 0, narrow = 0, wide = 0, ext = 0;
  Function f = ssa_function([&](Builder& b, ValueId x, ValueId) {
    ValueId h = b.emit(Opcode::Trunc, Type::I16, {x});
    ext = b.zext(Type::I32, h);
    keep = b.binary(Opcode::And, ext, b.i32(0xffff));     // -> ext
    wide = b.binary(Opcode::And, ext, b.i32(0x1ffff));    // -> ext
    narrow = b.binary(Opcode::And, ext, b.i32(0xfff0));   // clears bits of it: stays
    b.emit(Opcode::StoreVar, Type::Void, {b.binary(Opcode::IAdd, keep, b.binary(Opcode::IAdd, wide, narrow))}, 0,
           0, 1);
  });
  REQUIRE(verify(f) == "");
  const_fold(f);
  dce(f);
  CHECK(verify(f) == "");
  ValueId r1 = store_var_arg(f, 1);
  REQUIRE(f[r1].op == Opcode::IAdd);
  CHECK(f[r1].args[0] == ext);
  const ValueId rest = f[r1].args[1];
  CHECK(f[rest].args[0] == ext);
  CHECK(f[rest].args[1] == narrow);
  CHECK(f[narrow].op == Opcode::And);
  for (ValueId v : {keep, wide}) CHECK(f[v].block == kNoBlock);
}

TEST_CASE("const_fold: branch on a constant becomes br, dce drops the dead block and phi operand") {
  Function f;
  f.add_var("r0", Type::I32);
  Builder b(f);
  BlockId e = f.add_block("entry"), t = f.add_block("t"), x = f.add_block("x"), j = f.add_block("j");
  b.set_block(e);
  ValueId one = b.i32(1), two = b.i32(2);
  b.cond_br(b.icmp(IntPred::Eq, one, two), t, x);
  b.set_block(t);
  b.br(j);
  b.set_block(x);
  b.br(j);
  b.set_block(j);
  ValueId phi = b.emit(Opcode::Phi, Type::I32, {one, two});
  b.emit(Opcode::StoreVar, Type::Void, {phi}, 0, 0, 0);
  b.ret();
  REQUIRE(verify(f) == "");
  const_fold(f);
  CHECK(verify(f) == "");
  dce(f);
  CHECK(verify(f) == "");
  CHECK(f.blocks.size() == 3);
  CHECK(count_op(f, Opcode::CondBr) == 0);
  const_fold(f);  // the phi now has one operand
  ValueId r0 = store_var_arg(f, 0);
  REQUIRE(f[r0].op == Opcode::Const);
  CHECK(f[r0].imm == 2);
}

TEST_CASE("cse merges pure ops, never effects") {
  ValueId a1 = 0, a2 = 0, l1 = 0, l2 = 0;
  Function f = ssa_function([&](Builder& b, ValueId x, ValueId) {
    a1 = b.binary(Opcode::IAdd, x, b.i32(7));
    a2 = b.binary(Opcode::IAdd, x, b.i32(7));
    ValueId m = b.i1(true);
    l1 = b.load(Type::I32, Space::Global, AddrClass::Random, x, m);
    l2 = b.load(Type::I32, Space::Global, AddrClass::Random, x, m);
    b.emit(Opcode::StoreVar, Type::Void, {b.binary(Opcode::IAdd, a1, a2)}, 0, 0, 0);
    b.emit(Opcode::StoreVar, Type::Void, {b.binary(Opcode::IAdd, l1, l2)}, 0, 0, 1);
  });
  cse(f);
  CHECK(verify(f) == "");
  ValueId s0 = store_var_arg(f, 0), s1 = store_var_arg(f, 1);
  CHECK(f[s0].args[0] == f[s0].args[1]);
  CHECK(f[s1].args[0] != f[s1].args[1]);
  CHECK(f[a2].block == kNoBlock);
}

TEST_CASE("cse: and/or that become idempotent or absorbing once equal values merge") {
  ValueId m1 = 0, m2 = 0, both = 0, e = 0, again = 0;
  Function f = ssa_function([&](Builder& b, ValueId x, ValueId) {
    m1 = b.icmp(IntPred::Ult, x, b.i32(9));
    m2 = b.icmp(IntPred::Ult, x, b.i32(9));   // equal to m1
    both = b.binary(Opcode::And, m1, m2);     // m1 & m1 once merged
    e = b.binary(Opcode::And, b.icmp(IntPred::Eq, x, b.i32(3)), m1);
    again = b.binary(Opcode::And, e, m2);     // (e' & m1) & m1
    ValueId r = b.select(both, x, b.i32(1));
    b.emit(Opcode::StoreVar, Type::Void, {b.select(again, r, b.i32(2))}, 0, 0, 1);
  });
  cse(f);
  CHECK(verify(f) == "");
  ValueId s = store_var_arg(f, 1);
  REQUIRE(f[s].op == Opcode::Select);
  CHECK(f[s].args[0] == e);
  CHECK(f[f[s].args[1]].args[0] == m1);
  for (ValueId v : {m2, both, again}) CHECK(f[v].block == kNoBlock);
}

TEST_CASE("dce removes unused pure values and keeps effects") {
  ValueId dead = 0, dead2 = 0;
  Function f = ssa_function([&](Builder& b, ValueId x, ValueId) {
    dead = b.binary(Opcode::IMul, x, x);
    dead2 = b.binary(Opcode::IAdd, dead, x);
    b.store(Space::Global, AddrClass::Random, x, x, b.i1(true));
  });
  dce(f);
  CHECK(verify(f) == "");
  CHECK(f[dead].block == kNoBlock);
  CHECK(f[dead2].block == kNoBlock);
  CHECK(count_op(f, Opcode::Store) == 1);
}

TEST_CASE("loop budget: one budget per loop header, imm = body size") {
  Function f = prog_loop();
  insert_loop_budget(f);
  CHECK(verify(f) == "");
  REQUIRE(count_op(f, Opcode::Budget) == 1);
  BlockId head = 1;
  ValueId bud = f.blocks[head].insts[0];
  REQUIRE(f[bud].op == Opcode::Budget);
  // head + body blocks (the budget itself not counted).
  CHECK(f[bud].imm == f.blocks[1].insts.size() - 1 + f.blocks[2].insts.size());
  // A header that already counts keeps one budget op: the second pass adds
  // its cost to it (a frontend's own budget plus the pipeline's).
  uint64_t once = f[bud].imm;
  insert_loop_budget(f);
  CHECK(verify(f) == "");
  CHECK(count_op(f, Opcode::Budget) == 1);
  CHECK(f[bud].imm == once + once + 1);
  Function g = prog_irreducible();  // a cycle without a dominating header still gets one
  insert_loop_budget(g);
  CHECK(count_op(g, Opcode::Budget) >= 1);
  Function h = prog_if_else();  // no loop, no budget
  insert_loop_budget(h);
  CHECK(count_op(h, Opcode::Budget) == 0);
}

TEST_CASE("pipeline dumps name every pass") {
  Function f = prog_nested_if();
  std::vector<std::pair<std::string, std::string>> dumps;
  PassOptions opt;
  opt.verify_each = true;
  REQUIRE(run_pipeline(f, opt, &dumps) == "");
  REQUIRE(dumps.size() >= 8);
  CHECK(dumps[0].first == "demote_cross_block_values");
  CHECK(dumps[2].first == "if_convert_divergent");
  CHECK(dumps[3].first == "lower_divergence");
  CHECK(dumps[4].first == "construct_ssa");
  for (auto& d : dumps) CHECK(!d.second.empty());
}

namespace {

Function parse_or_fail(const char* text) {
  Function f;
  std::string err;
  REQUIRE_MESSAGE(parse(text, f, err), err);
  REQUIRE(verify(f) == "");
  return f;
}

// A counted self loop: %7 and %8 are read only after the loop (a chain: %8
// reads %7), %9 is loop-carried, %12 feeds both the branch and the exit.
// The inner loop b2 (header b2) of the nested pair (outer header b6)
// computes %23, read only by the outer body b3, so it moves to b3 (still
// inside the outer loop), not further.
const char* kSinkProgram = R"(func "sink" {
  var "r0" i32
  var "r1" i32
  var "r2" i32
  var "r3" i32
b0 "entry":
  %0 = load_var i32 #0x0
  %1 = const i32 #0x0
  %2 = const i32 #0x1
  %3 = const i32 #0x8
  br b1
b1 "loop":
  %4 = phi i32 [%1, b0], [%6, b1]
  %5 = phi i32 [%0, b0], [%9, b1]
  %6 = iadd i32 %4, %2
  %7 = xor i32 %5, %6
  %8 = imul i32 %7, %7
  %9 = iadd i32 %5, %6
  %12 = icmp.ult i1 %6, %3
  cond_br %12, b1, b5
b5 "after_first":
  %13 = iadd i32 %8, %9
  store_var %13, #0x1
  store_var %7, #0x2
  %14 = select i32 %12, %13, %9
  br b6
b6 "outer_head":
  %30 = phi i32 [%24, b3], [%14, b5]
  br b2
b2 "inner":
  %20 = phi i32 [%22, b2], [%1, b6]
  %21 = phi i32 [%21, b2], [%30, b6]
  %22 = iadd i32 %20, %2
  %23 = imul i32 %21, %22
  %25 = icmp.ult i1 %22, %3
  cond_br %25, b2, b3
b3 "outer_body":
  %24 = iadd i32 %23, %21
  %26 = icmp.ult i1 %24, %0
  cond_br %26, b6, b4
b4 "exit":
  store_var %24, #0x3
  return
})";

}  // namespace

TEST_CASE("sink: values read only after a loop move there, loop-carried and branch values stay") {
  Function f = parse_or_fail(kSinkProgram);
  Function before = f;
  sink_out_of_loops(f);
  REQUIRE(verify(f) == "");
  auto block_of = [&](const char* name) {
    for (BlockId b = 0; b < f.blocks.size(); ++b)
      if (f.blocks[b].name == name) return b;
    return kNoBlock;
  };
  // Value ids are the text's numbers only by position; find them by op.
  auto defined_in = [&](Opcode op, BlockId want_home, int nth) {
    int seen = 0;
    for (ValueId v = 0; v < f.insts.size(); ++v)
      if (before.insts[v].op == op && before.insts[v].block == want_home && seen++ == nth) return f.insts[v].block;
    return kNoBlock;
  };
  const BlockId loop = block_of("loop"), after = block_of("after_first"), inner = block_of("inner"),
                outer = block_of("outer_body");
  CHECK(defined_in(Opcode::Xor, loop, 0) == after);   // %7
  CHECK(defined_in(Opcode::IMul, loop, 0) == after);  // %8, the chain's end
  CHECK(defined_in(Opcode::IAdd, loop, 0) == loop);   // %6: loop-carried
  CHECK(defined_in(Opcode::IAdd, loop, 1) == loop);   // %9: loop-carried and read after
  CHECK(defined_in(Opcode::ICmp, loop, 0) == loop);   // %12: the branch reads it
  CHECK(defined_in(Opcode::IMul, inner, 0) == outer); // %23: out of the inner loop only
  CHECK(defined_in(Opcode::IAdd, inner, 0) == inner); // %22: loop-carried
  // The moved values are defined before their first use in the new block.
  const auto& ins = f.blocks[after].insts;
  auto pos = [&](Opcode op) {
    for (size_t i = 0; i < ins.size(); ++i)
      if (f.insts[ins[i]].op == op) return i;
    return ins.size();
  };
  CHECK(pos(Opcode::Xor) < pos(Opcode::IMul));
  CHECK(pos(Opcode::IMul) < pos(Opcode::IAdd));
  // Same results on the IR interpreter for many entry masks and states.
  std::mt19937 rng(7);
  for (uint32_t mask : test_masks(rng))
    for (int k = 0; k < 8; ++k) {
      State s = random_state(before, rng, mask, 40);
      Outcome a = run(before, s), b = run(f, s);
      CHECK_MESSAGE(a.vars == b.vars, describe(a, b, f));
      CHECK(a.status == b.status);
    }
}

}  // namespace gpurc_test_passes_single_pass_test
