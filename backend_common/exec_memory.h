// Executable memory for JIT code: asmjit's JitAllocator with dual mapping, so
// code is written through a read-write view and run from a separate
// read-execute view (no page is ever writable and executable at once).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace gpurc::backend {

class ExecMemory {
 public:
  ExecMemory() = default;
  ExecMemory(const ExecMemory&) = delete;
  ExecMemory& operator=(const ExecMemory&) = delete;
  ~ExecMemory();
  // Copies `size` bytes of position-independent code into fresh executable
  // memory; the code is entered `entry_offset` bytes in (data the code
  // reads, such as an x64 constant pool, may come first). Returns false and
  // sets *error on failure.
  bool install(const uint8_t* code, size_t size, std::string* error, size_t entry_offset = 0);
  const uint8_t* entry() const { return rx_ + entry_offset_; }
  size_t size() const { return size_ - entry_offset_; }  // bytes from the entry on

 private:
  uint8_t* rx_ = nullptr;
  size_t size_ = 0, entry_offset_ = 0;
};

}  // namespace gpurc::backend
