// Loop accumulators whose NaN tests are deferred to the loop's end
// (backend_x64/loops.cpp, loop_defer_nan_tests; issue 13, twelfth session):
// a PICA200-style LOOP of MADs acc' = x * c[i] + acc runs its strips with
// the accumulators' sums untested, tests the last sums once, and when a lane
// is a NaN reruns the strip from its entry values with every test. Checked
// on every tier against the interpreter: NaNs, infinities, 0 * inf and
// subnormals arising in the first, a middle or the last iteration, in one
// lane of one strip or in every strip, NaN entry values, the first launched
// lane in each strip (its strip's rerun is the counted form), a partial
// launch with and without the unlaunched-lanes contract, watchdog faults
// inside the loop (before and after a whole iteration), and accumulators
// that do not qualify (the phi read by the product; a sum also selected
// after the loop, which keeps its subnormal test) beside those that do.
#include <doctest/doctest.h>

#include "backend_common/plan.h"
#include "compare.h"

namespace gpurc_test_backend_loop_nan_defer {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::backend;
using namespace gpurc::backend::test;
using ir::Opcode;
using ir::Type;

namespace {

constexpr uint32_t kMul = ir::ff::FtzIn | ir::ff::FtzOut | ir::ff::ZeroMul;
constexpr uint32_t kAdd = ir::ff::FtzIn | ir::ff::FtzOut;
constexpr int kAcc = 8;
constexpr int64_t kBudgetPerIteration = 3;

// vars: acc0..7 (entry values), x0..3, y (f32); out0..7, out_t, out_i.
// uniforms: [0] the trip count n (1..), [16 + 16 * i ..] four f32 components
// read at iteration i (load_uniform_idx of 16 * i, as c10[aL]).
// loop:  i; acc_k = phi(acc_k, s_k), s_k = x_(k%4) * comp_((k+j)%4) (+|-) acc_k
//        in both operand orders; t = phi(y, t1), t1 = t * comp0 + x0 (the phi
//        read by the product: tested every iteration); a budget op.
// exit:  s_k stored (s7 through a select: its subnormal test stays), t1, i1.
ir::Function make_loop(bool lanes_free) {
  ir::Function f;
  for (int k = 0; k < kAcc; ++k) f.add_var("acc" + std::to_string(k), Type::F32);
  for (int k = 0; k < 4; ++k) f.add_var("x" + std::to_string(k), Type::F32);
  f.add_var("y", Type::F32);
  for (int k = 0; k < kAcc; ++k) f.add_var("out" + std::to_string(k), Type::F32);
  f.add_var("out_t", Type::F32);
  f.add_var("out_i", Type::I32);
  f.uniform_bytes = 16 + 16 * 16;
  f.unlaunched_lanes_free = lanes_free;
  const ir::BlockId entry = f.add_block("entry"), loop = f.add_block("loop"), done = f.add_block("done");
  ir::Builder b(f);
  b.set_block(entry);
  std::vector<ir::ValueId> acc_in, x;
  for (int k = 0; k < kAcc; ++k) acc_in.push_back(load_var(b, uint32_t(k)));
  for (int k = 0; k < 4; ++k) x.push_back(load_var(b, uint32_t(kAcc + k)));
  auto y = load_var(b, kAcc + 4);
  auto n = b.binary(Opcode::And, b.load_uniform(Type::I32, 0), b.i32(15));
  auto zero = b.i32(0);
  b.br(loop);
  b.set_block(loop);
  auto i = phi(b, Type::I32, {zero, zero});
  std::vector<ir::ValueId> acc;
  for (int k = 0; k < kAcc; ++k) acc.push_back(phi(b, Type::F32, {acc_in[size_t(k)], acc_in[size_t(k)]}));
  auto t = phi(b, Type::F32, {y, y});
  b.emit(Opcode::Budget, Type::Void, {}, 0, 0, uint64_t(kBudgetPerIteration));
  auto off = b.shl(b.iadd(i, b.i32(1)), b.i32(4));
  ir::ValueId comp[4];
  for (int j = 0; j < 4; ++j) comp[j] = b.load_uniform_idx(Type::F32, off, uint32_t(4 * j));
  std::vector<ir::ValueId> s;
  for (int k = 0; k < kAcc; ++k) {
    auto p = b.fmul(x[size_t(k % 4)], comp[(k + k / 4) % 4], kMul);
    const auto a = acc[size_t(k)];
    switch (k % 4) {
      case 0: s.push_back(b.fadd(p, a, kAdd)); break;
      case 1: s.push_back(b.fadd(a, p, kAdd)); break;
      case 2: s.push_back(b.binary(Opcode::FSub, a, p, 0, kAdd)); break;
      default: s.push_back(b.binary(Opcode::FSub, p, a, 0, kAdd)); break;
    }
  }
  auto t1 = b.fadd(b.fmul(t, comp[0], kMul), x[0], kAdd);
  auto i1 = b.iadd(i, b.i32(1));
  f.insts[i].args[1] = i1;
  for (int k = 0; k < kAcc; ++k) f.insts[acc[size_t(k)]].args[1] = s[size_t(k)];
  f.insts[t].args[1] = t1;
  b.cond_br(b.icmp(ir::IntPred::Ult, i1, n), loop, done);
  b.set_block(done);
  for (int k = 0; k + 1 < kAcc; ++k) store_var(b, uint32_t(kAcc + 5 + k), s[size_t(k)]);
  auto positive = b.fcmp(ir::FloatPred::Ogt, x[1], b.f32_bits(0));
  store_var(b, uint32_t(kAcc + 5 + kAcc - 1), b.emit(Opcode::Select, Type::F32, {positive, s[kAcc - 1], x[1]}));
  store_var(b, uint32_t(2 * kAcc + 5), t1);
  store_var(b, uint32_t(2 * kAcc + 6), i1);
  b.ret();
  f.compute_preds();
  return f;
}

uint32_t clean_f32(std::mt19937_64& rng) { return 0x3F000000u + uint32_t(rng() % 0x01000000u); }  // [0.5, 2)

uint32_t special_f32(std::mt19937_64& rng) {
  static const uint32_t kSpecial[] = {0x00000000u, 0x80000000u, 0x00000001u, 0x807FFFFFu, 0x7F800000u, 0xFF800000u,
                                      0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFFA00005u, 0x7F7FFFFFu, 0x00800000u};
  return kSpecial[rng() % (sizeof kSpecial / sizeof kSpecial[0])];
}

// Launch masks whose first launched lane is in each strip of both tiers.
const uint32_t kMasks[] = {~0u, 1u, 0x80000000u, 0x00010000u, 0x00000100u, 0x01000000u, 0xFFFF0000u, 0x0F0F0F00u};

}  // namespace

TEST_CASE("loop accumulators tested after the loop: NaN, inf and 0 * inf in any iteration, lane and strip") {
  for (bool lanes_free : {true, false}) {
    ir::Function f = make_loop(lanes_free);
    REQUIRE(ir::verify(f) == "");
    REQUIRE(make_plan(f).strip_loop_of[1] >= 0);
    std::mt19937_64 rng(lanes_free ? 7 : 8);
    const int runs = light() ? 64 : 256;
    for (int r = 0; r < runs; ++r) {
      RunSpec spec;
      spec.vars.resize(f.vars_bytes());
      fill_random(spec.vars, rng);
      spec.uniforms.assign(f.uniform_bytes, 0);
      const uint32_t trips = 1 + uint32_t(r % 9);
      std::memcpy(spec.uniforms.data(), &trips, 4);
      for (size_t o = 16; o + 4 <= spec.uniforms.size(); o += 4) {
        const uint32_t v = clean_f32(rng);
        std::memcpy(spec.uniforms.data() + o, &v, 4);
      }
      for (uint32_t var = 0; var < uint32_t(kAcc + 5); ++var)
        for (unsigned l = 0; l < 32; ++l) set_lane(spec.vars, f, var, l, clean_f32(rng));
      // mode 0: no special value (no rerun); 1: one input lane special;
      // 2: inf in the uniforms at one iteration (first, middle or last) and
      // zeros in an x lane (0 * inf there only); 3: a NaN entry value;
      // 4: every input special in random lanes.
      const int mode = r % 5;
      const unsigned lane = unsigned(rng() % 32);
      if (mode == 1) set_lane(spec.vars, f, uint32_t(rng() % (kAcc + 5)), lane, special_f32(rng));
      if (mode == 2) {
        const uint32_t it = (r / 5) % 3 == 0 ? 0 : (r / 5) % 3 == 1 ? trips / 2 : trips - 1;
        const uint32_t inf = rng() % 2 ? 0x7F800000u : 0xFF800000u;
        std::memcpy(spec.uniforms.data() + 16 + 16 * it + 4 * (rng() % 4), &inf, 4);
        for (uint32_t xv = 0; xv < 4; ++xv) set_lane(spec.vars, f, uint32_t(kAcc) + xv, lane, rng() % 2 ? 0u : 0x80000000u);
      }
      if (mode == 3) set_lane(spec.vars, f, uint32_t(rng() % kAcc), lane, 0x7FC00000u | uint32_t(rng() % 2) << 31);
      if (mode == 4)
        for (uint32_t var = 0; var < uint32_t(kAcc + 5); ++var)
          for (unsigned l = 0; l < 32; ++l)
            if (rng() % 6 == 0) set_lane(spec.vars, f, var, l, special_f32(rng));
      spec.entry_mask = kMasks[size_t(r / 5) % (sizeof kMasks / sizeof kMasks[0])];
      spec.budget = 1 << 20;
      CAPTURE(lanes_free);
      CAPTURE(r);
      CAPTURE(mode);
      check_all_tiers(f, spec, "deferred loop NaN tests");
      if (r % 4 == 0) {
        // A watchdog fault inside the loop: before the first whole iteration
        // or after some (the first strip's stubs test the phis then).
        spec.budget = int64_t(rng() % (kBudgetPerIteration * trips));
        check_all_tiers(f, spec, "deferred loop NaN tests, watchdog");
      }
    }
  }
}

}  // namespace gpurc_test_backend_loop_nan_defer
