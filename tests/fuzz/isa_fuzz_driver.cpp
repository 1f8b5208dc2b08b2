// The generic ISA campaign (fuzz::run_isa_fuzz) over a FuzzSession, with a
// toy "ISA" whose programs are generated IR functions: the reference is the
// IR interpreter, the translation the function itself (or, in the broken
// mode, another function), so the driver's loop, engine list, mismatch
// texts, reproducer files, minimisation and notes are all exercised.
#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include "fuzz/ir_gen.h"
#include "fuzz/ir_run.h"
#include "fuzz/isa_fuzz.h"
#include "isa/module.h"
#include "runtime/launch.h"

namespace gpurc_test_fuzz_isa_fuzz_driver {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;

namespace {

struct ToyCase final : isa::FuzzCase {
  ir::Function f;
  fuzz::IrState state;
};

struct ToyOutcome final : isa::FuzzOutcome {
  fuzz::IrOutcome out;
};

class ToySession final : public isa::FuzzSession {
 public:
  ToySession(uint64_t seed, bool broken) : seed_(seed), broken_(broken) {}
  std::vector<std::string> ir_engines() const override { return {"ir-interp", "interp-pipeline"}; }
  bool generate(uint64_t index, std::vector<std::unique_ptr<isa::FuzzCase>>& out, std::string& err) override {
    auto c = std::make_unique<ToyCase>();
    fuzz::IrGenOptions g;
    g.faults = false;
    c->f = fuzz::generate_ir(seed_ * 1000 + index, g, &err);
    if (!err.empty()) return false;
    fuzz::Rng rng(index);
    c->state = fuzz::random_state(c->f, rng);
    c->index = index;
    out.push_back(std::move(c));
    return true;
  }
  std::unique_ptr<isa::FuzzOutcome> run_reference(const isa::FuzzCase& c) override {
    const auto& t = static_cast<const ToyCase&>(c);
    auto o = std::make_unique<ToyOutcome>();
    o->out = fuzz::run_engine("interp", fuzz::prepare_program(t.f), t.state);
    o->error = o->out.error;
    return o;
  }
  bool translate(const isa::FuzzCase& c, ir::Function& out, std::string&) override {
    const auto& t = static_cast<const ToyCase&>(c);
    out = t.f;  // the broken mode damages the translation's end state instead (run_translated)
    return true;
  }
  std::unique_ptr<isa::FuzzOutcome> run_translated(const isa::FuzzCase& c, const isa::TranslatedRun& run) override {
    const auto& t = static_cast<const ToyCase&>(c);
    auto o = std::make_unique<ToyOutcome>();
    std::vector<uint8_t> uniforms(rt::align64(std::max<size_t>(t.state.uniforms.size(), run.translation.uniform_bytes)));
    std::memcpy(uniforms.data(), t.state.uniforms.data(), t.state.uniforms.size());
    rt::Memory mem;
    std::string err;
    REQUIRE(mem.add_buffer("global", ir::Space::Global, fuzz::kGlobalBase, fuzz::kGlobalSize, err));
    std::memcpy(mem.find("global")->data(), t.state.memory.data(), fuzz::kGlobalSize);
    rt::LaunchConfig cfg;
    cfg.block = {32, 1, 1};
    cfg.vars_bytes = run.vars_bytes;
    cfg.uniforms = uniforms.data();
    cfg.budget = fuzz::kFuzzBudget;
    cfg.max_rounds = 1001;
    rt::WarpHooks h;
    h.init = [&](const rt::WarpInfo&, uint8_t* vars) { std::memcpy(vars, t.state.vars.data(), t.state.vars.size()); };
    h.setup = [&](const rt::WarpInfo&, ir::WarpContext& ctx) { ctx.entry_mask = t.state.entry_mask; };
    h.finish = [&](const rt::WarpInfo&, const uint8_t* vars) {
      o->out.vars.assign(vars, vars + run.translation.vars_bytes());
      // The broken translation's damage: lane 0 of the first var's bytes flipped.
      if (broken_ && !o->out.vars.empty()) o->out.vars[0] ^= 1;
    };
    rt::LaunchResult r = rt::launch(run.exe, mem, cfg, h);
    o->out.status = r.fault ? ir::RunStatus::Fault : ir::RunStatus::Done;
    o->out.fault = r.fault ? r.fault->kind : ir::FaultKind::None;
    o->out.fault_code = r.fault ? r.fault->code : 0;
    o->out.memory.assign(mem.find("global")->data(), mem.find("global")->data() + fuzz::kGlobalSize);
    ++engine_runs_[run.engine];
    return o;
  }
  std::string compare(const isa::FuzzCase& c, const isa::FuzzOutcome& ref, const isa::FuzzOutcome& got) override {
    return fuzz::compare_outcomes(static_cast<const ToyCase&>(c).f, static_cast<const ToyOutcome&>(ref).out,
                                  static_cast<const ToyOutcome&>(got).out);
  }
  std::string mismatch_text(const isa::FuzzCase&, const std::string& engine, const std::string& what) const override {
    return "toy " + engine + ": " + what;
  }
  std::string reproducer_stem(uint64_t seed, const isa::FuzzCase& c, const std::string&) const override {
    return "toy-seed" + std::to_string(seed) + "-it" + std::to_string(c.index);
  }
  std::string reproducer(const isa::FuzzCase& c, const isa::FuzzOutcome&, const isa::ReproducerInfo& info) override {
    return "{\"toy\": " + std::to_string(c.index) + ", \"engine\": \"" + info.engine + "\", \"min\": " +
           (info.minimised ? "true" : "false") + "}\n";
  }
  unsigned max_minimized() const override { return 2; }
  std::unique_ptr<isa::FuzzCase> minimize(const isa::FuzzCase& c, const std::string&,
                                          const std::function<bool(const isa::FuzzCase&)>& still_differs) override {
    auto m = std::make_unique<ToyCase>(static_cast<const ToyCase&>(c));
    if (!still_differs(*m)) return nullptr;  // the driver's rerun must see the same difference
    return m;
  }
  std::vector<std::string> notes() const override {
    return {"toy: " + std::to_string(engine_runs_.count("ir-interp") ? engine_runs_.at("ir-interp") : 0) +
            " ir-interp runs"};
  }

 private:
  uint64_t seed_;
  bool broken_;
  std::map<std::string, uint64_t> engine_runs_;
};

class ToyModule final : public isa::IsaModule {
 public:
  explicit ToyModule(bool broken) : broken_(broken) {}
  std::string name() const override { return "toy"; }
  std::vector<std::string> variants() const override { return {"default"}; }
  unsigned hex_unit_bytes() const override { return 1; }
  bool disassemble(const std::vector<uint8_t>&, const DisasmOptions&, std::string&, std::string&) const override {
    return false;
  }
  bool assemble(const std::string&, const std::string&, std::vector<uint8_t>&, std::string&) const override { return false; }
  bool fuzz_capable() const override { return true; }
  std::unique_ptr<isa::FuzzSession> fuzz_session(const fuzz::IsaFuzzOptions& opt, std::string&) const override {
    return std::make_unique<ToySession>(opt.seed, broken_);
  }

 private:
  bool broken_;
};

}  // namespace

TEST_CASE("run_isa_fuzz: a correct toy ISA has no mismatches on every engine") {
  ToyModule toy(false);
  CHECK(toy.has_fuzzer());
  fuzz::IsaFuzzOptions opt;
  opt.iterations = 20;
  opt.save_reproducers = false;
  fuzz::IsaFuzzReport r = fuzz::run_isa_fuzz(toy, opt);
  CHECK(r.error.empty());
  CHECK(r.programs == 20);
  const size_t engines = 2 + fuzz::host_jit_engines().size();
  REQUIRE(r.engines.size() == engines);
  CHECK(r.engines[0] == "ir-interp");
  CHECK(r.engines[1] == "interp-pipeline");
  CHECK(r.runs == 20 * engines);
  CHECK(r.mismatches.empty());
  REQUIRE(r.notes.size() == 1);
  CHECK(r.notes[0] == "toy: 20 ir-interp runs");
  opt.engines = {"no-such-tier"};
  CHECK(fuzz::run_isa_fuzz(toy, opt).error == "engine no-such-tier is not available on this host");
}

TEST_CASE("run_isa_fuzz: a broken toy ISA's differences are reported, saved and minimised") {
  ToyModule toy(true);
  fuzz::IsaFuzzOptions opt;
  opt.iterations = 5;
  opt.first = 3;
  opt.seed = 7;
  opt.max_saved = 3;
  opt.out_dir = (std::filesystem::temp_directory_path() / "gpurc-test-isa-fuzz-driver").string();
  std::filesystem::remove_all(opt.out_dir);
  fuzz::IsaFuzzReport r = fuzz::run_isa_fuzz(toy, opt);
  CHECK(r.error.empty());
  CHECK(r.programs == 5);
  // Every engine of every program differs (the broken translation flips a bit).
  REQUIRE(r.mismatches.size() == 5 * r.engines.size());
  CHECK(r.mismatches[0].iteration == 3);
  CHECK(r.mismatches[0].engine == "ir-interp");
  CHECK(r.mismatches[0].what.rfind("toy ir-interp: var ", 0) == 0);
  // One reproducer per program (the default), at most max_saved of them.
  const std::string first = (std::filesystem::path(opt.out_dir) / "toy-seed7-it3.json").string();
  CHECK(r.mismatches[0].reproducer == first);
  CHECK(r.mismatches[1].reproducer == first);
  CHECK(r.mismatches.back().reproducer.empty());
  std::ifstream in(first);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text == "{\"toy\": 3, \"engine\": \"ir-interp\", \"min\": false}\n");
  // The first two saved programs got a minimised copy.
  CHECK(std::filesystem::exists(std::filesystem::path(opt.out_dir) / "toy-seed7-it3-min.json"));
  CHECK(std::filesystem::exists(std::filesystem::path(opt.out_dir) / "toy-seed7-it4-min.json"));
  CHECK_FALSE(std::filesystem::exists(std::filesystem::path(opt.out_dir) / "toy-seed7-it5-min.json"));
  std::filesystem::remove_all(opt.out_dir);
}

}  // namespace gpurc_test_fuzz_isa_fuzz_driver
