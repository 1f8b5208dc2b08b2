#include "engines/registry.h"

#if GPURC_HAVE_X64
#include "backend_x64/jit.h"
#endif
#if GPURC_HAVE_A64 || GPURC_A64_CODEGEN
#include "backend_a64/jit.h"
#endif

namespace gpurc {

namespace {

// The registration: one line per host tier folder, best tiers first.
std::vector<const backend::HostTier*> collect_tiers() {
  std::vector<const backend::HostTier*> out;
  [[maybe_unused]] auto add = [&](const backend::HostTier* const* (*tiers)(size_t&)) {
    size_t n = 0;
    const backend::HostTier* const* t = tiers(n);
    out.insert(out.end(), t, t + n);
  };
#if GPURC_HAVE_X64
  add(x64::tiers);
#endif
#if GPURC_HAVE_A64
  add(a64::tiers);
#endif
  return out;
}

}  // namespace

const std::vector<const backend::HostTier*>& all_tiers() {
  static const std::vector<const backend::HostTier*> tiers = collect_tiers();
  return tiers;
}

const std::vector<const backend::HostTier*>& codegen_tiers() {
  static const std::vector<const backend::HostTier*> tiers = [] {
    std::vector<const backend::HostTier*> out = all_tiers();
#if GPURC_A64_CODEGEN && !GPURC_HAVE_A64
    size_t n = 0;
    const backend::HostTier* const* t = a64::tiers(n);
    out.insert(out.end(), t, t + n);
#endif
    return out;
  }();
  return tiers;
}

const backend::HostTier* Engine::tier() const {
  return is_tier() && size_t(id_ - kFirstTier) < all_tiers().size() ? all_tiers()[id_ - kFirstTier] : nullptr;
}

const char* engine_name(Engine e) {
  if (e == Engine::Interp) return "interp";
  if (e == Engine::Jit) return "jit";
  const backend::HostTier* t = e.tier();
  return t ? t->name : "?";
}

bool parse_engine(std::string_view s, Engine& out) {
  if (s == "interp" || s == "jit") {
    out = s == "interp" ? Engine::Interp : Engine::Jit;
    return true;
  }
  const auto& tiers = all_tiers();
  for (size_t i = 0; i < tiers.size(); ++i) {
    std::string_view name = tiers[i]->name;
    if (s == name || (name.substr(0, 4) == "jit-" && s == name.substr(4))) {
      out = Engine::tier_at(i);
      return true;
    }
  }
  return false;
}

std::string engine_names() {
  std::string s = "interp, jit";
  for (const backend::HostTier* t : all_tiers()) s += std::string(", ") + t->name;
  return s;
}

bool engine_available(Engine e) {
  if (e == Engine::Interp) return true;
  if (e == Engine::Jit) return !host_jit_tiers().empty();
  const backend::HostTier* t = e.tier();
  return t && t->available();
}

std::vector<Engine> host_jit_tiers() {
  std::vector<Engine> out;
  for (size_t i = 0; i < all_tiers().size(); ++i)
    if (all_tiers()[i]->available()) out.push_back(Engine::tier_at(i));
  return out;
}

std::vector<Engine> host_engines() {
  std::vector<Engine> out{Engine::Interp};
  for (Engine e : host_jit_tiers()) out.push_back(e);
  return out;
}

bool resolve_engine(Engine requested, Engine& resolved, std::string& error) {
  if (requested == Engine::Jit) {
    auto tiers = host_jit_tiers();
    if (tiers.empty()) {
      error = "engine jit: this host supports no JIT tier (use --engine interp)";
      return false;
    }
    resolved = tiers.front();
    return true;
  }
  if (!engine_available(requested)) {
    const backend::HostTier* t = requested.tier();
    error = std::string("engine ") + engine_name(requested) + ": not supported by this host" +
            (t ? std::string(" (needs ") + t->requires_ + ")" : std::string());
    return false;
  }
  resolved = requested;
  return true;
}

}  // namespace gpurc
