// load_uniform_idx (PICA200's relative c[] reads) on every host tier against
// the IR interpreter: offsets equal in every lane of a strip (the broadcast
// path) or not (the gather), inside and outside the block, offsets that wrap
// past 2^32 when the base is added, partial launches, no uniform block.
#include <doctest/doctest.h>

#include "compare.h"

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
