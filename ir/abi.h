// How a compiled or interpreted IR function runs on one warp: the contract
// between ir (interpreter), the backends and runtime. Plain data, C layout,
// because JIT code reads these fields at fixed offsets.
#pragma once
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "ir/types.h"

namespace gpurc::ir {

// `n` rounded up to a multiple of 64 bytes: var slots, frames, uniform blocks
// and the per-warp strides of a launch are 64-byte aligned, because engines
// read them with aligned 64-byte vector loads.
constexpr size_t align64(size_t n) { return (n + 63) & ~size_t(63); }

enum class RunStatus : uint32_t {
  Done = 0,      // reached return
  Barrier = 1,   // stopped at a barrier; call again (with the same context) to resume
  Fault = 2,     // guest fault: see WarpContext::fault_*
};

enum class FaultKind : uint32_t {
  None = 0,
  Trap = 1,         // trap op; fault_code = its imm
  OutOfBounds = 2,  // memory access outside every buffer; fault_addr, fault_space
  Watchdog = 3,     // instruction budget exhausted
  Unsupported = 4,  // op the engine cannot run
  Misaligned = 5,
};

// A contiguous guest range backed by host memory: the JIT's inline fast path
// for one address space. Accesses outside it go through GuestMemory::access.
constexpr int kExtraWindows = 3;
struct MemWindow {
  uint64_t base = 0;
  uint64_t size = 0;     // 0 = no window
  uint8_t* host = nullptr;
};

// Memory accesses outside the windows (and every access of the interpreter).
// Implemented by runtime; must be thread-safe for atomics.
struct GuestMemory {
  enum class Kind : uint32_t { Load, Store, Atomic, AtomicCas };
  // Performs one lane's access of `bytes` (1, 2, 4, 8) at `addr` in `space`.
  // Load: writes the zero-extended value to *value. Store: stores *value.
  // Atomic: op applied with operand *value, old value written back to *value.
  // AtomicCas: compares with *compare, stores *value if equal, old -> *value.
  // Returns false when the address is not backed (a guest fault).
  virtual bool access(Kind kind, Space space, uint64_t addr, unsigned bytes, uint64_t* value,
                      AtomicOp op = AtomicOp::Add, const uint64_t* compare = nullptr) = 0;
  // Host pointer for [addr, addr+bytes) if it lies inside one buffer, else null.
  virtual uint8_t* translate(Space space, uint64_t addr, uint64_t bytes) = 0;
  virtual ~GuestMemory() = default;
};

struct WarpContext {
  uint8_t* vars = nullptr;          // Function::vars_bytes(), layout from Function::var_offset
  const uint8_t* uniforms = nullptr;// Function::uniform_bytes
  uint8_t* frame = nullptr;         // engine scratch that persists across a barrier (Executable::frame_bytes)
  uint32_t entry_mask = 0xffffffffu;
  uint32_t resume = 0;              // 0 = start; set by the engine at a barrier
  int64_t budget = 1ll << 40;       // watchdog budget in guest "cost" units (budget ops)
  RunStatus status = RunStatus::Done;
  FaultKind fault = FaultKind::None;
  uint64_t fault_code = 0;
  uint64_t fault_addr = 0;
  uint32_t fault_space = 0;
  uint32_t fault_lane = 0;
  MemWindow windows[kNumSpaces];
  // More windows per space, tried in order after windows[space] (size 0 ends
  // the list): e.g. the input and the output buffer of a kernel both stay on
  // the JIT's inline path.
  MemWindow extra_windows[kNumSpaces][kExtraWindows];
  GuestMemory* memory = nullptr;
};

// The warp loop (docs/runtime.md, "Warp loop"): one call of an engine runs
// many full warps of one block in the same vars and frame, setting up each
// warp's vars itself from this description instead of a launcher's per-warp
// C++ (coordinates, init callback, context copy, zeroing, entry code).
// Per warp w, before it runs: the `nzero` ranges (offset, bytes; bytes a
// multiple of 32) of the vars are zeroed, then each lane var i's 32 lanes are
// written: lane l = (bases[(w - first_warp) * nvars + i] + lane_add[l]) &
// lane_keep[l], in `width`-byte elements (lane_keep null: all ones).
struct LaneVarInit {
  uint32_t offset = 0;                // byte offset of the var's slot in the vars
  uint32_t width = 4;                 // bytes per lane: 4 or 8
  const uint8_t* lane_add = nullptr;  // 32 elements of `width` bytes, 64-byte aligned
  const uint8_t* lane_keep = nullptr; // 32 elements of `width` bytes (all-ones / zero), 64-byte aligned, or null
};
struct WarpLoop {
  const LaneVarInit* vars = nullptr;
  uint32_t nvars = 0;
  uint32_t nzero = 0;
  const uint32_t* zero = nullptr;     // nzero pairs (offset, bytes)
  const uint64_t* bases = nullptr;    // nvars per warp, warps first_warp .. end_warp - 1
  uint32_t first_warp = 0, end_warp = 0;
  int64_t budget = 0;                 // each warp's watchdog budget (WarpContext::budget)
  // Out: the warp that ended the call (its status is the call's: Fault), or
  // end_warp when every warp finished (Done).
  uint32_t warp = 0;
  // The grid loop (docs/runtime.md, "Grid loop"): the warps of one call may
  // belong to consecutive blocks of `block_warps` warps each (warp
  // first_warp starts a block). With shared_bytes != 0, the `shared_bytes`
  // bytes at `shared` (the block's shared memory, the same host bytes for
  // every block of the call) are zeroed before the first warp of each block
  // runs. block_warps 0: the warps are of one block.
  uint32_t block_warps = 0;
  uint8_t* shared = nullptr;
  uint64_t shared_bytes = 0;
  uint32_t block_left = 0;            // engine scratch (warps left in the current block)
  // Engine scratch, set once per call: 1 when every lane var entry is
  // `width` 4 with no lane_keep (the x64 loop then writes each var with one
  // broadcast and an add and a store per vector, no per-var tests).
  uint32_t plain_vars = 0;
};

// The draw loop (a vertex shader's draw: docs/pica200.md, "seventh session"):
// one call of an engine runs full warps first_warp .. end_warp - 1 of a draw
// straight between caller records and the vars, the AoS <-> SoA movement in
// the engine's own code. Per warp w (vertices 32w .. 32w + 31), before it
// runs: the `nzero` var ranges (offset, bytes; bytes a multiple of 32) are
// zeroed; each `loads` entry moves one 16-byte register of every vertex k
// (at base + k * stride) into the four var slots var[0..3] (x, y, z, w: 32
// lanes of 4 bytes each); then each `pre` copy moves 16 bytes from
// src + k * src_stride to dst + k * dst_stride (src_stride 0: the same 16
// bytes for every vertex; `bytes` 32, 48 or 64: that many, two to four
// adjacent registers at once, each vertex's bytes all read before any is
// written: ninth session). After a warp is Done: each `stores` entry moves
// the four var slots out to base + k * stride (the inverse of a load), then
// each `post` copy runs. Every input of a warp is read before its first
// output byte is written. `prefetch`: also prefetch the next warp's load
// records. `reverse`: run the warps from end_warp - 1 down to first_warp.
// `tail`: the last warp's vertex count when it is partial (eighth session).
struct DrawRegMove {
  uint8_t* base = nullptr;  // the register in vertex 0's record
  uint64_t stride = 0;
  uint32_t var[4] = {};     // byte offsets of the x, y, z, w slots in the vars
};
struct DrawCopy {
  const uint8_t* src = nullptr;
  uint64_t src_stride = 0;
  uint8_t* dst = nullptr;
  uint64_t dst_stride = 0;
  uint32_t bytes = 16;  // 16, 32, 48 or 64
  uint32_t unused = 0;
};
struct DrawLoop {
  const DrawRegMove* loads = nullptr;
  const DrawRegMove* stores = nullptr;
  const DrawCopy* pre = nullptr;
  const DrawCopy* post = nullptr;
  const uint32_t* zero = nullptr;     // nzero pairs (offset, bytes)
  uint32_t nloads = 0, nstores = 0, npre = 0, npost = 0, nzero = 0;
  uint32_t prefetch = 0;
  uint32_t first_warp = 0, end_warp = 0;
  int64_t budget = 0;                 // each warp's watchdog budget
  // Out: the warp that ended the call (Fault); Done: all ran.
  uint32_t warp = 0;
  uint32_t reverse = 0;
  // tail != 0: the last warp (end_warp - 1) is partial, vertices
  // 32 (end_warp - 1) .. + tail - 1 only (its other lanes are not launched;
  // their records are neither read nor written). `lanes`: engine scratch.
  uint32_t tail = 0, lanes = 0;
  // Filled in by the engine, not the caller (x64: the draw loop is one
  // shared stub per tier, not part of each function; eighth session): the
  // function's per-warp entry, and where its epilogue goes back to in the stub.
  const uint8_t* warp_entry = nullptr;
  const uint8_t* next = nullptr;
};

// Something that runs one IR function on warps: the IR interpreter, a JIT tier.
class Executable {
 public:
  virtual ~Executable() = default;
  virtual size_t frame_bytes() const = 0;
  // True when run() may read frame bytes it has not written since a fresh
  // start (resume == 0), so the frame must be zeroed before. Engines that
  // initialize what they read return false and callers may skip the zeroing.
  virtual bool frame_needs_zero() const { return true; }
  // Byte ranges [first, second) of ctx.vars that run() may read (load_var),
  // merged and ascending; false when unknown (then it may read any var byte).
  // A launcher uses it to zero only what is read when nobody else looks at
  // the vars after the run.
  virtual bool var_read_ranges(std::vector<std::pair<uint32_t, uint32_t>>& out) const {
    (void)out;
    return false;
  }
  // Runs until return, barrier or fault; sets and returns ctx.status.
  virtual RunStatus run(WarpContext& ctx) const = 0;
  // Whether run_warps works: the engine has a warp loop for this function
  // (generated code without barriers). False: run_warps must not be called.
  virtual bool has_warp_loop() const { return false; }
  // Runs warps loop.first_warp .. loop.end_warp - 1, every one with all 32
  // lanes launched (ctx.entry_mask = all ones), one after the other in
  // ctx.vars / ctx.frame (WarpLoop says how each warp's vars start), until
  // one faults or all are done; sets loop.warp and ctx.status (and the fault
  // fields as run() does for the warp that faulted).
  virtual RunStatus run_warps(WarpContext& ctx, WarpLoop& loop) const {
    (void)loop;
    ctx.fault = FaultKind::Unsupported;
    ctx.status = RunStatus::Fault;
    return ctx.status;
  }
  // Whether run_draw_loop works (generated code of a vertex shader's
  // translation, Function::unlaunched_lanes_free, without barriers).
  virtual bool has_draw_loop() const { return false; }
  // Runs draw warps as DrawLoop describes, every lane launched
  // (ctx.entry_mask = all ones, ctx.resume = 0); sets loop.warp and
  // ctx.status as run_warps does.
  virtual RunStatus run_draw_loop(WarpContext& ctx, DrawLoop& loop) const {
    loop.warp = loop.first_warp;
    ctx.fault = FaultKind::Unsupported;
    ctx.status = RunStatus::Fault;
    return ctx.status;
  }
  // The draw loop as code a caller may enter itself, without the virtual
  // calls of run_draw_loop (a draw's fixed cost): `code` is called as
  // `uint32_t code(WarpContext*, DrawLoop*)` with loop.warp_entry =
  // `warp_entry`, ctx.frame set when frame_bytes() > 0 and
  // first_warp < end_warp; it returns the status and sets loop.warp (and
  // ctx.status through each warp's epilogue: a call without warps leaves
  // it alone). False: the engine has none (use run_draw_loop).
  // The pointers stay valid as long as the executable.
  virtual bool draw_loop_code(const uint8_t*& code, const uint8_t*& warp_entry) const {
    (void)code;
    (void)warp_entry;
    return false;
  }
};

}  // namespace gpurc::ir
