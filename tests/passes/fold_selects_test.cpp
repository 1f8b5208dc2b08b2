// fold_complementary_selects (pass_fold_selects.cpp): select(c, x,
// select(!c, y, z)) is select(c, x, y), and its mirror image, for every
// integer predicate and its inverse and for `xor c, true` in either operand
// order; a compare of other operands, the same predicate or a non-inverse
// one is left alone; the old value's load_var goes when nothing reads it. The
// IR interpreter gives the same results before and after (small operands, so
// the compares go both ways).
#include <doctest/doctest.h>

#include "harness.h"

namespace gpurc_test_passes_fold_selects_test {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace passtest;

namespace {

IntPred inverse_pred(IntPred p) {
  constexpr IntPred kInv[] = {IntPred::Ne,  IntPred::Eq,  IntPred::Sge, IntPred::Sgt, IntPred::Sle,
                              IntPred::Slt, IntPred::Uge, IntPred::Ugt, IntPred::Ule, IntPred::Ult};
  return kInv[size_t(p)];
}

// vars a, b, x, y, old (i32); out0..: one select pair per shape.
// kind 0: inverse icmp (folds); 1: xor c, true (folds); 2: xor true, c
// (folds); 3: the same predicate (no fold); 4: icmp of other operands (no
// fold); 5: a predicate that is not the inverse (no fold, unless it is).
Function make(IntPred p, bool mirror) {
  Function f;
  for (const char* n : {"a", "b", "x", "y", "old"}) f.add_var(n, Type::I32);
  for (int k = 0; k < 6; ++k) f.add_var("out" + std::to_string(k), Type::I32);
  f.add_block("entry");
  Builder b(f);
  auto ld = [&](uint32_t v) { return b.emit(Opcode::LoadVar, Type::I32, {}, 0, 0, v); };
  auto a = ld(0), bb = ld(1), x = ld(2), y = ld(3);
  for (int kind = 0; kind < 6; ++kind) {
    auto old = ld(4);  // one load per shape: a folded shape's load goes
    auto c = b.icmp(p, a, bb);
    ValueId d;
    switch (kind) {
      case 0: d = b.icmp(inverse_pred(p), a, bb); break;
      case 1: d = b.binary(Opcode::Xor, c, b.constant(Type::I1, 1)); break;
      case 2: d = b.binary(Opcode::Xor, b.constant(Type::I1, 1), c); break;
      case 3: d = b.icmp(p, a, bb); break;
      case 4: d = b.icmp(inverse_pred(p), a, x); break;
      default: d = b.icmp(IntPred((uint8_t(p) + 2) % 10), a, bb); break;
    }
    auto inner = b.emit(Opcode::Select, Type::I32, {d, y, old});
    auto outer = mirror ? b.emit(Opcode::Select, Type::I32, {c, inner, x}) : b.emit(Opcode::Select, Type::I32, {c, x, inner});
    b.emit(Opcode::StoreVar, Type::Void, {outer}, 0, 0, uint32_t(5 + kind));
  }
  b.ret();
  return f;
}

}  // namespace

TEST_CASE("fold_complementary_selects: select(c, x, select(!c, y, old)) is select(c, x, y)") {
  for (int pi = 0; pi < 10; ++pi)
    for (bool mirror : {false, true}) {
      const IntPred p = IntPred(pi);
      CAPTURE(pi);
      CAPTURE(mirror);
      Function f = make(p, mirror);
      REQUIRE(verify(f) == "");
      const Function before = f;
      CHECK(fold_complementary_selects(f));
      REQUIRE(verify(f) == "");
      // Kinds 0-2 fold: their inner select goes, and its load of `old` with it.
      // Kind 5 folds only where its predicate happens to be the inverse.
      const bool kind5 = inverse_pred(p) == IntPred((pi + 2) % 10);
      const int folded = 3 + (kind5 ? 1 : 0);
      CHECK(count_op(f, Opcode::Select) == 12 - folded);
      // (the mirror image keeps `old`, select(c, old, x), and drops y, which the other shapes read)
      CHECK(count_op(f, Opcode::LoadVar) == 4 + 6 - (mirror ? 0 : folded));
      CHECK(!fold_complementary_selects(f));  // nothing more
      std::mt19937 rng(uint32_t(17 + pi));
      for (uint32_t mask : test_masks(rng))
        for (int k = 0; k < (light() ? 4 : 16); ++k) {
          State s = random_state(before, rng, mask, k % 2 ? 4 : 0);
          Outcome want = run(before, s), got = run(f, s);
          CHECK_MESSAGE(want.vars == got.vars, describe(want, got, f));
        }
    }
}

}  // namespace gpurc_test_passes_fold_selects_test
