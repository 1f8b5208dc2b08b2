// The registry of execution engines: the IR reference interpreter and every
// host JIT tier built into this binary (backend_common/tier.h), under one set
// of names used by the CLI, replay files, bench, the fuzzers, the tests and
// the public API: "interp", "jit-avx512", "jit-avx2" (later "jit-a64"), and
// "jit" for the best tier this host can run. Adding a host tier is one line
// in registry.cpp.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "backend_common/tier.h"

namespace gpurc {

// A handle on one engine of the registry. Engine::Jit is a request that
// resolve_engine turns into a tier.
class Engine {
 public:
  static const Engine Interp;
  static const Engine Jit;
  constexpr Engine() = default;  // Interp
  // The host tier, or null for Interp and Jit.
  const backend::HostTier* tier() const;
  bool is_tier() const { return id_ >= kFirstTier; }
  friend constexpr bool operator==(Engine a, Engine b) { return a.id_ == b.id_; }
  // The i-th registered tier (all_tiers() order).
  static Engine tier_at(size_t i) { return Engine(uint8_t(kFirstTier + i)); }

 private:
  static constexpr uint8_t kFirstTier = 2;
  constexpr explicit Engine(uint8_t id) : id_(id) {}
  uint8_t id_ = 0;  // 0 interp, 1 jit, kFirstTier + i: registered tier i
};
inline constexpr Engine Engine::Interp{0};
inline constexpr Engine Engine::Jit{1};

// Every tier built into this binary, best first (available or not).
const std::vector<const backend::HostTier*>& all_tiers();

// Every tier whose code generator this build contains, best first:
// all_tiers() and, where a host's backend is compiled but not registered (the
// NEON tier on x86-64 builds: asmjit assembles AArch64 anywhere), that tier
// too. Only for looking at generated code (`gpurc bench --static`): a tier
// the host cannot run still compiles, its code is never run.
const std::vector<const backend::HostTier*>& codegen_tiers();
// The engine's registry name.
const char* engine_name(Engine e);
// Registry names; the fuzzers' former short tier names ("avx512", "avx2",
// "a64") are accepted as aliases of "jit-<name>".
bool parse_engine(std::string_view s, Engine& out);
// "interp, jit, jit-avx512, jit-avx2": the names parse_engine accepts, for help texts.
std::string engine_names();
// Whether this host can run the engine (Jit: any JIT tier).
bool engine_available(Engine e);
// Jit -> the best tier of this host; a tier the host lacks -> false with a
// message naming it. Interp resolves to itself.
bool resolve_engine(Engine requested, Engine& resolved, std::string& error);
// Interp followed by every JIT tier the host supports, best first.
std::vector<Engine> host_engines();
// The JIT tiers the host supports, best first.
std::vector<Engine> host_jit_tiers();

}  // namespace gpurc
