// ARM Mali Bifrost clauses: quadword formats, the 45-bit header, tuples
// (35-bit register block + 23-bit FMA word + 20-bit ADD word) and embedded
// constants. docs/bifrost.md describes the layout.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gpurc::bifrost {

// 45-bit clause header fields (LSB first).
struct Header {
  uint64_t bits = 0;
  unsigned reserved_low() const { return unsigned(bits & 0x1f); }        // 0-4, must be 0
  unsigned ftz() const { return unsigned(bits >> 5) & 3; }               // 5-6
  bool suppress_inf() const { return (bits >> 7) & 1; }                  // 7
  bool suppress_nan() const { return (bits >> 8) & 1; }                  // 8
  unsigned float_exceptions() const { return unsigned(bits >> 9) & 3; }  // 9-10
  unsigned flow() const { return unsigned(bits >> 11) & 7; }             // 11-13
  bool reserved_14() const { return (bits >> 14) & 1; }                  // 14, must be 0
  bool terminate_discarded() const { return (bits >> 15) & 1; }          // 15
  bool next_prefetch() const { return (bits >> 16) & 1; }                // 16
  bool staging_barrier() const { return (bits >> 17) & 1; }              // 17
  unsigned staging_register() const { return unsigned(bits >> 18) & 63; }  // 18-23
  unsigned dependency_wait() const { return unsigned(bits >> 24) & 0xff; }  // 24-31
  unsigned dependency_slot() const { return unsigned(bits >> 32) & 7; }    // 32-34
  unsigned message_type() const { return unsigned(bits >> 35) & 31; }      // 35-39
  unsigned next_message_type() const { return unsigned(bits >> 40) & 31; }  // 40-44
};

// Register block fields of a tuple (tuple bits 0-34).
struct RegBlock {
  unsigned fau = 0, reg3 = 0, reg2 = 0, reg0 = 0, reg1 = 0, ctrl = 0;
  static RegBlock from_bits(uint64_t b);
  uint64_t to_bits() const;
};

// Slot 2/3 actions of a register block (mode table, docs/bifrost.md).
enum class SlotOp : uint8_t { Idle, Read, WriteLo, WriteHi, Write };
struct RegMode {
  bool read0 = false, read1 = false;
  unsigned reg0 = 0, reg1 = 0;       // registers read by slots 0/1 (63-x / ctrl==0 tricks undone)
  SlotOp slot2 = SlotOp::Idle, slot3 = SlotOp::Idle;
  bool slot3_fma = false;            // slot 3 writes the FMA result (else ADD)
  unsigned mode = 0;                 // 0-31
  bool reserved = false;             // a mode with no meaning (0, 25, 28-31)
};
// `first`: the block is the clause's first tuple's (control bit 3 -> mode bit 4).
RegMode decode_regs(const RegBlock& r, bool first);

// 64-bit clauses (header message type 15): the seed page's register block
// for register pairs (fau 0-7, port 2 8-12, port 3 13-17, port 0 18-21,
// port 1 22-26, control 27-31, bits 32-34 = 7). From the seed page only:
// Mesa neither emits nor decodes it (its disassembler prints such a block as
// a 32-bit one, and so does ours, to print Mesa's text); for the interpreter.
constexpr unsigned kMessage64 = 15;  // header message type of a 64-bit clause
struct RegMode64 {
  bool valid = false;
  std::string why;                  // when not valid
  bool read0 = false, read1 = false;
  unsigned reg0 = 0, reg1 = 0;      // even register numbers (Rn:Rn+1)
  enum class Port2 { Unused, Read, WriteFma, WriteAdd } port2 = Port2::Unused;
  enum class Port3 { Unused, WriteFma, WriteAdd } port3 = Port3::Unused;
  unsigned reg2 = 0, reg3 = 0;
};
RegMode64 decode_regs64(uint64_t bits);
// The seed page's encoding algorithm: `reads` = up to three even registers
// (first two through ports 0/1), `write_fma`/`write_add` = even register or -1.
bool encode_regs64(const std::vector<unsigned>& reads, int write_fma, int write_add, unsigned fau, uint64_t& bits,
                   std::string& err);

struct Tuple {
  uint64_t regs = 0;  // 35 bits
  uint32_t fma = 0;   // 23 bits
  uint32_t add = 0;   // 20 bits
};

// PC-relative marking of an embedded constant (M fields).
enum class ConstMod : uint8_t { None, PcLo, PcHi, PcLoHi };

struct Clause {
  size_t offset = 0;        // byte offset of the clause in the code
  unsigned quadwords = 0;   // size, instruction + constant quadwords
  Header header;
  unsigned ntuples = 0;
  Tuple tuples[8];
  unsigned nconsts = 0;     // constants the clause carries (including a dummy in the free slot)
  uint64_t consts[6] = {};  // bits 4-63 as stored (low nibble 0)
  ConstMod mods[6] = {};
};

// Decodes the clause at `offset` (quadwords decode independently; the clause
// ends at the first quadword with its stop bit, as Mesa's disassembler reads
// it). False with an error naming the clause offset and quadword on an
// invalid tag, a constant quadword that does not fit, or truncated input.
bool unpack_clause(const uint8_t* code, size_t size, size_t offset, Clause& out, std::string& err);

// Number of 64-bit constants the canonical quadword sequence of a clause of
// `ntuples` can carry (the free slot plus the format-12 pairs).
unsigned max_constants(unsigned ntuples);
// Whether the canonical sequence of `ntuples` has a free constant slot (3, 5, 6, 8).
bool has_free_constant_slot(unsigned ntuples);

// Lays a clause out in the canonical quadword sequence (formats 0/0', 1-11,
// then format-12 pairs), the one Mesa's packer uses. c.consts[0..nconsts) are
// in slot order (the free slot first); the caller chose that order (see
// order_constants). False when the constants do not fit.
bool pack_clause(const Clause& c, std::vector<uint8_t>& out, std::string& err);

// Order of constants for a clause: `in` in first-use order; returns the slot
// order (dummy zero constants added where a slot or pair must be filled) so
// that no plain format-12 pair reads as PC-relative (top-nibble difference
// mod 16 in 1..7: the pair is swapped), and `where[i]` = slot of in[i].
// `pc_hi[i]` marks a constant whose high word holds a PC-relative offset
// (low 28 bits): it becomes the first constant of a pair of its own (with the
// next plain constant or a zero) and its top nibble is chosen so that
// M1 = 4 (PC_HI), as Mesa's packer does. The free slot holds plain constants only.
std::vector<uint64_t> order_constants(unsigned ntuples, const std::vector<uint64_t>& in, std::vector<unsigned>& where,
                                      const std::vector<bool>& pc_hi = {});

// FAU index <-> embedded constant slot (4->0, 5->1, 6->2, 7->3, 2->4, 3->5).
int fau_constant_slot(unsigned fau);
unsigned constant_slot_fau(unsigned slot);

}  // namespace gpurc::bifrost
