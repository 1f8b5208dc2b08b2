// libFuzzer target, one per ISA (fuzz_disasm_<isa>): arbitrary bytes as
// code (or a container the ISA recognises) through the decoder and
// disassembler of every variant, raw and with columns. Either gives text or
// a clear error; never a crash, hang or sanitizer report. Text output must be
// the same for the same input (no reads of uninitialised state).
#include "fuzz/libfuzzer/target.h"

using namespace gpurc;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const isa::IsaModule& m = fuzz_target::module_of(GPURC_FUZZ_ISA);
  DisasmOptions opt;
  opt.variant = fuzz_target::pick_variant(m, data[0]);
  const std::vector<uint8_t> code(data + 1, data + size);
  for (bool raw : {false, true}) {
    opt.raw = raw;
    std::string text, err, again, err2;
    const bool ok = m.disassemble(code, opt, text, err);
    if (!ok && err.empty()) fuzz_target::fail("disassemble failed without a message");
    const bool ok2 = m.disassemble(code, opt, again, err2);
    if (ok != ok2 || text != again || err != err2) fuzz_target::fail("disassemble is not deterministic");
  }
  return 0;
}
