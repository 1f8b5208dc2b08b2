#include "frontend/tesla/cubin.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <memory>

namespace gpurc::tesla {

namespace {

// The file as a tree: a block has attributes (key = value), child blocks
// (key { ... } with structure inside) and bare words (key { w w w }).
struct Block {
  std::string key;
  std::vector<std::pair<std::string, std::string>> attrs;
  std::vector<std::unique_ptr<Block>> kids;
  std::vector<std::string> words;
  int line = 0;
  const std::string* attr(const std::string& k) const {
    for (auto& [a, v] : attrs)
      if (a == k) return &v;
    return nullptr;
  }
};

struct Tok {
  std::string s;
  int line;
};

std::vector<Tok> lex(const std::string& text) {
  std::vector<Tok> v;
  int line = 1;
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    if (c == '\n') ++line;
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    if (c == '#') {  // comment to end of line
      while (i < text.size() && text[i] != '\n') ++i;
      continue;
    }
    if (c == '{' || c == '}' || c == '=') {
      v.push_back({std::string(1, c), line});
      ++i;
      continue;
    }
    size_t j = i;
    while (j < text.size() && !std::isspace(static_cast<unsigned char>(text[j])) && text[j] != '{' && text[j] != '}' &&
           text[j] != '=')
      ++j;
    v.push_back({text.substr(i, j - i), line});
    i = j;
  }
  return v;
}

bool parse_block(const std::vector<Tok>& t, size_t& i, Block& b, bool top, std::string& err, int depth) {
  if (depth > 16) {
    err = "blocks nested too deeply";
    return false;
  }
  while (i < t.size()) {
    if (t[i].s == "}") {
      if (top) {
        err = "line " + std::to_string(t[i].line) + ": unmatched '}'";
        return false;
      }
      ++i;
      return true;
    }
    if (t[i].s == "{" || t[i].s == "=") {
      err = "line " + std::to_string(t[i].line) + ": unexpected '" + t[i].s + "'";
      return false;
    }
    if (i + 1 < t.size() && t[i + 1].s == "=") {
      if (i + 2 >= t.size() || t[i + 2].s == "{" || t[i + 2].s == "}" || t[i + 2].s == "=") {
        err = "line " + std::to_string(t[i].line) + ": '" + t[i].s + " =' without a value";
        return false;
      }
      b.attrs.emplace_back(t[i].s, t[i + 2].s);
      i += 3;
      continue;
    }
    if (i + 1 < t.size() && t[i + 1].s == "{") {
      auto k = std::make_unique<Block>();
      k->key = t[i].s;
      k->line = t[i].line;
      i += 2;
      if (!parse_block(t, i, *k, false, err, depth + 1)) return false;
      b.kids.push_back(std::move(k));
      continue;
    }
    b.words.push_back(t[i].s);
    ++i;
  }
  if (!top) {
    err = "unterminated block '" + b.key + "'";
    return false;
  }
  return true;
}

bool number(const std::string& s, uint64_t max, uint64_t& v) {
  if (s.empty() || !std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  errno = 0;
  char* e = nullptr;
  unsigned long long x = std::strtoull(s.c_str(), &e, 0);
  if (*e || errno || x > max) return false;
  v = x;
  return true;
}

bool get_u32(const Block& b, const char* key, uint32_t& out, std::string& err) {
  const std::string* v = b.attr(key);
  if (!v) return true;
  uint64_t x;
  if (!number(*v, 0xffffffffu, x)) {
    err = "line " + std::to_string(b.line) + ": bad " + key + " '" + *v + "'";
    return false;
  }
  out = uint32_t(x);
  return true;
}

bool words_of(const Block& b, std::vector<uint32_t>& out, std::string& err) {
  for (auto& w : b.words) {
    uint64_t x;
    if (!number(w, 0xffffffffu, x)) {
      err = "line " + std::to_string(b.line) + ": bad word '" + w + "' in " + b.key;
      return false;
    }
    out.push_back(uint32_t(x));
  }
  return true;
}

bool read_const(const Block& b, CubinConst& c, std::string& err) {
  if (auto* n = b.attr("name")) c.name = *n;
  if (auto* n = b.attr("segname")) c.segname = *n;
  uint32_t segnum = 0;
  if (!get_u32(b, "segnum", segnum, err) || !get_u32(b, "offset", c.offset, err) ||
      !get_u32(b, "bytes", c.bytes, err))
    return false;
  if (segnum > 15) {
    err = "line " + std::to_string(b.line) + ": const segment number " + std::to_string(segnum) + " is not c0..c15";
    return false;
  }
  c.segnum = int(segnum);
  for (auto& k : b.kids)
    if (k->key == "mem" && !words_of(*k, c.mem, err)) return false;
  if (uint64_t(c.mem.size()) * 4 > uint64_t(c.bytes) + 3) {
    err = "line " + std::to_string(b.line) + ": const segment has more data than its " + std::to_string(c.bytes) + " bytes";
    return false;
  }
  return true;
}

}  // namespace

const CubinKernel* Cubin::find(const std::string& name) const {
  for (auto& k : kernels)
    if (k.name == name) return &k;
  return nullptr;
}

bool looks_like_cubin(const std::vector<uint8_t>& bytes) {
  std::string head(bytes.begin(), bytes.begin() + long(std::min<size_t>(bytes.size(), 4096)));
  for (char c : head)
    if (c == 0) return false;
  return head.find("code") != std::string::npos && head.find('{') != std::string::npos &&
         (head.find("architecture") != std::string::npos || head.find("bincode") != std::string::npos);
}

bool parse_cubin(const std::string& text, Cubin& out, std::string& err) {
  out = Cubin{};
  auto toks = lex(text);
  Block root;
  size_t i = 0;
  if (!parse_block(toks, i, root, true, err, 0)) return false;
  for (auto& k : root.kids) {
    if (k->key == "architecture" || k->key == "abiversion" || k->key == "modname") {
      std::string v = k->words.empty() ? "" : k->words[0];
      (k->key == "architecture" ? out.architecture : k->key == "abiversion" ? out.abiversion : out.modname) = v;
    } else if (k->key == "consts") {
      CubinConst c;
      if (!read_const(*k, c, err)) return false;
      out.consts.push_back(std::move(c));
    } else if (k->key == "reloc") {
      CubinConst c;
      if (!read_const(*k, c, err)) return false;
      if (c.name.empty()) {
        err = "line " + std::to_string(k->line) + ": reloc block without a name";
        return false;
      }
      if (c.offset % 4 || uint64_t(c.offset) + 4 > 0x10000) {
        err = "line " + std::to_string(k->line) + ": reloc '" + c.name + "' address slot at c" +
              std::to_string(c.segnum) + "[" + std::to_string(c.offset) + "] is not an aligned 32-bit word below 0x10000";
        return false;
      }
      out.relocs.push_back(std::move(c));
    } else if (k->key == "code") {
      CubinKernel kr;
      if (auto* n = k->attr("name")) kr.name = *n;
      if (kr.name.empty()) {
        err = "line " + std::to_string(k->line) + ": code block without a name";
        return false;
      }
      if (!get_u32(*k, "lmem", kr.lmem, err) || !get_u32(*k, "smem", kr.smem, err) ||
          !get_u32(*k, "reg", kr.reg, err) || !get_u32(*k, "bar", kr.bar, err))
        return false;
      if (kr.reg > 128 || kr.smem > 0x4000 || kr.lmem > 0x10000 || kr.bar > 16) {
        err = "kernel " + kr.name + ": resources out of range (reg <= 128, smem <= 0x4000, lmem <= 0x10000, bar <= 16)";
        return false;
      }
      bool have_code = false;
      for (auto& c : k->kids) {
        if (c->key == "bincode") {
          if (!words_of(*c, kr.code, err)) return false;
          have_code = true;
        } else if (c->key == "const") {
          CubinConst cc;
          if (!read_const(*c, cc, err)) return false;
          kr.consts.push_back(std::move(cc));
        }
      }
      if (!have_code) {
        err = "kernel " + kr.name + ": no bincode block";
        return false;
      }
      out.kernels.push_back(std::move(kr));
    }
  }
  if (out.kernels.empty()) {
    err = "no code blocks (not a text .cubin?)";
    return false;
  }
  return true;
}

}  // namespace gpurc::tesla
