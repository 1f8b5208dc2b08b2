// PICA200's LOOP shape on every host tier against the IR interpreter: a
// single-block counted loop whose aL-like phi (from a uniform, stepped by a
// uniform) indexes the uniform block (load_uniform_idx), with the index's
// range check as a select against 1.0, and a MAD accumulator whose sums
// are stored only after the loop. Covers the eighth session's lowering
// rules (docs/backend_x64.md): offsets equal in every lane (the
// unlaunched-lanes contract keeps every lane through phi copies) read
// without the all-lanes test, the null tests after an entry block that
// tested the uniform pointer, and an accumulator's flush of subnormal sums
// left to the store after the loop. Launch masks whose first lanes are not
// launched, with and without the contract, with and without a uniform
// block, and sums that cancel to subnormals, zeros, infinities and NaNs.
#include <doctest/doctest.h>

#include <cstring>

#include "compare.h"

namespace gpurc_test_backend_loop_uniform_index {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::backend::test;
using ir::Opcode;
using ir::Type;

namespace {

constexpr uint32_t kMad = ir::ff::FtzIn | ir::ff::FtzOut;

// vars x (f32), acc (f32), idx (i32), out (f32). Uniforms: 16 floats, then
// the index start (64), its step (68) and the trip count (72).
// entry_uniform: the start and trip count are load_uniform in the entry
// block (then later blocks need no null test); else they come from the
// idx var and a constant (the loop's step read is the first uniform read).
ir::Function loop_function(bool contract, bool entry_uniform) {
  ir::Function f;
  f.add_var("x", Type::F32);
  f.add_var("acc", Type::F32);
  f.add_var("idx", Type::I32);
  f.add_var("out", Type::F32);
  f.uniform_bytes = 80;
  f.unlaunched_lanes_free = contract;
  const ir::BlockId entry = f.add_block("entry"), loop = f.add_block("loop"), exit = f.add_block("exit");
  ir::Builder b(f);
  b.set_block(entry);
  auto x = load_var(b, 0), acc0 = load_var(b, 1);
  ir::ValueId start, n;
  if (entry_uniform) {
    start = b.load_uniform(Type::I32, 64);
    n = b.iadd(b.binary(Opcode::And, b.load_uniform(Type::I32, 72), b.i32(7)), b.i32(1));
  } else {
    start = load_var(b, 2);
    n = b.i32(6);
  }
  auto zero = b.i32(0);
  b.br(loop);
  b.set_block(loop);
  auto i = phi(b, Type::I32, {zero, zero});
  auto p = phi(b, Type::I32, {start, start});
  auto acc = phi(b, Type::F32, {acc0, acc0});
  auto acc2 = phi(b, Type::F32, {acc0, acc0});
  b.emit(Opcode::Budget, Type::Void, {}, 0, 0, 1);
  auto k = b.binary(Opcode::And, p, b.i32(31));
  auto off = b.shl(k, b.i32(2));
  auto in_range = b.icmp(ir::IntPred::Ult, k, b.i32(16));
  auto one = b.f32(1.0f);
  auto c0 = b.select(in_range, b.load_uniform_idx(Type::F32, off, 0), one);
  auto c1 = b.select(in_range, b.load_uniform_idx(Type::F32, off, 4), one);
  auto acc1 = b.fadd(b.fmul(x, c0, kMad | ir::ff::ZeroMul), acc, kMad);
  auto acc3 = b.fadd(b.fmul(x, c1, kMad | ir::ff::ZeroMul), acc2, kMad);
  auto p1 = b.binary(Opcode::And, b.iadd(p, b.load_uniform(Type::I32, 68)), b.i32(255));
  auto i1 = b.iadd(i, b.i32(1));
  b.cond_br(b.icmp(ir::IntPred::Ult, i1, n), loop, exit);
  f.insts[i].args[1] = i1;
  f.insts[p].args[1] = p1;
  f.insts[acc].args[1] = acc1;
  f.insts[acc2].args[1] = acc3;
  b.set_block(exit);
  store_var(b, 1, acc1);
  store_var(b, 2, p1);
  store_var(b, 3, b.fmul(acc3, x, kMad | ir::ff::ZeroMul));
  store_var(b, 0, acc3);
  b.ret();
  f.compute_preds();
  return f;
}

uint32_t bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  return u;
}

// Values whose sums cancel to subnormals (1.5e-38 - 1.4e-38), zeros of
// both signs, subnormal inputs, infinities (0 * inf) and NaNs.
uint32_t special(std::mt19937_64& rng) {
  static const uint32_t v[] = {bits(1.0f),      bits(-1.0f),      bits(1.5e-38f), bits(-1.4e-38f), bits(1.4e-38f),
                               0x00000000u,     0x80000000u,      0x00012345u,    0x80400000u,     0x7F800000u,
                               0xFF800000u,     0x7FC00000u,      0x7F812345u,    bits(2.5f),      bits(-0.75f),
                               bits(1.1754944e-38f), bits(-1.1754942e-38f)};
  return v[rng() % (sizeof v / sizeof v[0])];
}

}  // namespace

TEST_CASE("backend: PICA200-shaped loop: indexed uniforms, range selects and accumulators match the interpreter") {
  std::mt19937_64 rng(13);
  const uint32_t masks[] = {~0u, 0xFFFF0000u, 0x80000000u, 0x00000100u, 0x0F0F0F0Eu, 0x00FF0000u};
  int runs = 0;
  for (bool contract : {false, true})
    for (bool entry_uniform : {false, true}) {
      ir::Function f = loop_function(contract, entry_uniform);
      REQUIRE(ir::verify(f) == "");
      for (int k = 0; k < 8; ++k)
        for (uint32_t mask : masks) {
          RunSpec s;
          s.vars.resize(f.vars_bytes());
          s.uniforms.resize(80);
          for (unsigned q = 0; q < 16; ++q) {
            const uint32_t u = k < 2 ? bits(1.0f + float(q)) : special(rng);
            std::memcpy(s.uniforms.data() + 4 * q, &u, 4);
          }
          // Starts inside and past the 16 floats (the select's 1.0), steps
          // that leave the range and wrap at 256.
          const uint32_t start = uint32_t(k * 5) % 40, step = k == 7 ? 250u : 1u + uint32_t(k) % 3;
          const uint32_t trips = uint32_t(k);
          std::memcpy(s.uniforms.data() + 64, &start, 4);
          std::memcpy(s.uniforms.data() + 68, &step, 4);
          std::memcpy(s.uniforms.data() + 72, &trips, 4);
          for (unsigned l = 0; l < 32; ++l) {
            set_lane(s.vars, f, 0, l, special(rng));
            set_lane(s.vars, f, 1, l, special(rng));
            // The start from a var: equal in the launched lanes, other
            // values in the rest (a strip must not read them).
            set_lane(s.vars, f, 2, l, mask >> l & 1 ? start : start + 3 + l);
            set_lane(s.vars, f, 3, l, special(rng));
          }
          s.entry_mask = mask;
          s.budget = 1 << 16;
          CAPTURE(contract);
          CAPTURE(entry_uniform);
          CAPTURE(k);
          CAPTURE(mask);
          check_all_tiers(f, s, "loop with uniforms");
          ++runs;
          if (k == 3) {
            s.uniforms.clear();  // no uniform block: the entry's (or the loop's) load_uniform faults
            check_all_tiers(f, s, "loop without uniforms");
          }
        }
    }
  CHECK(runs == 2 * 2 * 8 * 6);
}

// A strip loop whose branch compares a lane-equal i32 (a counter from a
// uniform, stepped by a uniform) with a constant, read by nothing else: the
// first strip decides it from lane 0 with a scalar compare
// (backend_x64/loops.cpp, LoopState::scalar_cmp; eleventh session). Every
// predicate, the loop repeating on true and on false, signed and unsigned
// ranges around the constant (negative counters, values past 2^31), with
// and without the unlaunched-lanes contract (without it the phi is not
// lane-equal and the vector test stays); a float accumulator and the
// counter are stored after the loop, so a wrong trip count shows.
TEST_CASE("strip loop branches on a lane-equal counter compared with a constant (every predicate)") {
  struct Case { ir::IntPred p; bool repeat_if_true; int32_t step, k; };
  const Case cases[] = {
      {ir::IntPred::Ne, true, 1, 5},    {ir::IntPred::Eq, false, 1, 5},   {ir::IntPred::Slt, true, 1, 3},
      {ir::IntPred::Sle, true, 1, -2},  {ir::IntPred::Sgt, true, -1, -4}, {ir::IntPred::Sge, true, -1, 2},
      {ir::IntPred::Ult, true, 1, 6},   {ir::IntPred::Ule, true, 1, 4},   {ir::IntPred::Ugt, true, -1, 1},
      {ir::IntPred::Uge, true, -1, 2},  {ir::IntPred::Sge, false, 1, 4},  {ir::IntPred::Ult, false, -1, 2},
      {ir::IntPred::Eq, false, 1, int32_t(0x80000002)}, {ir::IntPred::Sgt, false, 1, 7}};
  std::mt19937_64 rng(41);
  for (const Case& c : cases)
    for (bool contract : {true, false}) {
      ir::Function f;
      f.add_var("acc", Type::F32);
      f.add_var("count", Type::I32);
      f.uniform_bytes = 16;
      f.unlaunched_lanes_free = contract;
      const ir::BlockId entry = f.add_block("entry"), loop = f.add_block("loop"), done = f.add_block("done");
      ir::Builder b(f);
      b.set_block(entry);
      auto acc = load_var(b, 0);
      auto start = b.load_uniform(Type::I32, 0);
      auto step = b.load_uniform(Type::I32, 4);
      b.br(loop);
      b.set_block(loop);
      auto i = phi(b, Type::I32, {start, start});
      auto a = phi(b, Type::F32, {acc, acc});
      auto a1 = b.fadd(a, b.f32_bits(0x3F800000u), 0);
      auto i1 = b.iadd(i, step);
      f.insts[i].args[1] = i1;
      f.insts[a].args[1] = a1;
      auto cond = b.icmp(c.p, i1, b.i32(uint32_t(c.k)));
      if (c.repeat_if_true) b.cond_br(cond, loop, done);
      else b.cond_br(cond, done, loop);
      b.set_block(done);
      store_var(b, 0, a1);
      store_var(b, 1, i1);
      b.ret();
      f.compute_preds();
      REQUIRE(ir::verify(f) == "");
      for (int k = 0; k < 4; ++k) {
        RunSpec s;
        s.vars.resize(f.vars_bytes());
        fill_random(s.vars, rng);
        s.uniforms.resize(16);
        // Starts that run a few iterations to the constant (step +-1); for
        // the unsigned predicates around 0 and 2^31 as well.
        // Wrapping 32-bit arithmetic, as the guest's: for k = 0x80000002
        // the start lies past INT32_MIN (UBSan: signed overflow in int32_t).
        const auto start_back = [&](uint32_t n) { return int32_t(uint32_t(c.k) - uint32_t(c.step) * n); };
        int32_t st = start_back(uint32_t(1 + k * 2));
        if (c.p == ir::IntPred::Eq && !c.repeat_if_true) st = start_back(uint32_t(1 + k));
        std::memcpy(s.uniforms.data(), &st, 4);
        std::memcpy(s.uniforms.data() + 4, &c.step, 4);
        s.entry_mask = k == 3 ? uint32_t(rng()) | 1u << 20 : ~0u;
        CAPTURE(int(c.p));
        CAPTURE(c.repeat_if_true);
        CAPTURE(contract);
        CAPTURE(k);
        check_all_tiers(f, s, "lane-equal loop branch");
      }
    }
}

}  // namespace gpurc_test_backend_loop_uniform_index
