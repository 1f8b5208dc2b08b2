// Tesla reproducers: a generated program as a replay file that a standard
// tesla replay run reproduces exactly. The replay format has no field for
// initial registers, so the file's entry point is a prologue placed after the
// program: it copies the initial s[] from g14[], loads each thread's
// $r0..$r31, $a and $c from the "init" buffer (g15[], one
// kTeslaReproStride-byte record per thread, indexed by tid.x) and branches to
// word 0.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "frontend/tesla/module/fuzz_gen.h"

namespace gpurc::fuzz {

constexpr uint32_t kTeslaReproStride = 0x100;  // per thread: $r0..$r31 at 0, then:
constexpr uint32_t kTeslaReproA = 0x80;        // $a0..$a7 (u32 each)
constexpr uint32_t kTeslaReproC = 0xa0;        // $c0..$c3 (u32 each)
constexpr int kTeslaReproInitBank = 15;    // g15[]: the per-thread records
constexpr int kTeslaReproSharedBank = 14;  // g14[]: the initial s[] image the prologue copies
// Mismatches per campaign that also get a minimised reproducer ("-min").
constexpr uint64_t kTeslaMaxMinimized = 10;

// `p`'s words followed by the prologue (entry = its word address), and the
// bytes of the init buffer.
bool tesla_replay_prologue(const TeslaProgram& p, std::vector<uint32_t>& words, uint32_t& entry,
                           std::vector<uint8_t>& init, std::string& err);
// Program `iteration` of campaign `seed` exactly as the fuzz session makes it
// (instructions the translator refuses are skipped, so the program depends on
// the translator's coverage as well as on the seed).
bool tesla_fuzz_program(const std::string& variant, uint64_t seed, uint64_t iteration, TeslaProgram& out,
                        std::string& err);
// The replay document (docs/fuzzing.md "tesla").
std::string tesla_replay_json(const TeslaProgram& p, const std::string& name, const std::string& description);

}  // namespace gpurc::fuzz
