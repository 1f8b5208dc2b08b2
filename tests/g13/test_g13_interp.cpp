// G13 reference interpreter: per-instruction semantics with partially active
// SIMD-groups (inactive lanes must keep their values), the r0l exec-mask
// stack, calls, cross-lane ops and memory. Programs are written in applegpu
// syntax and assembled, so each test reads like the machine code it runs.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>

#include "frontend/g13/formats.h"
#include "frontend/g13/fp.h"
#include "frontend/g13/interp.h"
#include "frontend/g13/translate.h"

namespace gpurc_test_g13_test_g13_interp {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using g13::SimdGroup;
using g13::StepResult;

namespace {

// Flat bounds-checked memory: one buffer per space at a base address.
struct TestMemory final : ir::GuestMemory {
  struct Buf { uint64_t base; std::vector<uint8_t> bytes; };
  std::map<int, Buf> spaces;
  bool access(Kind kind, ir::Space space, uint64_t addr, unsigned bytes, uint64_t* value, ir::AtomicOp,
              const uint64_t*) override {
    auto it = spaces.find(int(space));
    if (it == spaces.end()) return false;
    Buf& b = it->second;
    if (addr < b.base || addr - b.base + bytes > b.bytes.size()) return false;
    uint8_t* p = b.bytes.data() + (addr - b.base);
    if (kind == Kind::Load) {
      *value = 0;
      std::memcpy(value, p, bytes);
    } else if (kind == Kind::Store) {
      std::memcpy(p, value, bytes);
    } else {
      return false;
    }
    return true;
  }
  uint8_t* translate(ir::Space, uint64_t, uint64_t) override { return nullptr; }
};

std::vector<uint8_t> asm_ok(const std::string& text) {
  std::vector<uint8_t> out;
  std::string err;
  const bool ok = g13::assemble(text, out, err);
  REQUIRE_MESSAGE(ok, err);
  return out;
}

// Runs `text` (a `stop` is appended) and returns the final status.
StepResult run(SimdGroup& sg, const std::string& text, ir::GuestMemory* mem = nullptr) {
  g13::Interpreter it(asm_ok(text + "\nstop"), mem);
  sg.pc = 0;
  return it.run(sg, 100000);
}

uint32_t f32(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// Lanes 0-31 hold distinct garbage so writes to inactive lanes are visible.
SimdGroup fresh(uint32_t launched = 0xFFFFFFFFu) {
  SimdGroup sg;
  for (unsigned h = 2; h < 256; ++h)
    for (unsigned l = 0; l < 32; ++l) sg.regs[h][l] = uint16_t(0xA000 + h * 7 + l);
  sg.launched = launched;
  sg.recompute_exec();
  return sg;
}

// Deactivates lanes by giving them a non-zero r0l nesting counter.
void deactivate(SimdGroup& sg, uint32_t lanes) {
  for (unsigned l = 0; l < 32; ++l)
    if (lanes >> l & 1) sg.regs[0][l] = 1;
  sg.recompute_exec();
}

}  // namespace

TEST_CASE("g13 interp: iadd/isub, saturation, shifts, 64-bit, inactive lanes untouched") {
  SimdGroup sg = fresh();
  deactivate(sg, 0xF0F0F0F0u);
  for (unsigned l = 0; l < 32; ++l) {
    sg.set_r32(1, l, 0xFFFFFFF0u + l);
    sg.set_r32(2, l, 100);
    sg.regs[20][l] = 0x7FF0;  // r10l
  }
  const uint32_t r3_before = sg.r32(3, 4);
  REQUIRE(run(sg, "iadd r3, r1, r2\n"
                  "iadd.sat r4, r1, r2\n"          // unsigned clamp to 0xFFFFFFFF
                  "iadd.sat r10h, r10l.sx, 100\n"  // signed 16-bit clamp to 0x7FFF
                  "isub r5, r2, 3, lsl 2\n"        // 100 - 12
                  "iadd r6_r7, r1, r2\n"           // 64-bit: carry into r7
                  "imadd r8_r9, r1, r2, 0").kind == StepResult::Kind::Done);
  for (unsigned l : {0u, 1u, 8u, 11u}) {  // active lanes with r1 = 0xFFFFFFF0 + l
    CHECK(sg.r32(3, l) == uint32_t(0xFFFFFFF0u + l + 100));
    CHECK(sg.r32(4, l) == 0xFFFFFFFFu);
    CHECK(sg.regs[21][l] == 0x7FFF);
    CHECK(sg.r32(5, l) == 88u);
    const uint64_t sum = uint64_t(0xFFFFFFF0u + l) + 100;
    CHECK(sg.r32(6, l) == uint32_t(sum));
    CHECK(sg.r32(7, l) == uint32_t(sum >> 32));
    const uint64_t prod = uint64_t(0xFFFFFFF0u + l) * 100;
    CHECK(sg.r32(8, l) == uint32_t(prod));
    CHECK(sg.r32(9, l) == uint32_t(prod >> 32));
  }
  CHECK(sg.r32(3, 4) == r3_before);  // lane 4 inactive
  CHECK(sg.r32(4, 31) != 0xFFFFFFFFu);
}

TEST_CASE("g13 interp: signed saturation and the no-saturation cases") {
  SimdGroup sg = fresh();
  for (unsigned l = 0; l < 32; ++l) {
    sg.set_r32(1, l, 0x80000000u);
    sg.set_r32(2, l, 1);
  }
  REQUIRE(run(sg, "isub.sat r3, r1.sx, r2\n"          // INT_MIN - 1 clamps to INT_MIN
                  "isub.sat r4, r1, r2, lsl 1\n"      // shift != 0: no saturation
                  "imadd.sat r5, r1.sx, 2, r2").kind == StepResult::Kind::Done);
  CHECK(sg.r32(3, 0) == 0x80000000u);
  CHECK(sg.r32(4, 0) == 0x7FFFFFFEu);
  CHECK(sg.r32(5, 0) == 0x80000000u);  // -2^32 + 1 clamps to INT_MIN
}

TEST_CASE("g13 interp: shift and bitfield group") {
  SimdGroup sg = fresh();
  for (unsigned l = 0; l < 32; ++l) {
    sg.set_r32(1, l, 0x12345678u);
    sg.set_r32(2, l, 0x9ABCDEF0u);
    sg.set_r32(3, l, 8);
    sg.set_r32(4, l, 0x80000000u);
  }
  REQUIRE(run(sg, "bfi r10, 0, r1, r3\n"              // shl 8
                  "bfeil r11, 0, r1, r3, mask 0xFF\n" // (r1 >> 8) & 0xFF
                  "extr r12, r1, r2, r3\n"            // funnel shift of r2:r1 by 8
                  "asr r13, r4, 4\n"
                  "asrh r14, r4, 36\n"
                  "shlhi r15, 0, r1, r3\n"            // high 32 bits of r1 << 8
                  "shrhi r16, 0, r1, r3\n"            // r1 << 24 (high half of (r1<<32)>>8)
                  "bfi r17, r2, r1, 4, mask 0xF").kind == StepResult::Kind::Done);
  CHECK(sg.r32(10, 3) == 0x34567800u);
  CHECK(sg.r32(11, 3) == 0x56u);
  CHECK(sg.r32(12, 3) == 0xF0123456u);
  CHECK(sg.r32(13, 3) == 0xF8000000u);
  CHECK(sg.r32(14, 3) == 0xF8000000u);
  CHECK(sg.r32(15, 3) == 0x12u);
  CHECK(sg.r32(16, 3) == 0x78000000u);
  CHECK(sg.r32(17, 3) == 0x9ABCDE80u);
}

TEST_CASE("g13 interp: bitop, all 16 truth tables, and the 0011/1100 reading") {
  const uint32_t a = 0xF0F0CCAAu, b = 0xFF00AA55u;
  for (unsigned tt = 0; tt < 16; ++tt) {
    SimdGroup sg = fresh();
    for (unsigned l = 0; l < 32; ++l) {
      sg.set_r32(1, l, a);
      sg.set_r32(2, l, b);
    }
    std::string s;
    for (int i = 0; i < 4; ++i) s += (tt >> i & 1) ? '1' : '0';
    REQUIRE(run(sg, "bitop " + s + ", r3, r1, r2").kind == StepResult::Kind::Done);
    uint32_t expect = 0;
    if (tt == 0xC) expect = ~a;      // "0011": Mesa's not_a
    else if (tt == 0x3) expect = a;  // "1100": Mesa's mov_a (applegpu's model agrees)
    else {
      if (tt & 1) expect |= ~a & ~b;
      if (tt & 2) expect |= a & ~b;
      if (tt & 4) expect |= ~a & b;
      if (tt & 8) expect |= a & b;
    }
    CHECK_MESSAGE(sg.r32(3, 9) == expect, "tt " << s);
  }
}

TEST_CASE("g13 interp: bitrev, popcount, ffs, intl") {
  SimdGroup sg = fresh();
  for (unsigned l = 0; l < 32; ++l) {
    sg.set_r32(1, l, 1u << l);
    sg.set_r32(2, l, 0);
    sg.regs[6][l] = 0xFFFF;  // r3l
    sg.regs[7][l] = 0x0000;  // r3h
  }
  REQUIRE(run(sg, "bitrev r4, r1\npopcount r5, r1\nffs r6, r1\nffs r7, r2\nintl r8, r3l, r3h").kind ==
          StepResult::Kind::Done);
  for (unsigned l = 0; l < 32; ++l) {
    CHECK(sg.r32(4, l) == (1u << (31 - l)));
    CHECK(sg.r32(5, l) == 1u);
    CHECK(sg.r32(6, l) == l);
    CHECK(sg.r32(7, l) == 0xFFFFFFFFu);
    CHECK(sg.r32(8, l) == 0x55555555u);
  }
}

TEST_CASE("g13 interp: float rules (FTZ on f32 only, double rounding, saturate, NaN)") {
  SimdGroup sg = fresh();
  for (unsigned l = 0; l < 32; ++l) {
    sg.set_r32(1, l, 0x00000001u);       // f32 subnormal: flushed on input
    sg.set_r32(2, l, f32(1.0f));
    sg.set_r32(3, l, f32(1.0f + 0x1p-11f));
    sg.set_r32(4, l, f32(0x1p-30f));
    sg.regs[10][l] = 0x0001;             // r5l: f16 subnormal, kept
    sg.set_r32(6, l, f32(0x1p-70f));     // square underflows f32: flushed on output
    sg.set_r32(7, l, f32(INFINITY));
    sg.set_r32(8, l, f32(-3.0f));
  }
  REQUIRE(run(sg, "fadd32 r10, r1, r1\n"
                  "fmadd32 r11l, r3, r2, r4\n"   // to f32 (ties away the 2^-30), then f16: tie -> even
                  "fadd16 r11h, r5l, r5l\n"      // f16 subnormals survive
                  "fmul32 r12, r6, r6\n"
                  "fmul32 r13, r7, 0.0\n"        // inf * 0 -> default NaN
                  "fadd32.sat r14, r8, 0.5\n"    // -2.5 -> +0
                  "fmul32.sat r15, r2, 2.0\n"    // 2 -> 1
                  "fmul32.sat r16, r13, 1.0\n"   // NaN -> +0
                  "fmul32 r17, r8, 0.0").kind == StepResult::Kind::Done);
  CHECK(sg.r32(10, 0) == 0u);
  CHECK(sg.regs[22][0] == 0x3C00);  // single rounding to f16 would give 0x3C01
  CHECK(sg.regs[23][0] == 0x0002);
  CHECK(sg.r32(12, 0) == 0u);
  CHECK(sg.r32(13, 0) == g13::fp::kNaN32);
  CHECK(sg.r32(14, 0) == 0u);
  CHECK(sg.r32(15, 0) == f32(1.0f));
  CHECK(sg.r32(16, 0) == 0u);
  CHECK(sg.r32(17, 0) == 0u);  // fmul adds +0.0: -3 * 0 = +0
}

TEST_CASE("g13 interp: float unary ops") {
  SimdGroup sg = fresh();
  for (unsigned l = 0; l < 32; ++l) {
    sg.set_r32(1, l, f32(-2.5f));
    sg.set_r32(2, l, f32(4.0f));
    sg.set_r32(3, l, f32(float(l)));  // dfdx/dfdy: lane index as the value
  }
  REQUIRE(run(sg, "floor r10, r1\nceil r11, r1\ntrunc r12, r1\nrint r13, r1\nrcp r14, r2\nrsqrt r15, r2\n"
                  "log2 r16, r2\nexp2 r17, r2\ndfdx r18, r3\ndfdy r19, r3\nrsqrt_special r20, r2\n"
                  "sin_pt_1 r21, r2\nrcp r22l, r2").kind == StepResult::Kind::Done);
  CHECK(sg.r32(10, 5) == f32(-3.0f));
  CHECK(sg.r32(11, 5) == f32(-2.0f));
  CHECK(sg.r32(12, 5) == f32(-2.0f));
  CHECK(sg.r32(13, 5) == f32(-2.0f));
  CHECK(sg.r32(14, 5) == f32(0.25f));
  CHECK(sg.r32(15, 5) == f32(0.5f));
  CHECK(sg.r32(16, 5) == f32(2.0f));
  CHECK(sg.r32(17, 5) == f32(16.0f));
  CHECK(sg.r32(18, 6) == f32(1.0f));
  CHECK(sg.r32(19, 5) == f32(2.0f));
  CHECK(sg.r32(20, 5) == f32(0.5f));
  CHECK(sg.r32(21, 5) == f32(0.0f));  // 4 quarter turns reduce to 0
  CHECK(sg.regs[44][5] == 0x3400);    // 0.25 as f16
  // sin_pt_1 and sin_pt_2 multiply to sin over [0, 4) quarter turns.
  for (double x : {0.0, 0.3, 1.0, 1.7, 2.5, 3.9}) {
    const double y = g13::fp::sin_pt_1(x);
    CHECK(std::fabs(y * g13::fp::sin_pt_2(y) - std::sin(x * M_PI / 2)) < 1e-12);
  }
}

TEST_CASE("g13 interp: compares, cmpsel, ltn/gtn NaN behaviour") {
  SimdGroup sg = fresh();
  for (unsigned l = 0; l < 32; ++l) {
    sg.set_r32(1, l, l);
    sg.set_r32(2, l, 0xFFFFFFFFu);
    sg.set_r32(3, l, f32(std::nanf("")));
    sg.set_r32(4, l, f32(2.0f));
  }
  REQUIRE(run(sg, "icmpsel ult, r10, r1, 16, r1, 99\n"
                  "icmpsel slt, r11, r2, r1, 1, 0\n"      // -1 < l signed
                  "fcmpsel ltn, r12, r3, r4, r3, r4\n"    // fmin(NaN, 2) = 2
                  "fcmpsel ltn, r13, r4, r3, r4, r3\n"    // fmin(2, NaN) = 2
                  "fcmpsel gtn, r14, r4, r3, r4, r3\n"    // fmax(2, NaN) = 2
                  "fcmpsel lt, r15, r3, r4, 1, 0\n"       // IEEE: NaN < 2 false
                  "fcmpsel lt, r16, r3, r4, 0, 1").kind == StepResult::Kind::Done);
  CHECK(sg.r32(10, 3) == 3u);
  CHECK(sg.r32(10, 20) == 99u);
  CHECK(sg.r32(11, 0) == 1u);
  CHECK(sg.r32(12, 0) == f32(2.0f));
  CHECK(sg.r32(13, 0) == f32(2.0f));
  CHECK(sg.r32(14, 0) == f32(2.0f));
  CHECK(sg.r32(15, 0) == 0u);
  CHECK(sg.r32(16, 0) == 1u);
}

TEST_CASE("g13 interp: if/else/pop_exec on the r0l stack with a partial SIMD-group") {
  SimdGroup sg = fresh(0x0000FFFFu);  // 16 launched threads
  for (unsigned l = 0; l < 32; ++l) {
    sg.regs[0][l] = 0;
    sg.set_r32(1, l, l);
    sg.set_r32(2, l, 0);
  }
  sg.recompute_exec();
  REQUIRE(run(sg, "if_icmp r0l, ult, r1, 4, 1\n"
                  "mov_imm r2, 1, 0b0\n"
                  "else_icmp r0l, ult, r1, 10, 1\n"   // else-if
                  "mov_imm r2, 2, 0b0\n"
                  "pop_exec r0l, 1\n"
                  "iadd r3, r2, 100").kind == StepResult::Kind::Done);
  for (unsigned l = 0; l < 16; ++l) {
    CHECK(sg.r32(2, l) == (l < 4 ? 1u : l < 10 ? 2u : 0u));
    CHECK(sg.r32(3, l) == sg.r32(2, l) + 100);
    CHECK(sg.regs[0][l] == 0);
  }
  CHECK(sg.r32(2, 20) == 0u);       // never launched: untouched
  CHECK(sg.r32(3, 20) != 100u);
  CHECK(sg.exec == 0x0000FFFFu);
}

TEST_CASE("g13 interp: while loop with break through r0l and jmp_exec_any") {
  SimdGroup sg = fresh();
  for (unsigned l = 0; l < 32; ++l) {
    sg.regs[0][l] = 0;
    sg.set_r32(1, l, l % 5);  // iterations per lane
    sg.set_r32(2, l, 0);
  }
  sg.recompute_exec();
  // push one level; loop: count++ while count < r1; pop.
  REQUIRE(run(sg, "push_exec r0l, 1\n"
                  "while_icmp r0l, ult, r2, r1, 1\n"
                  "loop:\n"
                  "iadd r2, r2, 1\n"
                  "while_icmp r0l, ult, r2, r1, 1\n"
                  "jmp_exec_any loop\n"
                  "pop_exec r0l, 1").kind == StepResult::Kind::Done);
  for (unsigned l = 0; l < 32; ++l) CHECK(sg.r32(2, l) == l % 5);
  CHECK(sg.exec == 0xFFFFFFFFu);

  // Break: a thread leaves the loop by writing the depth into r0l, then pop_exec 0.
  SimdGroup b = fresh();
  for (unsigned l = 0; l < 32; ++l) {
    b.regs[0][l] = 0;
    b.set_r32(1, l, l);
  }
  b.recompute_exec();
  REQUIRE(run(b, "if_icmp r0l, ult, r1, 8, 1\n"
                 "mov_imm r0l, 1\n"      // active threads (l < 8) break out
                 "pop_exec r0l, 0\n"
                 "mov_imm r5, 7, 0b0\n"  // nobody runs this
                 "pop_exec r0l, 1").kind == StepResult::Kind::Done);
  for (unsigned l = 0; l < 32; ++l) CHECK(b.r32(5, l) != 7u);
  CHECK(b.exec == 0xFFFFFFFFu);
}

TEST_CASE("g13 interp: jmp_exec_none skips, call/ret through r1") {
  SimdGroup sg = fresh();
  for (unsigned l = 0; l < 32; ++l) {
    sg.regs[0][l] = 0;
    sg.set_r32(4, l, 0);
  }
  sg.recompute_exec();
  REQUIRE(run(sg, "call fn\n"
                  "iadd r4, r4, 10\n"
                  "if_icmp r0l, ueq, r4, 0, 1\n"   // nobody: r4 == 11
                  "jmp_exec_none skip\n"
                  "mov_imm r4, 999, 0b0\n"
                  "skip:\n"
                  "pop_exec r0l, 1\n"
                  "stop\n"
                  "fn:\n"
                  "iadd r4, r4, 1\n"
                  "ret r1").kind == StepResult::Kind::Done);
  for (unsigned l = 0; l < 32; ++l) CHECK(sg.r32(4, l) == 11u);
  CHECK(sg.r32(1, 0) == 6u);  // link: address after the 6-byte call
}

TEST_CASE("g13 interp: ballots, shuffles, reductions over active lanes") {
  SimdGroup sg = fresh();
  deactivate(sg, 0x80000001u);  // lanes 0 and 31 inactive
  for (unsigned l = 0; l < 32; ++l) sg.set_r32(1, l, l);
  REQUIRE(run(sg, "icmp_ballot r2, ult, r1, 8\n"
                  "icmp_quad_ballot r3, ugte, r1, 2\n"
                  "simd_shuffle r4, r1, 0\n"        // reads inactive lane 0
                  "simd_shuffle_xor r5, r1, 1\n"
                  "simd_shuffle_down r6, r1, 3\n"
                  "quad_shuffle r7, r1, 3\n"
                  "simd_iadd r8, r1\n"
                  "simd_prefix_iadd r9, r1\n"
                  "quad_max.u r10, r1\n"
                  "simd_min.s r11, r1").kind == StepResult::Kind::Done);
  CHECK(sg.r32(2, 5) == 0xFEu);  // lanes 1..7
  CHECK((sg.r32(3, 5) & 15) == 0xFu);
  CHECK((sg.r32(3, 2) & 15) == 0xCu);  // lane 0 inactive, lane 1 value 1 < 2
  CHECK(sg.r32(4, 9) == 0u);
  CHECK(sg.r32(5, 9) == 8u);
  CHECK(sg.r32(6, 9) == 12u);
  CHECK(sg.r32(6, 30) == 30u);  // 33 is out of range: own value
  CHECK(sg.r32(7, 9) == 11u);
  CHECK(sg.r32(8, 9) == 465u);  // 1 + ... + 30
  CHECK(sg.r32(9, 1) == 0u);    // exclusive scan
  CHECK(sg.r32(9, 4) == 1u + 2 + 3);
  CHECK(sg.r32(10, 29) == 30u);  // quad 28..31 without lane 31
  CHECK(sg.r32(11, 9) == 1u);
  CHECK(sg.r32(8, 0) != 465u);   // inactive
}

TEST_CASE("g13 interp: device memory through uniform/register bases, bounds fault") {
  TestMemory mem;
  mem.spaces[int(ir::Space::Global)] = {0x10000, std::vector<uint8_t>(1024)};
  for (unsigned i = 0; i < 256; ++i) mem.spaces[int(ir::Space::Global)].bytes[i] = uint8_t(i);
  SimdGroup sg = fresh();
  sg.set_u64(2, 0x10000);
  for (unsigned l = 0; l < 32; ++l) {
    sg.set_r32(8, l, l);
    sg.set_r32(10, l, 0x10000);
    sg.set_r32(11, l, 0);
    sg.set_r32(20, l, 0xC0DE0000u + l);
  }
  REQUIRE(run(sg, "device_load 0, i32, xy, r0_r1, u2_u3, r8, unsigned, lsl 1\n"
                  "wait 0\n"
                  "device_load 0, i8, x, r2l, r10_r11, 5, signed\n"
                  "device_load 0, u8norm, x, r3, u2_u3, 255, signed\n"
                  "device_store 0, i32, x, r20, u2_u3, r8, unsigned, 0\n"
                  "device_load 0, i16, x, r4h, u2_u3, 300, signed", &mem)
              .kind == StepResult::Kind::Done);
  auto word = [&](uint64_t off) {
    uint32_t v;
    std::memcpy(&v, mem.spaces[int(ir::Space::Global)].bytes.data() + off, 4);
    return v;
  };
  // lane 3: offset (3 << 1) elements of 4 bytes = byte 24.
  CHECK(sg.r32(0, 3) == 0x1B1A1918u);
  CHECK(sg.r32(1, 3) == 0x1F1E1D1Cu);
  CHECK(sg.regs[4][3] == 5);
  CHECK(sg.r32(3, 3) == f32(1.0f));
  CHECK(word(4 * 7) == 0xC0DE0007u);
  CHECK(sg.regs[9][3] == 0);  // byte 600..601 zero

  SimdGroup f = fresh();
  f.set_u64(2, 0x10000);
  const StepResult r = run(f, "device_load 0, i32, x, r0, u2_u3, 300, signed", &mem);
  CHECK(r.kind == StepResult::Kind::Fault);
  CHECK(r.fault == ir::FaultKind::OutOfBounds);
  CHECK(r.fault_addr == 0x10000 + 1200);
  CHECK(r.message.find("device_load") != std::string::npos);
}

// The sRGB levels of applegpu's measured table (srgb.py: entry v = level / 4095
// as f32), as integers: the hardware's curve that memfmt::srgb_level models.
const unsigned kSrgbLevels[256] = {
    0, 1, 2, 4, 5, 6, 7, 9, 10, 11, 12, 14, 15, 16, 18, 20,
    21, 23, 25, 27, 29, 31, 33, 35, 37, 40, 42, 45, 48, 50, 53, 56,
    59, 62, 66, 69, 72, 76, 79, 83, 87, 91, 95, 99, 103, 107, 112, 116,
    121, 126, 131, 136, 141, 146, 151, 156, 162, 168, 173, 179, 185, 191, 197, 204,
    210, 216, 223, 230, 237, 244, 251, 258, 265, 273, 280, 288, 296, 304, 312, 320,
    329, 337, 346, 354, 363, 372, 381, 390, 400, 409, 419, 428, 438, 448, 458, 469,
    479, 490, 500, 511, 522, 533, 544, 555, 567, 578, 590, 602, 614, 626, 639, 651,
    664, 676, 689, 702, 715, 728, 742, 755, 769, 783, 797, 811, 825, 840, 854, 869,
    884, 899, 914, 929, 945, 960, 976, 992, 1008, 1024, 1041, 1057, 1074, 1091, 1108, 1125,
    1142, 1159, 1177, 1195, 1213, 1231, 1249, 1267, 1286, 1304, 1323, 1342, 1361, 1381, 1400, 1420,
    1440, 1459, 1480, 1500, 1520, 1541, 1562, 1582, 1603, 1625, 1646, 1668, 1689, 1711, 1733, 1755,
    1778, 1800, 1823, 1846, 1869, 1892, 1916, 1939, 1963, 1987, 2011, 2035, 2059, 2084, 2109, 2133,
    2159, 2184, 2209, 2235, 2260, 2286, 2312, 2339, 2365, 2392, 2419, 2446, 2473, 2500, 2527, 2555,
    2583, 2611, 2639, 2668, 2696, 2725, 2754, 2783, 2812, 2841, 2871, 2901, 2931, 2961, 2991, 3022,
    3052, 3083, 3114, 3146, 3177, 3209, 3240, 3272, 3304, 3337, 3369, 3402, 3435, 3468, 3501, 3535,
    3568, 3602, 3636, 3670, 3705, 3739, 3774, 3809, 3844, 3879, 3915, 3950, 3986, 4022, 4059, 4095,
};

TEST_CASE("g13 interp: the sRGB curve is applegpu's measured 12-bit table") {
  for (unsigned v = 0; v < 256; ++v) CHECK_MESSAGE(g13::memfmt::srgb_level(v) == kSrgbLevels[v], "byte " << v);
}

TEST_CASE("g13 interp: packed device_load formats (rgb10a2, rg11b10f, rgb9e5, srgba8) with edge values") {
  TestMemory mem;
  mem.spaces[int(ir::Space::Global)] = {0x10000, std::vector<uint8_t>(64)};
  auto put = [&](unsigned off, uint32_t w) { std::memcpy(mem.spaces[int(ir::Space::Global)].bytes.data() + off, &w, 4); };
  // Words worked out by hand from the bit layouts (formats.h):
  put(0, 0xA00003FFu);   // rgb10a2: r 1023, g 0, b 512, a 2
  put(4, 0xF87E03C0u);   // rg11b10f: r 0x3C0 (1.0), g 0x7C0 (+inf), b 0x3E1 (NaN)
  put(8, 0xF7FDF801u);   // rg11b10f: r 0x001 (2^-20, subnormal), g 0x7BF (max), b 0x3DF (max)
  put(12, 0xFC0003FFu);  // rgb9e5: e 31, r 511, g 1, b 256
  put(16, 0x000C0001u);  // rgb9e5: e 0, r 1, g 0, b 3
  put(20, 0x80FF0100u);  // srgba8 bytes 0, 1, 255, 128
  SimdGroup sg = fresh();
  deactivate(sg, 0x0000F000u);
  sg.set_u64(2, 0x10001);  // aligned down to the word
  sg.set_u64(4, 0x10000);
  for (unsigned l = 0; l < 32; ++l) sg.set_r32(60, l, 3);
  REQUIRE(run(sg, "device_load 0, rgb10a2, xyzw, r4_r5_r6_r7, u2_u3, 0, signed\n"
                  "device_load 0, rgb10a2, x, r8l, u2_u3, 0, signed\n"  // mask ignored: four halves
                  "device_load 0, rg11b10f, xyz, r12_r13_r14, u2_u3, 1, signed, lsl 2\n"  // shift ignored
                  "device_load 0, rg11b10f, xyz, r16l_r16h_r17l, u2_u3, 1, signed\n"
                  "device_load 0, rg11b10f.rtz, xyz, r18_r19_r20, u2_u3, 2, signed\n"
                  "device_load 0, rg11b10f, xyz, r22l_r22h_r23l, u2_u3, 2, signed\n"
                  "device_load 0, rgb9e5, xyz, r24_r25_r26, u2_u3, r60, unsigned\n"
                  "device_load 0, rgb9e5, xyz, r28l_r28h_r29l, u2_u3, 4, signed\n"
                  "device_load 0, srgba8, xyzw, r32_r33_r34_r35, u4_u5, 20, signed\n"
                  "device_load 0, srgba8, xyzw, r36l_r36h_r37l_r37h, u4_u5, 20, signed\n"
                  "device_load 0, srgba8, yw, r38_r39, u4_u5, 20, signed\n"
                  "device_load 0, srgba8, x, r40, u4_u5, 23, signed",
              &mem)
              .kind == StepResult::Kind::Done);
  for (unsigned l : {0u, 3u, 31u}) {
    // rgb10a2: 1, 0, 512/1023, 2/3 (f32 RNE; f16 0x3801 = 0.50049, 0x3955 = 0.66650).
    CHECK(sg.r32(4, l) == 0x3F800000u);
    CHECK(sg.r32(5, l) == 0);
    CHECK(sg.r32(6, l) == 0x3F002008u);
    CHECK(sg.r32(7, l) == 0x3F2AAAABu);
    CHECK(sg.regs[16][l] == 0x3C00);
    CHECK(sg.regs[17][l] == 0);
    CHECK(sg.regs[18][l] == 0x3801);
    CHECK(sg.regs[19][l] == 0x3955);
    // rg11b10f: 1.0, +inf, default NaN; f16 the same.
    CHECK(sg.r32(12, l) == 0x3F800000u);
    CHECK(sg.r32(13, l) == 0x7F800000u);
    CHECK(sg.r32(14, l) == 0x7FC00000u);
    CHECK(sg.regs[32][l] == 0x3C00);
    CHECK(sg.regs[33][l] == 0x7C00);
    CHECK(sg.regs[34][l] == 0x7E00);
    // 2^-20, (1 + 63/64) 2^15 = 65024, (1 + 31/32) 2^15 = 64512: exact in f32 and f16.
    CHECK(sg.r32(18, l) == 0x35800000u);
    CHECK(sg.r32(19, l) == 0x477E0000u);
    CHECK(sg.r32(20, l) == 0x477C0000u);
    CHECK(sg.regs[44][l] == 0x0010);
    CHECK(sg.regs[45][l] == 0x7BF0);
    CHECK(sg.regs[46][l] == 0x7BE0);
    // rgb9e5 (word 3 via r60): 511 * 2^7 = 65408, 2^7, 2^15; word 4: 2^-24, 0, 3 * 2^-24 (f16 subnormals).
    CHECK(sg.r32(24, l) == 0x477F8000u);
    CHECK(sg.r32(25, l) == 0x43000000u);
    CHECK(sg.r32(26, l) == 0x47000000u);
    CHECK(sg.regs[56][l] == 0x0001);
    CHECK(sg.regs[57][l] == 0);
    CHECK(sg.regs[58][l] == 0x0003);
    // srgba8 0, 1, 255 through the curve (levels 0, 1, 4095), alpha 128/255.
    CHECK(sg.r32(32, l) == 0);
    CHECK(sg.r32(33, l) == 0x39800801u);  // 1/4095
    CHECK(sg.r32(34, l) == 0x3F800000u);
    CHECK(sg.r32(35, l) == 0x3F008081u);
    CHECK(sg.regs[72][l] == 0);
    CHECK(sg.regs[73][l] == 0x0C00);      // 1/4095 -> f16
    CHECK(sg.regs[74][l] == 0x3C00);
    CHECK(sg.regs[75][l] == 0x3804);
    // Mask yw: byte 1 through the curve, byte 3 as alpha, into r38, r39.
    CHECK(sg.r32(38, l) == 0x39800801u);
    CHECK(sg.r32(39, l) == 0x3F008081u);
    // Component x of byte 128: the curve (level 884), not alpha.
    CHECK(sg.r32(40, l) == 0x3E5D0DD1u);
  }
  // Registers past the count stay: rgb10a2 wrote r8l..r9h only; inactive lanes are untouched.
  CHECK(sg.regs[20][0] == uint16_t(0xA000 + 20 * 7 + 0));
  CHECK(sg.regs[21][12] == uint16_t(0xA000 + 21 * 7 + 12));
  CHECK(sg.r32(4, 12) == (uint32_t(0xA000 + 8 * 7 + 12) | uint32_t(0xA000 + 9 * 7 + 12) << 16));

  // Stores of packed formats and packed threadgroup accesses have no public model: clear errors.
  for (const char* text : {"device_store 0, rgb10a2, xyzw, r4_r5_r6_r7, u2_u3, 0, signed, 0",
                           "device_store 0, srgba8, x, r4, u2_u3, 0, signed, 0",
                           "threadgroup_load rgb9e5, xyz, r4_r5_r6, 0, 0"}) {
    SimdGroup e = fresh();
    e.set_u64(2, 0x10000);
    const StepResult r = run(e, text, &mem);
    CHECK(r.kind == StepResult::Kind::Error);
    CHECK_MESSAGE(r.message.find("packed format") != std::string::npos, r.message);
  }
}

TEST_CASE("g13 interp: threadgroup memory, barrier status, uniform_store, stack") {
  TestMemory mem;
  mem.spaces[int(ir::Space::Shared)] = {0, std::vector<uint8_t>(256)};
  SimdGroup sg = fresh();
  for (unsigned l = 0; l < 32; ++l) {
    sg.set_r32(3, l, 0x1000 + l);
    sg.regs[4][l] = uint16_t(l);          // r2l: element index
    sg.regs[10][l] = uint16_t(31 - l);    // r5l
  }
  g13::StackMemory stacks(&mem, 64);  // 64 zeroed stack bytes per thread, the rest goes to mem
  g13::Interpreter it(asm_ok("threadgroup_store i32, x, r3, 0, r2l\n"
                             "threadgroup_barrier\n"
                             "threadgroup_load i32, x, r6, 0, r5l\n"
                             "uniform_store 2, i16, xy, 0, r6l_r6h, 8\n"
                             "stack_store i32, 1, 0, x, 4, r6, 20, 0\n"
                             "stack_load r7l_r7h, i16, 1, 0, xy, 4, 20, 0\n"
                             "stop"),
                     &stacks);
  StepResult r = it.run(sg);
  REQUIRE(r.kind == StepResult::Kind::Barrier);
  r = it.run(sg);
  REQUIRE_MESSAGE(r.kind == StepResult::Kind::Done, r.message);
  for (unsigned l = 0; l < 32; ++l) {
    CHECK(sg.r32(6, l) == 0x1000 + (31 - l));
    CHECK(sg.r32(7, l) == 0x1000 + (31 - l));
  }
  CHECK(sg.u32(4) == 0x1000 + 31);  // from the first active thread
}

TEST_CASE("g13 interp: convert, get_sr, errors name the instruction") {
  SimdGroup sg = fresh();
  deactivate(sg, 0x1u);
  for (unsigned l = 0; l < 32; ++l) {
    sg.set_r32(1, l, f32(-7.75f));
    sg.set_r32(2, l, 0xFFFFFFFFu);
    sg.set_r32(3, l, f32(3.5e9f));
  }
  REQUIRE(run(sg, "convert f_to_s32, r10, r1, rtz\n"
                  "convert f_to_s32, r11, r1, rte\n"
                  "convert u32_to_f, r12, r2, rte\n"
                  "convert u32_to_f, r13, r2, rtz\n"
                  "convert f_to_u16, r14l, r1, rtz\n"   // negative clamps to 0
                  "convert f_to_s32, r15, r3, rtz\n"    // clamps to INT_MAX
                  "get_sr r16, sr52 (thread_index_in_simdgroup)\n"
                  "get_sr r17, sr58 (active_thread_index_in_simdgroup)").kind == StepResult::Kind::Done);
  CHECK(sg.r32(10, 3) == uint32_t(-7));
  CHECK(sg.r32(11, 3) == uint32_t(-8));
  CHECK(sg.r32(12, 3) == f32(4294967296.0f));
  CHECK(sg.r32(13, 3) == f32(4294967040.0f));
  CHECK(sg.regs[28][3] == 0);
  CHECK(sg.r32(15, 3) == 0x7FFFFFFFu);
  CHECK(sg.r32(16, 3) == 3u);
  CHECK(sg.r32(17, 3) == 2u);  // lane 0 inactive

  SimdGroup e = fresh();
  const StepResult r = run(e, "mov_imm r0l, 0\ntexture_sample 0, 0b1100, 0b0, none, xyzw, 0b00, r4_r5_r6_r7, None, "
                              "ts0, ss1, tex_2d, r4_r5, lod_min, u10l");
  CHECK(r.kind == StepResult::Kind::Error);
  CHECK(r.message.find("texture_sample") != std::string::npos);
  CHECK(r.message.find("pc 0x4") != std::string::npos);
  const StepResult t = run(e, "trap");
  CHECK(t.kind == StepResult::Kind::Fault);
  CHECK(t.fault == ir::FaultKind::Trap);
  const StepResult s = run(e, "get_sr r1, sr80 (thread_position_in_grid.x)");
  CHECK(s.kind == StepResult::Kind::Error);
}

TEST_CASE("g13 interp: the compute preamble example end to end") {
  std::ifstream f(std::string(GPURC_TEST_DATA) + "/examples/g13/compute_preamble.s");
  REQUIRE(f.good());
  const std::string src((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  TestMemory mem;
  mem.spaces[int(ir::Space::Global)] = {0x20000, std::vector<uint8_t>(64)};
  const uint32_t dims[2] = {64, 16};
  std::memcpy(mem.spaces[int(ir::Space::Global)].bytes.data(), dims, 8);
  SimdGroup sg = fresh(0x1u);  // a single thread, as a preamble runs
  sg.set_u64(2, 0x20000);
  g13::Interpreter it(asm_ok(src), &mem);
  const StepResult r = it.run(sg);
  REQUIRE_MESSAGE(r.kind == StepResult::Kind::Done, r.message);
  CHECK(sg.u32(4) == f32(1.0f / 32.0f));
  CHECK(sg.u32(5) == f32(1.0f / 8.0f));
}

}  // namespace gpurc_test_g13_test_g13_interp
