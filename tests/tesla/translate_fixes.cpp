// Regressions from the tesla fuzz campaign (gpurc fuzz --isa tesla): each
// program runs on the reference interpreter and on its translation (IR
// interpreter and every JIT tier of the host) from the same state.
#include "translate_harness.h"

namespace gpurc_test_tesla_translate_fixes {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace tesla_tr;

namespace {

// $r0 = tid.x-like spread, $r1..$r15 lane-dependent small values, random $c.
Case lane_case(const std::string& src, unsigned threads, uint32_t seed) {
  Case c;
  c.src = src;
  c.threads = threads;
  c.init = [seed](unsigned i, ThreadState& s) {
    std::mt19937 rng(seed * 131 + i);
    s.r[0] = i;
    for (unsigned r = 1; r < 16; ++r) s.r[r] = uint32_t(rng());
    for (unsigned k = 0; k < 4; ++k) s.c[k] = uint8_t(rng() & 15);
    for (unsigned k = 1; k < 5; ++k) s.a[k] = uint16_t((rng() & 7) * 4);
  };
  std::mt19937 rng(seed);
  c.global0.resize(0x200);
  for (auto& b : c.global0) b = uint8_t(rng());
  return c;
}

void check_lanes(const std::string& src) {
  unsigned rounds = light() ? 1 : 4;
  for (unsigned s = 1; s <= rounds; ++s) {
    check_case(lane_case(src, 32, s));
    check_case(lane_case(src, 9 + s, s + 50));  // partial warp
  }
}

// Runs `c` on every engine against the reference and returns the reference's
// end state, for checks of the reference's own result.
EndState checked_reference(const Case& c) {
  check_case(c);
  Target t;
  std::string err;
  std::vector<uint32_t> code;
  REQUIRE(parse_target(c.variant, t, err));
  REQUIRE(assemble(all_long(c.src), t, code, err));
  EndState ref = run_reference(c, code, t);
  REQUIRE(ref.ok);
  return ref;
}

uint32_t word_at(const std::vector<uint8_t>& bytes, size_t off) {
  uint32_t w = 0;
  std::memcpy(&w, bytes.data() + off, 4);
  return w;
}

}  // namespace

// Two break loops with different trip counts per lane, then a divergent if
// (fuzz-out/tesla/two-loops-then-if.asm). The ret/brk dispatch used to pass
// the popped entry to later blocks as an SSA value, which the IR interpreter
// recomputes for inactive lanes when other lanes run the pop block again:
// "bad target" traps on ir-interp.
TEST_CASE("tesla translate: two break loops then an if (per-lane break targets)") {
  check_lanes("mov b32 $r30 0xffffffff\n"
              "and b32 $r26 $r1 0x3\n"
              "breakaddr #o1\n"
              "t1: add b32 $c0 $r26 $r26 $r30\n"
              "(le $c0) break\n"
              "add b32 $r20 $r20 $r26\n"
              "bra #t1\n"
              "o1: nop\n"
              "and b32 $r26 $r2 0x3\n"
              "breakaddr #o2\n"
              "t2: add b32 $c0 $r26 $r26 $r30\n"
              "(le $c0) break\n"
              "add b32 $r21 $r21 $r26\n"
              "bra #t2\n"
              "o2: nop\n"
              "joinat #j\n"
              "(lgu $c1) bra #e\n"
              "add b32 $r22 $r22 $r0\n"
              "bra #j\n"
              "e: nop\n"
              "j: join nop\n"
              "exit nop\n");
}

// A break loop and nested break loops, then vote: all lanes must have left both loops before
// the vote runs. With one shared break dispatch all loops formed one cycle
// in the CFG and the minimum-PC order let early lanes vote alone.
TEST_CASE("tesla translate: vote after nested break loops sees the whole warp") {
  check_lanes("mov b32 $r30 0xffffffff\n"
              "and b32 $r26 $r3 0x3\n"
              "breakaddr #first\n"
              "L0: add b32 $c3 $r26 $r26 $r30\n"
              "(le $c3) break\n"
              "bra #L0\n"
              "first: and b32 $r26 $r1 0x3\n"
              "breakaddr #outer\n"
              "L1: and b32 $r27 $r2 0x3\n"
              "breakaddr #inner\n"
              "L2: add b32 $c3 $r27 $r27 $r30\n"
              "(le $c3) break\n"
              "bra #L2\n"
              "inner: add b32 $c0 $r26 $r26 $r30\n"
              "(le $c0) break\n"
              "bra #L1\n"
              "outer: vote any $c1\n"
              "(e $c2) vote all $c3\n"
              "exit nop\n");
}

// mad's long immediate form adds the destination register (no source 3):
// the reference interpreter failed with "missing operand".
TEST_CASE("tesla translate: mad with a long immediate adds the destination") {
  check_lanes("add $r3 (mul u16 $r1l 0x1234) $r3\n"
              "add $r4 (mul u24 $r2 0x123456) $r4\n"
              "add f32 $r5 (mul $r6 0x3fc00000) $r5\n"
              "exit nop\n");
}

// Hand-worked mad immediate: 3 * 0x10 + 7 = 0x37 (u16 product + $r3).
TEST_CASE("tesla interp: mad long immediate value") {
  Case c = lane_case("add $r3 (mul u16 $r1l 0x10) $r3\nexit nop\n", 1, 1);
  c.init = [](unsigned, ThreadState& s) {
    s.r[1] = 3;
    s.r[3] = 7;
  };
  Target t;
  std::string err;
  REQUIRE(parse_target(c.variant, t, err));
  std::vector<uint32_t> code;
  REQUIRE(assemble(all_long(c.src), t, code, err));
  EndState ref = run_reference(c, code, t);
  INFO(ref.error);
  REQUIRE(ref.ok);
  CHECK(ref.threads[0].r[3] == 0x37u);
}

// slct reads both sources, so a post-increment on the unselected one still
// applies; mov's lane mask gates only the write, not the source read.
TEST_CASE("tesla translate: post-increments in slct and lane-masked mov") {
  check_lanes("slct b32 $r8 b32 s[$a1++0x4] $r1 f32 $r5\n"
              "slct b32 $r9 b32 s[$a2++0x8] $r2 f32 neg $r6\n"
              "(l012) mov b32 $r7 b32 s[$a3++0x4]\n"
              "exit nop\n");
}

// One function called from three sites (one inside a break loop, one in a
// divergent if), with its own break loop and a vote, then votes after the
// calls: exercises the per-call-stack copies of translate.cpp
// (clone_contexts). The fuzz programs that failed before the copies (e.g.
// seed 1 iteration 601) need their generated state; this case passes with or
// without the copies and guards the copies' correctness.
TEST_CASE("tesla translate: vote after calls of one function from several sites") {
  check_lanes("mov b32 $r30 0xffffffff\n"
              "and b32 $r26 $r1 0x3\n"
              "call #F\n"
              "breakaddr #out\n"
              "L: add b32 $c3 $r26 $r26 $r30\n"
              "(le $c3) break\n"
              "call #F\n"
              "bra #L\n"
              "out: joinat #j\n"
              "(lg $c1) bra #j\n"
              "call #F\n"
              "j: join nop\n"
              "vote any $c2\n"
              "(e $c0) vote all $c3\n"
              "exit nop\n"
              "F: and b32 $r27 $r2 0x3\n"
              "breakaddr #fo\n"
              "FL: add b32 $c0 $r27 $r27 $r30\n"
              "(le $c0) break\n"
              "add b32 $r20 $r20 $r27\n"
              "bra #FL\n"
              "fo: (gu $c1) vote any $c1\n"
              "ret\n");
}

// Recursion: the per-call-stack copies stop at the 16-entry stack limit.
TEST_CASE("tesla translate: recursive call with a per-lane depth") {
  check_lanes("mov b32 $r30 0xffffffff\n"
              "and b32 $r26 $r1 0x7\n"
              "call #F\n"
              "vote any $c1\n"
              "exit nop\n"
              "F: add b32 $c0 $r26 $r26 $r30\n"
              "(le $c0) ret\n"
              "add b32 $r20 $r20 $r26\n"
              "call #F\n"
              "add b32 $r21 $r21 $r20\n"
              "ret\n");
}

// Both sides of a divergent if/else store to one s[] word and one g0[] word
// (fuzz campaign, seed 1). The warp stack runs the taken side (the else
// branch here) first, so the not-taken side's store is the last one; the
// translation used to order the sides the other way round.
TEST_CASE("tesla translate: divergent if/else stores land in warp-stack order") {
  const char* src = "joinat #j\n"
                    "(lg $c1) bra #els\n"
                    "st b32 s[0x40] $r1\n"
                    "mov b32 $r24 0x40\n"
                    "st b32 g0[$r24] $r3\n"
                    "bra #j\n"
                    "els: st b32 s[0x40] $r2\n"
                    "mov b32 $r24 0x40\n"
                    "st b32 g0[$r24] $r4\n"
                    "j: join nop\n"
                    "ld $r5 b32 s[0x40]\n"
                    "exit nop\n";
  check_lanes(src);
  // Decisive by construction: even lanes take the branch, odd ones do not, so
  // the two orders leave different words (lane 31's $r1 vs lane 30's $r2).
  Case c = lane_case(src, 32, 7);
  c.init = [](unsigned i, ThreadState& s) {
    s.r[0] = i;
    s.r[1] = 0x1000 + i, s.r[2] = 0x2000 + i, s.r[3] = 0x3000 + i, s.r[4] = 0x4000 + i;
    s.c[1] = (i & 1) ? 1 : 0;  // lg = Z clear: the even lanes branch
  };
  // The reference itself: odd (not-taken) lanes stored last.
  EndState ref = checked_reference(c);
  CHECK(word_at(ref.shared, 0x40) == 0x1000 + 31);
  CHECK(word_at(ref.mem.global[0], 0x40) == 0x3000 + 31);
  CHECK(ref.threads[0].r[5] == 0x1000 + 31);
}

// Lanes that leave through an exit marker on the not-taken side of a joinat
// region inside a loop (fuzz campaign seed 1, iteration 476): the warp stack
// runs them when the taken side reaches the join, in that iteration, so the
// s[] word holds the value of the last iteration's exiting lanes. The exit
// block only returned, the IR's schedule put it after the loop, and all
// exiting lanes stored together at the end.
TEST_CASE("tesla translate: exits inside a loop's joinat region store in their iteration") {
  check_lanes("mov b32 $r30 0xffffffff\n"
              "and b32 $r26 $r1 0x3\n"
              "breakaddr #out\n"
              "top: joinat #j\n"
              "(l $c1) bra #t\n"
              "st b32 s[0x40] $r2\n"
              "exit nop\n"
              "t: add b32 $c1 $r4 $r4 $r5\n"
              "add b32 $r2 $r2 $r0\n"
              "j: join nop\n"
              "add b32 $c0 $r26 $r26 $r30\n"
              "(le $c0) break\n"
              "bra #top\n"
              "out: st b32 s[0x44] $r2\n"
              "exit nop\n");
}

// A subroutine that exits, called on the not-taken side of an if whose
// branch goes to the join, and again after the join (seed 1, iteration
// 17070). The taken lanes wait at the join marker while the others call and
// exit; then they call. The store of the second call is the last one.
TEST_CASE("tesla translate: an exiting call before the join runs before the waiting lanes") {
  const char* src = "joinat #j\n"
                    "(lg $c3) bra #j\n"
                    "call #F\n"
                    "j: join nop\n"
                    "call #F\n"
                    "exit nop\n"
                    "F: st b32 s[0x40] $r2\n"
                    "exit nop\n"
                    "ret\n";
  check_lanes(src);
  Case c = lane_case(src, 32, 3);
  c.init = [](unsigned i, ThreadState& s) {
    s.r[0] = i;
    s.r[2] = 0x2000 + i;
    s.c[3] = (i & 1) ? 1 : 0;  // lg = Z clear: the even lanes go to the join
  };
  EndState ref = checked_reference(c);
  CHECK(word_at(ref.shared, 0x40) == 0x2000 + 30);  // even lanes stored last
}

// Fuzz campaign seed 1 with quadop (iterations 2067, 2716, 10817, 14760):
// lanes that exit inside a joinat region whose own join no lane reaches (it
// follows the exit) run, on hardware, when the other side reaches the join
// of the region around it. The translation placed them after everything
// else, so the even lanes below ran past the outer join first and the odd
// lanes read their later values (quadop: the partner's $r13; s[]: the word
// the even lanes store after the join).
namespace {

// Odd lanes (not taken) exit inside the region after a quadop reading $r13
// of their quad's lane 0 (l0; dx/dy give 0 in compute programs) and a load of
// s[0x40]; the even lanes change both after the join. Hardware order: odd
// lanes read float(l & ~3) and 0.
void check_exit_before_join(const char* tail) {
  Case c;
  c.threads = 8;
  c.src = tail;
  c.init = [](unsigned i, ThreadState& s) {
    float f = float(i);
    std::memcpy(&s.r[13], &f, 4);
    s.r[2] = 0;
    s.c[3] = (i & 1) ? 0 : 1;  // Z: "e" holds in even lanes
  };
  check_case(c);
  Target t;
  std::string err;
  REQUIRE(parse_target("g200", t, err));
  std::vector<uint32_t> code;
  REQUIRE(assemble(all_long(tail), t, code, err));
  for (gpurc::Engine eng : gpurc::host_engines()) {
    EndState got = run_translated(c, code, t, eng);
    REQUIRE(got.ok);
    for (unsigned l = 1; l < 8; l += 2) {
      INFO("engine " << std::string(gpurc::engine_name(eng)) << " lane " << l);
      float f = float(l & ~3u);
      uint32_t want;
      std::memcpy(&want, &f, 4);
      CHECK(got.threads[l].r[15] == want);
      CHECK(got.threads[l].r[16] == 0);
    }
  }
}

}  // namespace

TEST_CASE("tesla translate fixes: exit inside a loop of the region runs before the join") {
  // The exiting lanes have a breakaddr entry the join's stack does not: the
  // join block of the joinat's stack counts.
  check_exit_before_join(
      "joinat #j0\n"
      "(e $c3) bra #t0\n"
      "breakaddr #brk\n"
      "quadop f32 add add add add $r15 l0 $r13 $r2\n"
      "ld $r16 b32 s[0x40]\n"
      "exit nop\n"
      "brk: nop\n"
      "bra #j0\n"
      "t0: nop\n"
      "j0: join nop\n"
      "mov b32 $r13 0x42f60000\n"
      "st b32 s[0x40] $r13\n"
      "exit nop\n");
}

TEST_CASE("tesla translate fixes: exit in a region whose join is unreachable runs before the outer join") {
  check_exit_before_join(
      "joinat #j0\n"
      "(e $c3) bra #t0\n"                  // even lanes: taken side, first
      "joinat #j2\n"
      "x: quadop f32 add add add add $r15 l0 $r13 $r2\n"
      "ld $r16 b32 s[0x40]\n"
      "exit nop\n"
      "j2: join nop\n"                     // follows the exit: no lane reaches it
      "bra #j0\n"
      "t0: nop\n"
      "j0: join nop\n"
      "mov b32 $r13 0x42f60000\n"          // 123.0, after the join
      "st b32 s[0x40] $r13\n"
      "exit nop\n");
}

}  // namespace gpurc_test_tesla_translate_fixes
