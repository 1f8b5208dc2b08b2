// Single-block loops emitted strip-outer with their values in registers
// (backend_x64/loops.cpp): phi swaps and cycles, values read after the loop,
// loop invariants, lanes that were not launched, helper calls in the body,
// register pressure, and watchdog faults inside the loop, on every tier.
#include <doctest/doctest.h>

#include "backend_common/plan.h"
#include "compare.h"

namespace gpurc_test_backend_loops {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::backend;
using namespace gpurc::backend::test;
using ir::Opcode;
using ir::Type;

namespace {

// Launch masks whose first launched lane is in each strip of both tiers, a
// single lane, half warps and random ones.
std::vector<uint32_t> entry_masks(std::mt19937_64& rng) {
  std::vector<uint32_t> m = {~0u, 1u, 0x80000000u, 0x00010000u, 0x00000100u, 0x01000000u, 0xFFFF0000u, 0x0000FF00u};
  for (int i = 0; i < 4; ++i) m.push_back(uint32_t(rng()) | 1u << (rng() % 32));
  return m;
}

RunSpec spec_for(const ir::Function& f, std::mt19937_64& rng, uint32_t n, uint32_t mask) {
  RunSpec s;
  s.vars.resize(f.vars_bytes());
  fill_random(s.vars, rng);
  s.uniforms.resize(4);
  std::memcpy(s.uniforms.data(), &n, 4);
  s.entry_mask = mask;
  s.budget = 1 << 20;  // far above what these loops charge: a runaway loop faults instead of hanging
  return s;
}

bool is_strip_loop(const ir::Function& f, ir::BlockId b) { return make_plan(f).strip_loop_of[b] >= 0; }

// The whole state must be the interpreter's, at a watchdog fault too: the
// status, the fault fields, the budget left and every lane of every var (a
// loop that stores to a var each iteration shows a strip that ran more or
// fewer iterations than the others).
std::string compare_state(const ir::Function& f, const RunSpec& s, Tier tier, bool need_watchdog) {
  auto ref = ir::make_ir_interpreter(f);
  Outcome want = run_one(*ref, f, s);
  JitOptions o;
  o.tier = tier;
  std::string err;
  auto jit = compile(f, o, &err);
  if (!jit) return "compile failed: " + err;
  Outcome got = run_one(*jit, f, s);
  auto str = [](uint64_t v) { return std::to_string(v); };
  if (need_watchdog && (want.status != ir::RunStatus::Fault || want.ctx.fault != ir::FaultKind::Watchdog))
    return "the interpreter did not stop with a watchdog fault (test setup)";
  if (got.status != want.status) return "status " + str(uint64_t(want.status)) + " vs " + str(uint64_t(got.status));
  if (want.status == ir::RunStatus::Fault) {
    if (got.ctx.fault != want.ctx.fault) return "fault " + str(uint64_t(want.ctx.fault)) + " vs " + str(uint64_t(got.ctx.fault));
    if (got.ctx.fault_code != want.ctx.fault_code) return "fault_code " + str(want.ctx.fault_code) + " vs " + str(got.ctx.fault_code);
    if (got.ctx.fault_lane != want.ctx.fault_lane) return "fault_lane " + str(want.ctx.fault_lane) + " vs " + str(got.ctx.fault_lane);
  }
  if (got.ctx.budget != want.ctx.budget) return "budget " + str(uint64_t(want.ctx.budget)) + " vs " + str(uint64_t(got.ctx.budget));
  for (uint32_t var = 0; var < f.vars.size(); ++var)
    for (unsigned l = 0; l < 32; ++l) {
      if (f.unlaunched_lanes_free && !(s.entry_mask >> l & 1)) continue;  // don't-care lanes
      uint64_t a = get_lane(want.vars, f, var, l), b = get_lane(got.vars, f, var, l);
      if (a != b) return "var " + f.vars[var].name + " lane " + str(l) + ": " + str(a) + " vs " + str(b);
    }
  return "";
}

// entry: x, y, inv from vars, n = (uniform & 15) + 1 iterations
// loop:  i, a/c swapping every iteration, acc; acc1 = (acc + a * inv) ^ i
//        (inv: a loop invariant from before the loop), k = c + const (read
//        after the loop), acc1 stored to a var every iteration
// exit:  a, c, acc1, k, i1 stored
struct SwapLoop {
  ir::Function f;
  ir::BlockId loop = 0;
  static constexpr int64_t kBudgetPerIteration = 3;
  SwapLoop() {
    for (const char* name : {"x", "y", "inv", "k", "i", "trace"}) f.add_var(name, Type::I32);
    f.uniform_bytes = 4;
    auto entry = f.add_block("entry");
    loop = f.add_block("loop");
    auto exit = f.add_block("exit");
    ir::Builder b(f);
    b.set_block(entry);
    auto x = load_var(b, 0), y = load_var(b, 1), inv = load_var(b, 2);
    auto n = b.binary(Opcode::IAdd, b.binary(Opcode::And, b.load_uniform(Type::I32, 0), b.i32(15)), b.i32(1));
    auto zero = b.i32(0);
    b.br(loop);
    b.set_block(loop);
    auto i = phi(b, Type::I32, {zero, zero});
    auto a = phi(b, Type::I32, {x, x});
    auto c = phi(b, Type::I32, {y, y});
    auto acc = phi(b, Type::I32, {inv, inv});
    b.emit(Opcode::Budget, Type::Void, {}, 0, 0, uint64_t(kBudgetPerIteration));
    auto t = b.binary(Opcode::IMul, a, inv);
    auto acc1 = b.binary(Opcode::Xor, b.binary(Opcode::IAdd, acc, t), i);
    store_var(b, 5, acc1);
    auto k = b.binary(Opcode::IAdd, c, b.i32(0x9E3779B9u));
    auto i1 = b.binary(Opcode::IAdd, i, b.i32(1));
    auto more = b.icmp(ir::IntPred::Ult, i1, n);
    b.cond_br(more, loop, exit);
    f.insts[i].args[1] = i1;
    f.insts[a].args[1] = c;  // a and c swap: a cycle in the back edge's parallel copy
    f.insts[c].args[1] = a;
    f.insts[acc].args[1] = acc1;
    b.set_block(exit);
    store_var(b, 0, a);
    store_var(b, 1, c);
    store_var(b, 2, acc1);
    store_var(b, 3, k);
    store_var(b, 4, i1);
    b.ret();
    f.compute_preds();
  }
};

}  // namespace

TEST_CASE("backend: strip-outer loop: swapping phis, values read after the loop, invariants, partial warps") {
  SwapLoop s;
  REQUIRE(ir::verify(s.f) == "");
  REQUIRE(is_strip_loop(s.f, s.loop));
  std::mt19937_64 rng(11);
  for (uint32_t n : {0u, 1u, 2u, 5u, 14u, 15u, 0xFFFFFFF3u})
    for (uint32_t mask : entry_masks(rng))
      check_all_tiers(s.f, spec_for(s.f, rng, n, mask), "n " + std::to_string(n) + " mask " + std::to_string(mask));
}

TEST_CASE("backend: strip-outer loop: a watchdog fault inside the loop leaves the interpreter's state") {
  SwapLoop s;
  REQUIRE(is_strip_loop(s.f, s.loop));
  std::mt19937_64 rng(12);
  int faults = 0;
  for (int64_t budget = 0; budget < 16 * SwapLoop::kBudgetPerIteration; budget += 2)
    for (uint32_t mask : {~0u, 0x80000000u, 0x00010000u, 0x00F0F000u}) {
      RunSpec spec = spec_for(s.f, rng, 15, mask);  // 16 iterations: every budget here runs out inside the loop
      spec.budget = budget;
      for (Tier t : host_tiers()) {
        std::string d = compare_state(s.f, spec, t, true);
        CHECK_MESSAGE(d.empty(), "budget " << budget << " mask " << mask << " on " << tier_name(t) << ": " << d);
        ++faults;
      }
    }
  CHECK(faults == int(host_tiers().size()) * 24 * 4);
}

TEST_CASE("backend: strip-outer loop leaving on true, with float ops and a helper call in the body") {
  // loop: h = phi, y = phi (f32), j = phi; h1 = popcount(h ^ j) (an eval_lane
  // helper: every vector register is clobbered mid-iteration) + h * 3;
  // y1 = y * (2 - a * y) with FTZ; leaves when j1 == n (cond_br true -> exit).
  ir::Function f;
  for (const char* name : {"h", "a", "y", "j"}) f.add_var(name, Type::I32);
  f.uniform_bytes = 4;
  auto entry = f.add_block("entry"), loop = f.add_block("loop"), exit = f.add_block("exit");
  ir::Builder b(f);
  b.set_block(entry);
  auto h0 = load_var(b, 0);
  auto a = b.emit(Opcode::Bitcast, Type::F32, {load_var(b, 1)});
  auto n = b.binary(Opcode::IAdd, b.binary(Opcode::And, b.load_uniform(Type::I32, 0), b.i32(15)), b.i32(1));
  auto y0 = b.f32_bits(0x3B800000u);
  auto zero = b.i32(0);
  b.br(loop);
  b.set_block(loop);
  auto h = phi(b, Type::I32, {h0, h0});
  auto y = phi(b, Type::F32, {y0, y0});
  auto j = phi(b, Type::I32, {zero, zero});
  b.emit(Opcode::Budget, Type::Void, {}, 0, 0, 7);
  auto pc = b.unary(Opcode::Popcount, b.binary(Opcode::Xor, h, j));
  auto h1 = b.binary(Opcode::IAdd, pc, b.binary(Opcode::IMul, h, b.i32(3)));
  uint32_t fl = ir::ff::FtzIn | ir::ff::FtzOut;
  auto ay = b.binary(Opcode::FMul, a, y, 0, fl);
  auto two_minus = b.binary(Opcode::FSub, b.f32_bits(0x40000000u), ay, 0, fl);
  auto y1 = b.binary(Opcode::FMul, y, two_minus, 0, fl);
  auto j1 = b.binary(Opcode::IAdd, j, b.i32(1));
  auto done = b.icmp(ir::IntPred::Eq, j1, n);
  b.cond_br(done, exit, loop);
  f.insts[h].args[1] = h1;
  f.insts[y].args[1] = y1;
  f.insts[j].args[1] = j1;
  b.set_block(exit);
  store_var(b, 0, h1);
  store_var(b, 2, b.emit(Opcode::Bitcast, Type::I32, {y}));
  store_var(b, 3, j1);
  b.ret();
  f.compute_preds();
  REQUIRE(ir::verify(f) == "");
  REQUIRE(is_strip_loop(f, loop));
  std::mt19937_64 rng(13);
  for (uint32_t n : {0u, 3u, 15u})
    for (uint32_t mask : entry_masks(rng)) {
      RunSpec spec = spec_for(f, rng, n, mask);
      for (unsigned l = 0; l < 32; ++l) set_lane(spec.vars, f, 1, l, 0x3F800000u + (rng() & 0x00FFFFFFu));
      check_all_tiers(f, spec, "n " + std::to_string(n) + " mask " + std::to_string(mask));
    }
}

TEST_CASE("backend: strip-outer loop with more phis and invariants than registers spills correctly") {
  // 30 phis p (p_j' = p_j * inv_{j%20} + p_{(j+7)%30} ^ const), three more in
  // a rotation (q0 <- q1 <- q2 <- q0), 20 invariants from vars: more than
  // either tier's registers, so phis live in their slots and body values spill.
  constexpr int kPhis = 30, kInv = 20;
  ir::Function f;
  for (int i = 0; i < kInv; ++i) f.add_var("inv" + std::to_string(i), Type::I32);
  for (int i = 0; i < kPhis + 3; ++i) f.add_var("p" + std::to_string(i), Type::I32);
  f.uniform_bytes = 4;
  auto entry = f.add_block("entry"), loop = f.add_block("loop"), exit = f.add_block("exit");
  ir::Builder b(f);
  b.set_block(entry);
  std::vector<ir::ValueId> inv, init;
  for (int i = 0; i < kInv; ++i) inv.push_back(load_var(b, uint32_t(i)));
  for (int i = 0; i < kPhis + 3; ++i) init.push_back(load_var(b, uint32_t(kInv + i)));
  auto n = b.binary(Opcode::IAdd, b.binary(Opcode::And, b.load_uniform(Type::I32, 0), b.i32(7)), b.i32(1));
  auto zero = b.i32(0);
  b.br(loop);
  b.set_block(loop);
  std::vector<ir::ValueId> p;
  for (int i = 0; i < kPhis + 3; ++i) p.push_back(phi(b, Type::I32, {init[size_t(i)], init[size_t(i)]}));
  auto i = phi(b, Type::I32, {zero, zero});
  b.emit(Opcode::Budget, Type::Void, {}, 0, 0, 100);
  std::vector<ir::ValueId> next;
  for (int j = 0; j < kPhis; ++j) {
    auto m = b.binary(Opcode::IMul, p[size_t(j)], inv[size_t(j % kInv)]);
    auto x = b.binary(Opcode::Xor, p[size_t((j + 7) % kPhis)], b.i32(0x1000193u * uint32_t(j + 1)));
    next.push_back(b.binary(Opcode::IAdd, m, x));
  }
  auto i1 = b.binary(Opcode::IAdd, i, b.i32(1));
  auto more = b.icmp(ir::IntPred::Ult, i1, n);
  b.cond_br(more, loop, exit);
  for (int j = 0; j < kPhis; ++j) f.insts[p[size_t(j)]].args[1] = next[size_t(j)];
  for (int r = 0; r < 3; ++r) f.insts[p[size_t(kPhis + r)]].args[1] = p[size_t(kPhis + (r + 1) % 3)];
  f.insts[i].args[1] = i1;
  b.set_block(exit);
  for (int j = 0; j < kPhis + 3; ++j) store_var(b, uint32_t(kInv + j), p[size_t(j)]);
  store_var(b, 0, next[0]);
  b.ret();
  f.compute_preds();
  REQUIRE(ir::verify(f) == "");
  REQUIRE(is_strip_loop(f, loop));
  std::mt19937_64 rng(14);
  for (uint32_t n : {0u, 1u, 2u, 7u})
    for (uint32_t mask : {~0u, 0x00010000u, 0x80000000u, uint32_t(rng()) | 4u})
      check_all_tiers(f, spec_for(f, rng, n, mask), "n " + std::to_string(n) + " mask " + std::to_string(mask));
}

TEST_CASE("backend: random strip-outer loops match the interpreter, at watchdog faults too") {
  // Random single-block counted loops: 1..36 i32 phis whose back-edge
  // operands are body values, other phis (swaps, cycles), values from before
  // the loop or undef; bodies of integer, select, f32 (FTZ or not), popcount
  // (a helper call), const, load_var and store_var ops; random launch masks,
  // trip counts and budgets (some run out inside the loop).
  // Every third program carries the unlaunched-lanes contract
  // (Function::unlaunched_lanes_free): its back edge is plain moves, each
  // operand moved into its phi's home as soon as nothing reads the phi any
  // more, and the strips after the first skip the values only the branch
  // reads (a second counter below); only launched lanes are compared.
  std::mt19937_64 rng(15);
  const int programs = light() ? 40 : 400;
  int runs = 0;
  for (int prog = 0; prog < programs; ++prog) {
    ir::Function f;
    f.unlaunched_lanes_free = prog % 3 == 2;
    constexpr int kVars = 8;
    for (int v = 0; v < kVars; ++v) f.add_var("v" + std::to_string(v), Type::I32);
    f.uniform_bytes = 4;
    auto entry = f.add_block("entry"), loop = f.add_block("loop"), exit = f.add_block("exit");
    ir::Builder b(f);
    auto pick = [&](const std::vector<ir::ValueId>& pool) { return pool[rng() % pool.size()]; };
    b.set_block(entry);
    std::vector<ir::ValueId> outside;
    for (int v = 0; v < kVars; ++v) outside.push_back(load_var(b, uint32_t(v)));
    outside.push_back(b.i32(uint32_t(rng())));
    auto undef = b.emit(Opcode::Undef, Type::I32, {});
    auto n = b.binary(Opcode::IAdd, b.binary(Opcode::And, b.load_uniform(Type::I32, 0), b.i32(15)), b.i32(1));
    auto zero = b.i32(0);
    b.br(loop);
    b.set_block(loop);
    const int nphis = 1 + int(rng() % 36);
    std::vector<ir::ValueId> phis;
    for (int i = 0; i < nphis; ++i) {
      auto init = pick(outside);
      phis.push_back(phi(b, Type::I32, {init, init}));
    }
    auto i = phi(b, Type::I32, {zero, zero});
    // A down-counter read by nothing but the branch (a PICA200 LOOP's): dead
    // in the strips after the first.
    const bool down_counter = f.unlaunched_lanes_free && rng() % 2;
    const ir::ValueId left = down_counter ? phi(b, Type::I32, {n, n}) : ir::kNoValue;
    const uint64_t cost = 1 + rng() % 5;
    b.emit(Opcode::Budget, Type::Void, {}, 0, 0, cost);
    std::vector<ir::ValueId> pool = phis, body;
    pool.insert(pool.end(), outside.begin(), outside.end());
    pool.push_back(i);
    const int nops = 4 + int(rng() % 50);
    for (int k = 0; k < nops; ++k) {
      unsigned kind = unsigned(rng() % 100);
      ir::ValueId r = ir::kNoValue;
      if (kind < 40) {
        static const Opcode ops[] = {Opcode::IAdd, Opcode::ISub, Opcode::IMul, Opcode::Xor, Opcode::And, Opcode::Or};
        r = b.binary(ops[rng() % std::size(ops)], pick(pool), pick(pool));
      } else if (kind < 52) {
        auto c = b.icmp(ir::IntPred(rng() % 10), pick(pool), pick(pool));
        r = b.select(c, pick(pool), pick(pool));
      } else if (kind < 70) {
        uint32_t fl = (rng() % 2) ? (ir::ff::FtzIn | ir::ff::FtzOut) : 0u;
        fl |= uint32_t(rng() % 3) << ir::ff::NanShift;
        auto x = b.emit(Opcode::Bitcast, Type::F32, {pick(pool)});
        auto y = b.emit(Opcode::Bitcast, Type::F32, {pick(pool)});
        auto z = b.binary(rng() % 2 ? Opcode::FMul : Opcode::FAdd, x, y, 0, fl);
        r = b.emit(Opcode::Bitcast, Type::I32, {z});
      } else if (kind < 76) {
        r = b.unary(Opcode::Popcount, pick(pool));
      } else if (kind < 84) {
        r = b.i32(uint32_t(rng()));
      } else if (kind < 92) {
        store_var(b, uint32_t(rng() % kVars), pick(pool));
        continue;
      } else {
        r = load_var(b, uint32_t(rng() % kVars));
      }
      pool.push_back(r);
      body.push_back(r);
    }
    auto i1 = b.binary(Opcode::IAdd, i, b.i32(1));
    bool leave_on_true = rng() % 2;
    ir::ValueId c;
    if (down_counter) {
      auto left1 = b.binary(Opcode::ISub, left, b.i32(1));
      f.insts[left].args[1] = left1;
      c = b.icmp(leave_on_true ? ir::IntPred::Eq : ir::IntPred::Ne, left1, zero);
    } else {
      c = b.icmp(leave_on_true ? ir::IntPred::Eq : ir::IntPred::Ult, i1, n);
    }
    if (leave_on_true) b.cond_br(c, exit, loop);
    else b.cond_br(c, loop, exit);
    f.insts[i].args[1] = i1;
    for (ir::ValueId p : phis) {
      unsigned k = unsigned(rng() % 100);
      ir::ValueId a = body.empty() || k >= 70 ? (k < 85 ? pick(phis) : k < 95 ? pick(outside) : undef) : pick(body);
      f.insts[p].args[1] = a;
    }
    b.set_block(exit);
    for (int v = 0; v < kVars; ++v)
      if (rng() % 3) store_var(b, uint32_t(v), pick(pool));
    store_var(b, 0, i1);
    b.ret();
    f.compute_preds();
    REQUIRE(ir::verify(f) == "");
    REQUIRE(is_strip_loop(f, loop));
    for (int run = 0; run < 4; ++run) {
      uint32_t mask = run == 0 ? ~0u : run == 1 ? 1u << (rng() % 32) : uint32_t(rng()) | 1u << (rng() % 32);
      RunSpec spec = spec_for(f, rng, uint32_t(rng()), mask);
      if (run == 3) spec.budget = int64_t(rng() % (16 * cost));  // may run out inside the loop
      for (Tier t : host_tiers()) {
        std::string d = compare_state(f, spec, t, false);
        CHECK_MESSAGE(d.empty(), "program " << prog << " run " << run << " on " << tier_name(t) << ": " << d);
        ++runs;
      }
    }
  }
  CHECK(runs == programs * 4 * int(host_tiers().size()));
}

// Strip-interleaved loops (docs/backend_x64.md, "Strip-interleaved loops"):
// a loop body with no helper call and no lane_id / entry_mask runs two
// strips per iteration, the first launched lane's strip deciding the branch.

TEST_CASE("backend: interleaved loop: the first launched lane decides the trip count of every strip") {
  // n comes from a var: equal in the launched lanes, different (and larger)
  // in the lanes that were not launched, so a strip that read its own
  // condition would run a different number of iterations. acc = acc * 3 + x
  // is a loop-carried chain per strip; the trace var is stored every
  // iteration.
  ir::Function f;
  for (const char* name : {"n", "x", "acc", "trace"}) f.add_var(name, Type::I32);
  auto entry = f.add_block("entry"), loop = f.add_block("loop"), exit = f.add_block("exit");
  ir::Builder b(f);
  b.set_block(entry);
  auto n = load_var(b, 0), x = load_var(b, 1), acc0 = load_var(b, 2);
  auto zero = b.i32(0);
  b.br(loop);
  b.set_block(loop);
  auto i = phi(b, Type::I32, {zero, zero});
  auto acc = phi(b, Type::I32, {acc0, acc0});
  b.emit(Opcode::Budget, Type::Void, {}, 0, 0, 2);
  auto acc1 = b.binary(Opcode::IAdd, b.binary(Opcode::IMul, acc, b.i32(3)), x);
  store_var(b, 3, b.binary(Opcode::Xor, acc1, i));
  auto i1 = b.binary(Opcode::IAdd, i, b.i32(1));
  auto more = b.icmp(ir::IntPred::Ult, i1, n);
  b.cond_br(more, loop, exit);
  f.insts[i].args[1] = i1;
  f.insts[acc].args[1] = acc1;
  b.set_block(exit);
  store_var(b, 2, acc1);
  store_var(b, 0, i1);
  b.ret();
  f.compute_preds();
  REQUIRE(ir::verify(f) == "");
  REQUIRE(is_strip_loop(f, loop));
  std::mt19937_64 rng(16);
  for (bool free_lanes : {false, true}) {
    f.unlaunched_lanes_free = free_lanes;
    for (uint32_t trips : {1u, 2u, 9u})
      for (uint32_t mask : entry_masks(rng)) {
        RunSpec spec = spec_for(f, rng, 0, mask);
        for (unsigned l = 0; l < 32; ++l) set_lane(spec.vars, f, 0, l, mask >> l & 1 ? trips : trips + 1 + l % 5);
        for (Tier t : host_tiers()) {
          std::string d = compare_state(f, spec, t, false);
          CHECK_MESSAGE(d.empty(), "trips " << trips << " mask " << mask << " on " << tier_name(t) << ": " << d);
        }
      }
  }
}

TEST_CASE("backend: interleaved loop: a load_uniform in the body faults like the interpreter, before any store") {
  // The body reads u[0] every iteration and stores to a var: with no uniform
  // block the first iteration's load faults (Unsupported or OutOfBounds as
  // the interpreter reports it) and no var changes; with a block the loop
  // runs, and a small budget stops it inside with a watchdog fault.
  ir::Function f;
  for (const char* name : {"x", "trace"}) f.add_var(name, Type::I32);
  f.uniform_bytes = 8;
  auto entry = f.add_block("entry"), loop = f.add_block("loop"), exit = f.add_block("exit");
  ir::Builder b(f);
  b.set_block(entry);
  auto x0 = load_var(b, 0);
  auto zero = b.i32(0);
  b.br(loop);
  b.set_block(loop);
  auto i = phi(b, Type::I32, {zero, zero});
  auto x = phi(b, Type::I32, {x0, x0});
  b.emit(Opcode::Budget, Type::Void, {}, 0, 0, 3);
  auto u = b.load_uniform(Type::I32, 4);
  auto x1 = b.binary(Opcode::Xor, b.binary(Opcode::IMul, x, u), i);
  store_var(b, 1, x1);
  auto i1 = b.binary(Opcode::IAdd, i, b.i32(1));
  auto n = b.binary(Opcode::IAdd, b.binary(Opcode::And, b.load_uniform(Type::I32, 0), b.i32(7)), b.i32(1));
  auto more = b.icmp(ir::IntPred::Ult, i1, n);
  b.cond_br(more, loop, exit);
  f.insts[i].args[1] = i1;
  f.insts[x].args[1] = x1;
  b.set_block(exit);
  store_var(b, 0, x1);
  b.ret();
  f.compute_preds();
  REQUIRE(ir::verify(f) == "");
  REQUIRE(is_strip_loop(f, loop));
  std::mt19937_64 rng(17);
  int faults = 0;
  for (uint32_t mask : entry_masks(rng))
    for (int variant = 0; variant < 3; ++variant) {
      RunSpec spec = spec_for(f, rng, 7, mask);
      spec.uniforms.resize(8);
      uint32_t odd = uint32_t(rng()) | 1u;
      std::memcpy(spec.uniforms.data() + 4, &odd, 4);
      if (variant == 0) spec.uniforms.clear();  // no uniform block: the body's load faults
      if (variant == 2) spec.budget = int64_t(rng() % 20);  // runs out inside the loop (8 iterations cost 24)
      for (Tier t : host_tiers()) {
        std::string d = compare_state(f, spec, t, false);
        CHECK_MESSAGE(d.empty(), "variant " << variant << " mask " << mask << " on " << tier_name(t) << ": " << d);
        faults += variant != 1;
      }
    }
  CHECK(faults > 0);
}

TEST_CASE("backend: loops reading lane_id or calling a helper stay strip-outer and match the interpreter") {
  // lane_id (and entry_mask) address the strip through r14, a helper call
  // clobbers every register: both keep the one-strip-at-a-time form.
  for (bool helper : {false, true}) {
    ir::Function f;
    for (const char* name : {"x", "trace"}) f.add_var(name, Type::I32);
    f.uniform_bytes = 4;
    auto entry = f.add_block("entry"), loop = f.add_block("loop"), exit = f.add_block("exit");
    ir::Builder b(f);
    b.set_block(entry);
    auto x0 = load_var(b, 0);
    auto n = b.binary(Opcode::IAdd, b.binary(Opcode::And, b.load_uniform(Type::I32, 0), b.i32(15)), b.i32(1));
    auto zero = b.i32(0);
    b.br(loop);
    b.set_block(loop);
    auto i = phi(b, Type::I32, {zero, zero});
    auto x = phi(b, Type::I32, {x0, x0});
    b.emit(Opcode::Budget, Type::Void, {}, 0, 0, 1);
    auto lane = helper ? b.unary(Opcode::Popcount, x) : b.emit(Opcode::LaneId, Type::I32, {});
    auto x1 = b.binary(Opcode::IAdd, b.binary(Opcode::IMul, x, b.i32(5)), b.binary(Opcode::Xor, lane, i));
    store_var(b, 1, x1);
    auto i1 = b.binary(Opcode::IAdd, i, b.i32(1));
    auto more = b.icmp(ir::IntPred::Ult, i1, n);
    b.cond_br(more, loop, exit);
    f.insts[i].args[1] = i1;
    f.insts[x].args[1] = x1;
    b.set_block(exit);
    store_var(b, 0, x1);
    b.ret();
    f.compute_preds();
    REQUIRE(ir::verify(f) == "");
    REQUIRE(is_strip_loop(f, loop));
    std::mt19937_64 rng(18);
    for (uint32_t n : {0u, 5u, 15u})
      for (uint32_t mask : entry_masks(rng))
        check_all_tiers(f, spec_for(f, rng, n, mask), std::string(helper ? "helper" : "lane_id") + " n " +
                                                          std::to_string(n) + " mask " + std::to_string(mask));
  }
}

TEST_CASE("backend: interleaved loop with more live values than a strip's registers spills correctly") {
  // A long multiply chain makes the loop latency-bound (so AVX-512 runs it
  // strip-interleaved: its two phis fit in a strip's half of the registers),
  // while 12 products of the phi, all live at once, and 16 invariants from
  // vars overflow that half: body values spill to their slots and reload.
  constexpr int kProducts = 12, kInv = 16;
  ir::Function f;
  for (int i = 0; i < kInv; ++i) f.add_var("inv" + std::to_string(i), Type::I32);
  f.add_var("h", Type::I32);
  f.add_var("trace", Type::I32);
  f.uniform_bytes = 4;
  auto entry = f.add_block("entry"), loop = f.add_block("loop"), exit = f.add_block("exit");
  ir::Builder b(f);
  b.set_block(entry);
  std::vector<ir::ValueId> inv;
  for (int i = 0; i < kInv; ++i) inv.push_back(load_var(b, uint32_t(i)));
  auto h0 = load_var(b, kInv);
  auto n = b.binary(Opcode::IAdd, b.binary(Opcode::And, b.load_uniform(Type::I32, 0), b.i32(7)), b.i32(1));
  auto zero = b.i32(0);
  b.br(loop);
  b.set_block(loop);
  auto h = phi(b, Type::I32, {h0, h0});
  auto i = phi(b, Type::I32, {zero, zero});
  b.emit(Opcode::Budget, Type::Void, {}, 0, 0, 4);
  std::vector<ir::ValueId> t;
  for (int k = 0; k < kProducts; ++k) t.push_back(b.binary(Opcode::IMul, h, inv[size_t(k)]));
  ir::ValueId x = t[0];
  for (int k = 1; k < kProducts; ++k)  // read in reverse: every product stays live until here
    x = b.binary(k % 2 ? Opcode::Xor : Opcode::IAdd, x, t[size_t(kProducts - k)]);
  for (int k = 0; k < 4; ++k) x = b.binary(Opcode::IMul, b.binary(Opcode::Xor, x, inv[size_t(kProducts + k)]), inv[size_t(k)]);
  store_var(b, kInv + 1, b.binary(Opcode::Xor, x, i));
  auto i1 = b.binary(Opcode::IAdd, i, b.i32(1));
  auto more = b.icmp(ir::IntPred::Ult, i1, n);
  b.cond_br(more, loop, exit);
  f.insts[h].args[1] = x;
  f.insts[i].args[1] = i1;
  b.set_block(exit);
  store_var(b, kInv, x);
  b.ret();
  f.compute_preds();
  REQUIRE(ir::verify(f) == "");
  REQUIRE(is_strip_loop(f, loop));
  std::mt19937_64 rng(19);
  for (bool free_lanes : {false, true}) {
    f.unlaunched_lanes_free = free_lanes;
    for (Tier t : host_tiers())
      if (std::string(tier_name(t)) == "jit-avx512") {  // the interleaved form's set-up: the partner strip in rbp
        JitOptions o;
        o.tier = t;
        std::string err;
        auto cf = compile(f, o, &err);
        REQUIRE_MESSAGE(cf, err);
        const std::string code = cf->disassemble();
        CHECK(code.find("xor ebp, 0x") != std::string::npos);
        CHECK(code.find("[r12+rbp*1") != std::string::npos);  // the partner strip reads its slots
      }
    for (uint32_t n : {0u, 1u, 2u, 7u})
      for (uint32_t mask : entry_masks(rng)) {
        RunSpec spec = spec_for(f, rng, n, mask);
        if (mask == 1u) spec.budget = 9;  // a watchdog fault after two iterations
        for (Tier t : host_tiers()) {
          std::string d = compare_state(f, spec, t, false);
          CHECK_MESSAGE(d.empty(), "n " << n << " mask " << mask << " on " << tier_name(t) << ": " << d);
        }
      }
  }
}

}  // namespace gpurc_test_backend_loops
