// libFuzzer target fuzz_shbin: arbitrary bytes as a PICA200 .shbin (DVLB,
// DVLP, DVLEs). parse_shbin either gives a container or a clear error; a
// container it accepts writes back to bytes that parse to the same bytes
// again (write(parse(write(parse(x)))) == write(parse(x))).
#include "frontend/pica200/shbin.h"
#include "fuzz/libfuzzer/target.h"

using namespace gpurc;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  pica::Shbin s;
  std::string err;
  (void)pica::is_shbin(data, size);
  if (!pica::parse_shbin(data, size, s, err)) {
    if (err.empty()) fuzz_target::fail("parse_shbin failed without a message");
    return 0;
  }
  const std::vector<uint8_t> once = pica::write_shbin(s);
  pica::Shbin back;
  if (!pica::parse_shbin(once.data(), once.size(), back, err)) fuzz_target::fail("written .shbin does not parse: " + err);
  if (pica::write_shbin(back) != once) fuzz_target::fail(".shbin does not survive write and parse");
  return 0;
}
