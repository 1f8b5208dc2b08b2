// Differential fuzzing of one guest ISA (`gpurc fuzz --isa`): the generic
// campaign over an ISA module's FuzzSession (isa/fuzz.h, isa/module.h). The
// options and report types live in isa/fuzz.h.
#pragma once
#include "isa/fuzz.h"

namespace gpurc {
namespace isa {
class IsaModule;
}

namespace fuzz {

// Runs `isa`'s campaign: its session's programs on its reference, and their
// translation on the session's IR-interpreter engines and every JIT tier of
// `opt.engines` (empty: all the host runs); differences are saved as replay
// files (opt.out_dir) and, for the session's first max_minimized() ones, a
// minimised copy. An ISA without a fuzzer is IsaFuzzReport::error.
IsaFuzzReport run_isa_fuzz(const isa::IsaModule& isa, const IsaFuzzOptions& opt);

}  // namespace fuzz
}  // namespace gpurc
