// `gpurc fuzz --isa tesla`: random valid Tesla programs (fuzz/tesla_gen.cpp)
// on the reference BlockInterpreter against their IR translation on the IR
// interpreter and every JIT tier (fuzz/tesla_run.cpp), bit for bit.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <unordered_map>

#include "frontend/tesla/translate.h"
#include "fuzz/isa_fuzz.h"
#include "fuzz/tesla_fuzz.h"
#include "fuzz/tesla_run.h"

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

IsaFuzzReport run_tesla_fuzz(const IsaFuzzOptions& opt) {
  IsaFuzzReport rep;
  Target target;
  std::string err;
  if (!parse_target(opt.variant, target, err)) {
    rep.error = err;
    return rep;
  }
  std::vector<std::string> jit = opt.engines.empty() ? host_jit_engines() : opt.engines;
  for (auto& e : jit) e = jit_engine_name(e);  // the registry name of an alias
  const std::vector<std::string> host = host_jit_engines();
  for (const auto& e : jit)
    if (std::find(host.begin(), host.end(), e) == host.end()) {
      rep.error = "engine " + e + " is not available on this host";
      return rep;
    }
  rep.engines.push_back("ir-interp");
  for (auto& e : jit) rep.engines.push_back(e);

  SupportProbe probe(target);
  TeslaGenOptions gopt;
  gopt.accept = [&](const Insn& in) { return probe(in); };
  TeslaGenStats stats;
  uint64_t saved = 0;

  uint64_t minimized = 0;
  auto save = [&](const TeslaProgram& p, const std::string& name, const std::string& what) {
    std::error_code ec;
    std::filesystem::create_directories(opt.out_dir, ec);
    std::string path = (std::filesystem::path(opt.out_dir) / (name + ".json")).string();
    std::ofstream f(path);
    f << tesla_replay_json(p, name, what) << "\n";
    return f ? path : std::string();
  };
  // `kind`: "" for an iteration's ordinary program, "bar" for its barrier program.
  auto mismatch = [&](uint64_t i, const std::string& kind, const std::string& engine, const std::string& what,
                      const TeslaProgram& p) {
    IsaFuzzMismatch m;
    m.iteration = i;
    m.engine = engine;
    m.what = kind.empty() ? what : "barrier program: " + what;
    if (opt.save_reproducers && saved < opt.max_saved) {
      std::string name = "tesla-s" + std::to_string(opt.seed) + "-i" + std::to_string(i) +
                         (kind.empty() ? "" : "-" + kind) + "-" + engine;
      m.reproducer = save(p, name, "gpurc fuzz --isa tesla: engine " + engine + ": " + what);
      if (!m.reproducer.empty()) ++saved;
      // A shrunk copy of the first few: what a translator owner wants to read.
      if (engine != "interp" && minimized < kTeslaMaxMinimized) {
        ++minimized;
        TeslaProgram q = p;
        if (minimize_tesla(q, engine) > 0) save(q, name + "-min", "gpurc fuzz --isa tesla (minimised): engine " + engine + ": " + what);
      }
    }
    rep.mismatches.push_back(m);
  };

  // Runs one program on the reference and every engine; false when the
  // campaign must stop (generator error).
  auto check_program = [&](uint64_t i, const std::string& kind, uint64_t program_seed,
                           const TeslaGenOptions& g) {
    TeslaProgram p;
    try {
      p = generate_tesla(program_seed, target, g, &stats);
    } catch (const std::exception& e) {
      rep.error = "generator (iteration " + std::to_string(i) + (kind.empty() ? "" : ", " + kind) + "): " + e.what();
      return false;
    }
    ++rep.programs;
    TeslaOutcome ref = run_tesla_reference(p);
    // The generator only makes programs the reference can run: anything but
    // an access fault, or a deadlock of a barrier program (tesla_gen.h: a
    // random mix of counts can leave every warp waiting; the engines must
    // report it too), is a generator (or interpreter) problem.
    bool deadlock = g.barrier_shape && ref.fault == "stack" && ref.fault_message.rfind("deadlock", 0) == 0;
    if (!ref.fault.empty() && ref.fault != "out-of-bounds" && !deadlock) {
      mismatch(i, kind, "interp", "reference fault " + ref.fault + ": " + ref.fault_message, p);
      return true;
    }
    TeslaTranslation tr = translate_tesla(p);
    if (!tr.error.empty()) {
      mismatch(i, kind, "translate", tr.error, p);
      return true;
    }
    for (const auto& e : rep.engines) {
      TeslaOutcome got = run_tesla_engine(e, tr, p);
      ++rep.runs;
      std::string d = compare_tesla(p, ref, got);
      if (!d.empty()) mismatch(i, kind, e, d, p);
    }
    return true;
  };
  TeslaGenOptions barrier_gopt = gopt;
  barrier_gopt.barrier_shape = true;
  for (uint64_t i = opt.first; i < opt.first + opt.iterations; ++i) {
    if (!check_program(i, "", tesla_program_seed(opt.seed, i), gopt)) break;
    // Barrier programs (compute programs only) come in addition
    // (tesla_gen.h), so the ordinary program of every iteration is the one
    // earlier campaigns ran.
    if (target.ptype == kCP && tesla_barrier_program_at(opt.seed, i) &&
        !check_program(i, "bar", tesla_barrier_program_seed(opt.seed, i), barrier_gopt))
      break;
    if (opt.progress && rep.programs % 50 == 0) opt.progress(rep.programs, rep.mismatches.size());
  }
  if (opt.progress) opt.progress(rep.programs, rep.mismatches.size());

  uint64_t placed = 0;
  for (auto& [op, n] : stats.generated) placed += n;
  rep.notes.push_back("tesla: " + std::to_string(placed) + " instructions placed over " +
                      std::to_string(stats.generated.size()) + " kinds");
  for (auto& [what, r] : probe.refused())
    rep.notes.push_back("skipped " + std::to_string(r.first) + " candidates the translator refuses: " + what +
                        ", e.g. " + r.second);
  return rep;
}

}  // namespace gpurc::fuzz
