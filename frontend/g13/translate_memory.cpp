// G13 -> IR: device, threadgroup and stack memory (see translate_impl.h).
#include <cstring>
#include <map>
#include <string>

#include "frontend/g13/formats.h"
#include "frontend/g13/fp.h"
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
  const unsigned f = unsigned(in.f("F")), esz = memfmt::element_bytes(f);
  if (!esz) return why = "memory format " + std::to_string(f) + " is not defined", false;
  if (!device && !tg && f > memfmt::kF16) return why = "stack format " + std::to_string(f) + " is not implemented", false;
  if (f >= memfmt::kRgb10a2 && (store || !device))
    return why = packed_access_unmodelled(n, f), false;
  // Bit-packed: one aligned word at (base & ~3) + 4 * O, shift and mask ignored.
  const bool packed = memfmt::bit_packed(f);
  const unsigned mask = packed ? (1u << memfmt::packed_registers(f)) - 1 : unsigned(in.f("mask"));
  const bool r32 = in.f("Rt");
  if (device && !r32 && f == 2) return why = "i32 format with 16-bit registers is illegal", false;
  const Op Rg = op(in, "R"), O = op(in, "O");
  const ValueId ex = exec();
  // Element index (device: scaled) and base of component 0, as i64.
  ValueId off, base = b_.i64(0);
  unsigned shift = 0;
  if (device) {
    const bool ou = in.f("Ou");
    shift = packed ? 0 : unsigned(in.f("s"));
    if (shift == 3) shift = 2;  // as applegpu's model
    if (O.type == OpType::Imm) off = b_.i64(ou ? uint64_t(O.n) & 0xFFFF : uint64_t(int64_t(int16_t(uint16_t(O.n)))));
    else if (!src(O, 32, false, off)) return why = "bad offset", false;
    else off = b_.resize(Type::I64, off, signed_if(!ou));
    if (!src(op(in, "A"), 64, false, base)) return why = "bad base", false;
    base = b_.and_(base, b_.i64(~uint64_t(esz - 1)));
  } else {
    if (O.type == OpType::Imm) off = b_.i64(uint64_t(O.n));
    else if (!src(O, tg ? 16 : 32, false, off)) return why = "bad offset", false;
    else off = b_.resize(Type::I64, off);
    const Op A = tg ? op(in, "A") : Op{};
    if (tg && A.type != OpType::Imm && !src(A, 64, false, base)) return why = "bad base", false;
  }
  const Type et = ir::int_type(esz * 8), rt = r32 ? Type::I32 : Type::I16;
  const uint32_t esz_log2 = uint32_t(__builtin_ctz(esz));  // element sizes are 1, 2, 4: shifts, not multiplies
  const ir::Space space = device ? ir::Space::Global : tg ? ir::Space::Shared : ir::Space::Local;
  ValueId word;
  if (packed) word = b_.load(Type::I32, space, ir::AddrClass::Random, b_.iadd(base, b_.shl(off, b_.i32(2))), ex);
  unsigned reg = unsigned(Rg.n);
  for (unsigned i = 0; i < 4; ++i) {
    if (!(mask >> i & 1)) continue;
    Op r;
    r.type = r32 ? OpType::Reg32 : OpType::Reg16;
    r.n = reg++;
    if ((r32 && r.n > 127) || r.n > 255) return why = "register out of range", false;
    ValueId addr;
    if (device) {
      const ValueId idx = b_.iadd(b_.shl(off, b_.i32(shift)), b_.i64(i));
      addr = b_.iadd(base, b_.shl(idx, b_.i32(esz_log2)));
    } else if (tg) {
      addr = b_.iadd(base, b_.shl(b_.iadd(off, b_.i64(i)), b_.i32(esz_log2)));
    } else {
      // Lane l's stack is [l * kStackStride, +kStackStride) of Space::Local.
      const ValueId o = b_.iadd(off, b_.i64(i * esz));
      const ValueId lane_base = b_.shl(b_.resize(Type::I64, b_.lane_id()), b_.i32(uint32_t(__builtin_ctzll(kStackStride))));
      addr = b_.select(b_.icmp(IntPred::Ult, o, b_.i64(kStackStride)), b_.iadd(lane_base, o),
                       b_.i64(kBadStackAddr));
    }
    if (packed || f == memfmt::kSrgba8) {
      const ValueId elem = packed ? word : b_.load(et, space, ir::AddrClass::Random, addr, ex);
      if (!write(r, packed_component(f, elem, i, r32), ex)) return why = "bad register", false;
      continue;
    }
    const bool norm = f >= 4;
    const double scale = f == 4 ? 255.0 : f == 5 ? 127.0 : f == 6 ? 65535.0 : 32767.0;
    const bool snorm = f == 5 || f == 7;
    if (store) {
      ValueId v;
      if (!src(r, r32 ? 32 : 16, false, v)) return why = "bad register", false;
      if (norm) {
        // clamp(x, lo, 1) * scale rounded to nearest even; NaN -> 0.
        const ValueId x = r32 ? b_.ftof(Type::F64, b_.bitcast(Type::F32, v), ff::FtzIn)
                              : b_.ftof(Type::F64, b_.bitcast(Type::F16, v));
        ValueId q = b_.ftoi(Type::I32, ir::Sign::Signed, b_.fmul(x, b_.fconst(Type::F64, scale)));
        q = b_.imin(ir::Sign::Signed, q, b_.i32(uint32_t(scale)));
        q = b_.imax(ir::Sign::Signed, q, b_.i32(snorm ? uint32_t(-int32_t(scale)) : 0u));
        v = q;
      }
      b_.store(space, ir::AddrClass::Random, addr, b_.resize(et, v), ex);
    } else {
      ValueId v = b_.load(et, space, ir::AddrClass::Random, addr, ex);
      if (norm) {
        // value / scale, correctly rounded to the register's float type: the
        // f64 product with the rounded reciprocal is within 2^-52 of the
        // quotient, which is never that close to a rounding boundary of f32/f16.
        ValueId iv = b_.resize(Type::I32, v, signed_if(snorm));
        if (snorm) iv = b_.imax(ir::Sign::Signed, iv, b_.i32(uint32_t(-int32_t(scale))));
        const ValueId x = b_.fmul(b_.itof(Type::F64, ir::Sign::Signed, iv), b_.fconst(Type::F64, 1.0 / scale));
        v = b_.ftof(r32 ? Type::F32 : Type::F16, x, r32 ? ff::FtzOut : 0);
        v = b_.bitcast(rt, v);
      }
      if (!write(r, v, ex)) return why = "bad register", false;
    }
  }
  return true;
}

// Register bits of component `c` of a bit-packed or srgba8 load, formats.h's
// load_component as IR: `elem` is the loaded I32 word (bit-packed) or the I8
// byte (srgba8). unorm fields as the norm formats (f64 product with the
// reciprocal, rounded once); 11/10-bit floats widened to f16 bits (exact,
// exponent 31 -> inf or the default NaN); rgb9e5 = m * 2^(e - 24) in f64
// (exact); sRGB: the 12-bit level round(4095 * L(v / 255)) from the curve in
// f64 (Transc::Ieee exp2/log2: 4095 * L is never within 1.6e-4 of a
// half-integer, so the level is exact), then level / 4095 to f32 and, for a
// 16-bit register, on to f16.
ValueId Translator::packed_component(unsigned f, ValueId elem, unsigned c, bool r32) {
  const Type rt = r32 ? Type::I32 : Type::I16, ft = r32 ? Type::F32 : Type::F16;
  auto field = [&](unsigned shift, uint32_t mask) {
    return b_.and_(b_.lshr(elem, b_.i32(shift)), b_.i32(mask));
  };
  auto to_reg = [&](ValueId x) {  // f64 value -> register bits
    return b_.bitcast(rt, b_.ftof(ft, x, r32 ? ff::FtzOut : 0));
  };
  auto itof64 = [&](ValueId i) { return b_.itof(Type::F64, ir::Sign::Signed, i); };
  auto unorm = [&](ValueId i, double scale) {
    return to_reg(b_.fmul(itof64(i), b_.fconst(Type::F64, 1.0 / scale)));
  };
  switch (f) {
    case memfmt::kRgb10a2:
      return c < 3 ? unorm(field(10 * c, 1023), 1023.0) : unorm(field(30, 3), 3.0);
    case memfmt::kRg11b10f:
    case memfmt::kRg11b10fRtz: {
      const bool f11 = c < 2;
      const ValueId bits = field(11 * c, f11 ? 0x7FF : 0x3FF);
      const ValueId h = b_.select(b_.icmp(IntPred::Ugt, bits, b_.i32(f11 ? 0x7C0 : 0x3E0)), b_.i32(fp::kNaN16),
                                  b_.shl(bits, b_.i32(f11 ? 4 : 5)));
      const ValueId h16 = b_.resize(Type::I16, h);
      if (!r32) return h16;
      return b_.bitcast(Type::I32, b_.ftof(Type::F32, b_.bitcast(Type::F16, h16)));
    }
    case memfmt::kRgb9e5:
    case memfmt::kRgb9e5Rtz: {
      const ValueId e = b_.resize(Type::I64, b_.iadd(field(27, 31), b_.i32(1023 - 24)));
      const ValueId pow2 = b_.bitcast(Type::F64, b_.shl(e, b_.i32(52)));
      return to_reg(b_.fmul(itof64(field(9 * c, 511)), pow2));
    }
    default: {  // srgba8
      const ValueId v = b_.resize(Type::I32, elem);
      if (c == 3) return unorm(v, 255.0);
      const ValueId x = b_.fmul(itof64(v), b_.fconst(Type::F64, 1.0 / 255.0));
      const ValueId lo = b_.fmul(x, b_.fconst(Type::F64, 1.0 / 12.92));
      const ValueId t = b_.fmul(b_.fadd(x, b_.fconst(Type::F64, 0.055)), b_.fconst(Type::F64, 1.0 / 1.055));
      const ir::Transc ieee = ir::Transc::Ieee;
      const ValueId hi = b_.transc(Opcode::FExp2, ieee, b_.fmul(b_.transc(Opcode::FLog2, ieee, t), b_.fconst(Type::F64, 2.4)));
      const ValueId lin = b_.select(b_.icmp(IntPred::Ule, v, b_.i32(10)), lo, hi);  // v/255 <= 0.04045
      const ValueId level = b_.fround(Opcode::FRint, b_.fmul(lin, b_.fconst(Type::F64, 4095.0)));
      const ValueId f32 = b_.ftof(Type::F32, b_.fmul(level, b_.fconst(Type::F64, 1.0 / 4095.0)), ff::FtzOut);
      return b_.bitcast(rt, r32 ? f32 : b_.ftof(Type::F16, f32));
    }
  }
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
    b_.trap(ex, pc_);
    return true;
  }
  const ValueId any = b_.any(ex, b_.entry_mask());
  const ValueId first = b_.find_lsb(b_.ballot(b_.i1(true), ex));
  for (unsigned i = 0; i < u.halves; ++i) {
    const unsigned rh = u.reg_half + i, uh = unsigned(u.u_half + i);
    const ValueId reg = b_.broadcast(b_.get_var(rh / 2), first);
    const ValueId half = b_.extract16(reg, rh & 1);
    const uint32_t var = u_vars_.at(uh / 2);
    const ValueId old = b_.get_var(var);
    const ValueId merged = b_.insert16(old, half, uh & 1);
    b_.set_var(var, b_.select(any, merged, old));
  }
  return true;
}

}  // namespace gpurc::g13::detail
