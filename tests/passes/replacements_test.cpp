// passutil::Replacements (pass_util.h): find answers an unreplaced value
// inline and walks a chain out of line with path compression; apply
// rewrites every operand of an instruction in a block through find.
#include <doctest/doctest.h>

#include "ir/builder.h"
#include "ir/ir.h"
#include "ir/pass_util.h"

namespace gpurc_test_passes_replacements_test {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc::ir;
using gpurc::ir::passutil::Replacements;

namespace {

// %0..%5: six i32 constants and an add of %0 and %1 (%6), in one block.
Function six_consts_and_add() {
  Function f;
  Builder b(f);
  b.set_block(f.add_block("entry"));
  for (uint32_t i = 0; i < 6; ++i) b.i32(i);
  b.iadd(0, 1);
  b.ret();
  return f;
}

}  // namespace

TEST_CASE("Replacements::find: an unreplaced value, one beyond the table, a chain") {
  Function f = six_consts_and_add();
  Replacements r(f);
  for (ValueId v = 0; v < 6; ++v) CHECK(r.find(v) == v);
  CHECK(r.find(ValueId(f.insts.size() + 10)) == f.insts.size() + 10);  // past the table: itself
  CHECK(r.find(kNoValue) == kNoValue);
  // 0 -> 1 -> 2 -> 3: every link of the chain answers its end.
  r.set(0, 1);
  r.set(1, 2);
  r.set(2, 3);
  CHECK(r.find(3) == 3);
  CHECK(r.find(2) == 3);
  CHECK(r.find(0) == 3);
  // Path compression: after find(0) every link points at the end.
  CHECK(r.to[0] == 3);
  CHECK(r.to[1] == 3);
  CHECK(r.to[2] == 3);
  // Extending the chain at its end is seen from its start.
  r.set(3, 5);
  CHECK(r.find(0) == 5);
  CHECK(r.find(4) == 4);
  // set() past the table grows it.
  const ValueId far = ValueId(f.insts.size() + 3);
  r.set(far, 4);
  CHECK(r.find(far) == 4);
  CHECK(r.find(far - 1) == far - 1);
  CHECK(r.any());
}

TEST_CASE("Replacements::apply rewrites operands through the chains") {
  Function f = six_consts_and_add();
  const ValueId add = 6;
  REQUIRE(f.insts[add].op == Opcode::IAdd);
  Replacements r(f);
  CHECK_FALSE(r.any());
  r.apply(f);  // nothing set: nothing changes
  CHECK(f.insts[add].args == std::vector<ValueId>{0, 1});
  r.set(0, 2);
  r.set(2, 4);  // 0 -> 2 -> 4
  r.set(1, 5);
  r.apply(f);
  CHECK(f.insts[add].args == std::vector<ValueId>{4, 5});
  CHECK(verify(f) == "");
}

}  // namespace gpurc_test_passes_replacements_test
