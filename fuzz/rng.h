// Moved: isa/rng.h (ISA modules draw from it too).
#pragma once
#include "isa/rng.h"
