// The PICA200 transcendentals (Transc::Pica rcp / rsqrt / exp2 / log2, the
// float model of ir/transc_pica.h) on every tier against ir::eval_lane (the
// IR interpreter's lane semantics), bit for bit: every sign and exponent
// field with the edge mantissas (0, 1, 2, the largest, sqrt(2)'s
// neighbours, ...) and random ones, plus a strided sweep of all 2^32 bit
// patterns (stride 4099, or 65537 with GPURC_TEST_LIGHT;
// GPURC_PICA_TRANSC_STRIDE=1 runs the exhaustive sweep). Zeros, infinities,
// NaNs (quiet, signalling, either sign) and subnormals are among them. Each
// op must also compile without a helper call on every tier.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>

#include "harness.h"
#include "ir/scalar.h"
#include "tiers.h"

namespace gpurc_test_backend_pica_transc {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::backend::test;

namespace {

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)v);
  return buf;
}

// x (f32 var 0) -> op -> var 1.
ir::ValueId build(ir::Function& f, ir::Opcode op, uint32_t fflags) {
  f.add_block("entry");
  uint32_t in = f.add_var("x", ir::Type::F32), out = f.add_var("r", ir::Type::F32);
  ir::Builder b(f);
  ir::ValueId x = load_var(b, in);
  ir::ValueId r = b.emit(op, ir::Type::F32, {x}, uint8_t(ir::Transc::Pica), fflags);
  store_var(b, out, r);
  b.ret();
  return r;
}

std::vector<uint32_t> inputs() {
  std::vector<uint32_t> v;
  std::mt19937_64 rng(13);
  const uint32_t edges[] = {0, 1, 2, 3, 0x7FFFFF, 0x7FFFFE, 0x400000, 0x3FFFFF, 0x3504F2, 0x3504F3, 0x3504F4,
                            0x000080, 0x00007F, 0x7FFF80};
  const unsigned random_per_exponent = light() ? 16 : 96;
  for (uint32_t sign = 0; sign < 2; ++sign)
    for (uint32_t e = 0; e < 256; ++e) {
      for (uint32_t m : edges) v.push_back(sign << 31 | e << 23 | m);
      for (unsigned k = 0; k < random_per_exponent; ++k) v.push_back(sign << 31 | e << 23 | uint32_t(rng() & 0x7FFFFF));
    }
  uint64_t stride = light() ? 65537 : 4099;
  if (const char* s = std::getenv("GPURC_PICA_TRANSC_STRIDE")) stride = std::max<uint64_t>(1, std::strtoull(s, nullptr, 0));
  for (uint64_t b = 0; b < (uint64_t(1) << 32); b += stride) v.push_back(uint32_t(b));
  // Every integer and half-integer exponent EX2 takes to a power of two, and
  // the fp32 values around 1 (LG2 near 0, where cancellation matters).
  for (int k = -300; k <= 300; ++k) {
    float f = float(k) * 0.5f;
    uint32_t b;
    std::memcpy(&b, &f, 4);
    v.push_back(b);
  }
  for (uint32_t d = 0; d < 4096; ++d) {
    v.push_back(0x3F800000u + d);
    v.push_back(0x3F800000u - d);
  }
  while (v.size() % 32) v.push_back(0x3F800000u);
  return v;
}

}  // namespace

TEST_CASE("backend: PICA200 rcp / rsqrt / exp2 / log2 are native and bit-exact with ir::eval_lane on every tier") {
  const std::vector<uint32_t> in = inputs();
  auto tiers = host_tiers();
  size_t failures = 0, checked = 0;
  for (ir::Opcode op : {ir::Opcode::FRcp, ir::Opcode::FRsqrt, ir::Opcode::FExp2, ir::Opcode::FLog2}) {
    // PICA200's flags (translate_impl.h kArith), and none: the model flushes and canonicalises by itself.
    for (uint32_t fl : {ir::ff::FtzIn | ir::ff::FtzOut, 0u}) {
      ir::Function f;
      ir::ValueId opv = build(f, op, fl);
      REQUIRE(ir::verify(f) == "");
      ir::LaneOp lop = ir::lane_op(f, opv);
      std::vector<uint32_t> want(in.size());
      for (size_t i = 0; i < in.size(); ++i) {
        uint64_t a[4] = {in[i], 0, 0, 0};
        want[i] = uint32_t(ir::eval_lane(lop, a));
      }
      for (Tier t : tiers) {
        const std::string what = std::string(ir::op_name(op)) + " flags " + hex(fl) + " on " + tier_name(t);
        CAPTURE(what);
        std::string err;
        JitOptions o;
        o.tier = t;
        auto j = compile(f, o, &err);
        REQUIRE_MESSAGE(j, err);
        CHECK_MESSAGE(j->helper_ops().empty(), "the op compiles to a helper call");
        std::vector<uint8_t> vars(f.vars_bytes(), 0);
        for (size_t w = 0; w < in.size(); w += 32) {
          for (unsigned l = 0; l < 32; ++l) set_lane(vars, f, 0, l, in[w + l]);
          REQUIRE(run_to_end(*j, f, vars, {}, ~0u) == ir::RunStatus::Done);
          for (unsigned l = 0; l < 32; ++l) {
            uint32_t got = uint32_t(get_lane(vars, f, 1, l));
            ++checked;
            if (got != want[w + l] && ++failures <= 30)
              FAIL_CHECK(what << ": x = " << hex(in[w + l]) << " want " << hex(want[w + l]) << " got " << hex(got));
          }
        }
      }
    }
  }
  CHECK(failures == 0);
  MESSAGE("pica transcendentals: " << checked << " lanes checked");
}

}  // namespace gpurc_test_backend_pica_transc
