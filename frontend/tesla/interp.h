// Reference interpreter for Tesla code: runs one block (all its warps) with
// the per-warp control-flow stack, predicates and $c, $a, and the exact
// integer/float rules of docs/tesla.md. What the JIT and the IR translation
// are checked against.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "frontend/tesla/encoding.h"

namespace gpurc::tesla {

// Memory of one launch. Every access is bounds-checked against these sizes;
// an access outside is a guest fault, never a host crash.
struct LaunchMemory {
  std::vector<uint8_t> global[16];   // g0..g15, linear: address = byte offset
  std::vector<uint8_t> cbuf[16];     // c0..c15
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
};

enum class FaultKind { None, Decode, Trap, OutOfBounds, Unsupported, Watchdog, Stack };

struct RunResult {
  FaultKind fault = FaultKind::None;
  std::string message;      // names the instruction, its word address and the lane where it applies
  uint32_t pc = 0;          // word address of the faulting instruction
  uint64_t steps = 0;
  bool ok() const { return fault == FaultKind::None; }
};

// Per-thread state after (or during) a run, for tests and differential checks.
struct ThreadState {
  uint32_t r[128] = {};
  uint16_t a[8] = {};
  uint8_t c[4] = {};
  bool exited = false;
};

class BlockInterpreter {
 public:
  BlockInterpreter(std::vector<uint32_t> code, Target target, BlockConfig cfg, LaunchMemory* mem);
  // Runs every warp of the block to completion (or the first fault). Sets up
  // the CUDA 1.x launch ABI first: s[0x0..0xf] (u16: 0, ntid.x, ntid.y,
  // ntid.z, nctaid.x, nctaid.y, ctaid.x, ctaid.y), params from s[0x10],
  // $r0 = tid.x | tid.y << 16 | tid.z << 26.
  RunResult run();
  // Without the launch ABI: threads start with the given registers (tests).
  RunResult run_with(const std::vector<ThreadState>& initial);

  const ThreadState& thread(unsigned tid) const { return threads_[tid]; }
  unsigned threads() const { return nthreads_; }
  std::vector<uint8_t>& shared() { return shared_; }
  std::vector<uint8_t>& local(unsigned tid) { return local_[tid]; }
  std::vector<uint8_t>& out(unsigned tid) { return out_[tid]; }
  std::vector<uint8_t>& attr(unsigned tid) { return attr_[tid]; }

 private:
  struct Impl;
  std::vector<uint32_t> code_;
  Target target_;
  BlockConfig cfg_;
  LaunchMemory* mem_;
  std::vector<ThreadState> threads_;  // padded to whole warps
  unsigned nthreads_ = 0;
  std::vector<uint8_t> shared_;
  std::vector<std::vector<uint8_t>> local_, out_, attr_;
  RunResult execute();
};

// Scalar semantics shared with tests (and the IR translation later).
namespace sem {
uint32_t fadd(uint32_t a, uint32_t b, bool rz);         // FTZ in and out, NaN -> 0x7fffffff
uint32_t fmul(uint32_t a, uint32_t b, bool rz);
uint32_t fmad(uint32_t a, uint32_t b, uint32_t c);      // product truncated unless an input is zero, then add rn
uint32_t fsat(uint32_t a);                              // clamp to [0, 1], NaN -> 0
uint8_t flags_int(uint32_t res, unsigned bits);         // Z, S
uint8_t flags_float(uint32_t f);                        // Z: zero or NaN, S: negative or NaN
bool pred(uint8_t c, unsigned code);                    // the 32 predicate conditions
uint32_t preex2(uint32_t f);
uint32_t presin(uint32_t f);
uint32_t sfu(Op op, uint32_t f);                        // rcp rsqrt lg2 sin cos ex2
}  // namespace sem

}  // namespace gpurc::tesla
