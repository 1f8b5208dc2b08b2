// How the emitter walks a function: each block is cut into strip segments
// (per-lane ops, emitted once inside a loop over the warp's strips) and warp
// ops (memory, cross-lane, trap, budget: run once over all 32 lanes). Also
// records, per value, whether it is used outside its own segment (then it
// must live in the frame) and where its last use inside the segment is (so
// the register cache can free it).
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "ir/ir.h"

namespace gpurc::backend {

struct Segment {
  ir::BlockId block = ir::kNoBlock;
  bool strip = true;                 // false: a single warp op
  std::vector<ir::ValueId> ops;
};

// A single-block self loop emitted strip-outer with its values in registers
// (backend_x64/loops.cpp): the block ends in `cond_br` with itself as one target, its
// condition is an i1 strip op of the block, its phis are 32-bit and its other
// ops are `budget` ops followed by strip ops that cannot fault.
struct StripLoop {
  ir::BlockId block = ir::kNoBlock;
  size_t back_operand = 0;         // phi operand index of the back edge
  size_t exit_succ = 0;            // index in succs of the way out
  bool repeat_if_true = true;      // cond_br's first (true) target is the block itself
  std::vector<ir::ValueId> budgets;  // the budget ops before the strip ops
};

struct Plan {
  std::vector<std::vector<uint32_t>> block_segments;  // per block: indices into segments, in order
  std::vector<Segment> segments;
  std::vector<int32_t> segment_of;       // per value: its segment, -1 for phis and terminators
  std::vector<int32_t> position;         // per value: index inside its segment
  std::vector<int32_t> last_use;         // per value: last position inside its own segment that reads it (-1: none)
  std::vector<uint8_t> escapes;          // per value: read by anything outside its segment
  std::vector<std::vector<ir::BlockId>> preds;  // predecessor lists in phi-operand order
  // Per value: phis whose slot it is written to directly when it is defined
  // (its block's one edge then copies nothing for them; see make_plan).
  std::vector<std::vector<ir::ValueId>> direct_phis;
  // Per value: its 32-bit pattern is never an f32 subnormal (a float result
  // flushed by FtzOut, an int converted to float, a non-subnormal constant,
  // or such a value passed through a bitcast, a sign flip/clear, a select or
  // a phi). An FtzIn operand with this fact needs no flush.
  std::vector<uint8_t> no_subnormal;
  std::vector<StripLoop> strip_loops;
  std::vector<int32_t> strip_loop_of;  // per block: index into strip_loops, -1 if none
};

// For `itof f32` of a 64-bit zext/sext of a 32-bit-lane value x (Tesla's
// cvt from u32 goes through i64): x, which the native 32-bit conversion
// reads instead (the integer value is the same, so is the one rounding).
// kNoValue otherwise. The plan counts it as a read of x.
// (Inline for the common answer, not an itof: the plan, the register cache
// and the lowering dispatch ask for every instruction.)
ir::ValueId itof_narrow_source_of_itof(const ir::Function& f, ir::ValueId v);
inline ir::ValueId itof_narrow_source(const ir::Function& f, ir::ValueId v) {
  return f.insts[v].op == ir::Opcode::IToF ? itof_narrow_source_of_itof(f, v) : ir::kNoValue;
}

// True for ops the emitter runs per strip.
bool is_strip_op(const ir::Inst& in);

Plan make_plan(const ir::Function& f);

// The copies the edge from `from` to its succs[succ_index] makes into the
// target's phis. They are one parallel copy: when an incoming value is itself
// a phi of the target, the tier stages all copies before writing any slot.
// Phis the plan writes directly where their incoming value is defined
// (direct_phis) and phis that receive themselves are left out.
struct EdgeCopies {
  std::vector<std::pair<ir::ValueId, ir::ValueId>> copies;  // (phi, incoming value), in phi order
  bool reads_phi = false;                                   // some incoming value is a phi of the target
  ir::ValueId phi_without_operand = ir::kNoValue;           // malformed IR: a phi lacking this edge's operand
};
EdgeCopies edge_copies(const ir::Function& f, const Plan& plan, ir::BlockId from, size_t succ_index);

}  // namespace gpurc::backend
