// The indexed memory fast path: loads and stores whose i64 address is
//
//   iadd (uniform base), (shl (zext|sext i32 x), s)      s = 0..3, shl optional
//
// with the base a tree of const / load_uniform / and / or / xor / iadd / isub
// (so it is uniform and can be computed in general-purpose registers). This is
// how G13 (and other 64-bit address guests) index a buffer: `device_load ...,
// u0_u1, r9` becomes `(u0_u1 & ~3) + (zext r9 << 2)`. The scaled part may
// also be built from nested constant shifts and i64 constant additions (G13's
// components after the first: `(zext r + 1) << 2`); its constant
// moves to the base (match_scaled).
//
// Instead of the 64-bit address vector, the code checks the 32-bit indices:
// for a window [wb, wb + size) and base B with 0 <= d = B - wb <= size, lane
// x is inside when 0 <= d + ext(x) * 2^s <= size - bytes, i.e.
// Lo <= x <= Hi (signed 32-bit) with Hi = min((size - bytes - d) >> s, 2^31 - 1)
// and Lo = 0 (zext: x < 2^31 is also what makes the dword index of a gather
// read as ext(x)) or max(-(d >> s), -2^31) (sext). These bounds are computed
// per window in GPRs; the lanes are compared as dwords, and the accesses are
// vpgather/vpscatter with dword indices and scale 2^s from host + d (or a
// scalar loop). The bounds are exact for every base B inside its window
// [wb, wb + size]; any other case (base outside every window, a lane outside,
// null uniforms) goes to the general path, which first computes the address
// chain the code skipped ("deferred" values) and then does everything as
// before, helper included, so faults stay exactly the interpreter's.
#include <atomic>
#include <algorithm>
#include <type_traits>
#include <map>
#include <set>
#include <tuple>
#include <cstddef>
#include <cstring>
#include <cstdint>
#include <cstdlib>

#include "backend_x64/emitter.h"
#include "backend_x64/jit.h"
#include "ir/abi.h"
#include "ir/pass_util.h"

namespace gpurc::x64 {

using namespace ir;
using namespace Xbyak;

namespace {
#define CTX(field) (rbx + int(offsetof(WarpContext, field)))
constexpr int kMaxBaseDepth = 3;    // base tree depth: 4 GPRs (rax, rdx, rsi, rdi) evaluate it
constexpr int kMaxScaledDepth = 6;  // nested shl / iadd-of-constant levels of the scaled part

bool is_base_op(Opcode op) {
  return op == Opcode::And || op == Opcode::Or || op == Opcode::Xor || op == Opcode::IAdd || op == Opcode::ISub;
}
}  // namespace

bool Emitter::match_uniform_base(ValueId v, int depth, IndexedAddress& out) const {
  const Inst& in = f_.insts[v];
  if (in.type != ir::Type::I64 || in.block == kNoBlock) return false;
  if (in.op == Opcode::Const) {
    out.tree.push_back(v);
    return true;
  }
  if (in.op == Opcode::LoadUniform) {
    // Out of range at compile time: the load_uniform always faults; leave it to its own code.
    if (!(in.imm <= f_.uniform_bytes && f_.uniform_bytes - in.imm >= 8)) return false;
    out.tree.push_back(v);
    out.reads_uniforms = true;
    return true;
  }
  if (!is_base_op(in.op) || in.args.size() != 2 || depth >= kMaxBaseDepth) return false;
  out.tree.push_back(v);
  return match_uniform_base(in.args[0], depth + 1, out) && match_uniform_base(in.args[1], depth + 1, out);
}

// The scaled part: (zext|sext i32 x), under shl by constants and iadd of
// i64 constants: G13's second component `(zext x + 1) << 2`, or with `lsl 1`
// `((zext x << 1) + 1) << 2`.
// Shifts by constants and additions compose exactly modulo 2^64:
// (e + k) << c = (e << c) + (k << c), (e << a) << b = e << (a + b); so the
// value is ext(x) << shift plus `disp`, which goes to the base.
bool Emitter::match_scaled(ValueId v, int depth, IndexedAddress& m) const {
  const Inst& in = f_.insts[v];
  if (in.type != ir::Type::I64 || in.block == kNoBlock || depth > kMaxScaledDepth) return false;
  if (in.op == Opcode::Zext || in.op == Opcode::Sext) {
    if (in.args.size() != 1 || f_.insts[in.args[0]].type != ir::Type::I32) return false;
    m.tree.push_back(v);
    m.sext = in.op == Opcode::Sext;
    m.index = in.args[0];
    m.shift = 0;
    m.disp = 0;
    return true;
  }
  if (in.op == Opcode::Shl && in.args.size() == 2) {
    const Inst& count = f_.insts[in.args[1]];
    // Constant counts 0..3 (in total) shift the same in the Mask and Clamp modes.
    if (count.op != Opcode::Const || count.imm > 3 || !match_scaled(in.args[0], depth + 1, m)) return false;
    if (m.shift + count.imm > 3) return false;
    m.shift = uint8_t(m.shift + count.imm);
    m.disp <<= count.imm;
    // The count too: read by nothing else, it is deferred with the shift
    // (else a strip loop per warp computes it for nobody).
    m.tree.push_back(in.args[1]);
    m.tree.push_back(v);
    return true;
  }
  if (in.op == Opcode::IAdd && in.args.size() == 2) {
    for (int k = 0; k < 2; ++k) {
      const Inst& c = f_.insts[in.args[k]];
      if (c.op != Opcode::Const || c.type != ir::Type::I64) continue;
      if (!match_scaled(in.args[1 - k], depth + 1, m)) return false;
      m.disp += c.imm;
      m.tree.push_back(in.args[k]);
      m.tree.push_back(v);
      return true;
    }
  }
  return false;
}

bool Emitter::match_indexed(ValueId addr, IndexedAddress& out) const {
  const Inst& a = f_.insts[addr];
  if (a.op != Opcode::IAdd || a.type != ir::Type::I64 || a.args.size() != 2) return false;
  for (int k = 0; k < 2; ++k) {
    IndexedAddress m;
    m.tree.push_back(addr);
    if (!match_scaled(a.args[k], 0, m)) continue;
    if (!match_uniform_base(a.args[1 - k], 0, m)) continue;
    m.base = a.args[1 - k];
    out = std::move(m);
    return true;
  }
  return false;
}

// A 32-bit address widened without arithmetic, as Tesla's g[] addresses:
//
//   select (icmp.ne (and x, m), 0), K, Z     or Z alone,     Z = zext x | or (zext x), C
//
// with x i32, C a constant with zero low 32 bits (a space's base: then C | x
// = C + x) and m a mask below the element size (the alignment test of an
// access of `bytes`). When the taking-part lanes' x are consecutive elements
// (x_l = b + l * bytes with no wrap past 2^32) and the first one is aligned,
// every lane is aligned and its address is C + b + l * bytes: the check runs
// on x's dword slot and the i64 values (zext, or, select) and the alignment
// test are needed only by the fallback (deferred, as the indexed path's).
bool Emitter::match_narrow(ValueId addr, unsigned bytes, IndexedAddress& out) const {
  auto is_const = [&](ValueId c, ir::Type t) { return f_.insts[c].op == Opcode::Const && f_.insts[c].type == t; };
  const Inst& a = f_.insts[addr];
  if (a.type != ir::Type::I64 || a.block == kNoBlock || a.uniform) return false;
  IndexedAddress m;
  m.narrow = true;
  m.tree.push_back(addr);
  ValueId z = addr, guard_x = kNoValue;
  if (a.op == Opcode::Select) {
    if (a.args.size() != 3 || !is_const(a.args[1], ir::Type::I64)) return false;
    const Inst& c = f_.insts[a.args[0]];
    if (c.op != Opcode::ICmp || c.attr != uint8_t(ir::IntPred::Ne) || c.args.size() != 2) return false;
    const Inst& zero = f_.insts[c.args[1]];
    if (!is_const(c.args[1], ir::Type::I32) || zero.imm != 0) return false;
    const Inst& an = f_.insts[c.args[0]];
    if (an.op != Opcode::And || an.type != ir::Type::I32 || an.args.size() != 2) return false;
    int k = is_const(an.args[1], ir::Type::I32) ? 1 : is_const(an.args[0], ir::Type::I32) ? 0 : -1;
    if (k < 0) return false;
    m.align_mask = uint32_t(f_.insts[an.args[k]].imm);
    if (m.align_mask & ~(bytes - 1)) return false;  // only bits below the element size
    guard_x = an.args[1 - k];
    m.tree.insert(m.tree.end(), {a.args[0], c.args[0], an.args[k], c.args[1], a.args[1]});
    z = a.args[2];
  }
  const Inst* zi = &f_.insts[z];
  if (zi->type != ir::Type::I64) return false;
  if (zi->op == Opcode::Or && zi->args.size() == 2) {
    int k = is_const(zi->args[1], ir::Type::I64) ? 1 : is_const(zi->args[0], ir::Type::I64) ? 0 : -1;
    if (k < 0 || (f_.insts[zi->args[k]].imm & 0xffffffffu) != 0) return false;
    m.disp = f_.insts[zi->args[k]].imm;
    if (z != addr) m.tree.push_back(z);
    m.tree.push_back(zi->args[k]);
    z = zi->args[1 - k];
    zi = &f_.insts[z];
  }
  if (zi->op != Opcode::Zext || zi->args.size() != 1 || f_.insts[zi->args[0]].type != ir::Type::I32) return false;
  if (guard_x != kNoValue && guard_x != zi->args[0]) return false;
  if (z != addr) m.tree.push_back(z);
  m.index = zi->args[0];
  m.shift = uint8_t(bytes == 8 ? 3 : 2);
  // x = iadd (load_uniform u), s with u's dword in range at compile time.
  const Inst& xi = f_.insts[m.index];
  if (xi.op == Opcode::IAdd && xi.args.size() == 2)
    for (int k = 0; k < 2; ++k) {
      const Inst& u = f_.insts[xi.args[k]];
      if (u.op != Opcode::LoadUniform || u.type != ir::Type::I32 || u.block == kNoBlock) continue;
      if (!(u.imm <= f_.uniform_bytes && f_.uniform_bytes - u.imm >= 4)) continue;
      if (f_.insts[xi.args[1 - k]].type != ir::Type::I32) continue;
      m.seq_index = xi.args[1 - k];
      m.addend_off = uint32_t(u.imm);
      // The fast path reads s's slot and u from the uniforms, never x's
      // slot: x and u may be left to the fallback like the rest of the tree.
      m.tree.insert(m.tree.end(), {xi.args[k], m.index});
      break;
    }
  out = std::move(m);
  return true;
}

// Which memory ops take the indexed path, and which values of their address
// expressions need not be computed where they are defined: a value is
// deferred when every reader is a deferred value or the address operand of
// such a memory op (a greatest fixed point over the candidates). Deferred
// values are pure and cannot fault, except a load_uniform (null uniforms at
// run time); one is deferred only when it sits in the memory op's block with
// nothing but other strip ops that are not load_uniforms between them, so the
// fallback's fault comes with nothing observable having happened in between.
// A for an i1 mask `and A, entry_mask` (either order; Tesla's bound check
// under the launch), else kNoValue. The lanes taking part in an access or a
// vote under it are A's lanes AND ctx.entry_mask, which the fast paths and
// emit_vote compute from A's slot anyway.
ValueId Emitter::entry_and_source(ValueId m) const {
  const Inst& mi = f_.insts[m];
  if (mi.op != Opcode::And || mi.type != ir::Type::I1 || mi.args.size() != 2 || mi.block == kNoBlock) return kNoValue;
  for (int i = 0; i < 2; ++i) {
    const ValueId a = mi.args[1 - i];
    if (f_.insts[mi.args[i]].op == Opcode::EntryMask && f_.insts[a].op != Opcode::EntryMask &&
        f_.insts[a].type == ir::Type::I1)
      return a;
  }
  return kNoValue;
}

// A ballot / any / all that emit_vote lowers (32-bit operands, a valid cluster).
bool Emitter::mask_vote(ValueId v) const {
  const Inst& in = f_.insts[v];
  return (in.op == Opcode::Any || in.op == Opcode::All || in.op == Opcode::Ballot) && in.args.size() == 2 &&
         !wide(in.args[0]) && !wide(in.args[1]) && !wide(v) && valid_cluster_imm(in.imm);
}

// The value whose lanes (AND ctx.entry_mask) are the lanes taking part under `mask`.
ValueId Emitter::mask_lanes_value(ValueId mask) const {
  auto it = mask_source_.find(mask);
  return it == mask_source_.end() ? mask : it->second;
}

void Emitter::plan_indexed_memory() {
  deferred_.assign(f_.insts.size(), 0);
  for (ValueId v = 0; v < f_.insts.size(); ++v) {
    const Inst& in = f_.insts[v];
    if (in.block == kNoBlock) continue;
    bool is_load = in.op == Opcode::Load;
    if (!is_load && in.op != Opcode::Store) continue;
    // The same shapes emit_memory_fast accepts (valid space and class, i64 address).
    if ((in.attr & 15) >= kNumSpaces || (in.attr >> 4) > 2 || in.args.size() != (is_load ? 2u : 3u)) continue;
    if (f_.insts[in.args[0]].type != ir::Type::I64) continue;
    ir::Type data_t = is_load ? in.type : f_.insts[in.args[1]].type;
    if (data_t == ir::Type::I1) continue;
    unsigned bytes = bit_width(data_t) / 8;
    if ((bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8) || lane_bytes(data_t) != (bytes == 8 ? 8u : 4u)) continue;
    IndexedAddress m;
    if (match_indexed(in.args[0], m)) indexed_.emplace(v, std::move(m));
    else if ((bytes == 4 || bytes == 8) && match_narrow(in.args[0], bytes, m)) indexed_.emplace(v, std::move(m));
  }
  if (indexed_.empty()) return;

  std::vector<std::vector<ValueId>> readers(f_.insts.size());
  for (ValueId v = 0; v < f_.insts.size(); ++v)
    if (f_.insts[v].block != kNoBlock)
      for (ValueId a : f_.insts[v].args)
        if (a < readers.size()) readers[a].push_back(v);
  // 32-bit values that may be deferred too (materialize_deferred stores
  // them): a narrow address's alignment test, an index read from a var the
  // function never writes (the fast paths read the var itself), and the
  // entry mask as a mask operand (the fast paths read ctx.entry_mask).
  std::vector<uint8_t> candidate(f_.insts.size(), 0), narrow_value(f_.insts.size(), 0);
  std::vector<uint8_t> var_written(f_.vars.size(), 0);
  for (const Inst& in : f_.insts)
    if (in.block != kNoBlock && in.op == Opcode::StoreVar && in.imm < var_written.size()) var_written[in.imm] = 1;
  for (auto& [op, m] : indexed_) {
    for (ValueId t : m.tree) {
      candidate[t] = 1;
      // A 32-bit constant (a shift count) may be deferred on either path.
      if (m.narrow || f_.insts[t].op == Opcode::Const) narrow_value[t] = 1;
    }
    const Inst& x = f_.insts[m.index];
    if (x.op == Opcode::LoadVar && x.type == ir::Type::I32 && x.imm < f_.vars.size() &&
        f_.vars[x.imm].type == ir::Type::I32 && !var_written[x.imm]) {
      m.index_var = int(x.imm);
      candidate[m.index] = narrow_value[m.index] = 1;
    }
    const ValueId mask = f_.insts[op].args.back();
    if (f_.insts[mask].op == Opcode::EntryMask) candidate[mask] = narrow_value[mask] = 1;
    if (const ValueId a = entry_and_source(mask); a != kNoValue) {
      // A mask `and A, entry_mask`: the fast paths AND the lanes of A with
      // ctx.entry_mask themselves; the and and the entry mask's lanes are
      // computed only by the fallback.
      candidate[mask] = narrow_value[mask] = 1;
      for (ValueId e : f_.insts[mask].args)
        if (e != a) candidate[e] = narrow_value[e] = 1;
    }
  }

  // A load_uniform may move to the memory op's fallback only when it is in
  // that op's block and only strip ops other than load_uniforms lie between
  // -- or, reading inside the block, when a load_uniform that is never
  // deferred (not a candidate) comes before it in its block and that block
  // is the op's (the load_uniform before the op) or dominates it: the
  // earlier one ran first on every path and would have faulted on a missing
  // uniform block (one pointer for the whole run), so the moved one cannot
  // fault (Tesla's saxpy: ntid.x and n before the x and y bases).
  std::vector<BlockId> idom;
  auto uniform_in_range = [&](const Inst& ui) {
    const unsigned bytes = ui.type == ir::Type::I1 ? 1 : bit_width(ui.type) / 8;
    return ui.imm <= f_.uniform_bytes && f_.uniform_bytes - ui.imm >= bytes;
  };
  // The u of a narrow x = u + s moves only that way: its access skips the
  // fallback when no lane takes part, so without the earlier load_uniform
  // a missing uniform block would go unreported.
  std::vector<uint8_t> addend_uniform(f_.insts.size(), 0);
  for (auto& [op, m] : indexed_)
    if (m.seq_index != kNoValue)
      for (ValueId a : f_.insts[m.index].args)
        if (f_.insts[a].op == Opcode::LoadUniform) addend_uniform[a] = 1;
  auto uniform_may_move = [&](ValueId u, ValueId op) {
    const Inst& ui = f_.insts[u];
    const auto& list = f_.blocks[ui.block].insts;
    auto pu = std::find(list.begin(), list.end(), u), po = std::find(list.begin(), list.end(), op);
    if (pu == list.end()) return false;
    if (uniform_in_range(ui) && std::any_of(list.begin(), pu, [&](ValueId w) {
          return f_.insts[w].op == Opcode::LoadUniform && !candidate[w];
        })) {
      if (ui.block == f_.insts[op].block) return po != list.end() && pu < po;
      if (idom.empty()) idom = passutil::immediate_dominators(f_, passutil::reverse_post_order(f_));
      return passutil::dominates(idom, ui.block, f_.insts[op].block);
    }
    if (addend_uniform[u]) return false;
    if (ui.block != f_.insts[op].block) return false;
    if (po == list.end() || pu > po) return false;
    for (auto it = pu + 1; it != po; ++it) {
      const Inst& x = f_.insts[*it];
      if (!is_strip_op(x) || x.op == Opcode::LoadUniform) return false;
    }
    return true;
  };
  for (auto& [op, m] : indexed_)
    for (ValueId t : m.tree)
      if (f_.insts[t].op == Opcode::LoadUniform && !uniform_may_move(t, op)) candidate[t] = 0;

  std::vector<uint8_t> def(candidate);
  for (bool changed = true; changed;) {
    changed = false;
    for (ValueId v = 0; v < f_.insts.size(); ++v) {
      if (!def[v]) continue;
      bool ok = is_strip_op(f_.insts[v]) && (wide(v) || narrow_value[v]);
      for (ValueId r : readers[v]) {
        if (!ok) break;
        if (def[r]) continue;
        auto it = indexed_.find(r);
        // Only as the address operand (a store's data is read from its slot),
        // or an entry_mask as the mask operand.
        const auto& ra = f_.insts[r].args;
        const bool lanes_mask = f_.insts[v].op == Opcode::EntryMask || entry_and_source(v) != kNoValue;
        if (it == indexed_.end()) {
          // A whole-warp vote (emit_vote) reads a mask `and A, entry_mask` as A's lanes.
          ok = mask_vote(r) && ra[1] == v && ra[0] != v && entry_and_source(v) != kNoValue;
          continue;
        }
        ok = (ra[0] == v || (ra.back() == v && lanes_mask)) && std::count(ra.begin(), ra.end(), v) == 1;
      }
      // A load_uniform in the trees of several memory ops must be allowed to move to each.
      if (ok && f_.insts[v].op == Opcode::LoadUniform)
        for (auto& [op, m] : indexed_)
          if (std::find(m.tree.begin(), m.tree.end(), v) != m.tree.end() && !uniform_may_move(v, op)) ok = false;
      if (!ok) {
        def[v] = 0;
        changed = true;
      }
    }
  }
  deferred_ = def;
  for (ValueId v = 0; v < f_.insts.size(); ++v)
    if (deferred_[v])
      if (const ValueId a = entry_and_source(v); a != kNoValue) {
        mask_source_[v] = a;
        plan_.escapes[a] = 1;  // the fast paths and votes read its slot
      }

  for (auto& [op, m] : indexed_) {
    // Operands before users: a post-order walk of the address expression.
    std::vector<uint8_t> seen(f_.insts.size(), 0);
    // A constant operand that is not deferred (other readers) is computed
    // again there rather than kept in the frame for the fallback alone.
    auto visit = [&](auto&& self, ValueId v) -> void {
      if (seen[v]) return;
      if (!deferred_[v] && !(f_.insts[v].op == Opcode::Const && f_.insts[v].args.empty())) return;
      seen[v] = 1;
      if (deferred_[v])
        for (ValueId a : f_.insts[v].args) self(self, a);
      m.deferred.push_back(v);
    };
    visit(visit, f_.insts[op].args.back());  // the mask, when it is a deferred entry_mask
    if (!deferred_[f_.insts[op].args.back()]) m.deferred.clear();
    visit(visit, f_.insts[op].args[0]);
    // The fast path reads the index from its slot (or its var), the fallback
    // the operands of the deferred values: all of them must be in the frame.
    if (m.index_var < 0 && !(m.seq_index != kNoValue && deferred_[m.index])) plan_.escapes[m.index] = 1;
    if (m.seq_index != kNoValue) plan_.escapes[m.seq_index] = 1;
    for (ValueId d : m.deferred)
      if (deferred_[d])
        for (ValueId a : f_.insts[d].args)
          if (!deferred_[a] && f_.insts[a].op != Opcode::Const) plan_.escapes[a] = 1;
  }
  plan_sequence_cache();
  plan_mask_cache();
  plan_window_cache();
  plan_lane_run_flags();
}

namespace {
// The last of `candidates` (accesses in reverse post-order) whose block is
// `bid` or dominates it: the access whose frame cache a later access in
// `bid` may read, or kNoValue.
ValueId last_dominating(const ir::Function& f, const std::vector<BlockId>& idom,
                        const std::vector<ValueId>& candidates, BlockId bid) {
  ValueId found = kNoValue;
  for (ValueId o : candidates)
    if (f.insts[o].block == bid || passutil::dominates(idom, f.insts[o].block, bid)) found = o;
  return found;
}

// A 64-byte frame slot for a cache its first access owns (made on the first
// request; `owner` marks the access that stores it).
int32_t owned_cache_slot(int32_t& cache, bool& owner, uint32_t& frame_bytes) {
  if (cache < 0) {
    cache = int32_t(frame_bytes);
    owner = true;
    frame_bytes += 64;
  }
  return cache;
}
}  // namespace

// The prologue's part of the window caches (plan_window_cache): cleared
// once per call.
void Emitter::clear_window_caches() {
  for (const auto& [off, narrow] : window_caches_) {
    if (narrow) {  // lo = 2^64 - 1, hi = 0
      mov(qword[r12 + off], -1);
      mov(qword[r12 + off + 8], 0);
    } else {  // host + d = 0: none; the call-wide host + d (emit_lane_run_flags) and the call span too
      mov(qword[r12 + off], 0);
      mov(qword[r12 + off + 24], 0);
      mov(qword[r12 + off + kCallSpanOffset], 0);
    }
  }
}

// Every access with a consecutive-span path (narrow, or indexed with the
// scale equal to the element size) remembers the window its span was last
// found in, for the later warps of the same call (IndexedAddress::win_cache).
// What it keeps depends only on the base (uniforms and constants) and on
// ctx.windows, which stay the same for every warp a call runs (the warp
// loop's warps share one context; a call runs on one context); the prologue
// clears the caches once per call, in the part the warp loop's later warps
// skip. Each warp still compares its own span with the kept bounds, so the
// cache only skips the search (and the base), never a check.
void Emitter::plan_window_cache() {
  for (auto& [v, m] : indexed_) {
    const Inst& in = f_.insts[v];
    const unsigned bytes = bit_width(in.op == Opcode::Load ? in.type : f_.insts[in.args[1]].type) / 8;
    if (!m.narrow && ((bytes != 4 && bytes != 8) || (1u << m.shift) != bytes)) continue;
    m.win_cache = int32_t(frame_bytes_);
    frame_bytes_ += 64;
    window_caches_.emplace_back(m.win_cache, m.narrow);
  }
}

// The warp loop (warp_loop.cpp) writes each lane var of its descriptor as
// (base + lane_add[l]) & lane_keep[l] before every warp of a call, and the
// index var of an indexed access has no store_var: when the descriptor's
// last entry touching that var writes it whole with lane_add = 0..31 and no
// lane_keep (G13's thread_position_in_grid), every warp of the call sees
// x_l = x_0 + l (mod 2^32). The prologue finds that out once per call
// (emit_lane_run_flags) and sets the var's frame flag; the access then
// checks only x_0 (no wrap past 2^31 over the warp) instead of comparing all
// 32 lanes. A single-warp run, a draw-loop call or any other descriptor
// leaves the flag 0: the full check.
void Emitter::plan_lane_run_flags() {
  std::map<int, int32_t> flag_of;
  for (auto& [v, m] : indexed_) {
    if (m.narrow || m.index_var < 0 || m.win_cache < 0) continue;  // win_cache: the consecutive path
    auto [it, fresh] = flag_of.try_emplace(m.index_var, int32_t(frame_bytes_));
    if (fresh) {
      frame_bytes_ += 64;
      lane_run_flags_.emplace_back(m.index_var, it->second);
    }
    m.run_flag = it->second;
  }
  plan_lane0_var();
  // Narrow accesses (Tesla's g[] addresses, whose index is built from
  // several lane vars): the IR walk of plan_narrow_lane_proof; one flag per
  // set of descriptor conditions.
  std::map<std::pair<std::vector<int>, std::vector<int>>, int32_t> narrow_flag_of;
  for (auto& [v, m] : indexed_) {
    if (!m.narrow || m.win_cache < 0) continue;
    const Inst& in = f_.insts[v];
    const unsigned bytes = bit_width(in.op == Opcode::Load ? in.type : f_.insts[in.args[1]].type) / 8;
    if (!plan_narrow_lane_proof(m, bytes)) continue;
    auto [it, fresh] = narrow_flag_of.try_emplace({m.narrow_iota, m.narrow_same}, int32_t(frame_bytes_));
    if (fresh) {
      frame_bytes_ += 64;
      narrow_run_flags_.push_back({it->second, m.narrow_iota, m.narrow_same});
    }
    m.run_flag = it->second;
  }
}

namespace {
// The lane step of an i32 value (plan_narrow_lane_proof): v_l = v_0 + step * l
// (mod 2^32) in every lane, given that each var of `vars` whose bit is set in
// `iota` holds base + lane and each other one the same value in every lane;
// `wraps` collects the per-warp conditions of `and x, 2^k - 1` of a
// base + lane var x. A step of 0 is a value equal in every lane (constants,
// uniforms and pure integer ops of such values).
struct NarrowLaneWalk {
  const ir::Function& f;
  const std::vector<int>& vars;  // the lane vars the walk may read (i32, no store_var)
  unsigned iota = 0;
  std::vector<std::pair<int, uint32_t>> wraps;

  int var_index(const Inst& in) const {
    if (in.op != Opcode::LoadVar || in.type != ir::Type::I32) return -1;
    auto it = std::find(vars.begin(), vars.end(), int(in.imm));
    return it == vars.end() ? -1 : int(it - vars.begin());
  }
  bool step(ValueId v, int depth, uint32_t& out) {
    const Inst& in = f.insts[v];
    if (depth > 12 || in.block == kNoBlock) return false;
    switch (in.op) {
      case Opcode::Const:
      case Opcode::LoadUniform: out = 0; return true;
      case Opcode::LoadVar: {
        const int k = var_index(in);
        if (k < 0) return false;
        out = (iota >> k) & 1;
        return true;
      }
      default: break;
    }
    const bool i32 = in.type == ir::Type::I32;
    uint32_t s[2] = {0, 0};
    if (in.args.size() == 2 && i32 && in.op == Opcode::And) {
      // and x, 2^k - 1 (k >= 5) of a base + lane var: (x_0 + l) & m =
      // (x_0 & m) + l while (x_0 & m) + 31 <= m, tested per warp.
      for (int j = 0; j < 2; ++j) {
        const Inst& c = f.insts[in.args[j]];
        const Inst& x = f.insts[in.args[1 - j]];
        const int k = var_index(x);
        if (c.op != Opcode::Const || k < 0 || !((iota >> k) & 1)) continue;
        const uint32_t m = uint32_t(c.imm);
        if (m < 31 || (m & (m + 1)) != 0) return false;
        if (m != ~0u) wraps.emplace_back(int(x.imm), m);
        out = 1;
        return true;
      }
    }
    if (in.args.empty() || in.args.size() > 2) return false;
    for (size_t j = 0; j < in.args.size(); ++j)
      if (!step(in.args[j], depth + 1, s[j])) return false;
    const bool same = s[0] == 0 && s[1] == 0;
    switch (in.op) {
      case Opcode::IAdd: out = s[0] + s[1]; return i32 || same;
      case Opcode::ISub: out = s[0] - s[1]; return i32 || same;
      case Opcode::IMul:
        if (same) return out = 0, true;
        for (int j = 0; j < 2; ++j)
          if (s[1 - j] == 0 && f.insts[in.args[1 - j]].op == Opcode::Const && i32) {
            out = s[j] * uint32_t(f.insts[in.args[1 - j]].imm);
            return true;
          }
        return false;
      case Opcode::Shl:
        if (same) return out = 0, true;
        if (s[1] == 0 && i32 && f.insts[in.args[1]].op == Opcode::Const && f.insts[in.args[1]].imm < 32) {
          out = s[0] << f.insts[in.args[1]].imm;  // a constant count below 32: the same in every shift mode
          return true;
        }
        return false;
      case Opcode::And:
      case Opcode::Or:
      case Opcode::Xor:
      case Opcode::LShr:
      case Opcode::AShr:
      case Opcode::Zext:
      case Opcode::Sext:
      case Opcode::Trunc: out = 0; return same;
      default: return false;
    }
  }
};
}  // namespace

// Whether the narrow access's checked value (s of x = u + s, else x) steps
// by `bytes` per lane in a warp-loop call whose descriptor writes some of
// the lane vars it reads as base + lane and the others alike in every lane
// (Tesla: $r0 = tid with lane_add 0..31, ctaid with lane_add all zero; the
// index `ntid.x * (ctaid & 0xffff) + ($r0 & 0xffff)`, shifted by 2). Each
// assignment of "base + lane" / "alike" to those vars (at most 4) is tried;
// the first under which the value's step is `bytes` is kept.
bool Emitter::plan_narrow_lane_proof(IndexedAddress& m, unsigned bytes) const {
  const ValueId checked = m.seq_index != kNoValue ? m.seq_index : m.index;
  if (f_.insts[checked].type != ir::Type::I32) return false;
  std::vector<uint8_t> written(f_.vars.size(), 0);
  for (const Inst& in : f_.insts)
    if (in.block != kNoBlock && in.op == Opcode::StoreVar && in.imm < written.size()) written[in.imm] = 1;
  // The vars the value reads (a bounded walk).
  std::vector<int> vars;
  std::vector<ValueId> stack{checked};
  for (int visited = 0; !stack.empty(); ++visited) {
    if (visited > 64) return false;
    const ValueId v = stack.back();
    stack.pop_back();
    const Inst& in = f_.insts[v];
    if (in.op == Opcode::LoadVar) {
      if (in.type != ir::Type::I32 || in.imm >= f_.vars.size() || f_.vars[in.imm].type != ir::Type::I32 ||
          written[in.imm])
        return false;
      if (std::find(vars.begin(), vars.end(), int(in.imm)) == vars.end()) vars.push_back(int(in.imm));
      continue;
    }
    for (ValueId a : in.args) stack.push_back(a);
  }
  if (vars.empty() || vars.size() > 4) return false;
  for (unsigned iota = 1; iota < (1u << vars.size()); ++iota) {
    NarrowLaneWalk w{f_, vars, iota, {}};
    uint32_t step = 0;
    if (!w.step(checked, 0, step) || step != bytes) continue;
    m.narrow_iota.clear();
    m.narrow_same.clear();
    for (size_t k = 0; k < vars.size(); ++k) ((iota >> k) & 1 ? m.narrow_iota : m.narrow_same).push_back(vars[k]);
    std::sort(w.wraps.begin(), w.wraps.end());
    w.wraps.erase(std::unique(w.wraps.begin(), w.wraps.end()), w.wraps.end());
    m.narrow_wraps = std::move(w.wraps);
    return true;
  }
  return false;
}

// Once per call (the prologue's part the warp loop's later warps skip):
// each flag of plan_lane_run_flags. Uses rax, rcx, rdx, r8..r11, vectors
// 0..2 (k2 on AVX-512).
void Emitter::emit_lane_run_flags() {
  if (lane_run_flags_.empty() && narrow_run_flags_.empty()) return;
  // Flag 0 and an empty range (lo = hi = 2^63 - 1: no window's Hi reaches
  // it) for every call; a warp-loop call then looks at its descriptor.
  mov(rax, INT64_MAX);
  for (const auto& [var, off] : lane_run_flags_) {
    mov(dword[r12 + off], 0);
    mov(qword[r12 + off + 8], rax);
    mov(qword[r12 + off + 16], rax);
  }
  for (const NarrowRunFlag& nf : narrow_run_flags_) mov(dword[r12 + nf.off], 0);
  if (!warp_loop_) return;
  iota32();
  Label single;
  mov(r11, qword[rsp + kWarpLoopOffset]);
  test(r11, r11);
  jz(single, T_NEAR);  // a single-warp run
  test(r11b, 1);
  jnz(single, T_NEAR);  // a draw-loop call (draw_loop.cpp)
  for (const auto& [var, off] : lane_run_flags_) {
    emit_var_entry_scan(var_offsets_[uint32_t(var)], true, off, off + 4);
    if (var == lane0_var_ && lane0_loop()) {
      // The loop's later warps write lane 0 of the var alone: the entry's
      // place as the loop's countdown of entries (nvars - place).
      Label not_iota;
      cmp(dword[r12 + off], 0);
      je(not_iota, T_NEAR);
      mov(eax, dword[r11 + int(offsetof(WarpLoop, nvars))]);
      sub(eax, dword[r12 + off + 4]);
      if (!touches_shared_memory()) {
        // The var is the descriptor's only entry and no var range is
        // zeroed per warp: -1, the loop's short way (warp_loop.cpp).
        Label general;
        cmp(dword[r11 + int(offsetof(WarpLoop, nvars))], 1);
        jne(general, T_NEAR);
        cmp(dword[r11 + int(offsetof(WarpLoop, nzero))], 0);
        jne(general, T_NEAR);
        emit_short_way_frame();
        mov(eax, -1);
        L(general);
      }
      // As the loop's bit mask: 1 << c (c < 32), or bit 0 and bit 1 for the
      // short way (the only entry: c = 1).
      Label bit, no_bit;
      cmp(eax, -1);
      jne(bit, T_NEAR);
      or_(dword[rsp + kLoopLane0Offset], 3);
      jmp(no_bit, T_NEAR);
      L(bit);
      cmp(eax, 32);
      jae(no_bit, T_NEAR);
      bts(dword[rsp + kLoopLane0Offset], eax);
      L(no_bit);
      L(not_iota);
    }
    // The call's range of lane 0's index: every warp's x_0 = (u32) its base
    // (lane_add[0] = 0), as a signed dword; [lo, hi + 31] when every x_0 is
    // at most 2^31 - 32 (each warp's lanes x_0 .. x_0 + 31 do not wrap),
    // else the empty range written above. An access whose window holds the whole
    // range for its base moves every warp of the call without a check.
    Label warps, ranged;
    cmp(dword[r12 + off], 0);
    je(ranged, T_NEAR);
    mov(ecx, dword[r11 + int(offsetof(WarpLoop, end_warp))]);
    sub(ecx, dword[r11 + int(offsetof(WarpLoop, first_warp))]);
    jbe(ranged, T_NEAR);  // no warp
    mov(eax, dword[r12 + off + 4]);
    mov(rdx, qword[r11 + int(offsetof(WarpLoop, bases))]);
    lea(rdx, ptr[rdx + rax * 8]);
    mov(r10d, dword[r11 + int(offsetof(WarpLoop, nvars))]);
    shl(r10, 3);  // bytes between two warps' bases
    mov(r8, INT64_MAX);
    mov(r9, INT64_MIN);
    // One lane var (the bases are consecutive qwords, the dword of each the
    // warp's x_0): four warps per step, dword min / max over the 8 dwords
    // of 4 qwords; only the even dwords (the bases' low halves) are read
    // at the end. Then the scalar steps for what is left (0..3 warps, or
    // every warp of a descriptor with more vars).
    Label scanned;
    cmp(r10d, 8);
    jne(warps, T_NEAR);
    cmp(ecx, 4);
    jb(warps, T_NEAR);
    mov(eax, 0x7fffffff);
    vmovd(Xmm(0), eax);
    vpbroadcastd(Ymm(0), Xmm(0));  // lowest so far: INT32_MAX
    vpcmpeqd(Ymm(1), Ymm(1), Ymm(1));
    vpxor(Ymm(1), Ymm(1), Ymm(0));  // highest so far: INT32_MIN
    sub(ecx, 4);
    Label quads;
    L(quads);
    vpminsd(Ymm(0), Ymm(0), ptr[rdx]);
    vpmaxsd(Ymm(1), Ymm(1), ptr[rdx]);
    add(rdx, 32);
    sub(ecx, 4);
    jae(quads, T_NEAR);
    add(ecx, 4);  // the warps left: 0..3
    for (int k = 0; k < 2; ++k) {  // dwords 0, 2 of each half, then across
      vpshufd(Ymm(k), Ymm(k), 0x88);
      vextracti128(Xmm(2), Ymm(k), 1);
      if (k == 0) vpminsd(Xmm(k), Xmm(k), Xmm(2));
      else vpmaxsd(Xmm(k), Xmm(k), Xmm(2));
      vpshufd(Xmm(2), Xmm(k), 0x55);
      if (k == 0) vpminsd(Xmm(k), Xmm(k), Xmm(2));
      else vpmaxsd(Xmm(k), Xmm(k), Xmm(2));
      vmovd(eax, Xmm(k));
      movsxd(k == 0 ? r8 : r9, eax);
    }
    test(ecx, ecx);
    jz(scanned, T_NEAR);
    L(warps);
    movsxd(rax, dword[rdx]);
    cmp(rax, r8);
    cmovl(r8, rax);
    cmp(rax, r9);
    cmovg(r9, rax);
    add(rdx, r10);
    sub(ecx, 1);
    jnz(warps, T_NEAR);
    L(scanned);
    cmp(r9, 0x7fffffe0);
    jg(ranged, T_NEAR);
    add(r9, 31);
    mov(qword[r12 + off + 8], r8);
    mov(qword[r12 + off + 16], r9);
    L(ranged);
  }
  // The narrow proofs: every var of the set written as its proof needs.
  // Per var k (iota first), where its base lies from the next warp's bases
  // ([rsp + kLoopBasesOffset] while a warp runs: (place - nvars) * 8) and
  // its lane_add[0], for the index segments' lane 0 (plan_index_segments).
  for (const NarrowRunFlag& nf : narrow_run_flags_) {
    Label fail;
    int k = 0;
    for (int iota = 1; iota >= 0; --iota)
      for (int var : iota ? nf.iota : nf.same) {
        const int32_t place = nf.off + 8 + 8 * k, add0 = place + 4;
        emit_var_entry_scan(var_offsets_[uint32_t(var)], iota, nf.off + 4, place, add0);
        cmp(dword[r12 + nf.off + 4], 0);
        je(fail, T_NEAR);
        mov(eax, dword[r12 + place]);
        sub(eax, dword[r11 + int(offsetof(WarpLoop, nvars))]);
        shl(eax, 3);
        mov(dword[r12 + place], eax);
        ++k;
      }
    mov(dword[r12 + nf.off], 1);
    // The index segments' lane-0 vars of this record: the loop writes lane
    // 0 alone from the next warp on (lane_add[0] = 0: lane 0 is the base).
    if (lane0_loop()) {
      int k = 0;
      for (int iota = 1; iota >= 0; --iota)
        for (int var : iota ? nf.iota : nf.same) {
          const int32_t place = nf.off + 8 + 8 * k++;
          if (std::find(index_lane0_vars_.begin(), index_lane0_vars_.end(), var) == index_lane0_vars_.end()) continue;
          Label skip;
          cmp(dword[r12 + place + 4], 0);
          jne(skip, T_NEAR);
          mov(eax, dword[r12 + place]);
          neg(eax);
          shr(eax, 3);  // the countdown value nvars - place
          cmp(eax, 32);
          jae(skip, T_NEAR);
          bts(dword[rsp + kLoopLane0Offset], eax);
          L(skip);
        }
      if (index_tight_ok_ && !touches_shared_memory()) {
        // Every entry a lane-0 var (bits 1..nvars), no var range zeroed:
        // the loop's short way (bit 0), which writes no var of ours.
        Label no_tight;
        mov(ecx, dword[r11 + int(offsetof(WarpLoop, nvars))]);
        cmp(ecx, 30);
        ja(no_tight, T_NEAR);
        mov(eax, 2);
        shl(eax, cl);
        sub(eax, 2);  // bits 1..nvars
        mov(edx, dword[rsp + kLoopLane0Offset]);
        and_(edx, eax);
        cmp(edx, eax);
        jne(no_tight, T_NEAR);
        cmp(dword[r11 + int(offsetof(WarpLoop, nzero))], 0);
        jne(no_tight, T_NEAR);
        emit_short_way_frame();
        or_(dword[rsp + kLoopLane0Offset], 1);
        L(no_tight);
      }
    }
    L(fail);
  }
  L(single);
}

// What the loop's short way reads per warp instead of the descriptor
// (emitter.h, kLoopBasesEndOffset): the end of the call's bases, the first
// entry's var offset and the bases' step, 8 nvars (G13's one lane-0 var: 8;
// Tesla's index-segment vars: every entry of the descriptor).
void Emitter::emit_short_way_frame() {
  mov(ecx, dword[r11 + int(offsetof(WarpLoop, nvars))]);
  shl(ecx, 3);
  mov(dword[rsp + kLoopBasesStepOffset], ecx);
  mov(eax, dword[r11 + int(offsetof(WarpLoop, end_warp))]);
  sub(eax, dword[r11 + int(offsetof(WarpLoop, first_warp))]);
  imul(rax, rcx);
  add(rax, qword[r11 + int(offsetof(WarpLoop, bases))]);
  mov(qword[rsp + kLoopBasesEndOffset], rax);
  mov(rax, qword[r11 + int(offsetof(WarpLoop, vars))]);
  mov(eax, dword[rax + int(offsetof(LaneVarInit, offset))]);
  mov(dword[rsp + kLoopLane0VarOffset], eax);
}

const uint8_t* Emitter::iota32() {
  if (!iota32_) {
    uint8_t* p = pool_.alloc(4 * kWarpLanes);
    for (uint32_t i = 0; i < kWarpLanes; ++i) std::memcpy(p + 4 * i, &i, 4);
    iota32_ = p;
  }
  return iota32_;
}

// Eighteenth session. G13's thread index var was written for all 32 lanes
// per warp by the warp loop (two / four vector stores and a broadcast) and
// read by the accesses' run-flag paths as lane 0 only: the read waited on
// the vector store (no forwarding from it to a scalar load here), and the
// stores cost a share of the warp's store slots. A var qualifies when it is
// the index var of run-flag accesses only: every load_var of it is deferred
// (no strip reads it) and is the index of a non-narrow access with a run
// flag (plan_lane_run_flags); then its lanes are read only by those
// accesses' other paths, each of which restores them first.
bool Emitter::lane0_vars_enabled() {
  static const bool yes = env_switch_on("GPURC_LANE0_VARS");
  return yes;
}

void Emitter::plan_lane0_var() {
  if (!lane0_vars_enabled()) return;
  for (const auto& [var, off] : lane_run_flags_) {
    bool ok = true;
    for (ValueId v = 0; v < f_.insts.size() && ok; ++v) {
      const Inst& in = f_.insts[v];
      if (in.block == kNoBlock || in.op != Opcode::LoadVar || in.imm != uint64_t(var)) continue;
      ok = deferred_[v] != 0;
    }
    bool any = false;
    for (const auto& [v, m] : indexed_) {
      if (m.index_var != var) continue;
      any = true;
      if (m.narrow || m.run_flag != off) ok = false;
    }
    // Every load_var of the var is some such access's index (deferred values
    // are computed only by the fallbacks of the accesses whose trees hold them).
    for (ValueId v = 0; v < f_.insts.size() && ok; ++v) {
      const Inst& in = f_.insts[v];
      if (in.block == kNoBlock || in.op != Opcode::LoadVar || in.imm != uint64_t(var)) continue;
      ok = std::any_of(indexed_.begin(), indexed_.end(),
                       [&](const auto& e) { return e.second.index == v && e.second.index_var == var; });
    }
    if (ok && any) {
      lane0_var_ = var;
      lane0_flag_ = off;
      return;
    }
  }
}

// Before a path of access `a` that reads more than lane 0 of its index var:
// when the call's descriptor writes the lane-0 var as base + lane (its run
// flag), lanes 0..31 = lane 0 + l, what the loop would have written. Vector
// registers 0, 1 (the register cache is empty between segments).
void Emitter::lane0_restore(const IndexedAddress& a) {
  if (a.index_var < 0 || a.index_var != lane0_var_ || !lane0_loop()) return;
  const uint32_t off = var_offsets_[uint32_t(lane0_var_)];
  Label written;
  cmp(dword[r12 + lane0_flag_], 0);
  je(written, T_NEAR);
  vpbroadcastd(V(1), dword[r13 + int(off)]);
  for (int o = 0; o < 4 * kWarpLanes; o += vbytes_) {
    vpaddd(V(0), V(1), ptr[rip + iota32() + o]);
    vstore(ptr[r13 + int(off + uint32_t(o))], 0);
  }
  L(written);
}

// CF set when the 32 dwords of lane_add at r8 are 0..31 (iota) or all equal
// to the first (alike in every lane). Vectors 0..2 (k2, k3 on AVX-512).
void Emitter::emit_lane_add_test(bool iota) {
  if (z_) {
    vmovdqu32(Zmm(0), ptr[r8]);
    vmovdqu32(Zmm(1), ptr[r8 + 64]);
    if (iota) {
      vpcmpeqd(k2, Zmm(0), ptr[rip + iota32_]);
      vpcmpeqd(k3, Zmm(1), ptr[rip + iota32_ + 64]);
    } else {
      vpbroadcastd(Zmm(2), ptr[r8]);
      vpcmpeqd(k2, Zmm(0), Zmm(2));
      vpcmpeqd(k3, Zmm(1), Zmm(2));
    }
    kandw(k2, k2, k3);
    kortestw(k2, k2);  // CF: all 16 bits set
    return;
  }
  if (!iota) vpbroadcastd(Ymm(2), ptr[r8]);
  vmovdqu(Ymm(0), ptr[r8]);
  if (iota) vpcmpeqd(Ymm(0), Ymm(0), ptr[rip + iota32_]);
  else vpcmpeqd(Ymm(0), Ymm(0), Ymm(2));
  for (int o = 32; o < 4 * kWarpLanes; o += 32) {
    vmovdqu(Ymm(1), ptr[r8 + o]);
    if (iota) vpcmpeqd(Ymm(1), Ymm(1), ptr[rip + iota32_ + o]);
    else vpcmpeqd(Ymm(1), Ymm(1), Ymm(2));
    vpand(Ymm(0), Ymm(0), Ymm(1));
  }
  vpcmpeqd(Ymm(2), Ymm(2), Ymm(2));
  vptest(Ymm(0), Ymm(2));  // CF: every bit set
}

// The dword at r12 + verdict: 1 when the last entry of the warp loop's
// descriptor (r11) that touches the i32 var at var_off writes it whole
// (width 4, no lane_keep) with lane_add 0..31 (iota) or all lanes' lane_add
// equal; else 0 (no entry touches it, or a later one overlaps it). With
// `place` >= 0, the dword at r12 + place gets that entry's index in the
// loop's descriptor (its place among each warp's bases) when the verdict is
// 1. Uses rax, rcx, rdx, r8..r10, vectors 0..2.
void Emitter::emit_var_entry_scan(uint32_t var_off, bool iota, int32_t verdict, int32_t place, int32_t lane_add0) {
  Label scan, next, end;
  mov(dword[r12 + verdict], 0);
  mov(ecx, dword[r11 + int(offsetof(WarpLoop, nvars))]);
  mov(rdx, qword[r11 + int(offsetof(WarpLoop, vars))]);
  test(ecx, ecx);
  jz(end, T_NEAR);
  L(scan);  // in the loop's order: a later entry overwrites an earlier one
  mov(r9d, dword[rdx + int(offsetof(LaneVarInit, offset))]);
  cmp(r9d, var_off + 4 * kWarpLanes);
  jae(next, T_NEAR);
  mov(r10d, dword[rdx + int(offsetof(LaneVarInit, width))]);
  shl(r10, 5);
  add(r10, r9);
  cmp(r10, var_off);
  jbe(next, T_NEAR);  // [offset, offset + 32 * width) misses the var
  mov(dword[r12 + verdict], 0);
  cmp(r9d, var_off);
  jne(next, T_NEAR);
  cmp(dword[rdx + int(offsetof(LaneVarInit, width))], 4);
  jne(next, T_NEAR);
  cmp(qword[rdx + int(offsetof(LaneVarInit, lane_keep))], 0);
  jne(next, T_NEAR);
  mov(r8, qword[rdx + int(offsetof(LaneVarInit, lane_add))]);
  emit_lane_add_test(iota);
  jnc(next, T_NEAR);
  mov(dword[r12 + verdict], 1);
  if (place >= 0) {
    mov(eax, dword[r11 + int(offsetof(WarpLoop, nvars))]);
    sub(eax, ecx);
    mov(dword[r12 + place], eax);
  }
  if (lane_add0 >= 0) {  // (r8: the entry's lane_add)
    mov(eax, dword[r8]);
    mov(dword[r12 + lane_add0], eax);
  }
  L(next);
  add(rdx, int(sizeof(LaneVarInit)));
  sub(ecx, 1);
  jnz(scan, T_NEAR);
  L(end);
}

// Accesses (and whole-warp votes) with the same mask operand see the same
// taking-part lanes (mask lanes AND ctx.entry_mask; SSA values do not
// change). Tesla's loads of x[i] and y[i] and the MAD's any() vote all read
// the bound check's mask: the first access converts it (18 instructions on
// AVX2) and stores the lane bits; the others it dominates (same block after
// it, or a dominated block, in reverse post-order) read one dword. The
// owner stores them on every run, before anything can skip it, so a reader
// always finds this run's value. An entry_mask operand is read from the
// context already and needs no cache.
void Emitter::plan_mask_cache() {
  const std::vector<BlockId> rpo = passutil::reverse_post_order(f_);
  const std::vector<BlockId> idom = passutil::immediate_dominators(f_, rpo);
  std::map<ValueId, std::vector<ValueId>> owners;  // mask value -> accesses that convert it
  auto dominating_owner = [&](ValueId mask, BlockId bid) { return last_dominating(f_, idom, owners[mask], bid); };
  auto cache_of = [&](ValueId owner) {
    IndexedAddress& o = indexed_.at(owner);
    return owned_cache_slot(o.mask_cache, o.mask_owner, frame_bytes_);
  };
  for (BlockId bid : rpo)
    for (ValueId v : f_.blocks[bid].insts) {
      const Inst& in = f_.insts[v];
      if (in.args.empty()) continue;
      const ValueId mask = in.args.back();
      if (f_.insts[mask].op == Opcode::EntryMask) continue;
      if (auto it = indexed_.find(v); it != indexed_.end()) {
        const ValueId o = dominating_owner(mask, bid);
        if (o == kNoValue) owners[mask].push_back(v);
        else it->second.mask_cache = cache_of(o);
        continue;
      }
      // emit_vote's operands: a 32-bit predicate and mask, a 32-bit result.
      if ((in.op == Opcode::Any || in.op == Opcode::All || in.op == Opcode::Ballot) && in.args.size() == 2 &&
          !wide(in.args[0]) && !wide(mask) && !wide(v) && valid_cluster_imm(in.imm))
        if (const ValueId o = dominating_owner(mask, bid); o != kNoValue) vote_mask_cache_[v] = cache_of(o);
    }
}

// ecx = the lanes taking part in access `a` with mask operand `mask`, ZF
// set when there is none: from ctx.entry_mask, from the mask cache of a
// dominating access, or converted from the mask's slot (and then stored to
// the cache when this access owns one).
void Emitter::taking_part_lanes(const IndexedAddress& a, ValueId mask) {
  if (f_.insts[mask].op == Opcode::EntryMask) {  // the launched lanes (G13's exec without exec stack)
    mov(ecx, dword[CTX(entry_mask)]);
    test(ecx, ecx);
    return;
  }
  if (a.mask_cache >= 0 && !a.mask_owner) {
    mov(ecx, dword[r12 + a.mask_cache]);
    test(ecx, ecx);
    return;
  }
  Label converted;
  if (const IndexSegment* is = proven_compare(mask_lanes_value(mask))) {
    // This warp's index segment decided the compare for all 32 lanes
    // (proven dword 2: true in every lane): the lanes are the entry mask,
    // with no read of the compare's slot just written by vector stores.
    // (1: false in every lane, no lane; the slot may not be written.)
    Label convert, all_true;
    cmp(dword[r12 + is->proven], 2);
    je(all_true, T_NEAR);
    cmp(dword[r12 + is->proven], 1);
    jne(convert, T_NEAR);
    xor_(ecx, ecx);  // (ZF set)
    jmp(converted, T_NEAR);
    L(all_true);
    mov(ecx, dword[CTX(entry_mask)]);
    test(ecx, ecx);
    jmp(converted, T_NEAR);
    L(convert);
  }
  lane_bits(ecx, slot(mask_lanes_value(mask)), true);  // (a bound check: all ones but in a last warp)
  and_(ecx, dword[CTX(entry_mask)]);
  L(converted);
  if (a.mask_owner) mov(dword[r12 + a.mask_cache], ecx);  // keeps the flags
}

bool Emitter::lazy_lanes_enabled() {
  static const bool yes = env_switch_on("GPURC_INDEX_LAZY_LANES");
  return yes;
}

const Emitter::IndexSegment* Emitter::lazy_lanes(ValueId v, uint32_t& step) const {
  if (plan_.segment_of[v] < 0) return nullptr;
  const uint32_t seg = uint32_t(plan_.segment_of[v]);
  auto it = index_segments_.find(seg);
  if (it == index_segments_.end() ||
      std::find(index_emitted_.begin(), index_emitted_.end(), seg) == index_emitted_.end())
    return nullptr;
  const IndexSegment& is = it->second;
  for (size_t k = 0; k < is.ops.size(); ++k)
    if (is.ops[k] == v && is.lazy[k]) {
      step = is.steps[k];
      return &is;
    }
  return nullptr;
}

// When this warp's lane-0 version ran (proven dword nonzero), v's slot holds
// lane 0 alone: write lanes 0..31 as lane 0 + step * l. Uses eax, V(0), V(1).
void Emitter::rebuild_lazy_lanes(const IndexSegment& is, ValueId v, uint32_t step) {
  Label written;
  cmp(dword[r12 + is.proven], 0);
  je(written, T_NEAR);
  mov(eax, dword[r12 + int(slot(v))]);
  bcast_gpr(1, eax);
  for (int o = 0; o < 4 * kWarpLanes; o += vbytes_) {
    vpaddd(V(0), V(1), ptr[rip + step_vector(step) + o]);
    vstore(ptr[r12 + int(slot(v) + uint32_t(o))], 0);
  }
  L(written);
}

// The decided compare c's slot when its segment writes it lazily (the
// proven dword nonzero): every lane 1 + outcome - 1. Uses eax, V(1).
void Emitter::rebuild_lazy_compare(ValueId c) {
  const IndexSegment* is = proven_compare(c);
  if (!is || !is->lazy[size_t(is->decided_cmp)]) return;
  Label written;
  mov(eax, dword[r12 + is->proven]);
  sub(eax, 1);
  jb(written, T_NEAR);  // 0: the strips wrote it
  bcast_gpr(1, eax);
  for (int o = 0; o < 4 * kWarpLanes; o += vbytes_) vstore(ptr[r12 + int(slot(c) + uint32_t(o))], 1);
  L(written);
}

const Emitter::IndexSegment* Emitter::proven_compare(ValueId c) const {
  if (f_.insts[c].op != Opcode::ICmp || plan_.segment_of[c] < 0) return nullptr;
  const uint32_t seg = uint32_t(plan_.segment_of[c]);
  auto it = index_segments_.find(seg);
  if (it == index_segments_.end() || it->second.decided_cmp < 0 || it->second.ops[size_t(it->second.decided_cmp)] != c ||
      std::find(index_emitted_.begin(), index_emitted_.end(), seg) == index_emitted_.end())
    return nullptr;
  return &it->second;
}

// Accesses with the same index value, mask value and element step (G13's
// `a[i]`, `b[i]`, `c[i]`; Tesla's load and store of `y[i]`, on both sides of
// the MAD's block split) see the same index lanes and the same taking-part
// lanes, so the consecutive-index check of the first holds for a later one
// that it dominates (an earlier op of the same block, or of a dominating
// block): SSA values do not change once defined, an index read from a var
// has no store_var, and every path to the later op passes the first one
// after the operands' definitions (in a loop too: a dominator inside the
// loop runs on every iteration's path from the header to the later op).
// The first one writes its outcome to a frame cache before anything else,
// on every run of its block; the later ones read it.
void Emitter::plan_sequence_cache() {
  const std::vector<BlockId> rpo = passutil::reverse_post_order(f_);
  const std::vector<BlockId> idom = passutil::immediate_dominators(f_, rpo);
  std::map<std::tuple<ValueId, ValueId, bool, int, uint32_t>, std::vector<ValueId>> seen, members_of;  // owners so far
  for (BlockId bid : rpo)
    for (ValueId v : f_.blocks[bid].insts) {
      auto it = indexed_.find(v);
      if (it == indexed_.end()) continue;
      IndexedAddress& m = it->second;
      const Inst& in = f_.insts[v];
      const bool is_load = in.op == Opcode::Load;
      const unsigned bytes = bit_width(is_load ? in.type : f_.insts[in.args[1]].type) / 8;
      if ((bytes != 4 && bytes != 8) || (1u << m.shift) != bytes) continue;  // no consecutive check
      // The value checked (x, or s of x = u + s); an addend form and a plain
      // one of the same value do not share (the plain one's owner tests its
      // value's alignment, the addend one the sum's).
      const ValueId checked = m.seq_index != kNoValue ? m.seq_index : m.index;
      const auto key = std::make_tuple(checked, in.args.back(), m.narrow, int(m.shift) | (m.seq_index != kNoValue) << 8,
                                       m.align_mask);
      auto& owners = seen[key];
      auto& members = members_of[key];  // owners and readers, in reverse post-order
      const ValueId found = last_dominating(f_, idom, owners, bid);
      members.push_back(v);
      if (found == kNoValue) {
        owners.push_back(v);
        continue;
      }
      IndexedAddress& owner = indexed_.at(found);
      m.seq_cache = owned_cache_slot(owner.seq_cache, owner.seq_owner, frame_bytes_);
      // The same address value and size as an earlier access of this check
      // that dominates it: the same window, the same host span (the lanes
      // are the check's). That access owns the host pointer's cache.
      if (!m.narrow) continue;
      for (ValueId o : members) {
        if (o == v) break;
        const Inst& oi = f_.insts[o];
        const unsigned obytes = bit_width(oi.op == Opcode::Load ? oi.type : f_.insts[oi.args[1]].type) / 8;
        if (oi.args[0] != in.args[0] || obytes != bytes) continue;
        if (!(oi.block == bid || passutil::dominates(idom, oi.block, bid))) continue;
        IndexedAddress& ho = indexed_.at(o);
        m.host_cache = owned_cache_slot(ho.host_cache, ho.host_owner, frame_bytes_);
        m.host_reuse = true;
        break;
      }
    }
}

void Emitter::materialize_deferred(const std::vector<ValueId>& values) {
  if (values.empty()) return;
  // Emitted on a conditional path: its uniform tests prove nothing for later code.
  const bool in_body = in_segment_body_;
  in_segment_body_ = false;
  struct Restore {
    bool& flag;
    bool value;
    ~Restore() { flag = value; }
  } restore{in_segment_body_, in_body};
  // A strip loop over the deferred values (64-bit ones: each lowering
  // stores its halves to the value's slot; 32-bit ones are stored below),
  // like a strip segment of their own.
  Label loop;
  xor_(r14d, r14d);
  L(loop);
  reset_cache();
  for (ValueId v : values) {
    const bool was_in_frame = vals_[v].in_frame;
    if (!lower_native(v)) lower_helper(v);
    for (int r = 0; r < nregs_; ++r) regs_[r].locked = false;
    if (!deferred_[v]) {  // a constant computed again: its own definition keeps its state
      if (!wide(v) && vals_[v].reg >= 0) vstore(strip_mem(v), vals_[v].reg);
      vals_[v].in_frame = was_in_frame;
      continue;
    }
    // A 32-bit value (a narrow address's alignment test) is in a register:
    // its slot is what the next values may reload and the helper reads.
    if (!wide(v) && vals_[v].reg >= 0 && !vals_[v].in_frame) {
      vstore(strip_mem(v), vals_[v].reg);
      vals_[v].in_frame = true;
    }
  }
  reset_cache();
  add(r14d, vbytes_);
  cmp(r14d, kWarpLanes * 4);
  jb(loop, T_NEAR);
}

void Emitter::emit_base_gpr(ValueId v, int depth) {
  static const Reg64 regs[kMaxBaseDepth + 1] = {rax, rdx, rsi, rdi};
  const Inst& in = f_.insts[v];
  const Reg64& r = regs[depth];
  if (in.op == Opcode::Const) {
    mov(r, in.imm);
    return;
  }
  if (in.op == Opcode::LoadUniform) {
    mov(r, qword[r15 + int(in.imm)]);
    return;
  }
  emit_base_gpr(in.args[0], depth);
  emit_base_gpr(in.args[1], depth + 1);
  const Reg64& b = regs[depth + 1];
  switch (in.op) {
    case Opcode::And: and_(r, b); break;
    case Opcode::Or: or_(r, b); break;
    case Opcode::Xor: xor_(r, b); break;
    case Opcode::IAdd: add(r, b); break;
    default: sub(r, b); break;  // ISub (is_base_op)
  }
}

// Registers: ecx = lanes taking part, r10 = base, r11 = the window tried,
// r8 = its host pointer (then host + d), r9 = d, eax / edx = Lo / Hi.
// Vector registers 0..5 are scratch (the register cache is empty between
// segments); the AVX-512 general path below uses zmm6..9 the same way.
bool Emitter::call_spans_enabled() {
  static const bool yes = env_switch_on("GPURC_CALL_SPANS");
  return yes;
}

// The accesses that may keep a call span (emitter.h): the consecutive
// path with a run flag and a window cache (so the call-wide host + d of
// [win_cache + 24] exists), and the entry mask as the mask, whose lanes are
// ctx.entry_mask, the same for every warp of a call.
bool Emitter::call_span_ok(ValueId v, const IndexedAddress& a) const {
  if (!call_spans_enabled() || a.narrow || a.run_flag < 0 || a.win_cache < 0) return false;
  const Inst& in = f_.insts[v];
  const unsigned bytes = bit_width(in.op == Opcode::Load ? in.type : f_.insts[in.args[1]].type) / 8;
  if ((bytes != 4 && bytes != 8) || (1u << a.shift) != bytes) return false;
  return f_.insts[in.args.back()].op == Opcode::EntryMask;
}

// A homed load of the probed store's segment whose overlap with the store
// is decided once per call: both on call spans with the same index var and
// scale, so in every warp S - L = (host + d of the store) - (the load's).
// The load runs before the probe in each warp; its call span, once set,
// stays for the call, so it moved from it in every warp after the store's
// was set. Else null: the probe tests it per warp.
const Emitter::IndexedAddress* Emitter::probe_load_on_span(ValueId l) const {
  auto li = indexed_.find(l);
  if (li == indexed_.end() || !call_span_ok(l, li->second)) return nullptr;
  const IndexedAddress& st = indexed_.at(store_probe_->store);
  if (li->second.index_var != st.index_var || li->second.shift != st.shift || li->second.disp != st.disp) return nullptr;
  return &li->second;
}

// A reader of a sequence cache (an access after its owner, the same index
// and mask): when the owner's call span is set, the owner moved from it in
// this warp and wrote no cache (a store per field and warp, which bounded
// G13 `memory`'s warp on this host); its verdict is then known: every lane
// takes part (the span is set only with ctx.entry_mask all ones, the same
// for the whole call) and b is lane 0 of the owner's index var (base +
// lane, which no store_var writes). Jumps to `have` with ecx and rsi as the
// cache would give them; falls through to the cache otherwise.
void Emitter::seq_reader_on_owner_span(const IndexedAddress& a, Label& have) {
  const IndexedAddress* owner = nullptr;
  ValueId owner_v = kNoValue;
  for (const auto& [ov, om] : indexed_)
    if (om.seq_owner && om.seq_cache == a.seq_cache) {
      owner = &om;
      owner_v = ov;
      break;
    }
  if (!owner || !call_span_ok(owner_v, *owner) || owner->index_var < 0) return;
  Label from_cache;
  cmp(qword[r12 + owner->win_cache + kCallSpanOffset], 0);
  je(from_cache, T_NEAR);
  mov(ecx, uint32_t(-1));
  movsxd(rsi, dword[r13 + int(var_offsets_[uint32_t(owner->index_var)])]);
  jmp(have, T_NEAR);
  L(from_cache);
}

void Emitter::emit_indexed_fast(ValueId v, const IndexedAddress& a, Label& done, Label& general) {
  const Inst& in = f_.insts[v];
  bool is_load = in.op == Opcode::Load;
  ir::Type data_t = is_load ? in.type : f_.insts[in.args[1]].type;
  unsigned bytes = bit_width(data_t) / 8;
  const Reg64 index_base = a.index_var >= 0 ? r13 : r12;  // ctx.vars or the frame
  const uint32_t index_slot = a.index_var >= 0 ? var_offsets_[uint32_t(a.index_var)] : slot(a.index);
  const uint32_t data_slot = is_load ? slot(v) : slot(in.args[1]);
  const int scale = 1 << a.shift;
  const WindowOffsets windows = window_offsets(in.attr);
  Label try_window, next_window, inside;

  const bool sequential = (bytes == 4 || bytes == 8) && scale == int(bytes);
  auto emit_base = [&] {
    if (a.reads_uniforms) {
      test(r15, r15);
      jz(general, T_NEAR);  // the load_uniform faults there (or already did)
    }
    emit_base_gpr(a.base, 0);
    mov(r10, rax);
    if (a.disp) {  // the constant of the scaled part belongs to the base (mod 2^64)
      mov(rax, a.disp);
      add(r10, rax);
    }
  };
  const bool call_span = call_span_ok(v, a);
  if (call_span) {
    // The call span (set below by this call's first search that found the
    // whole call's range in a window with all lanes launched): every lane
    // takes part (ecx = ctx.entry_mask = all ones for the whole call),
    // x_l = x_0 + l, and the window holds every warp's span. What the other
    // paths leave for later accesses is written as they write it.
    Label per_warp;
    mov(r8, qword[r12 + a.win_cache + kCallSpanOffset]);
    test(r8, r8);
    jz(per_warp, T_NEAR);
    // (No ecx: the moves below take every lane without a lane test, and
    // nothing after `done` reads it, as on Avx2's paths.)
    if (a.mask_owner) mov(dword[r12 + a.mask_cache], uint32_t(-1));
    movsxd(rdi, dword[index_base + int(index_slot)]);
    // (No sequence cache: its readers take x_0 from the var while this
    // access's call span is set, seq_reader_on_owner_span.)
    lea(rsi, ptr[r8 + rdi * scale]);
    store_probe_direct_ = store_probe_ != nullptr;
    span_all_lanes_ = true;
    emit_span_moves(is_load, bytes, data_slot, done);
    span_all_lanes_ = false;
    store_probe_direct_ = false;
    L(per_warp);
  }
  Label full_check, seq_checked;
  const bool reuse = sequential && a.seq_cache >= 0 && !a.seq_owner;
  if (reuse) {  // an earlier access of this block found these lanes consecutive: ecx and b from its cache
    Label have_lanes;
    seq_reader_on_owner_span(a, have_lanes);
    mov(ecx, dword[r12 + a.seq_cache + 8]);
    test(ecx, ecx);
    jz(full_check, T_NEAR);
    mov(rsi, qword[r12 + a.seq_cache]);
    L(have_lanes);
    if (a.mask_owner) mov(dword[r12 + a.mask_cache], ecx);  // the same lanes (same mask value)
    if (a.run_flag >= 0 && a.win_cache >= 0) {  // a window holds every warp's span of the call (below)
      mov(r8, qword[r12 + a.win_cache + 24]);
      test(r8, r8);
      jz(seq_checked, T_NEAR);
      lea(rsi, ptr[r8 + rsi * scale]);
      emit_span_moves(is_load, bytes, data_slot, done);
    } else {
      jmp(seq_checked, T_NEAR);
    }
    L(full_check);
  }
  if (sequential && a.seq_owner) mov(dword[r12 + a.seq_cache + 8], 0);
  taking_part_lanes(a, in.args.back());
  no_lane_exit(a, done, general);
  // The base (r10) is computed where a window search needs it: a span
  // found in the window cache needs none.
  if (!sequential) emit_base();
  // Consecutive indices x_l = b + l over the taking-part lanes (AVX2: all
  // 32 lanes), with b .. b + 31 inside the int32 range (so the dword compare
  // is exact and zext / sext of every x_l is b + l as a signed qword): found
  // first, since then the window check is two scalar compares, of the first
  // and the last taking-part lane's index against Lo / Hi (as qwords: no
  // clamping to the int32 range), and the access is vector moves at
  // host + d + b * 2^s instead of gathers / scatters.
  Label scattered;
  if (sequential) {
    Label seq_try, seq_next;
    if (!z_) {
      cmp(ecx, uint32_t(-1));
      jne(scattered, T_NEAR);
    }
    if (a.run_flag >= 0 && a.win_cache >= 0) {
      // A window holds every warp's span of this call (set below by the
      // call's first search): b = x_0, no check.
      Label per_warp;
      mov(r8, qword[r12 + a.win_cache + 24]);
      test(r8, r8);
      jz(per_warp, T_NEAR);
      movsxd(rdi, dword[index_base + int(index_slot)]);
      if (a.seq_owner) {
        mov(qword[r12 + a.seq_cache], rdi);
        mov(dword[r12 + a.seq_cache + 8], ecx);
      }
      lea(rsi, ptr[r8 + rdi * scale]);
      emit_span_moves(is_load, bytes, data_slot, done);
      L(per_warp);
    }
    if (a.run_flag >= 0) {
      // The warp loop wrote the index var as x_0 + l in every lane
      // (plan_lane_run_flags): b = x_0, and b + 31 must not pass 2^31 - 1
      // (the signed range the qword bounds below assume), as the full check.
      Label full;
      cmp(dword[r12 + a.run_flag], 0);
      je(full, T_NEAR);
      movsxd(rsi, dword[index_base + int(index_slot)]);
      cmp(esi, 0x7fffffe0);
      jg(full, T_NEAR);
      if (a.seq_owner) {
        mov(qword[r12 + a.seq_cache], rsi);
        mov(dword[r12 + a.seq_cache + 8], ecx);
      }
      jmp(seq_checked, T_NEAR);
      L(full);
      lane0_restore(a);  // the lanes below
    }
    bsf(eax, ecx);
    movsxd(rsi, dword[index_base + rax * 4 + int(index_slot)]);
    sub(rsi, rax);  // b
    mov(edx, 0x80000000u);
    add(rdx, rsi);  // b + 2^31 in [0, 2^32 - 32]
    mov(eax, 0xffffffe0u);
    cmp(rdx, rax);
    ja(scattered, T_NEAR);
    lanes_in_sequence(index_slot, 4, 0, index_base, &scattered);  // (AVX2: all 32 lanes take part here)
    emit_sequence_verdict(a, scattered);
    L(seq_checked);
    mov(rdi, rsi);  // b
    bsr(eax, ecx);
    add(rsi, rax);  // the last taking-part lane's index
    const int32_t wc = a.win_cache;
    if (wc >= 0) {  // the window an earlier warp of this call found: host + d, Hi, Lo
      Label search;
      mov(r8, qword[r12 + wc]);
      test(r8, r8);
      jz(search, T_NEAR);  // none yet
      cmp(rsi, qword[r12 + wc + 8]);
      jg(search, T_NEAR);
      bsf(eax, ecx);
      add(rax, rdi);  // the first taking-part lane's index
      cmp(rax, qword[r12 + wc + 16]);
      jl(search, T_NEAR);
      lea(rsi, ptr[r8 + rdi * scale]);
      emit_span_moves(is_load, bytes, data_slot, done);
      L(search);
      mov(qword[r12 + wc], 0);  // filled again below only when a window holds this span
    }
    mov(r8, rsi);  // the base's evaluation may use rsi / rdi
    mov(r9, rdi);
    emit_base();
    mov(rsi, r8);
    mov(rdi, r9);
    lea(r11, ptr[rbx + int(windows.primary)]);
    L(seq_try);
    mov(r8, qword[r11 + int(offsetof(MemWindow, host))]);
    test(r8, r8);
    jz(general, T_NEAR);  // an empty window ends the list
    mov(rdx, qword[r11 + int(offsetof(MemWindow, size))]);
    sub(rdx, bytes);  // the highest offset an access may start at
    jb(seq_next, T_NEAR);
    mov(r9, r10);
    sub(r9, qword[r11 + int(offsetof(MemWindow, base))]);  // d = base - window base
    jb(seq_next, T_NEAR);
    cmp(r9, qword[r11 + int(offsetof(MemWindow, size))]);
    ja(seq_next, T_NEAR);  // d <= size (< 2^41): nothing below overflows
    sub(rdx, r9);
    if (a.shift) sar(rdx, a.shift);  // Hi = floor((size - bytes - d) / 2^s)
    cmp(rsi, rdx);
    jg(seq_next, T_NEAR);
    if (wc >= 0) mov(qword[r12 + wc + 8], rdx);
    bsf(eax, ecx);
    add(rax, rdi);  // the first taking-part lane's index
    if (a.sext) {
      mov(rdx, r9);
      if (a.shift) shr(rdx, a.shift);
      neg(rdx);  // Lo = -floor(d / 2^s)
      cmp(rax, rdx);
      jl(seq_next, T_NEAR);
      if (wc >= 0) mov(qword[r12 + wc + 16], rdx);
    } else {
      test(rax, rax);  // Lo = 0
      js(seq_next, T_NEAR);
      if (wc >= 0) mov(qword[r12 + wc + 16], 0);
    }
    add(r8, r9);
    if (wc >= 0) mov(qword[r12 + wc], r8);  // last: the cache is whole (host + d is never 0)
    if (wc >= 0 && a.run_flag >= 0) {
      // The call's whole index range (emit_lane_run_flags; empty unless the
      // loop writes the var as base + lane) inside [Lo, Hi]: every later
      // warp of the call moves from host + d straight away.
      Label not_all;
      mov(rax, qword[r12 + a.run_flag + 8]);
      cmp(rax, qword[r12 + wc + 16]);
      jl(not_all, T_NEAR);
      mov(rax, qword[r12 + a.run_flag + 16]);
      cmp(rax, qword[r12 + wc + 8]);
      jg(not_all, T_NEAR);
      mov(qword[r12 + wc + 24], r8);
      if (call_span) {
        // Every lane launched (the same for every warp of the call); a
        // store home's probe: no homed load of its segment overlaps the
        // store in any warp (both move from their call spans, S - L is the
        // difference of the two, tested as store_probe_take does per warp).
        cmp(ecx, uint32_t(-1));
        jne(not_all, T_NEAR);
        if (store_probe_ && !is_load)
          for (ValueId l : store_probe_->loads) {
            const IndexedAddress* la = probe_load_on_span(l);
            if (!la) continue;  // tested per warp
            mov(rax, qword[r12 + la->win_cache + kCallSpanOffset]);
            test(rax, rax);
            jz(not_all, T_NEAR);
            lea(rdx, ptr[r8 - 1]);
            sub(rdx, rax);
            cmp(rdx, int(kWarpLanes * 4 - 1));
            jb(not_all, T_NEAR);
          }
        mov(qword[r12 + wc + kCallSpanOffset], r8);
      }
      L(not_all);
    }
    lea(rsi, ptr[r8 + rdi * scale]);
    emit_span_moves(is_load, bytes, data_slot, done);
    L(seq_next);
    emit_next_window(windows, seq_try);
    jmp(general, T_NEAR);
  }
  L(scattered);
  if (store_probe_) {  // a store home's probe takes only the all-lanes span: the store runs at its place
    jmp(general, T_NEAR);
    return;
  }
  lane0_restore(a);  // the gathers and scalar steps read every lane's index
  if (sequential) emit_base();
  lea(r11, ptr[rbx + int(windows.primary)]);

  L(try_window);
  mov(r8, qword[r11 + int(offsetof(MemWindow, host))]);
  test(r8, r8);
  jz(general, T_NEAR);  // an empty window ends the list
  mov(rdx, qword[r11 + int(offsetof(MemWindow, size))]);
  sub(rdx, bytes);  // rdx = size - bytes: the highest offset an access may start at
  jb(next_window, T_NEAR);
  mov(r9, r10);
  sub(r9, qword[r11 + int(offsetof(MemWindow, base))]);  // d = base - window base
  jb(next_window, T_NEAR);
  cmp(r9, qword[r11 + int(offsetof(MemWindow, size))]);
  ja(next_window, T_NEAR);  // d <= size (< 2^41): the bounds below cannot overflow
  sub(rdx, r9);             // >= -8
  if (a.shift) sar(rdx, a.shift);
  mov(eax, 0x7fffffff);
  cmp(rdx, rax);
  cmovg(rdx, rax);  // Hi
  if (a.sext) {
    mov(rax, r9);
    if (a.shift) shr(rax, a.shift);
    neg(rax);
    mov(rsi, int64_t(INT32_MIN));
    cmp(rax, rsi);
    cmovl(rax, rsi);  // Lo
  } else {
    xor_(eax, eax);  // Lo = 0: also keeps x < 2^31, where the sign-extended dword index equals zext(x)
  }
  // Lanes with x < Lo or x > Hi (signed) that take part: try the next window.
  bcast_gpr(2, eax);
  bcast_gpr(3, edx);
  xor_(esi, esi);
  for (int o = 0, i = 0; o < kWarpLanes * 4; o += vbytes_, ++i) {
    if (z_) {
      vmovdqu32(Zmm(0), ptr[index_base + int(index_slot + o)]);
      vpcmpd(k2, Zmm(0), Zmm(2), 1);  // x < Lo
      vpcmpd(k3, Zmm(0), Zmm(3), 6);  // x > Hi
      korw(k2, k2, k3);
      kmovw(eax, k2);
    } else {
      vmovdqu(Ymm(0), ptr[index_base + int(index_slot + o)]);
      vpcmpgtd(Ymm(1), Ymm(2), Ymm(0));  // Lo > x
      vpcmpgtd(Ymm(0), Ymm(0), Ymm(3));  // x > Hi
      vpor(Ymm(0), Ymm(0), Ymm(1));
      vmovmskps(eax, Ymm(0));
    }
    if (i) shl(eax, uint8_t(i * lanes_));
    or_(esi, eax);
  }
  test(esi, ecx);
  jz(inside, T_NEAR);

  L(next_window);
  emit_next_window(windows, try_window);
  jmp(general, T_NEAR);

  // Every taking-part lane's access lies in this window: host + d + x * 2^s.
  L(inside);
  add(r8, r9);
  if (z_ && (bytes == 4 || bytes == 8)) {
    // 16 dword lanes per gather / scatter (8 with qword data), under the lane
    // mask; loads keep the other lanes' slot contents (masked store).
    // Scatters write overlapping addresses from low to high lane, and the
    // strips go in lane order: the interpreter's order.
    const int per = bytes == 4 ? 16 : 8;
    for (int first = 0; first < kWarpLanes; first += per) {
      mov(eax, ecx);
      if (first) shr(eax, uint8_t(first));
      if (bytes == 4) {
        kmovw(k2, eax);
        vmovdqu32(Zmm(0), ptr[index_base + int(index_slot + 4 * first)]);
        if (is_load) {
          kmovw(k3, eax);  // the gather clears k2
          vpgatherdd(Zmm(1) | k2, ptr[r8 + Zmm(0) * scale]);
          vmovdqu32(ptr[r12 + int(data_slot + 4 * first)] | k3, Zmm(1));
        } else {
          vmovdqu32(Zmm(1), ptr[r12 + int(data_slot + 4 * first)]);
          vpscatterdd(ptr[r8 + Zmm(0) * scale] | k2, Zmm(1));
        }
      } else {
        kmovb(k2, eax);
        vmovdqu32(Ymm(0), ptr[index_base + int(index_slot + 4 * first)]);
        if (is_load) {
          kmovb(k3, eax);
          vpgatherdq(Zmm(1) | k2, ptr[r8 + Ymm(0) * scale]);
          vmovdqu64(ptr[r12 + int(data_slot + 8 * first)] | k3, Zmm(1));
        } else {
          vmovdqu64(Zmm(1), ptr[r12 + int(data_slot + 8 * first)]);
          vpscatterdq(ptr[r8 + Ymm(0) * scale] | k2, Zmm(1));
        }
      }
    }
    jmp(done, T_NEAR);
    return;
  }
  if (!z_ && is_load && bytes == 4) {
    // AVX2: 8 lanes per vpgatherdd. The mask (sign bits) is lane i's bit of
    // ecx, shifted down by the lane numbers; the gather merges into the old
    // slot contents, so lanes not taking part keep them.
    vmovdqu(Ymm(2), ptr[rip + iota_]);  // 0..7
    for (int first = 0; first < kWarpLanes; first += 8) {
      mov(eax, ecx);
      if (first) shr(eax, uint8_t(first));
      vmovd(Xmm(1), eax);
      vpbroadcastd(Ymm(1), Xmm(1));
      vpsrlvd(Ymm(1), Ymm(1), Ymm(2));
      vpslld(Ymm(1), Ymm(1), 31);
      vmovdqu(Ymm(0), ptr[index_base + int(index_slot + 4 * first)]);
      vmovdqu(Ymm(3), ptr[r12 + int(data_slot + 4 * first)]);
      vpgatherdd(Ymm(3), ptr[r8 + Ymm(0) * scale], Ymm(1));
      vmovdqu(ptr[r12 + int(data_slot + 4 * first)], Ymm(3));
    }
    jmp(done, T_NEAR);
    return;
  }
  // Scalar, in lane order: host + d + sext(x) * 2^s (x >= 0 for zext).
  Label access;
  L(access);
  bsf(eax, ecx);
  movsxd(rsi, dword[index_base + rax * 4 + int(index_slot)]);
  Address lane_data = bytes == 8 ? ptr[r12 + rax * 8 + int(data_slot)] : ptr[r12 + rax * 4 + int(data_slot)];
  if (is_load) {
    switch (bytes) {
      case 1: movzx(edi, byte[r8 + rsi * scale]); break;
      case 2: movzx(edi, word[r8 + rsi * scale]); break;
      case 4: mov(edi, dword[r8 + rsi * scale]); break;
      default: mov(rdi, qword[r8 + rsi * scale]); break;
    }
    if (bytes == 8) mov(lane_data, rdi);
    else mov(lane_data, edi);
  } else {
    if (bytes == 8) mov(rdi, lane_data);
    else mov(edi, lane_data);
    switch (bytes) {
      case 1: mov(byte[r8 + rsi * scale], dil); break;
      case 2: mov(word[r8 + rsi * scale], di); break;
      case 4: mov(dword[r8 + rsi * scale], edi); break;
      default: mov(qword[r8 + rsi * scale], rdi); break;
    }
  }
  lea(edx, ptr[rcx - 1]);
  and_(ecx, edx);
  jnz(access, T_NEAR);
  jmp(done, T_NEAR);
}

// After taking_part_lanes (ZF: no lane takes part): with no lane the access
// does nothing -- but a load_uniform left to its fallback must still fault
// on a missing uniform block, as it does where it stands in the IR: then
// the no-lane exit goes to the general path when r15 is null.
void Emitter::no_lane_exit(const IndexedAddress& a, Label& done, Label& general) {
  const bool defers_uniform = std::any_of(a.deferred.begin(), a.deferred.end(), [&](ValueId d) {
    return deferred_[d] && f_.insts[d].op == Opcode::LoadUniform;
  });
  if (!defers_uniform) {
    jz(done, T_NEAR);  // no lane takes part
    return;
  }
  Label lanes;
  jnz(lanes, T_NEAR);
  test(r15, r15);
  jz(general, T_NEAR);
  jmp(done, T_NEAR);
  L(lanes);
}

// Registers: ecx = lanes taking part, rsi = lane 0's element (x, then the
// address, then host), rdi / rdx = the first / last taking-part lane's
// element, r11 = the window tried, r8 = its host pointer, r9 = its base,
// r10 = size - bytes. Every test that fails jumps to `general` (the deferred
// address values are computed there and the general path decides, faults
// included); nothing is accessed before every test has passed.
void Emitter::emit_narrow_fast(ValueId v, const IndexedAddress& a, Label& done, Label& general_out) {
  narrow_fast_emitted_.push_back(v);
  Label general;  // rebuilds a lazy index's lanes, then general_out
  uint32_t lazy_step = 0;
  const IndexSegment* lazy = lazy_lanes(a.seq_index != kNoValue ? a.seq_index : a.index, lazy_step);
  const Inst& in = f_.insts[v];
  const bool is_load = in.op == Opcode::Load;
  const ir::Type data_t = is_load ? in.type : f_.insts[in.args[1]].type;
  const unsigned bytes = bit_width(data_t) / 8;  // 4 or 8 (plan_indexed_memory)
  const int shift = a.shift;
  const bool addend = a.seq_index != kNoValue;  // x = u + s: the check runs on s
  const Reg64 index_base = a.index_var >= 0 && !addend ? r13 : r12;  // ctx.vars or the frame
  const uint32_t index_slot = addend ? slot(a.seq_index)
                              : a.index_var >= 0 ? var_offsets_[uint32_t(a.index_var)] : slot(a.index);
  const uint32_t data_slot = is_load ? slot(v) : slot(in.args[1]);
  const WindowOffsets windows = window_offsets(in.attr);
  Label try_window, next_window, full_check, seq_checked, host_known;
  if (a.host_owner) mov(qword[r12 + a.host_cache], 0);  // before anything can skip the store below
  if (a.seq_cache >= 0 && !a.seq_owner) {  // an earlier access of this block did the checks below
    mov(ecx, dword[r12 + a.seq_cache + 8]);
    test(ecx, ecx);
    jz(full_check, T_NEAR);
    if (a.mask_owner) mov(dword[r12 + a.mask_cache], ecx);  // the same lanes (same mask value)
    if (a.host_reuse) {  // and an earlier access of this very address found its window
      mov(rsi, qword[r12 + a.host_cache]);
      test(rsi, rsi);
      jnz(host_known, T_NEAR);
    }
    mov(rsi, qword[r12 + a.seq_cache]);
    jmp(seq_checked, T_NEAR);
    L(full_check);
  }
  if (a.seq_owner) mov(dword[r12 + a.seq_cache + 8], 0);
  taking_part_lanes(a, in.args.back());
  no_lane_exit(a, done, general);
  if (!z_) {  // Avx2 moves all 32 lanes
    cmp(ecx, uint32_t(-1));
    jne(general, T_NEAR);
    // The first taking-part lane is lane 0: b = x_0, read without waiting
    // for the mask's conversion (a bsf of it would put that on the path
    // to the address).
    mov(esi, dword[index_base + int(index_slot)]);
    if (a.align_mask && !addend) {
      test(esi, a.align_mask);
      jnz(general, T_NEAR);
    }
  } else {
    // Avx512: lane 0 as above when all 32 take part (a predicted branch,
    // no data dependency on the mask), else the first taking-part lane.
    // (The all-lanes case falls through: no taken jump.)
    Label first_done;
    mov(esi, dword[index_base + int(index_slot)]);
    cmp(ecx, uint32_t(-1));
    je(first_done, T_NEAR);
    if (lazy) rebuild_lazy_lanes(*lazy, a.seq_index != kNoValue ? a.seq_index : a.index, lazy_step);
    bsf(eax, ecx);
    mov(esi, dword[index_base + rax * 4 + int(index_slot)]);  // x (or s) of the first taking-part lane, zero-extended
    shl(eax, uint8_t(shift));
    sub(rsi, rax);  // b = x_f - f * bytes, as a signed 64-bit value
    L(first_done);
    if (a.align_mask && !addend) {  // misaligned (the first lane's x, b's low bits): the general path faults
      test(esi, a.align_mask);
      jnz(general, T_NEAR);
    }
  }
  lea(rax, ptr[rsi + 31 * int(bytes)]);
  shr(rax, 32);
  jnz(general, T_NEAR);  // b < 0 or lane 31's element past 2^32: a dword compare would wrap
  Label proven;
  if (a.run_flag >= 0) {
    // The warp loop wrote the vars so that every lane's value is lane 0's
    // plus lane * bytes modulo 2^32 (plan_narrow_lane_proof), given the
    // per-warp no-wrap tests of its `and x, m` (x_0 & m <= m - 31): then
    // x_l = b + l * bytes exactly (b .. b + 31 * bytes stays below 2^32).
    Label full;
    // This warp's index segment (emit_index_segment, emitted before this
    // access) decided the same conditions: its proven dword.
    const ValueId checked = a.seq_index != kNoValue ? a.seq_index : a.index;
    const int32_t seg = plan_.segment_of[checked];
    if (auto is = index_segments_.find(uint32_t(seg));
        seg >= 0 && is != index_segments_.end() &&
        std::find(index_emitted_.begin(), index_emitted_.end(), uint32_t(seg)) != index_emitted_.end()) {
      cmp(dword[r12 + is->second.proven], 0);
      jne(proven, T_NEAR);
    }
    cmp(dword[r12 + a.run_flag], 0);
    je(full, T_NEAR);
    for (const auto& [var, m] : a.narrow_wraps) {
      const int lane0 = int(var_offsets_[uint32_t(var)]);
      // A lane-0 var of this record: the loop may not write it (its short way).
      auto rec = index_lane0_record_.find(var);
      if (rec != index_lane0_record_.end() && rec->second == a.run_flag) {
        const NarrowRunFlag* nf = nullptr;
        for (const NarrowRunFlag& r : narrow_run_flags_)
          if (r.off == a.run_flag) nf = &r;
        std::vector<int> vars = nf->iota;
        vars.insert(vars.end(), nf->same.begin(), nf->same.end());
        index_var_lane0(eax, var, a.run_flag, vars);
        if (m == 0xffff) movzx(eax, ax);
        else and_(eax, m);
      } else if (m == 0xffff) movzx(eax, word[r13 + lane0]);
      else if (m == 0xff) movzx(eax, byte[r13 + lane0]);
      else {
        mov(eax, dword[r13 + lane0]);
        and_(eax, m);
      }
      cmp(eax, m - 31);
      ja(full, T_NEAR);
    }
    jmp(proven, T_NEAR);
    L(full);
  }
  lanes_in_sequence(index_slot, 4, shift, index_base, &general);  // exact: b .. b + 31 * bytes has no wrap
  if (z_) {  // (Avx2: lanes_in_sequence jumped to general itself)
    not_(edx);
    test(edx, ecx);
    jnz(general, T_NEAR);
  }
  L(proven);
  if (a.seq_owner) {
    mov(qword[r12 + a.seq_cache], rsi);
    mov(dword[r12 + a.seq_cache + 8], ecx);
  }
  L(seq_checked);
  if (addend) {
    // Every taking-part s_l = b_s + l * bytes with no wrap; x_l = (u + s_l)
    // mod 2^32 = u + b_s + l * bytes exactly when that stays below 2^32 for
    // lane 31, and is aligned like u + b_s.
    test(r15, r15);
    jz(general, T_NEAR);  // (the load_uniform ran before: it faulted there)
    mov(eax, dword[r15 + int(a.addend_off)]);
    add(rsi, rax);  // b = u + b_s (both below 2^32)
    lea(rax, ptr[rsi + 31 * int(bytes)]);
    shr(rax, 32);
    jnz(general, T_NEAR);
    if (a.align_mask) {
      test(esi, a.align_mask);
      jnz(general, T_NEAR);
    }
  }
  // Every taking-part x_l = b + l * bytes, aligned like x_f (the step is the
  // element size, the mask below it): the address is C + b + l * bytes.
  if (a.disp) {
    mov(rax, a.disp);
    add(rsi, rax);
  }
  const int32_t wc = a.win_cache;
  Label found;
  if (wc >= 0) {
    // The element addresses an earlier warp of this call found a window
    // for: [lo, hi] (every element starting there lies in the window) and
    // host - window base. Cleared: lo = 2^64 - 1, hi = 0 (nothing passes:
    // the last element's address is not below the first's).
    // The test takes lanes 0..31's elements (b .. b + 31 * bytes, no
    // carry: b + 31 * bytes < 2^32 and C's low half is 0) whatever lanes
    // take part: when they lie in the window, so do the taking-part ones
    // (Avx2: all 32 take part; Avx512: no bsf / bsr of the mask on the way,
    // a partial warp whose other lanes leave the window searches).
    Label search;
    cmp(rsi, qword[r12 + wc]);
    jb(search, T_NEAR);
    lea(rdx, ptr[rsi + 31 * int(bytes)]);
    cmp(rdx, qword[r12 + wc + 8]);
    ja(search, T_NEAR);
    add(rsi, qword[r12 + wc + 16]);
    jmp(found, T_NEAR);
    L(search);
  }
  emit_span_window_search(windows, bytes, general, try_window, next_window);
  if (wc >= 0) {  // r9 = the window's base, r10 = size - bytes, r8 = its host pointer
    Label keep;
    mov(rax, r9);
    add(rax, r10);
    jc(keep, T_NEAR);  // (no such window in practice; then nothing is kept)
    mov(qword[r12 + wc], r9);
    mov(qword[r12 + wc + 8], rax);
    mov(rax, r8);
    sub(rax, r9);
    mov(qword[r12 + wc + 16], rax);
    L(keep);
  }
  L(found);
  if (a.host_owner) mov(qword[r12 + a.host_cache], rsi);  // never 0: a window's host pointer is not null
  L(host_known);
  emit_span_moves(is_load, bytes, data_slot, done);
  L(next_window);
  emit_next_window(windows, try_window);
  L(general);
  if (lazy) rebuild_lazy_lanes(*lazy, a.seq_index != kNoValue ? a.seq_index : a.index, lazy_step);
  rebuild_lazy_compare(mask_lanes_value(in.args.back()));
  jmp(general_out, T_NEAR);
}

}  // namespace gpurc::x64

namespace gpurc::x64 {

using namespace ir;
using namespace Xbyak;

void Emitter::lanes_in_sequence(uint32_t off, unsigned lb, int step_log2, const Reg64& base, Label* fail) {
  const bool q = lb == 8;
  const int per = vbytes_ / int(lb);  // lanes per vector
  if (!z_ && step_log2 >= 0) {
    // Avx2 with a step: every caller needs all 32 lanes in sequence (it
    // takes this path only when all 32 take part), so one verdict for the
    // warp: edx = all ones when every lane matches, else 0. V(1) steps
    // through the expected values, V(5) ANDs the compares (no mask per
    // vector, no shifts and ORs of partial masks).
    if (!q) vload(3, ptr[rip + iota_]);
    else vpmovzxdq(Ymm(3), ptr[rip + iota_]);
    if (step_log2 && q) vpsllq(Ymm(3), Ymm(3), uint8_t(step_log2));
    else if (step_log2) vpslld(Ymm(3), Ymm(3), uint8_t(step_log2));
    vmovq(Xmm(1), rsi);
    mov(eax, uint32_t(per) << step_log2);  // the step between two vectors' first lanes
    vmovd(Xmm(4), eax);
    if (q) {
      vpbroadcastq(Ymm(1), Xmm(1));
      vpbroadcastq(Ymm(4), Xmm(4));
      vpaddq(Ymm(1), Ymm(1), Ymm(3));
    } else {
      vpbroadcastd(Ymm(1), Xmm(1));
      vpbroadcastd(Ymm(4), Xmm(4));
      vpaddd(Ymm(1), Ymm(1), Ymm(3));
    }
    for (int i = 0; i < kWarpLanes / per; ++i) {
      const Address a = ptr[base + int(off + uint32_t(i * vbytes_))];
      const Ymm dst = i ? Ymm(2) : Ymm(5);
      if (q) vpcmpeqq(dst, Ymm(1), a);
      else vpcmpeqd(dst, Ymm(1), a);
      if (i) vpand(Ymm(5), Ymm(5), Ymm(2));
      if (i + 1 < kWarpLanes / per) {
        if (q) vpaddq(Ymm(1), Ymm(1), Ymm(4));
        else vpaddd(Ymm(1), Ymm(1), Ymm(4));
      }
    }
    if (fail) {  // the caller wants a jump, not edx: all 32 lanes take part
      vpcmpeqd(Ymm(2), Ymm(2), Ymm(2));
      vptest(Ymm(5), Ymm(2));  // CF: V(5) has every bit set
      jnc(*fail, T_NEAR);
      return;
    }
    xor_(edx, edx);
    vpcmpeqd(Ymm(2), Ymm(2), Ymm(2));
    vptest(Ymm(5), Ymm(2));  // CF: V(5) has every bit set
    setc(dl);
    neg(edx);
    return;
  }
  xor_(edx, edx);
  if (step_log2 >= 0) {  // V(3) = (lane within the vector) << step_log2
    if (!q) vload(3, ptr[rip + iota_]);
    else if (z_) vpmovzxdq(Zmm(3), ptr[rip + iota_]);
    else vpmovzxdq(Ymm(3), ptr[rip + iota_]);
    if (step_log2 && q) vpsllq(V(3), V(3), uint8_t(step_log2));
    else if (step_log2) vpslld(V(3), V(3), uint8_t(step_log2));
  }
  for (int i = 0; i < kWarpLanes / per; ++i) {
    if (step_log2 >= 0 || i == 0) {  // V(1) = the expected values of this vector's lanes
      if (step_log2 >= 0 && i) lea(rax, ptr[rsi + ((i * per) << step_log2)]);
      else mov(rax, rsi);
      if (z_) {
        if (q) vpbroadcastq(Zmm(1), rax);
        else vpbroadcastd(Zmm(1), eax);
      } else {
        vmovq(Xmm(1), rax);
        if (q) vpbroadcastq(Ymm(1), Xmm(1));
        else vpbroadcastd(Ymm(1), Xmm(1));
      }
      if (step_log2 >= 0 && q) vpaddq(V(1), V(1), V(3));
      else if (step_log2 >= 0) vpaddd(V(1), V(1), V(3));
    }
    const Address a = ptr[base + int(off + uint32_t(i * vbytes_))];
    if (z_ && q) {
      vpcmpeqq(k2, Zmm(1), a);
      kmovb(eax, k2);
    } else if (z_) {
      vpcmpeqd(k2, Zmm(1), a);
      kmovw(eax, k2);
    } else if (q) {
      vpcmpeqq(Ymm(2), Ymm(1), a);
      vmovmskpd(eax, Ymm(2));
    } else {
      vpcmpeqd(Ymm(2), Ymm(1), a);
      vmovmskps(eax, Ymm(2));
    }
    if (i) shl(eax, uint8_t(i * per));
    or_(edx, eax);
  }
}

// A warp loop's contiguous access reads or writes the span the next warps
// continue (grid-linear kernels: warp w + k at host + k * span). Out of the
// caches the warp's code is too long for the core's window to keep enough
// misses in flight, and the hardware prefetchers do not run far enough
// ahead: prefetch the span `distance` bytes on (a prefetch never faults, and
// one past the buffer or of a non-linear kernel only costs its slot).
// Off by default: in the caches the prefetches cost more than they give
// (docs/backend_x64.md, seventeenth session). GPURC_STREAM_PREFETCH=bytes
// (a multiple of 64; 0: off) or set_stream_prefetch_distance (jit.h).
namespace {
std::atomic<int> stream_prefetch_bytes{[] {
  const char* e = std::getenv("GPURC_STREAM_PREFETCH");
  const int d = e && *e ? std::atoi(e) : 0;
  return d > 0 ? (d + 63) / 64 * 64 : 0;
}()};
}  // namespace

void set_stream_prefetch_distance(int bytes) { stream_prefetch_bytes = bytes > 0 ? (bytes + 63) / 64 * 64 : 0; }

int Emitter::stream_prefetch_distance() { return stream_prefetch_bytes.load(std::memory_order_relaxed); }

void Emitter::emit_stream_prefetch(bool is_load, unsigned bytes, const Reg64& host) {
  const int d = stream_prefetch_distance();
  if (!warp_loop_ || d <= 0) return;
  for (uint32_t o = 0; o < kWarpLanes * bytes; o += 64) {
    const Address at = ptr[host + int(d + int(o))];
    if (is_load) prefetcht0(at);
    else prefetchw(at);
  }
}

void Emitter::emit_contiguous_access(bool is_load, unsigned bytes, uint32_t data_slot, const Reg64& host) {
  const int per = vbytes_ / int(bytes);
  emit_stream_prefetch(is_load, bytes, host);
  if (is_load && load_home_active_cell_ >= 0) {  // a homed load: every lane taking part moves nothing
    if (!z_) {
      if (load_home_take(host, bytes, data_slot)) return;  // (Avx2: every lane takes part)
    } else if (bytes == 4 && data_slot == load_home_active_slot_) {
      Label some;
      cmp(ecx, uint32_t(-1));
      jne(some, T_NEAR);
      load_home_take(host, bytes, data_slot);
      L(some);
    }
  }
  for (int i = 0; i < kWarpLanes / per; ++i) {
    const Address mem = ptr[host + i * vbytes_];
    const Address data = ptr[r12 + int(data_slot + uint32_t(i * vbytes_))];
    if (!z_) {  // Avx2: every lane takes part (the callers check)
      if (is_load) {
        vmovdqu(Ymm(1), mem);
        vmovdqu(data, Ymm(1));
      } else {
        vmovdqu(Ymm(1), data);
        vmovdqu(mem, Ymm(1));
      }
      continue;
    }
    // Masked moves touch only the taking-part lanes' elements (and never
    // fault on the others), as the gathers / scatters they replace.
    mov(eax, ecx);
    if (i) shr(eax, uint8_t(i * per));
    if (bytes == 4) kmovw(k2, eax);
    else kmovb(k2, eax);
    if (is_load && bytes == 4) {
      vmovdqu32(Zmm(1) | k2 | T_z, mem);
      vmovdqu32(data | k2, Zmm(1));
    } else if (is_load) {
      vmovdqu64(Zmm(1) | k2 | T_z, mem);
      vmovdqu64(data | k2, Zmm(1));
    } else if (bytes == 4) {
      vmovdqu32(Zmm(1), data);
      vmovdqu32(mem | k2, Zmm(1));
    } else {
      vmovdqu64(Zmm(1), data);
      vmovdqu64(mem | k2, Zmm(1));
    }
  }
}

// Registers: ecx = lanes taking part (kept on fall-through); rsi = lane
// 0's element (b), rdi / rdx = the first / last taking-part lane's
// element, r11 = the window tried, r8 = its host pointer, r9 = its base,
// r10 = size - bytes. The sequence test is exact: 8-byte addresses compare
// as qwords; 4-byte ones as dwords only when b .. b + 31 elements stays
// below 2^32 (no wrap), else the general path runs.
// After lanes_in_sequence (edx = the lanes in sequence, ecx = the taking-part
// lanes, rsi = b): to `not_in_sequence` unless every taking-part lane is in
// sequence; else the verdict is kept for the later accesses of the same index.
void Emitter::emit_sequence_verdict(const IndexedAddress& a, Label& not_in_sequence) {
  if (z_) {  // (Avx2: lanes_in_sequence jumped to not_in_sequence itself)
    not_(edx);
    test(edx, ecx);
    jnz(not_in_sequence, T_NEAR);
  }
  if (a.seq_owner) {
    mov(qword[r12 + a.seq_cache], rsi);
    mov(dword[r12 + a.seq_cache + 8], ecx);
  }
}

// rsi = lane 0's element on the host, ecx = the taking-part lanes, all in
// one window: the moves, then a jump to `done`. With every lane taking part
// (AVX-512) plain 64-byte moves, no lane masks.
void Emitter::emit_span_moves(bool is_load, unsigned bytes, uint32_t data_slot, Label& done) {
  if (store_probe_ && !is_load) {  // a store home's probe: every lane, or the store at its place
    if (z_ && !span_all_lanes_) {
      cmp(ecx, uint32_t(-1));
      jne(done, T_NEAR);
    }
    emit_stream_prefetch(false, bytes, rsi);
    store_probe_take(rsi);
    return;
  }
  if (z_) {
    Label some;
    if (!span_all_lanes_) {
      cmp(ecx, uint32_t(-1));
      jne(some, T_NEAR);
    }
    emit_stream_prefetch(is_load, bytes, rsi);  // (the other paths: emit_contiguous_access's)
    if (!is_load || !load_home_take(rsi, bytes, data_slot)) {  // (a homed load: the cell, no moves)
      for (uint32_t o = 0; o < kWarpLanes * bytes; o += 64) {
        const Address mem = ptr[rsi + int(o)], data = ptr[r12 + int(data_slot + o)];
        vmovdqu32(Zmm(1), is_load ? mem : data);
        vmovdqu32(is_load ? data : mem, Zmm(1));
      }
      jmp(done, T_NEAR);
    }
    if (span_all_lanes_) return;  // (no partial lanes: the masked moves would be dead code)
    L(some);
  }
  emit_contiguous_access(is_load, bytes, data_slot, rsi);
  jmp(done, T_NEAR);
}

// rsi = the guest address of lane 0's element, ecx = the taking-part lanes
// (not empty), elements of `bytes` at consecutive addresses. Searches the
// windows for one holding both the first and the last taking-part lane's
// element: falls through with rsi = lane 0's element on the host (other
// lanes' may lie outside the window: they are masked off), jumps to `none`
// when no window holds them. The caller binds `next_window` and emits
// emit_next_window(w, try_window) there.
void Emitter::emit_span_window_search(const WindowOffsets& w, unsigned bytes, Label& none, Label& try_window,
                                      Label& next_window) {
  bsf(eax, ecx);
  bsr(edx, ecx);
  lea(rdi, ptr[rsi + rax * int(bytes)]);
  lea(rdx, ptr[rsi + rdx * int(bytes)]);
  lea(r11, ptr[rbx + int(w.primary)]);
  L(try_window);
  mov(r8, qword[r11 + int(offsetof(MemWindow, host))]);
  test(r8, r8);
  jz(none, T_NEAR);  // an empty window ends the list
  mov(r9, qword[r11 + int(offsetof(MemWindow, base))]);
  mov(r10, qword[r11 + int(offsetof(MemWindow, size))]);
  sub(r10, bytes);
  jb(next_window, T_NEAR);
  mov(rax, rdi);
  sub(rax, r9);
  jb(next_window, T_NEAR);
  cmp(rax, r10);
  ja(next_window, T_NEAR);
  mov(rax, rdx);
  sub(rax, r9);
  jb(next_window, T_NEAR);
  cmp(rax, r10);
  ja(next_window, T_NEAR);
  sub(rsi, r9);
  add(rsi, r8);
}

void Emitter::emit_consecutive_access(ValueId v, Label& done) {
  const Inst& in = f_.insts[v];
  const bool is_load = in.op == Opcode::Load;
  const ir::Type addr_t = f_.insts[in.args[0]].type;
  const ir::Type data_t = is_load ? in.type : f_.insts[in.args[1]].type;
  if (data_t == ir::Type::I1) return;
  const unsigned bytes = bit_width(data_t) / 8;
  const unsigned lb = lane_bytes(data_t), ab = lane_bytes(addr_t);
  if ((bytes != 4 && bytes != 8) || lb != bytes) return;
  const int shift = bytes == 4 ? 2 : 3;
  const uint32_t addr_slot = slot(in.args[0]);
  const uint32_t data_slot = is_load ? slot(v) : slot(in.args[1]);
  const WindowOffsets windows = window_offsets(in.attr);
  Label not_consecutive, try_window, next_window;
  if (!z_) {  // Avx2 moves all 32 lanes: the first is lane 0, b = its address
    cmp(ecx, uint32_t(-1));
    jne(not_consecutive, T_NEAR);
    if (ab == 4) mov(esi, dword[r12 + int(addr_slot)]);
    else mov(rsi, qword[r12 + int(addr_slot)]);
  } else {  // Avx512: the same when all 32 take part (predicted), else the first lane's
    Label some, first_done;
    cmp(ecx, uint32_t(-1));
    jne(some, T_NEAR);
    if (ab == 4) mov(esi, dword[r12 + int(addr_slot)]);
    else mov(rsi, qword[r12 + int(addr_slot)]);
    jmp(first_done, T_NEAR);
    L(some);
    bsf(eax, ecx);
    if (ab == 4) mov(esi, dword[r12 + rax * 4 + int(addr_slot)]);
    else mov(rsi, qword[r12 + rax * 8 + int(addr_slot)]);
    shl(eax, uint8_t(shift));
    sub(rsi, rax);  // b, modulo 2^64
    L(first_done);
  }
  if (ab == 4) {
    lea(rax, ptr[rsi + 31 * int(bytes)]);
    shr(rax, 32);
    jnz(not_consecutive, T_NEAR);  // b < 0 or the last element past 2^32
  }
  lanes_in_sequence(addr_slot, ab, shift);
  not_(edx);
  test(edx, ecx);
  jnz(not_consecutive, T_NEAR);
  emit_span_window_search(windows, bytes, not_consecutive, try_window, next_window);
  emit_contiguous_access(is_load, bytes, data_slot, rsi);
  jmp(done, T_NEAR);
  L(next_window);
  emit_next_window(windows, try_window);
  L(not_consecutive);
}

// Registers: ecx = lanes taking part (kept on fall-through), rsi = the
// address, r11 = the window tried, r8 = its host pointer, r10 = size - bytes.
void Emitter::emit_uniform_address(ValueId v, Label& done) {
  const Inst& in = f_.insts[v];
  const bool is_load = in.op == Opcode::Load;
  const ir::Type addr_t = f_.insts[in.args[0]].type;
  const ir::Type data_t = is_load ? in.type : f_.insts[in.args[1]].type;
  const unsigned bytes = data_t == ir::Type::I1 ? 1 : bit_width(data_t) / 8;
  const unsigned lb = lane_bytes(data_t), ab = lane_bytes(addr_t);
  const uint32_t addr_slot = slot(in.args[0]);
  const uint32_t data_slot = is_load ? slot(v) : slot(in.args[1]);
  const WindowOffsets windows = window_offsets(in.attr);
  Label not_uniform, try_window, next_window;
  // The uniformity analysis says so for the launched lanes; the taking-part
  // lanes are checked here all the same (a load's result slot, for one,
  // holds its value only in the lanes that took part).
  bsf(eax, ecx);
  if (ab == 4) mov(esi, dword[r12 + rax * 4 + int(addr_slot)]);
  else mov(rsi, qword[r12 + rax * 8 + int(addr_slot)]);
  lanes_in_sequence(addr_slot, ab, -1);
  not_(edx);
  test(edx, ecx);
  jnz(not_uniform, T_NEAR);
  lea(r11, ptr[rbx + int(windows.primary)]);
  L(try_window);
  mov(r8, qword[r11 + int(offsetof(MemWindow, host))]);
  test(r8, r8);
  jz(not_uniform, T_NEAR);  // an empty window ends the list: the general path decides
  mov(r10, qword[r11 + int(offsetof(MemWindow, size))]);
  sub(r10, bytes);
  jb(next_window, T_NEAR);
  mov(rdx, rsi);
  sub(rdx, qword[r11 + int(offsetof(MemWindow, base))]);
  jb(next_window, T_NEAR);
  cmp(rdx, r10);
  ja(next_window, T_NEAR);
  add(r8, rdx);
  if (is_load) {
    switch (bytes) {
      case 1: movzx(edi, byte[r8]); break;
      case 2: movzx(edi, word[r8]); break;
      case 4: mov(edi, dword[r8]); break;
      default: mov(rdi, qword[r8]); break;
    }
    if (data_t == ir::Type::I1) {
      test(edi, edi);
      setne(dil);
      movzx(edi, dil);
    }
    // The value into the taking-part lanes of the result slot.
    if (z_) {
      const int per = 64 / int(lb);
      if (lb == 8) vpbroadcastq(Zmm(1), rdi);
      else vpbroadcastd(Zmm(1), edi);
      for (int i = 0; i < kWarpLanes / per; ++i) {
        mov(eax, ecx);
        if (i) shr(eax, uint8_t(i * per));
        const Address data = ptr[r12 + int(data_slot + uint32_t(64 * i))];
        if (lb == 8) {
          kmovb(k2, eax);
          vmovdqu64(data | k2, Zmm(1));
        } else {
          kmovw(k2, eax);
          vmovdqu32(data | k2, Zmm(1));
        }
      }
    } else {
      Label some, lane;
      cmp(ecx, uint32_t(-1));
      jne(some, T_NEAR);
      vmovq(Xmm(1), rdi);
      if (lb == 8) vpbroadcastq(Ymm(1), Xmm(1));
      else vpbroadcastd(Ymm(1), Xmm(1));
      for (unsigned o = 0; o < kWarpLanes * lb; o += 32) vmovdqu(ptr[r12 + int(data_slot + o)], Ymm(1));
      jmp(done, T_NEAR);
      L(some);
      L(lane);
      bsf(eax, ecx);
      if (lb == 8) mov(qword[r12 + rax * 8 + int(data_slot)], rdi);
      else mov(dword[r12 + rax * 4 + int(data_slot)], edi);
      lea(edx, ptr[rcx - 1]);
      and_(ecx, edx);
      jnz(lane, T_NEAR);
    }
  } else {
    // Stores go in lane order: the last taking-part lane's value stays.
    bsr(eax, ecx);
    if (lb == 8) mov(rdi, qword[r12 + rax * 8 + int(data_slot)]);
    else mov(edi, dword[r12 + rax * 4 + int(data_slot)]);
    switch (bytes) {
      case 1:
        if (data_t == ir::Type::I1) and_(edi, 1);
        mov(byte[r8], dil);
        break;
      case 2: mov(word[r8], di); break;
      case 4: mov(dword[r8], edi); break;
      default: mov(qword[r8], rdi); break;
    }
  }
  jmp(done, T_NEAR);
  L(next_window);
  emit_next_window(windows, try_window);
  L(not_uniform);
}

// ---------------------------------------------------------------- load homes

// Seventeenth session. A 4-byte load's result went to its 32-lane slot in
// every path (two / four vector stores on the all-lanes contiguous path),
// and the strip segment after it read it back: the slot's round trip sat on
// the warp's chain (G13 `memory`: two loads, the add strip, a store). When
// every reader of the load is a strip op of its block that takes operands
// through use() / strip_mem (the ops var homes allow, and 4-byte bitcasts)
// and nothing between the load and its last reader can write memory (only
// strip ops and other loads: the host data the cell points to is what the
// load read), the result's home is a pointer cell: the contiguous path
// stores lane 0's host address there and moves nothing; every other path
// (partial masks, gathers, scalar loops, the helper) fills the slot as
// before and the cell gets the slot's address. Readers load [cell] into the
// value's GPR and the data from [gpr + lane offset], lane l at 4 * l in
// both. GPURC_LOAD_HOMES=0 (read once) turns it off, for measurements.
bool Emitter::load_homes_enabled() {
  static const bool yes = env_switch_on("GPURC_LOAD_HOMES");
  return yes;
}

void Emitter::find_load_homes() {
  if (!load_homes_enabled() || !has_memory_ops_hint()) return;  // (load_homed() is false while the vectors are empty)
  load_home_gpr_.assign(f_.insts.size(), -1);
  load_home_cell_.assign(f_.insts.size(), -1);
  auto reads_through_use = [&](const Inst& u) {
    switch (u.op) {
      case Opcode::FAdd: case Opcode::FSub: case Opcode::FMul: case Opcode::FFma: case Opcode::FMad:
      case Opcode::FMin: case Opcode::FMax: case Opcode::FNeg: case Opcode::FAbs:
        return u.type == ir::Type::F32;
      case Opcode::FCmp:
        return !u.args.empty() && f_.insts[u.args[0]].type == ir::Type::F32;
      case Opcode::Select:
        return lane_bytes(u.type) == 4;
      case Opcode::Bitcast:
        return u.type == ir::Type::F32 || u.type == ir::Type::I32;
      default:
        return load_home_int_reader(u);
    }
  };
  auto strip_op = [&](ValueId u) {
    const int32_t seg = u < plan_.segment_of.size() ? plan_.segment_of[u] : -1;
    return seg >= 0 && plan_.segments[size_t(seg)].strip;
  };
  // Per value: the position of its last reader in its block (or -1), and
  // whether every reader qualifies.
  std::vector<int32_t> last_reader(f_.insts.size(), -1);
  std::vector<uint8_t> ok(f_.insts.size(), 1);
  std::vector<int32_t> pos_in_block(f_.insts.size(), -1);
  for (BlockId b = 0; b < f_.blocks.size(); ++b)
    for (size_t i = 0; i < f_.blocks[b].insts.size(); ++i) pos_in_block[f_.blocks[b].insts[i]] = int32_t(i);
  // Readers in a later block (load_home_later_block): the load's block
  // must then be clean from the load to its end.
  std::vector<uint8_t> later(f_.insts.size(), 0);
  const std::vector<BlockId> only_pred = load_home_only_preds();
  for (ValueId u = 0; u < f_.insts.size(); ++u) {
    const Inst& in = f_.insts[u];
    if (in.block == kNoBlock) continue;
    const bool through = reads_through_use(in) && strip_op(u);
    for (ValueId a : in.args) {
      if (a >= f_.insts.size()) continue;
      if (through && f_.insts[a].block != in.block && f_.insts[a].block != kNoBlock &&
          load_home_later_block(f_.insts[a].block, in.block, only_pred))
        later[a] = 1;
      else if (!through || f_.insts[a].block != in.block || pos_in_block[u] <= pos_in_block[a]) ok[a] = 0;
      else last_reader[a] = std::max(last_reader[a], pos_in_block[u]);
    }
  }
  uint32_t homes = 0;
  for (BlockId b = 0; b < f_.blocks.size(); ++b) {
    int next_gpr = 0;
    const auto& insts = f_.blocks[b].insts;
    for (size_t i = 0; i < insts.size() && next_gpr < int(std::size(kLoadHomeGprs)); ++i) {
      const ValueId v = insts[i];
      const Inst& in = f_.insts[v];
      if (in.op != Opcode::Load || (in.type != ir::Type::I32 && in.type != ir::Type::F32) || !ok[v] ||
          (last_reader[v] < 0 && !later[v]) || plan_.segment_of[v] < 0 ||
          plan_.segments[size_t(plan_.segment_of[v])].strip)
        continue;
      bool clean = true;  // nothing between the load and its last reader writes memory
      for (size_t j = i + 1; last_reader[v] >= 0 && j < size_t(last_reader[v]) && clean; ++j)
        clean = strip_op(insts[j]) || f_.insts[insts[j]].op == Opcode::Load;
      // A later block's reader: nothing from the load to the block's end
      // writes memory (pure ops, loads, the branch to that block).
      for (size_t j = i + 1; later[v] && j < insts.size() && clean; ++j) {
        const Inst& o = f_.insts[insts[j]];
        clean = strip_op(insts[j]) || o.op == Opcode::Load || o.op == Opcode::Br || o.op == Opcode::CondBr ||
                ir::op_info(o.op).pure;
      }
      if (!clean) continue;
      load_home_gpr_[v] = int8_t(next_gpr++);
      load_home_cell_[v] = int32_t(homes++);  // an index until the cells are placed below
    }
  }
  if (homes == 0) return;
  const uint32_t base = frame_bytes_;
  frame_bytes_ += (homes * 8 + 63) & ~63u;
  for (int32_t& c : load_home_cell_)
    if (c >= 0) c = int32_t(base + uint32_t(c) * 8);
}

// Nineteenth session. Integer strip ops whose lowering (lower_int) reads
// every operand through use() / strip_mem / slot_operand, so a homed
// operand is read as [gpr + lane offset] like a float op's: 32-bit adds,
// subtractions, bit ops and shifts, and compares of 32-bit operands
// (Tesla's MAD reads x's and y's bits: its range tests shift, bias and
// compare them, the exact form masks and selects them).
bool Emitter::load_home_int_reader(const Inst& u) const {
  switch (u.op) {
    case Opcode::IAdd: case Opcode::ISub: case Opcode::And: case Opcode::Or: case Opcode::Xor:
    case Opcode::Shl: case Opcode::LShr: case Opcode::AShr:
      return u.type == ir::Type::I32;
    case Opcode::ICmp:
      return u.args.size() == 2 && f_.insts[u.args[0]].type == ir::Type::I32;
    default:
      return false;
  }
}

// Per block, its one predecessor (kNoBlock when it has none or several).
std::vector<BlockId> Emitter::load_home_only_preds() const {
  std::vector<BlockId> only(f_.blocks.size(), kNoBlock);
  std::vector<uint8_t> count(f_.blocks.size(), 0);
  for (BlockId b = 0; b < f_.blocks.size(); ++b)
    for (BlockId s : f_.blocks[b].succs)
      if (s < f_.blocks.size() && count[s] < 2 && (count[s] == 0 || only[s] != b)) {
        only[s] = b;
        ++count[s];
      }
  for (BlockId b = 0; b < f_.blocks.size(); ++b)
    if (count[b] != 1) only[b] = kNoBlock;
  return only;
}

// Nineteenth session. A homed load of block L read by a strip op of block
// R: R's only predecessor is L (so the load ran in this warp just before,
// and its cell is this warp's), and R itself writes no memory and calls no
// budget (every op pure, var reads and writes -- the warp context, not
// guest memory -- then its branch): with L clean from the load to
// its end (find_load_homes), the host data the cell points to is what the
// load read. R loads no value of its own, so it has no load or store home
// whose register could collide with L's. Tesla's MAD: the exact block,
// which only the vote's rare side enters, reads x and y.
bool Emitter::load_home_later_block(BlockId l, BlockId r, const std::vector<BlockId>& only_pred) const {
  if (r == l || r >= f_.blocks.size() || only_pred[r] != l || r == 0) return false;
  for (ValueId o : f_.blocks[r].insts) {
    const Opcode op = f_.insts[o].op;
    if (op != Opcode::Br && op != Opcode::CondBr && op != Opcode::LoadVar && op != Opcode::StoreVar &&
        !ir::op_info(op).pure)
      return false;
  }
  return true;
}

// Whether the function has a 4-byte load at all (PICA200 shaders have none:
// the analysis below and its vectors cost compile time for nothing).
bool Emitter::has_memory_ops_hint() const {
  for (const Inst& in : f_.insts)
    if (in.op == Opcode::Load && in.block != kNoBlock && (in.type == ir::Type::I32 || in.type == ir::Type::F32))
      return true;
  return false;
}

MemRef Emitter::load_home_ref(ValueId v) {
  const int g = kLoadHomeGprs[load_home_gpr_[v]];
  if (load_home_hoisted_[load_home_gpr_[v]] != v) mov(Reg64(g), qword[r12 + load_home_cell_[v]]);
  return MemRef{uint8_t(g), uint8_t(strip_alt_ ? 5 : 14), 1, 0};
}

// A strip segment's homed operands: their GPRs loaded once before the
// strips (no strip lowering writes r8..r11, rsi or rdi; a helper call in
// the segment reloads them after it). Each GPR belongs to one homed value
// of the block, so they never collide. An empty segment clears the set.
void Emitter::load_home_hoist(const Segment& s) {
  std::fill(std::begin(load_home_hoisted_), std::end(load_home_hoisted_), kNoValue);
  if (load_home_gpr_.empty()) return;  // no homes in this function
  for (ValueId v : s.ops) {
    if (deferred_[v]) continue;
    for (ValueId a : f_.insts[v].args)
      if (load_homed(a) && load_home_hoisted_[load_home_gpr_[a]] != a) {
        mov(Reg64(kLoadHomeGprs[load_home_gpr_[a]]), qword[r12 + load_home_cell_[a]]);
        load_home_hoisted_[load_home_gpr_[a]] = a;
      }
    if (load_homed(v)) {  // a store home's value (find_store_homes): where the strips write it
      mov(Reg64(kLoadHomeGprs[load_home_gpr_[v]]), qword[r12 + load_home_cell_[v]]);
      load_home_hoisted_[load_home_gpr_[v]] = v;
    }
  }
}

void Emitter::load_home_reload() {
  for (size_t i = 0; i < std::size(kLoadHomeGprs); ++i)
    if (const ValueId v = load_home_hoisted_[i]; v != kNoValue) mov(Reg64(kLoadHomeGprs[i]), qword[r12 + load_home_cell_[v]]);
}

bool Emitter::load_home_take(const Reg64& host, unsigned bytes, uint32_t data_slot) {
  if (load_home_active_cell_ < 0 || bytes != 4 || data_slot != load_home_active_slot_) return false;
  mov(qword[r12 + load_home_active_cell_], host);
  jmp(*load_home_done_, T_NEAR);
  return true;
}

}  // namespace gpurc::x64

namespace gpurc::x64 {

// ---------------------------------------------------------------- store homes

// Eighteenth session (emitter.h, StoreHome). The store's side of load homes:
// G13 `memory`'s add strip stored its sum to the frame slot and the store
// read it back (two / four vector round trips per warp on the warp's
// chain). Which stores qualify:
// * an indexed store (not narrow) of a 4-byte value with the element step
//   as scale (the consecutive path), outside strip-outer loops;
// * its value is defined in the block's strip segment whose next emitted
//   segment is the store (segments of deferred ops only, which emit
//   nothing, may lie between), by an op whose result the register cache
//   writes through strip_ref (float and integer arithmetic, selects,
//   bitcasts; a helper's result is copied to the cell by lower_helper), and
//   the store is its only reader;
// * what the store's fast path reads is there before that segment: its
//   index is the var (never written) or defined in another segment, and its
//   mask is the entry mask, a dominating access's cache, or defined
//   elsewhere;
// * nothing in the segment can fault once a strip has stored (no
//   load_uniform_idx, no load_uniform out of range at compile time; an
//   in-range load_uniform only when r15's test comes before the strips:
//   store_home_probe checks that at its emission) -- a store seen before a
//   fault would be a write the interpreter never makes;
// * a home register is free in the block (the load homes take the first).
bool Emitter::store_homes_enabled() {
  static const bool yes = env_switch_on("GPURC_STORE_HOMES");
  return yes;
}

void Emitter::find_store_homes() {
  if (!store_homes_enabled() || indexed_.empty()) return;
  auto writes_through_cache = [&](const Inst& d) {
    if (lane_bytes(d.type) != 4 || d.type == ir::Type::I1) return false;
    switch (d.op) {
      case Opcode::FAdd: case Opcode::FSub: case Opcode::FMul: case Opcode::FFma: case Opcode::FMad:
      case Opcode::FMin: case Opcode::FMax: case Opcode::FNeg: case Opcode::FAbs:
      case Opcode::IAdd: case Opcode::ISub: case Opcode::IMul: case Opcode::And: case Opcode::Or:
      case Opcode::Xor: case Opcode::Shl: case Opcode::LShr: case Opcode::AShr: case Opcode::Select:
        return true;
      case Opcode::Bitcast:
        return d.args.size() == 1 && lane_bytes(f_.insts[d.args[0]].type) == 4;
      default:
        return false;
    }
  };
  for (const auto& [v, m] : indexed_) {
    const Inst& in = f_.insts[v];
    if (in.op != Opcode::Store || m.narrow || m.shift != 2 || in.args.size() != 3) continue;
    const ValueId data = in.args[1];
    const Inst& d = f_.insts[data];
    const BlockId b = in.block;
    if (d.block != b || (d.type != ir::Type::I32 && d.type != ir::Type::F32) || !writes_through_cache(d)) continue;
    if (uses_[data] != 1 || deferred_[data] || var_home_[data] >= 0 || load_homed(data)) continue;
    if (b < plan_.strip_loop_of.size() && plan_.strip_loop_of[b] >= 0) continue;
    const int32_t seg = plan_.segment_of[data];
    if (seg < 0 || !plan_.segments[size_t(seg)].strip) continue;
    // The store is the next segment that emits code.
    const auto& segs = plan_.block_segments[b];
    auto at = std::find(segs.begin(), segs.end(), uint32_t(seg));
    if (at == segs.end()) continue;
    bool next_is_store = false;
    for (auto it = at + 1; it != segs.end(); ++it) {
      const Segment& s = plan_.segments[*it];
      if (s.strip && std::all_of(s.ops.begin(), s.ops.end(), [&](ValueId o) { return deferred_[o] != 0; })) continue;
      next_is_store = !s.strip && s.ops.size() == 1 && s.ops[0] == v;
      break;
    }
    if (!next_is_store) continue;
    const Segment& s = plan_.segments[size_t(seg)];
    if (m.index_var < 0 && plan_.segment_of[m.index] == seg) continue;
    const ValueId mask = in.args[2];
    if (f_.insts[mask].op != Opcode::EntryMask && !(m.mask_cache >= 0 && !m.mask_owner) &&
        plan_.segment_of[mask_lanes_value(mask)] == seg)
      continue;
    bool quiet = true;  // nothing in the segment faults (an in-range load_uniform: checked at emission)
    for (ValueId o : s.ops) {
      if (deferred_[o]) continue;
      const Inst& oi = f_.insts[o];
      if (oi.op == Opcode::LoadUniformIdx || oi.op == Opcode::Budget) quiet = false;
      if (oi.op == Opcode::LoadUniform) {
        const unsigned bytes = oi.type == ir::Type::I1 ? 1 : bit_width(oi.type) / 8;
        if (oi.imm > f_.uniform_bytes || f_.uniform_bytes - oi.imm < bytes) quiet = false;
      }
    }
    if (!quiet) continue;
    // A home register the block's load homes left free.
    int next_gpr = 0;
    for (ValueId o : f_.blocks[b].insts)
      if (load_homed(o)) next_gpr = std::max(next_gpr, int(load_home_gpr_[o]) + 1);
    if (next_gpr >= int(std::size(kLoadHomeGprs))) continue;
    StoreHome h;
    h.store = v;
    h.data = data;
    for (ValueId o : s.ops)
      if (!deferred_[o])
        for (ValueId a : f_.insts[o].args)
          if (load_homed(a) && f_.insts[a].op == Opcode::Load && std::find(h.loads.begin(), h.loads.end(), a) == h.loads.end())
            h.loads.push_back(a);
    if (load_home_gpr_.empty()) {
      load_home_gpr_.assign(f_.insts.size(), -1);
      load_home_cell_.assign(f_.insts.size(), -1);
    }
    load_home_gpr_[data] = int8_t(next_gpr);
    load_home_cell_[data] = int32_t(frame_bytes_);
    frame_bytes_ += 64;
    if (store_homed_.empty()) store_homed_.assign(f_.insts.size(), 0);
    store_homed_[v] = 1;
    store_home_of_segment_[uint32_t(seg)] = std::move(h);
  }
}

// Before the strips of a segment that computes a homed store's value (the
// uniform test, if any, already made): the probe, then the cell.
void Emitter::store_home_probe(const Segment& s, bool uniforms_tested) {
  if (store_home_of_segment_.empty()) return;
  auto it = store_home_of_segment_.find(uint32_t(&s - plan_.segments.data()));
  if (it == store_home_of_segment_.end()) return;
  const StoreHome& h = it->second;
  // An in-range load_uniform in the segment may fault only before the
  // strips (the hoisted test, or r15 known good): else no probe, the slot.
  bool probe = true;
  for (ValueId o : s.ops)
    if (!deferred_[o] && f_.insts[o].op == Opcode::LoadUniform && !uniforms_tested && !uniforms_known_nonnull() &&
        !(prefilled_[o] && narrow_uniform_in_slot(o)))
      probe = false;
  Label ok, fail;
  if (probe) {
    store_probe_ = &h;
    store_probe_ok_ = &ok;
    store_probe_fail_ = &fail;
    emit_indexed_fast(h.store, indexed_.at(h.store), fail, fail);
    store_probe_ = nullptr;
    store_probe_ok_ = store_probe_fail_ = nullptr;
  }
  L(fail);
  lea(rax, ptr[r12 + int(slot(h.data))]);
  mov(qword[r12 + load_home_cell_[h.data]], rax);
  L(ok);
}

// host = lane 0's element of the store's span (every lane takes part, inside
// a window). A homed load the segment reads at L, with the store at S: strip
// k stores [S + k * w, +w) after reading [L + k * w, +w); a later strip j
// reads [L + j * w, +w), which that store overlaps only when L < S < L +
// 128 (32 lanes of 4 bytes). S <= L or S >= L + 128 is safe; a cell that
// points at a frame slot (the load's other paths) is never inside guest
// memory, so the test only costs a fallback there.
void Emitter::store_probe_take(const Reg64& host) {
  for (ValueId l : store_probe_->loads) {
    if (store_probe_direct_ && probe_load_on_span(l)) continue;  // decided when the store's call span was set
    lea(rax, ptr[host - 1]);
    sub(rax, qword[r12 + load_home_cell_[l]]);
    cmp(rax, int(kWarpLanes * 4 - 1));
    jb(*store_probe_fail_, T_NEAR);
  }
  mov(qword[r12 + load_home_cell_[store_probe_->data]], host);
  jmp(*store_probe_ok_, T_NEAR);
}

}  // namespace gpurc::x64

namespace gpurc::x64 {

using namespace ir;
using namespace Xbyak;

// Nineteenth session: the index chain's lane 0 per warp (emitter.h,
// IndexSegment). Tesla's saxpy computed ntid * (ctaid & 0xffff) + (tid &
// 0xffff), its bound compare and `<< 2` in four (two) strips per warp,
// stored both to their slots, and its narrow accesses then read lane 0 of
// the shifted index right after those vector stores (a store-forwarding
// stall on this host class); the warp loop had just written tid and ctaid
// for all lanes, which the strips read. With the accesses' narrow proof (the
// descriptor writes each var as base + lane or alike in every lane) every
// value of the chain is lane 0's plus a fixed step per lane modulo 2^32
// (NarrowLaneWalk), so lane 0 alone decides it; an unsigned compare of
// x_l = x_0 + k l (no wrap over the warp: x_0 + 31 k < 2^32) with a value
// alike in every lane has one outcome for all lanes when lanes 0 and 31
// agree (x is monotone over the warp).
namespace {
const Reg32 kIndexGprs[] = {util::ecx, util::esi, util::edi, util::r8d, util::r9d, util::r10d, util::r11d};  // eax, edx: scratch

// Whether operand j of an evaluated op is a constant the lane-0 version
// takes as an immediate (no register): a shift count, the constant operand
// of a commutative op (the first one only when the second is not constant),
// the subtrahend.
bool index_imm_operand(const ir::Function& f, const Inst& in, size_t j) {
  auto is_const = [&](size_t i) { return i < in.args.size() && f.insts[in.args[i]].op == Opcode::Const; };
  switch (in.op) {
    case Opcode::Shl: case Opcode::LShr: return j == 1;
    case Opcode::ISub: return j == 1 && is_const(1);
    case Opcode::And: case Opcode::Or: case Opcode::Xor: case Opcode::IAdd: case Opcode::IMul:
      return j == 1 ? is_const(1) : is_const(0) && !is_const(1);
    default: return false;
  }
}
}  // namespace

bool Emitter::index_segments_enabled() {
  static const bool yes = env_switch_on("GPURC_INDEX_LANE0");
  return yes;
}

const uint8_t* Emitter::step_vector(uint32_t step) {
  if (step == 1) return iota32();
  auto [it, fresh] = step_vectors_.try_emplace(step, nullptr);
  if (fresh) {
    uint8_t* p = pool_.alloc(4 * kWarpLanes);
    for (uint32_t i = 0; i < kWarpLanes; ++i) {
      const uint32_t d = i * step;
      std::memcpy(p + 4 * i, &d, 4);
    }
    it->second = p;
  }
  return it->second;
}

void Emitter::plan_index_segments() {
  if (!index_segments_enabled()) return;  // (warp_loop_ and draw_loop_ are known at emission)
  for (const auto& [acc, m] : indexed_) {
    if (!m.narrow || m.run_flag < 0) continue;
    const ValueId checked = m.seq_index != kNoValue ? m.seq_index : m.index;
    const int32_t seg = plan_.segment_of[checked];
    if (seg < 0 || index_segments_.count(uint32_t(seg)) || !plan_.segments[size_t(seg)].strip) continue;
    if (store_home_of_segment_.count(uint32_t(seg)) || plan_.strip_loop_of[plan_.segments[size_t(seg)].block] >= 0)
      continue;
    const NarrowRunFlag* nf = nullptr;
    for (const NarrowRunFlag& r : narrow_run_flags_)
      if (r.off == m.run_flag) nf = &r;
    if (!nf) continue;
    IndexSegment is;
    is.flag = nf->off;
    is.vars = nf->iota;
    is.vars.insert(is.vars.end(), nf->same.begin(), nf->same.end());
    const unsigned iota = (1u << nf->iota.size()) - 1;
    std::map<ValueId, size_t> at;  // evaluated op -> its index in is.ops
    std::vector<size_t> last_reader;
    bool ok = true;
    for (ValueId v : plan_.segments[size_t(seg)].ops) {
      if (deferred_[v]) continue;
      const Inst& in = f_.insts[v];
      if (!plan_.direct_phis[v].empty()) { ok = false; break; }
      NarrowLaneWalk w{f_, is.vars, iota, {}};
      uint32_t step = 0, cmp_step = 0;
      bool known = false;
      switch (in.op) {
        case Opcode::Const:
          known = in.type == ir::Type::I32 || in.type == ir::Type::I16 || in.type == ir::Type::I8;
          break;
        case Opcode::LoadUniform: {
          const unsigned bytes = in.type == ir::Type::I1 ? 0 : bit_width(in.type) / 8;
          known = (bytes == 4 || bytes == 2 || bytes == 1) && in.imm <= f_.uniform_bytes &&
                  f_.uniform_bytes - in.imm >= bytes;
          break;
        }
        case Opcode::LoadVar: known = in.type == ir::Type::I32 && w.step(v, 0, step); break;
        case Opcode::Zext: {
          const ir::Type t = f_.insts[in.args[0]].type;
          known = in.type == ir::Type::I32 && (t == ir::Type::I16 || t == ir::Type::I8) && at.count(in.args[0]) &&
                  (f_.insts[in.args[0]].op == Opcode::LoadUniform || f_.insts[in.args[0]].op == Opcode::Const);
          break;
        }
        case Opcode::And: case Opcode::Or: case Opcode::Xor: case Opcode::IAdd: case Opcode::ISub:
        case Opcode::IMul:
          known = in.type == ir::Type::I32 && w.step(v, 0, step);
          break;
        case Opcode::Shl: case Opcode::LShr:
          known = in.type == ir::Type::I32 && f_.insts[in.args[1]].op == Opcode::Const &&
                  f_.insts[in.args[1]].imm < 32 && w.step(v, 0, step);
          break;
        case Opcode::ICmp: {
          const auto p = ir::IntPred(in.attr);
          uint32_t sx = 0, sy = 1;
          known = in.type == ir::Type::I1 && in.args.size() == 2 &&
                  (p == ir::IntPred::Ult || p == ir::IntPred::Ule || p == ir::IntPred::Ugt || p == ir::IntPred::Uge) &&
                  f_.insts[in.args[0]].type == ir::Type::I32 && w.step(in.args[0], 0, sx) &&
                  w.step(in.args[1], 0, sy) && sy == 0 && sx != 0 && sx < (1u << 26);
          step = 0;  // (one outcome for the warp, or the general version)
          cmp_step = sx;
          break;
        }
        default: break;
      }
      // Every operand is an op evaluated before (the walk reads through
      // deferred ones only for its proof; their values come from here).
      for (ValueId a : in.args)
        if (in.op != Opcode::LoadVar && !at.count(a)) known = false;
      if (!known) { ok = false; break; }
      for (auto& wr : w.wraps) is.wraps.push_back(wr);
      for (size_t j = 0; j < in.args.size(); ++j)
        if (!index_imm_operand(f_, in, j)) last_reader[at[in.args[j]]] = is.ops.size();
      at[v] = is.ops.size();
      is.ops.push_back(v);
      is.steps.push_back(step);
      is.cmp_steps.push_back(cmp_step);
      last_reader.push_back(0);
    }
    if (!ok || std::find(is.ops.begin(), is.ops.end(), checked) == is.ops.end()) continue;
    // GPRs: an op's register is taken at its definition and given back after
    // its last reader (never reused by that reader's own result).
    std::vector<int> free_regs;
    for (int r = int(std::size(kIndexGprs)) - 1; r >= 0; --r) free_regs.push_back(r);
    // A unary or binary op whose first (register) operand dies here takes
    // that operand's register: its `mov r, a` goes.
    for (size_t k = 0; k < is.ops.size() && ok; ++k) {
      const Inst& in = f_.insts[is.ops[k]];
      ValueId first = kNoValue;
      switch (in.op) {
        case Opcode::Zext: case Opcode::Shl: case Opcode::LShr: first = in.args[0]; break;
        case Opcode::And: case Opcode::Or: case Opcode::Xor: case Opcode::IAdd: case Opcode::ISub:
        case Opcode::IMul:
          first = in.args[index_imm_operand(f_, in, 0) ? 1 : 0];
          break;
        default: break;
      }
      const bool reuse = first != kNoValue && at.count(first) && last_reader[at[first]] == k;
      if (reuse) {
        is.regs.push_back(is.regs[at[first]]);
      } else {
        if (free_regs.empty()) { ok = false; break; }
        is.regs.push_back(int8_t(free_regs.back()));
        free_regs.pop_back();
      }
      std::vector<ValueId> args = in.args;
      std::sort(args.begin(), args.end());
      args.erase(std::unique(args.begin(), args.end()), args.end());
      for (ValueId a : args)
        if (last_reader[at[a]] == k && !(reuse && a == first)) free_regs.push_back(is.regs[at[a]]);
      if (last_reader[k] == 0) free_regs.push_back(is.regs[k]);  // no evaluated reader (a reader comes later: > 0)
    }
    // Each no-wrap test runs where its var's lane 0 is loaded.
    for (const auto& wr : is.wraps)
      if (std::none_of(is.ops.begin(), is.ops.end(), [&](ValueId o) {
            return f_.insts[o].op == Opcode::LoadVar && f_.insts[o].imm == uint64_t(wr.first);
          }))
        ok = false;
    if (!ok) continue;
    for (size_t k = 0; k < is.ops.size(); ++k) is.read.push_back(last_reader[k] != 0);
    std::sort(is.wraps.begin(), is.wraps.end());
    is.wraps.erase(std::unique(is.wraps.begin(), is.wraps.end()), is.wraps.end());
    is.n_iota = nf->iota.size();
    for (size_t k = 0; k < is.ops.size(); ++k)
      if (f_.insts[is.ops[k]].op == Opcode::ICmp) is.decided_cmp = is.decided_cmp == -1 ? int32_t(k) : -2;
    if (is.decided_cmp < 0) is.decided_cmp = -1;
    // Lazy lanes: a stepped op whose every reader is a narrow access of a run
    // flag checking it (as the address operand, not data or mask), or a
    // deferred op (the address u + s) read that way alone: their fast paths
    // read lane 0 alone once the warp is proven, their cold paths rebuild.
    is.lazy.assign(is.ops.size(), 0);
    if (lazy_lanes_enabled())
      for (size_t k = 0; k < is.ops.size(); ++k) {
        const ValueId v = is.ops[k];
        // (A load_var's lanes live in the var, which the access may read.)
        if (is.steps[k] == 0 || is.read[k] || !plan_.escapes[v] || f_.insts[v].op == Opcode::LoadVar) continue;
        // A: the accesses checking v; D: their deferred ops (computed on
        // their cold paths alone). Every reader of v and of D is in D or A,
        // and an access reads them only as its address (not data or mask).
        std::set<ValueId> acc, dset;
        std::vector<ValueId> xs{v};  // v and the deferred ops that read it, directly or not
        bool lazy = true;
        for (const auto& [u, am] : indexed_) {
          if (!am.narrow || (am.seq_index != kNoValue ? am.seq_index : am.index) != v) continue;
          if (am.run_flag < 0 || (am.index_var >= 0 && am.seq_index == kNoValue)) lazy = false;  // (it reads the var)
          acc.insert(u);
          for (ValueId d : am.deferred)  // (operands before users)
            for (ValueId x : f_.insts[d].args)
              if (std::find(xs.begin(), xs.end(), x) != xs.end() && dset.insert(d).second) {
                xs.push_back(d);
                break;
              }
        }
        for (ValueId u = 0; u < f_.insts.size() && lazy; ++u) {
          const Inst& ui = f_.insts[u];
          if (ui.block == kNoBlock) continue;
          for (size_t j = 0; j < ui.args.size() && lazy; ++j) {
            if (std::find(xs.begin(), xs.end(), ui.args[j]) == xs.end()) continue;
            if (dset.count(u)) lazy = deferred_[u] && plan_.direct_phis[u].empty();
            else lazy = acc.count(u) && j == 0;
          }
        }
        if (acc.empty()) lazy = false;
        is.lazy[k] = lazy;
      }
    // The decided compare's slot, lazily: every reader is `and c, entry_mask`
    // (deferred) or c itself as the mask of a narrow access (their fast paths
    // take the lanes from the proven dword, their cold paths rebuild) or of a
    // vote that takes its lanes from a dominating access's mask cache.
    if (lazy_lanes_enabled() && is.decided_cmp >= 0 && !is.read[size_t(is.decided_cmp)]) {
      const ValueId c = is.ops[size_t(is.decided_cmp)];
      auto mask_reader = [&](ValueId u, ValueId m) {
        const Inst& ui = f_.insts[u];
        if (ui.args.empty() || ui.args.back() != m) return false;
        for (size_t j = 0; j + 1 < ui.args.size(); ++j)
          if (ui.args[j] == m) return false;
        if (auto ia = indexed_.find(u); ia != indexed_.end()) return ia->second.narrow && ia->second.run_flag >= 0;
        return (ui.op == Opcode::Any || ui.op == Opcode::All || ui.op == Opcode::Ballot) && vote_mask_cache_.count(u);
      };
      bool lazy = plan_.escapes[c] && plan_.direct_phis[c].empty();
      for (ValueId u = 0; u < f_.insts.size() && lazy; ++u) {
        const Inst& ui = f_.insts[u];
        if (ui.block == kNoBlock || std::find(ui.args.begin(), ui.args.end(), c) == ui.args.end()) continue;
        if (mask_reader(u, c)) continue;
        auto ms = mask_source_.find(u);
        if (ms == mask_source_.end() || ms->second != c || !deferred_[u] || !plan_.direct_phis[u].empty()) {
          lazy = false;
          break;
        }
        for (ValueId w = 0; w < f_.insts.size() && lazy; ++w) {
          const Inst& wi = f_.insts[w];
          if (wi.block != kNoBlock && std::find(wi.args.begin(), wi.args.end(), u) != wi.args.end())
            lazy = mask_reader(w, u);
        }
      }
      is.lazy[size_t(is.decided_cmp)] = lazy;
    }
    is.proven = int32_t(frame_bytes_);
    frame_bytes_ += 64;
    index_segments_.emplace(uint32_t(seg), std::move(is));
  }
  // The lane-0 vars: every load_var of the var is an op of index segments
  // of one run-flag record (their strips restore the lanes under that flag).
  if (!lane0_vars_enabled()) return;
  std::map<int, int32_t> flag_of_var;
  std::vector<uint8_t> evaluated(f_.insts.size(), 0);
  for (const auto& [seg, is] : index_segments_)
    for (ValueId v : is.ops) {
      evaluated[v] = 1;
      if (f_.insts[v].op != Opcode::LoadVar) continue;
      auto [it, fresh] = flag_of_var.try_emplace(int(f_.insts[v].imm), is.flag);
      if (!fresh && it->second != is.flag) it->second = -1;
    }
  for (const auto& [var, flag] : flag_of_var) {
    if (flag < 0 || var == lane0_var_) continue;
    bool only = true;
    for (ValueId v = 0; v < f_.insts.size() && only; ++v) {
      const Inst& in = f_.insts[v];
      if (in.block != kNoBlock && in.op == Opcode::LoadVar && in.imm == uint64_t(var)) only = evaluated[v] != 0;
    }
    if (only) {
      index_lane0_vars_.push_back(var);
      index_lane0_record_[var] = flag;
    }
  }
  index_tight_ok_ = !index_lane0_vars_.empty() && lane0_var_ < 0;
  for (const auto& [acc, m] : indexed_)
    if (m.narrow && m.run_flag >= 0)
      for (const auto& [var, mask] : m.narrow_wraps)
        if (auto it = index_lane0_record_.find(var); it != index_lane0_record_.end() && it->second != m.run_flag)
          index_tight_ok_ = false;
}

// d = lane 0 of lane var `var` (one of `vars`, the record's order) in a
// warp-loop call whose record at `record` is set: its descriptor entry's
// dword base (from the loop's bases of this warp) + lane_add[0]. Uses rax, rdx.
void Emitter::index_var_lane0(const Reg32& d, int var, int32_t record, const std::vector<int>& vars) {
  const int k = int(std::find(vars.begin(), vars.end(), var) - vars.begin());
  mov(rax, qword[rsp + kLoopBasesOffset]);
  movsxd(rdx, dword[r12 + record + 8 + 8 * k]);
  mov(d, dword[rax + rdx]);
  add(d, dword[r12 + record + 12 + 8 * k]);
}

// The segment's lane-0 version (plan_index_segments), before its strips:
// true when emitted; then it ends in a jump to `done` (past the strips) and
// falls through to the strips (the general version) on any other outcome.
bool Emitter::emit_index_segment(const Segment& s, Label& done) {
  auto it = index_segments_.find(uint32_t(plan_.segment_of[s.ops[0]]));
  if (it == index_segments_.end() || !warp_loop_ || draw_loop_ || strip_limit_) return false;
  const IndexSegment& is = it->second;
  for (ValueId v : is.ops)  // a slot to write that the version cannot: none of its types are wider
    if (lane_bytes(f_.insts[v].type) != 4) return false;
  auto reg_of = [&](ValueId a) {
    const size_t k = size_t(std::find(is.ops.begin(), is.ops.end(), a) - is.ops.begin());
    return kIndexGprs[is.regs[k]];
  };
  auto copy_to = [&](const Reg32& d, const Reg32& src) {  // (the same register: its operand died here)
    if (d.getIdx() != src.getIdx()) mov(d, src);
  };
  // Lane 0 of var is.vars[k] = its entry's dword base + lane_add[0]
  // (emit_lane_run_flags), read from the warp loop's bases, not the var.
  auto var_lane0 = [&](const Reg32& d, int var) { index_var_lane0(d, var, is.flag, is.vars); };
  // Lazy lanes only when no reader is emitted yet (each rebuilds on its cold
  // path after this segment's proven dword).
  std::vector<uint8_t> lazy = is.lazy;
  for (size_t k = 0; k < lazy.size(); ++k)
    for (ValueId u : narrow_fast_emitted_) {
      const IndexedAddress& am = indexed_.at(u);
      if ((am.seq_index != kNoValue ? am.seq_index : am.index) == is.ops[k] ||
          mask_lanes_value(f_.insts[u].args.back()) == is.ops[k])
        lazy[k] = 0;
    }
  it->second.lazy = lazy;
  Label general, strips;
  cmp(dword[r12 + is.flag], 0);
  je(strips, T_NEAR);
  if (std::any_of(is.ops.begin(), is.ops.end(), [&](ValueId v) { return f_.insts[v].op == Opcode::LoadUniform; })) {
    test(r15, r15);
    jz(general, T_NEAR);  // (the strips fault at the load)
  }
  for (size_t k = 0; k < is.ops.size(); ++k) {
    const ValueId v = is.ops[k];
    const Inst& in = f_.insts[v];
    const Reg32 r = kIndexGprs[is.regs[k]];
    const bool slot_written = plan_.escapes[v] && !prefilled_[v];
    if (!is.read[k] && !slot_written && in.op != Opcode::ICmp) continue;  // (a compare decides the warp)
    switch (in.op) {
      case Opcode::Const: mov(r, uint32_t(in.imm & type_mask(in.type))); break;
      case Opcode::LoadUniform: {
        const unsigned bytes = bit_width(in.type) / 8;
        if (bytes == 4) mov(r, dword[r15 + int(in.imm)]);
        else if (bytes == 2) movzx(r, word[r15 + int(in.imm)]);
        else movzx(r, byte[r15 + int(in.imm)]);
        break;
      }
      case Opcode::LoadVar:
        var_lane0(r, int(in.imm));
        for (const auto& [var, m] : is.wraps) {  // (x_0 & m) + 31 <= m: `and x, m` steps by 1 over the warp
          if (var != int(in.imm)) continue;
          if (m == 0xffff) movzx(eax, r.cvt16());
          else {
            mov(eax, r);
            and_(eax, m);
          }
          cmp(eax, m - 31);
          ja(general, T_NEAR);
        }
        break;
      case Opcode::Zext: copy_to(r, reg_of(in.args[0])); break;
      case Opcode::Shl:
      case Opcode::LShr:
        copy_to(r, reg_of(in.args[0]));
        if (in.op == Opcode::Shl) shl(r, uint8_t(f_.insts[in.args[1]].imm));
        else shr(r, uint8_t(f_.insts[in.args[1]].imm));
        break;
      case Opcode::ICmp: {
        // x_l = x_0 + k l, no wrap: lanes 0 and 31 agree, or the strips decide.
        const Reg32 x = reg_of(in.args[0]), y = reg_of(in.args[1]);
        const uint32_t sx = is.cmp_steps[k];
        auto setcc = [&](const Reg8& d) {
          switch (ir::IntPred(in.attr)) {
            case ir::IntPred::Ult: setb(d); break;
            case ir::IntPred::Ule: setbe(d); break;
            case ir::IntPred::Ugt: seta(d); break;
            default: setae(d); break;
          }
        };
        const ir::IntPred pred = ir::IntPred(in.attr);
        if (pred == ir::IntPred::Ult || pred == ir::IntPred::Ule) {
          // Every lane true when lane 31's x_0 + 31 k (64-bit: the GPRs'
          // upper halves are 0) is below (at most) y, which also rules out
          // a carry; every lane false when lane 0 is not and nothing
          // carries; else the strips.
          Label not_all, decided;
          lea(rax, ptr[x.cvt64() + int32_t(31 * sx)]);
          cmp(rax, y.cvt64());
          if (pred == ir::IntPred::Ult) jae(not_all, T_NEAR);
          else ja(not_all, T_NEAR);
          const bool value_read = is.read[k] || (slot_written && !lazy[k]);  // (else the proven dword alone)
          if (value_read) mov(r, 1);
          if (is.decided_cmp == int32_t(k)) mov(dword[r12 + is.proven], 2);
          jmp(decided, T_NEAR);
          L(not_all);
          shr(rax, 32);
          jnz(general, T_NEAR);
          cmp(x, y);
          if (pred == ir::IntPred::Ult) jb(general, T_NEAR);
          else jbe(general, T_NEAR);
          if (value_read) xor_(r, r);
          if (is.decided_cmp == int32_t(k)) mov(dword[r12 + is.proven], 1);
          L(decided);
          break;
        }
        mov(eax, x);
        add(rax, int32_t(31 * sx));
        mov(rdx, rax);
        shr(rdx, 32);
        jnz(general, T_NEAR);
        mov(edx, y);
        cmp(rax, rdx);
        setcc(dl);
        cmp(x, y);
        setcc(al);
        cmp(al, dl);
        jne(general, T_NEAR);
        movzx(r, al);
        if (is.decided_cmp == int32_t(k)) {
          lea(eax, ptr[r.cvt64() + 1]);  // 1 + the outcome
          mov(dword[r12 + is.proven], eax);
        }
        break;
      }
      default: {  // the binary integer ops of plan_index_segments
        const bool swap = index_imm_operand(f_, in, 0);  // (a commutative op's constant first operand)
        const ValueId a = in.args[swap ? 1 : 0], b = in.args[swap ? 0 : 1];
        copy_to(r, reg_of(a));
        // r = r op b, b a register or (a constant operand) an immediate.
        auto apply = [&](const auto& operand) {
          switch (in.op) {
            case Opcode::And: and_(r, operand); break;
            case Opcode::Or: or_(r, operand); break;
            case Opcode::Xor: xor_(r, operand); break;
            case Opcode::IAdd: add(r, operand); break;
            case Opcode::ISub: sub(r, operand); break;
            default:
              if constexpr (std::is_same_v<std::decay_t<decltype(operand)>, uint32_t>) imul(r, r, int(operand));
              else imul(r, operand);
              break;
          }
        };
        if (swap || index_imm_operand(f_, in, 1)) apply(uint32_t(f_.insts[b].imm));
        else apply(reg_of(b));
        break;
      }
    }
    if (!slot_written) continue;
    if (lazy[k] && in.op == Opcode::ICmp) continue;  // the proven dword holds it (1 + outcome)
    if (lazy[k]) {  // lane 0 alone: its readers rebuild the rest when they need it
      mov(dword[r12 + int(slot(v))], r);
      continue;
    }
    // Its slot, as the strips would write it: lane 0 + step * l; then lane
    // 0 once more as a dword (a lane-0 reader forwards from that store).
    bcast_gpr(1, r);
    for (int o = 0; o < 4 * kWarpLanes; o += vbytes_) {
      if (is.steps[k] == 0) {
        vstore(ptr[r12 + int(slot(v) + uint32_t(o))], 1);
        continue;
      }
      vpaddd(V(0), V(1), ptr[rip + step_vector(is.steps[k]) + o]);
      vstore(ptr[r12 + int(slot(v) + uint32_t(o))], 0);
    }
    if (is.steps[k] != 0) mov(dword[r12 + int(slot(v))], r);
  }
  if (is.decided_cmp < 0) mov(dword[r12 + is.proven], 1);  // (else written where the compare decided)
  jmp(done, T_NEAR);
  index_emitted_.push_back(it->first);
  L(general);
  // The strips read every lane of the vars: lanes 0..31 of each lane-0 var
  // (the loop may have written lane 0 alone) as the descriptor's entry
  // writes them, lane 0 + l (iota) or lane 0 (alike).
  if (lane0_loop())
    for (size_t k = 0; k < is.vars.size(); ++k) {
      const int var = is.vars[k];
      if (std::find(index_lane0_vars_.begin(), index_lane0_vars_.end(), var) == index_lane0_vars_.end()) continue;
      const uint32_t off = var_offsets_[uint32_t(var)];
      var_lane0(eax, var);
      bcast_gpr(1, eax);
      for (int o = 0; o < 4 * kWarpLanes; o += vbytes_) {
        if (k < is.n_iota) {
          vpaddd(V(0), V(1), ptr[rip + iota32() + o]);
          vstore(ptr[r13 + int(off + uint32_t(o))], 0);
        } else {
          vstore(ptr[r13 + int(off + uint32_t(o))], 1);
        }
      }
    }
  L(strips);
  mov(dword[r12 + is.proven], 0);
  return true;
}

}  // namespace gpurc::x64
