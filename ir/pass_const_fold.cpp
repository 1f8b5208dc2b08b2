// const_fold: pure per-lane ops whose operands are all constants are
// evaluated with ir::eval_lane, the same scalar semantics the interpreter and
// the backends use, so folding can never disagree with execution. Plus exact
// integer identities (and and/or idempotence and absorption, an `and` whose
// constant keeps every bit of a zero-extended operand), selects and
// branches on constants, and single-valued phis. No float identities: x + 0.0 is not x for x = -0.0, x * 1.0 is not x
// for a signalling NaN or under flush-to-zero flags.
#include "ir/pass_util.h"
#include "ir/passes.h"
#include "ir/scalar.h"

namespace gpurc::ir {

using namespace passutil;

namespace {

bool foldable(const Inst& in) {
  const OpInfo& info = op_info(in.op);
  if (!info.pure || info.cross_lane || in.args.empty()) return false;
  switch (in.op) {
    case Opcode::Phi: case Opcode::Const: case Opcode::Undef: case Opcode::LoadUniform: case Opcode::LoadUniformIdx:
    case Opcode::EntryMask: case Opcode::LaneId:
      return false;
    default:
      return true;
  }
}

}  // namespace

void const_fold(Function& f) {
  if (f.blocks.empty()) return;
  Replacements repl(f);
  auto rpo = reverse_post_order(f);
  auto old_preds = snapshot_preds(f);
  bool cfg_changed = false;
  auto is_const = [&](ValueId v) { return f.insts[v].op == Opcode::Const; };
  auto const_bits = [&](ValueId v) { return f.insts[v].imm & type_mask(f.insts[v].type); };

  for (BlockId b : rpo) {
    std::vector<ValueId> out;
    for (ValueId v : f.blocks[b].insts) {
      Inst& in = f.insts[v];
      for (auto& a : in.args) a = repl.find(a);
      const Type t = in.type;
      auto replace_with = [&](ValueId with) {
        repl.set(v, with);
        kill_inst(f, v);
      };
      auto make_const = [&](uint64_t bits) {
        in.op = Opcode::Const;
        in.args.clear();
        in.attr = 0;
        in.fflags = 0;
        in.imm = bits & type_mask(t);
      };
      bool all_const = true;
      for (ValueId a : in.args) all_const = all_const && is_const(a);

      if (in.op == Opcode::Phi) {
        ValueId same = kNoValue;
        bool single = !in.args.empty();
        for (ValueId a : in.args) {
          if (a == v || a == same) continue;
          if (same != kNoValue) single = false;
          same = a;
        }
        if (single && same != kNoValue) {
          replace_with(same);
          continue;
        }
      } else if (in.op == Opcode::Select) {
        if (is_const(in.args[0])) {
          replace_with(const_bits(in.args[0]) ? in.args[1] : in.args[2]);
          continue;
        }
        if (in.args[1] == in.args[2]) {
          replace_with(in.args[1]);
          continue;
        }
      } else if (all_const && foldable(in)) {
        std::vector<uint64_t> vals;
        for (ValueId a : in.args) vals.push_back(const_bits(a));
        LaneOp lo = lane_op(f, v);
        make_const(eval_lane(lo, vals.data()));
      } else if (is_int(t) && in.args.size() == 2) {
        const uint64_t ones = type_mask(t);
        ValueId a = in.args[0], c = in.args[1];
        if (ValueId same = and_or_absorbed(f, in, repl); same != kNoValue) {
          replace_with(same);
          continue;
        }
        // Exact integer identities with one constant operand.
        bool cr = is_const(c), cl = is_const(a);
        uint64_t kr = cr ? const_bits(c) : 0, kl = cl ? const_bits(a) : 0;
        switch (in.op) {
          case Opcode::IAdd: case Opcode::Or: case Opcode::Xor:
            if (cr && kr == 0) { replace_with(a); continue; }
            if (cl && kl == 0) { replace_with(c); continue; }
            if (in.op == Opcode::Or && ((cr && kr == ones) || (cl && kl == ones))) make_const(ones);
            break;
          case Opcode::ISub:
            if (cr && kr == 0) { replace_with(a); continue; }
            break;
          case Opcode::IMul:
            if (cr && kr == 1) { replace_with(a); continue; }
            if (cl && kl == 1) { replace_with(c); continue; }
            if ((cr && kr == 0) || (cl && kl == 0)) make_const(0);
            break;
          case Opcode::And:
            if (cr && kr == ones) { replace_with(a); continue; }
            if (cl && kl == ones) { replace_with(c); continue; }
            // A zero-extended value under a mask that keeps all its bits
            // (Tesla: the low half of a register loaded as u16).
            if (cr && f.insts[a].op == Opcode::Zext && !f.insts[a].args.empty() &&
                is_int(f.insts[f.insts[a].args[0]].type) &&
                (type_mask(f.insts[f.insts[a].args[0]].type) & ~kr) == 0) {
              replace_with(a);
              continue;
            }
            if ((cr && kr == 0) || (cl && kl == 0)) make_const(0);
            break;
          case Opcode::Shl: case Opcode::LShr: case Opcode::AShr:
            if (cr && kr == 0) { replace_with(a); continue; }
            break;
          default:
            break;
        }
      } else if ((in.op == Opcode::CondBr || in.op == Opcode::Switch) && is_const(in.args[0])) {
        auto& succs = f.blocks[b].succs;
        uint64_t k = const_bits(in.args[0]);
        BlockId to = in.op == Opcode::CondBr ? (k ? succs[0] : succs[1])
                                             : (k < succs.size() - 1 ? succs[k] : succs.back());
        in.op = Opcode::Br;
        in.args.clear();
        succs = {to};
        cfg_changed = true;
      }
      out.push_back(v);
    }
    f.blocks[b].insts = std::move(out);
  }
  repl.apply(f);
  if (cfg_changed) {
    remap_phis(f, old_preds);
    remove_unreachable_blocks(f);
  }
}

}  // namespace gpurc::ir
