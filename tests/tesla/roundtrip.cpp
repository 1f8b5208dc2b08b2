// Assembler round trip over every row of the encoding tables: random
// instructions of each row (only the bits the decoder reads) are printed,
// assembled back, and must come back as identical words.
#include <doctest/doctest.h>

#include <cstdlib>

#include "frontend/tesla/encoding.h"

namespace gpurc_test_tesla_roundtrip {  // one namespace per file: unity builds (CMakeLists.txt)
using namespace gpurc::tesla;

static int iterations() { return std::getenv("GPURC_TEST_LIGHT") ? 8 : 40; }

// The bits where two encodings print the same envydis text, so that the
// assembler (like envyas) can produce only one of them: envydis' tables read
// these bits as row selectors even when the operand they select is absent
// (g80.c tablsw/tablsh/tablc2*/tablc3* masks 0x0020000001800000 for sources
// 1..3, the c[] post-increment bit 25 that compute programs print without
// "++"), and an o[] or discarded ("#") destination prints alike from its
// 16-bit and 32-bit forms (bit 58; o[] offsets are scaled by 2 or 4). The assembler takes
// the encoding compilers emit: the selectors of absent operands clear (as in
// ptxas output, e.g. the vec_add words below), the first row otherwise.
static bool ambiguous_only(uint64_t diff, const std::string& text) {
  const uint64_t selectors = (1ull << 23) | (1ull << 24) | (1ull << 25) | (1ull << 53);
  if (!(diff & ~selectors)) return true;
  const uint64_t odst = (1ull << 58) | 0x1fcull;
  bool wide_or_half = text.find(" o[") != std::string::npos || text.find(" # ") != std::string::npos;
  return wide_or_half && !(diff & ~(selectors | odst));
}

TEST_CASE("tesla assembler round trip over every table row, every variant") {
  for (const char* var : {"g80", "g84", "g200", "mcp77", "gt215", "g200:vp", "g200:gp", "g200:fp"}) {
    Target t;
    std::string err;
    REQUIRE(parse_target(var, t, err));
    std::mt19937_64 rng(1234);
    int rows = 0, reached = 0, checked = 0, identical = 0, with_unknown = 0;
    for (RowRef r : all_rows(t)) {
      ++rows;
      bool any = false;
      for (int i = 0; i < iterations(); ++i) {
        uint64_t bits;
        unsigned words;
        if (!random_insn(r, t, rng, bits, words)) break;
        any = true;
        uint32_t w[2] = {uint32_t(bits), uint32_t(bits >> 32)};
        Insn d = decode(w, words, 0, t);
        if (!d.valid) continue;  // e.g. predicate codes 0x14..0x1b print "???"
        // Every other instruction also gets random bits that no row reads:
        // envydis prints them as "[unknown: ...]" and the assembler keeps them.
        if (i & 1) {
          uint64_t width = words == 2 ? ~0ull : 0xffffffffull;
          bits |= rng() & rng() & ~d.used & width;
          w[0] = uint32_t(bits);
          w[1] = uint32_t(bits >> 32);
          d = decode(w, words, 0, t);
          if (bits & ~d.used & width) ++with_unknown;
        }
        std::string text = format(d);
        uint64_t back;
        unsigned bw;
        std::string e;
        bool ok = assemble_one(text, t, back, bw, e);
        if (ok && bw != words) ok = assemble_one("long " + text, t, back, bw, e);
        INFO(var, " ", row_describe(r), " text: ", text, " ", e);
        CHECK(ok);
        if (!ok) continue;
        CHECK(bw == words);
        uint32_t bwds[2] = {uint32_t(back), uint32_t(back >> 32)};
        std::string text2 = format(decode(bwds, bw, 0, t));
        CHECK(text2 == text);
        uint64_t again;
        unsigned aw;
        REQUIRE(assemble_one(bw == 2 ? "long " + text2 : text2, t, again, aw, e));
        CHECK(again == back);
        // Any other word must differ only where envydis' text cannot tell
        // (bits the row reads and ignores, IGN, are written as compilers do).
        INFO("words ", bits, " reassembled ", back);
        CHECK(ambiguous_only((back ^ bits) & ~d.ignored, text));
        if (back == bits) ++identical;
        ++checked;
      }
      if (any) ++reached;
    }
    MESSAGE(std::string(var) << ": " << checked << " instructions (" << with_unknown << " with [unknown] bits), "
                << identical << " assembled back to identical words, " << checked - identical
                << " to the other encoding of an ambiguous selector");
    INFO(var, " rows ", rows, " reached ", reached);
    CHECK(checked > rows);
    CHECK(with_unknown * 4 > checked);
    // Measured 85..92% per variant (the rest: the selectors above, drawn at random).
    CHECK(identical * 100 >= checked * 80);
    CHECK(reached * 10 >= rows * 9);
  }
}

// Real compiler output: ptxas (CUDA 2.x, sm_10) vec_add as published in the
// Geryon library's ucl_test.cu (public text cubin). Its disassembly must
// assemble back to the same words: ptxas pairs short instructions and uses
// the long form of an instruction before a long one at an odd word, which is
// what the assembler's layout (envyas' rule) reproduces.
TEST_CASE("tesla assembler: ptxas output round trips to identical words") {
  const std::vector<uint32_t> words = {
      0xa0004c05, 0x04200780, 0xa0004209, 0x04200780, 0x40020205, 0x00018780, 0xa0000001, 0x04000780,
      0x20000201, 0x04000780, 0x30020009, 0xc4100780, 0x2102e800, 0x2102ea0c, 0xd00e0005, 0x80c00780,
      0xd00e0601, 0x80c00780, 0xb0000204, 0x2102ec00, 0xd00e0005, 0xa0c00781};
  for (const char* var : {"g80", "g200"}) {
    Target t;
    std::string err;
    REQUIRE(parse_target(var, t, err));
    std::string text;
    size_t pos = 0;
    while (pos < words.size()) {
      Insn d = decode(words.data(), words.size(), pos, t);
      REQUIRE(d.valid);
      text += format(d) + "\n";
      pos += d.words;
    }
    INFO(text);
    // the short/long mix the layout has to reproduce
    CHECK(text.find("mul $r1 s24 $r1 $r2\n") != std::string::npos);
    std::vector<uint32_t> out;
    REQUIRE(assemble(text, t, out, err));
    CHECK(out == words);
  }
}

TEST_CASE("tesla assembler: programs, labels, errors") {
  Target t;
  std::vector<uint32_t> out;
  std::string err;
  REQUIRE(assemble("start: mov b32 $r2 $r4\n"
                   "  mov b32 $r3 $r3\n"
                   "  bra #start // loop\n"
                   "exit mov b32 $r0 $r0\n"
                   "long trap\n",
                   t, out, err));
  REQUIRE(out.size() == 8);
  CHECK(out[0] == 0x10008808);  // short mov: dst 2 (bits 2..7), src 4 (bits 9..14), b32 (bit 15)
  CHECK(format(decode(out.data(), out.size(), 2, t)) == "bra 0x0");
  CHECK(format(decode(out.data(), out.size(), 4, t)) == "exit mov b32 $r0 $r0");
  CHECK(out[6] == 0x90000003);
  CHECK_FALSE(assemble("mov b32 $r1 $r1\nmov b32 $r2 $r200\n", t, out, err));
  CHECK(err.find("line 2") != std::string::npos);
  // short then long: the long one would sit at an odd word, so the short one
  // takes its long form (envyas' layout); labels after it move with it
  REQUIRE(assemble("mov b32 $r1 $r1\nafter: exit mov b32 $r0 $r0\nbra #after\n", t, out, err));
  REQUIRE(out.size() == 6);
  CHECK((out[0] & 3) == 1);
  CHECK(format(decode(out.data(), out.size(), 0, t)) == "mov b32 $r1 $r1");
  CHECK(format(decode(out.data(), out.size(), 2, t)) == "exit mov b32 $r0 $r0");
  CHECK(format(decode(out.data(), out.size(), 4, t)) == "bra 0x8");
  // envyas' other comment forms and ';' between instructions (easm_lex.l,
  // easm_parse.y): the same program as one line
  std::vector<uint32_t> out2;
  REQUIRE(assemble("mov b32 $r1 $r1 /* a\ncomment */; after: exit mov b32 $r0 $r0 /+ nested /+ +/ +/; bra #after\n",
                   t, out2, err));
  CHECK(out2 == out);
  CHECK_FALSE(assemble("mov b32 $r1 $r1 /* open\n", t, out2, err));
  CHECK(err.find("comment") != std::string::npos);
  // ... unless it has no long form
  CHECK_FALSE(assemble("add sat f32 $r1 $r2 $r3\nexit mov b32 $r0 $r0\n", t, out, err));
  CHECK(err.find("UNALIGNED") != std::string::npos);
  // envydis' unknown-bits note (hand-derived: cvt u32 <- u16 reads neither
  // word 0 bit 16 nor the $c field of an always-true predicate, w1 bit 12)
  uint64_t bits;
  unsigned words;
  REQUIRE(assemble_one("cvt u32 $r0 u16 $r0l [unknown: 00010000 00001000]", t, bits, words, err));
  CHECK(words == 2);
  CHECK(bits == 0x04001780a0010001ull);
  uint32_t uw[2] = {0xa0010001, 0x04001780};
  CHECK(format(decode(uw, 2, 0, t)) == "cvt u32 $r0 u16 $r0l [unknown: 00010000 00001000]");
  // a bit some row reads is not unknown: no encoding prints like that
  CHECK_FALSE(assemble_one("cvt u32 $r0 u16 $r0l [unknown: 00000200 00000000]", t, bits, words, err));
  CHECK_FALSE(assemble_one("cvt u32 $r0 u16 $r0l [unknown: 0001000]", t, bits, words, err));
  CHECK_FALSE(assemble("bogus $r1\n", t, out, err));
  CHECK_FALSE(assemble("bra #nowhere\n", t, out, err));
}

}  // namespace gpurc_test_tesla_roundtrip
