// Native lowering of state, select, integer and 64-bit move ops. Narrow
// integer lanes (i1/i8/i16) live zero-extended in 32-bit lanes; every result
// is masked back to its width so it stays canonical.
#include "backend_x64/emitter.h"

#include <cstddef>

namespace gpurc::x64 {

using namespace ir;
using namespace Xbyak;

#define CTX(field) (rbx + int(offsetof(WarpContext, field)))

bool Emitter::lower_native(ValueId v) {
  const Inst& in = f_.insts[v];
  bool any_wide = in.type != ir::Type::Void && lane_bytes(in.type) == 8;
  for (ValueId a : in.args) any_wide = any_wide || wide(a);
  if (any_wide) return lower_wide(v);
  switch (in.op) {
    case Opcode::Const: {
      int d = def(v);
      bcast_const(d, uint32_t(in.imm & type_mask(in.type)));
      return true;
    }
    case Opcode::Undef: {
      int d = def(v);
      vxor(d, d, d);  // unspecified; zero keeps runs deterministic
      return true;
    }
    case Opcode::LoadVar: {
      if (in.imm >= f_.vars.size()) throw CompileError("x64 jit: load_var of unknown var " + std::to_string(in.imm));
      int d = def(v);
      vload(d, var_mem(uint32_t(in.imm)));
      mask_to_width(d, in.type);
      return true;
    }
    case Opcode::StoreVar: {
      if (in.imm >= f_.vars.size()) throw CompileError("x64 jit: store_var of unknown var " + std::to_string(in.imm));
      int s = use(in.args[0]);
      vstore(var_mem(uint32_t(in.imm)), s);
      return true;
    }
    case Opcode::LoadUniform: {
      unsigned bytes = in.type == ir::Type::I1 ? 1 : bit_width(in.type) / 8;
      int d = def(v);
      Label ok;
      if (in.imm <= f_.uniform_bytes && f_.uniform_bytes - in.imm >= bytes) {
        test(r15, r15);
        jnz(ok, T_NEAR);
      }
      emit_fault_return(FaultKind::OutOfBounds, v, in.imm, uint32_t(Space::Const));
      L(ok);
      if (bytes == 4) {
        vpbroadcastd(V(d), dword[r15 + int(in.imm)]);
      } else {
        if (bytes == 1) movzx(eax, byte[r15 + int(in.imm)]);
        else movzx(eax, word[r15 + int(in.imm)]);
        if (in.type == ir::Type::I1) {
          test(eax, eax);
          setne(al);
          movzx(eax, al);
        }
        bcast_gpr(d, eax);
      }
      return true;
    }
    case Opcode::EntryMask: {
      int d = def(v);
      mov(eax, dword[CTX(entry_mask)]);
      mov(ecx, r14d);
      shr(ecx, 2);
      shr(eax, cl);
      bcast_gpr(d, eax);
      vpsrlvd(V(d), V(d), ptr[rip + iota_]);
      mask_to_width(d, ir::Type::I1);
      return true;
    }
    case Opcode::LaneId: {
      int d = def(v);
      mov(eax, r14d);
      shr(eax, 2);
      bcast_gpr(d, eax);
      vpaddd(V(d), V(d), ptr[rip + iota_]);
      return true;
    }
    case Opcode::Select: {
      int c = use(in.args[0]), a = use(in.args[1]), b = use(in.args[2]);
      int d = def(v);
      select_bits(d, c, a, b);
      return true;
    }
    case Opcode::FNeg: case Opcode::FAbs: {
      if (in.type != ir::Type::F32 && in.type != ir::Type::F16) return false;
      uint32_t sign = in.type == ir::Type::F32 ? 0x80000000u : 0x8000u;
      int a = use(in.args[0]);
      int d = def(v);
      if (in.op == Opcode::FNeg) {
        if (z_) vpxord(V(d), V(a), ptr_b[rip + const32_[sign]]);
        else vpxor(V(d), V(a), const_vec(sign));
      } else {
        uint32_t keep = uint32_t(type_mask(in.type)) & ~sign;
        if (z_) vpandd(V(d), V(a), ptr_b[rip + const32_[keep]]);
        else vpand(V(d), V(a), const_vec(keep));
      }
      return true;
    }
    default: break;
  }
  const OpInfo& info = op_info(in.op);
  if (info.uses_fflags || in.op == Opcode::FNeg || in.op == Opcode::FAbs) return lower_float(v);
  return lower_int(v);
}

bool Emitter::lower_int(ValueId v) {
  const Inst& in = f_.insts[v];
  ir::Type t = in.type;
  unsigned w = bit_width(t);
  auto arg = [&](int i) { return use(in.args[size_t(i)]); };
  switch (in.op) {
    case Opcode::IAdd: case Opcode::ISub: case Opcode::IMul: {
      int a = arg(0), b = arg(1), d = def(v);
      if (in.op == Opcode::IAdd) vpaddd(V(d), V(a), V(b));
      else if (in.op == Opcode::ISub) vpsubd(V(d), V(a), V(b));
      else vpmulld(V(d), V(a), V(b));
      mask_to_width(d, t);
      return true;
    }
    case Opcode::IAddC: {
      int a = arg(0), b = arg(1), c = arg(2), d = def(v);
      vpaddd(V(d), V(a), V(b));
      vpaddd(V(d), V(d), V(c));
      mask_to_width(d, t);
      return true;
    }
    case Opcode::IMad: {
      int a = arg(0), b = arg(1), c = arg(2), d = def(v);
      vpmulld(V(d), V(a), V(b));
      vpaddd(V(d), V(d), V(c));
      mask_to_width(d, t);
      return true;
    }
    case Opcode::INeg: {
      int a = arg(0), d = def(v);
      vxor(0, 0, 0);
      vpsubd(V(d), V(0), V(a));
      mask_to_width(d, t);
      return true;
    }
    case Opcode::IAbs: {
      int a = arg(0), d = def(v);
      sext_to32(0, a, t);
      vpabsd(V(d), V(0));
      mask_to_width(d, t);
      return true;
    }
    case Opcode::And: case Opcode::Or: case Opcode::Xor: {
      int a = arg(0), b = arg(1), d = def(v);
      if (in.op == Opcode::And) vand(d, a, b);
      else if (in.op == Opcode::Or) vor(d, a, b);
      else vxor(d, a, b);
      return true;
    }
    case Opcode::Not: {
      int a = arg(0), d = def(v);
      uint32_t m = uint32_t(type_mask(t));
      if (z_) vpxord(V(d), V(a), ptr_b[rip + const32_[m]]);
      else vpxor(V(d), V(a), const_vec(m));
      return true;
    }
    case Opcode::Shl: case Opcode::LShr: case Opcode::AShr: {
      int a = arg(0), c = arg(1), d = def(v);
      int cnt = c, src = a;
      if (ShiftMode(in.attr) == ShiftMode::Mask) {
        if (z_) vpandd(V(1), V(c), ptr_b[rip + const32_[w - 1]]);
        else vpand(V(1), V(c), const_vec(w - 1));
        cnt = 1;
      }
      if (in.op == Opcode::AShr) {
        sext_to32(0, a, t);
        src = 0;
      }
      if (in.op == Opcode::Shl) vpsllvd(V(d), V(src), V(cnt));
      else if (in.op == Opcode::LShr) vpsrlvd(V(d), V(src), V(cnt));
      else vpsravd(V(d), V(src), V(cnt));
      mask_to_width(d, t);
      return true;
    }
    case Opcode::ICmp: {
      ir::Type at = f_.insts[in.args[0]].type;
      IntPred p = IntPred(in.attr);
      bool is_signed = p == IntPred::Slt || p == IntPred::Sle || p == IntPred::Sgt || p == IntPred::Sge;
      int a = arg(0), b = arg(1), d = def(v);
      if (is_signed && bit_width(at) < 32) {
        sext_to32(0, a, at);
        sext_to32(1, b, at);
        a = 0;
        b = 1;
      }
      if (z_) {
        static const uint8_t kImm[] = {0, 4, 1, 2, 6, 5, 1, 2, 6, 5};
        uint8_t imm = kImm[size_t(p)];
        if (p >= IntPred::Ult) vpcmpud(k1, V(a), V(b), imm);
        else vpcmpd(k1, V(a), V(b), imm);
        bool_from_k(d, 1);
        return true;
      }
      if (p >= IntPred::Ult) {  // unsigned via a signed compare of sign-flipped values
        vpxor(V(0), V(a), const_vec(0x80000000u));
        vpxor(V(1), V(b), const_vec(0x80000000u));
        a = 0;
        b = 1;
      }
      switch (p) {
        case IntPred::Eq: vpcmpeqd(V(d), V(a), V(b)); bool_from_cmp_avx2(d, false); break;
        case IntPred::Ne: vpcmpeqd(V(d), V(a), V(b)); bool_from_cmp_avx2(d, true); break;
        case IntPred::Sgt: case IntPred::Ugt: vpcmpgtd(V(d), V(a), V(b)); bool_from_cmp_avx2(d, false); break;
        case IntPred::Slt: case IntPred::Ult: vpcmpgtd(V(d), V(b), V(a)); bool_from_cmp_avx2(d, false); break;
        case IntPred::Sle: case IntPred::Ule: vpcmpgtd(V(d), V(a), V(b)); bool_from_cmp_avx2(d, true); break;
        case IntPred::Sge: case IntPred::Uge: vpcmpgtd(V(d), V(b), V(a)); bool_from_cmp_avx2(d, true); break;
      }
      return true;
    }
    case Opcode::IMin: case Opcode::IMax: {
      bool is_signed = Sign(in.attr) == Sign::Signed;
      int a = arg(0), b = arg(1), d = def(v);
      if (is_signed && w < 32) {
        sext_to32(0, a, t);
        sext_to32(1, b, t);
        a = 0;
        b = 1;
      }
      bool is_min = in.op == Opcode::IMin;
      if (is_signed) is_min ? vpminsd(V(d), V(a), V(b)) : vpmaxsd(V(d), V(a), V(b));
      else is_min ? vpminud(V(d), V(a), V(b)) : vpmaxud(V(d), V(a), V(b));
      mask_to_width(d, t);
      return true;
    }
    case Opcode::Zext: case Opcode::Trunc: case Opcode::Bitcast: {
      int a = arg(0), d = def(v);
      vmov(d, a);
      mask_to_width(d, t);
      return true;
    }
    case Opcode::Sext: {
      int a = arg(0), d = def(v);
      sext_to32(d, a, f_.insts[in.args[0]].type);
      mask_to_width(d, t);
      return true;
    }
    case Opcode::Extract16: {
      int a = arg(0), d = def(v);
      if (in.imm & 1) {
        vpsrld(V(d), V(a), 16);
      } else {
        vmov(d, a);
        mask_to_width(d, ir::Type::I16);
      }
      return true;
    }
    case Opcode::Insert16: {
      int a = arg(0), b = arg(1), d = def(v);
      bool high = in.imm & 1;
      uint32_t keep = high ? 0x0000ffffu : 0xffff0000u;
      if (z_) vpandd(V(0), V(a), ptr_b[rip + const32_[keep]]);
      else vpand(V(0), V(a), const_vec(keep));
      if (high) {
        vpslld(V(1), V(b), 16);
      } else {
        vmov(1, b);
        mask_to_width(1, ir::Type::I16);
      }
      vor(d, 0, 1);
      return true;
    }
    case Opcode::Lut3: {
      if (!z_) return false;
      int a = arg(0), b = arg(1), c = arg(2), d = def(v);
      vmov(d, a);
      vpternlogd(V(d), V(b), V(c), uint8_t(in.imm & 0xff));
      mask_to_width(d, t);
      return true;
    }
    case Opcode::FindMsb: case Opcode::FindLsb: {
      if (!z_) return false;  // vplzcntd is AVX-512 CD
      ir::Type at = f_.insts[in.args[0]].type;
      int a = arg(0), d = def(v);
      if (in.op == Opcode::FindLsb) {
        vpxord(V(0), V(0), V(0));
        vpsubd(V(0), V(0), V(a));
        vpandd(V(0), V(0), V(a));  // lowest set bit alone
      } else if (Sign(in.attr) == Sign::Signed) {
        sext_to32(0, a, at);
        vpsrad(V(1), V(0), 31);
        vpxord(V(0), V(0), V(1));  // negative: ~v (zero above the width)
      } else {
        vmov(0, a);
      }
      vplzcntd(V(0), V(0));
      vpbroadcastd(V(d), const_mem(31));
      vpsubd(V(d), V(d), V(0));  // 31 - lzcnt; -1 when zero
      return true;
    }
    default:
      return false;
  }
}

bool Emitter::lower_wide(ValueId v) {
  const Inst& in = f_.insts[v];
  auto store_halves = [&](int r0, int r1) {
    vstore(strip_mem(v, 0), r0);
    vstore(strip_mem(v, 1), r1);
    vals_[v].in_frame = true;
  };
  switch (in.op) {
    case Opcode::LoadVar:
      if (in.imm >= f_.vars.size()) throw CompileError("x64 jit: load_var of unknown var " + std::to_string(in.imm));
      vload(0, var_mem(uint32_t(in.imm), 0));
      vload(1, var_mem(uint32_t(in.imm), 1));
      store_halves(0, 1);
      return true;
    case Opcode::StoreVar: {
      if (in.imm >= f_.vars.size()) throw CompileError("x64 jit: store_var of unknown var " + std::to_string(in.imm));
      ValueId a = in.args[0];
      for (int h = 0; h < 2; ++h) {
        vload(0, strip_mem(a, h));
        vstore(var_mem(uint32_t(in.imm), h), 0);
      }
      return true;
    }
    case Opcode::Const: case Opcode::Undef:
      mov(rax, in.op == Opcode::Const ? in.imm : 0);
      vmovq(Xmm(0), rax);
      vpbroadcastq(V(0), Xmm(0));
      store_halves(0, 0);
      return true;
    case Opcode::LoadUniform: {
      Label ok;
      if (in.imm <= f_.uniform_bytes && f_.uniform_bytes - in.imm >= 8) {
        test(r15, r15);
        jnz(ok, T_NEAR);
      }
      emit_fault_return(FaultKind::OutOfBounds, v, in.imm, uint32_t(Space::Const));
      L(ok);
      vpbroadcastq(V(0), qword[r15 + int(in.imm)]);
      store_halves(0, 0);
      return true;
    }
    case Opcode::Bitcast:
      if (!wide(in.args[0])) return false;
      vload(0, strip_mem(in.args[0], 0));
      vload(1, strip_mem(in.args[0], 1));
      store_halves(0, 1);
      return true;
    case Opcode::Zext: {
      if (wide(in.args[0])) return false;
      int a = use(in.args[0]);
      if (z_) {
        vpmovzxdq(V(0), Ymm(a));
        vextracti32x8(Ymm(1), Zmm(a), 1);
        vpmovzxdq(V(1), Ymm(1));
      } else {
        vpmovzxdq(V(0), Xmm(a));
        vextracti128(Xmm(1), Ymm(a), 1);
        vpmovzxdq(V(1), Xmm(1));
      }
      store_halves(0, 1);
      return true;
    }
    default:
      return false;
  }
}

}  // namespace gpurc::x64
