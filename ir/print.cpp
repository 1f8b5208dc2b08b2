// The IR text form (grammar in docs/ir.md). Every Inst field is printed, so
// parse(print(f)) reproduces f: values keep their ids; void instructions are
// not numbered in the text and the parser gives them the unused ids in order.
#include <string>
#include <vector>

#include "ir/ir.h"
#include "ir/text_names.h"

namespace gpurc::ir {

namespace {

std::string block_ref(BlockId b) { return b == kNoBlock ? std::string("b?") : "b" + std::to_string(b); }
std::string value_ref(ValueId v) { return "%" + std::to_string(v); }

// Predecessor lists in Function::compute_preds() order, computed here so a
// stale Block::preds does not change the text.
std::vector<std::vector<BlockId>> preds_of(const Function& f) {
  std::vector<std::vector<BlockId>> p(f.blocks.size());
  for (BlockId b = 0; b < f.blocks.size(); ++b)
    for (BlockId s : f.blocks[b].succs)
      if (s < f.blocks.size()) p[s].push_back(b);
  return p;
}

std::string inst_text(const Function& f, ValueId v, const std::vector<std::vector<BlockId>>* preds,
                      const std::vector<BlockId>* succs) {
  const Inst& in = f.insts[v];
  const OpInfo& info = op_info(in.op);
  std::string s;
  if (in.type != Type::Void) s += value_ref(v) + " = ";
  s += op_name(in.op);
  std::string attr = text::attr_text(info.attr, in.attr);
  if (!attr.empty()) s += "." + attr;
  if (in.type != Type::Void) s += " " + std::string(type_name(in.type));
  std::vector<std::string> ops;
  if (in.op == Opcode::Phi) {
    const std::vector<BlockId>* p = preds && in.block < preds->size() ? &(*preds)[in.block] : nullptr;
    for (size_t i = 0; i < in.args.size(); ++i)
      ops.push_back("[" + value_ref(in.args[i]) + ", " + block_ref(p && i < p->size() ? (*p)[i] : kNoBlock) + "]");
  } else {
    for (ValueId a : in.args) ops.push_back(value_ref(a));
  }
  if (info.attr == AttrKind::Imm || in.imm != 0) ops.push_back("#" + text::hex(in.imm));
  if (succs)
    for (BlockId b : *succs) ops.push_back(block_ref(b));
  for (size_t i = 0; i < ops.size(); ++i) s += (i ? ", " : " ") + ops[i];
  std::string fl = text::fflags_text(in.fflags);
  if (!fl.empty()) s += " [" + fl + "]";
  if (in.uniform) s += " !uniform";
  return s;
}

// Function::terminator without trusting the ids in the block.
ValueId safe_terminator(const Function& f, BlockId b) {
  const Block& bl = f.blocks[b];
  if (bl.insts.empty() || bl.insts.back() >= f.insts.size()) return kNoValue;
  return op_info(f.insts[bl.insts.back()].op).terminator ? bl.insts.back() : kNoValue;
}

}  // namespace

std::string print_inst(const Function& f, ValueId v) {
  if (v >= f.insts.size()) return "<bad value " + std::to_string(v) + ">";
  auto preds = preds_of(f);
  const Inst& in = f.insts[v];
  const std::vector<BlockId>* succs = nullptr;
  if (op_info(in.op).terminator && in.block < f.blocks.size() && safe_terminator(f, in.block) == v)
    succs = &f.blocks[in.block].succs;
  return inst_text(f, v, &preds, succs);
}

std::string print(const Function& f) {
  auto preds = preds_of(f);
  std::string s = "func " + text::quote(f.name) + " {\n";
  for (const Var& var : f.vars) s += "  var " + text::quote(var.name) + " " + std::string(type_name(var.type)) + "\n";
  if (f.uniform_bytes) s += "  uniform_bytes " + std::to_string(f.uniform_bytes) + "\n";
  if (f.unlaunched_lanes_free) s += "  unlaunched_lanes_free\n";
  if (f.no_draw_loop) s += "  no_draw_loop\n";
  if (f.state_vars < f.vars.size()) s += "  state_vars " + std::to_string(f.state_vars) + "\n";
  for (BlockId b = 0; b < f.blocks.size(); ++b) {
    const Block& bl = f.blocks[b];
    s += block_ref(b);
    if (!bl.name.empty()) s += " " + text::quote(bl.name);
    s += ":\n";
    ValueId term = safe_terminator(f, b);
    for (ValueId v : bl.insts) {
      if (v >= f.insts.size()) {
        s += "  ; bad value id " + std::to_string(v) + "\n";
        continue;
      }
      s += "  " + inst_text(f, v, &preds, v == term ? &bl.succs : nullptr) + "\n";
    }
    if (term == kNoValue && !bl.succs.empty()) {
      s += "  succs";
      for (size_t i = 0; i < bl.succs.size(); ++i) s += (i ? ", " : " ") + block_ref(bl.succs[i]);
      s += "\n";
    }
  }
  return s + "}\n";
}

}  // namespace gpurc::ir
