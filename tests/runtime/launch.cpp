#include <doctest/doctest.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <set>
#include <vector>

#include "ir/builder.h"
#include "ir/interp.h"
#include "runtime/launch.h"

namespace gpurc_test_runtime_launch {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using ir::Space;
using Kind = ir::GuestMemory::Kind;

namespace {

// Var layout shared by the hand-written executables below: var 0 = thread id,
// var 1 = result, 32 lanes of 4 bytes each, 64-byte aligned slots.
constexpr uint32_t kTidOff = 0, kOutOff = 128, kVarsBytes = 256;

uint32_t lane_u32(const uint8_t* vars, uint32_t off, unsigned l) {
  uint32_t v;
  std::memcpy(&v, vars + off + 4 * l, 4);
  return v;
}
void set_lane_u32(uint8_t* vars, uint32_t off, unsigned l, uint32_t v) { std::memcpy(vars + off + 4 * l, &v, 4); }

// Phase 0: shared[tid] = tid + 1, then a barrier. Phase 1: out = shared[n-1-tid],
// a value written by another warp: correct only if the barrier held every warp.
class MirrorThroughShared final : public ir::Executable {
 public:
  explicit MirrorThroughShared(uint32_t n) : n_(n) {}
  size_t frame_bytes() const override { return 16; }
  ir::RunStatus run(ir::WarpContext& ctx) const override {
    for (unsigned l = 0; l < 32; ++l) {
      if (!(ctx.entry_mask >> l & 1)) continue;
      uint32_t tid = lane_u32(ctx.vars, kTidOff, l);
      uint64_t v = tid + 1;
      bool ok = ctx.resume == 0 ? ctx.memory->access(Kind::Store, Space::Shared, tid * 4ull, 4, &v)
                                : ctx.memory->access(Kind::Load, Space::Shared, (n_ - 1 - tid) * 4ull, 4, &v);
      if (!ok) {
        ctx.fault = ir::FaultKind::OutOfBounds;
        ctx.fault_lane = l;
        return ctx.status = ir::RunStatus::Fault;
      }
      if (ctx.resume == 1) set_lane_u32(ctx.vars, kOutOff, l, uint32_t(v));
    }
    if (ctx.resume == 0) {
      ctx.resume = 1;
      return ctx.status = ir::RunStatus::Barrier;
    }
    return ctx.status = ir::RunStatus::Done;
  }
  uint32_t n_;
};

// Adds every launched thread's id + 1 to a global counter (atomics), and
// writes out[global id] = global id * 3; traps in one chosen block.
class CountAndWrite final : public ir::Executable {
 public:
  size_t frame_bytes() const override { return 0; }
  ir::RunStatus run(ir::WarpContext& ctx) const override {
    for (unsigned l = 0; l < 32; ++l) {
      if (!(ctx.entry_mask >> l & 1)) continue;
      uint32_t gid = lane_u32(ctx.vars, kTidOff, l);
      if (gid == trap_at) {
        ctx.fault = ir::FaultKind::Trap;
        ctx.fault_code = 77;
        ctx.fault_lane = l;
        return ctx.status = ir::RunStatus::Fault;
      }
      uint64_t one = gid + 1;
      ctx.memory->access(Kind::Atomic, Space::Global, 0, 8, &one, ir::AtomicOp::Add);
      uint64_t v = gid * 3ull;
      if (!ctx.memory->access(Kind::Store, Space::Global, 64 + gid * 4ull, 4, &v)) {
        ctx.fault = ir::FaultKind::OutOfBounds;
        ctx.fault_addr = 64 + gid * 4ull;
        ctx.fault_lane = l;
        return ctx.status = ir::RunStatus::Fault;
      }
    }
    return ctx.status = ir::RunStatus::Done;
  }
  uint32_t trap_at = ~0u;
};

// Declares that it reads var 0 (the result slot kOutOff is written only):
// stores each lane's var 0 (which must start at 0) to out[thread], then
// dirties both vars so that a block reusing the storage would see it.
class ReadsOneVar final : public ir::Executable {
 public:
  size_t frame_bytes() const override { return 0; }
  bool var_read_ranges(std::vector<std::pair<uint32_t, uint32_t>>& out) const override {
    out = {{kTidOff, kTidOff + 128}};
    return true;
  }
  ir::RunStatus run(ir::WarpContext& ctx) const override {
    for (unsigned l = 0; l < 32; ++l) {
      if (!(ctx.entry_mask >> l & 1)) continue;
      uint64_t v = lane_u32(ctx.vars, kTidOff, l);
      uint32_t thread = lane_u32(ctx.vars, kOutOff, l);  // init's thread id (the executable does not depend on it)
      if (!ctx.memory->access(Kind::Store, Space::Global, thread * 4ull, 4, &v)) {
        ctx.fault = ir::FaultKind::OutOfBounds;
        ctx.fault_lane = l;
        return ctx.status = ir::RunStatus::Fault;
      }
      set_lane_u32(ctx.vars, kTidOff, l, 0xdead0000u + l);
      if (l != 0) set_lane_u32(ctx.vars, kOutOff, l, 0xbeef0000u + l);
    }
    return ctx.status = ir::RunStatus::Done;
  }
};

}  // namespace

TEST_CASE("launch: init sees each warp's coordinates as warp_info computes them") {
  // rt::launch counts thread coordinates on from warp to warp; warp_info
  // divides. Shapes with rows longer, shorter and not a multiple of 32.
  class Nothing final : public ir::Executable {
   public:
    size_t frame_bytes() const override { return 0; }
    ir::RunStatus run(ir::WarpContext& ctx) const override { return ctx.status = ir::RunStatus::Done; }
  } exe;
  for (rt::Dim3 shape : {rt::Dim3{64, 2, 1}, rt::Dim3{96, 1, 2}, rt::Dim3{40, 3, 1}, rt::Dim3{7, 5, 3}, rt::Dim3{1, 1, 70}}) {
    rt::Memory mem;
    rt::LaunchConfig cfg;
    cfg.grid = {3, 2, 1};
    cfg.block = shape;
    cfg.vars_bytes = kVarsBytes;
    std::mutex lock;
    size_t checked = 0;
    auto init = [&](const rt::WarpInfo& w, uint8_t*) {
      rt::WarpInfo want = rt::warp_info(cfg.grid, shape, w.block_linear, w.warp);
      std::lock_guard<std::mutex> g(lock);
      CHECK(w.block == want.block);
      CHECK(w.lanes == want.lanes);
      CHECK(w.entry_mask == want.entry_mask);
      for (unsigned l = 0; l < w.lanes; ++l) CHECK(w.thread[l] == want.thread[l]);
      ++checked;
    };
    REQUIRE(rt::launch(exe, mem, cfg, init, nullptr).ok());
    CHECK(checked == 6 * ((shape.count() + 31) / 32));
  }
}

TEST_CASE("launch: vars the executable reads start at zero on reused block storage") {
  // One host thread: every block reuses the previous block's storage, which
  // that block left dirty. Without a finish callback only var 0 (the range
  // the executable reads) is zeroed; with one, every var is.
  const uint32_t n = 64, blocks = 4;
  ReadsOneVar exe;
  rt::Memory mem;
  std::string err;
  REQUIRE(mem.add_buffer("out", Space::Global, 0, n * blocks * 4, err));
  rt::LaunchConfig cfg;
  cfg.grid = {blocks, 1, 1};
  cfg.block = {n, 1, 1};
  cfg.vars_bytes = kVarsBytes;
  auto init = [&](const rt::WarpInfo& w, uint8_t* vars) {
    for (unsigned l = 0; l < w.lanes; ++l)
      set_lane_u32(vars, kOutOff, l, uint32_t(w.block_linear * n + w.thread_linear(l)));
  };
  auto read_out = [&](uint32_t t) {
    uint32_t v;
    std::memcpy(&v, mem.find("out")->data() + 4 * t, 4);
    return v;
  };
  rt::LaunchResult r = rt::launch(exe, mem, cfg, init, nullptr);
  REQUIRE(r.ok());
  for (uint32_t t = 0; t < n * blocks; ++t) CHECK(read_out(t) == 0);

  // With a finish callback it sees zero in lane 0's result slot, which
  // neither init (lanes >= launched) nor the executable writes: a warp of 20
  // threads leaves lanes 20..31 untouched, so they must be zeroed too.
  cfg.block = {20, 1, 1};
  std::vector<uint32_t> untouched;
  std::mutex lock;
  auto finish = [&](const rt::WarpInfo&, const uint8_t* vars) {
    std::lock_guard<std::mutex> g(lock);
    for (unsigned l = 20; l < 32; ++l) untouched.push_back(lane_u32(vars, kOutOff, l));
  };
  r = rt::launch(exe, mem, cfg, init, nullptr);  // dirties lanes 1..19 of kOutOff only; lanes 20+ keep the 64-thread launch's values
  REQUIRE(r.ok());
  r = rt::launch(exe, mem, cfg, init, finish);
  REQUIRE(r.ok());
  REQUIRE(untouched.size() == 12 * blocks);
  for (uint32_t v : untouched) CHECK(v == 0);
}

TEST_CASE("launch: warp coordinates are x-major and the last warp is partial") {
  rt::Dim3 grid{2, 3, 1}, block{5, 3, 3};  // 45 threads: warps of 32 and 13
  rt::WarpInfo w = rt::warp_info(grid, block, 4, 1);
  CHECK(w.block == rt::Dim3{0, 2, 0});
  CHECK(w.lanes == 13);
  CHECK(w.entry_mask == 0x1fffu);
  CHECK(w.thread[0] == rt::Dim3{2, 0, 2});  // thread 32 = x 2, y 0, z 2
  CHECK(w.thread[12] == rt::Dim3{4, 2, 2});
  CHECK(rt::warp_info(grid, block, 0, 0).entry_mask == 0xffffffffu);
  // Every lane's coordinates, for warps within one row and across rows.
  for (rt::Dim3 shape : {rt::Dim3{64, 2, 1}, rt::Dim3{96, 1, 2}, rt::Dim3{40, 3, 1}, rt::Dim3{7, 5, 3}, rt::Dim3{1, 1, 70}}) {
    uint64_t threads = shape.count();
    for (uint32_t warp = 0; warp * 32 < threads; ++warp) {
      rt::WarpInfo wi = rt::warp_info(grid, shape, 5, warp);
      CHECK(wi.block == rt::Dim3{1, 2, 0});
      for (unsigned l = 0; l < wi.lanes; ++l) {
        uint64_t tid = warp * 32ull + l;
        rt::Dim3 want{uint32_t(tid % shape.x), uint32_t(tid / shape.x % shape.y), uint32_t(tid / (shape.x * shape.y))};
        CHECK(wi.thread[l] == want);
      }
    }
  }
}

TEST_CASE("launch: a barrier holds every warp of a block, partial warps included") {
  for (uint32_t n : {32u, 70u, 100u}) {
    rt::Memory mem;
    rt::LaunchConfig cfg;
    cfg.grid = {3, 1, 1};
    cfg.block = {n, 1, 1};
    cfg.shared_bytes = n * 4;
    cfg.vars_bytes = kVarsBytes;
    std::mutex lock;
    std::vector<uint32_t> out(3 * n, 0);
    std::vector<uint32_t> seen_masks;
    MirrorThroughShared exe(n);
    auto init = [&](const rt::WarpInfo& w, uint8_t* vars) {
      for (unsigned l = 0; l < w.lanes; ++l) set_lane_u32(vars, kTidOff, l, uint32_t(w.thread_linear(l)));
    };
    auto finish = [&](const rt::WarpInfo& w, const uint8_t* vars) {
      std::lock_guard<std::mutex> g(lock);
      seen_masks.push_back(w.entry_mask);
      for (unsigned l = 0; l < w.lanes; ++l) out[w.block_linear * n + w.thread_linear(l)] = lane_u32(vars, kOutOff, l);
    };
    rt::ThreadPool pool(2);
    rt::LaunchResult r = rt::launch(exe, mem, cfg, init, finish, &pool);
    REQUIRE(r.ok());
    CHECK(r.warps == 3 * ((n + 31) / 32));
    for (uint32_t b = 0; b < 3; ++b)
      for (uint32_t t = 0; t < n; ++t) CHECK(out[b * n + t] == n - t);
    if (n % 32) CHECK(std::set<uint32_t>(seen_masks.begin(), seen_masks.end()).count((1u << (n % 32)) - 1) == 1);
  }
}

TEST_CASE("launch: thread pool runs blocks in parallel with deterministic results and faults stop it") {
  const uint32_t blocks = 40, threads_per_block = 48, total = blocks * threads_per_block;
  for (unsigned nthreads : {1u, 2u, 4u}) {
    rt::Memory mem;
    std::string err;
    REQUIRE(mem.add_buffer("g", Space::Global, 0, 64 + total * 4, err));
    rt::LaunchConfig cfg;
    cfg.grid = {blocks, 1, 1};
    cfg.block = {threads_per_block, 1, 1};
    cfg.vars_bytes = kVarsBytes;
    CountAndWrite exe;
    auto init = [&](const rt::WarpInfo& w, uint8_t* vars) {
      for (unsigned l = 0; l < w.lanes; ++l)
        set_lane_u32(vars, kTidOff, l, uint32_t(w.block_linear * threads_per_block + w.thread_linear(l)));
    };
    rt::ThreadPool pool(nthreads);
    rt::LaunchResult r = rt::launch(exe, mem, cfg, init, nullptr, &pool);
    REQUIRE(r.ok());
    uint64_t sum = 0;
    mem.access(Kind::Load, Space::Global, 0, 8, &sum);
    CHECK(sum == uint64_t(total) * (total + 1) / 2);
    for (uint32_t i = 0; i < total; i += 97) {
      uint64_t v = 0;
      mem.access(Kind::Load, Space::Global, 64 + i * 4ull, 4, &v);
      CHECK(v == i * 3ull);
    }
    exe.trap_at = 5 * threads_per_block + 40;  // block 5, warp 1, lane 8
    r = rt::launch(exe, mem, cfg, init, nullptr, &pool);
    REQUIRE(r.fault);
    if (nthreads == 1) CHECK(r.fault->block == rt::Dim3{5, 0, 0});
    CHECK(r.fault->kind == ir::FaultKind::Trap);
    CHECK(r.fault->code == 77);
    CHECK(r.fault->describe().find("trap") != std::string::npos);
  }
}

TEST_CASE("launch: an out-of-bounds access is a reported fault and bad configurations are errors") {
  rt::Memory mem;
  std::string err;
  REQUIRE(mem.add_buffer("g", Space::Global, 0, 64 + 10 * 4, err));  // room for 10 results only
  rt::LaunchConfig cfg;
  cfg.block = {32, 1, 1};
  cfg.vars_bytes = kVarsBytes;
  CountAndWrite exe;
  auto init = [&](const rt::WarpInfo& w, uint8_t* vars) {
    for (unsigned l = 0; l < w.lanes; ++l) set_lane_u32(vars, kTidOff, l, uint32_t(w.thread_linear(l)));
  };
  rt::LaunchResult r = rt::launch(exe, mem, cfg, init, nullptr);
  REQUIRE(r.fault);
  CHECK(r.fault->kind == ir::FaultKind::OutOfBounds);
  CHECK(r.fault->lane == 10);
  CHECK(r.fault->addr == 64 + 40);
  cfg.block = {0, 1, 1};
  r = rt::launch(exe, mem, cfg, init, nullptr);
  CHECK_FALSE(r.ok());
  CHECK_FALSE(r.error.empty());
}

// The same mirror through shared memory, as IR run by the IR interpreter:
// block 0 stores, a barrier, block 1 loads what another warp stored.
TEST_CASE("launch: barrier across warps with the IR interpreter") {
  const uint32_t n = 80;
  ir::Function f;
  f.name = "mirror";
  uint32_t tid = f.add_var("tid", ir::Type::I32);
  uint32_t out = f.add_var("out", ir::Type::I32);
  ir::BlockId b0 = f.add_block("entry"), b1 = f.add_block("after");
  ir::Builder b(f);
  b.set_block(b0);
  {
    ir::ValueId t = b.get_var(tid);
    ir::ValueId mask = b.emit(ir::Opcode::EntryMask, ir::Type::I1, {});
    ir::ValueId addr = b.binary(ir::Opcode::IMul, t, b.i32(4));
    ir::ValueId val = b.binary(ir::Opcode::IAdd, t, b.i32(1));
    b.store(Space::Shared, ir::AddrClass::Consecutive, addr, val, mask);
    b.barrier(b1);
  }
  b.set_block(b1);
  {
    ir::ValueId t = b.get_var(tid);
    ir::ValueId mask = b.emit(ir::Opcode::EntryMask, ir::Type::I1, {});
    ir::ValueId idx = b.binary(ir::Opcode::ISub, b.i32(n - 1), t);
    ir::ValueId addr = b.binary(ir::Opcode::IMul, idx, b.i32(4));
    ir::ValueId v = b.load(ir::Type::I32, Space::Shared, ir::AddrClass::Random, addr, mask);
    b.set_var(out, v);
    b.ret();
  }
  f.compute_preds();
  REQUIRE(ir::verify(f) == "");
  auto exe = ir::make_ir_interpreter(f);
  REQUIRE(exe);
  rt::Memory mem;
  rt::LaunchConfig cfg;
  cfg.grid = {2, 1, 1};
  cfg.block = {n, 1, 1};
  cfg.shared_bytes = n * 4;
  cfg.vars_bytes = f.vars_bytes();
  std::vector<uint32_t> result(2 * n, 0);
  std::mutex lock;
  auto init = [&](const rt::WarpInfo& w, uint8_t* vars) {
    for (unsigned l = 0; l < w.lanes; ++l) set_lane_u32(vars, f.var_offset(tid), l, uint32_t(w.thread_linear(l)));
  };
  auto finish = [&](const rt::WarpInfo& w, const uint8_t* vars) {
    std::lock_guard<std::mutex> g(lock);
    for (unsigned l = 0; l < w.lanes; ++l)
      result[w.block_linear * n + w.thread_linear(l)] = lane_u32(vars, f.var_offset(out), l);
  };
  rt::ThreadPool pool(2);
  rt::LaunchResult r = rt::launch(*exe, mem, cfg, init, finish, &pool);
  REQUIRE(r.ok());
  for (uint32_t blk = 0; blk < 2; ++blk)
    for (uint32_t t = 0; t < n; ++t) CHECK(result[blk * n + t] == n - t);

  // Shared memory smaller than the block needs: the store of thread 79 faults.
  cfg.shared_bytes = (n - 1) * 4;
  r = rt::launch(*exe, mem, cfg, init, finish, nullptr);
  REQUIRE(r.fault);
  CHECK(r.fault->kind == ir::FaultKind::OutOfBounds);
  CHECK(r.fault->warp == 2);
  CHECK(r.fault->lane == 15);
}

}  // namespace gpurc_test_runtime_launch
