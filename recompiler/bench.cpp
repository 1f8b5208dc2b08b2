// `gpurc bench`: the fixed kernels of bench/ (replay files) on the
// interpreter and every JIT tier of the host, side by side. Benchmarks are
// measurements, never tests: a kernel whose expect fails is marked, not fatal.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "recompiler/bench_pica200_draw.h"
#include "recompiler/bench_pica200_compile.h"
#include "recompiler/bench_rows.h"
#include "ir/passes.h"
#include "recompiler/cli_verbs.h"
#include "recompiler/isa_engine.h"
#include "recompiler/replay.h"
#include "runtime/thread_pool.h"

namespace gpurc::cli {

namespace {

using replay::json;

struct Row {
  std::string kernel, engine;
  double lane_ips = 0, items_ps = 0, compile_us = 0, items_ps_1 = 0;  // _1: one host thread
  bool expect_ok = true;
  // Reference rows measured in the same run (bench_rows.h): "memcpy" rows
  // (bytes_ps only) and ceiling rows (lane_ips = arithmetic lane-ops/s).
  enum class Kind { Kernel, Memcpy, Ceiling } kind = Kind::Kernel;
  uint64_t traffic = 0;  // compulsory guest-memory bytes per launch (0: no buffers)
  double bytes_ps = 0;   // traffic / run time
  double memcpy_ps = 0;  // the memcpy row of the same traffic
  double ceiling = 0;    // the faster ceiling row of the same engine (JIT tiers)
};

// Best run time (us) of repeated runs lasting about `seconds` (at least 2 runs).
double measure(const json& doc, const std::filesystem::path& dir, Engine e, unsigned threads, double seconds,
               bool& expect_ok) {
  double best = 1e300, total = 0;
  for (int i = 0; i < 2 || (total < seconds * 1e6 && i < 1000); ++i) {
    replay::ReplayRun r = replay::run_document(doc, dir, e, threads, false);
    if (r.fault || !replay::check_expect(doc, r).empty()) expect_ok = false;
    best = std::min(best, r.run_us);
    total += r.run_us + r.compile_us;
  }
  return std::max(best, 1e-3);
}

// --static: an engine handle that keeps a copy of every function a replay
// compiles and runs it on the IR interpreter (any host can run every kernel).
class RecordingHandle final : public isa::EngineHandle {
 public:
  mutable std::vector<ir::Function> seen;
  std::string name() const override { return "interp"; }
  bool is_reference() const override { return false; }  // so the module compiles its IR through us
  bool compile(const ir::Function& f, const std::string& symbol, isa::Compiled& out, std::string& err) const override {
    seen.push_back(f);
    return EngineAsHandle(Engine::Interp).compile(f, symbol, out, err);
  }
};

size_t inst_count(const ir::Function& f) {
  size_t n = 0;
  for (const ir::Block& b : f.blocks) n += b.insts.size();
  return n;
}

// Instructions of a listing (`offset  text` lines) up to the epilogue's
// `ret`: every tier emits its prologue, the blocks, then one epilogue ending
// in the function's only `ret`, then its constant pool (data, not counted).
// Label lines (`L3:`) and data directives (`.data`) are skipped.
size_t code_instructions(const std::string& listing) {
  size_t n = 0, pos = 0;
  while (pos < listing.size()) {
    size_t nl = listing.find('\n', pos);
    if (nl == std::string::npos) nl = listing.size();
    std::string line = listing.substr(pos, nl - pos);
    pos = nl + 1;
    size_t t = line.find("  ");
    if (t == std::string::npos) continue;
    std::string text = line.substr(line.find_first_not_of(' ', t));
    if (text.empty() || text[0] == '.' || text.back() == ':') continue;
    ++n;
    if (text == "ret" || text.rfind("ret ", 0) == 0) break;
  }
  return n;
}

struct StaticRow {
  std::string kernel, tier;
  unsigned strip_lanes = 0;
  size_t functions = 0, ir_in = 0, ir = 0, host = 0;  // host = 0: the tier failed (error)
  std::string error;
};

int bench_static(const BenchArgs& a, const std::vector<std::filesystem::path>& files, std::ostream& out,
                 std::ostream& err) {
  std::vector<StaticRow> rows;
  for (const auto& file : files) {
    json doc;
    RecordingHandle rec;
    std::string kernel;
    try {
      doc = replay::load_file(file);
      if (doc["isa"] != a.isa) continue;
      kernel = doc.value("name", file.stem().string());
      isa::ReplayJob job{doc, file.parent_path(), rec, 1, false};
      replay::ReplayRun run;
      isa::find_module(a.isa)->replay(job, run);
    } catch (const replay::ReplayError& x) {
      err << "error: " << file.string() << ": " << x.what() << "\n";
      return 2;
    }
    // The pipeline once per function (the same for every tier: compile_ir's default passes).
    std::vector<ir::Function> lowered;
    size_t ir_in = 0, ir = 0;
    for (const ir::Function& f : rec.seen) {
      ir::Function l = f;
      if (std::string e = ir::run_pipeline(l, IrCompileOptions{}.passes); !e.empty()) {
        err << "error: " << kernel << ": pass pipeline: " << e << "\n";
        return 2;
      }
      ir_in += inst_count(f);
      ir += inst_count(l);
      lowered.push_back(std::move(l));
    }
    for (const backend::HostTier* t : codegen_tiers()) {
      StaticRow row{kernel, t->name, t->strip_lanes, lowered.size(), ir_in, ir, 0, ""};
      for (const ir::Function& l : lowered) {
        std::string e;
        std::unique_ptr<backend::CompiledCode> code = t->compile(l, backend::CompileOptions{}, &e);
        if (!code) {
          row.error = e.empty() ? "compilation failed" : e;
          row.host = 0;
          break;
        }
        row.host += code_instructions(code->disassemble());
        // GPURC_BENCH_LISTINGS=DIR: each function's IR after the pipeline
        // and its host code, one file per kernel and tier, for reading.
        if (const char* dir = std::getenv("GPURC_BENCH_LISTINGS"); dir && *dir) {
          std::ofstream o(std::filesystem::path(dir) / (kernel + "." + t->name + ".txt"), std::ios::app);
          o << ir::print(l) << "\n" << code->disassemble() << "\n";
        }
      }
      rows.push_back(row);
    }
  }
  if (a.json) {
    json arr = json::array();
    for (const StaticRow& r : rows) {
      json j = {{"isa", a.isa}, {"kernel", r.kernel}, {"engine", r.tier}, {"strip_lanes", r.strip_lanes},
                {"functions", r.functions}, {"ir_instructions_in", r.ir_in}, {"ir_instructions", r.ir}};
      if (r.error.empty()) j["host_instructions"] = r.host;
      else j["error"] = r.error;
      arr.push_back(j);
    }
    out << arr.dump(2) << "\n";
    return 0;
  }
  out << fmt::format("gpurc bench --static, isa {}: host instructions emitted (static count, constant pools "
                     "excluded), per IR instruction after the pass pipeline and per instruction of the "
                     "translated input IR\n", a.isa);
  out << fmt::format("{:<16} {:<11} {:>6} {:>6} {:>8} {:>8} {:>10} {:>9} {:>9}\n", "kernel", "engine", "strip",
                     "funcs", "IR in", "IR", "host inst", "per IR", "per in");
  std::map<std::string, std::map<std::string, double>> per_ir;  // tier -> kernel -> host / IR
  std::map<std::string, std::pair<size_t, size_t>> total;       // tier -> (host, IR) over kernels without errors
  for (const StaticRow& r : rows) {
    if (!r.error.empty()) {
      out << fmt::format("{:<16} {:<11} {:>6} {:>6} {:>8} {:>8}  error: {}\n", r.kernel, r.tier, r.strip_lanes,
                         r.functions, r.ir_in, r.ir, r.error);
      continue;
    }
    double pir = r.ir ? double(r.host) / double(r.ir) : 0, pin = r.ir_in ? double(r.host) / double(r.ir_in) : 0;
    per_ir[r.tier][r.kernel] = pir;
    total[r.tier].first += r.host;
    total[r.tier].second += r.ir;
    out << fmt::format("{:<16} {:<11} {:>6} {:>6} {:>8} {:>8} {:>10} {:>9.2f} {:>9.2f}\n", r.kernel, r.tier,
                       r.strip_lanes, r.functions, r.ir_in, r.ir, r.host, pir, pin);
  }
  // Every later tier of codegen_tiers() over every earlier one: per kernel
  // and over all kernels (ratio of the sums).
  const auto& tiers = codegen_tiers();
  for (size_t i = 0; i < tiers.size(); ++i)
    for (size_t j = i + 1; j < tiers.size(); ++j) {
      auto& x = per_ir[tiers[j]->name];
      auto& y = per_ir[tiers[i]->name];
      std::string line;
      for (const auto& [k, v] : y)
        if (x.count(k) && v > 0) line += fmt::format(" {} {:.2f}x", k, x[k] / v);
      auto tx = total[tiers[j]->name], ty = total[tiers[i]->name];
      if (tx.second && ty.second && ty.first)
        out << fmt::format("{}/{} per IR instruction: all {:.2f}x;{}\n", tiers[j]->name, tiers[i]->name,
                           (double(tx.first) / double(tx.second)) / (double(ty.first) / double(ty.second)), line);
    }
  return 0;
}

}  // namespace

int bench(const BenchArgs& a, std::ostream& out, std::ostream& err) {
  if (!replay::has_handler(a.isa)) {
    err << "error: gpurc bench --isa " << a.isa << ": no replay support for isa " << a.isa << "\n";
    return 2;
  }
  std::filesystem::path dir = a.dir.empty() ? std::filesystem::path(GPURC_SOURCE_DIR) / "bench" : std::filesystem::path(a.dir);
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  // bench/ holds one folder per ISA (bench/ir, bench/pica200, ...).
  if (a.dir.empty()) dir /= a.isa;
  for (const auto& ent : std::filesystem::directory_iterator(dir, ec))
    if (ent.path().extension() == ".json") files.push_back(ent.path());
  if (ec || files.empty()) {
    err << "error: no kernel replay files (*.json) in " << dir.string() << "\n";
    return 2;
  }
  std::sort(files.begin(), files.end());
  if (a.static_code) return bench_static(a, files, out, err);
  // PICA200: cold and cached compile rows through the public API (bench_pica200_compile.cpp).
  std::vector<CompileRow> compile_rows;
  if (a.isa == "pica200" && !a.draws_only) compile_rows = bench_pica200_compile(a.min_seconds);
  if (a.only_compile) files.clear();
  unsigned threads = a.threads ? a.threads : rt::ThreadPool::host_cores();
  std::vector<Row> rows;
  // PICA200 emulator-style draw rows (bench_pica200_draw.cpp), after the kernels.
  const bool draws = a.isa == "pica200" && a.dir.empty() && !a.only_compile;
  json draw_rows = json::array();
  if (a.draws_only) files.clear();
  // The ceiling rows first, per JIT tier: an IR kernel of independent fma
  // chains and one of iadd chains, counted in arithmetic lane-operations.
  std::map<std::string, double> ceiling;  // engine -> the faster of its ceiling rows
  for (size_t k = 0; k < bench_rows::ceiling_kernels(32).size(); ++k) {
    if (a.draws_only || a.only_compile) break;
    for (Engine e : host_jit_tiers()) {
      const bench_rows::Ceiling c = bench_rows::ceiling_kernels(std::string(engine_name(e)) == "jit-avx2" ? 16 : 32)[k];
      Row row;
      row.kind = Row::Kind::Ceiling;
      row.kernel = c.name;
      row.engine = engine_name(e);
      code_cache().clear();
      try {
        replay::ReplayRun first = replay::run_document(c.doc, dir, e, threads, false);
        row.compile_us = first.compile_us;
        double us = measure(c.doc, dir, e, threads, a.min_seconds, row.expect_ok);
        row.lane_ips = double(c.lane_ops) / us * 1e6;
      } catch (const replay::ReplayError& x) {
        err << "error: " << c.name << ": " << x.what() << "\n";
        return 2;
      }
      ceiling[row.engine] = std::max(ceiling[row.engine], row.lane_ips);
      rows.push_back(row);
    }
  }
  std::map<uint64_t, double> memcpy_rate;  // traffic bytes -> memcpy bytes/s
  for (const auto& file : files) {
    json doc;
    try {
      doc = replay::load_file(file);
      if (doc["isa"] != a.isa) continue;
      std::string kernel = doc.value("name", file.stem().string());
      // Work per launch: lane-instructions counted once on the interpreter.
      replay::ReplayRun counted = replay::run_document(doc, file.parent_path(), Engine::Interp, threads, true);
      uint64_t items = counted.items;
      if (items == 0) {
        rt::LaunchConfig cfg = replay::parse_launch(doc.contains("launch") ? doc["launch"] : json::object());
        items = cfg.grid.count() * cfg.block.count();
      }
      const uint64_t traffic = bench_rows::traffic_bytes(doc, &counted);
      if (traffic && !memcpy_rate.count(traffic)) {
        Row row;
        row.kind = Row::Kind::Memcpy;
        row.kernel = "memcpy";
        row.engine = "host";
        row.traffic = traffic;
        row.bytes_ps = row.memcpy_ps = memcpy_rate[traffic] = bench_rows::memcpy_bytes_per_s(traffic, a.min_seconds / 4);
        rows.push_back(row);
      }
      for (Engine e : host_engines()) {
        Row row;
        row.kernel = kernel;
        row.engine = engine_name(e);
        row.traffic = traffic;
        if (traffic) row.memcpy_ps = memcpy_rate[traffic];
        if (ceiling.count(row.engine)) row.ceiling = ceiling[row.engine];
        code_cache().clear();  // so compile time is measured, not a cache hit
        replay::ReplayRun first = replay::run_document(doc, file.parent_path(), e, threads, false);
        row.compile_us = first.compile_us;
        double us = measure(doc, file.parent_path(), e, threads, a.min_seconds, row.expect_ok);
        row.lane_ips = double(counted.guest_instructions) / us * 1e6;
        row.items_ps = double(items) / us * 1e6;
        row.bytes_ps = double(traffic) / us * 1e6;
        if (!a.json && threads > 1) {
          double us1 = measure(doc, file.parent_path(), e, 1, a.min_seconds / 2, row.expect_ok);
          row.items_ps_1 = double(items) / us1 * 1e6;
        }
        rows.push_back(row);
      }
    } catch (const replay::ReplayError& x) {
      err << "error: " << file.string() << ": " << x.what() << "\n";
      return 2;
    }
  }
  if (a.json) {
    if (draws)
      if (int rc = bench_pica200_draws(a, out, err, draw_rows); rc != 0) return rc;
    json arr = json::array();
    for (const Row& r : rows) {
      json j = {{"isa", a.isa}, {"kernel", r.kernel}, {"engine", r.engine}, {"threads", threads}};
      switch (r.kind) {
        case Row::Kind::Memcpy:
          j["row"] = "memcpy";
          j["traffic_bytes"] = r.traffic;
          j["bytes_per_s"] = r.bytes_ps;
          break;
        case Row::Kind::Ceiling:
          j["row"] = "ceiling";
          j["lane_ops_per_s"] = r.lane_ips;
          j["compile_us"] = r.compile_us;
          break;
        case Row::Kind::Kernel:
          j["row"] = "kernel";
          j["lane_instructions_per_s"] = r.lane_ips;
          j["items_per_s"] = r.items_ps;
          j["compile_us"] = r.compile_us;
          j["expect"] = r.expect_ok ? "pass" : "fail";
          if (r.traffic) {
            j["traffic_bytes"] = r.traffic;
            j["bytes_per_s"] = r.bytes_ps;
            j["memcpy_bytes_per_s"] = r.memcpy_ps;
            j["memcpy_fraction"] = r.memcpy_ps > 0 ? r.bytes_ps / r.memcpy_ps : 0.0;
          }
          if (r.ceiling > 0) {
            j["ceiling_lane_ops_per_s"] = r.ceiling;
            j["ceiling_fraction"] = r.lane_ips / r.ceiling;
          }
          break;
      }
      arr.push_back(j);
    }
    for (const json& r : draw_rows) arr.push_back(r);
    for (const CompileRow& r : compile_rows)
      arr.push_back({{"isa", a.isa},
                     {"kernel", r.kernel},
                     {"engine", r.engine},
                     {"kind", "compile"},
                     {"words", r.words},
                     {"reachable_words", r.reachable},
                     {"compile_cold_us", r.cold_us},
                     {"compile_cold_best_us", r.cold_best_us},
                     {"compile_cold_cpu_us", r.cold_cpu_us},
                     {"compile_cached_us", r.cached_us},
                     {"compile_cold_cpu_us_per_instruction", r.words ? r.cold_cpu_us / double(r.words) : 0.0},
                     {"compile_stages", compile_stages_json(r)}});
    out << arr.dump(2) << "\n";
    return 0;
  }
  if (draws && a.draws_only) return bench_pica200_draws(a, out, err, draw_rows);
  out << fmt::format("gpurc bench, isa {}, {} host threads\n", a.isa, threads);
  if (!compile_rows.empty()) print_pica200_compile(compile_rows, out, a.stages);
  if (rows.empty()) return 0;
  out << fmt::format("{:<16} {:<11} {:>14} {:>12} {:>11} {:>9} {:>12} {:>8} {:>10} {:>8} {:>8}\n", "kernel", "engine",
                     "lane-instr/s", "items/s", "compile_us", "vs interp", "items/s 1thr", "scaling", "bytes/s",
                     "%memcpy", "%ceiling");
  // Per engine name: kernel -> lane-instr/s.
  std::map<std::string, std::map<std::string, double>> rate;
  for (const Row& r : rows)
    if (r.kind == Row::Kind::Kernel) rate[r.engine][r.kernel] = r.lane_ips;
  std::map<std::string, double>& interp_rate = rate["interp"];
  for (const Row& r : rows) {
    if (r.kind == Row::Kind::Memcpy) {
      out << fmt::format("{:<16} {:<11} {:>14} {:>12} {:>11} {:>9} {:>12} {:>8} {:>10.3g} {:>8} {:>8}  ({} KiB copied)\n",
                         r.kernel, r.engine, "-", "-", "-", "-", "-", "-", r.bytes_ps, "100%", "-", r.traffic / 2048);
      continue;
    }
    if (r.kind == Row::Kind::Ceiling) {
      out << fmt::format("{:<16} {:<11} {:>14.3g} {:>12} {:>11.0f} {:>9} {:>12} {:>8} {:>10} {:>8} {:>8}  (lane-ops/s)\n",
                         r.kernel, r.engine, r.lane_ips, "-", r.compile_us, "-", "-", "-", "-", "-", "-");
      continue;
    }
    double base = interp_rate[r.kernel];
    out << fmt::format("{:<16} {:<11} {:>14.3g} {:>12.3g} {:>11.0f} {:>8.1f}x {:>12} {:>8} {:>10} {:>8} {:>8}{}\n",
                       r.kernel, r.engine, r.lane_ips, r.items_ps, r.compile_us, base > 0 ? r.lane_ips / base : 0.0,
                       r.items_ps_1 > 0 ? fmt::format("{:.3g}", r.items_ps_1) : "-",
                       r.items_ps_1 > 0 ? fmt::format("{:.2f}x", r.items_ps / r.items_ps_1) : "-",
                       r.traffic ? fmt::format("{:.3g}", r.bytes_ps) : "-",
                       r.memcpy_ps > 0 ? fmt::format("{:.1f}%", 100 * r.bytes_ps / r.memcpy_ps) : "-",
                       r.ceiling > 0 ? fmt::format("{:.1f}%", 100 * r.lane_ips / r.ceiling) : "-",
                       r.expect_ok ? "" : "  (expect FAILED)");
  }
  // Every pair of the host's JIT tiers, the better tier (registry order) over the other.
  std::vector<Engine> tiers = host_jit_tiers();
  for (const auto& [k, v] : interp_rate)
    for (size_t i = 0; i < tiers.size(); ++i)
      for (size_t j = i + 1; j < tiers.size(); ++j) {
        auto& a = rate[engine_name(tiers[i])];
        auto& b = rate[engine_name(tiers[j])];
        if (a.count(k) && b.count(k) && b[k] > 0)
          out << fmt::format("{}: {}/{} = {:.2f}x\n", k, engine_name(tiers[i]), engine_name(tiers[j]), a[k] / b[k]);
      }
  if (draws) return bench_pica200_draws(a, out, err, draw_rows);
  return 0;
}

}  // namespace gpurc::cli
