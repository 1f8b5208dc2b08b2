// The G13 launch ABI: running a G13 program on a grid of threadgroups of
// SIMD-groups through rt::launch, on the reference interpreter
// (g13::ReferenceExecutable, for the reference engine) or a translation
// compiled by an engine (g13::translate -> EngineHandle::compile). The replay
// handler, `gpurc bench` and the tests share it, so every engine sees the
// same launch: the same special registers, threadgroup memory, per-thread
// stacks (Space::Local, g13::kStackStride apart) and barriers.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "frontend/g13/interp.h"
#include "isa/module.h"
#include "runtime/launch.h"
#include "runtime/memory.h"

namespace gpurc {

struct G13Launch {
  std::vector<uint8_t> code;     // the whole program; pc 0 = byte 0
  uint64_t entry = 0;            // byte offset where every SIMD-group starts
  rt::Dim3 grid, block;          // threadgroups, threads per threadgroup (x-major, 32 per SIMD-group)
  uint64_t shared_bytes = 0;     // threadgroup memory per threadgroup (Space::Shared at 0)
  uint64_t stack_bytes = 0;      // per-thread stack for stack_load/stack_store
  std::array<uint16_t, 512> uniforms{};  // u0..u255 as halves (u-half 2N = low half of uN)
  int64_t budget = int64_t(1) << 34;     // per SIMD-group and run slice: interpreter steps / IR budget units
  bool warp_loop = true;         // JIT: full SIMD-groups through the engine's warp loop when it has one (rt::LaunchConfig::warp_loop)
  bool grid_loop = true;         // JIT: with the warp loop, many threadgroups per call when they are whole SIMD-groups (rt::LaunchConfig::grid_loop)
};

struct G13Result {
  std::string error;                    // nothing ran, or an instruction the engine cannot run (names it and its pc)
  std::optional<rt::LaunchFault> fault; // a guest fault stopped the launch (lowest faulting threadgroup)
  std::string fault_message;            // the fault in words (the interpreter names instruction and pc)
  double compile_us = 0, run_us = 0;
  uint64_t lane_instructions = 0;       // interpreter with count_instructions: sum of active lanes per instruction
  bool ok() const { return error.empty() && !fault; }
};

// Called once per SIMD-group after it finished, with its final state (registers
// of launched lanes; exec recomputed). Calls may come from several threads.
using G13Finish = std::function<void(const rt::WarpInfo&, const g13::SimdGroup&)>;

// Special registers a launch provides besides the lane/exec-derived ones:
// threadgroup_position_in_grid (0-2), threads_per_threadgroup (4-6),
// dispatch_threads_per_threadgroup (8-10), core_index (20, 0), vm_slot (21, 0),
// thread_position_in_threadgroup (48-50), thread_index_in_threadgroup (51),
// simdgroup_index_in_threadgroup (53), thread_position_in_grid (80-82).
void g13_fill_special(const rt::Dim3& grid, const rt::Dim3& block, const rt::WarpInfo& w, g13::SimdGroup& sg);
// One of them for the SIMD-group `w` of a threadgroup of size `block`;
// false (out untouched) for a register a launch does not provide.
bool g13_special(const rt::Dim3& block, const rt::WarpInfo& w, unsigned sr, std::array<uint32_t, 32>& out);

// Runs every threadgroup through rt::launch (on `threads` host threads; 0 =
// all cores, 1 = the caller only): the reference engine runs the
// interpreter, any other compiles the translation.
G13Result run_g13(const G13Launch& launch, const isa::EngineHandle& engine, rt::Memory& memory, unsigned threads,
                  const G13Finish& finish = {}, bool count_instructions = false);

// The reference engine (the interpreter) as a handle, for callers that
// run the interpreter whatever engine they were given (instruction counts).
const isa::EngineHandle& g13_reference_engine();

}  // namespace gpurc
