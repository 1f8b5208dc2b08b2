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
  // Whether every branch is uniform: a whole uniformity analysis, so asked
  // only when a cross-lane op needs the answer.
  int lowered_state = -1;
  auto lowered = [&] {
    if (lowered_state < 0) lowered_state = is_lowered(f) ? 1 : 0;
    return lowered_state == 1;
  };
  // Candidates in one open-addressing table keyed by a hash of (opcode,
  // type, attr, fflags, imm, operands): equal hashes may hold other keys
  // too, so each candidate is compared in full. No allocation per value.
  struct Slot {
    uint64_t hash;
    ValueId v;  // kNoValue: free
  };
  size_t live = 0;
  for (const Block& b : f.blocks) live += b.insts.size();
  size_t cap = 64;
  while (cap < live * 2) cap *= 2;
  std::vector<Slot> table(cap, Slot{0, kNoValue});
  const size_t mask = cap - 1;
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
      if (!info.pure || in.op == Opcode::Phi || (info.cross_lane && !lowered())) {
        out.push_back(v);
        continue;
      }
      if (ValueId same = and_or_absorbed(f, in, repl); same != kNoValue) {
        repl.set(v, same);
        kill_inst(f, v);
        continue;
      }
      const uint64_t h = key_hash(in);
      ValueId hit = kNoValue;
      size_t i = size_t(h >> 20) & mask;
      for (; table[i].v != kNoValue; i = (i + 1) & mask) {
        const ValueId c = table[i].v;
        if (table[i].hash == h && same_key(f.insts[c], in) && f.insts[c].block != kNoBlock &&
            dominates(idom, f.insts[c].block, b)) {
          hit = c;
          break;
        }
      }
      if (hit != kNoValue) {
        repl.set(v, hit);
        kill_inst(f, v);
        continue;
      }
      table[i] = Slot{h, v};  // the free slot that ended the probe (each value is added at most once)
      out.push_back(v);
    }
    f.blocks[b].insts = std::move(out);
  }
  repl.apply(f);
}

}  // namespace gpurc::ir
