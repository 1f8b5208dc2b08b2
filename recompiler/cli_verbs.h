// The verbs of the gpurc CLI, one function each, called by run_cli after
// argument parsing. Each returns the process exit status (see cli.h).
#pragma once
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "ir/passes.h"

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
  bool static_code = false;   // --static: host instructions emitted per IR instruction, every tier, no timing
};
int bench(const BenchArgs& a, std::ostream& out, std::ostream& err);

// Reads a whole file, or stdin for "-". False with `err` set on failure.
bool read_input(const std::string& path, std::string& data, std::string& err);
// Parses --hex text: whitespace, commas and 0x prefixes separate/are ignored;
// unit 4: each token is a 32-bit word (stored little-endian); unit 1: bytes.
bool parse_hex_text(const std::string& text, unsigned unit, std::vector<uint8_t>& out, std::string& err);
std::string format_hex_text(const std::vector<uint8_t>& bytes, unsigned unit);

}  // namespace gpurc::cli
