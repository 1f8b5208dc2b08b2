// Compiling an IR function for one x64 tier on any x64 host, for the code
// tests that read listings: a tier the host lacks is compiled for its
// listing only (JitOptions::listing_only), never run.
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

}  // namespace gpurc::test
