// PICA200-style float chains in DAZ mode (backend_x64/lower_float.cpp) and
// the reuse of one load_uniform_idx check by the next loads of the same
// offset (backend_x64/uniform_indexed.cpp), on every tier against the IR
// interpreter:
//  - a product or sum read only by DAZ arithmetic (fadd / fsub / fmul with
//    FtzIn) tests its result for NaN only (its subnormals are read as the
//    zeros the flush makes); one also read by a select or stored keeps the
//    FtzOut test; the AVX2 FtzOut test in DAZ mode (compare with zero +
//    the bits) — all with NaNs, infinities, signed zeros, subnormals and
//    products that round to the smallest normal or below it;
//  - four components read from one offset between selects, compares and
//    arithmetic, in a strip-outer loop (AVX2 ANDs its back edge with the
//    launch mask from the frame), with offsets equal or not across a strip,
//    inside and past the block, no block, partial launches.
#include <doctest/doctest.h>

#include "backend_common/plan.h"
#include "compare.h"

namespace gpurc_test_backend_daz_chains {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::backend;
using namespace gpurc::backend::test;
using ir::Opcode;
using ir::Type;

namespace {

constexpr uint32_t kMul = ir::ff::FtzIn | ir::ff::FtzOut | ir::ff::ZeroMul;
constexpr uint32_t kAdd = ir::ff::FtzIn | ir::ff::FtzOut;

// Operands whose products and sums hit every special case.
uint32_t special_f32(std::mt19937_64& rng) {
  static const uint32_t kSpecial[] = {
      0x00000000u, 0x80000000u,              // +-0
      0x00000001u, 0x807FFFFFu, 0x00400000u,  // subnormals
      0x00800000u, 0x80800000u, 0x00800001u,  // smallest normals
      0x7F800000u, 0xFF800000u,              // +-inf
      0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFFA00005u, 0x7FC12345u,  // NaNs, quiet and signalling
      0x3F800000u, 0xBF800000u, 0x7F7FFFFFu, 0xFF7FFFFFu,
      0x20000000u, 0xA0000000u,  // 2^-63: squares are the smallest normal
      0x1FFFFFFFu, 0x1F800000u,  // just below: squares round to it or are subnormal
      0x1F000000u, 0x9F3504F3u,  // squares subnormal
      0x3F000000u, 0x00FFFFFFu, 0x00800002u};
  switch (rng() % 4) {
    case 0: return uint32_t(rng());
    case 1: return 0x3F000000u + uint32_t(rng() % 0x01000000u);  // [0.5, 2)
    default: return kSpecial[rng() % (sizeof kSpecial / sizeof kSpecial[0])];
  }
}

// vars a, b, c (f32) in; out0..out5 out.
//   p = a * b (read only by the adds: NaN-only test), s = p + c, t = s - a
//   (s read only by t), u = t * t (its operand twice)
//   q = a * c, also selected: keeps the FtzOut test; r = q + b
//   w = b * c, stored as well as added
ir::Function chain_function() {
  ir::Function f;
  for (const char* n : {"a", "b", "c"}) f.add_var(n, Type::F32);
  for (int i = 0; i < 6; ++i) f.add_var("out" + std::to_string(i), Type::F32);
  f.add_block("entry");
  ir::Builder b(f);
  auto a = load_var(b, 0), x = load_var(b, 1), c = load_var(b, 2);
  auto p = b.fmul(a, x, kMul);
  auto s = b.fadd(p, c, kAdd);
  auto t = b.binary(Opcode::FSub, s, a, 0, kAdd);
  auto u = b.fmul(t, t, kMul);
  auto q = b.fmul(a, c, kMul);
  auto r = b.fadd(q, x, kAdd);
  auto sel = b.emit(Opcode::Select, Type::F32, {b.icmp(ir::IntPred::Ne, b.emit(Opcode::Bitcast, Type::I32, {a}), b.i32(0)), q, c});
  auto w = b.fmul(x, c, kMul);
  auto y = b.fadd(w, w, kAdd);
  store_var(b, 3, u);
  store_var(b, 4, r);
  store_var(b, 5, sel);
  store_var(b, 6, w);
  store_var(b, 7, y);
  store_var(b, 8, b.binary(Opcode::FSub, b.fmul(c, c, kMul), b.fmul(x, a, kMul), 0, kAdd));
  b.ret();
  return f;
}

}  // namespace

TEST_CASE("DAZ-mode mul/add chains: NaN, inf, +-0, subnormals match the interpreter on every tier") {
  ir::Function f = chain_function();
  REQUIRE(ir::verify(f) == "");
  std::mt19937_64 rng(29);
  const int runs = light() ? 60 : 400;
  for (int k = 0; k < runs; ++k) {
    RunSpec s;
    s.vars.resize(f.vars_bytes());
    fill_random(s.vars, rng);
    for (uint32_t v = 0; v < 3; ++v)
      for (unsigned l = 0; l < 32; ++l) set_lane(s.vars, f, v, l, special_f32(rng));
    s.entry_mask = k % 5 == 4 ? uint32_t(rng()) | 1u : ~0u;
    CAPTURE(k);
    check_all_tiers(f, s, "daz chains");
  }
}

// PICA200's LOOP of MADs reading c[base + aL] (the reference shader `loop`):
// the loop counter i gives the offset 16 * ((i + k) & 127) (plus a per-lane
// part in some runs); four components are read from it, each guarded by a
// select as the translation does, and multiplied into two accumulators.
TEST_CASE("load_uniform_idx components sharing one offset check, in a strip-outer MAD loop") {
  ir::Function f;
  f.add_var("acc0", Type::F32);
  f.add_var("acc1", Type::F32);
  f.add_var("x", Type::F32);
  f.add_var("lane_part", Type::I32);
  f.uniform_bytes = 256;
  const ir::BlockId entry = f.add_block("entry"), loop = f.add_block("loop"), done = f.add_block("done");
  ir::Builder b(f);
  b.set_block(entry);
  auto acc0 = load_var(b, 0), acc1 = load_var(b, 1), x = load_var(b, 2), lane_part = load_var(b, 3);
  auto n = b.binary(Opcode::And, b.load_uniform(Type::I32, 0), b.i32(15));
  auto k0 = b.load_uniform(Type::I32, 4);
  auto zero = b.i32(0);
  b.br(loop);
  b.set_block(loop);
  auto i = phi(b, Type::I32, {zero, zero});
  auto p0 = phi(b, Type::F32, {acc0, acc0});
  auto p1 = phi(b, Type::F32, {acc1, acc1});
  auto idx = b.binary(Opcode::And, b.iadd(i, k0), b.i32(127));
  auto off = b.iadd(b.shl(idx, b.i32(4)), lane_part);
  auto in_range = b.icmp(ir::IntPred::Ult, idx, b.i32(14));
  auto one = b.f32_bits(0x3F800000u);
  ir::ValueId comp[4];
  for (int j = 0; j < 4; ++j) {
    auto ld = b.load_uniform_idx(Type::F32, off, uint32_t(4 * j));
    comp[j] = b.emit(Opcode::Select, Type::F32, {in_range, ld, one});
  }
  auto m0 = b.fadd(b.fmul(x, comp[0], kMul), p0, kAdd);
  auto m0b = b.fadd(b.fmul(m0, comp[1], kMul), x, kAdd);
  auto m1 = b.fadd(b.fmul(x, comp[2], kMul), p1, kAdd);
  auto m1b = b.binary(Opcode::FSub, b.fmul(m1, comp[3], kMul), x, 0, kAdd);
  auto i1 = b.iadd(i, b.i32(1));
  f.insts[i].args[1] = i1;
  f.insts[p0].args[1] = m0b;
  f.insts[p1].args[1] = m1b;
  b.cond_br(b.icmp(ir::IntPred::Ult, i1, n), loop, done);
  b.set_block(done);
  store_var(b, 0, m0b);
  store_var(b, 1, m1b);
  b.ret();
  f.compute_preds();
  REQUIRE(ir::verify(f) == "");
  REQUIRE(make_plan(f).strip_loop_of[loop] >= 0);
  std::mt19937_64 rng(31);
  const int runs = light() ? 24 : 96;
  for (int k = 0; k < runs; ++k) {
    RunSpec s;
    s.vars.resize(f.vars_bytes());
    fill_random(s.vars, rng);
    s.uniforms.resize(256);
    for (size_t o = 8; o + 4 <= 256; o += 4) {
      uint32_t v = special_f32(rng);
      std::memcpy(s.uniforms.data() + o, &v, 4);
    }
    uint32_t trips = 1 + uint32_t(k % 9), base = uint32_t(k % 17);  // offsets up to 16 * 25: some past the block
    std::memcpy(s.uniforms.data(), &trips, 4);
    std::memcpy(s.uniforms.data() + 4, &base, 4);
    const int pattern = k % 4;
    for (unsigned l = 0; l < 32; ++l) {
      set_lane(s.vars, f, 0, l, special_f32(rng));
      set_lane(s.vars, f, 1, l, special_f32(rng));
      set_lane(s.vars, f, 2, l, special_f32(rng));
      uint32_t part = 0;  // pattern 0: one offset for the warp
      if (pattern == 1) part = l >= 16 ? 4 : 0;           // differs between AVX-512 strips only
      if (pattern == 2) part = (l % 3 == 0) ? 16 : 0;     // differs within every strip
      if (pattern == 3) part = uint32_t(rng() % 3) * 4;   // random
      set_lane(s.vars, f, 3, l, part);
    }
    s.entry_mask = k % 3 == 2 ? (uint32_t(rng()) | 1u << (rng() % 32)) : ~0u;
    CAPTURE(k);
    check_all_tiers(f, s, "mad loop with indexed uniforms");
    if (k % 8 == 0) {
      s.uniforms.clear();  // no block: the load_uniform faults, as in the interpreter
      check_all_tiers(f, s, "mad loop without uniforms");
    }
  }
}

// The fused product + sum (backend_x64/lower_float.cpp, lower_fused_mul_add):
// sums with the product as either operand, fsub in both orders (c - a * b
// takes the product second), an add whose other operand is defined after the
// product (not fused: emitted as two ops), both operands of an add products
// (the later one is fused), and a sum read by a select (keeps its FtzOut
// test); with 0 * inf, NaN and subnormal lanes, which only the fix path of
// the sum's test handles. Twenty live values make AVX2 spill, so some
// products read an operand from its slot (the memory operand).
TEST_CASE("fused DAZ product and sum: operand orders, late operands, spilled operands match the interpreter") {
  ir::Function f;
  constexpr int kIn = 20;
  for (int i = 0; i < kIn; ++i) f.add_var("in" + std::to_string(i), Type::F32);
  f.add_block("entry");
  ir::Builder b(f);
  std::vector<ir::ValueId> in;
  for (int i = 0; i < kIn; ++i) in.push_back(load_var(b, uint32_t(i)));
  std::vector<ir::ValueId> outs;
  for (int i = 0; i < kIn; ++i) {
    auto a = in[size_t(i)], x = in[size_t((i + 1) % kIn)], c = in[size_t((i + 7) % kIn)];
    auto p = b.fmul(a, x, kMul);
    ir::ValueId s;
    switch (i % 6) {
      case 0: s = b.fadd(p, c, kAdd); break;
      case 1: s = b.fadd(c, p, kAdd); break;
      case 2: s = b.binary(Opcode::FSub, p, c, 0, kAdd); break;
      case 3: s = b.binary(Opcode::FSub, c, p, 0, kAdd); break;
      case 4: {  // the other operand is defined after the product: not fused
        auto late = b.fadd(c, x, kAdd);
        s = b.fadd(p, late, kAdd);
        break;
      }
      default: s = b.fadd(b.fmul(c, c, kMul), p, kAdd); break;  // both products
    }
    outs.push_back(i % 5 == 0 ? b.emit(Opcode::Select, Type::F32,
                                       {b.icmp(ir::IntPred::Ne, b.emit(Opcode::Bitcast, Type::I32, {a}), b.i32(0)), s, c})
                              : s);
  }
  for (int i = 0; i < kIn; ++i) {
    f.add_var("out" + std::to_string(i), Type::F32);
    store_var(b, uint32_t(kIn + i), outs[size_t(i)]);
  }
  b.ret();
  REQUIRE(ir::verify(f) == "");
  std::mt19937_64 rng(31);
  const int runs = light() ? 40 : 200;
  for (int k = 0; k < runs; ++k) {
    RunSpec s;
    s.vars.resize(f.vars_bytes());
    fill_random(s.vars, rng);
    for (uint32_t v = 0; v < uint32_t(kIn); ++v)
      for (unsigned l = 0; l < 32; ++l) set_lane(s.vars, f, v, l, special_f32(rng));
    s.entry_mask = k % 5 == 4 ? uint32_t(rng()) | 1u : ~0u;
    CAPTURE(k);
    check_all_tiers(f, s, "fused mul add");
  }
}

// Chains of DAZ sums (backend_x64/lower_float.cpp, lower_daz_chain): a
// PICA200 DP4 / DP3 / DPH sums products one after the other, each partial
// sum read only by the next add; the chain is emitted at its first op with
// one test of its last sum, and the fix recomputes it op by op. Shapes: the
// products before the adds (the translation's order) and interleaved with
// them, fsub in both orders, a last term that is a value (DPH), adds of
// values only, a product read twice (a value of the chain, not its
// product), a partial sum read twice and a tree (neither is one chain), the
// last sum stored (flushed at the store), selected (its full test), read by
// a multiply (NaN-only test); twenty-four live inputs so AVX2 spills and
// reads some product operands from their slots. NaN, inf, 0 * inf, zeros
// and subnormals in every lane pattern; on every tier against the
// interpreter.
TEST_CASE("DAZ sum chains (DP4 / DP3 / DPH shapes) match the interpreter on every tier") {
  ir::Function f;
  constexpr int kIn = 24;
  for (int i = 0; i < kIn; ++i) f.add_var("in" + std::to_string(i), Type::F32);
  f.add_block("entry");
  ir::Builder b(f);
  std::vector<ir::ValueId> in;
  for (int i = 0; i < kIn; ++i) in.push_back(load_var(b, uint32_t(i)));
  auto at = [&](int i) { return in[size_t(i % kIn)]; };
  auto sub = [&](ir::ValueId x, ir::ValueId y) { return b.binary(Opcode::FSub, x, y, 0, kAdd); };
  std::vector<ir::ValueId> outs;
  for (int i = 0; i < kIn; ++i) {
    const int j = 3 * i;
    ir::ValueId r;
    switch (i % 8) {
      case 0: {  // DP4, the products first (w, z, y, x), then the sums
        auto pw = b.fmul(at(j + 3), at(j + 7), kMul), pz = b.fmul(at(j + 2), at(j + 6), kMul);
        auto py = b.fmul(at(j + 1), at(j + 5), kMul), px = b.fmul(at(j), at(j + 4), kMul);
        r = b.fadd(b.fadd(b.fadd(px, py, kAdd), pz, kAdd), pw, kAdd);
        break;
      }
      case 1: {  // DP3 interleaved, with fsubs in both orders
        auto s1 = sub(b.fmul(at(j), at(j + 5), kMul), b.fmul(at(j + 1), at(j + 9), kMul));
        r = sub(b.fmul(at(j + 2), at(j + 11), kMul), s1);
        break;
      }
      case 2: {  // DPH: the last term a value
        auto s = b.fadd(b.fadd(b.fmul(at(j), at(j + 1), kMul), b.fmul(at(j + 2), at(j + 3), kMul), kAdd),
                        b.fmul(at(j + 4), at(j + 5), kMul), kAdd);
        r = b.fadd(at(j + 6), s, kAdd);
        break;
      }
      case 3:  // values only
        r = sub(b.fadd(b.fadd(at(j), at(j + 1), kAdd), at(j + 2), kAdd), at(j + 3));
        break;
      case 4: {  // a product read twice: a value of the chain
        auto p = b.fmul(at(j), at(j + 1), kMul);
        r = b.fadd(b.fadd(p, b.fmul(at(j + 2), at(j + 3), kMul), kAdd), p, kAdd);
        break;
      }
      case 5: {  // a partial sum read twice: two chains
        auto s1 = b.fadd(b.fmul(at(j), at(j + 1), kMul), b.fmul(at(j + 2), at(j + 3), kMul), kAdd);
        r = b.fadd(b.fadd(s1, at(j + 4), kAdd), b.fmul(s1, at(j + 5), kMul), kAdd);
        break;
      }
      case 6: {  // a tree: (p0 + p1) + (p2 + p3)
        auto l = b.fadd(b.fmul(at(j), at(j + 1), kMul), b.fmul(at(j + 2), at(j + 3), kMul), kAdd);
        auto rr = b.fadd(b.fmul(at(j + 4), at(j + 5), kMul), b.fmul(at(j + 6), at(j + 7), kMul), kAdd);
        r = b.fadd(l, rr, kAdd);
        break;
      }
      default:  // two products, one sum
        r = b.fadd(b.fmul(at(j), at(j), kMul), b.fmul(at(j + 1), at(j + 2), kMul), kAdd);
        break;
    }
    if (i % 3 == 1)  // its full FtzOut test
      r = b.emit(Opcode::Select, Type::F32,
                 {b.icmp(ir::IntPred::Ne, b.emit(Opcode::Bitcast, Type::I32, {at(i)}), b.i32(0)), r, at(i + 1)});
    else if (i % 3 == 2)  // read by DAZ arithmetic only
      r = b.fmul(r, at(i + 2), kMul);
    outs.push_back(r);
  }
  for (int i = 0; i < kIn; ++i) {
    f.add_var("out" + std::to_string(i), Type::F32);
    store_var(b, uint32_t(kIn + i), outs[size_t(i)]);
  }
  b.ret();
  REQUIRE(ir::verify(f) == "");
  std::mt19937_64 rng(37);
  const int runs = light() ? 60 : 300;
  for (int k = 0; k < runs; ++k) {
    RunSpec s;
    s.vars.resize(f.vars_bytes());
    fill_random(s.vars, rng);
    // Mostly ordinary numbers, so that one special lane decides a chain's fix.
    for (uint32_t v = 0; v < uint32_t(kIn); ++v)
      for (unsigned l = 0; l < 32; ++l)
        set_lane(s.vars, f, v, l, rng() % 4 == 0 ? special_f32(rng) : 0x3E000000u + uint32_t(rng() % 0x02000000u));
    s.entry_mask = k % 5 == 4 ? uint32_t(rng()) | 1u : ~0u;
    CAPTURE(k);
    check_all_tiers(f, s, "daz sum chains");
  }
}

}  // namespace gpurc_test_backend_daz_chains
