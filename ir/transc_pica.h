// The PICA200 float model, one definition shared by the reference interpreter
// (frontend/pica200/interp.cpp, which names this namespace pica::fp) and, through
// the matching IR float flags and Transc::Pica (transc_pica.cpp), the
// translator and every IR engine. Header-only, standard library only.
//
// Registers hold IEEE fp32 values (the hardware computes in a 24-bit format;
// fp32 is this project's model, see docs/pica200.md). The rules:
//  - subnormal inputs and results are flushed to zero of the same sign in the
//    arithmetic ops; exceptions: CMP compares unflushed values, MAX returns its
//    selected operand unchanged, MOV/MOVA-free moves keep bits;
//  - a product of 0 and infinity is +0 (MUL, MAD, DP3/DP4/DPH, DST); NaN * 0 stays NaN;
//  - MAD is a multiply rounded to fp32 and then an add (not fused);
//  - NaN results of arithmetic are the canonical quiet NaN 0x7FC00000;
//  - MIN/MAX: (a < b) ? a : b and (a > b) ? a : b, so a NaN in either gives b;
//  - RCP(+-0) = +inf, RSQ(+-0) = +inf, RSQ(x < 0) = NaN, LG2(+-0) = -inf,
//    LG2(x < 0) = NaN, LG2(+inf) = +inf; EX2/LG2 are computed in double by the
//    fixed sequences of ex2_double / lg2_double and rounded once.
#pragma once
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

namespace gpurc::ir::pica_fp {

struct Options {
  // max(a, b) where b is +-inf returns b (so max(0, -inf) = -inf), as
  // Panda3DS models hardware; the default follows the plain (a > b) ? a : b
  // rule (max(0, -inf) = 0). Hardware truth is disputed: see docs/pica200.md.
  bool max_inf_quirk = false;
  // Registers hold float24 (1.7.16): every value an ALU instruction writes to
  // a register is rounded to it (round24). Off: plain fp32 (the default).
  bool f24 = false;
};

inline uint32_t bits(float f) { return std::bit_cast<uint32_t>(f); }
inline float from_bits(uint32_t b) { return std::bit_cast<float>(b); }
constexpr uint32_t kCanonicalNan = 0x7FC00000u;

inline float flush(float f) {
  uint32_t b = bits(f);
  if ((b & 0x7F800000u) == 0) return from_bits(b & 0x80000000u);
  return f;
}
inline float canon(float f) { return std::isnan(f) ? from_bits(kCanonicalNan) : f; }
// Result of an arithmetic op: NaN canonical, subnormal flushed.
inline float out(float f) { return flush(canon(f)); }

inline float mul(float a, float b) {
  a = flush(a);
  b = flush(b);
  if ((a == 0.0f && std::isinf(b)) || (std::isinf(a) && b == 0.0f)) return 0.0f;
  return out(a * b);
}
inline float add(float a, float b) { return out(flush(a) + flush(b)); }
inline float mad(float a, float b, float c) { return add(mul(a, b), c); }

// Dot products sum left to right: ((x + y) + z) + w, each step rounded to fp32.
inline float dp3(const float* a, const float* b) { return add(add(mul(a[0], b[0]), mul(a[1], b[1])), mul(a[2], b[2])); }
inline float dp4(const float* a, const float* b) { return add(dp3(a, b), mul(a[3], b[3])); }
// DPH: src1.w is taken as 1.0 (src1 homogenised): dp3 + src2.w.
inline float dph(const float* a, const float* b) { return add(dp3(a, b), b[3]); }

inline float fmax(float a, float b, const Options& o) {
  if (o.max_inf_quirk && std::isinf(b)) return b;
  return a > b ? a : b;
}
inline float fmin(float a, float b) {
  a = flush(a);
  b = flush(b);
  return a < b ? a : b;
}

inline float rcp(float x) {
  x = flush(x);
  if (x == 0.0f) return INFINITY;
  return out(1.0f / x);
}
inline float rsq(float x) {
  x = flush(x);
  if (x == 0.0f) return INFINITY;
  if (x < 0.0f || std::isnan(x)) return from_bits(kCanonicalNan);
  return out(float(1.0 / std::sqrt(double(x))));
}
// EX2 and LG2 are defined by the double-precision computations below
// (every step an IEEE double operation, fma where written), rounded to fp32
// once: the vector lowerings in backend_x64 perform the same operations, so
// every engine gives the same bits. Both are within ~2^-52 relative of the
// exact function before that last rounding (docs/pica200.md, "Float model",
// counts the fp32 inputs where the result differs from the correctly rounded
// one).
//
// EX2: x = k + r with k = nearest integer (ties to even) and |r| <= 1/2
// (exact), 2^r by the degree-13 Taylor polynomial of exp(r ln 2) in Horner
// form with fma, times 2^k (exact). x is clamped to [-160, 130] first (2^130
// rounds to +inf in fp32, 2^-160 to 0), which also covers +-inf.
struct Ex2Poly {
  double c[14];
};
constexpr Ex2Poly make_ex2_poly() {
  Ex2Poly p{};
  const double ln2 = 0x1.62e42fefa39efp-1;
  p.c[0] = 1.0;
  for (int i = 1; i < 14; ++i) p.c[i] = p.c[i - 1] * ln2 / double(i);
  return p;
}
inline constexpr Ex2Poly kEx2Poly = make_ex2_poly();
inline constexpr double kEx2Lo = -160.0, kEx2Hi = 130.0;
// k + kEx2Magic has the bits 0x4338000000000000 + 1023 + k (k integer, |k| < 2^50):
// shifted left by 52 they are the double 2^k.
inline constexpr double kEx2Magic = 0x1.8p52 + 1023.0;

inline double ex2_double(double xd) {
  xd = std::min(std::max(xd, kEx2Lo), kEx2Hi);
  const double k = std::nearbyint(xd);
  const double r = xd - k;
  double p = kEx2Poly.c[13];
  for (int i = 12; i >= 0; --i) p = std::fma(p, r, kEx2Poly.c[i]);
  const double scale = std::bit_cast<double>(std::bit_cast<uint64_t>(k + kEx2Magic) << 52);
  return p * scale;
}

inline float ex2(float x) {
  x = flush(x);
  if (std::isnan(x)) return from_bits(kCanonicalNan);
  return out(float(ex2_double(double(x))));
}

// LG2 of a positive normal x = m 2^e: m is moved into [sqrt(1/2), sqrt(2))
// (mantissa bits above those of fp32 sqrt(2): m / 2, e + 1), then
// log2(m) = 2 atanh(s) / ln 2 with s = (m - 1) / (m + 1), |s| < 0.1716: the
// odd series s * sum_k z^k 2 / ((2k + 1) ln 2), z = s^2, to k = 10 in Horner
// form with fma, and the result is fma(s, sum, e).
struct Lg2Poly {
  double c[11];
};
constexpr Lg2Poly make_lg2_poly() {
  Lg2Poly p{};
  const double two_over_ln2 = 2.0 / 0x1.62e42fefa39efp-1;
  for (int k = 0; k < 11; ++k) p.c[k] = two_over_ln2 / double(2 * k + 1);
  return p;
}
inline constexpr Lg2Poly kLg2Poly = make_lg2_poly();
inline constexpr uint32_t kLg2SqrtTwoBits = 0x3FB504F3u;  // fp32 sqrt(2) rounded to nearest

inline double lg2_double(uint32_t b) {  // b: a positive normal fp32
  int32_t e = int32_t(b >> 23) - 127;
  uint32_t mb = (b & 0x7FFFFFu) | 0x3F800000u;
  if (mb > kLg2SqrtTwoBits) {
    mb -= 0x00800000u;
    e += 1;
  }
  const double m = double(from_bits(mb));
  const double s = (m - 1.0) / (m + 1.0);
  const double z = s * s;
  double p = kLg2Poly.c[10];
  for (int k = 9; k >= 0; --k) p = std::fma(p, z, kLg2Poly.c[k]);
  return std::fma(s, p, double(e));
}

inline float lg2(float x) {
  x = flush(x);
  if (x == 0.0f) return -INFINITY;
  if (x < 0.0f || std::isnan(x)) return from_bits(kCanonicalNan);
  if (std::isinf(x)) return INFINITY;
  return out(float(lg2_double(bits(x))));
}
inline float flr(float x) { return out(std::floor(flush(x))); }
inline float sge(float a, float b) { return flush(a) >= flush(b) ? 1.0f : 0.0f; }
inline float slt(float a, float b) { return flush(a) < flush(b) ? 1.0f : 0.0f; }

// MOVA: truncation toward zero; NaN -> 0; out-of-range saturates to int32.
inline int32_t to_addr(float x) {
  if (std::isnan(x)) return 0;
  double t = std::trunc(double(x));
  if (t >= 2147483647.0) return INT32_MAX;
  if (t <= -2147483648.0) return INT32_MIN;
  return int32_t(t);
}

// LITP clamps src.y to +-(128 - 1/256), the largest 8.8 fixed-point magnitude.
constexpr float kLitpLimit = 127.99609375f;

// CMP operators 0..5 (eq ne lt le gt ge); 6 and 7 are always true. Unflushed.
inline bool compare(unsigned op, float a, float b) {
  switch (op & 7) {
    case 0: return a == b;
    case 1: return a != b;
    case 2: return a < b;
    case 3: return a <= b;
    case 4: return a > b;
    case 5: return a >= b;
    default: return true;
  }
}

// An fp32 value rounded to the float24 format (1 sign, 7 exponent bits with
// bias 63, 16 mantissa bits, no subnormals) and widened back: the mantissa
// is rounded to nearest, ties to even; a result of magnitude 2^64 or more
// becomes +-inf; below 2^-62 (f24's smallest normal) it becomes a zero of
// the same sign; inf and NaN are kept. Exact on f24 values.
inline float round24(float x) {
  uint32_t b = bits(x);
  if ((b & 0x7F800000u) == 0x7F800000u) return x;
  uint32_t sign = b & 0x80000000u, mag = b & 0x7FFFFFFFu;
  mag = (mag + 0x3Fu + ((mag >> 7) & 1u)) & ~0x7Fu;  // carries into the exponent when the mantissa overflows
  uint32_t e = mag >> 23;                            // fp32 biased exponent; f24's = e - 64
  if (e >= 191) return from_bits(sign | 0x7F800000u);
  if (e < 65) return from_bits(sign);
  return from_bits(sign | mag);
}

// float24 (1.7.16, exponent bias 63, no subnormals) as stored in SHBIN
// constant tables and uniform uploads.
inline float f24_to_f32(uint32_t v) {
  v &= 0xFFFFFF;
  uint32_t sign = (v >> 23) & 1, exp = (v >> 16) & 0x7F, mant = v & 0xFFFF;
  uint32_t out_bits;
  if (exp == 0) out_bits = sign << 31;
  else if (exp == 0x7F) out_bits = (sign << 31) | 0x7F800000u | (mant << 7);
  else out_bits = (sign << 31) | ((exp + 64) << 23) | (mant << 7);
  return from_bits(out_bits);
}
// Truncates the mantissa; out-of-range exponents become +-inf / +-0.
inline uint32_t f32_to_f24(float f) {
  uint32_t b = bits(f);
  uint32_t sign = b >> 31, exp = (b >> 23) & 0xFF, mant = (b & 0x7FFFFF) >> 7;
  if (exp == 0xFF) return (sign << 23) | (0x7Fu << 16) | (mant ? (mant | 1) : 0);
  int e = int(exp) - 127 + 63;
  if (exp == 0 || e <= 0) return sign << 23;
  if (e >= 0x7F) return (sign << 23) | (0x7Fu << 16);
  return (sign << 23) | (uint32_t(e) << 16) | mant;
}

}  // namespace gpurc::ir::pica_fp
