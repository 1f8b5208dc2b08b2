// Differential fuzzing at the IR level: random well-typed IR functions run on
// the IR interpreter (before and after the pass pipeline) and on every JIT
// tier the host supports; end states are compared bit for bit.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "fuzz/ir_run.h"
#include "ir/ir.h"
#include "isa/fuzz.h"

namespace gpurc::fuzz {

struct IrFuzzOptions {
  uint64_t iterations = 1000;
  uint64_t seed = 1;
  Shard shard;                        // run only this shard's programs of [0, iterations)
  std::vector<std::string> engines;   // subset of "avx512", "avx2", "a64"; empty = all the host supports
  std::string out_dir = "fuzz-out";   // reproducers (IR text + state) are written here
  bool save_reproducers = true;
  // Called about every 100 ms with (programs done, mismatches so far); may be empty.
  std::function<void(uint64_t, uint64_t)> progress;
  // Shrink each mismatching program before saving it (the full program is saved beside it).
  bool minimize = true;
  uint64_t max_minimized = 20;        // minimise at most this many mismatches per campaign
  uint64_t max_saved = 200;           // save at most this many reproducers (one per mismatching program)
  // Run each program in a child process (POSIX): a crash or hang of an engine
  // becomes a reported mismatch ("crash: signal N", "timeout") with a saved
  // reproducer instead of ending the campaign.
#ifdef __unix__
  bool isolate = true;
#else
  bool isolate = false;
#endif
  unsigned timeout_seconds = 60;      // per program, with isolate
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

// The seed of program `iteration` of a campaign started with `seed`.
uint64_t ir_program_seed(uint64_t seed, uint64_t iteration);

// ---- reproducers: one JSON file, an `isa: "ir"` replay document (docs/fuzzing.md)
struct IrReproducer {
  ir::Function function;
  IrState state;
  std::string engine;        // the engine that disagreed with the reference
  std::string what;          // the difference seen when it was saved
};
bool save_ir_reproducer(const std::string& path, const IrReproducer& r, std::string* error);
bool load_ir_reproducer(const std::string& path, IrReproducer& r, std::string* error);

// Runs `f` from `st` on the reference and on each engine (empty: every engine
// of this host, interp-pipeline included); one entry per engine that differs,
// "<engine>: <difference>".
std::vector<std::string> check_ir_program(const ir::Function& f, const IrState& st,
                                          const std::vector<std::string>& engines = {});

// Shrinks `f` (dropping instructions, turning values into constants, turning
// conditional branches into plain ones) while `engine` still differs from the
// reference in the same way. Returns the smallest function found (verified).
ir::Function minimize_ir(const ir::Function& f, const IrState& st, const std::string& engine,
                         int max_attempts = 2000);

}  // namespace gpurc::fuzz
