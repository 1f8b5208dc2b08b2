// Functions that repeat every float fix combination (NaN rule x FtzOut x
// ZeroMul x FtzIn, and in DAZ mode the fused product + sum) many times over
// a few inputs, for the shared fix stubs (tests/backend/float_fix_stubs.cpp
// checks results, tests/backend_x64/codegen.cpp that stubs are shared).
#pragma once
#include "harness.h"

namespace gpurc::backend::test {

constexpr uint32_t kFixInputs = 4;

// daz: every op reads FtzIn (so x64 runs the function in DAZ mode) and
// fmuls read only by one fadd / fsub are fused there; otherwise every NaN
// rule with and without FtzIn / FtzOut / ZeroMul, and min / max / floor /
// sqrt with their fixes. Results are stored to out vars one by one.
inline ir::Function float_fix_function(bool daz) {
  using ir::Type;
  namespace ff = ir::ff;
  ir::Function f;
  for (uint32_t i = 0; i < kFixInputs; ++i) f.add_var("in" + std::to_string(i), Type::F32);
  f.add_block("entry");
  ir::Builder b(f);
  ir::ValueId in[kFixInputs];
  for (uint32_t i = 0; i < kFixInputs; ++i) in[i] = load_var(b, i);
  auto out = [&](ir::ValueId v) {
    const uint32_t var = f.add_var("out" + std::to_string(f.vars.size()), Type::F32);
    store_var(b, var, v);
  };
  const ir::NanRule rules[] = {ir::NanRule::Canonical, ir::NanRule::AllOnes, ir::NanRule::Propagate};
  int k = 0;
  auto arg = [&](int i) { return in[(k + i) % kFixInputs]; };
  for (int rep = 0; rep < 3; ++rep)
    for (ir::NanRule rule : rules)
      for (uint32_t bits = 0; bits < 8; ++bits, ++k) {
        uint32_t fl = ir::with_nan(0, rule);
        if (bits & 1) fl |= ff::FtzOut;
        if (bits & 2) fl |= ff::ZeroMul;
        if (daz || (bits & 4)) fl |= ff::FtzIn;
        out(b.fmul(arg(0), arg(1), fl));
        const uint32_t add_fl = fl & ~ff::ZeroMul;
        if (daz) {
          // a product read only by the sum: fused on x64
          ir::ValueId p = b.fmul(arg(1), arg(2), fl);
          out(bits & 4 ? b.fsub(arg(3), p, add_fl) : b.fadd(p, arg(3), add_fl));
          out(b.fadd(arg(2), arg(0), add_fl));
        } else {
          out(b.fadd(arg(0), arg(2), add_fl));
          out(b.fsub(arg(3), arg(1), add_fl));
          out(b.fmin(ir::MinMaxNan(bits % 3), arg(0), arg(3), add_fl));
          out(b.fmax(ir::MinMaxNan((bits + 1) % 3), arg(2), arg(1), add_fl));
          out(b.fround(ir::Opcode::FFloor, arg(1), add_fl));
          out(b.ffma(arg(0), arg(1), arg(2), fl));
        }
      }
  b.ret();
  return f;
}

}  // namespace gpurc::backend::test
