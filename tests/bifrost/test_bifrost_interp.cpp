// The Bifrost reference interpreter (frontend/bifrost/interp.h) through the
// replay handler: every example of examples/bifrost against its independently
// computed expect, per-instruction results with edge values, the tuple timing
// rules (register reads before the block's writes, t/t0/t1 passthrough,
// last-tuple writes at clause end), the divergence rule with guest warps of 4
// and 8 lanes, unsupported instructions and guest faults.
#include <doctest/doctest.h>

#include <bit>
#include <cctype>
#include <tuple>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>

#include "frontend/bifrost/bifrost.h"
#include "frontend/bifrost/interp.h"
#include "frontend/bifrost/translate.h"
#include "ir/ir.h"
#include "recompiler/engine.h"
#include "recompiler/replay.h"
#include "tests/bifrost/bifrost_rows.h"

namespace gpurc_test_bifrost_test_bifrost_interp {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using replay::json;

namespace {

using namespace bifrost_rows;

constexpr uint32_t kNan = 0x7fc00000u, kInf = 0x7f800000u, kNegInf = 0xff800000u, kNegZero = 0x80000000u;

}  // namespace

TEST_CASE("bifrost examples pass their independently computed expect on the interpreter") {
  const char* kernels[] = {"vector_add", "reduction", "divergent", "loop", "fp16", "rcp_rsqrt", "int64", "atomic", "pair64"};
  for (const char* k : kernels) {
    CAPTURE(k);
    json doc = replay::load_file(kExamples / (std::string(k) + ".json"));
    REQUIRE(doc.contains("expect"));
    for (unsigned threads : {1u, 2u}) {
      replay::ReplayRun r = replay::run_document(doc, kExamples, Engine::Interp, threads, true);
      CHECK_FALSE(r.fault);
      CHECK(replay::check_expect(doc, r).empty());
      CHECK(r.guest_instructions > 0);
    }
  }
}

TEST_CASE("bifrost f32 arithmetic: edge values") {
  auto v = fma_op("*FADD.f32 r4:t0, r0, r1",
                  {{fb(1), fb(2)}, {kInf, kNegInf}, {kNegZero, kNegZero}, {0, kNegZero}, {1, 1},
                   {0x7f800001u, fb(1)}, {fb(3.4e38f), fb(3.4e38f)}, {0x3f800000u, 0x33c00000u}});
  CHECK(v == std::vector<uint32_t>{fb(3), kNan, kNegZero, 0, 2, kNan, kInf, 0x3f800001u});
  v = fma_op("*FADD.f32.rtz r4:t0, r0, r1", {{0x3f800000u, 0x33c00000u}, {fb(3.4e38f), fb(3.4e38f)}});
  CHECK(v == std::vector<uint32_t>{0x3f800000u, 0x7f7fffffu});
  v = fma_op("*FADD.f32.clamp_0_1 r4:t0, r0, r1", {{fb(0.5f), fb(0.75f)}, {fb(-3), fb(1)}, {kNan, fb(1)}, {fb(0.25f), 0}});
  CHECK(v == std::vector<uint32_t>{fb(1), 0, 0, fb(0.25f)});
  v = fma_op("*FADD.f32 r4:t0, r0.abs, r1.neg", {{fb(-2), fb(3)}, {kNegZero, 0}});
  CHECK(v == std::vector<uint32_t>{fb(-1), 0});  // +0 + -0 = +0
  v = fma_op("*FMA.f32 r4:t0, r0, r1, r2", {{fb(2), fb(3), fb(4)}, {fb(1 + 0x1p-23f), fb(1 - 0x1p-23f), fb(-1)}, {0, kInf, fb(1)}});
  CHECK(v == std::vector<uint32_t>{fb(10), fb(-0x1p-46f), kNan});  // fused: one rounding
  v = fma_op("*FMA.f32 r4:t0, r0, r1.neg, #0", {{fb(2), fb(3)}});
  CHECK(v == std::vector<uint32_t>{fb(-6)});
  v = add_op("+FMIN.f32 r4:t1, r0, r1", {{kNan, fb(1)}, {kNegZero, 0}, {0, kNegZero}, {fb(-1), fb(2)}, {kNan, kNan}});
  CHECK(v == std::vector<uint32_t>{fb(1), kNegZero, kNegZero, fb(-1), kNan});
  v = add_op("+FMAX.f32 r4:t1, r0, r1", {{kNan, fb(1)}, {kNegZero, 0}, {fb(-1), fb(2)}});
  CHECK(v == std::vector<uint32_t>{fb(1), 0, fb(2)});
  v = add_op("+FMAX.f32.nan_propagate r4:t1, r0, r1", {{kNan, fb(1)}});
  CHECK(v == std::vector<uint32_t>{kNan});
  v = fma_op("*FCMP.f32.lt r4:t0, r0, r1", {{fb(1), fb(2)}, {fb(2), fb(1)}, {kNan, fb(1)}});
  CHECK(v == std::vector<uint32_t>{1, 0, 0});
  v = fma_op("*FCMP.f32.ne.m1 r4:t0, r0, r1", {{fb(1), fb(2)}, {fb(1), fb(1)}, {kNan, kNan}});
  CHECK(v == std::vector<uint32_t>{0xffffffffu, 0, 0xffffffffu});
  v = fma_op("*CSEL.f32.gt r4:t0, r0, r1, r2, 0x00000009", {{fb(2), fb(1), 7}, {fb(1), fb(2), 7}, {kNan, fb(1), 7}});
  CHECK(v == std::vector<uint32_t>{7, 9, 9});
}

TEST_CASE("bifrost integer arithmetic and logic: edge values") {
  auto v = add_op("+IADD.s32.sat r4:t1, r0, r1", {{0x7fffffffu, 1}, {0x80000000u, 0xffffffffu}, {5, 6}});
  CHECK(v == std::vector<uint32_t>{0x7fffffffu, 0x80000000u, 11});
  v = add_op("+IADD.u32.sat r4:t1, r0, r1", {{0xffffffffu, 1}, {1, 2}});
  CHECK(v == std::vector<uint32_t>{0xffffffffu, 3});
  v = add_op("+IADD.s32 r4:t1, r0, r1", {{0xffffffffu, 1}});
  CHECK(v == std::vector<uint32_t>{0});
  v = add_op("+ISUB.u32.sat r4:t1, r0, r1", {{1, 2}, {5, 3}});
  CHECK(v == std::vector<uint32_t>{0, 2});
  v = add_op("+ICMP.s32.gt r4:t1, r0, r1", {{0xffffffffu, 0}, {0, 0xffffffffu}, {3, 3}});
  CHECK(v == std::vector<uint32_t>{0, 1, 0});
  v = add_op("+ICMP.u32.m1.ge r4:t1, r0, r1", {{0xffffffffu, 0}, {0, 1}, {3, 3}});
  CHECK(v == std::vector<uint32_t>{0xffffffffu, 0, 0xffffffffu});
  v = fma_op("*LSHIFT_OR.i32 r4:t0, r0, r1, r2", {{1, 0x100, 4}, {0x80000001u, 0, 33}, {3, 0, 0x0200}});
  CHECK(v == std::vector<uint32_t>{0x110, 0x00000002u, 3});  // shift = byte 0 of src2, mod 32
  v = fma_op("*RSHIFT_AND.i32 r4:t0, r0, r1, r2", {{0xf0, 0xff, 4}, {0xffffffffu, 0x0f0f, 8}});
  CHECK(v == std::vector<uint32_t>{0x0f, 0x0f0f});
  v = fma_op("*ARSHIFT.i32 r4:t0, r0, #0, r2", {{0x80000000u, 0, 31}, {0x40, 0, 3}});
  CHECK(v == std::vector<uint32_t>{0xffffffffu, 8});
  v = fma_op("*LSHIFT_XOR.i32 r4:t0, r0, r1, r2", {{1, 3, 1}});
  CHECK(v == std::vector<uint32_t>{1});
  v = fma_op("*IMUL.i32 r4:t0, r0, r1", {{0x10000, 0x10000}, {0xffffffffu, 3}});
  CHECK(v == std::vector<uint32_t>{0, 0xfffffffdu});
  v = fma_op("*POPCOUNT.i32 r4:t0, r0", {{0}, {0xffffffffu}, {0x10101}});
  CHECK(v == std::vector<uint32_t>{0, 32, 3});
  v = fma_op("*BITREV.i32 r4:t0, r0", {{1}, {0x80000000u}});
  CHECK(v == std::vector<uint32_t>{0x80000000u, 1});
  v = fma_op("*CLZ.u32 r4:t0, r0", {{0}, {1}, {0x80000000u}});
  CHECK(v == std::vector<uint32_t>{32, 31, 0});
  v = fma_op("*IADDC.i32 r4:t0, r0, r1, r2", {{0xffffffffu, 0, 1}, {5, 6, 0}});
  CHECK(v == std::vector<uint32_t>{0, 11});
  v = fma_op("*ISUBB.i32 r4:t0, r0, r1, r2", {{0, 0, 1}, {5, 3, 0}});
  CHECK(v == std::vector<uint32_t>{0xffffffffu, 2});
  v = add_op("+MUX.i32.bit r4:t1, r0, r1, r2", {{0xffff0000u, 0x0000ffffu, 0xff00ff00u}});
  CHECK(v == std::vector<uint32_t>{0xff0000ffu});
  v = add_op("+MUX.i32 r4:t1, r0, r1, r2", {{1, 2, 0}, {1, 2, 5}});
  CHECK(v == std::vector<uint32_t>{1, 2});
  v = add_op("+IABS.s32 r4:t1, r0", {{0x80000000u}, {0xfffffffbu}});
  CHECK(v == std::vector<uint32_t>{0x80000000u, 5});
  v = fma_op("*CSEL.s32.gt r4:t0, r1, r0, r2, 0x00000009", {{0xffffffffu, 0, 7}, {0, 0xffffffffu, 7}});
  CHECK(v == std::vector<uint32_t>{7, 9});
  v = fma_op("*MKVEC.v2i16 r4:t0, r0.h1, r1", {{0xaaaabbbbu, 0xccccddddu}});
  CHECK(v == std::vector<uint32_t>{0xddddaaaau});
  v = fma_op("*S8_TO_S32 r4:t0, r0.b3", {{0x80000000u}, {0x7f000000u}});
  CHECK(v == std::vector<uint32_t>{0xffffff80u, 0x7f});
  v = fma_op("*U16_TO_U32 r4:t0, r0.h1", {{0x8001ffffu}});
  CHECK(v == std::vector<uint32_t>{0x8001});
}

TEST_CASE("bifrost conversions and fp16: edge values") {
  auto v = add_op("+F32_TO_S32 r4:t1, r0", {{fb(2.5f)}, {fb(-2.5f)}, {fb(3e9f)}, {kNan}, {kNegInf}, {fb(2.7f)}});
  CHECK(v == std::vector<uint32_t>{2, 0xfffffffeu, 0x7fffffffu, 0, 0x80000000u, 3});
  v = add_op("+F32_TO_S32.rtz r4:t1, r0", {{fb(2.7f)}, {fb(-2.7f)}});
  CHECK(v == std::vector<uint32_t>{2, 0xfffffffeu});
  v = add_op("+F32_TO_U32 r4:t1, r0", {{fb(-5)}, {fb(5e9f)}, {fb(7)}});
  CHECK(v == std::vector<uint32_t>{0, 0xffffffffu, 7});
  v = add_op("+S32_TO_F32 r4:t1, r0", {{16777217}, {0xffffffffu}});
  CHECK(v == std::vector<uint32_t>{fb(16777216.f), fb(-1)});
  v = add_op("+U32_TO_F32 r4:t1, r0", {{0xffffffffu}});
  CHECK(v == std::vector<uint32_t>{fb(4294967296.f)});
  v = fma_op("*F16_TO_F32 r4:t0, r0", {{0x3c00}, {0x7c01}, {0x0001}, {0xfc00}, {0x3c000000u}});
  CHECK(v == std::vector<uint32_t>{fb(1), kNan, fb(0x1p-24f), kNegInf, 0});
  v = fma_op("*F16_TO_F32 r4:t0, r0.h1", {{0x3c000000u}});
  CHECK(v == std::vector<uint32_t>{fb(1)});
  v = fma_op("*V2F32_TO_V2F16 r4:t0, r0, r1", {{fb(65520), fb(1)}, {fb(0x1p-25f), kNan}, {fb(-2), fb(65504)}});
  CHECK(v == std::vector<uint32_t>{0x3c007c00u, 0x7e000000u, 0x7bffc000u});  // 2^-25 ties to even: 0
  v = fma_op("*FADD.v2f16 r4:t0, r0, r1", {{0x3c003c00u, 0x40004000u}, {0x7bff7bffu, 0x7bff0000u}});
  CHECK(v == std::vector<uint32_t>{0x42004200u, 0x7c007bffu});
  v = fma_op("*FMA.v2f16 r4:t0, r0, r1, r2", {{0x40003c00u, 0x40004000u, 0x3c003c00u}});
  CHECK(v == std::vector<uint32_t>{0x45004200u});  // (2*2+1 = 5, 1*2+1 = 3)
  v = add_op("+FMIN.v2f16 r4:t1, r0, r1", {{0x3c007e00u, 0x40004000u}});
  CHECK(v == std::vector<uint32_t>{0x3c004000u});
  v = add_op("+IADD.v2s16.sat r4:t1, r0, r1", {{0x7fff0001u, 0x00010002u}});
  CHECK(v == std::vector<uint32_t>{0x7fff0003u});
}

TEST_CASE("bifrost special functions: the documented definitions") {
  auto v = add_op("+FRCP.f32 r4:t1, r0", {{fb(4)}, {0}, {kNegZero}, {kInf}, {fb(3)}});
  CHECK(v == std::vector<uint32_t>{fb(0.25f), kInf, kNegInf, 0, fb(float(1.0 / 3.0))});
  v = add_op("+FRSQ.f32 r4:t1, r0", {{fb(4)}, {0}, {fb(-1)}});
  CHECK(v == std::vector<uint32_t>{fb(0.5f), kInf, kNan});
  // FRCP_APPROX: 12-bit bucket of the mantissa in [0.5, 1), 1 / bucket midpoint.
  v = add_op("+FRCP_APPROX.f32 r4:t1, r0", {{fb(1)}, {fb(-3)}, {0}, {kInf}, {kNan}});
  CHECK(v[0] == fb(float(8192.0 / 4096.5)));
  CHECK(v[1] == (fb(float(8192.0 / (6144 + 0.5))) | 0x80000000u));  // -3 = -0.75 * 4: bucket 2048
  CHECK(v[2] == kInf);
  CHECK(v[3] == 0);
  CHECK(v[4] == kNan);
  v = add_op("+FRSQ_APPROX.f32 r4:t1, r0", {{fb(1)}, {fb(2)}, {0}, {fb(-1)}});
  CHECK(v[0] == fb(float(1.0 / std::sqrt(0.25 * (1 + 0.5 / 2048)))));  // 1 = 0.25 * 2^2
  CHECK(v[1] == fb(float(1.0 / std::sqrt(0.5 * (1 + 0.5 / 2048)))));   // 2 = 0.5 * 2^2
  CHECK(v[2] == kInf);
  CHECK(v[3] == kNan);
  v = fma_op("*FREXPM.f32 r4:t0, r0", {{fb(12)}, {fb(-3)}, {0}});
  CHECK(v == std::vector<uint32_t>{fb(0.75f), fb(-0.75f), 0});
  v = fma_op("*FREXPE.f32 r4:t0, r0", {{fb(12)}, {fb(0.1f)}, {0}, {kInf}});
  CHECK(v == std::vector<uint32_t>{4, 0xfffffffdu, 0, 0});
  v = fma_op("*FREXPE.f32 r4:t0, r0.neg", {{fb(12)}});
  CHECK(v == std::vector<uint32_t>{0xfffffffcu});
  v = fma_op("*FREXPM.f32.sqrt r4:t0, r0", {{fb(8)}, {fb(2)}});
  CHECK(v == std::vector<uint32_t>{fb(0.5f), fb(0.5f)});  // 8 = 0.5 * 2^4, 2 = 0.5 * 2^2
  v = fma_op("*FMA_RSCALE.f32 r4:t0, r0, r1, r2, 0x00000002", {{fb(3), fb(2), fb(1)}, {fb(-1), fb(0x1p126f), 0}});
  CHECK(v == std::vector<uint32_t>{fb(28), kNegInf});  // (3*2+1)*4; -2^128 overflows
  v = fma_op("*FMA_RSCALE.f32 r4:t0, r0, r1, r2, 0xffffff6a", {{fb(1), fb(1), 0}, {fb(1.5f), fb(1), 0}});
  CHECK(v == std::vector<uint32_t>{0, 1});  // 2^-150 ties to even: 0; 1.5 * 2^-150 rounds up to 2^-149
  v = fma_op("*FMA_RSCALE.f32.n r4:t0, r0, r1, r2, #0", {{0, kInf, fb(1)}, {kInf, kNegZero, fb(2)}, {fb(2), fb(3), fb(1)}});
  CHECK(v == std::vector<uint32_t>{fb(1), fb(2), fb(7)});  // rcp_mode: 0 * inf = 0
  v = add_op("+FEXP_TABLE.u4 r4:t1, r0", {{0}, {8}, {0x49400013u}, {15}});
  CHECK(v == std::vector<uint32_t>{fb(1), fb(float(std::sqrt(2.0))), fb(float(std::exp2(3 / 16.0))),
                                   fb(float(std::exp2(15 / 16.0)))});
  v = add_op("+LDEXP.f32 r4:t1, r0, r1", {{fb(1.5f), 3}, {fb(1), 0xffffff6au}, {fb(1), 128}, {kNan, 1}});
  CHECK(v == std::vector<uint32_t>{fb(12), 0, kInf, kNan});
}

TEST_CASE("bifrost tuple timing: reads before the block's writes, passthrough, clause-end writes") {
  // T0's FMA result goes to r5 through T1's block; T1 reads r5 before that
  // write lands (old value), T2 after it; T4 reads both results.
  auto v = run_rows(
      "clause_1:\nds(0) nbb\n{\n"
      "    *MOV.i32 r5:t0, r1\n    +NOP t1\n"
      "    *MOV.i32 r6:t0, r5\n    +NOP t1\n"
      "    *MOV.i32 r7:t0, r5\n    +NOP t1\n"
      "    *NOP t0\n    +NOP t1\n"
      "    *NOP t0\n    +IADD.s32 r4:t1, r6, r7\n}\n",
      {{0, 7}, {0, 100}});
  CHECK(v == std::vector<uint32_t>{7, 100});  // r6 = old r5 = 0, r7 = r1
}

TEST_CASE("bifrost passthrough sources") {
  auto v = run_rows(
      "clause_1:\nds(0) nbb\n{\n"
      "    *MOV.i32 t0, r1\n    +IADD.s32 t1, t, r2\n"
      "    *IADDC.i32 t0, t0, t1, #0\n    +IADD.s32 r4:t1, t, t1\n}\n",
      {{0, 3, 4}});
  // T0: t0 = 3, t1 = 3 + 4 = 7; T1: FMA = t0 + t1 = 10, ADD = 10 + 7 = 17.
  CHECK(v == std::vector<uint32_t>{17});
}

namespace {
json program_doc(const std::string& text, const std::string& variant, unsigned threads, unsigned out_words) {
  return json{{"gpurc", 1},
              {"isa", "bifrost"},
              {"variant", variant},
              {"program", {{"asm", text}}},
              {"launch", {{"grid", {1}}, {"block", {threads}}}},
              {"state", {{"uniforms", {{"u2", "0x100000"}, {"u3", 0}, {"u4", "0x200000"}, {"u5", 0}}}}},
              {"memory",
               {{{"name", "counter"}, {"space", "global"}, {"address", "0x100000"}, {"size", 4}},
                {{"name", "out"}, {"space", "global"}, {"address", "0x200000"}, {"size", out_words * 4}}}}};
}
}  // namespace

TEST_CASE("bifrost divergence: lowest pc first, per guest warp of 4 (G72) or 8 (G76)") {
  // Odd threads fall through to clause_4 (lower pc), even ones branch to
  // clause_7; each takes a ticket with an atomic add returning the old value.
  const std::string text =
      "clause_0:\nds(0) nbb\n{\n    *MOV.i32 t0, 0x00000001\n    +MOV.i32 r4:t1, t\n}\n"
      "clause_2:\nds(0) nbb\n{\n    *LSHIFT_AND.i32 t0, r60, 0x00000001, #0\n"
      "    +BRANCHZ.i32.eq t1, t, clause_7\n}\n"
      "clause_4:\nds(0) nbb atomic\n{\n    *ATOM_C_RETURN.i32.aadd t0, u1.w0, u1.w1, r4\n"
      "    +ATOM_CX t1, r4, u1.w0, u1.w1, @r4\n}\n"
      "clause_5:\nds(0) nbb\n{\n    *NOP t0\n    +JUMP t1, clause_8\n}\n"
      "clause_7:\nds(0) nbb atomic\n{\n    *ATOM_C_RETURN.i32.aadd t0, u1.w0, u1.w1, r4\n"
      "    +ATOM_CX t1, r4, u1.w0, u1.w1, @r4\n}\n"
      "clause_8:\nds(0) eos store\n{\n    *SHADDXL.u32 t0, u2.w0, r60, shift:2\n"
      "    +STORE.i32 t1, t, u2.w1, @r4\n}\n";
  replay::ReplayRun r4 = replay::run_document(program_doc(text, "g72", 8, 8), kExamples, Engine::Interp, 1, false);
  REQUIRE_FALSE(r4.fault);
  CHECK(words(r4, "out") == std::vector<uint32_t>{2, 0, 3, 1, 6, 4, 7, 5});
  replay::ReplayRun r8 = replay::run_document(program_doc(text, "g76", 8, 8), kExamples, Engine::Interp, 1, false);
  REQUIRE_FALSE(r8.fault);
  CHECK(words(r8, "out") == std::vector<uint32_t>{4, 0, 5, 1, 6, 2, 7, 3});
  CHECK(words(r8, "counter") == std::vector<uint32_t>{8});
}

TEST_CASE("bifrost: unsupported instructions and guest faults are clear") {
  // PackFormats.1 (the notes' blob vector): +LD_ATTR_IMM, an attribute-unit message.
  json doc = {{"gpurc", 1}, {"isa", "bifrost"}, {"program", {{"bytes", "4a000020021ccb8023e000c008008010"}}},
              {"launch", {{"grid", {1}}, {"block", {4}}}}};
  try {
    replay::run_document(doc, kExamples, Engine::Interp, 1, false);
    FAIL("expected an error");
  } catch (const replay::ReplayError& e) {
    const std::string m = e.what();
    CHECK(m.find("+LD_ATTR_IMM") != std::string::npos);
    CHECK(m.find("clause 0x0") != std::string::npos);
    CHECK(m.find("attribute") != std::string::npos);
  }
  // A JIT engine: the translation refuses it, naming it.
  try {
    replay::run_document(doc, kExamples, Engine::Jit, 1, false);
    FAIL("expected an error");
  } catch (const replay::ReplayError& e) {
    CHECK(std::string(e.what()).find("+LD_ATTR_IMM is unsupported") != std::string::npos);
  }
  // Out-of-bounds load: a guest fault naming the address.
  json oob = program_doc(
      "clause_0:\nds(0) eos load\n{\n    *MOV.i32 t0, 0x00000040\n    +LOAD.i32 t1, t, t, @r0\n}\n", "g72", 4, 1);
  replay::ReplayRun f = replay::run_document(oob, kExamples, Engine::Interp, 1, false);
  REQUIRE(f.fault);
  CHECK(f.fault->find("0x40") != std::string::npos);
  CHECK(f.fault_kind == "out-of-bounds");
  // An endless loop stops at the watchdog.
  json loop = program_doc("clause_0:\nds(0) nbb\n{\n    *NOP t0\n    +JUMP t1, clause_0\n}\n", "g72", 4, 1);
  loop["launch"]["budget"] = 1000;
  replay::ReplayRun w = replay::run_document(loop, kExamples, Engine::Interp, 1, false);
  REQUIRE(w.fault);
  CHECK(w.fault_kind == "watchdog");
  // Branch into the middle of nowhere: a fault naming the target.
  json bad = program_doc(
      "clause_0:\nds(0) nbb\n{\n    *NOP t0\n    +JUMP t1, clause_40\n}\nclause_2:\nds(0) eos\n{\n    *NOP t0\n    +NOP t1\n}\n",
      "g72", 4, 1);
  replay::ReplayRun b = replay::run_document(bad, kExamples, Engine::Interp, 1, false);
  REQUIRE(b.fault);
  CHECK(b.fault->find("not a clause") != std::string::npos);
}

namespace {
std::string to_hex(const std::vector<uint8_t>& v) {
  std::string hex;
  for (uint8_t b : v) {
    char x[4];
    std::snprintf(x, sizeof x, "%02x", b);
    hex += x;
  }
  return hex;
}
std::vector<uint32_t> run_bytes(const std::string& hex, uint32_t input) {
  json doc = {{"gpurc", 1}, {"isa", "bifrost"}, {"program", {{"bytes", hex}}},
              {"launch", {{"grid", {1}}, {"block", {1}}}},
              {"state", {{"uniforms", {{"u0", "0x200000"}, {"u1", 0}, {"u2", "0x100000"}, {"u3", 0}}}}},
              {"memory",
               {{{"name", "in"}, {"space", "global"}, {"address", "0x100000"}, {"size", 8},
                 {"init", {{"u32", {input, input + 1}}}}},
                {{"name", "out"}, {"space", "global"}, {"address", "0x200000"}, {"size", 4}}}}};
  replay::ReplayRun r = replay::run_document(doc, kExamples, Engine::Interp, 1, false);
  REQUIRE_FALSE(r.fault);
  return words(r, "out");
}
}  // namespace

TEST_CASE("bifrost known vectors: the notes' blob clauses PackFormats.2 and .3 run") {
  std::string err;
  // PackFormats.3 (S8_TO_S32 r0.b3, MKVEC.v4i8 of it, STORE.i32 r0 to u0)
  // after a clause of ours that loads r0 from u1.
  std::vector<uint8_t> pre;
  REQUIRE(bifrost::assemble("clause_0:\nds(0) nbb load\n{\n    *NOP t0\n    +LOAD.i32 t1, u1.w0, u1.w1, @r0\n}\n", pre, err));
  const std::string pf3 =
      "2900000040805b809365070000008801210000005cb06d88936507040060c0584400000000000000000030e06c2c0060";
  CHECK(run_bytes(to_hex(pre) + pf3, 0x80123456u) == std::vector<uint32_t>{0x80808080u});
  CHECK(run_bytes(to_hex(pre) + pf3, 0x7f000000u) == std::vector<uint32_t>{0x7f7f7f7fu});
  // PackFormats.2 (MOV 4, SHADDXL u1.w0 + 4, LOAD.i32 into r0; its constant
  // quadword is the notes' synthetic zero) followed by a clause of ours
  // storing r0 to u0: the word at u1 + 4.
  std::vector<uint8_t> post;
  REQUIRE(bifrost::assemble("clause_0:\nds(0) eos store\n{\n    *NOP t0\n    +STORE.i32 t1, u0.w0, u0.w1, @r0\n}\n", post, err));
  const std::string pf2 = "294400004460cb80936507c008004029038100005ca02187af3100000000006071000000000000000000000000000000";
  CHECK(run_bytes(pf2 + to_hex(post), 41) == std::vector<uint32_t>{42});
}

TEST_CASE("bifrost docs: the instruction status table matches the interpreter") {
  std::ifstream in(std::filesystem::path(GPURC_TEST_DATA) / "docs" / "bifrost.md");
  REQUIRE(in);
  std::map<std::string, std::string> table;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("| `", 0) != 0) continue;
    const size_t e = line.find("` | ");
    if (e == std::string::npos) continue;
    table[line.substr(3, e - 3)] = line.substr(e + 4);
  }
  unsigned implemented = 0;
  for (const bifrost::Encoding& e : bifrost::encodings()) {
    CAPTURE(e.name);
    auto it = table.find(e.name);
    REQUIRE(it != table.end());
    const std::string why = bifrost::unsupported_reason(e);
    if (why.empty()) {
      CHECK(it->second.rfind("implemented", 0) == 0);
      ++implemented;
    } else {
      CHECK(it->second.find("unsupported: " + why) != std::string::npos);
    }
  }
  CHECK(implemented > 0);
}

TEST_CASE("bifrost CLPER: cross-lane permutes stay inside the guest warp") {
  // Each thread reads r60 (its global id) of another lane: lane index = 5 (masked
  // to the subgroup), xor 1, shift by 1 (past the subgroup: inactive_result).
  auto run = [&](const std::string& line, const std::string& variant) {
    const std::string text = "clause_0:\nds(0) nbb\n{\n    *MOV.i32 t0, 0x00000005\n    " + line +
                             "\n    *NOP t0\n    +NOP t1\n}\nclause_2:\nds(0) eos store\n{\n"
                             "    *SHADDXL.u32 t0, u2.w0, r60, shift:2\n    +STORE.i32 t1, t, u2.w1, @r4\n}\n";
    json doc = program_doc(text, variant, 16, 16);
    replay::ReplayRun r = replay::run_document(doc, kExamples, Engine::Interp, 1, false);
    REQUIRE_MESSAGE(!r.fault, *r.fault);
    return words(r, "out");
  };
  // subgroup16 on 4-lane guest warps: groups of 4, lane 5 & 3 = 1.
  CHECK(run("+CLPER.i32.subgroup16.zero r4:t1, r60, t", "g72") ==
        std::vector<uint32_t>{1, 1, 1, 1, 5, 5, 5, 5, 9, 9, 9, 9, 13, 13, 13, 13});
  // ... and on 8-lane guest warps: groups of 8, lane 5.
  CHECK(run("+CLPER.i32.subgroup16.zero r4:t1, r60, t", "g76") ==
        std::vector<uint32_t>{5, 5, 5, 5, 5, 5, 5, 5, 13, 13, 13, 13, 13, 13, 13, 13});
  CHECK(run("+CLPER.i32.xor.subgroup2.zero r4:t1, r60, t", "g72") ==
        std::vector<uint32_t>{1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14});
  CHECK(run("+CLPER.i32.shift.subgroup8.umax r4:t1, r60, t", "g76") ==
        std::vector<uint32_t>{5, 6, 7, ~0u, ~0u, ~0u, ~0u, ~0u, 13, 14, 15, ~0u, ~0u, ~0u, ~0u, ~0u});
}

TEST_CASE("bifrost interpreter and translation: any random clause gives a result, an error or a fault") {
  // random_clause draws from every encoding (messages, texture, branches to
  // random clauses, specials, reserved-free modifiers): the interpreter must
  // report an error or a fault rather than crash or hang, and the translation
  // must either translate or refuse.
  std::mt19937_64 rng(11);
  unsigned ran = 0, errors = 0, faults = 0, translated = 0;
  for (int i = 0; i < 300; ++i) {
    std::vector<uint8_t> code;
    std::string err;
    REQUIRE(bifrost::random_clause(rng, code, err));
    std::string hex;
    for (uint8_t b : code) {
      char x[4];
      std::snprintf(x, sizeof x, "%02x", b);
      hex += x;
    }
    json doc = {{"gpurc", 1}, {"isa", "bifrost"}, {"variant", i % 2 ? "g76" : "g72"},
                {"program", {{"bytes", hex}}}, {"launch", {{"grid", {1}}, {"block", {12}}, {"budget", 64}}},
                {"state", {{"uniforms", {{"u0", "0x100000"}, {"u1", 0}}}}},
                {"memory", {{{"name", "m"}, {"space", "global"}, {"address", "0x100000"}, {"size", 256}}}}};
    try {
      replay::ReplayRun r = replay::run_document(doc, kExamples, Engine::Interp, 1, false);
      r.fault ? ++faults : ++ran;
    } catch (const replay::ReplayError&) {
      ++errors;
    }
    ir::Function f;
    if (bifrost::translate(code.data(), code.size(), i % 2 ? 8 : 4, f, err)) {
      ++translated;
      CHECK(ir::verify(f).empty());
    }
  }
  CHECK(ran + errors + faults == 300);
  CHECK(errors > 0);
  MESSAGE("random clauses: " << ran << " ran, " << faults << " faulted, " << errors << " errors, " << translated
                             << " translated");
}

namespace {
// A document with `threads` threads, buffers given as (name, address, bytes,
// initial words), uniform words u0.. as given.
json mem_doc(const std::string& text, unsigned threads, const std::vector<uint32_t>& uniforms,
             const std::vector<std::tuple<std::string, uint32_t, size_t, std::vector<uint32_t>>>& bufs) {
  json u = json::object();
  for (size_t i = 0; i < uniforms.size(); ++i) u["u" + std::to_string(i)] = uniforms[i];
  json mem = json::array();
  for (const auto& [name, addr, size, init] : bufs) {
    json b = {{"name", name}, {"space", "global"}, {"address", addr}, {"size", size}};
    if (!init.empty()) b["init"] = {{"u32", hexlist(init)}};
    mem.push_back(b);
  }
  return {{"gpurc", 1},        {"isa", "bifrost"}, {"variant", "g72"}, {"program", {{"asm", text}}},
          {"launch", {{"grid", {1}}, {"block", {threads}}}}, {"state", {{"uniforms", u}}}, {"memory", mem}};
}
std::vector<uint8_t> bytes_of(const replay::ReplayRun& r, const std::string& name) {
  const replay::Observed* o = r.find("memory", name);
  REQUIRE(o);
  return o->bytes;
}
}  // namespace

TEST_CASE("bifrost LOAD/STORE of 3 and 6 bytes: unaligned, every engine bit for bit, out-of-bounds faults") {
  // Thread g: A = 1 + 8g (unaligned); r4 = LOAD.i24 in[A], r6:r7 = LOAD.i48 in[A];
  // STORE.i24 r4 -> o24[1 + 8g], STORE.i48 r6:r7 -> o48[3 + 16g]; r4-r7 -> regs[16g].
  const std::string text =
      "clause_0:\nds(0) nbb load\n{\n    *SHADDXL.u32 t0, u0.w0, r60, shift:3\n    +LOAD.i24 t1, t, u0.w1, @r4\n}\n"
      "clause_1:\nds(0) nbb load\n{\n    *SHADDXL.u32 t0, u0.w0, r60, shift:3\n    +LOAD.i48 t1, t, u0.w1, @r6\n}\n"
      "clause_2:\nds(0) nbb store\n{\n    *SHADDXL.u32 t0, u1.w0, r60, shift:3\n    +STORE.i24 t1, t, u1.w1, @r4\n}\n"
      "clause_3:\nds(0) nbb store\n{\n    *SHADDXL.u32 t0, u2.w0, r60, shift:4\n    +STORE.i48 t1, t, u2.w1, @r6\n}\n"
      "clause_4:\nds(0) eos store\n{\n    *SHADDXL.u32 t0, u3.w0, r60, shift:4\n    +STORE.i128 t1, t, u3.w1, @r4\n}\n";
  const unsigned T = 8;
  std::vector<uint32_t> in(18);
  for (size_t i = 0; i < in.size(); ++i) in[i] = uint32_t(0x9e3779b9u * (i + 1)) ^ 0x80c0e0f0u;
  const uint8_t* ib = reinterpret_cast<const uint8_t*>(in.data());
  auto run = [&](size_t in_bytes, size_t o24_bytes, size_t o48_bytes, Engine e) {
    json doc = mem_doc(text, T, {0x100001, 0, 0x200001, 0, 0x300003, 0, 0x400000, 0},
                       {{"in", 0x100000, in_bytes, std::vector<uint32_t>(in.begin(), in.begin() + in_bytes / 4)},
                        {"o24", 0x200000, o24_bytes, {}}, {"o48", 0x300000, o48_bytes, {}}, {"regs", 0x400000, 16 * T, {}}});
    return replay::run_document(doc, kExamples, e, 1, false);
  };
  // In bounds: the values, on every engine.
  for (Engine e : host_engines()) {
    CAPTURE(engine_name(e));
    replay::ReplayRun r = run(72, 8 * T, 16 * T, e);
    REQUIRE_MESSAGE(!r.fault, *r.fault);
    const std::vector<uint8_t> o24 = bytes_of(r, "o24"), o48 = bytes_of(r, "o48");
    const std::vector<uint32_t> regs = words(r, "regs");
    for (unsigned g = 0; g < T; ++g) {
      CAPTURE(g);
      const unsigned A = 1 + 8 * g;
      const uint32_t r4 = ib[A] | ib[A + 1] << 8 | ib[A + 2] << 16;
      const uint32_t r6 = ib[A] | ib[A + 1] << 8 | ib[A + 2] << 16 | uint32_t(ib[A + 3]) << 24;
      const uint32_t r7 = ib[A + 4] | ib[A + 5] << 8;
      CHECK(regs[4 * g] == r4);
      CHECK(regs[4 * g + 2] == r6);
      CHECK(regs[4 * g + 3] == r7);
      for (unsigned k = 0; k < 8; ++k) CHECK(o24[8 * g + k] == (k >= 1 && k <= 3 ? ib[A + k - 1] : 0));
      for (unsigned k = 0; k < 16; ++k) CHECK(o48[16 * g + k] == (k >= 3 && k <= 8 ? ib[A + k - 3] : 0));
    }
  }
  // The last piece of a thread's access outside the buffer: a fault on every
  // engine (i24: 2 + 1 bytes, i48: 4 + 2 bytes; loads and stores).
  struct Case { size_t in, o24, o48; const char* what; };
  for (const Case& c : {Case{59, 8 * T, 16 * T, "LOAD.i24 second piece"}, Case{62, 8 * T, 16 * T, "LOAD.i48 second piece"},
                        Case{72, 8 * T - 6, 16 * T, "STORE.i24 second piece"}, Case{72, 8 * T, 16 * T - 8, "STORE.i48 second piece"}}) {
    CAPTURE(c.what);
    for (Engine e : host_engines()) {
      CAPTURE(engine_name(e));
      replay::ReplayRun r = run(c.in, c.o24, c.o48, e);
      CHECK(r.fault);
    }
  }
}

TEST_CASE("bifrost 64-bit clauses: a clause on pairs = the same clause on the low words, then on the high words") {
  // The 64-bit model (docs/bifrost.md "64-bit clauses"): each instruction runs
  // on the low and on the high words, an FAU source reads the word of its half.
  // Oracle: two 32-bit clauses, one on the even registers (FAU word 0), one on
  // the odd registers (FAU word 1). Covers 3 reads through port 2, two writes,
  // pairs >= r32 (the 31-x form and port 0's +16), a single read, passthrough,
  // uniforms, lane id, the last tuple's write carried by the first tuple.
  const std::string wide_clause =
      "    *FMA.f32 r8:t0, r0, r2, r4\n    +IADD.u32 r10:t1, t, uW.wX\n"
      "    *MOV.i32 t0, r40\n    +FADD.f32 r12:t1, t0, r34\n"
      "    *IMUL.i32 t0, r36, t1\n    +MOV.i32 r14:t1, lane_id.L\n"
      "    *NOP t0\n    +IADD.u32 r16:t1, t0, t1\n"
      "    *LSHIFT_OR.i32 r18:t0, r12, r10, r44\n    +NOP t1\n";
  // half: -1 = the 64-bit clause, 0 = low words, 1 = high words.
  auto clause_text = [&](int half) {
    std::string s, out;
    for (size_t i = 0; i < wide_clause.size(); ++i) {
      const char ch = wide_clause[i];
      if (ch == 'r' && i + 1 < wide_clause.size() && std::isdigit(static_cast<unsigned char>(wide_clause[i + 1])) &&
          (i == 0 || !std::isalnum(static_cast<unsigned char>(wide_clause[i - 1])))) {
        size_t j = i + 1;
        unsigned n = 0;
        while (j < wide_clause.size() && std::isdigit(static_cast<unsigned char>(wide_clause[j]))) n = n * 10 + unsigned(wide_clause[j++] - '0');
        out += "r" + std::to_string(n + (half == 1 ? 1 : 0));
        i = j - 1;
      } else if (wide_clause.compare(i, 5, "uW.wX") == 0) {
        out += half == 1 ? "u14.w1" : "u14.w0";
        i += 4;
      } else if (wide_clause.compare(i, 9, "lane_id.L") == 0) {
        out += half == 1 ? "lane_id.y" : "lane_id.x";
        i += 8;
      } else {
        out += ch;
      }
    }
    return out;
  };
  std::string loads, stores;
  for (unsigned k = 0; k < 8; ++k)
    loads += "clause_" + std::to_string(k) + ":\nds(0) nbb load\n{\n    *SHADDXL.u32 t0, u" + std::to_string(k) +
             ".w0, r60, shift:7\n    +LOAD.i128 t1, t, u" + std::to_string(k) + ".w1, @r" +
             std::to_string(k < 4 ? 4 * k : 32 + 4 * (k - 4)) + "\n}\n";
  for (unsigned k = 0; k < 5; ++k)
    stores += "clause_" + std::to_string(60 + k) + ":\nds(0) " + (k == 4 ? "eos" : "nbb") +
              " store\n{\n    *SHADDXL.u32 t0, u" + std::to_string(8 + k) + ".w0, r60, shift:7\n    +STORE.i128 t1, t, u" +
              std::to_string(8 + k) + ".w1, @r" + std::to_string(4 * k) + "\n}\n";
  const std::string wide = loads + "clause_20:\nds(0) nbb 64 regs64\n{\n" + clause_text(-1) + "}\n" + stores;
  const std::string split = loads + "clause_20:\nds(0) nbb\n{\n" + clause_text(0) + "}\nclause_30:\nds(0) nbb\n{\n" +
                            clause_text(1) + "}\n" + stores;
  const unsigned T = 12;
  std::vector<uint32_t> uni(32, 0);
  for (unsigned k = 0; k < 8; ++k) uni[2 * k] = 0x100000 + 16 * k;
  for (unsigned k = 0; k < 5; ++k) uni[16 + 2 * k] = 0x200000 + 16 * k;
  uni[28] = 0x3fc00000;  // u14.w0 = 1.5
  uni[29] = 0x00000007;  // u14.w1
  std::vector<uint32_t> in(32 * T);
  const uint32_t specials[] = {0x3f800000, 0xc0000000, 0x7fc00000, 0x7f800000, 0x80000000, 0x00000001, 0xffffffff, 0x40490fdb};
  for (size_t i = 0; i < in.size(); ++i) in[i] = i % 3 ? specials[(i * 7) % 8] : uint32_t(0x9e3779b9u * (i + 3));
  auto doc = [&](const std::string& text) {
    return mem_doc(text, T, uni, {{"in", 0x100000, in.size() * 4, in}, {"out", 0x200000, 128 * T, {}}});
  };
  // The 64-bit clause really is one (the assembler packed 64-bit blocks).
  std::vector<uint8_t> code;
  std::string err;
  REQUIRE_MESSAGE(bifrost::assemble(wide, code, err), err);
  bifrost::Program prog;
  REQUIRE(prog.load(code, err));
  unsigned wide_clauses = 0;
  for (const bifrost::DecodedClause& c : prog.clauses()) wide_clauses += c.wide;
  CHECK(wide_clauses == 1);
  const replay::ReplayRun ref = replay::run_document(doc(split), kExamples, Engine::Interp, 1, false);
  REQUIRE_MESSAGE(!ref.fault, *ref.fault);
  const std::vector<uint32_t> want = words(ref, "out");
  for (Engine e : host_engines()) {
    CAPTURE(engine_name(e));
    replay::ReplayRun r = replay::run_document(doc(wide), kExamples, e, 1, false);
    REQUIRE_MESSAGE(!r.fault, *r.fault);
    CHECK(words(r, "out") == want);
  }
  // Not allowed in a 64-bit clause: a clear error naming the instruction.
  json bad = doc(loads + "clause_20:\nds(0) eos 64 regs64\n{\n    *NOP t0\n    +BRANCHZ.i32.eq t1, r0, clause_0\n}\n");
  CHECK_THROWS_WITH(replay::run_document(bad, kExamples, Engine::Interp, 1, false),
                    doctest::Contains("cannot be in a 64-bit clause"));
}

}  // namespace gpurc_test_bifrost_test_bifrost_interp
