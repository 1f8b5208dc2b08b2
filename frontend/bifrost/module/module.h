// ARM Mali Bifrost as an ISA module (isa/module.h): the codec, the replay
// handler (replay.cpp, over the launch ABI of launch.h, on the reference
// interpreter). Translation to IR and fuzzing are not implemented yet.
#pragma once
#include "isa/module.h"

namespace gpurc::bifrost {
void replay(const isa::ReplayJob& job, replay::ReplayRun& run);
}  // namespace gpurc::bifrost

namespace gpurc {
const isa::IsaModule& bifrost_module();
}  // namespace gpurc
