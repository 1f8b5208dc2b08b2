// Replay files (docs/replay-format.md): the parts every ISA shares.
//
// An ISA module's replay handler (IsaModule::replay, isa/module.h) reads the
// ISA-specific parts of the document (program, state, inputs, launch shape),
// runs the program once on the engine it is given and fills a ReplayRun with
// what it observed (named memory buffers, outputs, registers). Everything
// else -- numbers, memory buffers, expect checking, --compare, output and
// exit statuses -- is common code here, which modules and the drivers in
// recompiler/ share.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/launch.h"
#include "runtime/memory.h"

namespace gpurc::replay {

using json = nlohmann::json;

// An invalid file or program (exit status 2). The message names the field.
struct ReplayError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// ---- numbers ---------------------------------------------------------------
// Element types of typed value lists: {"u32": [...]} etc.
enum class ElemType { U8, I8, U16, I16, F16, U32, I32, F32, U64, I64, F64 };
bool parse_elem_type(const std::string& s, ElemType& out);
const char* elem_type_name(ElemType t);
unsigned elem_bytes(ElemType t);
bool elem_is_float(ElemType t);

// One element as its little-endian bit pattern. Integers: a JSON integer
// (negative allowed, wrapped to the width) or a hex string "0x..". Floats: a
// JSON number, "inf", "-inf", "nan" or a hex bit pattern string. `where`
// names the field in error messages.
uint64_t parse_elem(const json& v, ElemType t, const std::string& where);
uint64_t parse_uint(const json& v, const std::string& where);  // JSON integer >= 0 or hex string
// Bits of an element as JSON: integers as numbers, floats as numbers when
// finite, else "inf" / "-inf" / "nan" (the hex pattern for a NaN that is not
// the canonical quiet NaN).
json elem_to_json(uint64_t bits, ElemType t);

// A list of typed values: {"<type>": [...]} (exactly one type key).
struct TypedValues {
  ElemType type = ElemType::U32;
  std::vector<uint64_t> bits;
};
// Finds the one element-type key of `obj` (other keys listed in `ignore`).
TypedValues parse_typed(const json& obj, const std::string& where, const std::vector<std::string>& ignore = {});
std::vector<uint8_t> to_bytes(const TypedValues& v);
std::vector<uint8_t> parse_hex_bytes(const std::string& hex, const std::string& where);

// ---- memory ----------------------------------------------------------------
// `init` of a buffer: u32/i32/f32/u8/...lists, hex, fill, random, iota.
// Returns the bytes (at most `size`; the rest stays zero).
std::vector<uint8_t> init_bytes(const json& init, uint64_t size, const std::string& where);
// Adds every buffer of the document's "memory" list to `mem`.
void load_memory(const json& doc, rt::Memory& mem);

// ---- launch ----------------------------------------------------------------
rt::Dim3 parse_dim3(const json& v, const std::string& where);
// Watchdog budget per warp of a replay unless launch.budget says otherwise.
constexpr int64_t kDefaultReplayBudget = int64_t(1) << 34;
// The most threads (or vertices) one replay launches: beyond it a replay
// would run for hours on a CPU, so parse_launch refuses it up front.
constexpr uint64_t kMaxReplayThreads = uint64_t(1) << 28;
// grid, block, shared_bytes, budget (gpurc extension) of "launch".
rt::LaunchConfig parse_launch(const json& launch);

// ---- running -----------------------------------------------------------------
// Something the run produced, compared against expect and between engines.
struct Observed {
  std::string kind;   // "memory", "vars", "outputs", "registers"
  std::string name;
  ElemType type = ElemType::U32;  // default display type
  std::vector<uint8_t> bytes;
};

struct ReplayRun {
  std::string engine;
  std::vector<Observed> observed;
  std::optional<std::string> fault;  // a guest fault stopped the run
  std::string fault_kind;
  uint64_t guest_instructions = 0;   // lane-instructions executed; 0 = not counted
  uint64_t items = 0;                // vertices / threads run (0: bench uses grid x block)
  double compile_us = 0, run_us = 0;
  const Observed* find(const std::string& kind, const std::string& name) const;
};

// ---- expect ----------------------------------------------------------------
struct Mismatch {
  std::string what;  // "memory c[3]", "vars x[17]", "engine interp vs jit-avx2: ..."
  std::string expected, actual;
  json to_json() const;
};
// Checks doc["expect"] against a run; ulp tolerance from expect.tolerance.ulp.
// Throws ReplayError when expect names something the run did not produce.
std::vector<Mismatch> check_expect(const json& doc, const ReplayRun& run);
// Every difference between two runs' observations (bit exact), at most `limit`.
std::vector<Mismatch> compare_runs(const ReplayRun& a, const ReplayRun& b, size_t limit = 64);
// True if two elements agree within `ulp` (NaN matches NaN; -0 == +0 only if ulp > 0).
bool elem_matches(uint64_t expected, uint64_t actual, ElemType t, uint64_t ulp);

// Observations as {"name": {"type": [...]}} per kind, display types taken
// from expect where it names the object.
json observed_to_json(const json& doc, const ReplayRun& run, const std::string& kind);

// ---- files -------------------------------------------------------------------
// Reads and parses a replay file; checks the envelope ("gpurc": 1, "isa").
json load_file(const std::filesystem::path& path);
// The same checks on a document in memory; `where` names it in errors.
json parse_document(const std::string& text, const std::string& where);
// The text of program.asm or program.asm_file (relative to dir).
std::string program_text(const json& doc, const std::filesystem::path& dir);
// The code bytes of a byte-addressed ISA's program: exactly one of
// program.asm / asm_file (through `assemble`), bytes (hex) or binary_file
// (relative to dir); program.entry is allowed and left to the caller.
using Assembler = std::function<bool(const std::string& text, std::vector<uint8_t>& code, std::string& err)>;
std::vector<uint8_t> program_bytes(const json& doc, const std::filesystem::path& dir, const std::string& isa,
                                   const Assembler& assemble);

}  // namespace gpurc::replay
