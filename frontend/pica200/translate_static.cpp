// PICA200 -> IR, StackMode::Static: the CALL/IF/LOOP stacks expanded at
// translate time into (address, stack contents) nodes (translate_impl.h).
#include <algorithm>
#include <set>
#include <string>

#include "frontend/pica200/translate_impl.h"

namespace gpurc::pica::detail {

std::vector<uint32_t> node_key(const Node& n) {
  std::vector<uint32_t> k{uint32_t(n.kind), n.pc, uint32_t(n.st.calls.size()), uint32_t(n.st.ifs.size())};
  for (auto& c : n.st.calls) k.insert(k.end(), {c.end, c.ret});
  for (auto& i : n.st.ifs) k.insert(k.end(), {i.end, i.next});
  for (auto& l : n.st.loops) k.insert(k.end(), {l.start, l.end, l.ireg});
  return k;
}

bool Translator::run_static(std::string& err) {
  make_vars();
  std::fill(std::begin(loop_step_var_), std::end(loop_step_var_), kNoStepVar);
  if (!opt_.geometry) {
    // The LOOP counters and steps are read only between their LOOP and its
    // end, each written at the LOOP first: private to the run
    // (Function::state_vars), so nothing loads them at entry or stores them
    // at an exit, and a counted loop's counter decides its branch only.
    // (Geometry shaders keep them: the emit vars after them are state.)
    static_assert(kVarLoopRemaining == kNumStateVars, "the private vars follow the state vars");
    for (unsigned d = 0; d < Interpreter::kLoopDepth; ++d)
      loop_step_var_[d] = f_.add_var("loop" + std::to_string(d) + ".step", ir::Type::I32);
    f_.state_vars = kNumStateVars;
    // The draw contract (TranslateOptions::draw_only): r0-r15, a0, aL and
    // cmp are private too; the entry states their zero below.
    if (opt_.draw_only) {
      static_assert(kVarTemp + 64 == kVarA0X && kVarCmpY + 1 == kNumStateVars, "the registers after o15 are r, a0, aL, cmp");
      f_.state_vars = kVarTemp;
    }
  }
  intern(Node{NodeKind::Exec, opt_.entry, {}});
  // Phase 1: the node graph.
  for (size_t n = 0; n < nodes_.size(); ++n) {
    Edge e;
    if (!successors(uint32_t(n), e, err)) return false;
    edges_.push_back(e);
    if (nodes_.size() > kMaxNodes) {
      too_complex_ = true;
      err = "pica200: control flow too complex to expand (more than " + std::to_string(kMaxNodes) +
            " (address, stack) states) near " + hex_addr(nodes_[n].pc);
      return false;
    }
  }
  // Phase 2: blocks. A node starts a block unless it has exactly one
  // predecessor and that predecessor falls into it unconditionally.
  std::vector<uint32_t> preds(nodes_.size(), 0);
  std::vector<uint8_t> via_goto(nodes_.size(), 0);
  for (auto& e : edges_) {
    if (e.exit == Exit::Goto) { ++preds[e.succ[0]]; via_goto[e.succ[0]] = 1; }
    if (e.exit == Exit::Branch) { ++preds[e.succ[0]]; ++preds[e.succ[1]]; }
  }
  // A separate entry block, so a jump back to the entry address is an
  // ordinary edge (the entry block of an IR function has no predecessors).
  ir::BlockId entry = f_.add_block("entry");
  // Room for the IR up front (a node makes ~8 IR instructions in the
  // reference shaders): no reallocation moves every Inst as the list grows.
  f_.insts.reserve(f_.insts.size() + 8 * nodes_.size() + 32);
  block_of_.assign(nodes_.size(), ir::kNoBlock);
  for (uint32_t n = 0; n < nodes_.size(); ++n) {
    bool leader = n == 0 || preds[n] != 1 || !via_goto[n];
    if (leader) block_of_[n] = f_.add_block();
  }
  for (uint32_t n = 0; n < nodes_.size(); ++n) {
    if (block_of_[n] == ir::kNoBlock) continue;
    b_.set_block(block_of_[n]);
    uint32_t cur = n;
    while (true) {
      if (!emit_node(cur, err)) return false;
      const Edge& e = edges_[cur];
      if (e.exit == Exit::Goto && block_of_[e.succ[0]] == ir::kNoBlock) {
        cur = e.succ[0];
        continue;
      }
      break;
    }
  }
  b_.set_block(entry);
  if (!opt_.geometry && opt_.draw_only) {
    // A fresh unit's registers are zero: each one the code reads is set so
    // at the entry (SSA then gives a read before any write the constant).
    std::vector<uint8_t> read(kNumStateVars - kVarTemp, 0);
    for (const ir::Inst& in : f_.insts)
      if (in.block != ir::kNoBlock && in.op == ir::Opcode::GetVar && in.imm >= kVarTemp && in.imm < kNumStateVars)
        read[in.imm - kVarTemp] = 1;
    for (uint32_t v = kVarTemp; v < kNumStateVars; ++v)
      if (read[v - kVarTemp]) b_.set_var(v, b_.constant(f_.vars[v].type, 0));
  }
  if (opt_.geometry) {
    // A fresh GsState: nothing latched, nothing emitted.
    b_.set_var(kVarEmitLatch, b_.i32(0));
    b_.set_var(kVarEmitCount, b_.i32(0));
  }
  b_.br(block_of_[0]);
  f_.compute_preds();
  // Only worth it when the expansion duplicates code: runtime stacks give
  // every address one copy.
  std::set<uint32_t> pcs;
  for (const Node& n : nodes_) pcs.insert(n.pc);
  if (f_.insts.size() > kMaxStaticInsts && nodes_.size() > 2 * pcs.size()) {
    too_complex_ = true;
    err = "pica200: static control-flow expansion too large (" + std::to_string(f_.insts.size()) +
          " IR instructions, more than " + std::to_string(kMaxStaticInsts) + ")";
    return false;
  }
  return true;
}

uint32_t Translator::intern(Node n) {
  // Nodes with empty stacks (all of a straight-line shader's) are found by
  // (kind, pc) in a flat table: no key vector, no hash.
  if (n.st.calls.empty() && n.st.ifs.empty() && n.st.loops.empty() && n.pc <= p_.code.size()) {
    const size_t slot = 2 * size_t(n.pc) + (n.kind == NodeKind::LoopEnd);
    // Grown as addresses are reached (zeroed: no node yet), not sized for the whole program memory.
    if (slot >= flat_index_.size()) flat_index_.resize(slot + 128);
    if (flat_index_[slot] != 0) return flat_index_[slot] - 1;
    const uint32_t id = uint32_t(nodes_.size());
    nodes_.push_back(std::move(n));
    flat_index_[slot] = id + 1;
    return id;
  }
  auto key = node_key(n);
  auto it = index_.find(key);
  if (it != index_.end()) return it->second;
  uint32_t id = uint32_t(nodes_.size());
  nodes_.push_back(std::move(n));
  index_.emplace(std::move(key), id);
  return id;
}

// The IF and CALL end checks (one each, in that order) for `next`.
uint32_t Translator::after_loop_check(uint32_t next, Stacks st) {
  if (!st.ifs.empty() && next == st.ifs.back().end) {
    next = st.ifs.back().next;
    st.ifs.pop_back();
  }
  if (!st.calls.empty() && next == st.calls.back().end) {
    next = st.calls.back().ret;
    st.calls.pop_back();
  }
  return intern(Node{NodeKind::Exec, next, std::move(st)});
}

// All end checks for control arriving at `next`.
uint32_t Translator::arrive(uint32_t next, Stacks st) {
  if (!st.loops.empty() && next == st.loops.back().end) return intern(Node{NodeKind::LoopEnd, next, std::move(st)});
  return after_loop_check(next, std::move(st));
}

bool Translator::successors(uint32_t id, Edge& e, std::string& err) {
  const Node n = nodes_[id];  // copy: intern() may grow nodes_
  if (n.kind == NodeKind::LoopEnd) {
    Stacks out = n.st, back = n.st;
    uint32_t start = back.loops.back().start;
    out.loops.pop_back();
    e.exit = Exit::Branch;
    e.succ[0] = after_loop_check(n.pc, std::move(out));   // counter reached 0
    e.succ[1] = after_loop_check(start, std::move(back));
    return true;
  }
  std::optional<Instr> dec;
  const bool faults = fault_of(n, dec);
  // emit_node takes the decoded instruction and the verdict from here (nodes are visited in id order).
  node_instr_.resize(id + 1);
  node_fault_.resize(id + 1, 0);
  node_instr_[id] = dec;
  node_fault_[id] = faults;
  if (faults) {
    e.exit = Exit::Return;
    return true;
  }
  const Instr& in = *dec;
  const uint32_t here = n.pc;
  auto go = [&](uint32_t next, Stacks st) {
    e.exit = Exit::Goto;
    e.succ[0] = arrive(next, std::move(st));
  };
  auto branch = [&](uint32_t t_next, Stacks t_st, uint32_t f_next, Stacks f_st) {
    e.exit = Exit::Branch;
    e.succ[0] = arrive(t_next, std::move(t_st));
    e.succ[1] = arrive(f_next, std::move(f_st));
  };
  Stacks st = n.st;
  switch (in.op) {
    case Op::END: e.exit = Exit::Return; return true;
    case Op::BREAK:
    case Op::BREAKC: {
      Stacks taken = st;
      uint32_t tnext = here + 1;
      if (!taken.loops.empty()) {
        tnext = taken.loops.back().end;
        taken.loops.pop_back();
      }
      if (in.op == Op::BREAK) go(tnext, std::move(taken));
      else branch(tnext, std::move(taken), here + 1, st);
      return true;
    }
    case Op::CALL:
    case Op::CALLC:
    case Op::CALLU: {
      Stacks taken = st;
      taken.calls.push_back({uint32_t(in.target + in.num), here + 1});
      if (in.op == Op::CALL) go(in.target, std::move(taken));
      else branch(in.target, std::move(taken), here + 1, st);
      return true;
    }
    case Op::IFU:
    case Op::IFC: {
      Stacks taken = st;
      taken.ifs.push_back({in.target, uint32_t(in.target + in.num)});
      branch(here + 1, std::move(taken), in.target, st);
      return true;
    }
    case Op::LOOP:
      st.loops.push_back({here + 1, uint32_t(in.target + 1), uint32_t(in.uniform & 3)});
      go(here + 1, std::move(st));
      return true;
    case Op::JMPC:
    case Op::JMPU: branch(in.target, st, here + 1, st); return true;
    default: go(here + 1, std::move(st)); return true;
  }
}

bool Translator::emit_node(uint32_t id, std::string& err) {
  const Node& n = nodes_[id];
  const Edge& e = edges_[id];
  if (n.kind == NodeKind::LoopEnd) {
    const LoopFrame& l = n.st.loops.back();
    uint32_t depth = uint32_t(n.st.loops.size() - 1);
    ir::ValueId step = loop_step_var_[depth] != kNoStepVar
                           ? b_.get_var(loop_step_var_[depth])
                           : b_.load_uniform(ir::Type::I32, kUniformInt + 16 * l.ireg + 8);
    ir::ValueId al = b_.iadd(b_.get_var(kVarAL), step);
    b_.set_var(kVarAL, b_.and_(al, b_.i32(0xFF)));
    ir::ValueId left = b_.isub(b_.get_var(loop_var_[depth]), b_.i32(1));
    b_.set_var(loop_var_[depth], left);
    finish(e, b_.icmp(ir::IntPred::Eq, left, b_.i32(0)));
    return true;
  }
  const std::optional<Instr>& dec = node_instr_[id];
  if (node_fault_[id]) {
    b_.trap(b_.i1(true), trap_code(fault_reason(n.pc, dec), n.pc));
    b_.ret();
    return true;
  }
  const Instr& in = *dec;
  if (num_sources(in.op) > 0) {
    if (!emit_arith(in, n.pc, err)) return false;
    finish(e, ir::kNoValue);
    return true;
  }
  ir::ValueId cond = flow_condition(in);
  switch (in.op) {
    case Op::LOOP: {
      uint32_t base = kUniformInt + 16 * (in.uniform & 3);
      b_.set_var(loop_var_[n.st.loops.size()],
                 b_.iadd(b_.load_uniform(ir::Type::I32, base), b_.i32(1)));
      b_.set_var(kVarAL, b_.load_uniform(ir::Type::I32, base + 4));
      if (loop_step_var_[n.st.loops.size()] != kNoStepVar)
        b_.set_var(loop_step_var_[n.st.loops.size()], b_.load_uniform(ir::Type::I32, base + 8));
      break;
    }
    case Op::SETEMIT: b_.set_var(kVarEmitLatch, b_.i32(emit_header(in.vtxid, in.prim, in.winding))); break;
    case Op::EMIT: emit_record(n.pc); break;
    default: break;  // NOP, END, BREAK, CALL
  }
  finish(e, cond);
  return true;
}

// The node's terminator, or nothing when the next node continues this block.
void Translator::finish(const Edge& e, ir::ValueId cond) {
  switch (e.exit) {
    case Exit::Return: b_.ret(); break;
    case Exit::Goto:
      if (block_of_[e.succ[0]] != ir::kNoBlock) b_.br(block_of_[e.succ[0]]);
      break;
    case Exit::Branch: b_.cond_br(cond, block_of_[e.succ[0]], block_of_[e.succ[1]]); break;
  }
}

}  // namespace gpurc::pica::detail
