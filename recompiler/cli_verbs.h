// The verbs of the gpurc CLI, one function each, called by run_cli after
// argument parsing. Each returns the process exit status (see cli.h).
#pragma once
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "ir/passes.h"
#include "isa/fuzz.h"

namespace gpurc::cli {

struct ReplayArgs {
  std::string file;
  std::string engine = "jit";
  bool json = false;
  bool count = false;   // count lane-instructions (an extra interpreter run); implied by json
  std::string compare;  // "E1,E2[,...]"
  unsigned threads = 0;
};
int replay(const ReplayArgs& a, std::ostream& out, std::ostream& err);

struct BenchArgs {
  std::string isa = "ir";
  bool json = false;
  unsigned threads = 0;
  std::string dir;       // kernel folder; default: the source tree's bench/
  double min_seconds = 0.25;  // measuring time per engine and kernel
  bool draws_only = false;    // pica200: only the emulator-style draw rows (bench_pica200_draw.cpp)
  bool only_compile = false;  // pica200: only the compile rows
  bool stages = false;        // pica200: print each compile row's per-stage breakdown
  bool static_code = false;   // --static: host instructions emitted per IR instruction, every tier, no timing
};
int bench(const BenchArgs& a, std::ostream& out, std::ostream& err);

// `gpurc fuzz --json FILE`: what one campaign (or one shard of it) did.
struct FuzzSummary {
  std::string isa;                 // "ir" or the guest ISA
  std::string variant;
  uint64_t seed = 0, first = 0, iterations = 0;
  fuzz::Shard shard;
  std::vector<std::string> engines;
  uint64_t programs = 0, runs = 0;
  std::vector<fuzz::IsaFuzzMismatch> mismatches;
  std::vector<std::string> notes;
  std::string error;
  double seconds = 0;
  // Peak resident set of the process that ran the campaign (getrusage
  // ru_maxrss), KiB; a merge keeps the largest shard's. 0 = not known.
  uint64_t peak_rss_kib = 0;
};
std::string fuzz_summary_json(const FuzzSummary& s);
// The process's peak resident set so far (getrusage ru_maxrss), KiB.
uint64_t peak_rss_kib();
// "K/N", "env/N" or "env" (index from the job array's environment; docs/cli.md).
bool parse_shard(const std::string& spec, fuzz::Shard& shard, std::string& err);
// `gpurc fuzz merge FILES [--json OUT]`: exit 0 when the shards make the whole
// campaign without a mismatch or error, 1 on mismatches, errors or missing
// shards, 2 on unreadable files or shards of different campaigns.
int fuzz_merge(const std::vector<std::string>& files, const std::string& json_out, std::ostream& out,
               std::ostream& err);
// "4G", "512M", "64KiB", "1000000" -> bytes (units are powers of 1024).
bool parse_size(const std::string& text, uint64_t& bytes, std::string& err);
bool write_text_file(const std::string& path, const std::string& text, std::string& err);

// Reads a whole file, or stdin for "-". False with `err` set on failure.
bool read_input(const std::string& path, std::string& data, std::string& err);
// Parses --hex text: whitespace, commas and 0x prefixes separate/are ignored;
// unit 4: each token is a 32-bit word (stored little-endian); unit 1: bytes.
bool parse_hex_text(const std::string& text, unsigned unit, std::vector<uint8_t>& out, std::string& err);
std::string format_hex_text(const std::vector<uint8_t>& bytes, unsigned unit);

}  // namespace gpurc::cli
