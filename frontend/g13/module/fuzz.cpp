// `gpurc fuzz --isa g13`: random programs (fuzz_gen.h) on the G13 reference
// interpreter against their translation on the IR interpreter, the pipelined
// IR interpreter and every JIT tier, registers and memory bit for bit (the
// campaign loop is fuzz/isa_fuzz.cpp's). A mismatching program is saved as a
// g13 replay file.
#include <cstdlib>
#include <memory>

#include "frontend/g13/module/fuzz_gen.h"
#include "frontend/g13/module/module.h"
#include "frontend/g13/translate.h"

namespace gpurc::g13 {

namespace {

struct Case final : isa::FuzzCase {
  fuzz::G13FuzzProgram p;
};
struct Outcome final : isa::FuzzOutcome {
  fuzz::G13Outcome o;
};

class Session final : public isa::FuzzSession {
 public:
  Session(uint64_t seed, std::vector<std::string> exclude) : rng_(seed), exclude_(std::move(exclude)) {}
  std::vector<std::string> ir_engines() const override { return {"ir-interp", "interp-pipeline"}; }
  std::unique_ptr<isa::FuzzCase> generate(uint64_t index, std::string& err) override {
    auto c = std::make_unique<Case>();
    try {
      c->p = fuzz::generate_g13_program(rng_, exclude_);
    } catch (const std::exception& x) {
      (void)index;  // one random stream: programs come in index order
      err = x.what();
      return nullptr;
    }
    return c;
  }
  std::unique_ptr<isa::FuzzOutcome> run_reference(const isa::FuzzCase& c) override {
    auto o = std::make_unique<Outcome>();
    o->o = fuzz::run_g13_reference(as(c));
    o->error = o->o.error;
    return o;
  }
  bool translate(const isa::FuzzCase& c, ir::Function& out, std::string& err) override {
    const fuzz::G13FuzzProgram& p = as(c);
    return g13::translate(p.code.data(), p.code.size(), out, err);
  }
  std::unique_ptr<isa::FuzzOutcome> run_translated(const isa::FuzzCase& c, const isa::TranslatedRun& run) override {
    auto o = std::make_unique<Outcome>();
    o->o = fuzz::run_g13_translated(as(c), run.translation, run.vars_bytes, run.exe);
    o->error = o->o.error;
    return o;
  }
  std::string compare(const isa::FuzzCase& c, const isa::FuzzOutcome& ref, const isa::FuzzOutcome& got) override {
    // An engine the driver could not make has a bare FuzzOutcome with the error.
    if (!ref.error.empty()) return "reference failed: " + ref.error;
    if (!got.error.empty()) return got.error;
    return fuzz::compare_g13(as(c), static_cast<const Outcome&>(ref).o, static_cast<const Outcome&>(got).o);
  }
  std::string reproducer(const isa::FuzzCase& c, const isa::FuzzOutcome& ref, const std::string& name,
                         const std::string& description) override {
    return fuzz::g13_replay_text(as(c), static_cast<const Outcome&>(ref).o, name, description);
  }
  std::string reproducer_stem(uint64_t seed, uint64_t index) const override {
    return "g13-seed" + std::to_string(seed) + "-it" + std::to_string(index);
  }

 private:
  static const fuzz::G13FuzzProgram& as(const isa::FuzzCase& c) { return static_cast<const Case&>(c).p; }
  fuzz::Rng rng_;
  std::vector<std::string> exclude_;
};

}  // namespace

// GPURC_G13_FUZZ_EXCLUDE="name,name" leaves descriptors out (to look past a
// known, reported bug); unset = every descriptor the translator accepts.
std::unique_ptr<isa::FuzzSession> make_fuzz_session(const fuzz::IsaFuzzOptions& opt, std::string& err,
                                                    std::vector<std::string> exclude) {
  if (!opt.variant.empty() && opt.variant != "default") {
    err = "g13 has only the variant \"default\"";
    return nullptr;
  }
  if (const char* e = std::getenv("GPURC_G13_FUZZ_EXCLUDE")) {
    std::string s = e;
    for (size_t pos = 0; pos <= s.size();) {
      size_t end = s.find(',', pos);
      if (end == std::string::npos) end = s.size();
      if (end > pos) exclude.push_back(s.substr(pos, end - pos));
      pos = end + 1;
    }
  }
  return std::make_unique<Session>(opt.seed, std::move(exclude));
}

}  // namespace gpurc::g13
