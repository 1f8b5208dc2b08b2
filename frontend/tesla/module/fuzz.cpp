// `gpurc fuzz --isa tesla`: random valid Tesla programs (fuzz_gen.cpp) on the
// reference interpreter against their IR translation on the IR interpreter
// and every JIT tier (fuzz_run.cpp), bit for bit: the ISA's half of the
// campaign (isa::FuzzSession), run by fuzz/isa_fuzz.cpp's driver; and the
// reproducers (replay files).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <unordered_map>

#include "frontend/tesla/module/fuzz.h"
#include "frontend/tesla/module/fuzz_run.h"
#include "frontend/tesla/module/module.h"
#include "frontend/tesla/translate.h"
#include "isa/fuzz.h"

namespace gpurc::fuzz {

using namespace tesla;

namespace {

std::string hex32(uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%08x", v);
  return b;
}

std::string hex_bytes(const std::vector<uint8_t>& v) {
  static const char* d = "0123456789abcdef";
  std::string s;
  s.reserve(v.size() * 2);
  for (uint8_t b : v) s += d[b >> 4], s += d[b & 15];
  return s;
}

// g<bank>[0] as a replay address (bank << 32).
std::string hex_address(int bank) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%x00000000", unsigned(bank));
  return b;
}

bool assemble_lines(const std::vector<std::string>& lines, const Target& t, std::vector<uint32_t>& words,
                    std::string& err) {
  for (const auto& l : lines) {
    uint64_t bits;
    unsigned n;
    if (!assemble_one(l, t, bits, n, err)) return false;
    if (n == 2 && (words.size() & 1)) {
      uint64_t pad;
      unsigned pn;
      if (!assemble_one("mov b32 $r30 $r30", t, pad, pn, err)) return false;
      words.push_back(uint32_t(pad));
    }
    words.push_back(uint32_t(bits));
    if (n == 2) words.push_back(uint32_t(bits >> 32));
  }
  return true;
}

}  // namespace

bool tesla_replay_prologue(const TeslaProgram& p, std::vector<uint32_t>& words, uint32_t& entry,
                           std::vector<uint8_t>& init, std::string& err) {
  words = p.words;
  if (words.size() & 1) {
    uint64_t pad;
    unsigned pn;
    if (!assemble_one("mov b32 $r30 $r30", p.target, pad, pn, err)) return false;
    words.push_back(uint32_t(pad));
  }
  entry = uint32_t(words.size());
  std::vector<std::string> l;
  auto r = [](int n) { return "$r" + std::to_string(n); };
  auto hx = [](unsigned v) {
    char b[16];
    std::snprintf(b, sizeof b, "0x%x", v);
    return std::string(b);
  };
  // s[]: every lane copies the whole image from g14[] (the same word to the
  // same address, so lane order does not matter). With several warps (a
  // barrier program) only warp 0 stores: it runs first and copies before
  // any program code runs, and a later warp's copy would overwrite what
  // warp 0's program part already stored. (A barrier here instead would
  // change the order in which the warps start the program.)
  const bool several_warps = p.threads.size() > 32;
  if (several_warps) {
    l.push_back("shr u32 $r5 $r0 0x5");
    l.push_back("and b32 $c1 $r5 $r5 $r5");  // Z: warp 0 ($r0 = tid.x in a 1-D block)
  }
  l.push_back("mov b32 $r2 0x0");
  l.push_back("mov b32 $r3 " + hx(uint32_t(p.shared.size() / 4)));
  l.push_back("mov b32 $r4 0xffffffff");
  l.push_back("mov b32 $r30 $r30");
  l.push_back("mov b32 $r30 $r30");  // two pads: the loop starts at an even word
  if (!assemble_lines(l, p.target, words, err)) return false;
  if (words.size() & 1) words.pop_back();
  uint32_t copy = uint32_t(words.size());
  l.clear();
  l.push_back("ld b32 $r1 g" + std::to_string(kTeslaReproSharedBank) + "[$r2]");
  l.push_back("shl $a1 $r2 0x0");
  l.push_back(several_warps ? "(e $c1) st b32 s[$a1+0x0] $r1" : "st b32 s[$a1+0x0] $r1");
  l.push_back("add b32 $r2 $r2 0x4");
  l.push_back("add b32 $c0 $r3 $r3 $r4");
  l.push_back("(g $c0) bra " + hx(copy * 4));
  // $r0 = tid.x (1-D block, launch ABI); $r31 = this thread's record.
  l.push_back("shl b32 $r31 $r0 " + hx(8));
  // $a7 (one register per warp) starts at 0 in generated programs, as at launch.
  for (int a : {1, 2, 3, 4}) {
    l.push_back("add b32 $r30 $r31 " + hx(kTeslaReproA + 4 * a));
    l.push_back("ld b32 $r1 g" + std::to_string(kTeslaReproInitBank) + "[$r30]");
    l.push_back("shl $a" + std::to_string(a) + " $r1 0x0");
  }
  for (int c = 0; c < 4; ++c) {
    l.push_back("add b32 $r30 $r31 " + hx(kTeslaReproC + 4 * c));
    l.push_back("ld b32 $r1 g" + std::to_string(kTeslaReproInitBank) + "[$r30]");
    l.push_back("mov $c" + std::to_string(c) + " $r1");
  }
  for (int k = 0; k < 30; ++k) {
    l.push_back("add b32 $r30 $r31 " + hx(4 * k));
    l.push_back("ld b32 " + r(k) + " g" + std::to_string(kTeslaReproInitBank) + "[$r30]");
  }
  l.push_back("add b32 $r30 $r31 " + hx(4 * 30));
  l.push_back("ld b32 $r30 g" + std::to_string(kTeslaReproInitBank) + "[$r30]");
  l.push_back("add b32 $r31 $r31 " + hx(4 * 31));
  l.push_back("ld b32 $r31 g" + std::to_string(kTeslaReproInitBank) + "[$r31]");
  l.push_back("bra 0x0");
  if (!assemble_lines(l, p.target, words, err)) return false;
  init.assign(p.threads.size() * kTeslaReproStride, 0);
  for (size_t t = 0; t < p.threads.size(); ++t) {
    uint8_t* rec = init.data() + t * kTeslaReproStride;
    for (int k = 0; k < 32; ++k) std::memcpy(rec + 4 * k, &p.threads[t].r[k], 4);
    for (int a = 0; a < 8; ++a) {
      uint32_t v = p.threads[t].a[a];
      std::memcpy(rec + kTeslaReproA + 4 * a, &v, 4);
    }
    for (int c = 0; c < 4; ++c) {
      uint32_t v = p.threads[t].c[c];
      std::memcpy(rec + kTeslaReproC + 4 * c, &v, 4);
    }
  }
  return true;
}

std::string tesla_replay_json(const TeslaProgram& p, const std::string& name, const std::string& description) {
  using nlohmann::json;
  std::vector<uint32_t> words;
  uint32_t entry = 0;
  std::vector<uint8_t> init;
  std::string err;
  json doc;
  doc["gpurc"] = 1;
  doc["isa"] = "tesla";
  doc["variant"] = p.target.variant;
  doc["name"] = name;
  doc["description"] = description;
  if (!tesla_replay_prologue(p, words, entry, init, err)) {
    doc["error"] = "prologue: " + err;
    return doc.dump(1);
  }
  json w = json::array();
  for (uint32_t x : words) w.push_back(hex32(x));
  doc["program"] = {{"words", w}, {"entry", entry}};
  doc["listing"] = p.listing;
  doc["program"]["regs"] = p.cfg.regs;
  doc["program"]["lmem"] = p.cfg.lmem;
  doc["launch"] = {{"grid", {1, 1, 1}}, {"block", {p.threads.size(), 1, 1}}, {"shared_bytes", p.shared.size()}};
  json consts = json::object();
  for (int c = 0; c < 16; ++c)
    if (!p.mem.cbuf[c].empty()) consts["c" + std::to_string(c)] = {{"hex", hex_bytes(p.mem.cbuf[c])}};
  doc["state"] = {{"const", consts}};
  if (p.target.ptype == kVP || p.target.ptype == kGP) {  // a[] of every thread (attr_bytes each)
    doc["variant"] = p.target.variant + (p.target.ptype == kVP ? ":vp" : ":gp");
    doc["program"]["attr_bytes"] = p.cfg.attr_bytes;
    if (!p.cfg.attr_in.empty()) doc["inputs"] = {{"a", {{"hex", hex_bytes(p.cfg.attr_in)}}}};
  }
  json mem = json::array();
  for (int g = 0; g < 16; ++g)
    if (!p.mem.global[g].empty())
      mem.push_back({{"name", "g" + std::to_string(g)},
                     {"space", "global"},
                     {"address", hex_address(g)},
                     {"size", p.mem.global[g].size()},
                     {"init", {{"hex", hex_bytes(p.mem.global[g])}}}});
  mem.push_back({{"name", "init"},
                 {"space", "global"},
                 {"address", hex_address(kTeslaReproInitBank)},
                 {"size", init.size()},
                 {"init", {{"hex", hex_bytes(init)}}}});
  mem.push_back({{"name", "shared image"},
                 {"space", "global"},
                 {"address", hex_address(kTeslaReproSharedBank)},
                 {"size", p.shared.size()},
                 {"init", {{"hex", hex_bytes(p.shared)}}}});
  doc["memory"] = mem;
  return doc.dump(1);
}

namespace {

// Unsupported-instruction probe: the candidate alone (then exit) through the
// translator. Memoised per encoding.
class SupportProbe {
 public:
  explicit SupportProbe(const Target& t) : t_(t) {
    std::string err;
    unsigned n;
    if (!assemble_one("mov b32 $r30 $r30", t, pad_, n, err) || !assemble_one("exit nop", t, exit_, n, err))
      throw std::logic_error("tesla fuzz: probe templates: " + err);
  }
  bool operator()(const Insn& in) {
    auto it = cache_.find(in.bits);
    if (it == cache_.end()) it = cache_.emplace(in.bits, probe(in)).first;
    if (!it->second.empty()) {
      // Group by the translator's reason: "Cvt (64-bit integer sources)".
      const std::string& e = it->second;
      size_t open = e.find(" ("), close = e.find(')', open == std::string::npos ? 0 : open);
      std::string reason = open != std::string::npos && close != std::string::npos ? e.substr(open, close - open + 1) : "";
      auto& slot = refused_[std::string(op_name(in.op)) + reason];
      if (slot.first++ == 0) slot.second = e;
    }
    return it->second.empty();
  }
  // "op (reason)" -> (candidates refused, first message).
  const std::map<std::string, std::pair<uint64_t, std::string>>& refused() const { return refused_; }

 private:
  std::string probe(const Insn& in) {
    std::vector<uint32_t> code{uint32_t(in.bits)};
    if (in.words == 2) code.push_back(uint32_t(in.bits >> 32));
    else code.push_back(uint32_t(pad_));
    code.push_back(uint32_t(exit_));
    code.push_back(uint32_t(exit_ >> 32));
    BlockConfig cfg;
    cfg.regs = kTeslaRegs;
    cfg.smem = kTeslaSharedBytes;
    cfg.lmem = kTeslaLocalBytes;
    TranslateOptions opt = options_for(cfg, t_);
    opt.launch_abi = false;
    ir::Function f;
    std::string err;
    if (!translate(code, opt, f, err) && err.empty()) err = "translate failed";
    return err;
  }

  Target t_;
  uint64_t pad_ = 0, exit_ = 0;
  std::unordered_map<uint64_t, std::string> cache_;
  std::map<std::string, std::pair<uint64_t, std::string>> refused_;
};

}  // namespace

bool tesla_fuzz_program(const std::string& variant, uint64_t seed, uint64_t iteration, TeslaProgram& out,
                        std::string& err) {
  Target target;
  if (!parse_target(variant, target, err)) return false;
  SupportProbe probe(target);
  TeslaGenOptions gopt;
  gopt.accept = [&](const Insn& in) { return probe(in); };
  try {
    out = generate_tesla(tesla_program_seed(seed, iteration), target, gopt);
  } catch (const std::exception& e) {
    err = e.what();
    return false;
  }
  return true;
}

namespace {

struct Case final : isa::FuzzCase {
  TeslaProgram p;
};
struct Outcome final : isa::FuzzOutcome {
  TeslaOutcome o;
};

const TeslaProgram& program_of(const isa::FuzzCase& c) { return static_cast<const Case&>(c).p; }
const TeslaOutcome& outcome_of(const isa::FuzzOutcome& o) { return static_cast<const Outcome&>(o).o; }

// The campaign: per iteration, its ordinary program and, for about
// kTeslaBarrierProgramPct percent of them (compute programs only), a barrier
// program (label "bar"), each from a seed of (campaign seed, iteration): a
// campaign may start at any iteration.
class Session final : public isa::FuzzSession {
 public:
  Session(uint64_t seed, const Target& target) : seed_(seed), target_(target), probe_(target) {
    gopt_.accept = [this](const Insn& in) { return probe_(in); };
    barrier_gopt_ = gopt_;
    barrier_gopt_.barrier_shape = true;
  }

  bool generate(uint64_t i, std::vector<std::unique_ptr<isa::FuzzCase>>& out, std::string& err) override {
    auto one = [&](const std::string& label, uint64_t program_seed, const TeslaGenOptions& g) {
      auto c = std::make_unique<Case>();
      c->index = i;
      c->label = label;
      try {
        c->p = generate_tesla(program_seed, target_, g, &stats_);
      } catch (const std::exception& e) {
        err = "generator (iteration " + std::to_string(i) + (label.empty() ? "" : ", " + label) + "): " + e.what();
        return false;
      }
      out.push_back(std::move(c));
      return true;
    };
    // Barrier programs come in addition (fuzz_gen.h), so the ordinary
    // program of every iteration is the one earlier campaigns ran.
    if (!one("", tesla_program_seed(seed_, i), gopt_)) return false;
    if (target_.ptype == kCP && tesla_barrier_program_at(seed_, i) &&
        !one("bar", tesla_barrier_program_seed(seed_, i), barrier_gopt_))
      return false;
    return true;
  }

  std::unique_ptr<isa::FuzzOutcome> run_reference(const isa::FuzzCase& c) override {
    auto o = std::make_unique<Outcome>();
    o->o = run_tesla_reference(program_of(c));
    o->error = o->o.error;
    return o;
  }

  // The generator only makes programs the reference can run: anything but an
  // access fault, or a deadlock of a barrier program (fuzz_gen.h: a random
  // mix of counts can leave every warp waiting; the engines must report it
  // too), is a generator (or interpreter) problem. While minimising, a
  // candidate whose reference faults otherwise (or at all, when the
  // original's did not) shows no difference.
  isa::ReferenceVerdict check_reference(const isa::FuzzCase& c, const isa::FuzzOutcome& ref,
                                        std::string& message) const override {
    const TeslaOutcome& r = outcome_of(ref);
    if (minimizing_) {
      if (!r.fault.empty() && (!ref_may_fault_ || r.fault != "out-of-bounds")) {
        message = "reference fault";
        return isa::ReferenceVerdict::Mismatch;
      }
      return isa::ReferenceVerdict::Compare;
    }
    const bool deadlock = !c.label.empty() && r.fault == "stack" && r.fault_message.rfind("deadlock", 0) == 0;
    if (!r.fault.empty() && r.fault != "out-of-bounds" && !deadlock) {
      message = "reference fault " + r.fault + ": " + r.fault_message;
      return isa::ReferenceVerdict::Mismatch;
    }
    return isa::ReferenceVerdict::Compare;
  }

  bool translate(const isa::FuzzCase& c, ir::Function& out, std::string& err) override {
    TeslaTranslation t = translate_tesla(program_of(c));
    if (!t.error.empty()) {
      err = t.error;
      return false;
    }
    out = std::move(t.f);
    return true;
  }

  std::unique_ptr<isa::FuzzOutcome> run_translated(const isa::FuzzCase& c, const isa::TranslatedRun& run) override {
    auto o = std::make_unique<Outcome>();
    o->o = run_tesla_translated(program_of(c), run.translation, run.vars_bytes, run.exe);
    o->error = o->o.error;
    return o;
  }

  std::string compare(const isa::FuzzCase& c, const isa::FuzzOutcome& ref, const isa::FuzzOutcome& got) override {
    // An engine the driver could not make has a bare FuzzOutcome with the error.
    if (!ref.error.empty()) last_difference_ = "reference failed: " + ref.error;
    else if (!got.error.empty()) last_difference_ = got.error;
    else last_difference_ = compare_tesla(program_of(c), outcome_of(ref), outcome_of(got));
    return last_difference_;
  }

  std::string mismatch_text(const isa::FuzzCase& c, const std::string&, const std::string& what) const override {
    return c.label.empty() ? what : "barrier program: " + what;
  }
  bool reproducer_per_engine() const override { return true; }
  std::string reproducer_stem(uint64_t seed, const isa::FuzzCase& c, const std::string& engine) const override {
    return "tesla-s" + std::to_string(seed) + "-i" + std::to_string(c.index) + (c.label.empty() ? "" : "-" + c.label) +
           "-" + engine;
  }
  std::string reproducer(const isa::FuzzCase& c, const isa::FuzzOutcome&, const isa::ReproducerInfo& info) override {
    const std::string description = std::string("gpurc fuzz --isa tesla") + (info.minimised ? " (minimised)" : "") +
                                    ": engine " + info.engine + ": " + info.what;
    return tesla_replay_json(program_of(c), info.stem, description) + "\n";
  }

  // A shrunk copy of the first few: what a translator owner wants to read.
  unsigned max_minimized() const override { return unsigned(kTeslaMaxMinimized); }
  std::unique_ptr<isa::FuzzCase> minimize(const isa::FuzzCase& c, const std::string& engine,
                                          const std::function<bool(const isa::FuzzCase&)>& still_differs) override {
    TeslaDifference difference = [&](const TeslaProgram& q, bool ref_may_fault) -> std::string {
      if (engine == "translate") {  // the translation alone
        TeslaOutcome ref = run_tesla_reference(q);
        if (!ref.fault.empty() && (!ref_may_fault || ref.fault != "out-of-bounds")) return "";
        return translate_tesla(q).error.empty() ? "" : "translate";
      }
      // The driver reruns reference, translation and engine; compare() keeps the text.
      Case candidate;
      candidate.index = c.index;
      candidate.label = c.label;
      candidate.p = q;
      minimizing_ = true;
      ref_may_fault_ = ref_may_fault;
      last_difference_.clear();
      const bool differs = still_differs(candidate);
      minimizing_ = false;
      return differs ? last_difference_ : "";
    };
    auto m = std::make_unique<Case>();
    m->index = c.index;
    m->label = c.label;
    m->p = program_of(c);
    if (minimize_tesla(m->p, difference) == 0) return nullptr;
    return m;
  }

  std::vector<std::string> notes() const override {
    std::vector<std::string> notes;
    uint64_t placed = 0;
    for (auto& [op, n] : stats_.generated) placed += n;
    notes.push_back("tesla: " + std::to_string(placed) + " instructions placed over " +
                    std::to_string(stats_.generated.size()) + " kinds");
    for (auto& [what, r] : probe_.refused())
      notes.push_back("skipped " + std::to_string(r.first) + " candidates the translator refuses: " + what +
                      ", e.g. " + r.second);
    return notes;
  }

 private:
  uint64_t seed_;
  Target target_;
  SupportProbe probe_;
  TeslaGenOptions gopt_, barrier_gopt_;
  TeslaGenStats stats_;
  std::string last_difference_;
  bool minimizing_ = false, ref_may_fault_ = false;
};

}  // namespace

}  // namespace gpurc::fuzz

namespace gpurc::tesla {

std::unique_ptr<isa::FuzzSession> make_fuzz_session(const fuzz::IsaFuzzOptions& opt, std::string& err) {
  Target target;
  if (!parse_target(opt.variant, target, err)) return nullptr;
  return std::make_unique<fuzz::Session>(opt.seed, target);
}

}  // namespace gpurc::tesla
