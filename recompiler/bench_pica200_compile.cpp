// `gpurc bench --isa pica200`: the compile rows. Shader compilation stutter is
// what emulator users notice, so the public API's compile is timed the way an
// emulator meets it: cold (every cache cleared: the shader cache and the IR
// code cache under it) and cached (the same setup again), for the three
// reference shaders of bench/pica200-reference/ and generated straight-line
// shaders of 64, 128, 256 and 512 instructions (compile time must grow
// linearly with program size: the table ends with the cold time per
// instruction of each), on every JIT tier. Each program sits at the start of a
// 4096-word program memory, as an emulator uploads it (the rest filled with
// words the shader never reaches), so the cached figure includes what a
// full program memory costs.
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdlib>
#include <filesystem>
#include <regex>

#include <fmt/format.h>

#include "frontend/pica200/encoding.h"
#include "frontend/pica200/reachable.h"
#include "gpurc/pica200.h"
#include "recompiler/bench_pica200_compile.h"
#include "ir/compile_stages.h"
#include "recompiler/replay.h"

namespace gpurc::cli {

namespace {

namespace p = gpurc::pica200;
using replay::json;
using Clock = std::chrono::steady_clock;

uint32_t word_of(const json& j) {
  if (j.is_string()) return uint32_t(std::stoul(j.get<std::string>(), nullptr, 0));
  return j.get<uint32_t>();
}

// The setup of a reference replay file (words, descriptors, numeric entry).
p::ShaderSetup setup_of_file(const std::filesystem::path& file) {
  json doc = replay::load_file(file);
  const json& prog = doc.at("program");
  p::ShaderSetup s;
  for (const json& w : prog.at("words")) s.code.push_back(word_of(w));
  if (prog.contains("descriptors"))
    for (const json& w : prog["descriptors"]) s.descriptors.push_back(word_of(w));
  if (prog.contains("entry")) s.entry = word_of(prog["entry"]);
  return s;
}

// A straight-line vertex shader of `total` instructions (the assembler's
// limit is 512) that keeps all of its results live: a fixed pseudo-random
// mix of the common vertex-shader operations over r0-r15, v0-v7 and c0-c31,
// every temporary written to an output at the end. The same n gives the same
// program.
p::ShaderSetup generated_setup(unsigned total) {
  const unsigned n = total - 24;  // 16 initial moves, 7 output writes and END around them
  std::string src;
  src += ".fvec k[32]\n";
  for (int i = 0; i < 8; ++i) src += fmt::format(".in in{} v{}\n", i, i);
  static const char* kOutputs[] = {"position", "normalquat", "color", "texcoord0", "texcoord1", "texcoord2", "view"};
  for (int i = 0; i < 7; ++i) src += fmt::format(".out o{} {}\n", i, kOutputs[i]);
  src += ".proc main\n";
  // Every temporary starts from an input so nothing reads an unset register.
  for (int r = 0; r < 16; ++r) src += fmt::format("    mov r{}, in{}\n", r, r % 8);
  // Few masks and swizzles, so the operand descriptors fit (MAD reaches only the first 32).
  static const char* kMasks[] = {"", ".x", ".xyz"};
  static const char* kSwz[] = {"", ".wzyx"};
  uint64_t s = 0x9E3779B97F4A7C15ull;
  auto next = [&](uint32_t m) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return uint32_t(s >> 33) % m;
  };
  for (unsigned i = 0; i < n; ++i) {
    std::string d = fmt::format("r{}{}", next(16), kMasks[next(3)]);
    std::string a = fmt::format("r{}{}", next(16), kSwz[next(2)]);
    std::string b = next(2) ? fmt::format("k[{}]{}", next(32), kSwz[next(2)]) : fmt::format("in{}", next(8));
    switch (next(12)) {
      case 0: src += fmt::format("    add {}, {}, {}\n", d, b, a); break;
      case 1: src += fmt::format("    mul {}, {}, {}\n", d, b, a); break;
      case 2: src += fmt::format("    dp4 {}, {}, {}\n", d, b, a); break;
      case 3: src += fmt::format("    dp3 {}, {}, {}\n", d, b, a); break;
      case 4: src += fmt::format("    mad {}, {}, {}, r{}\n", d, a, b, next(16)); break;
      case 5: src += fmt::format("    max {}, {}, {}\n", d, b, a); break;
      case 6: src += fmt::format("    min {}, {}, {}\n", d, b, a); break;
      case 7: src += fmt::format("    rcp {}, {}\n", d, a); break;
      case 8: src += fmt::format("    rsq {}, {}\n", d, a); break;
      case 9: src += fmt::format("    slt {}, {}, {}\n", d, b, a); break;
      case 10: src += fmt::format("    flr {}, {}\n", d, a); break;
      default: src += fmt::format("    mov {}, {}\n", d, a); break;
    }
  }
  for (int o = 0; o < 7; ++o) src += fmt::format("    add o{}, r{}, r{}\n", o, o, o + 7);
  src += "    end\n.end\n";
  return p::load_shbin(p::assemble(src));
}

// The program at the start of a 4096-word program memory (filler words the
// shader never reaches: an emulator uploads the whole memory).
p::ShaderSetup in_full_memory(p::ShaderSetup s) {
  uint32_t x = 0x12345678;
  while (s.code.size() < 4096) {
    x = x * 1664525u + 1013904223u;
    s.code.push_back(x);
  }
  return s;
}

// CPU time of the calling thread, in microseconds.
double thread_cpu_us() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) * 1e6 + double(ts.tv_nsec) * 1e-3;
}

double us_since(Clock::time_point t0) { return std::chrono::duration<double, std::micro>(Clock::now() - t0).count(); }

// Decoding every reachable word (what translation decodes, once each),
// timed apart: translation decodes as it goes, so decode is no stage of its own.
double decode_us(const std::vector<uint32_t>& reach) {
  std::vector<uint32_t> words;
  for (size_t i = 0; i + 2 < reach.size();) {
    size_t n = reach[i + 2];
    for (size_t k = 0; k < n; ++k) words.push_back(reach[i + 3 + k]);
    i += 3 + n;
  }
  if (words.empty()) return 0;
  const int reps = 200;
  size_t valid = 0;
  double best = 1e300;
  for (int round = 0; round < 5; ++round) {
    auto t0 = Clock::now();
    for (int r = 0; r < reps; ++r)
      for (size_t k = 0; k < words.size(); ++k) valid += pica::decode(words[k], uint32_t(k)).has_value();
    best = std::min(best, us_since(t0) / reps);
  }
  return valid ? best : 0;
}

// One cold compile's stages, summed by name (a stage may run twice).
struct ColdRun {
  double us = 0;
  std::vector<std::pair<const char*, double>> stages;
};

void summarize_stages(std::vector<ColdRun>& runs, CompileRow& row) {
  std::sort(runs.begin(), runs.end(), [](const ColdRun& a, const ColdRun& b) { return a.us < b.us; });
  size_t n = std::max<size_t>(1, runs.size() / 2);
  std::vector<std::pair<std::string, double>> sum;
  double total = 0;
  for (size_t i = 0; i < n; ++i) {
    total += runs[i].us;
    for (auto& [name, us] : runs[i].stages) {
      auto it = std::find_if(sum.begin(), sum.end(), [&](const auto& s) { return s.first == name; });
      if (it == sum.end()) sum.emplace_back(name, us);
      else it->second += us;
    }
  }
  for (auto& s : sum) s.second /= double(n);
  row.stages = std::move(sum);
  row.stages_total_us = total / double(n);
}

}  // namespace

std::vector<CompileRow> bench_pica200_compile(double seconds) {
  std::vector<std::pair<std::string, p::ShaderSetup>> shaders;
  std::filesystem::path ref = std::filesystem::path(GPURC_SOURCE_DIR) / "bench" / "pica200-reference";
  for (const char* name : {"ref_simple", "ref_heavy", "ref_loop"})
    shaders.emplace_back(name, setup_of_file(ref / (std::string(name) + ".json")));
  for (unsigned n : {64u, 128u, 256u, 512u}) shaders.emplace_back(fmt::format("gen_{}", n), generated_setup(n));
  std::vector<CompileRow> rows;
  // GPURC_BENCH_COMPILES=REGEX keeps the rows whose "shader engine" it
  // matches somewhere (profiling one row: perf record on a long --seconds).
  const char* only = std::getenv("GPURC_BENCH_COMPILES");
  const std::regex only_re(only ? only : "");
  for (const std::string& engine : p::engines()) {
    if (engine == "interp") continue;
    for (auto& [name, base] : shaders) {
      if (only && !std::regex_search(name + " " + engine, only_re)) continue;
      CompileRow row;
      row.kernel = name;
      row.engine = engine;
      row.words = base.code.size();
      p::ShaderSetup setup = in_full_memory(base);
      setup.engine = engine;
      std::vector<uint32_t> reach;
      pica::append_reachable_code(setup.code, setup.entry, reach);
      row.reachable = reach.size();
      // Cold: every cache cleared before each compile; median and best of
      // repeated runs (at least 5) lasting about `seconds`.
      row.decode_us = decode_us(reach);
      // Every other cold compile records its stages (ir/compile_stages.h);
      // the cold times come from the others, which run as a compile outside
      // the bench does (no log: no clock read per stage, ~2-4% of a small
      // shader's compile).
      std::vector<double> cold, cold_cpu;
      std::vector<ColdRun> runs;
      double spent = 0;
      ir::StageLog log;
      while (cold.size() < 5 || runs.size() < 5 || (spent < seconds * 1e6 && cold.size() < 2000)) {
        p::clear_cache();
        const bool record = runs.size() < cold.size();
        log.stages.clear();
        if (record) ir::stage_log() = &log;
        const double cpu0 = thread_cpu_us();
        auto t0 = Clock::now();
        auto shader = p::Shader::compile(setup);
        double us = us_since(t0);
        const double cpu = thread_cpu_us() - cpu0;
        ir::stage_log() = nullptr;
        spent += us;
        if (!record) {
          cold.push_back(us);
          cold_cpu.push_back(cpu);
          continue;
        }
        ColdRun run;
        run.us = us;
        for (const ir::StageTime& st : log.stages) {
          auto it = std::find_if(run.stages.begin(), run.stages.end(),
                                 [&](const auto& s) { return std::string_view(s.first) == st.name; });
          if (it == run.stages.end()) run.stages.emplace_back(st.name, st.us);
          else it->second += st.us;
        }
        runs.push_back(std::move(run));
      }
      std::sort(cold.begin(), cold.end());
      row.cold_us = cold[cold.size() / 2];
      row.cold_best_us = cold.front();
      std::sort(cold_cpu.begin(), cold_cpu.end());
      row.cold_cpu_us = cold_cpu[cold_cpu.size() / 2];
      summarize_stages(runs, row);
      // Cached: the same setup again (the shader stays in the cache); the
      // mean over a batch of calls, best of many short batches (so that
      // other processes of a loaded machine hit few of them).
      auto keep = p::Shader::compile(setup);
      row.cached_us = 1e300;
      for (int batch = 0; batch < 50; ++batch) {
        const int calls = 100;
        auto t0 = Clock::now();
        for (int i = 0; i < calls; ++i) {
          auto again = p::Shader::compile(setup);
          if (again->compile_us() != 0) row.cached_us = -1;  // not a hit: reported as such
        }
        if (row.cached_us >= 0) row.cached_us = std::min(row.cached_us, us_since(t0) / calls);
      }
      rows.push_back(row);
    }
  }
  p::clear_cache();
  return rows;
}

void print_pica200_compile(const std::vector<CompileRow>& rows, std::ostream& out, bool stages) {
  out << "PICA200 compile through the public API (program in a 4096-word program memory; cold: every cache "
         "cleared)\n";
  out << fmt::format("{:<12} {:<11} {:>7} {:>9} {:>13} {:>13} {:>13} {:>10}\n", "shader", "engine", "words", "key words",
                     "cold_us med", "cold_us best", "cold_cpu_us", "cached_us");
  for (const CompileRow& r : rows)
    out << fmt::format("{:<12} {:<11} {:>7} {:>9} {:>13.1f} {:>13.1f} {:>13.1f} {:>10}\n", r.kernel, r.engine, r.words,
                       r.reachable, r.cold_us, r.cold_best_us, r.cold_cpu_us,
                       r.cached_us < 0 ? "not a hit" : fmt::format("{:.3f}", r.cached_us));
  // Linearity: the cold median (thread CPU time) per instruction of the generated shaders, per engine.
  std::vector<std::string> engines;
  for (const CompileRow& r : rows)
    if (std::find(engines.begin(), engines.end(), r.engine) == engines.end()) engines.push_back(r.engine);
  for (const std::string& e : engines) {
    std::string line;
    double first = 0, last = 0;
    for (const CompileRow& r : rows) {
      if (r.engine != e || r.kernel.rfind("gen_", 0) != 0 || !r.words) continue;
      double per = r.cold_cpu_us / double(r.words);
      line += fmt::format(" {}: {:.2f}", r.words, per);
      if (first == 0) first = per;
      last = per;
    }
    if (!line.empty())
      out << fmt::format("{} cold CPU us per instruction (generated shaders):{}; largest/smallest {:.2f}x\n", e, line,
                         first > 0 ? last / first : 0.0);
  }
  if (!stages) return;
  for (const CompileRow& r : rows) {
    out << fmt::format("\n{} on {}: cold compile by stage (mean of the faster half of the runs that record stages, us)\n", r.kernel,
                       r.engine);
    double sum = 0;
    for (const auto& [name, us] : r.stages) {
      out << fmt::format("  {:<42} {:>9.1f} {:>5.1f}%\n", name, us,
                         r.stages_total_us > 0 ? 100 * us / r.stages_total_us : 0.0);
      sum += us;
    }
    out << fmt::format("  {:<42} {:>9.1f} {:>5.1f}%\n", "outside the stages", r.stages_total_us - sum,
                       r.stages_total_us > 0 ? 100 * (r.stages_total_us - sum) / r.stages_total_us : 0.0);
    out << fmt::format("  {:<42} {:>9.1f}\n", "total", r.stages_total_us);
    out << fmt::format("  ({:.2f} us of translate is decoding the {} reachable words, timed apart)\n", r.decode_us,
                       r.reachable);
  }
}

replay::json compile_stages_json(const CompileRow& r) {
  replay::json arr = replay::json::array();
  double sum = 0;
  for (const auto& [name, us] : r.stages) {
    arr.push_back({{"stage", name}, {"us", us}});
    sum += us;
  }
  arr.push_back({{"stage", "outside the stages"}, {"us", r.stages_total_us - sum}});
  return arr;
}

}  // namespace gpurc::cli
