// Transc::pica: placeholder until the ISA's definitions land (defines nothing).
#include "ir/transc.h"

namespace gpurc::ir::transc {

bool pica_defines(Opcode, Type) { return false; }
uint64_t pica(const LaneOp&, uint64_t, uint64_t) { return 0; }

}  // namespace gpurc::ir::transc
