// AVX-512: the i1 `and` of two compares read by nothing else is a kandw of
// their masks (k5..k7) and one broadcast (lower_int.cpp, kand_pair), where
// each compare made its 0/1 lanes and a vpandd joined them (Tesla's MAD
// range tests). The listing of the pair, and the results against the
// interpreter on every tier: the pair, a pair with ops between, a compare
// also stored (keeps its lanes), and an `and` whose operands are the same.
// AVX2: a pair of `x > C` compares with C from the pool leaves its all-ones
// lanes for one vpand and one vpsrld (one shift fewer).
#include <doctest/doctest.h>

#include <random>
#include <string>

#include "../backend/compare.h"
#include "ir/builder.h"
#include "tests/backend_x64/tier_compile.h"

namespace gpurc_test_backend_x64_kand_compare {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::backend::test;
using ir::IntPred;
using ir::Opcode;
using ir::Type;

TEST_CASE("x64 jit: an i1 and of two compares is a kandw of their masks on AVX-512, exactly") {
  ir::Function f;
  f.add_block("entry");
  ir::Builder b(f);
  const uint32_t xa = f.add_var("a", Type::I32), xb = f.add_var("b", Type::I32), xc = f.add_var("c", Type::I16);
  const ir::ValueId a = b.emit(Opcode::LoadVar, Type::I32, {}, 0, 0, xa);
  const ir::ValueId bv = b.emit(Opcode::LoadVar, Type::I32, {}, 0, 0, xb);
  const ir::ValueId c = b.emit(Opcode::LoadVar, Type::I16, {}, 0, 0, xc);
  auto out = [&](ir::ValueId v, Type t) { b.emit(Opcode::StoreVar, Type::Void, {v}, 0, 0, f.add_var("r", t)); };
  // The pair (constant and register operands), then read by a select too.
  const ir::ValueId p1 = b.and_(b.icmp(IntPred::Sgt, a, b.i32(100)), b.icmp(IntPred::Ult, bv, a));
  out(p1, Type::I1);
  out(b.select(p1, a, bv), Type::I32);
  // Ops between the compares (adds, shifts, a narrow signed compare).
  const ir::ValueId q1 = b.icmp(IntPred::Eq, b.iadd(a, b.i32(7)), bv);
  const ir::ValueId s = b.emit(Opcode::Shl, Type::I32, {bv, b.i32(1)}, uint8_t(ir::ShiftMode::Clamp));
  const ir::ValueId q2 = b.icmp(IntPred::Slt, c, b.emit(Opcode::Trunc, Type::I16, {s}));
  out(b.and_(q2, q1), Type::I1);
  // A compare stored as well keeps its lanes; an `and` of one compare twice.
  const ir::ValueId r1 = b.icmp(IntPred::Uge, a, bv), r2 = b.icmp(IntPred::Ne, a, b.i32(3));
  out(b.and_(r1, r2), Type::I1);
  out(r1, Type::I1);
  const ir::ValueId t1 = b.icmp(IntPred::Sle, bv, a);
  out(b.and_(t1, t1), Type::I1);
  b.ret();
  REQUIRE(ir::verify(f) == "");
  static const uint32_t kEdges[] = {0u, 1u, 3u, 100u, 101u, 0x7fffffffu, 0x80000000u, 0xffffffffu};
  std::mt19937_64 rng(1614);
  for (Tier tier : host_tiers()) {
    std::string err;
    JitOptions o;
    o.tier = tier;
    auto cf = compile(f, o, &err);
    REQUIRE_MESSAGE(cf, err);
    if (std::string(tier_name(tier)) == "jit-avx512") {
      const std::string text = cf->disassemble();
      size_t kands = 0;
      for (size_t at = text.find("kandw k"); at != std::string::npos; at = text.find("kandw k", at + 1)) ++kands;
      CHECK(kands == 2);  // the first two pairs; the third has a stored compare
      CHECK(text.find("kandw k5") + text.find("kandw k6") + text.find("kandw k7") != 3 * std::string::npos);
    }
    for (int round = 0; round < 24; ++round) {
      RunSpec rs;
      rs.vars.resize(f.vars_bytes());
      fill_random(rs.vars, rng);
      fill_compare_pair(rs, f, xa, xb, kEdges, round, 5, rng);
      const std::string d = compare_with_interpreter(f, rs, tier);
      CHECK_MESSAGE(d.empty(), tier_name(tier) << ": round " << round << ": " << d);
    }
  }
}

TEST_CASE("x64 jit AVX2: an i1 and of two compares with pool constants shifts once, exactly") {
  ir::Function f;
  f.add_block("entry");
  ir::Builder b(f);
  const uint32_t xa = f.add_var("a", Type::I32), xb = f.add_var("b", Type::I32);
  const ir::ValueId a = b.emit(Opcode::LoadVar, Type::I32, {}, 0, 0, xa);
  const ir::ValueId bv = b.emit(Opcode::LoadVar, Type::I32, {}, 0, 0, xb);
  auto out = [&](ir::ValueId v, Type t) { b.emit(Opcode::StoreVar, Type::Void, {v}, 0, 0, f.add_var("r", t)); };
  // Tesla's range tests: biased shifts compared with pool constants; the
  // pair's result read by a select too.
  const ir::ValueId sa = b.iadd(b.emit(Opcode::Shl, Type::I32, {a, b.i32(1)}, uint8_t(ir::ShiftMode::Clamp)),
                                b.i32(0x82000000u));
  const ir::ValueId sb = b.iadd(b.emit(Opcode::Shl, Type::I32, {bv, b.i32(1)}, uint8_t(ir::ShiftMode::Clamp)),
                                b.i32(0x81000000u));
  const ir::ValueId p = b.and_(b.icmp(IntPred::Sgt, sa, b.i32(0x9cffffffu)), b.icmp(IntPred::Sgt, sb, b.i32(0x81ffffffu)));
  out(p, Type::I1);
  out(b.select(p, a, bv), Type::I32);
  // Not paired: a register operand; a compare stored as well.
  out(b.and_(b.icmp(IntPred::Sgt, a, b.i32(7)), b.icmp(IntPred::Sgt, bv, a)), Type::I1);
  const ir::ValueId r1 = b.icmp(IntPred::Sgt, a, b.i32(1));
  out(b.and_(r1, b.icmp(IntPred::Sgt, bv, b.i32(-2))), Type::I1);
  out(r1, Type::I1);
  b.ret();
  REQUIRE(ir::verify(f) == "");
  {
    // One vpsrld per 0/1 result: the pair's `and`, then 2 + 2 unpaired.
    const std::string text = gpurc::test::compile_for_tier(f, x64::Tier::Avx2)->disassemble();
    const std::string body = text.substr(0, text.find(" ret"));
    size_t shifts = 0;
    for (size_t at = body.find("vpsrld"); at != std::string::npos; at = body.find("vpsrld", at + 1)) ++shifts;
    CHECK_MESSAGE(shifts == 5, body);
  }
  static const uint32_t kEdges[] = {0x007fffffu, 0x00800000u, 0x0d7fffffu, 0x0d800000u,
                                    0x7effffffu, 0x7f000000u, 0x7f7fffffu, 0xff800000u};
  std::mt19937_64 rng(1714);
  for (Tier tier : host_tiers())
    for (int round = 0; round < 24; ++round) {
      RunSpec rs;
      rs.vars.resize(f.vars_bytes());
      fill_random(rs.vars, rng);
      fill_compare_pair(rs, f, xa, xb, kEdges, round, 5, rng);
      const std::string d = compare_with_interpreter(f, rs, tier);
      CHECK_MESSAGE(d.empty(), tier_name(tier) << ": round " << round << ": " << d);
    }
}

}  // namespace gpurc_test_backend_x64_kand_compare
