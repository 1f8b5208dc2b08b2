// The x64 emitter's op dispatch, expanded from ir/opcodes.inc: one entry per
// op saying how both tiers execute it. For a strip op the entry names the
// Emitter member that lowers it natively in 32-bit lanes (`narrow`) and the
// one for a 64-bit operand or result (`wide`); nullptr means the per-lane
// eval_lane helper (Emitter::lower_helper), as does a lowering returning
// false for a type or attribute it does not handle. An op appended to
// opcodes.inc without an entry in Lowerings fails to compile (kOpLowering
// names Lowerings::<Name>), so "which ops are native" is decided here and
// nowhere else; backend_x64/native_ops.cpp's per-tier, per-type declaration
// is checked against this table at compile time.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "backend_common/lowering_table.h"
#include "backend_x64/emitter.h"

namespace gpurc::x64 {

// The entry type and kinds are backend_common/lowering_table.h's.
using backend::LowerKind;
using OpLowering = backend::OpLowering<Emitter>;
using LowerFn = OpLowering::Fn;

// One entry per op of ir/opcodes.inc (friend of Emitter: it names private members).
struct Lowerings {
  static constexpr LowerKind S = LowerKind::Strip;
  static constexpr LowerFn kState = &Emitter::lower_state;      // lower_int.cpp: state, select, sign-bit float ops
  static constexpr LowerFn kInt = &Emitter::lower_int;          // lower_int.cpp: integer ops in 32-bit lanes
  static constexpr LowerFn kFloat = &Emitter::lower_float;      // lower_float.cpp: f32 arithmetic, compares, conversions
  static constexpr LowerFn kWide = &Emitter::lower_wide;        // lower_int.cpp: 64-bit moves (state, bitcast)
  static constexpr LowerFn kWideInt = &Emitter::lower_wide_int; // lower_int.cpp: i64 integer ops

  // ---- values, state and control
  static constexpr OpLowering Const{S, kState, kWide};
  static constexpr OpLowering Undef{S, kState, kWide};
  static constexpr OpLowering Phi{LowerKind::Control};
  static constexpr OpLowering Select{S, kState, kWideInt};
  static constexpr OpLowering GetVar{LowerKind::PreSsa};
  static constexpr OpLowering SetVar{LowerKind::PreSsa};
  static constexpr OpLowering LoadVar{S, kState, kWide};
  static constexpr OpLowering StoreVar{S, kState, kWide};
  static constexpr OpLowering LoadUniform{S, kState, kWide};
  static constexpr OpLowering LoadUniformIdx{S, kState};
  static constexpr OpLowering EntryMask{S, kState};
  static constexpr OpLowering LaneId{S, kState};
  static constexpr OpLowering Budget{LowerKind::Budget};
  static constexpr OpLowering Trap{LowerKind::WarpHelper};

  // ---- integer
  static constexpr OpLowering IAdd{S, kInt, kWideInt};
  static constexpr OpLowering ISub{S, kInt, kWideInt};
  static constexpr OpLowering IAddC{S, kInt, kWideInt};
  static constexpr OpLowering ICarry{S};
  static constexpr OpLowering IOverflow{S};
  static constexpr OpLowering IMul{S, kInt, kWideInt};
  static constexpr OpLowering IMulHi{S};
  static constexpr OpLowering IMulWide{S, nullptr, kWideInt};  // i32 x i32 -> i64 only
  static constexpr OpLowering IMad{S, kInt, kWideInt};
  static constexpr OpLowering ISad{S};
  static constexpr OpLowering IMin{S, kInt, kWideInt};
  static constexpr OpLowering IMax{S, kInt, kWideInt};
  static constexpr OpLowering INeg{S, kInt, kWideInt};
  static constexpr OpLowering IAbs{S, kInt, kWideInt};
  static constexpr OpLowering ICmp{S, kInt, kWideInt};
  static constexpr OpLowering Shl{S, kInt, kWideInt};
  static constexpr OpLowering LShr{S, kInt, kWideInt};
  static constexpr OpLowering AShr{S, kInt, kWideInt};
  static constexpr OpLowering And{S, kInt, kWideInt};
  static constexpr OpLowering Or{S, kInt, kWideInt};
  static constexpr OpLowering Xor{S, kInt, kWideInt};
  static constexpr OpLowering Not{S, kInt, kWideInt};
  static constexpr OpLowering Lut3{S, kInt};       // Avx512 only (vpternlogd)
  static constexpr OpLowering BfExtract{S, kInt};
  static constexpr OpLowering BfInsert{S};
  static constexpr OpLowering Popcount{S};
  static constexpr OpLowering BitReverse{S};
  static constexpr OpLowering FindMsb{S, kInt};    // Avx512 only (vplzcntd)
  static constexpr OpLowering FindLsb{S, kInt};    // Avx512 only (vplzcntd)
  static constexpr OpLowering Zext{S, kInt, kWideInt};
  static constexpr OpLowering Sext{S, kInt, kWideInt};
  static constexpr OpLowering Trunc{S, kInt, kWideInt};
  static constexpr OpLowering Bitcast{S, kInt, kWide};
  static constexpr OpLowering Extract16{S, kInt};
  static constexpr OpLowering Insert16{S, kInt};

  // ---- float (f64 arithmetic stays with the helper)
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
  static constexpr OpLowering FRcp{S, kFloat};     // Transc::Ieee and Transc::Pica
  static constexpr OpLowering FRsqrt{S, kFloat};   // Transc::Pica only
  static constexpr OpLowering FSqrt{S, kFloat};    // Transc::Ieee only
  static constexpr OpLowering FExp2{S, kFloat};    // Transc::Pica only
  static constexpr OpLowering FLog2{S, kFloat};    // Transc::Pica only
  static constexpr OpLowering FSin{S};
  static constexpr OpLowering FCos{S};
  static constexpr OpLowering FSinStep{S};
  static constexpr OpLowering FToI{S, kFloat};     // f32 -> signed i32
  static constexpr OpLowering IToF{S, kFloat};     // also i64 widened from 32 bits (itof_narrow_source)
  static constexpr OpLowering FToF{S};

  // ---- cross-lane
  static constexpr OpLowering Ballot{LowerKind::Vote};
  static constexpr OpLowering Any{LowerKind::Vote};
  static constexpr OpLowering All{LowerKind::Vote};
  static constexpr OpLowering Shuffle{LowerKind::WarpHelper};
  static constexpr OpLowering Broadcast{LowerKind::WarpHelper};
  static constexpr OpLowering QuadShuffle{LowerKind::WarpHelper};
  static constexpr OpLowering Reduce{LowerKind::WarpHelper};
  static constexpr OpLowering ScanIncl{LowerKind::WarpHelper};
  static constexpr OpLowering ScanExcl{LowerKind::WarpHelper};

  // ---- memory
  static constexpr OpLowering Load{LowerKind::WarpHelper};
  static constexpr OpLowering Store{LowerKind::WarpHelper};
  static constexpr OpLowering AtomicRmw{LowerKind::WarpHelper};
  static constexpr OpLowering AtomicCas{LowerKind::WarpHelper};

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

}  // namespace gpurc::x64
