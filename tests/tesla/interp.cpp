// Reference interpreter tests: per-instruction edge values and control-flow
// stack behaviour against hand-traced results. Programs are written in
// envyas syntax and assembled by our assembler.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <memory>

#include "frontend/tesla/encoding.h"
#include "frontend/tesla/interp.h"
#include "frontend/tesla/module/reference.h"

namespace gpurc_test_tesla_interp {  // one namespace per file: unity builds (CMakeLists.txt)
using namespace gpurc::tesla;

namespace {

uint32_t fb(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

struct Run {
  LaunchMemory mem;
  std::unique_ptr<BlockInterpreter> bi;
  RunResult res;
};

// Assembles `src`, runs `threads` threads with registers from `init`.
std::unique_ptr<Run> run(const std::string& src, unsigned threads,
                         std::function<void(unsigned, ThreadState&)> init = nullptr, const char* variant = "g200",
                         unsigned call_limit = 16, uint64_t max_steps = BlockConfig{}.max_steps) {
  auto r = std::make_unique<Run>();
  Target t;
  std::string err;
  REQUIRE(parse_target(variant, t, err));
  std::vector<uint32_t> code;
  INFO(err);
  REQUIRE(assemble(src, t, code, err));
  BlockConfig cfg;
  cfg.block[0] = threads;
  cfg.smem = 0x100;
  cfg.lmem = 0x40;
  cfg.call_limit = call_limit;
  cfg.max_steps = max_steps;
  r->mem.global[0].assign(0x100, 0);
  r->bi = std::make_unique<BlockInterpreter>(code, t, cfg, &r->mem);
  std::vector<ThreadState> st(threads);
  for (unsigned i = 0; i < threads; ++i)
    if (init) init(i, st[i]);
  r->res = r->bi->run_with(st);
  return r;
}

const ThreadState& T(const std::unique_ptr<Run>& r, unsigned i) { return r->bi->thread(i); }

}  // namespace

TEST_CASE("tesla interp: integer add family and $c flags (seed 3.1 pseudocode)") {
  auto r = run("add b32 $c0 $r2 $r0 $r1\n"
               "sub b32 $c1 $r3 $r0 $r1\n"
               "add b32 sat $c2 $r4 $r0 $r1\n"
               "addc b32 $c3 $r5 $r0 $r1 $c0\n"
               "exit nop\n",
               2, [](unsigned i, ThreadState& s) {
                 s.r[0] = i == 0 ? 0x7fffffffu : 5;
                 s.r[1] = i == 0 ? 1u : 3;
                 s.c[0] = 4;  // carry in for addc
               });
  REQUIRE(r->res.ok());
  // lane 0: 0x7fffffff + 1 overflows: O and S set, no carry
  CHECK(T(r, 0).r[2] == 0x80000000u);
  CHECK(T(r, 0).c[0] == (2 | 8));
  // saturated: overflow to negative clamps to 0x7fffffff
  CHECK(T(r, 0).r[4] == 0x7fffffffu);
  // 0x7fffffff - 1 = 0x7ffffffe: s1 + ~1 + 1 carries out
  CHECK(T(r, 0).r[3] == 0x7ffffffeu);
  CHECK(T(r, 0).c[1] == 4);
  // lane 1: 5 - 3 = 2 with carry (no borrow); 5 + 3 + C(c0 = 0 after the first add) = 8
  CHECK(T(r, 1).r[3] == 2);
  CHECK(T(r, 1).c[1] == 4);
  CHECK(T(r, 1).r[5] == 8);
  // addc reads $c0 written by the first instruction (lane 0: C = 0)
  CHECK(T(r, 0).r[5] == 0x80000000u);
}

TEST_CASE("tesla interp: 16-bit halves, 16/24-bit multiplies, shifts") {
  auto r = run("mul $c0 $r2 s16 $r0h s16 $r1l\n"
               "long mul $r3 high s24 $r0 $r1\n"
               "long mul $r4 u24 $r0 $r1\n"
               "shl b32 $c1 $r5 $r6 $r7\n"
               "shr s32 $c2 $r8 $r9 $r7\n"
               "long add b16 $r10h $r0l $r1l\n"
               "exit nop\n",
               3, [](unsigned i, ThreadState& s) {
                 s.r[0] = 0xfffe0003u;  // high half -2, low half 3
                 s.r[1] = 0x00ff0005u;  // low half 5
                 s.r[6] = i == 0 ? 1 : 2;
                 s.r[7] = i == 0 ? 32 : i == 1 ? 31 : 40;  // counts are not masked
                 s.r[9] = 0x80000008u;
                 s.r[10] = 0x12345678u;
               });
  REQUIRE(r->res.ok());
  CHECK(T(r, 0).r[2] == uint32_t(-10));
  CHECK(T(r, 0).c[0] == 2);
  // 24-bit: 0xfe0003 as s24 = -131069, 0xff0005 as s24 = -65531; product >> 16
  int64_t p = int64_t(-131069) * int64_t(-65531);
  CHECK(T(r, 0).r[3] == uint32_t(uint64_t(p) >> 16));
  CHECK(T(r, 0).r[4] == uint32_t(uint64_t(0xfe0003) * 0xff0005));
  // shl 1 by 32: result 0, no carry (count not < 32)
  CHECK(T(r, 0).r[5] == 0);
  CHECK(T(r, 0).c[1] == 1);
  // shl 2 by 31: the bit shifted out sets C
  CHECK(T(r, 1).r[5] == 0);
  CHECK(T(r, 1).c[1] == (1 | 4));
  // shr s32 of a negative value by 40 fills with ones
  CHECK(T(r, 2).r[8] == 0xffffffffu);
  // shr by 31 keeps the sign; carry = bit 30
  CHECK(T(r, 1).r[8] == 0xffffffffu);
  // add b16 into the high half only
  CHECK(T(r, 0).r[10] == ((uint32_t(3 + 5) << 16) | 0x5678));
}

TEST_CASE("tesla interp: set, min, max, logic, sad") {
  auto r = run("set $c0 $r2 l s32 $r0 $r1\n"
               "set $r3 l u32 $r0 $r1\n"
               "min s32 $r4 $r0 $r1\n"
               "max u32 $r5 $r0 $r1\n"
               "xor b32 $r6 not $r0 $r1\n"
               "sad $r7 s32 $r0 $r1 $r1\n"
               "exit nop\n",
               1, [](unsigned, ThreadState& s) {
                 s.r[0] = uint32_t(-1);
                 s.r[1] = 1;
               });
  REQUIRE(r->res.ok());
  CHECK(T(r, 0).r[2] == 0xffffffffu);
  CHECK(T(r, 0).c[0] == 2);
  CHECK(T(r, 0).r[3] == 0);
  CHECK(T(r, 0).r[4] == uint32_t(-1));
  CHECK(T(r, 0).r[5] == uint32_t(-1));
  CHECK(T(r, 0).r[6] == (0u ^ 1u));
  CHECK(T(r, 0).r[7] == 3);  // |-1 - 1| + 1
}

TEST_CASE("tesla interp: single precision rules") {
  auto r = run("add rn f32 $r2 $r0 $r1\n"
               "add rz f32 $r3 $r0 $r1\n"
               "mul rz f32 $r4 $r0 $r5\n"
               "add f32 $r6 $r7 $r8\n"
               "mul f32 $r9 $r10 $r0\n"
               "add f32 $r11 (mul $r12 $r13) $r14\n"
               "exit nop\n",
               1, [](unsigned, ThreadState& s) {
                 s.r[0] = fb(1.0f);
                 s.r[1] = fb(std::ldexp(3.0f, -25));  // 1 + 1.5 ulp/2: rn rounds up, rz down
                 s.r[5] = fb(1.0f / 3.0f);
                 s.r[7] = 0x7fc00001u;  // a NaN with payload
                 s.r[8] = fb(1.0f);
                 s.r[10] = 0x00000001u;  // denormal input flushes to zero
                 s.r[12] = fb(1.0f + std::ldexp(1.0f, -23));
                 s.r[13] = fb(1.0f + std::ldexp(1.0f, -23));
                 s.r[14] = fb(-1.0f);
               });
  REQUIRE(r->res.ok());
  CHECK(T(r, 0).r[2] == fb(1.0f + std::ldexp(1.0f, -23)));
  CHECK(T(r, 0).r[3] == fb(1.0f));
  CHECK(T(r, 0).r[4] == fb(1.0f / 3.0f));
  CHECK(T(r, 0).r[6] == 0x7fffffffu);  // every NaN becomes 0x7fffffff
  CHECK(T(r, 0).r[9] == 0);
  // (1+e)^2 = 1 + 2e + e^2: the product truncates (drops e^2), then adds -1
  CHECK(T(r, 0).r[11] == fb(std::ldexp(1.0f, -22)));
}

TEST_CASE("tesla interp: conversions saturate, NaN to 0, rounding modes") {
  auto r = run("cvt rni s32 $r2 f32 $r0\n"
               "cvt rzi u32 $r3 f32 $r1\n"
               "cvt rni s32 $r4 f32 $r5\n"
               "cvt rmi s32 $r6 f32 $r1\n"
               "cvt rn f32 $r7 s32 $r8\n"
               "cvt s16 $r9l s32 $r10\n"
               "exit nop\n",
               1, [](unsigned, ThreadState& s) {
                 s.r[0] = fb(3e9f);
                 s.r[1] = fb(-1.5f);
                 s.r[5] = 0x7fc00000u;
                 s.r[8] = 16777217;
                 s.r[10] = 0x12345;
               });
  REQUIRE(r->res.ok());
  CHECK(T(r, 0).r[2] == 0x7fffffffu);
  CHECK(T(r, 0).r[3] == 0);
  CHECK(T(r, 0).r[4] == 0);
  CHECK(T(r, 0).r[6] == uint32_t(-2));
  CHECK(T(r, 0).r[7] == fb(16777216.0f));
  CHECK(T(r, 0).r[9] == 0x7fff);
}

TEST_CASE("tesla interp: double precision with rounding modes (G200)") {
  auto r = run("add rp f64 $r4d $r0d $r2d\n"
               "add rn f64 $r6d $r0d $r2d\n"
               "fma rz f64 $r8d $r0d $r0d $r2d\n"
               "exit nop\n",
               1, [](unsigned, ThreadState& s) {
                 double one = 1.0, tiny = std::ldexp(1.0, -60);
                 std::memcpy(&s.r[0], &one, 8);
                 std::memcpy(&s.r[2], &tiny, 8);
               });
  REQUIRE(r->res.ok());
  auto d = [&](int n) {
    double x;
    uint64_t v = uint64_t(T(r, 0).r[n]) | uint64_t(T(r, 0).r[n + 1]) << 32;
    std::memcpy(&x, &v, 8);
    return x;
  };
  CHECK(d(4) == std::nextafter(1.0, 2.0));
  CHECK(d(6) == 1.0);
  CHECK(d(8) == 1.0);
}

TEST_CASE("tesla interp: divergent branch runs the taken side first, join restores the mask") {
  // lanes < 16 ($c0 = "l") branch to B; the not-taken side A runs after.
  auto r = run("joinat #J\n"
               "(l $c0) bra #B\n"
               "mov b32 $r1 $r9\n"      // A: r1 = 2 (short pair)
               "mov b32 $r2 $r9\n"
               "st b32 s[0x20] $r9\n"   // A runs second: its store is the last one
               "bra #J\n"
               "B: mov b32 $r1 $r8\n"   // B: r1 = 1
               "mov b32 $r2 $r8\n"
               "st b32 s[0x20] $r8\n"
               "bra #J\n"
               "J: join add b32 $r3 $r3 $r8\n"  // once per lane, with the full mask
               "exit nop\n",
               32, [](unsigned i, ThreadState& s) {
                 s.c[0] = i < 16 ? 2 : 0;  // S set -> "l" true
                 s.r[8] = 1;
                 s.r[9] = 2;
               });
  REQUIRE(r->res.ok());
  CHECK(T(r, 0).r[1] == 1);
  CHECK(T(r, 31).r[1] == 2);
  for (unsigned i = 0; i < 32; ++i) CHECK(T(r, i).r[3] == 1);
  uint32_t last;
  std::memcpy(&last, r->bi->shared().data() + 0x20, 4);
  CHECK(last == 2);
}

TEST_CASE("tesla interp: exit and join markers act when the predicate is never") {
  auto r = run("exit (never) add b32 $r1 $r1 $r2\n"
               "long add b32 $r3 $r3 $r2\n",
               1, [](unsigned, ThreadState& s) { s.r[2] = 1; });
  REQUIRE(r->res.ok());
  CHECK(T(r, 0).r[1] == 0);   // the add did not execute
  CHECK(T(r, 0).r[3] == 0);   // but the thread exited
  CHECK(T(r, 0).exited);
}

TEST_CASE("tesla interp: call/ret, ret with an empty stack, breakaddr/break loop") {
  auto r = run("call #F\n"
               "breakaddr #OUT\n"
               "L: add b32 $c0 $r2 $r2 $r9\n"     // r2 += 1
               "set $c0 $r4 ge u32 $r2 $r5\n"     // r2 >= limit?
               "(lg $c0) break\n"
               "bra #L\n"
               "OUT: ret\n"                       // empty stack: the thread ends
               "add b32 $r7 $r7 $r9\n"            // never reached
               "F: add b32 $r6 $r6 $r9\n"
               "ret\n",
               4, [](unsigned i, ThreadState& s) {
                 s.r[9] = 1;
                 s.r[5] = i + 1;  // lanes loop a different number of times
               });
  REQUIRE(r->res.ok());
  for (unsigned i = 0; i < 4; ++i) {
    CHECK(T(r, i).r[6] == 1);
    CHECK(T(r, i).r[2] == i + 1);
    CHECK(T(r, i).r[7] == 0);
    CHECK(T(r, i).exited);
  }
}

TEST_CASE("tesla interp: diverged path without joinat waits until exit resumes it") {
  auto r = run("(l $c0) bra #B\n"
               "long add b32 $r1 $r1 $r9\n"
               "exit nop\n"
               "B: long add b32 $r2 $r2 $r9\n"
               "exit nop\n",
               2, [](unsigned i, ThreadState& s) {
                 s.c[0] = i == 0 ? 2 : 0;
                 s.r[9] = 1;
               });
  REQUIRE(r->res.ok());
  CHECK(T(r, 0).r[2] == 1);
  CHECK(T(r, 0).r[1] == 0);
  CHECK(T(r, 1).r[1] == 1);
  CHECK(T(r, 1).r[2] == 0);
}

TEST_CASE("tesla interp: barrier between two warps of a block") {
  // Thread 0 (warp 0) stores after a delay loop; thread 32 (warp 1) loads after the barrier.
  auto r = run("set $c0 $r4 e u32 $r0 $r5\n"       // $c0: is this thread 0?
               "(e $c0) st b32 s[0x40] $r6\n"
               "bar 0x0 all\n"
               "ld $r7 b32 s[0x40]\n"
               "exit nop\n",
               64, [](unsigned i, ThreadState& s) {
                 s.r[0] = i;
                 s.r[6] = 0x1234;
               });
  REQUIRE(r->res.ok());
  CHECK(T(r, 32).r[7] == 0x1234);
  CHECK(T(r, 63).r[7] == 0x1234);
}

TEST_CASE("tesla interp: launch ABI, global memory, $a post-increment") {
  Target t;
  std::vector<uint32_t> code;
  std::string err;
  REQUIRE(assemble("ld $r1 u16 s[0x2]\n"          // ntid.x
                   "ld $r2 u16 s[0xc]\n"          // ctaid.x
                   "ld $r3 b32 s[0x10]\n"         // first parameter: a g[] address
                   "shl b32 $r4 $r0 0x2\n"
                   "long add b32 $r3 $r3 $r4\n"
                   "st b32 g0[$r3] $r0\n"
                   "add $a1 0x0 0x20\n"
                   "mov b32 $r5 $r1\n"
                   "add b32 $r5 $r5 $r2\n"
                   "st b32 s[$a1++0x4] $r5\n"
                   "mov $r6 $a1\n"
                   "exit nop\n",
                   t, code, err));
  LaunchMemory mem;
  mem.global[0].assign(0x100, 0);
  BlockConfig cfg;
  cfg.block[0] = 4;
  cfg.grid[0] = 3;
  cfg.block_idx[0] = 2;
  cfg.params = {0x40, 0, 0, 0};
  cfg.smem = 0x40;
  BlockInterpreter bi(code, t, cfg, &mem);
  RunResult res = bi.run();
  INFO(res.message);
  REQUIRE(res.ok());
  for (unsigned i = 0; i < 4; ++i) {
    uint32_t v;
    std::memcpy(&v, mem.global[0].data() + 0x40 + 4 * i, 4);
    CHECK(v == i);  // $r0 = tid.x
    CHECK(bi.thread(i).r[6] == 0x24);
  }
  uint32_t s20;
  std::memcpy(&s20, bi.shared().data() + 0x20, 4);
  CHECK(s20 == 4 + 2);
}

TEST_CASE("tesla interp: faults are reported, not crashes") {
  auto oob = run("ld b32 $r1 g0[$r2]\nexit nop\n", 1, [](unsigned, ThreadState& s) { s.r[2] = 0x1000; });
  CHECK(oob->res.fault == FaultKind::OutOfBounds);
  CHECK(oob->res.message.find("g0[$r2]") != std::string::npos);
  auto trap = run("long trap\n", 1);
  CHECK(trap->res.fault == FaultKind::Trap);
  auto tex = run("texauto live $r0:$r1:$r2:$r3 $t0 $s0 $r0 0x0 0x0 0x0\nexit nop\n", 1);
  CHECK(tex->res.fault == FaultKind::Unsupported);
  CHECK(tex->res.message.find("word 0x0") != std::string::npos);
  auto dbl = run("add rn f64 $r4d $r0d $r2d\nexit nop\n", 1, nullptr, "g200");
  CHECK(dbl->res.ok());
  // a long instruction at an odd word: the decoder's error, with the address
  Target t;
  std::vector<uint32_t> code = {0x10008204, 0x10000809, 0x0403c780};
  LaunchMemory mem;
  BlockInterpreter bi(code, t, BlockConfig{}, &mem);
  RunResult res = bi.run();
  CHECK(res.fault == FaultKind::Decode);
  CHECK(res.message.find("UNALIGNED_LONG_INSTRUCTION") != std::string::npos);
  // an endless loop hits the watchdog (a budget of 2^16 warp-instructions:
  // the default 2^26 took seconds natively and minutes under qemu)
  auto loop = run("L: bra #L\n", 1, nullptr, "g200", 16, 1u << 16);
  CHECK(loop->res.fault == FaultKind::Watchdog);
}

TEST_CASE("tesla interp: quadop, vote, slct, min with NaN, pre+sfu, atomics, 64-bit l[]") {
  auto r = run("quadop f32 add subr sub mov2 $r2 l1 $r0 $r1\n"
               "vote any $c1\n"
               "(lg $c0) vote all $c2\n"
               "slct b32 $r3 $r0 $r1 f32 neg $r5\n"
               "min f32 $r6 $r7 $r1\n"
               "preex2 f32 $r8 $r9\n"
               "ex2 f32 $r8 $r8\n"
               "ld add u32 $r10 g0[$r11] $r12\n"
               "cas b32 $r13 g0[$r14] $r15 $r16\n"
               "st b64 l[0x8] $r18d\n"
               "ld b64 $r20d l[0x8]\n"
               "exit nop\n",
               4, [](unsigned i, ThreadState& s) {
                 s.r[0] = fb(float(10 * (i + 1)));  // lane 1 holds 20
                 s.r[1] = fb(1.0f);
                 s.c[0] = i == 2 ? 1 : 0;           // "lg" false only in lane 2
                 s.r[5] = fb(1.0f);                 // neg -> -1 -> picks source 2
                 s.r[7] = 0x7fc00000u;
                 s.r[9] = fb(3.0f);
                 s.r[11] = 0x10;                    // every lane adds to the same word
                 s.r[12] = i + 1;
                 s.r[14] = 0x20;
                 s.r[15] = 0;                        // compare
                 s.r[16] = 100 + i;                  // new value: only the first lane swaps
                 s.r[18] = 0x11111111u * (i + 1);
                 s.r[19] = 0xabcdef00u + i;
               });
  INFO(r->res.message);
  REQUIRE(r->res.ok());
  // quadop: lane q computes op_q(src1 from lane 1, own src2): add, subr, sub, mov2
  CHECK(T(r, 0).r[2] == fb(21.0f));
  CHECK(T(r, 1).r[2] == fb(1.0f - 20.0f));
  CHECK(T(r, 2).r[2] == fb(20.0f - 1.0f));
  CHECK(T(r, 3).r[2] == fb(1.0f));
  // vote any over lanes where "lg $c0" holds: $c1 written as "true" (0) in all lanes
  CHECK(T(r, 0).c[1] == 0);
  CHECK(T(r, 3).c[2] == 1);  // not all lanes: false (Z)
  CHECK(T(r, 0).r[3] == fb(1.0f));
  CHECK(T(r, 0).r[6] == fb(1.0f));
  CHECK(T(r, 0).r[8] == fb(8.0f));
  uint32_t sum, cas;
  std::memcpy(&sum, r->mem.global[0].data() + 0x10, 4);
  std::memcpy(&cas, r->mem.global[0].data() + 0x20, 4);
  CHECK(sum == 1 + 2 + 3 + 4);
  CHECK(T(r, 3).r[10] == 1 + 2 + 3);  // old value seen by the last lane
  CHECK(cas == 100);
  CHECK(T(r, 1).r[13] == 100);
  for (unsigned i = 0; i < 4; ++i) {
    CHECK(T(r, i).r[20] == 0x11111111u * (i + 1));
    CHECK(T(r, i).r[21] == 0xabcdef00u + i);
  }
}

TEST_CASE("tesla interp: limited calls beyond the limit are ignored") {
  const char* src = "call lim #F\n"
                    "exit nop\n"
                    "F: call lim #G\n"
                    "ret\n"
                    "G: long add b32 $r2 $r2 $r9\n"
                    "ret\n";
  auto init = [](unsigned, ThreadState& s) { s.r[9] = 1; };
  auto r = run(src, 4, init, "g200", 16);
  REQUIRE(r->res.ok());
  CHECK(T(r, 0).r[2] == 1);
  auto lim = run(src, 4, init, "g200", 1);  // the second limited call is skipped
  REQUIRE(lim->res.ok());
  CHECK(T(lim, 0).r[2] == 0);
}

TEST_CASE("tesla interp: quadon enables the whole quad, quadpop restores the mask") {
  auto r = run("(lg $c0) bra #Q\n"   // only lane 0 ($c0 = 0) takes it
               "exit nop\n"
               "Q: quadon\n"
               "long add b32 $r3 $r3 $r9\n"
               "quadpop\n"
               "long add b32 $r4 $r4 $r9\n"
               "exit nop\n",
               8, [](unsigned i, ThreadState& s) {
                 s.c[0] = i == 0 ? 0 : 1;
                 s.r[9] = 1;
               });
  REQUIRE(r->res.ok());
  for (unsigned i = 0; i < 4; ++i) CHECK(T(r, i).r[3] == 1);
  CHECK(T(r, 4).r[3] == 0);  // another quad
  CHECK(T(r, 0).r[4] == 1);
  CHECK(T(r, 1).r[4] == 0);
}

TEST_CASE("tesla semantics: predicate table and float helpers") {
  // $c = S only: l (less) true, e false, s true, ns false
  CHECK(sem::pred(2, 0x01));
  CHECK_FALSE(sem::pred(2, 0x02));
  CHECK(sem::pred(2, 0x13));
  CHECK_FALSE(sem::pred(2, 0x1c));
  CHECK(sem::pred(4, 0x11));   // c
  CHECK(sem::pred(8, 0x10));   // o
  CHECK(sem::pred(1 | 2, 0x08));  // u: Z and S (NaN compare)
  CHECK_FALSE(sem::pred(0xf, 0x00));
  CHECK(sem::pred(0, 0x0f));
  CHECK(sem::fsat(fb(2.0f)) == fb(1.0f));
  CHECK(sem::fsat(0x7fc00000u) == 0x7fffffffu);  // sat keeps NaN (nvhw fp32_sat)
  CHECK(sem::fsat(fb(-0.0f)) == 0);
  CHECK(sem::fmul(fb(3e38f), fb(3e38f), true) == 0x7f7fffffu);
  CHECK(sem::fmul(fb(3e38f), fb(3e38f), false) == 0x7f800000u);
  CHECK(sem::fadd(0x7f800000u, 0xff800000u, false) == 0x7fffffffu);
  CHECK(sem::flags_float(0x7fffffffu) == 3);
  CHECK(sem::preex2(0x7fc00000u) == 0x40000000u);
  CHECK(sem::preex2(0xff800000u) == 0xc0800000u);
  CHECK(sem::sfu(Op::Ex2, 0xc0800000u) == 0);
  CHECK(sem::sfu(Op::Rcp, fb(4.0f)) == fb(0.25f));
  CHECK(sem::sfu(Op::Rsqrt, fb(-1.0f)) == 0x7fffffffu);
}

TEST_CASE("tesla interp: 64-bit conversions saturate at the integer limits (G200)") {
  auto r = run("cvt rzi s64 $r2d f64 $r0d\n"
               "cvt rzi u64 $r4d f64 $r0d\n"
               "cvt rzi u64 $r6d f32 $r8\n"
               "exit nop\n",
               1, [](unsigned, ThreadState& s) {
                 double big = 1e30;
                 std::memcpy(&s.r[0], &big, 8);
                 s.r[8] = fb(-5.0f);
               });
  REQUIRE(r->res.ok());
  CHECK((uint64_t(T(r, 0).r[2]) | uint64_t(T(r, 0).r[3]) << 32) == 0x7fffffffffffffffull);
  CHECK((uint64_t(T(r, 0).r[4]) | uint64_t(T(r, 0).r[5]) << 32) == ~0ull);
  CHECK((uint64_t(T(r, 0).r[6]) | uint64_t(T(r, 0).r[7]) << 32) == 0);
}

}  // namespace gpurc_test_tesla_interp
