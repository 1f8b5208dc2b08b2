// FastEncoder::fast_vex: the VEX / EVEX encoding of the operand shapes the
// lowerings use, byte for byte what xbyak's opVex writes for them
// (backend_x64/encoder.h; the rules below are the Intel SDM's, vol. 2,
// 2.3 "VEX" and 2.7 "EVEX", in the same order of decisions as opVex so the
// choices where several encodings are valid come out the same: the 2-byte
// VEX form whenever it can express the instruction, disp8 (or EVEX's
// disp8*N) whenever the displacement fits, no displacement when it is 0 and
// the base is not rbp / r13).
#include "backend_x64/encoder.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace gpurc::x64 {

using Xbyak::Address;
using Xbyak::Operand;
using Xbyak::Reg;
using Xbyak::RegExp;

namespace {

bool fits_disp8(uint32_t d) { return d + 0x80u < 0x100u; }

// ModRM.mod of a [base + ...] operand: 0 without a displacement (rbp/r13 as
// base always take one), 1 for a disp8 (EVEX: disp8*N, `disp8n` > 0, with
// `disp` scaled down in place), else 2 (disp32).
int modrm_mod(int base_low, int disp8n, uint32_t& disp) {
  if (base_low != 5 && disp == 0) return 0;
  if (disp8n == 0) return fits_disp8(disp) ? 1 : 2;
  if ((disp & uint32_t(disp8n - 1)) == 0) {
    const uint32_t t = uint32_t(int32_t(disp) / disp8n);
    if (fits_disp8(t)) {
      disp = t;
      return 1;
    }
  }
  return 2;
}

// GPURC_X64_FAST_ENCODER=0 sends every instruction to xbyak: the same
// binary then shows that the generated code does not depend on the fast
// path (docs/backend_x64.md, "Fast encoder").
const bool kFastEnabled = [] {
  const char* e = std::getenv("GPURC_X64_FAST_ENCODER");
  return !(e && std::strcmp(e, "0") == 0);
}();

}  // namespace

namespace {

// The VEX or EVEX prefix and the opcode. r, v: ModRM.reg and vvvv register
// numbers; b_ext, x_ext: the rm side's extension bits (register rm: bits 3
// and 4 of its number; memory: bit 3 of base and of index); len: VEX.L or
// EVEX.L'L.
inline uint8_t* put_prefix(uint8_t* p, const VexForm& f, bool evex, int r, int v, bool b_ext, bool x_ext, int len,
                           int aaa, bool zero, bool bcast) {
  if (!evex) {
    const int tail = ((~v & 15) << 3) | (len << 2) | f.pp;
    if (!b_ext && !x_ext && !f.vex_w && f.map == VexForm::k0F) {
      p[0] = 0xC5;
      p[1] = uint8_t(((r & 8) ? 0 : 0x80) | tail);
      p += 2;
    } else {
      p[0] = 0xC4;
      p[1] = uint8_t(((r & 8) ? 0 : 0x80) | (x_ext ? 0 : 0x40) | (b_ext ? 0 : 0x20) | f.map);
      p[2] = uint8_t((f.vex_w << 7) | tail);
      p += 3;
    }
  } else {
    p[0] = 0x62;
    p[1] = uint8_t(((r & 8) ? 0 : 0x80) | (x_ext ? 0 : 0x40) | (b_ext ? 0 : 0x20) | ((r & 16) ? 0 : 0x10) | f.map);
    p[2] = uint8_t((f.evex_w << 7) | ((~v & 15) << 3) | 4 | f.pp);
    p[3] = uint8_t(((zero && aaa) ? 0x80 : 0) | (len << 5) | (bcast ? 0x10 : 0) | ((v & 16) ? 0 : 8) | aaa);
    p += 4;
  }
  *p++ = f.opcode;
  return p;
}

// EVEX.L'L of a vector length in bits (xbyak: the widest operand).
inline int evex_ll(uint32_t bits) { return bits >= 512 ? 2 : bits >= 256 ? 1 : 0; }

// The one opmask of reg, vvvv and a register rm (0: none); -1: two different ones (xbyak's error).
inline int one_mask(int a, int b, int c) {
  const int m = a | b | c;
  if ((a && a != m) || (b && b != m) || (c && c != m)) return -1;
  return m;
}

const Xbyak::Operand kNoOperand;  // vvvv absent: register 0, no width, mask or rounding

// An operand's bit-fields as one word, in the x86-64 ABI's layout of
// Xbyak::Operand (idx_:6, kind_:10, bit_:14, zero_:1 in the first 32 bits,
// mask_:3, rounding_:3 in the next; bit 31 and bits 38-63 are padding, whose
// values are unspecified, so every use masks them out): the plain-register
// test below is one OR and one AND instead of a dozen bit-field reads. kRawLayout checks the
// layout once against the accessors; if it does not hold (another xbyak),
// the test is skipped and every form takes the general code.
static_assert(sizeof(Xbyak::Operand) == 8 && sizeof(Xbyak::Reg) == 8);
inline uint64_t raw(const Operand& o) {
  uint64_t w;
  std::memcpy(&w, &o, 8);
  return w;
}
constexpr uint64_t kRawIdx = 0x1F, kRawYmm = uint64_t(Operand::YMM) << 6, kRawRounding = uint64_t(7) << 35;
// What makes xbyak choose EVEX: register 16-31, zmm, an opmask, rounding.
constexpr uint64_t kRawEvex = 0x10 | (uint64_t(Operand::ZMM) << 6) | (uint64_t(0x3F) << 32);
constexpr uint64_t kRawDefined = 0x7FFFFFFF | (uint64_t(0x3F) << 32);
inline uint32_t raw_bits(uint64_t w) { return uint32_t(w >> 16) & 0x3FFF; }
// Register 16-31, zmm, zeroing, an opmask, rounding: none of these in a plain VEX operand.
constexpr uint64_t kRawNotPlain = 0x10 | (uint64_t(Operand::ZMM) << 6) | (uint64_t(1) << 30) | (uint64_t(0x3F) << 32);
bool raw_layout_holds() {
  using namespace Xbyak;
  const Operand probes[] = {Xmm(5), Ymm(9), Zmm(17) | Opmask(3) | util::T_z, Zmm(30) | util::T_rd_sae, Reg64(12), Opmask(6),
                            Xmm(16) | Opmask(7)};
  for (const Operand& o : probes) {
    const uint64_t w = raw(o);
    if ((w & 0x3F) != uint64_t(o.getIdx()) || ((w >> 6) & 0x3FF) != uint64_t(o.getKind()) ||
        ((w >> 16) & 0x3FFF) != o.getBit() || ((w >> 30) & 1) != uint64_t(o.hasZero()) ||
        ((w >> 32) & 7) != uint64_t(o.getOpmaskIdx()) || ((w >> 35) & 7) != uint64_t(o.getRounding()))
      return false;
  }
  return (raw(kNoOperand) & kRawDefined) == 0;
}
const bool kRawLayout = raw_layout_holds();

// The register operands of a memory form without a broadcast or an opmask
// on the address (fast_vex_mem, fast_vex_rip): declined (false) when a
// register carries an opmask, zeroing or rounding (the Address path takes
// those); otherwise their words and the choice fast_mem and
// fast_mem_general make, VEX unless the form or a register needs EVEX.
struct PlainMemRegs {
  uint64_t wr, wv;
  bool evex;
};
inline bool plain_mem_regs(const VexForm& f, const Xbyak::Xmm& reg, const Xbyak::Xmm* vvvv, PlainMemRegs& out) {
  out.wr = raw(reg);
  out.wv = vvvv ? raw(*vvvv) : 0;
  if ((out.wr | out.wv) & ((uint64_t(1) << 30) | (uint64_t(0x3F) << 32))) return false;
  out.evex = f.enc >= VexForm::kEvexOnly || ((out.wr | out.wv) & kRawEvex);
  return !(out.evex && f.enc == VexForm::kVexOnly);
}

}  // namespace

namespace {

// A plain general-purpose register of 32 or 64 bits (no 8-bit REX forms,
// no opmask / zeroing / rounding decoration): 64 or 32; 0 otherwise. From
// the raw word (kRawLayout holds: the callers check).
inline int gpr_bits(uint64_t w) {
  constexpr uint64_t kDecor = (uint64_t(1) << 30) | (uint64_t(0x3F) << 32) | 0x30;  // zeroing, mask, rounding, idx >= 16
  const uint32_t bits = raw_bits(w);
  if (((w >> 6) & 0x3FF) != uint64_t(Operand::REG) || (w & kDecor) || (bits != 32 && bits != 64)) return 0;
  return int(bits);
}

// An address the encodings below take: [base + index * scale + disp] with a
// 64-bit base (register 0-15), an optional 64-bit general index and a signed
// 32-bit displacement, or rip-relative without a label; no broadcast and no
// opmask on it.
struct MemParts {
  Address::Mode mode = Address::M_ModRM;
  int base = 0, index = 0, scale = 0;  // scale 0: no index
  uint64_t disp = 0;
};
inline bool mem_parts(const Address& a, MemParts& m) {
  if (a.isBroadcast() || (raw(a) & (uint64_t(7) << 32))) return false;
  m.mode = a.getMode();
  if (m.mode == Address::M_ModRM) {
    const RegExp e = a.getRegExp(false);
    const uint64_t wbase = raw(e.getBase()), windex = raw(e.getIndex());
    // 64-bit registers 0-15 (a vector index, VSIB, has more bits; no base,
    // 32-bit registers: xbyak's).
    if (raw_bits(wbase) != 64 || (wbase & 0x30) || (raw_bits(windex) | 64) != 64 || (windex & 0x30)) return false;
    m.disp = e.getDisp();
    if (uint64_t(int64_t(int32_t(uint32_t(m.disp)))) != m.disp) return false;
    m.base = int(wbase & kRawIdx);
    if (raw_bits(windex)) {
      m.index = int(windex & kRawIdx);
      m.scale = e.getScale();
    }
    return true;
  }
  if ((m.mode == Address::M_rip || m.mode == Address::M_ripAddr) && !a.getLabel()) {
    m.disp = a.getDisp();
    return true;
  }
  return false;
}

// The REX bits X and B of an address (R and W are the caller's).
inline int mem_rex(const MemParts& m) {
  if (m.mode != Address::M_ModRM) return 0;
  return ((m.scale && (m.index & 8)) ? 2 : 0) | ((m.base & 8) ? 1 : 0);
}

// ModRM (mod, ModRM.reg = r, base), the SIB byte when there is an index or
// the base is rsp / r12, then the displacement mod asks for (none, disp8,
// disp32): the tail every [base + index*scale + disp] operand shares.
inline uint8_t* put_modrm_sib(uint8_t* q, int mod, int r, int base_low, int scale, int index, uint32_t disp) {
  if (scale || base_low == 4) {
    const int ss = scale == 8 ? 3 : scale == 4 ? 2 : scale == 2 ? 1 : 0;
    q[0] = uint8_t((mod << 6) | ((r & 7) << 3) | 4);
    q[1] = uint8_t((ss << 6) | ((scale ? (index & 7) : 4) << 3) | base_low);
    q += 2;
  } else {
    *q++ = uint8_t((mod << 6) | ((r & 7) << 3) | base_low);
  }
  if (mod == 1) {
    *q++ = uint8_t(disp);
  } else if (mod == 2) {
    std::memcpy(q, &disp, 4);
    q += 4;
  }
  return q;
}

// A rip-relative operand: ModRM 00 r 101 and a disp32. An absolute target
// (M_ripAddr) counts from the end of the instruction, `imm_bytes` after the
// displacement. nullptr: the target is out of reach.
thread_local std::vector<RipRef>* tl_rip_log = nullptr;

inline uint8_t* put_rip(uint8_t* q, int r, uint64_t d, bool absolute, int imm_bytes) {
  *q++ = uint8_t(((r & 7) << 3) | 5);
  if (tl_rip_log) [[unlikely]]
    tl_rip_log->push_back(RipRef{q, d, absolute});
  if (absolute) d -= uint64_t(q + 4 + imm_bytes);
  if (uint64_t(int64_t(int32_t(uint32_t(d)))) != d) return nullptr;
  const uint32_t d32 = uint32_t(d);
  std::memcpy(q, &d32, 4);
  return q + 4;
}

// ModRM (ModRM.reg = r), SIB and displacement of m at q, as xbyak's setSIB /
// opAddr write them without disp8*N; `imm_bytes` follow the displacement (a
// rip-relative target counts from the end of the instruction). nullptr: a
// rip-relative target out of reach.
inline uint8_t* put_mem(uint8_t* q, int r, const MemParts& m, int imm_bytes) {
  if (m.mode != Address::M_ModRM) return put_rip(q, r, m.disp, m.mode == Address::M_ripAddr, imm_bytes);
  uint32_t disp = uint32_t(m.disp);
  const int base_low = m.base & 7;
  const int mod = modrm_mod(base_low, 0, disp);
  return put_modrm_sib(q, mod, r, base_low, m.scale, m.index, disp);
}

}  // namespace

void set_rip_log(std::vector<RipRef>* log) { tl_rip_log = log; }

bool FastEncoder::fast_reg(const VexForm& f, const Reg& reg, const Operand* vvvv, const Reg& rm, int imm) {
  // Longest form: EVEX (4) + opcode + ModRM + imm8 = 7 bytes.
  if (maxSize_ - size_ < 16 || !kFastEnabled) return false;
  const Operand& v = vvvv ? *vvvv : kNoOperand;
  const uint64_t wr = raw(reg), wv = raw(v), wb = raw(rm);
  // The common case first (every AVX2 register form): registers 0-15, no
  // zmm, opmask, zeroing or rounding, a form with a VEX encoding.
  if (kRawLayout && f.enc != VexForm::kEvexOnly && ((wr | wv | wb) & kRawNotPlain) == 0) {
    const int r = int(wr & kRawIdx), vi = int(wv & kRawIdx), bi = int(wb & kRawIdx);
    uint8_t* p = top_ + size_;
    const int tail = ((~vi & 15) << 3) | ((wr & kRawYmm) ? 4 : 0) | f.pp;
    if (!(bi & 8) && !f.vex_w && f.map == VexForm::k0F) {
      p[0] = 0xC5;
      p[1] = uint8_t(((r & 8) ? 0 : 0x80) | tail);
      p += 2;
    } else {
      p[0] = 0xC4;
      p[1] = uint8_t(((r & 8) ? 0 : 0x80) | 0x40 | ((bi & 8) ? 0 : 0x20) | f.map);
      p[2] = uint8_t((f.vex_w << 7) | tail);
      p += 3;
    }
    p[0] = f.opcode;
    p[1] = uint8_t(0xC0 | ((r & 7) << 3) | (bi & 7));
    p += 2;
    if (imm >= 0) *p++ = uint8_t(imm);
    size_ = size_t(p - top_);
    ++fast_encoded_;
    return true;
  }
  return fast_reg_general(f, reg, v, rm, imm);
}

[[gnu::noinline]] bool FastEncoder::fast_reg_general(const VexForm& f, const Reg& reg, const Operand& v, const Reg& rm, int imm) {
  if (reg.getRounding() | v.getRounding() | rm.getRounding()) return false;
  const int r = reg.getIdx(), vi = v.getIdx(), bi = rm.getIdx();
  uint8_t* p = top_ + size_;
  uint8_t* q;
  const bool evex = f.enc == VexForm::kEvexOnly || reg.hasEvex() || v.hasEvex() || rm.hasEvex();
  if (!evex) {
    if ((r | vi | bi) >= 16) return false;
    q = put_prefix(p, f, false, r, vi, bi & 8, false, reg.isYMM(), 0, false, false);
  } else {
    if (f.enc == VexForm::kVexOnly) return false;
    const int aaa = one_mask(rm.getOpmaskIdx(), reg.getOpmaskIdx(), v.getOpmaskIdx());
    if (aaa < 0) return false;
    const uint32_t bits = std::max(std::max(reg.getBit(), v.getBit()), rm.getBit());
    q = put_prefix(p, f, true, r, vi, bi & 8, bi & 16, evex_ll(bits), aaa, reg.hasZero() || v.hasZero() || rm.hasZero(),
                   false);
  }
  *q++ = uint8_t(0xC0 | ((r & 7) << 3) | (bi & 7));
  if (imm >= 0) *q++ = uint8_t(imm);
  size_ = size_t(q - top_);
  ++fast_encoded_;
  return true;
}

bool FastEncoder::fast_mem(const VexForm& f, const Reg& reg, const Operand* vvvv, const Address& a, int imm) {
  // Longest form: EVEX (4) + opcode + ModRM + SIB + disp32 + imm8 = 12 bytes.
  if (maxSize_ - size_ < 16 || !kFastEnabled || !kRawLayout) return false;
  const uint64_t wr = raw(reg), wv = vvvv ? raw(*vvvv) : 0;
  // The common case first (every AVX2 load, store and memory source):
  // registers 0-15, no zmm, opmask, zeroing or rounding, a form whose memory
  // operand takes VEX, [base + index * scale + disp] with 64-bit registers
  // or rip-relative, no broadcast or opmask on the address. Everything else
  // (EVEX) is fast_mem_general's, which makes the same choices.
  MemParts m;
  if (f.enc <= VexForm::kVexEvex && ((wr | wv) & kRawNotPlain) == 0 && mem_parts(a, m)) {
    const int r = int(wr & kRawIdx), vi = int(wv & kRawIdx);
    const int x_ext = m.scale ? (m.index & 8) : 0, b_ext = m.base & 8;
    // put_prefix writes the VEX prefix and the opcode.
    uint8_t* p = put_prefix(top_ + size_, f, false, r, vi, b_ext, x_ext, (wr & kRawYmm) ? 1 : 0, 0, false, false);
    p = put_mem(p, r, m, imm >= 0 ? 1 : 0);
    if (!p) return false;  // a rip-relative target out of reach: xbyak's error
    if (imm >= 0) *p++ = uint8_t(imm);
    size_ = size_t(p - top_);
    ++fast_encoded_;
    return true;
  }
  return fast_mem_general(f, wr, wv, a, imm);
}

[[gnu::noinline]] bool FastEncoder::fast_mem_general(const VexForm& f, uint64_t wr, uint64_t wv, const Address& a,
                                                     int imm) {
  if ((wr | wv) & kRawRounding) return false;
  const int r = int(wr & kRawIdx), vi = int(wv & kRawIdx);
  uint8_t* p = top_ + size_;
  uint8_t* q;
  const Address::Mode mode = a.getMode();
  const bool bcast = a.isBroadcast();
  const int m_mask = a.getOpmaskIdx();
  if ((bcast && !f.bcast) || (m_mask && !f.mem_mask) || a.getLabel()) return false;
  const bool evex = f.enc >= VexForm::kEvexOnly || ((wr | wv) & kRawEvex) || bcast || m_mask;
  if (evex && f.enc == VexForm::kVexOnly) return false;
  int bi = 0, xi = 0, scale = 0;  // scale 0: no index
  uint32_t disp = 0;
  if (mode == Address::M_ModRM) {
    const RegExp e = a.getRegExp(false);
    const uint64_t wbase = raw(e.getBase()), windex = raw(e.getIndex());
    // No base (the optimiser's [r * 2] -> [r + r], disp32-only forms),
    // 32-bit registers (0x67) or a vector index (VSIB): xbyak's path.
    if (raw_bits(wbase) != 64 || (raw_bits(windex) | 64) != 64) return false;
    const uint64_t d = e.getDisp();
    if (uint64_t(int64_t(int32_t(uint32_t(d)))) != d) return false;  // not a signed 32-bit displacement
    disp = uint32_t(d);
    bi = int(wbase & kRawIdx);
    if (raw_bits(windex)) {
      xi = int(windex & kRawIdx);
      scale = e.getScale();
    }
  } else if (mode != Address::M_ripAddr && mode != Address::M_rip) {
    return false;
  }
  int disp8n = 0;  // 0: plain disp8 (VEX)
  if (!evex) {
    if ((r | vi) >= 16) return false;
    q = put_prefix(p, f, false, r, vi, bi & 8, xi & 8, (wr & kRawYmm) ? 1 : 0, 0, false, false);
  } else {
    // xbyak: the address's mask if it has one, else the registers'.
    const int aaa = m_mask ? m_mask : one_mask(0, int(wr >> 32) & 7, int(wv >> 32) & 7);
    if (aaa < 0) return false;
    // (The base register's 64 bits take part in xbyak's vector length too.)
    const int ll = evex_ll(std::max(raw_bits(wr), raw_bits(wv)));
    disp8n = bcast ? f.bcast : (f.tuple & VexForm::kScaled) ? (1 << (f.tuple & 15)) << ll : 1 << (f.tuple & 15);
    q = put_prefix(p, f, true, r, vi, bi & 8, xi & 8, ll, aaa, ((wr | wv) >> 30) & 1, bcast);
  }
  if (mode != Address::M_ModRM) {
    q = put_rip(q, r, a.getDisp(), mode == Address::M_ripAddr, imm >= 0 ? 1 : 0);
    if (!q) return false;
  } else {
    const int base_low = bi & 7;
    const int mod = modrm_mod(base_low, disp8n, disp);
    q = put_modrm_sib(q, mod, r, base_low, scale, xi, disp);
  }
  if (imm >= 0) *q++ = uint8_t(imm);
  size_ = size_t(q - top_);
  ++fast_encoded_;
  return true;
}

Address MemRef::address() const {
  const Xbyak::Reg64 b(base);
  if (!scale) return Xbyak::util::ptr[b + disp];
  return Xbyak::util::ptr[b + Xbyak::Reg64(index) * scale + disp];
}

bool FastEncoder::fast_vex_mem(const VexForm& f, const Xbyak::Xmm& reg, const Xbyak::Xmm* vvvv, const MemRef& m,
                               int imm) {
  // Longest form: EVEX (4) + opcode + ModRM + SIB + disp32 + imm8 = 12 bytes.
  if (maxSize_ - size_ < 16 || !kFastEnabled || !kRawLayout) return false;
  PlainMemRegs regs;
  if (!plain_mem_regs(f, reg, vvvv, regs)) return false;
  const uint64_t wr = regs.wr, wv = regs.wv;
  const bool evex = regs.evex;
  const int r = int(wr & kRawIdx), vi = int(wv & kRawIdx);
  const bool b_ext = m.base & 8, x_ext = m.scale && (m.index & 8);
  uint8_t* p = top_ + size_;
  int disp8n = 0;  // 0: plain disp8 (VEX)
  if (!evex) {
    p = put_prefix(p, f, false, r, vi, b_ext, x_ext, (wr & kRawYmm) ? 1 : 0, 0, false, false);
  } else {
    const int ll = evex_ll(std::max(raw_bits(wr), raw_bits(wv)));
    disp8n = (f.tuple & VexForm::kScaled) ? (1 << (f.tuple & 15)) << ll : 1 << (f.tuple & 15);
    p = put_prefix(p, f, true, r, vi, b_ext, x_ext, ll, 0, false, false);
  }
  uint32_t disp = uint32_t(m.disp);
  const int base_low = m.base & 7;
  const int mod = modrm_mod(base_low, disp8n, disp);
  p = put_modrm_sib(p, mod, r, base_low, m.scale, m.index, disp);
  if (imm >= 0) *p++ = uint8_t(imm);
  size_ = size_t(p - top_);
  ++fast_encoded_;
  return true;
}

Address RipMem::address() const {
  using namespace Xbyak::util;
  return bytes == 4 ? dword[rip + target] : bytes == 8 ? qword[rip + target] : ptr[rip + target];
}

bool FastEncoder::fast_vex_rip(const VexForm& f, const Xbyak::Xmm& reg, const Xbyak::Xmm* vvvv, const void* target,
                               int imm) {
  // Longest form: EVEX (4) + opcode + ModRM + disp32 + imm8 = 11 bytes.
  if (maxSize_ - size_ < 16 || !kFastEnabled || !kRawLayout) return false;
  // A rip-relative operand has no base, index or disp8*N.
  PlainMemRegs regs;
  if (!plain_mem_regs(f, reg, vvvv, regs)) return false;
  const uint64_t wr = regs.wr, wv = regs.wv;
  const bool evex = regs.evex;
  const int r = int(wr & kRawIdx), vi = int(wv & kRawIdx);
  uint8_t* p = top_ + size_;
  if (!evex) p = put_prefix(p, f, false, r, vi, false, false, (wr & kRawYmm) ? 1 : 0, 0, false, false);
  else p = put_prefix(p, f, true, r, vi, false, false, evex_ll(std::max(raw_bits(wr), raw_bits(wv))), 0, false, false);
  p = put_rip(p, r, uint64_t(reinterpret_cast<uintptr_t>(target)), true, imm >= 0 ? 1 : 0);
  if (!p) return false;  // out of reach: xbyak's error (nothing was committed: size_ is unchanged)
  if (imm >= 0) *p++ = uint8_t(imm);
  size_ = size_t(p - top_);
  ++fast_encoded_;
  return true;
}

bool FastEncoder::fast_mov(const Operand& op1, const Operand& op2) {
  // Longest form: REX + opcode + ModRM + SIB + disp32 = 8 bytes.
  if (maxSize_ - size_ < 16 || !kFastEnabled || !kRawLayout) return false;
  uint8_t* p = top_ + size_;
  const uint64_t w1 = raw(op1), w2 = raw(op2);
  const int b1 = gpr_bits(w1), b2 = gpr_bits(w2);
  int bits, r;
  uint8_t opcode;
  const Operand* mem;
  if (b1 && b2) {
    // 89 /r: ModRM.reg the source, ModRM.rm the destination.
    if (b1 != b2) return false;
    const int d = int(w1 & kRawIdx), s = int(w2 & kRawIdx);
    const int rex = (b1 == 64 ? 8 : 0) | ((s & 8) ? 4 : 0) | ((d & 8) ? 1 : 0);
    if (rex) *p++ = uint8_t(0x40 | rex);
    p[0] = 0x89;
    p[1] = uint8_t(0xC0 | ((s & 7) << 3) | (d & 7));
    size_ = size_t(p + 2 - top_);
    ++fast_encoded_;
    return true;
  } else if (b1 && op2.isMEM()) {
    bits = b1;
    r = int(w1 & kRawIdx);
    opcode = 0x8B;
    mem = &op2;
  } else if (b2 && op1.isMEM()) {
    bits = b2;
    r = int(w2 & kRawIdx);
    opcode = 0x89;
    mem = &op1;
  } else {
    return false;
  }
  MemParts m;
  if (!mem_parts(mem->getAddress(), m)) return false;
  const int rex = (bits == 64 ? 8 : 0) | ((r & 8) ? 4 : 0) | mem_rex(m);
  if (rex) *p++ = uint8_t(0x40 | rex);
  *p++ = opcode;
  uint8_t* q = put_mem(p, r, m, 0);
  if (!q) return false;
  size_ = size_t(q - top_);
  ++fast_encoded_;
  return true;
}

bool FastEncoder::fast_arith_imm(const Operand& op, uint32_t imm, int code, int ext) {
  // Longest form: REX + opcode + ModRM + SIB + disp32 + imm32 = 12 bytes.
  if (maxSize_ - size_ < 16 || !kFastEnabled || !kRawLayout) return false;
  const uint64_t w = raw(op);
  int bits = gpr_bits(w);
  MemParts m;
  if (!bits) {
    // A sized address (dword / qword): xbyak's verifyMemHasSize rejects the
    // rest.
    if (!op.isMEM() || (raw_bits(w) != 32 && raw_bits(w) != 64) || !mem_parts(op.getAddress(), m)) return false;
    bits = int(raw_bits(w));
  }
  // The immediate's width: a sign-extended byte when it fits, else 32 bits
  // (32- and 64-bit operands never take a 16-bit one).
  const int imm_bytes = fits_disp8(imm) ? 1 : 4;
  uint8_t* p = top_ + size_;
  if (!op.isMEM()) {
    const int idx = int(w & kRawIdx);
    const int rex = (bits == 64 ? 8 : 0) | ((idx & 8) ? 1 : 0);
    if (rex) *p++ = uint8_t(0x40 | rex);
    if (idx == 0 && imm_bytes == 4) {
      *p++ = uint8_t(code | 5);  // eax / rax, imm32
    } else {
      p[0] = imm_bytes == 1 ? 0x83 : 0x81;
      p[1] = uint8_t(0xC0 | (ext << 3) | (idx & 7));
      p += 2;
    }
  } else {
    const int rex = (bits == 64 ? 8 : 0) | mem_rex(m);
    if (rex) *p++ = uint8_t(0x40 | rex);
    *p++ = imm_bytes == 1 ? 0x83 : 0x81;
    p = put_mem(p, ext, m, imm_bytes);
    if (!p) return false;
  }
  std::memcpy(p, &imm, 4);  // little-endian: the low imm_bytes bytes
  size_ = size_t(p + imm_bytes - top_);
  ++fast_encoded_;
  return true;
}

bool FastEncoder::fast_mov_imm(const Operand& op, uint64_t imm) {
  // Longest form: REX + opcode + imm64 = 10 bytes.
  if (maxSize_ - size_ < 16 || !kFastEnabled || !kRawLayout) return false;
  const uint64_t w = raw(op);
  const int bits = gpr_bits(w);
  if (!bits) return false;  // 8- / 16-bit registers, memory: xbyak's
  const int idx = int(w & kRawIdx);
  uint8_t* p = top_ + size_;
  int imm_bytes = 4;
  if (bits == 64 && (imm >> 32) != 0 && uint64_t(int64_t(int32_t(uint32_t(imm)))) == imm) {
    // Sign-extended 32 bits: REX.W C7 /0 id.
    p[0] = uint8_t(0x48 | ((idx & 8) ? 1 : 0));
    p[1] = 0xC7;
    p[2] = uint8_t(0xC0 | (idx & 7));
    p += 3;
  } else {
    // B8+r: imm32 (a 64-bit register whose value fits 32 bits takes the
    // zero-extending 32-bit form), or REX.W B8+r imm64.
    const bool wide = bits == 64 && (imm >> 32) != 0;
    const int rex = (wide ? 8 : 0) | ((idx & 8) ? 1 : 0);
    if (rex) *p++ = uint8_t(0x40 | rex);
    *p++ = uint8_t(0xB8 | (idx & 7));
    if (wide) imm_bytes = 8;
  }
  std::memcpy(p, &imm, size_t(imm_bytes));  // little-endian: the low bytes (xbyak's db(imm, size))
  size_ = size_t(p + imm_bytes - top_);
  ++fast_encoded_;
  return true;
}

}  // namespace gpurc::x64
