// NVIDIA Tesla (sm_1x) as an ISA module (isa/module.h): codec (envydis /
// envyas syntax, raw words or a text .cubin), the translation for `gpurc ir`,
// the replay handler (replay.cpp, over the launch ABI of launch.h) and the
// fuzz session (fuzz.cpp, fuzz_gen.h, fuzz_run.h).
#pragma once
#include <memory>
#include <string>

#include "isa/module.h"

namespace gpurc::tesla {

// The replay handler (replay.cpp).
void replay(const isa::ReplayJob& job, replay::ReplayRun& run);

// The campaign's half for `gpurc fuzz --isa tesla` (fuzz.cpp).
std::unique_ptr<isa::FuzzSession> make_fuzz_session(const fuzz::IsaFuzzOptions& opt, std::string& err);

}  // namespace gpurc::tesla

namespace gpurc {
const isa::IsaModule& tesla_module();
}  // namespace gpurc
