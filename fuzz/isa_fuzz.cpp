#include "fuzz/isa_fuzz.h"

namespace gpurc::fuzz {
namespace {

struct Entry {
  const char* isa;
  IsaFuzzer run;
};
// Listed here rather than registered from static initialisers, which a
// static library would drop.
constexpr Entry kFuzzers[] = {
    {"pica200", &run_pica200_fuzz},
    {"tesla", &run_tesla_fuzz},
    {"g13", &run_g13_fuzz},
};

}  // namespace

IsaFuzzer find_isa_fuzzer(const std::string& isa) {
  for (const auto& e : kFuzzers)
    if (isa == e.isa) return e.run;
  return nullptr;
}

std::vector<std::string> fuzzable_isas() {
  std::vector<std::string> out;
  for (const auto& e : kFuzzers) out.push_back(e.isa);
  return out;
}

}  // namespace gpurc::fuzz
