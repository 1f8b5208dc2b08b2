// G13 assembler: exact bytes for every verified vector, round trips over
// Mesa's cases and over random instructions of every descriptor.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "frontend/g13/g13.h"

namespace gpurc_test_g13_test_g13_asm {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;

namespace {

std::vector<uint8_t> unhex(const std::string& s) {
  std::vector<uint8_t> b;
  for (size_t i = 0; i + 1 < s.size(); i += 2) b.push_back(uint8_t(std::stoul(s.substr(i, 2), nullptr, 16)));
  return b;
}
std::string hex(const std::vector<uint8_t>& b) {
  std::string s;
  char buf[4];
  for (uint8_t x : b) {
    std::snprintf(buf, sizeof buf, "%02x", x);
    s += buf;
  }
  return s;
}
std::string data_path(const char* name) { return std::string(GPURC_TEST_DATA) + "/examples/g13/" + name; }
bool light() { return std::getenv("GPURC_TEST_LIGHT") != nullptr; }

// disassemble(bytes) -> assemble -> disassemble must reproduce the text, and
// assembling that text again must reproduce the same bytes (canonical form).
void check_round_trip(const std::vector<uint8_t>& bytes, bool expect_same_bytes, int& exact, int& total) {
  g13::Insn in;
  fe::Diagnostic err;
  REQUIRE(g13::decode(bytes.data(), bytes.size(), 0, in, err));
  const std::string text = g13::disassemble(in, 0);
  std::vector<uint8_t> out;
  std::string aerr;
  const bool ok = g13::assemble_one(text, 0, out, aerr);
  CHECK_MESSAGE(ok, hex(bytes) << ": " << text << ": " << aerr);
  if (!ok) return;
  g13::Insn in2;
  REQUIRE(g13::decode(out.data(), out.size(), 0, in2, err));
  CHECK_MESSAGE(g13::disassemble(in2, 0) == text, hex(bytes));
  std::vector<uint8_t> again;
  REQUIRE(g13::assemble_one(text, 0, again, aerr));
  CHECK(again == out);
  ++total;
  if (out == std::vector<uint8_t>(bytes.begin(), bytes.begin() + in.size)) ++exact;
  else if (expect_same_bytes) CHECK_MESSAGE(false, "bytes differ: " << hex(bytes) << " -> " << hex(out) << " " << text);
}

}  // namespace

TEST_CASE("g13 assembler reproduces every verified vector byte for byte") {
  std::ifstream f(data_path("known_vectors.json"));
  REQUIRE(f.good());
  const auto j = nlohmann::json::parse(f);
  int n = 0;
  for (const auto& v : j["vectors"]) {
    const std::string text = v["applegpu_disassembly"].get<std::string>();
    const std::string bytes = v["bytes_hex_memory_order"].get<std::string>();
    std::vector<uint8_t> out;
    std::string err;
    const bool ok = g13::assemble_one(text, 0, out, err);
    CHECK_MESSAGE(ok, text << ": " << err);
    CHECK_MESSAGE(hex(out) == bytes, text);
    ++n;
  }
  CHECK(n == 136);
}

TEST_CASE("g13 assembler round trips Mesa's cases") {
  std::ifstream f(data_path("mesa-cases.txt"));
  REQUIRE(f.good());
  std::string line;
  int exact = 0, total = 0;
  while (std::getline(f, line)) {
    std::istringstream ls(line);
    std::string h;
    ls >> h;
    if (h.empty()) continue;
    check_round_trip(unhex(h), false, exact, total);
  }
  CHECK(total == 555);
  MESSAGE("byte-identical: " << exact << " of " << total);
}

TEST_CASE("g13 assembler round trips random instructions of every descriptor") {
  std::mt19937_64 rng(1234);
  const int per_desc = light() ? 20 : 200;
  int exact = 0, total = 0, tried = 0;
  for (const auto& d : g13::table()) {
    for (int i = 0; i < per_desc; ++i) {
      std::vector<uint8_t> bytes;
      if (!g13::random_instruction(d, rng, bytes)) continue;  // shadowed by an earlier entry
      g13::Insn in;
      fe::Diagnostic err;
      REQUIRE(g13::decode(bytes.data(), bytes.size(), 0, in, err));
      const std::string text = g13::disassemble(in, 0);
      if (text.find("None") != std::string::npos) continue;  // undefined operand types print "None"
      ++tried;
      check_round_trip(bytes, false, exact, total);
    }
  }
  CHECK(tried > 1000);
  MESSAGE("random: " << total << " round trips, byte-identical " << exact);
}

TEST_CASE("g13 assembler: labels, comments, errors name the line") {
  std::vector<uint8_t> out;
  std::string err;
  REQUIRE(g13::assemble("top:\n  mov_imm r0l, 1   # comment\n  jmp_exec_any top ; stop", out, err));
  CHECK(hex(out) == "6200010000c0fcffffff8800");
  out.clear();
  CHECK_FALSE(g13::assemble("stop\nfrobnicate r0", out, err));
  CHECK(err.find("line 2") != std::string::npos);
  CHECK(err.find("frobnicate") != std::string::npos);
  CHECK_FALSE(g13::assemble("iadd r0, r1", out, err));
  CHECK_FALSE(g13::assemble("mov_imm r0l, 70000", out, err));
}

}  // namespace gpurc_test_g13_test_g13_asm
