// The Tesla SFU model (ir/transc_tesla.cpp) against public facts: the special
// cases envytools documents for each function (nvhw/sfu.c), exact results the
// table algorithm must give, and the accuracy NVIDIA documents for the sm_1x
// intrinsics (CUDA C Programming Guide, "Intrinsic Functions": __frcp_rn-free
// rcp 1 ulp, rsqrt 2 ulp, __exp2f 2 + floor(1.16 |x|) ulp, __log2f absolute error 2^-22.6 on
// [0.5, 2], __sinf/__cosf absolute error 2^-21.41 on [-pi, pi]). A wrong
// table entry or shift shows up as an accuracy failure.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>

#include "ir/transc_tesla.h"

namespace gpurc_test_tesla_sfu {  // one namespace per file: unity builds (CMakeLists.txt)

namespace sfu = gpurc::ir::tesla_sfu;

namespace {

uint32_t fb(float f) { return std::bit_cast<uint32_t>(f); }
float bf(uint32_t u) { return std::bit_cast<float>(u); }

// Distance in units in the last place between a result and the exact value.
double ulps(uint32_t got, double exact) {
  int e;
  std::frexp(exact, &e);
  double ulp = std::ldexp(1.0, e - 24);
  return std::fabs(double(bf(got)) - exact) / ulp;
}

// Fixed-point (sign + 7.23) encoding of a value, as preex2/presin produce it.
uint32_t fixed(double v) {
  uint32_t m = uint32_t(std::fabs(v) * 8388608.0);
  return m | (v < 0 ? 0x80000000u : 0);
}

}  // namespace

TEST_CASE("tesla sfu: special operands (envytools nvhw/sfu.c)") {
  CHECK(sfu::rcp(0) == 0x7f800000u);
  CHECK(sfu::rcp(0x80000000u) == 0xff800000u);
  CHECK(sfu::rcp(0x00000123u) == 0x7f800000u);  // denormal input flushed
  CHECK(sfu::rcp(0x7f800000u) == 0);
  CHECK(sfu::rcp(0xff800000u) == 0x80000000u);
  CHECK(sfu::rcp(0x7fc00001u) == sfu::kNaN);
  CHECK(sfu::rcp(0x7f000000u) == 0);  // 1/2^127 is denormal: flushed
  CHECK(sfu::rsqrt(0x80000000u) == 0xff800000u);
  CHECK(sfu::rsqrt(0) == 0x7f800000u);
  CHECK(sfu::rsqrt(fb(-4.0f)) == sfu::kNaN);
  CHECK(sfu::rsqrt(0x7f800000u) == 0);
  CHECK(sfu::lg2(0) == 0xff800000u);
  CHECK(sfu::lg2(0x80000000u) == 0xff800000u);
  CHECK(sfu::lg2(fb(-1.0f)) == sfu::kNaN);
  CHECK(sfu::lg2(0x7f800000u) == 0x7f800000u);
  CHECK(sfu::lg2(0xffc00000u) == sfu::kNaN);
  CHECK(sfu::ex2(0x40800000u) == 0x7f800000u);  // +infinity encoding
  CHECK(sfu::ex2(0xc0800000u) == 0);            // -infinity encoding
  CHECK(sfu::ex2(0x40000000u) == sfu::kNaN);
  CHECK(sfu::sin(0x40000000u) == sfu::kNaN);
  CHECK(sfu::cos(0xc0800000u) == sfu::kNaN);
  // pre-ops keep the sign of NaN and infinity; preex2 overflows at 2^7.
  CHECK(sfu::preex2(0xffc00000u) == 0xc0000000u);
  CHECK(sfu::preex2(0x7f800000u) == 0x40800000u);
  CHECK(sfu::preex2(fb(128.0f)) == 0x40800000u);
  CHECK(sfu::preex2(fb(-200.0f)) == 0xc0800000u);
  CHECK(sfu::presin(0xff800000u) == 0xc0800000u);
  CHECK(sfu::presin(0x80000000u) == 0x80000000u);
  CHECK(sfu::presin(0x00400000u) == 0);  // denormal flushed
}

TEST_CASE("tesla sfu: exact results of the table algorithm") {
  CHECK(sfu::rcp(fb(1.0f)) == fb(1.0f));
  CHECK(sfu::rcp(fb(-2.0f)) == fb(-0.5f));
  CHECK(sfu::rcp(fb(3.0f)) == 0x3eaaaaabu);  // slice 0x40, r = 0: A / 4 rounded
  CHECK(sfu::rcp(0x7e800000u) == 0x00800000u);  // 1/2^126 = smallest normal
  CHECK(sfu::rsqrt(fb(1.0f)) == fb(1.0f));
  CHECK(sfu::rsqrt(fb(4.0f)) == fb(0.5f));
  CHECK(sfu::rsqrt(fb(0.25f)) == fb(2.0f));
  CHECK(sfu::lg2(fb(1.0f)) == 0);  // the special case: exactly +0
  CHECK(sfu::ex2(0) == fb(1.0f));
  CHECK(sfu::ex2(fixed(1.0)) == fb(2.0f));
  CHECK(sfu::ex2(fixed(-1.0)) == fb(0.5f));
  CHECK(sfu::ex2(fixed(-126.0)) == 0x00800000u);
  CHECK(sfu::ex2(fixed(-127.0)) == 0);  // denormal result flushed
  CHECK(sfu::sin(0) == 0);
  CHECK(sfu::sin(0x80000000u) == 0x80000000u);
  CHECK(sfu::preex2(fb(1.5f)) == 0x00c00000u);
  CHECK(sfu::preex2(fb(-0.75f)) == 0x80600000u);
  CHECK(sfu::presin(0) == 0);
}

TEST_CASE("tesla sfu: documented sm_1x accuracy over whole significand ranges") {
  const uint32_t step = std::getenv("GPURC_TEST_LIGHT") ? 97 : 7;
  double worst_rcp = 0, worst_rsqrt = 0, worst_ex2 = -9, worst_lg2 = 0, worst_sin = 0;
  for (uint32_t f = 0; f < 0x800000u; f += step) {
    uint32_t x1 = 0x3f800000u | f;  // [1, 2)
    uint32_t x2 = 0x40000000u | f;  // [2, 4)
    worst_rcp = std::max(worst_rcp, ulps(sfu::rcp(x1), 1.0 / bf(x1)));
    worst_rsqrt = std::max(worst_rsqrt, ulps(sfu::rsqrt(x1), 1.0 / std::sqrt(double(bf(x1)))));
    worst_rsqrt = std::max(worst_rsqrt, ulps(sfu::rsqrt(x2), 1.0 / std::sqrt(double(bf(x2)))));
    // ex2 over [-1, 1) through its fixed-point input.
    double t = double(f) / 8388608.0;
    // Documented bound: 2 + floor(1.16 |x|) ulp; worst_ex2 is the excess over
    // it. Negative inputs use the one's complement of the fraction (2^-x =
    // 2^-(i+1) 2^(1-f), with 1-f read as ~f, one fixed-point unit short),
    // which costs up to one more ulp.
    double bound = 2 + std::floor(1.16 * t);
    worst_ex2 = std::max(worst_ex2, ulps(sfu::ex2(fixed(t)), std::exp2(t)) - bound);
    worst_ex2 = std::max(worst_ex2, ulps(sfu::ex2(fixed(-t)), std::exp2(-t)) - bound - 1);
    // lg2 on [0.5, 2): absolute error.
    uint32_t h = 0x3f000000u | f;
    worst_lg2 = std::max(worst_lg2, std::fabs(double(bf(sfu::lg2(x1))) - std::log2(double(bf(x1)))));
    worst_lg2 = std::max(worst_lg2, std::fabs(double(bf(sfu::lg2(h))) - std::log2(double(bf(h)))));
    // sin/cos over all four quadrants (quarter turns in [0, 4)).
    uint32_t q = (f << 2) & 0x1ffffffu;
    double ang = double(q) / 8388608.0 * M_PI / 2;
    worst_sin = std::max(worst_sin, std::fabs(double(bf(sfu::sin(q))) - std::sin(ang)));
    worst_sin = std::max(worst_sin, std::fabs(double(bf(sfu::cos(q))) - std::cos(ang)));
  }
  INFO("rcp " << worst_rcp << " ulp, rsqrt " << worst_rsqrt << " ulp, ex2 " << worst_ex2 << " ulp over the bound, lg2 "
              << std::log2(worst_lg2) << " (log2 abs), sin/cos " << std::log2(worst_sin) << " (log2 abs)");
  CHECK(worst_rcp <= 1.0);
  CHECK(worst_rsqrt <= 2.0);
  CHECK(worst_ex2 <= 0.0);
  CHECK(worst_lg2 <= std::ldexp(1.0, -22));
  CHECK(worst_sin <= std::ldexp(1.0, -21));
  // Not the libm result everywhere: the hardware is not correctly rounded.
  CHECK(worst_rcp > 0.5);
}

TEST_CASE("tesla sfu: presin reduces radians to quarter turns modulo 4") {
  // presin(x) ~ x * 2/pi in 2.23 fixed point, truncated, with the sign kept.
  for (float x : {0.5f, 1.0f, 3.0f, 6.0f, 10.0f, 100.0f, -2.5f}) {
    uint32_t p = sfu::presin(fb(x));
    double q = std::fmod(std::fabs(double(x)) / (M_PI / 2), 4.0);
    double got = double(p & 0x1ffffffu) / 8388608.0;
    INFO(x);
    CHECK(std::fabs(got - q) < 4e-6 * std::max(1.0, std::fabs(double(x))));
    CHECK((p >> 31) == (x < 0 ? 1u : 0u));
  }
}

}  // namespace gpurc_test_tesla_sfu
