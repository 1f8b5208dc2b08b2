// Names of attribute values and float flags in the IR text form (docs/ir.md),
// shared by the printer and the parser so the two cannot disagree.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "ir/ir.h"

namespace gpurc::ir::text {

struct NameList {
  const char* const* names;
  unsigned count;
};

inline NameList attr_names(AttrKind k) {
  static const char* const sign[] = {"u", "s"};
  static const char* const ipred[] = {"eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"};
  static const char* const fpred[] = {"oeq", "one", "olt", "ole", "ogt", "oge", "ord",
                                      "uno", "ueq", "une", "ult", "ule", "ugt", "uge"};
  static const char* const shift[] = {"mask", "clamp"};
  static const char* const minmax[] = {"number", "nan", "second"};
  static const char* const atomic[] = {"add", "sub", "smin", "smax", "umin", "umax",
                                       "and", "or", "xor", "exch", "inc", "dec"};
  static const char* const reduce[] = {"add", "smin", "smax", "umin", "umax", "and",
                                       "or", "xor", "fadd", "fmin", "fmax"};
  static const char* const transc[] = {"ieee", "pica", "tesla", "g13", "bifrost"};
  switch (k) {
    case AttrKind::Sign: return {sign, 2};
    case AttrKind::IntPred: return {ipred, 10};
    case AttrKind::FloatPred: return {fpred, 14};
    case AttrKind::Shift: return {shift, 2};
    case AttrKind::MinMax: return {minmax, 3};
    case AttrKind::Atomic: return {atomic, 12};
    case AttrKind::Reduce: return {reduce, 11};
    case AttrKind::Transc: return {transc, 5};
    default: return {nullptr, 0};
  }
}
inline const char* const* space_names() {
  static const char* const n[] = {"global", "shared", "local", "const"};
  return n;
}
inline const char* const* addr_class_names() {
  static const char* const n[] = {"random", "uniform", "consecutive"};
  return n;
}
constexpr unsigned kNumAddrClasses = 3;

inline std::string hex(uint64_t v) {
  static const char digits[] = "0123456789abcdef";
  if (v == 0) return "0x0";
  std::string s;
  while (v) {
    s.insert(s.begin(), digits[v & 15]);
    v >>= 4;
  }
  return "0x" + s;
}

// Text of an attribute: "" when the op has no attribute enum and attr is 0;
// a raw "#N" for values without a name.
inline std::string attr_text(AttrKind k, uint8_t a) {
  if (k == AttrKind::Mem) {
    unsigned s = a & 15, c = a >> 4;
    if (s < unsigned(kNumSpaces) && c < kNumAddrClasses)
      return std::string(space_names()[s]) + "." + addr_class_names()[c];
    return "#" + std::to_string(a);
  }
  NameList l = attr_names(k);
  if (l.names && a < l.count) return l.names[a];
  if (!l.names && a == 0) return "";
  return "#" + std::to_string(a);
}

inline bool parse_uint(std::string_view s, uint64_t& out) {
  if (s.empty()) return false;
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) base = 16, s.remove_prefix(2);
  uint64_t v = 0;
  for (char ch : s) {
    int d = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
          : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : 99;
    if (d >= base) return false;
    if (v > (~0ull - uint64_t(d)) / uint64_t(base)) return false;
    v = v * uint64_t(base) + uint64_t(d);
  }
  out = v;
  return true;
}

inline bool parse_attr(AttrKind k, std::string_view s, uint8_t& out) {
  if (!s.empty() && s[0] == '#') {
    uint64_t v;
    if (!parse_uint(s.substr(1), v) || v > 255) return false;
    out = uint8_t(v);
    return true;
  }
  if (k == AttrKind::Mem) {
    size_t dot = s.find('.');
    if (dot == std::string_view::npos) return false;
    std::string_view sp = s.substr(0, dot), cl = s.substr(dot + 1);
    for (unsigned i = 0; i < unsigned(kNumSpaces); ++i)
      for (unsigned c = 0; c < kNumAddrClasses; ++c)
        if (sp == space_names()[i] && cl == addr_class_names()[c]) {
          out = mem_attr(Space(i), AddrClass(c));
          return true;
        }
    return false;
  }
  NameList l = attr_names(k);
  for (unsigned i = 0; i < l.count; ++i)
    if (s == l.names[i]) {
      out = uint8_t(i);
      return true;
    }
  return false;
}

inline const char* const* round_names() {
  static const char* const n[] = {"rne", "rtz", "down", "up"};
  return n;
}
inline const char* const* nan_names() {
  static const char* const n[] = {"canonical", "allones", "propagate", "any"};
  return n;
}

// "ftz_in, nan=allones, rnd=rtz" ("" for 0): defaults (canonical, rne) omitted.
inline std::string fflags_text(uint32_t f) {
  std::string s;
  auto add = [&](const std::string& item) { s += (s.empty() ? "" : ", ") + item; };
  if (f & ff::FtzIn) add("ftz_in");
  if (f & ff::FtzOut) add("ftz_out");
  if (f & ff::Sat) add("sat");
  if (f & ff::ZeroMul) add("zero_mul");
  if (f & ff::NanMask) add(std::string("nan=") + nan_names()[(f & ff::NanMask) >> ff::NanShift]);
  if (f & ff::RoundMask) add(std::string("rnd=") + round_names()[(f & ff::RoundMask) >> ff::RoundShift]);
  uint32_t known = ff::FtzIn | ff::FtzOut | ff::Sat | ff::ZeroMul | ff::NanMask | ff::RoundMask;
  if (f & ~known) add("bits=" + hex(f & ~known));
  return s;
}

// One item of a flag list; ORs it into f.
inline bool parse_fflag(std::string_view item, uint32_t& f) {
  if (item == "ftz_in") return f |= ff::FtzIn, true;
  if (item == "ftz_out") return f |= ff::FtzOut, true;
  if (item == "sat") return f |= ff::Sat, true;
  if (item == "zero_mul") return f |= ff::ZeroMul, true;
  if (item.substr(0, 4) == "nan=") {
    for (uint32_t i = 0; i < 4; ++i)
      if (item.substr(4) == nan_names()[i]) return f |= i << ff::NanShift, true;
    return false;
  }
  if (item.substr(0, 4) == "rnd=") {
    for (uint32_t i = 0; i < 4; ++i)
      if (item.substr(4) == round_names()[i]) return f |= i << ff::RoundShift, true;
    return false;
  }
  if (item.substr(0, 5) == "bits=") {
    uint64_t v;
    if (!parse_uint(item.substr(5), v) || v > 0xffffffffu) return false;
    f |= uint32_t(v);
    return true;
  }
  return false;
}

// Names are printed quoted; \" \\ and \xNN escapes keep any bytes round-tripping.
inline std::string quote(std::string_view s) {
  std::string r = "\"";
  for (unsigned char ch : s) {
    if (ch == '"' || ch == '\\') r += '\\', r += char(ch);
    else if (ch < 0x20 || ch >= 0x7f) r += "\\x", r += "0123456789abcdef"[ch >> 4], r += "0123456789abcdef"[ch & 15];
    else r += char(ch);
  }
  return r + "\"";
}

}  // namespace gpurc::ir::text
