// What every fuzz generator shares (the IR fuzzer and the ISA modules' fuzz
// sessions): the one global buffer generated programs see, and random lane
// values biased to the values that break implementations. Drawing order is
// part of each generator's random stream: changing these functions changes
// every campaign's programs.
#pragma once
#include <cstdint>

#include "ir/types.h"
#include "isa/rng.h"

namespace gpurc::fuzz {

// The global buffer of generated programs (IR fuzzer layout: fuzz/ir_gen.h).
constexpr uint64_t kGlobalBase = 0x10000;
constexpr uint32_t kGlobalSize = 4096;

// A random value of type `t` as canonical lane bits, biased towards the values
// that break implementations: for floats 0, -0, subnormals, +-inf, NaNs with
// payloads (quiet and signalling), 1, -1, the extremes and random bits; for
// integers 0, 1, -1, the signed extremes, small numbers and random bits.
uint64_t interesting_bits(Rng& rng, ir::Type t);

}  // namespace gpurc::fuzz
