// ARM Mali Bifrost as an ISA module (isa/module.h): the codec, the replay
// handler (replay.cpp, over the launch ABI of launch.h, on the reference
// interpreter or the JIT), the translation (translate.h) and fuzzing (fuzz.cpp).
#pragma once
#include <memory>
#include <string>

#include "isa/fuzz.h"
#include "isa/module.h"

namespace gpurc::bifrost {
void replay(const isa::ReplayJob& job, replay::ReplayRun& run);
// The campaign's half for `gpurc fuzz --isa bifrost` (fuzz.cpp).
std::unique_ptr<isa::FuzzSession> make_fuzz_session(const fuzz::IsaFuzzOptions& opt, std::string& err);
}  // namespace gpurc::bifrost

namespace gpurc {
const isa::IsaModule& bifrost_module();
}  // namespace gpurc
