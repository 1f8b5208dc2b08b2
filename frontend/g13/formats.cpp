// G13 memory formats: see formats.h.
#include "frontend/g13/formats.h"

#include <cmath>

#include "frontend/g13/fp.h"

namespace gpurc::g13::memfmt {

namespace {
int64_t sext(uint64_t v, unsigned bits) { return int64_t(v << (64 - bits)) >> (64 - bits); }
double norm_scale(unsigned f) {
  return f == kU8Norm ? 255.0 : f == kS8Norm ? 127.0 : f == kU16Norm ? 65535.0 : 32767.0;
}
}  // namespace

unsigned element_bytes(unsigned f) {
  switch (f) {
    case kI8: case kU8Norm: case kS8Norm: case kSrgba8: return 1;
    case kI16: case kF16: case kU16Norm: case kS16Norm: return 2;
    case kI32: case kRgb10a2: case kRg11b10f: case kRgb9e5: case kRg11b10fRtz: case kRgb9e5Rtz: return 4;
    default: return 0;
  }
}

bool bit_packed(unsigned f) { return f == kRgb10a2 || (f >= kRg11b10f && f <= kRgb9e5Rtz); }
unsigned packed_registers(unsigned f) { return f == kRgb10a2 ? 4 : 3; }

unsigned srgb_level(unsigned v) {
  const double c = double(v & 0xFF) / 255.0;
  const double lin = c <= 0.04045 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4);
  // 4095 * lin is never within 1.6e-4 of a half-integer (checked for all 256
  // inputs), so any accurate pow gives the same level.
  return unsigned(std::nearbyint(lin * 4095.0));
}

uint16_t float11_to_f16(uint32_t bits) {
  bits &= 0x7FF;
  return bits > 0x7C0 ? fp::kNaN16 : uint16_t(bits << 4);
}
uint16_t float10_to_f16(uint32_t bits) {
  bits &= 0x3FF;
  return bits > 0x3E0 ? fp::kNaN16 : uint16_t(bits << 5);
}

uint64_t load_component(unsigned f, uint64_t bits, unsigned component, unsigned reg_bits) {
  double x;
  switch (f) {
    case kU8Norm: case kU16Norm: x = double(bits & (f == kU8Norm ? 0xFF : 0xFFFF)) / norm_scale(f); break;
    case kS8Norm: case kS16Norm: {
      int64_t s = sext(bits, f == kS8Norm ? 8 : 16);
      const double scale = norm_scale(f);
      if (s < -int64_t(scale)) s = -int64_t(scale);
      x = double(s) / scale;
      break;
    }
    case kRgb10a2:
      x = component < 3 ? double(bits >> (10 * component) & 1023) / 1023.0 : double(bits >> 30 & 3) / 3.0;
      break;
    case kSrgba8: {
      if (component == 3) {
        x = double(bits & 0xFF) / 255.0;
        break;
      }
      const uint32_t f32 = fp::f64_to_f32_ftz(double(srgb_level(unsigned(bits))) / 4095.0);
      return reg_bits == 32 ? f32 : fp::f64_to_f16(fp::f32_to_f64_ftz(f32));
    }
    case kRg11b10f: case kRg11b10fRtz: {
      const uint16_t h = component < 2 ? float11_to_f16(uint32_t(bits >> (11 * component)))
                                       : float10_to_f16(uint32_t(bits >> 22));
      if (reg_bits == 16) return h;
      x = fp::f16_to_f64(h);
      break;
    }
    case kRgb9e5: case kRgb9e5Rtz:
      x = std::ldexp(double(bits >> (9 * component) & 511), int(bits >> 27 & 31) - 24);
      break;
    default: return bits;  // i8/i16/i32/f16: raw, zero-extended
  }
  return reg_bits == 32 ? fp::f64_to_f32_ftz(x) : fp::f64_to_f16(x);
}

uint64_t store_element(unsigned f, uint64_t reg, unsigned reg_bits) {
  if (f < kU8Norm) return reg;
  double x = reg_bits == 32 ? fp::f32_to_f64_ftz(uint32_t(reg)) : fp::f16_to_f64(uint16_t(reg));
  if (std::isnan(x)) x = 0;
  const bool snorm = f == kS8Norm || f == kS16Norm;
  const double scale = norm_scale(f);
  x = std::fmin(std::fmax(x, snorm ? -1.0 : 0.0), 1.0);
  return uint64_t(int64_t(std::nearbyint(x * scale)));
}

}  // namespace gpurc::g13::memfmt
