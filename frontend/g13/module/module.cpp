// Apple G13 as an ISA module: raw code bytes <-> applegpu syntax, code -> IR
// for the JIT, replay and fuzzing (module.h).
#include "frontend/g13/module/module.h"

#include "frontend/g13/g13.h"
#include "frontend/g13/translate.h"

namespace gpurc {
namespace {
class G13Module final : public isa::IsaModule {
 public:
  std::string name() const override { return "g13"; }
  std::vector<std::string> variants() const override { return {"default"}; }
  unsigned hex_unit_bytes() const override { return 1; }
  bool disassemble(const std::vector<uint8_t>& code, const DisasmOptions& opt, std::string& out,
                   std::string& err) const override {
    if (!opt.variant.empty() && opt.variant != "default") {
      err = "g13: unknown variant '" + opt.variant + "' (only 'default')";
      return false;
    }
    fe::Diagnostic d;
    if (!g13::disassemble_buffer(code.data(), code.size(), opt.raw, out, d)) {
      err = d.message;
      return false;
    }
    return true;
  }
  bool assemble(const std::string& text, const std::string& variant, std::vector<uint8_t>& out,
                std::string& err) const override {
    if (!variant.empty() && variant != "default") {
      err = "g13: unknown variant '" + variant + "' (only 'default')";
      return false;
    }
    return g13::assemble(text, out, err);
  }
  // Raw code from byte 0 -> pre-SSA IR (frontend/g13/translate.h for the state layout).
  bool translate(const std::vector<uint8_t>& code, const std::string& variant, ir::Function& out,
                 std::string& err) const override {
    if (!variant.empty() && variant != "default") {
      err = "g13: unknown variant '" + variant + "' (only 'default')";
      return false;
    }
    return g13::translate(code.data(), code.size(), out, err);
  }

  bool has_replay() const override { return true; }
  void replay(const isa::ReplayJob& job, replay::ReplayRun& run) const override { g13::replay(job, run); }
  std::unique_ptr<isa::FuzzSession> fuzz_session(const fuzz::IsaFuzzOptions& opt, std::string& err) const override {
    return g13::make_fuzz_session(opt, err);
  }
  bool fuzz_capable() const override { return true; }
};
}  // namespace
const isa::IsaModule& g13_module() {
  static const G13Module s;
  return s;
}
}  // namespace gpurc
