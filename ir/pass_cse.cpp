// cse: a pure op equal to an earlier one (same opcode, type, attributes,
// immediate and operands) whose definition dominates it is replaced by that
// one; an and/or equal to one of its operands (x & x, (x & y) & y: masks
// that become so once equal masks are merged) by that operand. Effects
// (loads, stores, atomics, var access, budget) are never merged.
// Cross-lane ops (ballot, reduce, shuffle...) are merged only once every
// branch is uniform: before that, two identical ballots in differently
// active regions see different lanes.
#include <unordered_map>

#include "ir/pass_util.h"
#include "ir/passes.h"

namespace gpurc::ir {

using namespace passutil;

void cse(Function& f) {
  if (f.blocks.empty()) return;
  auto rpo = reverse_post_order(f);
  auto idom = immediate_dominators(f, rpo);
  const bool lowered = is_lowered(f);
  // Candidates by a hash of (opcode, type, attr, fflags, imm, operands);
  // a bucket may hold other keys too, so each candidate is compared in full.
  std::unordered_map<uint64_t, std::vector<ValueId>> seen;
  seen.reserve(f.insts.size());
  auto key_hash = [](const Inst& in) {
    uint64_t h = (uint64_t(in.op) << 48) ^ (uint64_t(in.type) << 40) ^ (uint64_t(in.attr) << 32) ^ in.fflags;
    auto mix = [&](uint64_t x) {
      h ^= x + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
      h *= 0xFF51AFD7ED558CCDull;
    };
    mix(in.imm);
    for (ValueId a : in.args) mix(a);
    return h;
  };
  auto same_key = [](const Inst& a, const Inst& b) {
    return a.op == b.op && a.type == b.type && a.attr == b.attr && a.fflags == b.fflags && a.imm == b.imm &&
           a.args == b.args;
  };
  Replacements repl(f);
  for (BlockId b : rpo) {
    std::vector<ValueId> out;
    for (ValueId v : f.blocks[b].insts) {
      Inst& in = f.insts[v];
      for (auto& a : in.args) a = repl.find(a);
      const OpInfo& info = op_info(in.op);
      if (!info.pure || in.op == Opcode::Phi || (info.cross_lane && !lowered)) {
        out.push_back(v);
        continue;
      }
      if (ValueId same = and_or_absorbed(f, in, repl); same != kNoValue) {
        repl.set(v, same);
        kill_inst(f, v);
        continue;
      }
      auto& cands = seen[key_hash(in)];
      ValueId hit = kNoValue;
      for (ValueId c : cands)
        if (same_key(f.insts[c], in) && f.insts[c].block != kNoBlock && dominates(idom, f.insts[c].block, b)) {
          hit = c;
          break;
        }
      if (hit != kNoValue) {
        repl.set(v, hit);
        kill_inst(f, v);
        continue;
      }
      cands.push_back(v);
      out.push_back(v);
    }
    f.blocks[b].insts = std::move(out);
  }
  repl.apply(f);
}

}  // namespace gpurc::ir
