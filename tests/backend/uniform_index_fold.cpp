// A relative read with its range check folded into the load's window check
// (backend_x64/uniform_indexed.cpp, plan_uniform_index_folds, sixteenth
// session): select(x <u C, load_uniform_idx(x << s, d), K) with x = y & M is
// one broadcast, and x >= C goes out of line where the window's words are K.
// On every host tier against the IR interpreter: y at and around C, M and
// the block's end, C from 1 to INT_MAX, the signed compare, two K in one
// window (the second select must not read the first's K), a select whose
// compare has another reader (not folded), a constant y with and without a
// uniform block (the null block's path: the loads read 0, the selects K
// where x >= C), and the offset computed in a GPR from y = u + K (u read
// again after the selects).
#include <doctest/doctest.h>

#include <cstring>

#include "compare.h"

namespace gpurc_test_backend_uniform_index_fold {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::backend::test;
using ir::Opcode;
using ir::Type;

namespace {

struct FoldShape {
  uint32_t mask, shift, bound;
  ir::IntPred pred;
  bool two_k;       // the last two selects take another K
  bool cmp_stored;  // the compare is also stored (another reader: no fold)
  uint32_t root_add = 0;  // y = u + root_add, u (the block's first word) stored after the selects:
                          // the offset in a GPR from u (scalar_offset; 0: y = u, read by x only)
};

// Vars o0..o5 (i32): four selects of the window [0, 12], a select at 16, and
// the compare (when stored). y is the block's first word, or a constant.
ir::Function fold_function(const FoldShape& sh, uint32_t block_bytes, bool const_y, uint32_t y_const) {
  ir::Function f;
  for (int i = 0; i < 7; ++i) f.add_var("o" + std::to_string(i), Type::I32);
  f.uniform_bytes = block_bytes;
  f.unlaunched_lanes_free = true;
  const ir::BlockId entry = f.add_block("entry");
  ir::Builder b(f);
  b.set_block(entry);
  const ir::ValueId u = const_y ? b.i32(y_const) : b.load_uniform(Type::I32, 0);
  const ir::ValueId y = sh.root_add ? b.iadd(u, b.i32(sh.root_add)) : u;
  const ir::ValueId x = b.and_(y, b.i32(sh.mask));
  const ir::ValueId off = b.shl(x, b.i32(sh.shift));
  const ir::ValueId c = b.icmp(sh.pred, x, b.i32(sh.bound));
  const ir::ValueId k1 = b.f32_bits(0x3f800000u), k2 = b.f32_bits(0xc0400000u);
  std::vector<ir::ValueId> picked;
  for (uint32_t i = 0; i < 5; ++i) {
    const ir::ValueId l = b.load_uniform_idx(Type::F32, off, i == 4 ? 16 : 12 - 4 * i);
    picked.push_back(b.select(c, l, sh.two_k && i >= 2 ? k2 : k1));
  }
  for (uint32_t i = 0; i < 5; ++i) store_var(b, i, b.emit(Opcode::Bitcast, Type::I32, {picked[i]}));
  if (sh.cmp_stored) store_var(b, 5, b.emit(Opcode::Zext, Type::I32, {c}));
  if (sh.root_add) store_var(b, 6, u);
  b.ret();
  f.compute_preds();
  return f;
}

}  // namespace

TEST_CASE("backend: range-checked relative reads folded into the window check match the interpreter") {
  std::mt19937_64 rng(1616);
  const FoldShape shapes[] = {
      {0x7f, 4, 96, ir::IntPred::Ult, false, false},  // PICA200's c[aL + n]
      {0x7f, 4, 96, ir::IntPred::Slt, true, false},
      {0xff, 2, 1, ir::IntPred::Ult, false, false},
      {0xff, 4, 0x7fffffffu, ir::IntPred::Ult, true, false},
      {0x7f, 4, 40, ir::IntPred::Ult, false, true},
      {0x0fffffffu, 4, 100, ir::IntPred::Ult, false, false},  // x << 4 may wrap: no fold, still exact
      {0x7f, 4, 96, ir::IntPred::Ult, false, false, 10},       // ((u + 10) & 0x7f) << 4 in edx
      {0xff, 2, 200, ir::IntPred::Ult, true, false, 0xfffffff0u},
  };
  int runs = 0;
  for (const FoldShape& sh : shapes)
    for (uint32_t block : {1632u, 52u, 4u}) {
      std::vector<uint32_t> ys = {0, 1, 2, 3, sh.mask, sh.mask + 1, 0xffffffffu, 0x80000000u};
      for (uint32_t d = 0; d < 3; ++d) {
        ys.push_back(sh.bound - 1 + d);
        ys.push_back(((block >> sh.shift) - 1 + d) & 0xffffffffu);
      }
      for (int r = 0; r < 4; ++r) ys.push_back(uint32_t(rng()));
      for (uint32_t y : ys) {
        ir::Function f = fold_function(sh, block, false, 0);
        REQUIRE(ir::verify(f) == "");
        RunSpec s;
        s.vars.resize(f.vars_bytes());
        fill_random(s.vars, rng);
        s.uniforms.resize(block);
        fill_random(s.uniforms, rng);
        std::memcpy(s.uniforms.data(), &y, 4);
        s.entry_mask = y % 3 == 0 ? ~0u : 0x0F00F000u | (1u << (y % 32));
        CAPTURE(sh.mask);
        CAPTURE(sh.bound);
        CAPTURE(block);
        CAPTURE(y);
        check_all_tiers(f, s, "folded range check, y from the block");
        ++runs;
      }
    }
  // A constant y, with a block and without one (the null test's path).
  for (uint32_t y : {0u, 5u, 95u, 96u, 97u, 127u, 128u + 3u}) {
    ir::Function f = fold_function(shapes[0], 1632, true, y);
    REQUIRE(ir::verify(f) == "");
    for (bool block : {true, false}) {
      RunSpec s;
      s.vars.resize(f.vars_bytes());
      fill_random(s.vars, rng);
      if (block) {
        s.uniforms.resize(1632);
        fill_random(s.uniforms, rng);
      }
      CAPTURE(y);
      CAPTURE(block);
      check_all_tiers(f, s, "folded range check, constant y");
      ++runs;
    }
  }
  CHECK(runs == 8 * 3 * 18 + 7 * 2);
}

}  // namespace gpurc_test_backend_uniform_index_fold
