// The block order that SIMT scheduling follows: the interpreter's
// minimum-PC schedule and the per-lane-PC divergence lowering both run the
// pending block that comes first in this order.
#pragma once
#include <vector>

#include "ir/ir.h"

namespace gpurc::ir {

// A reverse post-order of the blocks reachable from the entry in which every
// loop's blocks come before the blocks its exits lead to. A plain RPO does not
// promise that: when a loop header's first successor is the body, the exit
// gets the smaller number, so lanes that leave a loop early would run the code
// after the loop before the other lanes finish it. The DFS therefore visits a
// block's loop-exiting successors first (they finish first, so they come
// later). Loops are the bodies of DFS retreating edges, so irreducible graphs
// get an order too. Successor ids out of range are ignored (the interpreter
// orders unverified functions as well).
std::vector<BlockId> schedule_order(const Function& f);

}  // namespace gpurc::ir
