// Shifts by a constant count lower to the immediate forms (vpslld / vpsrld /
// vpsrad), with the interpreter's results for every mode, width and count
// (counts past the width included).
#include <doctest/doctest.h>

#include <random>

#include "../backend/compare.h"
#include "ir/builder.h"

namespace gpurc_test_backend_x64_shift_imm {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::backend::test;
using ir::Opcode;
using ir::Type;

TEST_CASE("x64 jit: shifts by a constant count use the immediate forms, exactly") {
  ir::Function f;
  f.add_block("entry");
  ir::Builder b(f);
  std::vector<uint32_t> ins;
  for (Type t : {Type::I32, Type::I16, Type::I8}) {
    const uint32_t in = f.add_var("x", t);
    ins.push_back(in);
    const ir::ValueId x = b.emit(Opcode::LoadVar, t, {}, 0, 0, in);
    for (Opcode op : {Opcode::Shl, Opcode::LShr, Opcode::AShr})
      for (ir::ShiftMode m : {ir::ShiftMode::Mask, ir::ShiftMode::Clamp})
        for (uint64_t k : {0, 1, 4, 7, 13, 15, 16, 31, 32, 33, 200}) {
          const ir::ValueId c = b.constant(Type::I32, k);
          const ir::ValueId r = b.emit(op, t, {x, c}, uint8_t(m));
          b.emit(Opcode::StoreVar, Type::Void, {r}, 0, 0, f.add_var("r", t));
        }
  }
  b.ret();
  REQUIRE(ir::verify(f) == "");
  std::mt19937_64 rng(5);
  for (Tier tier : host_tiers()) {
    std::string err;
    JitOptions o;
    o.tier = tier;
    auto cf = compile(f, o, &err);
    REQUIRE_MESSAGE(cf, err);
    const std::string text = cf->disassemble();
    // No variable-count shift is left: every count is a constant.
    CHECK(text.find("vpsllvd") == std::string::npos);
    CHECK(text.find("vpsrlvd") == std::string::npos);
    CHECK(text.find("vpsravd") == std::string::npos);
    CHECK(text.find("vpslld") != std::string::npos);
    CHECK(text.find("vpsrad") != std::string::npos);
    for (int round = 0; round < 8; ++round) {
      RunSpec s;
      s.vars.resize(f.vars_bytes());
      fill_random(s.vars, rng);
      // Sign bits set and clear in every width.
      for (uint32_t in : ins)
        for (unsigned l = 0; l < 32; l += 3) set_lane(s.vars, f, in, l, (l & 4) ? ~0ull : 0x5Aull);
      s.entry_mask = round == 0 ? ~0u : uint32_t(rng());
      const std::string d = compare_with_interpreter(f, s, tier);
      CHECK_MESSAGE(d.empty(), tier_name(tier) << ": " << d);
    }
  }
}

// An i32 arithmetic shift reads its operand's register (a scratch copy was
// made for the sign extension only narrower types need): no vpsrad from
// vector 0, which is scratch and never holds a value.
TEST_CASE("x64 jit: an i32 ashr by a constant shifts the operand's register, exactly") {
  ir::Function f;
  f.add_block("entry");
  ir::Builder b(f);
  const uint32_t in = f.add_var("x", Type::I32), out = f.add_var("r", Type::I32);
  const ir::ValueId x = b.emit(Opcode::LoadVar, Type::I32, {}, 0, 0, in);
  const ir::ValueId s = b.emit(Opcode::AShr, Type::I32, {x, b.constant(Type::I32, 31)}, uint8_t(ir::ShiftMode::Mask));
  const ir::ValueId t = b.emit(Opcode::AShr, Type::I32, {b.emit(Opcode::Xor, Type::I32, {x, s}), b.constant(Type::I32, 7)},
                               uint8_t(ir::ShiftMode::Clamp));
  b.emit(Opcode::StoreVar, Type::Void, {t}, 0, 0, out);
  b.ret();
  REQUIRE(ir::verify(f) == "");
  std::mt19937_64 rng(6);
  for (Tier tier : host_tiers()) {
    std::string err;
    JitOptions o;
    o.tier = tier;
    auto cf = compile(f, o, &err);
    REQUIRE_MESSAGE(cf, err);
    const std::string text = cf->disassemble();
    CHECK(text.find("vpsrad") != std::string::npos);
    for (size_t p = 0, e; p < text.size(); p = e + 1) {  // vpsrad ?mmD, ?mm0, imm: a copy was shifted
      e = text.find('\n', p);
      if (e == std::string::npos) e = text.size();
      const std::string line = text.substr(p, e - p);
      if (line.find("vpsrad") != std::string::npos) CHECK_MESSAGE(line.find("mm0, 0x") == std::string::npos, line);
    }
    for (int round = 0; round < 8; ++round) {
      RunSpec rs;
      rs.vars.resize(f.vars_bytes());
      fill_random(rs.vars, rng);
      rs.entry_mask = round == 0 ? ~0u : uint32_t(rng());
      const std::string d = compare_with_interpreter(f, rs, tier);
      CHECK_MESSAGE(d.empty(), tier_name(tier) << ": " << d);
    }
  }
}

}  // namespace gpurc_test_backend_x64_shift_imm
