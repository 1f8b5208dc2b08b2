// Bit-exact scalar semantics of every pure per-lane op. The IR interpreter
// calls these for each lane; the backends either reproduce them exactly in
// SIMD code or call eval_lane for the lanes of an op they do not lower natively.
#pragma once
#include <cstdint>
#include <string>

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
// Unsupported combinations (an op that is not a per-lane op, a transcendental
// variant not implemented yet, an attribute value out of range) return 0.
uint64_t eval_lane(const LaneOp& op, const uint64_t* args);

// eval_lane for an op the caller has already checked with lane_op_supported
// (the interpreter checks each instruction once, not once per lane).
uint64_t eval_lane_unchecked(const LaneOp& op, const uint64_t* args);

// Both expect the thread's default floating-point environment: round to
// nearest and no flush-to-zero / denormals-are-zero (MXCSR FTZ/DAZ clear).

// False (and *why, when given, says what) if eval_lane cannot evaluate `op`:
// callers report that as an error instead of using the 0 eval_lane returns.
bool lane_op_supported(const LaneOp& op, std::string* why = nullptr);

// Number of arguments eval_lane reads for a per-lane op (its table arity).
unsigned lane_op_arity(Opcode op);

}  // namespace gpurc::ir
