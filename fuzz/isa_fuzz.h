// Differential fuzzing of one guest ISA: random valid programs generated from
// the ISA's encoding table run on its reference interpreter and, translated to
// IR, on the IR interpreter and every JIT tier; end states are compared bit
// for bit. Each ISA implements its campaign in fuzz/<isa>_fuzz.cpp.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace gpurc::fuzz {

struct IsaFuzzOptions {
  uint64_t iterations = 500;
  uint64_t first = 0;                 // index of the first program (tesla only: re-run part of a campaign)
  uint64_t seed = 1;
  std::string variant;                // "" = the ISA's default
  std::vector<std::string> engines;   // subset of "avx512", "avx2", "a64"; empty = all the host supports
  std::string out_dir = "fuzz-out";   // mismatching programs are saved here as replay files
  bool save_reproducers = true;
  uint64_t max_saved = 200;
  // Called now and then with (programs done, mismatches so far); may be empty.
  std::function<void(uint64_t, uint64_t)> progress;
};

struct IsaFuzzMismatch {
  uint64_t iteration = 0;
  std::string engine;
  std::string what;          // first difference (register / lane / memory byte)
  std::string reproducer;    // replay file written, or ""
};

struct IsaFuzzReport {
  uint64_t programs = 0;
  uint64_t runs = 0;         // engine executions compared
  std::vector<std::string> engines;
  std::vector<IsaFuzzMismatch> mismatches;
  std::string error;         // generator / translation failure (counts as a failure)
  std::vector<std::string> notes;  // informational lines, e.g. instruction kinds skipped as unsupported
};

IsaFuzzReport run_pica200_fuzz(const IsaFuzzOptions& opt);
IsaFuzzReport run_tesla_fuzz(const IsaFuzzOptions& opt);
IsaFuzzReport run_g13_fuzz(const IsaFuzzOptions& opt);

// The campaign of `isa`, or null when it has none.
using IsaFuzzer = IsaFuzzReport (*)(const IsaFuzzOptions&);
IsaFuzzer find_isa_fuzzer(const std::string& isa);
std::vector<std::string> fuzzable_isas();

}  // namespace gpurc::fuzz
