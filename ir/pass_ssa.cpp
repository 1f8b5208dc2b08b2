// construct_ssa: get_var/set_var -> SSA values and phis (Braun, Buchwald,
// Hack, Leissa, Mallon, Zwinkau 2013, "Simple and Efficient Construction of
// Static Single Assignment Form"). Blocks are filled in reverse post-order and
// sealed once all their predecessors are filled; reads in unsealed blocks make
// incomplete phis completed at sealing. Trivial phis are removed at the end
// (to a fixpoint, which also covers phis that became trivial through others).
//
// Guest state at the boundaries: a read with no reaching definition is a
// load_var in the entry block; at every return and before every barrier
// terminator each written guest var is stored: store_var writes all 32
// lanes, so the value is select(entry_mask, value, entry value) — lanes that
// were not launched keep their state even where SSA values (phis) are
// unspecified for them. A function whose launch contract makes that state
// don't-care (Function::unlaunched_lanes_free: the caller never reads those
// lanes) stores the value as is: no select, and no load of the old value.
#include <algorithm>
#include <unordered_map>

#include "ir/pass_util.h"
#include "ir/passes.h"

namespace gpurc::ir {

using namespace passutil;

namespace {

struct SsaBuilder {
  Function& f;
  uint32_t persistent;
  Replacements repl;
  // The current definition of (block, var): a dense block x var table
  // (kNoValue: none yet) when it is small, which it is for shaders (a few
  // blocks of ~200 vars); a hash map keyed (block << 32 | var) otherwise.
  static constexpr size_t kDenseLimit = size_t(1) << 18;
  std::vector<ValueId> dense_def;
  std::unordered_map<uint64_t, ValueId> current_def;
  std::vector<uint8_t> sealed, filled;
  std::vector<std::vector<std::pair<uint32_t, ValueId>>> incomplete;  // per block: (var, phi)
  std::vector<std::vector<ValueId>> new_phis;                          // per block
  std::vector<ValueId> entry_value;                                    // per var
  std::vector<ValueId> entry_insts;

  SsaBuilder(Function& fn, uint32_t pers)
      : f(fn), persistent(pers), repl(fn), sealed(fn.blocks.size(), 0), filled(fn.blocks.size(), 0),
        incomplete(fn.blocks.size()), new_phis(fn.blocks.size()), entry_value(fn.vars.size(), kNoValue) {
    if (fn.blocks.size() * fn.vars.size() <= kDenseLimit) dense_def.assign(fn.blocks.size() * fn.vars.size(), kNoValue);
  }

  static uint64_t key(BlockId b, uint32_t var) { return (uint64_t(b) << 32) | var; }

  void write(uint32_t var, BlockId b, ValueId v) {
    if (!dense_def.empty()) dense_def[size_t(b) * f.vars.size() + var] = v;
    else current_def[key(b, var)] = v;
  }

  ValueId read(uint32_t var, BlockId b) {
    if (!dense_def.empty()) {
      ValueId v = dense_def[size_t(b) * f.vars.size() + var];
      if (v != kNoValue) return v;
      return read_recursive(var, b);
    }
    auto it = current_def.find(key(b, var));
    if (it != current_def.end()) return it->second;
    return read_recursive(var, b);
  }

  ValueId new_phi(uint32_t var, BlockId b) {
    ValueId p = make_inst(f, Opcode::Phi, f.vars[var].type, {}, b);
    new_phis[b].push_back(p);
    repl.grow(f);
    return p;
  }

  ValueId read_recursive(uint32_t var, BlockId b) {
    const auto& preds = f.blocks[b].preds;
    ValueId val;
    if (preds.empty()) {
      val = entry(var);
    } else if (!sealed[b]) {
      val = new_phi(var, b);
      incomplete[b].push_back({var, val});
    } else if (preds.size() == 1) {
      val = read(var, preds[0]);
    } else {
      val = new_phi(var, b);
      write(var, b, val);  // breaks cycles through loops
      add_operands(var, val);
    }
    write(var, b, val);
    return val;
  }

  void add_operands(uint32_t var, ValueId phi) {
    BlockId b = f.insts[phi].block;
    std::vector<ValueId> args;
    for (BlockId p : f.blocks[b].preds) args.push_back(read(var, p));
    f.insts[phi].args = std::move(args);
  }

  ValueId entry(uint32_t var) {
    if (entry_value[var] == kNoValue) {
      bool guest = var < persistent;
      ValueId v = make_inst(f, guest ? Opcode::LoadVar : Opcode::Undef, f.vars[var].type, {}, 0, 0,
                            guest ? var : 0);
      repl.grow(f);
      entry_value[var] = v;
      entry_insts.push_back(v);
    }
    return entry_value[var];
  }

  void seal(BlockId b) {
    if (sealed[b]) return;
    sealed[b] = 1;
    auto inc = std::move(incomplete[b]);
    incomplete[b].clear();
    for (auto& [var, phi] : inc) add_operands(var, phi);
  }

  bool all_preds_filled(BlockId b) const {
    for (BlockId p : f.blocks[b].preds)
      if (!filled[p]) return false;
    return true;
  }
};

}  // namespace

void construct_ssa(Function& f, uint32_t persistent_vars) {
  if (f.blocks.empty()) return;
  remove_unreachable_blocks(f);
  ensure_entry_without_preds(f);
  f.compute_preds();
  persistent_vars = std::min<uint32_t>(persistent_vars, uint32_t(f.vars.size()));

  std::vector<uint8_t> written(f.vars.size(), 0);
  bool any_var_op = false;
  for (auto& b : f.blocks)
    for (ValueId v : b.insts) {
      const Inst& in = f.insts[v];
      if (in.op == Opcode::SetVar) written[in.imm] = 1;
      any_var_op |= in.op == Opcode::SetVar || in.op == Opcode::GetVar;
    }
  if (!any_var_op) return;

  SsaBuilder sb(f, persistent_vars);
  auto rpo = reverse_post_order(f);
  for (BlockId b : rpo) {
    if (sb.all_preds_filled(b)) sb.seal(b);
    std::vector<ValueId> out;
    auto insts = f.blocks[b].insts;
    for (ValueId v : insts) {
      const Opcode op = f.insts[v].op;  // reads below may grow f.insts: no references
      const uint32_t var_of_inst = uint32_t(f.insts[v].imm);
      if (op == Opcode::GetVar) {
        ValueId val = sb.read(var_of_inst, b);
        sb.repl.set(v, val);
        kill_inst(f, v);
        continue;
      }
      if (op == Opcode::SetVar) {
        sb.write(var_of_inst, b, f.insts[v].args[0]);
        kill_inst(f, v);
        continue;
      }
      if (op == Opcode::Return || op == Opcode::Barrier) {
        // Lanes that were not launched keep their state: their SSA values
        // (phis in particular) are unspecified, so select the entry value
        // (unless the contract says nobody reads those lanes).
        ValueId em = kNoValue;
        for (uint32_t var = 0; var < persistent_vars; ++var) {
          if (!written[var]) continue;
          if (f.unlaunched_lanes_free) {
            out.push_back(make_inst(f, Opcode::StoreVar, Type::Void, {sb.read(var, b)}, b, 0, var));
            sb.repl.grow(f);
            continue;
          }
          if (em == kNoValue) {
            em = make_inst(f, Opcode::EntryMask, Type::I1, {}, b);
            out.push_back(em);
          }
          ValueId val = sb.read(var, b);
          ValueId keep = make_inst(f, Opcode::Select, f.vars[var].type, {em, val, sb.entry(var)}, b);
          out.push_back(keep);
          out.push_back(make_inst(f, Opcode::StoreVar, Type::Void, {keep}, b, 0, var));
          sb.repl.grow(f);
        }
      }
      out.push_back(v);
    }
    f.blocks[b].insts = std::move(out);
    sb.filled[b] = 1;
    for (BlockId s : f.blocks[b].succs)
      if (!sb.sealed[s] && sb.all_preds_filled(s)) sb.seal(s);
  }
  for (BlockId b : rpo) sb.seal(b);  // every pred is filled by now

  // Remove trivial phis (all operands the same value or the phi itself).
  std::vector<ValueId> all_phis;
  for (auto& ps : sb.new_phis) all_phis.insert(all_phis.end(), ps.begin(), ps.end());
  for (bool changed = true; changed;) {
    changed = false;
    for (ValueId p : all_phis) {
      if (f.insts[p].block == kNoBlock) continue;
      ValueId same = kNoValue;
      bool trivial = true;
      for (ValueId a : f.insts[p].args) {
        ValueId r = sb.repl.find(a);
        if (r == p || r == same) continue;
        if (same != kNoValue) {
          trivial = false;
          break;
        }
        same = r;
      }
      if (!trivial) continue;
      if (same == kNoValue) {  // only reads itself: unreachable from the entry value
        BlockId b = f.insts[p].block;
        f.insts[p].op = Opcode::Undef;
        f.insts[p].args.clear();
        (void)b;
        continue;
      }
      sb.repl.set(p, same);
      kill_inst(f, p);
      changed = true;
    }
  }
  sb.repl.apply(f);

  // Place the phis at their blocks' starts and the entry values in the entry.
  for (BlockId b = 0; b < f.blocks.size(); ++b) {
    std::vector<ValueId> head;
    for (ValueId p : sb.new_phis[b])
      if (f.insts[p].block != kNoBlock) head.push_back(p);
    if (b == 0)
      for (ValueId v : sb.entry_insts) head.push_back(v);
    if (head.empty()) continue;
    auto& ins = f.blocks[b].insts;
    // Existing phis (input already partly in SSA form) stay first.
    size_t at = 0;
    while (at < ins.size() && f.insts[ins[at]].op == Opcode::Phi) ++at;
    ins.insert(ins.begin() + at, head.begin(), head.end());
  }
  // A phi turned undef (self-referencing only) must not sit before real
  // phis: move such undefs to the entry block.
  for (BlockId b = 1; b < f.blocks.size(); ++b) {
    auto& ins = f.blocks[b].insts;
    std::vector<ValueId> moved;
    for (ValueId v : ins)
      if (f.insts[v].op == Opcode::Undef) moved.push_back(v);
    if (moved.empty()) continue;
    ins.erase(std::remove_if(ins.begin(), ins.end(), [&](ValueId v) { return f.insts[v].op == Opcode::Undef; }),
              ins.end());
    for (ValueId v : moved) f.insts[v].block = 0;
    auto& e = f.blocks[0].insts;
    e.insert(e.begin(), moved.begin(), moved.end());
  }
}

void construct_ssa(Function& f) { construct_ssa(f, std::min<uint32_t>(uint32_t(f.vars.size()), f.state_vars)); }

}  // namespace gpurc::ir
