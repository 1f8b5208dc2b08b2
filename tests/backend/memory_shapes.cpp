// Run-time address shapes of loads and stores (backend_x64/memory_fast.cpp):
// one address for every taking-part lane (a single scalar access; a store
// keeps the last lane's value) and consecutive elements (masked vector moves
// instead of gathers / scatters), on the general path (a per-lane i64 or i32
// address) and on the indexed path (`base + (ext x << s)`). Each case is
// compared with the IR interpreter on every host tier: results, memory,
// fault kind / lane / address. Near misses are mixed in: a hole in the run,
// a run that leaves the window, indices whose run wraps past 2^31.
#include <doctest/doctest.h>

#include "compare.h"
#include "ir/passes.h"

namespace gpurc_test_backend_memory_shapes {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::backend::test;
using ir::Opcode;
using ir::Type;

namespace {

constexpr uint64_t kMemBase = 0x10000;  // TestMemory's base
constexpr size_t kMemBytes = 1024;

// vars addr (addr_t), val (t), mask (i1), out (t): store val at addr under
// mask (optional), then load out from addr under mask.
ir::Function direct_function(Type t, Type addr_t, bool store_first, bool load) {
  ir::Function f;
  f.add_var("addr", addr_t);
  f.add_var("val", t);
  f.add_var("mask", Type::I1);
  f.add_var("out", t);
  f.add_block("entry");
  ir::Builder b(f);
  auto var = [&](uint32_t i) { return b.emit(Opcode::LoadVar, f.vars[i].type, {}, 0, 0, i); };
  auto addr = var(0), val = var(1), mask = var(2);
  if (store_first) b.store(ir::Space::Global, ir::AddrClass::Random, addr, val, mask);
  if (load) {
    auto out = b.load(t, ir::Space::Global, ir::AddrClass::Random, addr, mask);
    b.emit(Opcode::StoreVar, Type::Void, {out}, 0, 0, 3);
  }
  b.ret();
  f.compute_preds();
  REQUIRE(ir::verify(f) == "");
  return f;
}

// The same with a uniform address: a load_uniform (i64) or a constant.
ir::Function uniform_function(Type t, bool from_uniforms, uint64_t constant, bool store_first) {
  ir::Function f;
  f.add_var("val", t);
  f.add_var("mask", Type::I1);
  f.add_var("out", t);
  f.uniform_bytes = 8;
  f.add_block("entry");
  ir::Builder b(f);
  auto val = b.emit(Opcode::LoadVar, t, {}, 0, 0, 0);
  auto mask = b.emit(Opcode::LoadVar, Type::I1, {}, 0, 0, 1);
  auto addr = from_uniforms ? b.load_uniform(Type::I64, 0) : b.i64(constant);
  if (store_first) b.store(ir::Space::Global, ir::AddrClass::Uniform, addr, val, mask);
  auto out = b.load(t, ir::Space::Global, ir::AddrClass::Uniform, addr, mask);
  b.emit(Opcode::StoreVar, Type::Void, {out}, 0, 0, 2);
  b.ret();
  f.compute_preds();
  ir::analyze_uniformity(f);  // the backend takes the one-address path for values marked uniform
  REQUIRE(f.insts[addr].uniform);
  REQUIRE(ir::verify(f) == "");
  return f;
}

// vars idx (i32), val (t), mask (i1), out (t); address (u & ~3) + (ext idx << shift).
ir::Function indexed_function(Type t, bool sext, unsigned shift, bool store_first) {
  ir::Function f;
  f.add_var("idx", Type::I32);
  f.add_var("val", t);
  f.add_var("mask", Type::I1);
  f.add_var("out", t);
  f.uniform_bytes = 8;
  f.add_block("entry");
  ir::Builder b(f);
  auto var = [&](uint32_t i) { return b.emit(Opcode::LoadVar, f.vars[i].type, {}, 0, 0, i); };
  auto idx = var(0), val = var(1), mask = var(2);
  auto base = b.binary(Opcode::And, b.load_uniform(Type::I64, 0), b.i64(~uint64_t(3)));
  auto scaled = b.emit(Opcode::Shl, Type::I64, {b.emit(sext ? Opcode::Sext : Opcode::Zext, Type::I64, {idx}), b.i32(shift)},
                       uint8_t(ir::ShiftMode::Mask));
  auto addr = b.binary(Opcode::IAdd, base, scaled);
  if (store_first) b.store(ir::Space::Global, ir::AddrClass::Random, addr, val, mask);
  auto out = b.load(t, ir::Space::Global, ir::AddrClass::Random, addr, mask);
  b.emit(Opcode::StoreVar, Type::Void, {out}, 0, 0, 3);
  b.ret();
  f.compute_preds();
  REQUIRE(ir::verify(f) == "");
  return f;
}

void put_u64(std::vector<uint8_t>& v, size_t at, uint64_t x) { std::memcpy(v.data() + at, &x, 8); }

RunSpec random_spec(const ir::Function& f, std::mt19937_64& rng, int k) {
  RunSpec s;
  s.vars.resize(f.vars_bytes());
  fill_random(s.vars, rng);
  s.memory = true;
  s.memory_bytes = kMemBytes;
  s.memory_init.resize(kMemBytes);
  fill_random(s.memory_init, rng);
  s.window = k % 7 != 6;  // mostly a window (without one: the helper only)
  s.window_offset = 64 * (k % 3);
  s.window_bytes = k % 2 ? 0 : 512;
  // All lanes, all but a few, one lane, a random half.
  switch (k % 4) {
    case 0: s.entry_mask = ~0u; break;
    case 1: s.entry_mask = ~0u & ~(1u << (rng() % 32)) & ~(1u << (rng() % 32)); break;
    case 2: s.entry_mask = 1u << (rng() % 32); break;
    default: s.entry_mask = uint32_t(rng()) | 1u << (rng() % 32); break;
  }
  return s;
}

// Where lane 0's element of a run starts: inside the window, at its end
// (the run leaves it), before it, or such that the first taking-part lane
// is at the window's start.
uint64_t run_start(const RunSpec& s, unsigned bytes, std::mt19937_64& rng) {
  const uint64_t win = kMemBase + s.window_offset;
  const uint64_t win_bytes = s.window_bytes ? s.window_bytes : kMemBytes - s.window_offset;
  switch (rng() % 5) {
    case 0: return win + bytes * (rng() % 8);
    case 1: return win + win_bytes - 32 * bytes + bytes * (rng() % 2);  // the last run inside, or one element past
    case 2: return win - bytes * (1 + rng() % 3);
    case 3: return win + (win_bytes / 2 & ~uint64_t(bytes - 1));
    default: return win + bytes * (rng() % 32) - bytes * (rng() % 32);
  }
}

}  // namespace

TEST_CASE("backend: consecutive per-lane addresses (general path): runs, holes, window edges, partial masks") {
  std::mt19937_64 rng(31);
  for (Type t : {Type::I32, Type::F32, Type::I64, Type::I16, Type::I1})
    for (Type addr_t : {Type::I64, Type::I32})
      for (int mode = 0; mode < 3; ++mode) {  // load, store + load, store only
        ir::Function f = direct_function(t, addr_t, mode != 0, mode != 2);
        const unsigned bytes = t == Type::I1 ? 1 : ir::bit_width(t) / 8;
        for (int k = 0; k < 24; ++k) {
          RunSpec s = random_spec(f, rng, k);
          const uint64_t start = run_start(s, bytes, rng);
          const int hole = k % 3 == 2 ? int(rng() % 32) : -1;  // one lane off the run
          for (unsigned l = 0; l < 32; ++l) {
            uint64_t a = start + uint64_t(l) * bytes;
            if (int(l) == hole) a += bytes * (1 + rng() % 4);
            set_lane(s.vars, f, 0, l, addr_t == Type::I32 ? uint32_t(a) : a);
            if (k % 5 != 4) set_lane(s.vars, f, 2, l, 1);  // else the var's random mask bits
          }
          check_all_tiers(f, s,
                          std::string(ir::type_name(t)) + " addr " + std::string(ir::type_name(addr_t)) + " mode " +
                              std::to_string(mode) + " k " + std::to_string(k));
        }
      }
}

TEST_CASE("backend: one address for every lane: scalar access, the last lane's store stays") {
  std::mt19937_64 rng(32);
  for (Type t : {Type::I32, Type::I8, Type::I64, Type::I1})
    for (bool from_uniforms : {true, false})
      for (bool store_first : {false, true}) {
        const unsigned bytes = t == Type::I1 ? 1 : ir::bit_width(t) / 8;
        for (int k = 0; k < 16; ++k) {
          // Inside, at the last byte an access may start at, past the end, below.
          const uint64_t addrs[4] = {kMemBase + 8 * (rng() % 64), kMemBase + kMemBytes - bytes,
                                     kMemBase + kMemBytes - bytes + 1, kMemBase - 4};
          const uint64_t a = addrs[k % 4];
          ir::Function f = uniform_function(t, from_uniforms, a, store_first);
          RunSpec s = random_spec(f, rng, k);
          if (from_uniforms) {
            s.uniforms.assign(8, 0);
            put_u64(s.uniforms, 0, a);
          }
          for (unsigned l = 0; l < 32; ++l)
            if (k % 3 != 2) set_lane(s.vars, f, 1, l, 1);
          check_all_tiers(f, s,
                          std::string(ir::type_name(t)) + (from_uniforms ? " uniform" : " const") +
                              (store_first ? " store+load" : " load") + " k " + std::to_string(k));
        }
      }
  // A per-lane address that happens to be the same for every lane (the
  // general path's run-time check, not the analysis, decides).
  for (Type t : {Type::I32, Type::I64}) {
    ir::Function f = direct_function(t, Type::I64, true, true);
    for (int k = 0; k < 12; ++k) {
      RunSpec s = random_spec(f, rng, k);
      const uint64_t a = kMemBase + 64 + 8 * (rng() % 32);
      const int other = k % 3 == 0 ? int(rng() % 32) : -1;
      for (unsigned l = 0; l < 32; ++l) {
        set_lane(s.vars, f, 0, l, int(l) == other ? a + 8 : a);
        set_lane(s.vars, f, 2, l, 1);
      }
      check_all_tiers(f, s, std::string("same per-lane address ") + std::string(ir::type_name(t)) + " k " + std::to_string(k));
    }
  }
}

TEST_CASE("backend: consecutive indices on the indexed path, including runs that wrap past 2^31") {
  std::mt19937_64 rng(33);
  for (Type t : {Type::I32, Type::F32, Type::I64})
    for (bool sext : {false, true})
      for (bool store_first : {false, true}) {
        const unsigned bytes = ir::bit_width(t) / 8, shift = bytes == 8 ? 3 : 2;
        ir::Function f = indexed_function(t, sext, shift, store_first);
        for (int k = 0; k < 24; ++k) {
          RunSpec s = random_spec(f, rng, k);
          const uint64_t win = kMemBase + s.window_offset;
          // The base: the window's start, or placed so that the run's
          // indices cross 2^31 (zext: out of every window; sext: negative).
          uint64_t base = win;
          uint32_t first;
          switch (k % 4) {
            case 0: first = uint32_t(rng() % 16); break;
            case 1: first = uint32_t((kMemBytes - s.window_offset) / bytes) - 32 + uint32_t(rng() % 2); break;
            case 2: first = 0x7FFFFFF0u + uint32_t(rng() % 8); break;  // b + 31 passes INT32_MAX
            default:
              first = uint32_t(0) - 8;  // -8 .. 23 (sext: below the base)
              base = win + 8 * bytes;
              break;
          }
          s.uniforms.assign(8, 0);
          put_u64(s.uniforms, 0, base);
          const int hole = k % 5 == 3 ? int(rng() % 32) : -1;
          for (unsigned l = 0; l < 32; ++l) {
            set_lane(s.vars, f, 0, l, first + l + (int(l) == hole ? 2 : 0));
            set_lane(s.vars, f, 2, l, 1);
          }
          check_all_tiers(f, s,
                          std::string("indexed ") + std::string(ir::type_name(t)) + (sext ? " sext" : " zext") +
                              (store_first ? " store+load" : " load") + " k " + std::to_string(k));
        }
      }
}

}  // namespace gpurc_test_backend_memory_shapes
