// Placeholder until the g13 translation lands.
#include "fuzz/isa_fuzz.h"

namespace gpurc::fuzz {

IsaFuzzReport run_g13_fuzz(const IsaFuzzOptions&) {
  IsaFuzzReport r;
  r.error = "fuzzing of isa g13 is not supported yet";
  return r;
}

}  // namespace gpurc::fuzz
