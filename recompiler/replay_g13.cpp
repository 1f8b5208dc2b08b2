// Replay handler of isa g13 (docs/replay-format.md). Placeholder until the
// g13 translation lands: every file is reported as not supported.
#include "recompiler/replay.h"

namespace gpurc::replay {

void replay_g13(const ReplayJob&, ReplayRun&) {
  throw ReplayError("replay of isa g13 is not supported yet");
}

}  // namespace gpurc::replay
