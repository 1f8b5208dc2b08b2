// A fixed set of worker threads that run index ranges in parallel: a launch
// hands it its blocks. The calling thread works too, so a pool of N threads
// has N-1 workers.
#pragma once
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace gpurc::rt {

class ThreadPool {
 public:
  // threads = 0: one per host core.
  explicit ThreadPool(unsigned threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  unsigned threads() const { return unsigned(workers_.size()) + 1; }
  // Calls fn(i) for every i in [0, count), spread over the threads; returns
  // when all calls have returned. fn must not throw. One job at a time: a
  // second caller waits for the first job to finish.
  void parallel_for(size_t count, const std::function<void(size_t)>& fn);

  static unsigned host_cores();
  // A process-wide pool of `threads` threads (0: one per core), created on
  // first use and kept, so repeated launches do not start threads each time.
  static ThreadPool& shared(unsigned threads = 0);

 private:
  void worker_loop();
  void run_items();

  std::vector<std::thread> workers_;
  std::mutex job_lock_;  // serialises parallel_for callers
  std::mutex m_;
  std::condition_variable wake_, done_;
  const std::function<void(size_t)>* fn_ = nullptr;
  size_t count_ = 0, next_ = 0, finished_ = 0;
  unsigned busy_ = 0;  // workers inside the current job
  uint64_t generation_ = 0;
  bool stop_ = false;
};

}  // namespace gpurc::rt
