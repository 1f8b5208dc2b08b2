#include "recompiler/isa.h"

namespace gpurc {
namespace {
// The bifrost frontend is not wired into the CLI yet: every call reports that.
class Unavailable final : public isa::IsaModule {
 public:
  std::string name() const override { return "bifrost"; }
  std::vector<std::string> variants() const override { return {"default"}; }
  unsigned hex_unit_bytes() const override { return 1; }
  bool disassemble(const std::vector<uint8_t>&, const DisasmOptions&, std::string&, std::string& err) const override {
    err = "bifrost: the disassembler is not implemented yet";
    return false;
  }
  bool assemble(const std::string&, const std::string&, std::vector<uint8_t>&, std::string& err) const override {
    err = "bifrost: the assembler is not implemented yet";
    return false;
  }
};
}  // namespace
const isa::IsaModule& bifrost_module() {
  static Unavailable s;
  return s;
}
}  // namespace gpurc
