// Load homes (seventeenth session, Emitter::find_load_homes in
// backend_x64/memory_fast.cpp): a 4-byte load read only by strip ops of its
// block that take operands through use() / strip_mem, with no op between the
// load and its last reader that can write memory, keeps its result where the
// all-lanes contiguous access found it (a pointer cell holding the host
// address) instead of moving it to its frame slot; every other path fills
// the slot and points the cell at it. Each shape is compared with the IR
// interpreter on every host tier (results, memory, fault kind / lane /
// address): homed pairs read by an add, a compare and a select, a store
// between the load and its reader (that reader must see the old data, so
// the load is not homed), a load after a store to the same addresses, a
// result read in a later block and through a phi, a store of the loaded
// value, the indexed (G13) address shape, more loads than home registers,
// a helper call between the readers (the home GPRs, loaded once per
// segment, are reloaded after it);
// with full, partial and random entry and exec masks, runs at and past the
// window's edges (faults), misaligned and out-of-run lanes.
#include <doctest/doctest.h>

#include <cstring>

#include "../backend/compare.h"
#include "backend_x64/jit.h"
#include "tests/backend_x64/tier_compile.h"

namespace gpurc_test_backend_x64_load_homes {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::backend::test;
using ir::Opcode;
using ir::Type;

namespace {

constexpr uint64_t kHomesMemBase = 0x10000;  // TestMemory's base
constexpr size_t kHomesMemBytes = 1024;

enum class Shape { Pair, StoreBetween, StoreBefore, LaterBlock, Phi, StoreLoaded, Indexed, Many, HelperBetween };
constexpr Shape kShapes[] = {Shape::Pair,        Shape::StoreBetween, Shape::StoreBefore,
                             Shape::LaterBlock,  Shape::Phi,          Shape::StoreLoaded,
                             Shape::Indexed,     Shape::Many,         Shape::HelperBetween};

// vars x, y (i32 addresses or indices), mask (i1), c (f32), out, out2 (f32).
void add_homes_vars(ir::Function& f) {
  f.add_var("x", Type::I32);
  f.add_var("y", Type::I32);
  f.add_var("mask", Type::I1);
  f.add_var("c", Type::F32);
  f.add_var("out", Type::F32);
  f.add_var("out2", Type::F32);
}

ir::Function homes_function(Shape shape) {
  ir::Function f;
  add_homes_vars(f);
  const ir::BlockId entry = f.add_block("entry");
  const ir::BlockId next = f.add_block("next");
  ir::Builder b(f);
  b.set_block(entry);
  auto var = [&](uint32_t i) { return b.emit(Opcode::LoadVar, f.vars[i].type, {}, 0, 0, i); };
  auto set = [&](uint32_t i, ir::ValueId v) { b.emit(Opcode::StoreVar, Type::Void, {v}, 0, 0, i); };
  const auto x = var(0), y = var(1), c = var(3);
  const auto mask = shape == Shape::Pair || shape == Shape::Indexed ? b.entry_mask() : var(2);
  auto addr = [&](ir::ValueId i) {
    if (shape == Shape::Indexed) return b.iadd(b.i64(kHomesMemBase), b.shl(b.zext(Type::I64, i), b.i32(2)));
    return b.zext(Type::I64, i);
  };
  auto load = [&](ir::ValueId a) {
    return b.bitcast(Type::F32, b.load(Type::I32, ir::Space::Global, ir::AddrClass::Random, a, mask));
  };
  auto store = [&](ir::ValueId a, ir::ValueId v) {
    b.store(ir::Space::Global, ir::AddrClass::Random, a, b.bitcast(Type::I32, v), mask);
  };
  const uint32_t ftz = ir::ff::FtzIn | ir::ff::FtzOut;
  switch (shape) {
    case Shape::Pair: case Shape::Indexed: {
      auto p = load(addr(x)), q = load(addr(y));
      set(4, b.fadd(p, q, ftz));
      set(5, b.select(b.fcmp(ir::FloatPred::Olt, p, q), p, b.fmul(q, c)));
      b.ret();
      break;
    }
    case Shape::StoreBetween: {  // the store must not change what the bitcast and the add read
      auto p = b.load(Type::I32, ir::Space::Global, ir::AddrClass::Random, addr(x), mask);
      store(addr(y), c);
      set(4, b.fadd(b.bitcast(Type::F32, p), c));
      set(5, b.fadd(load(addr(x)), c));
      b.ret();
      break;
    }
    case Shape::StoreBefore: {
      store(addr(y), c);
      auto p = load(addr(x));
      set(4, b.fadd(p, c));
      b.ret();
      break;
    }
    case Shape::LaterBlock: {
      auto p = load(addr(x));
      set(5, b.fneg(p));
      b.br(next);
      b.set_block(next);
      set(4, b.fadd(p, c));
      b.ret();
      break;
    }
    case Shape::Phi: {
      auto p = load(addr(x));
      auto q = b.fabs(load(addr(y)));
      b.cond_br(b.fcmp(ir::FloatPred::Olt, c, b.f32(0.5f)), next, next);
      b.set_block(next);
      set(4, b.fadd(b.emit(Opcode::Phi, Type::F32, {p, p}), q));
      b.ret();
      break;
    }
    case Shape::StoreLoaded: {
      auto p = load(addr(x));
      store(addr(y), p);
      set(4, b.fneg(p));
      b.ret();
      break;
    }
    case Shape::HelperBetween: {  // a helper call (sin) in the readers' segment: the home GPRs are reloaded
      auto p = b.load(Type::I32, ir::Space::Global, ir::AddrClass::Random, addr(x), mask);
      auto q = b.load(Type::I32, ir::Space::Global, ir::AddrClass::Random, addr(y), mask);
      auto t = b.fadd(b.bitcast(Type::F32, p), c);
      auto h = b.transc(Opcode::FSin, ir::Transc::Ieee, b.fmul(t, c));
      set(4, b.fmul(b.fadd(b.bitcast(Type::F32, q), h), b.bitcast(Type::F32, p)));
      set(5, b.fsub(b.bitcast(Type::F32, q), t));
      b.ret();
      break;
    }
    case Shape::Many: {  // eight loads in one block: more than the six home registers
      ir::ValueId sum = c;
      std::vector<ir::ValueId> loads;
      for (uint32_t k = 0; k < 8; ++k) loads.push_back(load(addr(b.iadd(k % 2 ? y : x, b.i32(4 * k)))));
      for (ir::ValueId p : loads) sum = b.fadd(sum, p);
      set(4, sum);
      set(5, b.fmin(ir::MinMaxNan::NumberWins, loads[0], loads[7]));
      b.ret();
      break;
    }
  }
  if (shape != Shape::LaterBlock && shape != Shape::Phi) {
    b.set_block(next);
    b.ret();
  }
  f.compute_preds();
  REQUIRE(ir::verify(f) == "");
  return f;
}

}  // namespace

TEST_CASE("x64 load homes: homed and unhomed loads, masks, window edges, stores around them") {
  std::mt19937_64 rng(171);
  const int per_shape = std::getenv("GPURC_TEST_LIGHT") ? 16 : 48;
  for (Shape shape : kShapes) {
    const ir::Function f = homes_function(shape);
    const bool indexed = shape == Shape::Indexed;
    for (int k = 0; k < per_shape; ++k) {
      RunSpec s;
      s.vars.resize(f.vars_bytes());
      fill_random(s.vars, rng);
      s.memory = true;
      s.memory_bytes = kHomesMemBytes;
      s.memory_init.resize(kHomesMemBytes);
      fill_random_floats(s.memory_init, rng);  // the add's flush and NaN rules
      s.window = true;
      s.window_offset = 128;
      s.window_bytes = 640;
      s.entry_mask = random_entry_mask(k, rng);
      // Lane 0's offsets in the memory: inside, at the window's ends, past them.
      auto start = [&]() -> int64_t {
        switch (rng() % 6) {
          case 0: return 128;
          case 1: return 128 + 640 - 128;         // the run ends at the window's end
          case 2: return 128 + 640 - 128 + 4;     // one element past it
          case 3: return 124;                     // one element before the window
          default: return 128 + 4 * int64_t(rng() % 96);
        }
      };
      const int64_t ox = start(), oy = k % 3 == 0 ? ox : start();  // k % 3 == 0: the same addresses
      const int disturb = int(rng() % 4);  // 1: one lane misaligned, 2: one lane off the run
      const unsigned odd = unsigned(rng() % 32);
      for (unsigned l = 0; l < 32; ++l) {
        auto lane_value = [&](int64_t off) {
          int64_t a = off + 4 * int64_t(l);
          if (l == odd && disturb == 1) a += 1 + int64_t(rng() % 3);
          if (l == odd && disturb == 2) a += 12;
          // indexed: the element index from kHomesMemBase (a misaligned one rounds down)
          return indexed ? uint32_t(a / 4) : uint32_t(kHomesMemBase + uint64_t(a));
        };
        set_lane(s.vars, f, 0, l, lane_value(ox));
        set_lane(s.vars, f, 1, l, lane_value(oy));
        set_lane(s.vars, f, 2, l, k % 4 < 2 || rng() % 8 ? 1u : 0u);  // exec mask (some shapes)
      }
      check_all_tiers(f, s,
                      "shape " + std::to_string(int(shape)) + " k " + std::to_string(k) + " ox " +
                          std::to_string(ox) + " oy " + std::to_string(oy) + " disturb " + std::to_string(disturb));
    }
  }
}

TEST_CASE("x64 load homes: a homed pair moves nothing to its slots; the add reads the data through the cells") {
  // The contiguous path of each load stores lane 0's host address to its
  // cell (no vector move to the slot); the add strip loads each operand
  // from [gpr + lane offset] (r8, r9: the first two home registers). Fails
  // with GPURC_LOAD_HOMES=0.
  const ir::Function f = homes_function(Shape::Indexed);
  for (x64::Tier tier : {x64::Tier::Avx512, x64::Tier::Avx2}) {
    x64::JitOptions o{tier};
    o.listing_only = !x64::host_supports(tier);
    std::string err;
    auto cf = x64::compile(f, o, &err);
    REQUIRE_MESSAGE(cf, err);
    const std::string text = cf->disassemble();
    const std::string name = tier == x64::Tier::Avx512 ? "avx512" : "avx2";
    for (const char* gpr : {"r8", "r9"}) {
      const std::string operand = std::string("[") + gpr + "+r14*1]";
      CHECK_MESSAGE(text.find(operand) != std::string::npos, name << ": no " << operand);
    }
    // The cells: lane 0's host address (rsi) stored by each load's contiguous path.
    size_t cells = 0;
    for (size_t p = text.find("], rsi"); p != std::string::npos; p = text.find("], rsi", p + 1))
      if (text.rfind("mov [r12+", p) != std::string::npos && text.rfind('\n', p) < text.rfind("mov [r12+", p)) ++cells;
    CHECK_MESSAGE(cells >= 2, name << ": " << cells << " cell stores");
  }
}

TEST_CASE("x64 load homes: a helper call in the readers' segment reloads the home registers after it") {
  // The segment loads r8 / r9 from the cells once, before its strips; the
  // helper call (sin, IEEE) may clobber them, so every call is followed by
  // their reloads. (The results: the first case's HelperBetween shape.)
  const ir::Function f = homes_function(Shape::HelperBetween);
  for (x64::Tier tier : {x64::Tier::Avx512, x64::Tier::Avx2}) {
    x64::JitOptions o{tier};
    o.listing_only = !x64::host_supports(tier);
    std::string err;
    auto cf = x64::compile(f, o, &err);
    REQUIRE_MESSAGE(cf, err);
    const std::string text = cf->disassemble();
    const std::string name = tier == x64::Tier::Avx512 ? "avx512" : "avx2";
    size_t calls = 0, reloaded = 0;
    for (size_t p = text.find("call rax"); p != std::string::npos; p = text.find("call rax", p + 1)) {
      // the lines up to the next instruction that is neither the MXCSR restore nor a reload
      const size_t end = text.find("vmov", p);
      const std::string after = text.substr(p, end == std::string::npos ? std::string::npos : end - p);
      if (after.find("run_warp_op") != std::string::npos) continue;
      ++calls;
      if (after.find("mov r8, [r12+") != std::string::npos && after.find("mov r9, [r12+") != std::string::npos)
        ++reloaded;
    }
    CHECK_MESSAGE(calls > 0, name);
    CHECK_MESSAGE(reloaded > 0, name << ": " << reloaded << " of " << calls << " calls reload r8 / r9");
  }
}

namespace {


// G13's `memory` shape over several warps in one run_warps call (one
// frame: the cells are rewritten per warp; `return` goes on to the next
// warp directly): c[i] = a[i] + b[i] with element indices i = base + lane
// from the warp loop's lane var, a / b / c at byte 0 / 1024 / 2048 of the
// memory. Warp k's base is bases[k]; the interpreter runs warp by warp.
ir::Function homes_vector_add() {
  ir::Function f;
  f.add_var("i", Type::I32);
  f.add_block("entry");
  ir::Builder b(f);
  auto i = b.emit(Opcode::LoadVar, Type::I32, {}, 0, 0, 0);
  auto mask = b.entry_mask();
  auto at = [&](uint64_t off) { return b.iadd(b.i64(kHomesMemBase + off), b.shl(b.zext(Type::I64, i), b.i32(2))); };
  auto x = b.load(Type::I32, ir::Space::Global, ir::AddrClass::Random, at(0), mask);
  auto y = b.load(Type::I32, ir::Space::Global, ir::AddrClass::Random, at(1024), mask);
  auto sum = b.fadd(b.bitcast(Type::F32, x), b.bitcast(Type::F32, y), ir::ff::FtzIn | ir::ff::FtzOut);
  b.store(ir::Space::Global, ir::AddrClass::Random, at(2048), b.bitcast(Type::I32, sum), mask);
  b.ret();
  f.compute_preds();
  REQUIRE(ir::verify(f) == "");
  return f;
}

}  // namespace

TEST_CASE("x64 load homes: the warp loop runs homed warps one after another; a later warp's fault stops it") {
  const ir::Function f = homes_vector_add();
  std::mt19937_64 rng(172);
  for (x64::Tier tier : {x64::Tier::Avx512, x64::Tier::Avx2}) {
    if (!x64::host_supports(tier)) continue;
    auto jit = test::compile_warp_loop(f, tier);
    for (int k = 0; k < 24; ++k) {
      // Warp bases: inside the 256 elements of a (and b, c), one past the
      // end (the last lanes of c fault: out of the memory), misaligned runs.
      std::vector<uint64_t> bases;
      const size_t warps = 2 + rng() % 6;
      for (size_t w = 0; w < warps; ++w) bases.push_back(rng() % 8 == 0 ? 256 + 200 + rng() % 64 : rng() % (256 - 32));
      std::vector<uint8_t> init(3 * 1024);
      fill_random(init, rng);
      const std::string d = compare_warp_loop(f, *jit, init, bases, warps);
      CHECK_MESSAGE(d == "", (tier == x64::Tier::Avx512 ? "avx512" : "avx2") << " case " << k << ": " << d);
    }
  }
}

TEST_CASE("x64 load homes: G13's uniform bases, with and without the uniform block (the entry test, once per run)") {
  // c[i] = a[i] + b[i] with the bases `(u & ~3)` from the uniform block, as
  // G13 translates `device_load`: the entry block's uniform test (now in
  // the per-run prologue, once per warp-loop call) faults without a block
  // at the first base's load_uniform, as the interpreter does.
  ir::Function f;
  f.add_var("i", Type::I32);
  f.add_block("entry");
  f.uniform_bytes = 24;
  ir::Builder b(f);
  auto i = b.emit(Opcode::LoadVar, Type::I32, {}, 0, 0, 0);
  auto mask = b.entry_mask();
  auto scaled = b.shl(b.zext(Type::I64, i), b.i32(2));
  auto at = [&](uint32_t u) { return b.iadd(b.and_(b.load_uniform(Type::I64, u), b.i64(~3ull)), scaled); };
  auto x = b.load(Type::I32, ir::Space::Global, ir::AddrClass::Random, at(0), mask);
  auto y = b.load(Type::I32, ir::Space::Global, ir::AddrClass::Random, at(8), mask);
  auto sum = b.fadd(b.bitcast(Type::F32, x), b.bitcast(Type::F32, y), ir::ff::FtzIn | ir::ff::FtzOut);
  b.store(ir::Space::Global, ir::AddrClass::Random, at(16), b.bitcast(Type::I32, sum), mask);
  b.ret();
  f.compute_preds();
  REQUIRE(ir::verify(f) == "");
  std::mt19937_64 rng(173);
  for (int k = 0; k < 24; ++k) {
    RunSpec s;
    s.vars.resize(f.vars_bytes());
    s.memory = true;
    s.memory_bytes = kHomesMemBytes;
    s.memory_init.resize(kHomesMemBytes);
    fill_random(s.memory_init, rng);
    s.window = true;
    s.entry_mask = k % 3 == 2 ? uint32_t(rng()) | 1u : ~0u;
    const uint32_t first = uint32_t(rng() % 64);
    for (unsigned l = 0; l < 32; ++l) set_lane(s.vars, f, 0, l, first + l);
    if (k % 4 != 3) {  // k % 4 == 3: no uniform block
      s.uniforms.resize(24);
      const uint64_t bases[3] = {kHomesMemBase + (rng() % 4), kHomesMemBase + 320 + 4 * (rng() % 8),
                                 kHomesMemBase + 640 + (k % 8 == 1 ? 200 : 0)};  // k % 8 == 1: c runs past the memory
      std::memcpy(s.uniforms.data(), bases, sizeof bases);
    }
    check_all_tiers(f, s, "k " + std::to_string(k));
  }
}


// Nineteenth session: integer readers of a homed load, and readers in a
// later block whose only predecessor is the load's block (Tesla's MAD: the
// range tests shift, bias and compare x's and y's bits; the exact block,
// entered when the vote finds a lane outside the common case, masks and
// selects them). The shapes that must keep the slot: a store between the
// load and the branch, a store in the reading block, a reading block with a
// second predecessor that stores.
namespace {

enum class Later { IntReaders, RareBlock, RareOnly, StoreInLoadBlock, StoreInRare, TwoPreds };
constexpr Later kLaterShapes[] = {Later::IntReaders,       Later::RareBlock,   Later::RareOnly,
                                  Later::StoreInLoadBlock, Later::StoreInRare, Later::TwoPreds};

// The same vars as homes_function (add_homes_vars).
ir::Function later_function(Later shape) {
  ir::Function f;
  add_homes_vars(f);
  const ir::BlockId entry = f.add_block("entry");
  const ir::BlockId rare = f.add_block("rare");
  const ir::BlockId join = f.add_block("join");
  ir::Builder b(f);
  b.set_block(entry);
  auto var = [&](uint32_t i) { return b.emit(Opcode::LoadVar, f.vars[i].type, {}, 0, 0, i); };
  auto set = [&](uint32_t i, ir::ValueId v) { b.emit(Opcode::StoreVar, Type::Void, {v}, 0, 0, i); };
  auto F = [&](ir::ValueId v) { return b.bitcast(Type::F32, v); };
  auto I = [&](ir::ValueId v) { return b.bitcast(Type::I32, v); };
  const auto x = var(0), y = var(1), c = var(3), mask = var(2);
  auto load = [&](ir::ValueId a) {
    return b.load(Type::I32, ir::Space::Global, ir::AddrClass::Random, b.zext(Type::I64, a), mask);
  };
  auto store = [&](ir::ValueId a, ir::ValueId v) {
    b.store(ir::Space::Global, ir::AddrClass::Random, b.zext(Type::I64, a), v, mask);
  };
  const uint32_t ftz = ir::ff::FtzIn | ir::ff::FtzOut;
  switch (shape) {
    case Later::IntReaders: {
      auto p = load(x), q = load(y);
      set(4, F(b.iadd(b.xor_(p, q), b.shl(q, b.i32(2)))));
      set(5, F(b.select(b.icmp(ir::IntPred::Sgt, p, q), p, b.isub(b.lshr(q, b.i32(3)), b.ashr(p, b.i32(1))))));
      b.br(join);
      break;
    }
    case Later::RareOnly: {
      auto p = load(x);
      b.cond_br(b.any(b.fcmp(ir::FloatPred::Olt, c, b.f32(0.5f)), mask), rare, join);
      b.set_block(rare);
      set(4, F(b.xor_(b.shl(p, b.i32(1)), p)));
      b.br(join);
      break;
    }
    case Later::RareBlock: case Later::StoreInLoadBlock: case Later::StoreInRare: case Later::TwoPreds: {
      // The MAD's shape: the common test on the bits, a sum, the vote; the
      // rare side reads both loads again; the join stores over y.
      auto p = load(x), q = load(y);
      auto in_p = b.icmp(ir::IntPred::Sgt, b.iadd(b.shl(p, b.i32(1)), b.i32(0x82000000u)), b.i32(0x9cffffffu));
      auto in_q = b.icmp(ir::IntPred::Sgt, b.iadd(b.shl(q, b.i32(1)), b.i32(0x81000000u)), b.i32(0x81ffffffu));
      auto common = b.and_(in_p, in_q);
      auto s = I(b.fadd(F(p), F(q), ftz));
      if (shape == Later::StoreInLoadBlock) store(x, I(c));  // after the loads, before the branch
      const ir::BlockId mid = shape == Later::TwoPreds ? f.add_block("mid") : join;
      b.cond_br(b.any(b.not_(common), mask), rare, mid);
      if (shape == Later::TwoPreds) {  // mid stores over x, then enters rare too
        b.set_block(mid);
        store(x, I(c));
        b.br(rare);
      }
      b.set_block(rare);
      if (shape == Later::StoreInRare) store(x, I(b.fmul(c, c)));
      auto sign = b.and_(p, b.i32(0x80000000u));
      auto flushed = b.select(b.icmp(ir::IntPred::Eq, b.and_(p, b.i32(0x7f800000u)), b.i32(0)), sign, p);
      auto e = b.select(common, s, I(b.fmul(F(flushed), F(b.or_(q, b.i32(1))), ftz)));
      set(5, F(b.xor_(q, e)));
      b.br(join);
      b.set_block(join);
      auto ph = shape == Later::TwoPreds ? e : b.emit(Opcode::Phi, Type::I32, {s, e});
      store(y, ph);
      set(4, F(ph));
      b.ret();
      f.compute_preds();
      REQUIRE(ir::verify(f) == "");
      return f;
    }
  }
  if (shape == Later::IntReaders) {
    b.set_block(rare);
    b.br(join);
  }
  b.set_block(join);
  b.ret();
  f.compute_preds();
  REQUIRE(ir::verify(f) == "");
  return f;
}

}  // namespace

TEST_CASE("x64 load homes: integer readers and the rare block's readers, stores around them, aliasing x and y") {
  std::mt19937_64 rng(191);
  const int per_shape = std::getenv("GPURC_TEST_LIGHT") ? 24 : 64;
  for (Later shape : kLaterShapes) {
    const ir::Function f = later_function(shape);
    for (int k = 0; k < per_shape; ++k) {
      RunSpec s;
      s.vars.resize(f.vars_bytes());
      fill_random(s.vars, rng);
      s.memory = true;
      s.memory_bytes = kHomesMemBytes;
      s.memory_init.resize(kHomesMemBytes);
      fill_random_floats(s.memory_init, rng);  // subnormal, inf, NaN bits: the rare side for some lanes
      if (k % 4 == 1) {  // every lane in the common case but one (at each position in turn)
        for (size_t o = 0; o + 4 <= kHomesMemBytes; o += 4) {
          const float v = 1.0f + float(rng() % 1000) / 64.0f;
          std::memcpy(&s.memory_init[o], &v, 4);
        }
        const uint32_t odd = 0x00000001u;  // a subnormal
        std::memcpy(&s.memory_init[128 + 4 * (k / 4 % 32) + 4 * 32 * (rng() % 2)], &odd, 4);
      } else if (k % 4 == 2) {  // every lane in the common case
        for (size_t o = 0; o + 4 <= kHomesMemBytes; o += 4) {
          const float v = -3.0f + float(rng() % 1000) / 16.0f + 0.25f;
          std::memcpy(&s.memory_init[o], &v, 4);
        }
      }
      s.window = true;
      s.window_offset = 128;
      s.window_bytes = 640;
      s.entry_mask = random_entry_mask(k, rng);
      auto start = [&]() -> int64_t {
        switch (rng() % 6) {
          case 0: return 128;
          case 1: return 128 + 640 - 128;      // the run ends at the window's end
          case 2: return 128 + 640 - 128 + 4;  // one element past it (faults)
          case 3: return 124;                  // one element before the window
          default: return 128 + 4 * int64_t(rng() % 96);
        }
      };
      // x and y: the same addresses, overlapping by a few elements either way, or apart.
      const int64_t ox = start();
      const int64_t oy = k % 5 == 0 ? ox : k % 5 == 1 ? ox + 4 * int64_t(1 + rng() % 3)
                                         : k % 5 == 2 ? ox - 4 * int64_t(1 + rng() % 3) : start();
      const int disturb = int(rng() % 4);
      const unsigned odd = unsigned(rng() % 32);
      for (unsigned l = 0; l < 32; ++l) {
        auto lane_value = [&](int64_t off) {
          int64_t a = off + 4 * int64_t(l);
          if (l == odd && disturb == 1) a += 1 + int64_t(rng() % 3);
          if (l == odd && disturb == 2) a += 12;
          return uint32_t(kHomesMemBase + uint64_t(a));
        };
        set_lane(s.vars, f, 0, l, lane_value(ox));
        set_lane(s.vars, f, 1, l, lane_value(oy));
        set_lane(s.vars, f, 2, l, k % 4 < 3 || rng() % 8 ? 1u : 0u);
      }
      float cv = k % 2 ? 0.25f : 2.0f;  // RareOnly: the rare side taken or not
      std::memcpy(&s.vars[f.var_offset(3) + 0], &cv, 4);
      for (unsigned l = 1; l < 32; ++l) set_lane(s.vars, f, 3, l, rng() % 4 ? uint32_t(0x40000000u) : uint32_t(rng()));
      check_all_tiers(f, s,
                      "later shape " + std::to_string(int(shape)) + " k " + std::to_string(k) + " ox " +
                          std::to_string(ox) + " oy " + std::to_string(oy) + " disturb " + std::to_string(disturb));
    }
  }
}

TEST_CASE("x64 load homes: integer readers and a later block's readers read the data through the cells") {
  // IntReaders: both loads homed (their readers are shifts, adds, bit ops
  // and compares); RareOnly: the load read only in the block after the vote
  // is homed, read there through r8. StoreInRare / TwoPreds: the rare
  // block's reads keep the slot (no [r8 + r14] reads there). Fails before
  // the nineteenth session (integer and later-block readers kept the slot).
  for (x64::Tier tier : {x64::Tier::Avx512, x64::Tier::Avx2}) {
    x64::JitOptions o{tier};
    o.listing_only = !x64::host_supports(tier);
    const std::string name = tier == x64::Tier::Avx512 ? "avx512" : "avx2";
    auto listing = [&](Later shape) {
      std::string err;
      auto cf = x64::compile(later_function(shape), o, &err);
      REQUIRE_MESSAGE(cf, err);
      return cf->disassemble();
    };
    const std::string ints = listing(Later::IntReaders);
    CHECK_MESSAGE(ints.find("[r8+r14*1]") != std::string::npos, name);
    CHECK_MESSAGE(ints.find("[r9+r14*1]") != std::string::npos, name);
    CHECK_MESSAGE(listing(Later::RareOnly).find("[r8+r14*1]") != std::string::npos, name);
    CHECK_MESSAGE(listing(Later::RareBlock).find("[r9+r14*1]") != std::string::npos, name);
    for (Later kept : {Later::StoreInRare, Later::TwoPreds, Later::StoreInLoadBlock}) {
      const std::string text = listing(kept);
      // x (r8) is read by the rare block only through its slot; the entry block reads it through r8 at most.
      size_t reads = 0;
      for (size_t p = text.find("[r8+r14*1]"); p != std::string::npos; p = text.find("[r8+r14*1]", p + 1)) ++reads;
      const std::string ref = listing(Later::RareBlock);
      size_t ref_reads = 0;
      for (size_t p = ref.find("[r8+r14*1]"); p != std::string::npos; p = ref.find("[r8+r14*1]", p + 1)) ++ref_reads;
      CHECK_MESSAGE(reads < ref_reads, name << " shape " << int(kept) << ": " << reads << " of " << ref_reads);
    }
  }
}

}  // namespace gpurc_test_backend_x64_load_homes
