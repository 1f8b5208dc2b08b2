// In a function the x64 tiers run in DAZ mode (every float op reads its
// operands flushed), an fma with FtzIn and, on AVX2, a product, sum or
// difference rounding toward zero (MXCSR's rounding) read their operands
// as the host does: DAZ flushes them, so no explicit flush is emitted
// (backend_x64/lower_float.cpp). Tesla's MAD (its residual fma, its exact
// form's products rounding toward zero) and Tesla's `mul rz` / `add rz`
// have these shapes. Checked against the IR interpreter on every tier with
// subnormal, zero, inf and NaN operands and products around the smallest
// normal; on AVX2 the listing has no inline flush (a vblendvps per operand).
#include <doctest/doctest.h>

#include <random>

#include "../backend/compare.h"
#include "backend_x64/jit.h"
#include "ir/builder.h"

namespace gpurc_test_backend_x64_daz_rounding {  // one namespace per file: unity builds (CMakeLists.txt)

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
    std::string err;
    x64::JitOptions o{x64::Tier::Avx2};
    o.listing_only = !x64::host_supports(x64::Tier::Avx2);
    auto cf = x64::compile(f, o, &err);
    REQUIRE_MESSAGE(cf, err);
    const std::string text = cf->disassemble();
    CHECK(text.find("0x1FC0") != std::string::npos);
    const size_t ret = text.find(" ret");
    REQUIRE(ret != std::string::npos);
    CHECK_MESSAGE(count_lines_with(text.substr(0, ret), "vblendvps") == 0, text);
  }
  std::mt19937_64 rng(41);
  const int runs = std::getenv("GPURC_TEST_LIGHT") ? 60 : 300;
  for (int k = 0; k < runs; ++k) {
    RunSpec s;
    s.vars.resize(f.vars_bytes());
    fill_random(s.vars, rng);
    for (uint32_t v = 0; v < 3; ++v)
      for (unsigned l = 0; l < 32; ++l) set_lane(s.vars, f, v, l, operand(rng));
    s.entry_mask = k % 5 == 4 ? uint32_t(rng()) | 1u : ~0u;
    CAPTURE(k);
    check_all_tiers(f, s, "daz rounding");
  }
}

}  // namespace gpurc_test_backend_x64_daz_rounding
