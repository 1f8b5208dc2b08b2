// Translation of G13 machine code to pre-SSA IR: everything the reference
// interpreter (interp.h) runs; see docs/g13.md "Translation to IR" for the
// list and the choices.
//
// Guest state layout (what a runner marshals; use the helpers below rather
// than repeating it):
// - var N = rN (I32, 32 lanes) for N in 0..127, always present.
// - vars 128.. : one I32 var "srK" per special register K that the program
//   reads with get_sr and that is not derived from the lane and exec mask
//   (derived: 52, 56-59, 63). In increasing K; special_var() finds them.
// - The uniform block is u0..u255 as little-endian halves (u-half i at byte
//   2*i), kUniformBytes bytes. It is read-only in the IR, so each uN that a
//   uniform_store of the program writes is an I32 var "uN" instead (after the
//   "srK" vars, in increasing N; uniform_var_reg() finds them): pack_vars
//   fills it from sg.uniforms in all lanes, every read of uN goes to it, and
//   unpack_vars copies it back (it stays the same in every launched lane).
// - Device memory: ir::Space::Global, byte addresses as the interpreter
//   computes them. Threadgroup memory: ir::Space::Shared, same addresses as
//   the interpreter. Both go through the same ir::GuestMemory the interpreter
//   is given.
// - Per-thread stack (stack_load/stack_store): ir::Space::Local at address
//   lane * kStackStride + offset (interp.h), as the interpreter accesses it.
//   Offsets outside [0, kStackStride) are sent to an address no memory backs
//   (so they fault OutOfBounds). StackMemory below serves that space, so the
//   JIT and the interpreter see the same stack bytes and the same bounds.
// - threadgroup_barrier is an IR barrier (the warp returns RunStatus::Barrier
//   and resumes on the next run with the same context), like the
//   interpreter's StepResult::Kind::Barrier.
//
// - What the interpreter reports as an error at run time (undefined operand
//   or condition in a lane that needs it, divergent ret/call register, return
//   to a non-instruction, shuffle/derivative reading an unlaunched lane) and
//   the trap instruction are IR traps: FaultKind::Trap, fault_code = the pc.
//
// - The execution mask is the I1 var "exec" (last): set from r0l == 0 by the
//   exec-stack instructions only, like the interpreter's SimdGroup::exec.
//
// The G13 exec mask is explicit: every instruction reads
// exec = entry_mask & var "exec" and writes its results through
// select(exec, new, old), so the IR's own divergence machinery only sees
// warp-uniform branches (jmp_exec_any/none, call/ret).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "frontend/g13/interp.h"
#include "ir/abi.h"
#include "ir/ir.h"

namespace gpurc::g13 {

constexpr uint32_t kUniformBytes = 1024;
constexpr uint32_t kNumGprVars = 128;

// What a runner promises about the state every SIMD-group starts in, which
// the translation may then assume.
struct TranslateOptions {
  // The var "exec" starts as ctx.entry_mask (the launched lanes): true for a
  // compute launch, whose registers start at zero (r0l = 0 enables every
  // launched lane). A program with no exec-stack instruction (none writes
  // "exec") then reads the entry mask instead of the var, which it neither
  // reads nor writes. A program with one starts the registers it writes at
  // zero and exec at every lane as constants, lets lanes that were not
  // launched compute like active ones (register writes select on exec
  // alone; the runner never reads those lanes: ir::Function::
  // unlaunched_lanes_free), so exec, r0l and counters stay uniform where
  // every lane computes them alike (a uniform jmp_exec_any loop then has
  // no vote after the pipeline: ir::fold_uniform_votes).
  bool exec_starts_launched = false;
  // With exec_starts_launched: nobody reads the SIMD-group's registers or
  // exec after the run (a launch without a finish callback observes only
  // memory). The registers and exec then become private to the run
  // (ir::Function::state_vars): they start as the constant zero (exec: the
  // launched lanes, or every lane as above), are never loaded from or stored
  // to the vars, and a register write in a program without exec-stack
  // instructions takes every lane (no select on the entry mask: lanes that
  // were not launched compute like active ones, and nothing observes them,
  // as above; ir::Function::unlaunched_lanes_free). The "uN" vars of
  // uniform_store stay state vars (they start as the uniform's value).
  bool registers_unobserved = false;
};

// False with `err` naming the first unsupported instruction and its pc.
bool translate(const uint8_t* code, size_t size, ir::Function& out, std::string& err,
               const TranslateOptions& options = {});

// The u-register held by var `var` (a "uN" var: the program writes uN with
// uniform_store), -1 for any other var.
int uniform_var_reg(const ir::Function& f, size_t var);

// Var index of special register `sr` in a translated function, -1 when the
// program does not read it through a var (never read, or derived).
int special_var(const ir::Function& f, unsigned sr);

// SimdGroup <-> the var area of a translated function (f.vars_bytes() bytes,
// layout from f.var_offset): r0..r127, the "srK" vars (from sg.special(); a
// missing entry packs as 0 -- the interpreter reports it as an error, so
// check missing_special() first), the "uN" vars (sg.uniforms) and "exec"
// (sg.exec). unpack_vars copies r0..r127 back for the launched lanes
// (sg.launched), the "uN" vars into sg.uniforms and "exec" into sg.exec.
void pack_vars(const SimdGroup& sg, const ir::Function& f, uint8_t* vars);
void unpack_vars(const uint8_t* vars, const ir::Function& f, SimdGroup& sg);

// The same marshalling for a runner that runs one translation many times:
// where each var lives and what it holds, worked out once (no name parsing
// or offset sums per SIMD-group). `used` = vars the function reads or writes
// (a get_var/set_var in a block); pack_vars(layout) fills only those and
// leaves the rest of the area as it is (the function never looks at them),
// unpack_vars(layout) copies back only the written ones. Same results as the
// Function overloads, which pack and unpack everything.
struct VarLayout {
  enum class Kind : uint8_t { Gpr, Special, Uniform, Exec, Other };
  struct Var {
    uint32_t offset = 0;  // Function::var_offset
    Kind kind = Kind::Other;
    uint32_t index = 0;   // rN / srK / uN
    bool read = false, written = false;
  };
  std::vector<Var> vars;
  uint32_t bytes = 0;  // Function::vars_bytes
};
VarLayout var_layout(const ir::Function& f);
void pack_vars(const SimdGroup& sg, const VarLayout& layout, uint8_t* vars);
void unpack_vars(const uint8_t* vars, const VarLayout& layout, SimdGroup& sg);
// pack_vars(layout) in two parts, for runners that start many SIMD-groups
// from states that differ only in the launched lanes/exec and the special
// registers: the registers and uniform vars it writes lie in
// `shared_var_ranges` (byte ranges [begin, end), coalesced), which can be
// packed once and copied; `pack_group_vars` writes the rest (exec, srK).
// Copying the ranges of one pack_vars result and then pack_group_vars(sg)
// gives the same bytes as pack_vars(sg) when the registers and uniforms agree.
std::vector<std::pair<uint32_t, uint32_t>> shared_var_ranges(const VarLayout& layout);
void pack_group_vars(const SimdGroup& sg, const VarLayout& layout, uint8_t* vars);
// Which vars of the translation `f` it can write (a set_var of the var
// anywhere), indexed by var. Passing that to unpack_vars skips the rest, whose
// var area still holds what pack_vars put there: the same as unpacking all.
std::vector<bool> written_vars(const ir::Function& f);
void unpack_vars(const uint8_t* vars, const ir::Function& f, SimdGroup& sg, const std::vector<bool>& written);
// First special register the function reads that sg lacks (has_special), -1 if none.
int missing_special(const SimdGroup& sg, const ir::Function& f);
// The uniform block (kUniformBytes) of a SimdGroup's u-registers.
void pack_uniforms(const SimdGroup& sg, uint8_t* uniforms);

// GuestMemory for a run of one SIMD-group: ir::Space::Local is its 32
// per-thread stacks of `bytes` each (lane = addr / kStackStride, offset =
// addr % kStackStride, bounded by `bytes`; 0 = no stack, every access
// refused); every other space is forwarded to `next` (may be null: refused).
// The stacks are owned here, zeroed by reset; reset to the same size again
// reuses them (no allocation).
class StackMemory final : public ir::GuestMemory {
 public:
  StackMemory() = default;
  StackMemory(ir::GuestMemory* next, uint64_t bytes) { reset(next, bytes); }
  void reset(ir::GuestMemory* next, uint64_t bytes);  // bytes <= kStackStride
  void set_next(ir::GuestMemory* next) { next_ = next; }
  uint64_t bytes() const { return bytes_; }
  uint8_t* lane_stack(unsigned lane) { return data_.data() + lane * bytes_; }
  const uint8_t* lane_stack(unsigned lane) const { return data_.data() + lane * bytes_; }
  bool access(Kind kind, ir::Space space, uint64_t addr, unsigned bytes, uint64_t* value,
              ir::AtomicOp op = ir::AtomicOp::Add, const uint64_t* compare = nullptr) override;
  uint8_t* translate(ir::Space space, uint64_t addr, uint64_t bytes) override;

 private:
  std::vector<uint8_t> data_;
  uint64_t bytes_ = 0;
  ir::GuestMemory* next_ = nullptr;
};

}  // namespace gpurc::g13
