#include "isa/lane_count.h"

#include <cstddef>

namespace gpurc {

ir::Function instrument_lane_count(const ir::Function& f, uint32_t& counter_var) {
  ir::Function g = f;
  counter_var = g.add_var("__lane_instructions", ir::Type::I64);
  for (ir::BlockId b = 0; b < g.blocks.size(); ++b) {
    uint64_t count = g.blocks[b].insts.size();
    if (count == 0) continue;
    auto add = [&](ir::Opcode op, ir::Type t, std::vector<ir::ValueId> args, uint64_t imm) {
      ir::Inst in;
      in.op = op;
      in.type = t;
      in.imm = imm;
      in.block = b;
      in.args = std::move(args);
      g.insts.push_back(std::move(in));
      return ir::ValueId(g.insts.size() - 1);
    };
    ir::ValueId old = add(ir::Opcode::GetVar, ir::Type::I64, {}, counter_var);
    ir::ValueId n = add(ir::Opcode::Const, ir::Type::I64, {}, count);
    ir::ValueId sum = add(ir::Opcode::IAdd, ir::Type::I64, {old, n}, 0);
    ir::ValueId set = add(ir::Opcode::SetVar, ir::Type::Void, {sum}, counter_var);
    auto& list = g.blocks[b].insts;
    size_t pos = 0;
    while (pos < list.size() && g.insts[list[pos]].op == ir::Opcode::Phi) ++pos;
    list.insert(list.begin() + std::ptrdiff_t(pos), {old, n, sum, set});
  }
  return g;
}

}  // namespace gpurc
