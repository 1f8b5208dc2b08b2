// Every form of Tesla's `bar` (arrive-only `bar inc`, wait-only `bar wait`,
// warp counts below the block, several barrier ids) on the reference
// interpreter and both x64 JIT tiers, through the launch path replay and
// bench use (tesla_run -> rt::launch with the counted-barrier scheduler).
// Expected values are traced by hand from the interpreter's barrier model
// (docs/tesla.md "Interpreter semantics": per barrier an arrival counter and
// a generation; a warp passing `bar inc` or releasing the barrier runs on in
// its turn; a waiting warp resumes in its next turn after the release; when
// every remaining warp waits, finished warps count as arrived).
#include <cstring>

#include "frontend/tesla/module/launch.h"
#include "recompiler/isa_engine.h"
#include "runtime/barrier.h"
#include "translate_harness.h"

namespace gpurc_test_tesla_barriers {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace tesla_tr;
using gpurc::Engine;
namespace tr = gpurc::tesla_run;

namespace {

constexpr uint64_t kOutAddress = 0x1000;

struct Run {
  Engine engine;
  tr::Outcome out;
  std::vector<uint32_t> words;  // the out buffer after the run
};

// The interpreter, then every JIT tier of this host (a tier the host lacks is
// skipped, as in the other tests).
std::vector<Engine> engines() {
  std::vector<Engine> e{Engine::Interp};
  for (Engine j : gpurc::host_jit_tiers()) e.push_back(j);
  return e;
}

// Runs `src` on every engine: grid x 1 blocks of `threads` threads, blocks
// spread over `host_threads` host threads; one u32 param, the g0 address of
// an out buffer of `out_words` words (initially 0xcdcdcdcd).
std::vector<Run> run_everywhere(const std::string& src, unsigned grid, unsigned threads, unsigned out_words,
                                unsigned host_threads = 1) {
  tr::Kernel k;
  std::string err;
  REQUIRE(parse_target("g200", k.target, err));
  INFO(src << err);
  REQUIRE(assemble(src, k.target, k.code, err));
  tr::Launch l;
  l.grid = {grid, 1, 1};
  l.block = {threads, 1, 1};
  uint32_t p = uint32_t(kOutAddress);
  l.params.resize(4);
  std::memcpy(l.params.data(), &p, 4);
  l.smem = 0x400;
  std::vector<Run> runs;
  for (Engine e : engines()) {
    std::vector<tr::Buffer> bufs(1);
    bufs[0].name = "out";
    bufs[0].address = kOutAddress;
    bufs[0].bytes.assign(size_t(out_words) * 4, 0xcd);
    tr::Options o;
    const gpurc::EngineAsHandle handle(e);
    o.engine = &handle;
    o.threads = host_threads;
    Run r{e, tr::run(k, l, bufs, o), {}};
    r.words.resize(out_words);
    std::memcpy(r.words.data(), bufs[0].bytes.data(), bufs[0].bytes.size());
    runs.push_back(std::move(r));
  }
  return runs;
}

// Shared prologue: $r3 = tid, $r5 = lane, $r4 = warp, $r2 = ctaid.x,
// $r1 = out + 4 * (ctaid.x * ntid.x + tid) (this thread's out word),
// $a1 = 4 * lane.
const char* kPrologue =
    "cvt u32 $r3 u16 $r0l\n"
    "and b32 $r5 $r3 0x1f\n"
    "shr u32 $r4 $r3 0x5\n"
    "shl $a1 $r5 0x2\n"
    "ld $r2 u16 s[0xc]\n"
    "ld $r6 u16 s[0x2]\n"
    "long mul $r1 u16 $r6l u16 $r2l\n"
    "long add b32 $r1 $r1 $r3\n"
    "shl b32 $r1 $r1 0x2\n"
    "ld $r6 b32 s[0x10]\n"
    "long add b32 $r1 $r1 $r6\n";

// Producer/consumer with an arrive-only and a wait-only barrier. Warp 0
// (the consumer) waits on barrier 1, counted as one warp; warp 1 (the
// producer) writes a first value for each lane, arrives (`bar inc`), which
// releases barrier 1, writes a second value, and stores its own output.
// Trace: round 1: warp 0 waits (generation 0); warp 1 arrives (1 >= 1:
// released, generation 1) and, not waiting, runs on to its end, so the
// second value is in s[] before warp 0 resumes. Round 2: warp 0 resumes and
// reads the second value. So every consumer lane reads 0x200 + lane +
// (ctaid << 12), plus 0x10000 it adds to mark itself.
const std::string kProducerConsumer = std::string(kPrologue) +
                                      "shl b32 $r9 $r2 0xc\n"
                                      "long add b32 $r9 $r9 $r5\n"  // lane + (ctaid << 12)
                                      "mov b32 $r7 0x20\n"
                                      "and b32 $c0 $r6 $r3 $r7\n"   // Z: warp 0
                                      "(lg $c0) bra #producer\n"
                                      "bar wait 0x1 0x20\n"
                                      "ld $r8 b32 s[$a1+0x40]\n"
                                      "long add b32 $r8 $r8 0x10000\n"
                                      "bra #out\n"
                                      "producer: long add b32 $r8 $r9 0x100\n"
                                      "st b32 s[$a1+0x40] $r8\n"
                                      "bar inc 0x1 0x20\n"
                                      "long add b32 $r8 $r9 0x200\n"
                                      "st b32 s[$a1+0x40] $r8\n"
                                      "out: st b32 g0[$r1] $r8\n"
                                      "exit nop\n";

uint32_t producer_consumer_expected(unsigned block, unsigned tid) {
  uint32_t v = 0x200 + (tid & 31) + (block << 12);
  return tid < 32 ? v + 0x10000 : v;
}

// After a barrier each warp takes a ticket: reads the counter at s[0x40]
// and stores it plus one (all lanes of a warp read and write the same
// value), so the ticket records the order in which warps pass the barrier.
const char* kTicket =
    "ld $r8 b32 s[0x40]\n"
    "long add b32 $r9 $r8 0x1\n"
    "st b32 s[0x40] $r9\n"
    "st b32 g0[$r1] $r8\n"
    "exit nop\n";

void check_all(const std::vector<Run>& runs, const std::function<uint32_t(size_t)>& expected) {
  for (const Run& r : runs) {
    INFO(gpurc::engine_name(r.engine) << ": " << r.out.error << r.out.fault_message);
    REQUIRE(r.out.ok());
    for (size_t i = 0; i < r.words.size(); ++i) {
      INFO("out word " << i);
      CHECK(r.words[i] == expected(i));
    }
  }
}

}  // namespace

TEST_CASE("tesla barriers: producer/consumer with bar inc and bar wait (the arriving warp runs on)") {
  auto runs = run_everywhere(kProducerConsumer, 1, 64, 64);
  check_all(runs, [](size_t i) { return producer_consumer_expected(0, unsigned(i)); });
}

TEST_CASE("tesla barriers: partial count (two of three warps) releases part of the block") {
  // `bar 0x0 0x40`: arrive and wait, released by two warps' arrivals.
  // Round 1: warp 0 arrives (1) and waits; warp 1 arrives (2 >= 2: released,
  // generation 1) and runs on: ticket 0; warp 2 arrives (1) and waits on
  // generation 1. Round 2: warp 0 resumes: ticket 1. Round 3: only warp 2
  // is left, waiting: stalled; arrivals 1 + finished 2 >= 2 releases it.
  // Round 4: ticket 2. (A block-wide barrier would give 0, 1, 2 by warp.)
  auto runs = run_everywhere(std::string(kPrologue) + "bar 0x0 0x40\n" + kTicket, 1, 96, 96);
  const uint32_t ticket_of_warp[3] = {1, 0, 2};
  check_all(runs, [&](size_t i) { return ticket_of_warp[i / 32]; });
}

TEST_CASE("tesla barriers: a stalled barrier is released by the finished warps") {
  // Three warps, barrier 2 counts the whole block (3). Warp 0 arrives
  // without waiting and exits, warp 1 exits at once, warp 2 only waits.
  // Round 1: warp 0 arrives (1 < 3) and finishes; warp 1 finishes; warp 2
  // waits. Round 2: nobody can run: arrivals 1 + finished 2 >= 3 releases
  // barrier 2 (warp 0 counts twice, as the interpreter counts it). Warp 2
  // takes ticket 0 after warps 0 and 1 stored their markers.
  const std::string src = std::string(kPrologue) +
                          "mov b32 $r7 0x2\n"
                          "set $c0 $r6 e u32 $r4 $r7\n"   // all ones (lg) for warp 2
                          "(lg $c0) bra #waiter\n"
                          "mov b32 $r8 0x77\n"
                          "st b32 g0[$r1] $r8\n"
                          "mov b32 $r7 0x0\n"
                          "set $c1 $r6 e u32 $r4 $r7\n"
                          "(lg $c1) bra #arrive\n"
                          "exit nop\n"
                          "arrive: bar inc 0x2 all\n"
                          "exit nop\n"
                          "waiter: bar wait 0x2 all\n" +
                          kTicket;
  auto runs = run_everywhere(src, 1, 96, 96);
  check_all(runs, [](size_t i) { return i < 64 ? 0x77u : 0u; });
}

TEST_CASE("tesla barriers: deadlocks are the interpreter's stack fault on every engine") {
  // (a) As the stalled case without warp 0's arrival: arrivals 0 + finished
  // 2 < 3. (b) Two warps at different barrier ids, each counting the block:
  // neither barrier reaches its count.
  const std::string no_arrival = std::string(kPrologue) +
                                 "mov b32 $r7 0x2\n"
                                 "set $c0 $r6 e u32 $r4 $r7\n"
                                 "(lg $c0) bra #waiter\n"
                                 "exit nop\n"
                                 "waiter: bar wait 0x2 all\n" +
                                 kTicket;
  const std::string two_ids = std::string(kPrologue) +
                              "mov b32 $r7 0x0\n"
                              "set $c0 $r6 e u32 $r4 $r7\n"
                              "(lg $c0) bra #first\n"
                              "bar 0x2 all\n" +
                              kTicket +
                              "first: bar 0x1 all\n" +
                              kTicket;
  for (const auto& [src, threads] : {std::pair{no_arrival, 96u}, std::pair{two_ids, 64u}}) {
    for (unsigned grid : {1u, 4u}) {
      auto runs = run_everywhere(src, grid, threads, grid * threads, 2);
      for (const Run& r : runs) {
        INFO(gpurc::engine_name(r.engine) << ": " << r.out.error << r.out.fault_message);
        CHECK(r.out.error.empty());
        CHECK(r.out.faulted);
        CHECK(r.out.fault_kind == "stack");
        CHECK(r.out.fault_message.find("deadlock") != std::string::npos);
        CHECK(r.out.fault_message.find("block (0,0)") == 0);  // the lowest deadlocked block, as for every fault
      }
    }
  }
}

TEST_CASE("tesla barriers: several blocks on several host threads keep per-block barrier state") {
  // 24 blocks over 4 host threads: each block's barrier 1 and counter are its
  // own (a shared arrival count would release a consumer before its producer
  // wrote, or deadlock).
  constexpr unsigned kBlocks = 24;
  auto runs = run_everywhere(kProducerConsumer, kBlocks, 64, kBlocks * 64, 4);
  check_all(runs, [](size_t i) { return producer_consumer_expected(unsigned(i / 64), unsigned(i % 64)); });
  auto tickets = run_everywhere(std::string(kPrologue) + "bar 0x0 0x40\n" + kTicket, kBlocks, 96, kBlocks * 96, 4);
  const uint32_t ticket_of_warp[3] = {1, 0, 2};
  check_all(tickets, [&](size_t i) { return ticket_of_warp[i % 96 / 32]; });
}

// The same forms against the interpreter's whole end state (registers, $c,
// s[], l[]), also on the IR interpreter, from random registers, with a warp
// count given in threads that rounds up (0x21 threads = 2 warps) and a
// thread count of 0 (no warp needs to arrive).
TEST_CASE("tesla barriers: end states match the interpreter on every IR engine") {
  const char* forms[] = {"bar 0x0 0x20", "bar 0x0 0x21", "bar inc 0x3 all", "bar inc 0x3 0x20",
                         "bar wait 0x1 0x0", "bar inc wait 0x5 0x40"};
  for (const char* form : forms) {
    for (unsigned threads : {64u, 90u}) {
      INFO(form << " threads " << threads);
      Case c;
      c.threads = threads;
      c.src = std::string("shl $a1 $r0 0x2\n"
                          "st b32 s[$a1+0x40] $r0\n") +
              form +
              "\n"
              "ld $r7 b32 s[0x40]\n"
              "ld $r8 b32 s[0xc0]\n"
              "st b32 s[$a1+0x40] $r1\n"
              "exit nop\n";
      c.smem = 0x400;
      c.init = [](unsigned i, ThreadState& s) {
        std::mt19937 rng(77 + i);
        s.r[0] = i;
        for (unsigned r = 1; r < 10; ++r) s.r[r] = edge_value(rng);
      };
      check_case(c);
    }
  }
}

// Barriers inside divergent code: each side of an if/else stops the warp at
// its own barrier (the lanes of the other side wait on the warp stack, or,
// in the IR, at their own block), then all meet at a block-wide one. The
// runtime must take each stop's barrier from the lanes that reached it,
// while the other lanes still hold the word of an earlier barrier.
TEST_CASE("tesla barriers: barriers on both sides of a divergent branch") {
  // "odd|even": the barrier of the odd lanes (fall-through side) and of the
  // even lanes (branch target, run first, lane 0 among them). With the
  // first pair, warp 0's odd lanes wait (count 0: until every warp waits or
  // is done), so their load of s[0xc4] sees what thread 33 (warp 1, odd)
  // stored before its own wait; taking lane 0's older word (the even lanes'
  // `bar inc`) they would not wait and would load the initial word.
  for (const char* sides : {"bar wait 0x2 0x0|bar inc 0x1 0x40", "bar wait 0x1 0x0|bar wait 0x2 0x0",
                            "bar 0x2 0x0|bar inc 0x1 0x20", "bar inc 0x1 0x40|bar 0x1 0x0",
                            "bar wait 0x2 0x0|bar wait 0x2 0x0"}) {  // one descriptor: rt::kBarrierOneKind
    std::string odd(sides, std::strchr(sides, '|')), even(std::strchr(sides, '|') + 1);
    for (unsigned threads : {64u, 96u}) {
      INFO(sides << " threads " << threads);
      Case c;
      c.threads = threads;
      c.src = "shl $a1 $r0 0x2\n"
              "and b32 $c0 $r9 $r0 $r1\n"
              "joinat #J\n"
              "(e $c0) bra #EVEN\n"
              "st b32 s[$a1+0x40] $r2\n" +
              odd +
              "\n"
              "ld $r7 b32 s[0xc4]\n"
              "bra #J\n"
              "EVEN: st b32 s[$a1+0x40] $r3\n" +
              even +
              "\n"
              "ld $r8 b32 s[0x48]\n"
              "J: join nop\n"
              "bar 0x3 all\n"
              "ld $r6 b32 s[0x40]\n"
              "exit nop\n";
      c.smem = 0x400;
      c.init = [](unsigned i, ThreadState& s) {
        std::mt19937 rng(91 + i);
        s.r[0] = i;
        s.r[1] = 1;  // the low bit of the thread index picks the side
        for (unsigned r = 2; r < 10; ++r) s.r[r] = edge_value(rng);
      };
      check_case(c);
    }
  }
}

TEST_CASE("tesla barriers: code with one barrier descriptor stores it without a stop count") {
  auto reads_barrier_var = [](const std::string& src) {
    Target t;
    std::string err;
    REQUIRE(parse_target("g200", t, err));
    std::vector<uint32_t> code;
    REQUIRE(assemble(all_long(src), t, code, err));
    TranslateOptions opt = options_for(BlockConfig{}, t);
    gpurc::ir::Function f;
    REQUIRE(translate(code, opt, f, err));
    uint32_t var = state_var(f, "barrier");
    REQUIRE(var != kNoStateVar);
    bool reads = false;
    for (const auto& in : f.insts) reads |= in.block != gpurc::ir::kNoBlock && in.op == gpurc::ir::Opcode::GetVar && in.imm == var;
    return reads;
  };
  CHECK_FALSE(reads_barrier_var("bar 0x0 all\nbar 0x0 all\nexit nop\n"));       // one kind: a constant
  CHECK(reads_barrier_var("bar 0x0 all\nbar inc 0x1 0x20\nexit nop\n"));        // two: the lane's count is read
}

TEST_CASE("tesla barriers: descriptor words") {
  using namespace gpurc::rt;
  CountedBarrier plain = barrier_of(barrier_word(3, true, true, -1), 5);
  CHECK(plain.id == 3);
  CHECK(plain.arrive);
  CHECK(plain.wait);
  CHECK(plain.count == 5);
  CountedBarrier inc = barrier_of(barrier_word(15, true, false, 2), 5);
  CHECK(inc.id == 15);
  CHECK(inc.arrive);
  CHECK_FALSE(inc.wait);
  CHECK(inc.count == 2);
  CHECK(barrier_of(barrier_word(0, false, true, 128), 4).count == 4);  // 0xfff threads: the block
  CHECK(barrier_of(barrier_word(0, false, true, 0), 4).count == 0);
  // The lanes that reached the barrier are those whose value changed since
  // the previous stop (their stop count moved on); the others keep theirs.
  uint32_t lanes[32] = {};
  BarrierLanes seen;
  CHECK(take_barrier_word(reinterpret_cast<const uint8_t*>(lanes), seen) == 0);
  uint32_t first = barrier_word(1, false, true, 1);
  for (unsigned l : {9u, 20u}) lanes[l] = kBarrierStopOne | first;
  CHECK(take_barrier_word(reinterpret_cast<const uint8_t*>(lanes), seen) == first);
  uint32_t second = barrier_word(2, true, true, -1);
  lanes[4] = kBarrierStopOne | second;  // lanes 9 and 20 keep the first word
  CHECK(take_barrier_word(reinterpret_cast<const uint8_t*>(lanes), seen) == second);
  lanes[9] = 2 * kBarrierStopOne | first;  // the same barrier again: the count differs
  CHECK(take_barrier_word(reinterpret_cast<const uint8_t*>(lanes), seen) == first);
  CHECK(take_barrier_word(reinterpret_cast<const uint8_t*>(lanes), seen) == 0);  // nothing changed
  // Code with one descriptor: every lane holding it is right, stale or not.
  uint32_t one[32] = {};
  one[5] = one[30] = second | kBarrierOneKind;
  CHECK(take_barrier_word(reinterpret_cast<const uint8_t*>(one), seen) == second);
  CHECK(take_barrier_word(reinterpret_cast<const uint8_t*>(one), seen) == second);
}

}  // namespace gpurc_test_tesla_barriers
