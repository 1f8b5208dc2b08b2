// The barrier word: how translated code tells the runtime which counted
// barrier a warp stopped at (NVIDIA Tesla's `bar`, `bar inc`, `bar wait`,
// with a barrier id 0..15 and an optional warp count). Part of the warp ABI
// (abi.h): a translator writes it, runtime/barrier.h's counted-barrier
// scheduler reads it, so neither includes the other.
//
// Right before its IR `barrier` terminator each lane that reaches the barrier
// writes a 32-bit var: the barrier's descriptor (barrier_word) in the low 16
// bits and, above them, the lane's own count of barrier stops (previous value
// + kBarrierStopOne), so the runtime can tell the lanes that reached this
// barrier from the others. Code whose barriers all have one descriptor writes
// just that word with kBarrierOneKind (no stop count). See runtime/barrier.h
// for how the scheduler takes the word and docs/runtime.md "Counted barriers".
#pragma once
#include <cstdint>

namespace gpurc::ir {

// Descriptor layout (the low 16 bits of the var). Never 0 (a barrier
// arrives, waits or both).
constexpr uint32_t kBarrierArrive = 1u;       // bar inc: counts this warp as arrived
constexpr uint32_t kBarrierWait = 2u;         // bar wait: waits until the barrier is released
constexpr uint32_t kBarrierCountGiven = 4u;   // bits 8..15 hold a warp count (else: every warp of the block)
// Set in every word of code whose barriers all have one descriptor: then a
// lane holds that word once it reached any barrier (or 0), and the word has
// no stop count; the runtime takes it from the first lane holding it.
constexpr uint32_t kBarrierOneKind = 8u;
constexpr unsigned kBarrierIdShift = 4;       // bits 4..7: barrier id 0..15
constexpr unsigned kBarrierCountShift = 8;
constexpr uint32_t kBarrierDescriptorMask = 0xffffu;
constexpr uint32_t kBarrierStopOne = 0x10000u;  // bits 16..31: the lane's stop count (wraps)
constexpr unsigned kBarrierIds = 16;

// `count_warps` < 0: the whole block. A count above the block's warps is the
// whole block (barrier_of clamps it).
constexpr uint32_t barrier_word(unsigned id, bool arrive, bool wait, int64_t count_warps) {
  uint32_t w = (arrive ? kBarrierArrive : 0u) | (wait ? kBarrierWait : 0u) | (id & 15u) << kBarrierIdShift;
  if (count_warps >= 0)
    w |= kBarrierCountGiven | uint32_t(count_warps > 0xff ? 0xff : count_warps) << kBarrierCountShift;
  return w;
}

// A descriptor decoded for a block of `block_warps` warps.
struct CountedBarrier {
  unsigned id = 0;
  bool arrive = false, wait = false;
  uint32_t count = 0;  // warps that must arrive, at most the block's warps
};

constexpr CountedBarrier barrier_of(uint32_t word, uint32_t block_warps) {
  CountedBarrier b;
  b.id = (word >> kBarrierIdShift) & 15u;  // (kBarrierOneKind is not part of the barrier)
  b.arrive = (word & kBarrierArrive) != 0;
  b.wait = (word & kBarrierWait) != 0;
  uint32_t given = (word >> kBarrierCountShift) & 0xffu;
  b.count = (word & kBarrierCountGiven) && given < block_warps ? given : block_warps;
  return b;
}

}  // namespace gpurc::ir
