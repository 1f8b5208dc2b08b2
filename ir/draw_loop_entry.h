// The x64 draw-loop stub's second entry (fifteenth session; its own header
// so that only the stub and the draw runner include it).
#pragma once

#include <cstddef>

namespace gpurc::ir {

// An x64 draw-loop stub (`uint32_t draw(WarpContext*, DrawLoop*)`, abi.h)
// stores DrawLoop::next in its first instructions; entered this many bytes
// past its start it skips that store, for a DrawLoop the same stub ran
// before (the store would write the same value again: two host
// instructions of a repeated draw).
constexpr size_t kDrawLoopKeptNextEntry = 11;

}  // namespace gpurc::ir
