// The launch parameters every ISA's runner needs (runtime/launch.h): per-
// thread stacks, the guest-memory factory, the setup and fault hooks, the
// round limit of plain barriers.
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "runtime/launch.h"

namespace gpurc_test_runtime_launch_hooks {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using ir::Space;
using Kind = ir::GuestMemory::Kind;

namespace {

constexpr uint32_t kOutOff = 0, kVarsBytes = 128;

uint32_t lane_u32(const uint8_t* vars, uint32_t off, unsigned l) {
  uint32_t v;
  std::memcpy(&v, vars + off + 4 * l, 4);
  return v;
}

ir::RunStatus fault(ir::WarpContext& ctx, ir::FaultKind k, unsigned lane, uint64_t addr) {
  ctx.fault = k;
  ctx.fault_lane = lane;
  ctx.fault_addr = addr;
  ctx.fault_space = uint32_t(Space::Local);
  return ctx.status = ir::RunStatus::Fault;
}

// Each launched lane l: pushes (l + 1) * 7 to byte offset `offset` of its
// stack (Space::Local at l * stride + offset), hits a barrier, then reads it
// back into out. Another warp or lane sharing the stack would change it.
class StackRoundTrip final : public ir::Executable {
 public:
  StackRoundTrip(uint64_t stride, uint64_t offset) : stride_(stride), offset_(offset) {}
  size_t frame_bytes() const override { return 0; }
  bool frame_needs_zero() const override { return false; }
  ir::RunStatus run(ir::WarpContext& ctx) const override {
    for (unsigned l = 0; l < 32; ++l) {
      if (!(ctx.entry_mask >> l & 1)) continue;
      const uint64_t addr = l * stride_ + offset_;
      uint64_t v = (l + 1) * 7;
      if (ctx.resume == 0) {
        uint64_t before = 1;
        // The stack starts zeroed.
        if (!ctx.memory->access(Kind::Load, Space::Local, addr, 4, &before) || before != 0 ||
            !ctx.memory->access(Kind::Store, Space::Local, addr, 4, &v))
          return fault(ctx, ir::FaultKind::OutOfBounds, l, addr);
      } else {
        if (!ctx.memory->access(Kind::Load, Space::Local, addr, 4, &v)) return fault(ctx, ir::FaultKind::OutOfBounds, l, addr);
        std::memcpy(ctx.vars + kOutOff + 4 * l, &v, 4);
      }
    }
    if (ctx.resume == 0) {
      ctx.resume = 1;
      return ctx.status = ir::RunStatus::Barrier;
    }
    return ctx.status = ir::RunStatus::Done;
  }

 private:
  uint64_t stride_, offset_;
};

// Stops at a barrier forever.
class AlwaysBarrier final : public ir::Executable {
 public:
  size_t frame_bytes() const override { return 0; }
  ir::RunStatus run(ir::WarpContext& ctx) const override { return ctx.status = ir::RunStatus::Barrier; }
};

// out = the entry mask, in every lane; then a store of 4 bytes at global 0x100.
class MaskAndStore final : public ir::Executable {
 public:
  size_t frame_bytes() const override { return 0; }
  ir::RunStatus run(ir::WarpContext& ctx) const override {
    for (unsigned l = 0; l < 32; ++l) std::memcpy(ctx.vars + kOutOff + 4 * l, &ctx.entry_mask, 4);
    uint64_t v = 0xabcd;
    if (!ctx.memory->access(Kind::Store, Space::Global, 0x100, 4, &v)) {
      ctx.fault = ir::FaultKind::OutOfBounds;
      ctx.fault_addr = 0x100;
      return ctx.status = ir::RunStatus::Fault;
    }
    return ctx.status = ir::RunStatus::Done;
  }
};

// A guest memory that serves Space::Global 0x100..0x104 itself and counts the stores.
struct CountingMemory final : ir::GuestMemory {
  int stores = 0;
  uint32_t last = 0;
  bool access(Kind kind, Space space, uint64_t addr, unsigned bytes, uint64_t* value, ir::AtomicOp,
              const uint64_t*) override {
    if (space != Space::Global || addr != 0x100 || bytes != 4 || kind != Kind::Store) return false;
    ++stores;
    last = uint32_t(*value);
    return true;
  }
  uint8_t* translate(Space, uint64_t, uint64_t) override { return nullptr; }
};

}  // namespace

TEST_CASE("launch: per-thread stacks are zeroed, private per lane and warp, and bounded") {
  rt::Memory mem;
  for (uint64_t stride : {uint64_t(64), uint64_t(1) << 20}) {  // contiguous (one window) and strided (slow path)
    CAPTURE(stride);
    rt::LaunchConfig cfg;
    cfg.grid = {3, 1, 1};
    cfg.block = {80, 1, 1};  // 3 warps, the last partial
    cfg.vars_bytes = kVarsBytes;
    cfg.stack_bytes = 64;
    cfg.stack_stride = stride;
    StackRoundTrip exe(stride, 60);
    std::vector<uint32_t> seen(3 * 96, 0);
    auto finish = [&](const rt::WarpInfo& w, const uint8_t* vars) {
      for (unsigned l = 0; l < w.lanes; ++l) seen[w.block_linear * 96 + w.warp * 32 + l] = lane_u32(vars, kOutOff, l);
    };
    // Run twice: the second launch reuses the block storage and must see zeroed stacks again.
    for (int run = 0; run < 2; ++run) {
      rt::LaunchResult r = rt::launch(exe, mem, cfg, nullptr, finish);
      REQUIRE_MESSAGE(r.ok(), (r.fault ? r.fault->describe() : r.error));
      CHECK(r.warps == 9);
    }
    for (uint64_t b = 0; b < 3; ++b)
      for (unsigned t = 0; t < 80; ++t) CHECK(seen[b * 96 + t] == (t % 32 + 1) * 7);
    // A 4-byte access at offset 61 of a 64-byte stack crosses its end: a fault.
    StackRoundTrip past(stride, 61);
    rt::LaunchResult r = rt::launch(past, mem, cfg, nullptr, nullptr);
    REQUIRE(r.fault);
    CHECK(r.fault->kind == ir::FaultKind::OutOfBounds);
    CHECK(r.fault->addr == 61);
  }
  rt::LaunchConfig bad;
  bad.stack_bytes = 128;
  bad.stack_stride = 64;
  CHECK_FALSE(rt::launch(StackRoundTrip(64, 0), mem, bad, nullptr, nullptr).error.empty());
}

TEST_CASE("launch: the memory factory, setup and fault hooks") {
  rt::Memory mem;
  rt::LaunchConfig cfg;
  cfg.vars_bytes = kVarsBytes;
  MaskAndStore exe;
  CountingMemory own;
  uint32_t mask_seen = 0;
  rt::WarpHooks hooks;
  hooks.memory = [&](const rt::WarpInfo&, ir::GuestMemory& fallback, ir::WarpContext&) -> ir::GuestMemory* {
    // The fallback has no global buffer: a store through it would fault.
    uint64_t v = 0;
    CHECK_FALSE(fallback.access(Kind::Load, Space::Global, 0x100, 4, &v));
    return &own;
  };
  hooks.setup = [](const rt::WarpInfo&, ir::WarpContext& ctx) { ctx.entry_mask = 0x80000005u; };
  hooks.finish = [&](const rt::WarpInfo&, const uint8_t* vars) { mask_seen = lane_u32(vars, kOutOff, 31); };
  rt::LaunchResult r = rt::launch(exe, mem, cfg, hooks);
  REQUIRE(r.ok());
  CHECK(own.stores == 1);
  CHECK(own.last == 0xabcd);
  CHECK(mask_seen == 0x80000005u);

  // Without the factory the store faults; the fault hook's detail is in describe().
  hooks.memory = nullptr;
  hooks.fault = [](const rt::WarpInfo& w, const ir::WarpContext& ctx, rt::LaunchFault& f) {
    f.detail = "warp " + std::to_string(w.warp) + " mask " + std::to_string(ctx.entry_mask);
  };
  r = rt::launch(exe, mem, cfg, hooks);
  REQUIRE(r.fault);
  CHECK(r.fault->detail == "warp 0 mask 2147483653");
  CHECK(r.fault->describe().find(": warp 0 mask 2147483653") != std::string::npos);
}

TEST_CASE("launch: plain barriers stop at max_rounds with a round-limit fault") {
  rt::Memory mem;
  rt::LaunchConfig cfg;
  cfg.block = {64, 1, 1};
  cfg.vars_bytes = kVarsBytes;
  cfg.max_rounds = 10;
  AlwaysBarrier exe;
  rt::LaunchResult r = rt::launch(exe, mem, cfg, nullptr, nullptr);
  REQUIRE(r.fault);
  CHECK(r.fault->round_limit);
  CHECK(r.fault->rounds == 10);
  CHECK(r.fault->kind == ir::FaultKind::None);
  CHECK(r.fault->describe().find("after 10 rounds") != std::string::npos);
}

namespace {

// Reads (and checks zero) vars [0, 128), then scribbles 0xff over all 256
// bytes of its vars, so a later launch reusing the block storage sees them dirty.
class ReadsLowHalf final : public ir::Executable {
 public:
  size_t frame_bytes() const override { return 0; }
  bool frame_needs_zero() const override { return false; }
  bool var_read_ranges(std::vector<std::pair<uint32_t, uint32_t>>& out) const override {
    out = {{0, 128}};
    return true;
  }
  ir::RunStatus run(ir::WarpContext& ctx) const override {
    for (unsigned i = 0; i < 128; ++i)
      if (ctx.vars[i] != 0) {
        ctx.fault = ir::FaultKind::Trap;
        ctx.fault_code = i;
        return ctx.status = ir::RunStatus::Fault;
      }
    std::memset(ctx.vars, 0xff, 256);
    return ctx.status = ir::RunStatus::Done;
  }
};

}  // namespace

TEST_CASE("launch: with init_writes_finish_reads the bytes the code reads are still zeroed before init") {
  rt::Memory mem;
  rt::LaunchConfig cfg;
  cfg.block = {64, 1, 1};
  cfg.vars_bytes = 256;
  cfg.init_writes_finish_reads = true;
  ReadsLowHalf exe;
  int finished = 0;
  auto finish = [&](const rt::WarpInfo&, const uint8_t* vars) { finished += vars[255] == 0xff; };
  for (int run = 0; run < 3; ++run) {  // later runs reuse the dirtied storage
    rt::LaunchResult r = rt::launch(exe, mem, cfg, nullptr, finish);
    REQUIRE_MESSAGE(r.ok(), (r.fault ? r.fault->describe() : r.error));
  }
  CHECK(finished == 6);
}

}  // namespace gpurc_test_runtime_launch_hooks
