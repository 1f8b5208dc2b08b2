// Tesla -> pre-SSA IR (see launch_abi.h for the state layout and docs/tesla.md
// "Translation to IR" for the choices). This file: the driver, CFG discovery,
// the static warp stack (resolution and cloning), if-conversion and block
// merging; translate_impl.h lists the other parts.
//
// Control flow is per lane: a predicated bra is a cond_br and the IR's own
// divergence handling reconverges the lanes, so joinat and the join marker
// need no code. What the hardware keeps on the warp stack for call/ret and
// prebrk/brk is known statically in most programs: every word is translated
// once per stack it is reached with (clone_contexts), so ret and brk branch
// directly. Otherwise the stack is kept per lane in private vars (a small
// stack of kind << 28 | word address entries) and ret and brk pop it in a
// dispatch block that compares the popped address against the possible
// return or break sites.
#include <algorithm>
#include <cstdio>

#include "frontend/tesla/translate_impl.h"

namespace gpurc::tesla::detail {

// Pops to the first call entry (want_call) or prebrk entry (!want_call);
// false if the stack runs out.
bool Translator::pop_entry(Stack st, bool want_call, uint32_t& addr, Stack& rest) {
  while (!st.empty()) {
    uint32_t e = st.back();
    st.pop_back();
    if (((e >> 28) != kEntryPreBrk) == want_call) {
      addr = e & 0x0fffffffu;
      rest = std::move(st);
      return true;
    }
  }
  return false;
}

// Translates every word once per call/prebreak stack it can be reached
// with (calls are inlined, loops keep their own break targets), so every
// ret/brk knows the entry it pops and the CFG has no edges between
// unrelated call sites or loops. Those edges formed spurious cycles through
// shared function bodies and dispatch blocks, and the minimum-PC order then
// let lanes run ahead of lanes still inside a call or loop (vote, shared
// memory and flag mismatches in the fuzz campaign). False (and nothing
// cloned) when the stacks do not stay bounded (recursion) or the copies
// would be too many; the translation then uses one block per word.
bool Translator::clone_contexts() {
  auto id = [&](const Stack& st) {
    auto [it, fresh] = ctx_ids.emplace(st, int(ctx_stacks.size()));
    if (fresh) ctx_stacks.push_back(st);
    return it->second;
  };
  std::vector<std::pair<uint32_t, int>> work;
  auto flow = [&](int64_t p, const Stack& st) {
    if (p < 0 || !insns.count(uint32_t(p)) || st.size() > kStackDepth) return;
    std::pair<uint32_t, int> n{uint32_t(p), id(st)};
    if (!node_blocks.count(n)) node_blocks.emplace(n, ir::kNoBlock), work.push_back(n);
  };
  size_t limit = 4 * insns.size() + 256;
  flow(opt.entry, {});
  while (!work.empty()) {
    if (node_blocks.size() > limit) return false;
    auto [p, c] = work.back();
    work.pop_back();
    const Insn& in = insns.at(p);
    const Stack st = ctx_stacks[size_t(c)];
    uint32_t next = p + in.words;
    if (decode_errors.count(p)) continue;
    if (!in.is_control) {
      if (!in.exit) flow(next, st);
      continue;
    }
    int64_t t = -1;
    branch_target(in, t);
    auto push = [&](uint32_t e) {
      Stack s2 = st;
      s2.push_back(e);
      return s2;
    };
    switch (in.op) {
      case Op::Bra:
        flow(t, st);
        if (in.pred != 15) flow(next, st);
        break;
      case Op::Call:
        flow(t, push((in.has("lim") ? kEntryCallLim : kEntryCall) << 28 | next));
        if (in.has("lim")) flow(next, st);
        break;
      case Op::PreRet: flow(next, push(kEntryCall << 28 | uint32_t(t))); break;
      case Op::PreBrk: flow(next, push(kEntryPreBrk << 28 | uint32_t(t))); break;
      case Op::Ret:
      case Op::Brk: {
        uint32_t addr = 0;
        Stack rest;
        if (pop_entry(st, in.op == Op::Ret, addr, rest)) flow(addr, rest);
        if (in.pred != 15) flow(next, st);
        break;
      }
      case Op::Trap: break;
      default: flow(next, st); break;
    }
  }
  return true;
}

bool Translator::branch_target(const Insn& in, int64_t& t) {
  for (auto& a : in.atoms)
    if (a.type == Atom::Opnd && a.op.kind == OKind::Imm) {
      t = a.op.imm / 4;
      return true;
    }
  return false;
}

// Follows the call/prebreak stack along every path from the entry (entries
// as pushed at run time, kind << 28 | address). Where all paths reaching a
// ret or brk agree on the stack, the entry it pops is known and the
// translation branches there directly instead of through the shared
// dispatch: a shared dispatch has edges from every break to every break
// target, which makes all loops one cycle in the CFG, so the minimum-PC
// order no longer keeps a loop's lanes ahead of the code after it (lanes
// left a loop early and ran a vote before the others had caught up).
void Translator::resolve_stack() {
  std::map<uint32_t, std::vector<uint32_t>> at;  // stack on entry to a word
  std::set<uint32_t> conflict;
  std::vector<uint32_t> work;
  auto flow = [&](uint32_t p, const std::vector<uint32_t>& st) {
    if (!insns.count(p) || conflict.count(p)) return;
    auto [it, fresh] = at.emplace(p, st);
    if (fresh) work.push_back(p);
    else if (it->second != st) conflict.insert(p), work.push_back(p);
  };
  flow(opt.entry, {});
  std::set<uint32_t> unresolved;
  while (!work.empty()) {
    uint32_t p = work.back();
    work.pop_back();
    const Insn& in = insns.at(p);
    uint32_t next = p + in.words;
    if (decode_errors.count(p)) continue;
    if (conflict.count(p)) {
      // Unknown stack from here on: everything reachable stays unresolved.
      if (unresolved.insert(p).second) {
        int64_t t = -1;
        branch_target(in, t);
        for (int64_t s : {int64_t(next), t})
          if (s >= 0 && insns.count(uint32_t(s)) && !conflict.count(uint32_t(s)))
            conflict.insert(uint32_t(s)), work.push_back(uint32_t(s));
        if (in.op == Op::Ret || in.op == Op::Brk) {
          for (uint32_t s : in.op == Op::Ret ? ret_sites : brk_sites)
            if (insns.count(s) && !conflict.count(s)) conflict.insert(s), work.push_back(s);
        }
      }
      continue;
    }
    std::vector<uint32_t> st = at.at(p);
    if (st.size() > kStackDepth) continue;  // overflows: traps at run time
    if (!in.is_control) {
      if (!in.exit) flow(next, st);
      continue;
    }
    int64_t t = -1;
    bool has_t = branch_target(in, t);
    auto push = [&](uint32_t e) {
      std::vector<uint32_t> s2 = st;
      s2.push_back(e);
      return s2;
    };
    switch (in.op) {
      case Op::Bra:
        if (has_t && t >= 0) flow(uint32_t(t), st);
        if (in.pred != 15) flow(next, st);
        break;
      case Op::Call:
        if (has_t && t >= 0) flow(uint32_t(t), push((in.has("lim") ? kEntryCallLim : kEntryCall) << 28 | next));
        if (in.has("lim")) flow(next, st);
        break;
      case Op::PreRet: flow(next, push(kEntryCall << 28 | uint32_t(t))); break;
      case Op::PreBrk: flow(next, push(kEntryPreBrk << 28 | uint32_t(t))); break;
      case Op::Ret:
      case Op::Brk: {
        uint32_t addr = 0;
        std::vector<uint32_t> rest;
        if (pop_entry(st, in.op == Op::Ret, addr, rest)) {
          resolved_exits[p] = addr;
          flow(addr, rest);
        }
        if (in.pred != 15) flow(next, st);
        break;
      }
      case Op::Trap: break;
      default: flow(next, st); break;
    }
  }
  // A site reached with differing stacks makes every ret/brk after it unknown.
  for (uint32_t p : conflict) resolved_exits.erase(p);
  for (uint32_t p : unresolved) resolved_exits.erase(p);
}

bool Translator::discover() {
  std::vector<uint32_t> work{opt.entry};
  auto add = [&](int64_t t) {
    if (t >= 0 && uint64_t(t) < code.size() && !insns.count(uint32_t(t))) work.push_back(uint32_t(t));
  };
  while (!work.empty()) {
    uint32_t p = work.back();
    work.pop_back();
    if (insns.count(p) || p >= code.size()) continue;
    Insn in = decode(code.data(), code.size(), p, opt.target);
    pc = p;
    cur = nullptr;
    // An instruction the hardware refuses faults when it is reached (as in
    // the interpreter): it becomes a decode trap, not a translation error.
    if (check(in, p) != DecodeError::None) {
      decode_errors.insert(p);
      insns.emplace(p, std::move(in));
      continue;
    }
    uint32_t next = p + in.words;
    auto& slot = insns.emplace(p, std::move(in)).first->second;
    int64_t t = -1;
    if (slot.is_control) {
      bool has_t = branch_target(slot, t);
      switch (slot.op) {
        case Op::Bra:
          if (has_t) add(t);
          if (has_t && t <= int64_t(p)) loop_heads.insert(uint32_t(t));
          add(next);
          break;
        case Op::Call:
          if (has_t) add(t), loop_heads.insert(uint32_t(t));
          ret_sites.insert(next), add(next), uses_stack = true;
          break;
        case Op::PreRet:
          if (has_t) ret_sites.insert(uint32_t(t)), add(t);
          add(next), uses_stack = true;
          break;
        case Op::PreBrk:
          if (has_t) brk_sites.insert(uint32_t(t)), add(t);
          add(next), uses_stack = true;
          break;
        case Op::Ret:
        case Op::Brk: add(next), uses_stack = true; break;
        case Op::Trap: break;
        default: add(next); break;
      }
    } else if (!slot.exit) {
      add(next);
    }
  }
  for (uint32_t s : ret_sites) loop_heads.insert(s);
  for (uint32_t s : brk_sites) loop_heads.insert(s);
  return true;
}

bool Translator::run() {
  if (code.size() > opt.max_words) return fail("program too large");
  if (opt.entry >= code.size()) return fail("entry outside the code");
  if (opt.target.ptype != kCP && opt.target.ptype != kVP && opt.target.ptype != kGP) {
    err = "only compute, vertex and geometry programs are translated";
    return false;
  }
  if (!discover()) return false;
  std::set<uint32_t> barrier_kinds;
  for (auto& [p, in] : insns)
    if (in.op == Op::Bar) barrier_kinds.insert(barrier_descriptor(in));
  one_barrier_kind = barrier_kinds.size() == 1;
  cloned = clone_contexts();
  if (!cloned) {
    ctx_ids.clear();
    ctx_stacks.assign(1, Stack{});
    node_blocks.clear();
    for (auto& [p, in] : insns) node_blocks.emplace(std::pair{p, 0}, ir::kNoBlock);
    resolve_stack();
  }
  f = ir::Function{};
  f.name = "tesla";
  static const char* anames[8] = {"a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7"};
  for (auto* n : anames) f.add_var(n, Type::I32);
  for (unsigned i = 0; i < 4; ++i)
    for (char k : kFlagNames) f.add_var("c" + std::to_string(i) + k, Type::I1);
  f.add_var("exited", Type::I32);
  f.add_var("ctaid", Type::I32);
  f.add_var("local_base", Type::I64);
  f.add_var("abi_writer", Type::I32);
  for (unsigned i = 0; i < 128; ++i) f.add_var("r" + std::to_string(i), Type::I32);
  f.add_var("sp", Type::I32);
  f.add_var("lim_depth", Type::I32);
  for (unsigned i = 0; i < kStackDepth; ++i) f.add_var("stack" + std::to_string(i), Type::I32);
  f.add_var("popped", Type::I32);
  f.add_var("attr_base", Type::I64);
  f.add_var("barrier", Type::I32);
  f.add_var("mad_result", Type::I32);
  f.uniform_bytes = uniform_bytes(opt);

  ir::BlockId entry = f.add_block("entry");
  for (auto& [node, blk] : node_blocks) {
    char name[40];
    if (node.second == 0) std::snprintf(name, sizeof name, "w%x", node.first);
    else std::snprintf(name, sizeof name, "w%x.%d", node.first, node.second);
    blk = f.add_block(name);
  }
  b.set_block(entry);
  const V abi_first = V(f.insts.size());
  if (opt.launch_abi) write_abi_block();
  const V abi_end = V(f.insts.size());
  b.br(node_blocks.at({opt.entry, 0}));

  find_sources();
  private_state = opt.fresh_launch && opt.discard_state && barrier_kinds.empty();
  abi_stable = opt.launch_abi;
  for (auto& [a, in] : insns) abi_stable = abi_stable && in.op != Op::StS;
  std::set<std::pair<uint32_t, int>> absorbed;  // words translated inside an if-converted bra
  for (auto& [node, blk] : node_blocks) {
    if (absorbed.count(node)) {
      dead_blocks.insert(blk);
      continue;
    }
    uint32_t p = node.first;
    const Insn& in = insns.at(p);
    cur_ctx = node.second;
    pc = p;
    cur = &in;
    b.set_block(blk);
    if (loop_heads.count(p)) b.budget(1);
    uint32_t next = p + in.words;
    if (decode_errors.count(p)) {
      b.trap(b.i1(true), uint64_t(kTrapDecode) << 24 | p);
      b.ret();
      continue;
    }
    IfRegion r;
    unsigned budget = kIfConvertWords;
    if (in.op == Op::Bra && if_region(p, r, budget)) {
      if (!emit_if(r, ir::kNoValue)) return false;
      for (uint32_t w = next; w < r.cont; w += insns.at(w).words) absorbed.insert({w, cur_ctx});
      pc = p;
      b.br(block_at(r.cont));
      continue;
    }
    guard = in.pred == 15 ? ir::kNoValue : pred(in.pred_c, unsigned(in.pred));
    if (in.is_control) {
      if (!control(next)) return false;
      continue;
    }
    if (!emit_word(p, guard)) return false;
    if (in.exit) {  // acts on every active lane whatever the predicate
      end_lanes();
    } else {
      b.br(block_at(next));
    }
  }
  // Without `bar` only: with barriers the stated zeros reach the barrier
  // exits as stores of vars the code had not touched yet (reduce: 10% more IR).
  if (opt.fresh_launch && barrier_kinds.empty()) zero_written_vars();
  private_state = opt.fresh_launch && opt.discard_state && barrier_kinds.empty();
  // Nobody reads any lane's vars after such a run (and without `bar` no
  // later run of the warp reads them): the lanes outside the entry mask are
  // don't-care (ir::Function::unlaunched_lanes_free), so a var's store needs
  // no select of its old value and the x64 tiers copy a phi's lanes without
  // the launch mask.
  // (A Tesla compute function never runs in a draw: no draw-loop hooks.)
  f.unlaunched_lanes_free = private_state;
  f.no_draw_loop = true;
  if (private_state && opt.launch_abi) drop_unread_abi_block(abi_first, abi_end);
  mad_daz_flags();
  merge_straight_line();
  compact_vars();
  return true;
}

// TranslateOptions::fresh_launch: `set_var v, 0` at the start of the entry
// block for every var the code writes, except those the launch's init
// writes. A var only read keeps its load (the launch's zero).
void Translator::zero_written_vars() {
  std::vector<uint8_t> written(f.vars.size(), 0);
  for (const ir::Inst& in : f.insts)
    if (in.block != ir::kNoBlock && in.op == Opcode::SetVar) written[in.imm] = 1;
  for (uint32_t v : {kVarR, kVarCtaid, kVarLocalBase, kVarAbiWriter, kVarAttrBase, kVarBarrier}) written[v] = 0;
  std::vector<ir::ValueId> body = std::move(f.blocks[0].insts);
  f.blocks[0].insts.clear();
  b.set_block(0);
  for (uint32_t v = 0; v < f.vars.size(); ++v) {
    const Type t = f.vars[v].type;
    if (!written[v] || (t != Type::I1 && t != Type::I32 && t != Type::I64)) continue;
    b.set_var(v, b.constant(t, 0));
  }
  f.blocks[0].insts.insert(f.blocks[0].insts.end(), body.begin(), body.end());
}

// TranslateOptions::discard_state: the launch ABI block (the entry's
// stores of s[0 .. 0x10 + params) by the writer lane, values [first, end))
// is removed when nothing in the code reads s[] (loads and atomics of
// Space::Shared; the block's own stores aside). Shared memory lives only for
// its block's run, so a block nobody reads is unobservable; s[] stores of the
// program itself stay.
void Translator::drop_unread_abi_block(V first, V end) {
  for (V v = 0; v < V(f.insts.size()); ++v) {
    const ir::Inst& in = f.insts[v];
    if (in.block == ir::kNoBlock || (v >= first && v < end)) continue;
    if (in.op == Opcode::Load && ir::mem_space(in.attr) == ir::Space::Shared) return;
    if ((in.op == Opcode::AtomicRmw || in.op == Opcode::AtomicCas) && in.imm == uint64_t(ir::Space::Shared)) return;
  }
  std::vector<V>& entry = f.blocks[0].insts;
  entry.erase(std::remove_if(entry.begin(), entry.end(), [&](V v) { return v >= first && v < end; }), entry.end());
  for (V v = first; v < end; ++v) f.insts[v].block = ir::kNoBlock;
}

// Every warp's vars are zeroed and the used ones loaded and stored per
// launch: keep only the vars some get_var/set_var names (translate.h).
// With private_state, the vars zero_written_vars zeroes are private to the
// run (ir::Function::state_vars): they go after the state vars.
void Translator::compact_vars() {
  std::vector<uint8_t> used(f.vars.size(), 0), written(f.vars.size(), 0);
  for (const ir::Inst& in : f.insts) {
    if (in.block != ir::kNoBlock && (in.op == Opcode::GetVar || in.op == Opcode::SetVar)) used[in.imm] = 1;
    if (in.block != ir::kNoBlock && in.op == Opcode::SetVar) written[in.imm] = 1;
  }
  // What zero_written_vars() zeroes (the launch's init writes the others).
  auto is_private = [&](uint32_t v) {
    if (!private_state || !written[v]) return false;
    for (uint32_t k : {kVarR, kVarCtaid, kVarLocalBase, kVarAbiWriter, kVarAttrBase, kVarBarrier})
      if (v == k) return false;
    const Type t = f.vars[v].type;
    return t == Type::I1 || t == Type::I32 || t == Type::I64;
  };
  std::vector<uint32_t> remap(f.vars.size(), ~0u);
  std::vector<ir::Var> kept;
  for (int pass = 0; pass < 2; ++pass) {
    for (uint32_t v = 0; v < f.vars.size(); ++v)
      if (used[v] && is_private(v) == (pass == 1)) remap[v] = uint32_t(kept.size()), kept.push_back(f.vars[v]);
    if (pass == 0 && private_state) f.state_vars = uint32_t(kept.size());
  }
  for (ir::Inst& in : f.insts)
    if (in.block != ir::kNoBlock && (in.op == Opcode::GetVar || in.op == Opcode::SetVar)) in.imm = remap[in.imm];
  f.vars = std::move(kept);
}

// The body of a non-control word under `g` (its predicate ANDed in; kNoValue = always).
bool Translator::emit_word(uint32_t w, V g) {
  const Insn& in = insns.at(w);
  cur = &in;
  pc = w;
  postinc.clear();
  bool vote = in.op == Op::VoteAny || in.op == Op::VoteAll;
  if (in.pred == 0 && !vote) return true;
  guard = g;
  if (in.pred != 15) {
    V p = pred(in.pred_c, unsigned(in.pred));
    guard = g == ir::kNoValue ? p : b.and_(g, p);
  }
  if (!alu()) return false;
  for (auto& pi : postinc)
    if (!set_areg(pi.areg, b.iadd(areg(pi.areg), b.i32(uint32_t(pi.delta))))) return false;
  return true;
}

void Translator::find_sources() {
  sources[opt.entry].push_back(-1);
  for (auto& [a, in] : insns) {
    int64_t t = -1;
    if (in.is_control && branch_target(in, t) && t >= 0) sources[uint32_t(t)].push_back(a);
  }
  for (uint32_t s : ret_sites) sources[s].push_back(-1);
  for (uint32_t s : brk_sites) sources[s].push_back(-1);
}

bool Translator::plain(uint32_t w) const {
  const Insn& in = insns.at(w);
  return !decode_errors.count(w) && !in.is_control && !in.exit && in.op != Op::VoteAny && in.op != Op::VoteAll;
}

// Words [from, to) are plain, joinat or nested ifs ending inside, aligned on `to`.
bool Translator::if_span(uint32_t from, uint32_t to, unsigned& budget) {
  for (uint32_t w = from; w < to;) {
    auto it = insns.find(w);
    if (it == insns.end() || budget == 0) return false;
    --budget;
    const Insn& in = it->second;
    IfRegion inner;
    if (in.op == Op::Bra && if_region(w, inner, budget)) {
      if (inner.cont > to) return false;
      w = inner.cont;
      continue;
    }
    if (in.op != Op::JoinAt && !plain(w)) return false;
    w += in.words;
  }
  return true;
}

bool Translator::if_region(uint32_t p, IfRegion& r, unsigned& budget) {
  const Insn& in = insns.at(p);
  int64_t t = -1;
  if (in.op != Op::Bra || in.pred == 15 || in.pred == 0 || in.exit || decode_errors.count(p) ||
      !branch_target(in, t) || t <= int64_t(p + in.words) || !insns.count(uint32_t(t)))
    return false;
  r.bra = p;
  r.fall_from = p + in.words;
  r.fall_to = r.cont = uint32_t(t);
  r.taken_from = r.taken_to = uint32_t(t);
  // The last word of the fall-through side: an unconditional bra forward past t makes an if/else.
  uint32_t last = r.fall_from;
  for (uint32_t w = r.fall_from; w < r.fall_to && insns.count(w); w += insns.at(w).words) last = w;
  const Insn& li = insns.at(last);
  int64_t j = -1;
  if (li.op == Op::Bra && li.pred == 15 && !li.exit && !decode_errors.count(last) && branch_target(li, j) &&
      j > t && insns.count(uint32_t(j)) && last + li.words == r.fall_to) {
    r.fall_to = last;
    r.taken_to = r.cont = uint32_t(j);
  }
  // Single entry: everything strictly inside (p, cont) is entered from [p, cont) only.
  for (auto it = sources.upper_bound(p); it != sources.end() && it->first < r.cont; ++it)
    for (int64_t src : it->second)
      if (src < int64_t(p) || src >= int64_t(r.cont)) return false;
  return if_span(r.fall_from, r.fall_to, budget) && if_span(r.taken_from, r.taken_to, budget);
}

bool Translator::emit_span(uint32_t from, uint32_t to, V g) {
  for (uint32_t w = from; w < to;) {
    const Insn& in = insns.at(w);
    IfRegion inner;
    unsigned budget = kIfConvertWords;
    if (in.op == Op::Bra && if_region(w, inner, budget)) {
      if (!emit_if(inner, g)) return false;
      w = inner.cont;
      continue;
    }
    if (in.op != Op::JoinAt && !emit_word(w, g)) return false;
    w += in.words;
  }
  return true;
}

bool Translator::emit_if(const IfRegion& r, V outer) {
  const Insn& in = insns.at(r.bra);
  cur = &in;
  pc = r.bra;
  V taken = pred(in.pred_c, unsigned(in.pred));
  V fall = negate(taken);
  if (outer != ir::kNoValue) taken = b.and_(outer, taken), fall = b.and_(outer, fall);
  if (!emit_span(r.taken_from, r.taken_to, taken)) return false;
  // A bound check, `(p) bra #done` over the body with `done: exit`: the
  // lanes that branch end at `done` without running anything, and with
  // private state nothing reads their registers afterwards, so the body's
  // unpredicated register writes need not keep those lanes' old values
  // (one select less per write). Not when the body holds a quad op, which
  // reads other lanes' registers.
  const V saved = free_writes_under;
  if (outer == ir::kNoValue && private_state && r.taken_from == r.taken_to && lanes_exit_at(r.cont)) {
    bool cross_lane = false;
    for (uint32_t w = r.fall_from; w < r.fall_to; w += insns.at(w).words) cross_lane |= insns.at(w).op == Op::QuadOp;
    if (!cross_lane) free_writes_under = fall;
  }
  const bool ok = emit_span(r.fall_from, r.fall_to, fall);
  free_writes_under = saved;
  return ok;
}

// Word `w` ends every lane that reaches it and does nothing else: an `exit`
// marker on a nop (it acts on every active lane whatever its predicate).
bool Translator::lanes_exit_at(uint32_t w) const {
  auto it = insns.find(w);
  return it != insns.end() && !decode_errors.count(w) && it->second.exit && it->second.op == Op::Nop &&
         !it->second.is_control;
}

// Words are translated one block each; a block that ends in `br` to a
// block with no other predecessor absorbs it, so straight-line code is one
// block. The CFG keeps its shape (only single-entry, single-exit edges are
// contracted, so the schedule order of ir/cfg_order.h is unchanged); what
// changes is cost: in a divergent kernel every block gets an execution
// mask, an any() skip check and a masked write per var it sets.
void Translator::merge_straight_line() {
  f.compute_preds();
  const size_t n = f.blocks.size();
  std::vector<uint8_t> gone(n, 0);
  for (ir::BlockId d : dead_blocks) gone[d] = 1;  // never filled: nothing branches there
  for (ir::BlockId a = 0; a < n; ++a) {
    if (gone[a]) continue;
    for (;;) {
      ir::ValueId t = f.terminator(a);
      if (t == ir::kNoValue || f[t].op != Opcode::Br) break;
      ir::BlockId s = f.blocks[a].succs[0];
      if (s == a || s == 0 || gone[s] || f.blocks[s].preds.size() != 1) break;
      ir::Block& A = f.blocks[a];
      ir::Block& S = f.blocks[s];
      A.insts.pop_back();
      f[t].block = ir::kNoBlock;  // the br goes away
      for (ir::ValueId v : S.insts) f[v].block = a;
      A.insts.insert(A.insts.end(), S.insts.begin(), S.insts.end());
      A.succs = std::move(S.succs);
      S.insts.clear();
      S.succs.clear();
      gone[s] = 1;
    }
  }
  std::vector<ir::BlockId> remap(n, ir::kNoBlock);
  std::vector<ir::Block> kept;
  for (ir::BlockId i = 0; i < n; ++i)
    if (!gone[i]) remap[i] = ir::BlockId(kept.size()), kept.push_back(std::move(f.blocks[i]));
  for (ir::BlockId i = 0; i < kept.size(); ++i) {
    for (auto& s : kept[i].succs) s = remap[s];
    for (ir::ValueId v : kept[i].insts) f[v].block = i;
    kept[i].preds.clear();
  }
  f.blocks = std::move(kept);
  f.compute_preds();
}

}  // namespace gpurc::tesla::detail

namespace gpurc::tesla {

uint32_t uniform_bytes(const TranslateOptions& opt) { return opt.launch_abi ? 0x10 + opt.param_bytes : 0; }

bool translate(const std::vector<uint32_t>& code, const TranslateOptions& opt, ir::Function& out, std::string& err) {
  detail::Translator t(code, opt, out, err);
  if (!t.run()) return false;
  std::string v = ir::verify(out);
  if (!v.empty()) {
    err = "internal error: translated IR does not verify: " + v;
    return false;
  }
  return true;
}

bool translate(const std::vector<uint32_t>& code, uint32_t entry, const TranslateOptions& opt, ir::Function& out,
               std::string& err) {
  TranslateOptions o = opt;
  o.entry = entry;
  return translate(code, o, out, err);
}

TranslateOptions options_for(const BlockConfig& cfg, const Target& target, uint32_t entry) {
  TranslateOptions o;
  o.target = target;
  o.entry = entry;
  o.regs = cfg.regs;
  o.smem = std::max<uint32_t>(cfg.smem, 0x10 + uint32_t(cfg.params.size()));
  o.lmem = cfg.lmem;
  o.attr_bytes = cfg.attr_bytes;
  // The uniform block is the image of s[] the ABI writer stores: the
  // launch block, the parameters and any initial shared bytes after them.
  o.param_bytes = uint32_t(std::max<size_t>(cfg.params.size(), cfg.shared_image.size() > 0x10 ? cfg.shared_image.size() - 0x10 : 0));
  o.call_limit = cfg.call_limit;
  o.own_global_spaces = cfg.own_global_spaces;
  return o;
}

}  // namespace gpurc::tesla
