#include "runtime/memory.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>

#include <fmt/format.h>
#ifdef __unix__
#include <unistd.h>
#endif

namespace gpurc::rt {

namespace {

uint64_t default_memory_limit() {
  uint64_t limit = kDefaultMemoryLimit;
#ifdef __unix__
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) limit = std::min(limit, uint64_t(pages) * uint64_t(page) / 2);
#endif
  return limit;
}

std::atomic<uint64_t> g_memory_limit{0};  // 0: not set yet (the default)

}  // namespace

uint64_t memory_limit() {
  uint64_t l = g_memory_limit.load(std::memory_order_relaxed);
  if (l) return l;
  // Once per process: sysconf(_SC_PHYS_PAGES) is a system call (sysinfo),
  // which was a good part of a small launch's fixed cost (every rt::launch
  // checks the limit).
  static const uint64_t fallback = default_memory_limit();
  return fallback;
}

void set_memory_limit(uint64_t bytes) { g_memory_limit.store(bytes, std::memory_order_relaxed); }

std::string format_bytes(uint64_t bytes) {
  static const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return fmt::format("{} bytes", bytes);
  double v = double(bytes);
  int u = -1;
  while (v >= 1024 && u < 5) v /= 1024, ++u;
  return fmt::format("{:.4g} {}", v, units[u]);
}

std::string check_memory(uint64_t bytes, const std::string& what) {
  const uint64_t limit = memory_limit();
  if (bytes <= limit) return "";
  return fmt::format("{} needs {} ({} bytes), more than the memory limit of {} (--max-memory)", what,
                     format_bytes(bytes), bytes, format_bytes(limit));
}

using ir::AtomicOp;
using ir::Space;
using Kind = ir::GuestMemory::Kind;

void Buffer::AlignedFree::operator()(uint8_t* p) const { ::operator delete[](p, std::align_val_t(64)); }

std::unique_ptr<uint8_t[], Buffer::AlignedFree> allocate_aligned(uint64_t bytes, bool zero) {
  uint64_t rounded = (bytes + 63) & ~uint64_t(63);
  if (rounded == 0) rounded = 64;
  auto* p = static_cast<uint8_t*>(::operator new[](size_t(rounded), std::align_val_t(64)));
  if (zero) std::memset(p, 0, size_t(rounded));
  return std::unique_ptr<uint8_t[], Buffer::AlignedFree>(p);
}

namespace {

template <typename T>
T apply_atomic(AtomicOp op, T old, T operand) {
  using S = std::make_signed_t<T>;
  switch (op) {
    case AtomicOp::Add: return T(old + operand);
    case AtomicOp::Sub: return T(old - operand);
    case AtomicOp::SMin: return S(old) < S(operand) ? old : operand;
    case AtomicOp::SMax: return S(old) > S(operand) ? old : operand;
    case AtomicOp::UMin: return old < operand ? old : operand;
    case AtomicOp::UMax: return old > operand ? old : operand;
    case AtomicOp::And: return T(old & operand);
    case AtomicOp::Or: return T(old | operand);
    case AtomicOp::Xor: return T(old ^ operand);
    case AtomicOp::Exch: return operand;
    // CUDA atomicInc / atomicDec: wrap at the operand.
    case AtomicOp::Inc: return old >= operand ? T(0) : T(old + 1);
    case AtomicOp::Dec: return (old == 0 || old > operand) ? operand : T(old - 1);
  }
  return old;
}

template <typename T>
bool access_typed(Kind kind, uint8_t* p, uint64_t* value, AtomicOp op, const uint64_t* compare) {
  switch (kind) {
    case Kind::Load: {
      T v;
      std::memcpy(&v, p, sizeof(T));
      *value = uint64_t(v);
      return true;
    }
    case Kind::Store: {
      T v = T(*value);
      std::memcpy(p, &v, sizeof(T));
      return true;
    }
    case Kind::Atomic:
    case Kind::AtomicCas: {
      if (reinterpret_cast<uintptr_t>(p) % alignof(T) != 0) return false;
      std::atomic_ref<T> ref(*reinterpret_cast<T*>(p));
      T operand = T(*value);
      if (kind == Kind::AtomicCas) {
        if (!compare) return false;
        T expected = T(*compare);
        ref.compare_exchange_strong(expected, operand);  // expected receives the old value either way
        *value = uint64_t(expected);
        return true;
      }
      T old;
      switch (op) {
        case AtomicOp::Add: old = ref.fetch_add(operand); break;
        case AtomicOp::Sub: old = ref.fetch_sub(operand); break;
        case AtomicOp::And: old = ref.fetch_and(operand); break;
        case AtomicOp::Or: old = ref.fetch_or(operand); break;
        case AtomicOp::Xor: old = ref.fetch_xor(operand); break;
        case AtomicOp::Exch: old = ref.exchange(operand); break;
        default: {
          old = ref.load();
          while (!ref.compare_exchange_weak(old, apply_atomic<T>(op, old, operand))) {
          }
        }
      }
      *value = uint64_t(old);
      return true;
    }
  }
  return false;
}

}  // namespace

bool access_host(Kind kind, uint8_t* p, unsigned bytes, uint64_t* value, AtomicOp op, const uint64_t* compare) {
  switch (bytes) {
    case 1: return access_typed<uint8_t>(kind, p, value, op, compare);
    case 2: return access_typed<uint16_t>(kind, p, value, op, compare);
    case 4: return access_typed<uint32_t>(kind, p, value, op, compare);
    case 8: return access_typed<uint64_t>(kind, p, value, op, compare);
    default: return false;
  }
}

bool Memory::add_buffer(const std::string& name, Space space, uint64_t address, uint64_t size, std::string& error) {
  if (unsigned(space) >= unsigned(ir::kNumSpaces)) {
    error = "buffer '" + name + "': unknown address space";
    return false;
  }
  if (size == 0) {
    error = "buffer '" + name + "': size is 0";
    return false;
  }
  if (address + size < address && address + size != 0) {
    error = "buffer '" + name + "': range wraps around the end of the address space";
    return false;
  }
  if (size > (uint64_t(1) << 40)) {
    error = "buffer '" + name + "': size is larger than 1 TiB";
    return false;
  }
  if (find(name)) {
    error = "buffer '" + name + "': a buffer of that name already exists";
    return false;
  }
  for (const Buffer* b : by_space_[unsigned(space)]) {
    uint64_t end = address + size, bend = b->address + b->size;  // 0 = 2^64
    bool before = end != 0 && end <= b->address;
    bool after = bend != 0 && bend <= address;
    if (!before && !after) {
      error = "buffer '" + name + "' overlaps buffer '" + b->name + "' in space " + space_name(space);
      return false;
    }
  }
  if (std::string e = check_memory(total_bytes_ + size, "buffer '" + name + "' with the other buffers");
      !e.empty()) {
    error = e;
    return false;
  }
  auto buf = std::make_unique<Buffer>();
  buf->name = name;
  buf->space = space;
  buf->address = address;
  buf->size = size;
  try {
    buf->storage = allocate_aligned(size);
  } catch (const std::bad_alloc&) {
    error = "buffer '" + name + "': cannot allocate " + std::to_string(size) + " bytes";
    return false;
  }
  auto& list = by_space_[unsigned(space)];
  list.insert(std::upper_bound(list.begin(), list.end(), address,
                               [](uint64_t a, const Buffer* b) { return a < b->address; }),
              buf.get());
  buffers_.push_back(std::move(buf));
  total_bytes_ += size;
  return true;
}

Buffer* Memory::find(std::string_view name) {
  for (auto& b : buffers_)
    if (b->name == name) return b.get();
  return nullptr;
}
const Buffer* Memory::find(std::string_view name) const { return const_cast<Memory*>(this)->find(name); }

Buffer* Memory::lookup(Space space, uint64_t addr, uint64_t bytes) const {
  if (unsigned(space) >= unsigned(ir::kNumSpaces)) return nullptr;
  const auto& list = by_space_[unsigned(space)];
  // The last buffer starting at or below addr is the only candidate (no overlaps).
  auto it = std::upper_bound(list.begin(), list.end(), addr, [](uint64_t a, const Buffer* b) { return a < b->address; });
  if (it == list.begin()) return nullptr;
  Buffer* b = *(it - 1);
  return b->contains(addr, bytes) ? b : nullptr;
}

bool Memory::access(Kind kind, Space space, uint64_t addr, unsigned bytes, uint64_t* value, AtomicOp op,
                    const uint64_t* compare) {
  if (!value || (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8)) return false;
  Buffer* b = lookup(space, addr, bytes);
  if (!b) return false;
  return access_host(kind, b->data() + (addr - b->address), bytes, value, op, compare);
}

uint8_t* Memory::translate(Space space, uint64_t addr, uint64_t bytes) {
  Buffer* b = lookup(space, addr, bytes);
  return b ? b->data() + (addr - b->address) : nullptr;
}

ir::MemWindow Memory::window(Space space) const {
  ir::MemWindow w;
  if (unsigned(space) >= unsigned(ir::kNumSpaces)) return w;
  for (const Buffer* b : by_space_[unsigned(space)])
    if (b->size > w.size) w = ir::MemWindow{b->address, b->size, b->data()};
  return w;
}

void Memory::fill_windows(ir::WarpContext& ctx) const {
  for (int s = 0; s < ir::kNumSpaces; ++s) {
    // Largest first (the earlier buffer on a tie): windows[s], then the extras.
    const Buffer* best[1 + ir::kExtraWindows] = {};
    for (const Buffer* b : by_space_[s]) {
      const Buffer* c = b;
      for (const Buffer*& slot : best) {
        if (!slot || c->size > slot->size || (c->size == slot->size && c->address < slot->address)) std::swap(slot, c);
        if (!c) break;
      }
    }
    auto win = [](const Buffer* b) { return b ? ir::MemWindow{b->address, b->size, b->data()} : ir::MemWindow{}; };
    ctx.windows[s] = win(best[0]);
    for (int i = 0; i < ir::kExtraWindows; ++i) ctx.extra_windows[s][i] = win(best[1 + i]);
  }
}

bool BlockMemory::access(Kind kind, Space space, uint64_t addr, unsigned bytes, uint64_t* value, AtomicOp op,
                         const uint64_t* compare) {
  if (space == Space::Shared && shared_bytes_ > 0) {
    if (!value || (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8) || !in_shared(addr, bytes)) return false;
    return access_host(kind, shared_ + addr, bytes, value, op, compare);
  }
  return base_.access(kind, space, addr, bytes, value, op, compare);
}

uint8_t* BlockMemory::translate(Space space, uint64_t addr, uint64_t bytes) {
  if (space == Space::Shared && shared_bytes_ > 0) return in_shared(addr, bytes) ? shared_ + addr : nullptr;
  return base_.translate(space, addr, bytes);
}

void BlockMemory::fill_windows(ir::WarpContext& ctx) const {
  base_.fill_windows(ctx);
  if (shared_bytes_ > 0) {  // the block's shared memory replaces the space's buffers
    ctx.windows[int(Space::Shared)] = ir::MemWindow{0, shared_bytes_, shared_};
    for (ir::MemWindow& w : ctx.extra_windows[int(Space::Shared)]) w = ir::MemWindow{};
  }
}

uint8_t* StackMemory::host(uint64_t addr, uint64_t bytes) const {
  if (stride_ == 0) return nullptr;
  const uint64_t lane = addr / stride_, offset = addr % stride_;
  if (lane >= uint64_t(ir::kWarpLanes) || bytes > bytes_ || offset > bytes_ - bytes) return nullptr;
  return stacks_ + lane * bytes_ + offset;
}

bool StackMemory::access(Kind kind, Space space, uint64_t addr, unsigned bytes, uint64_t* value, AtomicOp op,
                         const uint64_t* compare) {
  if (space != Space::Local) return next_ && next_->access(kind, space, addr, bytes, value, op, compare);
  if (!value || (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8)) return false;
  uint8_t* p = host(addr, bytes);
  return p && access_host(kind, p, bytes, value, op, compare);
}

uint8_t* StackMemory::translate(Space space, uint64_t addr, uint64_t bytes) {
  if (space != Space::Local) return next_ ? next_->translate(space, addr, bytes) : nullptr;
  return host(addr, bytes);
}

const char* space_name(Space s) {
  switch (s) {
    case Space::Global: return "global";
    case Space::Shared: return "shared";
    case Space::Local: return "local";
    case Space::Const: return "const";
  }
  return "?";
}

bool parse_space(std::string_view s, Space& out) {
  for (int i = 0; i < ir::kNumSpaces; ++i)
    if (s == space_name(Space(i))) {
      out = Space(i);
      return true;
    }
  return false;
}

}  // namespace gpurc::rt
