#include "frontend/g13/interp.h"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "frontend/g13/formats.h"
#include "frontend/g13/fp.h"
#include "frontend/g13/names.h"

namespace gpurc::g13 {

void SimdGroup::recompute_exec() {
  uint32_t m = 0;
  for (unsigned l = 0; l < kLanes; ++l)
    if (regs[0][l] == 0) m |= 1u << l;
  exec = m & launched;
}

namespace {

constexpr unsigned kLanes = SimdGroup::kLanes;

std::string hex(uint64_t v) {
  char b[32];
  std::snprintf(b, sizeof b, "0x%llx", (unsigned long long)v);
  return b;
}

uint64_t mask_bits(unsigned bits) { return bits >= 64 ? ~0ull : ((1ull << bits) - 1); }
int64_t sext(uint64_t v, unsigned bits) {
  if (bits >= 64) return int64_t(v);
  const uint64_t s = 1ull << (bits - 1);
  v &= mask_bits(bits);
  return int64_t((v ^ s) - s);
}
uint64_t shl(uint64_t v, unsigned s) { return s >= 64 ? 0 : v << s; }
uint64_t shr(uint64_t v, unsigned s) { return s >= 64 ? 0 : v >> s; }

// Everything about one instruction execution that the op implementations need.
struct Ctx {
  SimdGroup& sg;
  const Insn& in;
  ir::GuestMemory* mem;
  StepResult res;
  uint64_t next_pc;

  Operand op(const char* name) const {
    for (const OperandDef& od : in.desc->operands)
      if (od.name == name) return decode_operand(in, od, sg.pc);
    return Operand{};
  }
  bool error(const std::string& what) {
    res.kind = StepResult::Kind::Error;
    res.message = "g13 interpreter: " + in.desc->name + " at pc " + hex(sg.pc) + ": " + what;
    return false;
  }
  bool fault(ir::FaultKind k, const std::string& what, uint64_t addr = 0, uint32_t lane = 0) {
    res.kind = StepResult::Kind::Fault;
    res.fault = k;
    res.fault_addr = addr;
    res.fault_lane = lane;
    res.message = "g13: " + in.desc->name + " at pc " + hex(sg.pc) + ": " + what;
    return false;
  }

  // Raw bits of a source operand for `lane` (immediates zero-extended).
  bool read(const Operand& o, unsigned lane, uint64_t& v) {
    switch (o.type) {
      case OpType::Imm: v = uint64_t(o.n) & 0xFFFF; return true;
      case OpType::Float: v = uint64_t(o.n); return true;
      case OpType::Reg16: if (o.n > 255) break; v = sg.regs[size_t(o.n)][lane]; return true;
      case OpType::Reg32: if (o.n > 127) break; v = sg.r32(unsigned(o.n), lane); return true;
      case OpType::Reg64:
        if (o.n > 126) break;
        v = sg.r32(unsigned(o.n), lane) | (uint64_t(sg.r32(unsigned(o.n) + 1, lane)) << 32);
        return true;
      case OpType::UReg16: if (o.n > 511) break; v = sg.uniforms[size_t(o.n)]; return true;
      case OpType::UReg32: if (o.n > 255) break; v = sg.u32(unsigned(o.n)); return true;
      case OpType::UReg64:
        if (o.n > 254) break;
        v = sg.u32(unsigned(o.n)) | (uint64_t(sg.u32(unsigned(o.n) + 1)) << 32);
        return true;
      default:
        return error("undefined source operand '" + operand_text(o) + "'");
    }
    return error("register out of range: " + operand_text(o));
  }
  // Integer source value: zero-extended, or sign-extended from its own size with .sx.
  bool read_int(const Operand& o, unsigned lane, int64_t& v) {
    uint64_t raw;
    if (!read(o, lane, raw)) return false;
    const unsigned bits = o.type == OpType::Imm ? 16 : o.bits();
    v = o.sx ? sext(raw, bits) : int64_t(raw & mask_bits(bits));
    return true;
  }
  // Float source value (§4.2): f16 exact, f32 with input flush, minifloat immediates, abs then neg.
  bool read_float(const Operand& o, unsigned lane, double& v) {
    if (o.type == OpType::Float) {
      v = o.fv;
    } else {
      uint64_t raw;
      if (!read(o, lane, raw)) return false;
      if (o.bits() == 16) v = fp::f16_to_f64(uint16_t(raw));
      else if (o.bits() == 32) v = fp::f32_to_f64_ftz(uint32_t(raw));
      else return error("64-bit float operand");
    }
    if (o.abs) v = std::fabs(v);
    if (o.neg) v = -v;
    return true;
  }
  bool write(const Operand& d, unsigned lane, uint64_t v) {
    switch (d.type) {
      case OpType::Reg16: if (d.n > 255) break; sg.regs[size_t(d.n)][lane] = uint16_t(v); return true;
      case OpType::Reg32: if (d.n > 127) break; sg.set_r32(unsigned(d.n), lane, uint32_t(v)); return true;
      case OpType::Reg64:
        if (d.n > 126) break;
        sg.set_r32(unsigned(d.n), lane, uint32_t(v));
        sg.set_r32(unsigned(d.n) + 1, lane, uint32_t(v >> 32));
        return true;
      default:
        return error("undefined destination '" + operand_text(d) + "'");
    }
    return error("register out of range: " + operand_text(d));
  }
  bool active(unsigned lane) const { return (sg.exec >> lane) & 1; }
};

// ---- integer ---------------------------------------------------------------

bool saturating_add(Ctx& c, bool is_mul) {
  const Operand D = c.op("D"), A = c.op("A"), B = c.op("B");
  const Operand C = is_mul ? c.op("C") : Operand{};
  const unsigned shift = unsigned(c.in.f("s"));
  const bool neg = c.in.f("N"), sat_bit = c.in.f("S");
  const unsigned dbits = D.bits();
  const Operand& addend = is_mul ? C : B;
  const bool small = is_mul ? (C.bits() <= 32 && dbits <= 32) : (A.bits() <= 32 && B.bits() <= 32 && dbits <= 32);
  const bool saturate = sat_bit && shift == 0 && small;
  const bool is_signed = A.sx || B.sx || (is_mul && C.sx);
  for (unsigned l = 0; l < kLanes; ++l) {
    if (!c.active(l)) continue;
    int64_t a, b, x;
    if (!c.read_int(A, l, a) || !c.read_int(B, l, b) || !c.read_int(addend, l, x)) return false;
    __int128 add = is_mul ? __int128(x) : __int128(b);
    if (neg) add = -add;
    add = shift < 5 ? add * (__int128(1) << shift) : 0;
    __int128 r = (is_mul ? __int128(a) * __int128(b) : __int128(a)) + add;
    if (saturate) {
      const __int128 lo = is_signed ? -(__int128(1) << (dbits - 1)) : 0;
      const __int128 hi = is_signed ? (__int128(1) << (dbits - 1)) - 1 : (__int128(1) << dbits) - 1;
      if (r < lo) r = lo;
      if (r > hi) r = hi;
    }
    if (!c.write(D, l, uint64_t(r))) return false;
  }
  return true;
}

enum class BitOp { Bfi, Bfeil, Extr, Shlhi, Shrhi, Asr, Asrh };

bool bitfield(Ctx& c, BitOp kind) {
  const Operand D = c.op("D"), A = c.op("A"), B = c.op("B");
  const bool has_c = kind != BitOp::Asr && kind != BitOp::Asrh;
  const Operand C = has_c ? c.op("C") : Operand{};
  const unsigned m = unsigned(c.in.f("m"));
  const uint64_t mask = m ? (1ull << m) - 1 : 0xFFFFFFFFull;
  for (unsigned l = 0; l < kLanes; ++l) {
    if (!c.active(l)) continue;
    uint64_t a, b, cc = 0;
    if (!c.read(A, l, a) || !c.read(B, l, b) || (has_c && !c.read(C, l, cc))) return false;
    a &= mask_bits(A.type == OpType::Imm ? 16 : A.bits());
    b &= mask_bits(B.type == OpType::Imm ? 16 : B.bits());
    const unsigned sh = unsigned((has_c ? cc : b) & 0x7F);
    uint64_t r = 0;
    switch (kind) {
      case BitOp::Bfi: r = (a & ~shl(mask, sh)) | shl(b & mask, sh); break;
      case BitOp::Bfeil: r = (a & ~mask) | (shr(b, sh) & mask); break;
      case BitOp::Extr: {
        const unsigned __int128 pair = (unsigned __int128)(b) << 32 | a;
        r = uint64_t(sh >= 128 ? 0 : pair >> sh) & mask;
        break;
      }
      case BitOp::Shlhi: {
        const uint64_t smask = shl(mask, sh > 32 ? sh - 32 : 0);
        const unsigned __int128 v = ((unsigned __int128)b << sh) >> 32;
        r = (uint64_t(v) & smask) | (a & ~smask);
        break;
      }
      case BitOp::Shrhi: {
        const uint64_t smask = shr(mask << 32, sh < 32 ? sh : 32);
        const uint64_t v = shr(b << 32, sh);
        r = (v & smask) | (a & ~smask);
        break;
      }
      case BitOp::Asr: {
        const int64_t sa = sext(a, A.type == OpType::Imm ? 16 : A.bits());
        const unsigned s = unsigned(b & 0x7F);
        r = uint64_t(sa >> (s > 63 ? 63 : s));
        break;
      }
      case BitOp::Asrh: {
        const __int128 sa = __int128(sext(a, A.type == OpType::Imm ? 16 : A.bits())) * (__int128(1) << 32);
        const unsigned s = unsigned(b & 0x7F);
        r = uint64_t(sa >> (s > 127 ? 127 : s));
        break;
      }
    }
    if (!c.write(D, l, r)) return false;
  }
  return true;
}

bool bitop(Ctx& c) {
  const Operand D = c.op("D"), A = c.op("A"), B = c.op("B");
  const unsigned tt = unsigned(c.in.f("tt0") | (c.in.f("tt1") << 1) | (c.in.f("tt2") << 2) | (c.in.f("tt3") << 3));
  for (unsigned l = 0; l < kLanes; ++l) {
    if (!c.active(l)) continue;
    uint64_t a, b;
    if (!c.read(A, l, a) || !c.read(B, l, b)) return false;
    uint64_t r = 0;
    // Tables 0011 (tt2, tt3) and 1100 (tt0, tt1) would depend on B only; they
    // follow Mesa's AGX2.xml reading: 0011 = not A, 1100 = A (docs/g13.md).
    if (tt == 0xC) r = ~a;
    else if (tt == 0x3) r = a;
    else {
      if (tt & 1) r |= ~a & ~b;
      if (tt & 2) r |= a & ~b;
      if (tt & 4) r |= ~a & b;
      if (tt & 8) r |= a & b;
    }
    if (!c.write(D, l, r)) return false;
  }
  return true;
}

enum class Unary { Bitrev, Popcount, Ffs };
bool int_unary(Ctx& c, Unary k) {
  const Operand D = c.op("D"), A = c.op("A");
  for (unsigned l = 0; l < kLanes; ++l) {
    if (!c.active(l)) continue;
    uint64_t a;
    if (!c.read(A, l, a)) return false;
    const uint32_t x = uint32_t(a);
    uint64_t r = 0;
    if (k == Unary::Bitrev) {
      for (int i = 0; i < 32; ++i)
        if (x & (1u << i)) r |= 1ull << (31 - i);
    } else if (k == Unary::Popcount) {
      r = uint64_t(__builtin_popcount(x));
    } else {
      r = x ? uint64_t(31 - __builtin_clz(x)) : ~0ull;  // most significant set bit, -1 if none
    }
    if (!c.write(D, l, r)) return false;
  }
  return true;
}

bool intl(Ctx& c) {
  const Operand D = c.op("D"), A = c.op("A"), B = c.op("B");
  for (unsigned l = 0; l < kLanes; ++l) {
    if (!c.active(l)) continue;
    uint64_t a, b;
    if (!c.read(A, l, a) || !c.read(B, l, b)) return false;
    uint64_t r = 0;
    for (int i = 0; i < 16; ++i) r |= (((a >> i) & 1) << (2 * i)) | (((b >> i) & 1) << (2 * i + 1));
    if (!c.write(D, l, r)) return false;
  }
  return true;
}

// convert (§5.2): modes 0-11; the float side takes the register's size.
bool convert(Ctx& c) {
  const Operand D = c.op("D"), S = c.op("src");
  const unsigned mode = unsigned(c.in.f("mode")), round = unsigned(c.in.f("round"));
  if (round > 1) return c.error(convert_round_unmodelled(round));
  const bool to_float = mode == 0 || mode == 1 || mode == 6 || mode == 7 || mode == 10 || mode == 11;
  const bool to_int = mode == 4 || mode == 5 || mode == 8 || mode == 9;
  if (!to_float && !to_int) return c.error("unknown convert mode " + std::to_string(mode));
  for (unsigned l = 0; l < kLanes; ++l) {
    if (!c.active(l)) continue;
    uint64_t raw;
    if (!c.read(S, l, raw)) return false;
    uint64_t out;
    if (to_float) {
      double v;
      switch (mode) {
        case 0: v = double(raw & 0xFF); break;
        case 1: v = double(sext(raw, 8)); break;
        case 6: v = double(raw & 0xFFFF); break;
        case 7: v = double(sext(raw, 16)); break;
        case 10: v = double(raw & 0xFFFFFFFFull); break;
        default: v = double(sext(raw, 32)); break;
      }
      // Integers up to 32 bits are exact in double; round once to the destination.
      if (D.bits() == 32) {
        if (round == 0) {
          const float t = float(v);
          double tv = double(t);
          if (std::fabs(tv) > std::fabs(v)) tv = double(std::nextafter(t, 0.0f));
          out = fp::f64_to_f32_ftz(tv);
        } else {
          out = fp::f64_to_f32_ftz(v);
        }
      } else {
        if (round == 0) {
          uint16_t h = fp::f64_to_f16(v);
          if (std::fabs(fp::f16_to_f64(h)) > std::fabs(v)) h = uint16_t(h - 1);  // step toward zero
          out = h;
        } else {
          out = fp::f64_to_f16(v);
        }
      }
    } else {
      double v;
      if (S.bits() == 16 && S.type != OpType::UReg32 && S.type != OpType::Reg32) v = fp::f16_to_f64(uint16_t(raw));
      else v = fp::f32_to_f64_ftz(uint32_t(raw));
      v = round == 0 ? std::trunc(v) : std::nearbyint(v);
      const bool is_signed = mode == 5 || mode == 9;
      const unsigned bits = (mode == 4 || mode == 5) ? 16 : 32;
      const double lo = is_signed ? -std::ldexp(1.0, int(bits) - 1) : 0.0;
      const double hi = is_signed ? std::ldexp(1.0, int(bits) - 1) - 1 : std::ldexp(1.0, int(bits)) - 1;
      if (std::isnan(v)) v = 0;  // NaN converts to 0
      if (v < lo) v = lo;
      if (v > hi) v = hi;
      out = uint64_t(int64_t(v));
    }
    if (!c.write(D, l, out)) return false;
  }
  return true;
}

// ---- float -----------------------------------------------------------------

enum class FOp { Fma, Add, Mul };
bool float_arith(Ctx& c, FOp k, bool op32) {
  const Operand D = c.op("D"), A = c.op("A"), B = c.op("B");
  const Operand C = k == FOp::Fma ? c.op("C") : Operand{};
  const bool sat = c.in.f("S");
  for (unsigned l = 0; l < kLanes; ++l) {
    if (!c.active(l)) continue;
    double a = 0, b = 0, cc = 0;
    if (!c.read_float(A, l, a) || !c.read_float(B, l, b) || (k == FOp::Fma && !c.read_float(C, l, cc))) return false;
    double r;
    if (k == FOp::Fma) r = fp::fma_round_odd(a, b, cc);
    else if (k == FOp::Add) r = fp::fma_round_odd(a, 1.0, b);
    else r = fp::fma_round_odd(a, b, 0.0);
    if (sat) r = fp::saturate(r);
    if (!c.write(D, l, fp::to_dest(r, D.bits(), op32))) return false;
  }
  return true;
}

bool float_unary(Ctx& c, const std::string& name) {
  const Operand D = c.op("D"), A = c.op("A");
  const bool sat = c.in.f("S");
  double vals[kLanes] = {};
  const bool deriv = name == "dfdx" || name == "dfdy";
  // Derivatives read the other lanes of the quad (active or not).
  for (unsigned l = 0; l < kLanes; ++l) {
    if (!deriv && !c.active(l)) continue;
    if (!(c.sg.launched >> l & 1)) continue;
    if (!c.read_float(A, l, vals[l])) return false;
  }
  for (unsigned l = 0; l < kLanes; ++l) {
    if (!c.active(l)) continue;
    const double x = vals[l];
    double r;
    if (name == "floor") r = std::floor(x);
    else if (name == "ceil") r = std::ceil(x);
    else if (name == "trunc") r = std::trunc(x);
    else if (name == "rint") r = fp::rint(x);
    else if (name == "rcp") r = fp::rcp(x);
    else if (name == "rsqrt") r = fp::rsqrt(x);
    else if (name == "rsqrt_special") r = fp::rsqrt_special(x);
    else if (name == "sin_pt_1") r = fp::sin_pt_1(x);
    else if (name == "sin_pt_2") r = fp::sin_pt_2(x);
    else if (name == "log2") r = fp::log2(x);
    else if (name == "exp2") r = fp::exp2(x);
    else if (deriv) {
      const unsigned bit = name == "dfdx" ? 1 : 2;
      const unsigned lo = l & ~bit, hi = l | bit;
      if (!((c.sg.launched >> lo) & (c.sg.launched >> hi) & 1)) return c.error("derivative across an unlaunched quad lane");
      r = fp::fma_round_odd(vals[hi], 1.0, -vals[lo]);
    } else {
      return c.error("unimplemented float unary op");
    }
    if (sat) r = fp::saturate(r);
    if (!c.write(D, l, fp::to_dest(r, D.bits(), true))) return false;
  }
  return true;
}

// ---- comparisons -----------------------------------------------------------

bool icompare(Ctx& c, unsigned cond, const Operand& A, const Operand& B, unsigned lane, bool& out) {
  uint64_t a, b;
  if (!c.read(A, lane, a) || !c.read(B, lane, b)) return false;
  const unsigned ab = A.type == OpType::Imm ? 16 : A.bits(), bb = B.type == OpType::Imm ? 16 : B.bits();
  a &= mask_bits(ab);
  b &= mask_bits(bb);
  bool r;
  const unsigned op = cond & 3;
  if (op == 3) return c.error("integer condition " + std::to_string(cond) + " is undefined");
  if (cond & 4) {
    const int64_t sa = sext(a, ab), sb = sext(b, bb);
    r = op == 0 ? sa == sb : op == 1 ? sa < sb : sa > sb;
  } else {
    r = op == 0 ? a == b : op == 1 ? a < b : a > b;
  }
  out = (cond & 8) ? !r : r;
  return true;
}

// Float conditions: IEEE eq/lt/gt/gte/lte; ltn/gtn ("NaN loses", as used for
// fmin/fmax): true when A is a number and B is NaN or A < B (A > B).
bool fcompare(Ctx& c, unsigned cond, const Operand& A, const Operand& B, unsigned lane, bool& out) {
  double a = 0, b = 0;
  if (!c.read_float(A, lane, a) || !c.read_float(B, lane, b)) return false;
  bool r;
  switch (cond & 7) {
    case 0: r = a == b; break;
    case 1: r = a < b; break;
    case 2: r = a > b; break;
    case 3: r = !std::isnan(a) && (std::isnan(b) || a < b); break;
    case 5: r = a >= b; break;
    case 6: r = a <= b; break;
    case 7: r = !std::isnan(a) && (std::isnan(b) || a > b); break;
    default: return c.error("float condition 4 is unobserved/undefined");
  }
  out = (cond & 8) ? !r : r;
  return true;
}

bool compare(Ctx& c, bool is_float, unsigned lane, bool& out) {
  const unsigned cond = unsigned(c.in.f("cc") | (c.in.f("ccn") << 3));
  const Operand A = c.op("A"), B = c.op("B");
  return is_float ? fcompare(c, cond, A, B, lane, out) : icompare(c, cond, A, B, lane, out);
}

// if/else/while/pop_exec on every lane's r0l (§4.6).
enum class Stack { If, Else, While, Pop };
bool exec_stack(Ctx& c, Stack k, bool is_float) {
  const unsigned n = unsigned(c.in.f("n"));
  for (unsigned l = 0; l < kLanes; ++l) {
    if (!(c.sg.launched >> l & 1)) continue;
    uint16_t v = c.sg.regs[0][l];
    bool cond = false;
    const bool needs_cond = (k == Stack::If && v == 0) || (k == Stack::Else && v == 1) || (k == Stack::While && v < n);
    if (needs_cond && !compare(c, is_float, l, cond)) return false;
    switch (k) {
      case Stack::If: if (v != 0) v = uint16_t(v + n); else if (!cond) v = 1; break;
      case Stack::Else: if (v == 0) v = uint16_t(n); else if (v == 1) v = cond ? 0 : 1; break;
      case Stack::While: if (v < n) v = cond ? 0 : uint16_t(n); break;
      case Stack::Pop: v = v > n ? uint16_t(v - n) : 0; break;
    }
    c.sg.regs[0][l] = v;
  }
  c.sg.recompute_exec();
  return true;
}

bool cmpsel(Ctx& c, bool is_float) {
  const Operand D = c.op("D"), X = c.op("X"), Y = c.op("Y");
  for (unsigned l = 0; l < kLanes; ++l) {
    if (!c.active(l)) continue;
    bool cond;
    if (!compare(c, is_float, l, cond)) return false;
    uint64_t v;
    if (!c.read(cond ? X : Y, l, v) || !c.write(D, l, v)) return false;
  }
  return true;
}

bool ballot(Ctx& c, bool is_float, bool quad) {
  const Operand D = c.op("D");
  uint32_t bits = 0;
  for (unsigned l = 0; l < kLanes; ++l) {
    if (!c.active(l)) continue;
    bool cond;
    if (!compare(c, is_float, l, cond)) return false;
    if (cond) bits |= 1u << l;
  }
  for (unsigned l = 0; l < kLanes; ++l) {
    if (!c.active(l)) continue;
    // Quad ballot: the lane's quad in the low 4 bits (compilers mask with 15).
    const uint32_t r = quad ? bits >> (l & ~3u) : bits;
    if (!c.write(D, l, r)) return false;
  }
  return true;
}

// ---- cross-lane ------------------------------------------------------------

bool shuffle(Ctx& c, const std::string& name) {
  const Operand D = c.op("D"), A = c.op("A"), B = c.op("B");
  const bool quad = name.compare(0, 4, "quad") == 0;
  uint64_t av[kLanes] = {};
  for (unsigned l = 0; l < kLanes; ++l)
    if ((c.sg.launched >> l & 1) && !c.read(A, l, av[l])) return false;
  uint64_t out[kLanes] = {};
  bool keep[kLanes] = {};
  for (unsigned l = 0; l < kLanes; ++l) {
    if (!c.active(l)) continue;
    uint64_t b;
    if (!c.read(B, l, b)) return false;
    const unsigned width = quad ? 4 : 32, base = l & ~(width - 1), idx = l - base;
    long src;
    if (name.find("_down") != std::string::npos) src = idx + b < width ? long(idx + b) : long(idx);
    else if (name.find("_rotate_up") != std::string::npos) src = long((idx + width - (b % width)) % width);
    else if (name.find("_up") != std::string::npos) src = b <= idx ? long(idx - b) : long(idx);
    else if (name.find("_xor") != std::string::npos) src = long((idx ^ b) & (width - 1));
    else {
      if (b >= width) {  // out-of-range index: destination keeps its value
        keep[l] = true;
        continue;
      }
      src = long(b);
    }
    const unsigned s = unsigned(base + unsigned(src));
    if (!(c.sg.launched >> s & 1)) return c.error("shuffle reads unlaunched lane " + std::to_string(s));
    out[l] = av[s];
  }
  for (unsigned l = 0; l < kLanes; ++l)
    if (c.active(l) && !keep[l] && !c.write(D, l, out[l])) return false;
  return true;
}

// quad_*/simd_* reductions and exclusive prefix scans over active lanes.
bool reduce(Ctx& c, const std::string& name) {
  const Operand D = c.op("D"), A = c.op("A");
  const bool quad = name.compare(0, 4, "quad") == 0;
  const bool prefix = name.find("prefix") != std::string::npos;
  std::string op = name.substr(name.find('_') + 1);
  if (prefix) op = op.substr(op.find('_') + 1);
  const unsigned dbits = D.bits();
  const bool is_float = op == "fadd" || op == "fmul" || op == "min.f" || op == "max.f";
  uint64_t val[kLanes] = {};
  for (unsigned l = 0; l < kLanes; ++l)
    if (c.active(l) && !c.read(A, l, val[l])) return false;
  auto combine = [&](uint64_t acc, uint64_t x) -> uint64_t {
    if (is_float) {
      const double a = dbits == 16 ? fp::f16_to_f64(uint16_t(acc)) : fp::f32_to_f64_ftz(uint32_t(acc));
      const double b = dbits == 16 ? fp::f16_to_f64(uint16_t(x)) : fp::f32_to_f64_ftz(uint32_t(x));
      double r;
      if (op == "fadd") r = fp::fma_round_odd(a, 1.0, b);
      else if (op == "fmul") r = fp::fma_round_odd(a, b, 0.0);
      else if (op == "min.f") r = std::isnan(a) ? b : std::isnan(b) ? a : (b < a ? b : a);
      else r = std::isnan(a) ? b : std::isnan(b) ? a : (b > a ? b : a);
      return fp::to_dest(r, dbits, dbits == 32);
    }
    const uint64_t m = mask_bits(dbits);
    acc &= m;
    x &= m;
    if (op == "and") return acc & x;
    if (op == "or") return acc | x;
    if (op == "xor") return acc ^ x;
    if (op == "iadd") return (acc + x) & m;
    if (op == "min.u") return x < acc ? x : acc;
    if (op == "max.u") return x > acc ? x : acc;
    if (op == "min.s") return sext(x, dbits) < sext(acc, dbits) ? x : acc;
    return sext(x, dbits) > sext(acc, dbits) ? x : acc;  // max.s
  };
  // Identity of each op (exclusive scans start from it).
  uint64_t identity = 0;
  const uint64_t m = mask_bits(dbits);
  if (op == "and" || op == "min.u") identity = m;
  else if (op == "min.s") identity = m >> 1;
  else if (op == "max.s") identity = (m >> 1) + 1;
  else if (op == "fmul") identity = dbits == 16 ? 0x3C00 : 0x3F800000;
  else if (op == "fadd") identity = dbits == 16 ? 0x8000 : 0x80000000u;  // -0: x + -0 = x
  else if (op == "min.f") identity = dbits == 16 ? 0x7C00 : 0x7F800000u;
  else if (op == "max.f") identity = dbits == 16 ? 0xFC00 : 0xFF800000u;
  const unsigned width = quad ? 4 : 32;
  uint64_t out[kLanes] = {};
  for (unsigned base = 0; base < kLanes; base += width) {
    uint64_t acc = identity;
    for (unsigned l = base; l < base + width; ++l) {
      if (!c.active(l)) continue;
      out[l] = acc;  // exclusive prefix
      acc = combine(acc, val[l]);
    }
    if (!prefix)
      for (unsigned l = base; l < base + width; ++l) out[l] = acc;
  }
  for (unsigned l = 0; l < kLanes; ++l)
    if (c.active(l) && !c.write(D, l, out[l])) return false;
  return true;
}

// ---- memory ----------------------------------------------------------------

const char* format_name(unsigned f) { return enum_name("device_load", "F", f) ? enum_name("device_load", "F", f) : "?"; }

// The error for a format an access does not model: device loads model all
// of formats.h; device stores and threadgroup accesses the unpacked ones (0-7).
bool format_error(Ctx& c, unsigned f, const char* what) {
  if (!memfmt::element_bytes(f)) return c.error("memory format " + std::to_string(f) + " is not defined");
  return c.error(packed_access_unmodelled(what, f));
}

bool device_mem(Ctx& c, bool store) {
  if (!c.mem) return c.error("no guest memory attached");
  const unsigned f = unsigned(c.in.f("F")), esz = memfmt::element_bytes(f);
  if (!esz || (f >= memfmt::kRgb10a2 && store)) return format_error(c, f, "device_store");
  const bool packed = memfmt::bit_packed(f);
  // Bit-packed: one aligned word at (base & ~3) + 4 * O, shift and mask ignored.
  const unsigned mask = packed ? (1u << memfmt::packed_registers(f)) - 1 : unsigned(c.in.f("mask"));
  const bool r32 = c.in.f("Rt");
  if (!r32 && f == memfmt::kI32) return c.error("i32 format with 16-bit registers is illegal");
  unsigned shift = packed ? 0 : unsigned(c.in.f("s"));
  if (shift == 3) shift = 2;  // as applegpu's model
  const Operand Rg = c.op("R"), A = c.op("A"), O = c.op("O");
  const bool ou = c.in.f("Ou");
  for (unsigned l = 0; l < kLanes; ++l) {
    if (!c.active(l)) continue;
    uint64_t base, off_raw;
    if (!c.read(A, l, base) || !c.read(O, l, off_raw)) return false;
    int64_t off;
    if (O.type == OpType::Imm) off = ou ? int64_t(uint64_t(O.n) & 0xFFFF) : sext(uint64_t(O.n), 16);
    else off = ou ? int64_t(off_raw & 0xFFFFFFFF) : sext(off_raw, 32);
    base &= ~uint64_t(esz - 1);
    uint64_t word = 0;
    if (packed) {
      const uint64_t addr = base + uint64_t(off * 4);
      if (!c.mem->access(ir::GuestMemory::Kind::Load, ir::Space::Global, addr, 4, &word))
        return c.fault(ir::FaultKind::OutOfBounds, "device load outside memory at " + hex(addr), addr, l);
    }
    unsigned reg = unsigned(Rg.n);
    for (unsigned i = 0; i < 4; ++i) {
      if (!(mask >> i & 1)) continue;
      const uint64_t addr = base + uint64_t((off * (int64_t(1) << shift) + int64_t(i)) * int64_t(esz));
      Operand r;
      r.type = r32 ? OpType::Reg32 : OpType::Reg16;
      r.n = reg++;
      uint64_t v = word;
      if (store) {
        if (!c.read(r, l, v)) return false;
        v = memfmt::store_element(f, v, r32 ? 32 : 16);
        if (!c.mem->access(ir::GuestMemory::Kind::Store, ir::Space::Global, addr, esz, &v))
          return c.fault(ir::FaultKind::OutOfBounds, "device store outside memory at " + hex(addr), addr, l);
      } else {
        if (!packed && !c.mem->access(ir::GuestMemory::Kind::Load, ir::Space::Global, addr, esz, &v))
          return c.fault(ir::FaultKind::OutOfBounds, "device load outside memory at " + hex(addr), addr, l);
        if (!c.write(r, l, memfmt::load_component(f, v, i, r32 ? 32 : 16))) return false;
      }
    }
  }
  return true;
}

bool threadgroup_mem(Ctx& c, bool store) {
  if (!c.mem) return c.error("no guest memory attached");
  const unsigned f = unsigned(c.in.f("F")), esz = memfmt::element_bytes(f);
  if (!esz || f >= memfmt::kRgb10a2) return format_error(c, f, store ? "threadgroup_store" : "threadgroup_load");
  const unsigned mask = unsigned(c.in.f("mask"));
  const bool r32 = c.in.f("Rt");
  const Operand Rg = c.op("R"), A = c.op("A"), O = c.op("O");
  for (unsigned l = 0; l < kLanes; ++l) {
    if (!c.active(l)) continue;
    uint64_t base = 0, off_raw = 0;
    if (!(A.type == OpType::Imm) && !c.read(A, l, base)) return false;
    if (!c.read(O, l, off_raw)) return false;
    const int64_t off = O.type == OpType::Imm ? O.n : int64_t(off_raw & 0xFFFF);
    unsigned reg = unsigned(Rg.n);
    for (unsigned i = 0; i < 4; ++i) {
      if (!(mask >> i & 1)) continue;
      const uint64_t addr = base + uint64_t((off + int64_t(i)) * int64_t(esz));
      Operand r;
      r.type = r32 ? OpType::Reg32 : OpType::Reg16;
      r.n = reg++;
      uint64_t v = 0;
      if (store) {
        if (!c.read(r, l, v)) return false;
        v = memfmt::store_element(f, v, r32 ? 32 : 16);
        if (!c.mem->access(ir::GuestMemory::Kind::Store, ir::Space::Shared, addr, esz, &v))
          return c.fault(ir::FaultKind::OutOfBounds, "threadgroup store outside memory at " + hex(addr), addr, l);
      } else {
        if (!c.mem->access(ir::GuestMemory::Kind::Load, ir::Space::Shared, addr, esz, &v))
          return c.fault(ir::FaultKind::OutOfBounds, "threadgroup load outside memory at " + hex(addr), addr, l);
        if (!c.write(r, l, memfmt::load_component(f, v, i, r32 ? 32 : 16))) return false;
      }
    }
  }
  return true;
}

// stack_load/stack_store: per-thread stack bytes at the immediate offset (or a register).
bool stack_mem(Ctx& c, bool store) {
  const unsigned f = unsigned(c.in.f("F")), esz = memfmt::element_bytes(f);
  if (!esz || f > 3) return c.error(std::string("stack format ") + format_name(f) + " is not implemented");
  const unsigned mask = unsigned(c.in.f("mask"));
  const bool r32 = c.in.f("Rt");
  const Operand Rg = c.op("R"), O = c.op("O");
  for (unsigned l = 0; l < kLanes; ++l) {
    if (!c.active(l)) continue;
    uint64_t off_raw;
    if (!c.read(O, l, off_raw)) return false;
    const int64_t off = O.type == OpType::Imm ? O.n : int64_t(off_raw & 0xFFFFFFFF);
    unsigned reg = unsigned(Rg.n);
    for (unsigned i = 0; i < 4; ++i) {
      if (!(mask >> i & 1)) continue;
      const int64_t addr = off + int64_t(i * esz);
      // Lane l's stack is [l * kStackStride, + the stack size) of Space::Local;
      // the memory refuses what lies past the stack size (or has no stacks).
      auto outside = [&] {
        return c.fault(ir::FaultKind::OutOfBounds, "stack access outside the thread's stack at " + hex(uint64_t(addr)),
                       uint64_t(addr), l);
      };
      if (addr < 0 || uint64_t(addr) + esz > kStackStride || !c.mem) return outside();
      const uint64_t at = l * kStackStride + uint64_t(addr);
      Operand r;
      r.type = r32 ? OpType::Reg32 : OpType::Reg16;
      r.n = reg++;
      uint64_t v = 0;
      if (store) {
        if (!c.read(r, l, v)) return false;
        if (!c.mem->access(ir::GuestMemory::Kind::Store, ir::Space::Local, at, esz, &v)) return outside();
      } else {
        if (!c.mem->access(ir::GuestMemory::Kind::Load, ir::Space::Local, at, esz, &v)) return outside();
        if (!c.write(r, l, v)) return false;
      }
    }
  }
  return true;
}

// uniform_store: 16-bit halves from the first active thread into u-halves at O.
bool uniform_store(Ctx& c) {
  const UniformStoreShape u = uniform_store_shape(c.in);
  if (!u.unmodelled.empty()) return c.error(u.unmodelled);
  if (!c.sg.exec) return true;
  if (!u.in_range()) return c.error("uniform_store out of range");
  const unsigned lane = unsigned(__builtin_ctz(c.sg.exec));
  for (unsigned i = 0; i < u.halves; ++i) c.sg.uniforms[size_t(u.u_half + i)] = c.sg.regs[u.reg_half + i][lane];
  return true;
}

bool special_reg(Ctx& c, unsigned sr, unsigned lane, uint32_t& v) {
  const uint32_t exec = c.sg.exec;
  switch (sr) {
    case 52: v = lane; return true;
    case 56: v = uint32_t(__builtin_popcount(exec & ((1u << lane) - 1) & (0xFu << (lane & ~3u)))); return true;
    case 57: v = uint32_t(__builtin_popcount(exec & (0xFu << (lane & ~3u)))); return true;
    case 58: v = uint32_t(__builtin_popcount(exec & ((1u << lane) - 1))); return true;
    case 59: v = uint32_t(__builtin_popcount(exec)); return true;
    case 63: v = 1; return true;  // no helper threads outside fragment shading
    default: break;
  }
  if (!c.sg.has_special(sr)) return c.error("special register sr" + std::to_string(sr) + " has no value");
  v = c.sg.special(sr)[lane];
  return true;
}

// Branch targets and return addresses must agree across the threads that use them.
bool uniform_reg32(Ctx& c, unsigned reg, uint64_t& v) {
  if (reg > 127) return c.error("register out of range");
  const uint32_t lanes = c.sg.exec ? c.sg.exec : c.sg.launched;
  bool first = true;
  for (unsigned l = 0; l < kLanes; ++l) {
    if (!(lanes >> l & 1)) continue;
    const uint32_t x = c.sg.r32(reg, l);
    if (first) v = x;
    else if (x != v) return c.error("r" + std::to_string(reg) + " differs between threads (divergent return/call)");
    first = false;
  }
  return true;
}

bool execute(Ctx& c) {
  const std::string& n = c.in.desc->name;
  const uint64_t pc = c.sg.pc;
  if (n == "mov_imm") {
    const Operand D = c.op("D");
    const uint64_t v = c.in.has("imm32") ? c.in.f("imm32") : c.in.f("imm16");
    for (unsigned l = 0; l < kLanes; ++l)
      if (c.active(l) && !c.write(D, l, v)) return false;
    return true;
  }
  if (n == "get_sr") {
    const Operand D = c.op("D");
    for (unsigned l = 0; l < kLanes; ++l) {
      if (!c.active(l)) continue;
      uint32_t v = 0;
      if (!special_reg(c, unsigned(c.in.f("SR")), l, v) || !c.write(D, l, v)) return false;
    }
    return true;
  }
  if (n == "iadd") return saturating_add(c, false);
  if (n == "imadd") return saturating_add(c, true);
  if (n == "convert") return convert(c);
  if (n == "bfi") return bitfield(c, BitOp::Bfi);
  if (n == "bfeil") return bitfield(c, BitOp::Bfeil);
  if (n == "extr") return bitfield(c, BitOp::Extr);
  if (n == "shlhi") return bitfield(c, BitOp::Shlhi);
  if (n == "shrhi") return bitfield(c, BitOp::Shrhi);
  if (n == "asr") return bitfield(c, BitOp::Asr);
  if (n == "asrh") return bitfield(c, BitOp::Asrh);
  if (n == "bitop") return bitop(c);
  if (n == "bitrev") return int_unary(c, Unary::Bitrev);
  if (n == "popcount") return int_unary(c, Unary::Popcount);
  if (n == "ffs") return int_unary(c, Unary::Ffs);
  if (n == "intl") return intl(c);
  if (n == "fmadd32") return float_arith(c, FOp::Fma, true);
  if (n == "fmadd16") return float_arith(c, FOp::Fma, false);
  if (n == "fadd32") return float_arith(c, FOp::Add, true);
  if (n == "fadd16") return float_arith(c, FOp::Add, false);
  if (n == "fmul32") return float_arith(c, FOp::Mul, true);
  if (n == "fmul16") return float_arith(c, FOp::Mul, false);
  if (n == "floor" || n == "ceil" || n == "trunc" || n == "rint" || n == "rcp" || n == "rsqrt" ||
      n == "rsqrt_special" || n == "sin_pt_1" || n == "sin_pt_2" || n == "log2" || n == "exp2" || n == "dfdx" ||
      n == "dfdy")
    return float_unary(c, n);
  if (n == "stop") {
    c.res.kind = StepResult::Kind::Done;
    return true;
  }
  if (n == "trap") return c.fault(ir::FaultKind::Trap, "trap");
  if (n == "ret") {
    uint64_t target = 0;
    if (!uniform_reg32(c, unsigned(c.in.f("reg32")), target)) return false;
    c.next_pc = target;
    return true;
  }
  if (n == "call" && c.in.size == 2) {
    uint64_t target = 0;
    if (!uniform_reg32(c, unsigned(c.in.f("reg32")), target)) return false;
    for (unsigned l = 0; l < kLanes; ++l)
      if (c.active(l)) c.sg.set_r32(1, l, uint32_t(pc + 2));
    c.next_pc = target;
    return true;
  }
  if (n == "call") {
    for (unsigned l = 0; l < kLanes; ++l)
      if (c.active(l)) c.sg.set_r32(1, l, uint32_t(pc + 6));
    c.next_pc = uint64_t(decode_operand(c.in, c.in.desc->operands[0], pc).n);
    return true;
  }
  if (n == "jmp_exec_any" || n == "jmp_exec_none") {
    const bool any = c.sg.exec != 0;
    if (any == (n == "jmp_exec_any")) c.next_pc = uint64_t(decode_operand(c.in, c.in.desc->operands[0], pc).n);
    return true;
  }
  if (n == "pop_exec") return exec_stack(c, Stack::Pop, false);
  if (n == "if_icmp") return exec_stack(c, Stack::If, false);
  if (n == "if_fcmp") return exec_stack(c, Stack::If, true);
  if (n == "else_icmp") return exec_stack(c, Stack::Else, false);
  if (n == "else_fcmp") return exec_stack(c, Stack::Else, true);
  if (n == "while_icmp") return exec_stack(c, Stack::While, false);
  if (n == "while_fcmp") return exec_stack(c, Stack::While, true);
  if (n == "icmpsel") return cmpsel(c, false);
  if (n == "fcmpsel") return cmpsel(c, true);
  if (n == "icmp_ballot") return ballot(c, false, false);
  if (n == "icmp_quad_ballot") return ballot(c, false, true);
  if (n == "fcmp_ballot") return ballot(c, true, false);
  if (n == "fcmp_quad_ballot") return ballot(c, true, true);
  if ((n.compare(0, 12, "simd_shuffle") == 0 || n.compare(0, 12, "quad_shuffle") == 0)) return shuffle(c, n);
  if ((n.compare(0, 5, "quad_") == 0 || n.compare(0, 5, "simd_") == 0) && n != "simd_op" && n != "simd_shuf_op" &&
      n.compare(0, 11, "simd_matrix") != 0)
    return reduce(c, n);
  if (n == "wait") return true;  // loads complete synchronously in this model
  if (n == "threadgroup_barrier") {
    c.res.kind = StepResult::Kind::Barrier;
    return true;
  }
  if (n == "device_load") return device_mem(c, false);
  if (n == "device_store") return device_mem(c, true);
  if (n == "threadgroup_load") return threadgroup_mem(c, false);
  if (n == "threadgroup_store") return threadgroup_mem(c, true);
  if (n == "stack_load") return stack_mem(c, false);
  if (n == "stack_store") return stack_mem(c, true);
  if (n == "uniform_store") return uniform_store(c);
  return c.error("not implemented in the interpreter");
}

}  // namespace

std::string packed_access_unmodelled(const std::string& what, unsigned f) {
  return what + " with packed format " + format_name(f) +
         " is not implemented: the public model (applegpu) defines packed formats for device_load only";
}

std::string convert_round_unmodelled(unsigned round) {
  return "rounding mode " + std::to_string(round) +
         " is not implemented: unobserved (applegpu defines 0 rtz and 1 rte and only guesses that 2 and 3 "
         "round toward -inf and +inf; Mesa emits 0 and 1 only)";
}

UniformStoreShape uniform_store_shape(const Insn& in) {
  UniformStoreShape u;
  if (in.f("F") != 1) {
    u.unmodelled = std::string("uniform_store with format ") + format_name(unsigned(in.f("F"))) +
                   " is not implemented: applegpu and Mesa describe i16 only (Mesa notes that 32-bit-format "
                   "uniform stores do not work)";
    return u;
  }
  Operand O;
  for (const OperandDef& od : in.desc->operands)
    if (od.name == "O") O = decode_operand(in, od, 0);
  if (O.type != OpType::Imm) {
    u.unmodelled = "uniform_store with a register index is not implemented: the public descriptions give the "
                   "index only as an immediate in 16-bit units (Mesa's mov uN, rM)";
    return u;
  }
  const unsigned count = unsigned(__builtin_popcountll(in.f("mask") & 15));
  u.reg_half = unsigned(in.f("R"));
  u.halves = in.f("Rt") ? count * 2 : count;
  u.u_half = uint64_t(O.n) & 0xFFFF;
  return u;
}

Interpreter::Interpreter(std::vector<uint8_t> code, ir::GuestMemory* memory)
    : code_(std::move(code)), memory_(memory) {}

const Insn* Interpreter::fetch(uint64_t pc, std::string& err) {
  auto it = decoded_.find(pc);
  if (it != decoded_.end()) return &it->second;
  if (pc >= code_.size() || (pc & 1)) {
    err = "g13 interpreter: pc " + hex(pc) + " is outside the program or misaligned";
    return nullptr;
  }
  Insn in;
  fe::Diagnostic d;
  if (!decode(code_.data() + pc, code_.size() - pc, pc, in, d)) {
    err = d.message;
    return nullptr;
  }
  return &decoded_.emplace(pc, in).first->second;
}

StepResult Interpreter::step(SimdGroup& sg) {
  std::string err;
  const Insn* in = fetch(sg.pc, err);
  if (!in) {
    StepResult r;
    r.kind = StepResult::Kind::Error;
    r.message = err;
    return r;
  }
  sg.exec &= sg.launched;
  Ctx c{sg, *in, memory_, StepResult{}, sg.pc + in->size};
  if (execute(c)) sg.pc = c.next_pc;
  return c.res;
}

StepResult Interpreter::run(SimdGroup& sg, uint64_t max_steps) {
  for (uint64_t i = 0; i < max_steps; ++i) {
    StepResult r = step(sg);
    if (r.kind != StepResult::Kind::Running) return r;
  }
  StepResult r;
  r.kind = StepResult::Kind::Fault;
  r.fault = ir::FaultKind::Watchdog;
  r.message = "g13 interpreter: instruction budget exhausted at pc " + hex(sg.pc);
  return r;
}

}  // namespace gpurc::g13
