// The ISA interface: everything the generic drivers (recompiler/: CLI verbs,
// replay, bench, public API; fuzz/: the differential campaign) know about one
// guest ISA. Each ISA implements one IsaModule in frontend/<isa>/module/ on
// top of its core (frontend/<isa>/) and rt::launch, and is named once in
// the registry list (recompiler/isa_registry.cpp). docs/architecture.md,
// "Adding an ISA", lists the files a new ISA touches.
//
// What is not here because it is typed per ISA: the launch ABI (pack and
// unpack of guest state, the memory map) is each module's own header,
// frontend/<isa>/module/launch.h, which its replay handler, its fuzz session
// and the public API (include/gpurc/<isa>.h) call; all of them run warps
// through rt::launch.
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "isa/fuzz.h"
#include "isa/replay_doc.h"

namespace gpurc {
namespace ir {
struct Function;
class Executable;
}  // namespace ir

struct DisasmOptions {
  std::string variant;   // "" = the ISA's default
  bool raw = false;      // one instruction per line, no address or encoding columns
};

// `gpurc asm` options beyond the variant.
struct AssembleOptions {
  std::string variant;        // "" = the ISA's default
  bool padding_nops = true;   // false: picasso -n (pica200 warns where a padding NOP is required)
};

namespace isa {

// What an engine compiled: the executable and what a launch needs to know
// about its var layout.
struct Compiled {
  std::shared_ptr<ir::Executable> exe;
  uint32_t vars_bytes = 0;   // of the function the engine runs (passes may add vars after the guest's)
  double compile_us = 0;     // 0 on a cache hit
  // The largest watchdog charge one step of the run function may make (the
  // loop-budget pass charges a loop's IR size per iteration): a launch that
  // turns a guest instruction budget into watchdog units scales by it.
  uint64_t max_step_cost = 1;
};

// An execution engine as a module sees it. The driver makes it from the
// engine registry, so no module knows which tiers exist or which host it
// runs on.
class EngineHandle {
 public:
  virtual ~EngineHandle() = default;
  // "interp", "jit-avx512", ... (for messages and fault texts).
  virtual std::string name() const = 0;
  // The reference engine: a guest ISA runs its own reference interpreter
  // (through rt::launch, see docs/architecture.md), isa "ir" the IR
  // interpreter on the function as written.
  virtual bool is_reference() const = 0;
  // Pre-SSA IR -> something that runs it (the reference: the IR interpreter
  // on `f` as given; a JIT tier: the pass pipeline, code generation, the code
  // cache). The first f.vars.size() vars keep their layout. `symbol` names
  // the code in perf maps. False with `err`.
  virtual bool compile(const ir::Function& f, const std::string& symbol, Compiled& out, std::string& err) const = 0;
  // The same for a function the caller gives up: the engine may run its
  // passes on `f` itself instead of on a copy of it. `f` is unspecified
  // afterwards (moved from, or changed by the passes). By default compile().
  virtual bool compile_owned(ir::Function& f, const std::string& symbol, Compiled& out, std::string& err) const {
    return compile(f, symbol, out, err);
  }
};

// One run of a replay document (docs/replay-format.md) on one engine.
struct ReplayJob {
  const replay::json& doc;
  std::filesystem::path dir;    // the file's folder: relative paths start here
  const EngineHandle& engine;
  unsigned threads = 0;         // host threads; 0 = all cores
  bool count_instructions = false;  // fill ReplayRun::guest_instructions
};

class IsaModule {
 public:
  virtual ~IsaModule() = default;
  virtual std::string name() const = 0;
  // A guest ISA: listed by `gpurc disasm|asm|ir --isa` and in their messages.
  // False for isa "ir" (IR text), which only replays.
  virtual bool is_guest() const { return true; }

  // ---- codec -----------------------------------------------------------
  virtual std::vector<std::string> variants() const = 0;  // first = default
  // Whether `--variant v` names something this ISA runs: by default one of
  // variants(); an ISA whose variant strings have parts (tesla's `g200:vp`
  // program types) checks them itself.
  virtual bool accepts_variant(const std::string& v) const;
  // Unit of `--hex` text input: 4 = 32-bit words (pica200, tesla), 1 = bytes (g13, bifrost).
  virtual unsigned hex_unit_bytes() const = 0;
  // Code bytes (raw code, or a container such as .shbin / text .cubin, which
  // the ISA recognises itself) -> text. False with `err` on bad input.
  virtual bool disassemble(const std::vector<uint8_t>& code, const DisasmOptions& opt, std::string& out,
                           std::string& err) const = 0;
  // Text in the ISA's assembler syntax -> code bytes (or container bytes where
  // the syntax describes a container, e.g. picasso -> .shbin).
  virtual bool assemble(const std::string& text, const std::string& variant, std::vector<uint8_t>& out,
                        std::string& err) const = 0;
  // The same with options; by default only the variant is used and an
  // option the ISA has no use for (padding_nops = false) is refused.
  virtual bool assemble_with(const std::string& text, const AssembleOptions& opt, std::vector<uint8_t>& out,
                        std::string& err) const;
  // Code (as disassemble reads it) -> the pre-SSA IR function the JIT compiles
  // for its default entry point (`gpurc ir --isa`). Default: not supported.
  virtual bool translate(const std::vector<uint8_t>& code, const std::string& variant, ir::Function& out,
                         std::string& err) const;

  // ---- replay (and so `gpurc replay`, `gpurc bench`) ---------------------
  virtual bool has_replay() const { return false; }
  // Reads the ISA's parts of the document (program, state, inputs, launch
  // shape), runs the program once on job.engine through rt::launch and fills
  // `run` with what it observed (named memory buffers, outputs, registers).
  // Throws replay::ReplayError for an invalid document.
  virtual void replay(const ReplayJob& job, replay::ReplayRun& run) const;

  // ---- differential fuzzing (`gpurc fuzz --isa`) --------------------------
  // A campaign's ISA half (isa/fuzz.h); null when the ISA has no fuzzer.
  // False with `err` for options the ISA refuses (variant, ...).
  virtual std::unique_ptr<FuzzSession> fuzz_session(const fuzz::IsaFuzzOptions& opt, std::string& err) const;
  // Whether IsaFuzzOptions::first (re-running part of a campaign) is honoured:
  // the session's generate(i) does not depend on programs before i.
  virtual bool fuzz_can_start_anywhere() const { return false; }
  bool has_fuzzer() const { return fuzz_capable(); }
  // Whether fuzz_session can return a session (without making one).
  virtual bool fuzz_capable() const { return false; }
};

// The registry (recompiler/isa_registry.cpp: one line per module).
// Every module in a fixed order; the guest ISAs among them; by name (null if unknown).
const std::vector<const IsaModule*>& all_modules();
std::vector<const IsaModule*> guest_isas();
const IsaModule* find_module(const std::string& name);

}  // namespace isa
}  // namespace gpurc
