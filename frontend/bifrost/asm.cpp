// Bifrost assembler: Mesa's disassembler syntax -> clauses, with the packing
// algorithm of docs/bifrost.md (register ports, FAU, constants, formats).
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <optional>
#include <sstream>

#include "frontend/bifrost/bifrost.h"

namespace gpurc::bifrost {
namespace {

enum class Kind { Reg, Zero, FauLo, FauHi, T0, T1 };

// What the FAU port must deliver for a tuple.
struct Fau {
  enum class Type { None, Index, Const } type = Type::None;
  bool pc = false;          // Const: the high word is a branch offset to clause `target`
  unsigned target = 0;      // in quadwords
  unsigned index = 0;  // Index: the fau_idx value (uniform pair or special)
  bool lo_known = false, hi_known = false;
  uint32_t lo = 0, hi = 0;  // Const: the 32-bit halves the sources read
};

struct Operand {
  Kind kind = Kind::Zero;
  unsigned reg = 0;
  Fau fau;  // FauLo/FauHi: what it reads
  std::vector<std::string> suffix;
};

struct Dest {
  bool write = false;
  unsigned reg = 0;
  SlotOp op = SlotOp::Write;
};

struct Candidate {
  const Encoding* enc = nullptr;
  std::vector<int> mods;
  std::vector<Operand> srcs;
  std::vector<uint32_t> imms;
};

struct Ins {
  int line = 0;
  std::string text;
  bool fma = false;
  Dest dest;
  std::vector<Candidate> cands;
  int staging = -1;
};

struct ClauseText {
  int line = 0;
  Header header;
  bool regs64 = false;  // header word `regs64`: the 64-bit register block, operands name pairs
  std::vector<std::pair<Ins, Ins>> tuples;
};

struct Error {
  std::string msg;
};
[[noreturn]] void fail(int line, const std::string& m) { throw Error{"bifrost: line " + std::to_string(line) + ": " + m}; }

std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t\r"), b = s.find_last_not_of(" \t\r");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

std::vector<std::string> split_dots(const std::string& s) {
  std::vector<std::string> out;
  size_t p = 0;
  while (p <= s.size()) {
    size_t q = s.find('.', p);
    if (q == std::string::npos) q = s.size();
    out.push_back(s.substr(p, q - p));
    p = q + 1;
  }
  return out;
}

// Assign `tokens` to the modifiers `idx` (in print order): a modifier with a
// default may be absent; the first assignment that uses every token wins.
bool assign_mods(const Encoding& e, const std::vector<int>& idx, size_t i, const std::vector<std::string>& tokens,
                 size_t t, std::vector<int>& out) {
  if (i == idx.size()) return t == tokens.size();
  const ModDesc& m = e.mods[size_t(idx[i])];
  if (t < tokens.size()) {
    for (size_t v = 0; v < m.opts.size(); ++v) {
      if (m.opts[v] != tokens[t] || m.opts[v] == "reserved" || (m.has_default && m.opts[v] == m.dflt)) continue;
      out[size_t(idx[i])] = int(v);
      if (assign_mods(e, idx, i + 1, tokens, t + 1, out)) return true;
    }
  }
  if (m.has_default) {
    for (size_t v = 0; v < m.opts.size(); ++v)
      if (m.opts[v] == m.dflt) {
        out[size_t(idx[i])] = int(v);
        if (assign_mods(e, idx, i + 1, tokens, t, out)) return true;
        break;
      }
  }
  return false;
}

bool parse_uint(const std::string& s, unsigned& v) {
  if (s.empty() || s.size() > 9) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  v = unsigned(std::stoul(s));
  return true;
}

// A source operand's base; the rest (".mod" suffixes) goes to op.suffix.
bool parse_operand(const std::string& text, bool fma, Operand& op, std::string& why) {
  std::string s = text;
  std::string rest;
  auto take = [&](size_t n) {
    rest = s.substr(n);
    s = s.substr(0, n);
  };
  if (s.rfind("0x", 0) == 0) {
    size_t n = 2;
    while (n < s.size() && std::isxdigit(static_cast<unsigned char>(s[n]))) ++n;
    if (n != 10) {
      why = "a constant is written 0x and 8 hex digits";
      return false;
    }
    uint32_t v = uint32_t(std::stoul(s.substr(2, 8), nullptr, 16));
    size_t p = n;
    while (p < s.size() && s[p] == ' ') ++p;
    if (s.compare(p, 2, "/*") == 0) {
      size_t e = s.find("*/", p);
      if (e == std::string::npos) {
        why = "unterminated comment";
        return false;
      }
      p = e + 2;
    }
    rest = s.substr(p);
    op.kind = Kind::FauLo;  // the caller decides lo/hi from the source value it ends up with
    op.fau.type = Fau::Type::Const;
    op.fau.lo = v;
  } else if (s.rfind("clause_", 0) == 0) {
    // A branch target: the high word of a PC-relative constant (PC_HI).
    size_t n = 7;
    while (n < s.size() && std::isdigit(static_cast<unsigned char>(s[n]))) ++n;
    unsigned target = 0;
    if (!parse_uint(s.substr(7, n - 7), target)) {
      why = "bad branch target '" + s + "'";
      return false;
    }
    size_t p = n;
    while (p < s.size() && s[p] == ' ') ++p;
    if (s.compare(p, 2, ">>") == 0) {
      why = "64-bit PC-relative constants (clause_N >> 32) are not supported by the assembler";
      return false;
    }
    if (s.compare(p, 2, "/*") == 0) {
      size_t e = s.find("*/", p);
      if (e == std::string::npos) {
        why = "unterminated comment";
        return false;
      }
      p = e + 2;
    }
    rest = s.substr(p);
    op.kind = Kind::FauHi;
    op.fau.type = Fau::Type::Const;
    op.fau.pc = true;
    op.fau.target = target;
  } else if (s.rfind("u", 0) == 0 && s.find(".w") != std::string::npos) {
    size_t dot = s.find(".w");
    unsigned n = 0;
    if (!parse_uint(s.substr(1, dot - 1), n) || n > 127 || dot + 2 >= s.size() || (s[dot + 2] != '0' && s[dot + 2] != '1')) {
      why = "bad uniform '" + s + "'";
      return false;
    }
    op.kind = s[dot + 2] == '1' ? Kind::FauHi : Kind::FauLo;
    op.fau.type = Fau::Type::Index;
    op.fau.index = 0x80 | n;
    take(dot + 3);
  } else if (s.rfind("t0", 0) == 0 && (s.size() == 2 || s[2] == '.')) {
    op.kind = Kind::T0;
    take(2);
  } else if (s.rfind("t1", 0) == 0 && (s.size() == 2 || s[2] == '.')) {
    op.kind = Kind::T1;
    take(2);
  } else if (!fma && s.rfind("t", 0) == 0 && (s.size() == 1 || s[1] == '.')) {
    op.kind = Kind::Zero;
    take(1);
  } else if (s.size() >= 2 && s[0] == 'r' && std::isdigit(static_cast<unsigned char>(s[1]))) {
    size_t n = 1;
    while (n < s.size() && std::isdigit(static_cast<unsigned char>(s[n]))) ++n;
    unsigned r = 0;
    if (!parse_uint(s.substr(1, n - 1), r) || r > 63) {
      why = "bad register '" + s.substr(0, n) + "'";
      return false;
    }
    op.kind = Kind::Reg;
    op.reg = r;
    take(n);
  } else {
    static const char* specials[] = {"#0", "lane_id", "warp_id", "core_id", "framebuffer_size", "atest_datum", "sample"};
    bool found = false;
    for (unsigned k = 0; k < 16 && !found; ++k) {
      std::string name = k < 7 ? specials[k] : k >= 8 ? "blend_descriptor_" + std::to_string(k - 8) : "";
      if (name.empty()) continue;
      for (int hi = 0; hi < 2 && !found; ++hi) {
        std::string full = name + (hi ? ".y" : ".x");
        if (s.rfind(full, 0) == 0 && (s.size() == full.size() || s[full.size()] == '.')) {
          op.kind = hi ? Kind::FauHi : Kind::FauLo;
          op.fau.type = Fau::Type::Index;
          op.fau.index = k;
          take(full.size());
          found = true;
        }
      }
    }
    if (!found && fma && s.rfind("#0", 0) == 0 && (s.size() == 2 || s[2] == '.')) {
      op.kind = Kind::Zero;
      take(2);
      found = true;
    }
    if (!found) {
      why = "unknown operand '" + text + "'";
      return false;
    }
  }
  if (rest.rfind("(INVALID)", 0) == 0) {
    why = "operand '" + text + "' is not allowed in this source";
    return false;
  }
  if (!rest.empty()) {
    if (rest[0] != '.') {
      why = "unexpected text after operand: '" + rest + "'";
      return false;
    }
    op.suffix = split_dots(rest.substr(1));
  }
  return true;
}

std::vector<std::string> split_operands(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  bool comment = false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (!comment && s.compare(i, 2, "/*") == 0) comment = true;
    else if (comment && s.compare(i, 2, "*/") == 0) comment = false;
    if (!comment && s[i] == ',') {
      out.push_back(trim(cur));
      cur.clear();
      continue;
    }
    cur += s[i];
  }
  if (!trim(cur).empty()) out.push_back(trim(cur));
  return out;
}

Ins parse_ins(const std::string& line, int lineno, bool fma) {
  Ins ins;
  ins.line = lineno;
  ins.text = line;
  ins.fma = fma;
  size_t sp = line.find(' ');
  std::string mnem = line.substr(0, sp);
  std::vector<std::string> ops = split_operands(sp == std::string::npos ? "" : line.substr(sp + 1));
  if (mnem == "INSTR_INVALID_ENC")
    fail(lineno, "'" + line + "': the disassembler knew no encoding for this word, so the text does not say how to rebuild it");
  if (mnem.empty() || mnem[0] != (fma ? '*' : '+'))
    fail(lineno, std::string("expected an ") + (fma ? "FMA ('*')" : "ADD ('+')") + " instruction, got '" + line + "'");
  if (ops.empty()) fail(lineno, "missing destination");
  // Destination: t0 / t1, or rN:t0 with an optional .h0/.h1.
  {
    std::string d = ops[0];
    std::string t = fma ? "t0" : "t1";
    if (d != t) {
      size_t colon = d.find(':');
      unsigned r = 0;
      if (d[0] != 'r' || colon == std::string::npos || !parse_uint(d.substr(1, colon - 1), r) || r > 63 ||
          d.compare(colon + 1, 2, t) != 0)
        fail(lineno, "bad destination '" + d + "' (t0/t1 or rN:" + t + ")");
      std::string m = d.substr(colon + 3);
      ins.dest.write = true;
      ins.dest.reg = r;
      if (m.empty()) ins.dest.op = SlotOp::Write;
      else if (m == ".h0") ins.dest.op = SlotOp::WriteLo;
      else if (m == ".h1") ins.dest.op = SlotOp::WriteHi;
      else fail(lineno, "bad destination mask '" + m + "'");
    }
  }
  std::string why;
  for (const Encoding* e : decode_order(fma)) {
    if (mnem.compare(0, e->name.size(), e->name) != 0) continue;
    if (mnem.size() > e->name.size() && mnem[e->name.size()] != '.') continue;
    size_t want = 1 + e->srcs.size() + e->imms.size() + (e->staging.empty() ? 0 : 1);
    if (ops.size() != want) {
      why = e->name + " takes " + std::to_string(want - 1) + " operands";
      continue;
    }
    Candidate c;
    c.enc = e;
    c.mods.assign(e->mods.size(), 0);
    std::vector<std::string> toks;
    if (mnem.size() > e->name.size()) toks = split_dots(mnem.substr(e->name.size() + 1));
    std::vector<int> own;
    for (size_t i = 0; i < e->mods.size(); ++i)
      if (e->mods[i].src < 0) own.push_back(int(i));
    if (!assign_mods(*e, own, 0, toks, 0, c.mods)) {
      why = "modifiers of '" + mnem + "' do not fit " + e->name;
      continue;
    }
    bool ok = true;
    for (size_t i = 0; i < e->srcs.size() && ok; ++i) {
      Operand op;
      if (!parse_operand(ops[1 + i], fma, op, why)) {
        ok = false;
        break;
      }
      std::vector<int> mine;
      for (size_t k = 0; k < e->mods.size(); ++k)
        if (e->mods[k].src == int(i)) mine.push_back(int(k));
      if (!assign_mods(*e, mine, 0, op.suffix, 0, c.mods)) {
        why = "modifiers of operand '" + ops[1 + i] + "' do not fit " + e->name;
        ok = false;
      }
      c.srcs.push_back(op);
    }
    if (!ok) continue;
    for (size_t i = 0; i < e->imms.size() && ok; ++i) {
      const std::string& o = ops[1 + e->srcs.size() + i];
      unsigned v = 0;
      if (o.compare(0, e->imms[i].name.size() + 1, e->imms[i].name + ":") != 0 ||
          !parse_uint(o.substr(e->imms[i].name.size() + 1), v) || (e->imms[i].size < 32 && (v >> e->imms[i].size))) {
        why = "expected immediate " + e->imms[i].name + ":N (" + std::to_string(e->imms[i].size) + " bits), got '" + o + "'";
        ok = false;
      }
      c.imms.push_back(v);
    }
    if (!ok) continue;
    if (!e->staging.empty()) {
      const std::string& o = ops.back();
      unsigned v = 0;
      if (o.size() < 3 || o.compare(0, 2, "@r") != 0 || !parse_uint(o.substr(2), v) || v > 63) {
        why = "expected the staging register @rN, got '" + o + "'";
        continue;
      }
      ins.staging = int(v);
    }
    ins.cands.push_back(c);
  }
  if (ins.cands.empty())
    fail(lineno, "cannot assemble '" + line + "'" + (why.empty() ? ": unknown instruction" : ": " + why));
  return ins;
}

Header parse_header(const std::string& line, int lineno, bool& regs64) {
  regs64 = false;
  static const char* flows[8] = {"eos", "nbb br_pc", "nbb r_uncond", "nbb", "bb r_uncond", "bb", "we r_uncond", "we"};
  static const char* msgs[16] = {"",     "vary",  "attr", "tex", "vartex", "load", "store", "atomic",
                                 "barrier", "blend", "tile", "",   "z_stencil", "atest", "job", "64"};
  // Tokens, with "dwb(0, 1)" kept whole.
  std::vector<std::string> tok;
  std::string cur;
  int depth = 0;
  for (char ch : line) {
    if (ch == '(') ++depth;
    if (ch == ')') --depth;
    if (ch == ' ' && depth == 0) {
      if (!cur.empty()) tok.push_back(cur);
      cur.clear();
    } else {
      cur += ch;
    }
  }
  if (!cur.empty()) tok.push_back(cur);
  uint64_t h = 0;
  bool have_flow = false;
  auto set = [&](unsigned pos, unsigned width, uint64_t v) { h |= (v & ((uint64_t(1) << width) - 1)) << pos; };
  for (size_t i = 0; i < tok.size(); ++i) {
    const std::string& t = tok[i];
    unsigned v = 0;
    if (t.rfind("ds(", 0) == 0 && t.back() == ')' && parse_uint(t.substr(3, t.size() - 4), v) && v < 8) {
      set(32, 3, v);
      continue;
    }
    if (t.rfind("dwb(", 0) == 0 && t.back() == ')') {
      std::string in = t.substr(4, t.size() - 5);
      std::stringstream ss(in);
      std::string part;
      while (std::getline(ss, part, ',')) {
        if (!parse_uint(trim(part), v) || v > 7) fail(lineno, "bad dependency list '" + t + "'");
        h |= uint64_t(1) << (24 + v);
      }
      continue;
    }
    bool matched = false;
    for (unsigned f = 0; f < 8 && !matched; ++f) {
      std::string name = flows[f];
      size_t sp = name.find(' ');
      if (sp == std::string::npos) {
        // "nbb"/"bb"/"we" alone: only when the next token is not the second word of a two-word name.
        if (t == name && !(i + 1 < tok.size() && (tok[i + 1] == "br_pc" || tok[i + 1] == "r_uncond"))) matched = true;
      } else if (t == name.substr(0, sp) && i + 1 < tok.size() && tok[i + 1] == name.substr(sp + 1)) {
        matched = true;
        ++i;
      }
      if (matched) {
        set(11, 3, f);
        have_flow = true;
      }
    }
    if (matched) continue;
    if (t == "osrb") set(17, 1, 1);
    else if (t == "inf_suppress") set(7, 1, 1);
    else if (t == "nan_suppress") set(8, 1, 1);
    else if (t == "ftz_dx11") set(5, 2, 1);
    else if (t == "ftz_hsa") set(5, 2, 2);
    else if (t == "ftz_au") set(5, 2, 3);
    else if (t == "fpe_ts") set(9, 2, 1);
    else if (t == "fpe_pd") set(9, 2, 2);
    else if (t == "fpe_psqr") set(9, 2, 3);
    else if (t == "td") set(15, 1, 1);
    else if (t == "ncph") set(16, 1, 1);
    else if (t == "regs64") regs64 = true;
    else {
      bool next = t.rfind("next_", 0) == 0;
      std::string m = next ? t.substr(5) : t;
      bool ok = false;
      for (unsigned k = 1; k < 16 && !ok; ++k)
        if (*msgs[k] && m == msgs[k]) {
          set(next ? 40 : 35, 5, k);
          ok = true;
        }
      if (!ok) fail(lineno, "unknown clause header word '" + t + "'");
    }
  }
  if (!have_flow) fail(lineno, "clause header without flow control (eos, nbb, bb, we ...)");
  if (regs64 && ((h >> 35) & 31) != kMessage64) fail(lineno, "'regs64' needs the 64-bit clause type ('64')");
  Header hd;
  hd.bits = h;
  return hd;
}

// One tuple's register block from its reads and the writes it carries.
struct TupleRegs {
  std::vector<unsigned> slot01;  // registers in slots 0/1 (ascending)
  int slot2_read = -1;
};

unsigned kind_of(SlotOp op) { return op == SlotOp::WriteLo ? 0 : op == SlotOp::WriteHi ? 1 : 2; }

void pack_clause_text(const ClauseText& ct, unsigned offset_q, std::vector<uint8_t>& out) {
  unsigned n = unsigned(ct.tuples.size());
  int line = ct.line;
  if (n < 1 || n > 8) fail(line, "a clause has 1 to 8 tuples, this one has " + std::to_string(n));
  Clause c;
  c.ntuples = n;
  c.header = ct.header;
  // Staging register: from the @rN of message instructions (all the same).
  int staging = -1;
  for (const auto& t : ct.tuples)
    for (const Ins* in : {&t.first, &t.second})
      if (in->staging >= 0) {
        if (staging >= 0 && staging != in->staging) fail(in->line, "two staging registers in one clause");
        staging = in->staging;
      }
  if (staging > 0) c.header.bits |= uint64_t(staging) << 18;

  // FAU per tuple, and the clause's constants (merged where the halves agree).
  struct ClauseConst {
    bool lo_known = false, hi_known = false;
    uint32_t lo = 0, hi = 0;
    bool pc = false;
    unsigned target = 0;
  };
  std::vector<ClauseConst> consts;
  std::vector<Fau> tfau(n);
  std::vector<int> tconst(n, -1);
  for (unsigned i = 0; i < n; ++i) {
    Fau f;
    for (const Ins* in : {&ct.tuples[i].first, &ct.tuples[i].second})
      for (const Operand& o : in->cands[0].srcs) {
        if (o.kind != Kind::FauLo && o.kind != Kind::FauHi) continue;
        bool hi = o.kind == Kind::FauHi;
        if (o.fau.type == Fau::Type::Index) {
          if (f.type == Fau::Type::Const || (f.type == Fau::Type::Index && f.index != o.fau.index))
            fail(in->line, "tuple " + std::to_string(i) + " reads two different FAU values");
          f.type = Fau::Type::Index;
          f.index = o.fau.index;
        } else {
          if (f.type == Fau::Type::Index) fail(in->line, "tuple " + std::to_string(i) + " reads two different FAU values");
          f.type = Fau::Type::Const;
          // Which half a constant operand reads was resolved in assemble().
          uint32_t v = o.fau.lo;
          if (o.fau.pc) {
            if ((f.pc && f.target != o.fau.target) || (!f.pc && f.hi_known))
              fail(in->line, "tuple " + std::to_string(i) + " reads two different high constant words");
            f.pc = true;
            f.target = o.fau.target;
          } else if (hi) {
            if (f.pc) fail(in->line, "tuple " + std::to_string(i) + " reads two different high constant words");
            if (f.hi_known && f.hi != v) fail(in->line, "tuple " + std::to_string(i) + " reads two different constants");
            f.hi_known = true;
            f.hi = v;
          } else {
            if (f.lo_known && f.lo != v) fail(in->line, "tuple " + std::to_string(i) + " reads two different constants");
            f.lo_known = true;
            f.lo = v;
          }
        }
      }
    tfau[i] = f;
    if (f.type != Fau::Type::Const) continue;
    int found = -1;
    for (size_t k = 0; k < consts.size() && found < 0; ++k) {
      const ClauseConst& cc = consts[k];
      bool ok = (!f.lo_known || !cc.lo_known || (f.lo & ~0xfu) == (cc.lo & ~0xfu)) &&
                (!f.hi_known || !cc.hi_known || f.hi == cc.hi) && f.pc == cc.pc && (!f.pc || f.target == cc.target);
      if (ok) found = int(k);
    }
    if (found < 0) {
      consts.push_back({});
      found = int(consts.size() - 1);
    }
    ClauseConst& cc = consts[size_t(found)];
    if (f.lo_known && !cc.lo_known) cc.lo_known = true, cc.lo = f.lo & ~0xfu;
    if (f.hi_known && !cc.hi_known) cc.hi_known = true, cc.hi = f.hi;
    if (f.pc) {
      cc.pc = true;
      cc.target = f.target;
      int64_t offs = (int64_t(f.target) - int64_t(offset_q)) * 16;
      if (offs < -(int64_t(1) << 27) || offs >= (int64_t(1) << 27))
        fail(ct.line, "branch target clause_" + std::to_string(f.target) + " is too far");
      cc.hi = uint32_t(offs) & 0x0fffffffu;
    }
    tconst[i] = found;
  }
  std::vector<uint64_t> values;
  std::vector<bool> pcs;
  for (const ClauseConst& cc : consts) {
    values.push_back(uint64_t(cc.hi) << 32 | cc.lo);
    pcs.push_back(cc.pc);
  }
  std::vector<unsigned> where;
  std::vector<uint64_t> slots = order_constants(n, values, where, pcs);
  if (slots.size() > max_constants(n))
    fail(line, "a " + std::to_string(n) + "-tuple clause holds at most " + std::to_string(max_constants(n)) +
                   " constants; this one needs " + std::to_string(slots.size()));
  c.nconsts = unsigned(slots.size());
  for (size_t k = 0; k < slots.size(); ++k) c.consts[k] = slots[k];

  // Register blocks.
  const bool wide = ct.regs64;
  for (unsigned i = 0; i < n; ++i) {
    const Ins& fi = ct.tuples[i].first;
    const Ins& ai = ct.tuples[i].second;
    const auto& prev = ct.tuples[i == 0 ? n - 1 : i - 1];
    const Dest& fw = prev.first.dest;
    const Dest& aw = prev.second.dest;
    bool first = i == 0;
    unsigned fau_index = 0;
    if (tfau[i].type == Fau::Type::Index) fau_index = tfau[i].index;
    else if (tfau[i].type == Fau::Type::Const)
      fau_index = constant_slot_fau(where[size_t(tconst[i])]) | (tfau[i].lo_known ? (tfau[i].lo & 15) : 0);
    // A 64-bit clause: rN names the pair rN:rN+1 (N even); the seed page's
    // 64-bit register block and its encoding algorithm (encode_regs64).
    std::vector<unsigned> wide_reads;
    uint64_t wide_bits = 0;
    if (wide) {
      std::vector<unsigned> no2, any2;
      for (const Ins* in : {&fi, &ai}) {
        const Candidate& cd = in->cands[0];
        for (size_t s = 0; s < cd.srcs.size(); ++s) {
          if (cd.srcs[s].kind != Kind::Reg) continue;
          const unsigned r = cd.srcs[s].reg;
          if (r % 2) fail(in->line, "a 64-bit clause reads register pairs: r" + std::to_string(r) + " is odd");
          if (!(cd.enc->srcs[s].mask & 4)) {
            if (std::find(no2.begin(), no2.end(), r) == no2.end()) no2.push_back(r);
          } else if (std::find(any2.begin(), any2.end(), r) == any2.end()) {
            any2.push_back(r);
          }
        }
      }
      for (unsigned r : any2)
        if (std::find(no2.begin(), no2.end(), r) == no2.end()) no2.push_back(r);  // port-2-capable ones last
      wide_reads = no2;
      for (const Dest* d : {&fw, &aw})
        if (d->write && (d->op != SlotOp::Write || d->reg % 2))
          fail(prev.first.line, "a 64-bit clause writes whole register pairs (even rN, no .h0/.h1)");
      std::string why;
      if (!encode_regs64(wide_reads, fw.write ? int(fw.reg) : -1, aw.write ? int(aw.reg) : -1, fau_index, wide_bits,
                         why))
        fail(fi.line, "tuple " + std::to_string(i) + ": " + why);
      c.tuples[i].regs = wide_bits;
    }
    const RegMode64 m64 = wide ? decode_regs64(wide_bits) : RegMode64{};
    std::vector<unsigned> s01;
    int s2 = -1;
    if (!wide) {
    // Reads in order, with where each may go.
    std::vector<unsigned> regs;
    std::vector<bool> may2;
    for (const Ins* in : {&fi, &ai}) {
      const Candidate& cd = in->cands[0];
      for (size_t s = 0; s < cd.srcs.size(); ++s) {
        if (cd.srcs[s].kind != Kind::Reg) continue;
        unsigned r = cd.srcs[s].reg;
        unsigned m = cd.enc->srcs[s].mask;
        if (!(m & 3) && !(m & 4)) fail(in->line, "source " + std::to_string(s) + " of " + cd.enc->name + " cannot be a register");
        auto it = std::find(regs.begin(), regs.end(), r);
        if (it == regs.end()) {
          regs.push_back(r);
          may2.push_back((m & 4) != 0);
        } else {
          may2[size_t(it - regs.begin())] = may2[size_t(it - regs.begin())] && (m & 4);
        }
      }
    }
    bool two_writes = fw.write && aw.write;
    for (size_t k = 0; k < regs.size(); ++k)
      if (!may2[k]) s01.push_back(regs[k]);
    if (s01.size() > 2) fail(fi.line, "tuple " + std::to_string(i) + " reads more than two registers through ports 0/1");
    for (size_t k = 0; k < regs.size(); ++k) {
      if (!may2[k]) continue;
      if (s01.size() < 2) s01.push_back(regs[k]);
      else if (s2 < 0 && !two_writes) s2 = int(regs[k]);
      else fail(fi.line, "tuple " + std::to_string(i) + " reads too many registers");
    }
    std::sort(s01.begin(), s01.end());
    RegBlock rb;
    unsigned cval = 0;
    unsigned wreg = fw.write ? fw.reg : aw.reg;
    SlotOp wop = fw.write ? fw.op : aw.op;
    if (two_writes) {
      if (first) {
        if (fw.op != SlotOp::WriteLo || aw.op != SlotOp::WriteLo)
          fail(prev.first.line, "the last tuple of a clause writes two registers only as .h0 and .h0");
        cval = 7;
        rb.reg2 = fw.reg;
        rb.reg3 = aw.reg;
      } else if (fw.reg == aw.reg) {
        if (fw.op == SlotOp::WriteLo && aw.op == SlotOp::WriteHi) cval = 8;
        else if (fw.op == SlotOp::WriteHi && aw.op == SlotOp::WriteLo) cval = 10;
        else fail(prev.first.line, "FMA and ADD write the same register: only as .h0/.h1 halves");
        rb.reg2 = rb.reg3 = fw.reg;
      } else {
        cval = 7 + 3 * kind_of(fw.op) + kind_of(aw.op);
        rb.reg2 = fw.reg;
        rb.reg3 = aw.reg;
      }
    } else if (fw.write || aw.write) {
      // kinds: W -> 0, L -> 1, H -> 2 in the idle-slot-2 modes; L/H/W -> 1/2/3 (+3 for ADD) with a read.
      unsigned k = wop == SlotOp::Write ? 0 : wop == SlotOp::WriteLo ? 1 : 2;
      if (s2 >= 0) {
        if (!first && unsigned(s2) == wreg)
          fail(fi.line, "tuple " + std::to_string(i) + " reads r" + std::to_string(s2) +
                            " through port 2 while writing it through port 3");
        unsigned kk = wop == SlotOp::WriteLo ? 1 : wop == SlotOp::WriteHi ? 2 : 3;
        cval = kk + (fw.write ? 0 : 3);
        rb.reg2 = unsigned(s2);
        rb.reg3 = wreg;
      } else {
        unsigned mode = (fw.write ? 17 : 21) + k;
        cval = first ? (mode & 7) | 8 : mode - 16;
        rb.reg2 = rb.reg3 = wreg;
      }
    } else if (s2 >= 0) {
      cval = first ? 12 : 4;
      rb.reg2 = rb.reg3 = unsigned(s2);
    } else {
      cval = first ? 8 : 11;
    }
    if (s01.size() == 2) {
      rb.ctrl = cval;
      unsigned x = s01[0], y = s01[1];
      if (x < 32) rb.reg0 = x, rb.reg1 = y;
      else rb.reg0 = 63 - x, rb.reg1 = 63 - y;
    } else {
      rb.ctrl = 0;
      unsigned x = s01.empty() ? 0 : s01[0];
      rb.reg0 = x & 31;
      rb.reg1 = (cval << 2) | (s01.empty() ? 2 : 0) | (x >> 5);
    }
    rb.fau = fau_index;
    c.tuples[i].regs = rb.to_bits();
    }
    // Source values and the instruction words.
    for (int u = 0; u < 2; ++u) {
      const Ins& in = u == 0 ? fi : ai;
      bool done = false;
      std::string why = "no encoding of '" + in.cands[0].enc->name + "' expresses these modifiers with these operands";
      for (const Candidate& cd : in.cands) {
        std::vector<unsigned> sv;
        for (const Operand& o : cd.srcs) {
          switch (o.kind) {
            case Kind::Reg:
              if (wide) {
                sv.push_back(m64.read0 && o.reg == m64.reg0 ? 0 : m64.read1 && o.reg == m64.reg1 ? 1 : 2);
                break;
              }
              if (s2 >= 0 && o.reg == unsigned(s2) && std::find(s01.begin(), s01.end(), o.reg) == s01.end()) sv.push_back(2);
              else sv.push_back(o.reg == s01[0] ? 0 : 1);
              break;
            case Kind::Zero: sv.push_back(3); break;
            case Kind::FauLo: sv.push_back(4); break;
            case Kind::FauHi: sv.push_back(5); break;
            case Kind::T0: sv.push_back(6); break;
            case Kind::T1: sv.push_back(7); break;
          }
        }
        bool legal = true;
        for (size_t k = 0; k < sv.size(); ++k)
          if (!((cd.enc->srcs[k].mask >> sv[k]) & 1)) {
            why = "source " + std::to_string(k) + " of " + cd.enc->name + " cannot be '" +
                  (sv[k] == 2 ? "a register read through port 2" : sv[k] < 2 ? "a register" : sv[k] == 3 ? (in.fma ? "#0" : "t") : sv[k] < 6 ? "an FAU value" : sv[k] == 6 ? "t0" : "t1") + "'";
            legal = false;
          }
        if (!legal) continue;
        uint32_t word = 0;
        if (!encode(*cd.enc, sv, cd.mods, cd.imms, word)) continue;
        if (match(word, in.fma) != cd.enc || decode_mods(*cd.enc, word) != cd.mods) {
          why = "'" + cd.enc->name + "' with these operands decodes as another instruction";
          continue;
        }
        (u == 0 ? c.tuples[i].fma : c.tuples[i].add) = word;
        done = true;
        break;
      }
      if (!done) fail(in.line, why);
    }
  }
  std::string err;
  if (!pack_clause(c, out, err)) fail(line, err);
}

}  // namespace

bool assemble(const std::string& text, std::vector<uint8_t>& out, std::string& err) {
  try {
    std::istringstream in(text);
    std::string raw;
    int lineno = 0;
    std::vector<ClauseText> clauses;
    enum { Outside, WantHeader, WantBrace, InBody } state = Outside;
    std::optional<Ins> pending;
    while (std::getline(in, raw)) {
      ++lineno;
      std::string line = trim(raw);
      if (line.empty() || line[0] == '#') continue;
      if (state == Outside) {
        if (line.size() > 8 && line.rfind("clause_", 0) == 0 && line.back() == ':') {
          clauses.push_back({});
          clauses.back().line = lineno;
          state = WantHeader;
          continue;
        }
        fail(lineno, "expected a clause label 'clause_N:', got '" + line + "'");
      }
      if (state == WantHeader) {
        clauses.back().header = parse_header(line, lineno, clauses.back().regs64);
        state = WantBrace;
        continue;
      }
      if (state == WantBrace) {
        if (line != "{") fail(lineno, "expected '{'");
        state = InBody;
        continue;
      }
      if (line == "}") {
        if (pending) fail(pending->line, "FMA instruction without its ADD partner");
        state = Outside;
        continue;
      }
      if (!pending) {
        pending = parse_ins(line, lineno, true);
      } else {
        Ins add = parse_ins(line, lineno, false);
        clauses.back().tuples.emplace_back(*pending, add);
        pending.reset();
      }
    }
    if (state != Outside) fail(lineno, "unterminated clause");
    // Which half of a 64-bit constant a source reads is not in the text (Mesa
    // prints both as 0x%08x). The packer's rule: in a tuple, the first
    // distinct constant value read is the low half, a second one the high half.
    for (ClauseText& ct : clauses)
      for (auto& t : ct.tuples) {
        std::vector<uint32_t> seen;
        for (Ins* ins : {&t.first, &t.second})
          for (Candidate& cd : ins->cands)
            for (Operand& o : cd.srcs) {
              if (o.fau.type != Fau::Type::Const || o.fau.pc) continue;
              auto it = std::find(seen.begin(), seen.end(), o.fau.lo);
              if (it == seen.end()) {
                if (seen.size() == 2) fail(ins->line, "a tuple reads at most two 32-bit constants (one 64-bit FAU value)");
                seen.push_back(o.fau.lo);
                it = seen.end() - 1;
              }
              o.kind = it == seen.begin() ? Kind::FauLo : Kind::FauHi;
            }
      }
    out.clear();
    for (ClauseText& ct : clauses) pack_clause_text(ct, unsigned(out.size() / 16), out);
    return true;
  } catch (const Error& e) {
    err = e.msg;
    return false;
  }
}

}  // namespace gpurc::bifrost
