// A specialised VEX / EVEX encoder for the vector instruction forms the x64
// lowerings emit most, in front of xbyak's general path.
//
// xbyak encodes every VEX / EVEX instruction through one general routine
// (`opVex`: operand checks, `vex` / `evex`, `opAddr`, then `db` per byte with
// a bounds check each), about a quarter of the instructions of a cold
// compile. FastEncoder is an Xbyak::CodeGenerator whose member functions of
// the mnemonics in kFastForms (below) shadow xbyak's: each first tries
// `fast_vex`, which handles the common operand shapes (registers with or
// without an opmask / zeroing, [base + index * scale + disp], rip-relative
// addresses, embedded broadcasts) from the row's data and writes the bytes
// straight into the code buffer; anything else (rounding / SAE operands,
// labels, 32-bit or base-less addresses, VSIB, a full buffer, invalid operand
// combinations) goes to xbyak's own member, unchanged, so errors stay
// xbyak's. The bytes are exactly xbyak's (tests/backend_x64/encoder.cpp
// encodes every row both ways over all registers, masks, widths and
// displacements).
#pragma once
#include <xbyak/xbyak.h>

#include <cstdint>
#include <vector>

namespace gpurc::x64 {

// One encoding of one mnemonic overload, as data. The fields follow the
// Intel SDM's opcode tables ("VEX.256.66.0F38.W0 58 /r" and its EVEX row).
struct VexForm {
  enum Map : uint8_t { k0F = 1, k0F38 = 2, k0F3A = 3 };
  enum Pp : uint8_t { kNP = 0, k66 = 1, kF3 = 2, kF2 = 3 };
  // Which prefix: VEX unless an operand needs EVEX (zmm, register 16-31, an
  // opmask, a broadcast); kEvexOnly always EVEX; kVexOnly has no EVEX form
  // (an operand needing one is an error: left to xbyak); kMemEvex as
  // kVexEvex, but a memory operand is always EVEX-encoded (xbyak's
  // T_MEM_EVEX, the shift-by-immediate group).
  enum Enc : uint8_t { kVexOnly, kVexEvex, kEvexOnly, kMemEvex };
  // EVEX disp8*N (compressed displacement) without a broadcast: N = 1 <<
  // (tuple & 15) bytes, times 1 / 2 / 4 for a 128 / 256 / 512-bit vector
  // when kScaled is set (the full-vector tuples); fixed otherwise (tuple1
  // scalar, "mem128" shift counts).
  enum Tuple : uint8_t { kScaled = 0x80, kFull = kScaled | 4, kT1S4 = 2, kT1S8 = 3, kMem128 = 4 };
  // Operand shapes (the member functions of FastEncoder):
  //   kRRM  (x1, x2, x/m)        kRRMI (x1, x2, x/m, imm)     kROO (x1, x/m) or (x1, x2, x/m)
  //   kKRM  (k, x, x/m)          kKRMI (k, x, x/m, imm)
  //   kRM   (x, x/m)             kRMI  (x, x/m, imm)          kMR   (m, x)
  //   kRMB  (x, xmm/m): a broadcast's source                  kShI  (x, x/m, imm): /ext in ModRM.reg
  //   kRG32 (x, r32)             kBlendV (x1, x2, x/m, x4): x4 in imm[7:4]
  uint8_t opcode;
  Map map;
  Pp pp;
  uint8_t vex_w, evex_w;  // VEX.W and EVEX.W
  Enc enc;
  uint8_t bcast;          // element bytes of an embedded broadcast {1toN}: 4, 8; 0: none allowed
  uint8_t tuple;          // Tuple
  uint8_t ext;            // kShI: the opcode extension in ModRM.reg
  bool mem_mask;          // a memory destination may carry {k} (stores)
};

// The table: one row per mnemonic overload taken over. Every row is an xbyak
// member with the same parameter list, and every mnemonic named here is
// also in GPURC_X64_FAST_NAMES (the using-declaration that keeps its other
// overloads visible). All rows are T_YMM forms (xmm, ymm and, with EVEX, zmm).
//   name        shape    op    map   pp   W  EW  enc        bcast tuple  ext mem_mask
#define GPURC_X64_FAST_FORMS(X)                                          \
  X(vaddps, kROO, 0x58, k0F, kNP, 0, 0, kVexEvex, 4, kFull, 0, false)     \
  X(vsubps, kROO, 0x5C, k0F, kNP, 0, 0, kVexEvex, 4, kFull, 0, false)     \
  X(vmulps, kROO, 0x59, k0F, kNP, 0, 0, kVexEvex, 4, kFull, 0, false)     \
  X(vdivps, kROO, 0x5E, k0F, kNP, 0, 0, kVexEvex, 4, kFull, 0, false)     \
  X(vminps, kROO, 0x5D, k0F, kNP, 0, 0, kVexEvex, 4, kFull, 0, false)     \
  X(vmaxps, kROO, 0x5F, k0F, kNP, 0, 0, kVexEvex, 4, kFull, 0, false)     \
  X(vandps, kROO, 0x54, k0F, kNP, 0, 0, kVexEvex, 4, kFull, 0, false)     \
  X(vandnps, kROO, 0x55, k0F, kNP, 0, 0, kVexEvex, 4, kFull, 0, false)    \
  X(vorps, kROO, 0x56, k0F, kNP, 0, 0, kVexEvex, 4, kFull, 0, false)      \
  X(vxorps, kROO, 0x57, k0F, kNP, 0, 0, kVexEvex, 4, kFull, 0, false)     \
  X(vfmadd231ps, kRRM, 0xB8, k0F38, k66, 0, 0, kVexEvex, 4, kFull, 0, false) \
  X(vpaddd, kRRM, 0xFE, k0F, k66, 0, 0, kVexEvex, 4, kFull, 0, false)     \
  X(vpsubd, kRRM, 0xFA, k0F, k66, 0, 0, kVexEvex, 4, kFull, 0, false)     \
  X(vpaddq, kRRM, 0xD4, k0F, k66, 0, 1, kVexEvex, 8, kFull, 0, false)     \
  X(vpsubq, kRRM, 0xFB, k0F, k66, 0, 1, kVexEvex, 8, kFull, 0, false)     \
  X(vpmulld, kRRM, 0x40, k0F38, k66, 0, 0, kVexEvex, 4, kFull, 0, false)  \
  X(vpmuludq, kRRM, 0xF4, k0F, k66, 0, 1, kVexEvex, 8, kFull, 0, false)   \
  X(vpminud, kRRM, 0x3B, k0F38, k66, 0, 0, kVexEvex, 4, kFull, 0, false)  \
  X(vpmaxud, kRRM, 0x3F, k0F38, k66, 0, 0, kVexEvex, 4, kFull, 0, false)  \
  X(vpminsd, kRRM, 0x39, k0F38, k66, 0, 0, kVexEvex, 4, kFull, 0, false)  \
  X(vpmaxsd, kRRM, 0x3D, k0F38, k66, 0, 0, kVexEvex, 4, kFull, 0, false)  \
  X(vpsllvd, kRRM, 0x47, k0F38, k66, 0, 0, kVexEvex, 4, kFull, 0, false)  \
  X(vpsrlvd, kRRM, 0x45, k0F38, k66, 0, 0, kVexEvex, 4, kFull, 0, false)  \
  X(vpsravd, kRRM, 0x46, k0F38, k66, 0, 0, kVexEvex, 4, kFull, 0, false)  \
  X(vpand, kRRM, 0xDB, k0F, k66, 0, 0, kVexOnly, 0, kFull, 0, false)      \
  X(vpandn, kRRM, 0xDF, k0F, k66, 0, 0, kVexOnly, 0, kFull, 0, false)     \
  X(vpor, kRRM, 0xEB, k0F, k66, 0, 0, kVexOnly, 0, kFull, 0, false)       \
  X(vpxor, kRRM, 0xEF, k0F, k66, 0, 0, kVexOnly, 0, kFull, 0, false)      \
  X(vpcmpeqd, kRRM, 0x76, k0F, k66, 0, 0, kVexOnly, 0, kFull, 0, false)   \
  X(vpcmpgtd, kRRM, 0x66, k0F, k66, 0, 0, kVexOnly, 0, kFull, 0, false)   \
  X(vpcmpeqq, kRRM, 0x29, k0F38, k66, 0, 0, kVexOnly, 0, kFull, 0, false) \
  X(vpcmpgtq, kRRM, 0x37, k0F38, k66, 0, 0, kVexOnly, 0, kFull, 0, false) \
  X(vpandd, kRRM, 0xDB, k0F, k66, 0, 0, kEvexOnly, 4, kFull, 0, false)    \
  X(vpandnd, kRRM, 0xDF, k0F, k66, 0, 0, kEvexOnly, 4, kFull, 0, false)   \
  X(vpord, kRRM, 0xEB, k0F, k66, 0, 0, kEvexOnly, 4, kFull, 0, false)     \
  X(vpxord, kRRM, 0xEF, k0F, k66, 0, 0, kEvexOnly, 4, kFull, 0, false)    \
  X(vpblendmd, kRRM, 0x64, k0F38, k66, 0, 0, kEvexOnly, 4, kFull, 0, false) \
  X(vblendmps, kRRM, 0x65, k0F38, k66, 0, 0, kEvexOnly, 4, kFull, 0, false) \
  X(vpternlogd, kRRMI, 0x25, k0F3A, k66, 0, 0, kEvexOnly, 4, kFull, 0, false) \
  X(vcmpps, kRRMI, 0xC2, k0F, kNP, 0, 0, kVexOnly, 0, kFull, 0, false)    \
  X(vblendvps, kBlendV, 0x4A, k0F3A, k66, 0, 0, kVexOnly, 0, kFull, 0, false) \
  X(vcmpps, kKRMI, 0xC2, k0F, kNP, 0, 0, kEvexOnly, 4, kFull, 0, false)   \
  X(vpcmpd, kKRMI, 0x1F, k0F3A, k66, 0, 0, kEvexOnly, 4, kFull, 0, false) \
  X(vpcmpud, kKRMI, 0x1E, k0F3A, k66, 0, 0, kEvexOnly, 4, kFull, 0, false) \
  X(vpcmpeqd, kKRM, 0x76, k0F, k66, 0, 0, kEvexOnly, 4, kFull, 0, false)  \
  X(vpcmpgtd, kKRM, 0x66, k0F, k66, 0, 0, kEvexOnly, 4, kFull, 0, false)  \
  X(vpcmpeqq, kKRM, 0x29, k0F38, k66, 0, 1, kEvexOnly, 8, kFull, 0, false) \
  X(vpcmpgtq, kKRM, 0x37, k0F38, k66, 0, 1, kEvexOnly, 8, kFull, 0, false) \
  X(vptestmd, kKRM, 0x27, k0F38, k66, 0, 0, kEvexOnly, 4, kFull, 0, false) \
  X(vptestnmd, kKRM, 0x27, k0F38, kF3, 0, 0, kEvexOnly, 4, kFull, 0, false) \
  X(vmovups, kRM, 0x10, k0F, kNP, 0, 0, kVexEvex, 0, kFull, 0, false)     \
  X(vmovaps, kRM, 0x28, k0F, kNP, 0, 0, kVexEvex, 0, kFull, 0, false)     \
  X(vmovdqu, kRM, 0x6F, k0F, kF3, 0, 0, kVexOnly, 0, kFull, 0, false)     \
  X(vmovdqa, kRM, 0x6F, k0F, k66, 0, 0, kVexOnly, 0, kFull, 0, false)     \
  X(vmovdqu32, kRM, 0x6F, k0F, kF3, 0, 0, kEvexOnly, 0, kFull, 0, false)  \
  X(vmovdqu64, kRM, 0x6F, k0F, kF3, 0, 1, kEvexOnly, 0, kFull, 0, false)  \
  X(vmovdqa32, kRM, 0x6F, k0F, k66, 0, 0, kEvexOnly, 0, kFull, 0, false)  \
  X(vptest, kRM, 0x17, k0F38, k66, 0, 0, kVexOnly, 0, kFull, 0, false)    \
  X(vcvtdq2ps, kRM, 0x5B, k0F, kNP, 0, 0, kVexEvex, 4, kFull, 0, false)   \
  X(vcvtps2dq, kRM, 0x5B, k0F, k66, 0, 0, kVexEvex, 4, kFull, 0, false)   \
  X(vcvttps2dq, kRM, 0x5B, k0F, kF3, 0, 0, kVexEvex, 4, kFull, 0, false)  \
  X(vsqrtps, kRM, 0x51, k0F, kNP, 0, 0, kVexEvex, 4, kFull, 0, false)     \
  X(vpabsd, kRM, 0x1E, k0F38, k66, 0, 0, kVexEvex, 4, kFull, 0, false)    \
  X(vrcp14ps, kRM, 0x4C, k0F38, k66, 0, 0, kEvexOnly, 4, kFull, 0, false) \
  X(vrsqrt14ps, kRM, 0x4E, k0F38, k66, 0, 0, kEvexOnly, 4, kFull, 0, false) \
  X(vpbroadcastd, kRMB, 0x58, k0F38, k66, 0, 0, kVexEvex, 0, kT1S4, 0, false) \
  X(vpbroadcastq, kRMB, 0x59, k0F38, k66, 0, 1, kVexEvex, 0, kT1S8, 0, false) \
  X(vpbroadcastd, kRG32, 0x7C, k0F38, k66, 0, 0, kEvexOnly, 0, kFull, 0, false) \
  X(vpshufd, kRMI, 0x70, k0F, k66, 0, 0, kVexEvex, 4, kFull, 0, false)    \
  X(vroundps, kRMI, 0x08, k0F3A, k66, 0, 0, kVexOnly, 0, kFull, 0, false) \
  X(vrndscaleps, kRMI, 0x08, k0F3A, k66, 0, 0, kEvexOnly, 4, kFull, 0, false) \
  X(vmovups, kMR, 0x11, k0F, kNP, 0, 0, kVexEvex, 0, kFull, 0, true)      \
  X(vmovaps, kMR, 0x29, k0F, kNP, 0, 0, kVexEvex, 0, kFull, 0, true)      \
  X(vmovdqu, kMR, 0x7F, k0F, kF3, 0, 0, kVexOnly, 0, kFull, 0, false)     \
  X(vmovdqa, kMR, 0x7F, k0F, k66, 0, 0, kVexOnly, 0, kFull, 0, false)     \
  X(vmovdqu32, kMR, 0x7F, k0F, kF3, 0, 0, kEvexOnly, 0, kFull, 0, true)   \
  X(vmovdqu64, kMR, 0x7F, k0F, kF3, 0, 1, kEvexOnly, 0, kFull, 0, true)   \
  X(vmovdqa32, kMR, 0x7F, k0F, k66, 0, 0, kEvexOnly, 0, kFull, 0, true)   \
  X(vpslld, kShI, 0x72, k0F, k66, 0, 0, kMemEvex, 4, kFull, 6, false)     \
  X(vpsrld, kShI, 0x72, k0F, k66, 0, 0, kMemEvex, 4, kFull, 2, false)     \
  X(vpsrad, kShI, 0x72, k0F, k66, 0, 0, kMemEvex, 4, kFull, 4, false)     \
  X(vpsllq, kShI, 0x73, k0F, k66, 0, 1, kMemEvex, 8, kFull, 6, false)     \
  X(vpsrlq, kShI, 0x73, k0F, k66, 0, 1, kMemEvex, 8, kFull, 2, false)

// Each mnemonic of GPURC_X64_FAST_FORMS once.
#define GPURC_X64_FAST_NAMES(X)                                                                          \
  X(vaddps) X(vsubps) X(vmulps) X(vdivps) X(vminps) X(vmaxps) X(vandps) X(vandnps) X(vorps) X(vxorps)   \
  X(vfmadd231ps) X(vpaddd) X(vpsubd) X(vpaddq) X(vpsubq) X(vpmulld) X(vpmuludq) X(vpminud) X(vpmaxud)   \
  X(vpminsd) X(vpmaxsd) X(vpsllvd) X(vpsrlvd) X(vpsravd) X(vpand) X(vpandn) X(vpor) X(vpxor)             \
  X(vpcmpeqd) X(vpcmpgtd) X(vpcmpeqq) X(vpcmpgtq) X(vpandd) X(vpandnd) X(vpord) X(vpxord) X(vpblendmd)  \
  X(vblendmps) X(vpternlogd) X(vcmpps) X(vblendvps) X(vpcmpd) X(vpcmpud) X(vptestmd) X(vptestnmd)        \
  X(vmovups) X(vmovaps) X(vmovdqu) X(vmovdqa) X(vmovdqu32) X(vmovdqu64) X(vmovdqa32) X(vcvtdq2ps)        \
  X(vcvtps2dq) X(vcvttps2dq) X(vsqrtps) X(vpabsd) X(vptest) X(vrcp14ps) X(vrsqrt14ps) X(vpbroadcastd)              \
  X(vpbroadcastq) X(vpshufd) X(vroundps) X(vrndscaleps) X(vpslld) X(vpsrld) X(vpsrad) X(vpsllq) X(vpsrlq)

// A rip-relative operand the fast paths encoded: where its disp32 is and
// the absolute target it reaches (`absolute` false: a displacement the caller
// gave, not a target). While a log is set on a thread
// (set_rip_log, null: none), every such operand encoded there is appended;
// operands xbyak encodes itself are not (the emitter's copies of out-of-line
// fix code check for those with a disassembler, lower_float.cpp).
struct RipRef {
  uint8_t* disp;
  uint64_t target;
  bool absolute;
};
void set_rip_log(std::vector<RipRef>* log);

// A memory operand [base + index * scale + disp] given as its parts: 64-bit
// general registers 0-15 by number, scale 1, 2, 4 or 8 (0: no index). The
// emitter's frame and var slots are such operands; FastEncoder::fast_vex_mem
// encodes them without an Xbyak::Address built and then taken apart again
// (the two were about 60% of the encoder's cost per memory operand).
struct MemRef {
  uint8_t base = 0, index = 0, scale = 0;
  int32_t disp = 0;
  Xbyak::Address address() const;  // the same operand as an xbyak address (for every other member)
};

// A rip-relative operand reaching an absolute target (the constant pool's
// constants, Emitter::const_vec and friends), as its parts: `bytes` is the
// operand size xbyak's address carries (0: ptr, 4: dword, 8: qword). The
// shadowing members below take it without an Xbyak::Address built and then
// taken apart again (fast_vex_rip); any other member takes it as address().
struct RipMem {
  const void* target;
  uint8_t bytes;
  Xbyak::Address address() const;
  operator Xbyak::Address() const { return address(); }
};

class FastEncoder : public Xbyak::CodeGenerator {
 public:
  using Xbyak::CodeGenerator::CodeGenerator;

  // Encodes one instruction of form `f` whose ModRM.rm is the address m
  // (reg: ModRM.reg, vvvv: the VEX.vvvv operand or nullptr, imm < 0: none):
  // byte for byte what fast_vex writes for (reg, vvvv, m.address(), imm).
  // Only registers without an opmask, zeroing or rounding; false: nothing
  // written, and the caller goes through the mnemonic's member with
  // m.address() (another operand shape, the buffer nearly full, the fast
  // path switched off).
  bool fast_vex_mem(const VexForm& f, const Xbyak::Xmm& reg, const Xbyak::Xmm* vvvv, const MemRef& m, int imm = -1);
  // The same for a rip-relative operand reaching `target` (RipMem): byte for
  // byte what fast_vex writes for (reg, vvvv, ptr[rip + target], imm), the
  // operand logged as fast_mem logs it (set_rip_log). Registers without an
  // opmask, zeroing or rounding; false: nothing written.
  bool fast_vex_rip(const VexForm& f, const Xbyak::Xmm& reg, const Xbyak::Xmm* vvvv, const void* target, int imm = -1);

  // Instructions encoded by fast_vex and fast_mov (the rest went to xbyak):
  // the test checks that the forms it expects to be taken over are.
  size_t fast_encoded() const { return fast_encoded_; }

  // Encodes one instruction of form `f` (reg: the ModRM.reg operand, vvvv:
  // the VEX.vvvv operand or nullptr, rm: the ModRM.rm operand, imm < 0:
  // none) at the end of the code, as xbyak's opVex would. False: nothing
  // written (an operand shape it does not take, the buffer nearly full).
  bool fast_vex(const VexForm& f, const Xbyak::Reg& reg, const Xbyak::Operand* vvvv, const Xbyak::Operand& rm,
                int imm) {
    return rm.isMEM() ? fast_mem(f, reg, vvvv, rm.getAddress(), imm)
                      : fast_reg(f, reg, vvvv, static_cast<const Xbyak::Reg&>(rm), imm);
  }

  // The shadowing members, generated from the table.
#define GPURC_X64_USING(name) using Xbyak::CodeGenerator::name;
  GPURC_X64_FAST_NAMES(GPURC_X64_USING)
#undef GPURC_X64_USING

#define GPURC_X64_ROW(name, shape, op, map, pp, w, ew, enc, bc, tup, ext, mk)                                   \
  static constexpr VexForm name##_##shape{op, VexForm::map, VexForm::pp, w, ew, VexForm::enc, bc, VexForm::tup, \
                                          ext, mk};                                                             \
  GPURC_X64_SHAPE_##shape(name, name##_##shape)
#define GPURC_X64_SHAPE_kRRM(name, F)                                                                    \
  void name(const Xbyak::Xmm& x1, const Xbyak::Xmm& x2, const Xbyak::Operand& op) {                     \
    if (!same_vector_kind(x1, x2) || !fast_vex(F, x1, &x2, op, -1)) Xbyak::CodeGenerator::name(x1, x2, op); \
  }                                                                                                      \
  void name(const Xbyak::Xmm& x, const Xbyak::Operand& op) { name(x, x, op); }                          \
  void name(const Xbyak::Xmm& x1, const Xbyak::Xmm& x2, const RipMem& m) {                              \
    if (!same_vector_kind(x1, x2) || !fast_vex_rip(F, x1, &x2, m.target, -1)) name(x1, x2, m.address()); \
  }                                                                                                     \
  void name(const Xbyak::Xmm& x, const RipMem& m) { name(x, x, m); }                                    \
  void name(const Xbyak::Xmm& x1, const Xbyak::Xmm& x2, const MemRef& m) {                              \
    if (!same_vector_kind(x1, x2) || !fast_vex_mem(F, x1, &x2, m, -1)) name(x1, x2, m.address());       \
  }
#define GPURC_X64_SHAPE_kRRMI(name, F)                                                                   \
  void name(const Xbyak::Xmm& x1, const Xbyak::Xmm& x2, const Xbyak::Operand& op, uint8_t imm) {        \
    if (!same_vector_kind(x1, x2) || !fast_vex(F, x1, &x2, op, imm))                                    \
      Xbyak::CodeGenerator::name(x1, x2, op, imm);                                                       \
  }                                                                                                      \
  void name(const Xbyak::Xmm& x, const Xbyak::Operand& op, uint8_t imm) { name(x, x, op, imm); }        \
  void name(const Xbyak::Xmm& x1, const Xbyak::Xmm& x2, const RipMem& m, uint8_t imm) {                 \
    if (!same_vector_kind(x1, x2) || !fast_vex_rip(F, x1, &x2, m.target, imm)) name(x1, x2, m.address(), imm); \
  }                                                                                                     \
  void name(const Xbyak::Xmm& x, const RipMem& m, uint8_t imm) { name(x, x, m, imm); }
#define GPURC_X64_SHAPE_kBlendV(name, F)                                                                    \
  void name(const Xbyak::Xmm& x1, const Xbyak::Xmm& x2, const Xbyak::Operand& op, const Xbyak::Xmm& x4) { \
    if (!same_vector_kind(x1, x2) || !fast_vex(F, x1, &x2, op, x4.getIdx() << 4))                          \
      Xbyak::CodeGenerator::name(x1, x2, op, x4);                                                           \
  }                                                                                                         \
  void name(const Xbyak::Xmm& x1, const Xbyak::Operand& op, const Xbyak::Xmm& x4) { name(x1, x1, op, x4); } \
  void name(const Xbyak::Xmm& x1, const Xbyak::Xmm& x2, const RipMem& m, const Xbyak::Xmm& x4) {        \
    if (!same_vector_kind(x1, x2) || !fast_vex_rip(F, x1, &x2, m.target, x4.getIdx() << 4))             \
      name(x1, x2, m.address(), x4);                                                                    \
  }                                                                                                     \
  void name(const Xbyak::Xmm& x1, const RipMem& m, const Xbyak::Xmm& x4) { name(x1, x1, m, x4); }
  // (x1, op1, op2 = none): two operands mean (x1, x1, op1), as in xbyak.
#define GPURC_X64_SHAPE_kROO(name, F)                                                                         \
  void name(const Xbyak::Xmm& x1, const Xbyak::Operand& op1, const Xbyak::Operand& op2 = Xbyak::Operand()) { \
    const bool two = op2.isNone();                                                                            \
    const Xbyak::Operand& x2 = two ? x1 : op1;                                                                \
    if (!same_vector_kind(x1, x2) || !fast_vex(F, x1, &x2, two ? op1 : op2, -1))                             \
      Xbyak::CodeGenerator::name(x1, op1, op2);                                                               \
  }                                                                                                     \
  void name(const Xbyak::Xmm& x1, const Xbyak::Xmm& x2, const RipMem& m) {                              \
    if (!same_vector_kind(x1, x2) || !fast_vex_rip(F, x1, &x2, m.target, -1)) name(x1, x2, m.address()); \
  }                                                                                                     \
  void name(const Xbyak::Xmm& x1, const RipMem& m) {                                                    \
    if (!same_vector_kind(x1, x1) || !fast_vex_rip(F, x1, &x1, m.target, -1)) name(x1, m.address());    \
  }                                                                                                     \
  void name(const Xbyak::Xmm& x1, const Xbyak::Xmm& x2, const MemRef& m) {                              \
    if (!same_vector_kind(x1, x2) || !fast_vex_mem(F, x1, &x2, m, -1)) name(x1, x2, m.address());       \
  }
#define GPURC_X64_SHAPE_kKRM(name, F)                                                      \
  void name(const Xbyak::Opmask& k, const Xbyak::Xmm& x, const Xbyak::Operand& op) {      \
    if (!(op.isMEM() || x.getKind() == op.getKind()) || !fast_vex(F, k, &x, op, -1))      \
      Xbyak::CodeGenerator::name(k, x, op);                                                \
  }
#define GPURC_X64_SHAPE_kKRMI(name, F)                                                             \
  void name(const Xbyak::Opmask& k, const Xbyak::Xmm& x, const Xbyak::Operand& op, uint8_t imm) { \
    if (!(op.isMEM() || x.getKind() == op.getKind()) || !fast_vex(F, k, &x, op, imm))             \
      Xbyak::CodeGenerator::name(k, x, op, imm);                                                   \
  }
  // (x, x/m) is xbyak's (x, x0 of x's kind, x/m): vvvv 0, the same bytes as none.
#define GPURC_X64_SHAPE_kRM(name, F)                                                    \
  void name(const Xbyak::Xmm& x, const Xbyak::Operand& op) {                           \
    if (!is_vector(x) || !fast_vex(F, x, nullptr, op, -1)) Xbyak::CodeGenerator::name(x, op); \
  }                                                                                                     \
  void name(const Xbyak::Xmm& x, const RipMem& m) {                                                     \
    if (!is_vector(x) || !fast_vex_rip(F, x, nullptr, m.target, -1)) name(x, m.address());              \
  }
#define GPURC_X64_SHAPE_kRMB(name, F)                                                   \
  void name(const Xbyak::Xmm& x, const Xbyak::Operand& op) {                           \
    if (!is_vector(x) || !(op.isXMM() || op.isMEM()) || !fast_vex(F, x, nullptr, op, -1)) \
      Xbyak::CodeGenerator::name(x, op);                                               \
  }                                                                                                     \
  void name(const Xbyak::Xmm& x, const RipMem& m) {                                                     \
    if (!is_vector(x) || !fast_vex_rip(F, x, nullptr, m.target, -1)) name(x, m.address());              \
  }
#define GPURC_X64_SHAPE_kRG32(name, F)                                                       \
  void name(const Xbyak::Xmm& x, const Xbyak::Reg32& r) {                                   \
    if (!fast_vex(F, x, nullptr, r, -1)) Xbyak::CodeGenerator::name(x, r);                  \
  }
#define GPURC_X64_SHAPE_kRMI(name, F)                                                             \
  void name(const Xbyak::Xmm& x, const Xbyak::Operand& op, uint8_t imm) {                        \
    if (!is_vector(x) || !fast_vex(F, x, nullptr, op, imm)) Xbyak::CodeGenerator::name(x, op, imm); \
  }                                                                                                     \
  void name(const Xbyak::Xmm& x, const RipMem& m, uint8_t imm) {                                        \
    if (!is_vector(x) || !fast_vex_rip(F, x, nullptr, m.target, imm)) name(x, m.address(), imm);        \
  }
#define GPURC_X64_SHAPE_kMR(name, F)                                                           \
  void name(const Xbyak::Address& a, const Xbyak::Xmm& x) {                                   \
    if (!is_vector(x) || !fast_vex(F, x, nullptr, a, -1)) Xbyak::CodeGenerator::name(a, x);   \
  }
  // Shift by an immediate: ModRM.reg holds the extension, vvvv the destination.
#define GPURC_X64_SHAPE_kShI(name, F)                                                                 \
  void name(const Xbyak::Xmm& x, const Xbyak::Operand& op, uint8_t imm) {                            \
    if (!is_vector(x) || !fast_vex(F, Xbyak::Xmm(x.getKind(), F.ext), &x, op, imm))                   \
      Xbyak::CodeGenerator::name(x, op, imm);                                                         \
  }                                                                                                   \
  void name(const Xbyak::Xmm& x, uint8_t imm) { name(x, x, imm); }

  GPURC_X64_FAST_FORMS(GPURC_X64_ROW)

  // General-purpose moves, the most frequent general-register instruction
  // (frame set-up, the warp loop, the fault stub): 32- and 64-bit registers,
  // register to register and to / from [base + index * scale + disp] with a
  // 64-bit base or a rip-relative address, written by fast_mov (encoder.cpp)
  // with xbyak's bytes (opRM_RM with 0x88: `89 /r` register to register and
  // to memory, `8B /r` from memory). Other sizes, 32-bit addresses, labels,
  // moffs forms: xbyak's own `mov`.
  using Xbyak::CodeGenerator::mov;
  void mov(const Xbyak::Operand& op1, const Xbyak::Operand& op2) {
    if (!fast_mov(op1, op2)) Xbyak::CodeGenerator::mov(op1, op2);
  }
  // An immediate into a 32- / 64-bit register (xbyak's mov_imm: `B8+r id`,
  // zero-extending for a 64-bit register when the value fits 32 bits, `REX.W
  // C7 /0 id` when it fits sign-extended, else `REX.W B8+r io`).
  void mov(const Xbyak::Operand& op, uint64_t imm) {
    if (!fast_mov_imm(op, imm)) Xbyak::CodeGenerator::mov(op, imm);
  }
  // The arithmetic group with an immediate (xbyak's opRM_I: `81 /ext id`,
  // `83 /ext ib`, the short eax / rax form), on the same operands as mov's
  // plus 32- / 64-bit sized addresses; fast_arith_imm. code: the group's
  // opcode base, ext: its ModRM.reg extension.
#define GPURC_X64_ARITH_IMM(name, code, ext)                                            \
  using Xbyak::CodeGenerator::name;                                                    \
  void name(const Xbyak::Operand& op, uint32_t imm) {                                 \
    if (!fast_arith_imm(op, imm, code, ext)) Xbyak::CodeGenerator::name(op, imm);       \
  }
  GPURC_X64_ARITH_IMM(add, 0x00, 0)
  GPURC_X64_ARITH_IMM(or_, 0x08, 1)
  GPURC_X64_ARITH_IMM(and_, 0x20, 4)
  GPURC_X64_ARITH_IMM(sub, 0x28, 5)
  GPURC_X64_ARITH_IMM(xor_, 0x30, 6)
  GPURC_X64_ARITH_IMM(cmp, 0x38, 7)
#undef GPURC_X64_ARITH_IMM

 private:
  bool fast_mov(const Xbyak::Operand& op1, const Xbyak::Operand& op2);
  bool fast_mov_imm(const Xbyak::Operand& op, uint64_t imm);
  bool fast_arith_imm(const Xbyak::Operand& op, uint32_t imm, int code, int ext);
  // fast_vex's two halves (encoder.cpp): a register rm (the VEX-only case
  // first, the rest in fast_reg_general) and an address (the same split).
  bool fast_reg(const VexForm& f, const Xbyak::Reg& reg, const Xbyak::Operand* vvvv, const Xbyak::Reg& rm, int imm);
  bool fast_reg_general(const VexForm& f, const Xbyak::Reg& reg, const Xbyak::Operand& v, const Xbyak::Reg& rm,
                        int imm);
  bool fast_mem(const VexForm& f, const Xbyak::Reg& reg, const Xbyak::Operand* vvvv, const Xbyak::Address& a,
                int imm);
  // fast_mem's general half (EVEX, rip-relative, broadcasts, masks): the
  // register operands as raw words (encoder.cpp).
  bool fast_mem_general(const VexForm& f, uint64_t wr, uint64_t wv, const Xbyak::Address& a, int imm);
  static bool is_vector(const Xbyak::Operand& x) {
    return x.is(Xbyak::Operand::XMM | Xbyak::Operand::YMM | Xbyak::Operand::ZMM);
  }
  // opAVX_X_X_XM's operand rule for T_YMM forms.
  static bool same_vector_kind(const Xbyak::Operand& a, const Xbyak::Operand& b) {
    return is_vector(a) && a.getKind() == b.getKind();
  }
  size_t fast_encoded_ = 0;
};

}  // namespace gpurc::x64
