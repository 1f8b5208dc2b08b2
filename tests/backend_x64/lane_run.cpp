// The warp loop's consecutive index (backend_x64/memory_fast.cpp,
// plan_lane_run_flags): when a warp-loop call's descriptor writes an
// indexed access's index var as base + lane (lane_add 0..31, no lane_keep)
// the prologue sets a per-call flag and the access checks only lane 0's
// index instead of all 32. Every case runs one run_warps call of a G13-shaped
// copy kernel (out[x] = in[x] + 1, uniform bases, index var x) against the
// IR interpreter run warp by warp on vars written as the loop writes them:
// descriptors that do and do not make x consecutive (a lane_keep, a swapped
// lane, a later entry overlapping x, x written from lanes all equal), warp
// bases inside the windows, leaving them in the last warp only (the same
// fault warp, lane and address), near 2^31 (where b + 31 passes the signed
// range) and near 2^32 (the index wraps), misaligned uniform bases; then a
// single-warp run on the same frame with lanes that are not consecutive
// (the flag of the loop call must not carry over).
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <random>

#include "../backend/compare.h"
#include "backend_x64/jit.h"
#include "tests/backend_x64/tier_compile.h"

namespace gpurc_test_backend_x64_lane_run {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::backend::test;
using ir::Opcode;
using ir::Type;

namespace {

constexpr size_t kBytes = 8192;

// Vars x (i32, the index) and y (i32, unused by the code: an 8-byte entry at
// x's offset spills into it). out[x] = in[x] + 1, in at (u0 & ~3), out at
// (u8 & ~3), both 4-byte elements (G13's device_load / device_store form).
ir::Function copy_kernel() {
  ir::Function f;
  f.add_var("x", Type::I32);
  f.add_var("y", Type::I32);
  f.uniform_bytes = 16;
  f.add_block("entry");
  ir::Builder b(f);
  auto x = b.emit(Opcode::LoadVar, Type::I32, {}, 0, 0, 0);
  auto mask = b.emit(Opcode::EntryMask, Type::I1, {}, 0, 0, 0);
  auto addr = [&](uint32_t u) { return g13_element_address(b, x, u); };
  auto v = b.load(Type::I32, ir::Space::Global, ir::AddrClass::Random, addr(0), mask);
  b.store(ir::Space::Global, ir::AddrClass::Random, addr(8), b.binary(Opcode::IAdd, v, b.i32(1)), mask);
  b.ret();
  f.compute_preds();
  REQUIRE(ir::verify(f) == "");
  return f;
}

alignas(64) uint32_t g_iota[32], g_swapped[32], g_zero[32], g_keep[32];
alignas(64) uint64_t g_wide[32];

// The per-lane tables the descriptors point at: iota, lanes 5 and 6
// swapped, zeros, every lane but 17 kept, each lane's two dwords equal.
void fill_lane_tables() {
  for (unsigned l = 0; l < 32; ++l) {
    g_iota[l] = l;
    g_swapped[l] = l == 5 ? 6 : l == 6 ? 5 : l;
    g_zero[l] = 0;
    g_keep[l] = l == 17 ? 0 : ~0u;
    g_wide[l] = uint64_t(l) * 0x100000001ull;
  }
}

// `f` compiled for `tier`, which must give it a warp loop.
auto compile_with_warp_loop(const ir::Function& f, Tier tier) {
  std::string err;
  JitOptions o;
  o.tier = tier;
  auto jit = compile(f, o, &err);
  REQUIRE_MESSAGE(jit, err);
  REQUIRE(jit->has_warp_loop());
  return jit;
}

// The descriptors of a case: entries in the loop's order.
std::vector<ir::LaneVarInit> descriptor(const ir::Function& f, int kind) {
  const uint32_t x = uint32_t(f.var_offset(0));
  auto u8 = [](const void* p) { return reinterpret_cast<const uint8_t*>(p); };
  const ir::LaneVarInit iota{x, 4, u8(g_iota), nullptr};
  switch (kind) {
    case 0: return {iota};                                               // consecutive
    case 1: return {{x, 4, u8(g_iota), u8(g_keep)}};                      // a lane kept at 0
    case 2: return {{x, 4, u8(g_swapped), nullptr}};                      // lanes 5 and 6 swapped
    case 3: return {iota, {x, 8, u8(g_wide), nullptr}};                   // overwritten by a wider entry
    case 4: return {{x, 8, u8(g_wide), nullptr}, iota};                   // the iota entry last: consecutive
    default: return {{x, 4, u8(g_zero), nullptr}};                        // every lane the same
  }
}

// What the loop leaves in the vars of warp w: each entry in order,
// lane l = (base + lane_add[l]) & lane_keep[l] in its width.
void write_vars(std::vector<uint8_t>& vars, const std::vector<ir::LaneVarInit>& d, const std::vector<uint64_t>& bases,
                size_t w) {
  for (size_t i = 0; i < d.size(); ++i) {
    const uint64_t base = bases[w * d.size() + i];
    for (unsigned l = 0; l < 32; ++l) {
      if (d[i].width == 4) {
        uint32_t add, keep = ~0u;
        std::memcpy(&add, d[i].lane_add + 4 * l, 4);
        if (d[i].lane_keep) std::memcpy(&keep, d[i].lane_keep + 4 * l, 4);
        const uint32_t v = (uint32_t(base) + add) & keep;
        std::memcpy(vars.data() + d[i].offset + 4 * l, &v, 4);
      } else {
        uint64_t add, keep = ~0ull;
        std::memcpy(&add, d[i].lane_add + 8 * l, 8);
        if (d[i].lane_keep) std::memcpy(&keep, d[i].lane_keep + 8 * l, 8);
        const uint64_t v = (base + add) & keep;
        std::memcpy(vars.data() + d[i].offset + 8 * l, &v, 8);
      }
    }
  }
}

ir::WarpContext context(std::vector<uint8_t>& vars, uint8_t* frame, const std::vector<uint8_t>& uniforms,
                        TestMemory& mem, uint32_t entry_mask) {
  ir::WarpContext ctx;
  ctx.vars = vars.data();
  ctx.frame = frame;
  ctx.uniforms = uniforms.data();
  ctx.entry_mask = entry_mask;
  ctx.budget = 1ll << 40;
  ctx.memory = &mem;
  ctx.windows[0] = {mem.base, 2048, mem.bytes.data()};
  ctx.extra_windows[0][0] = {mem.base + 2048, kBytes - 2048, mem.bytes.data() + 2048};
  return ctx;
}

WarpsOutcome reference(const ir::Function& f, TestMemory& mem, const std::vector<uint8_t>& uniforms,
                  const std::vector<ir::LaneVarInit>& d, const std::vector<uint64_t>& bases, size_t warps) {
  auto interp = ir::make_ir_interpreter(f);
  std::vector<uint8_t> scratch;
  return run_warps_reference(
      f, *interp, mem, warps, [&](std::vector<uint8_t>& vars, size_t w) { write_vars(vars, d, bases, w); },
      [&](ir::WarpContext& ctx) {  // the JIT's context, on the reference's vars
        uint8_t* vars = ctx.vars;
        ctx = context(scratch, ctx.frame, uniforms, mem, ~0u);
        ctx.vars = vars;
      });
}

}  // namespace

TEST_CASE("x64 lane run flag: the warp loop's consecutive index var, against the interpreter") {
  fill_lane_tables();
  const ir::Function f = copy_kernel();
  std::mt19937_64 rng(1313);
  const int rounds = std::getenv("GPURC_TEST_LIGHT") ? 60 : 240;
  for (Tier tier : host_tiers()) {
    auto jit = compile_with_warp_loop(f, tier);
    std::vector<uint64_t> frame((jit->frame_bytes() + 7) / 8 + 8, 0xA5A5A5A5DEADBEEFull);
    for (int round = 0; round < rounds; ++round) {
      const int kind = int(rng() % 6);
      const std::vector<ir::LaneVarInit> d = descriptor(f, kind);
      // Where the memory lies and which element the first warp starts at:
      // low, near 2^31 elements (b + 31 passes 2^31 - 1 for some), near 2^32
      // (the index wraps to 0 inside a warp for some).
      const int where = std::max(0, int(rng() % 4) - 1);  // low half the time
      const uint64_t first = where == 0 ? rng() % 64 : where == 1 ? 0x7fffff00ull + rng() % 256 : 0xffffff00ull + rng() % 256;
      const size_t warps = 1 + rng() % 6;
      TestMemory want(kBytes), got(kBytes);
      // Guest element e of in is at in_base + 4e (mod 2^64), out 4 KiB on
      // (the extra window). Low indices: in_base inside the primary window
      // (the fast paths take a base at or above a window's start); near 2^31
      // and 2^32 element `first` (or a bit before) at the memory's start, the
      // base far below it: the general path, after the flag's test of x_0.
      const uint64_t mem_base = 0x100000000ull + 0x10000;  // above 2^32: index * 4 reaches it
      want.base = got.base = mem_base;
      const uint64_t misalign = rng() % 4 == 0 ? rng() % 4 : 0;  // the code masks it off
      const uint64_t in_base = where == 0 ? mem_base + 4 * (rng() % 16) + misalign
                                          : mem_base - 4 * (first - rng() % 16) + misalign;
      const uint64_t out_base = in_base + 4096;
      std::vector<uint8_t> uniforms(16);
      std::memcpy(uniforms.data(), &in_base, 8);
      std::memcpy(uniforms.data() + 8, &out_base, 8);
      for (size_t i = 0; i < kBytes; ++i) want.bytes[i] = got.bytes[i] = uint8_t(rng());
      // Warp w's bases: consecutive warps 32 elements apart; now and then the
      // last warp jumps past the memory (only it leaves the window: a fault).
      std::vector<uint64_t> bases;
      for (size_t w = 0; w < warps; ++w)
        for (const ir::LaneVarInit& e : d) {
          uint64_t b = first + 32 * w;
          if (w + 1 == warps && rng() % 2 == 0) b += rng() % 2 ? 200 + rng() % 300 : 1900 + rng() % 200;  // another window, or past the memory
          bases.push_back(e.width == 8 ? b | (b << 32) : b);
        }
      const WarpsOutcome r = reference(f, want, uniforms, d, bases, warps);
      std::vector<uint8_t> vars(f.vars_bytes() + 64, 0);
      ir::WarpContext ctx = context(vars, reinterpret_cast<uint8_t*>(frame.data()), uniforms, got, ~0u);
      const WarpsOutcome j = run_warp_loop(*jit, ctx, d.data(), d.size(), bases.data(), warps);
      const std::string diff = warps_differ(r, j, want, got);
      CHECK_MESSAGE(diff.empty(), tier_name(tier), " round ", round, " descriptor ", kind, " where ", where, ": ", diff);

      // A single-warp run on the same frame right after: lanes that are not
      // consecutive (lanes 5 and 6 swapped), some not launched.
      const uint32_t mask = rng() % 2 ? ~0u : uint32_t(rng());
      std::vector<uint8_t> v1(f.vars_bytes() + 64, 0), v2(f.vars_bytes(), 0);
      const std::vector<ir::LaneVarInit> swapped = descriptor(f, 2);
      const std::vector<uint64_t> b1{first};
      write_vars(v1, swapped, b1, 0);
      write_vars(v2, swapped, b1, 0);
      auto interp = ir::make_ir_interpreter(f);
      std::vector<uint8_t> iframe(interp->frame_bytes() + 64, 0);
      ir::WarpContext rc = context(v2, iframe.data(), uniforms, want, mask);
      WarpsOutcome r1, j1;
      r1.status = interp->run(rc);
      if (r1.status == ir::RunStatus::Fault) r1.fault = rc.fault, r1.lane = rc.fault_lane, r1.addr = rc.fault_addr;
      ir::WarpContext jc = context(v1, reinterpret_cast<uint8_t*>(frame.data()), uniforms, got, mask);
      j1.status = jit->run(jc);
      if (j1.status == ir::RunStatus::Fault) j1.fault = jc.fault, j1.lane = jc.fault_lane, j1.addr = jc.fault_addr;
      const std::string diff1 = warps_differ(r1, j1, want, got);
      CHECK_MESSAGE(diff1.empty(), tier_name(tier), " round ", round, " single run after the loop: ", diff1);
    }
  }
}

TEST_CASE("x64 lane run flag: the access tests lane 0's index when the loop wrote the var as base + lane") {
  const ir::Function f = copy_kernel();
  for (x64::Tier tier : {x64::Tier::Avx512, x64::Tier::Avx2}) {
    CAPTURE(x64::tier_name(tier));
    const std::string text = test::compile_for_tier(f, tier)->disassemble();
    // The bound of b = x_0 (b + 31 <= 2^31 - 1) and the prologue's scan of
    // the descriptor's lane_add against 0..31.
    CHECK(text.find("cmp esi, 0x7FFFFFE0") != std::string::npos);
    CHECK(text.find("mov r11, [rsp+0x38]") != std::string::npos);
    // The call's range of x_0 over the loop's bases (cmov of the minimum).
    CHECK(text.find("cmovl r8, rax") != std::string::npos);
  }
}

// The call's range of x_0 (emit_lane_run_flags): with one lane var the
// prologue takes the bases four warps at a time (dword min / max over four
// qwords, the even dwords read at the end), then the warps left one by one.
// Calls of 1..40 warps, one of them (anywhere: in a group of four, in the
// tail) an outlier that leaves the memory or passes the x_0 bound
// 2^31 - 32, the bases' high dwords random: a range that missed a warp would
// let it move without a check (no fault, or another one).
TEST_CASE("x64 lane run flag: the call's range over many warps, four at a time, against the interpreter") {
  fill_lane_tables();
  const ir::Function f = copy_kernel();
  std::mt19937_64 rng(1407);
  const int rounds = std::getenv("GPURC_TEST_LIGHT") ? 80 : 320;
  for (Tier tier : host_tiers()) {
    auto jit = compile_with_warp_loop(f, tier);
    std::vector<uint64_t> frame((jit->frame_bytes() + 7) / 8 + 8, 0xA5A5A5A5DEADBEEFull);
    int outliers_faulted = 0;
    for (int round = 0; round < rounds; ++round) {
      const int kind = rng() % 4 == 0 ? 4 : 0;  // one var (the vector scan) or two (the scalar one)
      const std::vector<ir::LaneVarInit> d = descriptor(f, kind);
      const size_t warps = 1 + rng() % 40;
      TestMemory want(kBytes), got(kBytes);
      const uint64_t mem_base = 0x100000000ull + 0x10000;
      want.base = got.base = mem_base;
      // Element e of in at mem_base + 4e: every warp of 32 elements from
      // `first` lies in the primary window (2048 bytes: 512 elements) when
      // first + 32 * warps stays below it; out in the extra window.
      const uint64_t in_base = mem_base;
      const uint64_t out_base = in_base + 4096;
      std::vector<uint8_t> uniforms(16);
      std::memcpy(uniforms.data(), &in_base, 8);
      std::memcpy(uniforms.data() + 8, &out_base, 8);
      for (size_t i = 0; i < kBytes; ++i) want.bytes[i] = got.bytes[i] = uint8_t(rng());
      // Warps step 12 elements (overlapping: the kernel reads in, writes
      // out, so the result does not depend on the order) from a start that
      // keeps them in the window; the outlier, in most rounds, at a random
      // warp: past the memory, or x_0 above 2^31 - 32 (negative as a
      // signed dword).
      const uint64_t first = rng() % 8;
      const size_t outlier = rng() % 5 == 0 ? warps : rng() % warps;
      const int outlier_kind = int(rng() % 3);
      const int hi_kind = int(rng() % 3);  // the bases' high dwords: random, 0, or small (inside the window if read)
      std::vector<uint64_t> bases;
      for (size_t w = 0; w < warps; ++w)
        for (const ir::LaneVarInit& e : d) {
          uint64_t b = first + 12 * w;
          if (w == outlier)
            b = outlier_kind == 0 ? 2100 + rng() % 200 : outlier_kind == 1 ? 0x7fffffe1ull + rng() % 64 : 0xfffffff0ull;
          if (e.width == 8) b |= b << 32;
          else b |= (hi_kind == 0 ? uint64_t(rng()) : hi_kind == 1 ? 0ull : uint64_t(rng() % 8)) << 32;  // ignored: the var is a dword
          bases.push_back(b);
        }
      const WarpsOutcome r = reference(f, want, uniforms, d, bases, warps);
      if (r.status == ir::RunStatus::Fault) ++outliers_faulted;
      std::vector<uint8_t> vars(f.vars_bytes() + 64, 0);
      ir::WarpContext ctx = context(vars, reinterpret_cast<uint8_t*>(frame.data()), uniforms, got, ~0u);
      const WarpsOutcome j = run_warp_loop(*jit, ctx, d.data(), d.size(), bases.data(), warps);
      const std::string diff = warps_differ(r, j, want, got);
      CHECK_MESSAGE(diff.empty(), tier_name(tier), " round ", round, " descriptor ", kind, " warps ", warps,
                    " outlier ", outlier, " kind ", outlier_kind, ": ", diff);
    }
    CHECK(outliers_faulted > rounds / 3);  // the outliers fault (the case tests the range, not only the moves)
  }
}

TEST_CASE("x64 lane run flag: the listing scans the bases four warps at a time") {
  const ir::Function f = copy_kernel();
  for (x64::Tier tier : {x64::Tier::Avx512, x64::Tier::Avx2}) {
    CAPTURE(x64::tier_name(tier));
    const std::string text = test::compile_for_tier(f, tier)->disassemble();
    CHECK(text.find("vpminsd ymm0, ymm0, [rdx]") != std::string::npos);
    CHECK(text.find("vpmaxsd ymm1, ymm1, [rdx]") != std::string::npos);
    CHECK(text.find("vpshufd ymm0, ymm0, 0x88") != std::string::npos);
  }
}


// The narrow form (Tesla's g[] accesses, memory_fast.cpp
// plan_narrow_lane_proof): the index i = ntid * (ctaid & 0xffff) + ($r0 &
// 0xffff) from two lane vars, x = u + (i << shift), the address
// `select (x & 3 != 0), K, zext x`, under the bound check i < n.
// y[i] = x[i] + 1. Variants: 0 saxpy's shape; 1 an index that looks affine
// but steps 8 bytes per lane for 4-byte elements (shift 3); 2 the lane part
// read from a third var (tid from another register); 3 `& 0xff` instead of
// `& 0xffff` (the per-warp no-wrap test at 0xe0); 4 saxpy's shape with the
// third var added to the stored value (a var read outside the index
// segment: the warp loop must keep writing it, nineteenth session).
ir::Function tesla_copy_kernel(int variant) {
  ir::Function f;
  f.add_var("ctaid", Type::I32);
  f.add_var("r0", Type::I32);
  f.add_var("r1", Type::I32);
  f.uniform_bytes = 32;
  f.add_block("entry");
  ir::Builder b(f);
  auto ctaid = b.emit(Opcode::LoadVar, Type::I32, {}, 0, 0, 0);
  auto r0 = b.emit(Opcode::LoadVar, Type::I32, {}, 0, 0, variant == 2 ? 2 : 1);
  auto ntid = b.emit(Opcode::Zext, Type::I32, {b.load_uniform(Type::I16, 2)});
  auto lane_mask = b.i32(variant == 3 ? 0xff : 0xffff);
  auto i = b.binary(Opcode::IAdd, b.binary(Opcode::IMul, ntid, b.binary(Opcode::And, ctaid, b.i32(0xffff))),
                    b.binary(Opcode::And, r0, lane_mask));
  auto s = b.binary(Opcode::Shl, i, b.i32(variant == 1 ? 3 : 2), uint8_t(ir::ShiftMode::Clamp));
  auto bound = b.icmp(ir::IntPred::Ult, i, b.load_uniform(Type::I32, 0x1c));
  auto mask = b.binary(Opcode::And, bound, b.emit(Opcode::EntryMask, Type::I1, {}));
  auto address = [&](uint32_t u) {
    auto x = b.binary(Opcode::IAdd, b.load_uniform(Type::I32, u), s);
    auto misaligned = b.icmp(ir::IntPred::Ne, b.binary(Opcode::And, x, b.i32(3)), b.i32(0));
    return b.select(misaligned, b.i64(0xffffffffffff0000ull), b.emit(Opcode::Zext, Type::I64, {x}));
  };
  auto v = b.load(Type::I32, ir::Space::Global, ir::AddrClass::Random, address(0x10), mask);
  auto stored = b.binary(Opcode::IAdd, v, b.i32(1));
  if (variant == 4) stored = b.binary(Opcode::IAdd, stored, b.emit(Opcode::LoadVar, Type::I32, {}, 0, 0, 2));
  b.store(ir::Space::Global, ir::AddrClass::Random, address(0x14), stored, mask);
  b.ret();
  f.compute_preds();
  REQUIRE(ir::verify(f) == "");
  return f;
}

// Tesla's descriptor (frontend/tesla/module/launch.cpp: $r0 base + lane,
// ctaid alike in every lane) and ones that break one of its facts.
std::vector<ir::LaneVarInit> tesla_descriptor(const ir::Function& f, int kind) {
  const uint32_t ctaid = uint32_t(f.var_offset(0)), r0 = uint32_t(f.var_offset(1)), r1 = uint32_t(f.var_offset(2));
  auto u8 = [](const void* p) { return reinterpret_cast<const uint8_t*>(p); };
  const ir::LaneVarInit iota{r0, 4, u8(g_iota), nullptr}, same{ctaid, 4, u8(g_zero), nullptr};
  const ir::LaneVarInit r1_iota{r1, 4, u8(g_iota), nullptr}, r1_same{r1, 4, u8(g_zero), nullptr};
  switch (kind) {
    case 0: return {iota, same, r1_same};                            // Tesla's
    case 1: return {iota, {ctaid, 4, u8(g_iota), nullptr}, r1_same}; // ctaid differs per lane
    case 2: return {{r0, 4, u8(g_swapped), nullptr}, same, r1_same}; // two lanes swapped
    case 3: return {{r0, 4, u8(g_iota), u8(g_keep)}, same, r1_same}; // a lane kept at 0
    case 4: return {iota, r1_same};                                  // ctaid not written by the loop
    case 5: return {iota, same, {ctaid, 8, u8(g_wide), nullptr}, r1_same};  // ctaid overwritten (and r0's neighbour)
    case 6: return {iota, same, r1_iota};                            // r1 base + lane too
    default: return {r1_iota, {r0, 4, u8(g_zero), nullptr}, same};  // r0 alike, r1 base + lane
  }
}

TEST_CASE("x64 narrow lane proof: Tesla's index from two lane vars, against the interpreter") {
  fill_lane_tables();
  std::mt19937_64 rng(1414);
  const int rounds = std::getenv("GPURC_TEST_LIGHT") ? 50 : 200;
  for (int variant = 0; variant < 5; ++variant) {
    const ir::Function f = tesla_copy_kernel(variant);
    for (Tier tier : host_tiers()) {
      auto jit = compile_with_warp_loop(f, tier);
      std::vector<uint64_t> frame((jit->frame_bytes() + 7) / 8 + 8, 0xA5A5A5A5DEADBEEFull);
      for (int round = 0; round < rounds; ++round) {
        const int kind = rng() % 2 ? 0 : int(rng() % 8);
        const std::vector<ir::LaneVarInit> d = tesla_descriptor(f, kind);
        // The memory below 2^32, or across it (x + s wraps inside a warp).
        const bool high = rng() % 4 == 0;
        TestMemory want(kBytes), got(kBytes);
        want.base = got.base = high ? 0xfffff000ull : 0x10000;
        for (size_t k = 0; k < kBytes; ++k) want.bytes[k] = got.bytes[k] = uint8_t(rng());
        // Threads per block: small ones keep a ctaid that differs per lane
        // (descriptor 1) inside the memory, where a wrong proof shows.
        const uint32_t ntid = std::array<uint32_t, 4>{0, 1, 2, 32}[rng() % 4];
        const uint32_t misalign = rng() % 5 == 0 ? 1 + rng() % 3 : 0;
        // Warp w: block ctaid_w, $r0 = tid.x | tid.y << 16 (tid.y random),
        // tid.x 32 * w + a start that now and then sits near the mask's end
        // (the field wraps inside the warp: no proof for that warp). Then
        // the x base puts element `start` inside the memory, so that lanes
        // taken as consecutive by mistake would read other elements.
        const size_t warps = 1 + rng() % 6;
        const uint32_t field = variant == 3 ? 0xff : 0xffff;
        const bool near_end = rng() % 3 == 0;
        const uint32_t start = near_end ? field - uint32_t(rng() % 40) : uint32_t(rng() % 40);
        uint32_t xbase = uint32_t(want.base) + 4 * uint32_t(rng() % 64) + misalign;
        if (near_end && rng() % 2) xbase -= 4 * start;
        const uint32_t ybase = xbase + 4096;
        const uint32_t n = rng() % 2 ? ~0u : uint32_t(rng() % 300);  // the bound check: a partial last warp
        std::vector<uint8_t> uniforms(32, 0);
        std::memcpy(uniforms.data() + 2, &ntid, 2);
        std::memcpy(uniforms.data() + 0x10, &xbase, 4);
        std::memcpy(uniforms.data() + 0x14, &ybase, 4);
        std::memcpy(uniforms.data() + 0x1c, &n, 4);
        std::vector<uint64_t> bases;
        const uint32_t ctaid0 = uint32_t(rng() % 3);
        for (size_t w = 0; w < warps; ++w) {
          uint32_t tidx = (start + 32 * uint32_t(w)) & field;
          // Now and then only the last warp leaves the memory (a fault there).
          if (w + 1 == warps && rng() % 3 == 0) tidx += 1000 + uint32_t(rng() % 2000);
          const uint32_t r0 = tidx | uint32_t(rng() % 4) << 16;
          for (const ir::LaneVarInit& e : d) {
            uint64_t v = e.offset == uint32_t(f.var_offset(0)) ? ctaid0 + uint32_t(w) / 2 : r0;
            if (e.width == 8) v |= v << 32;
            bases.push_back(v);
          }
        }
        const WarpsOutcome r = reference(f, want, uniforms, d, bases, warps);
        std::vector<uint8_t> vars(f.vars_bytes() + 64, 0);
        ir::WarpContext ctx = context(vars, reinterpret_cast<uint8_t*>(frame.data()), uniforms, got, ~0u);
        const WarpsOutcome j = run_warp_loop(*jit, ctx, d.data(), d.size(), bases.data(), warps);
        const std::string diff = warps_differ(r, j, want, got);
        CHECK_MESSAGE(diff.empty(), tier_name(tier), " variant ", variant, " round ", round, " descriptor ", kind,
                      " high ", high, " start ", start, ": ", diff);
      }
    }
  }
}

TEST_CASE("x64 narrow lane proof: the listing tests lane 0's field instead of 32 lanes") {
  for (x64::Tier tier : {x64::Tier::Avx512, x64::Tier::Avx2}) {
    CAPTURE(x64::tier_name(tier));
    const std::string text = test::compile_for_tier(tesla_copy_kernel(0), tier)->disassemble();
    // The per-warp test of $r0's low half (lane 0), the prologue's scans.
    CHECK(text.find("cmp eax, 0xFFE0") != std::string::npos);
    CHECK(text.find("mov r11, [rsp+0x38]") != std::string::npos);
    const std::string byte_field = test::compile_for_tier(tesla_copy_kernel(3), tier)->disassemble();
    CHECK(byte_field.find("cmp eax, 0xE0") != std::string::npos);
    // Steps of 8 bytes for 4-byte elements, or the lane part in a var the
    // walk must take as base + lane from its descriptor: no wrap test of
    // $r0 in the former.
    const std::string wide_step = test::compile_for_tier(tesla_copy_kernel(1), tier)->disassemble();
    CHECK(wide_step.find("cmp eax, 0xFFE0") == std::string::npos);
  }
}


// The warp loop's writes of the lane vars (backend_x64/warp_loop.cpp): a
// call whose entries are all 4 bytes wide with no lane_keep takes the plain
// writes (a broadcast, an add and a store per vector), any other descriptor
// the general ones. A kernel that stores three lane vars, a, b and c, to
// out_a[i], out_b[i], out_c[i] (i a fourth var, base + lane), run through
// run_warps against the interpreter on vars written as the descriptor says:
// every entry plain (random lane_add tables), then one entry with a
// lane_keep, one 8 bytes wide over a and b, the plain entries after a
// masked one, and a call with no lane vars but i.
namespace {
ir::Function var_store_kernel() {
  ir::Function f;
  f.add_var("i", Type::I32);
  f.add_var("a", Type::I32);
  f.add_var("b", Type::I32);
  f.add_var("c", Type::I32);
  f.uniform_bytes = 24;
  f.add_block("entry");
  ir::Builder b(f);
  auto i = b.emit(Opcode::LoadVar, Type::I32, {}, 0, 0, 0);
  auto mask = b.emit(Opcode::EntryMask, Type::I1, {}, 0, 0, 0);
  for (uint32_t k = 1; k <= 3; ++k) {
    auto v = b.emit(Opcode::LoadVar, Type::I32, {}, 0, 0, k);
    b.store(ir::Space::Global, ir::AddrClass::Random, g13_element_address(b, i, 8 * (k - 1)), v, mask);
  }
  b.ret();
  f.compute_preds();
  REQUIRE(ir::verify(f) == "");
  return f;
}
alignas(64) uint32_t g_add_a[32], g_add_b[32], g_add_c[32];
alignas(64) uint64_t g_add_wide[32];
}  // namespace

TEST_CASE("x64 warp loop: plain lane var writes and the general ones, against the interpreter") {
  fill_lane_tables();
  const ir::Function f = var_store_kernel();
  std::mt19937_64 rng(1515);
  const int rounds = std::getenv("GPURC_TEST_LIGHT") ? 40 : 160;
  auto u8 = [](const void* p) { return reinterpret_cast<const uint8_t*>(p); };
  const uint32_t oi = uint32_t(f.var_offset(0)), oa = uint32_t(f.var_offset(1)), ob = uint32_t(f.var_offset(2)),
                 oc = uint32_t(f.var_offset(3));
  for (Tier tier : host_tiers()) {
    auto jit = compile_with_warp_loop(f, tier);
    std::vector<uint64_t> frame((jit->frame_bytes() + 7) / 8 + 8, 0xA5A5A5A5DEADBEEFull);
    for (int round = 0; round < rounds; ++round) {
      for (unsigned l = 0; l < 32; ++l) {
        g_add_a[l] = uint32_t(rng());
        g_add_b[l] = uint32_t(rng());
        g_add_c[l] = uint32_t(rng());
        g_add_wide[l] = rng();
      }
      const ir::LaneVarInit vi{oi, 4, u8(g_iota), nullptr}, va{oa, 4, u8(g_add_a), nullptr},
          vb{ob, 4, u8(g_add_b), nullptr}, vc{oc, 4, u8(g_add_c), nullptr};
      const int kind = round % 5;
      std::vector<ir::LaneVarInit> d;
      switch (kind) {
        case 0: d = {va, vi, vb, vc}; break;                                  // all plain
        case 1: d = {vi, va, {ob, 4, u8(g_add_b), u8(g_keep)}, vc}; break;    // one lane_keep
        case 2: d = {vi, {oa, 8, u8(g_add_wide), nullptr}, vc}; break;        // a and b as one 8-byte entry
        case 3: d = {{oc, 4, u8(g_add_c), u8(g_keep)}, vi, va, vb}; break;    // masked first, plain after
        default: d = {vi}; break;                                            // only i
      }
      const size_t warps = 1 + rng() % 9;
      TestMemory want(kBytes), got(kBytes);
      const uint64_t mem_base = 0x10000;
      want.base = got.base = mem_base;
      const uint64_t out_base = mem_base + 4 * (rng() % 64);
      std::vector<uint8_t> uniforms(24);
      for (int k = 0; k < 3; ++k) {
        const uint64_t o = out_base + 2048 * uint64_t(k);  // three arrays of up to 9 warps x 32 elements
        std::memcpy(uniforms.data() + 8 * k, &o, 8);
      }
      for (size_t x = 0; x < kBytes; ++x) want.bytes[x] = got.bytes[x] = uint8_t(rng());
      std::vector<uint64_t> bases;
      for (size_t w = 0; w < warps; ++w)
        for (const ir::LaneVarInit& e : d) bases.push_back(e.offset == oi ? 32 * w : rng());
      const WarpsOutcome r = reference(f, want, uniforms, d, bases, warps);
      std::vector<uint8_t> vars(f.vars_bytes() + 64, 0);  // (vars no entry writes stay 0, as the reference's)
      ir::WarpContext ctx = context(vars, reinterpret_cast<uint8_t*>(frame.data()), uniforms, got, ~0u);
      const WarpsOutcome j = run_warp_loop(*jit, ctx, d.data(), d.size(), bases.data(), warps);
      const std::string diff = warps_differ(r, j, want, got);
      CHECK_MESSAGE(diff.empty(), tier_name(tier), " round ", round, " descriptor ", kind, ": ", diff);
    }
  }
}

TEST_CASE("x64 warp loop: the listing has the plain lane var writes") {
  const ir::Function f = var_store_kernel();
  for (x64::Tier tier : {x64::Tier::Avx512, x64::Tier::Avx2}) {
    CAPTURE(x64::tier_name(tier));
    const std::string text = test::compile_for_tier(f, tier)->disassemble();
    // The call's scan (width 4, no lane_keep) and the stores through the
    // var's offset from the vars pointer, without a lane_keep register.
    CHECK(text.find("cmp dword ptr [rdi+0x04], 0x04") != std::string::npos);
    CHECK(text.find("cmp qword ptr [rdi+0x10], 0x00") != std::string::npos);
    CHECK(text.find(tier == x64::Tier::Avx512 ? "vmovdqu32 zmmword ptr [r13+r8*1+0x40], zmm2"
                                              : "vmovdqu [r13+r8*1+0x60], ymm2") != std::string::npos);
  }
}

}  // namespace gpurc_test_backend_x64_lane_run
