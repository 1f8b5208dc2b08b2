// Shared test helpers of the backend tests: random and edge lane values,
// warp state, builder shorthands and runs to the end (tier access: tiers.h).
#pragma once
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ir/abi.h"
#include "ir/builder.h"
#include "ir/interp.h"

namespace gpurc::backend::test {

inline bool light() {
  const char* e = std::getenv("GPURC_TEST_LIGHT");
  return e && *e && std::strcmp(e, "0") != 0;
}

// Edge values per type (canonical bits) mixed with random bits.
inline uint64_t pick_value(ir::Type t, std::mt19937_64& rng, bool shift_count = false) {
  using ir::Type;
  uint64_t m = ir::type_mask(t);
  if (shift_count) return rng() % 71;
  static const uint64_t f32_edges[] = {0, 0x80000000u, 1, 0x807FFFFFu, 0x00400000u, 0x00800000u, 0x7F800000u,
                                       0xFF800000u, 0x7FC00001u, 0x7F800001u, 0xFFC12345u, 0xFF800001u,
                                       0x3F800000u, 0xBFC00000u, 0x3F000000u, 0x4F000000u, 0xCF000000u,
                                       0x4EFFFFFFu, 0x7F7FFFFFu, 0x40200000u, 0x40600000u, 0xC0200000u,
                                       0x3F7FFFFFu, 0x5F800000u, 0x4B800001u};
  static const uint64_t f16_edges[] = {0, 0x8000, 1, 0x83FF, 0x0200, 0x0400, 0x7C00, 0xFC00, 0x7E01, 0x7C01,
                                       0xFE45, 0x3C00, 0xBE00, 0x3800, 0x7BFF, 0x4100, 0x4300, 0xC100, 0x3BFF};
  static const uint64_t f64_edges[] = {0, 0x8000000000000000ull, 1, 0x800FFFFFFFFFFFFFull, 0x0010000000000000ull,
                                       0x7FF0000000000000ull, 0xFFF0000000000000ull, 0x7FF8000000000001ull,
                                       0x7FF0000000000001ull, 0xFFF8123456789ABCull, 0x3FF0000000000000ull,
                                       0xBFF8000000000000ull, 0x41E0000000000000ull, 0xC1E0000000000000ull,
                                       0x43E0000000000000ull, 0x7FEFFFFFFFFFFFFFull, 0x4004000000000000ull,
                                       0x36A0000000000000ull, 0x47EFFFFFE0000000ull};
  unsigned r = unsigned(rng() % 100);
  if (r < 60) {
    switch (t) {
      case Type::F32: return f32_edges[rng() % std::size(f32_edges)];
      case Type::F16: return f16_edges[rng() % std::size(f16_edges)];
      case Type::F64: return f64_edges[rng() % std::size(f64_edges)];
      default: {
        unsigned w = ir::bit_width(t);
        uint64_t e[] = {0, 1, m, m >> 1, (m >> 1) + 1, 2, m - 1, uint64_t(rng() % 70)};
        (void)w;
        return e[rng() % std::size(e)] & m;
      }
    }
  }
  if (r < 75 && ir::is_float(t)) {  // small, exactly representable integers and halves
    double d = double(int(rng() % 41) - 20) * 0.5;
    if (t == Type::F32) {
      float fl = float(d);
      uint32_t b;
      std::memcpy(&b, &fl, 4);
      return b;
    }
    if (t == Type::F64) {
      uint64_t b;
      std::memcpy(&b, &d, 8);
      return b;
    }
  }
  return rng() & m;
}

// A warp state for a function: var slots, uniforms, frame.
struct State {
  std::vector<uint8_t> vars, uniforms;
  std::vector<uint8_t> frame;
  ir::WarpContext ctx;
};

inline void set_lane(std::vector<uint8_t>& vars, const ir::Function& f, uint32_t var, unsigned lane, uint64_t v) {
  unsigned lb = ir::lane_bytes(f.vars[var].type);
  std::memcpy(vars.data() + f.var_offset(var) + lane * lb, &v, lb);
}
inline uint64_t get_lane(const std::vector<uint8_t>& vars, const ir::Function& f, uint32_t var, unsigned lane) {
  unsigned lb = ir::lane_bytes(f.vars[var].type);
  uint64_t v = 0;
  std::memcpy(&v, vars.data() + f.var_offset(var) + lane * lb, lb);
  return v;
}

// Builder shorthands of the whole-function tests (control, loops).
inline ir::ValueId load_var(ir::Builder& b, uint32_t var) {
  return b.emit(ir::Opcode::LoadVar, b.func().vars[var].type, {}, 0, 0, var);
}
inline void store_var(ir::Builder& b, uint32_t var, ir::ValueId v) {
  b.emit(ir::Opcode::StoreVar, ir::Type::Void, {v}, 0, 0, var);
}
inline ir::ValueId phi(ir::Builder& b, ir::Type t, std::initializer_list<ir::ValueId> in) {
  return b.emit(ir::Opcode::Phi, t, in);
}
// G13's device_load / device_store address of a 4-byte element:
// (64-bit uniform at `uniform` & ~3) + zext(index) * 4.
inline ir::ValueId g13_element_address(ir::Builder& b, ir::ValueId index, uint32_t uniform) {
  const ir::ValueId base = b.and_(b.load_uniform(ir::Type::I64, uniform), b.i64(~uint64_t(3)));
  const ir::ValueId scaled =
      b.emit(ir::Opcode::Shl, ir::Type::I64, {b.zext(ir::Type::I64, index), b.i32(2)}, uint8_t(ir::ShiftMode::Mask));
  return b.binary(ir::Opcode::IAdd, base, scaled);
}

// Runs an executable to completion (resuming at barriers) on a copy of vars.
inline ir::RunStatus run_to_end(const ir::Executable& e, const ir::Function& f, std::vector<uint8_t>& vars,
                                const std::vector<uint8_t>& uniforms, uint32_t entry_mask, ir::WarpContext* out = nullptr,
                                int* barriers = nullptr) {
  std::vector<uint8_t> frame(e.frame_bytes() + 64);
  ir::WarpContext ctx;
  ctx.vars = vars.data();
  ctx.uniforms = uniforms.data();
  ctx.frame = frame.data();
  ctx.entry_mask = entry_mask;
  ir::RunStatus s;
  int n = 0;
  while ((s = e.run(ctx)) == ir::RunStatus::Barrier && n < 1000) ++n;
  if (barriers) *barriers = n;
  if (out) *out = ctx;
  return s;
}

}  // namespace gpurc::backend::test
