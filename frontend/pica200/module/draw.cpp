#include "frontend/pica200/module/draw.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <utility>

#include <fmt/format.h>

#include "frontend/pica200/module/launch.h"
#include "ir/pass_util.h"
#include "runtime/launch.h"
#include "runtime/thread_pool.h"

namespace gpurc::pica {

namespace {

constexpr size_t kWarp = ir::kWarpLanes;

// ---- the plan -------------------------------------------------------------

// Output components (bit 4n + c of o-register n) the code writes on every
// path from the entry to a return: forward "must be written" dataflow over
// the translation's CFG, from each block's written components (`gen`) and
// whether it returns. The translation is the guest's semantics, so a
// component written on every path is written for every lane, however the
// engine lowers divergence.
uint64_t outputs_written_on_every_path(const ir::Function& f, const std::vector<uint64_t>& gen,
                                       const std::vector<uint8_t>& returns) {
  const size_t nb = f.blocks.size();
  if (nb == 1) return returns[0] ? gen[0] : ~uint64_t(0);  // the fixed point below, for one block
  std::vector<uint64_t> out(nb, ~uint64_t(0));
  std::vector<std::vector<uint32_t>> preds(nb);
  for (size_t b = 0; b < nb; ++b)
    for (ir::BlockId s : f.blocks[b].succs)
      if (s < nb) preds[s].push_back(uint32_t(b));
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t b = 0; b < nb; ++b) {
      uint64_t in = 0;
      if (b != 0) {
        in = ~uint64_t(0);
        for (uint32_t p : preds[b]) in &= out[p];
      }
      const uint64_t o = in | gen[b];
      if (o != out[b]) {
        out[b] = o;
        changed = true;
      }
    }
  }
  uint64_t all = ~uint64_t(0);
  for (size_t b = 0; b < nb; ++b)
    if (returns[b]) all &= out[b];
  return all;
}

// Removes [lo, hi) from ascending merged ranges.
void subtract(std::vector<std::pair<uint32_t, uint32_t>>& r, uint32_t lo, uint32_t hi) {
  // Most calls remove nothing (make_draw_plan subtracts each always-written
  // output component and each input register): no copy then.
  if (std::none_of(r.begin(), r.end(), [&](const auto& x) { return x.second > lo && x.first < hi; })) return;
  std::vector<std::pair<uint32_t, uint32_t>> out;
  for (auto [a, b] : r) {
    if (b <= lo || a >= hi) {
      out.push_back({a, b});
      continue;
    }
    if (a < lo) out.push_back({a, lo});
    if (b > hi) out.push_back({hi, b});
  }
  r = std::move(out);
}

void add_range(std::vector<std::pair<uint32_t, uint32_t>>& r, uint32_t lo, uint32_t hi) {
  r.push_back({lo, hi});
  std::sort(r.begin(), r.end());
  std::vector<std::pair<uint32_t, uint32_t>> merged;
  for (auto [a, b] : r) {
    if (!merged.empty() && a <= merged.back().second) merged.back().second = std::max(merged.back().second, b);
    else merged.push_back({a, b});
  }
  r = std::move(merged);
}

// Every fact of DrawFacts in one walk of the blocks (the draw plan and
// drop_pass_through each walked the function four or five times: the
// written outputs, the every-path dataflow, the pass-through copies, the
// other readers of their inputs, the input reads).
//
// DrawFacts::forward / forward_only: an output component whose only write
// stores a get_var of the same component of one input register, and which
// is written on every path (`always`), copies that input; forward_only: the
// inputs read by those copies only.
DrawFacts scan_draw_facts(const ir::Function& f) {
  DrawFacts d;
  d.forward.fill(-1);
  const size_t nb = f.blocks.size();
  if (nb == 0) return d;
  std::vector<uint64_t> gen(nb, 0);
  std::vector<uint8_t> returns(nb, 0);
  std::array<std::array<int, 4>, 16> source{};  // per o component: input register + 1, 0 none, -1 not a copy
  std::array<std::array<int, 4>, 16> writes{};
  std::array<uint16_t, 16> copied{};  // copied[n] bit m: a write of o-register n stores a read of v-register m
  uint16_t other_use = 0;             // inputs read by anything but an output write
  auto is_input = [](const ir::Inst& g) { return g.op == ir::Opcode::GetVar && g.imm < kVarInput + 64; };
  for (size_t b = 0; b < nb; ++b)
    for (ir::ValueId v : f.blocks[b].insts) {
      const ir::Inst& i = f.insts[v];
      const bool out_write = i.op == ir::Opcode::SetVar && i.imm >= kVarOutput && i.imm < kVarOutput + 64;
      if (out_write) {
        const unsigned n = unsigned(i.imm - kVarOutput) / 4, c = unsigned(i.imm - kVarOutput) % 4;
        gen[b] |= uint64_t(1) << (i.imm - kVarOutput);
        d.out_written |= uint16_t(1u << n);
        if (!i.args.empty()) {
          ++writes[n][c];
          const ir::Inst& g = f.insts[i.args[0]];
          const unsigned var = unsigned(g.imm - kVarInput);
          source[n][c] = is_input(g) && var % 4 == c ? int(var / 4) + 1 : -1;
        }
        for (ir::ValueId a : i.args)
          if (const ir::Inst& g = f.insts[a]; is_input(g)) copied[n] |= uint16_t(1u << (g.imm - kVarInput) / 4);
        continue;
      }
      if (i.op == ir::Opcode::Return) returns[b] = 1;
      if (i.op == ir::Opcode::GetVar) {
        if (i.imm < kVarInput + 64) d.in_read |= uint16_t(1u << ((i.imm - kVarInput) / 4));
        if (i.imm >= kVarOutput && i.imm < kVarOutput + 64) d.read_out |= uint16_t(1u << ((i.imm - kVarOutput) / 4));
      }
      for (ir::ValueId a : i.args)
        if (const ir::Inst& g = f.insts[a]; is_input(g)) other_use |= uint16_t(1u << (g.imm - kVarInput) / 4);
    }
  d.always = outputs_written_on_every_path(f, gen, returns);
  for (unsigned n = 0; n < 16; ++n) {
    int m = source[n][0];
    for (unsigned c = 0; c < 4; ++c)
      if (writes[n][c] != 1 || source[n][c] != m || !(d.always >> (4 * n + c) & 1)) m = -1;
    if (m > 0) d.forward[n] = int8_t(m - 1);
  }
  // An output write that reads v-register m is one of the copies only when
  // its register forwards m.
  for (unsigned n = 0; n < 16; ++n)
    other_use |= uint16_t(copied[n] & ~(d.forward[n] >= 0 ? 1u << d.forward[n] : 0u));
  for (unsigned n = 0; n < 16; ++n)
    if (d.forward[n] >= 0 && !(other_use >> d.forward[n] & 1)) d.forward_only |= uint16_t(1u << d.forward[n]);
  return d;
}

}  // namespace

bool pass_through_dropping() {
  static const bool yes = [] {
    const char* e = std::getenv("GPURC_PASS_THROUGH");
    return !(e && *e == '0');
  }();
  return yes;
}

DrawFacts draw_facts(const ir::Function& f) { return scan_draw_facts(f); }

std::array<int8_t, 16> drop_pass_through(ir::Function& f, DrawFacts* after) {
  std::array<int8_t, 16> dropped;
  dropped.fill(-1);
  DrawFacts found = scan_draw_facts(f);
  auto done = [&] {
    if (after) *after = found;
    return dropped;
  };
  if (f.vars.size() < kNumStateVars) return done();
  // Output registers something reads (a geometry shader's EMIT would; a
  // vertex shader's translation does not) keep their writes.
  uint16_t drop = 0;
  for (unsigned n = 0; n < 16; ++n)
    if (found.forward[n] >= 0 && !(found.read_out >> n & 1)) {
      dropped[n] = found.forward[n];
      drop |= uint16_t(1u << n);
    }
  if (!drop) return done();
  auto dropped_write = [&](const ir::Inst& i) {
    return i.op == ir::Opcode::SetVar && i.imm >= kVarOutput && i.imm < kVarOutput + 64 &&
           (drop >> ((i.imm - kVarOutput) / 4) & 1);
  };
  for (ir::Block& b : f.blocks)
    std::erase_if(b.insts, [&](ir::ValueId v) {
      if (!dropped_write(f.insts[v])) return false;
      ir::passutil::kill_inst(f, v);
      return true;
    });
  // The input reads those writes stored (each was one GetVar's only use, or
  // other copies'): removed when nothing else uses them.
  std::vector<uint8_t> used(f.insts.size(), 0);
  for (const ir::Inst& i : f.insts)
    if (i.block != ir::kNoBlock)
      for (ir::ValueId a : i.args) used[a] = 1;
  for (ir::Block& b : f.blocks)
    std::erase_if(b.insts, [&](ir::ValueId v) {
      const ir::Inst& i = f.insts[v];
      if (used[v] || i.op != ir::Opcode::GetVar || i.imm < kVarInput || i.imm >= kVarInput + 64) return false;
      ir::passutil::kill_inst(f, v);
      return true;
    });
  // The function changed: its facts are taken again.
  found = scan_draw_facts(f);
  return done();
}

DrawPlan make_draw_plan(const ir::Function& f, const ir::Executable& exe, uint32_t vars_bytes,
                        const std::array<int8_t, 16>* dropped, const DrawFacts* facts) {
  DrawPlan p;
  if (f.vars.size() < kNumStateVars) return p;
  const DrawFacts own = facts ? DrawFacts{} : scan_draw_facts(f);
  const DrawFacts& d = facts ? *facts : own;
  const std::vector<uint32_t> off = f.var_offsets();
  p.vars_bytes = vars_bytes;
  p.frame_bytes = uint32_t(exe.frame_bytes());
  p.frame_needs_zero = exe.frame_needs_zero();
  p.in_read = d.in_read;
  p.out_written = d.out_written;
  for (uint32_t n = 0; n < 16; ++n)
    for (uint32_t c = 0; c < 4; ++c) {
      p.in_var[n][c] = off[kVarInput + 4 * n + c];
      p.out_var[n][c] = off[kVarOutput + 4 * n + c];
    }
  for (uint32_t n = 0; n < 16; ++n) p.in_ranges[n] = {off[kVarInput + 4 * n], off[kVarInput + 4 * n + 4]};
  std::vector<std::pair<uint32_t, uint32_t>> read;
  if (!exe.var_read_ranges(read)) read = {{0, vars_bytes}};
  for (auto& [lo, hi] : read) {
    lo = std::min(lo, vars_bytes);
    hi = std::min(std::max(lo, hi), vars_bytes);
  }
  std::vector<std::pair<uint32_t, uint32_t>> zero;
  for (auto [lo, hi] : read)
    if (hi > lo) add_range(zero, lo, hi);
  // Components of written registers the code may leave unwritten: the
  // register goes out whole, so they must read as zero (a fresh state).
  const uint64_t always = d.always;
  for (uint32_t n = 0; n < 16; ++n)
    if (p.out_written >> n & 1)
      for (uint32_t c = 0; c < 4; ++c)
        if (!(always >> (4 * n + c) & 1)) add_range(zero, off[kVarOutput + 4 * n + c], off[kVarOutput + 4 * n + c + 1]);
  // Output components written on every path need no zero even where the
  // engine loads them (to keep the value of lanes a masked region leaves
  // alone): the guest cannot read an o register, so the value they had
  // before reaches no active lane's result.
  for (uint32_t n = 0; n < 16; ++n)
    for (uint32_t c = 0; c < 4; ++c)
      if (always >> (4 * n + c) & 1) subtract(zero, off[kVarOutput + 4 * n + c], off[kVarOutput + 4 * n + c + 1]);
  for (uint32_t n = 0; n < 16; ++n) subtract(zero, p.in_ranges[n].first, p.in_ranges[n].second);
  p.zero = std::move(zero);
  for (const auto& [lo, hi] : p.zero) {
    p.zero_pairs.push_back(lo);
    p.zero_pairs.push_back(hi - lo);
    if ((hi - lo) % 32 != 0) p.zero_loop_ok = false;
  }
  p.forward = d.forward;
  p.forward_only = d.forward_only;
  // Registers taken out of the code (drop_pass_through) are forwarded too,
  // and their inputs are read by the copies only.
  if (dropped)
    for (unsigned n = 0; n < 16; ++n)
      if (const int m = (*dropped)[n]; m >= 0) {
        p.forward[n] = int8_t(m);
        p.out_written |= uint16_t(1u << n);
        // When its copy goes to "the code" after all (order_forwards: a
        // cycle of copies in place), the code has no output of its own:
        // the draw then stores the input's vars, which order_forwards has
        // loaded (or zeroed) for that copy and the code never writes.
        p.out_var[n] = p.in_var[m];
        if (!(p.in_read >> m & 1)) p.forward_only |= uint16_t(1u << m);
      }
  p.valid = true;
  return p;
}

uint8_t* DrawScratch::get(size_t need) {
  if (bytes < need) {
    mem = rt::allocate_aligned(need, true);  // zeroed once: no byte the code reads is ever uninitialised
    bytes = need;
  }
  return mem.get();
}

namespace {

// ---- register movement ------------------------------------------------------
// AoS (one Vec4 per vertex at a stride) <-> SoA (the var area: 32 lanes of
// x, then of y, ...). Written with the compiler's generic vector types and
// shuffles (no intrinsics headers in a module): 4x4 transposes everywhere,
// and on x86-64 hosts with AVX-512 a 16-lane form (8 two-source permutes per
// 16 vertices and register), chosen once at run time. Everything here is
// always inlined into the warp loop, so it is compiled for the loop's
// target (run_range_generic / run_range_wide).

#if defined(__GNUC__)
#define GPURC_DRAW_INLINE __attribute__((always_inline)) inline
using F4 = float __attribute__((vector_size(16)));

GPURC_DRAW_INLINE void load4x4(const uint8_t* src, size_t stride, uint8_t* const dst[4], size_t lane) {
  F4 r0, r1, r2, r3;
  std::memcpy(&r0, src, 16);
  std::memcpy(&r1, src + stride, 16);
  std::memcpy(&r2, src + 2 * stride, 16);
  std::memcpy(&r3, src + 3 * stride, 16);
  const F4 t0 = __builtin_shufflevector(r0, r1, 0, 4, 1, 5), t1 = __builtin_shufflevector(r0, r1, 2, 6, 3, 7);
  const F4 t2 = __builtin_shufflevector(r2, r3, 0, 4, 1, 5), t3 = __builtin_shufflevector(r2, r3, 2, 6, 3, 7);
  const F4 c0 = __builtin_shufflevector(t0, t2, 0, 1, 4, 5), c1 = __builtin_shufflevector(t0, t2, 2, 3, 6, 7);
  const F4 c2 = __builtin_shufflevector(t1, t3, 0, 1, 4, 5), c3 = __builtin_shufflevector(t1, t3, 2, 3, 6, 7);
  std::memcpy(dst[0] + 4 * lane, &c0, 16);
  std::memcpy(dst[1] + 4 * lane, &c1, 16);
  std::memcpy(dst[2] + 4 * lane, &c2, 16);
  std::memcpy(dst[3] + 4 * lane, &c3, 16);
}
GPURC_DRAW_INLINE void store4x4(const uint8_t* const src[4], size_t lane, uint8_t* dst, size_t stride) {
  F4 c0, c1, c2, c3;
  std::memcpy(&c0, src[0] + 4 * lane, 16);
  std::memcpy(&c1, src[1] + 4 * lane, 16);
  std::memcpy(&c2, src[2] + 4 * lane, 16);
  std::memcpy(&c3, src[3] + 4 * lane, 16);
  const F4 t0 = __builtin_shufflevector(c0, c1, 0, 4, 1, 5), t1 = __builtin_shufflevector(c0, c1, 2, 6, 3, 7);
  const F4 t2 = __builtin_shufflevector(c2, c3, 0, 4, 1, 5), t3 = __builtin_shufflevector(c2, c3, 2, 6, 3, 7);
  const F4 r0 = __builtin_shufflevector(t0, t2, 0, 1, 4, 5), r1 = __builtin_shufflevector(t0, t2, 2, 3, 6, 7);
  const F4 r2 = __builtin_shufflevector(t1, t3, 0, 1, 4, 5), r3 = __builtin_shufflevector(t1, t3, 2, 3, 6, 7);
  std::memcpy(dst, &r0, 16);
  std::memcpy(dst + stride, &r1, 16);
  std::memcpy(dst + 2 * stride, &r2, 16);
  std::memcpy(dst + 3 * stride, &r3, 16);
}
#else
GPURC_DRAW_INLINE void load4x4(const uint8_t* src, size_t stride, uint8_t* const dst[4], size_t lane) {
  for (size_t k = 0; k < 4; ++k)
    for (size_t c = 0; c < 4; ++c) std::memcpy(dst[c] + 4 * (lane + k), src + k * stride + 4 * c, 4);
}
GPURC_DRAW_INLINE void store4x4(const uint8_t* const src[4], size_t lane, uint8_t* dst, size_t stride) {
  for (size_t k = 0; k < 4; ++k)
    for (size_t c = 0; c < 4; ++c) std::memcpy(dst + k * stride + 4 * c, src[c] + 4 * (lane + k), 4);
}
#endif

// Lanes [from, n): 4 at a time, then one by one.
GPURC_DRAW_INLINE void load_lanes(const uint8_t* src, size_t stride, uint8_t* const dst[4], size_t from, size_t n) {
  size_t l = from;
  for (; l + 4 <= n; l += 4) load4x4(src + l * stride, stride, dst, l);
  for (; l < n; ++l)
    for (size_t c = 0; c < 4; ++c) std::memcpy(dst[c] + 4 * l, src + l * stride + 4 * c, 4);
}
GPURC_DRAW_INLINE void store_lanes(const uint8_t* const src[4], uint8_t* dst, size_t stride, size_t from, size_t n) {
  size_t l = from;
  for (; l + 4 <= n; l += 4) store4x4(src, l, dst + l * stride, stride);
  for (; l < n; ++l)
    for (size_t c = 0; c < 4; ++c) std::memcpy(dst + l * stride + 4 * c, src[c] + 4 * l, 4);
}

#if defined(__x86_64__) && defined(__GNUC__)
#define GPURC_DRAW_WIDE 1
using F16 = float __attribute__((vector_size(64)));
using F8 = float __attribute__((vector_size(32)));

// Four vertices' Vec4s (at `stride`) as one 16-float vector.
// (Results through references: a 64-byte vector returned by value is an
// ABI question in the generic instantiation GCC checks, though it is only
// ever inlined into AVX-512 code.)
GPURC_DRAW_INLINE void gather4(const uint8_t* src, size_t stride, F16& v) {
  if (stride == 16) {
    std::memcpy(&v, src, 64);
    return;
  }
  F4 a, b, c, d;
  std::memcpy(&a, src, 16);
  std::memcpy(&b, src + stride, 16);
  std::memcpy(&c, src + 2 * stride, 16);
  std::memcpy(&d, src + 3 * stride, 16);
  const F8 ab = __builtin_shufflevector(a, b, 0, 1, 2, 3, 4, 5, 6, 7);
  const F8 cd = __builtin_shufflevector(c, d, 0, 1, 2, 3, 4, 5, 6, 7);
  v = __builtin_shufflevector(ab, cd, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
}
GPURC_DRAW_INLINE void scatter4(const F16& v, uint8_t* dst, size_t stride) {
  if (stride == 16) {
    std::memcpy(dst, &v, 64);
    return;
  }
  const F4 a = __builtin_shufflevector(v, v, 0, 1, 2, 3), b = __builtin_shufflevector(v, v, 4, 5, 6, 7);
  const F4 c = __builtin_shufflevector(v, v, 8, 9, 10, 11), d = __builtin_shufflevector(v, v, 12, 13, 14, 15);
  std::memcpy(dst, &a, 16);
  std::memcpy(dst + stride, &b, 16);
  std::memcpy(dst + 2 * stride, &c, 16);
  std::memcpy(dst + 3 * stride, &d, 16);
}

GPURC_DRAW_INLINE void load_lanes_avx512(const uint8_t* src, size_t stride, uint8_t* const dst[4],
                                                           size_t n) {
  size_t l = 0;
  for (; l + 16 <= n; l += 16) {
    const uint8_t* s = src + l * stride;
    F16 a, b, c, d;
    gather4(s, stride, a);
    gather4(s + 4 * stride, stride, b);
    gather4(s + 8 * stride, stride, c);
    gather4(s + 12 * stride, stride, d);
    // x and y of lanes 0-7 (from a, b), z and w likewise; then 8-15 from c, d.
    const F16 xy0 = __builtin_shufflevector(a, b, 0, 4, 8, 12, 16, 20, 24, 28, 1, 5, 9, 13, 17, 21, 25, 29);
    const F16 zw0 = __builtin_shufflevector(a, b, 2, 6, 10, 14, 18, 22, 26, 30, 3, 7, 11, 15, 19, 23, 27, 31);
    const F16 xy1 = __builtin_shufflevector(c, d, 0, 4, 8, 12, 16, 20, 24, 28, 1, 5, 9, 13, 17, 21, 25, 29);
    const F16 zw1 = __builtin_shufflevector(c, d, 2, 6, 10, 14, 18, 22, 26, 30, 3, 7, 11, 15, 19, 23, 27, 31);
    const F16 x = __builtin_shufflevector(xy0, xy1, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23);
    const F16 y = __builtin_shufflevector(xy0, xy1, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
    const F16 z = __builtin_shufflevector(zw0, zw1, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23);
    const F16 w = __builtin_shufflevector(zw0, zw1, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
    std::memcpy(dst[0] + 4 * l, &x, 64);
    std::memcpy(dst[1] + 4 * l, &y, 64);
    std::memcpy(dst[2] + 4 * l, &z, 64);
    std::memcpy(dst[3] + 4 * l, &w, 64);
  }
  load_lanes(src, stride, dst, l, n);
}

GPURC_DRAW_INLINE void store_lanes_avx512(const uint8_t* const src[4], uint8_t* dst, size_t stride,
                                                            size_t n) {
  size_t l = 0;
  for (; l + 16 <= n; l += 16) {
    F16 x, y, z, w;
    std::memcpy(&x, src[0] + 4 * l, 64);
    std::memcpy(&y, src[1] + 4 * l, 64);
    std::memcpy(&z, src[2] + 4 * l, 64);
    std::memcpy(&w, src[3] + 4 * l, 64);
    const F16 xy0 = __builtin_shufflevector(x, y, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const F16 xy1 = __builtin_shufflevector(x, y, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    const F16 zw0 = __builtin_shufflevector(z, w, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const F16 zw1 = __builtin_shufflevector(z, w, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    const F16 a = __builtin_shufflevector(xy0, zw0, 0, 1, 16, 17, 2, 3, 18, 19, 4, 5, 20, 21, 6, 7, 22, 23);
    const F16 b = __builtin_shufflevector(xy0, zw0, 8, 9, 24, 25, 10, 11, 26, 27, 12, 13, 28, 29, 14, 15, 30, 31);
    const F16 c = __builtin_shufflevector(xy1, zw1, 0, 1, 16, 17, 2, 3, 18, 19, 4, 5, 20, 21, 6, 7, 22, 23);
    const F16 d = __builtin_shufflevector(xy1, zw1, 8, 9, 24, 25, 10, 11, 26, 27, 12, 13, 28, 29, 14, 15, 30, 31);
    uint8_t* o = dst + l * stride;
    scatter4(a, o, stride);
    scatter4(b, o + 4 * stride, stride);
    scatter4(c, o + 8 * stride, stride);
    scatter4(d, o + 12 * stride, stride);
  }
  store_lanes(src, dst, stride, l, n);
}

bool host_has_avx512() {
  static const bool yes = __builtin_cpu_supports("avx512f");
  return yes;
}
bool host_has_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
}
#endif

// The movement of one register, in the host form `Wide` selects.
template <bool Wide>
GPURC_DRAW_INLINE void load_register(const uint8_t* src, size_t stride, uint8_t* const dst[4], size_t n) {
#ifdef GPURC_DRAW_WIDE
  if constexpr (Wide) return load_lanes_avx512(src, stride, dst, n);
#endif
  load_lanes(src, stride, dst, 0, n);
}
template <bool Wide>
GPURC_DRAW_INLINE void store_register(const uint8_t* const src[4], uint8_t* dst, size_t stride, size_t n) {
#ifdef GPURC_DRAW_WIDE
  if constexpr (Wide) return store_lanes_avx512(src, dst, stride, n);
#endif
  store_lanes(src, dst, stride, 0, n);
}

// ---- the warp loop ------------------------------------------------------------

struct Fault {
  std::mutex m;
  std::atomic<bool> any{false};
  DrawResult first;
  // formatted: msg already names the vertex (a fault passed on from another Fault).
  void offer(size_t vertex, std::string msg, bool watchdog, bool formatted = false) {
    std::lock_guard<std::mutex> g(m);
    if (!any || vertex < first.fault_vertex) {
      first.ok = false;
      first.fault_vertex = vertex;
      first.fault = formatted ? std::move(msg) : fmt::format("{} (vertex {})", msg, vertex);
      first.watchdog = watchdog;
    }
    any = true;
  }
};

using Moves = DrawMoves;

// The source of copies that store zeros (stride 0): one merged copy moves up
// to 64 bytes.
alignas(64) const uint8_t kZeroRecord[64] = {};

// Whether any byte that one copy writes for vertex k ([dst, dst + dbytes)
// at dstride) lies in what another reads for the same vertex
// ([src, src + sbytes) at sstride), k < count. Records of different
// vertices must not overlap (docs/pica200-embedding.md), so with equal
// strides only the same vertex's bytes are compared; with different strides
// the whole spans are (conservative).
bool same_vertex_overlap(const uint8_t* dst, size_t dstride, size_t dbytes, const uint8_t* src, size_t sstride,
                         size_t sbytes, size_t count) {
  const uintptr_t d = reinterpret_cast<uintptr_t>(dst), s = reinterpret_cast<uintptr_t>(src);
  if (sstride == dstride || count <= 1) return d < s + sbytes && s < d + dbytes;
  const uintptr_t dend = d + (count - 1) * dstride + dbytes, send = s + (count - 1) * sstride + sbytes;
  return d < send && s < dend;
}

// A warp that did not finish: its fault (out of line: the warp loop stays small).
__attribute__((noinline)) void report_fault(const PreparedShader& s, const ir::WarpContext& ctx, ir::RunStatus st,
                                            size_t k0, Fault& fault) {
  const size_t v = k0 + (ctx.fault_lane < kWarp ? ctx.fault_lane : 0);
  if (st == ir::RunStatus::Fault && ctx.fault == ir::FaultKind::Trap)
    fault.offer(v, describe_trap(ctx.fault_code), false);
  else if (st == ir::RunStatus::Fault)
    fault.offer(v, fmt::format("pica200 ({}): {}", s.engine, rt::fault_of(ctx).describe()),
                ctx.fault == ir::FaultKind::Watchdog);
  else
    fault.offer(k0, fmt::format("pica200 ({}): the code stopped at a barrier", s.engine), false);
}

// Vertices [begin, end) of the draw on one thread with var area `vars`.
// Instantiated twice: the generic form and, on x86-64, one compiled for
// AVX-512 as a whole (run_range_wide). Mixing the JIT's AVX-512 code with
// legacy-SSE C++ around it measured 2.4x slower on ref_simple than keeping
// the whole warp loop in VEX/EVEX code.
template <bool Wide>
GPURC_DRAW_INLINE void run_range_t(const PreparedShader& s, const DrawPlan& plan, const uint8_t* uniforms, const DrawStreams& in,
               const DrawStreams& out, const Moves& mv, size_t begin, size_t end, int64_t budget, uint8_t* vars,
               Fault& fault) {
  const ir::Executable& exe = *s.compiled.exe;
  uint8_t* frame = vars + rt::align64(plan.vars_bytes);
  ir::WarpContext ctx;
  ctx.uniforms = uniforms;
  ctx.frame = frame;
  ctx.vars = vars;
  for (uint32_t n = 0; n < 16; ++n)
    if (mv.zero_in >> n & 1) std::memset(vars + plan.in_ranges[n].first, 0, plan.in_ranges[n].second - plan.in_ranges[n].first);
  for (size_t k0 = begin; k0 < end && !fault.any.load(std::memory_order_relaxed); k0 += kWarp) {
    const size_t n = std::min(kWarp, end - k0);
    for (const auto& [lo, hi] : plan.zero) std::memset(vars + lo, 0, hi - lo);
    if (plan.frame_needs_zero) std::memset(frame, 0, plan.frame_bytes);
    for (uint16_t m = mv.load; m; m &= uint16_t(m - 1)) {
      const unsigned r = unsigned(__builtin_ctz(m));
      uint8_t* const dst[4] = {vars + plan.in_var[r][0], vars + plan.in_var[r][1], vars + plan.in_var[r][2],
                               vars + plan.in_var[r][3]};
      load_register<Wide>(in.base[r] + k0 * in.stride[r], in.stride[r], dst, n);
    }
    // Pass-through registers before the run, not after: their loads hit the
    // input lines the moves above have just brought in, and their stores
    // take ownership of the output lines while the code runs, so the o
    // registers stored after it find them in L1. (Every input of the warp is
    // read above first: an output stream may share memory with the inputs.)
    for (uint32_t i = 0; i < mv.nforward; ++i) {
      const unsigned r = mv.forward_order[i];
      const unsigned v = unsigned(plan.forward[r]);
      static const uint8_t zeros[16] = {};
      const bool have = in.mask >> v & 1;
      const uint8_t* src = have ? in.base[v] + k0 * in.stride[v] : zeros;
      const size_t sstride = have ? in.stride[v] : 0;
      // The strides in locals and the pointers stepped: with `out.stride[r]`
      // in the loop the compiler reloaded it and multiplied per vertex (the
      // stores may alias `out`), 7 instructions per 16-byte copy instead of 4.
      const size_t dstride = out.stride[r];
      uint8_t* dst = out.base[r] + k0 * dstride;
      if (out.quad[r]) {
        for (size_t l = 0; l < n; ++l, dst += dstride, src += sstride) std::memcpy(dst, src, 16);
        continue;
      }
      for (size_t l = 0; l < n; ++l, dst += dstride, src += sstride)
        for (unsigned c = 0; c < 4; ++c)
          if (out.comp[r][c] >= 0) std::memcpy(dst + out.comp[r][c], src + 4 * c, 4);
    }
    ctx.entry_mask = n == kWarp ? ~0u : (1u << n) - 1;
    ctx.resume = 0;
    ctx.budget = budget;
    ctx.status = ir::RunStatus::Done;
    ctx.fault = ir::FaultKind::None;
    const ir::RunStatus st = exe.run(ctx);
    if (st != ir::RunStatus::Done) {
      report_fault(s, ctx, st, k0, fault);
      return;
    }
    for (uint16_t m = mv.store; m; m &= uint16_t(m - 1)) {
      const unsigned r = unsigned(__builtin_ctz(m));
      const uint8_t* const src[4] = {vars + plan.out_var[r][0], vars + plan.out_var[r][1], vars + plan.out_var[r][2],
                                     vars + plan.out_var[r][3]};
      uint8_t* dst = out.base[r] + k0 * out.stride[r];
      if (out.quad[r]) {
        store_register<Wide>(src, dst, out.stride[r], n);
        continue;
      }
      for (unsigned c = 0; c < 4; ++c) {
        if (out.comp[r][c] < 0) continue;
        uint8_t* d = dst + out.comp[r][c];
        for (size_t l = 0; l < n; ++l) std::memcpy(d + l * out.stride[r], src[c] + 4 * l, 4);
      }
    }
    // Registers the code never writes go out as zero (a fresh unit's
    // outputs), warp by warp after the run: an output stream may share
    // memory with the inputs.
    for (uint16_t m = mv.zero_out; m; m &= uint16_t(m - 1)) {
      const unsigned r = unsigned(__builtin_ctz(m));
      static const uint8_t zeros[16] = {};
      uint8_t* dst = out.base[r] + k0 * out.stride[r];
      for (size_t l = 0; l < n; ++l)
        if (out.quad[r]) std::memcpy(dst + l * out.stride[r], zeros, 16);
        else
          for (unsigned c = 0; c < 4; ++c)
            if (out.comp[r][c] >= 0) std::memcpy(dst + l * out.stride[r] + out.comp[r][c], zeros, 4);
    }
  }
}

void run_range_generic(const PreparedShader& s, const DrawPlan& plan, const uint8_t* uniforms, const DrawStreams& in,
                       const DrawStreams& out, const Moves& mv, size_t begin, size_t end, int64_t budget, uint8_t* vars,
                       Fault& fault) {
  run_range_t<false>(s, plan, uniforms, in, out, mv, begin, end, budget, vars, fault);
}
#ifdef GPURC_DRAW_WIDE
// The 4x4 form compiled with VEX encoding: on an AVX2 host the JIT's AVX2
// code and the loop around it then stay in one encoding as well.
__attribute__((target("avx2"))) void run_range_avx2(const PreparedShader& s, const DrawPlan& plan,
                                                    const uint8_t* uniforms, const DrawStreams& in,
                                                    const DrawStreams& out, const Moves& mv, size_t begin, size_t end,
                                                    int64_t budget, uint8_t* vars, Fault& fault) {
  run_range_t<false>(s, plan, uniforms, in, out, mv, begin, end, budget, vars, fault);
}
__attribute__((target("avx512f"))) void run_range_wide(const PreparedShader& s, const DrawPlan& plan,
                                                       const uint8_t* uniforms, const DrawStreams& in,
                                                       const DrawStreams& out, const Moves& mv, size_t begin,
                                                       size_t end, int64_t budget, uint8_t* vars, Fault& fault) {
  run_range_t<true>(s, plan, uniforms, in, out, mv, begin, end, budget, vars, fault);
}
#endif

// The descriptor fields of the engine's draw loop that depend on the
// set-up only (not on the warps, the tail or the budget).
void fill_loop(const DrawPlan& plan, const Moves& mv, ir::DrawLoop& loop) {
  loop.loads = mv.loads;
  loop.nloads = mv.nloads;
  loop.stores = mv.stores;
  loop.nstores = mv.nstores;
  loop.pre = mv.pre;
  loop.npre = mv.npre;
  loop.post = mv.post;
  loop.npost = mv.npost;
  loop.zero = plan.zero_pairs.data();
  loop.nzero = uint32_t(plan.zero_pairs.size() / 2);
  loop.prefetch = mv.prefetch;
  loop.reverse = mv.reverse;
  loop.warp_entry = mv.loop_warp_entry;
}

// What every call of the draw loop starts from: the input ranges no stream
// writes zeroed (the set bits only: a test per register was ~32
// instructions per call), and the context's fields the draw loop reads
// (uniforms, frame, vars, entry_mask; it sets budget and entry_mask per
// warp) with the fault fields reset, so a fault reports only what this
// call's code wrote.
GPURC_DRAW_INLINE void start_draw_call(const DrawPlan& plan, const Moves& mv, const uint8_t* uniforms, uint8_t* vars,
                                       ir::WarpContext& ctx) {
  for (uint32_t m = mv.zero_in; m; m &= m - 1) {
    const unsigned n = unsigned(__builtin_ctz(m));
    std::memset(vars + plan.in_ranges[n].first, 0, plan.in_ranges[n].second - plan.in_ranges[n].first);
  }
  ctx.uniforms = uniforms;
  ctx.frame = vars + rt::align64(plan.vars_bytes);
  ctx.vars = vars;
  ctx.entry_mask = ~0u;
  ctx.resume = 0;
  ctx.status = ir::RunStatus::Done;
  ctx.fault = ir::FaultKind::None;
  ctx.fault_code = ctx.fault_addr = 0;
  ctx.fault_space = ctx.fault_lane = 0;
}

// The warps of [begin, end) through the engine's draw loop (begin a warp
// boundary; a last partial warp runs in the same call, ir::DrawLoop::tail),
// ascending or, with mv.reverse, descending. Returns true when all ran;
// false after a fault, with `stopped` = the first vertex of the warp that
// faulted.
bool run_engine_loop(const PreparedShader& s, const DrawPlan& plan, const uint8_t* uniforms, const Moves& mv,
                     size_t begin, size_t end, int64_t budget, uint8_t* vars, Fault& fault, size_t& stopped) {
  const size_t first = begin / kWarp, last = (end + kWarp - 1) / kWarp;
  if (last <= first) return true;
  // One context per thread, made once: a fresh 464-byte WarpContext per
  // call was a `rep stos` that cost ~15% of a one-vertex draw on a Zen 3
  // host (ninth session).
  thread_local ir::WarpContext ctx;
  start_draw_call(plan, mv, uniforms, vars, ctx);
  ir::DrawLoop loop;
  fill_loop(plan, mv, loop);
  loop.first_warp = uint32_t(first);
  loop.end_warp = uint32_t(last);
  loop.tail = uint32_t(end % kWarp);
  loop.budget = budget;
  ir::RunStatus st;
  if (mv.loop_code) {
    using DrawCode = uint32_t (*)(ir::WarpContext*, ir::DrawLoop*);
    st = ctx.status = ir::RunStatus(reinterpret_cast<DrawCode>(const_cast<uint8_t*>(mv.loop_code))(&ctx, &loop));
  } else {
    st = s.compiled.exe->run_draw_loop(ctx, loop);
  }
  if (st != ir::RunStatus::Done) {
    stopped = size_t(loop.warp) * kWarp;
    report_fault(s, ctx, st, stopped, fault);
    return false;
  }
  return true;
}

void run_range_cpp(const PreparedShader& s, const DrawPlan& plan, const uint8_t* uniforms, const DrawStreams& in,
                   const DrawStreams& out, const Moves& mv, size_t begin, size_t end, int64_t budget, uint8_t* vars,
                   Fault& fault);

// Vertices [begin, end) (begin a warp boundary): every warp through the
// engine's draw loop when it has one (a last partial warp too, unless
// GPURC_DRAW_TAIL=0 keeps it in the C++ warp loop as before the eighth
// session), else the C++ warp loop. Descending (mv.reverse): a fault stops
// the loop at its warp, and the warps below it still run, so the fault
// reported (Fault::offer keeps the lowest vertex) is the lowest faulting
// warp's, as in ascending order.
void run_range(const PreparedShader& s, const DrawPlan& plan, const uint8_t* uniforms, const DrawStreams& in,
               const DrawStreams& out, const Moves& mv, size_t begin, size_t end, int64_t budget, uint8_t* vars,
               Fault& fault) {
  if (!mv.engine_loop) return run_range_cpp(s, plan, uniforms, in, out, mv, begin, end, budget, vars, fault);
  if (fault.any.load(std::memory_order_relaxed)) return;
  size_t loop_end = end;
  if (!mv.tail_in_loop && end % kWarp != 0) {
    loop_end = begin + (end - begin) / kWarp * kWarp;
    Fault partial;
    run_range_cpp(s, plan, uniforms, in, out, mv, loop_end, end, budget, vars, partial);
    if (partial.any) fault.offer(partial.first.fault_vertex, partial.first.fault, partial.first.watchdog, true);
  }
  size_t stopped = 0;
  for (size_t top = loop_end; top > begin; top = stopped)
    if (run_engine_loop(s, plan, uniforms, mv, begin, top, budget, vars, fault, stopped) || !mv.reverse) break;
}

void run_range_cpp(const PreparedShader& s, const DrawPlan& plan, const uint8_t* uniforms, const DrawStreams& in,
                   const DrawStreams& out, const Moves& mv, size_t begin, size_t end, int64_t budget, uint8_t* vars,
                   Fault& fault) {
#ifdef GPURC_DRAW_WIDE
  if (host_has_avx512()) return run_range_wide(s, plan, uniforms, in, out, mv, begin, end, budget, vars, fault);
  if (host_has_avx2()) return run_range_avx2(s, plan, uniforms, in, out, mv, begin, end, budget, vars, fault);
#endif
  run_range_generic(s, plan, uniforms, in, out, mv, begin, end, budget, vars, fault);
}

// The order of the pass-through copies (Moves::forward_order). Each copy
// runs over the whole warp before the next, so a copy that writes bytes of
// its vertex's record which a later copy reads (in place, with registers
// moved: `mov o0, v1; mov o1, v0` over the input records) would hand that
// later copy the new value. Copies run so that every reader of a register's
// bytes comes before their writer; a cycle (two registers swapped in place)
// leaves a copy to the code instead: its input is loaded into the var area
// with the others (before any copy writes) and the code's own output is
// stored after the run. Until the ninth session the copies ran in register
// order, and such a draw gave the later copy the clobbered value.
void order_forwards(const DrawPlan& plan, const DrawStreams& in, const DrawStreams& out, size_t count, Moves& mv,
                    bool& count_matters) {
  mv.nforward = 0;
  if (!mv.forward) return;
  std::array<uint8_t, 16> regs{};
  unsigned n = 0;
  for (uint16_t m = mv.forward; m; m &= uint16_t(m - 1)) regs[n++] = uint8_t(__builtin_ctz(m));
  // after[i] bit j: copy i writes bytes copy j reads, so j runs first.
  std::array<uint16_t, 16> after{};
  bool any = false;
  for (unsigned i = 0; i < n; ++i)
    for (unsigned j = 0; j < n; ++j) {
      const unsigned v = unsigned(plan.forward[regs[j]]);
      if (i == j || !(in.mask >> v & 1)) continue;
      // With different strides the overlap depends on the count and on
      // where the records start (a one-vertex draw's order too: a bound
      // draw, DrawState::run_bound, may reuse it for more vertices or move
      // it to another offset, move_draw_setup).
      if (out.stride[regs[i]] != in.stride[v]) count_matters = true;
      if (same_vertex_overlap(out.base[regs[i]], out.stride[regs[i]], 16, in.base[v], in.stride[v], 16, count)) {
        after[i] |= uint16_t(1u << j);
        any = true;
      }
    }
  if (!any) {
    for (unsigned i = 0; i < n; ++i) mv.forward_order[mv.nforward++] = regs[i];
    return;
  }
  uint16_t left = uint16_t((1u << n) - 1);
  while (left) {
    unsigned pick = 16;
    for (unsigned i = 0; i < n && pick == 16; ++i)
      if ((left >> i & 1) && !(after[i] & left)) pick = i;
    if (pick == 16) {
      // A cycle: the lowest copy left goes to the code (read into the var
      // area before any copy writes, stored after the run).
      for (unsigned i = 0; i < n; ++i)
        if (left >> i & 1) {
          const unsigned r = regs[i], v = unsigned(plan.forward[r]);
          mv.forward &= uint16_t(~(1u << r));
          mv.store |= uint16_t(1u << r);
          if (in.mask >> v & 1) mv.load |= uint16_t(1u << v);
          else mv.zero_in |= uint16_t(1u << v);
          left &= uint16_t(~(1u << i));
          break;
        }
      continue;
    }
    mv.forward_order[mv.nforward++] = regs[pick];
    left &= uint16_t(~(1u << pick));
  }
}

// Adjacent copies in `list` (in their run order) merged into one of up to
// 64 bytes: destinations consecutive at one stride and sources consecutive at
// one stride (or both the zero record). Each vertex's merged bytes are all
// read before any is written, which keeps the order's guarantee.
uint32_t merge_copies(ir::DrawCopy* list, uint32_t n) {
  static const bool merge = [] {
    const char* e = std::getenv("GPURC_DRAW_MERGE");
    return !(e && *e == '0');
  }();
  if (!merge || n < 2) return n;
  uint32_t w = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const ir::DrawCopy& c = list[i];
    if (w > 0) {
      ir::DrawCopy& t = list[w - 1];
      const bool zero = t.src == kZeroRecord && c.src == kZeroRecord && t.src_stride == 0 && c.src_stride == 0;
      const bool src_next = zero || (c.src == t.src + t.bytes && c.src_stride == t.src_stride);
      if (src_next && c.dst == t.dst + t.bytes && c.dst_stride == t.dst_stride && t.bytes + c.bytes <= 64) {
        t.bytes += c.bytes;
        continue;
      }
    }
    list[w++] = c;
  }
  return w;
}

bool env_flag(const char* name, bool dflt) {
  const char* v = std::getenv(name);
  return v && *v ? v[0] != '0' : dflt;
}

// Moves::engine_loop and its descriptors. GPURC_DRAW_LOOP=0 keeps every warp
// in the C++ runner, GPURC_DRAW_PREFETCH=0 turns the draw loop's prefetch
// of the next warp's input records off and GPURC_DRAW_REVERSE=0 runs the
// warps ascending (for measurements; read once).
void plan_engine_loop(const PreparedShader& s, const DrawPlan& plan, const DrawStreams& in, const DrawStreams& out,
                      Moves& mv, DrawScratch& scratch) {
  static const bool enabled = env_flag("GPURC_DRAW_LOOP", true);
  static const bool prefetch = env_flag("GPURC_DRAW_PREFETCH", true);
  static const bool reverse = env_flag("GPURC_DRAW_REVERSE", true);
  static const bool tail = env_flag("GPURC_DRAW_TAIL", true);
  if (!enabled || plan.frame_needs_zero) return;
  if (scratch.loop_exe != s.compiled.exe.get()) {
    const ir::Executable& exe = *s.compiled.exe;
    scratch.loop_exe = &exe;
    scratch.loop_code = scratch.loop_warp_entry = nullptr;
    scratch.loop_has = exe.draw_loop_code(scratch.loop_code, scratch.loop_warp_entry) || exe.has_draw_loop();
  }
  if (!scratch.loop_has) return;
  mv.loop_code = scratch.loop_code;
  mv.loop_code_kept_next = mv.loop_code ? mv.loop_code + ir::kDrawLoopKeptNextEntry : nullptr;
  mv.loop_warp_entry = scratch.loop_warp_entry;
  for (uint16_t m = mv.store | mv.forward | mv.zero_out; m; m &= uint16_t(m - 1))
    if (!out.quad[unsigned(__builtin_ctz(m))]) return;
  if (!plan.zero_loop_ok) return;
  auto reg_move = [](uint8_t* base, size_t stride, const std::array<uint32_t, 4>& var) {
    ir::DrawRegMove m;
    m.base = base;
    m.stride = stride;
    for (int c = 0; c < 4; ++c) m.var[c] = var[c];
    return m;
  };
  mv.nloads = mv.nstores = mv.npre = mv.npost = 0;
  ir::DrawRegMove* loads = scratch.loop_loads.data();
  ir::DrawRegMove* stores = scratch.loop_stores.data();
  ir::DrawCopy* pre = scratch.loop_pre.data();
  ir::DrawCopy* post = scratch.loop_post.data();
  mv.loads = loads;
  mv.stores = stores;
  mv.pre = pre;
  mv.post = post;
  for (uint16_t m = mv.load; m; m &= uint16_t(m - 1)) {
    const unsigned r = unsigned(__builtin_ctz(m));
    loads[mv.nloads++] = reg_move(in.base[r], in.stride[r], plan.in_var[r]);
  }
  for (uint16_t m = mv.store; m; m &= uint16_t(m - 1)) {
    const unsigned r = unsigned(__builtin_ctz(m));
    stores[mv.nstores++] = reg_move(out.base[r], out.stride[r], plan.out_var[r]);
  }
  for (uint32_t i = 0; i < mv.nforward; ++i) {
    const unsigned r = mv.forward_order[i];
    const unsigned v = unsigned(plan.forward[r]);
    const bool have = in.mask >> v & 1;
    pre[mv.npre++] = ir::DrawCopy{have ? in.base[v] : kZeroRecord, have ? in.stride[v] : 0, out.base[r], out.stride[r]};
  }
  for (uint16_t m = mv.zero_out; m; m &= uint16_t(m - 1)) {
    const unsigned r = unsigned(__builtin_ctz(m));
    post[mv.npost++] = ir::DrawCopy{kZeroRecord, 0, out.base[r], out.stride[r]};
  }
  mv.npre = merge_copies(pre, mv.npre);
  mv.npost = merge_copies(post, mv.npost);
  mv.prefetch = prefetch;
  mv.reverse = reverse;
  mv.tail_in_loop = tail;
  mv.engine_loop = true;
}

// A repeated draw's fault (DrawScratch::again_ok): reported as run_range
// reports it, and in descending order the warps below the faulting one
// still run (through run_engine_loop, as run_range does), so the fault
// named is the lowest faulting warp's. Out of line: the repeated draw's path
// stays small.
__attribute__((noinline)) DrawResult again_fault(const PreparedShader& s, const DrawPlan& plan, const uint8_t* uniforms,
                                                 const Moves& mv, int64_t units, uint8_t* vars,
                                                 const ir::WarpContext& ctx, ir::RunStatus st, uint32_t warp) {
  Fault fault;
  size_t stopped = size_t(warp) * kWarp;
  report_fault(s, ctx, st, stopped, fault);
  if (mv.reverse)
    for (size_t top = stopped; top > 0; top = stopped)
      if (run_engine_loop(s, plan, uniforms, mv, 0, top, units, vars, fault, stopped)) break;
  return fault.first;
}

}  // namespace

bool move_draw_setup(DrawScratch& scratch, int64_t vertices) {
  if (scratch.setup_count_matters) return false;
  DrawMoves& mv = scratch.setup;
  auto move = [vertices](auto* p, uint64_t stride) {
    using P = decltype(p);
    return reinterpret_cast<P>(reinterpret_cast<uintptr_t>(p) + uintptr_t(vertices * int64_t(stride)));
  };
  for (uint32_t i = 0; i < mv.nloads; ++i) scratch.loop_loads[i].base = move(scratch.loop_loads[i].base, scratch.loop_loads[i].stride);
  for (uint32_t i = 0; i < mv.nstores; ++i)
    scratch.loop_stores[i].base = move(scratch.loop_stores[i].base, scratch.loop_stores[i].stride);
  // Copies from the zero record have source stride 0: they stay.
  for (ir::DrawCopy* list : {scratch.loop_pre.data(), scratch.loop_post.data()}) {
    const uint32_t n = list == scratch.loop_pre.data() ? mv.npre : mv.npost;
    for (uint32_t i = 0; i < n; ++i) {
      list[i].src = move(list[i].src, list[i].src_stride);
      list[i].dst = move(list[i].dst, list[i].dst_stride);
    }
  }
  return true;
}

int run_draw_again(const PreparedShader& s, const DrawPlan& plan, const uint8_t* uniforms, size_t count,
                   unsigned threads, uint64_t budget, DrawScratch& scratch) {
  // run_draw's reuse condition, and the kept descriptor and context.
  if (!scratch.again_ok || scratch.streams_id == 0 || scratch.setup_id != scratch.streams_id ||
      scratch.setup_plan != &plan || scratch.loop_exe != s.compiled.exe.get() ||
      (scratch.setup_count_matters && scratch.setup_count != count) || (threads != 1 && count >= kDrawParallelMin) ||
      count == 0)
    return 0;
  if (scratch.units_budget != budget || scratch.units_cost != s.compiled.max_step_cost || scratch.units < 0) {
    scratch.units = jit_watchdog_units(budget, s.compiled.max_step_cost);
    scratch.units_budget = budget;
    scratch.units_cost = s.compiled.max_step_cost;
  }
  const Moves& mv = scratch.setup;
  uint8_t* vars = scratch.get(rt::align64(plan.vars_bytes) + rt::align64(plan.frame_bytes));
  ir::WarpContext& ctx = scratch.again_ctx;
  start_draw_call(plan, mv, uniforms, vars, ctx);
  ir::DrawLoop& loop = scratch.again_loop;
  loop.first_warp = 0;
  loop.end_warp = uint32_t((count + kWarp - 1) / kWarp);
  loop.tail = uint32_t(count % kWarp);
  loop.budget = scratch.units;
  using DrawCode = uint32_t (*)(ir::WarpContext*, ir::DrawLoop*);
  const auto st = ir::RunStatus(reinterpret_cast<DrawCode>(const_cast<uint8_t*>(mv.loop_code))(&ctx, &loop));
  ctx.status = st;
  if (st == ir::RunStatus::Done) [[likely]] {
    // The next call may take the short form (run_draw_again_fast), unless
    // the copy order depends on the count.
    scratch.again_clean = !scratch.setup_count_matters;
    scratch.again_budget = budget;
    return 1;
  }
  return run_draw_again_failed(s, plan, uniforms, uint32_t(st), scratch);
}

int run_draw_again_failed(const PreparedShader& s, const DrawPlan& plan, const uint8_t* uniforms, uint32_t status,
                          DrawScratch& scratch) {
  // The context holds this call's fault fields now: the next call sets it up again.
  scratch.again_clean = false;
  ir::WarpContext& ctx = scratch.again_ctx;
  const auto st = ir::RunStatus(status);
  ctx.status = st;
  scratch.again_fault = again_fault(s, plan, uniforms, scratch.setup, scratch.again_loop.budget, ctx.vars, ctx, st,
                                    scratch.again_loop.warp);
  return -1;
}

namespace {
int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

bool SplitChooser::begin(size_t n, int64_t now) {
  // The previous large draw's cycle ends here.
  if (start != 0 && counted && count != 0) {
    const double draw = double(draw_ns), gap = std::max(0.0, double(now - start) - draw);
    const double per = (draw + std::min(gap, kGapCap * draw)) / double(count);
    const int m = split ? 1 : 0;
    // The mean of the first cycles after a reset, then a moving average.
    const double a = std::max(0.25, 1.0 / double(++samples[m]));
    cycle[m] += a * (per - cycle[m]);
  }
  bool s;
  if (one_draw == 0 || one_draw * double(n) < kMinWorkNs || cycle[0] == 0) {
    // Not measured yet, or too little work to pay for a split.
    s = false;
    probing = false;
    probe_left = 0;
  } else if (probe_left > 0) {
    s = probe_mode;
    --probe_left;
  } else {
    const bool best = cycle[1] != 0 && cycle[1] < kMargin * cycle[0];
    if (probing) {
      // A probe ended: probe less often while probes confirm the choice.
      probing = false;
      probe_every = best == before_probe ? std::min(probe_every * 2, kProbeMax) : kProbeFirst;
    }
    if (cycle[1] == 0 || ++since_probe >= probe_every) {
      since_probe = 0;
      probing = true;
      before_probe = best;
      probe_mode = cycle[1] == 0 ? true : !best;
      samples[probe_mode ? 1 : 0] = 0;  // the probe's cycles replace the old ones
      probe_left = kProbeDraws - 1;
      s = probe_mode;
    } else {
      s = best;
    }
  }
  counted = start != 0 && s == split;
  split = s;
  count = n;
  start = now;
  draw_ns = 0;
  return s;
}

void SplitChooser::end(int64_t now) {
  draw_ns = std::max<int64_t>(0, now - start);
  if (!split && count != 0) {
    const double per = double(draw_ns) / double(count);
    one_draw = one_draw == 0 ? per : 0.75 * one_draw + 0.25 * per;
  }
}

DrawResult run_draw(const PreparedShader& s, const DrawPlan& plan, const uint8_t* uniforms, const DrawStreams& in,
                    const DrawStreams& out, size_t count, unsigned threads, uint64_t budget, DrawScratch& scratch) {
  // The previous draw's set-up again when the caller says the streams are
  // the same (DrawScratch::streams_id) and nothing else it depends on changed.
  const bool reuse = scratch.streams_id != 0 && scratch.setup_id == scratch.streams_id &&
                     scratch.setup_plan == &plan && scratch.loop_exe == s.compiled.exe.get() &&
                     (!scratch.setup_count_matters || scratch.setup_count == count);
  if (reuse)
    if (const int again = run_draw_again(s, plan, uniforms, count, threads, budget, scratch); again != 0)
      return again > 0 ? DrawResult{} : std::exchange(scratch.again_fault, DrawResult{});
  Moves fresh;
  if (!reuse) {
    Moves& mv = fresh;
    for (uint32_t m = out.mask & plan.out_written; m; m &= m - 1) {
      const unsigned r = unsigned(__builtin_ctz(m));
      if (plan.forward[r] >= 0) mv.forward |= uint16_t(1u << r);
    }
    // Inputs read only for pass-through copies stay out of the var area (the
    // code then copies stale values into output vars nobody stores).
    mv.load = in.mask & plan.in_read & ~plan.forward_only;
    mv.zero_in = uint16_t(plan.in_read & ~in.mask & ~plan.forward_only);
    mv.store = out.mask & plan.out_written & ~mv.forward;
    mv.zero_out = uint16_t(out.mask & ~plan.out_written);
    bool count_matters = false;
    order_forwards(plan, in, out, count, mv, count_matters);
    plan_engine_loop(s, plan, in, out, mv, scratch);  // rewrites the scratch's descriptors
    scratch.setup_id = 0;
    scratch.again_ok = false;
    scratch.again_clean = false;
    if (scratch.streams_id != 0 && mv.engine_loop) {
      scratch.setup = mv;
      scratch.setup_id = scratch.streams_id;
      scratch.setup_plan = &plan;
      scratch.setup_count = count;
      scratch.setup_count_matters = count_matters;
      // The repeated draw's descriptor (its per-call fields are set per
      // call) and a context of its own, when the stub is called directly
      // and runs a partial last warp itself.
      if (mv.loop_code && mv.tail_in_loop) {
        fill_loop(plan, scratch.setup, scratch.again_loop);
        scratch.again_ctx = ir::WarpContext{};
        scratch.again_ok = true;
      }
    }
  }
  const Moves& mv = reuse ? scratch.setup : fresh;
  // The watchdog units of the last budget again (a caller keeps its budget).
  if (scratch.units_budget != budget || scratch.units_cost != s.compiled.max_step_cost || scratch.units < 0) {
    scratch.units = jit_watchdog_units(budget, s.compiled.max_step_cost);
    scratch.units_budget = budget;
    scratch.units_cost = s.compiled.max_step_cost;
  }
  const int64_t units = scratch.units;
  const size_t area = rt::align64(plan.vars_bytes) + rt::align64(plan.frame_bytes);
  Fault fault;
  const size_t warps = (count + kWarp - 1) / kWarp;
  bool split = threads != 1 && count >= kDrawParallelMin && rt::ThreadPool::host_cores() > 1;
  bool timed = split && threads == 0;  // automatic: SplitChooser decides
  if (timed) {
    if (scratch.chooser.wants_clock(count)) {
      split = scratch.chooser.begin(count, steady_ns());
    } else {
      scratch.chooser.skip();
      split = timed = false;
    }
  }
  if (!split) {
    run_range(s, plan, uniforms, in, out, mv, 0, count, units, scratch.get(area), fault);
  } else {
    rt::ThreadPool& pool = rt::ThreadPool::shared(threads);
    // Whole warps per item, a few items per thread so a slow thread does not hold the rest up.
    const size_t items = std::min(warps, size_t(pool.threads()) * 4);
    const size_t per = (warps + items - 1) / items;
    pool.parallel_for(items, [&](size_t i) {
      const size_t b = i * per * kWarp, e = std::min(count, (i + 1) * per * kWarp);
      if (b >= e) return;
      thread_local DrawScratch local;
      run_range(s, plan, uniforms, in, out, mv, b, e, units, local.get(area), fault);
    });
  }
  if (timed) scratch.chooser.end(steady_ns());
  if (fault.any) return fault.first;
  return DrawResult{};
}

}  // namespace gpurc::pica
