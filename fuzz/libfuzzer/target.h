// Shared parts of the libFuzzer targets (docs/fuzzing.md "libFuzzer
// targets"). A target that finds a contract broken calls fail(), which
// aborts: libFuzzer saves the input as a crash, like a sanitizer report.
// Built only with -DGPURC_LIBFUZZER=ON (clang); each target file is compiled
// once per ISA or syntax with GPURC_FUZZ_ISA set (CMakeLists.txt).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "isa/module.h"

namespace gpurc::fuzz_target {

[[noreturn]] inline void fail(const std::string& what) {
  std::fprintf(stderr, "gpurc fuzz target: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

// gpurc_lib comes first on the link line, and isa/module.cpp (later) needs
// its registry: naming the registry here makes the static link keep it.
[[maybe_unused]] inline const std::vector<const isa::IsaModule*>& (*const kRegistry)() = &isa::all_modules;

// The ISA module the target was built for (GPURC_FUZZ_ISA).
// (Through the registry, recompiler/isa_registry.cpp: naming all_modules()
// here also makes the static link take the registry from gpurc_lib.)
inline const isa::IsaModule& module_of(const char* name) {
  for (const isa::IsaModule* m : isa::all_modules())
    if (m->name() == name) return *m;
  fail(std::string("no isa module ") + name);
}

// The variant an input's first byte selects ("" = the default, then every
// variant the module lists), so one target covers every revision.
inline std::string pick_variant(const isa::IsaModule& m, uint8_t selector) {
  std::vector<std::string> v = m.variants();
  size_t k = selector % (v.size() + 1);
  return k == 0 ? std::string() : v[k - 1];
}

}  // namespace gpurc::fuzz_target
