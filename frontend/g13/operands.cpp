// Operand decoding and applegpu-syntax printing for every operand kind of the
// reference table (§3 of g13-encodings.md).
#include <cmath>
#include <cstdio>

#include "frontend/g13/g13.h"
#include "frontend/g13/names.h"

namespace gpurc::g13 {

double minifloat(unsigned n) {
  const double sign = (n & 0x80) ? -1.0 : 1.0;
  const unsigned e = (n >> 4) & 7, f = n & 15;
  if (e == 0) return sign * double(f) / 64.0;
  return sign * double(16 + f) * std::ldexp(1.0, int(e) - 7);
}

unsigned Operand::bits() const {
  switch (type) {
    case OpType::Reg32: case OpType::UReg32: return 32;
    case OpType::Reg64: case OpType::UReg64: return 64;
    default: return 16;
  }
}

namespace {

Operand reg(OpType t, int64_t n) {
  Operand o;
  o.type = t;
  o.n = n;
  return o;
}
Operand imm(int64_t v) { return reg(OpType::Imm, v); }
Operand text(std::string s) {
  Operand o;
  o.type = OpType::Text;
  o.text = std::move(s);
  return o;
}
Operand tuple(bool is32, int64_t first16, int count) {
  Operand o;
  o.type = is32 ? OpType::Tuple32 : OpType::Tuple16;
  o.n = is32 ? (first16 >> 1) : first16;
  o.count = count;
  return o;
}
int64_t sign_extend(uint64_t v, unsigned bits) {
  const uint64_t s = 1ull << (bits - 1);
  v &= (bits >= 64) ? ~0ull : ((1ull << bits) - 1);
  return int64_t((v ^ s) - s);
}
void add_hint(Operand& o, unsigned hh) {
  if (hh == 2) o.cache = true;
  if (hh == 3) o.discard = true;
}

// §3.2: 12-bit ALU source group (4-bit type) or FloatSrc16's 3-bit type.
Operand alu_src(uint64_t t, uint64_t v, bool allow32, bool allow64) {
  if (t == 0) return imm(int64_t(v));
  if ((t & 0xC) == 0x4) {
    const uint64_t idx = v | ((t & 1) << 8);
    return (t & 2) ? reg(OpType::UReg32, int64_t(idx >> 1)) : reg(OpType::UReg16, int64_t(idx));
  }
  if ((t & 3) != 0) {
    const uint64_t sz = t & 0xC;
    Operand o;
    if (allow64 && sz == 0xC) o = reg(OpType::Reg64, int64_t(v >> 1));
    else if (allow32 && (sz == 0x8 || sz == 0xC)) o = reg(OpType::Reg32, int64_t(v >> 1));
    else o = reg(OpType::Reg16, int64_t(v));
    add_hint(o, unsigned(t & 3));
    return o;
  }
  return text("None");  // type xx00 other than 0000/0100: undefined
}

Operand alu_dst(uint64_t dt, uint64_t d, bool allow32, bool allow64) {
  Operand o;
  if ((dt & 2) && allow32) o = (allow64 && (d & 1)) ? reg(OpType::Reg64, int64_t(d >> 1)) : reg(OpType::Reg32, int64_t(d >> 1));
  else o = reg(OpType::Reg16, int64_t(d));
  o.cache = dt & 1;
  return o;
}

int popcount4(uint64_t m) { return __builtin_popcountll(m & 15); }

}  // namespace

void texture_size(uint64_t n, int& count, int& extra) {
  static const int counts[9] = {1, 1, 2, 2, 2, 3, 3, 3, 2};
  static const int extras[9] = {0, 1, 0, 1, 1, 0, 0, 1, 2};
  n = n < 9 ? n : 8;
  count = counts[n];
  extra = extras[n];
}

Operand decode_operand(const Insn& in, const OperandDef& op, uint64_t pc) {
  const std::string& N = op.name;
  auto F = [&](const std::string& suffix) { return in.f(N + suffix); };
  const std::string& dn = in.desc->name;
  switch (op.kind) {
    case Kind::ALUDst: case Kind::FloatDst:
      return alu_dst(F("t"), F(""), true, false);
    case Kind::ALUDst64:
      return alu_dst(F("t"), F(""), true, true);
    case Kind::ALUDst16: case Kind::FloatDst16:
      return alu_dst(F("t"), F(""), false, false);
    case Kind::PairedALUDst: {
      Operand o = tuple(F("t") & 2, int64_t(F("")), 2);
      o.cache = F("t") & 1;
      return o;
    }
    case Kind::ImplicitR0L: {
      Operand o = reg(OpType::Reg16, 0);
      o.cache = F("t") & 1;
      return o;
    }
    case Kind::ALUSrc: return alu_src(F("t"), F(""), true, false);
    case Kind::ALUSrc64: return alu_src(F("t"), F(""), true, true);
    case Kind::ALUSrc16: return alu_src(F("t"), F(""), false, false);
    case Kind::MulSrc: case Kind::AddSrc: {
      Operand o = alu_src(F("t"), F(""), true, op.kind == Kind::AddSrc);
      if ((o.is_reg() || o.is_ureg()) && F("s")) o.sx = true;
      return o;
    }
    case Kind::FloatSrc: case Kind::FloatSrc16: case Kind::PairedFloatSrc: {
      Operand o = alu_src(F("t"), F(""), op.kind != Kind::FloatSrc16, false);
      if (o.type == OpType::Imm) {
        o.type = OpType::Float;
        o.fv = minifloat(unsigned(o.n));
      }
      if (op.kind == Kind::PairedFloatSrc && o.type == OpType::Reg32) o = [&] { Operand p = tuple(true, o.n * 2, 2); p.cache = o.cache; p.discard = o.discard; return p; }();
      else if (op.kind == Kind::PairedFloatSrc && o.type == OpType::Reg16) o = [&] { Operand p = tuple(false, o.n, 2); p.cache = o.cache; p.discard = o.discard; return p; }();
      const uint64_t m = F("m");
      o.abs = m & 1;
      o.neg = m & 2;
      return o;
    }
    case Kind::CmpselSrc: {
      const uint64_t t = F("t"), v = F("");
      const bool is32 = in.f("Dt") & 2;
      if (t == 4) return imm(int64_t(v));
      if (t >= 1 && t <= 3) {
        Operand o = is32 ? reg(OpType::Reg32, int64_t(v >> 1)) : reg(OpType::Reg16, int64_t(v));
        add_hint(o, unsigned(t));
        return o;
      }
      if (t == 6 || t == 7) {
        const uint64_t idx = v | ((t & 1) << 8);
        return is32 ? reg(OpType::UReg32, int64_t(idx >> 1)) : reg(OpType::UReg16, int64_t(idx));
      }
      return text("None");
    }
    case Kind::Immediate: case Kind::Flag:
      return imm(int64_t(F("")));
    case Kind::Binary: {
      const fe::Field* f = in.desc->field(N);
      std::string s = "0b";
      for (int i = int(f->width()) - 1; i >= 0; --i) s += ((f->get(in.bits) >> i) & 1) ? '1' : '0';
      return text(s);
    }
    case Kind::Enum: {
      const uint64_t v = F("");
      const char* name = enum_name(dn, N, v);
      if (name) return text(name);
      return imm(int64_t(v));
    }
    case Kind::Shift: {
      const uint64_t s = in.f("s");
      return s ? text("lsl " + std::to_string(s)) : Operand{};
    }
    case Kind::MemoryShift: {
      const uint64_t s = F("");
      return s ? text("lsl " + std::to_string(s)) : Operand{};
    }
    case Kind::Mask: {
      const uint64_t m = F("");
      if (!m) return Operand{};
      char buf[32];
      std::snprintf(buf, sizeof buf, "mask 0x%llX", (unsigned long long)((1ull << m) - 1));
      return text(buf);
    }
    case Kind::TruthTable: {
      std::string s;
      for (int i = 0; i < 4; ++i) s += in.f("tt" + std::to_string(i)) ? '1' : '0';
      return text(s);
    }
    case Kind::SReg32: {
      const uint64_t n = F("");
      std::string s = "sr" + std::to_string(n);
      if (const char* nm = sr_name(unsigned(n))) s += std::string(" (") + nm + ")";
      return text(s);
    }
    case Kind::Reg32: return reg(OpType::Reg32, int64_t(F("")));
    case Kind::BranchOffset: {
      const fe::Field* f = in.desc->field(N);
      Operand o;
      o.type = OpType::Offset;
      o.n = int64_t(pc) + sign_extend(f->get(in.bits), f->width());
      return o;
    }
    case Kind::ICondition: case Kind::FCondition: {
      const uint64_t v = in.f("cc") | (in.f("ccn") << 3);
      const char* nm = cond_name(op.kind == Kind::FCondition, unsigned(v));
      return nm ? text(nm) : imm(int64_t(v));
    }
    case Kind::MemoryReg: case Kind::ThreadgroupMemoryReg: case Kind::SampleReg: {
      if (dn == "threadgroup_atomic") {
        // Ra (bit 38) says whether the old value is returned.
        if (!F("a")) return text("None");
        return F("t") ? reg(OpType::Reg32, int64_t(F("") >> 1)) : reg(OpType::Reg16, int64_t(F("")));
      }
      return tuple(F("t") & 1, int64_t(F("")), popcount4(in.f("mask")));
    }
    case Kind::MemoryIndex: {
      if (F("t")) return imm(sign_extend(F(""), 16));
      return reg(OpType::Reg32, int64_t(F("") >> 1));
    }
    case Kind::MemoryBase:
      return F("t") ? reg(OpType::UReg64, int64_t(F("") >> 1)) : reg(OpType::Reg64, int64_t(F("") >> 1));
    case Kind::ThreadgroupMemoryBase: {
      const uint64_t t = F("t"), v = F("");
      if (t == 0) return reg(OpType::Reg16, int64_t(v));
      if (t == 2) return imm(0);
      return reg(OpType::UReg16, int64_t(v | ((t >> 1) << 8)));
    }
    case Kind::ThreadgroupIndex:
      if (F("t")) return imm(sign_extend(F(""), 16));
      return reg(OpType::Reg16, int64_t(F("") & 0xFF));
    case Kind::SampleMask: {
      // ld/st_tile: St (22-23) = 0 immediate; sample_mask/zs_emit: St (bit 8) = 1 immediate.
      const fe::Field* st = in.desc->field(N + "t");
      const bool tile = st && st->parts[0].lo == 22;
      const bool is_imm = tile ? F("t") == 0 : F("t") == 1;
      return is_imm ? imm(int64_t(F(""))) : reg(OpType::Reg16, int64_t(F("")));
    }
    case Kind::DiscardMask:
      return F("t") ? imm(int64_t(F(""))) : reg(OpType::Reg16, int64_t(F("")));
    case Kind::VarRegister: case Kind::VarTripleRegister: {
      int count = int(in.f("count"));
      if (count == 0) count = 4;
      if (op.kind == Kind::VarTripleRegister) count *= 3;
      return tuple(F("t") & 1, int64_t(F("")), count);
    }
    case Kind::CF:
      if (F("t")) return reg(OpType::Reg16, int64_t(F("")));
      return text("cf" + std::to_string(F("")));
    case Kind::CFPerspective:
      return text("cf" + std::to_string(F("")));
    case Kind::IterSampleID: {
      const uint64_t interp = in.f("interpolation");
      if (interp == 1) return imm(int64_t(F("")));
      if (interp == 3) return reg(OpType::Reg16, int64_t(F("")));
      return Operand{};
    }
    case Kind::UReg64: return reg(OpType::UReg64, int64_t(F("")));
    case Kind::TextureStateDest: return text("ts" + std::to_string(F("")));
    case Kind::SamplerStateDest: return text("ss" + std::to_string(F("")));
    case Kind::UVSIndex:
      return F("t") ? imm(int64_t(F(""))) : reg(OpType::Reg16, int64_t(F("")));
    case Kind::ExReg32: return reg(OpType::Reg32, int64_t(F("")));
    case Kind::AsyncMemoryReg:
      return F("t") ? reg(OpType::UReg64, int64_t(F("") >> 1)) : reg(OpType::Reg64, int64_t(F("") >> 1));
    case Kind::AsyncMemoryBase: {
      // applegpu: 32-bit registers from the field value (not halved), three
      // for copy_1d and five for copy_2d.
      Operand o = tuple(true, int64_t(F("")) * 2, in.f("F") ? 5 : 3);
      if (F("t")) o.type = OpType::UTuple32;
      return o;
    }
    case Kind::StackReg32: return reg(OpType::Reg32, int64_t(F("") >> 1));
    case Kind::StackAdjustment: return imm(sign_extend(F(""), 16));
    case Kind::Reg32_4_4: return reg(OpType::Reg32, int64_t(F("") >> 1));
    case Kind::SampleUReg:
      if (in.f("Tt") & 2) return reg(OpType::UReg64, int64_t(F("") * 2));
      return text("None");
    case Kind::Texture: {
      const uint64_t t = F("t"), v = F("");
      if (t == 0) return text("ts" + std::to_string(v));
      if (t == 1) return reg(OpType::Reg16, int64_t(v));
      if (t == 2) return v == 0 ? imm(0) : reg(OpType::Reg16, int64_t(v));
      return reg(OpType::Reg32, int64_t(v >> 1));
    }
    case Kind::Sampler:
      if (F("t")) return reg(OpType::Reg16, int64_t(F("")));
      return text("ss" + std::to_string(F("")));
    case Kind::Coords: {
      // Cs set: one 16-bit register per component; otherwise 32-bit
      // coordinates, or with extra components 2 * count + 1 halves.
      int count, extra;
      texture_size(in.f("n"), count, extra);
      Operand o = F("s")  ? tuple(false, int64_t(F("")), count + extra)
                  : extra ? tuple(false, int64_t(F("")), count * 2 + 1)
                          : tuple(true, int64_t(F("")), count);
      if (F("t")) o.discard = true;
      return o;
    }
    case Kind::Lod: {
      const uint64_t lod = in.f("lod"), v = F("");
      if (lod == 0) return imm(0);
      if (lod == 4 || lod == 12) {
        int count, extra;
        texture_size(in.f("n"), count, extra);
        return tuple(true, int64_t(v), count * 2 + (lod == 12 ? 1 : 0));
      }
      if (lod == 1 || lod == 2) return reg(OpType::UReg16, int64_t(v));
      return reg(OpType::Reg16, int64_t(v));
    }
    case Kind::SampleCompareOff: {
      // A 32-bit compare value (compare set), then a 16-bit offset register
      // (Ot set) after it; printed as one tuple, empty when neither.
      Operand o;
      const int64_t v = int64_t(F(""));
      if (in.f("compare")) {
        o.type = OpType::CmpOffTuple;
        o.n = v;
        o.count = F("t") ? 2 : 1;
        return o;
      }
      if (F("t")) return reg(OpType::Reg16, v);
      return Operand{};
    }
    case Kind::AtomicDestination:
      if (F("t")) return reg(OpType::Reg32, int64_t(F("") >> 1));
      return text("None");
    case Kind::AtomicSource: {
      const uint64_t v = F("");
      const bool cmpxchg = in.f("op") == 3;
      if (cmpxchg) return reg(OpType::Reg64, int64_t(v >> 1));
      return reg(OpType::Reg32, int64_t(v >> 1));
    }
    case Kind::PBELod:
      return F("t") ? imm(int64_t(F(""))) : reg(OpType::Reg16, int64_t(F("")));
    case Kind::TileToMemoryReg: return reg(OpType::Reg16, int64_t(F("")));
    case Kind::PBESourceReg: return tuple(F("t") & 1, int64_t(F("")), 4);
    case Kind::ZS: {
      const int count = int(in.f("z")) * 2 + int(in.f("s"));
      return tuple(false, int64_t(F("")), count);
    }
    case Kind::None:
      break;
  }
  return text("?");
}

static std::string reg_name(OpType t, int64_t n) {
  const std::string idx = std::to_string(n >> 1);
  switch (t) {
    case OpType::Reg16: return "r" + idx + ((n & 1) ? "h" : "l");
    case OpType::UReg16: return "u" + idx + ((n & 1) ? "h" : "l");
    case OpType::Reg32: return "r" + std::to_string(n);
    case OpType::UReg32: return "u" + std::to_string(n);
    case OpType::Reg64: return "r" + std::to_string(n) + "_r" + std::to_string(n + 1);
    case OpType::UReg64: return "u" + std::to_string(n) + "_u" + std::to_string(n + 1);
    default: return "?";
  }
}

static std::string float_text(double v) {
  // Minifloats are dyadic with at most 6 fractional bits: %.6f is exact, then
  // trim to Python's repr (at least one digit after the point).
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6f", v);
  std::string s = buf;
  while (s.size() > 1 && s.back() == '0' && s[s.size() - 2] != '.') s.pop_back();
  return s;
}

std::string operand_text(const Operand& o) {
  std::string s;
  switch (o.type) {
    case OpType::Empty: return "";
    case OpType::Imm: s = std::to_string(o.n); break;
    case OpType::Float: s = float_text(o.fv); break;
    case OpType::Text: s = o.text; break;
    case OpType::Offset: {
      char buf[40];
      if (o.n < 0) std::snprintf(buf, sizeof buf, "0x-%llX", (unsigned long long)(-o.n));
      else std::snprintf(buf, sizeof buf, "0x%llX", (unsigned long long)o.n);
      s = buf;
      break;
    }
    case OpType::Tuple16: case OpType::Tuple32: case OpType::UTuple32:
      for (int i = 0; i < o.count; ++i) {
        if (i) s += '_';
        s += reg_name(o.type == OpType::Tuple16 ? OpType::Reg16 : o.type == OpType::Tuple32 ? OpType::Reg32 : OpType::UReg32,
                      o.n + i);
      }
      break;
    case OpType::CmpOffTuple:
      s = reg_name(OpType::Reg32, o.n >> 1);
      if (o.count > 1) s += "_" + reg_name(OpType::Reg16, o.n + 2);
      break;
    default: s = reg_name(o.type, o.n); break;
  }
  if (o.cache) s += ".cache";
  if (o.discard) s += ".discard";
  if (o.sx) s += ".sx";
  if (o.abs) s += ".abs";
  if (o.neg) s += ".neg";
  return s;
}

std::string disassemble(const Insn& in, uint64_t pc, bool use_aliases) {
  const Desc& d = *in.desc;
  std::string mnem = d.name;
  std::vector<Operand> ops;
  for (const OperandDef& od : d.operands) {
    Operand o = decode_operand(in, od, pc);
    // A cmpsel uniform source of type 111 reads the uniform with index bit 8
    // set (decode_operand, the interpreter and the translator use it), but
    // applegpu's text drops that bit: print its text, keep the full index in
    // the raw form so that one still assembles to the same bytes.
    if (use_aliases && od.kind == Kind::CmpselSrc && in.f(od.name + "t") == 7 && o.is_ureg())
      o.n &= o.type == OpType::UReg32 ? 0x7F : 0xFF;
    ops.push_back(o);
  }
  std::vector<std::string> txt;
  for (const Operand& o : ops) txt.push_back(operand_text(o));

  // Mnemonic variants and aliases, as applegpu derives them.
  if (d.name == "iadd" && in.f("N")) mnem = "isub";
  if (d.name == "imadd" && in.f("N")) mnem = "imsub";
  if (d.has_saturate()) {
    if (in.f("S")) mnem += ".sat";
  }
  if (d.name == "bitop" && use_aliases) {
    const std::string& tt = txt[0];
    if (const char* a = bitop_binary_alias(tt)) {
      mnem = a;
      txt.erase(txt.begin());
    } else if (txt[3] == "0" && bitop_unary_alias(tt)) {
      mnem = bitop_unary_alias(tt);
      txt = {txt[1], txt[2]};
    } else if (tt == "0011" || tt == "1100") {
      mnem = "bitop_mov_a";
    }
  }
  if (use_aliases && d.name == "if_fcmp" && txt[1] == "eq" && txt[2] == "0.0" && txt[3] == "0.0") {
    if (txt[4] == "0") {
      mnem = "update_exec";
      txt = {txt[0]};
    } else {
      mnem = "push_exec";
      txt = {txt[0], txt[4]};
    }
  }
  if (d.name == "TODO.ld/st_tile" && use_aliases) {
    mnem = in.f("load") ? "ld_tile" : "st_tile";
    txt.erase(txt.begin());
  }
  if (d.name == "map" && use_aliases) {
    // op 0/1 print as unmap/map; other values keep the raw form.
    if (txt[0] == "map" || txt[0] == "unmap") {
      mnem = txt[0];
      txt.erase(txt.begin());
    } else {
      mnem = "TODO.map";
    }
  }
  std::string out = mnem;
  bool first = true;
  for (const std::string& t : txt) {
    if (t.empty()) continue;
    out += first ? " " : ", ";
    out += t;
    first = false;
  }
  return out;
}

bool disassemble_buffer(const uint8_t* p, size_t n, bool raw, std::string& out, fe::Diagnostic& err) {
  size_t pc = 0;
  bool skipping = false;
  char buf[64];
  while (pc < n) {
    // applegpu skips zero padding: a zero 32-bit word starts a skip of zero half-words.
    const size_t left = n - pc;
    uint32_t w32 = 0;
    for (size_t i = 0; i < 4 && i < left; ++i) w32 |= uint32_t(p[pc + i]) << (8 * i);
    if (!skipping && w32 == 0) {
      if (!raw) out += "\n";
      skipping = true;
    }
    if (skipping) {
      if ((w32 & 0xFFFF) == 0) {
        pc += 2;
        continue;
      }
      skipping = false;
    }
    Insn in;
    if (!decode(p + pc, left, pc, in, err)) return false;
    const std::string text = disassemble(in, pc);
    if (raw) {
      out += text;
    } else {
      std::snprintf(buf, sizeof buf, "%4zx: ", pc);
      out += buf;
      std::string hex;
      for (unsigned i = 0; i < in.size; ++i) {
        std::snprintf(buf, sizeof buf, "%02x", p[pc + i]);
        hex += buf;
      }
      while (hex.size() < 20) hex += ' ';
      out += hex + " " + text;
    }
    out += "\n";
    pc += in.size;
    if (in.desc->name == "stop") break;
  }
  return true;
}

}  // namespace gpurc::g13
