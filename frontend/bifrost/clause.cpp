// Bifrost clause layout: unpacking every quadword format, canonical packing (clause.h).
#include "frontend/bifrost/clause.h"

#include <cstdio>

namespace gpurc::bifrost {
namespace {

// A 128-bit quadword, bit b = bit (b % 8) of byte b / 8.
struct Quad {
  uint64_t lo = 0, hi = 0;
  uint64_t get(unsigned pos, unsigned width) const {
    uint64_t v = 0;
    for (unsigned i = 0; i < width; ++i) {
      unsigned b = pos + i;
      uint64_t bit = b < 64 ? (lo >> b) & 1 : (hi >> (b - 64)) & 1;
      v |= bit << i;
    }
    return v;
  }
  void set(unsigned pos, unsigned width, uint64_t v) {
    for (unsigned i = 0; i < width; ++i) {
      unsigned b = pos + i;
      uint64_t bit = i < 64 ? (v >> i) & 1 : 0;
      if (b < 64) lo = (lo & ~(uint64_t(1) << b)) | (bit << b);
      else hi = (hi & ~(uint64_t(1) << (b - 64))) | (bit << (b - 64));
    }
  }
};

// A tuple as its 78 bits: lo = bits 0-63, hi = bits 64-77.
struct TupleBits {
  uint64_t lo = 0, hi = 0;
  static TupleBits of(const Tuple& t) {
    TupleBits b;
    b.lo = (t.regs & ((uint64_t(1) << 35) - 1)) | (uint64_t(t.fma & 0x7fffff) << 35) |
           (uint64_t(t.add & 0x3f) << 58);
    b.hi = (t.add >> 6) & 0x3fff;
    return b;
  }
  uint64_t get(unsigned pos, unsigned width) const {
    Quad q{lo, hi};
    return q.get(pos, width);
  }
};

Tuple tuple_from_lo75(const Quad& q) {
  Tuple t;
  t.regs = q.get(8, 35);
  t.fma = uint32_t(q.get(43, 23));
  t.add = uint32_t(q.get(66, 17));
  return t;
}
void set_upper(Tuple& t, unsigned upper) { t.add = (t.add & 0x1ffff) | ((upper & 7) << 17); }
// First split piece (tuple bits 0-44) at quadword bits 83-127. The FMA
// bits are ORed in, as Mesa's disassembler does: a malformed clause that
// carries a piece twice then prints as Mesa prints it.
void set_first_half(Tuple& t, const Quad& q) {
  t.regs = q.get(83, 35);
  t.fma |= uint32_t(q.get(118, 10));
}
// Second split piece (tuple bits 45-74) at quadword bits 83-112; the ADD
// word is replaced (its upper bits are set by the caller).
void set_second_half(Tuple& t, const Quad& q) {
  t.fma |= uint32_t(q.get(83, 13)) << 10;
  t.add = uint32_t(q.get(96, 17));
}

const ConstMod kM1[7][2] = {{ConstMod::None, ConstMod::None},   {ConstMod::PcLo, ConstMod::None},
                            {ConstMod::PcLo, ConstMod::PcLo},   {ConstMod::None, ConstMod::None},
                            {ConstMod::PcHi, ConstMod::None},   {ConstMod::PcHi, ConstMod::PcHi},
                            {ConstMod::PcLo, ConstMod::None}};
const ConstMod kM2[4][2] = {{ConstMod::PcLoHi, ConstMod::None},
                            {ConstMod::PcLoHi, ConstMod::PcHi},
                            {ConstMod::PcLoHi, ConstMod::PcLoHi},
                            {ConstMod::PcLoHi, ConstMod::PcHi}};

bool decode_m(ConstMod* mod, unsigned m1, unsigned m2, bool single, std::string& why) {
  if (m1 >= 8) {
    mod[0] = ConstMod::None;
    if (!single) mod[1] = ConstMod::None;
    return true;
  }
  if (m1 == 3) {
    why = "constant M1 selector 3 is reserved";
    return false;
  }
  if (m1 == 7 && m2 >= 4) {
    why = "constant M2 selector " + std::to_string(m2) + " is reserved";
    return false;
  }
  const ConstMod* row = m1 == 7 ? kM2[m2] : kM1[m1];
  mod[0] = row[0];
  if (!single) mod[1] = row[1];
  return true;
}

// Format-12 pos -> (constants before this pair, tuple count).
const unsigned kPosTable[16][2] = {{0, 1}, {0, 2}, {0, 4}, {1, 3}, {1, 5}, {2, 4}, {0, 7}, {1, 6},
                                   {3, 5}, {1, 8}, {2, 7}, {3, 6}, {3, 8}, {4, 7}, {5, 6}, {~0u, ~0u}};

std::string hex(uint64_t v) {
  char b[32];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

}  // namespace

RegBlock RegBlock::from_bits(uint64_t b) {
  RegBlock r;
  r.fau = unsigned(b & 0xff);
  r.reg3 = unsigned(b >> 8) & 63;
  r.reg2 = unsigned(b >> 14) & 63;
  r.reg0 = unsigned(b >> 20) & 31;
  r.reg1 = unsigned(b >> 25) & 63;
  r.ctrl = unsigned(b >> 31) & 15;
  return r;
}
uint64_t RegBlock::to_bits() const {
  return uint64_t(fau & 0xff) | uint64_t(reg3 & 63) << 8 | uint64_t(reg2 & 63) << 14 | uint64_t(reg0 & 31) << 20 |
         uint64_t(reg1 & 63) << 25 | uint64_t(ctrl & 15) << 31;
}

RegMode decode_regs(const RegBlock& r, bool first) {
  RegMode m;
  unsigned c;
  if (r.ctrl == 0) {
    c = r.reg1 >> 2;
    m.read0 = !(r.reg1 & 2);
    m.read1 = false;
    m.reg0 = r.reg0 | ((r.reg1 & 1) << 5);
    // slot 1 is off; a source naming it still prints this:
    m.reg1 = r.reg0 <= r.reg1 ? r.reg1 : 63 - r.reg1;
  } else {
    c = r.ctrl;
    m.read0 = m.read1 = true;
    m.reg0 = r.reg0 <= r.reg1 ? r.reg0 : 63 - r.reg0;
    m.reg1 = r.reg0 <= r.reg1 ? r.reg1 : 63 - r.reg1;
  }
  if (first) c = (c & 7) | ((c & 8) << 1);
  else if (r.reg2 == r.reg3) c += 16;
  m.mode = c;
  using S = SlotOp;
  static const struct {
    S s2, s3;
    bool fma;
  } lut[32] = {
      {S::Idle, S::Idle, false},       {S::Read, S::WriteLo, true},     {S::Read, S::WriteHi, true},
      {S::Read, S::Write, true},       {S::Read, S::WriteLo, false},    {S::Read, S::WriteHi, false},
      {S::Read, S::Write, false},      {S::WriteLo, S::WriteLo, false}, {S::WriteLo, S::WriteHi, false},
      {S::WriteLo, S::Write, false},   {S::WriteHi, S::WriteLo, false}, {S::WriteHi, S::WriteHi, false},
      {S::WriteHi, S::Write, false},   {S::Write, S::WriteLo, false},   {S::Write, S::WriteHi, false},
      {S::Write, S::Write, false},     {S::Idle, S::Idle, true},        {S::Idle, S::Write, true},
      {S::Idle, S::WriteLo, true},     {S::Idle, S::WriteHi, true},     {S::Read, S::Idle, false},
      {S::Idle, S::Write, false},      {S::Idle, S::WriteLo, false},    {S::Idle, S::WriteHi, false},
      {S::WriteLo, S::WriteHi, false}, {S::Idle, S::Idle, false},       {S::WriteHi, S::WriteLo, false},
      {S::Idle, S::Idle, true},        {S::Idle, S::Idle, false},       {S::Idle, S::Idle, false},
      {S::Idle, S::Idle, false},       {S::Idle, S::Idle, false}};
  m.slot2 = lut[c].s2;
  m.slot3 = lut[c].s3;
  m.slot3_fma = lut[c].fma;
  m.reserved = c == 0 || c == 25 || c >= 28;
  return m;
}

namespace {
// The seed page's control values of 64-bit register blocks. Per port: what it
// does, '-' = said elsewhere, 'C' = holds a control value. Where a value may stand.
enum class In64 { None, Main, Port1, Port3 };
struct Ctl64 {
  In64 in;
  char p0, p1, p2, p3;  // p0: R read, S read+16, U unused; p2: R read, F/A write FMA/ADD, U unused; p3: F/A write
};
Ctl64 ctl64(unsigned v) {
  switch (v) {
    case 0: return {In64::Port1, 'S', 'C', 'F', 'A'};
    case 2: return {In64::Port3, '-', '-', 'A', 'C'};
    case 3: return {In64::Port1, 'U', 'C', 'F', 'A'};
    case 6: return {In64::Port3, '-', '-', 'F', 'C'};
    case 7: return {In64::Port3, '-', '-', 'U', 'C'};
    case 8: return {In64::Main, 'R', 'R', 'F', 'A'};
    case 10: return {In64::Port3, '-', '-', 'R', 'C'};
    case 12: return {In64::Port1, 'S', 'C', '-', 'C'};
    case 15: return {In64::Port1, 'U', 'C', '-', 'C'};
    case 17: return {In64::Main, 'R', 'R', 'R', 'A'};
    case 26: return {In64::Main, 'R', 'R', 'R', 'F'};
    case 27: return {In64::Main, 'R', 'R', '-', 'C'};
    case 29: return {In64::Main, '-', 'C', 'F', 'A'};
    case 31: return {In64::Main, '-', 'C', '-', 'C'};
    default: return {In64::None, '-', '-', '-', '-'};
  }
}
}  // namespace

RegMode64 decode_regs64(uint64_t bits) {
  RegMode64 m;
  unsigned p2 = unsigned(bits >> 8) & 31, p3 = unsigned(bits >> 13) & 31, p0 = unsigned(bits >> 18) & 15,
           p1 = unsigned(bits >> 22) & 31, main = unsigned(bits >> 27) & 31, top = unsigned(bits >> 32) & 7;
  if (top != 7) {
    m.why = "bits 32-34 of a 64-bit register block are not 7";
    return m;
  }
  char port[4] = {'-', '-', '-', '-'};
  // Merge an entry's assignments; a port said twice must agree.
  auto merge = [&](const Ctl64& c, int self) {
    const char v[4] = {c.p0, c.p1, c.p2, c.p3};
    for (int i = 0; i < 4; ++i) {
      if (i == self || v[i] == '-') continue;
      if (port[i] != '-' && port[i] != v[i]) return false;
      port[i] = v[i];
    }
    return true;
  };
  Ctl64 c = ctl64(main);
  if (c.in != In64::Main) {
    m.why = "control " + std::to_string(main) + " is not a main control value";
    return m;
  }
  merge(c, -1);
  if (port[1] == 'C') {
    Ctl64 c1 = ctl64(p1);
    if (c1.in != In64::Port1 || !merge(c1, 1)) {
      m.why = "port 1 control " + std::to_string(p1) + " is invalid here";
      return m;
    }
  }
  if (port[3] == 'C') {
    Ctl64 c3 = ctl64(p3);
    if (c3.in != In64::Port3 || !merge(c3, 3)) {
      m.why = "port 3 control " + std::to_string(p3) + " is invalid here";
      return m;
    }
  }
  if (port[0] == '-' || port[2] == '-') {
    m.why = "control values leave a port unspecified";
    return m;
  }
  if (port[0] == 'R' && port[1] == 'R') {
    unsigned a = p0, b = p1;
    if (a > b) a = 31 - a, b = 31 - b;
    m.read0 = true;
    m.reg0 = 2 * a;
    m.read1 = p0 != p1;
    m.reg1 = 2 * b;
  } else if (port[0] == 'S') {
    m.read0 = true;
    m.reg0 = 2 * (p0 + 16);
  }
  using P2 = RegMode64::Port2;
  using P3 = RegMode64::Port3;
  m.port2 = port[2] == 'R' ? P2::Read : port[2] == 'F' ? P2::WriteFma : port[2] == 'A' ? P2::WriteAdd : P2::Unused;
  m.port3 = port[3] == 'F' ? P3::WriteFma : port[3] == 'A' ? P3::WriteAdd : P3::Unused;
  m.reg2 = 2 * p2;
  m.reg3 = 2 * p3;
  m.valid = true;
  return m;
}

bool encode_regs64(const std::vector<unsigned>& reads, int write_fma, int write_add, unsigned fau, uint64_t& bits,
                   std::string& err) {
  for (unsigned r : reads)
    if (r % 2 || r > 62) {
      err = "64-bit clauses read even registers r0-r62";
      return false;
    }
  for (int w : {write_fma, write_add})
    if (w >= 0 && (w % 2 || w > 62)) {
      err = "64-bit clauses write even registers r0-r62";
      return false;
    }
  if (reads.size() > 3 || (reads.size() == 3 && write_fma >= 0 && write_add >= 0)) {
    err = "too many register pairs for the four ports";
    return false;
  }
  unsigned f0 = 0, f1 = 0, f2 = 0, f3 = 0, main = 0;
  bool both_w = write_fma >= 0 && write_add >= 0;
  // Port 2: a third read, else a write (preferred over port 3 for a single write).
  char port2 = 'U', port3 = 'U';
  if (reads.size() == 3) port2 = 'R', f2 = reads[2] / 2;
  if (both_w) port2 = 'F', f2 = unsigned(write_fma) / 2, port3 = 'A', f3 = unsigned(write_add) / 2;
  else if (write_fma >= 0 || write_add >= 0) {
    char who = write_fma >= 0 ? 'F' : 'A';
    unsigned reg = unsigned(write_fma >= 0 ? write_fma : write_add) / 2;
    if (port2 == 'R') port3 = who, f3 = reg;
    else port2 = who, f2 = reg;
  }
  auto port3_control = [&] { f3 = port2 == 'U' ? 7 : port2 == 'A' ? 2 : port2 == 'F' ? 6 : 10; };
  std::vector<unsigned> pr;
  for (unsigned r : reads) pr.push_back(r / 2);
  bool pair01 = pr.size() >= 2 || (pr.size() == 1 && pr[0] <= 15);
  if (pair01) {
    unsigned a = pr[0], b = pr.size() >= 2 ? pr[1] : pr[0];
    if (a > b) std::swap(a, b);
    if (a >= 16) a = 31 - a, b = 31 - b;
    f0 = a;
    f1 = b;
    if (port3 == 'U') main = 27, port3_control();
    else if (port2 == 'R') main = port3 == 'A' ? 17 : 26;
    else main = 8;
  } else {
    main = both_w ? 29 : 31;
    if (!pr.empty()) {
      f0 = pr[0] - 16;
      f1 = both_w ? 0 : 12;
    } else {
      f1 = both_w ? 3 : 15;
    }
    if (!both_w) port3_control();
  }
  bits = uint64_t(fau & 0xff) | uint64_t(f2) << 8 | uint64_t(f3) << 13 | uint64_t(f0) << 18 | uint64_t(f1) << 22 |
         uint64_t(main) << 27 | uint64_t(7) << 32;
  return true;
}

int fau_constant_slot(unsigned fau) {
  static const int map[8] = {-1, -1, 4, 5, 0, 1, 2, 3};
  if (fau < 0x20 || fau >= 0x80) return -1;
  return map[fau >> 4];
}
unsigned constant_slot_fau(unsigned slot) {
  static const unsigned map[6] = {4, 5, 6, 7, 2, 3};
  return map[slot] << 4;
}

bool unpack_clause(const uint8_t* code, size_t size, size_t offset, Clause& out, std::string& err) {
  out = Clause();
  out.offset = offset;
  unsigned ninstr = 0, nconst = 0;
  for (unsigned qi = 0;; ++qi) {
    size_t at = offset + size_t(qi) * 16;
    auto fail = [&](const std::string& why) {
      err = "bifrost: clause at byte " + hex(offset) + ", quadword " + std::to_string(qi) + " (byte " + hex(at) +
            "): " + why;
      return false;
    };
    if (qi >= 64) return fail("no quadword ends the clause (no stop bit within 64 quadwords)");
    if (at + 16 > size) return fail("truncated: the clause continues past the end of the code");
    Quad q;
    for (int i = 0; i < 8; ++i) q.lo |= uint64_t(code[at + i]) << (8 * i);
    for (int i = 0; i < 8; ++i) q.hi |= uint64_t(code[at + 8 + i]) << (8 * i);
    unsigned tag = unsigned(q.lo & 0xff);
    bool stop = tag & 0x40;
    Tuple main = tuple_from_lo75(q);
    uint64_t const0 = q.get(8, 60) << 4, const1 = q.get(68, 60) << 4;
    bool done = false;
    if (tag & 0x80) {  // format 5 (bit 6 clear) or 10
      unsigned idx = stop ? 5 : 2;
      set_upper(main, (tag >> 3) & 7);
      out.tuples[idx + 1] = main;
      Tuple& t = out.tuples[idx];
      set_second_half(t, q);
      set_upper(t, tag & 7);
      out.consts[0] = q.get(113, 15) << 4;
    } else {
      switch ((tag >> 3) & 7) {
        case 0:
          switch (tag & 7) {
            case 3:  // format 1
              set_upper(main, unsigned(q.get(125, 3)));
              out.tuples[1] = main;
              ninstr = 2;
              done = stop;
              break;
            case 4:  // format 3
            case 6: {  // format 8
              unsigned idx = (tag & 7) == 4 ? 2 : 5;
              set_second_half(out.tuples[idx], q);
              set_upper(out.tuples[idx], unsigned(q.get(125, 3)));
              out.consts[0] = const0;
              std::string why;
              if (!decode_m(&out.mods[0], unsigned(q.get(68, 4)), unsigned(q.get(72, 4)), true, why))
                return fail(why);
              ninstr = idx + 1;
              nconst = 1;
              done = stop;
              break;
            }
            case 1:
            case 5:  // format 4 / 4'
              set_second_half(out.tuples[2], q);
              set_upper(out.tuples[2], unsigned(q.get(125, 3)));
              set_upper(main, unsigned(q.get(122, 3)));
              out.tuples[3] = main;
              if ((tag & 7) == 5) {
                ninstr = 4;
                done = stop;
              }
              break;
            case 7:  // format 9
              set_second_half(out.tuples[5], q);
              set_upper(out.tuples[5], unsigned(q.get(125, 3)));
              set_upper(main, unsigned(q.get(122, 3)));
              out.tuples[6] = main;
              ninstr = 7;
              done = stop;
              break;
            default:
              return fail("invalid tag " + hex(tag) + " (no quadword format has it)");
          }
          break;
        case 2:
        case 3: {  // format 6 / 11
          unsigned idx = ((tag >> 3) & 7) == 2 ? 4 : 7;
          set_upper(main, tag & 7);
          out.tuples[idx] = main;
          out.consts[0] |= q.get(83, 45) << 19;
          nconst = 1;
          ninstr = idx + 1;
          done = stop;
          break;
        }
        case 4: {  // format 2 (bit 6 clear) or 7
          unsigned idx = stop ? 4 : 1;
          set_upper(main, tag & 7);
          out.tuples[idx] = main;
          set_first_half(out.tuples[idx + 1], q);
          break;
        }
        case 1:  // format 0': one-tuple clause
          ninstr = 1;
          done = stop;
          [[fallthrough]];
        case 5:  // format 0
          out.header.bits = q.get(83, 45);
          set_upper(main, tag & 7);
          out.tuples[0] = main;
          break;
        case 6:
        case 7: {  // format 12: two constants
          unsigned pos = tag & 15;
          if (kPosTable[pos][1] != ninstr)
            return fail("constant quadword position " + hex(pos) + " expects " +
                        (pos == 15 ? std::string("nothing (reserved)")
                                   : std::to_string(kPosTable[pos][1]) + " tuples") +
                        ", the clause has " + std::to_string(ninstr));
          unsigned ci = kPosTable[pos][0];
          if (ci + 2 > 6) return fail("constant quadword position " + hex(pos) + " names constants past the sixth");
          if (nconst < ci + 2) nconst = ci + 2;
          out.consts[ci] = const0;
          out.consts[ci + 1] = const1;
          unsigned a1 = unsigned(q.get(64, 4)), b1 = unsigned(q.get(124, 4));
          unsigned a2 = unsigned(q.get(32, 4)), b2 = unsigned(q.get(92, 4));
          std::string why;
          if (!decode_m(&out.mods[ci], (16 + a1 - b1) & 15, (16 + a2 - b2) & 15, false, why)) return fail(why);
          done = stop;
          break;
        }
      }
    }
    if (done) {
      out.quadwords = qi + 1;
      break;
    }
  }
  out.ntuples = ninstr;
  out.nconsts = nconst;
  return true;
}

bool has_free_constant_slot(unsigned n) { return n == 3 || n == 5 || n == 6 || n == 8; }

unsigned max_constants(unsigned n) {
  unsigned best = has_free_constant_slot(n) ? 1 : 0;
  for (const auto& p : kPosTable)
    if (p[1] == n && p[0] + 2 > best) best = p[0] + 2;
  return best > 6 ? 6 : best;
}

std::vector<uint64_t> order_constants(unsigned n, const std::vector<uint64_t>& in, std::vector<unsigned>& where,
                                      const std::vector<bool>& pc_hi) {
  std::vector<uint64_t> slots;
  where.assign(in.size(), 0);
  auto is_pc = [&](size_t i) { return i < pc_hi.size() && pc_hi[i]; };
  std::vector<size_t> plain, pcs;
  for (size_t i = 0; i < in.size(); ++i) (is_pc(i) ? pcs : plain).push_back(i);
  size_t next_plain = 0;
  if (has_free_constant_slot(n)) {
    if (next_plain < plain.size()) {
      where[plain[next_plain]] = 0;
      slots.push_back(in[plain[next_plain++]] & ~uint64_t(15));
    } else {
      slots.push_back(0);
    }
  }
  // Branch offsets: E0 of a pair, partner = the next plain constant or zero.
  for (size_t k : pcs) {
    uint64_t e1 = 0;
    unsigned base = unsigned(slots.size());
    if (next_plain < plain.size()) {
      where[plain[next_plain]] = base + 1;
      e1 = in[plain[next_plain++]] & ~uint64_t(15);
    }
    uint64_t a1 = ((e1 >> 60) + 4) & 15;
    uint64_t e0 = (in[k] & ~uint64_t(15) & ~(uint64_t(15) << 60)) | (a1 << 60);
    where[k] = base;
    slots.push_back(e0);
    slots.push_back(e1);
  }
  while (next_plain < plain.size()) {
    size_t i0 = plain[next_plain++];
    bool two = next_plain < plain.size();
    size_t i1 = two ? plain[next_plain++] : 0;
    uint64_t e0 = in[i0] & ~uint64_t(15);
    uint64_t e1 = two ? in[i1] & ~uint64_t(15) : 0;
    unsigned base = unsigned(slots.size());
    unsigned m1 = unsigned((e0 >> 60) - (e1 >> 60)) & 15;
    bool swap = m1 >= 1 && m1 <= 7;  // would read as a PC-relative pair
    slots.push_back(swap ? e1 : e0);
    slots.push_back(swap ? e0 : e1);
    where[i0] = swap ? base + 1 : base;
    if (two) where[i1] = swap ? base : base + 1;
  }
  return slots;
}

bool pack_clause(const Clause& c, std::vector<uint8_t>& out, std::string& err) {
  unsigned n = c.ntuples;
  if (n < 1 || n > 8) {
    err = "bifrost: a clause has 1 to 8 tuples, not " + std::to_string(n);
    return false;
  }
  bool free_slot = has_free_constant_slot(n);
  unsigned pairs_consts = c.nconsts > (free_slot ? 1u : 0u) ? c.nconsts - (free_slot ? 1u : 0u) : 0;
  if (pairs_consts % 2) {
    err = "bifrost: constants after the free slot come in pairs";
    return false;
  }
  if (c.nconsts > max_constants(n)) {
    err = "bifrost: a " + std::to_string(n) + "-tuple clause holds at most " + std::to_string(max_constants(n)) +
          " constants, not " + std::to_string(c.nconsts);
    return false;
  }
  unsigned npairs = pairs_consts / 2;
  std::vector<Quad> qs;
  auto tb = [&](unsigned i) { return TupleBits::of(c.tuples[i]); };
  auto upper = [&](unsigned i) { return unsigned(c.tuples[i].add >> 17) & 7; };
  auto put_lo75 = [&](Quad& q, unsigned i) { q.set(8, 75, 0), q.set(8, 64, tb(i).lo), q.set(72, 11, tb(i).hi & 0x7ff); };
  auto put_first = [&](Quad& q, unsigned i) { q.set(83, 45, tb(i).get(0, 45)); };
  auto put_second = [&](Quad& q, unsigned i) {
    q.set(83, 30, tb(i).get(45, 30));
    q.set(125, 3, upper(i));
  };
  uint64_t ec0 = free_slot ? (c.consts[0] >> 4) : 0;  // 60 stored bits
  bool z_last = npairs == 0;
  auto z = [&](bool last) { return last && z_last ? 0x40u : 0u; };
  // Instruction quadwords (docs/bifrost.md, canonical sequence).
  {
    Quad q;
    put_lo75(q, 0);
    q.set(83, 45, c.header.bits);
    q.set(0, 8, (n == 1 ? 0x08u | z(true) : 0x28u) | upper(0));
    qs.push_back(q);
  }
  if (n == 2) {
    Quad q;
    put_lo75(q, 1);
    q.set(125, 3, upper(1));
    q.set(0, 8, 0x03u | z(true));
    qs.push_back(q);
  }
  if (n >= 3) {
    Quad q;
    put_lo75(q, 1);
    put_first(q, 2);
    q.set(0, 8, 0x20u | upper(1));
    qs.push_back(q);
  }
  if (n == 3) {
    Quad q;
    q.set(8, 60, ec0);
    put_second(q, 2);
    q.set(0, 8, 0x04u | z(true));
    qs.push_back(q);
  }
  if (n == 4 || n >= 6) {
    Quad q;
    put_lo75(q, 3);
    put_second(q, 2);
    q.set(122, 3, upper(3));
    q.set(0, 8, n == 4 ? 0x05u | z(true) : 0x01u);
    qs.push_back(q);
  }
  if (n == 5) {
    Quad q;
    put_lo75(q, 3);
    put_second(q, 2);
    q.set(113, 15, ec0 & 0x7fff);
    q.set(0, 8, 0x80u | (upper(3) << 3) | upper(2));
    qs.push_back(q);
    Quad r;
    put_lo75(r, 4);
    r.set(83, 45, ec0 >> 15);
    r.set(0, 8, 0x10u | z(true) | upper(4));
    qs.push_back(r);
  }
  if (n >= 6) {
    Quad q;
    put_lo75(q, 4);
    put_first(q, 5);
    q.set(0, 8, 0x60u | upper(4));
    qs.push_back(q);
  }
  if (n == 6) {
    Quad q;
    q.set(8, 60, ec0);
    put_second(q, 5);
    q.set(0, 8, 0x06u | z(true));
    qs.push_back(q);
  }
  if (n == 7) {
    Quad q;
    put_lo75(q, 6);
    put_second(q, 5);
    q.set(122, 3, upper(6));
    q.set(0, 8, 0x07u | z(true));
    qs.push_back(q);
  }
  if (n == 8) {
    Quad q;
    put_lo75(q, 6);
    put_second(q, 5);
    q.set(113, 15, ec0 & 0x7fff);
    q.set(0, 8, 0xc0u | (upper(6) << 3) | upper(5));
    qs.push_back(q);
    Quad r;
    put_lo75(r, 7);
    r.set(83, 45, ec0 >> 15);
    r.set(0, 8, 0x18u | z(true) | upper(7));
    qs.push_back(r);
  }
  for (unsigned p = 0; p < npairs; ++p) {
    unsigned before = (free_slot ? 1 : 0) + 2 * p;
    int pos = -1;
    for (int k = 0; k < 15; ++k)
      if (kPosTable[k][0] == before && kPosTable[k][1] == n) pos = k;
    if (pos < 0) {
      err = "bifrost: no constant quadword position for " + std::to_string(n) + " tuples after " +
            std::to_string(before) + " constants";
      return false;
    }
    Quad q;
    q.set(8, 60, c.consts[before] >> 4);
    q.set(68, 60, c.consts[before + 1] >> 4);
    q.set(0, 8, (p + 1 == npairs ? 0x70u : 0x30u) | unsigned(pos));
    qs.push_back(q);
  }
  for (const Quad& q : qs) {
    for (int i = 0; i < 8; ++i) out.push_back(uint8_t(q.lo >> (8 * i)));
    for (int i = 0; i < 8; ++i) out.push_back(uint8_t(q.hi >> (8 * i)));
  }
  return true;
}

}  // namespace gpurc::bifrost
