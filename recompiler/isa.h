// The guest ISAs the CLI and the public API offer: the modules of the
// registry (isa/module.h, recompiler/isa_registry.cpp) that are guest ISAs.
#pragma once
#include <string>
#include <vector>

#include "isa/module.h"

namespace gpurc {

// Transitional name of isa::IsaModule (the CLI interface it grew from).
using IsaSupport = isa::IsaModule;

// The guest ISAs in registry order (not isa "ir"); null if the name is unknown.
const std::vector<const IsaSupport*>& all_isas();
const IsaSupport* find_isa(const std::string& name);

// Transitional accessors for the ISAs' tests: = *find_isa("<isa>"). A
// migrated ISA's tests use find_isa and its accessor goes.

}  // namespace gpurc
