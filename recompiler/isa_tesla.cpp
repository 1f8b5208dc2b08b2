#include "recompiler/isa.h"

namespace gpurc {
namespace {
// The tesla frontend is not wired into the CLI yet: every call reports that.
class Unavailable final : public IsaSupport {
 public:
  std::string name() const override { return "tesla"; }
  std::vector<std::string> variants() const override { return {"default"}; }
  unsigned hex_unit_bytes() const override { return 4; }
  bool disassemble(const std::vector<uint8_t>&, const DisasmOptions&, std::string&, std::string& err) const override {
    err = "tesla: the disassembler is not implemented yet";
    return false;
  }
  bool assemble(const std::string&, const std::string&, std::vector<uint8_t>&, std::string& err) const override {
    err = "tesla: the assembler is not implemented yet";
    return false;
  }
};
}  // namespace
const IsaSupport& tesla_support() {
  static Unavailable s;
  return s;
}
}  // namespace gpurc
