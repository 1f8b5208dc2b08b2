#include "frontend/ir/module/module.h"

namespace gpurc {
namespace {

class IrModule final : public isa::IsaModule {
 public:
  std::string name() const override { return "ir"; }
  bool is_guest() const override { return false; }
  std::vector<std::string> variants() const override { return {"default"}; }
  unsigned hex_unit_bytes() const override { return 1; }
  bool disassemble(const std::vector<uint8_t>&, const DisasmOptions&, std::string&, std::string& err) const override {
    err = "ir: programs are IR text; there is nothing to disassemble";
    return false;
  }
  bool assemble(const std::string&, const std::string&, std::vector<uint8_t>&, std::string& err) const override {
    err = "ir: programs are IR text; there is nothing to assemble";
    return false;
  }
  bool has_replay() const override { return true; }
  void replay(const isa::ReplayJob& job, replay::ReplayRun& run) const override { ir_isa::replay(job, run); }
};

}  // namespace

const isa::IsaModule& ir_module() {
  static const IrModule m;
  return m;
}

}  // namespace gpurc
