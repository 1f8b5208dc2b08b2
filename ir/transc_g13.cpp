// Transc::G13: Apple G13's rcp/rsqrt/log2/exp2 and the sine/rsqrt special
// steps (ir/transc_g13.h), f32 only (G13 computes every transcendental in
// 32 bits; 16-bit destinations round the f32 result again).
#include "ir/transc_g13.h"

#include <cmath>

#include "ir/float_bits.h"
#include "ir/transc.h"

namespace gpurc::ir::transc {

namespace g13model {
double rcp(double x) { return 1.0 / x; }
double rsqrt(double x) { return 1.0 / std::sqrt(x); }
double rsqrt_special(double x) {
  if (x == 0 || (std::isinf(x) && x > 0)) return x;
  return 1.0 / std::sqrt(x);
}
double sin_pt_1(double x) {
  if (std::isnan(x) || std::isinf(x)) return std::nan("");
  if (x < 1.0) return x;
  if (x < 3.0) return 2.0 - x;
  return x - 4.0;
}
double sin_pt_2(double y) {
  if (y == 0) return M_PI / 2;
  return std::sin(y * (M_PI / 2)) / y;
}
double log2(double x) { return std::log2(x); }
double exp2(double x) { return std::exp2(x); }
}  // namespace g13model

bool g13_defines(Opcode op, Type t) {
  if (t != Type::F32) return false;
  return op == Opcode::FRcp || op == Opcode::FRsqrt || op == Opcode::FLog2 || op == Opcode::FExp2 ||
         op == Opcode::FSinStep;
}

uint64_t g13(const LaneOp& o, uint64_t a, uint64_t b) {
  const double x = fbits::to_double(a, o.type);
  double r;
  switch (o.op) {
    case Opcode::FRcp: r = g13model::rcp(x); break;
    case Opcode::FRsqrt: r = g13model::rsqrt(x); break;
    case Opcode::FLog2: r = g13model::log2(x); break;
    case Opcode::FExp2: r = g13model::exp2(x); break;
    case Opcode::FSinStep: {
      const double sel = fbits::to_double(b, o.type);
      if (sel == kG13SinPt1) r = g13model::sin_pt_1(x);
      else if (sel == kG13SinPt2) r = g13model::sin_pt_2(x);
      else if (sel == kG13RsqrtSpecial) r = g13model::rsqrt_special(x);
      else r = std::nan("");
      break;
    }
    default: r = std::nan(""); break;
  }
  return fbits::from_double(r, o.type, round_mode(o.fflags));
}

}  // namespace gpurc::ir::transc
