// The Bifrost translation to IR (frontend/bifrost/translate.h) on every engine
// of the host: the translatable examples against their expect and bit for bit
// against the interpreter, the translate error for the rest, and the fuzz
// campaign (random clauses from the encoding tables; at least 500 programs in
// the default run) with no mismatch on 4- and 8-lane guest warps.
#include <doctest/doctest.h>

#include <filesystem>
#include <set>
#include <sstream>

#include "frontend/bifrost/bifrost.h"
#include "fuzz/isa_fuzz.h"
#include "isa/module.h"
#include "recompiler/engine.h"
#include "recompiler/replay.h"

namespace gpurc_test_bifrost_test_bifrost_jit {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using replay::json;

namespace {
const std::filesystem::path kExamples = std::filesystem::path(GPURC_TEST_DATA) / "examples" / "bifrost";
const isa::IsaModule& bifrost_isa() {
  for (const isa::IsaModule* m : isa::all_modules())
    if (m->name() == "bifrost") return *m;
  FAIL("no bifrost module");
  throw 0;
}
}  // namespace

TEST_CASE("bifrost JIT: translatable examples pass on every engine, bit for bit with the interpreter") {
  const char* translated[] = {"vector_add", "reduction", "divergent", "loop", "fp16", "int64", "atomic", "rcp_rsqrt", "pair64"};
  for (const char* k : translated) {
    CAPTURE(k);
    json doc = replay::load_file(kExamples / (std::string(k) + ".json"));
    replay::ReplayRun ref = replay::run_document(doc, kExamples, Engine::Interp, 1, false);
    for (Engine e : host_engines()) {
      if (e == Engine::Interp) continue;
      CAPTURE(engine_name(e));
      for (unsigned threads : {1u, 2u}) {
        replay::ReplayRun r = replay::run_document(doc, kExamples, e, threads, false);
        CHECK_FALSE(r.fault);
        CHECK(replay::check_expect(doc, r).empty());
        CHECK(replay::compare_runs(ref, r).empty());
      }
    }
  }
  // An instruction a 64-bit clause cannot hold: a clear error naming it and its clause.
  std::vector<uint8_t> code;
  std::string err;
  REQUIRE(bifrost::assemble("clause_0:\nds(0) eos 64 regs64\n{\n    *NOP t0\n    +LOAD.i32 t1, u0.w0, u0.w1, @r0\n}\n", code, err));
  ir::Function f;
  CHECK_FALSE(bifrost_isa().translate(code, "g72", f, err));
  CHECK(err.find("+LOAD.i32 cannot be in a 64-bit clause") != std::string::npos);
  CHECK(err.find("clause 0x0") != std::string::npos);
}

TEST_CASE("bifrost JIT: gpurc ir --isa bifrost translates, cross-lane ops use the guest warp as cluster") {
  std::vector<uint8_t> code;
  std::string err;
  REQUIRE(bifrost::assemble("clause_0:\nds(0) eos\n{\n    *NOP t0\n    +CLPER.i32.subgroup16.zero r4:t1, r60, r1\n"
                            "    *NOP t0\n    +NOP t1\n}\n",
                            code, err));
  for (const char* v : {"g72", "g76"}) {
    ir::Function f;
    REQUIRE(bifrost_isa().translate(code, v, f, err));
    CHECK(ir::verify(f).empty());
    const std::string text = ir::print(f);
    const unsigned w = std::string(v) == "g72" ? 4 : 8;
    // the lowest-pc reduce and the permute act on clusters of the guest warp width
    CHECK(text.find("reduce.umin") != std::string::npos);
    unsigned clustered = 0;
    for (const ir::Inst& in : f.insts)
      if ((in.op == ir::Opcode::Shuffle || in.op == ir::Opcode::Reduce) && ir::cluster_width(in.imm) == w) ++clustered;
    CHECK(clustered >= 2);
  }
}

TEST_CASE("bifrost fuzz: random clauses, interpreter against the IR interpreter and every JIT tier") {
  const bool light = std::getenv("GPURC_TEST_LIGHT") != nullptr;
  for (const char* variant : {"g72", "g76"}) {
    CAPTURE(variant);
    fuzz::IsaFuzzOptions opt;
    opt.iterations = light ? 60 : (std::string(variant) == "g72" ? 300 : 200);
    opt.seed = 7;
    opt.variant = variant;
    opt.save_reproducers = false;
    fuzz::IsaFuzzReport rep = fuzz::run_isa_fuzz(bifrost_isa(), opt);
    CHECK(rep.error.empty());
    CHECK(rep.programs == opt.iterations);
    CHECK(rep.mismatches.empty());
    for (const auto& m : rep.mismatches) MESSAGE(m.iteration << " " << m.engine << ": " << m.what);
  }
}

TEST_CASE("bifrost fuzz: the generator draws varied programs") {
  std::string err;
  fuzz::IsaFuzzOptions opt;
  opt.seed = 3;
  auto s = bifrost_isa().fuzz_session(opt, err);
  REQUIRE(s);
  std::set<std::string> mnemonics;
  unsigned branches = 0, wide = 0;
  for (uint64_t i = 0; i < 60; ++i) {
    std::unique_ptr<isa::FuzzCase> c = s->generate(i, err);
    REQUIRE(c);
    auto ref = s->run_reference(*c);
    CHECK(ref->error.empty());
    json doc = json::parse(s->reproducer(*c, *ref, "t", "t"));
    std::vector<uint8_t> code = replay::parse_hex_bytes(doc["program"]["bytes"].get<std::string>(), "bytes");
    std::string text;
    REQUIRE(bifrost::disassemble(code.data(), code.size(), text, err));
    // The text (64-bit clauses printed with pairs, `regs64`) assembles to the same bytes.
    std::vector<uint8_t> back;
    REQUIRE_MESSAGE(bifrost::assemble(text, back, err), err);
    CHECK(back == code);
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
      const size_t p = line.find_first_of("*+");
      if (line.find("ds(") != std::string::npos) wide += line.find(" 64 regs64") != std::string::npos;  // 64-bit clauses
      if (p == std::string::npos || line.find("ds(") != std::string::npos) continue;
      const std::string m = line.substr(p, line.find(' ', p) - p);
      mnemonics.insert(m.substr(0, m.find('.', m.find('.') + 1)));
      branches += m.rfind("+BRANCHZ", 0) == 0;
    }
  }
  CHECK(mnemonics.size() >= 40);
  CHECK(branches > 0);
  CHECK(wide > 5);
}

}  // namespace gpurc_test_bifrost_test_bifrost_jit
