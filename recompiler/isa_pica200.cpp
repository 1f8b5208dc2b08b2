// The pica200 ISA for the CLI and public API: .shbin or raw words in,
// picasso-syntax text out; picasso text in, .shbin bytes out.
#include <iostream>

#include "frontend/pica200/assembler.h"
#include "frontend/pica200/disasm.h"
#include "frontend/pica200/shbin.h"
#include "frontend/pica200/translate.h"
#include "ir/ir.h"
#include "fuzz/isa_fuzz.h"
#include "recompiler/isa.h"
#include "recompiler/isa_engine.h"
#include "recompiler/replay.h"

namespace gpurc {
namespace {

class Pica200Support final : public isa::IsaModule {
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
    if (!variant.empty() && variant != "default") {
      err = "pica200: unknown variant '" + variant + "'";
      return false;
    }
    pica::Shbin s;
    std::vector<std::string> warnings;
    if (!pica::assemble({pica::AsmSource{"", text}}, pica::AsmOptions{}, s, err, &warnings)) {
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

  // Transitional (until pica200 moves to frontend/pica200/module/): the replay
  // handler and the campaign still written against recompiler's Engine.
  bool has_replay() const override { return true; }
  void replay(const isa::ReplayJob& job, replay::ReplayRun& run) const override {
    replay::replay_pica200(replay::ReplayJob{job.doc, job.dir, engine_of(job.engine), job.threads, job.count_instructions}, run);
  }
  WholeCampaign whole_campaign() const override { return &fuzz::run_pica200_fuzz; }
};

}  // namespace

const isa::IsaModule& pica200_module() {
  static Pica200Support s;
  return s;
}

}  // namespace gpurc
