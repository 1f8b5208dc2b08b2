// Strip-outer single-block loops (Plan::strip_loops): one strip runs every
// iteration of the loop before the next strip starts, so the loop's values
// stay in vector registers across iterations (a register holds one strip).
// docs/backend_x64.md ("Strip-outer loops") describes the execution model.
#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <map>

#include "backend_x64/emitter.h"

namespace gpurc::x64 {

using namespace ir;
using namespace Xbyak;

namespace {
constexpr int kLaneArrayBytes4 = kWarpLanes * 4;
#define CTX(field) (rbx + int(offsetof(WarpContext, field)))

// Registers left for the body's own values in each strip's half of the
// registers of a strip-interleaved loop (the rest go to phis and invariants).
int interleave_reserve(bool z) { return z ? 5 : 4; }
// Which tiers may interleave strips (bit 0: AVX-512, bit 1: AVX2): both,
// unless GPURC_X64_LOOP_INTERLEAVE (a measuring aid, read once) says
// otherwise: 0 keeps every loop strip-outer.
int interleave_tiers() {
  static const int tiers = [] {
    const char* e = std::getenv("GPURC_X64_LOOP_INTERLEAVE");
    return e && *e ? std::atoi(e) : 3;
  }();
  return tiers;
}
}  // namespace

struct Emitter::LoopState {
  const StripLoop* l = nullptr;
  std::vector<ValueId> phis, incoming;  // the block's phis and their back-edge operands
  std::vector<int> home;                // per phi: its register for the whole loop, -1: it lives in its slot
  int mask_reg = -1;                    // the strip's launch mask (all-ones lanes), for the back-edge copies; -1: read from the frame
  // The back-edge copies need no launch mask: the function's lanes that were
  // not launched are don't-care (Function::unlaunched_lanes_free), so a phi
  // need not hold 0 there and a copy is a plain move.
  bool mask_free = false;
  // Per phi: its back-edge operand is moved into the phi's home register
  // right after the operand's definition (the phi is read by nothing after
  // that point), which frees the operand's register for the rest of the
  // body; the back edge then copies nothing for it (mask_free only).
  std::vector<uint8_t> early;
  std::vector<int32_t> early_phi;       // per value: index of the phi it is moved into early, -1: none
  // Per phi living in its slot (no home register; strip-outer form only):
  // its operand is stored into the phi's slot right after its definition
  // and its register freed, under the early conditions above and when no
  // later body op and not the branch reads the operand. The back edge then
  // copies nothing for it; a reader after the loop gets the operand from the
  // phi's slot (loop_store_live_out). The operand is then in neither a
  // register nor its own slot, which is how the back edge and the exit tell.
  std::vector<uint8_t> slot_early;
  // The strips after the first run a counted number of iterations, so the
  // values that only decide the branch (a guest loop counter: its phi, the
  // decrement, the compare) are dead there: per phi, skipped (no home, no
  // back-edge copy); their ops are left out of `body`.
  std::vector<uint8_t> branch_only_phi;
  int pin_probe = -1;                   // a register loop_pin pins (-1: none): unpinned after a helper call
  std::vector<std::pair<int, ValueId>> pinned;  // loop invariants held in a register for the whole loop
  std::vector<uint8_t> hoisted;         // per value: a const of the block, pinned, so not in the body
  std::vector<ValueId> body;            // the strip ops run per iteration
  std::vector<int32_t> last_use;        // per value: last body position that reads it, -1: none
  std::vector<uint8_t> keep;            // per value: needed at the end of the iteration (back edge, exit, branch)
  std::vector<ValueId> live_out;        // values of the block read outside it
  // Per value: read after the loop but not by the back edge or the branch.
  // With few free registers these are stored at their last use in the body
  // and their register freed (one store per iteration, as a spill would
  // cost, but the registers then keep the back-edge values, whose spill and
  // reload would lengthen the loop-carried chains).
  std::vector<uint8_t> store_early;
  ValueId cond = kNoValue;
  // The first strip's branch on an i32 or i16 compare of a value equal in every
  // lane with a constant, read by nothing else (a guest LOOP's counter):
  // decided from lane 0 with a scalar compare (loop_branch_exit); the
  // compare and a constant only it reads are left out of `body`.
  ValueId scalar_cmp = kNoValue;
  // Per phi: an accumulator whose fused sum (its back-edge operand) is
  // emitted without its NaN test in the fast run (loop_defer_nan_tests).
  std::vector<uint8_t> deferred;
  bool any_deferred = false;
};

// A 4-byte load_uniform of the loop's block that cannot fault (the offset
// in range and the block's pointer tested at entry, uniforms_known_nonnull)
// reads the same bits in every iteration (nothing writes the uniform block
// during a run): pinned like a constant, broadcast once per strip.
bool Emitter::hoistable_uniform(ValueId v) const {
  const Inst& in = f_.insts[v];
  return in.op == Opcode::LoadUniform && in.type != ir::Type::I1 && bit_width(in.type) == 32 &&
         in.imm <= f_.uniform_bytes && f_.uniform_bytes - in.imm >= 4 && uniforms_known_nonnull();
}

Emitter::LoopState Emitter::loop_analyze(const StripLoop& l, const std::vector<ValueId>& register_uses,
                                         bool counted, const std::vector<uint8_t>* only,
                                         const std::vector<uint8_t>* skip) {
  LoopState s;
  s.l = &l;
  const size_t n = f_.insts.size();
  const BlockId b = l.block;
  s.hoisted.assign(n, 0);
  s.last_use.assign(n, -1);
  s.keep.assign(n, 0);
  for (ValueId v : f_.blocks[b].insts) {
    const Inst& in = f_.insts[v];
    if (in.op == Opcode::Phi) {
      s.phis.push_back(v);
      s.incoming.push_back(in.args[l.back_operand]);
    } else if (plan_.segment_of[v] >= 0 && plan_.segments[plan_.segment_of[v]].strip) {
      s.body.push_back(v);
    }
  }
  s.cond = f_.insts[f_.terminator(b)].args[0];
  // One walk of the function per loop block (a loop is analysed five times
  // or more, and its trial emitters share it: adopt_lazy_analyses): every
  // value read outside the block (outside), and the block's non-phi values
  // among them in the order first read (live_out).
  if (loop_outside_block_ != b) {
    loop_outside_block_ = b;
    loop_outside_.assign(n, 0);
    loop_live_out_.clear();
    for (ValueId u = 0; u < n; ++u) {
      const Inst& ui = f_.insts[u];
      if (ui.block == kNoBlock || ui.block == b) continue;
      for (ValueId a : ui.args) {
        if (a >= n || loop_outside_[a]) continue;
        loop_outside_[a] = 1;
        if (f_.insts[a].block == b && f_.insts[a].op != Opcode::Phi) loop_live_out_.push_back(a);
      }
    }
  }
  const std::vector<uint8_t>& outside = loop_outside_;
  s.live_out = loop_live_out_;
  auto read_outside = [&](ValueId a) {
    return outside[a] && f_.insts[a].block == b && f_.insts[a].op != Opcode::Phi;
  };
  // counted (the strips after the first): values read only by the branch,
  // by each other and by phis of such values, and by nothing outside the
  // block (a greatest fixed point), are not computed.
  std::vector<uint8_t> branch_only(n, 0);
  s.branch_only_phi.assign(s.phis.size(), 0);
  if (counted) {
    for (ValueId v : s.phis) branch_only[v] = !outside[v] && !wide(v);
    for (ValueId v : s.body)  // (store_var, the one strip op without a result, has an effect)
      branch_only[v] = !outside[v] && !wide(v) && f_.insts[v].type != ir::Type::Void && f_.insts[v].op != Opcode::StoreVar;
    const ValueId term = f_.terminator(b);
    // (Users after their operands: a walk from the block's end clears a
    // chain in one round; only the phis' back-edge operands need another.
    // The fixed point is the same in any order.)
    const std::vector<ValueId>& block_insts = f_.blocks[b].insts;
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t k = block_insts.size(); k-- > 0;) {
        const ValueId u = block_insts[k];
        if (u == term || branch_only[u]) continue;
        for (ValueId a : f_.insts[u].args)
          if (a < n && branch_only[a]) {
            branch_only[a] = 0;
            changed = true;
          }
      }
    }
    for (size_t i = 0; i < s.phis.size(); ++i) s.branch_only_phi[i] = branch_only[s.phis[i]];
    s.body.erase(std::remove_if(s.body.begin(), s.body.end(), [&](ValueId v) { return branch_only[v] != 0; }),
                 s.body.end());
  }
  // The two halves of a loop with uniform control (emit_control_loop):
  // `only` restricts the strip to those values (the control loop: its phis,
  // ops and values read after the loop), `skip` leaves them out (the
  // counted strips, which the control loop's exit gives them to).
  if (only || skip) {
    auto out = [&](ValueId v) { return (only && !(*only)[v]) || (skip && (*skip)[v]); };
    for (size_t i = 0; i < s.phis.size(); ++i)
      if (out(s.phis[i])) s.branch_only_phi[i] = 1;
    s.body.erase(std::remove_if(s.body.begin(), s.body.end(), out), s.body.end());
    s.live_out.erase(std::remove_if(s.live_out.begin(), s.live_out.end(), out), s.live_out.end());
  }
  for (ValueId v : s.body) {  // (after the ops this strip leaves out went; the
    // lane-equal branch's compare below still counts as a read of its operand)
    const int32_t pos = plan_.position[v];
    auto read = [&](ValueId a) {
      if (a < n) s.last_use[a] = std::max(s.last_use[a], pos);
    };
    for (ValueId a : f_.insts[v].args) read(a);
    if (ValueId x = itof_narrow_source(f_, v); x != kNoValue) read(x);
    if (uidx_fold(v)) read(uidx_fold_offset_source(v));  // the folded load's offset (or its root)
  }
  if (!counted) {
    const Inst& ci = f_.insts[s.cond];
    if (ci.op == Opcode::ICmp && ci.block == b && uses_[s.cond] == 1 && ci.args.size() == 2 &&
        !read_outside(s.cond)) {
      const ValueId x = ci.args[0], k = ci.args[1];
      const Inst& ki = f_.insts[k];
      const ir::Type xt = x < n ? f_.insts[x].type : ir::Type::Void;
      if (x < n && k < n && (xt == ir::Type::I32 || xt == ir::Type::I16) && ki.type == xt &&
          ki.op == Opcode::Const && !wide(x) && lane_equal_[x] && f_.insts[x].op != Opcode::Const) {
        s.scalar_cmp = s.cond;
        auto drop = [&](ValueId v) { s.body.erase(std::remove(s.body.begin(), s.body.end(), v), s.body.end()); };
        drop(s.cond);
        if (ki.block == b && uses_[k] == 1) drop(k);
        s.keep[x] = 1;  // read by the branch at the end of the iteration
      }
    }
  }
  for (ValueId a : s.live_out) s.keep[a] = 1;
  for (size_t i = 0; i < s.incoming.size(); ++i)
    if (s.incoming[i] < n && !s.branch_only_phi[i]) s.keep[s.incoming[i]] = 1;
  s.keep[s.cond] = 1;

  // Registers: kFirstCacheReg.. hold the launch mask (AVX-512; AVX2, with 16
  // registers, ANDs the back-edge copies with the mask in the frame instead),
  // then the phis, then the invariants the body reads from registers most
  // often; `reserve` stay for the body's own values (an op locks up to four:
  // three operands and its result), which the register cache spills to their
  // slots when short.
  // (cache_lo_..cache_hi_: all registers, or one strip's half of them in a
  // strip-interleaved loop)
  const int reserve = cache_hi_ - cache_lo_ < nregs_ - kFirstCacheReg ? interleave_reserve(z_) : z_ ? 8 : 5;
  const int limit = cache_hi_ - reserve;
  int next = cache_lo_;
  s.mask_free = f_.unlaunched_lanes_free;
  if (z_ && !s.mask_free) s.mask_reg = next++;
  for (size_t i = 0; i < s.phis.size(); ++i)
    s.home.push_back(!s.branch_only_phi[i] && next < limit ? next++ : -1);
  if (loop_scratch_homes_ && counted && !z_ && cache_lo_ == kFirstCacheReg && cache_hi_ == nregs_) {
    // (sixteenth session) The phis left in their slots put a store and a
    // reload on their loop-carried chains (on Zen 4 ~11 cycles an
    // iteration: ref_loop's four accumulators); vector registers 3..5,
    // which the run's code was found not to use, hold three more.
    int extra = 3;
    for (size_t i = 0; i < s.phis.size() && extra <= 5; ++i)
      if (s.home[i] < 0 && !s.branch_only_phi[i] && !wide(s.phis[i])) s.home[i] = extra++;
  }
  // Early back-edge moves (mask_free): phi p's operand v from this block
  // goes to p's home as soon as v is defined when nothing reads p after v
  // (no later body op, not the branch, no reader outside the block, no
  // other phi's back-edge operand), and v is the operand of this phi only.
  s.early.assign(s.phis.size(), 0);
  s.slot_early.assign(s.phis.size(), 0);
  s.early_phi.assign(n, -1);
  const bool interleaved = cache_hi_ - cache_lo_ < nregs_ - kFirstCacheReg;
  if (s.mask_free) {
    const std::vector<uint8_t>& phi_read_outside = outside;
    std::map<ValueId, int> incoming_count;
    for (ValueId a : s.incoming) ++incoming_count[a];
    for (size_t i = 0; i < s.phis.size(); ++i) {
      ValueId p = s.phis[i], a = s.incoming[i];
      if (a >= n || a == p || wide(a) || wide(p) || s.branch_only_phi[i]) continue;
      if (s.home[i] < 0 && (interleaved || s.last_use[a] >= 0 || a == s.cond)) continue;
      const Inst& ai = f_.insts[a];
      if (ai.block != b || ai.op == Opcode::Phi || ai.op == Opcode::Const) continue;
      if (plan_.segment_of[a] < 0 || !plan_.segments[plan_.segment_of[a]].strip) continue;
      if (incoming_count[a] != 1 || incoming_count.count(p) || phi_read_outside[p] || p == s.cond) continue;
      if (s.last_use[p] > plan_.position[a]) continue;
      s.early[i] = 1;
      s.slot_early[i] = s.home[i] < 0;
      s.early_phi[a] = int32_t(i);
    }
  }
  auto invariant = [&](ValueId v) {
    if (v >= n || wide(v)) return false;
    const Inst& in = f_.insts[v];
    if (in.block != b) return in.op != Opcode::Undef;  // undef has no slot (reads as 0)
    return in.op == Opcode::Const || hoistable_uniform(v);
  };
  // An invariant that only branch-only values read is not needed (counted).
  std::vector<uint8_t> read_in_body(n, !counted && !only && !skip);
  if (counted || only || skip)
    for (ValueId u : s.body)
      for (ValueId a : f_.insts[u].args)
        if (a < n) read_in_body[a] = 1;
  std::map<ValueId, int> reads;
  for (ValueId v : register_uses)
    if (invariant(v) && read_in_body[v]) ++reads[v];
  std::vector<std::pair<int, ValueId>> order;
  for (auto [v, c] : reads) order.emplace_back(-c, v);
  std::sort(order.begin(), order.end());
  for (auto [c, v] : order) {
    if (next >= limit) break;
    s.pinned.emplace_back(next++, v);
    if (f_.insts[v].block == b) s.hoisted[v] = 1;
  }
  s.body.erase(std::remove_if(s.body.begin(), s.body.end(), [&](ValueId v) { return s.hoisted[v] != 0; }),
               s.body.end());
  s.pin_probe = s.mask_reg;
  for (int h : s.home)
    if (s.pin_probe < 0 && h >= 0) s.pin_probe = h;
  if (s.pin_probe < 0 && !s.pinned.empty()) s.pin_probe = s.pinned[0].first;
  s.store_early.assign(n, 0);
  int to_end = 1;  // values held to the end of the iteration: the branch condition,
  for (ValueId a : s.incoming)  // the back-edge operands of the block
    if (a < n && f_.insts[a].block == b && f_.insts[a].op != Opcode::Phi) ++to_end;
  int free_regs = cache_hi_ - next;
  if (int(s.live_out.size()) + to_end > free_regs)
    for (ValueId a : s.live_out)
      if (a != s.cond && std::find(s.incoming.begin(), s.incoming.end(), a) == s.incoming.end() && !s.hoisted[a])
        s.store_early[a] = 1;
  return s;
}

// Loads the launch mask, the register-homed phis (from their slots) and the
// pinned invariants into their registers: at the start of each strip, and
// again after a helper call in the body (calls clobber every vector register;
// spill_live_for_call stored the phis first, as they escape).
void Emitter::loop_pin(LoopState& s) {
  kmask_clear();
  auto pin = [&](int r, ValueId v) {
    regs_[r] = RegState{v, ++clock_, false, true};
    if (v != kNoValue) vals_[v].reg = int8_t(r);
  };
  if (s.mask_reg >= 0) {
    vload(s.mask_reg, launch_mask_mem());
    pin(s.mask_reg, kNoValue);
  }
  for (size_t i = 0; i < s.phis.size(); ++i) {
    if (s.home[i] < 0) continue;
    vload(s.home[i], strip_mem(s.phis[i]));
    pin(s.home[i], s.phis[i]);
    vals_[s.phis[i]].in_frame = true;
  }
  for (auto [r, v] : s.pinned) {
    if (s.hoisted[v] && f_.insts[v].op == Opcode::LoadUniform) {
      vpbroadcastd(V(r), dword[r15 + int(f_.insts[v].imm)]);  // hoistable_uniform: cannot fault
      vals_[v].in_frame = false;
    } else if (s.hoisted[v]) {
      bcast_const(r, uint32_t(f_.insts[v].imm & type_mask(f_.insts[v].type)));
      vals_[v].in_frame = false;
    } else {
      vload(r, strip_mem(v));
      vals_[v].in_frame = true;
    }
    pin(r, v);
  }
}

// The compile-time cache state at the top of an iteration, reached from the
// strip's start and from the back edge alike: only pinned registers hold
// values; a register-homed phi may differ from its slot (the back edge wrote
// the register only), a slot-homed phi is in its slot.
void Emitter::loop_canonical(LoopState& s) {
  uidx_cached_ = kNoValue;  // the back edge also reaches the top
  select_mask_of_ = kNoValue;
  kmask_clear();
  for (int r = 0; r < nregs_; ++r) regs_[r].locked = false;
  for (int r = cache_lo_; r < cache_hi_; ++r) {
    if (regs_[r].pinned || regs_[r].v == kNoValue) continue;
    vals_[regs_[r].v].reg = -1;
    regs_[r] = RegState{};
  }
  for (size_t i = 0; i < s.phis.size(); ++i) {
    vals_[s.phis[i]].in_frame = s.home[i] < 0;
    const int h = s.home[i];
    if (h < 0 || regs_[h].v == s.phis[i]) continue;
    // An early back-edge move left the operand in the home: it is the phi again.
    if (ValueId cur = regs_[h].v; cur != kNoValue && vals_[cur].reg == h) vals_[cur].reg = -1;
    regs_[h].v = s.phis[i];
    vals_[s.phis[i]].reg = int8_t(h);
  }
  for (auto [r, v] : s.pinned)
    if (s.hoisted[v]) vals_[v].in_frame = false;  // its slot may not hold it for this strip
}

void Emitter::loop_body(LoopState& s) {
  def_loop_ = &s;
  kmask_clear();  // (loop_canonical cleared them too: the top of an iteration)
  for (ValueId v : s.body) {
    lower_strip_op(v);
    loop_end_op(s, v);
    if (s.pin_probe >= 0 && !regs_[s.pin_probe].pinned) loop_pin(s);  // a helper call reset the cache
  }
  def_loop_ = nullptr;
}

// def(v) in a loop body: v's phi's home register when v is moved there
// early (loop_end_op) and the phi is in it, unread by v: the phi is read by
// nothing after v (the early move's condition), so v's lowering may write
// the register before reading its operands. -1: an ordinary register.
int Emitter::loop_def_home(ValueId v) {
  const LoopState& s = *def_loop_;
  if (v >= s.early_phi.size() || s.early_phi[v] < 0) return -1;
  const size_t i = size_t(s.early_phi[v]);
  const int h = s.home[i];
  const ValueId p = s.phis[i];
  if (h < 0 || s.slot_early[i] || regs_[h].v != p || regs_[h].locked || vals_[p].reg != h) return -1;
  for (ValueId a : f_.insts[v].args)
    if (a == p) return -1;
  if (itof_narrow_source(f_, v) == p) return -1;
  vals_[p].reg = -1;
  regs_[h].v = v;
  regs_[h].locked = true;
  locked_mask_ |= 1u << h;
  regs_[h].stamp = ++clock_;
  vals_[v].reg = int8_t(h);
  vals_[v].in_frame = false;
  return h;
}

// end_op for the loop body: no stores at definition (values read after the
// loop are stored once at its exit), and values needed at the end of the
// iteration stay cached until then.
void Emitter::loop_end_op(LoopState& s, ValueId v) {
  for (int r = 0; r < nregs_; ++r) regs_[r].locked = false;
  auto release = [&](ValueId a) {
    int r = vals_[a].reg;
    if (r < 0 || regs_[r].pinned) return;
    vals_[a].reg = -1;
    regs_[r] = RegState{};
  };
  int32_t pos = plan_.position[v];
  std::vector<ValueId> reads = f_.insts[v].args;
  if (ValueId x = itof_narrow_source(f_, v); x != kNoValue) reads.push_back(x);
  auto store_release = [&](ValueId a) {
    int r = vals_[a].reg;
    if (r < 0 || regs_[r].pinned) return;
    if (!vals_[a].in_frame) vstore(strip_mem(a), r);
    vals_[a].in_frame = true;
    release(a);
  };
  for (ValueId a : reads) {
    if (a >= s.keep.size() || s.last_use[a] != pos) continue;
    if (!s.keep[a]) release(a);
    else if (s.store_early[a]) store_release(a);
  }
  if (s.last_use[v] < 0) {
    if (!s.keep[v]) release(v);
    else if (s.store_early[v]) store_release(v);
  }
  if (int i = s.early_phi[v]; i >= 0) {
    const int h = s.home[size_t(i)];
    const ValueId p = s.phis[size_t(i)];
    if (s.slot_early[size_t(i)]) {
      // Into the phi's slot; v's register is free from here (nothing in the
      // body reads v again). A helper's result in v's own slot is left to
      // the back edge's copy.
      const int r = vals_[v].reg;
      if (r < 0 || regs_[r].pinned) return;
      vstore(strip_mem(p), r);
      regs_[r] = RegState{};
      vals_[v].reg = -1;
      vals_[v].in_frame = false;
      if (const int rp = vals_[p].reg; rp >= 0 && !regs_[rp].pinned) {  // p's old value: read no more
        regs_[rp] = RegState{};
        vals_[p].reg = -1;
      }
      vals_[p].in_frame = false;
      return;
    }
    if (regs_[h].v != p) return;  // a helper call reloaded the home: the back edge copies
    int r = vals_[v].reg;
    if (r >= 0) {
      vmov(h, r);
      if (!regs_[r].pinned) regs_[r] = RegState{};
    } else {
      vload(h, strip_mem(v));  // a helper's result is in the frame
    }
    vals_[p].reg = -1;
    vals_[v].reg = int8_t(h);
    regs_[h].v = v;
  }
}

void Emitter::loop_branch_exit(LoopState& s, Label& exit) {
  if (s.scalar_cmp != kNoValue) {  // every lane holds the compared value: lane 0's decides
    const Inst& ci = f_.insts[s.scalar_cmp];
    const int x = use(ci.args[0]);
    vmovd(eax, Xmm(x));
    for (int r = 0; r < nregs_; ++r) regs_[r].locked = false;
    uint32_t k = uint32_t(f_.insts[ci.args[1]].imm);
    if (f_.insts[ci.args[0]].type == ir::Type::I16) {  // the low 16 bits, extended as the predicate reads them
      const IntPred p = IntPred(ci.attr);
      if (p == IntPred::Slt || p == IntPred::Sle || p == IntPred::Sgt || p == IntPred::Sge) {
        movsx(eax, ax);
        k = uint32_t(int32_t(int16_t(uint16_t(k))));
      } else {
        movzx(eax, ax);
        k &= 0xFFFFu;
      }
    }
    cmp(eax, k);
    // x86 condition codes of the compare's predicates (jcc 0F 80+cc), and
    // the exit taken when the condition says leave.
    static constexpr uint8_t kCc[] = {0x4, 0x5, 0xC, 0xE, 0xF, 0xD, 0x2, 0x6, 0x7, 0x3};
    uint8_t cc = kCc[size_t(IntPred(ci.attr))];
    if (s.l->repeat_if_true) cc ^= 1;  // leave when the condition is false
    switch (cc) {
      case 0x2: jb(exit, T_NEAR); break;
      case 0x3: jae(exit, T_NEAR); break;
      case 0x4: je(exit, T_NEAR); break;
      case 0x5: jne(exit, T_NEAR); break;
      case 0x6: jbe(exit, T_NEAR); break;
      case 0x7: ja(exit, T_NEAR); break;
      case 0xC: jl(exit, T_NEAR); break;
      case 0xD: jge(exit, T_NEAR); break;
      case 0xE: jle(exit, T_NEAR); break;
      default: jg(exit, T_NEAR); break;
    }
    return;
  }
  if (const int k = z_ ? kmask_find(s.cond) : -1; k >= 0) {  // the compare's mask, kept (select_bits)
    kmovw(eax, Opmask(k));
  } else if (z_) {
    int c = use(s.cond);
    vptestmd(k1, V(c), V(c));
    kmovw(eax, k1);
  } else {
    int c = use(s.cond);
    vpslld(V(0), V(c), 31);  // i1 is 0/1
    vmovmskps(eax, V(0));
  }
  for (int r = 0; r < nregs_; ++r) regs_[r].locked = false;
  test(dword[rsp + kLoopLaneBitOffset], eax);
  if (s.l->repeat_if_true) jz(exit, T_NEAR);
  else jnz(exit, T_NEAR);
}

// The back edge's phi copies as one parallel copy between locations (a
// register, or a value's slot for the current strip), ANDed with the launch
// mask as every phi copy is. A copy waits while another still reads its
// destination; a cycle (phis swapping) is broken through scratch register 1.
void Emitter::loop_back_copy(LoopState& s) {
  struct Loc {
    int reg = -1;
    ValueId mem = kNoValue;
    bool zero = false;
    bool konst = false;  // a constant defined outside the loop: materialized, it has no slot
    uint32_t bits = 0;
  };
  auto same = [](const Loc& x, const Loc& y) {
    return !x.zero && !y.zero && !x.konst && !y.konst && x.reg == y.reg && x.mem == y.mem;
  };
  struct Copy { Loc dst, src; };
  std::vector<Copy> pending;
  for (size_t i = 0; i < s.phis.size(); ++i) {
    ValueId p = s.phis[i], a = s.incoming[i];
    if (a == p || s.branch_only_phi[i]) continue;
    if (s.home[i] >= 0 && a < f_.insts.size() && vals_[a].reg == s.home[i]) continue;  // moved early
    if (s.slot_early[i] && vals_[a].reg < 0 && !vals_[a].in_frame) continue;          // stored early
    Copy c;
    if (s.home[i] >= 0) c.dst.reg = s.home[i];
    else c.dst.mem = p;
    if (a >= f_.insts.size() || f_.insts[a].op == Opcode::Undef) {
      c.src.zero = true;  // undef reads as 0
    } else if (vals_[a].reg >= 0) {
      c.src.reg = vals_[a].reg;
    } else if (f_.insts[a].op == Opcode::Const && f_.insts[a].block != s.l->block && !wide(a)) {
      // A back-edge operand that is a constant of another block (blocks
      // merged into the loop's, a var set to a constant in the body): not
      // pinned, it is rematerialized where it is used and has no slot.
      c.src.konst = true;
      c.src.bits = uint32_t(f_.insts[a].imm & type_mask(f_.insts[a].type));
    } else {
      if (!vals_[a].in_frame && !wide(a))
        throw CompileError("x64 jit: internal: loop value %" + std::to_string(a) + " is neither cached nor stored");
      c.src.mem = a;
    }
    pending.push_back(c);
  }
  auto masked = [&](int d, const Loc& src) {  // d = src & launch mask
    if (src.zero) {
      vxor(d, d, d);
    } else if (s.mask_free) {  // unlaunched lanes are don't-care: a plain move
      if (src.konst) bcast_const(d, src.bits);
      else if (src.reg >= 0) vmov(d, src.reg);
      else vload(d, strip_mem(src.mem));
    } else if (src.konst) {
      bcast_const(d, src.bits);
      if (s.mask_reg < 0) vpand(V(d), V(d), launch_mask_mem());
      else vand(d, d, s.mask_reg);
    } else if (s.mask_reg < 0) {  // the mask from the frame (AVX2)
      if (src.reg < 0) vload(d, strip_mem(src.mem));
      vpand(V(d), V(src.reg >= 0 ? src.reg : d), launch_mask_mem());
    } else if (src.reg >= 0) {
      vand(d, src.reg, s.mask_reg);
    } else if (z_) {
      vpandd(V(d), V(s.mask_reg), strip_mem(src.mem));
    } else {
      vpand(V(d), V(s.mask_reg), strip_mem(src.mem));
    }
  };
  while (!pending.empty()) {
    bool progress = false;
    for (size_t i = 0; i < pending.size();) {
      bool blocked = false;
      for (size_t j = 0; j < pending.size(); ++j)
        if (j != i && same(pending[j].src, pending[i].dst)) blocked = true;
      if (blocked) {
        ++i;
        continue;
      }
      const Copy& c = pending[i];
      if (c.dst.reg >= 0) {
        masked(c.dst.reg, c.src);
      } else if (s.mask_free && c.src.reg >= 0) {
        vstore(strip_mem(c.dst.mem), c.src.reg);
      } else {
        masked(0, c.src);
        vstore(strip_mem(c.dst.mem), 0);
      }
      pending.erase(pending.begin() + long(i));
      progress = true;
    }
    if (progress || pending.empty()) continue;
    // Only cycles are left: save one destination's old value in scratch 1
    // and let its readers take it from there.
    Loc d = pending[0].dst;
    if (d.reg >= 0) vmov(1, d.reg);
    else vload(1, strip_mem(d.mem));
    for (Copy& c : pending)
      if (same(c.src, d)) c.src = Loc{1, kNoValue, false};
  }
  loop_canonical(s);
}

// loop_back_copy(s) would emit no code: every phi's operand is the phi, or
// decides the branch only, or was moved into its home or stored into its
// slot early (the cases loop_back_copy skips).
bool Emitter::loop_back_copy_empty(const LoopState& s) const {
  for (size_t i = 0; i < s.phis.size(); ++i) {
    const ValueId p = s.phis[i], a = s.incoming[i];
    if (a == p || s.branch_only_phi[i]) continue;
    if (a >= f_.insts.size()) return false;
    if (s.home[i] >= 0 && vals_[a].reg == s.home[i]) continue;
    if (s.slot_early[i] && vals_[a].reg < 0 && !vals_[a].in_frame) continue;
    return false;
  }
  return true;
}

void Emitter::loop_store_phis(LoopState& s) {
  for (size_t i = 0; i < s.phis.size(); ++i)  // (a home holding an early-moved operand: the phi is read no more)
    if (s.home[i] >= 0 && regs_[s.home[i]].v == s.phis[i]) vstore(strip_mem(s.phis[i]), s.home[i]);
}

void Emitter::loop_store_live_out(LoopState& s) {
  for (ValueId v : s.live_out) {
    if (wide(v)) continue;  // 64-bit values are only ever in their slots
    int r = vals_[v].reg;
    if (r >= 0 && !vals_[v].in_frame) {
      vstore(strip_mem(v), r);
    } else if (r < 0 && !vals_[v].in_frame && s.early_phi[v] >= 0 && s.slot_early[size_t(s.early_phi[v])]) {
      vload(1, strip_mem(s.phis[size_t(s.early_phi[v])]));  // stored early into its phi's slot
      vstore(strip_mem(v), 1);
      vals_[v].in_frame = true;
    } else if (r < 0 && !vals_[v].in_frame) {
      throw CompileError("x64 jit: internal: loop value %" + std::to_string(v) + " is neither cached nor stored");
    }
  }
}

// ---- deferred NaN tests (issue 13, twelfth session)
//
// A PICA200 MAD accumulating in a loop (acc' = a * b + acc, fused product
// and sum, lower_fused_mul_add) is tested for NaN once per iteration: three
// instructions per MAD, 24 of ref_loop's 75 per AVX2 iteration. But a NaN
// lane of any iteration's sum stays a NaN lane to the loop's end: the phi
// carries it into the next sum (the host's add returns a NaN when either
// operand is one) and nothing else reads the phi. And where no lane of the
// sum is a NaN the host's sum is the exact one (the fix changes only NaN
// lanes: a product's 0 * inf, an operand's NaN, a payload; the sum's test
// is for NaN only, its FtzOut flush left to its DAZ readers or its stores).
// So the counted strips run the loop with those sums untested, test the last
// sums once after the loop, and when a lane is a NaN run the loop again from
// the strip's entry values with every test (the unfused results bit for
// bit). Conditions: the sum is the phi's back-edge operand, read in the
// block by that phi only; the phi read by that sum only; the sum's test is
// for NaN only; the body calls no helper and stores no var (the rerun must
// see the state the first run saw: a helper stores the phis, a store_var
// changes what a load_var reads); the phis living in their slots (AVX2) are
// kept in save slots for the rerun (the iterations overwrite them).
bool Emitter::loop_defer_enabled() {
  static const bool yes = env_switch_on("GPURC_LOOP_DEFER_NAN");
  return yes;
}

void Emitter::loop_defer_nan_tests(LoopState& s, bool trial_called) {
  s.deferred.assign(s.phis.size(), 0);
  s.any_deferred = false;
  if (!daz_ || trial_called || !loop_defer_enabled()) return;
  const size_t n = f_.insts.size();
  const BlockId b = s.l->block;
  for (ValueId v : f_.blocks[b].insts)
    if (f_.insts[v].op == Opcode::StoreVar) return;  // (budget ops: the first strip charges them, not the counted runs)
  // One walk of the block for every phi below: the operand reads of each
  // value by the block's instructions (with repeats), and the body's values.
  std::vector<uint32_t> block_reads(n, 0);
  for (ValueId x : f_.blocks[b].insts)
    for (ValueId a : f_.insts[x].args)
      if (a < n) ++block_reads[a];
  std::vector<uint8_t> in_body(n, 0);
  for (ValueId v : s.body) in_body[v] = 1;
  for (size_t i = 0; i < s.phis.size(); ++i) {
    const ValueId p = s.phis[i], u = s.incoming[i];
    if (u >= n || s.branch_only_phi[i] || wide(p) || uses_[p] != 1) continue;
    const Inst& ui = f_.insts[u];
    if (ui.block != b || (ui.op != Opcode::FAdd && ui.op != Opcode::FSub) || ui.args.size() != 2 ||
        ui.args[0] == ui.args[1] || (ui.args[0] != p && ui.args[1] != p))
      continue;
    const ValueId m = ui.args[0] == p ? ui.args[1] : ui.args[0];
    if (m >= n || f_.insts[m].op != Opcode::FMul || fused_add_of(m) != u || daz_chain_member_[m]) continue;
    if (!in_body[m] || !in_body[u]) continue;
    // u read in the block by p's back edge once and by nothing else
    const size_t by_phi = size_t(std::count(f_.insts[p].args.begin(), f_.insts[p].args.end(), u));
    if (by_phi != 1 || block_reads[u] != by_phi) continue;
    if ((ui.fflags & ff::FtzOut) && !read_by_daz_arith_only(u)) continue;  // a subnormal does not propagate
    s.deferred[i] = 1;
    s.any_deferred = true;
  }
}

// nan_deferred_ for the fast run's body: 1, or the phi's home register + 2
// when the sum is moved into it early (lower_fused_mul_add then writes the
// sum there directly).
void Emitter::loop_mark_deferred(LoopState& s) {
  nan_deferred_.assign(f_.insts.size(), 0);
  for (size_t i = 0; i < s.phis.size(); ++i)
    if (s.deferred[i]) nan_deferred_[s.incoming[i]] = uint8_t(s.early[i] && s.home[i] >= 0 ? s.home[i] + 2 : 1);
}

Address Emitter::loop_save_mem(ValueId phi) {
  if (loop_save_slot_.size() < f_.insts.size()) loop_save_slot_.resize(f_.insts.size(), -1);
  if (loop_save_slot_[phi] < 0) {
    loop_save_slot_[phi] = int32_t(frame_bytes_);
    frame_bytes_ += (lane_bytes(f_.insts[phi].type) * kWarpLanes + 63) & ~63u;
  }
  return ptr[r12 + r14 + loop_save_slot_[phi]];
}

// After the fast run's last iteration (before its back edge): the deferred
// sums, in a register, their phi's slot (stored early) or their own slot;
// at the top of an iteration (at_top): the phis. An unordered compare of
// two at a time, ORed.
void Emitter::loop_test_deferred(LoopState& s, Label& rerun, bool at_top) {
  std::vector<std::pair<int, Address>> at;  // register, else the address
  for (size_t i = 0; i < s.phis.size(); ++i) {
    if (!s.deferred[i]) continue;
    const ValueId u = s.incoming[i];
    if (at_top) {  // the top of an iteration (a watchdog fault): the phis hold the sums
      const ValueId p = s.phis[i];
      if (s.home[i] >= 0 && regs_[s.home[i]].v == p) at.emplace_back(s.home[i], ptr[r12]);
      else at.emplace_back(-1, strip_mem(p));
    } else if (vals_[u].reg >= 0) at.emplace_back(vals_[u].reg, ptr[r12]);
    else if (s.slot_early[i] && !vals_[u].in_frame) at.emplace_back(-1, strip_mem(s.phis[i]));
    else if (vals_[u].in_frame) at.emplace_back(-1, strip_mem(u));
    else throw CompileError("x64 jit: internal: deferred loop sum %" + std::to_string(u) + " is neither cached nor stored");
  }
  // Registers first: a pair needs its first operand in a register.
  std::stable_sort(at.begin(), at.end(), [](const auto& x, const auto& y) { return x.first >= 0 && y.first < 0; });
  for (size_t k = 0; k < at.size(); k += 2) {
    const bool first = k == 0;
    const int t = first ? 0 : 1;  // AVX2: the compare's result vector; AVX-512: k1 / k2
    int x = at[k].first;
    if (x < 0) {
      vload(t, at[k].second);
      x = t;
    }
    const size_t j = k + 1 < at.size() ? k + 1 : k;  // an odd one: compared with itself
    if (z_) {
      const Xbyak::Opmask km = first ? k1 : k2;
      if (at[j].first >= 0) vcmpps(km, V(x), V(j == k ? x : at[j].first), 0x03);
      else if (j == k) vcmpps(km, V(x), V(x), 0x03);
      else vcmpps(km, V(x), at[j].second, 0x03);
      if (!first) korw(k1, k1, k2);
    } else {
      if (at[j].first >= 0) vcmpps(V(t), V(x), V(j == k ? x : at[j].first), 0x03);
      else if (j == k) vcmpps(V(t), V(x), V(x), 0x03);
      else vcmpps(V(t), V(x), at[j].second, 0x03);
      if (!first) vorps(V(0), V(0), V(1));
    }
  }
  if (z_) kortestw(k1, k1);
  else vptest(V(0), V(0));
  jnz(rerun, T_NEAR);
}

// The strip of the first launched lane runs first: its lane decides each
// iteration's branch (as the branch of the iteration-outer code does) and it
// charges the budget. Then every other strip runs the same number of
// iterations, so nothing depends on lanes that were not launched. If a
// budget op faults after k iterations, the other strips run k iterations and
// their back-edge copies, which is the state the iteration-outer code has
// when that budget op faults, and then the fault is raised.
Emitter::CacheSnapshot Emitter::cache_snapshot(bool with_alt) const {
  CacheSnapshot st;
  st.vals = vals_;
  if (with_alt) st.alt_vals = alt_vals_;
  st.regs.assign(regs_, regs_ + 32);
  st.with_alt = with_alt;
  return st;
}

void Emitter::cache_restore(const CacheSnapshot& st) {
  vals_ = st.vals;
  if (st.with_alt) alt_vals_ = st.alt_vals;
  std::copy(st.regs.begin(), st.regs.end(), regs_);
  locked_mask_ = ~0u;  // (the snapshot's locked flags: end_op clears them all)
}

void Emitter::loop_find_first_strip() {
  mov(qword[rsp + kLoopTripsOffset], 0);
  mov(dword[rsp + kLoopFaultOffset], 0);
  mov(eax, dword[rsp + kFirstLaneOffset]);  // 4 * first launched lane
  mov(ecx, eax);
  shr(ecx, 2);
  and_(ecx, lanes_ - 1);
  mov(edx, 1);
  shl(edx, cl);
  mov(dword[rsp + kLoopLaneBitOffset], edx);
  and_(eax, -vbytes_);
  mov(r14d, eax);
}

void Emitter::loop_counted_run(LoopState& so, bool fast, Label& rerun, Label& next, bool falls_through) {
  Label head, last, exit_strip;
  reset_cache();
  loop_pin(so);
  loop_canonical(so);
  L(head);
  if (fast) loop_mark_deferred(so);
  loop_body(so);
  nan_deferred_.clear();
  sub(qword[rsp + kLoopLeftOffset], 1);
  auto at_count = cache_snapshot();
  if (loop_back_copy_empty(so)) {
    // Nothing to copy (every operand moved or stored early): one jump back
    // (thirteenth session; before: jz to the exit, jmp back).
    const size_t at = getSize();
    loop_back_copy(so);
    if (getSize() != at) throw CompileError("x64 jit: internal: a back edge predicted empty copied");
    jnz(head, T_NEAR);
    cache_restore(at_count);
  } else {
    jz(last, T_NEAR);
    loop_back_copy(so);
    jmp(head, T_NEAR);
    cache_restore(at_count);
  }
  L(last);
  if (fast) loop_test_deferred(so, rerun, false);
  cmp(dword[rsp + kLoopFaultOffset], 0);
  je(exit_strip, T_NEAR);
  loop_back_copy(so);  // a watchdog fault: the iteration-outer code faults after this back edge
  loop_store_phis(so);
  jmp(next, T_NEAR);
  cache_restore(at_count);
  L(exit_strip);
  loop_store_live_out(so);
  loop_store_phis(so);
  if (!falls_through) jmp(next, T_NEAR);
}

// Whether the counted strips' fast run (deferred NaN tests) of this loop,
// its out-of-line code included, leaves vector registers 3..5 alone: a trial
// of that run into a discarded buffer, with the homes it would have without
// them, records every register V() handed out. (The run's other code, the
// pins, the back edge, the deferred test and the stores, uses scratch 0 and 1.)
bool Emitter::loop_scratch_homes_free(const StripLoop& l, const std::vector<ValueId>& register_uses) {
  try {
    thread_local std::vector<uint8_t> buffer;
    const size_t max_code = 65536 + f_.blocks[l.block].insts.size() * 4096;
    const size_t pool_bytes = 16384 + f_.blocks[l.block].insts.size() * 256;
    if (buffer.size() < pool_bytes + 64 + max_code) buffer.resize(pool_bytes + 64 + max_code);
    uint8_t* code =
        reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(buffer.data()) + pool_bytes + 63) & ~uintptr_t(63));
    Emitter trial(*this, max_code, code, buffer.data());
    LoopState t = trial.loop_analyze(l, register_uses, true);
    trial.loop_defer_nan_tests(t, false);
    if (!t.any_deferred) return false;
    Label rerun, next;
    trial.vtouched_ = 0;
    trial.loop_counted_run(t, true, rerun, next, false);
    trial.L(rerun);
    trial.L(next);
    trial.emit_cold_code();
    if (trial.shares_analyses_) adopt_lazy_analyses(trial);
    return (trial.vtouched_ & kScratchHomesMask) == 0;
  } catch (const Xbyak::Error&) {
    return false;
  } catch (const ConstPool::Full&) {
    return false;
  } catch (const CompileError&) {
    return false;
  }
}

void Emitter::emit_strip_loop(const StripLoop& l) {
  // Which loop invariants do the body's lowerings read from a register (and
  // how often)? Constants used as immediates are not. A trial emission into
  // a discarded buffer, with only the phis pinned, records them.
  std::vector<ValueId> register_uses;
  bool trial_called = true;  // the body calls a helper (unknown: assume it does)
  try {
    // The trial assembles into a buffer the thread keeps (no memory mapped
    // per loop).
    thread_local std::vector<uint8_t> trial_buffer;
    const size_t max_code = 65536 + f_.blocks[l.block].insts.size() * 2048;
    const size_t pool_bytes = 16384 + f_.blocks[l.block].insts.size() * 256;
    if (trial_buffer.size() < pool_bytes + 64 + max_code) trial_buffer.resize(pool_bytes + 64 + max_code);
    uint8_t* code = reinterpret_cast<uint8_t*>(
        (reinterpret_cast<uintptr_t>(trial_buffer.data()) + pool_bytes + 63) & ~uintptr_t(63));
    // The trial takes this emitter's analyses (the constructor's and those
    // made so far on first use) and hands back the ones it made.
    Emitter trial(*this, max_code, code, trial_buffer.data());
    trial.use_log_ = &register_uses;
    LoopState ts = trial.loop_analyze(l, {}, false);
    trial.reset_cache();
    trial.loop_pin(ts);
    trial.loop_canonical(ts);
    trial.loop_body(ts);
    trial_called = trial.calls_emitted_;
    if (trial.shares_analyses_) adopt_lazy_analyses(trial);
  } catch (const Xbyak::Error&) {
    register_uses.clear();  // the trial's buffer was too small: pin no invariant
  } catch (const ConstPool::Full&) {
    register_uses.clear();
  }
  {
    std::vector<uint8_t> uniform_only, control;
    if (loop_control_sets(l, uniform_only, control)) {
      emit_control_loop(l, register_uses, trial_called, uniform_only, control);
      return;
    }
  }
  if (loop_interleavable(l, register_uses, trial_called)) {
    emit_interleaved_loop(l, register_uses);
    return;
  }
  LoopState s = loop_analyze(l, register_uses, false);
  LoopState sr = loop_analyze(l, register_uses, true);  // the strips after the first; their reruns
  // Deferred NaN tests: the slot-homed phis' entry values are kept for a
  // rerun (the iterations overwrite their slots).
  loop_defer_nan_tests(s, trial_called);
  loop_defer_nan_tests(sr, trial_called);
  // The counted strips' fast runs may keep more phis in registers 3..5
  // (AVX2); their reruns (every test in place: fixes use those registers)
  // keep the homes of sr. A phi homed there in so has its entry value in
  // its slot at a rerun (homed phis are stored only at the loop's exit).
  loop_scratch_homes_ = !z_ && !trial_called && sr.any_deferred && loop_scratch_homes_free(l, register_uses);
  LoopState so = loop_scratch_homes_ ? loop_analyze(l, register_uses, true) : sr;
  loop_scratch_homes_ = false;
  if (so.home != sr.home) loop_defer_nan_tests(so, trial_called);
  auto save_phis = [&](LoopState& st, bool back) {
    for (size_t i = 0; i < st.phis.size(); ++i)
      if (st.home[i] < 0 && !st.branch_only_phi[i]) {
        vload(0, back ? loop_save_mem(st.phis[i]) : strip_mem(st.phis[i]));
        vstore(back ? strip_mem(st.phis[i]) : loop_save_mem(st.phis[i]), 0);
      }
  };

  loop_find_first_strip();

  // ---- the first launched lane's strip: decides the trip count, charges the budget
  std::vector<Label> fault_stub(l.budgets.size());
  Label head_first, exit_first, others, rerun_first;
  auto at_first = cache_snapshot();
  if (s.any_deferred) save_phis(s, false);
  reset_cache();
  loop_pin(s);
  loop_canonical(s);
  L(head_first);
  for (size_t i = 0; i < l.budgets.size(); ++i) {
    mov(rax, f_.insts[l.budgets[i]].imm);
    sub(qword[CTX(budget)], rax);
    jl(fault_stub[i], T_NEAR);
  }
  add(qword[rsp + kLoopTripsOffset], 1);
  if (s.any_deferred) loop_mark_deferred(s);
  loop_body(s);
  nan_deferred_.clear();
  loop_branch_exit(s, exit_first);
  auto at_branch = cache_snapshot();
  loop_back_copy(s);
  jmp(head_first, T_NEAR);
  cache_restore(at_branch);
  L(exit_first);
  if (s.any_deferred) loop_test_deferred(s, rerun_first, false);
  loop_store_live_out(s);
  loop_store_phis(s);
  jmp(others, T_NEAR);
  loop_canonical(s);  // the stubs are reached from the top of an iteration: the homes hold the phis
  for (size_t i = 0; i < l.budgets.size(); ++i) {
    L(fault_stub[i]);  // at the top of an iteration: the phis hold the state after the last whole one
    mov(dword[rsp + kLoopFaultOffset], uint32_t(i + 1));
    if (s.any_deferred) {  // (no whole iteration: the phis hold their entry values)
      Label none;
      cmp(qword[rsp + kLoopTripsOffset], 0);
      je(none, T_NEAR);
      loop_test_deferred(s, rerun_first, true);
      L(none);
    }
    loop_store_phis(s);
    jmp(others, T_NEAR);
  }

  // ---- every other strip: the same number of iterations
  Label strip_top, strip_next, rerun;
  L(others);
  xor_(r14d, r14d);
  L(strip_top);
  mov(eax, dword[rsp + kFirstLaneOffset]);
  and_(eax, -vbytes_);
  cmp(r14d, eax);
  je(strip_next, T_NEAR);
  mov(rax, qword[rsp + kLoopTripsOffset]);
  test(rax, rax);
  jz(strip_next, T_NEAR);  // the first budget op faulted: the phis keep their entry values
  mov(qword[rsp + kLoopLeftOffset], rax);
  auto at_strip = cache_snapshot();
  if (so.any_deferred) {
    save_phis(so, false);
    loop_counted_run(so, true, rerun, strip_next, false);
    // A deferred sum had a NaN lane: the strip again from its entry values, every test in place.
    L(rerun);
    cache_restore(at_strip);
    mov(rax, qword[rsp + kLoopTripsOffset]);
    mov(qword[rsp + kLoopLeftOffset], rax);
    save_phis(so, true);
  }
  loop_counted_run(so.any_deferred ? sr : so, false, rerun, strip_next, true);  // (strip_next follows)
  L(strip_next);
  add(r14d, vbytes_);
  cmp(r14d, kLaneArrayBytes4);
  jb(strip_top, T_NEAR);
  if (s.any_deferred) {
    // The first strip's deferred sum had a NaN lane: the trips its first
    // run made, counted, from the entry values, every test in place (the
    // budget is charged), then the other strips. (After the loop: off the
    // usual path.)
    Label done;
    jmp(done, T_NEAR);
    L(rerun_first);
    cache_restore(at_first);
    mov(r14d, dword[rsp + kFirstLaneOffset]);
    and_(r14d, -vbytes_);
    mov(rax, qword[rsp + kLoopTripsOffset]);
    mov(qword[rsp + kLoopLeftOffset], rax);
    save_phis(s, true);
    loop_counted_run(sr, false, rerun_first, others, false);
    L(done);
  }
  reset_cache();

  emit_loop_exit(l);
}


// ---------------------------------------------------------------- strip-interleaved loops
//
// The strip-outer form runs each strip's loop-carried chains (a sum, a
// product, a hash) one strip after the other: the core cannot overlap them,
// because the next strip's first iteration comes only after the last
// iteration of this one. Here two strips run in the same iteration, the
// body emitted once for each, one after the other, with each strip in its
// own half of the registers: the two bodies are independent, so the
// out-of-order core runs them side by side. The first launched lane's strip
// (at r14) decides the branch and charges the budget as in the strip-outer
// form; its partner (at rbp) runs the counted body (no branch-only values).
// On AVX2 (four strips) the pair holding the first launched lane runs
// first, then the other pair, both counted, the number of iterations the
// first pair ran.

Address Emitter::launch_mask_mem() {
  return ptr[r12 + (strip_alt_ ? rbp : r14)];  // the 4-byte launch mask is at frame offset 0
}

void Emitter::loop_switch_strip() {
  std::swap(vals_, alt_vals_);
  strip_alt_ = !strip_alt_;
  const int half = (nregs_ - kFirstCacheReg) / 2;
  cache_lo_ = kFirstCacheReg + (strip_alt_ ? half : 0);
  cache_hi_ = cache_lo_ + half;
  uidx_cached_ = kNoValue;  // edx holds the other strip's check
  select_mask_of_ = kNoValue;
  kmask_clear();
}

void Emitter::loop_reset_range() {
  kmask_clear();
  for (int r = cache_lo_; r < cache_hi_; ++r) {
    if (regs_[r].v != kNoValue) vals_[regs_[r].v].reg = -1;
    regs_[r] = RegState{};
  }
}

namespace {
// A rough cost model of one IR op on the vector units: its latency on the
// result's dependence chain and the vector micro-ops it issues (a float op
// with its NaN / subnormal test is ~3, an integer op 1).
struct OpCost {
  int latency, uops;
};
OpCost op_cost(const Inst& in) {
  switch (in.op) {
    case Opcode::Const: case Opcode::Phi: case Opcode::Bitcast: case Opcode::Undef:
      return {0, 0};
    case Opcode::FAdd: case Opcode::FSub: case Opcode::FMul: case Opcode::FFma: case Opcode::FMad:
      return {4, 3};
    case Opcode::FMin: case Opcode::FMax: case Opcode::FFloor: case Opcode::FCeil: case Opcode::FTrunc:
    case Opcode::FRint: case Opcode::FToI: case Opcode::IToF: case Opcode::FToF:
      return {4, 3};
    case Opcode::IMul: case Opcode::IMulHi: case Opcode::IMad:
      return {10, 2};
    case Opcode::FRcp: case Opcode::FRsqrt: case Opcode::FSqrt: case Opcode::FExp2: case Opcode::FLog2:
    case Opcode::FSin: case Opcode::FCos:
      return {20, 10};
    case Opcode::ICmp: case Opcode::FCmp: case Opcode::Select:
      return {3, 2};
    case Opcode::LoadUniformIdx:
      return {8, 4};
    case Opcode::LoadUniform: case Opcode::LoadVar:
      return {5, 1};
    case Opcode::StoreVar:
      return {0, 1};
    default:
      return {1, 1};
  }
}
}  // namespace

bool Emitter::loop_interleavable(const StripLoop& l, const std::vector<ValueId>& register_uses, bool trial_called,
                                 const std::vector<uint8_t>* skip) {
  if (!(interleave_tiers() & (z_ ? 1 : 2))) return false;
  // A helper call clobbers every vector register and reads the strip at r14
  // (eval_strip); lane_id / entry_mask read r14 too: such loops stay strip-outer.
  if (trial_called) return false;
  const size_t n = f_.insts.size();
  std::vector<int> chain(n, -1);  // per value: the longest latency path from a phi to it this iteration
  std::vector<ValueId> incoming;
  int uops = 0;
  for (ValueId v : f_.blocks[l.block].insts) {
    const Inst& in = f_.insts[v];
    if (in.type != ir::Type::Void && wide(v)) return false;
    for (ValueId a : in.args)
      if (a < n && wide(a)) return false;
    if (in.op == Opcode::LaneId || in.op == Opcode::EntryMask) return false;
    if (skip && (*skip)[v]) continue;  // computed by the control loop (emit_control_loop)
    if (in.op == Opcode::Phi) {
      chain[v] = 0;
      incoming.push_back(in.args[l.back_operand]);
      continue;
    }
    if (op_info(in.op).terminator || in.op == Opcode::Budget) continue;
    const OpCost c = op_cost(in);
    uops += c.uops;
    int d = -1;
    for (ValueId a : in.args)
      if (a < n && f_.insts[a].block == l.block) d = std::max(d, chain[a]);
    if (d >= 0) chain[v] = d + c.latency;
  }
  // Latency-bound: the loop-carried chain of one iteration is longer than
  // the cycles the strip's vector micro-ops need on the vector ports (2 for
  // 512-bit operations, 3 for 256-bit). Otherwise one strip already keeps
  // the ports busy, and two strips in half the registers only add spills
  // (the bench's ceiling kernels, ref_loop).
  int latency = 0;
  for (ValueId a : incoming)
    if (a < n) latency = std::max(latency, chain[a]);
  const int ports = z_ ? 2 : 3;
  if (latency * ports <= uops) return false;
  // Each strip's half of the registers must hold every phi it computes:
  // a phi in its slot puts a store and a load on its loop-carried chain
  // (AVX2's halves of 5 registers mostly cannot, and lose to the
  // strip-outer form: G13 alu).
  const int saved_lo = cache_lo_, saved_hi = cache_hi_;
  const int half = (nregs_ - kFirstCacheReg) / 2;
  bool fits = true;
  for (int strip = 0; strip < 2 && fits; ++strip) {
    cache_lo_ = kFirstCacheReg + strip * half;
    cache_hi_ = cache_lo_ + half;
    const LoopState s = loop_analyze(l, register_uses, strip == 1 || skip, nullptr, skip);
    for (size_t i = 0; i < s.phis.size(); ++i) fits = fits && (s.home[i] >= 0 || s.branch_only_phi[i]);
  }
  cache_lo_ = saved_lo;
  cache_hi_ = saved_hi;
  return fits;
}

// The pair of strips at r14 and rbp (a strip-interleaved loop) runs
// kLoopLeftOffset iterations side by side, then stores its exit state, or
// at a watchdog fault the state the iteration-outer code faults with and a
// jump to `next`; the exit state falls through to `next`.
void Emitter::loop_counted_pair_run(LoopState& sa, LoopState& sb, Label& next) {
  auto both = [&](auto&& fa, auto&& fb) {
    fa();
    loop_switch_strip();
    fb();
    loop_switch_strip();
  };
  Label head, last, exit_pair;
  loop_reset_range();
  loop_switch_strip();
  loop_reset_range();
  loop_switch_strip();
  both([&] { loop_pin(sa); loop_canonical(sa); }, [&] { loop_pin(sb); loop_canonical(sb); });
  L(head);
  both([&] { loop_body(sa); }, [&] { loop_body(sb); });
  sub(qword[rsp + kLoopLeftOffset], 1);
  jz(last, T_NEAR);
  CacheSnapshot at_count = cache_snapshot(true);
  both([&] { loop_back_copy(sa); }, [&] { loop_back_copy(sb); });
  jmp(head, T_NEAR);
  cache_restore(at_count);
  L(last);
  cmp(dword[rsp + kLoopFaultOffset], 0);
  je(exit_pair, T_NEAR);
  // a watchdog fault: the iteration-outer code faults after this back edge
  both([&] { loop_back_copy(sa); loop_store_phis(sa); }, [&] { loop_back_copy(sb); loop_store_phis(sb); });
  jmp(next, T_NEAR);
  cache_restore(at_count);
  L(exit_pair);
  both([&] { loop_store_live_out(sa); loop_store_phis(sa); }, [&] { loop_store_live_out(sb); loop_store_phis(sb); });
}

void Emitter::emit_interleaved_loop(const StripLoop& l, const std::vector<ValueId>& register_uses,
                                    const std::vector<uint8_t>* uniform_only) {
  const int strips = kWarpLanes / lanes_;  // 2 (AVX-512) or 4 (AVX2)
  if (uniform_only && strips != 2) throw CompileError("x64 jit: internal: fused loop control on more than two strips");
  const int half = (nregs_ - kFirstCacheReg) / 2;
  // The analyses, each for its strip's registers.
  cache_lo_ = kFirstCacheReg;
  cache_hi_ = cache_lo_ + half;
  LoopState sa = loop_analyze(l, register_uses, false);  // the first launched lane's strip
  LoopState sa_counted;                                   // strip A of the second pair (AVX2)
  if (strips > 2) sa_counted = loop_analyze(l, register_uses, true);
  cache_lo_ = kFirstCacheReg + half;
  cache_hi_ = cache_lo_ + half;
  // its partner (and strip B of the second pair); with uniform control
  // (emit_control_loop's fused form) it leaves out what A gives it at the exit
  LoopState sb = loop_analyze(l, register_uses, true, nullptr, uniform_only);
  cache_lo_ = kFirstCacheReg;
  cache_hi_ = cache_lo_ + half;

  // fa for strip A (r14), then fb for strip B (rbp); A is current before and after.
  auto both = [&](auto&& fa, auto&& fb) {
    fa();
    loop_switch_strip();
    fb();
    loop_switch_strip();
  };
  auto reset_both = [&] {
    loop_reset_range();
    loop_switch_strip();
    loop_reset_range();
    loop_switch_strip();
  };

  loop_find_first_strip();
  mov(ebp, eax);
  xor_(ebp, vbytes_);  // the other strip of the pair (rbp, the frame pointer, is restored after the loop)

  // ---- the pair of the first launched lane: A decides the trip count and charges the budget
  std::vector<Label> fault_stub(l.budgets.size());
  Label head_first, exit_first, others;
  reset_cache();
  alt_vals_ = vals_;
  both([&] { loop_pin(sa); loop_canonical(sa); }, [&] { loop_pin(sb); loop_canonical(sb); });
  L(head_first);
  for (size_t i = 0; i < l.budgets.size(); ++i) {
    mov(rax, f_.insts[l.budgets[i]].imm);
    sub(qword[CTX(budget)], rax);
    jl(fault_stub[i], T_NEAR);
  }
  add(qword[rsp + kLoopTripsOffset], 1);
  both([&] { loop_body(sa); }, [&] { loop_body(sb); });
  loop_branch_exit(sa, exit_first);
  CacheSnapshot at_branch = cache_snapshot(true);
  both([&] { loop_back_copy(sa); }, [&] { loop_back_copy(sb); });
  jmp(head_first, T_NEAR);
  cache_restore(at_branch);
  L(exit_first);
  if (uniform_only) loop_store_all_strips(sa, true, *uniform_only);  // B's values it left out: A's
  both([&] { loop_store_live_out(sa); loop_store_phis(sa); }, [&] { loop_store_live_out(sb); loop_store_phis(sb); });
  jmp(others, T_NEAR);
  // the stubs are reached from the top of an iteration: the homes hold the phis
  both([&] { loop_canonical(sa); }, [&] { loop_canonical(sb); });
  for (size_t i = 0; i < l.budgets.size(); ++i) {
    L(fault_stub[i]);  // the phis hold the state after the last whole iteration
    mov(dword[rsp + kLoopFaultOffset], uint32_t(i + 1));
    if (uniform_only) loop_store_all_strips(sa, false, *uniform_only);
    both([&] { loop_store_phis(sa); }, [&] { loop_store_phis(sb); });
    jmp(others, T_NEAR);
  }
  L(others);

  // ---- AVX2: the other pair, the same number of iterations
  if (strips > 2) {
    Label done;
    mov(rax, qword[rsp + kLoopTripsOffset]);
    test(rax, rax);
    jz(done, T_NEAR);  // the first budget op faulted: the phis keep their entry values
    mov(qword[rsp + kLoopLeftOffset], rax);
    mov(eax, r14d);
    xor_(eax, 2 * vbytes_);
    and_(eax, -2 * vbytes_);
    mov(r14d, eax);
    lea(ebp, ptr[rax + vbytes_]);
    loop_counted_pair_run(sa_counted, sb, done);
    L(done);
  }
  reset_both();
  cache_lo_ = kFirstCacheReg;
  cache_hi_ = nregs_;
  alt_vals_.clear();
  reset_cache();
  lea(rbp, ptr[rsp + kStackBytes + 5 * 8]);  // the frame pointer of emit_entry_frame (five pushes below it)

  emit_loop_exit(l);
}


// ---------------------------------------------------------------- uniform loop control
//
// A loop whose branch and loop-control values are equal in every lane (a
// G13 `while_icmp` loop's counter and r0l exec-stack field; lane_equal_,
// which counts phis only under the unlaunched-lanes contract) computes them
// once per iteration, not once per strip: a control loop runs the values
// that decide the branch and the lane-equal values nothing else in the body
// reads (`uniform_only`: read only by each other, the branch and code after
// the loop) on the first launched lane's strip, charges the budget and
// counts the iterations; its exit stores those values into every strip's
// slots (they are the same in all 32 lanes). Then every strip runs that many
// iterations of the rest of the body (counted, as the strip-outer form's
// later strips), in interleaved pairs where loop_interleavable allows. A
// watchdog fault after k iterations leaves the control values after k whole
// iterations and the strips after k iterations and back-edge copies, as the
// other forms do. No op of the body may fault (a load_uniform needs the
// entry's test of the uniform block, uniforms_known_nonnull), since the
// control loop runs every iteration before any strip's body does.

namespace {
// GPURC_X64_CONTROL_LOOP=0 (read once; a measuring aid) keeps the forms above.
bool control_loops_enabled() {
  static const bool on = env_switch_on("GPURC_X64_CONTROL_LOOP");
  return on;
}
// GPURC_X64_FUSED_CONTROL=0 (read once; a measuring aid) keeps the separate
// control loop on AVX-512 too.
bool fused_control_enabled() {
  static const bool on = env_switch_on("GPURC_X64_FUSED_CONTROL");
  return on;
}
}  // namespace

bool Emitter::loop_control_sets(const StripLoop& l, std::vector<uint8_t>& uniform_only, std::vector<uint8_t>& control) {
  if (!f_.unlaunched_lanes_free || !control_loops_enabled()) return false;
  const size_t n = f_.insts.size();
  const BlockId b = l.block;
  const ValueId term = f_.terminator(b);
  const ValueId cond = f_.insts[term].args[0];
  if (cond >= n || !lane_equal_[cond]) return false;
  for (ValueId v : f_.blocks[b].insts)
    if (f_.insts[v].op == Opcode::LoadUniform && !uniforms_known_nonnull()) return false;  // could fault
  uniform_only.assign(n, 0);
  for (ValueId v : f_.blocks[b].insts) {
    const Inst& in = f_.insts[v];
    if (v == term || in.op == Opcode::Budget || in.type == ir::Type::Void || wide(v) || !lane_equal_[v]) continue;
    if (in.op != Opcode::Phi && (plan_.segment_of[v] < 0 || !plan_.segments[size_t(plan_.segment_of[v])].strip))
      continue;
    uniform_only[v] = 1;
  }
  // Greatest fixed point: a value some other op of the block reads (a phi
  // counts as reading its back-edge operand) stays in the strips.
  for (bool changed = true; changed;) {
    changed = false;
    for (ValueId u : f_.blocks[b].insts) {
      if (u == term || uniform_only[u]) continue;
      for (ValueId a : f_.insts[u].args)
        if (a < n && uniform_only[a]) {
          uniform_only[a] = 0;
          changed = true;
        }
    }
  }
  // Worth it when some such value is read after the loop (the strip-outer
  // form's later strips already leave out what only the branch reads).
  bool read_later = false;
  for (ValueId u = 0; u < n && !read_later; ++u) {
    const Inst& ui = f_.insts[u];
    if (ui.block == kNoBlock || ui.block == b) continue;
    for (ValueId a : ui.args)
      if (a < n && uniform_only[a] && f_.insts[a].op != Opcode::Const) read_later = true;
  }
  if (!read_later) return false;
  // The control loop computes those and everything the branch needs.
  control.assign(n, 0);
  std::vector<ValueId> work;
  auto add = [&](ValueId v) {
    if (v < n && f_.insts[v].block == b && !control[v]) {
      control[v] = 1;
      work.push_back(v);
    }
  };
  add(cond);
  for (ValueId v : f_.blocks[b].insts)
    if (uniform_only[v]) add(v);
  while (!work.empty()) {
    const ValueId v = work.back();
    work.pop_back();
    for (ValueId a : f_.insts[v].args) add(a);
  }
  for (ValueId v = 0; v < n; ++v)
    if (control[v] && !lane_equal_[v]) return false;  // (lane_equal_ is closed under operands: cannot happen)
  // A phi both loops compute must have a register in the control loop: its
  // back-edge copies into a slot would overwrite the entry value the strips
  // start from.
  const LoopState sc = loop_analyze(l, {}, false, &control, nullptr);
  for (size_t i = 0; i < sc.phis.size(); ++i)
    if (!sc.branch_only_phi[i] && !uniform_only[sc.phis[i]] && sc.home[i] < 0) return false;
  return true;
}

// Only the values the strips leave out (`uniform_only`): a phi the strips
// compute as well must keep its entry value in their slots, from which the
// strips start.
void Emitter::loop_store_all_strips(LoopState& s, bool live_out, const std::vector<uint8_t>& uniform_only) {
  auto store_all = [&](ValueId v, int r) {
    const int off = int(slot(v));
    for (int o = 0; o < kLaneArrayBytes4; o += vbytes_) vstore(ptr[r12 + off + o], r);
  };
  for (size_t i = 0; i < s.phis.size(); ++i) {
    if (s.branch_only_phi[i] || !uniform_only[s.phis[i]]) continue;
    const ValueId p = s.phis[i];
    if (s.home[i] >= 0 && regs_[s.home[i]].v == p) {
      store_all(p, s.home[i]);
    } else if (s.home[i] < 0 && !s.slot_early[i]) {
      vload(1, strip_mem(p));
      store_all(p, 1);
    }  // else an early move left the operand there: nothing after the loop reads the phi
  }
  for (ValueId v : s.live_out) {
    if (!live_out) break;
    if (!uniform_only[v]) continue;  // the strips store it
    const int r = vals_[v].reg;
    if (r >= 0) {
      store_all(v, r);
    } else if (vals_[v].in_frame) {
      vload(1, strip_mem(v));
      store_all(v, 1);
    } else if (s.early_phi[v] >= 0 && s.slot_early[size_t(s.early_phi[v])]) {
      vload(1, strip_mem(s.phis[size_t(s.early_phi[v])]));  // stored early into its phi's slot
      store_all(v, 1);
    } else {
      throw CompileError("x64 jit: internal: loop value %" + std::to_string(v) + " is neither cached nor stored");
    }
    vals_[v].in_frame = true;
  }
}

void Emitter::emit_control_loop(const StripLoop& l, const std::vector<ValueId>& register_uses, bool trial_called,
                                const std::vector<uint8_t>& uniform_only, const std::vector<uint8_t>& control) {
  // Two strips (AVX-512): the one pair is the whole warp, so the control
  // runs in the pair's iterations, as strip A's part of the interleaved form
  // with B leaving out the uniform-only values (A's exit gives B them): the
  // control's chains overlap the strips' instead of running before them.
  if (kWarpLanes / lanes_ == 2 && fused_control_enabled() && loop_interleavable(l, register_uses, trial_called)) {
    emit_interleaved_loop(l, register_uses, &uniform_only);
    return;
  }
  LoopState sc = loop_analyze(l, register_uses, false, &control, nullptr);

  loop_find_first_strip();

  // ---- the control loop: the branch, the budget, the trip count
  std::vector<Label> fault_stub(l.budgets.size());
  Label head, exit_control, counted;
  reset_cache();
  loop_pin(sc);
  loop_canonical(sc);
  L(head);
  for (size_t i = 0; i < l.budgets.size(); ++i) {
    mov(rax, f_.insts[l.budgets[i]].imm);
    sub(qword[CTX(budget)], rax);
    jl(fault_stub[i], T_NEAR);
  }
  add(qword[rsp + kLoopTripsOffset], 1);
  loop_body(sc);
  loop_branch_exit(sc, exit_control);
  auto at_branch = cache_snapshot();
  loop_back_copy(sc);
  jmp(head, T_NEAR);
  cache_restore(at_branch);
  L(exit_control);
  loop_store_all_strips(sc, true, uniform_only);
  jmp(counted, T_NEAR);
  loop_canonical(sc);  // the stubs are reached from the top of an iteration: the homes hold the phis
  for (size_t i = 0; i < l.budgets.size(); ++i) {
    L(fault_stub[i]);  // the phis hold the state after the last whole iteration
    mov(dword[rsp + kLoopFaultOffset], uint32_t(i + 1));
    loop_store_all_strips(sc, false, uniform_only);  // (a fault: nothing after the loop runs)
    jmp(counted, T_NEAR);
  }
  L(counted);
  reset_cache();

  // ---- every strip: the rest of the body, the control loop's number of iterations
  if (loop_interleavable(l, register_uses, trial_called, &uniform_only)) {
    emit_counted_pairs(l, register_uses, uniform_only);
  } else {
    LoopState so = loop_analyze(l, register_uses, true, nullptr, &uniform_only);
    Label strip_top, strip_next, done, no_rerun;
    mov(rax, qword[rsp + kLoopTripsOffset]);
    test(rax, rax);
    jz(done, T_NEAR);  // the first budget op faulted: the phis keep their entry values
    xor_(r14d, r14d);
    L(strip_top);
    mov(rax, qword[rsp + kLoopTripsOffset]);
    mov(qword[rsp + kLoopLeftOffset], rax);
    loop_counted_run(so, false, no_rerun, strip_next, true);  // (strip_next follows)
    L(strip_next);
    add(r14d, vbytes_);
    cmp(r14d, kLaneArrayBytes4);
    jb(strip_top, T_NEAR);
    L(done);
    reset_cache();
  }
  emit_loop_exit(l);
}

// The counted strips of a control loop two at a time (strip A at r14, B at
// rbp = r14 + one strip), each in its half of the registers as in
// emit_interleaved_loop; pairs in lane order (AVX2: two).
void Emitter::emit_counted_pairs(const StripLoop& l, const std::vector<ValueId>& register_uses,
                                 const std::vector<uint8_t>& skip) {
  const int half = (nregs_ - kFirstCacheReg) / 2;
  cache_lo_ = kFirstCacheReg;
  cache_hi_ = cache_lo_ + half;
  LoopState sa = loop_analyze(l, register_uses, true, nullptr, &skip);
  cache_lo_ = kFirstCacheReg + half;
  cache_hi_ = cache_lo_ + half;
  LoopState sb = loop_analyze(l, register_uses, true, nullptr, &skip);
  cache_lo_ = kFirstCacheReg;
  cache_hi_ = cache_lo_ + half;
  auto reset_both = [&] {
    loop_reset_range();
    loop_switch_strip();
    loop_reset_range();
    loop_switch_strip();
  };
  Label pair_top, pair_next, done;
  mov(rax, qword[rsp + kLoopTripsOffset]);
  test(rax, rax);
  jz(done, T_NEAR);  // the first budget op faulted: the phis keep their entry values
  reset_cache();
  alt_vals_ = vals_;
  xor_(r14d, r14d);
  L(pair_top);
  mov(rax, qword[rsp + kLoopTripsOffset]);
  mov(qword[rsp + kLoopLeftOffset], rax);
  lea(ebp, ptr[r14 + vbytes_]);
  loop_counted_pair_run(sa, sb, pair_next);
  L(pair_next);
  add(r14d, 2 * vbytes_);
  cmp(r14d, kLaneArrayBytes4);
  jb(pair_top, T_NEAR);
  L(done);
  reset_both();
  cache_lo_ = kFirstCacheReg;
  cache_hi_ = nregs_;
  alt_vals_.clear();
  reset_cache();
  lea(rbp, ptr[rsp + kStackBytes + 5 * 8]);  // the frame pointer of emit_entry_frame (five pushes below it)
}

// After the last strip of either loop form: the exit edge, or the watchdog
// fault of the budget op that ran out (kLoopFaultOffset holds its index + 1).
void Emitter::emit_loop_exit(const StripLoop& l) {
  const BlockId exit_to = f_.blocks[l.block].succs[l.exit_succ];
  Label faulted;
  mov(eax, dword[rsp + kLoopFaultOffset]);
  test(eax, eax);
  jnz(faulted, T_NEAR);
  emit_edge(l.block, l.exit_succ);
  jmp(block_label_[exit_to], T_NEAR);
  L(faulted);
  for (size_t i = 0; i < l.budgets.size(); ++i) {
    Label next;
    if (i + 1 < l.budgets.size()) {
      cmp(eax, uint32_t(i + 1));
      jne(next, T_NEAR);
    }
    emit_fault_return(FaultKind::Watchdog, l.budgets[i]);
    L(next);
  }
  if (l.budgets.empty()) jmp(epilogue_, T_NEAR);  // unreachable: no budget op, no fault
}
}  // namespace gpurc::x64
