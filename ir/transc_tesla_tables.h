// The Tesla SFU lookup tables (transc_tesla_tables.cpp).
#pragma once
#include <cstdint>

namespace gpurc::ir::tesla_sfu {

struct SfuSlice {
  int32_t a, b, c;  // f, first and second order terms of one significand slice
};

extern const SfuSlice kRcpTab[128];    // 1/x on [1, 2), 128 slices
extern const SfuSlice kRsqrtTab[128];  // 1/sqrt(x): [1, 2) then [2, 4), 64 slices each
extern const SfuSlice kSinTab[64];     // sin of a quarter turn fraction on [0, 1)
extern const SfuSlice kEx2Tab[64];     // 2^x / 2 on [0, 1)
extern const SfuSlice kLg2Tab[64];     // log2(x) on [1, 2)

}  // namespace gpurc::ir::tesla_sfu
