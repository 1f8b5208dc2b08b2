// Random valid Tesla (sm_1x) programs for the differential fuzzer: data
// instructions drawn from the encoding table's rows (frontend/tesla/encoding.h
// random_insn), with their registers and memory operands steered into a small
// well-defined state, plus structured control flow (joinat/join around
// divergent branches, prebrk/brk loops bounded by a counter, call/ret) and
// in-bounds g[]/l[] accesses assembled from templates through the same table.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "frontend/tesla/encoding.h"
#include "frontend/tesla/interp.h"
#include "isa/rng.h"

namespace gpurc::fuzz {

// Register use of generated programs. Random instructions only name $r0..
// $r(kTeslaDataRegs-1); the rest have fixed jobs set up by the initial state.
constexpr int kTeslaDataRegs = 24;
constexpr int kTeslaAddrReg = 24;      // g[] address computed right before each g[] access
constexpr int kTeslaLaneBase = 25;     // lane * kTeslaLaneBytes: the lane's private g1[] area
constexpr int kTeslaCounter0 = 26;     // loop counters, one per nesting depth
constexpr int kTeslaWarpReg = 28;      // the thread's warp index (tid / 32): warp-dependent barrier forms
constexpr int kTeslaMinusOne = 30;     // 0xffffffff: loop decrement
constexpr int kTeslaRegs = 32;         // registers a program may use (BlockConfig::regs)

// Memory of a generated program.
constexpr uint32_t kTeslaSharedBytes = 0x10000;  // s[]: every 16-bit address is inside
constexpr uint32_t kTeslaConstBytes = 0x10000;   // c0[] and c1[]: the banks random rows may name
constexpr uint32_t kTeslaG0Bytes = 0x400;        // g0[]: read-only data for loads
constexpr uint32_t kTeslaLaneBytes = 0x40;       // g1[]: per-lane area for stores and atomics
constexpr uint32_t kTeslaG2Bytes = 0x40;         // g2[]: one word every lane reduces into
constexpr uint32_t kTeslaLocalBytes = 0x100;     // l[] per thread

// Barrier programs, a program shape of their own (TeslaGenOptions::
// barrier_shape): a block of 2..3 warps (the last one possibly partial) and
// `bar` forms (plain, `inc`, `wait`, `inc wait`, ids 0..3, thread counts or
// `all`) at the top level of the main body, some of them different per warp
// (a branch on kTeslaWarpReg), every choice about them from a second random
// stream. A campaign runs them in addition to its ordinary programs: for
// about kTeslaBarrierProgramPct percent of the iterations
// (tesla_barrier_program_at), a barrier program from
// tesla_barrier_program_seed. The ordinary programs stay exactly those of
// the campaigns before barriers were generated (the regression tests replay
// seed-1 iterations by number).
constexpr unsigned kTeslaBarrierProgramPct = 20;

struct TeslaProgram {
  tesla::Target target;
  std::vector<uint32_t> words;
  std::vector<std::string> listing;          // one line per instruction: "word: text"
  tesla::BlockConfig cfg;                     // block of `threads.size()` threads
  std::vector<tesla::ThreadState> threads;   // initial registers, $a, $c
  tesla::LaunchMemory mem;                    // g0..g2, c0, c1
  std::vector<uint8_t> shared;                // initial s[]
};

struct TeslaGenOptions {
  unsigned min_insns = 8, max_insns = 40;     // main-body instructions (before control flow nesting)
  // Returns false for an instruction the engines under test cannot run; such
  // candidates are skipped (counted per op name in `skipped`).
  std::function<bool(const tesla::Insn&)> accept;
  bool barrier_shape = false;                 // a barrier program (above)
};

struct TeslaGenStats {
  std::map<std::string, uint64_t> generated;  // op name -> instructions placed
  std::map<std::string, uint64_t> skipped;    // op name -> candidates refused by `accept`
};

// Program `index` of campaign `seed` (same inputs, same program on every host).
uint64_t tesla_program_seed(uint64_t seed, uint64_t index);
// Whether iteration `index` of campaign `seed` also runs a barrier program,
// and that program's seed (for generate_tesla with barrier_shape).
bool tesla_barrier_program_at(uint64_t seed, uint64_t index);
uint64_t tesla_barrier_program_seed(uint64_t seed, uint64_t index);
TeslaProgram generate_tesla(uint64_t program_seed, const tesla::Target& target, const TeslaGenOptions& opt,
                            TeslaGenStats* stats = nullptr);

}  // namespace gpurc::fuzz
