// The guest ISAs the CLI and the public API offer: the modules of the
// registry (isa/module.h, recompiler/isa_registry.cpp) that are guest ISAs.
#pragma once
#include <string>
#include <vector>

#include "isa/module.h"

namespace gpurc {

// The guest ISAs in registry order (not isa "ir"); null if the name is unknown.
const std::vector<const isa::IsaModule*>& all_isas();
const isa::IsaModule* find_isa(const std::string& name);

}  // namespace gpurc
