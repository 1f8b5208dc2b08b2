// Store homes (eighteenth session, Emitter::find_store_homes in
// backend_x64/memory_fast.cpp): a 4-byte indexed store whose value the strip
// segment right before it computes (read by nothing else) is probed before
// that segment's strips; when every lane takes part in one contiguous span
// inside a window that no homed load of the segment overlaps, each strip
// writes its lanes straight to guest memory and the store does nothing at
// its place; else the strips write the value's slot and the store runs as
// before. Each shape is compared with the IR interpreter on every host tier
// (results, memory, fault kind / lane / address): c[i] = a[i] + b[i] with c
// at, just above, just below and far from a (strip k's store must not
// change what strip k + 1 reads), under the entry mask and an exec mask; a
// stored value that escapes to a var, and through a phi to a helper in the
// next block (which reads its slot); a store of a loaded value and of an
// op of it; loads of the stored addresses (and overlapping ones) after the
// store; a helper call in the segment; a load_uniform in the segment, with
// and without the uniform block; two stores in one block; full, partial
// and random masks, runs at and past the window's edges, misaligned and
// out-of-run lanes. Then several warps in one run_warps call, and the
// listing.
#include <doctest/doctest.h>

#include <cstring>

#include "../backend/compare.h"
#include "backend_x64/jit.h"
#include "tests/backend_x64/tier_compile.h"

namespace gpurc_test_backend_x64_store_homes {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::backend::test;
using ir::Opcode;
using ir::Type;

namespace {

constexpr uint64_t kStoreMemBase = 0x10000;  // TestMemory's base
constexpr size_t kStoreMemBytes = 2048;

enum class StoreShape { Add, AddMasked, Escapes, StoreLoaded, StoreLoadedOp, LoadAfter, Helper, Uniform, TwoStores, Phi };
constexpr StoreShape kStoreShapes[] = {StoreShape::Add,        StoreShape::AddMasked,     StoreShape::Escapes,
                                       StoreShape::StoreLoaded, StoreShape::StoreLoadedOp, StoreShape::LoadAfter,
                                       StoreShape::Helper,      StoreShape::Uniform,       StoreShape::TwoStores,
                                       StoreShape::Phi};

// vars i (element index), mask (i1), out, out2 (f32); byte offsets of a, b,
// c (and d) in the memory are the uniform qwords 0..3 (added to
// kStoreMemBase: G13's `u & ~3` bases have the same shape), the f32 factor
// of the Uniform shape is the dword at 32.
ir::Function store_function(StoreShape shape) {
  ir::Function f;
  f.add_var("i", Type::I32);
  f.add_var("mask", Type::I1);
  f.add_var("out", Type::F32);
  f.add_var("out2", Type::F32);
  f.uniform_bytes = 36;
  f.add_block("entry");
  const ir::BlockId next = f.add_block("next");
  ir::Builder b(f);
  b.set_block(0);
  auto var = [&](uint32_t k) { return b.emit(Opcode::LoadVar, f.vars[k].type, {}, 0, 0, k); };
  auto set = [&](uint32_t k, ir::ValueId v) { b.emit(Opcode::StoreVar, Type::Void, {v}, 0, 0, k); };
  const auto i = var(0);
  const auto mask = shape == StoreShape::AddMasked ? var(1) : b.entry_mask();
  const auto scaled = b.shl(b.zext(Type::I64, i), b.i32(2));
  auto at = [&](uint32_t u) {
    return b.iadd(b.iadd(b.i64(kStoreMemBase), b.load_uniform(Type::I64, 8 * u)), scaled);
  };
  auto load = [&](uint32_t u) { return b.load(Type::I32, ir::Space::Global, ir::AddrClass::Random, at(u), mask); };
  auto loadf = [&](uint32_t u) { return b.bitcast(Type::F32, load(u)); };
  auto store = [&](uint32_t u, ir::ValueId v) { b.store(ir::Space::Global, ir::AddrClass::Random, at(u), v, mask); };
  auto storef = [&](uint32_t u, ir::ValueId v) { store(u, b.bitcast(Type::I32, v)); };
  const uint32_t ftz = ir::ff::FtzIn | ir::ff::FtzOut;
  switch (shape) {
    case StoreShape::Add: case StoreShape::AddMasked: {
      auto p = loadf(0), q = loadf(1);
      storef(2, b.fadd(p, q, ftz));
      break;
    }
    case StoreShape::Escapes: {  // the sum is also a var's: not homed
      auto p = loadf(0), q = loadf(1);
      auto s = b.fadd(p, q, ftz);
      storef(2, s);
      set(2, s);
      break;
    }
    case StoreShape::StoreLoaded:  // the store's value is a load: not homed
      store(2, load(0));
      break;
    case StoreShape::StoreLoadedOp:  // an op of one homed load: the overlap test against it
      store(2, b.xor_(load(0), b.i32(0x80000000u)));
      break;
    case StoreShape::LoadAfter: {  // later loads see the stored data (c, and c shifted by one element)
      auto p = loadf(0), q = loadf(1);
      storef(2, b.fmul(p, q));
      set(2, b.fadd(loadf(2), b.f32(1.0f)));
      auto shifted = b.iadd(at(2), b.i64(4));
      set(3, b.bitcast(Type::F32, b.load(Type::I32, ir::Space::Global, ir::AddrClass::Random, shifted, mask)));
      break;
    }
    case StoreShape::Helper: {  // a helper call (sin) in the segment: the home registers reloaded after it
      auto p = loadf(0), q = loadf(1);
      auto h = b.transc(Opcode::FSin, ir::Transc::Ieee, p);
      storef(2, b.fsub(b.fadd(h, q), p));
      break;
    }
    case StoreShape::Uniform: {  // a load_uniform of the segment (r15's test before the strips)
      auto p = loadf(0), q = loadf(1);
      auto s = b.fadd(p, q, ftz);
      storef(2, b.fmul(s, b.load_uniform(Type::F32, 32)));
      break;
    }
    case StoreShape::TwoStores: {
      auto p = loadf(0), q = loadf(1);
      storef(2, b.fadd(p, q, ftz));
      storef(3, b.fsub(p, q, ftz));
      break;
    }
    case StoreShape::Phi: {  // the stored value also goes through a phi to a helper (sin) in the next block
      auto p = loadf(0), q = loadf(1);
      auto v = b.bitcast(Type::I32, b.fadd(p, q, ftz));
      store(2, v);
      b.cond_br(b.fcmp(ir::FloatPred::Olt, p, b.f32(0.5f)), next, next);
      b.set_block(next);
      auto phi = b.emit(Opcode::Phi, Type::I32, {v, v});
      set(3, b.transc(Opcode::FSin, ir::Transc::Ieee, b.bitcast(Type::F32, phi)));
      break;
    }
  }
  if (shape != StoreShape::Phi) {
    b.ret();
    b.set_block(next);
  }
  b.ret();
  f.compute_preds();
  REQUIRE(ir::verify(f) == "");
  return f;
}

}  // namespace

TEST_CASE("x64 store homes: stores straight from the strips, overlaps, masks, window edges, faults") {
  std::mt19937_64 rng(181);
  const int per_shape = std::getenv("GPURC_TEST_LIGHT") ? 24 : 64;
  for (StoreShape shape : kStoreShapes) {
    const ir::Function f = store_function(shape);
    for (int k = 0; k < per_shape; ++k) {
      RunSpec s;
      s.vars.resize(f.vars_bytes());
      fill_random(s.vars, rng);
      s.memory = true;
      s.memory_bytes = kStoreMemBytes;
      s.memory_init.resize(kStoreMemBytes);
      fill_random_floats(s.memory_init, rng);
      s.window = true;
      if (k % 5 == 4) {  // only part of the memory in the window: the runs near its ends fall back
        s.window_offset = 256;
        s.window_bytes = 1024;
      }
      s.entry_mask = random_entry_mask(k, rng);
      // Buffers: a anywhere; c at a, just above (inside a's span), just
      // below, a span away, far; b anywhere (at c sometimes).
      const uint32_t a = uint32_t(4 * (rng() % 160));
      const int32_t c_rel[] = {0, 4, 64, 124, 128, -4, -128, 512};
      int64_t c = int64_t(a) + c_rel[rng() % 8];
      if (c < 0) c = a + 256;
      uint32_t bb = uint32_t(4 * (rng() % 160));
      if (rng() % 6 == 0) bb = uint32_t(c);
      uint32_t d = uint32_t(4 * (rng() % 200));
      if (rng() % 8 == 0) c += 1 + rng() % 3;               // misaligned c
      if (rng() % 10 == 0) c = kStoreMemBytes - 64;          // c's run past the memory's end: a fault
      const uint64_t offs[4] = {a, bb, uint64_t(c), d};
      const float factor[] = {2.0f, -0.5f, 1e-39f, 3.0f};
      if (k % 7 != 6 || shape != StoreShape::Uniform) {  // the Uniform shape sometimes runs without the block
        s.uniforms.resize(36);
        std::memcpy(s.uniforms.data(), offs, sizeof offs);
        std::memcpy(s.uniforms.data() + 32, &factor[rng() % 4], 4);
      }
      const uint32_t first = uint32_t(rng() % 64);
      const int disturb = int(rng() % 5);  // 1: one lane off the run, 2: a lane far out
      const unsigned odd = unsigned(rng() % 32);
      for (unsigned l = 0; l < 32; ++l) {
        uint32_t x = first + l;
        if (l == odd && disturb == 1) x += 3;
        if (l == odd && disturb == 2) x += 4096;
        set_lane(s.vars, f, 0, l, x);
        set_lane(s.vars, f, 1, l, k % 4 < 2 || rng() % 8 ? 1u : 0u);
      }
      check_all_tiers(f, s,
                      "shape " + std::to_string(int(shape)) + " k " + std::to_string(k) + " a " + std::to_string(a) +
                          " b " + std::to_string(bb) + " c " + std::to_string(c) + " disturb " + std::to_string(disturb));
    }
  }
}

namespace {


// c[i] = a[i] + b[i] over several warps of one run_warps call (one frame:
// the cells are written per warp), element indices i = base + lane from the
// warp loop's lane var; a / b / c at the byte offsets given.
ir::Function store_vector_add(uint64_t oa, uint64_t ob, uint64_t oc) {
  ir::Function f;
  f.add_var("i", Type::I32);
  f.add_block("entry");
  ir::Builder b(f);
  auto i = b.emit(Opcode::LoadVar, Type::I32, {}, 0, 0, 0);
  auto mask = b.entry_mask();
  auto at = [&](uint64_t off) { return b.iadd(b.i64(kStoreMemBase + off), b.shl(b.zext(Type::I64, i), b.i32(2))); };
  auto x = b.load(Type::I32, ir::Space::Global, ir::AddrClass::Random, at(oa), mask);
  auto y = b.load(Type::I32, ir::Space::Global, ir::AddrClass::Random, at(ob), mask);
  auto sum = b.fadd(b.bitcast(Type::F32, x), b.bitcast(Type::F32, y), ir::ff::FtzIn | ir::ff::FtzOut);
  b.store(ir::Space::Global, ir::AddrClass::Random, at(oc), b.bitcast(Type::I32, sum), mask);
  b.ret();
  f.compute_preds();
  REQUIRE(ir::verify(f) == "");
  return f;
}

}  // namespace

TEST_CASE("x64 store homes: the warp loop's warps store straight from the strips; overlaps and faults stop it right") {
  std::mt19937_64 rng(182);
  // c relative to a: the same, inside a's span above and below, one span away.
  const int64_t c_rel[] = {0, 4, 100, 128, -4, -124, 1024};
  for (int64_t rel : c_rel) {
    const ir::Function f = store_vector_add(1024, 2048, uint64_t(1024 + rel));
    for (x64::Tier tier : {x64::Tier::Avx512, x64::Tier::Avx2}) {
      if (!x64::host_supports(tier)) continue;
      auto jit = test::compile_warp_loop(f, tier);
      for (int k = 0; k < 12; ++k) {
        // Warp bases: inside the 256 elements, overlapping warps, one past
        // the memory's end (c faults).
        std::vector<uint64_t> bases;
        const size_t warps = 2 + rng() % 6;
        for (size_t w = 0; w < warps; ++w)
          bases.push_back(rng() % 10 == 0 ? 256 + 400 + rng() % 64 : rng() % (256 - 32));
        std::vector<uint8_t> init(4 * 1024);
        fill_random(init, rng);
        const std::string d = compare_warp_loop(f, *jit, init, bases, warps);
        CHECK_MESSAGE(d == "", (tier == x64::Tier::Avx512 ? "avx512" : "avx2") << " c - a " << rel << " case " << k
                                                                              << ": " << d);
      }
    }
  }
}

TEST_CASE("x64 store homes: the add strip writes the sum through the store's home register, not a frame slot") {
  // The loads' homes take r8 and r9, the store's value r10: each strip
  // stores `[r10+r14*1]` (guest memory, or the slot when the probe fell
  // back), and the store tests its cell before its own path. Fails with
  // GPURC_STORE_HOMES=0.
  const ir::Function f = store_vector_add(0, 1024, 2048);
  for (x64::Tier tier : {x64::Tier::Avx512, x64::Tier::Avx2}) {
    x64::JitOptions o{tier};
    o.listing_only = !x64::host_supports(tier);
    std::string err;
    auto cf = x64::compile(f, o, &err);
    REQUIRE_MESSAGE(cf, err);
    const std::string text = cf->disassemble();
    const std::string name = tier == x64::Tier::Avx512 ? "avx512" : "avx2";
    size_t stores = 0;
    for (size_t p = text.find("[r10+r14*1], "); p != std::string::npos; p = text.find("[r10+r14*1], ", p + 1))
      ++stores;
    const size_t strips = tier == x64::Tier::Avx512 ? 2 : 4;
    CHECK_MESSAGE(stores == strips, name << ": " << stores << " stores through r10");
    for (size_t p = text.find("[r10+r14*1], "); p != std::string::npos; p = text.find("[r10+r14*1], ", p + 1)) {
      const size_t line = text.rfind('\n', p);
      CHECK_MESSAGE(text.substr(line, p - line).find("vmovdqu") != std::string::npos, name);
    }
  }
}

}  // namespace gpurc_test_backend_x64_store_homes
