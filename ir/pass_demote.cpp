// demote_cross_block_values: after it, data flows between blocks only through
// vars, so divergence lowering can move and mask whole blocks without caring
// about SSA dominance, and a masked write is just a select on a var.
#include <string>
#include <unordered_map>

#include "ir/pass_util.h"
#include "ir/passes.h"

namespace gpurc::ir {

using namespace passutil;

// Whether the pass has anything to do: a phi, or an operand defined in
// another block. Translators that build each block apart (PICA200's
// LocalBuilder) leave neither, and this read-only walk is ~5x cheaper than
// the rewriting walks below finding nothing.
namespace {
bool has_cross_block_values(const Function& f) {
  const size_t n = f.insts.size();
  for (BlockId b = 0; b < f.blocks.size(); ++b)
    for (ValueId v : f.blocks[b].insts) {
      const Inst& in = f.insts[v];
      if (in.op == Opcode::Phi) return true;
      for (ValueId a : in.args)
        if (a < n && f.insts[a].block != b && f.insts[a].block != kNoBlock) return true;
    }
  return false;
}
}  // namespace

void demote_cross_block_values(Function& f) {
  if (f.blocks.empty()) return;
  f.compute_preds();
  if (!has_cross_block_values(f)) return;

  // 1. Phis: each phi gets a var; every predecessor writes its operand just
  // before its terminator, and the phi itself becomes a get_var. All writes
  // of one edge happen before any read (the reads are at the join), so phis
  // that read each other keep their parallel-copy meaning.
  std::vector<std::vector<ValueId>> tail_writes(f.blocks.size());  // per pred block
  for (BlockId b = 0; b < f.blocks.size(); ++b) {
    const auto preds = f.blocks[b].preds;
    for (ValueId v : f.blocks[b].insts) {
      if (f.insts[v].op != Opcode::Phi) continue;
      const std::vector<ValueId> args = f.insts[v].args;  // make_inst below may move f.insts
      uint32_t var = f.add_var("phi_v" + std::to_string(v), f.insts[v].type);
      std::vector<uint8_t> done(f.blocks.size(), 0);
      for (size_t i = 0; i < preds.size() && i < args.size(); ++i) {
        BlockId p = preds[i];
        if (done[p]) continue;  // a duplicated edge carries one value
        done[p] = 1;
        ValueId w = make_inst(f, Opcode::SetVar, Type::Void, {args[i]}, p, 0, var);
        tail_writes[p].push_back(w);
      }
      Inst& phi = f.insts[v];
      phi.op = Opcode::GetVar;
      phi.args.clear();
      phi.imm = var;
    }
  }
  for (BlockId p = 0; p < f.blocks.size(); ++p) {
    if (tail_writes[p].empty()) continue;
    auto& ins = f.blocks[p].insts;
    size_t at = f.terminator(p) == kNoValue ? ins.size() : ins.size() - 1;
    ins.insert(ins.begin() + at, tail_writes[p].begin(), tail_writes[p].end());
  }

  // 2. Values used outside their defining block: a var written right after
  // the definition, read once at the start of every block that uses it.
  std::unordered_map<ValueId, uint32_t> var_of;
  std::vector<std::vector<ValueId>> head_reads(f.blocks.size());
  std::vector<std::unordered_map<ValueId, ValueId>> read_in(f.blocks.size());
  for (BlockId b = 0; b < f.blocks.size(); ++b) {
    for (ValueId v : f.blocks[b].insts) {
      for (size_t ai = 0; ai < f.insts[v].args.size(); ++ai) {
        ValueId a = f.insts[v].args[ai];
        if (a >= f.insts.size() || f.insts[a].block == b || f.insts[a].block == kNoBlock) continue;
        auto it = var_of.find(a);
        if (it == var_of.end())
          it = var_of.emplace(a, f.add_var("val_v" + std::to_string(a), f.insts[a].type)).first;
        auto rit = read_in[b].find(a);
        if (rit == read_in[b].end()) {
          ValueId r = make_inst(f, Opcode::GetVar, f.insts[a].type, {}, b, 0, it->second);
          head_reads[b].push_back(r);
          rit = read_in[b].emplace(a, r).first;
        }
        f.insts[v].args[ai] = rit->second;
      }
    }
  }
  if (var_of.empty()) return;
  std::vector<std::vector<ValueId>> after_def(f.insts.size());
  for (auto& [val, var] : var_of) {
    BlockId d = f.insts[val].block;
    after_def[val].push_back(make_inst(f, Opcode::SetVar, Type::Void, {val}, d, 0, var));
  }
  for (BlockId b = 0; b < f.blocks.size(); ++b) {
    std::vector<ValueId> out = head_reads[b];
    for (ValueId v : f.blocks[b].insts) {
      out.push_back(v);
      if (v < after_def.size())
        for (ValueId w : after_def[v]) out.push_back(w);
    }
    f.blocks[b].insts = std::move(out);
  }
}

}  // namespace gpurc::ir
