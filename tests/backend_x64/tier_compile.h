// Compiling an IR function for one x64 tier: on any x64 host for the code
// tests that read listings (a tier the host lacks is compiled for its
// listing only, JitOptions::listing_only, never run), and for the tests
// that run a warp loop.
#pragma once

#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "backend_x64/jit.h"

namespace gpurc::test {

inline std::unique_ptr<x64::CompiledFunction> compile_for_tier(const ir::Function& f, x64::Tier t) {
  x64::JitOptions o;
  o.tier = t;
  o.listing_only = !x64::host_supports(t);
  std::string err;
  auto cf = x64::compile(f, o, &err);
  REQUIRE_MESSAGE(cf, err);
  return cf;
}

// A function with a warp loop compiled to run on tier t (the host has it):
// the warp-loop tests' common start.
inline std::unique_ptr<x64::CompiledFunction> compile_warp_loop(const ir::Function& f, x64::Tier t) {
  std::string err;
  auto cf = x64::compile(f, x64::JitOptions{t}, &err);
  REQUIRE_MESSAGE(cf, err);
  REQUIRE(cf->has_warp_loop());
  return cf;
}

}  // namespace gpurc::test
