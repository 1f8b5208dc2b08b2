// The consecutive-elements path of the x64 tiers' general memory lowering
// (Emitter::emit_consecutive_access, backend_x64/memory_fast.cpp): the
// sequence test first, then a bounds test of the first and last taking-part
// lanes' elements per window, then masked vector moves. Each case is
// compared with the IR interpreter on every host tier (results, memory,
// fault kind / lane / address): partial warps whose first taking-part lane
// is not lane 0 and whose lane-0 element lies outside the memory (masked
// off: no fault), runs at an address that is not a multiple of the element
// size, runs that start or end exactly at a window's edge or one element
// past it (the access faults as before, through the general path), runs in
// the second of two windows, and i32 addresses whose run would wrap past
// 2^32.
#include <doctest/doctest.h>

#include <cstring>

#include "../backend/compare.h"

namespace gpurc_test_backend_x64_consecutive_access {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::backend::test;
using ir::Opcode;
using ir::Type;

namespace {

constexpr uint64_t kMemBase = 0x10000;  // TestMemory's base
constexpr size_t kMemBytes = 1024;

// vars addr (addr_t), val (t), mask (i1), out (t): store val at addr under
// mask (optional), then load out from addr under mask (optional).
ir::Function access_function(Type t, Type addr_t, bool store, bool load) {
  ir::Function f;
  f.add_var("addr", addr_t);
  f.add_var("val", t);
  f.add_var("mask", Type::I1);
  f.add_var("out", t);
  f.add_block("entry");
  ir::Builder b(f);
  auto var = [&](uint32_t i) { return b.emit(Opcode::LoadVar, f.vars[i].type, {}, 0, 0, i); };
  auto addr = var(0), val = var(1), mask = var(2);
  if (store) b.store(ir::Space::Global, ir::AddrClass::Random, addr, val, mask);
  if (load) {
    auto out = b.load(t, ir::Space::Global, ir::AddrClass::Random, addr, mask);
    b.emit(Opcode::StoreVar, Type::Void, {out}, 0, 0, 3);
  }
  b.ret();
  f.compute_preds();
  REQUIRE(ir::verify(f) == "");
  return f;
}

}  // namespace

TEST_CASE("x64 consecutive access: partial warps, misaligned runs, window edges, second windows, faults at the edge") {
  std::mt19937_64 rng(77);
  for (Type t : {Type::I32, Type::F32, Type::I64})
    for (Type addr_t : {Type::I64, Type::I32})
      for (int mode = 0; mode < 3; ++mode) {  // load, store + load, store only
        ir::Function f = access_function(t, addr_t, mode != 0, mode != 2);
        const unsigned bytes = ir::bit_width(t) / 8;
        for (int k = 0; k < 40; ++k) {
          RunSpec s;
          s.vars.resize(f.vars_bytes());
          fill_random(s.vars, rng);
          s.memory = true;
          s.memory_bytes = kMemBytes;
          s.memory_init.resize(kMemBytes);
          fill_random(s.memory_init, rng);
          s.window = true;
          // One window over [128, 640) and, every other case, a second one
          // over [640, 1024): runs in the second window, or across both (the
          // general path, which asks the memory for the span, decides).
          s.window_offset = 128;
          s.window_bytes = 512;
          if (k % 2) s.extra_windows = {{640, 384}};
          const uint64_t win = kMemBase + 128, win_end = k % 2 ? kMemBase + kMemBytes : win + 512;
          // The taking-part lanes: all, a run from lane `first` (lane 0's
          // element then lies below the memory for starts near its base), a
          // random half.
          const unsigned first = unsigned(rng() % 32);
          switch (k % 3) {
            case 0: s.entry_mask = ~0u; break;
            case 1: s.entry_mask = ~0u << first; break;
            default: s.entry_mask = uint32_t(rng()) | 1u << first; break;
          }
          const unsigned last = 31u - unsigned(__builtin_clz(s.entry_mask));
          const unsigned lo = unsigned(__builtin_ctz(s.entry_mask));
          // Lane 0's element b: the first taking-part lane at the window's
          // start (or one element below), the last one at its end (or one
          // past), a start that is not a multiple of the element size,
          // the second window, lane 0 below the whole memory.
          uint64_t b;
          switch (rng() % 7) {
            case 0: b = win - uint64_t(lo) * bytes - (rng() % 2) * bytes; break;
            case 1: b = win_end - uint64_t(last + 1) * bytes + (rng() % 2) * bytes; break;
            case 2: b = win + 1 + rng() % (bytes - 1) + bytes * (rng() % 4); break;
            case 3: b = kMemBase + 660 + bytes * (rng() % 4); break;
            case 4: b = kMemBase - uint64_t(lo) * bytes + bytes * (rng() % 2); break;
            case 5: b = win + 500 + bytes * (rng() % 8); break;  // across the first window's end
            default: b = win + bytes * (rng() % 16); break;
          }
          for (unsigned l = 0; l < 32; ++l) {
            const uint64_t a = b + uint64_t(l) * bytes;
            set_lane(s.vars, f, 0, l, addr_t == Type::I32 ? uint32_t(a) : a);
            set_lane(s.vars, f, 2, l, 1);
          }
          check_all_tiers(f, s,
                          std::string(ir::type_name(t)) + " addr " + std::string(ir::type_name(addr_t)) + " mode " +
                              std::to_string(mode) + " k " + std::to_string(k) + " b " + std::to_string(b));
        }
      }
}

TEST_CASE("x64 consecutive access: i32 runs that would wrap past 2^32 are not taken for consecutive") {
  // Lane 0 at 2^32 - 8: lanes 2.. wrap to 0, 4, ... in 32 bits, which the
  // interpreter reads as addresses near 0 (no memory there: a fault), not as
  // the continuation of the run.
  std::mt19937_64 rng(78);
  ir::Function f = access_function(Type::I32, Type::I32, false, true);
  for (int k = 0; k < 4; ++k) {
    RunSpec s;
    s.vars.resize(f.vars_bytes());
    fill_random(s.vars, rng);
    s.memory = true;
    s.memory_bytes = kMemBytes;
    s.memory_init.resize(kMemBytes);
    fill_random(s.memory_init, rng);
    s.window = true;
    s.entry_mask = k % 2 ? ~0u : 0x3u;  // the two lanes below 2^32 only: no wrap, out of memory
    for (unsigned l = 0; l < 32; ++l) {
      set_lane(s.vars, f, 0, l, uint32_t(0xfffffff8u + 4 * l));
      set_lane(s.vars, f, 2, l, 1);
    }
    check_all_tiers(f, s, "wrap k " + std::to_string(k));
  }
}

}  // namespace gpurc_test_backend_x64_consecutive_access
