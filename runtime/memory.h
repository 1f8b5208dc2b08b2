// Guest memory: named buffers at guest addresses in each address space,
// backed by 64-byte aligned host storage. Every access is bounds checked; an
// access that is not inside one buffer is reported (a guest fault), never
// performed.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ir/abi.h"

namespace gpurc::rt {

struct Buffer {
  std::string name;
  ir::Space space = ir::Space::Global;
  uint64_t address = 0;
  uint64_t size = 0;
  uint8_t* data() const { return storage.get(); }
  bool contains(uint64_t addr, uint64_t bytes) const {
    return addr >= address && bytes <= size && addr - address <= size - bytes;
  }

  struct AlignedFree {
    void operator()(uint8_t* p) const;
  };
  std::unique_ptr<uint8_t[], AlignedFree> storage;
};

// Performs one access on host storage `p` (already bounds checked). Atomics
// use std::atomic_ref and need `p` aligned to `bytes`: false otherwise.
bool access_host(ir::GuestMemory::Kind kind, uint8_t* p, unsigned bytes, uint64_t* value, ir::AtomicOp op,
                 const uint64_t* compare);

using ir::align64;  // (ir/abi.h) the stride of vars, frames and uniform blocks

// 64-byte aligned host storage of `bytes` (rounded up to 64), zeroed unless `zero` is false.
std::unique_ptr<uint8_t[], Buffer::AlignedFree> allocate_aligned(uint64_t bytes, bool zero = true);

// The process-wide limit on guest memory (`gpurc replay|fuzz --max-memory`):
// the buffers of one Memory together, and what one launch allocates besides
// them (shared memory, per-thread stacks and warp contexts of the blocks that
// run at once; rt::launch), must fit, or the request fails with an error
// naming the size and the limit before anything is allocated. A replay
// handler checks its own per-thread state with check_memory. Default:
// kDefaultMemoryLimit, at most half of the host's physical memory.
constexpr uint64_t kDefaultMemoryLimit = uint64_t(4) << 30;
uint64_t memory_limit();
void set_memory_limit(uint64_t bytes);  // 0 = the default
// "" if `bytes` (for `what`) fit in the limit, else the error text.
std::string check_memory(uint64_t bytes, const std::string& what);
// "1.5 GiB", "64 KiB", "17 bytes".
std::string format_bytes(uint64_t bytes);

class Memory final : public ir::GuestMemory {
 public:
  // Adds a zero-filled buffer. Fails (false, `error`) on a zero size, a range
  // that wraps around 2^64, a duplicate name or an overlap with another buffer
  // of the same space.
  bool add_buffer(const std::string& name, ir::Space space, uint64_t address, uint64_t size, std::string& error);
  Buffer* find(std::string_view name);
  const Buffer* find(std::string_view name) const;
  const std::vector<std::unique_ptr<Buffer>>& buffers() const { return buffers_; }
  // The bytes of every buffer together.
  uint64_t total_bytes() const { return total_bytes_; }
  // The buffer of `space` holding [addr, addr+bytes), or null.
  Buffer* lookup(ir::Space space, uint64_t addr, uint64_t bytes) const;

  bool access(Kind kind, ir::Space space, uint64_t addr, unsigned bytes, uint64_t* value,
              ir::AtomicOp op = ir::AtomicOp::Add, const uint64_t* compare = nullptr) override;
  uint8_t* translate(ir::Space space, uint64_t addr, uint64_t bytes) override;

  // The JIT's inline window for `space`: its largest buffer (no window if the
  // space has none). Accesses elsewhere take the access() slow path.
  ir::MemWindow window(ir::Space space) const;
  // ctx.windows: each space's largest buffer; ctx.extra_windows: the next
  // largest ones (up to ir::kExtraWindows).
  void fill_windows(ir::WarpContext& ctx) const;

 private:
  std::vector<std::unique_ptr<Buffer>> buffers_;
  std::vector<Buffer*> by_space_[ir::kNumSpaces];  // sorted by address
  uint64_t total_bytes_ = 0;
};

// One block's view of memory during a launch: its own shared memory buffer at
// address 0 of Space::Shared, everything else from the launch's Memory.
class BlockMemory final : public ir::GuestMemory {
 public:
  BlockMemory(Memory& base, uint8_t* shared, uint64_t shared_bytes)
      : base_(base), shared_(shared), shared_bytes_(shared_bytes) {}
  bool access(Kind kind, ir::Space space, uint64_t addr, unsigned bytes, uint64_t* value,
              ir::AtomicOp op = ir::AtomicOp::Add, const uint64_t* compare = nullptr) override;
  uint8_t* translate(ir::Space space, uint64_t addr, uint64_t bytes) override;
  void fill_windows(ir::WarpContext& ctx) const;

 private:
  bool in_shared(uint64_t addr, uint64_t bytes) const {
    return bytes <= shared_bytes_ && addr <= shared_bytes_ - bytes;
  }
  Memory& base_;
  uint8_t* shared_;
  uint64_t shared_bytes_;
};

// One warp's per-thread stacks in front of another memory: Space::Local
// address lane * stride + offset is byte `offset` of lane `lane`'s stack
// (`bytes` per lane, lane-major in `stacks`) when offset + size <= bytes;
// any other Local address is unbacked (a guest fault). Every other space goes
// to `next`. rt::launch makes one per warp with LaunchConfig::stack_bytes.
class StackMemory final : public ir::GuestMemory {
 public:
  StackMemory() = default;
  void reset(ir::GuestMemory* next, uint8_t* stacks, uint64_t bytes, uint64_t stride) {
    next_ = next, stacks_ = stacks, bytes_ = bytes, stride_ = stride ? stride : bytes;
  }
  bool access(Kind kind, ir::Space space, uint64_t addr, unsigned bytes, uint64_t* value,
              ir::AtomicOp op = ir::AtomicOp::Add, const uint64_t* compare = nullptr) override;
  uint8_t* translate(ir::Space space, uint64_t addr, uint64_t bytes) override;

 private:
  uint8_t* host(uint64_t addr, uint64_t bytes) const;
  ir::GuestMemory* next_ = nullptr;
  uint8_t* stacks_ = nullptr;
  uint64_t bytes_ = 0, stride_ = 0;
};

const char* space_name(ir::Space s);
bool parse_space(std::string_view s, ir::Space& out);

}  // namespace gpurc::rt
