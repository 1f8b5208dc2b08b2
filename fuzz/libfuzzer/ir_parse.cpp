// libFuzzer harness: arbitrary bytes as IR text. Parsing must either fail with
// a message or give a function that verify() accepts or rejects with a
// message: never a crash, hang or sanitizer report. A function that parses and
// verifies must print to text that parses again to the same text.
// Built only with -DGPURC_LIBFUZZER=ON and clang (see docs/fuzzing.md).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "ir/ir.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  gpurc::ir::Function f;
  std::string error;
  if (!gpurc::ir::parse(text, f, error)) return 0;
  if (!gpurc::ir::verify(f).empty()) return 0;
  std::string printed = gpurc::ir::print(f);
  gpurc::ir::Function again;
  if (!gpurc::ir::parse(printed, again, error) || gpurc::ir::print(again) != printed) std::abort();
  return 0;
}
