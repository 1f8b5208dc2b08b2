// Differential fuzzing of one guest ISA: the campaign options and report
// (what `gpurc fuzz --isa` prints), and the ISA's half of a campaign
// (FuzzSession), which the generic driver (fuzz/isa_fuzz.cpp) runs: random
// valid programs on the ISA's reference interpreter and, translated to IR, on
// the IR interpreter and every JIT tier, end states compared bit for bit,
// mismatches saved as replay files and optionally minimised.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace gpurc {
namespace ir {
struct Function;
class Executable;
}  // namespace ir

namespace fuzz {

struct IsaFuzzOptions {
  uint64_t iterations = 500;
  uint64_t first = 0;                 // index of the first program (IsaModule::fuzz_can_start_anywhere ISAs only)
  uint64_t seed = 1;
  std::string variant;                // "" = the ISA's default
  std::vector<std::string> engines;   // JIT tiers to run; empty = all the host supports
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

}  // namespace fuzz

namespace isa {

// One generated program with its initial state: each ISA derives its own.
struct FuzzCase {
  virtual ~FuzzCase() = default;
};

// An engine's end state: each ISA derives its own. `error`: the engine could
// not run the program at all (a mismatch whatever the reference did).
struct FuzzOutcome {
  virtual ~FuzzOutcome() = default;
  std::string error;
};

// What the driver gives a session to run the translation on one IR engine.
struct TranslatedRun {
  const std::string& engine;        // "ir-interp", "interp-pipeline", or a JIT tier name
  const ir::Function& translation;  // as FuzzSession::translate made it: its var layout is the guest state's
  uint32_t vars_bytes;              // of the function `exe` runs (passes may add vars after the guest's)
  const ir::Executable& exe;
};

// The ISA's half of one campaign (IsaModule::fuzz_session). The driver calls,
// per program index i = first, first + 1, ...: generate(i); run_reference;
// translate; run_translated + compare for each engine; on a difference
// reproducer (and minimize, up to max_minimized programs).
class FuzzSession {
 public:
  virtual ~FuzzSession() = default;
  // The IR-interpreter engines run before the JIT tiers, in report order:
  // "ir-interp" (the IR interpreter on the translation as written) and, if
  // the ISA's campaign wants it, "interp-pipeline" (on the pipelined copy).
  virtual std::vector<std::string> ir_engines() const { return {"ir-interp"}; }
  // Program `index`. Called with increasing indices, so a generator may draw
  // every program from one random stream (then IsaModule::fuzz_can_start_anywhere
  // is false). Null with `err` on a generator failure (the campaign stops).
  virtual std::unique_ptr<FuzzCase> generate(uint64_t index, std::string& err) = 0;
  // The reference interpreter's end state (through rt::launch).
  virtual std::unique_ptr<FuzzOutcome> run_reference(const FuzzCase& c) = 0;
  // The text of the mismatch recorded for engine "interp" when the reference
  // reports FuzzOutcome::error (a generator bug), given that error.
  virtual std::string reference_error(const std::string& error) const {
    return "generated program does not run on the interpreter: " + error;
  }
  // The pre-SSA translation the IR engines run. False with `err`: recorded
  // as a mismatch of engine "translate".
  virtual bool translate(const FuzzCase& c, ir::Function& out, std::string& err) = 0;
  // The translation on one IR engine (through rt::launch).
  virtual std::unique_ptr<FuzzOutcome> run_translated(const FuzzCase& c, const TranslatedRun& run) = 0;
  // "" if `got` matches `ref`, else the first difference.
  virtual std::string compare(const FuzzCase& c, const FuzzOutcome& ref, const FuzzOutcome& got) = 0;
  // The replay document (text) that reproduces `c`, with `name` and
  // `description`; "" = not saved.
  virtual std::string reproducer(const FuzzCase& c, const FuzzOutcome& ref, const std::string& name,
                                 const std::string& description) = 0;
  // File name stem of the reproducer of program `index` (".json" is added).
  virtual std::string reproducer_stem(uint64_t seed, uint64_t index) const = 0;
  // Minimisation: shrinks `c` while `still_differs(c)` holds (the driver
  // reruns reference, translation and the engine); returns how many
  // instructions went. The driver saves a minimised copy as "<stem>-min" for
  // the first max_minimized() mismatching programs. Default: none.
  virtual unsigned max_minimized() const { return 0; }
  virtual unsigned minimize(FuzzCase& c, const std::function<bool(const FuzzCase&)>& still_differs) {
    (void)c, (void)still_differs;
    return 0;
  }
  // Informational lines for the report, asked once at the end.
  virtual std::vector<std::string> notes() const { return {}; }
};

}  // namespace isa
}  // namespace gpurc
