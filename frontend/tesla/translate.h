// Translation of NVIDIA Tesla (sm_1x) code to pre-SSA IR: one lane per
// thread, 32 threads per warp, as the reference interpreter (interp.h) lays
// them out. The translated function runs one warp from the kernel entry to
// the end of every thread; see docs/tesla.md "Translation to IR". The state
// layout, uniform block and memory map the translated function uses are the
// launch ABI (launch_abi.h).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "frontend/tesla/interp.h"
#include "frontend/tesla/launch_abi.h"
#include "ir/ir.h"

namespace gpurc::tesla {

struct TranslateOptions {
  Target target;                 // variant / features / program type (compute only is translated)
  uint32_t entry = 0;            // word address where execution starts
  unsigned regs = 128;           // allocated $r count; higher registers read 0, writes dropped
  uint32_t smem = 0x4000;        // s[] bytes (informational: the memory bounds it)
  uint32_t lmem = 0;             // l[] bytes per thread (accesses beyond fault)
  uint32_t attr_bytes = 0x200;   // a[] and o[] bytes per thread (as BlockConfig::attr_bytes)
  bool launch_abi = true;        // emit the ABI-writer prologue ("abi_writer") and the uniform block
  uint32_t param_bytes = 0;      // kernel parameter bytes at s[0x10..] (launch_abi)
  unsigned call_limit = 16;      // limited calls ignored beyond this depth (as BlockConfig::call_limit)
  uint16_t own_global_spaces = 0xffff;  // as BlockConfig: g<i> without its bit is g0's linear memory
  uint32_t max_words = 1u << 20; // refuse bigger programs
  // The function runs only from a fresh launch (rt::launch zeroes the vars,
  // its init writes r0, ctaid, local_base, abi_writer, attr_base): every
  // other var the code writes starts at a known zero, stated at the entry,
  // so no pass needs its load (the select of a masked write, the merge of
  // a divergent exit get a constant). Programs with `bar` keep the loads.
  // Not for runs from a given state.
  bool fresh_launch = false;
  // With fresh_launch: nobody reads the state after the run either (rt::launch
  // without a finish callback; the launch's outputs are memory). Without
  // `bar` (a barrier keeps state across runs), the vars the code writes and
  // fresh_launch zeroes become private to the run (ir::Function::state_vars:
  // never loaded or stored, no place in the warp context), and when no s[]
  // read is left in the code (every launch-ABI read became a uniform load),
  // the ABI block is not written: no thread could observe it.
  bool discard_state = false;
};

// Size of the uniform block the translated function reads.
uint32_t uniform_bytes(const TranslateOptions& opt);

// Translates `code` (32-bit words) from opt.entry. False with `err` naming the
// first instruction the translator cannot handle and its word address.
// Reached instructions that do not decode (and branches outside the code)
// become traps that fault when executed, as the interpreter faults then.
bool translate(const std::vector<uint32_t>& code, const TranslateOptions& opt, ir::Function& out,
               std::string& err);
// Same with entry given separately (overrides opt.entry).
bool translate(const std::vector<uint32_t>& code, uint32_t entry, const TranslateOptions& opt, ir::Function& out,
               std::string& err);

// Options matching an interpreter BlockConfig (regs, smem, lmem, params, call limit).
TranslateOptions options_for(const BlockConfig& cfg, const Target& target, uint32_t entry = 0);

}  // namespace gpurc::tesla
