// Apple G13's transcendental ops as this project models them (not bit-exact
// hardware): computed in double, then rounded once by the caller. One
// definition for the G13 reference interpreter (frontend/g13/fp.cpp) and for
// Transc::G13 in the IR (transc_g13.cpp).
//
// IR mapping: frcp, frsqrt, flog2, fexp2 with Transc::G13 are rcp, rsqrt,
// log2, exp2. fsin_step(x, sel) with Transc::G13 is one of the special steps,
// chosen by the constant second operand: kG13SinPt1, kG13SinPt2 or
// kG13RsqrtSpecial (any other selector gives NaN).
#pragma once

namespace gpurc::ir::transc {

constexpr double kG13SinPt1 = 1.0;
constexpr double kG13SinPt2 = 2.0;
constexpr double kG13RsqrtSpecial = 3.0;

namespace g13model {
double rcp(double x);
double rsqrt(double x);
double rsqrt_special(double x);  // sqrt(x) = rsqrt_special(x) * x, also at 0 and +inf
double sin_pt_1(double x);       // quarter turns in [0,4) -> reduced y in [-1,1]
double sin_pt_2(double y);       // sin(y*pi/2) / y (pi/2 at 0)
double log2(double x);
double exp2(double x);
}  // namespace g13model

}  // namespace gpurc::ir::transc
