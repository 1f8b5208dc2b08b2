// Selects reading a compare's mask kept in k5..k7 (AVX-512; backend_x64,
// Emitter::kmask_of_, select_bits; docs/backend_x64.md, "Issue 13, sixteenth
// session"): a compare whose 0/1 lanes are made also keeps its mask in one
// of three k registers, round robin, and a later select of it reads the
// mask instead of testing the lanes. Checked against the interpreter: more
// compares than k registers before their selects (evicted masks), selects
// of compares made before a helper call (which clobbers k registers), a
// memory access (whose fallback path runs deferred ops), a store_var, a
// block boundary or a loop's back edge; compares of 16-bit fields, 0/1
// lanes also stored; random masks.
#include <doctest/doctest.h>

#include "backend_common/plan.h"
#include "compare.h"

namespace gpurc_test_backend_kmask_selects {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::backend;
using namespace gpurc::backend::test;
using ir::Opcode;
using ir::Type;

namespace {

constexpr uint64_t kGuestBase = 0x10000;  // TestMemory's base

// Random straight code over `pool`: arithmetic, compares (kept in `cmps`),
// selects of any earlier compare of the pool's block or an earlier one,
// helper calls, loads, stores of compares' 0/1 lanes.
void random_ops(ir::Builder& b, std::mt19937_64& rng, std::vector<ir::ValueId>& pool, std::vector<ir::ValueId>& cmps,
                ir::ValueId mem_base, int nops, int vars) {
  auto pick = [&](const std::vector<ir::ValueId>& p) { return p[rng() % p.size()]; };
  static const Opcode ops[] = {Opcode::IAdd, Opcode::ISub, Opcode::IMul, Opcode::Xor, Opcode::And, Opcode::Or};
  for (int k = 0; k < nops; ++k) {
    const unsigned kind = unsigned(rng() % 100);
    if (kind < 25) {
      pool.push_back(b.binary(ops[rng() % std::size(ops)], pick(pool), pick(pool)));
    } else if (kind < 50) {
      ir::ValueId c;
      if (rng() % 4 == 0) {
        auto fld = b.emit(Opcode::Extract16, Type::I16, {pick(pool)}, 0, 0, rng() % 2);
        c = b.icmp(ir::IntPred(rng() % 10), fld, b.i16(uint32_t(rng() % 4)));
      } else if (rng() % 2) {
        c = b.icmp(ir::IntPred(rng() % 10), pick(pool), b.i32(uint32_t(rng() % 64)));
      } else {
        c = b.icmp(ir::IntPred(rng() % 10), pick(pool), pick(pool));
      }
      cmps.push_back(c);
    } else if (kind < 80 && !cmps.empty()) {
      // Often one of the last few compares (k5..k7, or just evicted).
      const size_t back = std::min<size_t>(cmps.size(), 1 + rng() % 5);
      auto c = rng() % 4 ? cmps[cmps.size() - back] : pick(cmps);
      pool.push_back(b.select(c, pick(pool), pick(pool)));
    } else if (kind < 86) {
      pool.push_back(b.unary(Opcode::Popcount, pick(pool)));  // a helper call
    } else if (kind < 92 && mem_base != ir::kNoValue) {
      auto off = b.binary(Opcode::Shl, b.binary(Opcode::And, pick(pool), b.i32(255)), b.i32(2));
      auto addr = b.binary(Opcode::IAdd, mem_base, b.zext(Type::I64, off));
      pool.push_back(b.load(Type::I32, ir::Space::Global, ir::AddrClass::Random, addr, b.entry_mask()));
    } else if (!cmps.empty()) {
      store_var(b, uint32_t(rng() % vars), b.zext(Type::I32, pick(cmps)));  // the 0/1 lanes
    }
  }
}

}  // namespace

TEST_CASE("backend: selects of compares kept in mask registers match the interpreter") {
  std::mt19937_64 rng(1601);
  const int programs = light() ? 80 : 400;
  for (int prog = 0; prog < programs; ++prog) {
    ir::Function f;
    f.unlaunched_lanes_free = prog % 2;
    constexpr int kVars = 6;
    for (int v = 0; v < kVars; ++v) f.add_var("v" + std::to_string(v), Type::I32);
    f.uniform_bytes = 16;
    const bool with_loop = prog % 3 == 0, with_memory = prog % 4 == 1;
    auto entry = f.add_block("entry"), mid = f.add_block("mid"), exit = f.add_block("exit");
    ir::Builder b(f);
    b.set_block(entry);
    std::vector<ir::ValueId> pool, cmps;
    for (int v = 0; v < kVars; ++v) pool.push_back(load_var(b, uint32_t(v)));
    pool.push_back(b.load_uniform(Type::I32, 8));
    const ir::ValueId mem_base = with_memory ? b.load_uniform(Type::I64, 0) : ir::kNoValue;
    random_ops(b, rng, pool, cmps, mem_base, 4 + int(rng() % 24), kVars);
    auto zero = b.i32(0);
    b.br(mid);
    b.set_block(mid);
    std::vector<ir::ValueId> phis;
    ir::ValueId i = ir::kNoValue;
    if (with_loop) {  // the back edge reaches the top with other masks in k5..k7
      for (int k = 0; k < 3; ++k) {
        auto init = pool[rng() % pool.size()];
        phis.push_back(phi(b, Type::I32, {init, init}));
      }
      i = phi(b, Type::I32, {zero, zero});
      pool.insert(pool.end(), phis.begin(), phis.end());
    }
    random_ops(b, rng, pool, cmps, mem_base, 4 + int(rng() % 24), kVars);
    if (with_loop) {
      auto i1 = b.binary(Opcode::IAdd, i, b.i32(1));
      b.cond_br(b.icmp(ir::IntPred::Ult, i1, b.i32(1 + uint32_t(rng() % 6))), mid, exit);
      f.insts[i].args[1] = i1;
      for (ir::ValueId p : phis) f.insts[p].args[1] = pool[pool.size() - 1 - rng() % 4];
    } else {
      b.br(exit);
    }
    b.set_block(exit);
    std::vector<ir::ValueId> exit_cmps;  // (the loop block's values reach here; the entry's too)
    for (ir::ValueId c : cmps)
      if (!with_loop || f.insts[c].block != mid) exit_cmps.push_back(c);
    if (exit_cmps.empty()) exit_cmps.push_back(b.icmp(ir::IntPred::Ult, pool[0], b.i32(5)));
    std::vector<ir::ValueId> exit_pool;
    for (ir::ValueId v : pool)
      if (!with_loop || f.insts[v].block != mid || f.insts[v].op == Opcode::Phi) exit_pool.push_back(v);
    random_ops(b, rng, exit_pool, exit_cmps, mem_base, 2 + int(rng() % 10), kVars);
    for (int v = 0; v < kVars; ++v)
      if (rng() % 2) store_var(b, uint32_t(v), exit_pool[exit_pool.size() - 1 - rng() % std::min<size_t>(exit_pool.size(), 6)]);
    b.ret();
    f.compute_preds();
    REQUIRE(ir::verify(f) == "");
    for (int run = 0; run < 3; ++run) {
      RunSpec s;
      s.vars.resize(f.vars_bytes());
      fill_random(s.vars, rng);
      for (size_t o = 0; o + 4 <= s.vars.size(); o += 4)
        if (rng() % 3 == 0) s.vars[o] = uint8_t(rng() % 8), s.vars[o + 1] = s.vars[o + 2] = s.vars[o + 3] = 0;  // small: compares go both ways
      s.uniforms.resize(16);
      fill_random(s.uniforms, rng);
      std::memcpy(s.uniforms.data(), &kGuestBase, 8);
      s.entry_mask = run == 0 ? ~0u : uint32_t(rng()) | 1u << (rng() % 32);
      if (with_memory) {
        s.memory = true;
        s.window = run != 2;  // run 2: every access through the fallback path
        s.memory_bytes = 4096;
        s.memory_init.resize(4096);
        fill_random(s.memory_init, rng);
      }
      check_all_tiers(f, s, "program " + std::to_string(prog) + " run " + std::to_string(run));
    }
  }
}

}  // namespace gpurc_test_backend_kmask_selects
