#include "backend_common/exec_memory.h"

#include <asmjit/core.h>

#include <cstdlib>
#include <cstring>
#include <mutex>

namespace gpurc::backend {

namespace {
// One allocator for the process; JitAllocator itself is not thread-safe.
// GPURC_JIT_SINGLE_MAPPING=1 (set by cmake/aarch64-linux-gnu.cmake's qemu
// command, never in production) maps code once, read-write-execute: qemu's
// user-mode emulator sees guest writes to code only through the address it
// translated, so code written through a second view would leave stale
// translations when the allocator reuses an address (docs/backend_a64.md).
asmjit::JitAllocator::CreateParams dual_mapping_params() {
  asmjit::JitAllocator::CreateParams p{};
  const char* single = std::getenv("GPURC_JIT_SINGLE_MAPPING");
  if (!(single && std::strcmp(single, "1") == 0)) p.options = asmjit::JitAllocatorOptions::kUseDualMapping;
  return p;
}
struct SharedAllocator {
  std::mutex lock;
  asmjit::JitAllocator::CreateParams params = dual_mapping_params();
  asmjit::JitAllocator allocator{&params};
};
SharedAllocator& shared() {
  static SharedAllocator* s = new SharedAllocator();  // never destroyed: code may outlive statics
  return *s;
}
}  // namespace

ExecMemory::~ExecMemory() {
  if (rx_) {
    auto& s = shared();
    std::lock_guard<std::mutex> g(s.lock);
    s.allocator.release(rx_);
  }
}

bool ExecMemory::install(const uint8_t* code, size_t size, std::string* error, size_t entry_offset) {
  auto& s = shared();
  void* rx = nullptr;
  void* rw = nullptr;
  {
    std::lock_guard<std::mutex> g(s.lock);
    asmjit::Error err = s.allocator.alloc(&rx, &rw, size);
    if (err != asmjit::kErrorOk) {
      if (error) *error = std::string("jit: executable memory allocation failed: ") +
                          asmjit::DebugUtils::errorAsString(err);
      return false;
    }
  }
  std::memcpy(rw, code, size);
  asmjit::VirtMem::flushInstructionCache(rx, size);
  rx_ = static_cast<uint8_t*>(rx);
  size_ = size;
  entry_offset_ = entry_offset;
  return true;
}

}  // namespace gpurc::backend
