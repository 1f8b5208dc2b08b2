#include "ir/compile_stages.h"

namespace gpurc::ir {

StageLog*& stage_log() {
  thread_local StageLog* log = nullptr;
  return log;
}

}  // namespace gpurc::ir
