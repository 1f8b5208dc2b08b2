// NVIDIA Tesla as an ISA module: raw words or a text .cubin in,
// envydis-syntax text out; envyas-syntax text in, raw words out; code -> IR
// for the JIT, replay and fuzzing (module.h).
#include "frontend/tesla/module/module.h"

#include "frontend/tesla/cubin.h"
#include "frontend/tesla/disasm.h"
#include "frontend/tesla/encoding.h"
#include "frontend/tesla/translate.h"
#include "ir/ir.h"

namespace gpurc {
namespace {

class TeslaModule final : public isa::IsaModule {
 public:
  std::string name() const override { return "tesla"; }
  std::vector<std::string> variants() const override { return tesla::variant_names(); }
  // A chip and, after a colon, the program type (`g200:vp`; docs/tesla.md).
  bool accepts_variant(const std::string& v) const override {
    tesla::Target t;
    std::string err;
    return tesla::parse_target(v, t, err);
  }
  unsigned hex_unit_bytes() const override { return 4; }

  bool disassemble(const std::vector<uint8_t>& code, const DisasmOptions& opt, std::string& out,
                   std::string& err) const override {
    tesla::Target t;
    if (!tesla::parse_target(opt.variant, t, err)) return false;
    if (tesla::looks_like_cubin(code)) {
      tesla::Cubin c;
      if (!tesla::parse_cubin(std::string(code.begin(), code.end()), c, err)) {
        err = "tesla: " + err;
        return false;
      }
      out.clear();
      for (auto& k : c.kernels) {
        if (!opt.raw) out += "// kernel " + k.name + "\n";
        out += tesla::disassemble_words(k.code, t, opt.raw);
      }
      return true;
    }
    if (code.size() % 4) {
      err = "tesla: raw code must be a whole number of 32-bit words (got " + std::to_string(code.size()) + " bytes)";
      return false;
    }
    std::vector<uint32_t> words(code.size() / 4);
    for (size_t i = 0; i < words.size(); ++i)
      words[i] = uint32_t(code[4 * i]) | uint32_t(code[4 * i + 1]) << 8 | uint32_t(code[4 * i + 2]) << 16 |
                 uint32_t(code[4 * i + 3]) << 24;
    out = tesla::disassemble_words(words, t, opt.raw);
    return true;
  }

  bool assemble(const std::string& text, const std::string& variant, std::vector<uint8_t>& out,
                std::string& err) const override {
    tesla::Target t;
    if (!tesla::parse_target(variant, t, err)) return false;
    std::vector<uint32_t> words;
    if (!tesla::assemble(text, t, words, err)) {
      err = "tesla: " + err;
      return false;
    }
    out.clear();
    for (uint32_t w : words)
      for (int b = 0; b < 4; ++b) out.push_back(uint8_t(w >> (8 * b)));
    return true;
  }

  // Raw words (entry at word 0) or a text .cubin (its first kernel, with the
  // kernel's lmem/smem/reg counts). Parameters are not known here: the
  // uniform block has the 16-byte launch ABI header only.
  bool translate(const std::vector<uint8_t>& code, const std::string& variant, ir::Function& out,
                 std::string& err) const override {
    tesla::Target t;
    if (!tesla::parse_target(variant, t, err)) return false;
    tesla::TranslateOptions opt;
    opt.target = t;
    std::vector<uint32_t> words;
    if (tesla::looks_like_cubin(code)) {
      tesla::Cubin c;
      if (!tesla::parse_cubin(std::string(code.begin(), code.end()), c, err)) {
        err = "tesla: " + err;
        return false;
      }
      if (c.kernels.empty()) {
        err = "tesla: the .cubin has no kernel";
        return false;
      }
      const tesla::CubinKernel& k = c.kernels.front();
      words = k.code;
      opt.lmem = k.lmem;
      if (k.smem) opt.smem = k.smem;
      if (k.reg) opt.regs = k.reg;
    } else {
      if (code.size() % 4) {
        err = "tesla: raw code must be a whole number of 32-bit words (got " + std::to_string(code.size()) + " bytes)";
        return false;
      }
      words.resize(code.size() / 4);
      for (size_t i = 0; i < words.size(); ++i)
        words[i] = uint32_t(code[4 * i]) | uint32_t(code[4 * i + 1]) << 8 | uint32_t(code[4 * i + 2]) << 16 |
                   uint32_t(code[4 * i + 3]) << 24;
    }
    if (!tesla::translate(words, opt, out, err)) {
      err = "tesla: " + err;
      return false;
    }
    return true;
  }

  bool has_replay() const override { return true; }
  void replay(const isa::ReplayJob& job, replay::ReplayRun& run) const override { tesla::replay(job, run); }
  std::unique_ptr<isa::FuzzSession> fuzz_session(const fuzz::IsaFuzzOptions& opt, std::string& err) const override {
    return tesla::make_fuzz_session(opt, err);
  }
  bool fuzz_capable() const override { return true; }
  // Every program's seed comes from (seed, index): a campaign may start anywhere.
  bool fuzz_can_start_anywhere() const override { return true; }
};

}  // namespace

const isa::IsaModule& tesla_module() {
  static const TeslaModule s;
  return s;
}

}  // namespace gpurc
