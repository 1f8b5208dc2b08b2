// NVIDIA Tesla (G80..GT215, sm_1x) instruction encodings.
//
// The whole ISA is described once, as data, in encoding.cpp: nested tables of
// (match, mask, variant features, program types, syntax template) rows, in the
// shape of envydis' g80 tables. One template walker derives everything from
// them: decoding (bits -> atoms), the envydis-syntax printer (atoms -> text),
// the assembler (text -> bits, by backtracking search over the same rows) and
// the random instruction generator (random bits reduced to the bits the
// decoder actually reads).
#pragma once
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace gpurc::tesla {

// Variant features (envydis names: sm11, sm12, fp64, d3d10_1).
enum Feature : unsigned { kSm11 = 1, kSm12 = 2, kFp64 = 4, kD3d101 = 8 };
// Program types (what selects a[]/p[]/v[]/s[] meanings of some fields).
enum PType : unsigned { kVP = 1, kGP = 2, kFP = 4, kCP = 8 };

struct Target {
  std::string variant = "g200";
  unsigned features = kSm11 | kSm12 | kFp64;
  unsigned ptype = kCP;
};
// "g80", "g84", "g200", "mcp77", "gt215", optionally ":vp" ":gp" ":fp" ":cp"
// ("" = g200, compute). False with a message for anything else.
bool parse_target(const std::string& spec, Target& out, std::string& err);
const std::vector<std::string>& variant_names();

// Semantic instruction groups (what the interpreter dispatches on).
enum class Op : uint8_t {
  None, Illegal,
  Mov, MovFromC, MovFromA, MovFromSr, MovToC, ShlA, AddA, LdA, StO, StS, LdC, LdS, LdSLock, VoteAny, VoteAll,
  IAdd, ISet, IMax, IMin, Shl, Shr, Mul16, Mul24, Sad, IMad, LogOp,
  Interp, Rcp, Rsqrt, Lg2, Sin, Cos, Ex2, Cvt,
  FAdd, FSet, FMax, FMin, PreSin, PreEx2, FMul, FSlct, QuadOp, FMad,
  DFma, DAdd, DMul, DMin, DMax, DSet,
  LdL, StL, LdG, StG, RedG, AtomG,
  Tex, Emit, Restart, Nop, PmEvent,
  Discard, Bra, Call, Ret, PreBrk, Brk, QuadOn, QuadPop, Bar, Trap, JoinAt, Brkpt, BraC, PreRet,
};
const char* op_name(Op op);

enum class OKind : uint8_t { Reg, AReg, CReg, SReg, Tex, Samp, Imm, Mem, Discard, Vec, Zero };
enum class RSize : uint8_t { W, H, D, Q };

// Where an operand came from (the interpreter reads operands by role).
enum class Role : uint8_t { Other, Dst, Src1, Src2, Src3, CDst, Cond, Mem, ADst, ASrc };

struct Operand {
  OKind kind = OKind::Zero;
  Role role = Role::Other;
  RSize size = RSize::W;
  int reg = 0;              // $r/$a/$c/$t/$s/$sr number; for H the 32-bit register index
  bool high = false;        // H: high half
  int64_t imm = 0;          // Imm value (sign-extended for signed fields), branch targets in bytes
  bool imm_signed = false;
  // Mem
  char space = 0;           // 's','c','l','g','a','o','v','p'
  int idx = -1;             // c0..c15 / g0..g15 index, -1 if the space has none
  int areg = -1;            // $a register used (-1: none; 0 is printed as nothing)
  int greg = -1;            // g[$rN]: the address register
  int64_t offset = 0;       // bytes
  bool postinc = false;
  unsigned access = 4;      // bytes per element the operand denotes (for s[]/c[] mode)
  std::vector<int> vec;     // Vec: registers, -1 = discarded component
  std::string sname;        // SReg: printed name ("physid", "sr2")
  bool half_ctx = false;    // Mem: stands for a 16-bit source (s[] b32 mode is then illegal)
};

struct Atom {
  enum Type : uint8_t { Name, Opnd, Open, Close } type = Name;
  std::string name;         // Name: the word ("???" = unknown encoding)
  Operand op;
};

// Decode errors the hardware reports (seed document names).
enum class DecodeError : uint8_t { None, IllegalOpcode, UnalignedLong, IllegalPostIncr, IllegalMemorySize, IllegalMemorySign, IllegalMemoryByte };
const char* decode_error_name(DecodeError e);

struct Insn {
  Op op = Op::None;
  unsigned words = 1;       // 1 or 2
  uint64_t bits = 0;        // word 0 in bits 0..31, word 1 in 32..63
  uint64_t used = 0;        // bits the decoder read
  uint64_t ignored = 0;     // bits read but documented as ignored (IGNPRED, IGNCE)
  bool valid = true;        // false: some part printed as "???"
  bool incomplete = false;  // a long instruction cut off by the end of the code (printed
                            // with its word 1 read as 0, as envydis does; runs as illegal)
  std::vector<Atom> atoms;  // in printing order
  // Execution view.
  bool is_long = false, is_control = false, is_imm = false;
  bool exit = false, join = false;
  int pred = 15;            // 0..31; 15 = always
  int pred_c = 0;           // $c register of the predicate
  size_t body = 0;          // first atom after the exit/join marker and predicate
  bool has(const char* name) const;              // a Name atom of the body
  const Operand* find(Role r, int nth = 0) const; // nth operand with that role
  // The Name atom right before operand `o` (e.g. the "u16" in "u16 s[...]").
  std::string name_before(const Operand* o) const;
  std::vector<std::string> names() const;       // Name atoms of the body
  // The addend of mad / fmad / sad: the long register form encodes it as
  // source 3; the short and the long immediate forms add the destination
  // register (envydis prints it again after the product).
  const Operand* addend() const { return is_long && !is_imm ? find(Role::Src3) : find(Role::Dst, 1); }
};

// Decodes the instruction at word `pos` of `code` (`nwords` words). Always
// returns something printable; `valid` says whether all of it was known.
Insn decode(const uint32_t* code, size_t nwords, size_t pos, const Target& t);
// The same into `out`, reusing its storage (a loop over many words).
void decode(const uint32_t* code, size_t nwords, size_t pos, const Target& t, Insn& out);
// Execution checks on top of decode: every error the hardware reports.
DecodeError check(const Insn& insn, size_t pos);
// envydis text (no address/hex columns).
std::string format(const Insn& insn);
// The same, appended to `out`.
void format_to(const Insn& insn, std::string& out);
std::string format_operand(const Operand& o);

// Assembles one instruction's envyas text. False with a message if no row of
// the table prints back to the same text.
bool assemble_one(const std::string& text, const Target& t, uint64_t& bits, unsigned& words, std::string& err);
// Assembles a program: one instruction per line or per ';'; "//" to the end
// of the line, "/* */" and nested "/+ +/" are comments; blank lines are
// ignored; "name:" defines a label that "#name" may stand for in a code
// target. Layout as envyas: a short instruction followed by a long one that
// would start at an odd word takes its long form (an error if it has none:
// the hardware would raise UNALIGNED_LONG_INSTRUCTION).
bool assemble(const std::string& text, const Target& t, std::vector<uint32_t>& out, std::string& err);

// Table introspection for tests and the fuzzer: each row of the four format
// tables, and a random canonical instruction (only decoded bits set) of it.
struct RowRef { int table; int row; };
std::vector<RowRef> all_rows(const Target& t);
std::string row_describe(RowRef r);
// Random instruction whose decode uses the row (false if none found after a
// number of tries, e.g. rows for another program type).
bool random_insn(RowRef r, const Target& t, std::mt19937_64& rng, uint64_t& bits, unsigned& words);

}  // namespace gpurc::tesla
