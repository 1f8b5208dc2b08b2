// Verifier: each rule rejects a function that breaks only that rule, and the
// message names the block and instruction.
#include <doctest/doctest.h>

#include "ir/builder.h"
#include "ir/ir.h"

namespace gpurc_test_ir_verify_test {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc::ir;

namespace {
// entry: %0 = lane_id; %1 = const 1; %2 = icmp ult; cond_br %2, b1, b2
// b1: %4 = iadd %0, %1; br b2      b2: %6 = phi [%1, b0], [%4, b1]; return
Function diamond() {
  Function f;
  f.add_block();
  BlockId b1 = f.add_block(), b2 = f.add_block();
  f.add_var("v", Type::I32);
  Builder b(f);
  ValueId l = b.emit(Opcode::LaneId, Type::I32, {});
  ValueId one = b.i32(1);
  b.cond_br(b.icmp(IntPred::Ult, l, one), b1, b2);
  b.set_block(b1);
  ValueId s = b.binary(Opcode::IAdd, l, one);
  b.br(b2);
  b.set_block(b2);
  b.emit(Opcode::Phi, Type::I32, {one, s});
  b.ret();
  f.compute_preds();
  return f;
}
bool has(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }
}  // namespace

TEST_CASE("verify: a valid function passes") { CHECK(verify(diamond()) == ""); }

TEST_CASE("verify: terminators and successors") {
  Function f = diamond();
  f.blocks[1].succs.push_back(2);
  CHECK(has(verify(f), "b1 %5 (br): 2 successors"));
  f = diamond();
  f.blocks[0].succs.pop_back();
  CHECK(has(verify(f), "b0 %3 (cond_br)"));
  f = diamond();
  std::swap(f.blocks[1].insts[0], f.blocks[1].insts[1]);  // br before iadd
  CHECK(has(verify(f), "b1 %5 (br): terminator in the middle"));
  f = diamond();
  f.blocks[2].insts.pop_back();
  f.insts[7].block = kNoBlock;
  CHECK(has(verify(f), "does not end with a terminator"));
  f = diamond();
  f.blocks[2].succs = {9};
  CHECK(has(verify(f), "successor b9 does not exist"));
  f = diamond();
  f.add_block();
  CHECK(has(verify(f), "b3: empty block"));
}

TEST_CASE("verify: arity and type letters") {
  Function f = diamond();
  f.insts[4].args.pop_back();
  CHECK(has(verify(f), "b1 %4 (iadd): has 1 operands, expected 2"));
  f = diamond();
  f.insts[4].type = Type::F32;
  CHECK(has(verify(f), "b1 %4 (iadd): result type f32 not allowed"));
  f = diamond();
  f.insts[2].args[1] = 2;  // icmp of i32 and i1: 'P' wants the same type
  CHECK(has(verify(f), "b0 %2 (icmp): operand 1"));
  f = diamond();
  f.insts[3].args[0] = 0;  // cond_br on an i32
  CHECK(has(verify(f), "b0 %3 (cond_br): operand 0 %0 has type i32"));
  f = diamond();
  f.insts[1].imm = 1ull << 40;
  CHECK(has(verify(f), "constant has bits above its type"));
}

TEST_CASE("verify: phis") {
  Function f = diamond();
  f.insts[6].args.pop_back();
  CHECK(has(verify(f), "b2 %6 (phi): phi has 1 operands for 2 predecessors"));
  f = diamond();
  std::swap(f.blocks[2].insts[0], f.blocks[2].insts[1]);
  CHECK(has(verify(f), "terminator in the middle"));
  f = diamond();
  f.insts[6].args = {f.insts[6].args[1], f.insts[6].args[0]};  // %4 from b0: not dominated
  CHECK(has(verify(f), "b2 %6 (phi): operand %4 (defined in b1) does not dominate its use at the end of b0"));
}

TEST_CASE("verify: SSA dominance") {
  Function f = diamond();
  // Use %4 (defined in b1) in b2 outside a phi.
  Inst in;
  in.op = Opcode::INeg;
  in.type = Type::I32;
  in.block = 2;
  in.args = {4};
  f.insts.push_back(in);
  f.blocks[2].insts.insert(f.blocks[2].insts.begin() + 1, ValueId(f.insts.size() - 1));
  CHECK(has(verify(f), "b2 %8 (ineg): operand %4 (defined in b1) does not dominate its use"));
  f = diamond();
  f.insts[4].args[0] = 4;  // uses itself
  CHECK(has(verify(f), "does not dominate"));
}

TEST_CASE("verify: vars, uniforms, attributes, flags") {
  Function f = diamond();
  Builder b(f);
  b.set_block(1);
  f.blocks[1].insts.pop_back();
  f.insts[5].block = kNoBlock;
  ValueId gv = b.emit(Opcode::GetVar, Type::I32, {}, 0, 0, 3);
  b.br(2);
  CHECK(has(verify(f), "var 3 does not exist"));
  f.insts[gv].imm = 0;
  CHECK(verify(f) == "");
  f.insts[gv].type = Type::I64;
  CHECK(has(verify(f), "type differs from var 0"));
  f.insts[gv] = Inst{Opcode::LoadUniform, Type::I32, 0, 0, 4, 1, false, {}};
  f.uniform_bytes = 8;
  CHECK(verify(f) == "");
  f.uniform_bytes = 7;
  CHECK(has(verify(f), "uniform offset 4 outside uniform_bytes 7"));
  f.uniform_bytes = 8;
  f.insts[gv] = Inst{Opcode::Load, Type::I32, mem_attr(Space::Global, AddrClass::Random), 0, 0, 1, false, {0, 2}};
  CHECK(verify(f) == "");
  f.insts[gv].attr = 0x37;
  CHECK(has(verify(f), "bad memory attribute"));
  f = diamond();
  f.insts[2].attr = 10;
  CHECK(has(verify(f), "attribute value 10 out of range"));
  f = diamond();
  f.insts[4].fflags = ff::FtzIn;
  CHECK(has(verify(f), "float flags on an op that takes none"));
  f = diamond();
  f.insts[4].attr = 1;
  CHECK(has(verify(f), "on an op without one"));
}

TEST_CASE("verify: instruction bookkeeping") {
  Function f = diamond();
  f.insts[4].block = 0;
  CHECK(has(verify(f), "Inst::block says b0"));
  f = diamond();
  f.blocks[2].insts.insert(f.blocks[2].insts.begin() + 1, 4);
  CHECK(has(verify(f), "also listed in b1"));
  f = diamond();
  f.insts[4].args[0] = 999;
  CHECK(has(verify(f), "does not exist"));
  Function empty;
  CHECK(verify(empty) == "function has no blocks");
}

}  // namespace gpurc_test_ir_verify_test
