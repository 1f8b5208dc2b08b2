// Scalar (one lane) semantics of every pure per-lane op. docs/ir.md is the
// prose version of this file; keep the two in step.
//
// Float arithmetic is exact by construction:
//  - f64: the host operation runs with the op's rounding mode installed
//    (fesetround around it, restored after).
//  - f16 / f32: operands are widened to double exactly; the operation runs in
//    double with round-to-odd (round toward zero, then the last bit set if the
//    result was inexact). 53 >= 2 * 24 + 2 bits, so rounding that once more to
//    f32 / f16 in the op's mode gives the correctly rounded result.
#include "ir/scalar.h"
#include "ir/transc.h"

#include <array>
#include <bit>
#include <cfenv>
#include <cmath>

#include "ir/float_bits.h"

namespace gpurc::ir {

namespace {

using u128 = unsigned __int128;
using i128 = __int128;

uint64_t dbits(double d) { return std::bit_cast<uint64_t>(d); }
double from_dbits(uint64_t b) { return std::bit_cast<double>(b); }

int64_t sext(uint64_t v, unsigned w) {
  if (w >= 64) return int64_t(v);
  unsigned s = 64 - w;
  return int64_t(v << s) >> s;
}

int host_mode(Round m) {
  switch (m) {
    case Round::TowardZero: return FE_TOWARDZERO;
    case Round::Down: return FE_DOWNWARD;
    case Round::Up: return FE_UPWARD;
    default: return FE_TONEAREST;
  }
}

// Installs a host rounding mode for its lifetime.
class RoundScope {
 public:
  explicit RoundScope(int mode) : old_(fegetround()) { fesetround(mode); }
  ~RoundScope() { fesetround(old_); }
  RoundScope(const RoundScope&) = delete;
  RoundScope& operator=(const RoundScope&) = delete;

 private:
  int old_;
};

enum class Arith { Add, Sub, Mul, Fma, Div, Sqrt };

// One host double operation. The volatile operands and result keep the
// compiler from folding or moving it across the rounding-mode changes.
double host_op(Arith op, double a, double b, double c) {
  volatile double va = a, vb = b, vc = c;
  volatile double r;
  switch (op) {
    case Arith::Add: r = va + vb; break;
    case Arith::Sub: r = va - vb; break;
    case Arith::Mul: r = va * vb; break;
    case Arith::Fma: r = std::fma(va, vb, vc); break;
    case Arith::Div: r = va / vb; break;
    case Arith::Sqrt: r = std::sqrt(va); break;
  }
  return r;
}

// a op b (op c), operands exactly representable in t, rounded once to t.
uint64_t arith(Arith op, Type t, Round m, double a, double b = 0, double c = 0) {
  if (m == Round::NearestEven && op != Arith::Fma) {
    // Fast path in the thread's default mode (round to nearest): for + - * /
    // and sqrt of p-bit operands, rounding to double (53 >= 2p + 2) and then
    // to p bits is the same as rounding once (Figueroa, "When is double
    // rounding innocuous?"). An exact zero gets the nearest-mode sign.
    return fbits::from_double(host_op(op, a, b, c), t, m);
  }
  if (t == Type::F64) {
    RoundScope rs(host_mode(m));
    return dbits(host_op(op, a, b, c));
  }
  double r;
  bool inexact;
  {
    RoundScope rs(FE_TOWARDZERO);
    std::feclearexcept(FE_INEXACT);
    r = host_op(op, a, b, c);
    inexact = std::fetestexcept(FE_INEXACT) != 0;
  }
  if (r == 0) {
    // f16/f32 operands cannot underflow in double, so this zero is exact; its
    // sign (x - x is -0 only when rounding down) depends on the real mode.
    RoundScope rs(host_mode(m));
    r = host_op(op, a, b, c);
  } else if (inexact && std::isfinite(r)) {
    r = from_dbits(dbits(r) | 1);
  }
  return fbits::from_double(r, t, m);
}

// A double (already computed) rounded to t; f64 keeps it as is.
uint64_t round_result(double r, Type t, Round m) { return fbits::from_double(r, t, m); }

double round_integral(double x, Round m) {
  switch (m) {
    case Round::TowardZero: return std::trunc(x);
    case Round::Down: return std::floor(x);
    case Round::Up: return std::ceil(x);
    default: {
      RoundScope rs(FE_TONEAREST);
      volatile double v = x;
      return std::nearbyint(v);
    }
  }
}

uint64_t one_bits(Type t) {
  return t == Type::F16 ? 0x3C00 : t == Type::F32 ? 0x3F800000u : 0x3FF0000000000000ull;
}

// NaN rule, FtzOut and Sat, in that order. `propagate` is the NaN the
// Propagate rule returns (first NaN operand, quieted, in type t) or ~0 for
// "no NaN operand" (then Propagate gives the canonical NaN).
uint64_t finish(uint64_t r, Type t, uint32_t fl, uint64_t propagate) {
  if (fbits::is_nan(r, t)) {
    switch (nan_rule(fl)) {
      case NanRule::AllOnes: r = fbits::all_ones_nan(t); break;
      case NanRule::Propagate: r = propagate != ~0ull ? propagate : fbits::canonical_nan(t); break;
      default: r = fbits::canonical_nan(t); break;  // Canonical, and Any (some NaN: this one)
    }
  }
  if (fl & ff::FtzOut) r = fbits::flush(r, t);
  if (fl & ff::Sat) {
    double d = fbits::to_double(r, t);
    if (std::isnan(d) || d <= 0) r = 0;
    else if (d >= 1) r = one_bits(t);
  }
  return r;
}

uint64_t first_nan(const uint64_t* a, unsigned n, Type t) {
  for (unsigned i = 0; i < n; ++i)
    if (fbits::is_nan(a[i], t)) return fbits::quiet_nan_as(a[i], t, t);
  return ~0ull;
}

bool fless(uint64_t a, uint64_t b, Type t) { return fbits::to_double(a, t) < fbits::to_double(b, t); }

// fmin/fmax on non-NaN operands; -0 orders below +0.
uint64_t pick_min_max(uint64_t a, uint64_t b, Type t, bool is_max) {
  if (fbits::is_zero(a, t) && fbits::is_zero(b, t)) {
    bool a_neg = fbits::sign_of(a, t);
    return (a_neg != is_max) ? a : b;
  }
  if (is_max) return fless(a, b, t) ? b : a;
  return fless(b, a, t) ? b : a;
}

uint64_t eval_min_max(const LaneOp& o, uint64_t a, uint64_t b) {
  Type t = o.type;
  bool is_max = o.op == Opcode::FMax;
  bool an = fbits::is_nan(a, t), bn = fbits::is_nan(b, t);
  uint64_t ops[2] = {a, b};
  uint64_t r;
  uint64_t prop = first_nan(ops, 2, t);
  switch (MinMaxNan(o.attr)) {
    case MinMaxNan::NumberWins:
      r = (an && bn) ? a : an ? b : bn ? a : pick_min_max(a, b, t, is_max);
      break;
    case MinMaxNan::NanWins:
      r = (an || bn) ? (an ? a : b) : pick_min_max(a, b, t, is_max);
      break;
    default: {  // SecondOnNan: the C expression (a < b) ? a : b, every NaN case gives b
      double da = fbits::to_double(a, t), db = fbits::to_double(b, t);
      r = (is_max ? da > db : da < db) ? a : b;
      if (bn) prop = fbits::quiet_nan_as(b, t, t);
      break;
    }
  }
  return finish(r, t, o.fflags, prop);
}

bool fcmp(FloatPred p, double a, double b) {
  bool un = std::isnan(a) || std::isnan(b);
  switch (p) {
    case FloatPred::Oeq: return !un && a == b;
    case FloatPred::One: return !un && a != b;
    case FloatPred::Olt: return !un && a < b;
    case FloatPred::Ole: return !un && a <= b;
    case FloatPred::Ogt: return !un && a > b;
    case FloatPred::Oge: return !un && a >= b;
    case FloatPred::Ord: return !un;
    case FloatPred::Uno: return un;
    case FloatPred::Ueq: return un || a == b;
    case FloatPred::Une: return un || a != b;
    case FloatPred::Ult: return un || a < b;
    case FloatPred::Ule: return un || a <= b;
    case FloatPred::Ugt: return un || a > b;
    case FloatPred::Uge: return un || a >= b;
  }
  return false;
}

bool icmp(IntPred p, uint64_t a, uint64_t b, unsigned w) {
  int64_t sa = sext(a, w), sb = sext(b, w);
  switch (p) {
    case IntPred::Eq: return a == b;
    case IntPred::Ne: return a != b;
    case IntPred::Slt: return sa < sb;
    case IntPred::Sle: return sa <= sb;
    case IntPred::Sgt: return sa > sb;
    case IntPred::Sge: return sa >= sb;
    case IntPred::Ult: return a < b;
    case IntPred::Ule: return a <= b;
    case IntPred::Ugt: return a > b;
    case IntPred::Uge: return a >= b;
  }
  return false;
}

uint64_t ftoi(const LaneOp& o, uint64_t a) {
  Type ft = o.arg_type;
  if (o.fflags & ff::FtzIn) a = fbits::flush(a, ft);
  if (fbits::is_nan(a, ft)) return 0;
  double r = round_integral(fbits::to_double(a, ft), round_mode(o.fflags));
  unsigned w = bit_width(o.type);
  uint64_t m = type_mask(o.type);
  if (Sign(o.attr) == Sign::Signed) {
    double lo = -std::ldexp(1.0, int(w) - 1);  // exact powers of two
    double hi = std::ldexp(1.0, int(w) - 1);   // first value above the range
    if (r < lo) return (uint64_t(1) << (w - 1)) & m;
    if (r >= hi) return (m >> 1);
    return uint64_t(int64_t(r)) & m;
  }
  if (!(r > 0)) return 0;
  if (r >= std::ldexp(1.0, int(w))) return m;
  return uint64_t(r) & m;
}

uint64_t itof(const LaneOp& o, uint64_t a) {
  unsigned w = bit_width(o.arg_type);
  a &= type_mask(o.arg_type);
  bool is_signed = Sign(o.attr) == Sign::Signed;
  int64_t s = sext(a, w);
  Round m = round_mode(o.fflags);
  // Unsigned values below 2^63 convert through the signed instruction: a
  // compiler may lower u64 -> double with magic-number subtractions
  // ((2^52 + x) - 2^52), which give -0 for 0 under round-down (clang does).
  const bool via_signed = is_signed || a <= uint64_t(INT64_MAX);
  auto convert = [&]() -> double {
    volatile int64_t vs = is_signed ? s : int64_t(a);
    volatile uint64_t vu = a;
    volatile double r = via_signed ? double(vs) : double(vu);
    return r;
  };
  uint64_t r;
  if (o.type == Type::F64) {
    RoundScope rs(host_mode(m));
    r = dbits(convert());
  } else {
    double d;
    bool inexact;
    {
      RoundScope rs(FE_TOWARDZERO);
      std::feclearexcept(FE_INEXACT);
      d = convert();
      inexact = std::fetestexcept(FE_INEXACT) != 0;
    }
    if (inexact) d = from_dbits(dbits(d) | 1);  // round to odd, see the top of the file
    r = fbits::from_double(d, o.type, m);
  }
  return finish(r, o.type, o.fflags, ~0ull);
}

uint64_t ftof(const LaneOp& o, uint64_t a) {
  Type from = o.arg_type, to = o.type;
  if (o.fflags & ff::FtzIn) a = fbits::flush(a, from);
  if (fbits::is_nan(a, from)) return finish(fbits::canonical_nan(to), to, o.fflags, fbits::quiet_nan_as(a, from, to));
  return finish(fbits::from_double(fbits::to_double(a, from), to, round_mode(o.fflags)), to, o.fflags, ~0ull);
}

// Transc::Ieee: rcp and sqrt are correctly rounded; the others are the host
// libm double function of the exactly widened input, rounded to the type.
uint64_t transcendental(const LaneOp& o, uint64_t a) {
  Type t = o.type;
  Round m = round_mode(o.fflags);
  double x = fbits::to_double(a, t);
  switch (o.op) {
    case Opcode::FRcp: return arith(Arith::Div, t, m, 1.0, x);
    case Opcode::FSqrt: return arith(Arith::Sqrt, t, m, x);
    default: break;
  }
  double y;
  {
    RoundScope rs(FE_TONEAREST);
    volatile double vx = x;
    switch (o.op) {
      case Opcode::FRsqrt: {
        volatile double s = std::sqrt(vx);
        y = 1.0 / s;
        break;
      }
      case Opcode::FExp2: y = std::exp2(vx); break;
      case Opcode::FLog2: y = std::log2(vx); break;
      case Opcode::FSin: y = std::sin(vx); break;
      case Opcode::FCos: y = std::cos(vx); break;
      default: y = 0; break;
    }
  }
  return std::isnan(y) ? fbits::canonical_nan(t) : round_result(y, t, m);
}

uint64_t eval_float(const LaneOp& o, const uint64_t* in) {
  Type t = o.type;
  unsigned n = lane_op_arity(o.op);
  uint64_t a[3] = {0, 0, 0};
  for (unsigned i = 0; i < n && i < 3; ++i) {
    a[i] = in[i] & type_mask(t);
    if (o.fflags & ff::FtzIn) a[i] = fbits::flush(a[i], t);
  }
  if (o.op == Opcode::FMin || o.op == Opcode::FMax) return eval_min_max(o, a[0], a[1]);
  Round m = round_mode(o.fflags);
  double x = fbits::to_double(a[0], t), y = fbits::to_double(a[1], t), z = fbits::to_double(a[2], t);
  uint64_t prop = first_nan(a, n, t);
  bool zero_mul = (o.fflags & ff::ZeroMul) &&
                  ((std::isinf(x) && y == 0) || (x == 0 && std::isinf(y)));
  uint64_t r;
  switch (o.op) {
    case Opcode::FAdd: r = arith(Arith::Add, t, m, x, y); break;
    case Opcode::FSub: r = arith(Arith::Sub, t, m, x, y); break;
    case Opcode::FMul: r = zero_mul ? 0 : arith(Arith::Mul, t, m, x, y); break;
    case Opcode::FFma:
      if (zero_mul) r = arith(Arith::Add, t, m, 0.0, z);
      // One fused rounding for every width. (x * y is exact in double for
      // f16/f32, but x * y + z is not: adding in double with round-to-nearest
      // and then rounding to f32 can round twice, so the fma goes through the
      // round-to-odd path of arith() like the other directed cases.)
      else r = arith(Arith::Fma, t, m, x, y, z);
      break;
    case Opcode::FMad: {
      uint64_t p = zero_mul ? 0 : arith(Arith::Mul, t, m, x, y);
      r = arith(Arith::Add, t, m, fbits::to_double(p, t), z);
      break;
    }
    case Opcode::FFloor: r = round_result(std::floor(x), t, m); break;
    case Opcode::FCeil: r = round_result(std::ceil(x), t, m); break;
    case Opcode::FTrunc: r = round_result(std::trunc(x), t, m); break;
    case Opcode::FRint: r = round_result(round_integral(x, m), t, m); break;
    case Opcode::FRcp: case Opcode::FRsqrt: case Opcode::FSqrt: case Opcode::FExp2:
    case Opcode::FLog2: case Opcode::FSin: case Opcode::FCos: case Opcode::FSinStep:
      switch (Transc(o.attr)) {
        case Transc::Pica: r = transc::pica(o, a[0], a[1]); break;
        case Transc::Tesla: r = transc::tesla(o, a[0], a[1]); break;
        case Transc::G13: r = transc::g13(o, a[0], a[1]); break;
        default: r = transcendental(o, a[0]); break;
      }
      break;
    default: return 0;
  }
  return finish(r & type_mask(t), t, o.fflags, prop);
}

uint64_t bit_reverse(uint64_t v, unsigned w) {
  uint64_t r = 0;
  for (unsigned i = 0; i < w; ++i)
    if (v >> i & 1) r |= 1ull << (w - 1 - i);
  return r;
}

uint64_t shift(const LaneOp& o, uint64_t v, uint64_t count) {
  unsigned w = bit_width(o.type);
  count &= 0xffffffffu;
  bool arith_shift = o.op == Opcode::AShr;
  if (ShiftMode(o.attr) == ShiftMode::Mask) {
    count &= w - 1;
  } else if (count >= w) {
    return (arith_shift && sext(v, w) < 0) ? ~0ull : 0;
  }
  switch (o.op) {
    case Opcode::Shl: return v << count;
    case Opcode::LShr: return v >> count;
    default: return uint64_t(sext(v, w) >> count);
  }
}

uint64_t bf_extract(uint64_t v, uint64_t offset, uint64_t count, unsigned w, bool is_signed) {
  offset &= 0xff;
  count &= 0xff;
  if (count == 0) return 0;
  // Source bits at and above the width read as 0 (unsigned) / the sign bit
  // (signed): a sign-extended 64-bit copy gives exactly that up to bit 63.
  uint64_t src = is_signed ? uint64_t(sext(v, w)) : v;
  uint64_t fill = (is_signed && sext(v, w) < 0) ? ~0ull : 0;
  uint64_t field = offset >= 64 ? fill : is_signed ? uint64_t(int64_t(src) >> offset) : (src >> offset);
  if (count < 64) {
    field &= (1ull << count) - 1;
    if (is_signed) field = uint64_t(sext(field, unsigned(count)));
  }
  return field;
}

uint64_t bf_insert(uint64_t base, uint64_t ins, uint64_t offset, uint64_t count, Type t) {
  offset &= 0xff;
  count &= 0xff;
  if (offset >= 64 || count == 0) return base;
  uint64_t field = count >= 64 ? ~0ull : ((1ull << count) - 1);
  uint64_t m = (field << offset) & type_mask(t);
  return (base & ~m) | ((ins << offset) & m);
}

uint64_t find_msb(uint64_t v, unsigned w, bool is_signed) {
  if (is_signed && sext(v, w) < 0) v = ~v & (w >= 64 ? ~0ull : ((1ull << w) - 1));
  if (v == 0) return 0xffffffffu;
  return 63 - std::countl_zero(v);
}

uint64_t eval_int(const LaneOp& o, const uint64_t* in) {
  Type t = o.type;
  unsigned w = bit_width(t);
  uint64_t m = type_mask(t);
  uint64_t a = in[0] & m, b = 0, c = 0;
  unsigned n = lane_op_arity(o.op);
  if (n > 1) b = in[1] & m;
  if (n > 2) c = in[2] & m;
  bool is_signed = Sign(o.attr) == Sign::Signed;
  uint64_t r = 0;
  switch (o.op) {
    case Opcode::IAdd: r = a + b; break;
    case Opcode::ISub: r = a - b; break;
    case Opcode::IAddC: r = a + b + (in[2] & 1); break;
    case Opcode::IMul: r = a * b; break;
    case Opcode::IMulHi:
      if (is_signed) r = uint64_t(u128(i128(sext(a, w)) * i128(sext(b, w))) >> w);
      else r = uint64_t((u128(a) * u128(b)) >> w);
      break;
    case Opcode::IMad: r = a * b + c; break;
    case Opcode::ISad: {
      bool a_less = is_signed ? sext(a, w) < sext(b, w) : a < b;
      r = (a_less ? b - a : a - b) + c;
      break;
    }
    case Opcode::IMin: r = (is_signed ? sext(a, w) < sext(b, w) : a < b) ? a : b; break;
    case Opcode::IMax: r = (is_signed ? sext(a, w) > sext(b, w) : a > b) ? a : b; break;
    case Opcode::INeg: r = 0 - a; break;
    case Opcode::IAbs: r = sext(a, w) < 0 ? 0 - a : a; break;
    case Opcode::Shl: case Opcode::LShr: case Opcode::AShr: r = shift(o, a, in[1]); break;
    case Opcode::And: r = a & b; break;
    case Opcode::Or: r = a | b; break;
    case Opcode::Xor: r = a ^ b; break;
    case Opcode::Not: r = ~a; break;
    case Opcode::Lut3:
      for (unsigned i = 0; i < w; ++i) {
        unsigned idx = unsigned((a >> i & 1) << 2 | (b >> i & 1) << 1 | (c >> i & 1));
        r |= uint64_t((o.imm >> idx) & 1) << i;
      }
      break;
    case Opcode::BfExtract: r = bf_extract(a, in[1], in[2], w, is_signed); break;
    case Opcode::BfInsert: r = bf_insert(a, b, in[2], in[3], t); break;
    case Opcode::BitReverse: r = bit_reverse(a, w); break;
    default: return 0;
  }
  return r & m;
}

}  // namespace

unsigned lane_op_arity(Opcode op) {
  // Operand counts of the op table, computed once (this sits on eval_lane's hot path).
  static const auto table = [] {
    std::array<uint8_t, size_t(Opcode::Count)> n{};
    for (size_t i = 0; i < n.size(); ++i) n[i] = uint8_t(std::char_traits<char>::length(op_info(Opcode(i)).args));
    return n;
  }();
  return size_t(op) < table.size() ? table[size_t(op)] : 0;
}

LaneOp lane_op(const Function& f, ValueId v) {
  const Inst& in = f.insts[v];
  LaneOp o{};
  o.op = in.op;
  o.type = in.type;
  o.arg_type = in.args.empty() || in.args[0] >= f.insts.size() ? Type::Void : f.insts[in.args[0]].type;
  o.attr = in.attr;
  o.fflags = in.fflags;
  o.imm = in.imm;
  return o;
}

bool lane_op_supported(const LaneOp& o, std::string* why) {
  auto fail = [&](std::string msg) {
    if (why) *why = std::string(op_name(o.op)) + ": " + msg;
    return false;
  };
  if (size_t(o.op) >= size_t(kNumOpcodes)) {
    if (why) *why = "opcode " + std::to_string(unsigned(o.op)) + " out of range";
    return false;
  }
  const OpInfo& info = op_info(o.op);
  switch (o.op) {
    case Opcode::Phi: case Opcode::GetVar: case Opcode::SetVar: case Opcode::LoadVar:
    case Opcode::StoreVar: case Opcode::LoadUniform: case Opcode::LoadUniformIdx: case Opcode::EntryMask: case Opcode::LaneId:
    case Opcode::Budget: case Opcode::Trap:
      return fail("not a per-lane op (state or control; the interpreter runs it)");
    default: break;
  }
  if (info.cross_lane || info.terminator || o.op == Opcode::Load || o.op == Opcode::Store ||
      o.op == Opcode::AtomicRmw || o.op == Opcode::AtomicCas)
    return fail("not a per-lane op (cross-lane, memory or terminator)");
  if (o.type == Type::Void) return fail("void result type");
  // Types by the opcode table's letters (the legend at the top of opcodes.inc);
  // LaneOp knows the first operand's type only.
  auto letter_ok = [&](char l, Type t) {
    switch (l) {
      case 'B': return t == Type::I1;
      case 'U': return t == Type::I32;
      case 'H': return t == Type::I16;
      case 'I': case 'W': return is_int(t);
      case 'F': return is_float(t);
      case 'T': return t == o.type;
      case 'L': return t == Type::I32 || t == Type::I64;
      default: return t != Type::Void;
    }
  };
  if (!letter_ok(info.result, o.type))
    return fail(std::string("result type ") + std::string(type_name(o.type)) + " does not fit class '" + info.result + "'");
  if (info.args[0] && !letter_ok(info.args[0], o.arg_type))
    return fail(std::string("operand type ") + std::string(type_name(o.arg_type)) + " does not fit class '" +
                info.args[0] + "'");
  if (o.op == Opcode::Extract16 && o.type != Type::I16) return fail("result must be i16");
  if (o.op == Opcode::IMulWide && bit_width(o.type) != 2 * bit_width(o.arg_type))
    return fail("result must be twice the argument width");
  if (o.op == Opcode::Bitcast && bit_width(o.type) != bit_width(o.arg_type))
    return fail("bitcast between different widths");
  switch (info.attr) {
    case AttrKind::Sign: if (o.attr > 1) return fail("bad sign attribute"); break;
    case AttrKind::IntPred: if (o.attr > uint8_t(IntPred::Uge)) return fail("bad integer predicate"); break;
    case AttrKind::FloatPred: if (o.attr > uint8_t(FloatPred::Uge)) return fail("bad float predicate"); break;
    case AttrKind::Shift: if (o.attr > 1) return fail("bad shift mode"); break;
    case AttrKind::MinMax: if (o.attr > 2) return fail("bad min/max NaN rule"); break;
    case AttrKind::Transc:
      switch (Transc(o.attr)) {
        case Transc::Ieee:
          if (o.op == Opcode::FSinStep) return fail("unsupported transcendental variant ieee (no step op)");
          break;
        case Transc::Pica:
          if (!transc::pica_defines(o.op, o.type)) return fail("transcendental variant pica does not define this op");
          break;
        case Transc::Tesla:
          if (!transc::tesla_defines(o.op, o.type)) return fail("transcendental variant tesla does not define this op");
          break;
        case Transc::G13:
          if (!transc::g13_defines(o.op, o.type)) return fail("transcendental variant g13 does not define this op");
          break;
        default:
          return fail("unsupported transcendental variant " + std::to_string(unsigned(o.attr)));
      }
      break;
    default: break;
  }
  return true;
}

uint64_t eval_lane(const LaneOp& o, const uint64_t* args) {
  if (!lane_op_supported(o, nullptr)) return 0;
  return eval_lane_unchecked(o, args);
}

uint64_t eval_lane_unchecked(const LaneOp& o, const uint64_t* args) {
  Type t = o.type;
  uint64_t m = type_mask(t);
  switch (o.op) {
    case Opcode::Const: return o.imm & m;
    case Opcode::Undef: return 0;
    case Opcode::Select: return ((args[0] & 1) ? args[1] : args[2]) & m;
    case Opcode::ICmp:
      return icmp(IntPred(o.attr), args[0] & type_mask(o.arg_type), args[1] & type_mask(o.arg_type),
                  bit_width(o.arg_type));
    case Opcode::ICarry: case Opcode::IOverflow: {
      unsigned w = bit_width(o.arg_type);
      uint64_t am = type_mask(o.arg_type);
      uint64_t a = args[0] & am, b = args[1] & am, ci = args[2] & 1;
      if (o.op == Opcode::ICarry) return uint64_t(((u128(a) + b + ci) >> w) & 1);
      i128 s = i128(sext(a, w)) + i128(sext(b, w)) + i128(ci);
      i128 lo = -(i128(1) << (w - 1)), hi = (i128(1) << (w - 1)) - 1;
      return (s < lo || s > hi) ? 1 : 0;
    }
    case Opcode::IMulWide: {
      unsigned w = bit_width(o.arg_type);
      uint64_t am = type_mask(o.arg_type);
      uint64_t a = args[0] & am, b = args[1] & am;
      if (Sign(o.attr) == Sign::Signed) return uint64_t(sext(a, w) * sext(b, w)) & m;
      return (a * b) & m;  // w <= 32 (the result is at most 64 bits)
    }
    case Opcode::Popcount: return uint64_t(std::popcount(args[0] & type_mask(o.arg_type)));
    case Opcode::FindMsb:
      return find_msb(args[0] & type_mask(o.arg_type), bit_width(o.arg_type), Sign(o.attr) == Sign::Signed);
    case Opcode::FindLsb: {
      uint64_t v = args[0] & type_mask(o.arg_type);
      return v == 0 ? 0xffffffffu : uint64_t(std::countr_zero(v));
    }
    case Opcode::Zext: case Opcode::Trunc: case Opcode::Bitcast: return args[0] & type_mask(o.arg_type) & m;
    case Opcode::Sext: return uint64_t(sext(args[0] & type_mask(o.arg_type), bit_width(o.arg_type))) & m;
    case Opcode::Extract16: return ((args[0] & 0xffffffffu) >> ((o.imm & 1) * 16)) & 0xffff & m;
    case Opcode::Insert16: {
      unsigned s = unsigned(o.imm & 1) * 16;
      return ((args[0] & ~(0xffffull << s)) | ((args[1] & 0xffff) << s)) & 0xffffffffu;
    }
    case Opcode::FNeg: return (args[0] ^ fbits::format(t).sign_bit()) & m;
    case Opcode::FAbs: return (args[0] & ~fbits::format(t).sign_bit()) & m;
    case Opcode::FCmp: {
      Type at = o.arg_type;
      uint64_t a = args[0] & type_mask(at), b = args[1] & type_mask(at);
      if (o.fflags & ff::FtzIn) a = fbits::flush(a, at), b = fbits::flush(b, at);
      return fcmp(FloatPred(o.attr), fbits::to_double(a, at), fbits::to_double(b, at));
    }
    case Opcode::FToI: return ftoi(o, args[0] & type_mask(o.arg_type));
    case Opcode::IToF: return itof(o, args[0]);
    case Opcode::FToF: return ftof(o, args[0] & type_mask(o.arg_type));
    default: break;
  }
  if (is_float(t)) return eval_float(o, args);
  return eval_int(o, args);
}

}  // namespace gpurc::ir
