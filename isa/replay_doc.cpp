#include "isa/replay_doc.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "ir/float_bits.h"

namespace gpurc::replay {

namespace {

struct ElemInfo {
  ElemType type;
  const char* name;
  unsigned bytes;
  bool is_float, is_signed;
};
constexpr ElemInfo kElems[] = {
    {ElemType::U8, "u8", 1, false, false},   {ElemType::I8, "i8", 1, false, true},
    {ElemType::U16, "u16", 2, false, false}, {ElemType::I16, "i16", 2, false, true},
    {ElemType::F16, "f16", 2, true, true},   {ElemType::U32, "u32", 4, false, false},
    {ElemType::I32, "i32", 4, false, true},  {ElemType::F32, "f32", 4, true, true},
    {ElemType::U64, "u64", 8, false, false}, {ElemType::I64, "i64", 8, false, true},
    {ElemType::F64, "f64", 8, true, true},
};
const ElemInfo& info(ElemType t) { return kElems[int(t)]; }

uint64_t width_mask(unsigned bytes) { return bytes >= 8 ? ~0ull : ((1ull << (8 * bytes)) - 1); }

ir::Type float_ir_type(ElemType t) {
  return t == ElemType::F16 ? ir::Type::F16 : t == ElemType::F32 ? ir::Type::F32 : ir::Type::F64;
}

bool parse_hex_u64(const std::string& s, uint64_t& out) {
  if (s.size() < 3 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X') || s.size() > 18) return false;
  out = 0;
  for (size_t i = 2; i < s.size(); ++i) {
    char c = s[i];
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d < 0) return false;
    out = out << 4 | uint64_t(d);
  }
  return true;
}

// splitmix64: a small, fixed generator so "random" inits are the same everywhere.
struct SplitMix {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double unit() { return double(next() >> 11) * 0x1.0p-53; }
};

std::string elem_text(uint64_t bits, ElemType t) {
  json j = elem_to_json(bits, t);
  return j.is_string() ? j.get<std::string>() : j.dump();
}

}  // namespace

bool parse_elem_type(const std::string& s, ElemType& out) {
  for (const auto& e : kElems)
    if (s == e.name) {
      out = e.type;
      return true;
    }
  return false;
}
const char* elem_type_name(ElemType t) { return info(t).name; }
unsigned elem_bytes(ElemType t) { return info(t).bytes; }
bool elem_is_float(ElemType t) { return info(t).is_float; }

uint64_t parse_uint(const json& v, const std::string& where) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer() && v.get<int64_t>() >= 0) return uint64_t(v.get<int64_t>());
  if (v.is_string()) {
    uint64_t x;
    if (parse_hex_u64(v.get<std::string>(), x)) return x;
  }
  throw ReplayError(where + ": expected a non-negative integer or a hex string \"0x...\", got " + v.dump());
}

uint64_t parse_elem(const json& v, ElemType t, const std::string& where) {
  const ElemInfo& e = info(t);
  uint64_t mask = width_mask(e.bytes);
  if (v.is_string()) {
    std::string s = v.get<std::string>();
    uint64_t x;
    if (parse_hex_u64(s, x)) {
      if (x & ~mask) throw ReplayError(where + ": " + s + " does not fit in " + e.name);
      return x;
    }
    if (e.is_float) {
      ir::Type ft = float_ir_type(t);
      if (s == "inf" || s == "+inf") return ir::fbits::from_double(INFINITY, ft, ir::Round::NearestEven);
      if (s == "-inf") return ir::fbits::from_double(-INFINITY, ft, ir::Round::NearestEven);
      if (s == "nan") return ir::fbits::canonical_nan(ft);
    }
    throw ReplayError(where + ": cannot read \"" + s + "\" as " + e.name +
                      (e.is_float ? " (a number, \"inf\", \"-inf\", \"nan\" or hex bits \"0x...\")"
                                  : " (an integer or a hex string \"0x...\")"));
  }
  if (!v.is_number()) throw ReplayError(where + ": expected a number, got " + v.dump());
  if (e.is_float) {
    double d = v.get<double>();
    if (t == ElemType::F64) {
      uint64_t b;
      std::memcpy(&b, &d, 8);
      return b;
    }
    return ir::fbits::from_double(d, float_ir_type(t), ir::Round::NearestEven);
  }
  if (v.is_number_float()) throw ReplayError(where + ": " + v.dump() + " is not an integer (" + e.name + ")");
  if (v.is_number_unsigned()) {
    uint64_t x = v.get<uint64_t>();
    if (x & ~mask) throw ReplayError(where + ": " + v.dump() + " does not fit in " + e.name);
    return x;
  }
  int64_t x = v.get<int64_t>();
  if (e.bytes < 8) {
    int64_t lo = -(int64_t(1) << (8 * e.bytes - 1)), hi = int64_t(width_mask(e.bytes));
    if (x < lo || x > hi) throw ReplayError(where + ": " + v.dump() + " does not fit in " + e.name);
  }
  return uint64_t(x) & mask;
}

json elem_to_json(uint64_t bits, ElemType t) {
  const ElemInfo& e = info(t);
  bits &= width_mask(e.bytes);
  if (e.is_float) {
    ir::Type ft = float_ir_type(t);
    if (ir::fbits::is_nan(bits, ft))
      return bits == ir::fbits::canonical_nan(ft) ? json("nan") : json(fmt::format("0x{:0{}X}", bits, e.bytes * 2));
    double d = ir::fbits::to_double(bits, ft);
    if (std::isinf(d)) return d > 0 ? json("inf") : json("-inf");
    if (t == ElemType::F32) return json(double(float(d)));
    return json(d);
  }
  if (e.is_signed) {
    unsigned sh = 64 - 8 * e.bytes;
    return json(int64_t(bits << sh) >> sh);
  }
  return json(bits);
}

TypedValues parse_typed(const json& obj, const std::string& where, const std::vector<std::string>& ignore) {
  if (!obj.is_object()) throw ReplayError(where + ": expected an object such as {\"u32\": [...]}");
  TypedValues out;
  bool found = false;
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    if (std::find(ignore.begin(), ignore.end(), it.key()) != ignore.end()) continue;
    ElemType t;
    // "<type>xN" (e.g. "f32x4", pica200 outputs): a list of N-element rows, flattened row by row.
    size_t row = 0;
    std::string key = it.key();
    if (size_t x = key.rfind('x'); !parse_elem_type(key, t) && x != std::string::npos && x + 1 < key.size() &&
                                   key.find_first_not_of("0123456789", x + 1) == std::string::npos &&
                                   key.size() - x <= 3 && parse_elem_type(key.substr(0, x), t)) {
      row = std::stoul(key.substr(x + 1));
      if (row < 2) throw ReplayError(where + ": unknown key \"" + key + "\"");
    }
    if (!row && !parse_elem_type(key, t)) throw ReplayError(where + ": unknown key \"" + key + "\"");
    if (found) throw ReplayError(where + ": more than one value list");
    if (!it.value().is_array()) throw ReplayError(where + "." + key + ": expected an array");
    found = true;
    out.type = t;
    size_t i = 0;
    for (const json& v : it.value()) {
      std::string at = where + "." + key + "[" + std::to_string(i) + "]";
      if (!row) {
        out.bits.push_back(parse_elem(v, t, at));
      } else {
        if (!v.is_array() || v.size() != row)
          throw ReplayError(at + ": expected a row of " + std::to_string(row) + " values");
        for (size_t j = 0; j < row; ++j) out.bits.push_back(parse_elem(v[j], t, at + "[" + std::to_string(j) + "]"));
      }
      ++i;
    }
  }
  if (!found) throw ReplayError(where + ": no value list (u8, u16, i16, u32, i32, f32, u64, i64, f64, f16)");
  return out;
}

std::vector<uint8_t> to_bytes(const TypedValues& v) {
  unsigned n = elem_bytes(v.type);
  std::vector<uint8_t> out(v.bits.size() * n);
  for (size_t i = 0; i < v.bits.size(); ++i) std::memcpy(out.data() + i * n, &v.bits[i], n);  // little-endian host
  return out;
}

std::vector<uint8_t> parse_hex_bytes(const std::string& hex, const std::string& where) {
  std::vector<uint8_t> out;
  int pending = -1;
  for (size_t i = 0; i < hex.size(); ++i) {
    char c = hex[i];
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == ',') continue;
    if (c == '0' && i + 1 < hex.size() && (hex[i + 1] == 'x' || hex[i + 1] == 'X') && pending < 0) {
      ++i;
      continue;
    }
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d < 0) throw ReplayError(where + ": '" + std::string(1, c) + "' at offset " + std::to_string(i) + " is not a hex digit");
    if (pending < 0) {
      pending = d;
    } else {
      out.push_back(uint8_t(pending << 4 | d));
      pending = -1;
    }
  }
  if (pending >= 0) throw ReplayError(where + ": odd number of hex digits");
  return out;
}

std::vector<uint8_t> init_bytes(const json& init, uint64_t size, const std::string& where) {
  if (!init.is_object() || init.size() != 1) throw ReplayError(where + ": expected an object with one key");
  const std::string key = init.begin().key();
  const json& v = init.begin().value();
  std::vector<uint8_t> out;
  if (key == "hex") {
    if (!v.is_string()) throw ReplayError(where + ".hex: expected a string");
    out = parse_hex_bytes(v.get<std::string>(), where + ".hex");
  } else if (key == "fill") {
    // The pattern's width follows the hex digits given ("0xAB" bytes, "0xABCD"
    // halves, up to 8 digits words, more: 64-bit); a JSON integer is a u32.
    uint64_t pat = parse_uint(v, where + ".fill");
    unsigned w = 4;
    if (v.is_string()) {
      size_t digits = v.get<std::string>().size() - 2;
      w = digits <= 2 ? 1 : digits <= 4 ? 2 : digits <= 8 ? 4 : 8;
    } else if (pat > 0xffffffffu) {
      w = 8;
    }
    out.resize(size_t(size));
    for (uint64_t i = 0; i + w <= size; i += w) std::memcpy(out.data() + i, &pat, w);
  } else if (key == "iota") {
    ElemType t;
    if (!v.is_string() || !parse_elem_type(v.get<std::string>(), t))
      throw ReplayError(where + ".iota: expected an element type such as \"u32\"");
    unsigned n = elem_bytes(t);
    out.resize(size_t(size));
    for (uint64_t i = 0; (i + 1) * n <= size; ++i) {
      uint64_t bits = elem_is_float(t) ? ir::fbits::from_double(double(i), float_ir_type(t), ir::Round::NearestEven) : i;
      std::memcpy(out.data() + i * n, &bits, n);
    }
  } else if (key == "random") {
    if (!v.is_object()) throw ReplayError(where + ".random: expected an object");
    SplitMix rng{v.contains("seed") ? parse_uint(v["seed"], where + ".random.seed") : 1};
    ElemType t = ElemType::U32;
    if (v.contains("type") && (!v["type"].is_string() || !parse_elem_type(v["type"].get<std::string>(), t)))
      throw ReplayError(where + ".random.type: expected an element type such as \"f32\"");
    unsigned n = elem_bytes(t);
    bool has_range = v.contains("min") || v.contains("max");
    double lo = v.contains("min") ? v["min"].get<double>() : 0.0, hi = v.contains("max") ? v["max"].get<double>() : 1.0;
    if (has_range && !(lo <= hi)) throw ReplayError(where + ".random: min is greater than max");
    out.resize(size_t(size));
    for (uint64_t i = 0; (i + 1) * n <= size; ++i) {
      uint64_t bits;
      if (elem_is_float(t)) {
        bits = ir::fbits::from_double(lo + (hi - lo) * rng.unit(), float_ir_type(t), ir::Round::NearestEven);
      } else if (has_range) {
        double span = std::floor(hi) - std::ceil(lo) + 1;
        bits = uint64_t(int64_t(std::ceil(lo) + std::floor(rng.unit() * span)));
      } else {
        bits = rng.next();
      }
      std::memcpy(out.data() + i * n, &bits, n);
    }
  } else {
    ElemType t;
    if (!parse_elem_type(key, t))
      throw ReplayError(where + ": unknown init kind \"" + key + "\" (u32, i32, f32, u8, ..., hex, fill, random, iota)");
    out = to_bytes(parse_typed(init, where));
  }
  if (out.size() > size)
    throw ReplayError(where + ": " + std::to_string(out.size()) + " bytes of initial data do not fit in " +
                      std::to_string(size) + " bytes");
  return out;
}

void load_memory(const json& doc, rt::Memory& mem) {
  if (!doc.contains("memory")) return;
  const json& list = doc["memory"];
  if (!list.is_array()) throw ReplayError("memory: expected an array of buffers");
  for (size_t i = 0; i < list.size(); ++i) {
    const json& b = list[i];
    std::string where = "memory[" + std::to_string(i) + "]";
    if (!b.is_object()) throw ReplayError(where + ": expected an object");
    if (!b.contains("name") || !b["name"].is_string()) throw ReplayError(where + ".name: missing or not a string");
    std::string name = b["name"].get<std::string>();
    where = "memory[" + std::to_string(i) + "] (" + name + ")";
    ir::Space space = ir::Space::Global;
    if (b.contains("space") && (!b["space"].is_string() || !rt::parse_space(b["space"].get<std::string>(), space)))
      throw ReplayError(where + ".space: expected global, shared, local or const");
    if (!b.contains("size")) throw ReplayError(where + ".size: missing");
    uint64_t size = parse_uint(b["size"], where + ".size");
    uint64_t address = b.contains("address") ? parse_uint(b["address"], where + ".address") : 0;
    std::string err;
    if (!mem.add_buffer(name, space, address, size, err)) throw ReplayError("memory: " + err);
    if (b.contains("init")) {
      std::vector<uint8_t> bytes = init_bytes(b["init"], size, where + ".init");
      if (!bytes.empty()) std::memcpy(mem.find(name)->data(), bytes.data(), bytes.size());
    }
  }
}

rt::Dim3 parse_dim3(const json& v, const std::string& where) {
  rt::Dim3 d;
  if (v.is_number()) {
    d.x = uint32_t(parse_uint(v, where));
    if (d.x == 0) throw ReplayError(where + ": dimensions must be at least 1");
    return d;
  }
  if (!v.is_array() || v.empty() || v.size() > 3) throw ReplayError(where + ": expected [x, y, z] (1 to 3 numbers)");
  uint32_t* dims[3] = {&d.x, &d.y, &d.z};
  for (size_t i = 0; i < v.size(); ++i) {
    uint64_t x = parse_uint(v[i], where + "[" + std::to_string(i) + "]");
    if (x == 0 || x > 0xffffffffu) throw ReplayError(where + "[" + std::to_string(i) + "]: must be 1 to 2^32-1");
    *dims[i] = uint32_t(x);
  }
  return d;
}

rt::LaunchConfig parse_launch(const json& launch) {
  rt::LaunchConfig cfg;
  cfg.budget = kDefaultReplayBudget;
  if (!launch.is_object()) throw ReplayError("launch: expected an object {\"grid\": [...], \"block\": [...]}");
  for (auto it = launch.begin(); it != launch.end(); ++it)
    if (it.key() != "grid" && it.key() != "block" && it.key() != "shared_bytes" && it.key() != "budget")
      throw ReplayError("launch." + it.key() + ": unknown field (grid, block, shared_bytes, budget)");
  if (launch.contains("grid")) cfg.grid = parse_dim3(launch["grid"], "launch.grid");
  if (launch.contains("block")) cfg.block = parse_dim3(launch["block"], "launch.block");
  if (cfg.block.count() > 1024 * 1024) throw ReplayError("launch.block: more than 2^20 threads in a block");
  if (const uint64_t threads = cfg.grid.count() * cfg.block.count(); threads > kMaxReplayThreads)
    throw ReplayError(fmt::format("launch: {} threads in the grid ({} blocks of {}), more than a replay runs (2^28)",
                                  threads, cfg.grid.count(), cfg.block.count()));
  if (launch.contains("shared_bytes")) {
    cfg.shared_bytes = parse_uint(launch["shared_bytes"], "launch.shared_bytes");
    if (cfg.shared_bytes > (uint64_t(1) << 30)) throw ReplayError("launch.shared_bytes: more than 1 GiB");
    if (std::string e = rt::check_memory(cfg.shared_bytes, "launch.shared_bytes"); !e.empty()) throw ReplayError(e);
  }
  if (launch.contains("budget")) {
    uint64_t b = parse_uint(launch["budget"], "launch.budget");
    cfg.budget = int64_t(std::min<uint64_t>(b, uint64_t(1) << 62));
  }
  return cfg;
}

const Observed* ReplayRun::find(const std::string& kind, const std::string& name) const {
  for (const auto& o : observed)
    if (o.kind == kind && o.name == name) return &o;
  return nullptr;
}

json Mismatch::to_json() const { return json{{"what", what}, {"expected", expected}, {"actual", actual}}; }

bool elem_matches(uint64_t expected, uint64_t actual, ElemType t, uint64_t ulp) {
  const ElemInfo& e = info(t);
  uint64_t m = width_mask(e.bytes);
  expected &= m;
  actual &= m;
  if (expected == actual) return true;
  if (!e.is_float) return false;
  ir::Type ft = float_ir_type(t);
  bool en = ir::fbits::is_nan(expected, ft), an = ir::fbits::is_nan(actual, ft);
  if (en || an) return en && an;
  if (ulp == 0) return false;
  // Map to a monotonic integer line (-0 and +0 both 0) and measure the distance.
  uint64_t sign = 1ull << (8 * e.bytes - 1);
  auto key = [&](uint64_t b) { return (b & sign) ? -int64_t(b & ~sign) : int64_t(b); };
  int64_t a = key(expected), b = key(actual);
  uint64_t dist = a > b ? uint64_t(a) - uint64_t(b) : uint64_t(b) - uint64_t(a);
  return dist <= ulp;
}

namespace {

uint64_t read_elem(const std::vector<uint8_t>& bytes, size_t i, unsigned n) {
  uint64_t v = 0;
  std::memcpy(&v, bytes.data() + i * n, n);
  return v;
}

void check_list(const std::string& label, const TypedValues& want, const Observed& got, uint64_t ulp,
                std::vector<Mismatch>& out) {
  unsigned n = elem_bytes(want.type);
  size_t avail = got.bytes.size() / n;
  for (size_t i = 0; i < want.bits.size(); ++i) {
    std::string what = label + "[" + std::to_string(i) + "]";
    if (i >= avail) {
      out.push_back({what, elem_text(want.bits[i], want.type), "(past the end)"});
      continue;
    }
    uint64_t a = read_elem(got.bytes, i, n);
    if (!elem_matches(want.bits[i], a, want.type, ulp))
      out.push_back({what, elem_text(want.bits[i], want.type), elem_text(a, want.type)});
  }
}

}  // namespace

std::vector<Mismatch> check_expect(const json& doc, const ReplayRun& run) {
  std::vector<Mismatch> out;
  if (!doc.contains("expect")) return out;
  const json& ex = doc["expect"];
  if (!ex.is_object()) throw ReplayError("expect: expected an object");
  uint64_t ulp = 0;
  if (ex.contains("tolerance")) {
    const json& t = ex["tolerance"];
    if (!t.is_object()) throw ReplayError("expect.tolerance: expected {\"ulp\": n}");
    if (t.contains("ulp")) ulp = parse_uint(t["ulp"], "expect.tolerance.ulp");
  }
  for (auto it = ex.begin(); it != ex.end(); ++it) {
    const std::string& kind = it.key();
    if (kind == "tolerance") continue;
    const json& v = it.value();
    if (kind == "memory") {
      if (!v.is_array()) throw ReplayError("expect.memory: expected an array of {\"name\": ..., \"<type>\": [...]}");
      for (size_t i = 0; i < v.size(); ++i) {
        std::string where = "expect.memory[" + std::to_string(i) + "]";
        if (!v[i].is_object() || !v[i].contains("name") || !v[i]["name"].is_string())
          throw ReplayError(where + ".name: missing or not a string");
        std::string name = v[i]["name"].get<std::string>();
        const Observed* o = run.find("memory", name);
        if (!o) throw ReplayError(where + ": no memory buffer named '" + name + "'");
        TypedValues want = parse_typed(v[i], where, {"name", "offset"});
        Observed view = *o;
        if (v[i].contains("offset")) {
          uint64_t off = parse_uint(v[i]["offset"], where + ".offset");
          if (off > view.bytes.size()) throw ReplayError(where + ".offset: past the end of the buffer");
          view.bytes.erase(view.bytes.begin(), view.bytes.begin() + ptrdiff_t(off));
        }
        check_list("memory " + name, want, view, ulp, out);
      }
    } else {
      // vars / outputs / registers: {"name": {"<type>": [...]}}
      if (!v.is_object()) throw ReplayError("expect." + kind + ": expected an object of named value lists");
      for (auto jt = v.begin(); jt != v.end(); ++jt) {
        std::string where = "expect." + kind + "." + jt.key();
        const Observed* o = run.find(kind, jt.key());
        if (!o) throw ReplayError(where + ": the run produced no " + kind + " named '" + jt.key() + "'");
        check_list(kind + " " + jt.key(), parse_typed(jt.value(), where), *o, ulp, out);
      }
    }
  }
  return out;
}

std::vector<Mismatch> compare_runs(const ReplayRun& a, const ReplayRun& b, size_t limit) {
  std::vector<Mismatch> out;
  std::string who = a.engine + " vs " + b.engine + ": ";
  if (a.fault.has_value() != b.fault.has_value() || (a.fault && *a.fault != *b.fault))
    out.push_back({who + "fault", a.fault.value_or("none"), b.fault.value_or("none")});
  for (const Observed& x : a.observed) {
    const Observed* y = b.find(x.kind, x.name);
    if (!y) {
      out.push_back({who + x.kind + " " + x.name, "present", "missing"});
      continue;
    }
    unsigned n = elem_bytes(x.type);
    size_t count = std::min(x.bytes.size(), y->bytes.size()) / n;
    for (size_t i = 0; i < count && out.size() < limit; ++i) {
      uint64_t va = read_elem(x.bytes, i, n), vb = read_elem(y->bytes, i, n);
      if (va != vb) out.push_back({who + x.kind + " " + x.name + "[" + std::to_string(i) + "]", elem_text(va, x.type), elem_text(vb, x.type)});
    }
    if (x.bytes.size() != y->bytes.size())
      out.push_back({who + x.kind + " " + x.name + " size", std::to_string(x.bytes.size()), std::to_string(y->bytes.size())});
    if (out.size() >= limit) break;
  }
  return out;
}

json observed_to_json(const json& doc, const ReplayRun& run, const std::string& kind) {
  // Display type: the one expect uses for the object, else the observation's.
  auto display_type = [&](const Observed& o) {
    ElemType t = o.type;
    if (!doc.contains("expect") || !doc["expect"].is_object() || !doc["expect"].contains(kind)) return t;
    const json& e = doc["expect"][kind];
    auto pick = [&](const json& obj) {
      if (!obj.is_object()) return;
      for (auto it = obj.begin(); it != obj.end(); ++it) {
        ElemType x;
        if (parse_elem_type(it.key(), x)) t = x;
      }
    };
    if (e.is_array()) {
      for (const json& m : e)
        if (m.is_object() && m.contains("name") && m["name"] == o.name) pick(m);
    } else if (e.is_object() && e.contains(o.name)) {
      pick(e[o.name]);
    }
    return t;
  };
  json out = json::object();
  for (const Observed& o : run.observed) {
    if (o.kind != kind) continue;
    ElemType t = display_type(o);
    unsigned n = elem_bytes(t);
    json list = json::array();
    for (size_t i = 0; (i + 1) * n <= o.bytes.size(); ++i) list.push_back(elem_to_json(read_elem(o.bytes, i, n), t));
    out[o.name] = json{{elem_type_name(t), std::move(list)}};
  }
  return out;
}

json load_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ReplayError(path.string() + ": cannot open");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_document(ss.str(), path.string());
}

json parse_document(const std::string& text, const std::string& where) {
  // The parser itself is iterative, but printing a value (error messages
  // quote them) and comparing recurse once per level: a hostile document
  // nested a million levels deep would overflow the stack. Replay documents
  // nest a handful of levels.
  constexpr int kMaxDepth = 64;
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxDepth)
        throw ReplayError(fmt::format("{}: arrays and objects nested deeper than {} levels (offset {})", where,
                                      kMaxDepth, i));
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    // parse_error, and out_of_range for a number the parser cannot hold
    // (e.g. 82e20000): both are the input's fault, not a crash.
    throw ReplayError(where + ": not valid JSON: " + e.what());
  }
  if (!doc.is_object()) throw ReplayError(where + ": expected a JSON object");
  if (!doc.contains("gpurc")) throw ReplayError("gpurc: missing (the format version, 1)");
  if (doc["gpurc"] != 1) throw ReplayError("gpurc: unsupported format version " + doc["gpurc"].dump() + " (expected 1)");
  if (!doc.contains("isa") || !doc["isa"].is_string()) throw ReplayError("isa: missing or not a string");
  return doc;
}

std::string program_text(const json& doc, const std::filesystem::path& dir) {
  if (!doc.contains("program") || !doc["program"].is_object()) throw ReplayError("program: missing or not an object");
  const json& p = doc["program"];
  bool has_asm = p.contains("asm"), has_file = p.contains("asm_file");
  if (has_asm == has_file) throw ReplayError("program: give exactly one of \"asm\" and \"asm_file\"");
  if (has_asm) {
    if (!p["asm"].is_string()) throw ReplayError("program.asm: expected a string");
    return p["asm"].get<std::string>();
  }
  if (!p["asm_file"].is_string()) throw ReplayError("program.asm_file: expected a string");
  std::filesystem::path f = dir / p["asm_file"].get<std::string>();
  std::ifstream in(f, std::ios::binary);
  if (!in) throw ReplayError("program.asm_file: cannot open " + f.string());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<uint8_t> program_bytes(const json& doc, const std::filesystem::path& dir, const std::string& isa,
                                   const Assembler& assemble) {
  if (!doc.contains("program") || !doc["program"].is_object()) throw ReplayError("program: missing or not an object");
  const json& p = doc["program"];
  for (auto it = p.begin(); it != p.end(); ++it)
    if (it.key() != "asm" && it.key() != "asm_file" && it.key() != "bytes" && it.key() != "binary_file" &&
        it.key() != "entry")
      throw ReplayError("program." + it.key() + ": unknown field for isa " + isa +
                        " (asm, asm_file, bytes, binary_file, entry)");
  const int sources = int(p.contains("asm")) + int(p.contains("asm_file")) + int(p.contains("bytes")) +
                      int(p.contains("binary_file"));
  if (sources != 1) throw ReplayError("program: give exactly one of \"asm\", \"asm_file\", \"bytes\", \"binary_file\"");
  std::vector<uint8_t> code;
  if (p.contains("bytes")) {
    if (!p["bytes"].is_string()) throw ReplayError("program.bytes: expected a hex string");
    code = parse_hex_bytes(p["bytes"].get<std::string>(), "program.bytes");
  } else if (p.contains("binary_file")) {
    if (!p["binary_file"].is_string()) throw ReplayError("program.binary_file: expected a string");
    std::filesystem::path f = dir / p["binary_file"].get<std::string>();
    std::ifstream in(f, std::ios::binary);
    if (!in) throw ReplayError("program.binary_file: cannot open " + f.string());
    code.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  } else {
    std::string err;
    if (!assemble(program_text(doc, dir), code, err)) throw ReplayError("program: " + err);
  }
  if (code.empty()) throw ReplayError("program: no code");
  return code;
}

}  // namespace gpurc::replay
