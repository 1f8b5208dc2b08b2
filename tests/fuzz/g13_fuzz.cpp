// The G13 differential fuzzer: the generator's programs are valid and
// deterministic, the comparison sees differences, reproducers replay, and a
// campaign of random programs finds no mismatch between the reference
// interpreter and the translation on every engine.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <set>

#include "frontend/g13/g13.h"
#include "frontend/g13/translate.h"
#include "frontend/g13/module/fuzz_gen.h"
#include "frontend/g13/module/module.h"
#include "fuzz/isa_fuzz.h"
#include "recompiler/replay.h"

namespace gpurc_test_fuzz_g13_fuzz {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::fuzz;

namespace {

bool light_run() {
  const char* e = std::getenv("GPURC_TEST_LIGHT");
  return e && *e && std::string(e) != "0";
}

std::string disasm(const std::vector<uint8_t>& code) {
  std::string out;
  fe::Diagnostic d;
  uint64_t pc = 0;
  while (pc < code.size()) {
    g13::Insn in;
    REQUIRE(g13::decode(code.data() + pc, code.size() - pc, pc, in, d));
    out += g13::disassemble(in, pc) + "\n";
    pc += in.size;
  }
  return out;
}

}  // namespace

TEST_CASE("g13 fuzz: the generator is deterministic and its programs run on the interpreter") {
  Rng a(5), b(5), c(6);
  G13FuzzProgram pa = generate_g13_program(a), pb = generate_g13_program(b), pc = generate_g13_program(c);
  CHECK(pa.code == pb.code);
  CHECK(pa.memory == pb.memory);
  CHECK(pa.code != pc.code);

  std::set<std::string> mnemonics;
  Rng rng(77);
  const int n = light_run() ? 20 : 100;
  unsigned partial = 0, two_groups = 0;
  for (int i = 0; i < n; ++i) {
    G13FuzzProgram p = generate_g13_program(rng);
    partial += p.threads % 32 != 0;
    two_groups += p.groups() == 2;
    G13Outcome ref = run_g13_reference(p);
    REQUIRE_MESSAGE(ref.error.empty(), ref.error);
    REQUIRE_MESSAGE(!ref.fault, ref.fault_text);  // memory is always in bounds, loops bounded
    std::string text = disasm(p.code);
    size_t pos = 0;
    while (pos < text.size()) {
      size_t end = text.find('\n', pos);
      mnemonics.insert(text.substr(pos, std::min(text.find(' ', pos), end) - pos));
      pos = end + 1;
    }
  }
  CHECK(partial > 0);
  CHECK(two_groups > 0);
  for (const char* m : {"if_icmp", "while_icmp", "jmp_exec_any", "pop_exec", "device_load", "device_store",
                        "jmp_exec_none", "mov_imm", "uniform_store", "threadgroup_store", "threadgroup_barrier",
                        "threadgroup_load"})
    CHECK_MESSAGE(mnemonics.count(m), std::string(m));
  // The random-instruction part draws from many table descriptors.
  MESSAGE("random instructions come from " << g13_fuzz_descriptors().size() << " descriptors, programs used "
                                            << mnemonics.size() << " mnemonics");
  CHECK(g13_fuzz_descriptors().size() >= 10);
  CHECK(mnemonics.size() >= 15);
}

TEST_CASE("g13 fuzz: the comparison sees register, memory and status differences") {
  Rng rng(3);
  G13FuzzProgram p = generate_g13_program(rng);
  while (p.threads >= 32 || p.threads < 5) p = generate_g13_program(rng);  // a partial SIMD-group
  G13Outcome ref = run_g13_reference(p);
  REQUIRE_MESSAGE(ref.error.empty(), ref.error);
  CHECK(compare_g13(p, ref, ref).empty());
  G13Outcome got = ref;
  got.groups[0].regs[9][3] ^= 1;
  CHECK(compare_g13(p, ref, got).find("r4h thread 3") != std::string::npos);
  got = ref;
  got.groups[0].regs[9][31] ^= 1;  // lane 31 is not launched: not compared
  CHECK(compare_g13(p, ref, got).empty());
  got = ref;
  got.memory[100] ^= 0x80;
  CHECK(compare_g13(p, ref, got).find("memory") != std::string::npos);
  got = ref;
  got.groups[0].uniforms[77] ^= 4;  // u38h
  CHECK(compare_g13(p, ref, got).find("u38h") != std::string::npos);
  // The second SIMD-group of a two-group program is compared too.
  G13FuzzProgram p2 = generate_g13_program(rng);
  while (p2.groups() < 2) p2 = generate_g13_program(rng);
  G13Outcome ref2 = run_g13_reference(p2);
  REQUIRE_MESSAGE(ref2.error.empty(), ref2.error);
  G13Outcome got2 = ref2;
  got2.groups[1].regs[9][0] ^= 1;
  CHECK(compare_g13(p2, ref2, got2).find("r4h thread 32") != std::string::npos);
  got = ref;
  got.fault = true;
  got.fault_text = "fault trap";
  CHECK(compare_g13(p, ref, got).find("status") != std::string::npos);
}

TEST_CASE("g13 fuzz: a reproducer is a replay file that passes on the interpreter and every engine") {
  Rng rng(11);
  // Three programs, the last of two SIMD-groups: the replay runs them through
  // the launch of frontend/g13/module/launch.h, which must agree with the fuzzer's.
  for (int i = 0; i < 3; ++i) {
    G13FuzzProgram p = generate_g13_program(rng);
    while (i == 2 && p.groups() < 2) p = generate_g13_program(rng);
    G13Outcome ref = run_g13_reference(p);
    REQUIRE(ref.error.empty());
    replay::json doc = replay::json::parse(g13_replay_text(p, ref, "t", "note"));
    for (Engine e : host_engines()) {
      CAPTURE(engine_name(e));
      replay::ReplayRun r = replay::run_document(doc, ".", e, 1, false);
      REQUIRE(!r.fault);
      auto mm = replay::check_expect(doc, r);
      CHECK_MESSAGE(mm.empty(), (mm.empty() ? "" : mm[0].what + ": expected " + mm[0].expected + ", got " + mm[0].actual));
    }
  }
}

TEST_CASE("g13 fuzz: interpreter vs translation on every engine, bit for bit") {
  IsaFuzzOptions opt;
  opt.iterations = light_run() ? 60 : 500;
  opt.seed = 1;
  opt.out_dir = (std::filesystem::temp_directory_path() / "gpurc-test-g13-fuzz").string();
  IsaFuzzReport r = run_isa_fuzz(g13_module(), opt);
  REQUIRE_MESSAGE(r.error.empty(), r.error);
  CHECK(r.programs == opt.iterations);
  CHECK(r.runs >= r.programs * 2);
  for (size_t i = 0; i < r.mismatches.size() && i < 5; ++i)
    MESSAGE("iteration " << r.mismatches[i].iteration << " " << r.mismatches[i].engine << ": "
                         << r.mismatches[i].what << " (" << r.mismatches[i].reproducer << ")");
  CHECK(r.mismatches.empty());
}

}  // namespace gpurc_test_fuzz_g13_fuzz
