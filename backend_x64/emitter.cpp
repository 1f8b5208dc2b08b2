#include "backend_x64/emitter.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdlib>
#include <cstring>

#include "ir/abi.h"
#include "ir/compile_stages.h"

namespace gpurc::x64 {

using namespace ir;
using namespace Xbyak;

namespace {
constexpr int kWarpLaneBytes4 = kWarpLanes * 4;  // one 4-byte-per-lane array
#define CTX(field) (rbx + int(offsetof(WarpContext, field)))
}  // namespace

// ---------------------------------------------------------------- constant pool

void ConstPool::reset(uint8_t* low, uint8_t* top) {
  low_ = low;
  top_ = top;
  table_.assign(64, Entry{0, nullptr, 0});
  used_ = 0;
}

uint8_t* ConstPool::alloc(unsigned bytes) {
  const uintptr_t align = std::min(bytes, 64u);
  uintptr_t at = (reinterpret_cast<uintptr_t>(top_) - bytes) & ~(align - 1);
  if (at < reinterpret_cast<uintptr_t>(low_) || at > reinterpret_cast<uintptr_t>(top_)) throw Full{};
  top_ = reinterpret_cast<uint8_t*>(at);
  return top_;
}

void ConstPool::grow() {
  std::vector<Entry> old = std::move(table_);
  table_.assign(old.size() * 2, Entry{0, nullptr, 0});
  const size_t mask = table_.size() - 1;
  for (const Entry& e : old) {
    if (!e.addr) continue;
    size_t i = size_t((e.bits ^ (uint64_t(e.kind) << 61)) * 0x9E3779B97F4A7C15ull >> 32) & mask;
    while (table_[i].addr) i = (i + 1) & mask;
    table_[i] = e;
  }
}

bool ConstPool::find(const uint8_t* addr, uint8_t& kind, uint64_t& bits) const {
  for (const Entry& e : table_)
    if (e.addr == addr) {
      kind = e.kind;
      bits = e.bits;
      return true;
    }
  return false;
}

const uint8_t* ConstPool::insert(size_t i, uint8_t kind, uint64_t bits, unsigned bytes, unsigned elem) {
  uint8_t* p = alloc(bytes);
  for (unsigned off = 0; off < bytes; off += elem) std::memcpy(p + off, &bits, elem);
  table_[i] = Entry{bits, p, kind};
  if (++used_ * 2 > table_.size()) grow();
  return p;
}

// ---------------------------------------------------------------- set-up

void Emitter::init_emission_state(uint8_t* buffer, uint8_t* pool_low) {
  z_ = tier_ == Tier::Avx512;
  lanes_ = z_ ? 16 : 8;
  vbytes_ = lanes_ * 4;
  nregs_ = z_ ? 32 : 16;
  cache_hi_ = nregs_;
  // (Emission state: a trial emitter that shares the analyses does not run
  // find_load_homes, and a zero here would name value 0 as hoisted.)
  std::fill(std::begin(load_home_hoisted_), std::end(load_home_hoisted_), kNoValue);
  pool_.reset(pool_low, buffer);
  constvec_.bytes = constvec64_.bytes = uint8_t(vbytes_);
  uint8_t* iota = pool_.alloc(64);
  for (uint32_t i = 0; i < 16; ++i) std::memcpy(iota + 4 * i, &i, 4);
  iota_ = iota;
  vals_.assign(f_.insts.size(), ValState{});
  prefilled_.assign(f_.insts.size(), 0);
  stage_slot_.assign(f_.insts.size(), -1);
  for (int i = 0; i < 32; ++i) vregs_[i] = z_ ? Xmm(Zmm(i)) : Xmm(Ymm(i));
  for (int base = 0; base < 2; ++base)
    for (int alt = 0; alt < 2; ++alt)
      for (int two = 0; two < 2; ++two)
        lane_exp_[base][alt][two] = (base ? r13 : r12) + (alt ? rbp : r14) * (two ? 2 : 1);
  block_label_.resize(f_.blocks.size());
}

Emitter::Emitter(const Function& f, Tier tier, size_t max_code, uint8_t* buffer, uint8_t* pool_low, const Plan* plan)
    : FastEncoder(max_code, buffer), f_(f), tier_(tier), plan_(own_plan_) {
  init_emission_state(buffer, pool_low);
  {
    ir::StageTimer t("segment plan and liveness");
    // (Not `plan ? *plan : make_plan(f)`: that copies the new plan, a dozen
    // per-value vectors, instead of moving it.)
    if (plan) own_plan_ = *plan;
    else own_plan_ = make_plan(f);
  }
  analyze_function();
}

// The function-level analyses (the constructor's), on plan_.
void Emitter::analyze_function() {
  const Function& f = f_;
  daz_ = daz_eligible(f);
  slot_.assign(f.insts.size(), -1);
  var_offsets_ = f.var_offsets();
  uses_.assign(f.insts.size(), 0);
  bool uniform_idx = false, votes = false;  // (the analyses below that only these ops need)
  for (const ir::Inst& in : f.insts)
    if (in.block != kNoBlock) {
      has_phis_ |= in.op == Opcode::Phi;
      uniform_idx |= in.op == Opcode::LoadUniformIdx;
      votes |= in.op == Opcode::Any || in.op == Opcode::All || in.op == Opcode::Ballot;
      for (ValueId a : in.args)
        if (a < uses_.size()) ++uses_[a];
    }
  find_var_homes();
  if (has_phis_) frame_bytes_ = kLaunchMaskBytes;  // launch masks at frame offset 0
  ir::StageTimer t("indexed memory plan");
  plan_indexed_memory();
  find_load_homes();
  find_store_homes();
  plan_index_segments();  // (after the store homes: a segment with a probe keeps its strips alone)
  if (votes) plan_vote_nots();
  // lane_equal_ is read for load_uniform_idx offsets and in strip-outer
  // loops only; the folds are load_uniform_idx selects (seventeenth session:
  // most shaders have neither, and each is a walk or two of the function).
  if (uniform_idx || !plan_.strip_loops.empty()) lane_equal_values();
  if (uniform_idx) plan_uniform_index_folds();
  // uniforms_tested_at_entry_: a run that stops at a barrier resumes past
  // the entry block, so only functions without barriers qualify.
  bool barriers = false;
  for (ir::BlockId b = 0; b < f.blocks.size(); ++b)
    if (ValueId t = f.terminator(b); t != kNoValue && f.insts[t].op == Opcode::Barrier) barriers = true;
  if (!barriers && !f.blocks.empty())
    for (ValueId v : f.blocks[0].insts) {
      const ir::Inst& in = f.insts[v];
      if (in.op != Opcode::LoadUniform || deferred_[v] || plan_.segment_of[v] < 0) continue;
      const unsigned bytes = in.type == ir::Type::I1 ? 1 : bit_width(in.type) / 8;
      if (in.imm <= f.uniform_bytes && f.uniform_bytes - in.imm >= bytes) uniforms_tested_at_entry_ = true;
    }
  // The entry block's first load_uniform is left to a memory op's fallback
  // (G13's indexed base, deferred): when only pure strip ops come before it
  // in the block, a test of r15 at the top of the block is that load's fault
  // (kind, op, offset; nothing observable done before it), and every other
  // block may then leave its tests out as above (twelfth session: the
  // uniform loads of G13 `alu`'s loop).
  if (!barriers && !f.blocks.empty() && !uniforms_tested_at_entry_)
    for (ValueId v : f.blocks[0].insts) {
      const ir::Inst& in = f.insts[v];
      if (in.op == Opcode::Phi || in.op == Opcode::Const) continue;
      if (plan_.segment_of[v] < 0 || !plan_.segments[size_t(plan_.segment_of[v])].strip) break;
      if (in.op == Opcode::StoreVar || in.op == Opcode::LoadUniformIdx) break;
      if (in.op != Opcode::LoadUniform) continue;
      const unsigned bytes = in.type == ir::Type::I1 ? 1 : bit_width(in.type) / 8;
      if (in.imm > f.uniform_bytes || f.uniform_bytes - in.imm < bytes) break;  // faults with a block too
      entry_uniform_test_ = v;
      uniforms_tested_at_entry_ = true;
      break;
    }
  if (has_phis_ && f.unlaunched_lanes_free) coalesce_phi_slots();
  if (!plan_.strip_loops.empty()) {  // trial emitters will start from here (loops.cpp)
    setup_slot_ = slot_;
    setup_frame_bytes_ = frame_bytes_;
  }
}

bool env_switch_on(const char* name) {
  const char* e = std::getenv(name);
  return !(e && *e == '0');
}

namespace {
// set_trial_analyses_shared (jit.h): off, each trial emitter makes the
// analyses again on a copy of the plan, as before the seventeenth session.
bool trial_analyses_shared_on = true;
thread_local uint64_t tl_trial_analyses_shares = 0;
}  // namespace

void set_trial_analyses_shared(bool on) { trial_analyses_shared_on = on; }
uint64_t trial_analyses_shares() { return tl_trial_analyses_shares; }

Emitter::Emitter(const Emitter& parent, size_t max_code, uint8_t* buffer, uint8_t* pool_low)
    : FastEncoder(max_code, buffer),
      f_(parent.f_),
      tier_(parent.tier_),
      own_plan_(trial_analyses_shared_on ? Plan{} : parent.plan_),
      plan_(trial_analyses_shared_on ? parent.plan_ : own_plan_),
      shares_analyses_(trial_analyses_shared_on) {
  init_emission_state(buffer, pool_low);
  if (!shares_analyses_) {
    analyze_function();
    return;
  }
  ++tl_trial_analyses_shares;
  // What the parent's constructor made (the same function, tier and plan).
  daz_ = parent.daz_;
  slot_ = parent.setup_slot_;
  frame_bytes_ = parent.setup_frame_bytes_;
  var_offsets_ = parent.var_offsets_;
  uses_ = parent.uses_;
  has_phis_ = parent.has_phis_;
  var_home_ = parent.var_home_;
  deferred_ = parent.deferred_;
  indexed_ = parent.indexed_;
  mask_source_ = parent.mask_source_;
  vote_mask_cache_ = parent.vote_mask_cache_;
  window_caches_ = parent.window_caches_;
  lane_run_flags_ = parent.lane_run_flags_;
  narrow_run_flags_ = parent.narrow_run_flags_;
  vote_not_source_ = parent.vote_not_source_;
  lane_equal_ = parent.lane_equal_;
  uidx_fold_ = parent.uidx_fold_;
  uniforms_tested_at_entry_ = parent.uniforms_tested_at_entry_;
  entry_uniform_test_ = parent.entry_uniform_test_;
  load_home_gpr_ = parent.load_home_gpr_;
  load_home_cell_ = parent.load_home_cell_;
  store_home_of_segment_ = parent.store_home_of_segment_;
  lane0_var_ = parent.lane0_var_;
  lane0_flag_ = parent.lane0_flag_;
  store_homed_ = parent.store_homed_;
  adopt_lazy_analyses(parent);
}

void Emitter::adopt_lazy_analyses(const Emitter& from) {
  const size_t n = f_.insts.size();
  if (count_only_const_.empty()) count_only_const_ = from.count_only_const_;
  if (mask_only_cmp_.empty()) mask_only_cmp_ = from.mask_only_cmp_;
  if (kand_pair_.empty()) kand_pair_ = from.kand_pair_;
  if (daz_arith_only_.empty()) daz_arith_only_ = from.daz_arith_only_;
  if (uidx_windows_.empty()) uidx_windows_ = from.uidx_windows_;
  if (fused_add_.empty() && !from.fused_add_.empty()) {
    fused_add_ = from.fused_add_;
    fused_partner_ = from.fused_partner_;
    daz_chains_ = from.daz_chains_;
    daz_chain_first_ = from.daz_chain_first_;
    daz_chain_member_ = from.daz_chain_member_;
    fused_pending_.assign(n, 0);  // (emission state: the sums computed early)
  }
  if (loop_outside_block_ == ir::kNoBlock && from.loop_outside_block_ != ir::kNoBlock) {
    loop_outside_block_ = from.loop_outside_block_;
    loop_outside_ = from.loop_outside_;
    loop_live_out_ = from.loop_live_out_;
  }
  if (fneg_fma_.empty() && !from.fneg_fma_.empty()) {
    fneg_fma_ = from.fneg_fma_;
    fma_skip_.assign(n, 0);  // (emission state)
  }
}


// ---------------------------------------------------------------- frame

// A phi at the join of a diamond's short side (P -> {Q, J}, Q -> J, Q's one
// predecessor P) whose operand from P is a value v of P shares v's slot,
// so the edge P -> J copies nothing (Tesla's MAD: the fast path's sum is the
// phi's value unless a lane needs the exact block Q, which writes the phi
// from its select). Safe when no one reads v after Q writes the phi: v's
// readers are the phi, P's ops and Q's ops up to the phi's operand u from
// Q (which writes the slot at its definition or on the edge Q -> J); and
// when the phi's slot is written nowhere else: J's phis read no phi of J
// (no staging), no cycle passes through the blocks (a loop could run P
// again while the phi is live), and the copy is unmasked (the
// unlaunched-lanes contract: the masked copy would zero lanes of v's slot).
// 32-bit values computed in a segment only (not loads, constants, vars or
// uniform fills, whose slots other code fills or reads in its own ways).
void Emitter::coalesce_phi_slots() {
  const Function& f = f_;
  const size_t nb = f.blocks.size(), n = f.insts.size();
  // No cycle at all (depth-first colours): the simple case is all we take.
  {
    std::vector<uint8_t> colour(nb, 0);
    std::vector<std::pair<BlockId, size_t>> stack{{0, 0}};
    colour[0] = 1;
    while (!stack.empty()) {
      auto& [b, i] = stack.back();
      if (i == f.blocks[b].succs.size()) {
        colour[b] = 2;
        stack.pop_back();
        continue;
      }
      const BlockId s = f.blocks[b].succs[i++];
      if (s >= nb) return;
      if (colour[s] == 1) return;  // a back edge
      if (colour[s] == 0) {
        colour[s] = 1;
        stack.push_back({s, 0});
      }
    }
  }
  std::vector<int32_t> index(n, -1);  // position in its block
  for (BlockId b = 0; b < nb; ++b)
    for (size_t i = 0; i < f.blocks[b].insts.size(); ++i) index[f.blocks[b].insts[i]] = int32_t(i);
  std::vector<std::vector<ValueId>> users(n);
  for (ValueId w = 0; w < n; ++w)
    if (f.insts[w].block != kNoBlock)
      for (ValueId a : f.insts[w].args)
        if (a < n) users[a].push_back(w);
  auto plain = [&](ValueId x) {
    const ir::Inst& in = f.insts[x];
    if (in.block == kNoBlock || wide(x) || lane_bytes(in.type) != 4 || in.type == ir::Type::I1 || deferred_[x]) return false;
    switch (in.op) {
      case Opcode::Phi: case Opcode::Const: case Opcode::Undef: case Opcode::LoadVar: case Opcode::LoadUniform:
      case Opcode::LoadUniformIdx: case Opcode::Load: case Opcode::EntryMask:
        return false;
      default:
        return plan_.segment_of[x] >= 0;
    }
  };
  for (BlockId j = 0; j < nb; ++j) {
    const ir::Block& jb = f.blocks[j];
    if (jb.preds.size() != 2) continue;
    bool phis_read_phis = false;
    for (ValueId p : jb.insts) {
      if (f.insts[p].op != Opcode::Phi) break;
      for (ValueId a : f.insts[p].args)
        if (a < n && f.insts[a].op == Opcode::Phi && f.insts[a].block == j) phis_read_phis = true;
    }
    if (phis_read_phis) continue;
    for (ValueId p : jb.insts) {
      const ir::Inst& pi = f.insts[p];
      if (pi.op != Opcode::Phi) break;
      if (pi.args.size() != 2 || slot_[p] >= 0 || wide(p)) continue;
      for (int k = 0; k < 2; ++k) {
        const BlockId P = jb.preds[size_t(k)], Q = jb.preds[size_t(1 - k)];
        const ValueId v = pi.args[size_t(k)], u = pi.args[size_t(1 - k)];
        if (v >= n || u >= n || v == u || f.insts[v].type != pi.type || f.insts[v].block != P) continue;
        if (f.insts[u].block != Q || !plain(v)) continue;
        const ir::Block& qb = f.blocks[Q];
        if (qb.preds.size() != 1 || qb.preds[0] != P || qb.succs.size() != 1 || qb.succs[0] != j) continue;
        if (slot_[v] >= 0) continue;  // (someone took it already)
        bool ok = true;
        for (ValueId w : users[v]) {
          const BlockId wb = f.insts[w].block;
          if (w == p || wb == P) continue;
          if (wb == Q && f.insts[w].op != Opcode::Phi && index[w] <= index[u]) continue;
          ok = false;
        }
        if (!ok) continue;
        slot_[p] = int32_t(slot(v));
        break;
      }
    }
  }
}

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

// A 32-bit load_var of a var the function never stores keeps its value in
// that var for the whole run, so the var is the value's home: a spill need
// not store it and a reload reads the var (eleventh session: a vertex
// shader's input loads come first in their block, and with 16 ymm registers
// most were stored to frame slots right after being loaded, 12 stores per
// strip in the simple reference shader). Only for values whose every reader
// takes its operands through use() / strip_mem (the float arithmetic the
// tiers lower natively, selects and var stores): other lowerings (helper
// calls, phis' edge copies, memory ops, cross-lane ops, branches) read a
// value's frame slot by its offset. GPURC_VAR_HOMES=0 (read once) turns it
// off, for measurements.
bool Emitter::var_homes_enabled() {
  static const bool yes = env_switch_on("GPURC_VAR_HOMES");
  return yes;
}

void Emitter::find_var_homes() {
  var_home_.assign(f_.insts.size(), -1);
  if (!var_homes_enabled()) return;
  std::vector<uint8_t> stored(f_.vars.size(), 0);
  std::vector<ValueId> loads;  // the 32-bit load_vars, in one walk with the stores
  for (ValueId v = 0; v < f_.insts.size(); ++v) {
    const ir::Inst& in = f_.insts[v];
    if (in.block == kNoBlock) continue;
    if (in.op == Opcode::StoreVar && in.imm < stored.size()) stored[size_t(in.imm)] = 1;
    if (in.op == Opcode::LoadVar && in.imm < f_.vars.size() && (in.type == ir::Type::F32 || in.type == ir::Type::I32) &&
        lane_bytes(f_.vars[size_t(in.imm)].type) == 4)
      loads.push_back(v);
  }
  if (loads.empty()) return;
  for (ValueId v : loads)
    if (!stored[size_t(f_.insts[v].imm)]) var_home_[v] = int32_t(f_.insts[v].imm);
  auto reads_through_use = [&](const ir::Inst& u) {
    switch (u.op) {
      case Opcode::FAdd: case Opcode::FSub: case Opcode::FMul: case Opcode::FFma: case Opcode::FMad:
      case Opcode::FMin: case Opcode::FMax: case Opcode::FNeg: case Opcode::FAbs:
        return u.type == ir::Type::F32;
      case Opcode::FCmp:
        return !u.args.empty() && f_.insts[u.args[0]].type == ir::Type::F32;
      case Opcode::Select:
        return lane_bytes(u.type) == 4;
      case Opcode::StoreVar:
        return true;
      default:
        return false;
    }
  };
  for (const ir::Inst& u : f_.insts) {
    if (u.block == kNoBlock || reads_through_use(u)) continue;
    for (ValueId a : u.args)
      if (a < var_home_.size()) var_home_[a] = -1;
  }
}

Address Emitter::strip_mem(ValueId v, int half) {
  if (var_home_[v] >= 0) return var_mem(uint32_t(var_home_[v]), half);
  if (load_homed(v)) return load_home_ref(v).address();
  uint32_t s = slot(v);
  // lane rbp: the second strip of an interleaved loop (loops.cpp)
  if (wide(v)) return ptr[lane_exp_[0][strip_alt_][1] + int(s + half * vbytes_)];
  return ptr[lane_exp_[0][strip_alt_][0] + int(s)];
}

Address Emitter::var_mem(uint32_t var, int half) {
  uint32_t off = var_offsets_[var];
  if (lane_bytes(f_.vars[var].type) == 8) return ptr[lane_exp_[1][strip_alt_][1] + int(off + half * vbytes_)];
  return ptr[lane_exp_[1][strip_alt_][0] + int(off)];
}

// (The registers of lane_exp_: r12 frame / r13 vars, r14 or rbp the lane offset.)
MemRef Emitter::strip_ref(ValueId v, int half) {
  if (var_home_[v] >= 0) return var_ref(uint32_t(var_home_[v]), half);
  if (load_homed(v)) return load_home_ref(v);
  const uint32_t s = slot(v);
  const uint8_t lane = strip_alt_ ? 5 : 14;
  if (wide(v)) return MemRef{12, lane, 2, int32_t(s + half * vbytes_)};
  return MemRef{12, lane, 1, int32_t(s)};
}

MemRef Emitter::var_ref(uint32_t var, int half) {
  const uint32_t off = var_offsets_[var];
  const uint8_t lane = strip_alt_ ? 5 : 14;
  if (lane_bytes(f_.vars[var].type) == 8) return MemRef{13, lane, 2, int32_t(off + half * vbytes_)};
  return MemRef{13, lane, 1, int32_t(off)};
}

// ---------------------------------------------------------------- register cache

int Emitter::alloc_reg() {
  // The lowest free register, else the least recently used one (lowest
  // stamp, then lowest number), neither locked nor pinned: a minimum over one
  // key per register, without data-dependent branches (the scan runs for
  // nearly every op once the cache is full, and its compares mispredicted).
  uint64_t best = ~uint64_t(0);
  for (int r = cache_lo_; r < cache_hi_; ++r) {  // (all of them but in a strip-interleaved loop)
    const RegState& s = regs_[r];
    uint64_t key = s.v == kNoValue ? uint64_t(r) : ((uint64_t(s.stamp) + 1) << 8) | uint64_t(r);
    key = (s.locked | s.pinned) ? ~uint64_t(0) : key;
    best = key < best ? key : best;
    if (key < 256) break;  // a free register: the lowest one is the minimum (every later key is larger)
  }
  if (best == ~uint64_t(0)) throw CompileError("x64 jit: out of vector registers (too many operands locked)");
  const int victim = int(best & 0xff);
  if (regs_[victim].v != kNoValue) spill(victim);
  regs_[victim].locked = true;
  locked_mask_ |= 1u << victim;
  regs_[victim].stamp = ++clock_;
  return victim;
}

void Emitter::spill(int r) {
  ValueId v = regs_[r].v;
  if (!vals_[v].in_frame) {
    vstore(strip_ref(v), r);
    vals_[v].in_frame = true;
  }
  vals_[v].reg = -1;
  regs_[r] = RegState{};
}

int Emitter::use(ValueId v) {
  if (wide(v)) throw CompileError("x64 jit: internal: 64-bit value used from a register");
  if (use_log_) use_log_->push_back(v);
  int r = vals_[v].reg;
  if (r >= 0) {
    regs_[r].locked = true;
    locked_mask_ |= 1u << r;
    regs_[r].stamp = ++clock_;
    return r;
  }
  r = alloc_reg();
  vload(r, strip_ref(v));
  regs_[r].v = v;
  vals_[v].reg = int8_t(r);
  vals_[v].in_frame = true;
  return r;
}

int Emitter::def(ValueId v) {
  if (def_loop_)
    if (const int h = loop_def_home(v); h >= 0) return h;
  int r = alloc_reg();
  regs_[r].v = v;
  vals_[v].reg = int8_t(r);
  vals_[v].in_frame = var_home_[v] >= 0;  // a load_var of a var the function never stores: already home
  return r;
}

void Emitter::end_op(ValueId v) {
  // (As clearing the flag of every register below nregs_.)
  const uint32_t below = nregs_ >= 32 ? ~0u : (1u << nregs_) - 1;
  for (uint32_t m = locked_mask_ & below; m != 0; m &= m - 1) regs_[std::countr_zero(m)].locked = false;
  locked_mask_ = 0;
  int r = vals_[v].reg;
  if (r >= 0 && plan_.escapes[v] && !vals_[v].in_frame) {
    vstore(strip_ref(v), r);
    vals_[v].in_frame = true;
  }
  // Phis of the block's one successor that take v: v's launched lanes go to
  // their slots now, and the edge copies nothing for them (plan.cpp).
  for (ValueId p : plan_.direct_phis[v]) {
    select_mask_of_ = kNoValue;  // vectors 0 and 1 are used below
    int src = r;
    if (src < 0) {  // a helper's result is in the frame
      vload(1, strip_ref(v));
      src = 1;
    }
    if (f_.unlaunched_lanes_free) {  // every lane, as emit_edge
      vstore(strip_ref(p), src);
      continue;
    }
    if (z_) vpandd(V(0), V(src), ptr[r12 + r14]);  // the 4-byte launch mask is at frame offset 0
    else vpand(V(0), V(src), ptr[r12 + r14]);
    vstore(strip_ref(p), 0);
  }
  int32_t pos = plan_.position[v];
  auto release = [&](ValueId a) {
    int ar = vals_[a].reg;
    if (ar < 0) return;
    vals_[a].reg = -1;
    regs_[ar] = RegState{};
  };
  for (ValueId a : f_.insts[v].args)
    if (plan_.segment_of[a] == plan_.segment_of[v] && plan_.last_use[a] == pos) release(a);
  if (ValueId x = itof_narrow_source(f_, v); x != kNoValue && plan_.segment_of[x] == plan_.segment_of[v] &&
                                               plan_.last_use[x] == pos)
    release(x);
  if (r >= 0 && plan_.last_use[v] < 0) release(v);  // never read in this segment
}

void Emitter::reset_cache() {
  uidx_cached_ = kNoValue;  // the code before may not run first (strips, blocks)
  select_mask_of_ = kNoValue;
  kmask_clear();
  for (int r = 0; r < nregs_; ++r) {
    if (regs_[r].v != kNoValue) vals_[regs_[r].v].reg = -1;
    regs_[r] = RegState{};
  }
}

void Emitter::spill_live_for_call(ValueId at) {
  int32_t pos = plan_.position[at];
  for (int r = 0; r < nregs_; ++r) {
    ValueId u = regs_[r].v;
    if (u == kNoValue) continue;
    if (!vals_[u].in_frame && (plan_.escapes[u] || plan_.last_use[u] >= pos)) {
      vstore(strip_ref(u), r);
      vals_[u].in_frame = true;
    }
  }
  reset_cache();
}

// ---------------------------------------------------------------- tier helpers

void Emitter::vmov(int d, int s) {
  if (d == s) return;
  if (z_) vmovdqa32(V(d), V(s));
  else vmovdqa(V(d), V(s));
}
void Emitter::vload(int d, const Address& a) {
  if (z_) vmovdqu32(V(d), a);
  else vmovdqu(V(d), a);
}
void Emitter::vstore(const Address& a, int s) {
  if (z_) vmovdqu32(a, V(s));
  else vmovdqu(a, V(s));
}
void Emitter::vload(int d, const MemRef& m) {
  if (!fast_vex_mem(z_ ? vmovdqu32_kRM : vmovdqu_kRM, V(d), nullptr, m)) vload(d, m.address());
}
void Emitter::vstore(const MemRef& m, int s) {
  if (!fast_vex_mem(z_ ? vmovdqu32_kMR : vmovdqu_kMR, V(s), nullptr, m)) vstore(m.address(), s);
}
void Emitter::vand(int d, int a, int b) {
  if (z_) vpandd(V(d), V(a), V(b));
  else vpand(V(d), V(a), V(b));
}
void Emitter::vor(int d, int a, int b) {
  if (z_) vpord(V(d), V(a), V(b));
  else vpor(V(d), V(a), V(b));
}
void Emitter::vxor(int d, int a, int b) {
  if (z_) vpxord(V(d), V(a), V(b));
  else vpxor(V(d), V(a), V(b));
}
void Emitter::vandn(int d, int a, int b) {
  if (z_) vpandnd(V(d), V(a), V(b));
  else vpandn(V(d), V(a), V(b));
}

Address Emitter::dconst(double v) {
  const uint64_t bits = std::bit_cast<uint64_t>(v);
  return z_ ? ptr_b[rip + const64_[bits]] : ptr[rip + constvec64_[bits]];
}

void Emitter::bcast_const(int d, uint32_t bits) {
  if (bits == 0) {
    vxor(d, d, d);
    return;
  }
  vpbroadcastd(V(d), const_mem(bits));
}

void Emitter::bcast_gpr(int d, const Reg32& r) {
  if (z_) {
    vpbroadcastd(V(d), r);
  } else {
    vmovd(Xmm(d), r);
    vpbroadcastd(V(d), Xmm(d));
  }
}

void Emitter::mask_to_width(int d, ir::Type t) {
  unsigned w = bit_width(t);
  if (w >= 32) return;
  uint32_t m = uint32_t(type_mask(t));
  if (z_) vpandd(V(d), V(d), ptr_b[rip + const32_[m]]);
  else vpand(V(d), V(d), const_vec(m));
}

void Emitter::sext_to32(int d, int s, ir::Type t) {
  unsigned w = bit_width(t);
  if (w >= 32) {
    vmov(d, s);
    return;
  }
  vpslld(V(d), V(s), uint8_t(32 - w));
  vpsrad(V(d), V(d), uint8_t(32 - w));
}

void Emitter::bool_from_cmp_avx2(int d, bool invert) {
  vpsrld(V(d), V(d), 31);
  if (invert) vpxor(V(d), V(d), const_vec(1));
}

void Emitter::bool_from_k(int d, int k) {
  vpbroadcastd(V(d) | Opmask(k) | T_z, const_mem(1));
}

void Emitter::select_bits(int d, int c, int t, int f, ValueId cond) {
  // The condition's mask (AVX-512 k1, AVX2 vector 0) is kept for the next
  // select of the same condition when only such ops come between
  // (lower_strip_op: PICA200's four components of one c[aL] range check).
  const bool have = cond != kNoValue && select_mask_of_ == cond;
  if (z_) {
    if (!have)
      if (const int k = kmask_find(cond); k >= 0) {  // the compare's mask, kept in k5..k7 (k1 untouched)
        vpblendmd(V(d) | Opmask(k), V(f), V(t));
        return;
      }
    if (!have) vptestmd(k1, V(c), V(c));
    vpblendmd(V(d) | k1, V(f), V(t));
  } else {
    if (!have) vpslld(V(0), V(c), 31);
    vblendvps(V(d), V(f), V(t), V(0));
  }
  select_mask_of_ = cond;
}

void Emitter::blend_mask(int d, int m, int t) {
  if (z_) {
    vpmovd2m(k1, V(m));
    vpblendmd(V(d) | k1, V(d), V(t));
  } else {
    vblendvps(V(d), V(d), V(t), V(m));
  }
}

// ---------------------------------------------------------------- structure

void Emitter::call_abs(const void* fn) {
  calls_emitted_ = true;
  mov(rax, reinterpret_cast<uint64_t>(fn));
  vzeroupper();
  if (daz_) ldmxcsr(dword[rsp + kMxcsrIeeeOffset]);  // helpers compute in IEEE mode
  call(rax);
  if (daz_) ldmxcsr(dword[rsp + kMxcsrDazOffset]);
  load_home_reload();  // (a strip segment's hoisted home pointers: the call clobbered them)
}

void Emitter::emit_fault_return(FaultKind kind, uint64_t code, uint64_t addr, uint32_t space, int lane) {
  mov(eax, uint32_t(fault_sites_.size()));
  fault_sites_.push_back(FaultSite{uint32_t(kind), space, lane < 0 ? -1 : lane, 0, code, addr});
  jmp(fault_common_, T_NEAR);
}

// The shared tail of every fault site: eax = the site's index in the table.
void Emitter::emit_fault_common() {
  if (fault_sites_.empty()) return;
  static_assert(sizeof(FaultSite) == 32);
  uint8_t* table = pool_.alloc(uint32_t(fault_sites_.size() * sizeof(FaultSite)));
  std::memcpy(table, fault_sites_.data(), fault_sites_.size() * sizeof(FaultSite));
  L(fault_common_);
  shl(eax, 5);  // mov eax above cleared the upper half of rax
  lea(rcx, ptr[rip + table]);
  add(rcx, rax);
  mov(edx, dword[rcx + int(offsetof(FaultSite, kind))]);
  mov(dword[CTX(fault)], edx);
  mov(rdx, qword[rcx + int(offsetof(FaultSite, code))]);
  mov(qword[CTX(fault_code)], rdx);
  mov(rdx, qword[rcx + int(offsetof(FaultSite, addr))]);
  mov(qword[CTX(fault_addr)], rdx);
  mov(edx, dword[rcx + int(offsetof(FaultSite, space))]);
  mov(dword[CTX(fault_space)], edx);
  mov(edx, dword[rcx + int(offsetof(FaultSite, lane))]);
  Label lane_known;
  test(edx, edx);
  jns(lane_known, T_NEAR);
  mov(edx, dword[CTX(entry_mask)]);
  bsf(edx, edx);  // entry_mask is nonzero here (an empty warp returns at entry)
  L(lane_known);
  mov(dword[CTX(fault_lane)], edx);
  mov(dword[CTX(resume)], 0);
  mov(eax, uint32_t(RunStatus::Fault));
  jmp(epilogue_, T_NEAR);
}

// The part of the entry both entry points share (emit_prologue and the warp
// loop's entry, warp_loop.cpp): callee-saved registers, the stack frame, the
// run's MXCSR, and the context's pointers in their fixed registers.
void Emitter::emit_entry_frame(bool stub) {
  push(rbp);
  mov(rbp, rsp);
  push(rbx);
  push(r12);
  push(r13);
  push(r14);
  push(r15);
  sub(rsp, kStackBytes);  // keeps rsp 16-byte aligned at helper calls; [rsp] is MXCSR scratch
  // Native float code assumes IEEE defaults: round to nearest, no DAZ/FTZ,
  // exceptions masked. Install them for the run; the caller's MXCSR is restored.
  // daz_: DAZ as well (lower_float.cpp, daz_eligible); both values stay on
  // the stack for helper calls and exact compares to switch.
  stmxcsr(dword[rsp + 12]);
  if (daz_) {
    mov(dword[rsp + kMxcsrIeeeOffset], 0x1F80);
    mov(dword[rsp + kMxcsrDazOffset], 0x1FC0);
    ldmxcsr(dword[rsp + kMxcsrDazOffset]);
  } else if (stub) {
    ldmxcsr(const_mem(0x1F80));
  } else {
    mov(dword[rsp + 16], 0x1F80);
    ldmxcsr(dword[rsp + 16]);
  }
  mov(rbx, rdi);
  if (!stub) mov(r12, qword[CTX(frame)]);
  mov(r13, qword[CTX(vars)]);
  mov(r15, qword[CTX(uniforms)]);
}

// The entry frame's undoing: the caller's MXCSR and registers, then return.
void Emitter::emit_exit_frame() {
  vzeroupper();
  ldmxcsr(dword[rsp + 12]);
  add(rsp, kStackBytes);
  pop(r15);
  pop(r14);
  pop(r13);
  pop(r12);
  pop(rbx);
  pop(rbp);
  ret();
}

void Emitter::emit_prologue() {
  emit_entry_frame();
  if (warp_loop_) mov(qword[rsp + kWarpLoopOffset], 0);  // a single-warp run
  L(warp_start_);  // each warp of a warp-loop call starts here (warp_loop.cpp)
  mov(dword[CTX(fault)], uint32_t(FaultKind::None));
  // A warp without launched lanes has nothing to run (as the interpreter).
  Label run;
  cmp(dword[CTX(entry_mask)], 0);
  jne(run, T_NEAR);
  mov(eax, uint32_t(RunStatus::Done));
  jmp(epilogue_, T_NEAR);
  L(run);
  if (strip_limit_) {
    // The end of the last strip holding a launched lane: 4 * (last lane + 1)
    // rounded up to a strip. (Later warps of a warp-loop call share the
    // first's entry mask and skip this.)
    bsr(eax, dword[CTX(entry_mask)]);
    lea(eax, ptr[rax * 4 + (4 + vbytes_ - 1)]);
    and_(eax, -vbytes_);
    mov(dword[rsp + kStripEndOffset], eax);
  }
  // Branch conditions are uniform but only launched lanes are guaranteed to
  // hold them (phis zero the others): branches read the first launched lane.
  mov(eax, dword[CTX(entry_mask)]);
  bsf(eax, eax);
  shl(eax, 2);
  mov(dword[rsp + kFirstLaneOffset], eax);
  if (has_phis_) {
    // Per-lane all-ones / zero masks of the launched lanes (32 x 4 and 32 x 8
    // bytes): phi copies keep lanes that were not launched at 0, as the
    // interpreter (which only moves launched lanes along edges) does.
    if (z_) {
      kmovd(k1, dword[CTX(entry_mask)]);
      for (int j = 0; j < 2; ++j) {  // 16 dwords per vector
        if (j) kshiftrd(k2, k1, 16);
        vpmovm2d(Zmm(0), j ? k2 : k1);
        vmovdqu32(ptr[r12 + 64 * j], Zmm(0));
      }
      for (int j = 0; j < 4; ++j) {  // 8 qwords per vector
        if (j) kshiftrd(k2, k1, uint8_t(8 * j));
        vpmovm2q(Zmm(0), j ? k2 : k1);
        vmovdqu64(ptr[r12 + kWarpLanes * 4 + 64 * j], Zmm(0));
      }
    } else {
      // Lane i of 8: entry_mask >> (8j + i) & 1 -> all ones / zero, by
      // variable shifts with the lane numbers (iota) as counts.
      vmovd(Xmm(0), dword[CTX(entry_mask)]);
      vpbroadcastd(Ymm(0), Xmm(0));
      vpsrld(Ymm(1), Ymm(0), 16);
      vmovdqu(Ymm(3), ptr[rip + iota_]);       // 0..7
      vmovdqu(Ymm(4), ptr[rip + iota_ + 32]);  // 8..15
      for (int j = 0; j < 4; ++j) {
        vpsrlvd(Ymm(2), Ymm(j < 2 ? 0 : 1), Ymm(j % 2 ? 4 : 3));
        vpslld(Ymm(2), Ymm(2), 31);
        vpsrad(Ymm(2), Ymm(2), 31);
        vmovdqu(ptr[r12 + 32 * j], Ymm(2));
        vpmovsxdq(Ymm(5), Xmm(2));
        vmovdqu(ptr[r12 + kWarpLanes * 4 + 64 * j], Ymm(5));
        vextracti128(Xmm(2), Ymm(2), 1);
        vpmovsxdq(Ymm(5), Xmm(2));
        vmovdqu(ptr[r12 + kWarpLanes * 4 + 64 * j + 32], Ymm(5));
      }
    }
  }
  // The memory accesses' window caches hold for the warps of one call only.
  clear_window_caches();
  emit_lane_run_flags();  // whether the warp loop writes the index vars as base + lane
  emit_const_slots();  // the entry block's constants that other segments read
  // Resume after a barrier: ctx.resume names the block to continue at. This
  // comes after the per-run setup above (first launched lane on the stack,
  // launched-lane masks), which every entry, fresh or resumed, needs.
  mov(eax, dword[CTX(resume)]);
  mov(dword[CTX(resume)], 0);
  // The entry block's test of the uniform pointer (entry_uniform_test_: no
  // barriers, so every run enters block 0 from here, and only pure strip
  // ops precede that load in the block): r15 is the same for every warp of
  // a call, and nothing above is observable, so once per run, not per warp
  // of a warp-loop call (seventeenth session).
  if (entry_uniform_test_ != kNoValue)
    emit_uniform_block_test(entry_uniform_test_, f_.insts[entry_uniform_test_].imm);
  // The warp loop's later warps enter here with eax = 0 (warp_loop.cpp:
  // everything above is the same for every full warp of a call, done once).
  L(loop_warp_start_);
  // The frame is not zeroed by the caller (frame_needs_zero() is false).
  // Every slot is written for all 32 lanes before it is read, except the
  // results of loads and atomics, which write only the lanes taking part:
  // a fresh run starts those at 0, as the interpreter's zeroed frame does.
  if (!partial_slots_.empty()) {
    Label resumed;
    test(eax, eax);
    jnz(resumed, T_NEAR);
    vxor(0, 0, 0);
    for (ValueId v : partial_slots_)
      for (unsigned off = 0; off < lane_bytes(f_.insts[v].type) * kWarpLanes; off += unsigned(vbytes_))
        vstore(ptr[r12 + int(slot(v) + off)], 0);
    L(resumed);
  }
  for (BlockId b = 0; b < f_.blocks.size(); ++b) {
    ValueId t = f_.terminator(b);
    if (t == kNoValue || f_.insts[t].op != Opcode::Barrier) continue;
    BlockId to = f_.blocks[b].succs.at(0);
    cmp(eax, to);
    je(block_label_[to], T_NEAR);
  }
  // Block 0 is emitted right after this (emit): the code falls into it (a
  // jump to the next instruction was one per warp of a warp-loop call).
}

// The slots of the entry block's constants that later segments (or other
// blocks, memory fast paths, helpers) read, filled for all 32 lanes once per
// run: between warp_start_ and loop_warp_start_, so once per warp-loop call
// (whose warps share r12's frame) and once per warp of a draw-loop stub
// (which sets r12 per warp). A slot belongs to its value alone and holds
// the constant from then on (rewriting it, as a strip-outer loop may, writes
// the same bits), so the strips of the defining segment make nothing.
// Only block 0's: it runs in every fresh run, so filling per run costs no
// more than the per-strip stores it replaces (a warp-loop call fills once
// for all its warps).
void Emitter::emit_const_slots() {
  if (f_.blocks.empty() || plan_.strip_loop_of[0] >= 0 || !prefill_consts_enabled()) return;
  for (ValueId v : f_.blocks[0].insts) {
    const Inst& in = f_.insts[v];
    if (in.op != Opcode::Const || !in.args.empty() || deferred_[v] || !plan_.escapes[v]) continue;
    const int32_t seg = plan_.segment_of[v];
    if (seg < 0 || !plan_.segments[size_t(seg)].strip) continue;
    // A draw-loop stub enters at warp_start_ for every warp: there a constant
    // its own segment reads (then loaded per strip) would cost one broadcast
    // more per warp than it saves.
    if (draw_loop_ && !wide(v) && plan_.last_use[v] >= 0) continue;
    if (wide(v)) {
      mov(rax, in.imm);
      vmovq(Xmm(0), rax);
      vpbroadcastq(V(0), Xmm(0));
    } else {
      bcast_const(0, uint32_t(in.imm & type_mask(in.type)));
    }
    for (unsigned off = 0; off < lane_bytes(in.type) * kWarpLanes; off += unsigned(vbytes_))
      vstore(ptr[r12 + int(slot(v) + off)], 0);
    prefilled_[v] = 1;
  }
  // The entry block's in-range load_uniforms that other segments read
  // (Tesla's `a` of saxpy, read by the MAD's exact block) alike: the uniform
  // block is the same for the whole run. A 32-bit load stays in its strip
  // (its register, and its fault when r15 is null: then the fill is skipped,
  // and the load faults before any reader runs); only its per-strip store
  // goes. A narrower one (u8 / u16 / i1: a scalar load, its extension and a
  // broadcast per strip, Tesla's ntid.x) is filled even when only its own
  // segment reads it, and its strips skip the load where r15 has been
  // tested before them (narrow_uniform_in_slot): readers load the slot.
  Label no_uniforms;
  bool tested = false;
  for (ValueId v : f_.blocks[0].insts) {
    const Inst& in = f_.insts[v];
    if (in.op != Opcode::LoadUniform || wide(v) || deferred_[v]) continue;
    const unsigned bytes = in.type == ir::Type::I1 ? 1 : bit_width(in.type) / 8;
    if (!plan_.escapes[v] && (bytes == 4 || plan_.last_use[v] < 0)) continue;
    if (in.imm > f_.uniform_bytes || f_.uniform_bytes - in.imm < bytes) continue;
    const int32_t seg = plan_.segment_of[v];
    if (seg < 0 || !plan_.segments[size_t(seg)].strip) continue;
    if (draw_loop_) continue;  // per warp there, the load still broadcasts per strip: no gain
    if (!tested) {
      test(r15, r15);
      jz(no_uniforms, T_NEAR);
      tested = true;
    }
    bcast_uniform(0, in);
    for (unsigned off = 0; off < lane_bytes(in.type) * kWarpLanes; off += unsigned(vbytes_))
      vstore(ptr[r12 + int(slot(v) + off)], 0);
    prefilled_[v] = 1;
  }
  L(no_uniforms);
}

bool Emitter::unroll_memory_enabled() {
  static const bool on = env_switch_on("GPURC_UNROLL_MEMORY");
  return on;
}

bool Emitter::prefill_consts_enabled() {
  static const bool on = env_switch_on("GPURC_PREFILL_CONSTS");
  return on;
}

// Per opcode: op_info(op).cross_lane, made once (op_info is out of line, and
// emit_function asks for every instruction).
const std::array<bool, ir::kNumOpcodes>& Emitter::cross_lane_ops() {
  static const std::array<bool, ir::kNumOpcodes> table = [] {
    std::array<bool, ir::kNumOpcodes> t{};
    for (int i = 0; i < ir::kNumOpcodes; ++i) t[size_t(i)] = ir::op_info(Opcode(i)).cross_lane;
    return t;
  }();
  return table;
}

// Whether the lanes of load `v` outside its mask are never read: every value
// computed from it lane by lane (pure ops that read no other lane, phis
// included, followed to their readers) is read otherwise only as the address
// or the stored value of a load or store under the same mask operand, or as
// the predicate of a vote under it; those take part with exactly the load's
// lanes (the mask AND the launch). Then the slot's other lanes are
// don't-care and need no zeroing per warp (Tesla's saxpy: x and y under the
// bound check, read by the MAD, its vote, the phi and the store of y). A var
// store, a trap, a branch, a cross-lane op or any other reader: false.
static bool load_off_lanes_unread(const ir::Function& f, ValueId v, const std::vector<std::vector<ValueId>>& readers) {
  const ValueId m = f.insts[v].args.back();
  std::vector<uint8_t> seen(f.insts.size(), 0);
  std::vector<ValueId> work{v};
  seen[v] = 1;
  while (!work.empty()) {
    const ValueId x = work.back();
    work.pop_back();
    for (ValueId u : readers[x]) {
      const ir::Inst& ui = f.insts[u];
      const size_t n = ui.args.size();
      bool ok = false;
      switch (ui.op) {
        case Opcode::Load:  // the address only
          ok = n == 2 && ui.args[1] == m && ui.args[0] == x;
          break;
        case Opcode::Store:  // the address or the value
          ok = n == 3 && ui.args[2] == m && ui.args[2] != x;
          break;
        case Opcode::Any: case Opcode::All: case Opcode::Ballot:  // the predicate
          ok = n == 2 && ui.args[1] == m && ui.args[1] != x;
          break;
        default: {
          const ir::OpInfo& info = ir::op_info(ui.op);
          if (!info.pure || info.cross_lane || info.effect || info.terminator) return false;
          if (!seen[u]) {
            seen[u] = 1;
            work.push_back(u);
          }
          ok = true;
        }
      }
      if (!ok) return false;
    }
  }
  return true;
}

void Emitter::emit_function() {
  warp_loop_ = true;  // a second entry running many warps per call, unless the code stops at barriers
  for (ir::BlockId b = 0; b < f_.blocks.size(); ++b)
    if (ValueId t = f_.terminator(b); t != kNoValue && f_.insts[t].op == Opcode::Barrier) warp_loop_ = false;
  draw_loop_ = warp_loop_ && f_.unlaunched_lanes_free && !f_.no_draw_loop &&
               draw_loop_enabled();  // a vertex shader: draw_loop.cpp
  // A load under the entry mask writes every launched lane; under the
  // unlaunched-lanes contract the other lanes are don't-care, and with no
  // cross-lane op but votes (which read only launched lanes) nothing reads
  // them: its slot needs no zeroing per warp (G13's device loads).
  // (One walk: whether some op but a vote reads other lanes, whether there
  // is a memory op, and the loads whose slots only some lanes write.)
  bool cross_lane = false, memory = false;
  std::vector<ValueId> loads;
  for (const ir::Inst& in : f_.insts) {
    if (in.block == kNoBlock) continue;
    const bool access = in.op == Opcode::Load || in.op == Opcode::Store || in.op == Opcode::AtomicRmw ||
                        in.op == Opcode::AtomicCas;
    memory |= access;
    if (access && in.op != Opcode::Store && in.type != ir::Type::Void) loads.push_back(ValueId(&in - f_.insts.data()));
    cross_lane |= cross_lane_ops()[size_t(in.op)] && in.op != Opcode::Ballot && in.op != Opcode::Any &&
                  in.op != Opcode::All;
  }
  const bool lanes_private = f_.unlaunched_lanes_free && !cross_lane;
  // (Only with strips to limit: an empty Tesla kernel would pay the
  // prologue's bsr per warp for nothing.)
  bool strip_ops = false;
  for (const Segment& sg : plan_.segments)
    for (ValueId v : sg.ops) strip_ops |= sg.strip && !deferred_[v] && f_.insts[v].op != Opcode::Const;
  strip_limit_ = lanes_private && strip_limit_enabled() && !memory && strip_ops;
  has_memory_ops_ = memory;
  std::vector<std::vector<ValueId>> readers;  // (made for the first load under a mask)
  for (ValueId v : loads) {
    const ir::Inst& in = f_.insts[v];
    if (lanes_private && in.op == Opcode::Load && !in.args.empty() && f_.insts[in.args.back()].op == Opcode::EntryMask)
      continue;
    if (in.op == Opcode::Load && in.args.size() == 2) {
      if (readers.empty()) {
        readers.resize(f_.insts.size());
        for (const ir::Inst& r : f_.insts)
          if (r.block != kNoBlock)
            for (ValueId a : r.args)
              if (a < readers.size()) readers[a].push_back(ValueId(&r - f_.insts.data()));
      }
      if (load_off_lanes_unread(f_, v, readers)) continue;
    }
    partial_slots_.push_back(v);
  }
  emit_prologue();  // falls through into block 0
  for (BlockId b = 0; b < f_.blocks.size(); ++b) emit_block(b);

  L(fault_return_);  // eax already holds the status
  L(epilogue_);
  mov(dword[CTX(status)], eax);
  if (warp_loop_) {
    cmp(qword[rsp + kWarpLoopOffset], 0);
    jne(loop_next_, T_NEAR);
  }
  emit_exit_frame();
  emit_cold_code();  // out-of-line fixes (lower_float.cpp), which jump back
  emit_fault_common();  // after the cold code: its fault sites join the table
  emit_warp_loop();
  emit_draw_loop();
  // The constants are already in place, ahead of the code (ConstPool).
}

void Emitter::emit_block(BlockId b) {
  L(block_label_[b]);
  cur_block_ = b;
  if (f_.terminator(b) == kNoValue) throw CompileError("x64 jit: block " + std::to_string(b) + " has no terminator");
  if (plan_.strip_loop_of[b] >= 0) {
    emit_strip_loop(plan_.strip_loops[plan_.strip_loop_of[b]]);
    return;
  }
  for (uint32_t si : plan_.block_segments[b]) {
    const Segment& s = plan_.segments[si];
    if (s.strip) emit_strip_segment(s);
    else emit_warp_op(s.ops[0]);
  }
  emit_terminator(b);
}

void Emitter::emit_strip_segment(const Segment& s) {
  // Every op left to a memory op's fallback (an address chain): no code.
  if (std::all_of(s.ops.begin(), s.ops.end(), [&](ValueId v) { return deferred_[v] != 0; })) return;
  // The index chain's lane-0 version first (memory_fast.cpp), jumping past
  // the strips below when it decides the warp.
  Label lane0_done;
  const bool lane0_version = emit_index_segment(s, lane0_done);
  struct Lane0Done {  // bound after the strips, however this returns
    Emitter& e;
    Label& l;
    bool on;
    ~Lane0Done() {
      if (on) e.L(l);
    }
  } lane0_bind{*this, lane0_done, lane0_version};
  const bool hoisted = hoist_uniform_test(s);
  store_home_probe(s, hoisted);  // (before the home registers: the probe uses them)
  load_home_hoist(s);
  struct HomesDone {  // the hoisted pointers end with the segment, however it returns
    Emitter& e;
    ~HomesDone() { std::fill(std::begin(e.load_home_hoisted_), std::end(e.load_home_hoisted_), kNoValue); }
  } homes_done{*this};
  auto body = [&] {
    reset_cache();
    in_segment_body_ = true;
    uniforms_checked_ = hoisted;
    for (ValueId v : s.ops) {
      lower_strip_op(v);
      end_op(v);
    }
    in_segment_body_ = false;
    reset_cache();
  };
  xor_(r14d, r14d);
  // Short segments (most of divergent guest code) are emitted once per strip:
  // the loop's add / cmp / branch would cost as much as their work.
  if (s.ops.size() <= (has_memory_ops_ && !strip_limit_ && unroll_memory_enabled() ? kUnrollMaxOpsMemory : kUnrollMaxOps)) {
    for (int o = 0; o < kWarpLaneBytes4; o += vbytes_) {
      if (o) add(r14d, vbytes_);
      body();
    }
    return;
  }
  Label loop;
  L(loop);
  body();
  add(r14d, vbytes_);
  if (strip_limit_) cmp(r14d, dword[rsp + kStripEndOffset]);  // the strips past the last launched lane: skipped
  else cmp(r14d, kWarpLaneBytes4);
  jb(loop, T_NEAR);
}

// Register r = load_uniform `in` in every lane (offset in range, r15 known
// good): a u8/u16 is zero-extended, an i1 is any nonzero bit of its byte.
void Emitter::bcast_uniform(int r, const Inst& in) {
  const unsigned bytes = in.type == ir::Type::I1 ? 1 : bit_width(in.type) / 8;
  if (bytes == 4) {
    // (the same bytes as vpbroadcastd(V(r), dword[r15 + imm]), without building the address)
    if (!fast_vex_mem(vpbroadcastd_kRMB, V(r), nullptr, MemRef{15, 0, 0, int32_t(in.imm)}))
      vpbroadcastd(V(r), dword[r15 + int(in.imm)]);
    return;
  }
  if (bytes == 1) movzx(eax, byte[r15 + int(in.imm)]);
  else movzx(eax, word[r15 + int(in.imm)]);
  if (in.type == ir::Type::I1) {
    test(eax, eax);
    setne(al);
    movzx(eax, al);
  }
  bcast_gpr(r, eax);
}

// r15 (the uniform block) tested for null; a null block is load_uniform v's
// fault at `offset`, out of line (emit_cold_code), so the usual path falls
// through.
void Emitter::emit_uniform_block_test(ValueId v, uint64_t offset) {
  Label& fault = cold_label();
  test(r15, r15);
  jz(fault, T_NEAR);
  push_cold([this, &fault, v, offset] {
    L(fault);
    emit_fault_return(FaultKind::OutOfBounds, v, offset, uint32_t(Space::Const));
  });
}

// The test of the uniform block's pointer (r15) that a segment's first
// load_uniform makes, once before the segment's strips instead of in every
// strip: what the strips do before that load is pure (no store_var, no
// other op that can fault comes first), so faulting before strip 0 runs is
// faulting at that load (the same fault: kind, op, offset; no lane).
// False when the segment needs no such test.
bool Emitter::hoist_uniform_test(const Segment& s) {
  if (uniforms_known_nonnull()) return false;
  for (ValueId v : s.ops) {
    if (deferred_[v]) continue;  // no code here
    const Inst& in = f_.insts[v];
    if (in.op == Opcode::StoreVar || in.op == Opcode::LoadUniformIdx || uidx_fold(v)) return false;
    if (in.op != Opcode::LoadUniform) continue;
    const unsigned bytes = in.type == ir::Type::I1 ? 1 : bit_width(in.type) / 8;
    if (wide(v) || in.imm > f_.uniform_bytes || f_.uniform_bytes - in.imm < bytes) return false;
    emit_uniform_block_test(v, in.imm);
    return true;
  }
  return false;
}

void Emitter::lower_strip_op(ValueId v) {
  if (deferred_[v]) return;  // computed by the memory op's fallback (materialize_deferred)
  // In its slot already: no code here. A reader that needs it in a register
  // loads the slot (use), one load as the broadcast was; readers that take
  // a constant as an immediate or a pool operand (and the alignment test a
  // memory op defers) need nothing.
  if (prefilled_[v] && (f_.insts[v].op == Opcode::Const || narrow_uniform_in_slot(v))) {
    vals_[v].in_frame = true;
    return;
  }
  uniform_index_note(v);
  {  // select_mask_of_ survives only selects, the lane-equal load_uniform_idx and 32-bit consts (no k1 / vector 0 there)
    const Inst& in = f_.insts[v];
    if (!((in.op == Opcode::Select && !wide(v)) || (in.op == Opcode::LoadUniformIdx && lane_equal_[in.args[0]]) ||
          (in.op == Opcode::Const && !wide(v))))
      select_mask_of_ = kNoValue;
  }
  const bool keeps_kmask = kmask_keeps(v);
  if (!keeps_kmask) kmask_clear();
  if (!lower_native(v)) {
    uidx_cached_ = kNoValue;
    lower_helper(v);
  }
  if (!keeps_kmask) kmask_clear();  // (masks its lowering kept on one path only)
  if (prefilled_[v]) vals_[v].in_frame = true;  // the prologue filled its slot: end_op stores nothing
}

// A prefilled u8 / u16 / i1 load_uniform (emit_const_slots) whose strip
// needs no load: r15 was tested before this op in this strip (the segment's
// hoisted test, or an earlier load's), so the prologue's fill ran (the
// same r15 for the whole run) and the load cannot fault. Its broadcast
// (scalar load, extension, vmovd, vpbroadcastd on AVX2) is left out, and
// readers load the slot as they do a prefilled constant's.
bool Emitter::narrow_uniform_in_slot(ValueId v) const {
  const Inst& in = f_.insts[v];
  if (in.op != Opcode::LoadUniform || wide(v)) return false;
  const unsigned bytes = in.type == ir::Type::I1 ? 1 : bit_width(in.type) / 8;
  if (bytes == 4 || in.imm > f_.uniform_bytes || f_.uniform_bytes - in.imm < bytes) return false;
  return (in_segment_body_ && uniforms_checked_) || uniforms_known_nonnull();
}

// The 32-bit integer ops lowered inline (lower_int.cpp) and f32 arithmetic:
// no call, no write of k5..k7.
bool Emitter::kmask_keeps(ValueId v) const {
  const Inst& in = f_.insts[v];
  if (wide(v)) return false;
  for (ValueId a : in.args)
    if (a < f_.insts.size() && wide(a)) return false;
  switch (in.op) {
    case Opcode::Const: case Opcode::Select: case Opcode::ICmp: case Opcode::IAdd: case Opcode::ISub:
    case Opcode::IMul: case Opcode::And: case Opcode::Or: case Opcode::Xor: case Opcode::Shl: case Opcode::LShr:
    case Opcode::AShr: case Opcode::Extract16: case Opcode::Insert16: case Opcode::Zext: case Opcode::Sext:
    case Opcode::Trunc: case Opcode::Bitcast:
      return true;
    // f32 arithmetic is always native (lower_float) and its tests and
    // out-of-line fixes use k1..k4 only: Tesla's MAD sum between its range
    // tests and their `and` (kand_pair).
    case Opcode::FAdd: case Opcode::FSub: case Opcode::FMul:
      return in.type == ir::Type::F32;
    default:
      return false;
  }
}

void Emitter::lower_helper(ValueId v) {
  kmask_clear();  // the call clobbers the k registers
  const Inst& in = f_.insts[v];
  if (in.args.size() > size_t(rt::kMaxArgs))
    throw CompileError("x64 jit: " + std::string(op_name(in.op)) + " has too many operands");
  spill_live_for_call(v);
  if (auto it = eval_op_of_.find(v); it != eval_op_of_.end()) {  // a segment emitted once per strip
    emit_eval_call(it->second);
    vals_[v].in_frame = true;
    store_home_copy(v);
    return;
  }
  auto d = std::make_unique<rt::EvalOp>();
  d->op = lane_op(f_, v);
  std::string why;
  if (!lane_op_supported(d->op, &why))
    throw CompileError("x64 jit: %" + std::to_string(v) + " (block " + std::to_string(in.block) + "): " + why);
  d->nargs = uint32_t(in.args.size());
  for (size_t i = 0; i < in.args.size(); ++i) {
    d->arg_slot[i] = slot(in.args[i]);
    d->arg_bytes[i] = uint8_t(lane_bytes(f_.insts[in.args[i]].type));
  }
  d->res_slot = slot(v);
  d->res_bytes = uint8_t(lane_bytes(in.type));
  d->lanes = uint32_t(lanes_);
  emit_eval_call(d.get());
  eval_op_of_[v] = d.get();
  eval_ops.push_back(std::move(d));
  vals_[v].in_frame = true;
  store_home_copy(v);
}

// A store home's value computed by a helper (which writes the slot): this
// strip's lanes copied to where the cell points (no-op when that is the slot).
void Emitter::store_home_copy(ValueId v) {
  if (!load_homed(v) || f_.insts[v].op == Opcode::Load) return;
  vload(0, ptr[r12 + r14 + int(slot(v))]);
  vstore(strip_ref(v), 0);
}

void Emitter::emit_eval_call(const rt::EvalOp* d) {
  mov(rdi, reinterpret_cast<uint64_t>(d));
  mov(rsi, r12);
  mov(edx, r14d);
  shr(edx, 2);
  call_abs(reinterpret_cast<const void*>(&rt::eval_strip));
}

void Emitter::emit_warp_op(ValueId v) {
  const Inst& in = f_.insts[v];
  if (in.op == Opcode::Budget) {
    Label ok;
    mov(rax, in.imm);
    sub(qword[CTX(budget)], rax);
    jge(ok, T_NEAR);
    emit_fault_return(FaultKind::Watchdog, v);
    L(ok);
    return;
  }
  if (in.args.size() > size_t(rt::kMaxArgs))
    throw CompileError("x64 jit: " + std::string(op_name(in.op)) + " has too many operands");
  if (emit_vote(v)) {
    vals_[v].in_frame = true;
    return;
  }
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
  Label done, home_done, stored_home;
  if (v < store_homed_.size() && store_homed_[v]) {  // the strips stored it when the cell is not the slot
    const ValueId data = in.args[1];
    lea(rax, ptr[r12 + int(slot(data))]);
    cmp(qword[r12 + load_home_cell_[data]], rax);
    jne(stored_home, T_NEAR);
  }
  const bool home = load_homed(v);  // the contiguous path sets the cell and jumps to home_done
  if (home) {
    load_home_active_cell_ = load_home_cell_[v];
    load_home_active_slot_ = slot(v);
    load_home_done_ = &home_done;
  }
  bool fast = emit_memory_fast(v, done);  // falls through to the helper when it cannot do the access
  load_home_active_cell_ = -1;
  load_home_done_ = nullptr;
  mov(rdi, reinterpret_cast<uint64_t>(d.get()));
  mov(rsi, rbx);
  call_abs(reinterpret_cast<const void*>(&rt::run_warp_op));
  test(eax, eax);
  jnz(fault_return_, T_NEAR);
  if (fast) L(done);
  if (home) {  // every other path filled the slot: the cell points at it
    lea(rax, ptr[r12 + int(slot(v))]);
    mov(qword[r12 + load_home_cell_[v]], rax);
    L(home_done);
  }
  L(stored_home);
  warp_ops.push_back(std::move(d));
  vals_[v].in_frame = true;
}

Emitter::WindowOffsets Emitter::window_offsets(uint8_t mem_attr) {
  const size_t space = size_t(mem_space(mem_attr));
  return {offsetof(WarpContext, windows) + space * sizeof(MemWindow),
          offsetof(WarpContext, extra_windows) + space * sizeof(MemWindow) * kExtraWindows};
}

void Emitter::emit_next_window(const WindowOffsets& w, Label& try_window) {
  Label after_primary;
  lea(rax, ptr[rbx + int(w.primary)]);
  cmp(r11, rax);
  jne(after_primary, T_NEAR);
  lea(r11, ptr[rbx + int(w.extra)]);
  jmp(try_window, T_NEAR);
  L(after_primary);
  add(r11, int(sizeof(MemWindow)));
  lea(rax, ptr[rbx + int(w.extra + sizeof(MemWindow) * kExtraWindows)]);
  cmp(r11, rax);
  jb(try_window, T_NEAR);
}

// r = bit l set where lane l of the 32 i1 lanes at frame offset `off` has
// bit 0 set (the other bits are not read). Avx512: one vptestmd per 16
// lanes against a broadcast 1. Avx2 (sixteenth session): each dword's bit 0
// moved to its sign, the four vectors packed with signed saturation to
// bytes (0x80000000 -> 0x8000 -> 0x80, 0 stays 0), the 128-bit halves'
// interleaving undone by one vpermd, then vpmovmskb: 14 instructions where
// a vmovmskps, shift and or per vector took 20. (VEX vpslld has no memory
// operand: a load each. AVX-512 since the eighteenth session: one broadcast
// 1, then each vptestmd reads its slot, 5 instructions instead of 6.)
//
// likely_all (masks that are all ones in the common case: the bound check's
// lanes, the MAD's `common` under its vote): Avx2 first ANDs the four
// vectors and tests bit 0 of every lane with one vptest (CF: no lane lacks
// it); then r = all ones without the packs (7 instructions instead of 14,
// 21 when some lane is 0). Avx512's conversion is short already.
void Emitter::lane_bits(const Reg32& r, uint32_t off, bool likely_all) {
  Label done;
  if (likely_all && !z_) {
    vmovdqu(Ymm(0), ptr[r12 + int(off)]);
    for (int i = 1; i < 4; ++i) vpand(Ymm(0), Ymm(0), ptr[r12 + int(off + 32 * i)]);
    vptest(Ymm(0), const_vec(1));  // CF = no lane without bit 0
    mov(r, uint32_t(-1));          // (keeps the flags)
    jc(done, T_NEAR);
  }
  if (z_) {
    vpbroadcastd(Zmm(0), const_mem(1));
    for (int i = 0; i < 2; ++i) vptestmd(Opmask(1 + i), Zmm(0), ptr[r12 + int(off + 64 * i)]);
    kunpckwd(k1, k2, k1);
    kmovd(r, k1);
    return;
  }
  if (!lane_bits_perm_) {
    // After the packs, dword j of the result holds lanes 4j'..4j'+3 with
    // j = 0..7 -> vector 0 lanes 0-3, vector 1 0-3, vector 2 0-3, vector 3
    // 0-3, then the same for lanes 4-7: gather them back in lane order.
    static constexpr uint32_t kOrder[8] = {0, 4, 1, 5, 2, 6, 3, 7};
    uint8_t* p = pool_.alloc(32);
    std::memcpy(p, kOrder, sizeof kOrder);
    lane_bits_perm_ = p;
  }
  for (int i = 0; i < 4; ++i) {
    vmovdqu(Ymm(i), ptr[r12 + int(off + 32 * i)]);
    vpslld(Ymm(i), Ymm(i), 31);
  }
  vpackssdw(Ymm(0), Ymm(0), Ymm(1));  // words: v0 0-3, v1 0-3 | v0 4-7, v1 4-7
  vpackssdw(Ymm(2), Ymm(2), Ymm(3));  // v2, v3 alike
  vpacksswb(Ymm(0), Ymm(0), Ymm(2));  // bytes: v0 0-3, v1 0-3, v2 0-3, v3 0-3 | the lanes 4-7
  vmovdqu(Ymm(1), ptr[rip + lane_bits_perm_]);
  vpermd(Ymm(0), Ymm(1), Ymm(0));
  vpmovmskb(r, Ymm(0));
  L(done);
}

void Emitter::store_uniform_gpr(uint32_t off, const Reg32& r) {
  bcast_gpr(0, r);
  for (int o = 0; o < kWarpLaneBytes4; o += vbytes_) vstore(ptr[r12 + int(off + o)], 0);
}

// ballot / any / all: bit masks of the predicate and mask operands' 32 lanes.
// Over the whole warp the result is one value, computed in eax; narrower
// clusters go through emit_cluster_vote.
bool Emitter::emit_vote(ValueId v) {
  const Inst& in = f_.insts[v];
  if (in.op != Opcode::Ballot && in.op != Opcode::Any && in.op != Opcode::All) return false;
  if (in.args.size() != 2 || wide(in.args[0]) || wide(in.args[1]) || wide(v)) return false;
  if (!valid_cluster_imm(in.imm)) return false;  // the helper faults Unsupported, as the interpreter
  if (auto it = vote_mask_cache_.find(v); it != vote_mask_cache_.end()) {
    mov(ecx, dword[r12 + it->second]);  // stored by a dominating access of the same mask (plan_mask_cache)
  } else {
    lane_bits(ecx, slot(mask_lanes_value(in.args[1])), true);  // (A of a deferred `and A, entry_mask`)
    and_(ecx, dword[CTX(entry_mask)]);  // lanes taking part
  }
  if (auto it = vote_not_source_.find(v); it != vote_not_source_.end()) {
    lane_bits(eax, slot(it->second), true);  // the lanes of A, for `not A` (any(not A): A mostly all ones)
    not_(eax);
  } else {
    lane_bits(eax, slot(in.args[0]));
  }
  and_(eax, ecx);
  if (!whole_warp_cluster(in.imm)) {
    emit_cluster_vote(v);
    return true;
  }
  if (in.op == Opcode::Any) {
    // Into a branch: the cond_br tests eax, nonzero iff some lane votes.
    if (vote_feeds_branch_only(v)) {
      vote_in_eax_ = v;
      return true;
    }
    test(eax, eax);
    setne(al);
    movzx(eax, al);
  } else if (in.op == Opcode::All) {
    cmp(eax, ecx);
    sete(al);
    movzx(eax, al);
  }
  if (vote_feeds_branch_only(v)) {
    vote_in_eax_ = v;  // the cond_br tests eax; no slot, no stores
    return true;
  }
  store_uniform_gpr(slot(v), eax);
  return true;
}

// A ballot / any / all (emit_vote) of `not A` whose only reader it is (the
// MAD's `any (not common)` of Tesla): the vote inverts A's lane bits, so
// the not is deferred (never computed: no strip op, no slot) and A kept in
// its slot. Both are 0/1 lanes; lanes outside the mask or the launch drop
// out of the AND with the taking-part lanes either way.
void Emitter::plan_vote_nots() {
  for (ValueId v = 0; v < f_.insts.size(); ++v) {
    const Inst& in = f_.insts[v];
    // (the opcode test inline first: mask_vote is out of line, and most values are no vote)
    if (in.block == kNoBlock || (in.op != Opcode::Any && in.op != Opcode::All && in.op != Opcode::Ballot) ||
        !mask_vote(v))
      continue;
    const ValueId n = in.args[0];
    const Inst& ni = f_.insts[n];
    if (ni.op != Opcode::Not || ni.type != ir::Type::I1 || ni.args.size() != 1 || ni.block == kNoBlock) continue;
    if (uses_[n] != 1 || deferred_[n] || plan_.segment_of[n] < 0 || !plan_.segments[plan_.segment_of[n]].strip)
      continue;
    const ValueId a = ni.args[0];
    if (wide(a) || f_.insts[a].type != ir::Type::I1 || deferred_[a]) continue;
    deferred_[n] = 1;
    plan_.escapes[a] = 1;
    vote_not_source_[v] = a;
  }
}

// Clusters of W < 32 lanes, from eax = taking-part lanes with pred and ecx =
// taking-part lanes: lane l reads the W bits of its cluster, starting at
// bit c = l & ~(W-1), with a per-lane variable shift of the broadcast bit
// set. Ballot keeps them; any tests them for != 0; all tests the taking-part
// lanes without pred (ecx & ~eax) for == 0.
void Emitter::emit_cluster_vote(ValueId v) {
  const Inst& in = f_.insts[v];
  const unsigned width = cluster_width(in.imm);
  if (in.op == Opcode::All) {
    not_(eax);
    and_(eax, ecx);
  }
  bcast_gpr(0, eax);
  bcast_const(2, ~(width - 1));        // lane -> its cluster's first lane
  bcast_const(3, (1u << width) - 1);  // the W bits of one cluster
  const int lanes = vbytes_ / 4;
  for (int i = 0; i < ir::kWarpLanes / lanes; ++i) {
    vload(1, ptr[rip + iota_]);
    if (i) vpaddd(V(1), V(1), const_vec(uint32_t(i * lanes)));  // lane numbers of this vector
    vand(1, 1, 2);
    vpsrlvd(V(1), V(0), V(1));
    vand(1, 1, 3);
    if (in.op != Opcode::Ballot) vpminud(V(1), V(1), const_vec(1));  // != 0 -> 1
    if (in.op == Opcode::All) {
      if (z_) vpxord(V(1), V(1), const_vec(1));
      else vpxor(V(1), V(1), const_vec(1));
    }
    vstore(ptr[r12 + int(slot(v) + uint32_t(i * vbytes_))], 1);
  }
}

// The usual shape of divergent guest code: `%c = any ...` as the block's last
// op before `cond_br %c` and read nowhere else. Nothing runs between the two,
// so the result can stay in eax (over the whole warp it is uniform: the same
// for every lane).
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

// Loads and stores whose every taking-part lane lies in the space's window
// (ctx.windows, read at run time): a check pass over the lanes, then the
// accesses in lane order. Anything else (no window, a lane outside it) jumps
// past this code to the helper, which does the whole op with exact fault
// semantics; the check pass has no side effects, so nothing is done twice.
bool Emitter::emit_memory_fast(ValueId v, Label& done) {
  const Inst& in = f_.insts[v];
  bool is_load = in.op == Opcode::Load;
  if (!is_load && in.op != Opcode::Store) return false;
  if ((in.attr & 15) >= kNumSpaces || (in.attr >> 4) > 2) return false;  // the helper faults Unsupported
  if (in.args.size() != (is_load ? 2u : 3u)) return false;
  ir::Type addr_t = f_.insts[in.args[0]].type;
  if (addr_t != ir::Type::I32 && addr_t != ir::Type::I64) return false;
  ir::Type data_t = is_load ? in.type : f_.insts[in.args[1]].type;
  unsigned bytes = data_t == ir::Type::I1 ? 1 : bit_width(data_t) / 8;
  unsigned lb = lane_bytes(data_t), ab = lane_bytes(addr_t);
  uint32_t addr_slot = slot(in.args[0]);
  uint32_t data_slot = is_load ? slot(v) : slot(in.args[1]);
  const WindowOffsets windows = window_offsets(in.attr);
  Label slow, range, check, minmax, access, try_window, next_window;
  auto taking_part = [&] {  // ecx = lanes taking part
    lane_bits(ecx, slot(in.args.back()));
    and_(ecx, dword[CTX(entry_mask)]);
  };
  auto load_addr = [&] {  // rsi = address of lane eax
    if (ab == 4) mov(esi, dword[r12 + rax * 4 + int(addr_slot)]);
    else mov(rsi, qword[r12 + rax * 8 + int(addr_slot)]);
  };
  auto load_offset = [&] {  // rsi = address of lane eax - r9 (CF: below r9)
    load_addr();
    sub(rsi, r9);
  };
  if (auto it = indexed_.find(v); it != indexed_.end()) {
    Label general;
    if (it->second.narrow) emit_narrow_fast(v, it->second, done, general);
    else emit_indexed_fast(v, it->second, done, general);
    L(general);
    lane0_restore(it->second);  // the deferred index (a lane-0 var's load_var) reads every lane
    materialize_deferred(it->second.deferred);  // the address slot the code below and the helper read
  }
  taking_part();
  jz(done, T_NEAR);  // no lane takes part
  // One address for every lane (a parameter, a counter): one access.
  if (f_.insts[in.args[0]].uniform) emit_uniform_address(v, done);
  emit_consecutive_access(v, done);
  // r11 walks the space's windows: windows[space], then extra_windows[space][..]
  // until one holds every lane or one is empty (the rest are then empty too).
  lea(r11, ptr[rbx + int(windows.primary)]);
  L(try_window);
  mov(r8, qword[r11 + int(offsetof(MemWindow, host))]);
  test(r8, r8);
  jz(range, T_NEAR);
  mov(r9, qword[r11 + int(offsetof(MemWindow, base))]);
  mov(r10, qword[r11 + int(offsetof(MemWindow, size))]);
  sub(r10, bytes);
  jb(next_window, T_NEAR);  // window smaller than one access
  if (z_ && (bytes == 4 || bytes == 8) && lb == bytes) {
    // AVX-512, 4- and 8-byte data: the window offsets of all 32 lanes as
    // qwords (zmm6..9; the register cache is empty between segments), one
    // unsigned compare for the check, then gathers / scatters under the lane
    // mask. Scatters write overlapping addresses in lane order.
    vpbroadcastq(Zmm(1), r9);
    vpbroadcastq(Zmm(2), r10);
    xor_(edx, edx);
    for (int q = 0; q < 4; ++q) {
      Zmm o(6 + q);
      if (ab == 4) vpmovzxdq(o, ptr[r12 + int(addr_slot + 32 * q)]);
      else vmovdqu64(o, ptr[r12 + int(addr_slot + 64 * q)]);
      vpsubq(o, o, Zmm(1));  // below the base wraps past size - bytes
      vpcmpuq(k2, o, Zmm(2), 6);
      kmovb(eax, k2);
      if (q) shl(eax, uint8_t(8 * q));
      or_(edx, eax);
    }
    test(edx, ecx);
    jnz(next_window, T_NEAR);
    if (lb == bytes) {
      // Consecutive elements (lane l at lane 0's offset + l * bytes, for the
      // taking-part lanes): masked vector moves instead of gathers / scatters.
      Label scattered;
      const int shift = bytes == 4 ? 2 : 3;
      bsf(eax, ecx);
      load_offset();
      shl(eax, shift);
      sub(rsi, rax);  // lane 0's offset
      vpmovzxdq(Zmm(3), ptr[rip + iota_]);
      vpsllq(Zmm(3), Zmm(3), uint8_t(shift));
      xor_(edx, edx);
      for (int q = 0; q < 4; ++q) {
        lea(rax, ptr[rsi + 8 * q * int(bytes)]);
        vpbroadcastq(Zmm(1), rax);
        vpaddq(Zmm(1), Zmm(1), Zmm(3));
        vpcmpeqq(k2, Zmm(1), Zmm(6 + q));
        kmovb(eax, k2);
        if (q) shl(eax, uint8_t(8 * q));
        or_(edx, eax);
      }
      not_(edx);
      test(edx, ecx);
      jnz(scattered, T_NEAR);
      add(rsi, r8);
      emit_contiguous_access(is_load, bytes, data_slot, rsi);
      jmp(done, T_NEAR);
      L(scattered);
    }
    for (int q = 0; q < 4; ++q) {
      mov(eax, ecx);
      if (q) shr(eax, uint8_t(8 * q));
      kmovb(k2, eax);
      Zmm o(6 + q);
      if (is_load) {
        kmovb(k3, eax);  // the gather clears k2
        if (bytes == 4) {
          vpgatherqd(Ymm(1) | k2, ptr[r8 + o]);
          vmovdqu32(ptr[r12 + int(data_slot + 32 * q)] | k3, Ymm(1));
        } else {
          vpgatherqq(Zmm(1) | k2, ptr[r8 + o]);
          vmovdqu64(ptr[r12 + int(data_slot + 64 * q)] | k3, Zmm(1));
        }
      } else if (bytes == 4) {
        vmovdqu32(Ymm(1), ptr[r12 + int(data_slot + 32 * q)]);
        vpscatterqd(ptr[r8 + o], Ymm(1) | k2);
      } else {
        vmovdqu64(Zmm(1), ptr[r12 + int(data_slot + 64 * q)]);
        vpscatterqq(ptr[r8 + o], Zmm(1) | k2);
      }
    }
    jmp(done, T_NEAR);
  }
  if (!z_ && (bytes == 4 || bytes == 8) && lb == bytes) {
    // Avx2, every lane taking part, consecutive elements inside the window:
    // plain vector moves.
    Label scalar;
    const int shift = bytes == 4 ? 2 : 3;
    cmp(ecx, uint32_t(-1));
    jne(scalar, T_NEAR);
    xor_(eax, eax);
    load_addr();  // rsi = lane 0's address
    if (ab == 4) {  // the dword compare below sees no wrap past 2^32
      lea(rax, ptr[rsi + 31 * int(bytes)]);
      shr(rax, 32);
      jnz(scalar, T_NEAR);
    }
    lanes_in_sequence(addr_slot, ab, shift);
    cmp(edx, uint32_t(-1));
    jne(scalar, T_NEAR);
    sub(rsi, r9);
    jb(next_window, T_NEAR);
    cmp(rsi, r10);
    ja(next_window, T_NEAR);
    lea(rax, ptr[rsi + 31 * int(bytes)]);
    cmp(rax, r10);
    ja(next_window, T_NEAR);
    add(rsi, r8);
    emit_contiguous_access(is_load, bytes, data_slot, rsi);
    jmp(done, T_NEAR);
    L(scalar);
  }
  mov(edx, ecx);
  L(check);
  bsf(eax, edx);
  load_offset();
  jb(next_window, T_NEAR);
  cmp(rsi, r10);
  ja(next_window, T_NEAR);
  lea(edi, ptr[rdx - 1]);
  and_(edx, edi);
  jnz(check, T_NEAR);
  xor_(r9d, r9d);  // the access pass adds r8 + (address - r9)
  sub(r8, qword[r11 + int(offsetof(MemWindow, base))]);
  jmp(access, T_NEAR);

  // Some lane is outside this window: the next one, if any.
  L(next_window);
  emit_next_window(windows, try_window);

  // Not all in the window: ask ctx.memory for one buffer holding the whole
  // span [lowest address, highest address + bytes) of the lanes.
  L(range);
  mov(edx, ecx);
  mov(rdi, uint64_t(-1));
  xor_(r11d, r11d);
  L(minmax);
  bsf(eax, edx);
  load_addr();
  cmp(rsi, rdi);
  cmovb(rdi, rsi);
  cmp(rsi, r11);
  cmova(r11, rsi);
  lea(eax, ptr[rdx - 1]);
  and_(edx, eax);
  jnz(minmax, T_NEAR);
  mov(qword[rsp + kScratchOffset], rdi);
  mov(rdx, rdi);
  mov(rcx, r11);
  mov(rdi, rbx);
  mov(esi, uint32_t(mem_space(in.attr)));
  mov(r8d, bytes);
  call_abs(reinterpret_cast<const void*>(&rt::translate_span));
  test(rax, rax);
  jz(slow, T_NEAR);
  sub(rax, qword[rsp + kScratchOffset]);
  mov(r8, rax);  // host address of guest address 0 of that buffer (modulo 2^64)
  xor_(r9d, r9d);
  taking_part();

  L(access);
  bsf(eax, ecx);
  load_offset();
  Address lane_data = lb == 8 ? ptr[r12 + rax * 8 + int(data_slot)] : ptr[r12 + rax * 4 + int(data_slot)];
  if (is_load) {
    switch (bytes) {
      case 1: movzx(edi, byte[r8 + rsi]); break;
      case 2: movzx(edi, word[r8 + rsi]); break;
      case 4: mov(edi, dword[r8 + rsi]); break;
      default: mov(rdi, qword[r8 + rsi]); break;
    }
    if (data_t == ir::Type::I1) {
      test(edi, edi);
      setne(dil);
      movzx(edi, dil);
    }
    if (lb == 8) mov(lane_data, rdi);
    else mov(lane_data, edi);
  } else {
    if (lb == 8) mov(rdi, lane_data);
    else mov(edi, lane_data);
    switch (bytes) {
      case 1:
        if (data_t == ir::Type::I1) and_(edi, 1);
        mov(byte[r8 + rsi], dil);
        break;
      case 2: mov(word[r8 + rsi], di); break;
      case 4: mov(dword[r8 + rsi], edi); break;
      default: mov(qword[r8 + rsi], rdi); break;
    }
  }
  lea(edx, ptr[rcx - 1]);
  and_(ecx, edx);
  jnz(access, T_NEAR);
  jmp(done, T_NEAR);
  L(slow);
  return true;
}

void Emitter::copy_warp(uint32_t dst, uint32_t src, unsigned bytes, bool launched_only) {
  uint32_t mask = bytes == kWarpLanes * 8 ? kWarpLanes * 4 : 0;  // launch mask of this lane size
  for (unsigned off = 0; off < bytes; off += unsigned(vbytes_)) {
    if (src == kZeroSource) {
      vxor(0, 0, 0);
    } else {
      vload(0, ptr[r12 + int(src + off)]);
      if (launched_only) {
        if (z_) vpandd(V(0), V(0), ptr[r12 + int(mask + off)]);
        else vpand(V(0), V(0), ptr[r12 + int(mask + off)]);
      }
    }
    vstore(ptr[r12 + int(dst + off)], 0);
  }
}

// Whether emit_edge(from, succ_index) emits no code: no phi copy, or only
// the ones coalesce_phi_slots made copies of a slot onto itself.
bool Emitter::edge_is_empty(BlockId from, size_t succ_index) {
  auto [copies, reads_phi, missing] = backend::edge_copies(f_, plan_, from, succ_index);
  if (missing != kNoValue || reads_phi) return false;
  for (auto& [p, a] : copies)
    if (!f_.unlaunched_lanes_free || f_.insts[a].op == Opcode::Undef || slot(a) != slot(p)) return false;
  return true;
}

void Emitter::emit_edge(BlockId from, size_t succ_index) {
  auto [copies, reads_phi, missing] = backend::edge_copies(f_, plan_, from, succ_index);
  if (missing != kNoValue)
    throw CompileError("x64 jit: phi %" + std::to_string(missing) + " lacks an operand for its predecessor");
  // Phis of one block are a parallel copy: stage them when one reads another.
  for (auto& [p, a] : copies) {
    unsigned bytes = lane_bytes(f_.insts[p].type) * kWarpLanes;
    uint32_t src = f_.insts[a].op == Opcode::Undef ? kZeroSource : slot(a);  // undef reads as 0
    if (src == slot(p) && !reads_phi && f_.unlaunched_lanes_free) continue;  // coalesce_phi_slots: already there
    // Lanes that were not launched are kept at 0, as the interpreter does,
    // unless they are don't-care (the unlaunched-lanes contract): then every
    // lane is copied, so a phi of values equal in all lanes stays so.
    copy_warp(reads_phi ? stage_slot(p) : slot(p), src, bytes, !f_.unlaunched_lanes_free);
  }
  if (reads_phi)
    for (auto& [p, a] : copies) copy_warp(slot(p), stage_slot(p), lane_bytes(f_.insts[p].type) * kWarpLanes, false);
}

void Emitter::emit_terminator(BlockId b) {
  ValueId t = f_.terminator(b);
  const Inst& in = f_.insts[t];
  const Block& bl = f_.blocks[b];
  auto need_succs = [&](size_t n) {
    if (bl.succs.size() < n) throw CompileError("x64 jit: block " + std::to_string(b) + " lacks successors");
  };
  switch (in.op) {
    case Opcode::Br:
      need_succs(1);
      emit_edge(b, 0);
      jmp(block_label_[bl.succs[0]], T_NEAR);
      break;
    case Opcode::CondBr: {
      need_succs(2);
      Label other;
      if (vote_in_eax_ != kNoValue && vote_in_eax_ == in.args[0]) {
        test(eax, eax);  // the any/all just before (emit_vote): any leaves its voting lanes, all 0/1
      } else {
        mov(eax, dword[rsp + kFirstLaneOffset]);
        cmp(dword[r12 + rax + int(slot(in.args[0]))], 0);  // uniform: the first launched lane decides
      }
      vote_in_eax_ = kNoValue;
      if (edge_is_empty(b, 1)) {  // (a coalesced phi's edge: one taken jump, not two)
        je(block_label_[bl.succs[1]], T_NEAR);
        emit_edge(b, 0);
        jmp(block_label_[bl.succs[0]], T_NEAR);
        break;
      }
      je(other, T_NEAR);
      emit_edge(b, 0);
      jmp(block_label_[bl.succs[0]], T_NEAR);
      L(other);
      emit_edge(b, 1);
      jmp(block_label_[bl.succs[1]], T_NEAR);
      break;
    }
    case Opcode::Switch: {
      need_succs(1);
      mov(eax, dword[rsp + kFirstLaneOffset]);
      mov(ecx, dword[r12 + rax + int(slot(in.args[0]))]);
      for (size_t i = 0; i + 1 < bl.succs.size(); ++i) {
        Label next;
        cmp(ecx, uint32_t(i));
        jne(next, T_NEAR);
        emit_edge(b, i);
        jmp(block_label_[bl.succs[i]], T_NEAR);
        L(next);
      }
      emit_edge(b, bl.succs.size() - 1);
      jmp(block_label_[bl.succs.back()], T_NEAR);
      break;
    }
    case Opcode::Barrier:
      need_succs(1);
      emit_edge(b, 0);
      mov(dword[CTX(resume)], bl.succs[0]);
      mov(eax, uint32_t(RunStatus::Barrier));
      jmp(epilogue_, T_NEAR);
      break;
    case Opcode::Return:
      // A function with a warp loop has no barrier: the prologue's reset of
      // ctx.resume still holds. In a warp-loop call (no draw loop) the next
      // warp follows at once: the status stays unwritten until the loop's
      // end stores Done (a later warp's fault stores its own), and the
      // loop's test of it is skipped (seventeenth session: 5 instructions
      // per warp).
      if (!warp_loop_) mov(dword[CTX(resume)], 0);
      if (warp_loop_ && !draw_loop_ && warp_loop_return_enabled()) {
        cmp(qword[rsp + kWarpLoopOffset], 0);
        jne(loop_next_done_, T_NEAR);
      }
      mov(eax, uint32_t(RunStatus::Done));
      jmp(epilogue_, T_NEAR);
      break;
    case Opcode::Unreachable:
      emit_fault_return(FaultKind::Unsupported, t, 0, 0, -1);
      break;
    default:
      throw CompileError("x64 jit: unknown terminator " + std::string(op_name(in.op)));
  }
}

}  // namespace gpurc::x64
