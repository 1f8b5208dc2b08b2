// PICA200 -> IR, StackMode::Runtime: the CALL/IF/LOOP stacks as per-lane
// vars (translate_impl.h).
//
// Every address has one block; the stacks are per-lane vars. Each stack is
// a shift register: slot 0 is the top, a push moves every slot one down, a
// pop one up, and an empty slot has the end address kEmptySlot (no address
// equals it, so the end checks need no depth). A stack is full when its
// last slot is in use. When an instruction's next address is one some
// frame could end at (`ends_`: every LOOP's target+1, IF's target, CALL's
// target+num among the words execution may reach), control goes through the shared `checks`
// block (the interpreter's LOOP, IF, CALL end checks as per-lane selects on
// the pc var) and the `dispatch` block (compares pc with every address
// control can reach that way); otherwise it branches to the next address's
// block directly.
#include <optional>
#include <string>
#include <vector>

#include "frontend/pica200/reachable.h"
#include "frontend/pica200/translate_impl.h"

namespace gpurc::pica::detail {

Translator::RtStack Translator::make_stack(const char* name, unsigned depth, std::initializer_list<const char*> fields,
                                           const uint32_t* reuse_last) {
  RtStack st;
  size_t fi = 0;
  for (const char* field : fields) {
    st.fields.emplace_back();
    for (unsigned k = 0; k < depth; ++k) {
      bool reuse = reuse_last && fi + 1 == fields.size();
      st.fields.back().push_back(reuse ? reuse_last[k]
                                       : f_.add_var(std::string(name) + std::to_string(k) + "." + field, ir::Type::I32));
    }
    ++fi;
  }
  return st;
}

// Traps with `reason` on the lanes whose stack is full.
void Translator::overflow_check(const RtStack& st, TrapReason reason, uint32_t here) {
  ir::ValueId full = b_.icmp(ir::IntPred::Ne, b_.get_var(st.fields[0].back()), b_.i32(kEmptySlot));
  b_.trap(full, trap_code(reason, here));
}

void Translator::push(const RtStack& st, std::initializer_list<ir::ValueId> values) {
  size_t fi = 0;
  for (ir::ValueId v : values) {
    const auto& slots = st.fields[fi++];
    for (size_t k = slots.size() - 1; k > 0; --k) b_.set_var(slots[k], b_.get_var(slots[k - 1]));
    b_.set_var(slots[0], v);
  }
}

// Pops the lanes where `cond` holds (kNoValue: all lanes).
void Translator::pop(const RtStack& st, ir::ValueId cond) {
  for (size_t fi = 0; fi < st.fields.size(); ++fi) {
    const auto& slots = st.fields[fi];
    for (size_t k = 0; k < slots.size(); ++k) {
      ir::ValueId below = k + 1 < slots.size() ? b_.get_var(slots[k + 1]) : b_.i32(fi == 0 ? kEmptySlot : 0);
      b_.set_var(slots[k], cond == ir::kNoValue ? below : b_.select(cond, below, b_.get_var(slots[k])));
    }
  }
}

// The block that runs address `a` (scheduled for emission on first use).
ir::BlockId Translator::addr_block(uint32_t a) {
  auto it = rt_block_.find(a);
  if (it != rt_block_.end()) return it->second;
  ir::BlockId b = f_.add_block();
  rt_block_.emplace(a, b);
  rt_work_.push_back(a);
  return b;
}

// Where control arriving at `a` goes: a's block, or through the end checks.
ir::BlockId Translator::arrive_block(uint32_t a) {
  if (!ends_.count(a)) return addr_block(a);
  auto it = rt_arrive_.find(a);
  if (it != rt_arrive_.end()) return it->second;
  ir::BlockId b = f_.add_block(), saved = b_.block();
  rt_arrive_.emplace(a, b);
  b_.set_block(b);
  b_.set_var(rt_pc_, b_.i32(a));
  b_.br(rt_checks_);
  b_.set_block(saved);
  dispatch_.insert(a);
  addr_block(a);
  return b;
}

// A reachable dynamic target: its address block is emitted and dispatched to.
void Translator::dynamic_target(uint32_t a) {
  dispatch_.insert(a);
  addr_block(a);
}

bool Translator::run_runtime(std::string& err) {
  make_vars();
  const unsigned nl = Interpreter::kLoopDepth;
  rt_pc_ = f_.add_var("pc", ir::Type::I32);
  rt_calls_ = make_stack("call", Interpreter::kCallDepth, {"end", "ret"});
  rt_ifs_ = make_stack("if", Interpreter::kIfDepth, {"end", "next"});
  rt_loops_ = make_stack("loop", nl, {"end", "start", "step", "remaining"}, loop_var_);
  // Every address a frame could end at, from every word execution may reach
  // (pica::append_reachable_code: only those can push a frame), so the
  // translation reads no other word, as the shader cache key assumes.
  std::vector<uint32_t> reach;
  append_reachable_code(p_.code, opt_.entry, reach);
  for (size_t i = 0; i + 3 <= reach.size(); i += 3 + reach[i + 2])
    for (uint32_t a = reach[i]; a < reach[i] + reach[i + 2]; ++a) {
      std::optional<Instr> in = decode(p_.code[a], a, nullptr);
      if (!in) continue;
      if (in->op == Op::LOOP) ends_.insert(uint32_t(in->target + 1));
      if (in->op == Op::IFU || in->op == Op::IFC) ends_.insert(in->target);
      if (in->op == Op::CALL || in->op == Op::CALLC || in->op == Op::CALLU) ends_.insert(uint32_t(in->target + in->num));
    }
  ir::BlockId entry = f_.add_block("entry");
  rt_checks_ = f_.add_block("checks");
  rt_dispatch_ = f_.add_block("dispatch");
  b_.set_block(entry);
  if (opt_.geometry) {
    b_.set_var(kVarEmitLatch, b_.i32(0));
    b_.set_var(kVarEmitCount, b_.i32(0));
  }
  for (const RtStack* st : {&rt_calls_, &rt_ifs_, &rt_loops_})
    for (size_t fi = 0; fi < st->fields.size(); ++fi)
      for (uint32_t v : st->fields[fi]) b_.set_var(v, b_.i32(fi == 0 ? kEmptySlot : 0));
  b_.set_var(rt_pc_, b_.i32(opt_.entry));
  // The entry address gets no end checks, as in the interpreter.
  b_.br(addr_block(opt_.entry));
  while (!rt_work_.empty()) {
    uint32_t a = rt_work_.back();
    rt_work_.pop_back();
    b_.set_block(rt_block_.at(a));
    if (!emit_address(a, err)) return false;
  }
  emit_checks();
  f_.compute_preds();
  return true;
}

// The end checks on the pc var (interp.cpp: LOOP, then IF, then CALL, one
// each), then the dispatch on it.
void Translator::emit_checks() {
  b_.set_block(rt_checks_);
  ir::ValueId pc = b_.get_var(rt_pc_);
  // LOOP: aL += step; count down; back to the start or pop.
  ir::ValueId hit = b_.icmp(ir::IntPred::Eq, top(rt_loops_, 0), pc);
  ir::ValueId al = b_.and_(b_.iadd(b_.get_var(kVarAL), top(rt_loops_, 2)), b_.i32(0xFF));
  b_.set_var(kVarAL, b_.select(hit, al, b_.get_var(kVarAL)));
  ir::ValueId left = b_.isub(top(rt_loops_, 3), b_.i32(1));
  b_.set_var(rt_loops_.fields[3][0], b_.select(hit, left, top(rt_loops_, 3)));
  ir::ValueId done = b_.and_(hit, b_.icmp(ir::IntPred::Eq, left, b_.i32(0)));
  ir::ValueId again = b_.and_(hit, b_.xor_(done, b_.i1(true)));
  pc = b_.select(again, top(rt_loops_, 1), pc);
  pop(rt_loops_, done);
  // IF: continue at the frame's next address.
  hit = b_.icmp(ir::IntPred::Eq, top(rt_ifs_, 0), pc);
  pc = b_.select(hit, top(rt_ifs_, 1), pc);
  pop(rt_ifs_, hit);
  // CALL: return.
  hit = b_.icmp(ir::IntPred::Eq, top(rt_calls_, 0), pc);
  pc = b_.select(hit, top(rt_calls_, 1), pc);
  pop(rt_calls_, hit);
  b_.set_var(rt_pc_, pc);
  b_.br(rt_dispatch_);
  // Dispatch: one switch over the addresses control can reach here, on the
  // index of the lane's pc among them (selects; not found = the last one).
  // One block, not a chain of compare-and-branch blocks: the branch is
  // divergent, and lower_divergence makes every block it spans one step of
  // its scheduler loop, so a chain cost up to one step (and one loop budget
  // charge) per address on every return.
  b_.set_block(rt_dispatch_);
  std::vector<uint32_t> targets(dispatch_.begin(), dispatch_.end());
  if (targets.empty()) {
    b_.ret();  // unreachable: nothing branches to checks
    return;
  }
  pc = b_.get_var(rt_pc_);
  ir::ValueId index = b_.i32(uint32_t(targets.size() - 1));
  std::vector<ir::BlockId> blocks(targets.size());
  for (size_t k = targets.size(); k-- > 0;) {
    blocks[k] = rt_block_.at(targets[k]);
    if (k + 1 < targets.size())
      index = b_.select(b_.icmp(ir::IntPred::Eq, pc, b_.i32(targets[k])), b_.i32(uint32_t(k)), index);
  }
  b_.switch_(index, blocks);
}

bool Translator::emit_address(uint32_t a, std::string& err) {
  std::optional<Instr> dec;
  if (static_fault(a, dec)) {
    b_.trap(b_.i1(true), trap_code(fault_reason(a, dec), a));
    b_.ret();
    return true;
  }
  const Instr& in = *dec;
  if (num_sources(in.op) > 0) {
    if (!emit_arith(in, a, err)) return false;
    rt_arrive(a + 1);
    return true;
  }
  ir::ValueId cond = flow_condition(in);
  auto brk = [&] {
    // Leave the innermost LOOP (its end address), or fall through outside one.
    ir::ValueId in_loop = b_.icmp(ir::IntPred::Ne, top(rt_loops_, 0), b_.i32(kEmptySlot));
    b_.set_var(rt_pc_, b_.select(in_loop, top(rt_loops_, 0), b_.i32(a + 1)));
    pop(rt_loops_, ir::kNoValue);  // an empty stack pops to empty
    dynamic_target(a + 1);
    rt_arrive_dynamic();
  };
  auto call = [&] {
    overflow_check(rt_calls_, TrapReason::CallOverflow, a);
    push(rt_calls_, {b_.i32(in.target + in.num), b_.i32(a + 1)});
    dynamic_target(a + 1);
    rt_arrive(in.target);
  };
  switch (in.op) {
    case Op::END: b_.ret(); return true;
    case Op::BREAK: brk(); return true;
    case Op::BREAKC: b_.cond_br(cond, side_block(brk), arrive_block(a + 1)); return true;
    case Op::CALL: call(); return true;
    case Op::CALLC: case Op::CALLU: b_.cond_br(cond, side_block(call), arrive_block(a + 1)); return true;
    case Op::IFU: case Op::IFC: {
      ir::BlockId taken = side_block([&] {
        overflow_check(rt_ifs_, TrapReason::IfOverflow, a);
        push(rt_ifs_, {b_.i32(in.target), b_.i32(in.target + in.num)});
        dynamic_target(uint32_t(in.target + in.num));
        rt_arrive(a + 1);
      });
      b_.cond_br(cond, taken, arrive_block(in.target));
      return true;
    }
    case Op::LOOP: {
      overflow_check(rt_loops_, TrapReason::LoopOverflow, a);
      uint32_t base = kUniformInt + 16 * (in.uniform & 3);
      b_.set_var(kVarAL, b_.load_uniform(ir::Type::I32, base + 4));
      push(rt_loops_, {b_.i32(in.target + 1), b_.i32(a + 1), b_.load_uniform(ir::Type::I32, base + 8),
                       b_.iadd(b_.load_uniform(ir::Type::I32, base), b_.i32(1))});
      dynamic_target(a + 1);
      dynamic_target(uint32_t(in.target + 1));
      rt_arrive(a + 1);
      return true;
    }
    case Op::JMPC: case Op::JMPU: b_.cond_br(cond, arrive_block(in.target), arrive_block(a + 1)); return true;
    case Op::SETEMIT: b_.set_var(kVarEmitLatch, b_.i32(emit_header(in.vtxid, in.prim, in.winding))); break;
    case Op::EMIT: emit_record(a); break;
    default: break;  // NOP
  }
  rt_arrive(a + 1);
  return true;
}

}  // namespace gpurc::pica::detail
