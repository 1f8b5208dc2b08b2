// IR value types and the attribute enums that ops carry.
#pragma once
#include <cstdint>
#include <string_view>

namespace gpurc::ir {

// Every value is per lane. Lane storage: i1 -> 0/1, i8/i16/f16 -> low bits of
// a 32-bit lane (upper bits zero), i32/f32 -> 32 bits, i64/f64 -> 64 bits.
enum class Type : uint8_t { Void, I1, I8, I16, I32, I64, F16, F32, F64 };

constexpr bool is_int(Type t) { return t >= Type::I1 && t <= Type::I64; }
constexpr bool is_float(Type t) { return t >= Type::F16 && t <= Type::F64; }
constexpr unsigned bit_width(Type t) {
  switch (t) {
    case Type::I1: return 1;
    case Type::I8: return 8;
    case Type::I16: case Type::F16: return 16;
    case Type::I32: case Type::F32: return 32;
    case Type::I64: case Type::F64: return 64;
    default: return 0;
  }
}
// Bytes one lane of this type occupies in frames and guest-state slots (4 or 8).
constexpr unsigned lane_bytes(Type t) { return bit_width(t) > 32 ? 8 : 4; }
constexpr Type int_type(unsigned bits) {
  return bits == 1 ? Type::I1 : bits == 8 ? Type::I8 : bits == 16 ? Type::I16
       : bits == 32 ? Type::I32 : bits == 64 ? Type::I64 : Type::Void;
}
constexpr Type float_type(unsigned bits) {
  return bits == 16 ? Type::F16 : bits == 32 ? Type::F32 : bits == 64 ? Type::F64 : Type::Void;
}
constexpr uint64_t type_mask(Type t) {
  unsigned w = bit_width(t);
  return w >= 64 ? ~0ull : ((1ull << w) - 1);
}
std::string_view type_name(Type t);
bool parse_type(std::string_view s, Type& out);

constexpr int kWarpLanes = 32;

// ---- Float behaviour flags (Inst::fflags). One op table serves four guests:
// each guest's float rules are flags, not separate opcodes.
namespace ff {
constexpr uint32_t FtzIn = 1u << 0;    // subnormal inputs read as +-0
constexpr uint32_t FtzOut = 1u << 1;   // subnormal results written as +-0
constexpr uint32_t Sat = 1u << 2;      // clamp result to [0, 1]; NaN -> +0
constexpr uint32_t ZeroMul = 1u << 3;  // PICA: a product that is NaN only because of 0 * inf is +0
constexpr uint32_t NanShift = 4;       // 2 bits: NaN result rule, see NanRule
constexpr uint32_t NanMask = 3u << NanShift;
constexpr uint32_t RoundShift = 6;     // 2 bits: rounding, see Round
constexpr uint32_t RoundMask = 3u << RoundShift;
}  // namespace ff

// What a NaN result looks like. Fixed per op so hosts with different native
// NaN payloads (x86 0xFFC00000, ARM 0x7FC00000) agree bit for bit.
enum class NanRule : uint8_t {
  Canonical = 0,  // the positive quiet NaN: 0x7FC00000 / 0x7E00 / 0x7FF8000000000000
  AllOnes = 1,    // 0x7FFFFFFF / 0x7FFF / 0x7FFFFFFFFFFFFFFF (NVIDIA Tesla)
  Propagate = 2,  // first NaN operand, quieted; a NaN made from non-NaNs is Canonical
  // Some NaN, not fixed: each engine may leave its own (the x64 tiers the
  // host's, with no test of the result; the interpreters give Canonical).
  // Only for values whose NaN lanes reach no result a guest can observe:
  // Tesla's MAD fast path, whose lanes with a NaN product, residual or sum
  // all fail its range test and take the exact form's result. Engines
  // therefore need not agree on these values' NaN bits, and the IR fuzzer
  // never generates the rule (fuzz/ir_gen.cpp draws 0..2).
  Any = 3,
};
enum class Round : uint8_t { NearestEven = 0, TowardZero = 1, Down = 2, Up = 3 };

constexpr NanRule nan_rule(uint32_t f) { return NanRule((f & ff::NanMask) >> ff::NanShift); }
constexpr Round round_mode(uint32_t f) { return Round((f & ff::RoundMask) >> ff::RoundShift); }
constexpr uint32_t with_nan(uint32_t f, NanRule r) { return (f & ~ff::NanMask) | (uint32_t(r) << ff::NanShift); }
constexpr uint32_t with_round(uint32_t f, Round r) { return (f & ~ff::RoundMask) | (uint32_t(r) << ff::RoundShift); }

// ---- Op attributes (Inst::attr); which enum applies is named by the op table.
enum class Sign : uint8_t { Unsigned = 0, Signed = 1 };

enum class IntPred : uint8_t { Eq, Ne, Slt, Sle, Sgt, Sge, Ult, Ule, Ugt, Uge };
// Ordered predicates are false when either operand is NaN; unordered ones true.
enum class FloatPred : uint8_t { Oeq, One, Olt, Ole, Ogt, Oge, Ord, Uno, Ueq, Une, Ult, Ule, Ugt, Uge };

// Shift count handling: Mask uses count & (bits-1); Clamp treats counts >= bits
// as "all bits shifted out" (0, or sign fill for arithmetic shifts).
enum class ShiftMode : uint8_t { Mask = 0, Clamp = 1 };

// fmin/fmax NaN rules.
enum class MinMaxNan : uint8_t {
  NumberWins = 0,  // IEEE-754 minNum/maxNum: one NaN operand -> the other operand
  NanWins = 1,     // any NaN operand -> NaN (per the op's NanRule)
  SecondOnNan = 2, // (a < b) ? a : b for min, (a > b) ? a : b for max: NaN in either -> b
};

enum class Space : uint8_t { Global = 0, Shared = 1, Local = 2, Const = 3 };
constexpr int kNumSpaces = 4;
enum class AddrClass : uint8_t { Random = 0, Uniform = 1, Consecutive = 2 };

enum class AtomicOp : uint8_t { Add, Sub, SMin, SMax, UMin, UMax, And, Or, Xor, Exch, Inc, Dec };
enum class ReduceOp : uint8_t { Add, SMin, SMax, UMin, UMax, And, Or, Xor, FAdd, FMin, FMax };

// Which hardware's definition a transcendental op follows. Each one is a single
// scalar function in ir/scalar.h shared by the interpreter and the backends.
enum class Transc : uint8_t { Ieee = 0, Pica = 1, Tesla = 2, G13 = 3, Bifrost = 4 };

}  // namespace gpurc::ir
