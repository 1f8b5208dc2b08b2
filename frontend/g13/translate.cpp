#include "frontend/g13/translate.h"

#include <cstdio>
#include <cstring>
#include <map>
#include <set>

#include "frontend/g13/g13.h"
#include "ir/builder.h"

namespace gpurc::g13 {
namespace {

using ir::Opcode;
using ir::Type;
using ir::ValueId;

std::string hex(uint64_t v) {
  char b[32];
  std::snprintf(b, sizeof b, "0x%llx", (unsigned long long)v);
  return b;
}

class Translator {
 public:
  Translator(ir::Function& f) : f_(f), b_(f) {}

  bool run(const uint8_t* code, size_t size, std::string& err);

 private:
  // A source as an integer of `bits` (16 or 32), zero- or sign-extended.
  bool src(const Operand& o, unsigned bits, bool sign, ValueId& v);
  ValueId exec();
  // A float source as F32: f16 widened exactly, f32 as is (compares use FtzIn),
  // minifloat immediates, abs then neg.
  bool fsrc(const Operand& o, ValueId& v);
  // Writes `v` (I16 or I32) to destination `d` in active lanes only.
  bool write(const Operand& d, ValueId v, ValueId ex);
  bool insn(const Insn& in, uint64_t pc, std::string& err);
  bool fail(const Insn& in, uint64_t pc, const std::string& why, std::string& err) {
    err = "g13 translate: " + in.desc->name + " at pc " + hex(pc) + ": " + why;
    return false;
  }
  ir::BlockId block_at(uint64_t pc) { return blocks_.at(pc); }

  ir::Function& f_;
  ir::Builder b_;
  std::map<uint64_t, ir::BlockId> blocks_;
  std::map<uint64_t, Insn> insns_;
  ir::BlockId end_block_ = 0;
};

bool Translator::src(const Operand& o, unsigned bits, bool sign, ValueId& v) {
  const Type t = ir::int_type(bits);
  ValueId x;
  unsigned from;
  switch (o.type) {
    case OpType::Imm: v = b_.constant(t, uint64_t(o.n) & 0xFFFF); return true;
    case OpType::Reg16:
      if (o.n > 255) return false;
      x = b_.emit(Opcode::Extract16, Type::I16, {b_.get_var(uint32_t(o.n >> 1))}, 0, 0, uint64_t(o.n & 1));
      from = 16;
      break;
    case OpType::Reg32:
      if (o.n > 127) return false;
      x = b_.get_var(uint32_t(o.n));
      from = 32;
      break;
    case OpType::UReg16:
      if (o.n > 511) return false;
      x = b_.load_uniform(Type::I16, uint32_t(o.n * 2));
      from = 16;
      break;
    case OpType::UReg32:
      if (o.n > 255) return false;
      x = b_.load_uniform(Type::I32, uint32_t(o.n * 4));
      from = 32;
      break;
    default:
      return false;
  }
  if (from < bits) x = b_.convert(sign ? Opcode::Sext : Opcode::Zext, t, x);
  else if (from > bits) x = b_.convert(Opcode::Trunc, t, x);
  v = x;
  return true;
}

bool Translator::fsrc(const Operand& o, ValueId& v) {
  if (o.type == OpType::Float) {
    const float f = float(o.fv);
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    v = b_.f32_bits(bits);
  } else if (o.type == OpType::Reg16 || o.type == OpType::UReg16) {
    ValueId raw;
    if (!src(o, 16, false, raw)) return false;
    v = b_.convert(Opcode::FToF, Type::F32, b_.emit(Opcode::Bitcast, Type::F16, {raw}));
  } else if (o.type == OpType::Reg32 || o.type == OpType::UReg32) {
    ValueId raw;
    if (!src(o, 32, false, raw)) return false;
    v = b_.emit(Opcode::Bitcast, Type::F32, {raw});
  } else {
    return false;
  }
  if (o.abs) v = b_.unary(Opcode::FAbs, v);
  if (o.neg) v = b_.unary(Opcode::FNeg, v);
  return true;
}

ValueId Translator::exec() {
  const ValueId r0l = b_.emit(Opcode::Extract16, Type::I16, {b_.get_var(0)}, 0, 0, 0);
  const ValueId zero = b_.icmp(ir::IntPred::Eq, r0l, b_.constant(Type::I16, 0));
  return b_.binary(Opcode::And, zero, b_.emit(Opcode::EntryMask, Type::I1, {}));
}

bool Translator::write(const Operand& d, ValueId v, ValueId ex) {
  if (d.type == OpType::Reg32 && d.n <= 127) {
    const ValueId old = b_.get_var(uint32_t(d.n));
    if (b_.type(v) != Type::I32) v = b_.convert(Opcode::Zext, Type::I32, v);
    b_.set_var(uint32_t(d.n), b_.select(ex, v, old));
    return true;
  }
  if (d.type == OpType::Reg16 && d.n <= 255) {
    const uint32_t reg = uint32_t(d.n >> 1);
    const ValueId old = b_.get_var(reg);
    if (b_.type(v) != Type::I16) v = b_.convert(Opcode::Trunc, Type::I16, v);
    const ValueId merged = b_.emit(Opcode::Insert16, Type::I32, {old, v}, 0, 0, uint64_t(d.n & 1));
    b_.set_var(reg, b_.select(ex, merged, old));
    return true;
  }
  return false;
}

bool Translator::insn(const Insn& in, uint64_t pc, std::string& err) {
  const std::string& n = in.desc->name;
  auto op = [&](const char* name) {
    for (const OperandDef& od : in.desc->operands)
      if (od.name == name) return decode_operand(in, od, pc);
    return Operand{};
  };
  const uint64_t next = pc + in.size;
  auto fallthrough = [&] { b_.br(blocks_.count(next) ? block_at(next) : end_block_); };

  if (n == "mov_imm") {
    const Operand D = op("D");
    const uint64_t v = in.has("imm32") ? in.f("imm32") : in.f("imm16");
    const ValueId ex = exec();
    if (!write(D, D.bits() == 32 ? b_.i32(uint32_t(v)) : b_.constant(Type::I16, v & 0xFFFF), ex))
      return fail(in, pc, "bad destination", err);
    fallthrough();
    return true;
  }
  if (n == "iadd") {
    const Operand D = op("D"), A = op("A"), B = op("B");
    if (in.f("S") || D.bits() > 32 || A.bits() > 32 || B.bits() > 32)
      return fail(in, pc, "saturating or 64-bit forms are not translated yet", err);
    const unsigned bits = D.bits();
    ValueId a, b;
    if (!src(A, bits, A.sx, a) || !src(B, bits, B.sx, b)) return fail(in, pc, "bad source", err);
    const unsigned shift = unsigned(in.f("s"));
    if (shift >= 5) b = b_.constant(ir::int_type(bits), 0);
    else if (shift) b = b_.binary(Opcode::Shl, b, b_.i32(shift));
    const ValueId r = b_.binary(in.f("N") ? Opcode::ISub : Opcode::IAdd, a, b);
    if (!write(D, r, exec())) return fail(in, pc, "bad destination", err);
    fallthrough();
    return true;
  }
  if (n == "bitop") {
    const Operand D = op("D"), A = op("A"), B = op("B");
    const unsigned bits = D.bits();
    ValueId a, b;
    if (!src(A, bits, false, a) || !src(B, bits, false, b)) return fail(in, pc, "bad source", err);
    const unsigned tt = unsigned(in.f("tt0") | in.f("tt1") << 1 | in.f("tt2") << 2 | in.f("tt3") << 3);
    ValueId r;
    if (tt == 0xC) r = b_.unary(Opcode::Not, a);       // table 0011: not A (docs/g13.md)
    else if (tt == 0x3) r = a;                           // table 1100: A
    else {
      // lut3 index = a<<2 | b<<1 | c with c = 0.
      const uint64_t lut = (tt & 1) | ((tt >> 1 & 1) << 4) | ((tt >> 2 & 1) << 2) | ((tt >> 3 & 1) << 6);
      r = b_.emit(Opcode::Lut3, ir::int_type(bits), {a, b, b_.constant(ir::int_type(bits), 0)}, 0, 0, lut);
    }
    if (!write(D, r, exec())) return fail(in, pc, "bad destination", err);
    fallthrough();
    return true;
  }
  const bool is_icmp = n == "icmpsel" || n == "if_icmp" || n == "else_icmp" || n == "while_icmp";
  const bool is_fcmp = n == "if_fcmp" || n == "else_fcmp" || n == "while_fcmp";
  if (is_icmp || is_fcmp) {
    const Operand A = op("A"), B = op("B");
    const unsigned cond = unsigned(in.f("cc") | in.f("ccn") << 3);
    ValueId c;
    if (is_icmp) {
      if ((cond & 3) == 3) return fail(in, pc, "undefined condition", err);
      const bool sign = cond & 4;
      ValueId a, b;
      if (!src(A, 32, sign, a) || !src(B, 32, sign, b)) return fail(in, pc, "bad source", err);
      static const ir::IntPred preds[2][3] = {{ir::IntPred::Eq, ir::IntPred::Ult, ir::IntPred::Ugt},
                                              {ir::IntPred::Eq, ir::IntPred::Slt, ir::IntPred::Sgt}};
      c = b_.icmp(preds[sign][cond & 3], a, b);
    } else {
      ValueId a, b;
      if (!fsrc(A, a) || !fsrc(B, b)) return fail(in, pc, "bad float source", err);
      const uint32_t ftz = ir::ff::FtzIn;
      switch (cond & 7) {
        case 0: c = b_.fcmp(ir::FloatPred::Oeq, a, b, ftz); break;
        case 1: c = b_.fcmp(ir::FloatPred::Olt, a, b, ftz); break;
        case 2: c = b_.fcmp(ir::FloatPred::Ogt, a, b, ftz); break;
        case 5: c = b_.fcmp(ir::FloatPred::Oge, a, b, ftz); break;
        case 6: c = b_.fcmp(ir::FloatPred::Ole, a, b, ftz); break;
        case 3: case 7: {  // NaN loses (docs/g13.md)
          const ValueId a_num = b_.fcmp(ir::FloatPred::Ord, a, a, ftz), b_nan = b_.fcmp(ir::FloatPred::Uno, b, b, ftz);
          const ValueId rel = b_.fcmp((cond & 7) == 3 ? ir::FloatPred::Olt : ir::FloatPred::Ogt, a, b, ftz);
          c = b_.binary(Opcode::And, a_num, b_.binary(Opcode::Or, b_nan, rel));
          break;
        }
        default: return fail(in, pc, "undefined float condition", err);
      }
    }
    if (cond & 8) c = b_.unary(Opcode::Not, c);
    if (n == "icmpsel") {
      const Operand D = op("D"), X = op("X"), Y = op("Y");
      ValueId x, y;
      if (!src(X, D.bits(), false, x) || !src(Y, D.bits(), false, y)) return fail(in, pc, "bad source", err);
      if (!write(D, b_.select(c, x, y), exec())) return fail(in, pc, "bad destination", err);
      fallthrough();
      return true;
    }
    // r0l nesting counter update on every launched lane (§4.6).
    const ValueId r0 = b_.get_var(0);
    const ValueId v = b_.emit(Opcode::Extract16, Type::I16, {r0}, 0, 0, 0);
    const ValueId nn = b_.constant(Type::I16, in.f("n"));
    const ValueId zero = b_.constant(Type::I16, 0), one = b_.constant(Type::I16, 1);
    ValueId nv;
    if (n == "if_icmp" || n == "if_fcmp") {
      const ValueId busy = b_.icmp(ir::IntPred::Ne, v, zero);
      nv = b_.select(busy, b_.binary(Opcode::IAdd, v, nn), b_.select(c, zero, one));
    } else if (n == "else_icmp" || n == "else_fcmp") {
      const ValueId is0 = b_.icmp(ir::IntPred::Eq, v, zero), is1 = b_.icmp(ir::IntPred::Eq, v, one);
      nv = b_.select(is0, nn, b_.select(is1, b_.select(c, zero, one), v));
    } else {
      const ValueId below = b_.icmp(ir::IntPred::Ult, v, nn);
      nv = b_.select(below, b_.select(c, zero, nn), v);
    }
    const ValueId merged = b_.emit(Opcode::Insert16, Type::I32, {r0, nv}, 0, 0, 0);
    b_.set_var(0, b_.select(b_.emit(Opcode::EntryMask, Type::I1, {}), merged, r0));
    fallthrough();
    return true;
  }
  if (n == "pop_exec") {
    const ValueId r0 = b_.get_var(0);
    const ValueId v = b_.emit(Opcode::Extract16, Type::I16, {r0}, 0, 0, 0);
    const ValueId nn = b_.constant(Type::I16, in.f("n"));
    const ValueId nv = b_.select(b_.icmp(ir::IntPred::Ugt, v, nn), b_.binary(Opcode::ISub, v, nn), b_.constant(Type::I16, 0));
    const ValueId merged = b_.emit(Opcode::Insert16, Type::I32, {r0, nv}, 0, 0, 0);
    b_.set_var(0, b_.select(b_.emit(Opcode::EntryMask, Type::I1, {}), merged, r0));
    fallthrough();
    return true;
  }
  if (n == "jmp_exec_any" || n == "jmp_exec_none") {
    const uint64_t target = uint64_t(decode_operand(in, in.desc->operands[0], pc).n);
    if (!blocks_.count(target)) return fail(in, pc, "branch target " + hex(target) + " is not an instruction", err);
    const ValueId any = b_.emit(Opcode::Any, Type::I1, {exec(), b_.emit(Opcode::EntryMask, Type::I1, {})});
    const ir::BlockId taken = block_at(target), not_taken = blocks_.count(next) ? block_at(next) : end_block_;
    if (n == "jmp_exec_any") b_.cond_br(any, taken, not_taken);
    else b_.cond_br(any, not_taken, taken);
    return true;
  }
  if (n == "stop") {
    b_.ret();
    return true;
  }
  return fail(in, pc, "not translated yet (the interpreter runs it)", err);
}

bool Translator::run(const uint8_t* code, size_t size, std::string& err) {
  f_.name = "g13";
  f_.uniform_bytes = kUniformBytes;
  for (unsigned r = 0; r < 128; ++r) f_.add_var("r" + std::to_string(r), Type::I32);
  // Decode everything reachable in order; one block per instruction keeps
  // branch targets trivially block starts (the passes merge straight lines).
  uint64_t pc = 0;
  while (pc < size) {
    Insn in;
    fe::Diagnostic d;
    if (!decode(code + pc, size - pc, pc, in, d)) {
      err = d.message;
      return false;
    }
    insns_[pc] = in;
    pc += in.size;
  }
  const ir::BlockId entry = f_.add_block("entry");
  for (const auto& [p, in] : insns_) blocks_[p] = f_.add_block("pc_" + hex(p));
  end_block_ = f_.add_block("end");
  b_.set_block(entry);
  b_.br(insns_.empty() ? end_block_ : blocks_.begin()->second);
  for (const auto& [p, in] : insns_) {
    b_.set_block(block_at(p));
    if (!insn(in, p, err)) return false;
  }
  b_.set_block(end_block_);
  b_.ret();  // running off the end behaves like stop
  f_.compute_preds();
  const std::string v = ir::verify(f_);
  if (!v.empty()) {
    err = "g13 translate: produced invalid IR: " + v;
    return false;
  }
  return true;
}

}  // namespace

bool translate(const uint8_t* code, size_t size, ir::Function& out, std::string& err) {
  out = ir::Function{};
  Translator t(out);
  return t.run(code, size, err);
}

}  // namespace gpurc::g13
