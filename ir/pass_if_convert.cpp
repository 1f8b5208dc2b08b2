// if_convert_divergent: keeps divergence local. A divergent `cond_br` whose
// region is a short if / if-else (a "triangle" or "diamond" of blocks that only
// compute and write vars) is turned into code without a divergent branch, so
// one IFC no longer sends the whole function through masked lowering
// (docs/passes.md, "if_convert_divergent"):
//
//  - small arms (at most kSelectLimit operations and var writes together): both arms run
//    for every lane, their var writes keep the old value where the lane did
//    not take the arm (`set_var v, select(c, x, get_var v)`), ops with a mask
//    operand (trap, votes) get the arm's condition ANDed in;
//  - larger arms (up to kVoteLimit): a vote picks the path at run time. When
//    every active lane agrees (`all(c)` / `!any(c)`), the arm runs unmasked as
//    it was; only a warp whose lanes disagree runs the select form of both
//    arms (a copy of them). Both votes are uniform branches.
//
// Runs on pre-SSA IR after analyze_uniformity (which marks the divergent
// branches) and before lower_divergence. Afterwards the blocks exchange data
// through vars again (demote_cross_block_values) and the branch uniformity is
// recomputed, so a function whose only divergent branches were converted
// takes the uniform scheme of lower_divergence (its loops stay plain loops).
#include <functional>
#include <unordered_map>

#include "ir/builder.h"
#include "ir/pass_util.h"
#include "ir/passes.h"

namespace gpurc::ir {

using namespace passutil;

namespace {

// Arms costing up to this much (both together; cost() counts operations
// and var writes) run for every lane: a vote (two warp ops, two branches
// and values through the frame across the split blocks) costs about as much.
constexpr size_t kSelectLimit = 48;
// Above this the select copy would make the code too large; lower_divergence
// masks such regions.
constexpr size_t kVoteLimit = 512;

// Ops an arm may hold: what runs correctly for every lane once var writes and
// mask operands carry the arm's condition. Memory ops and atomics stay out (a
// warp op per access even when no lane takes the arm), as do cross-lane ops
// without a mask operand (they read lanes the arm's lanes could not see) and
// budget (it would charge the watchdog for an arm no lane takes).
bool convertible_op(const Inst& in) {
  switch (in.op) {
    case Opcode::GetVar: case Opcode::SetVar: case Opcode::Trap:
    case Opcode::Ballot: case Opcode::Any: case Opcode::All: case Opcode::Reduce:
    case Opcode::ScanIncl: case Opcode::ScanExcl:
      return true;
    case Opcode::Phi:
      return false;
    default: {
      const OpInfo& info = op_info(in.op);
      return info.pure && !info.cross_lane;
    }
  }
}

struct Arm {
  bool ok = false;
  BlockId join = kNoBlock;
  size_t size = 0;
};

class IfConverter {
 public:
  explicit IfConverter(Function& f) : f_(f) {}

  bool run() {
    bool any = false;
    for (bool changed = true; changed;) {
      changed = false;
      f_.compute_preds();
      for (BlockId h = 0; h < f_.blocks.size(); ++h) {
        if (try_convert(h)) {
          changed = any = true;
          f_.compute_preds();
        }
      }
    }
    return any;
  }

 private:
  Function& f_;

  Arm arm(BlockId x, BlockId head) const {
    Arm a;
    if (x == head || x == 0) return a;
    const Block& b = f_.blocks[x];
    if (b.preds.size() != 1 || b.preds[0] != head || b.insts.empty()) return a;
    ValueId t = b.insts.back();
    if (f_.insts[t].op != Opcode::Br || b.succs.size() != 1) return a;
    for (size_t i = 0; i + 1 < b.insts.size(); ++i)
      if (!convertible_op(f_.insts[b.insts[i]])) return a;
    a.ok = true;
    a.join = b.succs[0];
    a.size = cost(x);
    return a;
  }

  // What an arm costs every lane once converted: its operations and one
  // select per var write; var reads, constants and uniform loads become
  // SSA values or hoistable broadcasts.
  size_t cost(BlockId x) const {
    size_t n = 0;
    for (ValueId v : f_.blocks[x].insts) {
      Opcode op = f_.insts[v].op;
      n += op != Opcode::GetVar && op != Opcode::Const && op != Opcode::LoadUniform && op != Opcode::Br;
    }
    return n;
  }

  bool try_convert(BlockId h) {
    ValueId t = f_.terminator(h);
    if (t == kNoValue) return false;
    const Inst& term = f_.insts[t];
    if (term.op != Opcode::CondBr || term.uniform) return false;
    const BlockId s0 = f_.blocks[h].succs[0], s1 = f_.blocks[h].succs[1];
    const ValueId c = term.args[0];
    BlockId then_arm = kNoBlock, else_arm = kNoBlock, join = kNoBlock;
    if (s0 == s1) {
      join = s0;
    } else {
      Arm a = arm(s0, h), b = arm(s1, h);
      if (a.ok && b.ok && a.join == b.join) {
        then_arm = s0, else_arm = s1, join = a.join;
      } else if (a.ok && a.join == s1) {
        then_arm = s0, join = s1;
      } else if (b.ok && b.join == s0) {
        else_arm = s1, join = s0;
      } else {
        return false;
      }
    }
    size_t size = 0;
    if (then_arm != kNoBlock) size += cost(then_arm);
    if (else_arm != kNoBlock) size += cost(else_arm);
    if (size > kVoteLimit) return false;

    Builder bld(f_);
    kill_inst(f_, t);
    f_.blocks[h].insts.pop_back();
    bld.set_block(h);
    if (size <= kSelectLimit) {
      // Both arms in place, their writes kept by the condition.
      emit_arms(bld, c, then_arm, else_arm, false);
      bld.br(join);
      f_.blocks[h].succs = {join};
      for (BlockId x : {then_arm, else_arm}) {
        if (x == kNoBlock) continue;
        kill_inst(f_, f_.blocks[x].insts.back());
        f_.blocks[x].insts.clear();
        f_.blocks[x].succs.clear();
      }
      merge_single_successor(h);
      return true;
    }
    // Vote: all lanes c -> the then path unmasked; no lane c -> the else path
    // unmasked; otherwise the select copy of both arms.
    const BlockId all_path = then_arm != kNoBlock ? then_arm : join;
    const BlockId none_path = else_arm != kNoBlock ? else_arm : join;
    const BlockId mixed_check = f_.add_block();
    const BlockId mixed = f_.add_block();
    ValueId yes = bld.i1(true);
    ValueId all_c = bld.emit(Opcode::All, Type::I1, {c, yes});
    bld.cond_br(all_c, all_path, mixed_check);
    f_.insts[f_.blocks[h].insts.back()].uniform = true;
    f_.blocks[h].succs = {all_path, mixed_check};
    bld.set_block(mixed_check);
    ValueId yes2 = bld.i1(true);
    ValueId any_c = bld.emit(Opcode::Any, Type::I1, {c, yes2});
    bld.cond_br(any_c, mixed, none_path);
    f_.insts[f_.blocks[mixed_check].insts.back()].uniform = true;
    f_.blocks[mixed_check].succs = {mixed, none_path};
    bld.set_block(mixed);
    emit_arms(bld, c, then_arm, else_arm, true);
    bld.br(join);
    f_.blocks[mixed].succs = {join};
    return true;
  }

  // The arms' instructions (moved, or copied with `copy`) into the builder's
  // block: the then arm under c, the else arm under !c. The else arm first:
  // reverse post-order puts it first, and the interpreter runs blocks in that
  // order, so two traps fire in the interpreter's order.
  void emit_arms(Builder& bld, ValueId c, BlockId then_arm, BlockId else_arm, bool copy) {
    ValueId not_c = kNoValue;
    for (BlockId x : {else_arm, then_arm}) {
      if (x == kNoBlock) continue;
      std::vector<ValueId> body(f_.blocks[x].insts.begin(), f_.blocks[x].insts.end() - 1);
      if (copy) body = clone(body);
      ValueId mask = c;
      if (x == else_arm) {
        if (not_c == kNoValue) not_c = bld.xor_(c, bld.i1(true));
        mask = not_c;
      }
      emit_masked_body(f_, bld, body, mask);
    }
  }

  // Copies of instructions (not placed in a block), operands renamed to the
  // copies of earlier ones.
  std::vector<ValueId> clone(const std::vector<ValueId>& body) {
    std::unordered_map<ValueId, ValueId> map;
    std::vector<ValueId> out;
    out.reserve(body.size());
    for (ValueId v : body) {
      Inst in = f_.insts[v];
      for (ValueId& a : in.args) {
        auto it = map.find(a);
        if (it != map.end()) a = it->second;
      }
      f_.insts.push_back(std::move(in));
      ValueId n = ValueId(f_.insts.size() - 1);
      map[v] = n;
      out.push_back(n);
    }
    return out;
  }

  // h ends in `br j` and is j's only predecessor: j's code joins h's, so a
  // converted inner if makes its enclosing arm one block again.
  void merge_single_successor(BlockId h) {
    BlockId j = f_.blocks[h].succs[0];
    if (j == h || j == 0) return;
    size_t preds = 0;
    for (const Block& b : f_.blocks)
      for (BlockId s : b.succs) preds += s == j;
    if (preds != 1) return;
    kill_inst(f_, f_.blocks[h].insts.back());
    f_.blocks[h].insts.pop_back();
    for (ValueId v : f_.blocks[j].insts) place(f_, h, v);
    f_.blocks[h].succs = f_.blocks[j].succs;
    f_.blocks[j].insts.clear();
    f_.blocks[j].succs.clear();
  }
};

}  // namespace

bool if_convert_divergent(Function& f) {
  if (f.blocks.empty()) return false;
  remove_unreachable_blocks(f);
  if (!IfConverter(f).run()) return false;
  remove_unreachable_blocks(f);
  demote_cross_block_values(f);
  analyze_uniformity(f);
  return true;
}

}  // namespace gpurc::ir
