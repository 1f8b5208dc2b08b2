// PICA200 as an ISA module (isa/module.h): codec (picasso syntax, .shbin),
// the translation for `gpurc ir`, the replay handler (replay.cpp, over the
// launch ABI of launch.h) and the fuzz session (fuzz.cpp over fuzz_gen.h and
// fuzz_run.h).
#pragma once
#include <memory>
#include <string>

#include "isa/module.h"

namespace gpurc::pica {

// The replay handler (replay.cpp, docs/replay-format.md).
void replay(const isa::ReplayJob& job, replay::ReplayRun& run);

// The campaign's half for `gpurc fuzz --isa pica200` (fuzz.cpp); null with
// `err` for a variant it does not know.
std::unique_ptr<isa::FuzzSession> make_fuzz_session(const fuzz::IsaFuzzOptions& opt, std::string& err);

}  // namespace gpurc::pica

namespace gpurc {
const isa::IsaModule& pica200_module();
}  // namespace gpurc
