#include "frontend/common/encoding.h"

#include <stdexcept>

namespace gpurc::fe {

uint64_t Bits128::get(unsigned lo, unsigned width) const {
  uint64_t v = 0;
  for (unsigned i = 0; i < width; ++i) {
    unsigned bit = lo + i;
    v |= ((w[bit >> 6] >> (bit & 63)) & 1ull) << i;
  }
  return v;
}

void Bits128::set(unsigned lo, unsigned width, uint64_t v) {
  for (unsigned i = 0; i < width; ++i) {
    unsigned bit = lo + i;
    uint64_t m = 1ull << (bit & 63);
    if ((v >> i) & 1) w[bit >> 6] |= m; else w[bit >> 6] &= ~m;
  }
}

Bits128 Bits128::from_bytes(const uint8_t* p, size_t n) {
  Bits128 b;
  for (size_t i = 0; i < n && i < 16; ++i) b.w[i >> 3] |= uint64_t(p[i]) << ((i & 7) * 8);
  return b;
}

void Bits128::to_bytes(uint8_t* p, size_t n) const {
  for (size_t i = 0; i < n && i < 16; ++i) p[i] = uint8_t(w[i >> 3] >> ((i & 7) * 8));
}

unsigned Field::width() const {
  unsigned n = 0;
  for (auto& p : parts) n += p.width;
  return n;
}

uint64_t Field::get(const Bits128& b) const {
  uint64_t v = 0;
  unsigned shift = 0;
  for (auto& p : parts) {
    v |= b.get(p.lo, p.width) << shift;
    shift += p.width;
  }
  return v;
}

int64_t Field::get_signed(const Bits128& b) const {
  unsigned w = width();
  uint64_t v = get(b);
  if (w == 0 || w >= 64) return int64_t(v);
  uint64_t sign = 1ull << (w - 1);
  return int64_t((v ^ sign) - sign);
}

void Field::set(Bits128& b, uint64_t v) const {
  unsigned shift = 0;
  for (auto& p : parts) {
    b.set(p.lo, p.width, v >> shift);
    shift += p.width;
  }
}

const Field* Encoding::field(std::string_view n) const {
  for (auto& f : fields)
    if (f.name == n) return &f;
  return nullptr;
}

uint64_t Encoding::get(const Bits128& b, std::string_view n) const {
  const Field* f = field(n);
  return f ? f->get(b) : 0;
}

Encoding& EncodingTable::add(std::string name, int id, std::string_view pattern,
                             std::initializer_list<std::pair<char, std::string_view>> letters) {
  Encoding e;
  e.name = std::move(name);
  e.id = id;
  std::string bits;
  for (char c : pattern)
    if (c != ' ' && c != '_') bits.push_back(c);
  e.bits = unsigned(bits.size());
  if (e.bits > 128) throw std::logic_error("encoding longer than 128 bits: " + e.name);
  auto field_name = [&](char c) {
    for (auto& [l, n] : letters)
      if (l == c) return std::string(n);
    return std::string(1, c);
  };
  // Walk from the least significant bit (end of the string) so parts come out low first.
  for (unsigned i = 0; i < e.bits; ++i) {
    char c = bits[e.bits - 1 - i];
    if (c == '0' || c == '1') {
      e.mask.set(i, 1, 1);
      e.match.set(i, 1, c == '1');
      continue;
    }
    if (c == '-') continue;
    std::string fname = field_name(c);
    Field* f = nullptr;
    for (auto& fld : e.fields)
      if (fld.name == fname) f = &fld;
    if (!f) {
      e.fields.push_back(Field{fname, {}, false});
      f = &e.fields.back();
    }
    if (!f->parts.empty() && f->parts.back().lo + f->parts.back().width == i)
      f->parts.back().width++;
    else
      f->parts.push_back(FieldPart{uint16_t(i), 1});
  }
  return add(std::move(e));
}

Encoding& EncodingTable::add(Encoding e) {
  for (auto& x : encodings_)
    if (x.name == e.name) throw std::logic_error("duplicate encoding name: " + e.name);
  encodings_.push_back(std::move(e));
  return encodings_.back();
}

static int popcount128(const Bits128& b) { return __builtin_popcountll(b.w[0]) + __builtin_popcountll(b.w[1]); }

const Encoding* EncodingTable::decode(const Bits128& insn, unsigned available_bits) const {
  const Encoding* best = nullptr;
  int best_bits = -1;
  for (auto& e : encodings_) {
    if (e.bits > available_bits) continue;
    if (!((insn & e.mask) == e.match)) continue;
    int n = popcount128(e.mask);
    if (n > best_bits) {
      best = &e;
      best_bits = n;
    }
  }
  return best;
}

const Encoding* EncodingTable::find(std::string_view name) const {
  for (auto& e : encodings_)
    if (e.name == name) return &e;
  return nullptr;
}

Bits128 EncodingTable::encode(const Encoding& e, const std::map<std::string, uint64_t, std::less<>>& fields) const {
  Bits128 b = e.match;
  for (auto& [n, v] : fields) {
    const Field* f = e.field(n);
    if (!f) throw std::invalid_argument("encoding " + e.name + " has no field " + n);
    f->set(b, v);
  }
  return b;
}

Bits128 EncodingTable::random(const Encoding& e, std::mt19937_64& rng) const {
  Bits128 b;
  b.w[0] = rng();
  b.w[1] = rng();
  if (e.bits < 128) {
    if (e.bits <= 64) {
      b.w[1] = 0;
      if (e.bits < 64) b.w[0] &= (1ull << e.bits) - 1;
    } else {
      b.w[1] &= (1ull << (e.bits - 64)) - 1;
    }
  }
  b.w[0] = (b.w[0] & ~e.mask.w[0]) | e.match.w[0];
  b.w[1] = (b.w[1] & ~e.mask.w[1]) | e.match.w[1];
  return b;
}

}  // namespace gpurc::fe
