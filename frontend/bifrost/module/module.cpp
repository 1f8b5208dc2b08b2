// ARM Mali Bifrost as an ISA module (isa/module.h): the codec (Mesa's
// Bifrost disassembler syntax, the packer for it) and replay on the reference
// interpreter or the JIT tiers, translation to IR (a subset of the
// instructions; the rest is a translate error) and fuzzing. Variants name the
// guest models; they select the warp width (4 on G71/G72/G51/G31, 8 on G76/G52).
#include "frontend/bifrost/module/module.h"

#include "frontend/bifrost/bifrost.h"
#include "frontend/bifrost/module/launch.h"
#include "frontend/bifrost/translate.h"

namespace gpurc {
namespace {
class BifrostModule final : public isa::IsaModule {
 public:
  std::string name() const override { return "bifrost"; }
  std::vector<std::string> variants() const override {
    std::vector<std::string> v;
    for (const bifrost::Model& m : bifrost::models()) v.push_back(m.name);
    return v;
  }
  bool accepts_variant(const std::string& v) const override {
    return v.empty() || v == "default" || IsaModule::accepts_variant(v);
  }
  unsigned hex_unit_bytes() const override { return 1; }
  bool disassemble(const std::vector<uint8_t>& code, const DisasmOptions& opt, std::string& out,
                   std::string& err) const override {
    if (!check_variant(opt.variant, err)) return false;
    // Mesa's text has no address or encoding columns; raw means Mesa's text
    // exactly, so 64-bit clauses print as Mesa prints them (32-bit blocks)
    // instead of with register pairs (docs/bifrost.md "64-bit clauses").
    return bifrost::disassemble(code.data(), code.size(), out, err,
                                opt.raw ? bifrost::Clause64Text::Mesa : bifrost::Clause64Text::Pairs);
  }
  bool assemble(const std::string& text, const std::string& variant, std::vector<uint8_t>& out,
                std::string& err) const override {
    if (!check_variant(variant, err)) return false;
    return bifrost::assemble(text, out, err);
  }
  bool translate(const std::vector<uint8_t>& code, const std::string& variant, ir::Function& out,
                 std::string& err) const override {
    if (!check_variant(variant, err)) return false;
    const unsigned W = bifrost::warp_width_of(variant);
    return bifrost::translate(code.data(), code.size(), W, out, err);
  }
  bool has_replay() const override { return true; }
  void replay(const isa::ReplayJob& job, replay::ReplayRun& run) const override { bifrost::replay(job, run); }
  std::unique_ptr<isa::FuzzSession> fuzz_session(const fuzz::IsaFuzzOptions& opt, std::string& err) const override {
    return bifrost::make_fuzz_session(opt, err);
  }
  bool fuzz_capable() const override { return true; }

 private:
  bool check_variant(const std::string& v, std::string& err) const {
    if (accepts_variant(v)) return true;
    std::string list;
    for (const std::string& x : variants()) list += (list.empty() ? "" : ", ") + x;
    err = "bifrost: unknown variant '" + v + "' (one of " + list + ")";
    return false;
  }
};
}  // namespace
const isa::IsaModule& bifrost_module() {
  static const BifrostModule s;
  return s;
}
}  // namespace gpurc
