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

// One shard of a campaign split over several processes or machines
// (`gpurc fuzz --shard K/N`, docs/fuzzing.md "Campaigns on many machines"):
// program i of the campaign belongs to shard i mod N, so the shards of one
// campaign run disjoint sets of programs whose union is the campaign, and
// each program is the one the unsharded campaign (N = 1) runs at index i.
struct Shard {
  uint64_t index = 0;
  uint64_t count = 1;
  bool owns(uint64_t program) const { return count <= 1 || program % count == index; }
};

struct IsaFuzzOptions {
  uint64_t iterations = 500;
  uint64_t first = 0;                 // index of the first program (IsaModule::fuzz_can_start_anywhere ISAs only)
  uint64_t seed = 1;
  Shard shard;                        // run only this shard's programs of [first, first + iterations)
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
// A program index may give several cases (Tesla: an iteration's ordinary
// program and, sometimes, a barrier program); `label` tells them apart in
// mismatch texts and reproducer names ("" for the first).
struct FuzzCase {
  virtual ~FuzzCase() = default;
  uint64_t index = 0;   // the program index it was generated for (set by the session)
  std::string label;
};

// An engine's end state: each ISA derives its own. `error`: the engine could
// not run the program at all (a mismatch whatever the reference did).
struct FuzzOutcome {
  virtual ~FuzzOutcome() = default;
  std::string error;
  // What the run counts as in the report's "runs compared" (PICA200: one
  // per warp of 32 vertices it launched; usually 1).
  uint64_t runs = 1;
};

// What the driver gives a session to run the translation on one IR engine.
struct TranslatedRun {
  const std::string& engine;        // "ir-interp", "interp-pipeline", or a JIT tier name
  const ir::Function& translation;  // as FuzzSession::translate made it: its var layout is the guest state's
  uint32_t vars_bytes;              // of the function `exe` runs (passes may add vars after the guest's)
  const ir::Executable& exe;
};

// What the reference's end state means for the campaign.
enum class ReferenceVerdict {
  Compare,        // compare the engines against it
  Skip,           // nothing to compare (e.g. the reference ran out of its budget): no engine runs, no mismatch
  Mismatch,       // record a mismatch of engine "interp" (text: the verdict's message) and go on
  StopCampaign,   // the generator made an invalid program: IsaFuzzReport::error = message, stop
};

// Where a reproducer goes and what it says.
struct ReproducerInfo {
  std::string stem;        // file name without ".json"
  std::string engine;      // the (first) mismatching engine
  std::string what;        // its difference
  bool minimised = false;  // a minimised copy ("<stem>-min")
  // The driver's suggestions for the document's name and description:
  // "<isa> fuzz seed S iteration I" (+ " (minimised)") and "<engine>: <what>".
  std::string title, description;
};

// The ISA's half of one campaign (IsaModule::fuzz_session). The driver
// (fuzz/isa_fuzz.cpp) calls, per program index i = first, first + 1, ...:
// generate(i) -> cases; per case: run_reference, check_reference; translate;
// per engine (ir_engines() then the JIT tiers): run_translated, compare; on
// differences: reproducer (one per case or one per mismatching engine, see
// reproducer_per_engine) and minimize (up to max_minimized() mismatches).
// Every text the report prints (mismatch texts, reproducer names, notes,
// errors) comes from the session, so a migrated campaign prints what it did.
//
// Two forms: a simple session (one case per index, one reproducer per case)
// overrides generate(index, err), reproducer_stem(seed, index) and
// reproducer(case, ref, name, description); the full form overrides the
// overloads taking a case list, a case and engine, and a ReproducerInfo,
// whose defaults call the simple ones.
class FuzzSession {
 public:
  virtual ~FuzzSession() = default;
  // The IR-interpreter engines run before the JIT tiers, in report order:
  // "ir-interp" (the IR interpreter on the translation as written) and, if
  // the ISA's campaign wants it, "interp-pipeline" (on the pipelined copy).
  virtual std::vector<std::string> ir_engines() const { return {"ir-interp"}; }
  // The cases of program `index` (usually one). Called with increasing
  // indices, so a generator may draw every program from one random stream
  // (then IsaModule::fuzz_can_start_anywhere is false). False with `err` (the
  // whole message, e.g. naming the iteration) on a generator failure: the
  // campaign stops with that error.
  virtual bool generate(uint64_t index, std::vector<std::unique_ptr<FuzzCase>>& out, std::string& err);
  // Simple form: the one case of `index`; null with `err` (the driver adds
  // " (iteration <index>)") on a generator failure.
  virtual std::unique_ptr<FuzzCase> generate(uint64_t index, std::string& err);
  // The reference interpreter's end state (through rt::launch).
  virtual std::unique_ptr<FuzzOutcome> run_reference(const FuzzCase& c) = 0;
  // Default: a reference that could not run (FuzzOutcome::error) is a
  // mismatch "generated program does not run on the interpreter: <error>".
  virtual ReferenceVerdict check_reference(const FuzzCase& c, const FuzzOutcome& ref, std::string& message) const {
    (void)c;
    if (ref.error.empty()) return ReferenceVerdict::Compare;
    message = reference_error(ref.error);
    return ReferenceVerdict::Mismatch;
  }
  // Simple form: the mismatch text of a reference that could not run.
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
  // The mismatch text the report shows for a difference `what` of `engine`
  // (e.g. Tesla prefixes "barrier program: " for its labelled cases).
  virtual std::string mismatch_text(const FuzzCase& c, const std::string& engine, const std::string& what) const {
    (void)c, (void)engine;
    return what;
  }
  // Reproducers: one file per mismatching engine (true) or one per case for
  // its first difference (false, default).
  virtual bool reproducer_per_engine() const { return false; }
  // File name stem (no ".json") of the reproducer of `c` (for `engine` when
  // reproducer_per_engine).
  virtual std::string reproducer_stem(uint64_t seed, const FuzzCase& c, const std::string& engine) const {
    (void)engine;
    return reproducer_stem(seed, c.index);
  }
  // Simple form: the stem of program `index`'s reproducer.
  virtual std::string reproducer_stem(uint64_t seed, uint64_t index) const;
  // The replay document (text) that reproduces `c`; "" = not saved.
  virtual std::string reproducer(const FuzzCase& c, const FuzzOutcome& ref, const ReproducerInfo& info) {
    return reproducer(c, ref, info.title, info.description);
  }
  // Simple form: the document with `name` and `description`.
  virtual std::string reproducer(const FuzzCase& c, const FuzzOutcome& ref, const std::string& name,
                                 const std::string& description);
  // Minimisation, for the first max_minimized() saved mismatches of an engine
  // other than "interp": a smaller copy of `c` that still shows a difference
  // of the same kind (`still_differs` reruns reference, translation and the
  // engine; a session may use its own test instead), or null when nothing
  // could go. The driver saves it as "<stem>-min"; `c` itself is not changed.
  virtual unsigned max_minimized() const { return 0; }
  virtual std::unique_ptr<FuzzCase> minimize(const FuzzCase& c, const std::string& engine,
                                             const std::function<bool(const FuzzCase&)>& still_differs) {
    (void)c, (void)engine, (void)still_differs;
    return nullptr;
  }
  // Informational lines for the report, asked once at the end.
  virtual std::vector<std::string> notes() const { return {}; }
};

}  // namespace isa
}  // namespace gpurc
