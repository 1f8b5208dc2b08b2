// Parser for the IR text form written by print.cpp (grammar in docs/ir.md).
#include <algorithm>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "ir/text_names.h"

namespace gpurc::ir {

namespace {

// Limits that keep hostile text from asking for absurd allocations.
constexpr uint64_t kMaxValues = 1u << 24;
constexpr uint64_t kMaxBlocks = 1u << 20;

struct Token {
  enum Kind { Word, String, Punct } kind;
  std::string text;
};

bool is_word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
         c == '=' || c == '#' || c == '?' || c == '!' || c == '%' || c == '-' || c == '+';
}

int hex_digit(char c) {
  return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

bool tokenize(std::string_view line, std::vector<Token>& out, std::string& err) {
  size_t i = 0;
  while (i < line.size()) {
    char c = line[i];
    if (c == ' ' || c == '\t' || c == '\r') { ++i; continue; }
    if (c == ';') break;  // comment
    if (c == '"') {
      std::string s;
      ++i;
      while (true) {
        if (i >= line.size()) return err = "unterminated string", false;
        char ch = line[i++];
        if (ch == '"') break;
        if (ch == '\\') {
          if (i >= line.size()) return err = "bad escape", false;
          char e = line[i++];
          if (e == 'x') {
            if (i + 1 >= line.size() + 0 || hex_digit(line[i]) < 0 || i + 1 >= line.size() || hex_digit(line[i + 1]) < 0)
              return err = "bad \\x escape", false;
            s += char(hex_digit(line[i]) * 16 + hex_digit(line[i + 1]));
            i += 2;
          } else {
            s += e;
          }
        } else {
          s += ch;
        }
      }
      out.push_back({Token::String, s});
      continue;
    }
    if (c == '[' || c == ']' || c == ',' || c == ':' || c == '{' || c == '}') {
      out.push_back({Token::Punct, std::string(1, c)});
      ++i;
      continue;
    }
    if (!is_word_char(c)) return err = std::string("unexpected character '") + c + "'", false;
    size_t j = i;
    while (j < line.size() && is_word_char(line[j])) ++j;
    out.push_back({Token::Word, std::string(line.substr(i, j - i))});
    i = j;
  }
  return true;
}

class Parser {
 public:
  Parser(std::string_view text, Function& out) : text_(text), f_(out) {}
  bool run(std::string& error);

 private:
  bool fail(const std::string& msg) {
    err_ = "line " + std::to_string(line_no_) + ": " + msg;
    return false;
  }
  bool is_punct(size_t i, char c) const {
    return i < toks_.size() && toks_[i].kind == Token::Punct && toks_[i].text[0] == c;
  }
  bool parse_value_ref(const std::string& w, ValueId& v);
  bool parse_block_ref(const std::string& w, BlockId& b, bool allow_unknown);
  bool ensure_block(BlockId b) {
    if (b >= kMaxBlocks) return fail("block number too large");
    while (f_.blocks.size() <= b) f_.add_block();
    return true;
  }
  bool header_line();
  bool block_label();
  bool inst_line();
  bool succs_line();
  bool finish();

  std::string_view text_;
  Function& f_;
  std::string err_;
  size_t line_no_ = 0;
  std::vector<Token> toks_;
  BlockId cur_ = kNoBlock;
  enum { BeforeFunc, Header, Body, Done } state_ = BeforeFunc;

  struct Pending {
    Inst inst;
    ValueId id;                          // kNoValue: void, numbered later
    std::vector<BlockId> phi_blocks;     // printed predecessor of each phi operand (kNoBlock: "b?")
    size_t line;
  };
  std::vector<Pending> insts_;
  std::vector<std::vector<size_t>> block_insts_;  // indexes into insts_
  std::vector<uint8_t> block_seen_;
};

bool Parser::parse_value_ref(const std::string& w, ValueId& v) {
  uint64_t n;
  if (w.size() < 2 || w[0] != '%' || !text::parse_uint(w.substr(1), n)) return fail("expected a value (%N), got '" + w + "'");
  if (n >= kMaxValues) return fail("value number too large");
  v = ValueId(n);
  return true;
}

bool Parser::parse_block_ref(const std::string& w, BlockId& b, bool allow_unknown) {
  if (allow_unknown && w == "b?") {
    b = kNoBlock;
    return true;
  }
  uint64_t n;
  if (w.size() < 2 || w[0] != 'b' || !text::parse_uint(w.substr(1), n)) return fail("expected a block (bN), got '" + w + "'");
  if (n >= kMaxBlocks) return fail("block number too large");
  b = BlockId(n);
  return true;
}

bool Parser::header_line() {
  const std::string& w = toks_[0].text;
  if (toks_[0].kind == Token::Word && w == "var") {
    Type t;
    if (toks_.size() != 3 || toks_[1].kind != Token::String || !parse_type(toks_[2].text, t) || t == Type::Void)
      return fail("expected: var \"name\" <type>");
    f_.add_var(toks_[1].text, t);
    return true;
  }
  if (toks_[0].kind == Token::Word && w == "uniform_bytes") {
    uint64_t n;
    if (toks_.size() != 2 || !text::parse_uint(toks_[1].text, n) || n > 0xffffffffu)
      return fail("expected: uniform_bytes <count>");
    f_.uniform_bytes = uint32_t(n);
    return true;
  }
  if (toks_[0].kind == Token::Word && w == "unlaunched_lanes_free") {
    if (toks_.size() != 1) return fail("expected: unlaunched_lanes_free");
    f_.unlaunched_lanes_free = true;
    return true;
  }
  if (toks_[0].kind == Token::Word && w == "no_draw_loop") {
    if (toks_.size() != 1) return fail("expected: no_draw_loop");
    f_.no_draw_loop = true;
    return true;
  }
  if (toks_[0].kind == Token::Word && w == "state_vars") {
    uint64_t n;
    if (toks_.size() != 2 || !text::parse_uint(toks_[1].text, n) || n >= 0xffffffffu)
      return fail("expected: state_vars <count>");
    f_.state_vars = uint32_t(n);
    return true;
  }
  return fail("unexpected '" + w + "' in the function header");
}

bool Parser::block_label() {
  BlockId b;
  if (!parse_block_ref(toks_[0].text, b, false)) return false;
  size_t i = 1;
  std::string name;
  if (i < toks_.size() && toks_[i].kind == Token::String) name = toks_[i++].text;
  if (!is_punct(i, ':') || i + 1 != toks_.size()) return fail("expected: bN [\"name\"]:");
  if (!ensure_block(b)) return false;
  if (block_insts_.size() < f_.blocks.size()) block_insts_.resize(f_.blocks.size()), block_seen_.resize(f_.blocks.size());
  if (block_seen_[b]) return fail("block b" + std::to_string(b) + " defined twice");
  block_seen_[b] = 1;
  f_.blocks[b].name = name;
  cur_ = b;
  state_ = Body;
  return true;
}

bool Parser::succs_line() {
  if (cur_ == kNoBlock) return fail("succs outside a block");
  std::vector<BlockId> succs;
  for (size_t i = 1; i < toks_.size(); ++i) {
    if (i > 1) {
      if (!is_punct(i, ',')) return fail("expected ','");
      ++i;
    }
    BlockId b;
    if (i >= toks_.size() || !parse_block_ref(toks_[i].text, b, false) || !ensure_block(b))
      return err_.empty() ? fail("expected a block") : false;
    succs.push_back(b);
  }
  f_.blocks[cur_].succs = succs;
  return true;
}

bool Parser::inst_line() {
  if (cur_ == kNoBlock) return fail("instruction outside a block");
  Pending p;
  p.id = kNoValue;
  p.line = line_no_;
  size_t i = 0;
  if (toks_[0].kind == Token::Word && toks_[0].text[0] == '%') {
    if (!parse_value_ref(toks_[0].text, p.id)) return false;
    if (toks_.size() < 3 || toks_[1].text != "=") return fail("expected '=' after the value");
    i = 2;
  }
  if (i >= toks_.size() || toks_[i].kind != Token::Word) return fail("expected an op");
  std::string opword = toks_[i++].text;
  size_t dot = opword.find('.');
  std::string opname = opword.substr(0, dot), attr = dot == std::string::npos ? "" : opword.substr(dot + 1);
  Opcode op;
  if (!parse_opcode(opname, op)) return fail("unknown op '" + opname + "'");
  Inst& in = p.inst;
  in.op = op;
  const OpInfo& info = op_info(op);
  if (!attr.empty() && !text::parse_attr(info.attr, attr, in.attr)) return fail("bad attribute '" + attr + "' for " + opname);
  if (i < toks_.size() && toks_[i].kind == Token::Word && parse_type(toks_[i].text, in.type)) ++i;
  if ((p.id == kNoValue) != (in.type == Type::Void))
    return fail(p.id == kNoValue ? "a typed result needs a %N = name" : "a value needs a type");
  bool have_imm = false;
  std::vector<BlockId> succs;
  bool first = true;
  while (i < toks_.size()) {
    const Token& t = toks_[i];
    // A '[' not followed by a value starts the flag list.
    if (is_punct(i, '[') && !(i + 1 < toks_.size() && toks_[i + 1].text[0] == '%')) break;
    if (t.kind == Token::Word && t.text == "!uniform") break;
    if (!first) {
      if (!is_punct(i, ',')) return fail("expected ',' between operands");
      ++i;
      if (i >= toks_.size()) return fail("operand expected after ','");
    }
    first = false;
    const Token& o = toks_[i];
    if (is_punct(i, '[')) {  // phi operand: [%v, bP]
      ValueId v;
      BlockId b;
      if (i + 4 >= toks_.size() + 0 || !is_punct(i + 2, ',') || !is_punct(i + 4, ']'))
        return fail("expected [%value, bN]");
      if (!parse_value_ref(toks_[i + 1].text, v) || !parse_block_ref(toks_[i + 3].text, b, true)) return false;
      in.args.push_back(v);
      p.phi_blocks.push_back(b);
      i += 5;
      continue;
    }
    if (o.kind != Token::Word) return fail("unexpected '" + o.text + "'");
    if (o.text[0] == '%') {
      if (!succs.empty()) return fail("values must come before successor blocks");
      ValueId v;
      if (!parse_value_ref(o.text, v)) return false;
      in.args.push_back(v);
    } else if (o.text[0] == '#') {
      if (have_imm || !text::parse_uint(o.text.substr(1), in.imm)) return fail("bad immediate '" + o.text + "'");
      have_imm = true;
    } else if (o.text[0] == 'b') {
      BlockId b;
      if (!parse_block_ref(o.text, b, false) || !ensure_block(b)) return false;
      succs.push_back(b);
    } else {
      return fail("unexpected '" + o.text + "'");
    }
    ++i;
  }
  if (!p.phi_blocks.empty() && op != Opcode::Phi) return fail("[value, block] operands are for phi only");
  if (op == Opcode::Phi && p.phi_blocks.size() != in.args.size()) return fail("phi operands must be [%value, bN]");
  if (is_punct(i, '[')) {
    ++i;
    while (true) {
      if (i >= toks_.size() || toks_[i].kind != Token::Word || !text::parse_fflag(toks_[i].text, in.fflags))
        return fail("bad float flag");
      ++i;
      if (is_punct(i, ']')) { ++i; break; }
      if (!is_punct(i, ',')) return fail("expected ',' or ']' in the flag list");
      ++i;
    }
  }
  if (i < toks_.size() && toks_[i].text == "!uniform") in.uniform = true, ++i;
  if (i != toks_.size()) return fail("unexpected '" + toks_[i].text + "' at the end of the line");
  if (!succs.empty() && !info.terminator) return fail("only terminators name successor blocks");
  if (info.terminator) f_.blocks[cur_].succs = succs;
  in.block = cur_;
  block_insts_[cur_].push_back(insts_.size());
  insts_.push_back(std::move(p));
  return true;
}

bool Parser::finish() {
  // Number the values: printed ids first, then void instructions fill the gaps.
  size_t n = 0;
  std::vector<uint8_t> used;
  for (const Pending& p : insts_) {
    if (p.id == kNoValue) continue;
    if (p.id >= used.size()) used.resize(size_t(p.id) + 1, 0);
    if (used[p.id]) {
      line_no_ = p.line;
      return fail("%" + std::to_string(p.id) + " defined twice");
    }
    used[p.id] = 1;
  }
  n = used.size();
  // Every operand must name a value the text defines.
  for (const Pending& p : insts_)
    for (ValueId a : p.inst.args)
      if (a >= used.size() || !used[a]) {
        line_no_ = p.line;
        return fail("%" + std::to_string(a) + " is not defined");
      }
  size_t voids = size_t(std::count_if(insts_.begin(), insts_.end(), [](const Pending& p) { return p.id == kNoValue; }));
  size_t gaps = size_t(std::count(used.begin(), used.end(), 0));
  size_t total = n + (voids > gaps ? voids - gaps : 0);
  if (total > kMaxValues) return fail("too many instructions");
  f_.insts.assign(total, Inst{});  // placeholders: undef, void, in no block
  used.resize(total, 0);
  size_t next_free = 0;
  for (Pending& p : insts_) {
    if (p.id != kNoValue) continue;
    while (used[next_free]) ++next_free;
    p.id = ValueId(next_free);
    used[next_free] = 1;
  }
  for (const Pending& p : insts_) f_.insts[p.id] = p.inst;
  for (BlockId b = 0; b < f_.blocks.size(); ++b) {
    if (b < block_insts_.size())
      for (size_t k : block_insts_[b]) f_.blocks[b].insts.push_back(insts_[k].id);
  }
  f_.compute_preds();
  for (const Pending& p : insts_) {
    if (p.inst.op != Opcode::Phi) continue;
    const auto& preds = f_.blocks[p.inst.block].preds;
    for (size_t k = 0; k < p.phi_blocks.size(); ++k)
      if (p.phi_blocks[k] != kNoBlock && (k >= preds.size() || preds[k] != p.phi_blocks[k])) {
        line_no_ = p.line;
        return fail("phi operand " + std::to_string(k) + " names b" + std::to_string(p.phi_blocks[k]) +
                    ", but predecessor " + std::to_string(k) + " is " +
                    (k < preds.size() ? "b" + std::to_string(preds[k]) : std::string("missing")));
      }
  }
  return true;
}

bool Parser::run(std::string& error) {
  f_ = Function{};
  size_t pos = 0;
  while (pos <= text_.size() && state_ != Done) {
    size_t end = text_.find('\n', pos);
    if (end == std::string_view::npos) end = text_.size();
    std::string_view line = text_.substr(pos, end - pos);
    pos = end + 1;
    ++line_no_;
    toks_.clear();
    if (!tokenize(line, toks_, err_)) {
      error = "line " + std::to_string(line_no_) + ": " + err_;
      return false;
    }
    if (toks_.empty()) {
      if (end == text_.size()) break;
      continue;
    }
    bool ok = true;
    const Token& t0 = toks_[0];
    if (state_ == BeforeFunc) {
      if (t0.text != "func" || toks_.size() != 3 || toks_[1].kind != Token::String || !is_punct(2, '{'))
        ok = fail("expected: func \"name\" {");
      else
        f_.name = toks_[1].text, state_ = Header;
    } else if (is_punct(0, '}')) {
      ok = toks_.size() == 1 ? (state_ = Done, true) : fail("unexpected text after '}'");
    } else if (t0.kind == Token::Word && t0.text.size() > 1 && t0.text[0] == 'b' &&
               (toks_.size() >= 2 && (is_punct(1, ':') || toks_[1].kind == Token::String))) {
      ok = block_label();
    } else if (state_ == Header) {
      ok = header_line();
    } else if (t0.kind == Token::Word && t0.text == "succs") {
      ok = succs_line();
    } else {
      ok = inst_line();
    }
    if (!ok) {
      error = err_;
      return false;
    }
    if (end == text_.size()) break;
  }
  if (state_ != Done) {
    error = "line " + std::to_string(line_no_) + ": missing '}' at the end of the function";
    return false;
  }
  for (; pos < text_.size(); ++pos) {
    char c = text_[pos];
    if (c != ' ' && c != '\n' && c != '\t' && c != '\r') {
      error = "text after the end of the function";
      return false;
    }
  }
  if (block_insts_.size() < f_.blocks.size()) block_insts_.resize(f_.blocks.size());
  if (!finish()) {
    error = err_;
    return false;
  }
  return true;
}

}  // namespace

bool parse(std::string_view text, Function& out, std::string& error) {
  Function f;
  Parser p(text, f);
  if (!p.run(error)) return false;
  out = std::move(f);
  return true;
}

}  // namespace gpurc::ir
