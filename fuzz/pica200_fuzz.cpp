// Placeholder until the pica200 translation lands.
#include "fuzz/isa_fuzz.h"

namespace gpurc::fuzz {

IsaFuzzReport run_pica200_fuzz(const IsaFuzzOptions&) {
  IsaFuzzReport r;
  r.error = "fuzzing of isa pica200 is not supported yet";
  return r;
}

}  // namespace gpurc::fuzz
