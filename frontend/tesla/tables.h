// Internal: the data model of the Tesla encoding tables (tables.cpp) and the
// compiled form the template walker (codec.cpp) runs on.
#pragma once
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "frontend/tesla/encoding.h"

namespace gpurc::tesla::detail {

// Up to two bit ranges, low part first.
struct Field {
  int pos1 = 0, len1 = 0, pos2 = 0, len2 = 0;
  int width() const { return len1 + len2; }
  uint64_t mask() const {
    auto m = [](int p, int l) { return l ? (((1ull << l) - 1) << p) : 0ull; };
    return m(pos1, len1) | m(pos2, len2);
  }
  uint64_t get(uint64_t w) const {
    uint64_t v = len1 ? (w >> pos1) & ((1ull << len1) - 1) : 0;
    if (len2) v |= ((w >> pos2) & ((1ull << len2) - 1)) << len1;
    return v;
  }
  uint64_t put(uint64_t w, uint64_t v) const {
    w &= ~mask();
    if (len1) w |= (v & ((1ull << len1) - 1)) << pos1;
    if (len2) w |= ((v >> len1) & ((1ull << len2) - 1)) << pos2;
    return w;
  }
};

// A primitive operand: how its bits map to an Operand.
struct Prim {
  enum Type { Reg, Imm, Target, Mem, Vec, Discard } type = Reg;
  std::string name;
  Role role = Role::Other;
  char rclass = 'r';      // Reg: 'r', 'a', 'c', 't', 's', 'S' ($sr)
  RSize size = RSize::W;
  Field f;                // Reg number / Imm value / Mem offset / Vec base
  int shr = 0;            // Imm/Mem: value = field << shr; Vec: count addend
  bool sgn = false;
  char space = 0;         // Mem
  Field idx;              // Mem: space index; Vec: count field
  int aregmode = 0;       // Mem: 0 none, 1 $a0..$a3 (short), 2 $a0..$a7 (long), 3 g[$r]
  bool pi = false;        // Mem: post-increment form
  unsigned access = 4;    // Mem: bytes
  Field vmask;            // Vec: component mask
};

struct RawRow {
  uint64_t val, mask;
  unsigned feat, ptype;
  Op op;
  const char* syn;
};

struct Table;
struct Tok {
  enum Type { Lit, Flag, Choice, Open, Close, Unknown, Ign, Len, Sub, Prim, PredMark } type = Lit;
  std::string name;                 // Lit / Flag name
  std::vector<std::string> names;   // Choice ("-" = invalid)
  int pos = 0, len = 0;             // Flag bit / Choice field / Ign range / Len words
  uint64_t value = 0;               // Ign: the value the assembler writes (what compilers emit)
  unsigned feat = 0;                // Flag: needed features
  const Table* sub = nullptr;
  const detail::Prim* prim = nullptr;
};

struct Row {
  uint64_t val, mask;
  unsigned feat, ptype;
  Op op;
  std::string syn;
  std::vector<Tok> toks;
};

struct Table {
  std::string name;
  std::vector<Row> rows;
  // Derived from the rows by compile(), so the decoder does not test every
  // row of a table against a word: `key` names up to kIndexBits bit
  // positions that many rows' masks test; bucket k (the word's key bits,
  // key[j] giving bit j of k) lists, in table order, the rows that can
  // match a word with those key bits (rows that do not test a key bit are
  // in every bucket of both values). The first row of a bucket that matches
  // is the first row of the table that matches, as a scan would find.
  static constexpr unsigned kIndexBits = 8;
  std::vector<uint8_t> key;
  std::vector<uint32_t> bucket_start;   // 2^key.size() + 1 offsets into bucket_rows
  std::vector<uint16_t> bucket_rows;
  // Roles of the table in the walker, by name ("S", "I", "L", "C": the main
  // tables; "PRED"; "SSH", "ISH", "LSH": operands that stand for 16-bit
  // sources), resolved once instead of per decoded word.
  int main_index = -1;
  bool is_pred = false;
  bool half_ctx = false;
  // The Lit tokens of each row (its own, not its sub-tables'), as a 64-bit
  // set of name hashes: the assembler skips a row whose words are not all
  // among the text's (a row's literals must each match an atom).
  std::vector<uint64_t> row_lits;
};
// The hash bit of a literal word in Table::row_lits.
uint64_t lit_bit(const std::string& word);

struct Tables {
  std::map<std::string, Prim> prims;
  std::map<std::string, std::vector<RawRow>> raw;
  std::map<std::string, Table> tabs;
  std::deque<std::string> strings;   // storage for generated syntax strings
  void compile();                    // raw -> tabs (throws on a malformed template)
  static void index(Table& tb);      // a compiled table's lookup structures (Table)
  const Table& get(const std::string& n) const { return tabs.at(n); }
};

const Tables& tables();

}  // namespace gpurc::tesla::detail
