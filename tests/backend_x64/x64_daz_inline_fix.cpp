// In a function the x64 tiers run in DAZ mode, a float result with FtzOut,
// rounding to nearest and a constant NaN rule (Canonical, AllOnes) is fixed
// in line with no test (backend_x64/lower_float.cpp, daz_fix_inline; G13's
// `fadd f32 [ftz_in, ftz_out]`): vmaxps x, x, x flushes a subnormal to the
// zero of its sign (DAZ reads it as that zero), and a compare mask puts the
// rule's NaN in the NaN lanes. Checked against the interpreter on every
// tier, with and without the in-line form, for NaN operands (signalling and
// quiet, payloads, both signs), infinities, signed zeros, subnormal sums and
// products rounding to and around the smallest normal; and on both tiers'
// listings (a tier the host lacks through JitOptions::listing_only).
// (Named to sort after code_copies.cpp: a unity batch that includes
// tests/backend's tiers.h before a file using both x64 and backend::test
// names breaks it.)
#include <doctest/doctest.h>

#include <random>

#include "../backend/compare.h"
#include "backend_x64/jit.h"
#include "tests/backend_x64/tier_compile.h"
#include "ir/builder.h"

namespace gpurc_test_backend_x64_x64_daz_inline_fix {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::backend::test;
using ir::Opcode;
using ir::Type;

namespace {

// Operand pairs: half from edge values (their products and sums land on and
// around the smallest normal 0x00800000, on subnormals, zeros, infinities
// and NaNs), the rest random or near 1.
uint32_t inline_fix_operand(std::mt19937_64& rng) {
  static const uint32_t kEdge[] = {
      0x00000000u, 0x80000000u, 0x00000001u, 0x80000001u, 0x007FFFFFu, 0x807FFFFFu, 0x00800000u, 0x80800000u,
      0x00800001u, 0x80FFFFFFu, 0x00FFFFFFu, 0x3EFFFFFFu, 0xBEFFFFFFu, 0x3F000000u, 0x3F7FFFFFu, 0x3F800001u,
      0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFF812345u, 0x7FBFFFFFu, 0x7FFFFFFFu,
      0xFFFFFFFFu, 0x7FC12345u, 0x7F7FFFFFu, 0xFF7FFFFFu, 0x3F800000u, 0x40000000u, 0x00400000u, 0x80400001u};
  switch (rng() % 4) {
    case 0: return uint32_t(rng());
    case 1: return 0x3F000000u + uint32_t(rng() % 0x01000000u) + (uint32_t(rng()) & 0x80000000u);
    default: return kEdge[rng() % (sizeof kEdge / sizeof kEdge[0])];
  }
}

constexpr uint32_t kAllOnesRule = uint32_t(ir::NanRule::AllOnes) << ir::ff::NanShift;
constexpr uint32_t kPropagateRule = uint32_t(ir::NanRule::Propagate) << ir::ff::NanShift;
constexpr uint32_t kFtz = ir::ff::FtzIn | ir::ff::FtzOut;

// vars a, b, c, addr in; the results, stored to memory at addr + 128 i
// (results that stores alone read take the in-line form): four in-line ops
// (a sum, a difference, products, one with Sat) and one the form leaves
// alone (the Propagate rule reads its operands).
ir::Function inline_fix_function() {
  ir::Function f;
  for (const char* n : {"a", "b", "c"}) f.add_var(n, Type::F32);
  f.add_var("addr", Type::I64);
  f.add_block("entry");
  ir::Builder b(f);
  auto a = b.emit(Opcode::LoadVar, Type::F32, {}, 0, 0, 0);
  auto x = b.emit(Opcode::LoadVar, Type::F32, {}, 0, 0, 1);
  auto c = b.emit(Opcode::LoadVar, Type::F32, {}, 0, 0, 2);
  auto addr = b.emit(Opcode::LoadVar, Type::I64, {}, 0, 0, 3);
  std::vector<ir::ValueId> outs = {
      b.fadd(a, x, kFtz),                                          // G13's fadd: canonical NaN
      b.binary(Opcode::FSub, x, c, 0, kFtz | kAllOnesRule),        // all-ones NaN
      b.fmul(a, x, kFtz),                                          // products rounding to the smallest normal
      b.fmul(a, c, kFtz | ir::ff::Sat),                            // NaN -> +0 after the fix
      b.fadd(a, c, kFtz | kPropagateRule),                         // keeps its test and out-of-line fix
  };
  const ir::ValueId all = b.constant(Type::I1, 1);
  for (size_t i = 0; i < outs.size(); ++i) {
    const ir::ValueId at = b.emit(Opcode::IAdd, Type::I64, {addr, b.constant(Type::I64, 128 * i)});
    // (the sum stored as i32 through a bitcast, as G13's device_store does)
    b.store(ir::Space::Global, ir::AddrClass::Random, at, i == 0 ? b.bitcast(Type::I32, outs[i]) : outs[i], all);
  }
  b.ret();
  f.compute_preds();
  return f;
}

size_t inline_fix_count(const std::string& text, const char* what) {
  const size_t ret = text.find(" ret");  // the function's own code, not the fixes after it
  REQUIRE(ret != std::string::npos);
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos && p < ret; p = text.find(what, p + 1)) ++n;
  return n;
}

// Restores the default however the test case ends.
struct InlineFixOff {
  InlineFixOff() { x64::set_daz_fix_inline(false); }
  ~InlineFixOff() { x64::set_daz_fix_inline(true); }
};

}  // namespace

TEST_CASE("x64 jit DAZ mode: FtzOut results with a constant NaN rule are fixed in line, exactly") {
  ir::Function f = inline_fix_function();
  REQUIRE(ir::verify(f) == "");
  for (x64::Tier tier : {x64::Tier::Avx512, x64::Tier::Avx2}) {
    CAPTURE(x64::tier_name(tier));
    const char* test_op = tier == x64::Tier::Avx2 ? "vptest" : "kortestw";
    const std::string text = gpurc::test::compile_for_tier(f, tier)->disassemble();
    CHECK(text.find("0x1FC0") != std::string::npos);  // DAZ mode
    // (a function with memory ops has its strips unrolled: each op once per
    // strip; and AVX2's stores have vptests of their own)
    size_t strips = 0, tests_off = 0;
    {
      InlineFixOff off;
      const std::string tested = gpurc::test::compile_for_tier(f, tier)->disassemble();
      strips = inline_fix_count(tested, "vmaxps");  // Sat's, one per strip
      tests_off = inline_fix_count(tested, test_op);
      CHECK_MESSAGE((strips >= 1 && tests_off >= 5 * strips), tested);
    }
    // per strip four in-line fixes (one vmaxps each, and one more for
    // Sat) and four tests fewer; the Propagate sum keeps its test
    CHECK_MESSAGE(inline_fix_count(text, "vmaxps") == 5 * strips, text);
    CHECK_MESSAGE(inline_fix_count(text, test_op) == tests_off - 4 * strips, text);
  }
  std::mt19937_64 rng(18);
  const int runs = std::getenv("GPURC_TEST_LIGHT") ? 60 : 300;
  for (bool in_line : {true, false}) {
    CAPTURE(in_line);
    x64::set_daz_fix_inline(in_line);
    for (int k = 0; k < runs; ++k) {
      RunSpec s;
      s.vars.resize(f.vars_bytes());
      fill_random(s.vars, rng);
      for (uint32_t v = 0; v < 3; ++v)
        for (unsigned l = 0; l < 32; ++l) set_lane(s.vars, f, v, l, inline_fix_operand(rng));
      for (unsigned l = 0; l < 32; ++l) set_lane(s.vars, f, 3, l, 0x10000u + 4 * l);  // TestMemory's base
      s.memory = true;
      s.window = k % 2 == 0;  // the window's fast path and the slow one
      s.entry_mask = k % 5 == 4 ? uint32_t(rng()) | 1u : ~0u;
      CAPTURE(k);
      check_all_tiers(f, s, "daz in-line fix");
    }
  }
  x64::set_daz_fix_inline(true);
}

}  // namespace gpurc_test_backend_x64_x64_daz_inline_fix
