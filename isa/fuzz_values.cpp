#include "isa/fuzz_values.h"

namespace gpurc::fuzz {

using namespace ir;

uint64_t interesting_bits(Rng& rng, Type t) {
  const uint64_t mask = type_mask(t);
  if (t == Type::I1) return rng.below(2);
  if (is_int(t)) {
    const unsigned w = bit_width(t);
    switch (rng.below(9)) {
      case 0: return 0;
      case 1: return 1;
      case 2: return mask;                                  // -1
      case 3: return (1ull << (w - 1)) & mask;              // signed minimum
      case 4: return ((1ull << (w - 1)) - 1) & mask;        // signed maximum
      case 5: return rng.below(17);
      case 6: return (0 - uint64_t(rng.below(17))) & mask;  // small negative
      case 7: return rng.next() & (mask >> rng.below(w));   // random width
      default: return rng.next() & mask;
    }
  }
  // IEEE formats, described by exponent and mantissa widths.
  const unsigned e = t == Type::F16 ? 5 : t == Type::F32 ? 8 : 11;
  const unsigned m = bit_width(t) - 1 - e;
  const uint64_t mant_mask = (1ull << m) - 1;
  const uint64_t exp_all = ((1ull << e) - 1) << m;
  const uint64_t bias = (1ull << (e - 1)) - 1;
  const uint64_t sign = rng.chance(40) ? 1ull << (e + m) : 0;
  uint64_t mag = 0;
  switch (rng.below(12)) {
    case 0: mag = 0; break;
    case 1: mag = (rng.next() & mant_mask) | 1; break;                       // subnormal
    case 2: mag = rng.chance(50) ? 1 : mant_mask; break;                       // smallest / largest subnormal
    case 3: mag = exp_all; break;                                              // inf
    case 4: mag = exp_all | (1ull << (m - 1)); break;                          // canonical quiet NaN
    case 5: mag = exp_all | ((rng.next() & mant_mask) | 1); break;             // NaN with payload (maybe signalling)
    case 6: mag = bias << m; break;                                            // 1.0
    case 7: mag = rng.chance(50) ? (exp_all - (1ull << m)) | mant_mask : 1ull << m; break;  // max finite / min normal
    case 8: return rng.next() & mask;
    default:                                                                   // moderate numbers
      mag = ((bias + uint64_t(rng.range(-4, 12))) << m) | (rng.chance(50) ? 0 : rng.next() & mant_mask & ~(mant_mask >> 4));
      break;
  }
  return (sign | mag) & mask;
}

}  // namespace gpurc::fuzz
