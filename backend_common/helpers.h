// C++ functions that JIT code calls, and the descriptors it passes them.
// Descriptors are owned by the compiled function and referenced from its code
// by absolute address. Frame slots hold 32 lanes of 4 or 8 bytes.
#pragma once
#include <cstdint>

#include "ir/abi.h"
#include "ir/scalar.h"

namespace gpurc::backend::rt {

constexpr int kMaxArgs = 4;

// A pure per-lane op without a native lowering, run with ir::eval_lane on the
// lanes of one strip.
struct EvalOp {
  ir::LaneOp op;
  uint32_t nargs;
  uint32_t arg_slot[kMaxArgs];
  uint8_t arg_bytes[kMaxArgs];
  uint32_t res_slot;
  uint8_t res_bytes;
  uint32_t lanes;  // strip width
};
// frame: ctx.frame; lane0: first lane of the strip.
void eval_strip(const EvalOp* op, uint8_t* frame, uint32_t lane0);

// An op that runs once over all 32 lanes: memory, cross-lane, trap.
struct WarpOp {
  ir::Opcode op;
  ir::Type type;      // result type (Void for store/trap)
  ir::Type arg_type[kMaxArgs];
  uint8_t attr;
  uint32_t fflags;
  uint64_t imm;
  uint32_t nargs;
  uint32_t arg_slot[kMaxArgs];
  uint32_t res_slot;
  uint32_t value;     // the op's value id (fault_code of memory faults, as the interpreter)
};
// Lanes taking part are those launched (ctx.entry_mask) and set in the op's mask.
// Returns 0 to continue, or RunStatus::Fault after filling ctx's fault fields.
uint32_t run_warp_op(const WarpOp* op, ir::WarpContext* ctx);

// Host address of guest address `lo` when [lo, hi + bytes) lies in one buffer
// of `space` (ctx.memory->translate), else null. The load/store fast path uses
// it when some lane is outside the space's window.
uint8_t* translate_span(ir::WarpContext* ctx, uint32_t space, uint64_t lo, uint64_t hi, uint32_t bytes);

}  // namespace gpurc::backend::rt
