// The compile rows of `gpurc bench --isa pica200` (bench_pica200_compile.cpp):
// cold and cached compile times of the public PICA200 API, per JIT tier, with
// where a cold compile spends its time (ir/compile_stages.h).
#pragma once
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "recompiler/replay.h"

namespace gpurc::cli {

struct CompileRow {
  std::string kernel, engine;
  size_t words = 0;         // program words of the shader (before the program memory's filler)
  size_t reachable = 0;     // words of reachable code the cache key hashes (pica::append_reachable_code)
  double cold_us = 0;       // median of cold compiles (every cache cleared)
  double cold_best_us = 0;  // best cold compile
  // Median of the same compiles in the calling thread's CPU time: on a
  // loaded machine the wall clock also counts the time other processes ran
  // (a compile longer than a scheduler slice is often preempted), so this is
  // the figure to compare across sizes and runs.
  double cold_cpu_us = 0;
  double cached_us = 0;     // mean of a cache hit; negative when the repeat was not a hit
  // Per stage, in the order a compile runs them: the mean time over the
  // faster half of the cold compiles (the half a loaded machine disturbed
  // least). Stages never overlap; `stages_total_us` is the mean total of the
  // same compiles, so what no stage covers is the difference.
  std::vector<std::pair<std::string, double>> stages;
  double stages_total_us = 0;
  double decode_us = 0;     // decoding the reachable words alone, measured apart (a part of translate)
};

// Measures every row; each cold figure repeats for about `seconds`.
std::vector<CompileRow> bench_pica200_compile(double seconds);
// With `stages`, each row's breakdown follows the table.
void print_pica200_compile(const std::vector<CompileRow>& rows, std::ostream& out, bool stages = false);
// A row's stages for --json: [{"stage": name, "us": time}, ...] (the rest as "outside the stages").
replay::json compile_stages_json(const CompileRow& row);

}  // namespace gpurc::cli
