// TeslaMemory (guest_memory.h): the launch ABI's memory map over the
// interpreter's buffers.
#include "frontend/tesla/guest_memory.h"

#include <cstring>

namespace gpurc::tesla {

uint8_t* TeslaMemory::translate(ir::Space space, uint64_t addr, uint64_t bytes) {
  std::vector<uint8_t>* buf = nullptr;
  uint64_t off = addr;
  switch (space) {
    case ir::Space::Global:
    case ir::Space::Const: {
      if (!mem_) return nullptr;
      uint64_t idx = addr >> 32;
      if (idx > 15) return nullptr;
      buf = space == ir::Space::Global ? &mem_->global[idx] : &mem_->cbuf[idx];
      off = addr & 0xffffffffu;
      const auto& mapped = space == ir::Space::Global ? mem_->global_mapped[idx] : mem_->cbuf_mapped[idx];
      if (!LaunchMemory::accessible(*buf, mapped, off, bytes)) return nullptr;
      break;
    }
    case ir::Space::Shared: buf = shared_; break;
    case ir::Space::Local: {
      std::vector<std::vector<uint8_t>>* per_thread = locals_;
      if (addr >= kAttrBase + kOutDelta) per_thread = outs_, addr -= kAttrBase + kOutDelta;
      else if (addr >= kAttrBase) per_thread = attrs_, addr -= kAttrBase;
      if (!per_thread) return nullptr;
      uint64_t t = addr / kLocalStride;
      if (t >= per_thread->size()) return nullptr;
      buf = &(*per_thread)[t];
      off = addr % kLocalStride;
      break;
    }
  }
  if (!buf || bytes > buf->size() || off > buf->size() - bytes) return nullptr;
  return buf->data() + off;
}

bool TeslaMemory::access(Kind kind, ir::Space space, uint64_t addr, unsigned bytes, uint64_t* value, ir::AtomicOp op,
                         const uint64_t* compare) {
  uint8_t* p = translate(space, addr, bytes);
  if (!p) return false;
  uint64_t old = 0;
  std::memcpy(&old, p, bytes);
  uint64_t m = bytes >= 8 ? ~0ull : (1ull << (8 * bytes)) - 1;
  uint64_t v = *value & m, nv = old;
  auto sx = [&](uint64_t x) { return bytes >= 8 ? int64_t(x) : int64_t(x << (64 - 8 * bytes)) >> (64 - 8 * bytes); };
  switch (kind) {
    case Kind::Load: *value = old; return true;
    case Kind::Store: std::memcpy(p, &v, bytes); return true;
    case Kind::AtomicCas: nv = old == (*compare & m) ? v : old; break;
    case Kind::Atomic:
      switch (op) {
        case ir::AtomicOp::Add: nv = old + v; break;
        case ir::AtomicOp::Sub: nv = old - v; break;
        case ir::AtomicOp::SMin: nv = sx(old) < sx(v) ? old : v; break;
        case ir::AtomicOp::SMax: nv = sx(old) > sx(v) ? old : v; break;
        case ir::AtomicOp::UMin: nv = old < v ? old : v; break;
        case ir::AtomicOp::UMax: nv = old > v ? old : v; break;
        case ir::AtomicOp::And: nv = old & v; break;
        case ir::AtomicOp::Or: nv = old | v; break;
        case ir::AtomicOp::Xor: nv = old ^ v; break;
        case ir::AtomicOp::Exch: nv = v; break;
        case ir::AtomicOp::Inc: nv = old >= v ? 0 : old + 1; break;
        case ir::AtomicOp::Dec: nv = (old == 0 || old > v) ? v : old - 1; break;
      }
      break;
  }
  nv &= m;
  std::memcpy(p, &nv, bytes);
  *value = old;
  return true;
}

}  // namespace gpurc::tesla
