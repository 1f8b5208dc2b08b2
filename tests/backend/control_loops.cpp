// Single-block loops with uniform control (backend_x64/loops.cpp,
// emit_control_loop; docs/backend_x64.md, "Uniform loop control"): under the
// unlaunched-lanes contract the values that decide the branch and the
// lane-equal values only they and the code after the loop read (a G13
// while_icmp loop's counter and r0l field) run once per iteration in a
// control loop, and every strip then runs the rest of the body a counted
// number of times. Checked against the interpreter: random loops with
// uniform chains (16-bit fields through extract16 / insert16, selects on
// lane-equal compares), varying chains that read some uniform values, chains
// shaped like uniform ones but started from per-lane values, the contract
// off, launch masks with the first lane in every strip, watchdog faults
// inside the loop, helper calls in the body, and the uniform block missing.
#include <doctest/doctest.h>

#include "backend_common/plan.h"
#include "compare.h"

namespace gpurc_test_backend_control_loops {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::backend;
using namespace gpurc::backend::test;
using ir::Opcode;
using ir::Type;

namespace {

std::vector<uint32_t> control_masks(std::mt19937_64& rng) {
  std::vector<uint32_t> m = {~0u, 1u, 0x80000000u, 0x00010000u, 0x00000100u, 0x01000000u, 0xFFFF0000u, 0x0000FF00u};
  for (int i = 0; i < 3; ++i) m.push_back(uint32_t(rng()) | 1u << (rng() % 32));
  return m;
}

RunSpec control_spec(const ir::Function& f, std::mt19937_64& rng, uint32_t n, uint32_t mask) {
  RunSpec s;
  s.vars.resize(f.vars_bytes());
  fill_random(s.vars, rng);
  s.uniforms.resize(16);
  fill_random(s.uniforms, rng);
  std::memcpy(s.uniforms.data(), &n, 4);
  s.entry_mask = mask;
  s.budget = 1 << 20;
  return s;
}

struct ControlLoop {
  ir::Function f;
  ir::BlockId loop = 0;
};

// A G13-shaped loop: h = h * u4 + u8, h ^= h + (h << 4) (per lane, from a
// var), the counter i (read after the loop: store_var), the 16-bit field r
// of r0l (extract16 / select / insert16, read after the loop), leaving when
// the field is 0. `contract`: Function::unlaunched_lanes_free. `varying_j`:
// a second counter j and field s built like i and r (stored after the loop
// too) but started from a per-lane var, so not lane-equal: the strips
// compute them (the branch stays uniform: it follows r). `i_in_hash`: the hash also adds i
// (a uniform value both halves of the split compute). `helper`: a popcount
// (an eval helper) in the hash. `uniform_in_loop`: the multiplier is a
// load_uniform of the loop's block.
ControlLoop g13_shaped(bool contract, bool varying_j, bool i_in_hash, bool helper, bool uniform_in_loop) {
  ControlLoop c;
  ir::Function& f = c.f;
  f.unlaunched_lanes_free = contract;
  for (const char* name : {"h", "i", "r", "start", "j", "s"}) f.add_var(name, Type::I32);
  f.uniform_bytes = 16;
  auto entry = f.add_block("entry"), loop = f.add_block("loop"), exit = f.add_block("exit");
  c.loop = loop;
  ir::Builder b(f);
  b.set_block(entry);
  auto h0 = load_var(b, 0);
  auto n = b.binary(Opcode::IAdd, b.binary(Opcode::And, b.load_uniform(Type::I32, 0), b.i32(31)), b.i32(1));
  auto mul_outside = b.load_uniform(Type::I32, 4);
  auto add = b.load_uniform(Type::I32, 8);
  auto i0 = b.i32(0);
  auto j0 = b.binary(Opcode::And, load_var(b, 3), b.i32(7));
  auto s0 = b.binary(Opcode::Or, b.binary(Opcode::And, load_var(b, 3), b.i32(0xFFFF0000u)), b.i32(1));
  auto r0 = b.i32(0x00010000u);
  auto z16 = b.i16(0), one16 = b.i16(1);
  b.br(loop);
  b.set_block(loop);
  auto h = phi(b, Type::I32, {h0, h0});
  auto i = phi(b, Type::I32, {i0, i0});
  auto r = phi(b, Type::I32, {r0, r0});
  const ir::ValueId j = varying_j ? phi(b, Type::I32, {j0, j0}) : ir::kNoValue;
  const ir::ValueId sf = varying_j ? phi(b, Type::I32, {s0, s0}) : ir::kNoValue;
  b.emit(Opcode::Budget, Type::Void, {}, 0, 0, 3);
  auto mul = uniform_in_loop ? b.load_uniform(Type::I32, 4) : mul_outside;
  auto x = b.binary(Opcode::IAdd, b.binary(Opcode::IMul, h, mul), add);
  if (helper) x = b.binary(Opcode::IAdd, x, b.unary(Opcode::Popcount, x));
  if (i_in_hash) x = b.binary(Opcode::IAdd, x, i);
  auto h1 = b.binary(Opcode::Xor, x, b.binary(Opcode::IAdd, x, b.binary(Opcode::Shl, x, b.i32(4))));
  auto i1 = b.binary(Opcode::IAdd, i, b.i32(1));
  auto more = b.icmp(ir::IntPred::Ult, i1, n);
  auto field = b.emit(Opcode::Extract16, Type::I16, {r}, 0, 0, 0);
  auto active = b.icmp(ir::IntPred::Ult, field, one16);
  auto next = b.select(active, b.select(more, z16, one16), field);
  auto r1 = b.emit(Opcode::Insert16, Type::I32, {r, next}, 0, 0, 0);
  ir::ValueId j1 = ir::kNoValue, s1 = ir::kNoValue;
  if (varying_j) {
    j1 = b.binary(Opcode::IAdd, j, b.i32(1));
    auto jmore = b.icmp(ir::IntPred::Ult, j1, n);
    auto sfield = b.emit(Opcode::Extract16, Type::I16, {sf}, 0, 0, 0);
    auto sactive = b.icmp(ir::IntPred::Ult, sfield, one16);
    auto snext = b.select(sactive, b.select(jmore, z16, one16), sfield);
    s1 = b.emit(Opcode::Insert16, Type::I32, {sf, snext}, 0, 0, 0);
  }
  auto again = b.icmp(ir::IntPred::Eq, next, z16);
  b.cond_br(again, loop, exit);
  f.insts[h].args[1] = h1;
  f.insts[i].args[1] = i1;
  f.insts[r].args[1] = r1;
  if (varying_j) {
    f.insts[j].args[1] = j1;
    f.insts[sf].args[1] = s1;
  }
  b.set_block(exit);
  store_var(b, 0, h1);
  store_var(b, 1, i1);
  store_var(b, 2, r1);
  if (varying_j) {
    store_var(b, 4, j1);
    store_var(b, 5, s1);
  }
  b.ret();
  f.compute_preds();
  return c;
}

}  // namespace

TEST_CASE("backend: G13-shaped loops with uniform control match the interpreter") {
  std::mt19937_64 rng(1201);
  int cases = 0;
  for (int shape = 0; shape < 32; ++shape) {
    const bool contract = shape & 1, varying_j = shape & 2, i_in_hash = shape & 4, helper = shape & 8,
               uniform_in_loop = shape & 16;
    ControlLoop c = g13_shaped(contract, varying_j, i_in_hash, helper, uniform_in_loop);
    REQUIRE(ir::verify(c.f) == "");
    REQUIRE(make_plan(c.f).strip_loop_of[c.loop] >= 0);
    const std::string what = "shape " + std::to_string(shape);
    for (uint32_t n : {0u, 1u, 6u, 31u})
      for (uint32_t mask : control_masks(rng)) {
        RunSpec s = control_spec(c.f, rng, n, mask);
        check_all_tiers(c.f, s, what + " n " + std::to_string(n) + " mask " + std::to_string(mask));
        // A watchdog fault inside the loop: 3 per iteration, after 0..n+1 iterations.
        s.budget = int64_t(rng() % (3 * (n + 2)));
        check_all_tiers(c.f, s, what + " budget " + std::to_string(s.budget));
        ++cases;
      }
    // No uniform block: the entry's load_uniform faults before the loop.
    RunSpec s = control_spec(c.f, rng, 5, ~0u);
    s.uniforms.clear();
    check_all_tiers(c.f, s, what + " no uniform block");
  }
  CHECK(cases == 32 * 4 * 11);
}

TEST_CASE("backend: random loops with uniform and varying chains match the interpreter") {
  // Random single-block loops: varying phis (from vars) and lane-equal phis
  // (from constants and a uniform; under the contract these may form the
  // control loop), bodies mixing varying ops over both kinds with uniform
  // ops (integer, compares, selects, extract16 / insert16) over the
  // lane-equal ones only; some "uniform" phis start from a per-lane var (the
  // same ops, but not lane-equal); the counter and the lane-equal values are
  // stored after the loop; random masks and budgets.
  std::mt19937_64 rng(1202);
  const int programs = light() ? 60 : 400;
  for (int prog = 0; prog < programs; ++prog) {
    ir::Function f;
    f.unlaunched_lanes_free = prog % 4 != 3;
    constexpr int kVars = 8;
    for (int v = 0; v < kVars; ++v) f.add_var("v" + std::to_string(v), Type::I32);
    f.uniform_bytes = 16;
    auto entry = f.add_block("entry"), loop = f.add_block("loop"), exit = f.add_block("exit");
    ir::Builder b(f);
    auto pick = [&](const std::vector<ir::ValueId>& pool) { return pool[rng() % pool.size()]; };
    b.set_block(entry);
    std::vector<ir::ValueId> var_in, uni_in;
    for (int v = 0; v < kVars; ++v) var_in.push_back(load_var(b, uint32_t(v)));
    for (int k = 0; k < 3; ++k) uni_in.push_back(b.i32(uint32_t(rng()) & (rng() % 2 ? 0xFFu : ~0u)));
    uni_in.push_back(b.load_uniform(Type::I32, 4));
    auto n = b.binary(Opcode::IAdd, b.binary(Opcode::And, b.load_uniform(Type::I32, 0), b.i32(15)), b.i32(1));
    uni_in.push_back(n);
    auto zero = b.i32(0);
    b.br(loop);
    b.set_block(loop);
    std::vector<ir::ValueId> vphis, uphis;
    const int nv = 1 + int(rng() % 4), nu = 1 + int(rng() % (prog % 2 ? 4 : 10));  // (many: some live in slots)
    for (int k = 0; k < nv; ++k) {
      auto init = pick(var_in);
      vphis.push_back(phi(b, Type::I32, {init, init}));
    }
    for (int k = 0; k < nu; ++k) {
      auto init = rng() % 4 == 0 ? pick(var_in) : pick(uni_in);  // sometimes per-lane after all
      uphis.push_back(phi(b, Type::I32, {init, init}));
    }
    auto i = phi(b, Type::I32, {zero, zero});
    const uint64_t cost = 1 + rng() % 4;
    b.emit(Opcode::Budget, Type::Void, {}, 0, 0, cost);
    std::vector<ir::ValueId> upool = uphis, vpool = vphis, ubody, vbody;
    upool.insert(upool.end(), uni_in.begin(), uni_in.end());
    upool.push_back(i);
    vpool.insert(vpool.end(), var_in.begin(), var_in.end());
    const bool varying_reads_uniform = rng() % 2;
    const int nops = 4 + int(rng() % 30);
    for (int k = 0; k < nops; ++k) {
      const unsigned kind = unsigned(rng() % 100);
      static const Opcode ops[] = {Opcode::IAdd, Opcode::ISub, Opcode::IMul, Opcode::Xor, Opcode::And, Opcode::Or};
      if (kind < 35) {
        std::vector<ir::ValueId> from = vpool;
        if (varying_reads_uniform) from.insert(from.end(), upool.begin(), upool.end());
        auto r = b.binary(ops[rng() % std::size(ops)], pick(vpool), pick(from));
        if (rng() % 4 == 0) r = b.unary(Opcode::Popcount, r);  // a helper call
        vpool.push_back(r);
        vbody.push_back(r);
      } else if (kind < 55) {
        auto r = b.binary(ops[rng() % std::size(ops)], pick(upool), pick(upool));
        upool.push_back(r);
        ubody.push_back(r);
      } else if (kind < 70) {
        auto c = b.icmp(ir::IntPred(rng() % 10), pick(upool), pick(upool));
        auto r = b.select(c, pick(upool), pick(upool));
        upool.push_back(r);
        ubody.push_back(r);
      } else if (kind < 82) {  // a 16-bit field, as G13's r0l
        auto base = pick(upool);
        const uint64_t half = rng() % 2;
        auto fld = b.emit(Opcode::Extract16, Type::I16, {base}, 0, 0, half);
        auto c = b.icmp(ir::IntPred(rng() % 10), fld, b.i16(uint32_t(rng() % 3)));
        auto val = b.select(c, b.i16(uint32_t(rng())), fld);
        auto r = b.emit(Opcode::Insert16, Type::I32, {pick(upool), val}, 0, 0, half);
        upool.push_back(r);
        ubody.push_back(r);
      } else if (kind < 90) {
        store_var(b, uint32_t(rng() % kVars), pick(rng() % 2 ? vpool : upool));
      } else {
        auto c = b.icmp(ir::IntPred(rng() % 10), pick(upool), pick(upool));  // a uniform choice of varying values
        auto r = b.select(c, pick(vpool), pick(vpool));
        vpool.push_back(r);
        vbody.push_back(r);
      }
    }
    auto i1 = b.binary(Opcode::IAdd, i, b.i32(1));
    const bool leave_on_true = rng() % 2;
    auto c = b.icmp(leave_on_true ? ir::IntPred::Eq : ir::IntPred::Ult, i1, n);
    if (leave_on_true) b.cond_br(c, exit, loop);
    else b.cond_br(c, loop, exit);
    f.insts[i].args[1] = i1;
    for (ir::ValueId p : vphis) f.insts[p].args[1] = vbody.empty() || rng() % 5 == 0 ? pick(vphis) : pick(vbody);
    for (ir::ValueId p : uphis) f.insts[p].args[1] = ubody.empty() || rng() % 5 == 0 ? pick(uphis) : pick(ubody);
    b.set_block(exit);
    for (int v = 1; v < kVars; ++v)
      if (rng() % 3) store_var(b, uint32_t(v), pick(rng() % 2 ? vpool : upool));
    for (ir::ValueId p : uphis)
      if (rng() % 2) store_var(b, uint32_t(rng() % kVars), p);
    store_var(b, 0, i1);
    b.ret();
    f.compute_preds();
    REQUIRE(ir::verify(f) == "");
    REQUIRE(make_plan(f).strip_loop_of[loop] >= 0);
    for (int run = 0; run < 4; ++run) {
      const uint32_t mask = run == 0 ? ~0u : run == 1 ? 1u << (rng() % 32) : uint32_t(rng()) | 1u << (rng() % 32);
      RunSpec s = control_spec(f, rng, uint32_t(rng()), mask);
      if (run == 3) s.budget = int64_t(rng() % (17 * cost));  // may run out inside the loop
      check_all_tiers(f, s, "program " + std::to_string(prog) + " run " + std::to_string(run));
    }
  }
}

TEST_CASE("backend: a G13 indexed load's deferred base, then a loop reading uniforms, without a uniform block") {
  // The entry block's only load_uniform is the load's base (u & ~3): the
  // indexed fast path leaves it to the fallback (deferred), and the entry
  // block tests the uniform pointer at its top instead (emitter.cpp,
  // entry_uniform_test_), so the loop's load_uniform needs no test. Without
  // a uniform block the run faults at that load_uniform (kind, value id,
  // offset), before the load; with one, load, loop and store match.
  for (bool contract : {false, true}) {
    ir::Function f;
    f.unlaunched_lanes_free = contract;
    for (const char* name : {"x", "h", "i"}) f.add_var(name, Type::I32);
    f.uniform_bytes = 16;
    auto entry = f.add_block("entry"), loop = f.add_block("loop"), exit = f.add_block("exit");
    ir::Builder b(f);
    b.set_block(entry);
    auto x = load_var(b, 0);
    auto mask = b.emit(Opcode::EntryMask, Type::I1, {});
    auto base = b.binary(Opcode::And, b.load_uniform(Type::I64, 0),
                         b.emit(Opcode::Const, Type::I64, {}, 0, 0, ~uint64_t(3)));
    auto scaled = b.emit(Opcode::Shl, Type::I64, {b.emit(Opcode::Zext, Type::I64, {x}), b.i32(2)},
                         uint8_t(ir::ShiftMode::Mask));
    auto v = b.load(Type::I32, ir::Space::Global, ir::AddrClass::Random, b.binary(Opcode::IAdd, base, scaled), mask);
    auto zero = b.i32(0);
    b.br(loop);
    b.set_block(loop);
    auto h = phi(b, Type::I32, {v, v});
    auto i = phi(b, Type::I32, {zero, zero});
    b.emit(Opcode::Budget, Type::Void, {}, 0, 0, 1);
    auto h1 = b.binary(Opcode::Xor, b.binary(Opcode::IMul, h, b.load_uniform(Type::I32, 8)), b.load_uniform(Type::I32, 12));
    auto i1 = b.binary(Opcode::IAdd, i, b.i32(1));
    b.cond_br(b.icmp(ir::IntPred::Ult, i1, b.i32(9)), loop, exit);
    f.insts[h].args[1] = h1;
    f.insts[i].args[1] = i1;
    b.set_block(exit);
    store_var(b, 1, h1);
    store_var(b, 2, i1);
    b.ret();
    f.compute_preds();
    REQUIRE(ir::verify(f) == "");
    std::mt19937_64 rng(1203);
    for (uint32_t mask_bits : {~0u, 0x00010000u, 0x0000FF00u}) {
      RunSpec s;
      s.vars.resize(f.vars_bytes());
      fill_random(s.vars, rng);
      for (unsigned l = 0; l < 32; ++l) set_lane(s.vars, f, 0, l, rng() % 1000);
      s.memory = s.window = true;
      s.memory_bytes = 4096;
      s.memory_init.resize(4096);
      fill_random(s.memory_init, rng);
      s.uniforms.resize(16);
      fill_random(s.uniforms, rng);
      const uint64_t guest = 0x10000;  // TestMemory's base
      std::memcpy(s.uniforms.data(), &guest, 8);
      s.entry_mask = mask_bits;
      check_all_tiers(f, s, "contract " + std::to_string(contract) + " mask " + std::to_string(mask_bits));
      s.uniforms.clear();
      check_all_tiers(f, s, "no uniform block, contract " + std::to_string(contract));
    }
  }
}

TEST_CASE("backend: a loop's branch on an i16 compare of a lane-equal value matches the interpreter") {
  // loop_branch_exit's scalar compare of lane 0 (`cmp ax, imm16`, sixteenth
  // session): every predicate, constants at the 16-bit edges, the field
  // in either half of a counter stepping by a uniform, contract on and off
  // (off: the counter is lane-equal only through its uniform start and step
  // under the contract, so the vector branch is taken there); loops that do
  // not end stop at the watchdog.
  std::mt19937_64 rng(1604);
  int cases = 0;
  for (int pred = 0; pred < 10; ++pred)
    for (uint32_t k : {0u, 1u, 5u, 0x7FFFu, 0x8000u, 0xFFFFu})
      for (int shape = 0; shape < 4; ++shape) {
        const bool contract = shape & 1;
        const uint64_t half = uint64_t(shape >> 1);
        ir::Function f;
        f.unlaunched_lanes_free = contract;
        for (const char* name : {"h", "i"}) f.add_var(name, Type::I32);
        f.uniform_bytes = 16;
        auto entry = f.add_block("entry"), loop = f.add_block("loop"), exit = f.add_block("exit");
        ir::Builder b(f);
        b.set_block(entry);
        auto h0 = load_var(b, 0);
        auto i0 = b.load_uniform(Type::I32, 0);
        auto step = b.load_uniform(Type::I32, 4);
        auto three = b.i32(3), one = b.i32(1);
        auto kc = b.i16(k);
        b.br(loop);
        b.set_block(loop);
        auto h = phi(b, Type::I32, {h0, h0});
        auto i = phi(b, Type::I32, {i0, i0});
        b.emit(Opcode::Budget, Type::Void, {}, 0, 0, 1);
        auto h1 = b.binary(Opcode::IAdd, b.binary(Opcode::IMul, h, three), one);
        auto i1 = b.binary(Opcode::IAdd, i, step);
        auto fld = b.emit(Opcode::Extract16, Type::I16, {i1}, 0, 0, half);
        b.cond_br(b.icmp(ir::IntPred(pred), fld, kc), loop, exit);
        f.insts[h].args[1] = h1;
        f.insts[i].args[1] = i1;
        b.set_block(exit);
        store_var(b, 0, h1);
        store_var(b, 1, i1);
        b.ret();
        f.compute_preds();
        REQUIRE(ir::verify(f) == "");
        for (int run = 0; run < 3; ++run) {
          RunSpec sp;
          sp.vars.resize(f.vars_bytes());
          fill_random(sp.vars, rng);
          sp.uniforms.resize(16);
          fill_random(sp.uniforms, rng);
          // A start near the constant and small steps of either sign (in the chosen half).
          const uint32_t start = (k + uint32_t(rng() % 7) - 3u) & 0xFFFFu;
          const uint32_t stp = uint32_t(int32_t(rng() % 5) - 2);
          const uint32_t i_start = half ? (start << 16 | uint32_t(rng() & 0xFFFF)) : (uint32_t(rng()) & 0xFFFF0000u) | start;
          const uint32_t i_step = half ? stp << 16 : stp;
          std::memcpy(sp.uniforms.data(), &i_start, 4);
          std::memcpy(sp.uniforms.data() + 4, &i_step, 4);
          sp.entry_mask = run == 0 ? ~0u : uint32_t(rng()) | 1u << (rng() % 32);
          sp.budget = 40;
          check_all_tiers(f, sp, "pred " + std::to_string(pred) + " k " + std::to_string(k) + " shape " +
                                     std::to_string(shape) + " run " + std::to_string(run));
          ++cases;
        }
      }
  CHECK(cases == 10 * 6 * 4 * 3);
}

}  // namespace gpurc_test_backend_control_loops
