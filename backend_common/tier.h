// The interface of a host JIT tier: everything the engine registry
// (engines/registry.h) and through it the CLI, replay, bench, the fuzzers, the
// tests and the public API know about a code generator. A tier lives in its
// own folder (backend_x64/, later backend_a64/), describes itself with one
// HostTier and is listed once in engines/registry.cpp.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ir/abi.h"
#include "ir/ir.h"

namespace gpurc::backend {

struct CompileOptions {
  bool perf_map = false;  // append the code's range to /tmp/perf-<pid>.map (perf report names JIT code)
  std::string symbol = "gpurc_jit";
};

// A compiled function: runs like any ir::Executable, and shows its host code
// and which ops it could not lower natively.
class CompiledCode : public ir::Executable {
 public:
  virtual std::string disassemble() const = 0;  // one instruction per line, `offset  text`
  virtual size_t code_bytes() const = 0;
  virtual const uint8_t* code() const = 0;      // start of the executable code (code_bytes() long)
  // Ops compiled to calls of the per-lane ir::eval_lane helper, and warp ops
  // that call a C++ helper (memory ops count too: their fast path falls back to it).
  virtual size_t lane_helper_ops() const = 0;
  virtual size_t warp_helper_ops() const = 0;
  // The opcodes of those ops: per-lane helpers first, then warp helpers, each
  // in emission order.
  virtual std::vector<ir::Opcode> helper_ops() const = 0;
};

// Which IR ops a tier lowers natively: per opcode (in ir/opcodes.inc order),
// the set of key types (type_bit) for which some form of the op compiles to
// host instructions without a helper call. The key type of an op is its
// result type, or for ops whose result type is fixed by the op (i1 of
// icmp/fcmp, i32 of popcount/find_*, void of store_var) its first operand's.
// Control flow and ops the pipeline removes have no entry.
using NativeOps = std::array<uint16_t, ir::kNumOpcodes>;
constexpr uint16_t type_bit(ir::Type t) { return uint16_t(1u << unsigned(t)); }
ir::Type native_key_type(const ir::Function& f, ir::ValueId v);
// "i1 i8 f32" for a type set, "-" for none.
std::string type_set_name(uint16_t types);

struct HostTier {
  const char* name;         // engine name everywhere: "jit-avx512"
  const char* host;         // host architecture: "x64", "a64"
  const char* requires_;    // what the host must support, for messages and `gpurc engines`
  uint32_t strip_lanes;     // lanes run per vector instruction (the warp is 32 lanes)
  bool (*available)();      // CPU and OS support this tier
  // Compiles a function that passed ir::run_pipeline. Null with *error on failure.
  std::unique_ptr<CompiledCode> (*compile)(const ir::Function& lowered, const CompileOptions& opt,
                                           std::string* error);
  const NativeOps* native_ops;
};

// The native-op table of `tiers` as markdown: one row per op some tier lowers
// natively (opcode table order), one column of key types per tier.
std::string native_ops_table(const std::vector<const HostTier*>& tiers);

// Byte ranges of ctx.vars the compiled code may read: the slots of every var
// a load_var names (the only op of lowered IR that reads vars), merged
// (ir::Executable::var_read_ranges).
std::vector<std::pair<uint32_t, uint32_t>> var_read_ranges_of(const ir::Function& f);

// Appends "addr size symbol" to /tmp/perf-<pid>.map (thread-safe).
void append_perf_map(const void* addr, size_t size, const std::string& symbol);
// Whether $GPURC_JIT_LISTINGS is set; then append_installed_listing adds an
// installed function's entry and listing to it (a profiling aid).
bool installed_listings_on();
void append_installed_listing(const void* entry, const char* arch, const std::string& listing);

}  // namespace gpurc::backend
