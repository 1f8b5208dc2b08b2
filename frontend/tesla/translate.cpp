// Tesla -> pre-SSA IR (see translate.h for the state layout and docs/tesla.md
// "Translation to IR" for the choices).
//
// Control flow is per lane: a predicated bra is a cond_br and the IR's own
// divergence handling reconverges the lanes, so joinat and the join marker
// need no code. What the hardware keeps on the warp stack for call/ret and
// prebrk/brk is known statically in most programs: every word is translated
// once per stack it is reached with (clone_contexts), so ret and brk branch
// directly. Otherwise the stack is kept per lane in private vars (a small
// stack of kind << 28 | word address entries) and ret and brk pop it in a
// dispatch block that compares the popped address against the possible
// return or break sites.
#include "frontend/tesla/translate.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>

#include "ir/builder.h"
#include "runtime/barrier.h"

namespace gpurc::tesla {

namespace {

using ir::Opcode;
using ir::Type;
using V = ir::ValueId;

// While translating, every piece of state has a var at these indices and the
// private vars follow; compact_vars() then drops the vars nothing uses (the
// public layout is by name: translate.h).
constexpr uint32_t kVarA = 0;
constexpr uint32_t kVarC = 8;  // $cN flag k (Z S C O) at kVarC + 4 N + k, I1
constexpr uint32_t kVarExited = 24;
constexpr uint32_t kVarCtaid = 25;
constexpr uint32_t kVarLocalBase = 26;
constexpr uint32_t kVarAbiWriter = 27;
constexpr uint32_t kVarR = 28;
constexpr char kFlagNames[4] = {'z', 's', 'c', 'o'};
constexpr uint32_t kNumVarsTranslating = kVarR + 128;
constexpr uint32_t kVarSp = kNumVarsTranslating;           // I32: stack depth
constexpr uint32_t kVarLimDepth = kNumVarsTranslating + 1; // I32: limited-call entries on the stack
constexpr uint32_t kVarStack = kNumVarsTranslating + 2;    // I32 x kStackDepth
constexpr unsigned kStackDepth = 16;
// I32: the entry the ret/brk dispatch popped. It crosses blocks in a var, not
// as an SSA value: while one lane waits in the dispatch chain, other lanes may
// run the pop block again, and the IR interpreter recomputes pure values for
// inactive lanes too (docs/ir.md: their values are unspecified).
constexpr uint32_t kVarPopped = kVarStack + kStackDepth;
// I64: Space::Local address of the thread's a[0]; its o[0] is at + kOutDelta.
constexpr uint32_t kVarAttrBase = kVarPopped + 1;
// I32: descriptor of the barrier the warp stops at (rt::barrier_word) and
// the lane's stop count (or, when the code has one descriptor, that word
// with rt::kBarrierOneKind), read by the runtime's counted-barrier scheduler.
constexpr uint32_t kVarBarrier = kVarAttrBase + 1;

enum Entry : uint32_t { kEntryPreBrk = 1, kEntryCall = 2, kEntryCallLim = 3 };


uint32_t float_flags(bool ftz_in, bool ftz_out, ir::Round r = ir::Round::NearestEven, bool sat = false) {
  uint32_t f = ir::with_nan(0, ir::NanRule::AllOnes);
  f = ir::with_round(f, r);
  if (ftz_in) f |= ir::ff::FtzIn;
  if (ftz_out) f |= ir::ff::FtzOut;
  if (sat) f |= ir::ff::Sat;
  return f;
}

struct Translator {
  const std::vector<uint32_t>& code;
  const TranslateOptions& opt;
  ir::Function& f;
  ir::Builder b;
  std::string& err;

  std::map<uint32_t, Insn> insns;            // reachable instructions by word address
  std::set<uint32_t> ret_sites, brk_sites, loop_heads, decode_errors;
  bool uses_stack = false;
  ir::BlockId ret_dispatch = ir::kNoBlock, brk_dispatch = ir::kNoBlock;

  // Per-instruction state.
  const Insn* cur = nullptr;
  uint32_t pc = 0;
  V guard = ir::kNoValue;  // i1 predicate of the instruction, kNoValue = always
  struct PostInc {
    int areg;
    int64_t delta;
  };
  std::vector<PostInc> postinc;

  Translator(const std::vector<uint32_t>& c, const TranslateOptions& o, ir::Function& out, std::string& e)
      : code(c), opt(o), f(out), b(out), err(e) {}

  bool fail(const std::string& what) {
    char buf[64];
    std::snprintf(buf, sizeof buf, " at word 0x%x", pc);
    err = what + (cur ? " '" + format(*cur) + "'" : std::string()) + buf;
    return false;
  }
  bool unsupported(const char* why) { return fail(std::string("cannot translate ") + op_name(cur->op) + " (" + why + ")"); }

  // ret/brk whose stack entry is known statically (word address -> the
  // address it continues at): see resolve_stack().
  std::map<uint32_t, uint32_t> resolved_exits;

  // Blocks per (word, static stack): see clone_contexts(). Without cloning
  // every word has one block, context 0.
  using Stack = std::vector<uint32_t>;
  std::map<Stack, int> ctx_ids;
  std::vector<Stack> ctx_stacks;
  std::map<std::pair<uint32_t, int>, ir::BlockId> node_blocks;
  bool cloned = false;
  int cur_ctx = 0;

  // Pops to the first call entry (want_call) or prebrk entry (!want_call);
  // false if the stack runs out.
  static bool pop_entry(Stack st, bool want_call, uint32_t& addr, Stack& rest) {
    while (!st.empty()) {
      uint32_t e = st.back();
      st.pop_back();
      if (((e >> 28) != kEntryPreBrk) == want_call) {
        addr = e & 0x0fffffffu;
        rest = std::move(st);
        return true;
      }
    }
    return false;
  }

  // Translates every word once per call/prebreak stack it can be reached
  // with (calls are inlined, loops keep their own break targets), so every
  // ret/brk knows the entry it pops and the CFG has no edges between
  // unrelated call sites or loops. Those edges formed spurious cycles through
  // shared function bodies and dispatch blocks, and the minimum-PC order then
  // let lanes run ahead of lanes still inside a call or loop (vote, shared
  // memory and flag mismatches in the fuzz campaign). False (and nothing
  // cloned) when the stacks do not stay bounded (recursion) or the copies
  // would be too many; the translation then uses one block per word.
  bool clone_contexts() {
    auto id = [&](const Stack& st) {
      auto [it, fresh] = ctx_ids.emplace(st, int(ctx_stacks.size()));
      if (fresh) ctx_stacks.push_back(st);
      return it->second;
    };
    std::vector<std::pair<uint32_t, int>> work;
    auto flow = [&](int64_t p, const Stack& st) {
      if (p < 0 || !insns.count(uint32_t(p)) || st.size() > kStackDepth) return;
      std::pair<uint32_t, int> n{uint32_t(p), id(st)};
      if (!node_blocks.count(n)) node_blocks.emplace(n, ir::kNoBlock), work.push_back(n);
    };
    size_t limit = 4 * insns.size() + 256;
    flow(opt.entry, {});
    while (!work.empty()) {
      if (node_blocks.size() > limit) return false;
      auto [p, c] = work.back();
      work.pop_back();
      const Insn& in = insns.at(p);
      const Stack st = ctx_stacks[size_t(c)];
      uint32_t next = p + in.words;
      if (decode_errors.count(p)) continue;
      if (!in.is_control) {
        if (!in.exit) flow(next, st);
        continue;
      }
      int64_t t = -1;
      branch_target(in, t);
      auto push = [&](uint32_t e) {
        Stack s2 = st;
        s2.push_back(e);
        return s2;
      };
      switch (in.op) {
        case Op::Bra:
          flow(t, st);
          if (in.pred != 15) flow(next, st);
          break;
        case Op::Call:
          flow(t, push((in.has("lim") ? kEntryCallLim : kEntryCall) << 28 | next));
          if (in.has("lim")) flow(next, st);
          break;
        case Op::PreRet: flow(next, push(kEntryCall << 28 | uint32_t(t))); break;
        case Op::PreBrk: flow(next, push(kEntryPreBrk << 28 | uint32_t(t))); break;
        case Op::Ret:
        case Op::Brk: {
          uint32_t addr = 0;
          Stack rest;
          if (pop_entry(st, in.op == Op::Ret, addr, rest)) flow(addr, rest);
          if (in.pred != 15) flow(next, st);
          break;
        }
        case Op::Trap: break;
        default: flow(next, st); break;
      }
    }
    return true;
  }

  // ------------------------------------------------------------ discovery
  static bool branch_target(const Insn& in, int64_t& t) {
    for (auto& a : in.atoms)
      if (a.type == Atom::Opnd && a.op.kind == OKind::Imm) {
        t = a.op.imm / 4;
        return true;
      }
    return false;
  }

  // Follows the call/prebreak stack along every path from the entry (entries
  // as pushed at run time, kind << 28 | address). Where all paths reaching a
  // ret or brk agree on the stack, the entry it pops is known and the
  // translation branches there directly instead of through the shared
  // dispatch: a shared dispatch has edges from every break to every break
  // target, which makes all loops one cycle in the CFG, so the minimum-PC
  // order no longer keeps a loop's lanes ahead of the code after it (lanes
  // left a loop early and ran a vote before the others had caught up).
  void resolve_stack() {
    std::map<uint32_t, std::vector<uint32_t>> at;  // stack on entry to a word
    std::set<uint32_t> conflict;
    std::vector<uint32_t> work;
    auto flow = [&](uint32_t p, const std::vector<uint32_t>& st) {
      if (!insns.count(p) || conflict.count(p)) return;
      auto [it, fresh] = at.emplace(p, st);
      if (fresh) work.push_back(p);
      else if (it->second != st) conflict.insert(p), work.push_back(p);
    };
    flow(opt.entry, {});
    std::set<uint32_t> unresolved;
    while (!work.empty()) {
      uint32_t p = work.back();
      work.pop_back();
      const Insn& in = insns.at(p);
      uint32_t next = p + in.words;
      if (decode_errors.count(p)) continue;
      if (conflict.count(p)) {
        // Unknown stack from here on: everything reachable stays unresolved.
        if (unresolved.insert(p).second) {
          int64_t t = -1;
          branch_target(in, t);
          for (int64_t s : {int64_t(next), t})
            if (s >= 0 && insns.count(uint32_t(s)) && !conflict.count(uint32_t(s)))
              conflict.insert(uint32_t(s)), work.push_back(uint32_t(s));
          if (in.op == Op::Ret || in.op == Op::Brk) {
            for (uint32_t s : in.op == Op::Ret ? ret_sites : brk_sites)
              if (insns.count(s) && !conflict.count(s)) conflict.insert(s), work.push_back(s);
          }
        }
        continue;
      }
      std::vector<uint32_t> st = at.at(p);
      if (st.size() > kStackDepth) continue;  // overflows: traps at run time
      if (!in.is_control) {
        if (!in.exit) flow(next, st);
        continue;
      }
      int64_t t = -1;
      bool has_t = branch_target(in, t);
      auto push = [&](uint32_t e) {
        std::vector<uint32_t> s2 = st;
        s2.push_back(e);
        return s2;
      };
      switch (in.op) {
        case Op::Bra:
          if (has_t && t >= 0) flow(uint32_t(t), st);
          if (in.pred != 15) flow(next, st);
          break;
        case Op::Call:
          if (has_t && t >= 0) flow(uint32_t(t), push((in.has("lim") ? kEntryCallLim : kEntryCall) << 28 | next));
          if (in.has("lim")) flow(next, st);
          break;
        case Op::PreRet: flow(next, push(kEntryCall << 28 | uint32_t(t))); break;
        case Op::PreBrk: flow(next, push(kEntryPreBrk << 28 | uint32_t(t))); break;
        case Op::Ret:
        case Op::Brk: {
          uint32_t addr = 0;
          std::vector<uint32_t> rest;
          if (pop_entry(st, in.op == Op::Ret, addr, rest)) {
            resolved_exits[p] = addr;
            flow(addr, rest);
          }
          if (in.pred != 15) flow(next, st);
          break;
        }
        case Op::Trap: break;
        default: flow(next, st); break;
      }
    }
    // A site reached with differing stacks makes every ret/brk after it unknown.
    for (uint32_t p : conflict) resolved_exits.erase(p);
    for (uint32_t p : unresolved) resolved_exits.erase(p);
  }

  bool discover() {
    std::vector<uint32_t> work{opt.entry};
    auto add = [&](int64_t t) {
      if (t >= 0 && uint64_t(t) < code.size() && !insns.count(uint32_t(t))) work.push_back(uint32_t(t));
    };
    while (!work.empty()) {
      uint32_t p = work.back();
      work.pop_back();
      if (insns.count(p) || p >= code.size()) continue;
      Insn in = decode(code.data(), code.size(), p, opt.target);
      pc = p;
      cur = nullptr;
      // An instruction the hardware refuses faults when it is reached (as in
      // the interpreter): it becomes a decode trap, not a translation error.
      if (check(in, p) != DecodeError::None) {
        decode_errors.insert(p);
        insns.emplace(p, std::move(in));
        continue;
      }
      uint32_t next = p + in.words;
      auto& slot = insns.emplace(p, std::move(in)).first->second;
      int64_t t = -1;
      if (slot.is_control) {
        bool has_t = branch_target(slot, t);
        switch (slot.op) {
          case Op::Bra:
            if (has_t) add(t);
            if (has_t && t <= int64_t(p)) loop_heads.insert(uint32_t(t));
            add(next);
            break;
          case Op::Call:
            if (has_t) add(t), loop_heads.insert(uint32_t(t));
            ret_sites.insert(next), add(next), uses_stack = true;
            break;
          case Op::PreRet:
            if (has_t) ret_sites.insert(uint32_t(t)), add(t);
            add(next), uses_stack = true;
            break;
          case Op::PreBrk:
            if (has_t) brk_sites.insert(uint32_t(t)), add(t);
            add(next), uses_stack = true;
            break;
          case Op::Ret:
          case Op::Brk: add(next), uses_stack = true; break;
          case Op::Trap: break;
          default: add(next); break;
        }
      } else if (!slot.exit) {
        add(next);
      }
    }
    for (uint32_t s : ret_sites) loop_heads.insert(s);
    for (uint32_t s : brk_sites) loop_heads.insert(s);
    return true;
  }

  // ------------------------------------------------------------ state access
  V reg(int n) { return unsigned(n) < opt.regs && n < 128 ? b.get_var(kVarR + unsigned(n)) : b.i32(0); }
  void set_reg(int n, V v) {
    if (unsigned(n) >= opt.regs || n >= 128) return;
    if (guard != ir::kNoValue) v = b.select(guard, v, b.get_var(kVarR + unsigned(n)));
    b.set_var(kVarR + unsigned(n), v);
  }
  static bool areg_is_zero(int n) { return n <= 0 || n == 5 || n == 6 || n > 7; }
  V areg(int n) { return areg_is_zero(n) ? b.i32(0) : b.get_var(kVarA + unsigned(n)); }
  bool set_areg(int n, V v) {
    if (areg_is_zero(n)) return true;
    if (n == 7) return unsupported("$a7 is one register per warp");
    v = b.binary(Opcode::And, v, b.i32(0xffff));
    if (guard != ir::kNoValue) v = b.select(guard, v, b.get_var(kVarA + unsigned(n)));
    b.set_var(kVarA + unsigned(n), v);
    return true;
  }
  // $c registers live as four i1 vars (Z S C O): flag producers build a
  // packed value with pack(), and set_creg() stores its parts as they are
  // (the packed value itself is dead unless read as a value, e.g. `mov $r
  // $c`); predicates read the parts. A packed var would be unpacked at every
  // predicate and packed at every flag write, ~15 ops per `set`/`bra` pair.
  struct FlagBits {
    V f[4];
  };
  std::map<V, FlagBits> packs;
  V pack(V z, V sn, V c, V o) {
    V v = bin(Opcode::Or, bin(Opcode::Or, to_i32(z), shl(to_i32(sn), 1)),
              bin(Opcode::Or, shl(to_i32(c), 2), shl(to_i32(o), 3)));
    packs[v] = FlagBits{{z, sn, c, o}};
    return v;
  }
  V cflag(int n, unsigned k) { return b.get_var(kVarC + 4 * unsigned(n & 3) + k); }
  V creg(int n) { return pack(cflag(n, 0), cflag(n, 1), cflag(n, 2), cflag(n, 3)); }
  void set_creg(int n, V v) {
    auto it = packs.find(v);
    FlagBits fb;
    for (unsigned k = 0; k < 4; ++k) fb.f[k] = it != packs.end() ? it->second.f[k] : ne0(band(v, 1u << k));
    for (unsigned k = 0; k < 4; ++k) {
      V x = fb.f[k];
      if (guard != ir::kNoValue) x = b.select(guard, x, cflag(n, k));
      b.set_var(kVarC + 4 * unsigned(n & 3) + k, x);
    }
  }
  void set_flags(V fl) {
    if (const Operand* c = cur->find(Role::CDst)) set_creg(c->reg, fl);
  }

  V mask() { return guard != ir::kNoValue ? guard : b.i1(true); }
  V k32(uint32_t v) { return b.i32(v); }
  V bin(Opcode op, V x, V y, uint8_t attr = 0, uint32_t fflags = 0) { return b.binary(op, x, y, attr, fflags); }
  V band(V x, uint32_t m) { return bin(Opcode::And, x, k32(m)); }
  V shr(V x, unsigned n) { return b.emit(Opcode::LShr, Type::I32, {x, k32(n)}, uint8_t(ir::ShiftMode::Clamp)); }
  V shl(V x, unsigned n) { return b.emit(Opcode::Shl, Type::I32, {x, k32(n)}, uint8_t(ir::ShiftMode::Clamp)); }
  V bit(V x, unsigned n) { return band(shr(x, n), 1); }
  V to_i32(V c) { return b.convert(Opcode::Zext, Type::I32, c); }
  V ne0(V x) { return b.icmp(ir::IntPred::Ne, x, k32(0)); }
  V eq0(V x) { return b.icmp(ir::IntPred::Eq, x, k32(0)); }
  V sel32(V c, uint32_t t, uint32_t e) { return b.select(c, k32(t), k32(e)); }

  // Z=1 S=2 of an integer result of `bits` (16 or 32).
  V flags_int(V res, unsigned bits, V C = ir::kNoValue, V O = ir::kNoValue) {
    V m = bits == 16 ? band(res, 0xffff) : res;
    V sn = bits == 16 ? ne0(bit(m, 15)) : b.icmp(ir::IntPred::Slt, m, k32(0));
    return pack(eq0(m), sn, C == ir::kNoValue ? b.i1(false) : C, O == ir::kNoValue ? b.i1(false) : O);
  }
  // C=4 and O=8 of add_flags() with the Z/S flags of the result.
  V flags_add(V res, unsigned bits, V C, V O) { return flags_int(res, bits, C, O); }
  // 24-bit multiply: the low 32 bits of the product, or (high) bits 16..47.
  // The low word is the 32-bit product of the extended operands (arithmetic
  // mod 2^32), so only `high` needs the 64-bit product.
  V mul24(V x, V y, bool sg, bool high) {
    auto ext = [&](V v) {
      return b.emit(Opcode::BfExtract, Type::I32, {v, k32(0), k32(24)}, uint8_t(sg ? ir::Sign::Signed : ir::Sign::Unsigned));
    };
    if (!high) return bin(Opcode::IMul, ext(x), ext(y));
    auto wide = [&](V v) { return b.convert(sg ? Opcode::Sext : Opcode::Zext, Type::I64, ext(v)); };
    V prod = bin(Opcode::IMul, wide(x), wide(y));
    prod = b.emit(Opcode::LShr, Type::I64, {prod, k32(16)}, uint8_t(ir::ShiftMode::Clamp));
    return b.convert(Opcode::Trunc, Type::I32, prod);
  }
  // Sum, carry and signed overflow of x + y + cin over `bits` (16 or 32; x
  // and y zero-extended to i32). Written with ops every JIT tier has natively
  // (icarry/ioverflow go through a per-lane helper there): the carry is the
  // sum wrapping below x (or reaching it with a carry in), the overflow the
  // sign rule ((x ^ s) & (y ^ s)) < 0.
  void add_flags(V x, V y, V cin, unsigned bits, V& res, V& C, V& O) {
    V sum = bin(Opcode::IAdd, bin(Opcode::IAdd, x, y), to_i32(cin));
    V ovf = bin(Opcode::And, bin(Opcode::Xor, x, sum), bin(Opcode::Xor, y, sum));
    if (bits == 16) {
      res = band(sum, 0xffff);
      C = ne0(bit(sum, 16));
      O = ne0(bit(ovf, 15));
      return;
    }
    res = sum;
    V wrapped = b.icmp(ir::IntPred::Ult, sum, x);
    C = bin(Opcode::Or, wrapped, bin(Opcode::And, cin, b.icmp(ir::IntPred::Eq, sum, x)));
    O = b.icmp(ir::IntPred::Slt, ovf, k32(0));
  }
  // Z: zero or NaN, S: negative or NaN.
  V flags_float(V res) {
    V mag = band(res, 0x7fffffffu);
    V nan = b.icmp(ir::IntPred::Ugt, mag, k32(0x7f800000u));
    V z = bin(Opcode::Or, nan, eq0(mag));
    V s = bin(Opcode::Or, nan, b.icmp(ir::IntPred::Ne, shr(res, 31), k32(0)));
    return pack(z, s, b.i1(false), b.i1(false));
  }
  V flags_double(V res64) {
    V f = b.convert(Opcode::Bitcast, Type::F64, res64);
    V nan = b.fcmp(ir::FloatPred::Uno, f, f);
    V z = bin(Opcode::Or, nan, b.fcmp(ir::FloatPred::Oeq, f, b.constant(Type::F64, 0)));
    V sign = b.icmp(ir::IntPred::Slt, res64, b.i64(0));
    V s = bin(Opcode::Or, nan, sign);
    return pack(z, s, b.i1(false), b.i1(false));
  }

  // The 32 predicate conditions of a $c register (sem::pred).
  V pred(int creg_n, unsigned code) {
    if (code == 15) return b.i1(true);
    V Z = cflag(creg_n, 0), S = cflag(creg_n, 1), C = cflag(creg_n, 2), O = cflag(creg_n, 3);
    auto NOT = [&](V x) { return b.unary(Opcode::Not, x); };
    auto AND = [&](V x, V y) { return bin(Opcode::And, x, y); };
    auto OR = [&](V x, V y) { return bin(Opcode::Or, x, y); };
    auto XOR = [&](V x, V y) { return bin(Opcode::Xor, x, y); };
    switch (code) {
      case 0x01: return XOR(AND(S, NOT(Z)), O);
      case 0x02: return AND(Z, NOT(S));
      case 0x03: return XOR(S, OR(Z, O));
      case 0x04: return AND(NOT(Z), NOT(XOR(S, O)));
      case 0x05: return NOT(Z);
      case 0x06: return NOT(XOR(S, O));
      case 0x07: return OR(NOT(Z), NOT(S));
      case 0x08: return AND(Z, S);
      case 0x09: return XOR(S, O);
      case 0x0a: return Z;
      case 0x0b: return OR(Z, XOR(S, O));
      case 0x0c: return XOR(NOT(S), OR(Z, O));
      case 0x0d: return OR(NOT(Z), S);
      case 0x0e: return XOR(OR(NOT(S), Z), O);
      case 0x10: return O;
      case 0x11: return C;
      case 0x12: return AND(NOT(Z), C);
      case 0x13: return S;
      case 0x1c: return NOT(S);
      case 0x1d: return OR(Z, NOT(C));
      case 0x1e: return NOT(C);
      case 0x1f: return NOT(O);
      default: return b.i1(false);
    }
  }

  // ------------------------------------------------------------ memory
  // Byte address (i64) of a memory operand; post-increments are queued.
  V address(const Operand& o) {
    if (o.space == 'g') return bin(Opcode::Or, b.convert(Opcode::Zext, Type::I64, reg(o.greg)),
                                   b.i64(global_address(unsigned(o.idx < 0 ? 0 : o.idx), 0)));
    V base = o.areg > 0 ? areg(o.areg) : k32(0);
    V a;
    if (o.postinc) {
      postinc.push_back(PostInc{o.areg, o.offset});
      a = band(base, 0xffff);
    } else {
      a = band(bin(Opcode::IAdd, base, k32(uint32_t(o.offset))), 0xffff);
    }
    V a64 = b.convert(Opcode::Zext, Type::I64, a);
    if (o.space == 'c') return bin(Opcode::Or, a64, b.i64(const_address(unsigned(o.idx < 0 ? 0 : o.idx), 0)));
    return a64;  // l[]: bounds and the thread's base are applied by checked()
  }
  // Final address for an access of `bytes`: misaligned and (l[]) out-of-range
  // accesses go to kUnbackedAddress.
  V checked(const Operand& o, V a64, unsigned bytes) {
    V bad = b.icmp(ir::IntPred::Ne, bin(Opcode::And, a64, b.i64(bytes - 1)), b.i64(0));
    V a = a64;
    if (o.space == 'l') {
      V end = bin(Opcode::IAdd, a64, b.i64(bytes));
      bad = bin(Opcode::Or, bad, b.icmp(ir::IntPred::Ugt, end, b.i64(opt.lmem)));
      a = bin(Opcode::IAdd, a64, b.get_var(kVarLocalBase));
    } else if (o.space == 'a' || o.space == 'o') {
      // a[] (inputs) and o[] (outputs): attr_bytes per thread, beside each other.
      V end = bin(Opcode::IAdd, a64, b.i64(bytes));
      bad = bin(Opcode::Or, bad, b.icmp(ir::IntPred::Ugt, end, b.i64(opt.attr_bytes)));
      a = bin(Opcode::IAdd, a64, b.get_var(kVarAttrBase));
      if (o.space == 'o') a = bin(Opcode::IAdd, a, b.i64(kOutDelta));
    }
    return b.select(bad, b.i64(kUnbackedAddress), a);
  }
  bool space_of(const Operand& o, ir::Space& s) {
    switch (o.space) {
      case 'g': s = ir::Space::Global; return true;
      case 'c': s = ir::Space::Const; return true;
      case 's': s = ir::Space::Shared; return true;
      case 'l': s = ir::Space::Local; return true;
      case 'a': s = ir::Space::Local; return true;  // checked() adds attr_base
      case 'o': s = ir::Space::Local; return true;
      default: return unsupported("v[]/p[] spaces are not translated (a[] and o[] are)");
    }
  }
  // Loads `bytes` (1, 2, 4, 8) as an i32 (zero-extended) or i64.
  bool load(const Operand& o, V a64, unsigned bytes, V& out) {
    ir::Space s = ir::Space::Global;
    if (!space_of(o, s)) return false;
    V a = checked(o, a64, bytes);
    Type t = bytes == 1 ? Type::I8 : bytes == 2 ? Type::I16 : bytes == 4 ? Type::I32 : Type::I64;
    V v = b.load(t, s, ir::AddrClass::Random, a, mask());
    out = bytes < 4 ? b.convert(Opcode::Zext, Type::I32, v) : v;
    return true;
  }
  // s[] at a constant address inside the launch ABI block (ntid, nctaid,
  // ctaid, params) when no instruction stores to s[]: the block keeps what
  // the ABI writer put there, so the value comes from the uniform block (or
  // the ctaid var) instead of a shared-memory load per lane. The access is
  // aligned and inside s[] (smem >= 0x10 + params), so it cannot fault.
  bool abi_stable = false;
  bool abi_load(const Operand& o, unsigned bytes, V& out) {
    if (!abi_stable || o.space != 's' || o.postinc || !areg_is_zero(o.areg)) return false;
    uint32_t a = uint32_t(o.offset) & 0xffff;
    if (a % bytes != 0 || a + bytes > 0x10 + opt.param_bytes) return false;
    if (a >= 0xc && a < 0x10) {
      out = b.get_var(kVarCtaid);
      if (bytes < 4) out = band(shr(out, 8 * (a - 0xc)), bytes == 1 ? 0xffu : 0xffffu);
      return true;
    }
    Type t = bytes == 1 ? Type::I8 : bytes == 2 ? Type::I16 : Type::I32;
    out = b.load_uniform(t, a);
    if (bytes < 4) out = b.convert(Opcode::Zext, Type::I32, out);
    return true;
  }
  bool store(const Operand& o, V a64, unsigned bytes, V v) {
    ir::Space s = ir::Space::Global;
    if (!space_of(o, s)) return false;
    V a = checked(o, a64, bytes);
    if (bytes < 4) v = b.convert(Opcode::Trunc, bytes == 1 ? Type::I8 : Type::I16, v);
    b.store(s, ir::AddrClass::Random, a, v, mask());
    return true;
  }

  // ------------------------------------------------------------ operands
  bool read(const Operand* o, V& out) {
    if (!o) return fail("missing operand");
    switch (o->kind) {
      case OKind::Reg:
        out = reg(o->reg);
        if (o->size == RSize::H) out = band(shr(out, o->high ? 16 : 0), 0xffff);
        return true;
      case OKind::Imm: out = k32(uint32_t(o->imm)); return true;
      case OKind::AReg: out = areg(o->reg); return true;
      case OKind::CReg: out = creg(o->reg); return true;
      case OKind::Mem: {
        std::string mode = cur->name_before(o);
        unsigned bytes = o->access;
        bool sign = false;
        if (o->space == 's' || (o->space == 'c' && (mode == "u8" || mode == "u16" || mode == "s16" || mode == "b32"))) {
          if (mode == "u8") bytes = 1;
          else if (mode == "u16") bytes = 2;
          else if (mode == "s16") bytes = 2, sign = true;
          else if (mode == "b32") bytes = 4;
        }
        if (bytes != 1 && bytes != 2 && bytes != 4) return unsupported("memory operand size");
        if (abi_load(*o, bytes, out)) {
        } else if (!load(*o, address(*o), bytes, out)) {
          return false;
        }
        if (sign) out = b.convert(Opcode::Sext, Type::I32, b.convert(Opcode::Trunc, Type::I16, out));
        return true;
      }
      default: return fail("operand " + format_operand(*o) + " cannot be read");
    }
  }
  bool read64(const Operand* o, V& out) {
    if (o && o->kind == OKind::Reg && o->size == RSize::D) {
      V lo = b.convert(Opcode::Zext, Type::I64, reg(o->reg));
      V hi = b.convert(Opcode::Zext, Type::I64, reg(o->reg + 1));
      out = bin(Opcode::Or, lo, b.emit(Opcode::Shl, Type::I64, {hi, k32(32)}, uint8_t(ir::ShiftMode::Clamp)));
      return true;
    }
    V v;
    if (!read(o, v)) return false;
    out = b.convert(Opcode::Zext, Type::I64, v);
    return true;
  }
  bool write(const Operand* o, V v) {
    if (!o) return true;
    switch (o->kind) {
      case OKind::Reg:
        if (o->size == RSize::H) {
          V old = reg(o->reg);
          unsigned sh = o->high ? 16 : 0;
          V nv = bin(Opcode::Or, band(old, ~(0xffffu << sh)), shl(band(v, 0xffff), sh));
          set_reg(o->reg, nv);
        } else {
          set_reg(o->reg, v);
        }
        return true;
      case OKind::Discard: return true;
      case OKind::Mem: {
        // o[] destination, as the interpreter: a 16-bit result is duplicated
        // into both halves of its aligned 32-bit word.
        V a = address(*o);
        if (o->access == 2) {
          a = bin(Opcode::And, a, b.i64(~uint64_t(3)));
          v = bin(Opcode::IMul, band(v, 0xffff), k32(0x10001u));
        }
        return store(*o, a, 4, v);
      }
      default: return fail("operand " + format_operand(*o) + " cannot be written");
    }
  }
  bool write64(const Operand* o, V v) {
    if (o && o->kind == OKind::Reg && o->size == RSize::D) {
      set_reg(o->reg, b.convert(Opcode::Trunc, Type::I32, v));
      set_reg(o->reg + 1,
              b.convert(Opcode::Trunc, Type::I32, b.emit(Opcode::LShr, Type::I64, {v, k32(32)}, uint8_t(ir::ShiftMode::Clamp))));
      return true;
    }
    return write(o, b.convert(Opcode::Trunc, Type::I32, v));
  }

  // neg/abs/not modifier names before and after source 1 (print order).
  void side_flags(const char* name, bool out[2]) {
    out[0] = out[1] = false;
    int side = 0;
    for (auto& a : cur->atoms) {
      if (a.type == Atom::Opnd && a.op.role == Role::Src1) side = 1;
      if (a.type == Atom::Name && a.name == name) out[side] = true;
    }
  }

  V as_f32(V i) { return b.convert(Opcode::Bitcast, Type::F32, i); }
  V as_i32(V x) { return b.convert(Opcode::Bitcast, Type::I32, x); }
  V as_f64(V i) { return b.convert(Opcode::Bitcast, Type::F64, i); }
  V as_i64(V x) { return b.convert(Opcode::Bitcast, Type::I64, x); }

  // ------------------------------------------------------------ ALU
  bool alu();
  bool int_add();
  bool cvt();
  bool cvt_from_64(const std::string& dt, const std::string& st, int db);

  // ------------------------------------------------------------ control
  void push_entry(uint32_t entry) {
    V sp = b.get_var(kVarSp);
    // Overflow traps (the interpreter's stack is deeper, see docs/tesla.md).
    b.emit(Opcode::Trap, Type::Void, {b.icmp(ir::IntPred::Uge, sp, k32(kStackDepth))}, 0, 0,
           uint64_t(kTrapStackOverflow) << 24 | pc);
    // Cloned contexts know every entry statically: only the depth is kept
    // (for the overflow trap).
    for (unsigned i = 0; i < kStackDepth && !cloned; ++i) {
      V at = b.icmp(ir::IntPred::Eq, sp, k32(i));
      b.set_var(kVarStack + i, b.select(at, k32(entry), b.get_var(kVarStack + i)));
    }
    b.set_var(kVarSp, bin(Opcode::IAdd, sp, k32(1)));
  }
  V stack_top(V index) {
    V v = k32(0);
    for (unsigned i = 0; i < kStackDepth; ++i) v = b.select(b.icmp(ir::IntPred::Eq, index, k32(i)), b.get_var(kVarStack + i), v);
    return v;
  }
  // Jumps to the block of the word address in var kVarPopped, one of `sites`
  // (each block of the chain reads the var itself, see kVarPopped).
  void dispatch(const std::set<uint32_t>& sites, const Stack* rest) {
    for (uint32_t s : sites) {
      ir::BlockId no = f.add_block();
      V target = band(b.get_var(kVarPopped), 0x0fffffffu);
      b.cond_br(b.icmp(ir::IntPred::Eq, target, k32(s)), block_at(s, rest), no);
      b.set_block(no);
    }
    b.emit(Opcode::Trap, Type::Void, {b.i1(true)}, 0, 0, uint64_t(kTrapBadTarget) << 24 | pc);
    b.ret();
  }
  // Pops entries until one of kind `want` (ret: call or limited call; brk:
  // prebrk) and continues at its address, one of `sites`; an empty stack
  // exits the thread (ret) or traps (brk).
  ir::BlockId make_dispatch(bool is_ret, const std::set<uint32_t>& sites, const Stack* rest = nullptr) {
    ir::BlockId saved = b.block();
    ir::BlockId head = f.add_block(is_ret ? "ret_pop" : "brk_pop");
    ir::BlockId empty = f.add_block(), pop = f.add_block(), found = f.add_block();
    b.set_block(head);
    V sp = b.get_var(kVarSp);
    b.cond_br(eq0(sp), empty, pop);
    b.set_block(empty);
    if (is_ret) b.set_var(kVarExited, k32(1));
    else b.emit(Opcode::Trap, Type::Void, {b.i1(true)}, 0, 0, uint64_t(kTrapNoBreak) << 24);
    b.ret();
    b.set_block(pop);
    V sp1 = bin(Opcode::ISub, b.get_var(kVarSp), k32(1));
    V e = stack_top(sp1);
    b.set_var(kVarSp, sp1);
    b.set_var(kVarPopped, e);
    V kind = shr(e, 28);
    V is_lim = b.icmp(ir::IntPred::Eq, kind, k32(kEntryCallLim));
    b.set_var(kVarLimDepth, bin(Opcode::ISub, b.get_var(kVarLimDepth), to_i32(is_lim)));
    V hit = is_ret ? b.icmp(ir::IntPred::Ne, kind, k32(kEntryPreBrk)) : b.icmp(ir::IntPred::Eq, kind, k32(kEntryPreBrk));
    b.cond_br(hit, found, head);
    b.set_block(found);
    dispatch(sites, rest);
    b.set_block(saved);
    return head;
  }

  // The join address of the innermost (narrowest) joinat region
  // [joinat + 1, target) around word `p` (address order), or ~0u. One sweep
  // over the code computes it for every word (n log n, also for huge inputs).
  std::vector<uint32_t> inner_join, inner_joinat;  // per word: the region's join and joinat addresses
  uint32_t enclosing_join(uint32_t p) {
    if (inner_join.empty()) {
      inner_join.assign(code.size() + 1, ~0u);
      inner_joinat.assign(code.size() + 1, ~0u);
      using Region = std::pair<uint32_t, uint32_t>;  // (width, target)
      std::vector<std::vector<Region>> starts(code.size() + 1), ends(code.size() + 1);
      for (auto& [a, in] : insns) {
        int64_t t = -1;
        if (in.op == Op::JoinAt && branch_target(in, t) && t > int64_t(a) + 1 && uint64_t(t) <= code.size()) {
          starts[a + 1].push_back({uint32_t(t) - a, uint32_t(t)});
          ends[size_t(t)].push_back({uint32_t(t) - a, uint32_t(t)});
        }
      }
      std::multiset<Region> open;  // narrowest first
      for (uint32_t w = 0; w <= code.size(); ++w) {
        for (auto& r : ends[w]) open.erase(open.find(r));
        for (auto& r : starts[w]) open.insert(r);
        if (!open.empty()) {
          inner_join[w] = open.begin()->second;
          inner_joinat[w] = open.begin()->second - open.begin()->first;
        }
      }
    }
    return p < inner_join.size() ? inner_join[p] : ~0u;
  }

  // Ends the lanes running the current block (exited = 1, return). Inside a
  // joinat region the warp stack runs an exiting path when the other side
  // reaches the join, so in the loop iteration it belongs to. A block that
  // only returns is outside every loop of the CFG, and the IR's schedule
  // (ir/cfg_order.h) would hold its lanes back until the loop is done, so
  // their last stores would land after those of later iterations (fuzz
  // campaign, seed 1). So the block also branches to the join on a condition
  // that is never true at run time (any() of the running lanes is true
  // wherever it runs): the edge places it before the join, inside the loop.
  // The condition is uniform, so kernels without divergence stay unmasked.
  // Without a joinat the diverged lanes wait on the stack until the others
  // are done (leave the loop by break, exit), which is where the plain return
  // puts them.
  // In a subroutine outside any joinat region, the region around the call
  // site counts (the callee's stack context tells the call sites).
  // A region whose join no lane reaches (e.g. "join" right after the exit,
  // reached only by falling through it) has no block: then the waiting
  // lanes run when the other side reaches the join of the region around it,
  // so the next enclosing region counts. And the join block is the one of
  // the stack at the joinat (see below). Fuzz campaign seed 1 with quadop,
  // iterations 2067, 2716, 10817, 14760: without these the exiting lanes ran
  // after the lanes past the join, and a quadop of theirs read the others'
  // later registers.
  void end_lanes() {
    b.set_var(kVarExited, k32(1));
    uint32_t at = pc, join = enclosing_join(pc);
    Stack where = cloned ? ctx_stacks[size_t(cur_ctx)] : Stack{};
    while (join == ~0u && !where.empty()) {
      uint32_t e = where.back();
      where.pop_back();
      if ((e >> 28) == kEntryPreBrk) continue;
      uint32_t ret = e & 0x0fffffffu;  // a call's return address (the word after the call)
      for (uint32_t w : {1u, 2u})
        if (ret >= w && insns.count(ret - w) && insns.at(ret - w).op == Op::Call && insns.at(ret - w).words == w)
          join = enclosing_join(at = ret - w);
    }
    // The join runs with the stack of its joinat: breakaddr entries pushed
    // inside the region (a loop there that the exiting lanes are in) are
    // gone by then, so contexts without them are tried too.
    int ctx_id = 0;
    auto join_block_exists = [&] {
      Stack st = where;
      while (true) {
        auto ctx = ctx_ids.find(st);
        ctx_id = cloned ? (ctx == ctx_ids.end() ? -1 : ctx->second) : 0;
        if (node_blocks.count({join, ctx_id})) return true;
        if (!cloned || st.empty() || (st.back() >> 28) != kEntryPreBrk) return false;
        st.pop_back();
      }
    };
    while (join != ~0u && !join_block_exists()) {
      at = inner_joinat[at];  // the joinat word lies outside its own region: strictly smaller
      join = enclosing_join(at);
    }
    if (join == ~0u) {
      b.ret();
      return;
    }
    ir::BlockId done = f.add_block("exited");
    V running = b.emit(Opcode::Any, Type::I1, {b.i1(true), b.i1(true)});
    b.cond_br(running, done, node_blocks.at({join, ctx_id}));
    b.set_block(done);
    b.ret();
  }

  // The block of word `p` reached with stack `st` (cloned) or the current
  // context's stack (nullptr).
  ir::BlockId block_at(uint32_t p, const Stack* st = nullptr) {
    int ctx = 0;
    if (cloned) {
      auto c = ctx_ids.find(st ? *st : ctx_stacks[size_t(cur_ctx)]);
      ctx = c == ctx_ids.end() ? -1 : c->second;
    }
    if (p >= code.size() || !node_blocks.count({p, ctx})) {
      ir::BlockId bad = f.add_block();
      ir::BlockId saved = b.block();
      b.set_block(bad);
      // Past the end: the address execution would continue at; otherwise the branching instruction.
      bool past_end = p == code.size() || (p > code.size() && p != ~0u && p - code.size() < 2);
      uint64_t trap = past_end ? uint64_t(kTrapPastEnd) << 24 | p : uint64_t(kTrapBadTarget) << 24 | pc;
      b.emit(Opcode::Trap, Type::Void, {b.i1(true)}, 0, 0, trap);
      b.ret();
      b.set_block(saved);
      return bad;
    }
    return node_blocks.at({p, ctx});
  }

  bool control(uint32_t next) {
    const Insn& in = *cur;
    int64_t t = -1;
    branch_target(in, t);
    auto target = [&](const Stack* st = nullptr) {
      return t >= 0 && uint64_t(t) < code.size() ? block_at(uint32_t(t), st) : block_at(~0u);
    };
    auto pushed = [&](uint32_t e) {
      Stack s2 = cloned ? ctx_stacks[size_t(cur_ctx)] : Stack{};
      s2.push_back(e);
      return s2;
    };
    switch (in.op) {
      case Op::Bra:
        if (in.pred == 15) b.br(target());
        else if (guard == ir::kNoValue) b.br(block_at(next));
        else {
          // The warp stack runs the taken side of a divergent bra first. The
          // IR's schedule order (ir/cfg_order.h) runs a branch's second
          // successor first where neither side reaches the other, so the
          // taken side goes second (branch on the negated guard).
          ir::BlockId fall = block_at(next), taken = target();
          b.cond_br(bin(Opcode::Xor, guard, b.i1(true)), fall, taken);
        }
        return true;
      case Op::Call: {
        ir::BlockId go = f.add_block();
        if (in.has("lim")) {
          ir::BlockId skip = block_at(next);
          V full = b.icmp(ir::IntPred::Uge, b.get_var(kVarLimDepth), k32(opt.call_limit));
          b.cond_br(full, skip, go);
          b.set_block(go);
          b.set_var(kVarLimDepth, bin(Opcode::IAdd, b.get_var(kVarLimDepth), k32(1)));
          push_entry(kEntryCallLim << 28 | next);
        } else {
          b.br(go);
          b.set_block(go);
          push_entry(kEntryCall << 28 | next);
        }
        Stack callee = pushed((in.has("lim") ? kEntryCallLim : kEntryCall) << 28 | next);
        b.br(target(&callee));
        return true;
      }
      case Op::PreRet:
      case Op::PreBrk: {
        uint32_t e = (in.op == Op::PreRet ? kEntryCall : kEntryPreBrk) << 28 | uint32_t(t);
        push_entry(e);
        Stack after = pushed(e);
        b.br(block_at(next, &after));
        return true;
      }
      case Op::JoinAt: b.br(block_at(next)); return true;  // reconvergence is implicit per lane
      case Op::Ret:
      case Op::Brk: {
        bool is_ret = in.op == Op::Ret;
        ir::BlockId d = ir::kNoBlock;
        // Statically known entry: a dispatch of its own with that one site
        // (the pops still run, so the stack vars stay exact).
        uint32_t addr = 0;
        Stack rest;
        if (cloned) {
          // The pops are known: adjust the depths and branch directly.
          const Stack& st = ctx_stacks[size_t(cur_ctx)];
          bool known = pop_entry(st, is_ret, addr, rest);
          d = f.add_block(is_ret ? "ret" : "brk");
          ir::BlockId saved = b.block();
          b.set_block(d);
          if (!known && is_ret) {
            end_lanes();
          } else if (!known) {
            b.emit(Opcode::Trap, Type::Void, {b.i1(true)}, 0, 0, uint64_t(kTrapNoBreak) << 24);
            b.ret();
          } else {
            uint32_t lims = 0;
            for (size_t k = rest.size(); k < st.size(); ++k) lims += (st[k] >> 28) == kEntryCallLim;
            b.set_var(kVarSp, bin(Opcode::ISub, b.get_var(kVarSp), k32(uint32_t(st.size() - rest.size()))));
            if (lims) b.set_var(kVarLimDepth, bin(Opcode::ISub, b.get_var(kVarLimDepth), k32(lims)));
            b.br(block_at(addr, &rest));
          }
          b.set_block(saved);
        } else if (auto r = resolved_exits.find(pc); r != resolved_exits.end()) {
          d = make_dispatch(is_ret, {r->second});
        } else {
          ir::BlockId& shared = is_ret ? ret_dispatch : brk_dispatch;
          if (shared == ir::kNoBlock) shared = make_dispatch(is_ret, is_ret ? ret_sites : brk_sites);
          d = shared;
        }
        if (in.pred == 15) b.br(d);
        else if (guard == ir::kNoValue) b.br(block_at(next));
        else b.cond_br(guard, d, block_at(next));
        return true;
      }
      case Op::Bar: {
        // Every form runs on the runtime's counted-barrier scheduler
        // (runtime/barrier.h): the word stored here tells it which barrier
        // this is, whether the warp arrives, waits or both, and how many
        // warps release it.
        uint32_t desc = barrier_descriptor(in);
        if (one_barrier_kind) {
          // Every barrier of the code has this descriptor: any lane that ever
          // reached one holds the right word, so no stop count is needed
          // (and the var is only written: the common plain-`bar` kernel).
          b.set_var(kVarBarrier, k32(desc | rt::kBarrierOneKind));
        } else {
          // The lane's stop count moves on, so the runtime can tell the lanes
          // that reached this barrier from the others.
          V stops = bin(Opcode::IAdd, band(b.get_var(kVarBarrier), ~rt::kBarrierDescriptorMask),
                        k32(rt::kBarrierStopOne));
          b.set_var(kVarBarrier, bin(Opcode::Or, stops, k32(desc)));
        }
        ir::BlockId after = f.add_block();
        b.barrier(after);
        b.set_block(after);
        b.br(block_at(next));
        return true;
      }
      case Op::Trap:
        b.emit(Opcode::Trap, Type::Void, {b.i1(true)}, 0, 0, uint64_t(kTrapInsn) << 24 | pc);
        b.ret();
        return true;
      case Op::Brkpt: b.br(block_at(next)); return true;
      default: return unsupported("control instruction");
    }
  }

  // The rt::barrier_word of a `bar`. Thread counts round up to warps; the
  // runtime clamps a count above the block's warps to the block, as the
  // interpreter does (CUDA 1.0's nvcc writes __syncthreads() as
  // `bar inc wait 0x0 0xfff`).
  static uint32_t barrier_descriptor(const Insn& in) {
    bool inc = in.has("inc"), wait = in.has("wait");
    if (!inc && !wait) inc = wait = true;  // plain `bar`: arrive and wait
    int nimm = 0;
    uint64_t id = 0, threads = 0;
    for (auto& a : in.atoms)
      if (a.type == Atom::Opnd && a.op.kind == OKind::Imm) {
        if (nimm == 0) id = uint64_t(a.op.imm);
        else threads = uint64_t(a.op.imm);
        ++nimm;
      }
    int64_t count_warps = nimm > 1 ? int64_t((threads + 31) / 32) : -1;
    return rt::barrier_word(unsigned(id & 15), inc, wait, count_warps);
  }
  bool one_barrier_kind = false;  // every reachable `bar` has the same descriptor

  bool run() {
    if (code.size() > opt.max_words) return fail("program too large");
    if (opt.entry >= code.size()) return fail("entry outside the code");
    if (opt.target.ptype != kCP && opt.target.ptype != kVP && opt.target.ptype != kGP) {
      err = "only compute, vertex and geometry programs are translated";
      return false;
    }
    if (!discover()) return false;
    std::set<uint32_t> barrier_kinds;
    for (auto& [p, in] : insns)
      if (in.op == Op::Bar) barrier_kinds.insert(barrier_descriptor(in));
    one_barrier_kind = barrier_kinds.size() == 1;
    cloned = clone_contexts();
    if (!cloned) {
      ctx_ids.clear();
      ctx_stacks.assign(1, Stack{});
      node_blocks.clear();
      for (auto& [p, in] : insns) node_blocks.emplace(std::pair{p, 0}, ir::kNoBlock);
      resolve_stack();
    }
    f = ir::Function{};
    f.name = "tesla";
    static const char* anames[8] = {"a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7"};
    for (auto* n : anames) f.add_var(n, Type::I32);
    for (unsigned i = 0; i < 4; ++i)
      for (char k : kFlagNames) f.add_var("c" + std::to_string(i) + k, Type::I1);
    f.add_var("exited", Type::I32);
    f.add_var("ctaid", Type::I32);
    f.add_var("local_base", Type::I64);
    f.add_var("abi_writer", Type::I32);
    for (unsigned i = 0; i < 128; ++i) f.add_var("r" + std::to_string(i), Type::I32);
    f.add_var("sp", Type::I32);
    f.add_var("lim_depth", Type::I32);
    for (unsigned i = 0; i < kStackDepth; ++i) f.add_var("stack" + std::to_string(i), Type::I32);
    f.add_var("popped", Type::I32);
    f.add_var("attr_base", Type::I64);
    f.add_var("barrier", Type::I32);
    f.uniform_bytes = uniform_bytes(opt);

    ir::BlockId entry = f.add_block("entry");
    for (auto& [node, blk] : node_blocks) {
      char name[40];
      if (node.second == 0) std::snprintf(name, sizeof name, "w%x", node.first);
      else std::snprintf(name, sizeof name, "w%x.%d", node.first, node.second);
      blk = f.add_block(name);
    }
    b.set_block(entry);
    if (opt.launch_abi) {
      // The launch ABI block in s[]: written once per block by its first thread.
      V writer = ne0(b.get_var(kVarAbiWriter));
      uint32_t n = 0x10 + opt.param_bytes;
      for (uint32_t off = 0; off < n;) {
        unsigned bytes = n - off >= 4 ? 4 : 1;
        Type t = bytes == 4 ? Type::I32 : Type::I8;
        V v = off == 0xc ? b.get_var(kVarCtaid) : b.load_uniform(t, off);
        b.store(ir::Space::Shared, ir::AddrClass::Uniform, b.i64(off), v, writer);
        off += bytes;
      }
    }
    b.br(node_blocks.at({opt.entry, 0}));

    find_sources();
    abi_stable = opt.launch_abi;
    for (auto& [a, in] : insns) abi_stable = abi_stable && in.op != Op::StS;
    std::set<std::pair<uint32_t, int>> absorbed;  // words translated inside an if-converted bra
    for (auto& [node, blk] : node_blocks) {
      if (absorbed.count(node)) {
        dead_blocks.insert(blk);
        continue;
      }
      uint32_t p = node.first;
      const Insn& in = insns.at(p);
      cur_ctx = node.second;
      pc = p;
      cur = &in;
      b.set_block(blk);
      if (loop_heads.count(p)) b.emit(Opcode::Budget, Type::Void, {}, 0, 0, 1);
      uint32_t next = p + in.words;
      if (decode_errors.count(p)) {
        b.emit(Opcode::Trap, Type::Void, {b.i1(true)}, 0, 0, uint64_t(kTrapDecode) << 24 | p);
        b.ret();
        continue;
      }
      IfRegion r;
      unsigned budget = kIfConvertWords;
      if (in.op == Op::Bra && if_region(p, r, budget)) {
        if (!emit_if(r, ir::kNoValue)) return false;
        for (uint32_t w = next; w < r.cont; w += insns.at(w).words) absorbed.insert({w, cur_ctx});
        pc = p;
        b.br(block_at(r.cont));
        continue;
      }
      guard = in.pred == 15 ? ir::kNoValue : pred(in.pred_c, unsigned(in.pred));
      if (in.is_control) {
        if (!control(next)) return false;
        continue;
      }
      if (!emit_word(p, guard)) return false;
      if (in.exit) {  // acts on every active lane whatever the predicate
        end_lanes();
      } else {
        b.br(block_at(next));
      }
    }
    merge_straight_line();
    compact_vars();
    return true;
  }

  // Every warp's vars are zeroed and the used ones loaded and stored per
  // launch: keep only the vars some get_var/set_var names (translate.h).
  void compact_vars() {
    std::vector<uint8_t> used(f.vars.size(), 0);
    for (const ir::Inst& in : f.insts)
      if (in.block != ir::kNoBlock && (in.op == Opcode::GetVar || in.op == Opcode::SetVar)) used[in.imm] = 1;
    std::vector<uint32_t> remap(f.vars.size(), ~0u);
    std::vector<ir::Var> kept;
    for (uint32_t v = 0; v < f.vars.size(); ++v)
      if (used[v]) remap[v] = uint32_t(kept.size()), kept.push_back(std::move(f.vars[v]));
    for (ir::Inst& in : f.insts)
      if (in.block != ir::kNoBlock && (in.op == Opcode::GetVar || in.op == Opcode::SetVar)) in.imm = remap[in.imm];
    f.vars = std::move(kept);
  }

  // The body of a non-control word under `g` (its predicate ANDed in; kNoValue = always).
  bool emit_word(uint32_t w, V g) {
    const Insn& in = insns.at(w);
    cur = &in;
    pc = w;
    postinc.clear();
    bool vote = in.op == Op::VoteAny || in.op == Op::VoteAll;
    if (in.pred == 0 && !vote) return true;
    guard = g;
    if (in.pred != 15) {
      V p = pred(in.pred_c, unsigned(in.pred));
      guard = g == ir::kNoValue ? p : bin(Opcode::And, g, p);
    }
    if (!alu()) return false;
    for (auto& pi : postinc)
      if (!set_areg(pi.areg, bin(Opcode::IAdd, areg(pi.areg), k32(uint32_t(pi.delta))))) return false;
    return true;
  }

  // ------------------------------------------------------------ if-conversion
  // A short forward `(p) bra` over straight-line code is translated without
  // a branch: the skipped words run under !p (their writes select, their
  // memory ops are masked), and an if/else (the skipped words end in `bra J`
  // and the target's words run up to J) runs the taken side under p first,
  // as the warp stack does, then the other side under !p. A kernel whose only
  // divergent branches are such ifs has no divergent branch in the IR, so the
  // divergence lowering keeps it unmasked (one block instead of masked
  // blocks behind any() checks). Conditions: every word strictly between the
  // bra and the continuation is entered only from inside that range (no
  // outside branch target, call return or break site), and each is a plain
  // instruction (no exit marker, no vote: it reads every active lane), a
  // `joinat` (no code) or a nested bra that is itself such an if. Bounded by
  // kIfConvertWords (both sides run for every lane).
  static constexpr unsigned kIfConvertWords = 48;
  struct IfRegion {
    uint32_t bra = 0, fall_from = 0, fall_to = 0, taken_from = 0, taken_to = 0, cont = 0;
  };
  std::map<uint32_t, std::vector<int64_t>> sources;  // word -> instructions that branch there (-1: entry, return/break site)
  std::set<ir::BlockId> dead_blocks;                  // blocks of words translated inside an if-converted bra

  void find_sources() {
    sources[opt.entry].push_back(-1);
    for (auto& [a, in] : insns) {
      int64_t t = -1;
      if (in.is_control && branch_target(in, t) && t >= 0) sources[uint32_t(t)].push_back(a);
    }
    for (uint32_t s : ret_sites) sources[s].push_back(-1);
    for (uint32_t s : brk_sites) sources[s].push_back(-1);
  }
  bool plain(uint32_t w) const {
    const Insn& in = insns.at(w);
    return !decode_errors.count(w) && !in.is_control && !in.exit && in.op != Op::VoteAny && in.op != Op::VoteAll;
  }
  // Words [from, to) are plain, joinat or nested ifs ending inside, aligned on `to`.
  bool if_span(uint32_t from, uint32_t to, unsigned& budget) {
    for (uint32_t w = from; w < to;) {
      auto it = insns.find(w);
      if (it == insns.end() || budget == 0) return false;
      --budget;
      const Insn& in = it->second;
      IfRegion inner;
      if (in.op == Op::Bra && if_region(w, inner, budget)) {
        if (inner.cont > to) return false;
        w = inner.cont;
        continue;
      }
      if (in.op != Op::JoinAt && !plain(w)) return false;
      w += in.words;
    }
    return true;
  }
  bool if_region(uint32_t p, IfRegion& r, unsigned& budget) {
    const Insn& in = insns.at(p);
    int64_t t = -1;
    if (in.op != Op::Bra || in.pred == 15 || in.pred == 0 || in.exit || decode_errors.count(p) ||
        !branch_target(in, t) || t <= int64_t(p + in.words) || !insns.count(uint32_t(t)))
      return false;
    r.bra = p;
    r.fall_from = p + in.words;
    r.fall_to = r.cont = uint32_t(t);
    r.taken_from = r.taken_to = uint32_t(t);
    // The last word of the fall-through side: an unconditional bra forward past t makes an if/else.
    uint32_t last = r.fall_from;
    for (uint32_t w = r.fall_from; w < r.fall_to && insns.count(w); w += insns.at(w).words) last = w;
    const Insn& li = insns.at(last);
    int64_t j = -1;
    if (li.op == Op::Bra && li.pred == 15 && !li.exit && !decode_errors.count(last) && branch_target(li, j) &&
        j > t && insns.count(uint32_t(j)) && last + li.words == r.fall_to) {
      r.fall_to = last;
      r.taken_to = r.cont = uint32_t(j);
    }
    // Single entry: everything strictly inside (p, cont) is entered from [p, cont) only.
    for (auto it = sources.upper_bound(p); it != sources.end() && it->first < r.cont; ++it)
      for (int64_t src : it->second)
        if (src < int64_t(p) || src >= int64_t(r.cont)) return false;
    return if_span(r.fall_from, r.fall_to, budget) && if_span(r.taken_from, r.taken_to, budget);
  }
  bool emit_span(uint32_t from, uint32_t to, V g) {
    for (uint32_t w = from; w < to;) {
      const Insn& in = insns.at(w);
      IfRegion inner;
      unsigned budget = kIfConvertWords;
      if (in.op == Op::Bra && if_region(w, inner, budget)) {
        if (!emit_if(inner, g)) return false;
        w = inner.cont;
        continue;
      }
      if (in.op != Op::JoinAt && !emit_word(w, g)) return false;
      w += in.words;
    }
    return true;
  }
  bool emit_if(const IfRegion& r, V outer) {
    const Insn& in = insns.at(r.bra);
    cur = &in;
    pc = r.bra;
    V taken = pred(in.pred_c, unsigned(in.pred));
    V fall = bin(Opcode::Xor, taken, b.i1(true));
    if (outer != ir::kNoValue) taken = bin(Opcode::And, outer, taken), fall = bin(Opcode::And, outer, fall);
    return emit_span(r.taken_from, r.taken_to, taken) && emit_span(r.fall_from, r.fall_to, fall);
  }

  // Words are translated one block each; a block that ends in `br` to a
  // block with no other predecessor absorbs it, so straight-line code is one
  // block. The CFG keeps its shape (only single-entry, single-exit edges are
  // contracted, so the schedule order of ir/cfg_order.h is unchanged); what
  // changes is cost: in a divergent kernel every block gets an execution
  // mask, an any() skip check and a masked write per var it sets.
  void merge_straight_line() {
    f.compute_preds();
    const size_t n = f.blocks.size();
    std::vector<uint8_t> gone(n, 0);
    for (ir::BlockId d : dead_blocks) gone[d] = 1;  // never filled: nothing branches there
    for (ir::BlockId a = 0; a < n; ++a) {
      if (gone[a]) continue;
      for (;;) {
        ir::ValueId t = f.terminator(a);
        if (t == ir::kNoValue || f[t].op != Opcode::Br) break;
        ir::BlockId s = f.blocks[a].succs[0];
        if (s == a || s == 0 || gone[s] || f.blocks[s].preds.size() != 1) break;
        ir::Block& A = f.blocks[a];
        ir::Block& S = f.blocks[s];
        A.insts.pop_back();
        f[t].block = ir::kNoBlock;  // the br goes away
        for (ir::ValueId v : S.insts) f[v].block = a;
        A.insts.insert(A.insts.end(), S.insts.begin(), S.insts.end());
        A.succs = std::move(S.succs);
        S.insts.clear();
        S.succs.clear();
        gone[s] = 1;
      }
    }
    std::vector<ir::BlockId> remap(n, ir::kNoBlock);
    std::vector<ir::Block> kept;
    for (ir::BlockId i = 0; i < n; ++i)
      if (!gone[i]) remap[i] = ir::BlockId(kept.size()), kept.push_back(std::move(f.blocks[i]));
    for (ir::BlockId i = 0; i < kept.size(); ++i) {
      for (auto& s : kept[i].succs) s = remap[s];
      for (ir::ValueId v : kept[i].insts) f[v].block = i;
      kept[i].preds.clear();
    }
    f.blocks = std::move(kept);
    f.compute_preds();
  }
};

bool Translator::int_add() {
  const Insn& in = *cur;
  const Operand* dst = in.find(Role::Dst);
  const Operand* s1 = in.find(Role::Src1);
  const Operand* s2 = in.find(Role::Src2);
  const Operand* s3 = in.find(Role::Src3);
  bool mad = in.op == Op::IMad;
  bool b16 = in.has("b16") || in.has("u16") || in.has("s16");
  unsigned bits = (!mad && b16) ? 16 : 32;
  uint32_t m = bits == 16 ? 0xffffu : 0xffffffffu;
  int opk = in.has("sub") ? 1 : in.has("subr") ? 2 : in.has("addc") ? 3 : 0;
  const Operand* a = s1;
  const Operand* bo = s2 ? s2 : s3;
  const Operand* c = mad ? in.addend() : nullptr;
  if (mad && !in.is_long) bo = s2;
  V x, y;
  if (mad) {
    V p1, p2;
    if (!read(a, p1) || !read(bo, p2)) return false;
    if (in.has("u24") || in.has("s24")) {
      x = mul24(p1, p2, in.has("s24"), in.has("high"));
    } else {
      bool sg = in.has("s16");
      auto ext16 = [&](V v) {
        return b.emit(Opcode::BfExtract, Type::I32, {v, k32(0), k32(16)}, uint8_t(sg ? ir::Sign::Signed : ir::Sign::Unsigned));
      };
      x = bin(Opcode::IMul, ext16(p1), ext16(p2));
    }
    if (!read(c, y)) return false;
  } else {
    if (!read(a, x) || !read(bo, y)) return false;
    x = band(x, m);
    y = band(y, m);
  }
  V s1v = x, s2v = y, cin = b.i1(false);
  if (opk == 1) s2v = band(b.unary(Opcode::Not, y), m), cin = b.i1(true);
  if (opk == 2) s1v = band(b.unary(Opcode::Not, x), m), cin = b.i1(true);
  if (opk == 3) {
    const Operand* cond = in.find(Role::Cond);
    cin = cflag(cond ? cond->reg : 0, 2);
  }
  V res, C, O;
  add_flags(s1v, s2v, cin, bits, res, C, O);
  if (in.has("sat")) {
    V neg = ne0(bit(res, bits - 1));
    res = b.select(O, sel32(neg, m >> 1, 1u << (bits - 1)), res);
  }
  V fl = flags_add(res, bits, C, O);
  if (!write(dst, res)) return false;
  set_flags(fl);
  return true;
}

// cvt from s64/u64 (the encodings only have f32/f64 destinations for
// them): one rounding in the instruction's mode.
//
// neg/abs: the interpreter applies them to the integer in infinite precision
// (|INT64_MIN| = 2^63 and -(2^64 - 1) do not fit 64 bits), so the
// translation keeps a sign and a 64-bit magnitude instead: the magnitude is
// converted as unsigned and the float negated afterwards. Negation is exact
// and mirrors the directed modes (round_down(-x) = -round_up(x)), so a lane
// whose result is negative converts its magnitude with rm and rp swapped.
// An integer 0 stays +0; with sat every negative result clamps to +0.
bool Translator::cvt_from_64(const std::string& dt, const std::string& st, int db) {
  const Insn& in = *cur;
  if (dt[0] != 'f' || db == 16) return unsupported("64-bit integer source to this type");
  V v;
  if (!read64(in.find(Role::Src1), v)) return false;
  const bool is_signed = st[0] == 's', neg = in.has("neg"), abs = in.has("abs"), sat = in.has("sat");
  ir::Round mode = in.has("rm") ? ir::Round::Down : in.has("rp") ? ir::Round::Up
                 : in.has("rz") ? ir::Round::TowardZero : ir::Round::NearestEven;
  const Type ft = db == 64 ? Type::F64 : Type::F32;
  auto convert = [&](V x, ir::Sign sgn, ir::Round m) {
    uint32_t fl = float_flags(false, false, m) | (sat ? ir::ff::Sat : 0);
    V r = b.convert(Opcode::IToF, ft, x, uint8_t(sgn), fl);
    return db == 64 ? as_i64(r) : as_i32(r);
  };
  const Operand* dst = in.find(Role::Dst);
  V out;
  if (!neg && !abs) {
    out = convert(v, is_signed ? ir::Sign::Signed : ir::Sign::Unsigned, mode);
  } else {
    V zero = b.i64(0);
    V below = is_signed ? b.icmp(ir::IntPred::Slt, v, zero) : b.i1(false);
    V magnitude = is_signed ? b.select(below, b.unary(Opcode::INeg, v), v) : v;
    V negative = abs ? b.i1(false) : below;
    if (neg) negative = b.unary(Opcode::Not, negative);
    negative = bin(Opcode::And, negative, b.icmp(ir::IntPred::Ne, magnitude, zero));
    V rounded = convert(magnitude, ir::Sign::Unsigned, mode);
    if (mode == ir::Round::Down || mode == ir::Round::Up) {
      ir::Round mirrored = mode == ir::Round::Down ? ir::Round::Up : ir::Round::Down;
      rounded = b.select(negative, convert(magnitude, ir::Sign::Unsigned, mirrored), rounded);
    }
    V sign_bit = db == 64 ? b.i64(0x8000000000000000ull) : k32(0x80000000u);
    V negated = sat ? (db == 64 ? b.i64(0) : k32(0)) : bin(Opcode::Xor, rounded, sign_bit);
    out = b.select(negative, negated, rounded);
  }
  if (db == 64) {
    if (!write64(dst, out)) return false;
    set_flags(flags_double(out));
    return true;
  }
  if (!write(dst, out)) return false;
  set_flags(flags_float(out));
  return true;
}

bool Translator::cvt() {
  const Insn& in = *cur;
  static const char* tnames[] = {"u8", "s8", "u16", "s16", "u32", "s32", "f16", "f32", "u64", "s64", "f64"};
  std::vector<std::string> types;
  for (auto& n : in.names())
    for (auto* t : tnames)
      if (n == t && types.size() < 2) types.push_back(n);
  if (types.size() < 2) return unsupported("without two types");
  const std::string& dt = types[0];
  const std::string& st = types[1];
  auto bits_of = [](const std::string& t) { return std::stoi(t.substr(1)); };
  int db = bits_of(dt), sb = bits_of(st);
  bool sfloat = st[0] == 'f', dfloat = dt[0] == 'f';
  bool n = in.has("neg"), ab = in.has("abs");
  const Operand* dst = in.find(Role::Dst);
  const Operand* s1 = in.find(Role::Src1);
  // Integer -> integer of at most 32 bits: extend, abs, neg exactly (in 64
  // bits), clamp to the destination range.
  if (!sfloat && !dfloat && sb <= 32 && db <= 32) {
    V raw;
    if (!read(s1, raw)) return false;
    V v = b.emit(Opcode::BfExtract, Type::I32, {raw, k32(0), k32(unsigned(sb))},
                 uint8_t(st[0] == 's' ? ir::Sign::Signed : ir::Sign::Unsigned));
    int64_t lo = dt[0] == 's' ? -(int64_t(1) << (db - 1)) : 0;
    int64_t hi = dt[0] == 's' ? (int64_t(1) << (db - 1)) - 1 : (int64_t(1) << db) - 1;
    int64_t src_lo = st[0] == 's' ? -(int64_t(1) << (sb - 1)) : 0;
    int64_t src_hi = st[0] == 's' ? (int64_t(1) << (sb - 1)) - 1 : (int64_t(1) << sb) - 1;
    V out = v;  // a widening without abs/neg: the clamp cannot change the value
    if (ab || n || src_lo < lo || src_hi > hi) {
      V w = b.convert(st[0] == 's' ? Opcode::Sext : Opcode::Zext, Type::I64, v);
      if (ab) w = b.unary(Opcode::IAbs, w);
      if (n) w = b.unary(Opcode::INeg, w);
      w = b.binary(Opcode::IMax, w, b.i64(uint64_t(lo)), uint8_t(ir::Sign::Signed));
      w = b.binary(Opcode::IMin, w, b.i64(uint64_t(hi)), uint8_t(ir::Sign::Signed));
      // The clamped value is written sign-extended (a register half gets its low 16 bits).
      out = b.convert(Opcode::Trunc, Type::I32, w);
    }
    if (!write(dst, out)) return false;
    V fl = flags_int(out, db >= 32 ? 32 : 16);
    if (db == 8) fl = bin(Opcode::Or, to_i32(eq0(band(out, 0xff))), shl(bit(out, 7), 1));
    set_flags(fl);
    return true;
  }
  if (!sfloat && sb == 64) return cvt_from_64(dt, st, db);
  ir::Round mode = ir::Round::NearestEven;
  bool rint = false;
  for (auto& nm : in.names()) {
    if (nm == "rn" || nm == "rni") mode = ir::Round::NearestEven;
    if (nm == "rm" || nm == "rmi") mode = ir::Round::Down;
    if (nm == "rp" || nm == "rpi") mode = ir::Round::Up;
    if (nm == "rz" || nm == "rzi") mode = ir::Round::TowardZero;
    if (nm == "rni" || nm == "rmi" || nm == "rpi" || nm == "rzi") rint = true;
  }
  bool sat = in.has("sat");
  V raw, out;
  if (sb == 64) {
    if (!read64(s1, raw)) return false;
  } else if (!read(s1, raw)) {
    return false;
  }
  // Clamp to [0, 1] keeping NaN and -0 (the interpreter's "sat": v < 0 -> 0, v > 1 -> 1).
  auto clamp01 = [&](V v) {
    Type t = b.type(v);
    uint64_t one = t == Type::F64 ? 0x3ff0000000000000ull : t == Type::F32 ? 0x3f800000u : 0x3c00u;
    V zero = b.constant(t, 0), onev = b.constant(t, one);
    v = b.select(b.fcmp(ir::FloatPred::Olt, v, zero), zero, v);
    return b.select(b.fcmp(ir::FloatPred::Ogt, v, onev), onev, v);
  };
  auto float_out_flags = [&](V o) -> V {
    if (db == 64) return flags_double(o);
    if (db == 32) return flags_float(o);
    V mag = band(o, 0x7fff);
    V nan = b.icmp(ir::IntPred::Ugt, mag, k32(0x7c00));
    V z = bin(Opcode::Or, nan, eq0(mag));
    V sgn = bin(Opcode::Or, nan, ne0(band(o, 0x8000)));
    return bin(Opcode::Or, to_i32(z), shl(to_i32(sgn), 1));
  };
  auto to_f16_bits = [&](V f32v) {
    return b.convert(Opcode::Zext, Type::I32,
                     b.convert(Opcode::Bitcast, Type::I16, b.convert(Opcode::FToF, Type::F16, f32v, 0, float_flags(false, false))));
  };
  if (sfloat) {
    // The source as f32 (f16 widened exactly, f32 flushed) or f64, then abs/neg.
    V v;
    if (sb == 16) {
      V h = b.convert(Opcode::Bitcast, Type::F16, b.convert(Opcode::Trunc, Type::I16, raw));
      v = b.convert(Opcode::FToF, Type::F32, h, 0, float_flags(false, false));
    } else if (sb == 32) {
      v = as_f32(raw);
    } else {
      v = as_f64(raw);
    }
    Type vt = b.type(v);
    V one = b.constant(vt, vt == Type::F64 ? 0x3ff0000000000000ull : 0x3f800000u);
    if (sb == 32) v = bin(Opcode::FMul, v, one, 0, float_flags(true, false));  // flush (x * 1 is exact)
    if (ab) v = b.unary(Opcode::FAbs, v);
    if (n) v = b.unary(Opcode::FNeg, v);
    if (!dfloat) {
      Type it = ir::int_type(unsigned(db));
      ir::Round r = rint ? mode : ir::Round::TowardZero;
      V iv = b.convert(Opcode::FToI, it, v, uint8_t(dt[0] == 's' ? ir::Sign::Signed : ir::Sign::Unsigned),
                       float_flags(false, false, r));
      if (db == 64) {
        if (!write64(dst, iv)) return false;
        V z = b.icmp(ir::IntPred::Eq, iv, b.i64(0)), sg = b.icmp(ir::IntPred::Slt, iv, b.i64(0));
        set_flags(pack(z, sg, b.i1(false), b.i1(false)));
        return true;
      }
      out = db == 32 ? iv : b.convert(Opcode::Zext, Type::I32, iv);
      if (!write(dst, out)) return false;
      V fl = flags_int(out, db >= 32 ? 32 : 16);
      if (db == 8) fl = pack(eq0(band(out, 0xff)), ne0(bit(out, 7)), b.i1(false), b.i1(false));
      set_flags(fl);
      return true;
    }
    if (rint) v = b.unary(Opcode::FRint, v, 0, float_flags(false, false, mode));
    if (sat) v = clamp01(v);
    if (db == 64) {
      V d = vt == Type::F64 ? bin(Opcode::FMul, v, one, 0, float_flags(false, false))
                            : b.convert(Opcode::FToF, Type::F64, v, 0, float_flags(false, false));
      out = as_i64(d);
      if (!write64(dst, out)) return false;
    } else if (db == 32) {
      V f = vt == Type::F64 ? b.convert(Opcode::FToF, Type::F32, v, 0, float_flags(false, true, mode))
                            : bin(Opcode::FMul, v, one, 0, float_flags(false, true));
      out = as_i32(f);
      if (!write(dst, out)) return false;
    } else {
      V f = vt == Type::F64 ? b.convert(Opcode::FToF, Type::F32, v, 0, float_flags(false, false, mode)) : v;
      out = to_f16_bits(f);
      if (!write(dst, out)) return false;
    }
    set_flags(float_out_flags(out));
    return true;
  }
  // Integer source -> float: extend, abs, neg exactly in 64 bits, one rounding.
  V iv = b.emit(Opcode::BfExtract, Type::I32, {raw, k32(0), k32(unsigned(sb))},
                uint8_t(st[0] == 's' ? ir::Sign::Signed : ir::Sign::Unsigned));
  V w = b.convert(st[0] == 's' ? Opcode::Sext : Opcode::Zext, Type::I64, iv);
  if (ab) w = b.unary(Opcode::IAbs, w);
  if (n) w = b.unary(Opcode::INeg, w);
  uint32_t satf = sat ? ir::ff::Sat : 0;
  if (db == 64) {
    out = as_i64(b.convert(Opcode::IToF, Type::F64, w, uint8_t(ir::Sign::Signed), float_flags(false, false, mode) | satf));
    if (!write64(dst, out)) return false;
    set_flags(flags_double(out));
    return true;
  }
  V f32v = b.convert(Opcode::IToF, Type::F32, w, uint8_t(ir::Sign::Signed), float_flags(false, false, mode) | satf);
  if (db == 32) {
    out = as_i32(f32v);
    if (!write(dst, out)) return false;
    set_flags(flags_float(out));
    return true;
  }
  out = to_f16_bits(f32v);
  if (!write(dst, out)) return false;
  set_flags(float_out_flags(out));
  return true;

}

bool Translator::alu() {
  const Insn& in = *cur;
  const Operand* dst = in.find(Role::Dst);
  const Operand* s1 = in.find(Role::Src1);
  const Operand* s2 = in.find(Role::Src2);
  const Operand* s3 = in.find(Role::Src3);
  const Operand* mem = in.find(Role::Mem);
  auto has = [&](const char* n) { return in.has(n); };
  bool b16 = has("b16") || has("u16") || has("s16");
  V x, y, z;
  switch (in.op) {
    case Op::Mov: {
      unsigned lm = 0xf;
      if (in.is_long && !in.is_imm) lm = unsigned((in.bits >> 46) & 0xf);
      if (!read(s1 ? s1 : s2, x)) return false;
      if (lm != 0xf) {
        // Lane mask: only lanes whose quad position is enabled write.
        V q = band(b.emit(Opcode::LaneId, Type::I32, {}), 3);
        V en = ne0(band(b.emit(Opcode::LShr, Type::I32, {k32(lm), q}, uint8_t(ir::ShiftMode::Clamp)), 1));
        V saved = guard;
        guard = saved == ir::kNoValue ? en : bin(Opcode::And, saved, en);
        bool ok = write(dst, x);
        guard = saved;
        return ok;
      }
      return write(dst, x);
    }
    case Op::MovFromC: return write(dst, creg(in.find(Role::Cond)->reg));
    case Op::MovFromA: return write(dst, areg(in.find(Role::ASrc)->reg));
    case Op::MovFromSr:
      if (s1->reg == 3) return write(dst, k32(0x20));
      if (s1->reg == 0 || s1->reg == 1) return unsupported("physid/clock are not translated");
      return write(dst, k32(0));
    case Op::MovToC:
      if (!read(s1, x)) return false;
      set_creg(in.find(Role::CDst)->reg, band(x, 15));
      return true;
    case Op::ShlA:
      if (!read(s1, x)) return false;
      return set_areg(in.find(Role::ADst)->reg, shl(x, unsigned(s2->imm & 31)));
    case Op::AddA:
      return set_areg(in.find(Role::ADst)->reg, bin(Opcode::IAdd, areg(in.find(Role::ASrc)->reg), k32(uint32_t(s2->imm))));
    case Op::IAdd:
    case Op::IMad: return int_add();
    case Op::Mul16:
    case Op::Mul24: {
      std::vector<std::string> sg;
      for (auto& nm : in.names())
        if (nm == "u16" || nm == "s16" || nm == "u24" || nm == "s24") sg.push_back(nm);
      if (!read(s1, x) || !read(s2, y)) return false;
      V res;
      if (in.op == Op::Mul16) {
        bool g1 = !sg.empty() && sg[0] == "s16";
        bool g2 = sg.size() > 1 && sg.back() == "s16";
        if (s1 && s1->kind == OKind::Mem && sg.size() >= 3) g2 = sg[2] == "s16";
        auto ext = [&](V v, bool s) {
          return b.emit(Opcode::BfExtract, Type::I32, {v, k32(0), k32(16)}, uint8_t(s ? ir::Sign::Signed : ir::Sign::Unsigned));
        };
        res = bin(Opcode::IMul, ext(x, g1), ext(y, g2));
      } else {
        bool g = !sg.empty() && sg[0] == "s24";
        res = mul24(x, y, g, has("high"));
      }
      if (!write(dst, res)) return false;
      set_flags(flags_int(res, 32));
      return true;
    }
    case Op::Sad: {
      bool sg = has("s16") || has("s32");
      unsigned bits = (has("u16") || has("s16")) ? 16 : 32;
      uint32_t m = bits == 16 ? 0xffffu : 0xffffffffu;
      const Operand* c = in.addend();
      if (!read(s1, x) || !read(s2, y) || !read(c, z)) return false;
      auto ext = [&](V v) {
        return b.emit(Opcode::BfExtract, Type::I32, {v, k32(0), k32(bits)}, uint8_t(sg ? ir::Sign::Signed : ir::Sign::Unsigned));
      };
      V mres = band(b.emit(Opcode::ISad, Type::I32, {ext(x), ext(y), k32(0)}, uint8_t(sg ? ir::Sign::Signed : ir::Sign::Unsigned)), m);
      z = band(z, m);
      V res, C, O;
      add_flags(mres, z, b.i1(false), bits, res, C, O);
      if (!write(dst, res)) return false;
      set_flags(flags_add(res, bits, C, O));
      return true;
    }
    case Op::IMin:
    case Op::IMax:
    case Op::ISet: {
      bool sg = has("s16") || has("s32");
      unsigned bits = b16 ? 16 : 32;
      uint32_t m = bits == 16 ? 0xffffu : 0xffffffffu;
      static const char* cn[8] = {"never", "l", "e", "le", "g", "lg", "ge", "always"};
      unsigned cond = 0;
      for (unsigned i = 0; i < 8; ++i)
        if (has(cn[i])) cond = i;
      if (!read(s1, x) || !read(s2, y)) return false;
      x = band(x, m);
      y = band(y, m);
      auto ext = [&](V v) {  // 32 bits: already the value
        return bits == 32 ? v : b.emit(Opcode::BfExtract, Type::I32, {v, k32(0), k32(bits)}, uint8_t(sg ? ir::Sign::Signed : ir::Sign::Unsigned));
      };
      V ea = ext(x), eb = ext(y);
      V lt = b.icmp(sg ? ir::IntPred::Slt : ir::IntPred::Ult, ea, eb);
      V res;
      if (in.op == Op::ISet) {
        V eq = b.icmp(ir::IntPred::Eq, ea, eb);
        V gt = b.icmp(sg ? ir::IntPred::Sgt : ir::IntPred::Ugt, ea, eb);
        V t = b.i1(false);
        if (cond & 1) t = bin(Opcode::Or, t, lt);
        if (cond & 2) t = bin(Opcode::Or, t, eq);
        if (cond & 4) t = bin(Opcode::Or, t, gt);
        res = b.select(t, k32(m), k32(0));
      } else if (in.op == Op::IMin) {
        res = b.select(lt, x, y);
      } else {
        res = b.select(lt, y, x);
      }
      if (!write(dst, res)) return false;
      set_flags(flags_int(res, bits));
      return true;
    }
    case Op::LogOp: {
      unsigned bits = b16 ? 16 : 32;
      uint32_t m = bits == 16 ? 0xffffu : 0xffffffffu;
      int k = has("and") ? 0 : has("or") ? 1 : has("xor") ? 2 : 3;
      bool nt[2];
      side_flags("not", nt);
      if (!read(s1, x) || !read(s2, y)) return false;
      if (nt[0]) x = b.unary(Opcode::Not, x);
      if (nt[1]) y = b.unary(Opcode::Not, y);
      V r = k == 0 ? bin(Opcode::And, x, y) : k == 1 ? bin(Opcode::Or, x, y) : k == 2 ? bin(Opcode::Xor, x, y) : y;
      r = band(r, m);
      if (!write(dst, r)) return false;
      set_flags(flags_int(r, bits));
      return true;
    }
    case Op::Shl:
    case Op::Shr: {
      unsigned bits = b16 ? 16 : 32;
      uint32_t m = bits == 16 ? 0xffffu : 0xffffffffu;
      bool sg = has("s16") || has("s32");
      if (!read(s1, x) || !read(s2, y)) return false;  // shift counts are not masked
      x = band(x, m);
      V res, C;
      V in_range = bin(Opcode::And, ne0(y), b.icmp(ir::IntPred::Ult, y, k32(bits)));
      auto sh = [&](Opcode op, V v, V n) { return b.emit(op, Type::I32, {v, n}, uint8_t(ir::ShiftMode::Clamp)); };
      if (in.op == Op::Shl) {
        res = band(sh(Opcode::Shl, x, y), m);
        C = band(sh(Opcode::LShr, x, bin(Opcode::ISub, k32(bits), y)), 1);
      } else {
        V sx = sg ? b.emit(Opcode::BfExtract, Type::I32, {x, k32(0), k32(bits)}, uint8_t(ir::Sign::Signed)) : x;
        res = band(sh(sg ? Opcode::AShr : Opcode::LShr, sx, y), m);
        C = band(sh(Opcode::LShr, x, bin(Opcode::ISub, y, k32(1))), 1);
      }
      C = b.select(in_range, C, k32(0));
      V O = to_i32(bin(Opcode::And, b.icmp(ir::IntPred::Eq, y, k32(1)),
                       b.icmp(ir::IntPred::Ne, bit(x, bits - 1), bit(res, bits - 1))));
      if (!write(dst, res)) return false;
      set_flags(flags_int(res, bits, ne0(C), ne0(O)));
      return true;
    }
    case Op::FAdd:
    case Op::FMul:
    case Op::FMad: {
      bool ng[2];
      side_flags("neg", ng);
      bool rz = has("rz"), sat = has("sat");
      const Operand* bo = in.op == Op::FAdd ? (s2 ? s2 : s3) : s2;
      if (!read(s1, x) || !read(bo, y)) return false;
      V r;
      ir::Round rnd = rz ? ir::Round::TowardZero : ir::Round::NearestEven;
      if (in.op == Op::FMad) {
        const Operand* c = in.addend();
        if (!read(c, z)) return false;
        if (ng[0]) x = bin(Opcode::Xor, x, k32(0x80000000u));
        if (ng[1]) z = bin(Opcode::Xor, z, k32(0x80000000u));
        // The product is truncated (exact when an input is zero), the sum rounds to nearest.
        V p = bin(Opcode::FMul, as_f32(x), as_f32(y), 0, float_flags(true, true, ir::Round::TowardZero));
        r = bin(Opcode::FAdd, p, as_f32(z), 0, float_flags(true, true, ir::Round::NearestEven, sat));
      } else {
        if (ng[0]) x = bin(Opcode::Xor, x, k32(0x80000000u));
        if (ng[1]) y = bin(Opcode::Xor, y, k32(0x80000000u));
        r = bin(in.op == Op::FAdd ? Opcode::FAdd : Opcode::FMul, as_f32(x), as_f32(y), 0, float_flags(true, true, rnd, sat));
      }
      V ri = as_i32(r);
      if (!write(dst, ri)) return false;
      set_flags(flags_float(ri));
      return true;
    }
    case Op::QuadOp: {
      // Each lane reads source 1 of one lane of its quad (l0..l3, or its
      // neighbour: dx = lane ^ 1, dy = lane ^ 2) whether that lane runs this
      // code or not, and applies the operation of its own quad position.
      // get_var reads every lane's register; after lowering, masked writes
      // keep the values of lanes that are off this path (diverged or
      // exited), and lanes that were never launched read 0, as the
      // interpreter's never-launched threads (see docs/tesla.md).
      static const char* ops[4] = {"add", "subr", "sub", "mov2"};
      unsigned qop[4] = {}, k = 0;
      for (auto& n : in.names())
        for (unsigned i = 0; i < 4; ++i)
          if (n == ops[i] && k < 4) qop[k++] = i;
      uint32_t neg_a = 0, neg_b = 0, mov = 0;  // per quad position
      for (unsigned q = 0; q < 4; ++q) {
        if (qop[q] == 1) neg_a |= 1u << q;
        if (qop[q] == 2) neg_b |= 1u << q;
        if (qop[q] == 3) mov |= 1u << q;
      }
      V q = band(b.emit(Opcode::LaneId, Type::I32, {}), 3);
      V idx = has("dx") ? bin(Opcode::Xor, q, k32(1)) : has("dy") ? bin(Opcode::Xor, q, k32(2))
                        : k32(has("l1") ? 1 : has("l2") ? 2 : has("l3") ? 3 : 0);
      if (!read(s1, x) || !read(s3, y)) return false;
      V launched = b.emit(Opcode::EntryMask, Type::I1, {});
      V a = b.emit(Opcode::QuadShuffle, Type::I32, {b.select(launched, x, k32(0)), idx});
      auto lane_bit = [&](uint32_t m) {
        return band(b.emit(Opcode::LShr, Type::I32, {k32(m), q}, uint8_t(ir::ShiftMode::Clamp)), 1);
      };
      V sa = shl(lane_bit(neg_a), 31), sb = shl(lane_bit(neg_b), 31);
      V sum = as_i32(bin(Opcode::FAdd, as_f32(bin(Opcode::Xor, a, sa)), as_f32(bin(Opcode::Xor, y, sb)), 0,
                         float_flags(true, true)));
      // mov2: source 3 with a denormal flushed to a signed zero (NaN kept).
      V flushed = b.select(b.icmp(ir::IntPred::Eq, band(y, 0x7f800000u), k32(0)), band(y, 0x80000000u), y);
      V r = b.select(ne0(lane_bit(mov)), flushed, sum);
      if (!write(dst, r)) return false;
      set_flags(flags_float(r));
      return true;
    }
    case Op::FSet:
    case Op::FMin:
    case Op::FMax:
    case Op::DSet:
    case Op::DMin:
    case Op::DMax: {
      bool dbl = in.op == Op::DSet || in.op == Op::DMin || in.op == Op::DMax;
      bool ng[2], ab[2];
      side_flags("neg", ng);
      side_flags("abs", ab);
      static const char* cn[16] = {"never", "l", "e", "le", "g", "lg", "ge", "lge",
                                   "u", "lu", "eu", "leu", "gu", "lgu", "geu", "always"};
      unsigned cond = 0;
      for (unsigned i = 0; i < 16; ++i)
        if (has(cn[i])) cond = i;
      V fa, fb;
      if (dbl) {
        if (!read64(s1, x) || !read64(s2, y)) return false;
        fa = as_f64(x), fb = as_f64(y);
      } else {
        if (!read(s1, x) || !read(s2, y)) return false;
        fa = as_f32(x), fb = as_f32(y);
      }
      if (ab[0]) fa = b.unary(Opcode::FAbs, fa);
      if (ng[0]) fa = b.unary(Opcode::FNeg, fa);
      if (ab[1]) fb = b.unary(Opcode::FAbs, fb);
      if (ng[1]) fb = b.unary(Opcode::FNeg, fb);
      uint32_t ftz = dbl ? 0 : ir::ff::FtzIn;
      if (in.op == Op::FSet || in.op == Op::DSet) {
        static const ir::FloatPred fp[16] = {
            ir::FloatPred::Oeq, ir::FloatPred::Olt, ir::FloatPred::Oeq, ir::FloatPred::Ole, ir::FloatPred::Ogt,
            ir::FloatPred::One, ir::FloatPred::Oge, ir::FloatPred::Ord, ir::FloatPred::Uno, ir::FloatPred::Ult,
            ir::FloatPred::Ueq, ir::FloatPred::Ule, ir::FloatPred::Ugt, ir::FloatPred::Une, ir::FloatPred::Uge,
            ir::FloatPred::Oeq};
        V t = cond == 0 ? b.i1(false) : cond == 15 ? b.i1(true) : b.fcmp(fp[cond], fa, fb, ftz);
        V r = sel32(t, 0xffffffffu, 0);
        if (!write(dst, r)) return false;
        set_flags(flags_int(r, 32));
        return true;
      }
      bool mn = in.op == Op::FMin || in.op == Op::DMin;
      uint32_t fl = ir::with_nan(ftz, ir::NanRule::AllOnes);
      V r = bin(mn ? Opcode::FMin : Opcode::FMax, fa, fb, uint8_t(ir::MinMaxNan::NumberWins), fl);
      if (dbl) {
        V ri = as_i64(r);
        if (!write64(dst, ri)) return false;
        set_flags(flags_double(ri));
      } else {
        V ri = as_i32(r);
        if (!write(dst, ri)) return false;
        set_flags(flags_float(ri));
      }
      return true;
    }
    case Op::FSlct: {
      if (!read(s3, z)) return false;
      if (has("neg")) z = bin(Opcode::Xor, z, k32(0x80000000u));
      V ge = b.fcmp(ir::FloatPred::Oge, as_f32(z), b.f32_bits(0), ir::ff::FtzIn);
      if (!read(s1, x) || !read(s2, y)) return false;
      V r = b.select(ge, x, y);
      if (!write(dst, r)) return false;
      set_flags(flags_int(r, 32));
      return true;
    }
    case Op::Rcp:
    case Op::Rsqrt:
    case Op::Lg2:
    case Op::Sin:
    case Op::Cos:
    case Op::Ex2:
    case Op::PreSin:
    case Op::PreEx2: {
      if (!read(s1, x)) return false;
      if (has("abs")) x = band(x, 0x7fffffffu);
      if (has("neg")) x = bin(Opcode::Xor, x, k32(0x80000000u));
      bool sat = has("sat");
      uint8_t tesla = uint8_t(ir::Transc::Tesla);
      V fx = as_f32(x), r;
      // Float inputs flush; the fixed-point side (sin/cos/ex2 inputs,
      // presin/preex2 results) must not, as small fixed values look subnormal.
      switch (in.op) {
        case Op::Rcp: r = b.unary(Opcode::FRcp, fx, tesla, float_flags(true, true, ir::Round::NearestEven, sat)); break;
        case Op::Rsqrt: r = b.unary(Opcode::FRsqrt, fx, tesla, float_flags(true, true, ir::Round::NearestEven, sat)); break;
        case Op::Lg2: r = b.unary(Opcode::FLog2, fx, tesla, float_flags(true, true, ir::Round::NearestEven, sat)); break;
        case Op::Sin: r = b.unary(Opcode::FSin, fx, tesla, float_flags(false, false, ir::Round::NearestEven, sat)); break;
        case Op::Cos: r = b.unary(Opcode::FCos, fx, tesla, float_flags(false, false, ir::Round::NearestEven, sat)); break;
        case Op::Ex2: r = b.unary(Opcode::FExp2, fx, tesla, float_flags(false, false, ir::Round::NearestEven, sat)); break;
        default:
          r = b.emit(Opcode::FSinStep, Type::F32, {fx, b.f32_bits(in.op == Op::PreSin ? 0 : 1)}, tesla,
                     float_flags(false, false, ir::Round::NearestEven, sat));
          break;
      }
      return write(dst, as_i32(r));
    }
    case Op::Cvt: return cvt();
    case Op::DAdd:
    case Op::DMul:
    case Op::DFma: {
      bool ng[2];
      side_flags("neg", ng);
      ir::Round rnd = has("rm") ? ir::Round::Down : has("rp") ? ir::Round::Up : has("rz") ? ir::Round::TowardZero
                                                                                          : ir::Round::NearestEven;
      uint32_t fl = float_flags(false, false, rnd);
      if (!read64(s1, x)) return false;
      V fa = as_f64(x);
      if (ng[0]) fa = b.unary(Opcode::FNeg, fa);
      V r;
      if (in.op == Op::DAdd) {
        if (!read64(s3, y)) return false;
        V fb = as_f64(y);
        if (ng[1]) fb = b.unary(Opcode::FNeg, fb);
        r = bin(Opcode::FAdd, fa, fb, 0, fl);
      } else if (in.op == Op::DMul) {
        if (!read64(s2, y)) return false;
        r = bin(Opcode::FMul, fa, as_f64(y), 0, fl);
      } else {
        if (!read64(s2, y) || !read64(s3, z)) return false;
        V fc = as_f64(z);
        if (ng[1]) fc = b.unary(Opcode::FNeg, fc);
        r = b.emit(Opcode::FFma, Type::F64, {fa, as_f64(y), fc}, 0, fl);
      }
      V ri = as_i64(r);
      if (!write64(dst, ri)) return false;
      set_flags(flags_double(ri));
      return true;
    }
    case Op::LdC:
    case Op::LdS:
    case Op::LdA:
      if (!read(mem, x)) return false;
      return write(dst, x);
    case Op::StS:
    case Op::StO: {
      unsigned bytes = has("b8") ? 1 : has("b16") ? 2 : 4;
      if (!read(s3, x)) return false;
      return store(*mem, address(*mem), bytes, x);
    }
    case Op::LdL:
    case Op::StL:
    case Op::LdG:
    case Op::StG: {
      static const char* sz[7] = {"u8", "s8", "u16", "s16", "b32", "b64", "b128"};
      static const unsigned bytes_of[7] = {1, 1, 2, 2, 4, 8, 16};
      auto names = in.names();
      int k = -1;
      for (int i = 0; i < 7 && k < 0; ++i)
        if (names.size() > 1 && names[1] == sz[i]) k = i;
      if (k < 0) return unsupported("unknown size");
      unsigned bytes = bytes_of[k];
      bool st = in.op == Op::StL || in.op == Op::StG;
      V a = address(*mem);
      if (bytes == 16) {
        // Two 8-byte halves, both checked against the 16-byte alignment first.
        V bad = b.icmp(ir::IntPred::Ne, bin(Opcode::And, a, b.i64(15)), b.i64(0));
        a = b.select(bad, b.i64(kUnbackedAddress), a);
        if (mem->space == 'l') {
          V over = b.icmp(ir::IntPred::Ugt, bin(Opcode::IAdd, a, b.i64(16)), b.i64(opt.lmem));
          a = b.select(over, b.i64(kUnbackedAddress), a);
        }
      }
      unsigned chunks = bytes == 16 ? 2 : 1, cb = bytes == 16 ? 8 : bytes;
      std::vector<V> loaded;
      for (unsigned i = 0; i < chunks; ++i) {
        V ai = bin(Opcode::IAdd, a, b.i64(8 * i));
        if (st) {
          V v;
          if (cb == 8) {
            V lo = b.convert(Opcode::Zext, Type::I64, reg(dst->reg + int(2 * i)));
            V hi = b.convert(Opcode::Zext, Type::I64, reg(dst->reg + int(2 * i) + 1));
            v = bin(Opcode::Or, lo, b.emit(Opcode::Shl, Type::I64, {hi, k32(32)}, uint8_t(ir::ShiftMode::Clamp)));
          } else {
            v = reg(dst->reg);
          }
          if (!store(*mem, ai, cb, v)) return false;
        } else {
          V v;
          if (!load(*mem, ai, cb, v)) return false;
          loaded.push_back(v);
        }
      }
      if (st) return true;
      if (bytes <= 4) {
        V v = loaded[0];
        if (k == 1) v = b.convert(Opcode::Sext, Type::I32, b.convert(Opcode::Trunc, Type::I8, v));
        if (k == 3) v = b.convert(Opcode::Sext, Type::I32, b.convert(Opcode::Trunc, Type::I16, v));
        set_reg(dst->reg, v);
      } else {
        for (unsigned i = 0; i < chunks; ++i) {
          V v = loaded[i];
          set_reg(dst->reg + int(2 * i), b.convert(Opcode::Trunc, Type::I32, v));
          set_reg(dst->reg + int(2 * i) + 1,
                  b.convert(Opcode::Trunc, Type::I32, b.emit(Opcode::LShr, Type::I64, {v, k32(32)}, uint8_t(ir::ShiftMode::Clamp))));
        }
      }
      return true;
    }
    case Op::RedG:
    case Op::AtomG: {
      bool is64 = has("u64") || has("b64");
      bool sg = has("s32");
      std::string opn;
      for (auto& nm : in.names())
        if (nm == "add" || nm == "inc" || nm == "dec" || nm == "max" || nm == "min" || nm == "and" || nm == "or" ||
            nm == "xor" || nm == "exch" || nm == "cas")
          opn = nm;
      const Operand* val = in.op == Op::RedG ? dst : s2;
      const Operand* cmp = opn == "cas" ? s2 : nullptr;
      if (opn == "cas") val = s3;
      unsigned bytes = is64 ? 8 : 4;
      Type t = is64 ? Type::I64 : Type::I32;
      V v, c;
      if (is64) {
        if (!read64(val, v)) return false;
      } else if (!read(val, v)) {
        return false;
      }
      if (cmp) {
        if (is64) {
          if (!read64(cmp, c)) return false;
        } else if (!read(cmp, c)) {
          return false;
        }
      }
      V a = checked(*mem, address(*mem), bytes);
      V old;
      if (opn == "cas") {
        old = b.emit(Opcode::AtomicCas, t, {a, c, v, mask()}, 0, 0, uint64_t(ir::Space::Global));
      } else {
        ir::AtomicOp op;
        if (opn == "add") op = ir::AtomicOp::Add;
        else if (opn == "inc") op = ir::AtomicOp::Inc;
        else if (opn == "dec") op = ir::AtomicOp::Dec;
        else if (opn == "max") op = sg ? ir::AtomicOp::SMax : ir::AtomicOp::UMax;
        else if (opn == "min") op = sg ? ir::AtomicOp::SMin : ir::AtomicOp::UMin;
        else if (opn == "and") op = ir::AtomicOp::And;
        else if (opn == "or") op = ir::AtomicOp::Or;
        else if (opn == "xor") op = ir::AtomicOp::Xor;
        else if (opn == "exch") op = ir::AtomicOp::Exch;
        else return unsupported("unknown atomic operation");
        if (is64 && opn != "add" && opn != "exch" && opn != "cas") return unsupported("64-bit atomic other than add/exch/cas");
        old = b.emit(Opcode::AtomicRmw, t, {a, v, mask()}, uint8_t(op), 0, uint64_t(ir::Space::Global));
      }
      if (in.op == Op::AtomG) return is64 ? write64(dst, old) : write(dst, old);
      return true;
    }
    case Op::VoteAny:
    case Op::VoteAll: {
      // The predicate is the input, over the active lanes; true -> $c = 0, false -> Z.
      V p = pred(in.pred_c, unsigned(in.pred));
      V r = b.emit(in.op == Op::VoteAny ? Opcode::Any : Opcode::All, Type::I1, {p, b.i1(true)});
      V saved = guard;
      guard = ir::kNoValue;
      set_flags(sel32(r, 0, 1));
      guard = saved;
      return true;
    }
    case Op::Nop:
    case Op::PmEvent: return true;
    default: return unsupported("not translated yet");
  }
}

}  // namespace

std::string describe_trap(uint64_t code) {
  static const char* what[] = {"trap", "trap instruction", "execution ran past the end of the code",
                               "control-flow stack overflow", "break without a breakaddr entry",
                               "return/break address outside the code", "instruction the hardware refuses (decode error)"};
  uint32_t kind = uint32_t(code >> 24);
  char buf[128];
  std::snprintf(buf, sizeof buf, "%s at word 0x%x", what[kind < 7 ? kind : 0], unsigned(code & 0xffffff));
  return buf;
}

uint32_t uniform_bytes(const TranslateOptions& opt) { return opt.launch_abi ? 0x10 + opt.param_bytes : 0; }

bool translate(const std::vector<uint32_t>& code, const TranslateOptions& opt, ir::Function& out, std::string& err) {
  Translator t(code, opt, out, err);
  if (!t.run()) return false;
  std::string v = ir::verify(out);
  if (!v.empty()) {
    err = "internal error: translated IR does not verify: " + v;
    return false;
  }
  return true;
}

bool translate(const std::vector<uint32_t>& code, uint32_t entry, const TranslateOptions& opt, ir::Function& out,
               std::string& err) {
  TranslateOptions o = opt;
  o.entry = entry;
  return translate(code, o, out, err);
}

TranslateOptions options_for(const BlockConfig& cfg, const Target& target, uint32_t entry) {
  TranslateOptions o;
  o.target = target;
  o.entry = entry;
  o.regs = cfg.regs;
  o.smem = std::max<uint32_t>(cfg.smem, 0x10 + uint32_t(cfg.params.size()));
  o.lmem = cfg.lmem;
  o.attr_bytes = cfg.attr_bytes;
  o.param_bytes = uint32_t(cfg.params.size());
  o.call_limit = cfg.call_limit;
  return o;
}

std::vector<uint8_t> pack_uniforms(const BlockConfig& cfg) {
  std::vector<uint8_t> u(0x10 + cfg.params.size(), 0);
  uint16_t hdr[8] = {0, uint16_t(cfg.block[0]), uint16_t(cfg.block[1]), uint16_t(cfg.block[2]),
                     uint16_t(cfg.grid[0]), uint16_t(cfg.grid[1]), 0, 0};
  std::memcpy(u.data(), hdr, 16);
  if (!cfg.params.empty()) std::memcpy(u.data() + 0x10, cfg.params.data(), cfg.params.size());
  return u;
}

namespace {
template <class T>
void put(const ir::Function& f, uint8_t* vars, uint32_t var, unsigned lane, T v) {
  std::memcpy(vars + f.var_offset(var) + lane * ir::lane_bytes(f.vars[var].type), &v, sizeof v);
}
uint32_t get32(const ir::Function& f, const uint8_t* vars, uint32_t var, unsigned lane) {
  uint32_t v;
  std::memcpy(&v, vars + f.var_offset(var) + lane * 4, 4);
  return v;
}
}  // namespace

uint32_t state_var(const ir::Function& f, const std::string& name) {
  for (uint32_t v = 0; v < f.vars.size(); ++v)
    if (f.vars[v].name == name) return v;
  return kNoStateVar;
}

LaunchSlots launch_slots(const ir::Function& f) {
  auto slot = [&](const char* name) {
    uint32_t v = state_var(f, name);
    return v == kNoStateVar ? LaunchSlots::kNoSlot : f.var_offset(v);
  };
  return LaunchSlots{slot("r0"), slot("ctaid"), slot("local_base"), slot("abi_writer")};
}

uint32_t attr_slot(const ir::Function& f) {
  uint32_t v = state_var(f, "attr_base");
  return v == kNoStateVar ? LaunchSlots::kNoSlot : f.var_offset(v);
}

uint32_t barrier_slot(const ir::Function& f) {
  uint32_t v = state_var(f, "barrier");
  return v == kNoStateVar ? LaunchSlots::kNoSlot : f.var_offset(v);
}

void init_attr_warp(uint32_t slot, uint8_t* vars, unsigned lanes, uint64_t attr_base, uint64_t stride) {
  if (slot == LaunchSlots::kNoSlot) return;
  lanes = std::min<unsigned>(lanes, ir::kWarpLanes);
  for (unsigned l = 0; l < lanes; ++l) {
    uint64_t a = attr_base + l * stride;
    std::memcpy(vars + slot + l * 8, &a, 8);
  }
}

// The launch ABI's values of one thread: $r0 (tid.x | tid.y << 16 | tid.z <<
// 26), the packed ctaid, and whether it is the thread that writes s[0..0x10).
static uint32_t launch_r0(const unsigned tid[3]) { return tid[0] | tid[1] << 16 | tid[2] << 26; }
static uint32_t launch_ctaid(const unsigned ctaid[2]) { return (ctaid[0] & 0xffff) | ctaid[1] << 16; }
static uint32_t launch_writer(const unsigned tid[3]) { return (tid[0] | tid[1] | tid[2]) == 0; }

void init_launch_lane(const LaunchSlots& s, uint8_t* vars, unsigned lane, const unsigned tid[3],
                      const unsigned ctaid[2], uint64_t local_base) {
  uint32_t r0 = launch_r0(tid), cta = launch_ctaid(ctaid), writer = launch_writer(tid);
  if (s.r0 != LaunchSlots::kNoSlot) std::memcpy(vars + s.r0 + lane * 4, &r0, 4);
  if (s.ctaid != LaunchSlots::kNoSlot) std::memcpy(vars + s.ctaid + lane * 4, &cta, 4);
  if (s.local_base != LaunchSlots::kNoSlot) std::memcpy(vars + s.local_base + lane * 8, &local_base, 8);
  if (s.abi_writer != LaunchSlots::kNoSlot) std::memcpy(vars + s.abi_writer + lane * 4, &writer, 4);
}

void init_launch_warp(const LaunchSlots& s, uint8_t* vars, unsigned lanes, const unsigned (*tid)[3],
                      const unsigned ctaid[2], uint64_t local_base, uint64_t local_stride) {
  uint32_t r0[ir::kWarpLanes], cta[ir::kWarpLanes], writer[ir::kWarpLanes] = {};
  uint64_t lb[ir::kWarpLanes];
  lanes = std::min<unsigned>(lanes, ir::kWarpLanes);
  uint32_t c = launch_ctaid(ctaid);
  for (unsigned l = 0; l < lanes; ++l) {
    r0[l] = launch_r0(tid[l]);
    cta[l] = c;
    lb[l] = local_base + l * local_stride;
    writer[l] = launch_writer(tid[l]);
  }
  if (s.r0 != LaunchSlots::kNoSlot) std::memcpy(vars + s.r0, r0, 4 * lanes);
  if (s.ctaid != LaunchSlots::kNoSlot) std::memcpy(vars + s.ctaid, cta, 4 * lanes);
  if (s.local_base != LaunchSlots::kNoSlot) std::memcpy(vars + s.local_base, lb, 8 * lanes);
  if (s.abi_writer != LaunchSlots::kNoSlot) std::memcpy(vars + s.abi_writer, writer, 4 * lanes);
}

void init_launch_lane(const ir::Function& f, uint8_t* vars, unsigned lane, const unsigned tid[3],
                      const unsigned ctaid[2], uint64_t local_base) {
  init_launch_lane(launch_slots(f), vars, lane, tid, ctaid, local_base);
}

// Calls fn(kind, n, var) for every state var of f: kind 'r', 'a' with the
// register number, 'c' with 4 * register + flag (Z S C O), 'x' exited, 'l'
// local_base, 'w' abi_writer.
template <class Fn>
void each_state_var(const ir::Function& f, Fn fn) {
  for (uint32_t v = 0; v < f.vars.size(); ++v) {
    const std::string& nm = f.vars[v].name;
    if (nm == "exited") fn('x', 0u, v);
    else if (nm == "local_base") fn('l', 0u, v);
    else if (nm == "abi_writer") fn('w', 0u, v);
    else if (nm.size() >= 2 && (nm[0] == 'r' || nm[0] == 'a') && nm.find_first_not_of("0123456789", 1) == std::string::npos)
      fn(nm[0], unsigned(std::stoul(nm.substr(1))), v);
    else if (nm.size() == 3 && nm[0] == 'c' && nm[1] >= '0' && nm[1] <= '3')
      for (unsigned k = 0; k < 4; ++k)
        if (nm[2] == kFlagNames[k]) fn('c', unsigned(nm[1] - '0') * 4 + k, v);
  }
}

void init_state_lane(const ir::Function& f, uint8_t* vars, unsigned lane, const ThreadState& st, uint64_t local_base) {
  each_state_var(f, [&](char kind, unsigned n, uint32_t v) {
    switch (kind) {
      case 'r': put<uint32_t>(f, vars, v, lane, st.r[n & 127]); break;
      case 'a': put<uint32_t>(f, vars, v, lane, st.a[n & 7]); break;
      case 'c': put<uint32_t>(f, vars, v, lane, st.c[(n / 4) & 3] >> (n % 4) & 1u); break;
      case 'x': put<uint32_t>(f, vars, v, lane, st.exited); break;
      case 'l': put<uint64_t>(f, vars, v, lane, local_base); break;
      case 'w': put<uint32_t>(f, vars, v, lane, 0); break;
    }
  });
}

void read_lane(const ir::Function& f, const uint8_t* vars, unsigned lane, ThreadState& out) {
  each_state_var(f, [&](char kind, unsigned n, uint32_t v) {
    switch (kind) {
      case 'r': out.r[n & 127] = get32(f, vars, v, lane); break;
      case 'a': out.a[n & 7] = uint16_t(get32(f, vars, v, lane)); break;
      case 'c': {  // one flag bit of $c(n / 4)
        uint8_t& c = out.c[(n / 4) & 3];
        c = uint8_t((c & ~(1u << (n % 4))) | (get32(f, vars, v, lane) & 1u) << (n % 4));
        break;
      }
      case 'x': out.exited = get32(f, vars, v, lane) != 0; break;
    }
  });
}

// ---------------------------------------------------------------- TeslaMemory

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
