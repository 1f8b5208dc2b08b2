// Parses the generated encoding table and derives decode/encode tables from it (isa.h).
#include "frontend/bifrost/isa.h"

#include <algorithm>
#include <map>
#include <sstream>
#include <stdexcept>

namespace gpurc::bifrost {
namespace {

const char kTable[] =
#include "frontend/bifrost/isa_table.inc"
    ;


std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

// COND := T | ! | eq(a,b) | neq(a,b) | and(C,...) | or(C,...) | alias(C)
Cond parse_cond(const std::string& s, size_t& p) {
  Cond c;
  if (s.compare(p, 1, "T") == 0 && (p + 1 == s.size() || s[p + 1] != '(')) {
    ++p;
    return c;
  }
  if (s[p] == '!') {
    ++p;
    c.op = Cond::Op::Reserved;
    return c;
  }
  size_t open = s.find('(', p);
  if (open == std::string::npos) throw std::runtime_error("bifrost table: bad condition " + s);
  std::string tag = s.substr(p, open - p);
  p = open + 1;
  if (tag == "eq" || tag == "neq") {
    size_t comma = s.find(',', p), close = s.find(')', p);
    c.op = tag == "eq" ? Cond::Op::Eq : Cond::Op::Neq;
    c.left = s.substr(p, comma - p);
    c.right = s.substr(comma + 1, close - comma - 1);
    p = close + 1;
    return c;
  }
  if (tag == "and") c.op = Cond::Op::And;
  else if (tag == "or") c.op = Cond::Op::Or;
  else if (tag == "alias") c.op = Cond::Op::Alias;
  else throw std::runtime_error("bifrost table: unknown condition " + tag);
  while (s[p] != ')') {
    c.kids.push_back(parse_cond(s, p));
    if (s[p] == ',') ++p;
  }
  ++p;
  return c;
}

void collect_keys(const Cond& c, std::vector<std::string>& keys) {
  auto add = [&](const std::string& n) {
    if (!n.empty() && n[0] != '#' && std::find(keys.begin(), keys.end(), n) == keys.end()) keys.push_back(n);
  };
  if (c.op == Cond::Op::Eq || c.op == Cond::Op::Neq) {
    add(c.left);
    add(c.right);
  }
  for (const Cond& k : c.kids) collect_keys(k, keys);
}

// Evaluation context: the value (string) of each key, and the ordering.
struct CondNames {
  const std::vector<std::string>* names;
  std::vector<const std::string*> values;
  const char* ordering;  // "lt", "gt" or null (not ordered)
  const std::string* get(const std::string& n) const {
    for (size_t i = 0; i < names->size(); ++i)
      if ((*names)[i] == n) return values[i];
    return nullptr;
  }
};

// The decoder's reading: alias conditions never hold (they only give the
// encoder extra ways to reach a value).
bool eval(const Cond& c, const CondNames& ctx, bool encoder) {
  switch (c.op) {
    case Cond::Op::True: return true;
    case Cond::Op::Reserved: return false;
    case Cond::Op::Alias: return encoder && eval(c.kids[0], ctx, encoder);
    case Cond::Op::And:
      for (const Cond& k : c.kids)
        if (!eval(k, ctx, encoder)) return false;
      return !c.kids.empty();
    case Cond::Op::Or:
      for (const Cond& k : c.kids)
        if (eval(k, ctx, encoder)) return true;
      return false;
    case Cond::Op::Eq:
    case Cond::Op::Neq: {
      auto val = [&](const std::string& n) -> std::string {
        if (!n.empty() && n[0] == '#') return n.substr(1);
        if (n == "ordering") return ctx.ordering ? ctx.ordering : "";
        const std::string* v = ctx.get(n);
        return v ? *v : std::string();
      };
      bool eq = val(c.left) == val(c.right);
      return c.op == Cond::Op::Eq ? eq : !eq;
    }
  }
  return false;
}

void build_luts(Encoding& e) {
  std::vector<std::string> names;
  collect_keys(e.test, names);
  for (const DerivedDesc& d : e.derived)
    for (const Cond& c : d.values) collect_keys(c, names);
  e.ordered = std::find(names.begin(), names.end(), "ordering") != names.end();
  names.erase(std::remove(names.begin(), names.end(), "ordering"), names.end());
  std::sort(names.begin(), names.end());
  for (const std::string& n : names) {
    int idx = -1;
    for (size_t i = 0; i < e.mods.size(); ++i)
      if (e.mods[i].name == n) idx = int(i);
    if (idx < 0) throw std::runtime_error("bifrost table: " + e.name + " condition names unknown modifier " + n);
    e.keys.push_back(idx);
  }
  e.derived_bits = 0;
  for (const DerivedDesc& d : e.derived) e.derived_bits += d.size;
  for (int ord = 0; ord < (e.ordered ? 2 : 1); ++ord) {
    auto& back = e.back[ord];
    back.assign(size_t(1) << e.derived_bits, {});
    std::vector<int> cur(e.keys.size(), 0);
    CondNames ctx{&names, std::vector<const std::string*>(e.keys.size()), e.ordered ? (ord ? "gt" : "lt") : nullptr};
    // Every combination, first key slowest; a later combination giving the
    // same field values replaces an earlier one (as Mesa's generator does).
    while (true) {
      for (size_t k = 0; k < e.keys.size(); ++k) ctx.values[k] = &e.mods[e.keys[k]].opts[cur[k]];
      if (eval(e.test, ctx, false)) {
        unsigned param = 0, shift = 0;
        bool ok = true;
        for (const DerivedDesc& d : e.derived) {
          int v = -1;
          for (size_t i = 0; i < d.values.size(); ++i)
            if (eval(d.values[i], ctx, false)) {
              v = int(i);
              break;
            }
          if (v < 0) {
            ok = false;
            break;
          }
          param |= unsigned(v) << shift;
          shift += d.size;
        }
        if (ok) back[param] = cur;
      }
      // Odometer step, last key fastest.
      bool carry = true;
      for (size_t k = e.keys.size(); carry && k-- > 0;) {
        if (++cur[k] < int(e.mods[e.keys[k]].opts.size())) carry = false;
        else cur[k] = 0;
      }
      if (carry) break;
    }
  }
}

struct Tables {
  std::vector<Encoding> all;
  std::vector<const Encoding*> order[2];  // [fma]
  std::string sha;
};

Tables load() {
  Tables t;
  std::istringstream in(kTable);
  std::string line;
  Encoding cur;
  bool open = false;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::vector<std::string> f = split(line, ' ');
    if (f[0] == "xml-sha256") {
      t.sha = f[1];
    } else if (f[0] == "ins") {
      cur = Encoding();
      open = true;
      cur.name = f[1];
      cur.variant = std::stoi(f[2]);
      cur.fma = cur.name[0] == '*';
      cur.mask = uint32_t(std::stoul(f[3], nullptr, 16));
      cur.exact = uint32_t(std::stoul(f[4], nullptr, 16));
      for (size_t i = 5; i < f.size(); ++i) {
        size_t eq = f[i].find('=');
        std::string k = f[i].substr(0, eq), v = f[i].substr(eq + 1);
        if (k == "staging") cur.staging = v == "-" ? "" : v;
        else if (k == "message") cur.message = v;
        else if (k == "unused") cur.unused = v == "1";
        else if (k == "last") cur.last = v == "1";
        else if (k == "table") cur.table = v == "1";
        else if (k == "test") {
          size_t p = 0;
          cur.test = parse_cond(v, p);
        }
      }
    } else if (f[0] == "src") {
      cur.srcs.push_back({unsigned(std::stoul(f[1])), unsigned(std::stoul(f[2], nullptr, 16))});
    } else if (f[0] == "imm") {
      cur.imms.push_back({f[1], unsigned(std::stoul(f[2])), unsigned(std::stoul(f[3]))});
    } else if (f[0] == "mod") {
      ModDesc m;
      m.name = f[1];
      m.start = f[2] == "-" ? -1 : std::stoi(f[2]);
      m.size = unsigned(std::stoul(f[3]));
      m.has_default = f[4] != "-";
      if (m.has_default) m.dflt = f[4];
      m.opts = split(f[5], ',');
      cur.mods.push_back(m);
    } else if (f[0] == "der") {
      DerivedDesc d;
      d.start = unsigned(std::stoul(f[1]));
      d.size = unsigned(std::stoul(f[2]));
      for (const std::string& c : split(f[3], ';')) {
        size_t p = 0;
        d.values.push_back(parse_cond(c, p));
      }
      cur.derived.push_back(d);
    } else if (f[0] == "end" && open) {
      // Per-source modifiers: a name ending in a digit below the source count.
      for (ModDesc& m : cur.mods) {
        char last = m.name.back();
        if (last >= '0' && last <= '3' && unsigned(last - '0') < cur.srcs.size()) m.src = last - '0';
      }
      cur.index = int(t.all.size());
      t.all.push_back(cur);
      open = false;
    }
  }
  for (Encoding& e : t.all) build_luts(e);
  for (int fma = 0; fma < 2; ++fma) {
    for (const Encoding& e : t.all)
      if (e.fma == bool(fma)) t.order[fma].push_back(&e);
    std::stable_sort(t.order[fma].begin(), t.order[fma].end(),
                     [](const Encoding* a, const Encoding* b) { return a->mask > b->mask; });
  }
  return t;
}

const Tables& tables() {
  static const Tables t = load();
  return t;
}

uint32_t bits_of(uint32_t w, unsigned start, unsigned size) { return (w >> start) & ((1u << size) - 1); }

unsigned derived_param(const Encoding& e, uint32_t word) {
  unsigned param = 0, shift = 0;
  for (const DerivedDesc& d : e.derived) {
    param |= bits_of(word, d.start, d.size) << shift;
    shift += d.size;
  }
  return param;
}

}  // namespace

uint32_t Encoding::reserved_free(uint32_t word) const {
  for (const DerivedDesc& d : derived)
    if (d.values[bits_of(word, d.start, d.size)].op == Cond::Op::Reserved) return 0;
  return 1;
}

const std::vector<Encoding>& encodings() { return tables().all; }
std::string_view table_xml_sha256() { return tables().sha; }
const std::vector<const Encoding*>& decode_order(bool fma) { return tables().order[fma ? 1 : 0]; }

const Encoding* match(uint32_t word, bool fma) {
  for (const Encoding* e : decode_order(fma))
    if ((word & e->mask) == e->exact && e->reserved_free(word)) return e;
  return nullptr;
}

bool ordering_gt(const Encoding& e, uint32_t word) {
  if (e.srcs.size() < 2) return false;
  return bits_of(word, e.srcs[0].start, 3) > bits_of(word, e.srcs[1].start, 3);
}

std::vector<int> decode_mods(const Encoding& e, uint32_t word) {
  std::vector<int> out(e.mods.size(), 0);
  const auto& back = e.back[e.ordered && ordering_gt(e, word) ? 1 : 0];
  const std::vector<int>* ctx = nullptr;
  if (!back.empty()) {
    const auto& c = back[derived_param(e, word)];
    if (!c.empty()) ctx = &c;
  }
  for (size_t i = 0; i < e.mods.size(); ++i) {
    const ModDesc& m = e.mods[i];
    if (m.start >= 0) {
      out[i] = int(bits_of(word, unsigned(m.start), m.size));
      continue;
    }
    out[i] = -1;
    for (size_t k = 0; k < e.keys.size(); ++k)
      if (e.keys[k] == int(i) && ctx) out[i] = (*ctx)[k];
  }
  return out;
}

bool encode(const Encoding& e, const std::vector<unsigned>& src_values, const std::vector<int>& mod_values,
            const std::vector<uint32_t>& imm_values, uint32_t& word) {
  uint32_t w = e.exact;
  for (size_t i = 0; i < e.srcs.size(); ++i) w |= (src_values.at(i) & 7u) << e.srcs[i].start;
  for (size_t i = 0; i < e.imms.size(); ++i) {
    uint32_t v = imm_values.at(i);
    if (e.imms[i].size < 32 && (v >> e.imms[i].size) != 0) return false;
    w |= v << e.imms[i].start;
  }
  for (size_t i = 0; i < e.mods.size(); ++i) {
    const ModDesc& m = e.mods[i];
    if (m.start >= 0) {
      if (mod_values.at(i) < 0) return false;
      w |= uint32_t(mod_values[i]) << m.start;
    }
  }
  if (!e.keys.empty() || e.derived_bits) {
    const auto& back = e.back[e.ordered && ordering_gt(e, w) ? 1 : 0];
    int best = -1;
    bool best_full = false;
    for (size_t p = 0; p < back.size(); ++p) {
      const auto& c = back[p];
      if (c.empty()) continue;
      bool ok = true, full = true;
      for (size_t k = 0; k < e.keys.size(); ++k) {
        const ModDesc& m = e.mods[e.keys[k]];
        if (m.start >= 0) {
          if (c[k] != mod_values[e.keys[k]]) full = false;
        } else if (c[k] != mod_values[e.keys[k]]) {
          ok = false;
        }
      }
      if (!ok) continue;
      if (best < 0 || (full && !best_full)) {
        best = int(p);
        best_full = full;
      }
    }
    if (best < 0) return false;
    unsigned shift = 0;
    for (const DerivedDesc& d : e.derived) {
      w |= ((unsigned(best) >> shift) & ((1u << d.size) - 1)) << d.start;
      shift += d.size;
    }
  }
  word = w;
  return true;
}

}  // namespace gpurc::bifrost
