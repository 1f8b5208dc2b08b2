#include "isa/module.h"

namespace gpurc::isa {

bool IsaModule::accepts_variant(const std::string& v) const {
  for (const auto& x : variants())
    if (x == v) return true;
  return false;
}

bool IsaModule::translate(const std::vector<uint8_t>&, const std::string&, ir::Function&, std::string& err) const {
  err = "translating " + name() + " programs to IR is not supported yet";
  return false;
}

void IsaModule::replay(const ReplayJob&, replay::ReplayRun&) const {
  throw replay::ReplayError("replay of isa " + name() + " is not supported yet");
}

std::unique_ptr<FuzzSession> IsaModule::fuzz_session(const fuzz::IsaFuzzOptions&, std::string& err) const {
  err = "isa " + name() + " has no fuzzer";
  return nullptr;
}

std::vector<const IsaModule*> guest_isas() {
  std::vector<const IsaModule*> out;
  for (const IsaModule* m : all_modules())
    if (m->is_guest()) out.push_back(m);
  return out;
}

const IsaModule* find_module(const std::string& name) {
  for (const IsaModule* m : all_modules())
    if (m->name() == name) return m;
  return nullptr;
}

}  // namespace gpurc::isa
