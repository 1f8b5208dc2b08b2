// The tiers the backend tests run on: every tier of the engine registry this
// host supports, through the HostTier interface only, so a new host tier is
// tested by registering it.
#pragma once
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "engines/registry.h"

namespace gpurc::backend::test {

using Tier = const HostTier*;
using backend::CompiledCode;

// Never empty: a host without a JIT tier has nothing these tests can check,
// which is a failure rather than a pass of zero checks.
inline std::vector<Tier> host_tiers() {
  std::vector<Tier> t;
  for (Engine e : host_jit_tiers()) t.push_back(e.tier());
  REQUIRE_MESSAGE(!t.empty(), "this host runs no JIT tier of the registry (" << engine_names() << ")");
  return t;
}

inline const char* tier_name(Tier t) { return t->name; }

struct JitOptions {
  Tier tier = nullptr;
  bool perf_map = false;
  std::string symbol = "gpurc_jit";
};

inline std::unique_ptr<CompiledCode> compile(const ir::Function& f, const JitOptions& o, std::string* error) {
  CompileOptions co;
  co.perf_map = o.perf_map;
  co.symbol = o.symbol;
  return o.tier->compile(f, co, error);
}

}  // namespace gpurc::backend::test
