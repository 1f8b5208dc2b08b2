// The PICA200 draw runner: a vertex shader's warps run straight from caller
// memory into caller memory, the way an emulator's shader unit is fed (the
// public DrawState of include/gpurc/pica200.h is a thin layer over it).
//
// A DrawPlan (made once per prepared shader) says which var slots hold which
// input and output register components and what must be zeroed before a warp;
// a DrawScratch (owned by the caller, reused across calls) holds one warp's
// var area and frame; run_draw moves the loaded input registers into the
// var area (AoS -> SoA, vectorised), runs the compiled code directly (no
// rt::launch: a vertex shader has no barriers, shared memory or stacks) and
// moves the output registers out (SoA -> AoS), 32 vertices at a time. No
// VertexState is built, nothing is allocated per call, and only the var
// bytes the code may read without having written them are zeroed.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "frontend/pica200/abi.h"
#include "ir/draw_loop_entry.h"
#include "runtime/memory.h"

namespace gpurc::pica {

struct PreparedShader;

struct DrawPlan {
  bool valid = false;  // a compiled vertex shader (not the reference, not a geometry shader)
  uint32_t vars_bytes = 0, frame_bytes = 0;
  bool frame_needs_zero = true;
  // Input register n: the var offsets of its x, y, z, w (lane 0); `in_read`
  // has bit n when the code may read the register.
  std::array<std::array<uint32_t, 4>, 16> in_var{};
  uint16_t in_read = 0;
  // Output register n likewise (for a register drop_pass_through took out
  // of the code: its input register's vars); `out_written`: the code may
  // write some component of it (else its outputs are zero).
  std::array<std::array<uint32_t, 4>, 16> out_var{};
  uint16_t out_written = 0;
  // Var byte ranges zeroed before every warp: what the code may read
  // (Executable::var_read_ranges) and output components it writes on some
  // paths only, minus the input registers (those the caller does not supply
  // are zeroed per call, `in_ranges`). Ascending, merged.
  std::vector<std::pair<uint32_t, uint32_t>> zero;
  // `zero` as (offset, bytes) pairs for the engine's draw loop (ir::DrawLoop),
  // made once here (a vector built per draw cost a heap allocation per call);
  // empty with zero_loop_ok false when a range is not a multiple of 32 bytes.
  std::vector<uint32_t> zero_pairs;
  bool zero_loop_ok = true;
  std::array<std::pair<uint32_t, uint32_t>, 16> in_ranges{};  // register n's 4 vars: [first, end)
  // Pass-through registers: forward[n] = m when o-register n is, on every
  // path, a plain copy of v-register m component for component (MOV oN, vM);
  // -1 otherwise. The draw copies them from the caller's input records to
  // its output records directly instead of through the var area.
  // forward_only: input registers the code reads for such copies only (not
  // loaded into the var area).
  std::array<int8_t, 16> forward{};
  uint16_t forward_only = 0;
};
// What the draw plan reads from a vertex shader's translation, found in one
// walk (draw_facts): the input registers it reads, the output registers it
// writes or reads, the output components written on every path to a return
// (bit 4n + c), and its pass-through registers (DrawPlan::forward and
// forward_only as the translation has them).
struct DrawFacts {
  uint16_t in_read = 0, out_written = 0, read_out = 0;
  uint64_t always = ~uint64_t(0);
  std::array<int8_t, 16> forward{};
  uint16_t forward_only = 0;
};
DrawFacts draw_facts(const ir::Function& f);

// The plan of a compiled vertex shader (s.function and s.compiled set).
// `dropped`: the pass-through registers drop_pass_through took out of `f`
// before it was compiled (dropped[n] = m: o-register n is a copy of
// v-register m; -1 otherwise), which the plan then forwards as well.
// `facts`: draw_facts(f) when the caller has them (drop_pass_through hands
// them out), else they are found here.
DrawPlan make_draw_plan(const ir::Function& f, const ir::Executable& exe, uint32_t vars_bytes,
                        const std::array<int8_t, 16>* dropped = nullptr, const DrawFacts* facts = nullptr);

// A vertex shader's pass-through registers (DrawPlan::forward) taken out of
// its translation before it is compiled (thirteenth session): their output
// var writes, and the input var reads only they used, are removed, so the
// code neither loads nor stores them; every runner then copies v-register m
// to o-register n itself (run_draw's forward copies, run_vertices' finish
// hook). Only registers whose output vars nothing reads. Returns what it
// removed (-1: nothing for that register). `after`: set to draw_facts(f) of
// the function it leaves.
std::array<int8_t, 16> drop_pass_through(ir::Function& f, DrawFacts* after = nullptr);
// Whether prepare_shader drops them: yes unless GPURC_PASS_THROUGH=0 (read
// once per process; for measurements).
bool pass_through_dropping();

// Where register n of vertex k lives in caller memory: `stride[n]` bytes
// apart from `base[n]`; component c of register n at +comp[n][c] (a quad when
// comp[n] = {0, 4, 8, 12}; kNoComponent: not stored).
// Only the entries of registers in `mask` are set and read (the rest stay
// uninitialised: building the streams is part of every draw's fixed cost).
struct DrawStreams {
  static constexpr int32_t kNoComponent = -1;
  uint16_t mask = 0;
  std::array<uint8_t*, 16> base;
  std::array<size_t, 16> stride;
  std::array<std::array<int32_t, 4>, 16> comp;
  std::array<bool, 16> quad;  // comp[n] == {0, 4, 8, 12}
};

// What one draw moves (draw.cpp), resolved once per call or reused from the
// previous call (DrawScratch::setup): the registers both supplied and read,
// the ones read but not supplied (zeroed), the outputs to store / to zero.
struct DrawMoves {
  uint16_t load = 0, zero_in = 0, store = 0, zero_out = 0;
  uint16_t forward = 0;  // output registers copied from their input register (DrawPlan::forward)
  // `forward` in the order the copies run (order_forwards): no copy writes
  // bytes of its vertex that a later copy reads.
  // (The fields below without initialisers are set where they are read: a
  // zeroed DrawMoves was a `rep stos` per draw; ninth session.)
  std::array<uint8_t, 16> forward_order;
  uint32_t nforward = 0;
  // The same moves for the engine's draw loop (ir::DrawLoop), when it has
  // one and every moved output register is a quad: every warp, the last
  // partial one included, then moves its registers in generated code, and
  // run_range_t serves the other draws (output maps, engines without one).
  bool engine_loop = false;
  bool prefetch = false;
  bool reverse = false;  // warps from the last down (run_range)
  bool tail_in_loop = true;  // a last partial warp runs in the draw loop too
  // In the calling state's DrawScratch (kept: no 2 KiB set-up per call).
  const ir::DrawRegMove *loads, *stores;
  const ir::DrawCopy *pre, *post;
  uint32_t nloads, nstores, npre, npost;
  // DrawScratch::loop_code / loop_warp_entry (null code: run_draw_loop).
  const uint8_t* loop_code;
  const uint8_t* loop_warp_entry;
  // loop_code + ir::kDrawLoopKeptNextEntry: the repeated draw's entry
  // (run_again_short_kept_uniforms; one load at the call, no add).
  const uint8_t* loop_code_kept_next;
};

struct DrawResult {
  bool ok = true;
  bool watchdog = false;
  size_t fault_vertex = 0;
  std::string fault;
};

// The automatic thread choice (threads = 0) of one DrawScratch's large
// draws (seventeenth session; docs/pica200.md). Clock readings are passed
// in (ns, any epoch), so tests drive it with made-up times.
//
// What it compares is the *cycle*: ns per vertex from a large draw's start
// to the next large draw's start. A split draw also costs its caller
// afterwards (the caller reads output lines the other core wrote, and
// writes input lines the other core holds), which the draw's own time does
// not show; the cycle does. The part of the cycle after the draw counts up
// to kGapCap times the draw's own time, so a caller that does much other
// work between draws does not drown the draw in noise. A draw whose
// one-thread time (measured) is under kMinWorkNs never splits. Otherwise
// the faster mode runs, and now and then (every probe_every large draws,
// 64 doubling to 1024 while the probes confirm the choice) a probe runs the
// other mode for kProbeDraws draws. A draw that runs in the other mode than
// the draw before it is not counted (the worker may have been asleep, the
// lines elsewhere).
struct SplitChooser {
  static constexpr double kMinWorkNs = 20000;
  static constexpr double kGapCap = 2;
  static constexpr double kMargin = 0.9;  // a split must be 10% faster (timings are noisy)
  static constexpr uint32_t kProbeFirst = 64, kProbeMax = 1024, kProbeDraws = 3;
  // Whether a large draw of `count` vertices needs the clock: not when its
  // one-thread time is well under kMinWorkNs (it would not split anyway),
  // but for every kResample-th such draw (the load changes). A clock read
  // costs 40-80 ns on the development VM: two per draw were ~2.5% of a
  // 4096-vertex draw of ref_simple. False: call skip() and run it on the
  // calling thread.
  bool wants_clock(size_t count) {
    if (one_draw == 0 || one_draw * double(count) >= 0.5 * kMinWorkNs) return true;
    return ++unclocked % kResample == 0;
  }
  void skip() {
    start = 0;
    probing = false;
    probe_left = 0;
  }
  static constexpr uint32_t kResample = 32;
  // A large draw of `count` vertices starts at `now`: split it?
  bool begin(size_t count, int64_t now);
  // It returned at `now`.
  void end(int64_t now);

  double one_draw = 0;        // ns/vertex of the draw alone on one thread (moving average); 0: none yet
  double cycle[2] = {0, 0};   // ns/vertex of the cycle: [0] one thread, [1] split; 0: none yet
  uint32_t samples[2] = {0, 0};  // cycles counted into cycle[] since it was last reset
  // The open draw (start = 0: none).
  int64_t start = 0, draw_ns = 0;
  size_t count = 0;
  bool split = false, counted = false;
  // Probes: draws until the next; draws of the running probe left; the
  // choice before it.
  uint32_t since_probe = 0, probe_every = kProbeFirst, probe_left = 0;
  uint32_t unclocked = 0;  // draws wants_clock() let go untimed
  bool probe_mode = false, before_probe = false, probing = false;
};

// One warp's var area and frame (64-byte aligned), grown on demand and kept,
// and what this state measured about splitting draws over threads.
struct DrawScratch {
  std::unique_ptr<uint8_t[], rt::Buffer::AlignedFree> mem;
  size_t bytes = 0;
  uint8_t* get(size_t need);
  // threads = 0 (automatic): the thread choice of large draws.
  SplitChooser chooser;
  // The descriptors of the engine's draw loop (ir::DrawLoop) for the current
  // draw; only the entries a draw sets are read.
  std::array<ir::DrawRegMove, 16> loop_loads, loop_stores;
  std::array<ir::DrawCopy, 16> loop_pre, loop_post;
  // The engine's draw loop as code to call (ir::Executable::draw_loop_code),
  // asked once per executable: no virtual calls through the engine's
  // wrappers on every draw.
  const ir::Executable* loop_exe = nullptr;
  bool loop_has = false;
  const uint8_t* loop_code = nullptr;
  const uint8_t* loop_warp_entry = nullptr;
  // The set-up of the last draw (ninth session): a caller that describes the
  // same streams as in its previous draw gives the same non-zero
  // `streams_id` (DrawState: a new id whenever its streams change), and
  // run_draw reuses `setup` (masks, copy order, the draw loop's descriptors
  // above) instead of building it again. 0: no reuse.
  uint64_t streams_id = 0;
  uint64_t setup_id = 0;  // the streams_id `setup` was made for; 0: none
  const DrawPlan* setup_plan = nullptr;
  size_t setup_count = 0;
  bool setup_count_matters = false;  // the copy order depended on the vertex count
  DrawMoves setup;
  // jit_watchdog_units(units_budget, units_cost), kept (tenth session); -1: none yet.
  uint64_t units_budget = 0, units_cost = 0;
  int64_t units = -1;
  // The repeated draw (eleventh session): when `setup` is reused, runs on the
  // calling thread and goes through the draw-loop stub, run_draw calls the
  // stub with this descriptor and context, which keep everything but the
  // per-call fields (the warps, the tail, the budget, the context's status
  // and fault fields) from the draw that made the set-up: no Moves, Fault,
  // thread split, run_range or descriptor fill per call. `again_ok`: they
  // are filled for `setup` (cleared whenever the set-up is rebuilt).
  bool again_ok = false;
  ir::DrawLoop again_loop;
  ir::WarpContext again_ctx;
  DrawResult again_fault;  // run_draw_again's result when it returns -1
  // The repeated draw's short form (twelfth session, run_draw_again_fast):
  // after a call of run_draw_again that finished, `again_ctx` holds what the
  // next call needs (the stub sets the per-warp fields and leaves the fault
  // fields alone when nothing faults), the inputs no stream supplies are
  // still zero in the vars (nothing but loads of this set-up's registers
  // writes input vars) and `again_loop.budget` is `again_budget`'s. So the
  // next call with that budget sets the warps, the tail and the uniforms
  // pointer only. Cleared with again_ok, and after a fault; never set for a
  // set-up whose copy order depends on the count (setup_count_matters).
  bool again_clean = false;
  uint64_t again_budget = 0;
};

// Draws smaller than this run on the calling thread whatever the thread count
// (docs/pica200-embedding.md, "Threading"; the short forms of the repeated
// draw rely on it). From this size threads = 0 splits a draw only when its
// one-thread time is large enough and the state's own measurements
// (SplitChooser) say that pays, so the default is never slower than one
// thread by more than the occasional probe.
constexpr size_t kDrawParallelMin = 1024;

// Runs vertices [0, count) of a compiled vertex shader: inputs from `in`
// (registers outside in.mask that the code reads are zero), outputs to `out`.
// `uniforms`: the packed uniform block (pack_uniforms layout, at least
// max(kUniformBytes, f.uniform_bytes) + 64 bytes, 64-byte aligned).
// threads: 1 = the calling thread; 0 = automatic (all cores from
// kDrawParallelMin vertices when measured to pay); n > 1 = n threads from
// kDrawParallelMin vertices. `scratch` serves the calling thread.
DrawResult run_draw(const PreparedShader& s, const DrawPlan& plan, const uint8_t* uniforms, const DrawStreams& in,
                    const DrawStreams& out, size_t count, unsigned threads, uint64_t budget, DrawScratch& scratch);

// run_draw for a caller that describes the same streams as in its previous
// draw (scratch.streams_id as run_draw reads it), when that draw's set-up
// can be run again through the engine's draw-loop stub on the calling
// thread (DrawScratch::again_ok; not when the draw would be split over
// threads): 1 = it ran and every vertex finished; -1 = it ran and faulted,
// scratch.again_fault says how (as run_draw's result would); 0 = this path
// does not apply and nothing ran (call run_draw). The same draw as run_draw,
// with none of its per-call set-up (eleventh session: a repeated 32-vertex
// draw of the simple shader spent ~240 host instructions there).
int run_draw_again(const PreparedShader& s, const DrawPlan& plan, const uint8_t* uniforms, size_t count,
                   unsigned threads, uint64_t budget, DrawScratch& scratch);

// run_draw_again's result -1 after the stub returned `status` (not Done):
// fills scratch.again_fault (out of line).
int run_draw_again_failed(const PreparedShader& s, const DrawPlan& plan, const uint8_t* uniforms, uint32_t status,
                          DrawScratch& scratch);

// run_draw_again's short form (DrawScratch::again_clean), inline: a draw
// of the kept set-up right after one that finished, with the same budget,
// on the calling thread, costs these checks and a few stores before the
// stub. again_short_form: whether it applies (count must not be 0);
// run_again_short: runs it, returning the stub's status (a fault:
// run_draw_again_failed).
// (again_clean is never set for a set-up whose copy order depends on the
// vertex count: no setup_count_matters test here.)
inline bool again_short_form(const DrawPlan& plan, size_t count, unsigned threads, uint64_t budget,
                             const DrawScratch& scratch) {
  return scratch.again_clean && scratch.setup_id == scratch.streams_id && scratch.setup_plan == &plan &&
         budget == scratch.again_budget && (threads == 1 || count < kDrawParallelMin);
}
// again_short_form for a scratch that only ever serves one plan (a
// DrawState's own: its set-ups are all for its shader's plan), for the
// streams `streams_id` (which need not be stored in scratch.streams_id
// first: the short form does not read it). Thirteenth session: the plan
// test and the store were 5 of a bound 32-vertex draw's ~85 fixed host
// instructions.
inline bool again_short_form_one_plan(uint64_t streams_id, size_t count, unsigned threads, uint64_t budget,
                                      const DrawScratch& scratch) {
  return scratch.again_clean && scratch.setup_id == streams_id && budget == scratch.again_budget &&
         (threads == 1 || count < kDrawParallelMin);
}
inline uint32_t run_again_short(const uint8_t* uniforms, size_t count, DrawScratch& scratch) {
  ir::DrawLoop& loop = scratch.again_loop;
  loop.end_warp = uint32_t((count + ir::kWarpLanes - 1) / ir::kWarpLanes);
  loop.tail = uint32_t(count % ir::kWarpLanes);
  scratch.again_ctx.uniforms = uniforms;
  using DrawCode = uint32_t (*)(ir::WarpContext*, ir::DrawLoop*);
  return reinterpret_cast<DrawCode>(const_cast<uint8_t*>(scratch.setup.loop_code))(&scratch.again_ctx, &loop);
}
// run_again_short for a scratch whose draws all pass the same uniform
// block (a DrawState's own): the kept context holds that pointer already
// (run_draw_again stored it), so it is not stored again (fifteenth session);
// nor is DrawLoop::next, which the same stub filled in the kept descriptor
// on its earlier call (ir::kDrawLoopKeptNextEntry).
inline uint32_t run_again_short_kept_uniforms(size_t count, DrawScratch& scratch) {
  ir::DrawLoop& loop = scratch.again_loop;
  loop.end_warp = uint32_t((count + ir::kWarpLanes - 1) / ir::kWarpLanes);
  loop.tail = uint32_t(count % ir::kWarpLanes);
  using DrawCode = uint32_t (*)(ir::WarpContext*, ir::DrawLoop*);
  return reinterpret_cast<DrawCode>(const_cast<uint8_t*>(scratch.setup.loop_code_kept_next))(&scratch.again_ctx,
                                                                                             &loop);
}
// run_draw_again through the short form when it applies.
inline int run_draw_again_fast(const PreparedShader& s, const DrawPlan& plan, const uint8_t* uniforms, size_t count,
                               unsigned threads, uint64_t budget, DrawScratch& scratch) {
  if (again_short_form(plan, count, threads, budget, scratch)) [[likely]] {
    const uint32_t st = run_again_short(uniforms, count, scratch);
    if (st == uint32_t(ir::RunStatus::Done)) [[likely]]
      return 1;
    return run_draw_again_failed(s, plan, uniforms, st, scratch);
  }
  return run_draw_again(s, plan, uniforms, count, threads, budget, scratch);
}

// Moves the kept set-up of `scratch` (DrawScratch::setup and the draw
// loop's descriptors) `vertices` records on: every register move and copy
// then starts at base + vertices * stride (a bound draw at another vertex
// offset, DrawState::run_bound). False, and nothing changed, when the set-up's
// copy order depends on where the records lie (setup_count_matters): the
// caller makes it again with run_draw.
bool move_draw_setup(DrawScratch& scratch, int64_t vertices);

}  // namespace gpurc::pica
