#include "ir/float_bits.h"

#include <bit>
#include <cmath>
#include <cstring>

namespace gpurc::ir::fbits {

namespace {
uint64_t dbits(double d) { return std::bit_cast<uint64_t>(d); }
double from_dbits(uint64_t b) { return std::bit_cast<double>(b); }
uint64_t fmask(const Format& f) { return f.width >= 64 ? ~0ull : ((1ull << f.width) - 1); }
}  // namespace

bool is_nan(uint64_t b, Type t) {
  Format f = format(t);
  return (b & f.exp_field()) == f.exp_field() && (b & f.mant_field()) != 0;
}
bool is_inf(uint64_t b, Type t) {
  Format f = format(t);
  return (b & f.exp_field()) == f.exp_field() && (b & f.mant_field()) == 0;
}
bool is_zero(uint64_t b, Type t) { return (b & fmask(format(t)) & ~format(t).sign_bit()) == 0; }
bool is_subnormal(uint64_t b, Type t) {
  Format f = format(t);
  return (b & f.exp_field()) == 0 && (b & f.mant_field()) != 0;
}
bool sign_of(uint64_t b, Type t) { return (b & format(t).sign_bit()) != 0; }
uint64_t flush(uint64_t b, Type t) { return is_subnormal(b, t) ? (b & format(t).sign_bit()) : b; }

double to_double(uint64_t b, Type t) {
  if (t == Type::F64) return from_dbits(b);
  Format f = format(t);
  bool neg = (b & f.sign_bit()) != 0;
  uint64_t e = (b & f.exp_field()) >> f.mant_bits;
  uint64_t m = b & f.mant_field();
  uint64_t dsign = uint64_t(neg) << 63;
  if (e == (1ull << f.exp_bits) - 1)  // inf / NaN: keep the payload at the top of the mantissa
    return from_dbits(dsign | (0x7ffull << 52) | (m << (52 - f.mant_bits)));
  int bias = (1 << (f.exp_bits - 1)) - 1;
  double mag = e == 0 ? std::ldexp(double(m), 1 - bias - int(f.mant_bits))
                      : std::ldexp(double(m | (1ull << f.mant_bits)), int(e) - bias - int(f.mant_bits));
  return neg ? -mag : mag;
}

uint64_t from_double(double d, Type t, Round mode) {
  if (std::isnan(d)) return canonical_nan(t);
  if (t == Type::F64) return dbits(d);
  Format f = format(t);
  uint64_t db = dbits(d);
  bool neg = (db >> 63) != 0;
  uint64_t sign = neg ? f.sign_bit() : 0;
  int de = int((db >> 52) & 0x7ff);
  uint64_t dm = db & ((1ull << 52) - 1);
  if (de == 0x7ff) return sign | f.exp_field();
  if (de == 0 && dm == 0) return sign;
  int bias = (1 << (f.exp_bits - 1)) - 1;
  int emin = 1 - bias, emax = bias, M = int(f.mant_bits);
  auto overflow = [&]() -> uint64_t {
    bool to_inf = mode == Round::NearestEven || (mode == Round::Up && !neg) || (mode == Round::Down && neg);
    return sign | (to_inf ? f.exp_field() : f.exp_field() - 1);
  };
  // |d| = sig * 2^ex exactly.
  uint64_t sig = de == 0 ? dm : (dm | (1ull << 52));
  int ex = de == 0 ? -1074 : de - 1075;
  int lg = (63 - std::countl_zero(sig)) + ex;  // floor(log2 |d|)
  if (lg > emax) return overflow();
  int qexp = (lg < emin ? emin : lg) - M;      // exponent of the result's last mantissa bit
  int s = qexp - ex;                           // > 0: a double has more mantissa bits
  uint64_t k;
  bool round_bit, sticky;
  if (s > 64) {
    k = 0, round_bit = false, sticky = true;
  } else if (s == 64) {
    k = 0, round_bit = (sig >> 63) != 0, sticky = (sig << 1) != 0;
  } else {
    k = sig >> s;
    round_bit = ((sig >> (s - 1)) & 1) != 0;
    sticky = (sig & ((1ull << (s - 1)) - 1)) != 0;
  }
  bool inexact = round_bit || sticky;
  bool up = false;
  switch (mode) {
    case Round::NearestEven: up = round_bit && (sticky || (k & 1)); break;
    case Round::TowardZero: break;
    case Round::Down: up = neg && inexact; break;
    case Round::Up: up = !neg && inexact; break;
  }
  k += up;
  // Normal numbers: ((biased exponent - 1) << M) + k with k in [2^M, 2^(M+1));
  // subnormals: k. A carry out of the mantissa moves to the next exponent.
  uint64_t mag = (uint64_t(qexp - (emin - M)) << M) + k;
  if (mag >= f.exp_field()) return overflow();
  return sign | mag;
}

uint64_t quiet_nan_as(uint64_t b, Type from, Type to) {
  Format ff = format(from), ft = format(to);
  uint64_t m = b & ff.mant_field();
  m = ft.mant_bits >= ff.mant_bits ? m << (ft.mant_bits - ff.mant_bits) : m >> (ff.mant_bits - ft.mant_bits);
  uint64_t sign = (b & ff.sign_bit()) ? ft.sign_bit() : 0;
  return sign | ft.exp_field() | ft.quiet_bit() | m;
}
uint64_t canonical_nan(Type t) { return format(t).exp_field() | format(t).quiet_bit(); }
uint64_t all_ones_nan(Type t) { return fmask(format(t)) & ~format(t).sign_bit(); }

}  // namespace gpurc::ir::fbits
