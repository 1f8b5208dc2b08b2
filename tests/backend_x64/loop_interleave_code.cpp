// Which form a single-block loop takes (backend_x64/loops.cpp): a
// latency-bound loop (one long loop-carried chain) whose phis fit in half
// the registers runs two strips per iteration (strip-interleaved: the
// partner strip addressed through rbp), a throughput-bound one (many
// independent chains, the bench's ceiling kernels) stays strip-outer; both
// match the interpreter.
#include <doctest/doctest.h>

#include <random>

#include "../backend/compare.h"
#include "ir/builder.h"

namespace gpurc_test_backend_x64_loop_interleave_code {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::backend::test;
using ir::Opcode;
using ir::Type;

namespace {

// chains phis, each advanced by `depth` ops per iteration (imul + xor with
// invariants from vars); n = (u[0] & 15) + 1 iterations.
ir::Function chain_loop(int chains, int depth, bool imul) {
  ir::Function f;
  for (int c = 0; c < chains; ++c) f.add_var("h" + std::to_string(c), Type::I32);
  f.add_var("k", Type::I32);
  f.uniform_bytes = 4;
  auto entry = f.add_block("entry"), loop = f.add_block("loop"), exit = f.add_block("exit");
  ir::Builder b(f);
  b.set_block(entry);
  std::vector<ir::ValueId> init;
  for (int c = 0; c < chains; ++c) init.push_back(load_var(b, uint32_t(c)));
  auto k = load_var(b, uint32_t(chains));
  auto n = b.binary(Opcode::IAdd, b.binary(Opcode::And, b.load_uniform(Type::I32, 0), b.i32(15)), b.i32(1));
  auto zero = b.i32(0);
  b.br(loop);
  b.set_block(loop);
  std::vector<ir::ValueId> h;
  for (int c = 0; c < chains; ++c) h.push_back(phi(b, Type::I32, {init[size_t(c)], init[size_t(c)]}));
  auto i = phi(b, Type::I32, {zero, zero});
  b.emit(Opcode::Budget, Type::Void, {}, 0, 0, 1);
  std::vector<ir::ValueId> next = h;
  for (int d = 0; d < depth; ++d)
    for (int c = 0; c < chains; ++c)
      next[size_t(c)] = imul ? b.binary(Opcode::Xor, b.binary(Opcode::IMul, next[size_t(c)], k), b.i32(0x9E3779B9u))
                             : b.binary(Opcode::IAdd, next[size_t(c)], k);
  auto i1 = b.binary(Opcode::IAdd, i, b.i32(1));
  auto more = b.icmp(ir::IntPred::Ult, i1, n);
  b.cond_br(more, loop, exit);
  for (int c = 0; c < chains; ++c) f.insts[h[size_t(c)]].args[1] = next[size_t(c)];
  f.insts[i].args[1] = i1;
  b.set_block(exit);
  for (int c = 0; c < chains; ++c) store_var(b, uint32_t(c), next[size_t(c)]);
  b.ret();
  f.compute_preds();
  return f;
}

template <class Code>
bool interleaved(const Code& cf) {
  // The interleaved loop's set-up: the partner strip's offset in rbp.
  return cf.disassemble().find("xor ebp, 0x") != std::string::npos;
}

}  // namespace

TEST_CASE("x64 jit: latency-bound loops interleave strips, throughput-bound loops stay strip-outer") {
  struct Case {
    int chains, depth;
    bool imul, want_interleaved;
  };
  for (const Case& c : {Case{1, 6, true, true}, Case{2, 4, true, true}, Case{8, 8, false, false},
                        Case{12, 4, false, false}}) {
    ir::Function f = chain_loop(c.chains, c.depth, c.imul);
    REQUIRE(ir::verify(f) == "");
    std::mt19937_64 rng(uint64_t(c.chains * 100 + c.depth));
    for (Tier t : host_tiers()) {
      JitOptions o;
      o.tier = t;
      std::string err;
      auto cf = compile(f, o, &err);
      REQUIRE_MESSAGE(cf, err);
      // AVX2's halves (5 registers) cannot hold both phis (the chain and
      // the counter) next to the body's values: it stays strip-outer.
      CHECK_MESSAGE(interleaved(*cf) == (c.want_interleaved && std::string(tier_name(t)) == "jit-avx512"),
                    "chains " << c.chains << " depth " << c.depth << " on " << std::string(tier_name(t)));
    }
    for (uint32_t mask : {~0u, 1u, 0x80000000u, 0x00F00000u, 0x0000F000u}) {
      RunSpec s;
      s.vars.resize(f.vars_bytes());
      fill_random(s.vars, rng);
      s.uniforms.resize(4);
      const uint32_t n = uint32_t(rng());
      std::memcpy(s.uniforms.data(), &n, 4);
      s.entry_mask = mask;
      s.budget = 1 << 20;
      check_all_tiers(f, s, "chains " + std::to_string(c.chains) + " mask " + std::to_string(mask));
    }
  }
}

TEST_CASE("x64 jit: a one-phi latency-bound loop interleaves on both tiers (AVX2: two pairs of strips)") {
  // i' = (i * 1) * 1 + 1 (two multiplies on the chain), t = i' ^ k stored
  // every iteration, n = (u[0] & 15) + 1: one phi, so it fits AVX2's halves
  // of 5 registers too, and AVX2 runs the pair of the first launched lane,
  // then the other pair for the same count.
  ir::Function f;
  f.add_var("k", Type::I32);
  f.add_var("trace", Type::I32);
  f.add_var("out", Type::I32);
  f.uniform_bytes = 4;
  auto entry = f.add_block("entry"), loop = f.add_block("loop"), exit = f.add_block("exit");
  ir::Builder b(f);
  b.set_block(entry);
  auto k = load_var(b, 0);
  auto n = b.binary(Opcode::IAdd, b.binary(Opcode::And, b.load_uniform(Type::I32, 0), b.i32(15)), b.i32(1));
  auto zero = b.i32(0);
  b.br(loop);
  b.set_block(loop);
  auto i = phi(b, Type::I32, {zero, zero});
  b.emit(Opcode::Budget, Type::Void, {}, 0, 0, 2);
  auto one = b.i32(1);
  auto i1 = b.binary(Opcode::IAdd, b.binary(Opcode::IMul, b.binary(Opcode::IMul, i, one), one), one);
  store_var(b, 1, b.binary(Opcode::Xor, i1, k));
  auto more = b.icmp(ir::IntPred::Ult, i1, n);
  b.cond_br(more, loop, exit);
  f.insts[i].args[1] = i1;
  b.set_block(exit);
  store_var(b, 2, i1);
  b.ret();
  f.compute_preds();
  REQUIRE(ir::verify(f) == "");
  for (Tier t : host_tiers()) {
    JitOptions o;
    o.tier = t;
    std::string err;
    auto cf = compile(f, o, &err);
    REQUIRE_MESSAGE(cf, err);
    CHECK_MESSAGE(interleaved(*cf), std::string(tier_name(t)));
  }
  std::mt19937_64 rng(31);
  for (uint32_t mask : {~0u, 1u, 0x80u, 0x100u, 0x10000u, 0x01000000u, 0x80000000u, 0x00FF0000u, 0x0F0000F0u})
    for (int run = 0; run < 3; ++run) {
      RunSpec s;
      s.vars.resize(f.vars_bytes());
      fill_random(s.vars, rng);
      s.uniforms.resize(4);
      const uint32_t n = uint32_t(rng());
      std::memcpy(s.uniforms.data(), &n, 4);
      s.entry_mask = mask;
      s.budget = run == 2 ? int64_t(rng() % 12) : 1 << 20;  // run 2 may stop inside the loop
      check_all_tiers(f, s, "mask " + std::to_string(mask) + " run " + std::to_string(run));
    }
}

}  // namespace gpurc_test_backend_x64_loop_interleave_code
