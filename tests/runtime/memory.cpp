#include <doctest/doctest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "runtime/memory.h"

namespace gpurc_test_runtime_memory {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using ir::AtomicOp;
using ir::Space;
using Kind = ir::GuestMemory::Kind;

TEST_CASE("memory: buffers are aligned, zeroed and bounds checked") {
  rt::Memory m;
  std::string err;
  REQUIRE(m.add_buffer("a", Space::Global, 0x1000, 100, err));
  REQUIRE(m.add_buffer("b", Space::Global, 0x2000, 16, err));
  REQUIRE(m.add_buffer("s", Space::Shared, 0x1000, 16, err));  // other space: no overlap
  CHECK(reinterpret_cast<uintptr_t>(m.find("a")->data()) % 64 == 0);
  CHECK(m.find("a")->data()[99] == 0);

  uint64_t v = 0x1122334455667788ull;
  CHECK(m.access(Kind::Store, Space::Global, 0x1000 + 92, 8, &v));
  CHECK_FALSE(m.access(Kind::Store, Space::Global, 0x1000 + 93, 8, &v));  // last byte past the end
  CHECK_FALSE(m.access(Kind::Load, Space::Global, 0xfff, 1, &v));
  CHECK_FALSE(m.access(Kind::Load, Space::Global, 0x1064, 1, &v));
  CHECK_FALSE(m.access(Kind::Load, Space::Global, ~0ull - 2, 8, &v));     // wraps around
  CHECK_FALSE(m.access(Kind::Load, Space::Local, 0x1000, 4, &v));         // no buffer in that space
  CHECK_FALSE(m.access(Kind::Load, Space::Global, 0x1000, 3, &v));        // no 3-byte access
  uint64_t r = 0;
  CHECK(m.access(Kind::Load, Space::Global, 0x1000 + 92, 4, &r));
  CHECK(r == 0x55667788u);  // little-endian, zero-extended
  CHECK(m.access(Kind::Load, Space::Global, 0x1000 + 99, 1, &r));
  CHECK(r == 0x11);
  CHECK(m.translate(Space::Global, 0x2000, 16) == m.find("b")->data());
  CHECK(m.translate(Space::Global, 0x2000, 17) == nullptr);
  CHECK(m.translate(Space::Global, 0x1050, 0x20) == nullptr);  // crosses from a into the gap

  ir::MemWindow w = m.window(Space::Global);
  CHECK(w.base == 0x1000);
  CHECK(w.size == 100);
  CHECK(m.window(Space::Const).size == 0);
}

TEST_CASE("memory: bad buffers are rejected with a reason") {
  rt::Memory m;
  std::string err;
  REQUIRE(m.add_buffer("a", Space::Global, 0x1000, 0x100, err));
  CHECK_FALSE(m.add_buffer("b", Space::Global, 0x10ff, 4, err));
  CHECK(err.find("overlaps") != std::string::npos);
  CHECK_FALSE(m.add_buffer("c", Space::Global, 0xff0, 0x20, err));
  CHECK_FALSE(m.add_buffer("a", Space::Global, 0x9000, 4, err));
  CHECK(err.find("already exists") != std::string::npos);
  CHECK_FALSE(m.add_buffer("z", Space::Global, 0x9000, 0, err));
  CHECK_FALSE(m.add_buffer("w", Space::Global, ~0ull - 4, 16, err));
  CHECK(m.add_buffer("top", Space::Global, ~0ull - 15, 16, err));  // ends exactly at 2^64
  uint64_t v = 0;
  CHECK(m.access(Kind::Load, Space::Global, ~0ull - 7, 8, &v));
  CHECK(m.buffers().size() == 2);
}

TEST_CASE("memory: atomic operations and compare-and-swap") {
  rt::Memory m;
  std::string err;
  REQUIRE(m.add_buffer("a", Space::Global, 0, 64, err));
  auto rmw = [&](AtomicOp op, uint64_t addr, unsigned bytes, uint64_t operand) {
    uint64_t v = operand;
    REQUIRE(m.access(Kind::Atomic, Space::Global, addr, bytes, &v, op));
    return v;
  };
  auto load = [&](uint64_t addr, unsigned bytes) {
    uint64_t v = 0;
    REQUIRE(m.access(Kind::Load, Space::Global, addr, bytes, &v));
    return v;
  };
  CHECK(rmw(AtomicOp::Add, 0, 4, 5) == 0);
  CHECK(rmw(AtomicOp::Sub, 0, 4, 7) == 5);
  CHECK(load(0, 4) == 0xfffffffeu);
  CHECK(rmw(AtomicOp::SMin, 0, 4, 3) == 0xfffffffeu);
  CHECK(load(0, 4) == 0xfffffffeu);  // -2 < 3
  CHECK(rmw(AtomicOp::UMin, 0, 4, 3) == 0xfffffffeu);
  CHECK(load(0, 4) == 3);
  CHECK(rmw(AtomicOp::SMax, 0, 4, 0x80000000u) == 3);
  CHECK(load(0, 4) == 3);
  CHECK(rmw(AtomicOp::UMax, 0, 4, 0x80000000u) == 3);
  CHECK(load(0, 4) == 0x80000000u);
  CHECK(rmw(AtomicOp::Exch, 0, 4, 9) == 0x80000000u);
  CHECK(rmw(AtomicOp::Inc, 0, 4, 9) == 9);
  CHECK(load(0, 4) == 0);  // 9 >= 9 wraps to 0
  CHECK(rmw(AtomicOp::Inc, 0, 4, 9) == 0);
  CHECK(load(0, 4) == 1);
  CHECK(rmw(AtomicOp::Dec, 0, 4, 9) == 1);
  CHECK(rmw(AtomicOp::Dec, 0, 4, 9) == 0);
  CHECK(load(0, 4) == 9);  // 0 wraps to the operand
  CHECK(rmw(AtomicOp::Or, 8, 8, 0xf0f0000000000000ull) == 0);
  CHECK(rmw(AtomicOp::Xor, 8, 8, 0xff00000000000000ull) == 0xf0f0000000000000ull);
  CHECK(rmw(AtomicOp::And, 8, 8, 0x0ff0000000000000ull) == 0x0ff0000000000000ull);
  CHECK(load(8, 8) == 0x0ff0000000000000ull);
  CHECK(rmw(AtomicOp::Add, 16, 1, 0x1ff) == 0);  // operand truncated to the access width
  CHECK(load(16, 1) == 0xff);
  CHECK(load(17, 1) == 0);

  uint64_t cmp = 5, v = 7;
  CHECK(m.access(Kind::AtomicCas, Space::Global, 24, 4, &v, AtomicOp::Add, &cmp));
  CHECK(v == 0);  // old value; no store since 0 != 5
  CHECK(load(24, 4) == 0);
  cmp = 0;
  v = 7;
  CHECK(m.access(Kind::AtomicCas, Space::Global, 24, 4, &v, AtomicOp::Add, &cmp));
  CHECK(v == 0);
  CHECK(load(24, 4) == 7);
  v = 1;
  CHECK_FALSE(m.access(Kind::Atomic, Space::Global, 2, 4, &v, AtomicOp::Add));  // misaligned atomic
}

TEST_CASE("memory: atomics from several host threads are not lost") {
  rt::Memory m;
  std::string err;
  REQUIRE(m.add_buffer("counters", Space::Global, 0x100, 64, err));
  const bool light = std::getenv("GPURC_TEST_LIGHT") != nullptr;
  const int per_thread = light ? 2000 : 50000, nthreads = 4;
  std::atomic<bool> failed{false};
  std::vector<std::thread> ts;
  for (int t = 0; t < nthreads; ++t)
    ts.emplace_back([&, t] {
      for (int i = 0; i < per_thread; ++i) {
        uint64_t one = 1, mx = uint64_t(t * per_thread + i);
        m.access(Kind::Atomic, Space::Global, 0x100, 4, &one, AtomicOp::Add);
        m.access(Kind::Atomic, Space::Global, 0x108, 8, &mx, AtomicOp::UMax);
        uint64_t old = 0, expected;
        // A CAS loop increment: exercises compare-and-swap under contention.
        m.access(Kind::Load, Space::Global, 0x110, 4, &old);
        for (;;) {
          expected = old;
          uint64_t next = old + 1;
          if (!m.access(Kind::AtomicCas, Space::Global, 0x110, 4, &next, AtomicOp::Add, &expected)) {
            failed = true;
            break;
          }
          if (next == expected) break;
          old = next;
        }
      }
    });
  for (auto& t : ts) t.join();
  CHECK_FALSE(failed);
  uint64_t v = 0;
  m.access(Kind::Load, Space::Global, 0x100, 4, &v);
  CHECK(v == uint64_t(per_thread * nthreads));
  m.access(Kind::Load, Space::Global, 0x108, 8, &v);
  CHECK(v == uint64_t(per_thread * nthreads - 1));
  m.access(Kind::Load, Space::Global, 0x110, 4, &v);
  CHECK(v == uint64_t(per_thread * nthreads));
}

TEST_CASE("memory: a block's view puts its own shared memory at address 0") {
  rt::Memory m;
  std::string err;
  REQUIRE(m.add_buffer("g", Space::Global, 0x40, 8, err));
  auto s1 = rt::allocate_aligned(32), s2 = rt::allocate_aligned(32);
  rt::BlockMemory b1(m, s1.get(), 32), b2(m, s2.get(), 32);
  uint64_t v = 42;
  CHECK(b1.access(Kind::Store, Space::Shared, 28, 4, &v));
  CHECK_FALSE(b1.access(Kind::Store, Space::Shared, 29, 4, &v));
  uint64_t r = 1;
  CHECK(b2.access(Kind::Load, Space::Shared, 28, 4, &r));
  CHECK(r == 0);  // blocks do not see each other's shared memory
  CHECK(b1.access(Kind::Load, Space::Shared, 28, 4, &r));
  CHECK(r == 42);
  CHECK(b2.access(Kind::Store, Space::Global, 0x40, 8, &v));  // global goes to the launch memory
  CHECK(b1.access(Kind::Load, Space::Global, 0x40, 8, &r));
  CHECK(r == 42);
  ir::WarpContext ctx;
  b1.fill_windows(ctx);
  CHECK(ctx.windows[int(Space::Shared)].host == s1.get());
  CHECK(ctx.windows[int(Space::Shared)].size == 32);
  CHECK(ctx.windows[int(Space::Global)].base == 0x40);
}

TEST_CASE("memory: windows are a space's largest buffers, then the next largest as extra windows") {
  rt::Memory m;
  std::string err;
  // Global: sizes 64, 256, 128, 256, 512, 64 (by address); shared: one buffer.
  uint64_t sizes[] = {64, 256, 128, 256, 512, 64};
  for (int i = 0; i < 6; ++i)
    REQUIRE(m.add_buffer("g" + std::to_string(i), Space::Global, 0x10000 * uint64_t(i + 1), sizes[i], err));
  REQUIRE(m.add_buffer("s", Space::Shared, 0, 96, err));
  ir::WarpContext ctx;
  m.fill_windows(ctx);
  const ir::MemWindow* g = &ctx.windows[int(Space::Global)];
  const auto& ex = ctx.extra_windows[int(Space::Global)];
  CHECK(g->base == 0x50000);  // 512
  CHECK(g->host == m.find("g4")->data());
  CHECK(ex[0].base == 0x20000);  // 256, the earlier of the two
  CHECK(ex[1].base == 0x40000);  // 256
  CHECK(ex[2].base == 0x30000);  // 128
  CHECK(ex[2].size == 128);
  CHECK(ex[2].host == m.find("g2")->data());
  CHECK(ctx.windows[int(Space::Shared)].size == 96);
  CHECK(ctx.extra_windows[int(Space::Shared)][0].size == 0);  // no second shared buffer
  CHECK(ctx.windows[int(Space::Local)].size == 0);
  CHECK(ctx.extra_windows[int(Space::Local)][0].size == 0);

  // A block's own shared memory replaces the space's buffers, extras included.
  REQUIRE(m.add_buffer("s2", Space::Shared, 0x1000, 64, err));
  auto own = rt::allocate_aligned(32, true);
  rt::BlockMemory b(m, own.get(), 32);
  ir::WarpContext bc;
  b.fill_windows(bc);
  CHECK(bc.windows[int(Space::Shared)].host == own.get());
  CHECK(bc.extra_windows[int(Space::Shared)][0].size == 0);
  CHECK(bc.extra_windows[int(Space::Global)][0].base == 0x20000);
}

}  // namespace gpurc_test_runtime_memory
