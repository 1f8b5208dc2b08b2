// The registry of ISA modules (isa/module.h): the one list that names them.
// Adding an ISA is one X(<isa>) line here (its module defines
// `const isa::IsaModule& <isa>_module()`, frontend/<isa>/module/module.cpp)
// plus its folder and CMake lines (docs/architecture.md, "Adding an ISA").
// A list rather than static-initialiser registration, which a static
// library would drop. The order is the order of every listing (CLI help,
// error messages, `gpurc replay` handlers).
#include "isa/module.h"

#define GPURC_ISA_MODULES(X) \
  X(ir)                      \
  X(pica200)                 \
  X(tesla)                   \
  X(g13)                     \
  X(bifrost)

namespace gpurc {

#define GPURC_DECLARE_MODULE(name) const isa::IsaModule& name##_module();
GPURC_ISA_MODULES(GPURC_DECLARE_MODULE)
#undef GPURC_DECLARE_MODULE

namespace isa {

const std::vector<const IsaModule*>& all_modules() {
#define GPURC_LIST_MODULE(name) &name##_module(),
  static const std::vector<const IsaModule*> modules = {GPURC_ISA_MODULES(GPURC_LIST_MODULE)};
#undef GPURC_LIST_MODULE
  return modules;
}

// Here, not in isa/module.cpp: the isa library must not call back into this
// one (a static link resolves left to right; with the libraries in unity
// batches module.cpp shares an object with code every test pulls in).
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

}  // namespace isa
}  // namespace gpurc
