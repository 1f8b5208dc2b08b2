#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <utility>

#include "fuzz/ir_fuzz.h"
#include "recompiler/replay.h"
#include "fuzz/ir_gen.h"
#include "ir/ir.h"

namespace gpurc_test_fuzz_ir_fuzz {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::ir;

namespace {

bool light() {
  const char* e = std::getenv("GPURC_TEST_LIGHT");
  return e && *e && std::string(e) != "0";
}

std::string temp_dir(const char* name) {
  auto p = std::filesystem::temp_directory_path() / (std::string("gpurc-test-") + name);
  std::filesystem::create_directories(p);
  return p.string();
}

}  // namespace

TEST_CASE("ir_gen: every generated function verifies") {
  const int n = light() ? 2000 : 10000;
  int bad = 0;
  for (int s = 0; s < n; ++s) {
    std::string err;
    Function f = fuzz::generate_ir(uint64_t(s), fuzz::IrGenOptions{}, &err);
    if (!err.empty() && bad++ < 5) FAIL_CHECK(err << "\n" << print(f));
  }
  CHECK(bad == 0);
}

TEST_CASE("ir_gen: the same seed gives the same function, different seeds differ") {
  std::set<std::string> texts;
  for (uint64_t s = 100; s < 300; ++s) {
    std::string e1, e2;
    std::string a = print(fuzz::generate_ir(s, {}, &e1));
    std::string b = print(fuzz::generate_ir(s, {}, &e2));
    REQUIRE(e1.empty());
    CHECK(a == b);
    texts.insert(a);
  }
  CHECK(texts.size() == 200);
}

TEST_CASE("ir_gen: the generator reaches every op it is meant to") {
  // Ops a translator-form function never contains (pipeline products, leaves
  // the generator does not use) are the only ones allowed to be missing.
  const std::set<Opcode> never = {Opcode::Undef,    Opcode::Phi,         Opcode::LoadVar, Opcode::StoreVar,
                                  Opcode::Budget,   Opcode::Unreachable, Opcode::FSinStep,
                                  // PICA200's relative c[] reads; the generator's stream stays as it was
                                  Opcode::LoadUniformIdx};
  std::set<Opcode> seen;
  std::set<std::pair<Opcode, unsigned>> widths;  // clustered op, cluster width
  int multi_block = 0, partial_reads = 0;
  for (uint64_t s = 0; s < 3000; ++s) {
    std::string err;
    Function f = fuzz::generate_ir(s, {}, &err);
    REQUIRE(err.empty());
    multi_block += f.blocks.size() > 1;
    for (const Block& b : f.blocks)
      for (ValueId v : b.insts) {
        seen.insert(f[v].op);
        partial_reads += f[v].op == Opcode::Load;
        if (op_info(f[v].op).clustered) widths.insert({f[v].op, cluster_width(f[v].imm)});
      }
  }
  for (int i = 0; i < kNumOpcodes; ++i) {
    Opcode op = Opcode(i);
    if (never.count(op)) continue;
    CHECK_MESSAGE(seen.count(op), "never generated: " << op_name(op));
    if (op_info(op).clustered)
      for (unsigned w : {1u, 2u, 4u, 8u, 16u, 32u})
        CHECK_MESSAGE(widths.count({op, w}), "never generated: " << op_name(op) << " over " << w << " lanes");
  }
  CHECK(multi_block > 2000);
  CHECK(partial_reads > 100);
}

TEST_CASE("ir_fuzz: the comparison sees every kind of difference") {
  std::string err;
  Function f = fuzz::generate_ir(7, {}, &err);
  REQUIRE(err.empty());
  fuzz::Rng rng(3);
  fuzz::IrState st = fuzz::random_state(f, rng);
  fuzz::IrOutcome ref;
  ref.vars = st.vars;
  ref.memory = st.memory;
  CHECK(fuzz::compare_outcomes(f, ref, ref).empty());

  fuzz::IrOutcome got = ref;
  got.vars[f.var_offset(1) + 4 * 31] ^= 1;  // one bit of lane 31 of the f32 var r1 (a NaN payload bit, say)
  CHECK(fuzz::compare_outcomes(f, ref, got).find("var r1 (f32) lane 31") == 0);
  got = ref;
  got.memory[kWarpLanes] ^= 0x80;
  CHECK(fuzz::compare_outcomes(f, ref, got).find("memory") == 0);
  got = ref;
  got.status = RunStatus::Fault;
  got.fault = FaultKind::OutOfBounds;
  CHECK(fuzz::compare_outcomes(f, ref, got).find("status") == 0);
  fuzz::IrOutcome trap1 = ref, trap2 = ref;
  trap1.status = trap2.status = RunStatus::Fault;
  trap1.fault = trap2.fault = FaultKind::Trap;
  trap1.fault_code = 5;
  trap2.fault_code = 6;
  CHECK(fuzz::compare_outcomes(f, trap1, trap2).find("trap code") == 0);
  trap2.fault_code = 5;
  trap2.vars[0] ^= 1;  // state after a fault is not compared
  CHECK(fuzz::compare_outcomes(f, trap1, trap2).empty());
  got = ref;
  got.error = "compile failed: x";
  CHECK(!fuzz::compare_outcomes(f, ref, got).empty());
}

TEST_CASE("ir_fuzz: a reproducer file round-trips") {
  std::string err;
  Function f = fuzz::generate_ir(11, {}, &err);
  REQUIRE(err.empty());
  fuzz::Rng rng(5);
  fuzz::IrReproducer r{f, fuzz::random_state(f, rng), "avx2", "var r0 (i32) lane 0: expected 0x1, got 0x2"};
  std::string path = temp_dir("repro") + "/r.json";
  REQUIRE_MESSAGE(fuzz::save_ir_reproducer(path, r, &err), err);
  fuzz::IrReproducer back;
  REQUIRE_MESSAGE(fuzz::load_ir_reproducer(path, back, &err), err);
  CHECK(print(back.function) == print(f));
  CHECK(back.state.entry_mask == r.state.entry_mask);
  CHECK(back.state.vars == r.state.vars);
  CHECK(back.state.uniforms == r.state.uniforms);
  CHECK(back.state.memory == r.state.memory);
  CHECK(back.engine == "avx2");
  CHECK(back.what == r.what);
}

TEST_CASE("ir_fuzz: interpreter, pipeline and every JIT tier agree on random programs") {
  fuzz::IrFuzzOptions opt;
  opt.iterations = light() ? 300 : 2000;
  opt.seed = 20240601;
  opt.out_dir = temp_dir("ir-fuzz");
  std::filesystem::remove_all(opt.out_dir);  // only this run's reproducers
  opt.max_minimized = 3;
  // An engine crash is reported as a mismatch, not the end of the suite. The
  // sanitizer build (light) runs in-process: forking ASan processes is slow,
  // and ASan reports a crash itself.
  opt.isolate = !light();
  opt.timeout_seconds = 20;
  opt.max_saved = 50;
  fuzz::IrFuzzReport rep = fuzz::run_ir_fuzz(opt);
  REQUIRE_MESSAGE(rep.error.empty(), rep.error);
  MESSAGE("engines compared against the reference: " << [&] {
    std::string s;
    for (auto& e : rep.engines) s += e + " ";
    return s;
  }());
  CHECK(rep.programs == opt.iterations);
  CHECK(rep.runs == opt.iterations * rep.engines.size());
  for (size_t i = 0; i < rep.mismatches.size() && i < 20; ++i) {
    const auto& m = rep.mismatches[i];
    MESSAGE("iteration " << m.iteration << " " << m.engine << ": " << m.what << " [" << m.reproducer << "]");
  }
  CHECK(rep.mismatches.size() == 0);
}

// Reproducers saved by the fuzzers and minimised become files in
// tests/regressions/; each is run on every engine of the host and must pass.
// IR reproducers compare every engine with the IR interpreter; guest-ISA
// replay files (pica200, tesla, g13 fuzzer output) must meet their expect
// (the reference interpreter's end state) on every engine.
static void check_isa_regression(const std::filesystem::path& p, const replay::json& doc) {
  for (Engine e : host_engines()) {
    CAPTURE(engine_name(e));
    replay::ReplayRun run = replay::run_document(doc, p.parent_path(), e, 1, false);
    CHECK_MESSAGE(!run.fault, p.filename().string() << ": " << run.fault.value_or(""));
    for (const auto& m : replay::check_expect(doc, run))
      FAIL_CHECK(p.filename().string() << ": " << m.what << ": expected " << m.expected << ", got " << m.actual);
  }
}

static void check_regression(const std::filesystem::path& p) {
  replay::json doc = replay::load_file(p);
  if (doc["isa"] != "ir") return check_isa_regression(p, doc);
  fuzz::IrReproducer r;
  std::string err;
  REQUIRE_MESSAGE(fuzz::load_ir_reproducer(p.string(), r, &err), err);
  auto diffs = fuzz::check_ir_program(r.function, r.state);
  for (const auto& d : diffs) FAIL_CHECK(p.filename().string() << ": " << d);
}

TEST_CASE("ir_fuzz: regression reproducers (tests/regressions) pass on every engine") {
  std::filesystem::path dir = std::filesystem::path(GPURC_TEST_DATA) / "tests" / "regressions";
  REQUIRE_MESSAGE(std::filesystem::is_directory(dir), dir.string() << " is missing");
  // A moved folder or a renamed extension must not turn this into a test
  // that runs nothing.
  int ran = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() != ".json") continue;
    CAPTURE(e.path().string());
    check_regression(e.path());
    ++ran;
  }
  MESSAGE("regression reproducers run: " << ran);
  REQUIRE_MESSAGE(ran > 0, "no reproducer (*.json) in " << dir.string());
}

}  // namespace gpurc_test_fuzz_ir_fuzz
