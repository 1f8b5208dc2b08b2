// Translation of a PICA200 shader to pre-SSA IR: 32 vertices per warp, one
// lane per vertex, every register component its own F32 var (structure of
// arrays), so swizzles and write masks are compile-time renaming.
//
// The layout below is the contract between the translator, the runners
// (recompiler/pica200_run.*, the public API) and the fuzzer: state moves in
// and out of WarpContext::vars only through pack_lanes / unpack_lanes.
#pragma once
#include <cstdint>
#include <string>
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

// ---- uniform block (WarpContext::uniforms)
constexpr uint32_t kUniformFloat = 0;     // c0..c95: 16 bytes each, x y z w as f32
constexpr uint32_t kUniformInt = 1536;    // i0..i3: 16 bytes each, x y z w as u32
constexpr uint32_t kUniformBool = 1600;   // u32, bit n = bn
constexpr uint32_t kUniformBytes = 1616;
std::vector<uint8_t> pack_uniforms(const Uniforms& u);

struct TranslateOptions {
  uint32_t entry = 0;      // word address where execution starts
  bool geometry = false;   // SETEMIT/EMIT allowed (geometry shader)
  fp::Options fp;          // same options the reference interpreter gets
};

// False with `err` naming the instruction and its address for code the
// translator cannot handle (an invalid opcode, a target outside the program).
bool translate(const Program& p, const TranslateOptions& opt, ir::Function& out, std::string& err);

// Moves states[first .. first+32) (fewer at the end) into / out of the var
// area of a translated function `f`; `mask` gets one bit per present vertex.
void pack_lanes(const ir::Function& f, const std::vector<VertexState>& states, size_t first, uint8_t* vars,
                uint32_t& mask);
void unpack_lanes(const ir::Function& f, const uint8_t* vars, size_t first, std::vector<VertexState>& states);

// ---- runtime faults of translated code
// Where the reference interpreter faults (an invalid word, running past the
// end, a missing operand descriptor, a stack overflow, SETEMIT/EMIT in a
// vertex shader), translated code executes `trap` with code
// trap_code(reason, address); describe_trap turns it into the interpreter's message.
enum class TrapReason : uint32_t {
  InvalidInstruction = 1,
  PastEnd = 2,
  MissingDescriptor = 3,
  CallOverflow = 4,
  IfOverflow = 5,
  LoopOverflow = 6,
  EmitOutsideGeometry = 7,
};
uint64_t trap_code(TrapReason r, uint32_t addr);
std::string describe_trap(uint64_t code);

}  // namespace gpurc::pica
