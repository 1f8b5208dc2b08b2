// The compile rows of `gpurc bench --isa pica200` (bench_pica200_compile.cpp):
// cold and cached compile times of the public PICA200 API, per JIT tier.
#pragma once
#include <ostream>
#include <string>
#include <vector>

namespace gpurc::cli {

struct CompileRow {
  std::string kernel, engine;
  size_t words = 0;         // program words of the shader (before the program memory's filler)
  size_t reachable = 0;     // words of reachable code the cache key hashes (pica::append_reachable_code)
  double cold_us = 0;       // median of cold compiles (every cache cleared)
  double cold_best_us = 0;  // best cold compile
  double cached_us = 0;     // mean of a cache hit; negative when the repeat was not a hit
};

// Measures every row; each cold figure repeats for about `seconds`.
std::vector<CompileRow> bench_pica200_compile(double seconds);
void print_pica200_compile(const std::vector<CompileRow>& rows, std::ostream& out);

}  // namespace gpurc::cli
