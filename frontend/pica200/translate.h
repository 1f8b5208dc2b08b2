// Translation of a PICA200 shader to pre-SSA IR: 32 vertices per warp, one
// lane per vertex, every register component its own F32 var (structure of
// arrays), so swizzles and write masks are compile-time renaming.
//
// The var / uniform / emit-record layout and the state marshalling (the
// launch ABI) are in abi.h.
#pragma once
#include <cstdint>
#include <string>

#include "frontend/pica200/abi.h"
#include "frontend/pica200/interp.h"
#include "ir/ir.h"

namespace gpurc::pica {

// How the CALL/IF/LOOP stacks are translated (docs/pica200.md, "Control flow").
enum class StackMode : uint8_t {
  Auto,     // Static, or Runtime when the static expansion exceeds kMaxStaticStates
  Static,   // expanded at translate time: (address, stack contents) -> IR blocks; fails past the cap
  Runtime,  // per-lane stack vars and a dispatch on a per-lane pc var; any valid program
};
constexpr uint32_t kMaxStaticStates = 1u << 15;
// ... or when the static translation's IR exceeds this many instructions and
// has more than two states per address (each state carries its
// instruction's code, e.g. ~500 ops for a relative c read: 32768 such states
// made the pipeline's CSE take many minutes).
constexpr size_t kMaxStaticInsts = 200000;

struct TranslateOptions {
  uint32_t entry = 0;      // word address where execution starts
  bool geometry = false;   // SETEMIT/EMIT allowed (geometry shader)
  fp::Options fp;          // same options the reference interpreter gets
  StackMode stacks = StackMode::Auto;
  // The draw contract (vertex shaders, static stacks; fourteenth session):
  // the code runs only from a fresh unit (temporaries, a0, aL and cmp start
  // at zero, as DrawState's draws start them) and nobody reads those
  // registers after the run, only the o-registers. They then become private
  // to the run (ir::Function::state_vars = kVarTemp): a read before any
  // write reads the zero stated at the entry, and nothing stores them at
  // the exit. run_vertices, which hands back whole VertexStates, refuses a
  // shader translated so (docs/pica200.md, "Issue 13, fourteenth session:
  // the loop shader"). A program the static expansion cannot translate
  // falls back to runtime stacks and keeps the full state.
  bool draw_only = false;
};

// False with `err` only for a program over the size limits (4096 words, 128
// descriptors), or with StackMode::Static when the static expansion exceeds
// kMaxStaticStates (an error naming the address).
// Where the interpreter faults at run time (an invalid opcode, running past
// the end, ...) the translation traps instead: see TrapReason below.
bool translate(const Program& p, const TranslateOptions& opt, ir::Function& out, std::string& err);

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
  EmitOverflow = 8,  // more than kEmitMaxPerInvocation EMITs in one invocation (a JIT limit)
};
uint64_t trap_code(TrapReason r, uint32_t addr);
std::string describe_trap(uint64_t code);

}  // namespace gpurc::pica
