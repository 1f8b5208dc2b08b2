// The warp loop's short way (warp_loop.cpp, nineteenth session): in a call
// whose descriptor is a function's lane-0 var alone, the later warps take
// their base from the frame (the bases pointer is the warp counter; the
// bases' end and the var's offset come from the first warp's prologue,
// emit_lane_run_flags), and the watchdog budget is reset per warp only in
// functions with budget ops. Several warps of one run_warps call against
// the interpreter warp by warp (status, stopping warp, fault lane and
// address, memory): a loop with a budget op whose every warp needs most of
// the per-warp budget (a loop that did not reset it would stop a later
// warp), a budget too small for the last warp only, faults in the first,
// a middle and the last warp (the stopping warp derived from the pointer),
// calls that start at a warp other than 0. Then the listing: the budget
// store per warp exists in the short way only with budget ops.
#include <doctest/doctest.h>

#include <cstring>
#include <random>

#include "../backend/compare.h"
#include "backend_x64/jit.h"
#include "ir/builder.h"
#include "tests/backend_x64/tier_compile.h"

namespace gpurc_test_backend_x64_warp_short_way {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::backend::test;
using ir::Opcode;
using ir::Type;

namespace {

constexpr uint64_t kShortMemBase = 0x10000;  // TestMemory's base
constexpr size_t kShortMemBytes = 8 * 1024;

// c[i] = a[i] (+ 1 per iteration of a loop of `trips` iterations with a
// budget op each, when trips > 0); a at byte 0, c at 4096; i the lane-0 var.
ir::Function short_way_function(int trips) {
  ir::Function f;
  f.add_var("i", Type::I32);
  auto entry = f.add_block("entry");
  ir::Builder b(f);
  b.set_block(entry);
  auto i = load_var(b, 0);
  auto mask = b.entry_mask();
  auto at = [&](uint64_t off) { return b.iadd(b.i64(kShortMemBase + off), b.shl(b.zext(Type::I64, i), b.i32(2))); };
  auto x = b.load(Type::I32, ir::Space::Global, ir::AddrClass::Random, at(0), mask);
  if (trips == 0) {
    b.store(ir::Space::Global, ir::AddrClass::Random, at(4096), b.binary(Opcode::IAdd, x, x), mask);
    b.ret();
    f.compute_preds();
    REQUIRE(ir::verify(f) == "");
    return f;
  }
  auto loop = f.add_block("loop"), exit = f.add_block("exit");
  auto zero = b.i32(0);
  b.br(loop);
  b.set_block(loop);
  auto k = phi(b, Type::I32, {zero, zero});
  auto v = phi(b, Type::I32, {x, x});
  b.budget(1);
  auto k1 = b.binary(Opcode::IAdd, k, b.i32(1));
  auto v1 = b.binary(Opcode::IAdd, v, b.i32(1));
  b.cond_br(b.icmp(ir::IntPred::Ult, k1, b.i32(uint32_t(trips))), loop, exit);
  f.insts[k].args[1] = k1;
  f.insts[v].args[1] = v1;
  b.set_block(exit);
  b.store(ir::Space::Global, ir::AddrClass::Random, at(4096), v1, mask);
  b.ret();
  f.compute_preds();
  REQUIRE(ir::verify(f) == "");
  return f;
}

// Warps first .. first + warps - 1 (bases[w - first]) in one call, each with
// `budget`, against the interpreter from warp `first` on; "" when alike.
std::string short_way_run(const ir::Function& f, const ir::Executable& jit, const std::vector<uint64_t>& bases,
                          uint32_t first, int64_t budget, std::mt19937_64& rng) {
  alignas(64) static const uint32_t iota[32] = {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15,
                                                16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31};
  std::vector<uint8_t> init(kShortMemBytes);
  fill_random(init, rng);
  const size_t warps = bases.size();
  auto interp = ir::make_ir_interpreter(f);
  TestMemory want_mem(init.size()), got_mem(init.size());
  want_mem.bytes = init;
  got_mem.bytes = init;
  WarpsOutcome want = run_warps_reference(
      f, *interp, want_mem, warps,
      [&](std::vector<uint8_t>& vars, size_t w) {
        for (unsigned l = 0; l < 32; ++l) set_lane(vars, f, 0, l, uint32_t(bases[w] + l));
      },
      [&](ir::WarpContext& ctx) { ctx.budget = budget; });
  want.warp += first;
  std::vector<uint64_t> jframe((jit.frame_bytes() + 7) / 8 + 8, 0xA5A5A5A5DEADBEEFull);
  std::vector<uint8_t> vars(f.vars_bytes() + 64);
  ir::WarpContext ctx;
  ctx.vars = vars.data();
  ctx.frame = reinterpret_cast<uint8_t*>(jframe.data());
  ctx.budget = 7;  // the loop sets each warp's
  ctx.memory = &got_mem;
  ctx.windows[0] = ir::MemWindow{got_mem.base, got_mem.bytes.size(), got_mem.bytes.data()};
  ir::LaneVarInit lv;
  lv.offset = uint32_t(f.var_offset(0));
  lv.lane_add = reinterpret_cast<const uint8_t*>(iota);
  ir::WarpLoop loop{};
  loop.vars = &lv;
  loop.nvars = 1;
  loop.bases = bases.data();
  loop.first_warp = first;
  loop.end_warp = first + uint32_t(warps);
  loop.budget = budget;
  WarpsOutcome got;
  got.status = jit.run_warps(ctx, loop);
  got.warp = loop.warp;
  if (got.status == ir::RunStatus::Fault) {
    got.fault = ctx.fault;
    got.lane = ctx.fault_lane;
    got.addr = ctx.fault_addr;
  }
  std::string d = warps_differ(want, got, want_mem, got_mem);
  if (d.empty() && got.status == ir::RunStatus::Done && ctx.status != ir::RunStatus::Done) d = "ctx.status not Done";
  return d;
}

}  // namespace

TEST_CASE("x64 warp loop short way: budgets reset per warp, the stopping warp from the bases pointer") {
  std::mt19937_64 rng(1319);
  for (int trips : {0, 5, 12}) {
    const ir::Function f = short_way_function(trips);
    for (x64::Tier tier : {x64::Tier::Avx512, x64::Tier::Avx2}) {
      if (!x64::host_supports(tier)) continue;
      auto jit = test::compile_warp_loop(f, tier);
      for (int k = 0; k < 24; ++k) {
        const size_t warps = 2 + rng() % 9;
        const uint32_t first = k % 3 == 0 ? 0 : uint32_t(rng() % 1000);
        std::vector<uint64_t> bases;
        const uint64_t start = rng() % 256;
        for (size_t w = 0; w < warps; ++w) bases.push_back(k % 2 ? start + 32 * w : rng() % (1024 - 32));
        // Faults: a warp past the memory (the first, a middle one or the last).
        if (k % 4 == 1) bases[rng() % warps] = 2040 + rng() % 64;
        if (k % 8 == 3) bases.back() = 2040 + rng() % 64;
        // Budgets: each warp needs `trips`; enough for one warp (not for two),
        // or one short of it (the first warp stops).
        int64_t budget = trips + int64_t(rng() % 3);
        if (trips > 0 && k % 6 == 5) budget = trips - 1;
        const std::string d = short_way_run(f, *jit, bases, first, budget, rng);
        CHECK_MESSAGE(d == "", (tier == x64::Tier::Avx512 ? "avx512" : "avx2")
                                   << " trips " << trips << " case " << k << ": " << d);
      }
    }
  }
}

TEST_CASE("x64 warp loop short way: the per-warp budget store only in functions with budget ops") {
  // Each per-warp budget store of the loop: `mov [rbx+0x20], r..`.
  const std::string store = "mov [rbx+0x" + [] {
    char hex[8];
    std::snprintf(hex, sizeof hex, "%X", unsigned(offsetof(ir::WarpContext, budget)));
    return std::string(hex);
  }() + "], r";
  for (x64::Tier tier : {x64::Tier::Avx512, x64::Tier::Avx2}) {
    for (int trips : {0, 5}) {
      x64::set_warp_loop_copies(false);
      std::string err;
      x64::JitOptions o{tier};
      o.listing_only = true;
      auto jit = x64::compile(short_way_function(trips), o, &err);
      x64::set_warp_loop_copies(true);
      REQUIRE_MESSAGE(jit, err);
      const std::string text = jit->disassemble();
      size_t stores = 0;
      for (size_t at = text.find(store); at != std::string::npos; at = text.find(store, at + 1)) ++stores;
      // The general way's store, and the short way's with budget ops.
      CHECK_MESSAGE(stores == (trips ? 2u : 1u), "trips " << trips << ":\n" << text);
    }
  }
}

}  // namespace gpurc_test_backend_x64_warp_short_way
