// Transc::Tesla: the Tesla SFU model (see transc_tesla.h), shared with the
// reference interpreter. IR mapping (f32 only):
//   frcp, frsqrt, flog2     float input
//   fexp2, fsin, fcos       fixed-point input (the output of preex2/presin)
//   fsin_step a, b          b == 0: presin(a), otherwise preex2(a); fixed-point result
// Translators must not set FtzIn/FtzOut on the fixed-point side of these ops
// (small fixed-point values look like subnormals).
#include "ir/transc_tesla.h"

#include <bit>
#include <cmath>

#include "ir/transc.h"

namespace gpurc::ir::tesla_sfu {

namespace {

float f(uint32_t bits) { return std::bit_cast<float>(bits); }
uint32_t u(float x) { return std::bit_cast<uint32_t>(x); }
bool is_nan(uint32_t a) { return (a & 0x7fffffffu) > 0x7f800000u; }
uint32_t ftz(uint32_t a) { return (a & 0x7f800000u) == 0 ? (a & 0x80000000u) : a; }

uint32_t to_fixed(double v, bool neg) {
  double m = std::fabs(v) * 8388608.0;
  uint32_t bits = m >= 1073741823.0 ? 0x3fffffffu : uint32_t(m);
  return bits | (neg ? 0x80000000u : 0);
}

double from_fixed(uint32_t v, bool& nan, bool& inf) {
  nan = (v & 0x7fffffffu) == 0x40000000u;
  inf = (v & 0x7fffffffu) == 0x40800000u;
  double m = double(v & 0x3fffffffu) / 8388608.0;
  return (v >> 31) ? -m : m;
}

uint32_t to_f32(double d) {
  if (std::isnan(d)) return kNaN;
  return ftz(u(float(d)));
}

uint32_t sin_cos(uint32_t a, bool is_sin) {
  bool nan, inf;
  double v = from_fixed(a, nan, inf);
  if (nan || inf) return kNaN;
  double x = v * (M_PI / 2);
  return to_f32(is_sin ? std::sin(x) : std::cos(x));
}

}  // namespace

uint32_t rcp(uint32_t a) {
  a = ftz(a);
  if (is_nan(a)) return kNaN;
  return to_f32(1.0 / double(f(a)));
}

uint32_t rsqrt(uint32_t a) {
  a = ftz(a);
  if (is_nan(a)) return kNaN;
  double x = f(a);
  if (x < 0) return kNaN;
  if (x == 0) return (a & 0x80000000u) ? 0xff800000u : 0x7f800000u;
  return to_f32(1.0 / std::sqrt(x));
}

uint32_t lg2(uint32_t a) {
  a = ftz(a);
  if (is_nan(a)) return kNaN;
  double x = f(a);
  if (x < 0) return kNaN;
  if (x == 0) return 0xff800000u;
  return to_f32(std::log2(x));
}

uint32_t ex2(uint32_t a) {
  bool nan, inf;
  double v = from_fixed(a, nan, inf);
  if (nan) return kNaN;
  if (inf) return (a >> 31) ? 0 : 0x7f800000u;
  return to_f32(std::exp2(v));
}

uint32_t sin(uint32_t a) { return sin_cos(a, true); }
uint32_t cos(uint32_t a) { return sin_cos(a, false); }

uint32_t preex2(uint32_t a) {
  a = ftz(a);
  if (is_nan(a)) return 0x40000000u;
  bool neg = a >> 31;
  if ((a & 0x7fffffffu) == 0x7f800000u) return 0x40800000u | (neg ? 0x80000000u : 0);
  return to_fixed(f(a), neg);
}

uint32_t presin(uint32_t a) {
  a = ftz(a);
  if (is_nan(a) || (a & 0x7fffffffu) == 0x7f800000u) return 0x40000000u;
  double x = f(a);
  // Quarter turns, reduced modulo 4 (a full turn), sign kept.
  double q = std::fmod(std::fabs(x) / (M_PI / 2), 4.0);
  return to_fixed(q, x < 0);
}

}  // namespace gpurc::ir::tesla_sfu

namespace gpurc::ir::transc {

bool tesla_defines(Opcode op, Type t) {
  if (t != Type::F32) return false;
  switch (op) {
    case Opcode::FRcp: case Opcode::FRsqrt: case Opcode::FLog2: case Opcode::FExp2:
    case Opcode::FSin: case Opcode::FCos: case Opcode::FSinStep:
      return true;
    default:
      return false;
  }
}

uint64_t tesla(const LaneOp& o, uint64_t a, uint64_t b) {
  uint32_t x = uint32_t(a);
  switch (o.op) {
    case Opcode::FRcp: return tesla_sfu::rcp(x);
    case Opcode::FRsqrt: return tesla_sfu::rsqrt(x);
    case Opcode::FLog2: return tesla_sfu::lg2(x);
    case Opcode::FExp2: return tesla_sfu::ex2(x);
    case Opcode::FSin: return tesla_sfu::sin(x);
    case Opcode::FCos: return tesla_sfu::cos(x);
    case Opcode::FSinStep: return b == 0 ? tesla_sfu::presin(x) : tesla_sfu::preex2(x);
    default: return 0;
  }
}

}  // namespace gpurc::ir::transc
