// Scalar semantics: expectations are hand-computed constants or come from an
// independent model (e.g. shifting one bit at a time), never from eval_lane.
#include <doctest/doctest.h>

#include <cfenv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <vector>

#include "ir/float_bits.h"
#include "ir/scalar.h"

namespace gpurc_test_ir_scalar_test {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc::ir;

namespace {
uint64_t ev(Opcode op, Type t, std::initializer_list<uint64_t> args, uint8_t attr = 0, uint32_t fl = 0,
            Type arg_type = Type::Void, uint64_t imm = 0) {
  LaneOp o{op, t, arg_type == Type::Void ? t : arg_type, attr, fl, imm};
  std::string why;
  REQUIRE_MESSAGE(lane_op_supported(o, &why), why);
  std::vector<uint64_t> a(args);
  a.resize(4, 0);
  return eval_lane(o, a.data());
}
constexpr uint32_t RTZ = uint32_t(Round::TowardZero) << ff::RoundShift;
constexpr uint32_t DOWN = uint32_t(Round::Down) << ff::RoundShift;
constexpr uint32_t UP = uint32_t(Round::Up) << ff::RoundShift;
constexpr uint32_t ALLONES = uint32_t(NanRule::AllOnes) << ff::NanShift;
constexpr uint32_t PROP = uint32_t(NanRule::Propagate) << ff::NanShift;
constexpr uint8_t S = uint8_t(Sign::Signed), U = uint8_t(Sign::Unsigned);
const Type I1 = Type::I1, I8 = Type::I8, I16 = Type::I16, I32 = Type::I32, I64 = Type::I64;
const Type F16 = Type::F16, F32 = Type::F32, F64 = Type::F64;
}  // namespace

TEST_CASE("scalar: integer add/sub/carry/overflow at every width") {
  CHECK(ev(Opcode::IAdd, I8, {0xff, 1}) == 0);
  CHECK(ev(Opcode::IAdd, I1, {1, 1}) == 0);
  CHECK(ev(Opcode::IAdd, I16, {0xfffe, 3}) == 1);
  CHECK(ev(Opcode::IAdd, I64, {~0ull, 2}) == 1);
  CHECK(ev(Opcode::ISub, I32, {0, 1}) == 0xffffffffu);
  CHECK(ev(Opcode::ISub, I8, {0, 1}) == 0xff);
  CHECK(ev(Opcode::IAddC, I32, {0xffffffffu, 0, 1}) == 0);
  CHECK(ev(Opcode::IAddC, I32, {5, 6, 0}) == 11);
  CHECK(ev(Opcode::ICarry, I1, {0xffffffffu, 0, 1}, 0, 0, I32) == 1);
  CHECK(ev(Opcode::ICarry, I1, {0xfffffffeu, 0, 1}, 0, 0, I32) == 0);
  CHECK(ev(Opcode::ICarry, I1, {~0ull, 1, 0}, 0, 0, I64) == 1);
  CHECK(ev(Opcode::ICarry, I1, {0x80, 0x80, 0}, 0, 0, I8) == 1);
  CHECK(ev(Opcode::ICarry, I1, {0xffffffffu, 0xffffffffu, 1}, 0, 0, I32) == 1);
  CHECK(ev(Opcode::IOverflow, I1, {0x7fffffffu, 0, 1}, 0, 0, I32) == 1);
  CHECK(ev(Opcode::IOverflow, I1, {0x7fffffffu, 0, 0}, 0, 0, I32) == 0);
  CHECK(ev(Opcode::IOverflow, I1, {0x80000000u, 0xffffffffu, 0}, 0, 0, I32) == 1);
  CHECK(ev(Opcode::IOverflow, I1, {0x80000000u, 0xffffffffu, 1}, 0, 0, I32) == 0);
  CHECK(ev(Opcode::IOverflow, I1, {0x7f, 0, 1}, 0, 0, I8) == 1);
  CHECK(ev(Opcode::IOverflow, I1, {0x7fffffffffffffffull, 1, 0}, 0, 0, I64) == 1);
}

TEST_CASE("scalar: multiply family") {
  CHECK(ev(Opcode::IMul, I32, {0x10000, 0x10000}) == 0);
  CHECK(ev(Opcode::IMul, I8, {16, 17}) == 0x10);
  CHECK(ev(Opcode::IMulHi, I32, {0xffffffffu, 0xffffffffu}, S) == 0);
  CHECK(ev(Opcode::IMulHi, I32, {0xffffffffu, 0xffffffffu}, U) == 0xfffffffeu);
  CHECK(ev(Opcode::IMulHi, I32, {0x80000000u, 0x80000000u}, S) == 0x40000000u);
  CHECK(ev(Opcode::IMulHi, I32, {0xffffffffu, 2}, S) == 0xffffffffu);
  CHECK(ev(Opcode::IMulHi, I64, {~0ull, ~0ull}, U) == 0xfffffffffffffffeull);
  CHECK(ev(Opcode::IMulHi, I64, {~0ull, ~0ull}, S) == 0);
  CHECK(ev(Opcode::IMulHi, I16, {0x8000, 0x8000}, S) == 0x4000);
  CHECK(ev(Opcode::IMulWide, I64, {0xffffffffu, 2}, S, 0, I32) == 0xfffffffffffffffeull);
  CHECK(ev(Opcode::IMulWide, I64, {0xffffffffu, 2}, U, 0, I32) == 0x1fffffffeull);
  CHECK(ev(Opcode::IMulWide, I32, {0x8000, 0x8000}, S, 0, I16) == 0x40000000u);
  CHECK(ev(Opcode::IMulWide, I16, {0xff, 0xff}, U, 0, I8) == 0xfe01);
  LaneOp bad{Opcode::IMulWide, I64, I64, 0, 0, 0};
  CHECK_FALSE(lane_op_supported(bad, nullptr));
  CHECK(ev(Opcode::IMad, I32, {0x10000, 0x10000, 7}) == 7);
  CHECK(ev(Opcode::ISad, I32, {3, 10, 1}, U) == 8);
  CHECK(ev(Opcode::ISad, I8, {0xfd, 4, 0}, S) == 7);
  CHECK(ev(Opcode::ISad, I8, {0xfd, 4, 0}, U) == 0xf9);
}

TEST_CASE("scalar: min/max/neg/abs/compare") {
  CHECK(ev(Opcode::IMin, I32, {0xffffffffu, 1}, S) == 0xffffffffu);
  CHECK(ev(Opcode::IMin, I32, {0xffffffffu, 1}, U) == 1);
  CHECK(ev(Opcode::IMax, I8, {0x80, 0x7f}, S) == 0x7f);
  CHECK(ev(Opcode::IMax, I8, {0x80, 0x7f}, U) == 0x80);
  CHECK(ev(Opcode::INeg, I32, {1}) == 0xffffffffu);
  CHECK(ev(Opcode::INeg, I64, {0}) == 0);
  CHECK(ev(Opcode::IAbs, I32, {0x80000000u}) == 0x80000000u);
  CHECK(ev(Opcode::IAbs, I16, {0xffff}) == 1);
  CHECK(ev(Opcode::Not, I1, {1}) == 0);
  CHECK(ev(Opcode::Not, I8, {0x0f}) == 0xf0);
  struct Row { IntPred p; uint64_t a, b; uint64_t want; };
  const Row rows[] = {
      {IntPred::Eq, 5, 5, 1},          {IntPred::Ne, 5, 5, 0},
      {IntPred::Slt, 0xff, 1, 1},      {IntPred::Ult, 0xff, 1, 0},
      {IntPred::Sle, 0x80, 0x80, 1},   {IntPred::Sgt, 0x7f, 0x80, 1},
      {IntPred::Sge, 0x80, 0x7f, 0},   {IntPred::Ule, 1, 0xff, 1},
      {IntPred::Ugt, 0x80, 0x7f, 1},   {IntPred::Uge, 0, 0, 1},
  };
  for (const Row& r : rows) CHECK(ev(Opcode::ICmp, I1, {r.a, r.b}, uint8_t(r.p), 0, I8) == r.want);
  CHECK(ev(Opcode::ICmp, I1, {0x8000000000000000ull, 0}, uint8_t(IntPred::Slt), 0, I64) == 1);
}

// Independent shift model: one bit position at a time.
static uint64_t shift_model(Opcode op, uint64_t v, unsigned w, unsigned steps) {
  uint64_t m = type_mask(int_type(w));
  uint64_t sign = (v >> (w - 1)) & 1;
  for (unsigned i = 0; i < steps; ++i) {
    if (op == Opcode::Shl) v = (v << 1) & m;
    else if (op == Opcode::LShr) v >>= 1;
    else v = (v >> 1) | (sign << (w - 1));
  }
  return v;
}

TEST_CASE("scalar: shifts with every count 0..70 in both modes") {
  const unsigned widths[] = {8, 16, 32, 64};
  const uint64_t samples[] = {0x8000000000000081ull, 0x5a5a5a5a5a5a5a5aull, 1, ~0ull};
  for (unsigned w : widths)
    for (uint64_t s : samples)
      for (Opcode op : {Opcode::Shl, Opcode::LShr, Opcode::AShr})
        for (unsigned c = 0; c <= 70; ++c) {
          Type t = int_type(w);
          uint64_t v = s & type_mask(t);
          CAPTURE(w); CAPTURE(c); CAPTURE(v); CAPTURE(int(op));
          CHECK(ev(op, t, {v, c}, uint8_t(ShiftMode::Mask)) == shift_model(op, v, w, c % w));
          CHECK(ev(op, t, {v, c}, uint8_t(ShiftMode::Clamp)) == shift_model(op, v, w, c));
        }
  // Counts far out of range (only the low 32 bits of the count operand count).
  CHECK(ev(Opcode::AShr, I32, {0x80000000u, 0xffffffffu}, uint8_t(ShiftMode::Clamp)) == 0xffffffffu);
  CHECK(ev(Opcode::Shl, I32, {1, 0xffffffffu}, uint8_t(ShiftMode::Mask)) == 0x80000000u);
}

TEST_CASE("scalar: bit field ops, lut3, bit counting") {
  CHECK(ev(Opcode::BfExtract, I32, {0xabcd1234u, 8, 8}, U) == 0x12);
  CHECK(ev(Opcode::BfExtract, I32, {0xabcd1234u, 8, 8}, S) == 0x12);
  CHECK(ev(Opcode::BfExtract, I32, {0xabcd1234u, 12, 8}, S) == 0xffffffd1u);
  CHECK(ev(Opcode::BfExtract, I32, {0xabcd1234u, 28, 8}, U) == 0x0a);
  CHECK(ev(Opcode::BfExtract, I32, {0xabcd1234u, 28, 8}, S) == 0xfffffffau);
  CHECK(ev(Opcode::BfExtract, I32, {0xabcd1234u, 4, 0}, S) == 0);
  CHECK(ev(Opcode::BfExtract, I32, {0xabcd1234u, 0x120, 4}, U) == 0);  // offset 0x20 after & 0xff
  CHECK(ev(Opcode::BfExtract, I32, {0xabcd1234u, 0x120, 4}, S) == 0xffffffffu);
  CHECK(ev(Opcode::BfExtract, I32, {0xabcd1234u, 0, 40}, U) == 0xabcd1234u);
  CHECK(ev(Opcode::BfExtract, I32, {0xabcd1234u, 0, 0x108}, U) == 0x34);  // count 8 after & 0xff
  CHECK(ev(Opcode::BfExtract, I8, {0x90, 4, 4}, S) == 0xf9);
  CHECK(ev(Opcode::BfExtract, I64, {0x8000000000000000ull, 63, 1}, S) == ~0ull);
  CHECK(ev(Opcode::BfExtract, I64, {0x8000000000000000ull, 63, 1}, U) == 1);
  CHECK(ev(Opcode::BfExtract, I64, {0x8000000000000000ull, 200, 255}, S) == ~0ull);
  CHECK(ev(Opcode::BfInsert, I32, {0xffffffffu, 0, 4, 8}) == 0xfffff00fu);
  CHECK(ev(Opcode::BfInsert, I32, {0, 0xf, 30, 8}) == 0xc0000000u);
  CHECK(ev(Opcode::BfInsert, I32, {0x1234, 0xf, 3, 0}) == 0x1234);
  CHECK(ev(Opcode::BfInsert, I32, {0x1234, 0xf, 40, 4}) == 0x1234);
  CHECK(ev(Opcode::BfInsert, I64, {0, ~0ull, 0, 64}) == ~0ull);
  CHECK(ev(Opcode::BfInsert, I8, {0xff, 0, 0x104, 2}) == 0xcf);
  CHECK(ev(Opcode::Lut3, I8, {0b1100, 0b1010, 0b1001}, 0, 0, Type::Void, 0xe8) == 0b1000);
  CHECK(ev(Opcode::Lut3, I32, {0xff00ff00u, 0xf0f0f0f0u, 0xccccccccu}, 0, 0, Type::Void, 0x96) ==
        (0xff00ff00u ^ 0xf0f0f0f0u ^ 0xccccccccu));
  CHECK(ev(Opcode::Lut3, I32, {0, 0, 0}, 0, 0, Type::Void, 0x01) == 0xffffffffu);
  CHECK(ev(Opcode::Popcount, I32, {~0ull}, 0, 0, I64) == 64);
  CHECK(ev(Opcode::Popcount, I32, {0x80}, 0, 0, I8) == 1);
  CHECK(ev(Opcode::BitReverse, I8, {0x01}) == 0x80);
  CHECK(ev(Opcode::BitReverse, I32, {0x00000003u}) == 0xc0000000u);
  CHECK(ev(Opcode::BitReverse, I64, {1}) == 0x8000000000000000ull);
  CHECK(ev(Opcode::FindMsb, I32, {0}, U, 0, I32) == 0xffffffffu);
  CHECK(ev(Opcode::FindMsb, I32, {1}, U, 0, I32) == 0);
  CHECK(ev(Opcode::FindMsb, I32, {0x80000000u}, U, 0, I32) == 31);
  CHECK(ev(Opcode::FindMsb, I32, {0xffffffffu}, S, 0, I32) == 0xffffffffu);
  CHECK(ev(Opcode::FindMsb, I32, {0}, S, 0, I32) == 0xffffffffu);
  CHECK(ev(Opcode::FindMsb, I32, {0x80000000u}, S, 0, I32) == 30);
  CHECK(ev(Opcode::FindMsb, I32, {0xfffffffeu}, S, 0, I32) == 0);
  CHECK(ev(Opcode::FindMsb, I32, {0x40000000u}, S, 0, I32) == 30);
  CHECK(ev(Opcode::FindMsb, I32, {0x80}, S, 0, I8) == 6);
  CHECK(ev(Opcode::FindMsb, I32, {0x8000000000000000ull}, U, 0, I64) == 63);
  CHECK(ev(Opcode::FindLsb, I32, {0}, 0, 0, I32) == 0xffffffffu);
  CHECK(ev(Opcode::FindLsb, I32, {0x80000000u}, 0, 0, I32) == 31);
  CHECK(ev(Opcode::FindLsb, I32, {0x8000000000000000ull}, 0, 0, I64) == 63);
}

TEST_CASE("scalar: width changes and halves") {
  CHECK(ev(Opcode::Zext, I32, {0xff}, 0, 0, I8) == 0xff);
  CHECK(ev(Opcode::Sext, I32, {0x80}, 0, 0, I8) == 0xffffff80u);
  CHECK(ev(Opcode::Sext, I32, {1}, 0, 0, I1) == 0xffffffffu);
  CHECK(ev(Opcode::Sext, I64, {0x7fff}, 0, 0, I16) == 0x7fff);
  CHECK(ev(Opcode::Zext, I64, {1}, 0, 0, I1) == 1);
  CHECK(ev(Opcode::Trunc, I16, {0x123456789abcull}, 0, 0, I64) == 0x9abc);
  CHECK(ev(Opcode::Trunc, I1, {0xfe}, 0, 0, I8) == 0);
  CHECK(ev(Opcode::Bitcast, F32, {0x3f800000u}, 0, 0, I32) == 0x3f800000u);
  CHECK(ev(Opcode::Extract16, I16, {0x12345678u}, 0, 0, I32, 0) == 0x5678);
  CHECK(ev(Opcode::Extract16, I16, {0x12345678u}, 0, 0, I32, 1) == 0x1234);
  CHECK(ev(Opcode::Insert16, I32, {0x12345678u, 0xbeef}, 0, 0, I32, 1) == 0xbeef5678u);
  CHECK(ev(Opcode::Insert16, I32, {0x12345678u, 0xbeef}, 0, 0, I32, 0) == 0x1234beefu);
  CHECK(ev(Opcode::Select, I32, {1, 7, 9}, 0, 0, I1) == 7);
  CHECK(ev(Opcode::Select, I32, {0, 7, 9}, 0, 0, I1) == 9);
  CHECK(ev(Opcode::Const, I16, {}, 0, 0, Type::Void, 0x1ffff) == 0xffff);
}

TEST_CASE("scalar: f32 add rounding, zeros, overflow, denormals") {
  CHECK(ev(Opcode::FAdd, F32, {0x3f800000, 0x40000000}) == 0x40400000);
  CHECK(ev(Opcode::FAdd, F32, {0x7f7fffff, 0x7f7fffff}) == 0x7f800000);
  CHECK(ev(Opcode::FAdd, F32, {0x7f7fffff, 0x7f7fffff}, 0, RTZ) == 0x7f7fffff);
  CHECK(ev(Opcode::FAdd, F32, {0xff7fffff, 0xff7fffff}, 0, UP) == 0xff7fffff);
  CHECK(ev(Opcode::FAdd, F32, {0xff7fffff, 0xff7fffff}, 0, DOWN) == 0xff800000);
  CHECK(ev(Opcode::FAdd, F32, {0x80000000, 0x80000000}) == 0x80000000);
  CHECK(ev(Opcode::FAdd, F32, {0x80000000, 0x00000000}) == 0x00000000);
  CHECK(ev(Opcode::FAdd, F32, {0x3f800000, 0xbf800000}) == 0x00000000);
  CHECK(ev(Opcode::FAdd, F32, {0x3f800000, 0xbf800000}, 0, DOWN) == 0x80000000);
  CHECK(ev(Opcode::FAdd, F32, {0x3f800000, 0x33800000}) == 0x3f800000);  // 1 + 2^-24: tie to even
  CHECK(ev(Opcode::FAdd, F32, {0x3f800000, 0x33800000}, 0, UP) == 0x3f800001);
  CHECK(ev(Opcode::FAdd, F32, {0x3f800000, 0x33800001}) == 0x3f800001);
  CHECK(ev(Opcode::FAdd, F32, {0x3f800001, 0x33800000}) == 0x3f800002);  // tie, odd -> up
  CHECK(ev(Opcode::FSub, F32, {0xbf800000, 0x33800000}, 0, DOWN) == 0xbf800001);
  CHECK(ev(Opcode::FSub, F32, {0xbf800000, 0x33800000}, 0, UP) == 0xbf800000);
  CHECK(ev(Opcode::FSub, F32, {0xbf800000, 0x33800000}, 0, RTZ) == 0xbf800000);
  CHECK(ev(Opcode::FSub, F32, {0x40400000, 0x40400000}) == 0);
  CHECK(ev(Opcode::FAdd, F32, {0x00000001, 0x00000001}) == 0x00000002);
  CHECK(ev(Opcode::FAdd, F32, {0x00000001, 0x00000001}, 0, ff::FtzIn) == 0);
  CHECK(ev(Opcode::FAdd, F32, {0x80000001, 0x80000000}, 0, ff::FtzIn) == 0x80000000);
  CHECK(ev(Opcode::FSub, F32, {0x00800000, 0x00000001}) == 0x007fffff);
  CHECK(ev(Opcode::FSub, F32, {0x00800000, 0x00000001}, 0, ff::FtzOut) == 0);
  CHECK(ev(Opcode::FSub, F32, {0x80000001, 0x80800000}, 0, ff::FtzOut) == 0);
  CHECK(ev(Opcode::FSub, F32, {0x80800000, 0x80000001}, 0, ff::FtzOut) == 0x80000000);
  CHECK(ev(Opcode::FMul, F32, {0x00800000, 0x3f000000}) == 0x00400000);       // exact subnormal
  CHECK(ev(Opcode::FMul, F32, {0x00000003, 0x3f000000}) == 0x00000002);       // 1.5 ulp -> tie to even 2
  CHECK(ev(Opcode::FMul, F32, {0x00000001, 0x3f000000}) == 0x00000000);       // 0.5 ulp -> tie to even 0
  CHECK(ev(Opcode::FMul, F32, {0x00000001, 0x3f000000}, 0, UP) == 0x00000001);
  CHECK(ev(Opcode::FMul, F32, {0x7f000000, 0x40000000}) == 0x7f800000);
}

TEST_CASE("scalar: NaN rules, saturation, zero-times-infinity") {
  CHECK(ev(Opcode::FSub, F32, {0x7f800000, 0x7f800000}) == 0x7fc00000);
  CHECK(ev(Opcode::FSub, F32, {0x7f800000, 0x7f800000}, 0, ALLONES) == 0x7fffffff);
  CHECK(ev(Opcode::FSub, F32, {0x7f800000, 0x7f800000}, 0, PROP) == 0x7fc00000);
  CHECK(ev(Opcode::FAdd, F32, {0x3f800000, 0x7f800001}, 0, PROP) == 0x7fc00001);
  CHECK(ev(Opcode::FAdd, F32, {0xffc00002, 0x7fc00003}, 0, PROP) == 0xffc00002);
  CHECK(ev(Opcode::FAdd, F32, {0xffc00002, 0x7fc00003}) == 0x7fc00000);
  CHECK(ev(Opcode::FAdd, F64, {0x7ff0000000000001ull, 0}, 0, PROP) == 0x7ff8000000000001ull);
  CHECK(ev(Opcode::FAdd, F64, {0x7ff0000000000001ull, 0}) == 0x7ff8000000000000ull);
  CHECK(ev(Opcode::FAdd, F64, {0x7ff0000000000001ull, 0}, 0, ALLONES) == 0x7fffffffffffffffull);
  CHECK(ev(Opcode::FAdd, F16, {0x7c00, 0xfc00}) == 0x7e00);
  CHECK(ev(Opcode::FAdd, F16, {0x7c00, 0xfc00}, 0, ALLONES) == 0x7fff);
  CHECK(ev(Opcode::FAdd, F32, {0x40000000, 0}, 0, ff::Sat) == 0x3f800000);
  CHECK(ev(Opcode::FAdd, F32, {0xc0400000, 0}, 0, ff::Sat) == 0);
  CHECK(ev(Opcode::FAdd, F32, {0x3f000000, 0}, 0, ff::Sat) == 0x3f000000);
  CHECK(ev(Opcode::FAdd, F32, {0x80000000, 0x80000000}, 0, ff::Sat) == 0);
  CHECK(ev(Opcode::FAdd, F32, {0x7fc00000, 0}, 0, ff::Sat | ALLONES) == 0);
  CHECK(ev(Opcode::FAdd, F32, {0x7f800000, 0}, 0, ff::Sat) == 0x3f800000);
  CHECK(ev(Opcode::FMul, F32, {0, 0x7f800000}) == 0x7fc00000);
  CHECK(ev(Opcode::FMul, F32, {0, 0x7f800000}, 0, ff::ZeroMul) == 0);
  CHECK(ev(Opcode::FMul, F32, {0xff800000, 0x80000000}, 0, ff::ZeroMul) == 0);
  CHECK(ev(Opcode::FMul, F32, {0x7fc00000, 0}, 0, ff::ZeroMul) == 0x7fc00000);
  CHECK(ev(Opcode::FMul, F32, {0x00000001, 0x7f800000}, 0, ff::ZeroMul | ff::FtzIn) == 0);
  CHECK(ev(Opcode::FMul, F32, {0x00000001, 0x7f800000}, 0, ff::ZeroMul) == 0x7f800000);
  CHECK(ev(Opcode::FFma, F32, {0, 0x7f800000, 0x3f800000}, 0, ff::ZeroMul) == 0x3f800000);
  CHECK(ev(Opcode::FMad, F32, {0x7f800000, 0, 0xbf800000}, 0, ff::ZeroMul) == 0xbf800000);
  CHECK(ev(Opcode::FFma, F32, {0, 0x7f800000, 0x3f800000}) == 0x7fc00000);
  CHECK(ev(Opcode::FMul, F16, {0, 0x7c00}, 0, ff::ZeroMul) == 0);
  CHECK(ev(Opcode::FMul, F64, {0, 0x7ff0000000000000ull}, 0, ff::ZeroMul) == 0);
}

TEST_CASE("scalar: fused and unfused multiply-add") {
  // a = 1 + 2^-23; a*a = 1 + 2^-22 + 2^-46.
  CHECK(ev(Opcode::FFma, F32, {0x3f800001, 0x3f800001, 0xbf800002}) == 0x28800000);
  CHECK(ev(Opcode::FMad, F32, {0x3f800001, 0x3f800001, 0xbf800002}) == 0);
  CHECK(ev(Opcode::FMul, F32, {0x3f800001, 0x3f800001}) == 0x3f800002);
  CHECK(ev(Opcode::FMul, F32, {0x3f800001, 0x3f800001}, 0, UP) == 0x3f800003);
  CHECK(ev(Opcode::FFma, F32, {0x3f800001, 0x3f800001, 0}, 0, UP) == 0x3f800003);
  CHECK(ev(Opcode::FFma, F32, {0x3f800001, 0x3f800001, 0}, 0, RTZ) == 0x3f800002);
  // f64: same with 2^-52.
  CHECK(ev(Opcode::FFma, F64, {0x3ff0000000000001ull, 0x3ff0000000000001ull, 0xbff0000000000002ull}) ==
        0x3970000000000000ull);
  CHECK(ev(Opcode::FMad, F64, {0x3ff0000000000001ull, 0x3ff0000000000001ull, 0xbff0000000000002ull}) == 0);
  CHECK(ev(Opcode::FFma, F64, {0x3ff0000000000000ull, 0x3ff0000000000000ull, 0xbff0000000000000ull}, 0, DOWN) ==
        0x8000000000000000ull);
  // f16: a = 1 + 2^-10, a*a = 1 + 2^-9 + 2^-20.
  CHECK(ev(Opcode::FFma, F16, {0x3c01, 0x3c01, 0xbc02}) == 0x0010);  // 2^-20 = 16 * 2^-24
  CHECK(ev(Opcode::FMad, F16, {0x3c01, 0x3c01, 0xbc02}) == 0);
}

TEST_CASE("scalar: f16 and f64 arithmetic") {
  CHECK(ev(Opcode::FAdd, F16, {0x3c00, 0x3c00}) == 0x4000);
  CHECK(ev(Opcode::FAdd, F16, {0x7bff, 0x7bff}) == 0x7c00);
  CHECK(ev(Opcode::FAdd, F16, {0x7bff, 0x7bff}, 0, RTZ) == 0x7bff);
  CHECK(ev(Opcode::FAdd, F16, {0x3c00, 0x1000}) == 0x3c00);  // 1 + 2^-11: tie to even
  CHECK(ev(Opcode::FAdd, F16, {0x3c00, 0x1000}, 0, UP) == 0x3c01);
  CHECK(ev(Opcode::FAdd, F16, {0x0001, 0x0001}) == 0x0002);
  CHECK(ev(Opcode::FAdd, F16, {0x0001, 0x0001}, 0, ff::FtzIn) == 0);
  CHECK(ev(Opcode::FSub, F16, {0x0400, 0x0001}, 0, ff::FtzOut) == 0);
  CHECK(ev(Opcode::FSub, F16, {0x3c00, 0x3c00}, 0, DOWN) == 0x8000);
  CHECK(ev(Opcode::FMul, F16, {0x0001, 0x3800}) == 0);  // 2^-25: tie to even 0
  CHECK(ev(Opcode::FMul, F16, {0x0001, 0x3800}, 0, UP) == 1);
  CHECK(ev(Opcode::FMul, F16, {0x8001, 0x3800}, 0, DOWN) == 0x8001);
  CHECK(ev(Opcode::FAdd, F64, {0x3fb999999999999aull, 0x3fc999999999999aull}) == 0x3fd3333333333334ull);
  CHECK(ev(Opcode::FAdd, F64, {0x3ff0000000000000ull, 0x3ca0000000000000ull}) == 0x3ff0000000000000ull);
  CHECK(ev(Opcode::FAdd, F64, {0x3ff0000000000000ull, 0x3ca0000000000000ull}, 0, UP) == 0x3ff0000000000001ull);
  CHECK(ev(Opcode::FSub, F64, {0x3ff0000000000000ull, 0x3ff0000000000000ull}, 0, DOWN) == 0x8000000000000000ull);
  CHECK(ev(Opcode::FAdd, F64, {0x0000000000000001ull, 0}, 0, ff::FtzIn) == 0);
  CHECK(ev(Opcode::FAdd, F64, {0x0000000000000001ull, 0}, 0, ff::FtzOut) == 0);
  CHECK(ev(Opcode::FAdd, F64, {0x0000000000000001ull, 0}) == 1);
  CHECK(ev(Opcode::FNeg, F16, {0x3c00}) == 0xbc00);
  CHECK(ev(Opcode::FNeg, F32, {0x7fc00000}) == 0xffc00000);
  CHECK(ev(Opcode::FAbs, F64, {0x8000000000000001ull}) == 1);
}

TEST_CASE("scalar: fmin/fmax NaN rules and signed zeros") {
  auto mm = MinMaxNan::NumberWins;
  CHECK(ev(Opcode::FMin, F32, {0x3f800000, 0x7fc00000}, uint8_t(mm)) == 0x3f800000);
  CHECK(ev(Opcode::FMax, F32, {0x7fc00000, 0x3f800000}, uint8_t(mm)) == 0x3f800000);
  CHECK(ev(Opcode::FMin, F32, {0x7fc00001, 0xffc00002}, uint8_t(mm)) == 0x7fc00000);
  CHECK(ev(Opcode::FMin, F32, {0x7fc00001, 0xffc00002}, uint8_t(mm), PROP) == 0x7fc00001);
  CHECK(ev(Opcode::FMin, F32, {0x00000000, 0x80000000}, uint8_t(mm)) == 0x80000000);
  CHECK(ev(Opcode::FMin, F32, {0x80000000, 0x00000000}, uint8_t(mm)) == 0x80000000);
  CHECK(ev(Opcode::FMax, F32, {0x80000000, 0x00000000}, uint8_t(mm)) == 0x00000000);
  CHECK(ev(Opcode::FMax, F32, {0x00000000, 0x80000000}, uint8_t(mm)) == 0x00000000);
  CHECK(ev(Opcode::FMin, F32, {0xbf800000, 0x3f800000}, uint8_t(mm)) == 0xbf800000);
  CHECK(ev(Opcode::FMax, F32, {0xbf800000, 0x3f800000}, uint8_t(mm)) == 0x3f800000);
  CHECK(ev(Opcode::FMin, F32, {0x00000001, 0x00000002}, uint8_t(mm), ff::FtzIn) == 0);
  auto nw = uint8_t(MinMaxNan::NanWins);
  CHECK(ev(Opcode::FMin, F32, {0x3f800000, 0x7fc00000}, nw) == 0x7fc00000);
  CHECK(ev(Opcode::FMax, F32, {0x3f800000, 0x7f800001}, nw, ALLONES) == 0x7fffffff);
  CHECK(ev(Opcode::FMax, F32, {0x3f800000, 0x7f800001}, nw, PROP) == 0x7fc00001);
  CHECK(ev(Opcode::FMin, F32, {0x00000000, 0x80000000}, nw) == 0x80000000);
  auto sn = uint8_t(MinMaxNan::SecondOnNan);
  CHECK(ev(Opcode::FMin, F32, {0x7fc00000, 0x3f800000}, sn) == 0x3f800000);
  CHECK(ev(Opcode::FMin, F32, {0x3f800000, 0x7fc00005}, sn) == 0x7fc00000);
  CHECK(ev(Opcode::FMin, F32, {0x3f800000, 0x7fc00005}, sn, PROP) == 0x7fc00005);
  CHECK(ev(Opcode::FMin, F32, {0x80000000, 0x00000000}, sn) == 0x00000000);
  CHECK(ev(Opcode::FMin, F32, {0x00000000, 0x80000000}, sn) == 0x80000000);
  CHECK(ev(Opcode::FMax, F32, {0x40000000, 0x3f800000}, sn) == 0x40000000);
  CHECK(ev(Opcode::FMin, F16, {0x8000, 0x0000}, uint8_t(mm)) == 0x8000);
  CHECK(ev(Opcode::FMax, F64, {0xfff0000000000000ull, 0x7ff8000000000000ull}, uint8_t(mm)) == 0xfff0000000000000ull);
  CHECK(ev(Opcode::FMax, F32, {0x40000000, 0x3f800000}, uint8_t(mm), ff::Sat) == 0x3f800000);
}

TEST_CASE("scalar: fcmp, all 14 predicates") {
  struct Row { FloatPred p; bool lt, eq, gt, un; };
  // Expected result for a<b, a==b, a>b, unordered.
  const Row rows[] = {
      {FloatPred::Oeq, 0, 1, 0, 0}, {FloatPred::One, 1, 0, 1, 0}, {FloatPred::Olt, 1, 0, 0, 0},
      {FloatPred::Ole, 1, 1, 0, 0}, {FloatPred::Ogt, 0, 0, 1, 0}, {FloatPred::Oge, 0, 1, 1, 0},
      {FloatPred::Ord, 1, 1, 1, 0}, {FloatPred::Uno, 0, 0, 0, 1}, {FloatPred::Ueq, 0, 1, 0, 1},
      {FloatPred::Une, 1, 0, 1, 1}, {FloatPred::Ult, 1, 0, 0, 1}, {FloatPred::Ule, 1, 1, 0, 1},
      {FloatPred::Ugt, 0, 0, 1, 1}, {FloatPred::Uge, 0, 1, 1, 1},
  };
  for (const Row& r : rows) {
    CAPTURE(int(r.p));
    uint8_t p = uint8_t(r.p);
    CHECK(ev(Opcode::FCmp, I1, {0x3f800000, 0x40000000}, p, 0, F32) == r.lt);
    CHECK(ev(Opcode::FCmp, I1, {0x80000000, 0x00000000}, p, 0, F32) == r.eq);  // -0 == +0
    CHECK(ev(Opcode::FCmp, I1, {0x7f800000, 0xff800000}, p, 0, F32) == r.gt);
    CHECK(ev(Opcode::FCmp, I1, {0x7fc00000, 0x3f800000}, p, 0, F32) == r.un);
    CHECK(ev(Opcode::FCmp, I1, {0x3f800000, 0x7f800001}, p, 0, F32) == r.un);
    CHECK(ev(Opcode::FCmp, I1, {0x3c00, 0x4000}, p, 0, F16) == r.lt);
    CHECK(ev(Opcode::FCmp, I1, {0x7ff8000000000000ull, 0}, p, 0, F64) == r.un);
    CHECK(ev(Opcode::FCmp, I1, {0x00000001, 0x00000000}, p, ff::FtzIn, F32) == r.eq);
    CHECK(ev(Opcode::FCmp, I1, {0x00000001, 0x00000000}, p, 0, F32) == r.gt);
  }
}

TEST_CASE("scalar: rounding to integral") {
  CHECK(ev(Opcode::FFloor, F32, {0xbf000000}) == 0xbf800000);  // floor(-0.5) = -1
  CHECK(ev(Opcode::FCeil, F32, {0xbf000000}) == 0x80000000);   // ceil(-0.5) = -0
  CHECK(ev(Opcode::FTrunc, F32, {0xbfc00000}) == 0xbf800000);  // trunc(-1.5) = -1
  CHECK(ev(Opcode::FRint, F32, {0x40200000}) == 0x40000000);   // rint(2.5) = 2
  CHECK(ev(Opcode::FRint, F32, {0x40600000}) == 0x40800000);   // rint(3.5) = 4
  CHECK(ev(Opcode::FRint, F32, {0xbf000000}) == 0x80000000);   // rint(-0.5) = -0
  CHECK(ev(Opcode::FRint, F32, {0x40200000}, 0, UP) == 0x40400000);
  CHECK(ev(Opcode::FFloor, F32, {0x00000001}) == 0);
  CHECK(ev(Opcode::FFloor, F32, {0x80000001}) == 0xbf800000);
  CHECK(ev(Opcode::FFloor, F32, {0x80000001}, 0, ff::FtzIn) == 0x80000000);
  CHECK(ev(Opcode::FCeil, F16, {0x3c01}) == 0x4000);
  CHECK(ev(Opcode::FFloor, F64, {0x7ff0000000000000ull}) == 0x7ff0000000000000ull);
  CHECK(ev(Opcode::FFloor, F32, {0x7f800001}) == 0x7fc00000);
  CHECK(ev(Opcode::FTrunc, F32, {0x4b800001}) == 0x4b800001);  // already integral
}

TEST_CASE("scalar: float to integer (saturating)") {
  const uint32_t RNE = 0;
  CHECK(ev(Opcode::FToI, I32, {0x501502f9}, S, RNE, F32) == 0x7fffffffu);  // 1e10
  CHECK(ev(Opcode::FToI, I32, {0xd01502f9}, S, RNE, F32) == 0x80000000u);
  CHECK(ev(Opcode::FToI, I32, {0x7fc00000}, S, RNE, F32) == 0);
  CHECK(ev(Opcode::FToI, I32, {0x7f800000}, S, RNE, F32) == 0x7fffffffu);
  CHECK(ev(Opcode::FToI, I32, {0xff800000}, U, RNE, F32) == 0);
  CHECK(ev(Opcode::FToI, I32, {0x40200000}, S, RNE, F32) == 2);     // 2.5 -> 2
  CHECK(ev(Opcode::FToI, I32, {0x40600000}, S, RNE, F32) == 4);     // 3.5 -> 4
  CHECK(ev(Opcode::FToI, I32, {0xc02ccccd}, S, RTZ, F32) == 0xfffffffeu);  // -2.7 -> -2
  CHECK(ev(Opcode::FToI, I32, {0xc00ccccd}, S, DOWN, F32) == 0xfffffffdu); // -2.2 -> -3
  CHECK(ev(Opcode::FToI, I32, {0x400ccccd}, S, UP, F32) == 3);             // 2.2 -> 3
  CHECK(ev(Opcode::FToI, I32, {0xbf800000}, U, RNE, F32) == 0);
  CHECK(ev(Opcode::FToI, I32, {0xbe800000}, U, RNE, F32) == 0);  // -0.25 -> -0 -> 0
  CHECK(ev(Opcode::FToI, I32, {0x4f800000}, U, RNE, F32) == 0xffffffffu);  // 2^32
  CHECK(ev(Opcode::FToI, I32, {0x4f7fffff}, U, RNE, F32) == 0xffffff00u);
  CHECK(ev(Opcode::FToI, I32, {0x4f000000}, S, RNE, F32) == 0x7fffffffu);  // 2^31
  CHECK(ev(Opcode::FToI, I32, {0xcf000000}, S, RNE, F32) == 0x80000000u);  // -2^31 exact
  CHECK(ev(Opcode::FToI, I8, {0x43480000}, S, RNE, F32) == 0x7f);  // 200
  CHECK(ev(Opcode::FToI, I8, {0xc3480000}, S, RNE, F32) == 0x80);
  CHECK(ev(Opcode::FToI, I8, {0x43480000}, U, RNE, F32) == 200);
  CHECK(ev(Opcode::FToI, I8, {0xc2fe0000}, S, RNE, F32) == 0x81);  // -127
  CHECK(ev(Opcode::FToI, I64, {0x5f000000}, S, RNE, F32) == 0x7fffffffffffffffull);  // 2^63
  CHECK(ev(Opcode::FToI, I64, {0xdf000000}, S, RNE, F32) == 0x8000000000000000ull);
  CHECK(ev(Opcode::FToI, I64, {0x5f800000}, U, RNE, F32) == ~0ull);  // 2^64
  CHECK(ev(Opcode::FToI, I64, {0x43e0000000000000ull}, U, RNE, F64) == 0x8000000000000000ull);
  CHECK(ev(Opcode::FToI, I32, {0x00000001}, S, UP, F32) == 1);
  CHECK(ev(Opcode::FToI, I32, {0x00000001}, S, UP | ff::FtzIn, F32) == 0);
  CHECK(ev(Opcode::FToI, I16, {0x7bff}, S, RNE, F16) == 0x7fff);  // 65504 saturates
  CHECK(ev(Opcode::FToI, I16, {0x7bff}, U, RNE, F16) == 0xffe0);
}

TEST_CASE("scalar: integer to float and float width changes") {
  CHECK(ev(Opcode::IToF, F32, {0xffffffffu}, S, 0, I32) == 0xbf800000);
  CHECK(ev(Opcode::IToF, F32, {0xffffffffu}, U, 0, I32) == 0x4f800000);
  CHECK(ev(Opcode::IToF, F32, {0xffffffffu}, U, RTZ, I32) == 0x4f7fffff);
  CHECK(ev(Opcode::IToF, F32, {16777217}, S, 0, I32) == 0x4b800000);
  CHECK(ev(Opcode::IToF, F32, {16777217}, S, UP, I32) == 0x4b800001);
  CHECK(ev(Opcode::IToF, F32, {16777219}, S, 0, I32) == 0x4b800002);  // tie -> even
  CHECK(ev(Opcode::IToF, F32, {0xfeffffffu}, S, DOWN, I32) == 0xcb800001);  // -16777217
  CHECK(ev(Opcode::IToF, F16, {65520}, S, 0, I64) == 0x7c00);  // halfway to 2^16 -> even -> inf
  CHECK(ev(Opcode::IToF, F16, {65519}, S, 0, I64) == 0x7bff);
  CHECK(ev(Opcode::IToF, F16, {65520}, S, RTZ, I64) == 0x7bff);
  CHECK(ev(Opcode::IToF, F16, {0x80}, S, 0, I8) == 0xd800);  // -128
  CHECK(ev(Opcode::IToF, F16, {1}, S, 0, I1) == 0xbc00);     // i1 1 signed is -1
  CHECK(ev(Opcode::IToF, F64, {~0ull}, U, 0, I64) == 0x43f0000000000000ull);
  CHECK(ev(Opcode::IToF, F64, {~0ull}, U, RTZ, I64) == 0x43efffffffffffffull);
  CHECK(ev(Opcode::IToF, F64, {~0ull}, S, 0, I64) == 0xbff0000000000000ull);
  CHECK(ev(Opcode::IToF, F32, {0x8000000000000001ull}, U, UP, I64) == 0x5f000001);
  CHECK(ev(Opcode::IToF, F32, {0x8000000000000001ull}, U, 0, I64) == 0x5f000000);
  CHECK(ev(Opcode::IToF, F32, {5}, S, ff::Sat, I32) == 0x3f800000);
  CHECK(ev(Opcode::FToF, F16, {0x3f800000}, 0, 0, F32) == 0x3c00);
  CHECK(ev(Opcode::FToF, F16, {0x477ff000}, 0, 0, F32) == 0x7c00);   // 65520
  CHECK(ev(Opcode::FToF, F16, {0x477ff000}, 0, RTZ, F32) == 0x7bff);
  CHECK(ev(Opcode::FToF, F16, {0x33000000}, 0, 0, F32) == 0);        // 2^-25: tie to even
  CHECK(ev(Opcode::FToF, F16, {0x33000001}, 0, 0, F32) == 1);
  CHECK(ev(Opcode::FToF, F16, {0xb3000000}, 0, DOWN, F32) == 0x8001);
  CHECK(ev(Opcode::FToF, F16, {0x387fc000}, 0, 0, F32) == 0x03ff);   // exactly 1023 * 2^-24
  CHECK(ev(Opcode::FToF, F16, {0x387fe000}, 0, 0, F32) == 0x0400);   // 1023.5 * 2^-24: tie -> normal
  CHECK(ev(Opcode::FToF, F32, {0x0001}, 0, 0, F16) == 0x33800000);
  CHECK(ev(Opcode::FToF, F32, {0x0001}, 0, ff::FtzIn, F16) == 0);
  CHECK(ev(Opcode::FToF, F32, {0xfc00}, 0, 0, F16) == 0xff800000);
  CHECK(ev(Opcode::FToF, F16, {0x7f800001}, 0, 0, F32) == 0x7e00);
  CHECK(ev(Opcode::FToF, F16, {0xffa00000}, 0, PROP, F32) == 0xff00);  // payload top bits kept
  CHECK(ev(Opcode::FToF, F64, {0x7fa00000}, 0, PROP, F32) == 0x7ffc000000000000ull);
  CHECK(ev(Opcode::FToF, F32, {0x3fb999999999999aull}, 0, 0, F64) == 0x3dcccccd);
  CHECK(ev(Opcode::FToF, F32, {0x3fb999999999999aull}, 0, RTZ, F64) == 0x3dcccccc);
  CHECK(ev(Opcode::FToF, F32, {0x36a0000000000000ull}, 0, 0, F64) == 1);   // 2^-149
  CHECK(ev(Opcode::FToF, F32, {0x36a0000000000000ull}, 0, ff::FtzOut, F64) == 0);
  CHECK(ev(Opcode::FToF, F32, {0x3690000000000000ull}, 0, 0, F64) == 0);   // 2^-150: tie to 0
  CHECK(ev(Opcode::FToF, F32, {0x47effffff0000000ull}, 0, 0, F64) == 0x7f800000);  // max + half ulp: tie, odd -> inf
  CHECK(ev(Opcode::FToF, F16, {0x0000000000000001ull}, 0, UP, F64) == 1);
}

TEST_CASE("scalar: IEEE transcendentals and their special values") {
  auto ie = uint8_t(Transc::Ieee);
  CHECK(ev(Opcode::FRcp, F32, {0x40000000}, ie) == 0x3f000000);
  CHECK(ev(Opcode::FRcp, F32, {0x40400000}, ie) == 0x3eaaaaab);
  CHECK(ev(Opcode::FRcp, F32, {0x40400000}, ie, RTZ) == 0x3eaaaaaa);
  CHECK(ev(Opcode::FRcp, F32, {0}, ie) == 0x7f800000);
  CHECK(ev(Opcode::FRcp, F32, {0x80000000}, ie) == 0xff800000);
  CHECK(ev(Opcode::FRcp, F32, {0x7f800000}, ie) == 0);
  CHECK(ev(Opcode::FRcp, F32, {0x00000001}, ie) == 0x7f800000);
  CHECK(ev(Opcode::FRcp, F64, {0x4008000000000000ull}, ie) == 0x3fd5555555555555ull);
  CHECK(ev(Opcode::FRcp, F16, {0x4200}, ie) == 0x3555);  // 1/3
  CHECK(ev(Opcode::FSqrt, F32, {0x40000000}, ie) == 0x3fb504f3);
  CHECK(ev(Opcode::FSqrt, F32, {0xbf800000}, ie) == 0x7fc00000);
  CHECK(ev(Opcode::FSqrt, F32, {0xbf800000}, ie, ALLONES) == 0x7fffffff);
  CHECK(ev(Opcode::FSqrt, F32, {0x80000000}, ie) == 0x80000000);
  CHECK(ev(Opcode::FSqrt, F32, {0x7f800000}, ie) == 0x7f800000);
  CHECK(ev(Opcode::FSqrt, F16, {0x4000}, ie) == 0x3da8);
  CHECK(ev(Opcode::FSqrt, F64, {0x4000000000000000ull}, ie) == 0x3ff6a09e667f3bcdull);
  CHECK(ev(Opcode::FRsqrt, F32, {0x40800000}, ie) == 0x3f000000);
  CHECK(ev(Opcode::FRsqrt, F32, {0x80000000}, ie) == 0xff800000);
  CHECK(ev(Opcode::FRsqrt, F32, {0xbf800000}, ie) == 0x7fc00000);
  CHECK(ev(Opcode::FRsqrt, F32, {0x7f800000}, ie) == 0);
  CHECK(ev(Opcode::FExp2, F32, {0x40400000}, ie) == 0x41000000);
  CHECK(ev(Opcode::FExp2, F32, {0xff800000}, ie) == 0);
  CHECK(ev(Opcode::FExp2, F32, {0x43000000}, ie) == 0x7f800000);  // 2^128 overflows
  CHECK(ev(Opcode::FExp2, F16, {0xcc80}, ie) == 0x0040);          // 2^-18 = 64 * 2^-24
  CHECK(ev(Opcode::FLog2, F32, {0x41000000}, ie) == 0x40400000);
  CHECK(ev(Opcode::FLog2, F32, {0}, ie) == 0xff800000);
  CHECK(ev(Opcode::FLog2, F32, {0xbf800000}, ie) == 0x7fc00000);
  CHECK(ev(Opcode::FLog2, F32, {0x00000001}, ie) == 0xc3150000);  // -149
  CHECK(ev(Opcode::FSin, F32, {0}, ie) == 0);
  CHECK(ev(Opcode::FSin, F32, {0x80000000}, ie) == 0x80000000);
  CHECK(ev(Opcode::FCos, F32, {0}, ie) == 0x3f800000);
  CHECK(ev(Opcode::FSin, F32, {0x7f800000}, ie) == 0x7fc00000);
  CHECK(ev(Opcode::FSin, F32, {0x3fc90fdb}, ie) == 0x3f800000);  // sin(pi/2 as f32)
  CHECK(ev(Opcode::FExp2, F32, {0x3f800000}, ie, ff::Sat) == 0x3f800000);
}

TEST_CASE("scalar: unsupported combinations are reported, never crash") {
  std::string why;
  // Bifrost's transcendental model is not written yet; the guest variants
  // that are (pica, tesla, g13) evaluate.
  LaneOp bifrost{Opcode::FRcp, F32, F32, uint8_t(Transc::Bifrost), 0, 0};
  CHECK_FALSE(lane_op_supported(bifrost, &why));
  CHECK(why.find("transcendental") != std::string::npos);
  uint64_t args[4] = {0x40000000, 0, 0, 0};
  CHECK(eval_lane(bifrost, args) == 0);
  LaneOp pica{Opcode::FRcp, F32, F32, uint8_t(Transc::Pica), 0, 0};
  CHECK(lane_op_supported(pica, &why));
  CHECK(eval_lane(pica, args) == 0x3f000000);  // rcp(2) = 0.5
  LaneOp step{Opcode::FSinStep, F32, F32, uint8_t(Transc::Ieee), 0, 0};
  CHECK_FALSE(lane_op_supported(step, &why));
  LaneOp phi{Opcode::Phi, I32, I32, 0, 0, 0};
  CHECK_FALSE(lane_op_supported(phi, &why));
  CHECK(eval_lane(phi, args) == 0);
  LaneOp ballot{Opcode::Ballot, I32, I1, 0, 0, 0};
  CHECK_FALSE(lane_op_supported(ballot, &why));
  LaneOp bad_pred{Opcode::ICmp, I1, I32, 200, 0, 0};
  CHECK_FALSE(lane_op_supported(bad_pred, &why));
  CHECK(eval_lane(bad_pred, args) == 0);
  // NaN rule 3 is Any (every 2-bit value is a rule now): some NaN, the
  // canonical one here.
  LaneOp any_nan{Opcode::FAdd, F32, F32, 0, 3u << ff::NanShift, 0};
  CHECK(lane_op_supported(any_nan, &why));
  uint64_t infs[2] = {0x7f800000, 0xff800000};
  CHECK(eval_lane(any_nan, infs) == 0x7fc00000);
  LaneOp int_fadd{Opcode::FAdd, I32, I32, 0, 0, 0};
  CHECK_FALSE(lane_op_supported(int_fadd, &why));
}

TEST_CASE("scalar: random ops, types, attributes and operands never crash") {
  // Run under the sanitizer build: any undefined behaviour fails there. Here the
  // checkable property is canonical results: no bits above the result type.
  uint64_t x = 0x9e3779b97f4a7c15ull;
  auto next = [&] {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    return x;
  };
  int n = std::getenv("GPURC_TEST_LIGHT") ? 20000 : 200000;
  for (int i = 0; i < n; ++i) {
    LaneOp o{Opcode(next() % kNumOpcodes), Type(next() % 9), Type(next() % 9), uint8_t(next() % 16),
             uint32_t(next() & 0xff), next() % 4 ? next() % 4 : next()};
    uint64_t args[4];
    for (auto& a : args) {
      uint64_t r = next();
      a = r % 4 == 0 ? r : r % 4 == 1 ? (r & 0xffffffffu) : r % 4 == 2 ? (r & 0x7ff0000000000001ull) : (r & 0x8000ffffu);
    }
    uint64_t r = eval_lane(o, args);
    CAPTURE(op_name(o.op));
    CAPTURE(type_name(o.type));
    CAPTURE(type_name(o.arg_type));
    if (lane_op_supported(o, nullptr)) CHECK((r & ~type_mask(o.type)) == 0);
    else CHECK(r == 0);
  }
}

// The host's own binary32 arithmetic (SSE on x86-64, correctly rounded in every
// mode) is an independent oracle for f32: eval_lane computes through double.
TEST_CASE("scalar: f32 arithmetic agrees with host float in all rounding modes") {
  uint64_t x = 0x0123456789abcdefull;
  auto next = [&] {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    return x;
  };
  auto rand_f32 = [&]() -> uint32_t {
    uint64_t r = next();
    switch (r % 6) {
      case 0: return uint32_t(r >> 32) & 0x807fffffu;             // subnormal / zero
      case 1: return uint32_t(r >> 32) | 0x3f000000u;              // around 1
      case 2: return (uint32_t(r >> 32) & 0x80ffffffu) | 0x00800000u;  // tiny normals
      case 3: return (uint32_t(r >> 32) & 0x807fffffu) | 0x7f000000u;  // huge
      default: return uint32_t(r >> 32) & 0xff7fffffu;               // anything finite-ish
    }
  };
  auto bits = [](float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; };
  auto flt = [](uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; };
  const Round modes[] = {Round::NearestEven, Round::TowardZero, Round::Down, Round::Up};
  const int host_modes[] = {FE_TONEAREST, FE_TOWARDZERO, FE_DOWNWARD, FE_UPWARD};
  int n = std::getenv("GPURC_TEST_LIGHT") ? 2000 : 20000;
  for (int mi = 0; mi < 4; ++mi) {
    uint32_t fl = uint32_t(modes[mi]) << ff::RoundShift;
    for (int i = 0; i < n; ++i) {
      uint32_t a = rand_f32(), b = rand_f32(), c = rand_f32();
      uint32_t want_add, want_mul, want_fma, want_sqrt;
      {
        int old = fegetround();
        fesetround(host_modes[mi]);
        volatile float va = flt(a), vb = flt(b), vc = flt(c);
        volatile float r1 = va + vb, r2 = va * vb, r4 = std::fmaf(va, vb, vc),
                       r5 = std::sqrt(std::fabs(float(va)));
        want_add = bits(r1), want_mul = bits(r2), want_fma = bits(r4), want_sqrt = bits(r5);
        fesetround(old);
      }
      auto canon = [](uint32_t u) { return (u & 0x7f800000u) == 0x7f800000u && (u & 0x7fffff) ? 0x7fc00000u : u; };
      CAPTURE(mi); CAPTURE(a); CAPTURE(b); CAPTURE(c);
      CHECK(ev(Opcode::FAdd, F32, {a, b}, 0, fl) == canon(want_add));
      CHECK(ev(Opcode::FMul, F32, {a, b}, 0, fl) == canon(want_mul));
      CHECK(ev(Opcode::FRcp, F32, {a}, uint8_t(Transc::Ieee), fl) ==
            canon(bits([&] { int o = fegetround(); fesetround(host_modes[mi]); volatile float one = 1.0f, va = flt(a);
                             volatile float r = one / va; fesetround(o); return float(r); }())));
      CHECK(ev(Opcode::FFma, F32, {a, b, c}, 0, fl) == canon(want_fma));
      CHECK(ev(Opcode::FSqrt, F32, {a & 0x7fffffffu}, uint8_t(Transc::Ieee), fl) == canon(want_sqrt));
    }
  }
}

// g++ 12 has C++ _Float16 on x86 only (AArch64 defines the macro for C).
#if defined(__FLT16_MANT_DIG__) && (defined(__x86_64__) || defined(__i386__) || defined(__clang__))
// GCC's _Float16 (round to nearest) as an independent oracle for f16.
TEST_CASE("scalar: f16 arithmetic agrees with the compiler's _Float16") {
  auto h = [](uint16_t u) { _Float16 f; std::memcpy(&f, &u, 2); return f; };
  auto hb = [](_Float16 f) { uint16_t u; std::memcpy(&u, &f, 2); return uint64_t(u); };
  uint64_t x = 0xfeedfacecafebeefull;
  int n = std::getenv("GPURC_TEST_LIGHT") ? 5000 : 50000;
  for (int i = 0; i < n; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    uint16_t a = uint16_t(x) & 0xfbff, b = uint16_t(x >> 16) & 0xfbff;  // finite
    if ((x >> 40) % 3 == 0) a &= 0x83ff;  // subnormals
    volatile _Float16 va = h(a), vb = h(b);
    _Float16 s = va + vb, p = va * vb;
    auto canon = [](uint64_t u) { return (u & 0x7c00) == 0x7c00 && (u & 0x3ff) ? 0x7e00 : u; };
    CAPTURE(a); CAPTURE(b);
    CHECK(ev(Opcode::FAdd, F16, {a, b}) == canon(hb(s)));
    CHECK(ev(Opcode::FMul, F16, {a, b}) == canon(hb(p)));
  }
}
#endif

// Found by the backend's op test: an f32 fma whose addend is far below the
// product's last bit was computed as (exact product + addend) rounded to double
// and then to f32, which rounds twice. Oracle: the host's fmaf (one rounding).
TEST_CASE("ffma f32 rounds once when the addend is tiny against the product") {
  struct Case { uint32_t a, b, c; };
  const Case cases[] = {{0x7128c939, 0xbfc00000, 0x4f000000}, {0x4bca3fe2, 0xc0200000, 0x807fffff},
                        {0xc0200000, 0x6e37201e, 0x10771395}, {0xbfc00000, 0x6fda6e1a, 0x1706d73a}};
  for (auto c : cases) {
    float fa, fb, fc;
    std::memcpy(&fa, &c.a, 4);
    std::memcpy(&fb, &c.b, 4);
    std::memcpy(&fc, &c.c, 4);
    volatile float r = std::fmaf(fa, fb, fc);
    uint32_t want;
    float rv = r;
    std::memcpy(&want, &rv, 4);
    CHECK(ev(Opcode::FFma, Type::F32, {c.a, c.b, c.c}) == want);
  }
  // The first case pinned: a single rounding gives 0xf17d2dd5, the double
  // rounding gave 0xf17d2dd6.
  CHECK(ev(Opcode::FFma, Type::F32, {0x7128c939, 0xbfc00000, 0x4f000000}) == 0xf17d2dd5);
}

}  // namespace gpurc_test_ir_scalar_test
