// Reference interpreter for Tesla code: runs one warp at a time, with the
// per-warp control-flow stack, predicates and $c, $a, and the exact
// integer/float rules of docs/tesla.md. What the JIT and the IR translation
// are checked against. Blocks, barriers and launches are rt::launch's
// (frontend/tesla/module/reference.h).
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "frontend/tesla/encoding.h"

namespace gpurc::tesla {

// Memory of one launch. Every access is bounds-checked against these sizes;
// an access outside is a guest fault, never a host crash.
struct LaunchMemory {
  std::vector<uint8_t> global[16];   // g0..g15, linear: address = byte offset
  std::vector<uint8_t> cbuf[16];     // c0..c15
  // The byte ranges [begin, end) of a space that buffers back, when a replay
  // places buffers with gaps between them (or above 0): an access touching a
  // gap faults, as on the JIT engines, which bound every access by its
  // buffer. Empty: the whole vector is accessible (tests and fuzz programs
  // that fill a space from 0).
  struct Range {
    uint64_t begin, end;
  };
  std::vector<Range> global_mapped[16];
  std::vector<Range> cbuf_mapped[16];
  // True when [addr, addr + bytes) lies inside `bytes_of` and, if `mapped`
  // lists ranges, inside one of them.
  static bool accessible(const std::vector<uint8_t>& bytes_of, const std::vector<Range>& mapped, uint64_t addr,
                         uint64_t bytes) {
    if (bytes > bytes_of.size() || addr > bytes_of.size() - bytes) return false;
    if (mapped.empty()) return true;
    for (const Range& r : mapped)
      if (addr >= r.begin && addr + bytes <= r.end) return true;
    return false;
  }
};

struct BlockConfig {
  unsigned block[3] = {1, 1, 1};      // threads per block (x, y, z)
  unsigned grid[2] = {1, 1};          // blocks per grid (x, y)
  unsigned block_idx[2] = {0, 0};     // this block
  std::vector<uint8_t> params;        // kernel parameters, copied to s[0x10..]
  uint32_t smem = 0;                  // s[] bytes (at least 0x10 + params)
  uint32_t lmem = 0;                  // l[] bytes per thread
  unsigned regs = 128;                // allocated $r count; higher registers read 0, writes are dropped
  unsigned attr_bytes = 0x200;        // a[] and o[] bytes per thread (vertex/geometry programs, at most 0x10000)
  std::vector<uint8_t> attr_in;       // initial a[]: thread t's at t * attr_bytes (missing bytes 0)
  uint64_t max_steps = 1ull << 26;    // watchdog: warp-instructions for the whole block
  unsigned call_limit = 16;           // limited calls ignored beyond this many on a stack
  uint32_t entry = 0;                 // word address where every thread starts
  // Global memory as CUDA sees it: g<i> with bit i set is a space of its
  // own (buffers bound at (i << 32) + offset); every other g<i> is the
  // linear memory below 4 GiB (g0's bytes). All set: sixteen spaces.
  uint16_t own_global_spaces = 0xffff;
  // Initial bytes of every block's s[] (replay "shared" buffers), under the
  // launch block and parameters, which are written over them.
  std::vector<uint8_t> shared_image;
};

enum class FaultKind { None, Decode, Trap, OutOfBounds, Unsupported, Watchdog, Stack };

struct RunResult {
  FaultKind fault = FaultKind::None;
  std::string message;      // names the instruction, its word address and the lane where it applies
  uint32_t pc = 0;          // word address of the faulting instruction
  uint64_t steps = 0;        // warp-instructions of the block
  bool ok() const { return fault == FaultKind::None; }
};

// Per-thread state after (or during) a run, for tests and differential checks.
struct ThreadState {
  uint32_t r[128] = {};
  uint16_t a[8] = {};
  uint8_t c[4] = {};
  bool exited = false;
};

// ---- One warp at a time. The scheduler is rt::launch's (the reference
// adapter in frontend/tesla/module/reference.h runs run_warp as an
// ir::Executable, with counted barriers); this core knows no runtime.

// Control-flow stack entries a warp may hold (more is a Stack fault).
constexpr unsigned kMaxStackEntries = 4096;

struct StackEntry {
  uint8_t type;   // the interpreter's entry kind (branch, call, limited call, prebrk, quadon, joinat)
  uint32_t mask;
  uint32_t pc;    // words
};

// The memory the lanes of one warp address, set by the runner: g[]/c[] from
// `mem`, s[] `shared_bytes` bytes, lane l's l[] (BlockConfig::lmem bytes) at
// local + l * local_stride, its a[] and o[] (attr_bytes each) at attr / out +
// l * attr_stride. Every access is bounds-checked against these sizes.
struct WarpMemory {
  LaunchMemory* mem = nullptr;
  uint8_t* shared = nullptr;
  uint64_t shared_bytes = 0;
  uint8_t* local = nullptr;
  uint64_t local_stride = 0;
  uint8_t* attr = nullptr;
  uint8_t* out = nullptr;
  uint64_t attr_stride = 0;
};

// Everything one warp's run reads and writes. Trivially destructible and
// without pointers to itself: it lives in rt::launch's per-warp vars (the
// launch never runs constructors or destructors there), so a runner fills
// every field it needs with init_warp and its own lane setup.
struct WarpState {
  // The counted-barrier var (runtime/barrier.h): at a `bar` stop the adapter
  // writes the barrier's ir::barrier_word here; first, at offset 0.
  uint32_t barrier[32];
  ThreadState th[32];           // lanes past the launched ones too (quadon may run them)
  WarpMemory memory;
  uint64_t* block_steps;        // warp-instructions the whole block executed (watchdog, clock)
  // Guest instructions this warp executed, summed over its active lanes
  // (predicated-off lanes count: they issued the instruction; a join marker
  // that defers its instruction does not): `lane_instructions_per_s`.
  uint64_t lane_instructions;
  unsigned warp;                // index within the block
  uint32_t launched, active, exited, pc, join_skip;
  bool done;
  // Set by run_warp: the stop's barrier word (WarpStop::Barrier), or the fault.
  uint32_t barrier_word;
  FaultKind fault;
  char message[1024];           // the fault's text, NUL-terminated (names the instruction and word address)
  uint32_t stack_size;
  StackEntry stack[kMaxStackEntries];
};
static_assert(std::is_trivially_destructible_v<WarpState>);

// Control state of warp `warp` whose launched lanes are `launched`, starting
// at `entry`. Does not touch th[], memory or block_steps.
void init_warp(WarpState& w, unsigned warp, uint32_t launched, uint32_t entry);

// Decoded instructions by word address, filled on first use; thread-safe
// (the warps of different blocks may run on different host threads).
class DecodeCache {
 public:
  DecodeCache(const std::vector<uint32_t>& code, const Target& target);
  ~DecodeCache();
  DecodeCache(const DecodeCache&) = delete;
  DecodeCache& operator=(const DecodeCache&) = delete;
  const Insn& at(uint32_t pc) const;  // pc < code size

 private:
  const std::vector<uint32_t>& code_;
  Target target_;
  std::unique_ptr<std::atomic<const Insn*>[]> slots_;
};

// What every warp of a launch shares (read-only).
struct WarpProgram {
  const std::vector<uint32_t>& code;
  const Target& target;
  const BlockConfig& cfg;       // regs, call_limit, max_steps (for the whole block), lmem, attr_bytes
  const DecodeCache& cache;
};

enum class WarpStop { Done, Barrier, Fault };

// Runs warp `w` until it finishes, reaches a `bar` (its descriptor in
// w.barrier_word, as ir::barrier_word: the scheduler decides whether it
// waits) or faults (w.fault, w.message).
WarpStop run_warp(const WarpProgram& p, WarpState& w);

// Scalar semantics shared with tests (and the IR translation later).
namespace sem {
uint32_t fadd(uint32_t a, uint32_t b, bool rz);         // FTZ in and out, NaN -> 0x7fffffff
uint32_t fmul(uint32_t a, uint32_t b, bool rz);
uint32_t fmad(uint32_t a, uint32_t b, uint32_t c);      // product truncated (unbounded exponent) unless an input is zero, then add rn
uint32_t fsat(uint32_t a);                              // clamp to [0, 1], NaN stays NaN
uint8_t flags_int(uint32_t res, unsigned bits);         // Z, S
uint8_t flags_float(uint32_t f);                        // Z: zero/denormal or NaN, S: negative nonzero or NaN
uint8_t flags_float_noftz(uint32_t f);                  // the same, denormals nonzero (f64 unit's f32 results)
uint8_t flags_double(uint64_t f);                       // Z: +-0 or NaN, S: negative nonzero or NaN
bool pred(uint8_t c, unsigned code);                    // the 32 predicate conditions
// Conversions (rm: 0 nearest even, 1 down, 2 up, 3 toward zero).
uint32_t f16_to_f32(uint16_t h);                        // exact; NaN -> 0x7fffffff
uint16_t f32_to_f16(uint32_t x, int rm, bool truncate); // FTZ in, half denormals out
uint32_t u64_to_f32(uint64_t v, int rm);                // magnitude, no sign
uint64_t u64_to_f64(uint64_t v, int rm);
uint64_t float_to_u64(uint64_t bits, bool f64, int rm, bool flush);  // non-negative magnitude; ~0 if too big
uint32_t preex2(uint32_t f);
uint32_t presin(uint32_t f);
uint32_t sfu(Op op, uint32_t f);                        // rcp rsqrt lg2 sin cos ex2
}  // namespace sem

}  // namespace gpurc::tesla
