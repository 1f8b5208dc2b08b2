// Runs one function on the IR interpreter and on every host tier from the
// same start state, and reports the first difference (status, fault fields,
// vars, memory).
#pragma once
#include <doctest/doctest.h>

#include <algorithm>
#include <mutex>

#include "harness.h"
#include "tiers.h"

namespace gpurc::backend::test {

// Flat guest memory for Global space at [base, base+size).
struct TestMemory final : ir::GuestMemory {
  uint64_t base = 0x10000;
  std::vector<uint8_t> bytes;
  std::mutex lock;
  int calls = 0;  // translate() and access() calls (the JIT's inline path makes none)
  explicit TestMemory(size_t size = 4096) : bytes(size) {}
  uint8_t* translate(ir::Space s, uint64_t addr, uint64_t n) override {
    ++calls;
    if (s != ir::Space::Global || addr < base || addr - base > bytes.size() || bytes.size() - (addr - base) < n)
      return nullptr;
    return bytes.data() + (addr - base);
  }
  bool access(Kind kind, ir::Space s, uint64_t addr, unsigned n, uint64_t* value, ir::AtomicOp op,
              const uint64_t* compare) override {
    std::lock_guard<std::mutex> g(lock);
    uint8_t* p = translate(s, addr, n);
    if (!p) return false;
    uint64_t old = 0;
    std::memcpy(&old, p, n);
    uint64_t m = n >= 8 ? ~0ull : ((1ull << (8 * n)) - 1);
    uint64_t next = old;
    switch (kind) {
      case Kind::Load: *value = old; return true;
      case Kind::Store: next = *value; break;
      case Kind::AtomicCas: next = old == (*compare & m) ? *value : old; break;
      case Kind::Atomic:
        switch (op) {
          case ir::AtomicOp::Add: next = old + *value; break;
          case ir::AtomicOp::Sub: next = old - *value; break;
          case ir::AtomicOp::UMin: next = old < *value ? old : *value; break;
          case ir::AtomicOp::UMax: next = old > *value ? old : *value; break;
          case ir::AtomicOp::And: next = old & *value; break;
          case ir::AtomicOp::Or: next = old | *value; break;
          case ir::AtomicOp::Xor: next = old ^ *value; break;
          case ir::AtomicOp::Exch: next = *value; break;
          default: next = old + 1; break;
        }
        break;
    }
    next &= m;
    std::memcpy(p, &next, n);
    if (kind != Kind::Store) *value = old;
    return true;
  }
};

// How a run of several warps ended (the warp loop's run_warps, or the
// interpreter warp by warp): the status, the warp that stopped (else the
// number of warps) and the fault's fields.
struct WarpsOutcome {
  ir::RunStatus status = ir::RunStatus::Done;
  uint32_t warp = 0;
  ir::FaultKind fault = ir::FaultKind::None;
  uint32_t lane = 0;
  uint64_t addr = 0;
};
// Warps 0 .. warps-1 of `e` through its warp loop (descriptor `vars`, each
// warp's `bases`) on `ctx`: how the run ended, with the fault's fields.
inline WarpsOutcome run_warp_loop(const ir::Executable& e, ir::WarpContext& ctx, const ir::LaneVarInit* vars,
                                  size_t nvars, const uint64_t* bases, size_t warps) {
  ir::WarpLoop loop{};
  loop.vars = vars;
  loop.nvars = uint32_t(nvars);
  loop.bases = bases;
  loop.first_warp = 0;
  loop.end_warp = uint32_t(warps);
  loop.budget = 1ll << 40;
  WarpsOutcome r;
  r.status = e.run_warps(ctx, loop);
  r.warp = loop.warp;
  if (r.status == ir::RunStatus::Fault) {
    r.fault = ctx.fault;
    r.lane = ctx.fault_lane;
    r.addr = ctx.fault_addr;
  }
  return r;
}
// The reference a warp loop is compared with: `interp` warp by warp, each
// warp on zeroed vars that `write_vars(vars, w)` fills as the loop's lane-var
// descriptor would and on a zeroed frame, with `setup(ctx)` adding what else
// the run reads (uniforms, windows, an entry mask); the warp that stopped, or
// `warps` when every warp ran.
template <typename WriteVars, typename Setup>
WarpsOutcome run_warps_reference(const ir::Function& f, const ir::Executable& interp, TestMemory& mem, size_t warps,
                                 WriteVars&& write_vars, Setup&& setup) {
  std::vector<uint8_t> frame(interp.frame_bytes() + 64);
  WarpsOutcome r;
  for (size_t w = 0; w < warps; ++w) {
    std::vector<uint8_t> vars(f.vars_bytes(), 0);
    write_vars(vars, w);
    std::fill(frame.begin(), frame.end(), 0);
    ir::WarpContext ctx;
    ctx.vars = vars.data();
    ctx.frame = frame.data();
    ctx.entry_mask = ~0u;
    ctx.budget = 1ll << 40;
    ctx.memory = &mem;
    setup(ctx);
    r.status = interp.run(ctx);
    if (r.status != ir::RunStatus::Done) {
      r.warp = uint32_t(w);
      r.fault = ctx.fault;
      r.lane = ctx.fault_lane;
      r.addr = ctx.fault_addr;
      return r;
    }
  }
  r.warp = uint32_t(warps);
  return r;
}
template <typename WriteVars>
WarpsOutcome run_warps_reference(const ir::Function& f, const ir::Executable& interp, TestMemory& mem, size_t warps,
                                 WriteVars&& write_vars) {
  return run_warps_reference(f, interp, mem, warps, write_vars, [](ir::WarpContext&) {});
}
// "" if both runs ended alike and left the same memory, else the first difference.
inline std::string warps_differ(const WarpsOutcome& want, const WarpsOutcome& got, const TestMemory& a,
                                const TestMemory& b) {
  auto s = [](uint64_t v) { return std::to_string(v); };
  if (want.status != got.status) return "status " + s(uint64_t(want.status)) + " vs " + s(uint64_t(got.status));
  if (want.warp != got.warp) return "warp " + s(want.warp) + " vs " + s(got.warp);
  if (want.fault != got.fault) return "fault " + s(uint64_t(want.fault)) + " vs " + s(uint64_t(got.fault));
  if (want.lane != got.lane) return "lane " + s(want.lane) + " vs " + s(got.lane);
  if (want.addr != got.addr) return "address " + s(want.addr) + " vs " + s(got.addr);
  for (size_t i = 0; i < a.bytes.size(); ++i)
    if (a.bytes[i] != b.bytes[i]) return "memory byte " + s(i) + ": " + s(a.bytes[i]) + " vs " + s(b.bytes[i]);
  return "";
}

// The warp loop's usual launch shape against run_warps_reference: `warps`
// warps whose vars 0 .. nvars-1 are bases[w * nvars + k] + lane (the lane
// var descriptor's iota), the memory two copies of `init` with the JIT's
// Global window over its first `window_bytes` (0: all of it), the entry
// mask `entry_mask`; "" when both ended alike with the same memory.
inline std::string compare_warp_loop(const ir::Function& f, const ir::Executable& jit,
                                     const std::vector<uint8_t>& init, const std::vector<uint64_t>& bases,
                                     size_t warps, size_t nvars = 1, uint32_t entry_mask = ~0u,
                                     size_t window_bytes = 0) {
  alignas(64) static const uint32_t iota[32] = {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15,
                                                16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31};
  auto interp = ir::make_ir_interpreter(f);
  TestMemory want_mem(init.size()), got_mem(init.size());
  want_mem.bytes = init;
  got_mem.bytes = init;
  const WarpsOutcome want = run_warps_reference(
      f, *interp, want_mem, warps,
      [&](std::vector<uint8_t>& vars, size_t w) {
        for (size_t k = 0; k < nvars; ++k)
          for (unsigned l = 0; l < 32; ++l) set_lane(vars, f, uint32_t(k), l, uint32_t(bases[w * nvars + k] + l));
      },
      [&](ir::WarpContext& ctx) { ctx.entry_mask = entry_mask; });
  std::vector<uint64_t> jframe((jit.frame_bytes() + 7) / 8 + 8, 0xA5A5A5A5DEADBEEFull);
  std::vector<uint8_t> vars(f.vars_bytes() + 64);
  ir::WarpContext ctx;
  ctx.vars = vars.data();
  ctx.frame = reinterpret_cast<uint8_t*>(jframe.data());
  ctx.entry_mask = entry_mask;
  ctx.budget = 1ll << 40;
  ctx.memory = &got_mem;
  ctx.windows[0] = ir::MemWindow{got_mem.base, window_bytes ? window_bytes : got_mem.bytes.size(), got_mem.bytes.data()};
  std::vector<ir::LaneVarInit> lv(nvars);
  for (size_t k = 0; k < nvars; ++k) {
    lv[k].offset = uint32_t(f.var_offset(uint32_t(k)));
    lv[k].lane_add = reinterpret_cast<const uint8_t*>(iota);
  }
  const WarpsOutcome got = run_warp_loop(jit, ctx, lv.data(), nvars, bases.data(), warps);
  std::string d = warps_differ(want, got, want_mem, got_mem);
  if (d.empty() && got.status == ir::RunStatus::Done && ctx.status != ir::RunStatus::Done) d = "ctx.status not Done";
  return d;
}

struct RunSpec {
  std::vector<uint8_t> vars;
  std::vector<uint8_t> uniforms;
  uint32_t entry_mask = ~0u;
  int64_t budget = 1ll << 40;
  bool memory = false;
  bool window = false;  // also expose the memory as the Global window (JIT fast path)
  size_t window_offset = 0, window_bytes = 0;  // the window's part of the memory (0 bytes: all of it)
  std::vector<std::pair<size_t, size_t>> extra_windows;  // (offset, bytes) parts of the memory, as Global extra windows
  size_t memory_bytes = 4096;
  std::vector<uint8_t> memory_init;
};

struct Outcome {
  ir::RunStatus status;
  ir::WarpContext ctx;
  std::vector<uint8_t> vars, memory;
  int barriers = 0;
  int memory_calls = 0;
};

inline Outcome run_one(const ir::Executable& e, const ir::Function& f, const RunSpec& s) {
  Outcome o;
  o.vars = s.vars;
  o.vars.resize(f.vars_bytes());
  TestMemory mem(s.memory_bytes);
  if (!s.memory_init.empty()) std::memcpy(mem.bytes.data(), s.memory_init.data(), std::min(s.memory_init.size(), mem.bytes.size()));
  std::vector<uint64_t> frame((e.frame_bytes() + 7) / 8 + 8);
  // An engine that does not need a zeroed frame gets garbage: results must not depend on it.
  if (!e.frame_needs_zero()) std::fill(frame.begin(), frame.end(), 0xA5A5A5A5DEADBEEFull);
  ir::WarpContext ctx;
  ctx.vars = o.vars.data();
  ctx.uniforms = s.uniforms.empty() ? nullptr : s.uniforms.data();
  ctx.frame = reinterpret_cast<uint8_t*>(frame.data());
  ctx.entry_mask = s.entry_mask;
  ctx.budget = s.budget;
  if (s.memory) {
    ctx.memory = &mem;
    if (s.window && s.window_bytes)
      ctx.windows[0] = ir::MemWindow{mem.base + s.window_offset, s.window_bytes, mem.bytes.data() + s.window_offset};
    else if (s.window)
      ctx.windows[0] = ir::MemWindow{mem.base, mem.bytes.size(), mem.bytes.data()};
    for (size_t i = 0; i < s.extra_windows.size() && i < size_t(ir::kExtraWindows); ++i) {
      auto [off, n] = s.extra_windows[i];
      ctx.extra_windows[0][i] = ir::MemWindow{mem.base + off, n, mem.bytes.data() + off};
    }
  }
  while ((o.status = e.run(ctx)) == ir::RunStatus::Barrier && o.barriers < 1000) ++o.barriers;
  o.ctx = ctx;
  o.memory = mem.bytes;
  o.memory_calls = mem.calls;
  return o;
}

// Returns "" or a description of the first difference from the interpreter.
inline std::string compare_with_interpreter(const ir::Function& f, const RunSpec& s, Tier tier) {
  auto ref = ir::make_ir_interpreter(f);
  Outcome want = run_one(*ref, f, s);
  std::string err;
  JitOptions o;
  o.tier = tier;
  auto jit = compile(f, o, &err);
  if (!jit) return "compile failed: " + err;
  Outcome got = run_one(*jit, f, s);
  auto str = [](uint64_t v) { return std::to_string(v); };
  if (want.status != got.status) return "status " + str(uint64_t(want.status)) + " vs " + str(uint64_t(got.status));
  if (want.barriers != got.barriers) return "barriers " + str(want.barriers) + " vs " + str(got.barriers);
  if (want.status == ir::RunStatus::Fault) {
    if (want.ctx.fault != got.ctx.fault) return "fault " + str(uint64_t(want.ctx.fault)) + " vs " + str(uint64_t(got.ctx.fault));
    if (want.ctx.fault_code != got.ctx.fault_code) return "fault_code " + str(want.ctx.fault_code) + " vs " + str(got.ctx.fault_code);
    if (want.ctx.fault_lane != got.ctx.fault_lane) return "fault_lane " + str(want.ctx.fault_lane) + " vs " + str(got.ctx.fault_lane);
    if (want.ctx.fault_addr != got.ctx.fault_addr) return "fault_addr " + str(want.ctx.fault_addr) + " vs " + str(got.ctx.fault_addr);
    return "";  // vars after a fault are not compared (strips may have run further)
  }
  for (uint32_t var = 0; var < f.vars.size(); ++var)
    for (unsigned l = 0; l < 32; ++l) {
      // Under the unlaunched-lanes contract those lanes are don't-care (the
      // x64 tiers then copy phis in every lane instead of zeroing them).
      if (f.unlaunched_lanes_free && !(s.entry_mask >> l & 1)) continue;
      uint64_t a = get_lane(want.vars, f, var, l), b = get_lane(got.vars, f, var, l);
      if (a != b) return "var " + f.vars[var].name + " lane " + str(l) + ": " + str(a) + " vs " + str(b);
    }
  if (want.memory != got.memory) {
    for (size_t i = 0; i < want.memory.size(); ++i)
      if (want.memory[i] != got.memory[i]) return "memory byte " + str(i) + ": " + str(want.memory[i]) + " vs " + str(got.memory[i]);
  }
  if (want.ctx.budget != got.ctx.budget) return "budget " + str(uint64_t(want.ctx.budget)) + " vs " + str(uint64_t(got.ctx.budget));
  return "";
}

inline void check_all_tiers(const ir::Function& f, const RunSpec& s, const std::string& what) {
  for (Tier t : host_tiers()) {
    std::string d = compare_with_interpreter(f, s, t);
    CHECK_MESSAGE(d.empty(), what << " on " << tier_name(t) << ": " << d);
  }
}

inline void fill_random(std::vector<uint8_t>& v, std::mt19937_64& rng) {
  for (auto& b : v) b = uint8_t(rng());
}
// Random f32 data with subnormals, NaNs, an infinity and 1.0 planted at
// random 4-byte steps (the flush and NaN rules of float readers).
inline void fill_random_floats(std::vector<uint8_t>& v, std::mt19937_64& rng) {
  fill_random(v, rng);
  for (size_t o = 0; o + 4 <= v.size(); o += 4 * (1 + rng() % 9)) {
    const uint32_t special[] = {0x00000001u, 0x807fffffu, 0x7fc00001u, 0xff800000u, 0x3f800000u};
    std::memcpy(&v[o], &special[rng() % 5], 4);
  }
}
// Case k's entry mask: every lane (half the cases), the top lanes from a
// random one, or random lanes with lane 0.
inline uint32_t random_entry_mask(int k, std::mt19937_64& rng) {
  switch (k % 4) {
    case 0: case 1: return ~0u;
    case 2: return ~0u << (rng() % 32);
    default: return uint32_t(rng()) | 1u;
  }
}

// Lanes of two 32-bit vars for compare tests: `a` mostly from `edges` (8
// values), the rest random; `b` equal to `a` in every fourth lane, an edge
// value (stepping by `b_step`) in the next, random in the others. The mix
// moves with `round`; the entry mask is full in odd rounds, random in even.
inline void fill_compare_pair(RunSpec& s, const ir::Function& f, uint32_t a, uint32_t b, const uint32_t (&edges)[8],
                              int round, unsigned b_step, std::mt19937_64& rng) {
  const unsigned r = unsigned(round);
  for (unsigned l = 0; l < 32; ++l) {
    const uint32_t va = (l + r) % 3 ? edges[(l + r) % 8] : uint32_t(rng());
    const uint32_t vb = l % 4 == 0 ? va : l % 4 == 1 ? edges[(l * b_step + r) % 8] : uint32_t(rng());
    set_lane(s.vars, f, a, l, va);
    set_lane(s.vars, f, b, l, vb);
  }
  s.entry_mask = round % 2 ? ~0u : uint32_t(rng());
}

}  // namespace gpurc::backend::test
