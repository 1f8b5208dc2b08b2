// Counted barriers: barriers that count warps, with separate arrive and wait
// (NVIDIA Tesla's `bar`, `bar inc`, `bar wait`, with a barrier id 0..15 and
// an optional warp count), scheduled within one block exactly as the Tesla
// reference interpreter schedules them (frontend/tesla/interp.cpp, see
// docs/runtime.md "Counted barriers").
//
// The translated code tells the runtime which barrier a warp stopped at: right
// before its IR `barrier` terminator each lane that reaches it writes a
// 32-bit var, the barrier word of the IR's ABI (ir/barrier_word.h): the
// barrier's descriptor in the low 16 bits and, above them, the lane's own
// count of barrier stops (previous value + 1). Engines keep vars as per-lane
// values across a stop and write every lane back (a JIT stores its copy of
// lanes that did not run the barrier block), so the runtime cannot clear the var between stops; instead it keeps what it
// saw last (BarrierLanes) and takes the word of a lane whose value changed:
// exactly the lanes that reached this barrier, since their count moved on.
// (A warp stops at one barrier block per run, so those lanes agree.) Code
// whose barriers all have one descriptor (kBarrierOneKind, e.g. only plain
// `bar 0x0 all`) writes just that word: every lane holding a word holds the
// right one, which saves the per-lane count and the comparison.
//
// The scheduler is header-only, a template (run_counted_barriers).
#pragma once
#include <cstdint>
#include <vector>

#include "ir/barrier_word.h"
#include "runtime/launch.h"

namespace gpurc::rt {

// The word format is the IR's ABI (ir/barrier_word.h): translators write it
// without knowing the runtime. The scheduler and its callers name it here.
using ir::barrier_of;
using ir::barrier_word;
using ir::CountedBarrier;
using ir::kBarrierArrive;
using ir::kBarrierCountGiven;
using ir::kBarrierCountShift;
using ir::kBarrierDescriptorMask;
using ir::kBarrierIds;
using ir::kBarrierIdShift;
using ir::kBarrierOneKind;
using ir::kBarrierStopOne;
using ir::kBarrierWait;

// What the runtime saw in a warp's barrier var at its previous stop (all
// zero before the first: the var starts at zero).
struct BarrierLanes {
  uint32_t seen[ir::kWarpLanes] = {};
};

// The descriptor of the barrier a warp just stopped at: that of the first
// lane of the 32-lane var at `lanes` holding a kBarrierOneKind word, else
// that of the first lane whose value differs from `last`; 0 when none does
// (the code stopped without writing one). `last` becomes the current values
// (kept only for code without kBarrierOneKind).
uint32_t take_barrier_word(const uint8_t* lanes, BarrierLanes& last);

// What running one warp up to its next stop ended with.
struct CountedStep {
  WarpStep step = WarpStep::Done;
  uint32_t word = 0;  // for WarpStep::Barrier: the barrier's descriptor
};

enum class CountedEnd { Finished, Stopped, Deadlock };

// Runs the `warps` warps of one block with counted barriers: in rounds, each
// unfinished warp that is not waiting for an unreleased barrier runs (`step`)
// until it finishes, faults (Stop) or waits. A warp whose arrival releases
// its barrier, or that only arrives (no wait), runs on at once (the scheduler
// calls `step` again); a waiting warp resumes in its next turn after the
// release. When every remaining warp waits, each barrier someone waits on is
// released if its arrivals plus the finished warps reach its count; if none
// is, the block is deadlocked. State is local to the call (one block).
// A template so the per-stop call inlines (a barrier-heavy kernel stops
// every warp at every barrier: reduce, docs/tesla.md "Bench").
template <class Step>
CountedEnd run_counted_barriers(uint32_t warps, Step&& step) {
  struct Bar {
    uint32_t arrived = 0, generation = 0;
    uint32_t count = 0;  // count of the last warp that waited on it (the stall release compares with it)
  };
  Bar bars[kBarrierIds];
  struct WarpState {
    bool done = false;
    int waiting_on = -1;      // barrier id, -1 = not waiting
    uint32_t wait_generation = 0;
  };
  // Blocks of up to 32 warps (every Tesla block: 512 threads) need no allocation.
  WarpState inline_states[32];
  std::vector<WarpState> more(warps > 32 ? warps : 0);
  WarpState* ws = warps > 32 ? more.data() : inline_states;
  uint32_t finished = 0;
  for (;;) {
    bool progress = false, any_left = false;
    for (uint32_t w = 0; w < warps; ++w) {
      WarpState& s = ws[w];
      if (s.done) continue;
      any_left = true;
      if (s.waiting_on >= 0) {
        if (bars[s.waiting_on].generation == s.wait_generation) continue;
        s.waiting_on = -1;
      }
      progress = true;
      // Run this warp until it finishes or waits: arriving without waiting,
      // or releasing the barrier it arrives at, does not end its turn.
      for (;;) {
        CountedStep r = step(w);
        if (r.step == WarpStep::Stop) return CountedEnd::Stopped;
        if (r.step == WarpStep::Done) {
          s.done = true;
          ++finished;
          break;
        }
        CountedBarrier b = barrier_of(r.word, warps);
        Bar& bar = bars[b.id];
        uint32_t generation = bar.generation;
        if (b.arrive && ++bar.arrived >= b.count) {
          bar.arrived = 0;
          ++bar.generation;
        }
        if (b.wait && bar.generation == generation) {
          s.waiting_on = int(b.id);
          s.wait_generation = generation;
          bar.count = b.count;
          break;
        }
      }
    }
    if (!any_left) return CountedEnd::Finished;
    if (progress) continue;
    // Every remaining warp waits: finished warps count as arrived.
    bool released = false;
    for (unsigned id = 0; id < kBarrierIds; ++id) {
      bool someone = false;
      for (uint32_t w = 0; w < warps; ++w) someone |= !ws[w].done && ws[w].waiting_on == int(id);
      if (someone && bars[id].arrived + finished >= bars[id].count) {
        bars[id].arrived = 0;
        ++bars[id].generation;
        released = true;
      }
    }
    if (!released) return CountedEnd::Deadlock;
  }
}

}  // namespace gpurc::rt
