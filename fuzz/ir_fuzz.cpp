#include "fuzz/ir_fuzz.h"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "engines/registry.h"

#ifdef __unix__
#include <csignal>
#include <cerrno>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

#include "fuzz/ir_gen.h"

namespace gpurc::fuzz {

using namespace ir;
using json = nlohmann::json;

namespace {

std::string hex(uint64_t v, unsigned digits) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%0*" PRIx64, int(digits), v);
  return buf;
}
std::string hex_bytes(const std::vector<uint8_t>& b) {
  static const char* d = "0123456789abcdef";
  std::string s;
  s.reserve(b.size() * 2);
  for (uint8_t x : b) {
    s += d[x >> 4];
    s += d[x & 15];
  }
  return s;
}
bool parse_hex_bytes(const std::string& s, std::vector<uint8_t>& out) {
  out.clear();
  int hi = -1;
  for (char c : s) {
    int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (v < 0) {
      if (c == ' ' || c == '\n' || c == '\t') continue;
      return false;
    }
    if (hi < 0) hi = v;
    else out.push_back(uint8_t(hi << 4 | v)), hi = -1;
  }
  return hi < 0;
}
// The replay-format element type of a var's lanes: elements are lane-sized
// (4 bytes for i1..i32 and f16, 8 for i64 and f64), as `gpurc replay` wants.
const char* elem_name(Type t) {
  switch (t) {
    case Type::F32: return "f32";
    case Type::I64: return "u64";
    case Type::F64: return "f64";
    default: return "u32";
  }
}
// A lane value: a hex bit pattern string or a JSON number (floats converted
// to their bits; f16 only as hex).
bool lane_bits(const json& v, Type t, uint64_t& out) {
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (s.size() < 3 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X')) return false;
    try {
      size_t used = 0;
      out = std::stoull(s.substr(2), &used, 16);
      if (used != s.size() - 2) return false;
    } catch (...) {
      return false;
    }
  } else if (v.is_number_integer() && !is_float(t)) {
    out = v.is_number_unsigned() ? v.get<uint64_t>() : uint64_t(v.get<int64_t>());
  } else if (v.is_number() && (t == Type::F32 || t == Type::F64)) {
    if (t == Type::F32) {
      float f = v.get<float>();
      uint32_t b;
      std::memcpy(&b, &f, 4);
      out = b;
    } else {
      double d = v.get<double>();
      std::memcpy(&out, &d, 8);
    }
  } else {
    return false;
  }
  out &= type_mask(t);
  return true;
}

}  // namespace

uint64_t ir_program_seed(uint64_t seed, uint64_t iteration) {
  Rng r(seed * 0x9E3779B97F4A7C15ull + iteration);
  return r.next();
}

// ---- reproducers

bool save_ir_reproducer(const std::string& path, const IrReproducer& r, std::string* error) {
  const Function& f = r.function;
  json doc;
  doc["gpurc"] = 1;
  doc["isa"] = "ir";
  doc["name"] = f.name;
  doc["program"] = {{"asm", print(f)}};  // isa ir: the "assembly" is IR text
  // gpurc replay runs lanes 0..n-1 of a block of n threads: exact for
  // prefix masks; any other mask is only honoured by load_ir_reproducer.
  const uint32_t em = r.state.entry_mask;
  const bool prefix = (em & (em + 1)) == 0;
  const unsigned threads = prefix ? unsigned(__builtin_popcount(em)) : kWarpLanes;
  doc["launch"] = {{"grid", {1, 1, 1}}, {"block", {threads, 1, 1}}, {"budget", kFuzzBudget}};
  json vars = json::object();
  for (uint32_t v = 0; v < f.vars.size(); ++v) {
    Type t = f.vars[v].type;
    json lanes = json::array();
    for (int l = 0; l < kWarpLanes; ++l) {  // all 32: lanes outside the mask keep theirs
      uint64_t bits = 0;
      std::memcpy(&bits, r.state.vars.data() + f.var_offset(v) + l * lane_bytes(t), lane_bytes(t));
      lanes.push_back(hex(bits, lane_bytes(t) * 2));
    }
    vars[f.vars[v].name] = {{elem_name(t), lanes}};
  }
  doc["state"] = {{"vars", vars}, {"uniforms", {{"bytes", hex_bytes(r.state.uniforms)}}}};
  doc["memory"] = json::array({{{"name", "global"},
                                {"space", "global"},
                                {"address", hex(kGlobalBase, 1)},
                                {"size", kGlobalSize},
                                {"init", {{"hex", hex_bytes(r.state.memory)}}}}});
  doc["description"] = {{"tool", "gpurc fuzz --ir"},
                        {"engine", r.engine},
                        {"what", r.what},
                        {"entry_mask", hex(em, 8)},
                        {"note", prefix ? "" : "gpurc replay runs all 32 lanes; the fuzzer ran only entry_mask"}};
  std::error_code ec;
  std::filesystem::path p(path);
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
  std::ofstream out(path);
  out << doc.dump(1) << "\n";
  if (!out) {
    if (error) *error = "cannot write " + path;
    return false;
  }
  return true;
}

bool load_ir_reproducer(const std::string& path, IrReproducer& r, std::string* error) {
  auto fail = [&](const std::string& msg) {
    if (error) *error = path + ": " + msg;
    return false;
  };
  std::ifstream in(path);
  if (!in) return fail("cannot open");
  json doc = json::parse(in, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return fail("not a JSON object");
  if (doc.value("isa", "") != "ir") return fail("\"isa\" is not \"ir\"");
  if (!doc.contains("program") || !doc["program"].is_object() || !doc["program"].contains("asm") ||
      !doc["program"]["asm"].is_string())
    return fail("program.asm (the IR text) is missing");
  std::string perr;
  r.function = Function();
  if (!parse(doc["program"]["asm"].get<std::string>(), r.function, perr)) return fail("program.asm: " + perr);
  std::string verr = verify(r.function);
  if (!verr.empty()) return fail("program.asm does not verify: " + verr);
  const Function& f = r.function;
  r.state = IrState();
  const json desc = doc.value("description", json::object());
  uint64_t mask = 0xffffffffu;
  if (desc.is_object() && desc.contains("entry_mask")) {
    if (!lane_bits(desc["entry_mask"], Type::I32, mask) || mask == 0)
      return fail("description.entry_mask: expected a non-zero hex string or integer");
  } else if (doc.contains("launch") && doc["launch"].contains("block")) {
    const json& b = doc["launch"]["block"];
    uint64_t n = b.is_array() && !b.empty() && b[0].is_number_unsigned() ? b[0].get<uint64_t>() : 0;
    if (n == 0 || n > uint64_t(kWarpLanes) || (b.is_array() && b.size() > 1 && b[1] != 1))
      return fail("launch.block: the IR fuzzer's reproducers are one warp of 1..32 threads in x");
    mask = n == 32 ? 0xffffffffu : (1u << n) - 1;
  }
  r.state.entry_mask = uint32_t(mask);
  r.state.vars.assign(f.vars_bytes(), 0);
  const json state = doc.value("state", json::object());
  const json vars = state.value("vars", json::object());
  for (auto it = vars.begin(); it != vars.end(); ++it) {
    uint32_t v = 0;
    while (v < f.vars.size() && f.vars[v].name != it.key()) ++v;
    if (v == f.vars.size()) return fail("state.vars." + it.key() + ": no such var in the program");
    Type t = f.vars[v].type;
    if (!it.value().is_object() || it.value().size() != 1 || !it.value().begin().value().is_array())
      return fail("state.vars." + it.key() + ": expected {\"<type>\": [32 lane values]}");
    const json& lanes = it.value().begin().value();
    if (lanes.size() > size_t(kWarpLanes)) return fail("state.vars." + it.key() + ": more than 32 lanes");
    for (size_t l = 0; l < lanes.size(); ++l) {
      uint64_t bits;
      if (!lane_bits(lanes[l], t, bits))
        return fail("state.vars." + it.key() + "[" + std::to_string(l) + "]: bad value");
      std::memcpy(r.state.vars.data() + f.var_offset(v) + l * lane_bytes(t), &bits, lane_bytes(t));
    }
  }
  r.state.uniforms.assign(std::max<uint32_t>(f.uniform_bytes, kUniformBytes), 0);
  if (state.contains("uniforms")) {
    std::vector<uint8_t> u;
    const json& uj = state["uniforms"];
    if (!uj.is_object() || uj.size() != 1 || !uj.begin().value().is_string() ||
        (uj.begin().key() != "bytes" && uj.begin().key() != "hex") ||
        !parse_hex_bytes(uj.begin().value().get<std::string>(), u))
      return fail("state.uniforms: expected {\"bytes\": \"<hex>\"}");
    if (u.size() > r.state.uniforms.size()) r.state.uniforms.resize(u.size());
    std::copy(u.begin(), u.end(), r.state.uniforms.begin());
  }
  r.state.memory.assign(kGlobalSize, 0);
  if (doc.contains("memory")) {
    const json& m = doc["memory"];
    if (!m.is_array() || m.size() != 1 || !m[0].is_object())
      return fail("memory: the IR fuzzer's reproducers hold exactly one global buffer");
    uint64_t addr = 0;
    if (!m[0].contains("address") || !lane_bits(m[0]["address"], Type::I64, addr) || addr != kGlobalBase ||
        m[0].value("size", 0u) != kGlobalSize)
      return fail("memory[0]: expected the global buffer at " + hex(kGlobalBase, 1) + ", size " +
                  std::to_string(kGlobalSize));
    std::vector<uint8_t> b;
    if (m[0].contains("init")) {
      if (!m[0]["init"].is_object() || !parse_hex_bytes(m[0]["init"].value("hex", ""), b) || b.size() > kGlobalSize)
        return fail("memory[0].init: expected {\"hex\": \"...\"} of at most the buffer size");
      std::copy(b.begin(), b.end(), r.state.memory.begin());
    }
  }
  r.engine = desc.is_object() ? desc.value("engine", "") : "";
  r.what = desc.is_object() ? desc.value("what", "") : "";
  return true;
}

// ---- running

std::vector<std::string> check_ir_program(const Function& f, const IrState& st,
                                          const std::vector<std::string>& engines) {
  std::vector<std::string> list = engines;
  if (list.empty()) {
    list.push_back("interp-pipeline");
    for (const std::string& e : host_jit_engines()) list.push_back(e);
  }
  IrProgram p = prepare_program(f);
  IrOutcome ref = run_engine("interp", p, st);
  std::vector<std::string> out;
  if (!ref.error.empty()) {
    out.push_back("interp: " + ref.error);
    return out;
  }
  for (const std::string& e : list) {
    std::string d = compare_outcomes(f, ref, run_engine(e, p, st));
    if (!d.empty()) out.push_back(e + ": " + d);
  }
  return out;
}

namespace {

// Every difference between the reference and `engines` on one program, as
// (engine, what). `started` is told each engine's name before it runs (the
// isolating parent uses it to name the engine that crashed).
std::vector<std::pair<std::string, std::string>> compare_program(
    const Function& f, const IrState& st, const std::vector<std::string>& engines,
    const std::function<void(const std::string&)>& started) {
  std::vector<std::pair<std::string, std::string>> out;
  started("interp-pipeline");  // the pipeline is the first step of every engine but the reference
  IrProgram p = prepare_program(f);
  started("interp");
  IrOutcome ref = run_engine("interp", p, st);
  // The reference must run every generated program to its end or to the
  // program's one deliberate fault; anything else is a gap in the interpreter
  // (or the generator) and would make the comparison vacuous.
  if (ref.error.empty() && ref.status == RunStatus::Fault &&
      (ref.fault == FaultKind::Unsupported || ref.fault == FaultKind::Watchdog ||
       ref.fault == FaultKind::Misaligned))
    out.emplace_back("interp", std::string("reference stopped with fault ") + fault_kind_name(ref.fault));
  for (const std::string& e : engines) {
    started(e);
    std::string d = compare_outcomes(f, ref, run_engine(e, p, st));
    if (!d.empty()) out.emplace_back(e, d);
  }
  return out;
}

#ifdef __unix__
// A crashing child is an expected finding: writing a core file for each
// would dominate the campaign's time.
void no_core_dumps() {
  struct rlimit rl = {0, 0};
  ::setrlimit(RLIMIT_CORE, &rl);
}

bool write_all(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n <= 0) return false;
    done += size_t(n);
  }
  return true;
}

// compare_program in a child process. Lines on the pipe: "S<engine>" when an
// engine starts, "D<engine>\t<what>" per difference.
std::vector<std::pair<std::string, std::string>> compare_isolated(const Function& f, const IrState& st,
                                                                  const std::vector<std::string>& engines,
                                                                  unsigned timeout) {
  int fds[2];
  if (::pipe(fds) != 0) return compare_program(f, st, engines, [](const std::string&) {});
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return compare_program(f, st, engines, [](const std::string&) {});
  }
  if (pid == 0) {
    ::close(fds[0]);
    no_core_dumps();
    ::alarm(timeout);
    auto diffs = compare_program(f, st, engines, [&](const std::string& e) { write_all(fds[1], "S" + e + "\n"); });
    for (auto& [e, w] : diffs) {
      std::string what = w;
      std::replace(what.begin(), what.end(), '\n', ' ');
      write_all(fds[1], "D" + e + "\t" + what + "\n");
    }
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string data;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) != 0;) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    data.append(buf, size_t(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  std::vector<std::pair<std::string, std::string>> out;
  std::string last = "interp";
  std::istringstream lines(data);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    if (line[0] == 'S') last = line.substr(1);
    if (line[0] == 'D') {
      size_t tab = line.find('\t');
      out.emplace_back(line.substr(1, tab - 1), tab == std::string::npos ? "" : line.substr(tab + 1));
    }
  }
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    out.emplace_back(last, sig == SIGALRM ? "timeout: no result after " + std::to_string(timeout) + " s"
                                          : "crash: signal " + std::to_string(sig) + " (" + strsignal(sig) + ")");
  } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    out.emplace_back(last, "crash: the engine ended the process (exit status " +
                               std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")");
  }
  return out;
}

// Minimises in a child too: a candidate program may crash an engine.
void minimize_isolated(const std::string& path, const IrReproducer& full, unsigned timeout) {
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid == 0) {
    no_core_dumps();
    ::alarm(timeout * 2);
    IrReproducer r = full;
    r.function = minimize_ir(full.function, full.state, full.engine);
    IrProgram mp = prepare_program(r.function);
    r.what = compare_outcomes(r.function, run_engine("interp", mp, r.state), run_engine(r.engine, mp, r.state));
    ::_exit(save_ir_reproducer(path, r, nullptr) ? 0 : 1);
  }
  int status = 0;
  if (pid > 0)
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
}
#endif

bool is_crash(const std::string& what) { return what.rfind("crash:", 0) == 0 || what.rfind("timeout:", 0) == 0; }

}  // namespace

IrFuzzReport run_ir_fuzz(const IrFuzzOptions& opt) {
  IrFuzzReport rep;
  rep.engines.push_back("interp-pipeline");
  std::vector<std::string> host = host_jit_engines();
  if (opt.engines.empty()) {
    for (const std::string& e : host) rep.engines.push_back(e);
  } else {
    for (const std::string& name : opt.engines) {
      if (name == "interp-pipeline") continue;
      const std::string e = jit_engine_name(name);
      if (e.empty()) {
        rep.error = "unknown engine '" + name + "' (expected a JIT tier: " + engine_names() + ")";
        return rep;
      }
      if (std::find(host.begin(), host.end(), e) == host.end()) {
        rep.error = "engine '" + e + "' is not available on this host";
        return rep;
      }
      rep.engines.push_back(e);
    }
  }
#ifndef __unix__
  if (opt.isolate) {
    rep.error = "isolate needs fork(): not available on this host";
    return rep;
  }
#endif
  using clock = std::chrono::steady_clock;
  auto last_progress = clock::now();
  uint64_t minimized = 0, saved_count = 0;
  IrGenOptions gen;
  for (uint64_t it = 0; it < opt.iterations; ++it) {
    if (!opt.shard.owns(it)) continue;  // programs depend on (seed, it) only
    const uint64_t pseed = ir_program_seed(opt.seed, it);
    std::string gerr;
    Function f = generate_ir(pseed, gen, &gerr);
    if (!gerr.empty()) {
      rep.error = gerr + " (iteration " + std::to_string(it) + ")";
      return rep;
    }
    Rng srng(pseed ^ 0x5DEECE66Dull);
    IrState st = random_state(f, srng);
    std::vector<std::pair<std::string, std::string>> diffs;
#ifdef __unix__
    if (opt.isolate) diffs = compare_isolated(f, st, rep.engines, opt.timeout_seconds);
    else
#endif
      diffs = compare_program(f, st, rep.engines, [](const std::string&) {});
    ++rep.programs;
    rep.runs += rep.engines.size();
    // One reproducer per program (the state is the same for every engine),
    // named after the first engine that differs; one minimised copy.
    std::string saved, shrunk;
    bool tried_shrink = false;
    for (auto& [engine, what] : diffs) {
      IrFuzzMismatch m;
      m.iteration = it;
      m.engine = engine;
      m.what = what;
      if (opt.save_reproducers && saved.empty() && saved_count < opt.max_saved) {
        std::string path = opt.out_dir + "/ir-s" + std::to_string(opt.seed) + "-i" + std::to_string(it) + "-" + engine + ".json";
        std::string err;
        if (save_ir_reproducer(path, IrReproducer{f, st, engine, what}, &err)) {
          saved = path;
          ++saved_count;
        } else {
          m.what += " (reproducer not saved: " + err + ")";
        }
      }
      const bool can_shrink = engine != "interp" && what.rfind("reference failed", 0) != 0 && !is_crash(what);
      if (!saved.empty() && !tried_shrink && can_shrink && opt.minimize && minimized < opt.max_minimized) {
        tried_shrink = true;
        ++minimized;
        std::string path = saved.substr(0, saved.size() - 5) + "-min-" + engine + ".json";
        IrReproducer r{f, st, engine, what};
#ifdef __unix__
        if (opt.isolate) {
          minimize_isolated(path, r, opt.timeout_seconds);
          if (std::filesystem::exists(path)) shrunk = path;
        } else
#endif
        {
          r.function = minimize_ir(f, st, engine);
          IrProgram mp = prepare_program(r.function);
          r.what = compare_outcomes(r.function, run_engine("interp", mp, st), run_engine(engine, mp, st));
          if (save_ir_reproducer(path, r, nullptr)) shrunk = path;
        }
        m.reproducer = shrunk;
      }
      if (m.reproducer.empty()) m.reproducer = saved;
      rep.mismatches.push_back(std::move(m));
    }
    if (opt.progress && clock::now() - last_progress >= std::chrono::milliseconds(100)) {
      last_progress = clock::now();
      opt.progress(rep.programs, rep.mismatches.size());
    }
  }
  if (opt.progress) opt.progress(rep.programs, rep.mismatches.size());
  return rep;
}

}  // namespace gpurc::fuzz
