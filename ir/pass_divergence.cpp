// lower_divergence: afterwards every cond_br / switch condition is uniform and
// lanes that must not run a piece of code are excluded by explicit masks.
// See docs/passes.md for the schemes and a worked example.
//
// Input: pre-SSA IR whose blocks exchange data only through vars (the pass
// runs demote_cross_block_values first, so this always holds).
//
// Three schemes, chosen per function:
//  1. uniform: no divergent branch. The CFG is kept; the execution mask is
//     entry_mask everywhere. Var writes stay unmasked so that uniform vars
//     (loop counters) stay uniform in all 32 lanes: a set_var only changes
//     active lanes when an engine runs it, and after SSA construction the
//     exit store_var selects the entry value for lanes not launched.
//  2. edge masks (reducible CFGs): each block has a mask var, the OR of its
//     incoming edge masks; blocks run in a loop-contiguous topological order
//     behind an any(mask) skip check; a loop repeats while any lane took a
//     back edge.
//  3. per-lane PC (any CFG, the safety net): a var holds the block each lane
//     wants next; a dispatch loop runs the block with the minimum PC among the
//     live lanes, for the lanes at that PC (the interpreter's own schedule).
#include <algorithm>
#include <functional>
#include <string>

#include "ir/builder.h"
#include "ir/pass_util.h"
#include "ir/passes.h"

namespace gpurc::ir {

using namespace passutil;

namespace {

constexpr uint32_t kPcDone = 0xffffffffu;  // a lane that returned (or never launched)

bool is_branch(const Inst& in) { return in.op == Opcode::CondBr || in.op == Opcode::Switch; }

// ---- scheme 1: only uniform branches -------------------------------------
void lower_uniform(Function& f) {
  Builder bld(f);
  for (BlockId b = 0; b < f.blocks.size(); ++b) {
    bool needs_mask = false;
    for (ValueId v : f.blocks[b].insts) needs_mask |= has_mask_operand(f.insts[v].op);
    // Without a mask operand the block would be rebuilt as it is (its
    // instructions in order, the terminator last): leave it.
    if (!needs_mask) continue;
    std::vector<ValueId> old = std::move(f.blocks[b].insts);
    f.blocks[b].insts.clear();
    bld.set_block(b);
    ValueId em = bld.emit(Opcode::EntryMask, Type::I1, {});
    emit_masked_body(f, bld, old, em, false);
    ValueId t = old.empty() ? kNoValue : old.back();
    if (t != kNoValue && op_info(f.insts[t].op).terminator) place(f, b, t);
  }
}

// ---- scheme 3: per-lane PC -----------------------------------------------
void lower_with_pc(Function& f) {
  auto rpo = reverse_post_order(f);
  const size_t n = rpo.size();
  std::vector<uint32_t> pos(f.blocks.size(), kPcDone);
  for (uint32_t i = 0; i < n; ++i) pos[rpo[i]] = i;
  std::vector<Block> old = std::move(f.blocks);
  f.blocks.clear();
  const uint32_t pc = f.add_var("lane_pc", Type::I32);

  BlockId entry = f.add_block();
  BlockId disp = f.add_block();
  BlockId sel = f.add_block();
  BlockId exit = f.add_block();
  std::vector<BlockId> body(n);
  for (size_t i = 0; i < n; ++i) body[i] = f.add_block(old[rpo[i]].name);

  Builder bld(f);
  bld.set_block(entry);
  {
    ValueId em = bld.emit(Opcode::EntryMask, Type::I1, {});
    ValueId init = bld.select(em, bld.i32(0), bld.i32(kPcDone));
    bld.set_var(pc, init);
    bld.br(disp);
  }
  ValueId next_pc;
  bld.set_block(disp);
  {
    ValueId p = bld.get_var(pc);
    ValueId em = bld.emit(Opcode::EntryMask, Type::I1, {});
    next_pc = bld.emit(Opcode::Reduce, Type::I32, {p, em}, uint8_t(ReduceOp::UMin));
    ValueId fin = bld.icmp(IntPred::Eq, next_pc, bld.i32(kPcDone));
    bld.cond_br(fin, exit, sel);
  }
  bld.set_block(sel);
  {
    ValueId s = bld.emit(Opcode::Switch, Type::Void, {next_pc});
    f.blocks[sel].succs = body;
    (void)s;
  }
  bld.set_block(exit);
  bld.ret();

  for (size_t i = 0; i < n; ++i) {
    const Block& ob = old[rpo[i]];
    bld.set_block(body[i]);
    ValueId p = bld.get_var(pc);
    ValueId here = bld.icmp(IntPred::Eq, p, bld.i32(uint32_t(i)));
    ValueId em = bld.emit(Opcode::EntryMask, Type::I1, {});
    ValueId mask = bld.binary(Opcode::And, here, em);
    emit_masked_body(f, bld, ob.insts, mask);
    ValueId t = ob.insts.empty() ? kNoValue : ob.insts.back();
    if (t == kNoValue || !op_info(f.insts[t].op).terminator) {
      bld.emit(Opcode::Unreachable, Type::Void, {});
      continue;
    }
    const Inst term = f.insts[t];
    kill_inst(f, t);
    ValueId target = kNoValue;
    switch (term.op) {
      case Opcode::Br:
      case Opcode::Barrier:
        target = bld.i32(pos[ob.succs[0]]);
        break;
      case Opcode::CondBr:
        target = bld.select(term.args[0], bld.i32(pos[ob.succs[0]]), bld.i32(pos[ob.succs[1]]));
        break;
      case Opcode::Switch: {
        size_t k = ob.succs.size();
        target = bld.i32(pos[ob.succs[k - 1]]);
        for (size_t j = k - 1; j-- > 0;) {
          ValueId hit = bld.icmp(IntPred::Eq, term.args[0], bld.i32(uint32_t(j)));
          target = bld.select(hit, bld.i32(pos[ob.succs[j]]), target);
        }
        break;
      }
      case Opcode::Return:
        target = bld.i32(kPcDone);
        break;
      default:
        break;
    }
    if (target == kNoValue) {  // unreachable: lanes never get here
      bld.emit(Opcode::Unreachable, Type::Void, {});
      continue;
    }
    ValueId cur = bld.get_var(pc);
    bld.set_var(pc, bld.select(mask, target, cur));
    if (term.op == Opcode::Barrier)
      bld.barrier(disp);
    else
      bld.br(disp);
  }
}

}  // namespace

namespace {

void lower(Function& f, bool demoted) {
  if (f.blocks.empty()) return;
  remove_unreachable_blocks(f);
  // Keep the branch uniformity computed by analyze_uniformity (a branch
  // without the flag counts as divergent), then make every block self-contained.
  bool divergent = false;
  for (BlockId b = 0; b < f.blocks.size(); ++b) {
    ValueId t = f.terminator(b);
    if (t != kNoValue && is_branch(f.insts[t]) && !f.insts[t].uniform) divergent = true;
  }
  if (demoted)
    f.compute_preds();  // what demote_cross_block_values leaves besides its (here empty) changes
  else
    demote_cross_block_values(f);
  if (!divergent) {
    lower_uniform(f);
    return;
  }
  if (lower_divergent_regions(f)) return;
  if (lower_with_edge_masks(f)) return;
  lower_with_pc(f);
}

}  // namespace

void lower_divergence(Function& f) { lower(f, false); }

void lower_divergence_demoted(Function& f) { lower(f, true); }

}  // namespace gpurc::ir
