#include "backend_a64/emitter.h"

#include <algorithm>
#include <cstddef>

#include "ir/abi.h"

namespace gpurc::a64 {

using namespace ir;
using namespace asmjit;
using namespace asmjit::a64;

namespace {
constexpr int kWarpLaneBytes4 = kWarpLanes * 4;  // one 4-byte-per-lane array
constexpr int kFrameSave = 112;                  // x29, x30, x19..x28, saved FPCR (16-byte multiple)
constexpr int kFpcrSave = 96;
#define CTX(field) uint32_t(offsetof(WarpContext, field))
}  // namespace

Emitter::Emitter(const Function& f, a64::Assembler& a) : a_(a), f_(f) {
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

void Emitter::vload(int r, ValueId v, int half) {
  if (wide(v)) a_.ldr(Q(uint32_t(r)), at(x26, slot(v) + 16u * unsigned(half), 16));
  else a_.ldr(Q(uint32_t(r)), at(x25, slot(v), 16));
}

void Emitter::vstore(ValueId v, int r, int half) {
  if (wide(v)) a_.str(Q(uint32_t(r)), at(x26, slot(v) + 16u * unsigned(half), 16));
  else a_.str(Q(uint32_t(r)), at(x25, slot(v), 16));
}

void Emitter::vconst(int r, uint32_t bits) {
  if (bits == 0) {
    a_.movi(Q(r).b16(), 0);
    return;
  }
  auto it = const32_.find(bits);
  if (it == const32_.end()) it = const32_.emplace(bits, a_.newLabel()).first;
  a_.ldr(Q(uint32_t(r)), a64::ptr(it->second));
}

void Emitter::vconst64(int r, uint64_t bits) {
  if (uint32_t(bits) == uint32_t(bits >> 32)) {
    vconst(r, uint32_t(bits));
    return;
  }
  auto it = const64_.find(bits);
  if (it == const64_.end()) it = const64_.emplace(bits, a_.newLabel()).first;
  a_.ldr(Q(uint32_t(r)), a64::ptr(it->second));
}

void Emitter::mask_to_width(int r, ir::Type t) {
  unsigned w = bit_width(t);
  if (w >= 32) return;
  vconst(7, uint32_t(type_mask(t)));
  a_.and_(Q(r).b16(), Q(r).b16(), Q(7).b16());
}

void Emitter::sext_to32(int d, int s, ir::Type t) {
  unsigned w = bit_width(t);
  if (w >= 32) {
    if (d != s) a_.mov(Q(d).b16(), Q(s).b16());
    return;
  }
  a_.shl(Q(d).s4(), Q(s).s4(), 32 - w);
  a_.sshr(Q(d).s4(), Q(d).s4(), 32 - w);
}

void Emitter::bool_from_mask(int r) { a_.ushr(Q(r).s4(), Q(r).s4(), 31); }

void Emitter::canonicalize_nan(int r, uint32_t nan_bits) {
  a_.fcmeq(Q(5).s4(), Q(r).s4(), Q(r).s4());  // all ones where not NaN
  vconst(6, nan_bits);
  a_.bif(Q(r).b16(), Q(6).b16(), Q(5).b16());
}

void Emitter::flush_subnormal(int r) {
  vconst(6, 0x7F800000u);
  a_.cmtst(Q(5).s4(), Q(r).s4(), Q(6).s4());  // all ones where the exponent is not 0
  vconst(6, 0x80000000u);
  a_.and_(Q(6).b16(), Q(r).b16(), Q(6).b16());
  a_.bif(Q(r).b16(), Q(6).b16(), Q(5).b16());
}

void Emitter::saturate(int r) {
  // After canonicalize_nan every NaN is quiet: FMAXNM gives +0 for it, and
  // +0 for -0 (it orders -0 below +0).
  a_.movi(Q(5).b16(), 0);
  a_.fmaxnm(Q(r).s4(), Q(r).s4(), Q(5).s4());
  vconst(5, 0x3F800000u);
  a_.fminnm(Q(r).s4(), Q(r).s4(), Q(5).s4());
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
    for (uint32_t i = 0; i < uint32_t(kWarpLanes); ++i) {
      a_.sbfx(x10, x9, i, 1);
      a_.str(w10, ptr(x20, int32_t(4 * i)));
      a_.str(x10, ptr(x20, int32_t(kWarpLanes * 4 + 8 * i)));
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
    a_.movi(Q(0).b16(), 0);
    for (ValueId v : partial_slots_)
      for (unsigned off = 0; off < lane_bytes(f_.insts[v].type) * kWarpLanes; off += 16)
        a_.str(Q(0), at(x20, slot(v) + off, 16));
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

void Emitter::viota(int r) {
  iota_used_ = true;
  a_.ldr(Q(uint32_t(r)), a64::ptr(iota_));
}

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
  for (ValueId v : s.ops) {
    lower_strip_op(v);
    end_op(v);
    maybe_flush_pool();
  }
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
void Emitter::end_op(ValueId v) {
  for (ValueId p : plan_.direct_phis[v]) {
    vload(0, v);
    a_.ldr(Q(1), ptr(x25));  // the 4-byte launch mask is at frame offset 0
    a_.and_(Q(0).b16(), Q(0).b16(), Q(1).b16());
    vstore(p, 0);
  }
}

void Emitter::lower_strip_op(ValueId v) {
  if (!lower_native(v)) lower_helper(v);
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
  // Per strip of four lanes: bit 0 of each lane shifted to bit i (USHL by
  // 0..3), summed across the lanes (ADDV), placed at bit 4c.
  viota(6);
  vconst(5, 1);
  a_.mov(dst, wzr);
  for (uint32_t c = 0; c < uint32_t(kWarpLanes / 4); ++c) {
    a_.ldr(Q(0), at(x20, off + 16 * c, 16));
    a_.and_(Q(0).b16(), Q(0).b16(), Q(5).b16());
    a_.ushl(Q(0).s4(), Q(0).s4(), Q(6).s4());
    a_.addv(Q(0).s(), Q(0).s4());
    a_.fmov(w10, Q(0).s());
    a_.orr(dst, dst, w10, lsl(4 * c));
  }
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
  a_.dup(Q(0).s4(), w12);
  for (uint32_t c = 0; c < uint32_t(kWarpLanes / 4); ++c) a_.str(Q(0), at(x20, slot(v) + 16 * c, 16));
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

void Emitter::copy_warp(uint32_t dst, uint32_t src, unsigned bytes, bool launched_only) {
  uint32_t mask = bytes == kWarpLanes * 8 ? kWarpLanes * 4 : 0;  // launch mask of this lane size
  for (unsigned off = 0; off < bytes; off += 16) {
    if (src == kZeroSource) {
      a_.movi(Q(0).b16(), 0);
    } else {
      a_.ldr(Q(0), at(x20, src + off, 16));
      if (launched_only) {
        a_.ldr(Q(1), at(x20, mask + off, 16));
        a_.and_(Q(0).b16(), Q(0).b16(), Q(1).b16());
      }
    }
    a_.str(Q(0), at(x20, dst + off, 16));
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
