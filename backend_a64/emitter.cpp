#include "backend_a64/emitter.h"

#include <algorithm>
#include <array>
#include <cstddef>

#include "ir/abi.h"

namespace gpurc::a64 {

using namespace ir;
using namespace asmjit;
using namespace asmjit::a64;

namespace {
constexpr int kWarpLaneBytes4 = kWarpLanes * 4;  // one 4-byte-per-lane array
constexpr int kFrameSave = 176;                  // x29, x30, x19..x28, saved FPCR, d8..d15 (16-byte multiple)
constexpr int kFpcrSave = 96;
constexpr int kD8Save = 112;                     // d8..d15: the cache uses v8..v15, whose low halves are callee-saved
// Const keys of the register cache: kind in the top bits of the first half.
constexpr int kConst32 = 0, kConst64 = 1, kConstIota = 2, kConstLaunchMask = 3;
bool is_cache_reg(uint32_t p) { return p < 16 || (p >= 24 && p < 32); }
bool is_vector_store(asmjit::InstId id) {
  using I = asmjit::a64::Inst;
  return id == I::kIdStr_v || id == I::kIdStp_v || id == I::kIdStur_v || id == I::kIdStnp_v || id == I::kIdSt1_v ||
         id == I::kIdSt2_v || id == I::kIdSt3_v || id == I::kIdSt4_v;
}
#define CTX(field) uint32_t(offsetof(WarpContext, field))
}  // namespace

Emitter::Emitter(const Function& f, RegAssembler& a) : a_(a), f_(f) {
  a_.cache = this;
  vals_.assign(f.insts.size(), ValState{});
  for (int& m : map_) m = -1;
  plan_ = backend::make_plan(f);
  slot_.assign(f.insts.size(), -1);
  stage_slot_.assign(f.insts.size(), -1);
  for (size_t b = 0; b < f.blocks.size(); ++b) block_label_.push_back(a_.newLabel());
  iota_ = a_.newLabel();
  epilogue_ = a_.newLabel();
  for (const ir::Inst& in : f.insts)
    if (in.op == Opcode::Phi && in.block != kNoBlock) has_phis_ = true;
  if (has_phis_) frame_bytes_ = kLaunchMaskBytes;  // launch masks at frame offset 0
  uses_.assign(f.insts.size(), 0);
  for (const ir::Inst& in : f.insts)
    if (in.block != kNoBlock)
      for (ValueId a : in.args)
        if (a < uses_.size()) ++uses_[a];
}

// ---------------------------------------------------------------- frame

uint32_t Emitter::slot(ValueId v) {
  if (slot_[v] < 0) {
    slot_[v] = frame_bytes_;
    frame_bytes_ += (lane_bytes(f_.insts[v].type) * kWarpLanes + 63) & ~63u;
  }
  return uint32_t(slot_[v]);
}

uint32_t Emitter::stage_slot(ValueId phi) {
  if (stage_slot_[phi] < 0) {
    stage_slot_[phi] = frame_bytes_;
    frame_bytes_ += (lane_bytes(f_.insts[phi].type) * kWarpLanes + 63) & ~63u;
  }
  return uint32_t(stage_slot_[phi]);
}

void Emitter::mov_imm(const a64::Gp& r, uint64_t bits) {
  bool x = r.isGpX();
  a_.movz(r, uint32_t(bits & 0xffff));
  for (unsigned sh = 16; sh < (x ? 64u : 32u); sh += 16)
    if ((bits >> sh) & 0xffff) a_.movk(r, uint32_t((bits >> sh) & 0xffff), lsl(sh));
}

a64::Mem Emitter::at(const a64::Gp& base, uint64_t off, unsigned size, int tmp) {
  if (off % size == 0 && off / size < 4096) return a64::ptr(base.x(), int32_t(off));
  GpX t = x(uint32_t(tmp));
  mov_imm(t, off);
  a_.add(t, base.x(), t);
  return a64::ptr(t);
}

// ---------------------------------------------------------------- register cache
//
// Within a strip segment a 32-bit value lives in a q register from its
// definition to its last read in the segment (or until the LRU victim choice
// spills it); values read outside the segment are also stored to their slot
// when defined. Constants (splats, iota, the launch mask) are cached the same
// way. A lowering names logical registers: an operand's is the register that
// caches it, so reading it costs nothing; a lowering that writes such a
// register in place gets, through RegAssembler, either the register itself
// (the value dies here or is in the frame: it is forgotten) or a copy. The
// result register becomes the value's home without a move.

asmjit::Error RegAssembler::_emit(InstId id, const Operand_& o0, const Operand_& o1, const Operand_& o2,
                                  const Operand_* ext) {
  if (cache && cache->in_op_ && BaseReg::isVec(o0) && !is_vector_store(id)) {
    const uint32_t p = o0.id();
    const int np = cache->on_write(p);
    if (np != int(p)) {
      auto fix = [&](const Operand_& o) {
        Operand_ c = o;
        if (BaseReg::isVec(c) && c.id() == p) c.as<BaseReg>().setId(uint32_t(np));
        return c;
      };
      Operand_ e[Globals::kMaxOpCount - 3];
      if (ext)
        for (size_t i = 0; i < std::size(e); ++i) e[i] = fix(ext[i]);
      return a64::Assembler::_emit(id, fix(o0), fix(o1), fix(o2), ext ? e : nullptr);
    }
  }
  return a64::Assembler::_emit(id, o0, o1, o2, ext);
}

int Emitter::aliases(int p) const {
  int n = 0;
  for (int m : map_) n += m == p;
  return n;
}

bool Emitter::dies_here(ValueId a) const {
  return plan_.segment_of[a] == cur_segment_ && plan_.last_use[a] == plan_.position[cur_];
}

void Emitter::free_reg(int p) {
  RegState& r = regs_[p];
  if (r.owner == Owner::Value && vals_[r.v].reg == p) vals_[r.v].reg = -1;
  if (r.owner == Owner::Const) const_reg_.erase(r.key);
  r = RegState{};
}

void Emitter::spill(int p) {
  RegState& r = regs_[p];
  if (r.owner == Owner::Value && !framed(r.v)) {
    a_.str(Q(p), at(x25, slot(r.v), 16, 17));
    vals_[r.v].in_frame = true;
  }
  free_reg(p);
}

int Emitter::alloc_reg() {
  int victim = -1;
  for (int p = 0; p < 32; ++p) {
    if (!is_cache_reg(uint32_t(p)) || regs_[p].locked) continue;
    if (regs_[p].owner == Owner::Free) {
      victim = p;
      break;
    }
    // Constants before values: they cost one load to get back and no store.
    auto cost = [&](int q) { return uint64_t(regs_[q].owner == Owner::Const ? 0 : 1) << 32 | regs_[q].stamp; };
    if (victim < 0 || cost(p) < cost(victim)) victim = p;
  }
  if (victim < 0) throw CompileError("a64 jit: out of vector registers (too many locked by one op)");
  spill(victim);
  regs_[victim].owner = Owner::Temp;
  regs_[victim].locked = true;
  regs_[victim].stamp = ++clock_;
  return victim;
}

void Emitter::map_logical(int r, int p) {
  const int old = map_[r];
  map_[r] = p;
  regs_[p].locked = true;
  regs_[p].stamp = ++clock_;
  if (old >= 0 && old != p && regs_[old].owner == Owner::Temp && aliases(old) == 0) free_reg(old);
}

int Emitter::phys(int r) {
  if (r >= kLogical) return r;  // v16..v23: the f64 sequences' own scratch
  if (!in_op_) throw CompileError("a64 jit: internal: logical register outside an op");
  if (map_[r] < 0) map_[r] = alloc_reg();
  return map_[r];
}

a64::VecV Emitter::L(int r) { return Q(phys(r)); }

int Emitter::on_write(uint32_t p) {
  if (!is_cache_reg(p)) return int(p);
  RegState& st = regs_[p];
  if (st.owner == Owner::Temp || st.owner == Owner::Free) return int(p);
  int logical = -1;
  for (int i = 0; i < kLogical; ++i)
    if (map_[i] == int(p)) logical = i;
  if (logical < 0) throw CompileError("a64 jit: internal: write to a cached register no operand names");
  if (st.owner == Owner::Const) {  // the constant is reloaded when needed again
    const_reg_.erase(st.key);
    st.owner = Owner::Temp;
    return int(p);
  }
  const ValueId a = st.v;
  if (!no_clobber_ && (framed(a) || dies_here(a))) {
    vals_[a].reg = -1;
    if (!framed(a)) vals_[a].clobbered = true;
    st.owner = Owner::Temp;
    st.v = kNoValue;
    return int(p);
  }
  const int np = alloc_reg();
  a_.mov(Q(np).b16(), Q(p).b16());
  map_[logical] = np;
  return np;
}

void Emitter::reset_cache() {
  for (int p = 0; p < 32; ++p) {
    if (regs_[p].owner == Owner::Value && vals_[regs_[p].v].reg == p) vals_[regs_[p].v].reg = -1;
    regs_[p] = RegState{};
  }
  const_reg_.clear();
  for (int& m : map_) m = -1;
}

void Emitter::begin_op(ValueId v) {
  in_op_ = true;
  cur_ = v;
  no_clobber_ = false;
  for (int& m : map_) m = -1;
}

void Emitter::close_op() {
  for (int p = 0; p < 32; ++p) {
    regs_[p].locked = false;
    if (regs_[p].owner == Owner::Temp) regs_[p] = RegState{};
  }
  for (int& m : map_) m = -1;
  in_op_ = false;
}

void Emitter::ensure_in_frame(ValueId v) {
  if (vals_[v].reg >= 0 && !framed(v)) {
    a_.str(Q(vals_[v].reg), at(x25, slot(v), 16, 17));
    vals_[v].in_frame = true;
  }
}

void Emitter::spill_live_for_call(ValueId at_op) {
  const int32_t pos = plan_.position[at_op];
  for (int p = 0; p < 32; ++p) {
    if (regs_[p].owner != Owner::Value) continue;
    const ValueId u = regs_[p].v;
    if (plan_.escapes[u] || plan_.segment_of[u] != cur_segment_ || plan_.last_use[u] >= pos) ensure_in_frame(u);
  }
  reset_cache();
}

// A strip's lanes of value v in logical register r: the register that caches
// it (loaded when absent). 64-bit values are not cached: half h is loaded
// into a temporary.
void Emitter::vload(int r, ValueId v, int half) {
  if (r >= kLogical) throw CompileError("a64 jit: internal: vload into a fixed register");
  if (wide(v)) {
    int p = map_[r];
    if (p < 0 || regs_[p].owner != Owner::Temp || aliases(p) != 1) {
      p = alloc_reg();
      map_logical(r, p);
    }
    a_.ldr(Q(p), at(x26, slot(v) + 16u * unsigned(half), 16, 17));
    return;
  }
  ValState& s = vals_[v];
  if (s.reg >= 0) {
    const int p = s.reg;
    if (map_[r] == p) return;
    if (aliases(p) == 0) {
      map_logical(r, p);
      return;
    }
    // Another logical register of this op names it: r gets a copy, so a write
    // through either changes only its own.
    const int np = alloc_reg();
    map_logical(r, np);
    a_.mov(Q(np).b16(), Q(p).b16());
    return;
  }
  if (!framed(v))
    throw CompileError("a64 jit: internal: %" + std::to_string(v) + " read after its register was overwritten");
  const int p = alloc_reg();
  map_logical(r, p);
  a_.ldr(Q(p), at(x25, slot(v), 16, 17));
  regs_[p].owner = Owner::Value;
  regs_[p].v = v;
  s.reg = int8_t(p);
}

// Value v's lanes are in logical register r: that register becomes its home
// (64-bit values: half h is stored to the slot).
void Emitter::vstore(ValueId v, int r, int half) {
  if (wide(v)) {
    a_.str(L(r), at(x26, slot(v) + 16u * unsigned(half), 16, 17));
    vals_[v].in_frame = true;
    return;
  }
  int p = phys(r);
  RegState& st = regs_[p];
  if (st.owner == Owner::Value && st.v != v) {
    const ValueId a = st.v;
    if (!no_clobber_ && (framed(a) || dies_here(a))) {
      vals_[a].reg = -1;
      if (!framed(a)) vals_[a].clobbered = true;
    } else {  // a is still needed from its register: v gets a copy
      const int np = alloc_reg();
      a_.mov(Q(np).b16(), Q(p).b16());
      map_logical(r, np);
      p = np;
    }
  } else if (st.owner == Owner::Const) {
    const_reg_.erase(st.key);
  }
  if (vals_[v].reg >= 0 && vals_[v].reg != p) free_reg(vals_[v].reg);
  regs_[p].owner = Owner::Value;
  regs_[p].v = v;
  regs_[p].key = 0;
  vals_[v].reg = int8_t(p);
  vals_[v].in_frame = false;
}

void Emitter::vconst_key(int r, uint64_t key) {
  const int kind = int(key >> 62);
  const uint64_t bits = key & ~(uint64_t(3) << 62);
  auto load = [&](int p) {
    if (kind == kConstIota) {
      iota_used_ = true;
      a_.ldr(Q(uint32_t(p)), a64::ptr(iota_));
    } else if (kind == kConstLaunchMask) {
      a_.ldr(Q(uint32_t(p)), ptr(x25));  // the 4-byte launch mask is at frame offset 0
    } else if (bits == 0) {
      a_.movi(Q(p).b16(), 0);
    } else if (kind == kConst32) {
      auto it = const32_.find(uint32_t(bits));
      if (it == const32_.end()) it = const32_.emplace(uint32_t(bits), a_.newLabel()).first;
      a_.ldr(Q(uint32_t(p)), a64::ptr(it->second));
    } else {
      auto it = const64_.find(bits);
      if (it == const64_.end()) it = const64_.emplace(bits, a_.newLabel()).first;
      a_.ldr(Q(uint32_t(p)), a64::ptr(it->second));
    }
  };
  if (r >= kLogical || !in_op_) {  // a fixed register (f64 sequences, warp ops): not cached
    load(r);
    return;
  }
  if (auto it = const_reg_.find(key); it != const_reg_.end()) {
    const int p = it->second;
    if (map_[r] == p) return;
    if (aliases(p) == 0) {
      map_logical(r, p);
      return;
    }
  }
  const int p = alloc_reg();
  map_logical(r, p);
  load(p);
  if (!const_reg_.count(key)) {
    regs_[p].owner = Owner::Const;
    regs_[p].key = key;
    const_reg_[key] = p;
  }
}

void Emitter::vconst(int r, uint32_t bits) { vconst_key(r, uint64_t(kConst32) << 62 | bits); }

void Emitter::vconst64(int r, uint64_t bits) {
  if (uint32_t(bits) == uint32_t(bits >> 32)) {
    vconst(r, uint32_t(bits));
    return;
  }
  // Patterns with either of the top two bits set are not cached (the key's
  // kind lives there).
  if (bits >> 62) {
    int p = r >= kLogical || !in_op_ ? r : phys(r);
    if (r < kLogical && in_op_ && regs_[p].owner != Owner::Temp) {
      p = alloc_reg();
      map_logical(r, p);
    }
    auto it = const64_.find(bits);
    if (it == const64_.end()) it = const64_.emplace(bits, a_.newLabel()).first;
    a_.ldr(Q(uint32_t(p)), a64::ptr(it->second));
    return;
  }
  vconst_key(r, uint64_t(kConst64) << 62 | bits);
}

void Emitter::mask_to_width(int r, ir::Type t) {
  unsigned w = bit_width(t);
  if (w >= 32) return;
  vconst(7, uint32_t(type_mask(t)));
  a_.and_(L(r).b16(), L(r).b16(), L(7).b16());
}

void Emitter::sext_to32(int d, int s, ir::Type t) {
  unsigned w = bit_width(t);
  if (w >= 32) {
    if (d != s) a_.mov(L(d).b16(), L(s).b16());
    return;
  }
  a_.shl(L(d).s4(), L(s).s4(), 32 - w);
  a_.sshr(L(d).s4(), L(d).s4(), 32 - w);
}

void Emitter::bool_from_mask(int r) { a_.ushr(L(r).s4(), L(r).s4(), 31); }

void Emitter::canonicalize_nan(int r, uint32_t nan_bits) {
  a_.fcmeq(L(5).s4(), L(r).s4(), L(r).s4());  // all ones where not NaN
  vconst(6, nan_bits);
  a_.bif(L(r).b16(), L(6).b16(), L(5).b16());
}

void Emitter::flush_subnormal(int r) {
  // r & (sign | (exponent != 0 ? all ones : 0)), computed into logical 5,
  // which r then names (a cached operand's register is left as it is).
  vconst(6, 0x7F800000u);
  a_.cmtst(L(5).s4(), L(r).s4(), L(6).s4());  // all ones where the exponent is not 0
  vconst(6, 0x80000000u);
  a_.orr(L(5).b16(), L(5).b16(), L(6).b16());
  a_.and_(L(5).b16(), L(r).b16(), L(5).b16());
  rebind(r, 5);
}

void Emitter::rebind(int r, int from) {
  const int p = phys(from);
  map_[from] = -1;
  map_logical(r, p);
}

void Emitter::saturate(int r) {
  // After canonicalize_nan every NaN is quiet: FMAXNM gives +0 for it, and
  // +0 for -0 (it orders -0 below +0).
  vconst(5, 0);
  a_.fmaxnm(L(r).s4(), L(r).s4(), L(5).s4());
  vconst(5, 0x3F800000u);
  a_.fminnm(L(r).s4(), L(r).s4(), L(5).s4());
}

// ---------------------------------------------------------------- structure

void Emitter::call_abs(const void* fn) {
  mov_imm(x16, reinterpret_cast<uint64_t>(fn));
  a_.blr(x16);
}

void Emitter::emit_fault_return(FaultKind kind, uint64_t code, uint64_t addr, uint32_t space, int lane) {
  mov_imm(w9, uint32_t(kind));
  a_.str(w9, at(x19, CTX(fault), 4));
  mov_imm(x9, code);
  a_.str(x9, at(x19, CTX(fault_code), 8));
  mov_imm(x9, addr);
  a_.str(x9, at(x19, CTX(fault_addr), 8));
  mov_imm(w9, space);
  a_.str(w9, at(x19, CTX(fault_space), 4));
  if (lane < 0) a_.lsr(w9, w24, 2);
  else mov_imm(w9, uint32_t(lane));
  a_.str(w9, at(x19, CTX(fault_lane), 4));
  a_.str(wzr, at(x19, CTX(resume), 4));
  mov_imm(w0, uint32_t(RunStatus::Fault));
  a_.b(epilogue_);
}

void Emitter::emit_prologue() {
  a_.stp(x29, x30, ptr_pre(sp, -kFrameSave));
  a_.mov(x29, sp);
  a_.stp(x19, x20, ptr(sp, 16));
  a_.stp(x21, x22, ptr(sp, 32));
  a_.stp(x23, x24, ptr(sp, 48));
  a_.stp(x25, x26, ptr(sp, 64));
  a_.stp(x27, x28, ptr(sp, 80));
  a_.stp(d8, d9, ptr(sp, kD8Save));
  a_.stp(d10, d11, ptr(sp, kD8Save + 16));
  a_.stp(d12, d13, ptr(sp, kD8Save + 32));
  a_.stp(d14, d15, ptr(sp, kD8Save + 48));
  // Native float code assumes IEEE defaults: round to nearest, no flush to
  // zero, no default-NaN mode. Install them for the run (the helpers run
  // under them too); the caller's FPCR is restored at exit.
  a_.mrs(x9, Imm(Predicate::SysReg::kFPCR));
  a_.str(x9, ptr(sp, kFpcrSave));
  a_.msr(Imm(Predicate::SysReg::kFPCR), xzr);
  a_.mov(x19, x0);
  a_.ldr(x20, at(x19, CTX(frame), 8));
  a_.ldr(x21, at(x19, CTX(vars), 8));
  a_.ldr(x22, at(x19, CTX(uniforms), 8));
  a_.str(wzr, at(x19, CTX(fault), 4));
  // A warp without launched lanes has nothing to run (as the interpreter).
  Label run = a_.newLabel();
  a_.ldr(w9, at(x19, CTX(entry_mask), 4));
  a_.cbnz(w9, run);
  mov_imm(w0, uint32_t(RunStatus::Done));
  a_.b(epilogue_);
  a_.bind(run);
  // Branch conditions are uniform but only launched lanes are guaranteed to
  // hold them (phis zero the others): branches read the first launched lane.
  a_.rbit(w10, w9);
  a_.clz(w10, w10);
  a_.lsl(w24, w10, 2);
  if (has_phis_) {
    // Per-lane all-ones / zero masks of the launched lanes (32 x 4 and 32 x 8
    // bytes): phi copies keep lanes that were not launched at 0.
    // Lane i of strip j: CMTST of entry_mask with bit 4j + i; the 8-byte
    // masks are the 4-byte ones sign-extended.
    a_.dup(Q(0).s4(), w9);
    a_.movi(Q(1).s4(), 1);
    viota(2);
    a_.ushl(Q(1).s4(), Q(1).s4(), Q(2).s4());  // 1, 2, 4, 8
    for (int j = 0; j < kWarpLanes / 4; j += 2) {
      a_.shl(Q(5).s4(), Q(1).s4(), 4);
      a_.cmtst(Q(2).s4(), Q(0).s4(), Q(1).s4());
      a_.cmtst(Q(6).s4(), Q(0).s4(), Q(5).s4());
      a_.stp(Q(2), Q(6), ptr(x20, 16 * j));
      a_.sshll(Q(3).d2(), Q(2).s2(), 0);
      a_.sshll2(Q(4).d2(), Q(2).s4(), 0);
      a_.stp(Q(3), Q(4), ptr(x20, kWarpLanes * 4 + 32 * j));
      a_.sshll(Q(3).d2(), Q(6).s2(), 0);
      a_.sshll2(Q(4).d2(), Q(6).s4(), 0);
      a_.stp(Q(3), Q(4), ptr(x20, kWarpLanes * 4 + 32 * j + 32));
      if (j + 2 < kWarpLanes / 4) a_.shl(Q(1).s4(), Q(1).s4(), 8);
    }
  }
  // Resume after a barrier: ctx.resume names the block to continue at.
  a_.ldr(w11, at(x19, CTX(resume), 4));
  a_.str(wzr, at(x19, CTX(resume), 4));
  // The caller need not zero the frame: every slot is written for all 32
  // lanes before it is read except load and atomic results, which a fresh
  // run starts at 0 (the interpreter's zeroed frame).
  if (!partial_slots_.empty()) {
    Label resumed = a_.newLabel();
    a_.cbnz(w11, resumed);
    for (int r = 0; r < 4; ++r) a_.movi(Q(r).b16(), 0);
    for (ValueId v : partial_slots_) {
      add_off(x10, x20, slot(v));
      for (unsigned off = 0; off < lane_bytes(f_.insts[v].type) * kWarpLanes; off += 64)
        a_.st1(Q(0).s4(), Q(1).s4(), Q(2).s4(), Q(3).s4(), ptr_post(x10, 64));
    }
    a_.bind(resumed);
  }
  for (BlockId b = 0; b < f_.blocks.size(); ++b) {
    ValueId t = f_.terminator(b);
    if (t == kNoValue || f_.insts[t].op != Opcode::Barrier) continue;
    BlockId to = f_.blocks[b].succs.at(0);
    mov_imm(w12, to);
    a_.cmp(w11, w12);
    Label next = a_.newLabel();  // b.cond reaches +-1 MiB, b +-128 MiB
    a_.b_ne(next);
    a_.b(block_label_[to]);
    a_.bind(next);
  }
  a_.b(block_label_[0]);
}

void Emitter::emit_epilogue() {
  a_.bind(epilogue_);  // w0 holds the status
  a_.str(w0, at(x19, CTX(status), 4));
  a_.ldr(x9, ptr(sp, kFpcrSave));
  a_.msr(Imm(Predicate::SysReg::kFPCR), x9);
  a_.ldp(x19, x20, ptr(sp, 16));
  a_.ldp(x21, x22, ptr(sp, 32));
  a_.ldp(x23, x24, ptr(sp, 48));
  a_.ldp(x25, x26, ptr(sp, 64));
  a_.ldp(x27, x28, ptr(sp, 80));
  a_.ldp(d8, d9, ptr(sp, kD8Save));
  a_.ldp(d10, d11, ptr(sp, kD8Save + 16));
  a_.ldp(d12, d13, ptr(sp, kD8Save + 32));
  a_.ldp(d14, d15, ptr(sp, kD8Save + 48));
  a_.ldp(x29, x30, ptr_post(sp, kFrameSave));
  a_.ret(x30);
}

void Emitter::emit_function() {
  for (const ir::Inst& in : f_.insts)
    if ((in.op == Opcode::Load || in.op == Opcode::AtomicRmw || in.op == Opcode::AtomicCas) && in.block != kNoBlock &&
        in.type != ir::Type::Void)
      partial_slots_.push_back(ValueId(&in - f_.insts.data()));
  emit_prologue();
  for (BlockId b = 0; b < f_.blocks.size(); ++b) emit_block(b);
  emit_epilogue();

  flush_pool(false);  // the last island, after the epilogue's ret
}

// Constant pool islands: 16-byte vectors read with `ldr q, label`
// (pc-relative, +-1 MiB). A vconst refers to the next island; one is placed
// (behind a branch over it) at the first op boundary 256 KiB after the
// previous one, so every literal load stays in range however long the
// function is.
void Emitter::flush_pool(bool branch_over) {
  asmjit::Label over;
  if (branch_over) {
    over = a_.newLabel();
    a_.b(over);
  }
  a_.align(AlignMode::kData, 16);
  if (iota_used_) {
    a_.bind(iota_);
    for (uint32_t i = 0; i < 4; ++i) a_.embedUInt32(i);
  }
  for (auto& [bits, label] : const32_) {
    a_.bind(label);
    for (int i = 0; i < 4; ++i) a_.embedUInt32(bits);
  }
  for (auto& [bits, label] : const64_) {
    a_.bind(label);
    for (int i = 0; i < 2; ++i) a_.embedUInt64(bits);
  }
  const32_.clear();
  const64_.clear();
  iota_ = a_.newLabel();
  iota_used_ = false;
  if (branch_over) a_.bind(over);
  island_offset_ = a_.offset();
}

void Emitter::maybe_flush_pool() {
  if (a_.offset() - island_offset_ > kIslandSpacing && (iota_used_ || !const32_.empty() || !const64_.empty()))
    flush_pool(true);
}

void Emitter::viota(int r) { vconst_key(r, uint64_t(kConstIota) << 62); }

void Emitter::emit_block(BlockId b) {
  a_.bind(block_label_[b]);
  if (f_.terminator(b) == kNoValue) throw CompileError("a64 jit: block " + std::to_string(b) + " has no terminator");
  for (uint32_t si : plan_.block_segments[b]) {
    const Segment& s = plan_.segments[si];
    if (s.strip) emit_strip_segment(s);
    else emit_warp_op(s.ops[0]);
    maybe_flush_pool();
  }
  emit_terminator(b);
  maybe_flush_pool();
}

void Emitter::set_strip_bases() {
  a_.add(x25, x20, x23);
  a_.add(x26, x20, x23, lsl(1));
  a_.add(x27, x21, x23);
  a_.add(x28, x21, x23, lsl(1));
}

// The segment's code once, in a loop over the warp's eight strips of four
// lanes (x23 = 0, 16, ..., 112).
void Emitter::emit_strip_segment(const Segment& s) {
  a_.mov(x23, 0);
  Label loop = a_.newLabel();
  a_.bind(loop);
  set_strip_bases();
  const size_t start = a_.offset();
  reset_cache();  // every iteration starts with nothing cached
  cur_segment_ = plan_.segment_of[s.ops[0]];
  for (ValueId v : s.ops) {
    begin_op(v);
    lower_strip_op(v);
    end_op(v);
    close_op();
    maybe_flush_pool();
  }
  reset_cache();
  cur_segment_ = -1;
  a_.add(x23, x23, 16);
  a_.cmp(x23, kWarpLaneBytes4);
  if (a_.offset() - start < kIslandSpacing) {
    a_.b_lo(loop);
  } else {  // b.cond reaches +-1 MiB
    Label done = a_.newLabel();
    a_.b_hs(done);
    a_.b(loop);
    a_.bind(done);
  }
}

// Phis of the block's one successor that take v: v's launched lanes go to
// their slots now, and the edge copies nothing for them (plan.cpp).
// Also: a result read outside its segment goes to its slot; operands whose
// last read in the segment this was leave the cache.
void Emitter::end_op(ValueId v) {
  const bool has_result = f_.insts[v].type != ir::Type::Void;
  if (has_result && !wide(v)) {
    if (plan_.escapes[v]) ensure_in_frame(v);
    for (int& m : map_) m = -1;  // the op's logical registers are done with (temporaries go at close_op)
    // Phis of the block's one successor that take v (32-bit only, plan.cpp):
    // v's launched lanes go to their slots now; the edge copies nothing.
    for (ValueId p : plan_.direct_phis[v]) {
      vload(0, v);
      vconst_key(1, uint64_t(kConstLaunchMask) << 62);
      a_.and_(L(2).b16(), L(0).b16(), L(1).b16());
      a_.str(L(2), at(x25, slot(p), 16, 17));
    }
  }
  const int32_t pos = plan_.position[v];
  auto release = [&](ValueId a) {
    if (vals_[a].reg >= 0) free_reg(vals_[a].reg);
  };
  for (ValueId a : f_.insts[v].args)
    if (plan_.segment_of[a] == cur_segment_ && plan_.last_use[a] == pos) release(a);
  if (ValueId x = backend::itof_narrow_source(f_, v);
      x != kNoValue && plan_.segment_of[x] == cur_segment_ && plan_.last_use[x] == pos)
    release(x);
  if (has_result && plan_.last_use[v] < 0) release(v);  // never read in this segment
}

void Emitter::lower_strip_op(ValueId v) {
  if (lower_native(v)) return;
  // The helper reads its operands from the frame and writes its result there.
  for (int& m : map_) m = -1;
  for (int p = 0; p < 32; ++p)
    if (regs_[p].owner == Owner::Temp) regs_[p] = RegState{};
  for (ValueId a : f_.insts[v].args)
    if (a < vals_.size() && vals_[a].reg < 0 && !framed(a))
      throw CompileError("a64 jit: internal: %" + std::to_string(a) + " overwritten before the helper for %" +
                         std::to_string(v));
  spill_live_for_call(v);
  lower_helper(v);
  vals_[v].reg = -1;
  vals_[v].in_frame = true;
}

void Emitter::lower_helper(ValueId v) {
  const Inst& in = f_.insts[v];
  if (in.args.size() > size_t(rt::kMaxArgs))
    throw CompileError("a64 jit: " + std::string(op_name(in.op)) + " has too many operands");
  const rt::EvalOp* d = nullptr;
  if (auto it = eval_op_of_.find(v); it != eval_op_of_.end()) {
    d = it->second;
  } else {
    auto op = std::make_unique<rt::EvalOp>();
    op->op = lane_op(f_, v);
    std::string why;
    if (!lane_op_supported(op->op, &why))
      throw CompileError("a64 jit: %" + std::to_string(v) + " (block " + std::to_string(in.block) + "): " + why);
    op->nargs = uint32_t(in.args.size());
    for (size_t i = 0; i < in.args.size(); ++i) {
      op->arg_slot[i] = slot(in.args[i]);
      op->arg_bytes[i] = uint8_t(lane_bytes(f_.insts[in.args[i]].type));
    }
    op->res_slot = slot(v);
    op->res_bytes = uint8_t(lane_bytes(in.type));
    op->lanes = uint32_t(kStripLanes);
    d = op.get();
    eval_op_of_[v] = d;
    eval_ops.push_back(std::move(op));
  }
  mov_imm(x0, reinterpret_cast<uint64_t>(d));
  a_.mov(x1, x20);
  a_.lsr(w2, w23, 2);
  call_abs(reinterpret_cast<const void*>(&rt::eval_strip));
}

void Emitter::emit_warp_op(ValueId v) {
  const Inst& in = f_.insts[v];
  if (in.op == Opcode::Budget) {
    Label ok = a_.newLabel();
    a_.ldr(x9, at(x19, CTX(budget), 8));
    mov_imm(x10, in.imm);
    a_.subs(x9, x9, x10);
    a_.str(x9, at(x19, CTX(budget), 8, 11));
    a_.b_ge(ok);
    emit_fault_return(FaultKind::Watchdog, v);
    a_.bind(ok);
    return;
  }
  if (in.args.size() > size_t(rt::kMaxArgs))
    throw CompileError("a64 jit: " + std::string(op_name(in.op)) + " has too many operands");
  if (emit_vote(v)) return;
  auto d = std::make_unique<rt::WarpOp>();
  d->op = in.op;
  d->type = in.type;
  d->attr = in.attr;
  d->fflags = in.fflags;
  d->imm = in.imm;
  d->nargs = uint32_t(in.args.size());
  for (size_t i = 0; i < in.args.size(); ++i) {
    d->arg_slot[i] = slot(in.args[i]);
    d->arg_type[i] = f_.insts[in.args[i]].type;
  }
  d->res_slot = in.type == ir::Type::Void ? 0 : slot(v);
  d->value = v;
  Label done = a_.newLabel();
  bool fast = emit_memory_fast(v, done);  // falls through to the helper when it cannot do the access
  mov_imm(x0, reinterpret_cast<uint64_t>(d.get()));
  a_.mov(x1, x19);
  call_abs(reinterpret_cast<const void*>(&rt::run_warp_op));
  Label ok = a_.newLabel();
  a_.cbz(w0, ok);
  a_.b(epilogue_);  // RunStatus::Fault, fault fields filled (b: the epilogue may be over 1 MiB away)
  a_.bind(ok);
  if (fast) a_.bind(done);
  warp_ops.push_back(std::move(d));
}

void Emitter::lane_bits(const GpW& dst, uint32_t off) {
  // The 32 lanes' low bytes packed into two q registers (UZP1 of halfwords,
  // then of bytes), bit 0 of each turned into all ones (CMTST) and ANDed with
  // the weight 1 << (lane % 8); three pairwise byte additions (the weights of
  // a byte group are disjoint bits) leave the 32-bit mask in the low word.
  add_off(x9, x20, off);
  a_.ld1(Q(0).s4(), Q(1).s4(), Q(2).s4(), Q(3).s4(), ptr_post(x9, 64));
  a_.ld1(Q(4).s4(), Q(5).s4(), Q(6).s4(), Q(7).s4(), ptr(x9));
  for (int r = 0; r < 4; ++r) a_.uzp1(Q(r).h8(), Q(2 * r).h8(), Q(2 * r + 1).h8());
  a_.uzp1(Q(0).b16(), Q(0).b16(), Q(1).b16());
  a_.uzp1(Q(1).b16(), Q(2).b16(), Q(3).b16());
  a_.movi(Q(2).b16(), 1);
  a_.cmtst(Q(0).b16(), Q(0).b16(), Q(2).b16());
  a_.cmtst(Q(1).b16(), Q(1).b16(), Q(2).b16());
  vconst64(2, 0x8040201008040201ull);
  a_.and_(Q(0).b16(), Q(0).b16(), Q(2).b16());
  a_.and_(Q(1).b16(), Q(1).b16(), Q(2).b16());
  a_.addp(Q(0).b16(), Q(0).b16(), Q(1).b16());
  a_.addp(Q(0).b16(), Q(0).b16(), Q(0).b16());
  a_.addp(Q(0).b16(), Q(0).b16(), Q(0).b16());
  a_.fmov(dst, Q(0).s());
}

// ballot / any / all whose cluster is the whole warp: bit masks of the
// predicate and mask operands' 32 lanes, ANDed with entry_mask; the uniform
// result is broadcast to the 32 lanes of the result slot. Narrower clusters
// take the warp helper.
bool Emitter::emit_vote(ValueId v) {
  const Inst& in = f_.insts[v];
  if (in.op != Opcode::Ballot && in.op != Opcode::Any && in.op != Opcode::All) return false;
  if (in.args.size() != 2 || wide(in.args[0]) || wide(in.args[1]) || wide(v)) return false;
  if (!valid_cluster_imm(in.imm) || !whole_warp_cluster(in.imm)) return false;
  lane_bits(w11, slot(in.args[1]));
  a_.ldr(w13, at(x19, CTX(entry_mask), 4));
  a_.and_(w11, w11, w13);  // lanes taking part
  lane_bits(w12, slot(in.args[0]));
  a_.and_(w12, w12, w11);
  if (in.op == Opcode::Any) {
    a_.cmp(w12, 0);
    a_.cset(w12, CondCode::kNE);
  } else if (in.op == Opcode::All) {
    a_.cmp(w12, w11);
    a_.cset(w12, CondCode::kEQ);
  }
  if (vote_feeds_branch_only(v)) {
    vote_in_w12_ = v;  // the cond_br tests w12; no slot, no stores
    return true;
  }
  for (int r = 0; r < 4; ++r) a_.dup(Q(r).s4(), w12);
  add_off(x9, x20, slot(v));
  a_.st1(Q(0).s4(), Q(1).s4(), Q(2).s4(), Q(3).s4(), ptr_post(x9, 64));
  a_.st1(Q(0).s4(), Q(1).s4(), Q(2).s4(), Q(3).s4(), ptr(x9));
  return true;
}

// The usual shape of divergent guest code: `%c = any ...` as the block's last
// op before `cond_br %c` and read nowhere else; over the whole warp it is
// uniform, so the result can stay in w12.
bool Emitter::vote_feeds_branch_only(ValueId v) const {
  const Inst& in = f_.insts[v];
  if ((in.op != Opcode::Any && in.op != Opcode::All) || !whole_warp_cluster(in.imm)) return false;
  ValueId t = f_.terminator(in.block);
  if (t == kNoValue || f_.insts[t].op != Opcode::CondBr || f_.insts[t].args.size() != 1 || f_.insts[t].args[0] != v)
    return false;
  if (uses_[v] != 1) return false;
  const auto& segs = plan_.block_segments[in.block];
  return !segs.empty() && plan_.segments[segs.back()].ops.size() == 1 && plan_.segments[segs.back()].ops[0] == v &&
         !plan_.segments[segs.back()].strip;
}

// 64 bytes at a time (LD1 / ST1 of four q registers, post-incremented).
void Emitter::copy_warp(uint32_t dst, uint32_t src, unsigned bytes, bool launched_only) {
  uint32_t mask = bytes == kWarpLanes * 8 ? kWarpLanes * 4 : 0;  // launch mask of this lane size
  auto q4 = [](int r) { return std::array{Q(r).s4(), Q(r + 1).s4(), Q(r + 2).s4(), Q(r + 3).s4()}; };
  const auto v0 = q4(0), v4 = q4(4);
  add_off(x10, x20, dst);
  if (src == kZeroSource) {
    for (int r = 0; r < 4; ++r) a_.movi(Q(r).b16(), 0);
  } else {
    add_off(x9, x20, src);
    if (launched_only) add_off(x11, x20, mask);
  }
  for (unsigned off = 0; off < bytes; off += 64) {
    if (src != kZeroSource) {
      a_.ld1(v0[0], v0[1], v0[2], v0[3], ptr_post(x9, 64));
      if (launched_only) {
        a_.ld1(v4[0], v4[1], v4[2], v4[3], ptr_post(x11, 64));
        for (int r = 0; r < 4; ++r) a_.and_(Q(r).b16(), Q(r).b16(), Q(r + 4).b16());
      }
    }
    a_.st1(v0[0], v0[1], v0[2], v0[3], ptr_post(x10, 64));
  }
}

void Emitter::emit_edge(BlockId from, size_t succ_index) {
  auto [copies, reads_phi, missing] = backend::edge_copies(f_, plan_, from, succ_index);
  if (missing != kNoValue)
    throw CompileError("a64 jit: phi %" + std::to_string(missing) + " lacks an operand for its predecessor");
  // Phis of one block are a parallel copy: stage them when one reads another.
  for (auto& [p, a] : copies) {
    unsigned bytes = lane_bytes(f_.insts[p].type) * kWarpLanes;
    uint32_t src = f_.insts[a].op == Opcode::Undef ? kZeroSource : slot(a);  // undef reads as 0
    copy_warp(reads_phi ? stage_slot(p) : slot(p), src, bytes, true);
  }
  if (reads_phi)
    for (auto& [p, a] : copies) copy_warp(slot(p), stage_slot(p), lane_bytes(f_.insts[p].type) * kWarpLanes, false);
}

void Emitter::emit_terminator(BlockId b) {
  ValueId t = f_.terminator(b);
  const Inst& in = f_.insts[t];
  const Block& bl = f_.blocks[b];
  auto need_succs = [&](size_t n) {
    if (bl.succs.size() < n) throw CompileError("a64 jit: block " + std::to_string(b) + " lacks successors");
  };
  auto first_lane_of = [&](ValueId c) {  // w10 = lane value of the first launched lane (uniform)
    a_.add(x9, x20, x24);
    a_.ldr(w10, at(x9, slot(c), 4, 11));
  };
  switch (in.op) {
    case Opcode::Br:
      need_succs(1);
      emit_edge(b, 0);
      a_.b(block_label_[bl.succs[0]]);
      break;
    case Opcode::CondBr: {
      need_succs(2);
      Label other = a_.newLabel();
      if (vote_in_w12_ != kNoValue && vote_in_w12_ == in.args[0]) {
        a_.cbz(w12, other);  // the any/all just before (emit_vote)
      } else {
        first_lane_of(in.args[0]);
        a_.cbz(w10, other);
      }
      vote_in_w12_ = kNoValue;
      emit_edge(b, 0);
      a_.b(block_label_[bl.succs[0]]);
      a_.bind(other);
      emit_edge(b, 1);
      a_.b(block_label_[bl.succs[1]]);
      break;
    }
    case Opcode::Switch: {
      need_succs(1);
      first_lane_of(in.args[0]);
      for (size_t i = 0; i + 1 < bl.succs.size(); ++i) {
        Label next = a_.newLabel();
        mov_imm(w11, uint32_t(i));
        a_.cmp(w10, w11);
        a_.b_ne(next);
        emit_edge(b, i);
        a_.b(block_label_[bl.succs[i]]);
        a_.bind(next);
      }
      emit_edge(b, bl.succs.size() - 1);
      a_.b(block_label_[bl.succs.back()]);
      break;
    }
    case Opcode::Barrier:
      need_succs(1);
      emit_edge(b, 0);
      mov_imm(w9, bl.succs[0]);
      a_.str(w9, at(x19, CTX(resume), 4, 10));
      mov_imm(w0, uint32_t(RunStatus::Barrier));
      a_.b(epilogue_);
      break;
    case Opcode::Return:
      a_.str(wzr, at(x19, CTX(resume), 4));
      mov_imm(w0, uint32_t(RunStatus::Done));
      a_.b(epilogue_);
      break;
    case Opcode::Unreachable:
      emit_fault_return(FaultKind::Unsupported, t, 0, 0, -1);
      break;
    default:
      throw CompileError("a64 jit: unknown terminator " + std::string(op_name(in.op)));
  }
}

}  // namespace gpurc::a64
