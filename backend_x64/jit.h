// The x86-64 JIT: lowered IR -> AVX-512 or AVX2 host code.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

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
};

class CompiledFunction : public ir::Executable {
 public:
  virtual std::string disassemble() const = 0;   // Zydis, Intel syntax, one instruction per line
  virtual size_t code_bytes() const = 0;
  virtual const uint8_t* code() const = 0;       // start of the executable code (code_bytes() long)
  // Ops compiled to calls of the per-lane eval_lane helper, and warp ops that
  // call a C++ helper (memory ops count too: their fast path falls back to it).
  virtual size_t lane_helper_ops() const = 0;
  virtual size_t warp_helper_ops() const = 0;
};

// Compiles a function that passed the pipeline (is_lowered). On failure
// returns null and sets *error.
std::unique_ptr<CompiledFunction> compile(const ir::Function& f, const JitOptions& opt, std::string* error);

}  // namespace gpurc::x64
