// Helpers for the IR tests: a warp context with owned buffers and a small
// guest memory double.
#pragma once
#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include "ir/abi.h"
#include "ir/builder.h"
#include "ir/interp.h"

namespace irtest {
using namespace gpurc::ir;

// One flat buffer per space at address 0.. size-1; anything else faults.
struct TestMemory : GuestMemory {
  std::vector<uint8_t> buf[kNumSpaces];
  std::vector<uint64_t> log_addr;  // order of accesses
  explicit TestMemory(size_t bytes) {
    for (auto& b : buf) b.assign(bytes, 0);
  }
  bool access(Kind kind, Space space, uint64_t addr, unsigned bytes, uint64_t* value, AtomicOp op,
              const uint64_t* compare) override {
    auto& b = buf[int(space)];
    if (addr > b.size() || b.size() - addr < bytes) return false;
    log_addr.push_back(addr);
    uint64_t old = 0;
    std::memcpy(&old, &b[addr], bytes);
    uint64_t nv = old;
    switch (kind) {
      case Kind::Load: *value = old; return true;
      case Kind::Store: nv = *value; break;
      case Kind::Atomic:
        switch (op) {
          case AtomicOp::Add: nv = old + *value; break;
          case AtomicOp::Exch: nv = *value; break;
          case AtomicOp::UMax: nv = old > *value ? old : *value; break;
          default: nv = old ^ *value; break;
        }
        *value = old;
        break;
      case Kind::AtomicCas:
        if (old == *compare) nv = *value;
        *value = old;
        break;
    }
    std::memcpy(&b[addr], &nv, bytes);
    return true;
  }
  uint8_t* translate(Space, uint64_t, uint64_t) override { return nullptr; }
  uint32_t u32(Space s, uint64_t addr) const {
    uint32_t x;
    std::memcpy(&x, &buf[int(s)][addr], 4);
    return x;
  }
};

struct Warp {
  const Function& f;
  std::unique_ptr<Executable> exe;
  std::vector<uint64_t> vars, frame, uniforms;
  WarpContext ctx;
  explicit Warp(const Function& fn, uint32_t entry_mask = ~0u) : f(fn), exe(make_ir_interpreter(fn)) {
    vars.assign(f.vars_bytes() / 8 + 1, 0);
    frame.assign(exe->frame_bytes() / 8 + 1, 0);
    uniforms.assign(f.uniform_bytes / 8 + 1, 0);
    ctx.vars = reinterpret_cast<uint8_t*>(vars.data());
    ctx.frame = reinterpret_cast<uint8_t*>(frame.data());
    ctx.uniforms = reinterpret_cast<const uint8_t*>(uniforms.data());
    ctx.entry_mask = entry_mask;
  }
  RunStatus run() { return exe->run(ctx); }
  uint64_t var(uint32_t v, int lane) const {
    unsigned lb = lane_bytes(f.vars[v].type);
    uint64_t x = 0;
    std::memcpy(&x, reinterpret_cast<const uint8_t*>(vars.data()) + f.var_offset(v) + size_t(lane) * lb, lb);
    return x;
  }
  void set_var(uint32_t v, int lane, uint64_t x) {
    unsigned lb = lane_bytes(f.vars[v].type);
    std::memcpy(reinterpret_cast<uint8_t*>(vars.data()) + f.var_offset(v) + size_t(lane) * lb, &x, lb);
  }
};
}  // namespace irtest
