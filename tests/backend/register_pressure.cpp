// One strip segment with more live values than any tier has vector registers
// (the register caches spill and reload them), mixed with ops whose lowering
// writes an operand's register in place while that operand is read again
// later (masked shift counts, sign extensions, flushed float operands, ffma's
// addend, a select condition used twice): run on every tier and compared with
// the IR interpreter.
#include <doctest/doctest.h>

#include "compare.h"

namespace gpurc_test_backend_register_pressure {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::backend;
using namespace gpurc::backend::test;
using ir::Opcode;
using ir::Type;

TEST_CASE("backend: a strip segment with more live values than vector registers matches the interpreter") {
  ir::Function f;
  constexpr uint32_t kInts = 8, kFloats = 4, kLive = 48;
  for (uint32_t i = 0; i < kInts; ++i) f.add_var("i" + std::to_string(i), Type::I32);
  for (uint32_t i = 0; i < kFloats; ++i) f.add_var("f" + std::to_string(i), Type::F32);
  const uint32_t out_int = uint32_t(f.vars.size());
  for (uint32_t i = 0; i < 4; ++i) f.add_var("o" + std::to_string(i), Type::I32);
  const uint32_t out_float = uint32_t(f.vars.size());
  for (uint32_t i = 0; i < 3; ++i) f.add_var("p" + std::to_string(i), Type::F32);
  auto entry = f.add_block("entry");
  ir::Builder b(f);
  b.set_block(entry);

  std::vector<ir::ValueId> in, x, fl;
  for (uint32_t i = 0; i < kInts; ++i) in.push_back(load_var(b, i));
  for (uint32_t i = 0; i < kFloats; ++i) fl.push_back(load_var(b, kInts + i));
  // kLive distinct values, all read again at the end.
  for (uint32_t k = 0; k < kLive; ++k)
    x.push_back(b.binary(k % 3 ? Opcode::IAdd : Opcode::Xor, in[k % kInts], b.i32(0x9E3779B9u * (k + 1))));

  // In-place writers whose operands stay live.
  auto sh = b.shl(x[0], x[1]);                                   // count masked in place
  auto sr = b.binary(Opcode::AShr, x[2], x[3], uint8_t(ir::ShiftMode::Clamp));
  auto narrow = b.trunc(Type::I8, x[4]);
  auto wide = b.sext(Type::I32, narrow);                         // sign extension in place
  auto cond = b.icmp(ir::IntPred::Slt, x[5], x[6]);
  auto s1 = b.select(cond, x[7], x[8]);
  auto s2 = b.select(cond, x[9], x[7]);
  const uint32_t ftz = ir::ff::FtzIn | ir::ff::FtzOut;
  auto m = b.fmul(fl[0], fl[1], ftz | ir::ff::ZeroMul);          // operands flushed
  auto fma = b.emit(Opcode::FFma, Type::F32, {fl[0], fl[1], fl[2]}, 0, ftz | ir::ff::ZeroMul);
  auto mad = b.emit(Opcode::FMad, Type::F32, {fl[2], fl[3], fl[0]}, 0, ftz | ir::ff::ZeroMul);
  auto sq = b.fmul(fl[3], fl[3], ftz);                           // one value as both operands

  // Every live value once more, then the in-place operands again.
  std::vector<ir::ValueId> acc = {sh, sr, b.zext(Type::I32, narrow), wide};
  for (uint32_t k = 0; k < kLive; ++k) acc[k % 4] = b.binary(Opcode::Xor, acc[k % 4], x[k]);
  acc[0] = b.binary(Opcode::IAdd, acc[0], b.binary(Opcode::IAdd, s1, s2));
  acc[1] = b.binary(Opcode::IAdd, acc[1], b.zext(Type::I32, cond));
  for (uint32_t i = 0; i < 4; ++i) store_var(b, out_int + i, acc[i]);
  auto sum = b.binary(Opcode::FAdd, b.binary(Opcode::FAdd, m, fma, 0, ftz), mad, 0, ftz);
  store_var(b, out_float, sum);
  store_var(b, out_float + 1, b.binary(Opcode::FAdd, sq, fl[2], 0, ftz));
  store_var(b, out_float + 2, b.binary(Opcode::FSub, fl[0], fl[1], 0, ftz));
  b.ret();

  std::mt19937_64 rng(17);
  for (int round = 0; round < (light() ? 4 : 16); ++round) {
    RunSpec s;
    s.vars.resize(f.vars_bytes());
    for (uint32_t var = 0; var < f.vars.size(); ++var)
      for (unsigned l = 0; l < 32; ++l) set_lane(s.vars, f, var, l, pick_value(f.vars[var].type, rng));
    s.entry_mask = round == 0 ? ~0u : uint32_t(rng()) | 1u;
    check_all_tiers(f, s, "register pressure, round " + std::to_string(round));
  }
}

}  // namespace gpurc_test_backend_register_pressure
