// The launch ABI of translated Tesla code: the layout of a translated
// function's guest state, uniform block and memory spaces (translate.h
// produces it), and the functions that pack and unpack it. It is the contract
// between the translator, the runners (replay, examples, bench, public API)
// and the fuzzer: state moves in and out of WarpContext::vars / uniforms only
// through the functions declared here; guest_memory.h serves the memory map
// from the interpreter's buffers.
//
// Guest state (Function::vars): only the state the code reads or writes has
// a var (every warp's vars are zeroed, loaded and stored per launch, so all
// of it would cost ~20 KiB per warp), found by name with state_var():
//   "r0".."r127"     $r, I32
//   "a1".."a7"       $a, I32 holding the 16-bit value ($a0 reads 0)
//   "c0z" "c0s" "c0c" "c0o" .. "c3o"   $c flags Z S C O (bits 0..3 of $cN), I1 each
//   "exited"         I32, 1 once the thread has exited (exit, ret on an empty stack)
//   "ctaid"          I32, ctaid.x | ctaid.y << 16 of the thread's block
//   "local_base"     I64, Space::Local address of the thread's l[0]
//   "abi_writer"     I32, 1 for the single thread per block that stores the
//                    launch ABI block (s[0x0 .. 0x10+params)) before anything
//                    else runs; 0 for every other thread and in run_with mode.
//                    (tid 0 is in warp 0, which rt::launch runs first.)
//   "attr_base"      I64, Space::Local address of the thread's a[0] (vertex/
//                    geometry programs, or any program with an o[] destination)
//   "barrier"        I32, written right before each IR `barrier` terminator
//                    (any `bar`): the barrier's ir::barrier_word (ir/barrier_word.h:
//                    id, arrive / wait, warp count) and the lane's stop count, for the
//                    runtime's counted-barrier scheduler (runtime/barrier.h).
//                    A runner passes its offset (barrier_slot) as
//                    rt::LaunchConfig::barrier_var.
// then private vars of the translation (call/break stack). State without a
// var is never read or written by the code: it keeps its initial value.
//
// Uniform block (WarpContext::uniforms, Function::uniform_bytes =
// uniform_bytes(options)): the image of s[0x0 .. 0x10 + param_bytes) the
// launch ABI writes (u16: 0, ntid.x, ntid.y, ntid.z, nctaid.x, nctaid.y, then
// ctaid.x/ctaid.y slots that the writer fills from "ctaid", then params).
// Present only with TranslateOptions::launch_abi.
//
// Memory spaces (all addresses I64):
//   g<i>[a]  ir::Space::Global at (i << 32) + a   (a = $rN, 32 bits)
//   c<i>[a]  ir::Space::Const  at (i << 32) + a   (a 16 bits, wrapped as the interpreter does)
//   s[a]     ir::Space::Shared at a               (per block, smem bytes)
//   l[a]     ir::Space::Local  at local_base + a; a + bytes > lmem goes to
//            kUnbackedAddress instead, so it faults like the interpreter.
//   a[a]     ir::Space::Local  at attr_base + a            (per-thread inputs)
//   o[a]     ir::Space::Local  at attr_base + kOutDelta + a (per-thread outputs)
//            a + bytes > attr_bytes goes to kUnbackedAddress; a 16-bit o[]
//            destination stores its value twice into the aligned word.
// Misaligned accesses also go to kUnbackedAddress (the interpreter faults
// OutOfBounds for them). TeslaMemory (guest_memory.h) serves these spaces
// from a LaunchMemory + shared + per-thread local vectors, i.e. the same bytes
// the interpreter uses.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "frontend/tesla/interp.h"
#include "ir/abi.h"
#include "ir/ir.h"

namespace gpurc::tesla {

// The flag letters of the $c vars ("c0z" .. "c3o"), bits 0..3 of $cN.
constexpr char kFlagNames[4] = {'z', 's', 'c', 'o'};

// Index of the state var `name` (see above) in a translated function, or
// kNoStateVar when the code does not touch that state.
constexpr uint32_t kNoStateVar = ~0u;
uint32_t state_var(const ir::Function& f, const std::string& name);

// Address no TeslaMemory / rt::Memory buffer backs: accesses there fault.
constexpr uint64_t kUnbackedAddress = ~0ull - 0xffff;
// Default distance between two threads' l[] in Space::Local (TeslaMemory's
// layout: thread t's l[] at t * kLocalStride). l[] addresses are 16-bit.
constexpr uint64_t kLocalStride = 0x10000;

// a[]/o[] in Space::Local (TeslaMemory's layout: thread t's a[] at
// kAttrBase + t * kLocalStride, its o[] kOutDelta above). a[]/o[] offsets are
// 16-bit, so any stride of at least attr_bytes works for a runner.
constexpr uint64_t kAttrBase = uint64_t(1) << 40;
constexpr uint64_t kOutDelta = uint64_t(1) << 39;

constexpr uint64_t global_address(unsigned idx, uint32_t a) { return uint64_t(idx & 15) << 32 | a; }
constexpr uint64_t const_address(unsigned idx, uint32_t a) { return uint64_t(idx & 15) << 32 | a; }

// Trap codes (WarpContext::fault_code of FaultKind::Trap): kind << 24 | word address.
enum TrapKind : uint32_t {
  kTrapInsn = 1,            // the trap instruction
  kTrapPastEnd = 2,         // execution ran past the end of the code
  kTrapStackOverflow = 3,   // more than 16 call/breakaddr entries on a lane's stack
  kTrapNoBreak = 4,         // break without a breakaddr entry
  kTrapBadTarget = 5,       // branch/return address outside the code
  kTrapDecode = 6,          // an instruction check() refuses (ILLEGAL_OPCODE, ...)
};
// "trap instruction at word 0x12", etc.
std::string describe_trap(uint64_t code);

// ---- marshalling (vars area: f.vars_bytes() bytes, zero it first)
// The launch ABI uniform block for `cfg` (ctaid slots zero: they come from "ctaid").
std::vector<uint8_t> pack_uniforms(const BlockConfig& cfg);
// Thread `tid` (x, y, z) of block `ctaid` (x, y) in lane `lane` of the vars
// area: $r0 = tid.x | tid.y << 16 | tid.z << 26, ctaid, local_base, and
// abi_writer = (tid == 0) (those of them that have a var).
void init_launch_lane(const ir::Function& f, uint8_t* vars, unsigned lane, const unsigned tid[3],
                      const unsigned ctaid[2], uint64_t local_base);
// The var offsets computed once per function (launch_slots), for launch
// loops: Function::var_offset walks every earlier var. kNoSlot for state
// without a var.
// The words of one thread's $r0 (tid.x | tid.y << 16 | tid.z << 26) and packed ctaid.
uint32_t launch_r0(const unsigned tid[3]);
uint32_t launch_ctaid(const unsigned ctaid[2]);
struct LaunchSlots {
  static constexpr uint32_t kNoSlot = ~0u;
  uint32_t r0 = kNoSlot, ctaid = kNoSlot, local_base = kNoSlot, abi_writer = kNoSlot;
};
LaunchSlots launch_slots(const ir::Function& f);
void init_launch_lane(const LaunchSlots& s, uint8_t* vars, unsigned lane, const unsigned tid[3],
                      const unsigned ctaid[2], uint64_t local_base);
// A whole warp of a launch: lane l (l < lanes) is thread tid[l] of block
// `ctaid`, its l[] at local_base + l * local_stride.
void init_launch_warp(const LaunchSlots& s, uint8_t* vars, unsigned lanes, const unsigned (*tid)[3],
                      const unsigned ctaid[2], uint64_t local_base, uint64_t local_stride);
// The same for a warp in one row of its block: lane l is thread
// (tid0[0] + l, tid0[1], tid0[2]).
void init_launch_warp_row(const LaunchSlots& s, uint8_t* vars, unsigned lanes, const unsigned tid0[3],
                          const unsigned ctaid[2], uint64_t local_base, uint64_t local_stride);
// Offset of "attr_base" in the vars area, or LaunchSlots::kNoSlot when the
// code touches no a[]/o[]. init_attr_warp sets lane l (l < lanes) to
// attr_base + l * stride.
uint32_t attr_slot(const ir::Function& f);
// Byte offset of the "barrier" var (LaunchSlots::kNoSlot when the code has no `bar`).
uint32_t barrier_slot(const ir::Function& f);
void init_attr_warp(uint32_t slot, uint8_t* vars, unsigned lanes, uint64_t attr_base, uint64_t stride);
// Explicit initial state (the interpreter's run_with): $r, $a, $c, exited
// (those with a var); no ABI.
void init_state_lane(const ir::Function& f, uint8_t* vars, unsigned lane, const ThreadState& st,
                     uint64_t local_base);
// Reads lane `lane` back: $r, $a, $c, exited. State without a var (the code
// never touches it) keeps its value in `out`: start `out` from the thread's
// initial state.
void read_lane(const ir::Function& f, const uint8_t* vars, unsigned lane, ThreadState& out);

}  // namespace gpurc::tesla
