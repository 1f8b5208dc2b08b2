#include "fuzz/isa_fuzz.h"

#include <filesystem>
#include <fstream>

#include "fuzz/ir_run.h"
#include "isa/module.h"

namespace gpurc::fuzz {

namespace {

// Writes `text` as <out_dir>/<stem>.json; the path, or "" when nothing was written.
std::string save(const IsaFuzzOptions& opt, const std::string& stem, const std::string& text) {
  if (text.empty()) return "";
  std::error_code ec;
  std::filesystem::create_directories(opt.out_dir, ec);
  std::string path = (std::filesystem::path(opt.out_dir) / (stem + ".json")).string();
  std::ofstream out(path);
  out << text;
  return out ? path : "";
}

struct Difference {
  std::string engine, what;
};

// Every difference of one program: the reference cannot run it, the
// translation fails, or an engine's end state differs. `only`: just that
// engine (minimisation).
std::vector<Difference> differences(isa::FuzzSession& s, const isa::FuzzCase& c, const std::vector<std::string>& engines,
                                    std::unique_ptr<isa::FuzzOutcome>& ref, uint64_t& runs) {
  std::vector<Difference> diffs;
  ref = s.run_reference(c);
  ir::Function f;
  std::string err;
  if (!ref->error.empty()) {
    diffs.push_back({"interp", s.reference_error(ref->error)});
    return diffs;
  }
  if (!s.translate(c, f, err)) {
    diffs.push_back({"translate", err});
    return diffs;
  }
  const IrProgram prog = prepare_program(f);
  for (const std::string& e : engines) {
    const std::string name = e == "ir-interp" ? "interp" : e;
    std::unique_ptr<isa::FuzzOutcome> got;
    std::unique_ptr<ir::Executable> exe = make_executable(name, prog, err);
    if (exe) {
      const ir::Function& runs_fn = name == "interp" ? prog.original : prog.lowered;
      got = s.run_translated(c, isa::TranslatedRun{e, prog.original, uint32_t(runs_fn.vars_bytes()), *exe});
    } else {
      got = std::make_unique<isa::FuzzOutcome>();
      got->error = err;
    }
    ++runs;
    std::string what = s.compare(c, *ref, *got);
    if (!what.empty()) diffs.push_back({e, what});
  }
  return diffs;
}

}  // namespace

IsaFuzzReport run_isa_fuzz(const isa::IsaModule& isa, const IsaFuzzOptions& opt) {
  if (isa::IsaModule::WholeCampaign whole = isa.whole_campaign()) return whole(opt);
  IsaFuzzReport r;
  std::string err;
  std::unique_ptr<isa::FuzzSession> s = isa.fuzz_session(opt, err);
  if (!s) {
    r.error = err;
    return r;
  }
  std::vector<std::string> tiers = opt.engines.empty() ? host_jit_engines() : opt.engines;
  for (const auto& e : tiers)
    if (!is_known_engine(e) || e == "interp" || e == "interp-pipeline") {
      r.error = "unknown engine " + e;
      return r;
    }
  r.engines = s->ir_engines();
  r.engines.insert(r.engines.end(), tiers.begin(), tiers.end());
  uint64_t saved = 0, minimized = 0;
  for (uint64_t it = opt.first; it < opt.first + opt.iterations; ++it) {
    std::unique_ptr<isa::FuzzCase> c = s->generate(it, err);
    if (!c) {
      r.error = err + " (iteration " + std::to_string(it) + ")";
      return r;
    }
    ++r.programs;
    std::unique_ptr<isa::FuzzOutcome> ref;
    std::vector<Difference> diffs = differences(*s, *c, r.engines, ref, r.runs);
    std::string repro;
    if (!diffs.empty() && opt.save_reproducers && saved < opt.max_saved) {
      const std::string stem = s->reproducer_stem(opt.seed, it);
      const std::string title = isa.name() + " fuzz seed " + std::to_string(opt.seed) + " iteration " + std::to_string(it);
      repro = save(opt, stem, s->reproducer(*c, *ref, title, diffs.front().engine + ": " + diffs.front().what));
      if (!repro.empty()) ++saved;
      const Difference& d = diffs.front();
      if (d.engine != "interp" && d.engine != "translate" && minimized < s->max_minimized()) {
        ++minimized;
        const std::vector<std::string> one{d.engine};
        auto still_differs = [&](const isa::FuzzCase& q) {
          std::unique_ptr<isa::FuzzOutcome> qref;
          uint64_t ignored = 0;
          std::vector<Difference> qd = differences(*s, q, one, qref, ignored);
          return !qd.empty() && qd.front().engine == d.engine;
        };
        if (s->minimize(*c, still_differs) > 0) {
          std::unique_ptr<isa::FuzzOutcome> mref = s->run_reference(*c);
          save(opt, stem + "-min", s->reproducer(*c, *mref, title + " (minimised)", d.engine + ": " + d.what));
        }
      }
    }
    for (auto& d : diffs) r.mismatches.push_back({it, d.engine, d.what, repro});
    if (opt.progress && (it + 1 - opt.first) % 100 == 0) opt.progress(it + 1 - opt.first, r.mismatches.size());
  }
  r.notes = s->notes();
  return r;
}

}  // namespace gpurc::fuzz
