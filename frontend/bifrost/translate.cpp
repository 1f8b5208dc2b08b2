// ARM Mali Bifrost -> pre-SSA IR (translate.h, docs/bifrost.md "Translation to IR").
#include "frontend/bifrost/translate.h"

#include <algorithm>
#include <bit>
#include <map>
#include <tuple>

#include "frontend/bifrost/interp.h"
#include "frontend/bifrost/ops_ext.h"
#include "ir/builder.h"

namespace gpurc::bifrost {

namespace {

using ir::Builder;
using ir::IntPred;
using ir::FloatPred;
using ir::Type;
using ir::ValueId;

constexpr uint64_t kTrapBadPc = 1;

// The IR instantiation of ops_ext.h's definitions: one IR op per primitive.
struct IrEmit {
  using V = ValueId;
  using B = ValueId;
  using D = ValueId;
  using Q = ValueId;
  Builder& b;
  static uint32_t rf(ir::Round r) { return r == ir::Round::NearestEven ? 0 : ir::with_round(0, r); }
  V k(uint32_t x) { return b.i32(x); }
  V add(V x, V y) { return b.iadd(x, y); }
  V sub(V x, V y) { return b.isub(x, y); }
  V mul(V x, V y) { return b.imul(x, y); }
  V and_(V x, V y) { return b.and_(x, y); }
  V or_(V x, V y) { return b.or_(x, y); }
  V xor_(V x, V y) { return b.xor_(x, y); }
  V not_(V x) { return b.not_(x); }
  V shl(V x, unsigned n) { return n ? b.shl(x, b.i32(n)) : x; }
  V lshr(V x, unsigned n) { return n ? b.lshr(x, b.i32(n)) : x; }
  V ashr(V x, unsigned n) { return n ? b.ashr(x, b.i32(n)) : x; }
  V shlv(V x, V n) { return b.shl(x, n); }
  V lshrv(V x, V n) { return b.lshr(x, n); }
  V ashrv(V x, V n) { return b.ashr(x, n); }
  B eq(V x, V y) { return b.icmp(IntPred::Eq, x, y); }
  B ne(V x, V y) { return b.icmp(IntPred::Ne, x, y); }
  B ult(V x, V y) { return b.icmp(IntPred::Ult, x, y); }
  B ule(V x, V y) { return b.icmp(IntPred::Ule, x, y); }
  B slt(V x, V y) { return b.icmp(IntPred::Slt, x, y); }
  B sle(V x, V y) { return b.icmp(IntPred::Sle, x, y); }
  B band(B x, B y) { return b.and_(x, y); }
  B bor(B x, B y) { return b.or_(x, y); }
  B bnot(B x) { return b.xor_(x, b.i1(true)); }
  V sel(B c, V x, V y) { return b.select(c, x, y); }
  D seld(B c, D x, D y) { return b.select(c, x, y); }
  V b2i(B c) { return b.zext(Type::I32, c); }
  V clz(V x) { return b.isub(b.i32(31), b.find_msb(ir::Sign::Unsigned, x)); }
  Q kq(uint64_t x) { return b.i64(x); }
  Q zx(V x) { return b.zext(Type::I64, x); }
  Q sx(V x) { return b.sext(Type::I64, x); }
  V lo(Q x) { return b.trunc(Type::I32, x); }
  V hi(Q x) { return b.trunc(Type::I32, b.lshr(x, b.i32(32))); }
  Q addq(Q x, Q y) { return b.iadd(x, y); }
  Q orq(Q x, Q y) { return b.or_(x, y); }
  Q andq(Q x, Q y) { return b.and_(x, y); }
  Q dbits(D x) { return b.float_bits(x); }
  D qd(Q x) { return b.bitcast(Type::F64, x); }
  D dlog2(D x) { return b.transc(ir::Opcode::FLog2, ir::Transc::Ieee, x); }
  D dexp2(D x) { return b.transc(ir::Opcode::FExp2, ir::Transc::Ieee, x); }
  Q sel_q(B c, Q x, Q y) { return b.select(c, x, y); }
  Q mulq(Q x, Q y) { return b.imul(x, y); }
  Q shlq(Q x, V n) { return b.shl(x, n); }
  Q lshrq(Q x, V n) { return b.lshr(x, n); }
  Q ashrq(Q x, V n) { return b.ashr(x, n); }
  D kd(double d) { return b.f64_bits(std::bit_cast<uint64_t>(d)); }
  D f32d(V x) { return b.ftof(Type::F64, b.bitcast(Type::F32, x)); }
  D f16d(V x) { return b.ftof(Type::F64, b.bitcast(Type::F16, b.trunc(Type::I16, x))); }
  D i2d(V x, bool sgn) { return b.itof(Type::F64, sgn ? ir::Sign::Signed : ir::Sign::Unsigned, x); }
  V d2f32(D d, ir::Round r) { return b.float_bits(b.ftof(Type::F32, d, rf(r))); }
  V d2f16(D d, ir::Round r) { return b.zext(Type::I32, b.float_bits(b.ftof(Type::F16, d, rf(r)))); }
  D pow2d(V n) { return b.bitcast(Type::F64, b.shl(b.zext(Type::I64, b.iadd(n, b.i32(1023))), b.i32(52))); }
  D drcp(D d) { return b.transc(ir::Opcode::FRcp, ir::Transc::Ieee, d); }
  D drsq(D d) { return b.transc(ir::Opcode::FRsqrt, ir::Transc::Ieee, d); }
  D dsqrt(D d) { return b.transc(ir::Opcode::FSqrt, ir::Transc::Ieee, d); }
  D dadd(D x, D y) { return b.fadd(x, y); }
  D dmul(D x, D y) { return b.fmul(x, y); }
  D dfma(D x, D y, D z) { return b.ffma(x, y, z); }
  D dround(D x, int m) {
    return b.fround(m == ext::kFloor ? ir::Opcode::FFloor : m == ext::kCeil ? ir::Opcode::FCeil
                    : m == ext::kTrunc ? ir::Opcode::FTrunc : ir::Opcode::FRint, x);
  }
  B disnan(D x) { return b.fcmp(FloatPred::Uno, x, x); }
  B dcmp(int c, D x, D y) {
    static const FloatPred preds[] = {FloatPred::Oeq, FloatPred::Ogt, FloatPred::Oge, FloatPred::Une,
                                      FloatPred::Olt, FloatPred::Ole, FloatPred::One, FloatPred::Ord};
    return b.fcmp(preds[c & 7], x, y);
  }
  V d2i(D d, bool sgn, ir::Round r) { return b.ftoi(Type::I32, sgn ? ir::Sign::Signed : ir::Sign::Unsigned, d, rf(r)); }
};  // trap code: a thread's pc is not a clause

struct Ctx {
  Builder& b;
  const DecodedClause& c;
  unsigned ti;
  unsigned W;
  ValueId active;
  ValueId port[3];
  ValueId fau_lo = ir::kNoValue, fau_hi = ir::kNoValue;
  ValueId t0, t1, t;
  bool fma_unit = true;
  bool ftz = false;
  const DecodedIns* pair_fma = nullptr;  // the tuple's FMA instruction, while the ADD is translated (+CUBEFACE2)
  // Message results landing at clause end.
  std::vector<std::pair<unsigned, ValueId>> staged;
  // Byte/half lane loads: (register, value in place, bits kept), merged after `staged`.
  std::vector<std::tuple<unsigned, ValueId, uint32_t>> merged;
  // The clause's branch.
  ValueId taken = ir::kNoValue, target = ir::kNoValue;
  bool barrier = false;
};

class Translator {
 public:
  Translator(Builder& b, const Program& p, unsigned W) : b_(b), p_(p), W_(W) {}
  bool clause(const DecodedClause& c, ValueId active, std::string& err);

 private:
  // A 64-bit clause: register pairs, each instruction once per 32-bit half (interp.cpp run_wide).
  bool wide_clause(const DecodedClause& c, ValueId active, std::string& err);
  Builder& b_;
  const Program& p_;
  unsigned W_;
  std::string err_;

  bool fail(const Ctx& x, const DecodedIns& in, const std::string& what) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "clause 0x%zx tuple %u %s: ", x.c.raw.offset, x.ti, x.fma_unit ? "FMA" : "ADD");
    err_ = buf + (in.enc ? in.enc->name : std::string("INSTR_INVALID_ENC")) + " " + what;
    return false;
  }
  ValueId src(const Ctx& x, unsigned field) {
    switch (field) {
      case 0: case 1: case 2: return x.port[field];
      case 3: return x.fma_unit ? b_.i32(0) : x.t;
      case 4: return x.fau_lo;
      case 5: return x.fau_hi;
      case 6: return x.t0;
      default: return x.t1;
    }
  }
  ValueId c32(uint32_t v) { return b_.i32(v); }
  ValueId eq0(ValueId v) { return b_.icmp(IntPred::Eq, v, c32(0)); }
  ValueId sel(ValueId c, ValueId a, ValueId bb) { return b_.select(c, a, bb); }
  ValueId flush(ValueId v, bool ftz) {
    if (!ftz) return v;
    return sel(eq0(b_.and_(v, c32(0x7f800000u))), b_.and_(v, c32(0x80000000u)), v);
  }
  ValueId absneg(ValueId v, bool abs, bool neg) {
    if (abs) v = b_.and_(v, c32(0x7fffffffu));
    if (neg) v = b_.xor_(v, c32(0x80000000u));
    return v;
  }
  ValueId widen(ValueId v, int w) {
    if (w == 0) return v;
    ValueId h = b_.trunc(Type::I16, w == 1 ? v : b_.lshr(v, c32(16)));
    return b_.float_bits(b_.ftof(Type::F32, b_.bitcast(Type::F16, h)));
  }
  ValueId asf(ValueId v) { return b_.bitcast(Type::F32, v); }
  ValueId asi(ValueId v) { return b_.float_bits(v); }
  ValueId clamp(ValueId v, const std::string& c) {
    if (c.empty() || c == "none") return v;
    ValueId f = asf(v), zero = b_.f32_bits(0), one = b_.f32(1.f);
    if (c == "clamp_0_inf") return sel(b_.fcmp(FloatPred::Ogt, f, zero), v, c32(0));
    if (c == "clamp_0_1")
      return sel(b_.fcmp(FloatPred::Ogt, f, one), c32(0x3f800000u), sel(b_.fcmp(FloatPred::Ogt, f, zero), v, c32(0)));
    return sel(b_.fcmp(FloatPred::Uno, f, f), c32(0),
               sel(b_.fcmp(FloatPred::Olt, f, b_.f32(-1.f)), c32(0xbf800000u),
                   sel(b_.fcmp(FloatPred::Ogt, f, one), c32(0x3f800000u), v)));
  }
  static uint32_t round_flags(const std::string& r) {
    using ir::Round;
    if (r == "rtp") return ir::with_round(0, Round::Up);
    if (r == "rtn") return ir::with_round(0, Round::Down);
    if (r == "rtz") return ir::with_round(0, Round::TowardZero);
    return 0;
  }
  static int wcode(const std::string& w) { return w == "h0" ? 1 : w == "h1" ? 2 : 0; }
  static bool on(const DecodedIns& in, const char* m) {
    const std::string& v = in.mod(m);
    return !v.empty() && v != "none";
  }
  ValueId half(ValueId v, unsigned h) { return b_.trunc(Type::I16, h ? b_.lshr(v, c32(16)) : v); }
  ValueId swz(ValueId v, const std::string& s, unsigned h) {
    // h00, h10, h01 (identity), h11: the first letter after 'h' is the low half's source.
    const unsigned from = (s.size() == 3 && s[0] == 'h') ? unsigned(s[1 + h] - '0') : h;
    return half(v, from);
  }
  ValueId absneg16(ValueId v, bool abs, bool neg) {
    if (abs) v = b_.and_(v, b_.i16(0x7fff));
    if (neg) v = b_.xor_(v, b_.i16(0x8000));
    return v;
  }
  ValueId h2(ValueId v16, Type t) { return b_.ftof(t, b_.bitcast(Type::F16, v16)); }
  ValueId clamp16(ValueId y16, const std::string& c) {
    if (c.empty() || c == "none") return y16;
    ValueId f = h2(y16, Type::F32), zero = b_.f32_bits(0), one = b_.f32(1.f);
    ValueId z = b_.i16(0), o = b_.i16(0x3c00);
    if (c == "clamp_0_inf") return sel(b_.fcmp(FloatPred::Ogt, f, zero), y16, z);
    if (c == "clamp_0_1") return sel(b_.fcmp(FloatPred::Ogt, f, one), o, sel(b_.fcmp(FloatPred::Ogt, f, zero), y16, z));
    return sel(b_.fcmp(FloatPred::Uno, f, f), z,
               sel(b_.fcmp(FloatPred::Olt, f, b_.f32(-1.f)), b_.i16(0xbc00), sel(b_.fcmp(FloatPred::Ogt, f, one), o, y16)));
  }
  ValueId pack16(ValueId lo, ValueId hi) { return b_.or_(b_.zext(Type::I32, lo), b_.shl(b_.zext(Type::I32, hi), c32(16))); }
  // frexp of a finite nonzero f32 (bits v): mantissa in [0.5, 1) with the
  // sign (f64), exponent (i32); `sqrt`: mantissa in [0.25, 1), even exponent.
  void frexp64(ValueId v, bool sqrt, ValueId& m, ValueId& e) {
    ValueId bits = b_.float_bits(b_.ftof(Type::F64, asf(v)));  // exact, subnormals normalised
    e = b_.isub(b_.trunc(Type::I32, b_.and_(b_.lshr(bits, c32(52)), b_.i64(0x7ff))), c32(1022));
    m = b_.bitcast(Type::F64, b_.or_(b_.and_(bits, b_.i64(0x800fffffffffffffull)), b_.i64(uint64_t(1022) << 52)));
    if (sqrt) {
      ValueId odd = b_.icmp(IntPred::Ne, b_.and_(e, c32(1)), c32(0));
      m = sel(odd, b_.fmul(m, b_.f64_bits(0x3fe0000000000000ull)), m);
      e = sel(odd, b_.iadd(e, c32(1)), e);
    }
  }
  ValueId is_nan32(ValueId v) { return b_.icmp(IntPred::Ugt, b_.and_(v, c32(0x7fffffffu)), c32(0x7f800000u)); }
  ValueId is_inf32(ValueId v) { return b_.icmp(IntPred::Eq, b_.and_(v, c32(0x7fffffffu)), c32(0x7f800000u)); }
  ValueId is_zero32(ValueId v) { return eq0(b_.and_(v, c32(0x7fffffffu))); }
  // 2^k (k an i32 in [-1000, 1000]) as f64.
  ValueId pow2(ValueId k) {
    return b_.bitcast(Type::F64, b_.shl(b_.zext(Type::I64, b_.iadd(k, c32(1023))), b_.i32(52)));
  }
  ValueId clamp_k(ValueId k) {
    const ir::Sign sg = ir::Sign::Signed;
    return b_.imin(sg, b_.imax(sg, k, c32(uint32_t(-1000))), c32(1000));
  }
  bool fau(Ctx& x, unsigned idx, const DecodedIns& in);
  bool ins(Ctx& x, const DecodedIns& in, ValueId& out);
  bool memory(Ctx& x, const DecodedIns& in);
};

bool Translator::fau(Ctx& x, unsigned idx, const DecodedIns& in) {
  const DecodedClause& c = x.c;
  if (idx >= 0x80) {
    const unsigned n = idx & 0x7f;
    x.fau_lo = b_.load_uniform(Type::I32, 8 * n);
    x.fau_hi = b_.load_uniform(Type::I32, 8 * n + 4);
    return true;
  }
  if (idx >= 0x20) {
    const int slot = fau_constant_slot(idx);
    if (slot < 0 || unsigned(slot) >= c.raw.nconsts) return fail(x, in, "reads a constant the clause does not have");
    uint64_t v = c.raw.consts[slot] | (idx & 0xf);
    const uint64_t pc = c.raw.offset;
    auto sext = [](uint64_t y, unsigned bits) { return uint64_t(int64_t(y << (64 - bits)) >> (64 - bits)); };
    switch (c.raw.mods[slot]) {
      case ConstMod::None: break;
      case ConstMod::PcLo: v = pc + sext(v, 60); break;
      case ConstMod::PcHi: v = (v & 0xffffffffu) | (uint64_t(uint32_t(pc + sext(v >> 32, 28))) << 32); break;
      case ConstMod::PcLoHi:
        v = uint64_t(uint32_t(pc + sext(v & 0xffffffffu, 28))) | (uint64_t(uint32_t(pc + sext(v >> 32, 28))) << 32);
        break;
    }
    x.fau_lo = c32(uint32_t(v));
    x.fau_hi = c32(uint32_t(v >> 32));
    return true;
  }
  if (idx <= 3) {
    x.fau_hi = c32(0);
    x.fau_lo = idx == 0 ? c32(0)
               : idx == 1 ? b_.and_(b_.lane_id(), c32(W_ - 1))
               : idx == 2 ? b_.get_var(kVarGuestWarp)
                          : c32(0);
    return true;
  }
  return fail(x, in, "reads an unsupported FAU special");
}

bool Translator::memory(Ctx& x, const DecodedIns& in) {
  const std::string& name = in.enc->name;
  const std::string& seg = in.mod("seg");
  const bool shared = seg == "wls";
  if (!shared && !(seg.empty() || seg == "none")) return fail(x, in, "segment ." + seg + " is not translated");
  // Narrow loads with a lane destination (interp.cpp ClauseRunner::memory): bN / hN merge the value into
  // that byte / half at clause end (hN with an extend: extended to 16 bits), w0 the whole register
  // extended, d0 extended to 64 bits in the staging register and the next one.
  if (name.rfind("+LOAD", 0) == 0 && !(in.mod("lane_dest").empty() || in.mod("lane_dest") == "none")) {
    const std::string& ld = in.mod("lane_dest");
    const unsigned nb = unsigned(std::stoul(name.substr(name.rfind(".i") + 2))) / 8;
    const bool sx = in.mod("extend") == "sext", has_ext = sx || in.mod("extend") == "zext";
    const unsigned sr = x.c.raw.header.staging_register();
    if (sr + (ld == "d0" ? 2 : 1) > kRegs) return fail(x, in, "staging registers past r63");
    ValueId lo = src(x, in.src[0]), hi = src(x, in.src[1]);
    ValueId a = shared ? b_.zext(Type::I64, lo) : b_.or_(b_.zext(Type::I64, lo), b_.shl(b_.zext(Type::I64, hi), b_.i32(32)));
    const Type lt = nb == 1 ? Type::I8 : nb == 2 ? Type::I16 : Type::I32;
    ValueId raw = b_.load(lt, shared ? ir::Space::Shared : ir::Space::Global, ir::AddrClass::Random, a, x.active);
    ValueId v = lt == Type::I32 ? raw : sx ? b_.sext(Type::I32, raw) : b_.zext(Type::I32, raw);
    if (ld.size() == 2 && (ld[0] == 'b' || ld[0] == 'h')) {
      const unsigned sh = (ld[0] == 'b' ? 8 : 16) * unsigned(ld[1] - '0');
      const uint32_t keep = ~((ld[0] == 'b' ? 0xffu : 0xffffu) << sh);
      ValueId lane = ld[0] == 'h' && has_ext ? b_.and_(v, c32(0xffff)) : v;
      x.merged.emplace_back(sr, b_.and_(b_.shl(lane, c32(sh)), c32(~keep)), keep);
      return true;
    }
    x.staged.push_back({sr, v});
    if (ld == "d0") x.staged.push_back({sr + 1, sx ? b_.ashr(v, c32(31)) : c32(0)});
    return true;
  }
  const bool load = name.rfind("+LOAD", 0) == 0;
  const unsigned bytes = unsigned(std::stoul(name.substr(name.rfind(".i") + 2))) / 8;
  if (load && bytes < 4) {
    const std::string& ld = in.mod("lane_dest");
    if (!(ld.empty() || ld == "none" || ld == "d0")) return fail(x, in, "lane destination is not translated");
  }
  const unsigned sr = x.c.raw.header.staging_register();
  const unsigned nregs = (bytes + 3) / 4;
  if (sr + nregs > kRegs) return fail(x, in, "staging registers past r63");
  const ir::Space space = shared ? ir::Space::Shared : ir::Space::Global;
  ValueId lo = src(x, in.src[0]), hi = src(x, in.src[1]);
  ValueId addr = shared ? b_.zext(Type::I64, lo) : b_.or_(b_.zext(Type::I64, lo), b_.shl(b_.zext(Type::I64, hi), b_.i32(32)));
  auto at = [&](unsigned off) { return off ? b_.iadd(addr, b_.i64(off)) : addr; };
  const ir::AddrClass ac = ir::AddrClass::Random;
  // The access in the interpreter's pieces (the largest of 8/4/2/1 bytes that
  // fits what is left, in address order), so a fault happens on the same piece.
  std::vector<std::pair<unsigned, unsigned>> pieces;  // (offset, bytes)
  for (unsigned done = 0; done < bytes;) {
    unsigned piece = 8;
    while (piece > bytes - done) piece >>= 1;
    pieces.push_back({done, piece});
    done += piece;
  }
  auto piece_type = [](unsigned n) { return n == 8 ? Type::I64 : n == 4 ? Type::I32 : n == 2 ? Type::I16 : Type::I8; };
  if (load) {
    ValueId word[4] = {c32(0), c32(0), c32(0), c32(0)};
    for (const auto& [off, n] : pieces) {
      ValueId v = b_.load(piece_type(n), space, ac, at(off), x.active);
      if (n == 8) {
        word[off / 4] = b_.trunc(Type::I32, v);
        word[off / 4 + 1] = b_.trunc(Type::I32, b_.lshr(v, b_.i32(32)));
      } else if (n == 4) {
        word[off / 4] = v;
      } else {
        ValueId z = b_.zext(Type::I32, v);
        if (off % 4) z = b_.shl(z, c32(8 * (off % 4)));
        word[off / 4] = off % 4 ? b_.or_(word[off / 4], z) : z;
      }
    }
    if (bytes < 4 && in.mod("extend") == "sext") {
      const unsigned sh = 32 - 8 * bytes;
      word[0] = b_.ashr(b_.shl(word[0], c32(sh)), c32(sh));
    }
    for (unsigned r = 0; r < nregs; ++r) x.staged.push_back({sr + r, word[r]});
    return true;
  }
  for (const auto& [off, n] : pieces) {
    ValueId v;
    if (n == 8) {
      v = b_.or_(b_.zext(Type::I64, b_.get_var(kVarReg0 + sr + off / 4)),
                 b_.shl(b_.zext(Type::I64, b_.get_var(kVarReg0 + sr + off / 4 + 1)), b_.i32(32)));
    } else {
      v = b_.get_var(kVarReg0 + sr + off / 4);
      if (n < 4) v = b_.trunc(piece_type(n), off % 4 ? b_.lshr(v, c32(8 * (off % 4))) : v);
    }
    b_.store(space, ac, at(off), v, x.active);
  }
  return true;
}

// The operation names the translation covers (the interpreter's semantics).
enum TOp {
  tNone, tNop, tMov, tFadd, tFma, tFcmp, tCselF, tCselI, tCselS, tCselU, tShift, tImul, tPopcount, tBitrev, tClz,
  tIaddc, tIsubb, tShaddxl, tFmin, tFmax, tIadd, tIsub, tIcmp, tMux, tF2S, tF2U, tS2F, tU2F, tMkvec2, tExt,
  tLoad, tStore, tBranchz, tBranch, tJump, tClper, tBarrier, tV2f16, tF16ToF32, tV2F32ToV2F16, tIabs,
  tMkvec4, tV2Int, tAtomC, tAtomCx, tFrexpm, tFrexpe, tFrcpApprox, tFrsqApprox, tFrcp, tFrsq, tLdexp, tFround,
  tFmaRscale, tFexpTable, tAtomMsg, tWmask, tBranchc,
};

TOp top(const std::string& n) {
  static const std::map<std::string, TOp> m = {
      {"*NOP", tNop}, {"+NOP", tNop}, {"*MOV.i32", tMov}, {"+MOV.i32", tMov}, {"*FADD.f32", tFadd},
      {"+FADD.f32", tFadd}, {"*FMA.f32", tFma}, {"*FCMP.f32", tFcmp}, {"+FCMP.f32", tFcmp}, {"*CSEL.f32", tCselF},
      {"*CSEL.i32", tCselI}, {"*CSEL.s32", tCselS}, {"*CSEL.u32", tCselU}, {"*LSHIFT_AND.i32", tShift},
      {"*LSHIFT_OR.i32", tShift}, {"*LSHIFT_XOR.i32", tShift}, {"*RSHIFT_AND.i32", tShift},
      {"*RSHIFT_OR.i32", tShift}, {"*RSHIFT_XOR.i32", tShift}, {"*ARSHIFT.i32", tShift}, {"*IMUL.i32", tImul},
      {"*POPCOUNT.i32", tPopcount}, {"*BITREV.i32", tBitrev}, {"*CLZ.u32", tClz}, {"*IADDC.i32", tIaddc},
      {"*ISUBB.i32", tIsubb}, {"*SHADDXL.u32", tShaddxl}, {"*SHADDXL.s32", tShaddxl}, {"+FMIN.f32", tFmin},
      {"+FMAX.f32", tFmax}, {"+IADD.s32", tIadd}, {"+IADD.u32", tIadd}, {"+ISUB.s32", tIsub}, {"+ISUB.u32", tIsub},
      {"+ICMP.i32", tIcmp}, {"+ICMP.s32", tIcmp}, {"+ICMP.u32", tIcmp}, {"+MUX.i32", tMux}, {"+F32_TO_S32", tF2S},
      {"+F32_TO_U32", tF2U}, {"+S32_TO_F32", tS2F}, {"+U32_TO_F32", tU2F}, {"*MKVEC.v2i16", tMkvec2},
      {"+MKVEC.v2i16", tMkvec2}, {"*S8_TO_S32", tExt}, {"+S8_TO_S32", tExt}, {"*U8_TO_U32", tExt},
      {"+U8_TO_U32", tExt}, {"*S16_TO_S32", tExt}, {"+S16_TO_S32", tExt}, {"*U16_TO_U32", tExt},
      {"+U16_TO_U32", tExt}, {"+LOAD.i8", tLoad}, {"+LOAD.i16", tLoad}, {"+LOAD.i24", tLoad}, {"+LOAD.i32", tLoad}, {"+LOAD.i48", tLoad}, {"+LOAD.i64", tLoad},
      {"+LOAD.i96", tLoad}, {"+LOAD.i128", tLoad}, {"+STORE.i8", tStore}, {"+STORE.i16", tStore},
      {"+STORE.i24", tStore}, {"+STORE.i32", tStore}, {"+STORE.i48", tStore}, {"+STORE.i64", tStore}, {"+STORE.i96", tStore}, {"+STORE.i128", tStore},
      {"+BRANCHZ.i32", tBranchz}, {"+BRANCHZ.s32", tBranchz}, {"+BRANCHZ.u32", tBranchz}, {"+BRANCHZ.f32", tBranchz},
      {"+BRANCH.i32", tBranch}, {"+BRANCH.s32", tBranch}, {"+BRANCH.u32", tBranch}, {"+BRANCH.f32", tBranch},
      {"+BRANCHZ.i16", tBranchz}, {"+BRANCHZ.s16", tBranchz}, {"+BRANCHZ.u16", tBranchz}, {"+BRANCHZ.f16", tBranchz},
      {"+BRANCH.i16", tBranch}, {"+BRANCH.s16", tBranch}, {"+BRANCH.u16", tBranch}, {"+BRANCH.f16", tBranch},
      {"+BRANCHC.i32", tBranchc}, {"+BRANCHC.i16", tBranchc},
      {"+JUMP", tJump}, {"+CLPER.i32", tClper}, {"+CLPER_OLD.i32", tClper}, {"+BARRIER", tBarrier},
      {"*FADD.v2f16", tV2f16}, {"+FADD.v2f16", tV2f16}, {"*FMA.v2f16", tV2f16}, {"+FMIN.v2f16", tV2f16},
      {"+FMAX.v2f16", tV2f16}, {"*F16_TO_F32", tF16ToF32}, {"+F16_TO_F32", tF16ToF32},
      {"*V2F32_TO_V2F16", tV2F32ToV2F16}, {"+V2F32_TO_V2F16", tV2F32ToV2F16}, {"+IABS.s32", tIabs},
      {"*MKVEC.v4i8", tMkvec4}, {"+IADD.v2s16", tV2Int}, {"+IADD.v2u16", tV2Int}, {"+ISUB.v2s16", tV2Int},
      {"+ISUB.v2u16", tV2Int}, {"*ATOM_C.i32", tAtomC}, {"*ATOM_C_RETURN.i32", tAtomC}, {"+ATOM_CX", tAtomCx},
      {"*ATOM_C.i64", tAtomC}, {"*ATOM_C_RETURN.i64", tAtomC}, {"*ATOM_C1.i32", tAtomC}, {"*ATOM_C1.i64", tAtomC},
      {"*ATOM_C1_RETURN.i32", tAtomC}, {"*ATOM_C1_RETURN.i64", tAtomC}, {"+AXCHG.i32", tAtomMsg},
      {"+AXCHG.i64", tAtomMsg}, {"+ACMPXCHG.i32", tAtomMsg}, {"+ACMPXCHG.i64", tAtomMsg},
      {"+ACMPSTORE.i32", tAtomMsg}, {"+ACMPSTORE.i64", tAtomMsg}, {"+WMASK", tWmask},
      {"*FREXPM.f32", tFrexpm}, {"+FREXPM.f32", tFrexpm}, {"*FREXPE.f32", tFrexpe}, {"+FREXPE.f32", tFrexpe},
      {"+FRCP_APPROX.f32", tFrcpApprox}, {"+FRSQ_APPROX.f32", tFrsqApprox}, {"+FRCP.f32", tFrcp},
      {"+FRSQ.f32", tFrsq}, {"+LDEXP.f32", tLdexp}, {"*FROUND.f32", tFround}, {"+FROUND.f32", tFround},
      {"*FMA_RSCALE.f32", tFmaRscale}, {"+FEXP_TABLE.u4", tFexpTable},
  };
  auto it = m.find(n);
  return it == m.end() ? tNone : it->second;
}

IntPred ipred(const std::string& c, bool sgn) {
  if (c == "eq") return IntPred::Eq;
  if (c == "ne") return IntPred::Ne;
  if (c == "gt") return sgn ? IntPred::Sgt : IntPred::Ugt;
  if (c == "ge") return sgn ? IntPred::Sge : IntPred::Uge;
  if (c == "lt") return sgn ? IntPred::Slt : IntPred::Ult;
  return sgn ? IntPred::Sle : IntPred::Ule;
}
bool fpred(const std::string& c, FloatPred& p) {
  static const std::map<std::string, FloatPred> m = {{"eq", FloatPred::Oeq}, {"gt", FloatPred::Ogt},
                                                     {"ge", FloatPred::Oge}, {"ne", FloatPred::Une},
                                                     {"lt", FloatPred::Olt}, {"le", FloatPred::Ole},
                                                     {"gtlt", FloatPred::One}, {"total", FloatPred::Ord}};
  auto it = m.find(c);
  if (it == m.end()) return false;
  p = it->second;
  return true;
}

bool Translator::ins(Ctx& x, const DecodedIns& in, ValueId& out) {
  if (!in.enc) return fail(x, in, "cannot run");
  const std::string reason = unsupported_reason(*in.enc);
  if (!reason.empty()) return fail(x, in, "is unsupported: " + reason);
  const TOp op = top(in.enc->name);
  if (op == tNone && ext::covers(in.enc->name)) {
    const std::string why = ext::check(in);
    if (!why.empty()) return fail(x, in, why);
    ValueId s[4] = {ir::kNoValue, ir::kNoValue, ir::kNoValue, ir::kNoValue};
    IrEmit em{b_};
    if (ext::op_of(in.enc->name) == ext::kCubeface2) {
      // interp.cpp: the face comes from the paired *CUBEFACE1's operands
      const DecodedIns* f = x.pair_fma;
      if (!f || !f->enc || f->enc->name != "*CUBEFACE1" || in.src[0] != 3)
        return fail(x, in, "must read t, the result of *CUBEFACE1 in the same tuple");
      x.fma_unit = true;
      for (unsigned i = 0; i < 3; ++i) s[i] = src(x, f->src[i]);
      x.fma_unit = false;
      out = ext::eval(em, ext::kCubeface2, *f, s, x.ftz);
      return true;
    }
    for (unsigned i = 0; i < in.nsrc; ++i) s[i] = src(x, in.src[i]);
    out = ext::eval(em, ext::op_of(in.enc->name), in, s, x.ftz);
    return true;
  }
  if (op == tNone) return fail(x, in, "is not translated to IR yet (it runs on the interpreter)");
  auto S = [&](unsigned i) { return src(x, in.src[i]); };
  const bool abs0 = on(in, "abs0"), abs1 = on(in, "abs1"), abs2 = on(in, "abs2");
  const bool neg0 = on(in, "neg0"), neg1 = on(in, "neg1"), neg2 = on(in, "neg2");
  const std::string& clampm = in.mod("clamp");
  const std::string& rnd = in.mod("round");
  const std::string& cmpf = in.mod("cmpf");
  const std::string& rtype = in.mod("result_type");
  const int wid[3] = {wcode(in.mod("widen0")), wcode(in.mod("widen1")), wcode(in.mod("widen2"))};
  auto fsrc = [&](unsigned i, bool a, bool n) { return absneg(flush(widen(S(i), wid[i]), x.ftz), a, n); };
  auto fres = [&](ValueId f) { return flush(clamp(asi(f), clampm), x.ftz); };
  auto result = [&](ValueId c) {
    if (rtype == "f1") return sel(c, c32(0x3f800000u), c32(0));
    if (rtype == "m1") return sel(c, c32(0xffffffffu), c32(0));
    return b_.zext(Type::I32, c);
  };
  const std::string& name = in.enc->name;
  switch (op) {
    case tNop: out = c32(0); return true;
    case tMov: out = S(0); return true;
    case tFadd:
      if (rnd == "rto") {  // round to odd: ops_ext_defs.h fadd_rto, as the interpreter
        IrEmit em{b_};
        out = flush(clamp(ext::fadd_rto(em, fsrc(0, abs0, neg0), fsrc(1, abs1, neg1)), clampm), x.ftz);
        return true;
      }
      out = fres(b_.fadd(asf(fsrc(0, abs0, neg0)), asf(fsrc(1, abs1, neg1)), round_flags(rnd)));
      return true;
    case tFma:
      out = fres(b_.ffma(asf(fsrc(0, abs0, neg0)), asf(fsrc(1, abs1, neg1)), asf(fsrc(2, abs2, neg2)),
                         round_flags(rnd)));
      return true;
    case tFcmp: {
      FloatPred p;
      if (!fpred(cmpf, p)) return fail(x, in, "compare is not translated");
      out = result(b_.fcmp(p, asf(fsrc(0, abs0, neg0)), asf(fsrc(1, abs1, neg1))));
      return true;
    }
    case tCselF: case tCselI: case tCselS: case tCselU: {
      ValueId c;
      if (op == tCselF) {
        FloatPred p;
        if (!fpred(cmpf, p)) return fail(x, in, "compare is not translated");
        c = b_.fcmp(p, asf(flush(S(0), x.ftz)), asf(flush(S(1), x.ftz)));
      } else {
        c = b_.icmp(ipred(cmpf, op == tCselS), S(0), S(1));
      }
      out = sel(c, S(2), S(3));
      return true;
    }
    case tShift: {
      const std::string& lane2 = in.mod("lane2");
      const unsigned byte = lane2.size() == 2 ? unsigned(lane2[1] - '0') : 0;
      const bool not1 = in.mod("not1") == "not", notr = in.mod("not_result") == "not";
      ValueId a = S(0), bb = name == "*ARSHIFT.i32" ? c32(0) : S(1);
      if (not1) bb = b_.not_(bb);
      ValueId sh = b_.and_(byte ? b_.lshr(S(2), c32(8 * byte)) : S(2), c32(31));
      ValueId r;
      if (name == "*ARSHIFT.i32") r = b_.ashr(a, sh);
      else {
        ValueId s = name[1] == 'L' ? b_.shl(a, sh) : b_.lshr(a, sh);
        r = name.find("_AND") != std::string::npos ? b_.and_(s, bb)
            : name.find("_OR") != std::string::npos ? b_.or_(s, bb) : b_.xor_(s, bb);
      }
      out = notr ? b_.not_(r) : r;
      return true;
    }
    case tImul: {
      // src1 widened per widen1 (h0/h1, b0-b3), sign per `extend` (interp.cpp kImulI32)
      const std::string& w = in.mod("widen1");
      const ir::Sign sg = in.mod("extend") == "sext" ? ir::Sign::Signed : ir::Sign::Unsigned;
      ValueId bb = S(1);
      if (w == "h0" || w == "h1") bb = b_.bf_extract(sg, bb, c32(w == "h0" ? 0 : 16), c32(16));
      else if (w.size() == 2 && w[0] == 'b') bb = b_.bf_extract(sg, bb, c32(8 * unsigned(w[1] - '0')), c32(8));
      out = b_.imul(S(0), bb);
      return true;
    }
    case tPopcount: out = b_.popcount(S(0)); return true;
    case tBitrev: out = b_.bit_reverse(S(0)); return true;
    case tClz:
      if (on(in, "mask")) return fail(x, in, ".mask is unsupported");
      out = b_.isub(c32(31), b_.find_msb(ir::Sign::Unsigned, S(0)));
      return true;
    case tIaddc: out = b_.emit(ir::Opcode::IAddC, Type::I32, {S(0), S(1), b_.trunc(Type::I1, S(2))}); return true;
    case tIsubb: out = b_.isub(b_.isub(S(0), S(1)), b_.and_(S(2), c32(1))); return true;
    case tShaddxl: {
      const std::string& ln = in.mod("lane1");
      ValueId v = S(1);
      if (ln == "h0" || ln == "h1")
        v = b_.bf_extract(name.ends_with(".s32") ? ir::Sign::Signed : ir::Sign::Unsigned, v, c32(ln == "h0" ? 0 : 16),
                          c32(16));
      out = b_.iadd(S(0), b_.shl(v, c32(in.imm[0])));
      return true;
    }
    case tFmin: case tFmax: {
      const std::string& sem = in.mod("sem");
      ValueId a = asf(fsrc(0, abs0, neg0)), bb = asf(fsrc(1, abs1, neg1));
      ir::MinMaxNan mode = sem == "nan_propagate" ? ir::MinMaxNan::NanWins
                           : (sem == "c" || sem == "inverse_c") ? ir::MinMaxNan::SecondOnNan
                                                                : ir::MinMaxNan::NumberWins;
      if (sem == "inverse_c") std::swap(a, bb);
      out = fres(op == tFmin ? b_.fmin(mode, a, bb) : b_.fmax(mode, a, bb));
      return true;
    }
    case tIadd: case tIsub: {
      const bool sat = on(in, "saturate"), sgn = name.ends_with(".s32"), sub = op == tIsub;
      const std::string& ln = in.mod("lanes1");
      ValueId a = S(0), bb = S(1);
      const ir::Sign sg = sgn ? ir::Sign::Signed : ir::Sign::Unsigned;
      if (ln == "h0" || ln == "h1") bb = b_.bf_extract(sg, bb, c32(ln == "h0" ? 0 : 16), c32(16));
      else if (ln.size() == 2 && ln[0] == 'b') bb = b_.bf_extract(sg, bb, c32(8 * unsigned(ln[1] - '0')), c32(8));
      ValueId r = sub ? b_.isub(a, bb) : b_.iadd(a, bb);
      if (sat) {
        if (sgn) {
          ValueId ov = sub ? b_.ioverflow(a, b_.not_(bb), b_.i1(true)) : b_.ioverflow(a, bb, b_.i1(false));
          ValueId bneg = b_.icmp(IntPred::Slt, bb, c32(0));
          // add: overflow toward b's sign; sub: away from it
          ValueId to_min = sub ? b_.icmp(IntPred::Sge, bb, c32(0)) : bneg;
          r = sel(ov, sel(to_min, c32(0x80000000u), c32(0x7fffffffu)), r);
        } else if (sub) {
          r = sel(b_.icmp(IntPred::Ult, a, bb), c32(0), r);
        } else {
          r = sel(b_.icarry(a, bb, b_.i1(false)), c32(0xffffffffu), r);
        }
      }
      out = r;
      return true;
    }
    case tIcmp: out = result(b_.icmp(ipred(cmpf, name.ends_with(".s32")), S(0), S(1))); return true;
    case tMux: {
      const std::string& m = in.mod("mux");
      ValueId a = S(0), bb = S(1), s = S(2);
      if (m == "neg") out = sel(b_.icmp(IntPred::Slt, s, c32(0)), a, bb);
      else if (m == "fp_zero") out = sel(eq0(b_.and_(s, c32(0x7fffffffu))), a, bb);
      else if (m == "bit") out = b_.or_(b_.and_(a, s), b_.and_(bb, b_.not_(s)));
      else out = sel(eq0(s), a, bb);
      return true;
    }
    case tF2S: case tF2U:
      if (rnd == "rtna") {  // half away from zero: ops_ext.h to_int, as the interpreter's std::round
        IrEmit em{b_};
        out = ext::to_int(em, em.f32d(flush(S(0), x.ftz)), op == tF2S, rnd);
        return true;
      }
      out = b_.ftoi(Type::I32, op == tF2S ? ir::Sign::Signed : ir::Sign::Unsigned, asf(flush(S(0), x.ftz)),
                    round_flags(rnd));
      return true;
    case tS2F: case tU2F:
      if (rnd == "rtna") {  // ties away: ops_ext_defs.h d2f_rtna, as the interpreter
        IrEmit em{b_};
        out = ext::d2f_rtna(em, em.i2d(S(0), op == tS2F), false);
        return true;
      }
      out = asi(b_.itof(Type::F32, op == tS2F ? ir::Sign::Signed : ir::Sign::Unsigned, S(0), round_flags(rnd)));
      return true;
    case tMkvec2: {
      const bool h0 = in.mod("lane0") == "h1", h1 = in.mod("lane1") == "h1";
      ValueId lo = b_.and_(h0 ? b_.lshr(S(0), c32(16)) : S(0), c32(0xffff));
      ValueId hi = b_.and_(h1 ? b_.lshr(S(1), c32(16)) : S(1), c32(0xffff));
      out = b_.or_(lo, b_.shl(hi, c32(16)));
      return true;
    }
    case tExt: {
      const std::string& ln = in.mod("lane0");
      const unsigned sel_ = ln.size() == 2 ? unsigned(ln[1] - '0') : 0;
      const bool byte = name.find("8_TO") != std::string::npos, sgn = name[1] == 'S';
      const unsigned width = byte ? 8 : 16;
      out = b_.bf_extract(sgn ? ir::Sign::Signed : ir::Sign::Unsigned, S(0), c32(width * sel_), c32(width));
      return true;
    }
    case tLoad: case tStore:
      out = c32(0);
      return memory(x, in);
    case tAtomMsg: {
      // interp.cpp ClauseRunner::atomic_message: staging = new value (then the compare value)
      out = c32(0);
      const ir::Space space = in.mod("seg") == "wls" ? ir::Space::Shared : ir::Space::Global;
      const unsigned n = name.ends_with(".i64") ? 2 : 1;
      const bool cas = name.rfind("+ACMP", 0) == 0, ret = name.rfind("+ACMPSTORE", 0) != 0;
      const unsigned sr = x.c.raw.header.staging_register();
      if (sr + (cas ? 2 * n : n) > kRegs) return fail(x, in, "staging registers past r63");
      ValueId lo = S(0), hi = S(1);
      ValueId addr = space == ir::Space::Shared ? b_.zext(Type::I64, lo)
                                                : b_.or_(b_.zext(Type::I64, lo), b_.shl(b_.zext(Type::I64, hi), b_.i32(32)));
      auto word = [&](unsigned r) {
        if (n == 1) return b_.get_var(kVarReg0 + r);
        return b_.or_(b_.zext(Type::I64, b_.get_var(kVarReg0 + r)),
                      b_.shl(b_.zext(Type::I64, b_.get_var(kVarReg0 + r + 1)), b_.i32(32)));
      };
      ValueId old = cas ? b_.atomic_cas(space, addr, word(sr + n), word(sr), x.active)
                        : b_.atomic(ir::AtomicOp::Exch, space, addr, word(sr), x.active);
      if (ret) {
        if (n == 2) {
          x.staged.push_back({sr, b_.trunc(Type::I32, old)});
          x.staged.push_back({sr + 1, b_.trunc(Type::I32, b_.lshr(old, b_.i32(32)))});
        } else {
          x.staged.push_back({sr, old});
        }
      }
      return true;
    }
    case tBranchz: case tBranch: case tJump: {
      const bool h16 = name.ends_with("16");
      if (!h16 && (on(in, "widen0") || on(in, "widen1"))) return fail(x, in, "with 16-bit halves is unsupported");
      ValueId take;
      const unsigned tsrc = op == tJump ? 0 : op == tBranchz ? 1 : 2;
      if (op == tJump) {
        take = b_.i1(true);
      } else {
        ValueId a = S(0), bb = op == tBranch ? S(1) : c32(0);
        const bool is_f = name.ends_with(".f32") || name.ends_with(".f16");
        const bool is_s = name.ends_with(".s32") || name.ends_with(".s16");
        if (h16) {
          // the halves widen0/widen1 name, compared as f16 / s16 / u16 (interp.cpp)
          a = half(a, in.mod("widen0") == "h1" ? 1 : 0);
          bb = op == tBranch ? half(bb, in.mod("widen1") == "h1" ? 1 : 0) : b_.i16(0);
          if (is_f) {
            a = h2(a, Type::F32);
            bb = h2(bb, Type::F32);
          } else {
            a = is_s ? b_.sext(Type::I32, a) : b_.zext(Type::I32, a);
            bb = is_s ? b_.sext(Type::I32, bb) : b_.zext(Type::I32, bb);
          }
        } else if (is_f) {
          a = asf(a);
          bb = asf(bb);
        }
        if (is_f) {
          FloatPred p;
          if (!fpred(cmpf, p)) return fail(x, in, "compare is not translated");
          take = b_.fcmp(p, a, bb);
        } else {
          take = b_.icmp(ipred(cmpf, is_s), a, bb);
        }
      }
      x.taken = take;
      x.target = S(tsrc);
      out = c32(0);
      return true;
    }
    case tBranchc: {
      // interp.cpp kBranchc: any / all of the guest warp's active threads (cluster W)
      const bool all = in.mod("combine") == "all";
      ValueId v = S(0);
      if (name.ends_with(".i16")) v = b_.zext(Type::I32, half(v, in.mod("lane0") == "h1" ? 1 : 0));
      ValueId cnd = b_.icmp(IntPred::Ne, v, c32(0));
      ValueId t = b_.emit(all ? ir::Opcode::All : ir::Opcode::Any, Type::I1, {cnd, x.active}, 0, 0, ir::cluster_imm(W_));
      x.taken = t;
      x.target = S(1);
      out = c32(0);
      return true;
    }
    case tV2f16: {
      const std::string sw0 = in.mod("swz0"), sw1 = in.mod("swz1"), sw2 = in.mod("swz2");
      const bool is_fma = name == "*FMA.v2f16", is_add = name.find("FADD") != std::string::npos;
      const bool is_max = name == "+FMAX.v2f16";
      const std::string& sem = in.mod("sem");
      ValueId hs[2];
      for (unsigned h = 0; h < 2; ++h) {
        ValueId a = absneg16(swz(S(0), sw0, h), abs0, neg0), bb = absneg16(swz(S(1), sw1, h), abs1, neg1);
        ValueId y;
        if (is_fma) {
          ValueId cc = absneg16(swz(S(2), sw2, h), abs2, neg2);
          y = b_.ftof(Type::F16, b_.ffma(h2(a, Type::F64), h2(bb, Type::F64), h2(cc, Type::F64)), round_flags(rnd));
        } else if (is_add) {
          y = b_.ftof(Type::F16, b_.fadd(h2(a, Type::F64), h2(bb, Type::F64)), round_flags(rnd));
        } else {
          ValueId fa = h2(a, Type::F32), fb = h2(bb, Type::F32);
          ir::MinMaxNan mode = sem == "nan_propagate" ? ir::MinMaxNan::NanWins
                               : (sem == "c" || sem == "inverse_c") ? ir::MinMaxNan::SecondOnNan
                                                                    : ir::MinMaxNan::NumberWins;
          if (sem == "inverse_c") std::swap(fa, fb);
          y = b_.ftof(Type::F16, is_max ? b_.fmax(mode, fa, fb) : b_.fmin(mode, fa, fb));
        }
        hs[h] = clamp16(b_.bitcast(Type::I16, y), clampm);
      }
      out = pack16(hs[0], hs[1]);
      return true;
    }
    case tF16ToF32: {
      const bool hi = in.mod("lane0") == "h1";
      out = flush(asi(h2(half(S(0), hi ? 1 : 0), Type::F32)), x.ftz);
      return true;
    }
    case tV2F32ToV2F16: {
      ValueId hs[2];
      for (unsigned h = 0; h < 2; ++h) {
        ValueId v = absneg(S(h), h ? abs1 : abs0, h ? neg1 : neg0);
        IrEmit em{b_};
        ValueId y32 = rnd == "rtna" ? ext::d2f_rtna(em, em.f32d(v), true)  // ties away, as the interpreter
                                    : b_.zext(Type::I32, b_.float_bits(b_.ftof(Type::F16, asf(v), round_flags(rnd))));
        hs[h] = clamp16(b_.trunc(Type::I16, y32), clampm);
      }
      out = pack16(hs[0], hs[1]);
      return true;
    }
    case tIabs: out = b_.emit(ir::Opcode::IAbs, Type::I32, {S(0)}); return true;
    case tMkvec4: {
      ValueId r = c32(0);
      for (unsigned i = 0; i < 4; ++i) {
        const bool b2 = in.mod(("lane" + std::to_string(i)).c_str()) == "b2";
        ValueId byte = b_.and_(b2 ? b_.lshr(S(i), c32(16)) : S(i), c32(0xff));
        r = b_.or_(r, i ? b_.shl(byte, c32(8 * i)) : byte);
      }
      out = r;
      return true;
    }
    case tV2Int: {
      const bool sat = on(in, "saturate"), sub = name.find("ISUB") != std::string::npos,
                 sgn = name.find("v2s16") != std::string::npos;
      const std::string l0 = in.mod("lanes0"), l1 = in.mod("lanes1");
      if (l1 == "b01" || l1 == "b23") return fail(x, in, "byte lanes are unsupported");
      ValueId hs[2];
      for (unsigned h = 0; h < 2; ++h) {
        ValueId a = swz(S(0), l0, h), bb = swz(S(1), l1, h);
        ValueId a32 = sgn ? b_.sext(Type::I32, a) : b_.zext(Type::I32, a);
        ValueId b32 = sgn ? b_.sext(Type::I32, bb) : b_.zext(Type::I32, bb);
        ValueId y = sub ? b_.isub(a32, b32) : b_.iadd(a32, b32);
        if (sat) {
          const ir::Sign sg = ir::Sign::Signed;  // the exact sums fit in i32
          y = sgn ? b_.imin(sg, b_.imax(sg, y, c32(uint32_t(-32768))), c32(32767))
                  : b_.imin(sg, b_.imax(sg, y, c32(0)), c32(65535));
        }
        hs[h] = b_.trunc(Type::I16, y);
      }
      out = pack16(hs[0], hs[1]);
      return true;
    }
    case tAtomC: case tAtomCx:  // performed together in clause()
      out = c32(0);
      return true;
    case tFrexpm: case tFrexpe: {
      const bool sq = on(in, "sqrt"), lg = on(in, "log");
      if (sq && lg) return fail(x, in, ".sqrt.log is unsupported");
      const bool mneg = lg && neg0;
      ValueId v = flush(widen(S(0), wid[0]), x.ftz), m, e;
      frexp64(v, sq, m, e);
      if (lg) {
        // |m| in [0.75, 1.5) (interp.cpp frexp_mode)
        ValueId low = b_.fcmp(FloatPred::Olt, b_.fabs(m), b_.fconst(Type::F64, 0.75));
        m = sel(low, b_.fmul(m, b_.fconst(Type::F64, 2.0)), m);
        e = sel(low, b_.isub(e, c32(1)), e);
      }
      ValueId special = b_.or_(is_inf32(v), is_zero32(v));
      if (op == tFrexpm) {
        ValueId mb = absneg(asi(b_.ftof(Type::F32, m)), abs0, mneg);
        out = sel(is_nan32(v), c32(0x7fc00000u), sel(special, absneg(v, abs0, mneg), mb));
      } else {
        if (sq) e = b_.ashr(e, c32(1));  // even
        if (neg0) e = b_.ineg(e);
        out = sel(b_.or_(is_nan32(v), special), c32(0), e);
      }
      return true;
    }
    case tFrcpApprox: case tFrsqApprox: {
      if (on(in, "divzero")) return fail(x, in, ".divzero is unsupported");
      ValueId v = absneg(flush(widen(S(0), wid[0]), x.ftz), abs0, neg0), m, e;
      const bool rsq = op == tFrsqApprox;
      ValueId mag = b_.and_(v, c32(0x7fffffffu)), sign = b_.and_(v, c32(0x80000000u));
      frexp64(mag, rsq, m, e);
      ValueId mbits = b_.float_bits(m);
      ValueId r;
      if (!rsq) {
        ValueId idx = b_.trunc(Type::I32, b_.and_(b_.lshr(mbits, c32(40)), b_.i64(0xfff)));
        ValueId mid = b_.fmul(b_.fadd(b_.itof(Type::F64, ir::Sign::Unsigned, idx), b_.fconst(Type::F64, 4096.5)),
                              b_.fconst(Type::F64, 1.0 / 8192.0));
        r = b_.or_(sign, asi(b_.ftof(Type::F32, b_.transc(ir::Opcode::FRcp, ir::Transc::Ieee, mid))));
        out = sel(is_nan32(v), c32(0x7fc00000u),
                  sel(is_zero32(v), b_.or_(sign, c32(0x7f800000u)), sel(is_inf32(v), sign, r)));
      } else {
        // m in [0.25, 0.5) (odd exponent) or [0.5, 1): 11 fraction bits of that binade.
        ValueId low = b_.fcmp(FloatPred::Olt, m, b_.fconst(Type::F64, 0.5));
        ValueId idx = b_.trunc(Type::I32, b_.and_(b_.lshr(mbits, c32(41)), b_.i64(0x7ff)));
        ValueId base = sel(low, b_.fconst(Type::F64, 0.25), b_.fconst(Type::F64, 0.5));
        ValueId frac = b_.fmul(b_.fadd(b_.itof(Type::F64, ir::Sign::Unsigned, idx), b_.fconst(Type::F64, 0.5)),
                               b_.fconst(Type::F64, 1.0 / 2048.0));
        ValueId mid = b_.fmul(base, b_.fadd(b_.fconst(Type::F64, 1.0), frac));
        r = asi(b_.ftof(Type::F32, b_.transc(ir::Opcode::FRsqrt, ir::Transc::Ieee, mid)));
        ValueId bad = b_.or_(is_nan32(v), b_.and_(b_.icmp(IntPred::Ne, sign, c32(0)), b_.xor_(is_zero32(v), b_.i1(true))));
        out = sel(bad, c32(0x7fc00000u), sel(is_zero32(v), c32(0x7f800000u), sel(is_inf32(v), c32(0), r)));
      }
      return true;
    }
    case tFrcp: case tFrsq: {
      ValueId v = absneg(flush(S(0), x.ftz), abs0, neg0);
      out = flush(asi(b_.transc(op == tFrcp ? ir::Opcode::FRcp : ir::Opcode::FRsqrt, ir::Transc::Ieee, asf(v))), x.ftz);
      return true;
    }
    case tLdexp: {
      if (rnd == "inf" || rnd == "inf0") {
        ValueId s[4] = {S(0), S(1), ir::kNoValue, ir::kNoValue};
        IrEmit em{b_};
        out = ext::eval(em, ext::kLdexpInf, in, s, x.ftz);
        return true;
      }
      ValueId v = flush(S(0), x.ftz);
      ValueId d = b_.fmul(b_.ftof(Type::F64, asf(v)), pow2(clamp_k(S(1))));
      if (rnd == "rtna") {  // ties away: ops_ext_defs.h d2f_rtna, as the interpreter
        IrEmit em{b_};
        out = flush(ext::d2f_rtna(em, d, false), x.ftz);
        return true;
      }
      out = flush(asi(b_.ftof(Type::F32, d, round_flags(rnd))), x.ftz);
      return true;
    }
    case tFround: {
      if (rnd == "rtna") {  // half away from zero (std::round in the interpreter), exact in f64
        IrEmit em{b_};
        ValueId v = absneg(flush(widen(S(0), wid[0]), x.ftz), abs0, neg0);
        out = em.d2f32(ext::round_away(em, em.f32d(v)), ir::Round::NearestEven);
        return true;
      }
      ValueId v = asf(absneg(flush(widen(S(0), wid[0]), x.ftz), abs0, neg0));
      const ir::Opcode o = rnd == "rtp" ? ir::Opcode::FCeil : rnd == "rtn" ? ir::Opcode::FFloor
                           : rnd == "rtz" ? ir::Opcode::FTrunc : ir::Opcode::FRint;
      out = asi(b_.fround(o, v));
      return true;
    }
    case tFexpTable: {
      if (on(in, "adj")) return fail(x, in, "." + in.mod("adj") + " is unsupported");
      ValueId i = b_.and_(S(0), c32(15)), r = c32(fexp_table(15));
      for (int k = 14; k >= 0; --k) r = sel(b_.icmp(IntPred::Eq, i, c32(uint32_t(k))), c32(fexp_table(unsigned(k))), r);
      out = r;
      return true;
    }
    case tFmaRscale: {
      const std::string& sp = in.mod("special");
      const bool rcp_mode = sp == "n";
      ValueId va = absneg(flush(S(0), x.ftz), abs0, neg0), vb = absneg(flush(S(1), x.ftz), false, neg1);
      ValueId vc = absneg(flush(S(2), x.ftz), false, neg2);
      ValueId a = b_.ftof(Type::F64, asf(va)), bb = b_.ftof(Type::F64, asf(vb)), cc = b_.ftof(Type::F64, asf(vc));
      ValueId sum = b_.ffma(a, bb, cc);
      if (rcp_mode) {
        ValueId zm = b_.or_(is_zero32(va), is_zero32(vb));  // interp.cpp: any zero factor (Valhall's FMA_RSCALE_N)
        ValueId neg = b_.icmp(IntPred::Ne, b_.and_(b_.xor_(va, vb), c32(0x80000000u)), c32(0));
        ValueId p0 = sel(neg, b_.f64_bits(0x8000000000000000ull), b_.f64_bits(0));
        sum = sel(zm, b_.fadd(p0, cc), sum);
      }
      // .scale16 (interp.cpp): the scale is src3's low 16 bits as s16
      ValueId k = sp == "scale16" ? b_.ashr(b_.shl(S(3), c32(16)), c32(16)) : S(3);
      ValueId scaled = b_.fmul(sum, pow2(clamp_k(k)));
      ValueId r = asi(b_.ftof(Type::F32, scaled, round_flags(rnd)));
      if (sp == "left") r = sel(b_.or_(is_zero32(va), is_inf32(va)), va, r);  // interp.cpp: sqrt_mode
      out = flush(clamp(r, clampm), x.ftz);
      return true;
    }
    case tBarrier:
      x.barrier = true;
      out = c32(0);
      return true;
    case tWmask: {
      // interp.cpp kWmask: a ballot clustered at the subgroup size, `fill` for the lanes not active here
      const std::string& sg = in.mod("subgroup");
      if (sg.rfind("subgroup", 0) != 0) return fail(x, in, "with a reserved subgroup is invalid");
      const unsigned size = std::min(W_, unsigned(std::stoul(sg.substr(8))));
      ValueId pred = b_.icmp(IntPred::Ne, S(0), c32(0));
      ValueId r = b_.emit(ir::Opcode::Ballot, Type::I32, {pred, x.active}, 0, 0, ir::cluster_imm(size));
      if (in.imm[0] & 1) {
        ValueId act = b_.emit(ir::Opcode::Ballot, Type::I32, {b_.i1(true), x.active}, 0, 0, ir::cluster_imm(size));
        r = b_.or_(r, b_.and_(b_.not_(act), c32((1u << size) - 1)));
      }
      out = r;
      return true;
    }
    case tClper: {
      const std::string& sg = in.mod("subgroup");
      const unsigned size = sg.empty() ? W_ : std::min(W_, unsigned(std::stoul(sg.substr(8))));
      const std::string& lop = in.mod("lane_op");
      static const std::pair<const char*, uint32_t> inactive[] = {
          {"zero", 0}, {"umax", 0xffffffffu}, {"i1", 1}, {"v2i1", 0x00010001u}, {"smin", 0x80000000u},
          {"smax", 0x7fffffffu}, {"v2smin", 0x80008000u}, {"v2smax", 0x7fff7fffu}, {"v4smin", 0x80808080u},
          {"v4smax", 0x7f7f7f7fu}, {"f1", 0x3f800000u}, {"v2f1", 0x3c003c00u}, {"infn", 0xff800000u},
          {"inf", 0x7f800000u}, {"v2infn", 0xfc00fc00u}, {"v2inf", 0x7c007c00u}};
      uint32_t fill = 0;
      for (const auto& [n, v] : inactive)
        if (in.mod("inactive_result") == n) fill = v;
      ValueId own = b_.and_(b_.lane_id(), c32(size - 1)), idx = S(1), m = c32(size - 1);
      ValueId from, out_of_range = b_.i1(false);
      if (lop == "xor") from = b_.and_(b_.xor_(own, idx), m);
      else if (lop == "accumulate") from = b_.and_(b_.iadd(own, idx), m);
      else if (lop == "shift") {
        out_of_range = b_.icmp(IntPred::Uge, idx, b_.isub(c32(size), own));
        from = b_.and_(b_.iadd(own, idx), m);
      } else from = b_.and_(idx, m);
      ValueId v = b_.emit(ir::Opcode::Shuffle, Type::I32, {S(0), from}, 0, 0, ir::cluster_imm(size));
      ValueId act = b_.emit(ir::Opcode::Shuffle, Type::I32, {b_.zext(Type::I32, x.active), from}, 0, 0,
                            ir::cluster_imm(size));
      out = sel(b_.or_(out_of_range, eq0(act)), c32(fill), v);
      return true;
    }
    default:
      return fail(x, in, "is not translated to IR yet (it runs on the interpreter)");
  }
}

bool Translator::wide_clause(const DecodedClause& c, ValueId active, std::string& err) {
  const unsigned n = c.raw.ntuples;
  for (unsigned ti = 0; ti < n; ++ti)
    for (int u = 0; u < 2; ++u) {
      const DecodedIns& in = u == 0 ? c.t[ti].fma : c.t[ti].add;
      if (!in.enc) continue;
      const std::string why = wide_clause_reason(*in.enc);
      if (!why.empty()) {
        char b[64];
        std::snprintf(b, sizeof b, "clause 0x%zx tuple %u %s: ", c.raw.offset, ti, u == 0 ? "FMA" : "ADD");
        err = b + in.enc->name + " cannot be in a 64-bit clause: " + why;
        return false;
      }
    }
  using P2 = RegMode64::Port2;
  using P3 = RegMode64::Port3;
  Ctx x[2] = {{b_, c, 0, W_, active, {}, ir::kNoValue, ir::kNoValue, b_.i32(0), b_.i32(0), ir::kNoValue},
              {b_, c, 0, W_, active, {}, ir::kNoValue, ir::kNoValue, b_.i32(0), b_.i32(0), ir::kNoValue}};
  ValueId fr[2] = {x[0].t0, x[1].t0}, ar[2] = {x[0].t1, x[1].t1};
  auto write_pairs = [&](const RegMode64& m) {
    auto wr = [&](unsigned reg, const ValueId* v) {
      for (unsigned h = 0; h < 2; ++h) b_.set_var_where(active, kVarReg0 + reg + h, v[h]);
    };
    if (m.port2 == P2::WriteFma) wr(m.reg2, fr);
    if (m.port2 == P2::WriteAdd) wr(m.reg2, ar);
    if (m.port3 == P3::WriteFma) wr(m.reg3, fr);
    if (m.port3 == P3::WriteAdd) wr(m.reg3, ar);
  };
  for (unsigned ti = 0; ti < n; ++ti) {
    const DecodedTuple& t = c.t[ti];
    const RegMode64& m = t.rm64;
    for (unsigned h = 0; h < 2; ++h) {
      x[h].ti = ti;
      x[h].ftz = c.raw.header.ftz() != 0;
      x[h].port[0] = m.read0 ? b_.get_var(kVarReg0 + m.reg0 + h) : b_.i32(0);
      x[h].port[1] = m.read1 ? b_.get_var(kVarReg0 + m.reg1 + h) : b_.i32(0);
      x[h].port[2] = m.port2 == P2::Read ? b_.get_var(kVarReg0 + m.reg2 + h) : b_.i32(0);
    }
    if (ti > 0) write_pairs(m);
    bool needs_fau = false;
    for (const DecodedIns* in : {&t.fma, &t.add})
      for (unsigned s = 0; s < in->nsrc; ++s) needs_fau |= in->src[s] == 4 || in->src[s] == 5;
    x[0].fma_unit = true;
    if (needs_fau) {
      if (!fau(x[0], t.rb.fau, t.fma.enc ? t.fma : t.add)) {
        err = err_;
        return false;
      }
      // Sources 4 and 5 both read the FAU value's word h in half h.
      x[1].fau_lo = x[1].fau_hi = x[0].fau_hi;
      x[0].fau_hi = x[0].fau_lo;
    }
    ValueId nf[2], na[2];
    for (unsigned h = 0; h < 2; ++h) {
      x[h].fma_unit = true;
      if (!ins(x[h], t.fma, nf[h])) {
        err = err_;
        return false;
      }
      x[h].fma_unit = false;
      x[h].t = nf[h];
      x[h].pair_fma = &t.fma;
      if (!ins(x[h], t.add, na[h])) {
        err = err_;
        return false;
      }
    }
    for (unsigned h = 0; h < 2; ++h) {
      fr[h] = x[h].t0 = nf[h];
      ar[h] = x[h].t1 = na[h];
    }
  }
  write_pairs(c.t[0].rm64);
  b_.set_var_where(active, kVarPc, b_.i32(uint32_t(c.raw.offset + c.size)));
  if (c.raw.header.flow() == 0) b_.set_var_where(active, kVarEnded, b_.i32(1));
  return true;
}

bool Translator::clause(const DecodedClause& c, ValueId active, std::string& err) {
  if (c.wide) return wide_clause(c, active, err);
  Ctx x{b_, c, 0, W_, active, {}, ir::kNoValue, ir::kNoValue, b_.i32(0), b_.i32(0), ir::kNoValue};
  x.ftz = c.raw.header.ftz() != 0;
  ValueId fr = x.t0, ar = x.t1;
  auto write = [&](SlotOp op, unsigned reg, ValueId v) {
    if (op == SlotOp::Idle || op == SlotOp::Read) return;
    ValueId nv = v;
    if (op != SlotOp::Write)
      nv = b_.insert16(b_.get_var(kVarReg0 + reg), b_.trunc(Type::I16, v), op == SlotOp::WriteLo ? 0 : 1);
    b_.set_var_where(active, kVarReg0 + reg, nv);
  };
  for (unsigned ti = 0; ti < c.raw.ntuples; ++ti) {
    const DecodedTuple& t = c.t[ti];
    x.ti = ti;
    x.port[0] = t.rm.read0 ? b_.get_var(kVarReg0 + t.rm.reg0) : b_.i32(0);
    x.port[1] = t.rm.read1 ? b_.get_var(kVarReg0 + t.rm.reg1) : b_.i32(0);
    x.port[2] = t.rm.slot2 == SlotOp::Read ? b_.get_var(kVarReg0 + t.rb.reg2) : b_.i32(0);
    if (ti > 0) {
      write(t.rm.slot2, t.rb.reg2, fr);
      write(t.rm.slot3, t.rb.reg3, t.rm.slot3_fma ? fr : ar);
    }
    bool needs_fau = false;
    for (const DecodedIns* in : {&t.fma, &t.add})
      for (unsigned s = 0; s < in->nsrc; ++s) needs_fau |= in->src[s] == 4 || in->src[s] == 5;
    x.fma_unit = true;
    if (needs_fau && !fau(x, t.rb.fau, t.fma.enc ? t.fma : t.add)) {
      err = err_;
      return false;
    }
    ValueId nf, na;
    if (!ins(x, t.fma, nf)) {
      err = err_;
      return false;
    }
    const bool atom_c = t.fma.enc && top(t.fma.enc->name) == tAtomC;
    const bool atom_cx = t.add.enc && top(t.add.enc->name) == tAtomCx;
    if (atom_c != atom_cx || (atom_c && ti + 1 != c.raw.ntuples)) {
      char b[96];
      std::snprintf(b, sizeof b, "clause 0x%zx tuple %u: *ATOM_C and +ATOM_CX must pair in the last tuple", c.raw.offset, ti);
      err = b;
      return false;
    }
    if (atom_c) {
      // Address = the FMA's sources 0 (low) and 1 (high), operand = the
      // staging register, the old value back to it for _RETURN (interp.cpp).
      AtomPlan plan;
      if (!atom_plan(t.fma, plan)) {
        err = "clause " + std::to_string(c.raw.offset) + ": " + t.fma.enc->name + " ." + t.fma.mod("atom_opc") +
              " is unsupported";
        return false;
      }
      const unsigned sr = c.raw.header.staging_register();
      if (sr + plan.bytes / 4 > kRegs) {
        err = "clause " + std::to_string(c.raw.offset) + ": staging registers past r63";
        return false;
      }
      ValueId addr = b_.or_(b_.zext(Type::I64, src(x, t.fma.src[0])),
                            b_.shl(b_.zext(Type::I64, src(x, t.fma.src[1])), b_.i32(32)));
      ValueId operand;
      if (plan.operand_regs == 0) operand = plan.bytes == 8 ? b_.i64(plan.constant) : b_.i32(uint32_t(plan.constant));
      else if (plan.operand_regs == 2)
        operand = b_.or_(b_.zext(Type::I64, b_.get_var(kVarReg0 + sr)),
                         b_.shl(b_.zext(Type::I64, b_.get_var(kVarReg0 + sr + 1)), b_.i32(32)));
      else if (plan.bytes == 8)
        operand = plan.sext ? b_.sext(Type::I64, b_.get_var(kVarReg0 + sr)) : b_.zext(Type::I64, b_.get_var(kVarReg0 + sr));
      else operand = b_.get_var(kVarReg0 + sr);
      // interp.cpp: an address in the wls window (SEG_ADD.wls) is a shared-memory offset
      ValueId in_wls = b_.icmp(IntPred::Eq, src(x, t.fma.src[1]), c32(kWlsWindowHi));
      ValueId g = b_.atomic(plan.op, ir::Space::Global, addr, operand, b_.and_(active, b_.xor_(in_wls, b_.i1(true))));
      ValueId sh = b_.atomic(plan.op, ir::Space::Shared, b_.zext(Type::I64, src(x, t.fma.src[0])), operand,
                             b_.and_(active, in_wls));
      ValueId old = sel(in_wls, sh, g);
      if (plan.ret) {
        if (plan.bytes == 8) {
          x.staged.push_back({sr, b_.trunc(Type::I32, old)});
          x.staged.push_back({sr + 1, b_.trunc(Type::I32, b_.lshr(old, b_.i32(32)))});
        } else {
          x.staged.push_back({sr, old});
        }
      }
    }
    x.fma_unit = false;
    x.t = nf;
    x.pair_fma = &t.fma;
    if (!ins(x, t.add, na)) {
      err = err_;
      return false;
    }
    fr = nf;
    ar = na;
    x.t0 = nf;
    x.t1 = na;
  }
  write(c.t[0].rm.slot2, c.t[0].rb.reg2, fr);
  write(c.t[0].rm.slot3, c.t[0].rb.reg3, c.t[0].rm.slot3_fma ? fr : ar);
  for (const auto& [reg, v] : x.staged) b_.set_var_where(active, kVarReg0 + reg, v);
  for (const auto& [reg, v, keep] : x.merged)
    b_.set_var_where(active, kVarReg0 + reg, b_.or_(b_.and_(b_.get_var(kVarReg0 + reg), c32(keep)), v));
  ValueId next = b_.i32(uint32_t(c.raw.offset + c.size));
  ValueId taken = x.taken == ir::kNoValue ? b_.i1(false) : x.taken;
  ValueId newpc = x.taken == ir::kNoValue ? next : sel(taken, x.target, next);
  b_.set_var_where(active, kVarPc, newpc);
  ValueId ends = b_.and_(active, b_.xor_(taken, b_.i1(true)));
  if (c.raw.header.flow() == 0) b_.set_var_where(ends, kVarEnded, b_.i32(1));
  if (x.barrier) {
    // Threads that did not end wait until the whole workgroup arrived (dispatch).
    ValueId wait = c.raw.header.flow() == 0 ? b_.and_(active, taken) : active;
    b_.set_var_where(wait, kVarWaiting, b_.i32(1));
  }
  return true;
}

}  // namespace

bool translate(const uint8_t* code, size_t size, unsigned W, ir::Function& f, std::string& err) {
  if (W != 4 && W != 8) {
    err = "bifrost: the guest warp width must be 4 or 8";
    return false;
  }
  Program prog;
  std::vector<uint8_t> bytes(code, code + size);
  if (!prog.load(bytes, err)) {
    err = "bifrost: " + err;
    return false;
  }
  f = ir::Function();
  f.name = "bifrost";
  for (unsigned r = 0; r < kRegs; ++r) f.add_var("r" + std::to_string(r), Type::I32);
  f.add_var("pc", Type::I32);
  f.add_var("ended", Type::I32);
  f.add_var("guest_warp", Type::I32);
  f.add_var("waiting", Type::I32);
  f.uniform_bytes = kUniformBlockBytes;
  Builder b(f);
  const ir::BlockId entry = f.add_block("entry"), dispatch = f.add_block("dispatch"), body = f.add_block("body"),
                    exit = f.add_block("exit"), bad = f.add_block("bad_pc"), idle = f.add_block("idle"),
                    wait = f.add_block("barrier"), resume = f.add_block("resume");
  b.set_block(entry);
  b.br(dispatch);
  b.set_block(dispatch);
  ValueId alive = b.and_(b.entry_mask(), b.icmp(IntPred::Eq, b.get_var(kVarEnded), b.i32(0)));
  ValueId live = b.and_(alive, b.icmp(IntPred::Eq, b.get_var(kVarWaiting), b.i32(0)));
  b.cond_br(b.any(b.i1(true), live), body, idle);
  // No thread can run: all ended, or the rest wait at a barrier.
  b.set_block(idle);
  b.cond_br(b.any(b.i1(true), alive), wait, exit);
  b.set_block(wait);
  b.barrier(resume);
  b.set_block(resume);
  b.set_var(kVarWaiting, b.i32(0));
  b.br(dispatch);
  b.set_block(exit);
  b.ret();
  b.set_block(body);
  b.budget(1);
  ValueId pc = b.get_var(kVarPc);
  ValueId gmin = b.emit(ir::Opcode::Reduce, Type::I32, {pc, live}, uint8_t(ir::ReduceOp::UMin), 0, ir::cluster_imm(W));
  ValueId xmin = b.reduce(ir::ReduceOp::UMin, gmin, live);
  ValueId active = b.and_(live, b.icmp(IntPred::Eq, pc, xmin));
  const size_t nq = (size + 15) / 16;
  ValueId q = b.lshr(xmin, b.i32(4));
  ValueId sel = b.select(b.icmp(IntPred::Ne, b.and_(xmin, b.i32(15)), b.i32(0)), b.i32(uint32_t(nq)), q);
  std::vector<ir::BlockId> targets(nq + 1, bad);
  Translator tr(b, prog, W);
  for (const DecodedClause& c : prog.clauses()) {
    const ir::BlockId blk = f.add_block("clause_" + std::to_string(c.raw.offset / 16));
    targets[c.raw.offset / 16] = blk;
    b.set_block(blk);
    if (!tr.clause(c, active, err)) {
      err = "bifrost: " + err;
      return false;
    }
    b.br(dispatch);
  }
  b.set_block(body);
  b.switch_(sel, targets);
  b.set_block(bad);
  b.trap(active, kTrapBadPc);
  b.ret();
  return true;
}

}  // namespace gpurc::bifrost
