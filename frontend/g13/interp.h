// Reference interpreter for G13 machine code: one SIMD-group of 32 threads,
// executed instruction by instruction straight from the decoded bytes. It is
// the oracle the JIT path is checked against, so it favours being obviously
// right over being fast. Semantics: g13-encodings.md §4 and the seed's
// pseudocode; every choice beyond them is listed in docs/g13.md.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "frontend/g13/g13.h"
#include "ir/abi.h"

namespace gpurc::g13 {

// Per-thread stack (stack_load/stack_store): ir::Space::Local at address
// lane * kStackStride + offset, offset < kStackStride (the most stack bytes a
// thread can have). The interpreter and the translation both access it there,
// so one GuestMemory (StackMemory in translate.h, or a launch's stacks) serves both.
constexpr uint64_t kStackStride = 1ull << 20;

// Architectural state of one SIMD-group. Plain data (trivially copyable and
// destructible, no heap): a launch can keep it in a warp's var area.
struct SimdGroup {
  static constexpr unsigned kLanes = 32;
  // r0..r127 as 16-bit halves: half 2N = rNl, 2N+1 = rNh; [half][lane].
  std::array<std::array<uint16_t, kLanes>, 256> regs{};
  std::array<uint16_t, 512> uniforms{};  // u0..u255 as halves
  uint32_t launched = 0xFFFFFFFFu;        // lanes that exist (partial SIMD-groups)
  uint32_t exec = 0xFFFFFFFFu;            // current execution mask (always within `launched`)
  uint64_t pc = 0;
  // Special registers other than the ones derived from the exec mask
  // (52, 56-59, 63), per lane; reading one that is not set is an error.
  std::array<std::array<uint32_t, kLanes>, 256> special_values{};
  std::array<uint64_t, 4> special_set{};  // bit sr: special register sr has a value

  bool has_special(unsigned sr) const { return sr < 256 && (special_set[sr / 64] >> (sr % 64) & 1); }
  const std::array<uint32_t, kLanes>& special(unsigned sr) const { return special_values[sr & 255]; }
  // Gives special register `sr` (< 256) a value: the returned lanes.
  std::array<uint32_t, kLanes>& set_special(unsigned sr) {
    special_set[(sr & 255) / 64] |= uint64_t(1) << (sr % 64);
    return special_values[sr & 255];
  }
  void clear_specials() { special_set = {}; }

  uint32_t r32(unsigned reg, unsigned lane) const {
    return uint32_t(regs[2 * reg][lane]) | (uint32_t(regs[2 * reg + 1][lane]) << 16);
  }
  void set_r32(unsigned reg, unsigned lane, uint32_t v) {
    regs[2 * reg][lane] = uint16_t(v);
    regs[2 * reg + 1][lane] = uint16_t(v >> 16);
  }
  uint32_t u32(unsigned reg) const { return uint32_t(uniforms[2 * reg]) | (uint32_t(uniforms[2 * reg + 1]) << 16); }
  void set_u32(unsigned reg, uint32_t v) {
    uniforms[2 * reg] = uint16_t(v);
    uniforms[2 * reg + 1] = uint16_t(v >> 16);
  }
  void set_u64(unsigned reg, uint64_t v) {
    set_u32(reg, uint32_t(v));
    set_u32(reg + 1, uint32_t(v >> 32));
  }
  // exec from the r0l nesting counters (lanes with r0l == 0), within `launched`.
  void recompute_exec();
};
static_assert(std::is_trivially_copyable_v<SimdGroup> && std::is_trivially_destructible_v<SimdGroup>);

struct StepResult {
  enum class Kind { Running, Done, Barrier, Fault, Error };
  Kind kind = Kind::Running;
  std::string message;         // Fault/Error: what happened, naming the instruction and pc
  ir::FaultKind fault = ir::FaultKind::None;
  uint64_t fault_addr = 0;
  uint32_t fault_lane = 0;
};

// The form of uniform_store that is modelled (format i16, immediate index
// O): `halves` register halves from half `reg_half` (16-bit units: R) of the
// first active thread go to the u-halves from `u_half` (O) on. The
// interpreter and the translation both read an instruction through this.
struct UniformStoreShape {
  std::string unmodelled;  // non-empty: why this encoding is not modelled
  unsigned reg_half = 0, halves = 0;
  uint64_t u_half = 0;
  // Every half inside r0l..r127h and u0l..u255h (otherwise the store is an
  // error as soon as a thread is active).
  bool in_range() const { return reg_half + halves <= 256 && u_half + halves <= 512; }
};
UniformStoreShape uniform_store_shape(const Insn& in);

// The error for convert rounding modes 2 and 3 (interpreter and translation).
std::string convert_round_unmodelled(unsigned round);
// The error for a store or threadgroup access (`what`) with packed format `f`.
std::string packed_access_unmodelled(const std::string& what, unsigned f);

class Interpreter {
 public:
  // `code` is the program (byte offset 0 = pc 0). Memory accesses of device
  // (Space::Global), threadgroup (Space::Shared) and stack (Space::Local,
  // kStackStride) memory go to `memory`.
  Interpreter(std::vector<uint8_t> code, ir::GuestMemory* memory);
  // Executes one instruction at sg.pc.
  StepResult step(SimdGroup& sg);
  // The memory of the next steps (e.g. another SIMD-group's stacks in front of the same device memory).
  void set_memory(ir::GuestMemory* memory) { memory_ = memory; }
  // Runs until stop, a barrier (pc is past it: call run again to resume), a
  // fault, an error, or `max_steps` instructions (a Watchdog fault).
  StepResult run(SimdGroup& sg, uint64_t max_steps = 1u << 24);

 private:
  const Insn* fetch(uint64_t pc, std::string& err);
  std::vector<uint8_t> code_;
  ir::GuestMemory* memory_;
  std::map<uint64_t, Insn> decoded_;
};

}  // namespace gpurc::g13
