#include "frontend/pica200/encoding.h"

#include <cstdio>
#include <stdexcept>

namespace gpurc::pica {
namespace {

constexpr OpInfo kOps[] = {
#define PICA_INFO(id, name, opc, bits, fmt) {Op::id, name, opc, bits, Format::fmt},
    PICA_OPCODES(PICA_INFO)
#undef PICA_INFO
};
static_assert(sizeof(kOps) / sizeof(kOps[0]) == size_t(Op::Count));

// Bit pattern (MSB first) of everything below the opcode, per format. Letters:
// d dst, i idx, s src1, t src2, u src3, D desc, x cmpx, y cmpy, X refx, Y refy,
// c condop, a target, n num, b bool/int uniform, v vtxid, p prim, w winding.
std::string_view body_pattern(Format f) {
  switch (f) {
    case Format::F0: return "-------------------------- ";
    case Format::F1: return "ddddd ii sssssss ttttt DDDDDDD";
    case Format::F1i: return "ddddd ii sssss ttttttt DDDDDDD";
    case Format::F1u: return "ddddd ii sssssss ----- DDDDDDD";
    case Format::F1m: return "----- ii sssssss ----- DDDDDDD";
    case Format::F1c: return "xxx yyy ii sssssss ttttt DDDDDDD";
    case Format::F2: return "X Y cc aaaaaaaaaaaa -- nnnnnnnn";
    case Format::F3: return "bbbb aaaaaaaaaaaa -- nnnnnnnn";
    case Format::F4: return "vv p w ----------------------";
    case Format::F5: return "ddddd ii sssss ttttttt uuuuu DDDDD";
    case Format::F5i: return "ddddd ii sssss ttttt uuuuuuu DDDDD";
  }
  return "";
}

fe::EncodingTable build_table() {
  fe::EncodingTable t;
  for (const OpInfo& oi : kOps) {
    std::string pat;
    for (int b = int(oi.op_bits) - 1; b >= 0; --b) pat.push_back(((oi.opcode >> b) & 1) ? '1' : '0');
    pat += ' ';
    pat += body_pattern(oi.format);
    auto& e = t.add(std::string(oi.name), int(oi.op), pat,
                    {{'d', "dst"}, {'i', "idx"}, {'s', "src1"}, {'t', "src2"}, {'u', "src3"}, {'D', "desc"},
                     {'x', "cmpx"}, {'y', "cmpy"}, {'X', "refx"}, {'Y', "refy"}, {'c', "condop"}, {'a', "target"},
                     {'n', "num"}, {'b', "uniform"}, {'v', "vtxid"}, {'p', "prim"}, {'w', "winding"}});
    if (e.bits != 32) throw std::logic_error("pica200 encoding is not 32 bits: " + e.name);
  }
  return t;
}

}  // namespace

const OpInfo& info(Op op) { return kOps[size_t(op)]; }

const OpInfo* find_op(std::string_view mnemonic) {
  for (const OpInfo& oi : kOps)
    if (oi.name == mnemonic) return &oi;
  return nullptr;
}

const fe::EncodingTable& encoding_table() {
  static const fe::EncodingTable t = build_table();
  return t;
}

namespace {

// decode() runs for every instruction the translator, the reachability scan
// of the shader cache key and the reference interpreter look at, so the
// table's answer is precomputed per opcode value: every PICA200 encoding
// fixes only opcode bits (the top 6 or fewer), so the top 6 bits select the
// encoding, and every field is one contiguous bit range. Both facts are
// checked against the table when this is built; if either failed, decode()
// would use the table's generic lookup.
constexpr const char* kFieldNames[] = {"dst",  "idx",   "src1",   "src2",    "src3",    "desc",  "cmpx",   "cmpy",   "refx",
                                       "refy", "condop", "target", "num", "uniform", "vtxid", "prim", "winding"};
constexpr size_t kFields = sizeof(kFieldNames) / sizeof(kFieldNames[0]);

struct FastForm {
  const fe::Encoding* enc = nullptr;
  std::array<uint8_t, kFields> lo{}, width{};  // width 0: the format has no such field
};

struct FastDecoder {
  bool usable = true;
  std::array<FastForm, 64> by_top{};  // enc null: no instruction has this opcode value
};

const FastDecoder& fast_decoder() {
  static const FastDecoder d = [] {
    FastDecoder fd;
    const fe::EncodingTable& t = encoding_table();
    for (const fe::Encoding& e : t.all())
      if ((e.mask.w[0] & 0x03FFFFFFu) != 0 || e.mask.w[1] != 0) fd.usable = false;
    for (uint32_t top = 0; top < 64 && fd.usable; ++top) {
      fe::Bits128 b;
      b.w[0] = top << 26;
      FastForm& f = fd.by_top[top];
      f.enc = t.decode(b, 32);
      if (!f.enc) continue;
      for (size_t i = 0; i < kFields; ++i) {
        const fe::Field* field = f.enc->field(kFieldNames[i]);
        if (!field) continue;
        if (field->parts.size() != 1) fd.usable = false;
        else {
          f.lo[i] = uint8_t(field->parts[0].lo);
          f.width[i] = field->parts[0].width;
        }
      }
    }
    return fd;
  }();
  return d;
}

}  // namespace

std::optional<Instr> decode(uint32_t word, uint32_t address, std::string* err) {
  fe::Bits128 b;
  b.w[0] = word;
  const FastDecoder& fd = fast_decoder();
  const fe::Encoding* e = fd.usable ? fd.by_top[word >> 26].enc : encoding_table().decode(b, 32);
  if (!e) {
    if (err) {
      char buf[96];
      std::snprintf(buf, sizeof buf, "pica200: unknown opcode 0x%02X in word 0x%08X at address 0x%03X", word >> 26, word,
                    address);
      *err = buf;
    }
    return std::nullopt;
  }
  uint64_t v[kFields];
  if (fd.usable) {
    const FastForm& f = fd.by_top[word >> 26];
    for (size_t i = 0; i < kFields; ++i) v[i] = (word >> f.lo[i]) & ((1u << f.width[i]) - 1u);
  } else {
    for (size_t i = 0; i < kFields; ++i) v[i] = e->get(b, kFieldNames[i]);
  }
  Instr in;
  in.op = Op(e->id);
  in.word = word;
  in.dst = uint8_t(v[0]);
  in.idx = uint8_t(v[1]);
  in.src1 = uint8_t(v[2]);
  in.src2 = uint8_t(v[3]);
  in.src3 = uint8_t(v[4]);
  in.desc = uint8_t(v[5]);
  in.cmpx = uint8_t(v[6]);
  in.cmpy = uint8_t(v[7]);
  in.refx = uint8_t(v[8]);
  in.refy = uint8_t(v[9]);
  in.condop = uint8_t(v[10]);
  in.target = uint16_t(v[11]);
  in.num = uint8_t(v[12]);
  in.uniform = uint8_t(v[13]);
  in.vtxid = uint8_t(v[14]);
  in.prim = uint8_t(v[15]);
  in.winding = uint8_t(v[16]);
  return in;
}

uint32_t encode(const Instr& in) {
  const fe::EncodingTable& t = encoding_table();
  const fe::Encoding* e = t.find(info(in.op).name);
  std::map<std::string, uint64_t, std::less<>> f;
  auto put = [&](const char* name, uint64_t v) {
    if (e->has(name)) f[name] = v;
  };
  put("dst", in.dst);
  put("idx", in.idx);
  put("src1", in.src1);
  put("src2", in.src2);
  put("src3", in.src3);
  put("desc", in.desc);
  put("cmpx", in.cmpx);
  put("cmpy", in.cmpy);
  put("refx", in.refx);
  put("refy", in.refy);
  put("condop", in.condop);
  put("target", in.target);
  put("num", in.num);
  put("uniform", in.uniform);
  put("vtxid", in.vtxid);
  put("prim", in.prim);
  put("winding", in.winding);
  return uint32_t(t.encode(*e, f).w[0]);
}

uint32_t random_word(Op op, std::mt19937_64& rng) {
  const fe::EncodingTable& t = encoding_table();
  return uint32_t(t.random(*t.find(info(op).name), rng).w[0]);
}

std::string src_reg_name(unsigned field) {
  field &= 0x7F;
  if (field < 0x10) return "v" + std::to_string(field);
  if (field < 0x20) return "r" + std::to_string(field - 0x10);
  return "c" + std::to_string(field - 0x20);
}

std::string dst_reg_name(unsigned field) {
  field &= 0x1F;
  if (field < 0x10) return "o" + std::to_string(field);
  return "r" + std::to_string(field - 0x10);
}

Swizzle Swizzle::from_bits(unsigned sel, bool neg) {
  Swizzle s;
  for (int i = 0; i < 4; ++i) s.comp[i] = uint8_t((sel >> (6 - 2 * i)) & 3);
  s.negate = neg;
  return s;
}

unsigned Swizzle::selector() const {
  unsigned v = 0;
  for (int i = 0; i < 4; ++i) v |= unsigned(comp[i] & 3) << (6 - 2 * i);
  return v;
}

OperandDesc OperandDesc::decode(uint32_t b) {
  OperandDesc d;
  d.mask = uint8_t(b & 0xF);
  for (int s = 0; s < 3; ++s) {
    unsigned base = 4 + 9 * s;
    d.src[s] = Swizzle::from_bits((b >> (base + 1)) & 0xFF, (b >> base) & 1);
  }
  return d;
}

uint32_t OperandDesc::encode() const {
  uint32_t b = mask & 0xF;
  for (int s = 0; s < 3; ++s) {
    unsigned base = 4 + 9 * s;
    b |= uint32_t(src[s].negate) << base;
    b |= uint32_t(src[s].selector()) << (base + 1);
  }
  return b;
}

unsigned num_sources(Op op) {
  switch (info(op).format) {
    case Format::F1:
    case Format::F1i:
    case Format::F1c: return 2;
    case Format::F1u:
    case Format::F1m: return 1;
    case Format::F5:
    case Format::F5i: return 3;
    default: return 0;
  }
}

bool has_dst(Op op) {
  switch (info(op).format) {
    case Format::F1:
    case Format::F1i:
    case Format::F1u:
    case Format::F5:
    case Format::F5i: return true;
    default: return false;
  }
}

unsigned wide_source(Op op) {
  switch (info(op).format) {
    case Format::F1:
    case Format::F1u:
    case Format::F1m:
    case Format::F1c: return 1;
    case Format::F1i:
    case Format::F5: return 2;
    case Format::F5i: return 3;
    default: return 0;
  }
}

uint32_t desc_used_bits(Op op, uint32_t desc) {
  unsigned n = num_sources(op);
  if (n == 0) return 0;
  // CMP and MOVA write no register: CMP's mask bits are unused, MOVA's say
  // which of a0.x / a0.y it writes.
  uint32_t m = op == Op::CMP ? 0 : 0xF;
  for (unsigned s = 0; s < n; ++s) m |= 0x1FFu << (4 + 9 * s);
  // Source components the operation never reads (picasso's rule), per source.
  auto comp = [](int c) { return 3u << (6 - 2 * c); };
  unsigned u[3] = {0, 0, 0};
  switch (op) {
    case Op::ADD: case Op::MUL: case Op::SGE: case Op::SGEI: case Op::SLT: case Op::SLTI: case Op::FLR:
    case Op::MAX: case Op::MIN: case Op::MOV: case Op::MAD: case Op::MADI:
      for (int c = 0; c < 4; ++c)  // component-wise: only the written components
        if (!(desc & (8u >> c))) u[0] |= comp(c);
      u[1] = u[2] = u[0];
      break;
    case Op::DP3: u[0] = u[1] = comp(3); break;
    case Op::DPH: case Op::DPHI: u[0] = comp(3); break;  // src1.w reads as 1
    case Op::EX2: case Op::LG2: case Op::RCP: case Op::RSQ: u[0] = comp(1) | comp(2) | comp(3); break;  // scalar
    case Op::MOVA:
      if (!(desc & 8)) u[0] |= comp(0);
      if (!(desc & 4)) u[0] |= comp(1);
      u[0] |= comp(2) | comp(3);
      break;
    case Op::CMP: u[0] = comp(2) | comp(3); break;
    default: break;  // DP4, DST, LITP read every component
  }
  for (int s = 0; s < 3; ++s) m &= ~((u[s] << 1) << (4 + 9 * s));
  return m;
}

}  // namespace gpurc::pica
