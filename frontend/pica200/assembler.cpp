#include "frontend/pica200/assembler.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <list>
#include <map>
#include <optional>
#include <stdexcept>
#include <vector>

#include "frontend/pica200/encoding.h"

namespace gpurc::pica {
namespace {

// Register numbers as picasso counts them: o/v 0x00-0x0F (one space: the
// destination field reads it as o, a source as v), r 0x10-0x1F, c 0x20-0x7F,
// i 0x80-0x87, b 0x88-0x97.
constexpr int kR = 0x10, kC = 0x20, kI = 0x80, kB = 0x88, kEndB = 0x98;
constexpr unsigned kIdentitySrc = kIdentitySelector << 1;  // 9-bit source field: negate | selector << 1
constexpr size_t kMaxVertexWords = 512;                      // vertex shader code memory
constexpr int kMaxStack = 32;

struct AsmError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
[[noreturn]] void fail(const std::string& m) { throw AsmError(m); }

std::string trim(const std::string& s) {
  size_t a = 0, b = s.size();
  while (a < b && std::isspace((unsigned char)s[a])) ++a;
  while (b > a && std::isspace((unsigned char)s[b - 1])) --b;
  return s.substr(a, b - a);
}
std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower((unsigned char)c));
  return s;
}
bool ieq(const std::string& a, const char* b) { return lower(a) == b; }
// picasso's identifiers: letters, '_', '$', digits after the first character.
bool valid_ident(const std::string& s) {
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (!(std::isalpha((unsigned char)c) || c == '_' || c == '$' || (i > 0 && std::isdigit((unsigned char)c))))
      return false;
  }
  return true;
}
bool is_reg_letter(char c) { return std::strchr("ovrcib", std::tolower((unsigned char)c)) && c; }

// Argument reader with picasso's tokenizer semantics: a piece up to the next
// delimiter; none once the rest is empty.
class Args {
 public:
  explicit Args(std::string s) : s_(std::move(s)) {}
  std::optional<std::string> raw(const char* delims) {
    if (pos_ >= s_.size()) return std::nullopt;
    size_t p = s_.find_first_of(delims, pos_);
    if (p == std::string::npos) p = s_.size();
    std::string r = s_.substr(pos_, p - pos_);
    pos_ = p < s_.size() ? p + 1 : s_.size();
    return r;
  }
  std::optional<std::string> next() {
    auto r = raw(",");
    if (r) return trim(*r);
    return r;
  }
  std::optional<std::string> next_space() {
    auto r = raw(" \t");
    if (!r) return r;
    while (pos_ < s_.size() && std::isspace((unsigned char)s_[pos_])) ++pos_;
    return trim(*r);
  }
  std::optional<std::string> next_paren() {
    auto r = raw("(");
    if (r) return trim(*r);
    return r;
  }
  std::string rest() const { return pos_ < s_.size() ? s_.substr(pos_) : std::string(); }
  std::string need() {
    auto r = next();
    if (!r) fail("missing parameter");
    return *r;
  }
  std::string need_space() {
    auto r = next_space();
    if (!r) fail("missing parameter");
    return *r;
  }
  void done() {
    if (next()) fail("too many parameters");
  }

 private:
  std::string s_;
  size_t pos_ = 0;
};

// picasso's float24 conversion: the mantissa is truncated, underflow flushes
// to a signed zero, overflow (and NaN) saturates to infinity.
uint32_t f32_to_f24_truncating(float f) {
  uint32_t i;
  std::memcpy(&i, &f, 4);
  uint32_t mantissa = (i & 0x7FFFFF) >> 7;
  int32_t exponent = int32_t((i >> 23) & 0xFF) - 127 + 63;
  uint32_t sign = i >> 31;
  if (exponent < 0) return sign << 23;
  if (exponent > 0x7F) return (sign << 23) | (0x7Fu << 16);
  return (sign << 23) | (uint32_t(exponent) << 16) | mantissa;
}

struct UniformPool {  // picasso's allocator: globals from the bottom, constants from the top
  int start = 0, end = 0, bound = 0, top = 0;
  void reinit(int s, int e) { start = s; end = bound = top = e; }
  void clear_local() { end = top; }
  int alloc_global(int n) {
    if (start + n > bound) return -1;
    int r = start;
    start += n;
    return r;
  }
  int alloc_local(int n) {
    int p = end - n;
    if (p < start) return -1;
    bound = std::min(bound, p);
    end = p;
    return p;
  }
};
struct PoolSet {
  UniformPool f, i, b;
  PoolSet() { f.reinit(kC, kI); i.reinit(kI, 0x84); b.reinit(kB, kEndB); }
  void for_gsh(int first_free) { f.reinit(first_free, kI); i.reinit(kI, 0x84); b.reinit(kB, 0x97); }
  void clear_local() { f.clear_local(); i.clear_local(); b.clear_local(); }
};

enum class UType { Bool = 0, IVec = 1, FVec = 2 };
struct Uniform {
  std::string name;
  int pos = 0, size = 1;
  UType type = UType::FVec;
};
struct Constant {
  UType type = UType::FVec;
  int reg = 0;  // picasso numbering
  std::array<uint32_t, 4> value{};
};

struct DvleData {
  std::string entry = "main", entry_end;  // entry_end: the `.entry start end` extension
  bool two_symbol_entry = false, nodvle = false, geo = false, compat_geo = false, merge = false;
  bool loose_code = false;           // instructions outside any .proc were written
  bool loose_code_allowed = false;   // `.loose_code` (extension): picasso rejects such instructions
  uint16_t input_mask = 0, output_mask = 0;
  uint8_t gsh_type = 0, gsh_fixed_start = 0, gsh_variable_num = 0, gsh_fixed_num = 0;
  std::vector<Uniform> uniforms;
  std::vector<Constant> constants;
  std::vector<ShbinOutput> outputs;
  uint64_t output_used = 0;
  bool uses_gsh_space() const { return geo && !compat_geo; }
  int max_output() const { return geo ? 7 : 16; }
};

enum class Block { Proc, For, If, Array };
struct StackEntry {
  Block type;
  size_t pos;
  std::string name;     // Proc
  size_t else_pos = 0;  // If: 0 = no .else yet
};

struct Reloc {
  size_t word;
  std::string name;
  std::string file;
  int line;
  bool proc_size;  // CALL-like picasso form: target and count from the procedure
  bool explicit_form;  // extension: label or procedure, count kept
};

struct Operand {
  int reg = 0;
  unsigned sw = kIdentitySrc;  // negate | selector << 1
  int idx = 0;
};

class Assembler {
 public:
  Assembler(const AsmOptions& opt, std::vector<std::string>* warnings) : opt_(opt), warnings_(warnings) {}

  void source(const AsmSource& src) {
    start_file(src.name);
    std::string text = src.text;
    size_t p = 0;
    int next_incr = 0;
    line_ = 1;
    bool first = true;
    while (p <= text.size()) {
      if (!first) line_ += next_incr;
      first = false;
      size_t nl = text.find('\n', p);
      bool last = nl == std::string::npos;
      if (last) nl = text.size();
      std::string line = text.substr(p, nl - p);
      next_incr = last ? 0 : 1;
      p = nl + 1;
      line_directive_ = false;
      process_line(line);
      if (line_directive_) next_incr = 0;
      if (last) break;
    }
    end_file();
  }

  void finish(Shbin& out) {
    for (const Reloc& r : proc_relocs_) {
      file_ = r.file;
      line_ = r.line;
      auto it = procs_.find(r.name);
      if (it == procs_.end()) fail("procedure '" + r.name + "' is undefined");
      uint32_t& w = code_[r.word];
      if (r.explicit_form) {
        w = (w & ~(0xFFFu << 10)) | uint32_t(it->second.first) << 10;
      } else {
        w &= ~0x3FFFFFu;
        w |= uint32_t(it->second.second) | uint32_t(it->second.first) << 10;
      }
    }
    if (total_dvles_ == 0) fail("no DVLEs can be generated from the given input file(s)");
    out = Shbin{};
    out.code = code_;
    for (int i = 0; i < ndesc_; ++i) out.descs.push_back(descs_[size_t(i)]);
    for (DvleFile& df : dvles_) {
      DvleData& d = df.d;
      if (d.nodvle) continue;
      file_ = df.file;
      line_ = 1;
      Dvle v;
      auto it = procs_.find(d.entry);
      if (d.two_symbol_entry) {
        v.main_offset = uint32_t(symbol_address(df, d.entry));
        v.endmain_offset = uint32_t(symbol_address(df, d.entry_end));
      } else if (it != procs_.end()) {
        v.main_offset = uint32_t(it->second.first);
        v.endmain_offset = uint32_t(it->second.first + it->second.second);
      } else if (d.loose_code) {
        v.main_offset = 0;
        v.endmain_offset = uint32_t(code_.size());
      } else {
        fail("entrypoint '" + d.entry + "' is undefined");
      }
      v.is_geometry = d.geo ? 1 : 0;
      v.merge_outmaps = d.merge ? 1 : 0;
      v.input_mask = d.input_mask;
      v.output_mask = d.output_mask;
      v.gs_mode = d.gsh_type;
      v.gs_float_start = d.gsh_fixed_start;
      v.gs_fully_defined = d.gsh_variable_num;
      v.gs_vertex_count = d.gsh_fixed_num;
      for (const Constant& c : d.constants) {
        ShbinConstant k;
        k.kind = ConstKind(int(c.type));
        k.reg = uint16_t(c.reg - (c.type == UType::FVec ? kC : c.type == UType::IVec ? kI : kB));
        k.value = c.value;
        v.constants.push_back(k);
      }
      v.outputs = d.outputs;
      std::vector<Uniform> us = d.uniforms;
      std::sort(us.begin(), us.end(), [](const Uniform& a, const Uniform& b) { return a.pos < b.pos; });
      for (const Uniform& u : us) {
        // The file's numbering: v 0x00-0x0F, then c from 0x10 (libctru subtracts 0x10 again).
        int pos = u.pos >= kC ? u.pos - 0x10 : u.pos;
        std::string name = u.name;
        std::replace(name.begin(), name.end(), '$', '.');
        v.uniforms.push_back({name, uint16_t(pos), uint16_t(pos + u.size - 1)});
      }
      out.dvles.push_back(std::move(v));
    }
  }

  std::string where() const {
    if (file_.empty()) return "line " + std::to_string(line_) + ": ";
    return file_ + ":" + std::to_string(line_) + ": ";
  }

 private:
  struct DvleFile {
    DvleData d;
    std::string file;
    std::map<std::string, size_t> labels;  // the file's labels, for `.entry start end`
  };

  AsmOptions opt_;
  std::vector<std::string>* warnings_;
  // Shared by every source (one DVLP).
  std::vector<uint32_t> code_;
  std::array<uint32_t, 128> descs_{}, desc_masks_{};
  int ndesc_ = 0;
  uint32_t mad_descs_ = 0;
  std::map<std::string, std::pair<size_t, size_t>> procs_;
  std::vector<Reloc> proc_relocs_;
  std::list<DvleFile> dvles_;
  int total_dvles_ = 0;
  std::vector<Uniform> globals_;
  PoolSet pools_[2];  // [0] shared space, [1] geometry-shader space
  bool last_was_end_ = false;
  // Per source file.
  std::string file_;
  int line_ = 0;
  bool line_directive_ = false;
  std::map<std::string, size_t> labels_;
  std::vector<Reloc> label_relocs_;
  std::map<std::string, int> aliases_;  // reg | source field << 8
  DvleFile* cur_ = nullptr;
  std::vector<StackEntry> stack_;
  std::vector<Constant> array_;
  int array_size_ = -1;
  std::string array_name_;

  void warn(const std::string& m) {
    if (warnings_) warnings_->push_back(where() + "warning: " + m);
  }

  void start_file(const std::string& name) {
    file_ = name;
    pools_[0].clear_local();
    labels_.clear();
    label_relocs_.clear();
    aliases_.clear();
    cur_ = nullptr;
  }
  void end_file() {
    if (!stack_.empty()) fail("unclosed block(s)");
    for (const Reloc& r : label_relocs_) {
      line_ = r.line;
      auto l = labels_.find(r.name);
      if (l == labels_.end()) {
        if (r.explicit_form && procs_.count(r.name)) {
          uint32_t& w = code_[r.word];
          w = (w & ~(0xFFFu << 10)) | uint32_t(procs_[r.name].first) << 10;
          continue;
        }
        if (r.explicit_form) {  // a procedure defined in a later file
          proc_relocs_.push_back(r);
          continue;
        }
        fail("label '" + r.name + "' is undefined");
      }
      uint32_t& w = code_[r.word];
      w = (w & ~(0xFFFu << 10)) | uint32_t(l->second) << 10;
    }
    for (DvleFile& df : dvles_)
      if (df.file == file_ && df.labels.empty()) df.labels = labels_;
  }

  size_t symbol_address(const DvleFile& df, const std::string& n) {
    if (auto p = procs_.find(n); p != procs_.end()) return p->second.first;
    if (auto l = df.labels.find(n); l != df.labels.end()) return l->second;
    if (auto l = labels_.find(n); l != labels_.end()) return l->second;
    fail("entry symbol '" + n + "' is undefined");
  }

  DvleData& dvle() {
    if (!cur_) {
      dvles_.push_back(DvleFile{DvleData{}, file_, {}});
      cur_ = &dvles_.back();
      ++total_dvles_;
    }
    return cur_->d;
  }

  // ------------------------------------------------------------------ lines
  void process_line(std::string line) {
    if (size_t sc = line.find(';'); sc != std::string::npos) line.resize(sc);
    line = trim(line);
    for (;;) {
      size_t colon = line.find(':');
      if (colon == std::string::npos) break;
      std::string label = line.substr(0, colon);
      line = trim(line.substr(colon + 1));
      if (!valid_ident(label)) fail("invalid label name: " + label);
      if (!labels_.emplace(label, code_.size()).second) fail("duplicate label: " + label);
    }
    if (line.empty()) return;
    if (line[0] == '#') {  // # line "file"
      std::string t = trim(line.substr(1));
      size_t sp = t.find_first_of(" \t");
      std::string num = t.substr(0, sp);
      line_ = std::atoi(num.c_str());
      line_directive_ = true;
      std::string f = sp == std::string::npos ? std::string() : trim(t.substr(sp + 1));
      if (!f.empty() && f[0] == '"') {
        f = f.substr(1);
        if (!f.empty()) f.pop_back();
      }
      file_ = f;
      return;
    }
    size_t sp = line.find_first_of(" \t");
    std::string tok = line.substr(0, sp);
    std::string rest;
    if (sp != std::string::npos) {
      size_t r = sp + 1;
      while (r < line.size() && std::isspace((unsigned char)line[r])) ++r;
      rest = line.substr(r);
    }
    Args args(rest);
    if (tok[0] == '.') return directive(lower(tok.substr(1)), args);
    last_was_end_ = false;
    if (!dvle().geo && code_.size() > kMaxVertexWords)
      fail("instruction outside vertex shader code memory (max " + std::to_string(kMaxVertexWords) +
           " instructions, currently " + std::to_string(code_.size()) + ")");
    if (stack_.empty()) {
      // picasso: "instruction outside block". Only the `.loose_code`
      // extension (which the disassembler writes) accepts such code.
      if (!dvle().loose_code_allowed)
        fail("instruction outside a .proc block: " + tok +
             " (picasso rejects it; the directive .loose_code accepts it as a gpurc extension)");
      dvle().loose_code = true;
    }
    if (code_.size() >= 4096) fail("program longer than 4096 words");
    instruction(tok, args);
  }

  // -------------------------------------------------------------- registers
  static int parse_int(const std::string& t, long long lo, long long hi) {
    const char* s = t.c_str();
    char* end = nullptr;
    long long v = std::strtoll(s, &end, 0);
    if (end == s) fail("invalid value: " + t);
    if (v < lo || v > hi)
      fail("value out of range (" + std::to_string(lo) + ".." + std::to_string(hi) + "): " + std::to_string(v));
    return int(v);
  }

  static int parse_swizzle(const std::string& b) {
    int out = 0, q = 0;
    size_t i;
    for (i = 0; i < b.size() && i < 4; ++i) {
      switch (std::tolower((unsigned char)b[i])) {
        case 'x': case 'r': case 's': q = 0; break;
        case 'y': case 'g': case 't': q = 1; break;
        case 'z': case 'b': case 'p': q = 2; break;
        case 'w': case 'a': case 'q': q = 3; break;
        default: return -1;
      }
      out |= q << (6 - 2 * int(i));
    }
    if (i < b.size()) return -1;
    for (size_t j = i; j < 4; ++j) out |= q << (6 - 2 * int(j));
    return out << 1;
  }

  int mask_from_swizzle(unsigned sw, bool reverse) {
    sw >>= 1;
    int out = 0, prev = 4;
    bool warned = false;
    for (int i = 0; i < 4; ++i) {
      int bit = int(sw >> (i * 2)) & 3;
      if (bit > prev && !warned) {
        warn("arbitrary swizzling has no effect for destination mask");
        warned = true;
      }
      prev = bit;
      if (reverse) bit = 3 - bit;
      out |= 1 << bit;
    }
    return out;
  }

  static int index_reg(const std::string& n) {
    std::string t = lower(trim(n));
    if (t == "a0" || t == "a0.x") return 1;
    if (t == "a1" || t == "a0.y") return 2;
    if (t == "a2" || t == "lcnt" || t == "al") return 3;
    return 0;
  }

  // picasso's register syntax: [-]name[[idx+off]][.swizzle]; name is an alias
  // or a register. `idx` null: index registers not allowed. `exact` lets
  // relative addressing reach any register and v15 be named.
  Operand parse_reg(std::string s, bool allow_idx, bool exact = false) {
    Operand op;
    unsigned neg = 0;
    if (!s.empty() && s[0] == '-') {
      neg = 1;
      s = s.substr(1);
    }
    int offset = 0;
    std::string name = s, after;
    size_t lb = s.find('[');
    if (lb != std::string::npos) {
      size_t rb = s.find(']', lb);
      if (rb == std::string::npos) fail("missing closing bracket: " + s);
      name = s.substr(0, lb);
      std::string inner = trim(s.substr(lb + 1, rb - lb - 1));
      after = s.substr(rb + 1);
      int t = index_reg(inner);
      if (t > 0) {
        if (!allow_idx) fail("index register not allowed here: " + inner);
        op.idx = t;
        inner.clear();
      } else if (size_t plus = inner.find('+'); plus != std::string::npos) {
        if (!allow_idx) fail("index register not allowed here: " + inner);
        std::string ir = trim(inner.substr(0, plus));
        op.idx = index_reg(ir);
        if (!op.idx) fail("invalid index register: " + ir);
        inner = trim(inner.substr(plus + 1));
      }
      offset = std::atoi(inner.c_str());
      if (offset < 0) fail("invalid register offset: " + inner);
    }
    unsigned sw = kIdentitySrc | neg;
    std::string& dotsrc = lb != std::string::npos ? after : name;
    if (size_t dot = dotsrc.find('.'); dot != std::string::npos) {
      std::string swz = dotsrc.substr(dot + 1);
      dotsrc = dotsrc.substr(0, dot);
      int v = parse_swizzle(swz);
      if (v < 0) fail("invalid swizzling mask: " + swz);
      sw = unsigned(v) | neg;
    }
    if (auto it = aliases_.find(name); it != aliases_.end()) {
      int x = it->second;
      op.reg = (x & 0xFF) + offset;
      sw ^= unsigned(x >> 8) & 1;
      unsigned asel = unsigned(x >> 9);
      unsigned r = sw & 1;
      for (int j = 0; j < 4; ++j) {
        unsigned comp = (sw >> (7 - j * 2)) & 3;
        comp = (asel >> (6 - comp * 2)) & 3;
        r |= (comp << (6 - 2 * j)) << 1;
      }
      op.sw = r;
      return op;
    }
    if (name.size() < 2 || !is_reg_letter(name[0]) || !std::isdigit((unsigned char)name[1]))
      fail("invalid register: " + name);
    int n = parse_int(name.substr(1), 0, 255);
    // picasso accepts an upper-case letter but then takes the number as it
    // stands (R1 is register 0x01, as v1/o1): kept for identical output.
    switch (name[0]) {
      case 'o':
        if (n >= (exact ? 16 : dvle().max_output())) fail("invalid output register: " + name);
        break;
      case 'v':
        // picasso accepts v0-v14 only.
        if (n >= (exact ? 0x10 : 0x0F)) fail("invalid input register: " + name);
        break;
      case 'r':
        n += kR;
        if (n >= kC) fail("invalid temporary register: " + name);
        break;
      case 'c':
        n += kC;
        if (n >= kI) fail("invalid floating-point vector uniform register: " + name);
        break;
      case 'i':
        n += kI;
        if (n >= kB) fail("invalid integer vector uniform register: " + name);
        break;
      case 'b':
        n += kB;
        if (n >= kEndB) fail("invalid boolean uniform register: " + name);
        break;
    }
    if (op.idx && (n < kC || n >= kI) && !exact)
      fail("index register not allowed with this kind of register: " + name + " (relative addressing reaches c registers only)");
    op.reg = n + offset;
    op.sw = sw;
    return op;
  }

  // Destination and its write mask; `.none` (mask 0) only in the exact form.
  Operand parse_dest(const std::string& text, bool exact, uint32_t& mask) {
    std::string t = text;
    if (exact && t.size() > 5 && lower(t.substr(t.size() - 5)) == ".none") {
      Operand o = parse_reg(t.substr(0, t.size() - 5), false, exact);
      mask = 0;
      return o;
    }
    Operand o = parse_reg(t, false, exact);
    mask = uint32_t(mask_from_swizzle(o.sw, true));
    return o;
  }
  static void check_dest(const Operand& o, const std::string& n) {
    if (o.reg < 0 || o.reg >= kC) fail("invalid destination register: " + n);
  }
  static void check_wide(const Operand& o, const std::string& n, int which) {
    if (o.reg < 0 || o.reg >= kI) fail("invalid source" + std::to_string(which) + " register: " + n);
  }
  static void check_narrow(const Operand& o, const std::string& n, int which) {
    if (o.reg < 0 || o.reg >= kC)
      fail("invalid source" + std::to_string(which) + " register: " + n + " (a narrow operand: v or r only)");
  }
  static void check_no_idx(const Operand& o, int which) {
    if (o.idx > 0) fail("index register not allowed in source" + std::to_string(which));
  }
  static bool bad_inputs(int a, int b) { return a < kR && b < kR && a != b; }

  // -------------------------------------------------------- descriptors
  // picasso's allocation: reuse the first descriptor agreeing on the bits both
  // uses read (merging the new bits in), else append.
  int find_or_add_desc(Op base, uint32_t desc) {
    uint32_t mask = desc_used_bits(base, desc);
    for (int i = 0; i < ndesc_; ++i) {
      uint32_t common = mask & desc_masks_[size_t(i)];
      if ((desc & common) == (descs_[size_t(i)] & common)) {
        descs_[size_t(i)] = (descs_[size_t(i)] & ~mask) | (desc & mask);
        desc_masks_[size_t(i)] |= mask;
        return i;
      }
    }
    if (ndesc_ == 128) fail("too many operand descriptors (limit is 128)");
    descs_[size_t(ndesc_)] = desc;
    desc_masks_[size_t(ndesc_)] = mask;
    return ndesc_++;
  }

  // MAD reaches only descriptors 0-31: move the one found to a free slot below 32.
  int mad_desc(int d) {
    if (d >= 32) {
      int which = 0;
      while (which < 32 && (mad_descs_ & (1u << which))) ++which;
      if (which == 32) fail("operand descriptor allocation error (no slot below 32 left for mad)");
      std::swap(descs_[size_t(which)], descs_[size_t(d)]);
      std::swap(desc_masks_[size_t(which)], desc_masks_[size_t(d)]);
      for (uint32_t& w : code_) {
        uint32_t opc = w >> 26;
        if (opc < 0x20 || (opc & ~1u) == 0x2E) {
          uint32_t cur = w & 0x7F;
          if (cur == uint32_t(which)) cur = uint32_t(d);
          else if (cur == uint32_t(d)) cur = uint32_t(which);
          w = (w & ~0x7Fu) | cur;
        }
      }
      d = which;
    }
    mad_descs_ |= 1u << d;
    return d;
  }

  static uint32_t make_desc(uint32_t mask, uint32_t s1, uint32_t s2, uint32_t s3) {
    return mask | s1 << 4 | s2 << 13 | s3 << 22;
  }

  // ------------------------------------------------------------ padding NOPs
  void padding_nop() {
    if (opt_.auto_nop) code_.push_back(uint32_t(0x21) << 26);
    else warn("a padding NOP is required here");
  }
  static bool is_jump_or_call(uint32_t w) {
    uint32_t o = w >> 26;
    return o == 0x2C || o == 0x2D || o == 0x24 || o == 0x25 || o == 0x26;
  }

  // ------------------------------------------------------------ directives
  void push_stack(StackEntry e) {
    if (int(stack_.size()) == kMaxStack) fail("too many nested blocks");
    stack_.push_back(std::move(e));
  }

  void directive(const std::string& d, Args& a) {
    if (d == "proc") {
      std::string n = a.need();
      a.done();
      push_stack({Block::Proc, code_.size(), n});
      if (procs_.count(n)) fail("proc already exists: " + n);
    } else if (d == "else") {
      a.done();
      if (stack_.empty() || stack_.back().type != Block::If) fail(".else with unmatched IF");
      StackEntry& e = stack_.back();
      if (e.else_pos) fail("spurious .else");
      if (last_was_end_) {
        padding_nop();
        last_was_end_ = false;
      } else if (is_jump_or_call(code_.back()) || code_.size() - e.pos < 2) {
        padding_nop();
      }
      e.else_pos = code_.size();
      uint32_t& w = code_[e.pos];
      w = (w & ~(0xFFFu << 10)) | uint32_t(code_.size()) << 10;
    } else if (d == "end") {
      a.done();
      end_block();
    } else if (d == "alias") {
      std::string n = a.need_space(), r = a.need_space();
      a.done();
      if (!valid_ident(n)) fail("invalid alias name: " + n);
      if (n.size() >= 2 && is_reg_letter(n[0]) && std::isdigit((unsigned char)n[1])) fail("cannot redefine register " + n);
      Operand o = parse_reg(r, false);
      if (aliases_.count(n)) fail("identifier already used: " + n);
      aliases_[n] = o.reg | int(o.sw) << 8;
    } else if (d == "fvec" || d == "ivec" || d == "bool") {
      uniforms(d == "fvec" ? UType::FVec : d == "ivec" ? UType::IVec : UType::Bool, a);
    } else if (d == "constf" || d == "consti") {
      local_constant(d == "constf" ? UType::FVec : UType::IVec, a);
    } else if (d == "constfa") {
      constfa(a);
    } else if (d == "setf" || d == "seti") {
      set_constant(d == "setf" ? UType::FVec : UType::IVec, a);
    } else if (d == "setb") {
      DvleData& v = dvle();
      std::string n = a.need_space(), val = a.need_space();
      a.done();
      Operand o = parse_reg(n, false);
      if (o.reg < kB || o.reg >= kEndB) fail("invalid boolean uniform: " + n);
      std::string t = lower(val);
      bool b;
      if (t == "true" || t == "on" || t == "1") b = true;
      else if (t == "false" || t == "off" || t == "0") b = false;
      else fail("invalid bool value: " + val);
      if (v.constants.size() == 0x60) fail("too many local constants");
      Constant c;
      c.type = UType::Bool;
      c.reg = o.reg;
      c.value[0] = b;
      v.constants.push_back(c);
    } else if (d == "in") {
      input(a);
    } else if (d == "out") {
      output(a);
    } else if (d == "entry") {
      DvleData& v = dvle();
      std::string e = a.need_space();
      auto e2 = a.next_space();
      a.done();
      if (!valid_ident(e)) fail("invalid identifier: " + e);
      v.entry = e;
      if (e2 && !e2->empty()) {  // extension: start and end symbols
        if (!valid_ident(*e2)) fail("invalid identifier: " + *e2);
        v.two_symbol_entry = true;
        v.entry_end = *e2;
      }
    } else if (d == "nodvle") {
      DvleData& v = dvle();
      a.done();
      if (!v.nodvle) {
        v.nodvle = true;
        --total_dvles_;
      }
    } else if (d == "gsh") {
      gsh(a);
    } else if (d == "dvle") {  // extension: the next DVLE (a new file's state, labels kept)
      a.done();
      auto labels = labels_;
      auto relocs = label_relocs_;
      std::string f = file_;
      int line = line_;
      if (!stack_.empty()) fail(".dvle inside a block");
      start_file(f);
      labels_ = labels;
      label_relocs_ = relocs;
      line_ = line;
    } else if (d == "file") {  // extension: a new source file (picasso's next input)
      std::string n = trim(a.rest());
      if (!n.empty() && n.front() == '"' && n.back() == '"' && n.size() >= 2) n = n.substr(1, n.size() - 2);
      end_file();
      start_file(n);
      line_ = 0;
    } else if (d == "loose_code") {  // extension: instructions outside .proc from here on (this DVLE)
      a.done();
      dvle().loose_code_allowed = true;
    } else if (d == "merge_outmaps") {  // extension
      a.done();
      dvle().merge = true;
    } else {
      fail("invalid instruction: ." + d);
    }
  }

  void end_block() {
    if (stack_.empty()) fail(".end with unmatched block");
    StackEntry e = stack_.back();
    stack_.pop_back();
    if (e.type != Block::Array && last_was_end_) {
      padding_nop();
      last_was_end_ = false;
    } else if (e.type != Block::Array && !code_.empty()) {
      uint32_t last = code_.back();
      uint32_t lo = last >> 26;
      if (is_jump_or_call(last) || (e.type == Block::For && (lo == 0x20 || lo == 0x23)) ||
          code_.size() - e.pos < (e.type != Block::Proc ? 2u : 1u))
        padding_nop();
    }
    size_t cur = code_.size();
    switch (e.type) {
      case Block::Proc: procs_.emplace(e.name, std::make_pair(e.pos, cur - e.pos)); break;
      case Block::For: {
        uint32_t& w = code_[e.pos];
        w = (w & ~(0xFFFu << 10)) | uint32_t(cur - 1) << 10;
        last_was_end_ = true;
        break;
      }
      case Block::If: {
        uint32_t& w = code_[e.pos];
        if (!e.else_pos) w = (w & ~(0xFFFu << 10)) | uint32_t(cur) << 10;
        else w = (w & ~0x3FFu) | uint32_t(cur - e.else_pos);
        last_was_end_ = true;
        break;
      }
      case Block::Array: end_array(); break;
    }
  }

  PoolSet& pools() { return pools_[dvle().uses_gsh_space() ? 1 : 0]; }
  UniformPool& pool(UType t) {
    PoolSet& p = pools();
    return t == UType::FVec ? p.f : t == UType::IVec ? p.i : p.b;
  }

  void uniforms(UType type, Args& a) {
    DvleData& v = dvle();
    UniformPool& pl = pool(type);
    bool shared = !v.uses_gsh_space();
    while (auto arg = a.next()) {
      std::string name = *arg;
      int size = 1;
      if (size_t lb = name.find('['); lb != std::string::npos) {
        size_t rb = name.find(']', lb);
        if (rb == std::string::npos) fail("missing closing bracket: " + name);
        std::string inner = trim(name.substr(lb + 1, rb - lb - 1));
        std::string tail = trim(name.substr(rb + 1));
        size = std::atoi(inner.c_str());
        name = name.substr(0, lb);
        if (size < 1) fail("invalid uniform size: " + name + "[" + inner + "]");
        if (!tail.empty()) warn("'" + tail + "' after " + name + "[" + inner + "] is ignored (picasso allocates uniforms itself)");
      }
      if (!valid_ident(name)) fail("invalid uniform name: " + name);
      if (aliases_.count(name)) fail("identifier already used: " + name);
      int pos = -1;
      if (shared)
        for (const Uniform& u : globals_)
          if (u.name == name) {
            if (u.type != type) fail("mismatched uniform type: " + name);
            if (u.size != size)
              fail("uniform '" + name + "' previously declared as having size " + std::to_string(u.size));
            pos = u.pos;
            break;
          }
      if (pos < 0) {
        if (globals_.size() == 0x60) fail("too many global uniforms: " + name);
        pos = pl.alloc_global(size);
        if (pos < 0) fail("not enough uniform space: " + name + "[" + std::to_string(size) + "]");
      }
      if (shared) globals_.push_back({name, pos, size, type});
      if (name[0] != '_') {
        if (v.uniforms.size() == 0x60) fail("too many referenced uniforms: " + name);
        v.uniforms.push_back({name, pos, size, type});
      }
      aliases_[name] = pos | int(kIdentitySrc) << 8;
    }
  }

  // atof/atoi as picasso reads numbers: the longest prefix that is a number,
  // the rest ignored (with a warning: `1.0/128.0` is 1.0).
  float read_float(const std::string& t) {
    const char* s = t.c_str();
    char* end = nullptr;
    double v = std::strtod(s, &end);
    std::string tail = trim(std::string(end));
    if (end == s) warn("'" + t + "' is not a number: read as 0.0");
    else if (!tail.empty()) warn("only '" + trim(std::string(s, size_t(end - s))) + "' of '" + t + "' is read (expressions are not evaluated)");
    return float(v);
  }
  int read_int(const std::string& t) {
    const char* s = t.c_str();
    char* end = nullptr;
    long v = std::strtol(s, &end, 10);
    std::string tail = trim(std::string(end));
    if (end == s) warn("'" + t + "' is not a number: read as 0");
    else if (!tail.empty()) warn("only '" + trim(std::string(s, size_t(end - s))) + "' of '" + t + "' is read");
    return int(v);
  }

  // "name(x, y, z, w)" after the directive: name and four values.
  std::array<std::string, 4> four_values(Args& a, std::string& name) {
    auto n = a.next_paren();
    if (!n) fail("missing parameter");
    name = *n;
    std::array<std::string, 4> v;
    v[0] = a.need();
    v[1] = a.need();
    v[2] = a.need();
    std::string r = a.rest();
    size_t p = r.find(')');
    if (p == std::string::npos) fail("invalid syntax (expected '(x, y, z, w)')");
    v[3] = trim(r.substr(0, p));
    return v;
  }
  Constant constant_values(UType type, const std::array<std::string, 4>& v) {
    Constant c;
    c.type = type;
    for (size_t i = 0; i < 4; ++i)
      c.value[i] = type == UType::FVec ? f32_to_f24_truncating(read_float(v[i])) : uint32_t(read_int(v[i]) & 0xFF);
    return c;
  }

  void local_constant(UType type, Args& a) {
    DvleData& v = dvle();
    UniformPool& pl = pool(type);
    std::string name;
    auto vals = four_values(a, name);
    if (aliases_.count(name)) fail("identifier already used: " + name);
    int pos = pl.alloc_local(1);
    if (pos < 0) fail("not enough space for local constant '" + name + "'");
    if (v.constants.size() == 0x60) fail("too many local constants");
    Constant c = constant_values(type, vals);
    c.reg = pos;
    v.constants.push_back(c);
    aliases_[name] = pos | int(kIdentitySrc) << 8;
  }

  void set_constant(UType type, Args& a) {
    DvleData& v = dvle();
    std::string name;
    auto vals = four_values(a, name);
    Operand o = parse_reg(name, false);
    if (type == UType::FVec && (o.reg < kC || o.reg >= kI)) fail("invalid floating point vector uniform: " + name);
    if (type == UType::IVec && (o.reg < kI || o.reg >= 0x84)) fail("invalid integer vector uniform: " + name);
    if (v.constants.size() == 0x60) fail("too many local constants");
    Constant c = constant_values(type, vals);
    c.reg = o.reg;
    v.constants.push_back(c);
  }

  void constfa(Args& a) {
    bool in_array = !stack_.empty() && stack_.back().type == Block::Array;
    if (!in_array) {
      std::string n = a.need();
      a.done();
      if (int(stack_.size()) == kMaxStack) fail("too many nested blocks");
      size_t lb = n.find('[');
      if (lb == std::string::npos) fail("missing opening bracket: " + n);
      size_t rb = n.find(']', lb);
      if (rb == std::string::npos) fail("missing closing bracket: " + n);
      std::string tail = trim(n.substr(rb + 1)), inner = trim(n.substr(lb + 1, rb - lb - 1));
      n = n.substr(0, lb);
      if (!tail.empty()) fail("garbage found: " + tail);
      array_size_ = -1;
      if (!inner.empty()) {
        array_size_ = std::atoi(inner.c_str());
        if (array_size_ <= 0) fail("invalid array size: " + n + "[" + inner + "]");
      }
      if (!valid_ident(n)) fail("invalid array name: " + n);
      array_name_ = n;
      array_.clear();
      stack_.push_back({Block::Array, 0, n});
    } else {
      if (array_size_ >= 0 && size_t(array_size_) == array_.size())
        fail("too many elements in the array, expected " + std::to_string(array_size_));
      std::string first = a.need();
      if (first.empty() || first[0] != '(') fail("invalid syntax (expected '.constfa (x, y, z, w)')");
      std::array<std::string, 4> v;
      v[0] = first.substr(1);
      v[1] = a.need();
      v[2] = a.need();
      std::string r = a.rest();
      size_t p = r.find(')');
      if (p == std::string::npos) fail("invalid syntax (expected '(x, y, z, w)')");
      v[3] = trim(r.substr(0, p));
      array_.push_back(constant_values(UType::FVec, v));
    }
  }

  void end_array() {
    DvleData& v = dvle();
    UniformPool& pl = pool(UType::FVec);
    if (aliases_.count(array_name_)) fail("identifier already used: " + array_name_);
    int size = int(array_.size());
    if (array_size_ >= 0)
      for (; size < array_size_; ++size) array_.push_back(Constant{});
    if (size == 0) fail("no elements have been specified in array '" + array_name_ + "'");
    int pos = pl.alloc_local(size);
    if (pos < 0) fail("not enough space for local constant array '" + array_name_ + "'");
    if (v.constants.size() + size_t(size) > 0x60) fail("too many local constants");
    for (int i = 0; i < size; ++i) {
      Constant c = array_[size_t(i)];
      c.type = UType::FVec;
      c.reg = pos + i;
      v.constants.push_back(c);
    }
    aliases_[array_name_] = pos | int(kIdentitySrc) << 8;
    array_.clear();
    array_size_ = -1;
  }

  void input(Args& a) {
    DvleData& v = dvle();
    std::string n = a.need_space();
    auto r = a.next_space();
    a.done();
    if (!valid_ident(n)) fail("invalid identifier: " + n);
    if (aliases_.count(n)) fail("identifier already used: " + n);
    int id = -1;
    if (r) {
      Operand o = parse_reg(*r, false);
      if (o.reg < 0 || o.reg >= 0x10) fail("invalid input register: " + *r);
      id = o.reg;
    } else {
      for (int i = 0; i < 16 && id < 0; ++i)
        if (!(v.input_mask & (1u << i))) id = i;
    }
    if (id < 0) fail("too many inputs");
    if (v.uniforms.size() == 0x60) fail("too many uniforms in DVLE");
    v.input_mask = uint16_t(v.input_mask | 1u << id);
    v.uniforms.push_back({n, id, 1, UType::FVec});
    aliases_[n] = id | int(kIdentitySrc) << 8;
  }

  void output(Args& a) {
    DvleData& v = dvle();
    std::string n = a.need_space(), type = a.need_space();
    auto reg = a.next_space();
    a.done();
    bool named = !(n == "-");
    if (named && !valid_ident(n)) fail("invalid identifier: " + n);
    int id = -1;
    unsigned sw = kIdentitySrc;
    if (reg) {
      Operand o = parse_reg(*reg, false);
      if (o.reg < 0 || o.reg >= v.max_output()) fail("invalid output register: " + *reg);
      id = o.reg;
      sw = o.sw;
    } else if (size_t dot = type.find('.'); dot != std::string::npos) {
      std::string m = type.substr(dot + 1);
      type = type.substr(0, dot);
      int s = parse_swizzle(m);
      if (s < 0) fail("invalid output mask: " + m);
      sw = unsigned(s);
    }
    int mask = mask_from_swizzle(sw, false);
    uint16_t sem;
    if (!parse_output_semantic(lower(type), sem)) fail("invalid output type: " + type);
    if (id < 0) {
      for (int i = 0; i < v.max_output() && id < 0; ++i)
        if (!(v.output_mask & (1u << i))) id = i;
    } else if (v.output_used & (uint64_t(mask) << (4 * id))) {
      fail("this output collides with another one previously defined");
    }
    if (id < 0 || v.outputs.size() == 16) fail("too many outputs");
    if (named && aliases_.count(n)) fail("identifier already used: " + n);
    if (id >= 7 && sem != kOutDummy) fail("this register (o" + std::to_string(id) + ") can only be a dummy output");
    v.outputs.push_back({sem, uint16_t(id), uint16_t(mask), 0});
    v.output_mask = uint16_t(v.output_mask | 1u << id);
    v.output_used |= uint64_t(mask) << (4 * id);
    if (named) aliases_[n] = id | int(kIdentitySrc) << 8;
    if (sem == kOutDummy && v.uses_gsh_space()) v.merge = true;
  }

  void gsh(Args& a) {
    DvleData& v = dvle();
    auto mode_text = a.next_space();
    if (!mode_text) {
      v.geo = true;
      v.compat_geo = true;
      return;
    }
    if (v.geo) fail(".gsh had already been used");
    if (!v.constants.empty() || !v.uniforms.empty() || v.output_mask)
      fail(".gsh must be used before any constant, uniform or output is declared");
    std::string m = lower(*mode_text);
    int mode = m == "point" ? 0 : (m == "variable" || m == "subdivision") ? 1 : (m == "fixed" || m == "particle") ? 2 : -1;
    if (mode < 0) fail("invalid geometry shader mode: " + *mode_text);
    v.geo = true;
    v.gsh_type = uint8_t(mode);
    std::string ff = a.need_space();
    Operand first = parse_reg(ff, false);
    if (first.reg < kC || first.reg >= kI) fail("invalid float uniform register: " + ff);
    pools_[1].for_gsh(first.reg);
    if (mode == 0) {
      a.done();
    } else if (mode == 1) {
      std::string n = a.need_space();
      a.done();
      v.gsh_variable_num = uint8_t(parse_int(n, 0, 255));
    } else {
      std::string st = a.need_space(), n = a.need_space();
      a.done();
      Operand start = parse_reg(st, false);
      int num = parse_int(n, 0, 255);
      if (start.reg < kC || start.reg >= kI) fail("invalid float uniform register: " + st);
      if (start.reg >= first.reg) fail("specified location overlaps uniform allocation pool: " + st);
      v.gsh_fixed_start = uint8_t(start.reg - kC);
      v.gsh_fixed_num = uint8_t(num);
    }
  }

  // ---------------------------------------------------------- instructions
  static bool numeric(const std::string& t) { return !t.empty() && std::isdigit((unsigned char)t[0]); }

  // Condition: bit 25 = refx, 24 = refy, 22-23 = operator. picasso starts
  // with both reference bits set, so a single-flag condition leaves the
  // other bit 1; the exact form leaves it 0.
  uint32_t condition(const std::string& text, bool exact) {
    uint32_t flags = 3u << 24;
    auto one = [&](std::string s, int& which) {
      int neg = 0;
      size_t i = 0;
      while (i < s.size() && s[i] == '!') { neg ^= 1; ++i; }
      s = s.substr(i);
      if (ieq(s, "cmp.x")) { which = 0; flags ^= uint32_t(neg) << 25; return; }
      if (ieq(s, "cmp.y")) { which = 1; flags ^= uint32_t(neg) << 24; return; }
      fail("invalid condition register: " + s);
    };
    size_t p = text.find_first_of("&|");
    int op1 = -1, op2 = -1;
    std::string first = text;
    if (p != std::string::npos) {
      char type = text[p];
      std::string second = text.substr(p + 1);
      if (!second.empty() && second[0] == type) second = second.substr(1);
      first = trim(text.substr(0, p));
      if (type == '&') flags |= 1u << 22;
      one(trim(second), op2);
    }
    one(first, op1);
    if (op1 == op2) fail("condition register checked twice");
    if (op2 < 0) {
      flags |= uint32_t(op1 + 2) << 22;
      if (exact) flags &= ~(1u << (op1 == 0 ? 24 : 25));
    }
    return flags;
  }

  int bool_reg(const std::string& t) {
    Operand o = parse_reg(t, false);
    if (o.reg < kB || o.reg >= kEndB) fail("invalid boolean uniform: " + t);
    return o.reg - kB;
  }
  void check_target(const std::string& t) {
    if (!valid_ident(t)) fail("invalid target: " + t);
  }

  // Explicit (extension) target: number, or label/procedure resolved later.
  void explicit_target(const std::string& t, uint32_t& w) {
    if (numeric(t)) {
      w |= uint32_t(parse_int(t, 0, 4095)) << 10;
      return;
    }
    check_target(t);
    label_relocs_.push_back({code_.size(), t, file_, line_, false, true});
  }
  static uint32_t count(const std::string& t) { return uint32_t(parse_int(t, 0, 255)); }

  std::vector<std::string> all_args(Args& a) {
    std::vector<std::string> v;
    while (auto x = a.next()) v.push_back(*x);
    return v;
  }

  void instruction(std::string mn, Args& a) {
    bool exact = !mn.empty() && mn.back() == '!';
    if (exact) mn.pop_back();
    mn = lower(mn);
    std::vector<std::string> ops = all_args(a);
    std::optional<int> raw_desc;  // extension: desc[N]
    if (!ops.empty() && lower(ops.back()).rfind("desc[", 0) == 0) {
      const std::string& t = ops.back();
      if (t.back() != ']') fail("bad desc[N]");
      raw_desc = parse_int(t.substr(5, t.size() - 6), 0, 127);
      ops.pop_back();
    }
    auto need = [&](size_t n) {
      if (ops.size() < n) fail("missing parameter");
      if (ops.size() > n) fail("too many parameters");
    };
    auto finish_desc = [&](Op base, uint32_t desc, bool mad) -> uint32_t {
      if (raw_desc) {
        if (mad && *raw_desc > 31) fail("mad descriptor index must be below 32");
        return uint32_t(*raw_desc);
      }
      int d = find_or_add_desc(base, desc);
      return uint32_t(mad ? mad_desc(d) : d);
    };
    auto plain = [&](const Operand& o) {
      if (raw_desc && o.sw != kIdentitySrc) fail("desc[N] operands cannot carry swizzles or negation");
    };
    const OpInfo* oi = find_op(mn);
    if (mn == "for") oi = find_op("loop");
    // `loop iN, target` is the explicit (extension) form; picasso's loop is `for iN ... .end`.
    if (mn == "loop" && ops.size() != 2) fail("invalid instruction: loop (picasso writes `for iN` ... `.end`)");
    if (!oi) fail("invalid instruction: " + mn);
    Op op = oi->op;
    // picasso's mnemonics name the operation; the inverted form is chosen by the operands.
    Op base = op == Op::DPHI ? Op::DPH : op == Op::DSTI ? Op::DST : op == Op::SGEI ? Op::SGE
            : op == Op::SLTI ? Op::SLT : op == Op::MADI ? Op::MAD : op;
    bool invertible = base == Op::DPH || base == Op::DST || base == Op::SGE || base == Op::SLT || base == Op::MAD;
    uint32_t w = 0;
    switch (info(op).format) {
      case Format::F1:
      case Format::F1i: {
        need(3);
        uint32_t dm;
        Operand d = parse_dest(ops[0], exact, dm), s1 = parse_reg(ops[1], true, exact), s2 = parse_reg(ops[2], true, exact);
        check_dest(d, ops[0]);
        plain(s1);
        plain(s2);
        bool inverted = (exact && op != base) || (invertible && s1.reg < kC && s2.reg >= kC);
        if (!inverted) {
          check_wide(s1, ops[1], 1);
          check_narrow(s2, ops[2], 2);
          check_no_idx(s2, 2);
        } else {
          check_narrow(s1, ops[1], 1);
          check_no_idx(s1, 1);
          check_wide(s2, ops[2], 2);
        }
        if (!exact && bad_inputs(s1.reg, s2.reg)) fail("source operands must be different input registers (v0..v15)");
        uint32_t desc = finish_desc(base, make_desc(dm, s1.sw, s2.sw, 0), false);
        Op enc = inverted ? (base == Op::DPH ? Op::DPHI : base == Op::DST ? Op::DSTI : base == Op::SGE ? Op::SGEI : Op::SLTI) : base;
        if (!inverted)
          w = info(enc).opcode << 26 | desc | uint32_t(s2.reg) << 7 | uint32_t(s1.reg) << 12 | uint32_t(s1.idx) << 19 | uint32_t(d.reg) << 21;
        else
          w = info(enc).opcode << 26 | desc | uint32_t(s2.reg) << 7 | uint32_t(s1.reg) << 14 | uint32_t(s2.idx) << 19 | uint32_t(d.reg) << 21;
        break;
      }
      case Format::F1u: {
        need(2);
        uint32_t dm;
        Operand d = parse_dest(ops[0], exact, dm), s1 = parse_reg(ops[1], true, exact);
        check_dest(d, ops[0]);
        check_wide(s1, ops[1], 1);
        plain(s1);
        uint32_t desc = finish_desc(op, make_desc(dm, s1.sw, 0, 0), false);
        w = oi->opcode << 26 | desc | uint32_t(s1.reg) << 12 | uint32_t(s1.idx) << 19 | uint32_t(d.reg) << 21;
        break;
      }
      case Format::F1m: {  // mova a0|a0.x, a1|a0.y, a01|a0.xy
        if (ops.size() < 2) fail("mova needs a destination (a0, a1 or a01) and a source");
        need(2);
        std::string t = lower(ops[0]);
        uint32_t mask;
        if (t == "a0" || t == "a0.x") mask = 8;
        else if (t == "a1" || t == "a0.y") mask = 4;
        else if (t == "a01" || t == "a0.xy") mask = 12;
        else if (exact && t == "a0.none") mask = 0;
        else if (exact && t.rfind("a0.", 0) == 0 && parse_swizzle(t.substr(3)) >= 0)
          mask = uint32_t(mask_from_swizzle(unsigned(parse_swizzle(t.substr(3))), true));
        else fail("invalid destination register for mova: " + ops[0]);
        Operand s1 = parse_reg(ops[1], true, exact);
        check_wide(s1, ops[1], 1);
        plain(s1);
        uint32_t desc = finish_desc(op, make_desc(mask, s1.sw, 0, 0), false);
        w = oi->opcode << 26 | desc | uint32_t(s1.reg) << 12 | uint32_t(s1.idx) << 19;
        break;
      }
      case Format::F1c: {
        need(4);
        Operand s1 = parse_reg(ops[0], true, exact);
        check_wide(s1, ops[0], 1);
        auto cmp = [&](const std::string& n) {
          static const char* names[] = {"eq", "ne", "lt", "le", "gt", "ge", "6", "7"};
          for (int i = 0; i < (exact ? 8 : 6); ++i)
            if (ieq(n, names[i])) return uint32_t(i);
          fail("invalid conditional operator: " + n);
        };
        uint32_t cx = cmp(ops[1]), cy = cmp(ops[2]);
        Operand s2 = parse_reg(ops[3], exact, exact);
        check_narrow(s2, ops[3], 2);
        if (exact) check_no_idx(s2, 2);
        plain(s1);
        plain(s2);
        uint32_t desc = finish_desc(op, make_desc(0, s1.sw, s2.sw, 0), false);
        w = oi->opcode << 27 | desc | uint32_t(s2.reg) << 7 | uint32_t(s1.reg) << 12 | uint32_t(s1.idx) << 19 | cy << 21 | cx << 24;
        break;
      }
      case Format::F5:
      case Format::F5i: {
        need(4);
        uint32_t dm;
        Operand d = parse_dest(ops[0], exact, dm), s1 = parse_reg(ops[1], exact, exact), s2 = parse_reg(ops[2], true, exact),
                s3 = parse_reg(ops[3], true, exact);
        check_dest(d, ops[0]);
        check_narrow(s1, ops[1], 1);
        if (exact) check_no_idx(s1, 1);
        plain(s1);
        plain(s2);
        plain(s3);
        bool inverted = (exact && op == Op::MADI) || (s2.reg < kC && (s3.reg >= kC || (s3.idx && !s2.idx)));
        if (!inverted) {
          check_wide(s2, ops[2], 2);
          check_narrow(s3, ops[3], 3);
          check_no_idx(s3, 3);
        } else {
          check_narrow(s2, ops[2], 2);
          check_wide(s3, ops[3], 3);
          check_no_idx(s2, 2);
        }
        if (!exact && (bad_inputs(s1.reg, s2.reg) || bad_inputs(s2.reg, s3.reg) || bad_inputs(s3.reg, s1.reg)))
          fail("source registers must be different input registers (v0..v15)");
        uint32_t desc = finish_desc(Op::MAD, make_desc(dm, s1.sw, s2.sw, s3.sw), true);
        if (!inverted)
          w = 0x38u << 26 | desc | uint32_t(s3.reg) << 5 | uint32_t(s2.reg) << 10 | uint32_t(s1.reg) << 17 | uint32_t(s2.idx) << 22 | uint32_t(d.reg) << 24;
        else
          w = 0x30u << 26 | desc | uint32_t(s3.reg) << 5 | uint32_t(s2.reg) << 12 | uint32_t(s1.reg) << 17 | uint32_t(s3.idx) << 22 | uint32_t(d.reg) << 24;
        break;
      }
      default:
        if (raw_desc) fail(mn + " has no operand descriptor");
        w = flow(op, ops, exact);
        break;
    }
    code_.push_back(w);
  }

  uint32_t flow(Op op, const std::vector<std::string>& ops, bool exact) {
    uint32_t w = info(op).opcode << 26;
    auto need = [&](size_t n) {
      if (ops.size() < n) fail("missing parameter");
      if (ops.size() > n) fail("too many parameters");
    };
    auto block = [&](Block b) { push_stack({b, code_.size(), ""}); };
    switch (op) {
      case Op::NOP: case Op::END: case Op::EMIT: case Op::BREAK: need(0); return w;
      case Op::SETEMIT: {
        if (ops.empty()) fail("missing parameter");
        if (ops.size() > 2) fail("too many parameters");
        int vtx = parse_int(ops[0], 0, exact ? 3 : 2);
        bool prim = false, inv = false;
        if (ops.size() == 2) {
          Args f(ops[1]);
          while (auto flag = f.next_space()) {
            if (ieq(*flag, "prim") || ieq(*flag, "primitive")) prim = true;
            else if (ieq(*flag, "inv") || ieq(*flag, "invert")) inv = true;
            else warn("unknown setemit flag: " + *flag + " (ignored, as picasso does)");
          }
        }
        DvleData& v = dvle();
        if (!v.geo) {
          v.geo = true;
          v.compat_geo = true;
        }
        return w | uint32_t(inv) << 22 | uint32_t(prim) << 23 | uint32_t(vtx) << 24;
      }
      case Op::CALL:
        if (ops.size() == 2) {  // extension: call target, count
          explicit_target(ops[0], w);
          return w | count(ops[1]);
        }
        need(1);
        check_target(ops[0]);
        proc_relocs_.push_back({code_.size(), ops[0], file_, line_, true, false});
        return w;
      case Op::LOOP: {
        if (ops.empty()) fail("missing parameter");
        if (ops.size() > 2) fail("too many parameters");
        int reg;
        if (exact || ops.size() == 2) {
          std::string t = lower(ops[0]);
          if (t.size() >= 2 && t[0] == 'i' && std::isdigit((unsigned char)t[1]) && !aliases_.count(ops[0])) reg = parse_int(t.substr(1), 0, 15);
          else {
            Operand o = parse_reg(ops[0], false);
            if (o.reg < kI || o.reg >= kB) fail("invalid integer vector uniform: " + ops[0]);
            reg = o.reg - kI;
          }
        } else {
          Operand o = parse_reg(ops[0], false);
          if (o.reg < kI || o.reg >= kB) fail("invalid integer vector uniform: " + ops[0]);
          reg = o.reg - kI;
        }
        w |= uint32_t(reg) << 22;
        if (ops.size() == 2) explicit_target(ops[1], w);  // extension: loop iN, lastInstruction
        else block(Block::For);
        return w;
      }
      case Op::BREAKC:
        need(1);
        return w | condition(ops[0], exact);
      case Op::CALLC:
      case Op::JMPC: {
        if (ops.empty()) fail("missing parameter");
        w |= condition(ops[0], exact);
        if (op == Op::CALLC && ops.size() == 3) {
          explicit_target(ops[1], w);
          return w | count(ops[2]);
        }
        need(2);
        if (op == Op::JMPC && numeric(ops[1])) {
          explicit_target(ops[1], w);
          return w;
        }
        check_target(ops[1]);
        if (op == Op::CALLC) proc_relocs_.push_back({code_.size(), ops[1], file_, line_, true, false});
        else label_relocs_.push_back({code_.size(), ops[1], file_, line_, false, false});
        return w;
      }
      case Op::IFC: {
        if (ops.empty()) fail("missing parameter");
        w |= condition(ops[0], exact);
        if (ops.size() == 3) {  // extension: ifc cond, target, count
          explicit_target(ops[1], w);
          return w | count(ops[2]);
        }
        need(1);
        block(Block::If);
        return w;
      }
      case Op::CALLU:
      case Op::IFU:
      case Op::JMPU: {
        if (ops.empty()) fail("missing parameter");
        std::string r = ops[0];
        uint32_t neg = 0;
        if (!r.empty() && r[0] == '!') {
          if (op != Op::JMPU) fail(std::string("inverting the condition is not supported by ") + (op == Op::CALLU ? "CALLU" : "IFU"));
          neg = 1;
          r = r.substr(1);
        }
        w |= uint32_t(bool_reg(r)) << 22 | neg;
        if (op == Op::IFU) {
          if (ops.size() == 3) {
            explicit_target(ops[1], w);
            return w | count(ops[2]);
          }
          need(1);
          block(Block::If);
          return w;
        }
        if (op == Op::CALLU && ops.size() == 3) {
          explicit_target(ops[1], w);
          return w | count(ops[2]);
        }
        need(2);
        if (op == Op::JMPU && numeric(ops[1])) {
          explicit_target(ops[1], w);
          return w;
        }
        check_target(ops[1]);
        if (op == Op::CALLU) proc_relocs_.push_back({code_.size(), ops[1], file_, line_, true, false});
        else label_relocs_.push_back({code_.size(), ops[1], file_, line_, false, false});
        return w;
      }
      default: fail("invalid instruction: " + std::string(info(op).name));
    }
  }
};

}  // namespace

bool assemble(const std::vector<AsmSource>& sources, const AsmOptions& opt, Shbin& out, std::string& err,
              std::vector<std::string>* warnings) {
  Assembler a(opt, warnings);
  try {
    for (const AsmSource& s : sources) a.source(s);
    a.finish(out);
  } catch (const AsmError& e) {
    err = a.where() + e.what();
    return false;
  }
  return true;
}

bool assemble(const std::string& text, Shbin& out, std::string& err) {
  return assemble({AsmSource{"", text}}, AsmOptions{}, out, err, nullptr);
}

}  // namespace gpurc::pica
