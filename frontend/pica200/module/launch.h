// The PICA200 launch ABI: running a shader on many vertices with one engine
// through rt::launch, as warps of 32 vertices: the reference interpreter
// (an engine whose isa::EngineHandle::is_reference(), run as
// pica::ReferenceExecutable, reference.h) or a translation an engine compiled
// (pica::translate -> EngineHandle::compile). Shared by the replay handler,
// the public API (include/gpurc/pica200.h, recompiler/pica200_api.cpp), the
// fuzz session's reference run and the tests, so every way in runs the same
// code.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "frontend/pica200/interp.h"
#include "frontend/pica200/module/draw.h"
#include "frontend/pica200/translate.h"
#include "isa/module.h"

namespace gpurc::pica {

// A shader made ready for one engine. Immutable after prepare_shader, so one
// PreparedShader may run on many threads at once.
struct PreparedShader {
  Program program;
  TranslateOptions options;   // entry, geometry, fp options
  std::string engine;         // the engine's name ("interp", "jit-avx2", ...): fault texts, Shader::backend_name
  bool reference = true;      // the reference interpreter runs it (no translation)
  // Compiled engines only: the translated function (its var layout is what
  // pack_lanes/unpack_lanes use) and its compiled code. prepare_shader with
  // an engine keeps the function without its instructions and blocks (the
  // engine took those: EngineHandle::compile_owned); the overload given a
  // compiled translation keeps the whole function.
  std::shared_ptr<const ir::Function> function;
  LaneMap lanes;  // the state fields the code reads / writes (LaneMap::used)
  isa::Compiled compiled;     // compile_us is 0 on a code-cache hit
  double translate_us = 0;
  // Compiled vertex shaders: how run_draw (draw.h) moves registers in and out.
  DrawPlan draw;
  // Pass-through registers taken out of `function` before it was compiled
  // (drop_pass_through, draw.h): o-register n is a copy of v-register
  // dropped[n] (-1: not taken out), which every runner copies itself.
  std::array<int8_t, 16> dropped = minus_ones();
  static constexpr std::array<int8_t, 16> minus_ones() {
    std::array<int8_t, 16> a{};
    for (int8_t& x : a) x = -1;
    return a;
  }
};

// Checks the program (size limits, entry inside it), and for an engine other
// than the reference translates it and compiles it with `engine` (which may
// cache the code by the IR's content). False with `err`.
// `program` by value: a caller that hands it over with std::move saves the
// copy of its up to 4096 words.
bool prepare_shader(Program program, const TranslateOptions& options, const isa::EngineHandle& engine,
                    PreparedShader& out, std::string& err);
// The same with a translation already compiled: `function` is what
// pica::translate(program, options) made, `compiled` its code (from an
// engine named `engine_name`).
bool prepare_shader(const Program& program, const TranslateOptions& options,
                    std::shared_ptr<const ir::Function> function, isa::Compiled compiled,
                    const std::string& engine_name, PreparedShader& out, std::string& err);

struct BatchOptions {
  unsigned threads = 0;             // 0: all host cores; 1: the calling thread only
  uint64_t budget = 1u << 22;       // executed instructions allowed per vertex (JIT: turned into watchdog units, pica200_run.cpp)
  size_t min_parallel = 256;        // fewer vertices than this run on the calling thread
  bool count_instructions = false;  // fill BatchResult::instructions (JIT: an extra interpreter run)
  bool set_b15 = true;              // geometry shaders: b15 = 1 from the second invocation on (hardware)
};

struct BatchResult {
  bool ok = true;
  std::string fault;          // the first fault (lowest vertex index), empty when ok
  std::string fault_kind;     // "watchdog" (budget exhausted) or "trap" (any other guest fault)
  size_t fault_vertex = 0;    // index of that vertex (JIT: the faulting lane of the first faulting warp)
  uint64_t instructions = 0;  // PICA instructions executed, summed over vertices (count_instructions)
  double run_us = 0;
};

// Whether the public API compiles vertex shaders under the draw contract
// (TranslateOptions::draw_only): yes unless GPURC_DRAW_ONLY=0 (read once
// per process; for measurements).
bool draw_only_enabled();

// Vertex shader: runs every state from its inputs (v, and whatever else the
// caller set) to END. Each state is one invocation; states are independent.
BatchResult run_vertices(const PreparedShader& s, const Uniforms& u, std::vector<VertexState>& states,
                         const BatchOptions& opt = {});

// Geometry shader: one invocation per state, each with its own fresh GsState
// (gs[k] belongs to states[k]; resized to states.size()). The states are the
// invocations of one batch in order: with BatchOptions::set_b15 (default)
// states[0] sees the uniforms as given and every later one sees b15 = 1, as
// the hardware sets b15 after each invocation; without it every invocation
// sees `u` as given.
BatchResult run_geometry(const PreparedShader& s, const Uniforms& u, std::vector<VertexState>& states,
                         std::vector<GsState>& gs, const BatchOptions& opt = {});

// The reference interpreter on every vertex of `states` (gs: geometry
// shaders, resized to states.size() and fresh), through rt::launch on the
// calling thread, whatever faults: a fault stops only its own vertex. One
// RunResult per vertex, in order. Every vertex sees `u` as given (no b15
// rule). The fuzzer's reference, which expects faults in some vertices and
// compares the others.
std::vector<RunResult> run_reference_each(const Program& program, const TranslateOptions& options,
                                          const Uniforms& u, std::vector<VertexState>& states,
                                          std::vector<GsState>* gs, uint64_t budget);

// The JIT's watchdog units per warp for `budget` guest instructions per
// vertex (launch.cpp explains the scale), for runners that set up warps
// themselves (run_draw).
int64_t jit_watchdog_units(uint64_t budget, uint64_t max_step_cost);

// The reference engine as a handle (run_vertices / run_geometry with it run
// the interpreter), for callers that have no engine registry.
const isa::EngineHandle& reference_engine();

}  // namespace gpurc::pica
