// The x86-64 JIT: lowered IR -> AVX-512 or AVX2 host code. The rest of the
// house reaches it through the two HostTiers (tiers(), registered in
// engines/registry.cpp); x64-only tests call compile() directly.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "backend_common/tier.h"
#include "ir/abi.h"
#include "ir/ir.h"

namespace gpurc::x64 {

enum class Tier { Avx512, Avx2 };
const char* tier_name(Tier t);
bool host_supports(Tier t);  // CPUID + OS state (XCR0)

struct JitOptions {
  Tier tier = Tier::Avx512;
  bool perf_map = false;     // append to /tmp/perf-<pid>.map
  std::string symbol = "gpurc_jit";
  // Compile even when the host lacks the tier, for the listing only
  // (disassemble(), instruction counts in tests): the code must not be run.
  bool listing_only = false;
};

// disassemble(): Zydis, Intel syntax.
using CompiledFunction = backend::CompiledCode;

// Compiles a function that passed the pipeline (is_lowered). On failure
// returns null and sets *error.
std::unique_ptr<CompiledFunction> compile(const ir::Function& f, const JitOptions& opt, std::string* error);

// The warp loop (warp_loop.cpp) is the same code for every function of a
// tier, MXCSR mode and draw-loop shape: each thread keeps the first one it
// emits and copies it into later functions. For tests and A/B measurements:
// set_warp_loop_copies(false) emits it every time (both calls forget the
// calling thread's kept copies); warp_loop_replays() counts the copies the
// calling thread made.
void set_warp_loop_copies(bool on);
uint64_t warp_loop_replays();
// Likewise the out-of-line fix code of each float fix shape (lower_float.cpp).
void set_fix_code_copies(bool on);
// Tests: whether DAZ-mode float results with FtzOut and a constant NaN rule
// are fixed in line (default) or tested with an out-of-line fix (lower_float.cpp).
void set_daz_fix_inline(bool on);
uint64_t fix_code_replays();
// A loop's trial emitters (loops.cpp: a loop emitted into a discarded buffer
// to see which registers it uses) take the function-level analyses of the
// emitter they probe for instead of making them again. For tests and A/B
// measurements: set_trial_analyses_shared(false) makes each trial make its
// own (as before the seventeenth session); trial_analyses_shares() counts
// the calling thread's trials that took them.
void set_trial_analyses_shared(bool on);
uint64_t trial_analyses_shares();
// Warp loops' contiguous accesses prefetch the span `bytes` ahead (the
// next warps' elements in grid-linear kernels; prefetcht0 for loads,
// prefetchw for stores). 0 (the default, or GPURC_STREAM_PREFETCH) is off.
// Applies to code compiled afterwards; the code cache does not key on it.
void set_stream_prefetch_distance(int bytes);

// The tiers this folder provides, best first: "jit-avx512" (16-lane strips)
// and "jit-avx2" (8-lane strips).
const backend::HostTier* const* tiers(size_t& count);
// The tiers' declared native ops (native_ops.cpp); tests check them against compile().
extern const backend::NativeOps kNativeAvx512;
extern const backend::NativeOps kNativeAvx2;

}  // namespace gpurc::x64
