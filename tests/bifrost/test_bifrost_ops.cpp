// Per-instruction edge values for the instructions of frontend/bifrost/ops_ext.h
// (vector integer, byte/half lanes, fp16, conversions, classification) and the
// memory atomics, on the interpreter and every JIT tier (bifrost_rows.h checks
// that the tiers agree bit for bit; the expected words here are worked out by
// hand from the definitions in docs/bifrost.md).
#include <doctest/doctest.h>

#include "tests/bifrost/bifrost_rows.h"

namespace gpurc_test_bifrost_test_bifrost_ops {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace bifrost_rows;
using V = std::vector<uint32_t>;

TEST_CASE("bifrost byte and half lane integer arithmetic: edge values") {
  CHECK(add_op("+IADD.v4s8.sat r4:t1, r0, r1", {{0x7f80017fu, 0x01ff0101u}}) == V{0x7f80027fu});
  CHECK(add_op("+IADD.v4u8 r4:t1, r0, r1", {{0x01ff80ffu, 0x01010101u}}) == V{0x02008100u});
  CHECK(add_op("+IADD.v4u8.sat r4:t1, r0, r1", {{0x01ff80ffu, 0x01010101u}}) == V{0x02ff81ffu});
  CHECK(add_op("+ISUB.v4u8.sat r4:t1, r0, r1.b0000", {{0x05040302u, 0x00000003u}}) == V{0x02010000u});
  CHECK(add_op("+ISUB.v4s8 r4:t1, r0, r1.b3333", {{0x80000102u, 0x01000000u}}) == V{0x7fff0001u});
  CHECK(add_op("+HADD.s32 r4:t1, r0, r1", {{7, 8}, {0xffffffffu, 0xfffffffeu}, {0x7fffffffu, 0x7fffffffu}, {0x80000000u, 0x80000000u}}) ==
        V{7, 0xfffffffeu, 0x7fffffffu, 0x80000000u});
  CHECK(add_op("+HADD.s32.rtp r4:t1, r0, r1", {{7, 8}, {0xffffffffu, 0xfffffffeu}}) == V{8, 0xffffffffu});
  CHECK(add_op("+HADD.u32 r4:t1, r0, r1", {{0xffffffffu, 0xffffffffu}, {0xffffffffu, 0}}) == V{0xffffffffu, 0x7fffffffu});
  CHECK(add_op("+HADD.u32.rtp r4:t1, r0, r1", {{0xffffffffu, 0}}) == V{0x80000000u});
  CHECK(add_op("+HADD.v4u8 r4:t1, r0, r1", {{0xff00ff01u, 0xff01fe02u}}) == V{0xff00fe01u});
  CHECK(add_op("+HADD.v2s16 r4:t1, r0, r1", {{0x80007fffu, 0x80000001u}}) == V{0x80004000u});
  CHECK(add_op("+HADD.v2u16.rtp r4:t1, r0, r1.h10", {{0x00030001u, 0x00000002u}}) == V{0x00030001u});
  CHECK(add_op("+IABS.v2s16 r4:t1, r0", {{0x8000fffbu}}) == V{0x80000005u});
  CHECK(add_op("+IABS.v4s8 r4:t1, r0", {{0x80ff7f01u}}) == V{0x80017f01u});
  CHECK(fma_op("*CLZ.v2u16 r4:t0, r0", {{0x00010000u}, {0xffff8000u}}) == V{0x000f0010u, 0});
  CHECK(fma_op("*CLZ.v4u8 r4:t0, r0", {{0x80010000u}}) == V{0x00070808u});
  CHECK(fma_op("*IMUL.v2i16 r4:t0, r0, r1", {{0xffff0003u, 0x00020005u}}) == V{0xfffe000fu});
  CHECK(fma_op("*IMUL.v4i8 r4:t0, r0, r1", {{0x10ff0203u, 0x10020304u}}) == V{0x00fe060cu});
  CHECK(fma_op("*IMUL.v4i8 r4:t0, r0, r1.b1111", {{0x01020304u, 0x00000300u}}) == V{0x0306090cu});
  CHECK(fma_op("*IDP.v4i8 r4:t0, r0.sext, r1.sext", {{0xff020304u, 0x01010101u}}) == V{8});
  CHECK(fma_op("*IDP.v4i8 r4:t0, r0.zext, r1.zext", {{0xff020304u, 0x01010101u}}) == V{264});
}

TEST_CASE("bifrost byte and half lane compares, selects, swizzles and shifts") {
  CHECK(add_op("+ICMP.v2s16.gt r4:t1, r0, r1", {{0xffff0001u, 0}}) == V{0x00000001u});
  CHECK(add_op("+ICMP.v2s16.m1.gt r4:t1, r0, r1", {{0xffff0001u, 0}}) == V{0x0000ffffu});
  CHECK(add_op("+ICMP.v2u16.gt r4:t1, r0, r1", {{0xffff0001u, 0}}) == V{0x00010001u});
  CHECK(add_op("+ICMP.v4i8.eq r4:t1, r0, r1", {{0x01020304u, 0x01000304u}}) == V{0x01000101u});
  CHECK(add_op("+ICMP.v4s8.gt r4:t1, r1, r0", {{0x00000080u, 0}}) == V{0x00000001u});
  CHECK(add_op("+ICMP.v4u8.gt r4:t1, r1, r0", {{0x00000080u, 0}}) == V{0});
  CHECK(add_op("+ICMPI.s32.gt r4:t1, r0, r1", {{0xffffffffu, 0}, {1, 0}}) == V{0, 1});
  CHECK(add_op("+ICMPI.u32.m1.ge r4:t1, r0, r1", {{0xffffffffu, 0}, {0, 1}}) == V{0xffffffffu, 0});
  CHECK(fma_op("*CSEL.v2s16.gt r4:t0, r0, r1, r2, 0xbbbbbbbb", {{0x0001ffffu, 0, 0xaaaaaaaau}}) == V{0xaaaabbbbu});
  CHECK(fma_op("*CSEL.v2u16.gt r4:t0, r0, r1, r2, 0xbbbbbbbb", {{0x0001ffffu, 0, 0xaaaaaaaau}}) == V{0xaaaaaaaau});
  CHECK(fma_op("*CSEL.v2f16.gt r4:t0, r1, r0, r2, 0x33334444", {{0x3c007e00u, 0x40003c00u, 0x11112222u}}) ==
        V{0x11114444u});
  CHECK(add_op("+MUX.v2i16.neg r4:t1, r0, r1, r2", {{0x11112222u, 0x33334444u, 0x80000001u}}) == V{0x11114444u});
  CHECK(add_op("+MUX.v2i16 r4:t1, r0.h10, r1, r2", {{0x11112222u, 0x33334444u, 0x00010000u}}) == V{0x33331111u});
  CHECK(add_op("+MUX.v2i16.fp_zero r4:t1, r0, r1, r2", {{0x11112222u, 0x33334444u, 0x80000001u}}) == V{0x11114444u});
  CHECK(add_op("+MUX.v4i8 r4:t1, r0, r1, r2", {{0x11223344u, 0x55667788u, 0x00ff00ffu}}) == V{0x11663388u});
  CHECK(add_op("+SWZ.v2i16 r4:t1, r0.h10", {{0x11112222u}}) == V{0x22221111u});
  CHECK(add_op("+SWZ.v4i8 r4:t1, r0.b3210", {{0x11223344u}}) == V{0x44332211u});
  CHECK(add_op("+SWZ.v4i8 r4:t1, r0.b0011", {{0x11223344u}}) == V{0x33334444u});
  CHECK(add_op("+V2S8_TO_V2S16 r4:t1, r0.b03", {{0x80000001u}}) == V{0xff800001u});
  CHECK(add_op("+V2U8_TO_V2U16 r4:t1, r0.b03", {{0x80000001u}}) == V{0x00800001u});
  CHECK(add_op("+V2U8_TO_V2F16 r4:t1, r0.b03", {{0x80000001u}}) == V{0x58003c00u});
  CHECK(add_op("+V2S8_TO_V2F16 r4:t1, r0.b03", {{0x80000001u}}) == V{0xd8003c00u});
  // lane shifts: the amount of lane i from the byte lanes2 names, taken mod the lane width
  CHECK(fma_op("*LSHIFT_OR.v2i16 r4:t0, r0, r1, r2", {{0x00010001u, 0, 0x00100004u}, {0x80018001u, 0x00020000u, 0x00010011u}}) ==
        V{0x00010010u, 0x00020002u});
  CHECK(fma_op("*RSHIFT_AND.v2i16 r4:t0, r0, r1, r2", {{0xf000f000u, 0xffff0f00u, 0x000c0004u}}) == V{0x000f0f00u});
  CHECK(fma_op("*ARSHIFT.v2i16 r4:t0, r0, #0, r2", {{0x80008000u, 0, 0x000f0001u}}) == V{0xffffc000u});
  CHECK(fma_op("*ARSHIFT.v4i8 r4:t0, r0, #0, r2", {{0x80808080u, 0, 0x07030100u}}) == V{0xfff0c080u});
  CHECK(fma_op("*LSHIFT_XOR.v4i8 r4:t0, r0, r1, r2.b0000", {{0x01010101u, 0x01000000u, 0x00000009u}}) == V{0x03020202u});
  CHECK(fma_op("*RSHIFT_XOR.v4i8.not r4:t0, r0, r1, r2", {{0x80808080u, 0, 0x00000007u}}) == V{0x7f7f7ffeu});
}

TEST_CASE("bifrost conversions between lanes, integers and floats: edge values") {
  constexpr uint32_t kNan = 0x7fc00000u, kInf = 0x7f800000u, kNegInf = 0xff800000u;
  CHECK(add_op("+S8_TO_F32 r4:t1, r0.b3", {{0x80000000u}}) == V{0xc3000000u});
  CHECK(add_op("+U8_TO_F32 r4:t1, r0.b1", {{0x0000ff00u}}) == V{fb(255)});
  CHECK(add_op("+U16_TO_F32 r4:t1, r0.h1", {{0xffff0000u}}) == V{0x477fff00u});
  CHECK(add_op("+S16_TO_F32 r4:t1, r0", {{0x00008000u}}) == V{fb(-32768)});
  CHECK(add_op("+F16_TO_S32 r4:t1, r0", {{0x3e00}, {0xc100}, {0x7c00}, {0x7e00}, {0xfc00}}) ==
        V{2, 0xfffffffeu, 0x7fffffffu, 0, 0x80000000u});
  CHECK(add_op("+F16_TO_S32.rtz r4:t1, r0", {{0x3e00}}) == V{1});
  CHECK(add_op("+F16_TO_S32.rtna r4:t1, r0.h1", {{0xc1000000u}, {0x38000000u}}) == V{0xfffffffdu, 1});
  CHECK(add_op("+F16_TO_U32 r4:t1, r0", {{0x7c00}, {0xfc00}, {0xbc00}, {0x5bff}}) == V{0xffffffffu, 0, 0, 256});
  CHECK(add_op("+V2F16_TO_V2S16 r4:t1, r0", {{0x7c00c100u}}) == V{0x7ffffffeu});
  CHECK(add_op("+V2F16_TO_V2U16 r4:t1, r0", {{0x7bffbc00u}}) == V{0xffe00000u});
  CHECK(add_op("+V2F16_TO_V2S16.rtp r4:t1, r0.h11", {{0x3e000000u}}) == V{0x00020002u});
  CHECK(add_op("+V2S16_TO_V2F16 r4:t1, r0", {{0x7fff8000u}}) == V{0x7800f800u});
  CHECK(add_op("+V2S16_TO_V2F16.rtz r4:t1, r0", {{0x7fff8000u}}) == V{0x77fff800u});
  CHECK(add_op("+V2U16_TO_V2F16 r4:t1, r0", {{0xffff0001u}}) == V{0x7c003c00u});
  (void)kNan, (void)kInf, (void)kNegInf;
}

TEST_CASE("bifrost fp16 compares, rounding, frexp, ldexp and scale: edge values") {
  CHECK(add_op("+FCMP.v2f16.lt r4:t1, r0, r1", {{0x3c007e00u, 0x40003c00u}}) == V{0x00010000u});
  CHECK(add_op("+FCMP.v2f16.lt.f1 r4:t1, r0, r1", {{0x3c007e00u, 0x40003c00u}}) == V{0x3c000000u});
  CHECK(fma_op("*FCMP.v2f16.ne.m1 r4:t0, r0, r1", {{0x3c007e00u, 0x3c003c00u}}) == V{0x0000ffffu});
  CHECK(fma_op("*FCMP.v2f16.eq r4:t0, r0.abs, r1", {{0xbc008000u, 0x3c000000u}}) == V{0x00010001u});
  CHECK(add_op("+FROUND.v2f16 r4:t1, r0", {{0x3e00c100u}}) == V{0x4000c000u});
  CHECK(fma_op("*FROUND.v2f16.rtna r4:t0, r0", {{0x3e00c100u}}) == V{0x4000c200u});
  CHECK(add_op("+FROUND.v2f16.rtz r4:t1, r0", {{0x3e00c100u}, {0x7c017c00u}}) == V{0x3c00c000u, 0x7e007c00u});
  CHECK(add_op("+FREXPM.v2f16 r4:t1, r0", {{0x44000001u}, {0xc4007c00u}}) == V{0x38003800u, 0xb8007c00u});
  CHECK(add_op("+FREXPE.v2f16 r4:t1, r0", {{0x44000001u}, {0x7e000000u}}) == V{0x0003ffe9u, 0});
  CHECK(fma_op("*FREXPM.v2f16.sqrt r4:t0, r0", {{0x48004400u}}) == V{0x38003400u});  // 4 = 0.25 * 2^4, 8 = 0.5 * 2^4
  CHECK(add_op("+LDEXP.v2f16 r4:t1, r0, r1", {{0x3c003c00u, 0x0010fff0u}}) == V{0x7c000100u});
  CHECK(fma_op("*FMA_RSCALE.v2f16 r4:t0, r0, r1, r2, 0x00010002", {{0x40004000u, 0x40003c00u, 0x3c003c00u}}) ==
        V{0x49004a00u});
  CHECK(add_op("+FADD_RSCALE.f32 r4:t1, r0, r1, r2", {{fb(1), fb(2), 3}, {fb(1), fb(1), 0xffffff38u}}) == V{fb(24), 0});
  CHECK(add_op("+FADD_RSCALE.f32.clamp_0_1 r4:t1, r0, r1, r2", {{fb(1), fb(2), 0}, {fb(-1), fb(0), 0}}) == V{fb(1), 0});
}

TEST_CASE("bifrost float classification, quieting, logb and fp16 reciprocals: edge values") {
  CHECK(fma_op("*QUIET.f32 r4:t0, r0", {{0x7f800001u}, {0x3f800000u}, {0xff800000u}}) == V{0x7fc00001u, 0x3f800000u, 0xff800000u});
  CHECK(add_op("+QUIET.v2f16 r4:t1, r0", {{0x7c017e05u}}) == V{0x7e017e05u});
  CHECK(add_op("+FPCLASS.f32 r4:t1, r0", {{0x7f800001u}, {0x7fc00000u}, {0xff800000u}, {0xbf800000u}, {0x80000001u},
                                            {0x80000000u}, {0}, {1}, {0x3f800000u}, {0x7f800000u}}) ==
        V{1, 2, 4, 8, 16, 32, 64, 128, 256, 512});
  CHECK(add_op("+FPCLASS.f16 r4:t1, r0.h1", {{0x83ff0000u}, {0x7c000000u}}) == V{16, 512});
  CHECK(add_op("+ILOGB.f32 r4:t1, r0", {{0x3f800000u}, {1}, {0}, {0x7f800000u}, {fb(10)}, {0x7fc00000u}}) ==
        V{0, 0xffffff6bu, 0x80000000u, 0x7fffffffu, 3, 0x80000000u});
  CHECK(add_op("+LOGB.f32 r4:t1, r0", {{fb(10)}, {0}, {1}, {0xff800000u}}) == V{fb(3), 0xff800000u, fb(-149), 0x7f800000u});
  CHECK(add_op("+ILOGB.v2f16 r4:t1, r0", {{0x00017c00u}}) == V{0xffe87fffu});
  CHECK(add_op("+LOGB.v2f16 r4:t1, r0", {{0x49000000u}}) == V{0x4200fc00u});
  CHECK(add_op("+FRCP.f16 r4:t1, r0", {{0x4000}, {0}, {0x8000}}) == V{0x3800, 0x7c00, 0xfc00});
  CHECK(add_op("+FRSQ.f16 r4:t1, r0.h1", {{0x44000000u}, {0xbc000000u}}) == V{0x3800, 0x7e00});
}

// r5 = the address of this thread's input row (its word 0), r6/r7 = r2/r3,
// r4 = r1, then `atomic` (one clause), then r4 = the row's word 0 read back
// (`then` = "reload"), r6 ("r6") or what the atomic left in r4 ("").
static std::vector<uint32_t> atomic_rows(const std::string& atomic, const std::string& then,
                                         const std::vector<std::array<uint32_t, 4>>& rows,
                                         const std::string& msg = "atomic") {
  std::string body =
      "clause_1:\nds(0) nbb\n{\n    *SHADDXL.u32 r5:t0, u0.w0, r60, shift:4\n    +MOV.i32 r6:t1, r2\n"
      "    *MOV.i32 r7:t0, r3\n    +NOP t1\n    *NOP t0\n    +MOV.i32 r4:t1, r1\n}\n"
      "clause_3:\nds(0) nbb " + msg + "\n{\n" + atomic + "}\n";
  if (then == "reload") body += "clause_5:\nds(0) nbb load\n{\n    *NOP t0\n    +LOAD.i32 t1, r5, u0.w1, @r4\n}\n";
  if (then == "reload1")  // the row's word 1
    body += "clause_5:\nds(0) nbb load\n{\n    *MOV.i32 t0, 0x00000004\n    +NOP t1\n"
            "    *SHADDXL.u32 t0, r5, t0, shift:0\n    +LOAD.i32 t1, t, u0.w1, @r4\n}\n";
  if (then == "r6") body += "clause_5:\nds(0) nbb\n{\n    *NOP t0\n    +MOV.i32 r4:t1, r6\n}\n";
  return run_rows(body, rows);
}

TEST_CASE("bifrost exchange and compare-exchange messages (Mesa's staging layout)") {
  // AXCHG: the staging register's value goes to memory, the old value comes back
  CHECK(atomic_rows("    *NOP t0\n    +AXCHG.i32 t1, r5, u0.w1, @r4\n", "", {{5, 9}, {7, 1}}) == V{5, 7});
  CHECK(atomic_rows("    *NOP t0\n    +AXCHG.i32 t1, r5, u0.w1, @r4\n", "reload", {{5, 9}, {7, 1}}) == V{9, 1});
  // ACMPXCHG: staging = new value, compare value; swapped only when memory == compare
  const std::string cas = "    *NOP t0\n    +ACMPXCHG.i32 t1, r5, u0.w1, @r6\n";
  CHECK(atomic_rows(cas, "reload", {{5, 0, 9, 5}, {5, 0, 9, 6}}) == V{9, 5});
  CHECK(atomic_rows("    *NOP t0\n    +ACMPSTORE.i32 t1, r5, u0.w1, @r6\n", "reload", {{5, 0, 9, 5}, {5, 0, 9, 6}}) ==
        V{9, 5});
}

TEST_CASE("bifrost ATOM_C1 and 64-bit ATOM_C with ATOM_CX") {
  // *ATOM_C1_RETURN.ainc: old value back, memory + 1
  const std::string inc = "    *ATOM_C1_RETURN.i32.ainc t0, r5, u0.w1\n    +ATOM_CX t1, r4, r5, u0.w1, @r4\n";
  CHECK(atomic_rows(inc, "", {{5}, {0xffffffffu}}) == V{5, 0xffffffffu});
  CHECK(atomic_rows(inc, "reload", {{5}, {0xffffffffu}}) == V{6, 0});
  const std::string dec = "    *ATOM_C1.i32.adec t0, r5, u0.w1\n    +ATOM_CX t1, r4, r5, u0.w1, @r4\n";
  CHECK(atomic_rows(dec, "reload", {{5}, {0}}) == V{4, 0xffffffffu});
  const std::string umax1 = "    *ATOM_C1.i32.aumax1 t0, r5, u0.w1\n    +ATOM_CX t1, r4, r5, u0.w1, @r4\n";
  CHECK(atomic_rows(umax1, "reload", {{0}, {7}}) == V{1, 7});
  // i64 add: operand r6:r7 (the row's r2, r3), memory words 0-1 of the row; reload word 0
  const std::string add64 = "    *ATOM_C.i64.aadd t0, r5, u0.w1, r6\n    +ATOM_CX t1, r6, r5, u0.w1, @r6\n";
  CHECK(atomic_rows(add64, "reload", {{0xffffffffu, 0, 1, 0}, {3, 4, 5, 6}}) == V{0, 8});
  const std::string add64r = "    *ATOM_C_RETURN.i64.aadd t0, r5, u0.w1, r6\n    +ATOM_CX t1, r6, r5, u0.w1, @r6\n";
  // the old 64-bit value lands in r6:r7
  CHECK(atomic_rows(add64r, "r6", {{0xffffffffu, 2, 1, 0}}) == V{0xffffffffu});
}

TEST_CASE("bifrost 64-bit (double) shifts and rotates of src0 | src1 << 32") {
  CHECK(fma_op("*LSHIFT_DOUBLE.i32 r4:t0, r0, r1, r2", {{0x80000001u, 1, 4}}) == V{0x00000010u});
  CHECK(fma_op("*LSHIFT_DOUBLE.i32.w1 r4:t0, r0, r1, r2", {{0x80000001u, 1, 4}, {1, 0, 64}}) == V{0x18, 0});
  CHECK(fma_op("*LSHIFT_DOUBLE.i32 r4:t0, r0, r1, r2.bytes2", {{1, 0, 1}}) == V{0x100});
  CHECK(fma_op("*RSHIFT_DOUBLE.i32 r4:t0, r0, r1, r2", {{0, 1, 32}}) == V{1});
  CHECK(fma_op("*RSHIFT_DOUBLE.i32 r4:t0, r0, r1, r2.b2", {{0x100, 0, 0x00080000u}}) == V{1});
  CHECK(fma_op("*ARSHIFT_DOUBLE.i32.w1 r4:t0, r0, r1, r2", {{0, 0x80000000u, 63}}) == V{0xffffffffu});
  CHECK(fma_op("*LROT_DOUBLE.i32.w1 r4:t0, r0, r1, r2", {{0x80000000u, 1, 1}}) == V{3});
  CHECK(fma_op("*RROT_DOUBLE.i32.w1 r4:t0, r0, r1, r2", {{1, 0, 1}, {1, 2, 0}}) == V{0x80000000u, 2});
  CHECK(fma_op("*FLSHIFT_DOUBLE.i32 r4:t0, r0, r1, r2", {{0x80000000u, 1, 33}}) == V{3});
  CHECK(fma_op("*FRSHIFT_DOUBLE.i32 r4:t0, r0, r1, r2", {{0x80000000u, 1, 4}}) == V{0x18000000u});
}

TEST_CASE("bifrost WMASK: a ballot inside the subgroup, fill for the lanes not active") {
  CHECK(add_op("+WMASK.subgroup4 r4:t1, r0, fill:0", {{1}, {0}, {5}, {0}}) == V{5, 5, 5, 5});
  CHECK(add_op("+WMASK.subgroup4 r4:t1, r0, fill:1", {{1}, {0}, {5}}) == V{13, 13, 13});
  CHECK(add_op("+WMASK.subgroup2 r4:t1, r0, fill:0", {{1}, {0}, {0}, {7}, {1}}) == V{1, 1, 2, 2, 1});
  // subgroup8 on a G72 (4-lane guest warps) is the guest warp
  CHECK(add_op("+WMASK.subgroup8 r4:t1, r0, fill:0", {{1}, {1}, {0}, {0}, {1}}) == V{3, 3, 3, 3, 1});
}

// r4 = 1 when `branch` (in clause_1, to clause_5 = the store) is taken, else 2.
static std::vector<uint32_t> branch_rows(const std::string& branch, const std::vector<std::array<uint32_t, 4>>& rows) {
  return run_rows("clause_1:\nds(0) nbb\n{\n    *MOV.i32 r4:t0, 0x00000001\n    " + branch +
                      "\n}\nclause_3:\nds(0) nbb\n{\n    *MOV.i32 r4:t0, 0x00000002\n    +NOP t1\n}\n",
                  rows);
}

TEST_CASE("bifrost 16-bit branch compares and BRANCHC (any / all of the guest warp)") {
  CHECK(branch_rows("+BRANCHZ.s16.lt t1, r0.h1, clause_5", {{0x80000000u}, {0x00018000u}, {0x0000ffffu}}) == V{1, 2, 2});
  CHECK(branch_rows("+BRANCHZ.u16.gt t1, r0.h0, clause_5", {{0x80000000u}, {0x00018000u}}) == V{2, 1});
  CHECK(branch_rows("+BRANCHZ.i16.eq t1, r0.h1, clause_5", {{0x0000ffffu}, {0x00010000u}}) == V{1, 2});
  CHECK(branch_rows("+BRANCHZ.f16.eq t1, r0.h0, clause_5", {{0x00008000u}, {0x00007e00u}}) == V{1, 2});
  CHECK(branch_rows("+BRANCH.f16.lt t1, r1.h1, r0.h0, clause_5", {{0x3c00, 0x38000000u}, {0x7e00, 0x38000000u}}) == V{1, 2});
  CHECK(branch_rows("+BRANCH.s16.gt t1, r0.h0, r1.h0, clause_5", {{0x0001, 0xffff}, {0xffff, 0x0001}}) == V{1, 2});
  CHECK(branch_rows("+BRANCH.u16.gt t1, r0.h1, r1.h0, clause_5", {{0x00010000u, 0xffff}, {0xffff0000u, 0x0001}}) == V{2, 1});
  // guest warps of 4 (G72): threads 0-3 and 4-7 decide on their own
  CHECK(branch_rows("+BRANCHC.i32.any t1, r0, clause_5", {{0}, {0}, {1}, {0}, {0}, {0}, {0}, {0}}) == V{1, 1, 1, 1, 2, 2, 2, 2});
  CHECK(branch_rows("+BRANCHC.i32.all t1, r0, clause_5", {{1}, {1}, {0}, {1}, {1}, {1}, {1}, {1}}) == V{2, 2, 2, 2, 1, 1, 1, 1});
  CHECK(branch_rows("+BRANCHC.i16.any t1, r0.h1, clause_5", {{0xffff}, {0}, {0}, {0}, {0x10000}}) == V{2, 2, 2, 2, 1});
}

TEST_CASE("bifrost log, exp and sin/cos special functions: the documented definitions") {
  constexpr uint32_t kNan = 0x7fc00000u, kInf = 0x7f800000u, kNegInf = 0xff800000u;
  // frexp in log mode: |m| in [0.75, 1.5)
  CHECK(add_op("+FREXPM.f32.log r4:t1, r0", {{fb(3)}, {fb(1)}, {fb(-5)}, {0}}) == V{fb(0.75f), fb(1), fb(-1.25f), 0});
  CHECK(add_op("+FREXPE.f32.log r4:t1, r0", {{fb(3)}, {fb(1)}, {fb(-5)}, {kInf}}) == V{2, 0, 2, 0});
  CHECK(add_op("+FREXPM.v2f16.log r4:t1, r0", {{0x42004500u}}) == V{0x3a003d00u});  // (5, 3) -> (1.25, 0.75)
  // FLOG_TABLE: bucket = top 7 fraction bits; values worked out with the definition in Python
  CHECK(add_op("+FLOG_TABLE.f32.red r4:t1, r0", {{fb(1)}, {fb(0.8f)}, {fb(3)}, {0}, {kInf}, {fb(-1)}, {kNan}}) ==
        V{0x3f7f00ffu, 0x3fa03c17u, 0x3faa392fu, fb(1), fb(1), kNan, kNan});
  CHECK(add_op("+FLOG_TABLE.f32.base2 r4:t1, r0", {{fb(1)}, {fb(0.8f)}, {fb(3)}, {0}, {kInf}}) ==
        V{0x3bb84e24u, 0xbea5e8f8u, 0xbed293feu, kNegInf, kInf});
  CHECK(add_op("+FLOG_TABLE.f32.natural r4:t1, r0", {{fb(1)}, {fb(0.8f)}, {fb(3)}}) == V{0x3b7f8056u, 0xbe660009u, 0xbe91f62cu});
  CHECK(add_op("+FLOGD.f32 r4:t1, r0", {{fb(1)}, {fb(3)}, {0}, {kInf}, {fb(-2)}}) == V{0x3fb8aa3bu, 0x3fd47fccu, kInf, kInf, kNan});
  CHECK(fma_op("*FADD_LSCALE.f32 r4:t0, r0, r1", {{fb(-1), fb(3)}, {fb(-1), fb(6)}, {fb(-1), fb(1)}, {fb(1), kInf}}) ==
        V{fb(-0.25f), fb(-0.25f), 0, kInf});
  CHECK(add_op("+FEXP.f32 r4:t1, r0, r1", {{1u << 24, fb(1)}, {0xff800000u, 0}, {0, kNan}, {0x80000000u, kNegInf},
                                           {0x7fffffffu, kInf}, {0x80000000u, fb(-200)}}) ==
        V{fb(2), 0x3f3504f3u, kNan, 0, kInf, 0x00200000u});
  CHECK(add_op("+FSIN_TABLE.u6 r4:t1, r0", {{0}, {16}, {8}, {48}, {80}}) == V{0, fb(1), 0x3f3504f3u, fb(-1), fb(1)});
  CHECK(add_op("+FCOS_TABLE.u6 r4:t1, r0", {{0}, {16}, {32}, {48}}) == V{fb(1), 0, fb(-1), 0});
}

TEST_CASE("bifrost arc-tangent assist, table and the LDEXP.inf scale modes (seed's atan2 sequence)") {
  constexpr uint32_t kNan = 0x7fc00000u, kInf = 0x7f800000u, kNegInf = 0xff800000u;
  // high half: the coarse slope |y|/|x| (f16, 5 fraction bits); low half: -ilogb(max), 0x8000 for an infinity
  CHECK(add_op("+FATAN_ASSIST.f32 r4:t1, r0, r1", {{fb(1), fb(3)}, {kInf, fb(1)}, {0, 0}, {fb(1), fb(1)}}) ==
        V{0x3540ffffu, 0x7be08000u, 0, 0x3c000000u});
  // atan of that slope (f64 series, values from the same definition in Python)
  CHECK(add_op("+FATAN_TABLE.f32 r4:t1, r0, r1", {{fb(1), fb(1)}, {fb(1), fb(3)}, {fb(3), fb(1)}, {0, fb(1)}, {fb(1), 0}, {kNan, 0}}) ==
        V{0x3f490fdbu, 0x3ea25522u, 0x3f9fe0bbu, 0, 0x3fc90f59u, kNan});
  CHECK(add_op("+LDEXP.f32.inf r4:t1, r0, r1", {{fb(3), 0x0000ffffu}, {kInf, 0x8000}, {fb(-5), 0x8000}, {kNegInf, 0x12348000u}}) ==
        V{fb(1.5f), fb(1), 0x80000000u, fb(-1)});
  CHECK(add_op("+LDEXP.f32.inf0 r4:t1, r0, r1", {{fb(3), 0x00000002u}, {kNan, 0x8000}}) == V{fb(12), kNan});
}

TEST_CASE("bifrost modifier forms the JIT now translates: IMUL widen, rtna to integer and FROUND.rtna") {
  CHECK(fma_op("*IMUL.i32.sext r4:t0, r0, r1.h1", {{3, 0xfffe0000u}}) == V{0xfffffffau});
  CHECK(fma_op("*IMUL.i32.zext r4:t0, r0, r1.b2", {{3, 0x00ff0000u}}) == V{765});
  CHECK(add_op("+F32_TO_S32.rtna r4:t1, r0", {{fb(2.5f)}, {fb(-2.5f)}, {fb(0.49999997f)}, {fb(3e9f)}, {0x7fc00000u}}) ==
        V{3, 0xfffffffdu, 0, 0x7fffffffu, 0});
  CHECK(add_op("+F32_TO_U32.rtna r4:t1, r0", {{fb(2.5f)}, {fb(-0.5f)}}) == V{3, 0});
  CHECK(fma_op("*FROUND.f32.rtna r4:t0, r0", {{fb(2.5f)}, {fb(-0.4f)}, {fb(0.49999997f)}, {0x7f800000u}}) ==
        V{fb(3), 0x80000000u, 0, 0x7f800000u});
}

TEST_CASE("bifrost narrow loads: lane_dest (byte/half merge, w0, d0) and extend") {
  auto ld = [](const std::string& ins, const std::string& then, const std::vector<std::array<uint32_t, 4>>& rows) {
    return atomic_rows("    *NOP t0\n    " + ins + "\n", then, rows, "load");
  };
  // merges into a byte / half of the staging register (r4 = the row's r1 before)
  CHECK(ld("+LOAD.i8.b2 t1, r5, u0.w1, @r4", "", {{0x44332211u, 0xaaaaaaaau}}) == V{0xaa11aaaau});
  CHECK(ld("+LOAD.i8 t1, r5, u0.w1, @r4", "", {{0x44332211u, 0xaaaaaaaau}}) == V{0xaaaaaa11u});
  CHECK(ld("+LOAD.i16.h1 t1, r5, u0.w1, @r4", "", {{0x44332211u, 0xaaaaaaaau}}) == V{0x2211aaaau});
  CHECK(ld("+LOAD.i8.h1.sext t1, r5, u0.w1, @r4", "", {{0x000000f0u, 0xaaaaaaaau}}) == V{0xfff0aaaau});
  CHECK(ld("+LOAD.i8.h0.zext t1, r5, u0.w1, @r4", "", {{0x000000f0u, 0xaaaaaaaau}}) == V{0xaaaa00f0u});
  CHECK(ld("+LOAD.i8.w0.sext t1, r5, u0.w1, @r4", "", {{0x000000f0u, 0xaaaaaaaau}}) == V{0xfffffff0u});
  // d0: extended to 64 bits in r6, r7
  CHECK(ld("+LOAD.i16.d0.sext t1, r5, u0.w1, @r6", "r6", {{0x00008001u}}) == V{0xffff8001u});
  CHECK(atomic_rows("    *NOP t0\n    +LOAD.i16.d0.sext t1, r5, u0.w1, @r6\n}\nclause_5:\nds(0) nbb\n{\n    *NOP t0\n"
                    "    +MOV.i32 r4:t1, r7\n",
                    "", {{0x00008001u}, {0x00000001u}}, "load") == V{0xffffffffu, 0});
  CHECK(ld("+LOAD.i32.d0.zext t1, r5, u0.w1, @r6", "r6", {{0x80000001u}}) == V{0x80000001u});
}

TEST_CASE("bifrost FMA_RSCALE.f32.left: a zero or infinite src0 is the result (the seed's sqrt_mode)") {
  constexpr uint32_t kInf = 0x7f800000u;
  CHECK(fma_op("*FMA_RSCALE.f32.left r4:t0, r0, r1, r2, 0x00000001", {{0, kInf, 0}, {kInf, 0, 0}, {fb(2), fb(3), fb(1)},
                                                                        {0x80000000u, fb(5), fb(1)}}) ==
        V{0, kInf, fb(14), 0x80000000u});
  CHECK(fma_op("*FMA_RSCALE.f32 r4:t0, r0, r1, r2, 0x00000001", {{0, kInf, 0}}) == V{0x7fc00000u});
}

TEST_CASE("bifrost the remaining forms of each family: one edge row each") {
  CHECK(add_op("+ICMP.v2i16.ne r4:t1, r0, r1", {{0x00010002u, 0x00010003u}}) == V{0x00000001u});
  CHECK(add_op("+HADD.v4s8 r4:t1, r0, r1", {{0x80ff0301u, 0x80010101u}}) == V{0x80000201u});
  CHECK(add_op("+ICMPI.i32.eq r4:t1, r0, r1", {{5, 5}, {5, 6}}) == V{1, 0});
  CHECK(add_op("+ICMPI.i32.m1.ne r4:t1, r0, r1", {{5, 6}}) == V{0xffffffffu});
  CHECK(fma_op("*CSEL.v2i16.eq r4:t0, r0, r1, r2, 0xbbbbbbbb", {{0x00010002u, 0x00010003u, 0xaaaaaaaau}}) == V{0xaaaabbbbu});
  CHECK(fma_op("*LSHIFT_AND.v2i16 r4:t0, r0, r1, r2", {{0x00030003u, 0x00040006u, 0x00010001u}}) == V{0x00040006u});
  CHECK(fma_op("*LSHIFT_AND.v4i8 r4:t0, r0, r1, r2", {{0x01010101u, 0xffffffffu, 0x03020100u}}) == V{0x08040201u});
  CHECK(fma_op("*LSHIFT_OR.v4i8 r4:t0, r0, r1, r2", {{0x01010101u, 0x10101010u, 0}}) == V{0x11111111u});
  CHECK(fma_op("*LSHIFT_XOR.v2i16 r4:t0, r0, r1, r2", {{0x00010001u, 0x00030003u, 0x00010000u}}) == V{0x00010002u});
  CHECK(fma_op("*RSHIFT_OR.v2i16 r4:t0, r0, r1, r2", {{0x80008000u, 0x00010000u, 0x000f0001u}}) == V{0x00014000u});
  CHECK(fma_op("*RSHIFT_AND.v4i8 r4:t0, r0, r1, r2", {{0x80808080u, 0xffffffffu, 0x07060100u}}) == V{0x01024080u});
  CHECK(fma_op("*RSHIFT_OR.v4i8 r4:t0, r0, r1, r2", {{0x80808080u, 0x01010101u, 0x07060100u}}) == V{0x01034181u});
  CHECK(fma_op("*RSHIFT_XOR.v2i16 r4:t0, r0, r1, r2", {{0xff00ff00u, 0x00ff00ffu, 0x00080008u}}) == V{0});
  CHECK(add_op("+QUIET.f32 r4:t1, r0", {{0xff800001u}}) == V{0xffc00001u});
  CHECK(fma_op("*QUIET.v2f16 r4:t0, r0", {{0x7d00fc01u}}) == V{0x7f00fe01u});
  CHECK(fma_op("*FREXPM.v2f16 r4:t0, r0", {{0x44000001u}}) == V{0x38003800u});
  CHECK(fma_op("*FREXPE.v2f16 r4:t0, r0", {{0x44000001u}}) == V{0x0003ffe9u});
  CHECK(add_op("+FATAN_ASSIST.f16 r4:t1, r0, r1.h1", {{0x00003c00u, 0x42000000u}}) == V{0x3540ffffu});
  CHECK(add_op("+FATAN_TABLE.f16 r4:t1, r0, r1.h1", {{0x00003c00u, 0x42000000u}}) == V{0x3513u});
}

TEST_CASE("bifrost 64-bit exchange, compare-exchange and C1 atomics") {
  // memory words 0-1 = the row's r0, r1; staging r6, r7 = r2, r3
  CHECK(atomic_rows("    *NOP t0\n    +AXCHG.i64 t1, r5, u0.w1, @r6\n", "r6", {{5, 6, 7, 8}}) == V{5});
  CHECK(atomic_rows("    *NOP t0\n    +AXCHG.i64 t1, r5, u0.w1, @r6\n", "reload1", {{5, 6, 7, 8}}) == V{8});
  const std::string inc = "    *ATOM_C1_RETURN.i64.ainc t0, r5, u0.w1\n    +ATOM_CX t1, r6, r5, u0.w1, @r6\n";
  CHECK(atomic_rows(inc, "r6", {{0xffffffffu, 0}}) == V{0xffffffffu});
  CHECK(atomic_rows(inc, "reload1", {{0xffffffffu, 0}}) == V{1});
  const std::string dec = "    *ATOM_C1.i64.adec t0, r5, u0.w1\n    +ATOM_CX t1, r6, r5, u0.w1, @r6\n";
  CHECK(atomic_rows(dec, "reload", {{0, 1}}) == V{0xffffffffu});
  CHECK(atomic_rows(dec, "reload1", {{0, 1}}) == V{0});
  // aadds / aaddu: the 32-bit r6 sign- / zero-extended
  const std::string adds = "    *ATOM_C.i64.aadds t0, r5, u0.w1, r6\n    +ATOM_CX t1, r6, r5, u0.w1, @r6\n";
  const std::string addu = "    *ATOM_C.i64.aaddu t0, r5, u0.w1, r6\n    +ATOM_CX t1, r6, r5, u0.w1, @r6\n";
  CHECK(atomic_rows(adds, "reload1", {{2, 0, 0xffffffffu}}) == V{0});
  CHECK(atomic_rows(addu, "reload1", {{2, 0, 0xffffffffu}}) == V{1});
  // ACMPXCHG.i64 / ACMPSTORE.i64: staging r8, r9 = new (r2, 0), r10, r11 = compare (r3, r1)
  auto cas64 = [](const std::string& op, const std::vector<std::array<uint32_t, 4>>& rows) {
    return run_rows(
        "clause_1:\nds(0) nbb\n{\n    *SHADDXL.u32 r5:t0, u0.w0, r60, shift:4\n    +MOV.i32 r8:t1, r2\n"
        "    *MOV.i32 r9:t0, 0x00000000\n    +MOV.i32 r10:t1, r3\n    *MOV.i32 r11:t0, r1\n    +NOP t1\n}\n"
        "clause_4:\nds(0) nbb atomic\n{\n    *NOP t0\n    " + op + " t1, r5, u0.w1, @r8\n}\n"
        "clause_6:\nds(0) nbb load\n{\n    *NOP t0\n    +LOAD.i32 t1, r5, u0.w1, @r4\n}\n",
        rows);
  };
  CHECK(cas64("+ACMPXCHG.i64", {{5, 6, 9, 5}, {5, 6, 9, 4}}) == V{9, 5});
  CHECK(cas64("+ACMPSTORE.i64", {{5, 6, 9, 5}, {5, 6, 9, 4}}) == V{9, 5});
}

TEST_CASE("bifrost CUBEFACE1: the largest absolute value of three (NaN operands lose)") {
  // Valhall ISA.xml's description ("the maximum absolute value of its
  // arguments"); the NaN rule is ours (docs/bifrost.md).
  constexpr uint32_t kInf = 0x7f800000u, kNan = 0x7fc00000u;
  const std::vector<std::array<uint32_t, 4>> rows = {
      {fb(-3), fb(2), fb(1)},          {fb(1), fb(-5), 0x7f800001u}, {0xffc00001u, kNan, 0x7fffffffu},
      {0x80000000u, 0, 0x80000000u},   {0xff800000u, fb(1), kNan},   {0x00000001u, 0x80000002u, 0},
      {fb(0.5f), fb(0.25f), fb(-0.75f)}};
  const V want = {fb(3), fb(5), kNan, 0, kInf, 0x00000002u, fb(0.75f)};
  CHECK(fma_op("*CUBEFACE1 r4:t0, r0, r1, r2", rows) == want);
  // The negate modifiers do not change an absolute value.
  CHECK(fma_op("*CUBEFACE1 r4:t0, r0.neg, r1.neg, r2.neg", rows) == want);
}

TEST_CASE("bifrost FMA_RSCALE.f32.scale16: the scale is src3's low half as s16") {
  // Valhall ISA.xml, FMA_RSCALE_SCALE16: "biases the exponent by D, interpreted as a 16-bit value".
  const std::vector<std::array<uint32_t, 4>> rows = {{fb(1.5f), fb(2), 0}, {fb(1), fb(1), fb(1)}};
  CHECK(fma_op("*FMA_RSCALE.f32.scale16 r4:t0, r0, r1, r2, 0xffff0003", rows) == V{fb(24), fb(16)});
  CHECK(fma_op("*FMA_RSCALE.f32.scale16 r4:t0, r0, r1, r2, 0x0001fffe", rows) == V{fb(0.75f), fb(0.5f)});
  // The whole word as the scale (no .scale16): 0xffff0003 is far below -1000.
  CHECK(fma_op("*FMA_RSCALE.f32 r4:t0, r0, r1, r2, 0xffff0003", rows) == V{0, 0});
  // -32768 is clamped like any scale below -1000.
  CHECK(fma_op("*FMA_RSCALE.f32.scale16 r4:t0, r0, r1, r2, 0x00008000", rows) == V{0, 0});
}

TEST_CASE("bifrost CUBEFACE1 + CUBEFACE2, CUBE_SSEL, CUBE_TSEL: the defined cube-map model") {
  // docs/bifrost.md "Cube maps": the face of the major axis (GL numbering,
  // +X 0 ... -Z 5) in bits 29-31, taken from the paired *CUBEFACE1's operands;
  // ties go to X then Y; CUBE_SSEL / CUBE_TSEL give GL's s_c / t_c.
  constexpr uint32_t kNan = 0x7fc00000u;
  const std::vector<std::array<uint32_t, 4>> rows = {
      {fb(2), fb(1), fb(-1)}, {fb(-2), fb(1), fb(1)},  {fb(0.5f), fb(3), fb(1)}, {fb(0), fb(-3), fb(1)},
      {fb(1), fb(1), fb(4)},  {fb(1), fb(-1), fb(-4)}, {fb(1), fb(1), fb(1)},    {fb(1), fb(-2), fb(2)},
      {fb(1), kNan, fb(4)},   {0, 0x80000000u, 0}};
  auto face = [](uint32_t f) { return f << 29; };
  CHECK(run_ins("*CUBEFACE1 t0, r0, r1, r2", "+CUBEFACE2 r4:t1, t", rows) ==
        V{face(0), face(1), face(2), face(3), face(4), face(5), face(0), face(3), face(2), face(0)});
  // The FMA's negate modifiers (all three or none: one encoding bit) move the face to the opposite one.
  CHECK(run_ins("*CUBEFACE1 t0, r0.neg, r1.neg, r2.neg", "+CUBEFACE2 r4:t1, t", rows) ==
        V{face(1), face(0), face(3), face(2), face(5), face(4), face(1), face(2), face(3), face(1)});
  // The max the pair's FMA writes is the one CUBEFACE1 gives alone.
  CHECK(run_ins("*CUBEFACE1 r4:t0, r0, r1, r2", "+CUBEFACE2 t1, t", rows) ==
        V{fb(2), fb(2), fb(3), fb(3), fb(4), fb(4), fb(1), fb(2), fb(4), 0});

  // SSEL(z, x, face) and TSEL(y, z, face): one row per face (6 and 7 act as +Z).
  std::vector<std::array<uint32_t, 4>> sel;
  for (uint32_t f = 0; f < 8; ++f) sel.push_back({fb(3), fb(5), face(f) | 0x1234u});
  const uint32_t n3 = fb(-3), n5 = fb(-5);
  CHECK(add_op("+CUBE_SSEL r4:t1, r0, r1, r2", sel) == V{n3, fb(3), fb(5), fb(5), fb(5), n5, fb(5), fb(5)});
  CHECK(add_op("+CUBE_TSEL r4:t1, r0, r1, r2", sel) == V{n3, n3, fb(5), n5, n3, n3, n3, n3});
  CHECK(add_op("+CUBE_SSEL r4:t1, r0.neg, r1.neg, r2", sel) == V{fb(3), n3, n5, n5, n5, fb(5), n5, n5});
  // A NaN passes as bits (only its sign changes).
  CHECK(add_op("+CUBE_SSEL r4:t1, r0, r1, r2", {{0x7fc00001u, 0, 0}}) == V{0xffc00001u});
}

TEST_CASE("bifrost CUBEFACE2 without its *CUBEFACE1 is a clear error on every engine") {
  const std::string text = "clause_0:\nds(0) eos\n{\n    *NOP t0\n    +CUBEFACE2 r4:t1, t\n}\n";
  json doc = {{"gpurc", 1}, {"isa", "bifrost"}, {"program", {{"asm", text}}}, {"launch", {{"grid", {1}}, {"block", {4}}}}};
  for (Engine e : {Engine::Interp, Engine::Jit}) {
    CAPTURE(engine_name(e));
    try {
      replay::ReplayRun r = replay::run_document(doc, kExamples, e, 1, false);
      REQUIRE(r.fault);
      CHECK(r.fault->find("*CUBEFACE1 in the same tuple") != std::string::npos);
    } catch (const replay::ReplayError& err) {
      CHECK(std::string(err.what()).find("*CUBEFACE1 in the same tuple") != std::string::npos);
    }
  }
}

TEST_CASE("bifrost SEG_ADD / SEG_SUB: wls window addresses, used by ATOM_C on shared memory") {
  // docs/bifrost.md "Segment addresses": *SEG_ADD.wls gives the offset (low
  // word), +SEG_ADD.wls the high word + 0xfffffff0; SEG_SUB is the inverse.
  CHECK(fma_op("*SEG_ADD.wls r4:t0, r0", {{5}, {0xffffffffu}}) == V{5, 0xffffffffu});
  CHECK(add_op("+SEG_ADD.wls r4:t1, r0", {{0}, {0x20}}) == V{0xfffffff0u, 0x10});
  CHECK(fma_op("*SEG_SUB.wls r4:t0, r0", {{5}}) == V{5});
  CHECK(add_op("+SEG_SUB.wls r4:t1, r0", {{0xfffffff0u}, {0xfffffff5u}}) == V{0, 5});

  // Mesa's shared atomic: SEG_ADD.i64 (offset 4, high word 0) lowered to the
  // *SEG_ADD/+SEG_ADD pair, then ATOM_C.aadd of lid + 1 at that address; after
  // the barrier every thread reads wls[4] (1 + ... + 8 = 36) and wls[0] (untouched).
  const std::string text =
      "clause_0:\nds(0) nbb\n{\n    *SEG_ADD.wls r0:t0, 0x00000004\n    +IADD.u32 r2:t1, r55, 0x00000001\n"
      "    *NOP t0\n    +SEG_ADD.wls r1:t1, 0x00000000\n}\n"
      "clause_2:\nds(0) nbb atomic next_barrier\n{\n    *ATOM_C.i32.aadd t0, r0, r1, r2\n"
      "    +ATOM_CX t1, r2, r0, r1, @r2\n}\n"
      "clause_3:\nds(0) nbb barrier next_load\n{\n    *NOP t0\n    +BARRIER t1\n}\n"
      "clause_4:\nds(0) nbb load next_store\n{\n    *MOV.i32 t0, #0\n    +LOAD.i64.wls t1, t, t, @r4\n}\n"
      "clause_5:\nds(0) nbb store next_store\n{\n    *SHADDXL.u32 t0, u2.w0, r60, shift:3\n"
      "    +STORE.i64 t1, t, u2.w1, @r4\n}\n"
      "clause_6:\nds(0) eos store\n{\n    *SHADDXL.u32 t0, u1.w0, r60, shift:3\n    +STORE.i64 t1, t, u1.w1, @r0\n}\n";
  json doc = {{"gpurc", 1},
              {"isa", "bifrost"},
              {"program", {{"asm", text}}},
              {"launch", {{"grid", {2}}, {"block", {8}}, {"shared_bytes", 16}}},
              {"state", {{"uniforms", {{"u2", "0x100000"}, {"u3", 0}, {"u4", "0x200000"}, {"u5", 0}}}}},
              {"memory",
               {{{"name", "addr"}, {"space", "global"}, {"address", "0x100000"}, {"size", 16 * 8}},
                {{"name", "out"}, {"space", "global"}, {"address", "0x200000"}, {"size", 16 * 8}}}}};
  V want, addr;
  for (unsigned i = 0; i < 16; ++i) {
    want.insert(want.end(), {0u, 36u});
    addr.insert(addr.end(), {4u, 0xfffffff0u});
  }
  for (Engine e : host_engines()) {
    CAPTURE(engine_name(e));
    replay::ReplayRun r = replay::run_document(doc, kExamples, e, 1, false);
    REQUIRE_MESSAGE(!r.fault, *r.fault);
    CHECK(words(r, "out") == want);
    CHECK(words(r, "addr") == addr);
  }
}

TEST_CASE("bifrost round to odd (+FADD.f32.rto) and ties away (rtna) on float results: edge values") {
  // Round to odd: an inexact sum takes the neighbour with an odd significand
  // (ties included); exact sums, infinities and NaN as in the other modes.
  CHECK(add_op("+FADD.f32.rto r4:t1, r0, r1",
               {{fb(1), fb(2)},                   // exact
                {fb(1), 0x33800000u},             // 1 + 2^-24, a tie: 1 + ulp (odd), not 1.0
                {fb(1), 0x34400000u},             // 1 + 1.5 ulp: 1 + ulp (odd), not 1 + 2 ulp
                {fb(-1), 0xb3800000u},            // negative tie
                {fb(1), 0x21800000u},             // 1 + 2^-60: below f64 precision too
                {fb(1), 0xa1800000u},             // 1 - 2^-60: the odd neighbour below 1
                {0x7f7fffffu, 0x7f7fffffu},       // past MAX_FLT: MAX_FLT (odd), not inf
                {fb(1), fb(-1)},                  // exact zero: +0
                {0x0d800000u, 0x00000001u},       // 2^-100 + the smallest subnormal
                {0x00000001u, 0x00000001u},       // subnormal, exact
                {0x7f800000u, fb(1)}, {0x7f800000u, 0xff800000u}, {0x7fa00000u, fb(1)}}) ==
        V{0x40400000u, 0x3f800001u, 0x3f800001u, 0xbf800001u, 0x3f800001u, 0x3f7fffffu, 0x7f7fffffu, 0,
          0x0d800001u, 2, 0x7f800000u, 0x7fc00000u, 0x7fc00000u});
  // (the rto encoding has no abs, neg, widen or clamp modifiers)
  // rtna: nearest, ties away from zero (ties to even would give the first word's even neighbour)
  CHECK(add_op("+S32_TO_F32.rtna r4:t1, r0",
               {{16777217}, {16777219}, {uint32_t(-16777217)}, {16777218}, {0x7fffffffu}, {0x80000000u}, {33554434}}) ==
        V{0x4b800001u, 0x4b800002u, 0xcb800001u, 0x4b800001u, 0x4f000000u, 0xcf000000u, 0x4c000001u});
  CHECK(add_op("+S32_TO_F32 r4:t1, r0", {{16777217}}) == V{0x4b800000u});
  CHECK(add_op("+U32_TO_F32.rtna r4:t1, r0", {{0xffffffffu}, {0x80000080u}}) == V{0x4f800000u, 0x4f000001u});
  CHECK(add_op("+V2S16_TO_V2F16.rtna r4:t1, r0", {{0x08030801u}, {0xf7ff8000u}}) == V{0x68026801u, 0xe801f800u});
  CHECK(add_op("+V2S16_TO_V2F16 r4:t1, r0", {{0x08030801u}}) == V{0x68026800u});
  CHECK(add_op("+V2U16_TO_V2F16.rtna r4:t1, r0", {{0xffeffff0u}, {0x0801ffffu}}) == V{0x7bff7c00u, 0x68017c00u});
  // f32 -> f16: 1 + 2^-11 is a tie; 2^-25 ties between 0 and the smallest subnormal; 65520 overflows
  const std::vector<std::array<uint32_t, 4>> f2h = {
      {0x3f801000u, 0xbf801000u}, {0x33000000u, 0x477ff000u}, {0x7fc00000u, fb(1)}, {0x3f801001u, 0xb3000000u}};
  const V f2h_want{0xbc013c01u, 0x7c000001u, 0x3c007e00u, 0x80013c01u};
  CHECK(add_op("+V2F32_TO_V2F16.rtna r4:t1, r0, r1", f2h) == f2h_want);
  CHECK(fma_op("*V2F32_TO_V2F16.rtna r4:t0, r0, r1", f2h) == f2h_want);
  // LDEXP: 1.25 * 2^-148 = 2.5 subnormal units, 0.5 * 2^-149 = half a unit
  CHECK(add_op("+LDEXP.f32.rtna r4:t1, r0, r1",
               {{0x3fa00000u, uint32_t(-148)}, {0xbfa00000u, uint32_t(-148)}, {0x3f000000u, uint32_t(-149)},
                {fb(3), 0}, {0x7fa00000u, 3}}) == V{3, 0x80000003u, 1, fb(3), 0x7fc00000u});
  CHECK(add_op("+LDEXP.f32 r4:t1, r0, r1", {{0x3fa00000u, uint32_t(-148)}}) == V{2});
  CHECK(add_op("+LDEXP.v2f16.rtna r4:t1, r0, r1", {{0xbd003d00u, 0xffe9ffe9u}}) == V{0x80030003u});
  CHECK(add_op("+LDEXP.v2f16 r4:t1, r0, r1", {{0xbd003d00u, 0xffe9ffe9u}}) == V{0x80020002u});
}

TEST_CASE("bifrost FADD_RSCALE.f32.n (Mesa: FMA_RSCALE with b = 1.0) and its rounding modes") {
  // .n alone: the same as none (a * 1.0 has no zero-times-infinity case)
  CHECK(add_op("+FADD_RSCALE.f32.n r4:t1, r0, r1, r2",
               {{fb(1), fb(2), 3}, {fb(1), 0x33800000u, 0}, {0, 0x80000000u, 0}, {0x7f800000u, 0xff800000u, 0}}) ==
        V{fb(24), fb(1), 0, 0x7fc00000u});
  CHECK(add_op("+FADD_RSCALE.f32.n.rtna r4:t1, r0, r1, r2", {{fb(1), 0x33800000u, 0}, {fb(-1), 0xb3800000u, 1}}) ==
        V{0x3f800001u, 0xc0000001u});
  // directed modes are exact even where the f64 sum is not (1 +- 2^-60)
  CHECK(add_op("+FADD_RSCALE.f32.n.rtp r4:t1, r0, r1, r2",
               {{fb(1), 0x21800000u, 0}, {fb(1), 0, uint32_t(-1000)}, {fb(1), fb(-1), 0}}) == V{0x3f800001u, 1, 0});
  CHECK(add_op("+FADD_RSCALE.f32.n.rtn r4:t1, r0, r1, r2",
               {{fb(-1), 0xa1800000u, 0}, {fb(-1), 0, uint32_t(-1000)}, {fb(1), fb(-1), 0}, {0, 0, 0}}) ==
        V{0xbf800001u, 0x80000001u, 0x80000000u, 0});
  CHECK(add_op("+FADD_RSCALE.f32.n.rtz r4:t1, r0, r1, r2",
               {{fb(1), 0xa1800000u, 0}, {fb(1), 0, uint32_t(-1000)}, {fb(1), 0, 1000}, {fb(1), 0x34400000u, 0}}) ==
        V{0x3f7fffffu, 0, 0x7f7fffffu, 0x3f800001u});
  CHECK(add_op("+FADD_RSCALE.f32 r4:t1, r0, r1, r2", {{fb(1), 0, 1000}, {fb(1), 0, uint32_t(-1000)}}) == V{0x7f800000u, 0});
}

TEST_CASE("bifrost FMA_RSCALE.v2f16.left: per lane, a zero or infinite src0 lane is the result") {
  // k = 1 in the low lane, 0 in the high lane
  CHECK(fma_op("*FMA_RSCALE.v2f16.left r4:t0, r0, r1, r2, 0x00000001",
               {{0x7c000000u, 0x40004000u, 0x3c003c00u}, {0x80004000u, 0x45004200u, 0x3c003c00u}}) ==
        V{0x7c000000u, 0x80004b00u});
  CHECK(fma_op("*FMA_RSCALE.v2f16 r4:t0, r0, r1, r2, 0x00000001", {{0x7c000000u, 0x40004000u, 0x3c003c00u}}) ==
        V{0x7c004000u});
}

TEST_CASE("bifrost FMA_RSCALE .n: a zero factor makes the product zero, times inf or NaN too (Valhall's FMA_RSCALE_N)") {
  CHECK(fma_op("*FMA_RSCALE.f32.n r4:t0, r0, r1, r2, #0",
               {{0, 0x7fc00000u, fb(1)}, {0x7fa00000u, 0x80000000u, fb(2)}, {0x7fc00000u, fb(1), fb(1)}, {0, 0x7f800000u, 0}}) ==
        V{fb(1), fb(2), 0x7fc00000u, 0});
  CHECK(fma_op("*FMA_RSCALE.f32 r4:t0, r0, r1, r2, #0", {{0, 0x7fc00000u, fb(1)}}) == V{0x7fc00000u});
  CHECK(fma_op("*FMA_RSCALE.v2f16.n r4:t0, r0, r1, r2, 0x00000000", {{0x3c000000u, 0x7e007e00u, 0x3c003c00u}}) ==
        V{0x7e003c00u});
}

}  // namespace gpurc_test_bifrost_test_bifrost_ops
