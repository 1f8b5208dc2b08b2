// The template walker: decode, print, assemble and generate Tesla
// instructions from the tables in tables.cpp.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <stdexcept>

#include "frontend/tesla/encoding.h"
#include "frontend/tesla/tables.h"

namespace gpurc::tesla {

using detail::Field;
using detail::Prim;
using detail::Row;
using detail::Table;
using detail::Tables;
using detail::Tok;

// ---------------------------------------------------------------- targets

const std::vector<std::string>& variant_names() {
  static const std::vector<std::string> v = {"g200", "g80", "g84", "mcp77", "gt215"};
  return v;
}

bool parse_target(const std::string& spec, Target& out, std::string& err) {
  std::string var = spec, pt;
  if (auto c = spec.find(':'); c != std::string::npos) {
    var = spec.substr(0, c);
    pt = spec.substr(c + 1);
  }
  if (var.empty() || var == "default") var = "g200";
  Target t;
  t.variant = var;
  if (var == "g80") t.features = 0;
  else if (var == "g84") t.features = kSm11;
  else if (var == "g200") t.features = kSm11 | kSm12 | kFp64;
  else if (var == "mcp77") t.features = kSm11 | kSm12;
  else if (var == "gt215") t.features = kSm11 | kSm12 | kD3d101;
  else {
    err = "tesla: unknown variant '" + var + "' (g80, g84, g200, mcp77, gt215)";
    return false;
  }
  if (pt.empty() || pt == "cp") t.ptype = kCP;
  else if (pt == "vp") t.ptype = kVP;
  else if (pt == "gp") t.ptype = kGP;
  else if (pt == "fp") t.ptype = kFP;
  else {
    err = "tesla: unknown program type '" + pt + "' (vp, gp, fp, cp)";
    return false;
  }
  out = t;
  return true;
}

static bool var_ok(unsigned feat, unsigned ptype, const Target& t) {
  return (feat & ~t.features) == 0 && (ptype == 0 || (ptype & t.ptype) != 0);
}

const char* op_name(Op op) {
  switch (op) {
#define X(n) case Op::n: return #n;
    X(None) X(Illegal) X(Mov) X(MovFromC) X(MovFromA) X(MovFromSr) X(MovToC) X(ShlA) X(AddA) X(LdA) X(StO) X(StS)
    X(LdC) X(LdS) X(LdSLock) X(VoteAny) X(VoteAll) X(IAdd) X(ISet) X(IMax) X(IMin) X(Shl) X(Shr) X(Mul16) X(Mul24)
    X(Sad) X(IMad) X(LogOp) X(Interp) X(Rcp) X(Rsqrt) X(Lg2) X(Sin) X(Cos) X(Ex2) X(Cvt) X(FAdd) X(FSet) X(FMax)
    X(FMin) X(PreSin) X(PreEx2) X(FMul) X(FSlct) X(QuadOp) X(FMad) X(DFma) X(DAdd) X(DMul) X(DMin) X(DMax) X(DSet)
    X(LdL) X(StL) X(LdG) X(StG) X(RedG) X(AtomG) X(Tex) X(Emit) X(Restart) X(Nop) X(PmEvent) X(Discard) X(Bra)
    X(Call) X(Ret) X(PreBrk) X(Brk) X(QuadOn) X(QuadPop) X(Bar) X(Trap) X(JoinAt) X(Brkpt) X(BraC) X(PreRet)
#undef X
  }
  return "?";
}

const char* decode_error_name(DecodeError e) {
  switch (e) {
    case DecodeError::None: return "none";
    case DecodeError::IllegalOpcode: return "ILLEGAL_OPCODE";
    case DecodeError::UnalignedLong: return "UNALIGNED_LONG_INSTRUCTION";
    case DecodeError::IllegalPostIncr: return "ILLEGAL_POSTINCR";
    case DecodeError::IllegalMemorySize: return "ILLEGAL_MEMORY_SIZE";
    case DecodeError::IllegalMemorySign: return "ILLEGAL_MEMORY_SIGN";
    case DecodeError::IllegalMemoryByte: return "ILLEGAL_MEMORY_BYTE";
  }
  return "?";
}

// ---------------------------------------------------------------- compile

void detail::Tables::compile() {
  for (auto& [name, rows] : raw) tabs[name].name = name;
  for (auto& [name, rows] : raw) {
    Table& tb = tabs[name];
    for (auto& r : rows) {
      Row row{r.val, r.mask, r.feat, r.ptype, r.op, r.syn, {}};
      std::string s = r.syn;
      size_t i = 0;
      while (i < s.size()) {
        while (i < s.size() && s[i] == ' ') ++i;
        if (i >= s.size()) break;
        size_t j = s.find(' ', i);
        if (j == std::string::npos) j = s.size();
        std::string w = s.substr(i, j - i);
        i = j;
        Tok t;
        if (w == "(") t.type = Tok::Open;
        else if (w == ")") t.type = Tok::Close;
        else if (w == "???") t.type = Tok::Unknown;
        else if (w == "OP4" || w == "OP8") { t.type = Tok::Len; t.len = w == "OP4" ? 1 : 2; }
        else if (w == "PREDMARK") t.type = Tok::PredMark;
        else if (w.rfind("IGN:", 0) == 0) {
          t.type = Tok::Ign;
          unsigned long long v = 0;
          if (std::sscanf(w.c_str(), "IGN:%d:%d:%llu", &t.pos, &t.len, &v) < 2) throw std::logic_error("bad IGN " + w);
          t.value = v;
        } else if (w[0] == '?') {
          t.type = Tok::Flag;
          auto at = w.find('@');
          t.name = w.substr(1, at - 1);
          auto sl = w.find('/', at);
          t.pos = std::stoi(w.substr(at + 1, sl == std::string::npos ? std::string::npos : sl - at - 1));
          if (sl != std::string::npos) t.feat = unsigned(std::stoi(w.substr(sl + 1)));
        } else if (w.find('|') != std::string::npos) {
          t.type = Tok::Choice;
          auto at = w.find('@');
          std::string list = w.substr(0, at);
          t.pos = std::stoi(w.substr(at + 1));
          size_t k = 0;
          while (true) {
            size_t e = list.find('|', k);
            t.names.push_back(list.substr(k, e == std::string::npos ? std::string::npos : e - k));
            if (e == std::string::npos) break;
            k = e + 1;
          }
          t.len = 0;
          while ((1u << t.len) < t.names.size()) ++t.len;
          if ((1u << t.len) != t.names.size()) throw std::logic_error("choice not a power of two: " + w);
        } else if (std::isupper(static_cast<unsigned char>(w[0]))) {
          if (auto it = tabs.find(w); it != tabs.end() && raw.count(w)) {
            t.type = Tok::Sub;
            t.sub = &it->second;
          } else if (auto p = prims.find(w); p != prims.end()) {
            t.type = Tok::Prim;
            t.prim = &p->second;
          } else {
            throw std::logic_error("tesla table: unknown template token " + w + " in " + name);
          }
        } else {
          t.type = Tok::Lit;
          t.name = w;
        }
        row.toks.push_back(std::move(t));
      }
      tb.rows.push_back(std::move(row));
    }
  }
  for (auto& [name, tb] : tabs) index(tb);
}

uint64_t detail::lit_bit(const std::string& word) {
  uint32_t h = 2166136261u;  // FNV-1a
  for (char c : word) h = (h ^ uint8_t(c)) * 16777619u;
  return 1ull << (h % 64);
}

namespace {
const int kMainTables = 4;
const char* const kMainNames[kMainTables] = {"S", "I", "L", "C"};
}  // namespace

// The lookup structures of one compiled table (see Table in tables.h).
void detail::Tables::index(Table& tb) {
  for (int m = 0; m < kMainTables; ++m)
    if (tb.name == kMainNames[m]) tb.main_index = m;
  tb.is_pred = tb.name == "PRED";
  tb.half_ctx = tb.name == "SSH" || tb.name == "ISH" || tb.name == "LSH";
  tb.row_lits.clear();
  for (const Row& r : tb.rows) {
    uint64_t lits = 0;
    for (const Tok& k : r.toks)
      if (k.type == Tok::Lit) lits |= lit_bit(k.name);
    tb.row_lits.push_back(lits);
  }
  if (tb.rows.size() > 0xffff) throw std::logic_error("tesla table too large to index: " + tb.name);
  // Key bits: the positions most rows test (each tested by at least two
  // rows), the most frequent first, at most kIndexBits of them.
  tb.key.clear();
  if (tb.rows.size() > 2) {
    std::vector<std::pair<unsigned, unsigned>> counts;  // (rows testing the bit, bit)
    for (unsigned b = 0; b < 64; ++b) {
      unsigned n = 0;
      for (const Row& r : tb.rows) n += (r.mask >> b) & 1;
      if (n >= 2) counts.push_back({n, b});
    }
    std::stable_sort(counts.begin(), counts.end(), [](auto& a, auto& b) { return a.first > b.first; });
    for (size_t j = 0; j < counts.size() && j < Table::kIndexBits; ++j) tb.key.push_back(uint8_t(counts[j].second));
  }
  const size_t buckets = size_t(1) << tb.key.size();
  tb.bucket_start.assign(1, 0);
  tb.bucket_rows.clear();
  for (size_t k = 0; k < buckets; ++k) {
    for (size_t i = 0; i < tb.rows.size(); ++i) {
      const Row& r = tb.rows[i];
      bool can_match = true;
      for (size_t j = 0; j < tb.key.size() && can_match; ++j) {
        const unsigned b = tb.key[j];
        if ((r.mask >> b) & 1) can_match = ((r.val >> b) & 1) == ((k >> j) & 1);
      }
      if (can_match) tb.bucket_rows.push_back(uint16_t(i));
    }
    tb.bucket_start.push_back(uint32_t(tb.bucket_rows.size()));
  }
}

// ---------------------------------------------------------------- decode

namespace {

int64_t sext(uint64_t v, int bits) {
  if (bits <= 0 || bits >= 64) return int64_t(v);
  uint64_t s = 1ull << (bits - 1);
  return int64_t((v ^ s) - s);
}

const char* sreg_name(int n, const Target& t) {
  switch (n) {
    case 0: return "physid";
    case 1: return "clock";
    case 3: return "vstride";
    case 4: return "pm0";
    case 5: return "pm1";
    case 6: return "pm2";
    case 7: return "pm3";
    case 8: return (t.features & kD3d101) ? "sampleid" : nullptr;
    default: return nullptr;
  }
}

struct Decoder {
  uint64_t w;
  const Target& t;
  Insn& insn;
  int main_table = -1, main_row = -1;
  int half_ctx = 0;  // how many tables being walked stand for a 16-bit source

  void name(const std::string& n) {
    Atom a;
    a.type = Atom::Name;
    a.name = n;
    if (n == "???") insn.valid = false;
    insn.atoms.push_back(std::move(a));
  }
  void use(uint64_t m) { insn.used |= m; }

  void walk(const std::vector<Tok>& toks) {
    for (auto& k : toks) {
      switch (k.type) {
        case Tok::Lit: name(k.name); break;
        case Tok::Flag:
          if (!var_ok(k.feat, 0, t)) break;
          use(1ull << k.pos);
          if ((w >> k.pos) & 1) name(k.name);
          break;
        case Tok::Choice: {
          Field f{k.pos, k.len};
          use(f.mask());
          const std::string& n = k.names[f.get(w)];
          name(n == "-" ? "???" : n);
          break;
        }
        case Tok::Open: insn.atoms.push_back(Atom{Atom::Open, "", {}}); break;
        case Tok::Close: insn.atoms.push_back(Atom{Atom::Close, "", {}}); break;
        case Tok::Unknown: name("???"); break;
        case Tok::Ign: {
          Field f{k.pos, k.len};
          use(f.mask());
          insn.ignored |= f.mask();
          break;
        }
        case Tok::Len: insn.words = unsigned(k.len); break;
        case Tok::PredMark:
          insn.pred = int((w >> 39) & 0x1f);
          insn.pred_c = int((w >> 44) & 3);
          break;
        case Tok::Sub: sub(*k.sub); break;
        case Tok::Prim: prim(*k.prim); break;
      }
    }
  }

  void sub(const Table& tb) {
    // The rows that can match are those of the word's bucket (tables.h).
    size_t k = 0;
    for (size_t j = 0; j < tb.key.size(); ++j) k |= size_t((w >> tb.key[j]) & 1) << j;
    for (uint32_t b = tb.bucket_start[k], e = tb.bucket_start[k + 1]; b < e; ++b) {
      const size_t i = tb.bucket_rows[b];
      const Row& r = tb.rows[i];
      if ((w & r.mask) != r.val || !var_ok(r.feat, r.ptype, t)) continue;
      use(r.mask);
      if (r.op != Op::None) insn.op = r.op;
      if (tb.main_index >= 0) {
        main_table = tb.main_index;
        main_row = int(i);
        insn.body = insn.atoms.size();
      }
      half_ctx += tb.half_ctx;
      walk(r.toks);
      half_ctx -= tb.half_ctx;
      if (tb.is_pred) insn.body = insn.atoms.size();
      return;
    }
    name("???");
  }

  void prim(const Prim& p) {
    Operand o;
    o.role = p.role;
    switch (p.type) {
      case Prim::Reg: {
        uint64_t n = p.f.get(w);
        use(p.f.mask());
        o.reg = int(n);
        switch (p.rclass) {
          case 'r':
            o.kind = OKind::Reg;
            o.size = p.size;
            if (p.size == RSize::H) {
              o.reg = int(n >> 1);
              o.high = n & 1;
            }
            break;
          case 'a': o.kind = OKind::AReg; break;
          case 'c': o.kind = OKind::CReg; break;
          case 't': o.kind = OKind::Tex; break;
          case 's': o.kind = OKind::Samp; break;
          case 'S': {
            o.kind = OKind::SReg;
            const char* sn = sreg_name(int(n), t);
            o.sname = sn ? sn : "sr" + std::to_string(n);
            break;
          }
        }
        break;
      }
      case Prim::Imm:
      case Prim::Target: {
        uint64_t v = p.f.get(w);
        use(p.f.mask());
        o.kind = OKind::Imm;
        o.imm_signed = p.sgn;
        o.imm = p.sgn ? sext(v, p.f.width()) * (int64_t(1) << p.shr) : int64_t(v << p.shr);
        break;
      }
      case Prim::Mem: {
        o.kind = OKind::Mem;
        o.space = p.space;
        o.access = p.access;
        o.postinc = p.pi;
        if (p.idx.width()) {
          o.idx = int(p.idx.get(w));
          use(p.idx.mask());
        }
        if (p.aregmode == 1 || p.aregmode == 2) {
          Field af = p.aregmode == 1 ? Field{26, 2} : Field{26, 2, 34, 1};
          o.areg = int(af.get(w));
          use(af.mask());
        } else if (p.aregmode == 3) {
          Field gf{9, 7};
          o.greg = int(gf.get(w));
          use(gf.mask());
        }
        if (p.f.width()) {
          uint64_t v = p.f.get(w);
          use(p.f.mask());
          o.offset = p.sgn ? sext(v, p.f.width()) * (int64_t(1) << p.shr) : int64_t(v << p.shr);
        }
        if (half_ctx) o.half_ctx = true;
        break;
      }
      case Prim::Vec: {
        o.kind = OKind::Vec;
        uint64_t base = p.f.get(w);
        use(p.f.mask());
        uint64_t cnt = uint64_t(p.shr);
        if (p.idx.width()) {
          cnt += p.idx.get(w);
          use(p.idx.mask());
        }
        uint64_t mask = ~0ull;
        if (p.vmask.width()) {
          mask = p.vmask.get(w);
          use(p.vmask.mask());
        }
        int k = 0;
        for (uint64_t i = 0; i < cnt; ++i) o.vec.push_back((mask >> i) & 1 ? int(base) + k++ : -1);
        break;
      }
      case Prim::Discard: o.kind = OKind::Discard; break;
    }
    Atom a;
    a.type = Atom::Opnd;
    a.op = std::move(o);
    insn.atoms.push_back(std::move(a));
  }
};

const Table& root() {
  static const Table& r = detail::tables().get("ROOT");
  return r;
}

// Decodes into `insn`, reusing its atom vector's storage (a disassembler
// decoding word after word allocates it once, not per word: an Atom is
// large, an Operand with a vector and a string).
void decode_word_into(uint64_t w, unsigned avail_words, const Target& t, Insn& insn, int* main_table = nullptr,
                      int* main_row = nullptr) {
  std::vector<Atom> atoms = std::move(insn.atoms);
  atoms.clear();
  insn = Insn{};
  insn.atoms = std::move(atoms);
  insn.bits = w;
  // Room for a typical instruction's atoms up front: growing the vector one
  // atom at a time moved every atom several times per word.
  insn.atoms.reserve(12);
  Decoder d{w, t, insn, -1, -1, 0};
  d.sub(root());
  if (insn.words == 2 && avail_words < 2) {
    // A long instruction cut off by the end of the code: it cannot run (one
    // word, illegal), but it prints as envydis prints it, decoded with the
    // missing word read as 0 and marked "[incomplete]".
    insn.bits = w & 0xffffffffull;
    insn.used &= 0xffffffffull;
    insn.ignored &= 0xffffffffull;
    insn.words = 1;
    insn.valid = false;
    insn.incomplete = true;
    insn.op = Op::Illegal;
    return;
  }
  if (insn.words == 1) insn.bits &= 0xffffffffull;
  insn.is_long = insn.words == 2;
  insn.is_control = (w & 3) == 3;
  insn.is_imm = insn.is_long && (w & 3) == 1 && ((w >> 32) & 3) == 3;
  if (insn.is_long && !insn.is_control && !insn.is_imm) {
    unsigned x = unsigned((w >> 32) & 3);
    insn.exit = x == 1;
    insn.join = x == 2;
  }
  if (insn.op == Op::None) insn.op = Op::Illegal;
  if (main_table) *main_table = d.main_table;
  if (main_row) *main_row = d.main_row;
}

Insn decode_word(uint64_t w, unsigned avail_words, const Target& t, int* main_table = nullptr, int* main_row = nullptr) {
  Insn insn;
  decode_word_into(w, avail_words, t, insn, main_table, main_row);
  return insn;
}

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

void decode(const uint32_t* code, size_t nwords, size_t pos, const Target& t, Insn& out) {
  uint64_t w = 0;
  unsigned avail = 0;
  if (pos < nwords) {
    w = code[pos];
    avail = 1;
  }
  if (pos + 1 < nwords) {
    w |= uint64_t(code[pos + 1]) << 32;
    avail = 2;
  }
  decode_word_into(w, avail, t, out);
}

Insn decode(const uint32_t* code, size_t nwords, size_t pos, const Target& t) {
  Insn insn;
  decode(code, nwords, pos, t, insn);
  return insn;
}

bool Insn::has(const char* n) const {
  for (size_t i = body; i < atoms.size(); ++i)
    if (atoms[i].type == Atom::Name && atoms[i].name == n) return true;
  return false;
}
const Operand* Insn::find(Role r, int nth) const {
  for (auto& a : atoms)
    if (a.type == Atom::Opnd && a.op.role == r && nth-- == 0) return &a.op;
  return nullptr;
}
std::string Insn::name_before(const Operand* o) const {
  std::string last;
  for (auto& a : atoms) {
    if (a.type == Atom::Opnd && &a.op == o) return last;
    last = a.type == Atom::Name ? a.name : "";
  }
  return "";
}
std::vector<std::string> Insn::names() const {
  std::vector<std::string> v;
  for (size_t i = body; i < atoms.size(); ++i)
    if (atoms[i].type == Atom::Name) v.push_back(atoms[i].name);
  return v;
}

DecodeError check(const Insn& insn, size_t pos) {
  if (insn.words == 2 && (pos & 1)) return DecodeError::UnalignedLong;
  if (!insn.valid || insn.op == Op::Illegal || insn.op == Op::None) return DecodeError::IllegalOpcode;
  std::string prev2, prev1;
  for (auto& a : insn.atoms) {
    if (a.type == Atom::Opnd && a.op.kind == OKind::Mem) {
      const Operand& o = a.op;
      if (o.postinc && (o.areg <= 0 || o.areg == 5 || o.areg == 6)) return DecodeError::IllegalPostIncr;
      if (o.space == 's' && (o.role == Role::Src1)) {
        // prev1 is the s[] mode, prev2 the operand type the instruction wants.
        if (o.half_ctx && prev1 == "b32") return DecodeError::IllegalMemorySize;
        if ((prev2 == "u16" && prev1 == "s16") || (prev2 == "s16" && prev1 == "u16"))
          return DecodeError::IllegalMemorySign;
        if ((prev2 == "u8" || prev2 == "s8") && insn.op == Op::Cvt && prev1 != "u8")
          return DecodeError::IllegalMemoryByte;
      }
    }
    prev2 = prev1;
    prev1 = a.type == Atom::Name ? a.name : "";
  }
  return DecodeError::None;
}

// ---------------------------------------------------------------- print

namespace {

// Appending printers: a disassembly
// appends every piece to one string instead of making a string per piece.
// (By hand rather than snprintf: formatting was a quarter of a disassembly.)
void append_hex(uint64_t v, std::string& s) {
  char buf[18];
  char* e = buf + sizeof buf;
  char* p = e;
  do {
    *--p = "0123456789abcdef"[v & 15];
    v >>= 4;
  } while (v);
  s += "0x";
  s.append(p, size_t(e - p));
}
void append_num(int64_t v, std::string& s) {
  if (v < 0) s += '-';
  append_hex(v < 0 ? 0 - uint64_t(v) : uint64_t(v), s);
}
void append_reg(char cls, int n, std::string& s) {
  s += '$';
  s += cls;
  s += std::to_string(n);
}

void append_operand(const Operand& o, std::string& s) {
  switch (o.kind) {
    case OKind::Reg:
      append_reg('r', o.reg, s);
      if (o.size == RSize::H) s += o.high ? 'h' : 'l';
      if (o.size == RSize::D) s += 'd';
      if (o.size == RSize::Q) s += 'q';
      return;
    case OKind::AReg:
      if (o.reg == 0) s += "0x0";
      else append_reg('a', o.reg, s);
      return;
    case OKind::CReg: append_reg('c', o.reg, s); return;
    case OKind::SReg: s += '$'; s += o.sname; return;
    case OKind::Tex: append_reg('t', o.reg, s); return;
    case OKind::Samp: append_reg('s', o.reg, s); return;
    case OKind::Imm: append_num(o.imm, s); return;
    case OKind::Discard: s += '#'; return;
    case OKind::Zero: s += "0x0"; return;
    case OKind::Vec:
      if (o.vec.empty()) {
        s += "()";
        return;
      }
      for (size_t i = 0; i < o.vec.size(); ++i) {
        if (i) s += ':';
        if (o.vec[i] < 0) s += '#';
        else append_reg('r', o.vec[i], s);
      }
      return;
    case OKind::Mem: {
      s += o.space;
      if (o.idx >= 0) s += std::to_string(o.idx);
      s += '[';
      auto base = [&] {
        if (o.greg >= 0) append_reg('r', o.greg, s);
        else if (o.areg > 0) append_reg('a', o.areg, s);
      };
      const bool has_base = o.greg >= 0 || o.areg > 0;
      // A negative post-increment prints as envydis prints it: the 64-bit
      // two's complement in hex (s[$a3++0xffffffffffffffe8]).
      if (o.postinc) {
        if (has_base) base();
        else s += "0x0";
        s += "++";
        append_hex(uint64_t(o.offset), s);
      } else if (o.greg >= 0) {
        base();
      } else if (!has_base) {
        append_num(o.offset, s);
      } else if (o.offset == 0) {
        base();
      } else {
        base();
        s += o.offset > 0 ? '+' : '-';
        append_hex(o.offset > 0 ? uint64_t(o.offset) : uint64_t(-o.offset), s);
      }
      s += ']';
      return;
    }
  }
  s += '?';
}

void append_atoms(const std::vector<Atom>& atoms, std::string& s) {
  bool after_open = true;
  for (auto& a : atoms) {
    if (a.type == Atom::Close) {
      s += ')';
      after_open = false;
      continue;
    }
    if (!after_open) s += ' ';
    after_open = false;
    switch (a.type) {
      case Atom::Name: s += a.name; break;
      case Atom::Opnd: append_operand(a.op, s); break;
      case Atom::Open: s += '('; after_open = true; break;
      case Atom::Close: break;
    }
  }
}

std::string format_atoms(const std::vector<Atom>& atoms) {
  std::string s;
  append_atoms(atoms, s);
  return s;
}

}  // namespace

std::string format_operand(const Operand& o) {
  std::string s;
  append_operand(o, s);
  return s;
}

// envydis' notes after the text (core-dis.c): bits of the instruction no
// table row or operand read, as "[unknown: w0 w1]" (one 8-digit group per
// word), then "[unknown instruction]" when a "???" stands for the name of an
// instruction or parenthesised sub-instruction and "[unknown operand]" when
// it stands for a modifier.
void format_to(const Insn& insn, std::string& s) {
  append_atoms(insn.atoms, s);
  uint64_t width = insn.words == 2 ? ~0ull : 0xffffffffull;
  if (uint64_t unk = insn.bits & ~insn.used & width) {
    char buf[40];
    int n;
    if (insn.incomplete)  // envydis prints the bytes past the end as "??"
      n = std::snprintf(buf, sizeof buf, " [unknown: %08x ????????]", unsigned(unk));
    else if (insn.words == 2)
      n = std::snprintf(buf, sizeof buf, " [unknown: %08x %08x]", unsigned(unk), unsigned(unk >> 32));
    else
      n = std::snprintf(buf, sizeof buf, " [unknown: %08x]", unsigned(unk));
    s.append(buf, size_t(n));
  }
  // named[d]: the (sub-)instruction at paren depth d already has its name
  // (the first name atom at that depth, as envydis parses its atoms). The
  // tables nest parentheses one level deep; deeper levels spill to a vector.
  bool unk_insn = false, unk_operand = false;
  constexpr size_t kInline = 8;
  bool named_inline[kInline] = {false};
  std::vector<bool> named_deep;
  size_t depth = 0;
  auto named = [&](size_t d) -> bool { return d < kInline ? named_inline[d] : named_deep[d - kInline]; };
  auto set_named = [&](size_t d, bool v) {
    if (d < kInline) named_inline[d] = v;
    else named_deep[d - kInline] = v;
  };
  for (auto& a : insn.atoms) {
    if (a.type == Atom::Open) {
      ++depth;
      if (depth >= kInline) named_deep.resize(depth - kInline + 1);
      set_named(depth, false);
    }
    if (a.type == Atom::Close && depth > 0) --depth;
    if (a.type != Atom::Name) continue;
    if (a.name == "???") (named(depth) ? unk_operand : unk_insn) = true;
    set_named(depth, true);
  }
  if (insn.incomplete) s += " [incomplete]";
  if (unk_insn) s += " [unknown instruction]";
  if (unk_operand) s += " [unknown operand]";
}

std::string format(const Insn& insn) {
  std::string s;
  format_to(insn, s);
  return s;
}

// ---------------------------------------------------------------- parse text

namespace {

bool parse_int(const std::string& s, int64_t& v) {
  if (s.empty()) return false;
  size_t i = 0;
  bool neg = false;
  if (s[0] == '-') {
    neg = true;
    i = 1;
  }
  if (i >= s.size() || !std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  errno = 0;
  char* end = nullptr;
  unsigned long long u = std::strtoull(s.c_str() + i, &end, 0);
  if (*end || errno) return false;
  v = neg ? -int64_t(u) : int64_t(u);
  return true;
}

bool parse_reg(const std::string& s, Operand& o) {
  if (s.size() < 2 || s[0] != '$') return false;
  std::string b = s.substr(1);
  static const char* sregs[] = {"physid", "clock", "sr2", "vstride", "pm0", "pm1", "pm2", "pm3", "sampleid"};
  for (int i = 0; i < 9; ++i)
    if (b == sregs[i]) {
      o.kind = OKind::SReg;
      o.reg = i;
      o.sname = b;
      return true;
    }
  auto number = [](const std::string& d, int& n) {
    if (d.empty() || d.size() > 4) return false;
    for (char c : d)
      if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    n = std::stoi(d);
    return true;
  };
  if (b.rfind("sr", 0) == 0 && number(b.substr(2), o.reg)) {
    o.kind = OKind::SReg;
    o.sname = b;
    return true;
  }
  char c = b[0];
  std::string rest = b.substr(1);
  if (c == 'r') {
    o.kind = OKind::Reg;
    o.size = RSize::W;
    char last = rest.empty() ? 0 : rest.back();
    if (last == 'l' || last == 'h' || last == 'd' || last == 'q') {
      rest.pop_back();
      o.size = last == 'd' ? RSize::D : last == 'q' ? RSize::Q : RSize::H;
      o.high = last == 'h';
    }
    return number(rest, o.reg);
  }
  OKind k;
  switch (c) {
    case 'a': k = OKind::AReg; break;
    case 'c': k = OKind::CReg; break;
    case 't': k = OKind::Tex; break;
    case 's': k = OKind::Samp; break;
    default: return false;
  }
  o.kind = k;
  return number(rest, o.reg);
}

bool parse_mem(const std::string& s, Operand& o) {
  auto lb = s.find('[');
  if (lb == std::string::npos || s.back() != ']' || lb == 0) return false;
  std::string sp = s.substr(0, lb), in = s.substr(lb + 1, s.size() - lb - 2);
  o.kind = OKind::Mem;
  o.space = sp[0];
  if (!std::strchr("sclgaovp", o.space)) return false;
  if (sp.size() > 1) {
    int64_t v;
    if (!parse_int(sp.substr(1), v) || v < 0 || v > 63) return false;
    o.idx = int(v);
  }
  auto base_of = [&](const std::string& b) {
    if (b == "0x0" || b == "0") return true;
    Operand r;
    if (!parse_reg(b, r)) return false;
    if (r.kind == OKind::AReg) o.areg = r.reg;
    else if (r.kind == OKind::Reg && r.size == RSize::W) o.greg = r.reg;
    else return false;
    return true;
  };
  if (auto pp = in.find("++"); pp != std::string::npos) {
    o.postinc = true;
    return base_of(in.substr(0, pp)) && parse_int(in.substr(pp + 2), o.offset);
  }
  if (in.empty()) return false;
  if (in[0] == '$') {
    size_t k = 1;
    while (k < in.size() && in[k] != '+' && in[k] != '-') ++k;
    if (!base_of(in.substr(0, k))) return false;
    if (k == in.size()) return true;
    int64_t v;
    if (!parse_int(in.substr(k + 1), v)) return false;
    o.offset = in[k] == '-' ? -v : v;
    return true;
  }
  return parse_int(in, o.offset);
}

bool parse_operand(const std::string& s, Operand& o) {
  if (s == "()") {
    o.kind = OKind::Vec;
    return true;
  }
  if (s.find('[') != std::string::npos) return parse_mem(s, o);
  if (s[0] == '$' || s[0] == '#') {
    if (s.find(':') == std::string::npos) {
      if (s == "#") {
        o.kind = OKind::Discard;
        return true;
      }
      return parse_reg(s, o);
    }
    o.kind = OKind::Vec;
    size_t k = 0;
    while (true) {
      size_t e = s.find(':', k);
      std::string part = s.substr(k, e == std::string::npos ? std::string::npos : e - k);
      if (part == "#") o.vec.push_back(-1);
      else {
        Operand r;
        if (!parse_reg(part, r) || r.kind != OKind::Reg || r.size != RSize::W) return false;
        o.vec.push_back(r.reg);
      }
      if (e == std::string::npos) break;
      k = e + 1;
    }
    return true;
  }
  if (std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '-') {
    o.kind = OKind::Imm;
    return parse_int(s, o.imm);
  }
  return false;
}

bool parse_atoms(const std::string& text, std::vector<Atom>& atoms, std::string& err) {
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    if (c == '(' && i + 1 < text.size() && text[i + 1] == ')') {
      Atom a;
      a.type = Atom::Opnd;
      a.op.kind = OKind::Vec;
      atoms.push_back(a);
      i += 2;
      continue;
    }
    if (c == '(' || c == ')') {
      atoms.push_back(Atom{c == '(' ? Atom::Open : Atom::Close, "", {}});
      ++i;
      continue;
    }
    size_t j = i;
    while (j < text.size() && !std::isspace(static_cast<unsigned char>(text[j])) && text[j] != '(' && text[j] != ')')
      ++j;
    std::string w = text.substr(i, j - i);
    i = j;
    Atom a;
    bool looks_operand = w[0] == '$' || w[0] == '#' || w[0] == '-' || std::isdigit(static_cast<unsigned char>(w[0])) ||
                         w.find('[') != std::string::npos;
    if (looks_operand) {
      a.type = Atom::Opnd;
      if (!parse_operand(w, a.op)) {
        err = "cannot parse operand '" + w + "'";
        return false;
      }
    } else {
      for (char ch : w)
        if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_' && ch != '?') {
          err = "unexpected '" + w + "'";
          return false;
        }
      a.type = Atom::Name;
      a.name = w;
    }
    atoms.push_back(std::move(a));
  }
  return true;
}

// ---------------------------------------------------------------- encode

struct EncState {
  uint64_t w = 0, fixed = 0;
  size_t cur = 0;
};

struct Cont {
  const std::vector<Tok>* toks;
  size_t i;
  const Cont* next;
};

struct Encoder {
  const std::vector<Atom>& atoms;
  const Target& t;
  std::string want;      // canonical text the result must print as
  unsigned want_words = 0;  // 2 when the text says "long", else any
  uint64_t unknown = 0;     // "[unknown: ...]" bits
  unsigned unknown_words = 0;  // how many words that note gave (0: none)
  uint64_t result = 0;
  unsigned words = 0;
  int steps = 0;
  // The text's words as a set of lit_bit()s: a row whose literals are not
  // all among them cannot print as the text (Table::row_lits).
  uint64_t atom_lits = ~0ull;

  static bool put(EncState& s, const Field& f, uint64_t v) {
    uint64_t m = f.mask();
    uint64_t nw = f.put(s.w, v);
    if ((nw ^ s.w) & s.fixed & m) return false;
    s.w = nw;
    s.fixed |= m;
    return true;
  }
  static bool put_bits(EncState& s, uint64_t mask, uint64_t val) {
    if ((s.w ^ val) & s.fixed & mask) return false;
    s.w = (s.w & ~mask) | (val & mask);
    s.fixed |= mask;
    return true;
  }
  const Atom* at(const EncState& s) const { return s.cur < atoms.size() ? &atoms[s.cur] : nullptr; }

  static bool fits(int64_t v, int width, bool sgn) {
    if (width >= 63) return true;
    if (sgn) return v >= -(int64_t(1) << (width - 1)) && v < (int64_t(1) << (width - 1));
    return v >= 0 && v < (int64_t(1) << width);
  }
  static bool put_scaled(EncState& s, const Field& f, int shr, bool sgn, int64_t v) {
    if (v & ((int64_t(1) << shr) - 1)) return false;
    int64_t fv = v >> shr;
    if (!fits(fv, f.width(), sgn)) return false;
    return put(s, f, uint64_t(fv));
  }

  bool prim(const Prim& p, EncState& s) {
    const Atom* a = at(s);
    if (!a || a->type != Atom::Opnd) return false;
    const Operand& o = a->op;
    switch (p.type) {
      case Prim::Reg: {
        uint64_t n;
        switch (p.rclass) {
          case 'r':
            if (o.kind != OKind::Reg || o.size != p.size) return false;
            n = p.size == RSize::H ? uint64_t(o.reg) * 2 + (o.high ? 1 : 0) : uint64_t(o.reg);
            break;
          case 'a':
            if (o.kind == OKind::Imm && o.imm == 0) n = 0;
            else if (o.kind == OKind::AReg && o.reg != 0) n = uint64_t(o.reg);
            else return false;
            break;
          case 'c': if (o.kind != OKind::CReg) return false; n = uint64_t(o.reg); break;
          case 't': if (o.kind != OKind::Tex) return false; n = uint64_t(o.reg); break;
          case 's': if (o.kind != OKind::Samp) return false; n = uint64_t(o.reg); break;
          case 'S': if (o.kind != OKind::SReg) return false; n = uint64_t(o.reg); break;
          default: return false;
        }
        if (p.f.width() == 0) return n == 0;
        if (n >> p.f.width()) return false;
        return put(s, p.f, n);
      }
      case Prim::Imm:
      case Prim::Target:
        if (o.kind != OKind::Imm) return false;
        return put_scaled(s, p.f, p.shr, p.sgn, o.imm);
      case Prim::Mem: {
        if (o.kind != OKind::Mem || o.space != p.space || o.postinc != p.pi) return false;
        if (p.idx.width()) {
          if (o.idx < 0 || (uint64_t(o.idx) >> p.idx.width()) || !put(s, p.idx, uint64_t(o.idx))) return false;
        } else if (o.idx >= 0) {
          return false;
        }
        if (p.aregmode == 0) {
          if (o.areg > 0 || o.greg >= 0) return false;
        } else if (p.aregmode == 3) {
          if (o.greg < 0 || o.greg > 127 || o.areg > 0 || o.offset || !put(s, Field{9, 7}, uint64_t(o.greg))) return false;
          return true;
        } else {
          if (o.greg >= 0) return false;
          int ar = o.areg < 0 ? 0 : o.areg;
          Field af = p.aregmode == 1 ? Field{26, 2} : Field{26, 2, 34, 1};
          if ((uint64_t(ar) >> af.width()) || !put(s, af, uint64_t(ar))) return false;
        }
        if (!p.f.width()) return o.offset == 0;
        return put_scaled(s, p.f, p.shr, p.sgn, o.offset);
      }
      case Prim::Vec: {
        std::vector<int> v;
        if (o.kind == OKind::Vec) v = o.vec;
        else if (o.kind == OKind::Reg && o.size == RSize::W) v = {o.reg};
        else if (o.kind == OKind::Discard) v = {-1};
        else return false;
        int64_t cnt = int64_t(v.size()) - p.shr;
        if (p.idx.width()) {
          if (!fits(cnt, p.idx.width(), false) || !put(s, p.idx, uint64_t(cnt))) return false;
        } else if (cnt != 0) {
          return false;
        }
        uint64_t mask = 0;
        int base = -1, k = 0;
        for (size_t i = 0; i < v.size(); ++i) {
          if (v[i] < 0) continue;
          mask |= 1ull << i;
          if (base < 0) base = v[i];
          if (v[i] != base + k++) return false;
        }
        if (p.vmask.width()) {
          if (!put(s, p.vmask, mask)) return false;
        } else if (mask != (v.empty() ? 0 : (1ull << v.size()) - 1)) {
          return false;
        }
        if (base >= 0 && ((uint64_t(base) >> p.f.width()) || !put(s, p.f, uint64_t(base)))) return false;
        return true;
      }
      case Prim::Discard: return o.kind == OKind::Discard;
    }
    return false;
  }

  bool finish(const EncState& s, unsigned len) {
    if (s.cur != atoms.size()) return false;
    if (unknown_words && len != unknown_words) return false;
    // Bits no row reads ("[unknown: ...]") must stay unread with them set.
    uint64_t w = s.w | unknown;
    Insn d = decode_word(w, 2, t);
    if (d.words != len || format_atoms(d.atoms) != want) return false;
    if (want_words && d.words != want_words) return false;
    uint64_t width = d.words == 2 ? ~0ull : 0xffffffffull;
    if ((w & ~d.used & width) != unknown) return false;
    result = w & width;
    words = d.words;
    return true;
  }

  bool run(const Cont* c, EncState s, unsigned len) {
    if (++steps > 200000) return false;  // the tables never need this many; bounds pathological input
    while (c && c->i >= c->toks->size()) c = c->next;
    if (!c) return finish(s, len);
    const Tok& k = (*c->toks)[c->i];
    Cont nc{c->toks, c->i + 1, c->next};
    const Atom* a = at(s);
    switch (k.type) {
      case Tok::Lit:
        if (!a || a->type != Atom::Name || a->name != k.name) return false;
        ++s.cur;
        return run(&nc, s, len);
      case Tok::Flag: {
        if (!var_ok(k.feat, 0, t)) return run(&nc, s, len);
        Field f{k.pos, 1};
        if (a && a->type == Atom::Name && a->name == k.name) {
          EncState s2 = s;
          ++s2.cur;
          if (put(s2, f, 1) && run(&nc, s2, len)) return true;
        }
        return put(s, f, 0) && run(&nc, s, len);
      }
      case Tok::Choice: {
        if (!a || a->type != Atom::Name) return false;
        for (size_t i = 0; i < k.names.size(); ++i)
          if (k.names[i] == a->name) {
            EncState s2 = s;
            ++s2.cur;
            if (put(s2, Field{k.pos, k.len}, i) && run(&nc, s2, len)) return true;
          }
        return false;
      }
      case Tok::Open:
      case Tok::Close:
        if (!a || a->type != (k.type == Tok::Open ? Atom::Open : Atom::Close)) return false;
        ++s.cur;
        return run(&nc, s, len);
      case Tok::Unknown: return false;
      case Tok::Ign: {
        if (k.value) {
          EncState s2 = s;
          if (put(s2, Field{k.pos, k.len}, k.value) && run(&nc, s2, len)) return true;
        }
        return run(&nc, s, len);
      }
      case Tok::PredMark: return run(&nc, s, len);
      case Tok::Len: return run(&nc, s, unsigned(k.len));
      case Tok::Sub:
        for (size_t ri = 0; ri < k.sub->rows.size(); ++ri) {
          const Row& r = k.sub->rows[ri];
          if ((k.sub->row_lits[ri] & ~atom_lits) || !var_ok(r.feat, r.ptype, t)) continue;
          EncState s2 = s;
          if (!put_bits(s2, r.mask, r.val)) continue;
          Cont sc{&r.toks, 0, &nc};
          if (run(&sc, s2, len)) return true;
        }
        return false;
      case Tok::Prim:
        if (!prim(*k.prim, s)) return false;
        ++s.cur;
        return run(&nc, s, len);
    }
    return false;
  }
};

}  // namespace

namespace {

// Splits envydis' notes off an instruction's text (see format()): the
// "[unknown: w0 w1]" bits are returned, "[unknown instruction]" and
// "[unknown operand]" only restate a "???" in the text and are dropped.
bool split_notes(std::string& text, uint64_t& unknown, unsigned& unknown_words, std::string& err) {
  if (text.find("[incomplete]") != std::string::npos) {
    err = "an [incomplete] instruction (cut off by the end of the code) cannot be assembled";
    return false;
  }
  for (const char* note : {"[unknown instruction]", "[unknown operand]"})
    if (auto p = text.find(note); p != std::string::npos) text.erase(p, std::strlen(note));
  auto p = text.find("[unknown:");
  if (p == std::string::npos) return true;
  auto e = text.find(']', p);
  if (e == std::string::npos) {
    err = "unterminated '[unknown:'";
    return false;
  }
  std::string body = text.substr(p + 9, e - p - 9);
  text.erase(p, e + 1 - p);
  size_t i = 0;
  while (i < body.size()) {
    if (std::isspace(static_cast<unsigned char>(body[i]))) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < body.size() && std::isxdigit(static_cast<unsigned char>(body[j]))) ++j;
    if (j - i != 8 || unknown_words == 2 || (j < body.size() && !std::isspace(static_cast<unsigned char>(body[j])))) {
      err = "bad '[unknown:" + body + "]' (one or two groups of 8 hex digits)";
      return false;
    }
    unknown |= std::strtoull(body.substr(i, 8).c_str(), nullptr, 16) << (32 * unknown_words++);
    i = j;
  }
  if (!unknown_words) {
    err = "empty '[unknown:]'";
    return false;
  }
  return true;
}

}  // namespace

bool assemble_one(const std::string& text_in, const Target& t, uint64_t& bits, unsigned& words, std::string& err) {
  std::string text = text_in;
  uint64_t unknown = 0;
  unsigned unknown_words = 0;
  if (!split_notes(text, unknown, unknown_words, err)) return false;
  std::vector<Atom> atoms;
  if (!parse_atoms(text, atoms, err)) return false;
  if (atoms.empty()) {
    err = "empty instruction";
    return false;
  }
  // envyas' "long" prefix forces the two-word form of an instruction that
  // also has a short one (trap, brkpt); envydis never prints it.
  unsigned want_words = 0;
  if (atoms[0].type == Atom::Name && atoms[0].name == "long") {
    atoms.erase(atoms.begin());
    want_words = 2;
  }
  Encoder e{atoms, t, format_atoms(atoms), want_words, unknown, unknown_words};
  e.atom_lits = 0;
  for (const Atom& a : atoms)
    if (a.type == Atom::Name) e.atom_lits |= detail::lit_bit(a.name);
  Tok rt;
  rt.type = Tok::Sub;
  rt.sub = &root();
  std::vector<Tok> top{rt};
  Cont c{&top, 0, nullptr};
  if (!e.run(&c, EncState{}, 1)) {
    err = "no " + t.variant + " instruction prints as '" + e.want + "'" +
          (unknown_words ? " with those [unknown] bits unread" : "");
    return false;
  }
  bits = e.result;
  words = e.words;
  return true;
}

namespace {

// envyas' comments (easm_lex.l): "/* */", nested "/+ +/" (both may span
// lines; their newlines are kept so line numbers stay right) and "//" to the
// end of the line. False for an unterminated one.
bool strip_comments(const std::string& in, std::string& out, std::string& err) {
  out.clear();
  int nest = 0;
  bool block = false;
  for (size_t i = 0; i < in.size(); ++i) {
    char c = in[i], d = i + 1 < in.size() ? in[i + 1] : 0;
    if (block || nest) {
      if (in[i] == '\n') out += '\n';
      if (block && c == '*' && d == '/') block = false, ++i;
      else if (nest && c == '/' && d == '+') ++nest, ++i;
      else if (nest && c == '+' && d == '/') --nest, ++i;
      continue;
    }
    if (c == '/' && d == '*') {
      block = true;
      ++i;
    } else if (c == '/' && d == '+') {
      nest = 1;
      ++i;
    } else if (c == '/' && d == '/') {
      while (i < in.size() && in[i] != '\n') ++i;
      if (i < in.size()) out += '\n';
    } else {
      out += c;
    }
  }
  if (block || nest) {
    err = "unterminated comment";
    return false;
  }
  return true;
}

}  // namespace

bool assemble(const std::string& text_in, const Target& t, std::vector<uint32_t>& out, std::string& err) {
  std::string text;
  if (!strip_comments(text_in, text, err)) return false;
  // One statement per line or per ';' (envyas' two line ends).
  std::vector<std::pair<int, std::string>> lines;
  {
    size_t i = 0;
    int ln = 0;
    while (i <= text.size()) {
      size_t e = text.find('\n', i);
      if (e == std::string::npos) e = text.size();
      std::string l = text.substr(i, e - i);
      ++ln;
      size_t k = 0;
      while (true) {
        size_t sc = l.find(';', k);
        lines.emplace_back(ln, l.substr(k, sc == std::string::npos ? std::string::npos : sc - k));
        if (sc == std::string::npos) break;
        k = sc + 1;
      }
      i = e + 1;
    }
  }
  // Layout as envyas does it for g80 (envyas.c, i_need_g80as_hack): a long
  // instruction must start at an even word, so when one would land on an odd
  // word, the short instruction before it is assembled in its long form
  // instead (envydis prints no "long", so this is how the text of compiler
  // output, which pairs its short instructions, comes back as the same
  // words). Label addresses depend on those choices and the choices on the
  // addresses only through sizes, so passes repeat until nothing changes.
  std::map<std::string, uint64_t> labels;
  std::vector<bool> force_long(lines.size(), false);
  // assemble_one is a search over the tables and depends only on the text:
  // a line whose text a later pass gives again (every line whose labels did
  // not move) reuses the first pass's result instead of searching again.
  struct Encoded {
    bool ok;
    uint64_t bits;
    unsigned words;
    std::string err;
  };
  std::map<std::string, Encoded> encoded;
  auto assemble_cached = [&](const std::string& line, uint64_t& bits, unsigned& words, std::string& e) {
    auto it = encoded.find(line);
    if (it == encoded.end()) {
      Encoded r{};
      r.ok = assemble_one(line, t, r.bits, r.words, r.err);
      it = encoded.emplace(line, std::move(r)).first;
    }
    bits = it->second.bits;
    words = it->second.words;
    e = it->second.err;
    return it->second.ok;
  };
  std::vector<std::string> subst(lines.size());  // after label substitution
  for (size_t pass = 0;; ++pass) {
    out.clear();
    std::map<std::string, uint64_t> defined;
    std::string missing;
    bool promoted = false;
    size_t prev_line = 0, prev_pos = 0;
    bool have_prev = false;
    for (size_t li = 0; li < lines.size(); ++li) {
      auto& [ln, raw] = lines[li];
      std::string l = raw;
      // labels "name:" at the start of the line
      while (true) {
        size_t s = l.find_first_not_of(" \t\r");
        if (s == std::string::npos) {
          l.clear();
          break;
        }
        size_t k = s;
        while (k < l.size() && (std::isalnum(static_cast<unsigned char>(l[k])) || l[k] == '_')) ++k;
        if (k > s && k < l.size() && l[k] == ':') {
          std::string name = l.substr(s, k - s);
          if (defined.count(name)) {
            err = "line " + std::to_string(ln) + ": label '" + name + "' defined twice";
            return false;
          }
          defined[name] = out.size() * 4;
          l = l.substr(k + 1);
          continue;
        }
        break;
      }
      if (l.find_first_not_of(" \t\r") == std::string::npos) continue;
      // "#name" label references become byte addresses
      std::string r;
      for (size_t i = 0; i < l.size(); ++i) {
        if (l[i] == '#' && i + 1 < l.size() && (std::isalpha(static_cast<unsigned char>(l[i + 1])) || l[i + 1] == '_')) {
          size_t k = i + 1;
          while (k < l.size() && (std::isalnum(static_cast<unsigned char>(l[k])) || l[k] == '_')) ++k;
          std::string name = l.substr(i + 1, k - i - 1);
          auto it = labels.find(name);
          if (it == labels.end() && missing.empty()) missing = "line " + std::to_string(ln) + ": unknown label '" + name + "'";
          r += hex(it == labels.end() ? 0 : it->second);
          i = k - 1;
        } else {
          r += l[i];
        }
      }
      subst[li] = r;
      uint64_t bits;
      unsigned words;
      std::string e;
      if (!assemble_cached(force_long[li] ? "long " + r : r, bits, words, e)) {
        err = "line " + std::to_string(ln) + ": " + e;
        return false;
      }
      if (words == 2 && (out.size() & 1)) {
        // out.size() is odd, so the instruction before this one is short.
        uint64_t pb;
        unsigned pw;
        if (!have_prev || !assemble_cached("long " + subst[prev_line], pb, pw, e)) {
          err = "line " + std::to_string(ln) + ": long instruction at odd word " + std::to_string(out.size()) +
                " and the instruction before it has no long form (UNALIGNED_LONG_INSTRUCTION)";
          return false;
        }
        force_long[prev_line] = true;
        promoted = true;
        out.resize(prev_pos);
        out.push_back(uint32_t(pb));
        out.push_back(uint32_t(pb >> 32));
        for (auto& [name, addr] : defined)
          if (addr > prev_pos * 4) addr += 4;
      }
      have_prev = true;
      prev_line = li;
      prev_pos = out.size();
      out.push_back(uint32_t(bits));
      if (words == 2) out.push_back(uint32_t(bits >> 32));
    }
    bool stable = !promoted && defined == labels;
    labels = std::move(defined);
    if (stable) {
      if (!missing.empty()) {
        err = missing;
        return false;
      }
      return true;
    }
    if (pass > lines.size() + 2) {
      err = "layout does not converge";
      return false;
    }
  }
}

// ---------------------------------------------------------------- random

std::vector<RowRef> all_rows(const Target& t) {
  std::vector<RowRef> v;
  for (int m = 0; m < kMainTables; ++m) {
    auto& tb = detail::tables().get(kMainNames[m]);
    for (size_t i = 0; i < tb.rows.size(); ++i)
      if (var_ok(tb.rows[i].feat, tb.rows[i].ptype, t)) v.push_back(RowRef{m, int(i)});
  }
  return v;
}

std::string row_describe(RowRef r) {
  auto& row = detail::tables().get(kMainNames[r.table]).rows[size_t(r.row)];
  return std::string(kMainNames[r.table]) + "[" + std::to_string(r.row) + "] " + row.syn;
}

bool random_insn(RowRef r, const Target& t, std::mt19937_64& rng, uint64_t& bits, unsigned& words) {
  auto& row = detail::tables().get(kMainNames[r.table]).rows[size_t(r.row)];
  for (int attempt = 0; attempt < 400; ++attempt) {
    uint64_t w = rng();
    // Bias toward canonical encodings so rarely-true selector bits get covered too.
    if (attempt & 1) w &= rng();
    switch (r.table) {
      case 0: w = (w & 0xfffffffeull); break;
      case 1: w = (w & ~0x300000003ull) | 0x300000001ull; break;
      case 2: {
        uint64_t x = rng() % 3;
        w = (w & ~0x300000003ull) | 1ull | (x << 32);
        break;
      }
      case 3: w |= 3; break;
    }
    w = (w & ~row.mask) | row.val;
    if (r.table == 0) w &= ~1ull;
    int mt = -1, mr = -1;
    Insn d = decode_word(w, 2, t, &mt, &mr);
    if (mt != r.table || mr != r.row) continue;
    // Keep only the bits the decoder reads (the rest are don't-care).
    w &= d.used & ~d.ignored;
    d = decode_word(w, 2, t, &mt, &mr);
    if (mt != r.table || mr != r.row) continue;
    bits = d.words == 1 ? (w & 0xffffffffull) : w;
    words = d.words;
    return true;
  }
  return false;
}

}  // namespace gpurc::tesla
