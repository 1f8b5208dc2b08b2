// Emulator-style PICA200 benchmark rows (issue 13): the three reference
// shaders (bench/pica200-reference/ref_*.json, the published words,
// descriptors and uniforms of /work/shared/bench/pica200-reference-shaders.md)
// run through the PUBLIC API (include/gpurc/pica200.h) as a 3DS emulator
// drives its shader unit: a ring of 16384 pre-generated vertices; per batch
// the shader's input registers are copied from the ring into the unit's
// per-vertex input records (256 bytes: v0-v15), the batch runs, and the
// output registers are copied from the per-vertex output records into an
// output ring. A copy-only row does the same copies without the shader, so
// every row reports ns/vertex in total and above the copies.
#include "recompiler/bench_pica200_draw.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <tuple>
#include <utility>
#include <regex>
#include <time.h>

#include <fmt/format.h>

#include "gpurc/pica200.h"
#include "runtime/thread_pool.h"

namespace gpurc::cli {

namespace {

namespace p = gpurc::pica200;
using replay::json;
using Clock = std::chrono::steady_clock;

constexpr size_t kRing = 16384;  // vertices in the input and output rings (a power of two)
constexpr std::array<size_t, 3> kBatches = {32, 256, 4096};

struct RefShader {
  std::string name;
  p::ShaderSetup setup;
  p::Uniforms uniforms;
  std::vector<unsigned> in_regs, out_regs;  // the v registers loaded, the o registers read back
  uint16_t in_mask = 0, out_mask = 0;
  std::vector<p::Vec4> ring_in;  // kRing * in_regs.size(), vertex-major
};

uint32_t draw_word_of(const json& j) {
  return j.is_string() ? uint32_t(std::stoul(j.get<std::string>(), nullptr, 0)) : j.get<uint32_t>();
}

// The output registers of each reference shader (its `out` line in the
// published description; the replay files list no outputs).
uint16_t published_outputs(const std::string& name) {
  if (name == "ref_simple" || name == "ref_loop") return 0x7;
  if (name == "ref_heavy") return 0x1F;
  return 0xFFFF;
}

// xorshift64* (the published harness's generator kind) over [lo, hi), rounded
// to float24's 16 mantissa bits as the published inputs are.
struct Rng {
  uint64_t s;
  float next(float lo, float hi) {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    const double u = double((s * 0x2545F4914F6CDD1Dull) >> 11) * 0x1.0p-53;
    float f = float(lo + (hi - lo) * u);
    uint32_t b;
    std::memcpy(&b, &f, 4);
    b &= ~0x7Fu;  // keep 16 of the 23 mantissa bits
    std::memcpy(&f, &b, 4);
    return f;
  }
};

bool load_ref(const std::filesystem::path& file, RefShader& s, std::string& err) {
  json doc;
  try {
    doc = replay::load_file(file);
    s.name = doc.value("name", file.stem().string());
    const json& prog = doc.at("program");
    for (const json& w : prog.at("words")) s.setup.code.push_back(draw_word_of(w));
    for (const json& w : prog.at("descriptors")) s.setup.descriptors.push_back(draw_word_of(w));
    s.setup.entry = prog.value("entry", 0u);
    const json state = doc.value("state", json::object());
    // (Named: a range-for over a temporary's items() would outlive it.)
    const json fu = state.value("float_uniforms", json::object()), iu = state.value("int_uniforms", json::object());
    const json bu = state.value("bool_uniforms", json::object());
    for (const auto& [k, v] : fu.items())
      for (size_t c = 0; c < 4; ++c) s.uniforms.f.at(std::stoul(k.substr(1)))[c] = v.at(c).get<float>();
    for (const auto& [k, v] : iu.items())
      for (size_t c = 0; c < 4; ++c) s.uniforms.i.at(std::stoul(k.substr(1)))[c] = v.at(c).get<uint8_t>();
    for (const auto& [k, v] : bu.items())
      if (v.get<bool>()) s.uniforms.b |= uint16_t(1u << std::stoul(k.substr(1)));
    std::vector<std::pair<float, float>> ranges;
    for (unsigned r = 0; r < 16; ++r) {
      const std::string key = fmt::format("v{}", r);
      if (!doc.at("inputs").contains(key)) continue;
      const json g = doc["inputs"][key].value("generate", json::object());
      s.in_regs.push_back(r);
      s.in_mask |= uint16_t(1u << r);
      ranges.push_back({g.value("min", 0.0f), g.value("max", 1.0f)});
    }
    s.out_mask = published_outputs(s.name);
    for (unsigned r = 0; r < 16; ++r)
      if (s.out_mask >> r & 1) s.out_regs.push_back(r);
    Rng rng{1};
    s.ring_in.resize(kRing * s.in_regs.size());
    for (size_t k = 0; k < kRing; ++k)
      for (size_t j = 0; j < s.in_regs.size(); ++j)
        for (size_t c = 0; c < 4; ++c) s.ring_in[k * s.in_regs.size() + j][c] = rng.next(ranges[j].first, ranges[j].second);
  } catch (const std::exception& x) {
    err = fmt::format("{}: {}", file.string(), x.what());
    return false;
  }
  return true;
}

// The shader unit's side of one row: per-vertex input and output records
// for one batch, and the output ring.
struct Unit {
  std::vector<p::InputVertex> in;
  std::vector<p::OutputVertex> out;
  std::vector<p::Vec4> ring_out;
};

// One batch at ring position `pos`: copy in, run (`run` may be empty: the
// copy-only baseline), copy out.
inline void copy_in(const RefShader& s, Unit& u, size_t pos, size_t batch) {
  const size_t nin = s.in_regs.size();
  for (size_t k = 0; k < batch; ++k) {
    const p::Vec4* src = &s.ring_in[((pos + k) & (kRing - 1)) * nin];
    for (size_t j = 0; j < nin; ++j) std::memcpy(&u.in[k].v[s.in_regs[j]], &src[j], sizeof(p::Vec4));
  }
}
inline void copy_out(const RefShader& s, Unit& u, size_t pos, size_t batch) {
  const size_t nout = s.out_regs.size();
  for (size_t k = 0; k < batch; ++k) {
    p::Vec4* dst = &u.ring_out[((pos + k) & (kRing - 1)) * nout];
    for (size_t j = 0; j < nout; ++j) std::memcpy(&dst[j], &u.out[k].o[s.out_regs[j]], sizeof(p::Vec4));
  }
}

// How a row runs one batch through the API: false on a guest fault.
using RunBatch = std::function<bool(Unit&, size_t batch)>;

// Seconds of the calling thread's CPU time (single-thread rows: on a shared
// machine the wall clock also counts the time other processes had the core),
// or of the wall clock (rows that spread over threads).
double now_seconds(bool cpu) {
  if (cpu) {
    timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
  }
  return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

// ns/vertex of one timed stretch of about `seconds` (at least one batch, the
// clock read every >= 4096 vertices), walking the ring batch by batch from
// `pos`.
double stretch(const RefShader& s, Unit& u, size_t batch, const RunBatch& run, double seconds, bool cpu, bool& ok,
               size_t& pos) {
  const double t0 = now_seconds(cpu);
  size_t vertices = 0;
  double elapsed = 0;
  do {
    for (size_t chunk = 0; chunk < 4096; chunk += batch) {
      copy_in(s, u, pos, batch);
      if (run && !run(u, batch)) ok = false;
      copy_out(s, u, pos, batch);
      pos = (pos + batch) & (kRing - 1);
      vertices += batch;
    }
    elapsed = now_seconds(cpu) - t0;
  } while (elapsed < seconds);
  return elapsed * 1e9 / double(vertices);
}

// Best ns/vertex of 3 stretches of about `seconds / 3` each.
double measure(const RefShader& s, Unit& u, size_t batch, const RunBatch& run, double seconds, bool cpu, bool& ok) {
  constexpr int kReps = 3;
  double best = 1e300;
  size_t pos = 0;
  for (int rep = 0; rep < kReps; ++rep) best = std::min(best, stretch(s, u, batch, run, seconds / kReps, cpu, ok, pos));
  return best;
}

// Two configurations by the wall clock, their stretches interleaved (a, b,
// a, b, ...; 6 of about `seconds / 6` each), best of each: on a shared
// machine the load changes from second to second, and a ratio of two
// measurements taken one after the other (seventeenth session: 0.7-1.4x
// for rows that never split) says more about the load than about threads.
std::pair<double, double> measure_pair(const RefShader& s, Unit& u, size_t batch, const RunBatch& a,
                                       const RunBatch& b, double seconds, bool& ok) {
  constexpr int kReps = 6;
  double best_a = 1e300, best_b = 1e300;
  size_t pos = 0;
  for (int rep = 0; rep < kReps; ++rep) {
    best_a = std::min(best_a, stretch(s, u, batch, a, seconds / kReps, false, ok, pos));
    best_b = std::min(best_b, stretch(s, u, batch, b, seconds / kReps, false, ok, pos));
  }
  return {best_a, best_b};
}

// |err| / max(1, |ref|) <= 1e-2 on every output float of one batch: the
// published harness's check against the reference interpreter.
bool outputs_agree(const RefShader& s, const Unit& got, const Unit& ref, size_t batch) {
  for (size_t k = 0; k < batch; ++k)
    for (unsigned r : s.out_regs)
      for (size_t c = 0; c < 4; ++c) {
        const float a = got.out[k].o[r][c], b = ref.out[k].o[r][c];
        if (!(std::fabs(a - b) <= 1e-2f * std::max(1.0f, std::fabs(b))) && !(std::isnan(a) && std::isnan(b)))
          return false;
      }
  return true;
}

struct DrawRow {
  std::string kernel, engine, api;
  size_t batch = 0;
  unsigned threads = 1;
  double ns = 0, above = 0;  // ns/vertex in total, and above the copy-only row
  double wall_one = 0;       // threads > 1: ns/vertex of the same row on one thread, wall clock
  bool expect_ok = true;
};

Unit make_unit(const RefShader& s, size_t batch) {
  Unit u;
  u.in.resize(batch);
  u.out.resize(batch);
  u.ring_out.resize(kRing * s.out_regs.size());
  return u;
}

}  // namespace

int bench_pica200_draws(const BenchArgs& a, std::ostream& out, std::ostream& err, json& json_rows) {
  const std::filesystem::path dir = std::filesystem::path(GPURC_SOURCE_DIR) / "bench" / "pica200-reference";
  std::vector<RefShader> shaders;
  // GPURC_BENCH_DRAWS=REGEX keeps the rows whose "kernel engine api" it
  // matches somewhere (profiling some rows; the copies and the
  // interpreter's reference batch always run).
  const char* only = std::getenv("GPURC_BENCH_DRAWS");
  const std::regex only_re(only ? only : "");
  auto wanted = [&](const std::string& row) { return !only || std::regex_search(row, only_re); };
  // GPURC_BENCH_DRAWS_NO_COPIES=1 (profiling): no copy-only rows (they take
  // most of a run that keeps one row, so a profile would be mostly them);
  // the rows' "above copies" then equals their total.
  const char* no_copies = std::getenv("GPURC_BENCH_DRAWS_NO_COPIES");
  const bool skip_copies = no_copies && *no_copies && std::string(no_copies) != "0";
  for (const char* name : {"ref_simple", "ref_heavy", "ref_loop"}) {
    RefShader s;
    std::string e;
    if (!load_ref(dir / (std::string(name) + ".json"), s, e)) {
      err << "error: " << e << "\n";
      return 2;
    }
    shaders.push_back(std::move(s));
  }
  const unsigned all = a.threads ? a.threads : rt::ThreadPool::host_cores();
  std::vector<unsigned> thread_counts = {1};
  if (all > 1) thread_counts.push_back(all);
  const std::vector<std::string> engines = p::engines();
  const double seconds = a.min_seconds;
  std::vector<DrawRow> rows;
  const std::vector<size_t> batches(kBatches.begin(), kBatches.end());
  for (const RefShader& s : shaders) {
    std::map<std::string, std::shared_ptr<const p::Shader>> compiled;
    for (const std::string& e : engines) {
      p::ShaderSetup setup = s.setup;
      setup.engine = e;
      try {
        compiled[e] = p::Shader::compile(setup);
      } catch (const p::Error& x) {
        err << "error: " << s.name << " on " << e << ": " << x.what() << "\n";
        return 2;
      }
    }
    for (size_t batch : batches) {
      Unit u = make_unit(s, batch);
      // The interpreter's outputs of the first batch: what every row must match.
      Unit ref = make_unit(s, batch);
      copy_in(s, ref, 0, batch);
      compiled["interp"]->run(s.uniforms, ref.in, ref.out, p::RunOptions{1});
      bool base_ok = true;
      double copies = skip_copies ? 0 : measure(s, u, batch, {}, seconds, true, base_ok);
      for (const std::string& e : engines)
        for (const char* api : {"draw", "draw-bound", "run"})
        for (unsigned threads : thread_counts) {
          if (!wanted(s.name + " " + e + " " + api)) continue;
          const p::Shader& sh = *compiled[e];
          DrawRow row{s.name, e, api, batch, threads};
          p::RunOptions opt;
          opt.threads = threads == all && all > 1 && !a.threads ? 0 : threads;  // 0 = the default, all cores
          // draw: a DrawState made once per row, uniforms written once; the
          // unit's records are read and written in place (masks of the
          // loaded / wanted registers). draw-bound: the same with the
          // streams bound once (DrawState::bind, run_bound). run:
          // Shader::run on the same records.
          p::DrawState state(sh);
          state.set_uniforms(s.uniforms);
          const p::VertexInputs din = p::VertexInputs::records(u.in.data(), sizeof(p::InputVertex), s.in_mask);
          const p::VertexOutputs dout = p::VertexOutputs::records(u.out.data(), sizeof(p::OutputVertex), s.out_mask);
          const bool bound = std::string(api) == "draw-bound";
          if (bound && !state.bind(din, dout).ok) row.expect_ok = false;
          RunBatch run;
          if (std::string(api) == "draw")
            run = [&](Unit&, size_t n) { return state.run(din, dout, n, opt).ok; };
          else if (bound)
            run = [&](Unit&, size_t n) { return state.run_bound(0, n, opt).ok; };
          else
            run = [&](Unit& unit, size_t n) {
              return sh.run(s.uniforms, std::span(unit.in.data(), n), std::span(unit.out.data(), n), opt).ok;
            };
          if (threads == 1) {
            row.ns = measure(s, u, batch, run, seconds, true, row.expect_ok);
          } else {
            // The same configuration on one thread by the wall clock,
            // measured interleaved with it: whether spreading the draw paid.
            p::RunOptions one = opt;
            one.threads = 1;
            RunBatch run1;
            if (std::string(api) == "draw")
              run1 = [&](Unit&, size_t n) { return state.run(din, dout, n, one).ok; };
            else if (bound)
              run1 = [&](Unit&, size_t n) { return state.run_bound(0, n, one).ok; };
            else
              run1 = [&](Unit& unit, size_t n) {
                return sh.run(s.uniforms, std::span(unit.in.data(), n), std::span(unit.out.data(), n), one).ok;
              };
            std::tie(row.ns, row.wall_one) = measure_pair(s, u, batch, run, run1, seconds, row.expect_ok);
          }
          copy_in(s, u, 0, batch);
          run(u, batch);
          row.expect_ok = row.expect_ok && outputs_agree(s, u, ref, batch);
          rows.push_back(row);
        }
      // The copies once more, after the rows: the lower of the two is the baseline.
      if (!skip_copies) copies = std::min(copies, measure(s, u, batch, {}, seconds, true, base_ok));
      if (!skip_copies) rows.push_back(DrawRow{s.name, "copies", "-", batch, 1, copies, 0, 0, true});
      for (DrawRow& r : rows)
        if (r.kernel == s.name && r.batch == batch) r.above = r.ns - copies;
    }
  }
  if (a.json) {
    for (const DrawRow& r : rows)
      json_rows.push_back({{"isa", "pica200"},
                           {"kernel", r.kernel},
                           {"engine", r.engine},
                           {"api", r.api},
                           {"batch", r.batch},
                           {"threads", r.threads},
                           {"ns_per_vertex", r.ns},
                           {"ns_per_vertex_above_copies", r.above},
                           {"items_per_s", 1e9 / r.ns},
                           {"one_thread_wall_ns_per_vertex", r.wall_one},
                           {"expect", r.expect_ok ? "pass" : "fail"}});
    return 0;
  }
  out << fmt::format(
      "\nemulator-style draws: reference shaders, {}-vertex ring, copy in / run / copy out per batch "
      "(ns/vertex;\n"
      "threads = 1 rows and the copies: the thread's CPU time, best of 3; other rows: wall clock, and\n"
      "`vs 1 thread` = the same row on one thread by the wall clock over this row, best of 6 stretches each, interleaved)\n",
      kRing);
  out << fmt::format("{:<11} {:<11} {:<10} {:>6} {:>7} {:>9} {:>12} {:>10} {:>12}\n", "kernel", "engine", "api",
                     "batch", "threads", "total", "above copies", "vs interp", "vs 1 thread");
  for (const DrawRow& r : rows) {
    double interp = 0;
    for (const DrawRow& i : rows)
      if (i.kernel == r.kernel && i.engine == "interp" && i.api == r.api && i.batch == r.batch && i.threads == r.threads)
        interp = i.above;
    const bool copies = r.engine == "copies";
    out << fmt::format("{:<11} {:<11} {:<10} {:>6} {:>7} {:>9.2f} {:>12} {:>10} {:>12}{}\n", r.kernel, r.engine, r.api,
                       r.batch, r.threads, r.ns, copies ? "-" : fmt::format("{:.2f}", r.above),
                       copies || r.above <= 0 || interp <= 0 ? "-" : fmt::format("{:.0f}x", interp / r.above),
                       r.wall_one > 0 ? fmt::format("{:.2f}x", r.wall_one / r.ns) : "-",
                       r.expect_ok ? "" : "  (outputs differ from interp)");
  }
  return 0;
}

}  // namespace gpurc::cli
