// PICA200 as an ISA module (module.h): .shbin or raw words in,
// picasso-syntax text out; picasso text in, .shbin bytes out; code -> IR for
// the JIT, replay and fuzzing.
#include "frontend/pica200/module/module.h"

#include <iostream>

#include "frontend/pica200/assembler.h"
#include "frontend/pica200/disasm.h"
#include "frontend/pica200/shbin.h"
#include "frontend/pica200/translate.h"
#include "ir/ir.h"

namespace gpurc {
namespace {

class Pica200Module final : public isa::IsaModule {
 public:
  std::string name() const override { return "pica200"; }
  std::vector<std::string> variants() const override { return {"default"}; }
  unsigned hex_unit_bytes() const override { return 4; }

  bool disassemble(const std::vector<uint8_t>& code, const DisasmOptions& opt, std::string& out,
                        std::string& err) const override {
    if (!opt.variant.empty() && opt.variant != "default") {
      err = "pica200: unknown variant '" + opt.variant + "'";
      return false;
    }
    out.clear();
    pica::ListingOptions lo;
    lo.raw = opt.raw;
    if (pica::is_shbin(code.data(), code.size())) {
      pica::Shbin s;
      if (!pica::parse_shbin(code.data(), code.size(), s, err)) return false;
      return pica::disasm_shbin(s, lo, out, err);
    }
    if (code.size() % 4) {
      err = "pica200: raw code must be a whole number of 32-bit words (got " + std::to_string(code.size()) + " bytes)";
      return false;
    }
    std::vector<uint32_t> words(code.size() / 4);
    for (size_t i = 0; i < words.size(); ++i)
      words[i] = uint32_t(code[4 * i]) | uint32_t(code[4 * i + 1]) << 8 | uint32_t(code[4 * i + 2]) << 16 |
                 uint32_t(code[4 * i + 3]) << 24;
    // Raw words carry no descriptor table: descriptors print as desc[N].
    return pica::disasm_words(words, nullptr, lo, out, err);
  }

  bool assemble(const std::string& text, const std::string& variant, std::vector<uint8_t>& out,
                std::string& err) const override {
    gpurc::AssembleOptions opt;
    opt.variant = variant;
    return assemble_with(text, opt, out, err);
  }

  // padding_nops = false is picasso -n: no NOP inserted, picasso's warning
  // "a padding NOP is required here" at each place instead.
  bool assemble_with(const std::string& text, const gpurc::AssembleOptions& opt, std::vector<uint8_t>& out,
                     std::string& err) const override {
    if (!opt.variant.empty() && opt.variant != "default") {
      err = "pica200: unknown variant '" + opt.variant + "'";
      return false;
    }
    pica::Shbin s;
    std::vector<std::string> warnings;
    pica::AsmOptions po;
    po.auto_nop = opt.padding_nops;
    if (!pica::assemble({pica::AsmSource{"", text}}, po, s, err, &warnings)) {
      err = "pica200: " + err;
      return false;
    }
    for (const std::string& w : warnings) std::cerr << "pica200: " << w << "\n";
    out = pica::write_shbin(s);
    return true;
  }

  // .shbin: the first DVLE's entry point (its geometry flag selects a geometry
  // shader); raw words: entry 0, no operand descriptors (an instruction that
  // needs one traps at run time, as in the interpreter).
  bool translate(const std::vector<uint8_t>& code, const std::string& variant, ir::Function& out,
                 std::string& err) const override {
    if (!variant.empty() && variant != "default") {
      err = "pica200: unknown variant '" + variant + "'";
      return false;
    }
    pica::Program prog;
    pica::TranslateOptions opt;
    if (pica::is_shbin(code.data(), code.size())) {
      pica::Shbin s;
      if (!pica::parse_shbin(code.data(), code.size(), s, err)) return false;
      prog = pica::program_of(s);
      if (!s.dvles.empty()) {
        opt.entry = s.dvles[0].main_offset;
        opt.geometry = s.dvles[0].is_geometry != 0;
      }
    } else {
      if (code.size() % 4) {
        err = "pica200: raw code must be a whole number of 32-bit words (got " + std::to_string(code.size()) +
              " bytes)";
        return false;
      }
      prog.code.resize(code.size() / 4);
      for (size_t i = 0; i < prog.code.size(); ++i)
        prog.code[i] = uint32_t(code[4 * i]) | uint32_t(code[4 * i + 1]) << 8 | uint32_t(code[4 * i + 2]) << 16 |
                       uint32_t(code[4 * i + 3]) << 24;
    }
    if (prog.code.empty()) {
      err = "pica200: no code words";
      return false;
    }
    return pica::translate(prog, opt, out, err);
  }

  bool has_replay() const override { return true; }
  void replay(const isa::ReplayJob& job, replay::ReplayRun& run) const override { pica::replay(job, run); }
  std::unique_ptr<isa::FuzzSession> fuzz_session(const fuzz::IsaFuzzOptions& opt, std::string& err) const override {
    return pica::make_fuzz_session(opt, err);
  }
  bool fuzz_capable() const override { return true; }
  // Program i comes from its own seed (pica200_program_seed): --first works.
  bool fuzz_can_start_anywhere() const override { return true; }
};

}  // namespace

const isa::IsaModule& pica200_module() {
  static const Pica200Module s;
  return s;
}

}  // namespace gpurc
