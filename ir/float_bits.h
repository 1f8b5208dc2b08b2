// Bit-level helpers for the IR float types (f16, f32, f64) shared by the
// scalar semantics, the interpreter and anyone who needs exact conversions.
// All functions take and return canonical lane bits (see types.h).
#pragma once
#include <cstdint>

#include "ir/types.h"

namespace gpurc::ir::fbits {

struct Format {
  unsigned width, mant_bits, exp_bits;
  constexpr uint64_t sign_bit() const { return 1ull << (width - 1); }
  constexpr uint64_t exp_field() const { return ((1ull << exp_bits) - 1) << mant_bits; }
  constexpr uint64_t mant_field() const { return (1ull << mant_bits) - 1; }
  constexpr uint64_t quiet_bit() const { return 1ull << (mant_bits - 1); }
};
// Format of a float type (f16, f32, f64); other types are not floats.
constexpr Format format(Type t) {
  return t == Type::F16 ? Format{16, 10, 5} : t == Type::F32 ? Format{32, 23, 8} : Format{64, 52, 11};
}

bool is_nan(uint64_t bits, Type t);
bool is_inf(uint64_t bits, Type t);
bool is_zero(uint64_t bits, Type t);       // +0 or -0
bool is_subnormal(uint64_t bits, Type t);  // nonzero with a zero exponent field
bool sign_of(uint64_t bits, Type t);
// Subnormal -> zero of the same sign; anything else unchanged.
uint64_t flush(uint64_t bits, Type t);

// Exact widening to double (every f16/f32/f64 value, NaN payloads kept in the
// top mantissa bits).
double to_double(uint64_t bits, Type t);
// Rounds a double to the type with the given rounding mode (one rounding, IEEE
// overflow rules: to infinity or to the largest finite value depending on the
// mode and sign). NaN input gives the canonical NaN of the type.
uint64_t from_double(double d, Type t, Round mode);

// Quiet NaN with the sign and the top mantissa bits of `bits` (a NaN of type
// `from`), in type `to`, with the quiet bit set.
uint64_t quiet_nan_as(uint64_t bits, Type from, Type to);
uint64_t canonical_nan(Type t);   // 0x7E00 / 0x7FC00000 / 0x7FF8000000000000
uint64_t all_ones_nan(Type t);    // 0x7FFF / 0x7FFFFFFF / 0x7FFFFFFFFFFFFFFF

}  // namespace gpurc::ir::fbits
