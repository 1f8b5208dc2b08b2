// The ARM64 JIT: lowered IR -> AArch64 NEON host code. The rest of the house
// reaches it through its HostTier ("jit-a64", tiers(), registered in
// engines/registry.cpp); a64-only tests call compile() directly.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "backend_common/tier.h"
#include "ir/ir.h"

namespace gpurc::a64 {

// Every AArch64 CPU has Advanced SIMD (NEON): true exactly when this binary
// runs on an AArch64 host.
bool host_supports_neon();

// Compiles a function that passed the pipeline (is_lowered). On failure
// returns null and sets *error. Emitting works on any host (asmjit assembles
// AArch64 anywhere); running the result needs an AArch64 host.
std::unique_ptr<backend::CompiledCode> compile(const ir::Function& f, const backend::CompileOptions& opt,
                                               std::string* error);

// The tiers this folder provides: "jit-a64" (4-lane strips: one q register
// per 32-bit value of a strip, eight per warp).
const backend::HostTier* const* tiers(size_t& count);
// The tier's declared native ops (native_ops.cpp); tests check them against compile().
extern const backend::NativeOps kNativeNeon;

}  // namespace gpurc::a64
