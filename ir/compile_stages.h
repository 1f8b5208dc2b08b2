// Where a compile spends its time, stage by stage (`gpurc bench --isa pica200
// --only-compile --stages`). A compile records each stage it runs into the
// log installed on its thread; with none installed (always, outside the
// bench) a stage costs one thread-local read and no clock reads.
#pragma once
#include <chrono>
#include <vector>

namespace gpurc::ir {

struct StageTime {
  const char* name;  // a string literal: stages are named in the code that runs them
  double us;
};

// A stage timed inside another is taken out of the outer one's time, so the
// stages of a log never overlap and their sum is the time they cover.
struct StageLog {
  std::vector<StageTime> stages;  // in the order they finished; a stage may appear more than once
  std::vector<double> open;       // per running stage, outermost first: time of the stages inside it
};

// The log of the calling thread (nullptr: not recording).
StageLog*& stage_log();

// Times the scope it lives in (or up to stop()) as one stage.
class StageTimer {
 public:
  explicit StageTimer(const char* name) : log_(stage_log()), name_(name) {
    if (!log_) return;
    log_->open.push_back(0);
    t0_ = std::chrono::steady_clock::now();
  }
  StageTimer(const StageTimer&) = delete;
  StageTimer& operator=(const StageTimer&) = delete;
  ~StageTimer() { stop(); }
  void stop() {
    if (!log_) return;
    double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0_).count();
    double inner = log_->open.back();
    log_->open.pop_back();
    if (!log_->open.empty()) log_->open.back() += us;
    log_->stages.push_back({name_, us - inner});
    log_ = nullptr;
  }

 private:
  StageLog* log_;
  const char* name_;
  std::chrono::steady_clock::time_point t0_;
};

}  // namespace gpurc::ir
