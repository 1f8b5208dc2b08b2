// The IR interpreter: one warp of 32 lanes, SIMT execution with a per-lane
// block (PC) and minimum-PC scheduling in reverse post-order. All per-warp
// state lives in WarpContext::frame so a run can stop at a barrier and resume,
// and so one Interpreter object can serve many threads at once.
#include "ir/interp.h"

#include "ir/cfg_order.h"

#include <cstring>
#include <string>
#include <vector>

#include "ir/scalar.h"

namespace gpurc::ir {

namespace {

constexpr uint8_t kLaneRunning = 0;
constexpr uint8_t kLaneReturned = 1;
constexpr uint8_t kLaneNotLaunched = 2;

// Frame layout: this header, then 32 uint64_t lanes per instruction id.
struct FrameHeader {
  uint32_t block[kWarpLanes];       // block the lane executes next
  uint32_t prev_block[kWarpLanes];  // block it came from (selects phi operands); kNoBlock at entry
  uint8_t state[kWarpLanes];        // kLane*
};
constexpr size_t kHeaderBytes = (sizeof(FrameHeader) + 63) & ~size_t(63);

unsigned access_bytes(Type t) { return t == Type::I1 ? 1 : bit_width(t) / 8; }

class Interpreter final : public Executable {
 public:
  explicit Interpreter(const Function& f);
  size_t frame_bytes() const override { return kHeaderBytes + f_.insts.size() * kWarpLanes * sizeof(uint64_t); }
  RunStatus run(WarpContext& ctx) const override;

 private:
  struct Warp {
    WarpContext& ctx;
    FrameHeader* hdr;
    uint64_t* values;
    uint64_t* lanes(ValueId v) const { return values + size_t(v) * kWarpLanes; }
  };
  RunStatus fault(WarpContext& ctx, FaultKind k, uint64_t code = 0, uint32_t lane = 0, uint64_t addr = 0,
                  uint32_t space = 0) const;
  // Runs block b for the lanes in `active`; returns false when the warp must
  // stop (fault or barrier: ctx.status says which).
  bool run_block(Warp& w, BlockId b, uint32_t active) const;
  bool exec(Warp& w, ValueId v, uint32_t active) const;
  bool exec_memory(Warp& w, ValueId v, uint32_t active) const;
  void exec_cross_lane(Warp& w, ValueId v, uint32_t active) const;
  uint64_t reduce_lanes(Warp& w, ValueId v, uint32_t lanes) const;

  Function f_;
  std::string structural_problem_;             // non-empty: every run faults Unsupported
  std::vector<int> rpo_index_;                 // -1 for unreachable blocks
  std::vector<std::vector<BlockId>> preds_;
  std::vector<LaneOp> lane_ops_;
  std::vector<uint8_t> supported_;             // lane_op_supported, for per-lane ops
  std::vector<uint32_t> var_offsets_;
};

bool is_per_lane(Opcode op) {
  switch (op) {
    case Opcode::Phi: case Opcode::GetVar: case Opcode::SetVar: case Opcode::LoadVar: case Opcode::StoreVar:
    case Opcode::LoadUniform: case Opcode::LoadUniformIdx: case Opcode::EntryMask: case Opcode::LaneId:
    case Opcode::Budget: case Opcode::Trap: case Opcode::Load: case Opcode::Store: case Opcode::AtomicRmw: case Opcode::AtomicCas:
      return false;
    default:
      return !op_info(op).cross_lane && !op_info(op).terminator;
  }
}

// The structural facts the interpreter relies on for memory safety (the full
// rules are verify()'s job): ids and successors in range, table arity.
std::string structural_problem(const Function& f) {
  for (BlockId b = 0; b < f.blocks.size(); ++b) {
    for (BlockId s : f.blocks[b].succs)
      if (s >= f.blocks.size()) return "bad successor";
    for (ValueId v : f.blocks[b].insts) {
      if (v >= f.insts.size()) return "bad instruction id";
      const Inst& in = f.insts[v];
      std::string_view letters = op_info(in.op).args;
      if (letters != "*" && letters.size() != in.args.size()) return "operand count differs from the op table";
      for (ValueId a : in.args)
        if (a >= f.insts.size()) return "bad operand id";
    }
  }
  return "";
}

Interpreter::Interpreter(const Function& f) : f_(f), structural_problem_(structural_problem(f)) {
  size_t nb = f_.blocks.size();
  preds_.assign(nb, {});
  for (BlockId b = 0; b < nb; ++b)
    for (BlockId s : f_.blocks[b].succs)
      if (s < nb) preds_[s].push_back(b);
  // Minimum-PC scheduling order (loop blocks before their exits; see cfg_order.h).
  rpo_index_.assign(nb, -1);
  std::vector<BlockId> order = schedule_order(f_);
  for (size_t i = 0; i < order.size(); ++i) rpo_index_[order[i]] = int(i);
  lane_ops_.resize(f_.insts.size());
  supported_.assign(f_.insts.size(), 0);
  for (ValueId v = 0; v < f_.insts.size(); ++v) {
    lane_ops_[v] = lane_op(f_, v);
    if (is_per_lane(f_.insts[v].op)) supported_[v] = lane_op_supported(lane_ops_[v], nullptr);
  }
  var_offsets_ = f_.var_offsets();  // vars.size() + 1 entries, the last the total
}

RunStatus Interpreter::fault(WarpContext& ctx, FaultKind k, uint64_t code, uint32_t lane, uint64_t addr,
                             uint32_t space) const {
  ctx.fault = k;
  ctx.fault_code = code;
  ctx.fault_lane = lane;
  ctx.fault_addr = addr;
  ctx.fault_space = space;
  ctx.resume = 0;
  ctx.status = RunStatus::Fault;
  return RunStatus::Fault;
}

RunStatus Interpreter::run(WarpContext& ctx) const {
  if (!ctx.frame || (reinterpret_cast<uintptr_t>(ctx.frame) & 7) != 0)
    return fault(ctx, FaultKind::Unsupported, 0);  // the interpreter needs an 8-byte aligned frame
  if (f_.blocks.empty() || !structural_problem_.empty()) return fault(ctx, FaultKind::Unsupported, 0);
  if (!f_.vars.empty() && !ctx.vars) return fault(ctx, FaultKind::Unsupported, 0);
  Warp w{ctx, reinterpret_cast<FrameHeader*>(ctx.frame), reinterpret_cast<uint64_t*>(ctx.frame + kHeaderBytes)};
  if (ctx.resume == 0) {
    for (int l = 0; l < kWarpLanes; ++l) {
      w.hdr->block[l] = 0;
      w.hdr->prev_block[l] = kNoBlock;
      w.hdr->state[l] = (ctx.entry_mask >> l & 1) ? kLaneRunning : kLaneNotLaunched;
    }
    // Values of lanes where nothing was computed read as 0, so runs are deterministic.
    std::memset(w.values, 0, f_.insts.size() * kWarpLanes * sizeof(uint64_t));
  }
  ctx.resume = 0;
  ctx.fault = FaultKind::None;
  while (true) {
    // Minimum-PC scheduling: the pending block earliest in reverse post-order.
    int best = -1;
    BlockId best_block = kNoBlock;
    for (int l = 0; l < kWarpLanes; ++l) {
      if (w.hdr->state[l] != kLaneRunning) continue;
      BlockId b = w.hdr->block[l];
      int r = b < rpo_index_.size() ? rpo_index_[b] : -1;
      if (r < 0) return fault(ctx, FaultKind::Unsupported, 0, uint32_t(l));  // corrupt frame
      if (best < 0 || r < best) best = r, best_block = b;
    }
    if (best < 0) {
      ctx.status = RunStatus::Done;
      return RunStatus::Done;
    }
    uint32_t active = 0;
    for (int l = 0; l < kWarpLanes; ++l)
      if (w.hdr->state[l] == kLaneRunning && w.hdr->block[l] == best_block) active |= 1u << l;
    if (!run_block(w, best_block, active)) return ctx.status;
  }
}

bool Interpreter::run_block(Warp& w, BlockId b, uint32_t active) const {
  const Block& bl = f_.blocks[b];
  size_t i = 0;
  // Phis read their operands as a parallel copy: all reads before any write.
  std::vector<std::pair<ValueId, std::vector<uint64_t>>> phi_vals;
  for (; i < bl.insts.size() && f_.insts[bl.insts[i]].op == Opcode::Phi; ++i) {
    ValueId v = bl.insts[i];
    const Inst& in = f_.insts[v];
    std::vector<uint64_t> vals(kWarpLanes, 0);
    for (int l = 0; l < kWarpLanes; ++l) {
      if (!(active >> l & 1)) continue;
      BlockId p = w.hdr->prev_block[l];
      for (size_t k = 0; k < preds_[b].size() && k < in.args.size(); ++k)
        if (preds_[b][k] == p) {
          vals[l] = w.lanes(in.args[k])[l];
          break;
        }
    }
    phi_vals.push_back({v, std::move(vals)});
  }
  for (auto& [v, vals] : phi_vals)
    for (int l = 0; l < kWarpLanes; ++l)
      if (active >> l & 1) w.lanes(v)[l] = vals[l];
  for (; i < bl.insts.size(); ++i) {
    ValueId v = bl.insts[i];
    const Inst& in = f_.insts[v];
    if (!op_info(in.op).terminator) {
      if (!exec(w, v, active)) return false;
      continue;
    }
    auto go = [&](int l, size_t succ) {
      if (succ < bl.succs.size()) {
        w.hdr->prev_block[l] = b;
        w.hdr->block[l] = bl.succs[succ];
        return true;
      }
      return false;
    };
    for (int l = 0; l < kWarpLanes; ++l) {
      if (!(active >> l & 1)) continue;
      bool ok = true;
      switch (in.op) {
        case Opcode::Br: case Opcode::Barrier: ok = go(l, 0); break;
        case Opcode::CondBr: ok = go(l, (w.lanes(in.args[0])[l] & 1) ? 0 : 1); break;
        case Opcode::Switch: {
          uint64_t sel = w.lanes(in.args[0])[l] & 0xffffffffu;
          size_t n = bl.succs.size();
          ok = n > 0 && go(l, sel < n - 1 ? size_t(sel) : n - 1);
          break;
        }
        case Opcode::Return: w.hdr->state[l] = kLaneReturned; break;
        default:  // unreachable reached
          fault(w.ctx, FaultKind::Unsupported, v, uint32_t(l));
          return false;
      }
      if (!ok) {
        fault(w.ctx, FaultKind::Unsupported, v, uint32_t(l));
        return false;
      }
    }
    if (in.op == Opcode::Barrier) {
      w.ctx.resume = 1;
      w.ctx.status = RunStatus::Barrier;
      return false;
    }
    return true;
  }
  // A block without a terminator (unverified function).
  fault(w.ctx, FaultKind::Unsupported, bl.insts.empty() ? 0 : bl.insts.back(), 0);
  return false;
}

bool Interpreter::exec(Warp& w, ValueId v, uint32_t active) const {
  const Inst& in = f_.insts[v];
  WarpContext& ctx = w.ctx;
  uint64_t* out = w.lanes(v);
  // Ops without side effects compute every lane, active or not, as a SIMD
  // backend does: a uniform value is then the same in all 32 lanes.
  auto each = [&](auto fn) {
    for (int l = 0; l < kWarpLanes; ++l) fn(l);
  };
  switch (in.op) {
    case Opcode::Phi:  // phi after a non-phi: the verifier rejects this
      return fault(ctx, FaultKind::Unsupported, v), false;
    case Opcode::GetVar: case Opcode::SetVar: case Opcode::LoadVar: case Opcode::StoreVar: {
      if (in.imm >= f_.vars.size()) return fault(ctx, FaultKind::Unsupported, v), false;
      Type vt = f_.vars[in.imm].type;
      unsigned lb = lane_bytes(vt);
      uint8_t* slot = ctx.vars + var_offsets_[in.imm];
      uint32_t lanes = in.op == Opcode::SetVar ? active : ~0u;
      bool read = in.op == Opcode::GetVar || in.op == Opcode::LoadVar;
      for (int l = 0; l < kWarpLanes; ++l) {
        if (!(lanes >> l & 1)) continue;
        uint8_t* p = slot + size_t(l) * lb;
        if (read) {
          uint64_t x = 0;
          std::memcpy(&x, p, lb);
          out[l] = x & type_mask(vt);
        } else {
          uint64_t x = w.lanes(in.args[0])[l] & type_mask(vt);
          std::memcpy(p, &x, lb);
        }
      }
      return true;
    }
    case Opcode::LoadUniform: {
      unsigned n = access_bytes(in.type);
      if (!ctx.uniforms || in.imm > f_.uniform_bytes || f_.uniform_bytes - in.imm < n)
        return fault(ctx, FaultKind::OutOfBounds, v, 0, in.imm, uint32_t(Space::Const)), false;
      uint64_t x = 0;
      std::memcpy(&x, ctx.uniforms + in.imm, n);
      x = in.type == Type::I1 ? (x != 0) : x & type_mask(in.type);
      each([&](int l) { out[l] = x; });
      return true;
    }
    case Opcode::LoadUniformIdx: {
      // Never faults: a lane whose 4 bytes leave the block (or with no
      // block at all) reads 0.
      const uint64_t* off = w.lanes(in.args[0]);
      each([&](int l) {
        uint64_t at = in.imm + (off[l] & 0xffffffffu);
        uint32_t x = 0;
        if (ctx.uniforms && at + 4 <= f_.uniform_bytes) std::memcpy(&x, ctx.uniforms + at, 4);
        out[l] = x;
      });
      return true;
    }
    case Opcode::EntryMask: each([&](int l) { out[l] = ctx.entry_mask >> l & 1; }); return true;
    case Opcode::LaneId: each([&](int l) { out[l] = uint64_t(l); }); return true;
    case Opcode::Budget:
      ctx.budget -= int64_t(in.imm);
      if (ctx.budget < 0) return fault(ctx, FaultKind::Watchdog, v), false;
      return true;
    case Opcode::Trap: {
      const uint64_t* m = w.lanes(in.args[0]);
      for (int l = 0; l < kWarpLanes; ++l)
        if ((active >> l & 1) && (m[l] & 1)) return fault(ctx, FaultKind::Trap, in.imm, uint32_t(l)), false;
      return true;
    }
    case Opcode::Load: case Opcode::Store: case Opcode::AtomicRmw: case Opcode::AtomicCas:
      return exec_memory(w, v, active);
    default: break;
  }
  if (op_info(in.op).cross_lane) {
    if (op_info(in.op).clustered && !valid_cluster_imm(in.imm)) return fault(ctx, FaultKind::Unsupported, v), false;
    exec_cross_lane(w, v, active);
    return true;
  }
  if (!supported_[v]) return fault(ctx, FaultKind::Unsupported, v), false;
  const LaneOp& op = lane_ops_[v];
  size_t n = in.args.size() < 4 ? in.args.size() : 4;
  const uint64_t* argp[4] = {nullptr, nullptr, nullptr, nullptr};
  for (size_t k = 0; k < n; ++k) argp[k] = w.lanes(in.args[k]);
  for (int l = 0; l < kWarpLanes; ++l) {
    uint64_t a[4] = {0, 0, 0, 0};
    for (size_t k = 0; k < n; ++k) a[k] = argp[k][l];
    out[l] = eval_lane_unchecked(op, a);
  }
  return true;
}

bool Interpreter::exec_memory(Warp& w, ValueId v, uint32_t active) const {
  const Inst& in = f_.insts[v];
  WarpContext& ctx = w.ctx;
  Space space;
  Type t;
  switch (in.op) {
    case Opcode::Load: space = mem_space(in.attr); t = in.type; break;
    case Opcode::Store: space = mem_space(in.attr); t = f_.insts[in.args[1]].type; break;
    default: space = Space(in.imm); t = in.type; break;
  }
  bool is_atomic = in.op == Opcode::AtomicRmw || in.op == Opcode::AtomicCas;
  bool bad_attr = is_atomic ? (in.imm >= uint64_t(kNumSpaces) || (in.op == Opcode::AtomicRmw && in.attr > 11))
                            : ((in.attr & 15) >= kNumSpaces || (in.attr >> 4) > 2);
  if (bad_attr || t == Type::Void) return fault(ctx, FaultKind::Unsupported, v), false;
  unsigned bytes = access_bytes(t);
  const uint64_t* addr = w.lanes(in.args[0]);
  const uint64_t* mask = w.lanes(in.args.back());
  uint64_t addr_mask = type_mask(f_.insts[in.args[0]].type);
  uint64_t* out = w.lanes(v);
  for (int l = 0; l < kWarpLanes; ++l) {
    if (!(active >> l & 1) || !(mask[l] & 1)) continue;
    uint64_t a = addr[l] & addr_mask;
    uint64_t value = 0;
    bool ok = ctx.memory != nullptr;
    if (ok) {
      switch (in.op) {
        case Opcode::Load:
          ok = ctx.memory->access(GuestMemory::Kind::Load, space, a, bytes, &value);
          if (ok) out[l] = t == Type::I1 ? (value != 0) : value & type_mask(t);
          break;
        case Opcode::Store:
          value = w.lanes(in.args[1])[l] & type_mask(t);
          ok = ctx.memory->access(GuestMemory::Kind::Store, space, a, bytes, &value);
          break;
        case Opcode::AtomicRmw:
          value = w.lanes(in.args[1])[l] & type_mask(t);
          ok = ctx.memory->access(GuestMemory::Kind::Atomic, space, a, bytes, &value, AtomicOp(in.attr));
          if (ok) out[l] = value & type_mask(t);
          break;
        default: {
          uint64_t cmp = w.lanes(in.args[1])[l] & type_mask(t);
          value = w.lanes(in.args[2])[l] & type_mask(t);
          ok = ctx.memory->access(GuestMemory::Kind::AtomicCas, space, a, bytes, &value, AtomicOp::Exch, &cmp);
          if (ok) out[l] = value & type_mask(t);
          break;
        }
      }
    }
    if (!ok) return fault(ctx, FaultKind::OutOfBounds, v, uint32_t(l), a, uint32_t(space)), false;
  }
  return true;
}

// Identity and combining op of each ReduceOp (FMin/FMax combine as NumberWins).
struct ReduceDef {
  LaneOp op;
  uint64_t identity;
};
ReduceDef reduce_def(ReduceOp r, Type t, uint32_t fflags) {
  uint64_t m = type_mask(t);
  uint64_t sign = bit_width(t) ? 1ull << (bit_width(t) - 1) : 0;
  uint64_t inf = t == Type::F16 ? 0x7c00 : t == Type::F32 ? 0x7f800000u : 0x7ff0000000000000ull;
  auto mk = [&](Opcode op, uint8_t attr) { return LaneOp{op, t, t, attr, fflags, 0}; };
  switch (r) {
    case ReduceOp::Add: return {mk(Opcode::IAdd, 0), 0};
    case ReduceOp::SMin: return {mk(Opcode::IMin, uint8_t(Sign::Signed)), (m >> 1)};
    case ReduceOp::SMax: return {mk(Opcode::IMax, uint8_t(Sign::Signed)), sign};
    case ReduceOp::UMin: return {mk(Opcode::IMin, uint8_t(Sign::Unsigned)), m};
    case ReduceOp::UMax: return {mk(Opcode::IMax, uint8_t(Sign::Unsigned)), 0};
    case ReduceOp::And: return {mk(Opcode::And, 0), m};
    case ReduceOp::Or: return {mk(Opcode::Or, 0), 0};
    case ReduceOp::Xor: return {mk(Opcode::Xor, 0), 0};
    case ReduceOp::FAdd: return {mk(Opcode::FAdd, 0), sign};  // -0.0: -0 + x == x for every x
    case ReduceOp::FMin: return {mk(Opcode::FMin, uint8_t(MinMaxNan::NumberWins)), inf};
    case ReduceOp::FMax: return {mk(Opcode::FMax, uint8_t(MinMaxNan::NumberWins)), inf | sign};
  }
  return {mk(Opcode::Undef, 0), 0};
}

uint64_t Interpreter::reduce_lanes(Warp& w, ValueId v, uint32_t lanes) const {
  const Inst& in = f_.insts[v];
  ReduceDef d = reduce_def(ReduceOp(in.attr), in.type, in.fflags);
  const uint64_t* src = w.lanes(in.args[0]);
  uint64_t acc = d.identity;
  for (int l = 0; l < kWarpLanes; ++l) {
    if (!(lanes >> l & 1)) continue;
    uint64_t a[2] = {acc, src[l]};
    acc = eval_lane(d.op, a);
  }
  return acc;
}

// Clustered ops (docs/ir.md "Clusters") work on each aligned group of
// W lanes on its own: lane sets are cut to the cluster, indexes wrap in it.
void Interpreter::exec_cross_lane(Warp& w, ValueId v, uint32_t active) const {
  const Inst& in = f_.insts[v];
  uint64_t* out = w.lanes(v);
  const uint64_t* a = w.lanes(in.args[0]);
  const uint64_t* b = in.args.size() > 1 ? w.lanes(in.args[1]) : a;
  uint64_t tm = type_mask(in.type);
  const unsigned width = op_info(in.op).clustered ? cluster_width(in.imm) : unsigned(kWarpLanes);
  const uint32_t cluster_bits = width == 32 ? ~0u : (1u << width) - 1;  // the lanes of cluster 0
  uint64_t res[kWarpLanes] = {};
  uint32_t masked = 0;  // lanes of the mask operand that are active
  for (int l = 0; l < kWarpLanes; ++l)
    if ((active >> l & 1) && (b[l] & 1)) masked |= 1u << l;
  for (unsigned c = 0; c < unsigned(kWarpLanes); c += width) {  // c: the cluster's first lane
    const uint32_t lanes = cluster_bits << c;
    switch (in.op) {
      case Opcode::Ballot: case Opcode::Any: case Opcode::All: {
        uint32_t bits = 0;
        for (unsigned l = c; l < c + width; ++l)
          if ((masked >> l & 1) && (a[l] & 1)) bits |= 1u << l;
        // Ballot: the cluster's bits moved down to bit 0.
        uint64_t r = in.op == Opcode::Ballot ? bits >> c : in.op == Opcode::Any ? (bits != 0) : (bits == (masked & lanes));
        for (unsigned l = c; l < c + width; ++l) res[l] = r;
        break;
      }
      case Opcode::Shuffle:
        for (unsigned l = c; l < c + width; ++l) res[l] = a[c | (b[l] & (width - 1))];
        break;
      case Opcode::Broadcast: {
        // The index is uniform in the cluster: its first active lane's is used
        // (the cluster's first lane when none is active).
        uint32_t act = active & lanes;
        uint64_t x = a[c | (b[act ? unsigned(__builtin_ctz(act)) : c] & (width - 1))];
        for (unsigned l = c; l < c + width; ++l) res[l] = x;
        break;
      }
      case Opcode::QuadShuffle:
        for (unsigned l = c; l < c + width; ++l) res[l] = a[(l & ~3u) | unsigned(b[l] & 3)];
        break;
      case Opcode::Reduce: {
        uint64_t x = reduce_lanes(w, v, masked & lanes);
        for (unsigned l = c; l < c + width; ++l) res[l] = x;
        break;
      }
      case Opcode::ScanIncl: case Opcode::ScanExcl:
        for (unsigned l = c; l < c + width; ++l) {
          uint32_t upto = in.op == Opcode::ScanIncl ? (l == 31 ? ~0u : (2u << l) - 1) : (1u << l) - 1;
          res[l] = reduce_lanes(w, v, masked & lanes & upto);
        }
        break;
      default: break;
    }
  }
  // A launched lane that is inactive here keeps the value it computed when it
  // last ran this op: unlike a pure op, a cross-lane op does not give such a
  // lane back its own value when recomputed for other lanes (a reduce over
  // another set of lanes), and the lowered function keeps it too (demoted
  // values are written under the region's mask). Found by the IR fuzzer with
  // clustered reductions in a loop whose lanes leave it at different
  // iterations (tests/regressions/ir-cross-lane-result-kept-by-inactive-lanes.json).
  // Lanes that were never launched get the result as before, so a warp-uniform
  // result (any/all/ballot/reduce over 32 lanes) is the same in all 32 lanes.
  const uint32_t written = active | ~w.ctx.entry_mask;
  for (int l = 0; l < kWarpLanes; ++l)
    if (written >> l & 1) out[l] = res[l] & tm;
}

}  // namespace

std::unique_ptr<Executable> make_ir_interpreter(const Function& f) { return std::make_unique<Interpreter>(f); }

}  // namespace gpurc::ir
