// Internal to the Tesla translation (translate*.cpp): the Translator class
// shared by the per-family files.
//   translate.cpp           the driver, CFG discovery, warp-stack resolution
//                           and cloning, if-conversion, block merging
//   translate_control.cpp   control instructions: the warp stack (push, pop,
//                           ret/brk dispatch), exits, bra, call, bar, trap
//   translate_operands.cpp  state access ($r $a $c), operands, flags, predicates
//   translate_alu.cpp       integer, float, double, transcendental, vote
//   translate_cvt.cpp       cvt
//   translate_memory.cpp    addresses, loads, stores, atomics, the launch ABI block
// The state layout the translation produces is the launch ABI (launch_abi.h).
#pragma once
#include <functional>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "frontend/tesla/translate.h"
#include "ir/builder.h"

namespace gpurc::tesla::detail {

using ir::Opcode;
using ir::Type;
using V = ir::ValueId;

// While translating, every piece of state has a var at these indices and the
// private vars follow; compact_vars() then drops the vars nothing uses (the
// public layout is by name: launch_abi.h).
constexpr uint32_t kVarA = 0;
constexpr uint32_t kVarC = 8;  // $cN flag k (Z S C O) at kVarC + 4 N + k, I1
constexpr uint32_t kVarExited = 24;
constexpr uint32_t kVarCtaid = 25;
constexpr uint32_t kVarLocalBase = 26;
constexpr uint32_t kVarAbiWriter = 27;
constexpr uint32_t kVarR = 28;
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
// I32: descriptor of the barrier the warp stops at (ir::barrier_word) and
// the lane's stop count (or, when the code has one descriptor, that word
// with ir::kBarrierOneKind), read by the runtime's counted-barrier scheduler.
constexpr uint32_t kVarBarrier = kVarAttrBase + 1;
// I32: a MAD's result while it crosses from the block of its common case to
// the block after its exact slow path (Translator::fmad); private to the
// instruction, never guest state.
constexpr uint32_t kVarMadResult = kVarBarrier + 1;

// Warp-stack entries: kind << 28 | word address.
enum Entry : uint32_t { kEntryPreBrk = 1, kEntryCall = 2, kEntryCallLim = 3 };

inline uint32_t float_flags(bool ftz_in, bool ftz_out, ir::Round r = ir::Round::NearestEven, bool sat = false) {
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
  // A guard whose off lanes never read a register again (see emit_if: they
  // exit right after the region and the state is private): register and
  // flag writes under exactly this guard need no select against the old
  // value. Memory ops keep it as their mask.
  V free_writes_under = ir::kNoValue;
  bool guarded_write() const { return guard != ir::kNoValue && guard != free_writes_under; }
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

  // ------------------------------------------------------------ driver (translate.cpp)
  bool run();
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

  static bool pop_entry(Stack st, bool want_call, uint32_t& addr, Stack& rest);
  bool clone_contexts();
  static bool branch_target(const Insn& in, int64_t& t);
  void resolve_stack();
  bool discover();
  void zero_written_vars();
  void compact_vars();
  void drop_unread_abi_block(V first, V end);
  bool private_state = false;  // TranslateOptions::discard_state applies (no `bar`)
  bool emit_word(uint32_t w, V g);
  void merge_straight_line();

  // if-conversion (translate.cpp)
  static constexpr unsigned kIfConvertWords = 48;
  struct IfRegion {
    uint32_t bra = 0, fall_from = 0, fall_to = 0, taken_from = 0, taken_to = 0, cont = 0;
  };
  std::map<uint32_t, std::vector<int64_t>> sources;  // word -> instructions that branch there (-1: entry, return/break site)
  std::set<ir::BlockId> dead_blocks;                  // blocks of words translated inside an if-converted bra
  void find_sources();
  bool plain(uint32_t w) const;
  bool if_span(uint32_t from, uint32_t to, unsigned& budget);
  bool if_region(uint32_t p, IfRegion& r, unsigned& budget);
  bool emit_span(uint32_t from, uint32_t to, V g);
  bool emit_if(const IfRegion& r, V outer);
  bool lanes_exit_at(uint32_t w) const;

  // ------------------------------------------------------------ state access (translate_operands.cpp)
  V reg(int n) { return unsigned(n) < opt.regs && n < 128 ? b.get_var(kVarR + unsigned(n)) : b.i32(0); }
  void set_reg(int n, V v) {
    if (unsigned(n) >= opt.regs || n >= 128) return;
    if (guarded_write()) v = b.select(guard, v, b.get_var(kVarR + unsigned(n)));
    b.set_var(kVarR + unsigned(n), v);
  }
  static bool areg_is_zero(int n) { return n <= 0 || n == 5 || n == 6 || n > 7; }
  V areg(int n) { return areg_is_zero(n) ? b.i32(0) : b.get_var(kVarA + unsigned(n)); }
  bool set_areg(int n, V v);
  // $c registers live as four i1 vars (Z S C O): flag producers build a
  // packed value with pack(), and set_creg() stores its parts as they are
  // (the packed value itself is dead unless read as a value, e.g. `mov $r
  // $c`); predicates read the parts. A packed var would be unpacked at every
  // predicate and packed at every flag write, ~15 ops per `set`/`bra` pair.
  struct FlagBits {
    V f[4];
  };
  std::map<V, FlagBits> packs;
  V pack(V z, V sn, V c, V o);
  V cflag(int n, unsigned k) { return b.get_var(kVarC + 4 * unsigned(n & 3) + k); }
  V creg(int n) { return pack(cflag(n, 0), cflag(n, 1), cflag(n, 2), cflag(n, 3)); }
  void set_creg(int n, V v);
  void set_flags(V fl) {
    if (const Operand* c = cur->find(Role::CDst)) set_creg(c->reg, fl);
  }

  V mask() { return guard != ir::kNoValue ? guard : b.i1(true); }
  // Shorthands for the ops with a constant operand that flag and operand
  // code is made of (the constant is emitted right before its op).
  V band(V x, uint32_t m) { return b.and_(x, b.i32(m)); }
  V shr(V x, unsigned n) { return b.lshr(x, b.i32(n), ir::ShiftMode::Clamp); }
  V shl(V x, unsigned n) { return b.shl(x, b.i32(n), ir::ShiftMode::Clamp); }
  V bit(V x, unsigned n) { return band(shr(x, n), 1); }
  V ne0(V x) { return b.icmp(ir::IntPred::Ne, x, b.i32(0)); }
  V eq0(V x) { return b.icmp(ir::IntPred::Eq, x, b.i32(0)); }
  V is_nan64(V x) {
    return b.icmp(ir::IntPred::Ugt, b.and_(x, b.i64(0x7fffffffffffffffull)), b.i64(0x7ff0000000000000ull));
  }
  V sel32(V c, uint32_t t, uint32_t e) { return b.select(c, b.i32(t), b.i32(e)); }
  // The low `n` bits of an i32, zero- or (sign) sign-extended.
  // The low 16 bits of a register ($rNl): the value itself when it has no
  // bit above them (a zero-extended u16 or narrower, e.g. `ld u16` of a
  // launch-block word, or an `and` with such a mask), else x & 0xffff.
  V low_half(V x) {
    const ir::Inst& xi = f.insts[x];
    if (xi.op == Opcode::Zext && xi.type == Type::I32 && !xi.args.empty() &&
        ir::bit_width(f.insts[xi.args[0]].type) <= 16)
      return x;
    if (xi.op == Opcode::And && xi.args.size() == 2 && f.insts[xi.args[1]].op == Opcode::Const &&
        (f.insts[xi.args[1]].imm & ~uint64_t(0xffff)) == 0)
      return x;
    return band(x, 0xffff);
  }
  V low_bits(V x, unsigned n, bool sign) {
    // Zero-extending a value already masked to n bits (a half register read): itself.
    const ir::Inst& xi = f.insts[x];
    if (!sign && n < 32 && xi.op == Opcode::And && f.insts[xi.args[1]].op == Opcode::Const &&
        (f.insts[xi.args[1]].imm & ~((uint64_t(1) << n) - 1)) == 0)
      return x;
    V offset = b.i32(0);
    return b.bf_extract(sign ? ir::Sign::Signed : ir::Sign::Unsigned, x, offset, b.i32(n));
  }

  // Flags of a result: Z=1 S=2 of an integer result of `bits` (16 or 32)
  // with C and O when given; float (Z: zero or NaN, S: negative or NaN); double.
  V flags_int(V res, unsigned bits, V C = ir::kNoValue, V O = ir::kNoValue);
  // C=4 and O=8 of add_flags() with the Z/S flags of the result.
  V flags_add(V res, unsigned bits, V C, V O) { return flags_int(res, bits, C, O); }
  V flags_float(V res, bool ftz = true);
  V flags_double(V res64);
  V sat_keep_nan(V res);
  V fmad(V x, V y, V z);        // the common case inline, the exact rules behind an any() vote
  V fmad_exact(V x, V y, V z);  // every input, straight-line (about 75 ops)
  // The float ops of the MADs whose FtzIn changes nothing in the lanes that
  // take their results (fmad, fmad_exact); mad_daz_flags() gives them FtzIn
  // when every other float op of the function flushes its inputs.
  std::vector<V> mad_float_ops;
  V mad_op(V v) {
    mad_float_ops.push_back(v);
    return v;
  }
  void mad_daz_flags();
  bool inside_loop(uint32_t p);  // some backward branch spans word p
  std::vector<std::pair<uint32_t, uint32_t>> back_edges;  // (target, source) of backward branches
  bool back_edges_known = false;
  // The 32 predicate conditions of a $c register (sem::pred).
  V pred(int creg_n, unsigned code);
  V negate(V c);  // !c of an i1: the operand of a `not`, else a new `not`

  // ------------------------------------------------------------ operands (translate_operands.cpp)
  bool read(const Operand* o, V& out);
  bool read64(const Operand* o, V& out);
  bool write(const Operand* o, V v);
  bool write64(const Operand* o, V v);
  void side_flags(const char* name, bool out[2]);

  // ------------------------------------------------------------ memory (translate_memory.cpp)
  V address(const Operand& o);
  V checked(const Operand& o, V a64, unsigned bytes);
  bool space_of(const Operand& o, ir::Space& s);
  bool load(const Operand& o, V a64, unsigned bytes, V& out);
  // s[] at a constant address inside the launch ABI block (ntid, nctaid,
  // ctaid, params) when no instruction stores to s[]: the block keeps what
  // the ABI writer put there, so the value comes from the uniform block (or
  // the ctaid var) instead of a shared-memory load per lane. The access is
  // aligned and inside s[] (smem >= 0x10 + params), so it cannot fault.
  bool abi_stable = false;
  bool abi_load(const Operand& o, unsigned bytes, V& out);
  bool store(const Operand& o, V a64, unsigned bytes, V v);
  bool memory();              // ld/st/red/atom instructions
  void write_abi_block();     // the entry's launch ABI block store (TranslateOptions::launch_abi)

  // ------------------------------------------------------------ ALU (translate_alu.cpp, translate_cvt.cpp)
  bool alu();
  bool int_add();
  V mul24(V x, V y, bool sg, bool high);
  void add_flags(V x, V y, V cin, unsigned bits, V& res, V& C, V& O);
  bool cvt();
  V cvt_mirrored(int rm, V negative, const std::function<V(ir::Round)>& convert);
  V f32_to_f16(V f, int rm, bool truncate);
  V flags_half(V h);

  // ------------------------------------------------------------ control (translate_control.cpp)
  bool control(uint32_t next);
  void push_entry(uint32_t entry);
  V stack_top(V index);
  void dispatch(const std::set<uint32_t>& sites, const Stack* rest);
  ir::BlockId make_dispatch(bool is_ret, const std::set<uint32_t>& sites, const Stack* rest = nullptr);
  // The join address of the innermost (narrowest) joinat region
  // [joinat + 1, target) around word `p` (address order), or ~0u. One sweep
  // over the code computes it for every word (n log n, also for huge inputs).
  std::vector<uint32_t> inner_join, inner_joinat;  // per word: the region's join and joinat addresses
  uint32_t enclosing_join(uint32_t p);
  void end_lanes();
  ir::BlockId block_at(uint32_t p, const Stack* st = nullptr);
  static uint32_t barrier_descriptor(const Insn& in);
  bool one_barrier_kind = false;  // every reachable `bar` has the same descriptor
};

}  // namespace gpurc::tesla::detail
