#include "ir/pass_util.h"

#include "ir/cfg_order.h"

#include "ir/builder.h"

#include <algorithm>

namespace gpurc::ir::passutil {

std::vector<BlockId> reverse_post_order(const Function& f) {
  // The SIMT schedule order: any DFS reverse post-order serves the dominator
  // computation, and per-lane-PC lowering must follow the interpreter's order.
  return schedule_order(f);
}

std::vector<BlockId> immediate_dominators(const Function& f, const std::vector<BlockId>& rpo) {
  std::vector<BlockId> idom(f.blocks.size(), kNoBlock);
  if (rpo.empty()) return idom;
  std::vector<uint32_t> order(f.blocks.size(), ~0u);
  for (uint32_t i = 0; i < rpo.size(); ++i) order[rpo[i]] = i;
  std::vector<std::vector<BlockId>> preds(f.blocks.size());
  for (BlockId b : rpo)
    for (BlockId s : f.blocks[b].succs) preds[s].push_back(b);
  idom[rpo[0]] = rpo[0];
  auto intersect = [&](BlockId a, BlockId b) {
    while (a != b) {
      while (order[a] > order[b]) a = idom[a];
      while (order[b] > order[a]) b = idom[b];
    }
    return a;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 1; i < rpo.size(); ++i) {
      BlockId b = rpo[i];
      BlockId nd = kNoBlock;
      for (BlockId p : preds[b]) {
        if (idom[p] == kNoBlock) continue;
        nd = nd == kNoBlock ? p : intersect(p, nd);
      }
      if (nd != idom[b]) {
        idom[b] = nd;
        changed = true;
      }
    }
  }
  return idom;
}

bool dominates(const std::vector<BlockId>& idom, BlockId a, BlockId b) {
  if (idom[b] == kNoBlock || idom[a] == kNoBlock) return false;
  for (;;) {
    if (a == b) return true;
    BlockId up = idom[b];
    if (up == b) return false;
    b = up;
  }
}

ValueId make_inst(Function& f, Opcode op, Type t, std::vector<ValueId> args, BlockId b, uint8_t attr,
                  uint64_t imm, uint32_t fflags) {
  Inst in;
  in.op = op;
  in.type = t;
  in.attr = attr;
  in.imm = imm;
  in.fflags = fflags;
  in.block = b;
  in.args = std::move(args);
  f.insts.push_back(std::move(in));
  return ValueId(f.insts.size() - 1);
}

void kill_inst(Function& f, ValueId v) {
  f.insts[v].block = kNoBlock;
  f.insts[v].args.clear();
}

ValueId and_or_absorbed(const Function& f, const Inst& in, Replacements& repl) {
  if ((in.op != Opcode::And && in.op != Opcode::Or) || in.args.size() != 2) return kNoValue;
  const ValueId a = repl.find(in.args[0]), c = repl.find(in.args[1]);
  if (a == c) return a;
  auto absorbs = [&](ValueId inner, ValueId other) {
    const Inst& ii = f.insts[inner];
    return ii.op == in.op && ii.type == in.type && ii.block != kNoBlock && ii.args.size() == 2 &&
           (repl.find(ii.args[0]) == other || repl.find(ii.args[1]) == other);
  };
  if (absorbs(a, c)) return a;
  if (absorbs(c, a)) return c;
  return kNoValue;
}

ValueId Replacements::find_chain(ValueId v) {
  ValueId r = v;
  while (r < to.size() && to[r] != kNoValue) r = to[r];
  // Path compression.
  while (v < to.size() && to[v] != kNoValue && to[v] != r) {
    ValueId next = to[v];
    to[v] = r;
    v = next;
  }
  return r;
}

bool Replacements::any() const {
  if (!set_any_) return false;
  for (ValueId v : to)
    if (v != kNoValue) return true;
  return false;
}

void Replacements::apply(Function& f) {
  if (!set_any_) return;
  const size_t n = to.size();
  for (auto& in : f.insts) {
    if (in.block == kNoBlock) continue;
    for (auto& a : in.args)
      if (a < n && to[a] != kNoValue) a = find(a);  // find(a) is a for the others
  }
}

std::vector<std::vector<BlockId>> snapshot_preds(Function& f) {
  f.compute_preds();
  std::vector<std::vector<BlockId>> p;
  p.reserve(f.blocks.size());
  for (auto& b : f.blocks) p.push_back(b.preds);
  return p;
}

void remap_phis(Function& f, const std::vector<std::vector<BlockId>>& old_preds) {
  f.compute_preds();
  ValueId undef_cache[16];
  std::fill(std::begin(undef_cache), std::end(undef_cache), kNoValue);
  auto undef_of = [&](Type t) {
    ValueId& u = undef_cache[size_t(t)];
    if (u == kNoValue) {
      u = make_inst(f, Opcode::Undef, t, {}, 0);
      auto& ins = f.blocks[0].insts;
      ins.insert(ins.begin(), u);
    }
    return u;
  };
  for (BlockId b = 0; b < f.blocks.size(); ++b) {
    const auto& np = f.blocks[b].preds;
    const std::vector<BlockId> empty;
    const auto& op = b < old_preds.size() ? old_preds[b] : empty;
    if (np == op) continue;
    // The k-th occurrence of a predecessor in the new list takes the operand
    // of its k-th occurrence in the old list.
    std::vector<int> src(np.size(), -1);
    std::vector<uint8_t> used(op.size(), 0);
    for (size_t i = 0; i < np.size(); ++i)
      for (size_t j = 0; j < op.size(); ++j)
        if (!used[j] && op[j] == np[i]) {
          used[j] = 1;
          src[i] = int(j);
          break;
        }
    std::vector<ValueId> phis;
    for (ValueId v : f.blocks[b].insts)
      if (f.insts[v].op == Opcode::Phi) phis.push_back(v);
    for (ValueId v : phis) {
      std::vector<ValueId> args(np.size());
      for (size_t i = 0; i < np.size(); ++i) {
        const auto& old_args = f.insts[v].args;
        args[i] = src[i] >= 0 && size_t(src[i]) < old_args.size() ? old_args[src[i]] : undef_of(f.insts[v].type);
      }
      f.insts[v].args = std::move(args);
    }
  }
}

void remove_unreachable_blocks(Function& f) {
  if (f.blocks.empty()) return;
  auto rpo = reverse_post_order(f);
  if (rpo.size() == f.blocks.size()) return;
  auto old_preds = snapshot_preds(f);
  std::vector<uint8_t> live(f.blocks.size(), 0);
  for (BlockId b : rpo) live[b] = 1;
  std::vector<BlockId> remap(f.blocks.size(), kNoBlock);
  BlockId n = 0;
  for (BlockId b = 0; b < f.blocks.size(); ++b)
    if (live[b]) remap[b] = n++;
  std::vector<Block> nb(n);
  std::vector<std::vector<BlockId>> np(n);
  for (BlockId b = 0; b < f.blocks.size(); ++b) {
    if (!live[b]) {
      for (ValueId v : f.blocks[b].insts) kill_inst(f, v);
      continue;
    }
    Block& d = nb[remap[b]];
    d = std::move(f.blocks[b]);
    for (auto& s : d.succs) s = remap[s];
    for (ValueId v : d.insts) f.insts[v].block = remap[b];
    for (BlockId p : old_preds[b])
      np[remap[b]].push_back(live[p] ? remap[p] : kNoBlock);
  }
  // Phi operands that came from dropped predecessors go away: rewrite the
  // old pred lists in new numbering (kNoBlock never matches a new pred).
  f.blocks = std::move(nb);
  remap_phis(f, np);
}

void ensure_entry_without_preds(Function& f) {
  f.compute_preds();
  if (f.blocks.empty() || f.blocks[0].preds.empty()) return;
  auto old_preds = snapshot_preds(f);
  BlockId moved = f.add_block();
  std::swap(f.blocks[0], f.blocks[moved]);
  for (ValueId v : f.blocks[moved].insts) f.insts[v].block = moved;
  for (auto& b : f.blocks)
    for (auto& s : b.succs)
      if (s == 0) s = moved;
  // Rename 0 -> moved in the old pred lists, so the moved block keeps its
  // phi operands and the new entry edge gets an undef.
  std::vector<std::vector<BlockId>> op(f.blocks.size());
  for (BlockId b = 0; b < old_preds.size(); ++b) {
    BlockId nbk = b == 0 ? moved : b;
    op[nbk] = old_preds[b];
    for (auto& p : op[nbk])
      if (p == 0) p = moved;
  }
  ValueId br = make_inst(f, Opcode::Br, Type::Void, {}, 0);
  f.blocks[0].insts = {br};
  f.blocks[0].succs = {moved};
  remap_phis(f, op);
}

void mark_loop_body(const Function& f, BlockId latch, std::vector<uint8_t>& body,
                    const std::vector<uint8_t>* reachable) {
  if (body[latch]) return;
  body[latch] = 1;
  std::vector<BlockId> work{latch};
  while (!work.empty()) {
    BlockId b = work.back();
    work.pop_back();
    for (BlockId p : f.blocks[b].preds)
      if (!body[p] && (!reachable || (*reachable)[p])) {
        body[p] = 1;
        work.push_back(p);
      }
  }
}

// Moves an existing instruction to the end of block b.
void place(Function& f, BlockId b, ValueId v) {
  f.insts[v].block = b;
  f.blocks[b].insts.push_back(v);
}

// Emits the non-terminator instructions of an original block into the
// builder's block under `mask`: var writes keep the old value in lanes off
// the mask, ops with a mask operand get it ANDed in.
void emit_masked_body(Function& f, Builder& bld, const std::vector<ValueId>& insts, ValueId mask,
                      bool mask_vars) {
  for (ValueId v : insts) {
    Inst in = f.insts[v];
    const OpInfo& info = op_info(in.op);
    if (info.terminator) continue;
    if (in.op == Opcode::SetVar && mask_vars) {
      ValueId old = bld.get_var(uint32_t(in.imm));
      ValueId sel = bld.select(mask, in.args[0], old);
      f.insts[v].args[0] = sel;
    } else if (in.op == Opcode::StoreVar && mask_vars) {
      ValueId old = bld.emit(Opcode::LoadVar, f.insts[in.args[0]].type, {}, 0, 0, in.imm);
      ValueId sel = bld.select(mask, in.args[0], old);
      f.insts[v].args[0] = sel;
    } else if (has_mask_operand(in.op)) {
      size_t k = mask_operand_index(in.op);
      ValueId m = bld.binary(Opcode::And, in.args[k], mask);
      f.insts[v].args[k] = m;
    }
    place(f, bld.block(), v);
  }
}

bool has_mask_operand(Opcode op) {
  switch (op) {
    case Opcode::Ballot: case Opcode::Any: case Opcode::All: case Opcode::Reduce:
    case Opcode::ScanIncl: case Opcode::ScanExcl: case Opcode::Load: case Opcode::Store:
    case Opcode::AtomicRmw: case Opcode::AtomicCas: case Opcode::Trap:
      return true;
    default:
      return false;
  }
}

size_t mask_operand_index(Opcode op) {
  switch (op) {
    case Opcode::Trap: return 0;
    case Opcode::Store: case Opcode::AtomicRmw: return 2;
    case Opcode::AtomicCas: return 3;
    default: return 1;
  }
}

}  // namespace gpurc::ir::passutil
