#include "fuzz/isa_fuzz.h"

#include <algorithm>
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

// Every difference of one case: the reference's verdict, a failed
// translation, or an engine's end state that differs. Returns false (with
// `stop`) when the reference verdict stops the campaign.
bool differences(isa::FuzzSession& s, const isa::FuzzCase& c, const std::vector<std::string>& engines,
                 std::unique_ptr<isa::FuzzOutcome>& ref, uint64_t& runs, std::vector<Difference>& diffs,
                 std::string& stop) {
  ref = s.run_reference(c);
  std::string message;
  switch (s.check_reference(c, *ref, message)) {
    case isa::ReferenceVerdict::StopCampaign: stop = message; return false;
    case isa::ReferenceVerdict::Mismatch: diffs.push_back({"interp", message}); return true;
    case isa::ReferenceVerdict::Skip: return true;
    case isa::ReferenceVerdict::Compare: break;
  }
  ir::Function f;
  std::string err;
  if (!s.translate(c, f, err)) {
    diffs.push_back({"translate", err});
    return true;
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
    runs += got->runs;
    std::string what = s.compare(c, *ref, *got);
    if (!what.empty()) diffs.push_back({e, what});
  }
  return true;
}

}  // namespace

IsaFuzzReport run_isa_fuzz(const isa::IsaModule& isa, const IsaFuzzOptions& opt) {
  IsaFuzzReport r;
  std::string err;
  std::unique_ptr<isa::FuzzSession> s = isa.fuzz_session(opt, err);
  if (!s) {
    r.error = err;
    return r;
  }
  const std::vector<std::string> host = host_jit_engines();
  const std::vector<std::string>& tiers = opt.engines.empty() ? host : opt.engines;
  for (const auto& e : tiers)
    if (std::find(host.begin(), host.end(), e) == host.end()) {
      r.error = "engine " + e + " is not available on this host";
      return r;
    }
  r.engines = s->ir_engines();
  r.engines.insert(r.engines.end(), tiers.begin(), tiers.end());
  uint64_t saved = 0, minimized = 0;
  // Saves one reproducer (and maybe its minimised copy); the path or "".
  auto reproduce = [&](const isa::FuzzCase& c, const isa::FuzzOutcome& ref, const Difference& d) -> std::string {
    if (!opt.save_reproducers || saved >= opt.max_saved) return "";
    isa::ReproducerInfo info{s->reproducer_stem(opt.seed, c, d.engine), d.engine, d.what, false,
                             isa.name() + " fuzz seed " + std::to_string(opt.seed) + " iteration " + std::to_string(c.index),
                             d.engine + ": " + d.what};
    std::string path = save(opt, info.stem, s->reproducer(c, ref, info));
    if (!path.empty()) ++saved;
    if (d.engine != "interp" && minimized < s->max_minimized()) {
      ++minimized;
      const std::vector<std::string> one{d.engine};
      auto still_differs = [&](const isa::FuzzCase& q) {
        std::unique_ptr<isa::FuzzOutcome> qref;
        uint64_t ignored = 0;
        std::vector<Difference> qd;
        std::string stop;
        return differences(*s, q, one, qref, ignored, qd, stop) && !qd.empty() && qd.front().engine == d.engine;
      };
      if (std::unique_ptr<isa::FuzzCase> m = s->minimize(c, d.engine, still_differs)) {
        std::unique_ptr<isa::FuzzOutcome> mref = s->run_reference(*m);
        info.minimised = true;
        info.stem += "-min";
        info.title += " (minimised)";
        save(opt, info.stem, s->reproducer(*m, *mref, info));
      }
    }
    return path;
  };
  uint64_t owned = 0;  // program indices of this shard done
  for (uint64_t it = opt.first; it < opt.first + opt.iterations; ++it) {
    const bool mine = opt.shard.owns(it);
    // A session that draws every program from one random stream must still
    // generate the programs of other shards (and drop them) to reach its own.
    if (!mine && isa.fuzz_can_start_anywhere()) continue;
    std::vector<std::unique_ptr<isa::FuzzCase>> cases;
    if (!s->generate(it, cases, err)) {
      r.error = err;
      break;
    }
    if (!mine) continue;
    ++owned;
    bool stop = false;
    for (auto& c : cases) {
      ++r.programs;
      std::unique_ptr<isa::FuzzOutcome> ref;
      std::vector<Difference> diffs;
      std::string stop_message;
      if (!differences(*s, *c, r.engines, ref, r.runs, diffs, stop_message)) {
        r.error = stop_message;
        stop = true;
        break;
      }
      if (diffs.empty()) continue;
      // The first difference's reproducer serves every engine unless the
      // session wants one per engine.
      std::string shared_repro = s->reproducer_per_engine() ? "" : reproduce(*c, *ref, diffs.front());
      for (const Difference& d : diffs) {
        std::string repro = s->reproducer_per_engine() ? reproduce(*c, *ref, d) : shared_repro;
        r.mismatches.push_back({it, d.engine, s->mismatch_text(*c, d.engine, d.what), repro});
      }
    }
    if (stop) break;
    if (opt.progress && owned % 100 == 0) opt.progress(owned, r.mismatches.size());
  }
  r.notes = s->notes();
  return r;
}

}  // namespace gpurc::fuzz
