// rt::ThreadPool (seventeenth session): every item exactly once, jobs back to
// back while the workers spin, and a pool whose workers went to sleep wakes
// for the next job (items that wait for each other cannot finish unless
// every thread takes one: a lost wake-up would hang, so it is bounded and
// fails instead). No timing is checked.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "runtime/thread_pool.h"

namespace gpurc_test_runtime_thread_pool {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;

namespace {

// Calls fn(i) over [0, count) and checks each i ran exactly once.
void check_each_once(rt::ThreadPool& pool, size_t count) {
  std::vector<std::atomic<int>> hits(count);
  for (auto& h : hits) h.store(0);
  pool.parallel_for(count, [&](size_t i) { hits[i].fetch_add(1); });
  for (size_t i = 0; i < count; ++i)
    if (hits[i].load() != 1) {
      FAIL_CHECK("item " << i << " of " << count << " ran " << hits[i].load() << " times");
      return;
    }
}

// A job of pool.threads() items that each wait until all have started: it
// finishes only when every thread (the caller and each worker) took one.
// False when that did not happen within a generous bound (a worker that
// was never woken).
bool rendezvous(rt::ThreadPool& pool) {
  const size_t n = pool.threads();
  std::atomic<size_t> arrived{0};
  std::atomic<bool> timed_out{false};
  pool.parallel_for(n, [&](size_t) {
    arrived.fetch_add(1);
    const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (arrived.load() < n) {
      if (std::chrono::steady_clock::now() > limit) {
        timed_out.store(true);
        return;
      }
      std::this_thread::yield();
    }
  });
  return !timed_out.load();
}

// Waits until every worker of `pool` sleeps on its condition variable
// (bounded likewise).
bool all_asleep(const rt::ThreadPool& pool) {
  const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (pool.sleeping() != pool.threads() - 1) {
    if (std::chrono::steady_clock::now() > limit) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

}  // namespace

TEST_CASE("thread pool: every item runs exactly once, whatever the count and the spin") {
  for (int spin : {0, 50, 1000}) {
    CAPTURE(spin);
    rt::ThreadPool pool(3, spin);
    CHECK(pool.threads() == 3);
    CHECK(pool.spin_us() == spin);
    for (size_t count : {size_t(1), size_t(2), size_t(3), size_t(4), size_t(7), size_t(64), size_t(1000)}) {
      CAPTURE(count);
      check_each_once(pool, count);
    }
    pool.parallel_for(0, [](size_t) { FAIL("an empty job ran an item"); });
    // Many small jobs back to back: a worker still inside one job must not
    // claim an item of the next against the wrong count.
    for (int j = 0; j < 2000; ++j) check_each_once(pool, size_t(1 + j % 5));
  }
  rt::ThreadPool single(1);
  CHECK(single.threads() == 1);
  check_each_once(single, 10);
}

TEST_CASE("thread pool: a pool that went to sleep wakes for the next job") {
  // spin 0: a worker sleeps as soon as it is out of work.
  rt::ThreadPool pool(2, 0);
  for (int round = 0; round < 5; ++round) {
    CAPTURE(round);
    REQUIRE(all_asleep(pool));
    CHECK(rendezvous(pool));
  }
  // Jobs back to back with sleeps between some: each needs both threads.
  for (int j = 0; j < 300; ++j) {
    if (j % 50 == 0) REQUIRE(all_asleep(pool));
    if (!rendezvous(pool)) {
      FAIL_CHECK("job " << j << ": a worker did not take its item");
      break;
    }
  }
}

TEST_CASE("thread pool: spinning workers take back-to-back jobs and sleep when idle") {
  // A long spin: the workers are awake between jobs, then sleep once idle.
  rt::ThreadPool pool(3, 2000);
  for (int j = 0; j < 500; ++j)
    if (!rendezvous(pool)) {
      FAIL_CHECK("job " << j << ": a worker did not take its item");
      break;
    }
  REQUIRE(all_asleep(pool));
  CHECK(rendezvous(pool));
  check_each_once(pool, 100);
}

TEST_CASE("thread pool: host cores are counted once and the shared pools are kept") {
  const unsigned cores = rt::ThreadPool::host_cores();
  CHECK(cores >= 1);
  CHECK(rt::ThreadPool::host_cores() == cores);
  rt::ThreadPool& a = rt::ThreadPool::shared(2);
  CHECK(&a == &rt::ThreadPool::shared(2));
  CHECK(a.threads() == 2);
  CHECK(&rt::ThreadPool::shared(0) == &rt::ThreadPool::shared(cores));
}

}  // namespace gpurc_test_runtime_thread_pool
