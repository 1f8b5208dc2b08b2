// Tesla translation: cvt between integer and float types of 8 to 64 bits.
#include "frontend/tesla/translate_impl.h"

namespace gpurc::tesla::detail {

// cvt from s64/u64 (the encodings only have f32/f64 destinations for
// them): one rounding in the instruction's mode.
//
// neg/abs: the interpreter applies them to the integer in infinite precision
// (|INT64_MIN| = 2^63 and -(2^64 - 1) do not fit 64 bits), so the
// translation keeps a sign and a 64-bit magnitude instead: the magnitude is
// converted as unsigned and the float negated afterwards. Negation is exact
// and mirrors the directed modes (round_down(-x) = -round_up(x)), so a lane
// whose result is negative converts its magnitude with rm and rp swapped.
// An integer 0 stays +0; with sat every negative result clamps to +0.
bool Translator::cvt_from_64(const std::string& dt, const std::string& st, int db) {
  const Insn& in = *cur;
  if (dt[0] != 'f' || db == 16) return unsupported("64-bit integer source to this type");
  V v;
  if (!read64(in.find(Role::Src1), v)) return false;
  const bool is_signed = st[0] == 's', neg = in.has("neg"), abs = in.has("abs"), sat = in.has("sat");
  ir::Round mode = in.has("rm") ? ir::Round::Down : in.has("rp") ? ir::Round::Up
                 : in.has("rz") ? ir::Round::TowardZero : ir::Round::NearestEven;
  const Type ft = db == 64 ? Type::F64 : Type::F32;
  auto convert = [&](V x, ir::Sign sgn, ir::Round m) {
    uint32_t fl = float_flags(false, false, m) | (sat ? ir::ff::Sat : 0);
    V r = b.itof(ft, sgn, x, fl);
    return db == 64 ? b.bitcast(Type::I64, r) : b.bitcast(Type::I32, r);
  };
  const Operand* dst = in.find(Role::Dst);
  V out;
  if (!neg && !abs) {
    out = convert(v, is_signed ? ir::Sign::Signed : ir::Sign::Unsigned, mode);
  } else {
    V zero = b.i64(0);
    V below = is_signed ? b.icmp(ir::IntPred::Slt, v, zero) : b.i1(false);
    V magnitude = is_signed ? b.select(below, b.ineg(v), v) : v;
    V negative = abs ? b.i1(false) : below;
    if (neg) negative = b.not_(negative);
    negative = b.and_(negative, b.icmp(ir::IntPred::Ne, magnitude, zero));
    V rounded = convert(magnitude, ir::Sign::Unsigned, mode);
    if (mode == ir::Round::Down || mode == ir::Round::Up) {
      ir::Round mirrored = mode == ir::Round::Down ? ir::Round::Up : ir::Round::Down;
      rounded = b.select(negative, convert(magnitude, ir::Sign::Unsigned, mirrored), rounded);
    }
    V sign_bit = db == 64 ? b.i64(0x8000000000000000ull) : b.i32(0x80000000u);
    V negated = sat ? (db == 64 ? b.i64(0) : b.i32(0)) : b.xor_(rounded, sign_bit);
    out = b.select(negative, negated, rounded);
  }
  if (db == 64) {
    if (!write64(dst, out)) return false;
    set_flags(flags_double(out));
    return true;
  }
  if (!write(dst, out)) return false;
  set_flags(flags_float(out));
  return true;
}

bool Translator::cvt() {
  const Insn& in = *cur;
  static const char* tnames[] = {"u8", "s8", "u16", "s16", "u32", "s32", "f16", "f32", "u64", "s64", "f64"};
  std::vector<std::string> types;
  for (auto& n : in.names())
    for (auto* t : tnames)
      if (n == t && types.size() < 2) types.push_back(n);
  if (types.size() < 2) return unsupported("without two types");
  const std::string& dt = types[0];
  const std::string& st = types[1];
  auto bits_of = [](const std::string& t) { return std::stoi(t.substr(1)); };
  int db = bits_of(dt), sb = bits_of(st);
  bool sfloat = st[0] == 'f', dfloat = dt[0] == 'f';
  bool n = in.has("neg"), ab = in.has("abs");
  const Operand* dst = in.find(Role::Dst);
  const Operand* s1 = in.find(Role::Src1);
  // Integer -> integer of at most 32 bits: extend, abs, neg exactly (in 64
  // bits), clamp to the destination range.
  if (!sfloat && !dfloat && sb <= 32 && db <= 32) {
    V raw;
    if (!read(s1, raw)) return false;
    V v = low_bits(raw, unsigned(sb), st[0] == 's');
    int64_t lo = dt[0] == 's' ? -(int64_t(1) << (db - 1)) : 0;
    int64_t hi = dt[0] == 's' ? (int64_t(1) << (db - 1)) - 1 : (int64_t(1) << db) - 1;
    int64_t src_lo = st[0] == 's' ? -(int64_t(1) << (sb - 1)) : 0;
    int64_t src_hi = st[0] == 's' ? (int64_t(1) << (sb - 1)) - 1 : (int64_t(1) << sb) - 1;
    V out = v;  // a widening without abs/neg: the clamp cannot change the value
    if (ab || n || src_lo < lo || src_hi > hi) {
      V w = b.convert(st[0] == 's' ? Opcode::Sext : Opcode::Zext, Type::I64, v);
      if (ab) w = b.unary(Opcode::IAbs, w);
      if (n) w = b.ineg(w);
      w = b.imax(ir::Sign::Signed, w, b.i64(uint64_t(lo)));
      w = b.imin(ir::Sign::Signed, w, b.i64(uint64_t(hi)));
      // The clamped value is written sign-extended (a register half gets its low 16 bits).
      out = b.trunc(Type::I32, w);
    }
    if (!write(dst, out)) return false;
    V fl = flags_int(out, db >= 32 ? 32 : 16);
    if (db == 8) fl = b.or_(b.zext(Type::I32, eq0(band(out, 0xff))), shl(bit(out, 7), 1));
    set_flags(fl);
    return true;
  }
  if (!sfloat && sb == 64) return cvt_from_64(dt, st, db);
  ir::Round mode = ir::Round::NearestEven;
  bool rint = false;
  for (auto& nm : in.names()) {
    if (nm == "rn" || nm == "rni") mode = ir::Round::NearestEven;
    if (nm == "rm" || nm == "rmi") mode = ir::Round::Down;
    if (nm == "rp" || nm == "rpi") mode = ir::Round::Up;
    if (nm == "rz" || nm == "rzi") mode = ir::Round::TowardZero;
    if (nm == "rni" || nm == "rmi" || nm == "rpi" || nm == "rzi") rint = true;
  }
  bool sat = in.has("sat");
  V raw, out;
  if (sb == 64) {
    if (!read64(s1, raw)) return false;
  } else if (!read(s1, raw)) {
    return false;
  }
  // Clamp to [0, 1] keeping NaN and -0 (the interpreter's "sat": v < 0 -> 0, v > 1 -> 1).
  auto clamp01 = [&](V v) {
    Type t = b.type(v);
    uint64_t one = t == Type::F64 ? 0x3ff0000000000000ull : t == Type::F32 ? 0x3f800000u : 0x3c00u;
    V zero = b.constant(t, 0), onev = b.constant(t, one);
    v = b.select(b.fcmp(ir::FloatPred::Olt, v, zero), zero, v);
    return b.select(b.fcmp(ir::FloatPred::Ogt, v, onev), onev, v);
  };
  auto float_out_flags = [&](V o) -> V {
    if (db == 64) return flags_double(o);
    if (db == 32) return flags_float(o);
    V mag = band(o, 0x7fff);
    V nan = b.icmp(ir::IntPred::Ugt, mag, b.i32(0x7c00));
    V z = b.or_(nan, eq0(mag));
    V sgn = b.or_(nan, ne0(band(o, 0x8000)));
    return b.or_(b.zext(Type::I32, z), shl(b.zext(Type::I32, sgn), 1));
  };
  auto to_f16_bits = [&](V f32v) {
    return b.zext(Type::I32, b.bitcast(Type::I16, b.ftof(Type::F16, f32v, float_flags(false, false))));
  };
  if (sfloat) {
    // The source as f32 (f16 widened exactly, f32 flushed) or f64, then abs/neg.
    V v;
    if (sb == 16) {
      V h = b.bitcast(Type::F16, b.trunc(Type::I16, raw));
      v = b.ftof(Type::F32, h, float_flags(false, false));
    } else if (sb == 32) {
      v = b.bitcast(Type::F32, raw);
    } else {
      v = b.bitcast(Type::F64, raw);
    }
    Type vt = b.type(v);
    V one = b.constant(vt, vt == Type::F64 ? 0x3ff0000000000000ull : 0x3f800000u);
    if (sb == 32) v = b.fmul(v, one, float_flags(true, false));  // flush (x * 1 is exact)
    if (ab) v = b.fabs(v);
    if (n) v = b.fneg(v);
    if (!dfloat) {
      Type it = ir::int_type(unsigned(db));
      ir::Round r = rint ? mode : ir::Round::TowardZero;
      V iv = b.ftoi(it, dt[0] == 's' ? ir::Sign::Signed : ir::Sign::Unsigned, v,
                       float_flags(false, false, r));
      if (db == 64) {
        if (!write64(dst, iv)) return false;
        V z = b.icmp(ir::IntPred::Eq, iv, b.i64(0)), sg = b.icmp(ir::IntPred::Slt, iv, b.i64(0));
        set_flags(pack(z, sg, b.i1(false), b.i1(false)));
        return true;
      }
      out = db == 32 ? iv : b.zext(Type::I32, iv);
      if (!write(dst, out)) return false;
      V fl = flags_int(out, db >= 32 ? 32 : 16);
      if (db == 8) fl = pack(eq0(band(out, 0xff)), ne0(bit(out, 7)), b.i1(false), b.i1(false));
      set_flags(fl);
      return true;
    }
    if (rint) v = b.fround(Opcode::FRint, v, float_flags(false, false, mode));
    if (sat) v = clamp01(v);
    if (db == 64) {
      V d = vt == Type::F64 ? b.fmul(v, one, float_flags(false, false))
                            : b.ftof(Type::F64, v, float_flags(false, false));
      out = b.bitcast(Type::I64, d);
      if (!write64(dst, out)) return false;
    } else if (db == 32) {
      V f = vt == Type::F64 ? b.ftof(Type::F32, v, float_flags(false, true, mode))
                            : b.fmul(v, one, float_flags(false, true));
      out = b.bitcast(Type::I32, f);
      if (!write(dst, out)) return false;
    } else {
      V f = vt == Type::F64 ? b.ftof(Type::F32, v, float_flags(false, false, mode)) : v;
      out = to_f16_bits(f);
      if (!write(dst, out)) return false;
    }
    set_flags(float_out_flags(out));
    return true;
  }
  // Integer source -> float: extend, abs, neg exactly in 64 bits, one rounding.
  V iv = low_bits(raw, unsigned(sb), st[0] == 's');
  V w = b.convert(st[0] == 's' ? Opcode::Sext : Opcode::Zext, Type::I64, iv);
  if (ab) w = b.unary(Opcode::IAbs, w);
  if (n) w = b.ineg(w);
  uint32_t satf = sat ? ir::ff::Sat : 0;
  if (db == 64) {
    out = b.bitcast(Type::I64, b.itof(Type::F64, ir::Sign::Signed, w, float_flags(false, false, mode) | satf));
    if (!write64(dst, out)) return false;
    set_flags(flags_double(out));
    return true;
  }
  V f32v = b.itof(Type::F32, ir::Sign::Signed, w, float_flags(false, false, mode) | satf);
  if (db == 32) {
    out = b.bitcast(Type::I32, f32v);
    if (!write(dst, out)) return false;
    set_flags(flags_float(out));
    return true;
  }
  out = to_f16_bits(f32v);
  if (!write(dst, out)) return false;
  set_flags(float_out_flags(out));
  return true;

}

}  // namespace gpurc::tesla::detail
