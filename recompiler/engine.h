// Compiling IR functions for an engine of the registry (engines/registry.h:
// the reference interpreter or a host JIT tier) through the code cache.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engines/registry.h"
#include "ir/abi.h"
#include "ir/ir.h"
#include "ir/passes.h"
#include "runtime/code_cache.h"

namespace gpurc {

// An executable with what a launch needs to know about its var layout.
struct CompiledIr {
  std::shared_ptr<ir::Executable> exe;
  uint32_t vars_bytes = 0;   // of the function the engine runs (passes may add vars after the guest's)
  // The largest `budget` cost of that function (at least 1): watchdog units
  // are IR instructions of a loop iteration, so a caller turning a budget of
  // guest steps into units multiplies by this (pica200_run.cpp).
  uint64_t max_step_cost = 1;
  double compile_us = 0;     // 0 on a cache hit
  bool cache_hit = false;
};

struct IrCompileOptions {
  ir::PassOptions passes;    // JIT only: the pipeline before code generation
  bool perf_map = false;
  std::string symbol = "gpurc_jit";
  bool use_cache = true;
  // The caller ran ir::verify(f) and it passed (a translation that verifies
  // its own output): compile_ir does not verify it a second time.
  bool input_verified = false;
  // The caller's identity for `f` (use_cache only): equal identities mean
  // equal functions, because the caller made `f` deterministically from what
  // the identity hashes (the PICA200 API: the reachable code, descriptors and
  // options its own shader cache is keyed on). The code cache key is then
  // this identity with the options, and the function's bytes are not hashed
  // (a second hash of the same program, ~3% of a PICA200 cold compile).
  // Null: the key hashes the function's bytes.
  const rt::CacheKey* identity = nullptr;
};

// Compiles an IR function for a resolved engine (not Engine::Jit). Interp:
// the IR interpreter on the function as given (the reference). JIT tiers:
// run_pipeline on a copy, then the tier's code generator. The first
// f.vars.size() vars keep their layout. False with `error` on failure.
bool compile_ir(const ir::Function& f, Engine engine, const IrCompileOptions& opt, CompiledIr& out,
                std::string& error);
// The same with a function the caller gives up: the passes run on `f`
// itself, not on a copy (`f` is unspecified afterwards).
bool compile_ir(ir::Function&& f, Engine engine, const IrCompileOptions& opt, CompiledIr& out, std::string& error);

// Compiles for a JIT tier (resolved) without the cache and returns the host
// code as text (`gpurc host`): one instruction per line (x64: Intel syntax).
bool host_code_listing(const ir::Function& f, Engine engine, const IrCompileOptions& opt, std::string& listing,
                       size_t& code_bytes, std::string& error);

// The process-wide code cache compile_ir uses.
rt::CodeCache& code_cache();

// Options string for the cache key: every setting that changes compiled code.
std::string compile_options_key(Engine engine, const IrCompileOptions& opt);

}  // namespace gpurc
