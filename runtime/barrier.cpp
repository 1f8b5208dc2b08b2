#include "runtime/barrier.h"

#include <cstring>
#include <vector>

namespace gpurc::rt {

uint32_t take_barrier_word(const uint8_t* lanes, BarrierLanes& last) {
  // One descriptor in the whole code: lane 0 holds it unless it has not
  // reached a barrier yet (divergent code).
  for (unsigned l = 0; l < ir::kWarpLanes; ++l) {
    uint32_t v;
    std::memcpy(&v, lanes + 4 * l, 4);
    if (v & kBarrierOneKind) return v & kBarrierDescriptorMask & ~kBarrierOneKind;
    if (v != 0) break;  // a word with a stop count: the general case
  }
  uint32_t now[ir::kWarpLanes];
  std::memcpy(now, lanes, sizeof now);
  uint32_t word = 0;
  for (unsigned l = 0; l < ir::kWarpLanes; ++l)
    if (now[l] != last.seen[l]) {
      word = now[l] & kBarrierDescriptorMask;
      break;
    }
  std::memcpy(last.seen, now, sizeof now);
  return word;
}

}  // namespace gpurc::rt
