// Tesla translation: guest state access ($r, $a, $c flags), operands,
// result flags and predicate conditions.
#include "frontend/tesla/translate_impl.h"

namespace gpurc::tesla::detail {

bool Translator::set_areg(int n, V v) {
  if (areg_is_zero(n)) return true;
  if (n == 7) return unsupported("$a7 is one register per warp");
  v = b.and_(v, b.i32(0xffff));
  if (guarded_write()) v = b.select(guard, v, b.get_var(kVarA + unsigned(n)));
  b.set_var(kVarA + unsigned(n), v);
  return true;
}

V Translator::pack(V z, V sn, V c, V o) {
  V v = b.or_(b.or_(b.zext(Type::I32, z), shl(b.zext(Type::I32, sn), 1)),
              b.or_(shl(b.zext(Type::I32, c), 2), shl(b.zext(Type::I32, o), 3)));
  packs[v] = FlagBits{{z, sn, c, o}};
  return v;
}

void Translator::set_creg(int n, V v) {
  auto it = packs.find(v);
  FlagBits fb;
  for (unsigned k = 0; k < 4; ++k) fb.f[k] = it != packs.end() ? it->second.f[k] : ne0(band(v, 1u << k));
  for (unsigned k = 0; k < 4; ++k) {
    V x = fb.f[k];
    if (guarded_write()) x = b.select(guard, x, cflag(n, k));
    b.set_var(kVarC + 4 * unsigned(n & 3) + k, x);
  }
}

// Z=1 S=2 of an integer result of `bits` (16 or 32).
V Translator::flags_int(V res, unsigned bits, V C, V O) {
  V m = bits == 16 ? band(res, 0xffff) : res;
  V sn = bits == 16 ? ne0(bit(m, 15)) : b.icmp(ir::IntPred::Slt, m, b.i32(0));
  return pack(eq0(m), sn, C == ir::kNoValue ? b.i1(false) : C, O == ir::kNoValue ? b.i1(false) : O);
}

// The flags of a comparison with 0 (sem::flags_float, nvhw fp32_cmp with
// flushing): +-0 and denormals give Z only, NaN gives Z and S, a negative
// number S.
V Translator::flags_float(V res, bool ftz) {
  V mag = band(res, 0x7fffffffu);
  V nan = b.icmp(ir::IntPred::Ugt, mag, b.i32(0x7f800000u));
  V zero = ftz ? b.icmp(ir::IntPred::Ult, mag, b.i32(0x00800000u)) : eq0(mag);
  V z = b.or_(nan, zero);
  V s = b.or_(nan, b.and_(b.not_(zero), b.icmp(ir::IntPred::Slt, res, b.i32(0))));
  return pack(z, s, b.i1(false), b.i1(false));
}

// sem::flags_double: only +-0 is zero.
V Translator::flags_double(V res64) {
  V mag = b.and_(res64, b.i64(0x7fffffffffffffffull));
  V nan = b.icmp(ir::IntPred::Ugt, mag, b.i64(0x7ff0000000000000ull));
  V zero = b.icmp(ir::IntPred::Eq, mag, b.i64(0));
  V z = b.or_(nan, zero);
  V s = b.or_(nan, b.and_(b.not_(zero), b.icmp(ir::IntPred::Slt, res64, b.i64(0))));
  return pack(z, s, b.i1(false), b.i1(false));
}

// sat of an f32 result (bits): [0, 1], a NaN stays NaN (sem::fsat). The
// IR's Sat flag turns NaN into 0, so the clamp is done here.
V Translator::sat_keep_nan(V res) {
  V mag = band(res, 0x7fffffffu);
  V nan = b.icmp(ir::IntPred::Ugt, mag, b.i32(0x7f800000u));
  V negative = b.icmp(ir::IntPred::Slt, res, b.i32(0));
  V big = b.icmp(ir::IntPred::Uge, res, b.i32(0x3f800000u));
  V clamped = b.select(negative, b.i32(0), b.select(big, b.i32(0x3f800000u), res));
  return b.select(nan, res, clamped);
}

// The 32 predicate conditions of a $c register (sem::pred).
// Most conditions come from pred(), whose codes such as "ne" are `not` of
// a flag; inverting those gives the flag back instead of a double negation
// no pass folds (a uniform branch on it costs a vector op per strip).
V Translator::negate(V c) {
  const ir::Inst& in = f.insts[c];
  if (in.op == Opcode::Not && in.type == Type::I1) return in.args[0];
  return b.not_(c);
}

V Translator::pred(int creg_n, unsigned code) {
  if (code == 15) return b.i1(true);
  V Z = cflag(creg_n, 0), S = cflag(creg_n, 1), C = cflag(creg_n, 2), O = cflag(creg_n, 3);
  auto NOT = [&](V x) { return b.not_(x); };
  auto AND = [&](V x, V y) { return b.and_(x, y); };
  auto OR = [&](V x, V y) { return b.or_(x, y); };
  auto XOR = [&](V x, V y) { return b.xor_(x, y); };
  switch (code) {
    case 0x01: return XOR(AND(S, NOT(Z)), O);
    case 0x02: return AND(Z, NOT(S));
    case 0x03: return XOR(S, OR(Z, O));
    case 0x04: return AND(NOT(Z), NOT(XOR(S, O)));
    case 0x05: return NOT(Z);
    case 0x06: return NOT(XOR(S, O));
    case 0x07: return OR(NOT(Z), NOT(S));
    case 0x08: return AND(Z, S);
    case 0x09: return XOR(S, O);
    case 0x0a: return Z;
    case 0x0b: return OR(Z, XOR(S, O));
    case 0x0c: return XOR(NOT(S), OR(Z, O));
    case 0x0d: return OR(NOT(Z), S);
    case 0x0e: return XOR(OR(NOT(S), Z), O);
    case 0x10: return O;
    case 0x11: return C;
    case 0x12: return AND(NOT(Z), C);
    case 0x13: return S;
    case 0x1c: return NOT(S);
    case 0x1d: return OR(Z, NOT(C));
    case 0x1e: return NOT(C);
    case 0x1f: return NOT(O);
    default: return b.i1(false);
  }
}

bool Translator::read(const Operand* o, V& out) {
  if (!o) return fail("missing operand");
  switch (o->kind) {
    case OKind::Reg:
      out = reg(o->reg);
      if (o->size == RSize::H) out = o->high ? band(shr(out, 16), 0xffff) : low_half(out);
      return true;
    case OKind::Imm: out = b.i32(uint32_t(o->imm)); return true;
    case OKind::AReg: out = areg(o->reg); return true;
    case OKind::CReg: out = creg(o->reg); return true;
    case OKind::Mem: {
      std::string mode = cur->name_before(o);
      unsigned bytes = o->access;
      bool sign = false;
      if (o->space == 's' || (o->space == 'c' && (mode == "u8" || mode == "u16" || mode == "s16" || mode == "b32"))) {
        if (mode == "u8") bytes = 1;
        else if (mode == "u16") bytes = 2;
        else if (mode == "s16") bytes = 2, sign = true;
        else if (mode == "b32") bytes = 4;
      }
      if (bytes != 1 && bytes != 2 && bytes != 4) return unsupported("memory operand size");
      if (abi_load(*o, bytes, out)) {
      } else if (!load(*o, address(*o), bytes, out)) {
        return false;
      }
      if (sign) out = b.sext(Type::I32, b.trunc(Type::I16, out));
      return true;
    }
    default: return fail("operand " + format_operand(*o) + " cannot be read");
  }
}

bool Translator::read64(const Operand* o, V& out) {
  if (o && o->kind == OKind::Reg && o->size == RSize::D) {
    V lo = b.zext(Type::I64, reg(o->reg));
    V hi = b.zext(Type::I64, reg(o->reg + 1));
    out = b.or_(lo, b.shl(hi, b.i32(32), ir::ShiftMode::Clamp));
    return true;
  }
  V v;
  if (!read(o, v)) return false;
  out = b.zext(Type::I64, v);
  return true;
}

bool Translator::write(const Operand* o, V v) {
  if (!o) return true;
  switch (o->kind) {
    case OKind::Reg:
      if (o->size == RSize::H) {
        V old = reg(o->reg);
        unsigned sh = o->high ? 16 : 0;
        V nv = b.or_(band(old, ~(0xffffu << sh)), shl(band(v, 0xffff), sh));
        set_reg(o->reg, nv);
      } else {
        set_reg(o->reg, v);
      }
      return true;
    case OKind::Discard: return true;
    case OKind::Mem: {
      // o[] destination, as the interpreter: a 16-bit result is duplicated
      // into both halves of its aligned 32-bit word.
      V a = address(*o);
      if (o->access == 2) {
        a = b.and_(a, b.i64(~uint64_t(3)));
        v = b.imul(band(v, 0xffff), b.i32(0x10001u));
      }
      return store(*o, a, 4, v);
    }
    default: return fail("operand " + format_operand(*o) + " cannot be written");
  }
}

bool Translator::write64(const Operand* o, V v) {
  if (o && o->kind == OKind::Reg && o->size == RSize::D) {
    set_reg(o->reg, b.trunc(Type::I32, v));
    set_reg(o->reg + 1,
            b.trunc(Type::I32, b.lshr(v, b.i32(32), ir::ShiftMode::Clamp)));
    return true;
  }
  return write(o, b.trunc(Type::I32, v));
}

// neg/abs/not modifier names before and after source 1 (print order).
void Translator::side_flags(const char* name, bool out[2]) {
  out[0] = out[1] = false;
  int side = 0;
  for (auto& a : cur->atoms) {
    if (a.type == Atom::Opnd && a.op.role == Role::Src1) side = 1;
    if (a.type == Atom::Name && a.name == name) out[side] = true;
  }
}

}  // namespace gpurc::tesla::detail
