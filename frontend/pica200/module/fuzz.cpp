// `gpurc fuzz --isa pica200`: generated shaders (fuzz_gen.h) on the
// reference interpreter against their translation on the IR interpreter and
// every JIT tier, every vertex's end state bit for bit (fuzz_run.h; the
// campaign loop is fuzz/isa_fuzz.cpp's). Vertex programs are translated as
// prepare_shader does, their pass-through registers taken out of the code and
// copied after the run (drop_pass_through, draw.h), so the campaign checks
// that step too. Every odd-numbered vertex program is translated as
// Shader::compile does, under the draw contract (TranslateOptions::draw_only:
// the temporaries, a0, aL and cmp are private to the run), and only its
// o-registers and faults are compared; even ones keep the whole state that
// run_vertices and replay hand back. A mismatch is saved per engine as a pica200 replay file. See
// docs/fuzzing.md ("PICA200").
#include <array>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "frontend/pica200/abi.h"
#include "frontend/pica200/module/draw.h"
#include "frontend/pica200/module/fuzz_gen.h"
#include "frontend/pica200/module/fuzz_run.h"
#include "frontend/pica200/module/launch.h"
#include "frontend/pica200/module/module.h"
#include "ir/ir.h"

namespace gpurc::pica {

namespace {

struct Case final : isa::FuzzCase {
  fuzz::PicaCase c;
  uint64_t serial = 0;  // tells the session's cases apart (run_translated finds its reference by it)
};
struct Outcome final : isa::FuzzOutcome {
  std::shared_ptr<const fuzz::PicaReference> ref;  // run_reference's
  fuzz::PicaEngineRun run;                         // run_translated's
};

class Session final : public isa::FuzzSession {
 public:
  Session(uint64_t seed, std::string variant, fp::Options fp) : seed_(seed), variant_(std::move(variant)), fp_(fp) {
    // GPURC_FUZZ_PROGRESS=N: a line on stderr every N programs (long
    // campaigns, when stderr is not a terminal for the driver's progress).
    if (const char* e = std::getenv("GPURC_FUZZ_PROGRESS")) progress_ = std::strtoull(e, nullptr, 10);
  }

  // Program i comes from its own seed: the same programs whatever --first.
  std::unique_ptr<isa::FuzzCase> generate(uint64_t index, std::string&) override {
    if (progress_ && index % progress_ == 0)
      std::fprintf(stderr, "pica200 fuzz: iteration %llu\n", (unsigned long long)index);
    auto c = std::make_unique<Case>();
    c->c = fuzz::generate_pica200(fuzz::pica200_program_seed(seed_, index));
    c->serial = ++serials_;
    return c;
  }
  std::unique_ptr<isa::FuzzOutcome> run_reference(const isa::FuzzCase& c) override {
    auto o = std::make_unique<Outcome>();
    o->ref = std::make_shared<const fuzz::PicaReference>(fuzz::run_pica200_reference(as(c), fp_));
    last_serial_ = serial(c);
    last_ref_ = o->ref;
    return o;
  }
  // A reference that faults on a program without shared ends means the
  // generator made an invalid program; one that ran out of its budget (a
  // stale-frame program) is not compared.
  isa::ReferenceVerdict check_reference(const isa::FuzzCase& c, const isa::FuzzOutcome& ref,
                                        std::string& message) const override {
    const fuzz::PicaReference& r = *static_cast<const Outcome&>(ref).ref;
    if (!r.error.empty()) {
      message = "iteration " + std::to_string(c.index) + ": generated program is invalid: " + r.error;
      return isa::ReferenceVerdict::StopCampaign;
    }
    return r.skipped ? isa::ReferenceVerdict::Skip : isa::ReferenceVerdict::Compare;
  }
  bool translate(const isa::FuzzCase& c, ir::Function& out, std::string& err) override {
    const bool draw = !as(c).geometry && c.index % 2 == 1 && draw_only_enabled();
    if (!fuzz::translate_pica200_case(as(c), fp_, StackMode::Auto, out, err, draw)) return false;
    dropped_serial_ = serial(c);
    // A program the static expansion cannot take keeps the full state.
    draw_contract_ = draw && out.state_vars == kVarTemp;
    dropped_.fill(-1);
    if (!as(c).geometry && pass_through_dropping()) dropped_ = drop_pass_through(out);
    return true;
  }
  // Which warps must trap depends on the reference: the one run_reference
  // made for this case (the driver runs it first), else a new one.
  std::unique_ptr<isa::FuzzOutcome> run_translated(const isa::FuzzCase& c, const isa::TranslatedRun& run) override {
    if (last_serial_ != serial(c) || !last_ref_) {
      last_ref_ = std::make_shared<const fuzz::PicaReference>(fuzz::run_pica200_reference(as(c), fp_));
      last_serial_ = serial(c);
    }
    auto o = std::make_unique<Outcome>();
    o->ref = last_ref_;
    o->run = fuzz::run_pica200_translated(as(c), *last_ref_, run.translation, run.vars_bytes, run.exe);
    o->runs = o->run.runs;
    // The runners' copy of the registers translate() took out of the code
    // (the inputs are read-only, so the copy after the run is the guest's).
    if (dropped_serial_ == serial(c))
      for (pica::VertexState& st : o->run.states)
        for (size_t n = 0; n < dropped_.size(); ++n)
          if (const int m = dropped_[n]; m >= 0) st.o[n] = st.v[size_t(m)];
    // Under the draw contract the code keeps no temporaries, a0, aL or cmp:
    // those the reference ends with stand in for them, so only the
    // o-registers (and faults) are compared.
    if (dropped_serial_ == serial(c) && draw_contract_)
      for (size_t k = 0; k < o->run.states.size() && k < last_ref_->expected.size(); ++k) {
        pica::VertexState& st = o->run.states[k];
        const pica::VertexState& want = last_ref_->expected[k];
        st.r = want.r;
        st.a0x = want.a0x;
        st.a0y = want.a0y;
        st.aL = want.aL;
        st.cmpx = want.cmpx;
        st.cmpy = want.cmpy;
      }
    return o;
  }
  std::string compare(const isa::FuzzCase& c, const isa::FuzzOutcome& ref, const isa::FuzzOutcome& got) override {
    // An engine the driver could not make has a bare FuzzOutcome with the
    // error: it failed on the first warp.
    const Outcome* g = dynamic_cast<const Outcome*>(&got);
    if (!g) return "warp at vertex 0: " + got.error;
    return fuzz::compare_pica200(as(c), *static_cast<const Outcome&>(ref).ref, g->run);
  }
  bool reproducer_per_engine() const override { return true; }
  std::string reproducer_stem(uint64_t seed, const isa::FuzzCase& c, const std::string& engine) const override {
    return base_name(seed, c.index) + "-" + engine;
  }
  // Named after the program (no engine); the description says how to get it again.
  std::string reproducer(const isa::FuzzCase& c, const isa::FuzzOutcome& ref, const isa::ReproducerInfo& info) override {
    const std::string note = "gpurc fuzz --isa pica200" + (variant_.empty() ? "" : " --variant " + variant_) +
                             " --seed " + std::to_string(seed_) + ", iteration " + std::to_string(c.index) +
                             ", engine " + info.engine + (c.index % 2 == 1 && !as(c).geometry ? " (draw contract: o-registers compared)" : "") +
                             ": " + info.what;
    return fuzz::pica200_replay_json(as(c), *static_cast<const Outcome&>(ref).ref, base_name(seed_, c.index), note) +
           "\n";
  }

 private:
  static const fuzz::PicaCase& as(const isa::FuzzCase& c) { return static_cast<const Case&>(c).c; }
  static uint64_t serial(const isa::FuzzCase& c) { return static_cast<const Case&>(c).serial; }
  static std::string base_name(uint64_t seed, uint64_t index) {
    return "pica200-s" + std::to_string(seed) + "-i" + std::to_string(index);
  }

  uint64_t seed_;
  std::string variant_;
  fp::Options fp_;
  uint64_t progress_ = 0;
  uint64_t serials_ = 0, last_serial_ = 0;
  std::shared_ptr<const fuzz::PicaReference> last_ref_;
  uint64_t dropped_serial_ = 0;        // the case translate() last took registers out of
  std::array<int8_t, 16> dropped_{};  // drop_pass_through's answer for it
  bool draw_contract_ = false;         // it was translated under the draw contract
};

}  // namespace

// Variants (pica::fp::Options): "default", "max-inf-quirk" (max(a, b) is b
// when b is infinite), "f24" (registers hold float24).
std::unique_ptr<isa::FuzzSession> make_fuzz_session(const fuzz::IsaFuzzOptions& opt, std::string& err) {
  fp::Options fp;
  if (opt.variant == "max-inf-quirk") {
    fp.max_inf_quirk = true;
  } else if (opt.variant == "f24") {
    fp.f24 = true;
  } else if (!opt.variant.empty() && opt.variant != "default") {
    err = "pica200 has no variant " + opt.variant + " (default, max-inf-quirk, f24)";
    return nullptr;
  }
  return std::make_unique<Session>(opt.seed, opt.variant, fp);
}

}  // namespace gpurc::pica
