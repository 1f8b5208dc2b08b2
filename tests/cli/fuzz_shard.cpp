// `gpurc fuzz --shard K/N`, `--json` and `gpurc fuzz merge` (docs/fuzzing.md
// "Campaigns on many machines").
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fuzz/isa_fuzz.h"
#include "isa/module.h"
#include "recompiler/cli.h"
#include "tests/cli/cli_run.h"
#include "recompiler/cli_verbs.h"

namespace gpurc_test_cli_fuzz_shard {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

using cli_test::Result;
using cli_test::run;

struct Scratch {
  fs::path dir = fs::temp_directory_path() / ("gpurc-shard-test-" + std::to_string(getpid()));
  Scratch() { fs::create_directories(dir); }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  std::string path(const std::string& name) const { return (dir / name).string(); }
};

json load(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in);
}

// A module whose session records which programs it generated and which it
// ran: every case "fails to translate", so each run program is one mismatch
// naming its iteration.
struct RecordingSession final : isa::FuzzSession {
  std::vector<uint64_t>* generated;
  explicit RecordingSession(std::vector<uint64_t>* g) : generated(g) {}
  std::unique_ptr<isa::FuzzCase> generate(uint64_t index, std::string&) override {
    generated->push_back(index);
    return std::make_unique<isa::FuzzCase>();
  }
  std::unique_ptr<isa::FuzzOutcome> run_reference(const isa::FuzzCase&) override {
    return std::make_unique<isa::FuzzOutcome>();
  }
  bool translate(const isa::FuzzCase&, ir::Function&, std::string& err) override {
    err = "recorded";
    return false;
  }
  std::unique_ptr<isa::FuzzOutcome> run_translated(const isa::FuzzCase&, const isa::TranslatedRun&) override {
    return std::make_unique<isa::FuzzOutcome>();
  }
  std::string compare(const isa::FuzzCase&, const isa::FuzzOutcome&, const isa::FuzzOutcome&) override { return ""; }
};

struct RecordingModule final : isa::IsaModule {
  bool anywhere;
  mutable std::vector<uint64_t> generated;
  explicit RecordingModule(bool a) : anywhere(a) {}
  std::string name() const override { return "recording"; }
  std::vector<std::string> variants() const override { return {""}; }
  unsigned hex_unit_bytes() const override { return 4; }
  bool disassemble(const std::vector<uint8_t>&, const DisasmOptions&, std::string&, std::string&) const override {
    return false;
  }
  bool assemble(const std::string&, const std::string&, std::vector<uint8_t>&, std::string&) const override {
    return false;
  }
  bool translate(const std::vector<uint8_t>&, const std::string&, ir::Function&, std::string&) const override {
    return false;
  }
  std::unique_ptr<isa::FuzzSession> fuzz_session(const fuzz::IsaFuzzOptions&, std::string&) const override {
    return std::make_unique<RecordingSession>(&generated);
  }
  bool fuzz_can_start_anywhere() const override { return anywhere; }
};

std::vector<uint64_t> ran(const fuzz::IsaFuzzReport& r) {
  std::vector<uint64_t> v;
  for (const auto& m : r.mismatches) v.push_back(m.iteration);
  return v;
}

}  // namespace

TEST_CASE("fuzz shards: program i runs in shard i mod N, as program i of the whole campaign") {
  for (bool anywhere : {true, false}) {
    CAPTURE(anywhere);
    fuzz::IsaFuzzOptions opt;
    opt.iterations = 10;
    opt.first = anywhere ? 3 : 0;
    opt.save_reproducers = false;
    RecordingModule whole(anywhere);  // every case fails to translate: no engine runs
    fuzz::IsaFuzzReport all = fuzz::run_isa_fuzz(whole, opt);
    REQUIRE(all.error.empty());
    std::vector<uint64_t> expect;
    for (uint64_t i = opt.first; i < opt.first + 10; ++i) expect.push_back(i);
    CHECK(ran(all) == expect);
    std::multiset<uint64_t> union_of_shards;
    for (uint64_t k = 0; k < 3; ++k) {
      RecordingModule m(anywhere);
      opt.shard = {k, 3};
      fuzz::IsaFuzzReport r = fuzz::run_isa_fuzz(m, opt);
      CHECK(r.programs == ran(r).size());
      for (uint64_t i : ran(r)) {
        CHECK(i % 3 == k);
        union_of_shards.insert(i);
      }
      // A session with one random stream generates every program up to its
      // own (so program i is the same as in the whole campaign); the others
      // generate only their own.
      if (anywhere) CHECK(m.generated == ran(r));
      else CHECK(m.generated == expect);
    }
    CHECK(std::vector<uint64_t>(union_of_shards.begin(), union_of_shards.end()) == expect);
  }
}

TEST_CASE("fuzz shards: --shard syntax and the job-array environment") {
  fuzz::Shard s;
  std::string e;
  CHECK(cli::parse_shard("2/5", s, e));
  CHECK((s.index == 2 && s.count == 5));
  CHECK(cli::parse_shard("0/1", s, e));
  for (const char* bad : {"5/5", "1/0", "3", "a/4", "-1/4", "1/4/2", "", "1/"}) {
    CAPTURE(bad);
    CHECK_FALSE(cli::parse_shard(bad, s, e));
    CHECK(!e.empty());
  }
  unsetenv("GPURC_SHARD_INDEX");
  unsetenv("JOB_COMPLETION_INDEX");
  unsetenv("SLURM_ARRAY_TASK_ID");
  unsetenv("SLURM_ARRAY_TASK_MIN");
  unsetenv("SLURM_ARRAY_TASK_COUNT");
  CHECK_FALSE(cli::parse_shard("env/4", s, e));
  CHECK(e.find("JOB_COMPLETION_INDEX") != std::string::npos);
  setenv("JOB_COMPLETION_INDEX", "3", 1);  // Kubernetes Indexed Job
  CHECK(cli::parse_shard("env/4", s, e));
  CHECK((s.index == 3 && s.count == 4));
  CHECK_FALSE(cli::parse_shard("env/3", s, e));  // index 3 is not below 3
  CHECK_FALSE(cli::parse_shard("env", s, e));    // no count anywhere
  unsetenv("JOB_COMPLETION_INDEX");
  setenv("SLURM_ARRAY_TASK_ID", "7", 1);  // sbatch --array=5-12
  setenv("SLURM_ARRAY_TASK_MIN", "5", 1);
  setenv("SLURM_ARRAY_TASK_COUNT", "8", 1);
  CHECK(cli::parse_shard("env", s, e));
  CHECK((s.index == 2 && s.count == 8));
  setenv("GPURC_SHARD_INDEX", "1", 1);
  CHECK(cli::parse_shard("env", s, e));
  CHECK(s.index == 1);
  setenv("GPURC_SHARD_INDEX", "x", 1);
  CHECK_FALSE(cli::parse_shard("env", s, e));
  for (const char* v : {"GPURC_SHARD_INDEX", "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_COUNT"})
    unsetenv(v);
  CHECK(run({"fuzz", "--ir", "--shard", "3/3"}).rc == 2);
}

TEST_CASE("fuzz shards: --json summaries of the shards merge into the campaign") {
  Scratch s;
  const std::string out = s.path("out");
  Result whole = run({"fuzz", "--ir", "--iterations", "7", "--seed", "5", "--json", s.path("whole.json"), "--out", out});
  REQUIRE(whole.rc == 0);
  json w = load(s.path("whole.json"));
  CHECK(w["format"] == "gpurc-fuzz-summary");
  CHECK(w["isa"] == "ir");
  CHECK(w["programs"] == 7);
  CHECK(w["shard"]["count"] == 1);
  CHECK(w["mismatches"].empty());
  CHECK(w["seconds"].get<double>() > 0);
  CHECK(w["peak_rss_kib"].get<uint64_t>() > 0);  // getrusage: the process's peak
  std::vector<std::string> files;
  uint64_t programs = 0, peak_rss = 0;
  for (int k = 0; k < 3; ++k) {
    files.push_back(s.path("s" + std::to_string(k) + ".json"));
    Result r = run({"fuzz", "--ir", "--iterations", "7", "--seed", "5", "--shard", std::to_string(k) + "/3", "--json",
                    files.back(), "--out", out});
    REQUIRE(r.rc == 0);
    json j = load(files.back());
    CHECK(j["shard"]["index"] == k);
    programs += j["programs"].get<uint64_t>();
    peak_rss = std::max(peak_rss, j["peak_rss_kib"].get<uint64_t>());
  }
  CHECK(programs == 7);
  std::vector<std::string> args = {"fuzz", "merge"};
  args.insert(args.end(), files.begin(), files.end());
  args.insert(args.end(), {"--json", s.path("merged.json")});
  Result m = run(args);
  CHECK(m.rc == 0);
  CHECK(m.out.find("3 of 3 shards, 7 programs") != std::string::npos);
  json mj = load(s.path("merged.json"));
  CHECK(mj["programs"] == 7);
  CHECK(mj["runs"] == w["runs"]);
  CHECK(mj["shard"]["count"] == 1);
  CHECK(mj["peak_rss_kib"] == peak_rss);  // the largest shard's
  CHECK(run({"fuzz", "merge", s.path("merged.json")}).rc == 0);  // a merged summary is the whole campaign

  // A missing shard: the campaign is incomplete (a failed check).
  Result missing = run({"fuzz", "merge", files[0], files[2]});
  CHECK(missing.rc == 1);
  CHECK(missing.err.find("shard 1 of 3 missing") != std::string::npos);
  // The same shard twice, or shards of another campaign: bad input.
  CHECK(run({"fuzz", "merge", files[0], files[1], files[1], files[2]}).rc == 2);
  CHECK(run({"fuzz", "merge", files[0], s.path("whole.json")}).rc == 2);
  json other = load(files[1]);
  other["seed"] = 6;
  std::ofstream(s.path("other.json")) << other.dump();
  Result o = run({"fuzz", "merge", files[0], s.path("other.json"), files[2]});
  CHECK(o.rc == 2);
  CHECK(o.err.find("seed 6 differs") != std::string::npos);
  // A shard with a mismatch fails the merge and lists it.
  json bad = load(files[1]);
  bad["mismatches"].push_back({{"iteration", 4}, {"engine", "jit-avx2"}, {"what", "r0 lane 3"}, {"reproducer", "x.json"}});
  std::ofstream(s.path("bad.json")) << bad.dump();
  Result b = run({"fuzz", "merge", files[0], s.path("bad.json"), files[2]});
  CHECK(b.rc == 1);
  CHECK(b.out.find("iteration 4 engine jit-avx2: r0 lane 3 (reproducer: x.json)") != std::string::npos);
  std::ofstream(s.path("junk.json")) << "{\"a\": 1}";
  CHECK(run({"fuzz", "merge", s.path("junk.json")}).rc == 2);
  CHECK(run({"fuzz", "merge", s.path("nothing.json")}).rc == 2);
}

}  // namespace gpurc_test_cli_fuzz_shard
