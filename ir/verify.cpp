// The IR verifier: structure, types from the opcode table's letters, and SSA
// dominance. Returns the first problem, naming the block and instruction.
#include <array>
#include <atomic>
#include <cstdlib>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "ir/text_names.h"
#include "ir/verify_policy.h"

namespace gpurc::ir {

namespace {

class Verifier {
 public:
  explicit Verifier(const Function& f) : f_(f) {}
  std::string run();

 private:
  std::string where(BlockId b, ValueId v) const {
    std::string s = "b" + std::to_string(b);
    if (v != kNoValue) s += " %" + std::to_string(v) + " (" + std::string(op_name(f_.insts[v].op)) + ")";
    return s + ": ";
  }
  std::string check_structure();
  std::string check_inst(BlockId b, ValueId v, size_t pos);
  std::string check_types(BlockId b, ValueId v);
  std::string check_attrs(BlockId b, ValueId v);
  bool plainly_valid(BlockId b, ValueId v, size_t pos) const;
  void compute_dominators();
  bool dominates(BlockId a, BlockId b) const;  // both reachable

  const Function& f_;
  std::vector<std::vector<BlockId>> preds_;
  std::vector<BlockId> idom_;
  std::vector<int> rpo_index_;  // -1: unreachable
  std::vector<size_t> pos_;     // position of each value in its block
};

bool type_ok(char letter, Type t) {
  switch (letter) {
    case 'V': return t == Type::Void;
    case 'B': return t == Type::I1;
    case 'I': case 'W': return is_int(t);
    case 'F': return is_float(t);
    case 'A': return t != Type::Void;
    case 'U': return t == Type::I32;
    case 'H': return t == Type::I16;
    case 'L': return t == Type::I32 || t == Type::I64;
    default: return false;
  }
}

unsigned uniform_load_bytes(Type t) { return t == Type::I1 ? 1 : bit_width(t) / 8; }

std::string Verifier::run() {
  if (f_.blocks.empty()) return "function has no blocks";
  if (std::string e = check_structure(); !e.empty()) return e;
  compute_dominators();
  for (BlockId b = 0; b < f_.blocks.size(); ++b) {
    const Block& bl = f_.blocks[b];
    for (size_t i = 0; i < bl.insts.size(); ++i)
      if (!plainly_valid(b, bl.insts[i], i))
        if (std::string e = check_inst(b, bl.insts[i], i); !e.empty()) return e;
  }
  return "";
}

std::string Verifier::check_structure() {
  size_t nb = f_.blocks.size();
  preds_.assign(nb, {});
  pos_.assign(f_.insts.size(), 0);
  std::vector<BlockId> owner(f_.insts.size(), kNoBlock);
  for (BlockId b = 0; b < nb; ++b) {
    const Block& bl = f_.blocks[b];
    for (BlockId s : bl.succs)
      if (s >= nb) return where(b, kNoValue) + "successor b" + std::to_string(s) + " does not exist";
    for (BlockId s : bl.succs) preds_[s].push_back(b);
    if (bl.insts.empty()) return where(b, kNoValue) + "empty block (no terminator)";
    for (size_t i = 0; i < bl.insts.size(); ++i) {
      ValueId v = bl.insts[i];
      if (v >= f_.insts.size()) return where(b, kNoValue) + "instruction id %" + std::to_string(v) + " out of range";
      if (owner[v] != kNoBlock)
        return where(b, v) + "also listed in b" + std::to_string(owner[v]);
      owner[v] = b;
      pos_[v] = i;
      if (f_.insts[v].block != b)
        return where(b, v) + "Inst::block says b" + std::to_string(f_.insts[v].block);
    }
    for (size_t i = 0; i + 1 < bl.insts.size(); ++i)
      if (op_info(f_.insts[bl.insts[i]].op).terminator)
        return where(b, bl.insts[i]) + "terminator in the middle of the block";
    ValueId last = bl.insts.back();
    if (!op_info(f_.insts[last].op).terminator) return where(b, last) + "block does not end with a terminator";
  }
  for (ValueId v = 0; v < f_.insts.size(); ++v)
    if (owner[v] == kNoBlock && f_.insts[v].block != kNoBlock)
      return "%" + std::to_string(v) + " (" + std::string(op_name(f_.insts[v].op)) + "): Inst::block says b" +
             std::to_string(f_.insts[v].block) + " but no block lists it";
  return "";
}

void Verifier::compute_dominators() {
  size_t nb = f_.blocks.size();
  // Reverse post-order by an iterative DFS from the entry.
  std::vector<BlockId> post;
  std::vector<uint8_t> state(nb, 0);
  std::vector<std::pair<BlockId, size_t>> stack{{0, 0}};
  state[0] = 1;
  while (!stack.empty()) {
    auto& [b, i] = stack.back();
    if (i < f_.blocks[b].succs.size()) {
      BlockId s = f_.blocks[b].succs[i++];
      if (!state[s]) state[s] = 1, stack.push_back({s, 0});
    } else {
      post.push_back(b);
      stack.pop_back();
    }
  }
  std::vector<BlockId> rpo(post.rbegin(), post.rend());
  rpo_index_.assign(nb, -1);
  for (size_t i = 0; i < rpo.size(); ++i) rpo_index_[rpo[i]] = int(i);
  // Cooper, Harvey, Kennedy: "A Simple, Fast Dominance Algorithm".
  idom_.assign(nb, kNoBlock);
  idom_[0] = 0;
  bool changed = true;
  auto intersect = [&](BlockId a, BlockId b) {
    while (a != b) {
      while (rpo_index_[a] > rpo_index_[b]) a = idom_[a];
      while (rpo_index_[b] > rpo_index_[a]) b = idom_[b];
    }
    return a;
  };
  while (changed) {
    changed = false;
    for (size_t i = 1; i < rpo.size(); ++i) {
      BlockId b = rpo[i];
      BlockId nd = kNoBlock;
      for (BlockId p : preds_[b]) {
        if (rpo_index_[p] < 0 || idom_[p] == kNoBlock) continue;
        nd = nd == kNoBlock ? p : intersect(p, nd);
      }
      if (nd != idom_[b]) idom_[b] = nd, changed = true;
    }
  }
}

bool Verifier::dominates(BlockId a, BlockId b) const {
  while (true) {
    if (a == b) return true;
    if (b == 0 || idom_[b] == kNoBlock || idom_[b] == b) return false;
    b = idom_[b];
  }
}

std::string Verifier::check_types(BlockId b, ValueId v) {
  const Inst& in = f_.insts[v];
  const OpInfo& info = op_info(in.op);
  if (!type_ok(info.result, in.type))
    return where(b, v) + "result type " + std::string(type_name(in.type)) + " not allowed (class '" +
           info.result + "')";
  // The operand letters' lengths, once (info.args is a C string: strlen per
  // instruction showed in profiles of a compile).
  static const auto kArgLetters = [] {
    std::array<std::string_view, kNumOpcodes> t{};
    for (int i = 0; i < kNumOpcodes; ++i) t[size_t(i)] = op_info(Opcode(i)).args;
    return t;
  }();
  std::string_view letters = kArgLetters[size_t(in.op)];
  bool variadic = letters.size() == 1 && letters[0] == '*';
  if (!variadic && in.args.size() != letters.size())
    return where(b, v) + "has " + std::to_string(in.args.size()) + " operands, expected " +
           std::to_string(letters.size());
  for (size_t i = 0; i < in.args.size(); ++i) {
    ValueId a = in.args[i];
    if (a >= f_.insts.size()) return where(b, v) + "operand " + std::to_string(i) + " %" + std::to_string(a) + " does not exist";
    const Inst& ai = f_.insts[a];
    if (ai.block == kNoBlock) return where(b, v) + "operand %" + std::to_string(a) + " is not in any block";
    if (ai.type == Type::Void) return where(b, v) + "operand %" + std::to_string(a) + " has no value (void)";
    char l = variadic ? 'T' : letters[i];
    bool ok;
    switch (l) {
      case 'T': ok = ai.type == in.type; break;
      case 'P': ok = i > 0 && ai.type == f_.insts[in.args[i - 1]].type; break;
      default: ok = type_ok(l, ai.type); break;
    }
    if (!ok)
      return where(b, v) + "operand " + std::to_string(i) + " %" + std::to_string(a) + " has type " +
             std::string(type_name(ai.type)) + ", which class '" + l + "' does not allow here";
  }
  Type at = in.args.empty() ? Type::Void : f_.insts[in.args[0]].type;
  switch (in.op) {
    case Opcode::IMulWide:
      if (bit_width(in.type) != 2 * bit_width(at))
        return where(b, v) + "result must be twice the operand width";
      break;
    case Opcode::Zext: case Opcode::Sext:
      if (bit_width(in.type) < bit_width(at)) return where(b, v) + "result narrower than the operand";
      break;
    case Opcode::Trunc:
      if (bit_width(in.type) > bit_width(at)) return where(b, v) + "result wider than the operand";
      break;
    case Opcode::Extract16:
      if (in.type != Type::I16) return where(b, v) + "result must be i16";
      break;
    case Opcode::Bitcast:
      if (bit_width(in.type) != bit_width(at)) return where(b, v) + "bitcast between different widths";
      break;
    case Opcode::Reduce: case Opcode::ScanIncl: case Opcode::ScanExcl: {
      bool float_op = in.attr >= uint8_t(ReduceOp::FAdd);
      if (float_op != is_float(in.type))
        return where(b, v) + "reduce operation does not match the value type " + std::string(type_name(in.type));
      break;
    }
    default: break;
  }
  return "";
}

std::string Verifier::check_attrs(BlockId b, ValueId v) {
  const Inst& in = f_.insts[v];
  const OpInfo& info = op_info(in.op);
  if (info.attr == AttrKind::Mem) {
    if ((in.attr & 15) >= kNumSpaces || (in.attr >> 4) >= text::kNumAddrClasses)
      return where(b, v) + "bad memory attribute " + std::to_string(in.attr);
  } else if (info.attr == AttrKind::None || info.attr == AttrKind::Imm) {
    if (in.attr != 0) return where(b, v) + "attribute " + std::to_string(in.attr) + " on an op without one";
  } else if (in.attr >= text::attr_names(info.attr).count) {
    return where(b, v) + "attribute value " + std::to_string(in.attr) + " out of range";
  }
  if (!info.uses_fflags && in.fflags != 0) return where(b, v) + "float flags on an op that takes none";
  if (info.uses_fflags) {
    uint32_t known = ff::FtzIn | ff::FtzOut | ff::Sat | ff::ZeroMul | ff::NanMask | ff::RoundMask;
    if (in.fflags & ~known) return where(b, v) + "unknown float flag bits";
  }
  if (info.clustered && !valid_cluster_imm(in.imm))
    return where(b, v) + "cluster width " + std::to_string(in.imm) + " is not 1, 2, 4, 8, 16 or 32 (0: the whole warp)";
  switch (in.op) {
    case Opcode::Const:
      if (in.imm & ~type_mask(in.type)) return where(b, v) + "constant has bits above its type";
      break;
    case Opcode::GetVar: case Opcode::LoadVar:
      if (in.imm >= f_.vars.size()) return where(b, v) + "var " + std::to_string(in.imm) + " does not exist";
      if (f_.vars[in.imm].type != in.type) return where(b, v) + "type differs from var " + std::to_string(in.imm);
      break;
    case Opcode::SetVar: case Opcode::StoreVar:
      if (in.imm >= f_.vars.size()) return where(b, v) + "var " + std::to_string(in.imm) + " does not exist";
      if (f_.vars[in.imm].type != f_.insts[in.args[0]].type)
        return where(b, v) + "value type differs from var " + std::to_string(in.imm);
      break;
    case Opcode::LoadUniform:
      if (in.imm > f_.uniform_bytes || f_.uniform_bytes - in.imm < uniform_load_bytes(in.type))
        return where(b, v) + "uniform offset " + std::to_string(in.imm) + " outside uniform_bytes " +
               std::to_string(f_.uniform_bytes);
      break;
    case Opcode::LoadUniformIdx:
      if (in.type != Type::I32 && in.type != Type::F32) return where(b, v) + "load_uniform_idx loads i32 or f32";
      if (in.imm > 0x7fffffffu) return where(b, v) + "load_uniform_idx offset must be below 2^31";
      break;
    case Opcode::Extract16: case Opcode::Insert16:
      if (in.imm > 1) return where(b, v) + "half index must be 0 or 1";
      break;
    case Opcode::Lut3:
      if (in.imm > 0xff) return where(b, v) + "lut3 table has more than 8 bits";
      break;
    case Opcode::AtomicRmw: case Opcode::AtomicCas:
      if (in.imm >= uint64_t(kNumSpaces)) return where(b, v) + "bad address space " + std::to_string(in.imm);
      break;
    default: break;
  }
  return "";
}

// The checks of check_inst for the common instructions, answered from a
// per-opcode table with no strings: true only when check_inst would find no
// problem; false sends the instruction to check_inst, which finds and names
// the problem (or, for the kinds left to it here, finds none). A compile
// verifies each translated function once, and this was most of the cost.
namespace {
struct QuickOp {
  char result = 0;
  char letters[4] = {};
  uint8_t nargs = 0;
  bool quick = false;       // false: always check_inst (phis, terminators, special rules)
  bool attr_zero = false;   // the attribute must be 0 (else: below attr_limit)
  uint8_t attr_limit = 0;
  bool uses_fflags = false;
};
const std::array<QuickOp, kNumOpcodes>& quick_ops() {
  static const auto table = [] {
    std::array<QuickOp, kNumOpcodes> t{};
    for (int i = 0; i < kNumOpcodes; ++i) {
      const Opcode op = Opcode(i);
      const OpInfo& info = op_info(op);
      QuickOp& q = t[size_t(i)];
      const std::string_view letters = info.args;
      q.result = info.result;
      q.uses_fflags = info.uses_fflags;
      q.quick = !info.terminator && !info.clustered && op != Opcode::Phi && letters.size() <= 4 &&
                letters != "*" && info.attr != AttrKind::Mem;
      switch (op) {  // ops with rules of their own in check_types / check_attrs
        case Opcode::IMulWide: case Opcode::Zext: case Opcode::Sext: case Opcode::Trunc: case Opcode::Extract16:
        case Opcode::Bitcast: case Opcode::Reduce: case Opcode::ScanIncl: case Opcode::ScanExcl:
        case Opcode::LoadUniformIdx: case Opcode::Insert16: case Opcode::Lut3: case Opcode::AtomicRmw:
        case Opcode::AtomicCas:
          q.quick = false;
          break;
        default: break;
      }
      if (!q.quick) continue;
      q.nargs = uint8_t(letters.size());
      for (size_t k = 0; k < letters.size() && k < sizeof q.letters; ++k) q.letters[k] = letters[k];
      if (info.attr == AttrKind::None || info.attr == AttrKind::Imm) {
        q.attr_zero = true;
      } else {
        const size_t n = text::attr_names(info.attr).count;
        if (n > 255) q.quick = false;
        q.attr_limit = uint8_t(n);
      }
    }
    return t;
  }();
  return table;
}
}  // namespace

// (Inlined into run(): it is called for every instruction, and the call and
// its register saves were ~10% of its cost.)
[[gnu::always_inline]] inline bool Verifier::plainly_valid(BlockId b, ValueId v, size_t pos) const {
  const Inst& in = f_.insts[v];
  const QuickOp& q = quick_ops()[size_t(in.op)];
  if (!q.quick || !type_ok(q.result, in.type) || in.args.size() != q.nargs) return false;
  if (q.attr_zero ? in.attr != 0 : in.attr >= q.attr_limit) return false;
  if (!q.uses_fflags) {
    if (in.fflags != 0) return false;
  } else {
    constexpr uint32_t known = ff::FtzIn | ff::FtzOut | ff::Sat | ff::ZeroMul | ff::NanMask | ff::RoundMask;
    if (in.fflags & ~known) return false;
  }
  switch (in.op) {
    case Opcode::Const:
      if (in.imm & ~type_mask(in.type)) return false;
      break;
    case Opcode::GetVar: case Opcode::LoadVar:
      if (in.imm >= f_.vars.size() || f_.vars[in.imm].type != in.type) return false;
      break;
    case Opcode::SetVar: case Opcode::StoreVar:  // (the operand is checked below before its type is read)
      if (in.imm >= f_.vars.size()) return false;
      break;
    case Opcode::LoadUniform:
      if (in.imm > f_.uniform_bytes || f_.uniform_bytes - in.imm < uniform_load_bytes(in.type)) return false;
      break;
    default: break;
  }
  const bool reachable = rpo_index_[b] >= 0;
  for (size_t i = 0; i < in.args.size(); ++i) {
    const ValueId a = in.args[i];
    if (a >= f_.insts.size()) return false;
    const Inst& ai = f_.insts[a];
    if (ai.block == kNoBlock || ai.type == Type::Void) return false;
    const char l = q.letters[i];
    if (l == 'T' ? ai.type != in.type : l == 'P' ? i == 0 || ai.type != f_.insts[in.args[i - 1]].type
                                                 : !type_ok(l, ai.type))
      return false;
    if (reachable) {
      const BlockId db = ai.block;
      if (db == b ? pos_[a] >= pos : rpo_index_[db] < 0 || !dominates(db, b)) return false;
    }
  }
  if ((in.op == Opcode::SetVar || in.op == Opcode::StoreVar) && f_.vars[in.imm].type != f_.insts[in.args[0]].type)
    return false;
  return true;
}

std::string Verifier::check_inst(BlockId b, ValueId v, size_t pos) {
  const Inst& in = f_.insts[v];
  const OpInfo& info = op_info(in.op);
  const Block& bl = f_.blocks[b];
  bool last = pos + 1 == bl.insts.size();
  if (info.terminator && !last) return where(b, v) + "terminator in the middle of the block";
  if (in.op == Opcode::Phi) {
    if (pos > 0 && f_.insts[bl.insts[pos - 1]].op != Opcode::Phi) return where(b, v) + "phi after a non-phi";
    if (in.args.size() != preds_[b].size())
      return where(b, v) + "phi has " + std::to_string(in.args.size()) + " operands for " +
             std::to_string(preds_[b].size()) + " predecessors";
  }
  if (info.terminator) {
    size_t n = bl.succs.size();
    bool ok = true;
    switch (in.op) {
      case Opcode::Br: case Opcode::Barrier: ok = n == 1; break;
      case Opcode::CondBr: ok = n == 2; break;
      case Opcode::Switch: ok = n >= 1; break;
      default: ok = n == 0; break;
    }
    if (!ok) return where(b, v) + std::to_string(n) + " successors is wrong for this terminator";
  }
  if (std::string e = check_types(b, v); !e.empty()) return e;
  if (std::string e = check_attrs(b, v); !e.empty()) return e;
  // SSA dominance (uses in unreachable blocks are not checked).
  if (rpo_index_[b] < 0) return "";
  for (size_t i = 0; i < in.args.size(); ++i) {
    ValueId a = in.args[i];
    BlockId db = f_.insts[a].block;
    BlockId use_block = b;
    bool ok;
    if (in.op == Opcode::Phi) {
      use_block = preds_[b][i];
      if (rpo_index_[use_block] < 0) continue;  // edge from unreachable code
      ok = rpo_index_[db] >= 0 && dominates(db, use_block);
    } else if (db == b) {
      ok = pos_[a] < pos;
    } else {
      ok = rpo_index_[db] >= 0 && dominates(db, b);
    }
    if (!ok)
      return where(b, v) + "operand %" + std::to_string(a) + " (defined in b" + std::to_string(db) +
             ") does not dominate its use" +
             (in.op == Opcode::Phi ? " at the end of b" + std::to_string(use_block) : std::string());
  }
  return "";
}

}  // namespace

std::string verify(const Function& f) { return Verifier(f).run(); }

namespace {
// -1: not set (the default below), else 0 / 1.
constinit std::atomic<int> verify_built_override{-1};

bool verify_built_default() {
  static const bool on = [] {
    if (const char* e = std::getenv("GPURC_VERIFY_IR"); e && (*e == '0' || *e == '1')) return *e == '1';
#if !defined(NDEBUG) || defined(__SANITIZE_ADDRESS__)
    return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
    return true;
#else
    return false;
#endif
#else
    return false;
#endif
  }();
  return on;
}
}  // namespace

bool verify_built_ir() {
  const int o = verify_built_override.load(std::memory_order_relaxed);
  return o >= 0 ? o != 0 : verify_built_default();
}

void set_verify_built_ir(bool on) { verify_built_override.store(on ? 1 : 0, std::memory_order_relaxed); }

}  // namespace gpurc::ir
