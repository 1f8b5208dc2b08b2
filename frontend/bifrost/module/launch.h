// The Bifrost compute launch ABI over rt::launch (docs/bifrost.md "Launch"):
// a grid of workgroups, threads packed x-major into 32-lane host warps that
// hold 32/W guest warps of W lanes; uniforms u0..u255 (FAU pairs 0x80-0xff);
// registers start at zero except the compute preload r55-r62; global memory
// is the launch's rt::Memory, `wls` (workgroup local storage) is the block's
// shared memory. The replay handler, bench and tests share it.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "frontend/bifrost/interp.h"
#include "isa/module.h"
#include "runtime/launch.h"
#include "runtime/memory.h"
#include "runtime/thread_pool.h"

namespace gpurc::bifrost {

struct BifrostLaunch {
  std::vector<uint8_t> code;
  uint64_t entry = 0;             // byte offset of the first clause every thread runs
  unsigned warp_width = 4;        // 4 (G71/G72/G51/G31) or 8 (G76/G52)
  rt::Dim3 grid, block;
  uint64_t shared_bytes = 0;      // wls bytes per workgroup
  std::array<uint32_t, kUniformWords> uniforms{};
  int64_t budget = int64_t(1) << 34;  // clauses per host warp and run slice
};

struct BifrostResult {
  std::string error;                     // nothing ran, or an instruction the engine cannot run
  std::optional<rt::LaunchFault> fault;  // a guest fault
  std::string fault_message;
  double compile_us = 0, run_us = 0;
  uint64_t lane_instructions = 0;
  bool ok() const { return error.empty() && !fault; }
};

// Per host warp after it finished (reference engine): its final state.
using BifrostFinish = std::function<void(const rt::WarpInfo&, const WarpState&)>;

// Fills the start state of a host warp (registers zero, preload, pcs).
void init_warp(const BifrostLaunch& L, const rt::WarpInfo& w, WarpState& st);

// Runs the launch on the reference interpreter (reference engine) or the
// translation to IR compiled by the engine (an untranslated instruction is
// the error, naming it).
BifrostResult run_bifrost(const BifrostLaunch& L, const isa::EngineHandle& engine, rt::Memory& memory,
                          unsigned threads, const BifrostFinish& finish = {});

// Runs `exe`, an engine's executable of `f` (the translation of L's code),
// through rt::launch: the start state packed into f's vars (translate.h).
BifrostResult run_translation(const BifrostLaunch& L, const ir::Function& f, const ir::Executable& exe,
                              uint32_t vars_bytes, uint64_t max_step_cost, rt::Memory& memory, rt::ThreadPool* pool,
                              const BifrostFinish& finish = {});

// The interpreter as an engine handle (fuzzing, instruction counts).
const isa::EngineHandle& reference_engine();

unsigned warp_width_of(const std::string& variant);  // 0 = unknown variant

// The translation of the launch's code (translate.h) for its warp width.
bool translate_launch(const BifrostLaunch& L, ir::Function& f, std::string& err);

}  // namespace gpurc::bifrost
