// Tesla translation: cvt between integer and float types of 8 to 64 bits,
// the same rules as the interpreter (docs/tesla.md "cvt"): conversions with
// a 64-bit type run on G200's f64 unit, the others on the G80 converter.
#include "frontend/tesla/translate_impl.h"

namespace gpurc::tesla::detail {

namespace {
ir::Round ir_round(int rm) {
  static const ir::Round r[4] = {ir::Round::NearestEven, ir::Round::Down, ir::Round::Up, ir::Round::TowardZero};
  return r[rm & 3];
}
int mirrored(int rm) { return rm == 1 ? 2 : rm == 2 ? 1 : rm; }
}  // namespace

// Converts with the mode `rm`, or its mirror image in lanes where
// `negative` holds (rounding a magnitude as the negative value rounds).
V Translator::cvt_mirrored(int rm, V negative, const std::function<V(ir::Round)>& convert) {
  V direct = convert(ir_round(rm));
  if (rm != 1 && rm != 2) return direct;
  return b.select(negative, convert(ir_round(mirrored(rm))), direct);
}

// f32 bits -> f16 bits in a 32-bit value (sem::f32_to_f16): flushed input,
// below 2^-34 a signed zero in every mode, NaN 0x7fff.
V Translator::f32_to_f16(V f, int rm, bool truncate) {
  ir::Round r = truncate ? ir::Round::TowardZero : ir_round(rm);
  V h = b.zext(Type::I32, b.bitcast(Type::I16, b.ftof(Type::F16, b.bitcast(Type::F32, f), float_flags(true, false, r))));
  if (truncate) {
    // A finite value of 2^16 or more overflows as rm says (nvhw
    // fp16_mkfin): inf, or the largest half toward zero / away from inf.
    V exp = band(shr(f, 23), 0xff);
    V big = b.and_(b.icmp(ir::IntPred::Uge, exp, b.i32(0x8f)), b.icmp(ir::IntPred::Ne, exp, b.i32(0xff)));
    V negative = b.icmp(ir::IntPred::Slt, f, b.i32(0));
    V to_max = rm == 3 ? b.i1(true) : rm == 1 ? b.not_(negative) : rm == 2 ? negative : b.i1(false);
    V over = b.or_(band(shr(f, 16), 0x8000), b.select(to_max, b.i32(0x7bff), b.i32(0x7c00)));
    h = b.select(big, over, h);
  }
  V tiny = b.icmp(ir::IntPred::Ule, band(shr(f, 23), 0xff), b.i32(0x5d));
  return b.select(tiny, band(shr(f, 16), 0x8000), h);
}

V Translator::flags_half(V h) {
  V mag = band(h, 0x7fff);
  V nan = b.icmp(ir::IntPred::Ugt, mag, b.i32(0x7c00));
  V zero = eq0(mag);
  V s = b.or_(nan, b.and_(b.not_(zero), ne0(band(h, 0x8000))));
  return pack(b.or_(nan, zero), s, b.i1(false), b.i1(false));
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
  const int db = bits_of(dt), sb = bits_of(st);
  const bool sfloat = st[0] == 'f', dfloat = dt[0] == 'f';
  const bool n = in.has("neg"), ab = in.has("abs"), sat = in.has("sat");
  const bool f64unit = sb == 64 || db == 64;
  const Operand* dst = in.find(Role::Dst);
  const Operand* s1 = in.find(Role::Src1);
  int rm = 0;
  bool rint = false;
  for (auto& nm : in.names()) {
    if (nm == "rn" || nm == "rni") rm = 0;
    if (nm == "rm" || nm == "rmi") rm = 1;
    if (nm == "rp" || nm == "rpi") rm = 2;
    if (nm == "rz" || nm == "rzi") rm = 3;
    if (nm == "rni" || nm == "rmi" || nm == "rpi" || nm == "rzi") rint = true;
  }
  const unsigned dst_bits = db >= 16 ? unsigned(db) : ((in.bits >> 58) & 1) ? 32u : 16u;
  V raw;
  if (sb == 64) {
    if (!read64(s1, raw)) return false;
  } else if (!read(s1, raw)) {
    return false;
  }
  auto done32 = [&](V out, V fl) {
    if (!write(dst, out)) return false;
    set_flags(fl);
    return true;
  };
  auto done64 = [&](V out, V fl) {
    if (!write64(dst, out)) return false;
    set_flags(fl);
    return true;
  };
  V i1f = b.i1(false);

  if (!sfloat) {
    // Integer source as sign and 64-bit magnitude; abs clears the sign, neg flips it.
    V mag, src_neg;
    if (sb == 64) {
      src_neg = st[0] == 's' ? b.icmp(ir::IntPred::Slt, raw, b.i64(0)) : i1f;
      mag = st[0] == 's' ? b.select(src_neg, b.ineg(raw), raw) : raw;
    } else {
      V v = b.convert(st[0] == 's' ? Opcode::Sext : Opcode::Zext, Type::I64, low_bits(raw, unsigned(sb), st[0] == 's'));
      src_neg = b.icmp(ir::IntPred::Slt, v, b.i64(0));
      mag = b.select(src_neg, b.ineg(v), v);
    }
    V neg = ab ? i1f : src_neg;
    if (n) neg = b.not_(neg);
    if (!dfloat) {
      // A widening without abs/neg cannot clamp: the extended value as is.
      const bool widening = (st[0] == dt[0] && db >= sb) || (st[0] == 'u' && dt[0] == 's' && db > sb);
      if (widening && !ab && !n) {
        V out = sb == 32 ? raw : low_bits(raw, unsigned(sb), st[0] == 's');
        return done32(out, flags_int(out, dst_bits));
      }
      V e;
      if (dt[0] == 's') {
        uint64_t limit = 1ull << (db - 1);
        V neg_e = b.ineg(b.imin(ir::Sign::Unsigned, mag, b.i64(limit)));
        V pos_e = b.imin(ir::Sign::Unsigned, mag, b.i64(limit - 1));
        e = b.select(neg, neg_e, pos_e);
      } else {
        e = b.select(neg, b.i64(0), b.imin(ir::Sign::Unsigned, mag, b.i64((1ull << db) - 1)));
      }
      V out = b.trunc(Type::I32, e);
      return done32(out, flags_int(out, dst_bits));
    }
    if (f64unit) {
      // Directed rounding is mirrored for signed sources only; sat is
      // ignored; an integer 0 with neg is -0.
      V negative = st[0] == 's' ? neg : i1f;
      Type ft = db == 64 ? Type::F64 : Type::F32;
      V conv = cvt_mirrored(rm, negative, [&](ir::Round r) {
        V x = b.itof(ft, ir::Sign::Unsigned, mag, float_flags(false, false, r));
        return db == 64 ? b.bitcast(Type::I64, x) : b.bitcast(Type::I32, x);
      });
      if (db == 64) {
        V out = b.or_(conv, b.select(neg, b.i64(1ull << 63), b.i64(0)));
        return done64(out, flags_double(out));
      }
      V out = b.or_(conv, b.select(neg, b.i32(0x80000000u), b.i32(0)));
      return done32(out, flags_float(out, false));
    }
    // G80 converter (sources of at most 32 bits): the same sign and
    // magnitude in 32 bits (|INT32_MIN| = 2^31 read as unsigned), as 32-bit
    // conversions are native on the x64 tiers and 64-bit ones are not.
    const bool sgn = st[0] == 's';
    V v32 = sb == 32 ? raw : low_bits(raw, unsigned(sb), sgn);
    V neg32 = sgn ? b.icmp(ir::IntPred::Slt, v32, b.i32(0)) : i1f;
    V m32 = sgn ? b.select(neg32, b.ineg(v32), v32) : v32;
    src_neg = neg32;
    neg = ab ? i1f : neg32;
    if (n) neg = b.not_(neg);
    if (db == 16) {
      // The G80 converter's integer -> f16 path loses top bits of the
      // magnitude (sem, from hwtest g80_fp's model of the hardware bug).
      V rounds_up = rm == 0 ? b.i1(true) : rm == 2 ? b.not_(neg) : rm == 1 ? neg : i1f;
      V all_ones = b.icmp(ir::IntPred::Eq, band(shr(m32, 5), 0x1ffffffu), b.i32(0x1ffffffu));
      m32 = b.select(b.and_(rounds_up, all_ones), b.i32(0), m32);
      V lo = band(b.isub(m32, b.zext(Type::I32, src_neg)), 0xffff);
      // k = 2 + min(5, leading zeros of lo in 16 bits)
      V msb = b.unary(Opcode::FindMsb, lo, uint8_t(ir::Sign::Unsigned));
      V lz = b.isub(b.i32(15), msb);  // 16 when lo is 0 (msb -1)
      V k = b.iadd(b.i32(2), b.imin(ir::Sign::Unsigned, lz, b.i32(5)));
      m32 = b.lshr(b.shl(m32, k), k);
    }
    V conv = cvt_mirrored(rm, neg, [&](ir::Round r) {
      return b.bitcast(Type::I32, b.itof(Type::F32, ir::Sign::Unsigned, m32, float_flags(false, false, r)));
    });
    V v = b.or_(conv, b.select(neg, b.i32(0x80000000u), b.i32(0)));
    if (sat) v = sat_keep_nan(v);
    if (db == 16) {
      V h = f32_to_f16(v, rm, false);
      return done32(h, flags_half(h));
    }
    return done32(v, flags_float(v));
  }

  if (!dfloat) {
    // Float -> integer: the magnitude rounds (mirrored for a negative
    // value), then clamps.
    if (f64unit) {
      const bool wide = sb == 64;
      V x = wide ? raw : b.zext(Type::I64, raw);
      const uint64_t sbit = wide ? 1ull << 63 : 1ull << 31;
      if (ab) x = b.and_(x, b.i64(~sbit));
      if (n) x = b.xor_(x, b.i64(sbit));
      V neg = b.icmp(ir::IntPred::Ne, b.and_(x, b.i64(sbit)), b.i64(0));
      x = b.and_(x, b.i64(~sbit));
      V nan = b.icmp(ir::IntPred::Ugt, x, b.i64(wide ? 0x7ff0000000000000ull : 0x7f800000u));
      V fx = wide ? b.bitcast(Type::F64, x) : b.bitcast(Type::F32, b.trunc(Type::I32, x));
      V e = cvt_mirrored(rm, neg, [&](ir::Round r) {
        return b.ftoi(Type::I64, ir::Sign::Unsigned, fx, float_flags(false, false, r));
      });
      V ovf = b.icmp(ir::IntPred::Eq, e, b.i64(0xffffffffull));
      if (dt[0] == 's') {
        uint64_t limit = 1ull << (db - 1);
        V over_neg = b.icmp(ir::IntPred::Ugt, e, b.i64(limit));
        V over_pos = b.icmp(ir::IntPred::Uge, e, b.i64(limit));
        ovf = b.or_(ovf, b.select(neg, over_neg, over_pos));
        e = b.select(neg, b.ineg(b.imin(ir::Sign::Unsigned, e, b.i64(limit))), b.imin(ir::Sign::Unsigned, e, b.i64(limit - 1)));
      } else {
        V nz = b.icmp(ir::IntPred::Ne, e, b.i64(0));
        ovf = b.or_(ovf, b.and_(neg, nz));
        e = b.select(neg, b.i64(0), e);
        if (db == 32) {
          V big = b.icmp(ir::IntPred::Uge, e, b.i64(1ull << 32));
          ovf = b.or_(ovf, big);
          e = b.imin(ir::Sign::Unsigned, e, b.i64(0xffffffffull));
        }
      }
      e = b.select(nan, b.i64(1ull << (db - 1)), e);
      ovf = b.or_(ovf, nan);
      if (db == 64) {
        V z = b.icmp(ir::IntPred::Eq, e, b.i64(0)), sg = b.icmp(ir::IntPred::Slt, e, b.i64(0));
        return done64(e, pack(z, sg, i1f, ovf));
      }
      V out = b.trunc(Type::I32, e);
      return done32(out, pack(eq0(out), b.icmp(ir::IntPred::Slt, out, b.i32(0)), i1f, ovf));
    }
    // G80 converter: rounding the signed value in the mode and saturating
    // to the destination is the magnitude rule (directed modes mirror for
    // negative values, a negative value into an unsigned type is 0, NaN 0),
    // which the IR's ftoi does (natively for s32).
    V x = raw;
    if (sb == 16) x = b.bitcast(Type::I32, b.ftof(Type::F32, b.bitcast(Type::F16, b.trunc(Type::I16, raw)), float_flags(false, false)));
    if (ab) x = band(x, 0x7fffffffu);
    if (n) x = b.xor_(x, b.i32(0x80000000u));
    Type it = db == 16 ? Type::I16 : Type::I32;
    V iv = b.ftoi(it, dt[0] == 's' ? ir::Sign::Signed : ir::Sign::Unsigned, b.bitcast(Type::F32, x),
                  float_flags(true, false, ir_round(rm)));
    V out = db == 16 ? b.zext(Type::I32, iv) : iv;
    return done32(out, flags_int(out, unsigned(db)));
  }

  if (f64unit) {
    // Float -> float on the f64 unit: denormals kept, a NaN keeps sign and
    // payload (quieted) and neg/abs do not apply to it.
    V e;
    if (sb == 64) {
      e = raw;
    } else {
      V wide = b.bitcast(Type::I64, b.ftof(Type::F64, b.bitcast(Type::F32, raw), float_flags(false, false)));
      V nan32 = b.icmp(ir::IntPred::Ugt, band(raw, 0x7fffffffu), b.i32(0x7f800000u));
      V x64 = b.zext(Type::I64, raw);
      V nan_bits = b.or_(b.or_(b.shl(b.and_(x64, b.i64(0x80000000u)), b.i32(32)), b.i64(0x7ff0000000000000ull)),
                         b.shl(b.or_(b.and_(x64, b.i64(0x7fffffu)), b.i64(0x400000u)), b.i32(29)));
      e = b.select(nan32, nan_bits, wide);
    }
    V nan = is_nan64(e);
    V num = e;
    if (ab) num = b.and_(num, b.i64(~(1ull << 63)));
    if (n) num = b.xor_(num, b.i64(1ull << 63));
    if (rint && db == 64 && sb == 64)
      num = b.bitcast(Type::I64, b.fround(Opcode::FRint, b.bitcast(Type::F64, num), float_flags(false, false, ir_round(rm))));
    e = b.select(nan, b.or_(e, b.i64(1ull << 51)), num);
    if (db == 64) return done64(e, flags_double(e));
    V f = b.bitcast(Type::I32, b.ftof(Type::F32, b.bitcast(Type::F64, e), float_flags(false, false, ir_round(rm))));
    V hi = b.trunc(Type::I32, b.lshr(e, b.i32(32)));
    V nan_f = b.or_(b.or_(band(hi, 0x80000000u), b.i32(0x7fc00000u)),
                    b.trunc(Type::I32, b.lshr(b.and_(e, b.i64(0xfffffffffffffull)), b.i32(29))));
    f = b.select(nan, nan_f, f);
    return done32(f, flags_float(f, false));
  }
  // G80 converter: the value (f16 widened) goes through an add of -0
  // (flushing, NaN -> 0x7fffffff), then sat, then rni..rzi.
  V x = raw;
  if (sb == 16) x = b.bitcast(Type::I32, b.ftof(Type::F32, b.bitcast(Type::F16, b.trunc(Type::I16, raw)), float_flags(false, false)));
  if (ab) x = band(x, 0x7fffffffu);
  if (n) x = b.xor_(x, b.i32(0x80000000u));
  V e = b.bitcast(Type::I32, b.fadd(b.bitcast(Type::F32, x), b.f32_bits(0x80000000u), float_flags(true, true)));
  if (sat) e = sat_keep_nan(e);
  if (rint) e = b.bitcast(Type::I32, b.fround(Opcode::FRint, b.bitcast(Type::F32, e), float_flags(false, false, ir_round(rm))));
  if (db == 16) {
    V h = f32_to_f16(e, rm, rint);
    return done32(h, flags_half(h));
  }
  return done32(e, flags_float(e));
}

}  // namespace gpurc::tesla::detail
