// Reference interpreter for PICA200 vertex and geometry shaders, written
// straight from the ISA description (docs/pica200.md), one vertex at a time.
// It is the oracle the JIT translation is compared against.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "frontend/pica200/shbin.h"
#include "ir/transc_pica.h"

namespace gpurc::pica {

// The float model lives in ir/ (shared with Transc::Pica); the frontend calls it fp::.
namespace fp = ir::pica_fp;

using Vec4 = std::array<float, 4>;

struct Program {
  std::vector<uint32_t> code;   // at most 4096 words (12-bit targets)
  std::vector<uint32_t> descs;  // operand descriptors, at most 128
};

struct Uniforms {
  std::array<Vec4, 96> f{};                      // c0-c95
  std::array<std::array<uint8_t, 4>, 4> i{};     // i0-i3: x = count, y = aL start, z = aL step
  uint16_t b = 0;                                // b0-b15, bit n = bn
  bool boolean(unsigned n) const { return (b >> (n & 15)) & 1; }
};

struct VertexState {
  std::array<Vec4, 16> v{};   // inputs
  std::array<Vec4, 16> o{};   // outputs
  std::array<Vec4, 16> r{};   // temporaries
  int32_t a0x = 0, a0y = 0;   // MOVA results
  uint8_t aL = 0;             // loop counter (8 bits, wraps)
  bool cmpx = false, cmpy = false;
};

// Geometry-shader emission state: SETEMIT latches (vertex id, primitive,
// winding); EMIT copies o0-o15 into the 4-entry vertex buffer at the vertex
// id and, with the primitive flag, emits the triangle buffer[0..2]. The
// buffer is not cleared between primitives.
struct GsPrimitive {
  std::array<std::array<Vec4, 16>, 3> vertices;
  bool winding = false;  // SETEMIT's inverted-winding flag
};
struct GsState {
  uint8_t vtxid = 0;
  bool prim = false, winding = false;
  std::array<std::array<Vec4, 16>, 4> buffer{};
  unsigned emits = 0;
  std::vector<GsPrimitive> primitives;
};

struct RunResult {
  bool ok = true;
  std::string fault;        // empty when ok
  uint32_t fault_addr = 0;  // word address of the faulting instruction
  uint64_t steps = 0;       // instructions executed
};

class Interpreter {
 public:
  static constexpr unsigned kCallDepth = 4, kIfDepth = 8, kLoopDepth = 4;
  Interpreter(const Program& p, const Uniforms& u, fp::Options opt = {}) : prog_(p), uni_(u), opt_(opt) {}

  // Runs from `entry` until END. `gs` is required by SETEMIT/EMIT (geometry
  // shaders); a budget of executed instructions guards against endless loops.
  RunResult run(uint32_t entry, VertexState& st, GsState* gs = nullptr, uint64_t budget = 1u << 22) const;

  // One vertex per state; stops at the first fault and reports its index in `failed`.
  RunResult run_batch(uint32_t entry, std::vector<VertexState>& states, size_t* failed = nullptr) const;

 private:
  const Program& prog_;
  const Uniforms& uni_;
  fp::Options opt_;
};

// The program of a SHBIN (shared by all its DVLEs).
Program program_of(const Shbin& s);
// Loads a DVLE's constant table (float24 constants widened to fp32) into `u`.
void load_constants(const Dvle& d, Uniforms& u);

// Geometry shader invocation helper: runs one invocation and then sets b15
// (the hardware sets b15 after each invocation so a shader can tell its first
// run from the following ones).
RunResult run_geometry_invocation(const Program& p, Uniforms& u, uint32_t entry, VertexState& st, GsState& gs,
                                  fp::Options opt = {});

}  // namespace gpurc::pica
