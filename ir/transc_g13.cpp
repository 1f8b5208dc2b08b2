// Transc::g13: placeholder until the ISA's definitions land (defines nothing).
#include "ir/transc.h"

namespace gpurc::ir::transc {

bool g13_defines(Opcode, Type) { return false; }
uint64_t g13(const LaneOp&, uint64_t, uint64_t) { return 0; }

}  // namespace gpurc::ir::transc
