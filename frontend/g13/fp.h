// G13 floating-point rules (g13-encodings.md §4.2-4.3): exact FMA rounded
// once, f32 flush-to-zero on inputs and outputs, f16 without flush, double
// rounding for 32-bit ops writing 16-bit registers, saturation, default NaNs,
// and this project's definitions of the transcendental ops.
#pragma once
#include <cstdint>

namespace gpurc::g13::fp {

constexpr uint32_t kNaN32 = 0x7FC00000u;
constexpr uint16_t kNaN16 = 0x7E00u;

double f16_to_f64(uint16_t h);
double f32_to_f64_ftz(uint32_t f);       // subnormal inputs -> signed zero
uint16_t f64_to_f16(double x);           // round to nearest even, gradual underflow, NaN -> default
uint32_t f64_to_f32_ftz(double x);       // |x| < 2^-126 -> signed zero, else RNE; NaN -> default

// a*b + c for operands that are f32/f16 values: the exact result rounded to
// odd in double precision, so one later rounding to f32/f16 is exact.
double fma_round_odd(double a, double b, double c);
// Saturation of the (round-to-odd) exact result: NaN or sign set -> +0, > 1 -> 1.
double saturate(double x);

// Result write-back: 32-bit destination -> f32 bits with FTZ; 16-bit -> f16
// bits (from a 32-bit op: rounded to f32 with FTZ first, then to f16).
uint32_t to_dest(double x, unsigned dest_bits, bool op32);

// Unary ops (computed in double, rounded once to the destination; the
// transcendental results are this project's model, not bit-exact hardware).
double rcp(double x);
double rsqrt(double x);
double rsqrt_special(double x);  // sqrt(x) = rsqrt_special(x) * x, also at 0 and +inf
double sin_pt_1(double x);       // quarter turns in [0,4) -> reduced y in [-1,1]
double sin_pt_2(double y);       // sin(y*pi/2) / y (pi/2 at 0)
double log2(double x);
double exp2(double x);
double rint(double x);           // nearest, ties to even

}  // namespace gpurc::g13::fp
