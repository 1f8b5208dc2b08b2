// fold_uniform_votes: `any p, m` and `all p, m` over the whole warp, with m
// the entry mask and p uniform (the same in all 32 lanes), are p.
//
// Over the launched lanes p has one value, and a launch runs a warp only
// with at least one launched lane, so "some launched lane has p" and "every
// launched lane has p" are both that value. The vote was a warp op (a
// reduction across the lanes); p is a per-lane value whose lanes agree,
// which is what a uniform branch reads (the backends take it from the first
// launched lane). The case that matters is a guest's loop on "any lane still
// active" whose active mask the translation keeps uniform (G13's
// `jmp_exec_any` under TranslateOptions::exec_starts_launched): the vote
// goes, and the loop becomes a single-block loop of strip ops, which the x64
// backend runs strip by strip with its values in registers.
//
// Where it folded a vote it also uses what a uniform branch tells its
// successors (below), then runs const_fold once more.
#include "ir/pass_util.h"
#include "ir/passes.h"

namespace gpurc::ir {

using namespace passutil;

bool fold_uniform_votes(Function& f) {
  bool candidates = false;
  for (const Block& b : f.blocks)
    for (ValueId v : b.insts) {
      const Inst& in = f.insts[v];
      candidates |= (in.op == Opcode::Any || in.op == Opcode::All) && whole_warp_cluster(in.imm) &&
                    in.args.size() == 2 && f.insts[in.args[1]].op == Opcode::EntryMask;
    }
  if (!candidates) return false;
  const std::vector<uint8_t> uni = compute_uniformity(f);
  Replacements repl(f);
  bool changed = false;
  for (Block& b : f.blocks) {
    std::vector<ValueId> out;
    out.reserve(b.insts.size());
    for (ValueId v : b.insts) {
      const Inst& in = f.insts[v];
      if ((in.op == Opcode::Any || in.op == Opcode::All) && whole_warp_cluster(in.imm) && in.args.size() == 2 &&
          f.insts[in.args[1]].op == Opcode::EntryMask && uni[in.args[0]]) {
        repl.set(v, in.args[0]);
        kill_inst(f, v);
        changed = true;
        continue;
      }
      out.push_back(v);
    }
    b.insts = std::move(out);
  }
  if (changed) repl.apply(f);
  // Known on an edge: a phi operand that is the uniform condition of the
  // cond_br it arrives through is true on that branch's true edge and
  // false on its false edge (every launched lane read the same value and
  // went that way). The loop above leaves G13's exec phi as
  // phi [true, c] with c the loop's own exit test: the phi is true, and
  // const_fold then removes every select on it.
  if (!changed) return false;
  const std::vector<uint8_t> uni2 = compute_uniformity(f);
  f.compute_preds();
  bool phis = false;
  for (BlockId p = 0; p < f.blocks.size(); ++p) {
    const ValueId t = f.terminator(p);
    if (t == kNoValue || f.insts[t].op != Opcode::CondBr || f.insts[t].args.empty()) continue;
    const ValueId c = f.insts[t].args[0];
    const auto& succs = f.blocks[p].succs;
    if (succs.size() != 2 || succs[0] == succs[1] || !uni2[c] || f.insts[c].type != Type::I1) continue;
    for (int k = 0; k < 2; ++k) {
      const BlockId s = succs[k];
      const uint64_t known = k == 0 ? 1 : 0;
      const auto& preds = f.blocks[s].preds;
      for (ValueId v : f.blocks[s].insts) {
        if (f.insts[v].op != Opcode::Phi) continue;
        for (size_t i = 0; i < f.insts[v].args.size() && i < preds.size(); ++i) {
          if (preds[i] != p || f.insts[v].args[i] != c) continue;
          // Reuse a constant operand of the same value when the phi has
          // one, so const_fold sees a single-valued phi.
          ValueId with = kNoValue;
          for (ValueId a : f.insts[v].args)
            if (f.insts[a].op == Opcode::Const && f.insts[a].type == Type::I1 && (f.insts[a].imm & 1) == known)
              with = a;
          if (with == kNoValue) {
            with = make_inst(f, Opcode::Const, Type::I1, {}, 0, 0, known);
            f.blocks[0].insts.insert(f.blocks[0].insts.begin(), with);
          }
          f.insts[v].args[i] = with;
          phis = true;
        }
      }
    }
  }
  if (phis) const_fold(f);
  return true;
}

}  // namespace gpurc::ir
