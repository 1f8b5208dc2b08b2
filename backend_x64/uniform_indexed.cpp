// load_uniform_idx: a 4-byte read of the uniform block at a per-lane byte
// offset (PICA200's relative c[a0.x + n] / c[aL + n] reads). Per strip:
//
//  - uniform fast path: when every lane of the strip holds the same offset
//    (the common case: aL is a uniform loop counter, a0 is usually set from a
//    uniform), one bounds check in a GPR and a broadcast load;
//  - otherwise a masked gather: vpgatherdd of the lanes whose 4 bytes lie in
//    the block (an unsigned compare against the last valid offset), the other
//    lanes 0.
//
// Further loads of the same offset value (the other components of a c[]
// read) reuse the check: the offset, or ~0 when the strip's lanes differ,
// stays in edx (uniform_index_note), so each costs a compare and the load.
//
// The op never faults: lanes outside the block, and every lane when the
// uniform block pointer is null, read 0 (ir/interp.cpp does the same).
#include <algorithm>
#include <map>
#include <set>

#include "backend_x64/emitter.h"

namespace gpurc::x64 {

using namespace ir;
using namespace Xbyak;

// The offset check's result kept in edx for the next load_uniform_idx of the
// same offset value (the four components of one relative c[] read): edx =
// the offset when every lane of the strip holds it and the block pointer is
// not null, else ~0 (above every last valid offset). Valid from the load that
// set it until an op that may write edx (anything not below) or the end of
// the compile-time straight line (reset_cache, the top of a strip-outer loop
// iteration).
void Emitter::uniform_index_note(ValueId v) {
  if (uidx_cached_ != kNoValue && !uniform_index_keeps(v)) uidx_cached_ = kNoValue;
}

bool Emitter::uniform_index_keeps(ValueId v) const {
  const Inst& in = f_.insts[v];
  bool keeps = false;
  switch (in.op) {
    case Opcode::Const: case Opcode::Select: case Opcode::ICmp: case Opcode::LoadUniformIdx:
      keeps = true;
      break;
    case Opcode::FAdd: case Opcode::FSub: case Opcode::FMul:  // lower_daz_arith: vector code only
      keeps = daz_ && in.type == ir::Type::F32 && (in.fflags & ff::FtzIn) &&
              round_mode(in.fflags) == Round::NearestEven;
      break;
    default:
      break;
  }
  if (keeps && !wide(v))
    for (ValueId a : in.args) keeps = keeps && a < f_.insts.size() && !wide(a);
  return keeps;
}

// The windows of the lane-equal offsets' loads (thirteenth session): in
// each run of a block's ops that leave edx alone, a load of a lane-equal
// offset and the later loads of the same offset value whose displacements
// lie with its own within 12 bytes, 4 apart (the components of one relative
// c[] read), make the first load's window [lo, hi]. Only a matter of speed:
// a load outside its offset's open window checks on its own.
void Emitter::uniform_index_windows() {
  uidx_windows_.assign(f_.insts.size(), {1, 0});
  std::vector<ValueId> run;
  auto close_run = [&] {
    for (size_t i = 0; i < run.size(); ++i) {
      const Inst& in = f_.insts[run[i]];
      uint32_t lo = uint32_t(in.imm), hi = lo;
      size_t n = 1;
      for (size_t j = i + 1; j < run.size() && j < i + 16; ++j) {
        const Inst& x = f_.insts[run[j]];
        if (x.args[0] != in.args[0] || (x.imm - in.imm) % 4 != 0) continue;
        const uint32_t nlo = std::min<uint32_t>(lo, uint32_t(x.imm)), nhi = std::max<uint32_t>(hi, uint32_t(x.imm));
        if (nhi - nlo > 12) continue;
        lo = nlo;
        hi = nhi;
        ++n;
      }
      if (n >= 2 && f_.uniform_bytes >= 4 && hi <= f_.uniform_bytes - 4) uidx_windows_[run[i]] = {lo, hi};
    }
    run.clear();
  };
  for (const Block& b : f_.blocks) {
    for (ValueId v : b.insts) {
      const Inst& in = f_.insts[v];
      if (!uniform_index_keeps(v)) {
        close_run();
        continue;
      }
      if (in.op != Opcode::LoadUniformIdx) continue;
      if ((in.type != ir::Type::I32 && in.type != ir::Type::F32) || wide(v)) {  // a helper call
        close_run();
        continue;
      }
      if (in.args.size() == 1 && lane_equal_[in.args[0]] && in.imm <= 0x7fffffffu) run.push_back(v);
    }
    close_run();
  }
}

// The out-of-line part of a window's check (edx: the offset, ~0 when there
// is no block): the window's words into the frame copy, each the block's
// word when it lies in the block, else 0 (as lower_uniform_indexed's zero
// path), then rdx = the copy - r15 - lo, so that [r15 + rdx + disp] reads
// the copy's word of disp. Only edx, ecx and memory change.
void Emitter::uniform_index_fill(uint32_t lo, uint32_t hi) {
  for (uint32_t m = lo; m <= hi; m += 4) {
    const int at = kUidxWindowOffset + int(m - lo);
    Label next;
    mov(dword[rsp + at], 0);
    cmp(edx, uint32_t(f_.uniform_bytes - 4 - m));
    ja(next, T_NEAR);
    mov(ecx, dword[r15 + rdx + int(m)]);
    mov(dword[rsp + at], ecx);
    L(next);
  }
  lea(rdx, ptr[rsp + kUidxWindowOffset]);
  sub(rdx, r15);
  if (lo) sub(rdx, int(lo));
}

bool Emitter::lower_uniform_indexed(ValueId v) {
  const Inst& in = f_.insts[v];
  if (in.type != ir::Type::I32 && in.type != ir::Type::F32) return false;
  const int a = use(in.args[0]);
  const int d = def(v);
  // Offsets 0..last (as added to imm) read inside the block.
  if (f_.uniform_bytes < 4 || in.imm > f_.uniform_bytes - 4) {
    vxor(d, d, d);
    return true;
  }
  if (f_.uniform_bytes > 0x7fffffffu) throw CompileError("x64 jit: load_uniform_idx on a uniform block of 2 GiB or more");
  const uint32_t last = uint32_t(f_.uniform_bytes - 4 - in.imm);
  const int disp = int(in.imm);
  const bool window_open = uidx_window_of_ != kNoValue && uidx_window_of_ == uidx_cached_;
  if (window_open && uidx_window_fold_ == kNoValue && uidx_cached_ == in.args[0] && in.imm >= uidx_window_lo_ &&
      in.imm <= uidx_window_hi_ && (in.imm - uidx_window_lo_) % 4 == 0) {
    // The window's check covered this load: the word of the block, or of
    // the frame copy when the check failed (uniform_index_fill).
    vpbroadcastd(V(d), dword[r15 + rdx + disp]);
    return true;
  }
  if (window_open) uidx_cached_ = kNoValue;  // rdx may point at the frame copy
  uidx_window_of_ = kNoValue;
  if (lane_equal_[in.args[0]] && in.args.size() == 1) {
    if (uidx_windows_.empty()) uniform_index_windows();
    const auto [lo, hi] = uidx_windows_[v];
    if (lo <= hi && in.imm >= lo && in.imm <= hi) {
      // Opens a window: one check of the offset against the largest
      // displacement's last valid offset; the later loads in the window
      // are a broadcast each. A failed check (an offset near or past the
      // block's end, no block) is out of line: the window's words into the
      // frame copy, then on as if the check had passed.
      Label& done = cold_label();
      Label& fill = cold_label();
      Label& null_block = cold_label();
      if (!uniforms_known_nonnull()) {
        test(r15, r15);
        jz(null_block, T_NEAR);
      }
      if (uidx_cached_ != in.args[0]) vmovd(edx, Xmm(a));
      cmp(edx, uint32_t(f_.uniform_bytes - 4 - hi));
      ja(fill, T_NEAR);
      vpbroadcastd(V(d), dword[r15 + rdx + disp]);
      L(done);
      push_cold([this, &done, &fill, &null_block, d, disp, lo = lo, hi = hi] {
        L(null_block);
        mov(edx, ~0u);
        L(fill);
        uniform_index_fill(lo, hi);
        vpbroadcastd(V(d), dword[r15 + rdx + disp]);
        jmp(done, T_NEAR);
      });
      uidx_cached_ = in.args[0];
      uidx_window_of_ = in.args[0];
      uidx_window_lo_ = lo;
      uidx_window_hi_ = hi;
      uidx_window_fold_ = kNoValue;
      return true;
    }
  }
  // The usual path (the strip's offsets agree, in range) falls through with
  // no taken branch; the gather, the zero result and the null block are out
  // of line (emit_cold_code) and jump back to `done`.
  UidxLabels lb{cold_label(), cold_label(), cold_label(), cold_label()};
  if (uidx_cached_ == in.args[0] && !lane_equal_[in.args[0]]) {
    // An earlier load of this offset value checked it: one compare (~0, the
    // lanes differ or no block, is above every `last`) and the load; the
    // complete check is out of line.
    Label& full = cold_label();
    cmp(edx, last);
    ja(full, T_NEAR);
    vpbroadcastd(V(d), dword[r15 + rdx + disp]);
    L(lb.done);
    push_cold([this, &full, lb, a, d, last, disp] {
      L(full);
      uniform_index_check(a, d, last, disp, lb, true);
      uniform_index_slow(a, d, last, disp, lb);
    });
  } else if (lane_equal_[in.args[0]]) {
    // Every lane holds the offset (lane_equal_values): no lane test, and
    // with the block known present (uniforms_known_nonnull) no null test;
    // edx is read from the register again (one instruction, which keeps
    // the compare's result out of the cache of later components).
    if (!uniforms_known_nonnull()) {
      test(r15, r15);
      jz(lb.null_block, T_NEAR);
    }
    if (uidx_cached_ != in.args[0]) vmovd(edx, Xmm(a));
    cmp(edx, last);
    ja(lb.zero, T_NEAR);
    vpbroadcastd(V(d), dword[r15 + rdx + disp]);
    L(lb.done);
    push_cold([this, lb, a, d, last, disp] { uniform_index_slow(a, d, last, disp, lb); });
  } else {
    uniform_index_check(a, d, last, disp, lb, false);
    L(lb.done);
    push_cold([this, lb, a, d, last, disp] { uniform_index_slow(a, d, last, disp, lb); });
  }
  uidx_cached_ = in.args[0];
  return true;
}

// The check of a strip's offsets in register a and the broadcast load into
// d when they agree and lie in the block (then on to lb.done: a jump when
// the code is not followed by it).
void Emitter::uniform_index_check(int a, int d, uint32_t last, int disp, const UidxLabels& lb, bool jump_done) {
  if (!uniforms_known_nonnull()) {
    test(r15, r15);
    jz(lb.null_block, T_NEAR);
  }
  // All lanes of the strip equal?
  vmovd(edx, Xmm(a));
  vpbroadcastd(V(0), Xmm(a));
  if (z_) {
    vpcmpeqd(k1, Zmm(0), Zmm(a));
    kortestw(k1, k1);
    jnc(lb.gather, T_NEAR);  // CF = 1 only when every bit of k1 is set
  } else {
    vpcmpeqd(Ymm(0), Ymm(0), Ymm(a));
    vmovmskps(ecx, Ymm(0));
    cmp(ecx, 0xff);
    jne(lb.gather, T_NEAR);
  }
  cmp(edx, last);
  ja(lb.zero, T_NEAR);
  vpbroadcastd(V(d), dword[r15 + rdx + disp]);
  if (jump_done) jmp(lb.done, T_NEAR);
}

// The out-of-line cases: the strip's offsets differ (a masked gather), the
// offset is past the block or there is no block (0); each ends at lb.done.
void Emitter::uniform_index_slow(int a, int d, uint32_t last, int disp, const UidxLabels& lb) {
  L(lb.gather);
  mov(edx, ~0u);
  vxor(d, d, d);
  if (z_) {
    vpcmpud(k1, Zmm(a), ptr_b[rip + const32_[last]], 2);  // a <= last (unsigned)
    vpgatherdd(Zmm(d) | k1, ptr[r15 + Zmm(a) + disp]);
  } else {
    bcast_const(1, last);
    vpminud(Ymm(1), Ymm(1), Ymm(a));
    vpcmpeqd(Ymm(1), Ymm(1), Ymm(a));  // min(a, last) == a: a <= last
    vpgatherdd(Ymm(d), ptr[r15 + Ymm(a) + disp], Ymm(1));
  }
  jmp(lb.done, T_NEAR);
  L(lb.null_block);
  mov(edx, ~0u);
  L(lb.zero);
  vxor(d, d, d);
  jmp(lb.done, T_NEAR);
}

// Values equal in all 32 lanes, unlaunched lanes included (lane_equal_): a
// greatest fixed point over constants, load_uniform (a broadcast) and
// lane-wise ops of such values. Phis count only under the unlaunched-lanes
// contract, where edge copies keep every lane (emit_edge, the direct phi
// stores and the strip loops' back edges); otherwise they zero the lanes
// that were not launched. The IR's uniformity marks cannot be used for
// this: they speak of the launched lanes.
void Emitter::lane_equal_values() {
  const size_t n = f_.insts.size();
  lane_equal_.assign(n, 0);
  auto candidate = [&](const Inst& in) {
    if (in.block == kNoBlock || in.type == ir::Type::Void || ir::lane_bytes(in.type) == 8) return false;
    switch (in.op) {
      case Opcode::Const: case Opcode::LoadUniform: case Opcode::LoadUniformIdx: case Opcode::Select:
      case Opcode::IAdd: case Opcode::ISub: case Opcode::IMul: case Opcode::And: case Opcode::Or:
      case Opcode::Xor: case Opcode::Not: case Opcode::Shl: case Opcode::LShr: case Opcode::AShr:
      case Opcode::ICmp: case Opcode::IMin: case Opcode::IMax: case Opcode::INeg:
      // (twelfth session: the rest of the lane-wise integer ops, for a G13
      // r0l field's extract16 / insert16; loops.cpp, loop_control_sets)
      case Opcode::IAbs: case Opcode::IMulHi: case Opcode::IMad: case Opcode::Lut3: case Opcode::BfExtract:
      case Opcode::BfInsert: case Opcode::Popcount: case Opcode::BitReverse: case Opcode::FindMsb:
      case Opcode::FindLsb: case Opcode::Zext: case Opcode::Sext: case Opcode::Trunc: case Opcode::Bitcast:
      case Opcode::Extract16: case Opcode::Insert16:
        return true;
      case Opcode::Phi:
        return f_.unlaunched_lanes_free;
      default:
        return false;
    }
  };
  for (ValueId v = 0; v < n; ++v) lane_equal_[v] = candidate(f_.insts[v]);
  // Rounds in id order until nothing is cleared. A round in which no value
  // it keeps reads a later id (a phi's back edge, an operand placed after
  // its reader) is final: each kept value's operands were decided before it
  // in that round and stayed set, so nothing further can be cleared (a
  // function without such reads takes one round, not two).
  for (bool again = true; again;) {
    bool cleared = false, forward = false;
    for (ValueId v = 0; v < n; ++v) {
      if (!lane_equal_[v]) continue;
      bool later = false;
      for (ValueId a : f_.insts[v].args) {
        if (a >= n || !lane_equal_[a]) {
          lane_equal_[v] = 0;
          cleared = true;
          break;
        }
        later |= a > v;
      }
      forward |= later && lane_equal_[v];
    }
    again = cleared && forward;
  }
}

}  // namespace gpurc::x64

namespace gpurc::x64 {

using namespace ir;
using namespace Xbyak;

// A relative read with its range check, as the PICA200 translation makes
// c[aL + n] (sixteenth session): x = (aL + n) & 0x7f, the offset x << 4, per
// component select(x <u 96, load_uniform_idx(offset, 4 * i), 1.0). Each
// select was a compare (once) and a blend after the load's broadcast; folded,
// the window's one offset check also sends x >= 96 out of line, where the
// window's words are all K, and each select is one broadcast. Exact: x = y &
// M and (M << s) < 2^32, so offset = x * 2^s and x >= C <=> offset > (C <<
// s) - 1. The compare must have no other reader, each load only its select,
// and the offset no reader after the last of the loads: its last reader is
// then the last fold, which frees its register.
void Emitter::plan_uniform_index_folds() {
  const size_t n = f_.insts.size();
  // (Empty: no fold; uidx_fold(v) guards every read. The constructor calls
  // this only for a function with a load_uniform_idx, whose select every
  // fold is: seventeenth session, 30k host instructions of the
  // 512-instruction shader's compile.)
  uidx_fold_.clear();
  if (f_.uniform_bytes < 4 || f_.uniform_bytes > 0x7fffffffu) return;
  uidx_fold_.assign(n, UidxFold{});
  auto konst = [&](ValueId v, uint64_t& out) {
    if (v >= n || f_.insts[v].op != Opcode::Const || !f_.insts[v].args.empty() || wide(v)) return false;
    out = f_.insts[v].imm & 0xffffffffu;
    return true;
  };
  auto local = [&](ValueId v, int seg) {  // computed in seg's strip loop, not kept outside it
    return v < n && !deferred_[v] && !wide(v) && plan_.segment_of[v] == seg && !plan_.escapes[v] &&
           plan_.direct_phis[v].empty();
  };
  std::map<ValueId, std::vector<ValueId>> by_cond;  // compare -> its selects, when each qualifies
  std::set<ValueId> bad_cond;
  for (ValueId v = 0; v < n; ++v) {
    const Inst& si = f_.insts[v];
    if (si.op != Opcode::Select || si.block == kNoBlock || si.args.size() != 3 || wide(v)) continue;
    if (si.type != ir::Type::F32 && si.type != ir::Type::I32) continue;
    const int seg = plan_.segment_of[v];
    if (seg < 0 || !plan_.segments[size_t(seg)].strip) continue;
    const ValueId c = si.args[0], l = si.args[1];
    uint64_t k = 0;
    if (!konst(si.args[2], k) || !local(c, seg) || !local(l, seg) || c == l) {
      if (c < n) bad_cond.insert(c);
      continue;
    }
    const Inst& li = f_.insts[l];
    const Inst& ci = f_.insts[c];
    bool ok = li.op == Opcode::LoadUniformIdx && li.args.size() == 1 && li.type == si.type && uses_[l] == 1 &&
              li.imm <= f_.uniform_bytes - 4 && lane_equal_[li.args[0]] && ci.op == Opcode::ICmp &&
              ci.args.size() == 2 && plan_.position[l] < plan_.position[v];
    uint64_t bound = 0;
    ValueId x = kNoValue;
    if (ok) {
      const IntPred p = IntPred(ci.attr);
      uint64_t cv = 0, sh = 0, m = 0;
      x = ci.args[0];
      const ValueId off = li.args[0];
      ok = (p == IntPred::Ult || p == IntPred::Slt) && konst(ci.args[1], cv) && x < n && off < n &&
           f_.insts[x].type == ir::Type::I32 && !wide(x) && !wide(off);
      if (ok && off != x) {  // off = x << s, s a constant below 32
        const Inst& oi = f_.insts[off];
        ok = oi.op == Opcode::Shl && oi.args.size() == 2 && oi.args[0] == x && konst(oi.args[1], sh) && sh < 32;
      }
      if (ok) {  // x = y & M (either operand order)
        const Inst& xi = f_.insts[x];
        ok = xi.op == Opcode::And && xi.args.size() == 2 && (konst(xi.args[1], m) || konst(xi.args[0], m));
      }
      // Slt: x <= M <= INT_MAX is non-negative, and x <s C <=> x <u C for 1 <= C <= INT_MAX.
      if (ok && p == IntPred::Slt) ok = m <= 0x7fffffffu && cv >= 1 && cv <= 0x7fffffffu;
      ok = ok && cv >= 1 && (m << sh) <= 0xffffffffu;
      bound = std::min<uint64_t>((cv << sh) - 1, 0xffffffffu);
      // The offset and x are read by nothing after the loads (the folds free them).
      ok = ok && plan_.segment_of[off] == seg && plan_.segment_of[x] == seg;
    }
    if (!ok) {
      bad_cond.insert(c);
      continue;
    }
    uidx_fold_[v] = UidxFold{l, c, uint32_t(k), uint32_t(bound)};
    by_cond[c].push_back(v);
  }
  // Every reader of the compare must be such a select.
  for (auto& [c, sels] : by_cond) {
    bool ok = !bad_cond.count(c) && uses_[c] == sels.size();
    const ValueId off = f_.insts[f_.insts[sels[0]].args[1]].args[0];
    int32_t last_sel = -1;
    for (ValueId s : sels) {
      const ValueId l = f_.insts[s].args[1];
      ok = ok && f_.insts[l].args[0] == off;
      last_sel = std::max(last_sel, plan_.position[s]);
    }
    // The offset is read by the loads only: the last fold reads it last now
    // and frees its register (x's last reader, the compare or an op before
    // it, frees x as before: end_op runs for deferred values too).
    // (Not plan_.last_use[off]: a trial emitter's copy of the plan has it
    // moved to the last fold already.)
    ok = ok && !plan_.escapes[off] && plan_.direct_phis[off].empty() &&
         uses_[off] == sels.size();  // (no reader but the folded loads: not a phi's operand either)
    if (!ok) {
      for (ValueId s : sels) uidx_fold_[s] = UidxFold{};
      continue;
    }
    for (ValueId s : sels) {
      deferred_[f_.insts[s].args[1]] = 1;
      uidx_fold_[s].release_offset = plan_.position[s] == last_sel;
    }
    deferred_[c] = 1;
    plan_.last_use[off] = last_sel;
    // The offset in a GPR (off = x << s, x = y & M, y = root + K or root):
    // x, y and the offset need no vector code when nothing else reads them
    // and root is read after the last fold, or comes from elsewhere (a phi,
    // a value of another segment: its slot holds it), so that it is there
    // at every fold.
    const ValueId x = f_.insts[c].args[0];
    const int seg = plan_.segment_of[c];
    auto only = [&](ValueId v, uint32_t readers) {
      return v < n && !wide(v) && plan_.segment_of[v] == seg && !plan_.escapes[v] && plan_.direct_phis[v].empty() &&
             uses_[v] == readers && f_.insts[v].args.size() == 2;
    };
    if (off == x || !only(x, 2) || !only(off, uint32_t(sels.size()))) continue;
    uint64_t m = 0, sh = 0, add = 0;
    const Inst& xi = f_.insts[x];
    const ValueId y = konst(xi.args[1], m) ? xi.args[0] : (konst(xi.args[0], m), xi.args[1]);
    konst(f_.insts[off].args[1], sh);
    ValueId root = y;
    if (only(y, 1) && f_.insts[y].op == Opcode::IAdd) {
      const Inst& yi = f_.insts[y];
      if (konst(yi.args[1], add)) root = yi.args[0];
      else if (konst(yi.args[0], add)) root = yi.args[1];
    }
    if (root >= n || wide(root) || f_.insts[root].type != ir::Type::I32 || !lane_equal_[root] ||
        f_.insts[root].op == Opcode::Const ||
        (plan_.segment_of[root] == seg && plan_.last_use[root] <= last_sel))  // (else in its slot: a phi, or escaping)
      continue;
    deferred_[x] = 1;
    deferred_[off] = 1;
    if (root != y) deferred_[y] = 1;
    for (ValueId s : sels) {
      UidxFold& fo = uidx_fold_[s];
      fo.root = root;
      fo.add = uint32_t(add);
      fo.mask = uint32_t(m);
      fo.shift = uint32_t(sh);
    }
  }
  // A constant read only by the deferred compares (C) and as the folds' K:
  // not materialised either.
  std::map<ValueId, size_t> dead_reads;
  for (ValueId v = 0; v < n; ++v) {
    if (!uidx_fold(v)) continue;
    ++dead_reads[f_.insts[v].args[2]];
  }
  std::set<ValueId> dead;  // the deferred compares, and the scalar offsets' x, y and offset
  for (ValueId v = 0; v < n; ++v)
    if (uidx_fold(v)) {
      const UidxFold& fo = uidx_fold_[v];
      dead.insert(fo.cond);
      if (fo.root == kNoValue) continue;
      const ValueId x = f_.insts[fo.cond].args[0], off = f_.insts[fo.load].args[0];
      dead.insert(x);
      dead.insert(off);
      for (ValueId a : f_.insts[x].args)
        if (a != fo.root && deferred_[a] && f_.insts[a].op == Opcode::IAdd) dead.insert(a);
    }
  for (ValueId c : dead)
    for (ValueId a : f_.insts[c].args) ++dead_reads[a];
  for (auto [k, reads] : dead_reads)
    if (k < n && f_.insts[k].op == Opcode::Const && f_.insts[k].args.empty() && uses_[k] == reads &&
        !plan_.escapes[k] && plan_.direct_phis[k].empty())
      deferred_[k] = 1;
}

// The window's words all K (the out-of-line path of a folded check whose
// x >= C), then rdx as uniform_index_fill leaves it.
void Emitter::uniform_index_fill_const(uint32_t lo, uint32_t hi, uint32_t k) {
  for (uint32_t m = lo; m <= hi; m += 4) mov(dword[rsp + kUidxWindowOffset + int(m - lo)], k);
  lea(rdx, ptr[rsp + kUidxWindowOffset]);
  sub(rdx, r15);
  if (lo) sub(rdx, int(lo));
}

ValueId Emitter::uidx_fold_offset_source(ValueId v) const {
  const UidxFold& fo = uidx_fold_[v];
  return fo.root != kNoValue ? fo.root : f_.insts[fo.load].args[0];
}

bool Emitter::lower_uniform_index_fold(ValueId v) {
  const UidxFold fo = uidx_fold_[v];
  const Inst& in = f_.insts[fo.load];
  const ValueId off = in.args[0];
  const int disp = int(in.imm);
  auto release = [&](ValueId a) {
    const int r = vals_[a].reg;
    if (r < 0 || regs_[r].pinned) return;
    vals_[a].reg = -1;
    regs_[r] = RegState{};
  };
  const bool window_open = uidx_window_of_ != kNoValue && uidx_window_of_ == uidx_cached_;
  // (After the last fold the offset is freed before the result's register
  // is chosen: nothing reads it later, see the plan.)
  auto free_dead = [&] {
    if (fo.release_offset) release(off);
  };
  if (window_open && uidx_cached_ == off && uidx_window_fold_ == fo.cond && uidx_window_k_ == fo.k &&
      in.imm >= uidx_window_lo_ && in.imm <= uidx_window_hi_ && (in.imm - uidx_window_lo_) % 4 == 0) {
    free_dead();
    const int d = def(v);
    vpbroadcastd(V(d), dword[r15 + rdx + disp]);
  } else {
    if (uidx_windows_.empty()) uniform_index_windows();
    auto [lo, hi] = uidx_windows_[fo.load];
    if (!(lo <= hi && in.imm >= lo && in.imm <= hi)) lo = hi = uint32_t(in.imm);
    const bool scalar = fo.root != kNoValue;
    const int a = use(scalar ? fo.root : off);
    free_dead();  // (the offset's register a is read below before d is written, and by the cold path)
    const int d = def(v);
    auto offset_to_edx = [this, a, fo, scalar] {
      vmovd(edx, Xmm(a));
      if (!scalar) return;
      if (fo.add) add(edx, fo.add);
      and_(edx, fo.mask);
      if (fo.shift) shl(edx, uint8_t(fo.shift));
    };
    Label& done = cold_label();
    Label& out = cold_label();
    Label& null_block = cold_label();
    if (!uniforms_known_nonnull()) {
      test(r15, r15);
      jz(null_block, T_NEAR);
    }
    offset_to_edx();  // always: edx may be ~0 from an earlier check of this offset
    cmp(edx, std::min(uint32_t(f_.uniform_bytes - 4 - hi), fo.k_bound));
    ja(out, T_NEAR);
    vpbroadcastd(V(d), dword[r15 + rdx + disp]);
    L(done);
    push_cold([this, &done, &out, &null_block, d, disp, lo = lo, hi = hi, fo, offset_to_edx] {
      Label kfill, fill, load;
      L(null_block);
      offset_to_edx();
      cmp(edx, fo.k_bound);
      ja(kfill, T_NEAR);
      mov(edx, ~0u);  // no block: the load reads 0
      jmp(fill, T_NEAR);
      L(out);
      cmp(edx, fo.k_bound);
      ja(kfill, T_NEAR);
      L(fill);
      uniform_index_fill(lo, hi);
      jmp(load, T_NEAR);
      L(kfill);
      uniform_index_fill_const(lo, hi, fo.k);
      L(load);
      vpbroadcastd(V(d), dword[r15 + rdx + disp]);
      jmp(done, T_NEAR);
    });
    uidx_cached_ = off;
    uidx_window_of_ = off;
    uidx_window_lo_ = lo;
    uidx_window_hi_ = hi;
    uidx_window_fold_ = fo.cond;
    uidx_window_k_ = fo.k;
  }
  return true;
}

}  // namespace gpurc::x64
