// Replay handler of isa pica200 (docs/replay-format.md). Placeholder until the
// pica200 translation lands: every file is reported as not supported.
#include "recompiler/replay.h"

namespace gpurc::replay {

void replay_pica200(const ReplayJob&, ReplayRun&) {
  throw ReplayError("replay of isa pica200 is not supported yet");
}

}  // namespace gpurc::replay
