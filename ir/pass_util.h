// Helpers shared by the IR passes (ir/pass_*.cpp): CFG orders, dominators,
// value replacement and CFG edits that keep phi operands in predecessor order.
// Not part of the public IR API.
#pragma once
#include <string>
#include <vector>

#include "ir/ir.h"

namespace gpurc::ir {
class Builder;
}

namespace gpurc::ir::passutil {

// Blocks reachable from the entry in reverse post-order (DFS visiting
// successors in terminator order): the order the IR interpreter schedules by.
std::vector<BlockId> reverse_post_order(const Function& f);

// Immediate dominators (Cooper, Harvey, Kennedy). idom[entry] = entry,
// kNoBlock for unreachable blocks.
std::vector<BlockId> immediate_dominators(const Function& f, const std::vector<BlockId>& rpo);
bool dominates(const std::vector<BlockId>& idom, BlockId a, BlockId b);

// Immediate post-dominators (Cooper, Harvey, Kennedy on the reverse CFG)
// with a virtual exit: the result for a block is f.blocks.size() when the
// exit is its immediate post-dominator or it cannot reach the exit.
std::vector<BlockId> immediate_post_dominators(const Function& f);

// Natural loop bodies: marks in `body` (one flag per block, the header
// already marked) every block that reaches `latch` going backwards without
// passing a marked block, so the walk stops at the header. With `reachable`,
// blocks whose flag there is 0 are not entered.
void mark_loop_body(const Function& f, BlockId latch, std::vector<uint8_t>& body,
                    const std::vector<uint8_t>* reachable = nullptr);

// Creates an instruction owned by block b without placing it in the block's
// list (the caller decides where it goes).
ValueId make_inst(Function& f, Opcode op, Type t, std::vector<ValueId> args, BlockId b,
                  uint8_t attr = 0, uint64_t imm = 0, uint32_t fflags = 0);
// Marks an instruction as removed (the caller drops it from its block's list).
void kill_inst(Function& f, ValueId v);

// Value replacement map with path compression: apply() rewrites every live
// instruction's arguments.
struct Replacements {
  std::vector<ValueId> to;
  explicit Replacements(const Function& f) : to(f.insts.size(), kNoValue) {}
  void grow(const Function& f) { to.resize(f.insts.size(), kNoValue); }
  // The value v stands for now. Inline for the common answer (v itself: most
  // operands of a pass run were never replaced), out of line for a chain
  // (with path compression): passes look up every operand they read.
  ValueId find(ValueId v) { return v >= to.size() || to[v] == kNoValue ? v : find_chain(v); }
  void set(ValueId from, ValueId into) { grow_to(from); to[from] = into; set_any_ = true; }
  bool any() const;
  void apply(Function& f);
 private:
  ValueId find_chain(ValueId v);
  void grow_to(ValueId v) { if (v >= to.size()) to.resize(v + 1, kNoValue); }
  bool set_any_ = false;  // set() was called: apply() has work (most pass runs replace nothing)
};

// The value an and/or equals by idempotence or absorption (bitwise, so exact
// for every type): x & x = x, (x & y) & y = y & (x & y) = x & y, the same for
// |; kNoValue when neither applies. Operands are looked up through `repl`.
// Divergence lowering leaves such masks (`and m, m`, `and (and e, m), m`),
// some only once CSE has merged equal masks, so const_fold and cse both ask.
ValueId and_or_absorbed(const Function& f, const Inst& in, Replacements& repl);

// Current predecessor lists (compute_preds() is called first).
std::vector<std::vector<BlockId>> snapshot_preds(Function& f);
// After successor lists changed: recomputes preds and rewrites every phi's
// operands to the new predecessor order. A new edge's operand is undef (an
// undef placed at the start of the entry block).
void remap_phis(Function& f, const std::vector<std::vector<BlockId>>& old_preds);

// Drops blocks not reachable from the entry and renumbers the rest (the
// entry stays block 0); phi operands of removed edges are dropped.
void remove_unreachable_blocks(Function& f);

// Ensures the entry block has no predecessors by giving the function a new
// entry block that branches to the old one.
void ensure_entry_without_preds(Function& f);

bool has_mask_operand(Opcode op);
// Index of the mask operand of an op with one (see has_mask_operand).
size_t mask_operand_index(Opcode op);

// Moves an existing instruction to the end of block b.
void place(Function& f, BlockId b, ValueId v);
// Emits the non-terminator instructions of an original block into the
// builder's block under `mask`: var writes keep the old value in lanes off
// the mask (only with mask_vars), ops with a mask operand get it ANDed in.
void emit_masked_body(Function& f, Builder& bld, const std::vector<ValueId>& insts, ValueId mask,
                      bool mask_vars = true);

}  // namespace gpurc::ir::passutil

namespace gpurc::ir {
// Divergence lowering schemes (pass_divergence.cpp, pass_edge_masks.cpp).
// Edge masks return false, changing nothing, when the CFG is irreducible.
bool lower_with_edge_masks(Function& f);
// Masks only the single-entry single-exit region of each divergent branch
// (pass_regions.cpp); false, changing nothing, when some region is the whole
// function or irreducible.
bool lower_divergent_regions(Function& f);
}  // namespace gpurc::ir
