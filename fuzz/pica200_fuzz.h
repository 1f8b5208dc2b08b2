// One PICA200 fuzz case run on the reference interpreter and on the engines
// of the translation, for run_pica200_fuzz (fuzz/isa_fuzz.h) and the tests.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "frontend/pica200/interp.h"
#include "frontend/pica200/translate.h"
#include "fuzz/pica200_gen.h"

namespace gpurc::fuzz {

// Engine names: "ir-interp" (the IR interpreter on the translated function as
// given) and the JIT tiers of fuzz/ir_run.h ("avx512", "avx2", "a64").
struct PicaEngineDiff {
  std::string engine;
  std::string what;  // first difference, or why the engine could not run
};

struct PicaCaseResult {
  std::string error;                           // the reference faulted on a program without shared ends: a generator bug
  std::vector<std::string> faults;             // per vertex: the reference's fault ("" = reached END)
  bool skipped = false;                        // the reference ran out of its instruction budget: not compared
  std::vector<pica::VertexState> expected;     // reference end states
  std::vector<pica::GsState> expected_gs;      // geometry programs: per vertex
  std::vector<PicaEngineDiff> diffs;           // one per disagreeing engine ("translate" if translation failed)
  uint64_t runs = 0;                           // engine executions compared
};

// Runs `c` on the reference interpreter, then on every engine in `engines`,
// comparing every vertex's o, r, a0, aL, cmp and v bit for bit, and for
// geometry programs its emission state (emit count, SETEMIT latch, the
// 4-entry buffer, the primitives; read back with pica::unpack_emits). A warp
// that holds a vertex on which the reference faulted (possible only with
// shared ends: a stack overflow) must stop with a trap instead; its state is
// not compared. The emit record area holds as many records per lane as the
// reference emitted (up to pica::kEmitCapacityLimit). `stacks` chooses the translation of
// the CALL/IF/LOOP stacks (pica::StackMode).
PicaCaseResult run_pica200_case(const PicaCase& c, const std::vector<std::string>& engines,
                                const pica::fp::Options& fp = {}, pica::StackMode stacks = pica::StackMode::Auto);

// The replay document (../shared/docs/replay-format.md) of `c` with the
// reference outputs as `expect`; `note` goes into its description.
std::string pica200_replay_json(const PicaCase& c, const PicaCaseResult& r, const std::string& name,
                                const std::string& note);

}  // namespace gpurc::fuzz
