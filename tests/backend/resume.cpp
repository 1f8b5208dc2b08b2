// Regression: the resume-after-barrier entry must redo the per-run setup
// (first launched lane, launched-lane masks). It once jumped straight to the
// resumed block, so a uniform branch there read its condition at an offset
// left on the stack by whatever ran between the two calls (found by the
// ASan build of the CLI tests replaying examples/ir/block_sum.json).
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "harness.h"
#include "tiers.h"

namespace gpurc_test_backend_resume {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;

namespace {
// Leaves a recognisable pattern in the stack below the caller, where the JIT
// frame of the next call will lie.
[[gnu::noinline]] void dirty_stack() {
  volatile unsigned char junk[16384];
  for (size_t i = 0; i < sizeof(junk); ++i) junk[i] = 0x7f;
  (void)junk[0];
}
}  // namespace

TEST_CASE("backend: a resumed warp branches on its first launched lane") {
  ir::Function f;
  f.uniform_bytes = 4;
  uint32_t out = f.add_var("out", ir::Type::I32);
  ir::Builder b(f);
  ir::BlockId entry = f.add_block("entry"), after = f.add_block("after"), yes = f.add_block("yes"),
              no = f.add_block("no");
  b.set_block(entry);
  b.barrier(after);
  b.set_block(after);
  ir::ValueId u = b.load_uniform(ir::Type::I32, 0);
  ir::ValueId c = b.icmp(ir::IntPred::Ne, u, b.i32(0));
  b.cond_br(c, yes, no);
  b.set_block(yes);
  b.emit(ir::Opcode::StoreVar, ir::Type::Void, {b.i32(11)}, 0, 0, out);
  b.ret();
  b.set_block(no);
  b.emit(ir::Opcode::StoreVar, ir::Type::Void, {b.i32(22)}, 0, 0, out);
  b.ret();
  f.compute_preds();
  REQUIRE(ir::verify(f) == "");

  for (backend::test::Tier tier : backend::test::host_tiers()) {
    CAPTURE(tier->name);
    std::string err;
    auto exe = backend::test::compile(f, backend::test::JitOptions{tier}, &err);
    REQUIRE_MESSAGE(exe, err);
    for (uint32_t uniform : {0u, 5u}) {
      std::vector<uint8_t> vars(f.vars_bytes(), 0), frame(exe->frame_bytes() + 64, 0);
      ir::WarpContext ctx;
      ctx.vars = vars.data();
      ctx.uniforms = reinterpret_cast<const uint8_t*>(&uniform);
      ctx.frame = frame.data();
      ctx.entry_mask = 0x80000000u;  // only lane 31 launched
      REQUIRE(exe->run(ctx) == ir::RunStatus::Barrier);
      dirty_stack();
      REQUIRE(exe->run(ctx) == ir::RunStatus::Done);
      uint32_t lane31;
      std::memcpy(&lane31, vars.data() + f.var_offset(out) + 31 * 4, 4);
      CHECK(lane31 == (uniform ? 11u : 22u));
    }
  }
}

}  // namespace gpurc_test_backend_resume
