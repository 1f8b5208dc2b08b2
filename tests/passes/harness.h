// Shared helpers of the pass tests: a small guest memory, running a function
// on the IR interpreter, and comparing a function before and after the
// pipeline for many entry masks and initial states.
#pragma once
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ir/abi.h"
#include "ir/builder.h"
#include "ir/interp.h"
#include "ir/ir.h"
#include "ir/passes.h"

namespace passtest {

using namespace gpurc::ir;

inline bool light() {
  const char* e = std::getenv("GPURC_TEST_LIGHT");
  return e && *e && std::string(e) != "0";
}

// One global buffer of kMemBytes at address 0; every other access faults.
constexpr uint64_t kMemBytes = 1024;

struct TestMemory : GuestMemory {
  std::vector<uint8_t> bytes = std::vector<uint8_t>(kMemBytes, 0);
  bool access(Kind kind, Space space, uint64_t addr, unsigned n, uint64_t* value, AtomicOp op,
              const uint64_t* compare) override {
    if (space != Space::Global || addr > kMemBytes || kMemBytes - addr < n) return false;
    uint64_t old = 0;
    std::memcpy(&old, &bytes[addr], n);
    uint64_t mask = n >= 8 ? ~0ull : (1ull << (8 * n)) - 1;
    uint64_t nv = old;
    switch (kind) {
      case Kind::Load: *value = old; return true;
      case Kind::Store: nv = *value; break;
      case Kind::AtomicCas:
        if (old == (*compare & mask)) nv = *value;
        *value = old;
        break;
      case Kind::Atomic:
        switch (op) {
          case AtomicOp::Add: nv = old + *value; break;
          case AtomicOp::Or: nv = old | *value; break;
          case AtomicOp::Exch: nv = *value; break;
          default: nv = old + *value; break;  // the tests use add/or/exch only
        }
        *value = old;
        break;
    }
    nv &= mask;
    std::memcpy(&bytes[addr], &nv, n);
    return true;
  }
  uint8_t* translate(Space space, uint64_t addr, uint64_t n) override {
    if (space != Space::Global || addr > kMemBytes || kMemBytes - addr < n) return nullptr;
    return &bytes[addr];
  }
};

struct State {
  uint32_t entry_mask = ~0u;
  std::vector<uint8_t> vars;
  std::vector<uint8_t> uniforms;
  std::vector<uint8_t> memory = std::vector<uint8_t>(kMemBytes, 0);
};

struct Outcome {
  RunStatus status = RunStatus::Done;
  FaultKind fault = FaultKind::None;
  std::vector<uint8_t> vars, memory;
  int barriers = 0;
};

// Runs f from s (resuming after every barrier) with a watchdog budget.
inline Outcome run(const Function& f, const State& s, int64_t budget = 1 << 22) {
  auto exe = make_ir_interpreter(f);
  std::vector<uint8_t> frame(exe->frame_bytes() + 64);
  Outcome o;
  o.vars = s.vars;
  o.vars.resize(f.vars_bytes());
  std::vector<uint8_t> uni = s.uniforms;
  uni.resize(f.uniform_bytes + 16);
  TestMemory mem;
  mem.bytes = s.memory;
  WarpContext ctx;
  ctx.vars = o.vars.data();
  ctx.uniforms = uni.data();
  ctx.frame = frame.data();
  ctx.entry_mask = s.entry_mask;
  ctx.budget = budget;
  ctx.memory = &mem;
  for (int i = 0; i < 64; ++i) {
    o.status = exe->run(ctx);
    if (o.status != RunStatus::Barrier) break;
    ++o.barriers;
  }
  o.fault = ctx.fault;
  o.memory = mem.bytes;
  return o;
}

inline State random_state(const Function& f, std::mt19937& rng, uint32_t entry_mask, uint32_t var_range) {
  State s;
  s.entry_mask = entry_mask;
  s.vars.resize(f.vars_bytes());
  for (uint32_t v = 0; v < f.vars.size(); ++v) {
    unsigned lb = lane_bytes(f.vars[v].type);
    for (int l = 0; l < kWarpLanes; ++l) {
      uint64_t x = var_range ? rng() % var_range : rng();
      x &= type_mask(f.vars[v].type);
      std::memcpy(&s.vars[f.var_offset(v) + l * lb], &x, lb);
    }
  }
  s.uniforms.resize(f.uniform_bytes);
  for (auto& b : s.uniforms) b = uint8_t(rng() & 7);
  for (auto& b : s.memory) b = uint8_t(rng());
  return s;
}

inline std::vector<uint32_t> test_masks(std::mt19937& rng) {
  std::vector<uint32_t> m = {~0u, 0u, 1u, 0x80000000u, 0x0000ffffu, 0xaaaaaaaau};
  for (int i = 0; i < 4; ++i) m.push_back(uint32_t(rng()));
  return m;
}

inline int count_op(const Function& f, Opcode op) {
  int n = 0;
  for (auto& b : f.blocks)
    for (ValueId v : b.insts) n += f.insts[v].op == op;
  return n;
}

// Runs the pipeline with verify_each on a copy of f; returns the result
// (CHECKs are done by the caller through the returned error string).
inline std::string pipeline(Function& f, PassOptions opt = {}) {
  opt.verify_each = true;
  return run_pipeline(f, opt);
}

inline std::string describe(const Outcome& a, const Outcome& b, const Function& f) {
  if (a.status != b.status) return "status " + std::to_string(int(a.status)) + " vs " + std::to_string(int(b.status));
  if (a.fault != b.fault) return "fault " + std::to_string(int(a.fault)) + " vs " + std::to_string(int(b.fault));
  for (uint32_t v = 0; v < f.vars.size(); ++v) {
    unsigned lb = lane_bytes(f.vars[v].type);
    for (int l = 0; l < kWarpLanes; ++l) {
      uint64_t x = 0, y = 0;
      size_t off = f.var_offset(v) + l * lb;
      if (off + lb > a.vars.size() || off + lb > b.vars.size()) return "var area size";
      std::memcpy(&x, &a.vars[off], lb);
      std::memcpy(&y, &b.vars[off], lb);
      if (x != y)
        return "var " + f.vars[v].name + " lane " + std::to_string(l) + ": " + std::to_string(x) + " vs " +
               std::to_string(y);
    }
  }
  for (size_t i = 0; i < a.memory.size(); ++i)
    if (a.memory[i] != b.memory[i]) return "memory byte " + std::to_string(i);
  if (a.barriers != b.barriers) return "barrier count";
  return "";
}

}  // namespace passtest
