// PICA200 (Nintendo 3DS) shader instruction encodings, described once.
//
// PICA_OPCODES is the single table of instructions: mnemonic, opcode value,
// number of opcode bits and instruction format. From it we derive the
// fe::EncodingTable (bit patterns per format, see encoding.cpp), which the
// decoder, encoder, disassembler, assembler and random generator all use.
//
// Instruction words are 32-bit little endian; addresses count words.
// Operand descriptors live in a separate table (up to 128 entries of 32 bits;
// MAD/MADI can only reach the first 32).
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>

#include "frontend/common/encoding.h"

namespace gpurc::pica {

// Instruction formats (3dbrew names). Bit layouts, MSB first:
//   F1   op:6 dst:5 idx:2 src1:7 src2:5 desc:7        (src1 is the wide operand)
//   F1i  op:6 dst:5 idx:2 src1:5 src2:7 desc:7        (src2 is the wide operand)
//   F1u  op:6 dst:5 idx:2 src1:7 -:5    desc:7
//   F1m  op:6 -:5   idx:2 src1:7 -:5    desc:7        (MOVA: writes a0)
//   F1c  op:5 cmpx:3 cmpy:3 idx:2 src1:7 src2:5 desc:7
//   F0   op:6 -:26
//   F2   op:6 refx:1 refy:1 condop:2 target:12 -:2 num:8
//   F3   op:6 bool:4 target:12 -:2 num:8              (LOOP: int id in the low 2 bits of bool)
//   F4   op:6 vtxid:2 prim:1 winding:1 -:22
//   F5   op:3 dst:5 idx:2 src1:5 src2:7 src3:5 desc:5  (MAD: src2 wide)
//   F5i  op:3 dst:5 idx:2 src1:5 src2:5 src3:7 desc:5  (MADI: src3 wide)
// The seed document gives format 1c with SRC1/SRC2 swapped and format 5 with a
// 7-bit SRC1; Citra, Panda3DS and picasso agree on the layouts above (see docs/pica200.md).
enum class Format : uint8_t { F0, F1, F1i, F1u, F1m, F1c, F2, F3, F4, F5, F5i };

// Flow-control operand usage inside F2/F3.
//   X(ID, mnemonic, opcode, opcode bits, format)
#define PICA_OPCODES(X)                     \
  X(ADD, "add", 0x00, 6, F1)                \
  X(DP3, "dp3", 0x01, 6, F1)                \
  X(DP4, "dp4", 0x02, 6, F1)                \
  X(DPH, "dph", 0x03, 6, F1)                \
  X(DST, "dst", 0x04, 6, F1)                \
  X(EX2, "ex2", 0x05, 6, F1u)               \
  X(LG2, "lg2", 0x06, 6, F1u)               \
  X(LITP, "litp", 0x07, 6, F1u)             \
  X(MUL, "mul", 0x08, 6, F1)                \
  X(SGE, "sge", 0x09, 6, F1)                \
  X(SLT, "slt", 0x0A, 6, F1)                \
  X(FLR, "flr", 0x0B, 6, F1u)               \
  X(MAX, "max", 0x0C, 6, F1)                \
  X(MIN, "min", 0x0D, 6, F1)                \
  X(RCP, "rcp", 0x0E, 6, F1u)               \
  X(RSQ, "rsq", 0x0F, 6, F1u)               \
  X(MOVA, "mova", 0x12, 6, F1m)             \
  X(MOV, "mov", 0x13, 6, F1u)               \
  X(DPHI, "dphi", 0x18, 6, F1i)             \
  X(DSTI, "dsti", 0x19, 6, F1i)             \
  X(SGEI, "sgei", 0x1A, 6, F1i)             \
  X(SLTI, "slti", 0x1B, 6, F1i)             \
  X(BREAK, "break", 0x20, 6, F0)            \
  X(NOP, "nop", 0x21, 6, F0)                \
  X(END, "end", 0x22, 6, F0)                \
  X(BREAKC, "breakc", 0x23, 6, F2)          \
  X(CALL, "call", 0x24, 6, F2)              \
  X(CALLC, "callc", 0x25, 6, F2)            \
  X(CALLU, "callu", 0x26, 6, F3)            \
  X(IFU, "ifu", 0x27, 6, F3)                \
  X(IFC, "ifc", 0x28, 6, F2)                \
  X(LOOP, "loop", 0x29, 6, F3)              \
  X(EMIT, "emit", 0x2A, 6, F0)              \
  X(SETEMIT, "setemit", 0x2B, 6, F4)        \
  X(JMPC, "jmpc", 0x2C, 6, F2)              \
  X(JMPU, "jmpu", 0x2D, 6, F3)              \
  X(CMP, "cmp", 0x17, 5, F1c) /* 0x2E-0x2F */ \
  X(MADI, "madi", 0x6, 3, F5i) /* 0x30-0x37 */ \
  X(MAD, "mad", 0x7, 3, F5) /* 0x38-0x3F */

enum class Op : uint8_t {
#define PICA_ENUM(id, name, opc, bits, fmt) id,
  PICA_OPCODES(PICA_ENUM)
#undef PICA_ENUM
  Count
};

struct OpInfo {
  Op op;
  std::string_view name;
  uint32_t opcode;    // value of the top `op_bits` bits
  unsigned op_bits;
  Format format;
};
const OpInfo& info(Op op);
// Lookup by mnemonic (lower case); null if unknown.
const OpInfo* find_op(std::string_view mnemonic);

// The encoding table (one entry per instruction, named by mnemonic, id = Op).
const fe::EncodingTable& encoding_table();

// A decoded instruction: every field of its format (absent fields are 0).
struct Instr {
  Op op = Op::NOP;
  uint32_t word = 0;
  uint8_t dst = 0, src1 = 0, src2 = 0, src3 = 0, idx = 0, desc = 0;
  uint8_t cmpx = 0, cmpy = 0;                 // F1c
  uint8_t condop = 0, refx = 0, refy = 0;     // F2
  uint16_t target = 0;                        // F2/F3 destination word offset
  uint8_t num = 0;                            // F2/F3
  uint8_t uniform = 0;                        // F3: b register (CALLU/IFU/JMPU) or i register (LOOP)
  uint8_t vtxid = 0, prim = 0, winding = 0;   // F4
  Format format() const { return info(op).format; }
};

// Decodes one word. On an unknown opcode returns nullopt and fills `err`
// with a message naming the word and the address.
std::optional<Instr> decode(uint32_t word, uint32_t address, std::string* err = nullptr);
// Encodes the fields of `in` that its format has (fields are truncated to their width).
uint32_t encode(const Instr& in);
// A random valid instruction word (all fields random) of `op`.
uint32_t random_word(Op op, std::mt19937_64& rng);

// ---- Registers (source/destination field values).
// Source field (7 bits): 0x00-0x0F v0-v15, 0x10-0x1F r0-r15, 0x20-0x7F c0-c95.
// Narrow source fields (5 bits) reach only v and r.
// Destination field (5 bits): 0x00-0x0F o0-o15, 0x10-0x1F r0-r15.
std::string src_reg_name(unsigned field);
std::string dst_reg_name(unsigned field);

// ---- Operand descriptors.
//   bits 0-3   destination mask (bit 3 = x, 2 = y, 1 = z, 0 = w)
//   bit 4      negate src1, bits 5-12  src1 selector
//   bit 13     negate src2, bits 14-21 src2 selector
//   bit 22     negate src3, bits 23-30 src3 selector
// A selector holds component 0 in bits 6-7 down to component 3 in bits 0-1
// (0 = x .. 3 = w), so 0x1B is .xyzw.
struct Swizzle {
  std::array<uint8_t, 4> comp{0, 1, 2, 3};  // source component for result component i
  bool negate = false;
  static Swizzle from_bits(unsigned selector8, bool neg);
  unsigned selector() const;
  bool identity() const { return comp == std::array<uint8_t, 4>{0, 1, 2, 3}; }
};
struct OperandDesc {
  uint8_t mask = 0xF;       // bit 3 = x ... bit 0 = w
  Swizzle src[3];
  static OperandDesc decode(uint32_t bits);
  uint32_t encode() const;
  bool writes(unsigned component) const { return (mask >> (3 - component)) & 1; }
};
constexpr uint32_t kIdentitySelector = 0x1B;

// Which bits of its descriptor `desc` an instruction reads: the mask and the
// selectors of its sources, less the source components the operation never
// reads (a scalar op reads .x only, DP3 no .w, a component-wise op only the
// components it writes; picasso's rule). The assembler shares a descriptor
// between uses that agree on the bits both read, as picasso does.
uint32_t desc_used_bits(Op op, uint32_t desc);
// Number of source operands read from registers.
unsigned num_sources(Op op);
bool has_dst(Op op);
// Which source operand is the wide (7-bit, relative-addressable) one: 1, 2 or 3; 0 for none.
unsigned wide_source(Op op);

}  // namespace gpurc::pica
