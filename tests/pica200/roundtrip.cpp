#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <unistd.h>

#include "frontend/pica200/assembler.h"
#include "frontend/pica200/disasm.h"
#include "frontend/pica200/encoding.h"
#include "frontend/pica200/interp.h"
#include "recompiler/cli.h"
#include "recompiler/isa.h"

namespace gpurc_test_pica200_roundtrip {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc::pica;

namespace {

bool light() { return std::getenv("GPURC_TEST_LIGHT") != nullptr; }

// A random word whose don't-care and unused fields are zero (what an
// assembler writes), so text round trips must reproduce it exactly.
uint32_t canonical_random(std::mt19937_64& rng, uint32_t code_size) {
  Op op = Op(rng() % size_t(Op::Count));
  Instr in = *decode(random_word(op, rng), 0);
  in.target = uint16_t(in.target % (code_size + 1));
  switch (op) {
    case Op::CALL: in.condop = in.refx = in.refy = 0; break;
    case Op::BREAKC: in.target = 0; in.num = 0; break;
    case Op::JMPC: in.num = 0; break;
    case Op::LOOP: in.uniform &= 3; in.num = 0; break;
    case Op::JMPU: in.num &= 1; break;
    default: break;
  }
  if (in.condop == 2) in.refy = 0;
  if (in.condop == 3) in.refx = 0;
  return encode(in);
}

Shbin must_assemble(const std::string& text) {
  Shbin s;
  std::string err;
  bool ok = assemble(text, s, err);
  INFO(err);
  INFO(text);
  REQUIRE(ok);
  return s;
}

std::string must_disasm(const Shbin& s) {
  std::string out, err;
  bool ok = disasm_shbin(s, {}, out, err);
  INFO(err);
  REQUIRE(ok);
  return out;
}

}  // namespace

const char* kExample = R"(; picasso-style vertex shader
.fvec projection[4], modelView[4]
.constf myconst(0.0, 1.0, -1.0, 0.5)
.constfa table[]
.constfa (1.0, 2.0, 3.0, 4.0)
.constfa (5.0, 6.0, 7.0, 8.0)
.end
.consti loopParams(3, 0, 1, 0)
.bool useLight
.alias ones myconst.yyyy
.alias inpos v0
.out outpos position
.out outclr color
.out outtc texcoord0.xy
.setb b3 true

.proc main
    mov r0.xyz, inpos
    mov r0.w, ones
    dp4 r1.x, modelView[0], r0
    dp4 r1.y, modelView[1], r0
    dp4 r1.z, modelView[2], r0
    dp4 r1.w, modelView[3], r0
    dp4 outpos.x, projection[0], r1
    dp4 outpos.y, projection[1], r1
    dp4 outpos.z, projection[2], r1
    dp4 outpos.w, projection[3], r1
    mov r2, myconst.xxxx
    for loopParams
        add r2, table[lcnt], r2
    .end
    ifu useLight
        call shade
    .else
        mov outclr, ones
    .end
    cmp r2, ge, lt, v1
    ifc cmp.x && !cmp.y
        mad r3, v1, c5, -r2.wzyx
    .end
    jmpc !cmp.x, done
    mova a0.x, v2
    mov outtc, c0[a0.x+2].zw
done:
    end
.end

.proc shade
    dp3 r4, c7, v1
    max r4, myconst.x, r4
    mul outclr, r4, v1.xyz
    sge r5, v1, c8
    rcp r6, v2.x
.end
)";

TEST_CASE("pica200 assembler: picasso source to shbin") {
  Shbin s = must_assemble(kExample);
  REQUIRE(s.dvles.size() == 1);
  const Dvle& d = s.dvles[0];
  CHECK(d.main_offset == 0);
  CHECK(d.outputs.size() == 3);
  CHECK(d.outputs[2].mask == 0x3);  // texcoord0.xy: bit 0 = x, bit 1 = y
  CHECK(d.uniforms.size() == 3);
  CHECK(d.uniforms[0].name == "projection");
  CHECK(d.uniforms[0].start == 0x10);  // c0 as the file numbers it (libctru subtracts 0x10)
  CHECK(d.uniforms[0].end == 0x13);
  // The structured blocks encode as the hardware expects.
  Instr loop = *decode(s.code[11], 11);
  CHECK(loop.op == Op::LOOP);
  CHECK(loop.target == 12);  // last instruction of the body
  Instr ifu = *decode(s.code[13], 13);
  CHECK(ifu.op == Op::IFU);
  CHECK(s.code[15] == 0x84000000u);  // picasso's padding NOP: a block must not end on a CALL
  CHECK(ifu.target == 16);  // else part starts after "call shade" and the NOP
  CHECK(ifu.num == 1);
  // Runs: the shader computes a position through two matrices.
  Program p = program_of(s);
  Uniforms u;
  load_constants(d, u);
  for (int i = 0; i < 8; ++i) u.f[size_t(i)] = {0, 0, 0, 0};
  for (int i = 0; i < 4; ++i) u.f[size_t(i)][size_t(i)] = 2.0f;      // projection = 2 I
  for (int i = 0; i < 4; ++i) u.f[size_t(4 + i)][size_t(i)] = 1.0f;  // modelView = I
  VertexState st;
  st.v[0] = {1, 2, 3, 0};
  Interpreter it(p, u);
  RunResult r = it.run(d.main_offset, st);
  INFO(r.fault);
  REQUIRE(r.ok);
  CHECK(st.o[0] == Vec4{2, 4, 6, 2});
  // Constants are allocated from the top: myconst = c95, table = c93..c94. The
  // loop reads table[aL] for aL = 0..3: c93.x + c94.x + c95.x + (c96 -> 1.0).
  CHECK(st.r[2][0] == 1.0f + 5.0f + 0.0f + 1.0f);
}

TEST_CASE("pica200 round trip: assembled shbin -> disasm -> asm gives identical words and descriptors") {
  Shbin s1 = must_assemble(kExample);
  std::string text = must_disasm(s1);
  Shbin s2 = must_assemble(text);
  CHECK(s2.code == s1.code);
  CHECK(s2.descs == s1.descs);
  REQUIRE(s2.dvles.size() == 1);
  CHECK(s2.dvles[0].main_offset == s1.dvles[0].main_offset);
  CHECK(s2.dvles[0].endmain_offset == s1.dvles[0].endmain_offset);
  CHECK(s2.dvles[0].constants.size() == s1.dvles[0].constants.size());
  for (size_t i = 0; i < s1.dvles[0].constants.size(); ++i)
    CHECK(s2.dvles[0].constants[i].value == s1.dvles[0].constants[i].value);
  CHECK(s2.dvles[0].outputs.size() == s1.dvles[0].outputs.size());
  CHECK(s2.dvles[0].uniforms.size() == s1.dvles[0].uniforms.size());
  // And through the binary container.
  Shbin s3;
  std::vector<uint8_t> bytes = write_shbin(s1);
  std::string err;
  REQUIRE(parse_shbin(bytes.data(), bytes.size(), s3, err));
  CHECK(s3.code == s1.code);
  CHECK(s3.descs == s1.descs);
  CHECK(s3.dvles[0].labels.size() == s1.dvles[0].labels.size());
  CHECK(must_disasm(s3) == text);
}

TEST_CASE("pica200 round trip: several DVLEs and a geometry shader") {
  const char* src =
      ".entry vmain\n.out - position o0\n.setf c90(1.0, 2.0, 3.0, 4.0)\n"
      ".dvle\n.entry gmain\n.gsh variable c4 3\n.out - position o0\n.out - color o1.xyz\n.seti i1(1, 2, 3, 4)\n"
      ".proc vmain\n  mov o0, v0\n  end\n.end\n"
      ".proc gmain\n  mov o0, v0\n  setemit 0, prim\n  emit\n  end\n.end\n";
  Shbin s1 = must_assemble(src);
  REQUIRE(s1.dvles.size() == 2);
  CHECK(s1.dvles[1].is_geometry == 1);
  CHECK(s1.dvles[1].gs_mode == 1);
  CHECK(s1.dvles[1].gs_float_start == 0);  // byte 0x15 is the fixed mode's array start only
  CHECK(s1.dvles[1].gs_fully_defined == 3);
  CHECK(s1.dvles[1].main_offset == 2);
  CHECK(s1.dvles[1].endmain_offset == 6);
  std::vector<uint8_t> bytes = write_shbin(s1);
  Shbin parsed;
  std::string err;
  REQUIRE(parse_shbin(bytes.data(), bytes.size(), parsed, err));
  Shbin s2 = must_assemble(must_disasm(parsed));
  CHECK(s2.code == s1.code);
  CHECK(s2.descs == s1.descs);
  REQUIRE(s2.dvles.size() == 2);
  for (int k = 0; k < 2; ++k) {
    CHECK(s2.dvles[size_t(k)].main_offset == s1.dvles[size_t(k)].main_offset);
    CHECK(s2.dvles[size_t(k)].endmain_offset == s1.dvles[size_t(k)].endmain_offset);
    CHECK(s2.dvles[size_t(k)].is_geometry == s1.dvles[size_t(k)].is_geometry);
    CHECK(s2.dvles[size_t(k)].gs_mode == s1.dvles[size_t(k)].gs_mode);
    CHECK(s2.dvles[size_t(k)].outputs.size() == s1.dvles[size_t(k)].outputs.size());
    CHECK(s2.dvles[size_t(k)].constants.size() == s1.dvles[size_t(k)].constants.size());
  }
  CHECK(s2.dvles[1].outputs[1].mask == 0x7);
}

TEST_CASE("pica200 round trip: random raw words (descriptors as desc[N])") {
  std::mt19937_64 rng(1234);
  int programs = light() ? 50 : 500;
  for (int p = 0; p < programs; ++p) {
    uint32_t n = 1 + uint32_t(rng() % 40);
    std::vector<uint32_t> words;
    for (uint32_t i = 0; i < n; ++i) words.push_back(canonical_random(rng, n));
    std::string text, err;
    REQUIRE(disasm_words(words, nullptr, {}, text, err));
    Shbin s = must_assemble(text);
    CHECK(s.code == words);
    CHECK(s.descs.empty());
    std::string raw;
    REQUIRE(disasm_words(words, nullptr, ListingOptions{true}, raw, err));
    // The raw listing is instructions only: code outside .proc needs the extension.
    CHECK(must_assemble(".loose_code\n" + raw).code == words);
  }
}

TEST_CASE("pica200 round trip: random programs with swizzles (asm -> disasm -> asm is a fixed point)") {
  std::mt19937_64 rng(99);
  int programs = light() ? 50 : 400;
  for (int p = 0; p < programs; ++p) {
    uint32_t n = 1 + uint32_t(rng() % 24);
    std::vector<uint32_t> words, descs;
    for (uint32_t i = 0; i < n; ++i) words.push_back(canonical_random(rng, n));
    for (int i = 0; i < 128; ++i) descs.push_back(uint32_t(rng()) & 0x7FFFFFFF);
    std::string text, err;
    REQUIRE(disasm_words(words, &descs, {}, text, err));
    Shbin s1 = must_assemble(text);
    std::string text2 = must_disasm(s1);
    Shbin s2 = must_assemble(text2);
    INFO(text2);
    CHECK(s2.code == s1.code);
    CHECK(s2.descs == s1.descs);
    // The reassembled program reads the same operands as the original words.
    for (uint32_t i = 0; i < n; ++i) {
      Instr a = *decode(words[i], i), c = *decode(s1.code[i], i);
      CHECK(a.op == c.op);
      if (num_sources(a.op)) {
        uint32_t used = desc_used_bits(a.op, descs[a.desc]);
        CHECK((descs[a.desc] & used) == (s1.descs[c.desc] & used));
      }
    }
  }
}

TEST_CASE("pica200 assembler: errors name the line") {
  auto err_of = [](const std::string& t) {
    Shbin s;
    std::string err;
    CHECK(!assemble(t, s, err));
    return err;
  };
  CHECK(err_of(".loose_code\nnop\nfoo r0, r1\n").find("line 3: invalid instruction: foo") != std::string::npos);
  CHECK(err_of(".loose_code\nadd r0, v0, c1\n").find("narrow operand") != std::string::npos);  // narrow src2
  CHECK(err_of(".loose_code\nmov o0, r99\n").find("line 2") != std::string::npos);
  CHECK(err_of(".loose_code\njmpc cmp.x, nowhere\n").find("label 'nowhere' is undefined") != std::string::npos);
  CHECK(err_of(".loose_code\nifu b0\nnop\n").find("unclosed block") != std::string::npos);
  CHECK(err_of("nop\n").find("line 1: instruction outside a .proc block") != std::string::npos);
  CHECK(err_of(".proc main\n").find("unclosed block") != std::string::npos);
}

TEST_CASE("pica200 IsaModule: shbin and raw words through the CLI interface") {
  const gpurc::isa::IsaModule& isa = *gpurc::find_isa("pica200");
  CHECK(isa.hex_unit_bytes() == 4);
  std::vector<uint8_t> bin;
  std::string err;
  REQUIRE(isa.assemble(kExample, "", bin, err));
  CHECK(bin.size() > 4);
  CHECK(std::string(bin.begin(), bin.begin() + 4) == "DVLB");
  std::string text;
  REQUIRE(isa.disassemble(bin, {}, text, err));
  std::vector<uint8_t> bin2;
  REQUIRE(isa.assemble(text, "", bin2, err));
  Shbin a, b;
  REQUIRE(parse_shbin(bin.data(), bin.size(), a, err));
  REQUIRE(parse_shbin(bin2.data(), bin2.size(), b, err));
  CHECK(a.code == b.code);
  CHECK(a.descs == b.descs);
  // Raw words: descriptors print as raw indices.
  std::vector<uint8_t> raw = {0x05, 0x00, 0x02, 0x4E, 0x00, 0x00, 0x00, 0x88};  // mov r0, c0 (desc 5); end
  gpurc::DisasmOptions o;
  o.raw = true;
  REQUIRE(isa.disassemble(raw, o, text, err));
  CHECK(text == "mov r0, c0, desc[5]\nend\n");
  raw.push_back(0);
  CHECK(!isa.disassemble(raw, o, text, err));
  // Truncated or corrupt containers are errors, not crashes.
  for (size_t cut = 0; cut < bin.size(); cut += 7) {
    std::vector<uint8_t> part(bin.begin(), bin.begin() + long(cut));
    if (part.size() >= 4) isa.disassemble(part, {}, text, err);
  }
  std::vector<uint8_t> bad = bin;
  bad[4] = 0xFF;  // absurd DVLE count
  CHECK(!isa.disassemble(bad, {}, text, err));
  bad = {0x00, 0x00, 0x00, 0x40};  // opcode 0x10: unknown
  CHECK(!isa.disassemble(bad, {}, text, err));
  CHECK(err.find("0x000") != std::string::npos);
}

TEST_CASE("pica200 cli: gpurc asm -> .shbin -> gpurc disasm -> gpurc asm gives identical words and descriptors") {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("gpurc-pica-cli-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto cli = [](std::vector<std::string> args, std::string& out) {
    args.insert(args.begin(), "gpurc");
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::ostringstream o, e;
    int rc = gpurc::run_cli(int(args.size()), argv.data(), o, e);
    out = o.str() + e.str();
    return rc;
  };
  const char* files[] = {"transform.pica", "lighting.pica", "skinning.pica", "loop_sum.pica", "geometry_quad.pica",
                         "vertex_lighting.pica"};
  for (const char* f : files) {
    CAPTURE(f);
    std::string src = std::string(GPURC_TEST_DATA) + "/examples/pica200/" + f;
    std::string first = (dir / "a.shbin").string(), text = (dir / "a.pica").string(), second = (dir / "b.shbin").string();
    std::string out;
    REQUIRE_MESSAGE(cli({"asm", "--isa", "pica200", "-o", first, src}, out) == 0, out);
    REQUIRE_MESSAGE(cli({"disasm", "--isa", "pica200", first}, out) == 0, out);
    std::ofstream(text) << out;
    REQUIRE_MESSAGE(cli({"asm", "--isa", "pica200", "-o", second, text}, out) == 0, out);
    auto load = [](const std::string& path) {
      std::ifstream in(path, std::ios::binary);
      std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      Shbin s;
      std::string err;
      REQUIRE_MESSAGE(parse_shbin(bytes.data(), bytes.size(), s, err), err);
      return s;
    };
    Shbin a = load(first), b = load(second);
    CHECK(!a.code.empty());
    CHECK(a.code == b.code);
    CHECK(a.descs == b.descs);
    REQUIRE(a.dvles.size() == b.dvles.size());
    for (size_t k = 0; k < a.dvles.size(); ++k) CHECK(a.dvles[k].main_offset == b.dvles[k].main_offset);
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
}

TEST_CASE("pica200 examples assemble and round-trip") {
  const char* files[] = {"vertex_lighting.pica", "loop_sum.pica", "geometry_quad.pica"};
  for (const char* f : files) {
    std::string path = std::string(GPURC_TEST_DATA) + "/examples/pica200/" + f;
    FILE* fh = std::fopen(path.c_str(), "rb");
    REQUIRE_MESSAGE(fh, path);
    std::string text;
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, fh)) > 0) text.append(buf, n);
    std::fclose(fh);
    INFO(f);
    Shbin s1 = must_assemble(text);
    Shbin s2 = must_assemble(must_disasm(s1));
    CHECK(s2.code == s1.code);
    CHECK(s2.descs == s1.descs);
  }
}

TEST_CASE("pica200 robustness: mutated shbins and random programs never crash") {
  Shbin s = must_assemble(kExample);
  std::vector<uint8_t> good = write_shbin(s);
  std::mt19937_64 rng(5);
  int rounds = light() ? 300 : 3000;
  for (int i = 0; i < rounds; ++i) {
    std::vector<uint8_t> m = good;
    int flips = 1 + int(rng() % 4);
    for (int k = 0; k < flips; ++k) m[rng() % m.size()] = uint8_t(rng());
    if (rng() % 4 == 0) m.resize(rng() % m.size());
    Shbin out;
    std::string err, text;
    if (parse_shbin(m.data(), m.size(), out, err)) disasm_shbin(out, {}, text, err);
  }
  // Random words, including unknown opcodes, with random uniforms: every run ends (END or a fault).
  for (int p = 0; p < rounds / 10; ++p) {
    Program prog;
    uint32_t n = 1 + uint32_t(rng() % 64);
    for (uint32_t i = 0; i < n; ++i) prog.code.push_back(uint32_t(rng()));
    for (int i = 0; i < int(rng() % 129); ++i) prog.descs.push_back(uint32_t(rng()));
    Uniforms u;
    for (auto& v : u.f)
      for (auto& c : v) c = fp::from_bits(uint32_t(rng()));
    for (auto& v : u.i)
      for (auto& c : v) c = uint8_t(rng());
    u.b = uint16_t(rng());
    VertexState st;
    for (auto& v : st.v)
      for (auto& c : v) c = fp::from_bits(uint32_t(rng()));
    GsState gs;
    Interpreter it(prog, u);
    RunResult r = it.run(uint32_t(rng() % n), st, (p & 1) ? &gs : nullptr, 20000);
    CHECK((r.ok || !r.fault.empty()));
  }
}

}  // namespace gpurc_test_pica200_roundtrip
