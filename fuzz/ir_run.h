// Running one IR function on one engine from a given initial state, and
// comparing end states bit for bit: the execution half of the IR fuzzer,
// shared by run_ir_fuzz, the minimiser and the regression tests.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fuzz/rng.h"
#include "ir/abi.h"
#include "ir/ir.h"

namespace gpurc::fuzz {

// Everything a run starts from. `vars` uses the layout of the function as
// generated (Function::var_offset); the one global buffer is kGlobalSize bytes
// at kGlobalBase (see ir_gen.h).
struct IrState {
  uint32_t entry_mask = 0xffffffffu;
  std::vector<uint8_t> vars;
  std::vector<uint8_t> uniforms;
  std::vector<uint8_t> memory;
  // More global buffers (e.g. the PICA200 emit records), copied back into
  // IrOutcome::extra after the run.
  struct Buffer {
    uint64_t base = 0;
    std::vector<uint8_t> bytes;
  };
  std::vector<Buffer> extra;
};

// Random initial state for `f`: canonical lane values biased to special
// numbers, a random uniform block and memory, and an entry mask that is mostly
// all 32 lanes, sometimes a random subset, sometimes a single lane.
IrState random_state(const ir::Function& f, Rng& rng);

struct IrOutcome {
  std::string error;                 // the engine could not run the function (pipeline / compile failure)
  ir::RunStatus status = ir::RunStatus::Done;
  ir::FaultKind fault = ir::FaultKind::None;
  uint64_t fault_code = 0;
  std::vector<uint8_t> vars;         // the original function's var area after the run
  std::vector<uint8_t> memory;       // the global buffer after the run
  std::vector<std::vector<uint8_t>> extra;  // IrState::extra's buffers after the run
};

// Engine names: "interp" (the reference: the IR interpreter on the function as
// given), "interp-pipeline" (the interpreter on the pipelined function) and the
// JIT tiers of the engine registry (engines/registry.h: "jit-avx512",
// "jit-avx2", ...; the former short names "avx512", "avx2" are aliases).
std::vector<std::string> host_jit_engines();     // the tiers this host can run, best first
bool is_known_engine(const std::string& name);
// The registry name of a JIT tier given by name or alias, "" if `name` is none.
std::string jit_engine_name(const std::string& name);

// A function prepared for every engine: the original and its pipelined copy.
struct IrProgram {
  ir::Function original;
  ir::Function lowered;
  std::string pipeline_error;        // run_pipeline failed: every engine but "interp" reports it
};
IrProgram prepare_program(const ir::Function& f);

// Budget large enough for every generated program's bounded loops.
constexpr int64_t kFuzzBudget = 1ll << 32;

// The executable of `engine` for `p` (the original function for "interp",
// the pipelined one otherwise), or null with `error` set.
std::unique_ptr<ir::Executable> make_executable(const std::string& engine, const IrProgram& p, std::string& error);

IrOutcome run_engine(const std::string& engine, const IrProgram& p, const IrState& st,
                     int64_t budget = kFuzzBudget);

// "" if `got` matches `ref`, else the first difference: status, fault kind,
// trap code, a var lane, a memory byte. After a fault only status, kind and
// (for traps) the code are compared: which lane faulted first and the state
// at that point depend on the schedule, which the IR does not fix.
std::string compare_outcomes(const ir::Function& f, const IrOutcome& ref, const IrOutcome& got);

const char* fault_kind_name(ir::FaultKind k);

}  // namespace gpurc::fuzz
