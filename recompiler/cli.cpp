#include "recompiler/cli.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "fuzz/ir_fuzz.h"
#include "fuzz/isa_fuzz.h"
#include "ir/ir.h"
#include "ir/passes.h"
#include "ir/verify_policy.h"
#include "recompiler/cli_verbs.h"
#include "recompiler/engine.h"
#include "recompiler/isa.h"
#include "recompiler/replay.h"
#include "runtime/memory.h"

namespace gpurc {

namespace cli {

bool read_input(const std::string& path, std::string& data, std::string& err) {
  std::stringstream ss;
  if (path == "-") {
    ss << std::cin.rdbuf();
  } else {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      err = path + ": cannot open";
      return false;
    }
    ss << in.rdbuf();
  }
  data = ss.str();
  return true;
}

bool parse_hex_text(const std::string& text, unsigned unit, std::vector<uint8_t>& out, std::string& err) {
  out.clear();
  size_t i = 0, n = text.size();
  auto hexval = [](char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
  };
  std::string digits;  // unit 1: all digits concatenated
  while (i < n) {
    char c = text[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',') {
      ++i;
      continue;
    }
    size_t start = i;
    if (c == '0' && i + 1 < n && (text[i + 1] == 'x' || text[i + 1] == 'X')) i += 2;
    std::string tok;
    while (i < n && hexval(text[i]) >= 0) tok += text[i++];
    if (i < n && !(text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r' || text[i] == ',')) {
      err = fmt::format("hex input: '{}' at offset {} is not a hex digit", text[i], i);
      return false;
    }
    if (tok.empty()) {
      err = fmt::format("hex input: empty number at offset {}", start);
      return false;
    }
    if (unit == 4) {
      if (tok.size() > 8) {
        err = fmt::format("hex input: '{}' at offset {} is longer than a 32-bit word", tok, start);
        return false;
      }
      uint32_t w = uint32_t(std::stoul(tok, nullptr, 16));
      for (int b = 0; b < 4; ++b) out.push_back(uint8_t(w >> (8 * b)));
    } else {
      digits += tok;
    }
  }
  if (unit != 4) {
    if (digits.size() % 2) {
      err = "hex input: odd number of hex digits";
      return false;
    }
    for (size_t k = 0; k < digits.size(); k += 2) out.push_back(uint8_t(hexval(digits[k]) << 4 | hexval(digits[k + 1])));
  }
  return true;
}

std::string format_hex_text(const std::vector<uint8_t>& bytes, unsigned unit) {
  std::string s;
  if (unit == 4) {
    for (size_t i = 0; i < bytes.size(); i += 4) {
      uint32_t w = 0;
      for (size_t b = 0; b < 4 && i + b < bytes.size(); ++b) w |= uint32_t(bytes[i + b]) << (8 * b);
      s += fmt::format("0x{:08x}\n", w);
    }
    return s;
  }
  for (size_t i = 0; i < bytes.size(); ++i) s += fmt::format("{:02x}{}", bytes[i], (i % 16 == 15 || i + 1 == bytes.size()) ? "\n" : " ");
  return s;
}

}  // namespace cli

namespace {

std::string isa_list() {
  std::string s;
  for (auto* i : all_isas()) s += (s.empty() ? "" : ", ") + i->name();
  return s;
}

// The names of the registry's modules that `keep` selects, joined by `sep`.
template <class Keep>
std::string module_names(Keep keep, const char* sep = ", ") {
  std::string s;
  for (const isa::IsaModule* m : isa::all_modules())
    if (keep(*m)) s += (s.empty() ? "" : sep) + m->name();
  return s;
}

std::string fuzzable_list() {
  return module_names([](const isa::IsaModule& m) { return m.has_fuzzer(); });
}
std::string resumable_fuzz_list() {
  return module_names([](const isa::IsaModule& m) { return m.has_fuzzer() && m.fuzz_can_start_anywhere(); });
}

const isa::IsaModule* isa_or_error(const std::string& name, std::ostream& err) {
  const isa::IsaModule* isa = find_isa(name);
  if (!isa) err << "error: unknown isa '" << name << "' (one of: " << isa_list() << ")\n";
  return isa;
}

bool check_variant(const isa::IsaModule& isa, const std::string& v, std::ostream& err) {
  if (v.empty() || isa.accepts_variant(v)) return true;
  std::string list;
  for (const auto& x : isa.variants()) list += (list.empty() ? "" : ", ") + x;
  err << "error: isa " << isa.name() << " has no variant '" << v << "' (one of: " << list << ")\n";
  return false;
}

int verb_disasm(const std::string& isa_name, const std::string& variant, bool hex, bool raw, const std::string& file,
                std::ostream& out, std::ostream& err) {
  const isa::IsaModule* isa = isa_or_error(isa_name, err);
  if (!isa || !check_variant(*isa, variant, err)) return 2;
  std::string data, e;
  if (!cli::read_input(file, data, e)) {
    err << "error: " << e << "\n";
    return 2;
  }
  std::vector<uint8_t> code(data.begin(), data.end());
  if (hex && !cli::parse_hex_text(data, isa->hex_unit_bytes(), code, e)) {
    err << "error: " << file << ": " << e << "\n";
    return 2;
  }
  DisasmOptions opt;
  opt.variant = variant;
  opt.raw = raw;
  std::string text;
  if (!isa->disassemble(code, opt, text, e)) {
    err << "error: " << e << "\n";
    return 2;
  }
  out << text;
  if (!text.empty() && text.back() != '\n') out << "\n";
  return 0;
}

int verb_asm(const std::string& isa_name, const std::string& variant, const std::string& output, bool hex,
             bool no_nop, const std::vector<std::string>& files, std::ostream& out, std::ostream& err) {
  const isa::IsaModule* isa = isa_or_error(isa_name, err);
  if (!isa || !check_variant(*isa, variant, err)) return 2;
  std::string text, e;
  // Several sources make one program only for pica200 (picasso's multi-file
  // programs: one DVLP, the DVLEs in order); each starts with `.file NAME`.
  if (files.size() > 1 && isa->name() != "pica200") {
    err << "error: several input files are only supported for isa pica200\n";
    return 2;
  }
  for (const std::string& file : files) {
    std::string one;
    if (!cli::read_input(file, one, e)) {
      err << "error: " << e << "\n";
      return 2;
    }
    if (files.size() > 1) text += ".file \"" + file + "\"\n" + one + "\n";
    else text = one;
  }
  std::vector<uint8_t> code;
  AssembleOptions opt;
  opt.variant = variant;
  opt.padding_nops = !no_nop;
  if (!isa->assemble_with(text, opt, code, e)) {
    err << "error: " << e << "\n";
    return 2;
  }
  if (output.empty()) {
    out << cli::format_hex_text(code, isa->hex_unit_bytes());
    return 0;
  }
  std::ofstream f(output, std::ios::binary);
  if (hex) {
    std::string s = cli::format_hex_text(code, isa->hex_unit_bytes());
    f.write(s.data(), std::streamsize(s.size()));
  } else {
    f.write(reinterpret_cast<const char*>(code.data()), std::streamsize(code.size()));
  }
  if (!f) {
    err << "error: " << output << ": cannot write\n";
    return 2;
  }
  return 0;
}

// Reads an IR function from a .ir text file, or from the program of a
// replay file of isa "ir" (.json).
bool load_ir(const std::string& file, ir::Function& f, std::ostream& err) {
  std::string text, e;
  if (!cli::read_input(file, text, e)) {
    err << "error: " << e << "\n";
    return false;
  }
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '{') {
    try {
      replay::json doc = replay::load_file(file);
      if (doc["isa"] != "ir") {
        err << "error: " << file << ": a replay file of isa " << doc["isa"].get<std::string>()
            << " (only isa ir programs are supported here so far)\n";
        return false;
      }
      text = replay::program_text(doc, std::filesystem::path(file).parent_path());
    } catch (const replay::ReplayError& x) {
      err << "error: " << file << ": " << x.what() << "\n";
      return false;
    }
  }
  if (!ir::parse(text, f, e)) {
    err << "error: " << file << ": " << e << "\n";
    return false;
  }
  if (std::string v = ir::verify(f); !v.empty()) {
    err << "error: " << file << ": invalid IR: " << v << "\n";
    return false;
  }
  return true;
}

int verb_ir(const std::string& file, const std::string& isa, const ir::PassOptions& opt, std::ostream& out,
            std::ostream& err) {
  ir::Function f;
  if (!isa.empty() && isa != "ir") {
    const isa::IsaModule* s = isa_or_error(isa, err);
    if (!s) return 2;
    std::string data, e;
    if (!cli::read_input(file, data, e)) {
      err << "error: " << e << "\n";
      return 2;
    }
    if (!s->translate(std::vector<uint8_t>(data.begin(), data.end()), "", f, e)) {
      err << "error: " << file << ": " << e << "\n";
      return 2;
    }
  } else if (!load_ir(file, f, err)) {
    return 2;
  }
  std::vector<std::pair<std::string, std::string>> dumps;
  out << "== input ==\n" << ir::print(f);
  std::string e = ir::run_pipeline(f, opt, &dumps);
  for (auto& [pass, text] : dumps) out << "\n== " << pass << " ==\n" << text;
  if (!e.empty()) {
    err << "error: " << e << "\n";
    return 2;
  }
  return 0;
}

int verb_host(const std::string& file, const std::string& engine_s, bool perf_map, std::ostream& out,
              std::ostream& err) {
  Engine eng, resolved;
  std::string e;
  if (!parse_engine(engine_s, eng) || eng == Engine::Interp) {
    err << "error: --engine " << engine_s << ": expected " << engine_names() << "\n";
    return 2;
  }
  if (!resolve_engine(eng, resolved, e)) {
    err << "error: " << e << "\n";
    return 2;
  }
  ir::Function f;
  if (!load_ir(file, f, err)) return 2;
  IrCompileOptions opt;
  opt.perf_map = perf_map;
  opt.symbol = "gpurc_" + (f.name.empty() ? std::string("kernel") : f.name);
  std::string listing;
  size_t bytes = 0;
  if (!host_code_listing(f, resolved, opt, listing, bytes, e)) {
    err << "error: " << e << "\n";
    return 2;
  }
  out << "; " << engine_name(resolved) << ", " << bytes << " bytes of host code\n" << listing;
  if (!listing.empty() && listing.back() != '\n') out << "\n";
  return 0;
}

// --engines "jit-avx512,jit-avx2" (or the short aliases "avx512,avx2") ->
// registry names of JIT tiers; false with a message on a bad one.
bool parse_fuzz_engines(const std::string& engines, std::vector<std::string>& out, std::ostream& err) {
  std::stringstream ss(engines);
  for (std::string tok; std::getline(ss, tok, ',');) {
    if (tok.empty()) continue;
    Engine e;
    if (!parse_engine(tok, e) || !e.tier()) {
      err << "error: --engines: unknown JIT tier '" << tok << "' (" << engine_names() << ")\n";
      return false;
    }
    if (!engine_available(e)) {
      err << "error: --engines: this host cannot run " << tok << "\n";
      return false;
    }
    out.push_back(engine_name(e));
  }
  return true;
}

// Runs one fuzz campaign (IR or guest ISA: both reports have the same shape)
// with a progress line on a terminal only, so logs and tests see just the
// summary, then prints that summary. Returns the exit status; `setup_error`
// is the status when the campaign could not start (error and no program).
template <class Options, class Run>
int run_fuzz_campaign(const std::string& label, Options& opt, Run run, int setup_error, cli::FuzzSummary summary,
                      const std::string& json_path, std::ostream& out, std::ostream& err) {
  bool tty = &err == &std::cerr && isatty(STDERR_FILENO);
  auto t0 = std::chrono::steady_clock::now();
  uint64_t total = 0;  // programs of this shard
  for (uint64_t i = summary.first; i < summary.first + opt.iterations; ++i) total += summary.shard.owns(i);
  if (tty)
    opt.progress = [&](uint64_t done, uint64_t mism) {
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      err << fmt::format("\r{} / {} programs, {:.0f} programs/s, {} mismatches   ", done, total,
                         s > 0 ? double(done) / s : 0.0, mism)
          << std::flush;
    };
  auto r = run(opt);
  if (tty) err << "\n";
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::string engs;
  for (auto& e : r.engines) engs += (engs.empty() ? "" : ",") + e;
  out << fmt::format("fuzz {}: {} programs, {} runs compared on [{}], {:.1f} s, {} mismatches\n", label, r.programs,
                     r.runs, engs, s, r.mismatches.size());
  for (const auto& m : r.mismatches)
    out << fmt::format("  iteration {} engine {}: {}{}\n", m.iteration, m.engine, m.what,
                       m.reproducer.empty() ? "" : " (reproducer: " + m.reproducer + ")");
  if constexpr (requires { r.notes; })
    for (const auto& n : r.notes) out << "  note: " << n << "\n";
  if (!json_path.empty()) {
    summary.engines = r.engines;
    summary.programs = r.programs;
    summary.runs = r.runs;
    for (const auto& m : r.mismatches) summary.mismatches.push_back({m.iteration, m.engine, m.what, m.reproducer});
    if constexpr (requires { r.notes; }) summary.notes = r.notes;
    summary.error = r.error;
    summary.seconds = s;
    summary.peak_rss_kib = cli::peak_rss_kib();
    if (std::string e; !cli::write_text_file(json_path, cli::fuzz_summary_json(summary), e)) {
      err << "error: --json: " << e << "\n";
      return 2;
    }
  }
  if (!r.error.empty()) {
    err << "error: " << r.error << "\n";
    return r.programs == 0 ? setup_error : 1;
  }
  return r.mismatches.empty() ? 0 : 1;
}

int verb_fuzz(bool ir_mode, const std::string& isa, const std::string& variant, uint64_t iterations, uint64_t seed,
              uint64_t first, const std::string& engines, const std::string& out_dir, const std::string& shard_spec,
              const std::string& json_path, std::ostream& out, std::ostream& err) {
  fuzz::Shard shard;
  if (std::string e; !shard_spec.empty() && !cli::parse_shard(shard_spec, shard, e)) {
    err << "error: " << e << "\n";
    return 2;
  }
  cli::FuzzSummary summary;
  summary.isa = ir_mode ? "ir" : isa;
  summary.variant = variant;
  summary.seed = seed;
  summary.first = first;
  summary.iterations = iterations;
  summary.shard = shard;
  if (ir_mode && !isa.empty()) {
    err << "error: gpurc fuzz: give either --ir or --isa ISA, not both\n";
    return 2;
  }
  if (!isa.empty()) {
    const isa::IsaModule* module = isa::find_module(isa);
    if (!module || !module->has_fuzzer()) {
      err << "error: gpurc fuzz --isa " << isa << ": no fuzzer for isa " << isa << " (one of: " << fuzzable_list()
          << ")\n";
      return 2;
    }
    if (first != 0 && !module->fuzz_can_start_anywhere()) {
      err << "error: gpurc fuzz: --first is supported with --isa " << resumable_fuzz_list() << " only\n";
      return 2;
    }
    fuzz::IsaFuzzOptions opt;
    opt.iterations = iterations;
    opt.first = first;
    opt.seed = seed;
    opt.variant = variant;
    opt.shard = shard;
    if (!out_dir.empty()) opt.out_dir = out_dir;
    if (!parse_fuzz_engines(engines, opt.engines, err)) return 2;
    auto run = [module](const fuzz::IsaFuzzOptions& o) { return fuzz::run_isa_fuzz(*module, o); };
    return run_fuzz_campaign(isa, opt, run, 2, summary, json_path, out, err);
  }
  if (!ir_mode) {
    err << "error: gpurc fuzz: give --ir (IR-level differential fuzzing) or --isa ISA\n";
    return 2;
  }
  if (first != 0) {
    err << "error: gpurc fuzz: --first is supported with --isa " << resumable_fuzz_list() << " only\n";
    return 2;
  }
  fuzz::IrFuzzOptions opt;
  opt.iterations = iterations;
  opt.seed = seed;
  opt.shard = shard;
  if (!out_dir.empty()) opt.out_dir = out_dir;
  if (!parse_fuzz_engines(engines, opt.engines, err)) return 2;
  return run_fuzz_campaign("ir", opt, fuzz::run_ir_fuzz, 1, summary, json_path, out, err);
}

// `gpurc engines`: every engine name, and for the JIT tiers what they are.
int verb_engines(bool native_ops, std::ostream& out) {
  if (native_ops) {
    out << backend::native_ops_table(all_tiers());
    return 0;
  }
  out << "interp      available  the IR reference interpreter\n";
  Engine best;
  std::string e;
  out << "jit         " << (resolve_engine(Engine::Jit, best, e) ? "available  = " + std::string(engine_name(best))
                                                                 : std::string("missing    no JIT tier on this host"))
      << "\n";
  for (const backend::HostTier* t : all_tiers())
    out << fmt::format("{:<11} {:<10} {} host, {}-lane strips, needs {}\n", t->name,
                       t->available() ? "available" : "missing", t->host, t->strip_lanes, t->requires_);
  return 0;
}

}  // namespace

int run_cli(int argc, char** argv, std::ostream& out, std::ostream& err) {
  CLI::App app{"gpurc: runs GPU shader and compute binaries on CPUs"};
  app.name("gpurc");
  app.require_subcommand(1);
  std::string engine_help = engine_names();

  // disasm
  std::string d_isa, d_variant, d_file;
  bool d_hex = false, d_raw = false;
  auto* disasm = app.add_subcommand("disasm", "disassemble guest code");
  disasm->add_option("--isa", d_isa, "instruction set: " + isa_list())->required();
  disasm->add_option("--variant", d_variant, "ISA revision (default: the ISA's first)");
  const std::string hex_help = "input is hex text (32-bit words for " +
                               module_names([](const isa::IsaModule& m) { return m.is_guest() && m.hex_unit_bytes() == 4; }, "/") +
                               ", bytes for " +
                               module_names([](const isa::IsaModule& m) { return m.is_guest() && m.hex_unit_bytes() == 1; }, "/") + ")";
  disasm->add_flag("--hex", d_hex, hex_help);
  disasm->add_flag("--raw", d_raw, "one instruction per line, without address and encoding columns");
  disasm->add_option("file", d_file, "code file, or - for stdin")->required();

  // asm
  std::string a_isa, a_variant, a_out;
  std::vector<std::string> a_files;
  bool a_hex = false, a_no_nop = false;
  auto* as = app.add_subcommand("asm", "assemble guest code");
  as->add_option("--isa", a_isa, "instruction set: " + isa_list())->required();
  as->add_option("--variant", a_variant, "ISA revision");
  as->add_option("-o,--output", a_out, "write the binary here (default: hex text to stdout)");
  as->add_flag("--hex", a_hex, "write hex text instead of binary to --output");
  as->add_flag("-n,--no-nop", a_no_nop,
               "pica200: insert no padding NOPs, warn where one is required instead (picasso -n)");
  as->add_option("files", a_files, "assembly source(s), or - for stdin (pica200: several sources share one DVLP)")
      ->required();

  // ir
  std::string i_file, i_isa;
  ir::PassOptions i_opt;
  bool no_ssa = false, no_cf = false, no_cse = false, no_dce = false, no_sink = false, no_uni = false, no_div = false, no_lb = false, no_ifc = false;
  auto* irc = app.add_subcommand("ir", "print the IR after each pass of the pipeline");
  irc->add_option("file", i_file, "IR text (.ir) or a replay file of isa ir (.json)")->required();
  irc->add_option("--isa", i_isa, "translate a program of this ISA (its binary or container) first");
  irc->add_flag("--no-ssa", no_ssa, "skip SSA construction");
  irc->add_flag("--no-const-fold", no_cf, "skip constant folding");
  irc->add_flag("--no-cse", no_cse, "skip common subexpression elimination");
  irc->add_flag("--no-dce", no_dce, "skip dead code elimination");
  irc->add_flag("--no-sink", no_sink, "skip sinking loop values used only after the loop");
  irc->add_flag("--no-uniformity", no_uni, "skip the uniformity analysis");
  irc->add_flag("--no-divergence", no_div, "skip divergence lowering");
  irc->add_flag("--no-if-convert", no_ifc, "keep short divergent if/else regions for divergence lowering");
  irc->add_flag("--no-loop-budget", no_lb, "skip the loop watchdog budget");
  irc->add_flag("--verify-each", i_opt.verify_each, "verify the function after every pass");

  // host
  std::string h_file, h_engine = "jit";
  bool h_perf = false;
  auto* host = app.add_subcommand("host", "compile IR and print the generated host code (x64: Zydis, a64: asmjit)");
  host->add_option("file", h_file, "IR text (.ir) or a replay file of isa ir (.json)")->required();
  host->add_option("--engine", h_engine, "JIT tier: jit or a tier (" + engine_names() + ")");
  host->add_flag("--perf-map", h_perf, "append the code's symbol to /tmp/perf-<pid>.map");

  // replay
  cli::ReplayArgs r;
  auto* rep = app.add_subcommand("replay", "run a replay file (docs/replay-format.md)");
  rep->add_option("file", r.file, "replay file (.json)")->required();
  rep->add_option("--engine", r.engine, engine_help);
  rep->add_flag("--json", r.json, "print one JSON object (counts lane-instructions)");
  rep->add_flag("--count", r.count, "count executed lane-instructions (one extra interpreter run)");
  rep->add_option("--compare", r.compare, "run each engine of a comma-separated list and report differences");
  rep->add_option("--threads", r.threads, "host threads (default: all cores)");
  std::string max_memory;
  const std::string max_memory_help = "largest guest memory a replay or program may ask for, e.g. 512M, 8G "
                                      "(default: 4G or half the physical memory)";
  rep->add_option("--max-memory", max_memory, max_memory_help);

  // fuzz
  bool f_ir = false;
  std::string f_isa, f_variant, f_engines, f_out;
  uint64_t f_iter = 1000, f_seed = 1, f_first = 0;
  auto* fz = app.add_subcommand("fuzz", "differential fuzzing of the JIT tiers against the interpreter");
  fz->add_flag("--ir", f_ir, "random IR programs");
  fz->add_option("--isa", f_isa, "random programs of an ISA: " + fuzzable_list());
  fz->add_option("--variant", f_variant, "ISA revision for --isa (default: the ISA's first)");
  fz->add_option("--iterations", f_iter, "programs to generate");
  fz->add_option("--seed", f_seed, "random seed");
  fz->add_option("--first", f_first, "index of the first program (--isa " + resumable_fuzz_list() + ": re-run programs of a campaign)");
  fz->add_option("--engines", f_engines, "comma-separated JIT tiers, e.g. jit-avx512,jit-avx2 (default: all the host has)");
  fz->add_option("--out", f_out, "folder for reproducers (default fuzz-out)");
  std::string f_shard, f_json;
  fz->add_option("--shard", f_shard,
                 "K/N: run shard K of N (programs i with i mod N = K); env/N or env: K (and N) from the job array's "
                 "environment (GPURC_SHARD_INDEX, JOB_COMPLETION_INDEX, SLURM_ARRAY_TASK_ID/_MIN/_COUNT)");
  fz->add_option("--json", f_json, "write a JSON summary of the campaign (or shard) to this file");
  fz->add_option("--max-memory", max_memory, max_memory_help);
  std::vector<std::string> fm_files;
  std::string fm_json;
  auto* fzm = fz->add_subcommand("merge", "combine the --json summaries of a campaign's shards");
  fzm->add_option("files", fm_files, "summary files, one per shard")->required();
  fzm->add_option("--json", fm_json, "write the merged summary to this file");

  // bench
  cli::BenchArgs b;
  auto* bn = app.add_subcommand("bench", "benchmark the interpreter and every JIT tier on fixed kernels");
  std::string bench_isas;
  for (const isa::IsaModule* m : isa::all_modules())
    if (m->has_replay())
      bench_isas += (bench_isas.empty() ? "" : ", ") + m->name() + (m->name() == b.isa ? " (default)" : "");
  bn->add_option("--isa", b.isa, "kernels of this ISA: " + bench_isas);
  bn->add_flag("--json", b.json, "print a JSON array");
  bn->add_option("--threads", b.threads, "host threads (default: all cores)");
  bn->add_option("--dir", b.dir, "folder of kernel replay files (default: the source tree's bench/<isa>/)");
  bn->add_option("--seconds", b.min_seconds, "measuring time per kernel and engine");
  bn->add_flag("--draws", b.draws_only, "pica200: only the emulator-style draw rows of the reference shaders");
  bn->add_flag("--only-compile", b.only_compile, "pica200: only the compile rows (cold and cached compile times)");
  bn->add_flag("--stages", b.stages, "pica200: with the compile rows, where a cold compile spends its time, stage by stage");
  bn->add_flag("--static", b.static_code,
               "no timing: host instructions emitted per IR instruction, on every tier this build can generate code for");

  // engines
  bool e_native = false;
  auto* eng = app.add_subcommand("engines", "list the engine registry: names, whether this host runs them, tiers");
  eng->add_flag("--native-ops", e_native, "print the IR ops each JIT tier lowers natively (markdown)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e, out, err);  // --help
    app.exit(e, err, err);
    return 2;
  }
  if (!max_memory.empty()) {
    uint64_t bytes = 0;
    if (std::string e; !cli::parse_size(max_memory, bytes, e)) {
      err << "error: --max-memory " << e << "\n";
      return 2;
    }
    rt::set_memory_limit(bytes);
  }
  // The limit is process-wide: an in-process caller (the tests) gets the
  // default back after this command.
  struct ResetLimit {
    bool active;
    ~ResetLimit() {
      if (active) rt::set_memory_limit(0);
    }
  } reset_limit{!max_memory.empty()};
  try {
    if (*disasm) return verb_disasm(d_isa, d_variant, d_hex, d_raw, d_file, out, err);
    if (*as) return verb_asm(a_isa, a_variant, a_out, a_hex, a_no_nop, a_files, out, err);
    if (*irc) {
      i_opt.ssa = !no_ssa;
      i_opt.const_fold = !no_cf;
      i_opt.cse = !no_cse;
      i_opt.dce = !no_dce;
      i_opt.sink = !no_sink;
      i_opt.uniformity = !no_uni;
      i_opt.divergence = !no_div;
      i_opt.if_convert = !no_ifc;
      i_opt.loop_budget = !no_lb;
      return verb_ir(i_file, i_isa, i_opt, out, err);
    }
    if (*host) return verb_host(h_file, h_engine, h_perf, out, err);
    if (*rep) return cli::replay(r, out, err);
    if (*fzm) return cli::fuzz_merge(fm_files, fm_json, out, err);
    if (*fz) {
      // Fuzzing checks every translation the verifier can check (release
      // builds skip it for translator output elsewhere: ir/verify_policy.h).
      ir::set_verify_built_ir(true);
      return verb_fuzz(f_ir, f_isa, f_variant, f_iter, f_seed, f_first, f_engines, f_out, f_shard, f_json, out, err);
    }
    if (*bn) return cli::bench(b, out, err);
    if (*eng) return verb_engines(e_native, out);
  } catch (const std::exception& e) {
    err << "error: " << e.what() << "\n";
    return 2;
  }
  return 2;
}

}  // namespace gpurc
