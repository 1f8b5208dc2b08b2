// Bit-exact scalar semantics of every pure per-lane op. The IR interpreter
// calls these for each lane; the backends either reproduce them exactly in
// SIMD code or call eval_lane for the lanes of an op they do not lower natively.
#pragma once
#include <cstdint>

#include "ir/ir.h"

namespace gpurc::ir {

// A self-contained description of one op for one lane: what eval_lane needs.
// Plain data so JIT code can point at it.
struct LaneOp {
  Opcode op;
  Type type;        // result type
  Type arg_type;    // type of the first argument (conversions, compares, carries)
  uint8_t attr;
  uint32_t fflags;
  uint64_t imm;
};
LaneOp lane_op(const Function& f, ValueId v);

// One lane of a pure op that reads no other lane (not Phi, not cross-lane,
// not memory/state). Arguments and result are canonical lane bits (see types.h).
uint64_t eval_lane(const LaneOp& op, const uint64_t* args);

}  // namespace gpurc::ir
