// `gpurc fuzz` on many processes and machines: the --shard argument (also
// from a job array's environment), the --json summary of one campaign or
// shard, and `gpurc fuzz merge` (docs/fuzzing.md "Campaigns on many machines").
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "recompiler/cli_verbs.h"

namespace gpurc::cli {

using nlohmann::json;

namespace {

constexpr const char* kSummaryFormat = "gpurc-fuzz-summary";

bool parse_u64(const std::string& s, uint64_t& v) {
  if (s.empty() || s.size() > 19 || s.find_first_not_of("0123456789") != std::string::npos) return false;
  v = std::stoull(s);
  return true;
}

// The shard index a job array's task gets from its scheduler: Kubernetes
// Indexed Jobs set JOB_COMPLETION_INDEX (0-based); Slurm job arrays set
// SLURM_ARRAY_TASK_ID (from the --array range, so relative to
// SLURM_ARRAY_TASK_MIN) and SLURM_ARRAY_TASK_COUNT. GPURC_SHARD_INDEX
// overrides both (any other launcher).
bool shard_index_from_env(uint64_t& index, std::string& source, std::string& err) {
  for (const char* name : {"GPURC_SHARD_INDEX", "JOB_COMPLETION_INDEX", "SLURM_ARRAY_TASK_ID"}) {
    const char* v = std::getenv(name);
    if (!v) continue;
    if (!parse_u64(v, index)) {
      err = fmt::format("--shard env: {}='{}' is not a shard index", name, v);
      return false;
    }
    source = name;
    if (source == "SLURM_ARRAY_TASK_ID") {
      uint64_t min = 0;
      const char* m = std::getenv("SLURM_ARRAY_TASK_MIN");
      if (m && parse_u64(m, min) && min <= index) index -= min;
    }
    return true;
  }
  err = "--shard env: none of GPURC_SHARD_INDEX, JOB_COMPLETION_INDEX, SLURM_ARRAY_TASK_ID is set";
  return false;
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

}  // namespace

bool parse_shard(const std::string& spec, fuzz::Shard& shard, std::string& err) {
  size_t slash = spec.find('/');
  std::string k = spec.substr(0, slash), n = slash == std::string::npos ? "" : spec.substr(slash + 1);
  uint64_t index = 0, count = 0;
  if (k == "env") {
    std::string source;
    if (!shard_index_from_env(index, source, err)) return false;
    if (n.empty()) {
      const char* c = std::getenv("SLURM_ARRAY_TASK_COUNT");
      if (!c || !parse_u64(c, count)) {
        err = "--shard env: give the shard count (env/N) or set SLURM_ARRAY_TASK_COUNT";
        return false;
      }
    } else if (!parse_u64(n, count)) {
      err = "--shard " + spec + ": expected K/N, env/N or env";
      return false;
    }
  } else if (slash == std::string::npos || !parse_u64(k, index) || !parse_u64(n, count)) {
    err = "--shard " + spec + ": expected K/N (shard K of N, 0 <= K < N), env/N or env";
    return false;
  }
  if (count == 0 || index >= count) {
    err = fmt::format("--shard {}: shard index {} is not below the shard count {}", spec, index, count);
    return false;
  }
  shard.index = index;
  shard.count = count;
  return true;
}

uint64_t peak_rss_kib() {
  struct rusage u {};
  if (getrusage(RUSAGE_SELF, &u) != 0 || u.ru_maxrss < 0) return 0;
  return uint64_t(u.ru_maxrss);  // Linux: KiB
}

std::string fuzz_summary_json(const FuzzSummary& s) {
  json mism = json::array();
  for (const auto& m : s.mismatches)
    mism.push_back({{"iteration", m.iteration}, {"engine", m.engine}, {"what", m.what}, {"reproducer", m.reproducer}});
  json doc = {{"format", kSummaryFormat},
              {"version", 1},
              {"isa", s.isa},
              {"variant", s.variant},
              {"seed", s.seed},
              {"first", s.first},
              {"iterations", s.iterations},
              {"shard", {{"index", s.shard.index}, {"count", s.shard.count}}},
              {"engines", s.engines},
              {"programs", s.programs},
              {"runs", s.runs},
              {"mismatches", mism},
              {"notes", s.notes},
              {"error", s.error},
              {"seconds", s.seconds},
              {"peak_rss_kib", s.peak_rss_kib},
              {"host", host_name()}};
  return doc.dump(2) + "\n";
}

bool parse_size(const std::string& text, uint64_t& bytes, std::string& err) {
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  std::string unit = text.substr(digits);
  uint64_t n = 0;
  if (digits == 0 || digits > 19 || !parse_u64(text.substr(0, digits), n)) {
    err = "'" + text + "': expected a size such as 512M, 4G or 1073741824";
    return false;
  }
  for (char& c : unit) c = char(std::toupper(static_cast<unsigned char>(c)));
  if (unit.size() >= 2 && unit.substr(unit.size() - 2) == "IB") unit.resize(unit.size() - 2);
  else if (!unit.empty() && unit.back() == 'B') unit.pop_back();
  unsigned shift = 0;
  if (unit == "K") shift = 10;
  else if (unit == "M") shift = 20;
  else if (unit == "G") shift = 30;
  else if (unit == "T") shift = 40;
  else if (!unit.empty()) {
    err = "'" + text + "': unknown unit (K, M, G or T, powers of 1024)";
    return false;
  }
  if (n == 0 || n > (~uint64_t(0) >> shift)) {
    err = "'" + text + "': must be at least 1 byte and below 2^64";
    return false;
  }
  bytes = n << shift;
  return true;
}

bool write_text_file(const std::string& path, const std::string& text, std::string& err) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  f.close();
  if (!f) {
    err = path + ": cannot write";
    return false;
  }
  return true;
}

int fuzz_merge(const std::vector<std::string>& files, const std::string& json_out, std::ostream& out,
               std::ostream& err) {
  if (files.empty()) {
    err << "error: gpurc fuzz merge: give the summary files (gpurc fuzz --json FILE) of every shard\n";
    return 2;
  }
  FuzzSummary merged;
  std::map<uint64_t, std::string> seen;  // shard index -> file
  uint64_t count = 0;
  double longest = 0;
  std::set<std::string> notes, errors;
  std::set<std::string> hosts;
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string& file = files[i];
    json d;
    try {
      std::ifstream in(file);
      if (!in) {
        err << "error: " << file << ": cannot open\n";
        return 2;
      }
      d = json::parse(in);
      if (!d.is_object() || d.value("format", "") != kSummaryFormat) {
        err << "error: " << file << ": not a gpurc fuzz summary (format \"" << kSummaryFormat << "\")\n";
        return 2;
      }
      FuzzSummary s;
      s.isa = d.at("isa").get<std::string>();
      s.variant = d.at("variant").get<std::string>();
      s.seed = d.at("seed").get<uint64_t>();
      s.first = d.at("first").get<uint64_t>();
      s.iterations = d.at("iterations").get<uint64_t>();
      s.shard.index = d.at("shard").at("index").get<uint64_t>();
      s.shard.count = d.at("shard").at("count").get<uint64_t>();
      s.engines = d.at("engines").get<std::vector<std::string>>();
      if (s.shard.count == 0 || s.shard.index >= s.shard.count) {
        err << fmt::format("error: {}: shard {}/{} is not a shard\n", file, s.shard.index, s.shard.count);
        return 2;
      }
      if (i == 0) {
        merged.isa = s.isa;
        merged.variant = s.variant;
        merged.seed = s.seed;
        merged.first = s.first;
        merged.iterations = s.iterations;
        merged.engines = s.engines;
        count = s.shard.count;
      } else {
        // Shards of one campaign agree on everything that decides the programs.
        auto differs = [&](const char* what, const std::string& a, const std::string& b) {
          if (a == b) return false;
          err << fmt::format("error: {}: {} {} differs from {}'s {} (not a shard of the same campaign)\n", file, what,
                             b, files[0], a);
          return true;
        };
        if (differs("isa", merged.isa, s.isa) || differs("variant", merged.variant, s.variant) ||
            differs("seed", std::to_string(merged.seed), std::to_string(s.seed)) ||
            differs("first", std::to_string(merged.first), std::to_string(s.first)) ||
            differs("iterations", std::to_string(merged.iterations), std::to_string(s.iterations)) ||
            differs("shard count", std::to_string(count), std::to_string(s.shard.count)))
          return 2;
        if (s.engines != merged.engines)
          err << "warning: " << file << ": other engines than " << files[0] << " (another host?)\n";
      }
      if (auto [it, fresh] = seen.emplace(s.shard.index, file); !fresh) {
        err << fmt::format("error: shard {}/{} appears twice: {} and {}\n", s.shard.index, count, it->second, file);
        return 2;
      }
      merged.programs += d.at("programs").get<uint64_t>();
      merged.runs += d.at("runs").get<uint64_t>();
      const double sec = d.at("seconds").get<double>();
      merged.seconds += sec;
      longest = std::max(longest, sec);
      // Optional (summaries before it had none): the largest shard's.
      if (d.contains("peak_rss_kib") && d["peak_rss_kib"].is_number_unsigned())
        merged.peak_rss_kib = std::max(merged.peak_rss_kib, d["peak_rss_kib"].get<uint64_t>());
      for (const json& m : d.at("mismatches"))
        merged.mismatches.push_back({m.at("iteration").get<uint64_t>(), m.at("engine").get<std::string>(),
                                     m.at("what").get<std::string>(), m.at("reproducer").get<std::string>()});
      for (const json& n : d.at("notes")) notes.insert(n.get<std::string>());
      if (std::string e = d.at("error").get<std::string>(); !e.empty())
        errors.insert(fmt::format("shard {}/{}: {}", s.shard.index, count, e));
      if (d.contains("host") && d["host"].is_string()) hosts.insert(d["host"].get<std::string>());
    } catch (const json::exception& x) {
      err << "error: " << file << ": " << x.what() << "\n";
      return 2;
    }
  }
  std::vector<uint64_t> missing;
  for (uint64_t k = 0; k < count; ++k)
    if (!seen.count(k)) missing.push_back(k);
  std::sort(merged.mismatches.begin(), merged.mismatches.end(),
            [](const auto& a, const auto& b) { return std::tie(a.iteration, a.engine) < std::tie(b.iteration, b.engine); });
  merged.notes.assign(notes.begin(), notes.end());
  for (const std::string& e : errors) merged.error += (merged.error.empty() ? "" : "; ") + e;
  // A complete merge is the whole campaign: shard 0 of 1.
  if (missing.empty()) merged.shard = fuzz::Shard{};
  else merged.shard = fuzz::Shard{0, 0};

  out << fmt::format("fuzz merge {}{}: seed {}, programs {}..{}, {} of {} shards, {} programs, {} runs compared on [{}], "
                     "{:.1f} s in all ({:.2f} machine-hours, longest shard {:.1f} s, {} host{}), {} mismatches\n",
                     merged.isa, merged.variant.empty() ? "" : " " + merged.variant, merged.seed, merged.first,
                     merged.first + merged.iterations, seen.size(), count, merged.programs, merged.runs,
                     fmt::format("{}", fmt::join(merged.engines, ",")), merged.seconds, merged.seconds / 3600, longest,
                     hosts.size(), hosts.size() == 1 ? "" : "s", merged.mismatches.size());
  for (const auto& m : merged.mismatches)
    out << fmt::format("  iteration {} engine {}: {}{}\n", m.iteration, m.engine, m.what,
                       m.reproducer.empty() ? "" : " (reproducer: " + m.reproducer + ")");
  for (const auto& n : merged.notes) out << "  note: " << n << "\n";
  if (!missing.empty()) {
    std::string list;
    for (uint64_t k : missing) list += (list.empty() ? "" : ", ") + std::to_string(k);
    err << fmt::format("error: incomplete campaign: shard{} {} of {} missing\n", missing.size() == 1 ? "" : "s", list,
                       count);
  }
  if (!merged.error.empty()) err << "error: " << merged.error << "\n";
  if (!json_out.empty()) {
    std::string e;
    if (!missing.empty()) {
      err << "error: --json: an incomplete merge is not written\n";
    } else if (!write_text_file(json_out, fuzz_summary_json(merged), e)) {
      err << "error: " << e << "\n";
      return 2;
    }
  }
  return missing.empty() && merged.error.empty() && merged.mismatches.empty() ? 0 : 1;
}

}  // namespace gpurc::cli
