// Apple G13 in the CLI and public API: raw code bytes <-> applegpu syntax, and
// code -> IR for the JIT.
#include "frontend/g13/g13.h"
#include "frontend/g13/translate.h"
#include "fuzz/isa_fuzz.h"
#include "recompiler/isa.h"
#include "recompiler/isa_engine.h"
#include "recompiler/replay.h"

namespace gpurc {
namespace {
class G13Support final : public isa::IsaModule {
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

  // Transitional (until g13 moves to frontend/g13/module/): the replay
  // handler and the campaign still written against recompiler's Engine.
  bool has_replay() const override { return true; }
  void replay(const isa::ReplayJob& job, replay::ReplayRun& run) const override {
    replay::replay_g13(replay::ReplayJob{job.doc, job.dir, engine_of(job.engine), job.threads, job.count_instructions}, run);
  }
  WholeCampaign whole_campaign() const override { return &fuzz::run_g13_fuzz; }
};
}  // namespace
const isa::IsaModule& g13_module() {
  static G13Support s;
  return s;
}
}  // namespace gpurc
