// G13 decoder and disassembler against the reference's verified vectors
// (applegpu's own output) and decode coverage over Mesa's disassembler cases.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "frontend/g13/g13.h"
#include "recompiler/cli.h"
#include "recompiler/isa.h"

namespace gpurc_test_g13_test_g13_disasm {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;

namespace {

std::vector<uint8_t> unhex(const std::string& s) {
  std::vector<uint8_t> b;
  for (size_t i = 0; i + 1 < s.size(); i += 2) b.push_back(uint8_t(std::stoul(s.substr(i, 2), nullptr, 16)));
  return b;
}

std::string data_path(const char* name) { return std::string(GPURC_TEST_DATA) + "/examples/g13/" + name; }

}  // namespace

TEST_CASE("g13 table: 161 descriptors in reference order, fields inside the long form") {
  const auto& t = g13::table();
  REQUIRE(t.size() == 161);
  for (size_t i = 0; i < t.size(); ++i) {
    CHECK(t[i].index == int(i));
    for (const auto& f : t[i].fields)
      for (const auto& p : f.parts) CHECK_MESSAGE(p.lo + p.width <= t[i].max_bits(), t[i].name << " " << f.name);
  }
}

TEST_CASE("g13 disassembler matches every verified applegpu vector") {
  std::ifstream f(data_path("known_vectors.json"));
  REQUIRE(f.good());
  const auto j = nlohmann::json::parse(f);
  int n = 0;
  for (const auto& v : j["vectors"]) {
    const auto bytes = unhex(v["bytes_hex_memory_order"].get<std::string>());
    const std::string expect = v["applegpu_disassembly"].get<std::string>();
    g13::Insn in;
    fe::Diagnostic err;
    REQUIRE_MESSAGE(g13::decode(bytes.data(), bytes.size(), 0, in, err), err.message);
    CHECK_MESSAGE(in.size == v["length"].get<unsigned>(), expect);
    CHECK(g13::disassemble(in, 0) == expect);
    ++n;
  }
  CHECK(n == 136);
}

TEST_CASE("g13 truncated input is a clear error with the byte offset") {
  const uint8_t fmadd_long[] = {0x3a, 0x8c, 0x40, 0x22, 0x24, 0x44, 0x02};  // 8-byte fmadd32, 7 bytes given
  g13::Insn in;
  fe::Diagnostic err;
  CHECK_FALSE(g13::decode(fmadd_long, sizeof fmadd_long, 0x40, in, err));
  CHECK(err.address == 0x40);
  CHECK(err.message.find("fmadd32") != std::string::npos);
  CHECK(err.message.find("64") != std::string::npos);  // offset in decimal
  const uint8_t one[] = {0x88};
  CHECK_FALSE(g13::decode(one, 1, 6, in, err));
  CHECK(err.message.find("truncated") != std::string::npos);
  std::string out;
  const uint8_t prog[] = {0x88};
  CHECK_FALSE(g13::disassemble_buffer(prog, 1, true, out, err));
}

TEST_CASE("g13 buffer disassembly: skips zero padding and stops after stop") {
  const std::vector<uint8_t> prog = unhex("0501040d00c43200" "3800" "00000000" "0a01c082" "8800" "0800");
  std::string out;
  fe::Diagnostic err;
  REQUIRE(g13::disassemble_buffer(prog.data(), prog.size(), true, out, err));
  CHECK(out == "device_load 0, i32, xy, r0_r1, u2_u3, 0, signed, lsl 1\nwait 0\nrcp r0, r0.discard\nstop\n");
  std::string listing;
  REQUIRE(g13::disassemble_buffer(prog.data(), prog.size(), false, listing, err));
  CHECK(listing.find("   e: 0a01c082") != std::string::npos);
}

// Mesa mnemonic -> applegpu mnemonic prefixes that may print for it.
static bool same_family(const std::string& mesa, const std::string& apple) {
  static const std::multimap<std::string, std::string> map = {
      {"jmp_any", "jmp_exec_any"}, {"jmp_none", "jmp_exec_none"}, {"csel", "icmpsel"}, {"csel", "fcmpsel"},
      {"ffma", "fmadd32"}, {"hfma", "fmadd16"}, {"fadd", "fadd32"}, {"hadd", "fadd16"}, {"fmul", "fmul32"},
      {"hmul", "fmul16"}, {"load", "device_load"}, {"load", "tex_state_store"}, {"load", "sampler_state_store"},
      {"store", "device_store"}, {"lload", "threadgroup_load"}, {"lstore", "threadgroup_store"},
      {"latomic", "threadgroup_atomic"}, {"smpf", "texture_sample"}, {"smpi", "texture_load"},
      {"imgw", "image_write"}, {"imgwblk", "image_write_block"}, {"pixwait", "wait_pix"},
      {"pixrel", "signal_pix"}, {"barrier", "threadgroup_barrier"}, {"ldimm", "mov_imm"}, {"mov", "get_sr"},
      {"mov", "uniform_store"}, {"mov", "mov"}, {"mov", "mov_imm"}, {"ballot", "icmp_ballot"},
      {"imul", "imadd"}, {"imul", "imsub"}, {"shl", "bfi"}, {"shr", "bfeil"}, {"popcnt", "popcount"},
      {"rsqrts", "rsqrt_special"}, {"sinr", "sin_pt_1"}, {"sinc", "sin_pt_2"}, {"shuffle", "simd_shuffle"},
      {"shuffle", "quad_shuffle"}, {"simd", "simd_"}, {"simd", "quad_"}, {"if", "if_"}, {"if", "push_exec"},
      {"if", "update_exec"}, {"else", "else_"}, {"while", "while_"}, {"iter", "iter"}, {"ldcf", "TODO.ldcf"},
      {"stack_adjust", "stack_store"}, {"stack_map", "map"}, {"stack_unmap", "unmap"}, {"atomic", "atomic"},
      {"memory_barrier", "memory_barrier"}, {"image_barrier", "memory_barrier"}, {"flush_memory_to_texture", "memory_barrier"},
      {"device_barrier", "memory_barrier"}, {"unknown_barrier", "memory_barrier"}, {"no_varyings", "no_var"},
      {"st_var", "st_var"}, {"sample_mask", "sample_mask"}, {"zs_emit", "zs_emit"}, {"ld_tile", "ld_tile"},
      {"st_tile", "st_tile"}, {"stack_load", "stack_load"}, {"stack_store", "stack_store"},
      {"stack_get_ptr", "stack_load"}, {"ret", "ret"}, {"call", "call"}, {"stop", "stop"}, {"trap", "trap"},
      {"wait", "wait"}, {"doorbell", "doorbell"}, {"jmp_if_skipping_doorbell", "jmp_if_skipping_doorbell"},
      {"update_exec", "update_exec"}, {"pop_exec", "pop_exec"}, {"f_to_u32", "convert"}, {"f_to_s32", "convert"},
      {"u32_to_f", "convert"}, {"s32_to_f", "convert"}, {"u16_to_f", "convert"}, {"s16_to_f", "convert"},
      {"f_to_u16", "convert"}, {"f_to_s16", "convert"}, {"u8_to_f", "convert"}, {"s8_to_f", "convert"},
  };
  auto starts = [](const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; };
  if (starts(apple, mesa)) return true;  // identical names (iadd, bfeil, rcp, asr, ...)
  for (auto [it, end] = map.equal_range(mesa); it != end; ++it)
    if (starts(apple, it->second)) return true;
  for (const auto& [m, a] : map)
    if (starts(mesa, m) && (m == "image_barrier" || m == "memory_barrier" || m == "device_barrier" || m == "unknown_barrier" || m == "stack_adjust") &&
        starts(apple, a))
      return true;
  // Mesa's bitop names all come from applegpu's bitop (aliased or raw).
  static const char* bitops[] = {"zero", "and", "andn1", "andn2", "xor", "or", "nor", "xnor", "orn1", "orn2",
                                 "nand", "one", "not", "mov", "not_a", "mov_a"};
  for (const char* b : bitops)
    if (mesa == b)
      return apple == "bitop" || apple == "bitop_mov_a" || apple == "and" || apple == "or" || apple == "xor" ||
             apple == "nand" || apple == "nor" || apple == "not" || apple == "mov";
  return false;
}

TEST_CASE("g13 decode coverage: every Mesa case decodes with the right length and family") {
  std::ifstream f(data_path("mesa-cases.txt"));
  REQUIRE(f.good());
  std::string line;
  int n = 0, family_ok = 0;
  while (std::getline(f, line)) {
    std::istringstream ls(line);
    std::string hex, mesa_mnem;
    ls >> hex >> mesa_mnem;
    if (hex.empty()) continue;
    const auto bytes = unhex(hex);
    g13::Insn in;
    fe::Diagnostic err;
    REQUIRE_MESSAGE(g13::decode(bytes.data(), bytes.size(), 0, in, err), hex << ": " << err.message);
    CHECK_MESSAGE(in.size == bytes.size(), hex);
    const std::string text = g13::disassemble(in, 0);
    const std::string apple = text.substr(0, text.find(' '));
    const bool ok = same_family(mesa_mnem, apple);
    CHECK_MESSAGE(ok, hex << ": mesa " << mesa_mnem << " vs " << text);
    family_ok += ok;
    ++n;
  }
  CHECK(n == 555);
  CHECK(family_ok == n);
}

TEST_CASE("g13 IsaModule: byte hex unit, raw disassembly, assembly round trip") {
  const isa::IsaModule& isa = *find_isa("g13");
  CHECK(isa.name() == "g13");
  CHECK(isa.hex_unit_bytes() == 1);
  const std::vector<uint8_t> code = unhex("0a01c082" "8800");
  std::string out, err;
  DisasmOptions opt;
  opt.raw = true;
  REQUIRE_MESSAGE(isa.disassemble(code, opt, out, err), err);
  CHECK(out == "rcp r0, r0.discard\nstop\n");
  std::vector<uint8_t> bytes;
  REQUIRE_MESSAGE(isa.assemble(out, "", bytes, err), err);
  CHECK(bytes == code);
  CHECK_FALSE(isa.disassemble({0x3a, 0x8c, 0x40}, opt, out, err));
  CHECK(err.find("offset 0") != std::string::npos);
}


TEST_CASE("g13 cli: `gpurc disasm --isa g13 --hex --raw` prints applegpu's text for every verified vector") {
  std::ifstream f(data_path("known_vectors.json"));
  REQUIRE(f.good());
  const auto j = nlohmann::json::parse(f);
  const auto path = std::filesystem::temp_directory_path() / ("gpurc-g13-cli-" + std::to_string(getpid()) + ".hex");
  auto squash = [](const std::string& s) {  // "up to whitespace"
    std::istringstream in(s);
    std::string w, out;
    while (in >> w) out += (out.empty() ? "" : " ") + w;
    return out;
  };
  int n = 0;
  for (const auto& v : j["vectors"]) {
    std::ofstream(path) << v["bytes_hex_memory_order"].get<std::string>() << "\n";
    std::vector<std::string> args = {"gpurc", "disasm", "--isa", "g13", "--hex", "--raw", path.string()};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::ostringstream out, err;
    REQUIRE(run_cli(int(args.size()), argv.data(), out, err) == 0);
    CHECK(squash(out.str()) == squash(v["applegpu_disassembly"].get<std::string>()));
    ++n;
  }
  std::filesystem::remove(path);
  CHECK(n == 136);
}

}  // namespace gpurc_test_g13_test_g13_disasm
