// The PICA200 differential fuzzer: generator validity and a campaign of
// generated shaders, reference interpreter vs the translation on every engine.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "frontend/pica200/encoding.h"
#include "frontend/pica200/module/fuzz_gen.h"
#include "frontend/pica200/module/fuzz_run.h"
#include "frontend/pica200/module/module.h"
#include "fuzz/ir_run.h"
#include "fuzz/isa_fuzz.h"

namespace gpurc_test_fuzz_pica200_fuzz {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using pica::Format;
using pica::Op;

namespace {

bool light_run() {
  const char* e = std::getenv("GPURC_TEST_LIGHT");
  return e && *e && std::string(e) != "0";
}

bool has_target(Op op) {
  switch (op) {
    case Op::CALL: case Op::CALLC: case Op::CALLU: case Op::IFU: case Op::IFC: case Op::LOOP: case Op::JMPC:
    case Op::JMPU: return true;
    default: return false;
  }
}

// One case on the reference and on `engines` ("ir-interp" and JIT tiers), as
// the campaign (fuzz/isa_fuzz.cpp with the pica200 session) runs it, but with
// any stack translation mode.
struct CaseResult {
  fuzz::PicaReference ref;
  std::vector<std::pair<std::string, std::string>> diffs;  // engine, first difference
  uint64_t runs = 0;
};
CaseResult run_case(const fuzz::PicaCase& c, const std::vector<std::string>& engines, const pica::fp::Options& fp,
                    pica::StackMode stacks) {
  CaseResult r;
  r.ref = fuzz::run_pica200_reference(c, fp);
  if (!r.ref.error.empty() || r.ref.skipped) return r;
  ir::Function f;
  std::string err;
  if (!fuzz::translate_pica200_case(c, fp, stacks, f, err)) {
    r.diffs.push_back({"translate", err});
    return r;
  }
  const fuzz::IrProgram prog = fuzz::prepare_program(f);
  for (const std::string& engine : engines) {
    const std::string name = engine == "ir-interp" ? "interp" : engine;
    std::unique_ptr<ir::Executable> exe = fuzz::make_executable(name, prog, err);
    if (!exe) {
      r.diffs.push_back({engine, err});
      continue;
    }
    const ir::Function& runs_fn = name == "interp" ? prog.original : prog.lowered;
    const fuzz::PicaEngineRun run =
        fuzz::run_pica200_translated(c, r.ref, prog.original, uint32_t(runs_fn.vars_bytes()), *exe);
    r.runs += run.runs;
    if (std::string d = fuzz::compare_pica200(c, r.ref, run); !d.empty()) r.diffs.push_back({engine, d});
  }
  return r;
}

}  // namespace

TEST_CASE("pica200_gen: generated programs are valid and run on the reference interpreter") {
  const int n = light_run() ? 300 : 2000;
  std::set<Op> seen;
  int shared = 0, faulting = 0;
  int geometry = 0, entry0 = 0, entry_late = 0, partial_warp = 0, multi_warp = 0, emitted = 0;
  for (int s = 0; s < n; ++s) {
    const fuzz::PicaCase c = fuzz::generate_pica200(fuzz::pica200_program_seed(7, uint64_t(s)));
    const auto& code = c.program.code;
    REQUIRE(!code.empty());
    REQUIRE(code.size() <= 4096);
    REQUIRE(c.program.descs.size() >= 1);
    REQUIRE(c.program.descs.size() <= 128);
    REQUIRE(c.entry < code.size());
    REQUIRE(c.inputs.size() >= 1);
    REQUIRE(c.inputs.size() <= 70);
    for (uint32_t a = 0; a < code.size(); ++a) {
      std::string err;
      auto in = pica::decode(code[a], a, &err);
      REQUIRE_MESSAGE(in, err);
      seen.insert(in->op);
      if (pica::num_sources(in->op) > 0) {
        CHECK(in->desc < c.program.descs.size());
      }
      if (has_target(in->op)) {
        CHECK(in->target <= code.size());
        if (in->op == Op::JMPC || in->op == Op::JMPU) CHECK(in->target > a);  // never backwards
        if (in->op == Op::LOOP) CHECK(in->target > a);                         // non-empty body
      }
      if (!c.geometry) CHECK((in->op != Op::EMIT && in->op != Op::SETEMIT));
    }
    geometry += c.geometry;
    (c.entry == 0 ? entry0 : entry_late)++;
    partial_warp += c.inputs.size() % 32 != 0;
    multi_warp += c.inputs.size() > 32;
    // Valid means: every vertex reaches END on the reference interpreter
    // (with shared region ends a stale frame may overflow a stack: a fault,
    // but never an endless run).
    fuzz::PicaReference r = fuzz::run_pica200_reference(c);
    REQUIRE_MESSAGE(r.error.empty(), "seed " << s << ": " << r.error);
    CHECK(!r.skipped);
    shared += c.shared_ends;
    for (const auto& f : r.faults) faulting += !f.empty();
    for (const auto& g : r.expected_gs) emitted += g.emits > 0;
  }
  // Every instruction of the table is generated (there are no unknown ones in it).
  for (size_t op = 0; op < size_t(Op::Count); ++op)
    CHECK_MESSAGE(seen.count(Op(op)), "never generated: " << pica::info(Op(op)).name);
  CHECK(geometry > n / 20);
  CHECK(shared > n / 10);
  MESSAGE("vertices faulting in shared-end programs: " << faulting);
  CHECK(emitted > 0);
  CHECK(entry0 > n / 10);
  CHECK(entry_late > n / 10);
  CHECK(partial_warp > n / 2);
  CHECK(multi_warp > n / 10);
}

TEST_CASE("pica200_gen: the same seed gives the same case") {
  for (uint64_t s = 0; s < 50; ++s) {
    const fuzz::PicaCase a = fuzz::generate_pica200(s), b = fuzz::generate_pica200(s);
    CHECK(a.program.code == b.program.code);
    CHECK(a.program.descs == b.program.descs);
    CHECK(a.entry == b.entry);
    CHECK(a.inputs.size() == b.inputs.size());
  }
  CHECK(fuzz::generate_pica200(1).program.code != fuzz::generate_pica200(2).program.code);
}

TEST_CASE("pica200 fuzz: the reproducer is a replay file holding the case and the reference outputs") {
  // A vertex program (geometry replays carry no output expectation).
  fuzz::PicaCase c;
  for (uint64_t s = 0;; ++s) {
    c = fuzz::generate_pica200(s);
    if (!c.geometry) break;
  }
  fuzz::PicaReference r = fuzz::run_pica200_reference(c);
  REQUIRE(r.error.empty());
  auto doc = nlohmann::json::parse(fuzz::pica200_replay_json(c, r, "t", "note"));
  CHECK(doc["isa"] == "pica200");
  CHECK(doc["program"]["words"].size() == c.program.code.size());
  CHECK(doc["program"]["entry"] == c.entry);
  CHECK(doc["launch"]["vertices"] == c.inputs.size());
  const auto& o5 = doc["expect"]["outputs"]["o5"]["f32x4"];
  REQUIRE(o5.size() == c.inputs.size());
  for (size_t k = 0; k < c.inputs.size(); ++k)
    for (size_t comp = 0; comp < 4; ++comp)
      CHECK(std::stoul(o5[k][comp].get<std::string>(), nullptr, 16) == pica::fp::bits(r.expected[k].o[5][comp]));
}

// Runs `n` generated cases on every engine of the host; failures name the
// reproducer-free case (seed, iteration) and the first difference.
static void agree_on_every_engine(uint64_t seed, int n, const fuzz::PicaGenOptions& gen,
                                  const pica::fp::Options& fp = {}, pica::StackMode stacks = pica::StackMode::Auto) {
  std::vector<std::string> engines{"ir-interp"};
  for (const auto& e : fuzz::host_jit_engines()) engines.push_back(e);
  int mismatches = 0;
  uint64_t runs = 0;
  for (int it = 0; it < n; ++it) {
    const fuzz::PicaCase c = fuzz::generate_pica200(fuzz::pica200_program_seed(seed, uint64_t(it)), gen);
    const CaseResult r = run_case(c, engines, fp, stacks);
    REQUIRE_MESSAGE(r.ref.error.empty(), r.ref.error);
    runs += r.runs;
    for (const auto& [engine, what] : r.diffs)
      if (mismatches++ < 10)
        FAIL_CHECK("seed " << seed << " iteration " << it << " engine " << engine << ": " << what);
  }
  CHECK(mismatches == 0);
  CHECK(runs >= uint64_t(n) * (engines.size()));
}

TEST_CASE("pica200 fuzz: generated vertex programs agree on every engine") {
  fuzz::PicaGenOptions gen;
  gen.geometry_percent = 0;
  agree_on_every_engine(2026, light_run() ? 60 : 600, gen);
}

// Every program a geometry shader: emitted vertices, primitives and the
// SETEMIT latch are compared too (pica::unpack_emits).
TEST_CASE("pica200 fuzz: generated geometry programs agree on every engine") {
  fuzz::PicaGenOptions gen;
  gen.geometry_percent = 100;
  agree_on_every_engine(2027, light_run() ? 10 : 60, gen);
}

// The fallback translation (runtime CALL/IF/LOOP stacks) on programs that
// would normally expand statically, and the float24 mode.
TEST_CASE("pica200 fuzz: generated programs agree with runtime stacks") {
  fuzz::PicaGenOptions gen;
  agree_on_every_engine(2028, light_run() ? 20 : 150, gen, {}, pica::StackMode::Runtime);
}

TEST_CASE("pica200 fuzz: generated programs agree in f24 mode") {
  fuzz::PicaGenOptions gen;
  pica::fp::Options fp;
  fp.f24 = true;
  agree_on_every_engine(2029, light_run() ? 20 : 100, gen, fp);
}

TEST_CASE("pica200 fuzz: the campaign reports its engines and counts") {
  fuzz::IsaFuzzOptions opt;
  opt.iterations = 20;
  opt.seed = 5;
  opt.save_reproducers = false;
  fuzz::IsaFuzzReport rep = fuzz::run_isa_fuzz(pica200_module(), opt);
  REQUIRE_MESSAGE(rep.error.empty(), rep.error);
  CHECK(rep.programs == 20);
  // One run per warp of 32 vertices and engine (each program has 1 to 70 vertices).
  REQUIRE(!rep.engines.empty());
  CHECK(rep.runs >= 20 * rep.engines.size());
  CHECK(rep.runs <= 3 * 20 * rep.engines.size());
  CHECK(rep.engines[0] == "ir-interp");
  // --first: program i is the same whatever the campaign's first index.
  opt.first = 7;
  opt.iterations = 3;
  fuzz::IsaFuzzReport part = fuzz::run_isa_fuzz(pica200_module(), opt);
  REQUIRE_MESSAGE(part.error.empty(), part.error);
  CHECK(part.programs == 3);
  opt.variant = "no-such-variant";
  CHECK(fuzz::run_isa_fuzz(pica200_module(), opt).error ==
        "pica200 has no variant no-such-variant (default, max-inf-quirk, f24)");
}

// The reproducer of a mismatch: one file per engine, named after seed,
// program and engine; the document is named after the program and says how
// to run the campaign that found it.
TEST_CASE("pica200 fuzz: reproducer names and descriptions") {
  fuzz::IsaFuzzOptions opt;
  opt.seed = 5;
  opt.variant = "f24";
  std::string err;
  std::unique_ptr<isa::FuzzSession> s = pica200_module().fuzz_session(opt, err);
  REQUIRE_MESSAGE(s, err);
  CHECK(s->reproducer_per_engine());
  std::vector<std::unique_ptr<isa::FuzzCase>> cases;
  REQUIRE(s->generate(3, cases, err));
  REQUIRE(cases.size() == 1);
  CHECK(cases[0]->index == 3);
  std::unique_ptr<isa::FuzzOutcome> ref = s->run_reference(*cases[0]);
  std::string message;
  REQUIRE(s->check_reference(*cases[0], *ref, message) != isa::ReferenceVerdict::StopCampaign);
  CHECK(s->reproducer_stem(5, *cases[0], "jit-avx2") == "pica200-s5-i3-jit-avx2");
  isa::ReproducerInfo info{"pica200-s5-i3-jit-avx2", "jit-avx2", "vertex 0 o0.x: expected 1, got 2", false, "", ""};
  const std::string text = s->reproducer(*cases[0], *ref, info);
  REQUIRE(!text.empty());
  CHECK(text.back() == '\n');
  auto doc = nlohmann::json::parse(text);
  CHECK(doc["name"] == "pica200-s5-i3");
  // Odd-numbered vertex programs run under the draw contract; the description says so.
  const bool vertex = !fuzz::generate_pica200(fuzz::pica200_program_seed(5, 3)).geometry;
  CHECK(doc["description"] == std::string("gpurc fuzz --isa pica200 --variant f24 --seed 5, iteration 3, engine jit-avx2") +
                                  (vertex ? " (draw contract: o-registers compared)" : "") +
                                  ": vertex 0 o0.x: expected 1, got 2");
  // The same program as the generator's for that index.
  const fuzz::PicaCase c = fuzz::generate_pica200(fuzz::pica200_program_seed(5, 3));
  CHECK(doc["program"]["words"].size() == c.program.code.size());
}

}  // namespace gpurc_test_fuzz_pica200_fuzz
