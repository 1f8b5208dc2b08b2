// TeslaMemory: an ir::GuestMemory serving the memory map of the launch ABI
// (launch_abi.h) from the interpreter's buffers, so a translated kernel and
// the reference interpreter run on identical bytes. Not part of the
// translation: runners, tests and the fuzzer pick it (or rt::Memory).
#pragma once
#include <cstdint>
#include <vector>

#include "frontend/tesla/interp.h"
#include "frontend/tesla/launch_abi.h"
#include "ir/abi.h"

namespace gpurc::tesla {

// GuestMemory over the interpreter's memory: Global/Const from `mem`
// (i << 32 | offset), Shared from `shared`, Local thread t = addr / kLocalStride
// from `locals[t]`, a[] (kAttrBase + t * kLocalStride) from `attrs[t]`
// and o[] (kOutDelta above) from `outs[t]` when given. Used by tests and the fuzzer to compare with the
// interpreter on identical bytes. Atomics are not thread-safe (one warp at a time).
class TeslaMemory final : public ir::GuestMemory {
 public:
  TeslaMemory(LaunchMemory* mem, std::vector<uint8_t>* shared, std::vector<std::vector<uint8_t>>* locals,
              std::vector<std::vector<uint8_t>>* attrs = nullptr, std::vector<std::vector<uint8_t>>* outs = nullptr)
      : mem_(mem), shared_(shared), locals_(locals), attrs_(attrs), outs_(outs) {}
  bool access(Kind kind, ir::Space space, uint64_t addr, unsigned bytes, uint64_t* value,
              ir::AtomicOp op = ir::AtomicOp::Add, const uint64_t* compare = nullptr) override;
  uint8_t* translate(ir::Space space, uint64_t addr, uint64_t bytes) override;

 private:
  LaunchMemory* mem_;
  std::vector<uint8_t>* shared_;
  std::vector<std::vector<uint8_t>>* locals_;
  std::vector<std::vector<uint8_t>>* attrs_;
  std::vector<std::vector<uint8_t>>* outs_;
};

}  // namespace gpurc::tesla
