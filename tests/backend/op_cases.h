// The list of single-op configurations the per-op tests run: every per-lane
// op of ir/opcodes.inc with its types, attributes and float flags.
#pragma once
#include <string>
#include <vector>

#include "ir/builder.h"
#include "ir/ir.h"

namespace gpurc::backend::test {

struct OpCase {
  ir::Opcode op;
  ir::Type type;
  std::vector<ir::Type> args;
  uint8_t attr = 0;
  uint32_t fflags = 0;
  uint64_t imm = 0;
  int count_arg = -1;  // argument that is a shift count (values 0..70)
};

inline std::string describe(const OpCase& c) {
  std::string s = std::string(ir::op_name(c.op)) + " " + std::string(ir::type_name(c.type)) + "(";
  for (size_t i = 0; i < c.args.size(); ++i) s += (i ? "," : "") + std::string(ir::type_name(c.args[i]));
  s += ") attr=" + std::to_string(c.attr) + " fflags=0x" + [&] {
    char b[16];
    snprintf(b, sizeof b, "%x", c.fflags);
    return std::string(b);
  }() + " imm=" + std::to_string(c.imm);
  return s;
}

inline std::vector<OpCase> all_op_cases(bool light) {
  using namespace ir;
  using O = Opcode;
  std::vector<OpCase> cs;
  const Type ints[] = {Type::I1, Type::I8, Type::I16, Type::I32, Type::I64};
  const Type ints_no1[] = {Type::I8, Type::I16, Type::I32, Type::I64};
  const Type floats[] = {Type::F16, Type::F32, Type::F64};
  const Type all[] = {Type::I1, Type::I8, Type::I16, Type::I32, Type::I64, Type::F16, Type::F32, Type::F64};

  for (Type t : all) cs.push_back({O::Select, t, {Type::I1, t, t}});
  for (Type t : all) cs.push_back({O::Const, t, {}, 0, 0, 0x8123456789abcdefull & type_mask(t)});
  for (Type t : ints) {
    for (O op : {O::IAdd, O::ISub, O::IMul, O::And, O::Or, O::Xor}) cs.push_back({op, t, {t, t}});
    for (O op : {O::INeg, O::IAbs, O::Not, O::BitReverse}) cs.push_back({op, t, {t}});
    for (uint8_t s = 0; s < 2; ++s) {
      for (O op : {O::IMulHi, O::IMin, O::IMax}) cs.push_back({op, t, {t, t}, s});
      cs.push_back({O::ISad, t, {t, t, t}, s});
      cs.push_back({O::BfExtract, t, {t, Type::I32, Type::I32}, s, 0, 0, 1});
      cs.push_back({O::FindMsb, Type::I32, {t}, s});
    }
    cs.push_back({O::IAddC, t, {t, t, Type::I1}});
    cs.push_back({O::ICarry, Type::I1, {t, t, Type::I1}});
    cs.push_back({O::IOverflow, Type::I1, {t, t, Type::I1}});
    cs.push_back({O::IMad, t, {t, t, t}});
    cs.push_back({O::Popcount, Type::I32, {t}});
    cs.push_back({O::FindLsb, Type::I32, {t}});
    cs.push_back({O::BfInsert, t, {t, t, Type::I32, Type::I32}, 0, 0, 0, 2});
    for (uint64_t lut : {0x96ull, 0xE8ull, 0xCAull, 0x01ull}) cs.push_back({O::Lut3, t, {t, t, t}, 0, 0, lut});
    for (uint8_t p = 0; p <= uint8_t(IntPred::Uge); ++p) cs.push_back({O::ICmp, Type::I1, {t, t}, p});
    for (uint8_t mode = 0; mode < 2; ++mode)
      for (O op : {O::Shl, O::LShr, O::AShr}) cs.push_back({op, t, {t, Type::I32}, mode, 0, 0, 1});
    for (Type u : ints) {
      if (bit_width(u) > bit_width(t)) {
        cs.push_back({O::Zext, u, {t}});
        cs.push_back({O::Sext, u, {t}});
        cs.push_back({O::Trunc, t, {u}});
      }
    }
  }
  for (Type t : {Type::I8, Type::I16, Type::I32})
    for (uint8_t s = 0; s < 2; ++s) cs.push_back({O::IMulWide, int_type(2 * bit_width(t)), {t, t}, s});
  cs.push_back({O::Bitcast, Type::F32, {Type::I32}});
  cs.push_back({O::Bitcast, Type::I32, {Type::F32}});
  cs.push_back({O::Bitcast, Type::F16, {Type::I16}});
  cs.push_back({O::Bitcast, Type::F64, {Type::I64}});
  cs.push_back({O::Bitcast, Type::I64, {Type::F64}});
  for (uint64_t h = 0; h < 2; ++h) {
    cs.push_back({O::Extract16, Type::I16, {Type::I32}, 0, 0, h});
    cs.push_back({O::Insert16, Type::I32, {Type::I32, Type::I16}, 0, 0, h});
  }

  // Float flags: every NaN rule and rounding mode with a spread of the others.
  std::vector<uint32_t> flag_sets;
  const uint32_t extras[] = {0, ff::FtzIn, ff::FtzOut, ff::Sat, ff::ZeroMul, ff::FtzIn | ff::FtzOut,
                             ff::FtzIn | ff::Sat | ff::ZeroMul};
  for (uint32_t nan = 0; nan < 3; ++nan)
    for (uint32_t rnd = 0; rnd < 4; ++rnd)
      for (uint32_t e : extras) {
        if (light && e != 0 && (nan + rnd + e) % 3) continue;
        flag_sets.push_back(with_round(with_nan(e, NanRule(nan)), Round(rnd)));
      }
  for (Type t : floats) {
    for (uint32_t fl : flag_sets) {
      for (O op : {O::FAdd, O::FSub, O::FMul}) cs.push_back({op, t, {t, t}, 0, fl});
      for (O op : {O::FFma, O::FMad}) cs.push_back({op, t, {t, t, t}, 0, fl});
      for (uint8_t mm = 0; mm < 3; ++mm)
        for (O op : {O::FMin, O::FMax}) cs.push_back({op, t, {t, t}, mm, fl});
      for (O op : {O::FFloor, O::FCeil, O::FTrunc, O::FRint}) cs.push_back({op, t, {t}, 0, fl});
      for (O op : {O::FRcp, O::FSqrt, O::FRsqrt, O::FExp2, O::FLog2, O::FSin, O::FCos})
        cs.push_back({op, t, {t}, uint8_t(Transc::Ieee), fl});
      if (t == Type::F32)  // the PICA200 float model (ir/transc_pica.h) is defined for f32
        for (O op : {O::FRcp, O::FRsqrt, O::FExp2, O::FLog2}) cs.push_back({op, t, {t}, uint8_t(Transc::Pica), fl});
    }
    for (O op : {O::FNeg, O::FAbs}) cs.push_back({op, t, {t}});
    for (uint8_t p = 0; p <= uint8_t(FloatPred::Uge); ++p)
      for (uint32_t fl : {0u, ff::FtzIn}) cs.push_back({O::FCmp, Type::I1, {t, t}, p, fl});
    for (Type it : ints_no1)
      for (uint8_t s = 0; s < 2; ++s)
        for (uint32_t rnd = 0; rnd < 4; ++rnd)
          for (uint32_t e : {0u, ff::FtzIn}) {
            cs.push_back({O::FToI, it, {t}, s, with_round(e, Round(rnd))});
            cs.push_back({O::IToF, t, {it}, s, with_round(e ? ff::Sat : 0, Round(rnd))});
          }
    for (Type u : floats)
      if (u != t)
        for (uint32_t nan = 0; nan < 3; ++nan)
          for (uint32_t rnd = 0; rnd < 4; ++rnd)
            cs.push_back({O::FToF, u, {t}, 0, with_round(with_nan(nan == 1 ? ff::FtzIn | ff::FtzOut : 0, NanRule(nan)), Round(rnd))});
  }
  return cs;
}

// Appends c's op with the given operands to block 0; returns its value id.
inline ir::ValueId append_op(ir::Function& f, const OpCase& c, const std::vector<ir::ValueId>& args) {
  ir::Inst in;
  in.op = c.op;
  in.type = c.type;
  in.attr = c.attr;
  in.fflags = c.fflags;
  in.imm = c.imm;
  in.block = 0;
  in.args = args;
  f.insts.push_back(in);
  ir::ValueId v = ir::ValueId(f.insts.size() - 1);
  f.blocks[0].insts.push_back(v);
  return v;
}

// load_var inputs -> op -> store_var out; returns the op's value id.
inline ir::ValueId build_op_function(const OpCase& c, ir::Function& f) {
  f.name = "op";
  f.add_block("entry");
  ir::Builder b(f);
  std::vector<ir::ValueId> args;
  for (size_t i = 0; i < c.args.size(); ++i) {
    uint32_t var = f.add_var("in" + std::to_string(i), c.args[i]);
    args.push_back(b.emit(ir::Opcode::LoadVar, c.args[i], {}, 0, 0, var));
  }
  uint32_t out = f.add_var("out", c.type);
  ir::ValueId v = append_op(f, c, args);
  b.emit(ir::Opcode::StoreVar, ir::Type::Void, {v}, 0, 0, out);
  b.ret();
  return v;
}

}  // namespace gpurc::backend::test
