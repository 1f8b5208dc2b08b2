#include "frontend/tesla/module/fuzz_gen.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <random>
#include <stdexcept>

#include "frontend/tesla/tables.h"
#include "isa/fuzz_values.h"

namespace gpurc::fuzz {

using namespace tesla;

namespace {

// ------------------------------------------------------------ row pools

using detail::Field;

// Ops drawn from the table's rows. Control flow, g[]/l[] addresses and the
// instructions no engine can run in a compute program (tex, interp, emit,
// restart, ld lock, traps) are not in the pool: control flow and memory come
// from the templates below.
bool pool_op(Op op) {
  switch (op) {
    case Op::Mov: case Op::MovFromC: case Op::MovFromA: case Op::MovFromSr: case Op::MovToC:
    case Op::ShlA: case Op::AddA: case Op::LdC: case Op::LdS: case Op::StS:
    case Op::VoteAny: case Op::VoteAll:
    case Op::IAdd: case Op::ISet: case Op::IMax: case Op::IMin: case Op::Shl: case Op::Shr:
    case Op::Mul16: case Op::Mul24: case Op::Sad: case Op::IMad: case Op::LogOp:
    case Op::Rcp: case Op::Rsqrt: case Op::Lg2: case Op::Sin: case Op::Cos: case Op::Ex2: case Op::Cvt:
    case Op::FAdd: case Op::FSet: case Op::FMax: case Op::FMin: case Op::PreSin: case Op::PreEx2:
    case Op::FMul: case Op::FSlct: case Op::QuadOp: case Op::FMad:
    case Op::DFma: case Op::DAdd: case Op::DMul: case Op::DMin: case Op::DMax: case Op::DSet:
    case Op::LdG: case Op::StG: case Op::RedG: case Op::AtomG: case Op::Nop:
      return true;
    default:
      return false;
  }
}

struct Pool {
  std::vector<Op> ops;                        // distinct ops, picked uniformly
  std::map<Op, std::vector<RowRef>> rows;     // rows of each op
  std::vector<Field> reg_fields, idx_fields;  // where register numbers and space indices live
};

Insn decode_bits(uint64_t bits, const Target& t) {
  uint32_t w[2] = {uint32_t(bits), uint32_t(bits >> 32)};
  return decode(w, 2, 0, t);
}

const Pool& pool_for(const Target& t) {
  static std::mutex mu;
  static std::map<std::string, Pool> cache;
  std::lock_guard<std::mutex> lock(mu);
  std::string key = t.variant + ":" + std::to_string(t.features) + ":" + std::to_string(t.ptype);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  Pool p;
  std::mt19937_64 rng(12345);
  for (RowRef r : all_rows(t)) {
    if (r.table == 3) continue;  // control rows: templates
    uint64_t bits;
    unsigned words;
    if (!random_insn(r, t, rng, bits, words)) continue;
    Op op = decode_bits(bits, t).op;
    if (!pool_op(op)) continue;
    if (!p.rows.count(op)) p.ops.push_back(op);
    p.rows[op].push_back(r);
  }
  auto add_unique = [](std::vector<Field>& v, const Field& f) {
    for (auto& g : v)
      if (g.pos1 == f.pos1 && g.len1 == f.len1 && g.pos2 == f.pos2 && g.len2 == f.len2) return;
    v.push_back(f);
  };
  for (auto& [name, prim] : detail::tables().prims) {
    if (prim.type == detail::Prim::Reg && prim.rclass == 'r') add_unique(p.reg_fields, prim.f);
    if (prim.type == detail::Prim::Mem && prim.idx.width()) add_unique(p.idx_fields, prim.idx);
  }
  add_unique(p.reg_fields, Field{9, 7});  // g[$rN]
  return cache.emplace(key, std::move(p)).first->second;
}

// ------------------------------------------------------------ rewriting operands

bool same_operand(const Operand& a, const Operand& b) { return format_operand(a) == format_operand(b); }

// Changes the field behind atom `k` of `in` so that the atom becomes `want`,
// keeping every other atom: the field is found by trying each candidate that
// holds the operand's current encoding.
bool rewrite_atom(uint64_t& bits, const Target& t, const Insn& in, size_t k, const std::vector<Field>& fields,
                  uint64_t cur, uint64_t val, const Operand& want) {
  for (const Field& f : fields) {
    if (f.get(bits) != cur || (val >> f.width()) != 0) continue;
    uint64_t nb = f.put(bits, val);
    Insn d = decode_bits(nb, t);
    if (d.op != in.op || d.atoms.size() != in.atoms.size() || !d.valid) continue;
    bool ok = true;
    for (size_t i = 0; i < d.atoms.size() && ok; ++i) {
      const Atom& a = d.atoms[i];
      const Atom& b = in.atoms[i];
      if (a.type != b.type) ok = false;
      else if (a.type == Atom::Name) ok = a.name == b.name;
      else if (a.type == Atom::Opnd) ok = same_operand(a.op, i == k ? want : b.op);
    }
    if (!ok) continue;
    bits = nb;
    return true;
  }
  return false;
}

// Bytes of a g[] access: its size name (u8 .. b128).
unsigned access_bytes(const Insn& in) {
  static const std::pair<const char*, unsigned> kSizes[] = {
      {"u8", 1}, {"s8", 1}, {"u16", 2}, {"s16", 2}, {"b32", 4}, {"u32", 4}, {"s32", 4},
      {"f32", 4}, {"b64", 8}, {"u64", 8}, {"s64", 8}, {"b128", 16}};
  for (auto& [name, bytes] : kSizes)
    if (in.has(name)) return bytes;
  return 4;
}

// ------------------------------------------------------------ program text

// One instruction of the program being built: known bits, or envyas text
// whose "#label" (if any) is resolved once the layout is known.
struct Line {
  uint64_t bits = 0;
  unsigned words = 0;   // 0 = text, assembled at layout time
  std::string text;
  std::string label;    // label defined at this instruction
};

std::string hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

// Predicate names by code (the table's PRED rows); null = does not decode.
const char* const kPredNames[32] = {"never", "l", "e", "le", "g", "lg", "ge", "lge", "u", "lu", "eu",
                                    "leu", "gu", "lgu", "geu", "", "o", "c", "a", "s", nullptr,
                                    nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                                    "ns", "na", "nc", "no"};

class Generator {
 public:
  Generator(uint64_t seed, const Target& t, const TeslaGenOptions& opt, TeslaGenStats* stats)
      : rng_(seed), mt_(seed ^ 0x5eed7e51a0ull), bar_rng_(seed ^ 0xba2e1e55c0deull), t_(t), opt_(opt),
        stats_(stats), pool_(pool_for(t)) {}

  bool vertex_like() const { return t_.ptype == kVP || t_.ptype == kGP; }

  TeslaProgram run() {
    TeslaProgram p;
    p.target = t_;
    barrier_shape_ = opt_.barrier_shape;
    make_state(p);
    unsigned n = unsigned(rng_.range(int(opt_.min_insns), int(opt_.max_insns)));
    nsubs_ = rng_.chance(30) ? rng_.range(1, 2) : 0;
    block(n, 0, 0, false);
    lines_.push_back(text_line("exit nop"));
    for (int s = 0; s < nsubs_; ++s) {
      size_t first = lines_.size();
      block(unsigned(rng_.range(2, 10)), 1, 0, true);
      lines_.push_back(text_line("ret"));
      lines_[first].label = "sub" + std::to_string(s);
    }
    layout(p);
    return p;
  }

 private:
  Rng rng_;
  std::mt19937_64 mt_;
  Rng bar_rng_;               // the barrier shape's choices (fuzz_gen.h); unused by other programs
  bool barrier_shape_ = false;
  unsigned warps_ = 1;
  Target t_;
  const TeslaGenOptions& opt_;
  TeslaGenStats* stats_;
  const Pool& pool_;
  std::vector<Line> lines_;
  int nlabels_ = 0;
  int nsubs_ = 0;

  std::string new_label() { return "L" + std::to_string(nlabels_++); }
  static Line text_line(std::string s) {
    Line l;
    l.text = std::move(s);
    return l;
  }
  void emit_text(std::string s) { lines_.push_back(text_line(std::move(s))); }
  void place_label(const std::string& l) {
    // The label goes on the next instruction: a join nop or whatever follows.
    pending_label_ = l;
  }
  std::string pending_label_;
  void push(Line l) {
    if (!pending_label_.empty()) {
      if (!l.label.empty()) throw std::logic_error("two labels on one instruction");
      l.label = pending_label_;
      pending_label_.clear();
    }
    lines_.push_back(std::move(l));
  }
  void text(std::string s) { push(text_line(std::move(s))); }
  void count(const char* what) {
    if (stats_) ++stats_->generated[what];
  }

  std::string data_reg() { return "$r" + std::to_string(rng_.below(kTeslaDataRegs)); }
  std::string pred() {
    // Mostly real conditions; sometimes always / never.
    unsigned r = rng_.below(100);
    if (r < 5) return "";
    if (r < 8) return "(never) ";
    for (;;) {
      unsigned c = rng_.below(32);
      if (c == 0 || c == 15 || !kPredNames[c]) continue;
      return std::string("(") + kPredNames[c] + " $c" + std::to_string(rng_.below(4)) + ") ";
    }
  }

  // ---------------------------------------------------------- initial state
  uint32_t reg_value() {
    static const ir::Type kTypes[] = {ir::Type::F32, ir::Type::F32, ir::Type::I32, ir::Type::I32,
                                      ir::Type::I16, ir::Type::F16, ir::Type::I8};
    unsigned r = rng_.below(10);
    if (r == 0) return uint32_t(rng_.next());
    if (r == 1) {  // two f16 / i16 halves
      uint32_t lo = uint32_t(interesting_bits(rng_, rng_.chance(50) ? ir::Type::F16 : ir::Type::I16)) & 0xffff;
      uint32_t hi = uint32_t(interesting_bits(rng_, rng_.chance(50) ? ir::Type::F16 : ir::Type::I16)) & 0xffff;
      return lo | hi << 16;
    }
    ir::Type ty = kTypes[rng_.below(std::size(kTypes))];
    return uint32_t(interesting_bits(rng_, ty));
  }

  void fill(std::vector<uint8_t>& buf) {
    for (size_t i = 0; i + 4 <= buf.size(); i += 4) {
      uint32_t v = reg_value();
      std::memcpy(buf.data() + i, &v, 4);
    }
  }

  void make_state(TeslaProgram& p) {
    unsigned nthreads = rng_.chance(80) ? 32 : unsigned(rng_.range(1, 31));
    if (barrier_shape_)
      nthreads = 32 * unsigned(bar_rng_.range(1, 2)) + (bar_rng_.chance(60) ? 32 : unsigned(bar_rng_.range(1, 31)));
    warps_ = (nthreads + 31) / 32;
    p.cfg.block[0] = nthreads;
    p.cfg.regs = kTeslaRegs;
    p.cfg.smem = kTeslaSharedBytes;
    p.cfg.lmem = kTeslaLocalBytes;
    p.cfg.max_steps = 1u << 20;
    p.threads.resize(nthreads);
    // f64 values: pairs of data registers sometimes hold a whole double.
    for (unsigned l = 0; l < nthreads; ++l) {
      ThreadState& s = p.threads[l];
      for (int r = 0; r < kTeslaDataRegs; ++r) s.r[r] = reg_value();
      for (int r = 0; r + 1 < kTeslaDataRegs; r += 2)
        if (rng_.chance(15)) {
          uint64_t d = interesting_bits(rng_, ir::Type::F64);
          s.r[r] = uint32_t(d);
          s.r[r + 1] = uint32_t(d >> 32);
        }
      s.r[kTeslaLaneBase] = l * kTeslaLaneBytes;
      s.r[kTeslaWarpReg] = l / 32;
      s.r[kTeslaMinusOne] = 0xffffffffu;
      // $a: 16-byte aligned addresses, so s[]/c[] accesses of any size line up.
      // Vertex/geometry programs: inside a[]/o[] (attr_bytes 0x200) for $a-indexed accesses.
      for (int a = 1; a < 7; ++a) s.a[a] = uint16_t(rng_.below(vertex_like() ? 0x20 : 0x1000) * 16);
      for (int c = 0; c < 4; ++c) s.c[c] = uint8_t(rng_.below(16));
    }
    // Some programs start with all lanes equal (uniform) data, others lane-varying.
    if (rng_.chance(20))
      for (unsigned l = 1; l < nthreads; ++l)
        for (int r = 0; r < kTeslaDataRegs; ++r) p.threads[l].r[r] = p.threads[0].r[r];
    // $a7 (one register per warp) starts at 0, as at launch, so a replay's
    // prologue need not set it.
    p.shared.assign(kTeslaSharedBytes, 0);
    if (vertex_like()) {  // every thread's a[] (o[] starts at 0)
      p.cfg.attr_in.resize(size_t(nthreads) * p.cfg.attr_bytes);
      for (auto& b : p.cfg.attr_in) b = uint8_t(rng_.below(256));
    }
    fill(p.shared);
    // s[0x0..0xf] as the launch ABI writes it (u16: 0, ntid.xyz, nctaid.xy,
    // ctaid.xy), so a replay that starts through the ABI sees the same bytes.
    const uint16_t hdr[8] = {0, uint16_t(nthreads), 1, 1, 1, 1, 0, 0};
    std::memcpy(p.shared.data(), hdr, sizeof hdr);
    for (int c = 0; c < 2; ++c) {
      p.mem.cbuf[c].assign(kTeslaConstBytes, 0);
      fill(p.mem.cbuf[c]);
    }
    p.mem.global[0].assign(kTeslaG0Bytes, 0);
    fill(p.mem.global[0]);
    p.mem.global[1].assign(size_t(kTeslaLaneBytes) * std::max(32u, nthreads), 0);
    fill(p.mem.global[1]);
    p.mem.global[2].assign(kTeslaG2Bytes, 0);
    fill(p.mem.global[2]);
  }

  // ---------------------------------------------------------- structure
  void block(unsigned n, int depth, int loop_depth, bool in_sub) {
    for (unsigned i = 0; i < n; ++i) {
      // Barriers only where every lane of a warp is on the same path (the
      // top level of the main body), so each warp reaches them as a whole.
      if (barrier_shape_ && depth == 0 && !in_sub && bar_rng_.chance(30)) barrier();
      unsigned r = rng_.below(100);
      if (depth < 3 && r < 6) { if_then(depth, loop_depth, in_sub); continue; }
      if (depth < 3 && r < 10) { if_else(depth, loop_depth, in_sub); continue; }
      if (depth < 3 && loop_depth < 2 && r < 13) { loop(depth, loop_depth, in_sub); continue; }
      if (!in_sub && nsubs_ && r < 16) {
        text("call #sub" + std::to_string(rng_.below(unsigned(nsubs_))));
        count("call");
        continue;
      }
      if (r < 22) { local_access(); continue; }
      // Early return, possibly divergent, where the call entry is on top of
      // the warp stack (not inside an if or loop of the subroutine).
      if (in_sub && depth == 1 && loop_depth == 0 && r < 25) {
        text(pred() + "ret");
        count("ret (early)");
        continue;
      }
      data_insn();
    }
  }

  // Barrier forms (all choices from bar_rng_). Most of them cannot leave
  // every warp waiting: a barrier counting the whole block that every warp
  // arrives at, a count of 0 (a waiting warp is released as soon as every
  // warp waits), arrive-only; and producer/consumer pairs where the last
  // warp arrives and the others wait for one warp's arrival (the waiters get
  // there first in the round-robin order, or are released once a warp has
  // finished). Some use a count between 1 and the block's warps, which can
  // deadlock with what follows: the engines must then report the same
  // deadlock (the fuzz session accepts that reference outcome).
  std::string count_text(unsigned threads) { return threads == ~0u ? "all" : hex(threads); }
  std::string uniform_barrier_form() {
    std::string id = hex(bar_rng_.below(4));
    unsigned r = bar_rng_.below(100);
    if (r < 45)  // the whole block: "all", or a thread count of at least the block's warps (up to 0xfff)
      return std::string(bar_rng_.chance(50) ? "bar " : "bar inc wait ") + id + " " +
             count_text(bar_rng_.chance(40) ? ~0u : bar_rng_.chance(20) ? 0xfffu : 32 * (warps_ - 1) + 1 + bar_rng_.below(0x40));
    if (r < 60) return "bar inc " + id + " " + count_text(bar_rng_.chance(50) ? ~0u : bar_rng_.below(0x21));
    if (r < 85) return std::string(bar_rng_.chance(50) ? "bar wait " : bar_rng_.chance(50) ? "bar " : "bar inc wait ") + id + " 0x0";
    // A partial count: one warp (each arrival releases it), or up to the block's warps less one.
    static const char* const kKinds[] = {"bar ", "bar wait ", "bar inc wait "};
    unsigned threads = bar_rng_.chance(60) ? 1 + bar_rng_.below(32) : 1 + bar_rng_.below(32 * (warps_ - 1));
    return kKinds[bar_rng_.below(3)] + id + " " + hex(threads);
  }

  // A barrier every warp reaches with the same form, or a producer/consumer
  // pair: the last warp arrives (`bar inc`, or `bar` when its count of one
  // warp releases at once), the others wait for one warp (`bar wait`). The
  // branch on the warp index is uniform within each warp.
  void barrier() {
    if (bar_rng_.chance(50)) {
      text(uniform_barrier_form());
      count("bar");
      return;
    }
    std::string id = hex(bar_rng_.below(4));
    std::string threads = hex(1 + bar_rng_.below(32));  // one warp
    std::string consumer = new_label(), end = new_label();
    std::string c = "$c" + std::to_string(bar_rng_.below(4));
    std::string tmp = "$r" + std::to_string(kTeslaAddrReg);
    text("mov b32 " + tmp + " " + hex(warps_ - 1));
    text("set " + c + " " + tmp + " e u32 $r" + std::to_string(kTeslaWarpReg) + " " + tmp);
    text("(e " + c + ") bra #" + consumer);  // set gives 0 (Z) when not the last warp
    text(std::string(bar_rng_.chance(70) ? "bar inc " : "bar ") + id + " " + threads);
    text("bra #" + end);
    place_label(consumer);
    text("bar wait " + id + " " + threads);
    place_label(end);
    text("nop");
    count("bar inc / bar wait (producer, consumers)");
  }

  void if_then(int depth, int loop_depth, bool in_sub) {
    std::string end = new_label();
    text("joinat #" + end);
    text(pred() + "bra #" + end);
    count("bra (divergent)");
    block(unsigned(rng_.range(1, 6)), depth + 1, loop_depth, in_sub);
    place_label(end);
    text("join nop");
  }

  void if_else(int depth, int loop_depth, bool in_sub) {
    std::string els = new_label(), end = new_label();
    text("joinat #" + end);
    text(pred() + "bra #" + els);
    count("bra (divergent)");
    block(unsigned(rng_.range(1, 5)), depth + 1, loop_depth, in_sub);
    text("bra #" + end);
    place_label(els);
    block(unsigned(rng_.range(1, 5)), depth + 1, loop_depth, in_sub);
    place_label(end);
    text("join nop");
  }

  // breakaddr/break loop: 1..4 iterations per lane, the counter is a reserved
  // register so no random instruction can unbound it.
  void loop(int depth, int loop_depth, bool in_sub) {
    std::string top = new_label(), exit = new_label();
    std::string ctr = "$r" + std::to_string(kTeslaCounter0 + loop_depth);
    std::string minus = "$r" + std::to_string(kTeslaMinusOne);
    text("and b32 " + ctr + " " + data_reg() + " 0x3");
    text("breakaddr #" + exit);
    count("prebrk/brk loop");
    place_label(top);
    block(unsigned(rng_.range(1, 6)), depth + 1, loop_depth + 1, in_sub);
    std::string c = "$c" + std::to_string(rng_.below(4));
    text("add b32 " + c + " " + ctr + " " + ctr + " " + minus);
    text("(le " + c + ") break");
    text("bra #" + top);
    place_label(exit);
    text("nop");
  }

  // l[] through templates: offsets inside the per-thread area, no $a.
  void local_access() {
    static const char* kTypes[] = {"u8", "s8", "u16", "s16", "b32", "b64", "b128"};
    static const unsigned kSize[] = {1, 1, 2, 2, 4, 8, 16};
    unsigned k = rng_.below(7);
    unsigned off = rng_.below(kTeslaLocalBytes / kSize[k]) * kSize[k];
    int reg = int(rng_.below(kTeslaDataRegs));
    std::string r;
    if (kSize[k] == 8) reg &= ~1, r = "$r" + std::to_string(reg) + "d";
    else if (kSize[k] == 16) reg = (reg & ~3) % (kTeslaDataRegs - 3), r = "$r" + std::to_string(reg) + "q";
    else r = "$r" + std::to_string(reg);
    bool store = rng_.chance(50);
    if (store && (k == 1 || k == 3)) k -= 1;  // stores have no signed sizes
    std::string s = store ? "st " + std::string(kTypes[k]) + " l[" + hex(off) + "] " + r
                          : "ld " + std::string(kTypes[k]) + " " + r + " l[" + hex(off) + "]";
    text((rng_.chance(30) ? pred() : "") + s);
    count(store ? "st l[]" : "ld l[]");
  }

  // A table row of a random pool op, steered into the program's state.
  void data_insn() {
    for (int attempt = 0; attempt < 50; ++attempt) {
      Op op = pool_.ops[rng_.below(uint32_t(pool_.ops.size()))];
      const auto& rows = pool_.rows.at(op);
      RowRef row = rows[rng_.below(uint32_t(rows.size()))];
      uint64_t bits;
      unsigned words;
      if (!random_insn(row, t_, mt_, bits, words)) continue;
      std::string addr_setup;
      if (!steer(bits, addr_setup)) continue;
      Insn d = decode_bits(bits, t_);
      if (opt_.accept && !opt_.accept(d)) {
        if (stats_) ++stats_->skipped[op_name(d.op)];
        continue;
      }
      if (!addr_setup.empty()) text(addr_setup);
      Line l;
      l.bits = d.words == 1 ? (bits & 0xffffffffull) : bits;
      l.words = d.words;
      push(l);
      count(op_name(d.op));
      return;
    }
  }

  // Rewrites a random instruction so that it only touches defined state:
  // data registers, c0/c1, s[], and g[] through the address register set up
  // by `addr_setup`. False to drop the candidate.
  bool steer(uint64_t& bits, std::string& addr_setup) {
    Insn d = decode_bits(bits, t_);
    if (!d.valid || !pool_op(d.op)) return false;
    // Markers: join only where a joinat is (templates); exit sometimes.
    if (d.join || (d.exit && !rng_.chance(3))) {
      if (!d.is_long || d.is_control) return false;
      bits &= ~(3ull << 32);
      d = decode_bits(bits, t_);
      if (!d.valid || d.join || d.exit) return false;
    }
    // $a stays a multiple of 4 so s[]/c[] operands (at most 4 bytes) line up:
    // writes to $a must keep that.
    if (d.op == Op::AddA || d.op == Op::ShlA) {
      const Operand* imm = nullptr;
      for (size_t k = d.body; k < d.atoms.size(); ++k)
        if (d.atoms[k].type == Atom::Opnd && d.atoms[k].op.kind == OKind::Imm) imm = &d.atoms[k].op;
      if (!imm) return false;
      if (d.op == Op::AddA && imm->imm % 4 != 0) return false;
      if (d.op == Op::ShlA && imm->imm < 2) return false;
    }
    for (size_t k = d.body; k < d.atoms.size(); ++k) {
      const Atom a = d.atoms[k];  // copies: d is re-decoded below
      if (a.type != Atom::Opnd) continue;
      const Operand o = a.op;
      switch (o.kind) {
        case OKind::Reg: {
          int step = o.size == RSize::D ? 2 : o.size == RSize::Q ? 4 : 1;
          if (o.reg < kTeslaDataRegs && o.reg % step == 0) break;
          Operand want = o;
          want.reg = int(rng_.below(uint32_t(kTeslaDataRegs / step))) * step;
          uint64_t cur = o.size == RSize::H ? uint64_t(o.reg) * 2 + o.high : uint64_t(o.reg);
          uint64_t val = o.size == RSize::H ? uint64_t(want.reg) * 2 + want.high : uint64_t(want.reg);
          if (!rewrite_atom(bits, t_, d, k, pool_.reg_fields, cur, val, want)) return false;
          d = decode_bits(bits, t_);
          break;
        }
        case OKind::SReg:
          // $clock counts the block's instructions: engine-specific by nature.
          if (o.sname == "clock") return false;
          break;
        case OKind::Vec:
        case OKind::Tex:
        case OKind::Samp:
          return false;
        case OKind::Mem: {
          if (o.space == 's' || o.space == 'c') {
            if (o.postinc && o.offset % 4 != 0) return false;
            if (o.space == 'c' && o.idx > 1) {
              Operand want = o;
              want.idx = int(rng_.below(2));
              if (!rewrite_atom(bits, t_, d, k, pool_.idx_fields, uint64_t(o.idx), uint64_t(want.idx), want))
                return false;
              d = decode_bits(bits, t_);
            }
            break;
          }
          // a[] inputs and o[] outputs of vertex/geometry programs: any
          // offset (the constant ones are inside attr_bytes, $a-indexed ones
          // may fault, as the reference does).
          if ((o.space == 'a' || o.space == 'o') && vertex_like()) break;
          if (o.space != 'g') return false;  // l[] via templates; v[]/p[] are not run
          bool store = d.op != Op::LdG;
          // g2[] (one word for every lane) only for reductions that commute.
          bool commutes = d.op == Op::RedG && !d.has("inc") && !d.has("dec");
          int gidx = store ? (commutes && rng_.chance(30) ? 2 : 1) : 0;
          unsigned bytes = access_bytes(d);
          Operand want = o;
          want.greg = kTeslaAddrReg;
          if (o.greg != kTeslaAddrReg) {
            if (!rewrite_atom(bits, t_, d, k, pool_.reg_fields, uint64_t(o.greg), uint64_t(kTeslaAddrReg), want))
              return false;
            d = decode_bits(bits, t_);
          }
          if (o.idx != gidx) {
            Operand w2 = d.atoms[k].op;
            Operand want2 = w2;
            want2.idx = gidx;
            if (!rewrite_atom(bits, t_, d, k, pool_.idx_fields, uint64_t(w2.idx), uint64_t(gidx), want2)) return false;
            d = decode_bits(bits, t_);
          }
          std::string a = "$r" + std::to_string(kTeslaAddrReg);
          if (gidx == 0) {
            // Loads: any aligned address of g0.
            addr_setup = "and b32 " + a + " " + data_reg() + " " + hex((kTeslaG0Bytes - 1) & ~(bytes - 1));
          } else if (gidx == 1) {
            // Stores and atomics: the lane's own area, so lane and path order cannot matter.
            unsigned off = rng_.below(kTeslaLaneBytes / bytes) * bytes;
            addr_setup = "add b32 " + a + " $r" + std::to_string(kTeslaLaneBase) + " " + hex(off);
          } else {
            addr_setup = "and b32 " + a + " " + data_reg() + " 0x0";  // one word for all lanes
          }
          break;
        }
        default:
          break;
      }
    }
    d = decode_bits(bits, t_);
    return d.valid && check(d, 0) == DecodeError::None;
  }

  // ---------------------------------------------------------- layout
  void layout(TeslaProgram& p) {
    if (!pending_label_.empty()) text("nop");
    // Pass 1: sizes (a target's value does not change an instruction's length).
    std::vector<unsigned> sizes(lines_.size());
    for (size_t i = 0; i < lines_.size(); ++i) {
      if (lines_[i].words) {
        sizes[i] = lines_[i].words;
        continue;
      }
      uint64_t bits;
      unsigned words;
      std::string err;
      if (!assemble_one(resolve(lines_[i].text, nullptr), t_, bits, words, err))
        throw std::logic_error("tesla generator: cannot assemble '" + lines_[i].text + "': " + err);
      sizes[i] = words;
    }
    // Addresses, with a short pad before a long instruction at an odd word.
    std::map<std::string, uint32_t> labels;
    std::vector<uint32_t> addr(lines_.size());
    std::vector<bool> pad(lines_.size());
    uint32_t pc = 0;
    for (size_t i = 0; i < lines_.size(); ++i) {
      if (sizes[i] == 2 && (pc & 1)) pad[i] = true, pc += 1;
      addr[i] = pc;
      if (!lines_[i].label.empty()) labels[lines_[i].label] = pc;
      pc += sizes[i];
    }
    uint64_t pad_bits;
    unsigned pad_words;
    std::string err;
    std::string pad_text = "mov b32 $r" + std::to_string(kTeslaMinusOne) + " $r" + std::to_string(kTeslaMinusOne);
    if (!assemble_one(pad_text, t_, pad_bits, pad_words, err) || pad_words != 1)
      throw std::logic_error("tesla generator: pad: " + err);
    for (size_t i = 0; i < lines_.size(); ++i) {
      if (pad[i]) emit_word(p, uint32_t(pad_bits), 1);
      uint64_t bits = lines_[i].bits;
      if (!lines_[i].words) {
        unsigned words;
        if (!assemble_one(resolve(lines_[i].text, &labels), t_, bits, words, err) || words != sizes[i])
          throw std::logic_error("tesla generator: cannot assemble '" + lines_[i].text + "': " + err);
      }
      emit_word(p, bits, sizes[i]);
    }
  }

  void emit_word(TeslaProgram& p, uint64_t bits, unsigned words) {
    size_t at = p.words.size();
    p.words.push_back(uint32_t(bits));
    if (words == 2) p.words.push_back(uint32_t(bits >> 32));
    Insn d = decode(p.words.data(), p.words.size(), at, t_);
    char b[16];
    std::snprintf(b, sizeof b, "%04zx: ", at);
    p.listing.push_back(b + format(d));
  }

  // "#label" -> byte address (0 when labels are not known yet).
  static std::string resolve(const std::string& s, const std::map<std::string, uint32_t>* labels) {
    size_t h = s.find('#');
    if (h == std::string::npos) return s;
    std::string name = s.substr(h + 1);
    uint32_t a = 0;
    if (labels) {
      auto it = labels->find(name);
      if (it == labels->end()) throw std::logic_error("tesla generator: undefined label " + name);
      a = it->second * 4;
    }
    return s.substr(0, h) + hex(a);
  }
};

}  // namespace

uint64_t tesla_program_seed(uint64_t seed, uint64_t index) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + index + 0x7e51a;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

bool tesla_barrier_program_at(uint64_t seed, uint64_t index) {
  return tesla_program_seed(seed ^ 0xba221e2ull, index) % 100 < kTeslaBarrierProgramPct;
}

uint64_t tesla_barrier_program_seed(uint64_t seed, uint64_t index) {
  return tesla_program_seed(seed ^ 0xba221e2ull, index) ^ 0x5a5a5a5a5a5a5a5aull;
}

TeslaProgram generate_tesla(uint64_t program_seed, const Target& target, const TeslaGenOptions& opt,
                            TeslaGenStats* stats) {
  Generator g(program_seed, target, opt, stats);
  return g.run();
}

}  // namespace gpurc::fuzz
