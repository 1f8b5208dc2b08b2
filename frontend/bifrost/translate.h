// ARM Mali Bifrost -> pre-SSA IR (docs/bifrost.md "Translation to IR").
//
// The translation keeps the interpreter's model: vars r0..r63, the per-thread
// pc and an "ended" flag; a dispatch loop picks, per guest warp (clusters of
// W lanes), the lowest pc of its live threads and runs that clause with the
// threads there; one IR block per clause. It covers a subset of the
// instructions the interpreter runs (the rest is a translate error naming
// instruction and clause), bit for bit with the interpreter.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "ir/ir.h"

namespace gpurc::bifrost {

// Var numbers of the translation's guest state.
constexpr uint32_t kVarReg0 = 0;      // r0..r63: vars 0..63 (i32)
constexpr uint32_t kVarPc = 64;       // per-thread pc (byte offset, i32)
constexpr uint32_t kVarEnded = 65;    // 1 once the thread ended (i32)
constexpr uint32_t kVarGuestWarp = 66;  // guest warp id within the workgroup (i32, FAU special 2)
constexpr uint32_t kVarWaiting = 67;    // 1 while the thread waits at a barrier (i32)
constexpr uint32_t kUniformBlockBytes = 256 * 4;

// `entry`: byte offset of the first clause (only used to check it is one).
bool translate(const uint8_t* code, size_t size, unsigned warp_width, ir::Function& out, std::string& err);

}  // namespace gpurc::bifrost
