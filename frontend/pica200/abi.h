// The PICA200 launch ABI: where a vertex's state lives in a warp's var area
// and uniform block, where a geometry shader's emissions go in guest memory,
// and the marshalling between VertexState / GsState and those places.
//
// This layout is the contract between the translator (translate*.cpp), the
// runners (frontend/pica200/module/launch.*, the public API) and the fuzzer: state
// moves in and out of WarpContext::vars only through pack_lanes /
// unpack_lanes (abi.cpp).
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "frontend/pica200/interp.h"
#include "ir/ir.h"

namespace gpurc::pica {

// ---- vars (Function::vars, in this order; translate may append private vars)
constexpr uint32_t kVarInput = 0;     // v0..v15: var kVarInput + 4*n + component (x=0..w=3), F32
constexpr uint32_t kVarOutput = 64;   // o0..o15, F32
constexpr uint32_t kVarTemp = 128;    // r0..r15, F32
constexpr uint32_t kVarA0X = 192;     // I32
constexpr uint32_t kVarA0Y = 193;     // I32
constexpr uint32_t kVarAL = 194;      // I32 (low 8 bits meaningful)
constexpr uint32_t kVarCmpX = 195;    // I1
constexpr uint32_t kVarCmpY = 196;    // I1
constexpr uint32_t kNumStateVars = 197;
// Private vars the translation appends: the LOOP iteration counters (one per
// depth), then, for a geometry shader only, the emission state.
constexpr uint32_t kVarLoopRemaining = 197;  // 4 vars, I32
constexpr uint32_t kVarEmitLatch = 201;      // I32: SETEMIT's latch, an emit header word (below)
constexpr uint32_t kVarEmitCount = 202;      // I32: EMITs executed so far in this invocation
// StackMode::Runtime appends its stack vars after these (names "pc", "call0.end", ...).

// ---- geometry shader emit records (guest memory, Space::Global)
// Every EMIT stores one record: a header (the latched SETEMIT state) and
// o0..o15 as EMIT saw them. The 4-entry vertex buffer and the primitives are
// rebuilt from the records by unpack_emits, in the order the lane executed
// them, so the JIT code carries no buffer. The area holds `capacity` records
// per lane (the u32 at kUniformEmitCapacity of the uniform block): lane L of a
// warp writes record k at kEmitBase + (L * capacity + k) * kEmitRecordBytes;
// EMIT number capacity + 1 traps (TrapReason::EmitOverflow), and the launch
// (run_geometry) then runs the batch again with a larger area, so any number
// of EMITs the interpreter runs runs on every engine.
constexpr uint64_t kEmitBase = 0x10000000;     // guest address of lane 0's first record
constexpr uint32_t kEmitMaxPerInvocation = 64;  // the default capacity (pack_uniforms)
constexpr uint32_t kEmitCapacityLimit = uint32_t(1) << 16;  // run_geometry grows the area up to this
constexpr uint32_t kEmitHeaderBytes = 16;      // u32 header word, 12 bytes unused (keeps o0 16-aligned)
constexpr uint32_t kEmitRecordBytes = kEmitHeaderBytes + 16 * 16;  // + o0.x, o0.y, ... o15.w as f32
constexpr uint64_t kEmitLaneStride = uint64_t(kEmitMaxPerInvocation) * kEmitRecordBytes;  // default capacity
constexpr uint64_t kEmitWarpBytes = kEmitLaneStride * ir::kWarpLanes;
constexpr uint64_t emit_warp_bytes(uint32_t capacity) { return uint64_t(capacity) * kEmitRecordBytes * ir::kWarpLanes; }
// Header word: vertex id (bits 0-7), primitive flag (bit 8), winding flag (bit 9).
constexpr uint32_t emit_header(uint32_t vtxid, bool prim, bool winding) {
  return (vtxid & 0xFF) | (uint32_t(prim) << 8) | (uint32_t(winding) << 9);
}

// ---- uniform block (WarpContext::uniforms)
constexpr uint32_t kUniformFloat = 0;     // c0..c95: 16 bytes each, x y z w as f32
constexpr uint32_t kUniformInt = 1536;    // i0..i3: 16 bytes each, x y z w as u32
constexpr uint32_t kUniformBool = 1600;   // u32, bit n = bn
constexpr uint32_t kUniformEmitCapacity = 1616;  // u32: EMIT records per lane of the emit area
constexpr uint32_t kUniformBytes = 1632;
std::vector<uint8_t> pack_uniforms(const Uniforms& u);

// Which VertexState fields go into / come out of which var slots.
struct LaneMap {
  // A whole register (v, o or r): its four component vars and its Vec4.
  struct Quad {
    std::array<uint32_t, 4> var_offset;  // byte offsets of the x, y, z, w vars (lane 0)
    uint32_t state_offset;               // byte offset of the Vec4 in VertexState
  };
  // a0.x, a0.y, aL, cmp.x, cmp.y.
  struct Slot {
    uint32_t var_offset;
    uint32_t state_offset;
    uint8_t kind;  // 0: i32, 1: u8 (aL), 2: bool (cmp flags)
  };
  // Packed before a warp / unpacked after it. Registers move whole (a
  // component the code does not touch goes out as it came in).
  std::vector<Quad> in4, out4;
  std::vector<Slot> in, out;
  // Every state var both ways.
  static LaneMap all(const ir::Function& f);
  // Only what the code touches: in = vars it reads or writes (a write on some
  // paths keeps the entry value on the others), out = vars it writes. Fields
  // outside `out` keep their value in the states, as they would in the var area.
  static LaneMap used(const ir::Function& f);
};
// Moves states[0 .. n) (n <= 32) into / out of a warp's var area; `mask`
// gets one bit per vertex.
void pack_lanes(const LaneMap& m, const VertexState* states, size_t n, uint8_t* vars, uint32_t& mask);
void unpack_lanes(const LaneMap& m, const uint8_t* vars, VertexState* states, size_t n);
// The same for states[first .. first+32) (fewer at the end), every state var.
void pack_lanes(const ir::Function& f, const std::vector<VertexState>& states, size_t first, uint8_t* vars,
                uint32_t& mask);
void unpack_lanes(const ir::Function& f, const uint8_t* vars, size_t first, std::vector<VertexState>& states);
// Geometry shaders: after a warp of states[first .. first+32) ran to the end,
// rebuilds gs[first + lane] (buffer, emits, primitives, the SETEMIT latch) from
// the emit counter and latch vars and the warp's record area `records`
// (emit_warp_bytes(capacity) bytes, the host copy of guest memory from kEmitBase;
// `capacity` is the records per lane the launch's uniform block gave).
// gs[k] must be fresh (GsState{}) as the interpreter's would be. At most
// `lanes` lanes are read.
void unpack_emits(const ir::Function& f, const uint8_t* vars, const uint8_t* records, size_t first,
                  std::vector<GsState>& gs, size_t lanes = ir::kWarpLanes, uint32_t capacity = kEmitMaxPerInvocation);

}  // namespace gpurc::pica
