// Random valid PICA200 shaders for the differential fuzzer (fuzz.cpp, fuzz_run.h).
//
// Instruction words come from the encoding table (pica::random_word: every
// field random), then the fields that must satisfy a rule are fixed:
// descriptor indices inside the table, flow-control targets. Control flow is
// generated structurally so every program is valid and terminates:
//  - IFU/IFC regions (then block, optional else block), LOOP regions (body
//    run i.x + 1 times, i.x kept small), CALL/CALLC/CALLU of subroutines
//    (acyclic: a subroutine only calls earlier ones), nested within the
//    hardware stack depths (CALL 4, IF 8, LOOP 4);
//  - JMPC/JMPU only forward, inside the block they are in (at most to its end);
//  - BREAK/BREAKC only directly in a loop body;
//  - usually no two regions end on the same address (a plain instruction
//    follows every region that would close a block); in `shared_ends_percent`
//    of the programs they may, so the hardware's end-check priorities (one
//    check per stack, LOOP then IF then CALL) decide the outcome: a skipped
//    check leaves a stale frame behind, which may later overflow a stack
//    (the reference faults; the engines must trap in that warp);
//  - END sometimes inside a region, always at the end of the main block;
//  - geometry programs (some of them) add SETEMIT/EMIT.
// Inputs (v registers) and float uniforms are biased to special floats.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "frontend/pica200/interp.h"

namespace gpurc::fuzz {

struct PicaGenOptions {
  int max_statements = 10;      // per block at the top level (fewer deeper down)
  int max_depth = 4;            // nesting of IF/LOOP regions
  int max_subroutines = 3;
  unsigned geometry_percent = 15;
  unsigned max_vertices = 70;
  unsigned shared_ends_percent = 20;
  // Vertex programs ending in plain copies `mov oN, vM` (identity swizzle,
  // full mask) to o-registers nothing else writes: the pass-through
  // registers prepare_shader takes out of the code (drop_pass_through).
  unsigned pass_through_percent = 25;
};

struct PicaCase {
  pica::Program program;
  pica::Uniforms uniforms;
  uint32_t entry = 0;
  bool geometry = false;
  bool shared_ends = false;  // regions may end on the same word (see above)
  std::vector<pica::VertexState> inputs;  // v set, everything else zero
};

// Same seed and options, same case, on every host (isa/rng.h).
PicaCase generate_pica200(uint64_t seed, const PicaGenOptions& opt = {});

// The seed of program `iteration` of a campaign started with `seed`.
uint64_t pica200_program_seed(uint64_t seed, uint64_t iteration);

}  // namespace gpurc::fuzz
