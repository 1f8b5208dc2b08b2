// Internal to the G13 translation (translate*.cpp): the Translator class
// shared by the per-family files. translate.cpp: state access, control flow,
// the driver and the public helpers; translate_alu.cpp: integer, float and
// compare ops; translate_lanes.cpp: ballots, shuffles, reductions, get_sr;
// translate_memory.cpp: device/threadgroup/stack memory.
#pragma once
#include <cstdio>
#include <map>
#include <set>
#include <string>

#include "frontend/g13/g13.h"
#include "frontend/g13/translate.h"
#include "ir/builder.h"
#include "ir/float_bits.h"

namespace gpurc::g13::detail {

using ir::FloatPred;
using ir::IntPred;
using ir::Opcode;
using ir::Type;
using ir::ValueId;
namespace ff = ir::ff;

inline std::string hex(uint64_t v) {
  char b[32];
  std::snprintf(b, sizeof b, "0x%llx", (unsigned long long)v);
  return b;
}

// The exec-stack instructions: the only ones that write the var "exec".
inline bool writes_exec(const std::string& n) {
  return n == "if_icmp" || n == "else_icmp" || n == "while_icmp" || n == "if_fcmp" || n == "else_fcmp" ||
         n == "while_fcmp" || n == "pop_exec";
}

// Special registers the interpreter derives from the lane and the exec mask.
inline bool derived_sr(unsigned sr) { return sr == 52 || (sr >= 56 && sr <= 59) || sr == 63; }

constexpr uint32_t kFtz = ff::FtzIn | ff::FtzOut;
constexpr ir::ShiftMode kClamp = ir::ShiftMode::Clamp;  // counts >= width: 0 (ashr: the sign)
constexpr ir::Sign signed_if(bool s) { return s ? ir::Sign::Signed : ir::Sign::Unsigned; }
// Unmapped Space::Local address for stack offsets outside a lane's window.
constexpr uint64_t kBadStackAddr = 0xFFFF000000000000ull;

class Translator {
 public:
  Translator(ir::Function& f, const TranslateOptions& options) : f_(f), b_(f), options_(options) {}
  bool run(const uint8_t* code, size_t size, std::string& err);

 private:
  using Op = Operand;
  // ---- state access
  // A source as an integer of `bits` (16, 32 or 64), zero- or sign-extended
  // from its own size (immediates are 16-bit).
  bool src(const Op& o, unsigned bits, bool sign, ValueId& v);
  // A source as two I32 halves, extended to 64 bits per `sign` (a register
  // pair without building an I64).
  bool src_halves(const Op& o, bool sign, ValueId& lo, ValueId& hi);
  // A float source in type `t` (exact widening; f32 registers raw, so the
  // consuming op's FtzIn flushes them, except when widened to f64 where the
  // widening flushes), abs then neg.
  bool fsrc(const Op& o, Type t, ValueId& v);
  ValueId exec();
  // Writes `v` (any int type; truncated or zero-extended) to `d` where `ex`.
  bool write(const Op& d, ValueId v, ValueId ex);
  bool write_pair(const Op& d, ValueId lo, ValueId hi, ValueId ex);  // a Reg64 destination from I32 halves
  // Lanes launched in this warp as an i32 mask (uniform).
  ValueId launched_mask() { return b_.ballot(b_.i1(true), b_.entry_mask()); }

  // ---- instruction families (false + err on failure)
  bool insn(const Insn& in, uint64_t pc, std::string& err);
  bool int_add(const Insn& in, bool is_mul, std::string& why);
  bool bitfield(const Insn& in, const std::string& n, std::string& why);
  bool int_unary(const Insn& in, const std::string& n, std::string& why);
  bool convert(const Insn& in, std::string& why);
  bool float_arith(const Insn& in, const std::string& n, std::string& why);
  bool float_unary(const Insn& in, const std::string& n, std::string& why);
  // Sets cmp_undefined_ (and c = false) for an undefined condition or
  // operand: the interpreter reports those only when a lane needs the
  // condition, so the callers trap exactly there (need_compare).
  bool compare(const Insn& in, bool is_float, ValueId& c, std::string& why);
  bool undefined_compare(ValueId& c) {
    cmp_undefined_ = true;
    c = b_.i1(false);
    return true;
  }
  void need_compare(ValueId lanes) {
    if (cmp_undefined_) b_.trap(lanes, pc_);
  }
  bool cmpsel(const Insn& in, bool is_float, std::string& why);
  bool ballot_op(const Insn& in, bool is_float, bool quad, std::string& why);
  bool shuffle(const Insn& in, const std::string& n, std::string& why);
  bool reduce(const Insn& in, const std::string& n, std::string& why);
  bool get_sr(const Insn& in, std::string& why);
  bool memory(const Insn& in, const std::string& n, std::string& why);
  ValueId packed_component(unsigned f, ValueId elem, unsigned c, bool r32);
  bool uniform_store(const Insn& in, std::string& why);
  // uN as i32: its "uN" var when the program writes it (uniform_store), else
  // the uniform block.
  ValueId uniform32(unsigned n);
  bool written_uniform(unsigned n) const { return u_vars_.count(n) != 0; }
  std::set<uint64_t> block_starts() const;
  // Jumps to the instruction at the (uniform) i64 pc `target`; anything else traps.
  void indirect_jump(ValueId target);

  bool fail(const Insn& in, uint64_t pc, const std::string& why, std::string& err) {
    err = "g13 translate: " + in.desc->name + " at pc " + hex(pc) + ": " + why;
    return false;
  }
  ir::BlockId block_at(uint64_t pc) { return blocks_.at(pc); }
  Op op(const Insn& in, const char* name) const {
    for (const OperandDef& od : in.desc->operands)
      if (od.name == name) return decode_operand(in, od, pc_);
    return Op{};
  }

  ir::Function& f_;
  ir::Builder b_;
  std::map<uint64_t, ir::BlockId> blocks_;
  std::map<uint64_t, Insn> insns_;
  std::map<unsigned, uint32_t> sr_vars_;
  std::map<unsigned, uint32_t> u_vars_;  // uN written by uniform_store -> var "uN"
  uint32_t exec_var_ = 0;                 // var "exec": the execution mask (i1 per lane)
  TranslateOptions options_;
  bool exec_is_entry_ = false;            // exec() is the entry mask (options_.exec_starts_launched, no exec writer)
  // options_.exec_starts_launched with an exec writer: the registers and
  // exec start as constants (zero, all lanes) and register writes select on
  // exec alone, so lanes that were not launched compute like active ones
  // (nothing observes them: see start_state_known()).
  bool known_start_ = false;
  // The mask a register write selects on: `ex` (an active-lane mask built
  // by exec()) without its entry-mask conjunct when known_start_.
  ValueId write_select_mask(ValueId ex);
  // With known_start_: `set_var r, 0` for every register the code writes
  // and `set_var exec, true` at the start of the entry block.
  void start_state_known();
  // options_.registers_unobserved (with exec_starts_launched): every
  // register and exec the code names moves to a var of its own after the
  // state vars (ir::Function::state_vars), set to its start value (zero,
  // exec as exec_starts_launched says) at the start of the entry block.
  bool regs_private_ = false;
  void make_registers_private();
  ir::BlockId end_block_ = 0, bad_target_block_ = 0;
  uint64_t pc_ = 0;
  bool cmp_undefined_ = false;
};

}  // namespace gpurc::g13::detail
