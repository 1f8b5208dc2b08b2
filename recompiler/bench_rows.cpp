#include "recompiler/bench_rows.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>

#include <fmt/format.h>

namespace gpurc::cli::bench_rows {

using replay::json;

uint64_t traffic_bytes(const json& doc, const replay::ReplayRun* run) {
  if (!doc.contains("memory") || !doc["memory"].is_array()) return 0;
  std::vector<std::string> written;
  if (doc.contains("expect") && doc["expect"].contains("memory") && doc["expect"]["memory"].is_array())
    for (const json& e : doc["expect"]["memory"])
      if (e.contains("name") && e["name"].is_string()) written.push_back(e["name"].get<std::string>());
  // A buffer with no init starts as zeros: if the run left anything else in
  // it, the kernel wrote it (vector_add's c, which no expect names).
  if (run)
    for (const replay::Observed& o : run->observed)
      if (o.kind == "memory" && std::any_of(o.bytes.begin(), o.bytes.end(), [](uint8_t b) { return b != 0; }))
        for (const json& b : doc["memory"])
          if (!b.contains("init") && b.value("name", std::string()) == o.name) written.push_back(o.name);
  uint64_t bytes = 0;
  for (const json& b : doc["memory"]) {
    if (!b.contains("size")) continue;
    const uint64_t size = replay::parse_uint(b["size"], "memory.size");
    if (b.contains("init")) bytes += size;
    if (b.contains("name") && b["name"].is_string() &&
        std::find(written.begin(), written.end(), b["name"].get<std::string>()) != written.end())
      bytes += size;
  }
  return bytes;
}

double memcpy_bytes_per_s(uint64_t traffic, double seconds) {
  const size_t n = std::max<size_t>(64, size_t(traffic / 2));
  std::unique_ptr<uint8_t[]> src(new uint8_t[n]), dst(new uint8_t[n]);
  std::memset(src.get(), 1, n);
  std::memset(dst.get(), 2, n);  // both touched: no page faults in the timed copies
  using Clock = std::chrono::steady_clock;
  double best = 1e300, total = 0;
  for (int i = 0; i < 3 || (total < seconds && i < 100000); ++i) {
    const auto t0 = Clock::now();
    std::memcpy(dst.get(), src.get(), n);
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    // The copy must not be optimized away: read one byte of the result.
    if (dst[n - 1 - size_t(i) % n] != 1) return 0;
    best = std::min(best, s);
    total += s;
  }
  return 2.0 * double(n) / std::max(best, 1e-9);
}

namespace {

// `chains` independent dependency chains per lane, each advanced `depth`
// times per iteration of a uniform loop of `iterations`: every chain value
// lives across the loop (load at the head, store at the latch, once per
// iteration), the rest is straight arithmetic. The chains start from
// different values and step by different amounts, so no pass can merge them.
// The body advances `group` chains at a time, all `depth` steps, then the
// next group: the order of independent operations only (the work and the
// chains are the same for every group), chosen so that a group's live values
// fit the tier's vector registers (the core's out-of-order window overlaps
// the groups).
Ceiling make_ceiling(bool fma, unsigned chains, unsigned depth, unsigned group, unsigned iterations, unsigned grid,
                     unsigned block) {
  const char* t = fma ? "f32" : "i32";
  std::string s = fmt::format(
      "; {} ceiling: {} independent chains of {} per lane, {} per iteration ({} chains at a time), {} iterations\n",
      fma ? "f32 fma" : "i32 iadd", chains, fma ? "ffma" : "iadd", depth, group, iterations);
  s += fma ? "func \"ceiling_fma\" {\n" : "func \"ceiling_iadd\" {\n";
  s += "  var \"gid\" i32\n  var \"i\" i32\n";
  for (unsigned c = 0; c < chains; ++c) s += fmt::format("  var \"x{}\" {}\n", c, t);
  s += "  var \"out\" i32\n";
  unsigned v = 0;
  auto val = [&] { return v++; };
  // entry: x_c = gid (as f32 scaled down, or i32) + c; i = 0
  s += "b0 \"entry\":\n";
  unsigned gid = val();
  s += fmt::format("  %{} = get_var i32 #0x0\n", gid);
  for (unsigned c = 0; c < chains; ++c) {
    unsigned k = val(), x = val();
    s += fmt::format("  %{} = const i32 #0x{:x}\n", k, c * 977 + 1);
    s += fmt::format("  %{} = iadd i32 %{}, %{}\n", x, gid, k);
    if (fma) {
      unsigned f = val(), sc = val(), y = val();
      s += fmt::format("  %{} = itof.u f32 %{}\n", f, x);
      s += fmt::format("  %{} = const f32 #0x{:x}\n", sc, 0x33800000u);  // 2^-24: values in [0, 1)
      s += fmt::format("  %{} = fmul f32 %{}, %{}\n", y, f, sc);
      x = y;
    }
    s += fmt::format("  set_var %{}, #0x{:x}\n", x, 2 + c);
    val();
  }
  unsigned zero = val();
  s += fmt::format("  %{} = const i32 #0x0\n  set_var %{}, #0x1\n  br b1\n", zero, zero);
  val();
  // loop body
  s += "b1 \"body\":\n";
  std::vector<unsigned> cur(chains);
  for (unsigned c = 0; c < chains; ++c) {
    cur[c] = val();
    s += fmt::format("  %{} = get_var {} #0x{:x}\n", cur[c], t, 2 + c);
  }
  // One multiplier m < 1 and addend a for every chain (fma: x = x * m + a
  // stays bounded, away from denormals), or one step (iadd: x = x + step):
  // few live values besides the chains, so they all stay in registers.
  std::vector<unsigned> m(chains), a(chains);
  if (fma) {
    m[0] = val(), a[0] = val();
    s += fmt::format("  %{} = const f32 #0x3f000000\n  %{} = const f32 #0x3e800000\n", m[0], a[0]);  // 0.5, 0.25
  } else {
    // A step that is not a constant (gid-derived), so no pass folds a chain's adds together.
    unsigned g = val(), k = val();
    a[0] = val();
    s += fmt::format("  %{} = get_var i32 #0x0\n  %{} = const i32 #0x3\n  %{} = xor i32 %{}, %{}\n", g, k, a[0], g, k);
  }
  for (unsigned c = 1; c < chains; ++c) m[c] = m[0], a[c] = a[0];
  for (unsigned g = 0; g < chains; g += group)
    for (unsigned d = 0; d < depth; ++d)
      for (unsigned c = g; c < std::min(chains, g + group); ++c) {
        unsigned n = val();
        if (fma) s += fmt::format("  %{} = ffma f32 %{}, %{}, %{}\n", n, cur[c], m[c], a[c]);
        else s += fmt::format("  %{} = iadd i32 %{}, %{}\n", n, cur[c], a[c]);
        cur[c] = n;
      }
  for (unsigned c = 0; c < chains; ++c) {
    s += fmt::format("  set_var %{}, #0x{:x}\n", cur[c], 2 + c);
    val();
  }
  unsigned i = val(), one = val(), i1 = val(), lim = val(), more = val();
  s += fmt::format("  %{} = get_var i32 #0x1\n  %{} = const i32 #0x1\n  %{} = iadd i32 %{}, %{}\n", i, one, i1, i, one);
  s += fmt::format("  set_var %{}, #0x1\n", i1);
  val();
  s += fmt::format("  %{} = const i32 #0x{:x}\n  %{} = icmp.ult i1 %{}, %{}\n  cond_br %{}, b1, b2\n", lim, iterations,
                   more, i1, lim, more);
  // exit: out = the chains combined (bits), so none is dead
  s += "b2 \"done\":\n";
  unsigned acc = 0;
  for (unsigned c = 0; c < chains; ++c) {
    unsigned x = val();
    s += fmt::format("  %{} = get_var {} #0x{:x}\n", x, t, 2 + c);
    if (fma) {
      unsigned b = val();
      s += fmt::format("  %{} = bitcast i32 %{}\n", b, x);
      x = b;
    }
    if (c == 0) {
      acc = x;
    } else {
      unsigned n = val();
      s += fmt::format("  %{} = xor i32 %{}, %{}\n", n, acc, x);
      acc = n;
    }
  }
  s += fmt::format("  set_var %{}, #0x{:x}\n  return\n}}\n", acc, 2 + chains);
  Ceiling c;
  c.name = fma ? "ceiling-fma" : "ceiling-iadd";
  c.lane_ops = uint64_t(grid) * block * iterations * depth * chains;
  c.doc = json{{"gpurc", 1},
               {"isa", "ir"},
               {"name", c.name},
               {"program", {{"asm", s}}},
               {"launch", {{"grid", {grid}}, {"block", {block}}}},
               {"state", {{"vars", {{"gid", {{"thread", "global_id"}}}}}}}};
  return c;
}

}  // namespace

std::vector<Ceiling> ceiling_kernels(unsigned vector_registers) {
  // 8 chains of 8: enough independent work to cover the latency of FMA (4
  // cycles, 2 ports) and more than enough for iadd. With 32 vector registers
  // the 8 chains advance together. With 16 (AVX2) the x64 loop lowering
  // leaves the body 5 registers besides the chains' homes (docs/
  // backend_x64.md, "the ceiling rows on AVX2"): 8 interleaved chains and their 2
  // operands spilled every step to the frame (a store and a reload per
  // operation, 2.1-2.5x the time of the unspilled iadd kernel on Zen 3), so
  // there 2 chains advance at a time.
  const unsigned group = vector_registers >= 32 ? 8 : 2;
  // 8 blocks of 256: a launch of ~0.3-0.8 ms, so the best of the repeated
  // launches (bench.cpp, measure) finds runs the scheduler did not interrupt
  // on a loaded host (32 blocks took ~3 ms per launch, and with a loaded
  // 2-core host few launches of a 0.3 s measurement ran uninterrupted).
  return {make_ceiling(true, 8, 8, group, 64, 8, 256), make_ceiling(false, 8, 8, group, 64, 8, 256)};
}

}  // namespace gpurc::cli::bench_rows
