// Random generator of valid, well-typed pre-SSA IR functions (the form the
// translators produce) for the IR differential fuzzer. See docs/fuzzing.md for
// what is generated and which IR rules keep the programs deterministic.
#pragma once
#include <cstdint>
#include <string>

#include "ir/ir.h"
#include "isa/fuzz_values.h"

namespace gpurc::fuzz {

// The guest memory every generated program sees: one global buffer.
// Layout (offsets from kGlobalBase), chosen so that no two lanes ever touch the
// same bytes with a store or an atomic (their order would depend on how
// divergent paths are scheduled, which the IR does not fix):
//   per access size s in {1, 2, 4, 8}, a private area of 8 rows x 32 lanes x s
//   bytes: lane l owns element row * 32 + l. Loads at points where the whole
//   warp is converged may read any aligned address of the buffer.
// kGlobalBase, kGlobalSize: isa/fuzz_values.h (the ISA generators share them).
constexpr uint32_t kPrivateRows = 8;
constexpr uint32_t private_area_offset(unsigned size) {
  return size == 1 ? 0 : size == 2 ? 256 : size == 4 ? 768 : 1792;  // ends at 3840
}
// Far outside the buffer: the address of a deliberate out-of-bounds access.
constexpr uint64_t kOutOfBoundsBase = 0x400000;
constexpr uint32_t kUniformBytes = 64;

struct IrGenOptions {
  int min_insts = 8;           // rough size of the program in generated operations
  int max_insts = 30;
  int max_depth = 3;           // nesting of divergent regions
  bool faults = true;          // occasionally one trap or out-of-bounds access in a divergent region
  bool barriers = true;
  bool irreducible = true;
  bool cross_lane = true;
  bool control_flow = true;    // false: one straight-line block
  bool memory = true;
};

// Builds a function from `seed`. The same seed and options always give the
// same function. The result has passed ir::verify; if it does not (a
// generator bug), `error` is set and the function must not be used.
ir::Function generate_ir(uint64_t seed, const IrGenOptions& opt, std::string* error);

}  // namespace gpurc::fuzz
