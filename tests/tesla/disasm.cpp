// Disassembler tests. Expected strings are derived from envytools'
// envydis/g80.c (the row named in each comment gives operand order, names and
// bit positions) and easm/easm_print.c (how envydis prints: operands and names
// separated by one space, numbers as 0x%x, "(" sub-instructions ")", memory as
// space[$aN+off], post-increment as [$aN++off], discarded destination "#").
#include <doctest/doctest.h>

#include "frontend/tesla/encoding.h"

namespace gpurc_test_tesla_disasm {  // one namespace per file: unity builds (CMakeLists.txt)
using namespace gpurc::tesla;

static std::string dis(std::vector<uint32_t> w, const char* variant = "g200") {
  Target t;
  std::string err;
  REQUIRE(parse_target(variant, t, err));
  return format(decode(w.data(), w.size(), 0, t));
}

TEST_CASE("tesla disasm: long normal forms") {
  // tabl "1": T(lane) mov T(lsfu) b32 LLDST T(lsw); predicate 0xf and lane 0xf print nothing.
  CHECK(dis({0x10000809, 0x0403c780}) == "mov b32 $r2 $r4");
  // the same with word 1 = 0: predicate "never" and lane mask 0 are printed (tabp row 0, tablane row 0)
  CHECK(dis({0x10008009, 0x00000000}) == "(never) (lnone) mov b16 $r1l $r32l");
  // exit marker (word 1 bits 0..1 = 1) prints before the predicate (tabroot)
  CHECK(dis({0x10000809, 0x0403c781}) == "exit mov b32 $r2 $r4");
  CHECK(dis({0x10000809, 0x0403c782}) == "join mov b32 $r2 $r4");
  // predicate "e $c1" (word 1 bits 7..11 = 2, bits 12..13 = 1)
  CHECK(dis({0x10000809, 0x0403d100}) == "(e $c1) mov b32 $r2 $r4");
  // add b32 with $c0 output (bit 38) and c1[] source 3 (bit 24, c space in word 1 bits 22..25)
  // tabl "2 and 3": T(addop) b32 T(m2sat) MCDST LLDST T(lsw) T(lc3w) T(addcond)
  CHECK(dis({0x21000405, 0x0440c7c0}) == "add b32 $c0 $r1 $r2 c1[0xc]");
  // sub with o[] destination (word 1 bit 3) and sat (bit 59)
  CHECK(dis({0x20400405, 0x0c000788}) == "sub b32 sat o[0x4] $r2 $r0");
  // discard destination: o[] type with field 127
  CHECK(dis({0x204005fd, 0x04000788}) == "sub b32 # $r2 $r0");
  // mov from $sr: tabl "0": mov LDST SREG; sreg 0 = physid, 1 = clock, 2 unnamed
  CHECK(dis({0x00000005, 0x60000780}) == "mov $r1 $physid");
  CHECK(dis({0x00000005, 0x60004780}) == "mov $r1 $clock");
  CHECK(dis({0x00000005, 0x60008780}) == "mov $r1 $sr2");
  CHECK(dis({0x00000005, 0x6000c780}) == "mov $r1 $vstride");
  // $sr8 is named only on GT215 (d3d10_1)
  CHECK(dis({0x00000005, 0x60020780}, "g200") == "mov $r1 $sr8");
  CHECK(dis({0x00000005, 0x60020780}, "gt215") == "mov $r1 $sampleid");
}

TEST_CASE("tesla disasm: short and immediate forms") {
  // tabs: mov b32 SDST T(ssw)
  CHECK(dis({0x10008204}) == "mov b32 $r1 $r1");
  // tabs: add b32 with a c0[] source 2 (bit 23; offset field 16..20 scaled by 4)
  CHECK(dis({0x20818204}) == "add b32 $r1 $r1 c0[0x4]");
  // tabs: s[] source 1 (bit 24) in b32 mode (bits 13..14 = 3), $a1 (bits 26..27)
  CHECK(dis({0x2501e604}) == "add b32 $r1 b32 s[$a1+0xc] $r1");
  // tabs: post-increment (bit 25): signed 4-bit offset; a negative one prints
  // as envydis prints it, 64-bit two's complement hex
  CHECK(dis({0x2701fe04}) == "add b32 $r1 b32 s[$a1++0xfffffffffffffffc] $r1");
  // tabi: mov b32 LDST IMM, immediate split 16..21 / 34..59
  CHECK(dis({0x10008001, 0x00000003}) == "mov b32 $r0 0x0");
  CHECK(dis({0x103f8001, 0x00000003}) == "mov b32 $r0 0x3f");
  CHECK(dis({0x10008001, 0x0000000f}) == "mov b32 $r0 0xc0");
  CHECK(dis({0x10008001, 0x00000007}) == "mov b32 $r0 0x40");
  // tabi: and/or/xor/mov2 row selection by bits 8 and 15
  CHECK(dis({0xd0000101, 0x00000003}) == "or b32 $r0 $r0 0x0");
  // tabs: mad with s16 (bit 8), result also source 3
  CHECK(dis({0x60000304, 0x00000000}) == "add $r1 (mul s16 $r0h $r0l) $r1");
  CHECK(dis({0x60000304}) == "add $r1 (mul s16 $r0h $r0l) $r1");
  // tabs: brkpt and trap are short control (bits 0..1 = 2)
  CHECK(dis({0x90000002}) == "trap");
  // envydis on G80: no row matches (brkpt needs sm11), only the format bit 0
  // was read, so every other set bit is printed as unknown (core-dis.c)
  CHECK(dis({0xb0000002}, "g80") == "??? [unknown: b0000002] [unknown instruction]");
  CHECK(dis({0xb0000002}, "g84") == "brkpt");
}

TEST_CASE("tesla disasm: control and memory") {
  // tabc "bra": target word 0 bits 11..26 (words) -> byte address
  CHECK(dis({0x10000803, 0x00000780}) == "bra 0x4");
  CHECK(dis({0x10004003, 0x00000780}) == "bra 0x20");
  // high target bits in word 1 14..19
  CHECK(dis({0x10000003, 0x00004780}) == "bra 0x40000");
  CHECK(dis({0x30000003, 0x00000100}) == "(e $c0) ret");
  // call ignores its predicate field (IGNPRED); lim = word 1 bit 6
  CHECK(dis({0x20001003, 0x00000000}) == "call 0x8");
  CHECK(dis({0x20001003, 0x00000040}) == "call lim 0x8");
  CHECK(dis({0xa0001003, 0x00000000}) == "joinat 0x8");
  CHECK(dis({0x40001003, 0x00000000}) == "breakaddr 0x8");
  CHECK(dis({0x50000003, 0x00000780}) == "break");
  // bar: barrier id 21..24, all threads (word 1 bit 14)
  CHECK(dis({0x80000003, 0x00004000}) == "bar 0x0 all");
  CHECK(dis({0x86000003, 0x00004000}) == "bar inc wait 0x0 all");
  // ld g[]: T(ldstm) (word 1 21..23 = 6: b32) T(ldsto) GLOBAL (g index 16..19, address $r at 9)
  CHECK(dis({0xd0010205, 0x80c00780}) == "ld b32 $r1 g1[$r1]");
  CHECK(dis({0xd0000201, 0xa0800780}) == "st b64 g0[$r1] $r0d");
  // ld c[]: tabfcon b32 (word 1 bits 14..15 = 3), offset field 9..22 scaled by 4
  CHECK(dis({0x10000805, 0x2440c780}) == "ld $r1 b32 c1[0x10]");
  // local: l[$a1+0x10] (offset unscaled)
  CHECK(dis({0xd4002005, 0x40c00780}) == "ld b32 $r1 l[$a1+0x10]");
  // atom cas: tabatomm "cas" T(rab) T(ldsto) GLOBAL2 T(ldsts2) T(mldsts3)
  CHECK(dis({0xd0800205, 0xe0c10788}, "g200") == "cas b32 $r1 g1[$r1] $r0 $r4");
  CHECK(dis({0xd0800205, 0xe0c10788}, "g80").rfind("???", 0) == 0);
}

TEST_CASE("tesla disasm: float, cvt, double") {
  // tabl "b": add T(o0sat) T(af32r) f32 MCDST LLDST T(m1neg) T(lsw) T(m2neg) T(lc3w)
  CHECK(dis({0xb0000205, 0x0c008780}) == "add rn f32 $r1 neg $r1 neg $r2");
  CHECK(dis({0xb0030205, 0x20008780}) == "add sat rz f32 $r1 $r1 $r2");
  // cvt rni s32 f32 (0x8c004000a0000000 | regs)
  CHECK(dis({0xa0000205, 0x8c004780}) == "cvt rni s32 $r1 f32 $r1");
  CHECK(dis({0xa0000205, 0x8c044780}) == "cvt rpi s32 $r1 f32 $r1");
  // cvt f32 from s32: 0x44000000a0000000 with cvtiisrc 5 (s32)
  CHECK(dis({0xa0000205, 0x44014780}) == "cvt rn f32 $r1 s32 $r1");
  // double add: only on g200 (fp64)
  CHECK(dis({0xe0000409, 0x60000780}, "g200") == "add rn f64 $r2d $r2d $r0d");
  CHECK(dis({0xe0000409, 0x60000780}, "g84").rfind("???", 0) == 0);
  // presin/preex2 split on word 1 bit 14
  CHECK(dis({0xb0000205, 0xc0004780}) == "preex2 f32 $r1 $r1");
  CHECK(dis({0x90000205, 0x00000780}) == "rcp f32 $r1 $r1");
  CHECK(dis({0x90000205, 0xc8000780}) == "ex2 f32 sat $r1 $r1");
}

TEST_CASE("tesla decode errors") {
  Target t;
  uint32_t w[3] = {0x10008204, 0x10008009, 0x0403c780};
  Insn i = decode(w, 3, 1, t);
  CHECK(i.words == 2);
  CHECK(check(i, 1) == DecodeError::UnalignedLong);
  uint32_t pi0[2] = {0x23017e04, 0};  // s[] post-increment with $a0
  CHECK(check(decode(pi0, 1, 0, t), 0) == DecodeError::IllegalPostIncr);
  uint32_t bad[2] = {0x80000005, 0x00000780};  // interp in a compute program: no such row
  CHECK(check(decode(bad, 2, 0, t), 0) == DecodeError::IllegalOpcode);
  // halfword source read as b32 s[] -> ILLEGAL_MEMORY_SIZE (short mul u16 from s[] b32)
  uint32_t ms[1] = {0x41006204};
  CHECK(check(decode(ms, 1, 0, t), 0) == DecodeError::IllegalMemorySize);
  // s16 operand from a u16 s[] mode -> ILLEGAL_MEMORY_SIGN
  uint32_t sg[1] = {0x4100a204};
  CHECK(check(decode(sg, 1, 0, t), 0) == DecodeError::IllegalMemorySign);
}

// The program envytools' hwtest runs for its SFU checks (hwtest g80_sfu.c,
// sfu_prep_code and the op1/op2 words of the test_sfu_* cases): load a word
// through g[], one SFU op, store it back, exit. The checker selects the model
// by word 1 bits 29..31 (0 rcp, 2 rsqrt, 3 lg2, 4 sin, 5 cos, 6 ex2) and, for
// the 0xb opcode, presin/preex2 by word 1 bit 14; the checker's table is
// sfu_sincos(x, cos = (op2 >> 29) == 5).
TEST_CASE("tesla disasm: the words of envytools' hwtest SFU program") {
  CHECK(dis({0x30020001, 0xc4100780}) == "shl b32 $r0 $r0 0x2");
  CHECK(dis({0xd0000005, 0x80c00780}) == "ld b32 $r1 g0[$r0]");
  CHECK(dis({0x90000209, 0x00000780}) == "rcp f32 $r2 $r1");
  CHECK(dis({0x90000209, 0x40000780}) == "rsqrt f32 $r2 $r1");
  CHECK(dis({0x90000209, 0x60000780}) == "lg2 f32 $r2 $r1");
  CHECK(dis({0x90000209, 0x80000780}) == "sin f32 $r2 $r1");
  CHECK(dis({0x90000209, 0xa0000780}) == "cos f32 $r2 $r1");
  CHECK(dis({0x90000209, 0xc0000780}) == "ex2 f32 $r2 $r1");
  CHECK(dis({0xb0000209, 0xc0000780}) == "presin f32 $r2 $r1");
  CHECK(dis({0xb0000209, 0xc0004780}) == "preex2 f32 $r2 $r1");
  CHECK(dis({0xd0000009, 0xa0c00780}) == "st b32 g0[$r0] $r2");
  CHECK(dis({0xf0000001, 0xe0000781}) == "exit nop");
}

TEST_CASE("tesla disasm: envydis' notes for unread bits and cut-off instructions") {
  // tabl "a" cvt u32 <- u16 (LLDST, T(cvtiisrc) = u16 T(lsh)): word 0 bits
  // 16..22 and 25..27 and, with the predicate "always" (no COND), word 1 bits
  // 12..13 are read by no row: set ones print as "[unknown: w0 w1]" (core-dis.c)
  CHECK(dis({0xa0004c05, 0x04200780}) == "cvt u32 $r1 u16 u16 s[0xc]");  // ptxas, no stray bits
  CHECK(dis({0xa0014c05, 0x04203780}) == "cvt u32 $r1 u16 u16 s[0xc] [unknown: 00010000 00003000]");
  // Short form, one group: tabs mov b32 reads bit 0 (tabroot), 1, 15, 28..31
  // (row mask), 17 (ssfu), 2..7 (SDST), 24 (tabssw) and 9..14 (SSRC): not 16.
  CHECK(dis({0x10018204}) == "mov b32 $r1 $r1 [unknown: 00010000]");
  // A long instruction cut off by the end of the code: decoded with word 1
  // read as 0 (predicate "never", cvt u16 <- u16 register), bytes past the end
  // printed as "??", then "[incomplete]".
  CHECK(dis({0xa0004c05}) == "(never) cvt u16 $r0h u16 $r19l [incomplete]");
  CHECK(dis({0xa0ff4c05}) == "(never) cvt u16 $r0h u16 $r19l [unknown: 007f0000 ????????] [incomplete]");
  Target t;
  std::string err;
  REQUIRE(parse_target("g200", t, err));
  uint32_t cut = 0xa0004c05;
  Insn d = decode(&cut, 1, 0, t);
  CHECK(d.words == 1);  // runs as an illegal one-word instruction
  CHECK(check(d, 0) == DecodeError::IllegalOpcode);
  uint64_t bits;
  unsigned words;
  CHECK_FALSE(assemble_one(format(d), t, bits, words, err));
  CHECK(err.find("incomplete") != std::string::npos);
}

TEST_CASE("tesla disasm: negative post-increments print and assemble as envydis' 64-bit hex") {
  Target t;
  std::string err;
  REQUIRE(parse_target("g200", t, err));
  // Short s[] source with a 4-bit signed increment; long ld s[] with 16 bits.
  for (const char* text : {"add b32 $r1 b32 s[$a1++0xfffffffffffffffc] $r1",
                           "add b32 $r1 b32 s[$a1++0x4] $r1"}) {
    uint64_t bits;
    unsigned words;
    INFO(text);
    REQUIRE_MESSAGE(assemble_one(text, t, bits, words, err), err);
    std::vector<uint32_t> w = {uint32_t(bits)};
    if (words == 2) w.push_back(uint32_t(bits >> 32));
    CHECK(dis(w) == text);
  }
  // The signed spelling gpurc printed before is still read, as the same word.
  uint64_t bits = 0, bits2 = 0;
  unsigned words;
  REQUIRE(assemble_one("add b32 $r1 b32 s[$a1++-0x4] $r1", t, bits, words, err));
  REQUIRE(assemble_one("add b32 $r1 b32 s[$a1++0xfffffffffffffffc] $r1", t, bits2, words, err));
  CHECK(bits == bits2);
}

}  // namespace gpurc_test_tesla_disasm
