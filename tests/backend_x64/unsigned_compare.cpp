// AVX2's unsigned 32-bit compares with 0/1 lanes go through the unsigned
// maximum (lower_int.cpp: a < b is max(a, b) != a, ...): three ops where the
// sign flips took four or five. Every unsigned predicate, of two lane vars
// and of a var and a uniform (Tesla's i < n), with lanes at the sign
// boundary, at 0 and at the top, equal and random, against the interpreter
// on every tier of the host.
#include <doctest/doctest.h>

#include <random>
#include <string>

#include "../backend/compare.h"
#include "ir/builder.h"

namespace gpurc_test_backend_x64_unsigned_compare {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::backend::test;
using ir::IntPred;
using ir::Opcode;
using ir::Type;

TEST_CASE("x64 jit: unsigned compares with 0/1 lanes through the unsigned maximum, exactly") {
  ir::Function f;
  f.add_block("entry");
  f.uniform_bytes = 4;
  ir::Builder b(f);
  const uint32_t xa = f.add_var("a", Type::I32), xb = f.add_var("b", Type::I32);
  const ir::ValueId a = b.emit(Opcode::LoadVar, Type::I32, {}, 0, 0, xa);
  const ir::ValueId bv = b.emit(Opcode::LoadVar, Type::I32, {}, 0, 0, xb);
  const ir::ValueId n = b.load_uniform(Type::I32, 0);
  for (IntPred p : {IntPred::Ult, IntPred::Ule, IntPred::Ugt, IntPred::Uge})
    for (ir::ValueId rhs : {bv, n}) {
      b.emit(Opcode::StoreVar, Type::Void, {b.icmp(p, a, rhs)}, 0, 0, f.add_var("r", Type::I1));
      b.emit(Opcode::StoreVar, Type::Void, {b.icmp(p, rhs, a)}, 0, 0, f.add_var("s", Type::I1));
    }
  b.ret();
  REQUIRE(ir::verify(f) == "");
  static const uint32_t kEdges[] = {0u, 1u, 0x7fffffffu, 0x80000000u, 0x80000001u, 0xfffffffeu, 0xffffffffu, 5u};
  std::mt19937_64 rng(1613);
  for (Tier tier : host_tiers()) {
    std::string err;
    JitOptions o;
    o.tier = tier;
    auto cf = compile(f, o, &err);
    REQUIRE_MESSAGE(cf, err);
    if (std::string(tier_name(tier)) == "jit-avx2") CHECK(cf->disassemble().find("vpmaxud") != std::string::npos);
    for (int round = 0; round < 24; ++round) {
      RunSpec s;
      s.vars.resize(f.vars_bytes());
      fill_random(s.vars, rng);
      s.uniforms.resize(4);
      const uint32_t u = round < 8 ? kEdges[round] : uint32_t(rng());
      for (int i = 0; i < 4; ++i) s.uniforms[size_t(i)] = uint8_t(u >> (8 * i));
      fill_compare_pair(s, f, xa, xb, kEdges, round, 3, rng);
      const std::string d = compare_with_interpreter(f, s, tier);
      CHECK_MESSAGE(d.empty(), tier_name(tier) << ": round " << round << ": " << d);
    }
  }
}

}  // namespace gpurc_test_backend_x64_unsigned_compare
