// The counted-barrier scheduler on scripted warps: each warp is a list of
// stops (a barrier word, or the end), and the test records which warp ran
// each segment, so the order is checked against a hand trace of the Tesla
// interpreter's model (frontend/tesla/interp.cpp run_all / barrier).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "runtime/barrier.h"

namespace gpurc_test_runtime_barrier {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc::rt;

namespace {

constexpr uint32_t kEnd = 0;  // a script entry: the warp finishes

struct Trace {
  std::string order;  // one letter per segment run: 'a' + warp
  CountedEnd end = CountedEnd::Finished;
};

// Warp w's k-th run ends at scripts[w][k]: a barrier word, or kEnd.
Trace run(const std::vector<std::vector<uint32_t>>& scripts) {
  std::vector<size_t> next(scripts.size(), 0);
  Trace t;
  t.end = run_counted_barriers(uint32_t(scripts.size()), [&](uint32_t w) {
    t.order += char('a' + w);
    uint32_t word = scripts[w].at(next[w]++);
    CountedStep s;
    s.step = word == kEnd ? WarpStep::Done : WarpStep::Barrier;
    s.word = word;
    return s;
  });
  return t;
}

uint32_t plain(unsigned id, int64_t warps = -1) { return barrier_word(id, true, true, warps); }
uint32_t arrive(unsigned id, int64_t warps = -1) { return barrier_word(id, true, false, warps); }
uint32_t wait(unsigned id, int64_t warps = -1) { return barrier_word(id, false, true, warps); }

}  // namespace

TEST_CASE("counted barriers: the block-wide barrier; the last arrival runs on") {
  // Round 1: a, b wait; c arrives last (3 of 3), releases and runs on to its
  // end. Round 2: a and b resume.
  Trace t = run({{plain(0), kEnd}, {plain(0), kEnd}, {plain(0), kEnd}});
  CHECK(t.end == CountedEnd::Finished);
  CHECK(t.order == "abccab");
}

TEST_CASE("counted barriers: arrive-only runs on, wait-only resumes after the release") {
  // a waits on barrier 1 (one warp); b arrives (1 >= 1: released) and runs
  // on; a resumes in round 2.
  Trace t = run({{wait(1, 1), kEnd}, {arrive(1, 1), kEnd}});
  CHECK(t.end == CountedEnd::Finished);
  CHECK(t.order == "abba");
}

TEST_CASE("counted barriers: a partial count and a stall released by finished warps") {
  // Count 2 of 3: a waits, b releases and runs on, c waits on the next
  // generation; round 2: a resumes; round 3: all left wait: arrivals 1 +
  // finished 2 >= 2 releases c; round 4: c.
  Trace t = run({{plain(0, 2), kEnd}, {plain(0, 2), kEnd}, {plain(0, 2), kEnd}});
  CHECK(t.end == CountedEnd::Finished);
  CHECK(t.order == "abbcac");
}

TEST_CASE("counted barriers: counts above the block are the block; a count of 0 releases at once") {
  Trace t = run({{plain(0, 128), kEnd}, {plain(0, 128), kEnd}});
  CHECK(t.order == "abba");
  Trace z = run({{plain(2, 0), kEnd}, {wait(3, 0), kEnd}});
  // a's arrival releases at once (it runs on); b waits until the stall,
  // where 0 arrivals meet the count of 0.
  CHECK(z.end == CountedEnd::Finished);
  CHECK(z.order == "aabb");
}

TEST_CASE("counted barriers: deadlocks, and a stop ends the block") {
  CHECK(run({{plain(1), kEnd}, {plain(2), kEnd}}).end == CountedEnd::Deadlock);
  CHECK(run({{wait(0), kEnd}, {kEnd}}).end == CountedEnd::Deadlock);  // 0 arrivals + 1 finished < 2
  // Ids are separate: b's arrival at barrier 1 does not release a at barrier 0.
  CHECK(run({{wait(0, 1), kEnd}, {arrive(1, 1), wait(1, 1), kEnd}}).end == CountedEnd::Deadlock);
  int calls = 0;
  CountedEnd e = run_counted_barriers(3, [&](uint32_t) {
    ++calls;
    return CountedStep{WarpStep::Stop, 0};
  });
  CHECK(e == CountedEnd::Stopped);
  CHECK(calls == 1);
}

}  // namespace gpurc_test_runtime_barrier
