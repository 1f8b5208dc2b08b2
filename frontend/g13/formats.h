// G13 memory formats (g13-encodings.md §3.9 format table; conversions as
// applegpu's device_load model defines them): element sizes, which formats
// are bit-packed, and the conversion of loaded bits to register bits. The
// interpreter calls these; the translation (translate_memory.cpp) emits the
// same arithmetic as IR, and the tests hold both to these definitions.
#pragma once
#include <cstdint>

namespace gpurc::g13::memfmt {

enum : unsigned {
  kI8 = 0, kI16 = 1, kI32 = 2, kF16 = 3,
  kU8Norm = 4, kS8Norm = 5, kU16Norm = 6, kS16Norm = 7,
  kRgb10a2 = 8, kSrgba8 = 10, kRg11b10f = 12, kRgb9e5 = 13, kRg11b10fRtz = 14, kRgb9e5Rtz = 15,
};

// Bytes of one element; bit-packed formats: 4 (the word). 0: no format (9, 11).
unsigned element_bytes(unsigned f);
// rgb10a2, rg11b10f, rgb9e5 (and the .rtz forms): a load reads one aligned
// 32-bit word at (base & ~3) + 4 * offset, ignoring the shift and the mask,
// and writes packed_registers(f) consecutive registers.
bool bit_packed(unsigned f);
unsigned packed_registers(unsigned f);  // rgb10a2: 4 (r, g, b, a); rg11b10f, rgb9e5: 3

// The sRGB -> linear curve as M1 hardware applies it (applegpu's measured
// table, srgb.py): the IEC 61966-2-1 curve quantised to 12 bits, i.e. level
// k = round(4095 * L(v / 255)) with L(c) = c / 12.92 for c <= 0.04045 and
// ((c + 0.055) / 1.055)^2.4 above; the value is k / 4095 rounded to f32.
unsigned srgb_level(unsigned v);
// Unsigned 11- and 10-bit floats (5-bit exponent, bias 15, as f16 without
// sign) -> f16 bits: exact; exponent 31 is +inf (fraction 0) or NaN (default NaN).
uint16_t float11_to_f16(uint32_t bits);
uint16_t float10_to_f16(uint32_t bits);

// Register bits (reg_bits 16 or 32) of a load: `bits` is the element read
// (bit-packed formats: the 32-bit word) and `component` the mask bit it was
// read for (bit-packed: the register index 0..3). Integer formats and f16:
// the bits, zero-extended. Normalised and packed formats: the value rounded
// to f32 (flush) or f16 per the register size (srgba8 into a 16-bit register:
// the f32 value rounded again to f16, as applegpu's table is f32).
uint64_t load_component(unsigned f, uint64_t bits, unsigned component, unsigned reg_bits);
// Element bits a store writes for formats 0-7 (norm formats: clamp, scale,
// round to nearest even, NaN -> 0). Packed formats have no store model.
uint64_t store_element(unsigned f, uint64_t reg, unsigned reg_bits);

}  // namespace gpurc::g13::memfmt
