// Moved: isa/lane_count.h (shared by the ISA modules).
#pragma once
#include "isa/lane_count.h"
