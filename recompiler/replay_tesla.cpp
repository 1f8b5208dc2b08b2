// Replay handler of isa tesla (docs/replay-format.md). Placeholder until the
// tesla translation lands: every file is reported as not supported.
#include "recompiler/replay.h"

namespace gpurc::replay {

void replay_tesla(const ReplayJob&, ReplayRun&) {
  throw ReplayError("replay of isa tesla is not supported yet");
}

}  // namespace gpurc::replay
