// gpurc public C++ API (one include). What an embedder needs to run guest
// code on the CPU:
//   - gpurc::Engine, parse_engine(), resolve_engine()  engines/registry.h (names: interp, jit, jit-avx512, ...)
//   - compile_ir()                                    recompiler/engine.h
//   - rt::Memory (guest buffers), rt::launch()        runtime/memory.h, runtime/launch.h
//   - rt::ThreadPool, rt::CodeCache                   runtime/thread_pool.h, runtime/code_cache.h
//   - replay files                                    recompiler/replay.h
//   - per-ISA disassembler / assembler                recompiler/isa.h
// Example (IR text -> JIT -> run one grid):
//   ir::Function f; std::string err;
//   ir::parse(text, f, err);
//   gpurc::Engine e; gpurc::resolve_engine(gpurc::Engine::Jit, e, err);
//   gpurc::CompiledIr c; gpurc::compile_ir(f, e, {}, c, err);
//   rt::Memory mem; mem.add_buffer("data", ir::Space::Global, 0x1000, 4096, err);
//   rt::LaunchConfig cfg; cfg.grid = {16}; cfg.block = {256}; cfg.vars_bytes = c.vars_bytes;
//   rt::launch(*c.exe, mem, cfg, init_vars, read_vars, &rt::ThreadPool::shared());
#pragma once

#include "ir/abi.h"
#include "ir/ir.h"
#include "recompiler/engine.h"
#include "recompiler/isa.h"
#include "recompiler/replay.h"
#include "runtime/code_cache.h"
#include "runtime/launch.h"
#include "runtime/memory.h"
#include "runtime/thread_pool.h"

namespace gpurc {
constexpr int kVersionMajor = 0;
constexpr int kVersionMinor = 1;
}  // namespace gpurc
