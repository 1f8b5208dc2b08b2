// Apple G13 as an ISA module (isa/module.h): codec (applegpu syntax), the
// translation for `gpurc ir`, the replay handler (replay.cpp, over the launch
// ABI of launch.h) and the fuzz session (fuzz.cpp, fuzz_gen.h).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "isa/module.h"

namespace gpurc::g13 {

// The replay handler (replay.cpp).
void replay(const isa::ReplayJob& job, replay::ReplayRun& run);

// The campaign's half for `gpurc fuzz --isa g13` (fuzz.cpp): programs of
// fuzz_gen.h without the descriptors named in `exclude` (nor those in
// GPURC_G13_FUZZ_EXCLUDE="name,name": to look past a known, reported bug).
std::unique_ptr<isa::FuzzSession> make_fuzz_session(const fuzz::IsaFuzzOptions& opt, std::string& err,
                                                    std::vector<std::string> exclude = {});

}  // namespace gpurc::g13

namespace gpurc {
const isa::IsaModule& g13_module();
}  // namespace gpurc
