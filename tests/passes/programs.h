// Test programs for the pass tests, built with ir::Builder. Vars r0..r3 are
// i32 guest registers; most programs branch on per-lane values so that the
// branches are divergent.
#pragma once
#include <random>

#include "harness.h"
#include "ir/pass_util.h"

namespace passtest {

struct Prog {
  Function f;
  Builder b{f};
  uint32_t r[4];
  Prog() {
    f.name = "test";
    for (int i = 0; i < 4; ++i) r[i] = f.add_var("r" + std::to_string(i), Type::I32);
  }
  BlockId block(const char* name) { return f.add_block(name); }
  ValueId get(int i) { return b.get_var(r[i]); }
  void set(int i, ValueId v) { b.set_var(r[i], v); }
  ValueId c32(uint32_t v) { return b.i32(v); }
  ValueId add(ValueId x, ValueId y) { return b.binary(Opcode::IAdd, x, y); }
  ValueId lane_addr(uint32_t base) {
    ValueId lane = b.emit(Opcode::LaneId, Type::I32, {});
    return add(b.binary(Opcode::Shl, lane, c32(2)), c32(base));
  }
  void store_lane(uint32_t base, ValueId v) {
    b.store(Space::Global, AddrClass::Consecutive, lane_addr(base), v, b.i1(true));
  }
};

// if (r0 < 10) r1 = r0 * 3; else { r1 = r0 + 100; mem[lane] = r0; }  r2 = r1 + 1
// x is used across blocks on purpose (demotion).
inline Function prog_if_else() {
  Prog p;
  BlockId b0 = p.block("entry"), t = p.block("then"), e = p.block("else"), j = p.block("join");
  p.b.set_block(b0);
  ValueId x = p.get(0);
  p.b.cond_br(p.b.icmp(IntPred::Slt, x, p.c32(10)), t, e);
  p.b.set_block(t);
  p.set(1, p.b.binary(Opcode::IMul, x, p.c32(3)));
  p.b.br(j);
  p.b.set_block(e);
  p.set(1, p.add(x, p.c32(100)));
  p.store_lane(0, x);
  p.b.br(j);
  p.b.set_block(j);
  p.set(2, p.add(p.get(1), p.c32(1)));
  p.b.ret();
  return std::move(p.f);
}

// Nested: if (r0 < 10) { if (r0 & 1) r1 = 7 else { r1 = 9; mem[lane] = r0 } } r3 = r1 ^ r0
inline Function prog_nested_if() {
  Prog p;
  BlockId b0 = p.block("entry"), t = p.block("then"), tt = p.block("then_odd"), te = p.block("then_even"),
          j = p.block("join");
  p.b.set_block(b0);
  p.b.cond_br(p.b.icmp(IntPred::Ult, p.get(0), p.c32(10)), t, j);
  p.b.set_block(t);
  ValueId odd = p.b.binary(Opcode::And, p.get(0), p.c32(1));
  p.b.cond_br(p.b.icmp(IntPred::Ne, odd, p.c32(0)), tt, te);
  p.b.set_block(tt);
  p.set(1, p.c32(7));
  p.b.br(j);
  p.b.set_block(te);
  p.set(1, p.c32(9));
  p.store_lane(128, p.get(0));
  p.b.br(j);
  p.b.set_block(j);
  p.set(3, p.b.binary(Opcode::Xor, p.get(1), p.get(0)));
  p.b.ret();
  return std::move(p.f);
}

// for (i = 0; i < r0; ++i) r1 += i * i;   lanes leave at different iterations
inline Function prog_loop() {
  Prog p;
  BlockId b0 = p.block("entry"), h = p.block("head"), body = p.block("body"), ex = p.block("exit");
  p.b.set_block(b0);
  p.set(1, p.c32(0));
  p.set(2, p.c32(0));
  p.b.br(h);
  p.b.set_block(h);
  p.b.cond_br(p.b.icmp(IntPred::Ult, p.get(2), p.get(0)), body, ex);
  p.b.set_block(body);
  ValueId i = p.get(2);
  p.set(1, p.add(p.get(1), p.b.binary(Opcode::IMul, i, i)));
  p.set(2, p.add(i, p.c32(1)));
  p.b.br(h);
  p.b.set_block(ex);
  p.store_lane(256, p.get(1));
  p.b.ret();
  return std::move(p.f);
}

// for (i = 0; i < 10; ++i) { if (i == r0) break; if (i & 1) continue;
//   r1 += i; if (r1 > r3) return; }  mem[lane] = r1
inline Function prog_break_continue_return() {
  Prog p;
  BlockId b0 = p.block("entry"), h = p.block("head"), b1 = p.block("check_break"), b2 = p.block("check_continue"),
          b3 = p.block("accumulate"), latch = p.block("latch"), early = p.block("early_return"),
          ex = p.block("exit");
  p.b.set_block(b0);
  p.set(2, p.c32(0));
  p.b.br(h);
  p.b.set_block(h);
  p.b.cond_br(p.b.icmp(IntPred::Ult, p.get(2), p.c32(10)), b1, ex);
  p.b.set_block(b1);
  p.b.cond_br(p.b.icmp(IntPred::Eq, p.get(2), p.get(0)), ex, b2);
  p.b.set_block(b2);
  ValueId odd = p.b.binary(Opcode::And, p.get(2), p.c32(1));
  p.b.cond_br(p.b.icmp(IntPred::Ne, odd, p.c32(0)), latch, b3);
  p.b.set_block(b3);
  p.set(1, p.add(p.get(1), p.get(2)));
  p.b.cond_br(p.b.icmp(IntPred::Ugt, p.get(1), p.get(3)), early, latch);
  p.b.set_block(early);
  p.store_lane(384, p.c32(0xdead));
  p.b.ret();
  p.b.set_block(latch);
  p.set(2, p.add(p.get(2), p.c32(1)));
  p.b.br(h);
  p.b.set_block(ex);
  p.store_lane(512, p.get(1));
  p.b.ret();
  return std::move(p.f);
}

// Two blocks that are both loop entries (irreducible), left by a counter.
inline Function prog_irreducible() {
  Prog p;
  BlockId b0 = p.block("entry"), a = p.block("a"), bb = p.block("b"), ex = p.block("exit");
  p.b.set_block(b0);
  p.set(2, p.c32(0));
  p.b.cond_br(p.b.icmp(IntPred::Ult, p.get(0), p.c32(8)), a, bb);
  p.b.set_block(a);
  p.set(1, p.add(p.b.binary(Opcode::IMul, p.get(1), p.c32(3)), p.c32(1)));
  p.set(2, p.add(p.get(2), p.c32(1)));
  p.b.cond_br(p.b.icmp(IntPred::Ult, p.get(2), p.get(3)), bb, ex);
  p.b.set_block(bb);
  p.set(1, p.b.binary(Opcode::Xor, p.get(1), p.c32(0x55)));
  p.set(2, p.add(p.get(2), p.c32(1)));
  p.store_lane(640, p.get(1));
  p.b.cond_br(p.b.icmp(IntPred::Ult, p.get(2), p.get(3)), a, ex);
  p.b.set_block(ex);
  p.b.ret();
  return std::move(p.f);
}

// switch (r0 & 7) { case 0: case 1: case 2: r1 += 10*k; default: r1 = 5 }
inline Function prog_switch() {
  Prog p;
  BlockId b0 = p.block("entry"), c0 = p.block("c0"), c1 = p.block("c1"), c2 = p.block("c2"), d = p.block("dflt"),
          j = p.block("join");
  p.b.set_block(b0);
  p.b.switch_(p.b.binary(Opcode::And, p.get(0), p.c32(7)), {c0, c1, c2, d});
  BlockId cs[] = {c0, c1, c2};
  for (int k = 0; k < 3; ++k) {
    p.b.set_block(cs[k]);
    p.set(1, p.add(p.get(1), p.c32(10 * (k + 1))));
    p.b.br(k == 1 ? c2 : j);  // case 1 falls through into case 2
  }
  p.b.set_block(d);
  p.set(1, p.c32(5));
  p.b.br(j);
  p.b.set_block(j);
  p.store_lane(768, p.get(1));
  p.b.ret();
  return std::move(p.f);
}

// mem[lane] = r0; barrier; r1 = mem[lane + 1]; loop r2 times { barrier; r3++ }
inline Function prog_barrier() {
  Prog p;
  BlockId b0 = p.block("entry"), b1 = p.block("after"), h = p.block("head"), body = p.block("body"),
          ex = p.block("exit");
  p.b.set_block(b0);
  p.store_lane(0, p.get(0));
  p.b.barrier(b1);
  p.b.set_block(b1);
  ValueId lane = p.b.emit(Opcode::LaneId, Type::I32, {});
  ValueId next = p.b.binary(Opcode::And, p.add(lane, p.c32(1)), p.c32(31));
  ValueId addr = p.b.binary(Opcode::Shl, next, p.c32(2));
  p.set(1, p.b.load(Type::I32, Space::Global, AddrClass::Random, addr, p.b.i1(true)));
  p.set(3, p.c32(0));
  p.b.br(h);
  p.b.set_block(h);
  ValueId n = p.b.binary(Opcode::And, p.b.load_uniform(Type::I32, 0), p.c32(3));
  p.b.cond_br(p.b.icmp(IntPred::Ult, p.get(3), n), body, ex);
  p.b.set_block(body);
  p.set(3, p.add(p.get(3), p.c32(1)));
  p.b.barrier(h);
  p.b.set_block(ex);
  p.b.ret();
  p.f.uniform_bytes = 4;
  return std::move(p.f);
}

// Cross-lane ops inside a divergent branch see only the branch's lanes.
inline Function prog_cross_lane() {
  Prog p;
  BlockId b0 = p.block("entry"), t = p.block("then"), j = p.block("join");
  p.b.set_block(b0);
  p.b.cond_br(p.b.icmp(IntPred::Ult, p.get(0), p.c32(8)), t, j);
  p.b.set_block(t);
  ValueId yes = p.b.i1(true);
  p.set(1, p.b.emit(Opcode::Ballot, Type::I32, {yes, yes}));
  p.set(2, p.b.emit(Opcode::Reduce, Type::I32, {p.get(0), yes}, uint8_t(ReduceOp::Add)));
  ValueId any_odd = p.b.emit(Opcode::Any, Type::I1, {p.b.icmp(IntPred::Ne, p.b.binary(Opcode::And, p.get(3), p.c32(1)), p.c32(0)), yes});
  p.set(3, p.b.convert(Opcode::Zext, Type::I32, any_odd));
  p.b.br(j);
  p.b.set_block(j);
  p.b.ret();
  return std::move(p.f);
}

// SSA input with phis: n = r0; for (i = 0, acc = 0; i < n; ++i) acc += i ^ 5; r1 = acc
inline Function prog_phis() {
  Prog p;
  BlockId b0 = p.block("entry"), h = p.block("head"), body = p.block("body"), ex = p.block("exit");
  p.b.set_block(b0);
  ValueId n = p.get(0);
  ValueId zero = p.c32(0);
  p.b.br(h);
  p.b.set_block(h);
  ValueId i = p.b.emit(Opcode::Phi, Type::I32, {});
  ValueId acc = p.b.emit(Opcode::Phi, Type::I32, {});
  p.b.cond_br(p.b.icmp(IntPred::Ult, i, n), body, ex);
  p.b.set_block(body);
  ValueId acc2 = p.add(acc, p.b.binary(Opcode::Xor, i, p.c32(5)));
  ValueId i2 = p.add(i, p.c32(1));
  p.b.br(h);
  p.b.set_block(ex);
  p.set(1, acc);
  p.b.ret();
  p.f.compute_preds();  // preds of head: entry, body
  p.f.insts[i].args = {zero, i2};
  p.f.insts[acc].args = {zero, acc2};
  return std::move(p.f);
}

// Random CFG with per-lane fuel so every lane ends: each block burns one
// fuel unit and leaves to `exit` when out, else takes a random terminator
// (br / divergent cond_br / uniform cond_br / switch / return). With
// `reducible`, edges go forward except back edges to a dominator.
inline Function prog_random(std::mt19937& rng, int nblocks, bool reducible) {
  Prog p;
  uint32_t fuel = p.f.add_var("fuel", Type::I32);
  p.f.uniform_bytes = 4;
  std::vector<BlockId> body(nblocks), cont(nblocks);
  for (int k = 0; k < nblocks; ++k) {
    body[k] = p.block(("b" + std::to_string(k)).c_str());
    cont[k] = p.block(("c" + std::to_string(k)).c_str());
  }
  BlockId ex = p.block("exit");
  auto pick = [&](int k) -> BlockId {
    if (reducible) {
      int lo = k + 1;
      if (lo >= nblocks) return ex;
      uint32_t r = rng() % uint32_t(nblocks - lo + 1);
      return r == uint32_t(nblocks - lo) ? ex : body[lo + int(r)];
    }
    uint32_t r = rng() % uint32_t(nblocks + 1);
    return r == uint32_t(nblocks) ? ex : body[r];
  };
  Opcode ops[] = {Opcode::IAdd, Opcode::Xor, Opcode::IMul, Opcode::ISub, Opcode::Or};
  for (int k = 0; k < nblocks; ++k) {
    p.b.set_block(body[k]);
    ValueId f2 = p.b.binary(Opcode::ISub, p.b.get_var(fuel), p.c32(1));
    p.b.set_var(fuel, f2);
    int nops = 1 + int(rng() % 3);
    for (int i = 0; i < nops; ++i) {
      int dst = int(rng() % 4), src = int(rng() % 4);
      ValueId rhs = rng() % 2 ? p.get(int(rng() % 4)) : p.c32(rng() % 16);
      p.set(dst, p.b.binary(ops[rng() % 5], p.get(src), rhs));
    }
    if (rng() % 3 == 0) p.store_lane(uint32_t(k % 8) * 128, p.get(int(rng() % 4)));
    p.b.cond_br(p.b.icmp(IntPred::Sle, f2, p.c32(0)), ex, cont[k]);
    p.b.set_block(cont[k]);
    ValueId sel = p.b.binary(Opcode::And, p.get(int(rng() % 4)), p.c32(15));
    switch (rng() % 6) {
      case 0: p.b.br(pick(k)); break;
      case 1: case 2: p.b.cond_br(p.b.icmp(IntPred::Ult, sel, p.c32(8)), pick(k), pick(k)); break;
      case 3: {
        ValueId u = p.b.binary(Opcode::And, p.b.load_uniform(Type::I32, 0), p.c32(1));
        p.b.cond_br(p.b.icmp(IntPred::Eq, u, p.c32(0)), pick(k), pick(k));
        break;
      }
      case 4: p.b.switch_(p.b.binary(Opcode::And, sel, p.c32(3)), {pick(k), pick(k), pick(k)}); break;
      default:
        if (rng() % 3 == 0) p.b.ret();
        else p.b.br(pick(k));
        break;
    }
  }
  p.b.set_block(ex);
  p.b.ret();
  if (reducible) {
    // Turn some edges of cont blocks into back edges to a dominator.
    auto rpo = gpurc::ir::passutil::reverse_post_order(p.f);
    auto idom = gpurc::ir::passutil::immediate_dominators(p.f, rpo);
    for (int k = 0; k < nblocks; ++k) {
      auto& succs = p.f.blocks[cont[k]].succs;
      if (succs.size() < 2 || idom[cont[k]] == kNoBlock || rng() % 2) continue;
      BlockId d = cont[k];
      int steps = 1 + int(rng() % 4);
      for (int s = 0; s < steps && idom[d] != d; ++s) d = idom[d];
      succs[rng() % succs.size()] = d;
    }
  }
  return std::move(p.f);
}

}  // namespace passtest
