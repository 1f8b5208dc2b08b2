// An f32 product rounded toward zero (Tesla's MAD fast path, `mul rz`):
// AVX-512 rounds it with `vmulps {rz-sae}`, AVX2 without switching MXCSR
// (backend_x64/lower_float.cpp, lower_mul_rz_avx2: the product rounded to
// nearest, stepped toward zero from the sign of an exact fma residual). Both
// against the interpreter on every tier the host has, in IEEE mode and in
// DAZ mode (with and without FtzIn / FtzOut, three NaN rules), with
// operands aimed at what the step must get right: products whose residual
// underflows (around the smallest normals, down to the subnormal range),
// products rounded up to a power of two, overflow to the largest float, inf
// and NaN factors, 0 * inf, signed zeros, subnormal factors and exact
// products. And the AVX2 listing: one fma per product and no MXCSR switch
// on the usual path. (Named to sort after x64_daz_compares.cpp: see there.)
#include <doctest/doctest.h>

#include <random>

#include "../backend/compare.h"
#include "backend_x64/jit.h"
#include "tests/backend_x64/tier_compile.h"
#include "ir/builder.h"

namespace gpurc_test_backend_x64_x64_mul_rz {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::backend::test;
using ir::Opcode;
using ir::Type;

namespace {

constexpr uint32_t kRz = uint32_t(ir::Round::TowardZero) << ir::ff::RoundShift;
constexpr uint32_t rule(ir::NanRule r) { return uint32_t(r) << ir::ff::NanShift; }

// A float with a random sign and mantissa and the unbiased exponent e
// (clamped to the normal range).
uint32_t float_exp(std::mt19937_64& rng, int e) {
  e = std::max(-126, std::min(127, e));
  return (uint32_t(rng()) & 0x80000000u) | (uint32_t(e + 127) << 23) | (uint32_t(rng()) & 0x7fffffu);
}

// Factors a, b of one lane.
void rz_operands(std::mt19937_64& rng, uint32_t& a, uint32_t& b) {
  static const uint32_t kSpecial[] = {0x00000000u, 0x80000000u, 0x00000001u, 0x807fffffu, 0x00400000u,
                                      0x00800000u, 0x80800000u, 0x7f800000u, 0xff800000u, 0x7fc00000u,
                                      0xffffffffu, 0x7f800001u, 0xff800001u, 0x3f800000u, 0xbf800001u,
                                      0x7f7fffffu, 0x3f7fffffu, 0x3f800001u, 0x00800001u, 0x4b000000u};
  const int e = int(rng() % 61) - 30;
  switch (rng() % 8) {
    case 0: {  // products from 2^-160 to 2^-95: residuals below the smallest subnormal, subnormal products
      const int pe = -160 + int(rng() % 66);
      a = float_exp(rng, e), b = float_exp(rng, pe - e);
      break;
    }
    case 1: {  // products around the largest float: overflow to inf when rounded to nearest
      const int pe = 125 + int(rng() % 4);
      a = float_exp(rng, e + 60), b = float_exp(rng, pe - e - 60);
      break;
    }
    case 2: {  // (1 + 2^-23) (2 - 2^-22) = 2 - 2^-45: rounded to nearest, a power of two
      const int pe = -150 + int(rng() % 278);
      const int ea = std::max(-126, std::min(127, pe / 2));
      a = (uint32_t(rng()) & 0x80000000u) | (uint32_t(ea + 127) << 23) | 1u;
      b = (uint32_t(rng()) & 0x80000000u) | (uint32_t(std::max(1, std::min(254, pe - ea + 127))) << 23) | 0x7ffffeu;
      break;
    }
    case 3:  // exact products: short mantissas
      a = float_exp(rng, e) & 0xfff00000u, b = float_exp(rng, -e) & 0xfffc0000u;
      break;
    case 4:  // a subnormal factor beside one that brings the product back up
      a = (uint32_t(rng()) & 0x80000000u) | (1u + uint32_t(rng() % 0x7fffffu));
      b = float_exp(rng, 100 + int(rng() % 28));
      break;
    case 5:
      a = kSpecial[rng() % (sizeof kSpecial / sizeof kSpecial[0])];
      b = rng() & 1 ? kSpecial[rng() % (sizeof kSpecial / sizeof kSpecial[0])] : float_exp(rng, e);
      break;
    case 6:
      a = uint32_t(rng()), b = uint32_t(rng());
      break;
    default:  // ordinary
      a = float_exp(rng, e), b = float_exp(rng, -e);
      break;
  }
  if (rng() & 1) std::swap(a, b);
}

// vars a, b in, one product toward zero per entry of `flags` out. With
// `daz`, every float op has FtzIn (the x64 tiers run the function in DAZ
// mode); without, one product without FtzIn keeps it in IEEE mode.
ir::Function rz_function(const std::vector<uint32_t>& flags) {
  ir::Function f;
  f.add_var("a", Type::F32);
  f.add_var("b", Type::F32);
  for (size_t i = 0; i < flags.size(); ++i) f.add_var("out" + std::to_string(i), Type::F32);
  f.add_block("entry");
  ir::Builder b(f);
  auto x = b.emit(Opcode::LoadVar, Type::F32, {}, 0, 0, 0);
  auto y = b.emit(Opcode::LoadVar, Type::F32, {}, 0, 0, 1);
  for (size_t i = 0; i < flags.size(); ++i)
    b.emit(Opcode::StoreVar, Type::Void, {b.fmul(x, y, flags[i] | kRz)}, 0, 0, uint32_t(2 + i));
  b.ret();
  return f;
}

using ir::ff::FtzIn;
using ir::ff::FtzOut;
const std::vector<uint32_t> kDazFlags = {FtzIn | rule(ir::NanRule::AllOnes), FtzIn | FtzOut | rule(ir::NanRule::AllOnes),
                                         FtzIn | rule(ir::NanRule::Propagate), FtzIn | FtzOut | rule(ir::NanRule::Canonical)};
const std::vector<uint32_t> kIeeeFlags = {0u, FtzIn | rule(ir::NanRule::AllOnes), FtzOut | rule(ir::NanRule::Propagate),
                                          FtzIn | FtzOut, rule(ir::NanRule::AllOnes)};

size_t count_of(const std::string& text, const char* what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("x64 jit: f32 products rounded toward zero, exact on every tier in IEEE and DAZ mode") {
  for (bool daz : {true, false}) {
    CAPTURE(daz);
    const std::vector<uint32_t>& flags = daz ? kDazFlags : kIeeeFlags;
    ir::Function f = rz_function(flags);
    REQUIRE(ir::verify(f) == "");
    // AVX2 listing: DAZ mode exactly when every product has FtzIn; up to the
    // epilogue's `ret` (the fixes and the MXCSR product of a subnormal
    // result in DAZ mode are out of line, after it) one fma per product and
    // no MXCSR switch but the prologue's (before: stmxcsr, ldmxcsr twice per
    // product). AVX-512: `{rz-sae}` products, no fma.
    {
      const std::string text = gpurc::test::compile_for_tier(f, x64::Tier::Avx2)->disassemble();
      CHECK((text.find("0x1FC0") != std::string::npos) == daz);
      const size_t ret = text.find(" ret");
      REQUIRE(ret != std::string::npos);
      const std::string hot = text.substr(0, ret);
      CHECK_MESSAGE(count_of(hot, "vfmsub231ps") == flags.size(), text);
      CHECK_MESSAGE(count_of(hot, "stmxcsr") == 1, text);
      const std::string z = gpurc::test::compile_for_tier(f, x64::Tier::Avx512)->disassemble();
      CHECK_MESSAGE(count_of(z, "rz-sae") == flags.size(), z);
      CHECK(count_of(z, "vfmsub231ps") == 0);
    }
    std::mt19937_64 rng(daz ? 61 : 62);
    const int runs = std::getenv("GPURC_TEST_LIGHT") ? 80 : 400;
    for (int k = 0; k < runs; ++k) {
      RunSpec s;
      s.vars.resize(f.vars_bytes());
      fill_random(s.vars, rng);
      for (unsigned l = 0; l < 32; ++l) {
        uint32_t a, b;
        rz_operands(rng, a, b);
        set_lane(s.vars, f, 0, l, a);
        set_lane(s.vars, f, 1, l, b);
      }
      s.entry_mask = k % 5 == 4 ? uint32_t(rng()) | 1u : ~0u;
      CAPTURE(k);
      check_all_tiers(f, s, daz ? "rz products, DAZ" : "rz products, IEEE");
    }
  }
}

// Lanes one at a time where the step's reasons are easy to name: each pair
// in all 32 lanes, so a wrong lane is the pair's.
TEST_CASE("x64 jit: f32 products rounded toward zero, named cases") {
  struct Pair {
    uint32_t a, b;
    const char* why;
  };
  const Pair pairs[] = {
      {0x3f800001u, 0x3ffffffeu, "rounded up to 2.0: the float below it"},
      {0xbf800001u, 0x3ffffffeu, "the same, negative"},
      {0x1f800001u, 0x1ffffffeu, "rounded up to 2^-127 from just below: a subnormal"},
      {0x00ffffffu, 0x3f7fffffu, "2^-126 times just below one: residual below the smallest subnormal"},
      {0x80ffffffu, 0x3f7fffffu, "the same, negative"},
      {0x20000001u, 0x207ffffeu, "2^-125 - 2^-171 rounded up: the residual underflows to -0; the float below"},
      {0xa0000001u, 0x207ffffeu, "the same, negative (its residual, unadjusted, would be +0)"},
      {0x0c800001u, 0x33800001u, "2^-126 (1 + 2^-22) + 2^-172 rounded down: the residual underflows to +0"},
      {0x7f7fffffu, 0x3f800001u, "overflows to inf rounded to nearest: the largest float"},
      {0xff7fffffu, 0x3f800001u, "the same, negative"},
      {0x7f800000u, 0x3f800000u, "inf factor: inf"},
      {0xff800000u, 0x40000000u, "-inf factor: -inf"},
      {0x7f800000u, 0x00000000u, "inf * 0: NaN"},
      {0x80000000u, 0x3f800000u, "-0 * 1: -0"},
      {0x00000001u, 0x3f000000u, "the smallest subnormal halved: a zero"},
      {0x00000003u, 0x3f000000u, "1.5 times the smallest subnormal: one"},
      {0x7fc00001u, 0x3f800000u, "a NaN factor"},
      {0x40400000u, 0x40a00000u, "exact: 15"},
  };
  for (bool daz : {true, false}) {
    ir::Function f = rz_function(daz ? kDazFlags : kIeeeFlags);
    for (const Pair& p : pairs) {
      CAPTURE(daz);
      const std::string why = p.why;
      CAPTURE(why);
      RunSpec s;
      s.vars.assign(f.vars_bytes(), 0);
      for (unsigned l = 0; l < 32; ++l) {
        set_lane(s.vars, f, 0, l, p.a);
        set_lane(s.vars, f, 1, l, p.b);
      }
      check_all_tiers(f, s, p.why);
    }
  }
}

}  // namespace gpurc_test_backend_x64_x64_mul_rz
