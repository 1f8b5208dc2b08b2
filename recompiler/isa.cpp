#include "recompiler/isa.h"

namespace gpurc {

const std::vector<const isa::IsaModule*>& all_isas() {
  static const std::vector<const isa::IsaModule*> isas = isa::guest_isas();
  return isas;
}

const isa::IsaModule* find_isa(const std::string& name) {
  for (auto* i : all_isas())
    if (i->name() == name) return i;
  return nullptr;
}

}  // namespace gpurc
