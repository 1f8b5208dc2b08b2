// A fixed set of worker threads that run index ranges in parallel: a launch
// hands it its blocks. The calling thread works too, so a pool of N threads
// has N-1 workers.
//
// Hand-off (seventeenth session, docs/runtime.md "Thread pool"): a job is
// published in one atomic word (job number and next item), workers claim
// items from it with compare-and-swap, and a worker that finished a job
// spins on that word (yielding its core to anyone else who wants it) for a
// bounded time (spin_us) before it sleeps on a condition variable, so
// back-to-back jobs find it awake: on a KVM guest a
// futex wake costs an inter-processor interrupt and the sleeping thread
// starts several to tens of microseconds later, which is the whole time of
// a small job. The caller waits for the last item the same way (spins,
// then sleeps). An idle process burns at most spin_us of CPU per worker
// after its last job.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace gpurc::rt {

class ThreadPool {
 public:
  // threads = 0: one per host core. spin_us: how long a worker that ran out
  // of work (and a caller waiting for the last items) spins before it sleeps;
  // negative: the default (kDefaultSpinUs, or GPURC_POOL_SPIN_US when set,
  // for measurements).
  explicit ThreadPool(unsigned threads = 0, int spin_us = -1);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  unsigned threads() const { return unsigned(workers_.size()) + 1; }
  // Calls fn(i) for every i in [0, count), spread over the threads; returns
  // when all calls have returned. fn must not throw. One job at a time: a
  // second caller waits for the first job to finish.
  void parallel_for(size_t count, const std::function<void(size_t)>& fn);

  // Workers currently asleep on the condition variable (not spinning, not
  // working): for tests of the sleep / wake path.
  unsigned sleeping() const { return sleeping_.load(); }
  int spin_us() const { return spin_us_; }

  static constexpr int kDefaultSpinUs = 100;
  static unsigned host_cores();
  // A process-wide pool of `threads` threads (0: one per core), created on
  // first use and kept, so repeated launches do not start threads each time.
  static ThreadPool& shared(unsigned threads = 0);

 private:
  // claim_: job number (high 32 bits) and the next item to hand out (low 32
  // bits); kExhausted when the job has no items left to hand out.
  static constexpr uint64_t kExhausted = 0xffffffffu;
  static uint32_t job_of(uint64_t c) { return uint32_t(c >> 32); }
  void worker_loop();
  // Claims and runs items of the job in claim word `c` until none are left.
  void run_items(uint64_t c);
  // Spins until `done()` or spin_us_ passed; returns done().
  template <class Done>
  bool spin_until(Done done) const;
  void run_job(size_t count, const std::function<void(size_t)>& fn);

  std::vector<std::thread> workers_;
  int spin_us_ = kDefaultSpinUs;
  std::mutex job_lock_;  // serialises parallel_for callers
  std::mutex m_;         // guards the sleeps and wake-ups only
  std::condition_variable wake_, done_;
  // The job's fields: written by the caller before it publishes the job in
  // claim_ (release), read by a worker only after it claimed an item of that
  // job (so never once the caller may have moved on).
  std::atomic<const std::function<void(size_t)>*> fn_{nullptr};
  std::atomic<size_t> count_{0};
  uint32_t job_ = 0;  // the caller's last job number
  alignas(64) std::atomic<uint64_t> claim_{kExhausted};
  alignas(64) std::atomic<size_t> finished_{0};
  alignas(64) std::atomic<unsigned> sleeping_{0};
  std::atomic<bool> caller_waiting_{false};
  std::atomic<bool> stop_{false};
};

}  // namespace gpurc::rt
