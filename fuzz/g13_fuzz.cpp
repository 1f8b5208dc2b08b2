// `gpurc fuzz --isa g13`: random programs (fuzz/g13_gen.h) on the G13
// reference interpreter against their translation on the IR interpreter, the
// pipelined IR interpreter and every JIT tier, registers and memory bit for
// bit. A mismatching program is saved as a g13 replay file.
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "frontend/g13/translate.h"
#include "fuzz/g13_gen.h"
#include "fuzz/isa_fuzz.h"

namespace gpurc::fuzz {

// GPURC_G13_FUZZ_EXCLUDE="name,name" leaves descriptors out (to look past a
// known, reported bug); unset = every descriptor the translator accepts.
IsaFuzzReport run_g13_fuzz(const IsaFuzzOptions& opt) {
  std::vector<std::string> exclude;
  if (const char* e = std::getenv("GPURC_G13_FUZZ_EXCLUDE")) {
    std::string s = e;
    for (size_t pos = 0; pos <= s.size();) {
      size_t end = s.find(',', pos);
      if (end == std::string::npos) end = s.size();
      if (end > pos) exclude.push_back(s.substr(pos, end - pos));
      pos = end + 1;
    }
  }
  return run_g13_fuzz_excluding(opt, exclude);
}

IsaFuzzReport run_g13_fuzz_excluding(const IsaFuzzOptions& opt, const std::vector<std::string>& exclude) {
  IsaFuzzReport r;
  if (!opt.variant.empty() && opt.variant != "default") {
    r.error = "g13 has only the variant \"default\"";
    return r;
  }
  std::vector<std::string> tiers = opt.engines.empty() ? host_jit_engines() : opt.engines;
  for (auto& e : tiers) {
    std::string name = jit_engine_name(e);  // the registry name of an alias
    if (name.empty()) {
      r.error = "unknown engine " + e;
      return r;
    }
    e = name;
  }
  r.engines = {"ir-interp", "interp-pipeline"};
  r.engines.insert(r.engines.end(), tiers.begin(), tiers.end());
  Rng rng(opt.seed);
  uint64_t saved = 0;
  for (uint64_t it = 0; it < opt.iterations; ++it) {
    G13FuzzProgram p;
    try {
      p = generate_g13_program(rng, exclude);
    } catch (const std::exception& x) {
      r.error = std::string(x.what()) + " (iteration " + std::to_string(it) + ")";
      return r;
    }
    ++r.programs;
    G13Outcome ref = run_g13_reference(p);
    ir::Function f;
    std::string err;
    std::vector<std::pair<std::string, std::string>> diffs;  // engine, what
    if (!ref.error.empty()) {
      diffs.push_back({"interp", "generated program does not run on the interpreter: " + ref.error});
    } else if (!g13::translate(p.code.data(), p.code.size(), f, err)) {
      diffs.push_back({"translate", err});
    } else {
      IrProgram prog = prepare_program(f);
      for (const auto& e : r.engines) {
        G13Outcome got = run_g13_translated(e, p, prog);
        ++r.runs;
        std::string what = compare_g13(p, ref, got);
        if (!what.empty()) diffs.push_back({e, what});
      }
    }
    std::string repro;
    if (!diffs.empty() && opt.save_reproducers && saved < opt.max_saved) {
      std::error_code ec;
      std::filesystem::create_directories(opt.out_dir, ec);
      repro = (std::filesystem::path(opt.out_dir) / ("g13-seed" + std::to_string(opt.seed) + "-it" +
                                                     std::to_string(it) + ".json")).string();
      std::ofstream out(repro);
      out << g13_replay_text(p, ref, "g13 fuzz seed " + std::to_string(opt.seed) + " iteration " + std::to_string(it),
                             diffs.front().first + ": " + diffs.front().second);
      if (!out) repro.clear();
      else ++saved;
    }
    for (auto& [engine, what] : diffs) r.mismatches.push_back({it, engine, what, repro});
    if (opt.progress && (it + 1) % 100 == 0) opt.progress(it + 1, r.mismatches.size());
  }
  return r;
}

}  // namespace gpurc::fuzz
