// The G13 encoding table, built once from the generated encodings.inc, and
// instruction decoding (first match in reference order, per-descriptor length).
#include <algorithm>
#include <cstring>
#include <vector>

#include "frontend/g13/g13.h"

namespace gpurc::g13 {
namespace {

struct GenPart { uint16_t lo; uint8_t width; };
struct GenField {
  const char* name;
  const char* operand;
  const char* kind;
  int nparts;
  GenPart parts[3];
};
struct GenDesc {
  int index;
  const char* name;
  unsigned size_short, size_long;
  int length_bit;
  uint64_t mask_lo, mask_hi, value_lo, value_hi;
  int nfields;
  GenField fields[24];
  int nprint;
  const char* print[16];
};

#define G13_LIST(...) {__VA_ARGS__}
#define G13_DESC(idx, name, ss, sl, lb, mlo, mhi, vlo, vhi, nf, fields, np, print) \
  GenDesc{idx, name, ss, sl, lb, mlo, mhi, vlo, vhi, nf, fields, np, print},
const GenDesc kGenerated[] = {
#include "frontend/g13/encodings.inc"
};
#undef G13_DESC
#undef G13_LIST

struct KindName { const char* name; Kind kind; };
const KindName kKindNames[] = {
    {"ALUDst", Kind::ALUDst}, {"ALUDst64", Kind::ALUDst64}, {"ALUDst16", Kind::ALUDst16},
    {"FloatDst", Kind::FloatDst}, {"FloatDst16", Kind::FloatDst16}, {"PairedALUDst", Kind::PairedALUDst},
    {"ImplicitR0L", Kind::ImplicitR0L}, {"ALUSrc", Kind::ALUSrc}, {"ALUSrc64", Kind::ALUSrc64},
    {"ALUSrc16", Kind::ALUSrc16}, {"MulSrc", Kind::MulSrc}, {"AddSrc", Kind::AddSrc},
    {"FloatSrc", Kind::FloatSrc}, {"FloatSrc16", Kind::FloatSrc16}, {"PairedFloatSrc", Kind::PairedFloatSrc},
    {"CmpselSrc", Kind::CmpselSrc}, {"Immediate", Kind::Immediate}, {"Binary", Kind::Binary},
    {"Enum", Kind::Enum}, {"flag", Kind::Flag}, {"Shift", Kind::Shift}, {"Mask", Kind::Mask},
    {"TruthTable", Kind::TruthTable}, {"SReg32", Kind::SReg32}, {"Reg32", Kind::Reg32},
    {"BranchOffset", Kind::BranchOffset}, {"ICondition", Kind::ICondition}, {"FCondition", Kind::FCondition},
    {"MemoryReg", Kind::MemoryReg}, {"MemoryIndex", Kind::MemoryIndex}, {"MemoryShift", Kind::MemoryShift},
    {"MemoryBase", Kind::MemoryBase}, {"ThreadgroupMemoryReg", Kind::ThreadgroupMemoryReg},
    {"ThreadgroupMemoryBase", Kind::ThreadgroupMemoryBase}, {"ThreadgroupIndex", Kind::ThreadgroupIndex},
    {"SampleMask", Kind::SampleMask}, {"VarRegister", Kind::VarRegister},
    {"VarTripleRegister", Kind::VarTripleRegister}, {"CF", Kind::CF}, {"IterSampleID", Kind::IterSampleID},
    {"CFPerspective", Kind::CFPerspective}, {"UReg64", Kind::UReg64}, {"TextureStateDest", Kind::TextureStateDest},
    {"SamplerStateDest", Kind::SamplerStateDest}, {"UVSIndex", Kind::UVSIndex}, {"ExReg32", Kind::ExReg32},
    {"AsyncMemoryReg", Kind::AsyncMemoryReg}, {"AsyncMemoryBase", Kind::AsyncMemoryBase},
    {"StackReg32", Kind::StackReg32}, {"StackAdjustment", Kind::StackAdjustment},
    {"SampleUReg", Kind::SampleUReg}, {"SampleReg", Kind::SampleReg}, {"Coords", Kind::Coords},
    {"Lod", Kind::Lod}, {"Sampler", Kind::Sampler}, {"SampleCompareOff", Kind::SampleCompareOff},
    {"Texture", Kind::Texture}, {"AtomicSource", Kind::AtomicSource}, {"AtomicDestination", Kind::AtomicDestination},
    {"PBELod", Kind::PBELod}, {"TileToMemoryReg", Kind::TileToMemoryReg}, {"Reg32_4_4_", Kind::Reg32_4_4},
    {"PBESourceReg", Kind::PBESourceReg}, {"DiscardMask", Kind::DiscardMask}, {"ZS", Kind::ZS},
};

std::vector<Desc> build_table() {
  std::vector<Desc> out;
  for (const GenDesc& g : kGenerated) {
    Desc d;
    d.index = g.index;
    d.name = g.name;
    d.size_short = g.size_short;
    d.size_long = g.size_long;
    d.length_bit = g.length_bit;
    d.mask.w[0] = g.mask_lo;
    d.mask.w[1] = g.mask_hi;
    d.value.w[0] = g.value_lo;
    d.value.w[1] = g.value_hi;
    for (int i = 0; i < g.nfields; ++i) {
      const GenField& gf = g.fields[i];
      fe::Field f;
      f.name = gf.name;
      for (int p = 0; p < gf.nparts; ++p) f.parts.push_back({gf.parts[p].lo, gf.parts[p].width});
      d.fields.push_back(std::move(f));
      d.field_operand.push_back(gf.operand);
    }
    for (int i = 0; i < g.nprint; ++i) {
      OperandDef od;
      od.name = g.print[i];
      // The operand's kind is the kind of its fields.
      for (int k = 0; k < g.nfields; ++k)
        if (od.name == g.fields[k].operand) od.kind = kind_from_name(g.fields[k].kind);
      d.operands.push_back(std::move(od));
    }
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace

Kind kind_from_name(std::string_view s) {
  for (const KindName& k : kKindNames)
    if (s == k.name) return k.kind;
  return Kind::None;
}

const fe::Field* Desc::field(std::string_view n) const {
  for (const fe::Field& f : fields)
    if (f.name == n) return &f;
  return nullptr;
}

const std::vector<Desc>& table() {
  static const std::vector<Desc> t = build_table();
  return t;
}

const Desc* find_desc(int index) {
  const auto& t = table();
  return index >= 0 && size_t(index) < t.size() ? &t[size_t(index)] : nullptr;
}

uint64_t Insn::f(std::string_view field) const {
  const fe::Field* fl = desc->field(field);
  return fl ? fl->get(bits) : 0;
}

unsigned insn_size(const Desc& d, const fe::Bits128& bits) {
  if (d.length_bit < 0 || d.size_short == d.size_long) return d.size_short;
  return bits.get(unsigned(d.length_bit), 1) ? d.size_long : d.size_short;
}

static fe::Bits128 truncate_bits(fe::Bits128 b, unsigned bytes) {
  unsigned nbits = bytes * 8;
  if (nbits < 64) {
    b.w[0] &= (1ull << nbits) - 1;
    b.w[1] = 0;
  } else if (nbits < 128) {
    b.w[1] &= (nbits == 64) ? 0 : ((1ull << (nbits - 64)) - 1);
  }
  return b;
}

namespace {

// The descriptors decode() tests, by a few opcode bits: the table is derived
// once, so a decode does not compare the word against every descriptor.
// `key` names up to 8 positions among the first 16 bits (every instruction
// has them, so an encoding's length does not change them) that most
// descriptors' masks test; bucket k (key[j] giving bit j of k) lists, in
// table order, the descriptors that can match with those bits (one that
// does not test a key bit is in the buckets of both values), so the first
// match in a bucket is the table's first match.
struct DecodeIndex {
  std::vector<unsigned> key;
  std::vector<uint32_t> bucket_start;
  std::vector<const Desc*> bucket_descs;
};

const DecodeIndex& decode_index() {
  static const DecodeIndex index = [] {
    const std::vector<Desc>& t = table();
    DecodeIndex x;
    std::vector<std::pair<unsigned, unsigned>> counts;  // (descriptors testing the bit, bit)
    for (unsigned b = 0; b < 16; ++b) {
      unsigned n = 0;
      for (const Desc& d : t) n += unsigned(d.mask.get(b, 1));
      if (n >= 2) counts.push_back({n, b});
    }
    std::stable_sort(counts.begin(), counts.end(), [](auto& a, auto& b) { return a.first > b.first; });
    for (size_t j = 0; j < counts.size() && j < 8; ++j) x.key.push_back(counts[j].second);
    x.bucket_start.push_back(0);
    for (size_t k = 0; k < (size_t(1) << x.key.size()); ++k) {
      for (const Desc& d : t) {
        bool can_match = true;
        for (size_t j = 0; j < x.key.size() && can_match; ++j)
          if (d.mask.get(x.key[j], 1)) can_match = d.value.get(x.key[j], 1) == ((k >> j) & 1);
        if (can_match) x.bucket_descs.push_back(&d);
      }
      x.bucket_start.push_back(uint32_t(x.bucket_descs.size()));
    }
    return x;
  }();
  return index;
}

}  // namespace

bool decode(const uint8_t* p, size_t avail, uint64_t addr, Insn& out, fe::Diagnostic& err) {
  err.address = addr;
  if (avail < 2) {
    err.message = "g13: truncated instruction at byte offset " + std::to_string(addr) + ": " +
                  std::to_string(avail) + " byte(s) left, instructions are at least 2 bytes";
    return false;
  }
  const size_t take = avail < 12 ? avail : 12;
  const fe::Bits128 padded = fe::Bits128::from_bytes(p, take);
  const DecodeIndex& index = decode_index();
  size_t key = 0;
  for (size_t j = 0; j < index.key.size(); ++j) key |= size_t((padded.w[0] >> index.key[j]) & 1) << j;
  for (uint32_t b = index.bucket_start[key], e = index.bucket_start[key + 1]; b < e; ++b) {
    const Desc& d = *index.bucket_descs[b];
    const unsigned size = insn_size(d, padded);
    const fe::Bits128 w = truncate_bits(padded, size);
    if (!((w & d.mask) == d.value)) continue;
    if (size > avail) {
      err.message = "g13: truncated instruction at byte offset " + std::to_string(addr) + ": " + d.name +
                    " needs " + std::to_string(size) + " bytes, " + std::to_string(avail) + " left";
      return false;
    }
    out.desc = &d;
    out.size = size;
    out.bits = w;
    return true;
  }
  err.message = "g13: no encoding matches the bytes at offset " + std::to_string(addr);
  return false;
}

bool random_instruction(const Desc& d, std::mt19937_64& rng, std::vector<uint8_t>& out) {
  fe::Bits128 b;
  b.w[0] = (rng() & ~d.mask.w[0]) | d.value.w[0];
  b.w[1] = (rng() & ~d.mask.w[1]) | d.value.w[1];
  uint8_t bytes[16];
  b.to_bytes(bytes, 16);
  Insn in;
  fe::Diagnostic err;
  if (!decode(bytes, 12, 0, in, err) || in.desc != &d) return false;
  out.assign(bytes, bytes + in.size);
  return true;
}

}  // namespace gpurc::g13
