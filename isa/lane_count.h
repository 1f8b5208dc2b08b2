// Counting executed lane-instructions of an IR function: for replay stats and
// bench figures. The function is instrumented with a per-lane counter var and
// run on the IR interpreter, which executes divergent code lane by lane, so
// the sum over lanes is exact for any control flow.
#pragma once
#include <cstdint>

#include "ir/ir.h"

namespace gpurc {

// A copy of `f` with one more var (i64, appended after the others so their
// layout is unchanged) that every block adds its instruction count to on
// entry. Returns the new var's index in `counter_var`.
ir::Function instrument_lane_count(const ir::Function& f, uint32_t& counter_var);

}  // namespace gpurc
