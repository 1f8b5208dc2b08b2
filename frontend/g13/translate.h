// Translation of G13 machine code to pre-SSA IR (first slice: the integer ALU
// subset and the exec-mask control flow; see docs/g13.md for the list).
//
// Guest state: var N = rN (I32, 32 lanes) for N in 0..127. Uniform registers
// are the uniform block (u-half i at byte 2*i, 1024 bytes). The G13 exec mask
// is explicit: every instruction computes exec = entry_mask & (r0l == 0) and
// writes its results through select(exec, new, old), so the IR's own
// divergence machinery only sees the warp-uniform jmp_exec_any/none branches.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "ir/ir.h"

namespace gpurc::g13 {

constexpr uint32_t kUniformBytes = 1024;

// False with `err` naming the first unsupported instruction and its pc.
bool translate(const uint8_t* code, size_t size, ir::Function& out, std::string& err);

}  // namespace gpurc::g13
