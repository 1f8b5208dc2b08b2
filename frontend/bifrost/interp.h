// ARM Mali Bifrost reference interpreter (docs/bifrost.md "Execution model").
//
// A Program is the code decoded once into clauses (immutable, shared by every
// warp of a launch). A WarpState is one 32-lane host warp holding 32/W guest
// warps of W lanes (W = 4 on G71/G72/G51/G31, 8 on G76/G52); it lives in the
// launch's vars (trivially destructible). run_warp runs every guest warp of it
// until all its threads ended, wait at a barrier, or a fault/error stops it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "frontend/bifrost/clause.h"
#include "frontend/bifrost/isa.h"
#include "ir/abi.h"

namespace gpurc::bifrost {

constexpr unsigned kHostLanes = 32;
constexpr unsigned kRegs = 64;
constexpr unsigned kUniformWords = 256;  // FAU uniform pairs 0x80-0xff = 32-bit words u0..u255
// The high word of the 64-bit addresses SEG_ADD.wls makes (docs/bifrost.md
// "Segment addresses"): an ATOM_C address with this high word is the wls
// (shared memory) byte offset in its low word. Defined by gpurc.
constexpr uint32_t kWlsWindowHi = 0xfffffff0u;

// One decoded FMA or ADD instruction.
struct DecodedIns {
  const Encoding* enc = nullptr;  // null: INSTR_INVALID_ENC
  uint32_t word = 0;
  int op = 0;                     // interpreter operation (interp.cpp)
  uint8_t src[4] = {};            // 3-bit source fields in operand order
  unsigned nsrc = 0;
  std::vector<int> mods;          // decode_mods values (index into enc->mods[i].opts)
  uint32_t imm[4] = {};
  // The option name of modifier `name`, "" if the encoding has none.
  const std::string& mod(const char* name) const;
};

struct DecodedTuple {
  RegBlock rb;
  RegMode rm;      // 32-bit clauses
  RegMode64 rm64;  // 64-bit clauses (wide): register pairs
  DecodedIns fma, add;
};

struct DecodedClause {
  Clause raw;
  size_t size = 0;    // bytes
  bool wide = false;  // a 64-bit clause (header message type 15): every datapath value is a register pair
  DecodedTuple t[8];
};

// Why `e` cannot be in a 64-bit clause (message, branch, atomic, barrier: the
// clause type has no message and the model runs each instruction twice), or
// "" when it can.
std::string wide_clause_reason(const Encoding& e);

class Program {
 public:
  // Decodes every clause from byte 0 to the end of the code (a zero 32-bit
  // word where a clause would start ends it). False with an error naming the
  // clause offset.
  bool load(const std::vector<uint8_t>& code, std::string& err);
  // The clause at byte offset `pc`, or null when no clause starts there.
  const DecodedClause* at(uint64_t pc) const;
  size_t code_bytes() const { return code_bytes_; }
  const std::vector<DecodedClause>& clauses() const { return clauses_; }

 private:
  std::vector<DecodedClause> clauses_;
  std::vector<int32_t> index_;  // per 16-byte quadword: clause index or -1
  size_t code_bytes_ = 0;
};

// What a launch gives every warp.
struct LaunchEnv {
  const Program* program = nullptr;
  unsigned warp_width = 4;                 // guest warp width (4 or 8)
  const uint32_t* uniforms = nullptr;      // kUniformWords words
};

enum class Stop : uint32_t { Running = 0, Done = 1, Barrier = 2, Fault = 3, Error = 4 };

struct WarpState {
  uint32_t regs[kRegs][kHostLanes];  // r0..r63 per lane
  uint32_t pc[kHostLanes];           // byte offset of each thread's next clause
  uint32_t launched = 0;             // threads that exist
  uint32_t ended = 0;                // threads that finished (eos clause)
  uint32_t waiting = 0;              // threads at a barrier
  uint32_t guest_warp_base = 0;      // guest warp index (in the workgroup) of lanes 0..W-1
  Stop stop = Stop::Running;
  ir::FaultKind fault = ir::FaultKind::None;
  uint32_t fault_lane = 0, fault_space = 0;
  uint64_t fault_addr = 0;
  uint64_t clauses_run = 0;          // guest clause executions (per guest warp)
  uint64_t lane_instructions = 0;    // sum over executed FMA/ADD instructions of active lanes
  char message[320];
};
static_assert(std::is_trivially_destructible_v<WarpState>);

// Compute launch preload (Mesa's register conventions for compute shaders):
// r55 = local id x | y << 16, r56 = local id z, r57-r59 = workgroup id,
// r60-r62 = global invocation id.
constexpr unsigned kPreloadLocal = 55, kPreloadGroup = 57, kPreloadGlobal = 60;

// Runs the warp until it stops (see Stop); resumes waiting threads first when
// called again after Barrier. `budget` counts clauses (decremented).
Stop run_warp(const LaunchEnv& env, WarpState& st, ir::GuestMemory& mem, int64_t& budget);

// An *ATOM_C / *ATOM_C1 (performed with its +ATOM_CX) as one memory atomic:
// operation, width, operand (docs/bifrost.md "Messages"). False for an
// atom_opc value that is not modelled.
struct AtomPlan {
  ir::AtomicOp op = ir::AtomicOp::Add;
  unsigned bytes = 4;
  unsigned operand_regs = 1;  // 0: `constant`; 1: r[sr] (zero- or sign-extended to i64); 2: r[sr], r[sr+1]
  bool sext = false;
  uint64_t constant = 0;
  bool ret = false;           // the _RETURN forms: the old value back to the staging registers
};
bool atom_plan(const DecodedIns& a, AtomPlan& p);

// FEXP_TABLE.u4: 2^(i/16) rounded to nearest f32 (i = the low 4 bits of the
// source), the table the seed's exp sequences read (docs/bifrost.md).
uint32_t fexp_table(unsigned i);

// The interpreter's own names of what it executes (docs, tests): every
// encoding name with its status, "" = implemented, else why not.
std::string unsupported_reason(const Encoding& e);

}  // namespace gpurc::bifrost
