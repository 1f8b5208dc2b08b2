// Running one generated Tesla program on the reference interpreter or, once
// translated to IR, on the IR interpreter and the JIT tiers, and comparing the
// end states bit for bit: the execution half of `gpurc fuzz --isa tesla`.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "frontend/tesla/interp.h"
#include "frontend/tesla/module/fuzz_gen.h"
#include "ir/abi.h"
#include "ir/ir.h"

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

// The reference: BlockInterpreter::run_with (reference.h, through
// rt::launch) on the program's initial state.
TeslaOutcome run_tesla_reference(const TeslaProgram& p);

// The pre-SSA translation every IR engine runs.
struct TeslaTranslation {
  std::string error;     // translate() failed (names the instruction)
  ir::Function f;
};
TeslaTranslation translate_tesla(const TeslaProgram& p);

// The translation `layout` (translate_tesla's function: its var layout is the
// guest state's) as compiled by an engine: `exe` runs a function of
// `vars_bytes` vars bytes (the IR interpreter: the translation itself; a JIT
// tier: its lowered copy), through rt::launch on the program's initial state.
TeslaOutcome run_tesla_translated(const TeslaProgram& p, const ir::Function& layout, uint32_t vars_bytes,
                                  const ir::Executable& exe);

// The program as its reproducer file runs it, on the IR interpreter: from
// the replay prologue (fuzz.h) through the launch ABI, translated with that
// entry. Must end in the same state as run_tesla_translated.
TeslaOutcome run_tesla_replay(const TeslaProgram& p);

// "" if `got` matches `ref`, else the first difference. After a fault only
// the fault kind is compared (which lane faults first is schedule-dependent).
std::string compare_tesla(const TeslaProgram& p, const TeslaOutcome& ref, const TeslaOutcome& got);


// The difference an engine shows on a program ("" = none, or the reference
// cannot run it: with `ref_may_fault`, a reference out-of-bounds fault is
// compared, any other reference fault means ""); the session runs the engine.
using TeslaDifference = std::function<std::string(const TeslaProgram& p, bool ref_may_fault)>;

// Shrinks a mismatching program: replaces data instructions by nops (same
// length; control flow stays) one at a time, keeping each change while
// `difference` still shows a difference of the same kind (and the reference
// still runs without a non-memory fault). Returns the number of instructions
// removed.
unsigned minimize_tesla(TeslaProgram& p, const TeslaDifference& difference);

}  // namespace gpurc::fuzz
