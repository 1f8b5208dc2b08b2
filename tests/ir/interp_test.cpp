// IR interpreter: every op class, divergence, phis, barriers, faults.
#include <doctest/doctest.h>

#include <thread>

#include "ir/ir.h"
#include "ir_test_util.h"

namespace gpurc_test_ir_interp_test {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc::ir;
using irtest::TestMemory;
using irtest::Warp;

namespace {
ValueId lane(Builder& b) { return b.emit(Opcode::LaneId, Type::I32, {}); }
ValueId add(Builder& b, ValueId x, ValueId y) { return b.binary(Opcode::IAdd, x, y); }
void check_verified(const Function& f) {
  std::string e = verify(f);
  INFO(print(f));
  REQUIRE(e == "");
}
}  // namespace

TEST_CASE("interp: straight-line per-lane arithmetic and vars") {
  Function f;
  f.add_block();
  uint32_t r0 = f.add_var("r0", Type::I32), r1 = f.add_var("r1", Type::F32), r2 = f.add_var("r2", Type::I64);
  Builder b(f);
  ValueId l = lane(b);
  ValueId v = add(b, b.binary(Opcode::IMul, l, b.i32(3)), b.i32(1));
  b.set_var(r0, v);
  ValueId fl = b.convert(Opcode::IToF, Type::F32, l, uint8_t(Sign::Signed));
  b.set_var(r1, b.binary(Opcode::FMul, fl, b.f32_bits(0x3f000000)));  // l * 0.5
  b.set_var(r2, b.binary(Opcode::IAdd, b.get_var(r2), b.convert(Opcode::Zext, Type::I64, l)));
  b.ret();
  check_verified(f);
  Warp w(f);
  for (int i = 0; i < 32; ++i) w.set_var(r2, i, 0x100000000ull);
  CHECK(w.run() == RunStatus::Done);
  CHECK(w.ctx.status == RunStatus::Done);
  CHECK(w.var(r0, 0) == 1);
  CHECK(w.var(r0, 31) == 94);
  CHECK(w.var(r1, 3) == 0x3fc00000);  // 1.5
  CHECK(w.var(r2, 7) == 0x100000007ull);
}

TEST_CASE("interp: partial entry mask leaves unlaunched lanes alone") {
  Function f;
  f.add_block();
  uint32_t r0 = f.add_var("r0", Type::I32), r1 = f.add_var("r1", Type::I1);
  Builder b(f);
  b.set_var(r0, add(b, lane(b), b.i32(100)));
  b.set_var(r1, b.emit(Opcode::EntryMask, Type::I1, {}));
  b.ret();
  check_verified(f);
  Warp w(f, 0x0000f0f0u);
  for (int i = 0; i < 32; ++i) w.set_var(r0, i, 7);
  CHECK(w.run() == RunStatus::Done);
  for (int i = 0; i < 32; ++i) {
    bool on = (0x0000f0f0u >> i) & 1;
    CHECK(w.var(r0, i) == (on ? uint64_t(100 + i) : 7));
    CHECK(w.var(r1, i) == (on ? 1u : 0u));
  }
  Warp none(f, 0);
  CHECK(none.run() == RunStatus::Done);
  CHECK(none.var(r0, 0) == 0);
}

TEST_CASE("interp: divergent if/else with vars and with a phi") {
  Function f;
  BlockId entry = f.add_block(), then_b = f.add_block("then"), else_b = f.add_block("else"), join = f.add_block("join");
  uint32_t r0 = f.add_var("r0", Type::I32), r1 = f.add_var("r1", Type::I32);
  Builder b(f);
  ValueId l = lane(b);
  ValueId c = b.icmp(IntPred::Ult, l, b.i32(10));
  b.cond_br(c, then_b, else_b);
  b.set_block(then_b);
  ValueId tv = b.i32(1);
  b.set_var(r0, tv);
  b.br(join);
  b.set_block(else_b);
  ValueId ev = b.i32(2);
  b.set_var(r0, ev);
  b.br(join);
  b.set_block(join);
  ValueId phi = b.emit(Opcode::Phi, Type::I32, {tv, ev});
  b.set_var(r1, add(b, phi, b.get_var(r0)));
  b.ret();
  f.compute_preds();
  check_verified(f);
  Warp w(f);
  CHECK(w.run() == RunStatus::Done);
  for (int i = 0; i < 32; ++i) {
    CHECK(w.var(r0, i) == (i < 10 ? 1u : 2u));
    CHECK(w.var(r1, i) == (i < 10 ? 2u : 4u));
  }
  (void)entry;
}

TEST_CASE("interp: loop where lanes leave at different iterations (phis)") {
  // i = 0; s = 0; do { i += 1; s += i; } while (i < lane); out = s
  Function f;
  BlockId entry = f.add_block(), loop = f.add_block("loop"), exit = f.add_block("exit");
  uint32_t out = f.add_var("out", Type::I32), iters = f.add_var("iters", Type::I32);
  Builder b(f);
  ValueId l = lane(b);
  ValueId zero = b.i32(0), one = b.i32(1);
  b.br(loop);
  b.set_block(loop);
  ValueId i_phi = b.emit(Opcode::Phi, Type::I32, {});
  ValueId s_phi = b.emit(Opcode::Phi, Type::I32, {});
  ValueId i_next = add(b, i_phi, one);
  ValueId s_next = add(b, s_phi, i_next);
  ValueId again = b.icmp(IntPred::Ult, i_next, l);
  b.cond_br(again, loop, exit);
  f.insts[i_phi].args = {zero, i_next};  // preds: entry, loop
  f.insts[s_phi].args = {zero, s_next};
  b.set_block(exit);
  b.set_var(out, s_next);
  b.set_var(iters, i_next);
  b.ret();
  f.compute_preds();
  check_verified(f);
  Warp w(f);
  CHECK(w.run() == RunStatus::Done);
  for (int i = 0; i < 32; ++i) {
    int n = i < 1 ? 1 : i;
    CHECK(w.var(iters, i) == uint64_t(n));
    CHECK(w.var(out, i) == uint64_t(n * (n + 1) / 2));
  }
  (void)entry;
}

TEST_CASE("interp: pre-SSA loop with get/set_var and a ballot per iteration") {
  // while (i < lane) { i++; count += popcount(ballot(true)) }: lanes still in the loop.
  Function f;
  BlockId entry = f.add_block(), head = f.add_block(), body = f.add_block(), exit = f.add_block();
  uint32_t i = f.add_var("i", Type::I32), count = f.add_var("count", Type::I32);
  Builder b(f);
  b.set_var(i, b.i32(0));
  b.set_var(count, b.i32(0));
  b.br(head);
  b.set_block(head);
  ValueId c = b.icmp(IntPred::Ult, b.get_var(i), lane(b));
  b.cond_br(c, body, exit);
  b.set_block(body);
  b.set_var(i, add(b, b.get_var(i), b.i32(1)));
  ValueId t = b.i1(true);
  ValueId bal = b.emit(Opcode::Ballot, Type::I32, {t, t});
  ValueId pc = b.emit(Opcode::Popcount, Type::I32, {bal});
  b.set_var(count, add(b, b.get_var(count), pc));
  b.br(head);
  b.set_block(exit);
  b.ret();
  f.compute_preds();
  check_verified(f);
  Warp w(f);
  CHECK(w.run() == RunStatus::Done);
  for (int l = 0; l < 32; ++l) {
    // In iteration k (1-based) the lanes with lane >= k are active: 32 - k of them.
    uint64_t expect = 0;
    for (int k = 1; k <= l; ++k) expect += uint64_t(32 - k);
    CHECK(w.var(i, l) == uint64_t(l));
    CHECK(w.var(count, l) == expect);
  }
  (void)entry;
}

TEST_CASE("interp: nested divergence and a divergent switch") {
  Function f;
  BlockId entry = f.add_block(), odd = f.add_block(), even = f.add_block(), a = f.add_block(), bb = f.add_block(),
          join_in = f.add_block(), join = f.add_block(), s0 = f.add_block(), s1 = f.add_block(),
          sdef = f.add_block(), end = f.add_block();
  uint32_t r = f.add_var("r", Type::I32), s = f.add_var("s", Type::I32);
  Builder b(f);
  ValueId l = lane(b);
  ValueId bit0 = b.convert(Opcode::Trunc, Type::I1, l);
  b.cond_br(bit0, odd, even);
  b.set_block(odd);
  ValueId bit1 = b.convert(Opcode::Trunc, Type::I1, b.binary(Opcode::LShr, lane(b), b.i32(1)));
  b.cond_br(bit1, a, bb);
  b.set_block(a);
  b.set_var(r, b.i32(3));
  b.br(join_in);
  b.set_block(bb);
  b.set_var(r, b.i32(1));
  b.br(join_in);
  b.set_block(join_in);
  b.set_var(r, add(b, b.get_var(r), b.i32(10)));
  b.br(join);
  b.set_block(even);
  b.set_var(r, b.i32(0));
  b.br(join);
  b.set_block(join);
  ValueId sel = b.binary(Opcode::And, lane(b), b.i32(3));
  b.switch_(sel, {s0, s1, sdef});
  b.set_block(s0);
  b.set_var(s, b.i32(100));
  b.br(end);
  b.set_block(s1);
  b.set_var(s, b.i32(101));
  b.br(end);
  b.set_block(sdef);
  b.set_var(s, b.i32(199));
  b.br(end);
  b.set_block(end);
  b.ret();
  f.compute_preds();
  check_verified(f);
  Warp w(f);
  CHECK(w.run() == RunStatus::Done);
  for (int l2 = 0; l2 < 32; ++l2) {
    uint64_t want_r = (l2 & 1) ? ((l2 & 2) ? 13 : 11) : 0;
    CHECK(w.var(r, l2) == want_r);
    CHECK(w.var(s, l2) == uint64_t((l2 & 3) == 0 ? 100 : (l2 & 3) == 1 ? 101 : 199));
  }
  (void)entry;
}

TEST_CASE("interp: cross-lane ops respect mask and activity") {
  Function f;
  BlockId entry = f.add_block(), low = f.add_block(), end = f.add_block();
  uint32_t vb = f.add_var("ballot", Type::I32), vany = f.add_var("any", Type::I1), vall = f.add_var("all", Type::I1),
           vsh = f.add_var("shuffle", Type::I32), vbc = f.add_var("bcast", Type::I32),
           vq = f.add_var("quad", Type::I32), vred = f.add_var("reduce", Type::I32),
           vmin = f.add_var("umin_empty", Type::I32), vsi = f.add_var("scan_incl", Type::I32),
           vse = f.add_var("scan_excl", Type::I32), vlow = f.add_var("low_ballot", Type::I32),
           vfred = f.add_var("fsum", Type::F32), vsmin = f.add_var("smin", Type::I32);
  Builder b(f);
  ValueId l = lane(b);
  ValueId odd = b.convert(Opcode::Trunc, Type::I1, l);
  ValueId t = b.i1(true), fls = b.i1(false);
  b.set_var(vb, b.emit(Opcode::Ballot, Type::I32, {odd, t}));
  b.set_var(vany, b.emit(Opcode::Any, Type::I1, {odd, t}));
  b.set_var(vall, b.emit(Opcode::All, Type::I1, {odd, odd}));
  b.set_var(vsh, b.emit(Opcode::Shuffle, Type::I32, {add(b, l, b.i32(100)), b.binary(Opcode::Xor, l, b.i32(1))}));
  b.set_var(vbc, b.emit(Opcode::Broadcast, Type::I32, {add(b, l, b.i32(100)), b.i32(37)}));  // 37 & 31 = 5
  b.set_var(vq, b.emit(Opcode::QuadShuffle, Type::I32, {l, b.i32(2)}));
  b.set_var(vred, b.emit(Opcode::Reduce, Type::I32, {l, t}, uint8_t(ReduceOp::Add)));
  b.set_var(vmin, b.emit(Opcode::Reduce, Type::I32, {l, fls}, uint8_t(ReduceOp::UMin)));
  b.set_var(vsmin, b.emit(Opcode::Reduce, Type::I32, {b.emit(Opcode::INeg, Type::I32, {l}), t}, uint8_t(ReduceOp::SMin)));
  b.set_var(vsi, b.emit(Opcode::ScanIncl, Type::I32, {b.i32(1), odd}, uint8_t(ReduceOp::Add)));
  b.set_var(vse, b.emit(Opcode::ScanExcl, Type::I32, {b.i32(1), t}, uint8_t(ReduceOp::Add)));
  ValueId fl = b.convert(Opcode::IToF, Type::F32, l, uint8_t(Sign::Unsigned));
  b.set_var(vfred, b.emit(Opcode::Reduce, Type::F32, {fl, t}, uint8_t(ReduceOp::FAdd)));
  b.cond_br(b.icmp(IntPred::Ult, l, b.i32(8)), low, end);
  b.set_block(low);
  b.set_var(vlow, b.emit(Opcode::Ballot, Type::I32, {t, t}));
  b.br(end);
  b.set_block(end);
  b.ret();
  f.compute_preds();
  check_verified(f);
  Warp w(f, 0x00ffffffu);  // lanes 24..31 not launched
  CHECK(w.run() == RunStatus::Done);
  CHECK(w.var(vb, 0) == 0x00aaaaaau);
  CHECK(w.var(vb, 23) == 0x00aaaaaau);
  CHECK(w.var(vany, 4) == 1);
  CHECK(w.var(vall, 4) == 1);  // every odd lane is odd
  CHECK(w.var(vsh, 4) == 105);
  CHECK(w.var(vsh, 5) == 104);
  CHECK(w.var(vbc, 0) == 105);
  CHECK(w.var(vbc, 20) == 105);
  CHECK(w.var(vq, 5) == 6);
  CHECK(w.var(vq, 11) == 10);
  CHECK(w.var(vred, 3) == 276);  // 0 + 1 + ... + 23
  CHECK(w.var(vmin, 3) == 0xffffffffu);
  CHECK(w.var(vsmin, 3) == uint64_t(uint32_t(-23)));
  CHECK(w.var(vsi, 0) == 0);
  CHECK(w.var(vsi, 1) == 1);
  CHECK(w.var(vsi, 6) == 3);   // odd lanes 1, 3, 5
  CHECK(w.var(vsi, 7) == 4);
  CHECK(w.var(vse, 0) == 0);
  CHECK(w.var(vse, 23) == 23);
  CHECK(w.var(vfred, 0) == 0x438a0000u);  // 276.0f
  CHECK(w.var(vlow, 0) == 0xffu);
  CHECK(w.var(vlow, 7) == 0xffu);
  CHECK(w.var(vlow, 8) == 0);
  CHECK(w.var(vb, 24) == 0);  // not launched: never written
  (void)entry;
}

TEST_CASE("interp: reduce float identity, fmin with NaN lanes, empty scan") {
  Function f;
  f.add_block();
  uint32_t a = f.add_var("a", Type::F32), c = f.add_var("c", Type::F32), d = f.add_var("d", Type::F32);
  Builder b(f);
  ValueId t = b.i1(true), fls = b.i1(false);
  ValueId negz = b.f32_bits(0x80000000u);
  b.set_var(a, b.emit(Opcode::Reduce, Type::F32, {negz, t}, uint8_t(ReduceOp::FAdd)));
  ValueId odd = b.convert(Opcode::Trunc, Type::I1, lane(b));
  ValueId x = b.select(odd, b.f32_bits(0x7fc00000u), b.convert(Opcode::IToF, Type::F32, lane(b), 0));
  b.set_var(c, b.emit(Opcode::Reduce, Type::F32, {x, t}, uint8_t(ReduceOp::FMin)));
  b.set_var(d, b.emit(Opcode::Reduce, Type::F32, {x, fls}, uint8_t(ReduceOp::FMax)));
  b.ret();
  check_verified(f);
  Warp w(f);
  CHECK(w.run() == RunStatus::Done);
  CHECK(w.var(a, 0) == 0x80000000u);  // -0 summed stays -0
  CHECK(w.var(c, 9) == 0);             // NaN lanes ignored (NumberWins), min of even lanes is 0
  CHECK(w.var(d, 9) == 0xff800000u);   // empty: identity -inf
}

TEST_CASE("interp: barriers stop and resume, also when reached by some lanes") {
  Function f;
  BlockId b0 = f.add_block(), b1 = f.add_block(), b2 = f.add_block(), b3 = f.add_block();
  uint32_t r = f.add_var("r", Type::I32);
  Builder b(f);
  b.set_var(r, b.i32(1));
  b.barrier(b1);
  b.set_block(b1);
  b.set_var(r, add(b, b.get_var(r), b.i32(1)));
  b.cond_br(b.icmp(IntPred::Ult, lane(b), b.i32(4)), b2, b3);
  b.set_block(b2);
  b.set_var(r, add(b, b.get_var(r), b.i32(10)));
  b.barrier(b3);
  b.set_block(b3);
  b.set_var(r, add(b, b.get_var(r), b.i32(100)));
  b.ret();
  f.compute_preds();
  check_verified(f);
  Warp w(f);
  CHECK(w.run() == RunStatus::Barrier);
  CHECK(w.ctx.resume != 0);
  CHECK(w.var(r, 0) == 1);
  CHECK(w.var(r, 31) == 1);
  CHECK(w.run() == RunStatus::Barrier);  // lanes 0..3 reach the second barrier
  CHECK(w.var(r, 0) == 12);
  CHECK(w.var(r, 31) == 2);              // the others wait at b3 (after b2 in order)
  CHECK(w.run() == RunStatus::Done);
  CHECK(w.ctx.resume == 0);
  CHECK(w.var(r, 0) == 112);
  CHECK(w.var(r, 31) == 102);
  (void)b0;
}

TEST_CASE("interp: memory, atomics in lane order, out-of-bounds fault") {
  Function f;
  f.add_block();
  uint32_t r = f.add_var("r", Type::I32), old = f.add_var("old", Type::I32), cas = f.add_var("cas", Type::I32),
           h = f.add_var("h", Type::I16);
  Builder b(f);
  ValueId l = lane(b);
  ValueId t = b.i1(true);
  ValueId addr = b.binary(Opcode::Shl, l, b.i32(2));
  b.store(Space::Global, AddrClass::Consecutive, addr, add(b, l, b.i32(1000)), t);
  ValueId even = b.binary(Opcode::Xor, b.convert(Opcode::Trunc, Type::I1, l), t);
  ValueId ld = b.load(Type::I32, Space::Global, AddrClass::Consecutive, addr, even);
  b.set_var(r, ld);
  ValueId counter = b.i32(200);
  b.set_var(old, b.emit(Opcode::AtomicRmw, Type::I32, {counter, b.i32(1), t}, uint8_t(AtomicOp::Add), 0,
                        uint64_t(Space::Shared)));
  b.set_var(cas, b.emit(Opcode::AtomicCas, Type::I32, {b.i32(204), b.i32(0), lane(b), t}, 0, 0,
                        uint64_t(Space::Shared)));
  b.set_var(h, b.load(Type::I16, Space::Global, AddrClass::Random, b.i32(2), t));
  b.ret();
  check_verified(f);
  TestMemory mem(256);
  Warp w(f);
  w.ctx.memory = &mem;
  CHECK(w.run() == RunStatus::Done);
  CHECK(mem.u32(Space::Global, 4 * 7) == 1007);
  CHECK(w.var(r, 6) == 1006);
  CHECK(w.var(old, 0) == 0);
  CHECK(w.var(old, 31) == 31);
  CHECK(mem.u32(Space::Shared, 200) == 32);
  CHECK(w.var(cas, 0) == 0);   // lane 0 swaps 0 -> 0
  CHECK(w.var(cas, 1) == 0);   // lane 1 swaps 0 -> 1
  CHECK(w.var(cas, 2) == 1);   // then nobody matches 0
  CHECK(mem.u32(Space::Shared, 204) == 1);
  CHECK(w.var(h, 0) == 0);     // high half of 1000 at address 0
  // Out of bounds: lane 20 stores at 20 * 16 = 320 > 256.
  Function g;
  g.add_block();
  Builder gb(g);
  ValueId gl = lane(gb);
  gb.store(Space::Local, AddrClass::Random, gb.binary(Opcode::IMul, gl, gb.i32(16)), gl, gb.i1(true));
  gb.ret();
  check_verified(g);
  TestMemory small(256);
  Warp gw(g);
  gw.ctx.memory = &small;
  CHECK(gw.run() == RunStatus::Fault);
  CHECK(gw.ctx.fault == FaultKind::OutOfBounds);
  CHECK(gw.ctx.fault_lane == 16);
  CHECK(gw.ctx.fault_addr == 256);
  CHECK(gw.ctx.fault_space == uint32_t(Space::Local));
  Warp nomem(g);
  CHECK(nomem.run() == RunStatus::Fault);
  CHECK(nomem.ctx.fault == FaultKind::OutOfBounds);
}

TEST_CASE("interp: traps fault only for active lanes in the mask") {
  Function f;
  BlockId entry = f.add_block(), taken = f.add_block(), end = f.add_block();
  uint32_t r = f.add_var("r", Type::I32);
  Builder b(f);
  ValueId l = lane(b);
  ValueId is5 = b.icmp(IntPred::Eq, l, b.i32(5));
  b.cond_br(b.icmp(IntPred::Ult, l, b.i32(3)), taken, end);
  b.set_block(taken);
  b.emit(Opcode::Trap, Type::Void, {is5}, 0, 0, 77);  // lane 5 is not here
  b.set_var(r, b.i32(1));
  b.br(end);
  b.set_block(end);
  b.emit(Opcode::Trap, Type::Void, {is5}, 0, 0, 99);
  b.ret();
  f.compute_preds();
  check_verified(f);
  Warp w(f);
  CHECK(w.run() == RunStatus::Fault);
  CHECK(w.ctx.fault == FaultKind::Trap);
  CHECK(w.ctx.fault_code == 99);
  CHECK(w.ctx.fault_lane == 5);
  CHECK(w.var(r, 2) == 1);
  Warp w2(f, ~(1u << 5));  // lane 5 not launched: no fault
  CHECK(w2.run() == RunStatus::Done);
  (void)entry;
}

TEST_CASE("interp: watchdog budget") {
  Function f;
  BlockId entry = f.add_block(), loop = f.add_block();
  Builder b(f);
  b.br(loop);
  b.set_block(loop);
  b.emit(Opcode::Budget, Type::Void, {}, 0, 0, 3);
  b.br(loop);
  f.compute_preds();
  check_verified(f);
  Warp w(f);
  w.ctx.budget = 100;
  CHECK(w.run() == RunStatus::Fault);
  CHECK(w.ctx.fault == FaultKind::Watchdog);
  CHECK(w.ctx.budget < 0);
  CHECK(w.ctx.budget == 100 - 3 * 34);
  (void)entry;
}

TEST_CASE("interp: uniforms, load_var/store_var, unsupported ops fault cleanly") {
  Function f;
  f.add_block();
  f.uniform_bytes = 8;
  uint32_t a = f.add_var("a", Type::I32), c = f.add_var("c", Type::I64);
  Builder b(f);
  b.emit(Opcode::StoreVar, Type::Void, {b.load_uniform(Type::I32, 4)}, 0, 0, a);
  b.emit(Opcode::StoreVar, Type::Void, {b.emit(Opcode::LoadVar, Type::I64, {}, 0, 0, c)}, 0, 0, c);
  b.ret();
  check_verified(f);
  Warp w(f, 1);  // store_var writes all 32 lanes even so
  w.uniforms[0] = 0x1234567800000000ull;
  w.set_var(c, 9, 0xabcdef0123ull);
  CHECK(w.run() == RunStatus::Done);
  CHECK(w.var(a, 0) == 0x12345678u);
  CHECK(w.var(a, 31) == 0x12345678u);
  CHECK(w.var(c, 9) == 0xabcdef0123ull);

  Function g;  // load_uniform past uniform_bytes (verify rejects it; the interpreter must not crash)
  g.add_block();
  g.uniform_bytes = 4;
  Builder gb(g);
  gb.load_uniform(Type::I64, 0);
  gb.ret();
  CHECK(verify(g) != "");
  Warp gw(g);
  CHECK(gw.run() == RunStatus::Fault);
  CHECK(gw.ctx.fault == FaultKind::OutOfBounds);

  Function h;  // a transcendental variant nobody implemented yet
  h.add_block();
  Builder hb(h);
  hb.unary(Opcode::FSin, hb.f32_bits(0), uint8_t(Transc::Pica));
  hb.emit(Opcode::Unreachable, Type::Void, {});
  Warp hw(h);
  CHECK(hw.run() == RunStatus::Fault);
  CHECK(hw.ctx.fault == FaultKind::Unsupported);
  CHECK(hw.ctx.fault_code == 1);

  Function u;  // reaching unreachable
  u.add_block();
  Builder ub(u);
  ub.emit(Opcode::Unreachable, Type::Void, {});
  Warp uw(u);
  CHECK(uw.run() == RunStatus::Fault);
  CHECK(uw.ctx.fault == FaultKind::Unsupported);

  Function broken;  // operand id out of range: structural check, no crash
  broken.add_block();
  Builder kb(broken);
  ValueId x = kb.i32(1);
  kb.binary(Opcode::IAdd, x, x);
  broken.insts.back().args[1] = 999;
  kb.ret();
  Warp bw(broken);
  CHECK(bw.run() == RunStatus::Fault);
}

TEST_CASE("interp: one executable, many threads") {
  Function f;
  BlockId entry = f.add_block(), loop = f.add_block(), exit = f.add_block();
  uint32_t r = f.add_var("r", Type::I32);
  Builder b(f);
  b.set_var(r, b.i32(0));
  b.br(loop);
  b.set_block(loop);
  ValueId n = add(b, b.get_var(r), b.i32(1));
  b.set_var(r, n);
  b.cond_br(b.icmp(IntPred::Ult, n, add(b, lane(b), b.i32(50))), loop, exit);
  b.set_block(exit);
  b.ret();
  f.compute_preds();
  check_verified(f);
  auto exe = make_ir_interpreter(f);
  bool ok[4] = {};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      std::vector<uint64_t> vars(f.vars_bytes() / 8 + 1), frame(exe->frame_bytes() / 8 + 1);
      WarpContext ctx;
      ctx.vars = reinterpret_cast<uint8_t*>(vars.data());
      ctx.frame = reinterpret_cast<uint8_t*>(frame.data());
      bool good = exe->run(ctx) == RunStatus::Done;
      for (int l = 0; l < 32; ++l) good = good && reinterpret_cast<uint32_t*>(vars.data())[l] == uint32_t(l + 50);
      ok[t] = good;
    });
  for (auto& th : threads) th.join();
  for (bool x : ok) CHECK(x);
  (void)entry;
}

}  // namespace gpurc_test_ir_interp_test
