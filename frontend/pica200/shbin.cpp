#include "frontend/pica200/shbin.h"

#include <cstring>

namespace gpurc::pica {
namespace {

struct Reader {
  const uint8_t* p;
  size_t n;
  bool ok = true;
  uint32_t u32(size_t off) {
    if (off > n || n - off < 4) { ok = false; return 0; }
    return uint32_t(p[off]) | uint32_t(p[off + 1]) << 8 | uint32_t(p[off + 2]) << 16 | uint32_t(p[off + 3]) << 24;
  }
  uint16_t u16(size_t off) {
    if (off > n || n - off < 2) { ok = false; return 0; }
    return uint16_t(p[off] | p[off + 1] << 8);
  }
  uint8_t u8(size_t off) {
    if (off >= n) { ok = false; return 0; }
    return p[off];
  }
  bool magic(size_t off, const char* m) { return off <= n && n - off >= 4 && std::memcmp(p + off, m, 4) == 0; }
  // A table of `count` entries of `esize` bytes at `off` must fit.
  bool fits(size_t off, size_t count, size_t esize) {
    if (count > n / (esize ? esize : 1) + 1) return false;
    return off <= n && count * esize <= n - off;
  }
  std::string str(size_t off, size_t limit_end) {
    std::string s;
    while (off < limit_end && off < n && p[off]) s.push_back(char(p[off++]));
    return s;
  }
};

struct Writer {
  std::vector<uint8_t> b;
  size_t pos() const { return b.size(); }
  void u8(uint8_t v) { b.push_back(v); }
  void u16(uint16_t v) { u8(uint8_t(v)); u8(uint8_t(v >> 8)); }
  void u32(uint32_t v) { u16(uint16_t(v)); u16(uint16_t(v >> 16)); }
  void put32(size_t at, uint32_t v) { for (int i = 0; i < 4; ++i) b[at + size_t(i)] = uint8_t(v >> (8 * i)); }
  void bytes(const char* s, size_t k) { b.insert(b.end(), s, s + k); }
  void align4() { while (b.size() & 3) u8(0); }
};

constexpr size_t kDvlpHeader = 0x28;
constexpr size_t kDvleHeader = 0x40;

}  // namespace

bool is_shbin(const uint8_t* data, size_t size) { return size >= 4 && std::memcmp(data, "DVLB", 4) == 0; }

bool parse_shbin(const uint8_t* data, size_t size, Shbin& out, std::string& err) {
  Reader r{data, size};
  out = Shbin{};
  if (!r.magic(0, "DVLB")) { err = "shbin: missing DVLB magic"; return false; }
  uint32_t ndvle = r.u32(4);
  if (!r.ok || !r.fits(8, ndvle, 4)) { err = "shbin: DVLE count " + std::to_string(ndvle) + " does not fit the file"; return false; }
  size_t dvlp = 8 + size_t(ndvle) * 4;
  if (!r.magic(dvlp, "DVLP")) { err = "shbin: missing DVLP magic"; return false; }
  out.dvlp_version = r.u32(dvlp + 4);
  size_t code_off = dvlp + r.u32(dvlp + 8);
  uint32_t code_words = r.u32(dvlp + 12);
  size_t desc_off = dvlp + r.u32(dvlp + 16);
  uint32_t ndesc = r.u32(dvlp + 20);
  if (!r.ok || !r.fits(code_off, code_words, 4)) { err = "shbin: DVLP code table out of bounds"; return false; }
  if (!r.fits(desc_off, ndesc, 8)) { err = "shbin: DVLP operand descriptor table out of bounds"; return false; }
  if (ndesc > 128) { err = "shbin: " + std::to_string(ndesc) + " operand descriptors (at most 128)"; return false; }
  if (code_words > 4096) { err = "shbin: " + std::to_string(code_words) + " code words (at most 4096)"; return false; }
  for (uint32_t i = 0; i < code_words; ++i) out.code.push_back(r.u32(code_off + 4 * i));
  for (uint32_t i = 0; i < ndesc; ++i) out.descs.push_back(r.u32(desc_off + 8 * i));

  for (uint32_t k = 0; k < ndvle; ++k) {
    size_t base = r.u32(8 + 4 * k);
    if (!r.magic(base, "DVLE") || !r.fits(base, 1, kDvleHeader)) {
      err = "shbin: DVLE " + std::to_string(k) + " header out of bounds or without magic";
      return false;
    }
    Dvle d;
    d.version = r.u16(base + 4);
    d.is_geometry = r.u8(base + 6);
    d.merge_outmaps = r.u8(base + 7);
    d.main_offset = r.u32(base + 8);
    d.endmain_offset = r.u32(base + 12);
    d.input_mask = r.u16(base + 16);
    d.output_mask = r.u16(base + 18);
    d.gs_mode = r.u8(base + 20);
    d.gs_float_start = r.u8(base + 21);
    d.gs_fully_defined = r.u8(base + 22);
    d.gs_vertex_count = r.u8(base + 23);
    auto table = [&](size_t hdr, size_t esize, size_t& off, uint32_t& count) {
      off = base + r.u32(base + hdr);
      count = r.u32(base + hdr + 4);
      return r.ok && r.fits(off, count, esize);
    };
    size_t coff, loff, ooff, uoff, soff;
    uint32_t ccount, lcount, ocount, ucount, ssize;
    soff = base + r.u32(base + 0x38);
    ssize = r.u32(base + 0x3C);
    if (!table(0x18, 0x14, coff, ccount) || !table(0x20, 0x10, loff, lcount) || !table(0x28, 8, ooff, ocount) ||
        !table(0x30, 8, uoff, ucount) || !r.fits(soff, ssize, 1)) {
      err = "shbin: DVLE " + std::to_string(k) + " has a table out of bounds";
      return false;
    }
    size_t send = soff + ssize;
    auto symbol = [&](uint32_t o) { return o < ssize ? r.str(soff + o, send) : std::string(); };
    for (uint32_t i = 0; i < ccount; ++i) {
      size_t e = coff + 0x14 * i;
      ShbinConstant c;
      uint16_t kind = r.u16(e);
      if (kind > 2) { err = "shbin: DVLE " + std::to_string(k) + " constant of unknown type " + std::to_string(kind); return false; }
      c.kind = ConstKind(kind);
      c.reg = r.u16(e + 2);
      if (c.kind == ConstKind::Bool) c.value[0] = r.u8(e + 4);
      else if (c.kind == ConstKind::IVec) for (int j = 0; j < 4; ++j) c.value[size_t(j)] = r.u8(e + 4 + size_t(j));
      else for (int j = 0; j < 4; ++j) c.value[size_t(j)] = r.u32(e + 4 + 4 * size_t(j)) & 0xFFFFFF;
      d.constants.push_back(c);
    }
    for (uint32_t i = 0; i < lcount; ++i) {
      size_t e = loff + 0x10 * i;
      ShbinLabel l;
      l.id = r.u16(e);
      l.unk = r.u16(e + 2);
      l.offset = r.u32(e + 4);
      l.size = r.u32(e + 8);
      l.name = symbol(r.u32(e + 12));
      d.labels.push_back(l);
    }
    for (uint32_t i = 0; i < ocount; ++i) {
      size_t e = ooff + 8 * i;
      d.outputs.push_back({r.u16(e), r.u16(e + 2), r.u16(e + 4), r.u16(e + 6)});
    }
    for (uint32_t i = 0; i < ucount; ++i) {
      size_t e = uoff + 8 * i;
      ShbinUniform u;
      u.name = symbol(r.u32(e));
      u.start = r.u16(e + 4);
      u.end = r.u16(e + 6);
      d.uniforms.push_back(u);
    }
    if (!r.ok) { err = "shbin: DVLE " + std::to_string(k) + " truncated"; return false; }
    out.dvles.push_back(std::move(d));
  }
  return true;
}

std::vector<uint8_t> write_shbin(const Shbin& s) {
  Writer w;
  w.bytes("DVLB", 4);
  w.u32(uint32_t(s.dvles.size()));
  size_t dvle_offsets = w.pos();
  for (size_t i = 0; i < s.dvles.size(); ++i) w.u32(0);

  size_t dvlp = w.pos();
  w.bytes("DVLP", 4);
  w.u32(s.dvlp_version);
  w.u32(uint32_t(kDvlpHeader));                                 // code offset
  w.u32(uint32_t(s.code.size()));
  w.u32(uint32_t(kDvlpHeader + 4 * s.code.size()));            // descriptor table offset
  w.u32(uint32_t(s.descs.size()));
  // Symbol table offset (empty: the DVLP names no file), then three unused words.
  w.u32(uint32_t(kDvlpHeader + 4 * s.code.size() + 8 * s.descs.size()));
  w.u32(0);
  w.u32(0);
  w.u32(0);
  for (uint32_t c : s.code) w.u32(c);
  // Descriptor entries are 8 bytes: the descriptor, then a zero word (picasso's layout).
  for (uint32_t d : s.descs) { w.u32(d); w.u32(0); }
  (void)dvlp;

  for (size_t k = 0; k < s.dvles.size(); ++k) {
    const Dvle& d = s.dvles[k];
    w.align4();
    size_t base = w.pos();
    w.put32(dvle_offsets + 4 * k, uint32_t(base));
    w.bytes("DVLE", 4);
    w.u16(d.version);
    w.u8(d.is_geometry);
    w.u8(d.merge_outmaps);
    w.u32(d.main_offset);
    w.u32(d.endmain_offset);
    w.u16(d.input_mask);
    w.u16(d.output_mask);
    w.u8(d.gs_mode);
    w.u8(d.gs_float_start);
    w.u8(d.gs_fully_defined);
    w.u8(d.gs_vertex_count);
    size_t hdr_tables = w.pos();
    for (int i = 0; i < 10; ++i) w.u32(0);
    // Symbol table: label names then uniform names, NUL terminated (picasso
    // writes no labels, so only uniform names).
    std::string symbols;
    auto add_symbol = [&](const std::string& n) {
      uint32_t o = uint32_t(symbols.size());
      symbols += n;
      symbols.push_back('\0');
      return o;
    };
    size_t off = w.pos() - base;
    w.put32(hdr_tables + 0, uint32_t(off));
    w.put32(hdr_tables + 4, uint32_t(d.constants.size()));
    for (const ShbinConstant& c : d.constants) {
      w.u16(uint16_t(c.kind));
      w.u16(c.reg);
      if (c.kind == ConstKind::Bool) { w.u8(uint8_t(c.value[0])); for (int i = 0; i < 15; ++i) w.u8(0); }
      else if (c.kind == ConstKind::IVec) { for (int i = 0; i < 4; ++i) w.u8(uint8_t(c.value[size_t(i)])); for (int i = 0; i < 12; ++i) w.u8(0); }
      else for (int i = 0; i < 4; ++i) w.u32(c.value[size_t(i)] & 0xFFFFFF);
    }
    w.put32(hdr_tables + 8, uint32_t(w.pos() - base));
    w.put32(hdr_tables + 12, uint32_t(d.labels.size()));
    for (const ShbinLabel& l : d.labels) {
      w.u16(l.id);
      w.u16(l.unk);
      w.u32(l.offset);
      w.u32(l.size);
      w.u32(add_symbol(l.name));
    }
    w.put32(hdr_tables + 16, uint32_t(w.pos() - base));
    w.put32(hdr_tables + 20, uint32_t(d.outputs.size()));
    for (const ShbinOutput& o : d.outputs) { w.u16(o.semantic); w.u16(o.reg); w.u16(o.mask); w.u16(o.unk); }
    w.put32(hdr_tables + 24, uint32_t(w.pos() - base));
    w.put32(hdr_tables + 28, uint32_t(d.uniforms.size()));
    for (const ShbinUniform& u : d.uniforms) { w.u32(add_symbol(u.name)); w.u16(u.start); w.u16(u.end); }
    w.put32(hdr_tables + 32, uint32_t(w.pos() - base));
    w.put32(hdr_tables + 36, uint32_t(symbols.size()));
    w.bytes(symbols.data(), symbols.size());
  }
  w.align4();
  return w.b;
}

namespace {
struct SemName { uint16_t sem; const char* name; const char* alt; };
constexpr SemName kSemantics[] = {
    {kOutPosition, "position", "pos"}, {kOutNormalQuat, "normalquat", "nquat"}, {kOutColor, "color", "clr"},
    {kOutTexcoord0, "texcoord0", "tcoord0"}, {kOutTexcoord0W, "texcoord0w", "tcoord0w"},
    {kOutTexcoord1, "texcoord1", "tcoord1"}, {kOutTexcoord2, "texcoord2", "tcoord2"}, {kOutView, "view", "view"},
    {kOutDummy, "dummy", "dummy"},
};
}  // namespace

const char* output_semantic_name(uint16_t s) {
  for (auto& e : kSemantics)
    if (e.sem == s) return e.name;
  return nullptr;
}

bool parse_output_semantic(const std::string& n, uint16_t& out) {
  for (auto& e : kSemantics)
    if (n == e.name || n == e.alt) { out = e.sem; return true; }
  return false;
}

}  // namespace gpurc::pica
