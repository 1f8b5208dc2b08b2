// Native lowering of state, select, integer and 64-bit move ops. Narrow
// integer lanes (i1/i8/i16) live zero-extended in 32-bit lanes; every result
// is masked back to its width so it stays canonical.
#include "backend_x64/emitter.h"
#include "backend_x64/lowering.h"

#include <algorithm>
#include <cstddef>

namespace gpurc::x64 {

using namespace ir;
using namespace Xbyak;

#define CTX(field) (rbx + int(offsetof(WarpContext, field)))

bool Emitter::lower_native(ValueId v) {
  const Inst& in = f_.insts[v];
  bool any_wide = in.type != ir::Type::Void && lane_bytes(in.type) == 8;
  for (ValueId a : in.args) any_wide = any_wide || wide(a);
  const OpLowering& l = kOpLowering[size_t(in.op)];
  LowerFn fn = any_wide && itof_narrow_source(f_, v) == kNoValue ? l.wide : l.narrow;
  return fn != nullptr && (this->*fn)(v);
}

// A 32-bit const whose every reader takes it as an operand that is not a
// register, and that no other segment reads: it needs no register, no slot
// and no broadcast. The readers: a 32-bit shift taking it as its count (an
// immediate), and iadd / isub / and / or / xor (and on AVX-512 icmp) taking
// it as their second (iadd, and, or, xor: either) operand, which read it from
// the constant pool (const_operand: AVX-512 a {1toN} broadcast of the 4-byte
// constant, AVX2 a vector-width constant). In a strip-outer loop it then
// takes neither a pinned register nor a broadcast per iteration (ref_loop's
// aL & 0xff, (aL + 10) & 0x7f, its 96 of the range check).
bool Emitter::count_only_const(ValueId v) {
  if (count_only_const_.empty()) {
    const size_t n = f_.insts.size();
    count_only_const_.assign(n, 0);
    for (ValueId c = 0; c < n; ++c)
      if (f_.insts[c].op == Opcode::Const && !wide(c) && !plan_.escapes[c]) count_only_const_[c] = 1;
    for (ValueId u = 0; u < n; ++u) {
      const Inst& ui = f_.insts[u];
      if (ui.block == kNoBlock) continue;
      auto shift = [&] {  // a 32-bit shift, whose count a candidate may be (asked only then)
        return (ui.op == Opcode::Shl || ui.op == Opcode::LShr || ui.op == Opcode::AShr) && !wide(u) &&
               ui.args.size() == 2 && !wide(ui.args[0]);
      };
      // (only a candidate's readers need the position test)
      for (size_t i = 0; i < ui.args.size(); ++i)
        if (ValueId a = ui.args[i]; a < n && count_only_const_[a] && !(i == 1 && a != ui.args[0] && shift()) &&
                                    !const_operand_position(u, i))
          count_only_const_[a] = 0;
      // Two constant operands (sixteenth session; before, both were left to
      // the pool and the first was read from a slot never written): the
      // lowering takes the second from the pool, so the first is materialised.
      if (ui.args.size() == 2 && ui.args[0] < n && ui.args[1] < n && ui.args[0] != ui.args[1] &&
          f_.insts[ui.args[1]].op == Opcode::Const && count_only_const_[ui.args[0]] &&
          (ui.op == Opcode::IAdd || ui.op == Opcode::And || ui.op == Opcode::Or || ui.op == Opcode::Xor))
        count_only_const_[ui.args[0]] = 0;
      if (ui.op != Opcode::IToF) continue;
      if (ValueId x = itof_narrow_source(f_, u); x != kNoValue && x < n) count_only_const_[x] = 0;
    }
  }
  return count_only_const_[v] != 0;
}

// Whether op u can read its operand i from the constant pool (count_only_const).
bool Emitter::const_operand_position(ValueId u, size_t i) {
  const Inst& ui = f_.insts[u];
  // AVX2: a select of an inverted mask-only compare blends the false operand
  // in where the mask is set, which vblendvps reads from memory.
  if (ui.op == Opcode::Select && ui.args.size() == 3)
    return !z_ && i == 2 && ui.args[2] != ui.args[1] && ui.args[2] != ui.args[0] && !wide(u) && !deferred_[u] &&
           inverted_mask_cmp(ui.args[0]);
  if (ui.args.size() != 2 || ui.args[0] == ui.args[1] || deferred_[u]) return false;
  if (ui.type == ir::Type::Void || wide(u) || wide(ui.args[0]) || wide(ui.args[1])) return false;
  switch (ui.op) {
    case Opcode::IAdd: case Opcode::And: case Opcode::Or: case Opcode::Xor:
      return true;
    case Opcode::ISub:
      return i == 1;
    case Opcode::ICmp: {
      if (!z_) return i == 1 && (inverted_mask_cmp(u) || pool_const_cmp(u));  // the pool's const (- 1)
      if (i != 1) return false;
      const IntPred p = IntPred(ui.attr);
      const bool is_signed = p == IntPred::Slt || p == IntPred::Sle || p == IntPred::Sgt || p == IntPred::Sge;
      return !(is_signed && bit_width(f_.insts[ui.args[0]].type) < 32);
    }
    default:
      return false;
  }
}

// An icmp whose 0/1 lanes nothing needs: every reader is a 32-bit select
// taking it as its condition only, in the same strip segment, and each is
// reached with the compare's mask still in k1 (AVX-512) / vector 0 (AVX2,
// all-ones lanes): between the compare and its last select come only
// selects of the same condition, load_uniform_idx of lane-equal offsets and
// consts (the ops after which lower_strip_op keeps select_mask_of_), and none of
// them (nor the compare) stores a phi's slot at its end (end_op's direct
// phi stores use vector 0). The compare then leaves only its mask and the
// selects blend with it (PICA200's c[aL] range check: four selects of one
// compare). On AVX2 only the predicates whose mask is one compare (eq, gt,
// lt) qualify.
bool Emitter::mask_only_cmp(ValueId v) {
  if (mask_only_cmp_.empty()) {
    const size_t n = f_.insts.size();
    mask_only_cmp_.assign(n, 0);
    std::vector<int32_t> last(n, -1);  // per candidate: the position of its last reader
    bool any = false;
    for (ValueId c = 0; c < n; ++c) {
      const Inst& ci = f_.insts[c];
      if (ci.op != Opcode::ICmp || ci.block == kNoBlock || ci.args.size() != 2 || deferred_[c]) continue;
      if (wide(ci.args[0]) || wide(ci.args[1]) || plan_.escapes[c] || !plan_.direct_phis[c].empty()) continue;
      const int seg = plan_.segment_of[c];
      if (seg < 0 || !plan_.segments[size_t(seg)].strip) continue;
      const IntPred p = IntPred(ci.attr);
      if (!z_ && !(p == IntPred::Eq || p == IntPred::Sgt || p == IntPred::Ugt || p == IntPred::Slt || p == IntPred::Ult))
        continue;
      mask_only_cmp_[c] = 1;
      any = true;
    }
    for (ValueId u = 0; any && u < n; ++u) {  // (no candidate compare: nothing to clear, most shaders)
      const Inst& ui = f_.insts[u];
      if (ui.block == kNoBlock) continue;
      for (size_t i = 0; i < ui.args.size(); ++i) {
        const ValueId a = ui.args[i];
        if (a >= n || !mask_only_cmp_[a]) continue;
        const bool ok = ui.op == Opcode::Select && i == 0 && ui.args[1] != a && ui.args[2] != a && !wide(u) &&
                        !deferred_[u] && plan_.segment_of[u] == plan_.segment_of[a] &&
                        plan_.position[u] > plan_.position[a];
        if (!ok) mask_only_cmp_[a] = 0;
        else last[a] = std::max(last[a], plan_.position[u]);
      }
      if (ui.op != Opcode::IToF) continue;
      if (ValueId x = itof_narrow_source(f_, u); x != kNoValue && x < n) mask_only_cmp_[x] = 0;
    }
    for (ValueId c = 0; any && c < n; ++c) {
      if (!mask_only_cmp_[c]) continue;
      if (last[c] < 0) {  // read by nothing here: made as usual
        mask_only_cmp_[c] = 0;
        continue;
      }
      const Segment& sg = plan_.segments[size_t(plan_.segment_of[c])];
      for (ValueId w : sg.ops) {
        const int32_t pw = plan_.position[w];
        if (pw <= plan_.position[c] || pw > last[c]) continue;
        const Inst& wi = f_.insts[w];
        const bool keeps = (wi.op == Opcode::Select && wi.args[0] == c && !wide(w)) ||
                           (wi.op == Opcode::LoadUniformIdx && !wide(w) && lane_equal_[wi.args[0]]) ||
                           (wi.op == Opcode::Const && !wide(w));
        if (!keeps || !plan_.direct_phis[w].empty()) {
          mask_only_cmp_[c] = 0;
          break;
        }
      }
    }
  }
  return v < mask_only_cmp_.size() && mask_only_cmp_[v] != 0;
}

// AVX-512: the i1 `and` of two 32-bit compares (Tesla's MAD range tests
// r1 && r2) made each compare's 0/1 lanes with a masked broadcast and
// joined them with vpandd. When both compares are read by that `and` only
// (not escaping, no phi), come before it in the same strip segment, and
// only ops that keep k5..k7 (kmask_keeps) and no other compare lie between
// the first of them and the `and`, their masks are still in k5..k7 there
// (three registers, two taken): the compares make no lanes and the `and`
// is a kandw and one broadcast. 1: such an `and`; 2: one of its compares.
// AVX2 (seventeenth session): the same pairs of compares with a constant
// from the pool (pool_const_cmp, `x > C`: Tesla's range tests) leave their
// all-ones lanes in their registers (a value only the `and` reads, in
// register or slot), and the `and` is vpand and one vpsrld: one shift
// fewer. (No k registers there: the ops between are not restricted.)
bool Emitter::kand_pair(ValueId v) {
  if (kand_pair_.empty()) {
    const size_t n = f_.insts.size();
    kand_pair_.assign(n, 0);
    auto cmp_ok = [&](ValueId c, ValueId u) {
      if (c >= n) return false;
      const Inst& ci = f_.insts[c];
      if (ci.op != Opcode::ICmp || ci.args.size() != 2 || deferred_[c] || plan_.escapes[c] ||
          !plan_.direct_phis[c].empty() || plan_.segment_of[c] != plan_.segment_of[u] || wide(c))
        return false;
      for (ValueId a : ci.args)
        if (a >= n || wide(a)) return false;
      if (!z_ && !pool_const_cmp(c)) return false;
      return plan_.position[c] < plan_.position[u] && plan_.last_use[c] == plan_.position[u];
    };
    for (ValueId u = 0; u < n; ++u) {
      const Inst& ui = f_.insts[u];
      if (ui.op != Opcode::And || ui.type != ir::Type::I1 || ui.block == kNoBlock || ui.args.size() != 2) continue;
      if (deferred_[u] || ui.args[0] == ui.args[1] || plan_.segment_of[u] < 0) continue;
      const Segment& sg = plan_.segments[size_t(plan_.segment_of[u])];
      if (!sg.strip || (ui.block < plan_.strip_loop_of.size() && plan_.strip_loop_of[ui.block] >= 0)) continue;
      const ValueId a = ui.args[0], b = ui.args[1];
      if (!cmp_ok(a, u) || !cmp_ok(b, u) || kand_pair_[a] || kand_pair_[b]) continue;
      const int32_t from = std::min(plan_.position[a], plan_.position[b]), to = plan_.position[u];
      bool ok = true;
      for (int32_t i = from; ok && i < to; ++i) {
        const ValueId w = sg.ops[size_t(i)];
        if (w == a || w == b) continue;
        if (deferred_[w]) continue;  // no code here
        const Inst& wi = f_.insts[w];
        for (ValueId x : wi.args)
          if (x == a || x == b) ok = false;  // another reader
        if (z_ && (wi.op == Opcode::ICmp || !kmask_keeps(w))) ok = false;
      }
      if (!ok) continue;
      kand_pair_[u] = 1;
      kand_pair_[a] = kand_pair_[b] = 2;
    }
  }
  return v < kand_pair_.size() && kand_pair_[v] != 0;
}

// AVX2: a mask-only compare x < C (signed, or unsigned with both below 2^31)
// of a 32-bit const C other than INT_MIN. vpcmpgtd takes memory only as its
// second operand, so x < C (C > x) needed C in a register; instead the
// compare leaves the complement, x > C - 1, with C - 1 from the pool, and
// its selects blend their operands the other way round (the false operand
// where the mask is set: a const false operand is then a memory operand
// too, const_operand_position). PICA200's c[aL] range check: aL + 10 < 96,
// else 1.0, four selects; neither 96 nor 1.0 takes a register.
bool Emitter::inverted_mask_cmp(ValueId v) {
  if (z_ || v >= f_.insts.size()) return false;
  const Inst& in = f_.insts[v];
  if (in.op != Opcode::ICmp || in.args.size() != 2 || in.args[0] == in.args[1]) return false;
  const Inst& c = f_.insts[in.args[1]];
  if (c.op != Opcode::Const || wide(in.args[1]) || bit_width(c.type) != 32 || bit_width(f_.insts[in.args[0]].type) != 32)
    return false;
  const IntPred p = IntPred(in.attr);
  const uint32_t k = uint32_t(c.imm);
  if (p == IntPred::Slt) {
    if (k == 0x80000000u) return false;  // x < INT_MIN is never true; C - 1 would wrap
  } else if (p != IntPred::Ult || !below_2_31(in.args[0]) || !below_2_31(in.args[1])) {
    return false;
  }
  return mask_only_cmp(v);
}

// AVX2: a signed 32-bit `x > C`, whose constant vpcmpgtd reads from the
// pool as its memory operand: no broadcast of C into a register per strip
// (the Tesla MAD's range tests). (`x < C` with 0/1 lanes would be
// !(x > C - 1), one instruction more than the register form inside a loop,
// where the constant's register is set up once; mask-only `x < C` compares
// are inverted_mask_cmp's, their selects take the inverted mask.)
bool Emitter::pool_const_cmp(ValueId v) {
  if (z_ || v >= f_.insts.size()) return false;
  const Inst& in = f_.insts[v];
  if (in.op != Opcode::ICmp || in.args.size() != 2 || in.args[0] == in.args[1] || wide(in.args[1])) return false;
  const Inst& c = f_.insts[in.args[1]];
  if (c.op != Opcode::Const || bit_width(c.type) != 32 || bit_width(f_.insts[in.args[0]].type) != 32) return false;
  const IntPred p = IntPred(in.attr);
  return p == IntPred::Sgt;
}

// AVX2: which operand of a two-operand integer op u (the second, or either
// when `either`) is only in its frame slot, not in a register, so the op
// reads it as its memory operand instead of loading it into a register
// first (as the fused MADs do, fused_operands): -1 if none. In a strip-outer
// loop that is a loop invariant or phi the registers had no room for (PICA200
// ref_loop's trip count: its step). AVX-512 keeps the register form.
int Emitter::slot_operand(ValueId u, bool either) const {
  const Inst& ui = f_.insts[u];
  if (z_ || ui.args.size() != 2 || ui.args[0] == ui.args[1] || wide(u)) return -1;
  for (int i = 1; i >= (either ? 0 : 1); --i) {
    const ValueId x = ui.args[size_t(i)];
    if (!wide(x) && vals_[x].reg < 0 && vals_[x].in_frame) return i;
  }
  return -1;
}

// A count_only_const read as a memory operand (its bits in the pool).
Xbyak::Address Emitter::const_operand(ValueId c) {
  const uint32_t bits = uint32_t(f_.insts[c].imm & type_mask(f_.insts[c].type));
  return z_ ? ptr_b[rip + const32_[bits]] : const_vec(bits);
}

bool Emitter::lower_state(ValueId v) {
  const Inst& in = f_.insts[v];
  switch (in.op) {
    case Opcode::Const: {
      if (count_only_const(v)) return true;  // every reader takes it as an immediate shift count
      int d = def(v);
      bcast_const(d, uint32_t(in.imm & type_mask(in.type)));
      return true;
    }
    case Opcode::Undef: {
      int d = def(v);
      vxor(d, d, d);  // unspecified; zero keeps runs deterministic
      return true;
    }
    case Opcode::LoadVar: {
      if (in.imm >= f_.vars.size()) throw CompileError("x64 jit: load_var of unknown var " + std::to_string(in.imm));
      if (var_home_[v] >= 0) {  // its var is its home (find_var_homes): loaded where it is used
        vals_[v].in_frame = true;
        return true;
      }
      int d = def(v);
      vload(d, var_ref(uint32_t(in.imm)));
      mask_to_width(d, in.type);
      return true;
    }
    case Opcode::StoreVar: {
      if (in.imm >= f_.vars.size()) throw CompileError("x64 jit: store_var of unknown var " + std::to_string(in.imm));
      int s = use(in.args[0]);
      if (store_needs_flush(in.args[0])) {  // its producer left the FtzOut flush to the stores
        // In DAZ mode (store_needs_flush implies it) x + -0.0 is the flush:
        // the add reads a subnormal x as the zero of its sign, and that zero
        // plus -0.0 is the same zero; any other x comes back unchanged (a NaN
        // lane is a quiet NaN after its producer's NaN fix, returned as it
        // is). One instruction instead of a copy and four (AVX2) or two.
        if (z_) vaddps(V(2), V(s), ptr_b[rip + const32_[0x80000000u]]);
        else vaddps(V(2), V(s), const_vec(0x80000000u));
        s = 2;
      }
      vstore(var_ref(uint32_t(in.imm)), s);
      return true;
    }
    case Opcode::LoadUniform: {
      unsigned bytes = in.type == ir::Type::I1 ? 1 : bit_width(in.type) / 8;
      int d = def(v);
      if (in.imm <= f_.uniform_bytes && f_.uniform_bytes - in.imm >= bytes) {
        // No uniform block: the fault. Within a strip segment's body only
        // the first load tests r15 (constant for the whole run).
        if (!(in_segment_body_ && uniforms_checked_) && !uniforms_known_nonnull()) {
          emit_uniform_block_test(v, in.imm);
          uniforms_checked_ = in_segment_body_;
        }
      } else {
        emit_fault_return(FaultKind::OutOfBounds, v, in.imm, uint32_t(Space::Const));
      }
      bcast_uniform(d, in);
      return true;
    }
    case Opcode::LoadUniformIdx:
      return lower_uniform_indexed(v);
    case Opcode::EntryMask: {
      int d = def(v);
      mov(eax, dword[CTX(entry_mask)]);
      mov(ecx, r14d);
      shr(ecx, 2);
      shr(eax, cl);
      bcast_gpr(d, eax);
      vpsrlvd(V(d), V(d), ptr[rip + iota_]);
      mask_to_width(d, ir::Type::I1);
      return true;
    }
    case Opcode::LaneId: {
      int d = def(v);
      mov(eax, r14d);
      shr(eax, 2);
      bcast_gpr(d, eax);
      vpaddd(V(d), V(d), ptr[rip + iota_]);
      return true;
    }
    case Opcode::Select: {
      if (uidx_fold(v)) return lower_uniform_index_fold(v);  // a range-checked relative read (uniform_indexed.cpp)
      if (mask_only_cmp(in.args[0])) {  // its compare left only the mask (k1 / vector 0)
        if (select_mask_of_ != in.args[0])
          throw CompileError("x64 jit: internal: the mask of %" + std::to_string(in.args[0]) + " was lost");
        if (inverted_mask_cmp(in.args[0])) {  // vector 0 is the complement: the false operand where it is set
          int a = use(in.args[1]);
          if (count_only_const(in.args[2])) {
            int d = def(v);
            vblendvps(V(d), V(a), const_operand(in.args[2]), V(0));
          } else {
            int b = use(in.args[2]);
            int d = def(v);
            vblendvps(V(d), V(a), V(b), V(0));
          }
          return true;
        }
        int a = use(in.args[1]), b = use(in.args[2]);
        int d = def(v);
        select_bits(d, -1, a, b, in.args[0]);
        return true;
      }
      int c = use(in.args[0]), a = use(in.args[1]), b = use(in.args[2]);
      int d = def(v);
      select_bits(d, c, a, b, in.args[0]);
      return true;
    }
    case Opcode::FNeg: case Opcode::FAbs: {
      if (in.type != ir::Type::F32 && in.type != ir::Type::F16) return false;
      if (in.op == Opcode::FNeg)
        if (const ValueId u = fneg_fma_of(v); u != kNoValue) {  // the next op, an ffma, as one vfmsub
          fma_negated_ = true;
          const bool done = lower_float(u);
          fma_negated_ = false;
          if (!done) throw CompileError("x64 jit: internal: an ffma fused with its fneg was not lowered");
          fma_skip_[u] = 1;
          return true;
        }
      uint32_t sign = in.type == ir::Type::F32 ? 0x80000000u : 0x8000u;
      int a = use(in.args[0]);
      int d = def(v);
      if (in.op == Opcode::FNeg) {
        if (z_) vpxord(V(d), V(a), ptr_b[rip + const32_[sign]]);
        else vpxor(V(d), V(a), const_vec(sign));
      } else {
        uint32_t keep = uint32_t(type_mask(in.type)) & ~sign;
        if (z_) vpandd(V(d), V(a), ptr_b[rip + const32_[keep]]);
        else vpand(V(d), V(a), const_vec(keep));
      }
      return true;
    }
    default:
      return false;
  }
}

// A 32-bit bitcast (i32 <-> f32) whose operand dies here and is in a
// register takes that register over: no copy. The operand is either of
// this segment (its last use; if it escapes it is already in its slot) or
// read from its slot (a load's result), and nothing later in the segment
// reads it. Not in strip loops (their registers are pinned homes and
// invariants) nor in trial emissions.
bool Emitter::bitcast_in_place(ValueId v) {
  const Inst& in = f_.insts[v];
  if (in.args.size() != 1 || wide(v) || use_log_) return false;
  const ValueId a = in.args[0];
  if (a >= f_.insts.size() || wide(a)) return false;
  const int32_t seg = plan_.segment_of[v];
  if (seg < 0 || (in.block < plan_.strip_loop_of.size() && plan_.strip_loop_of[in.block] >= 0)) return false;
  const int r = vals_[a].reg;
  if (r < 0 && ((plan_.segment_of[a] != seg && plan_.escapes[a]) || (prefilled_[a] && vals_[a].in_frame))) {
    // In its slot only (a load's result, not read yet in this segment, or
    // a uniform the prologue filled, emit_const_slots): loaded straight
    // into the bitcast's register, unless read again later.
    const auto& ops = plan_.segments[size_t(seg)].ops;
    for (size_t i = size_t(plan_.position[v]) + 1; i < ops.size(); ++i)
      for (ValueId x : f_.insts[ops[i]].args)
        if (x == a) return false;
    vload(def(v), strip_ref(a));
    return true;
  }
  if (r < 0 || regs_[r].pinned || regs_[r].v != a) return false;
  if (plan_.segment_of[a] == seg) {
    if (plan_.last_use[a] != plan_.position[v] || (plan_.escapes[a] && !vals_[a].in_frame)) return false;
  } else {
    // Defined elsewhere (a load's result): read from its slot, which stays
    // valid. Only when nothing later in this segment reads it again.
    if (!vals_[a].in_frame) return false;
    const auto& ops = plan_.segments[size_t(seg)].ops;
    for (size_t i = size_t(plan_.position[v]) + 1; i < ops.size(); ++i)
      for (ValueId x : f_.insts[ops[i]].args)
        if (x == a) return false;
  }
  vals_[a].reg = -1;
  regs_[r].v = v;
  regs_[r].stamp = ++clock_;
  regs_[r].locked = true;
  locked_mask_ |= 1u << r;
  vals_[v].reg = int8_t(r);
  vals_[v].in_frame = false;
  return true;
}

bool Emitter::lower_int(ValueId v) {
  const Inst& in = f_.insts[v];
  ir::Type t = in.type;
  unsigned w = bit_width(t);
  auto arg = [&](int i) { return use(in.args[size_t(i)]); };
  switch (in.op) {
    case Opcode::IAdd: case Opcode::ISub: case Opcode::IMul: {
      if (in.op != Opcode::IMul) {  // a constant operand from the pool (count_only_const)
        const int ci = count_only_const(in.args[1]) ? 1 : in.op == Opcode::IAdd && count_only_const(in.args[0]) ? 0 : -1;
        if (ci >= 0) {
          int a = arg(1 - ci), d = def(v);
          if (in.op == Opcode::IAdd) vpaddd(V(d), V(a), const_operand(in.args[size_t(ci)]));
          else vpsubd(V(d), V(a), const_operand(in.args[size_t(ci)]));
          mask_to_width(d, t);
          return true;
        }
      }
      if (in.op != Opcode::IMul) {  // AVX2: an operand only in its slot as the memory operand (slot_operand)
        const int mi = slot_operand(v, in.op == Opcode::IAdd);
        if (mi >= 0) {
          int a = arg(1 - mi), d = def(v);
          if (in.op == Opcode::IAdd) vpaddd(V(d), V(a), strip_mem(in.args[size_t(mi)]));
          else vpsubd(V(d), V(a), strip_mem(in.args[size_t(mi)]));
          mask_to_width(d, t);
          return true;
        }
      }
      int a = arg(0), b = arg(1), d = def(v);
      if (in.op == Opcode::IAdd) vpaddd(V(d), V(a), V(b));
      else if (in.op == Opcode::ISub) vpsubd(V(d), V(a), V(b));
      else vpmulld(V(d), V(a), V(b));
      mask_to_width(d, t);
      return true;
    }
    case Opcode::IAddC: {
      int a = arg(0), b = arg(1), c = arg(2), d = def(v);
      vpaddd(V(d), V(a), V(b));
      vpaddd(V(d), V(d), V(c));
      mask_to_width(d, t);
      return true;
    }
    case Opcode::IMad: {
      int a = arg(0), b = arg(1), c = arg(2), d = def(v);
      vpmulld(V(d), V(a), V(b));
      vpaddd(V(d), V(d), V(c));
      mask_to_width(d, t);
      return true;
    }
    case Opcode::INeg: {
      int a = arg(0), d = def(v);
      vxor(0, 0, 0);
      vpsubd(V(d), V(0), V(a));
      mask_to_width(d, t);
      return true;
    }
    case Opcode::IAbs: {
      int a = arg(0), d = def(v);
      sext_to32(0, a, t);
      vpabsd(V(d), V(0));
      mask_to_width(d, t);
      return true;
    }
    case Opcode::And: case Opcode::Or: case Opcode::Xor: {
      if (in.op == Opcode::And && !z_ && kand_pair(v)) {  // AVX2: both compares' all-ones lanes (kand_pair)
        int a = arg(0), b = arg(1), d = def(v);
        vand(d, a, b);
        bool_from_cmp_avx2(d, false);
        return true;
      }
      if (in.op == Opcode::And && kand_pair(v)) {  // AVX-512: both compares' masks in k5..k7 (kand_pair)
        const int ka = kmask_find(in.args[0]), kb = kmask_find(in.args[1]);
        if (ka < 0 || kb < 0) throw CompileError("x64 jit: internal: an i1 and's compare masks are not in k5..k7");
        const int k = kmask_take(v);
        kandw(Opmask(k), Opmask(ka), Opmask(kb));
        bool_from_k(def(v), k);
        return true;
      }
      if (const int ci = count_only_const(in.args[1]) ? 1 : count_only_const(in.args[0]) ? 0 : -1; ci >= 0) {
        int a = arg(1 - ci), d = def(v);
        const Address m = const_operand(in.args[size_t(ci)]);
        if (z_) {
          if (in.op == Opcode::And) vpandd(V(d), V(a), m);
          else if (in.op == Opcode::Or) vpord(V(d), V(a), m);
          else vpxord(V(d), V(a), m);
        } else {
          if (in.op == Opcode::And) vpand(V(d), V(a), m);
          else if (in.op == Opcode::Or) vpor(V(d), V(a), m);
          else vpxor(V(d), V(a), m);
        }
        return true;
      }
      if (const int mi = slot_operand(v, true); mi >= 0) {  // AVX2: an operand only in its slot (slot_operand)
        int a = arg(1 - mi), d = def(v);
        const Address m = strip_mem(in.args[size_t(mi)]);
        if (in.op == Opcode::And) vpand(V(d), V(a), m);
        else if (in.op == Opcode::Or) vpor(V(d), V(a), m);
        else vpxor(V(d), V(a), m);
        return true;
      }
      int a = arg(0), b = arg(1), d = def(v);
      if (in.op == Opcode::And) vand(d, a, b);
      else if (in.op == Opcode::Or) vor(d, a, b);
      else vxor(d, a, b);
      return true;
    }
    case Opcode::Not: {
      int a = arg(0), d = def(v);
      uint32_t m = uint32_t(type_mask(t));
      if (z_) vpxord(V(d), V(a), ptr_b[rip + const32_[m]]);
      else vpxor(V(d), V(a), const_vec(m));
      return true;
    }
    case Opcode::Shl: case Opcode::LShr: case Opcode::AShr: {
      if (const Inst& ci = f_.insts[in.args[1]]; ci.op == Opcode::Const) {
        // A constant count: one shift by an immediate (the count is not read
        // from a register; count_only_const lets its const skip the broadcast).
        uint64_t k = ci.imm & type_mask(ci.type);
        if (ShiftMode(in.attr) == ShiftMode::Mask) k &= w - 1;
        int a = arg(0), src = a;
        if (in.op == Opcode::AShr && bit_width(t) < 32) {  // (a 32-bit operand shifts as it is)
          sext_to32(0, a, t);
          src = 0;
        }
        int d = def(v);
        if (in.op == Opcode::Shl && k >= 32) vxor(d, d, d);
        else if (in.op == Opcode::LShr && k >= 32) vxor(d, d, d);
        else if (in.op == Opcode::Shl) vpslld(V(d), V(src), uint8_t(k));
        else if (in.op == Opcode::LShr) vpsrld(V(d), V(src), uint8_t(k));
        else vpsrad(V(d), V(src), uint8_t(std::min<uint64_t>(k, 31)));  // >= 32: the sign fill
        mask_to_width(d, t);
        return true;
      }
      int a = arg(0), c = arg(1), d = def(v);
      int cnt = c, src = a;
      if (ShiftMode(in.attr) == ShiftMode::Mask) {
        if (z_) vpandd(V(1), V(c), ptr_b[rip + const32_[w - 1]]);
        else vpand(V(1), V(c), const_vec(w - 1));
        cnt = 1;
      }
      if (in.op == Opcode::AShr && bit_width(t) < 32) {
        sext_to32(0, a, t);
        src = 0;
      }
      if (in.op == Opcode::Shl) vpsllvd(V(d), V(src), V(cnt));
      else if (in.op == Opcode::LShr) vpsrlvd(V(d), V(src), V(cnt));
      else vpsravd(V(d), V(src), V(cnt));
      mask_to_width(d, t);
      return true;
    }
    case Opcode::ICmp: {
      ir::Type at = f_.insts[in.args[0]].type;
      IntPred p = IntPred(in.attr);
      bool is_signed = p == IntPred::Slt || p == IntPred::Sle || p == IntPred::Sgt || p == IntPred::Sge;
      if (z_ && count_only_const(in.args[1])) {  // the constant from the pool (const_operand_position)
        static const uint8_t kImm[] = {0, 4, 1, 2, 6, 5, 1, 2, 6, 5};
        int a = arg(0);
        const bool mask_only = mask_only_cmp(v);
        const int k = mask_only ? 1 : kmask_take(v);  // k1 for its selects, else kept in k5..k7 (select_bits)
        if (p >= IntPred::Ult) vpcmpud(Opmask(k), V(a), const_operand(in.args[1]), kImm[size_t(p)]);
        else vpcmpd(Opmask(k), V(a), const_operand(in.args[1]), kImm[size_t(p)]);
        if (mask_only) select_mask_of_ = v;
        else if (!kand_pair(v)) bool_from_k(def(v), k);  // (an `and`'s operand: the mask only)
        return true;
      }
      if (inverted_mask_cmp(v)) {  // vector 0 = !(x < C) = x > C - 1 (signed; unsigned: both below 2^31)
        const ValueId cv = in.args[1];
        int a = arg(0);
        if (!count_only_const(cv)) use(cv);  // (materialized for another reader: read as usual, then unused here)
        vpcmpgtd(V(0), V(a), const_vec(uint32_t(f_.insts[cv].imm) - 1u));
        select_mask_of_ = v;
        return true;
      }
      const bool mask_only = mask_only_cmp(v);  // no 0/1 lanes: the mask only (k1 / vector 0)
      if (pool_const_cmp(v)) {  // AVX2: vpcmpgtd with the pool's C
        const ValueId cv = in.args[1];
        const uint32_t k = uint32_t(f_.insts[cv].imm);
        int a = arg(0);
        if (!count_only_const(cv)) use(cv);  // (materialized for another reader: read as usual, then unused here)
        const int d = mask_only ? 0 : def(v);
        vpcmpgtd(V(d), V(a), const_vec(k));
        if (mask_only) select_mask_of_ = v;
        else if (!kand_pair(v)) bool_from_cmp_avx2(d, false);  // (an `and`'s operand: all-ones lanes)
        return true;
      }
      int a = arg(0), b = arg(1), d = mask_only || kand_pair(v) ? 0 : def(v);
      if (is_signed && bit_width(at) < 32) {
        sext_to32(0, a, at);
        sext_to32(1, b, at);
        a = 0;
        b = 1;
      }
      if (z_) {
        static const uint8_t kImm[] = {0, 4, 1, 2, 6, 5, 1, 2, 6, 5};
        uint8_t imm = kImm[size_t(p)];
        const int k = mask_only ? 1 : kmask_take(v);  // k1 for its selects, else kept in k5..k7 (select_bits)
        if (p >= IntPred::Ult) vpcmpud(Opmask(k), V(a), V(b), imm);
        else vpcmpd(Opmask(k), V(a), V(b), imm);
        if (mask_only) select_mask_of_ = v;  // k1 is the mask a select of v tests for (select_bits)
        else if (!kand_pair(v)) bool_from_k(d, k);  // (an `and`'s operand: the mask only)
        return true;
      }
      // Unsigned 0/1 lanes through the unsigned maximum: a < b is max(a, b)
      // != a, a > b is max != b, a <= b is max == b, a >= b is max == a. The
      // equality's all-ones lanes become 0/1 with one op (+1 for the
      // inequalities, >> 31 for the others): three ops where the sign flips
      // took four (< and >) or five (<= and >=), the same depth from a
      // (Tesla's bound test i < n, once per strip). Mask-only compares keep
      // the flips (their selects want the true mask).
      if (p >= IntPred::Ult && !mask_only && !(below_2_31(in.args[0]) && below_2_31(in.args[1]))) {
        vpmaxud(V(0), V(a), V(b));
        const bool max_is_a = p == IntPred::Ult || p == IntPred::Uge;
        vpcmpeqd(V(d), V(0), V(max_is_a ? a : b));
        if (p == IntPred::Ult || p == IntPred::Ugt) vpaddd(V(d), V(d), const_vec(1));
        else vpsrld(V(d), V(d), 31);
        return true;
      }
      // Unsigned via a signed compare of sign-flipped values, unless both
      // operands are known below 2^31, where the two orders agree (PICA200's
      // range check of a masked index against a constant).
      if (p >= IntPred::Ult && !(below_2_31(in.args[0]) && below_2_31(in.args[1]))) {
        vpxor(V(0), V(a), const_vec(0x80000000u));
        vpxor(V(1), V(b), const_vec(0x80000000u));
        a = 0;
        b = 1;
      }
      if (mask_only) {  // all-ones lanes in vector 0, which the selects blend with
        switch (p) {
          case IntPred::Eq: vpcmpeqd(V(0), V(a), V(b)); break;
          case IntPred::Sgt: case IntPred::Ugt: vpcmpgtd(V(0), V(a), V(b)); break;
          case IntPred::Slt: case IntPred::Ult: vpcmpgtd(V(0), V(b), V(a)); break;
          default: throw CompileError("x64 jit: internal: mask-only compare of an inverted predicate");
        }
        select_mask_of_ = v;
        return true;
      }
      switch (p) {
        case IntPred::Eq: vpcmpeqd(V(d), V(a), V(b)); bool_from_cmp_avx2(d, false); break;
        case IntPred::Ne: vpcmpeqd(V(d), V(a), V(b)); bool_from_cmp_avx2(d, true); break;
        case IntPred::Sgt: case IntPred::Ugt: vpcmpgtd(V(d), V(a), V(b)); bool_from_cmp_avx2(d, false); break;
        case IntPred::Slt: case IntPred::Ult: vpcmpgtd(V(d), V(b), V(a)); bool_from_cmp_avx2(d, false); break;
        case IntPred::Sle: case IntPred::Ule: vpcmpgtd(V(d), V(a), V(b)); bool_from_cmp_avx2(d, true); break;
        case IntPred::Sge: case IntPred::Uge: vpcmpgtd(V(d), V(b), V(a)); bool_from_cmp_avx2(d, true); break;
      }
      return true;
    }
    case Opcode::IMin: case Opcode::IMax: {
      bool is_signed = Sign(in.attr) == Sign::Signed;
      int a = arg(0), b = arg(1), d = def(v);
      if (is_signed && w < 32) {
        sext_to32(0, a, t);
        sext_to32(1, b, t);
        a = 0;
        b = 1;
      }
      bool is_min = in.op == Opcode::IMin;
      if (is_signed) is_min ? vpminsd(V(d), V(a), V(b)) : vpmaxsd(V(d), V(a), V(b));
      else is_min ? vpminud(V(d), V(a), V(b)) : vpmaxud(V(d), V(a), V(b));
      mask_to_width(d, t);
      return true;
    }
    case Opcode::Zext: case Opcode::Trunc: case Opcode::Bitcast: {
      // A zext to 32 bits copies bits the operand's lanes already hold
      // zero-extended (as the vmov below does): in place like a bitcast.
      if ((in.op == Opcode::Bitcast || (in.op == Opcode::Zext && t == ir::Type::I32)) && bitcast_in_place(v))
        return true;
      int a = arg(0), d = def(v);
      vmov(d, a);
      mask_to_width(d, t);
      return true;
    }
    case Opcode::Sext: {
      int a = arg(0), d = def(v);
      sext_to32(d, a, f_.insts[in.args[0]].type);
      mask_to_width(d, t);
      return true;
    }
    case Opcode::Extract16: {
      int a = arg(0), d = def(v);
      if (in.imm & 1) {
        vpsrld(V(d), V(a), 16);
      } else {
        vmov(d, a);
        mask_to_width(d, ir::Type::I16);
      }
      return true;
    }
    case Opcode::Insert16: {
      int a = arg(0), b = arg(1), d = def(v);
      bool high = in.imm & 1;
      uint32_t keep = high ? 0x0000ffffu : 0xffff0000u;
      if (z_) vpandd(V(0), V(a), ptr_b[rip + const32_[keep]]);
      else vpand(V(0), V(a), const_vec(keep));
      if (high) {
        vpslld(V(1), V(b), 16);
      } else {
        vmov(1, b);
        mask_to_width(1, ir::Type::I16);
      }
      vor(d, 0, 1);
      return true;
    }
    case Opcode::BfExtract: {
      // i32 only: offset and count (& 0xff) as per-lane shift counts; x86
      // variable shifts give 0 (logical) or the sign fill (arithmetic) for
      // counts >= 32, which is what bits past the top read as.
      if (t != ir::Type::I32 || f_.insts[in.args[1]].type != ir::Type::I32 || f_.insts[in.args[2]].type != ir::Type::I32)
        return false;
      const Inst& oi = f_.insts[in.args[1]];
      const Inst& ci = f_.insts[in.args[2]];
      if (Sign(in.attr) == Sign::Unsigned && oi.op == Opcode::Const && ci.op == Opcode::Const) {
        // Constant field: one shift by an immediate and one mask.
        uint32_t off = uint32_t(oi.imm) & 0xff, cnt = uint32_t(ci.imm) & 0xff;
        int a = arg(0), d = def(v);
        if (off >= 32 || cnt == 0) {
          vxor(d, d, d);
          return true;
        }
        if (off) vpsrld(V(d), V(a), uint8_t(off));
        else vmov(d, a);
        if (cnt < 32 - off) {  // bits above the field; a wider field ends at bit 31 anyway
          uint32_t mask = (1u << cnt) - 1;
          if (z_) vpandd(V(d), V(d), ptr_b[rip + const32_[mask]]);
          else vpand(V(d), V(d), const_vec(mask));
        }
        return true;
      }
      int a = arg(0), o = arg(1), c = arg(2), d = def(v);
      if (z_) {
        vpandd(V(1), V(o), ptr_b[rip + const32_[0xff]]);
        vpandd(V(2), V(c), ptr_b[rip + const32_[0xff]]);
      } else {
        vpand(V(1), V(o), const_vec(0xff));
        vpand(V(2), V(c), const_vec(0xff));
      }
      if (Sign(in.attr) == Sign::Unsigned) {
        vpsrlvd(V(d), V(a), V(1));
        bcast_const(3, 0xffffffffu);
        vpsllvd(V(3), V(3), V(2));  // ones above the field (none when count >= 32)
        vandn(d, 3, d);
      } else {
        vpsravd(V(d), V(a), V(1));
        vpminud(V(2), V(2), z_ ? ptr_b[rip + const32_[32]] : const_vec(32));
        bcast_const(3, 32);
        vpsubd(V(3), V(3), V(2));  // 32 - min(count, 32): count 0 shifts everything out
        vpsllvd(V(d), V(d), V(3));
        vpsravd(V(d), V(d), V(3));
      }
      return true;
    }
    case Opcode::Lut3: {
      if (!z_) return false;
      int a = arg(0), b = arg(1), c = arg(2), d = def(v);
      vmov(d, a);
      vpternlogd(V(d), V(b), V(c), uint8_t(in.imm & 0xff));
      mask_to_width(d, t);
      return true;
    }
    case Opcode::FindMsb: case Opcode::FindLsb: {
      if (!z_) return false;  // vplzcntd is AVX-512 CD
      ir::Type at = f_.insts[in.args[0]].type;
      int a = arg(0), d = def(v);
      if (in.op == Opcode::FindLsb) {
        vpxord(V(0), V(0), V(0));
        vpsubd(V(0), V(0), V(a));
        vpandd(V(0), V(0), V(a));  // lowest set bit alone
      } else if (Sign(in.attr) == Sign::Signed) {
        sext_to32(0, a, at);
        vpsrad(V(1), V(0), 31);
        vpxord(V(0), V(0), V(1));  // negative: ~v (zero above the width)
      } else {
        vmov(0, a);
      }
      vplzcntd(V(0), V(0));
      vpbroadcastd(V(d), const_mem(31));
      vpsubd(V(d), V(d), V(0));  // 31 - lzcnt; -1 when zero
      return true;
    }
    default:
      return false;
  }
}

// 64-bit lanes. A strip's lanes of a 64-bit value are two "halves" of
// lanes_/2 qwords (one vector each), read from and written to the value's
// frame slot; 32-bit operands are widened from their register per half.

void Emitter::widen_half(int d, int r, int h, bool sign) {
  if (z_) {
    Ymm src = Ymm(r);
    if (h) {
      vextracti32x8(Ymm(d), Zmm(r), 1);
      src = Ymm(d);
    }
    if (sign) vpmovsxdq(Zmm(d), src);
    else vpmovzxdq(Zmm(d), src);
  } else {
    Xmm src = Xmm(r);
    if (h) {
      vextracti128(Xmm(d), Ymm(r), 1);
      src = Xmm(d);
    }
    if (sign) vpmovsxdq(Ymm(d), src);
    else vpmovzxdq(Ymm(d), src);
  }
}

void Emitter::narrow_halves(int d, int lo, int hi) {
  if (z_) {
    vpmovqd(Ymm(d), Zmm(lo));
    vpmovqd(Ymm(hi), Zmm(hi));
    vinserti32x8(Zmm(d), Zmm(d), Ymm(hi), 1);
  } else {
    vshufps(Ymm(d), Ymm(lo), Ymm(hi), 0x88);  // per 128-bit lane: lo.q0 lo.q1 hi.q0 hi.q1 (low dwords)
    vpermq(Ymm(d), Ymm(d), 0xD8);
  }
}

// d = all-ones qwords shifted left by `shift` (e.g. 63: the sign bit of each qword).
void Emitter::qword_ones(int d, int shift) {
  if (z_) vpternlogq(V(d), V(d), V(d), 0xFF);
  else vpcmpeqq(V(d), V(d), V(d));
  if (shift) vpsllq(V(d), V(d), uint8_t(shift));
}

// AVX2 (no vpmullq): d = a * b modulo 2^64 per qword; uses scratch 2, 3 (a, b kept).
void Emitter::mul64_avx2(int d, int a, int b) {
  vpsrlq(V(2), V(a), 32);
  vpmuludq(V(2), V(2), V(b));   // hi(a) * lo(b)
  vpsrlq(V(3), V(b), 32);
  vpmuludq(V(3), V(3), V(a));   // hi(b) * lo(a)
  vpaddq(V(2), V(2), V(3));
  vpsllq(V(2), V(2), 32);
  vpmuludq(V(d), V(a), V(b));   // lo(a) * lo(b)
  vpaddq(V(d), V(d), V(2));
}

bool Emitter::lower_wide(ValueId v) {
  const Inst& in = f_.insts[v];
  auto store_halves = [&](int r0, int r1) {
    vstore(strip_ref(v, 0), r0);
    vstore(strip_ref(v, 1), r1);
    vals_[v].in_frame = true;
  };
  switch (in.op) {
    case Opcode::LoadVar:
      if (in.imm >= f_.vars.size()) throw CompileError("x64 jit: load_var of unknown var " + std::to_string(in.imm));
      vload(0, var_ref(uint32_t(in.imm), 0));
      vload(1, var_ref(uint32_t(in.imm), 1));
      store_halves(0, 1);
      return true;
    case Opcode::StoreVar: {
      if (in.imm >= f_.vars.size()) throw CompileError("x64 jit: store_var of unknown var " + std::to_string(in.imm));
      ValueId a = in.args[0];
      for (int h = 0; h < 2; ++h) {
        vload(0, strip_ref(a, h));
        vstore(var_ref(uint32_t(in.imm), h), 0);
      }
      return true;
    }
    case Opcode::Const: case Opcode::Undef:
      mov(rax, in.op == Opcode::Const ? in.imm : 0);
      vmovq(Xmm(0), rax);
      vpbroadcastq(V(0), Xmm(0));
      store_halves(0, 0);
      return true;
    case Opcode::LoadUniform: {
      Label ok;
      if (in.imm <= f_.uniform_bytes && f_.uniform_bytes - in.imm >= 8) {
        test(r15, r15);
        jnz(ok, T_NEAR);
      }
      emit_fault_return(FaultKind::OutOfBounds, v, in.imm, uint32_t(Space::Const));
      L(ok);
      vpbroadcastq(V(0), qword[r15 + int(in.imm)]);
      store_halves(0, 0);
      return true;
    }
    case Opcode::Bitcast:
      if (!wide(in.args[0])) return false;
      vload(0, strip_ref(in.args[0], 0));
      vload(1, strip_ref(in.args[0], 1));
      store_halves(0, 1);
      return true;
    default:
      return false;
  }
}

// Integer ops with a 64-bit result or operand (i64 only; f64 arithmetic stays
// with the helper). Returns false for anything else.
bool Emitter::lower_wide_int(ValueId v) {
  const Inst& in = f_.insts[v];
  ir::Type t = in.type;
  auto is64 = [&](ValueId a) { return f_.insts[a].type == ir::Type::I64; };
  bool res_wide = lane_bytes(t) == 8;
  switch (in.op) {
    case Opcode::IAdd: case Opcode::ISub: case Opcode::IMul: case Opcode::And: case Opcode::Or: case Opcode::Xor:
    case Opcode::IMin: case Opcode::IMax: case Opcode::IMad: case Opcode::IAddC: case Opcode::INeg:
    case Opcode::Not: case Opcode::IAbs:
      if (t != ir::Type::I64) return false;
      break;
    case Opcode::Shl: case Opcode::LShr: case Opcode::AShr:
      if (t != ir::Type::I64 || wide(in.args[1])) return false;
      break;
    case Opcode::Select:
      if (!res_wide || wide(in.args[0])) return false;  // any 64-bit type: bits are moved
      break;
    case Opcode::ICmp:
      if (!is64(in.args[0])) return false;
      break;
    case Opcode::Zext: case Opcode::Sext:
      if (t != ir::Type::I64) return false;
      break;
    case Opcode::Trunc:
      if (!is64(in.args[0])) return false;
      break;
    case Opcode::IMulWide:
      if (t != ir::Type::I64) return false;  // i32 x i32 -> i64
      break;
    default:
      return false;
  }
  // 32-bit operands: their registers (kept locked until end_op).
  int nreg[rt::kMaxArgs] = {-1, -1, -1, -1};
  for (size_t i = 0; i < in.args.size() && i < size_t(rt::kMaxArgs); ++i)
    if (!wide(in.args[i])) nreg[i] = use(in.args[i]);
  int d = res_wide ? -1 : def(v);
  ir::Type at = f_.insts[in.args[0]].type;
  // Per-op preparation on 32-bit operands (scratch 3 is free until the halves loop).
  int count = -1;
  if (in.op == Opcode::Shl || in.op == Opcode::LShr || in.op == Opcode::AShr) {
    count = 5;  // scratch 5: the count as 32-bit lanes (vector 5 is not a lane mask outside float ops)
    if (ShiftMode(in.attr) == ShiftMode::Mask) {
      if (z_) vpandd(V(count), V(nreg[1]), ptr_b[rip + const32_[63]]);
      else vpand(V(count), V(nreg[1]), const_vec(63));
    } else if (in.op == Opcode::AShr) {
      vpminud(V(count), V(nreg[1]), z_ ? ptr_b[rip + const32_[63]] : const_vec(63));  // >= 64 fills with the sign like 63
    } else {
      vmov(count, nreg[1]);  // >= 64 gives 0 with vpsllvq / vpsrlvq
    }
  }
  int sext_src = -1;
  if (in.op == Opcode::Sext && !wide(in.args[0])) {
    sext_to32(5, nreg[0], at);
    sext_src = 5;
  }
  // Wide-result ops write each half to the frame; i32/i1 results collect the
  // halves in vectors 4 (half 0) and 1 (half 1), or k2/k3 for Avx512 compares.
  for (int h = 0; h < 2; ++h) {
    auto arg = [&](int i, int r) -> int {  // operand i's half h in vector r
      ValueId a = in.args[size_t(i)];
      if (wide(a)) vload(r, strip_ref(a, h));
      else widen_half(r, nreg[i], h, false);
      return r;
    };
    int out = 0;  // the half's result vector (wide results)
    switch (in.op) {
      case Opcode::IAdd: case Opcode::ISub: case Opcode::And: case Opcode::Or: case Opcode::Xor: {
        int a = arg(0, 0), b = arg(1, 1);
        if (in.op == Opcode::IAdd) vpaddq(V(0), V(a), V(b));
        else if (in.op == Opcode::ISub) vpsubq(V(0), V(a), V(b));
        else if (in.op == Opcode::And) z_ ? vpandq(V(0), V(a), V(b)) : vpand(V(0), V(a), V(b));
        else if (in.op == Opcode::Or) z_ ? vporq(V(0), V(a), V(b)) : vpor(V(0), V(a), V(b));
        else z_ ? vpxorq(V(0), V(a), V(b)) : vpxor(V(0), V(a), V(b));
        break;
      }
      case Opcode::IAddC: {
        arg(0, 0), arg(1, 1), arg(2, 2);  // the carry is a canonical i1 (0 or 1)
        vpaddq(V(0), V(0), V(1));
        vpaddq(V(0), V(0), V(2));
        break;
      }
      case Opcode::IMul: case Opcode::IMad: {
        arg(0, 0), arg(1, 1);
        if (z_) vpmullq(V(0), V(0), V(1));
        else mul64_avx2(4, 0, 1), vmov(0, 4);
        if (in.op == Opcode::IMad) {
          arg(2, 1);
          vpaddq(V(0), V(0), V(1));
        }
        break;
      }
      case Opcode::IMulWide: {
        arg(0, 0), arg(1, 1);
        if (Sign(in.attr) == Sign::Signed) vpmuldq(V(0), V(0), V(1));  // reads the low dwords signed
        else vpmuludq(V(0), V(0), V(1));
        break;
      }
      case Opcode::INeg: case Opcode::Not: {
        arg(0, 1);
        if (in.op == Opcode::INeg) {
          vxor(0, 0, 0);
          vpsubq(V(0), V(0), V(1));
        } else {
          qword_ones(0, 0);
          vxor(0, 0, 1);
        }
        break;
      }
      case Opcode::IAbs: {
        arg(0, 1);
        if (z_) {
          vpabsq(V(0), V(1));
        } else {
          vxor(2, 2, 2);
          vpcmpgtq(V(2), V(2), V(1));  // all ones where negative
          vxor(0, 1, 2);
          vpsubq(V(0), V(0), V(2));
        }
        break;
      }
      case Opcode::IMin: case Opcode::IMax: {
        arg(0, 0), arg(1, 1);
        bool is_signed = Sign(in.attr) == Sign::Signed, is_min = in.op == Opcode::IMin;
        if (z_) {
          if (is_signed) is_min ? vpminsq(V(0), V(0), V(1)) : vpmaxsq(V(0), V(0), V(1));
          else is_min ? vpminuq(V(0), V(0), V(1)) : vpmaxuq(V(0), V(0), V(1));
        } else {
          int a = 0, b = 1;
          if (!is_signed) {  // unsigned order = signed order of sign-flipped values
            qword_ones(3, 63);
            vpxor(V(2), V(0), V(3));
            vpxor(V(3), V(1), V(3));
            a = 2, b = 3;
          }
          vpcmpgtq(V(4), V(a), V(b));  // a > b
          if (is_min) vblendvpd(Ymm(0), Ymm(0), Ymm(1), Ymm(4));
          else vblendvpd(Ymm(0), Ymm(1), Ymm(0), Ymm(4));
        }
        break;
      }
      case Opcode::Shl: case Opcode::LShr: case Opcode::AShr: {
        arg(0, 0);
        widen_half(1, count, h, false);
        if (in.op == Opcode::Shl) vpsllvq(V(0), V(0), V(1));
        else if (in.op == Opcode::LShr) vpsrlvq(V(0), V(0), V(1));
        else if (z_) vpsravq(V(0), V(0), V(1));
        else {  // (x >>u c) | (sign << (64 - c)), c in [0, 63]; a shift by 64 gives 0
          vxor(2, 2, 2);
          vpcmpgtq(V(2), V(2), V(0));
          vpsrlvq(V(0), V(0), V(1));
          mov(eax, 64);
          vmovq(Xmm(3), rax);
          vpbroadcastq(V(3), Xmm(3));
          vpsubq(V(1), V(3), V(1));
          vpsllvq(V(2), V(2), V(1));
          vpor(V(0), V(0), V(2));
        }
        break;
      }
      case Opcode::Select: {
        arg(1, 1), arg(2, 2);
        if (z_) {
          vptestmd(k1, V(nreg[0]), V(nreg[0]));
          if (h) kshiftrw(k1, k1, 8);
          vpblendmq(V(0) | k1, V(2), V(1));
        } else {
          widen_half(0, nreg[0], h, false);
          vpsllq(V(0), V(0), 63);
          vblendvpd(Ymm(0), Ymm(2), Ymm(1), Ymm(0));
        }
        break;
      }
      case Opcode::Zext: case Opcode::Sext:
        if (wide(in.args[0])) arg(0, 0);
        else if (in.op == Opcode::Sext) widen_half(0, sext_src, h, true);
        else widen_half(0, nreg[0], h, false);  // narrow lanes are already zero-extended
        break;
      case Opcode::Trunc:
        out = arg(0, res_wide ? 0 : h ? 1 : 4);
        break;
      case Opcode::ICmp: {
        IntPred p = IntPred(in.attr);
        int a = arg(0, 0), b = arg(1, 1);
        if (z_) {
          static const uint8_t kImm[] = {0, 4, 1, 2, 6, 5, 1, 2, 6, 5};
          Opmask k(h ? 3 : 2);
          if (p >= IntPred::Ult) vpcmpuq(k, V(a), V(b), kImm[size_t(p)]);
          else vpcmpq(k, V(a), V(b), kImm[size_t(p)]);
          break;
        }
        if (p >= IntPred::Ult) {
          qword_ones(3, 63);
          vpxor(V(0), V(0), V(3));
          vpxor(V(1), V(1), V(3));
        }
        int r = h ? 1 : 4;
        bool invert = false;
        switch (p) {
          case IntPred::Eq: vpcmpeqq(V(r), V(a), V(b)); break;
          case IntPred::Ne: vpcmpeqq(V(r), V(a), V(b)); invert = true; break;
          case IntPred::Sgt: case IntPred::Ugt: vpcmpgtq(V(r), V(a), V(b)); break;
          case IntPred::Slt: case IntPred::Ult: vpcmpgtq(V(r), V(b), V(a)); break;
          case IntPred::Sle: case IntPred::Ule: vpcmpgtq(V(r), V(a), V(b)); invert = true; break;
          case IntPred::Sge: case IntPred::Uge: vpcmpgtq(V(r), V(b), V(a)); invert = true; break;
        }
        if (invert) {
          qword_ones(2, 0);
          vpxor(V(r), V(r), V(2));
        }
        break;
      }
      default:
        throw CompileError("x64 jit: internal: lower_wide_int");
    }
    if (res_wide) vstore(strip_ref(v, h), out);
  }
  if (res_wide) {
    vals_[v].in_frame = true;
    return true;
  }
  if (in.op == Opcode::ICmp) {
    if (z_) {
      kunpckbw(k1, k3, k2);
      bool_from_k(d, 1);
    } else {
      narrow_halves(d, 4, 1);
      bool_from_cmp_avx2(d, false);
    }
    return true;
  }
  narrow_halves(d, 4, 1);  // trunc
  mask_to_width(d, t);
  return true;
}

// Whether every lane of v (an integer of at most 32 bits) is below 2^31
// as an unsigned 32-bit lane: a narrow type (zero-extended in its lane), a
// constant, or an AND or a zext with such an operand. A few levels only.
bool Emitter::below_2_31(ValueId v, int depth) const {
  const Inst& in = f_.insts[v];
  if (in.type != ir::Type::I32) return in.type == ir::Type::I1 || in.type == ir::Type::I8 || in.type == ir::Type::I16;
  switch (in.op) {
    case Opcode::Const: return (uint32_t(in.imm) & 0x80000000u) == 0;
    case Opcode::Zext: return f_.insts[in.args[0]].type != ir::Type::I32 && f_.insts[in.args[0]].type != ir::Type::I64;
    case Opcode::And:
      return depth < 4 && (below_2_31(in.args[0], depth + 1) || below_2_31(in.args[1], depth + 1));
    default: return false;
  }
}

}  // namespace gpurc::x64
