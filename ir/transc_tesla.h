// The NVIDIA Tesla SFU model (rcp, rsqrt, lg2, sin, cos, ex2 and the
// presin/preex2 range reductions) on f32 bit patterns: the one definition the
// Tesla reference interpreter (frontend/tesla/semantics.cpp) and the IR's
// Transc::Tesla variant (transc_tesla.cpp) both call.
//
// Fixed-point format of presin/preex2 results (and of sin/cos/ex2 inputs):
// sign bit + 7.23 unsigned magnitude; 0x40000000 marks NaN, 0x40800000
// infinity (envydis g80 notes).
#pragma once
#include <cstdint>

namespace gpurc::ir::tesla_sfu {

constexpr uint32_t kNaN = 0x7fffffffu;  // the Tesla float NaN result

uint32_t rcp(uint32_t a);    // FTZ in/out, NaN -> kNaN
uint32_t rsqrt(uint32_t a);
uint32_t lg2(uint32_t a);
uint32_t ex2(uint32_t fixed);
uint32_t sin(uint32_t fixed);  // argument in quarter turns (fixed point)
uint32_t cos(uint32_t fixed);
uint32_t presin(uint32_t a);   // float radians -> quarter turns mod 4, fixed point
uint32_t preex2(uint32_t a);   // float -> fixed point

}  // namespace gpurc::ir::tesla_sfu
