// libFuzzer target fuzz_cubin: arbitrary bytes as a text .cubin (the CUDA
// 1.x/2.x container of Tesla code). parse_cubin either gives kernels or a
// clear error; every kernel it gives then goes through the Tesla module's
// translation (which must also fail cleanly or give verified IR).
#include "frontend/tesla/cubin.h"
#include "fuzz/libfuzzer/target.h"
#include "ir/ir.h"

using namespace gpurc;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<uint8_t> bytes(data, data + size);
  (void)tesla::looks_like_cubin(bytes);
  tesla::Cubin c;
  std::string err;
  if (!tesla::parse_cubin(std::string(bytes.begin(), bytes.end()), c, err)) {
    if (err.empty()) fuzz_target::fail("parse_cubin failed without a message");
    return 0;
  }
  // The module translates a .cubin's first kernel (as `gpurc ir --isa tesla`).
  ir::Function f;
  if (fuzz_target::module_of("tesla").translate(bytes, "", f, err)) {
    if (std::string v = ir::verify(f); !v.empty()) fuzz_target::fail("translation does not verify: " + v);
  } else if (err.empty()) {
    fuzz_target::fail("translate failed without a message");
  }
  return 0;
}
