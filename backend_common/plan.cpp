#include "backend_common/plan.h"

#include <algorithm>

namespace gpurc::backend {

using namespace ir;

bool is_strip_op(const Inst& in) {
  if (in.op == Opcode::LoadVar || in.op == Opcode::StoreVar) return true;
  const OpInfo& info = op_info(in.op);
  return info.pure && !info.cross_lane && in.op != Opcode::Phi;
}

ValueId itof_narrow_source_of_itof(const Function& f, ValueId v) {
  const Inst& in = f.insts[v];
  if (in.op != Opcode::IToF || in.type != ir::Type::F32 || in.args.size() != 1 || in.args[0] >= f.insts.size())
    return kNoValue;
  const Inst& ext = f.insts[in.args[0]];
  if ((ext.op != Opcode::Zext && ext.op != Opcode::Sext) || ext.type != ir::Type::I64 || ext.args.size() != 1 ||
      ext.args[0] >= f.insts.size())
    return kNoValue;
  ir::Type xt = f.insts[ext.args[0]].type;
  if (ir::is_float(xt) || lane_bytes(xt) != 4 || xt == ir::Type::Void) return kNoValue;
  // unsigned conversion of a sign-extended negative value is not the value of x
  if (ext.op == Opcode::Sext && Sign(in.attr) == Sign::Unsigned) return kNoValue;
  return ext.args[0];
}

namespace {

// May operand `i` of `phi` (from predecessor B) be stored to the phi's slot
// where it is defined, instead of being copied on the edge B -> phi's block?
// Only when that edge is B's one way out (so the early write is the copy,
// done sooner) and nothing can see the phi's slot between the write and the
// edge: no instruction of B reads the phi, and no phi of the target takes it
// on that edge (the parallel copy must read the old value). The operand is a
// 32-bit strip op of B (a register at its definition; the launch mask is
// applied there, as the edge copy does).
bool direct_phi_write(const Function& f, const Plan& p, ValueId phi, size_t i) {
  const Inst& in = f.insts[phi];
  BlockId to = in.block;
  if (i >= p.preds[to].size()) return false;
  BlockId from = p.preds[to][i];
  ValueId a = in.args[i];
  const Inst& ai = f.insts[a];
  if (a == phi || ai.block != from || ai.op == Opcode::Undef || lane_bytes(ai.type) != 4 || lane_bytes(in.type) != 4)
    return false;
  if (p.segment_of[a] < 0 || !p.segments[p.segment_of[a]].strip) return false;
  if (f.blocks[from].succs.size() != 1) return false;
  for (ValueId u : f.blocks[from].insts)
    for (ValueId x : f.insts[u].args)
      if (x == phi) return false;
  for (ValueId q : f.blocks[to].insts) {
    const Inst& qi = f.insts[q];
    if (qi.op != Opcode::Phi) break;
    if (i < qi.args.size() && qi.args[i] == phi) return false;
  }
  return true;
}

bool is_subnormal_f32(uint64_t bits) {
  uint32_t b = uint32_t(bits);
  return (b & 0x7F800000u) == 0 && (b & 0x007FFFFFu) != 0;
}

// The greatest fixed point of the rules in plan.h: every candidate starts as
// true and loses the fact when an operand lacks it, so loop phis keep it
// when every value around the loop does.
std::vector<uint8_t> no_subnormal_values(const Function& f) {
  const size_t n = f.insts.size();
  std::vector<uint8_t> ok(n, 0);
  auto candidate = [&](const Inst& in) {
    if (in.block == kNoBlock) return false;
    bool w32 = in.type == ir::Type::F32 || in.type == ir::Type::I32;
    switch (in.op) {
      case Opcode::FAdd: case Opcode::FSub: case Opcode::FMul: case Opcode::FFma: case Opcode::FMad:
      case Opcode::FMin: case Opcode::FMax: case Opcode::FSqrt: case Opcode::FRcp:
        return in.type == ir::Type::F32 && (in.fflags & ir::ff::FtzOut);
      case Opcode::IToF: return in.type == ir::Type::F32;  // |int| >= 1 or 0
      case Opcode::Const: return w32 && !is_subnormal_f32(in.imm);
      case Opcode::Bitcast: case Opcode::FNeg: case Opcode::FAbs: case Opcode::Select: case Opcode::Phi:
        return w32;
      case Opcode::Xor: case Opcode::And:
        return in.type == ir::Type::I32 && in.args.size() == 2;
      default: return false;
    }
  };
  // The candidates that hold the fact through their operands (the rest keep
  // it whatever their operands): the fixed point below walks only these.
  std::vector<ValueId> derived;
  for (ValueId v = 0; v < n; ++v) {
    const Inst& in = f.insts[v];
    ok[v] = candidate(in);
    if (!ok[v]) continue;
    switch (in.op) {
      case Opcode::Bitcast: case Opcode::FNeg: case Opcode::FAbs: case Opcode::Select: case Opcode::Phi:
      case Opcode::Xor: case Opcode::And:
        derived.push_back(v);
        break;
      default: break;
    }
  }
  auto has = [&](ValueId a) { return a < n && ok[a]; };
  auto const_is = [&](ValueId a, uint32_t bits) {
    return a < n && f.insts[a].op == Opcode::Const && uint32_t(f.insts[a].imm) == bits;
  };
  for (bool changed = !derived.empty(); changed;) {
    changed = false;
    for (ValueId v : derived) {
      if (!ok[v]) continue;
      const Inst& in = f.insts[v];
      bool keep = true;
      switch (in.op) {
        case Opcode::Bitcast: case Opcode::FNeg: case Opcode::FAbs:
          keep = !in.args.empty() && has(in.args[0]) && bit_width(f.insts[in.args[0]].type) == 32;
          break;
        case Opcode::Select: keep = in.args.size() == 3 && has(in.args[1]) && has(in.args[2]); break;
        case Opcode::Phi:
          for (ValueId a : in.args) keep = keep && has(a);
          break;
        case Opcode::Xor:  // sign flip
          keep = (has(in.args[0]) && const_is(in.args[1], 0x80000000u)) ||
                 (has(in.args[1]) && const_is(in.args[0], 0x80000000u));
          break;
        case Opcode::And:  // sign clear
          keep = (has(in.args[0]) && const_is(in.args[1], 0x7FFFFFFFu)) ||
                 (has(in.args[1]) && const_is(in.args[0], 0x7FFFFFFFu));
          break;
        default: break;
      }
      if (!keep) {
        ok[v] = 0;
        changed = true;
      }
    }
  }
  return ok;
}

// Single-block loops that loops.cpp can run strip by strip (see StripLoop).
// Strip ops touch only their own strip's lanes (vars included), so running
// every iteration of one strip before the next strip gives the same result as
// today's iteration-outer order; budget ops must come first so that a
// watchdog fault happens between two whole iterations, and no op of the body
// may fault (load_uniform can), since a fault in the middle of a strip-outer
// run would leave the other strips at a different iteration.
void find_strip_loops(const Function& f, Plan& p) {
  p.strip_loop_of.assign(f.blocks.size(), -1);
  for (BlockId b = 0; b < f.blocks.size(); ++b) {
    ValueId t = f.terminator(b);
    if (t == kNoValue || f.insts[t].op != Opcode::CondBr || f.insts[t].args.size() != 1) continue;
    const auto& succs = f.blocks[b].succs;
    if (succs.size() != 2 || (succs[0] == b) == (succs[1] == b)) continue;
    ValueId c = f.insts[t].args[0];
    if (c >= f.insts.size() || f.insts[c].block != b || f.insts[c].type != ir::Type::I1 || p.segment_of[c] < 0 ||
        !p.segments[p.segment_of[c]].strip)
      continue;
    StripLoop l;
    l.block = b;
    l.repeat_if_true = succs[0] == b;
    l.exit_succ = l.repeat_if_true ? 1 : 0;
    auto back = std::find(p.preds[b].begin(), p.preds[b].end(), b);
    if (back == p.preds[b].end()) continue;
    l.back_operand = size_t(back - p.preds[b].begin());
    bool ok = true, phis = false, strip_ops = false;
    for (ValueId v : f.blocks[b].insts) {
      const Inst& in = f.insts[v];
      if (in.op == Opcode::Phi) {
        phis = true;
        ok = ok && lane_bytes(in.type) == 4 && in.args.size() > l.back_operand;
      } else if (op_info(in.op).terminator) {
        continue;
      } else if (in.op == Opcode::Budget) {
        ok = ok && !strip_ops;
        l.budgets.push_back(v);
      } else {
        // load_uniform faults only when its offset is out of range (then at
        // every execution) or there is no uniform block (then at its first
        // execution, which is the first strip's first iteration in both
        // orders, after the same budget charge): in range, it may stay.
        const bool uniform_in_range = in.op != Opcode::LoadUniform ||
                                      (in.imm <= f.uniform_bytes && f.uniform_bytes - in.imm >= lane_bytes(in.type));
        ok = ok && is_strip_op(in) && uniform_in_range;
        strip_ops = true;
      }
    }
    if (!ok || !phis || !strip_ops) continue;
    p.strip_loop_of[b] = int32_t(p.strip_loops.size());
    p.strip_loops.push_back(std::move(l));
  }
}

}  // namespace

Plan make_plan(const Function& f) {
  Plan p;
  size_t n = f.insts.size();
  p.segment_of.assign(n, -1);
  p.position.assign(n, -1);
  p.last_use.assign(n, -1);
  p.escapes.assign(n, 0);
  p.block_segments.resize(f.blocks.size());
  // Same order as Function::compute_preds, which defines phi operand order.
  p.preds.resize(f.blocks.size());
  for (BlockId b = 0; b < f.blocks.size(); ++b)
    for (BlockId s : f.blocks[b].succs) p.preds[s].push_back(b);

  for (BlockId b = 0; b < f.blocks.size(); ++b) {
    int32_t open = -1;  // strip segment being filled
    for (ValueId v : f.blocks[b].insts) {
      const Inst& in = f.insts[v];
      if (in.op == Opcode::Phi || op_info(in.op).terminator) continue;
      if (is_strip_op(in)) {
        if (open < 0) {
          open = int32_t(p.segments.size());
          p.segments.push_back(Segment{b, true, {}});
          p.block_segments[b].push_back(uint32_t(open));
        }
        p.segment_of[v] = open;
        p.position[v] = int32_t(p.segments[open].ops.size());
        p.segments[open].ops.push_back(v);
      } else {
        open = -1;
        int32_t s = int32_t(p.segments.size());
        p.segments.push_back(Segment{b, false, {v}});
        p.block_segments[b].push_back(uint32_t(s));
        p.segment_of[v] = s;
        p.position[v] = 0;
      }
    }
  }
  p.direct_phis.resize(n);
  for (ValueId v = 0; v < n; ++v) {
    const Inst& in = f.insts[v];
    if (in.block == kNoBlock) continue;
    if (in.op == Opcode::Phi) {
      for (size_t i = 0; i < in.args.size(); ++i) {
        ValueId a = in.args[i];
        if (a >= n) continue;
        if (direct_phi_write(f, p, v, i)) p.direct_phis[a].push_back(v);
        else p.escapes[a] = 1;
      }
      continue;
    }
    // The operands, and the narrow source an itof reads instead (no copy of
    // the operand list: this runs for every instruction of every compile).
    auto read = [&](ValueId a) {
      if (a >= n) return;
      int32_t seg = p.segment_of[v];
      if (seg >= 0 && seg == p.segment_of[a] && p.segments[seg].strip) {
        if (p.position[v] > p.last_use[a]) p.last_use[a] = p.position[v];
      } else {
        p.escapes[a] = 1;
      }
    };
    for (ValueId a : in.args) read(a);
    if (ValueId x = itof_narrow_source(f, v); x != kNoValue) read(x);
  }
  p.no_subnormal = no_subnormal_values(f);
  // Values of warp ops and phis are produced in the frame.
  for (ValueId v = 0; v < n; ++v) {
    const Inst& in = f.insts[v];
    if (in.block == kNoBlock) continue;
    if (in.op == Opcode::Phi) p.escapes[v] = 1;
  }
  find_strip_loops(f, p);
  return p;
}

EdgeCopies edge_copies(const Function& f, const Plan& plan, BlockId from, size_t succ_index) {
  const Block& fb = f.blocks[from];
  BlockId to = fb.succs[succ_index];
  // A block may branch to the same target twice (cond_br x, B, B): the n-th
  // such successor is the n-th occurrence of `from` among the target's preds.
  size_t occurrence = 0;
  for (size_t i = 0; i < succ_index; ++i)
    if (fb.succs[i] == to) ++occurrence;
  const auto& preds = plan.preds[to];
  size_t idx = preds.size();
  for (size_t i = 0, seen = 0; i < preds.size(); ++i)
    if (preds[i] == from && seen++ == occurrence) {
      idx = i;
      break;
    }
  EdgeCopies out;
  for (ValueId p : f.blocks[to].insts) {
    const Inst& pi = f.insts[p];
    if (pi.op != Opcode::Phi) break;
    if (idx >= pi.args.size()) {
      out.phi_without_operand = p;
      return out;
    }
    ValueId a = pi.args[idx];
    if (a == p) continue;
    if (f.insts[a].block == from &&
        std::find(plan.direct_phis[a].begin(), plan.direct_phis[a].end(), p) != plan.direct_phis[a].end())
      continue;  // written where a was defined
    if (f.insts[a].op == Opcode::Phi && f.insts[a].block == to) out.reads_phi = true;
    out.copies.emplace_back(p, a);
  }
  return out;
}

}  // namespace gpurc::backend
