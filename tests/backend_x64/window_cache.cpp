// The window caches of the x64 memory fast paths (backend_x64/memory_fast.cpp,
// plan_window_cache): an access whose consecutive span a window held keeps
// that window's bounds for the later warps of the same warp-loop call, which
// then skip the base and the window search; the prologue clears the caches
// once per call. Each case runs warp-loop calls (ir::Executable::run_warps,
// lane vars base + per-lane addend) against the IR interpreter run warp by
// warp on the same memory: spans in the primary window, in an extra window,
// back again, across two windows, past the memory's end (a fault: the same
// warp, lane and address), misaligned runs (Tesla's guard), and a second call
// on the same frame with other memory behind the same guest addresses (a
// cache kept from the first call would read and write the first memory).
#include <doctest/doctest.h>

#include <cstring>
#include <random>

#include "../backend/compare.h"
#include "backend_x64/jit.h"
#include "tests/backend_x64/tier_compile.h"

namespace gpurc_test_backend_x64_window_cache {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::backend::test;
using ir::Opcode;
using ir::Type;

namespace {

constexpr uint64_t kBase = 0x10000;  // TestMemory's guest base
constexpr size_t kBytes = 8192;
constexpr uint64_t kUnbacked = 0xffffffffffff0000ull;

// out[y] = in[x] + 1 with 4-byte elements. Narrow: x and y are byte
// addresses (Tesla's g[] form, `zext x` under the alignment guard when
// `guard`). Indexed: x is an element index for both, the buffers' bases are
// uniform qwords 0 (in) and 8 (out) (G13's form `(u & ~3) + (zext x << 2)`).
ir::Function copy_function(bool narrow, bool guard) {
  ir::Function f;
  f.add_var("x", Type::I32);
  f.add_var("y", Type::I32);
  f.uniform_bytes = 16;
  f.add_block("entry");
  ir::Builder b(f);
  auto x = b.emit(Opcode::LoadVar, Type::I32, {}, 0, 0, 0);
  auto y = b.emit(Opcode::LoadVar, Type::I32, {}, 0, 0, 1);
  auto mask = b.emit(Opcode::EntryMask, Type::I1, {}, 0, 0, 0);
  auto narrow_addr = [&](ir::ValueId v) {
    ir::ValueId a = b.zext(Type::I64, v);
    if (!guard) return a;
    auto bad = b.icmp(ir::IntPred::Ne, b.and_(v, b.i32(3)), b.i32(0));
    return b.select(bad, b.i64(kUnbacked), a);
  };
  auto indexed_addr = [&](uint32_t u) {
    auto base = b.and_(b.load_uniform(Type::I64, u), b.i64(~uint64_t(3)));
    auto scaled = b.emit(Opcode::Shl, Type::I64, {b.zext(Type::I64, x), b.i32(2)}, uint8_t(ir::ShiftMode::Mask));
    return b.binary(Opcode::IAdd, base, scaled);
  };
  auto v = b.load(Type::I32, ir::Space::Global, ir::AddrClass::Random, narrow ? narrow_addr(x) : indexed_addr(0), mask);
  auto v1 = b.binary(Opcode::IAdd, v, b.i32(1));
  b.store(ir::Space::Global, ir::AddrClass::Random, narrow ? narrow_addr(y) : indexed_addr(8), v1, mask);
  b.ret();
  f.compute_preds();
  REQUIRE(ir::verify(f) == "");
  return f;
}

struct Windows {
  ir::MemWindow primary;
  ir::MemWindow extra[ir::kExtraWindows];
};

// Windows over parts of `mem` (offsets from its start): a primary and two extra.
Windows windows_of(TestMemory& mem, std::initializer_list<std::pair<size_t, size_t>> parts) {
  Windows w{};
  int i = 0;
  for (auto [off, n] : parts) {
    const ir::MemWindow win{mem.base + off, n, mem.bytes.data() + off};
    if (i == 0) w.primary = win;
    else w.extra[i - 1] = win;
    ++i;
  }
  return w;
}

alignas(64) uint32_t g_add_bytes[32], g_add_elems[32];

// Warps 0 .. xs.size() - 1: lane l starts with x = xs[w] + step * l and
// y = ys[w] + step * l (step 4 for byte addresses, 1 for element indices).
// The JIT runs them in one run_warps call on `frame`; the reference runs
// the interpreter warp by warp on `ref`'s memory.
WarpsOutcome run_jit(const ir::Executable& e, const ir::Function& f, TestMemory& mem, const Windows& w,
               const std::vector<uint8_t>& uniforms, const std::vector<uint64_t>& xs, const std::vector<uint64_t>& ys,
               bool narrow, std::vector<uint64_t>& frame) {
  REQUIRE(e.has_warp_loop());
  std::vector<uint8_t> vars(f.vars_bytes() + 64);
  ir::WarpContext ctx;
  ctx.vars = vars.data();
  ctx.frame = reinterpret_cast<uint8_t*>(frame.data());
  ctx.uniforms = uniforms.data();
  ctx.entry_mask = ~0u;
  ctx.budget = 1ll << 40;
  ctx.memory = &mem;
  ctx.windows[0] = w.primary;
  for (int i = 0; i < ir::kExtraWindows; ++i) ctx.extra_windows[0][i] = w.extra[i];
  const uint8_t* add = reinterpret_cast<const uint8_t*>(narrow ? g_add_bytes : g_add_elems);
  ir::LaneVarInit lv[2];
  lv[0].offset = uint32_t(f.var_offset(0));
  lv[1].offset = uint32_t(f.var_offset(1));
  lv[0].lane_add = lv[1].lane_add = add;
  std::vector<uint64_t> bases;
  for (size_t k = 0; k < xs.size(); ++k) {
    bases.push_back(xs[k]);
    bases.push_back(ys[k]);
  }
  return run_warp_loop(e, ctx, lv, 2, bases.data(), xs.size());
}

WarpsOutcome run_reference(const ir::Function& f, TestMemory& mem, const std::vector<uint8_t>& uniforms,
                     const std::vector<uint64_t>& xs, const std::vector<uint64_t>& ys, bool narrow) {
  auto interp = ir::make_ir_interpreter(f);
  const uint32_t step = narrow ? 4 : 1;
  return run_warps_reference(
      f, *interp, mem, xs.size(),
      [&](std::vector<uint8_t>& vars, size_t k) {
        for (unsigned l = 0; l < 32; ++l) {
          set_lane(vars, f, 0, l, uint32_t(xs[k] + step * l));
          set_lane(vars, f, 1, l, uint32_t(ys[k] + step * l));
        }
      },
      [&](ir::WarpContext& ctx) { ctx.uniforms = uniforms.data(); });
}

// Where a warp's span of 32 elements starts, as a byte offset from the
// memory's start: in the primary window [0, 2048), in the first extra one
// [4096, 6144), in the second [2048, 4096) (adjacent to the primary),
// across the primary's end, at the last element of a window, past the
// memory's end (lanes fault), or misaligned.
uint64_t span_offset(int kind, std::mt19937_64& rng) {
  switch (kind) {
    case 0: return 4 * (rng() % (512 - 32));          // primary
    case 1: return 4096 + 4 * (rng() % (512 - 32));   // extra 0
    case 2: return 2048 + 4 * (rng() % (512 - 32));   // extra 1
    case 3: return 2048 - 4 * (1 + rng() % 31);       // across primary and extra 1: no one window
    case 4: return 2048 - 128;                        // the primary's last 32 elements exactly
    case 5: return kBytes - 4 * (1 + rng() % 31);     // past the memory's end: a fault
    default: return 4 * (rng() % 400) + 1 + rng() % 3;  // misaligned
  }
}

void check_calls(bool narrow, bool guard, int calls_per_case, uint64_t seed) {
  const ir::Function f = copy_function(narrow, guard);
  std::mt19937_64 rng(seed);
  for (unsigned l = 0; l < 32; ++l) {
    g_add_bytes[l] = 4 * l;
    g_add_elems[l] = l;
  }
  for (Tier tier : host_tiers()) {
    std::string err;
    JitOptions o;
    o.tier = tier;
    auto jit = compile(f, o, &err);
    REQUIRE_MESSAGE(jit, err);
    // One frame for every call of a case, never cleared by the test: what a
    // call leaves in it must not count for the next one.
    std::vector<uint64_t> frame((jit->frame_bytes() + 7) / 8 + 8, 0xA5A5A5A5DEADBEEFull);
    for (int k = 0; k < calls_per_case; ++k) {
      // Mostly the fast path's spans; now and then a fault or a misaligned
      // run (only with the guard: without it misaligned runs are not a
      // narrow access's consecutive span and take the general path).
      const size_t nwarps = 2 + rng() % 7;
      std::vector<uint64_t> xs, ys;
      for (size_t w = 0; w < nwarps; ++w) {
        int kx = int(rng() % 5), ky = rng() % 2 ? 1 : int(rng() % 5);
        if (rng() % 9 == 0) kx = 5;
        if (rng() % 13 == 0) ky = 5;
        if (guard && rng() % 11 == 0) kx = 6;
        if (!narrow && kx == 6) kx = 0;
        const uint64_t ox = span_offset(kx, rng), oy = span_offset(ky, rng);
        if (narrow) {
          xs.push_back(kBase + ox);
          ys.push_back(kBase + (ky == 6 ? oy : oy & ~uint64_t(3)));
        } else {
          xs.push_back(ox / 4);  // element indices from the uniform bases
          ys.push_back(0);
        }
      }
      // Indexed: in at the memory's start, out at one of the windows' starts
      // (its index is x: the same offset from another base).
      std::vector<uint8_t> uniforms(16);
      const uint64_t in_base = kBase, out_base = kBase + (rng() % 2 ? 4096 : 2048);
      std::memcpy(uniforms.data(), &in_base, 8);
      std::memcpy(uniforms.data() + 8, &out_base, 8);
      // Two memories with different contents behind the same guest
      // addresses, the windows of the second possibly elsewhere: the
      // second call must not use what the first one found.
      for (int call = 0; call < 2; ++call) {
        TestMemory want(kBytes), got(kBytes);
        for (size_t i = 0; i < kBytes; ++i) want.bytes[i] = got.bytes[i] = uint8_t(rng());
        const Windows w = call == 0 || rng() % 2 ? windows_of(got, {{0, 2048}, {4096, 2048}, {2048, 2048}})
                                                 : windows_of(got, {{4096, 2048}, {0, 2048}, {2048, 1024}});
        const WarpsOutcome r = run_reference(f, want, uniforms, xs, ys, narrow);
        const WarpsOutcome j = run_jit(*jit, f, got, w, uniforms, xs, ys, narrow, frame);
        const std::string d = warps_differ(r, j, want, got);
        const std::string what = std::string(tier_name(tier)) + (narrow ? " narrow" : " indexed") +
                                 (guard ? " guarded" : "") + " case " + std::to_string(k) + " call " +
                                 std::to_string(call) + " warps " + std::to_string(nwarps) + ": " + d;
        CHECK_MESSAGE(d.empty(), what);
      }
    }
  }
}

// The disassembly of f on an x64 tier (a tier the host lacks is compiled for
// its listing only, never run: the AVX-512 code on an AVX2 host).
std::string listing(const ir::Function& f, x64::Tier tier) {
  return test::compile_for_tier(f, tier)->disassemble();
}

size_t count_in(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("x64 window cache: narrow accesses over many warps of a call, against the interpreter") {
  const int calls = std::getenv("GPURC_TEST_LIGHT") ? 40 : 160;
  check_calls(true, true, calls, 71);
  check_calls(true, false, calls / 2, 72);
}

TEST_CASE("x64 window cache: indexed accesses over many warps of a call, against the interpreter") {
  check_calls(false, false, std::getenv("GPURC_TEST_LIGHT") ? 40 : 160, 73);
}

TEST_CASE("x64 window cache: the later warps compare their span with the kept bounds before any search") {
  // The cached test of each access: the span's last element (narrow: its
  // address, rdx; indexed: its index, rsi) against a bound kept in the
  // frame (r12). The window search compares with registers only. (The
  // indexed store has a store home, eighteenth session: its probe before
  // the add strip makes the store's test too, so three there.)
  for (x64::Tier tier : {x64::Tier::Avx512, x64::Tier::Avx2}) {
    const std::string name = x64::tier_name(tier);
    CHECK_MESSAGE(count_in(listing(copy_function(true, true), tier), "cmp rdx, [r12+") == 2, name);
    CHECK_MESSAGE(count_in(listing(copy_function(false, false), tier), "cmp rsi, [r12+") == 3, name);
  }
}

namespace {
// Tesla's shape of a bounded access: m = and (icmp.ult x, lim), entry_mask;
// v = load [x] under m; any (icmp.eq (and v, 1), 0) under m into var "odd";
// store v + 1 at y under m; v into var "out". The and and the entry mask's
// lanes are left to the fallbacks (the fast paths and the vote AND the
// lanes of the compare with ctx.entry_mask).
ir::Function bounded_function(bool entry_first) {
  ir::Function f;
  f.add_var("x", Type::I32);
  f.add_var("y", Type::I32);
  f.add_var("lim", Type::I32);
  f.add_var("odd", Type::I1);
  f.add_var("out", Type::I32);
  f.add_block("entry");
  ir::Builder b(f);
  auto var = [&](uint32_t i) { return b.emit(Opcode::LoadVar, f.vars[i].type, {}, 0, 0, i); };
  auto x = var(0), y = var(1), lim = var(2);
  auto e = b.emit(Opcode::EntryMask, Type::I1, {}, 0, 0, 0);
  auto bound = b.icmp(ir::IntPred::Ult, x, lim);
  auto m = entry_first ? b.binary(Opcode::And, e, bound) : b.binary(Opcode::And, bound, e);
  auto guarded = [&](ir::ValueId v) {
    auto bad = b.icmp(ir::IntPred::Ne, b.and_(v, b.i32(3)), b.i32(0));
    return b.select(bad, b.i64(kUnbacked), b.zext(Type::I64, v));
  };
  auto v = b.load(Type::I32, ir::Space::Global, ir::AddrClass::Random, guarded(x), m);
  auto even = b.icmp(ir::IntPred::Eq, b.and_(v, b.i32(1)), b.i32(0));
  auto any = b.emit(Opcode::Any, Type::I1, {even, m});
  b.emit(Opcode::StoreVar, Type::Void, {any}, 0, 0, 3);
  b.store(ir::Space::Global, ir::AddrClass::Random, guarded(y), b.binary(Opcode::IAdd, v, b.i32(1)), m);
  b.emit(Opcode::StoreVar, Type::Void, {v}, 0, 0, 4);
  b.ret();
  f.compute_preds();
  REQUIRE(ir::verify(f) == "");
  return f;
}
}  // namespace

TEST_CASE("x64 memory fast paths: a mask `and A, entry_mask` is A's lanes under the launch, computed only on fallback") {
  std::mt19937_64 rng(74);
  const int runs = std::getenv("GPURC_TEST_LIGHT") ? 60 : 240;
  for (bool entry_first : {false, true}) {
    const ir::Function f = bounded_function(entry_first);
    for (int k = 0; k < runs; ++k) {
      RunSpec s;
      s.vars.resize(f.vars_bytes());
      fill_random(s.vars, rng);
      s.memory = true;
      s.memory_bytes = 2048;
      s.memory_init.resize(2048);
      fill_random(s.memory_init, rng);
      s.window = true;
      s.window_offset = 0;
      s.window_bytes = 1024;
      s.extra_windows = {{1024, 1024}};
      const unsigned first = unsigned(rng() % 32);
      switch (k % 4) {
        case 0: s.entry_mask = ~0u; break;
        case 1: s.entry_mask = ~0u << first; break;
        case 2: s.entry_mask = uint32_t(rng()) | 1u << first; break;
        default: s.entry_mask = k % 8 == 3 ? 0u : ~0u; break;  // none launched: nothing runs
      }
      // x: a run in either window, past the memory's end, or misaligned;
      // the bound cuts it at lane `cut` (or not at all).
      const uint32_t ox = rng() % 5 == 0 ? 2048 - 4 * uint32_t(rng() % 32) : 4 * uint32_t(rng() % 480);
      const uint32_t x0 = uint32_t(kBase) + ox + (rng() % 9 == 0 ? 2 : 0);
      const uint32_t y0 = uint32_t(kBase) + 4 * uint32_t(rng() % 480);
      const unsigned cut = rng() % 2 ? 32 : unsigned(rng() % 33);
      for (unsigned l = 0; l < 32; ++l) {
        set_lane(s.vars, f, 0, l, x0 + 4 * l);
        set_lane(s.vars, f, 1, l, y0 + 4 * l);
        set_lane(s.vars, f, 2, l, x0 + 4 * cut);
      }
      check_all_tiers(f, s,
                      "entry " + std::to_string(entry_first) + " k " + std::to_string(k) + " x " + std::to_string(ox) +
                          " cut " + std::to_string(cut) + " mask " + std::to_string(s.entry_mask));
    }
    // The code: the entry mask's lanes (`shr eax, cl` by the strip's lane
    // number) appear only in the accesses' fallbacks, after the first
    // access has read the compare's lanes; with the and kept in the strip
    // they come first.
    for (x64::Tier tier : {x64::Tier::Avx512, x64::Tier::Avx2}) {
      const std::string text = listing(f, tier);
      const std::string conv = tier == x64::Tier::Avx2 ? "vpmovmskb" : "kunpckwd";  // lane_bits' conversion
      const size_t entry = text.find("shr eax, cl"), lanes = text.find(conv);
      REQUIRE(lanes != std::string::npos);
      CHECK_MESSAGE((entry == std::string::npos || entry > lanes), std::string(x64::tier_name(tier)));
    }
  }
}

TEST_CASE("x64 bitcast of a dying operand: no register copy between two loads and their float add") {
  // c[x] = bits(f32(a[x]) + f32(b[x])) with the indexed addresses of G13's
  // vector add: the add's operands are the loads' results, each read from
  // its slot by a bitcast. The bitcasts take the registers the slots are
  // loaded into (backend_x64/lower_int.cpp, bitcast_in_place), so the
  // instruction before the add is a load, not a register copy.
  ir::Function f;
  f.add_var("x", Type::I32);
  f.uniform_bytes = 24;
  f.add_block("entry");
  ir::Builder b(f);
  auto x = b.emit(Opcode::LoadVar, Type::I32, {}, 0, 0, 0);
  auto mask = b.emit(Opcode::EntryMask, Type::I1, {}, 0, 0, 0);
  auto addr = [&](uint32_t u) { return g13_element_address(b, x, u); };
  auto va = b.load(Type::I32, ir::Space::Global, ir::AddrClass::Random, addr(0), mask);
  auto vb = b.load(Type::I32, ir::Space::Global, ir::AddrClass::Random, addr(8), mask);
  auto sum = b.emit(Opcode::FAdd, Type::F32, {b.bitcast(Type::F32, va), b.bitcast(Type::F32, vb)});
  b.store(ir::Space::Global, ir::AddrClass::Random, addr(16), b.bitcast(Type::I32, sum), mask);
  b.ret();
  f.compute_preds();
  REQUIRE(ir::verify(f) == "");
  for (x64::Tier tier : {x64::Tier::Avx512, x64::Tier::Avx2}) {
    const std::string text = listing(f, tier);
    const size_t add = text.find("vaddps");
    REQUIRE(add != std::string::npos);
    const size_t line = text.rfind('\n', add);
    const size_t prev = text.rfind('\n', line - 1);
    REQUIRE(prev != std::string::npos);
    const std::string before = text.substr(prev + 1, line - prev - 1);
    const std::string what = std::string(x64::tier_name(tier)) + ": " + before;
    CHECK_MESSAGE(before.find("vmovdqa") == std::string::npos, what);
  }
}

TEST_CASE("x64 warp loop: shared memory is zeroed per block only when the function can read or write it") {
  // The grid loop zeroes a block's shared memory (rep stosb) before its
  // first warp; a function without a shared load, store or atomic cannot
  // see that memory, so its loop has no such zeroing.
  auto shared_function = [](Opcode op) {
    ir::Function f;
    f.add_var("x", Type::I32);
    f.add_block("entry");
    ir::Builder b(f);
    auto x = b.emit(Opcode::LoadVar, Type::I32, {}, 0, 0, 0);
    auto mask = b.emit(Opcode::EntryMask, Type::I1, {}, 0, 0, 0);
    auto addr = b.zext(Type::I64, b.and_(x, b.i32(0xfc)));
    if (op == Opcode::Load) {
      auto v = b.load(Type::I32, ir::Space::Shared, ir::AddrClass::Random, addr, mask);
      b.emit(Opcode::StoreVar, Type::Void, {v}, 0, 0, 0);
    } else {
      b.store(ir::Space::Shared, ir::AddrClass::Random, addr, x, mask);
    }
    b.ret();
    f.compute_preds();
    REQUIRE(ir::verify(f) == "");
    return f;
  };
  for (x64::Tier tier : {x64::Tier::Avx512, x64::Tier::Avx2}) {
    const std::string name = x64::tier_name(tier);
    CHECK_MESSAGE(count_in(listing(copy_function(true, true), tier), "stosb") == 0, name);
    CHECK_MESSAGE(count_in(listing(copy_function(false, false), tier), "stosb") == 0, name);
    CHECK_MESSAGE(count_in(listing(shared_function(Opcode::Load), tier), "stosb") == 1, name);
    CHECK_MESSAGE(count_in(listing(shared_function(Opcode::Store), tier), "stosb") == 1, name);
  }
}

TEST_CASE("x64 vote: an any that only feeds its block's branch leaves the voting lanes in eax for the jump") {
  // any (icmp.ult x, lim) under the entry mask -> cond_br: the branch tests
  // the ANDed lane bits; no 0/1 result is made (no setnz / movzx).
  ir::Function f;
  f.add_var("x", Type::I32);
  f.add_var("out", Type::I32);
  f.add_block("entry");
  const ir::BlockId then = f.add_block("then"), done = f.add_block("done");
  ir::Builder b(f);
  auto x = b.emit(Opcode::LoadVar, Type::I32, {}, 0, 0, 0);
  auto e = b.emit(Opcode::EntryMask, Type::I1, {}, 0, 0, 0);
  auto any = b.emit(Opcode::Any, Type::I1, {b.icmp(ir::IntPred::Ult, x, b.i32(100)), e});
  b.cond_br(any, then, done);
  b.set_block(then);
  b.emit(Opcode::StoreVar, Type::Void, {b.binary(Opcode::IAdd, x, b.i32(1))}, 0, 0, 1);
  b.br(done);
  b.set_block(done);
  b.ret();
  f.compute_preds();
  REQUIRE(ir::verify(f) == "");
  for (x64::Tier tier : {x64::Tier::Avx512, x64::Tier::Avx2}) {
    const std::string text = listing(f, tier);
    CHECK_MESSAGE(count_in(text, "setnz") == 0, x64::tier_name(tier));
    CHECK_MESSAGE(count_in(text, "test eax, eax") >= 1, x64::tier_name(tier));
  }
  // Against the interpreter: warps with no, one, some and every lane below
  // 100 under random entry masks (a warp where no taking-part lane votes
  // skips the store).
  std::mt19937_64 rng(75);
  for (int k = 0; k < 64; ++k) {
    RunSpec s;
    s.vars.resize(f.vars_bytes());
    fill_random(s.vars, rng);
    uint32_t x[32];
    std::memcpy(x, s.vars.data(), sizeof x);
    for (int l = 0; l < 32; ++l) {
      x[l] = 100 + (x[l] & 0xffff);
      if (k % 4 == 1 && l == int(rng() % 32)) x[l] = uint32_t(rng() % 100);
      if (k % 4 == 2 && (rng() & 1)) x[l] = uint32_t(rng() % 101);
      if (k % 4 == 3) x[l] = uint32_t(rng() % 100);
    }
    std::memcpy(s.vars.data(), x, sizeof x);
    s.entry_mask = k < 8 ? ~0u : uint32_t(rng());
    check_all_tiers(f, s, "any into a branch, case " + std::to_string(k));
  }
}

namespace {
// A strip segment longer than kUnrollMaxOps (a loop over the strips) whose
// load_uniform comes after pure ops; with `store_first` a store_var comes
// first (then the test stays in the strips: strip 0's store would precede
// the fault).
ir::Function uniform_segment_function(bool store_first) {
  ir::Function f;
  f.add_var("x", Type::I32);
  f.add_var("out", Type::I32);
  f.add_var("early", Type::I32);
  f.uniform_bytes = 8;
  f.add_block("entry");
  ir::Builder b(f);
  auto x = b.emit(Opcode::LoadVar, Type::I32, {}, 0, 0, 0);
  auto a = b.binary(Opcode::IMul, x, b.i32(3));
  if (store_first) b.emit(Opcode::StoreVar, Type::Void, {a}, 0, 0, 2);
  auto c = b.binary(Opcode::Xor, b.binary(Opcode::IAdd, a, b.i32(7)), x);
  auto u = b.load_uniform(Type::I32, 4);
  auto d = b.binary(Opcode::IMul, b.binary(Opcode::IAdd, c, u), u);
  b.emit(Opcode::StoreVar, Type::Void, {b.binary(Opcode::ISub, d, x)}, 0, 0, 1);
  b.ret();
  f.compute_preds();
  REQUIRE(ir::verify(f) == "");
  return f;
}

// Whether the listing tests r15 right before a strip loop starts (xor r14d).
bool uniform_test_before_strips(const std::string& text) {
  const size_t t = text.find("test r15, r15");
  if (t == std::string::npos) return false;
  size_t line = text.find('\n', t);
  line = text.find('\n', line + 1);  // past the jz
  return line != std::string::npos && text.compare(text.find_first_not_of(" 0123456789abcdef", line + 1), 14,
                                                    "xor r14d, r14d") == 0;
}
}  // namespace

TEST_CASE("x64 strip segment: the uniform pointer is tested once before the strips, with the same fault") {
  for (x64::Tier tier : {x64::Tier::Avx512, x64::Tier::Avx2}) {
    const std::string name = x64::tier_name(tier);
    const std::string hoisted = listing(uniform_segment_function(false), tier);
    CHECK_MESSAGE(uniform_test_before_strips(hoisted), name);
    CHECK_MESSAGE(count_in(hoisted, "test r15, r15") == 1, name);
    CHECK_MESSAGE(!uniform_test_before_strips(listing(uniform_segment_function(true), tier)), name);
  }
  // Against the interpreter: with the uniform block (results) and without
  // it (the load_uniform's fault, nothing stored).
  std::mt19937_64 rng(76);
  const ir::Function f = uniform_segment_function(false);
  for (int k = 0; k < 16; ++k) {
    RunSpec s;
    s.vars.resize(f.vars_bytes());
    fill_random(s.vars, rng);
    if (k % 4 != 3) {
      s.uniforms.resize(8);
      fill_random(s.uniforms, rng);
    }
    s.entry_mask = k < 4 ? ~0u : uint32_t(rng()) | 1u;
    check_all_tiers(f, s, "uniform segment, case " + std::to_string(k));
  }
}

TEST_CASE("x64 vote of `not A`: A's lanes inverted, the not never computed") {
  // c = icmp.ult x, lim (also stored); v = any / all / ballot (not c) under
  // the entry mask, stored: the vote reads c's lanes and inverts them.
  auto not_vote_function = [](Opcode vote) {
    ir::Function f;
    f.add_var("x", Type::I32);
    f.add_var("lim", Type::I32);
    f.add_var("c", Type::I1);
    f.add_var("v", vote == Opcode::Ballot ? Type::I32 : Type::I1);
    f.add_block("entry");
    ir::Builder b(f);
    auto x = b.emit(Opcode::LoadVar, Type::I32, {}, 0, 0, 0);
    auto lim = b.emit(Opcode::LoadVar, Type::I32, {}, 0, 0, 1);
    auto e = b.emit(Opcode::EntryMask, Type::I1, {}, 0, 0, 0);
    auto c = b.icmp(ir::IntPred::Ult, x, lim);
    b.emit(Opcode::StoreVar, Type::Void, {c}, 0, 0, 2);
    auto n = b.emit(Opcode::Not, Type::I1, {c});
    auto v = b.emit(vote, vote == Opcode::Ballot ? Type::I32 : Type::I1, {n, e});
    b.emit(Opcode::StoreVar, Type::Void, {v}, 0, 0, 3);
    b.ret();
    f.compute_preds();
    REQUIRE(ir::verify(f) == "");
    return f;
  };
  std::mt19937_64 rng(77);
  for (Opcode vote : {Opcode::Any, Opcode::All, Opcode::Ballot}) {
    const ir::Function f = not_vote_function(vote);
    for (x64::Tier tier : {x64::Tier::Avx512, x64::Tier::Avx2})
      CHECK_MESSAGE(count_in(listing(f, tier), "not eax") == 1, x64::tier_name(tier));
    for (int k = 0; k < 48; ++k) {
      RunSpec s;
      s.vars.resize(f.vars_bytes());
      fill_random(s.vars, rng);
      const uint32_t lim = k % 3 == 0 ? 0u : k % 3 == 1 ? ~0u : uint32_t(rng());
      for (unsigned l = 0; l < 32; ++l) set_lane(s.vars, f, 1, l, lim);
      s.entry_mask = k < 8 ? ~0u : uint32_t(rng());
      check_all_tiers(f, s, std::string(ir::op_name(vote)) + " of not, case " + std::to_string(k));
    }
  }
}

}  // namespace gpurc_test_backend_x64_window_cache
