// Typed construction of IR: appends instructions to a current block.
#pragma once
#include <initializer_list>

#include "ir/ir.h"

namespace gpurc::ir {

class Builder {
 public:
  explicit Builder(Function& f) : f_(f) {}
  Function& func() { return f_; }
  void set_block(BlockId b) { block_ = b; }
  BlockId block() const { return block_; }

  // The general form every helper below uses.
  ValueId emit(Opcode op, Type t, std::initializer_list<ValueId> args, uint8_t attr = 0,
               uint32_t fflags = 0, uint64_t imm = 0) {
    Inst in;
    in.op = op;
    in.type = t;
    in.attr = attr;
    in.fflags = fflags;
    in.imm = imm;
    in.block = block_;
    in.args.assign(args);
    f_.insts.push_back(std::move(in));
    ValueId v = ValueId(f_.insts.size() - 1);
    f_.blocks[block_].insts.push_back(v);
    return v;
  }
  Type type(ValueId v) const { return f_.insts[v].type; }

  ValueId constant(Type t, uint64_t bits) { return emit(Opcode::Const, t, {}, 0, 0, bits & type_mask(t)); }
  ValueId i1(bool b) { return constant(Type::I1, b); }
  ValueId i32(uint32_t v) { return constant(Type::I32, v); }
  ValueId i64(uint64_t v) { return constant(Type::I64, v); }
  ValueId f32_bits(uint32_t bits) { return constant(Type::F32, bits); }

  ValueId get_var(uint32_t var) { return emit(Opcode::GetVar, f_.vars[var].type, {}, 0, 0, var); }
  void set_var(uint32_t var, ValueId v) { emit(Opcode::SetVar, Type::Void, {v}, 0, 0, var); }
  ValueId load_uniform(Type t, uint32_t offset) { return emit(Opcode::LoadUniform, t, {}, 0, 0, offset); }

  ValueId binary(Opcode op, ValueId a, ValueId b, uint8_t attr = 0, uint32_t fflags = 0) {
    return emit(op, type(a), {a, b}, attr, fflags);
  }
  ValueId unary(Opcode op, ValueId a, uint8_t attr = 0, uint32_t fflags = 0) {
    return emit(op, type(a), {a}, attr, fflags);
  }
  ValueId select(ValueId c, ValueId a, ValueId b) { return emit(Opcode::Select, type(a), {c, a, b}); }
  ValueId icmp(IntPred p, ValueId a, ValueId b) { return emit(Opcode::ICmp, Type::I1, {a, b}, uint8_t(p)); }
  ValueId fcmp(FloatPred p, ValueId a, ValueId b, uint32_t fflags = 0) {
    return emit(Opcode::FCmp, Type::I1, {a, b}, uint8_t(p), fflags);
  }
  ValueId convert(Opcode op, Type to, ValueId a, uint8_t attr = 0, uint32_t fflags = 0) {
    return emit(op, to, {a}, attr, fflags);
  }
  ValueId load(Type t, Space s, AddrClass c, ValueId addr, ValueId mask) {
    return emit(Opcode::Load, t, {addr, mask}, mem_attr(s, c));
  }
  void store(Space s, AddrClass c, ValueId addr, ValueId value, ValueId mask) {
    emit(Opcode::Store, Type::Void, {addr, value, mask}, mem_attr(s, c));
  }

  // Terminators set the block's successors.
  void br(BlockId to) { term(Opcode::Br, {}, {to}); }
  void cond_br(ValueId c, BlockId t, BlockId e) { term(Opcode::CondBr, {c}, {t, e}); }
  void ret() { term(Opcode::Return, {}, {}); }
  void barrier(BlockId next) { term(Opcode::Barrier, {}, {next}); }
  void switch_(ValueId sel, std::initializer_list<BlockId> targets) { term(Opcode::Switch, {sel}, targets); }

 private:
  void term(Opcode op, std::initializer_list<ValueId> args, std::initializer_list<BlockId> succs) {
    emit(op, Type::Void, args);
    f_.blocks[block_].succs.assign(succs);
  }
  Function& f_;
  BlockId block_ = 0;
};

}  // namespace gpurc::ir
