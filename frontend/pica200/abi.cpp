// The PICA200 launch ABI (abi.h): the uniform block, and VertexState /
// GsState moved into and out of a warp's var area and emit records.
#include "frontend/pica200/abi.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>

namespace gpurc::pica {

namespace {

void put_u32(uint8_t* p, uint32_t v) { std::memcpy(p, &v, 4); }
uint32_t get_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

}  // namespace

std::vector<uint8_t> pack_uniforms(const Uniforms& u) {
  std::vector<uint8_t> out(kUniformBytes, 0);
  for (unsigned n = 0; n < 96; ++n)
    for (unsigned c = 0; c < 4; ++c) put_u32(&out[kUniformFloat + 16 * n + 4 * c], fp::bits(u.f[n][c]));
  for (unsigned n = 0; n < 4; ++n)
    for (unsigned c = 0; c < 4; ++c) put_u32(&out[kUniformInt + 16 * n + 4 * c], u.i[n][c]);
  put_u32(&out[kUniformBool], u.b);
  put_u32(&out[kUniformEmitCapacity], kEmitMaxPerInvocation);
  return out;
}

// Offsets of the state vars in one pass: Function::var_offset walks every
// earlier var. Same layout rule as ir::Function::var_offset (docs/architecture.md, warp ABI).
static std::array<uint32_t, kNumStateVars> state_var_offsets(const ir::Function& f) {
  std::array<uint32_t, kNumStateVars> off{};
  uint32_t o = 0;
  for (uint32_t i = 0; i < kNumStateVars && i < f.vars.size(); ++i) {
    off[i] = o;
    o += (ir::lane_bytes(f.vars[i].type) * ir::kWarpLanes + 63) & ~63u;
  }
  return off;
}

// VertexState offsets of register n of bank b (0 v, 1 o, 2 r) and of the scalar state vars.
static uint32_t register_offset(uint32_t bank, uint32_t n) {
  size_t base = bank == 0 ? offsetof(VertexState, v) : bank == 1 ? offsetof(VertexState, o) : offsetof(VertexState, r);
  return uint32_t(base + sizeof(Vec4) * n);
}
static LaneMap::Slot scalar_slot(uint32_t var, uint32_t var_offset) {
  switch (var) {
    case kVarA0X: return {var_offset, uint32_t(offsetof(VertexState, a0x)), 0};
    case kVarA0Y: return {var_offset, uint32_t(offsetof(VertexState, a0y)), 0};
    case kVarAL: return {var_offset, uint32_t(offsetof(VertexState, aL)), 1};
    case kVarCmpX: return {var_offset, uint32_t(offsetof(VertexState, cmpx)), 2};
    default: return {var_offset, uint32_t(offsetof(VertexState, cmpy)), 2};
  }
}

static LaneMap make_lane_map(const ir::Function& f, const std::vector<uint8_t>& in, const std::vector<uint8_t>& out) {
  LaneMap m;
  const auto off = state_var_offsets(f);
  for (uint32_t reg = 0; reg < 48 && kVarInput + 4 * reg + 3 < f.vars.size(); ++reg) {
    uint32_t var = kVarInput + 4 * reg;
    LaneMap::Quad q{{off[var], off[var + 1], off[var + 2], off[var + 3]}, register_offset(reg / 16, reg % 16)};
    bool any_in = false, any_out = false;
    for (uint32_t c = 0; c < 4; ++c) {
      any_in |= in[var + c] != 0;
      any_out |= out[var + c] != 0;
    }
    if (any_in || any_out) m.in4.push_back(q);
    if (any_out) m.out4.push_back(q);
  }
  for (uint32_t var = kVarA0X; var < kNumStateVars && var < f.vars.size(); ++var) {
    if (in[var] || out[var]) m.in.push_back(scalar_slot(var, off[var]));
    if (out[var]) m.out.push_back(scalar_slot(var, off[var]));
  }
  return m;
}

LaneMap LaneMap::all(const ir::Function& f) {
  std::vector<uint8_t> every(kNumStateVars, 1);
  return make_lane_map(f, every, every);
}

LaneMap LaneMap::used(const ir::Function& f) {
  std::vector<uint8_t> in(kNumStateVars, 0), out(kNumStateVars, 0);
  for (const ir::Inst& i : f.insts) {
    if (i.block == ir::kNoBlock || i.imm >= kNumStateVars) continue;
    if (i.op == ir::Opcode::GetVar) in[i.imm] = 1;
    if (i.op == ir::Opcode::SetVar) in[i.imm] = out[i.imm] = 1;
  }
  return make_lane_map(f, in, out);
}

// Registers: four lanes at a time as a 4x4 transpose (a Vec4 per lane in,
// one 16-byte row per component out), the rest lane by lane. Lanes are the
// outer loop so the states are read front to back (they are usually far
// from the cache; this order lets the prefetcher stream them).
//
// The transpose is written with the compiler's generic vector type and
// shuffles (GCC and Clang), which become unpcklps/movlhps on x86 and
// zip/trn on AArch64: no host intrinsics in a frontend. (g++ 12 compiles
// the plain-loop form below to scalar moves, not shuffles.)
#if defined(__GNUC__)
using F4 = float __attribute__((vector_size(16)));
static inline void transpose4(const uint8_t* const src[4], uint8_t* const dst[4]) {
  F4 r0, r1, r2, r3;
  std::memcpy(&r0, src[0], 16);
  std::memcpy(&r1, src[1], 16);
  std::memcpy(&r2, src[2], 16);
  std::memcpy(&r3, src[3], 16);
  const F4 t0 = __builtin_shufflevector(r0, r1, 0, 4, 1, 5), t1 = __builtin_shufflevector(r0, r1, 2, 6, 3, 7);
  const F4 t2 = __builtin_shufflevector(r2, r3, 0, 4, 1, 5), t3 = __builtin_shufflevector(r2, r3, 2, 6, 3, 7);
  const F4 c0 = __builtin_shufflevector(t0, t2, 0, 1, 4, 5), c1 = __builtin_shufflevector(t0, t2, 2, 3, 6, 7);
  const F4 c2 = __builtin_shufflevector(t1, t3, 0, 1, 4, 5), c3 = __builtin_shufflevector(t1, t3, 2, 3, 6, 7);
  std::memcpy(dst[0], &c0, 16);
  std::memcpy(dst[1], &c1, 16);
  std::memcpy(dst[2], &c2, 16);
  std::memcpy(dst[3], &c3, 16);
}
#else
static inline void transpose4(const uint8_t* const src[4], uint8_t* const dst[4]) {
  float t[4][4];
  for (size_t k = 0; k < 4; ++k) std::memcpy(t[k], src[k], 16);
  for (size_t c = 0; c < 4; ++c) {
    float row[4];
    for (size_t k = 0; k < 4; ++k) row[k] = t[k][c];
    std::memcpy(dst[c], row, 16);
  }
}
#endif

static void quads_to_vars(const std::vector<LaneMap::Quad>& quads, const VertexState* states, size_t n,
                          uint8_t* vars) {
  size_t lane = 0;
  for (; lane + 4 <= n; lane += 4)
    for (const LaneMap::Quad& q : quads) {
      const uint8_t* src[4];
      uint8_t* dst[4];
      for (size_t k = 0; k < 4; ++k) src[k] = reinterpret_cast<const uint8_t*>(&states[lane + k]) + q.state_offset;
      for (size_t c = 0; c < 4; ++c) dst[c] = vars + q.var_offset[c] + 4 * lane;
      transpose4(src, dst);
    }
  for (; lane < n; ++lane)
    for (const LaneMap::Quad& q : quads) {
      const uint8_t* src = reinterpret_cast<const uint8_t*>(&states[lane]) + q.state_offset;
      for (size_t c = 0; c < 4; ++c) std::memcpy(vars + q.var_offset[c] + 4 * lane, src + 4 * c, 4);
    }
}

static void vars_to_quads(const std::vector<LaneMap::Quad>& quads, const uint8_t* vars, VertexState* states,
                          size_t n) {
  size_t lane = 0;
  for (; lane + 4 <= n; lane += 4)
    for (const LaneMap::Quad& q : quads) {
      const uint8_t* src[4];
      uint8_t* dst[4];
      for (size_t c = 0; c < 4; ++c) src[c] = vars + q.var_offset[c] + 4 * lane;
      for (size_t k = 0; k < 4; ++k) dst[k] = reinterpret_cast<uint8_t*>(&states[lane + k]) + q.state_offset;
      transpose4(src, dst);
    }
  for (; lane < n; ++lane)
    for (const LaneMap::Quad& q : quads) {
      uint8_t* dst = reinterpret_cast<uint8_t*>(&states[lane]) + q.state_offset;
      for (size_t c = 0; c < 4; ++c) std::memcpy(dst + 4 * c, vars + q.var_offset[c] + 4 * lane, 4);
    }
}

void pack_lanes(const LaneMap& m, const VertexState* states, size_t n, uint8_t* vars, uint32_t& mask) {
  n = std::min<size_t>(n, ir::kWarpLanes);
  mask = n == 32 ? ~0u : (1u << n) - 1;
  quads_to_vars(m.in4, states, n, vars);
  for (const LaneMap::Slot& s : m.in) {
    uint8_t* dst = vars + s.var_offset;
    for (size_t lane = 0; lane < n; ++lane) {
      const uint8_t* src = reinterpret_cast<const uint8_t*>(&states[lane]) + s.state_offset;
      uint32_t v = s.kind == 0 ? get_u32(src) : s.kind == 1 ? uint32_t(*src) : uint32_t(*src != 0);
      put_u32(dst + 4 * lane, v);
    }
  }
}

void unpack_lanes(const LaneMap& m, const uint8_t* vars, VertexState* states, size_t n) {
  n = std::min<size_t>(n, ir::kWarpLanes);
  vars_to_quads(m.out4, vars, states, n);
  for (const LaneMap::Slot& s : m.out) {
    const uint8_t* src = vars + s.var_offset;
    for (size_t lane = 0; lane < n; ++lane) {
      uint8_t* dst = reinterpret_cast<uint8_t*>(&states[lane]) + s.state_offset;
      uint32_t v = get_u32(src + 4 * lane);
      if (s.kind == 0) put_u32(dst, v);
      else if (s.kind == 1) *dst = uint8_t(v);
      else *reinterpret_cast<bool*>(dst) = (v & 1) != 0;
    }
  }
}

void pack_lanes(const ir::Function& f, const std::vector<VertexState>& states, size_t first, uint8_t* vars,
                uint32_t& mask) {
  mask = 0;
  if (first >= states.size()) return;
  pack_lanes(LaneMap::all(f), states.data() + first, states.size() - first, vars, mask);
}

void unpack_lanes(const ir::Function& f, const uint8_t* vars, size_t first, std::vector<VertexState>& states) {
  if (first >= states.size()) return;
  unpack_lanes(LaneMap::all(f), vars, states.data() + first, states.size() - first);
}

void unpack_emits(const ir::Function& f, const uint8_t* vars, const uint8_t* records, size_t first,
                  std::vector<GsState>& gs, size_t lanes, uint32_t capacity) {
  if (f.vars.size() <= kVarEmitCount || f.vars[kVarEmitCount].name != "emit.count") return;  // not a geometry translation
  const uint32_t latch_off = f.var_offset(kVarEmitLatch), count_off = f.var_offset(kVarEmitCount);
  for (unsigned lane = 0; lane < std::min<size_t>(lanes, ir::kWarpLanes) && first + lane < gs.size(); ++lane) {
    GsState& g = gs[first + lane];
    const uint32_t count = std::min(get_u32(vars + count_off + 4 * lane), capacity);
    const uint8_t* rec = records + size_t(lane) * capacity * kEmitRecordBytes;
    // The interpreter's EMIT, replayed record by record.
    for (uint32_t k = 0; k < count; ++k, rec += kEmitRecordBytes) {
      const uint32_t header = get_u32(rec);
      auto& slot = g.buffer[header & 3];
      for (unsigned n = 0; n < 16; ++n)
        for (unsigned c = 0; c < 4; ++c) slot[n][c] = fp::from_bits(get_u32(rec + kEmitHeaderBytes + 16 * n + 4 * c));
      ++g.emits;
      if (header & 0x100) {
        GsPrimitive prim;
        for (size_t v = 0; v < 3; ++v) prim.vertices[v] = g.buffer[v];
        prim.winding = (header >> 9) & 1;
        g.primitives.push_back(prim);
      }
    }
    const uint32_t latch = get_u32(vars + latch_off + 4 * lane);
    g.vtxid = uint8_t(latch & 0xFF);
    g.prim = (latch >> 8) & 1;
    g.winding = (latch >> 9) & 1;
  }
}

}  // namespace gpurc::pica
