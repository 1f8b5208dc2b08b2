// Which IR ops each x64 tier lowers natively (backend_common/tier.h
// NativeOps): the data docs/backend_x64.md's table is checked against, and
// tests/backend_x64/native_ops.cpp checks against what compile() emits (every
// declared op and type compiles without a helper in some form; no undeclared
// one does). Ops absent here run through the per-lane eval_lane helper or a
// warp helper on both tiers. The op set is the emitter's dispatch table's
// (backend_x64/lowering.h, expanded from ir/opcodes.inc): a compile-time check
// below fails when an op is declared here but has no lowering there, or the
// other way round; this file adds the tiers and key types.
#include "backend_x64/jit.h"
#include "backend_x64/lowering.h"

namespace gpurc::x64 {

namespace {

using ir::Opcode;
using ir::Type;
using backend::type_bit;

constexpr uint16_t kNarrowInts = type_bit(Type::I1) | type_bit(Type::I8) | type_bit(Type::I16) | type_bit(Type::I32);
constexpr uint16_t kInts = kNarrowInts | type_bit(Type::I64);
constexpr uint16_t kI32 = type_bit(Type::I32);
constexpr uint16_t kF32 = type_bit(Type::F32);
constexpr uint16_t kF16F32 = type_bit(Type::F16) | kF32;
constexpr uint16_t kAll = kInts | type_bit(Type::F16) | kF32 | type_bit(Type::F64);
constexpr uint16_t kWidenedInts = kInts & ~type_bit(Type::I1);  // results of zext/sext
// Results of the bitcasts tests/backend/op_cases.h compiles (f16 <-> i16, f32 <-> i32, f64 <-> i64).
constexpr uint16_t kBitcastTypes = type_bit(Type::I32) | type_bit(Type::I64) | type_bit(Type::F16) | kF32 |
                                   type_bit(Type::F64);

struct Native {
  Opcode op;
  uint16_t avx512, avx2;  // key types (tier.h) with a native form
};

// One line per op with a native form on either tier.
constexpr Native kNative[] = {
    {Opcode::Const, kAll, kAll},
    {Opcode::Undef, kAll, kAll},
    {Opcode::Select, kAll, kAll},
    {Opcode::LoadVar, kAll, kAll},
    {Opcode::StoreVar, kAll, kAll},
    {Opcode::LoadUniform, kAll, kAll},
    {Opcode::LoadUniformIdx, kI32 | kF32, kI32 | kF32},
    {Opcode::EntryMask, type_bit(Type::I1), type_bit(Type::I1)},
    {Opcode::LaneId, kI32, kI32},
    {Opcode::IAdd, kInts, kInts},
    {Opcode::ISub, kInts, kInts},
    {Opcode::IAddC, kInts, kInts},
    {Opcode::IMul, kInts, kInts},
    {Opcode::IMulWide, type_bit(Type::I64), type_bit(Type::I64)},
    {Opcode::IMad, kInts, kInts},
    {Opcode::IMin, kInts, kInts},
    {Opcode::IMax, kInts, kInts},
    {Opcode::INeg, kInts, kInts},
    {Opcode::IAbs, kInts, kInts},
    {Opcode::ICmp, kInts, kInts},
    {Opcode::Shl, kInts, kInts},
    {Opcode::LShr, kInts, kInts},
    {Opcode::AShr, kInts, kInts},
    {Opcode::And, kInts, kInts},
    {Opcode::Or, kInts, kInts},
    {Opcode::Xor, kInts, kInts},
    {Opcode::Not, kInts, kInts},
    {Opcode::Lut3, kNarrowInts, 0},
    {Opcode::BfExtract, kI32, kI32},
    {Opcode::FindMsb, kNarrowInts, 0},
    {Opcode::FindLsb, kNarrowInts, 0},
    {Opcode::Zext, kWidenedInts, kWidenedInts},
    {Opcode::Sext, kWidenedInts, kWidenedInts},
    {Opcode::Trunc, kNarrowInts, kNarrowInts},
    {Opcode::Bitcast, kBitcastTypes, kBitcastTypes},
    {Opcode::Extract16, type_bit(Type::I16), type_bit(Type::I16)},
    {Opcode::Insert16, kI32, kI32},
    {Opcode::FAdd, kF32, kF32},
    {Opcode::FSub, kF32, kF32},
    {Opcode::FMul, kF32, kF32},
    {Opcode::FFma, kF32, kF32},
    {Opcode::FMad, kF32, kF32},
    {Opcode::FMin, kF32, kF32},
    {Opcode::FMax, kF32, kF32},
    {Opcode::FNeg, kF16F32, kF16F32},
    {Opcode::FAbs, kF16F32, kF16F32},
    {Opcode::FCmp, kF32, kF32},
    {Opcode::FFloor, kF32, kF32},
    {Opcode::FCeil, kF32, kF32},
    {Opcode::FTrunc, kF32, kF32},
    {Opcode::FRint, kF32, kF32},
    {Opcode::FRcp, kF32, kF32},     // Transc::Ieee and Pica
    {Opcode::FRsqrt, kF32, kF32},   // Transc::Pica
    {Opcode::FExp2, kF32, kF32},    // Transc::Pica
    {Opcode::FLog2, kF32, kF32},    // Transc::Pica
    {Opcode::FSqrt, kF32, kF32},
    {Opcode::FToI, kI32, kI32},
    {Opcode::IToF, kF32, kF32},
    {Opcode::Ballot, type_bit(Type::I1), type_bit(Type::I1)},
    {Opcode::Any, type_bit(Type::I1), type_bit(Type::I1)},
    {Opcode::All, type_bit(Type::I1), type_bit(Type::I1)},
};

// The per-opcode array, one entry for every op of ir/opcodes.inc.
constexpr backend::NativeOps table(bool avx512) {
  backend::NativeOps t{};
  for (const Native& n : kNative) t[size_t(n.op)] = avx512 ? n.avx512 : n.avx2;
  return t;
}

}  // namespace

constexpr backend::NativeOps kNativeAvx512 = table(true);
constexpr backend::NativeOps kNativeAvx2 = table(false);

#define OPCODE(Name, text, result, args, attr, props)                                                        \
  static_assert(((kNativeAvx512[size_t(Opcode::Name)] | kNativeAvx2[size_t(Opcode::Name)]) != 0) ==       \
                    kOpLowering[size_t(Opcode::Name)].native(),                                             \
                "backend_x64/native_ops.cpp: " text " is declared native here iff lowering.h names a native " \
                "lowering for it");
#include "ir/opcodes.inc"
#undef OPCODE

}  // namespace gpurc::x64
