// Assembler for applegpu's G13 syntax. Each operand kind has the inverse of
// its decoder (operands.cpp); an encoded candidate is accepted only if it
// decodes to the same descriptor and prints back to the same text, so the
// assembler can never emit bytes that mean something else.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <optional>

#include "frontend/g13/g13.h"
#include "frontend/g13/names.h"

namespace gpurc::g13 {
namespace {

std::string trim(std::string_view s) {
  size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return std::string(s.substr(a, b - a));
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

std::optional<int64_t> parse_int(std::string_view s) {
  if (s.empty()) return std::nullopt;
  bool neg = false;
  if (s[0] == '-') {
    neg = true;
    s.remove_prefix(1);
  }
  int base = 10;
  if (starts_with(s, "0x") || starts_with(s, "0X")) {
    base = 16;
    s.remove_prefix(2);
  } else if (starts_with(s, "0b")) {
    base = 2;
    s.remove_prefix(2);
  }
  if (s.empty() || s.size() > 20) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    int d;
    if (c >= '0' && c <= '9') d = c - '0';
    else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
    else return std::nullopt;
    if (d >= base) return std::nullopt;
    v = v * uint64_t(base) + uint64_t(d);
  }
  return neg ? -int64_t(v) : int64_t(v);
}

// A parsed operand token: registers (with tuple count), immediates, names.
struct Tok {
  std::string raw;      // without flags
  Operand op;           // type Empty when not a register/immediate
  bool ok_reg = false;
};

// Strips trailing flags (.cache .discard .sx .abs .neg) and a '$' prefix.
Operand parse_flags(std::string& s) {
  Operand f;
  if (!s.empty() && s[0] == '$') {
    f.cache = true;
    s.erase(0, 1);
  }
  static const char* flags[] = {".cache", ".discard", ".sx", ".abs", ".neg"};
  bool changed = true;
  while (changed) {
    changed = false;
    for (const char* fl : flags) {
      const size_t n = std::strlen(fl);
      if (s.size() > n && s.compare(s.size() - n, n, fl) == 0) {
        s.erase(s.size() - n);
        if (fl[1] == 'c') f.cache = true;
        if (fl[1] == 'd') f.discard = true;
        if (fl[1] == 's') f.sx = true;
        if (fl[1] == 'a') f.abs = true;
        if (fl[1] == 'n') f.neg = true;
        changed = true;
      }
    }
  }
  return f;
}

// One register name: r12, r12l, r12h, u3, u3l. Returns type and number in the
// decoder's convention (16-bit units for halves).
bool parse_one_reg(std::string_view s, OpType& t, int64_t& n) {
  if (s.size() < 2 || (s[0] != 'r' && s[0] != 'u')) return false;
  const bool u = s[0] == 'u';
  std::string_view body = s.substr(1);
  int half = -1;
  if (!body.empty() && (body.back() == 'l' || body.back() == 'h')) {
    half = body.back() == 'h';
    body.remove_suffix(1);
  }
  if (body.empty() || body.size() > 5) return false;
  for (char c : body)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  const int64_t v = std::stoll(std::string(body));
  if (half >= 0) {
    t = u ? OpType::UReg16 : OpType::Reg16;
    n = v * 2 + half;
  } else {
    t = u ? OpType::UReg32 : OpType::Reg32;
    n = v;
  }
  return true;
}

// Register, register pair / tuple, or immediate (integer or float literal).
bool parse_value(std::string s, Operand& out) {
  Operand f = parse_flags(s);
  Operand o;
  if (auto v = parse_int(s)) {
    o.type = OpType::Imm;
    o.n = *v;
  } else if (s.find('_') != std::string::npos) {
    std::vector<std::pair<OpType, int64_t>> regs;
    size_t a = 0;
    while (a <= s.size()) {
      size_t b = s.find('_', a);
      if (b == std::string::npos) b = s.size();
      OpType t;
      int64_t n;
      if (!parse_one_reg(std::string_view(s).substr(a, b - a), t, n)) return false;
      regs.push_back({t, n});
      a = b + 1;
    }
    for (size_t i = 1; i < regs.size(); ++i)
      if (regs[i].first != regs[0].first || regs[i].second != regs[0].second + int64_t(i)) return false;
    const OpType t0 = regs[0].first;
    if (regs.size() == 2 && t0 == OpType::Reg32) o.type = OpType::Reg64;
    else if (regs.size() == 2 && t0 == OpType::UReg32) o.type = OpType::UReg64;
    else if (t0 == OpType::Reg16) o.type = OpType::Tuple16;
    else if (t0 == OpType::Reg32) o.type = OpType::Tuple32;
    else if (t0 == OpType::UReg32) o.type = OpType::UTuple32;
    else return false;
    o.n = regs[0].second;
    o.count = int(regs.size());
  } else {
    OpType t;
    int64_t n;
    if (parse_one_reg(s, t, n)) {
      o.type = t;
      o.n = n;
    } else {
      // Float literal as applegpu prints minifloats. The 256 texts are made
      // once: formatting them per word made every unknown word (a typo, a
      // label, fuzzed text) cost 256 snprintf("%f") calls.
      static const std::vector<std::string> minifloat_texts = [] {
        std::vector<std::string> t;
        for (unsigned b = 0; b < 256; ++b) {
          Operand fo;
          fo.type = OpType::Float;
          fo.fv = minifloat(b);
          t.push_back(operand_text(fo));
        }
        return t;
      }();
      for (unsigned b = 0; b < 256; ++b)
        if (minifloat_texts[b] == s) {
          o.type = OpType::Float;
          o.n = b;
          o.fv = minifloat(b);
          break;
        }
      if (o.type != OpType::Float) return false;
    }
  }
  o.cache = f.cache;
  o.discard = f.discard;
  o.sx = f.sx;
  o.abs = f.abs;
  o.neg = f.neg;
  out = o;
  return true;
}

// Tuples of one register count as that register for single-register kinds.
Operand as_tuple(const Operand& o) {
  Operand t = o;
  if (o.type == OpType::Reg16) t.type = OpType::Tuple16;
  else if (o.type == OpType::Reg32) t.type = OpType::Tuple32;
  else if (o.type == OpType::Reg64) {
    t.type = OpType::Tuple32;
    t.count = 2;
  }
  return t;
}

class Encoder {
 public:
  Encoder(const Desc& d, uint64_t pc) : d_(&d), pc_(pc), bits_(d.value) {}

  bool set(const std::string& name, int64_t v) {
    const fe::Field* f = d_->field(name);
    if (!f) return v == 0;
    const unsigned w = f->width();
    if (v < 0 || (w < 64 && uint64_t(v) >> w)) return false;
    f->set(bits_, uint64_t(v));
    return true;
  }
  uint64_t get(const std::string& name) const {
    const fe::Field* f = d_->field(name);
    return f ? f->get(bits_) : 0;
  }
  const fe::Bits128& bits() const { return bits_; }

  // Encodes operand `op` from token `s`; an empty token means "printed empty".
  bool operand(const OperandDef& op, const std::string& s);
  // Enum names shared by two encodings (interpolation "sample", texture LOD
  // modes) are told apart by the operand that goes with them.
  void resolve_shared_enum_names();

 private:
  bool hint_bits(const Operand& o, int64_t& hh) {
    if (o.sx || o.abs || o.neg) return false;
    hh = o.discard ? 3 : o.cache ? 2 : 1;
    return !(o.cache && o.discard);
  }
  bool alu_src(const OperandDef& op, const Operand& o, bool allow32, bool allow64, bool type3);
  bool reg_or_imm(const std::string& name, const Operand& o, bool imm_flag_value);
  bool undefined_src(const OperandDef& op, std::string s);

  const Desc* d_;
  uint64_t pc_;
  fe::Bits128 bits_;
  std::map<std::string, Operand> parsed_;
};

void Encoder::resolve_shared_enum_names() {
  // A 16-bit texture register is Tt 1 (indirect) or Tt 2 (bindless, nonzero
  // register); only Tt 2 prints the U operand as registers instead of None.
  if (d_->has("Tt") && d_->has("U")) {
    auto t = parsed_.find("T"), u = parsed_.find("U");
    if (t != parsed_.end() && u != parsed_.end() && t->second.type == OpType::Reg16 && u->second.type == OpType::UReg64)
      set("Tt", 2);
  }
  // Coordinates: a 16-bit tuple of 2 * count + 1 halves is the packed form
  // with extra components (Cs clear); any other 16-bit tuple is the
  // per-component form (Cs set).
  for (const OperandDef& op : d_->operands) {
    if (op.kind != Kind::Coords) continue;
    auto it = parsed_.find(op.name);
    if (it == parsed_.end()) continue;
    const Operand t = as_tuple(it->second);
    int count, extra;
    texture_size(get("n"), count, extra);
    const bool packed = t.type == OpType::Tuple32 || (extra && t.count == count * 2 + 1);
    set(op.name + "s", packed ? 0 : 1);
  }
  if (d_->has("interpolation")) {
    const uint64_t ip = get("interpolation");
    auto it = parsed_.find("S");
    if ((ip == 1 || ip == 3) && it != parsed_.end()) set("interpolation", it->second.type == OpType::Reg16 ? 3 : 1);
  }
  if (d_->has("lod")) {
    const uint64_t lod = get("lod");
    auto it = parsed_.find("D");
    if ((lod == 1 || lod == 2 || lod == 5 || lod == 6) && it != parsed_.end()) {
      const uint64_t base = (lod == 1 || lod == 5) ? 1 : 2;
      set("lod", it->second.type == OpType::UReg16 ? base : base + 4);
    }
  }
}

bool Encoder::alu_src(const OperandDef& op, const Operand& o, bool allow32, bool allow64, bool type3) {
  const std::string& N = op.name;
  int64_t t = 0, v = 0;
  switch (o.type) {
    case OpType::Imm: case OpType::Float:
      if (o.cache || o.discard || o.n < 0 || o.n > 255) return false;
      t = 0;
      v = o.n;
      break;
    case OpType::UReg16: case OpType::UReg32: {
      if (o.cache || o.discard) return false;
      const int64_t idx = o.type == OpType::UReg32 ? o.n * 2 : o.n;
      // FloatSrc16's 3-bit type decodes 11b as a 32-bit uniform like ALUSrc.
      if (type3 && idx > 0x1FF) return false;
      t = 0x4 | (o.type == OpType::UReg32 ? 2 : 0) | (idx >> 8);
      v = idx & 0xFF;
      break;
    }
    case OpType::Reg16: case OpType::Reg32: case OpType::Reg64: {
      if (o.type == OpType::Reg32 && !allow32) return false;
      if (o.type == OpType::Reg64 && !allow64) return false;
      if (o.cache && o.discard) return false;
      const int64_t hh = o.discard ? 3 : o.cache ? 2 : 1;
      const int64_t sz = o.type == OpType::Reg16 ? 0 : o.type == OpType::Reg32 ? 0x8 : 0xC;
      if (type3 && sz) return false;
      t = sz | hh;
      v = o.type == OpType::Reg16 ? o.n : o.n * 2;
      break;
    }
    default:
      return false;
  }
  if (!set(N + "t", t) || !set(N, v)) return false;
  const bool is_float = op.kind == Kind::FloatSrc || op.kind == Kind::FloatSrc16 || op.kind == Kind::PairedFloatSrc;
  // Float sources print immediates as minifloats, integer sources as integers.
  if (is_float ? o.type == OpType::Imm : o.type == OpType::Float) return false;
  if (is_float) return !o.sx && set(N + "m", (o.abs ? 1 : 0) | (o.neg ? 2 : 0));
  if (o.abs || o.neg) return false;
  if (op.kind == Kind::MulSrc || op.kind == Kind::AddSrc) return set(N + "s", o.sx ? 1 : 0);
  return !o.sx;
}

// "None": a source type the decoder leaves undefined (xx00 other than 0000
// and 0100); encoded as type 1000 with value 0, float modifiers kept.
bool Encoder::undefined_src(const OperandDef& op, std::string s) {
  const Operand f = parse_flags(s);
  if (s != "None" || f.cache || f.discard || f.sx) return false;
  const std::string& N = op.name;
  if (!set(N + "t", 8) || !set(N, 0)) return false;
  const bool is_float = op.kind == Kind::FloatSrc || op.kind == Kind::PairedFloatSrc;
  if (is_float) return set(N + "m", (f.abs ? 1 : 0) | (f.neg ? 2 : 0));
  return !f.abs && !f.neg;
}

bool Encoder::reg_or_imm(const std::string& name, const Operand& o, bool imm_flag_value) {
  if (o.type == OpType::Imm) return set(name + "t", imm_flag_value ? 1 : 0) && set(name, o.n);
  if (o.type == OpType::Reg16) return set(name + "t", imm_flag_value ? 0 : 1) && set(name, o.n);
  return false;
}

bool Encoder::operand(const OperandDef& op, const std::string& s) {
  const std::string& N = op.name;
  Operand o;
  const bool is_value = !s.empty() && parse_value(s, o);
  if (is_value) parsed_[N] = o;
  switch (op.kind) {
    case Kind::ALUDst: case Kind::FloatDst: case Kind::ALUDst64: case Kind::ALUDst16: case Kind::FloatDst16: {
      if (!is_value || o.discard || o.sx || o.abs || o.neg) return false;
      const bool allow32 = op.kind != Kind::ALUDst16 && op.kind != Kind::FloatDst16;
      int64_t dt = o.cache ? 1 : 0, dv;
      if (o.type == OpType::Reg16) dv = o.n;
      else if (o.type == OpType::Reg32 && allow32) dv = o.n * 2, dt |= 2;
      else if (o.type == OpType::Reg64 && op.kind == Kind::ALUDst64) dv = o.n * 2 + 1, dt |= 2;
      else return false;
      // mov_imm fixes bit 8 (Dt bit 1) in its encoding: keep the fixed value.
      if ((d_->mask.get(8, 1)) && ((dt >> 1) != int64_t(d_->value.get(8, 1)))) return false;
      return set(N + "t", dt) && set(N, dv);
    }
    case Kind::PairedALUDst: {
      if (!is_value) return false;
      const Operand t = as_tuple(o);
      if ((t.type != OpType::Tuple16 && t.type != OpType::Tuple32) || t.count != 2) return false;
      return set(N + "t", (t.type == OpType::Tuple32 ? 2 : 0) | (o.cache ? 1 : 0)) &&
             set(N, t.type == OpType::Tuple32 ? t.n * 2 : t.n);
    }
    case Kind::ImplicitR0L:
      if (!is_value || o.type != OpType::Reg16 || o.n != 0 || o.discard || o.sx) return false;
      return set(N + "t", o.cache ? 1 : 0);
    case Kind::ALUSrc: case Kind::FloatSrc: return is_value ? alu_src(op, o, true, false, false) : undefined_src(op, s);
    case Kind::ALUSrc64: return is_value ? alu_src(op, o, true, true, false) : undefined_src(op, s);
    case Kind::ALUSrc16: return is_value ? alu_src(op, o, false, false, false) : undefined_src(op, s);
    case Kind::MulSrc: return is_value ? alu_src(op, o, true, false, false) : undefined_src(op, s);
    case Kind::AddSrc: return is_value ? alu_src(op, o, true, true, false) : undefined_src(op, s);
    case Kind::FloatSrc16: return is_value && alu_src(op, o, false, false, true);
    case Kind::PairedFloatSrc: {
      if (!is_value) return undefined_src(op, s);
      Operand single = o;
      if (o.type == OpType::Reg64) single.type = OpType::Reg32;
      else if (o.type == OpType::Tuple16 && o.count == 2) single.type = OpType::Reg16;
      else if (o.type != OpType::Imm && o.type != OpType::Float && !o.is_ureg()) return false;
      return alu_src(op, single, true, false, false);
    }
    case Kind::CmpselSrc: {
      if (s == "None") return set(N + "t", 0) && set(N, 0);  // an undefined source type
      if (!is_value || o.sx || o.abs || o.neg) return false;
      const bool is32 = get("Dt") & 2;
      if (o.type == OpType::Imm) return !o.cache && !o.discard && set(N + "t", 4) && set(N, o.n);
      if (o.type == OpType::Reg16 || o.type == OpType::Reg32) {
        if ((o.type == OpType::Reg32) != is32 || (o.cache && o.discard)) return false;
        return set(N + "t", o.discard ? 3 : o.cache ? 2 : 1) && set(N, o.type == OpType::Reg32 ? o.n * 2 : o.n);
      }
      if (o.type == OpType::UReg16 || o.type == OpType::UReg32) {
        if ((o.type == OpType::UReg32) != is32) return false;
        const int64_t idx = o.type == OpType::UReg32 ? o.n * 2 : o.n;
        return set(N + "t", 6 | (idx >> 8)) && set(N, idx & 0xFF);
      }
      return false;
    }
    case Kind::Immediate: case Kind::Flag: {
      auto v = parse_int(s);
      return v && set(N, *v);
    }
    case Kind::Binary: {
      if (!starts_with(s, "0b")) return false;
      auto v = parse_int(s);
      const fe::Field* f = d_->field(N);
      return v && f && s.size() == 2 + f->width() && set(N, *v);
    }
    case Kind::Enum: {
      uint64_t v;
      if (enum_value(d_->name, N, s, v)) return set(N, int64_t(v));
      if (s.empty()) return false;
      auto iv = parse_int(s);
      return iv && !enum_name(d_->name, N, uint64_t(*iv)) && set(N, *iv);
    }
    case Kind::Shift: case Kind::MemoryShift: {
      const std::string field = op.kind == Kind::Shift ? "s" : N;
      if (s.empty()) return set(field, 0);
      if (!starts_with(s, "lsl ")) return false;
      auto v = parse_int(trim(s.substr(4)));
      return v && *v > 0 && set(field, *v);
    }
    case Kind::Mask: {
      if (s.empty()) return set(N, 0);
      if (!starts_with(s, "mask ")) return false;
      auto v = parse_int(trim(s.substr(5)));
      if (!v || *v <= 0) return false;
      const uint64_t m1 = uint64_t(*v) + 1;
      if (m1 & (m1 - 1)) return false;
      const int m = __builtin_ctzll(m1);
      return m <= 31 && set(N, m);
    }
    case Kind::TruthTable: {
      if (s.size() != 4) return false;
      for (int i = 0; i < 4; ++i) {
        if (s[size_t(i)] != '0' && s[size_t(i)] != '1') return false;
        set("tt" + std::to_string(i), s[size_t(i)] - '0');
      }
      return true;
    }
    case Kind::SReg32: {
      if (!starts_with(s, "sr")) return false;
      const size_t sp = s.find(' ');
      auto v = parse_int(s.substr(2, sp == std::string::npos ? std::string::npos : sp - 2));
      return v && set(N, *v);
    }
    case Kind::Reg32: case Kind::ExReg32:
      return is_value && o.type == OpType::Reg32 && !o.cache && !o.discard && set(N, o.n);
    case Kind::StackReg32: case Kind::Reg32_4_4:
      return is_value && o.type == OpType::Reg32 && set(N, o.n * 2);
    case Kind::BranchOffset: {
      std::string t = s;
      bool neg = false;
      if (!starts_with(t, "0x")) return false;
      t = t.substr(2);
      if (starts_with(t, "-")) {
        neg = true;
        t = t.substr(1);
      }
      auto v = parse_int("0x" + t);
      if (!v) return false;
      const int64_t target = neg ? -*v : *v;
      const int64_t off = target - int64_t(pc_);
      const fe::Field* f = d_->field(N);
      const unsigned w = f->width();
      if (off < -(int64_t(1) << (w - 1)) || off >= (int64_t(1) << (w - 1))) return false;
      f->set(bits_, uint64_t(off));
      return true;
    }
    case Kind::ICondition: case Kind::FCondition: {
      unsigned v;
      if (!cond_value(op.kind == Kind::FCondition, s, v)) {
        // Unnamed conditions print as their number.
        auto iv = parse_int(s);
        if (!iv || *iv < 0 || *iv > 15 || cond_name(op.kind == Kind::FCondition, unsigned(*iv))) return false;
        v = unsigned(*iv);
      }
      if (!d_->has("ccn") && v > 7) return false;
      return set("cc", v & 7) && set("ccn", v >> 3);
    }
    case Kind::MemoryReg: case Kind::ThreadgroupMemoryReg: case Kind::SampleReg: {
      if (s.empty()) return d_->name != "threadgroup_atomic";  // mask 0: zero registers print nothing
      if (s == "None" && d_->name == "threadgroup_atomic") return set(N + "a", 0);
      if (!is_value) return false;
      if (d_->name == "threadgroup_atomic") {
        if (o.type == OpType::Reg32) return set(N + "t", 1) && set(N + "a", 1) && set(N, o.n * 2);
        if (o.type == OpType::Reg16) return set(N + "t", 0) && set(N + "a", 1) && set(N, o.n);
        return false;
      }
      const Operand t = as_tuple(o);
      if (t.type == OpType::Tuple32) return set(N + "t", 1) && set(N, t.n * 2);
      if (t.type == OpType::Tuple16) return set(N + "t", 0) && set(N, t.n);
      return false;
    }
    case Kind::MemoryIndex:
      if (!is_value) return false;
      if (o.type == OpType::Imm) return o.n >= -32768 && o.n < 65536 && set(N + "t", 1) && set(N, o.n & 0xFFFF);
      if (o.type == OpType::Reg32) return set(N + "t", 0) && set(N, o.n * 2);
      return false;
    case Kind::MemoryBase:
      if (!is_value) return false;
      if (o.type == OpType::UReg64) return set(N + "t", 1) && set(N, o.n * 2);
      if (o.type == OpType::Reg64) return set(N + "t", 0) && set(N, o.n * 2);
      return false;
    case Kind::ThreadgroupMemoryBase:
      if (!is_value) return false;
      if (o.type == OpType::Reg16) return set(N + "t", 0) && set(N, o.n);
      if (o.type == OpType::Imm && o.n == 0) return set(N + "t", 2);
      if (o.type == OpType::UReg16) return set(N + "t", 1 | ((o.n >> 8) << 1)) && set(N, o.n & 0xFF);
      return false;
    case Kind::ThreadgroupIndex:
      if (!is_value) return false;
      if (o.type == OpType::Imm) return o.n >= -32768 && o.n < 32768 && set(N + "t", 1) && set(N, o.n & 0xFFFF);
      if (o.type == OpType::Reg16) return set(N + "t", 0) && set(N, o.n);
      return false;
    case Kind::SampleMask: {
      if (!is_value) return false;
      const fe::Field* st = d_->field(N + "t");
      const bool tile = st && st->parts[0].lo == 22;
      return reg_or_imm(N, o, !tile) || (tile && o.type == OpType::Reg16 && set(N + "t", 1) && set(N, o.n)) ||
             (tile && o.type == OpType::Imm && set(N + "t", 0) && set(N, o.n));
    }
    case Kind::DiscardMask: case Kind::UVSIndex: case Kind::PBELod:
      return is_value && reg_or_imm(N, o, true);
    case Kind::VarRegister: case Kind::VarTripleRegister: {
      if (!is_value) return false;
      const Operand t = as_tuple(o);
      int count = t.count;
      if (op.kind == Kind::VarTripleRegister) {
        if (count % 3) return false;
        count /= 3;
      }
      if (count < 1 || count > 4) return false;
      if (t.type != OpType::Tuple16 && t.type != OpType::Tuple32) return false;
      return set(N + "t", t.type == OpType::Tuple32) && set(N, t.type == OpType::Tuple32 ? t.n * 2 : t.n) &&
             set("count", count & 3);
    }
    case Kind::CF: case Kind::CFPerspective:
      if (starts_with(s, "cf")) {
        auto v = parse_int(s.substr(2));
        return v && set(N + "t", 0) && set(N, *v);
      }
      return op.kind == Kind::CF && is_value && o.type == OpType::Reg16 && set(N + "t", 1) && set(N, o.n);
    case Kind::IterSampleID:
      if (s.empty()) return true;
      return is_value && (o.type == OpType::Imm || o.type == OpType::Reg16) && set(N, o.n);
    case Kind::UReg64:
      return is_value && o.type == OpType::UReg64 && set(N, o.n);
    case Kind::TextureStateDest: case Kind::SamplerStateDest: {
      const char* pre = op.kind == Kind::TextureStateDest ? "ts" : "ss";
      if (!starts_with(s, pre)) return false;
      auto v = parse_int(s.substr(2));
      return v && set(N, *v);
    }
    case Kind::AsyncMemoryReg:
      if (!is_value) return false;
      if (o.type == OpType::UReg64) return set(N + "t", 1) && set(N, o.n * 2);
      if (o.type == OpType::Reg64) return set(N + "t", 0) && set(N, o.n * 2);
      return false;
    case Kind::AsyncMemoryBase: {
      // Three (copy_1d) or five (copy_2d) 32-bit registers numbered from the field.
      if (!is_value || o.count != (get("F") ? 5 : 3)) return false;
      if (o.type == OpType::UTuple32) return set(N + "t", 1) && set(N, o.n);
      if (o.type == OpType::Tuple32) return set(N + "t", 0) && set(N, o.n);
      return false;
    }
    case Kind::StackAdjustment: {
      auto v = parse_int(s);
      return v && *v >= -32768 && *v < 32768 && set(N, *v & 0xFFFF);
    }
    case Kind::SampleUReg:
      if (s == "None") return true;
      return is_value && o.type == OpType::UReg64 && (o.n % 2) == 0 && set(N, o.n / 2);
    case Kind::Texture:
      if (starts_with(s, "ts")) {
        auto v = parse_int(s.substr(2));
        return v && set(N + "t", 0) && set(N, *v);
      }
      if (!is_value) return false;
      if (o.type == OpType::Reg16) return set(N + "t", 1) && set(N, o.n);
      if (o.type == OpType::Imm && o.n == 0) return set(N + "t", 2) && set(N, 0);
      if (o.type == OpType::Reg32) return set(N + "t", 3) && set(N, o.n * 2);
      return false;
    case Kind::Sampler:
      if (starts_with(s, "ss")) {
        auto v = parse_int(s.substr(2));
        return v && set(N + "t", 0) && set(N, *v);
      }
      return is_value && o.type == OpType::Reg16 && set(N + "t", 1) && set(N, o.n);
    case Kind::Coords: {
      // Cs (16-bit components or not) is settled by resolve_coords once the
      // dimension is known.
      if (!is_value) return false;
      const Operand t = as_tuple(o);
      if (t.type != OpType::Tuple16 && t.type != OpType::Tuple32) return false;
      return set(N + "t", o.discard ? 1 : 0) && set(N, t.type == OpType::Tuple32 ? t.n * 2 : t.n);
    }
    case Kind::Lod: {
      if (!is_value) return false;
      if (o.type == OpType::Imm && o.n == 0) return true;
      const Operand t = as_tuple(o);
      if (o.type == OpType::Reg16 || o.type == OpType::UReg16) return set(N, o.n);
      if (t.type == OpType::Tuple32) return set(N, t.n * 2);
      return false;
    }
    case Kind::SampleCompareOff: {
      if (s.empty()) return !get("compare") && set(N + "t", 0);
      if (!get("compare")) return is_value && o.type == OpType::Reg16 && set(N + "t", 1) && set(N, o.n);
      // "rK" (compare value only) or "rK_rMl/h" (compare value, then the
      // offset half right after it).
      const size_t us = s.find('_');
      OpType t;
      int64_t n;
      if (!parse_one_reg(std::string_view(s).substr(0, us), t, n) || t != OpType::Reg32) return false;
      if (us == std::string::npos) return set(N + "t", 0) && set(N, n * 2);
      OpType t2;
      int64_t n2;
      // The field may be odd: the compare value is r(v / 2), the offset half v + 2.
      if (!parse_one_reg(std::string_view(s).substr(us + 1), t2, n2) || t2 != OpType::Reg16 || ((n2 - 2) >> 1) != n)
        return false;
      return set(N + "t", 1) && set(N, n2 - 2);
    }
    case Kind::AtomicDestination:
      if (s == "None") return set(N + "t", 0);
      return is_value && o.type == OpType::Reg32 && set(N + "t", 1) && set(N, o.n * 2);
    case Kind::AtomicSource:
      return is_value && (o.type == OpType::Reg32 || o.type == OpType::Reg64) && set(N, o.n * 2);
    case Kind::TileToMemoryReg:
      return is_value && o.type == OpType::Reg16 && set(N, o.n);
    case Kind::PBESourceReg: {
      if (!is_value) return false;
      const Operand t = as_tuple(o);
      if (t.count != 4) return false;
      if (t.type == OpType::Tuple32) return set(N + "t", 1) && set(N, t.n * 2);
      if (t.type == OpType::Tuple16) return set(N + "t", 0) && set(N, t.n);
      return false;
    }
    case Kind::ZS: {
      if (s.empty()) return set("z", 0) && set("s", 0);  // nothing written
      if (!is_value) return false;
      const Operand t = as_tuple(o);
      if (t.type != OpType::Tuple16 || t.count < 1 || t.count > 3) return false;
      return set(N, t.n) && set("z", t.count >= 2) && set("s", t.count & 1);
    }
    case Kind::None:
      break;
  }
  return false;
}

// Operands that print nothing for some values: the assembler may skip them.
bool may_print_empty(const Desc& d, const OperandDef& op) {
  switch (op.kind) {
    case Kind::Shift: case Kind::MemoryShift: case Kind::Mask: case Kind::IterSampleID:
    case Kind::SampleCompareOff: case Kind::ZS: case Kind::MemoryReg: case Kind::ThreadgroupMemoryReg: case Kind::SampleReg:
      return true;
    case Kind::Enum: return enum_name(d.name, op.name, 0) && !*enum_name(d.name, op.name, 0);
    default: return false;
  }
}

std::vector<std::string> split_operands(std::string_view s) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  for (char c : s) {
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!trim(cur).empty() || !out.empty()) out.push_back(trim(cur));
  return out;
}

std::string normalize(std::string_view text) {
  const std::string t = trim(text);
  const size_t sp = t.find_first_of(" \t");
  std::string out = sp == std::string::npos ? t : t.substr(0, sp);
  if (sp != std::string::npos) {
    const auto ops = split_operands(std::string_view(t).substr(sp));
    bool first = true;
    for (const auto& o : ops) {
      if (o.empty()) continue;
      std::string collapsed;
      for (char c : o) {
        if (std::isspace(static_cast<unsigned char>(c))) {
          if (!collapsed.empty() && collapsed.back() != ' ') collapsed += ' ';
        } else {
          collapsed += c;
        }
      }
      out += first ? " " : ", ";
      out += collapsed;
      first = false;
    }
  }
  return out;
}

// Mnemonic -> (descriptor name, fields fixed by the mnemonic, operand tokens
// to put in front / at the end).
struct Candidate {
  std::string desc;
  std::map<std::string, int64_t> preset;
  std::vector<std::string> prefix, suffix;
};

std::vector<Candidate> candidates(std::string mnem) {
  std::vector<Candidate> out;
  int64_t sat = 0;
  if (mnem.size() > 4 && mnem.compare(mnem.size() - 4, 4, ".sat") == 0) {
    sat = 1;
    mnem.resize(mnem.size() - 4);
  }
  auto add = [&](std::string d, std::map<std::string, int64_t> p = {}, std::vector<std::string> pre = {},
                 std::vector<std::string> suf = {}) {
    if (sat) p["S"] = 1;
    out.push_back({std::move(d), std::move(p), std::move(pre), std::move(suf)});
  };
  if (mnem == "isub") add("iadd", {{"N", 1}});
  else if (mnem == "iadd") add("iadd", {{"N", 0}});
  else if (mnem == "imsub") add("imadd", {{"N", 1}});
  else if (mnem == "imadd") add("imadd", {{"N", 0}});
  else if (mnem == "push_exec") add("if_fcmp", {}, {}, {});
  else if (mnem == "update_exec") add("if_fcmp");
  else if (mnem == "else_exec") add("else_icmp");
  else if (mnem == "ld_tile") add("TODO.ld/st_tile", {}, {"1"});
  else if (mnem == "st_tile") add("TODO.ld/st_tile", {}, {"0"});
  else if (mnem == "map") {
    add("map", {}, {"map"});
    add("map");  // the raw form, op first
  }
  else if (mnem == "unmap") add("map", {}, {"unmap"});
  else if (mnem == "TODO.map") add("map");
  else if (mnem == "bitop_mov_a") add("bitop");
  else {
    std::string tt;
    bool unary;
    if (bitop_alias_table(mnem, tt, unary)) add("bitop", {}, {tt}, unary ? std::vector<std::string>{"0"} : std::vector<std::string>{});
    else add(mnem);
  }
  return out;
}

// The descriptors of each name, in table order: assemble_one looks up its
// candidates' descriptors here instead of comparing every row's name.
const std::vector<const Desc*>& descs_named(const std::string& name) {
  static const std::map<std::string, std::vector<const Desc*>, std::less<>> by_name = [] {
    std::map<std::string, std::vector<const Desc*>, std::less<>> m;
    for (const Desc& d : table()) m[d.name].push_back(&d);
    return m;
  }();
  static const std::vector<const Desc*> none;
  auto it = by_name.find(name);
  return it == by_name.end() ? none : it->second;
}

// The earlier descriptor that matches every encoding of descriptor `name`
// (its fixed bits include the earlier one's), so first-match decoding never
// yields it; null when it is reachable.
const Desc* shadowing_desc(const std::string& name) {
  const std::vector<Desc>& t = table();
  for (const Desc& d : t) {
    if (d.name != name) continue;
    for (const Desc& e : t) {
      if (e.index >= d.index) break;
      if ((e.mask & d.mask) == e.mask && (d.value & e.mask) == e.value) return &e;
    }
    return nullptr;
  }
  return nullptr;
}

}  // namespace

bool assemble_one(std::string_view text_in, uint64_t pc, std::vector<uint8_t>& out, std::string& err) {
  const std::string text = normalize(text_in);
  if (text.empty()) {
    err = "g13 assembler: empty instruction";
    return false;
  }
  const size_t sp = text.find(' ');
  const std::string mnem = text.substr(0, sp);
  std::vector<std::string> toks = sp == std::string::npos ? std::vector<std::string>{}
                                                          : split_operands(std::string_view(text).substr(sp + 1));
  bool known = false;
  for (const Candidate& c : candidates(mnem)) {
    std::vector<std::string> ops = c.prefix;
    if (mnem == "push_exec" || mnem == "update_exec") {
      // Aliases of if_fcmp r0l, eq, 0.0, 0.0, n.
      if (toks.empty()) continue;
      ops = {toks[0], "eq", "0.0", "0.0", mnem == "push_exec" && toks.size() > 1 ? toks[1] : "0"};
    } else if (mnem == "else_exec") {
      // applegpu's unconditional else (its alias of else_icmp with equal
      // zero operands; its disassembler never prints it, since an integer
      // condition is never named `eq`): else_icmp r0l, ueq, 0, 0, n.
      if (toks.size() != 2) continue;
      ops = {toks[0], "ueq", "0", "0", toks[1]};
    } else {
      ops.insert(ops.end(), toks.begin(), toks.end());
      ops.insert(ops.end(), c.suffix.begin(), c.suffix.end());
    }
    for (const Desc* dp : descs_named(c.desc)) {
      const Desc& d = *dp;
      known = true;
      if (c.preset.count("S") && !d.has_saturate()) continue;
      Encoder enc(d, pc);
      bool ok = true;
      for (const auto& [f, v] : c.preset) ok = ok && enc.set(f, v);
      // Operands that may print nothing make the token-to-operand mapping
      // ambiguous: try both readings (depth-first, consuming first).
      std::function<bool(size_t, size_t, Encoder&)> match = [&](size_t oi, size_t ti, Encoder& e) -> bool {
        if (oi == d.operands.size()) return ti == ops.size();
        const OperandDef& op = d.operands[oi];
        if (ti < ops.size()) {
          Encoder tryit = e;
          if (tryit.operand(op, ops[ti]) && match(oi + 1, ti + 1, tryit)) {
            e = tryit;
            return true;
          }
        }
        if (may_print_empty(d, op)) {
          Encoder tryit = e;
          if (tryit.operand(op, "") && match(oi + 1, ti, tryit)) {
            e = tryit;
            return true;
          }
        }
        return false;
      };
      if (!ok || !match(0, 0, enc)) continue;
      enc.resolve_shared_enum_names();
      // Long form whenever a bit lies beyond the short form.
      fe::Bits128 b = enc.bits();
      unsigned size = d.size_short;
      if (d.length_bit >= 0 && d.size_long != d.size_short) {
        fe::Bits128 hi = b;
        hi.set(unsigned(d.length_bit), 1, 0);
        const unsigned sbits = d.size_short * 8;
        bool beyond = false;
        for (unsigned i = sbits; i < d.size_long * 8; ++i) beyond |= hi.get(i, 1) != 0;
        b.set(unsigned(d.length_bit), 1, beyond ? 1 : 0);
        size = beyond ? d.size_long : d.size_short;
      }
      std::vector<uint8_t> bytes(size);
      b.to_bytes(bytes.data(), size);
      Insn in;
      fe::Diagnostic derr;
      if (!decode(bytes.data(), bytes.size(), pc, in, derr) || in.desc != &d || in.size != size) continue;
      if (disassemble(in, pc) != text && disassemble(in, pc, false) != text) {
        // else_exec never prints as itself: its expansion must.
        if (mnem != "else_exec") continue;
        std::string expanded = "else_icmp";
        for (size_t i = 0; i < ops.size(); ++i) expanded += (i ? ", " : " ") + ops[i];
        if (disassemble(in, pc) != expanded) continue;
      }
      out.insert(out.end(), bytes.begin(), bytes.end());
      return true;
    }
  }
  if (const Desc* by = known ? shadowing_desc(mnem) : nullptr) {
    err = "g13 assembler: '" + mnem + "' cannot be assembled: every encoding of it decodes as '" + by->name +
          "' (first match in applegpu's table, which applegpu's disassembler prints too)";
    return false;
  }
  err = known ? "g13 assembler: operands do not fit any encoding of '" + mnem + "': " + text
              : "g13 assembler: unknown mnemonic '" + mnem + "'";
  return false;
}

bool assemble(std::string_view text, std::vector<uint8_t>& out, std::string& err) {
  // Split into statements; strip comments.
  std::vector<std::pair<int, std::string>> stmts;
  int line_no = 1;
  std::string cur;
  bool comment = false;
  for (size_t i = 0; i <= text.size(); ++i) {
    const char c = i < text.size() ? text[i] : '\n';
    if (c == '\n' || (c == ';' && !comment)) {
      stmts.push_back({line_no, trim(cur)});
      cur.clear();
      if (c == '\n') {
        ++line_no;
        comment = false;
      }
      continue;
    }
    if (comment) continue;
    if (c == '#' || (c == '/' && i + 1 < text.size() && text[i + 1] == '/')) {
      comment = true;
      continue;
    }
    cur += c;
  }
  // Labels ("name:") resolve to byte offsets; a branch may name a label. The
  // first pass sizes instructions with labels read as 0x0.
  std::map<std::string, uint64_t> labels;
  auto substitute = [&](const std::string& s, bool resolve) {
    const size_t sp = s.find(' ');
    if (sp == std::string::npos) return s;
    const std::string mnem = s.substr(0, sp);
    if (mnem != "jmp_exec_any" && mnem != "jmp_exec_none" && mnem != "call" && mnem != "jmp_if_skipping_doorbell")
      return s;
    const std::string arg = trim(s.substr(sp + 1));
    if (arg.empty() || !(std::isalpha(static_cast<unsigned char>(arg[0])) || arg[0] == '_') || arg[0] == 'r') return s;
    uint64_t target = 0;
    if (resolve) {
      auto it = labels.find(arg);
      if (it == labels.end()) return s;  // reported by assemble_one as a bad operand
      target = it->second;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%llX", (unsigned long long)target);
    return mnem + " " + buf;
  };
  // assemble_one depends only on the text and the pc: the second pass
  // reuses the first's result for every statement whose text (no label
  // operand) and pc are the same, instead of searching the table again.
  std::map<std::pair<std::string, uint64_t>, std::vector<uint8_t>> first_pass;
  for (int pass = 0; pass < 2; ++pass) {
    std::vector<uint8_t> bytes;
    for (auto& [ln, s0] : stmts) {
      std::string s = s0;
      while (true) {
        const size_t colon = s.find(':');
        if (colon == std::string::npos) break;
        const std::string name = trim(s.substr(0, colon));
        bool ident = !name.empty();
        for (char c : name) ident = ident && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.');
        if (!ident) break;
        if (pass == 0) labels[name] = bytes.size();
        s = trim(s.substr(colon + 1));
      }
      if (s.empty()) continue;
      std::string e;
      std::pair<std::string, uint64_t> key{substitute(s, pass == 1), bytes.size()};
      if (pass == 1) {
        if (auto it = first_pass.find(key); it != first_pass.end()) {
          bytes.insert(bytes.end(), it->second.begin(), it->second.end());
          continue;
        }
      }
      const size_t start = bytes.size();
      if (!assemble_one(key.first, key.second, bytes, e)) {
        err = "line " + std::to_string(ln) + ": " + e;
        return false;
      }
      if (pass == 0) first_pass.emplace(std::move(key), std::vector<uint8_t>(bytes.begin() + start, bytes.end()));
    }
    if (pass == 1) out.insert(out.end(), bytes.begin(), bytes.end());
  }
  return true;
}

}  // namespace gpurc::g13
