#include "runtime/thread_pool.h"

#include <map>
#include <memory>

namespace gpurc::rt {

unsigned ThreadPool::host_cores() {
  unsigned n = std::thread::hardware_concurrency();
  return n ? n : 1;
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

ThreadPool::ThreadPool(unsigned threads) {
  if (threads == 0) threads = host_cores();
  for (unsigned i = 1; i < threads; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> g(m_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

// Takes items one at a time until none are left. Called with m_ unlocked.
void ThreadPool::run_items() {
  for (;;) {
    size_t i;
    {
      std::lock_guard<std::mutex> g(m_);
      if (next_ >= count_) return;
      i = next_++;
    }
    (*fn_)(i);
    {
      std::lock_guard<std::mutex> g(m_);
      if (++finished_ == count_) done_.notify_all();
    }
  }
}

void ThreadPool::worker_loop() {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> l(m_);
      wake_.wait(l, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      ++busy_;
    }
    run_items();
    {
      std::lock_guard<std::mutex> g(m_);
      --busy_;
    }
    done_.notify_all();
  }
}

void ThreadPool::parallel_for(size_t count, const std::function<void(size_t)>& fn) {
  if (count == 0) return;
  std::lock_guard<std::mutex> job(job_lock_);
  {
    std::lock_guard<std::mutex> g(m_);
    fn_ = &fn;
    count_ = count;
    next_ = 0;
    finished_ = 0;
    ++generation_;
  }
  wake_.notify_all();
  run_items();
  std::unique_lock<std::mutex> l(m_);
  // Wait for every item and for every worker to leave run_items, so that fn_
  // is not read after this call returns.
  done_.wait(l, [&] { return finished_ == count_ && busy_ == 0; });
  fn_ = nullptr;
}

}  // namespace gpurc::rt
