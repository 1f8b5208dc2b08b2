// IR passes and the standard pipeline.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ir/ir.h"

namespace gpurc::ir {

struct PassOptions {
  bool ssa = true;          // get_var/set_var -> SSA values, load_var/store_var at entry/exits
  bool const_fold = true;
  bool cse = true;
  bool dce = true;
  bool sink = true;         // pure values used only after a loop are computed there
  bool uniformity = true;   // mark uniform values (Inst::uniform); required by divergence lowering
  bool divergence = true;   // divergent branches -> masked straight-line code + uniform branches
  bool if_convert = true;   // short divergent if/else -> selects or a vote (before divergence lowering)
  bool loop_budget = true;  // a budget op in every loop header
  bool verify_each = false; // run verify() after every pass (tests, debug builds)
};

// Runs the pipeline in its fixed order. Returns "" or the first error (a
// verifier failure names the pass). When `dumps` is given, appends
// (pass name, function text after the pass) for `gpurc ir`.
std::string run_pipeline(Function& f, const PassOptions& opt,
                         std::vector<std::pair<std::string, std::string>>* dumps = nullptr);

// Single passes (each keeps the function verified).
void demote_cross_block_values(Function& f);  // values used outside their block and phis -> vars
void analyze_uniformity(Function& f);
void lower_divergence(Function& f);
// The same for a function demote_cross_block_values has already made
// self-contained per block (run_pipeline: demote runs first, and
// if_convert_divergent demotes again whenever it changes the function), so
// the pass does not walk it a second time to find nothing to demote.
void lower_divergence_demoted(Function& f);
// Short divergent if / if-else regions -> straight-line selects, or a uniform
// vote between the unmasked arm and a select copy (pass_if_convert.cpp). Needs
// the branch flags of analyze_uniformity; recomputes them when it changes f.
bool if_convert_divergent(Function& f);
void construct_ssa(Function& f);
void const_fold(Function& f);
// Exact sign-bit / bitcast / i1-negation rewrites (pass_float_bits.cpp):
// bitcast pairs, sign-bit xor -> fneg, fadd of fneg -> fsub; true when it changed f.
bool simplify_float_bits(Function& f);
void cse(Function& f);
// select(c, x, select(!c, y, z)) -> select(c, x, y) and the mirror image
// (pass_fold_selects.cpp); true when it changed f.
bool fold_complementary_selects(Function& f);
void dce(Function& f);
// Whole-warp any/all over the entry mask of a uniform predicate -> the
// predicate (pass_uniform_votes.cpp); true when it changed f.
bool fold_uniform_votes(Function& f);
void sink_out_of_loops(Function& f);
void insert_loop_budget(Function& f);
// A block ending in `br` to a block with no other predecessor absorbs it
// (pass_merge_blocks.cpp); true when it changed f.
bool merge_straight_blocks(Function& f);

// After lowering: true if no branch condition can differ between lanes.
bool is_lowered(const Function& f);

// The uniformity analysis without writing Inst::uniform: 1 per uniform value
// (indexed by ValueId). Terminators: 1 when the branch is uniform.
std::vector<uint8_t> compute_uniformity(const Function& f);
// construct_ssa with only vars [0, persistent_vars) treated as guest state:
// the others (created by the passes) read undef at entry and are not stored.
void construct_ssa(Function& f, uint32_t persistent_vars);

}  // namespace gpurc::ir
