// Edge-mask lowering for reducible CFGs (scheme 2 of pass_divergence.cpp).
//
// Every original block b gets an i1 mask var m_b: the lanes that want to run
// b next. A block's code runs (behind an any(m_b) skip check) with
// mask = m_b, then clears m_b and ORs each outgoing edge's lanes into the
// target's mask. Blocks are emitted in a topological order of the forward
// edges in which each natural loop is contiguous; a loop is a real uniform
// loop that repeats while any lane took a back edge into its header (which
// is then in m_header again). Lanes that leave a loop wait in the exit
// block's mask, which comes after the loop; a returning lane simply joins no
// mask. See docs/passes.md for a worked example.
#include <algorithm>
#include <functional>
#include <queue>

#include "ir/builder.h"
#include "ir/pass_util.h"
#include "ir/passes.h"

namespace gpurc::ir {

using namespace passutil;

namespace {

struct Loop {
  BlockId header;
  std::vector<uint8_t> body;  // per block
  int parent = -1;
  size_t size = 0;
};

// One item of a region's order: a block, or a whole inner loop.
struct Item {
  bool is_loop;
  uint32_t id;  // block id or loop index
};

class EdgeMaskLowering {
 public:
  explicit EdgeMaskLowering(Function& f) : f_(f), bld_(f) {}

  bool run() {
    rpo_ = reverse_post_order(f_);
    const size_t n = f_.blocks.size();
    if (rpo_.size() != n) return false;  // lower_divergence removed unreachable blocks
    rpo_index_.assign(n, 0);
    for (uint32_t i = 0; i < rpo_.size(); ++i) rpo_index_[rpo_[i]] = i;
    auto idom = immediate_dominators(f_, rpo_);
    f_.compute_preds();

    // Back edges must target a dominator; any other retreating edge means
    // the CFG is irreducible and the per-lane PC scheme has to take it.
    std::vector<int> loop_of_header(n, -1);
    for (BlockId u : rpo_)
      for (BlockId s : f_.blocks[u].succs) {
        if (rpo_index_[s] > rpo_index_[u]) continue;
        if (!dominates(idom, s, u)) return false;
        if (loop_of_header[s] < 0) {
          loop_of_header[s] = int(loops_.size());
          loops_.push_back(Loop{s, std::vector<uint8_t>(n, 0), -1, 0});
          loops_.back().body[s] = 1;
        }
        mark_loop_body(f_, u, loops_[loop_of_header[s]].body);
      }
    for (auto& L : loops_) L.size = size_t(std::count(L.body.begin(), L.body.end(), 1));
    // Innermost loop of each block, parent of each loop (smallest enclosing).
    innermost_.assign(n, -1);
    for (BlockId b = 0; b < n; ++b)
      for (int l = 0; l < int(loops_.size()); ++l)
        if (loops_[l].body[b] && (innermost_[b] < 0 || loops_[l].size < loops_[innermost_[b]].size))
          innermost_[b] = l;
    for (int l = 0; l < int(loops_.size()); ++l)
      for (int o = 0; o < int(loops_.size()); ++o)
        if (o != l && loops_[o].body[loops_[l].header] && loops_[o].size > loops_[l].size &&
            (loops_[l].parent < 0 || loops_[o].size < loops_[loops_[l].parent].size))
          loops_[l].parent = o;

    emit();
    return true;
  }

 private:
  // The item that block b is part of inside the region of loop `region`
  // (-1 = the whole function): b itself, or the outermost loop below region.
  Item item_of(BlockId b, int region) const {
    int l = innermost_[b];
    if (l == region) return {false, b};
    while (loops_[l].parent != region) l = loops_[l].parent;
    return {true, uint32_t(l)};
  }
  BlockId item_block(const Item& it) const { return it.is_loop ? loops_[it.id].header : it.id; }

  bool in_region(BlockId b, int region) const { return region < 0 || loops_[region].body[b]; }

  // Topological order of the region's items over forward edges, ties broken
  // by reverse post-order (close to the interpreter's schedule).
  std::vector<Item> order_region(int region) {
    std::vector<Item> items;
    std::vector<int> index_of(old_.size(), -1);  // by item block
    for (BlockId b : rpo_) {
      if (!in_region(b, region)) continue;
      Item it = item_of(b, region);
      BlockId key = item_block(it);
      if (index_of[key] < 0) {
        index_of[key] = int(items.size());
        items.push_back(it);
      }
    }
    const BlockId header = region < 0 ? kNoBlock : loops_[region].header;
    std::vector<std::vector<int>> succ(items.size());
    std::vector<int> indeg(items.size(), 0);
    for (BlockId u : rpo_) {
      if (!in_region(u, region)) continue;
      int iu = index_of[item_block(item_of(u, region))];
      for (BlockId s : old_[u].succs) {
        if (!in_region(s, region) || s == header) continue;
        int is = index_of[item_block(item_of(s, region))];
        if (is == iu) continue;
        succ[iu].push_back(is);
        ++indeg[is];
      }
    }
    using Entry = std::pair<uint32_t, int>;  // (rpo index, item)
    std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> ready;
    for (int i = 0; i < int(items.size()); ++i)
      if (indeg[i] == 0) ready.push({rpo_index_[item_block(items[i])], i});
    std::vector<Item> out;
    while (!ready.empty()) {
      int i = ready.top().second;
      ready.pop();
      out.push_back(items[i]);
      for (int s : succ[i])
        if (--indeg[s] == 0) ready.push({rpo_index_[item_block(items[s])], s});
    }
    return out;  // reducible => acyclic => every item is emitted
  }

  ValueId entry_mask() { return bld_.emit(Opcode::EntryMask, Type::I1, {}); }
  ValueId any_of(ValueId m) { return bld_.emit(Opcode::Any, Type::I1, {m, entry_mask()}); }
  void add_lanes(BlockId target, ValueId lanes) {
    uint32_t var = mask_var_[target];
    bld_.set_var(var, bld_.binary(Opcode::Or, bld_.get_var(var), lanes));
  }

  // Emits block b at the builder's current block; leaves the builder at the
  // block where the code after it goes.
  void emit_block(BlockId b, bool skip_check) {
    const Block& ob = old_[b];
    BlockId run = skip_check ? f_.add_block(ob.name) : kNoBlock;
    BlockId after = f_.add_block();
    if (skip_check) {
      bld_.cond_br(any_of(bld_.get_var(mask_var_[b])), run, after);
      bld_.set_block(run);
    } else if (!ob.name.empty() && f_.blocks[bld_.block()].name.empty()) {
      f_.blocks[bld_.block()].name = ob.name;
    }
    ValueId mask = bld_.get_var(mask_var_[b]);
    bld_.set_var(mask_var_[b], bld_.i1(false));
    std::vector<ValueId> body(ob.insts.begin(), ob.insts.end());
    ValueId t = body.empty() ? kNoValue : body.back();
    bool has_term = t != kNoValue && op_info(f_.insts[t].op).terminator;
    emit_masked_body(f_, bld_, body, mask);
    if (!has_term) {
      bld_.emit(Opcode::Unreachable, Type::Void, {});
      bld_.set_block(after);
      return;
    }
    const Inst term = f_.insts[t];
    kill_inst(f_, t);
    switch (term.op) {
      case Opcode::Br:
        add_lanes(ob.succs[0], mask);
        bld_.br(after);
        break;
      case Opcode::Barrier:
        add_lanes(ob.succs[0], mask);
        bld_.barrier(after);
        break;
      case Opcode::CondBr: {
        ValueId c = term.args[0];
        add_lanes(ob.succs[0], bld_.binary(Opcode::And, mask, c));
        ValueId not_c = bld_.binary(Opcode::Xor, c, bld_.i1(true));
        add_lanes(ob.succs[1], bld_.binary(Opcode::And, mask, not_c));
        bld_.br(after);
        break;
      }
      case Opcode::Switch: {
        size_t k = ob.succs.size();
        ValueId sel = term.args[0];
        for (size_t j = 0; j + 1 < k; ++j) {
          ValueId hit = bld_.icmp(IntPred::Eq, sel, bld_.i32(uint32_t(j)));
          add_lanes(ob.succs[j], bld_.binary(Opcode::And, mask, hit));
        }
        ValueId rest = bld_.icmp(IntPred::Uge, sel, bld_.i32(uint32_t(k - 1)));
        add_lanes(ob.succs[k - 1], bld_.binary(Opcode::And, mask, rest));
        bld_.br(after);
        break;
      }
      case Opcode::Return:  // the lanes join no mask: they are done
        bld_.br(after);
        break;
      default:  // unreachable: no lane may get here
        bld_.emit(Opcode::Unreachable, Type::Void, {});
        break;
    }
    bld_.set_block(after);
  }

  void emit_items(const std::vector<Item>& items, size_t from) {
    for (size_t i = from; i < items.size(); ++i) {
      if (!items[i].is_loop) {
        emit_block(items[i].id, true);
        continue;
      }
      const int l = int(items[i].id);
      const BlockId h = loops_[l].header;
      BlockId top = f_.add_block();
      BlockId after = f_.add_block();
      bld_.cond_br(any_of(bld_.get_var(mask_var_[h])), top, after);
      bld_.set_block(top);
      auto inner = order_region(l);
      // inner[0] is the header (the only item without forward predecessors).
      emit_block(h, false);
      emit_items(inner, 1);
      bld_.cond_br(any_of(bld_.get_var(mask_var_[h])), top, after);
      bld_.set_block(after);
    }
  }

  void emit() {
    old_ = std::move(f_.blocks);
    f_.blocks.clear();
    mask_var_.resize(old_.size());
    for (BlockId b = 0; b < old_.size(); ++b)
      mask_var_[b] = f_.add_var("mask_b" + std::to_string(b), Type::I1);
    BlockId entry = f_.add_block();
    bld_.set_block(entry);
    for (BlockId b = 0; b < old_.size(); ++b)
      bld_.set_var(mask_var_[b], b == 0 ? entry_mask() : bld_.i1(false));
    emit_items(order_region(-1), 0);
    bld_.ret();
  }

 private:
  Function& f_;
  Builder bld_;
  std::vector<BlockId> rpo_;
  std::vector<uint32_t> rpo_index_;
  std::vector<Loop> loops_;
  std::vector<int> innermost_;
  std::vector<Block> old_;
  std::vector<uint32_t> mask_var_;
};

}  // namespace

bool lower_with_edge_masks(Function& f) { return EdgeMaskLowering(f).run(); }

}  // namespace gpurc::ir
