// Placeholder until the tesla translation lands.
#include "fuzz/isa_fuzz.h"

namespace gpurc::fuzz {

IsaFuzzReport run_tesla_fuzz(const IsaFuzzOptions&) {
  IsaFuzzReport r;
  r.error = "fuzzing of isa tesla is not supported yet";
  return r;
}

}  // namespace gpurc::fuzz
