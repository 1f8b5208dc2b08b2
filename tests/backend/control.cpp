// Control flow, phis, barriers, faults, memory and cross-lane ops: whole
// functions run on every tier and compared with the IR interpreter.
#include <doctest/doctest.h>

#include "backend_common/plan.h"
#include "compare.h"
#include "tests/ir/cluster_program.h"

namespace gpurc_test_backend_control {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::backend;
using namespace gpurc::backend::test;
using ir::Opcode;
using ir::Type;

namespace {

void set_phi_arg(ir::Function& f, ir::ValueId p, size_t i, ir::ValueId v) { f.insts[p].args[i] = v; }

RunSpec random_spec(const ir::Function& f, std::mt19937_64& rng, uint32_t uniform_bytes = 0) {
  RunSpec s;
  s.vars.resize(f.vars_bytes());
  fill_random(s.vars, rng);
  s.uniforms.resize(uniform_bytes);
  fill_random(s.uniforms, rng);
  s.entry_mask = uint32_t(rng()) | 1u << (rng() % 32);
  return s;
}

}  // namespace

TEST_CASE("backend: counted loop with phis (including a swap) matches the interpreter") {
  ir::Function f;
  f.add_var("x", Type::I32);
  f.add_var("y", Type::I32);
  f.add_var("s", Type::I64);
  f.uniform_bytes = 4;
  auto entry = f.add_block("entry"), loop = f.add_block("loop"), exit = f.add_block("exit");
  ir::Builder b(f);
  b.set_block(entry);
  auto x = load_var(b, 0), y = load_var(b, 1), s = load_var(b, 2);
  auto n = b.load_uniform(Type::I32, 0);
  auto n7 = b.binary(Opcode::And, n, b.i32(7));
  auto zero = b.i32(0);
  b.br(loop);
  b.set_block(loop);
  auto i = phi(b, Type::I32, {zero, zero});
  auto a = phi(b, Type::I32, {x, x});
  auto c = phi(b, Type::I32, {y, y});
  auto w = phi(b, Type::I64, {s, s});
  b.emit(Opcode::Budget, Type::Void, {}, 0, 0, 1);
  auto i1 = b.binary(Opcode::IAdd, i, b.i32(1));
  auto w1 = b.binary(Opcode::IAdd, w, b.emit(Opcode::Zext, Type::I64, {a}));
  auto more = b.icmp(ir::IntPred::Ule, i1, n7);
  b.cond_br(more, loop, exit);
  set_phi_arg(f, i, 1, i1);
  set_phi_arg(f, a, 1, c);  // a and c swap every iteration: a parallel copy
  set_phi_arg(f, c, 1, a);
  set_phi_arg(f, w, 1, w1);
  b.set_block(exit);
  store_var(b, 0, a);
  store_var(b, 1, c);
  store_var(b, 2, w1);
  b.ret();
  f.compute_preds();
  REQUIRE(ir::verify(f) == "");
  std::mt19937_64 rng(7);
  for (int k = 0; k < 20; ++k) check_all_tiers(f, random_spec(f, rng, 4), "loop");
}

TEST_CASE("backend: phi operands written to the phi's slot where they are defined, only when nothing can tell") {
  // entry -> (T | E) -> M -> H <-> B, H -> X.
  //   M: p = phi [a from T, e from E]: both written directly (one-successor
  //      blocks that do not read p); q = phi [x, x]: x is not defined in T/E.
  //   H: p2 = phi [w from M, n from B]; r = phi [x from M, p2 from B];
  //      i = phi [0 from M, i2 from B]. w is direct; n is not (r reads the
  //      old p2 on that edge); i2 is not (B reads i).
  ir::Function f;
  for (int v = 0; v < 6; ++v) f.add_var("v" + std::to_string(v), Type::I32);
  f.uniform_bytes = 4;
  auto entry = f.add_block("entry"), bt = f.add_block("T"), be = f.add_block("E"), bm = f.add_block("M"),
       bh = f.add_block("H"), bb = f.add_block("B"), bx = f.add_block("X");
  ir::Builder b(f);
  b.set_block(entry);
  auto x = load_var(b, 0);
  auto zero = b.i32(0);
  auto u = b.load_uniform(Type::I32, 0);
  auto odd = b.icmp(ir::IntPred::Ne, b.binary(Opcode::And, u, b.i32(1)), b.i32(0));
  b.cond_br(odd, bt, be);
  b.set_block(bt);
  auto a = b.binary(Opcode::IAdd, x, b.i32(5));
  b.br(bm);
  b.set_block(be);
  auto e = b.binary(Opcode::IMul, x, b.i32(3));
  b.br(bm);
  b.set_block(bm);
  auto p = phi(b, Type::I32, {a, e});
  auto q = phi(b, Type::I32, {x, x});
  auto w = b.binary(Opcode::IAdd, p, q);
  b.br(bh);
  b.set_block(bh);
  auto p2 = phi(b, Type::I32, {w, w});
  auto r = phi(b, Type::I32, {x, x});
  auto i = phi(b, Type::I32, {zero, zero});
  auto more = b.icmp(ir::IntPred::Ult, i, b.binary(Opcode::And, u, b.i32(6)));
  b.cond_br(more, bb, bx);
  b.set_block(bb);
  auto n = b.binary(Opcode::IAdd, b.binary(Opcode::Xor, i, x), b.i32(7));
  auto i2 = b.binary(Opcode::IAdd, i, b.i32(1));
  b.br(bh);
  set_phi_arg(f, p2, 1, n);
  set_phi_arg(f, r, 1, p2);
  set_phi_arg(f, i, 1, i2);
  b.set_block(bx);
  store_var(b, 1, p);
  store_var(b, 2, q);
  store_var(b, 3, p2);
  store_var(b, 4, r);
  store_var(b, 5, i);
  b.ret();
  f.compute_preds();
  REQUIRE(ir::verify(f) == "");
  Plan plan = make_plan(f);
  using Vs = std::vector<ir::ValueId>;
  CHECK(plan.direct_phis[a] == Vs{p});
  CHECK(plan.direct_phis[e] == Vs{p});
  CHECK(plan.direct_phis[w] == Vs{p2});
  CHECK(plan.direct_phis[x].empty());
  CHECK(plan.direct_phis[n].empty());
  CHECK(plan.direct_phis[i2].empty());
  CHECK_FALSE(plan.escapes[a]);
  CHECK_FALSE(plan.escapes[w]);
  CHECK(plan.escapes[n]);
  // Partial launch masks: lanes not launched must read 0 in every phi.
  std::mt19937_64 rng(17);
  for (int k = 0; k < 24; ++k) check_all_tiers(f, random_spec(f, rng, 4), "direct phi writes k " + std::to_string(k));
}

TEST_CASE("backend: any/all read only by the cond_br after it branch from a register") {
  // extra_use: the vote is also stored in the taken block, so it needs its
  // slot (written for all lanes); otherwise it has none and the frame is one
  // 4-byte slot smaller.
  for (Opcode vote : {Opcode::Any, Opcode::All}) {
    size_t frame[2] = {0, 0};
    for (int extra_use = 0; extra_use < 2; ++extra_use) {
      ir::Function f;
      f.add_var("p", Type::I1);
      f.add_var("m", Type::I1);
      f.add_var("seen", Type::I1);
      f.add_var("out", Type::I32);
      auto entry = f.add_block("entry"), bt = f.add_block("T"), be = f.add_block("E");
      ir::Builder b(f);
      b.set_block(entry);
      auto c = b.emit(vote, Type::I1, {load_var(b, 0), load_var(b, 1)});
      b.cond_br(c, bt, be);
      b.set_block(bt);
      if (extra_use) store_var(b, 2, c);
      store_var(b, 3, b.i32(11));
      b.ret();
      b.set_block(be);
      store_var(b, 3, b.i32(22));
      b.ret();
      f.compute_preds();
      REQUIRE(ir::verify(f) == "");
      std::mt19937_64 rng(19);
      for (int k = 0; k < 16; ++k) {
        RunSpec s = random_spec(f, rng);
        for (unsigned l = 0; l < 32; ++l) {  // sparse or dense predicates, so both branches are taken
          set_lane(s.vars, f, 0, l, k % 4 == 0 ? 0 : k % 4 == 1 ? 1 : rng() % 2);
          set_lane(s.vars, f, 1, l, k % 3 ? 1 : rng() % 2);
        }
        check_all_tiers(f, s, std::string(ir::op_name(vote)) + " extra_use " + std::to_string(extra_use));
      }
      auto tiers = host_tiers();
      REQUIRE(!tiers.empty());
      JitOptions o;
      o.tier = tiers[0];
      std::string err;
      auto jit = compile(f, o, &err);
      REQUIRE_MESSAGE(jit, err);
      frame[extra_use] = jit->frame_bytes();
    }
    CHECK(frame[0] + 128 == frame[1]);
  }
}

TEST_CASE("backend: barrier resumes at its successor with values kept in the frame") {
  ir::Function f;
  f.add_var("x", Type::I32);
  f.add_var("y", Type::F32);
  auto entry = f.add_block("entry"), mid = f.add_block("mid"), last = f.add_block("last");
  ir::Builder b(f);
  b.set_block(entry);
  auto x = load_var(b, 0), y = load_var(b, 1);
  auto x2 = b.binary(Opcode::IMul, x, b.i32(3));
  b.barrier(mid);
  b.set_block(mid);
  auto y2 = b.binary(Opcode::FAdd, y, y);
  b.barrier(last);
  b.set_block(last);
  store_var(b, 0, b.binary(Opcode::IAdd, x2, b.i32(5)));
  store_var(b, 1, y2);
  b.ret();
  f.compute_preds();
  REQUIRE(ir::verify(f) == "");
  std::mt19937_64 rng(8);
  for (int k = 0; k < 10; ++k) check_all_tiers(f, random_spec(f, rng), "barrier");
}

TEST_CASE("backend: switch, budget exhaustion, trap and unreachable match the interpreter") {
  ir::Function f;
  f.add_var("x", Type::I32);
  f.uniform_bytes = 8;
  auto entry = f.add_block("entry");
  std::vector<ir::BlockId> arms;
  for (int i = 0; i < 4; ++i) arms.push_back(f.add_block("arm" + std::to_string(i)));
  auto trap_arm = f.add_block("trap"), dead = f.add_block("dead"), spin = f.add_block("spin");
  ir::Builder b(f);
  b.set_block(entry);
  auto x = load_var(b, 0);
  auto sel = b.load_uniform(Type::I32, 0);
  b.switch_(b.binary(Opcode::And, sel, b.i32(7)), {arms[0], arms[1], arms[2], arms[3], trap_arm, dead, spin});
  for (int i = 0; i < 4; ++i) {
    b.set_block(arms[size_t(i)]);
    store_var(b, 0, b.binary(Opcode::IAdd, x, b.i32(uint32_t(100 * i))));
    b.ret();
  }
  b.set_block(trap_arm);
  auto odd = b.binary(Opcode::And, b.emit(Opcode::LaneId, Type::I32, {}), b.i32(1));
  auto bit = b.emit(Opcode::Trunc, Type::I1, {b.binary(Opcode::And, x, odd)});
  b.emit(Opcode::Trap, Type::Void, {bit}, 0, 0, 42);
  b.ret();
  b.set_block(dead);
  b.emit(Opcode::Unreachable, Type::Void, {});
  b.set_block(spin);
  b.emit(Opcode::Budget, Type::Void, {}, 0, 0, 1000);
  b.br(spin);
  f.compute_preds();
  REQUIRE(ir::verify(f) == "");
  std::mt19937_64 rng(9);
  for (uint32_t s = 0; s < 8; ++s)
    for (int k = 0; k < 3; ++k) {
      RunSpec spec = random_spec(f, rng, 8);
      std::memcpy(spec.uniforms.data(), &s, 4);
      spec.budget = 50000;
      check_all_tiers(f, spec, "switch selector " + std::to_string(s));
    }
  // An empty warp runs nothing.
  RunSpec spec = random_spec(f, rng, 8);
  spec.entry_mask = 0;
  check_all_tiers(f, spec, "empty warp");
}

TEST_CASE("backend: loads, stores and atomics match the interpreter, in and out of the window") {
  std::mt19937_64 rng(10);
  for (Type t : {Type::I8, Type::I16, Type::I32, Type::I64, Type::F32, Type::I1}) {
    for (int kind = 0; kind < 4; ++kind) {
      ir::Function f;
      f.add_var("addr", Type::I32);
      f.add_var("val", t == Type::I1 ? Type::I1 : t);
      f.add_var("mask", Type::I1);
      f.add_var("out", t);
      f.add_block("entry");
      ir::Builder b(f);
      auto addr = load_var(b, 0), val = load_var(b, 1), mask = load_var(b, 2);
      unsigned bytes = t == Type::I1 ? 1 : ir::bit_width(t) / 8;
      // Lane-scaled addresses inside the buffer, plus the raw var for lanes
      // that are meant to stray out of bounds.
      auto lane = b.emit(Opcode::LaneId, Type::I32, {});
      auto in_bounds = b.binary(Opcode::IAdd, b.binary(Opcode::IMul, lane, b.i32(bytes)), b.i32(0x10000));
      auto stray = b.icmp(ir::IntPred::Ugt, addr, b.i32(0xFFFFFFF0u));
      auto a = b.select(stray, addr, in_bounds);
      auto a2 = b.binary(Opcode::IAdd, b.binary(Opcode::And, addr, b.i32(0x3f8)), b.i32(0x10000));  // colliding
      ir::ValueId out = val;
      if (kind == 0) {
        out = b.load(t, ir::Space::Global, ir::AddrClass::Random, a, mask);
      } else if (kind == 1) {
        b.store(ir::Space::Global, ir::AddrClass::Random, a2, val, mask);
        out = b.load(t, ir::Space::Global, ir::AddrClass::Random, a, mask);
      } else if (kind == 2) {
        if (!ir::is_int(t) || t == Type::I1) continue;
        out = b.emit(Opcode::AtomicRmw, t, {a2, val, mask}, uint8_t(ir::AtomicOp::Add), 0, 0);
      } else {
        if (!ir::is_int(t) || t == Type::I1) continue;
        out = b.emit(Opcode::AtomicCas, t, {a, val, val, mask}, 0, 0, 0);
      }
      store_var(b, 3, out);
      b.ret();
      f.compute_preds();
      REQUIRE(ir::verify(f) == "");
      for (int k = 0; k < 12; ++k) {
        RunSpec s = random_spec(f, rng);
        s.memory = true;
        s.window = k % 2 == 0;
        s.memory_init.resize(4096);
        fill_random(s.memory_init, rng);
        if (k < 8)  // mostly in bounds
          for (unsigned l = 0; l < 32; ++l) set_lane(s.vars, f, 0, l, get_lane(s.vars, f, 0, l) & 0xFFFF);
        check_all_tiers(f, s, "memory " + std::string(ir::type_name(t)) + " kind " + std::to_string(kind));
      }
    }
  }
}

// vars addr, val, mask, out: store val at addr for the masked lanes, then
// load out from the same addresses (global space, random addresses).
static ir::Function store_then_load(Type at, Type t) {
  ir::Function f;
  f.add_var("addr", at);
  f.add_var("val", t);
  f.add_var("mask", Type::I1);
  f.add_var("out", t);
  f.add_block("entry");
  ir::Builder b(f);
  auto addr = load_var(b, 0), val = load_var(b, 1), mask = load_var(b, 2);
  b.store(ir::Space::Global, ir::AddrClass::Random, addr, val, mask);
  auto out = b.load(t, ir::Space::Global, ir::AddrClass::Random, addr, mask);
  store_var(b, 3, out);
  b.ret();
  f.compute_preds();
  REQUIRE(ir::verify(f) == "");
  return f;
}

TEST_CASE("backend: load/store fast path at window and buffer edges, 32- and 64-bit addresses") {
  // Lanes in the window, outside it but inside the memory (one-buffer span
  // path), and a few bytes past either end of the memory (helper, fault with
  // the first failing lane); each store is followed by a load of the same lanes.
  std::mt19937_64 rng(12);
  for (Type at : {Type::I32, Type::I64})
    for (Type t : {Type::I8, Type::I16, Type::I32, Type::I64, Type::F32, Type::I1}) {
      ir::Function f = store_then_load(at, t);
      unsigned bytes = t == Type::I1 ? 1 : ir::bit_width(t) / 8;
      for (int k = 0; k < 24; ++k) {
        RunSpec s = random_spec(f, rng);
        s.memory = true;
        s.window = k % 3 != 0;
        s.window_offset = 64 * (k % 4);
        s.window_bytes = k % 3 == 2 ? 0 : 256 + 8 * (k % 5);
        s.memory_bytes = 1024;
        s.memory_init.resize(1024);
        fill_random(s.memory_init, rng);
        uint64_t base = 0x10000;
        for (unsigned l = 0; l < 32; ++l) {
          uint64_t a;
          switch (rng() % 6) {
            case 0: a = base + s.window_offset + rng() % 8; break;                                // window start
            case 1: a = base + s.window_offset + (s.window_bytes ? s.window_bytes : 1024 - s.window_offset) - bytes - rng() % 3; break;  // window end
            case 2: a = base + 1024 - bytes - rng() % 4; break;                                   // memory end
            case 3: a = base + rng() % 4; break;                                                  // memory start
            case 4: a = k % 4 == 3 ? base + 1024 - bytes + 1 + rng() % bytes : base + rng() % 1000; break;  // straddles the end
            default: a = k % 8 == 7 && l > 20 ? base - 1 - rng() % 4 : base + rng() % (1024 - 8); break;  // below
          }
          if (at == Type::I64 && k % 2) a |= k % 4 == 1 ? 0x100000000ull : 0;  // far above: outside
          set_lane(s.vars, f, 0, l, a & ir::type_mask(at));
        }
        if (k % 4 == 3) {  // one taking-part lane surely straddles the end
          set_lane(s.vars, f, 0, 5, base + 1024 - bytes + 1 + rng() % bytes);
          set_lane(s.vars, f, 2, 5, 1);
          s.entry_mask |= 1u << 5;
        }
        check_all_tiers(f, s, "edges addr " + std::string(ir::type_name(at)) + " data " + std::string(ir::type_name(t)) +
                                  " k " + std::to_string(k));
      }
    }
}

TEST_CASE("backend: extra windows keep loads and stores of a second buffer inline") {
  // Global window [0, 256) of the memory, extra windows [256, 512) and
  // [768, 1024); [512, 768) is in no window. All lanes in one extra window:
  // no call to the GuestMemory; lanes across windows, in the gap or past the
  // end: the span / helper paths, the same results and faults as the interpreter.
  std::mt19937_64 rng(13);
  for (Type at : {Type::I32, Type::I64})
    for (Type t : {Type::I8, Type::I32, Type::I64}) {
      ir::Function f = store_then_load(at, t);
      unsigned bytes = ir::bit_width(t) / 8;
      for (int k = 0; k < 10; ++k) {
        RunSpec s = random_spec(f, rng);
        s.memory = true;
        s.window = true;
        s.window_offset = 0;
        s.window_bytes = 256;
        s.extra_windows = {{256, 256}, {768, 256}};
        s.memory_bytes = 1024;
        s.memory_init.resize(1024);
        fill_random(s.memory_init, rng);
        const uint64_t base = 0x10000;
        int where = k % 5;  // 0, 1: one extra window; 2: across windows; 3: the gap; 4: past the end
        for (unsigned l = 0; l < 32; ++l) {
          uint64_t a;
          switch (where) {
            case 0: a = base + 256 + rng() % (256 - bytes + 1); break;
            case 1: a = base + 768 + rng() % (256 - bytes + 1); break;
            case 2: a = base + (l % 2 ? 300 : 800) + rng() % 100; break;
            case 3: a = base + 512 + rng() % (256 - bytes + 1); break;
            default: a = base + 1024 - bytes + rng() % (bytes + 1); break;
          }
          set_lane(s.vars, f, 0, l, a & ir::type_mask(at));
        }
        std::string what = "extra windows addr " + std::string(ir::type_name(at)) + " data " +
                           std::string(ir::type_name(t)) + " k " + std::to_string(k);
        check_all_tiers(f, s, what);
        if (where <= 1)
          for (Tier tier : host_tiers()) {
            JitOptions o;
            o.tier = tier;
            std::string err;
            auto jit = compile(f, o, &err);
            REQUIRE_MESSAGE(jit, err);
            CHECK_MESSAGE(run_one(*jit, f, s).memory_calls == 0, what, " tier ", tier_name(tier));
          }
      }
    }
}

TEST_CASE("backend: cross-lane ops match the interpreter") {
  std::mt19937_64 rng(11);
  struct C { Opcode op; Type t; uint8_t attr; uint32_t fflags; };
  std::vector<C> cases;
  for (Type t : {Type::I1, Type::I32, Type::I64, Type::F32})
    for (Opcode op : {Opcode::Shuffle, Opcode::Broadcast, Opcode::QuadShuffle}) cases.push_back({op, t, 0, 0});
  for (Opcode op : {Opcode::Ballot, Opcode::Any, Opcode::All}) cases.push_back({op, Type::I32, 0, 0});
  for (Type t : {Type::I8, Type::I32, Type::I64})
    for (uint8_t r = 0; r <= uint8_t(ir::ReduceOp::Xor); ++r)
      for (Opcode op : {Opcode::Reduce, Opcode::ScanIncl, Opcode::ScanExcl}) cases.push_back({op, t, r, 0});
  for (Type t : {Type::F32, Type::F64})
    for (uint8_t r = uint8_t(ir::ReduceOp::FAdd); r <= uint8_t(ir::ReduceOp::FMax); ++r)
      for (Opcode op : {Opcode::Reduce, Opcode::ScanIncl, Opcode::ScanExcl}) cases.push_back({op, t, r, ir::ff::FtzIn});
  for (const C& c : cases) {
    bool pred = c.op == Opcode::Ballot || c.op == Opcode::Any || c.op == Opcode::All;
    // The whole warp, and a narrower cluster (every width for the natively
    // lowered votes).
    std::vector<unsigned> widths = {32};
    if (pred) widths.insert(widths.end(), {1, 2, 4, 8, 16});
    else if (ir::op_info(c.op).clustered) widths.push_back(1u << (rng() % 5));
    for (unsigned width : widths) {
      ir::Function f;
      f.add_var("v", pred ? Type::I1 : c.t);
      f.add_var("m", pred || c.op == Opcode::Reduce || c.op == Opcode::ScanIncl || c.op == Opcode::ScanExcl ? Type::I1 : Type::I32);
      f.add_var("out", pred ? (c.op == Opcode::Ballot ? Type::I32 : Type::I1) : c.t);
      f.add_block("entry");
      ir::Builder b(f);
      auto v = load_var(b, 0), m = load_var(b, 1);
      // Values computed in a strip segment before and used after the op.
      auto v2 = pred ? v : c.t == Type::I1 ? b.unary(Opcode::Not, v) : v;
      auto r = b.emit(c.op, f.vars[2].type, {v2, m}, c.attr, c.fflags, ir::cluster_imm(width));
      store_var(b, 2, r);
      b.ret();
      f.compute_preds();
      REQUIRE(ir::verify(f) == "");
      for (int k = 0; k < 6; ++k) {
        RunSpec s = random_spec(f, rng);
        if (k == 0) s.entry_mask = ~0u;
        check_all_tiers(f, s, std::string(ir::op_name(c.op)) + " " + std::string(ir::type_name(c.t)) + " attr " +
                                  std::to_string(c.attr) + " width " + std::to_string(width));
      }
    }
  }
}

TEST_CASE("backend: clustered cross-lane ops give the hand-computed results on every tier") {
  using namespace irtest::cluster;
  ir::Function f;
  std::string err;
  REQUIRE_MESSAGE(ir::parse(kProgram, f, err), err);
  REQUIRE(ir::verify(f) == "");
  RunSpec s;
  s.vars.assign(f.vars_bytes(), 0xEE);
  for (unsigned l = 0; l < 32; ++l) set_lane(s.vars, f, 0, l, kMaskLanes >> l & 1);
  s.entry_mask = kEntryMask;
  int tiers = 0;
  for (Tier tier : host_tiers()) {
    JitOptions o;
    o.tier = tier;
    auto jit = compile(f, o, &err);
    REQUIRE_MESSAGE(jit, err);
    Outcome got = run_one(*jit, f, s);
    REQUIRE(got.status == ir::RunStatus::Done);
    for (const Expect& e : kExpect)
      CHECK_MESSAGE(get_lane(got.vars, f, e.var, e.lane) == e.value,
                    f.vars[e.var].name << " lane " << e.lane << " on " << tier_name(tier));
    ++tiers;
  }
  REQUIRE(tiers > 0);
}

TEST_CASE("backend: many simultaneously live values spill and reload correctly") {
  ir::Function f;
  f.add_var("x", Type::I32);
  f.add_var("out", Type::I32);
  f.add_block("entry");
  ir::Builder b(f);
  auto x = load_var(b, 0);
  std::vector<ir::ValueId> live;
  for (uint32_t i = 0; i < 70; ++i) live.push_back(b.binary(Opcode::IMul, x, b.i32(2 * i + 1)));
  auto acc = b.i32(0);
  for (size_t i = 0; i < live.size(); ++i)
    acc = b.binary(i % 2 ? Opcode::Xor : Opcode::IAdd, acc, live[live.size() - 1 - i]);
  store_var(b, 1, acc);
  b.ret();
  f.compute_preds();
  REQUIRE(ir::verify(f) == "");
  std::mt19937_64 rng(12);
  for (int k = 0; k < 5; ++k) check_all_tiers(f, random_spec(f, rng), "pressure");
}

TEST_CASE("backend: FtzIn operands that can hold no subnormal are not flushed again, and the others still are") {
  // b1 loops 3 times: y = y * x stays flushed around the loop (FtzOut, a
  // normal constant on entry, a sign flip between), z starts as a subnormal
  // constant and s = z + x has no FtzOut, so z's phi must keep its flush.
  const char* text = R"(func "t" {
  var "x" f32
  var "y" f32
  var "z" f32
  var "w" f32
b0 "entry":
  %0 = load_var f32 #0x0
  %1 = const f32 #0x3f800000
  %2 = const f32 #0x00000003
  %3 = const i32 #0x3
  %4 = const i32 #0x1
  %5 = const i32 #0x0
  %6 = const i32 #0x80000000
  br b1
b1 "loop":
  %10 = phi f32 [%1, b0], [%16, b1]
  %11 = phi f32 [%2, b0], [%17, b1]
  %12 = phi i32 [%3, b0], [%18, b1]
  %13 = fmul f32 %10, %0 [ftz_in, ftz_out, nan=allones]
  %14 = bitcast i32 %13
  %15 = xor i32 %14, %6
  %16 = bitcast f32 %15
  %17 = fadd f32 %11, %0 [ftz_in, nan=allones]
  %18 = isub i32 %12, %4
  %19 = icmp.ne i1 %18, %5
  cond_br %19, b1, b2
b2 "exit":
  store_var %10, #0x1
  store_var %11, #0x2
  %20 = fmad f32 %0, %16, %11 [ftz_in, ftz_out, nan=allones]
  store_var %20, #0x3
  return
}
)";
  ir::Function f;
  std::string err;
  REQUIRE_MESSAGE(ir::parse(text, f, err), err);
  f.compute_preds();
  REQUIRE(ir::verify(f) == "");
  Plan plan = make_plan(f);
  auto by_name = [&](unsigned k) { return ir::ValueId(k); };  // the parser keeps %N numbering
  CHECK(plan.no_subnormal[by_name(1)]);
  CHECK_FALSE(plan.no_subnormal[by_name(2)]);
  CHECK_FALSE(plan.no_subnormal[by_name(0)]);
  CHECK(plan.no_subnormal[by_name(10)]);
  CHECK(plan.no_subnormal[by_name(13)]);
  CHECK(plan.no_subnormal[by_name(16)]);
  CHECK_FALSE(plan.no_subnormal[by_name(11)]);
  CHECK_FALSE(plan.no_subnormal[by_name(17)]);
  CHECK(plan.no_subnormal[by_name(20)]);
  std::mt19937_64 rng(23);
  const uint32_t xs[] = {0x00000001u, 0x807FFFFFu, 0x00400000u, 0x3F800000u, 0x7FC00000u, 0x00800000u, 0xBF000000u};
  for (int k = 0; k < 16; ++k) {
    RunSpec s = random_spec(f, rng);
    for (unsigned lane = 0; lane < 32; ++lane) {
      uint32_t bits = xs[(lane + k) % 7];
      std::memcpy(s.vars.data() + f.var_offset(0) + lane * 4, &bits, 4);
    }
    check_all_tiers(f, s, "no_subnormal k " + std::to_string(k));
  }
}

TEST_CASE("backend: bfe.u with a constant offset and count (shift and mask) matches the interpreter") {
  const uint32_t vals[] = {0, 1, 4, 8, 13, 24, 31, 32, 33, 255, 0x104, 0x120};
  std::mt19937_64 rng(29);
  for (uint32_t off : vals)
    for (uint32_t cnt : vals) {
      std::string text = "func \"t\" {\n  var \"x\" i32\n  var \"y\" i32\nb0 \"entry\":\n  %0 = load_var i32 #0x0\n"
                         "  %1 = const i32 #" + std::to_string(off) + "\n  %2 = const i32 #" + std::to_string(cnt) +
                         "\n  %3 = bfe.u i32 %0, %1, %2\n  store_var %3, #0x1\n  return\n}\n";
      ir::Function f;
      std::string err;
      REQUIRE_MESSAGE(ir::parse(text, f, err), err);
      REQUIRE(ir::verify(f) == "");
      for (int k = 0; k < 2; ++k)
        check_all_tiers(f, random_spec(f, rng), "bfe.u off " + std::to_string(off) + " cnt " + std::to_string(cnt));
    }
}

}  // namespace gpurc_test_backend_control
