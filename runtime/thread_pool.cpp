#include "runtime/thread_pool.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>

namespace gpurc::rt {

namespace {

int default_spin_us() {
  const char* env = std::getenv("GPURC_POOL_SPIN_US");
  if (env && *env) {
    char* end = nullptr;
    const long v = std::strtol(env, &end, 10);
    if (end && *end == 0 && v >= 0 && v <= 1000000) return int(v);
  }
  return ThreadPool::kDefaultSpinUs;
}

}  // namespace

// Asked once: std::thread::hardware_concurrency() reads the kernel's CPU
// list each time (10.8 us per call on the 2-core KVM development host,
// seventeenth session), and draws asked it per call: that alone made the
// default thread count's 4096-vertex draws of ref_simple 2x slower than
// one thread's.
unsigned ThreadPool::host_cores() {
  static const unsigned cores = [] {
    const unsigned n = std::thread::hardware_concurrency();
    return n ? n : 1;
  }();
  return cores;
}

ThreadPool& ThreadPool::shared(unsigned threads) {
  if (threads == 0) threads = host_cores();
  static std::mutex lock;
  static std::map<unsigned, std::unique_ptr<ThreadPool>> pools;
  std::lock_guard<std::mutex> g(lock);
  auto& p = pools[threads];
  if (!p) p = std::make_unique<ThreadPool>(threads);
  return *p;
}

ThreadPool::ThreadPool(unsigned threads, int spin_us) : spin_us_(spin_us < 0 ? default_spin_us() : spin_us) {
  if (threads == 0) threads = host_cores();
  for (unsigned i = 1; i < threads; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> g(m_);
    stop_.store(true);
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

template <class Done>
bool ThreadPool::spin_until(Done done) const {
  if (done()) return true;
  if (spin_us_ <= 0) return false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(spin_us_);
  for (;;) {
    // Yielding, not pausing (seventeenth session): on a machine whose cores
    // other processes want, a thread spinning with `pause` kept its core
    // from them and from this pool's own other thread (forced two-thread
    // draws of ref_heavy and ref_loop at 0.58-0.66x of one thread, load
    // average ~2.7), while yielding gives the core away when anyone else
    // can run and still sees the next job within a system call when the
    // core is idle (0.97-0.98x under the same load). The clock every 4
    // yields.
    for (int k = 0; k < 4; ++k) {
      std::this_thread::yield();
      if (done()) return true;
    }
    if (std::chrono::steady_clock::now() >= deadline) return done();
  }
}

// The item count is read before the claim: when the caller has moved on to
// another job (and so may have rewritten count_), claim_ no longer holds
// this job's word and the compare-and-swap fails. fn_ is read after a
// successful claim, while the job cannot finish.
void ThreadPool::run_items(uint64_t c) {
  const uint32_t job = job_of(c);
  for (;;) {
    const uint32_t idx = uint32_t(c);
    const size_t n = count_.load();
    if (idx >= n) return;
    if (!claim_.compare_exchange_weak(c, c + 1)) {
      if (job_of(c) != job) return;
      continue;
    }
    (*fn_.load())(idx);
    if (finished_.fetch_add(1) + 1 == n && caller_waiting_.load()) {
      std::lock_guard<std::mutex> g(m_);
      done_.notify_all();
    }
    c = claim_.load();
    if (job_of(c) != job) return;
  }
}

void ThreadPool::worker_loop() {
  // Job 0 is the pool's initial claim word (no job): a worker that starts
  // after the first job was published still takes part in it.
  uint32_t seen = 0;
  for (;;) {
    const uint64_t c = claim_.load();
    if (job_of(c) != seen) {
      seen = job_of(c);
      run_items(c);
      continue;
    }
    auto ready = [&] { return stop_.load() || job_of(claim_.load()) != seen; };
    if (!spin_until(ready)) {
      std::unique_lock<std::mutex> l(m_);
      sleeping_.fetch_add(1);
      wake_.wait(l, ready);
      sleeping_.fetch_sub(1);
    }
    if (stop_.load()) return;
  }
}

void ThreadPool::run_job(size_t count, const std::function<void(size_t)>& fn) {
  fn_.store(&fn);
  count_.store(count);
  finished_.store(0);
  const uint64_t c = uint64_t(++job_) << 32;
  claim_.store(c);
  // A sleeping worker needs the condition variable; one that is spinning
  // (or working) sees claim_ change by itself. The lock orders this wake
  // after a worker that counted itself asleep is really waiting.
  if (sleeping_.load() != 0) {
    { std::lock_guard<std::mutex> g(m_); }
    wake_.notify_all();
  }
  run_items(c);
  auto all_done = [&] { return finished_.load() == count; };
  if (!spin_until(all_done)) {
    std::unique_lock<std::mutex> l(m_);
    caller_waiting_.store(true);
    done_.wait(l, all_done);
    caller_waiting_.store(false);
  }
  // Every item has been handed out: mark the word so that a worker still
  // holding this job's word cannot claim against the next job's count.
  claim_.store(c | kExhausted);
}

void ThreadPool::parallel_for(size_t count, const std::function<void(size_t)>& fn) {
  if (count == 0) return;
  std::lock_guard<std::mutex> job(job_lock_);
  if (workers_.empty()) {
    for (size_t i = 0; i < count; ++i) fn(i);
    return;
  }
  // The claim word holds 32-bit item numbers: a larger job runs in pieces.
  constexpr size_t kMaxItems = kExhausted - 1;
  if (count <= kMaxItems) {
    run_job(count, fn);
    return;
  }
  for (size_t base = 0; base < count; base += kMaxItems) {
    const std::function<void(size_t)> piece = [&](size_t i) { fn(base + i); };
    run_job(std::min(kMaxItems, count - base), piece);
  }
}

}  // namespace gpurc::rt
