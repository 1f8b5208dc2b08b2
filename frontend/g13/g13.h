// Apple G13 (M1 GPU) instruction set: the encoding table (generated from the
// reference, see scripts/gen_g13_table.py), decoding, operand decoding,
// applegpu-syntax disassembly and assembly. The reference interpreter lives in
// interp.h. Bit k of an instruction is bit (k % 8) of byte k / 8.
#pragma once
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/common/encoding.h"

namespace gpurc::g13 {

// Operand kinds as the reference names them (operand_kind in the JSON).
enum class Kind : uint8_t {
  None, ALUDst, ALUDst64, ALUDst16, FloatDst, FloatDst16, PairedALUDst, ImplicitR0L,
  ALUSrc, ALUSrc64, ALUSrc16, MulSrc, AddSrc, FloatSrc, FloatSrc16, PairedFloatSrc, CmpselSrc,
  Immediate, Binary, Enum, Flag, Shift, Mask, TruthTable, SReg32, Reg32, BranchOffset,
  ICondition, FCondition, MemoryReg, MemoryIndex, MemoryShift, MemoryBase, ThreadgroupMemoryReg,
  ThreadgroupMemoryBase, ThreadgroupIndex, SampleMask, VarRegister, VarTripleRegister, CF,
  IterSampleID, CFPerspective, UReg64, TextureStateDest, SamplerStateDest, UVSIndex, ExReg32,
  AsyncMemoryReg, AsyncMemoryBase, StackReg32, StackAdjustment, SampleUReg, SampleReg, Coords,
  Lod, Sampler, SampleCompareOff, Texture, AtomicSource, AtomicDestination, PBELod,
  TileToMemoryReg, Reg32_4_4, PBESourceReg, DiscardMask, ZS,
};
Kind kind_from_name(std::string_view s);  // Kind::None if unknown

// One printed operand of a descriptor and the fields it is made of.
struct OperandDef {
  std::string name;
  Kind kind = Kind::None;
};

struct Desc {
  int index = 0;              // position in the first-match order
  std::string name;           // applegpu descriptor name
  unsigned size_short = 0, size_long = 0;
  int length_bit = -1;        // -1: fixed size
  fe::Bits128 mask, value;    // over the long form
  std::vector<fe::Field> fields;
  std::vector<std::string> field_operand;  // operand each field belongs to ("" = none)
  std::vector<OperandDef> operands;        // print order
  const fe::Field* field(std::string_view n) const;
  unsigned max_bits() const { return size_long * 8; }
  // Saturate bit S at bit 6 (iadd, imadd, float ALU ops): printed as ".sat".
  bool has_saturate() const {
    const fe::Field* s = field("S");
    return s && s->parts.size() == 1 && s->parts[0].lo == 6;
  }
  bool has(std::string_view n) const { return field(n) != nullptr; }
};

// The whole table in first-match order.
const std::vector<Desc>& table();
const Desc* find_desc(int index);

// A decoded instruction: the descriptor, its length and its bits (bytes
// beyond the length read as zero).
struct Insn {
  const Desc* desc = nullptr;
  unsigned size = 0;          // bytes
  fe::Bits128 bits;
  uint64_t f(std::string_view field) const;           // 0 if the field is absent
  bool has(std::string_view field) const { return desc->field(field) != nullptr; }
};

// Length the descriptor takes for these bits (reads the length bit).
unsigned insn_size(const Desc& d, const fe::Bits128& bits);
// Decodes one instruction at `p` (`avail` bytes left). False with `err` (byte
// offset `addr`) on truncated or unknown input.
bool decode(const uint8_t* p, size_t avail, uint64_t addr, Insn& out, fe::Diagnostic& err);

// Random instruction of descriptor `d` (fixed bits set, every other bit
// random, length from its L bit) for fuzzing and round-trip tests. False when
// the bits decode as an earlier descriptor (first-match shadowing).
bool random_instruction(const Desc& d, std::mt19937_64& rng, std::vector<uint8_t>& out);

// A decoded operand value.
enum class OpType : uint8_t {
  Empty,     // prints nothing (e.g. shift 0)
  Imm,       // integer
  Float,     // float immediate (minifloat)
  Reg16, Reg32, Reg64,       // n = 16-bit-unit index for Reg16, register number otherwise
  UReg16, UReg32, UReg64,
  Tuple16, Tuple32,          // count consecutive registers starting at n
  Text,                      // enum names, binary strings, "None"
  Offset,                    // branch target: pc + n
  UTuple32,                  // count consecutive 32-bit uniforms starting at n
  CmpOffTuple,               // texture compare/offset: r(n/2) then, if count == 2, the half n + 2
};
struct Operand {
  OpType type = OpType::Empty;
  int64_t n = 0;
  double fv = 0;
  int count = 1;
  bool cache = false, discard = false, sx = false, abs = false, neg = false;
  std::string text;
  unsigned bits() const;  // 16/32/64 for registers, 16 for immediates
  bool is_reg() const { return type >= OpType::Reg16 && type <= OpType::Reg64; }
  bool is_ureg() const { return type >= OpType::UReg16 && type <= OpType::UReg64; }
};

// Texture dimension n -> coordinate count and extra components (array
// and/or sample index); dimensions past 8 read as 8.
void texture_size(uint64_t n, int& count, int& extra);

Operand decode_operand(const Insn& in, const OperandDef& op, uint64_t pc = 0);
std::string operand_text(const Operand& o);
double minifloat(unsigned byte);

// "mnemonic op, op" exactly as applegpu prints it (single space after the
// mnemonic instead of applegpu's 16-column padding).
// use_aliases = false prints the raw descriptor form (bitop with its truth
// table, if_fcmp instead of push_exec/update_exec, cmpsel uniform sources
// with their full 9-bit index where applegpu's text drops bit 8), which also
// assembles to an instruction that reads and writes the same operands.
std::string disassemble(const Insn& in, uint64_t pc, bool use_aliases = true);
// Whole buffer, applegpu's disassemble.py conventions: zero half-words are
// skipped, stops after `stop`. raw: one instruction per line; otherwise
// "offset: hex  text". False with err (byte offset) on bad input.
bool disassemble_buffer(const uint8_t* p, size_t n, bool raw, std::string& out, fe::Diagnostic& err);

// Assembles one instruction in applegpu's syntax (as disassemble prints it).
// `pc` resolves absolute branch targets (0x.. as printed) to offsets.
bool assemble_one(std::string_view text, uint64_t pc, std::vector<uint8_t>& out, std::string& err);
// Assembles lines (';' or newline separated, '#' and '//' comments). Errors
// name the line.
bool assemble(std::string_view text, std::vector<uint8_t>& out, std::string& err);

}  // namespace gpurc::g13
