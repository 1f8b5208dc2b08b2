// How the emitter walks a function: each block is cut into strip segments
// (per-lane ops, emitted once inside a loop over the warp's strips) and warp
// ops (memory, cross-lane, trap, budget: run once over all 32 lanes). Also
// records, per value, whether it is used outside its own segment (then it
// must live in the frame) and where its last use inside the segment is (so
// the register cache can free it).
#pragma once
#include <cstdint>
#include <vector>

#include "ir/ir.h"

namespace gpurc::x64 {

struct Segment {
  ir::BlockId block = ir::kNoBlock;
  bool strip = true;                 // false: a single warp op
  std::vector<ir::ValueId> ops;
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
};

// True for ops the emitter runs per strip.
bool is_strip_op(const ir::Inst& in);

Plan make_plan(const ir::Function& f);

}  // namespace gpurc::x64
