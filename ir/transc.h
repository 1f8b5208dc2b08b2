// Hardware definitions of the transcendental ops (Transc attribute other than
// Ieee): each guest ISA's rcp/rsqrt/exp2/log2/sin/cos (and step ops) as one
// scalar function, shared by the IR interpreter and, through eval_lane, by the
// backends. One file per variant: ir/transc_<variant>.cpp.
//
// The caller (ir/scalar.cpp) has applied FtzIn to the inputs already and
// applies the op's output flags (NaN rule, FtzOut, saturation) to the result.
#pragma once
#include <cstdint>

#include "ir/scalar.h"

namespace gpurc::ir::transc {

// Whether the variant defines `op` with result type `t`; eval_lane reports the
// others as unsupported.
bool pica_defines(Opcode op, Type t);
bool tesla_defines(Opcode op, Type t);
bool g13_defines(Opcode op, Type t);

// One lane: `a` (and `b` for the two-input step ops) as canonical lane bits.
uint64_t pica(const LaneOp& o, uint64_t a, uint64_t b);
uint64_t tesla(const LaneOp& o, uint64_t a, uint64_t b);
uint64_t g13(const LaneOp& o, uint64_t a, uint64_t b);

}  // namespace gpurc::ir::transc
