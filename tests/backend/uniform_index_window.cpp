// load_uniform_idx's checked windows (backend_x64/uniform_indexed.cpp,
// thirteenth session) on every host tier against the IR interpreter: loads
// of one lane-equal offset at displacements up to 12 bytes apart share one
// bounds check, and when that check fails (the offset near or past the end
// of the block, no block) the window's words are copied into the frame, in
// the block or 0 each, and the later loads read the copy. Offsets at every
// byte around the end of a block whose size is not a multiple of 16, huge
// offsets, the loads in any order, a load just outside the window after it
// (it must not take the copy's pointer for the offset), a second window of
// the same offset, and a constant offset with and without a uniform block.
#include <doctest/doctest.h>

#include <cstring>

#include "compare.h"

namespace gpurc_test_backend_uniform_index_window {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::backend::test;
using ir::Opcode;
using ir::Type;

namespace {

constexpr uint32_t kBlockBytes = 52;

// Vars: one per load (f32 bits as i32 vars would do as well). The offset is
// the block's first word (lane-equal: a load_uniform) or a constant.
ir::Function window_function(bool const_offset, uint32_t konst, bool contract) {
  ir::Function f;
  const uint32_t disps[] = {12, 0, 8, 4, 16, 4, 8, 2};
  for (size_t i = 0; i < sizeof disps / sizeof disps[0]; ++i) f.add_var("o" + std::to_string(i), Type::I32);
  f.uniform_bytes = kBlockBytes;
  f.unlaunched_lanes_free = contract;
  const ir::BlockId entry = f.add_block("entry");
  ir::Builder b(f);
  b.set_block(entry);
  const ir::ValueId off = const_offset ? b.i32(konst) : b.load_uniform(Type::I32, 0);
  std::vector<ir::ValueId> loads;
  // The first four: one window [0, 12] (opened by the load of 12); a select
  // and a compare between them leave the check in place.
  loads.push_back(b.load_uniform_idx(Type::I32, off, disps[0]));
  loads.push_back(b.load_uniform_idx(Type::I32, off, disps[1]));
  auto big = b.icmp(ir::IntPred::Ugt, loads[1], b.i32(1000));
  auto picked = b.select(big, loads[0], loads[1]);
  loads.push_back(b.load_uniform_idx(Type::I32, off, disps[2]));
  loads.push_back(b.load_uniform_idx(Type::I32, off, disps[3]));
  // Outside the window: checks on its own (edx may hold the copy's pointer).
  loads.push_back(b.load_uniform_idx(Type::I32, off, disps[4]));
  // A second window [4, 8] of the same offset, then a displacement 2 away
  // from it (not a multiple of 4 from the window: alone).
  loads.push_back(b.load_uniform_idx(Type::I32, off, disps[5]));
  loads.push_back(b.load_uniform_idx(Type::I32, off, disps[6]));
  loads.push_back(b.load_uniform_idx(Type::I32, off, disps[7]));
  for (size_t i = 0; i < loads.size(); ++i) store_var(b, uint32_t(i), i == 1 ? picked : loads[i]);
  b.ret();
  f.compute_preds();
  return f;
}

}  // namespace

TEST_CASE("backend: load_uniform_idx windows around the end of the block match the interpreter") {
  std::mt19937_64 rng(1313);
  std::vector<uint32_t> offsets;
  for (uint32_t o = 0; o <= kBlockBytes + 8; ++o) offsets.push_back(o);
  for (uint32_t o : {0x7FFFFFFFu, 0x80000000u, 0xFFFFFFF4u, 0xFFFFFFFCu, 0xFFFFFFFFu}) offsets.push_back(o);
  int runs = 0;
  for (bool contract : {true, false})
    for (uint32_t o : offsets) {
      ir::Function f = window_function(false, 0, contract);
      REQUIRE(ir::verify(f) == "");
      RunSpec s;
      s.vars.resize(f.vars_bytes());
      fill_random(s.vars, rng);
      s.uniforms.resize(kBlockBytes);
      fill_random(s.uniforms, rng);
      std::memcpy(s.uniforms.data(), &o, 4);
      s.entry_mask = o % 3 == 0 ? ~0u : 0x00F0F000u | (1u << (o % 32));
      CAPTURE(contract);
      CAPTURE(o);
      check_all_tiers(f, s, "uniform window, offset from the block");
      ++runs;
    }
  // A constant offset: with a block (every offset above) and without one
  // (the null test's path: every load reads 0).
  for (uint32_t o : {0u, 36u, 40u, 41u, 44u, 48u, 60u}) {
    ir::Function f = window_function(true, o, true);
    REQUIRE(ir::verify(f) == "");
    for (bool block : {true, false}) {
      RunSpec s;
      s.vars.resize(f.vars_bytes());
      fill_random(s.vars, rng);
      if (block) {
        s.uniforms.resize(kBlockBytes);
        fill_random(s.uniforms, rng);
      }
      CAPTURE(o);
      CAPTURE(block);
      check_all_tiers(f, s, "uniform window, constant offset");
      ++runs;
    }
  }
  CHECK(runs == 2 * int(kBlockBytes + 9 + 5) + 7 * 2);
}

}  // namespace gpurc_test_backend_uniform_index_window
