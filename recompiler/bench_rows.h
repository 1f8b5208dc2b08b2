// The reference rows `gpurc bench` measures beside an ISA's kernels, in the
// same run: a memcpy baseline for memory-bound kernels and ceiling kernels
// (IR built in code) for arithmetic ones, so every kernel row can say how
// far it is from what this host reaches.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "recompiler/replay.h"

namespace gpurc::cli::bench_rows {

// The compulsory guest-memory traffic of a kernel replay document, in bytes:
// every buffer with an `init` is read once, every buffer `expect.memory`
// names is written once (saxpy: x and y read, y written), and so is every
// buffer without an `init` that `run` (a run of the document) left non-zero
// (vector_add's c). 0 = no buffers.
uint64_t traffic_bytes(const replay::json& doc, const replay::ReplayRun* run = nullptr);

// Bytes per second std::memcpy moves (bytes read + bytes written) over a
// working set of `traffic` bytes (a copy of traffic / 2 bytes), best of
// repeated copies lasting about `seconds`.
double memcpy_bytes_per_s(uint64_t traffic, double seconds);

// An IR kernel whose lane-operations are all of one kind (independent
// chains of f32 fma, or of i32 iadd), built as a replay document of isa `ir`.
struct Ceiling {
  std::string name;    // "ceiling-fma", "ceiling-iadd"
  replay::json doc;    // isa ir, program.asm inline
  uint64_t lane_ops;   // the arithmetic lane-operations one launch executes
};
// For a JIT tier with `vector_registers` vector registers (AVX2 16, AVX-512
// and A64 32): the same chains, in the order that fits its registers.
std::vector<Ceiling> ceiling_kernels(unsigned vector_registers);

}  // namespace gpurc::cli::bench_rows
