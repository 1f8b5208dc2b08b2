// Which IR ops the NEON tier lowers natively (backend_common/tier.h
// NativeOps): tests/backend/native_ops.cpp checks it against what compile()
// emits (every declared op and type compiles without a helper in some form;
// no undeclared one does), and tests/backend_a64/native_gaps.cpp against the
// x64 tiers' table (the gaps docs/backend_a64.md lists). The op set is the
// emitter's dispatch table's (lowering.h): a compile-time check below fails
// when an op is declared here but has no lowering there, or the other way
// round; this file adds the key types.
#include "backend_a64/jit.h"
#include "backend_a64/lowering.h"

namespace gpurc::a64 {

namespace {

using backend::type_bit;
using ir::Opcode;
using ir::Type;

constexpr uint16_t kNarrowInts = type_bit(Type::I1) | type_bit(Type::I8) | type_bit(Type::I16) | type_bit(Type::I32);
constexpr uint16_t kI32 = type_bit(Type::I32);
constexpr uint16_t kI64 = type_bit(Type::I64);
constexpr uint16_t kInts = kNarrowInts | kI64;
constexpr uint16_t kF32 = type_bit(Type::F32);
constexpr uint16_t kF16F32 = type_bit(Type::F16) | kF32;
constexpr uint16_t kAll = kNarrowInts | type_bit(Type::I64) | type_bit(Type::F16) | kF32 | type_bit(Type::F64);
// zext / sext results from narrower 32-bit-lane sources (and i64 from any of them); trunc
// results from 32-bit lanes (and i32 from i64).
constexpr uint16_t kWidened = type_bit(Type::I8) | type_bit(Type::I16) | type_bit(Type::I32);
constexpr uint16_t kTruncated = type_bit(Type::I1) | type_bit(Type::I8) | type_bit(Type::I16);
// Results of the bitcasts tests/backend/op_cases.h compiles (f16 <-> i16, f32 <-> i32, f64 <-> i64).
constexpr uint16_t kBitcastTypes = kI32 | type_bit(Type::I64) | type_bit(Type::F16) | kF32 | type_bit(Type::F64);

struct Native {
  Opcode op;
  uint16_t types;
};

constexpr Native kNative[] = {
    {Opcode::Const, kAll},
    {Opcode::Undef, kAll},
    {Opcode::Select, kAll},
    {Opcode::LoadVar, kAll},
    {Opcode::StoreVar, kAll},
    {Opcode::LoadUniform, kAll},
    {Opcode::LoadUniformIdx, type_bit(Type::I32) | type_bit(Type::F32)},
    {Opcode::EntryMask, type_bit(Type::I1)},
    {Opcode::LaneId, kI32},
    {Opcode::IAdd, kInts},
    {Opcode::ISub, kInts},
    {Opcode::IAddC, kInts},
    {Opcode::IMul, kNarrowInts},
    {Opcode::IMad, kNarrowInts},
    {Opcode::IMin, kInts},
    {Opcode::IMax, kInts},
    {Opcode::INeg, kInts},
    {Opcode::IAbs, kInts},
    {Opcode::ICmp, kInts},
    {Opcode::Shl, kInts},
    {Opcode::LShr, kInts},
    {Opcode::AShr, kInts},
    {Opcode::And, kInts},
    {Opcode::Or, kInts},
    {Opcode::Xor, kInts},
    {Opcode::Not, kInts},
    {Opcode::Zext, kWidened | kI64},
    {Opcode::Sext, kWidened | kI64},
    {Opcode::Trunc, kTruncated | kI32},
    {Opcode::Lut3, kNarrowInts},
    {Opcode::BfExtract, kI32},
    {Opcode::FindMsb, kNarrowInts},
    {Opcode::FindLsb, kNarrowInts},
    {Opcode::Bitcast, kBitcastTypes},
    {Opcode::Extract16, type_bit(Type::I16)},
    {Opcode::Insert16, kI32},
    {Opcode::FAdd, kF32},
    {Opcode::FSub, kF32},
    {Opcode::FMul, kF32},
    {Opcode::FFma, kF32},
    {Opcode::FMad, kF32},
    {Opcode::FMin, kF32},
    {Opcode::FMax, kF32},
    {Opcode::FNeg, kF16F32},
    {Opcode::FAbs, kF16F32},
    {Opcode::FCmp, kF32},
    {Opcode::FFloor, kF32},
    {Opcode::FCeil, kF32},
    {Opcode::FTrunc, kF32},
    {Opcode::FRint, kF32},
    {Opcode::FRcp, kF32},
    {Opcode::FRsqrt, kF32},
    {Opcode::FSqrt, kF32},
    {Opcode::FExp2, kF32},
    {Opcode::FLog2, kF32},
    {Opcode::FToI, kI32},
    {Opcode::IToF, kF32},
    {Opcode::Ballot, type_bit(Type::I1)},
    {Opcode::Any, type_bit(Type::I1)},
    {Opcode::All, type_bit(Type::I1)},
};

constexpr backend::NativeOps table() {
  backend::NativeOps t{};
  for (const Native& n : kNative) t[size_t(n.op)] = n.types;
  return t;
}

}  // namespace

constexpr backend::NativeOps kNativeNeon = table();

#define OPCODE(Name, text, result, args, attr, props)                                              \
  static_assert((kNativeNeon[size_t(Opcode::Name)] != 0) == kOpLowering[size_t(Opcode::Name)].native(), \
                "backend_a64/native_ops.cpp: " text " is declared native here iff lowering.h names a "   \
                "native lowering for it");
#include "ir/opcodes.inc"
#undef OPCODE

}  // namespace gpurc::a64
