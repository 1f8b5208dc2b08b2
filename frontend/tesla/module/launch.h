// The Tesla launch ABI: running one Tesla (sm_1x) kernel launch through
// rt::launch on any engine: the reference interpreter (reference.h, for the
// reference engine) or translate -> IR -> EngineHandle::compile -> a JIT
// tier. Replay files, examples, bench and tests go through here, so every
// engine sees the same guest memory layout (frontend/tesla/translate.h):
//
//   g<i>[a]  buffer address a in space global (the linear memory below
//            4 GiB, which every g<i> sees, as CUDA's 32-bit pointers do),
//            or (i << 32) + a when buffers are bound there for that i >= 1
//            (then g<i> is a space of its own)
//   c<i>[a]  buffer address (i << 32) + a in space const
//   s[]      per block, `smem` bytes, the launch ABI block at s[0x0..0x10+params);
//            buffers in space shared give every block's s[] initial bytes
//            at their address (after the ABI block), and keep them
//   l[]      per thread, `lmem` bytes (private: not a replay buffer)
//   a[] o[]  per thread, `attr_bytes` each (vertex/geometry programs): a[]
//            from Launch::attr_in, o[] returned in Outcome::outputs, both
//            indexed by the global thread id (block * threads per block + tid)
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "frontend/tesla/encoding.h"
#include "ir/types.h"
#include "isa/module.h"
#include "runtime/launch.h"

namespace gpurc::tesla_run {

struct Kernel {
  std::vector<uint32_t> code;
  uint32_t entry = 0;            // word address where every thread starts
  tesla::Target target;          // variant; compute programs
  unsigned regs = 128;           // allocated $r count
  uint32_t lmem = 0;             // l[] bytes per thread
  unsigned call_limit = 16;
  uint32_t attr_bytes = 0x200;   // a[] and o[] bytes per thread (1..0x10000)
};

struct Launch {
  rt::Dim3 grid, block;          // grid.z must be 1 (CUDA 1.x grids are 2D)
  uint32_t smem = 0;             // s[] bytes per block; 0 = 0x10 + params rounded to 16
  std::vector<uint8_t> params;   // copied to s[0x10..]
  std::vector<uint8_t> attr_in;  // a[] of every thread: global thread g's at g * attr_bytes (missing bytes 0)
  int64_t budget = 0;            // watchdog per warp (JIT: budget units; interp: warp-instructions); 0 = default
};

// A guest buffer (space Global, Const or Shared, address as in the header comment).
// `bytes` holds the initial contents and receives the final ones.
struct Buffer {
  std::string name;
  ir::Space space = ir::Space::Global;
  uint64_t address = 0;
  std::vector<uint8_t> bytes;
};

struct Options {
  const isa::EngineHandle* engine = nullptr;  // null: the reference interpreter
  unsigned threads = 0;            // host threads for blocks; 0 = all cores
  bool count_instructions = false; // fill Outcome::lane_instructions
  bool warp_loop = true;           // JIT: full warps through the engine's warp loop when it has one (rt::LaunchConfig::warp_loop)
  bool grid_loop = true;           // JIT: with the warp loop, many blocks per call when blocks are whole warps (rt::LaunchConfig::grid_loop)
};

struct Outcome {
  std::string error;               // invalid kernel / launch / buffers: nothing ran (or ran partially)
  bool faulted = false;            // a guest fault stopped the run
  std::string fault_kind;          // "trap", "out-of-bounds", "watchdog", "unsupported", "stack", "decode"
  std::string fault_message;       // names the instruction and word address where known
  double compile_us = 0, run_us = 0;
  // Lane-instructions executed: guest instructions times the active lanes
  // that executed each (predicated-off lanes included), counted by the
  // reference interpreter (0 when not requested, or when its run fails).
  uint64_t lane_instructions = 0;
  // o[] of every thread after the run (g * attr_bytes), for vertex and
  // geometry programs (Kernel::target.ptype kVP / kGP); empty otherwise.
  std::vector<uint8_t> outputs;
  bool ok() const { return error.empty() && !faulted; }
};

// The s[] size a launch gets (Launch::smem or its default).
uint32_t shared_bytes(const Launch& l);
// Checks the shape limits of sm_1x and its launch ABI (at most 512 threads
// per block, grid x/y < 65536, grid z = 1, s[] 0x10 + params ... 0x10000).
// Empty when valid.
std::string check_launch(const Launch& l);
// Whether blocks of this code may run on several host threads under the
// interpreter (no global atomics: its atomics are plain read-modify-writes).
bool interp_blocks_parallel_safe(const Kernel& k);

// Runs the launch; buffers are updated in place (also after a fault).
Outcome run(const Kernel& k, const Launch& l, std::vector<Buffer>& buffers, const Options& opt);

}  // namespace gpurc::tesla_run
