#include "backend_common/helpers.h"

#include <cstring>
#include <string>

#include "ir/float_bits.h"

namespace gpurc::backend::rt {

using namespace ir;

namespace {

uint64_t read_lane(const uint8_t* frame, uint32_t slot, unsigned bytes, unsigned lane) {
  const uint8_t* p = frame + slot + size_t(lane) * bytes;
  if (bytes == 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
  }
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

void write_lane(uint8_t* frame, uint32_t slot, unsigned bytes, unsigned lane, uint64_t v) {
  uint8_t* p = frame + slot + size_t(lane) * bytes;
  if (bytes == 8) {
    std::memcpy(p, &v, 8);
  } else {
    uint32_t w = uint32_t(v);
    std::memcpy(p, &w, 4);
  }
}

unsigned mem_bytes(Type t) { return t == Type::I1 ? 1 : bit_width(t) / 8; }

int64_t sext(uint64_t v, unsigned w) {
  if (w >= 64) return int64_t(v);
  unsigned s = 64 - w;
  return int64_t(v << s) >> s;
}

uint32_t fault(WarpContext* ctx, FaultKind kind, uint64_t code, uint64_t addr, Space space, unsigned lane) {
  ctx->fault = kind;
  ctx->fault_code = code;
  ctx->fault_addr = addr;
  ctx->fault_space = uint32_t(space);
  ctx->fault_lane = lane;
  ctx->resume = 0;
  ctx->status = RunStatus::Fault;
  return uint32_t(RunStatus::Fault);
}

// Host pointer for an access that lies entirely inside the space's window.
uint8_t* in_window(const WarpContext* ctx, Space s, uint64_t addr, unsigned bytes) {
  const MemWindow& w = ctx->windows[size_t(s)];
  if (w.size == 0 || w.host == nullptr) return nullptr;
  if (addr < w.base || addr - w.base > w.size || w.size - (addr - w.base) < bytes) return nullptr;
  return w.host + (addr - w.base);
}

uint64_t atomic_apply(AtomicOp op, uint64_t old, uint64_t v, unsigned bits) {
  uint64_t m = bits >= 64 ? ~0ull : ((1ull << bits) - 1);
  switch (op) {
    case AtomicOp::Add: return (old + v) & m;
    case AtomicOp::Sub: return (old - v) & m;
    case AtomicOp::SMin: return sext(old, bits) < sext(v, bits) ? old : v;
    case AtomicOp::SMax: return sext(old, bits) > sext(v, bits) ? old : v;
    case AtomicOp::UMin: return old < v ? old : v;
    case AtomicOp::UMax: return old > v ? old : v;
    case AtomicOp::And: return old & v;
    case AtomicOp::Or: return old | v;
    case AtomicOp::Xor: return old ^ v;
    case AtomicOp::Exch: return v;
    case AtomicOp::Inc: return old >= v ? 0 : (old + 1) & m;
    case AtomicOp::Dec: return (old == 0 || old > v) ? v : old - 1;
  }
  return old;
}

// Atomic read-modify-write on window memory shared with other host threads.
template <typename T>
uint64_t atomic_host(T* p, AtomicOp op, uint64_t v, unsigned bits, const uint64_t* compare) {
  T old = __atomic_load_n(p, __ATOMIC_SEQ_CST);
  for (;;) {
    T next;
    if (compare) {
      if (old != T(*compare)) return old;
      next = T(v);
    } else {
      next = T(atomic_apply(op, old, v, bits));
    }
    if (__atomic_compare_exchange_n(p, &old, next, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) return old;
  }
}

uint32_t memory_op(const WarpOp* op, WarpContext* ctx) {
  uint8_t* frame = ctx->frame;
  Space space = op->op == Opcode::Load || op->op == Opcode::Store ? mem_space(op->attr) : Space(op->imm & 3);
  bool is_atomic = op->op == Opcode::AtomicRmw || op->op == Opcode::AtomicCas;
  bool bad_attr = is_atomic ? (op->imm >= uint64_t(kNumSpaces) || (op->op == Opcode::AtomicRmw && op->attr > 11))
                            : ((op->attr & 15) >= kNumSpaces || (op->attr >> 4) > 2);
  if (bad_attr)
    return fault(ctx, FaultKind::Unsupported, op->value, 0, Space::Global, 0);
  unsigned mask_arg = unsigned(op->nargs - 1);
  Type addr_t = op->arg_type[0];
  Type data_t = op->op == Opcode::Store ? op->arg_type[1] : op->type;
  unsigned bytes = mem_bytes(data_t);
  unsigned lb = lane_bytes(data_t);
  for (unsigned l = 0; l < unsigned(kWarpLanes); ++l) {
    if (!(ctx->entry_mask >> l & 1) || !(read_lane(frame, op->arg_slot[mask_arg], 4, l) & 1)) continue;
    uint64_t addr = read_lane(frame, op->arg_slot[0], lane_bytes(addr_t), l) & type_mask(addr_t);
    uint64_t value = 0;
    bool ok = true;
    uint8_t* host = in_window(ctx, space, addr, bytes);
    switch (op->op) {
      case Opcode::Load:
        if (host) std::memcpy(&value, host, bytes);
        else ok = ctx->memory && ctx->memory->access(GuestMemory::Kind::Load, space, addr, bytes, &value);
        if (ok) write_lane(frame, op->res_slot, lb, l, data_t == Type::I1 ? (value != 0) : value & type_mask(data_t));
        break;
      case Opcode::Store:
        value = read_lane(frame, op->arg_slot[1], lb, l) & type_mask(data_t);
        if (host) std::memcpy(host, &value, bytes);
        else ok = ctx->memory && ctx->memory->access(GuestMemory::Kind::Store, space, addr, bytes, &value);
        break;
      case Opcode::AtomicRmw: case Opcode::AtomicCas: {
        bool cas = op->op == Opcode::AtomicCas;
        value = read_lane(frame, op->arg_slot[cas ? 2 : 1], lb, l) & type_mask(data_t);
        uint64_t compare = cas ? read_lane(frame, op->arg_slot[1], lb, l) & type_mask(data_t) : 0;
        AtomicOp aop = AtomicOp(op->attr);
        if (ctx->memory) {
          ok = ctx->memory->access(cas ? GuestMemory::Kind::AtomicCas : GuestMemory::Kind::Atomic, space, addr,
                                   bytes, &value, aop, cas ? &compare : nullptr);
        } else if (host && (bytes == 4 || bytes == 8) && (reinterpret_cast<uintptr_t>(host) % bytes) == 0) {
          value = bytes == 4 ? atomic_host(reinterpret_cast<uint32_t*>(host), aop, value, 32, cas ? &compare : nullptr)
                             : atomic_host(reinterpret_cast<uint64_t*>(host), aop, value, 64, cas ? &compare : nullptr);
        } else {
          ok = false;
        }
        if (ok) write_lane(frame, op->res_slot, lb, l, value & type_mask(data_t));
        break;
      }
      default: break;
    }
    if (!ok) return fault(ctx, FaultKind::OutOfBounds, op->value, addr, space, l);
  }
  return 0;
}

// Reduction operator on canonical lane bits of type t.
uint64_t combine(ReduceOp r, Type t, uint32_t fflags, uint64_t a, uint64_t b) {
  unsigned w = bit_width(t);
  uint64_t m = type_mask(t);
  switch (r) {
    case ReduceOp::Add: return (a + b) & m;
    case ReduceOp::SMin: return sext(a, w) <= sext(b, w) ? a : b;
    case ReduceOp::SMax: return sext(a, w) >= sext(b, w) ? a : b;
    case ReduceOp::UMin: return a <= b ? a : b;
    case ReduceOp::UMax: return a >= b ? a : b;
    case ReduceOp::And: return a & b;
    case ReduceOp::Or: return a | b;
    case ReduceOp::Xor: return a ^ b;
    case ReduceOp::FAdd: case ReduceOp::FMin: case ReduceOp::FMax: {
      LaneOp o{};
      o.op = r == ReduceOp::FAdd ? Opcode::FAdd : r == ReduceOp::FMin ? Opcode::FMin : Opcode::FMax;
      o.type = t;
      o.arg_type = t;
      o.attr = uint8_t(MinMaxNan::NumberWins);
      o.fflags = fflags;
      uint64_t args[2] = {a, b};
      return eval_lane(o, args);
    }
  }
  return a;
}

uint64_t identity(ReduceOp r, Type t) {
  unsigned w = bit_width(t);
  uint64_t m = type_mask(t);
  switch (r) {
    case ReduceOp::SMin: return (m >> 1);
    case ReduceOp::SMax: return (1ull << (w - 1)) & m;
    case ReduceOp::UMin: case ReduceOp::And: return m;
    case ReduceOp::FAdd: return fbits::format(t).sign_bit();  // -0: x + -0 == x for every x
    case ReduceOp::FMin: return fbits::format(t).exp_field();  // +inf
    case ReduceOp::FMax: return fbits::format(t).exp_field() | fbits::format(t).sign_bit();  // -inf
    default: return 0;
  }
}

// Clustered ops (docs/ir.md "Clusters") work on each aligned group of
// `width` lanes on its own, as the IR interpreter does.
uint32_t cross_lane_op(const WarpOp* op, WarpContext* ctx) {
  uint8_t* frame = ctx->frame;
  Type t = op->type;
  unsigned lb = lane_bytes(t);
  auto arg = [&](unsigned i, unsigned l) { return read_lane(frame, op->arg_slot[i], lane_bytes(op->arg_type[i]), l); };
  const bool clustered = op_info(op->op).clustered;
  if (clustered && !valid_cluster_imm(op->imm)) return fault(ctx, FaultKind::Unsupported, op->value, 0, Space::Global, 0);
  const unsigned width = clustered ? cluster_width(op->imm) : unsigned(kWarpLanes);
  const uint32_t cluster_bits = width == 32 ? ~0u : (1u << width) - 1;  // the lanes of cluster 0
  uint64_t out[kWarpLanes];
  uint32_t active = ctx->entry_mask;
  switch (op->op) {
    case Opcode::Ballot: case Opcode::Any: case Opcode::All: {
      uint32_t bits = 0, mask = 0;
      for (unsigned l = 0; l < unsigned(kWarpLanes); ++l) {
        bool m = (active >> l & 1) && (arg(1, l) & 1);
        mask |= uint32_t(m) << l;
        bits |= uint32_t(m && (arg(0, l) & 1)) << l;
      }
      for (unsigned c = 0; c < unsigned(kWarpLanes); c += width) {
        uint32_t cb = bits >> c & cluster_bits, cm = mask >> c & cluster_bits;  // ballot: moved down to bit 0
        uint64_t r = op->op == Opcode::Ballot ? cb : op->op == Opcode::Any ? (cb != 0) : (cb == cm);
        for (unsigned l = c; l < c + width; ++l) out[l] = r;
      }
      break;
    }
    case Opcode::Shuffle: case Opcode::Broadcast: case Opcode::QuadShuffle:
      for (unsigned c = 0; c < unsigned(kWarpLanes); c += width) {
        // Broadcast's index is uniform in the cluster: its first launched
        // lane's is used (the cluster's first lane when none is launched).
        uint32_t launched = active & (cluster_bits << c);
        unsigned first = launched ? unsigned(__builtin_ctz(launched)) : c;
        for (unsigned l = c; l < c + width; ++l) {
          unsigned idx = unsigned(arg(1, op->op == Opcode::Broadcast ? first : l));
          unsigned src = op->op == Opcode::QuadShuffle ? ((l & ~3u) | (idx & 3)) : (c | (idx & (width - 1)));
          out[l] = arg(0, src);
        }
      }
      break;
    case Opcode::Reduce: case Opcode::ScanIncl: case Opcode::ScanExcl: {
      ReduceOp r = ReduceOp(op->attr);
      for (unsigned c = 0; c < unsigned(kWarpLanes); c += width) {
        uint64_t acc = identity(r, t);
        for (unsigned l = c; l < c + width; ++l) {
          bool m = (active >> l & 1) && (arg(1, l) & 1);
          if (op->op == Opcode::ScanExcl) out[l] = acc;
          if (m) acc = combine(r, t, op->fflags, acc, arg(0, l) & type_mask(t));
          if (op->op == Opcode::ScanIncl) out[l] = acc;
        }
        if (op->op == Opcode::Reduce)
          for (unsigned l = c; l < c + width; ++l) out[l] = acc;
      }
      break;
    }
    default:
      return fault(ctx, FaultKind::Unsupported, op->value, 0, Space::Global, 0);
  }
  for (unsigned l = 0; l < unsigned(kWarpLanes); ++l) write_lane(frame, op->res_slot, lb, l, out[l]);
  return 0;
}

}  // namespace

void eval_strip(const EvalOp* op, uint8_t* frame, uint32_t lane0) {
  uint64_t args[kMaxArgs] = {0, 0, 0, 0};
  for (uint32_t l = lane0; l < lane0 + op->lanes; ++l) {
    for (uint32_t i = 0; i < op->nargs; ++i) args[i] = read_lane(frame, op->arg_slot[i], op->arg_bytes[i], l);
    // lower_helper checked lane_op_supported when it compiled the op.
    write_lane(frame, op->res_slot, op->res_bytes, l, eval_lane_unchecked(op->op, args));
  }
}

uint8_t* translate_span(WarpContext* ctx, uint32_t space, uint64_t lo, uint64_t hi, uint32_t bytes) {
  if (!ctx->memory || hi - lo > ~uint64_t(0) - bytes) return nullptr;
  return ctx->memory->translate(Space(space), lo, hi - lo + bytes);
}

uint32_t run_warp_op(const WarpOp* op, WarpContext* ctx) {
  switch (op->op) {
    case Opcode::Load: case Opcode::Store: case Opcode::AtomicRmw: case Opcode::AtomicCas:
      return memory_op(op, ctx);
    case Opcode::Trap:
      for (unsigned l = 0; l < unsigned(kWarpLanes); ++l)
        if ((ctx->entry_mask >> l & 1) && (read_lane(ctx->frame, op->arg_slot[0], 4, l) & 1))
          return fault(ctx, FaultKind::Trap, op->imm, 0, Space::Global, l);
      return 0;
    default:
      if (op_info(op->op).cross_lane) return cross_lane_op(op, ctx);
      return fault(ctx, FaultKind::Unsupported, op->value, 0, Space::Global, 0);
  }
}

}  // namespace gpurc::backend::rt
