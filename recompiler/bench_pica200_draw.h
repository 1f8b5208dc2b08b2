// `gpurc bench --isa pica200`: the reference shaders of bench/pica200-reference
// driven the way a 3DS emulator drives its shader unit (bench_pica200_draw.cpp).
#pragma once
#include <ostream>

#include "recompiler/cli_verbs.h"
#include "recompiler/replay.h"

namespace gpurc::cli {

// Runs the emulator-style draw rows. With a.json the rows are appended to
// `json_rows` (an array), else a table goes to `out`. Returns 0, or 2 with a
// message on `err` when the reference shaders cannot be read.
int bench_pica200_draws(const BenchArgs& a, std::ostream& out, std::ostream& err, replay::json& json_rows);

}  // namespace gpurc::cli
