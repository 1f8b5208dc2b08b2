// Region-local divergence lowering: a divergent branch masks only the
// single-entry single-exit region around it; the rest of the function keeps
// its CFG and runs unmasked (scheme 1 of pass_divergence.cpp), so a divergent
// branch after a loop no longer turns the loop into a masked any-loop.
//
// For each divergent branch in block H the region is found by walking up the
// dominator tree from H: D = H, idom(H), ...; with P = the immediate
// post-dominator of D (or the function's exit), R = the blocks reachable from
// D without passing P. (D, P) is taken when every block of R is dominated by
// D (one entry; back edges to D are inside R), H is in R and, unless P is
// the exit, no block of R returns (a lane that returns inside the region
// must not run on at P). Every edge leaving R then goes to P. The smallest
// such region is used; regions found for different branches are nested or
// disjoint, and only the outermost ones are lowered.
//
// A region is lowered as a function of its own with the edge-mask scheme
// (pass_edge_masks.cpp): its blocks (D first), a stub block for P that
// returns, the same instructions and vars. Its lanes are the launched lanes,
// since outside every region all launched lanes run together. Its code then
// replaces D (D becomes `br` to it) and its final return becomes `br P`.
// If some region is irreducible, or a branch kept outside the regions reads
// a value a region made varying (a var written under the region's mask), the
// function is left unchanged and the caller lowers it whole.
#include <algorithm>
#include <functional>

#include "ir/builder.h"
#include "ir/pass_util.h"
#include "ir/passes.h"

namespace gpurc::ir {

using namespace passutil;

namespace passutil {

std::vector<BlockId> immediate_post_dominators(const Function& f) {
  const BlockId n = BlockId(f.blocks.size());
  // Post-order of the reverse graph from the exit (DFS over predecessors).
  std::vector<std::vector<BlockId>> rsucc(n + 1);  // reverse-graph successors = original predecessors
  for (BlockId b = 0; b < n; ++b) {
    if (f.blocks[b].succs.empty()) rsucc[n].push_back(b);
    for (BlockId s : f.blocks[b].succs) rsucc[s].push_back(b);
  }
  std::vector<uint32_t> po(n + 1, ~0u);
  std::vector<BlockId> order;
  std::vector<uint8_t> seen(n + 1, 0);
  std::vector<std::pair<BlockId, size_t>> stack{{n, 0}};
  seen[n] = 1;
  while (!stack.empty()) {
    auto& [b, i] = stack.back();
    if (i < rsucc[b].size()) {
      BlockId s = rsucc[b][i++];
      if (!seen[s]) {
        seen[s] = 1;
        stack.push_back({s, 0});
      }
      continue;
    }
    po[b] = uint32_t(order.size());
    order.push_back(b);
    stack.pop_back();
  }
  std::vector<BlockId> ipdom(n + 1, kNoBlock);
  ipdom[n] = n;
  auto intersect = [&](BlockId a, BlockId b) {
    while (a != b) {
      while (po[a] < po[b]) a = ipdom[a];
      while (po[b] < po[a]) b = ipdom[b];
    }
    return a;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t k = order.size(); k-- > 0;) {
      BlockId b = order[k];
      if (b == n) continue;
      // Reverse-graph predecessors = original successors (and the exit).
      BlockId nd = kNoBlock;
      auto consider = [&](BlockId p) {
        if (ipdom[p] == kNoBlock) return;
        nd = nd == kNoBlock ? p : intersect(p, nd);
      };
      if (f.blocks[b].succs.empty()) consider(n);
      for (BlockId s : f.blocks[b].succs) consider(s);
      if (nd != kNoBlock && ipdom[b] != nd) {
        ipdom[b] = nd;
        changed = true;
      }
    }
  }
  for (BlockId b = 0; b < n; ++b)
    if (ipdom[b] == kNoBlock) ipdom[b] = n;
  ipdom.resize(n);
  return ipdom;
}

}  // namespace passutil

namespace {

bool is_branch(const Inst& in) { return in.op == Opcode::CondBr || in.op == Opcode::Switch; }

struct Region {
  BlockId entry = kNoBlock;  // D
  BlockId exit = kNoBlock;   // P, or kNoBlock for the function's exit
  std::vector<uint8_t> in;   // per block
};

class RegionLowering {
 public:
  explicit RegionLowering(Function& f) : f_(f) {}

  bool run() {
    const size_t n = f_.blocks.size();
    // Large functions (PICA200's runtime-stack fallback: one dispatch loop
    // around every block, so a region would be the whole function anyway)
    // skip the search, the copy and the uniformity re-check below.
    if (n > kMaxBlocks || f_.insts.size() > kMaxInsts) return false;
    auto rpo = reverse_post_order(f_);
    if (rpo.size() != n) return false;
    idom_ = immediate_dominators(f_, rpo);
    ipdom_ = immediate_post_dominators(f_);
    number_dominator_tree();
    f_.compute_preds();
    std::vector<Region> regions;
    for (BlockId h = 0; h < n; ++h) {
      ValueId t = f_.terminator(h);
      if (t == kNoValue || !is_branch(f_.insts[t]) || f_.insts[t].uniform) continue;
      Region r = find_region(h);
      if (r.entry == kNoBlock) return false;
      if (r.entry == 0 && r.exit == kNoBlock) return false;  // the whole function: the caller's schemes
      regions.push_back(std::move(r));
    }
    if (regions.empty()) return false;
    // Keep the outermost regions; nested or disjoint, anything else gives up.
    auto subset = [&](const Region& a, const Region& b) {  // a inside b
      for (BlockId x = 0; x < n; ++x)
        if (a.in[x] && !b.in[x]) return false;
      return true;
    };
    auto overlap = [&](const Region& a, const Region& b) {
      for (BlockId x = 0; x < n; ++x)
        if (a.in[x] && b.in[x]) return true;
      return false;
    };
    std::vector<Region> outer;
    for (size_t i = 0; i < regions.size(); ++i) {
      bool inside = false;
      for (size_t j = 0; j < regions.size(); ++j) {
        if (i == j || !overlap(regions[i], regions[j])) continue;
        const bool i_in_j = subset(regions[i], regions[j]), j_in_i = subset(regions[j], regions[i]);
        if (!i_in_j && !j_in_i) return false;  // partial overlap: not SESE regions after all
        if (i_in_j && (!j_in_i || j < i)) inside = true;  // equal regions: the first one stays
      }
      if (!inside) outer.push_back(regions[i]);  // a copy: later rounds still compare with regions[i]
    }
    const Function saved = f_;
    std::vector<uint8_t> lowered(n, 0);
    for (const Region& r : outer)
      if (!lower_region(r)) {
        f_ = saved;
        return false;
      }
    for (const Region& r : outer)
      for (BlockId b = 0; b < n; ++b) lowered[b] |= r.in[b];
    lowered.resize(f_.blocks.size(), 1);  // the regions' new blocks
    // Outside the regions: the uniform scheme (ops with a mask operand only
    // act on launched lanes; var writes unmasked).
    Builder bld(f_);
    for (BlockId b = 0; b < n; ++b) {
      if (lowered[b]) continue;
      std::vector<ValueId> old = std::move(f_.blocks[b].insts);
      f_.blocks[b].insts.clear();
      bld.set_block(b);
      bool needs_mask = false;
      for (ValueId v : old) needs_mask |= has_mask_operand(f_.insts[v].op);
      if (needs_mask) {
        ValueId em = bld.emit(Opcode::EntryMask, Type::I1, {});
        emit_masked_body(f_, bld, old, em, false);
      } else {
        for (ValueId v : old)
          if (!op_info(f_.insts[v].op).terminator) place(f_, b, v);
      }
      ValueId t = old.empty() ? kNoValue : old.back();
      if (t != kNoValue && op_info(f_.insts[t].op).terminator) place(f_, b, t);
    }
    // A branch kept outside the regions must still be uniform: a var a
    // region writes is a masked select afterwards, varying even when every
    // launched lane wrote the same value, and a kept branch reading it would
    // leave the function not lowered. Then the function is lowered whole.
    auto uni = compute_uniformity(f_);
    for (BlockId b = 0; b < n; ++b) {
      if (lowered[b]) continue;
      ValueId t = f_.terminator(b);
      if (t != kNoValue && is_branch(f_.insts[t]) && (f_.insts[t].args.empty() || !uni[f_.insts[t].args[0]])) {
        f_ = saved;
        return false;
      }
    }
    remove_unreachable_blocks(f_);
    return true;
  }

 private:
  Function& f_;
  std::vector<BlockId> idom_, ipdom_;
  std::vector<uint32_t> dom_in_, dom_out_;  // dominator tree DFS interval of each block

  void number_dominator_tree() {
    const size_t n = f_.blocks.size();
    std::vector<std::vector<BlockId>> kids(n);
    for (BlockId b = 1; b < n; ++b)
      if (idom_[b] != kNoBlock && idom_[b] != b) kids[idom_[b]].push_back(b);
    dom_in_.assign(n, 0);
    dom_out_.assign(n, 0);
    uint32_t clock = 0;
    std::vector<std::pair<BlockId, size_t>> stack{{0, 0}};
    dom_in_[0] = clock++;
    while (!stack.empty()) {
      auto [b, i] = stack.back();
      if (i < kids[b].size()) {
        ++stack.back().second;
        BlockId k = kids[b][i];
        dom_in_[k] = clock++;
        stack.push_back({k, 0});
      } else {
        dom_out_[b] = clock++;
        stack.pop_back();
      }
    }
  }
  bool dominates_fast(BlockId a, BlockId b) const {
    return dom_in_[a] <= dom_in_[b] && dom_out_[b] <= dom_out_[a];
  }

  // Region search work (blocks visited) allowed per function: a runtime-
  // stack PICA200 translation (thousands of blocks, one dispatch loop around
  // everything) would cost O(branches x blocks x depth) for regions that end
  // up being the whole function anyway.
  static constexpr size_t kWorkLimit = size_t(1) << 21;
  static constexpr size_t kMaxBlocks = 1024, kMaxInsts = 40000;
  size_t work_ = 0;

  Region find_region(BlockId h) {
    const BlockId n = BlockId(f_.blocks.size());
    for (BlockId d = h;; d = idom_[d]) {
      Region r;
      r.entry = d;
      r.exit = ipdom_[d] == n ? kNoBlock : ipdom_[d];
      r.in.assign(n, 0);
      std::vector<BlockId> work{d};
      r.in[d] = 1;
      bool ok = true;
      while (!work.empty() && ok) {
        BlockId b = work.back();
        work.pop_back();
        if (++work_ > kWorkLimit) return Region{};
        if (!dominates_fast(d, b)) ok = false;
        if (r.exit != kNoBlock && f_.blocks[b].succs.empty()) ok = false;  // returns inside
        for (BlockId s : f_.blocks[b].succs)
          if (s != r.exit && !r.in[s]) {
            r.in[s] = 1;
            work.push_back(s);
          }
      }
      if (ok && r.in[h]) return r;
      if (d == 0) return Region{};
    }
  }

  // Lowers one region in place (see the file comment). False: irreducible.
  bool lower_region(const Region& r) {
    const size_t n = f_.blocks.size();
    Function sub;
    sub.name = f_.name;
    sub.vars = f_.vars;
    sub.uniform_bytes = f_.uniform_bytes;
    sub.insts = f_.insts;
    std::vector<BlockId> to_sub(n, kNoBlock);
    std::vector<BlockId> members{r.entry};
    for (BlockId b = 0; b < r.in.size(); ++b)  // the blocks before any region was lowered
      if (r.in[b] && b != r.entry) members.push_back(b);
    for (BlockId b : members) to_sub[b] = sub.add_block(f_.blocks[b].name);
    BlockId stub = kNoBlock;
    if (r.exit != kNoBlock) {
      stub = sub.add_block();
      Builder sb(sub);
      sb.set_block(stub);
      sb.ret();
    }
    for (BlockId b : members) {
      Block& sbk = sub.blocks[to_sub[b]];
      sbk.insts = f_.blocks[b].insts;
      for (ValueId v : sbk.insts) sub.insts[v].block = to_sub[b];
      for (BlockId s : f_.blocks[b].succs) {
        BlockId t = s == r.exit ? stub : to_sub[s];
        if (t == kNoBlock) return false;  // an edge leaving the region elsewhere than P: not SESE
        sbk.succs.push_back(t);
      }
    }
    ensure_entry_without_preds(sub);
    if (!lower_with_edge_masks(sub)) return false;
    // Splice: the lowered blocks after f's, D jumps to the lowered entry.
    const BlockId base = BlockId(n);
    f_.insts = std::move(sub.insts);
    f_.vars = std::move(sub.vars);
    for (Block& b : sub.blocks) {
      for (BlockId& s : b.succs) s += base;
      f_.blocks.push_back(std::move(b));
    }
    for (BlockId b = base; b < f_.blocks.size(); ++b) {
      for (ValueId v : f_.blocks[b].insts) f_.insts[v].block = b;
      ValueId t = f_.terminator(b);
      if (t != kNoValue && f_.insts[t].op == Opcode::Return && r.exit != kNoBlock) {
        f_.insts[t].op = Opcode::Br;
        f_.blocks[b].succs = {r.exit};
      }
    }
    for (BlockId b : members) {
      f_.blocks[b].insts.clear();
      f_.blocks[b].succs.clear();
    }
    Builder bld(f_);
    bld.set_block(r.entry);
    bld.br(base);
    f_.blocks[r.entry].succs = {base};
    return true;
  }
};

}  // namespace

bool lower_divergent_regions(Function& f) { return RegionLowering(f).run(); }

}  // namespace gpurc::ir
