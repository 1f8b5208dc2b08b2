// The shape every host tier's op dispatch table has (backend_x64/lowering.h,
// backend_a64/lowering.h): the kinds of lowering, the entry type over the
// tier's Emitter, and the expansion of the tier's `Lowerings` struct (one
// static member per op of ir/opcodes.inc) into a table indexed by
// ir::Opcode, with a compile-time check that every entry's kind agrees with
// the strip / warp split of plan.cpp. Which op is native on which tier stays
// in the tier's own Lowerings.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "ir/ir.h"

namespace gpurc::backend {

enum class LowerKind : uint8_t {
  Strip,       // per-lane op run strip by strip: narrow / wide below, else the eval_lane helper
  Vote,        // warp op lowered natively over the whole warp (Emitter::emit_vote), else the warp helper
  WarpHelper,  // warp op run by rt::run_warp_op (a tier may try a fast path first: x64 load / store)
  Budget,      // inline watchdog subtract (Emitter::emit_warp_op)
  Control,     // phi moves and terminators (Emitter::emit_edge / emit_terminator)
  PreSsa,      // get_var / set_var: gone after SSA construction; compile() rejects them
};

template <class Emitter>
struct OpLowering {
  using Fn = bool (Emitter::*)(ir::ValueId);

  LowerKind kind;
  Fn narrow = nullptr;  // every operand and the result in 32-bit lanes
  Fn wide = nullptr;    // a 64-bit operand or result (the tier's lower_native decides)
  // Whether a lowering is named, fixed by which constructor built the entry:
  // comparing member-function pointers is not a constant expression under
  // -fsanitize=undefined, so native() must not test narrow/wide themselves.
  bool named = false;

  constexpr OpLowering(LowerKind k) : kind(k) {}
  constexpr OpLowering(LowerKind k, Fn n) : kind(k), narrow(n), named(true) {}
  constexpr OpLowering(LowerKind k, std::nullptr_t, Fn w) : kind(k), wide(w), named(true) {}
  constexpr OpLowering(LowerKind k, Fn n, Fn w) : kind(k), narrow(n), wide(w), named(true) {}

  // Some type has a native form (the tier's native_ops.cpp must declare it).
  constexpr bool native() const { return kind == LowerKind::Vote || named; }
};

// The strip / warp split of plan.cpp (is_strip_op), from the opcode table's
// props: strip ops are the pure, not cross-lane ops except phi, plus
// load_var / store_var.
constexpr bool strip_by_props(ir::Opcode op, std::string_view props) {
  if (op == ir::Opcode::LoadVar || op == ir::Opcode::StoreVar) return true;
  return props.find('P') != std::string_view::npos && props.find('X') == std::string_view::npos &&
         op != ir::Opcode::Phi;
}

// Lowerings::<Name> for every op, in ir::Opcode order. An op appended to
// opcodes.inc without an entry in Lowerings fails to compile here.
template <class Lowerings>
constexpr auto op_lowering_table() {
  using Entry = std::remove_cvref_t<decltype(Lowerings::Br)>;
#define OPCODE(Name, text, result, args, attr, props)                                                       \
  static_assert((Lowerings::Name.kind == LowerKind::Strip) == strip_by_props(ir::Opcode::Name, props),   \
                "lowering table: " text " has the wrong kind for its props");
#include "ir/opcodes.inc"
#undef OPCODE
  return std::array<Entry, ir::kNumOpcodes>{
#define OPCODE(Name, text, result, args, attr, props) Lowerings::Name,
#include "ir/opcodes.inc"
#undef OPCODE
  };
}

}  // namespace gpurc::backend
