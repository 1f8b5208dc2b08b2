// ARM Mali Bifrost: the FMA/ADD instruction encodings, as data.
//
// The table (isa_table.inc) is generated from Mesa's ISA.xml by
// tools/gen_isa_table.py; this file parses it once and derives from it the
// decoder (priority-ordered mask/exact match with reserved derived fields),
// the modifier tables of indirect modifiers (every combination of the
// modifiers a derived field depends on is evaluated and inverted, as the
// encoding rules in the XML define them) and the encoder. docs/bifrost.md.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace gpurc::bifrost {

// A condition of the XML (<eq>, <neq>, <and>, <or>, alias="true").
struct Cond {
  enum class Op { True, Reserved, Eq, Neq, And, Or, Alias } op = Op::True;
  std::string left, right;  // Eq/Neq operands: a modifier name, "ordering" or "#value"
  std::vector<Cond> kids;
};

struct SrcDesc {
  unsigned start = 0;
  unsigned mask = 0xff;  // legal 3-bit source values (bit v = value v)
};
struct ImmDesc {
  std::string name;
  unsigned start = 0, size = 0;
};
struct ModDesc {
  std::string name;
  int start = -1;                 // -1: indirect (implied by derived fields / the encoding)
  unsigned size = 0;
  std::string dflt;               // printed as nothing; empty + has_default=false: every value prints
  bool has_default = false;
  std::vector<std::string> opts;  // 2^size entries, "reserved" padding
  int src = -1;                   // per-source modifier: printed after that source
};
struct DerivedDesc {
  unsigned start = 0, size = 0;
  std::vector<Cond> values;       // condition for field value i (Reserved = illegal value)
};

// One hardware encoding (an <ins>, or one <encoding> of it).
struct Encoding {
  int index = 0;                  // position in encodings()
  std::string name;               // "*FADD.f32" (the unit prefix is part of the name)
  int variant = 0;                // which <encoding> of the <ins>
  bool fma = false;
  uint32_t mask = 0, exact = 0;
  std::string staging;            // "", "r", "w", "rw"
  std::string message;            // "none", "load", ...
  bool unused = false, last = false, table = false;
  Cond test;
  std::vector<SrcDesc> srcs;
  std::vector<ImmDesc> imms;
  std::vector<ModDesc> mods;
  std::vector<DerivedDesc> derived;

  // Derived at load time: the modifiers the conditions mention (sorted by
  // name), whether "ordering" appears, and per ordering (lt, gt) the table
  // concatenated-derived-field-value -> value index of each key (empty =
  // no combination gives that value: printed "reserved").
  std::vector<int> keys;
  bool ordered = false;
  unsigned derived_bits = 0;
  std::vector<std::vector<int>> back[2];
  uint32_t reserved_free(uint32_t word) const;  // nonzero when no derived field holds a reserved value
};

const std::vector<Encoding>& encodings();
// SHA-256 of the ISA.xml the table came from (recorded by the converter).
std::string_view table_xml_sha256();
// The encoding a 23-bit FMA / 20-bit ADD word decodes as, or null
// (Mesa's rule: largest mask first, file order on ties, skip reserved derived values).
const Encoding* match(uint32_t word, bool fma);
// All encodings of one unit in decode priority order.
const std::vector<const Encoding*>& decode_order(bool fma);

// Decoded modifier values of `word` under `e` (value index into mods[i].opts,
// or -1 for "reserved" of an indirect modifier).
std::vector<int> decode_mods(const Encoding& e, uint32_t word);
// Whether word's src0 field is numerically greater than src1's ("ordering" = gt).
bool ordering_gt(const Encoding& e, uint32_t word);

// Builds a word: exact bits, sources, immediates, direct modifiers, and the
// derived fields that give the requested indirect modifier values under the
// ordering the source fields imply. False when no derived value expresses them.
bool encode(const Encoding& e, const std::vector<unsigned>& src_values, const std::vector<int>& mod_values,
            const std::vector<uint32_t>& imm_values, uint32_t& word);

}  // namespace gpurc::bifrost
