// load_uniform_idx (PICA200's relative c[] reads) on every host tier against
// the IR interpreter: offsets equal in every lane of a strip (the broadcast
// path) or not (the gather), inside and outside the block, offsets that wrap
// past 2^32 when the base is added, partial launches, no uniform block.
#include <doctest/doctest.h>

#include "compare.h"

namespace gpurc_test_backend_uniform_indexed {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::backend::test;
using ir::Opcode;
using ir::Type;

namespace {

// vars off (i32), out (t); out = load_uniform_idx(off, base).
ir::Function indexed_uniform_function(Type t, uint32_t base, uint32_t uniform_bytes) {
  ir::Function f;
  f.add_var("off", Type::I32);
  f.add_var("out", t);
  f.uniform_bytes = uniform_bytes;
  f.add_block("entry");
  ir::Builder b(f);
  auto off = load_var(b, 0);
  store_var(b, 1, b.load_uniform_idx(t, off, base));
  b.ret();
  return f;
}

}  // namespace

TEST_CASE("load_uniform_idx: broadcast and gather paths match the interpreter on every tier") {
  std::mt19937_64 rng(11);
  const uint32_t bytes_list[] = {64, 1616, 3, 0};
  for (Type t : {Type::I32, Type::F32})
    for (uint32_t ub : bytes_list)
      for (uint32_t base : {0u, 4u, 60u, 62u, 1600u}) {
        ir::Function f = indexed_uniform_function(t, base, ub);
        REQUIRE(ir::verify(f) == "");
        for (int pattern = 0; pattern < 8; ++pattern) {
          RunSpec s;
          s.vars.resize(f.vars_bytes());
          fill_random(s.vars, rng);
          s.uniforms.resize(std::max<uint32_t>(ub, 1));
          fill_random(s.uniforms, rng);
          const uint32_t span = ub + 16;
          uint32_t same = uint32_t(rng() % span);
          for (unsigned l = 0; l < 32; ++l) {
            uint32_t off = 0;
            switch (pattern) {
              case 0: off = same & ~3u; break;                          // uniform, aligned
              case 1: off = same; break;                                // uniform, any byte
              case 2: off = uint32_t(rng() % span); break;             // mixed
              case 3: off = (l & 1) ? same : uint32_t(rng() % span); break;
              case 4: off = 0xFFFFFFFCu - uint32_t(rng() % 8); break;   // wraps when base is added
              case 5: off = l < 16 ? same : same + 4; break;            // one strip of AVX-512 each
              case 6: off = uint32_t(rng()); break;
              default: off = 16 * uint32_t(rng() % 128); break;         // PICA200's c[index] offsets
            }
            set_lane(s.vars, f, 0, l, off);
          }
          s.entry_mask = pattern == 3 ? 0x00FF00F0u : ~0u;
          CAPTURE(ub);
          CAPTURE(base);
          CAPTURE(pattern);
          check_all_tiers(f, s, "load_uniform_idx");
          s.uniforms.clear();  // no uniform block: every lane reads 0, no fault
          check_all_tiers(f, s, "load_uniform_idx without uniforms");
        }
      }
}

// A single-block counted loop that reads a uniform (PICA200's LOOP reads its
// step i.z every iteration) runs strip by strip (backend_x64/loops.cpp); with
// no uniform block it faults at the same op as the interpreter, and a
// load_uniform_idx in the body takes the broadcast path each iteration.
TEST_CASE("load_uniform and load_uniform_idx in a strip-outer loop, with and without uniforms") {
  for (bool const_trips : {false, true}) {  // constant: the loop's load_uniform is the first uniform read
    CAPTURE(const_trips);
    ir::Function f;
    f.add_var("acc", Type::F32);
    f.add_var("n", Type::I32);
    f.uniform_bytes = 64;
    const ir::BlockId entry = f.add_block("entry"), loop = f.add_block("loop"), done = f.add_block("done");
    ir::Builder b(f);
    b.set_block(entry);
    auto acc0 = load_var(b, 0);
    auto n = const_trips ? b.i32(5) : b.binary(Opcode::And, b.load_uniform(Type::I32, 12), b.i32(15));
    auto zero = b.i32(0);
    b.br(loop);
    b.set_block(loop);
    auto i = phi(b, Type::I32, {zero, zero});
    auto acc = phi(b, Type::F32, {acc0, acc0});
    auto step = b.load_uniform(Type::I32, 8);
    auto next = b.iadd(i, b.binary(Opcode::And, step, b.i32(3)));
    auto off = b.shl(b.binary(Opcode::And, i, b.i32(7)), b.i32(2));
    auto c = b.load_uniform_idx(Type::F32, off, 16);
    auto sum = b.fadd(acc, c);
    f.insts[i].args[1] = next;
    f.insts[acc].args[1] = sum;
    b.cond_br(b.icmp(ir::IntPred::Ult, next, n), loop, done);
    b.set_block(done);
    store_var(b, 0, sum);
    b.ret();
    REQUIRE(ir::verify(f) == "");
    std::mt19937_64 rng(3);
    for (int k = 0; k < 6; ++k) {
      RunSpec s;
      s.vars.resize(f.vars_bytes());
      fill_random(s.vars, rng);
      s.uniforms.resize(64);
      fill_random(s.uniforms, rng);
      uint32_t step = 1 + k % 3;
      std::memcpy(s.uniforms.data() + 8, &step, 4);
      uint32_t trips = 3 + 2 * uint32_t(k);
      std::memcpy(s.uniforms.data() + 12, &trips, 4);
      for (unsigned l = 0; l < 32; ++l) {
        float x = float(l);
        uint32_t bits;
        std::memcpy(&bits, &x, 4);
        set_lane(s.vars, f, 0, l, bits);
      }
      for (unsigned q = 0; q < 8; ++q) {
        float x = float(q) * 0.5f;
        std::memcpy(s.uniforms.data() + 16 + 4 * q, &x, 4);
      }
      s.entry_mask = k == 5 ? 0x0F0F0F0Eu : ~0u;
      check_all_tiers(f, s, "strip loop with uniforms");
      s.uniforms.clear();
      check_all_tiers(f, s, "strip loop without uniforms (faults)");
    }
  }
}

}  // namespace gpurc_test_backend_uniform_indexed
