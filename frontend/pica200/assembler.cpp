#include "frontend/pica200/assembler.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <vector>

#include "frontend/pica200/encoding.h"
#include "ir/transc_pica.h"

namespace gpurc::pica {
namespace {

struct AsmError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
[[noreturn]] void fail(const std::string& m) { throw AsmError(m); }

std::string trim(std::string s) {
  size_t a = 0, b = s.size();
  while (a < b && std::isspace((unsigned char)s[a])) ++a;
  while (b > a && std::isspace((unsigned char)s[b - 1])) --b;
  return s.substr(a, b - a);
}
std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower((unsigned char)c));
  return s;
}
bool is_ident_start(char c) { return std::isalpha((unsigned char)c) || c == '_' || c == '$'; }
bool is_ident_char(char c) { return std::isalnum((unsigned char)c) || c == '_' || c == '$'; }
bool is_ident(const std::string& s) {
  if (s.empty() || !is_ident_start(s[0])) return false;
  for (char c : s)
    if (!is_ident_char(c)) return false;
  return true;
}

// Splits on top-level commas (not inside () or []).
std::vector<std::string> split_operands(const std::string& s) {
  std::vector<std::string> out;
  int depth = 0;
  std::string cur;
  for (char c : s) {
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(trim(cur));
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  if (!trim(cur).empty() || !out.empty()) out.push_back(trim(cur));
  return out;
}

long parse_int(const std::string& s) {
  std::string t = trim(s);
  if (t.empty()) fail("expected a number");
  char* end = nullptr;
  long v = std::strtol(t.c_str(), &end, 0);
  if (*end) fail("bad number '" + t + "'");
  return v;
}
float parse_float(const std::string& s) {
  std::string t = lower(trim(s));
  if (t.empty()) fail("expected a float");
  char* end = nullptr;
  float v = std::strtof(t.c_str(), &end);
  if (*end) fail("bad float '" + s + "'");
  return v;
}

// Register file letter and index, e.g. ('c', 12).
struct Reg {
  char file = 0;
  int index = 0;
};
std::optional<Reg> parse_reg_name(const std::string& s) {
  if (s.size() < 2 || !std::strchr("vorcib", s[0])) return std::nullopt;
  for (size_t i = 1; i < s.size(); ++i)
    if (!std::isdigit((unsigned char)s[i])) return std::nullopt;
  Reg r{s[0], std::atoi(s.c_str() + 1)};
  int limit = r.file == 'c' ? 96 : r.file == 'i' ? 4 : 16;
  if (r.index >= limit) fail("register " + s + " does not exist");
  return r;
}

int comp_index(char c) {
  switch (c) {
    case 'x': case 'r': case 's': return 0;
    case 'y': case 'g': case 't': return 1;
    case 'z': case 'b': case 'p': return 2;
    case 'w': case 'a': case 'q': return 3;
    default: return -1;
  }
}
// picasso swizzle: up to 4 letters, the last repeated.
std::array<uint8_t, 4> parse_swizzle(const std::string& s) {
  if (s.empty() || s.size() > 4) fail("bad swizzle '." + s + "'");
  std::array<uint8_t, 4> c{};
  for (size_t i = 0; i < 4; ++i) {
    int k = comp_index(s[std::min(i, s.size() - 1)]);
    if (k < 0) fail("bad swizzle '." + s + "'");
    c[i] = uint8_t(k);
  }
  return c;
}
uint8_t parse_mask(const std::string& s) {
  if (s == "none") return 0;
  if (s.empty() || s.size() > 4) fail("bad mask '." + s + "'");
  uint8_t m = 0;
  for (char ch : s) {
    int k = comp_index(ch);
    if (k < 0) fail("bad mask '." + s + "'");
    m |= uint8_t(8 >> k);
  }
  return m;
}

struct Alias {
  Reg reg;
  std::array<uint8_t, 4> sw{0, 1, 2, 3};
};

struct Operand {
  Reg reg;
  unsigned idx = 0;  // 0 none, 1 a0.x, 2 a0.y, 3 aL
  Swizzle sw;
  bool has_suffix = false;
  std::string suffix;  // text after the '.', for masks
};

struct Pending {  // a target to resolve after the whole text is read
  size_t word;
  std::string symbol;
  bool want_proc_size;  // CALL-like: num = size of the named procedure
  int line;
};

struct DvleBuild {
  Dvle d;
  bool nodvle = false;
  std::string entry = "main", endmain;
  bool entry_given = false;
  std::vector<std::pair<std::string, Reg>> uniforms;  // name, first reg (+ size)
  std::vector<int> uniform_sizes;
  std::set<int> used_o;
};

enum class Block { Proc, If, For };
struct Open {
  Block kind;
  size_t pos;
  std::string name;
  bool has_else = false;
  size_t else_pos = 0;
};

class Assembler {
 public:
  bool run(const std::string& text, Shbin& out, std::string& err) {
    int line_no = 0;
    try {
      dvles_.emplace_back();
      size_t p = 0;
      while (p <= text.size()) {
        size_t nl = text.find('\n', p);
        if (nl == std::string::npos) nl = text.size();
        std::string line = text.substr(p, nl - p);
        p = nl + 1;
        ++line_no;
        line_ = line_no;
        size_t sc = line.find(';');
        if (sc != std::string::npos) line.resize(sc);
        line = trim(line);
        if (!line.empty()) statement(line);
        if (nl == text.size()) break;
      }
      line_ = line_no;
      if (constfa_) fail(".constfa without .end");
      if (!open_.empty()) fail("unterminated block opened at word " + std::to_string(open_.back().pos));
      finish(out);
    } catch (const AsmError& e) {
      err = "line " + std::to_string(line_) + ": " + e.what();
      return false;
    }
    return true;
  }

 private:
  std::vector<uint32_t> code_;
  std::vector<uint32_t> descs_, desc_masks_;
  std::map<std::string, size_t> labels_;
  std::map<std::string, std::pair<size_t, size_t>> procs_;  // start, size
  std::vector<Pending> pending_;
  std::vector<Open> open_;
  std::map<std::string, Alias> aliases_;
  std::vector<DvleBuild> dvles_;
  std::set<int> used_c_, used_i_, used_b_;
  int line_ = 0;
  bool constfa_ = false;
  std::string constfa_name_;
  std::vector<std::array<float, 4>> constfa_values_;

  DvleBuild& cur() { return dvles_.back(); }

  void statement(std::string s) {
    if (constfa_) {
      if (lower(s) == ".end") return end_constfa();
      if (s.front() != '(' || s.back() != ')') fail("expected '(x, y, z, w)' inside .constfa");
      constfa_values_.push_back(parse_vec4f(s));
      return;
    }
    // Labels (possibly followed by a statement).
    size_t colon = s.find(':');
    if (colon != std::string::npos && is_ident(trim(s.substr(0, colon)))) {
      define_label(trim(s.substr(0, colon)));
      s = trim(s.substr(colon + 1));
      if (s.empty()) return;
    }
    size_t sp = 0;
    while (sp < s.size() && !std::isspace((unsigned char)s[sp])) ++sp;
    std::string head = lower(s.substr(0, sp));
    std::string rest = trim(s.substr(sp));
    if (head[0] == '.' || head == "else" || head == "endif" || head == "endfor") directive(head, rest);
    else instruction(head, rest);
  }

  void define_label(const std::string& n) {
    if (labels_.count(n) || procs_.count(n)) fail("symbol '" + n + "' defined twice");
    labels_[n] = code_.size();
  }

  // ---------------------------------------------------------------- directives
  void directive(const std::string& d, const std::string& rest) {
    if (d == ".proc") {
      if (!is_ident(rest)) fail(".proc needs a name");
      if (procs_.count(rest) || labels_.count(rest)) fail("symbol '" + rest + "' defined twice");
      open_.push_back({Block::Proc, code_.size(), rest});
    } else if (d == ".else" || d == "else") {
      if (open_.empty() || open_.back().kind != Block::If || open_.back().has_else) fail(".else without an open if");
      open_.back().has_else = true;
      open_.back().else_pos = code_.size();
    } else if (d == ".end" || d == "endif" || d == "endfor") {
      if (open_.empty()) fail(d + " without an open block");
      Open o = open_.back();
      open_.pop_back();
      if (d == "endif" && o.kind != Block::If) fail("endif closes a different block");
      if (d == "endfor" && o.kind != Block::For) fail("endfor closes a different block");
      close_block(o);
    } else if (d == ".alias") {
      auto parts = words(rest);
      if (parts.size() != 2 || !is_ident(parts[0])) fail(".alias name register");
      Operand op = parse_operand(parts[1], false);
      aliases_[parts[0]] = Alias{op.reg, op.sw.comp};
    } else if (d == ".fvec" || d == ".ivec" || d == ".bool" || d == ".in") {
      declare_uniforms(d, rest);
    } else if (d == ".constf" || d == ".consti") {
      size_t lp = rest.find('(');
      if (lp == std::string::npos) fail(d + " name(x, y, z, w)");
      std::string name = trim(rest.substr(0, lp));
      if (!is_ident(name)) fail(d + " needs a name");
      bool f = d == ".constf";
      int reg = allocate_top(f ? used_c_ : used_i_, f ? 96 : 4, 1);
      add_constant(f ? 'c' : 'i', reg, trim(rest.substr(lp)));
      aliases_[name] = Alias{Reg{f ? 'c' : 'i', reg}};
    } else if (d == ".constfa") {
      size_t lb = rest.find('[');
      constfa_name_ = trim(rest.substr(0, lb));
      if (!is_ident(constfa_name_)) fail(".constfa name[]");
      constfa_ = true;
      constfa_values_.clear();
    } else if (d == ".setf" || d == ".seti") {
      size_t lp = rest.find('(');
      if (lp == std::string::npos) fail(d + " register(x, y, z, w)");
      auto r = parse_reg_name(lower(trim(rest.substr(0, lp))));
      char want = d == ".setf" ? 'c' : 'i';
      if (!r || r->file != want) fail(d + " needs a " + std::string(1, want) + " register");
      add_constant(want, r->index, trim(rest.substr(lp)));
    } else if (d == ".setb") {
      auto parts = words(rest);
      if (parts.size() != 2) fail(".setb register value");
      auto r = parse_reg_name(lower(parts[0]));
      if (!r || r->file != 'b') fail(".setb needs a b register");
      std::string v = lower(parts[1]);
      bool val;
      if (v == "true" || v == "on" || v == "1") val = true;
      else if (v == "false" || v == "off" || v == "0") val = false;
      else fail("bad boolean '" + parts[1] + "'");
      ShbinConstant c;
      c.kind = ConstKind::Bool;
      c.reg = uint16_t(r->index);
      c.value[0] = val;
      cur().d.constants.push_back(c);
    } else if (d == ".out") {
      declare_output(rest);
    } else if (d == ".entry") {
      auto parts = words(rest);
      if (parts.empty() || parts.size() > 2) fail(".entry name [endName]");
      cur().entry = parts[0];
      cur().endmain = parts.size() == 2 ? parts[1] : "";
      cur().entry_given = true;
    } else if (d == ".nodvle") {
      cur().nodvle = true;
    } else if (d == ".dvle") {
      dvles_.emplace_back();
    } else if (d == ".merge_outmaps") {
      cur().d.merge_outmaps = 1;
    } else if (d == ".gsh") {
      auto parts = words(rest);
      Dvle& v = cur().d;
      v.is_geometry = 1;
      if (parts.empty()) return;
      std::string mode = lower(parts[0]);
      auto creg = [&](size_t i) {
        if (parts.size() <= i) fail(".gsh " + mode + " needs a c register");
        auto r = parse_reg_name(lower(parts[i]));
        if (!r || r->file != 'c') fail(".gsh needs a c register");
        return uint8_t(r->index);
      };
      if (mode == "point") {
        v.gs_mode = 0;
        v.gs_float_start = creg(1);
      } else if (mode == "variable") {
        v.gs_mode = 1;
        v.gs_float_start = creg(1);
        if (parts.size() != 3) fail(".gsh variable cN count");
        v.gs_fully_defined = uint8_t(parse_int(parts[2]));
      } else if (mode == "fixed") {
        v.gs_mode = 2;
        v.gs_float_start = creg(1);
        if (parts.size() != 3) fail(".gsh fixed cN count");
        v.gs_vertex_count = uint8_t(parse_int(parts[2]));
      } else {
        fail("unknown geometry shader mode '" + parts[0] + "'");
      }
    } else {
      fail("unknown directive '" + d + "'");
    }
  }

  static std::vector<std::string> words(const std::string& s) {
    std::vector<std::string> out;
    std::string cur;
    for (char c : s) {
      if (std::isspace((unsigned char)c)) {
        if (!cur.empty()) out.push_back(cur);
        cur.clear();
      } else {
        cur.push_back(c);
      }
    }
    if (!cur.empty()) out.push_back(cur);
    return out;
  }

  std::array<float, 4> parse_vec4f(const std::string& paren) {
    if (paren.size() < 2 || paren.front() != '(' || paren.back() != ')') fail("expected '(x, y, z, w)'");
    auto parts = split_operands(paren.substr(1, paren.size() - 2));
    if (parts.size() != 4) fail("expected four values");
    std::array<float, 4> v{};
    for (int i = 0; i < 4; ++i) v[size_t(i)] = parse_float(parts[size_t(i)]);
    return v;
  }

  void add_constant(char file, int reg, const std::string& paren) {
    ShbinConstant c;
    c.reg = uint16_t(reg);
    if (file == 'c') {
      c.kind = ConstKind::FVec;
      auto v = parse_vec4f(paren);
      for (int i = 0; i < 4; ++i) c.value[size_t(i)] = ir::pica_fp::f32_to_f24(v[size_t(i)]);
    } else {
      c.kind = ConstKind::IVec;
      if (paren.size() < 2 || paren.front() != '(' || paren.back() != ')') fail("expected '(x, y, z, w)'");
      auto parts = split_operands(paren.substr(1, paren.size() - 2));
      if (parts.size() != 4) fail("expected four values");
      for (int i = 0; i < 4; ++i) {
        long v = parse_int(parts[size_t(i)]);
        if (v < -128 || v > 255) fail("integer constant out of 8-bit range");
        c.value[size_t(i)] = uint32_t(v) & 0xFF;
      }
    }
    cur().d.constants.push_back(c);
  }

  void end_constfa() {
    constfa_ = false;
    if (constfa_values_.empty()) fail(".constfa with no values");
    int n = int(constfa_values_.size());
    int reg = allocate_top(used_c_, 96, n);
    for (int k = 0; k < n; ++k) {
      ShbinConstant c;
      c.kind = ConstKind::FVec;
      c.reg = uint16_t(reg + k);
      for (int i = 0; i < 4; ++i) c.value[size_t(i)] = ir::pica_fp::f32_to_f24(constfa_values_[size_t(k)][size_t(i)]);
      cur().d.constants.push_back(c);
    }
    aliases_[constfa_name_] = Alias{Reg{'c', reg}};
  }

  // Constants come from the top of a register file, uniforms from the bottom.
  static int allocate_top(std::set<int>& used, int limit, int n) {
    for (int start = limit - n; start >= 0; --start) {
      bool free = true;
      for (int k = 0; k < n; ++k) free &= !used.count(start + k);
      if (free) {
        for (int k = 0; k < n; ++k) used.insert(start + k);
        return start;
      }
    }
    fail("out of registers for constants");
  }
  static int allocate_bottom(std::set<int>& used, int limit, int n) {
    for (int start = 0; start + n <= limit; ++start) {
      bool free = true;
      for (int k = 0; k < n; ++k) free &= !used.count(start + k);
      if (free) {
        for (int k = 0; k < n; ++k) used.insert(start + k);
        return start;
      }
    }
    fail("out of registers for uniforms");
  }

  void declare_uniforms(const std::string& d, const std::string& rest) {
    char file = d == ".fvec" ? 'c' : d == ".ivec" ? 'i' : d == ".bool" ? 'b' : 'v';
    int limit = file == 'c' ? 96 : file == 'i' ? 4 : 16;
    std::set<int> inputs_unused;
    std::set<int>& used = file == 'c' ? used_c_ : file == 'i' ? used_i_ : file == 'b' ? used_b_ : inputs_unused;
    for (std::string item : split_operands(rest)) {
      auto parts = words(item);
      if (parts.empty() || parts.size() > 2) fail("bad declaration '" + item + "'");
      std::string name = parts[0];
      int size = 1;
      size_t lb = name.find('[');
      if (lb != std::string::npos) {
        if (name.back() != ']') fail("bad array '" + name + "'");
        size = int(parse_int(name.substr(lb + 1, name.size() - lb - 2)));
        name = name.substr(0, lb);
        if (size < 1 || size > limit) fail("bad array size");
      }
      if (!is_ident(name)) fail("bad uniform name '" + name + "'");
      int reg;
      if (parts.size() == 2) {
        auto r = parse_reg_name(lower(parts[1]));
        if (!r || r->file != file || r->index + size > limit) fail("bad register for '" + name + "'");
        reg = r->index;
        for (int k = 0; k < size; ++k) used.insert(reg + k);
      } else if (file == 'v') {
        reg = allocate_bottom(used_v_, 16, size);
      } else {
        reg = allocate_bottom(used, limit, size);
      }
      aliases_[name] = Alias{Reg{file, reg}};
      if (name[0] != '_') {
        cur().uniforms.push_back({name, Reg{file, reg}});
        cur().uniform_sizes.push_back(size);
      }
    }
  }
  std::set<int> used_v_;

  void declare_output(const std::string& rest) {
    auto parts = words(rest);
    if (parts.size() < 2 || parts.size() > 3) fail(".out name semantic[.mask] [register]");
    std::string sem = lower(parts[1]);
    uint16_t mask = 0xF;
    size_t dot = sem.find('.');
    if (dot != std::string::npos) {
      uint8_t m = parse_mask(sem.substr(dot + 1));  // bit 3 = x
      mask = 0;
      for (int c = 0; c < 4; ++c)
        if (m & (8 >> c)) mask |= uint16_t(1u << c);  // output table: bit 0 = x
      sem = sem.substr(0, dot);
    }
    uint16_t semantic;
    if (!parse_output_semantic(sem, semantic)) {
      char* end = nullptr;
      long v = std::strtol(sem.c_str(), &end, 0);
      if (sem.empty() || *end || v < 0 || v > 0xFFFF) fail("unknown output semantic '" + parts[1] + "'");
      semantic = uint16_t(v);
    }
    int reg;
    if (parts.size() == 3) {
      auto r = parse_reg_name(lower(parts[2]));
      if (!r || r->file != 'o') fail(".out needs an o register");
      reg = r->index;
    } else {
      reg = 0;
      while (reg < 16 && cur().used_o.count(reg)) ++reg;
      if (reg == 16) fail("out of output registers");
    }
    cur().used_o.insert(reg);
    cur().d.outputs.push_back({semantic, uint16_t(reg), mask, 0});
    if (parts[0] != "-") {
      if (!is_ident(parts[0])) fail("bad output name '" + parts[0] + "'");
      aliases_[parts[0]] = Alias{Reg{'o', reg}};
    }
  }

  void close_block(const Open& o) {
    switch (o.kind) {
      case Block::Proc: procs_[o.name] = {o.pos, code_.size() - o.pos}; break;
      case Block::If: {
        Instr in = *decode(code_[o.pos], uint32_t(o.pos));
        size_t dst = o.has_else ? o.else_pos : code_.size();
        in.target = uint16_t(dst);
        in.num = uint8_t(o.has_else ? code_.size() - o.else_pos : 0);
        if (o.has_else && code_.size() - o.else_pos > 255) fail("else block longer than 255 instructions");
        code_[o.pos] = encode(in);
        break;
      }
      case Block::For: {
        if (code_.size() == o.pos + 1) fail("empty for block");
        Instr in = *decode(code_[o.pos], uint32_t(o.pos));
        in.target = uint16_t(code_.size() - 1);
        code_[o.pos] = encode(in);
        break;
      }
    }
  }

  // ---------------------------------------------------------------- operands
  Operand parse_operand(std::string s, bool allow_alias_only_regs = true) {
    (void)allow_alias_only_regs;
    Operand op;
    s = trim(s);
    if (!s.empty() && s[0] == '-') {
      op.sw.negate = true;
      s = trim(s.substr(1));
    }
    size_t i = 0;
    while (i < s.size() && is_ident_char(s[i])) ++i;
    std::string name = s.substr(0, i);
    std::array<uint8_t, 4> base_sw{0, 1, 2, 3};
    if (auto a = aliases_.find(name); a != aliases_.end()) {
      op.reg = a->second.reg;
      base_sw = a->second.sw;
    } else if (auto r = parse_reg_name(lower(name))) {
      op.reg = *r;
    } else {
      fail("unknown register or alias '" + name + "'");
    }
    if (i < s.size() && s[i] == '[') {
      size_t rb = s.find(']', i);
      if (rb == std::string::npos) fail("missing ']'");
      parse_index(lower(s.substr(i + 1, rb - i - 1)), op);
      i = rb + 1;
    }
    std::array<uint8_t, 4> sw = base_sw;
    if (i < s.size()) {
      if (s[i] != '.') fail("unexpected '" + s.substr(i) + "'");
      op.has_suffix = true;
      op.suffix = lower(s.substr(i + 1));
      if (op.suffix != "none") {
        auto c = parse_swizzle(op.suffix);
        for (int k = 0; k < 4; ++k) sw[size_t(k)] = base_sw[c[size_t(k)]];
      }
    }
    op.sw.comp = sw;
    int limit = op.reg.file == 'c' ? 96 : op.reg.file == 'i' ? 4 : 16;
    if (op.reg.index < 0 || op.reg.index >= limit) fail("register index out of range in '" + s + "'");
    return op;
  }

  void parse_index(std::string t, Operand& op) {
    t.erase(std::remove_if(t.begin(), t.end(), [](char c) { return std::isspace((unsigned char)c); }), t.end());
    // [a0.x], [a0.y], [al], [a0], [a1], [a2], [lcnt], each optionally +/-N; or [N].
    static const std::pair<const char*, unsigned> kIdx[] = {{"a0.x", 1}, {"a0.y", 2}, {"al", 3}, {"lcnt", 3},
                                                             {"a0", 1},   {"a1", 2},   {"a2", 3}};
    size_t used = 0;
    for (auto& [n, v] : kIdx) {
      size_t len = std::strlen(n);
      if (t.compare(0, len, n) == 0 && (t.size() == len || t[len] == '+' || t[len] == '-')) {
        op.idx = v;
        used = len;
        break;
      }
    }
    std::string off = t.substr(used);
    if (!off.empty()) {
      if (off[0] == '+') off = off.substr(1);
      op.reg.index += int(parse_int(off));
    }
  }

  // Source field value of an operand; `wide` allows c registers and relative addressing.
  unsigned src_field(const Operand& op, bool wide, const char* what) {
    if (op.reg.file == 'v') return unsigned(op.reg.index);
    if (op.reg.file == 'r') return 0x10u + unsigned(op.reg.index);
    if (op.reg.file == 'c') {
      if (!wide) fail(std::string(what) + " cannot be a c register (narrow operand: v or r only)");
      return 0x20u + unsigned(op.reg.index);
    }
    fail(std::string(what) + " must be a v, r or c register");
  }
  unsigned dst_field(const Operand& op) {
    if (op.reg.file == 'o') return unsigned(op.reg.index);
    if (op.reg.file == 'r') return 0x10u + unsigned(op.reg.index);
    fail("destination must be an o or r register");
  }
  static bool needs_wide(const Operand& op) { return op.reg.file == 'c' || op.idx != 0; }

  // picasso descriptor allocation: reuse any descriptor agreeing on the bits
  // both uses read, merging in the new bits; else append.
  unsigned alloc_desc(uint32_t value, uint32_t used, bool mad) {
    size_t limit = mad ? 32 : 128;
    for (size_t i = 0; i < descs_.size() && i < limit; ++i) {
      uint32_t common = desc_masks_[i] & used;
      if (((descs_[i] ^ value) & common) == 0) {
        descs_[i] = (descs_[i] & ~used) | (value & used);
        desc_masks_[i] |= used;
        return unsigned(i);
      }
    }
    if (descs_.size() >= limit)
      fail(mad ? "no operand descriptor slot below 32 left for mad" : "more than 128 operand descriptors");
    descs_.push_back(value & used);
    desc_masks_.push_back(used);
    return unsigned(descs_.size() - 1);
  }

  // ---------------------------------------------------------------- instructions
  void instruction(const std::string& mn, const std::string& rest) {
    std::vector<std::string> ops = rest.empty() ? std::vector<std::string>{} : split_operands(rest);
    // Explicit descriptor index (raw-word disassembly).
    std::optional<unsigned> raw_desc;
    if (!ops.empty() && lower(ops.back()).rfind("desc[", 0) == 0) {
      std::string t = ops.back();
      if (t.back() != ']') fail("bad desc[N]");
      long v = parse_int(t.substr(5, t.size() - 6));
      if (v < 0 || v > 127) fail("descriptor index out of range");
      raw_desc = unsigned(v);
      ops.pop_back();
    }
    if (code_.size() >= 4096) fail("program longer than 4096 words");
    std::string m = mn;
    Instr in;
    auto need = [&](size_t n) {
      if (ops.size() != n) fail(m + " takes " + std::to_string(n) + " operand(s)");
    };
    auto finish_desc = [&](OperandDesc d, bool mad) {
      if (raw_desc) {
        if (mad && *raw_desc > 31) fail("mad descriptor index must be below 32");
        in.desc = uint8_t(*raw_desc);
      } else {
        in.desc = uint8_t(alloc_desc(d.encode(), desc_used_bits(in.op), mad));
      }
    };
    auto dst_mask = [&](const Operand& o) -> uint8_t { return o.has_suffix ? parse_mask(o.suffix) : 0xF; };
    auto check_plain = [&](const Operand& o) {
      if (raw_desc && (o.sw.negate || !o.sw.identity())) fail("desc[N] operands cannot carry swizzles or negation");
    };

    static const std::set<std::string> two_src = {"add", "dp3", "dp4", "dph", "dst", "mul", "sge", "slt", "max", "min",
                                                  "dphi", "dsti", "sgei", "slti"};
    static const std::set<std::string> one_src = {"ex2", "lg2", "litp", "flr", "rcp", "rsq", "mov"};
    if (two_src.count(m)) {
      need(3);
      Operand d = parse_operand(ops[0]), a = parse_operand(ops[1]), b = parse_operand(ops[2]);
      check_plain(a);
      check_plain(b);
      bool inv_capable = m == "dph" || m == "dst" || m == "sge" || m == "slt";
      bool inverted = m.back() == 'i' || (inv_capable && needs_wide(b));
      std::string base = m.back() == 'i' ? m.substr(0, m.size() - 1) : m;
      in.op = find_op(inverted ? base + "i" : base)->op;
      if (inverted) {
        if (a.idx) fail("relative addressing is only possible on the wide (second) operand of " + m);
        in.src1 = uint8_t(src_field(a, false, "first source"));
        in.src2 = uint8_t(src_field(b, true, "second source"));
        in.idx = uint8_t(b.idx);
      } else {
        if (b.idx) fail("relative addressing is only possible on the first source of " + m);
        in.src1 = uint8_t(src_field(a, true, "first source"));
        in.src2 = uint8_t(src_field(b, false, "second source"));
        in.idx = uint8_t(a.idx);
      }
      in.dst = uint8_t(dst_field(d));
      OperandDesc od;
      od.mask = dst_mask(d);
      od.src[0] = a.sw;
      od.src[1] = b.sw;
      finish_desc(od, false);
    } else if (one_src.count(m)) {
      need(2);
      Operand d = parse_operand(ops[0]), a = parse_operand(ops[1]);
      check_plain(a);
      in.op = find_op(m)->op;
      in.dst = uint8_t(dst_field(d));
      in.src1 = uint8_t(src_field(a, true, "source"));
      in.idx = uint8_t(a.idx);
      OperandDesc od;
      od.mask = dst_mask(d);
      od.src[0] = a.sw;
      finish_desc(od, false);
    } else if (m == "mova") {
      if (ops.size() != 1 && ops.size() != 2) fail("mova [a0.xy,] source");
      uint8_t mask = 0xC;
      if (ops.size() == 2) {
        std::string t = lower(trim(ops[0]));
        if (t.rfind("a0", 0) != 0) fail("mova writes a0");
        if (t.size() == 2) mask = 0xF;
        else if (t[2] == '.') mask = parse_mask(t.substr(3));
        else fail("bad a0 mask");
      }
      Operand a = parse_operand(ops.back());
      check_plain(a);
      in.op = Op::MOVA;
      in.src1 = uint8_t(src_field(a, true, "source"));
      in.idx = uint8_t(a.idx);
      OperandDesc od;
      od.mask = mask;
      od.src[0] = a.sw;
      finish_desc(od, false);
    } else if (m == "cmp") {
      need(4);
      Operand a = parse_operand(ops[0]), b = parse_operand(ops[3]);
      check_plain(a);
      check_plain(b);
      in.op = Op::CMP;
      in.src1 = uint8_t(src_field(a, true, "first source"));
      in.src2 = uint8_t(src_field(b, false, "second source"));
      if (b.idx) fail("relative addressing is only possible on the first source of cmp");
      in.idx = uint8_t(a.idx);
      in.cmpx = cmp_op(ops[1]);
      in.cmpy = cmp_op(ops[2]);
      OperandDesc od;
      od.mask = 0;
      od.src[0] = a.sw;
      od.src[1] = b.sw;
      finish_desc(od, false);
    } else if (m == "mad" || m == "madi") {
      need(4);
      Operand d = parse_operand(ops[0]), a = parse_operand(ops[1]), b = parse_operand(ops[2]), c = parse_operand(ops[3]);
      check_plain(a);
      check_plain(b);
      check_plain(c);
      bool inverted = m == "madi" || (!needs_wide(b) && needs_wide(c));
      in.op = inverted ? Op::MADI : Op::MAD;
      in.dst = uint8_t(dst_field(d));
      if (a.idx) fail("relative addressing is not possible on the first source of mad");
      in.src1 = uint8_t(src_field(a, false, "first source"));
      if (inverted) {
        if (b.idx) fail("relative addressing is only possible on the wide operand of madi");
        in.src2 = uint8_t(src_field(b, false, "second source"));
        in.src3 = uint8_t(src_field(c, true, "third source"));
        in.idx = uint8_t(c.idx);
      } else {
        if (c.idx) fail("relative addressing is only possible on the wide operand of mad");
        in.src2 = uint8_t(src_field(b, true, "second source"));
        in.src3 = uint8_t(src_field(c, false, "third source"));
        in.idx = uint8_t(b.idx);
      }
      OperandDesc od;
      od.mask = dst_mask(d);
      od.src[0] = a.sw;
      od.src[1] = b.sw;
      od.src[2] = c.sw;
      finish_desc(od, true);
    } else if (raw_desc) {
      fail(m + " has no operand descriptor");
    } else if (m == "nop" || m == "end" || m == "emit" || m == "break") {
      need(0);
      in.op = find_op(m)->op;
    } else if (m == "setemit") {
      if (ops.empty() || ops.size() > 2) fail("setemit vtxId[, flags]");
      long v = parse_int(ops[0]);
      if (v < 0 || v > 3) fail("setemit vertex id must be 0-3");
      in.op = Op::SETEMIT;
      in.vtxid = uint8_t(v);
      if (ops.size() == 2)
        for (auto& f : words(lower(ops[1]))) {
          if (f == "prim" || f == "primitive") in.prim = 1;
          else if (f == "inv" || f == "invert") in.winding = 1;
          else fail("unknown setemit flag '" + f + "'");
        }
    } else if (m == "breakc") {
      need(1);
      in.op = Op::BREAKC;
      condition(ops[0], in);
    } else if (m == "call") {
      in.op = Op::CALL;
      target(ops, 0, in, true);
    } else if (m == "callc") {
      if (ops.empty()) fail("callc condition, target");
      in.op = Op::CALLC;
      condition(ops[0], in);
      target(ops, 1, in, true);
    } else if (m == "callu") {
      if (ops.empty()) fail("callu bN, target");
      in.op = Op::CALLU;
      in.uniform = uint8_t(bool_reg(ops[0], nullptr));
      target(ops, 1, in, true);
    } else if (m == "ifu" || m == "ifc") {
      if (ops.empty()) fail(m + " needs a condition");
      in.op = m == "ifu" ? Op::IFU : Op::IFC;
      if (m == "ifu") in.uniform = uint8_t(bool_reg(ops[0], nullptr));
      else condition(ops[0], in);
      if (ops.size() == 1) {
        open_.push_back({Block::If, code_.size(), ""});
      } else {
        if (ops.size() != 3) fail(m + " condition[, target, count]");
        target(ops, 1, in, false);
        in.num = uint8_t(count(ops[2]));
      }
    } else if (m == "for" || m == "loop") {
      if (ops.empty() || ops.size() > 2) fail(m + " iN[, lastInstruction]");
      auto r = parse_operand(ops[0]);
      if (r.reg.file != 'i') fail(m + " needs an i register");
      in.op = Op::LOOP;
      in.uniform = uint8_t(r.reg.index);
      if (ops.size() == 1) open_.push_back({Block::For, code_.size(), ""});
      else target(ops, 1, in, false);
    } else if (m == "jmpc") {
      need(2);
      in.op = Op::JMPC;
      condition(ops[0], in);
      target(ops, 1, in, false);
    } else if (m == "jmpu") {
      need(2);
      in.op = Op::JMPU;
      bool inv = false;
      in.uniform = uint8_t(bool_reg(ops[0], &inv));
      in.num = inv ? 1 : 0;
      target(ops, 1, in, false);
    } else {
      fail("unknown instruction '" + m + "'");
    }
    code_.push_back(encode(in));
  }

  uint8_t cmp_op(const std::string& s) {
    static const char* names[] = {"eq", "ne", "lt", "le", "gt", "ge", "6", "7"};
    std::string t = lower(trim(s));
    for (int i = 0; i < 8; ++i)
      if (t == names[i]) return uint8_t(i);
    static const char* syms[] = {"==", "!=", "<", "<=", ">", ">="};
    for (int i = 0; i < 6; ++i)
      if (t == syms[i]) return uint8_t(i);
    fail("unknown comparison '" + s + "'");
  }

  int bool_reg(const std::string& s, bool* inverted) {
    std::string t = trim(s);
    if (!t.empty() && t[0] == '!') {
      if (!inverted) fail("'!' is only allowed in jmpu");
      *inverted = true;
      t = trim(t.substr(1));
    }
    Operand o = parse_operand(t);
    if (o.reg.file != 'b') fail("expected a b register, got '" + s + "'");
    return o.reg.index;
  }

  void condition(const std::string& s, Instr& in) {
    std::string t = lower(s);
    t.erase(std::remove_if(t.begin(), t.end(), [](char c) { return std::isspace((unsigned char)c); }), t.end());
    auto flag = [&](std::string f, int& which, bool& ref) {
      ref = true;
      while (!f.empty() && f[0] == '!') {
        ref = !ref;
        f = f.substr(1);
      }
      if (f == "cmp.x") which = 0;
      else if (f == "cmp.y") which = 1;
      else fail("bad condition flag '" + f + "'");
    };
    size_t op_pos = t.find_first_of("&|");
    if (op_pos == std::string::npos) {
      int w;
      bool ref;
      flag(t, w, ref);
      in.condop = w == 0 ? 2 : 3;
      (w == 0 ? in.refx : in.refy) = ref;
      return;
    }
    char op = t[op_pos];
    size_t end = op_pos;
    while (end < t.size() && t[end] == op) ++end;
    if (end - op_pos > 2) fail("bad condition '" + s + "'");
    int w1, w2;
    bool r1, r2;
    flag(t.substr(0, op_pos), w1, r1);
    flag(t.substr(end), w2, r2);
    if (w1 == w2) fail("a condition must test cmp.x and cmp.y once each");
    in.condop = op == '|' ? 0 : 1;
    in.refx = w1 == 0 ? r1 : r2;
    in.refy = w1 == 0 ? r2 : r1;
  }

  long count(const std::string& s) {
    long v = parse_int(s);
    if (v < 0 || v > 255) fail("instruction count must be 0-255");
    return v;
  }

  // Target operand at ops[at]: a label/procedure name or a number; for
  // CALL-like forms without an explicit count the procedure size is used.
  void target(const std::vector<std::string>& ops, size_t at, Instr& in, bool call_like) {
    if (ops.size() <= at) fail("missing target");
    std::string t = trim(ops[at]);
    if (call_like) {
      if (ops.size() == at + 2) in.num = uint8_t(count(ops[at + 1]));
      else if (ops.size() != at + 1) fail("too many operands");
    }
    bool explicit_count = call_like && ops.size() == at + 2;
    if (!t.empty() && std::isdigit((unsigned char)t[0])) {
      long v = parse_int(t);
      if (v < 0 || v > 4095) fail("target out of range");
      in.target = uint16_t(v);
      if (call_like && !explicit_count) fail("a numeric call target needs a count");
      return;
    }
    if (!is_ident(t)) fail("bad target '" + t + "'");
    pending_.push_back({code_.size(), t, call_like && !explicit_count, line_});
  }

  void finish(Shbin& out) {
    for (const Pending& p : pending_) {
      line_ = p.line;
      Instr in = *decode(code_[p.word], uint32_t(p.word));
      if (auto pr = procs_.find(p.symbol); pr != procs_.end()) {
        in.target = uint16_t(pr->second.first);
        if (p.want_proc_size) {
          if (pr->second.second > 255) fail("procedure '" + p.symbol + "' longer than 255 instructions");
          in.num = uint8_t(pr->second.second);
        }
      } else if (auto l = labels_.find(p.symbol); l != labels_.end()) {
        if (p.want_proc_size) fail("'" + p.symbol + "' is a label, not a procedure: give a count");
        in.target = uint16_t(l->second);
      } else {
        fail("undefined symbol '" + p.symbol + "'");
      }
      code_[p.word] = encode(in);
    }
    out = Shbin{};
    out.code = code_;
    out.descs = descs_;
    // Input mask: v registers read by the code.
    uint16_t inputs = 0;
    for (uint32_t a = 0; a < code_.size(); ++a) {
      Instr in = *decode(code_[a], a);
      unsigned n = num_sources(in.op);
      unsigned f[3] = {in.src1, in.src2, in.src3};
      for (unsigned k = 0; k < n; ++k)
        if (f[k] < 0x10) inputs |= uint16_t(1u << f[k]);
    }
    // Label table: procedures and labels (sorted by name for a stable order).
    std::vector<ShbinLabel> labels;
    uint16_t id = 0;
    for (auto& [n, pr] : procs_) labels.push_back({id++, 1, uint32_t(pr.first), uint32_t(pr.second), n});
    for (auto& [n, at] : labels_) labels.push_back({id++, 1, uint32_t(at), 0, n});
    for (DvleBuild& b : dvles_) {
      if (b.nodvle) continue;
      Dvle d = b.d;
      auto resolve = [&](const std::string& n, bool start) -> uint32_t {
        if (auto pr = procs_.find(n); pr != procs_.end()) return uint32_t(start ? pr->second.first : pr->second.first + pr->second.second);
        if (auto l = labels_.find(n); l != labels_.end()) return uint32_t(l->second);
        fail("entry point '" + n + "' is not defined");
      };
      if (b.entry_given || procs_.count("main") || labels_.count("main")) {
        d.main_offset = resolve(b.entry, true);
        if (!b.endmain.empty()) d.endmain_offset = resolve(b.endmain, true);
        else if (procs_.count(b.entry)) d.endmain_offset = resolve(b.entry, false);
        else d.endmain_offset = uint32_t(code_.size());
      } else {
        d.main_offset = 0;
        d.endmain_offset = uint32_t(code_.size());
      }
      d.labels = labels;
      d.input_mask = inputs;
      for (auto& o : d.outputs) d.output_mask |= uint16_t(1u << (o.reg & 15));
      std::vector<ShbinUniform> us;
      for (size_t k = 0; k < b.uniforms.size(); ++k) {
        auto& [n, r] = b.uniforms[k];
        uint16_t base = r.file == 'v' ? 0x10 : r.file == 'c' ? 0x20 : r.file == 'i' ? 0x80 : 0x88;
        std::string name = n;
        for (char& c : name) if (c == '$') c = '.';
        us.push_back({name, uint16_t(base + r.index), uint16_t(base + r.index + b.uniform_sizes[k] - 1)});
      }
      std::stable_sort(us.begin(), us.end(), [](auto& a, auto& b) { return a.start < b.start; });
      d.uniforms = us;
      out.dvles.push_back(std::move(d));
    }
  }
};

}  // namespace

bool assemble(const std::string& text, Shbin& out, std::string& err) {
  Assembler a;
  return a.run(text, out, err);
}

}  // namespace gpurc::pica
