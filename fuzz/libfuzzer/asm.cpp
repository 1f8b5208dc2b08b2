// libFuzzer target, one per assembler syntax (fuzz_asm_picasso = pica200,
// fuzz_asm_envyas = tesla, fuzz_asm_applegpu = g13, fuzz_asm_bifrost):
// arbitrary text through the assembler of every variant. It either gives
// code or a clear error (deeply nested expressions, huge repeat counts and
// macros included): never a crash, hang or sanitizer report. Code it accepts
// must disassemble.
#include <string_view>

#include "fuzz/libfuzzer/target.h"

using namespace gpurc;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const isa::IsaModule& m = fuzz_target::module_of(GPURC_FUZZ_ISA);
  const std::string variant = fuzz_target::pick_variant(m, data[0]);
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  std::vector<uint8_t> code;
  std::string err;
  if (!m.assemble(text, variant, code, err)) {
    if (err.empty()) fuzz_target::fail("assemble failed without a message");
    return 0;
  }
  DisasmOptions opt;
  opt.variant = variant;
  std::string listing;
  if (!code.empty() && !m.disassemble(code, opt, listing, err))
    fuzz_target::fail("assembled code does not disassemble: " + err);
  return 0;
}
