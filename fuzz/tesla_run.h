// Running one generated Tesla program on the reference interpreter or, once
// translated to IR, on the IR interpreter and the JIT tiers, and comparing the
// end states bit for bit: the execution half of `gpurc fuzz --isa tesla`.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "frontend/tesla/interp.h"
#include "fuzz/ir_run.h"
#include "fuzz/tesla_gen.h"

namespace gpurc::fuzz {

// End state of one engine.
struct TeslaOutcome {
  std::string error;                          // the engine could not run the program at all
  std::string fault;                          // "" = ran to the end, else the fault kind ("out-of-bounds", ...)
  std::string fault_message;
  std::vector<tesla::ThreadState> threads;    // the launched threads
  tesla::LaunchMemory mem;
  std::vector<uint8_t> shared;
  std::vector<std::vector<uint8_t>> locals;   // l[] of each launched thread
  std::vector<std::vector<uint8_t>> outs;     // o[] of each launched thread
};

// The reference: BlockInterpreter::run_with on the program's initial state.
TeslaOutcome run_tesla_reference(const TeslaProgram& p);

// The translated program, prepared once for every IR engine.
struct TeslaTranslation {
  std::string error;     // translate() failed (names the instruction)
  IrProgram program;
};
TeslaTranslation translate_tesla(const TeslaProgram& p);

// Engines: "ir-interp" (the IR interpreter on the translated function as
// given), "avx512", "avx2", "a64".
TeslaOutcome run_tesla_engine(const std::string& engine, const TeslaTranslation& t, const TeslaProgram& p);

// The program as its reproducer file runs it: from the replay prologue
// (fuzz/tesla_fuzz.h) through the launch ABI, translated with that entry.
// Must end in the same state as run_tesla_engine.
TeslaOutcome run_tesla_replay(const std::string& engine, const TeslaProgram& p);

// "" if `got` matches `ref`, else the first difference. After a fault only
// the fault kind is compared (which lane faults first is schedule-dependent).
std::string compare_tesla(const TeslaProgram& p, const TeslaOutcome& ref, const TeslaOutcome& got);


// Shrinks a mismatching program: replaces data instructions by nops (same
// length; control flow stays)
// one at a time, keeping each change while `engine` still differs from the
// reference (and the reference still runs without a non-memory fault).
// Returns the number of instructions removed.
unsigned minimize_tesla(TeslaProgram& p, const std::string& engine);

}  // namespace gpurc::fuzz
