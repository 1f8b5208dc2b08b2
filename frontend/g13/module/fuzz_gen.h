// Random G13 programs for differential fuzzing, and running one through
// rt::launch on the reference interpreter (g13::ReferenceExecutable) and on
// the translation (any IR engine: the campaign driver makes the executable).
//
// A program is one threadgroup of `threads` launched threads (1-64: one
// SIMD-group, full or partial, or two, the second possibly partial) that
// starts from the state a replay launch of grid [1], block [threads] gives:
// zero registers, the special registers of that launch, the uniform registers,
// zeroed threadgroup memory of `shared_bytes` and one device buffer of
// kGlobalSize bytes at kGlobalBase (fuzz/ir_gen.h), u0_u1 pointing at it. So
// every program is also a replay file (g13_replay_text), which is how
// reproducers are saved. SIMD-groups run in turn up to their next
// threadgroup_barrier (rt::launch's rounds, as in launch.h).
//
// Layout of a program:
// - prologue: r118 = thread_index_in_simdgroup, r123 =
//   thread_index_in_threadgroup, r1..r117 = random 32-bit values (special
//   floats and integers), some of them mixed with the lane index;
// - body: random instructions of every encoding-table descriptor the
//   translator and the interpreter accept (random bits from
//   g13::random_instruction; destinations never r0 or r118-r127), nested
//   if/else regions, bounded while loops with breaks through r0l,
//   jmp_exec_none skips, in-bounds device loads/stores (per-thread
//   elements), uniform_store of u2..u255 with reads of the stored register,
//   and threadgroup exchanges at the top level (store to the thread's own
//   slot, threadgroup_barrier, load another thread's slot, also across
//   SIMD-groups; each exchange has its own slots);
// - stop.
// Reserved registers: r0l (exec-mask stack), r118 (lane), r119 (memory index),
// r120-r122 (loop counters by depth), r123 (thread index), r124-r125
// (threadgroup slots).
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "frontend/g13/interp.h"
#include "ir/abi.h"
#include "ir/ir.h"
#include "isa/fuzz_values.h"
#include "isa/rng.h"

namespace gpurc::fuzz {

struct G13FuzzProgram {
  std::vector<uint8_t> code;
  uint32_t threads = 32;                  // threads of the threadgroup, 32 per SIMD-group
  std::array<uint16_t, 512> uniforms{};   // u-halves; u0_u1 = kGlobalBase
  std::vector<uint8_t> memory;            // kGlobalSize bytes at kGlobalBase
  uint32_t shared_bytes = 0;              // threadgroup memory (Space::Shared at 0)
  unsigned groups() const { return (threads + 31) / 32; }
};

// `exclude`: descriptor names the random-instruction part must not use (to
// keep a known, reported translator bug from masking everything else).
G13FuzzProgram generate_g13_program(Rng& rng, const std::vector<std::string>& exclude = {});

// Descriptor names the random-instruction part of the generator draws from
// (the table's descriptors of which random encodings pass the checks).
std::vector<std::string> g13_fuzz_descriptors();

// The state SIMD-group `warp` of a program starts from (registers zero,
// specials of a grid [1] x block [threads] launch, uniforms).
g13::SimdGroup g13_initial_group(const G13FuzzProgram& p, unsigned warp = 0);

struct G13Outcome {
  std::string error;                  // could not run (translation, compile, interpreter error)
  bool fault = false;
  std::string fault_text;
  std::vector<g13::SimdGroup> groups; // final registers (launched lanes) and uniforms per SIMD-group
  std::vector<uint8_t> memory;
};

G13Outcome run_g13_reference(const G13FuzzProgram& p);
// The translation (pre-SSA, as g13::translate made it: its var layout is the
// guest state's) run by `exe` (any IR engine), whose function has
// `vars_bytes` of vars.
G13Outcome run_g13_translated(const G13FuzzProgram& p, const ir::Function& translation, uint32_t vars_bytes,
                              const ir::Executable& exe);
// "" if equal, else the first difference (register half and thread, u-half,
// or memory byte).
std::string compare_g13(const G13FuzzProgram& p, const G13Outcome& ref, const G13Outcome& got);

// The program as a g13 replay file (code as bytes, expect = the reference's
// memory and registers r1..r127 of every thread).
std::string g13_replay_text(const G13FuzzProgram& p, const G13Outcome& ref, const std::string& name,
                            const std::string& note);

}  // namespace gpurc::fuzz

