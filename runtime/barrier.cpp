#include "runtime/barrier.h"

#include <cstring>
#include <vector>

namespace gpurc::rt {

uint32_t take_barrier_word(const uint8_t* lanes, BarrierLanes& last) {
  uint32_t now[ir::kWarpLanes];
  std::memcpy(now, lanes, sizeof now);
  // One descriptor in the whole code: lane 0 holds it unless it has not
  // reached a barrier yet (divergent code).
  for (unsigned l = 0; l < ir::kWarpLanes; ++l) {
    if (now[l] & kBarrierOneKind) return now[l] & kBarrierDescriptorMask & ~kBarrierOneKind;
    if (now[l] != 0) break;  // a word with a stop count: the general case
  }
  uint32_t word = 0;
  for (unsigned l = 0; l < ir::kWarpLanes; ++l)
    if (now[l] != last.seen[l]) {
      word = now[l] & kBarrierDescriptorMask;
      break;
    }
  std::memcpy(last.seen, now, sizeof now);
  return word;
}

CountedEnd run_counted_barriers(uint32_t warps, const std::function<CountedStep(uint32_t)>& step) {
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
  std::vector<WarpState> ws(warps);
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
      for (const WarpState& s : ws) someone |= !s.done && s.waiting_on == int(id);
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
