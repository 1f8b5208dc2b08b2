// Greedy shrinking of a mismatching IR function (delta debugging on single
// instructions and branches). Every candidate is verified before it is run, so
// the result is always a valid function that still shows the mismatch.
#include <string>
#include <vector>

#include "fuzz/ir_fuzz.h"
#include "ir/passes.h"

namespace gpurc::fuzz {

using namespace ir;

namespace {

// The kind of a difference ("var", "memory", "status", "compile", ...): a
// candidate must keep it, so shrinking does not wander off to another bug.
std::string category(const std::string& what) { return what.substr(0, what.find(' ')); }

// Shrinking can make a loop endless (its counter update became a constant):
// the reference gets the pipeline's loop budget and every run a small budget,
// so such a candidate ends in a watchdog fault instead of hanging.
constexpr int64_t kShrinkBudget = 1 << 22;

std::string difference(const Function& f, const IrState& st, const std::string& engine) {
  IrProgram p = prepare_program(f);
  insert_loop_budget(p.original);
  IrOutcome ref = run_engine("interp", p, st, kShrinkBudget);
  if (!ref.error.empty() || ref.fault == FaultKind::Watchdog) return "";
  return compare_outcomes(f, ref, run_engine(engine, p, st, kShrinkBudget));
}

// Drops blocks unreachable from the entry and renumbers the rest. False if a
// kept instruction used a value of a dropped block.
bool drop_unreachable(Function& f) {
  std::vector<BlockId> order, map(f.blocks.size(), kNoBlock);
  order.push_back(0);
  map[0] = 0;
  for (size_t i = 0; i < order.size(); ++i)
    for (BlockId s : f.blocks[order[i]].succs)
      if (map[s] == kNoBlock) {
        map[s] = BlockId(order.size());
        order.push_back(s);
      }
  if (order.size() == f.blocks.size()) return true;
  // Keep the original relative order of blocks (the printer's order).
  std::vector<BlockId> kept;
  for (BlockId b = 0; b < f.blocks.size(); ++b)
    if (map[b] != kNoBlock) kept.push_back(b);
  for (size_t i = 0; i < kept.size(); ++i) map[kept[i]] = BlockId(i);
  std::vector<Block> blocks;
  for (BlockId b : kept) {
    Block nb = f.blocks[b];
    for (BlockId& s : nb.succs) s = map[s];
    blocks.push_back(std::move(nb));
  }
  for (Inst& in : f.insts) {
    if (in.block == kNoBlock) continue;
    if (map[in.block] == kNoBlock) in.block = kNoBlock;
    else in.block = map[in.block];
  }
  for (const Block& b : blocks)
    for (ValueId v : b.insts)
      for (ValueId a : f.insts[v].args)
        if (f.insts[a].block == kNoBlock) return false;
  f.blocks = std::move(blocks);
  f.compute_preds();
  return true;
}

// Rebuilds the function through its text form, which renumbers values and
// forgets removed instructions.
bool compact(Function& f) {
  Function g;
  std::string err;
  if (!parse(print(f), g, err)) return false;
  f = std::move(g);
  return true;
}

}  // namespace

Function minimize_ir(const Function& start, const IrState& st, const std::string& engine, int max_attempts) {
  const std::string want = category(difference(start, st, engine));
  if (want.empty()) return start;
  Function best = start;
  int attempts = 0;
  auto accept = [&](Function& cand) {
    ++attempts;
    cand.compute_preds();
    if (!verify(cand).empty()) return false;
    std::string d = difference(cand, st, engine);
    if (d.empty() || category(d) != want) return false;
    best = cand;
    return true;
  };
  bool progress = true;
  while (progress && attempts < max_attempts) {
    progress = false;
    // 1. Conditional branches and switches -> a plain branch to one target.
    for (BlockId b = 0; b < best.blocks.size() && attempts < max_attempts; ++b) {
      ValueId t = best.terminator(b);
      if (t == kNoValue || (best[t].op != Opcode::CondBr && best[t].op != Opcode::Switch)) continue;
      for (size_t k = 0; k < best.blocks[b].succs.size(); ++k) {
        Function cand = best;
        BlockId to = cand.blocks[b].succs[k];
        cand[t].op = Opcode::Br;
        cand[t].args.clear();
        cand.blocks[b].succs = {to};
        if (drop_unreachable(cand) && accept(cand)) {
          progress = true;
          break;
        }
      }
    }
    // 2. Instructions, last first: effects are dropped, values become
    //    constant zero, unused constants are dropped.
    for (BlockId b = 0; b < best.blocks.size() && attempts < max_attempts; ++b) {
      for (size_t i = best.blocks[b].insts.size(); i-- > 0 && attempts < max_attempts;) {
        if (i >= best.blocks[b].insts.size()) continue;
        ValueId v = best.blocks[b].insts[i];
        const Inst& in = best[v];
        if (op_info(in.op).terminator) continue;
        bool used = false;
        for (const Block& bl : best.blocks)
          for (ValueId u : bl.insts)
            for (ValueId a : best[u].args) used |= a == v;
        Function cand = best;
        if (!used) {
          cand.blocks[b].insts.erase(cand.blocks[b].insts.begin() + long(i));
          cand[v].block = kNoBlock;
        } else if (in.op != Opcode::Const) {
          Inst& c = cand[v];
          c.op = Opcode::Const;
          c.args.clear();
          c.attr = 0;
          c.fflags = 0;
          c.imm = 0;
        } else {
          continue;
        }
        if (accept(cand)) progress = true;
      }
    }
  }
  Function out = best;
  if (compact(out) && verify(out).empty() && !difference(out, st, engine).empty()) return out;
  return best;
}

}  // namespace gpurc::fuzz
