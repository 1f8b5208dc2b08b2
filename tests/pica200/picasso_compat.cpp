// Byte-for-byte compatibility with picasso 2.7.1: every program of
// picasso_vectors.inc (our own test shaders and the examples, with the bytes
// picasso writes for them) assembles to the same .shbin; what picasso rejects
// is rejected at the same line; gpurc's disassembly of picasso's .shbin
// reassembles to the same file.
#include <doctest/doctest.h>

#include <array>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "frontend/pica200/assembler.h"
#include "frontend/pica200/disasm.h"
#include "frontend/pica200/shbin.h"

namespace gpurc_test_pica200_picasso_compat {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc::pica;

namespace {

#include "tests/pica200/picasso_vectors.inc"

std::vector<uint8_t> from_hex(const char* h) {
  std::vector<uint8_t> b;
  for (size_t i = 0; h[i] && h[i + 1]; i += 2) {
    unsigned v = 0;
    std::sscanf(h + i, "%2x", &v);
    b.push_back(uint8_t(v));
  }
  return b;
}

std::vector<AsmSource> sources_of(const PicassoVector& v) {
  std::vector<AsmSource> s;
  for (const PicassoSource& p : v.sources) s.push_back({p.name, p.text});
  return s;
}


}  // namespace

TEST_CASE("pica200 picasso compatibility: identical .shbin for every program picasso accepts") {
  int identical = 0, programs = 0;
  for (const PicassoVector& v : picasso_vectors()) {
    if (!v.shbin_hex) continue;
    ++programs;
    INFO(v.name);
    Shbin s;
    std::string err;
    std::vector<std::string> warnings;
    AsmOptions opt;
    opt.auto_nop = !v.no_nop;
    REQUIRE_MESSAGE(assemble(sources_of(v), opt, s, err, &warnings), err);
    const std::vector<uint8_t> want = from_hex(v.shbin_hex);
    const std::vector<uint8_t> got = write_shbin(s);
    CHECK(got == want);
    identical += got == want;
    if (v.no_nop) {  // picasso -n: one warning per NOP it would have inserted
      int nops = 0;
      for (const std::string& w : warnings) nops += w.find("a padding NOP is required here") != std::string::npos;
      CHECK(nops == v.warnings);
      CHECK(nops > 0);
    }
  }
  CHECK(programs >= 29);
  CHECK(identical == programs);
  MESSAGE(identical, " of ", programs, " programs identical to picasso's output");
}

TEST_CASE("pica200 picasso compatibility: what picasso rejects is rejected at the same line") {
  int rejected = 0;
  for (const PicassoVector& v : picasso_vectors()) {
    if (v.shbin_hex) continue;
    INFO(v.name, ": picasso says ", v.picasso_error);
    Shbin s;
    std::string err;
    CHECK_FALSE(assemble(sources_of(v), AsmOptions{}, s, err));
    const std::string line = std::string(v.picasso_error).substr(0, std::string(v.picasso_error).find(':'));
    CHECK(err.find(v.sources[0].name + std::string(":") + line + ": ") == 0);
    rejected += !err.empty();
  }
  CHECK(rejected >= 29);  // every source of reject/, loose.vsh (code outside .proc) included
}

TEST_CASE("pica200 picasso compatibility: disassembly of picasso's .shbin reassembles to the same file") {
  for (const PicassoVector& v : picasso_vectors()) {
    if (!v.shbin_hex) continue;
    INFO(v.name);
    const std::vector<uint8_t> bytes = from_hex(v.shbin_hex);
    Shbin parsed, again;
    std::string err, text;
    REQUIRE_MESSAGE(parse_shbin(bytes.data(), bytes.size(), parsed, err), err);
    REQUIRE_MESSAGE(disasm_shbin(parsed, {}, text, err), err);
    INFO(text);
    REQUIRE_MESSAGE(assemble(text, again, err), err);
    CHECK(again.code == parsed.code);
    CHECK(again.descs == parsed.descs);
    CHECK(write_shbin(again) == bytes);
  }
}

TEST_CASE("pica200 picasso compatibility: uniform ids, DVLP and DVLE layout facts") {
  Shbin s;
  std::string err;
  REQUIRE(assemble(".fvec a[2], b\n.ivec n\n.bool f\n.in pos v3\n.out - position\n.proc main\n  mov o0, a[1]\n  end\n.end\n",
                   s, err));
  REQUIRE(s.dvles.size() == 1);
  const Dvle& d = s.dvles[0];
  REQUIRE(d.uniforms.size() == 5);
  // libctru's DVLE_GetUniformRegister subtracts 0x10: c0 is stored as 0x10.
  CHECK(d.uniforms[0].name == "pos");
  CHECK(d.uniforms[0].start == 0x03);
  CHECK(d.uniforms[1].start == 0x10);
  CHECK(d.uniforms[1].end == 0x11);
  CHECK(d.uniforms[2].start == 0x12);
  CHECK(d.uniforms[3].start == 0x70);  // i0
  CHECK(d.uniforms[4].start == 0x78);  // b0
  CHECK(d.input_mask == 0x8);          // from .in only
  CHECK(d.labels.empty());
  const std::vector<uint8_t> b = write_shbin(s);
  auto u32 = [&](size_t o) { return uint32_t(b[o]) | uint32_t(b[o + 1]) << 8 | uint32_t(b[o + 2]) << 16 | uint32_t(b[o + 3]) << 24; };
  const size_t dvlp = 12;
  CHECK(u32(dvlp + 0x18) == 0x28 + 4 * s.code.size() + 8 * s.descs.size());  // symbol table offset
  CHECK(u32(dvlp + 0x1C) == 0);
  CHECK(u32(dvlp + 0x28 + 4 * s.code.size() + 4) == 0);  // descriptor entry's second word
}

TEST_CASE("pica200 picasso compatibility: the exact form and explicit flow control (extensions) round-trip") {
  // Words picasso never writes: disassembled with '!' and reassembled exactly.
  const std::vector<uint32_t> descs = {0x0006C36F, 0x0006C360};
  const std::vector<uint32_t> words = {
      (0x1Au << 26) | (0x10u << 21) | (0x03u << 14) | (0x14u << 7),  // sgei r0, v3, r4 (picasso: sge)
      (0x13u << 26) | (0x10u << 21) | (1u << 19) | (0x11u << 12),    // mov r0, r1[a0.x]
      (0x00u << 26) | (0x10u << 21) | (0x01u << 12) | (0x02u << 7),  // add r0, v1, v2
      (0x13u << 26) | (0x10u << 21) | (0x0Fu << 12),                 // mov r0, v15
      (0x13u << 26) | (0x10u << 21) | (0x11u << 12) | 1,             // mov r0.none
      (0x23u << 26) | (2u << 22) | (1u << 25),                       // breakc cmp.x, refy 0
      (0x2Bu << 26) | (3u << 24),                                    // setemit 3
      (0x22u << 26)};
  std::string text, err;
  REQUIRE(disasm_words(words, &descs, {}, text, err));
  INFO(text);
  CHECK(text.find("sgei! r0, v3, r4") != std::string::npos);
  CHECK(text.find("mov! r0, r1[a0.x]") != std::string::npos);
  CHECK(text.find("add! r0, v1, v2") != std::string::npos);
  CHECK(text.find("mov! r0.none, r1") != std::string::npos);
  CHECK(text.find("breakc! cmp.x") != std::string::npos);
  CHECK(text.find("setemit! 3") != std::string::npos);
  Shbin s;
  REQUIRE_MESSAGE(assemble(text, s, err), err);
  REQUIRE(s.code.size() == words.size());
  for (size_t i = 0; i < words.size(); ++i) {
    Instr a = *decode(words[i], uint32_t(i)), b = *decode(s.code[i], uint32_t(i));
    CHECK(a.op == b.op);
    CHECK((words[i] & ~0x7Fu) == (s.code[i] & ~0x7Fu));  // all but the descriptor index
  }
  // The same text without '!' is what picasso would refuse.
  CHECK_FALSE(assemble(".proc main\n  mov r0, r1[a0.x]\n  end\n.end\n", s, err));
  CHECK_FALSE(assemble(".proc main\n  mova r0\n  end\n.end\n", s, err));
  CHECK(err.find("mova needs a destination") != std::string::npos);
}

TEST_CASE("pica200 picasso compatibility: several sources share one DVLP (.file in one text)") {
  const std::string text =
      ".file \"a.vsh\"\n.fvec m[4]\n.out p position\n.proc main\n  dp4 p.x, m[0], v0\n  call lib\n  end\n.end\n"
      ".file \"b.vsh\"\n.fvec other\n.fvec m[4]\n.out p position\n.proc main2\n  mov p, m[2]\n  end\n.end\n"
      ".entry main2\n.proc lib\n  mov r0, other\n.end\n";
  Shbin s;
  std::string err;
  REQUIRE_MESSAGE(assemble(text, s, err), err);
  REQUIRE(s.dvles.size() == 2);
  // m is shared: c0-c3 in both; `other` comes after it.
  CHECK(s.dvles[1].uniforms[0].name == "m");
  CHECK(s.dvles[1].uniforms[0].start == 0x10);
  CHECK(s.dvles[1].uniforms[1].name == "other");
  CHECK(s.dvles[1].uniforms[1].start == 0x14);
  CHECK(s.dvles[1].main_offset == 3);
  // Errors name the file.
  CHECK_FALSE(assemble(".file \"x.vsh\"\n.proc main\n  frob\n.end\n", s, err));
  CHECK(err.find("x.vsh:2: invalid instruction: frob") == 0);
}

TEST_CASE("pica200 picasso compatibility: instructions outside .proc are rejected unless .loose_code allows them") {
  Shbin s;
  std::string err;
  // picasso: "instruction outside block" at the line of the instruction.
  CHECK_FALSE(assemble({{"loose.vsh", ".fvec u\n\nmov r0, u\nend\n"}}, AsmOptions{}, s, err));
  CHECK(err.find("loose.vsh:3: instruction outside a .proc block: mov") == 0);
  CHECK(err.find(".loose_code") != std::string::npos);
  CHECK_FALSE(assemble({{"after.vsh", ".proc main\n  end\n.end\n  mov r0, r1\n"}}, AsmOptions{}, s, err));
  CHECK(err.find("after.vsh:4: instruction outside a .proc block") == 0);
  // The extension: the DVLE spans the code when there is no entry procedure.
  REQUIRE_MESSAGE(assemble(".loose_code\nmov r0, r1\nend\n", s, err), err);
  REQUIRE(s.code.size() == 2);
  REQUIRE(s.dvles.size() == 1);
  CHECK(s.dvles[0].main_offset == 0);
  CHECK(s.dvles[0].endmain_offset == 2);
  // It holds for its DVLE only: `.dvle` starts a new source's state.
  CHECK_FALSE(assemble(".loose_code\nmov r0, r1\n.dvle\nend\n", s, err));
  CHECK(err.find("line 4: instruction outside a .proc block") != std::string::npos);
  // The disassembler writes it, so a listing of raw words reassembles.
  std::string text;
  REQUIRE(disasm_words({0x4C000000u | (0x10u << 21) | (0x11u << 12), 0x88000000u}, nullptr, {}, text, err));
  CHECK(text.find(".loose_code\n") == 0);
  REQUIRE_MESSAGE(assemble(text, s, err), err);
  CHECK(s.code.size() == 2);
}

TEST_CASE("pica200 picasso compatibility: float expressions are read as picasso reads them, with a warning") {
  Shbin s;
  std::string err;
  std::vector<std::string> warnings;
  REQUIRE_MESSAGE(assemble({{"f.vsh", ".constf k(1.0/128.0, 3.0*2.0, .5, abc)\n.proc main\n  mov r0, k\n  end\n.end\n"}},
                           AsmOptions{}, s, err, &warnings),
                  err);
  REQUIRE(s.dvles.size() == 1);
  REQUIRE(s.dvles[0].constants.size() == 1);
  // float24 words of 1.0, 3.0, 0.5 and 0.0 (the longest numeric prefix; none for abc).
  const std::array<uint32_t, 4> want = {0x3F0000u, 0x408000u, 0x3E0000u, 0x000000u};
  CHECK(s.dvles[0].constants[0].value == want);
  REQUIRE(warnings.size() == 3);
  CHECK(warnings[0].find("f.vsh:1:") == 0);
  CHECK(warnings[0].find("only '1.0' of '1.0/128.0' is read") != std::string::npos);
  CHECK(warnings[1].find("only '3.0' of '3.0*2.0' is read") != std::string::npos);
  CHECK(warnings[2].find("'abc' is not a number") != std::string::npos);
}

TEST_CASE("pica200 picasso compatibility: .gsh fixed cN cStart count (the 3-operand form) and the merge flag") {
  const PicassoVector* v = nullptr;
  for (const PicassoVector& p : picasso_vectors())
    if (std::string(p.name) == "gsh_fixed3.gsh") v = &p;
  REQUIRE(v);
  Shbin s;
  std::string err;
  REQUIRE_MESSAGE(assemble(sources_of(*v), AsmOptions{}, s, err), err);
  REQUIRE(s.dvles.size() == 1);
  const Dvle& d = s.dvles[0];
  CHECK(d.is_geometry == 1);
  CHECK(d.merge_outmaps == 1);     // `.out - dummy o4` in a `.gsh MODE` shader
  CHECK(d.gs_mode == 2);           // DVLE byte 0x14: fixed (particle is the same mode)
  CHECK(d.gs_float_start == 8);    // DVLE byte 0x15: cStart, the fixed vertex array
  CHECK(d.gs_vertex_count == 3);
  REQUIRE(d.uniforms.size() == 1);
  CHECK(d.uniforms[0].start == 0x10 + 24);  // cN: this DVLE's first uniform register
  CHECK(write_shbin(s) == from_hex(v->shbin_hex));
}

}  // namespace gpurc_test_pica200_picasso_compat
