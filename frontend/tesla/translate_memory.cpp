// Tesla translation: addresses of the memory spaces (launch_abi.h's memory
// map), loads, stores, atomics and the launch ABI block the entry writes.
#include "frontend/tesla/translate_impl.h"

namespace gpurc::tesla::detail {

// Byte address (i64) of a memory operand; post-increments are queued.
V Translator::address(const Operand& o) {
  if (o.space == 'g') {
    unsigned idx = unsigned(o.idx < 0 ? 0 : o.idx) & 15;
    if (!(opt.own_global_spaces >> idx & 1)) idx = 0;  // the linear memory below 4 GiB
    V a64 = b.zext(Type::I64, reg(o.greg));
    return idx == 0 ? a64 : b.or_(a64, b.i64(global_address(idx, 0)));
  }
  V base = o.areg > 0 ? areg(o.areg) : b.i32(0);
  V a;
  if (o.postinc) {
    postinc.push_back(PostInc{o.areg, o.offset});
    a = band(base, 0xffff);
  } else {
    a = band(b.iadd(base, b.i32(uint32_t(o.offset))), 0xffff);
  }
  V a64 = b.zext(Type::I64, a);
  if (o.space == 'c') return b.or_(a64, b.i64(const_address(unsigned(o.idx < 0 ? 0 : o.idx), 0)));
  return a64;  // l[]: bounds and the thread's base are applied by checked()
}

// Final address for an access of `bytes`: misaligned and (l[]) out-of-range
// accesses go to kUnbackedAddress.
V Translator::checked(const Operand& o, V a64, unsigned bytes) {
  // The alignment test on the 32-bit offset the address is made of (a zext,
  // or one with an aligned space base ORed in): i32 ops stay in vector
  // registers, where i64 ones go through the frame on the x64 tiers.
  V low = a64;
  if (f.insts[low].op == Opcode::Or && f.insts[f.insts[low].args[1]].op == Opcode::Const &&
      (f.insts[f.insts[low].args[1]].imm & 0xffffffffu) == 0)
    low = f.insts[low].args[0];
  V bad = f.insts[low].op == Opcode::Zext && f.insts[f.insts[low].args[0]].type == Type::I32
              ? ne0(band(f.insts[low].args[0], bytes - 1))
              : b.icmp(ir::IntPred::Ne, b.and_(a64, b.i64(bytes - 1)), b.i64(0));
  V a = a64;
  if (o.space == 'l') {
    V end = b.iadd(a64, b.i64(bytes));
    bad = b.or_(bad, b.icmp(ir::IntPred::Ugt, end, b.i64(opt.lmem)));
    a = b.iadd(a64, b.get_var(kVarLocalBase));
  } else if (o.space == 'a' || o.space == 'o') {
    // a[] (inputs) and o[] (outputs): attr_bytes per thread, beside each other.
    V end = b.iadd(a64, b.i64(bytes));
    bad = b.or_(bad, b.icmp(ir::IntPred::Ugt, end, b.i64(opt.attr_bytes)));
    a = b.iadd(a64, b.get_var(kVarAttrBase));
    if (o.space == 'o') a = b.iadd(a, b.i64(kOutDelta));
  }
  return b.select(bad, b.i64(kUnbackedAddress), a);
}

bool Translator::space_of(const Operand& o, ir::Space& s) {
  switch (o.space) {
    case 'g': s = ir::Space::Global; return true;
    case 'c': s = ir::Space::Const; return true;
    case 's': s = ir::Space::Shared; return true;
    case 'l': s = ir::Space::Local; return true;
    case 'a': s = ir::Space::Local; return true;  // checked() adds attr_base
    case 'o': s = ir::Space::Local; return true;
    default: return unsupported("v[]/p[] spaces are not translated (a[] and o[] are)");
  }
}

// Loads `bytes` (1, 2, 4, 8) as an i32 (zero-extended) or i64.
bool Translator::load(const Operand& o, V a64, unsigned bytes, V& out) {
  ir::Space s = ir::Space::Global;
  if (!space_of(o, s)) return false;
  V a = checked(o, a64, bytes);
  Type t = bytes == 1 ? Type::I8 : bytes == 2 ? Type::I16 : bytes == 4 ? Type::I32 : Type::I64;
  V v = b.load(t, s, ir::AddrClass::Random, a, mask());
  out = bytes < 4 ? b.zext(Type::I32, v) : v;
  return true;
}

bool Translator::abi_load(const Operand& o, unsigned bytes, V& out) {
  if (!abi_stable || o.space != 's' || o.postinc || !areg_is_zero(o.areg)) return false;
  uint32_t a = uint32_t(o.offset) & 0xffff;
  if (a % bytes != 0 || a + bytes > 0x10 + opt.param_bytes) return false;
  if (a >= 0xc && a < 0x10) {
    out = b.get_var(kVarCtaid);
    if (bytes < 4) out = band(shr(out, 8 * (a - 0xc)), bytes == 1 ? 0xffu : 0xffffu);
    return true;
  }
  Type t = bytes == 1 ? Type::I8 : bytes == 2 ? Type::I16 : Type::I32;
  out = b.load_uniform(t, a);
  if (bytes < 4) out = b.zext(Type::I32, out);
  return true;
}

bool Translator::store(const Operand& o, V a64, unsigned bytes, V v) {
  ir::Space s = ir::Space::Global;
  if (!space_of(o, s)) return false;
  V a = checked(o, a64, bytes);
  if (bytes < 4) v = b.trunc(bytes == 1 ? Type::I8 : Type::I16, v);
  b.store(s, ir::AddrClass::Random, a, v, mask());
  return true;
}

bool Translator::memory() {
  const Insn& in = *cur;
  const Operand* dst = in.find(Role::Dst);
  const Operand* s2 = in.find(Role::Src2);
  const Operand* s3 = in.find(Role::Src3);
  const Operand* mem = in.find(Role::Mem);
  auto has = [&](const char* n) { return in.has(n); };
  V x;
  switch (in.op) {
    case Op::LdC:
    case Op::LdS:
    case Op::LdA:
      if (!read(mem, x)) return false;
      return write(dst, x);
    case Op::StS:
    case Op::StO: {
      unsigned bytes = has("b8") ? 1 : has("b16") ? 2 : 4;
      if (!read(s3, x)) return false;
      return store(*mem, address(*mem), bytes, x);
    }
    case Op::LdL:
    case Op::StL:
    case Op::LdG:
    case Op::StG: {
      static const char* sz[7] = {"u8", "s8", "u16", "s16", "b32", "b64", "b128"};
      static const unsigned bytes_of[7] = {1, 1, 2, 2, 4, 8, 16};
      auto names = in.names();
      int k = -1;
      for (int i = 0; i < 7 && k < 0; ++i)
        if (names.size() > 1 && names[1] == sz[i]) k = i;
      if (k < 0) return unsupported("unknown size");
      unsigned bytes = bytes_of[k];
      bool st = in.op == Op::StL || in.op == Op::StG;
      V a = address(*mem);
      if (bytes == 16) {
        // Two 8-byte halves, both checked against the 16-byte alignment first.
        V bad = b.icmp(ir::IntPred::Ne, b.and_(a, b.i64(15)), b.i64(0));
        a = b.select(bad, b.i64(kUnbackedAddress), a);
        if (mem->space == 'l') {
          V over = b.icmp(ir::IntPred::Ugt, b.iadd(a, b.i64(16)), b.i64(opt.lmem));
          a = b.select(over, b.i64(kUnbackedAddress), a);
        }
      }
      unsigned chunks = bytes == 16 ? 2 : 1, cb = bytes == 16 ? 8 : bytes;
      std::vector<V> loaded;
      for (unsigned i = 0; i < chunks; ++i) {
        V ai = i == 0 ? a : b.iadd(a, b.i64(8 * i));  // the bare address: checked() tests its 32-bit offset
        if (st) {
          V v;
          if (cb == 8) {
            V lo = b.zext(Type::I64, reg(dst->reg + int(2 * i)));
            V hi = b.zext(Type::I64, reg(dst->reg + int(2 * i) + 1));
            v = b.or_(lo, b.shl(hi, b.i32(32), ir::ShiftMode::Clamp));
          } else {
            v = reg(dst->reg);
          }
          if (!store(*mem, ai, cb, v)) return false;
        } else {
          V v;
          if (!load(*mem, ai, cb, v)) return false;
          loaded.push_back(v);
        }
      }
      if (st) return true;
      if (bytes <= 4) {
        V v = loaded[0];
        if (k == 1) v = b.sext(Type::I32, b.trunc(Type::I8, v));
        if (k == 3) v = b.sext(Type::I32, b.trunc(Type::I16, v));
        set_reg(dst->reg, v);
      } else {
        for (unsigned i = 0; i < chunks; ++i) {
          V v = loaded[i];
          set_reg(dst->reg + int(2 * i), b.trunc(Type::I32, v));
          set_reg(dst->reg + int(2 * i) + 1,
                  b.trunc(Type::I32, b.lshr(v, b.i32(32), ir::ShiftMode::Clamp)));
        }
      }
      return true;
    }
    case Op::RedG:
    case Op::AtomG: {
      bool is64 = has("u64") || has("b64");
      bool sg = has("s32");
      std::string opn;
      for (auto& nm : in.names())
        if (nm == "add" || nm == "inc" || nm == "dec" || nm == "max" || nm == "min" || nm == "and" || nm == "or" ||
            nm == "xor" || nm == "exch" || nm == "cas")
          opn = nm;
      const Operand* val = in.op == Op::RedG ? dst : s2;
      const Operand* cmp = opn == "cas" ? s2 : nullptr;
      if (opn == "cas") val = s3;
      unsigned bytes = is64 ? 8 : 4;
      V v, c;
      if (is64) {
        if (!read64(val, v)) return false;
      } else if (!read(val, v)) {
        return false;
      }
      if (cmp) {
        if (is64) {
          if (!read64(cmp, c)) return false;
        } else if (!read(cmp, c)) {
          return false;
        }
      }
      V a = checked(*mem, address(*mem), bytes);
      V old;
      if (opn == "cas") {
        old = b.atomic_cas(ir::Space::Global, a, c, v, mask());
      } else {
        ir::AtomicOp op;
        if (opn == "add") op = ir::AtomicOp::Add;
        else if (opn == "inc") op = ir::AtomicOp::Inc;
        else if (opn == "dec") op = ir::AtomicOp::Dec;
        else if (opn == "max") op = sg ? ir::AtomicOp::SMax : ir::AtomicOp::UMax;
        else if (opn == "min") op = sg ? ir::AtomicOp::SMin : ir::AtomicOp::UMin;
        else if (opn == "and") op = ir::AtomicOp::And;
        else if (opn == "or") op = ir::AtomicOp::Or;
        else if (opn == "xor") op = ir::AtomicOp::Xor;
        else if (opn == "exch") op = ir::AtomicOp::Exch;
        else return unsupported("unknown atomic operation");
        if (is64 && opn != "add" && opn != "exch" && opn != "cas")
          return unsupported("64-bit atomic other than add/exch/cas");
        old = b.atomic(op, ir::Space::Global, a, v, mask());
      }
      if (in.op == Op::AtomG) return is64 ? write64(dst, old) : write(dst, old);
      return true;
    }
    default: return unsupported("not a memory instruction");
  }
}

// The launch ABI block in s[]: written once per block by its first thread.
void Translator::write_abi_block() {
  V writer = ne0(b.get_var(kVarAbiWriter));
  uint32_t n = 0x10 + opt.param_bytes;
  for (uint32_t off = 0; off < n;) {
    unsigned bytes = n - off >= 4 ? 4 : 1;
    Type t = bytes == 4 ? Type::I32 : Type::I8;
    V v = off == 0xc ? b.get_var(kVarCtaid) : b.load_uniform(t, off);
    b.store(ir::Space::Shared, ir::AddrClass::Uniform, b.i64(off), v, writer);
    off += bytes;
  }
}

}  // namespace gpurc::tesla::detail
