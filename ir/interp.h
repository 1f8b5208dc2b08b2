// The IR interpreter: the reference every backend tier is compared against.
#pragma once
#include <memory>

#include "ir/abi.h"
#include "ir/ir.h"

namespace gpurc::ir {

// Runs any verified function, before or after divergence lowering. A branch
// whose condition differs between active lanes is executed SIMT-style: every
// lane keeps its own block, and the warp runs the pending block that comes
// first in reverse post-order for the lanes waiting at it (minimum-PC
// scheduling), so paths reconverge at their join. Values of lanes inactive
// where a value is defined are unspecified (cross-lane reads of them too).
std::unique_ptr<Executable> make_ir_interpreter(const Function& f);

}  // namespace gpurc::ir
