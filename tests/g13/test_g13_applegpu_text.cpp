// G13 text compatibility with applegpu: the disassembly of ~2900 varied
// encodings (every descriptor random encodings reach, every alias) must be
// applegpu's text, and the assembler must turn that text back into the same
// bytes. tests/g13/applegpu_text.txt holds applegpu's outputs as data (see
// docs/g13.md "Compatibility with applegpu" for how it was produced), so the
// check needs no Python.
#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "frontend/g13/g13.h"
#include "frontend/g13/interp.h"

namespace gpurc_test_g13_test_g13_applegpu_text {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;

namespace {

struct Row {
  uint64_t pc = 0;
  std::vector<uint8_t> bytes;
  std::string text;
  int line = 0;
};

std::vector<Row> load_rows() {
  std::ifstream f(std::string(GPURC_TEST_DATA) + "/tests/g13/applegpu_text.txt");
  std::vector<Row> rows;
  std::string line;
  int n = 0;
  while (std::getline(f, line)) {
    ++n;
    if (line.empty() || line[0] == '#') continue;
    const size_t t1 = line.find('\t'), t2 = line.find('\t', t1 + 1);
    REQUIRE_MESSAGE((t1 != std::string::npos && t2 != std::string::npos), "line " << n);
    Row r;
    r.pc = std::stoull(line.substr(0, t1), nullptr, 16);
    const std::string hex = line.substr(t1 + 1, t2 - t1 - 1);
    for (size_t i = 0; i + 1 < hex.size(); i += 2) r.bytes.push_back(uint8_t(std::stoul(hex.substr(i, 2), nullptr, 16)));
    r.text = line.substr(t2 + 1);
    r.line = n;
    rows.push_back(std::move(r));
  }
  return rows;
}

std::string mnemonic(const std::string& text) { return text.substr(0, text.find(' ')); }

std::string hex(const std::vector<uint8_t>& b) {
  std::string s;
  char buf[4];
  for (uint8_t x : b) {
    std::snprintf(buf, sizeof buf, "%02x", x);
    s += buf;
  }
  return s;
}

}  // namespace

TEST_CASE("g13 disassembly is applegpu's text and assembles back to the same bytes") {
  const std::vector<Row> rows = load_rows();
  REQUIRE(rows.size() > 2800);
  std::set<int> descriptors;
  int text_ok = 0, bytes_ok = 0;
  for (const Row& r : rows) {
    g13::Insn in;
    fe::Diagnostic err;
    REQUIRE_MESSAGE(g13::decode(r.bytes.data(), r.bytes.size(), r.pc, in, err), "line " << r.line);
    descriptors.insert(in.desc->index);
    CHECK_MESSAGE(in.size == r.bytes.size(), "line " << r.line);
    const std::string got = g13::disassemble(in, r.pc);
    CHECK_MESSAGE(got == r.text, "line " << r.line << ": " << hex(r.bytes) << "\n  applegpu: " << r.text << "\n  gpurc:    " << got);
    text_ok += got == r.text;
    std::vector<uint8_t> out;
    std::string aerr;
    const bool ok = g13::assemble_one(r.text, r.pc, out, aerr);
    CHECK_MESSAGE(ok, "line " << r.line << ": " << r.text << ": " << aerr);
    CHECK_MESSAGE(out == r.bytes, "line " << r.line << ": " << r.text << ": " << hex(out) << " != " << hex(r.bytes));
    bytes_ok += ok && out == r.bytes;
  }
  CHECK(text_ok == int(rows.size()));
  CHECK(bytes_ok == int(rows.size()));
  // Every descriptor that first-match decoding can reach (stack_get_ptr,
  // TODO.stack_adjust, TODO.stack_adjust2 and TODO.unk51 are shadowed by
  // earlier descriptors, in applegpu's table as in ours).
  CHECK(descriptors.size() == g13::table().size() - 4);
}

TEST_CASE("g13 assembler accepts every applegpu alias") {
  const std::vector<Row> rows = load_rows();
  std::set<std::string> seen;
  for (const Row& r : rows) seen.insert(mnemonic(r.text));
  // The names applegpu prints besides descriptor names (map_to_alias and
  // mnemonic suffixes) and the ones its assembler accepts; each must appear
  // in the data, whose rows the test above assembles.
  for (const char* alias : {"and", "or", "xor", "nand", "nor", "xnor", "not", "mov", "bitop_mov_a", "isub", "imsub",
                            "iadd.sat", "isub.sat", "imadd.sat", "imsub.sat", "fadd32.sat", "fmadd16.sat",
                            "push_exec", "update_exec", "ld_tile", "st_tile", "map", "unmap", "TODO.map"})
    CHECK_MESSAGE(seen.count(alias), alias);
  // Hand-written forms of the bitop aliases (B = 0 implied for not/mov).
  const std::pair<const char*, const char*> forms[] = {
      {"and r1, r2, r3", "bitop 0001, r1, r2, r3"},   {"or r1, r2, r3", "bitop 0111, r1, r2, r3"},
      {"xor r1, r2, r3", "bitop 0110, r1, r2, r3"},   {"nand r1, r2, r3", "bitop 1110, r1, r2, r3"},
      {"nor r1, r2, r3", "bitop 1000, r1, r2, r3"},   {"xnor r1, r2, r3", "bitop 1001, r1, r2, r3"},
      {"not r1, r2", "bitop 1010, r1, r2, 0"},         {"mov r1, r2", "bitop 0101, r1, r2, 0"},
      {"bitop_mov_a 0011, r1, r2, r3", "bitop 0011, r1, r2, r3"},
      {"push_exec r0l, 2", "if_fcmp r0l, eq, 0.0, 0.0, 2"}, {"update_exec r0l", "if_fcmp r0l, eq, 0.0, 0.0, 0"},
  };
  for (const auto& [alias, raw] : forms) {
    std::vector<uint8_t> a, b;
    std::string err;
    REQUIRE_MESSAGE(g13::assemble_one(alias, 0, a, err), alias << ": " << err);
    REQUIRE_MESSAGE(g13::assemble_one(raw, 0, b, err), raw << ": " << err);
    CHECK_MESSAGE(a == b, alias);
    g13::Insn in;
    fe::Diagnostic derr;
    REQUIRE(g13::decode(a.data(), a.size(), 0, in, derr));
    CHECK(g13::disassemble(in, 0) == alias);
    CHECK(g13::disassemble(in, 0, false) == raw);
  }
  // else_exec: applegpu's alias of else_icmp for an always-true compare; its
  // disassembler never prints it (integer conditions are not named `eq`),
  // so it assembles to the compare of two zero immediates and prints raw.
  {
    std::vector<uint8_t> a, b;
    std::string err;
    REQUIRE_MESSAGE(g13::assemble_one("else_exec r0l, 2", 0, a, err), err);
    REQUIRE_MESSAGE(g13::assemble_one("else_icmp r0l, ueq, 0, 0, 2", 0, b, err), err);
    CHECK(a == b);
    CHECK_FALSE(g13::assemble_one("else_exec r0l", 0, a, err));
  }
}

TEST_CASE("g13 assembler accepts every descriptor name in the raw form") {
  // applegpu's assembler takes each descriptor's own name (TODO.ld/st_tile,
  // device_load.TODO, quad_min.u, ...): the raw printing of random encodings
  // of every reachable descriptor must assemble to the same instruction.
  std::mt19937_64 rng(13);
  int covered = 0;
  for (const g13::Desc& d : g13::table()) {
    int made = 0;
    for (int attempt = 0; attempt < 400 && made < 8; ++attempt) {
      std::vector<uint8_t> bytes;
      if (!g13::random_instruction(d, rng, bytes)) continue;
      g13::Insn in;
      fe::Diagnostic err;
      REQUIRE(g13::decode(bytes.data(), bytes.size(), 0, in, err));
      const std::string raw = g13::disassemble(in, 0, false);
      ++made;
      std::string m = mnemonic(raw);
      if (d.has_saturate() && m.size() > 4 && m.compare(m.size() - 4, 4, ".sat") == 0) m.resize(m.size() - 4);
      if ((d.name == "iadd" && m == "isub") || (d.name == "imadd" && m == "imsub")) m = d.name;
      CHECK_MESSAGE(m == d.name, raw);
      std::vector<uint8_t> out;
      std::string aerr;
      REQUIRE_MESSAGE(g13::assemble_one(raw, 0, out, aerr), raw << ": " << aerr);
      g13::Insn in2;
      REQUIRE(g13::decode(out.data(), out.size(), 0, in2, err));
      CHECK_MESSAGE(in2.desc == in.desc, raw);
      CHECK_MESSAGE(g13::disassemble(in2, 0, false) == raw, raw);
    }
    covered += made > 0;
  }
  CHECK(covered == int(g13::table().size()) - 4);
}

TEST_CASE("g13 cmpsel uniform sources of type 111: applegpu's text, the full index in the raw form and the interpreter") {
  // Xt = 7 selects a uniform with index bit 8 set: applegpu's pseudocode and
  // its encoder use the bit, its decoder drops it. The text is applegpu's
  // (u28l, which assembles with Xt = 6); the raw form keeps the index the
  // instruction reads (u156l, which assembles back to the same bytes).
  // A random encoding as applegpu prints it (its Y is an undefined type):
  const std::vector<uint8_t> random_bytes = {0x82, 0x12, 0xfd, 0xc5, 0x9a, 0xf8, 0x97, 0x77};
  g13::Insn in;
  fe::Diagnostic err;
  REQUIRE(g13::decode(random_bytes.data(), random_bytes.size(), 0, in, err));
  CHECK(in.f("Xt") == 7);
  CHECK(g13::disassemble(in, 0) == "fcmpsel ltn, r4h.cache, u158.abs, u22.neg, u28l, None");
  CHECK(g13::disassemble(in, 0, false) == "fcmpsel ltn, r4h.cache, u158.abs, u22.neg, u156l, None");
  // With a defined Y: the raw form is lossless, applegpu's text reassembles
  // to Xt = 6 (the operand its text names).
  const std::string raw = "fcmpsel ltn, r4h.cache, u158.abs, u22.neg, u156l, r3l";
  std::vector<uint8_t> bytes, out;
  std::string aerr;
  REQUIRE_MESSAGE(g13::assemble_one(raw, 0, bytes, aerr), aerr);
  REQUIRE(g13::decode(bytes.data(), bytes.size(), 0, in, err));
  CHECK(in.f("Xt") == 7);
  CHECK(g13::disassemble(in, 0) == "fcmpsel ltn, r4h.cache, u158.abs, u22.neg, u28l, r3l");
  CHECK(g13::disassemble(in, 0, false) == raw);
  REQUIRE_MESSAGE(g13::assemble_one(g13::disassemble(in, 0, false), 0, out, aerr), aerr);
  CHECK(out == bytes);
  out.clear();
  REQUIRE_MESSAGE(g13::assemble_one(g13::disassemble(in, 0), 0, out, aerr), aerr);
  g13::Insn in2;
  REQUIRE(g13::decode(out.data(), out.size(), 0, in2, err));
  CHECK(in2.f("Xt") == 6);
  CHECK(g13::disassemble(in2, 0) == g13::disassemble(in, 0));
  CHECK(g13::disassemble(in2, 0, false) == g13::disassemble(in, 0));

  // 32-bit destinations: u156 is the index pair 312/313, Yt = 7 with value 56;
  // applegpu prints u28. The interpreter reads u156, as applegpu's pseudocode.
  for (const char* src : {"u156", "u28"}) {
    const std::string text = std::string("icmpsel ult, r5, r1, 1, 7, ") + src;
    out.clear();
    REQUIRE_MESSAGE(g13::assemble_one(text, 0, out, aerr), aerr);
    REQUIRE(g13::decode(out.data(), out.size(), 0, in, err));
    CHECK(in.f("Yt") == (src == std::string("u156") ? 7u : 6u));
    CHECK(g13::disassemble(in, 0) == "icmpsel ult, r5, r1, 1, 7, u28");
    CHECK(g13::disassemble(in, 0, false) == text);
    out.push_back(0x88);  // stop
    out.push_back(0x00);
    g13::SimdGroup sg;
    for (unsigned l = 0; l < 32; ++l) sg.set_r32(1, l, l);  // lane 0 selects 7, the others Y
    sg.set_u32(156, 0x11223344u);
    sg.set_u32(28, 0x55667788u);
    g13::Interpreter it(out, nullptr);
    REQUIRE(it.run(sg, 100).kind == g13::StepResult::Kind::Done);
    CHECK(sg.r32(5, 0) == 7u);
    CHECK(sg.r32(5, 1) == (src == std::string("u156") ? 0x11223344u : 0x55667788u));
  }
}

TEST_CASE("g13 assembler: descriptors first-match decoding never reaches are refused by name") {
  // applegpu's assembler encodes these names, but the bytes decode (in
  // applegpu as here) as the earlier descriptor: emitting them would silently
  // mean another instruction.
  const std::pair<const char*, const char*> shadowed[] = {
      {"stack_get_ptr 0, 0, 0, 0, 0, r1", "stack_load"},
      {"TODO.stack_adjust 0, 0, 0, 0, 0, 16", "stack_store"},
      {"TODO.stack_adjust2 0, 0, 0, 0, 0, r1", "stack_store"},
      {"TODO.unk51", "no_var"},
  };
  for (const auto& [text, by] : shadowed) {
    std::vector<uint8_t> out;
    std::string err;
    CHECK_FALSE(g13::assemble_one(text, 0, out, err));
    CHECK_MESSAGE(err.find("cannot be assembled: every encoding of it decodes as '" + std::string(by)) != std::string::npos,
                  err);
  }
  // A reachable descriptor with operands that fit nothing keeps the plain message.
  std::vector<uint8_t> out;
  std::string err;
  CHECK_FALSE(g13::assemble_one("stack_load 1, 2", 0, out, err));
  CHECK(err.find("operands do not fit any encoding of 'stack_load'") != std::string::npos);
  // The raw name of ld_tile/st_tile, which applegpu never prints but assembles.
  REQUIRE_MESSAGE(g13::assemble_one("TODO.ld/st_tile 0, r1h, i8, 0, w, 16, 16, 2", 0, out, err), err);
  g13::Insn in;
  fe::Diagnostic derr;
  REQUIRE(g13::decode(out.data(), out.size(), 0, in, derr));
  CHECK(g13::disassemble(in, 0) == "st_tile r1h, i8, 0, w, 16, 16, 2");
}

}  // namespace gpurc_test_g13_test_g13_applegpu_text
