// Tesla translation: control instructions and the warp stack (call/ret,
// prebrk/brk, bra, bar, trap, exits). See translate.cpp for how the stack is
// resolved statically.
#include "frontend/tesla/translate_impl.h"
#include "ir/barrier_word.h"

namespace gpurc::tesla::detail {

void Translator::push_entry(uint32_t entry) {
  V sp = b.get_var(kVarSp);
  // Overflow traps (the interpreter's stack is deeper, see docs/tesla.md).
  b.trap(b.icmp(ir::IntPred::Uge, sp, b.i32(kStackDepth)), uint64_t(kTrapStackOverflow) << 24 | pc);
  // Cloned contexts know every entry statically: only the depth is kept
  // (for the overflow trap).
  for (unsigned i = 0; i < kStackDepth && !cloned; ++i) {
    V at = b.icmp(ir::IntPred::Eq, sp, b.i32(i));
    b.set_var(kVarStack + i, b.select(at, b.i32(entry), b.get_var(kVarStack + i)));
  }
  b.set_var(kVarSp, b.iadd(sp, b.i32(1)));
}

V Translator::stack_top(V index) {
  V v = b.i32(0);
  for (unsigned i = 0; i < kStackDepth; ++i)
    v = b.select(b.icmp(ir::IntPred::Eq, index, b.i32(i)), b.get_var(kVarStack + i), v);
  return v;
}

// Jumps to the block of the word address in var kVarPopped, one of `sites`
// (each block of the chain reads the var itself, see kVarPopped).
void Translator::dispatch(const std::set<uint32_t>& sites, const Stack* rest) {
  for (uint32_t s : sites) {
    ir::BlockId no = f.add_block();
    V target = band(b.get_var(kVarPopped), 0x0fffffffu);
    b.cond_br(b.icmp(ir::IntPred::Eq, target, b.i32(s)), block_at(s, rest), no);
    b.set_block(no);
  }
  b.trap(b.i1(true), uint64_t(kTrapBadTarget) << 24 | pc);
  b.ret();
}

// Pops entries until one of kind `want` (ret: call or limited call; brk:
// prebrk) and continues at its address, one of `sites`; an empty stack
// exits the thread (ret) or traps (brk).
ir::BlockId Translator::make_dispatch(bool is_ret, const std::set<uint32_t>& sites, const Stack* rest) {
  ir::BlockId saved = b.block();
  ir::BlockId head = f.add_block(is_ret ? "ret_pop" : "brk_pop");
  ir::BlockId empty = f.add_block(), pop = f.add_block(), found = f.add_block();
  b.set_block(head);
  V sp = b.get_var(kVarSp);
  b.cond_br(eq0(sp), empty, pop);
  b.set_block(empty);
  if (is_ret) b.set_var(kVarExited, b.i32(1));
  else b.trap(b.i1(true), uint64_t(kTrapNoBreak) << 24);
  b.ret();
  b.set_block(pop);
  V sp1 = b.isub(b.get_var(kVarSp), b.i32(1));
  V e = stack_top(sp1);
  b.set_var(kVarSp, sp1);
  b.set_var(kVarPopped, e);
  V kind = shr(e, 28);
  V is_lim = b.icmp(ir::IntPred::Eq, kind, b.i32(kEntryCallLim));
  b.set_var(kVarLimDepth, b.isub(b.get_var(kVarLimDepth), b.zext(Type::I32, is_lim)));
  V hit =
      is_ret ? b.icmp(ir::IntPred::Ne, kind, b.i32(kEntryPreBrk)) : b.icmp(ir::IntPred::Eq, kind, b.i32(kEntryPreBrk));
  b.cond_br(hit, found, head);
  b.set_block(found);
  dispatch(sites, rest);
  b.set_block(saved);
  return head;
}

uint32_t Translator::enclosing_join(uint32_t p) {
  if (inner_join.empty()) {
    inner_join.assign(code.size() + 1, ~0u);
    inner_joinat.assign(code.size() + 1, ~0u);
    using Region = std::pair<uint32_t, uint32_t>;  // (width, target)
    std::vector<std::vector<Region>> starts(code.size() + 1), ends(code.size() + 1);
    for (auto& [a, in] : insns) {
      int64_t t = -1;
      if (in.op == Op::JoinAt && branch_target(in, t) && t > int64_t(a) + 1 && uint64_t(t) <= code.size()) {
        starts[a + 1].push_back({uint32_t(t) - a, uint32_t(t)});
        ends[size_t(t)].push_back({uint32_t(t) - a, uint32_t(t)});
      }
    }
    std::multiset<Region> open;  // narrowest first
    for (uint32_t w = 0; w <= code.size(); ++w) {
      for (auto& r : ends[w]) open.erase(open.find(r));
      for (auto& r : starts[w]) open.insert(r);
      if (!open.empty()) {
        inner_join[w] = open.begin()->second;
        inner_joinat[w] = open.begin()->second - open.begin()->first;
      }
    }
  }
  return p < inner_join.size() ? inner_join[p] : ~0u;
}

// Ends the lanes running the current block (exited = 1, return). Inside a
// joinat region the warp stack runs an exiting path when the other side
// reaches the join, so in the loop iteration it belongs to. A block that
// only returns is outside every loop of the CFG, and the IR's schedule
// (ir/cfg_order.h) would hold its lanes back until the loop is done, so
// their last stores would land after those of later iterations (fuzz
// campaign, seed 1). So the block also branches to the join on a condition
// that is never true at run time (any() of the running lanes is true
// wherever it runs): the edge places it before the join, inside the loop.
// The condition is uniform, so kernels without divergence stay unmasked.
// Without a joinat the diverged lanes wait on the stack until the others
// are done (leave the loop by break, exit), which is where the plain return
// puts them.
// In a subroutine outside any joinat region, the region around the call
// site counts (the callee's stack context tells the call sites).
// A region whose join no lane reaches (e.g. "join" right after the exit,
// reached only by falling through it) has no block: then the waiting
// lanes run when the other side reaches the join of the region around it,
// so the next enclosing region counts. And the join block is the one of
// the stack at the joinat (see below). Fuzz campaign seed 1 with quadop,
// iterations 2067, 2716, 10817, 14760: without these the exiting lanes ran
// after the lanes past the join, and a quadop of theirs read the others'
// later registers.
void Translator::end_lanes() {
  b.set_var(kVarExited, b.i32(1));
  uint32_t at = pc, join = enclosing_join(pc);
  Stack where = cloned ? ctx_stacks[size_t(cur_ctx)] : Stack{};
  while (join == ~0u && !where.empty()) {
    uint32_t e = where.back();
    where.pop_back();
    if ((e >> 28) == kEntryPreBrk) continue;
    uint32_t ret = e & 0x0fffffffu;  // a call's return address (the word after the call)
    for (uint32_t w : {1u, 2u})
      if (ret >= w && insns.count(ret - w) && insns.at(ret - w).op == Op::Call && insns.at(ret - w).words == w)
        join = enclosing_join(at = ret - w);
  }
  // The join runs with the stack of its joinat: breakaddr entries pushed
  // inside the region (a loop there that the exiting lanes are in) are
  // gone by then, so contexts without them are tried too.
  int ctx_id = 0;
  auto join_block_exists = [&] {
    Stack st = where;
    while (true) {
      auto ctx = ctx_ids.find(st);
      ctx_id = cloned ? (ctx == ctx_ids.end() ? -1 : ctx->second) : 0;
      if (node_blocks.count({join, ctx_id})) return true;
      if (!cloned || st.empty() || (st.back() >> 28) != kEntryPreBrk) return false;
      st.pop_back();
    }
  };
  while (join != ~0u && !join_block_exists()) {
    at = inner_joinat[at];  // the joinat word lies outside its own region: strictly smaller
    join = enclosing_join(at);
  }
  if (join == ~0u) {
    b.ret();
    return;
  }
  ir::BlockId done = f.add_block("exited");
  V every_lane = b.i1(true);
  V running = b.any(every_lane, b.i1(true));
  b.cond_br(running, done, node_blocks.at({join, ctx_id}));
  b.set_block(done);
  b.ret();
}

// The block of word `p` reached with stack `st` (cloned) or the current
// context's stack (nullptr).
ir::BlockId Translator::block_at(uint32_t p, const Stack* st) {
  int ctx = 0;
  if (cloned) {
    auto c = ctx_ids.find(st ? *st : ctx_stacks[size_t(cur_ctx)]);
    ctx = c == ctx_ids.end() ? -1 : c->second;
  }
  if (p >= code.size() || !node_blocks.count({p, ctx})) {
    ir::BlockId bad = f.add_block();
    ir::BlockId saved = b.block();
    b.set_block(bad);
    // Past the end: the address execution would continue at; otherwise the branching instruction.
    bool past_end = p == code.size() || (p > code.size() && p != ~0u && p - code.size() < 2);
    uint64_t trap = past_end ? uint64_t(kTrapPastEnd) << 24 | p : uint64_t(kTrapBadTarget) << 24 | pc;
    b.trap(b.i1(true), trap);
    b.ret();
    b.set_block(saved);
    return bad;
  }
  return node_blocks.at({p, ctx});
}

bool Translator::control(uint32_t next) {
  const Insn& in = *cur;
  int64_t t = -1;
  branch_target(in, t);
  auto target = [&](const Stack* st = nullptr) {
    return t >= 0 && uint64_t(t) < code.size() ? block_at(uint32_t(t), st) : block_at(~0u);
  };
  auto pushed = [&](uint32_t e) {
    Stack s2 = cloned ? ctx_stacks[size_t(cur_ctx)] : Stack{};
    s2.push_back(e);
    return s2;
  };
  switch (in.op) {
    case Op::Bra:
      if (in.pred == 15) b.br(target());
      else if (guard == ir::kNoValue) b.br(block_at(next));
      else {
        // The warp stack runs the taken side of a divergent bra first. The
        // IR's schedule order (ir/cfg_order.h) runs a branch's second
        // successor first where neither side reaches the other, so the
        // taken side goes second (branch on the negated guard).
        ir::BlockId fall = block_at(next), taken = target();
        b.cond_br(negate(guard), fall, taken);
      }
      return true;
    case Op::Call: {
      ir::BlockId go = f.add_block();
      if (in.has("lim")) {
        ir::BlockId skip = block_at(next);
        V full = b.icmp(ir::IntPred::Uge, b.get_var(kVarLimDepth), b.i32(opt.call_limit));
        b.cond_br(full, skip, go);
        b.set_block(go);
        b.set_var(kVarLimDepth, b.iadd(b.get_var(kVarLimDepth), b.i32(1)));
        push_entry(kEntryCallLim << 28 | next);
      } else {
        b.br(go);
        b.set_block(go);
        push_entry(kEntryCall << 28 | next);
      }
      Stack callee = pushed((in.has("lim") ? kEntryCallLim : kEntryCall) << 28 | next);
      b.br(target(&callee));
      return true;
    }
    case Op::PreRet:
    case Op::PreBrk: {
      uint32_t e = (in.op == Op::PreRet ? kEntryCall : kEntryPreBrk) << 28 | uint32_t(t);
      push_entry(e);
      Stack after = pushed(e);
      b.br(block_at(next, &after));
      return true;
    }
    case Op::JoinAt: b.br(block_at(next)); return true;  // reconvergence is implicit per lane
    case Op::Ret:
    case Op::Brk: {
      bool is_ret = in.op == Op::Ret;
      ir::BlockId d = ir::kNoBlock;
      // Statically known entry: a dispatch of its own with that one site
      // (the pops still run, so the stack vars stay exact).
      uint32_t addr = 0;
      Stack rest;
      if (cloned) {
        // The pops are known: adjust the depths and branch directly.
        const Stack& st = ctx_stacks[size_t(cur_ctx)];
        bool known = pop_entry(st, is_ret, addr, rest);
        d = f.add_block(is_ret ? "ret" : "brk");
        ir::BlockId saved = b.block();
        b.set_block(d);
        if (!known && is_ret) {
          end_lanes();
        } else if (!known) {
          b.trap(b.i1(true), uint64_t(kTrapNoBreak) << 24);
          b.ret();
        } else {
          uint32_t lims = 0;
          for (size_t k = rest.size(); k < st.size(); ++k) lims += (st[k] >> 28) == kEntryCallLim;
          b.set_var(kVarSp, b.isub(b.get_var(kVarSp), b.i32(uint32_t(st.size() - rest.size()))));
          if (lims) b.set_var(kVarLimDepth, b.isub(b.get_var(kVarLimDepth), b.i32(lims)));
          b.br(block_at(addr, &rest));
        }
        b.set_block(saved);
      } else if (auto r = resolved_exits.find(pc); r != resolved_exits.end()) {
        d = make_dispatch(is_ret, {r->second});
      } else {
        ir::BlockId& shared = is_ret ? ret_dispatch : brk_dispatch;
        if (shared == ir::kNoBlock) shared = make_dispatch(is_ret, is_ret ? ret_sites : brk_sites);
        d = shared;
      }
      if (in.pred == 15) b.br(d);
      else if (guard == ir::kNoValue) b.br(block_at(next));
      else b.cond_br(guard, d, block_at(next));
      return true;
    }
    case Op::Bar: {
      // Every form runs on the runtime's counted-barrier scheduler
      // (runtime/barrier.h): the word stored here (ir/barrier_word.h) tells
      // it which barrier this is, whether the warp arrives, waits or both,
      // and how many warps release it.
      uint32_t desc = barrier_descriptor(in);
      if (one_barrier_kind) {
        // Every barrier of the code has this descriptor: any lane that ever
        // reached one holds the right word, so no stop count is needed
        // (and the var is only written: the common plain-`bar` kernel).
        b.set_var(kVarBarrier, b.i32(desc | ir::kBarrierOneKind));
      } else {
        // The lane's stop count moves on, so the runtime can tell the lanes
        // that reached this barrier from the others.
        V stops = b.iadd(band(b.get_var(kVarBarrier), ~ir::kBarrierDescriptorMask), b.i32(ir::kBarrierStopOne));
        b.set_var(kVarBarrier, b.or_(stops, b.i32(desc)));
      }
      ir::BlockId after = f.add_block();
      b.barrier(after);
      b.set_block(after);
      b.br(block_at(next));
      return true;
    }
    case Op::Trap:
      b.trap(b.i1(true), uint64_t(kTrapInsn) << 24 | pc);
      b.ret();
      return true;
    case Op::Brkpt: b.br(block_at(next)); return true;
    default: return unsupported("control instruction");
  }
}

// The ir::barrier_word of a `bar`. Thread counts round up to warps; the
// runtime clamps a count above the block's warps to the block, as the
// interpreter does (CUDA 1.0's nvcc writes __syncthreads() as
// `bar inc wait 0x0 0xfff`).
uint32_t Translator::barrier_descriptor(const Insn& in) {
  bool inc = in.has("inc"), wait = in.has("wait");
  if (!inc && !wait) inc = wait = true;  // plain `bar`: arrive and wait
  int nimm = 0;
  uint64_t id = 0, threads = 0;
  for (auto& a : in.atoms)
    if (a.type == Atom::Opnd && a.op.kind == OKind::Imm) {
      if (nimm == 0) id = uint64_t(a.op.imm);
      else threads = uint64_t(a.op.imm);
      ++nimm;
    }
  int64_t count_warps = nimm > 1 ? int64_t((threads + 31) / 32) : -1;
  return ir::barrier_word(unsigned(id & 15), inc, wait, count_warps);
}

}  // namespace gpurc::tesla::detail
