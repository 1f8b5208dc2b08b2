// Encodings as data. Each ISA describes its instruction formats once, as a
// table of Encoding entries (fixed bits + named fields); the decoder, the
// assembler's encoder, the disassembler and the fuzzer's random-instruction
// generator are all derived from the same table.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <map>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace gpurc::fe {

// Up to 128 instruction bits; bit 0 is the least significant bit of the first
// little-endian word (or byte) of the instruction.
struct Bits128 {
  uint64_t w[2] = {0, 0};
  uint64_t get(unsigned lo, unsigned width) const;
  void set(unsigned lo, unsigned width, uint64_t v);
  bool operator==(const Bits128& o) const { return w[0] == o.w[0] && w[1] == o.w[1]; }
  Bits128 operator&(const Bits128& o) const { return {{w[0] & o.w[0], w[1] & o.w[1]}}; }
  static Bits128 from_bytes(const uint8_t* p, size_t n);  // little-endian, n <= 16
  void to_bytes(uint8_t* p, size_t n) const;
};

struct FieldPart {
  uint16_t lo;     // first instruction bit of this part
  uint8_t width;   // bits
};

// A named operand field; split fields list their parts from the value's least
// significant part upwards.
struct Field {
  std::string name;
  std::vector<FieldPart> parts;
  bool is_signed = false;
  unsigned width() const;
  uint64_t get(const Bits128& b) const;          // zero-extended value
  int64_t get_signed(const Bits128& b) const;    // sign-extended from width()
  void set(Bits128& b, uint64_t v) const;        // v truncated to width()
};

struct Encoding {
  std::string name;       // form name, unique in its table (e.g. "add.short", "fmadd32")
  int id = 0;             // ISA-specific opcode/form enum value
  unsigned bits = 32;     // instruction length in bits
  Bits128 mask, match;    // (insn & mask) == match selects this encoding
  std::vector<Field> fields;
  const Field* field(std::string_view n) const;
  bool has(std::string_view n) const { return field(n) != nullptr; }
  uint64_t get(const Bits128& b, std::string_view n) const;  // 0 if absent
};

class EncodingTable {
 public:
  // Adds an encoding from a pattern written most significant bit first:
  // '0'/'1' fixed, '-' don't care, a letter = a bit of the field that
  // `letters` names for it; spaces and '_' ignored. Fields whose letters are
  // not contiguous become split fields automatically.
  Encoding& add(std::string name, int id, std::string_view pattern,
                std::initializer_list<std::pair<char, std::string_view>> letters = {});
  // Adds a prepared encoding (for tables built from explicit bit ranges).
  Encoding& add(Encoding e);

  // The matching encoding with the most fixed bits, or null. `available_bits`
  // limits matches to encodings no longer than the bytes the caller has.
  const Encoding* decode(const Bits128& insn, unsigned available_bits = 128) const;
  const Encoding* find(std::string_view name) const;
  // Fixed bits from the encoding, then each named field's value.
  Bits128 encode(const Encoding& e, const std::map<std::string, uint64_t, std::less<>>& fields) const;
  // Random instruction of this encoding: fixed bits set, every field random.
  Bits128 random(const Encoding& e, std::mt19937_64& rng) const;

  const std::vector<Encoding>& all() const { return encodings_; }

 private:
  std::vector<Encoding> encodings_;
};

// A decode or assembly problem, with where it happened.
struct Diagnostic {
  uint64_t address = 0;   // byte offset (g13, bifrost) or word index (pica200, tesla) as the ISA counts
  std::string message;    // names the instruction / encoding
};

}  // namespace gpurc::fe
