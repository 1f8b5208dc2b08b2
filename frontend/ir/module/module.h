// isa "ir" as a module (isa/module.h): replay files whose program is IR text
// (docs/replay-format.md). Not a guest ISA: no codec, no fuzz session (the IR
// has its own fuzzer, `gpurc fuzz --ir`, fuzz/ir_fuzz.h).
#pragma once
#include "isa/module.h"

namespace gpurc::ir_isa {

// The replay handler (replay.cpp).
void replay(const isa::ReplayJob& job, replay::ReplayRun& run);

}  // namespace gpurc::ir_isa

namespace gpurc {
const isa::IsaModule& ir_module();
}  // namespace gpurc
