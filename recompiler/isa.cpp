#include "recompiler/isa.h"

namespace gpurc {

bool IsaSupport::translate(const std::vector<uint8_t>&, const std::string&, ir::Function&, std::string& err) const {
  err = "translating " + name() + " programs to IR is not supported yet";
  return false;
}

const std::vector<const IsaSupport*>& all_isas() {
  static const std::vector<const IsaSupport*> isas = {&pica200_support(), &tesla_support(), &g13_support(),
                                                       &bifrost_support()};
  return isas;
}

const IsaSupport* find_isa(const std::string& name) {
  for (auto* i : all_isas())
    if (i->name() == name) return i;
  return nullptr;
}

}  // namespace gpurc
