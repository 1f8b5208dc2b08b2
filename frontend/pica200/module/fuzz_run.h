// One PICA200 fuzz case run on the reference interpreter and on an engine of
// its translation, compared vertex by vertex: the pieces of the fuzz session
// (fuzz.cpp) that the tests use too.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "frontend/pica200/interp.h"
#include "frontend/pica200/module/fuzz_gen.h"
#include "frontend/pica200/translate.h"

namespace gpurc::ir {
struct Function;
class Executable;
}  // namespace gpurc::ir

namespace gpurc::fuzz {

// The reference interpreter's end state of a case (through rt::launch,
// pica::run_reference_each).
struct PicaReference {
  std::string error;                           // the reference faulted on a program without shared ends: a generator bug
  std::vector<std::string> faults;             // per vertex: the reference's fault ("" = reached END)
  bool skipped = false;                        // the reference ran out of its instruction budget: not compared
  std::vector<pica::VertexState> expected;     // reference end states
  std::vector<pica::GsState> expected_gs;      // geometry programs: per vertex
  uint32_t emit_capacity = pica::kEmitMaxPerInvocation;  // records per lane of the engines' emit area (>= every EMIT count)
};
PicaReference run_pica200_reference(const PicaCase& c, const pica::fp::Options& fp = {});

// The translation of `c` (its entry and type) with `fp` and `stacks` (the
// CALL/IF/LOOP stack translation, pica::StackMode). False with `err`
// ("translation failed: ...").
// With `draw_only`, a vertex program is translated under the draw contract
// (pica::TranslateOptions::draw_only): its temporaries, a0, aL and cmp are
// private to the run (the case's inputs start them at zero, as draws do).
bool translate_pica200_case(const PicaCase& c, const pica::fp::Options& fp, pica::StackMode stacks, ir::Function& out,
                            std::string& err, bool draw_only = false);

// The translation on one engine: `exe` runs `translation` (or a copy with
// more vars after the guest's: `vars_bytes` is what it needs), one warp of
// 32 vertices per rt::launch, each warp from its vertices' inputs.
struct PicaEngineRun {
  std::string diff;                          // a difference seen while running (a warp's status), or why it could not run
  uint64_t runs = 0;                         // warps run (the campaign's "runs compared")
  std::vector<pica::VertexState> states;     // end states
  std::vector<pica::GsState> gs;             // geometry programs: the emission states
};
// A warp that holds a vertex on which the reference faulted (possible only
// with shared ends: a stack overflow) must stop with a trap; any other must
// finish (the emit record area holds ref.emit_capacity records per lane). The run stops at the first warp that does not.
PicaEngineRun run_pica200_translated(const PicaCase& c, const PicaReference& ref, const ir::Function& translation,
                                     uint32_t vars_bytes, const ir::Executable& exe);

// "" if every vertex outside the faulting warps agrees: o, r, v, a0, aL, cmp
// bit for bit and, for geometry programs, the emission state (emit count,
// SETEMIT latch, the 4-entry buffer, the primitives); else the first
// difference (or got.diff).
std::string compare_pica200(const PicaCase& c, const PicaReference& ref, const PicaEngineRun& got);

// The replay document (docs/replay-format.md) of `c` with the reference
// outputs as `expect`; `note` goes into its description.
std::string pica200_replay_json(const PicaCase& c, const PicaReference& r, const std::string& name,
                                const std::string& note);

}  // namespace gpurc::fuzz
