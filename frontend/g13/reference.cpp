#include "frontend/g13/reference.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <string>

namespace gpurc::g13 {

namespace {
std::atomic<uint64_t> next_id{1};

// One interpreter (its decode cache) per host thread and program: warps of
// one launch run on several threads at once, and an Interpreter is not
// thread-safe; a new program (id) on a thread replaces the old one.
Interpreter& thread_interpreter(uint64_t id, const std::vector<uint8_t>& code) {
  thread_local uint64_t cached_id = 0;
  thread_local std::unique_ptr<Interpreter> cached;
  if (cached_id != id || !cached) {
    cached = std::make_unique<Interpreter>(code, nullptr);
    cached_id = id;
  }
  return *cached;
}

void set_message(ReferenceState& st, const std::string& m) {
  const size_t n = std::min(m.size(), size_t(ReferenceState::kMessageBytes - 1));
  std::memcpy(st.message, m.data(), n);
  st.message[n] = 0;
}
}  // namespace

ReferenceExecutable::ReferenceExecutable(std::vector<uint8_t> code, std::atomic<uint64_t>* lane_instructions)
    : code_(std::move(code)), id_(next_id++), lane_instructions_(lane_instructions) {}

bool ReferenceExecutable::var_read_ranges(std::vector<std::pair<uint32_t, uint32_t>>& out) const {
  const uint32_t sg = uint32_t(offsetof(ReferenceState, sg));
  const uint32_t regs = sg + uint32_t(offsetof(SimdGroup, regs));
  const uint32_t set = sg + uint32_t(offsetof(SimdGroup, special_set));
  out = {{regs, regs + uint32_t(sizeof(SimdGroup::regs))}, {set, set + uint32_t(sizeof(SimdGroup::special_set))}};
  return true;
}

ir::RunStatus ReferenceExecutable::run(ir::WarpContext& ctx) const {
  ReferenceState& st = *reinterpret_cast<ReferenceState*>(ctx.vars);
  SimdGroup& sg = st.sg;
  Interpreter& interp = thread_interpreter(id_, code_);
  interp.set_memory(ctx.memory);
  StepResult r;
  if (lane_instructions_) {
    // Step by step to count active lanes; same watchdog as run().
    int64_t steps = 0;
    uint64_t lanes = 0;
    for (;;) {
      if (steps++ >= ctx.budget) {
        r.kind = StepResult::Kind::Fault;
        r.fault = ir::FaultKind::Watchdog;
        r.message = "watchdog: more than " + std::to_string(ctx.budget) + " instructions";
        break;
      }
      lanes += uint64_t(__builtin_popcount(sg.exec));
      r = interp.step(sg);
      if (r.kind != StepResult::Kind::Running) break;
    }
    *lane_instructions_ += lanes;
  } else {
    r = interp.run(sg, uint64_t(ctx.budget));
  }
  switch (r.kind) {
    case StepResult::Kind::Done:
      ctx.status = ir::RunStatus::Done;
      break;
    case StepResult::Kind::Barrier:
    case StepResult::Kind::Running:
      ctx.status = ir::RunStatus::Barrier;
      break;
    case StepResult::Kind::Fault:
    case StepResult::Kind::Error:
      st.stop = r.kind;
      set_message(st, r.message);
      ctx.status = ir::RunStatus::Fault;
      ctx.fault = r.kind == StepResult::Kind::Fault ? r.fault : ir::FaultKind::Unsupported;
      ctx.fault_lane = r.fault_lane;
      ctx.fault_addr = r.fault_addr;
      ctx.fault_code = 0;
      ctx.fault_space = 0;
      break;
  }
  return ctx.status;
}

}  // namespace gpurc::g13
