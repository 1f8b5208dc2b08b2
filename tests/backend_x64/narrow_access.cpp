// The narrow-address path of the x64 tiers (Emitter::match_narrow /
// emit_narrow_fast, backend_x64/memory_fast.cpp): a load / store whose i64
// address is `zext x` or `or (zext x), C` of an i32 x, optionally under
// Tesla's alignment guard `select (icmp.ne (and x, bytes - 1), 0), K, .`.
// The fast path checks x's dword slot (consecutive elements, the first
// taking-part lane aligned, no wrap past 2^32) and the span's two ends
// against the windows, and computes the i64 address values only when it
// falls back. Each case is compared with the IR interpreter on every host
// tier (results, memory, fault kind / lane / address): all lanes, partial
// and random masks, inactive lanes holding garbage, runs at and one element
// past a window's edges, second windows, misaligned runs (the guard sends
// every lane to K: a fault), one misaligned or out-of-run lane in the
// middle, x near 2^32 (wrapping runs, "negative" indices) and a space base C
// (no memory there: the fault is the general path's).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>

#include "../backend/compare.h"
#include "backend_x64/jit.h"
#include "tests/backend_x64/tier_compile.h"

namespace gpurc_test_backend_x64_narrow_access {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::backend::test;
using ir::Opcode;
using ir::Type;

namespace {

constexpr uint64_t kMemBase = 0x10000;  // TestMemory's base
constexpr size_t kMemBytes = 1024;
constexpr uint64_t kUnbacked = 0xffffffffffff0000ull;

// vars x (i32), val (t), mask (i1), out (t): store val at the address of x
// under mask, then load out from it under mask (either optional).
ir::Function narrow_function(Type t, bool guard, uint64_t space_base, bool store, bool load, bool entry_mask) {
  ir::Function f;
  f.add_var("x", Type::I32);
  f.add_var("val", t);
  f.add_var("mask", Type::I1);
  f.add_var("out", t);
  f.add_block("entry");
  ir::Builder b(f);
  auto var = [&](uint32_t i) { return b.emit(Opcode::LoadVar, f.vars[i].type, {}, 0, 0, i); };
  auto x = var(0), val = var(1);
  auto mask = entry_mask ? b.emit(Opcode::EntryMask, Type::I1, {}, 0, 0, 0) : var(2);
  const unsigned bytes = ir::bit_width(t) / 8;
  auto a = b.zext(Type::I64, x);
  if (space_base) a = b.or_(a, b.i64(space_base));
  if (guard) {
    auto bad = b.icmp(ir::IntPred::Ne, b.and_(x, b.i32(bytes - 1)), b.i32(0));
    a = b.select(bad, b.i64(kUnbacked), a);
  }
  if (store) b.store(ir::Space::Global, ir::AddrClass::Random, a, val, mask);
  if (load) {
    auto out = b.load(t, ir::Space::Global, ir::AddrClass::Random, a, mask);
    b.emit(Opcode::StoreVar, Type::Void, {out}, 0, 0, 3);
  }
  b.ret();
  f.compute_preds();
  REQUIRE(ir::verify(f) == "");
  return f;
}

}  // namespace

TEST_CASE("x64 narrow address: consecutive runs, masks, window edges, misaligned lanes, wraps, space bases") {
  std::mt19937_64 rng(131);
  const int per_shape = std::getenv("GPURC_TEST_LIGHT") ? 12 : 36;
  for (Type t : {Type::I32, Type::F32, Type::I64})
    for (int shape = 0; shape < 4; ++shape)  // guard, space base, entry mask as the mask
      for (int mode = 0; mode < 3; ++mode) {  // load, store + load, store only
        const bool guard = shape != 1, based = shape == 2, entry = shape == 3;
        ir::Function f = narrow_function(t, guard, based ? 1ull << 32 : 0, mode != 0, mode != 2, entry);
        const unsigned bytes = ir::bit_width(t) / 8;
        for (int k = 0; k < per_shape; ++k) {
          RunSpec s;
          s.vars.resize(f.vars_bytes());
          fill_random(s.vars, rng);
          s.memory = true;
          s.memory_bytes = kMemBytes;
          s.memory_init.resize(kMemBytes);
          fill_random(s.memory_init, rng);
          s.window = true;
          s.window_offset = 128;
          s.window_bytes = 512;
          if (k % 2) s.extra_windows = {{640, 384}};
          const uint64_t win = 128, win_end = k % 2 ? kMemBytes : 128 + 512;  // offsets in the memory
          const unsigned first = unsigned(rng() % 32);
          switch (k % 4) {
            case 0: s.entry_mask = ~0u; break;
            case 1: s.entry_mask = ~0u << first; break;
            case 2: s.entry_mask = ~0u >> first; break;
            default: s.entry_mask = uint32_t(rng()) | 1u << first; break;
          }
          const unsigned lo = unsigned(__builtin_ctz(s.entry_mask));
          const unsigned last = 31u - unsigned(__builtin_clz(s.entry_mask));
          // Lane 0's x (32 bits: the address is kMemBase + offset, or C + x).
          int64_t off;
          switch (rng() % 8) {
            case 0: off = int64_t(win) - int64_t(lo) * bytes - int64_t(rng() % 2) * bytes; break;
            case 1: off = int64_t(win_end) - int64_t(last + 1) * bytes + int64_t(rng() % 2) * bytes; break;
            case 2: off = int64_t(win) + 1 + int64_t(rng() % (bytes - 1)) + bytes * int64_t(rng() % 4); break;
            case 3: off = 660 + bytes * int64_t(rng() % 4); break;                 // the second window
            case 4: off = -int64_t(kMemBase) - int64_t(lo) * bytes + bytes * int64_t(rng() % 3); break;  // near x = 0
            case 5: off = int64_t(0x100000000ull - kMemBase) - bytes * int64_t(rng() % 40); break;   // wraps past 2^32
            case 6: off = int64_t(win) + 500 + bytes * int64_t(rng() % 8); break;  // across the first window's end
            default: off = int64_t(win) + bytes * int64_t(rng() % 16); break;
          }
          const int disturb = int(rng() % 4);  // 1: one lane misaligned, 2: one lane off the run
          const unsigned odd = unsigned(rng() % 32);
          for (unsigned l = 0; l < 32; ++l) {
            uint32_t x = uint32_t(uint64_t(kMemBase) + uint64_t(off) + uint64_t(l) * bytes);
            if (l == odd && disturb == 1) x += 1 + uint32_t(rng() % (bytes - 1));
            if (l == odd && disturb == 2) x += bytes * 3;
            set_lane(s.vars, f, 0, l, x);
            set_lane(s.vars, f, 2, l, k % 5 == 4 ? uint32_t(rng() % 2) : 1u);  // the mask var (unless entry)
          }
          check_all_tiers(f, s,
                          std::string(ir::type_name(t)) + " shape " + std::to_string(shape) + " mode " +
                              std::to_string(mode) + " k " + std::to_string(k) + " off " + std::to_string(off) +
                              " disturb " + std::to_string(disturb) + " lane " + std::to_string(odd));
        }
      }
}

TEST_CASE("x64 narrow address: with all 32 lanes taking part, lane 0's x is read without the mask") {
  // (Sixteenth session.) The address's first lane was `bsf` of the taking-
  // part lanes, which put the mask's conversion on the chain to the access;
  // now a full mask (tested by a predicted branch) reads lane 0's slot
  // directly and the bsf is left to partial masks (Avx512; Avx2 takes only
  // full masks on this path). The results: the runs of the first case.
  const ir::Function f = narrow_function(Type::I32, true, 0, false, true, false);
  for (x64::Tier tier : {x64::Tier::Avx512, x64::Tier::Avx2}) {
    x64::JitOptions o{tier};
    o.listing_only = !x64::host_supports(tier);
    std::string err;
    auto cf = x64::compile(f, o, &err);
    REQUIRE_MESSAGE(cf, err);
    const std::string text = cf->disassemble();
    const size_t full = text.find("cmp ecx, 0xFFFFFFFF");
    REQUIRE(full != std::string::npos);
    // Lane 0's dword of x: Avx2 after the branch (the next two lines),
    // Avx512 just before the compare (the all-lanes case falls through).
    size_t p = full;
    if (tier == x64::Tier::Avx512) {
      p = text.rfind('\n', full);
      REQUIRE(p != std::string::npos);
      p = text.rfind('\n', p - 1);
    } else {
      for (int i = 0; i < 2 && p != std::string::npos; ++i) p = text.find('\n', p + 1);
    }
    REQUIRE(p != std::string::npos);
    const std::string line = text.substr(p + 1, text.find('\n', p + 1) - p - 1);
    // (x's var is its home: [r13 + offset], lane 0 without an index register)
    CHECK_MESSAGE((line.find("mov esi, [r") != std::string::npos && line.find("rax") == std::string::npos),
                  x64::tier_name(tier) << ": " << line);
  }
}

TEST_CASE("x64 narrow address: the shapes the path takes and leaves") {
  // An alignment mask with a bit at or above the element size (the lanes of
  // a consecutive run then differ in it) is not the narrow shape: the
  // general path runs it, with the same results.
  std::mt19937_64 rng(132);
  ir::Function f;
  f.add_var("x", Type::I32);
  f.add_var("out", Type::I32);
  f.add_block("entry");
  ir::Builder b(f);
  auto x = b.emit(Opcode::LoadVar, Type::I32, {}, 0, 0, 0);
  auto bad = b.icmp(ir::IntPred::Ne, b.and_(x, b.i32(4)), b.i32(0));
  auto a = b.select(bad, b.i64(kUnbacked), b.zext(Type::I64, x));
  auto out = b.load(Type::I32, ir::Space::Global, ir::AddrClass::Random, a, b.emit(Opcode::EntryMask, Type::I1, {}, 0, 0, 0));
  b.emit(Opcode::StoreVar, Type::Void, {out}, 0, 0, 1);
  b.ret();
  f.compute_preds();
  REQUIRE(ir::verify(f) == "");
  for (int k = 0; k < 4; ++k) {
    RunSpec s;
    s.vars.resize(f.vars_bytes());
    fill_random(s.vars, rng);
    s.memory = true;
    s.memory_bytes = kMemBytes;
    s.memory_init.resize(kMemBytes);
    fill_random(s.memory_init, rng);
    s.window = true;
    s.entry_mask = k % 2 ? ~0u : 0xffu;
    // Lanes 0..7 have bit 2 clear only at even lanes: the guard faults at lane 1 (k even: 8 lanes).
    for (unsigned l = 0; l < 32; ++l) set_lane(s.vars, f, 0, l, uint32_t(kMemBase + 64 + (k >= 2 ? 8 * l : 4 * l)));
    check_all_tiers(f, s, "mask 4 k " + std::to_string(k));
  }
}

TEST_CASE("x64 narrow address: a later access in a dominated block reuses the first one's checks") {
  // entry: out = load a; branch on c (the same in every lane); then: store
  // val at a; join: out2 = load a. The store and the second load read the
  // entry load's cached outcome (the store's block does not dominate the
  // join, so the join's load does not take the store's); the store's data
  // must be what the join's load sees. Runs with consecutive, misaligned and
  // disturbed lanes, both branch directions.
  ir::Function f;
  f.add_var("x", Type::I32);
  f.add_var("val", Type::I32);
  f.add_var("mask", Type::I1);
  f.add_var("out", Type::I32);
  f.add_var("c", Type::I1);
  f.add_var("out2", Type::I32);
  const ir::BlockId entry = f.add_block("entry"), then = f.add_block("then"), join = f.add_block("join");
  ir::Builder b(f);
  b.set_block(entry);
  auto var = [&](uint32_t i) { return b.emit(Opcode::LoadVar, f.vars[i].type, {}, 0, 0, i); };
  auto x = var(0), val = var(1), mask = var(2);
  auto bad = b.icmp(ir::IntPred::Ne, b.and_(x, b.i32(3)), b.i32(0));
  auto a = b.select(bad, b.i64(kUnbacked), b.zext(Type::I64, x));
  b.emit(Opcode::StoreVar, Type::Void, {b.load(Type::I32, ir::Space::Global, ir::AddrClass::Random, a, mask)}, 0, 0, 3);
  b.cond_br(var(4), then, join);
  b.set_block(then);
  b.store(ir::Space::Global, ir::AddrClass::Random, a, val, mask);
  b.br(join);
  b.set_block(join);
  b.emit(Opcode::StoreVar, Type::Void, {b.load(Type::I32, ir::Space::Global, ir::AddrClass::Random, a, mask)}, 0, 0, 5);
  b.ret();
  f.compute_preds();
  REQUIRE(ir::verify(f) == "");
  std::mt19937_64 rng(133);
  for (int k = 0; k < 24; ++k) {
    RunSpec s;
    s.vars.resize(f.vars_bytes());
    fill_random(s.vars, rng);
    s.memory = true;
    s.memory_bytes = kMemBytes;
    s.memory_init.resize(kMemBytes);
    fill_random(s.memory_init, rng);
    s.window = true;
    s.entry_mask = k % 3 == 0 ? ~0u : k % 3 == 1 ? ~0u << (k % 32) : uint32_t(rng()) | 1u;
    const uint32_t off = k % 4 == 3 ? 1000 - 64 : 128 + 4 * uint32_t(rng() % 16) + (k % 5 == 4 ? 2 : 0);
    const unsigned odd = unsigned(rng() % 32);
    const uint32_t c = uint32_t(k / 2 % 2);
    for (unsigned l = 0; l < 32; ++l) {
      uint32_t xl = uint32_t(kMemBase) + off + 4 * l;
      if (k % 6 == 5 && l == odd) xl += 12;
      set_lane(s.vars, f, 0, l, xl);
      set_lane(s.vars, f, 2, l, 1u);
      set_lane(s.vars, f, 4, l, c);
    }
    check_all_tiers(f, s, "dominated k " + std::to_string(k) + " c " + std::to_string(c));
  }
}

namespace {
// vars x, y (i32), val (i32), mask (i1), pred (i1), o1, o2, bal (i32):
// o1 = load [x]; o2 = load [y]; bal = ballot(pred, mask); any(pred, mask)
// branches to a store of val at [y]. The two loads, the ballot and the any
// all read one mask value: the first load converts it and stores its lanes,
// the others read them (plan_mask_cache).
// With `distinct` each later reader takes its mask from a load of a second
// var of its own (other values: nothing to share), for comparing the code.
ir::Function shared_mask_function(bool distinct = false) {
  ir::Function f;
  for (const char* n : {"x", "y", "val"}) f.add_var(n, Type::I32);
  f.add_var("mask", Type::I1);
  f.add_var("pred", Type::I1);
  for (const char* n : {"o1", "o2", "bal"}) f.add_var(n, Type::I32);
  f.add_var("mask2", Type::I1);
  const ir::BlockId entry = f.add_block("entry"), then = f.add_block("then"), join = f.add_block("join");
  ir::Builder b(f);
  b.set_block(entry);
  auto var = [&](uint32_t i) { return b.emit(Opcode::LoadVar, f.vars[i].type, {}, 0, 0, i); };
  auto addr = [&](ir::ValueId x) {
    auto bad = b.icmp(ir::IntPred::Ne, b.and_(x, b.i32(3)), b.i32(0));
    return b.select(bad, b.i64(kUnbacked), b.zext(Type::I64, x));
  };
  auto x = var(0), y = var(1), val = var(2), mask = var(3), pred = var(4);
  auto ax = addr(x), ay = addr(y);
  b.emit(Opcode::StoreVar, Type::Void, {b.load(Type::I32, ir::Space::Global, ir::AddrClass::Random, ax, mask)}, 0, 0, 5);
  auto later = [&] { return distinct ? var(8) : mask; };  // a load_var of its own: another value
  b.emit(Opcode::StoreVar, Type::Void, {b.load(Type::I32, ir::Space::Global, ir::AddrClass::Random, ay, later())}, 0, 0, 6);
  b.emit(Opcode::StoreVar, Type::Void, {b.emit(Opcode::Ballot, Type::I32, {pred, later()}, 0, 0, 0)}, 0, 0, 7);
  b.cond_br(b.emit(Opcode::Any, Type::I1, {pred, later()}, 0, 0, 0), then, join);
  b.set_block(then);
  b.store(ir::Space::Global, ir::AddrClass::Random, ay, val, mask);
  b.br(join);
  b.set_block(join);
  b.ret();
  f.compute_preds();
  REQUIRE(ir::verify(f) == "");
  return f;
}
}  // namespace

TEST_CASE("x64 narrow address: accesses and votes of one mask share its taking-part lanes") {
  ir::Function f = shared_mask_function();
  std::mt19937_64 rng(134);
  const int runs = std::getenv("GPURC_TEST_LIGHT") ? 48 : 160;
  for (int k = 0; k < runs; ++k) {
    RunSpec s;
    s.vars.resize(f.vars_bytes());
    fill_random(s.vars, rng);
    s.memory = true;
    s.memory_bytes = kMemBytes;
    s.memory_init.resize(kMemBytes);
    fill_random(s.memory_init, rng);
    s.window = true;
    s.window_offset = 128;
    s.window_bytes = 512;
    s.entry_mask = k % 4 == 0 ? ~0u : k % 4 == 1 ? ~0u << (k % 32) : uint32_t(rng()) | 1u;
    // x and y runs: inside, past the window's end (the fallback faults at
    // the first lane outside), misaligned, or one lane off the run.
    auto run_off = [&](int kind) -> uint32_t {
      switch (kind) {
        case 0: return 128 + 4 * uint32_t(rng() % 16);
        case 1: return 128 + 512 - 4 * 24;                     // lanes 24.. outside
        case 2: return 128 + 2 + 4 * uint32_t(rng() % 8);      // misaligned: the guard's address faults
        default: return 128 + 256 + 4 * uint32_t(rng() % 16);  // inside (a second buffer)
      }
    };
    const int kx = rng() % 6 == 0 ? int(1 + rng() % 2) : 0, ky = rng() % 6 == 0 ? int(1 + rng() % 2) : 3;
    const uint32_t ox = run_off(kx), oy = run_off(ky);
    const unsigned odd = unsigned(rng() % 32);
    const int mask_kind = int(rng() % 4);  // 0: all ones, 1: random, 2: none, 3: one lane
    for (unsigned l = 0; l < 32; ++l) {
      uint32_t xl = uint32_t(kMemBase) + ox + 4 * l, yl = uint32_t(kMemBase) + oy + 4 * l;
      if (k % 7 == 6 && l == odd) yl += 8;  // y off its run in one lane: the gather path
      set_lane(s.vars, f, 0, l, xl);
      set_lane(s.vars, f, 1, l, yl);
      const uint32_t m = mask_kind == 0 ? 1u : mask_kind == 1 ? uint32_t(rng() % 2) : mask_kind == 2 ? 0u : l == odd;
      set_lane(s.vars, f, 3, l, m);
      set_lane(s.vars, f, 4, l, uint32_t(rng() % 3 == 0));
    }
    check_all_tiers(f, s,
                    "shared mask k " + std::to_string(k) + " x " + std::to_string(kx) + " y " + std::to_string(ky) +
                        " mask kind " + std::to_string(mask_kind));
  }
  // The code: of the four readers of the mask (two loads, two votes) only
  // the first load converts it on its fast path; the others read the lanes
  // it stored. The same function with the later readers on another mask
  // value converts it three more times (32 lanes each).
  for (x64::Tier tier : {x64::Tier::Avx512, x64::Tier::Avx2}) {
    if (!x64::host_supports(tier)) continue;
    const std::string conv = tier == x64::Tier::Avx2 ? "vpmovmskb" : "kunpckwd";  // once per conversion (lane_bits)
    auto conversions = [&](const ir::Function& g) {
      std::string err;
      auto cf = x64::compile(g, x64::JitOptions{tier}, &err);
      REQUIRE_MESSAGE(cf, err);
      const std::string text = cf->disassemble();
      size_t n = 0;
      for (size_t p = text.find(conv); p != std::string::npos; p = text.find(conv, p + 1)) ++n;
      return n;
    };
    const size_t per = 1;  // marker instructions per conversion of 32 lanes
    const size_t shared = conversions(f), distinct = conversions(shared_mask_function(true));
    CHECK_MESSAGE(shared + 3 * per <= distinct, x64::tier_name(tier) << ": " << shared << " vs " << distinct);
  }
}

TEST_CASE("x64 narrow address: under the unlaunched-lanes contract an entry-mask load's slot is not zeroed per warp") {
  // out = load [x] under entry_mask; out2 = out + 1 (read by a strip op, so
  // the unlaunched lanes' slot contents reach out2's var there, don't-care
  // under the contract). Partial launches against the interpreter, and the
  // code: without the contract the prologue zeroes the result slot before
  // every warp (128 bytes: stores of a zeroed vector register 0), with it not.
  auto make = [](bool contract) {
    ir::Function f;
    f.add_var("x", Type::I32);
    f.add_var("out", Type::I32);
    f.add_var("out2", Type::I32);
    f.unlaunched_lanes_free = contract;
    f.add_block("entry");
    ir::Builder b(f);
    auto x = b.emit(Opcode::LoadVar, Type::I32, {}, 0, 0, 0);
    auto out = b.load(Type::I32, ir::Space::Global, ir::AddrClass::Random, b.zext(Type::I64, x),
                      b.emit(Opcode::EntryMask, Type::I1, {}, 0, 0, 0));
    b.emit(Opcode::StoreVar, Type::Void, {out}, 0, 0, 1);
    b.emit(Opcode::StoreVar, Type::Void, {b.binary(Opcode::IAdd, out, b.i32(1))}, 0, 0, 2);
    b.ret();
    f.compute_preds();
    REQUIRE(ir::verify(f) == "");
    return f;
  };
  std::mt19937_64 rng(135);
  for (bool contract : {false, true}) {
    ir::Function f = make(contract);
    for (int k = 0; k < 16; ++k) {
      RunSpec s;
      s.vars.resize(f.vars_bytes());
      fill_random(s.vars, rng);
      s.memory = true;
      s.memory_bytes = kMemBytes;
      s.memory_init.resize(kMemBytes);
      fill_random(s.memory_init, rng);
      s.window = true;
      s.entry_mask = k % 4 == 0 ? ~0u : k % 4 == 1 ? ~0u >> (k % 32) : uint32_t(rng()) | 1u;
      const uint32_t off = k % 8 == 7 ? 1000 : 128 + 4 * uint32_t(rng() % 64);  // k % 8 == 7: faults
      for (unsigned l = 0; l < 32; ++l) set_lane(s.vars, f, 0, l, uint32_t(kMemBase) + off + 4 * l);
      check_all_tiers(f, s, "contract " + std::to_string(contract) + " k " + std::to_string(k));
    }
  }
  for (x64::Tier tier : {x64::Tier::Avx512, x64::Tier::Avx2}) {
    if (!x64::host_supports(tier)) continue;
    auto zero_stores = [&](const ir::Function& g) {
      std::string err;
      auto cf = x64::compile(g, x64::JitOptions{tier}, &err);
      REQUIRE_MESSAGE(cf, err);
      const std::string text = cf->disassemble();
      // Stores of vector register 0 (the zeros) to the frame.
      size_t n = 0;
      for (size_t p = text.find("[r12"); p != std::string::npos; p = text.find("[r12", p + 1)) {
        const size_t eol = text.find('\n', p), line = text.rfind('\n', p) + 1;
        const std::string l = text.substr(line, eol - line);
        if (l.find("vmovdq") != std::string::npos && (l.ends_with("], ymm0") || l.ends_with("], zmm0"))) ++n;
      }
      return n;
    };
    const size_t stores = tier == x64::Tier::Avx2 ? 4 : 2;  // 128 bytes of zeros
    const size_t with = zero_stores(make(true)), without = zero_stores(make(false));
    CHECK_MESSAGE(with + stores <= without, x64::tier_name(tier) << ": " << with << " vs " << without);
  }
}

TEST_CASE("x64 memory: a load whose other lanes nothing reads keeps no zeroed slot") {
  // c = (var m != 0); out = load [x] under c; store out * 3 + 1 at [x] under
  // c; vote = any(out > 5, c) stored as a var (a uniform value). Nothing
  // reads out's lanes outside c, so its slot is not zeroed per warp
  // (load_off_lanes_unread, emitter.cpp); the variant that also stores out
  // + 1 to a var (every lane read) keeps the zeroing. Both against the
  // interpreter with partial, random and full masks, under full and partial
  // launches.
  auto make = [](bool var_reader) {
    ir::Function f;
    f.add_var("x", Type::I32);
    f.add_var("m", Type::I32);
    f.add_var("vote", Type::I1);
    f.add_var("out", Type::I32);
    f.add_block("entry");
    ir::Builder b(f);
    auto x = b.emit(Opcode::LoadVar, Type::I32, {}, 0, 0, 0);
    auto m = b.emit(Opcode::LoadVar, Type::I32, {}, 0, 0, 1);
    auto c = b.icmp(ir::IntPred::Ne, m, b.i32(0));
    auto a = b.zext(Type::I64, x);
    auto out = b.load(Type::I32, ir::Space::Global, ir::AddrClass::Random, a, c);
    auto v = b.binary(Opcode::IAdd, b.binary(Opcode::IMul, out, b.i32(3)), b.i32(1));
    b.store(ir::Space::Global, ir::AddrClass::Random, a, v, c);
    b.emit(Opcode::StoreVar, Type::Void, {b.emit(Opcode::Any, Type::I1, {b.icmp(ir::IntPred::Ugt, out, b.i32(5)), c})}, 0, 0, 2);
    if (var_reader) b.emit(Opcode::StoreVar, Type::Void, {b.binary(Opcode::IAdd, out, b.i32(1))}, 0, 0, 3);
    b.ret();
    f.compute_preds();
    REQUIRE(ir::verify(f) == "");
    return f;
  };
  std::mt19937_64 rng(1717);
  for (bool var_reader : {false, true}) {
    ir::Function f = make(var_reader);
    for (int k = 0; k < 24; ++k) {
      RunSpec s;
      s.vars.resize(f.vars_bytes());
      fill_random(s.vars, rng);
      s.memory = true;
      s.memory_bytes = kMemBytes;
      s.memory_init.resize(kMemBytes);
      fill_random(s.memory_init, rng);
      s.window = true;
      s.entry_mask = k % 3 == 0 ? ~0u : k % 3 == 1 ? ~0u >> (k % 32) : uint32_t(rng()) | 1u;
      const uint32_t off = k % 8 == 7 ? 1000 : 128 + 4 * uint32_t(rng() % 64);  // k % 8 == 7: faults
      const uint32_t mask = k % 4 == 0 ? ~0u : k % 4 == 1 ? ~0u >> (k % 29) : uint32_t(rng());
      for (unsigned l = 0; l < 32; ++l) {
        set_lane(s.vars, f, 0, l, uint32_t(kMemBase) + off + 4 * l);
        set_lane(s.vars, f, 1, l, mask >> l & 1 ? uint32_t(rng()) | 1u : 0u);
      }
      check_all_tiers(f, s, "var reader " + std::to_string(var_reader) + " k " + std::to_string(k));
    }
  }
  for (x64::Tier tier : {x64::Tier::Avx512, x64::Tier::Avx2}) {
    auto zero_stores = [&](const ir::Function& g) {
      const std::string text = gpurc::test::compile_for_tier(g, tier)->disassemble();
      // Stores of vector register 0 (the zeros) to the frame.
      size_t n = 0;
      for (size_t p = text.find("[r12"); p != std::string::npos; p = text.find("[r12", p + 1)) {
        const size_t eol = text.find('\n', p), line = text.rfind('\n', p) + 1;
        const std::string l = text.substr(line, eol - line);
        if (l.find("vmovdq") != std::string::npos && (l.ends_with("], ymm0") || l.ends_with("], zmm0"))) ++n;
      }
      return n;
    };
    const size_t stores = tier == x64::Tier::Avx2 ? 4 : 2;  // 128 bytes of zeros
    const size_t unread = zero_stores(make(false)), read = zero_stores(make(true));
    CHECK_MESSAGE(unread + stores <= read, x64::tier_name(tier) << ": " << unread << " vs " << read);
  }
}

TEST_CASE("x64 narrow address: x = u + s checks s once for every uniform addend") {
  // Tesla's saxpy shape: x = load_uniform(0) + s, y = load_uniform(4) + s
  // (the i32 adds), each under the alignment guard; o1 = load [x], o2 =
  // load [y], store o1 + o2 at [y]. The load of y and the store take the
  // load of x's check of s and add their own u; the store takes the load of
  // y's host pointer. Uniforms aligned or not, near 2^32 (x wraps while s
  // does not), runs inside, past the window, one lane off the run.
  ir::Function f;
  f.add_var("s", Type::I32);
  f.add_var("mask", Type::I1);
  f.add_var("o1", Type::I32);
  f.add_var("o2", Type::I32);
  f.uniform_bytes = 8;
  f.add_block("entry");
  ir::Builder b(f);
  auto s_v = b.emit(Opcode::LoadVar, Type::I32, {}, 0, 0, 0);
  auto mask = b.emit(Opcode::LoadVar, Type::I1, {}, 0, 0, 1);
  auto addr = [&](ir::ValueId x) {
    auto bad = b.icmp(ir::IntPred::Ne, b.and_(x, b.i32(3)), b.i32(0));
    return b.select(bad, b.i64(kUnbacked), b.zext(Type::I64, x));
  };
  auto x = b.binary(Opcode::IAdd, b.load_uniform(Type::I32, 0), s_v);
  auto y = b.binary(Opcode::IAdd, s_v, b.load_uniform(Type::I32, 4));
  auto ax = addr(x), ay = addr(y);
  auto o1 = b.load(Type::I32, ir::Space::Global, ir::AddrClass::Random, ax, mask);
  auto o2 = b.load(Type::I32, ir::Space::Global, ir::AddrClass::Random, ay, mask);
  b.emit(Opcode::StoreVar, Type::Void, {o1}, 0, 0, 2);
  b.emit(Opcode::StoreVar, Type::Void, {o2}, 0, 0, 3);
  b.store(ir::Space::Global, ir::AddrClass::Random, ay, b.binary(Opcode::IAdd, o1, o2), mask);
  b.ret();
  f.compute_preds();
  REQUIRE(ir::verify(f) == "");
  std::mt19937_64 rng(136);
  const int runs = std::getenv("GPURC_TEST_LIGHT") ? 64 : 200;
  for (int k = 0; k < runs; ++k) {
    RunSpec s;
    s.vars.resize(f.vars_bytes());
    fill_random(s.vars, rng);
    s.memory = true;
    s.memory_bytes = kMemBytes;
    s.memory_init.resize(kMemBytes);
    fill_random(s.memory_init, rng);
    s.window = true;
    s.window_offset = 128;
    s.window_bytes = 512;
    if (k % 3 == 2) s.extra_windows = {{640, 384}};
    // Mostly whole warps (AVX2 takes the consecutive path only then).
    s.entry_mask = k % 4 != 3 ? ~0u : k % 8 == 3 ? ~0u << (k % 32) : uint32_t(rng()) | 1u;
    // s runs from s0; u's place x and y in the memory (or not).
    const uint32_t s0 = k % 5 == 4 ? uint32_t(0x100000000ull - 4 * (rng() % 40)) : 4 * uint32_t(rng() % 64);
    auto u_for = [&](int kind) -> uint32_t {
      const uint32_t target = uint32_t(kMemBase) + 128 + 4 * uint32_t(rng() % 32);
      switch (kind) {
        case 0: return target - s0;                        // inside
        case 1: return target - s0 + 1 + uint32_t(rng() % 3);  // misaligned: the guard's address
        case 2: return uint32_t(kMemBase) + 600 - s0;      // past the first window's end
        default: return uint32_t(0u - uint32_t(rng() % 64) * 4 - s0);  // x wraps past 2^32
      }
    };
    const int kx = rng() % 2 ? int(rng() % 4) : 0, ky = rng() % 2 ? int(rng() % 4) : 0;
    s.uniforms.resize(8);
    const uint32_t ux = u_for(kx), uy = u_for(ky);
    std::memcpy(s.uniforms.data(), &ux, 4);
    std::memcpy(s.uniforms.data() + 4, &uy, 4);
    const unsigned odd = unsigned(rng() % 32);
    for (unsigned l = 0; l < 32; ++l) {
      uint32_t sl = s0 + 4 * l;
      if (k % 7 == 6 && l == odd) sl += 8;
      set_lane(s.vars, f, 0, l, sl);
      set_lane(s.vars, f, 1, l, k % 12 == 11 ? uint32_t(rng() % 2) : 1u);
    }
    check_all_tiers(f, s,
                    "addend k " + std::to_string(k) + " x " + std::to_string(kx) + " y " + std::to_string(ky) + " s0 " +
                        std::to_string(s0));
  }
}

TEST_CASE("x64 narrow address: after a load_uniform that always runs, x = u + s and u are left to the fallbacks") {
  // o3 = load_uniform(8) first (kept: a var reads it); x = u0 + s, y = s + u4
  // under the alignment guard; o1 = load [x], o2 = load [y]; then, in a
  // dominated block, store o1 + o2 + o3 at [y]. The earlier load_uniform
  // faults on a missing uniform block before anything else, so u0, u4 and
  // the sums are computed only by the fallbacks (the fast paths read s's
  // slot and u themselves): the code before the first access reads no
  // uniform at 0 or 4. Runs with and without the uniform block (the same
  // fault as the interpreter), inside and past the windows, misaligned.
  ir::Function f;
  f.add_var("s", Type::I32);
  f.add_var("mask", Type::I1);
  f.add_var("o1", Type::I32);
  f.add_var("o2", Type::I32);
  f.add_var("o3", Type::I32);
  f.uniform_bytes = 12;
  f.add_block("entry");
  const ir::BlockId tail = f.add_block("tail");
  ir::Builder b(f);
  auto s_v = b.emit(Opcode::LoadVar, Type::I32, {}, 0, 0, 0);
  auto mask = b.emit(Opcode::LoadVar, Type::I1, {}, 0, 0, 1);
  auto k = b.load_uniform(Type::I32, 8);
  auto addr = [&](ir::ValueId x) {
    auto bad = b.icmp(ir::IntPred::Ne, b.and_(x, b.i32(3)), b.i32(0));
    return b.select(bad, b.i64(kUnbacked), b.zext(Type::I64, x));
  };
  auto x = b.binary(Opcode::IAdd, b.load_uniform(Type::I32, 0), s_v);
  auto y = b.binary(Opcode::IAdd, s_v, b.load_uniform(Type::I32, 4));
  auto ax = addr(x), ay = addr(y);
  auto o1 = b.load(Type::I32, ir::Space::Global, ir::AddrClass::Random, ax, mask);
  auto o2 = b.load(Type::I32, ir::Space::Global, ir::AddrClass::Random, ay, mask);
  b.emit(Opcode::StoreVar, Type::Void, {o1}, 0, 0, 2);
  b.emit(Opcode::StoreVar, Type::Void, {o2}, 0, 0, 3);
  b.emit(Opcode::StoreVar, Type::Void, {k}, 0, 0, 4);
  b.br(tail);
  b.set_block(tail);
  b.store(ir::Space::Global, ir::AddrClass::Random, ay, b.binary(Opcode::IAdd, b.binary(Opcode::IAdd, o1, o2), k),
          mask);
  b.ret();
  f.compute_preds();
  REQUIRE(ir::verify(f) == "");
  for (x64::Tier tier : {x64::Tier::Avx512, x64::Tier::Avx2}) {
    std::string err;
    x64::JitOptions o{tier};
    o.listing_only = !x64::host_supports(tier);
    auto cf = x64::compile(f, o, &err);
    REQUIRE_MESSAGE(cf, err);
    // The lines reading the uniforms, in order: offset 8 first (the strip's
    // broadcast, once per strip where the segment is unrolled), then u0 / u4
    // only as a fast path's dword (mov eax, ...), never broadcast into lanes
    // before the accesses.
    std::vector<std::string> reads;
    const std::string text = cf->disassemble();
    for (size_t p = 0, e; p < text.size(); p = e + 1) {
      e = text.find('\n', p);
      if (e == std::string::npos) e = text.size();
      const std::string line = text.substr(p, e - p);
      if (line.find("[r15") != std::string::npos) reads.push_back(line);
    }
    REQUIRE_MESSAGE(reads.size() >= 2, x64::tier_name(tier));
    CHECK_MESSAGE(reads[0].find("[r15+0x08]") != std::string::npos, reads[0]);
    size_t next = 1;
    while (next + 1 < reads.size() && reads[next].find("[r15+0x08]") != std::string::npos) ++next;
    CHECK_MESSAGE(reads[next].find("mov eax, [r15") != std::string::npos, reads[next]);
  }
  std::mt19937_64 rng(137);
  const int runs = std::getenv("GPURC_TEST_LIGHT") ? 48 : 160;
  for (int kk = 0; kk < runs; ++kk) {
    RunSpec s;
    s.vars.resize(f.vars_bytes());
    fill_random(s.vars, rng);
    s.memory = true;
    s.memory_bytes = kMemBytes;
    s.memory_init.resize(kMemBytes);
    fill_random(s.memory_init, rng);
    s.window = true;
    s.window_offset = 128;
    s.window_bytes = 512;
    if (kk % 3 == 2) s.extra_windows = {{640, 384}};
    s.entry_mask = kk % 4 != 3 ? ~0u : uint32_t(rng()) | 1u;
    const uint32_t s0 = 4 * uint32_t(rng() % 64);
    auto u_for = [&](int kind) -> uint32_t {
      const uint32_t target = uint32_t(kMemBase) + 128 + 4 * uint32_t(rng() % 32);
      switch (kind) {
        case 0: return target - s0;                            // inside
        case 1: return target - s0 + 1 + uint32_t(rng() % 3);  // misaligned
        default: return uint32_t(kMemBase) + 600 - s0;         // past the first window's end
      }
    };
    if (kk % 5 != 4) {  // else no uniform block: the fault of load_uniform(8)
      s.uniforms.resize(12);
      const uint32_t ux = u_for(rng() % 2 ? int(rng() % 3) : 0), uy = u_for(rng() % 2 ? int(rng() % 3) : 0);
      const uint32_t kv = uint32_t(rng());
      std::memcpy(s.uniforms.data(), &ux, 4);
      std::memcpy(s.uniforms.data() + 4, &uy, 4);
      std::memcpy(s.uniforms.data() + 8, &kv, 4);
    }
    for (unsigned l = 0; l < 32; ++l) {
      set_lane(s.vars, f, 0, l, s0 + 4 * l);
      set_lane(s.vars, f, 1, l, kk % 12 == 11 ? uint32_t(rng() % 2) : 1u);
    }
    check_all_tiers(f, s, "earlier uniform, case " + std::to_string(kk));
  }
}

TEST_CASE("x64 narrow address: x = u + s under a mask with no lane, without a uniform block: u's fault") {
  // u is the function's only load_uniform: it is computed where it stands
  // (the access skips its fallback when no lane takes part, so a u left to
  // the fallback would never report the missing uniform block).
  ir::Function f;
  f.add_var("s", Type::I32);
  f.add_var("mask", Type::I1);
  f.add_var("o1", Type::I32);
  f.uniform_bytes = 8;
  f.add_block("entry");
  ir::Builder b(f);
  auto s_v = b.emit(Opcode::LoadVar, Type::I32, {}, 0, 0, 0);
  auto mask = b.emit(Opcode::LoadVar, Type::I1, {}, 0, 0, 1);
  auto x = b.binary(Opcode::IAdd, b.load_uniform(Type::I32, 4), s_v);
  auto bad = b.icmp(ir::IntPred::Ne, b.and_(x, b.i32(3)), b.i32(0));
  auto ax = b.select(bad, b.i64(kUnbacked), b.zext(Type::I64, x));
  auto o1 = b.load(Type::I32, ir::Space::Global, ir::AddrClass::Random, ax, mask);
  b.emit(Opcode::StoreVar, Type::Void, {o1}, 0, 0, 2);
  b.ret();
  f.compute_preds();
  REQUIRE(ir::verify(f) == "");
  std::mt19937_64 rng(138);
  for (int k = 0; k < 24; ++k) {
    RunSpec s;
    s.vars.resize(f.vars_bytes());
    fill_random(s.vars, rng);
    s.memory = true;
    s.memory_bytes = kMemBytes;
    s.memory_init.resize(kMemBytes);
    fill_random(s.memory_init, rng);
    s.window = true;
    if (k % 2) {
      s.uniforms.resize(8);
      const uint32_t u = uint32_t(kMemBase) + 128;
      std::memcpy(s.uniforms.data() + 4, &u, 4);
    }
    for (unsigned l = 0; l < 32; ++l) {
      set_lane(s.vars, f, 0, l, 4 * l);
      set_lane(s.vars, f, 1, l, k % 4 < 2 ? 0u : uint32_t(rng() % 2));  // no lane, or some
    }
    check_all_tiers(f, s, "empty-mask addend, case " + std::to_string(k));
  }
}

TEST_CASE("x64 memory fast paths: an access with no lane still reports the missing uniform block of its deferred base") {
  // G13's indexed form, base (load_uniform(0) & ~3) + (zext x << 2), and
  // the narrow u + s form: the load_uniform is left to the access's
  // fallback; under a mask with no lane and without a uniform block the
  // interpreter faults at the load_uniform, so the access must too.
  for (bool indexed : {true, false}) {
    ir::Function f;
    f.add_var("x", Type::I32);
    f.add_var("mask", Type::I1);
    f.add_var("o1", Type::I32);
    f.uniform_bytes = 16;
    f.add_block("entry");
    ir::Builder b(f);
    auto x = b.emit(Opcode::LoadVar, Type::I32, {}, 0, 0, 0);
    auto mask = b.emit(Opcode::LoadVar, Type::I1, {}, 0, 0, 1);
    ir::ValueId addr;
    if (indexed) {
      auto base = b.and_(b.load_uniform(Type::I64, 0), b.i64(~uint64_t(3)));
      auto scaled = b.emit(Opcode::Shl, Type::I64, {b.zext(Type::I64, x), b.i32(2)}, uint8_t(ir::ShiftMode::Mask));
      addr = b.binary(Opcode::IAdd, base, scaled);
    } else {
      auto sum = b.binary(Opcode::IAdd, b.load_uniform(Type::I32, 8), x);
      auto bad = b.icmp(ir::IntPred::Ne, b.and_(sum, b.i32(3)), b.i32(0));
      addr = b.select(bad, b.i64(kUnbacked), b.zext(Type::I64, sum));
    }
    auto o1 = b.load(Type::I32, ir::Space::Global, ir::AddrClass::Random, addr, mask);
    b.emit(Opcode::StoreVar, Type::Void, {o1}, 0, 0, 2);
    b.ret();
    f.compute_preds();
    REQUIRE(ir::verify(f) == "");
    std::mt19937_64 rng(139);
    for (int k = 0; k < 16; ++k) {
      RunSpec s;
      s.vars.resize(f.vars_bytes());
      fill_random(s.vars, rng);
      s.memory = true;
      s.memory_bytes = kMemBytes;
      s.memory_init.resize(kMemBytes);
      fill_random(s.memory_init, rng);
      s.window = true;
      if (k % 2) {
        s.uniforms.resize(16);
        const uint64_t base = kMemBase + 64;
        std::memcpy(s.uniforms.data(), &base, 8);
        const uint32_t u = uint32_t(kMemBase) + 128;
        std::memcpy(s.uniforms.data() + 8, &u, 4);
      }
      for (unsigned l = 0; l < 32; ++l) {
        set_lane(s.vars, f, 0, l, indexed ? l : 4 * l);
        set_lane(s.vars, f, 1, l, k % 4 < 2 ? 0u : uint32_t(rng() % 2));
      }
      check_all_tiers(f, s, std::string(indexed ? "indexed" : "narrow") + " no-lane access, case " + std::to_string(k));
    }
  }
}

}  // namespace gpurc_test_backend_x64_narrow_access
