// The a64 emitter's op dispatch, expanded from ir/opcodes.inc: one entry per
// op saying how the NEON tier executes it (the same shape as
// backend_x64/lowering.h). For a strip op the entry names the Emitter member
// that lowers it natively in 32-bit lanes (`narrow`) and the one for a 64-bit
// operand or result (`wide`); nullptr means the per-lane eval_lane helper
// (Emitter::lower_helper), as does a lowering returning false for a type or
// attribute it does not handle. An op appended to opcodes.inc without an
// entry in Lowerings fails to compile; native_ops.cpp's per-type declaration
// is checked against this table at compile time.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "backend_common/lowering_table.h"
#include "backend_a64/emitter.h"

namespace gpurc::a64 {

// The entry type and kinds are backend_common/lowering_table.h's.
using backend::LowerKind;
using OpLowering = backend::OpLowering<Emitter>;
using LowerFn = OpLowering::Fn;

// One entry per op of ir/opcodes.inc (friend of Emitter).
struct Lowerings {
  static constexpr LowerKind S = LowerKind::Strip;
  static constexpr LowerKind W = LowerKind::WarpHelper;
  static constexpr LowerFn kState = &Emitter::lower_state;  // lower.cpp: state, select, sign-bit float ops
  static constexpr LowerFn kInt = &Emitter::lower_int;      // lower.cpp: integer ops in 32-bit lanes
  static constexpr LowerFn kFloat = &Emitter::lower_float;  // lower.cpp: f32 arithmetic, compares, conversions
  static constexpr LowerFn kWide = &Emitter::lower_wide;    // lower.cpp: 64-bit moves and integer ops on 64-bit lanes

  // ---- values, state and control
  static constexpr OpLowering Const{S, kState, kWide};
  static constexpr OpLowering Undef{S, kState, kWide};
  static constexpr OpLowering Phi{LowerKind::Control};
  static constexpr OpLowering Select{S, kState, kWide};
  static constexpr OpLowering GetVar{LowerKind::PreSsa};
  static constexpr OpLowering SetVar{LowerKind::PreSsa};
  static constexpr OpLowering LoadVar{S, kState, kWide};
  static constexpr OpLowering StoreVar{S, kState, kWide};
  static constexpr OpLowering LoadUniform{S, kState, kWide};
  static constexpr OpLowering LoadUniformIdx{S, kState};
  static constexpr OpLowering EntryMask{S, kState};
  static constexpr OpLowering LaneId{S, kState};
  static constexpr OpLowering Budget{LowerKind::Budget};
  static constexpr OpLowering Trap{W};

  // ---- integer (64-bit multiplies stay with the helper)
  static constexpr OpLowering IAdd{S, kInt, kWide};
  static constexpr OpLowering ISub{S, kInt, kWide};
  static constexpr OpLowering IAddC{S, kInt, kWide};
  static constexpr OpLowering ICarry{S};
  static constexpr OpLowering IOverflow{S};
  static constexpr OpLowering IMul{S, kInt};
  static constexpr OpLowering IMulHi{S};
  static constexpr OpLowering IMulWide{S};
  static constexpr OpLowering IMad{S, kInt};
  static constexpr OpLowering ISad{S};
  static constexpr OpLowering IMin{S, kInt, kWide};
  static constexpr OpLowering IMax{S, kInt, kWide};
  static constexpr OpLowering INeg{S, kInt, kWide};
  static constexpr OpLowering IAbs{S, kInt, kWide};
  static constexpr OpLowering ICmp{S, kInt, kWide};
  static constexpr OpLowering Shl{S, kInt, kWide};
  static constexpr OpLowering LShr{S, kInt, kWide};
  static constexpr OpLowering AShr{S, kInt, kWide};
  static constexpr OpLowering And{S, kInt, kWide};
  static constexpr OpLowering Or{S, kInt, kWide};
  static constexpr OpLowering Xor{S, kInt, kWide};
  static constexpr OpLowering Not{S, kInt, kWide};
  static constexpr OpLowering Lut3{S, kInt};
  static constexpr OpLowering BfExtract{S, kInt};
  static constexpr OpLowering BfInsert{S};
  static constexpr OpLowering Popcount{S};
  static constexpr OpLowering BitReverse{S};
  static constexpr OpLowering FindMsb{S, kInt};
  static constexpr OpLowering FindLsb{S, kInt};
  static constexpr OpLowering Zext{S, kInt, kWide};
  static constexpr OpLowering Sext{S, kInt, kWide};
  static constexpr OpLowering Trunc{S, kInt, kWide};
  static constexpr OpLowering Bitcast{S, kInt, kWide};
  static constexpr OpLowering Extract16{S, kInt};
  static constexpr OpLowering Insert16{S, kInt};

  // ---- float (f32 only; f16/f64 arithmetic and the non-IEEE transcendentals stay with the helper)
  static constexpr OpLowering FAdd{S, kFloat};
  static constexpr OpLowering FSub{S, kFloat};
  static constexpr OpLowering FMul{S, kFloat};
  static constexpr OpLowering FFma{S, kFloat};
  static constexpr OpLowering FMad{S, kFloat};
  static constexpr OpLowering FMin{S, kFloat};
  static constexpr OpLowering FMax{S, kFloat};
  static constexpr OpLowering FNeg{S, kState};
  static constexpr OpLowering FAbs{S, kState};
  static constexpr OpLowering FCmp{S, kFloat};
  static constexpr OpLowering FFloor{S, kFloat};
  static constexpr OpLowering FCeil{S, kFloat};
  static constexpr OpLowering FTrunc{S, kFloat};
  static constexpr OpLowering FRint{S, kFloat};
  static constexpr OpLowering FRcp{S, kFloat};    // Transc::Ieee and Transc::Pica
  static constexpr OpLowering FRsqrt{S, kFloat};  // Transc::Pica only
  static constexpr OpLowering FSqrt{S, kFloat};   // Transc::Ieee only
  static constexpr OpLowering FExp2{S, kFloat};   // Transc::Pica only
  static constexpr OpLowering FLog2{S, kFloat};   // Transc::Pica only
  static constexpr OpLowering FSin{S};
  static constexpr OpLowering FCos{S};
  static constexpr OpLowering FSinStep{S};
  static constexpr OpLowering FToI{S, kFloat};  // f32 -> i32
  static constexpr OpLowering IToF{S, kFloat};  // i32 -> f32
  static constexpr OpLowering FToF{S};

  // ---- cross-lane
  static constexpr OpLowering Ballot{LowerKind::Vote};
  static constexpr OpLowering Any{LowerKind::Vote};
  static constexpr OpLowering All{LowerKind::Vote};
  static constexpr OpLowering Shuffle{W};
  static constexpr OpLowering Broadcast{W};
  static constexpr OpLowering QuadShuffle{W};
  static constexpr OpLowering Reduce{W};
  static constexpr OpLowering ScanIncl{W};
  static constexpr OpLowering ScanExcl{W};

  // ---- memory
  static constexpr OpLowering Load{W};
  static constexpr OpLowering Store{W};
  static constexpr OpLowering AtomicRmw{W};
  static constexpr OpLowering AtomicCas{W};

  // ---- terminators
  static constexpr OpLowering Br{LowerKind::Control};
  static constexpr OpLowering CondBr{LowerKind::Control};
  static constexpr OpLowering Switch{LowerKind::Control};
  static constexpr OpLowering Barrier{LowerKind::Control};
  static constexpr OpLowering Return{LowerKind::Control};
  static constexpr OpLowering Unreachable{LowerKind::Control};
};

// Indexed by ir::Opcode; also checks each entry's kind against the op's props.
inline constexpr std::array<OpLowering, ir::kNumOpcodes> kOpLowering = backend::op_lowering_table<Lowerings>();

}  // namespace gpurc::a64
