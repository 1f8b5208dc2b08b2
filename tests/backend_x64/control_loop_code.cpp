// The host code of G13 `alu`'s loop (examples/g13/int_hash.s, translated as
// the bench runs it: exec_starts_launched, registers_unobserved) with
// uniform loop control (backend_x64/loops.cpp, emit_control_loop;
// docs/backend_x64.md, "Issue 13, twelfth session"): the loop counter and
// the r0l exec-stack field run once per iteration in a control loop, and the
// strips then run only the hash, two strips per iteration. Before (eleventh
// session), per strip and iteration about 37 instructions (AVX2), 30 of them
// loop control, and two null tests of the uniform pointer in the first
// strip. A tier the host lacks is checked on its listing
// (JitOptions::listing_only).
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "backend_x64/jit.h"
#include "frontend/g13/g13.h"
#include "frontend/g13/translate.h"
#include "ir/passes.h"
#include "tests/backend_x64/tier_compile.h"

namespace gpurc_test_backend_x64_control_loop_code {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::x64;

namespace {

struct Line {
  uint64_t off;
  std::string text;
};

std::vector<Line> listing_lines(const CompiledFunction& cf) {
  std::vector<Line> lines;
  std::istringstream in(cf.disassemble());
  for (std::string l; std::getline(in, l);) {
    std::istringstream ls(l);
    Line x;
    if (!(ls >> std::hex >> x.off)) continue;
    std::getline(ls >> std::ws, x.text);
    lines.push_back(x);
  }
  return lines;
}

// The loop whose back edge is the jump after `marker` (the control loop:
// the branch's scalar compare of the r0l field `movzx eax, ax`; the counted
// strips: the trip-count decrement `sub qword ptr [rsp+0x20], 0x01`), from
// the jump's target to the jump.
std::vector<Line> loop_at(const CompiledFunction& cf, const std::string& marker) {
  const std::vector<Line> lines = listing_lines(cf);
  const uint64_t base = reinterpret_cast<uint64_t>(cf.code());
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].text.rfind(marker, 0) != 0) continue;
    for (size_t j = i; j < lines.size(); ++j) {
      if (lines[j].text.rfind("jmp ", 0) != 0) continue;
      const uint64_t target = std::stoull(lines[j].text.substr(4), nullptr, 16) - base;
      for (size_t h = 0; h < i; ++h)
        if (lines[h].off == target) return std::vector<Line>(lines.begin() + long(h), lines.begin() + long(j) + 1);
      return {};
    }
  }
  return {};
}

ir::Function alu_kernel() {
  // The bench kernel itself, so the test follows any change to it.
  std::ifstream file(std::string(GPURC_TEST_DATA) + "/examples/g13/int_hash.s");
  REQUIRE(file.good());
  std::stringstream source;
  source << file.rdbuf();
  const std::string text = source.str();
  std::vector<uint8_t> code;
  std::string err;
  REQUIRE_MESSAGE(g13::assemble(text, code, err), err);
  ir::Function f;
  g13::TranslateOptions opt;
  opt.exec_starts_launched = true;
  opt.registers_unobserved = true;
  REQUIRE_MESSAGE(g13::translate(code.data(), code.size(), f, err, opt), err);
  REQUIRE(ir::run_pipeline(f, ir::PassOptions{}) == "");
  return f;
}

size_t count_prefix(const std::vector<Line>& body, const char* prefix) {
  size_t n = 0;
  for (const Line& l : body) n += l.text.rfind(prefix, 0) == 0;
  return n;
}

}  // namespace

TEST_CASE("x64 jit: G13 alu's loop control runs once per iteration, the strips run only the hash") {
  const ir::Function f = alu_kernel();
  // AVX-512 (sixteenth session): the warp's two strips are one pair, so the
  // control runs inside the pair's iterations (strip A's part of the
  // interleaved form; B leaves the uniform-only values out): one loop, no
  // counted one. Measured: 34 instructions per iteration (budget, trip
  // count, 2 x 5 of hash, the counter and the r0l field once, branch); the
  // selects read the compares' masks from k5..k7, and the branch compares
  // the field's lane 0 (`movzx eax, ax`, `cmp`): no vptestmd.
  {
    auto cf = test::compile_for_tier(f, Tier::Avx512);
    const std::vector<Line> fused = loop_at(*cf, "movzx eax, ax");
    REQUIRE(!fused.empty());
    if (std::getenv("GPURC_TEST_DUMP_LOOP"))
      for (const Line& l : fused) std::printf("fused %8llx  %s\n", (unsigned long long)l.off, l.text.c_str());
    CHECK(loop_at(*cf, "sub qword ptr [rsp+0x20], 0x01").empty());  // no counted loop
    CHECK(fused.size() <= 34);
    CHECK(count_prefix(fused, "vpmulld") == 2);                             // both strips' hash
    CHECK(count_prefix(fused, "vpcmp") == 2);                               // the control once: i < 64, field < 1
    CHECK(count_prefix(fused, "vpblendmd") == 2);                           // the field's two selects, once
    CHECK(count_prefix(fused, "vptestmd") + count_prefix(fused, "kmov") == 0);  // masks kept; a scalar branch
    size_t kmask_blends = 0, partner = 0;
    for (const Line& l : fused) {
      kmask_blends += l.text.rfind("vpblendmd", 0) == 0 &&
                      (l.text.find("{k5}") != std::string::npos || l.text.find("{k6}") != std::string::npos ||
                       l.text.find("{k7}") != std::string::npos);
      partner += l.text.find("rbp") != std::string::npos;
    }
    CHECK(kmask_blends == 2);
    CHECK(partner == 0);  // B's phi lives in a register
    CHECK(count_prefix(fused, "test r15") == 0);
    // The exit gives B the field A computed (one store per strip of the warp).
    CHECK(cf->disassemble().find("xor ebp, 0x40") != std::string::npos);
  }
  // AVX2 (four strips, two pairs): the counted iteration (two strips: 2 x
  // the 5-op hash, its two uniform multiplier / addend broadcasts where no
  // register is left, the trip count) and the control loop's iteration
  // (budget, counter, r0l field, branch). Measured (twelfth session): 19
  // and 30 instructions (AVX-512 had 15 and 28 before the fused form);
  // sixteenth session: the control 28 (the branch compares the field's lane
  // 0 in a general register).
  const std::map<Tier, std::pair<size_t, size_t>> bound = {{Tier::Avx2, {19, 28}}};
  for (Tier t : {Tier::Avx2}) {
    CAPTURE(int(t));
    auto cf = test::compile_for_tier(f, t);
    const std::vector<Line> counted = loop_at(*cf, "sub qword ptr [rsp+0x20], 0x01");
    const std::vector<Line> control = loop_at(*cf, "movzx eax, ax");  // the branch on the field's lane 0
    REQUIRE(!counted.empty());
    REQUIRE(!control.empty());
    if (std::getenv("GPURC_TEST_DUMP_LOOP")) {  // a reading aid, tier 0 = AVX-512
      for (const Line& l : control) std::printf("%d control %8llx  %s\n", int(t), (unsigned long long)l.off, l.text.c_str());
      for (const Line& l : counted) std::printf("%d counted %8llx  %s\n", int(t), (unsigned long long)l.off, l.text.c_str());
    }
    CHECK(counted.size() <= bound.at(t).first);
    CHECK(control.size() <= bound.at(t).second);
    // Two strips per counted iteration (the partner at rbp): two multiplies,
    // and none of the control's compares and blends.
    CHECK(count_prefix(counted, "vpmulld") == 2);
    size_t control_ops = 0, partner = 0;
    for (const Line& l : counted) {
      control_ops += l.text.rfind("vpcmp", 0) == 0 || l.text.rfind("vblendv", 0) == 0 || l.text.rfind("vpblendm", 0) == 0;
      partner += l.text.find("rbp") != std::string::npos;
    }
    CHECK(control_ops == 0);
    CHECK(partner == 0);  // the partner's phi lives in a register: nothing through rbp inside the iteration
    // The control loop has no multiply (the hash is not in it) and neither
    // loop tests the uniform pointer: the entry block tested it at its top
    // (the block's only load_uniform is the load's deferred base).
    CHECK(count_prefix(control, "vpmulld") == 0);
    CHECK(count_prefix(control, "test r15") + count_prefix(counted, "test r15") == 0);
    // The counted strips run in pairs: the partner strip at rbp = r14 + one strip.
    CHECK(cf->disassemble().find("lea ebp, [r14+0x") != std::string::npos);
  }
}

}  // namespace gpurc_test_backend_x64_control_loop_code
