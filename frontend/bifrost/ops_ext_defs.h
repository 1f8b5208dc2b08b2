// The definitions behind ops_ext.h (included from it): one function per
// instruction family, templated on the emitter. docs/bifrost.md
// "Vector and conversion instructions" states the same rules in prose.
#pragma once
#include <array>
#include <map>
#include <string>
#include <vector>

namespace gpurc::bifrost::ext {

enum Op : int {
  kNone = 0,
  kIaddV4, kIsubV4, kHadd32, kHaddV2, kHaddV4, kIabsV2, kIabsV4, kIcmpV2, kIcmpV4, kIcmpI, kCselV2I, kCselV2F,
  kMuxV2, kMuxV4, kSwzV2, kSwzV4, kClzV2, kClzV4, kImulV2, kImulV4, kIdp, kV2I8ToV2I16, kV2I8ToV2F16,
  kShiftV2, kShiftV4, kI8ToF32, kI16ToF32, kF16ToI32, kV2F16ToV2I16, kV2I16ToV2F16, kFcmpV2F16, kFroundV2F16,
  kFrexpmV2F16, kFrexpeV2F16, kLdexpV2F16, kQuietF32, kQuietV2F16, kFpclassF32, kFpclassF16, kIlogbF32,
  kIlogbV2F16, kLogbF32, kLogbV2F16, kFrcpF16, kFrsqF16, kFaddRscale, kFmaRscaleV2F16, kShiftDouble, kFunnel,
  kFlogTable, kFlogd, kFaddLscale, kFexp, kFsinTable, kFcosTable, kFatanAssist, kFatanTable,
  kCubeface1, kCubeface2, kCubeSsel, kCubeTsel, kSegAdd,
  kLdexpInf,  // +LDEXP.f32.inf / .inf0 (interp.cpp and translate.cpp route those modes here)
};

inline int op_of(const std::string& n) {
  static const std::map<std::string, int> m = {
      {"+IADD.v4s8", kIaddV4}, {"+IADD.v4u8", kIaddV4}, {"+ISUB.v4s8", kIsubV4}, {"+ISUB.v4u8", kIsubV4},
      {"+HADD.s32", kHadd32}, {"+HADD.u32", kHadd32}, {"+HADD.v2s16", kHaddV2}, {"+HADD.v2u16", kHaddV2},
      {"+HADD.v4s8", kHaddV4}, {"+HADD.v4u8", kHaddV4}, {"+IABS.v2s16", kIabsV2}, {"+IABS.v4s8", kIabsV4},
      {"+ICMP.v2i16", kIcmpV2}, {"+ICMP.v2s16", kIcmpV2}, {"+ICMP.v2u16", kIcmpV2}, {"+ICMP.v4i8", kIcmpV4},
      {"+ICMP.v4s8", kIcmpV4}, {"+ICMP.v4u8", kIcmpV4}, {"+ICMPI.i32", kIcmpI}, {"+ICMPI.s32", kIcmpI},
      {"+ICMPI.u32", kIcmpI}, {"*CSEL.v2i16", kCselV2I}, {"*CSEL.v2s16", kCselV2I}, {"*CSEL.v2u16", kCselV2I},
      {"*CSEL.v2f16", kCselV2F}, {"+MUX.v2i16", kMuxV2}, {"+MUX.v4i8", kMuxV4}, {"+SWZ.v2i16", kSwzV2},
      {"+SWZ.v4i8", kSwzV4}, {"*CLZ.v2u16", kClzV2}, {"*CLZ.v4u8", kClzV4}, {"*IMUL.v2i16", kImulV2},
      {"*IMUL.v4i8", kImulV4}, {"*IDP.v4i8", kIdp}, {"+V2S8_TO_V2S16", kV2I8ToV2I16},
      {"+V2U8_TO_V2U16", kV2I8ToV2I16}, {"+V2S8_TO_V2F16", kV2I8ToV2F16}, {"+V2U8_TO_V2F16", kV2I8ToV2F16},
      {"*LSHIFT_AND.v2i16", kShiftV2}, {"*LSHIFT_OR.v2i16", kShiftV2}, {"*LSHIFT_XOR.v2i16", kShiftV2},
      {"*RSHIFT_AND.v2i16", kShiftV2}, {"*RSHIFT_OR.v2i16", kShiftV2}, {"*RSHIFT_XOR.v2i16", kShiftV2},
      {"*ARSHIFT.v2i16", kShiftV2}, {"*LSHIFT_AND.v4i8", kShiftV4}, {"*LSHIFT_OR.v4i8", kShiftV4},
      {"*LSHIFT_XOR.v4i8", kShiftV4}, {"*RSHIFT_AND.v4i8", kShiftV4}, {"*RSHIFT_OR.v4i8", kShiftV4},
      {"*RSHIFT_XOR.v4i8", kShiftV4}, {"*ARSHIFT.v4i8", kShiftV4}, {"+S8_TO_F32", kI8ToF32},
      {"+U8_TO_F32", kI8ToF32}, {"+S16_TO_F32", kI16ToF32}, {"+U16_TO_F32", kI16ToF32},
      {"+F16_TO_S32", kF16ToI32}, {"+F16_TO_U32", kF16ToI32}, {"+V2F16_TO_V2S16", kV2F16ToV2I16},
      {"+V2F16_TO_V2U16", kV2F16ToV2I16}, {"+V2S16_TO_V2F16", kV2I16ToV2F16}, {"+V2U16_TO_V2F16", kV2I16ToV2F16},
      {"*FCMP.v2f16", kFcmpV2F16}, {"+FCMP.v2f16", kFcmpV2F16}, {"*FROUND.v2f16", kFroundV2F16},
      {"+FROUND.v2f16", kFroundV2F16}, {"*FREXPM.v2f16", kFrexpmV2F16}, {"+FREXPM.v2f16", kFrexpmV2F16},
      {"*FREXPE.v2f16", kFrexpeV2F16}, {"+FREXPE.v2f16", kFrexpeV2F16}, {"+LDEXP.v2f16", kLdexpV2F16},
      {"*QUIET.f32", kQuietF32}, {"+QUIET.f32", kQuietF32}, {"*QUIET.v2f16", kQuietV2F16},
      {"+QUIET.v2f16", kQuietV2F16}, {"+FPCLASS.f32", kFpclassF32}, {"+FPCLASS.f16", kFpclassF16},
      {"+ILOGB.f32", kIlogbF32}, {"+ILOGB.v2f16", kIlogbV2F16}, {"+LOGB.f32", kLogbF32},
      {"+LOGB.v2f16", kLogbV2F16}, {"+FRCP.f16", kFrcpF16}, {"+FRSQ.f16", kFrsqF16},
      {"+FADD_RSCALE.f32", kFaddRscale}, {"*FMA_RSCALE.v2f16", kFmaRscaleV2F16},
      {"*LSHIFT_DOUBLE.i32", kShiftDouble}, {"*RSHIFT_DOUBLE.i32", kShiftDouble},
      {"*ARSHIFT_DOUBLE.i32", kShiftDouble}, {"*LROT_DOUBLE.i32", kShiftDouble}, {"*RROT_DOUBLE.i32", kShiftDouble},
      {"*FLSHIFT_DOUBLE.i32", kFunnel}, {"*FRSHIFT_DOUBLE.i32", kFunnel}, {"+FLOG_TABLE.f32", kFlogTable},
      {"+FLOGD.f32", kFlogd}, {"*FADD_LSCALE.f32", kFaddLscale}, {"+FEXP.f32", kFexp},
      {"+FSIN_TABLE.u6", kFsinTable}, {"+FCOS_TABLE.u6", kFcosTable}, {"+FATAN_ASSIST.f32", kFatanAssist},
      {"+FATAN_ASSIST.f16", kFatanAssist}, {"+FATAN_TABLE.f32", kFatanTable}, {"+FATAN_TABLE.f16", kFatanTable},
      {"*CUBEFACE1", kCubeface1}, {"+CUBEFACE2", kCubeface2}, {"+CUBE_SSEL", kCubeSsel}, {"+CUBE_TSEL", kCubeTsel},
      {"*SEG_ADD", kSegAdd}, {"+SEG_ADD", kSegAdd}, {"*SEG_SUB", kSegAdd}, {"+SEG_SUB", kSegAdd},
  };
  auto it = m.find(n);
  return it == m.end() ? kNone : it->second;
}

// The instructions defined here (interp and translation both dispatch on it).
inline bool covers(const std::string& name) { return op_of(name) != kNone; }

inline bool mod_on(const DecodedIns& in, const char* m) {
  const std::string& v = in.mod(m);
  return !v.empty() && v != "none";
}

// Modifier values this definition does not model: the reason, "" when none.
inline std::string check(const DecodedIns& in) {
  const std::string& n = in.enc->name;
  for (size_t i = 0; i < in.enc->mods.size() && i < in.mods.size(); ++i)
    if (in.mods[i] >= 0 && size_t(in.mods[i]) < in.enc->mods[i].opts.size() && in.enc->mods[i].opts[size_t(in.mods[i])] == "reserved")
      return "with a reserved ." + in.enc->mods[i].name + " value is invalid";
  const int op = op_of(n);
  const std::string& r = in.mod("round");
  if (mod_on(in, "mask")) return ".mask is unsupported";
  if (mod_on(in, "log") && mod_on(in, "sqrt")) return ".sqrt.log is unsupported";
  if (in.mod("precision") == "high" || in.mod("precision") == "low") return "." + in.mod("precision") + " is unsupported";
  if (mod_on(in, "offset") || mod_on(in, "adj")) return "." + (mod_on(in, "offset") ? in.mod("offset") : in.mod("adj")) + " is unsupported";
  if (mod_on(in, "divzero")) return ".divzero is unsupported";
  if ((r == "inf" || r == "inf0") && n != "+LDEXP.f32") return "." + r + " is unsupported";
  if (op == kSegAdd && in.mod("seg") != "wls") return "." + in.mod("seg") + " is unsupported (no thread-local storage model)";
  if (op == kSegAdd && mod_on(in, "preserve_null")) return ".preserve_null is unsupported";
  const std::string& sp = in.mod("special");
  if (sp == "scale16") return "." + sp + " is unsupported";
  return "";
}

// ---- lane helpers --------------------------------------------------------
template <class E> typename E::V byte_of(E& e, typename E::V v, unsigned i) {
  return e.and_(i ? e.lshr(v, 8 * i) : v, e.k(0xff));
}
template <class E> typename E::V half_of(E& e, typename E::V v, unsigned h) {
  return h ? e.lshr(v, 16) : e.and_(v, e.k(0xffff));
}
template <class E> typename E::V sext8(E& e, typename E::V v) { return e.ashr(e.shl(v, 24), 24); }
template <class E> typename E::V sext16(E& e, typename E::V v) { return e.ashr(e.shl(v, 16), 16); }
template <class E> typename E::V pack2(E& e, typename E::V lo, typename E::V hi) {
  return e.or_(e.and_(lo, e.k(0xffff)), e.shl(hi, 16));
}
template <class E> typename E::V pack4(E& e, const typename E::V* b) {
  typename E::V r = e.and_(b[0], e.k(0xff));
  for (unsigned i = 1; i < 4; ++i) r = e.or_(r, e.shl(e.and_(b[i], e.k(0xff)), 8 * i));
  return r;
}
// A half-lane selector "hXY" (or "h01"/"h10" swaps): which half feeds lane h.
inline unsigned hsel(const std::string& s, unsigned h) {
  return (s.size() == 3 && s[0] == 'h') ? unsigned(s[1 + h] - '0') & 1 : h;
}
// A byte selector "bXYZW" / "bXY" (any length): which byte feeds lane i.
inline unsigned bsel(const std::string& s, unsigned i) {
  return (s.size() > 1 + i && s[0] == 'b') ? unsigned(s[1 + i] - '0') & 3 : i;
}
// Integer compare of two lanes already extended to 32 bits.
template <class E> typename E::B icmp(E& e, int c, typename E::V a, typename E::V b, bool sgn) {
  switch (c) {
    case kEq: return e.eq(a, b);
    case kNe: return e.ne(a, b);
    case kGt: return sgn ? e.slt(b, a) : e.ult(b, a);
    case kGe: return sgn ? e.sle(b, a) : e.ule(b, a);
    case kLt: return sgn ? e.slt(a, b) : e.ult(a, b);
    default: return sgn ? e.sle(a, b) : e.ule(a, b);
  }
}
template <class E> typename E::V absneg16(E& e, typename E::V v, bool abs, bool neg) {
  if (abs) v = e.and_(v, e.k(0x7fff));
  if (neg) v = e.xor_(v, e.k(0x8000));
  return v;
}
template <class E> typename E::V absneg32(E& e, typename E::V v, bool abs, bool neg) {
  if (abs) v = e.and_(v, e.k(0x7fffffffu));
  if (neg) v = e.xor_(v, e.k(0x80000000u));
  return v;
}
template <class E> typename E::V flush32(E& e, typename E::V v, bool ftz) {
  if (!ftz) return v;
  return e.sel(e.eq(e.and_(v, e.k(0x7f800000u)), e.k(0)), e.and_(v, e.k(0x80000000u)), v);
}
// Exponent-field tests on raw bits (width 16 or 32).
template <class E> typename E::B is_nan_bits(E& e, typename E::V v, bool h) {
  return h ? e.ult(e.k(0x7c00), e.and_(v, e.k(0x7fff))) : e.ult(e.k(0x7f800000u), e.and_(v, e.k(0x7fffffffu)));
}
template <class E> typename E::B is_inf_bits(E& e, typename E::V v, bool h) {
  return h ? e.eq(e.and_(v, e.k(0x7fff)), e.k(0x7c00)) : e.eq(e.and_(v, e.k(0x7fffffffu)), e.k(0x7f800000u));
}
template <class E> typename E::B is_zero_bits(E& e, typename E::V v, bool h) {
  return e.eq(e.and_(v, e.k(h ? 0x7fffu : 0x7fffffffu)), e.k(0));
}
// The unbiased exponent of a finite nonzero f16/f32 (subnormals: their true
// exponent, floor(log2|x|)), from the bits: for a subnormal, the position of
// its leading one.
template <class E> typename E::V ilogb_bits(E& e, typename E::V v, bool h) {
  const unsigned mant = h ? 10 : 23, bias = h ? 15 : 127;
  typename E::V ex = e.and_(e.lshr(v, mant), e.k(h ? 0x1f : 0xff));
  typename E::V frac = e.and_(v, e.k((1u << mant) - 1));
  // subnormal: exponent = (31 - clz(frac)) - mant - (bias - 1)
  typename E::V sub = e.sub(e.k(31u - mant - (bias - 1)), e.clz(frac));
  return e.sel(e.eq(ex, e.k(0)), sub, e.sub(ex, e.k(bias)));
}
// Round half away from zero (f64, exact: d - trunc(d) is exact).
template <class E> typename E::D round_away(E& e, typename E::D d) {
  typename E::D t = e.dround(d, kTrunc);
  typename E::D f = e.dadd(d, e.dmul(t, e.kd(-1.0)));
  return e.seld(e.dcmp(kGe, f, e.kd(0.5)), e.dadd(t, e.kd(1.0)),
                e.seld(e.dcmp(kLe, f, e.kd(-0.5)), e.dadd(t, e.kd(-1.0)), t));
}
// Float (exactly widened) to a 32-bit integer with a round modifier (none =
// to nearest even, rtp, rtn, rtz, rtna = half away from zero), saturating, NaN -> 0.
template <class E> typename E::V to_int(E& e, typename E::D d, bool sgn, const std::string& r) {
  if (r == "rtna") return e.d2i(round_away(e, d), sgn, ir::Round::TowardZero);
  return e.d2i(d, sgn, round_of(r));
}
// f64 -> f32 (h: f16 in the low 16 bits) rounded to nearest, ties away from
// zero (IEEE 754's roundTiesToAway, the `rtna` mode): it differs from ties to
// even only on an exact tie, where it takes the neighbour of larger magnitude.
// The neighbours dn <= d <= up come from the directed roundings; d is a tie
// when it equals their midpoint, which is exact in f64 (one bit more than the
// target precision). Infinite neighbours (overflow) make the midpoint inf or
// NaN, so no tie: ties to even already goes to inf there, as ties away does.
template <class E> typename E::V d2f_rtna(E& e, typename E::D d, bool h) {
  using V = typename E::V;
  using D = typename E::D;
  auto cvt = [&](ir::Round r) { return h ? e.d2f16(d, r) : e.d2f32(d, r); };
  auto wide = [&](V v) { return h ? e.f16d(v) : e.f32d(v); };
  const V ne = cvt(ir::Round::NearestEven), dn = cvt(ir::Round::Down), up = cvt(ir::Round::Up);
  const D lo = wide(dn), hi = wide(up);
  const D mid = e.dadd(lo, e.dmul(e.dadd(hi, e.dmul(lo, e.kd(-1.0))), e.kd(0.5)));
  const typename E::B tie = e.dcmp(kEq, d, mid);
  return e.sel(tie, e.sel(e.dcmp(kGt, d, e.kd(0.0)), up, dn), ne);
}
// f64 -> f32 / f16 with a `round` modifier value (none, rtp, rtn, rtz, rtna).
template <class E> typename E::V d2f_mode(E& e, typename E::D d, bool h, const std::string& r) {
  if (r == "rtna") return d2f_rtna(e, d, h);
  return h ? e.d2f16(d, round_of(r)) : e.d2f32(d, round_of(r));
}
// x + y (f64 values widened from f32) rounded to odd at f64 precision: the
// exact sum when it is an f64 value, otherwise the one of its two f64
// neighbours whose lowest significand bit is 1. Round to odd at 53 bits keeps
// enough to round the sum once more to f32 or f16 with any mode and get the
// correctly rounded sum (53 >= 24 + 2), and rounding it to odd again at f32
// precision gives the sum rounded to odd. s = x + y rounded to nearest, its
// exact error from Knuth's TwoSum (exact for finite values); a nonzero error
// with an even s moves s one f64 ulp toward the error. An infinite or NaN s
// has a NaN error, which the ordered compare ignores, so it passes through.
template <class E> typename E::D add_rto53(E& e, typename E::D x, typename E::D y) {
  using D = typename E::D;
  using B = typename E::B;
  const D m1 = e.kd(-1.0);
  const D s = e.dadd(x, y);
  const D bv = e.dadd(s, e.dmul(x, m1));  // s - x
  const D err = e.dadd(e.dadd(x, e.dmul(e.dadd(s, e.dmul(bv, m1)), m1)), e.dadd(y, e.dmul(bv, m1)));
  const typename E::Q sb = e.dbits(s);
  const B inexact = e.dcmp(kGtLt, err, e.kd(0.0));
  const B even = e.eq(e.and_(e.lo(sb), e.k(1)), e.k(0));
  // |s| grows by one ulp when err has s's sign, shrinks otherwise (s != 0 when inexact)
  const B same = e.eq(e.b2i(e.dcmp(kLt, err, e.kd(0.0))), e.b2i(e.dcmp(kLt, s, e.kd(0.0))));
  const typename E::Q step = e.sel_q(same, e.kq(1), e.kq(~0ull));
  return e.qd(e.sel_q(e.band(inexact, even), e.addq(sb, step), sb));
}
// a + b of two f32 values (bits) rounded to odd (+FADD.f32.rto): an exact sum
// is itself, any other sum the one of its two f32 neighbours whose lowest
// significand bit is 1 (so MAX_FLT, not inf, past the largest finite value).
// From the f64 value rounded to odd: its directed roundings to f32 bracket it;
// equal means exact (then the nearest rounding, which gives an exact zero sum
// the +0 of the other modes), otherwise the odd one. NaN canonical.
template <class E> typename E::V fadd_rto(E& e, typename E::V a, typename E::V b) {
  using B = typename E::B;
  const typename E::D so = add_rto53(e, e.f32d(a), e.f32d(b));
  const typename E::V dn = e.d2f32(so, ir::Round::Down), up = e.d2f32(so, ir::Round::Up);
  const B exact = e.dcmp(kEq, e.f32d(dn), e.f32d(up));
  const B dn_odd = e.ne(e.and_(dn, e.k(1)), e.k(0));
  return e.sel(exact, e.d2f32(so, ir::Round::NearestEven), e.sel(dn_odd, dn, up));
}
// FPCLASS: one bit set, by class: 0 signalling NaN, 1 quiet NaN, 2 -inf,
// 3 -normal, 4 -subnormal, 5 -0, 6 +0, 7 +subnormal, 8 +normal, 9 +inf.
template <class E> typename E::V fpclass(E& e, typename E::V v, bool h) {
  const uint32_t signbit = h ? 0x8000u : 0x80000000u, quiet = h ? 0x0200u : 0x00400000u;
  const uint32_t expm = h ? 0x7c00u : 0x7f800000u;
  typename E::B neg = e.ne(e.and_(v, e.k(signbit)), e.k(0));
  typename E::B nan = is_nan_bits(e, v, h), inf = is_inf_bits(e, v, h), zero = is_zero_bits(e, v, h);
  typename E::B sub = e.band(e.eq(e.and_(v, e.k(expm)), e.k(0)), e.bnot(zero));
  typename E::V pos_idx = e.sel(inf, e.k(9), e.sel(zero, e.k(6), e.sel(sub, e.k(7), e.k(8))));
  typename E::V neg_idx = e.sel(inf, e.k(2), e.sel(zero, e.k(5), e.sel(sub, e.k(4), e.k(3))));
  typename E::V idx = e.sel(nan, e.sel(e.ne(e.and_(v, e.k(quiet)), e.k(0)), e.k(1), e.k(0)), e.sel(neg, neg_idx, pos_idx));
  return e.shlv(e.k(1), idx);
}
// The f16 output clamps (interp.cpp clamp16): NaN -> +0 under every clamp.
template <class E> typename E::V clamp16(E& e, typename E::V y, const std::string& c) {
  if (c.empty() || c == "none") return y;
  typename E::D f = e.f16d(y);
  typename E::V r;
  if (c == "clamp_0_inf") r = e.sel(e.dcmp(kLe, f, e.kd(0)), e.k(0), y);
  else if (c == "clamp_m1_1")
    r = e.sel(e.dcmp(kLt, f, e.kd(-1)), e.k(0xbc00), e.sel(e.dcmp(kGt, f, e.kd(1)), e.k(0x3c00), y));
  else r = e.sel(e.dcmp(kLe, f, e.kd(0)), e.k(0), e.sel(e.dcmp(kGt, f, e.kd(1)), e.k(0x3c00), y));
  return e.sel(e.disnan(f), e.k(0), r);
}
// Whether the instruction reads/produces signed lanes.
inline bool signed_form(const std::string& n) {
  for (const char* t : {".s32", ".v2s16", ".v4s8", "S8_TO", "S16_TO", "_TO_V2S16", "_TO_S32"})
    if (n.find(t) != std::string::npos) return true;
  return false;
}

// ---- special-function tables (docs/bifrost.md "Special functions") ------
// FLOG_TABLE: 128 buckets of the log-reduced mantissa a1 in [0.75, 1.5),
// indexed by the top 7 fraction bits of x (fraction >= 0.5: a1 = (1 + f) / 2
// in [0.75, 1), else a1 = 1 + f in [1, 1.5)); per bucket, with its midpoint
// m: red = r1 = 1/m rounded to f32, base2 = -log2(r1), natural = -log2(r1) * ln 2
// (f64, rounded once to f32).
inline const uint32_t* flog_table(int mode) {
  static const auto tables = [] {
    std::array<std::array<uint32_t, 128>, 3> t{};
    for (unsigned i = 0; i < 128; ++i) {
      const double f = (i + 0.5) / 128.0, mid = f >= 0.5 ? 0.5 * (1.0 + f) : 1.0 + f;
      const uint64_t r1 = ir::fbits::from_double(1.0 / mid, ir::Type::F32, ir::Round::NearestEven);
      const double lg = -std::log2(ir::fbits::to_double(r1, ir::Type::F32));
      t[0][i] = uint32_t(r1);
      t[1][i] = uint32_t(ir::fbits::from_double(lg, ir::Type::F32, ir::Round::NearestEven));
      t[2][i] = uint32_t(ir::fbits::from_double(lg * 0.6931471805599453, ir::Type::F32, ir::Round::NearestEven));
    }
    return t;
  }();
  return tables[size_t(mode)].data();
}
// FSIN_TABLE.u6 / FCOS_TABLE.u6: sin / cos of (index * pi / 32), index = the
// low 6 bits of the source (Mesa: "multiplies the bottom 6-bits by pi/32"),
// rounded to nearest f32; exact 0 and +-1 at the quadrant points.
inline const uint32_t* sincos_table(bool cos) {
  static const auto tables = [] {
    std::array<std::array<uint32_t, 64>, 2> t{};
    auto sin_k = [](unsigned k) {  // sin(k pi / 32) by quadrant symmetry
      k &= 63;
      const double sg = k >= 32 ? -1.0 : 1.0;
      k &= 31;
      if (k > 16) k = 32 - k;
      if (k == 0) return 0.0;  // +0 at 0 and pi
      return sg * (k == 16 ? 1.0 : std::sin(k * 3.14159265358979323846 / 32.0));
    };
    for (unsigned k = 0; k < 64; ++k) {
      t[0][k] = uint32_t(ir::fbits::from_double(sin_k(k), ir::Type::F32, ir::Round::NearestEven));
      t[1][k] = uint32_t(ir::fbits::from_double(sin_k(k + 16), ir::Type::F32, ir::Round::NearestEven));
    }
    return t;
  }();
  return tables[cos ? 1 : 0].data();
}
// A table read as a binary tree of selects on the index bits (n a power of two).
template <class E> typename E::V lookup(E& e, typename E::V idx, const uint32_t* t, unsigned n) {
  std::vector<typename E::V> cur;
  for (unsigned i = 0; i < n; ++i) cur.push_back(e.k(t[i]));
  for (unsigned b = 0; (1u << b) < n; ++b) {
    typename E::B bit = e.ne(e.and_(idx, e.k(1u << b)), e.k(0));
    std::vector<typename E::V> nxt;
    for (size_t i = 0; i + 1 < cur.size(); i += 2) nxt.push_back(e.sel(bit, cur[i + 1], cur[i]));
    cur = std::move(nxt);
  }
  return cur[0];
}
// |x| of a finite nonzero f32 (bits v) log-reduced: a1 in [0.75, 1.5) (f64, exact).
template <class E> typename E::D log_mantissa(E& e, typename E::V v) {
  typename E::Q q = e.dbits(e.f32d(e.and_(v, e.k(0x7fffffffu))));
  typename E::D m = e.qd(e.orq(e.andq(q, e.kq(0x000fffffffffffffull)), e.kq(uint64_t(1022) << 52)));  // [0.5, 1)
  return e.seld(e.dcmp(kLt, m, e.kd(0.75)), e.dmul(m, e.kd(2.0)), m);
}

// The arc-tangent reduction of the seed's atan2 sequence (ATAN_ASSIST /
// ATAN_TABLE): from |y| and |x| (f64), the coarse slope a = |y| / |x|
// rounded to f16 (clamped to 65504) with its low 5 mantissa bits cleared
// (32 steps per binade); 0/0 -> 0, inf/inf -> 1; returned as f64.
template <class E> typename E::D atan_slope(E& e, typename E::V y, typename E::V x) {
  typename E::V ay = e.and_(y, e.k(0x7fffffffu)), ax = e.and_(x, e.k(0x7fffffffu));
  typename E::D q = e.dmul(e.f32d(ay), e.drcp(e.f32d(ax)));
  q = e.seld(e.dcmp(kGt, q, e.kd(65504.0)), e.kd(65504.0), q);  // also y/0 = inf; NaN stays
  typename E::V h = e.and_(e.d2f16(q, ir::Round::NearestEven), e.k(0xffe0));
  typename E::D a = e.f16d(h);
  typename E::B both_zero = e.band(is_zero_bits(e, ay, false), is_zero_bits(e, ax, false));
  typename E::B both_inf = e.band(is_inf_bits(e, ay, false), is_inf_bits(e, ax, false));
  return e.seld(both_inf, e.kd(1.0), e.seld(both_zero, e.kd(0.0), a));
}
// atan(a) for a >= 0 in f64: a > 1 -> pi/2 - atan(1/a); two half-angle
// reductions t -> t / (1 + sqrt(1 + t^2)) (|t| <= tan(pi/16)), then the odd
// Taylor series to t^23 in Horner form; every step an IEEE f64 operation.
template <class E> typename E::D atan_f64(E& e, typename E::D a) {
  typename E::B inv = e.dcmp(kGt, a, e.kd(1.0));
  typename E::D t = e.seld(inv, e.drcp(a), a);
  for (int i = 0; i < 2; ++i)
    t = e.dmul(t, e.drcp(e.dadd(e.kd(1.0), e.dsqrt(e.dadd(e.kd(1.0), e.dmul(t, t))))));
  typename E::D t2 = e.dmul(t, t);
  typename E::D p = e.kd(-1.0 / 23.0);
  for (int k = 10; k >= 0; --k) p = e.dadd(e.kd((k & 1 ? -1.0 : 1.0) / (2 * k + 1)), e.dmul(t2, p));
  typename E::D r = e.dmul(e.kd(4.0), e.dmul(t, p));
  return e.seld(inv, e.dadd(e.kd(1.5707963267948966), e.dmul(r, e.kd(-1.0))), r);
}

// ---- the families --------------------------------------------------------

template <class E>
typename E::V eval(E& e, int op, const DecodedIns& in, const typename E::V* s, bool ftz) {
  using V = typename E::V;
  using B = typename E::B;
  using D = typename E::D;
  const std::string& n = in.enc->name;
  const bool sgn = signed_form(n);
  const int cmp = cmp_code(in.mod("cmpf"));
  const std::string& rt = in.mod("result_type");
  const ir::Round R = round_of(in.mod("round"));
  const bool abs0 = mod_on(in, "abs0"), abs1 = mod_on(in, "abs1"), neg0 = mod_on(in, "neg0"), neg1 = mod_on(in, "neg1");
  const bool neg2 = mod_on(in, "neg2");
  switch (op) {
    case kIaddV4: case kIsubV4: {
      const bool sat = mod_on(in, "saturate");
      const std::string& l1 = in.mod("lanes1");
      V r[4];
      for (unsigned i = 0; i < 4; ++i) {
        V a = byte_of(e, s[0], i), b = byte_of(e, s[1], bsel(l1, i));
        if (sgn) a = sext8(e, a), b = sext8(e, b);
        V y = op == kIsubV4 ? e.sub(a, b) : e.add(a, b);
        if (sat) {
          const uint32_t lo = sgn ? uint32_t(-128) : 0, hi = sgn ? 127 : 255;
          y = e.sel(e.slt(y, e.k(lo)), e.k(lo), e.sel(e.slt(e.k(hi), y), e.k(hi), y));
        }
        r[i] = y;
      }
      return pack4(e, r);
    }
    case kHadd32: {
      // floor((a + b) / 2) = (a & b) + ((a ^ b) >> 1); ceil = (a | b) - ((a ^ b) >> 1)
      const bool up = in.mod("round") == "rtp";
      V x = e.xor_(s[0], s[1]);
      V h = sgn ? e.ashr(x, 1) : e.lshr(x, 1);
      return up ? e.sub(e.or_(s[0], s[1]), h) : e.add(e.and_(s[0], s[1]), h);
    }
    case kHaddV2: case kHaddV4: {
      const bool up = in.mod("round") == "rtp", v2 = op == kHaddV2;
      const unsigned lanes = v2 ? 2 : 4;
      V r[4];
      for (unsigned i = 0; i < lanes; ++i) {
        V a, b;
        if (v2) {
          a = half_of(e, s[0], hsel(in.mod("swap0"), i));
          b = half_of(e, s[1], hsel(in.mod("swap1"), i));
          if (sgn) a = sext16(e, a), b = sext16(e, b);
        } else {
          a = byte_of(e, s[0], i);
          b = byte_of(e, s[1], i);
          if (sgn) a = sext8(e, a), b = sext8(e, b);
        }
        V sum = e.add(e.add(a, b), e.k(up ? 1 : 0));
        r[i] = e.ashr(sum, 1);
      }
      return v2 ? pack2(e, r[0], r[1]) : pack4(e, r);
    }
    case kIabsV2: case kIabsV4: {
      if (op == kIabsV2) {
        V r[2];
        for (unsigned h = 0; h < 2; ++h) {
          V a = sext16(e, half_of(e, s[0], hsel(in.mod("swz0"), h)));
          r[h] = e.sel(e.slt(a, e.k(0)), e.sub(e.k(0), a), a);
        }
        return pack2(e, r[0], r[1]);
      }
      V r[4];
      for (unsigned i = 0; i < 4; ++i) {
        V a = sext8(e, byte_of(e, s[0], i));
        r[i] = e.sel(e.slt(a, e.k(0)), e.sub(e.k(0), a), a);
      }
      return pack4(e, r);
    }
    case kIcmpV2: case kIcmpV4: {
      const bool v2 = op == kIcmpV2, m1 = rt == "m1";
      const unsigned lanes = v2 ? 2 : 4;
      V r[4];
      for (unsigned i = 0; i < lanes; ++i) {
        V a, b;
        if (v2) {
          a = half_of(e, s[0], hsel(in.mod("swz0"), i));
          b = half_of(e, s[1], hsel(in.mod("swz1"), i));
          if (sgn) a = sext16(e, a), b = sext16(e, b);
        } else {
          a = byte_of(e, s[0], i);
          b = byte_of(e, s[1], i);
          if (sgn) a = sext8(e, a), b = sext8(e, b);
        }
        r[i] = e.sel(icmp(e, cmp, a, b, sgn), e.k(m1 ? 0xffffu : 1u), e.k(0));
      }
      return v2 ? pack2(e, r[0], r[1]) : pack4(e, r);
    }
    case kIcmpI: {
      B c = icmp(e, cmp, s[0], s[1], n.ends_with(".s32"));
      return e.sel(c, e.k(rt == "m1" ? 0xffffffffu : 1u), e.k(0));
    }
    case kCselV2I: case kCselV2F: {
      V r[2];
      for (unsigned h = 0; h < 2; ++h) {
        V a = half_of(e, s[0], h), b = half_of(e, s[1], h);
        B c;
        if (op == kCselV2F) c = e.dcmp(cmp, e.f16d(a), e.f16d(b));
        else {
          if (sgn) a = sext16(e, a), b = sext16(e, b);
          c = icmp(e, cmp, a, b, sgn);
        }
        r[h] = e.sel(c, half_of(e, s[2], h), half_of(e, s[3], h));
      }
      return pack2(e, r[0], r[1]);
    }
    case kMuxV2: case kMuxV4: {
      const std::string& m = in.mod("mux");
      const bool v2 = op == kMuxV2;
      const unsigned lanes = v2 ? 2 : 4;
      V r[4];
      for (unsigned i = 0; i < lanes; ++i) {
        V a, b, c;
        if (v2) {
          a = half_of(e, s[0], hsel(in.mod("swap0"), i));
          b = half_of(e, s[1], hsel(in.mod("swap1"), i));
          c = half_of(e, s[2], hsel(in.mod("swap2"), i));
        } else {
          a = byte_of(e, s[0], i);
          b = byte_of(e, s[1], i);
          c = byte_of(e, s[2], i);
        }
        const uint32_t sign = v2 ? 0x8000u : 0x80u;
        if (m == "bit") {
          r[i] = e.or_(e.and_(a, c), e.and_(b, e.not_(c)));
          continue;
        }
        B pick;
        if (m == "neg") pick = e.ne(e.and_(c, e.k(sign)), e.k(0));
        else if (m == "fp_zero") pick = e.eq(e.and_(c, e.k(sign - 1)), e.k(0));
        else pick = e.eq(c, e.k(0));  // int_zero
        r[i] = e.sel(pick, a, b);
      }
      return v2 ? pack2(e, r[0], r[1]) : pack4(e, r);
    }
    case kSwzV2: {
      const std::string& z = in.mod("swz0");
      return pack2(e, half_of(e, s[0], hsel(z, 0)), half_of(e, s[0], hsel(z, 1)));
    }
    case kSwzV4: {
      const std::string& z = in.mod("swz0");
      V r[4];
      for (unsigned i = 0; i < 4; ++i) r[i] = byte_of(e, s[0], bsel(z, i));
      return pack4(e, r);
    }
    case kClzV2: {
      V r[2];
      for (unsigned h = 0; h < 2; ++h) r[h] = e.sub(e.clz(half_of(e, s[0], hsel(in.mod("swz0"), h))), e.k(16));
      return pack2(e, r[0], r[1]);
    }
    case kClzV4: {
      V r[4];
      for (unsigned i = 0; i < 4; ++i) r[i] = e.sub(e.clz(byte_of(e, s[0], i)), e.k(24));
      return pack4(e, r);
    }
    case kImulV2: {
      V r[2];
      for (unsigned h = 0; h < 2; ++h)
        r[h] = e.mul(half_of(e, s[0], hsel(in.mod("swz0"), h)), half_of(e, s[1], hsel(in.mod("swz1"), h)));
      return pack2(e, r[0], r[1]);
    }
    case kImulV4: {
      const std::string& rp = in.mod("replicate1");
      V r[4];
      for (unsigned i = 0; i < 4; ++i) r[i] = e.mul(byte_of(e, s[0], i), byte_of(e, s[1], bsel(rp, i)));
      return pack4(e, r);
    }
    case kIdp: {
      const bool s0 = in.mod("sign0") == "sext", s1 = in.mod("sign1") == "sext";
      V acc = e.k(0);
      for (unsigned i = 0; i < 4; ++i) {
        V a = byte_of(e, s[0], i), b = byte_of(e, s[1], i);
        if (s0) a = sext8(e, a);
        if (s1) b = sext8(e, b);
        acc = e.add(acc, e.mul(a, b));
      }
      return acc;
    }
    case kV2I8ToV2I16: case kV2I8ToV2F16: {
      const std::string& z = in.mod("swz0");
      V r[2];
      for (unsigned h = 0; h < 2; ++h) {
        V b = byte_of(e, s[0], bsel(z, h));
        if (sgn) b = sext8(e, b);
        r[h] = op == kV2I8ToV2I16 ? b : e.d2f16(e.i2d(b, true), ir::Round::NearestEven);  // exact
      }
      return pack2(e, r[0], r[1]);
    }
    case kShiftV2: case kShiftV4: {
      const bool v2 = op == kShiftV2;
      const unsigned lanes = v2 ? 2 : 4, width = v2 ? 16 : 8;
      const bool ar = n.rfind("*ARSHIFT", 0) == 0, left = n[1] == 'L';
      const int kind = n.find("_AND") != std::string::npos ? 0 : n.find("_OR") != std::string::npos ? 1 : 2;
      const bool not1 = in.mod("not1") == "not", notr = in.mod("not_result") == "not";
      const std::string& l2 = in.mod("lanes2");
      const uint32_t lm = v2 ? 0xffffu : 0xffu;
      V r[4];
      for (unsigned i = 0; i < lanes; ++i) {
        V a = v2 ? half_of(e, s[0], i) : byte_of(e, s[0], i);
        V sh = e.and_(byte_of(e, s[2], bsel(l2, i)), e.k(width - 1));
        V y;
        if (ar) {
          y = e.ashrv(v2 ? sext16(e, a) : sext8(e, a), sh);
        } else {
          V b = v2 ? half_of(e, s[1], i) : byte_of(e, s[1], i);
          if (not1) b = e.not_(b);
          V x = left ? e.shlv(a, sh) : e.lshrv(a, sh);
          y = kind == 0 ? e.and_(x, b) : kind == 1 ? e.or_(x, b) : e.xor_(x, b);
        }
        if (notr) y = e.not_(y);
        r[i] = e.and_(y, e.k(lm));
      }
      return v2 ? pack2(e, r[0], r[1]) : pack4(e, r);
    }
    case kI8ToF32: case kI16ToF32: {
      const std::string& ln = in.mod("lane0");
      const unsigned sel = ln.size() == 2 ? unsigned(ln[1] - '0') : 0;
      V v = op == kI8ToF32 ? byte_of(e, s[0], sel) : half_of(e, s[0], sel);
      if (sgn) v = op == kI8ToF32 ? sext8(e, v) : sext16(e, v);
      return e.d2f32(e.i2d(v, true), ir::Round::NearestEven);  // exact
    }
    case kF16ToI32: {
      D d = e.f16d(half_of(e, s[0], in.mod("lane0") == "h1" ? 1 : 0));
      return to_int(e, d, sgn, in.mod("round"));
    }
    case kV2F16ToV2I16: {
      const std::string& z = in.mod("swz0");
      V r[2];
      for (unsigned h = 0; h < 2; ++h) {
        V y = to_int(e, e.f16d(half_of(e, s[0], hsel(z, h))), sgn, in.mod("round"));
        if (sgn) y = e.sel(e.slt(y, e.k(uint32_t(-32768))), e.k(uint32_t(-32768)), e.sel(e.slt(e.k(32767), y), e.k(32767), y));
        else y = e.sel(e.ult(e.k(65535), y), e.k(65535), y);
        r[h] = y;
      }
      return pack2(e, r[0], r[1]);
    }
    case kV2I16ToV2F16: {
      const std::string& z = in.mod("swz0");
      V r[2];
      for (unsigned h = 0; h < 2; ++h) {
        V v = half_of(e, s[0], hsel(z, h));
        if (sgn) v = sext16(e, v);
        r[h] = d2f_mode(e, e.i2d(v, true), true, in.mod("round"));
      }
      return pack2(e, r[0], r[1]);
    }
    case kFcmpV2F16: {
      V r[2];
      const uint32_t one = rt == "f1" ? 0x3c00u : rt == "m1" ? 0xffffu : 1u;
      for (unsigned h = 0; h < 2; ++h) {
        V a = absneg16(e, half_of(e, s[0], hsel(in.mod("swz0"), h)), abs0, neg0);
        V b = absneg16(e, half_of(e, s[1], hsel(in.mod("swz1"), h)), abs1, neg1);
        r[h] = e.sel(e.dcmp(cmp, e.f16d(a), e.f16d(b)), e.k(one), e.k(0));
      }
      return pack2(e, r[0], r[1]);
    }
    case kFroundV2F16: {
      const std::string& rm = in.mod("round");
      V r[2];
      for (unsigned h = 0; h < 2; ++h) {
        D d = e.f16d(absneg16(e, half_of(e, s[0], hsel(in.mod("swz0"), h)), abs0, neg0));
        D y = rm == "rtna" ? round_away(e, d)
              : e.dround(d, rm == "rtp" ? kCeil : rm == "rtn" ? kFloor : rm == "rtz" ? kTrunc : kRint);
        r[h] = e.d2f16(y, ir::Round::NearestEven);  // exact
      }
      return pack2(e, r[0], r[1]);
    }
    case kFrexpmV2F16: case kFrexpeV2F16: {
      const bool sq = mod_on(in, "sqrt"), lg = mod_on(in, "log");
      V r[2];
      for (unsigned h = 0; h < 2; ++h) {
        V v = half_of(e, s[0], hsel(in.mod("swz0"), h));
        B special = e.bor(is_inf_bits(e, v, true), is_zero_bits(e, v, true));
        B nan = is_nan_bits(e, v, true);
        // x = m * 2^ex with m in [0.5, 1): ex = ilogb + 1; sqrt: ex even, m in
        // [0.25, 1); log: m in [0.75, 1.5)
        V ex = e.add(ilogb_bits(e, v, true), e.k(1));
        if (sq) ex = e.add(ex, e.and_(ex, e.k(1)));
        // m = |x| * 2^-ex (exact)
        D mag = e.dmul(e.f16d(e.and_(v, e.k(0x7fff))), e.pow2d(e.sub(e.k(0), ex)));
        if (lg) {
          B low = e.dcmp(kLt, mag, e.kd(0.75));
          mag = e.seld(low, e.dmul(mag, e.kd(2.0)), mag);
          ex = e.sel(low, e.sub(ex, e.k(1)), ex);
        }
        if (op == kFrexpeV2F16) {
          V y = sq ? e.ashr(ex, 1) : ex;
          if (neg0) y = e.sub(e.k(0), y);
          r[h] = e.sel(e.bor(nan, special), e.k(0), y);
        } else {
          // the sign of x; abs0 clears it, neg0 flips it
          V m = e.or_(e.d2f16(mag, ir::Round::NearestEven), e.and_(v, e.k(0x8000)));
          m = absneg16(e, e.sel(special, v, m), abs0, neg0);
          r[h] = e.sel(nan, e.k(0x7e00), m);
        }
      }
      return pack2(e, r[0], r[1]);
    }
    case kLdexpV2F16: {
      V r[2];
      for (unsigned h = 0; h < 2; ++h) {
        D d = e.f16d(half_of(e, s[0], h));
        V k = sext16(e, half_of(e, s[1], h));
        k = e.sel(e.slt(k, e.k(uint32_t(-64))), e.k(uint32_t(-64)), e.sel(e.slt(e.k(64), k), e.k(64), k));
        r[h] = d2f_mode(e, e.dmul(d, e.pow2d(k)), true, in.mod("round"));
      }
      return pack2(e, r[0], r[1]);
    }
    case kQuietF32: return e.sel(is_nan_bits(e, s[0], false), e.or_(s[0], e.k(0x00400000u)), s[0]);
    case kQuietV2F16: {
      V r[2];
      for (unsigned h = 0; h < 2; ++h) {
        V v = half_of(e, s[0], hsel(in.mod("swz0"), h));
        r[h] = e.sel(is_nan_bits(e, v, true), e.or_(v, e.k(0x0200)), v);
      }
      return pack2(e, r[0], r[1]);
    }
    case kFpclassF32: case kFpclassF16: {
      const bool h = op == kFpclassF16;
      V v = h ? half_of(e, s[0], in.mod("lane0") == "h1" ? 1 : 0) : s[0];
      return fpclass(e, v, h);
    }
    case kIlogbF32: case kLogbF32: {
      const std::string& w = in.mod("widen0");
      const bool h = w == "h0" || w == "h1";
      V v = h ? half_of(e, s[0], w == "h1" ? 1 : 0) : flush32(e, s[0], ftz);
      V il = ilogb_bits(e, v, h);
      B nan = is_nan_bits(e, v, h), inf = is_inf_bits(e, v, h), zero = is_zero_bits(e, v, h);
      if (op == kIlogbF32)
        return e.sel(e.bor(nan, zero), e.k(0x80000000u), e.sel(inf, e.k(0x7fffffffu), il));
      V f = e.d2f32(e.i2d(il, true), ir::Round::NearestEven);
      return e.sel(nan, e.k(0x7fc00000u), e.sel(inf, e.k(0x7f800000u), e.sel(zero, e.k(0xff800000u), f)));
    }
    case kIlogbV2F16: case kLogbV2F16: {
      V r[2];
      for (unsigned hh = 0; hh < 2; ++hh) {
        V v = half_of(e, s[0], hsel(in.mod("swz0"), hh));
        V il = ilogb_bits(e, v, true);
        B nan = is_nan_bits(e, v, true), inf = is_inf_bits(e, v, true), zero = is_zero_bits(e, v, true);
        if (op == kIlogbV2F16) {
          r[hh] = e.sel(e.bor(nan, zero), e.k(0x8000), e.sel(inf, e.k(0x7fff), il));
        } else {
          V f = e.d2f16(e.i2d(il, true), ir::Round::NearestEven);
          r[hh] = e.sel(nan, e.k(0x7e00), e.sel(inf, e.k(0x7c00), e.sel(zero, e.k(0xfc00), f)));
        }
      }
      return pack2(e, r[0], r[1]);
    }
    case kFrcpF16: case kFrsqF16: {
      V v = absneg16(e, half_of(e, s[0], in.mod("lane0") == "h1" ? 1 : 0), abs0, neg0);
      D d = e.f16d(v);
      D y = op == kFrcpF16 ? e.drcp(d) : e.drsq(d);
      return e.d2f16(y, ir::Round::NearestEven);
    }
    case kFaddRscale: {
      const std::string& cl = in.mod("clamp");
      D a = e.f32d(absneg32(e, flush32(e, s[0], ftz), abs0, neg0));
      D b = e.f32d(absneg32(e, flush32(e, s[1], ftz), abs1, neg1));
      // (a + b) * 2^k rounded once per mode: the sum rounded to odd at f64
      // precision (add_rto53), scaled exactly: k clamped to +-300 keeps every
      // nonzero scaled sum a normal f64 (|a + b| is 0 or in [2^-149, 2^129)),
      // and changes no result (past +-300 every f32 result is the overflow or
      // underflow value of its mode anyway).
      V k = s[2];
      k = e.sel(e.slt(k, e.k(uint32_t(-300))), e.k(uint32_t(-300)), e.sel(e.slt(e.k(300), k), e.k(300), k));
      D sum = add_rto53(e, a, b);
      const std::string& rm = in.mod("round");
      if (rm == "rtn") {  // IEEE: an exact zero sum is -0 when rounding down unless both operands are +0
        B sa = e.ne(e.and_(e.hi(e.dbits(a)), e.k(0x80000000u)), e.k(0));
        B sb = e.ne(e.and_(e.hi(e.dbits(b)), e.k(0x80000000u)), e.k(0));
        sum = e.seld(e.band(e.dcmp(kEq, sum, e.kd(0.0)), e.bor(sa, sb)), e.kd(-0.0), sum);
      }
      // `.n` changes nothing here: Mesa lowers FADD_RSCALE(a, b, c, special) to
      // FMA_RSCALE(a, 1.0, b, c, special) (Valhall's va_lower_isel), and `.n`
      // only acts on a product with a zero factor, which a * 1.0 never turns into NaN.
      V y = d2f_mode(e, e.dmul(sum, e.pow2d(k)), false, rm);
      if (cl == "clamp_0_1") {
        // NaN and x <= 0 -> +0, x >= 1 -> 1.0
        B pos = e.bnot(e.bor(is_nan_bits(e, y, false), e.bor(is_zero_bits(e, y, false), e.ne(e.and_(y, e.k(0x80000000u)), e.k(0)))));
        y = e.sel(pos, e.sel(e.ule(e.k(0x3f800000u), y), e.k(0x3f800000u), y), e.k(0));
      }
      return flush32(e, y, ftz);
    }
    case kFmaRscaleV2F16: {
      const std::string& cl = in.mod("clamp");
      const bool rcp_mode = in.mod("special") == "n", left = in.mod("special") == "left";
      V r[2];
      for (unsigned h = 0; h < 2; ++h) {
        V va = absneg16(e, half_of(e, s[0], h), abs0, neg0), vb = absneg16(e, half_of(e, s[1], h), false, neg1);
        V vc = absneg16(e, half_of(e, s[2], h), false, neg2);
        D a = e.f16d(va), b = e.f16d(vb), c = e.f16d(vc);
        D sum = e.dfma(a, b, c);
        if (rcp_mode) {
          // a zero factor makes the product zero, also times inf or NaN (interp.cpp kFmaRscaleF32)
          B zm = e.bor(is_zero_bits(e, va, true), is_zero_bits(e, vb, true));
          B ng = e.ne(e.and_(e.xor_(va, vb), e.k(0x8000)), e.k(0));
          sum = e.seld(zm, e.dadd(e.seld(ng, e.kd(-0.0), e.kd(0.0)), c), sum);
        }
        V k = sext16(e, half_of(e, s[3], h));
        k = e.sel(e.slt(k, e.k(uint32_t(-64))), e.k(uint32_t(-64)), e.sel(e.slt(e.k(64), k), e.k(64), k));
        V y = e.d2f16(e.dmul(sum, e.pow2d(k)), R);
        // .left per lane as *FMA_RSCALE.f32.left (the seed's sqrt_mode): a zero
        // or infinite src0 lane is the result
        if (left) y = e.sel(e.bor(is_zero_bits(e, va, true), is_inf_bits(e, va, true)), va, y);
        r[h] = clamp16(e, y, cl);
      }
      return pack2(e, r[0], r[1]);
    }
    case kShiftDouble: case kFunnel: {
      // x = src0 | src1 << 32; amount = byte lane2 (b0 / b2) of src2, times 8
      // with .bytes2, mod 64 (mod 32 for the funnel forms); result_word picks
      // the 32-bit half. FLSHIFT = high word of x << n, FRSHIFT = low word of x >> n.
      V amt = byte_of(e, s[2], in.mod("lane2") == "b2" ? 2 : 0);
      if (mod_on(in, "bytes2")) amt = e.shl(amt, 3);
      typename E::Q x = e.addq(e.zx(s[0]), e.shlq(e.zx(s[1]), e.k(32)));
      if (op == kFunnel) {
        amt = e.and_(amt, e.k(31));
        return n[1] == 'F' && n[2] == 'L' ? e.hi(e.shlq(x, amt)) : e.lo(e.lshrq(x, amt));
      }
      amt = e.and_(amt, e.k(63));
      typename E::Q y;
      if (n.rfind("*LSHIFT", 0) == 0) y = e.shlq(x, amt);
      else if (n.rfind("*RSHIFT", 0) == 0) y = e.lshrq(x, amt);
      else if (n.rfind("*ARSHIFT", 0) == 0) y = e.ashrq(x, amt);
      else {
        V back = e.and_(e.sub(e.k(64), amt), e.k(63));
        const bool lrot = n.rfind("*LROT", 0) == 0;
        typename E::Q a = lrot ? e.shlq(x, amt) : e.lshrq(x, amt), b = lrot ? e.lshrq(x, back) : e.shlq(x, back);
        y = e.orq(a, e.sel_q(e.eq(amt, e.k(0)), e.kq(0), b));
      }
      return in.mod("result_word") == "w1" ? e.hi(y) : e.lo(y);
    }
    case kFlogTable: {
      const std::string& w = in.mod("widen0");
      V v = s[0];
      if (w == "h0" || w == "h1") v = e.d2f32(e.f16d(half_of(e, v, w == "h1" ? 1 : 0)), ir::Round::NearestEven);
      v = absneg32(e, flush32(e, v, ftz), abs0, neg0);
      const std::string& md = in.mod("mode");
      const int mode = md == "base2" ? 1 : md == "natural" ? 2 : 0;
      typename E::Q q = e.dbits(e.f32d(v));
      V idx = e.and_(e.lo(e.lshrq(q, e.k(45))), e.k(0x7f));  // top 7 fraction bits, subnormals normalised
      V t = lookup(e, idx, flog_table(mode), 128);
      B zero = is_zero_bits(e, v, false), inf = is_inf_bits(e, v, false);
      B bad = e.bor(is_nan_bits(e, v, false), e.band(e.ne(e.and_(v, e.k(0x80000000u)), e.k(0)), e.bnot(zero)));
      const uint32_t z = mode == 0 ? 0x3f800000u : 0xff800000u, i = mode == 0 ? 0x3f800000u : 0x7f800000u;
      return e.sel(bad, e.k(0x7fc00000u), e.sel(zero, e.k(z), e.sel(inf, e.k(i), t)));
    }
    case kFlogd: {
      // log2(a1) / (a1 - 1) of the log-reduced mantissa (1 / ln 2 at a1 = 1)
      V v = flush32(e, s[0], ftz);
      D u = log_mantissa(e, v);
      D y = e.dmul(e.dlog2(u), e.drcp(e.dadd(u, e.kd(-1.0))));
      V r = e.sel(e.dcmp(kEq, u, e.kd(1.0)), e.k(0x3fb8aa3bu), e.d2f32(y, ir::Round::NearestEven));
      B zero = is_zero_bits(e, v, false), inf = is_inf_bits(e, v, false);
      B bad = e.bor(is_nan_bits(e, v, false), e.band(e.ne(e.and_(v, e.k(0x80000000u)), e.k(0)), e.bnot(zero)));
      return e.sel(bad, e.k(0x7fc00000u), e.sel(e.bor(zero, inf), e.k(0x7f800000u), flush32(e, r, ftz)));
    }
    case kCubeface1: {
      // max(|src0|, |src1|, |src2|) (Valhall ISA.xml: "Select the maximum
      // absolute value of its arguments"; Mesa: "Compute max { |x|, |y|, |z| }").
      // Our NaN rule (FMAX's default): a NaN operand loses, three NaNs give
      // the canonical NaN. Non-negative f32 bits order as unsigned integers.
      V a0 = e.and_(flush32(e, s[0], ftz), e.k(0x7fffffffu));
      B seen = e.ule(a0, e.k(0x7f800000u));
      V m = e.sel(seen, a0, e.k(0));
      for (unsigned i = 1; i < 3; ++i) {
        V a = e.and_(flush32(e, s[i], ftz), e.k(0x7fffffffu));
        B ok = e.ule(a, e.k(0x7f800000u));
        m = e.sel(e.band(ok, e.ult(m, a)), a, m);
        seen = e.bor(seen, ok);
      }
      return e.sel(seen, m, e.k(0x7fc00000u));
    }
    case kCubeface2: {
      // Defined by gpurc (docs/bifrost.md "Cube maps"): called with the paired
      // *CUBEFACE1 as `in` and its three sources as s. The face of the major
      // axis, numbered as in GL (+X 0, -X 1, +Y 2, -Y 3, +Z 4, -Z 5), in bits
      // 29-31 (Mesa: the face is "preshifted" there); the other bits are 0.
      // Ties go to X, then Y; a NaN magnitude orders above inf.
      V c[3], a[3];
      for (unsigned i = 0; i < 3; ++i) {
        c[i] = absneg32(e, flush32(e, s[i], ftz), false, i == 0 ? neg0 : i == 1 ? neg1 : neg2);
        a[i] = e.and_(c[i], e.k(0x7fffffffu));
      }
      B is_x = e.band(e.ule(a[1], a[0]), e.ule(a[2], a[0]));
      B is_y = e.band(e.bnot(is_x), e.ule(a[2], a[1]));
      V axis = e.sel(is_x, e.k(0), e.sel(is_y, e.k(2), e.k(4)));
      V sign = e.lshr(e.sel(is_x, c[0], e.sel(is_y, c[1], c[2])), 31);
      return e.shl(e.add(axis, sign), 29);
    }
    case kCubeSsel: case kCubeTsel: {
      // Defined by gpurc: the GL cube-map table's s_c / t_c (with its sign)
      // for the face in bits 29-31 of src2 (faces 6 and 7 act as +Z). SSEL
      // reads (z, x), TSEL (y, z); neg0/neg1 apply to the sources first.
      V p0 = absneg32(e, s[0], false, neg0), p1 = absneg32(e, s[1], false, neg1);
      V f = e.and_(e.lshr(s[2], 29), e.k(7));
      V flip = e.k(0x80000000u);
      if (op == kCubeSsel) {
        // +X: -z, -X: +z, +Y/-Y/+Z: +x, -Z: -x
        V r = e.sel(e.eq(f, e.k(0)), e.xor_(p0, flip), e.sel(e.eq(f, e.k(1)), p0, p1));
        return e.sel(e.eq(f, e.k(5)), e.xor_(p1, flip), r);
      }
      // +Y: +z, -Y: -z, the X and Z faces: -y
      return e.sel(e.eq(f, e.k(2)), p1, e.sel(e.eq(f, e.k(3)), e.xor_(p1, flip), e.xor_(p0, flip)));
    }
    case kSegAdd:
      // Mesa's SEG_ADD.i64 (a wls offset made a 64-bit address for shared
      // atomics) lowers to *SEG_ADD (low word, from the offset) and +SEG_ADD
      // (high word, from the offset's high word). gpurc's wls window
      // (docs/bifrost.md "Segment addresses"): low word = the offset, high
      // word = the source + kWlsWindowHi.
      // SEG_SUB (Valhall: SEG_ADD with .neg) is the inverse: address -> offset.
      if (n[0] == '*') return s[0];
      return n.rfind("+SEG_SUB", 0) == 0 ? e.sub(s[0], e.k(kWlsWindowHi)) : e.add(s[0], e.k(kWlsWindowHi));
    case kFaddLscale: {
      // src0 + the log-reduced mantissa of src1 (with its sign; 0, inf, NaN as they are)
      V a = absneg32(e, flush32(e, s[0], ftz), abs0, neg0);
      V b = absneg32(e, flush32(e, s[1], ftz), abs1, neg1);
      D m = log_mantissa(e, b);
      m = e.seld(e.ne(e.and_(b, e.k(0x80000000u)), e.k(0)), e.dmul(m, e.kd(-1.0)), m);
      B special = e.bor(e.bor(is_zero_bits(e, b, false), is_inf_bits(e, b, false)), is_nan_bits(e, b, false));
      m = e.seld(special, e.f32d(b), m);
      return flush32(e, e.d2f32(e.dadd(e.f32d(a), m), ir::Round::NearestEven), ftz);
    }
    case kFexp: {
      // 2^(src0 / 2^24) (src0 an 8:24 fixed-point s32), rounded to f32; the
      // float scale src1 decides NaN (NaN), -inf (+0) and +inf (+inf).
      D d = e.dexp2(e.dmul(e.i2d(s[0], true), e.kd(0x1p-24)));
      V r = flush32(e, e.d2f32(d, ir::Round::NearestEven), ftz);
      V sc = s[1];
      return e.sel(is_nan_bits(e, sc, false), e.k(0x7fc00000u),
                   e.sel(e.eq(sc, e.k(0xff800000u)), e.k(0), e.sel(e.eq(sc, e.k(0x7f800000u)), e.k(0x7f800000u), r)));
    }
    case kFsinTable: case kFcosTable:
      return lookup(e, e.and_(s[0], e.k(63)), sincos_table(op == kFcosTable), 64);
    case kFatanAssist: case kFatanTable: {
      // sources y, x (f32, or the f16 halves lane0 / lane1 widened exactly)
      V y = s[0], x = s[1];
      if (n.ends_with(".f16")) {
        y = e.d2f32(e.f16d(half_of(e, y, in.mod("lane0") == "h1" ? 1 : 0)), ir::Round::NearestEven);
        x = e.d2f32(e.f16d(half_of(e, x, in.mod("lane1") == "h1" ? 1 : 0)), ir::Round::NearestEven);
      }
      y = flush32(e, y, ftz);
      x = flush32(e, x, ftz);
      B nan = e.bor(is_nan_bits(e, y, false), is_nan_bits(e, x, false));
      D a = atan_slope(e, y, x);
      if (op == kFatanTable) {
        D t = atan_f64(e, a);
        if (n.ends_with(".f16")) return e.sel(nan, e.k(0x7e00), e.d2f16(t, ir::Round::NearestEven));
        return e.sel(nan, e.k(0x7fc00000u), e.d2f32(t, ir::Round::NearestEven));
      }
      // ATAN_ASSIST: high half = a (f16), low half = the scale (s16) that
      // brings max(|y|, |x|) to [1, 2): -ilogb; 0x8000 when either is
      // infinite (LDEXP.inf then maps inf -> 1, finite -> 0), 0 for two zeros.
      V ay = e.and_(y, e.k(0x7fffffffu)), ax = e.and_(x, e.k(0x7fffffffu));
      V mx = e.sel(e.ult(ay, ax), ax, ay);
      V sc = e.sub(e.k(0), ilogb_bits(e, mx, false));
      sc = e.sel(is_zero_bits(e, mx, false), e.k(0), sc);
      sc = e.sel(e.bor(is_inf_bits(e, ay, false), is_inf_bits(e, ax, false)), e.k(0x8000), sc);
      V ah = e.sel(nan, e.k(0x7e00), e.d2f16(a, ir::Round::NearestEven));
      return pack2(e, sc, ah);
    }
    case kLdexpInf: {
      // LDEXP.f32.inf / .inf0 (the seed's ATAN_LDEXP.Y / .X): the scale is the
      // low 16 bits of src1 (s16, ATAN_ASSIST's layout); scale -32768 maps
      // +-inf to +-1.0 and every finite value to +-0 (NaN stays NaN).
      V v = flush32(e, s[0], ftz);
      V k = sext16(e, half_of(e, s[1], 0));
      B special = e.eq(k, e.k(0xffff8000u));
      V sign = e.and_(v, e.k(0x80000000u));
      V sp = e.sel(is_inf_bits(e, v, false), e.or_(sign, e.k(0x3f800000u)), sign);
      // |k| > 1000 gives the same f32 result as +-1000 (pow2d's range)
      V kc = e.sel(e.slt(k, e.k(uint32_t(-1000))), e.k(uint32_t(-1000)), e.sel(e.slt(e.k(1000), k), e.k(1000), k));
      V r = flush32(e, e.d2f32(e.dmul(e.f32d(v), e.pow2d(kc)), ir::Round::NearestEven), ftz);
      return e.sel(is_nan_bits(e, v, false), e.k(0x7fc00000u), e.sel(special, sp, r));
    }
    default: return e.k(0);
  }
}

}  // namespace gpurc::bifrost::ext
