// Bifrost codec: the encoding table against ISA.xml, every quadword format,
// the notes' vectors (docs/bifrost.md), disassembly text recorded from Mesa's
// Bifrost disassembler, round trips assemble(disassemble(x)) == x on random
// valid clauses, and malformed input giving errors (never crashes).
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <random>
#include <regex>
#include <set>
#include <sstream>

#include "frontend/bifrost/bifrost.h"
#include "ir/ir.h"
#include "isa/module.h"

namespace gpurc_test_bifrost_test_bifrost_codec {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::bifrost;

namespace {

#include "tests/bifrost/mesa_expected.inc"

bool light() { return std::getenv("GPURC_TEST_LIGHT") != nullptr; }

std::vector<uint8_t> unhex(const std::string& s) {
  std::vector<uint8_t> out;
  for (size_t i = 0; i + 1 < s.size(); i += 2) out.push_back(uint8_t(std::stoul(s.substr(i, 2), nullptr, 16)));
  return out;
}

// Whitespace-insensitive comparison (Mesa's lines end in a blank).
std::string norm(const std::string& s) {
  std::string out;
  bool space = false;
  for (char c : s) {
    if (c == ' ' || c == '\t') {
      space = true;
      continue;
    }
    if (space && c != '\n' && !out.empty() && out.back() != '\n') out += ' ';
    space = false;
    out += c;
  }
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

std::string disasm(const std::vector<uint8_t>& b) {
  std::string out, err;
  REQUIRE_MESSAGE(disassemble(b.data(), b.size(), out, err), err);
  return out;
}

const MesaCase* find_case(const std::string& name) {
  for (const MesaCase& c : kMesaCases)
    if (name == c.name) return &c;
  return nullptr;
}

}  // namespace

TEST_CASE("bifrost table: every hardware instruction of ISA.xml, in file order, same masks") {
  // Mesa's ISA.xml as the shared reference folder holds it (not copied into the tree).
  std::ifstream in(GPURC_BIFROST_XML);
  INFO("ISA.xml path: " << GPURC_BIFROST_XML);
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string xml = ss.str();
  // Light reading of the XML: <ins ...> start tags and <encoding mask exact>.
  struct Row {
    std::string name;
    uint32_t mask, exact;
  };
  std::vector<Row> rows;
  std::regex ins_re(R"re(<ins name="([^"]+)"([^>]*)>)re"), attr_mask(R"re(mask="(0x[0-9a-fA-F]+)")re"),
      attr_exact(R"re(exact="(0x[0-9a-fA-F]+)")re"), enc_re(R"re(<encoding mask="(0x[0-9a-fA-F]+)" exact="(0x[0-9a-fA-F]+)")re");
  size_t pos = 0;
  std::set<std::string> fma_names, add_names;
  while (true) {
    std::smatch m;
    std::string rest = xml.substr(pos);
    if (!std::regex_search(rest, m, ins_re)) break;
    std::string name = m[1], attrs = m[2];
    size_t start = pos + size_t(m.position(0)) + size_t(m.length(0));
    size_t end = xml.find("</ins>", start);
    bool selfclosed = !attrs.empty() && attrs.back() == '/';
    if (selfclosed) end = start;
    pos = start;
    if (attrs.find("pseudo=\"true\"") != std::string::npos) continue;
    (name[0] == '*' ? fma_names : add_names).insert(name);
    std::smatch mm, me;
    if (std::regex_search(attrs, mm, attr_mask) && std::regex_search(attrs, me, attr_exact)) {
      rows.push_back({name, uint32_t(std::stoul(mm[1], nullptr, 16)), uint32_t(std::stoul(me[1], nullptr, 16))});
      continue;
    }
    std::string body = xml.substr(start, end - start);
    for (std::sregex_iterator it(body.begin(), body.end(), enc_re), e; it != e; ++it)
      rows.push_back({name, uint32_t(std::stoul((*it)[1], nullptr, 16)), uint32_t(std::stoul((*it)[2], nullptr, 16))});
  }
  CHECK(fma_names.size() == 98);
  CHECK(add_names.size() == 206);
  const auto& encs = encodings();
  REQUIRE(rows.size() == encs.size());
  CHECK(encs.size() == 392);
  for (size_t i = 0; i < rows.size(); ++i) {
    INFO(rows[i].name);
    CHECK(encs[i].name == rows[i].name);
    CHECK(encs[i].mask == rows[i].mask);
    CHECK(encs[i].exact == rows[i].exact);
  }
  CHECK(table_xml_sha256().size() == 64);
}

TEST_CASE("bifrost table: derived modifier tables") {
  // *FADD.f32 widen field (bits 9-11): 4 = h0/h1, 6 = h0/none; the h1/h0 pair is not encodable.
  const Encoding* e = match(0x2c0000 | (4u << 9), true);
  REQUIRE(e);
  CHECK(e->name == "*FADD.f32");
  auto mods = decode_mods(*e, 0x2c0000 | (4u << 9));
  for (size_t i = 0; i < e->mods.size(); ++i) {
    if (e->mods[i].name == "widen0") CHECK(e->mods[i].opts[size_t(mods[i])] == "h0");
    if (e->mods[i].name == "widen1") CHECK(e->mods[i].opts[size_t(mods[i])] == "h1");
  }
  // Encode back: the same word.
  std::vector<unsigned> srcs = {0, 0};
  uint32_t w = 0;
  REQUIRE(encode(*e, srcs, mods, {}, w));
  CHECK(w == (0x2c0000u | (4u << 9)));
  // Unknown words decode as nothing.
  CHECK(match(0x7ff800, true) == nullptr);
}

TEST_CASE("bifrost disassembly matches Mesa's disassembler on recorded clauses") {
  size_t n = 0;
  for (const MesaCase& c : kMesaCases) {
    INFO(c.name);
    CHECK(norm(disasm(unhex(c.hex))) == norm(c.text));
    ++n;
  }
  CHECK(n >= 70);
}

TEST_CASE("bifrost notes vectors: blob clause bytes, headers, tuples") {
  // PackFormats.1 in memory order (notes G).
  std::vector<uint8_t> pf1 = unhex("4a000020021ccb8023e000c008008010");
  Clause c;
  std::string err;
  REQUIRE(unpack_clause(pf1.data(), pf1.size(), 0, c, err));
  CHECK(c.ntuples == 1);
  CHECK(c.quadwords == 1);
  CHECK(c.header.bits == 0x021000011800ull);
  CHECK(c.header.flow() == 3);
  CHECK(c.header.message_type() == 2);
  CHECK(c.header.next_message_type() == 2);
  CHECK(c.header.next_prefetch());
  CHECK(c.tuples[0].regs == 0x402200000ull);
  CHECK(c.tuples[0].fma == 0x701963u);
  CHECK(c.tuples[0].add == 0x43808u);
  // The packer reproduces the blob's bytes from the text.
  std::vector<uint8_t> back;
  REQUIRE_MESSAGE(assemble(disasm(pf1), back, err), err);
  CHECK(back == pf1);

  // PackFormats.8 (8 tuples, formats 0 2 4 7 10 11): tuples of notes B, header of notes C.
  const MesaCase* pf8 = find_case("PackFormats.8");
  REQUIRE(pf8);
  std::vector<uint8_t> b8 = unhex(pf8->hex);
  REQUIRE(unpack_clause(b8.data(), b8.size(), 0, c, err));
  CHECK(c.ntuples == 8);
  CHECK(c.header.bits == 0x061001311800ull);
  CHECK(c.header.staging_register() == 12);
  CHECK(c.header.dependency_wait() == 1);
  const uint64_t hi[8] = {0x3021, 0x0200, 0x0000, 0x1980, 0x0200, 0x0200, 0x0040, 0x0800};
  const uint64_t lo[8] = {0x442087037a2f8643, 0x84008d0586100043, 0x7c008d0028014543, 0x1c00070058200081,
                          0x01600dd878320400, 0x49709c1b08308900, 0x6c2007807881ca00, 0x8d70fc0d94900083};
  for (int t = 0; t < 8; ++t) {
    INFO("tuple " << t);
    const Tuple& tu = c.tuples[t];
    uint64_t l = tu.regs | uint64_t(tu.fma) << 35 | uint64_t(tu.add & 0x3f) << 58;
    CHECK(l == lo[t]);
    CHECK((tu.add >> 6) == hi[t]);
  }
  // The FAU index 0x43 reads EC0 with low nibble 3 (notes 2.4).
  CHECK((c.consts[0] | 3) == 0x32e635d3ull);

  // Headers of notes C.
  const std::map<std::string, uint64_t> headers = {{"PackFormats.2", 0x052800011800ull}, {"PackFormats.3", 0x003100000000ull},
                                                   {"PackFormats.5", 0x003100000000ull}, {"PackFormats.6", 0x060000011800ull},
                                                   {"PackFormats.7", 0x003000100000ull}};
  for (const auto& [name, h] : headers) {
    const MesaCase* mc = find_case(name);
    REQUIRE(mc);
    std::vector<uint8_t> b = unhex(mc->hex);
    REQUIRE(unpack_clause(b.data(), b.size(), 0, c, err));
    CHECK(c.header.bits == h);
  }
}

TEST_CASE("bifrost register blocks: slot modes of notes E") {
  struct Row {
    uint64_t bits;
    bool read0, read1;
    unsigned r0, r1;
    SlotOp s2, s3;
    bool s3_fma;
  };
  const Row rows[] = {
      {0x25051c700, true, true, 5, 40, SlotOp::Read, SlotOp::Idle, false},
      {0x25051c800, true, true, 5, 40, SlotOp::Read, SlotOp::WriteLo, false},
      {0x09b724900, true, true, 40, 50, SlotOp::Idle, SlotOp::Write, true},
      {0x018a2cc00, true, false, 10, 0, SlotOp::Read, SlotOp::Write, true},
      {0x01aa2cc00, true, false, 42, 0, SlotOp::Read, SlotOp::Write, true},
      {0x05c034d00, false, false, 0, 0, SlotOp::Idle, SlotOp::Idle, true},
      {0x784151500, true, true, 1, 2, SlotOp::Write, SlotOp::Write, false},
      {0x404151400, true, true, 1, 2, SlotOp::WriteLo, SlotOp::WriteHi, false},
  };
  for (const Row& r : rows) {
    INFO(std::hex << r.bits);
    RegMode m = decode_regs(RegBlock::from_bits(r.bits), false);
    CHECK(!m.reserved);
    CHECK(m.read0 == r.read0);
    CHECK(m.read1 == r.read1);
    if (r.read0) CHECK(m.reg0 == r.r0);
    if (r.read1) CHECK(m.reg1 == r.r1);
    CHECK(m.slot2 == r.s2);
    CHECK(m.slot3 == r.s3);
    if (m.slot3 != SlotOp::Idle) CHECK(m.slot3_fma == r.s3_fma);
  }
  // First tuple: control bit 3 moves to mode bit 4 (ctrl 8 = idle, notes G).
  RegMode first = decode_regs(RegBlock::from_bits(0x402200000ull), true);
  CHECK(first.mode == 16);
  CHECK(first.reg0 == 61);
  CHECK(first.reg1 == 62);
  // Mode 0 is reserved.
  CHECK(decode_regs(RegBlock::from_bits(0), true).reserved);
}

TEST_CASE("bifrost clause formats: every tuple count and constant count packs and unpacks") {
  // Expected tag sequence (low 6 bits without uppers/stop) per tuple count.
  const std::vector<std::vector<unsigned>> formats = {
      {}, {0x08}, {0x28, 0x03}, {0x28, 0x20, 0x04}, {0x28, 0x20, 0x05}, {0x28, 0x20, 0x80, 0x10},
      {0x28, 0x20, 0x01, 0x60, 0x06}, {0x28, 0x20, 0x01, 0x60, 0x07}, {0x28, 0x20, 0x01, 0x60, 0xc0, 0x18}};
  std::mt19937_64 rng(99);
  for (unsigned n = 1; n <= 8; ++n) {
    for (unsigned k = 0; k <= max_constants(n); ++k) {
      bool fs = has_free_constant_slot(n);
      if (k < (fs ? 1u : 0u) || ((k - (fs ? 1 : 0)) % 2)) continue;
      INFO("tuples " << n << " constants " << k);
      Clause c;
      c.ntuples = n;
      c.header.bits = rng() & ((uint64_t(1) << 45) - 1) & ~uint64_t(0x1f) & ~(uint64_t(1) << 14);
      for (unsigned t = 0; t < n; ++t) {
        c.tuples[t].regs = rng() & ((uint64_t(1) << 35) - 1);
        c.tuples[t].fma = uint32_t(rng()) & 0x7fffff;
        c.tuples[t].add = uint32_t(rng()) & 0xfffff;
      }
      c.nconsts = k;
      for (unsigned i = 0; i < k; ++i) {
        // Top nibbles equal within a pair: not PC-relative.
        c.consts[i] = (rng() & ~uint64_t(15) & ~(uint64_t(15) << 60)) | (uint64_t(5) << 60);
      }
      std::vector<uint8_t> bytes;
      std::string err;
      REQUIRE_MESSAGE(pack_clause(c, bytes, err), err);
      unsigned inst_q = unsigned(formats[n].size());
      unsigned pairs = (k - (fs ? 1 : 0)) / 2;
      REQUIRE(bytes.size() == 16 * (inst_q + pairs));
      for (unsigned q = 0; q < inst_q; ++q) {
        unsigned tag = bytes[16 * q];
        unsigned f = formats[n][q];
        bool last = q + 1 == inst_q;
        unsigned stop = last && pairs == 0 ? 0x40 : 0;
        if (f & 0x80) CHECK((tag & 0xc0) == f);  // formats 5 / 10: two upper fields
        else if (f == 0x03 || f == 0x04 || f == 0x05 || f == 0x01 || f == 0x06 || f == 0x07) CHECK(tag == (f | stop));
        else CHECK((tag & 0xf8) == (f | stop));
      }
      for (unsigned p = 0; p < pairs; ++p) {
        unsigned tag = bytes[16 * (inst_q + p)];
        CHECK((tag & 0x30) == 0x30);
        CHECK(bool(tag & 0x40) == (p + 1 == pairs));
      }
      Clause u;
      REQUIRE_MESSAGE(unpack_clause(bytes.data(), bytes.size(), 0, u, err), err);
      CHECK(u.ntuples == n);
      CHECK(u.quadwords == inst_q + pairs);
      CHECK(u.header.bits == c.header.bits);
      for (unsigned t = 0; t < n; ++t) {
        INFO("tuple " << t);
        CHECK(u.tuples[t].regs == c.tuples[t].regs);
        CHECK(u.tuples[t].fma == c.tuples[t].fma);
        CHECK(u.tuples[t].add == c.tuples[t].add);
      }
      CHECK(u.nconsts == (k ? k : (fs ? 1u : 0u)));
      for (unsigned i = 0; i < k; ++i) {
        CHECK(u.consts[i] == c.consts[i]);
        CHECK(u.mods[i] == ConstMod::None);
      }
    }
  }
  CHECK(max_constants(1) == 2);
  CHECK(max_constants(3) == 3);
  CHECK(max_constants(6) == 6);
  CHECK(max_constants(8) == 5);
}

TEST_CASE("bifrost constants: ordering avoids PC-relative pairs, PC-relative pairs decode") {
  std::vector<unsigned> where;
  // Top nibbles 3 and 1: difference 2 would read as "both PC_LO": swapped.
  std::vector<uint64_t> slots = order_constants(2, {0x3000000000000010ull, 0x1000000000000020ull}, where);
  REQUIRE(slots.size() == 2);
  CHECK(slots[0] == 0x1000000000000020ull);
  CHECK(where[0] == 1);
  CHECK(where[1] == 0);
  // Free slot first for 3 tuples; a dummy fills an odd pair.
  slots = order_constants(3, {0x10, 0x20}, where);
  CHECK(slots.size() == 3);
  CHECK(where[0] == 0);

  // A pair with M1 = 4 (E0 high word PC-relative): a branch target.
  Clause c;
  c.ntuples = 1;
  c.header.bits = 0;
  RegBlock rb;
  rb.fau = 0x40;  // constant slot 0, low nibble 0
  rb.ctrl = 0;
  rb.reg1 = (8 << 2) | 2;
  c.tuples[0].regs = rb.to_bits();
  c.tuples[0].fma = 0x701963;  // *NOP
  c.tuples[0].add = 0x3d964;   // +NOP
  c.nconsts = 2;
  c.consts[0] = (uint64_t(4) << 60) | (uint64_t(0x30) << 32);  // A1 = 4, offset +0x30 = 3 clauses
  c.consts[1] = 0;
  std::vector<uint8_t> bytes;
  std::string err;
  REQUIRE(pack_clause(c, bytes, err));
  Clause u;
  REQUIRE(unpack_clause(bytes.data(), bytes.size(), 0, u, err));
  CHECK(u.mods[0] == ConstMod::PcHi);
  CHECK(u.mods[1] == ConstMod::None);
  CHECK(print_instruction(u, 0, true, 5) == "*NOP t0");
  // Reading that constant's high half through an instruction prints the target.
  c.tuples[0].fma = 0x701963;
  c.tuples[0].add = 0xbc608 & ~0x3fu;  // +IADD.s32, sources patched below
  c.tuples[0].add |= 5u | (5u << 3);
  bytes.clear();
  REQUIRE(pack_clause(c, bytes, err));
  REQUIRE(unpack_clause(bytes.data(), bytes.size(), 0, u, err));
  CHECK(print_instruction(u, 0, false, 5) == "+IADD.s32 t1, clause_8, clause_8");
}

TEST_CASE("bifrost assembler: branch targets become PC_HI constants") {
  // Two clauses; the second (4 tuples: room for 4 constants) branches back to the first and forward to clause_9.
  const std::string text =
      "clause_0:\nds(0) nbb \n{\n    *NOP t0\n    +NOP t1\n}\n\n"
      "clause_1:\nds(0) nbb \n{\n    *NOP t0\n    +IADD.s32 t1, clause_0, 0x00000007\n"
      "    *NOP t0\n    +IADD.s32 t1, clause_9, t\n    *NOP t0\n    +NOP t1\n    *NOP t0\n    +NOP t1\n}\n";
  std::vector<uint8_t> b;
  std::string err;
  REQUIRE_MESSAGE(assemble(text, b, err), err);
  Clause c;
  REQUIRE(unpack_clause(b.data(), b.size(), 16, c, err));
  REQUIRE(c.ntuples == 4);
  // Two branch constants, each the first of its own pair (the 7 shares the first pair).
  CHECK(c.nconsts == 4);
  CHECK(c.mods[0] == ConstMod::PcHi);
  CHECK(c.mods[1] == ConstMod::None);
  CHECK(c.mods[2] == ConstMod::PcHi);
  auto offset_of = [](uint64_t k) { return int32_t(uint32_t(k >> 32) << 4) >> 4; };
  CHECK(offset_of(c.consts[0]) == -16);
  CHECK(offset_of(c.consts[2]) == 8 * 16);
  std::string out;
  REQUIRE(disassemble(b.data(), b.size(), out, err));
  CHECK(out.find("+IADD.s32 t1, clause_0, 0x00000007") != std::string::npos);
  CHECK(out.find("+IADD.s32 t1, clause_9, t") != std::string::npos);
  std::vector<uint8_t> back;
  REQUIRE(assemble(out, back, err));
  CHECK(back == b);
  // A branch to its own clause is printed with Mesa's warning and still assembles.
  REQUIRE(assemble("clause_0:\nds(0) nbb \n{\n    *NOP t0\n    +IADD.s32 t1, clause_0, t\n}\n", b, err));
  out.clear();
  REQUIRE(disassemble(b.data(), b.size(), out, err));
  CHECK(out.find("clause_0 /* XXX: likely an infinite loop */") != std::string::npos);
  REQUIRE(assemble(out, back, err));
  CHECK(back == b);
}

TEST_CASE("bifrost round trip: assemble(disassemble(x)) == x on random valid clauses") {
  std::mt19937_64 rng(2026);
  unsigned count = light() ? 150 : 1500;
  unsigned tuples_seen[9] = {};
  for (unsigned i = 0; i < count; ++i) {
    std::vector<uint8_t> b;
    std::string err;
    REQUIRE_MESSAGE(random_clause(rng, b, err), err);
    Clause c;
    REQUIRE(unpack_clause(b.data(), b.size(), 0, c, err));
    tuples_seen[c.ntuples]++;
    std::string text = disasm(b);
    std::vector<uint8_t> back;
    REQUIRE_MESSAGE(assemble(text, back, err), std::string(err + "\n" + text));
    REQUIRE_MESSAGE(back == b, text);
  }
  for (unsigned n = 1; n <= 8; ++n) CHECK(tuples_seen[n] > 0);
  // A program of several clauses: labels count quadwords.
  std::vector<uint8_t> prog;
  for (int i = 0; i < 6; ++i) {
    std::string err;
    REQUIRE(random_clause(rng, prog, err));
  }
  std::string text = disasm(prog);
  std::vector<uint8_t> back;
  std::string err;
  REQUIRE_MESSAGE(assemble(text, back, err), err);
  CHECK(back == prog);
  CHECK(text.find("clause_0:") == 0);
  // Trailing zero padding ends the code.
  prog.resize(prog.size() + 64, 0);
  CHECK(disasm(prog) == text);
}

TEST_CASE("bifrost round trip: every recorded random clause and the blob's clauses") {
  // PackFormats.4 and .6 are edited vectors whose synthetic zero constants
  // the packer merges (same text, other FAU slots); the others are the blob's bytes.
  const std::set<std::string> exact = {"PackFormats.1", "PackFormats.2", "PackFormats.3",
                                       "PackFormats.5", "PackFormats.7", "PackFormats.8"};
  unsigned blob = 0;
  for (const MesaCase& mc : kMesaCases) {
    std::string name = mc.name;
    if (name.rfind("random", 0) != 0 && !exact.count(name)) continue;
    blob += exact.count(name) ? 1 : 0;
    INFO(name);
    std::vector<uint8_t> b = unhex(mc.hex), back;
    std::string err;
    REQUIRE_MESSAGE(assemble(mc.text, back, err), err);
    CHECK(back == b);
  }
  CHECK(blob == 6);
}

TEST_CASE("bifrost malformed input: errors name the clause, never crash") {
  std::string out, err;
  // Truncated: a clause whose stop bit never comes.
  std::vector<uint8_t> pf8 = unhex(find_case("PackFormats.8")->hex);
  for (size_t cut = 4; cut < pf8.size(); cut += 4) {
    std::vector<uint8_t> b(pf8.begin(), pf8.begin() + long(cut));
    out.clear();
    bool ok = disassemble(b.data(), b.size(), out, err);
    CHECK_FALSE(ok);
    CHECK(err.find("clause at byte 0x0") != std::string::npos);
  }
  CHECK(err.find("truncated") != std::string::npos);
  std::vector<uint8_t> two = {0x4a, 0x00};
  CHECK_FALSE(disassemble(two.data(), two.size(), out, err));
  CHECK(err.find("too few for a clause") != std::string::npos);
  two = {0, 0};
  CHECK(disassemble(two.data(), two.size(), out, err));
  // Invalid tags 0x00 (nonzero rest) and 0x02.
  std::vector<uint8_t> bad(16, 0);
  bad[0] = 0x02;
  bad[5] = 1;
  CHECK_FALSE(disassemble(bad.data(), bad.size(), out, err));
  CHECK(err.find("invalid tag 0x2") != std::string::npos);
  // A constant quadword whose position does not match the tuple count.
  std::vector<uint8_t> pf1 = unhex("0a000020021ccb8023e000c008008010");  // fmt 0' without stop
  std::vector<uint8_t> b = pf1;
  b.resize(32, 0);
  b[16] = 0x71;  // pos 1 = 2 tuples
  CHECK_FALSE(disassemble(b.data(), b.size(), out, err));
  CHECK(err.find("quadword 1") != std::string::npos);
  CHECK(err.find("expects 2 tuples") != std::string::npos);
  b[16] = 0x70;  // pos 0 = 1 tuple: fine
  out.clear();
  CHECK_MESSAGE(disassemble(b.data(), b.size(), out, err), err);
  // Reserved header bits.
  b = unhex("4a000020021ccb8023e000c008008010");
  Clause c;
  REQUIRE(unpack_clause(b.data(), b.size(), 0, c, err));
  c.header.bits |= 1;
  std::vector<uint8_t> packed;
  REQUIRE(pack_clause(c, packed, err));
  CHECK_FALSE(disassemble(packed.data(), packed.size(), out, err));
  CHECK(err.find("reserved header bits") != std::string::npos);
  // Random bytes: an answer or an error, nothing else.
  std::mt19937_64 rng(7);
  unsigned ok = 0, rejected = 0;
  for (int i = 0; i < (light() ? 2000 : 20000); ++i) {
    std::vector<uint8_t> r(size_t(1 + rng() % 160));
    for (auto& x : r) x = uint8_t(rng());
    out.clear();
    if (disassemble(r.data(), r.size(), out, err)) ++ok;
    else {
      ++rejected;
      CHECK(err.rfind("bifrost: clause at byte", 0) == 0);
    }
  }
  CHECK(rejected > 0);
}

TEST_CASE("bifrost assembler errors") {
  std::vector<uint8_t> out;
  std::string err;
  auto fails = [&](const std::string& text, const std::string& what) {
    out.clear();
    bool ok = assemble(text, out, err);
    CHECK_FALSE(ok);
    CHECK_MESSAGE(err.find(what) != std::string::npos, err);
  };
  const std::string head = "clause_0:\nds(0) eos \n{\n";
  fails(head + "    *FOO t0\n    +NOP t1\n}\n", "unknown instruction");
  fails(head + "    *NOP t0\n}\n", "without its ADD partner");
  fails(head + "    +NOP t1\n    *NOP t0\n}\n", "expected an FMA");
  fails(head + "    *FADD.f32 t0, r1, q7\n    +NOP t1\n}\n", "unknown operand");
  fails(head + "    *FADD.f32 t0, r1, r2, r3\n    +NOP t1\n}\n", "takes 2 operands");
  fails(head + "    *FADD.f32.bogus t0, r1, r2\n    +NOP t1\n}\n", "modifiers");
  fails(head + "    *FADD.f32 t0, r1, r2\n    +FADD.f32 t1, r3, r4\n}\n", "registers");
  fails(head + "    *FADD.f32 t0, u1.w0, lane_id.x\n    +NOP t1\n}\n", "two different FAU values");
  fails(head + "    *FADD.f32 t0, 0x00000001, 0x00000002\n    +FADD.f32 t1, 0x00000003, t\n}\n", "at most two 32-bit constants");
  fails("clause_0:\nds(0) sometimes \n{\n    *NOP t0\n    +NOP t1\n}\n", "unknown clause header word");
  fails("clause_0:\nds(0) \n{\n    *NOP t0\n    +NOP t1\n}\n", "without flow control");
  fails("hello\n", "expected a clause label");
  fails(head + "    *NOP t0\n    +FRCP.f32 t1, t\n}\n", "cannot be 't'");
  fails(head + "    INSTR_INVALID_ENC fma 7FF800\n    +NOP t1\n}\n", "knew no encoding");
  fails(head + "    *NOP t0\n    +NOP t1\n", "unterminated clause");
  fails(head + "    *NOP t0\n    +IADD.s32 t1, clause_3 >> 32, t\n}\n", "64-bit PC-relative");
  fails(head + "    *NOP t0\n    +IADD.s32 t1, clause_3, u1.w1\n}\n", "two different FAU values");
  // Garbled disassembly: errors, no crashes.
  std::mt19937_64 rng(3);
  std::vector<uint8_t> b;
  REQUIRE(random_clause(rng, b, err));
  std::string text;
  REQUIRE(disassemble(b.data(), b.size(), text, err));
  const char alphabet[] = " .,:#@rtux0123456789abcdef*+(){}/\n";
  for (int i = 0; i < (light() ? 300 : 3000); ++i) {
    std::string t = text;
    for (int k = 0; k < 1 + int(rng() % 3); ++k) t[rng() % t.size()] = alphabet[rng() % (sizeof alphabet - 1)];
    out.clear();
    (void)assemble(t, out, err);
  }
}

TEST_CASE("bifrost ISA module: codec, replay, translation and fuzzing wired") {
  const isa::IsaModule* m = nullptr;
  for (const isa::IsaModule* x : isa::all_modules())
    if (x->name() == "bifrost") m = x;
  REQUIRE(m);
  auto v = m->variants();
  CHECK(std::find(v.begin(), v.end(), "g71") != v.end());
  CHECK(std::find(v.begin(), v.end(), "g72") != v.end());
  CHECK(std::find(v.begin(), v.end(), "g76") != v.end());
  for (const Model& md : models()) CHECK((md.warp_width == 4 || md.warp_width == 8));
  std::vector<uint8_t> pf1 = unhex("4a000020021ccb8023e000c008008010");
  std::string out, err;
  DisasmOptions opt;
  opt.raw = true;
  REQUIRE(m->disassemble(pf1, opt, out, err));
  CHECK(norm(out) == norm(find_case("PackFormats.1")->text));
  std::vector<uint8_t> back;
  REQUIRE(m->assemble(out, "g76", back, err));
  CHECK(back == pf1);
  ir::Function f;
  CHECK_FALSE(m->translate(pf1, "", f, err));  // an attribute-unit message: unsupported
  CHECK(err.find("+LD_ATTR_IMM") != std::string::npos);
  opt.variant = "g99";
  CHECK_FALSE(m->disassemble(pf1, opt, out, err));
  CHECK(err.find("unknown variant") != std::string::npos);
  CHECK(m->has_replay());
  CHECK(m->fuzz_capable());
}

TEST_CASE("bifrost 64-bit clause register blocks (seed page): encode/decode agree") {
  const unsigned regs[] = {0, 2, 10, 30, 32, 44, 62};
  const int writes[] = {-1, 0, 8, 34, 62};
  unsigned checked = 0;
  for (unsigned nread = 0; nread <= 3; ++nread)
    for (unsigned a : regs)
      for (unsigned b : regs)
        for (unsigned c : regs) {
          std::vector<unsigned> reads;
          for (unsigned r : {a, b, c})
            if (reads.size() < nread && std::find(reads.begin(), reads.end(), r) == reads.end()) reads.push_back(r);
          if (reads.size() != nread) continue;
          for (int wf : writes)
            for (int wa : writes) {
              uint64_t bits = 0;
              std::string err;
              bool ok = encode_regs64(reads, wf, wa, 0x85, bits, err);
              if (nread == 3 && wf >= 0 && wa >= 0) {
                CHECK_FALSE(ok);
                continue;
              }
              REQUIRE_MESSAGE(ok, err);
              RegMode64 m = decode_regs64(bits);
              INFO("reads " << nread << " bits " << std::hex << bits);
              REQUIRE_MESSAGE(m.valid, m.why);
              CHECK((bits & 0xff) == 0x85);
              std::vector<unsigned> got;
              if (m.read0) got.push_back(m.reg0);
              if (m.read1) got.push_back(m.reg1);
              if (m.port2 == RegMode64::Port2::Read) got.push_back(m.reg2);
              std::vector<unsigned> want = reads;
              std::sort(want.begin(), want.end());
              std::sort(got.begin(), got.end());
              CHECK(got == want);
              int gf = -1, ga = -1;
              if (m.port2 == RegMode64::Port2::WriteFma) gf = int(m.reg2);
              if (m.port2 == RegMode64::Port2::WriteAdd) ga = int(m.reg2);
              if (m.port3 == RegMode64::Port3::WriteFma) gf = int(m.reg3);
              if (m.port3 == RegMode64::Port3::WriteAdd) ga = int(m.reg3);
              CHECK(gf == wf);
              CHECK(ga == wa);
              ++checked;
            }
        }
  CHECK(checked > 1000);
  // Invalid: bits 32-34 not 7, a port control in the main field, disagreeing controls.
  CHECK_FALSE(decode_regs64(0).valid);
  CHECK_FALSE(decode_regs64(uint64_t(7) << 32 | uint64_t(0) << 27).valid);
  CHECK_FALSE(decode_regs64(uint64_t(7) << 32 | uint64_t(29) << 27 | uint64_t(12) << 22).valid);
}

TEST_CASE("bifrost 64-bit clause text: pairs by default, Mesa's 32-bit-block text under raw") {
  const isa::IsaModule* m = nullptr;
  for (const isa::IsaModule* x : isa::all_modules())
    if (x->name() == "bifrost") m = x;
  REQUIRE(m);
  // examples/bifrost/pair64.s's 64-bit clause, alone at offset 0.
  const std::string pairs =
      "clause_0:\nds(0) nbb 64 regs64\n{\n"
      "    *FMA.f32 r4:t0, r0, r2, u3.w0\n    +NOP t1\n"
      "    *NOP t0\n    +FMAX.f32 r6:t1, r0, r2\n"
      "    *MOV.i32 t0, r0\n    +IADD.u32 r8:t1, t, r2\n}\n";
  std::vector<uint8_t> b;
  std::string err;
  REQUIRE_MESSAGE(assemble(pairs, b, err), err);
  CHECK(b == unhex("29834440d8470800906507c00000c0032000c240d81fcb802300001802c23e5a4400000000000000000030e08bc601a0"));
  // The default text names the pairs and reassembles to the same bytes.
  std::string def;
  REQUIRE_MESSAGE(disassemble(b.data(), b.size(), def, err), err);
  CHECK(norm(def) == norm(pairs));
  std::vector<uint8_t> back;
  REQUIRE_MESSAGE(assemble(def, back, err), err);
  CHECK(back == b);
  // Mesa's Bifrost disassembler on these bytes (recorded output): every block
  // read as a 32-bit block, so other registers, and write masks that the
  // 64-bit block does not have.
  const std::string mesa =
      "clause_0:\nds(0) nbb 64 \n{\n"
      "    *FMA.f32 r3:t0, r4, r44, u3.w0\n    +NOP r2:t1\n"
      "    *NOP r1:t0\n    +FMAX.f32 r3:t1, r4, r44\n"
      "    *MOV.i32 t0, r4\n    +IADD.u32 r4:t1.h1, t, r44\n}\n";
  std::string raw;
  REQUIRE_MESSAGE(disassemble(b.data(), b.size(), raw, err, Clause64Text::Mesa), err);
  CHECK(norm(raw) == norm(mesa));
  // The module's raw option (`gpurc disasm --raw`) selects that text.
  DisasmOptions opt;
  opt.raw = true;
  std::string via_module;
  REQUIRE_MESSAGE(m->disassemble(b, opt, via_module, err), err);
  CHECK(via_module == raw);
  opt.raw = false;
  via_module.clear();
  REQUIRE_MESSAGE(m->disassemble(b, opt, via_module, err), err);
  CHECK(via_module == def);

  // A 64-bit clause whose tuple 1 block, read as a 32-bit block, selects the
  // reserved mode 30 (Mesa's tool aborts on it in DecodeRegCtrl): under raw,
  // one note line names the clause, tuple and mode; the assembler rejects it.
  const std::string aborting =
      "clause_0:\nds(0) nbb 64 regs64\n{\n"
      "    *IMUL.v4i8 r2:t0, u8.w0, t1\n    +ISUB.v2u16.sat r4:t1, r14, u8.w0.h10\n"
      "    *FREXPE.f32.sqrt t0, r8.neg\n    +ICMPI.s32.m1.ge t1, warp_id.x, r14\n}\n";
  REQUIRE_MESSAGE(assemble(aborting, b, err), err);
  def.clear();
  REQUIRE_MESSAGE(disassemble(b.data(), b.size(), def, err), err);
  CHECK(norm(def) == norm(aborting));
  REQUIRE_MESSAGE(assemble(def, back, err), err);
  CHECK(back == b);
  Clause c;
  REQUIRE(unpack_clause(b.data(), b.size(), 0, c, err));
  REQUIRE(c.ntuples == 2);
  CHECK(decode_regs(RegBlock::from_bits(c.tuples[1].regs), false).reserved);
  CHECK(decode_regs(RegBlock::from_bits(c.tuples[1].regs), false).mode == 30);
  raw.clear();
  REQUIRE_MESSAGE(disassemble(b.data(), b.size(), raw, err, Clause64Text::Mesa), err);
  CHECK(raw ==
        "clause_0: (64-bit clause; Mesa's disassembler aborts on it: tuple 1's register block read as a 32-bit "
        "block selects reserved slot mode 30)\n\n");
  CHECK_FALSE(assemble(raw, back, err));
  CHECK(err.find("clause label") != std::string::npos);
  // Followed by a 32-bit clause: that clause still prints (Mesa's text of it alone).
  std::vector<uint8_t> two = b;
  std::vector<uint8_t> pf1 = unhex("4a000020021ccb8023e000c008008010");
  two.insert(two.end(), pf1.begin(), pf1.end());
  raw.clear();
  REQUIRE_MESSAGE(disassemble(two.data(), two.size(), raw, err, Clause64Text::Mesa), err);
  const std::string label = "clause_" + std::to_string(c.quadwords) + ":\n";
  const size_t second = raw.find(label);
  REQUIRE(second != std::string::npos);
  std::string pf1_text;
  REQUIRE(disassemble(pf1.data(), pf1.size(), pf1_text, err));
  CHECK(norm(raw.substr(second + label.size())) == norm(pf1_text.substr(pf1_text.find('\n') + 1)));
}

}  // namespace gpurc_test_bifrost_test_bifrost_codec
