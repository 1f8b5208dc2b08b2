// Random, unverified IR over every opcode and field value: for text round
// trips and for robustness (nothing may crash on it).
#pragma once
#include <random>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace irtest {
using namespace gpurc::ir;

inline std::string rand_name(std::mt19937_64& rng) {
  static const char chars[] = "abcXYZ_09 \"\\\n\t\x7f\xc3\xa9.:;%#[]";
  std::string s;
  int n = int(rng() % 6);
  for (int i = 0; i < n; ++i) s += chars[rng() % (sizeof(chars) - 1)];
  return s;
}

// Random functions over every opcode and every field value: not verified IR,
// but everything the printer must carry.
// acyclic: successors only point to later blocks (so the function terminates).
inline Function random_function(std::mt19937_64& rng, bool acyclic = false) {
  Function f;
  f.name = rand_name(rng);
  int nb = 1 + int(rng() % 5);
  for (int i = 0; i < nb; ++i) f.add_block(rng() % 2 ? rand_name(rng) : std::string());
  int nv = int(rng() % 4);
  for (int i = 0; i < nv; ++i) f.add_var(rand_name(rng), Type(1 + rng() % 8));
  f.uniform_bytes = uint32_t(rng() % 3 == 0 ? 0 : rng() % 100000);
  std::vector<ValueId> values;
  for (BlockId b = 0; b < BlockId(nb); ++b) {
    int n = int(rng() % 12);
    for (int k = 0; k < n; ++k) {
      Inst in;
      do in.op = Opcode(rng() % kNumOpcodes); while (op_info(in.op).terminator);
      in.type = Type(rng() % 9);
      in.attr = uint8_t(rng() % 4 == 0 ? rng() : rng() % 12);
      in.fflags = rng() % 3 == 0 ? uint32_t(rng()) : rng() % 2 ? uint32_t(rng() % 256) : 0;
      in.imm = rng() % 3 == 0 ? rng() : rng() % 16;
      in.uniform = rng() % 4 == 0;
      in.block = b;
      int na = values.empty() ? 0 : int(rng() % 4);
      for (int a = 0; a < na; ++a) in.args.push_back(values[rng() % values.size()]);
      if (rng() % 8 == 0) f.insts.push_back(Inst{});  // a removed instruction: id gap
      f.insts.push_back(in);
      ValueId v = ValueId(f.insts.size() - 1);
      f.blocks[b].insts.push_back(v);
      if (in.type != Type::Void) values.push_back(v);
    }
    if (rng() % 6 == 0) {  // no terminator, maybe successors anyway
      if (rng() % 2 && !acyclic) f.blocks[b].succs.push_back(BlockId(rng() % nb));
      continue;
    }
    Inst t;
    const Opcode terms[] = {Opcode::Br, Opcode::CondBr, Opcode::Switch, Opcode::Barrier, Opcode::Return, Opcode::Unreachable};
    t.op = terms[rng() % 6];
    t.block = b;
    if ((t.op == Opcode::CondBr || t.op == Opcode::Switch) && !values.empty()) t.args.push_back(values[rng() % values.size()]);
    int ns = t.op == Opcode::Return || t.op == Opcode::Unreachable ? 0 : 1 + int(rng() % 3);
    if (acyclic && b + 1 == BlockId(nb)) t.op = Opcode::Return, ns = 0;
    for (int s = 0; s < ns; ++s)
      f.blocks[b].succs.push_back(acyclic ? BlockId(b + 1 + rng() % (nb - b - 1)) : BlockId(rng() % nb));
    f.insts.push_back(t);
    f.blocks[b].insts.push_back(ValueId(f.insts.size() - 1));
  }
  // Phis get operands listed per predecessor (print shows b? for extra ones).
  f.compute_preds();
  return f;
}

}  // namespace irtest
