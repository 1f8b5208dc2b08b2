// rt::launch's warp-loop fast path (docs/runtime.md, "Warp loop") with a
// hand-written executable whose run_warps follows the ir::WarpLoop contract
// in C++: which warps the launch hands to the loop, what the loop's warps
// start with, and how a fault inside the loop is reported.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <vector>

#include "runtime/launch.h"
#include "runtime/thread_pool.h"

namespace gpurc_test_runtime_warp_loop {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using Kind = ir::GuestMemory::Kind;

namespace {

// Var 0 (offset 0) is read and must start at zero; var 1 (offset 128) holds
// the thread's global index, written by init or by the loop's lane var; var
// 2 (offset 256) is a lane var of some launches that the code never reads.
constexpr uint32_t kReadOff = 0, kThreadOff = 128, kUnreadOff = 256, kVarsBytes = 384;

uint32_t lane_u32(const uint8_t* vars, uint32_t off, unsigned l) {
  uint32_t v;
  std::memcpy(&v, vars + off + 4 * l, 4);
  return v;
}

class Looped final : public ir::Executable {
 public:
  uint64_t fault_thread = ~uint64_t(0);
  // Also count, per lane, the warps of the block before this one in shared
  // word l (out += 256 * that count): shows shared memory zeroed per block.
  bool use_shared = false;
  mutable std::atomic<uint64_t> single_runs{0}, loop_warps{0}, loop_calls{0};
  mutable std::mutex offsets_lock;                 // loop calls may run on several threads
  mutable std::vector<uint32_t> loop_var_offsets;  // the lane vars of the last loop call

  size_t frame_bytes() const override { return 0; }
  bool frame_needs_zero() const override { return false; }
  // The var bytes the code reads: vars 0 and 1, or (other_reads) these
  // ranges besides var 1, each of whose bytes must start at zero and is
  // dirtied by the run.
  std::vector<std::pair<uint32_t, uint32_t>> other_reads;
  bool var_read_ranges(std::vector<std::pair<uint32_t, uint32_t>>& out) const override {
    out = {{kReadOff, kThreadOff + 128}};  // vars 0 and 1
    if (other_reads.empty()) return true;
    std::vector<std::pair<uint32_t, uint32_t>> all = other_reads;  // and var 1, merged and ascending
    all.emplace_back(kThreadOff, kThreadOff + 128);
    std::sort(all.begin(), all.end());
    out.clear();
    for (const auto& [lo, hi] : all) {
      if (!out.empty() && out.back().second >= lo) out.back().second = std::max(out.back().second, hi);
      else out.emplace_back(lo, hi);
    }
    return true;
  }
  // out[thread] = 1 + var 0 (1 when var 0 started at zero); then var 0 is
  // dirtied, so a warp after it in the same vars would see it if nobody zeroed it.
  ir::RunStatus body(ir::WarpContext& ctx) const {
    ctx.fault = ir::FaultKind::None;
    uint64_t unzeroed = 0;  // read bytes outside var 1 that did not start at zero
    for (const auto& [lo, hi] : other_reads)
      for (uint32_t b = lo; b < hi; ++b)
        if (b < kThreadOff || b >= kThreadOff + 128) {
          unzeroed += ctx.vars[b] != 0;
          ctx.vars[b] = 0xa5;
        }
    for (unsigned l = 0; l < 32; ++l) {
      if (!(ctx.entry_mask >> l & 1)) continue;
      const uint32_t thread = lane_u32(ctx.vars, kThreadOff, l);
      uint64_t v = 1 + (other_reads.empty() ? lane_u32(ctx.vars, kReadOff, l) : unzeroed);
      if (use_shared) {
        uint64_t count = 0;
        REQUIRE(ctx.memory->access(Kind::Load, ir::Space::Shared, 4 * l, 4, &count));
        v += count << 8;
        ++count;
        REQUIRE(ctx.memory->access(Kind::Store, ir::Space::Shared, 4 * l, 4, &count));
      }
      if (thread == fault_thread || !ctx.memory->access(Kind::Store, ir::Space::Global, thread * 4ull, 4, &v)) {
        ctx.fault = ir::FaultKind::OutOfBounds;
        ctx.fault_lane = l;
        ctx.fault_addr = thread * 4ull;
        return ctx.status = ir::RunStatus::Fault;
      }
      const uint32_t dirty = 0xdead0000u + l;
      std::memcpy(ctx.vars + kReadOff + 4 * l, &dirty, 4);
    }
    return ctx.status = ir::RunStatus::Done;
  }
  ir::RunStatus run(ir::WarpContext& ctx) const override {
    ++single_runs;
    return body(ctx);
  }
  bool has_warp_loop() const override { return true; }
  ir::RunStatus run_warps(ir::WarpContext& ctx, ir::WarpLoop& loop) const override {
    ++loop_calls;
    CHECK(ctx.entry_mask == 0xffffffffu);
    {
      std::lock_guard<std::mutex> g(offsets_lock);
      loop_var_offsets.clear();
      for (uint32_t i = 0; i < loop.nvars; ++i) loop_var_offsets.push_back(loop.vars[i].offset);
    }
    loop.block_left = 0;
    for (loop.warp = loop.first_warp; loop.warp < loop.end_warp; ++loop.warp) {
      ctx.budget = loop.budget;
      if (loop.shared_bytes) {  // the grid loop's shared memory, zeroed per block
        if (loop.block_left == 0) {
          std::memset(loop.shared, 0, loop.shared_bytes);
          loop.block_left = loop.block_warps;
        }
        --loop.block_left;
      }
      for (uint32_t i = 0; i < loop.nzero; ++i) {
        CHECK(loop.zero[2 * i + 1] % 32 == 0);
        std::memset(ctx.vars + loop.zero[2 * i], 0, loop.zero[2 * i + 1]);
      }
      for (uint32_t i = 0; i < loop.nvars; ++i) {
        const ir::LaneVarInit& v = loop.vars[i];
        const uint64_t base = loop.bases[(loop.warp - loop.first_warp) * loop.nvars + i];
        for (unsigned l = 0; l < 32; ++l) {
          uint64_t add = 0, keep = ~uint64_t(0);
          std::memcpy(&add, v.lane_add + v.width * l, v.width);
          if (v.lane_keep) std::memcpy(&keep, v.lane_keep + v.width * l, v.width);
          const uint64_t x = (base + add) & keep;
          std::memcpy(ctx.vars + v.offset + v.width * l, &x, v.width);
        }
      }
      ++loop_warps;
      if (body(ctx) != ir::RunStatus::Done) return ctx.status;
    }
    return ctx.status = ir::RunStatus::Done;
  }
};

struct Run {
  rt::LaunchResult result;
  std::vector<uint32_t> out;
  uint64_t inits = 0;
  std::vector<uint32_t> fault_hook_warps;
};

struct Shape {
  rt::Dim3 grid{3, 1, 1}, block{80, 1, 1};  // per block: two full warps and one of 16 lanes
  uint64_t shared_bytes = 0;
  bool grid_loop = true;
  rt::ThreadPool* pool = nullptr;
  std::vector<std::pair<uint32_t, uint32_t>> other_reads;  // Looped::other_reads
  bool split = false;        // the lane vars' bases in LaneVarsPlan's split form
  bool unread_var = false;   // a lane var at kUnreadOff (first in the plan) that the code does not read
};

Run launch(Looped& exe, bool loop, bool with_finish, const Shape& shape = {}) {
  const rt::Dim3 grid = shape.grid, block = shape.block;
  const uint64_t threads = grid.count() * block.count();
  rt::Memory mem;
  std::string err;
  REQUIRE(mem.add_buffer("out", ir::Space::Global, 0, threads * 4, err));
  rt::LaunchConfig cfg;
  cfg.grid = grid;
  cfg.block = block;
  cfg.vars_bytes = kVarsBytes;
  cfg.warp_loop = loop;
  cfg.grid_loop = shape.grid_loop;
  cfg.shared_bytes = shape.shared_bytes;
  cfg.init_writes_finish_reads = true;
  Run r;
  rt::WarpHooks hooks;
  hooks.init = [&](const rt::WarpInfo& w, uint8_t* vars) {
    ++r.inits;
    for (unsigned l = 0; l < w.lanes; ++l) {
      const uint32_t t = uint32_t(w.block_linear * block.count() + w.thread_linear(l));
      std::memcpy(vars + kThreadOff + 4 * l, &t, 4);
    }
  };
  if (with_finish) hooks.finish = [](const rt::WarpInfo&, const uint8_t*) {};
  hooks.fault = [&](const rt::WarpInfo& w, const ir::WarpContext&, rt::LaunchFault&) {
    r.fault_hook_warps.push_back(w.warp);
  };
  alignas(64) static uint32_t iota[32];
  for (unsigned l = 0; l < 32; ++l) iota[l] = l;
  rt::LaneVarsPlan plan;
  const uint64_t unread_base = 0x5eed0000;
  if (shape.unread_var) plan.vars.push_back({kUnreadOff, 4, reinterpret_cast<const uint8_t*>(iota), nullptr});
  plan.vars.push_back({kThreadOff, 4, reinterpret_cast<const uint8_t*>(iota), nullptr});
  if (!shape.split) {
    plan.bases = [&](const rt::Dim3&, uint64_t block_linear, uint32_t first, uint32_t count, uint64_t* out) {
      for (uint32_t w = first; w < first + count; ++w) {
        if (shape.unread_var) *out++ = unread_base;
        *out++ = block_linear * block.count() + w * 32;
      }
    };
  } else {
    for (uint32_t w = 0; w < block.count() / 32; ++w) {
      if (shape.unread_var) plan.warp_bases.push_back(unread_base);
      plan.warp_bases.push_back(w * 32);
    }
    plan.block_bases = [&](const rt::Dim3& first, uint64_t linear, uint32_t count, uint64_t* out) {
      rt::Dim3 b = first;
      for (uint32_t k = 0; k < count; ++k, ++linear, rt::next_block(b, grid)) {
        CHECK(b.x + uint64_t(grid.x) * (b.y + uint64_t(grid.y) * b.z) == linear);  // coordinates counted on
        if (shape.unread_var) *out++ = 1;
        *out++ = linear * block.count();
      }
    };
  }
  hooks.lane_vars = &plan;
  r.result = rt::launch(exe, mem, cfg, hooks, shape.pool);
  r.out.resize(threads);
  std::memcpy(r.out.data(), mem.find("out")->data(), threads * 4);
  return r;
}

}  // namespace

TEST_CASE("warp loop: full warps in one call per block, partial warps and other launches per warp") {
  Looped exe;
  Run r = launch(exe, true, false);
  REQUIRE(r.result.ok());
  CHECK(r.result.warps == 9);
  CHECK(exe.loop_calls == 3);   // one per block
  CHECK(exe.loop_warps == 6);   // the two full warps of each block
  CHECK(exe.single_runs == 3);  // the 16-lane warp of each block
  CHECK(r.inits == 3);          // init only for the per-warp path
  for (uint32_t t = 0; t < r.out.size(); ++t) CHECK(r.out[t] == 1);  // var 0 zero for every warp

  for (bool loop : {false, true}) {
    Looped plain;
    CAPTURE(loop);
    Run p = launch(plain, loop, /*with_finish=*/loop);  // the loop off, or a finish hook: every warp per warp
    REQUIRE(p.result.ok());
    CHECK(plain.loop_calls == 0);
    CHECK(plain.single_runs == 9);
    CHECK(p.inits == 9);
    CHECK(p.out == r.out);
  }
}

TEST_CASE("warp loop: a fault inside the loop stops the launch at that warp, as on the per-warp path") {
  for (bool loop : {true, false}) {
    CAPTURE(loop);
    Looped exe;
    exe.fault_thread = 80 + 32 + 5;  // block 1, warp 1, lane 5
    Run r = launch(exe, loop, false);
    REQUIRE(r.result.fault);
    CHECK(r.result.fault->kind == ir::FaultKind::OutOfBounds);
    CHECK(r.result.fault->block.x == 1);
    CHECK(r.result.fault->warp == 1);
    CHECK(r.result.fault->lane == 5);
    CHECK(r.result.fault->addr == exe.fault_thread * 4);
    CHECK(r.fault_hook_warps == std::vector<uint32_t>{1});
    CHECK(r.result.warps == 3 + 1);  // block 0's three warps, block 1's warp 0
    for (uint32_t t = 0; t < r.out.size(); ++t) {
      CAPTURE(t);
      // Block 0, block 1's warp 0 and warp 1's lanes before the fault ran;
      // nothing after it (block 2 is not started).
      CHECK(r.out[t] == (t < 80 + 32 + 5 ? 1u : 0u));
    }
  }
}

TEST_CASE("grid loop: blocks of whole warps run many blocks per call, shared memory zeroed per block") {
  Shape shape;
  shape.grid = {4, 3, 1};  // 12 blocks of two warps: one call
  shape.block = {32, 2, 1};
  shape.shared_bytes = 200;
  std::vector<uint32_t> ref;
  for (int mode = 0; mode < 3; ++mode) {  // the grid loop, one loop call per block, every warp on its own
    CAPTURE(mode);
    Looped exe;
    exe.use_shared = true;
    shape.grid_loop = mode == 0;
    Run r = launch(exe, mode < 2, false, shape);
    REQUIRE(r.result.ok());
    CHECK(r.result.warps == 24);
    CHECK(exe.loop_calls == (mode == 0 ? 1u : mode == 1 ? 12u : 0u));
    CHECK(exe.single_runs == (mode == 2 ? 24u : 0u));
    CHECK(r.inits == (mode == 2 ? 24u : 0u));
    for (uint32_t t = 0; t < r.out.size(); ++t) {
      CAPTURE(t);
      CHECK(r.out[t] == 1 + 256 * (t / 32 % 2));  // a block's warp 1 sees warp 0's count, block by block
    }
    if (ref.empty()) ref = r.out;
    CHECK(r.out == ref);
  }
  // Many blocks: chunks of at most 256 warps per call.
  Looped exe;
  shape = Shape{};
  shape.grid = {300, 1, 1};
  shape.block = {64, 1, 1};
  Run r = launch(exe, true, false, shape);
  REQUIRE(r.result.ok());
  CHECK(r.result.warps == 600);
  CHECK(exe.loop_calls == 3);  // 128 blocks of two warps per call
  for (uint32_t t = 0; t < r.out.size(); ++t) CHECK(r.out[t] == 1);
}

TEST_CASE("grid loop: a fault in a middle block is reported as on the per-block and per-warp paths") {
  rt::ThreadPool pool(2);
  for (rt::ThreadPool* p : {static_cast<rt::ThreadPool*>(nullptr), &pool})
    for (int mode = 0; mode < 3; ++mode) {
      CAPTURE(mode);
      CAPTURE(p != nullptr);
      Shape shape;
      shape.grid = {7, 1, 1};
      shape.block = {96, 1, 1};  // three warps per block
      shape.shared_bytes = 64;
      shape.grid_loop = mode == 0;
      shape.pool = p;
      Looped exe;
      exe.fault_thread = 3 * 96 + 64 + 9;  // block 3, warp 2, lane 9
      Run r = launch(exe, mode < 2, false, shape);
      REQUIRE(r.result.fault);
      CHECK(r.result.fault->kind == ir::FaultKind::OutOfBounds);
      CHECK(r.result.fault->block.x == 3);
      CHECK(r.result.fault->warp == 2);
      CHECK(r.result.fault->lane == 9);
      CHECK(r.result.fault->addr == exe.fault_thread * 4);
      CHECK(r.fault_hook_warps == std::vector<uint32_t>{2});
      if (p) continue;  // other blocks' progress depends on the threads' timing
      CHECK(r.result.warps == 3 * 3 + 2);
      for (uint32_t t = 0; t < r.out.size(); ++t) {
        CAPTURE(t);
        CHECK(r.out[t] == (t < exe.fault_thread ? 1u : 0u));
      }
    }
}

TEST_CASE("warp loop: the split form of the bases and lane vars the code does not read") {
  // Every thread stores 1 at its own index (the lane var): a wrong base
  // leaves a 0 somewhere or faults. Each shape in both forms, with and
  // without an unread lane var in front (not handed to the loop), on the
  // grid loop, one loop call per block and (the reference) every warp on
  // its own, on one thread and on a pool.
  rt::ThreadPool pool(2);
  const rt::Dim3 shapes[][2] = {{{5, 3, 2}, {64, 2, 1}}, {{3, 1, 1}, {80, 1, 1}}, {{2, 70, 1}, {32, 1, 1}},
                                {{4, 1, 1}, {96, 3, 1}}};
  for (const auto& sh : shapes)
    for (int mode = 0; mode < 3; ++mode)
      for (bool split : {false, true})
        for (bool unread : {false, true})
          for (rt::ThreadPool* p : {static_cast<rt::ThreadPool*>(nullptr), &pool}) {
            CAPTURE(sh[0].x);
            CAPTURE(sh[1].x);
            CAPTURE(mode);
            CAPTURE(split);
            CAPTURE(unread);
            CAPTURE(p != nullptr);
            Shape shape;
            shape.grid = sh[0];
            shape.block = sh[1];
            shape.grid_loop = mode == 0;
            shape.split = split;
            shape.unread_var = unread;
            shape.pool = p;
            Looped exe;
            Run r = launch(exe, mode < 2, false, shape);
            REQUIRE(r.result.ok());
            CHECK(r.result.warps == shape.grid.count() * ((shape.block.count() + 31) / 32));
            for (uint32_t t = 0; t < r.out.size(); ++t) {
              CAPTURE(t);
              CHECK(r.out[t] == 1);
            }
            CHECK((exe.loop_calls > 0) == (mode < 2));
            if (mode < 2) CHECK(exe.loop_var_offsets == std::vector<uint32_t>{kThreadOff});
          }
}

TEST_CASE("warp loop: what is read around the lane vars starts at zero in every warp") {
  // Read ranges before, across and after the lane var (bytes 128..255),
  // not on 32-byte boundaries: the loop's zero list is cut around the var
  // and widened to granules; every read byte the var does not cover must
  // be zero when each warp starts (the code dirties them all).
  const std::vector<std::pair<uint32_t, uint32_t>> cases[] = {
      {{0, 40}, {100, 300}, {330, 384}}, {{8, 9}}, {{120, 136}}, {{250, 262}, {300, 301}}, {{0, 384}}};
  for (const auto& reads : cases)
    for (int mode = 0; mode < 3; ++mode) {
      CAPTURE(reads.size());
      CAPTURE(reads[0].first);
      CAPTURE(mode);
      Shape shape;
      shape.grid = {6, 1, 1};
      shape.block = {96, 1, 1};
      shape.grid_loop = mode == 0;
      Looped exe;
      exe.other_reads = reads;
      Run r = launch(exe, mode < 2, false, shape);
      REQUIRE(r.result.ok());
      CHECK((exe.loop_calls > 0) == (mode < 2));
      for (uint32_t t = 0; t < r.out.size(); ++t) {
        CAPTURE(t);
        CHECK(r.out[t] == 1);
      }
    }
}

}  // namespace gpurc_test_runtime_warp_loop
