// Differential fuzzing at the IR level: random well-typed IR functions run on
// the IR interpreter (before and after the pass pipeline) and on every JIT
// tier the host supports; end states are compared bit for bit.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace gpurc::fuzz {

struct IrFuzzOptions {
  uint64_t iterations = 1000;
  uint64_t seed = 1;
  std::vector<std::string> engines;   // subset of "avx512", "avx2", "a64"; empty = all the host supports
  std::string out_dir = "fuzz-out";   // reproducers (IR text + state) are written here
  bool save_reproducers = true;
  // Called about every 100 ms with (programs done, mismatches so far); may be empty.
  std::function<void(uint64_t, uint64_t)> progress;
};

struct IrFuzzMismatch {
  uint64_t iteration = 0;
  std::string engine;
  std::string what;          // first differing var / lane / memory byte
  std::string reproducer;    // path written, or "" when not saved
};

struct IrFuzzReport {
  uint64_t programs = 0;
  uint64_t runs = 0;         // engine executions compared
  std::vector<std::string> engines;
  std::vector<IrFuzzMismatch> mismatches;
  std::string error;         // generator or compile failure (counts as a failure)
};

IrFuzzReport run_ir_fuzz(const IrFuzzOptions& opt);

}  // namespace gpurc::fuzz
