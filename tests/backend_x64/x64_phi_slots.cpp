// A phi at the join of a diamond's short side shares the slot of its operand
// from the branching block (backend_x64/emitter.cpp, coalesce_phi_slots),
// under the unlaunched-lanes contract: the edge that skips the other side
// copies nothing (Tesla's MAD: the fast path's sum is the phi's value unless
// a lane needs the exact block). Against the interpreter on every tier the
// host has, with the short side taken and skipped, random entry masks, and
// the shapes that must keep their copy: the operand read after the other
// side wrote the phi, or read at the join, and functions without the
// contract. (Named to sort after x64_daz_compares.cpp: see there.)
#include <doctest/doctest.h>

#include <random>
#include <sstream>

#include "../backend/compare.h"
#include "backend_x64/jit.h"
#include "tests/backend_x64/tier_compile.h"
#include "ir/builder.h"

namespace gpurc_test_backend_x64_x64_phi_slots {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::backend::test;
using ir::Opcode;
using ir::Type;

namespace {

enum class Shape {
  Plain,           // v read by Q's select only: the phi takes v's slot
  ReadAfter,       // Q reads v after the select that writes the phi
  ReadAtJoin,      // the join reads v beside the phi
};

// entry: v = a * b + c; if any(lanes with a odd) -> side; join: p = phi(v, u).
// side: u = select(a odd, v ^ 0x5555, b).
ir::Function diamond(Shape shape, bool contract) {
  ir::Function f;
  for (const char* n : {"a", "b", "c", "out", "out2"}) f.add_var(n, Type::I32);
  f.unlaunched_lanes_free = contract;
  const ir::BlockId entry = f.add_block("entry"), side = f.add_block("side"), join = f.add_block("join");
  ir::Builder b(f);
  b.set_block(entry);
  auto var = [&](uint32_t i) { return b.emit(Opcode::LoadVar, Type::I32, {}, 0, 0, i); };
  auto a = var(0), bb = var(1), c = var(2);
  auto v = b.iadd(b.imul(a, bb), c);
  auto odd = b.icmp(ir::IntPred::Ne, b.and_(a, b.i32(1)), b.i32(0));
  b.cond_br(b.emit(Opcode::Any, Type::I1, {odd, b.emit(Opcode::EntryMask, Type::I1, {})}, 0, 0, 0), side, join);
  b.set_block(side);
  auto u = b.select(odd, b.xor_(v, b.i32(0x5555)), bb);
  if (shape == Shape::ReadAfter) b.emit(Opcode::StoreVar, Type::Void, {b.iadd(v, b.i32(7))}, 0, 0, 4);
  b.br(join);
  b.set_block(join);
  f.compute_preds();
  auto p = b.emit(Opcode::Phi, Type::I32, {v, u});
  b.emit(Opcode::StoreVar, Type::Void, {p}, 0, 0, 3);
  if (shape == Shape::ReadAtJoin) b.emit(Opcode::StoreVar, Type::Void, {b.iadd(v, b.i32(9))}, 0, 0, 4);
  b.ret();
  f.compute_preds();
  REQUIRE(ir::verify(f) == "");
  return f;
}

// Warp-wide copies between two frame slots in an AVX2 listing: a load of
// ymm0 from r12 + offset (no lane register) and its store right after.
size_t slot_copies(const std::string& text) {
  std::istringstream in(text);
  std::string line, prev;
  size_t n = 0;
  while (std::getline(in, line)) {
    const bool load = prev.find("vmovdqu ymm0, [r12+") != std::string::npos && prev.find("r14") == std::string::npos;
    if (load && line.find("vmovdqu [r12+") != std::string::npos && line.find("], ymm0") != std::string::npos &&
        line.find("r14") == std::string::npos)
      ++n;
    prev = line;
  }
  return n;
}

}  // namespace

TEST_CASE("x64 jit: a diamond's phi shares its operand's slot, exactly") {
  for (Shape shape : {Shape::Plain, Shape::ReadAfter, Shape::ReadAtJoin})
    for (bool contract : {true, false}) {
      CAPTURE(int(shape));
      CAPTURE(contract);
      ir::Function f = diamond(shape, contract);
      // AVX2 listing: the edge entry -> join copies v into the phi's slot
      // (four 32-byte moves, unmasked under the contract) unless they share it.
      const std::string text = gpurc::test::compile_for_tier(f, x64::Tier::Avx2)->disassemble();
      if (contract) CHECK_MESSAGE((slot_copies(text) == 0) == (shape == Shape::Plain), text);
      std::mt19937_64 rng(700 + 10 * int(shape) + contract);
      const int runs = std::getenv("GPURC_TEST_LIGHT") ? 40 : 200;
      for (int k = 0; k < runs; ++k) {
        RunSpec s;
        s.vars.resize(f.vars_bytes());
        fill_random(s.vars, rng);
        // Some runs with every a even: the side block is skipped.
        if (k % 3 == 0)
          for (unsigned l = 0; l < 32; ++l) set_lane(s.vars, f, 0, l, uint32_t(rng()) & ~1u);
        s.entry_mask = k % 4 == 3 ? uint32_t(rng()) | 1u : ~0u;
        CAPTURE(k);
        check_all_tiers(f, s, "phi slots");
      }
    }
}

}  // namespace gpurc_test_backend_x64_x64_phi_slots
