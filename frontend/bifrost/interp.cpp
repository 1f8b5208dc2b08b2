// ARM Mali Bifrost reference interpreter (interp.h, docs/bifrost.md
// "Execution model" and "Instruction status").
#include "frontend/bifrost/interp.h"

#include <algorithm>
#include <bit>
#include <cfenv>
#include <cmath>
#include <cstring>
#include <map>

#include "frontend/bifrost/ops_ext.h"
#include "ir/float_bits.h"

namespace gpurc::bifrost {

namespace {

// Interpreter operations; an encoding maps to one by its name (op_of).
enum Op : int {
  kUnsupported = 0, kNop, kMov, kFmaF32, kFaddF32, kFcmpF32, kCselF32, kCselI32, kCselS32, kCselU32,
  kLshiftAnd, kLshiftOr, kLshiftXor, kRshiftAnd, kRshiftOr, kRshiftXor, kArshift, kImulI32, kFmaV2F16,
  kFaddV2F16, kF16ToF32, kV2F32ToV2F16, kS8ToS32, kU8ToU32, kS16ToS32, kU16ToU32, kMkvecV2I16, kPopcount,
  kBitrev, kClz, kFrexpm, kFrexpe, kFmaRscaleF32, kShaddxlU32, kShaddxlS32, kIaddc, kIsubb, kFroundF32,
  kFminF32, kFmaxF32, kIaddS32, kIaddU32, kIsubS32, kIsubU32, kIcmpI32, kIcmpS32, kIcmpU32, kMuxI32,
  kF32ToS32, kF32ToU32, kS32ToF32, kU32ToF32, kFrcpF32, kFrsqF32, kFrcpApprox, kFrsqApprox, kLdexpF32,
  kLoad, kStore, kBranchz, kBranch, kJump, kBarrier, kFminV2F16, kFmaxV2F16, kIaddV2S16, kIaddV2U16,
  kIsubV2S16, kIsubV2U16, kIabsS32, kAtomC, kAtomCx, kMkvecV4I8, kClper, kFexpTable,
  kAtomMsg,  // +AXCHG / +ACMPXCHG / +ACMPSTORE
  kWmask, kBranchc,
  kExt,  // defined in ops_ext.h (vector integer, fp16, conversion, classification)
};

const std::map<std::string, int>& op_names() {
  static const std::map<std::string, int> m = {
      {"*NOP", kNop}, {"+NOP", kNop}, {"*MOV.i32", kMov}, {"+MOV.i32", kMov}, {"*FMA.f32", kFmaF32},
      {"*FADD.f32", kFaddF32}, {"+FADD.f32", kFaddF32}, {"*FCMP.f32", kFcmpF32}, {"+FCMP.f32", kFcmpF32},
      {"*CSEL.f32", kCselF32}, {"*CSEL.i32", kCselI32}, {"*CSEL.s32", kCselS32}, {"*CSEL.u32", kCselU32},
      {"*LSHIFT_AND.i32", kLshiftAnd}, {"*LSHIFT_OR.i32", kLshiftOr}, {"*LSHIFT_XOR.i32", kLshiftXor},
      {"*RSHIFT_AND.i32", kRshiftAnd}, {"*RSHIFT_OR.i32", kRshiftOr}, {"*RSHIFT_XOR.i32", kRshiftXor},
      {"*ARSHIFT.i32", kArshift}, {"*IMUL.i32", kImulI32}, {"*FMA.v2f16", kFmaV2F16},
      {"*FADD.v2f16", kFaddV2F16}, {"+FADD.v2f16", kFaddV2F16}, {"*F16_TO_F32", kF16ToF32},
      {"+F16_TO_F32", kF16ToF32}, {"*V2F32_TO_V2F16", kV2F32ToV2F16}, {"+V2F32_TO_V2F16", kV2F32ToV2F16},
      {"*S8_TO_S32", kS8ToS32}, {"+S8_TO_S32", kS8ToS32}, {"*U8_TO_U32", kU8ToU32}, {"+U8_TO_U32", kU8ToU32},
      {"*S16_TO_S32", kS16ToS32}, {"+S16_TO_S32", kS16ToS32}, {"*U16_TO_U32", kU16ToU32},
      {"+U16_TO_U32", kU16ToU32}, {"*MKVEC.v2i16", kMkvecV2I16}, {"+MKVEC.v2i16", kMkvecV2I16},
      {"*POPCOUNT.i32", kPopcount}, {"*BITREV.i32", kBitrev}, {"*CLZ.u32", kClz}, {"*FREXPM.f32", kFrexpm},
      {"+FREXPM.f32", kFrexpm}, {"*FREXPE.f32", kFrexpe}, {"+FREXPE.f32", kFrexpe},
      {"*FMA_RSCALE.f32", kFmaRscaleF32}, {"*SHADDXL.u32", kShaddxlU32}, {"*SHADDXL.s32", kShaddxlS32},
      {"*IADDC.i32", kIaddc}, {"*ISUBB.i32", kIsubb}, {"*FROUND.f32", kFroundF32}, {"+FROUND.f32", kFroundF32},
      {"+FMIN.f32", kFminF32}, {"+FMAX.f32", kFmaxF32}, {"+IADD.s32", kIaddS32}, {"+IADD.u32", kIaddU32},
      {"+ISUB.s32", kIsubS32}, {"+ISUB.u32", kIsubU32}, {"+ICMP.i32", kIcmpI32}, {"+ICMP.s32", kIcmpS32},
      {"+ICMP.u32", kIcmpU32}, {"+MUX.i32", kMuxI32}, {"+F32_TO_S32", kF32ToS32}, {"+F32_TO_U32", kF32ToU32},
      {"+S32_TO_F32", kS32ToF32}, {"+U32_TO_F32", kU32ToF32}, {"+FRCP.f32", kFrcpF32}, {"+FRSQ.f32", kFrsqF32},
      {"+FRCP_APPROX.f32", kFrcpApprox}, {"+FRSQ_APPROX.f32", kFrsqApprox}, {"+LDEXP.f32", kLdexpF32},
      {"+LOAD.i8", kLoad}, {"+LOAD.i16", kLoad}, {"+LOAD.i24", kLoad}, {"+LOAD.i32", kLoad},
      {"+LOAD.i48", kLoad}, {"+LOAD.i64", kLoad}, {"+LOAD.i96", kLoad}, {"+LOAD.i128", kLoad},
      {"+STORE.i8", kStore}, {"+STORE.i16", kStore}, {"+STORE.i24", kStore}, {"+STORE.i32", kStore},
      {"+STORE.i48", kStore}, {"+STORE.i64", kStore}, {"+STORE.i96", kStore}, {"+STORE.i128", kStore},
      {"+BRANCHZ.i32", kBranchz}, {"+BRANCHZ.s32", kBranchz}, {"+BRANCHZ.u32", kBranchz},
      {"+BRANCHZ.f32", kBranchz}, {"+BRANCH.i32", kBranch}, {"+BRANCH.s32", kBranch}, {"+BRANCH.u32", kBranch},
      {"+BRANCH.f32", kBranch}, {"+JUMP", kJump}, {"+BRANCHZ.i16", kBranchz}, {"+BRANCHZ.s16", kBranchz},
      {"+BRANCHZ.u16", kBranchz}, {"+BRANCHZ.f16", kBranchz}, {"+BRANCH.i16", kBranch}, {"+BRANCH.s16", kBranch},
      {"+BRANCH.u16", kBranch}, {"+BRANCH.f16", kBranch}, {"+BRANCHC.i32", kBranchc}, {"+BRANCHC.i16", kBranchc}, {"+BARRIER", kBarrier}, {"+FMIN.v2f16", kFminV2F16},
      {"+FMAX.v2f16", kFmaxV2F16}, {"+IADD.v2s16", kIaddV2S16}, {"+IADD.v2u16", kIaddV2U16},
      {"+ISUB.v2s16", kIsubV2S16}, {"+ISUB.v2u16", kIsubV2U16}, {"+IABS.s32", kIabsS32},
      {"*ATOM_C.i32", kAtomC}, {"*MKVEC.v4i8", kMkvecV4I8}, {"+CLPER.i32", kClper}, {"+FEXP_TABLE.u4", kFexpTable}, {"+CLPER_OLD.i32", kClper}, {"*ATOM_C_RETURN.i32", kAtomC}, {"+ATOM_CX", kAtomCx},
      {"*ATOM_C.i64", kAtomC}, {"*ATOM_C_RETURN.i64", kAtomC}, {"*ATOM_C1.i32", kAtomC}, {"*ATOM_C1.i64", kAtomC},
      {"*ATOM_C1_RETURN.i32", kAtomC}, {"*ATOM_C1_RETURN.i64", kAtomC}, {"+AXCHG.i32", kAtomMsg},
      {"+AXCHG.i64", kAtomMsg}, {"+ACMPXCHG.i32", kAtomMsg}, {"+ACMPXCHG.i64", kAtomMsg},
      {"+ACMPSTORE.i32", kAtomMsg}, {"+ACMPSTORE.i64", kAtomMsg}, {"+WMASK", kWmask},
  };
  return m;
}

const char* unit_message_reason(const Encoding& e) {
  if (e.message == "tex" || e.message == "vartex") return "texture unit (no texture model)";
  if (e.message == "varying") return "varying unit (no fragment/vertex model)";
  if (e.message == "attribute") return "attribute unit (no vertex model)";
  if (e.message == "blend") return "blend unit (no framebuffer model)";
  if (e.message == "tile") return "tile unit (no framebuffer model)";
  if (e.message == "z_stencil" || e.message == "atest") return "depth/stencil/alpha test (no fragment model)";
  if (e.message == "job" || e.message == "job_management") return "job control (no job model)";
  return nullptr;
}

int op_of(const Encoding& e) {
  auto it = op_names().find(e.name);
  if (it == op_names().end()) return ext::covers(e.name) ? kExt : kUnsupported;
  return it->second;
}

// ---- float helpers -------------------------------------------------------
using ir::Type;
namespace fb = ir::fbits;

inline float f32(uint32_t b) { return std::bit_cast<float>(b); }
inline uint32_t bits(float f) { return std::bit_cast<uint32_t>(f); }
constexpr uint32_t kNan32 = 0x7fc00000u;
constexpr uint16_t kNan16 = 0x7e00u;

inline float h2f(uint16_t h) { return float(fb::to_double(h, Type::F16)); }
inline uint16_t f2h(double d, ir::Round r = ir::Round::NearestEven) {
  return uint16_t(fb::from_double(d, Type::F16, r));
}

ir::Round round_of(const std::string& r) {
  if (r == "rtp") return ir::Round::Up;
  if (r == "rtn") return ir::Round::Down;
  if (r == "rtz") return ir::Round::TowardZero;
  return ir::Round::NearestEven;
}

// Runs `f` with the host rounding mode set to `r` (f32 arithmetic rounds once, as IEEE defines).
template <class F>
float with_round(ir::Round r, F f) {
  if (r == ir::Round::NearestEven) return f();
  const int old = std::fegetround();
  std::fesetround(r == ir::Round::Up ? FE_UPWARD : r == ir::Round::Down ? FE_DOWNWARD : FE_TOWARDZERO);
  volatile float v = f();
  std::fesetround(old);
  return v;
}

uint32_t canon32(float f) { return std::isnan(f) ? kNan32 : bits(f); }

// Output clamps; NaN becomes +0 under every clamp (the seed's "clamping flushes NaN to zero").
enum Clamp { kNoClamp, kClamp0Inf, kClampM11, kClamp01 };
int clamp_code(const std::string& c) {
  return c == "clamp_0_inf" ? kClamp0Inf : c == "clamp_m1_1" ? kClampM11 : c == "clamp_0_1" ? kClamp01 : kNoClamp;
}
uint32_t clamp32(uint32_t b, int c) {
  if (c == kNoClamp) return b;
  float f = f32(b);
  if (std::isnan(f)) return 0;
  if (c == kClamp0Inf) return f <= 0 ? 0u : b;
  if (c == kClampM11) return f < -1 ? bits(-1.f) : f > 1 ? bits(1.f) : b;
  return f <= 0 ? 0u : f > 1 ? bits(1.f) : b;
}
uint16_t clamp16(uint16_t b, int c) {
  if (c == kNoClamp) return b;
  float f = h2f(b);
  if (std::isnan(f)) return 0;
  if (c == kClamp0Inf) return f <= 0 ? 0 : b;
  if (c == kClampM11) return f < -1 ? 0xbc00 : f > 1 ? 0x3c00 : b;
  return f <= 0 ? 0 : f > 1 ? 0x3c00 : b;
}

uint32_t absneg32(uint32_t b, bool abs, bool neg) {
  if (abs) b &= 0x7fffffffu;
  if (neg) b ^= 0x80000000u;
  return b;
}
uint16_t absneg16(uint16_t b, bool abs, bool neg) {
  if (abs) b &= 0x7fff;
  if (neg) b ^= 0x8000;
  return b;
}

// An f32 operand read with a widen modifier: h0/h1 take that f16 half, exactly widened.
int widen_code(const std::string& w) { return w == "h0" ? 1 : w == "h1" ? 2 : 0; }
uint32_t widen32(uint32_t v, int w) {
  if (w == 1) return bits(h2f(uint16_t(v)));
  if (w == 2) return bits(h2f(uint16_t(v >> 16)));
  return v;
}

uint32_t flush32(uint32_t b, bool ftz) {
  return ftz && (b & 0x7f800000u) == 0 ? (b & 0x80000000u) : b;
}

// Half-pair swizzle: h00, h10, h01 (identity), h11 (first letter = source of the low half).
uint32_t swz16(uint32_t v, const std::string& s) {
  if (s.size() != 3 || s[0] != 'h') return v;
  auto half = [&](char c) { return c == '0' ? (v & 0xffff) : (v >> 16); };
  return half(s[1]) | (half(s[2]) << 16);
}

enum Cmp { kEq, kGt, kGe, kNe, kLt, kLe, kGtLt, kTotal, kNoCmp };
int cmp_code(const std::string& c) {
  static const char* names[] = {"eq", "gt", "ge", "ne", "lt", "le", "gtlt", "total"};
  for (int i = 0; i < 8; ++i)
    if (c == names[i]) return i;
  return kNoCmp;
}
bool fcmp(float a, float b, int c) {
  switch (c) {
    case kEq: return a == b;
    case kGt: return a > b;
    case kGe: return a >= b;
    case kNe: return a != b;  // unordered not-equal: true with a NaN
    case kLt: return a < b;
    case kLe: return a <= b;
    case kGtLt: return a < b || a > b;
    case kTotal: return !std::isnan(a) && !std::isnan(b);  // ordered
    default: return false;
  }
}
template <class T>
bool icmp(T a, T b, int c) {
  switch (c) {
    case kEq: return a == b;
    case kNe: return a != b;
    case kGt: return a > b;
    case kGe: return a >= b;
    case kLt: return a < b;
    case kLe: return a <= b;
    default: return false;
  }
}
int result_code(const std::string& rt) { return rt == "f1" ? 1 : rt == "m1" ? 2 : 0; }
uint32_t result_of(bool r, int rt) {
  if (rt == 1) return r ? 0x3f800000u : 0;
  if (rt == 2) return r ? 0xffffffffu : 0;
  return r ? 1u : 0u;  // i1
}

// FMIN/FMAX: `sem` nan_suppress (a NaN operand loses), nan_propagate (a NaN wins,
// canonical), c (C's a < b ? a : b), inverse_c (b < a ? b : a); -0 < +0.
int sem_code(const std::string& s) { return s == "nan_propagate" ? 1 : s == "c" ? 2 : s == "inverse_c" ? 3 : 0; }
float fminmax(float a, float b, bool max, int sem) {
  if (sem >= 2) {
    const bool inv = sem == 3;
    float x = inv ? b : a, y = inv ? a : b;
    return max ? (x > y ? x : y) : (x < y ? x : y);
  }
  if (std::isnan(a) || std::isnan(b)) {
    if (sem == 1 || (std::isnan(a) && std::isnan(b))) return f32(kNan32);
    return std::isnan(a) ? b : a;
  }
  if (a == b) {  // +-0: by sign
    const bool sa = std::signbit(a);
    return max ? (sa ? b : a) : (sa ? a : b);
  }
  return max ? std::max(a, b) : std::min(a, b);
}

// Float to integer with a rounding mode (none = rtz for conversions, Mesa's
// default); NaN -> 0, out of range saturates.
int64_t round_int(double d, const std::string& r) {
  if (r == "rtp") return int64_t(std::ceil(d));
  if (r == "rtn") return int64_t(std::floor(d));
  if (r == "rtna") return int64_t(std::round(d));
  if (r == "none" || r.empty()) return int64_t(std::nearbyint(d));  // round to nearest even
  return int64_t(std::trunc(d));
}
uint32_t f2s(float f, const std::string& r) {
  if (std::isnan(f)) return 0;
  if (f >= 2147483648.f) return 0x7fffffffu;
  if (f < -2147483648.f) return 0x80000000u;
  return uint32_t(int32_t(round_int(f, r)));
}
uint32_t f2u(float f, const std::string& r) {
  if (std::isnan(f) || f <= -1.f) return 0;
  if (f >= 4294967296.f) return 0xffffffffu;
  int64_t v = round_int(f, r);
  return v < 0 ? 0 : uint32_t(v);
}

// ---- special functions (docs/bifrost.md "Special functions") -------------
// frexp with the mantissa in [0.5, 1) and the exponent e (x = m * 2^e); `sqrt`
// makes e even (m in [0.25, 1)), so that sqrt(x) = sqrt(m) * 2^(e/2); `log`
// puts |m| in [0.75, 1.5) (the log reduction of the seed's G71 sequences).
void frexp_mode(float x, bool sqrt, float& m, int& e, bool log = false) {
  m = std::frexp(x, &e);
  if (sqrt && (e & 1)) {
    m *= 0.5f;
    e += 1;
  }
  if (log && std::fabs(m) < 0.75f) {
    m *= 2.0f;
    e -= 1;
  }
}

// FRCP_APPROX.f32: sign(x) / (bucket midpoint of m), m = the frexp mantissa
// of |x| in [0.5, 1), the 12 fraction bits after the leading one as the index
// (4096 buckets), rounded to nearest f32; a value in (1, 2]. Relative error
// below 2^-13, so one Newton-Raphson step reaches f32 precision.
// 0 -> +-inf, +-inf -> +-0, NaN -> canonical NaN.
uint32_t frcp_approx(uint32_t xb) {
  float x = f32(xb);
  if (std::isnan(x)) return kNan32;
  const uint32_t sign = xb & 0x80000000u;
  if (x == 0) return sign | 0x7f800000u;
  if (std::isinf(x)) return sign;
  float m;
  int e;
  frexp_mode(std::fabs(x), false, m, e);
  const unsigned index = unsigned(std::ldexp(double(m), 13)) - 4096;  // 0..4095
  const double mid = (4096.0 + index + 0.5) / 8192.0;
  return sign | bits(float(1.0 / mid));
}
// FRSQ_APPROX.f32: 1/sqrt(bucket midpoint) of the sqrt-reduced mantissa m in
// [0.25, 1) (FREXPM.sqrt): 11 fraction bits index each binade ([0.25, 0.5)
// and [0.5, 1), 2048 buckets each), rounded to nearest f32. Relative error
// below 2^-13. +-0 -> +inf, negative -> NaN, +inf -> +0, NaN -> canonical NaN.
uint32_t frsq_approx(uint32_t xb) {
  float x = f32(xb);
  if (std::isnan(x) || (x < 0)) return kNan32;
  if (x == 0) return 0x7f800000u;
  if (std::isinf(x)) return 0;
  float m;
  int e;
  frexp_mode(x, true, m, e);
  const double base = m < 0.5f ? 0.25 : 0.5;
  const unsigned index = unsigned((double(m) - base) / base * 2048.0);  // 0..2047
  const double mid = base * (1.0 + (index + 0.5) / 2048.0);
  return bits(float(1.0 / std::sqrt(mid)));
}

// ---- per-lane context ------------------------------------------------------
struct Lanes {
  uint32_t v[kHostLanes];
};

// A clause's lanes and what the current tuple sees.
struct TupleCtx {
  const DecodedClause* c;
  unsigned ti;
  uint32_t mask;
  const Lanes* port[3];
  const Lanes* fau_lo;
  const Lanes* fau_hi;
  const Lanes* t0;
  const Lanes* t1;
  const Lanes* t;  // this tuple's FMA result (ADD source 3)
  bool fma_unit;
  bool ftz;
  const DecodedIns* pair_fma = nullptr;  // the tuple's FMA instruction, while the ADD runs (+CUBEFACE2)
};

inline uint32_t src_val(const TupleCtx& x, unsigned field, unsigned l) {
  switch (field) {
    case 0: return x.port[0]->v[l];
    case 1: return x.port[1]->v[l];
    case 2: return x.port[2]->v[l];
    case 3: return x.fma_unit ? 0u : x.t->v[l];
    case 4: return x.fau_lo->v[l];
    case 5: return x.fau_hi->v[l];
    case 6: return x.t0->v[l];
    default: return x.t1->v[l];
  }
}

bool bitmod(const DecodedIns& in, const char* name) {
  const std::string& v = in.mod(name);
  return !v.empty() && v != "none";
}

std::string hex_u64(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", (unsigned long long)v);
  return b;
}

unsigned mem_bytes(const std::string& name) {
  const size_t dot = name.rfind(".i");
  return unsigned(std::stoul(name.substr(dot + 2))) / 8;
}

}  // namespace

uint32_t fexp_table(unsigned i) {
  return uint32_t(fb::from_double(std::exp2(double(i & 15) / 16.0), Type::F32, ir::Round::NearestEven));
}

const std::string& DecodedIns::mod(const char* name) const {
  static const std::string empty;
  if (!enc) return empty;
  for (size_t i = 0; i < enc->mods.size(); ++i)
    if (enc->mods[i].name == name) {
      const int v = mods[i];
      if (v < 0 || size_t(v) >= enc->mods[i].opts.size()) return empty;
      return enc->mods[i].opts[size_t(v)];
    }
  return empty;
}

std::string wide_clause_reason(const Encoding& e) {
  if (e.message != "none" && !e.message.empty()) return "a message instruction (." + e.message + ")";
  if (e.last) return "a branch, atomic or barrier (it ends a clause)";
  if (!e.staging.empty() && e.staging != "-") return "it uses staging registers";
  return "";
}

std::string unsupported_reason(const Encoding& e) {
  if (const char* r = unit_message_reason(e)) return r;
  if (op_of(e) != kUnsupported) return "";
  // Why the rest has no model (docs/bifrost.md "Instruction status" and
  // "Unsupported instructions: what was searched"). Searched for each: the seed
  // page, the notes, Mesa's Bifrost and Valhall compilers (two trees: Mesa 22
  // and a current one), Valhall's ISA.xml, and public code, docs, pages and
  // issue search; each reason names what those sources do say.
  static const std::pair<const char*, const char*> why[] = {
      {"+DISCARD", "fragment discard (Valhall ISA.xml: valid only in a fragment shader; no fragment model)"},
      {"*DTSEL_IMM", "descriptor table select (no descriptor model)"},
      {"*JUMP_EX", "call/return stack (stack_mode) not modelled (Mesa never emits it and names only its stack_mode "
                   "field; Valhall ISA.xml has no JUMP_EX)"},
      {"+LD_CVT", "conversion descriptor (its format is not public; Mesa never emits LD_CVT)"},
      {"+ST_CVT", "conversion descriptor (its format is not public; Mesa emits ST_CVT only for image stores "
                  "addressed through LEA_ATTR_TEX, the attribute unit: no image model)"},
      {"*ATOM_P", "split atomics (Mesa's bi_emit_atomic_i32_to post-processes ATOM_C's two staging words, value "
                  "and 'coalesced', with ATOM_POST.i32; what ATOM_POST computes from them and what ATOM_PRE does "
                  "is not stated anywhere searched)"},
      {"*SHADDXL.i64", "64-bit shift-add (Valhall SHADDX adds to a 64-bit A; how a 32-bit FMA source and result "
                       "carry it is not public)"},
      {"+BRANCH_", "divergence/low-bits branches (condition not public: Mesa never emits them; Valhall ISA.xml "
                   "names a `lowbits` BRANCHZ combine without a definition)"},
      {"*IMULD", "64-bit multiply half (Valhall IMULD.u64 writes the high product word; the Bifrost `threads` "
                 "even/odd split with +IMOV_FMA is not public, Mesa does not emit it)"},
      {"+IMOV_FMA", "64-bit multiply half (pairs with *IMULD; its `threads` even/odd meaning is not public, "
                    "Mesa does not emit it)"},
      {"+ICMPF", "3-source compare without a condition (not in the seed, the notes, Valhall ISA.xml; Mesa does "
                 "not emit it)"},
      {"+ICMPM", "3-source compare without a condition (not in the seed, the notes, Valhall ISA.xml; Mesa does "
                 "not emit it)"},
      {"+FPOW_SC", "pow special-case steps (their intermediate code format is not public; Mesa does not emit them)"},
      {"+FRCBRT", "cube-root steps A/B/C (how the work splits over the three steps is not public; unused in Mesa)"},
      {"+FSINCOS_OFFSET", "sin/cos table offset (Valhall ISA.xml lists it with the tables without a definition; "
                          "Mesa does not emit it)"},
  };
  for (const auto& [prefix, reason] : why)
    if (e.name.rfind(prefix, 0) == 0) return reason;
  return "semantics not public (no definition in the seed page, the notes, Mesa's Bifrost or Valhall compiler, "
         "Valhall ISA.xml or public code/docs/issue search; Mesa never emits it)";
}

// ---- program ---------------------------------------------------------------

bool Program::load(const std::vector<uint8_t>& code, std::string& err) {
  clauses_.clear();
  code_bytes_ = code.size();
  index_.assign((code.size() + 15) / 16, -1);
  size_t off = 0;
  while (off < code.size()) {
    if (code.size() - off >= 4) {
      uint32_t w;
      std::memcpy(&w, code.data() + off, 4);
      if (w == 0) break;  // padding ends the code
    }
    DecodedClause dc;
    if (!unpack_clause(code.data(), code.size(), off, dc.raw, err)) return false;
    dc.size = size_t(dc.raw.quadwords) * 16;
    dc.wide = dc.raw.header.message_type() == kMessage64;
    for (unsigned i = 0; i < dc.raw.ntuples; ++i) {
      DecodedTuple& t = dc.t[i];
      t.rb = RegBlock::from_bits(dc.raw.tuples[i].regs);
      if (dc.wide) {
        t.rm64 = decode_regs64(dc.raw.tuples[i].regs);
        if (!t.rm64.valid) {
          err = "clause at byte " + std::to_string(off) + " (64-bit clause): tuple " + std::to_string(i) +
                " has an invalid 64-bit register block: " + t.rm64.why;
          return false;
        }
      } else {
        t.rm = decode_regs(t.rb, i == 0);
      }
      if (!dc.wide && t.rm.reserved) {
        err = "clause at byte " + std::to_string(off) + ": tuple " + std::to_string(i) + " has reserved register mode " +
              std::to_string(t.rm.mode);
        return false;
      }
      for (int u = 0; u < 2; ++u) {
        DecodedIns& in = u == 0 ? t.fma : t.add;
        in.word = u == 0 ? dc.raw.tuples[i].fma : dc.raw.tuples[i].add;
        in.enc = match(in.word, u == 0);
        if (!in.enc) continue;
        in.op = op_of(*in.enc);
        in.nsrc = unsigned(std::min<size_t>(4, in.enc->srcs.size()));
        for (unsigned s = 0; s < in.nsrc; ++s) in.src[s] = uint8_t((in.word >> in.enc->srcs[s].start) & 7);
        in.mods = decode_mods(*in.enc, in.word);
        for (size_t k = 0; k < in.enc->imms.size() && k < 4; ++k)
          in.imm[k] = (in.word >> in.enc->imms[k].start) & ((1u << in.enc->imms[k].size) - 1);
      }
    }
    index_[off / 16] = int32_t(clauses_.size());
    clauses_.push_back(std::move(dc));
    off += clauses_.back().size;
  }
  if (clauses_.empty()) {
    err = "no clauses in the code";
    return false;
  }
  return true;
}

const DecodedClause* Program::at(uint64_t pc) const {
  if (pc % 16 || pc / 16 >= index_.size() || index_[pc / 16] < 0) return nullptr;
  return &clauses_[size_t(index_[pc / 16])];
}

// ---- execution ---------------------------------------------------------------

bool atom_plan(const DecodedIns& a, AtomPlan& p) {
  const std::string& name = a.enc->name;
  const std::string& opc = a.mod("atom_opc");
  const bool is64 = name.ends_with(".i64");
  p.bytes = is64 ? 8 : 4;
  p.ret = name.find("RETURN") != std::string::npos;
  if (name.rfind("*ATOM_C1", 0) == 0) {
    // The C1 forms take no operand: increment, decrement, max with 1, or with 1.
    p.operand_regs = 0;
    p.constant = 1;
    if (opc == "ainc") p.op = ir::AtomicOp::Add;
    else if (opc == "adec") p.op = ir::AtomicOp::Add, p.constant = is64 ? ~uint64_t(0) : 0xffffffffu;
    else if (opc == "aumax1") p.op = ir::AtomicOp::UMax;
    else if (opc == "asmax1") p.op = ir::AtomicOp::SMax;
    else if (opc == "aor1") p.op = ir::AtomicOp::Or;
    else return false;
    return true;
  }
  p.operand_regs = is64 ? 2 : 1;
  if (opc == "aadd") p.op = ir::AtomicOp::Add;
  else if (opc == "aaddu" || opc == "aadds") {
    // i64: a 32-bit operand zero- / sign-extended; i32: the plain add
    p.op = ir::AtomicOp::Add;
    if (is64) p.operand_regs = 1, p.sext = opc == "aadds";
  } else if (opc == "asmin") p.op = ir::AtomicOp::SMin;
  else if (opc == "asmax") p.op = ir::AtomicOp::SMax;
  else if (opc == "aumin") p.op = ir::AtomicOp::UMin;
  else if (opc == "aumax") p.op = ir::AtomicOp::UMax;
  else if (opc == "aand") p.op = ir::AtomicOp::And;
  else if (opc == "aor") p.op = ir::AtomicOp::Or;
  else if (opc == "axor") p.op = ir::AtomicOp::Xor;
  else return false;
  return true;
}

namespace {

class ClauseRunner {
 public:
  ClauseRunner(const LaunchEnv& env, WarpState& st, ir::GuestMemory& mem) : env_(env), st_(st), mem_(mem) {}

  // Runs clause `c` for the lanes in `mask` (one guest warp). Sets next pcs,
  // ended/waiting bits; false on a fault or error (st_ says which).
  bool run(const DecodedClause& c, uint32_t mask);

 private:
  // A 64-bit clause (docs/bifrost.md "64-bit clauses"): register pairs, each
  // instruction once per 32-bit half.
  bool run_wide(const DecodedClause& c, uint32_t mask);
  const LaunchEnv& env_;
  WarpState& st_;
  ir::GuestMemory& mem_;
  uint32_t taken_ = 0;                  // lanes whose branch was taken
  uint32_t target_[kHostLanes] = {};
  bool barrier_ = false;
  // Staged register writes of message instructions (land at clause end).
  struct Staged {
    unsigned reg;
    uint32_t mask;
    Lanes val;
    uint32_t keep = 0;  // bits of the register the value leaves (byte/half lane loads)
  };
  std::vector<Staged> staged_;

  bool error(const DecodedClause& c, unsigned ti, bool fma, const std::string& what) {
    std::snprintf(st_.message, sizeof st_.message, "clause 0x%zx tuple %u %s: %s", c.raw.offset, ti,
                  fma ? "FMA" : "ADD", what.c_str());
    st_.stop = Stop::Error;
    st_.fault = ir::FaultKind::Unsupported;
    return false;
  }
  bool fault(const DecodedClause& c, unsigned ti, ir::FaultKind k, unsigned lane, uint64_t addr, ir::Space sp,
             const std::string& what) {
    std::snprintf(st_.message, sizeof st_.message, "clause 0x%zx tuple %u: %s", c.raw.offset, ti, what.c_str());
    st_.stop = Stop::Fault;
    st_.fault = k;
    st_.fault_lane = lane;
    st_.fault_addr = addr;
    st_.fault_space = uint32_t(sp);
    return false;
  }

  bool fau(const DecodedClause& c, unsigned fau_idx, uint32_t mask, Lanes& lo, Lanes& hi, unsigned ti);
  bool exec(const DecodedIns& in, const TupleCtx& x, Lanes& out, unsigned ti);
  bool memory(const DecodedIns& in, const TupleCtx& x, unsigned ti);
  bool atomic_message(const DecodedIns& in, const TupleCtx& x, unsigned ti);
};

// +AXCHG / +ACMPXCHG / +ACMPSTORE (Mesa's lowering of exchange and
// compare-exchange): address = src0 | src1 << 32 (global) or src0 (.wls);
// staging registers: AXCHG the new value (its old value comes back there);
// ACMPXCHG / ACMPSTORE the new value then the compare value (n words each),
// old value back in the first n (ACMPXCHG only). Lane order, like atomics.
bool ClauseRunner::atomic_message(const DecodedIns& in, const TupleCtx& x, unsigned ti) {
  const DecodedClause& c = *x.c;
  const std::string& name = in.enc->name;
  const ir::Space space = in.mod("seg") == "wls" ? ir::Space::Shared : ir::Space::Global;
  const unsigned n = name.ends_with(".i64") ? 2 : 1;
  const bool cas = name.rfind("+ACMP", 0) == 0, ret = name.rfind("+ACMPSTORE", 0) != 0;
  const unsigned sr = c.raw.header.staging_register();
  if (sr + (cas ? 2 * n : n) > kRegs) return error(c, ti, false, "staging registers r" + std::to_string(sr) + "+ past r63");
  Lanes old[2] = {};
  auto word = [&](unsigned r, unsigned l) {
    return n == 2 ? (uint64_t(st_.regs[r][l]) | (uint64_t(st_.regs[r + 1][l]) << 32)) : uint64_t(st_.regs[r][l]);
  };
  for (unsigned l = 0; l < kHostLanes; ++l) {
    if (!(x.mask >> l & 1)) continue;
    const uint64_t lo = src_val(x, in.src[0], l), hi = src_val(x, in.src[1], l);
    const uint64_t addr = space == ir::Space::Shared ? lo : (lo | (hi << 32));
    uint64_t v = word(sr, l);
    const uint64_t cmp = cas ? word(sr + n, l) : 0;
    const bool ok = cas ? mem_.access(ir::GuestMemory::Kind::AtomicCas, space, addr, 4 * n, &v, ir::AtomicOp::Add, &cmp)
                        : mem_.access(ir::GuestMemory::Kind::Atomic, space, addr, 4 * n, &v, ir::AtomicOp::Exch);
    if (!ok)
      return fault(c, ti, ir::FaultKind::OutOfBounds, l, addr, space,
                   name + " lane " + std::to_string(l) + " address " + hex_u64(addr) + " is outside memory");
    old[0].v[l] = uint32_t(v);
    old[1].v[l] = uint32_t(v >> 32);
  }
  if (ret)
    for (unsigned r = 0; r < n; ++r) staged_.push_back({sr + r, x.mask, old[r]});
  return true;
}

bool ClauseRunner::fau(const DecodedClause& c, unsigned idx, uint32_t mask, Lanes& lo, Lanes& hi, unsigned ti) {
  uint64_t v = 0;
  if (idx >= 0x80) {
    const unsigned n = idx & 0x7f;
    v = uint64_t(env_.uniforms[2 * n]) | (uint64_t(env_.uniforms[2 * n + 1]) << 32);
  } else if (idx >= 0x20) {
    const int slot = fau_constant_slot(idx);
    if (slot < 0 || unsigned(slot) >= c.raw.nconsts) {
      std::snprintf(st_.message, sizeof st_.message, "clause 0x%zx tuple %u: FAU index 0x%x names constant %d, the clause has %u",
                    c.raw.offset, ti, idx, slot, c.raw.nconsts);
      st_.stop = Stop::Error;
      st_.fault = ir::FaultKind::Unsupported;
      return false;
    }
    v = c.raw.consts[slot] | (idx & 0xf);
    const uint64_t pc = c.raw.offset;
    auto sext = [](uint64_t x, unsigned b) { return uint64_t(int64_t(x << (64 - b)) >> (64 - b)); };
    switch (c.raw.mods[slot]) {
      case ConstMod::None: break;
      case ConstMod::PcLo: v = pc + sext(v, 60); break;
      case ConstMod::PcHi: v = (v & 0xffffffffu) | (uint64_t(uint32_t(pc + sext(v >> 32, 28))) << 32); break;
      case ConstMod::PcLoHi:
        v = uint64_t(uint32_t(pc + sext(v & 0xffffffffu, 28))) | (uint64_t(uint32_t(pc + sext(v >> 32, 28))) << 32);
        break;
    }
  } else if (idx == 0) {
    v = 0;
  } else if (idx == 1 || idx == 2 || idx == 3) {
    // lane id within the guest warp / guest warp id within the workgroup / core id 0
    const unsigned W = env_.warp_width;
    for (unsigned l = 0; l < kHostLanes; ++l) {
      const uint32_t val = idx == 1 ? l % W : idx == 2 ? st_.guest_warp_base + l / W : 0;
      lo.v[l] = val;
      hi.v[l] = 0;
    }
    return true;
  } else {
    std::snprintf(st_.message, sizeof st_.message,
                  "clause 0x%zx tuple %u: FAU special 0x%02x (framebuffer/fragment state) is unsupported", c.raw.offset,
                  ti, idx);
    st_.stop = Stop::Error;
    st_.fault = ir::FaultKind::Unsupported;
    return false;
  }
  (void)mask;
  for (unsigned l = 0; l < kHostLanes; ++l) {
    lo.v[l] = uint32_t(v);
    hi.v[l] = uint32_t(v >> 32);
  }
  return true;
}

bool ClauseRunner::memory(const DecodedIns& in, const TupleCtx& x, unsigned ti) {
  const DecodedClause& c = *x.c;
  const std::string& seg = in.mod("seg");
  ir::Space space = ir::Space::Global;
  if (seg == "wls") space = ir::Space::Shared;
  else if (!(seg.empty() || seg == "none"))
    return error(c, ti, false, in.enc->name + " segment ." + seg + " is unsupported (global and wls only)");
  const bool load = in.op == kLoad;
  const unsigned bytes = mem_bytes(in.enc->name);
  const unsigned nregs = (bytes + 3) / 4;
  const unsigned sr = c.raw.header.staging_register();
  if (sr + nregs > kRegs) return error(c, ti, false, "staging registers r" + std::to_string(sr) + "+ past r63");
  // lane_dest / extend of the narrow loads: bN / hN merge the value into that byte / half (the rest of
  // the register kept; hN with an extend: the value extended to 16 bits), w0 the whole register
  // extended, d0 the value extended to 64 bits in two registers.
  const std::string& ld = in.mod("lane_dest");
  const std::string& ext = in.mod("extend");
  const bool sx = ext == "sext", has_ext = ext == "sext" || ext == "zext";
  const bool d0 = load && ld == "d0";
  unsigned lane_shift = 0;
  uint32_t keep = 0;
  if (load && ld.size() == 2 && (ld[0] == 'b' || ld[0] == 'h')) {
    lane_shift = (ld[0] == 'b' ? 8 : 16) * unsigned(ld[1] - '0');
    keep = ~((ld[0] == 'b' ? 0xffu : 0xffffu) << lane_shift);
  }
  if (d0 && sr + 2 > kRegs) return error(c, ti, false, "staging registers r" + std::to_string(sr) + "+ past r63");
  Lanes val[4];
  for (unsigned l = 0; l < kHostLanes; ++l) {
    if (!(x.mask >> l & 1)) continue;
    const uint64_t lo = src_val(x, in.src[0], l), hi = src_val(x, in.src[1], l);
    const uint64_t addr = space == ir::Space::Shared ? lo : (lo | (hi << 32));
    uint8_t buf[16] = {};
    if (!load)
      for (unsigned r = 0; r < nregs; ++r) std::memcpy(buf + 4 * r, &st_.regs[sr + r][l], 4);
    // pieces of 8/4/2/1 bytes
    unsigned done = 0;
    while (done < bytes) {
      unsigned piece = 8;
      while (piece > bytes - done) piece >>= 1;
      uint64_t v = 0;
      if (!load) std::memcpy(&v, buf + done, piece);
      if (!mem_.access(load ? ir::GuestMemory::Kind::Load : ir::GuestMemory::Kind::Store, space, addr + done, piece, &v))
        return fault(c, ti, ir::FaultKind::OutOfBounds, l, addr + done, space,
                     in.enc->name + " lane " + std::to_string(l) + " address " + hex_u64(addr + done) + " is outside memory");
      if (load) std::memcpy(buf + done, &v, piece);
      done += piece;
    }
    if (load) {
      if (bytes < 4 && sx) {
        uint32_t w;
        std::memcpy(&w, buf, 4);
        w = uint32_t(int32_t(w << (32 - 8 * bytes)) >> (32 - 8 * bytes));
        std::memcpy(buf, &w, 4);
      }
      for (unsigned r = 0; r < nregs; ++r) std::memcpy(&val[r].v[l], buf + 4 * r, 4);
      if (keep) val[0].v[l] = ((ld[0] == 'h' && has_ext ? val[0].v[l] & 0xffffu : val[0].v[l]) << lane_shift) & ~keep;
      if (d0) val[1].v[l] = sx ? uint32_t(int32_t(val[0].v[l]) >> 31) : 0u;
    }
  }
  if (load) {
    for (unsigned r = 0; r < nregs; ++r) staged_.push_back({sr + r, x.mask, val[r], r == 0 ? keep : 0u});
    if (d0 && nregs == 1) staged_.push_back({sr + 1, x.mask, val[1]});
  }
  return true;
}

bool ClauseRunner::exec(const DecodedIns& in, const TupleCtx& x, Lanes& out, unsigned ti) {
  const DecodedClause& c = *x.c;
  const bool fma = x.fma_unit;
  if (!in.enc) return error(c, ti, fma, "INSTR_INVALID_ENC " + hex_u64(in.word) + " cannot run");
  if (const char* why = unit_message_reason(*in.enc)) return error(c, ti, fma, in.enc->name + " is unsupported: " + why);
  if (in.op == kUnsupported)
    return error(c, ti, fma, in.enc->name + " is unsupported: " + unsupported_reason(*in.enc) + " (docs/bifrost.md)");
  const uint32_t mask = x.mask;
  auto S = [&](unsigned i, unsigned l) { return src_val(x, in.src[i], l); };
  auto each = [&](auto f) {
    for (unsigned l = 0; l < kHostLanes; ++l)
      if (mask >> l & 1) out.v[l] = f(l);
  };
  // Modifiers read once per instruction.
  const bool abs0 = bitmod(in, "abs0"), abs1 = bitmod(in, "abs1"), abs2 = bitmod(in, "abs2");
  const bool neg0 = bitmod(in, "neg0"), neg1 = bitmod(in, "neg1"), neg2 = bitmod(in, "neg2");
  const int clamp = clamp_code(in.mod("clamp"));
  const std::string& rnd = in.mod("round");
  const int wid[3] = {widen_code(in.mod("widen0")), widen_code(in.mod("widen1")), widen_code(in.mod("widen2"))};
  const int cmp = cmp_code(in.mod("cmpf"));
  const int rtype = result_code(in.mod("result_type"));
  const ir::Round R = round_of(rnd);
  const bool ftz = x.ftz;
  auto fsrc = [&](unsigned i, unsigned l, bool a, bool n) {
    uint32_t v = widen32(S(i, l), wid[i]);
    return absneg32(flush32(v, ftz), a, n);
  };
  auto fres = [&](float f) { return flush32(clamp32(canon32(f), clamp), ftz); };
  switch (in.op) {
    case kNop: each([](unsigned) { return 0u; }); return true;
    case kMov: each([&](unsigned l) { return S(0, l); }); return true;
    case kFmaF32:
      each([&](unsigned l) {
        float a = f32(fsrc(0, l, abs0, neg0)), b = f32(fsrc(1, l, abs1, neg1)), cc = f32(fsrc(2, l, abs2, neg2));
        return fres(with_round(R, [&] { return std::fma(a, b, cc); }));
      });
      return true;
    case kFaddF32:
      if (rnd == "rto") {  // round to odd: ops_ext_defs.h fadd_rto
        ext::ScalarEmit se;
        each([&](unsigned l) { return fres(f32(ext::fadd_rto(se, fsrc(0, l, abs0, neg0), fsrc(1, l, abs1, neg1)))); });
        return true;
      }
      each([&](unsigned l) {
        float a = f32(fsrc(0, l, abs0, neg0)), b = f32(fsrc(1, l, abs1, neg1));
        return fres(with_round(R, [&] {
          volatile float va = a, vb = b;
          return va + vb;
        }));
      });
      return true;
    case kFcmpF32: {
      each([&](unsigned l) {
        return result_of(fcmp(f32(fsrc(0, l, abs0, neg0)), f32(fsrc(1, l, abs1, neg1)), cmp), rtype);
      });
      return true;
    }
    case kCselF32: case kCselI32: case kCselS32: case kCselU32: {
      each([&](unsigned l) {
        const uint32_t a = S(0, l), b = S(1, l);
        bool r;
        if (in.op == kCselF32) r = fcmp(f32(flush32(a, ftz)), f32(flush32(b, ftz)), cmp);
        else if (in.op == kCselS32) r = icmp(int32_t(a), int32_t(b), cmp);
        else r = icmp(a, b, cmp);
        return r ? S(2, l) : S(3, l);
      });
      return true;
    }
    case kLshiftAnd: case kLshiftOr: case kLshiftXor: case kRshiftAnd: case kRshiftOr: case kRshiftXor:
    case kArshift: {
      const std::string& lane2 = in.mod("lane2");
      const unsigned byte = lane2.size() == 2 ? unsigned(lane2[1] - '0') : 0;
      const bool not1 = in.mod("not1") == "not", notr = in.mod("not_result") == "not";
      each([&](unsigned l) {
        const uint32_t a = S(0, l);
        uint32_t b = in.op == kArshift ? 0u : S(1, l);
        if (not1) b = ~b;
        const unsigned sh = ((S(2, l) >> (8 * byte)) & 0xff) & 31;
        uint32_t r;
        switch (in.op) {
          case kLshiftAnd: r = (a << sh) & b; break;
          case kLshiftOr: r = (a << sh) | b; break;
          case kLshiftXor: r = (a << sh) ^ b; break;
          case kRshiftAnd: r = (a >> sh) & b; break;
          case kRshiftOr: r = (a >> sh) | b; break;
          case kRshiftXor: r = (a >> sh) ^ b; break;
          default: r = uint32_t(int32_t(a) >> sh); break;
        }
        return notr ? ~r : r;
      });
      return true;
    }
    case kImulI32: {
      const std::string& w = in.mod("widen1");
      const bool sext = in.mod("extend") == "sext";
      each([&](unsigned l) {
        uint32_t b = S(1, l);
        if (w == "h0" || w == "h1") {
          uint32_t h = w == "h0" ? (b & 0xffff) : (b >> 16);
          b = sext ? uint32_t(int32_t(int16_t(h))) : h;
        } else if (w.size() == 2 && w[0] == 'b') {
          uint32_t y = (b >> (8 * unsigned(w[1] - '0'))) & 0xff;
          b = sext ? uint32_t(int32_t(int8_t(y))) : y;
        }
        return S(0, l) * b;
      });
      return true;
    }
    case kFmaV2F16: case kFaddV2F16: case kFminV2F16: case kFmaxV2F16: {
      const std::string sw0 = in.mod("swz0"), sw1 = in.mod("swz1"), sw2 = in.mod("swz2");
      const int sem = sem_code(in.mod("sem"));
      each([&](unsigned l) {
        const uint32_t a = swz16(S(0, l), sw0), b = swz16(S(1, l), sw1);
        const uint32_t cc = in.op == kFmaV2F16 ? swz16(S(2, l), sw2) : 0;
        uint32_t r = 0;
        for (unsigned h = 0; h < 2; ++h) {
          const double x0 = h2f(absneg16(uint16_t(a >> 16 * h), abs0, neg0));
          const double x1 = h2f(absneg16(uint16_t(b >> 16 * h), abs1, neg1));
          uint16_t y;
          if (in.op == kFmaV2F16) {
            const double x2 = h2f(absneg16(uint16_t(cc >> 16 * h), abs2, neg2));
            y = f2h(std::fma(x0, x1, x2), R);
          } else if (in.op == kFaddV2F16) {
            y = f2h(x0 + x1, R);
          } else {
            y = f2h(fminmax(float(x0), float(x1), in.op == kFmaxV2F16, sem));
          }
          if (fb::is_nan(y, Type::F16)) y = kNan16;
          r |= uint32_t(clamp16(y, clamp)) << 16 * h;
        }
        return r;
      });
      return true;
    }
    case kF16ToF32: {
      const bool hi = in.mod("lane0") == "h1";
      each([&](unsigned l) {
        float f = h2f(uint16_t(S(0, l) >> (hi ? 16 : 0)));
        return flush32(canon32(f), ftz);
      });
      return true;
    }
    case kV2F32ToV2F16: {
      each([&](unsigned l) {
        uint32_t r = 0;
        for (unsigned h = 0; h < 2; ++h) {
          const uint32_t v = absneg32(S(h, l), h ? abs1 : abs0, h ? neg1 : neg0);
          ext::ScalarEmit se;  // rtna: ties away (ops_ext_defs.h d2f_rtna)
          uint16_t y = rnd == "rtna" ? uint16_t(ext::d2f_rtna(se, double(f32(v)), true)) : f2h(f32(v), R);
          if (fb::is_nan(y, Type::F16)) y = kNan16;
          r |= uint32_t(clamp16(y, clamp)) << 16 * h;
        }
        return r;
      });
      return true;
    }
    case kS8ToS32: case kU8ToU32: case kS16ToS32: case kU16ToU32: {
      const std::string& ln = in.mod("lane0");
      const unsigned sel = ln.size() == 2 ? unsigned(ln[1] - '0') : 0;
      each([&](unsigned l) {
        const uint32_t v = S(0, l);
        switch (in.op) {
          case kS8ToS32: return uint32_t(int32_t(int8_t(v >> 8 * sel)));
          case kU8ToU32: return (v >> 8 * sel) & 0xffu;
          case kS16ToS32: return uint32_t(int32_t(int16_t(v >> 16 * sel)));
          default: return (v >> 16 * sel) & 0xffffu;
        }
      });
      return true;
    }
    case kMkvecV2I16: {
      const bool h0 = in.mod("lane0") == "h1", h1 = in.mod("lane1") == "h1";
      each([&](unsigned l) {
        return ((S(0, l) >> (h0 ? 16 : 0)) & 0xffff) | (((S(1, l) >> (h1 ? 16 : 0)) & 0xffff) << 16);
      });
      return true;
    }
    case kFexpTable:
      if (bitmod(in, "adj")) return error(c, ti, fma, in.enc->name + "." + in.mod("adj") + " is unsupported");
      each([&](unsigned l) { return fexp_table(S(0, l)); });
      return true;
    case kMkvecV4I8: {
      unsigned sel[4];
      for (unsigned i = 0; i < 4; ++i) sel[i] = in.mod(("lane" + std::to_string(i)).c_str()) == "b2" ? 2 : 0;
      each([&](unsigned l) {
        uint32_t r = 0;
        for (unsigned i = 0; i < 4; ++i) r |= ((S(i, l) >> (8 * sel[i])) & 0xffu) << (8 * i);
        return r;
      });
      return true;
    }
    case kClper: {
      // Cross-lane permute within subgroups of 2-16 lanes, never past the
      // guest warp (a subgroup wider than the guest warp is the guest warp).
      const std::string& sg = in.mod("subgroup");
      // CLPER_OLD (G71/G72/G31) has no modifiers: the whole guest warp, lane = src1.
      const unsigned size = sg.empty() ? env_.warp_width : std::min(env_.warp_width, unsigned(std::stoul(sg.substr(8))));
      const std::string& lop = in.mod("lane_op");
      static const std::pair<const char*, uint32_t> inactive[] = {
          {"zero", 0}, {"umax", 0xffffffffu}, {"i1", 1}, {"v2i1", 0x00010001u}, {"smin", 0x80000000u},
          {"smax", 0x7fffffffu}, {"v2smin", 0x80008000u}, {"v2smax", 0x7fff7fffu}, {"v4smin", 0x80808080u},
          {"v4smax", 0x7f7f7f7fu}, {"f1", 0x3f800000u}, {"v2f1", 0x3c003c00u}, {"infn", 0xff800000u},
          {"inf", 0x7f800000u}, {"v2infn", 0xfc00fc00u}, {"v2inf", 0x7c007c00u}};
      uint32_t fill = 0;
      for (const auto& [n, v] : inactive)
        if (in.mod("inactive_result") == n) fill = v;
      each([&](unsigned l) {
        const unsigned base = l & ~(size - 1), own = l & (size - 1), idx = S(1, l);
        unsigned src;
        if (lop == "xor") src = (own ^ idx) & (size - 1);
        else if (lop == "accumulate") src = (own + idx) & (size - 1);
        else if (lop == "shift") {
          if (uint64_t(own) + idx >= size) return fill;
          src = own + idx;
        } else src = idx & (size - 1);
        const unsigned L = base + src;
        return (mask >> L & 1) ? S(0, L) : fill;
      });
      return true;
    }
    case kWmask: {
      // Ballot within the subgroup (capped at the guest warp): bit j = lane
      // base + j's src0 != 0, or the `fill` immediate for a lane not active here.
      const std::string& sg = in.mod("subgroup");
      if (sg.rfind("subgroup", 0) != 0) return error(c, ti, fma, in.enc->name + " with a reserved subgroup is invalid");
      const unsigned size = std::min(env_.warp_width, unsigned(std::stoul(sg.substr(8))));
      const uint32_t fill = in.imm[0] & 1;
      each([&](unsigned l) {
        const unsigned base = l & ~(size - 1);
        uint32_t r = 0;
        for (unsigned j = 0; j < size; ++j) {
          const unsigned L = base + j;
          r |= ((mask >> L & 1) ? uint32_t(S(0, L) != 0) : fill) << j;
        }
        return r;
      });
      return true;
    }
    case kPopcount: each([&](unsigned l) { return uint32_t(std::popcount(S(0, l))); }); return true;
    case kBitrev:
      each([&](unsigned l) {
        uint32_t v = S(0, l), r = 0;
        for (int i = 0; i < 32; ++i) r |= ((v >> i) & 1u) << (31 - i);
        return r;
      });
      return true;
    case kClz:
      if (bitmod(in, "mask")) return error(c, ti, fma, in.enc->name + ".mask is unsupported");
      each([&](unsigned l) { return uint32_t(std::countl_zero(S(0, l))); });
      return true;
    case kFrexpm: case kFrexpe: {
      const bool sq = bitmod(in, "sqrt"), lg = bitmod(in, "log");
      if (sq && lg) return error(c, ti, fma, in.enc->name + ".sqrt.log is unsupported");
      const bool mneg = lg && neg0;  // the .log form of FREXPM has a neg0 bit
      each([&](unsigned l) {
        uint32_t v = flush32(widen32(S(0, l), wid[0]), ftz);
        float xv = f32(v);
        if (in.op == kFrexpm) {
          if (std::isnan(xv)) return kNan32;
          if (std::isinf(xv) || xv == 0) return absneg32(v, abs0, mneg);
          float m;
          int e;
          frexp_mode(xv, sq, m, e, lg);
          return absneg32(bits(m), abs0, mneg);
        }
        if (std::isnan(xv) || std::isinf(xv) || xv == 0) return 0u;
        float m;
        int e;
        frexp_mode(xv, sq, m, e, lg);
        if (sq) e /= 2;  // sqrt(x) = sqrt(m) * 2^(e/2)
        return uint32_t(neg0 ? -e : e);
      });
      return true;
    }
    case kFmaRscaleF32: {
      const std::string& sp = in.mod("special");
      // .scale16: the scale is src3's low 16 bits as s16 (Valhall ISA.xml,
      // FMA_RSCALE_SCALE16: "biases the exponent by D, interpreted as a 16-bit value")
      const bool rcp_mode = sp == "n", left = sp == "left", scale16 = sp == "scale16";
      each([&](unsigned l) {
        float a = f32(absneg32(flush32(S(0, l), ftz), abs0, neg0)), b = f32(absneg32(flush32(S(1, l), ftz), false, neg1));
        float cc = f32(absneg32(flush32(S(2, l), ftz), false, neg2));
        const int32_t sc = scale16 ? int32_t(int16_t(S(3, l) & 0xffff)) : int32_t(S(3, l));
        double p;
        // .n (Valhall's FMA_RSCALE_N: "If A = 0 or B = 0, the multiply A * B is
        // treated as zero even if an ordinary multiply would return NaN"): 0 * inf
        // and 0 * NaN are a zero with the sign of the product
        if (rcp_mode && (a == 0 || b == 0))
          p = (std::signbit(a) != std::signbit(b)) ? -0.0 : 0.0;
        else
          p = double(a) * double(b);  // exact
        const double s = std::fma(double(a), double(b), double(cc));
        const double sum = (p == 0 && rcp_mode) ? p + double(cc) : s;
        const double scaled = std::ldexp(sum, std::clamp(sc, -1000, 1000));
        uint32_t r = uint32_t(fb::from_double(scaled, Type::F32, R));
        if (std::isnan(f32(r))) r = kNan32;
        // .left (the seed's sqrt_mode): a zero or infinite src0 is the result
        if (left && (a == 0 || std::isinf(a))) r = bits(a);
        return flush32(clamp32(r, clamp), ftz);
      });
      return true;
    }
    case kShaddxlU32: case kShaddxlS32: {
      const std::string& ln = in.mod("lane1");
      const unsigned sh = in.imm[0];
      each([&](unsigned l) {
        uint32_t b = S(1, l);
        if (ln == "h0" || ln == "h1") {
          uint32_t h = ln == "h0" ? (b & 0xffff) : (b >> 16);
          b = in.op == kShaddxlS32 ? uint32_t(int32_t(int16_t(h))) : h;
        }
        return S(0, l) + (b << sh);
      });
      return true;
    }
    case kIaddc: each([&](unsigned l) { return S(0, l) + S(1, l) + (S(2, l) & 1u); }); return true;
    case kIsubb: each([&](unsigned l) { return S(0, l) - S(1, l) - (S(2, l) & 1u); }); return true;
    case kFroundF32: {
      const std::string& r = in.mod("round");
      each([&](unsigned l) {
        float v = f32(absneg32(flush32(widen32(S(0, l), wid[0]), ftz), abs0, neg0));
        float o = r == "rtp" ? std::ceil(v) : r == "rtn" ? std::floor(v) : r == "rtz" ? std::trunc(v)
                  : r == "rtna" ? std::round(v) : std::nearbyint(v);
        return canon32(o);
      });
      return true;
    }
    case kFminF32: case kFmaxF32: {
      const int sem = sem_code(in.mod("sem"));
      each([&](unsigned l) {
        float a = f32(fsrc(0, l, abs0, neg0)), b = f32(fsrc(1, l, abs1, neg1));
        float r = fminmax(a, b, in.op == kFmaxF32, sem);
        return flush32(clamp32(std::isnan(r) ? kNan32 : bits(r), clamp), ftz);
      });
      return true;
    }
    case kIaddS32: case kIaddU32: case kIsubS32: case kIsubU32: {
      const bool sat = bitmod(in, "saturate");
      const std::string& ln = in.mod("lanes1");
      const bool sub = in.op == kIsubS32 || in.op == kIsubU32, sgn = in.op == kIaddS32 || in.op == kIsubS32;
      each([&](unsigned l) {
        uint32_t b = S(1, l);
        if (ln == "h0" || ln == "h1") {
          uint32_t h = ln == "h0" ? (b & 0xffff) : (b >> 16);
          b = sgn ? uint32_t(int32_t(int16_t(h))) : h;
        } else if (ln.size() == 2 && ln[0] == 'b') {
          uint32_t y = (b >> 8 * unsigned(ln[1] - '0')) & 0xff;
          b = sgn ? uint32_t(int32_t(int8_t(y))) : y;
        }
        const uint32_t a = S(0, l);
        if (!sat) return sub ? a - b : a + b;
        if (sgn) {
          int64_t r = sub ? int64_t(int32_t(a)) - int32_t(b) : int64_t(int32_t(a)) + int32_t(b);
          return uint32_t(int32_t(std::clamp<int64_t>(r, INT32_MIN, INT32_MAX)));
        }
        int64_t r = sub ? int64_t(a) - int64_t(b) : int64_t(a) + int64_t(b);
        return uint32_t(std::clamp<int64_t>(r, 0, UINT32_MAX));
      });
      return true;
    }
    case kIaddV2S16: case kIaddV2U16: case kIsubV2S16: case kIsubV2U16: {
      const bool sat = bitmod(in, "saturate");
      const std::string l0 = in.mod("lanes0"), l1 = in.mod("lanes1");
      if (l1 == "b01" || l1 == "b23") return error(c, ti, fma, in.enc->name + " byte lanes are unsupported");
      const bool sub = in.op == kIsubV2S16 || in.op == kIsubV2U16, sgn = in.op == kIaddV2S16 || in.op == kIsubV2S16;
      each([&](unsigned l) {
        const uint32_t a = swz16(S(0, l), l0), b = swz16(S(1, l), l1);
        uint32_t r = 0;
        for (unsigned h = 0; h < 2; ++h) {
          int64_t x0 = sgn ? int16_t(a >> 16 * h) : uint16_t(a >> 16 * h);
          int64_t x1 = sgn ? int16_t(b >> 16 * h) : uint16_t(b >> 16 * h);
          int64_t y = sub ? x0 - x1 : x0 + x1;
          if (sat) y = sgn ? std::clamp<int64_t>(y, INT16_MIN, INT16_MAX) : std::clamp<int64_t>(y, 0, UINT16_MAX);
          r |= (uint32_t(y) & 0xffff) << 16 * h;
        }
        return r;
      });
      return true;
    }
    case kIcmpI32: case kIcmpS32: case kIcmpU32: {
      each([&](unsigned l) {
        bool r = in.op == kIcmpS32 ? icmp(int32_t(S(0, l)), int32_t(S(1, l)), cmp) : icmp(S(0, l), S(1, l), cmp);
        return result_of(r, rtype);
      });
      return true;
    }
    case kMuxI32: {
      const std::string& m = in.mod("mux");
      each([&](unsigned l) {
        const uint32_t a = S(0, l), b = S(1, l), s = S(2, l);
        if (m == "neg") return int32_t(s) < 0 ? a : b;
        if (m == "fp_zero") return (s & 0x7fffffffu) == 0 ? a : b;
        if (m == "bit") return (a & s) | (b & ~s);
        return s == 0 ? a : b;  // int_zero
      });
      return true;
    }
    case kF32ToS32: case kF32ToU32: {
      const std::string& r = in.mod("round");  // none = to nearest, ties to even
      each([&](unsigned l) {
        float v = f32(flush32(S(0, l), ftz));
        return in.op == kF32ToS32 ? f2s(v, r) : f2u(v, r);
      });
      return true;
    }
    case kS32ToF32: case kU32ToF32: {
      std::string r = in.mod("round");
      each([&](unsigned l) {
        double d = in.op == kS32ToF32 ? double(int32_t(S(0, l))) : double(S(0, l));
        ext::ScalarEmit se;  // rtna: ties away (ops_ext_defs.h d2f_rtna)
        return r == "rtna" ? ext::d2f_rtna(se, d, false) : uint32_t(fb::from_double(d, Type::F32, R));
      });
      return true;
    }
    case kFrcpF32: case kFrsqF32:
      each([&](unsigned l) {
        float v = f32(absneg32(flush32(S(0, l), ftz), abs0, neg0));
        double d = in.op == kFrcpF32 ? 1.0 / double(v) : 1.0 / std::sqrt(double(v));
        return flush32(std::isnan(d) ? kNan32 : uint32_t(fb::from_double(d, Type::F32, ir::Round::NearestEven)), ftz);
      });
      return true;
    case kFrcpApprox: case kFrsqApprox: {
      if (bitmod(in, "divzero")) return error(c, ti, fma, in.enc->name + ".divzero is unsupported");
      each([&](unsigned l) {
        uint32_t v = absneg32(flush32(widen32(S(0, l), wid[0]), ftz), abs0, neg0);
        return in.op == kFrcpApprox ? frcp_approx(v) : frsq_approx(v);
      });
      return true;
    }
    case kLdexpF32: {
      const std::string& r = in.mod("round");
      if (r == "inf" || r == "inf0") {  // the atan scale modes: ops_ext.h kLdexpInf
        ext::ScalarEmit se;
        each([&](unsigned l) {
          const uint32_t s[4] = {S(0, l), S(1, l), 0, 0};
          return ext::eval(se, ext::kLdexpInf, in, s, ftz);
        });
        return true;
      }
      each([&](unsigned l) {
        float v = f32(flush32(S(0, l), ftz));
        if (std::isnan(v)) return kNan32;
        const int32_t e = std::clamp(int32_t(S(1, l)), -1000, 1000);
        const double d = std::ldexp(double(v), e);
        ext::ScalarEmit se;  // rtna: ties away (ops_ext_defs.h d2f_rtna)
        return flush32(r == "rtna" ? ext::d2f_rtna(se, d, false) : uint32_t(fb::from_double(d, Type::F32, R)), ftz);
      });
      return true;
    }
    case kIabsS32:
      each([&](unsigned l) {
        int32_t v = int32_t(S(0, l));
        return v < 0 ? uint32_t(0) - uint32_t(v) : uint32_t(v);
      });
      return true;
    case kLoad: case kStore:
      each([](unsigned) { return 0u; });
      return memory(in, x, ti);
    case kAtomMsg:
      each([](unsigned) { return 0u; });
      return atomic_message(in, x, ti);
    case kBranchz: case kBranch: case kJump: {
      // 32-bit forms compare whole registers; the 16-bit forms the halves
      // widen0/widen1 name (h0/h1; "none" is reserved there), as f16, s16 or u16.
      const std::string& name = in.enc->name;
      const bool h16 = name.ends_with("16");
      const bool is_f = name.ends_with(".f32") || name.ends_with(".f16");
      const bool is_s = name.ends_with(".s32") || name.ends_with(".s16");
      const std::string& w0 = in.mod("widen0");
      const std::string& w1 = in.mod("widen1");
      if (!h16 && (!(w0.empty() || w0 == "none") || !(w1.empty() || w1 == "none")))
        return error(c, ti, fma, name + " with 16-bit halves is unsupported");
      const unsigned sh0 = w0 == "h1" ? 16 : 0, sh1 = w1 == "h1" ? 16 : 0;
      const unsigned tsrc = in.op == kJump ? 0 : in.op == kBranchz ? 1 : 2;
      each([&](unsigned l) {
        bool take = true;
        if (in.op != kJump) {
          uint32_t a = S(0, l), b = in.op == kBranch ? S(1, l) : 0u;
          if (h16) {
            a = (a >> sh0) & 0xffff;
            b = in.op == kBranch ? (b >> sh1) & 0xffff : 0u;
            if (is_f) take = fcmp(h2f(uint16_t(a)), h2f(uint16_t(b)), cmp);
            else if (is_s) take = icmp(int16_t(a), int16_t(b), cmp);
            else take = icmp(a, b, cmp);
          } else if (is_f) take = fcmp(f32(a), f32(b), cmp);
          else if (is_s) take = icmp(int32_t(a), int32_t(b), cmp);
          else take = icmp(a, b, cmp);
        }
        if (take) {
          taken_ |= 1u << l;
          target_[l] = S(tsrc, l);
        }
        return 0u;
      });
      return true;
    }
    case kBranchc: {
      // BRANCHC: every active thread of the guest warp branches when any
      // (`combine` any) / every (all) active thread's condition (src0, or its
      // lane0 half for .i16) is nonzero. run() sees one guest warp at a time.
      const bool all = in.mod("combine") == "all";
      const unsigned sh = in.mod("lane0") == "h1" ? 16 : 0;
      const uint32_t m = in.enc->name.ends_with(".i16") ? 0xffffu : 0xffffffffu;
      bool any_true = false, all_true = true;
      for (unsigned l = 0; l < kHostLanes; ++l)
        if (mask >> l & 1) {
          const bool cnd = ((S(0, l) >> sh) & m) != 0;
          any_true |= cnd;
          all_true &= cnd;
        }
      const bool take = all ? all_true : any_true;
      each([&](unsigned l) {
        if (take) {
          taken_ |= 1u << l;
          target_[l] = S(1, l);
        }
        return 0u;
      });
      return true;
    }
    case kExt: {
      const std::string why = ext::check(in);
      if (!why.empty()) return error(c, ti, fma, in.enc->name + " " + why);
      const int eop = ext::op_of(in.enc->name);
      ext::ScalarEmit se;
      if (eop == ext::kCubeface2) {
        // The face comes from the paired *CUBEFACE1's operands (docs/bifrost.md "Cube maps").
        const DecodedIns* f = x.pair_fma;
        if (!f || !f->enc || f->enc->name != "*CUBEFACE1" || in.src[0] != 3)
          return error(c, ti, fma, "+CUBEFACE2 must read t, the result of *CUBEFACE1 in the same tuple");
        TupleCtx fx = x;
        fx.fma_unit = true;
        each([&](unsigned l) {
          uint32_t s[4] = {};
          for (unsigned i = 0; i < 3; ++i) s[i] = src_val(fx, f->src[i], l);
          return ext::eval(se, eop, *f, s, ftz);
        });
        return true;
      }
      each([&](unsigned l) {
        uint32_t s[4] = {};
        for (unsigned i = 0; i < in.nsrc; ++i) s[i] = S(i, l);
        return ext::eval(se, eop, in, s, ftz);
      });
      return true;
    }
    case kAtomC:  // performed with its +ATOM_CX (ClauseRunner::run)
      each([](unsigned) { return 0u; });
      return true;
    case kBarrier:
      barrier_ = true;
      each([](unsigned) { return 0u; });
      return true;
    default:
      return error(c, ti, fma, in.enc->name + " is not implemented by the interpreter");
  }
}

bool ClauseRunner::run_wide(const DecodedClause& c, uint32_t mask) {
  const unsigned n = c.raw.ntuples;
  for (unsigned ti = 0; ti < n; ++ti)
    for (int u = 0; u < 2; ++u) {
      const DecodedIns& in = u == 0 ? c.t[ti].fma : c.t[ti].add;
      if (!in.enc) continue;  // INSTR_INVALID_ENC: exec reports it
      const std::string why = wide_clause_reason(*in.enc);
      if (!why.empty()) return error(c, ti, u == 0, in.enc->name + " cannot be in a 64-bit clause: " + why);
    }
  using P2 = RegMode64::Port2;
  using P3 = RegMode64::Port3;
  const bool ftz = c.raw.header.ftz() != 0;
  // Per half h (0 = low words = even registers, 1 = high words): ports, t0/t1.
  Lanes zero{}, p[2][3], fl[2], t0[2]{}, t1[2]{}, fr[2]{}, ar[2]{};
  auto write_pairs = [&](const RegMode64& m) {
    auto wr = [&](unsigned reg, const Lanes* v) {
      for (unsigned h = 0; h < 2; ++h)
        for (unsigned l = 0; l < kHostLanes; ++l)
          if (mask >> l & 1) st_.regs[reg + h][l] = v[h].v[l];
    };
    if (m.port2 == P2::WriteFma) wr(m.reg2, fr);
    if (m.port2 == P2::WriteAdd) wr(m.reg2, ar);
    if (m.port3 == P3::WriteFma) wr(m.reg3, fr);
    if (m.port3 == P3::WriteAdd) wr(m.reg3, ar);
  };
  for (unsigned ti = 0; ti < n; ++ti) {
    const DecodedTuple& t = c.t[ti];
    const RegMode64& m = t.rm64;
    for (unsigned h = 0; h < 2; ++h)
      for (unsigned l = 0; l < kHostLanes; ++l) {
        p[h][0].v[l] = m.read0 ? st_.regs[m.reg0 + h][l] : 0;
        p[h][1].v[l] = m.read1 ? st_.regs[m.reg1 + h][l] : 0;
        p[h][2].v[l] = m.port2 == P2::Read ? st_.regs[m.reg2 + h][l] : 0;
      }
    if (ti > 0) write_pairs(m);
    bool reads_fau = false;
    for (const DecodedIns* in : {&t.fma, &t.add})
      for (unsigned s = 0; s < in->nsrc; ++s) reads_fau |= in->src[s] == 4 || in->src[s] == 5;
    if (reads_fau && !fau(c, t.rb.fau, mask, fl[0], fl[1], ti)) return false;
    Lanes nf[2]{}, na[2]{};
    for (unsigned h = 0; h < 2; ++h) {
      // Sources 4 and 5 both read the FAU value's word h in half h.
      TupleCtx x{&c, ti, mask, {&p[h][0], &p[h][1], &p[h][2]}, &fl[h], &fl[h], &t0[h], &t1[h], &zero, true, ftz};
      if (!exec(t.fma, x, nf[h], ti)) return false;
      x.fma_unit = false;
      x.t = &nf[h];
      x.pair_fma = &t.fma;
      if (!exec(t.add, x, na[h], ti)) return false;
    }
    st_.lane_instructions += 4ull * unsigned(std::popcount(mask));
    for (unsigned h = 0; h < 2; ++h) {
      fr[h] = t0[h] = nf[h];
      ar[h] = t1[h] = na[h];
    }
  }
  write_pairs(c.t[0].rm64);  // the last tuple's writes, described by tuple 0's block
  const bool eos = c.raw.header.flow() == 0;
  for (unsigned l = 0; l < kHostLanes; ++l) {
    if (!(mask >> l & 1)) continue;
    if (eos) st_.ended |= 1u << l;
    else st_.pc[l] = uint32_t(c.raw.offset + c.size);
  }
  return true;
}

bool ClauseRunner::run(const DecodedClause& c, uint32_t mask) {
  if (c.wide) return run_wide(c, mask);
  Lanes zero{}, p[3], flo, fhi, t0{}, t1{}, fr{}, ar{};
  const bool ftz = c.raw.header.ftz() != 0;
  const unsigned n = c.raw.ntuples;
  for (unsigned ti = 0; ti < n; ++ti) {
    const DecodedTuple& t = c.t[ti];
    const RegMode& rm = t.rm;
    // Register reads (before this block's writes land).
    for (unsigned l = 0; l < kHostLanes; ++l) {
      p[0].v[l] = rm.read0 ? st_.regs[rm.reg0][l] : 0;
      p[1].v[l] = rm.read1 ? st_.regs[rm.reg1][l] : 0;
      p[2].v[l] = rm.slot2 == SlotOp::Read ? st_.regs[t.rb.reg2][l] : 0;
    }
    // The previous tuple's results land (tuple 0's block: at clause end).
    if (ti > 0) {
      auto wr = [&](SlotOp op, unsigned reg, const Lanes& v) {
        for (unsigned l = 0; l < kHostLanes; ++l) {
          if (!(mask >> l & 1)) continue;
          uint32_t& r = st_.regs[reg][l];
          if (op == SlotOp::Write) r = v.v[l];
          else if (op == SlotOp::WriteLo) r = (r & 0xffff0000u) | (v.v[l] & 0xffff);
          else if (op == SlotOp::WriteHi) r = (r & 0xffff) | (v.v[l] << 16);
        }
      };
      if (rm.slot2 != SlotOp::Read && rm.slot2 != SlotOp::Idle) wr(rm.slot2, t.rb.reg2, fr);
      if (rm.slot3 != SlotOp::Idle) wr(rm.slot3, t.rb.reg3, rm.slot3_fma ? fr : ar);
    }
    auto reads_fau = [](const DecodedIns& in) {
      for (unsigned s = 0; s < in.nsrc; ++s)
        if (in.src[s] == 4 || in.src[s] == 5) return true;
      return false;
    };
    if ((reads_fau(t.fma) || reads_fau(t.add)) && !fau(c, t.rb.fau, mask, flo, fhi, ti)) return false;
    TupleCtx x{&c, ti, mask, {&p[0], &p[1], &p[2]}, &flo, &fhi, &t0, &t1, &zero, true, ftz};
    Lanes nf{}, na{};
    if (!exec(t.fma, x, nf, ti)) return false;
    x.fma_unit = false;
    x.t = &nf;
    x.pair_fma = &t.fma;
    if (t.fma.op == kAtomC) {
      if (t.add.op != kAtomCx || ti + 1 != n)
        return error(c, ti, true, t.fma.enc->name + " must pair with +ATOM_CX in the clause's last tuple");
    }
    if (t.add.op == kAtomCx) {
      if (t.fma.op != kAtomC) return error(c, ti, false, "+ATOM_CX without *ATOM_C in the same tuple");
      // The atomic: address = FMA sources 0 (low) and 1 (high), operand = the
      // staging register, the old value back to it for the _RETURN form.
      const DecodedIns& a = t.fma;
      AtomPlan plan;
      if (!atom_plan(a, plan)) return error(c, ti, true, a.enc->name + " ." + a.mod("atom_opc") + " is unsupported");
      const unsigned sr = c.raw.header.staging_register();
      const unsigned nregs = plan.bytes / 4;
      if (sr + nregs > kRegs) return error(c, ti, true, "staging registers r" + std::to_string(sr) + "+ past r63");
      TupleCtx fx = x;
      fx.fma_unit = true;
      fx.t = &zero;
      Lanes old[2] = {};
      for (unsigned l = 0; l < kHostLanes; ++l) {
        if (!(mask >> l & 1)) continue;
        const uint64_t addr = uint64_t(src_val(fx, a.src[0], l)) | (uint64_t(src_val(fx, a.src[1], l)) << 32);
        uint64_t v = plan.operand_regs == 0 ? plan.constant
                     : plan.operand_regs == 2 ? (uint64_t(st_.regs[sr][l]) | (uint64_t(st_.regs[sr + 1][l]) << 32))
                     : plan.sext ? uint64_t(int64_t(int32_t(st_.regs[sr][l]))) : uint64_t(st_.regs[sr][l]);
        // An address in the wls window (SEG_ADD.wls) is a shared-memory offset.
        const bool wls = uint32_t(addr >> 32) == kWlsWindowHi;
        const ir::Space sp = wls ? ir::Space::Shared : ir::Space::Global;
        const uint64_t at = wls ? (addr & 0xffffffffu) : addr;
        if (!mem_.access(ir::GuestMemory::Kind::Atomic, sp, at, plan.bytes, &v, plan.op))
          return fault(c, ti, ir::FaultKind::OutOfBounds, l, at, sp,
                       a.enc->name + " lane " + std::to_string(l) + " address " + hex_u64(addr) + " is outside memory");
        old[0].v[l] = uint32_t(v);
        old[1].v[l] = uint32_t(v >> 32);
      }
      if (plan.ret)
        for (unsigned r = 0; r < nregs; ++r) staged_.push_back({sr + r, mask, old[r]});
      for (unsigned l = 0; l < kHostLanes; ++l) na.v[l] = 0;
    } else if (!exec(t.add, x, na, ti)) {
      return false;
    }
    st_.lane_instructions += 2ull * unsigned(std::popcount(mask));
    fr = nf;
    ar = na;
    t0 = nf;
    t1 = na;
  }
  // The last tuple's writes (described by tuple 0's block).
  {
    const DecodedTuple& t = c.t[0];
    const RegMode& rm = t.rm;
    auto wr = [&](SlotOp op, unsigned reg, const Lanes& v) {
      for (unsigned l = 0; l < kHostLanes; ++l) {
        if (!(mask >> l & 1)) continue;
        uint32_t& r = st_.regs[reg][l];
        if (op == SlotOp::Write) r = v.v[l];
        else if (op == SlotOp::WriteLo) r = (r & 0xffff0000u) | (v.v[l] & 0xffff);
        else if (op == SlotOp::WriteHi) r = (r & 0xffff) | (v.v[l] << 16);
      }
    };
    if (rm.slot2 != SlotOp::Read && rm.slot2 != SlotOp::Idle) wr(rm.slot2, t.rb.reg2, fr);
    if (rm.slot3 != SlotOp::Idle) wr(rm.slot3, t.rb.reg3, rm.slot3_fma ? fr : ar);
  }
  // Message results land after the clause: whole registers, then byte/half lane merges.
  for (int pass = 0; pass < 2; ++pass)
    for (const Staged& s : staged_)
      if ((s.keep != 0) == (pass == 1))
        for (unsigned l = 0; l < kHostLanes; ++l)
          if (s.mask >> l & 1) st_.regs[s.reg][l] = (st_.regs[s.reg][l] & s.keep) | s.val.v[l];
  // Next clause per lane.
  const bool eos = c.raw.header.flow() == 0;
  for (unsigned l = 0; l < kHostLanes; ++l) {
    if (!(mask >> l & 1)) continue;
    if (taken_ >> l & 1) {
      if (!env_.program->at(target_[l]))
        return fault(c, n - 1, ir::FaultKind::Trap, l, target_[l], ir::Space::Global,
                     "branch target " + hex_u64(target_[l]) + " of lane " + std::to_string(l) + " is not a clause");
      st_.pc[l] = target_[l];
    } else if (eos) {
      st_.ended |= 1u << l;
    } else {
      st_.pc[l] = uint32_t(c.raw.offset + c.size);
    }
    if (barrier_ && !(st_.ended >> l & 1)) st_.waiting |= 1u << l;
  }
  return true;
}

}  // namespace

Stop run_warp(const LaunchEnv& env, WarpState& st, ir::GuestMemory& mem, int64_t& budget) {
  const unsigned W = env.warp_width;
  // A barrier resumes every waiting thread.
  st.waiting = 0;
  st.stop = Stop::Running;
  for (unsigned g = 0; g < kHostLanes / W; ++g) {
    const uint32_t gmask = (W == 32 ? 0xffffffffu : ((1u << W) - 1)) << (g * W);
    for (;;) {
      const uint32_t live = st.launched & ~st.ended & ~st.waiting & gmask;
      if (!live) break;
      // The hardware rule: run the clause at the lowest thread pc, with the threads there.
      uint32_t pc = UINT32_MAX;
      for (unsigned l = 0; l < kHostLanes; ++l)
        if (live >> l & 1) pc = std::min(pc, st.pc[l]);
      uint32_t mask = 0;
      for (unsigned l = 0; l < kHostLanes; ++l)
        if ((live >> l & 1) && st.pc[l] == pc) mask |= 1u << l;
      const DecodedClause* c = env.program->at(pc);
      if (!c) {
        std::snprintf(st.message, sizeof st.message, "pc 0x%x: no clause starts here (past the end of the code or not a clause boundary)", pc);
        st.stop = Stop::Fault;
        st.fault = ir::FaultKind::Trap;
        st.fault_lane = unsigned(std::countr_zero(mask));
        st.fault_addr = pc;
        return st.stop;
      }
      if (--budget < 0) {
        std::snprintf(st.message, sizeof st.message, "pc 0x%x: instruction budget exhausted (watchdog)", pc);
        st.stop = Stop::Fault;
        st.fault = ir::FaultKind::Watchdog;
        st.fault_lane = unsigned(std::countr_zero(mask));
        return st.stop;
      }
      ++st.clauses_run;
      ClauseRunner r(env, st, mem);
      if (!r.run(*c, mask)) return st.stop;
    }
  }
  const uint32_t rest = st.launched & ~st.ended;
  st.stop = rest ? Stop::Barrier : Stop::Done;
  return st.stop;
}

}  // namespace gpurc::bifrost
