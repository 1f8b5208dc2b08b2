// SSA IR: functions of basic blocks of instructions. Values are instruction ids.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/types.h"

namespace gpurc::ir {

enum class Opcode : uint16_t {
#define OPCODE(name, text, res, args, attr, props) name,
#include "ir/opcodes.inc"
#undef OPCODE
  Count
};
constexpr int kNumOpcodes = int(Opcode::Count);

enum class AttrKind : uint8_t { None, Imm, Sign, IntPred, FloatPred, Shift, MinMax, Mem, Atomic, Reduce, Transc };

// Static description of an opcode, expanded from opcodes.inc.
struct OpInfo {
  const char* name;       // text form
  char result;            // result class letter
  const char* args;       // argument letters
  AttrKind attr;
  bool pure, effect, terminator, uses_fflags, cross_lane;
  bool clustered;         // Inst::imm is a cluster width (see cluster_width)
};
const OpInfo& op_info(Opcode op);
std::string_view op_name(Opcode op);
bool parse_opcode(std::string_view s, Opcode& out);

using ValueId = uint32_t;
using BlockId = uint32_t;
constexpr ValueId kNoValue = ~0u;
constexpr BlockId kNoBlock = ~0u;

constexpr uint8_t mem_attr(Space s, AddrClass c) { return uint8_t(uint8_t(s) | (uint8_t(c) << 4)); }
constexpr Space mem_space(uint8_t attr) { return Space(attr & 15); }
constexpr AddrClass mem_class(uint8_t attr) { return AddrClass(attr >> 4); }

// Cluster width of a clustered cross-lane op (OpInfo::clustered) from its
// Inst::imm: 1, 2, 4, 8, 16 or 32 lanes; imm 0, what every translator and
// older IR text writes, is the whole warp. valid_cluster_imm says whether the
// verifier accepts imm; cluster_imm gives the canonical imm of a width (0 for 32).
constexpr bool valid_cluster_imm(uint64_t imm) { return imm <= uint64_t(kWarpLanes) && (imm & (imm - 1)) == 0; }
constexpr unsigned cluster_width(uint64_t imm) { return imm == 0 ? unsigned(kWarpLanes) : unsigned(imm); }
constexpr uint64_t cluster_imm(unsigned width) { return width == unsigned(kWarpLanes) ? 0 : width; }
// A clustered op whose clusters are the whole warp: its result is the same in
// every lane for ballot / any / all / reduce / broadcast.
constexpr bool whole_warp_cluster(uint64_t imm) { return cluster_width(imm) == unsigned(kWarpLanes); }

struct Inst {
  Opcode op = Opcode::Undef;
  Type type = Type::Void;
  uint8_t attr = 0;            // op-specific enum (see OpInfo::attr)
  uint32_t fflags = 0;         // float flags (ff::*) for ops with the F property
  uint64_t imm = 0;            // constant bits, var / uniform slot, lut, trap code, cost
  BlockId block = kNoBlock;    // owning block; kNoBlock once removed
  bool uniform = false;        // set by the uniformity analysis: same value in every lane
  std::vector<ValueId> args;
};

struct Block {
  std::string name;                 // optional label (printer invents b<N> otherwise)
  std::vector<ValueId> insts;       // phis first, terminator last
  std::vector<BlockId> succs;       // successors named by the terminator
  std::vector<BlockId> preds;       // filled by Function::compute_preds()
};

// A guest register (or other per-lane guest state) the translator reads and
// writes with get_var/set_var and that lives in the warp context between runs.
struct Var {
  std::string name;
  Type type = Type::I32;
};

struct Function {
  std::string name;
  std::vector<Inst> insts;      // indexed by ValueId
  std::vector<Block> blocks;    // block 0 is the entry
  std::vector<Var> vars;
  uint32_t uniform_bytes = 0;   // size of the uniform block read by load_uniform
  // Launch contract: the caller never reads the vars of lanes outside
  // WarpContext::entry_mask after a run (and does not expect them kept), so
  // their state is don't-care. construct_ssa then stores each written var
  // as is instead of select(entry_mask, value, old value) (docs/passes.md).
  // Text form: the header line `unlaunched_lanes_free`.
  bool unlaunched_lanes_free = false;
  // Launch contract: no draw runs the function (ir::DrawLoop, a vertex
  // shader's per-draw loop): a compute kernel's translator says so, and the
  // x64 backend then leaves out the draw loop's hooks (its test per warp in
  // the warp loop, its jump back into the stub) that it otherwise emits for
  // every unlaunched_lanes_free function. Text form: the header line
  // `no_draw_loop`.
  bool no_draw_loop = false;
  // Vars [0, state_vars) are guest state kept in the warp context between
  // runs: SSA construction loads them at entry and stores them at exits.
  // Vars from state_vars on are private to one run (a translator's promise
  // that nobody reads them after it, and that the code writes each before
  // reading it): not loaded, not stored, dropped from the layout. The
  // default keeps every var.
  static constexpr uint32_t kAllStateVars = ~0u;
  uint32_t state_vars = kAllStateVars;

  BlockId add_block(std::string name = {});
  uint32_t add_var(std::string name, Type t);
  void compute_preds();
  const Inst& operator[](ValueId v) const { return insts[v]; }
  Inst& operator[](ValueId v) { return insts[v]; }
  ValueId terminator(BlockId b) const;  // kNoValue if the block has none yet

  // Warp-context layout of vars: each var has 32 lanes of lane_bytes(type),
  // 64-byte aligned so a backend can use aligned vector loads.
  // var_offset sums the sizes of the vars before `var` (linear in `var`);
  // var_offsets() gives all of them at once: vars.size() + 1 entries, the
  // last one vars_bytes(). Loops over many vars should use it.
  uint32_t var_offset(uint32_t var) const;
  std::vector<uint32_t> var_offsets() const;
  uint32_t vars_bytes() const;
};

// Text form (see docs/ir.md). print() output parses back to an equal function.
std::string print(const Function& f);
std::string print_inst(const Function& f, ValueId v);
// Parses the text form; on failure returns false and sets error ("line N: ...").
bool parse(std::string_view text, Function& out, std::string& error);
// Checks types, arities, SSA dominance, terminators and phi arity; returns the
// first problem found or an empty string.
std::string verify(const Function& f);

}  // namespace gpurc::ir
