// Tesla translation: integer, float, double and transcendental arithmetic,
// compares and selects, quad ops, votes (memory instructions: translate_memory.cpp,
// cvt: translate_cvt.cpp).
#include "frontend/tesla/translate_impl.h"

namespace gpurc::tesla::detail {

// 24-bit multiply: the low 32 bits of the product, or (high) bits 16..47.
// The low word is the 32-bit product of the extended operands (arithmetic
// mod 2^32), so only `high` needs the 64-bit product.
V Translator::mul24(V x, V y, bool sg, bool high) {
  auto ext = [&](V v) {
    return low_bits(v, 24, sg);
  };
  if (!high) return b.imul(ext(x), ext(y));
  auto wide = [&](V v) { return b.convert(sg ? Opcode::Sext : Opcode::Zext, Type::I64, ext(v)); };
  V prod = b.imul(wide(x), wide(y));
  prod = b.lshr(prod, b.i32(16), ir::ShiftMode::Clamp);
  return b.trunc(Type::I32, prod);
}

// Sum, carry and signed overflow of x + y + cin over `bits` (16 or 32; x
// and y zero-extended to i32). Written with ops every JIT tier has natively
// (icarry/ioverflow go through a per-lane helper there): the carry is the
// sum wrapping below x (or reaching it with a carry in), the overflow the
// sign rule ((x ^ s) & (y ^ s)) < 0.
void Translator::add_flags(V x, V y, V cin, unsigned bits, V& res, V& C, V& O) {
  V sum = b.iadd(b.iadd(x, y), b.zext(Type::I32, cin));
  V ovf = b.and_(b.xor_(x, sum), b.xor_(y, sum));
  if (bits == 16) {
    res = band(sum, 0xffff);
    C = ne0(bit(sum, 16));
    O = ne0(bit(ovf, 15));
    return;
  }
  res = sum;
  V wrapped = b.icmp(ir::IntPred::Ult, sum, x);
  C = b.or_(wrapped, b.and_(cin, b.icmp(ir::IntPred::Eq, sum, x)));
  O = b.icmp(ir::IntPred::Slt, ovf, b.i32(0));
}

bool Translator::int_add() {
  const Insn& in = *cur;
  const Operand* dst = in.find(Role::Dst);
  const Operand* s1 = in.find(Role::Src1);
  const Operand* s2 = in.find(Role::Src2);
  const Operand* s3 = in.find(Role::Src3);
  bool mad = in.op == Op::IMad;
  bool b16 = in.has("b16") || in.has("u16") || in.has("s16");
  unsigned bits = (!mad && b16) ? 16 : 32;
  uint32_t m = bits == 16 ? 0xffffu : 0xffffffffu;
  int opk = in.has("sub") ? 1 : in.has("subr") ? 2 : in.has("addc") ? 3 : 0;
  const Operand* a = s1;
  const Operand* bo = s2 ? s2 : s3;
  const Operand* c = mad ? in.addend() : nullptr;
  if (mad && !in.is_long) bo = s2;
  V x, y;
  if (mad) {
    V p1, p2;
    if (!read(a, p1) || !read(bo, p2)) return false;
    if (in.has("u24") || in.has("s24")) {
      x = mul24(p1, p2, in.has("s24"), in.has("high"));
    } else {
      bool sg = in.has("s16");
      auto ext16 = [&](V v) {
        return low_bits(v, 16, sg);
      };
      x = b.imul(ext16(p1), ext16(p2));
    }
    if (!read(c, y)) return false;
  } else {
    if (!read(a, x) || !read(bo, y)) return false;
    x = band(x, m);
    y = band(y, m);
  }
  V s1v = x, s2v = y, cin = b.i1(false);
  if (opk == 1) s2v = band(b.not_(y), m), cin = b.i1(true);
  if (opk == 2) s1v = band(b.not_(x), m), cin = b.i1(true);
  if (opk == 3) {
    const Operand* cond = in.find(Role::Cond);
    cin = cflag(cond ? cond->reg : 0, 2);
  }
  V res, C, O;
  add_flags(s1v, s2v, cin, bits, res, C, O);
  if (in.has("sat")) {
    V neg = ne0(bit(res, bits - 1));
    res = b.select(O, sel32(neg, m >> 1, 1u << (bits - 1)), res);
  }
  V fl = flags_add(res, bits, C, O);
  if (!write(dst, res)) return false;
  set_flags(fl);
  return true;
}

bool Translator::alu() {
  const Insn& in = *cur;
  const Operand* dst = in.find(Role::Dst);
  const Operand* s1 = in.find(Role::Src1);
  const Operand* s2 = in.find(Role::Src2);
  const Operand* s3 = in.find(Role::Src3);
  auto has = [&](const char* n) { return in.has(n); };
  bool b16 = has("b16") || has("u16") || has("s16");
  V x, y, z;
  switch (in.op) {
    case Op::Mov: {
      unsigned lm = 0xf;
      if (in.is_long && !in.is_imm) lm = unsigned((in.bits >> 46) & 0xf);
      if (!read(s1 ? s1 : s2, x)) return false;
      if (lm != 0xf) {
        // Lane mask: only lanes whose quad position is enabled write.
        V q = band(b.lane_id(), 3);
        V en = ne0(band(b.lshr(b.i32(lm), q, ir::ShiftMode::Clamp), 1));
        V saved = guard;
        guard = saved == ir::kNoValue ? en : b.and_(saved, en);
        bool ok = write(dst, x);
        guard = saved;
        return ok;
      }
      return write(dst, x);
    }
    case Op::MovFromC: return write(dst, creg(in.find(Role::Cond)->reg));
    case Op::MovFromA: return write(dst, areg(in.find(Role::ASrc)->reg));
    case Op::MovFromSr:
      if (s1->reg == 3) return write(dst, b.i32(0x20));
      if (s1->reg == 0 || s1->reg == 1) return unsupported("physid/clock are not translated");
      return write(dst, b.i32(0));
    case Op::MovToC:
      if (!read(s1, x)) return false;
      set_creg(in.find(Role::CDst)->reg, band(x, 15));
      return true;
    case Op::ShlA:
      if (!read(s1, x)) return false;
      return set_areg(in.find(Role::ADst)->reg, shl(x, unsigned(s2->imm & 31)));
    case Op::AddA:
      return set_areg(in.find(Role::ADst)->reg, b.iadd(areg(in.find(Role::ASrc)->reg), b.i32(uint32_t(s2->imm))));
    case Op::IAdd:
    case Op::IMad: return int_add();
    case Op::Mul16:
    case Op::Mul24: {
      std::vector<std::string> sg;
      for (auto& nm : in.names())
        if (nm == "u16" || nm == "s16" || nm == "u24" || nm == "s24") sg.push_back(nm);
      if (!read(s1, x) || !read(s2, y)) return false;
      V res;
      if (in.op == Op::Mul16) {
        bool g1 = !sg.empty() && sg[0] == "s16";
        bool g2 = sg.size() > 1 && sg.back() == "s16";
        if (s1 && s1->kind == OKind::Mem && sg.size() >= 3) g2 = sg[2] == "s16";
        auto ext = [&](V v, bool s) {
          return low_bits(v, 16, s);
        };
        res = b.imul(ext(x, g1), ext(y, g2));
      } else {
        bool g = !sg.empty() && sg[0] == "s24";
        res = mul24(x, y, g, has("high"));
      }
      if (!write(dst, res)) return false;
      set_flags(flags_int(res, 32));
      return true;
    }
    case Op::Sad: {
      bool sg = has("s16") || has("s32");
      unsigned bits = (has("u16") || has("s16")) ? 16 : 32;
      uint32_t m = bits == 16 ? 0xffffu : 0xffffffffu;
      const Operand* c = in.addend();
      if (!read(s1, x) || !read(s2, y) || !read(c, z)) return false;
      auto ext = [&](V v) {
        return low_bits(v, bits, sg);
      };
      V ex = ext(x), ey = ext(y);
      V mres = band(b.isad(sg ? ir::Sign::Signed : ir::Sign::Unsigned, ex, ey, b.i32(0)), m);
      // Source 3, the sum and its flags are 32 bits in both forms (sem).
      V res, C, O;
      add_flags(mres, z, b.i1(false), 32, res, C, O);
      if (!write(dst, res)) return false;
      set_flags(flags_add(res, 32, C, O));
      return true;
    }
    case Op::IMin:
    case Op::IMax:
    case Op::ISet: {
      bool sg = has("s16") || has("s32");
      unsigned bits = b16 ? 16 : 32;
      uint32_t m = bits == 16 ? 0xffffu : 0xffffffffu;
      static const char* cn[8] = {"never", "l", "e", "le", "g", "lg", "ge", "always"};
      unsigned cond = 0;
      for (unsigned i = 0; i < 8; ++i)
        if (has(cn[i])) cond = i;
      if (!read(s1, x) || !read(s2, y)) return false;
      x = band(x, m);
      y = band(y, m);
      auto ext = [&](V v) {  // 32 bits: already the value
        return bits == 32 ? v : low_bits(v, bits, sg);
      };
      V ea = ext(x), eb = ext(y);
      V res;
      if (in.op == Op::ISet) {
        // One compare per condition (l e le g lg ge), and the flags of the
        // all-ones / zero result straight from it: Z = !t, S = t (bit 15 or
        // 31 of the result is t), C = O = 0 (what flags_int gives).
        using P = ir::IntPred;
        static const P sp[8] = {P::Eq, P::Slt, P::Eq, P::Sle, P::Sgt, P::Ne, P::Sge, P::Eq};
        static const P up[8] = {P::Eq, P::Ult, P::Eq, P::Ule, P::Ugt, P::Ne, P::Uge, P::Eq};
        V t = cond == 0 ? b.i1(false) : cond == 7 ? b.i1(true) : b.icmp(sg ? sp[cond] : up[cond], ea, eb);
        res = b.select(t, b.i32(m), b.i32(0));
        if (!write(dst, res)) return false;
        set_flags(pack(negate(t), t, b.i1(false), b.i1(false)));
        return true;
      }
      V lt = b.icmp(sg ? ir::IntPred::Slt : ir::IntPred::Ult, ea, eb);
      if (in.op == Op::IMin) {
        res = b.select(lt, x, y);
      } else {
        res = b.select(lt, y, x);
      }
      if (!write(dst, res)) return false;
      set_flags(flags_int(res, bits));
      return true;
    }
    case Op::LogOp: {
      unsigned bits = b16 ? 16 : 32;
      uint32_t m = bits == 16 ? 0xffffu : 0xffffffffu;
      int k = has("and") ? 0 : has("or") ? 1 : has("xor") ? 2 : 3;
      bool nt[2];
      side_flags("not", nt);
      if (!read(s1, x) || !read(s2, y)) return false;
      if (nt[0]) x = b.not_(x);
      if (nt[1]) y = b.not_(y);
      V r = k == 0 ? b.and_(x, y) : k == 1 ? b.or_(x, y) : k == 2 ? b.xor_(x, y) : y;
      r = band(r, m);
      if (!write(dst, r)) return false;
      set_flags(flags_int(r, bits));
      return true;
    }
    case Op::Shl:
    case Op::Shr: {
      unsigned bits = b16 ? 16 : 32;
      uint32_t m = bits == 16 ? 0xffffu : 0xffffffffu;
      bool sg = has("s16") || has("s32");
      if (!read(s1, x) || !read(s2, y)) return false;  // shift counts are not masked
      x = band(x, m);
      V res, C;
      V in_range = b.and_(ne0(y), b.icmp(ir::IntPred::Ult, y, b.i32(bits)));
      auto sh = [&](Opcode op, V v, V n) { return b.binary(op, v, n, uint8_t(ir::ShiftMode::Clamp)); };
      if (in.op == Op::Shl) {
        res = band(sh(Opcode::Shl, x, y), m);
        C = band(sh(Opcode::LShr, x, b.isub(b.i32(bits), y)), 1);
      } else {
        V sx = sg ? low_bits(x, bits, true) : x;
        res = band(sh(sg ? Opcode::AShr : Opcode::LShr, sx, y), m);
        C = band(sh(Opcode::LShr, x, b.isub(y, b.i32(1))), 1);
      }
      C = b.select(in_range, C, b.i32(0));
      V O = b.zext(Type::I32, b.and_(b.icmp(ir::IntPred::Eq, y, b.i32(1)),
                                     b.icmp(ir::IntPred::Ne, bit(x, bits - 1), bit(res, bits - 1))));
      if (!write(dst, res)) return false;
      set_flags(flags_int(res, bits, ne0(C), ne0(O)));
      return true;
    }
    case Op::FAdd:
    case Op::FMul:
    case Op::FMad: {
      bool ng[2];
      side_flags("neg", ng);
      bool rz = has("rz"), sat = has("sat");
      const Operand* bo = in.op == Op::FAdd ? (s2 ? s2 : s3) : s2;
      if (!read(s1, x) || !read(bo, y)) return false;
      V ri;
      ir::Round rnd = rz ? ir::Round::TowardZero : ir::Round::NearestEven;
      if (in.op == Op::FMad) {
        const Operand* c = in.addend();
        if (!read(c, z)) return false;
        if (ng[0]) x = b.xor_(x, b.i32(0x80000000u));
        if (ng[1]) z = b.xor_(z, b.i32(0x80000000u));
        ri = fmad(x, y, z);
      } else if (in.op == Op::FAdd && ng[0] != ng[1]) {
        // One negated addend: x + (-y) is x - y by IEEE 754's definition of
        // subtraction, also for zeros, flushed inputs (the flush keeps the
        // sign) and either rounding; NaN results are canonical. One op
        // instead of a sign xor and an add.
        if (ng[0]) std::swap(x, y);
        V r = b.binary(Opcode::FSub, b.bitcast(Type::F32, x), b.bitcast(Type::F32, y), 0, float_flags(true, true, rnd));
        ri = b.bitcast(Type::I32, r);
      } else {
        if (ng[0]) x = b.xor_(x, b.i32(0x80000000u));
        if (ng[1]) y = b.xor_(y, b.i32(0x80000000u));
        V r = b.binary(in.op == Op::FAdd ? Opcode::FAdd : Opcode::FMul, b.bitcast(Type::F32, x), b.bitcast(Type::F32, y),
                       0, float_flags(true, true, rnd));
        ri = b.bitcast(Type::I32, r);
      }
      if (sat) ri = sat_keep_nan(ri);
      if (!write(dst, ri)) return false;
      set_flags(flags_float(ri));
      return true;
    }
    case Op::QuadOp: {
      // Each lane reads source 1 of one lane of its quad (l0..l3, or its
      // neighbour: dx = lane ^ 1, dy = lane ^ 2) whether that lane runs this
      // code or not, and applies the operation of its own quad position.
      // get_var reads every lane's register; after lowering, masked writes
      // keep the values of lanes that are off this path (diverged or
      // exited), and lanes that were never launched read 0, as the
      // interpreter's never-launched threads (see docs/tesla.md).
      static const char* ops[4] = {"add", "subr", "sub", "mov2"};
      unsigned qop[4] = {}, k = 0;
      for (auto& n : in.names())
        for (unsigned i = 0; i < 4; ++i)
          if (n == ops[i] && k < 4) qop[k++] = i;
      uint32_t neg_a = 0, neg_b = 0, mov = 0;  // per quad position
      for (unsigned q = 0; q < 4; ++q) {
        if (qop[q] == 1) neg_a |= 1u << q;
        if (qop[q] == 2) neg_b |= 1u << q;
        if (qop[q] == 3) mov |= 1u << q;
      }
      V q = band(b.lane_id(), 3);
      V idx = has("dx") ? b.xor_(q, b.i32(1)) : has("dy") ? b.xor_(q, b.i32(2))
                        : b.i32(has("l1") ? 1 : has("l2") ? 2 : has("l3") ? 3 : 0);
      if (!read(s1, x) || !read(s3, y)) return false;
      V launched = b.entry_mask();
      V a = b.quad_shuffle(b.select(launched, x, b.i32(0)), idx);
      auto lane_bit = [&](uint32_t m) {
        return band(b.lshr(b.i32(m), q, ir::ShiftMode::Clamp), 1);
      };
      V sa = shl(lane_bit(neg_a), 31), sb = shl(lane_bit(neg_b), 31);
      // mov2 is source 3 + +0 through the same adder: its source 1 term
      // becomes +0 in those lanes (-0 and flushed negatives give +0, NaN
      // 0x7fffffff).
      V sum = b.bitcast(Type::I32, b.fadd(b.bitcast(Type::F32, b.select(ne0(lane_bit(mov)), b.i32(0), b.xor_(a, sa))),
                                          b.bitcast(Type::F32, b.xor_(y, sb)), float_flags(true, true)));
      // dx/dy in a compute program give +0 (hwtest g80_fp, configuration
      // bit clear); other program types read the quad neighbour.
      V r = (has("dx") || has("dy")) && opt.target.ptype == kCP ? b.i32(0) : sum;
      if (!write(dst, r)) return false;
      set_flags(flags_float(r));
      return true;
    }
    case Op::FSet:
    case Op::FMin:
    case Op::FMax:
    case Op::DSet:
    case Op::DMin:
    case Op::DMax: {
      bool dbl = in.op == Op::DSet || in.op == Op::DMin || in.op == Op::DMax;
      bool ng[2], ab[2];
      side_flags("neg", ng);
      side_flags("abs", ab);
      static const char* cn[16] = {"never", "l", "e", "le", "g", "lg", "ge", "lge",
                                   "u", "lu", "eu", "leu", "gu", "lgu", "geu", "always"};
      unsigned cond = 0;
      for (unsigned i = 0; i < 16; ++i)
        if (has(cn[i])) cond = i;
      V fa, fb;
      if (dbl) {
        if (!read64(s1, x) || !read64(s2, y)) return false;
        fa = b.bitcast(Type::F64, x), fb = b.bitcast(Type::F64, y);
      } else {
        if (!read(s1, x) || !read(s2, y)) return false;
        fa = b.bitcast(Type::F32, x), fb = b.bitcast(Type::F32, y);
      }
      if (ab[0]) fa = b.fabs(fa);
      if (ng[0]) fa = b.fneg(fa);
      if (ab[1]) fb = b.fabs(fb);
      if (ng[1]) fb = b.fneg(fb);
      uint32_t ftz = dbl ? 0 : ir::ff::FtzIn;
      if (in.op == Op::FSet || in.op == Op::DSet) {
        static const ir::FloatPred fp[16] = {
            ir::FloatPred::Oeq, ir::FloatPred::Olt, ir::FloatPred::Oeq, ir::FloatPred::Ole, ir::FloatPred::Ogt,
            ir::FloatPred::One, ir::FloatPred::Oge, ir::FloatPred::Ord, ir::FloatPred::Uno, ir::FloatPred::Ult,
            ir::FloatPred::Ueq, ir::FloatPred::Ule, ir::FloatPred::Ugt, ir::FloatPred::Une, ir::FloatPred::Uge,
            ir::FloatPred::Oeq};
        V t = cond == 0 ? b.i1(false) : cond == 15 ? b.i1(true) : b.fcmp(fp[cond], fa, fb, ftz);
        V r = sel32(t, 0xffffffffu, 0);
        if (!write(dst, r)) return false;
        set_flags(flags_int(r, 32));
        return true;
      }
      bool mn = in.op == Op::FMin || in.op == Op::DMin;
      uint32_t fl = ir::with_nan(ftz, ir::NanRule::AllOnes);
      V r = b.binary(mn ? Opcode::FMin : Opcode::FMax, fa, fb, uint8_t(ir::MinMaxNan::NumberWins), fl);
      if (dbl) {
        V ri = b.bitcast(Type::I64, r);
        // Two NaNs: source 2 as read, quieted (sem, nvhw fp64_minmax).
        ri = b.select(b.and_(is_nan64(x), is_nan64(y)), b.or_(y, b.i64(1ull << 51)), ri);
        if (!write64(dst, ri)) return false;
        set_flags(flags_double(ri));
      } else {
        V ri = b.bitcast(Type::I32, r);
        if (!write(dst, ri)) return false;
        set_flags(flags_float(ri));
      }
      return true;
    }
    case Op::FSlct: {
      if (!read(s3, z)) return false;
      if (has("neg")) z = b.xor_(z, b.i32(0x80000000u));
      V ge = b.fcmp(ir::FloatPred::Oge, b.bitcast(Type::F32, z), b.f32_bits(0), ir::ff::FtzIn);
      if (!read(s1, x) || !read(s2, y)) return false;
      V r = b.select(ge, x, y);
      if (!write(dst, r)) return false;
      // The integer flags, except that -0 counts as zero (hwtest g80_fp).
      set_flags(flags_int(b.select(b.icmp(ir::IntPred::Eq, r, b.i32(0x80000000u)), b.i32(0), r), 32));
      return true;
    }
    case Op::Rcp:
    case Op::Rsqrt:
    case Op::Lg2:
    case Op::Sin:
    case Op::Cos:
    case Op::Ex2:
    case Op::PreSin:
    case Op::PreEx2: {
      if (!read(s1, x)) return false;
      if (has("abs")) x = band(x, 0x7fffffffu);
      if (has("neg")) x = b.xor_(x, b.i32(0x80000000u));
      bool sat = false;  // applied below, keeping NaN (sem::fsat)
      const ir::Transc tesla = ir::Transc::Tesla;
      V fx = b.bitcast(Type::F32, x), r;
      // Float inputs flush; the fixed-point side (sin/cos/ex2 inputs,
      // presin/preex2 results) must not, as small fixed values look subnormal.
      switch (in.op) {
        case Op::Rcp: r = b.transc(Opcode::FRcp, tesla, fx, float_flags(true, true, ir::Round::NearestEven, sat)); break;
        case Op::Rsqrt: r = b.transc(Opcode::FRsqrt, tesla, fx, float_flags(true, true, ir::Round::NearestEven, sat)); break;
        case Op::Lg2: r = b.transc(Opcode::FLog2, tesla, fx, float_flags(true, true, ir::Round::NearestEven, sat)); break;
        case Op::Sin: r = b.transc(Opcode::FSin, tesla, fx, float_flags(false, false, ir::Round::NearestEven, sat)); break;
        case Op::Cos: r = b.transc(Opcode::FCos, tesla, fx, float_flags(false, false, ir::Round::NearestEven, sat)); break;
        case Op::Ex2: r = b.transc(Opcode::FExp2, tesla, fx, float_flags(false, false, ir::Round::NearestEven, sat)); break;
        default:
          r = b.fsin_step(tesla, fx, b.f32_bits(in.op == Op::PreSin ? 0 : 1),
                          float_flags(false, false, ir::Round::NearestEven, sat));
          break;
      }
      V ri = b.bitcast(Type::I32, r);
      if (has("sat")) ri = sat_keep_nan(ri);
      return write(dst, ri);
    }
    case Op::Cvt: return cvt();
    case Op::DAdd:
    case Op::DMul:
    case Op::DFma: {
      bool ng[2];
      side_flags("neg", ng);
      ir::Round rnd = has("rm") ? ir::Round::Down : has("rp") ? ir::Round::Up : has("rz") ? ir::Round::TowardZero
                                                                                          : ir::Round::NearestEven;
      uint32_t fl = float_flags(false, false, rnd);
      if (!read64(s1, x)) return false;
      V fa = b.bitcast(Type::F64, x);
      if (ng[0]) fa = b.fneg(fa);
      V r;
      if (in.op == Op::DAdd) {
        if (!read64(s3, z)) return false;
        V fb = b.bitcast(Type::F64, z);
        if (ng[1]) fb = b.fneg(fb);
        r = b.fadd(fa, fb, fl);
      } else if (in.op == Op::DMul) {
        if (!read64(s2, y)) return false;
        r = b.fmul(fa, b.bitcast(Type::F64, y), fl);
      } else {
        if (!read64(s2, y) || !read64(s3, z)) return false;
        V fc = b.bitcast(Type::F64, z);
        if (ng[1]) fc = b.fneg(fc);
        r = b.ffma(fa, b.bitcast(Type::F64, y), fc, fl);
      }
      // NaN results as sem (nvhw): a NaN operand as read, quieted, in the
      // order source 2, source 3, source 1; else 0xfff8000000000000.
      V ri = b.bitcast(Type::I64, r);
      ri = b.select(is_nan64(ri), b.i64(0xfff8000000000000ull), ri);
      const uint64_t quiet = 1ull << 51;
      ri = b.select(is_nan64(x), b.or_(x, b.i64(quiet)), ri);
      if (in.op != Op::DMul) ri = b.select(is_nan64(z), b.or_(z, b.i64(quiet)), ri);
      if (in.op != Op::DAdd) ri = b.select(is_nan64(y), b.or_(y, b.i64(quiet)), ri);
      if (!write64(dst, ri)) return false;
      set_flags(flags_double(ri));
      return true;
    }
    case Op::LdC:
    case Op::LdS:
    case Op::LdA:
    case Op::StS:
    case Op::StO:
    case Op::LdL:
    case Op::StL:
    case Op::LdG:
    case Op::StG:
    case Op::RedG:
    case Op::AtomG: return memory();
    case Op::VoteAny:
    case Op::VoteAll: {
      // The predicate is the input, over the active lanes; true -> $c = 0, false -> Z.
      V p = pred(in.pred_c, unsigned(in.pred));
      V r = in.op == Op::VoteAny ? b.any(p, b.i1(true)) : b.all(p, b.i1(true));
      V saved = guard;
      guard = ir::kNoValue;
      set_flags(sel32(r, 0, 1));
      guard = saved;
      return true;
    }
    case Op::Nop:
    case Op::PmEvent: return true;
    default: return unsupported("not translated yet");
  }
}

// The MAD of almost every lane in three float ops. When the product of the
// flushed factors, rounded to nearest, lies in [2^-100, 2^127) and source 3
// is a finite normal, sem::fmad is the product truncated to 24
// bits (which, inside the normal range, is exactly the product rounded
// toward zero) plus source 3 rounded once: the IEEE add of the host (the
// sum cannot be a denormal or a NaN there). The truncation is computed from the nearest-rounded
// product and its exact error (an fma of the factors minus it: exact since
// the product's exponent is at least -101, so the error's bits are above
// 2^-149): when the error is nonzero and of the other sign, rounding went
// away from zero and the truncated product is the next float toward zero
// (its bits minus one; a product rounded up to a power of two steps back
// to the largest float below it). Both tiers lower this to a few vector
// ops, where an `fmul` rounding toward zero is one op on AVX-512 but an
// MXCSR switch per strip on AVX2. NaN, inf or zero factors, a product
// outside that range and a source 3 that is a zero, a denormal, an inf or a
// NaN fail the test: if an active lane
// does, a uniform any() vote branches to fmad_exact, whose result those
// lanes take. Inside a loop the exact form stays straight-line (a branch
// would split the loop body, which the backends run much slower).
bool Translator::inside_loop(uint32_t p) {
  if (!back_edges_known) {
    back_edges_known = true;
    std::set<uint32_t> covered;
    for (auto& [t, srcs] : sources)
      for (int64_t s : srcs)
        if (s >= int64_t(t)) back_edges.push_back({t, uint32_t(s)}), covered.insert(t);
    // Call targets and ret/brk sites (the other loop heads): a subroutine
    // may run inside a caller's loop, so everything from there on counts.
    for (uint32_t h : loop_heads)
      if (!covered.count(h)) back_edges.push_back({h, ~0u});
  }
  for (auto& [t, s] : back_edges)
    if (t <= p && p <= s) return true;
  return false;
}

V Translator::fmad(V x, V y, V z) {
  if (inside_loop(pc)) return fmad_exact(x, y, z);
  auto F = [&](V v) { return b.bitcast(Type::F32, v); };
  auto I = [&](V v) { return b.bitcast(Type::I32, v); };
  V fx = F(x), fy = F(y);
  // Only the product reads its factors flushed: in a lane that passes the
  // test below no operand of the residual and the sum is a denormal (the
  // factors are not, or the flushed product would be zero; the product is
  // at least 2^-100; z's exponent is not zero), so their input flush changes
  // nothing there, and the other lanes take the exact form's result. They
  // get FtzIn only where that is free (mad_daz_flags: the whole function
  // flushes, so the x64 tiers run it in DAZ mode); elsewhere the host would
  // flush x and y a second time.
  // NanRule::Any on the three ops: a NaN product (NaN, inf * 0 or inf
  // factors), whatever its bits, has the exponent field 0xff and fails
  // `in_range` below; a NaN residual comes only from such a product; the
  // sum of a lane that passes is never a NaN. So every lane whose value is
  // a NaN takes the exact form's result, and the x64 tiers leave out the
  // three NaN tests (and fixes) the AllOnes rule costs.
  auto any_nan = [](uint32_t fl) { return ir::with_nan(fl, ir::NanRule::Any); };
  // (Each bitcast comes after its operand's last other reader, so the x64
  // tiers give it the operand's register instead of a copy: the product's
  // after the residual, z's after its range test.)
  V p = b.fmul(fx, fy, any_nan(float_flags(true, false)));
  V err = I(mad_op(b.ffma(fx, fy, b.fneg(p), any_nan(float_flags(false, false)))));
  V pn = I(p);
  // Rounded away from zero: the error has the other sign than the product
  // and is not a zero. With s = pn >> 31 (arithmetic: 0 or -1), (err ^ s) -
  // s is err's bits, negated as an integer when pn is negative, so its sign
  // bit says "away" (err is never -0 in a lane that passes the test: the
  // residual of a nonzero product of normals is exact), and that sign, as 0
  // or -1, steps the product one float toward zero (a product rounded up to
  // a power of two steps back to the largest float below it). No constant
  // but the shift count: the exact block does not read any of them.
  V s = b.ashr(pn, b.i32(31));
  V pt = b.iadd(pn, b.ashr(b.isub(b.xor_(err, s), s), b.i32(31)));
  // The product in [2^-100, 2^127): its exponent field in [0x1b, 0xfe),
  // pn << 1 (no sign) in [0x1b000000, 0xfe000000) unsigned, as a signed
  // compare (AVX2 has no unsigned one): biased by 0x80000000 - 0xfe000000,
  // the range ends at the largest signed value, so `x > C` (AVX2 reads C
  // from the constant pool for that form).
  V in_range = b.icmp(ir::IntPred::Sgt, b.iadd(shl(pn, 1), b.i32(0x82000000u)), b.i32(0x9cffffffu));
  // z finite and not a zero or denormal: its exponent field in [1, 0xff),
  // z << 1 in [0x01000000, 0xff000000), biased so that range ends at the
  // largest signed value: z << 1 plus 0x81000000 above 0x81ffffff. Then the
  // sum is never a NaN and never a denormal (both operands normal, |pt| >=
  // 2^-101: a cancelling sum is a nonzero multiple of 2^-125 or a zero), so
  // it needs no output flush. (Shifts rather than masks, and constants of
  // their own: a constant the exact block also reads would be stored to the
  // frame in every strip of this one.)
  V common = b.and_(in_range, b.icmp(ir::IntPred::Sgt, b.iadd(shl(z, 1), b.i32(0x81000000u)), b.i32(0x81ffffffu)));
  V r = I(mad_op(b.fadd(F(pt), F(z), any_nan(float_flags(false, false)))));
  const ir::BlockId exact = f.add_block(), join = f.add_block();
  b.set_var(kVarMadResult, r);
  b.cond_br(b.any(b.not_(common), mask()), exact, join);
  b.set_block(exact);
  b.set_var(kVarMadResult, b.select(common, r, fmad_exact(x, y, z)));
  b.br(join);
  b.set_block(join);
  return b.get_var(kVarMadResult);
}

// mad_float_ops get FtzIn when the rest of the function's float ops read
// their operands flushed and none reads floats in a way a host's
// "denormals are zero" mode would change (f64 arithmetic, conversions
// between float types, the SFU's functions, a compare of f64). Then the
// x64 tiers run the function in DAZ mode, where FtzIn costs nothing
// (backend_x64/lower_float.cpp, daz_eligible); otherwise FtzIn on these ops
// would add flushes of operands that are never denormal where it matters.
// Either way every lane that takes a MAD's result gets the same bits.
void Translator::mad_daz_flags() {
  if (mad_float_ops.empty()) return;
  std::vector<uint8_t> mad(f.insts.size(), 0);
  for (V v : mad_float_ops) mad[v] = 1;
  for (V v = 0; v < V(f.insts.size()); ++v) {
    const ir::Inst& in = f.insts[v];
    if (in.block == ir::kNoBlock || mad[v]) continue;
    const bool ftz = in.fflags & ir::ff::FtzIn;
    switch (in.op) {
      case Opcode::FAdd: case Opcode::FSub: case Opcode::FMul: case Opcode::FFma:
      case Opcode::FMin: case Opcode::FMax: case Opcode::FFloor: case Opcode::FCeil: case Opcode::FTrunc:
      case Opcode::FRint:
        if (in.type != Type::F32 || !ftz || ((in.fflags & ir::ff::Sat) && !(in.fflags & ir::ff::FtzOut))) return;
        break;
      case Opcode::FCmp:
        if (f.insts[in.args[0]].type != Type::F32) return;
        break;
      case Opcode::FToI: {
        const ir::Round m = ir::round_mode(in.fflags);
        if (f.insts[in.args[0]].type != Type::F32 ||
            (!ftz && m != ir::Round::TowardZero && m != ir::Round::NearestEven))
          return;
        break;
      }
      case Opcode::FMad: case Opcode::FRcp: case Opcode::FRsqrt: case Opcode::FExp2: case Opcode::FLog2:
      case Opcode::FSqrt: case Opcode::FSin: case Opcode::FCos: case Opcode::FSinStep: case Opcode::FToF:
        return;
      default: break;
    }
  }
  for (V v : mad_float_ops) f.insts[v].fflags |= ir::ff::FtzIn;
}

// fmad as sem::fmad (nvhw fp32_mad) in native f32 ops: the hardware
// truncates the product to 24 bits with an unbounded exponent and rounds
// the sum once. A product in the float range is what an RZ fmul gives, so
// most lanes need nothing more; a product that overflows (|a b| >= 2^127 as
// truncated) or underflows (< 2^-100) is computed scaled: a (or the smaller
// factor) and source 3 by 2^-64 (2^+64), the sum, then the result by the
// inverse power, which is exact or is the overflow / flush the hardware's
// final rounding gives. Scaling is exact where it applies (the scaled
// factor stays normal); a source 3 that leaves the range when scaled is
// negligible beside the product (overflow side: its bits are > 60 below
// the sum's ulp) or is the result (underflow side: |c| >= 2^64 > the
// product by 2^164). One result the 24-bit rounding of the scaled sum
// gets wrong: a value in [2^-126 - 2^-150, 2^-126 - 2^-151), which the
// hardware rounds at denormal precision up to 2^-126; TwoSum's exact
// error tells those apart. When source 3 is zero the hardware rounds a
// plain mul to nearest and adds it.
V Translator::fmad_exact(V x, V y, V z) {
  auto flush = [&](V v) { return b.select(eq0(band(v, 0x7f800000u)), band(v, 0x80000000u), v); };
  auto F = [&](V v) { return b.bitcast(Type::F32, v); };
  auto I = [&](V v) { return b.bitcast(Type::I32, v); };
  const uint32_t none = float_flags(false, false);
  x = flush(x);
  y = flush(y);
  z = flush(z);
  V fx = F(x), fy = F(y), fz = F(z);
  // Which lanes need the scaled computation.
  V p0 = I(mad_op(b.fmul(fx, fy, float_flags(false, false, ir::Round::TowardZero))));
  V pmag = band(p0, 0x7fffffffu);
  // Infinite or NaN factors are not scaled (inf * 2^-64 * tiny would be
  // NaN): those lanes need no scaling.
  V finite = b.and_(b.icmp(ir::IntPred::Ult, band(x, 0x7fffffffu), b.i32(0x7f800000u)),
                    b.icmp(ir::IntPred::Ult, band(y, 0x7fffffffu), b.i32(0x7f800000u)));
  V over = b.and_(finite, b.icmp(ir::IntPred::Uge, pmag, b.i32(0x7f000000u)));  // >= 2^127
  V under = b.icmp(ir::IntPred::Ult, pmag, b.i32(0x0d800000u));  // < 2^-100 (zero too)
  V x_smaller = b.icmp(ir::IntPred::Ult, band(x, 0x7fffffffu), band(y, 0x7fffffffu));
  const V up = b.f32_bits(0x5f800000u), down = b.f32_bits(0x1f800000u);  // 2^64, 2^-64
  V one = b.f32_bits(0x3f800000u);
  // Overflow: both factors by 2^-64 (each is above 2^-1, the product lands
  // in [2^-1, 2^128)), source 3 by 2^-128, the result back by 2^128, each
  // in two exact steps. Underflow: the smaller factor by 2^64 (it is below
  // 2^-50), source 3 by 2^64, the result by 2^-64.
  V fx_scale = b.select(over, down, b.select(b.and_(under, x_smaller), up, one));
  V fy_scale = b.select(over, down, b.select(b.and_(under, b.not_(x_smaller)), up, one));
  V z_scale = b.select(over, down, b.select(under, up, one));
  V z_scale2 = b.select(over, down, one);
  V back = b.select(over, up, b.select(under, down, one));
  V back2 = b.select(over, up, one);
  V sx = mad_op(b.fmul(fx, fx_scale, none)), sy = mad_op(b.fmul(fy, fy_scale, none));
  V sz = mad_op(b.fmul(mad_op(b.fmul(fz, z_scale, none)), z_scale2, none));
  V prod = mad_op(b.fmul(sx, sy, float_flags(false, false, ir::Round::TowardZero)));
  V sum = mad_op(b.fadd(prod, sz, none));
  V r = I(mad_op(b.fmul(mad_op(b.fmul(sum, back, none)), back2, float_flags(false, true))));
  V sum_i = I(sum);
  // Underflow lanes whose scaled sum is below 2^-62 flush (the scaling back
  // would round them at denormal precision first).
  V tiny = b.and_(under, b.icmp(ir::IntPred::Ult, band(sum_i, 0x7fffffffu), b.i32(0x20800000u)));
  r = b.select(tiny, band(sum_i, 0x80000000u), r);
  // The denormal-precision rounding up to 2^-126 (scaled: 2^-62) of a sum
  // just below it: the sum rounded to the float below 2^-62 and the exact
  // value (TwoSum's error) is at or above that float.
  V bb = mad_op(b.fsub(sum, prod, none));
  V err = mad_op(b.fadd(mad_op(b.fsub(prod, mad_op(b.fsub(sum, bb, none)), none)), mad_op(b.fsub(sz, bb, none)), none));
  V err_i = I(err);
  V at_edge = b.and_(under, b.icmp(ir::IntPred::Eq, band(sum_i, 0x7fffffffu), b.i32(0x207fffffu)));
  V err_ok = b.or_(eq0(band(err_i, 0x7fffffffu)), eq0(band(b.xor_(err_i, sum_i), 0x80000000u)));
  r = b.select(b.and_(at_edge, err_ok), b.or_(band(sum_i, 0x80000000u), b.i32(0x00800000u)), r);
  // Underflowing product beside a finite source 3 too big to scale: source 3.
  V zmag = band(z, 0x7fffffffu);
  V z_big = b.and_(b.icmp(ir::IntPred::Uge, zmag, b.i32(0x5f800000u)), b.icmp(ir::IntPred::Ule, zmag, b.i32(0x7f800000u)));
  r = b.select(b.and_(under, z_big), z, r);
  // Source 3 zero: a rounded mul, then the add (its zero-sign rule).
  V zc = eq0(band(z, 0x7fffffffu));
  V plain = I(mad_op(b.fadd(mad_op(b.fmul(fx, fy, float_flags(false, true))), fz, float_flags(false, true))));
  return b.select(zc, plain, r);
}

}  // namespace gpurc::tesla::detail
