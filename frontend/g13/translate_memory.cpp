// G13 -> IR: device, threadgroup and stack memory (see translate_impl.h).
#include <cstring>
#include <map>
#include <string>

#include "frontend/g13/translate_impl.h"
#include "ir/float_bits.h"
#include "ir/transc_g13.h"

namespace gpurc::g13::detail {

// ---- memory ----------------------------------------------------------------

// device/threadgroup/stack loads and stores: one IR access per component of
// the mask, each over the active lanes (the interpreter goes lane by lane, so
// which access faults first can differ when several would; docs/g13.md).
bool Translator::memory(const Insn& in, const std::string& n, std::string& why) {
  const bool store = n.find("store") != std::string::npos;
  const bool device = n.compare(0, 6, "device") == 0, tg = n.compare(0, 11, "threadgroup") == 0;
  const unsigned f = unsigned(in.f("F")), esz = format_bytes(f);
  if (!esz || (!device && !tg && f > 3)) return why = "memory format " + std::to_string(f) + " is not implemented", false;
  const unsigned mask = unsigned(in.f("mask"));
  const bool r32 = in.f("Rt");
  if (device && !r32 && f == 2) return why = "i32 format with 16-bit registers is illegal", false;
  const Op Rg = op(in, "R"), O = op(in, "O");
  const ValueId ex = exec();
  // Element index (device: scaled) and base of component 0, as i64.
  ValueId off, base = b_.i64(0);
  unsigned shift = 0;
  if (device) {
    const bool ou = in.f("Ou");
    shift = unsigned(in.f("s"));
    if (shift == 3) shift = 2;  // as applegpu's model
    if (O.type == OpType::Imm) off = b_.i64(ou ? uint64_t(O.n) & 0xFFFF : uint64_t(int64_t(int16_t(uint16_t(O.n)))));
    else if (!src(O, 32, false, off)) return why = "bad offset", false;
    else off = resize(off, Type::I64, !ou);
    if (!src(op(in, "A"), 64, false, base)) return why = "bad base", false;
    base = b_.binary(Opcode::And, base, b_.i64(~uint64_t(esz - 1)));
  } else {
    if (O.type == OpType::Imm) off = b_.i64(uint64_t(O.n));
    else if (!src(O, tg ? 16 : 32, false, off)) return why = "bad offset", false;
    else off = resize(off, Type::I64);
    const Op A = tg ? op(in, "A") : Op{};
    if (tg && A.type != OpType::Imm && !src(A, 64, false, base)) return why = "bad base", false;
  }
  const Type et = ir::int_type(esz * 8), rt = r32 ? Type::I32 : Type::I16;
  const ir::Space space = device ? ir::Space::Global : tg ? ir::Space::Shared : ir::Space::Local;
  unsigned reg = unsigned(Rg.n);
  for (unsigned i = 0; i < 4; ++i) {
    if (!(mask >> i & 1)) continue;
    Op r;
    r.type = r32 ? OpType::Reg32 : OpType::Reg16;
    r.n = reg++;
    if ((r32 && r.n > 127) || r.n > 255) return why = "register out of range", false;
    ValueId addr;
    if (device) {
      const ValueId idx = b_.binary(Opcode::IAdd, b_.binary(Opcode::Shl, off, b_.i32(shift)), b_.i64(i));
      addr = b_.binary(Opcode::IAdd, base, b_.binary(Opcode::IMul, idx, b_.i64(esz)));
    } else if (tg) {
      addr = b_.binary(Opcode::IAdd, base, b_.binary(Opcode::IMul, b_.binary(Opcode::IAdd, off, b_.i64(i)), b_.i64(esz)));
    } else {
      // Lane l's stack is [l * kStackStride, +kStackStride) of Space::Local.
      const ValueId o = b_.binary(Opcode::IAdd, off, b_.i64(i * esz));
      const ValueId lane_base = b_.binary(Opcode::IMul, resize(lane(), Type::I64), b_.i64(kStackStride));
      addr = b_.select(b_.icmp(IntPred::Ult, o, b_.i64(kStackStride)), b_.binary(Opcode::IAdd, lane_base, o),
                       b_.i64(kBadStackAddr));
    }
    const bool norm = f >= 4;
    const double scale = f == 4 ? 255.0 : f == 5 ? 127.0 : f == 6 ? 65535.0 : 32767.0;
    const bool snorm = f == 5 || f == 7;
    if (store) {
      ValueId v;
      if (!src(r, r32 ? 32 : 16, false, v)) return why = "bad register", false;
      if (norm) {
        // clamp(x, lo, 1) * scale rounded to nearest even; NaN -> 0.
        const ValueId x = r32 ? b_.convert(Opcode::FToF, Type::F64, b_.emit(Opcode::Bitcast, Type::F32, {v}), 0, ff::FtzIn)
                              : b_.convert(Opcode::FToF, Type::F64, b_.emit(Opcode::Bitcast, Type::F16, {v}));
        ValueId q = b_.convert(Opcode::FToI, Type::I32, b_.binary(Opcode::FMul, x, fconst(Type::F64, scale)), kSigned);
        q = b_.binary(Opcode::IMin, q, b_.i32(uint32_t(scale)), kSigned);
        q = b_.binary(Opcode::IMax, q, b_.i32(snorm ? uint32_t(-int32_t(scale)) : 0u), kSigned);
        v = q;
      }
      b_.store(space, ir::AddrClass::Random, addr, resize(v, et), ex);
    } else {
      ValueId v = b_.load(et, space, ir::AddrClass::Random, addr, ex);
      if (norm) {
        // value / scale, correctly rounded to the register's float type: the
        // f64 product with the rounded reciprocal is within 2^-52 of the
        // quotient, which is never that close to a rounding boundary of f32/f16.
        ValueId iv = resize(v, Type::I32, snorm);
        if (snorm) iv = b_.binary(Opcode::IMax, iv, b_.i32(uint32_t(-int32_t(scale))), kSigned);
        const ValueId x = b_.binary(Opcode::FMul, b_.convert(Opcode::IToF, Type::F64, iv, kSigned),
                                    fconst(Type::F64, 1.0 / scale));
        v = b_.convert(Opcode::FToF, r32 ? Type::F32 : Type::F16, x, 0, r32 ? ff::FtzOut : 0);
        v = b_.emit(Opcode::Bitcast, rt, {v});
      }
      if (!write(r, v, ex)) return why = "bad register", false;
    }
  }
  return true;
}

// uniform_store: the u-registers it writes are vars ("uN", marshalled by
// pack_vars/unpack_vars), read back by every later uniform operand. The
// halves come from the first active lane (broadcast), so the var stays the
// same in every launched lane; no active lane: nothing changes. Out of range
// traps where the interpreter reports an error (a lane is active).
bool Translator::uniform_store(const Insn& in, std::string& why) {
  const UniformStoreShape u = uniform_store_shape(in);
  if (!u.unmodelled.empty()) return why = u.unmodelled, false;
  const ValueId ex = exec();
  if (!u.in_range()) {
    b_.emit(Opcode::Trap, Type::Void, {ex}, 0, 0, pc_);
    return true;
  }
  const ValueId any = b_.emit(Opcode::Any, Type::I1, {ex, entry()});
  const ValueId first = b_.emit(Opcode::FindLsb, Type::I32, {ballot(b_.i1(true), ex)});
  for (unsigned i = 0; i < u.halves; ++i) {
    const unsigned rh = u.reg_half + i, uh = unsigned(u.u_half + i);
    const ValueId reg = b_.emit(Opcode::Broadcast, Type::I32, {b_.get_var(rh / 2), first});
    const ValueId half = b_.emit(Opcode::Extract16, Type::I16, {reg}, 0, 0, rh & 1);
    const uint32_t var = u_vars_.at(uh / 2);
    const ValueId old = b_.get_var(var);
    const ValueId merged = b_.emit(Opcode::Insert16, Type::I32, {old, half}, 0, 0, uh & 1);
    b_.set_var(var, b_.select(any, merged, old));
  }
  return true;
}

}  // namespace gpurc::g13::detail
