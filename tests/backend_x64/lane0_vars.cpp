// Lane-0 vars (eighteenth session, Emitter::plan_lane0_var in
// backend_x64/memory_fast.cpp, the warp loop's lane-0 entry in
// warp_loop.cpp): an index var read only by indexed accesses with a run
// flag is written by the warp loop as lane 0 alone for a call's later warps
// when the call's descriptor writes it as base + lane; each path of those
// accesses that reads more lanes (the full check, the scattered paths, the
// fallback and its helper) first writes lanes 0..31 as lane 0 + l. Runs of
// several warps in one run_warps call against the interpreter warp by warp
// (status, stopping warp, fault lane and address, memory): descriptors with
// the index var first, second, written as base + lane, alike in every lane,
// in reverse, masked, and overwritten by a later entry; warps whose spans
// lie in the window, past it (the helper's path), past the memory (faults)
// and at indices near 2^31 (the full check); a function whose strip reads
// the var too (no lane-0 writes). Then the var's lanes after a call: only
// lane 0 follows the warps.
#include <doctest/doctest.h>

#include <cstring>

#include "../backend/compare.h"
#include "backend_x64/jit.h"
#include "tests/backend_x64/tier_compile.h"

namespace gpurc_test_backend_x64_lane0_vars {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::backend::test;
using ir::Opcode;
using ir::Type;

namespace {

constexpr uint64_t kLane0MemBase = 0x10000;  // TestMemory's base
constexpr size_t kLane0MemBytes = 4096;

alignas(64) uint32_t g_lane0_iota[32];
alignas(64) uint32_t g_lane0_zero[32];
alignas(64) uint32_t g_lane0_reverse[32];
alignas(64) uint32_t g_lane0_keep[32];

// c[i] = a[i] + b[i] (a, b, c at byte 0, 1024, 2048 of the memory) with i
// the var "i"; var "j" is another lane var; with `strip_reads_i`, a strip op
// reads i too (c[i] = a[i] + b[i] + float(i)): then i is not a lane-0 var.
ir::Function lane0_function(bool strip_reads_i) {
  ir::Function f;
  f.add_var("j", Type::I32);
  f.add_var("i", Type::I32);
  f.add_block("entry");
  ir::Builder b(f);
  auto i = b.emit(Opcode::LoadVar, Type::I32, {}, 0, 0, 1);
  auto mask = b.entry_mask();
  auto at = [&](uint64_t off) { return b.iadd(b.i64(kLane0MemBase + off), b.shl(b.zext(Type::I64, i), b.i32(2))); };
  auto x = b.load(Type::I32, ir::Space::Global, ir::AddrClass::Random, at(0), mask);
  auto y = b.load(Type::I32, ir::Space::Global, ir::AddrClass::Random, at(1024), mask);
  auto sum = b.fadd(b.bitcast(Type::F32, x), b.bitcast(Type::F32, y));
  if (strip_reads_i) sum = b.fadd(sum, b.itof(Type::F32, ir::Sign::Signed, i));
  b.store(ir::Space::Global, ir::AddrClass::Random, at(2048), b.bitcast(Type::I32, sum), mask);
  b.ret();
  f.compute_preds();
  REQUIRE(ir::verify(f) == "");
  return f;
}

struct Descriptor {
  const char* name;
  std::vector<ir::LaneVarInit> vars;  // var 0 = j, 1 = i
};

std::vector<Descriptor> lane0_descriptors(const ir::Function& f) {
  auto entry = [&](uint32_t var, const uint32_t* add, const uint32_t* keep = nullptr) {
    ir::LaneVarInit v;
    v.offset = uint32_t(f.var_offset(var));
    v.lane_add = reinterpret_cast<const uint8_t*>(add);
    v.lane_keep = reinterpret_cast<const uint8_t*>(keep);
    return v;
  };
  return {
      {"i", {entry(1, g_lane0_iota)}},
      {"j i", {entry(0, g_lane0_iota), entry(1, g_lane0_iota)}},
      {"i j", {entry(1, g_lane0_iota), entry(0, g_lane0_zero)}},
      {"i alike", {entry(1, g_lane0_zero)}},
      {"i reversed", {entry(1, g_lane0_reverse)}},
      {"i masked", {entry(1, g_lane0_iota, g_lane0_keep)}},
      {"i then i alike", {entry(1, g_lane0_iota), entry(1, g_lane0_zero)}},
      {"i alike then i", {entry(1, g_lane0_zero), entry(1, g_lane0_iota)}},
  };
}

}  // namespace

TEST_CASE("x64 lane-0 vars: warps of one call against the interpreter, every descriptor, every path") {
  for (unsigned l = 0; l < 32; ++l) {
    g_lane0_iota[l] = l;
    g_lane0_zero[l] = 0;
    g_lane0_reverse[l] = 31 - l;
    g_lane0_keep[l] = l == 5 ? 0 : ~0u;
  }
  std::mt19937_64 rng(183);
  for (bool strip_reads_i : {false, true}) {
    const ir::Function f = lane0_function(strip_reads_i);
    auto interp = ir::make_ir_interpreter(f);
    for (const Descriptor& d : lane0_descriptors(f)) {
      for (x64::Tier tier : {x64::Tier::Avx512, x64::Tier::Avx2}) {
        if (!x64::host_supports(tier)) continue;
        auto jit = test::compile_warp_loop(f, tier);
        for (int k = 0; k < 16; ++k) {
          // Per warp and var a base: inside the 256 elements, past the
          // window (the helper's path: the window holds the first 2560
          // bytes), past the memory (c faults), near 2^31 (the full check).
          const size_t warps = 2 + rng() % 6, nv = d.vars.size();
          std::vector<uint64_t> bases(warps * nv);
          for (uint64_t& base : bases) {
            switch (rng() % 12) {
              case 0: base = 64 + rng() % 160; break;            // c past the window, inside the memory
              case 1: base = 256 + 200 + rng() % 64; break;      // past the memory
              case 2: base = 0x7fffffe0u + rng() % 64; break;    // lanes past 2^31
              default: base = rng() % (256 - 32); break;
            }
          }
          std::vector<uint8_t> init(kLane0MemBytes);
          fill_random(init, rng);
          TestMemory want_mem(init.size()), got_mem(init.size());
          want_mem.bytes = init;
          got_mem.bytes = init;
          const WarpsOutcome want =
              run_warps_reference(f, *interp, want_mem, warps, [&](std::vector<uint8_t>& vars, size_t w) {
                for (size_t e = 0; e < nv; ++e) {
                  const ir::LaneVarInit& v = d.vars[e];
                  const auto* add = reinterpret_cast<const uint32_t*>(v.lane_add);
                  const auto* keep = reinterpret_cast<const uint32_t*>(v.lane_keep);
                  for (unsigned l = 0; l < 32; ++l) {
                    const uint32_t x = (uint32_t(bases[w * nv + e]) + add[l]) & (keep ? keep[l] : ~0u);
                    std::memcpy(vars.data() + v.offset + 4 * l, &x, 4);
                  }
                }
              });
          std::vector<uint64_t> jframe((jit->frame_bytes() + 7) / 8 + 8, 0xA5A5A5A5DEADBEEFull);
          std::vector<uint8_t> vars(f.vars_bytes() + 64);
          ir::WarpContext ctx;
          ctx.vars = vars.data();
          ctx.frame = reinterpret_cast<uint8_t*>(jframe.data());
          ctx.entry_mask = ~0u;
          ctx.budget = 1ll << 40;
          // First a call with i written as base + lane on the same frame and
          // vars (what it leaves there must not steer the call under test).
          TestMemory scratch(kLane0MemBytes);
          ctx.memory = &scratch;
          ctx.windows[0] = ir::MemWindow{scratch.base, scratch.bytes.size(), scratch.bytes.data()};
          const ir::LaneVarInit warm = lane0_descriptors(f)[0].vars[0];
          const uint64_t warm_bases[2] = {3, 40};
          REQUIRE(run_warp_loop(*jit, ctx, &warm, 1, warm_bases, 2).status == ir::RunStatus::Done);
          ctx.memory = &got_mem;
          ctx.windows[0] = ir::MemWindow{got_mem.base, 2560, got_mem.bytes.data()};
          const WarpsOutcome got = run_warp_loop(*jit, ctx, d.vars.data(), nv, bases.data(), warps);
          CHECK_MESSAGE(warps_differ(want, got, want_mem, got_mem) == "",
                        (tier == x64::Tier::Avx512 ? "avx512" : "avx2")
                            << " descriptor " << d.name << (strip_reads_i ? " (strip reads i)" : "") << " case " << k
                            << ": " << warps_differ(want, got, want_mem, got_mem));
        }
      }
    }
  }
}

TEST_CASE("x64 lane-0 vars: a call's later warps write lane 0 of the index var alone") {
  // After a call of three warps inside the window, lane 0 of i is the last
  // warp's base and lane 1 still the first warp's base + 1 -- unless a strip
  // reads i, or with GPURC_LANE0_VARS=0 (then every lane is the last warp's).
  for (unsigned l = 0; l < 32; ++l) g_lane0_iota[l] = l;
  for (bool strip_reads_i : {false, true}) {
    const ir::Function f = lane0_function(strip_reads_i);
    for (x64::Tier tier : {x64::Tier::Avx512, x64::Tier::Avx2}) {
      if (!x64::host_supports(tier)) continue;
      std::string err;
      auto jit = x64::compile(f, x64::JitOptions{tier}, &err);
      REQUIRE_MESSAGE(jit, err);
      TestMemory mem(kLane0MemBytes);
      std::vector<uint64_t> jframe((jit->frame_bytes() + 7) / 8 + 8, 0);
      std::vector<uint8_t> vars(f.vars_bytes() + 64);
      ir::WarpContext ctx;
      ctx.vars = vars.data();
      ctx.frame = reinterpret_cast<uint8_t*>(jframe.data());
      ctx.entry_mask = ~0u;
      ctx.budget = 1ll << 40;
      ctx.memory = &mem;
      ctx.windows[0] = ir::MemWindow{mem.base, mem.bytes.size(), mem.bytes.data()};
      ir::LaneVarInit lv;
      lv.offset = uint32_t(f.var_offset(1));
      lv.lane_add = reinterpret_cast<const uint8_t*>(g_lane0_iota);
      const uint64_t bases[3] = {10, 50, 90};
      const WarpsOutcome got = run_warp_loop(*jit, ctx, &lv, 1, bases, 3);
      REQUIRE(got.status == ir::RunStatus::Done);
      uint32_t lane0 = 0, lane1 = 0;
      std::memcpy(&lane0, vars.data() + lv.offset, 4);
      std::memcpy(&lane1, vars.data() + lv.offset + 4, 4);
      const std::string name = std::string(tier == x64::Tier::Avx512 ? "avx512" : "avx2") +
                               (strip_reads_i ? ", strip reads i" : "");
      CHECK_MESSAGE(lane0 == 90, name);
      CHECK_MESSAGE(lane1 == (strip_reads_i ? 91u : 11u), name << ": lane 1 = " << lane1);
    }
  }
}

}  // namespace gpurc_test_backend_x64_lane0_vars
