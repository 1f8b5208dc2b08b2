// Three lowering details the Tesla MAD's code reads (backend_x64/lower_float.cpp,
// lower_int.cpp), each against the interpreter on every tier and on the
// listing (a tier the host lacks through JitOptions::listing_only):
//  - in a function the x64 tiers run in DAZ mode (every float op reads its
//    operands flushed), an fma with FtzIn and, on AVX2, a product, sum or
//    difference rounding toward zero (MXCSR's rounding) read their operands
//    as the host does: DAZ flushes them, so no explicit flush is emitted
//    (Tesla's MAD: its residual fma, its exact form's products toward zero;
//    Tesla's `mul rz` / `add rz`), with subnormal, zero, inf and NaN
//    operands and products around the smallest normal;
//  - AVX2: a signed 32-bit compare `x > C` with a constant reads C from the
//    constant pool as vpcmpgtd's memory operand instead of broadcasting it
//    into a register (pool_const_cmp; the MAD's range tests), as 0/1 lanes
//    and as select masks, for constants at the ends of the signed range
//    (with `x < C` beside it, which keeps its forms);
//  - an ffma whose addend is an fneg right before it, read only there, is
//    one vfmsub231ps (fneg_fma_of; the MAD's residual), in and out of DAZ
//    mode, and the cases it must leave alone (the Propagate NaN rule);
//  - a float op with the Any NaN rule (the MAD's fast path) has no NaN test
//    and no fix (FtzOut keeps its test); its non-NaN lanes are the
//    interpreter's bits, its NaN lanes some NaN.
// (One file named to sort last: a unity batch that includes tests/backend's
// tiers.h before a file using both x64 and backend::test names breaks it.)
#include <doctest/doctest.h>

#include <random>

#include "../backend/compare.h"
#include "backend_x64/jit.h"
#include "tests/backend_x64/tier_compile.h"
#include "ir/builder.h"

namespace gpurc_test_backend_x64_x64_daz_compares {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::backend::test;
using ir::Opcode;
using ir::Type;

namespace {

uint32_t operand(std::mt19937_64& rng) {
  static const uint32_t kSpecial[] = {0x00000000u, 0x80000000u, 0x00000001u, 0x807FFFFFu, 0x00400000u,
                                      0x00800000u, 0x80800000u, 0x7F800000u, 0xFF800000u, 0x7FC00000u,
                                      0xFFFFFFFFu, 0x7F800001u, 0x3F800000u, 0xBF800001u, 0x7F7FFFFFu,
                                      0x20000000u, 0x1FFFFFFFu, 0x9F800001u, 0x3FC00000u, 0x5F800000u};
  switch (rng() % 4) {
    case 0: return uint32_t(rng());
    case 1: return 0x3F000000u + uint32_t(rng() % 0x01000000u) + (uint32_t(rng()) & 0x80000000u);
    default: return kSpecial[rng() % (sizeof kSpecial / sizeof kSpecial[0])];
  }
}

// Runs f (vars a, b, c in) on every tier against the interpreter: random
// special-rich operands in all 32 lanes, every fifth run with a random
// entry mask.
void check_random_operands(const ir::Function& f, uint64_t seed, const char* what) {
  std::mt19937_64 rng(seed);
  const int runs = std::getenv("GPURC_TEST_LIGHT") ? 60 : 300;
  for (int k = 0; k < runs; ++k) {
    RunSpec s;
    s.vars.resize(f.vars_bytes());
    fill_random(s.vars, rng);
    for (uint32_t v = 0; v < 3; ++v)
      for (unsigned l = 0; l < 32; ++l) set_lane(s.vars, f, v, l, operand(rng));
    s.entry_mask = k % 5 == 4 ? uint32_t(rng()) | 1u : ~0u;
    CAPTURE(k);
    check_all_tiers(f, s, what);
  }
}

constexpr uint32_t kNan = uint32_t(ir::NanRule::AllOnes) << ir::ff::NanShift;
constexpr uint32_t kRz = uint32_t(ir::Round::TowardZero) << ir::ff::RoundShift;

// vars a, b, c in; six results out.
ir::Function daz_function() {
  ir::Function f;
  for (const char* n : {"a", "b", "c"}) f.add_var(n, Type::F32);
  for (int i = 0; i < 7; ++i) f.add_var("out" + std::to_string(i), Type::F32);
  f.add_block("entry");
  ir::Builder b(f);
  auto a = b.emit(Opcode::LoadVar, Type::F32, {}, 0, 0, 0);
  auto x = b.emit(Opcode::LoadVar, Type::F32, {}, 0, 0, 1);
  auto c = b.emit(Opcode::LoadVar, Type::F32, {}, 0, 0, 2);
  using ir::ff::FtzIn;
  using ir::ff::FtzOut;
  std::vector<ir::ValueId> outs = {
      b.ffma(a, x, c, FtzIn | kNan),                               // fma, result unflushed
      b.ffma(a, x, b.fneg(b.fmul(a, x, FtzIn | kNan)), FtzIn | kNan),  // the MAD's residual
      b.fmul(a, x, FtzIn | kNan | kRz),                            // product toward zero, unflushed
      b.fmul(a, c, FtzIn | FtzOut | kNan | kRz),                   // Tesla's mul rz
      b.fadd(x, c, FtzIn | FtzOut | kNan | kRz),                   // Tesla's add rz
      b.binary(Opcode::FSub, a, c, 0, FtzIn | kRz),                // canonical NaNs, unflushed
      b.ffma(a, c, x, FtzIn | FtzOut | kNan | kRz),                // fma toward zero
  };
  for (size_t i = 0; i < outs.size(); ++i) b.emit(Opcode::StoreVar, Type::Void, {outs[i]}, 0, 0, uint32_t(3 + i));
  b.ret();
  return f;
}

size_t count_lines_with(const std::string& text, const char* what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("x64 jit DAZ mode: fma and rounding toward zero read FtzIn operands flushed by the host") {
  ir::Function f = daz_function();
  REQUIRE(ir::verify(f) == "");
  // AVX2 listing: the function runs in DAZ mode (0x1FC0 loaded) and its
  // float ops flush no operand inline: up to the epilogue's `ret` (the NaN
  // and FtzOut fixes are out of line, after it) there is no vblendvps.
  // Before, each op flushed two or three operands.
  {
    const std::string text = gpurc::test::compile_for_tier(f, x64::Tier::Avx2)->disassemble();
    CHECK(text.find("0x1FC0") != std::string::npos);
    const size_t ret = text.find(" ret");
    REQUIRE(ret != std::string::npos);
    CHECK_MESSAGE(count_lines_with(text.substr(0, ret), "vblendvps") == 0, text);
  }
  check_random_operands(f, 41, "daz rounding");
}

TEST_CASE("x64 jit AVX2: signed compares with a constant read it from the pool, exactly") {
  ir::Function f;
  f.add_block("entry");
  ir::Builder b(f);
  const uint32_t xin = f.add_var("x", Type::I32), yin = f.add_var("y", Type::I32);
  const ir::ValueId x = b.emit(Opcode::LoadVar, Type::I32, {}, 0, 0, xin);
  const ir::ValueId y = b.emit(Opcode::LoadVar, Type::I32, {}, 0, 0, yin);
  size_t compares = 0;
  for (uint32_t k : {0u, 1u, 0xffffffffu, 0x80000000u, 0x80000001u, 0x7fffffffu, 0x63000000u, 0x81ffffffu}) {
    for (ir::IntPred p : {ir::IntPred::Sgt, ir::IntPred::Slt}) {
      // (x + k) so that each compare reads a value of its own
      const ir::ValueId s = b.emit(Opcode::IAdd, Type::I32, {x, b.constant(Type::I32, k ^ 0x5a5a0000u)});
      const ir::ValueId c = b.icmp(p, s, b.constant(Type::I32, k));
      b.emit(Opcode::StoreVar, Type::Void, {c}, 0, 0, f.add_var("c", Type::I1));
      // a select of another compare: its mask only
      const ir::ValueId m = b.icmp(p, x, b.constant(Type::I32, k + 7));
      b.emit(Opcode::StoreVar, Type::Void, {b.select(m, x, y)}, 0, 0, f.add_var("s", Type::I32));
      compares += 2;
    }
  }
  b.ret();
  REQUIRE(ir::verify(f) == "");
  {
    const std::string text = gpurc::test::compile_for_tier(f, x64::Tier::Avx2)->disassemble();
    size_t pool = 0;  // vpcmpgtd ymmD, ymmA, [pool]
    for (size_t p = 0, e; p < text.size(); p = e + 1) {
      e = text.find('\n', p);
      if (e == std::string::npos) e = text.size();
      const std::string line = text.substr(p, e - p);
      if (line.find("vpcmpgtd") != std::string::npos && line.find(", [0x") != std::string::npos) ++pool;
    }
    // Every x > C (half of the compares) and every mask-only x < C (a
    // quarter: inverted_mask_cmp's x > C - 1 from the pool, none of those C
    // is INT_MIN); x < C with 0/1 lanes keeps the register form.
    CHECK_MESSAGE(pool >= compares * 3 / 4, text);
  }
  std::mt19937_64 rng(8);
  for (Tier tier : host_tiers()) {
    for (int round = 0; round < 16; ++round) {
      RunSpec rs;
      rs.vars.resize(f.vars_bytes());
      fill_random(rs.vars, rng);
      static const uint32_t edges[] = {0u, 1u, 0xffffffffu, 0x80000000u, 0x7fffffffu, 0x63000000u, 0x62ffffffu};
      for (unsigned l = 0; l < 32; l += 2) set_lane(rs.vars, f, xin, l, edges[(l / 2 + round) % 7] ^ 0x5a5a0000u);
      rs.entry_mask = round == 0 ? ~0u : uint32_t(rng());
      const std::string d = compare_with_interpreter(f, rs, tier);
      CHECK_MESSAGE(d.empty(), tier_name(tier) << ": " << d);
    }
  }
}


// ffma(a, b, fneg c) with the fneg read only there, right before it: one
// vfmsub231ps at the fneg (lower_float.cpp, fneg_fma_of), in a function
// outside DAZ mode (an fsqrt keeps it out) and in one inside it, for the
// NaN rules that read no payload (AllOnes, Canonical), FtzIn (the explicit
// flush of the addend), rounding toward zero, ZeroMul; not fused: the
// Propagate rule (a NaN c's sign reaches the result), an fneg read twice,
// an fneg with another op between it and the ffma. Every result against
// the interpreter on each host tier with subnormal, zero, inf and NaN
// operands; the listings of both tiers count the fused forms.
namespace {
constexpr uint32_t kCanon = uint32_t(ir::NanRule::Canonical) << ir::ff::NanShift;
constexpr uint32_t kProp = uint32_t(ir::NanRule::Propagate) << ir::ff::NanShift;
ir::Function fneg_fma_function(bool daz) {
  ir::Function f;
  for (const char* n : {"a", "b", "c"}) f.add_var(n, Type::F32);
  f.add_block("entry");
  ir::Builder b(f);
  auto a = b.emit(Opcode::LoadVar, Type::F32, {}, 0, 0, 0);
  auto x = b.emit(Opcode::LoadVar, Type::F32, {}, 0, 0, 1);
  auto c = b.emit(Opcode::LoadVar, Type::F32, {}, 0, 0, 2);
  using ir::ff::FtzIn;
  using ir::ff::FtzOut;
  using ir::ff::ZeroMul;
  const uint32_t in = daz ? FtzIn : 0;  // (DAZ mode needs FtzIn on every op)
  std::vector<ir::ValueId> outs = {
      b.ffma(a, x, b.fneg(c), in | kNan),                    // fused
      b.ffma(x, c, b.fneg(a), in | kCanon | FtzOut),          // fused
      b.ffma(a, c, b.fneg(x), FtzIn | kNan | kRz),            // fused: FtzIn, toward zero
      b.ffma(c, a, b.fneg(x), in | kNan | ZeroMul),           // fused: 0 * inf is 0
      b.ffma(a, x, b.fneg(c), in | kProp),                    // not fused: Propagate
  };
  auto twice = b.fneg(a);  // not fused: read twice
  outs.push_back(b.ffma(x, c, twice, in | kNan));
  outs.push_back(b.fadd(twice, c, in | kNan));
  auto apart = b.fneg(c);  // not fused: an op between
  auto between = b.fmul(a, a, in | kNan);
  outs.push_back(b.ffma(a, x, apart, in | kNan));
  outs.push_back(between);
  if (!daz) outs.push_back(b.emit(Opcode::FSqrt, Type::F32, {a}, 0, 0, 0));  // keeps the function out of DAZ mode
  for (size_t i = 0; i < outs.size(); ++i)
    b.emit(Opcode::StoreVar, Type::Void, {outs[i]}, 0, 0, f.add_var("out" + std::to_string(i), Type::F32));
  b.ret();
  return f;
}
constexpr uint32_t kAny = uint32_t(ir::NanRule::Any) << ir::ff::NanShift;

// The MAD fast path's ops with NaN rule `rule`, in DAZ mode (FtzIn on every
// op) or not (an fsqrt keeps IEEE mode), beside a Sat and an FtzOut op.
ir::Function nan_rule_function(bool daz, uint32_t rule) {
  ir::Function f;
  for (const char* n : {"a", "b", "c"}) f.add_var(n, Type::F32);
  f.add_block("entry");
  ir::Builder b(f);
  auto a = b.emit(Opcode::LoadVar, Type::F32, {}, 0, 0, 0);
  auto x = b.emit(Opcode::LoadVar, Type::F32, {}, 0, 0, 1);
  auto c = b.emit(Opcode::LoadVar, Type::F32, {}, 0, 0, 2);
  const uint32_t in = daz ? ir::ff::FtzIn : 0;
  auto p = b.fmul(a, x, ir::ff::FtzIn | rule);  // the product
  std::vector<ir::ValueId> outs = {
      p,
      b.ffma(a, x, b.fneg(p), in | rule),                          // the residual (one vfmsub)
      b.fadd(p, c, in | rule),                                     // the sum
      b.binary(Opcode::FSub, x, c, 0, in | rule | ir::ff::Sat | (daz ? ir::ff::FtzOut : 0)),  // NaN lanes -> +0
      b.fmul(a, c, in | rule | ir::ff::FtzOut),                    // keeps its test (the flush)
  };
  if (!daz) outs.push_back(b.emit(Opcode::FSqrt, Type::F32, {a}, 0, rule));
  for (size_t i = 0; i < outs.size(); ++i)
    b.emit(Opcode::StoreVar, Type::Void, {outs[i]}, 0, 0, f.add_var("out" + std::to_string(i), Type::F32));
  b.ret();
  return f;
}

// The number of result tests in the code before the epilogue's `ret`: one
// vptest (AVX2) or kortestw (AVX-512) each.
size_t result_tests(const std::string& text, x64::Tier tier) {
  const size_t ret = text.find(" ret");
  REQUIRE(ret != std::string::npos);
  return count_lines_with(text.substr(0, ret), tier == x64::Tier::Avx2 ? "vptest" : "kortestw");
}
}  // namespace

TEST_CASE("x64 jit: the Any NaN rule has no result test, and its non-NaN lanes are exact") {
  for (bool daz : {false, true}) {
    CAPTURE(daz);
    ir::Function f = nan_rule_function(daz, kAny);
    REQUIRE(ir::verify(f) == "");
    ir::Function g = nan_rule_function(daz, kNan);
    for (x64::Tier tier : {x64::Tier::Avx512, x64::Tier::Avx2}) {
      CAPTURE(x64::tier_name(tier));
      const std::string text = gpurc::test::compile_for_tier(f, tier)->disassemble();
      CHECK((text.find("0x1FC0") != std::string::npos) == daz);
      // One FtzOut op keeps its test (in DAZ mode the stored Sat difference is
      // flushed at its store, without one).
      CHECK_MESSAGE(result_tests(text, tier) == 1, text);
      // (in DAZ mode the AllOnes product with FtzOut is fixed in line, untested: daz_fix_inline)
      CHECK(result_tests(gpurc::test::compile_for_tier(g, tier)->disassemble(), tier) >= (daz ? 4u : 5u));
    }
    // Every tier against the interpreter (which gives the canonical NaN):
    // equal bits, except that a NaN may be any NaN.
    std::mt19937_64 rng(daz ? 91 : 92);
    const int runs = std::getenv("GPURC_TEST_LIGHT") ? 60 : 300;
    size_t nan_lanes = 0;
    auto ref = ir::make_ir_interpreter(f);
    for (Tier t : host_tiers()) {
      std::string err;
      JitOptions o;
      o.tier = t;
      auto jit = compile(f, o, &err);
      REQUIRE_MESSAGE(jit, err);
      for (int k = 0; k < runs; ++k) {
        RunSpec s;
        s.vars.resize(f.vars_bytes());
        fill_random(s.vars, rng);
        for (uint32_t v = 0; v < 3; ++v)
          for (unsigned l = 0; l < 32; ++l) set_lane(s.vars, f, v, l, operand(rng));
        Outcome want = run_one(*ref, f, s), got = run_one(*jit, f, s);
        REQUIRE(want.status == ir::RunStatus::Done);
        REQUIRE(got.status == ir::RunStatus::Done);
        for (uint32_t var = 3; var < f.vars.size(); ++var)
          for (unsigned l = 0; l < 32; ++l) {
            const uint32_t w = uint32_t(get_lane(want.vars, f, var, l)), h = uint32_t(get_lane(got.vars, f, var, l));
            auto is_nan = [](uint32_t u) { return (u & 0x7fffffffu) > 0x7f800000u; };
            CAPTURE(tier_name(t));
            CAPTURE(var);
            CAPTURE(l);
            if (is_nan(w)) {
              CHECK(is_nan(h));
              ++nan_lanes;
            } else {
              CHECK(w == h);
            }
          }
      }
    }
    CHECK(nan_lanes > 0);
  }
}

TEST_CASE("x64 jit: ffma of an fneg right before it is one vfmsub, exactly") {
  for (bool daz : {false, true}) {
    ir::Function f = fneg_fma_function(daz);
    REQUIRE(ir::verify(f) == "");
    for (x64::Tier tier : {x64::Tier::Avx512, x64::Tier::Avx2}) {
      CAPTURE(x64::tier_name(tier));
      CAPTURE(daz);
      const std::string text = gpurc::test::compile_for_tier(f, tier)->disassemble();
      CHECK((text.find("0x1FC0") != std::string::npos) == daz);
      const size_t ret = text.find(" ret");
      REQUIRE(ret != std::string::npos);
      const std::string body = text.substr(0, ret);
      CHECK_MESSAGE(count_lines_with(body, "vfmsub231ps") == 4, body);
      CHECK_MESSAGE(count_lines_with(body, "vfmadd231ps") == 3, body);
    }
    check_random_operands(f, daz ? 77 : 78, daz ? "fneg fma daz" : "fneg fma");
  }
}

}  // namespace gpurc_test_backend_x64_x64_daz_compares
