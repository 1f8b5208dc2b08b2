// Tesla replay files: every example on every engine of the host, the
// examples' assembly round trip, and invalid documents as ReplayError.
#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <fstream>
#include <random>
#include <sstream>

#include "frontend/tesla/disasm.h"
#include "frontend/tesla/encoding.h"
#include "recompiler/replay.h"
#include "frontend/tesla/module/launch.h"

namespace gpurc_test_tesla_replay {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using replay::json;

namespace {

std::filesystem::path examples_dir() { return std::filesystem::path(GPURC_TEST_DATA) / "examples" / "tesla"; }

std::vector<std::filesystem::path> example_files(const char* ext) {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::directory_iterator(examples_dir()))
    if (e.path().extension() == ext) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A small valid document the error cases below modify.
json base_doc() {
  return json::parse(R"({
    "gpurc": 1, "isa": "tesla", "name": "t",
    "program": {"asm": "ld $r1 b32 s[0x10]\nshl b32 $r2 $r0 0x2\nlong add b32 $r1 $r1 $r2\nst b32 g0[$r1] $r0\nexit nop\n"},
    "launch": {"grid": [2], "block": [32]},
    "state": {"params": {"u32": ["0x1000"]}},
    "memory": [{"name": "out", "address": "0x1000", "size": 128}]
  })");
}

replay::ReplayRun run_doc(const json& d, Engine e = Engine::Interp, unsigned threads = 1) {
  return replay::run_document(d, examples_dir(), e, threads, false);
}

}  // namespace

TEST_CASE("tesla replay: every example passes its expect on every engine of the host") {
  auto files = example_files(".json");
  REQUIRE(files.size() >= 9);  // eight kernels + vecadd
  // Sanitizer runs (GPURC_TEST_LIGHT): one host-thread setting only.
  std::vector<unsigned> thread_counts = std::getenv("GPURC_TEST_LIGHT") ? std::vector<unsigned>{4} : std::vector<unsigned>{1, 4};
  for (const auto& f : files) {
    json doc = replay::load_file(f);
    for (Engine e : host_engines()) {
      for (unsigned threads : thread_counts) {
        CAPTURE(f.filename().string());
        CAPTURE(engine_name(e));
        CAPTURE(threads);
        replay::ReplayRun r = replay::run_document(doc, f.parent_path(), e, threads, false);
        INFO(r.fault.value_or(""));
        CHECK(!r.fault);
        auto mism = replay::check_expect(doc, r);
        for (const auto& m : mism) INFO(m.what << ": expected " << m.expected << ", got " << m.actual);
        CHECK(mism.empty());
        rt::LaunchConfig lc = replay::parse_launch(doc["launch"]);
        CHECK(r.items == lc.grid.count() * lc.block.count());
      }
    }
  }
}

TEST_CASE("tesla replay: the example kernels assemble and every instruction's listing assembles back to its bits") {
  for (const auto& f : example_files(".asm")) {
    CAPTURE(f.filename().string());
    tesla::Target t;
    // The replay file next to it names the variant (and program type, e.g. g200:vp).
    std::filesystem::path doc_path = f;
    doc_path.replace_extension(".json");
    if (std::filesystem::exists(doc_path)) {
      json doc = replay::load_file(doc_path);
      std::string err;
      if (doc.contains("variant")) REQUIRE(tesla::parse_target(doc["variant"].get<std::string>(), t, err));
    }
    std::vector<uint32_t> words;
    std::string err;
    REQUIRE_MESSAGE(tesla::assemble(read_text(f), t, words, err), err);
    for (size_t pos = 0; pos < words.size();) {
      tesla::Insn in = tesla::decode(words.data(), words.size(), pos, t);
      REQUIRE(in.valid);
      std::string text = tesla::format(in);
      CAPTURE(text);
      // The listing does not say which size was chosen: ask for the same one.
      uint64_t bits = 0;
      unsigned n = 0;
      bool ok = tesla::assemble_one(in.words == 2 ? "long " + text : text, t, bits, n, err);
      if (!ok && in.words == 2) ok = tesla::assemble_one(text, t, bits, n, err);
      REQUIRE_MESSAGE(ok, err);
      CHECK(n == in.words);
      CHECK(bits == in.bits);
      pos += in.words;
    }
  }
}

TEST_CASE("tesla replay: instruction counts and engines agree on the divergent examples") {
  for (const char* name : {"divergent.json", "collatz.json", "reduce.json"}) {
    CAPTURE(name);
    json doc = replay::load_file(examples_dir() / name);
    replay::ReplayRun counted = replay::run_document(doc, examples_dir(), Engine::Interp, 1, true);
    CHECK(counted.guest_instructions > counted.items);  // every thread runs several instructions
    for (Engine e : host_engines()) {
      replay::ReplayRun r = run_doc(doc, e, 2);
      CHECK(replay::compare_runs(counted, r).empty());
    }
  }
}

TEST_CASE("tesla replay: guest faults are reported, not crashes, on every engine") {
  json d = base_doc();
  d["memory"][0]["size"] = 64;  // threads 16.. of block 0 and all of block 1 write past the buffer
  for (Engine e : host_engines()) {
    CAPTURE(engine_name(e));
    replay::ReplayRun r = run_doc(d, e);
    REQUIRE(r.fault);
    CHECK(r.fault_kind == "out-of-bounds");
  }
  json w = base_doc();
  w["program"] = {{"asm", "L: bra #L\n"}};
  w["launch"]["budget"] = 1000;
  for (Engine e : host_engines()) {
    CAPTURE(engine_name(e));
    replay::ReplayRun r = run_doc(w, e);
    REQUIRE(r.fault);
    CHECK(r.fault_kind == "watchdog");
  }
}

TEST_CASE("tesla replay: saxpy with misaligned lanes faults the same way on every engine") {
  // saxpy (examples/tesla/saxpy.asm) whose x address adds tid.x >> shift:
  // with shift 4 lanes 16..31 of every warp read x misaligned (lane 0
  // aligned, another lane not); with shift 5 none does; x or y themselves
  // misaligned make every lane misaligned. Full warps (block 32, n 64),
  // partial ones (block 20, n 40: lanes 16..19 misaligned) and a bound check
  // that leaves out the misaligned lanes (n 16, one block). The engines
  // report the interpreter's fault (kind, lane and address in its message),
  // or none and the same memory. (The translation sends a misaligned lane
  // to an unbacked address, docs/tesla.md: the engines' message names that
  // address where the interpreter's names the misaligned one; the block,
  // warp and lane are the same, and every engine's message is the same.)
  auto number_after = [](const std::string& m, const std::string& key) {
    const size_t at = m.find(key);
    return at == std::string::npos ? -1L : std::strtol(m.c_str() + at + key.size(), nullptr, 10);
  };
  const std::string prog =
      "ld $r1 u16 s[0x2]\nld $r2 u16 s[0xc]\nlong mul $r1 u16 $r1l u16 $r2l\ncvt u32 $r3 u16 $r0l\n"
      "long add b32 $r1 $r1 $r3\nld $r4 b32 s[0x1c]\nset $c0 $r5 ge u32 $r1 $r4\n(lg $c0) bra #done\n"
      "shl b32 $r1 $r1 0x2\nld $r6 b32 s[0x10]\nlong add b32 $r6 $r6 $r1\nshr u32 $r11 $r3 SHIFT\n"
      "long add b32 $r6 $r6 $r11\nld $r7 b32 s[0x14]\nlong add b32 $r7 $r7 $r1\nld b32 $r8 g0[$r6]\n"
      "ld b32 $r9 g0[$r7]\nld $r10 b32 s[0x18]\nlong add f32 $r9 (mul $r10 $r8) $r9\nst b32 g0[$r7] $r9\n"
      "done: exit nop\n";
  struct Variant {
    const char* shift;
    unsigned block, grid, n;
    uint32_t x, y;
    bool faults;
  };
  const Variant variants[] = {
      {"0x4", 32, 2, 64, 0x1000, 0x2000, true},   // lanes 16..31 misaligned, full warps
      {"0x4", 20, 2, 40, 0x1000, 0x2000, true},   // partial warps, lanes 16..19
      {"0x4", 32, 1, 16, 0x1000, 0x2000, false},  // the bound check leaves them out
      {"0x5", 32, 2, 64, 0x1000, 0x2000, false},  // aligned everywhere
      {"0x5", 32, 2, 64, 0x1002, 0x2000, true},   // x misaligned in every lane
      {"0x5", 20, 2, 40, 0x1000, 0x2001, true},   // y misaligned, partial warps
  };
  for (const Variant& v : variants) {
    std::string src = prog;
    src.replace(src.find("SHIFT"), 5, v.shift);
    json d = json::parse(R"({
      "gpurc": 1, "isa": "tesla", "name": "misaligned",
      "memory": [{"name": "x", "address": "0x1000", "size": 512}, {"name": "y", "address": "0x2000", "size": 512}]
    })");
    d["program"] = {{"asm", src}};
    d["launch"] = {{"grid", {v.grid}}, {"block", {v.block}}};
    char x[16], y[16], n[16];
    std::snprintf(x, sizeof x, "0x%x", v.x);
    std::snprintf(y, sizeof y, "0x%x", v.y);
    std::snprintf(n, sizeof n, "0x%x", v.n);
    d["state"] = {{"params", {{"u32", {x, y, "0x40000000", n}}}}};
    CAPTURE(v.shift);
    CAPTURE(v.block);
    CAPTURE(v.n);
    CAPTURE(v.x);
    CAPTURE(v.y);
    replay::ReplayRun ref = run_doc(d);
    CHECK(bool(ref.fault) == v.faults);
    if (ref.fault) CHECK(ref.fault_kind == "out-of-bounds");
    std::optional<std::string> first;  // the first engine's message
    for (Engine e : host_engines()) {
      CAPTURE(engine_name(e));
      replay::ReplayRun r = run_doc(d, e);
      REQUIRE(bool(r.fault) == bool(ref.fault));
      if (ref.fault) {
        CAPTURE(*ref.fault);
        CAPTURE(*r.fault);
        CHECK(r.fault_kind == ref.fault_kind);
        CHECK(number_after(*r.fault, "lane ") == number_after(*ref.fault, "lane "));
        CHECK(number_after(*r.fault, "warp ") == number_after(*ref.fault, "warp "));
        CHECK(number_after(*r.fault, "block (") == number_after(*ref.fault, "block ("));
        CHECK(number_after(*ref.fault, "lane ") == (std::string(v.shift) == "0x4" ? 16 : 0));
        if (e != Engine::Interp) {  // the translated engines among themselves
          if (!first) first = *r.fault;
          CHECK(*r.fault == *first);
        }
      } else {
        CHECK(replay::compare_runs(ref, r).empty());
      }
    }
  }
}

TEST_CASE("tesla replay: saxpy through the launch, x and y overlapping, specials in the data, every engine") {
  // The bench's saxpy (private-state launch: the warp loop, the coalesced
  // phi, the load homes the MAD's strips and exact block read) over one
  // buffer holding x and y, y = x + `shift` elements (0: the same; 2 / -2:
  // overlapping), random floats with specials planted (subnormals, zeros,
  // inf, NaN, huge and tiny values) so some warps vote for the exact block,
  // n not a multiple of 32 (a partial last warp), and one variant whose
  // last lanes run past the buffer (a fault at the interpreter's lane).
  // Every engine's memory (or fault) against the interpreter's.
  auto number_after = [](const std::string& m, const std::string& key) {
    const size_t at = m.find(key);
    return at == std::string::npos ? -1L : std::strtol(m.c_str() + at + key.size(), nullptr, 10);
  };
  struct Variant {
    int shift;
    unsigned n;
    bool specials, past_end;
  };
  const Variant variants[] = {{64 * 4, 200, true, false}, {0, 200, true, false}, {2, 190, true, false},
                              {-2, 190, true, false},     {64 * 4, 256, false, false}, {2, 256, true, true}};
  for (const Variant& v : variants) {
    std::mt19937 rng(uint32_t(1900 + v.shift * 7 + v.n));
    json words = json::array();
    const unsigned count = 4096 / 4;
    static const char* specials[] = {"0x00000001", "0x80000000", "0x00000000", "0x7F800000",
                                     "0xFF800000", "0x7FC00001", "0x7E000000", "0x0C000000"};
    for (unsigned k = 0; k < count; ++k) {
      if (v.specials && rng() % 23 == 0) {
        words.push_back(specials[rng() % std::size(specials)]);
      } else {
        const uint32_t bits = (rng() & 0x80000000u) | ((100u + rng() % 50u) << 23) | (rng() & 0x7fffffu);
        char h[16];
        std::snprintf(h, sizeof h, "0x%08X", bits);
        words.push_back(h);
      }
    }
    // x at element 64 of the buffer, y at 64 + shift; the past-end variant
    // puts x near the buffer's end so the last lanes leave it.
    const uint32_t base = 0x100000, x = base + (v.past_end ? 4096 - 4 * 240 : 4 * 64);
    const uint32_t y = uint32_t(int64_t(x) + 4 * v.shift);
    json d = json::parse(R"({"gpurc": 1, "isa": "tesla", "name": "saxpy-overlap",
      "program": {"asm_file": "saxpy.asm"}, "launch": {"grid": [4], "block": [64]}})");
    d["memory"] = json::array({{{"name", "xy"}, {"address", "0x100000"}, {"size", 4096}, {"init", {{"u32", words}}}}});
    char xs[16], ys[16], ns[16];
    std::snprintf(xs, sizeof xs, "0x%x", x);
    std::snprintf(ys, sizeof ys, "0x%x", y);
    std::snprintf(ns, sizeof ns, "0x%x", v.n);
    d["state"] = {{"params", {{"u32", {xs, ys, "0x3FC00000", ns}}}}};
    CAPTURE(v.shift);
    CAPTURE(v.n);
    replay::ReplayRun ref = run_doc(d);
    REQUIRE(bool(ref.fault) == v.past_end);
    for (Engine e : host_engines()) {
      CAPTURE(engine_name(e));
      replay::ReplayRun r = run_doc(d, e);
      REQUIRE(bool(r.fault) == bool(ref.fault));
      if (ref.fault) {
        CHECK(r.fault_kind == ref.fault_kind);
        CHECK(number_after(*r.fault, "lane ") == number_after(*ref.fault, "lane "));
        CHECK(number_after(*r.fault, "warp ") == number_after(*ref.fault, "warp "));
      } else {
        CHECK(replay::compare_runs(ref, r).empty());
      }
    }
  }
}

TEST_CASE("tesla replay: the base document runs and writes tid.x per thread") {
  replay::ReplayRun r = run_doc(base_doc());
  REQUIRE(!r.fault);
  const replay::Observed* o = r.find("memory", "out");
  REQUIRE(o);
  for (unsigned i = 0; i < 32; ++i) {
    uint32_t v;
    std::memcpy(&v, o->bytes.data() + 4 * i, 4);
    CHECK(v == i);  // both blocks write tid.x at the same addresses
  }
}

TEST_CASE("tesla replay: invalid documents are ReplayError naming the field") {
  struct Case {
    const char* what;
    std::function<void(json&)> edit;
    const char* needle;
  };
  std::vector<Case> cases = {
      {"no program", [](json& d) { d.erase("program"); }, "program"},
      {"two sources", [](json& d) { d["program"]["words"] = json::array({"0xf0000001", "0xe0000781"}); }, "exactly one"},
      {"bad word", [](json& d) { d["program"] = {{"words", json::array({"0x1ffffffff"})}}; }, "program.words[0]"},
      {"asm error", [](json& d) { d["program"]["asm"] = "frobnicate $r1\n"; }, "program"},
      {"unknown variant", [](json& d) { d["variant"] = "gf100"; }, "variant"},
      {"unknown field", [](json& d) { d["inputs"] = json::object(); }, "inputs"},
      {"unknown program field", [](json& d) { d["program"]["type"] = "vertex"; }, "program.type"},
      {"3d grid", [](json& d) { d["launch"]["grid"] = json::array({2, 2, 2}); }, "grid"},
      {"huge block", [](json& d) { d["launch"]["block"] = json::array({32, 2000}); }, "block"},
      {"small s[]", [](json& d) { d["launch"]["shared_bytes"] = 8; }, "shared_bytes"},
      {"shared buffer over the launch block", [](json& d) { d["memory"][0]["space"] = "shared"; d["memory"][0]["address"] = "0x4"; }, "after the launch block"},
      {"g16", [](json& d) { d["memory"][0]["address"] = "0x1000000000"; }, "g0..g15"},
      {"entry outside the code", [](json& d) { d["program"]["entry"] = 0x100000; }, "program.entry"},
      {"kernel without cubin", [](json& d) { d["program"]["kernel"] = "k"; }, "program.kernel"},
      {"c16", [](json& d) { d["state"]["const"] = {{"c16", {{"u32", {1}}}}}; }, "state.const.c16"},
      {"bad params", [](json& d) { d["state"]["params"] = "0x10"; }, "state.params"},
      {"missing cubin kernel", [](json& d) { d["program"] = {{"binary_file", "vecadd.cubin"}, {"kernel", "nope"}}; }, "nope"},
      {"missing file", [](json& d) { d["program"] = {{"binary_file", "nope.bin"}}; }, "binary_file"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.what);
    json d = base_doc();
    c.edit(d);
    bool thrown = false;
    try {
      run_doc(d);
    } catch (const replay::ReplayError& e) {
      thrown = true;
      CHECK_MESSAGE(std::string(e.what()).find(c.needle) != std::string::npos, e.what());
    }
    CHECK(thrown);
  }
}

TEST_CASE("tesla run: interpreter blocks run in parallel only without atomics") {
  tesla_run::Kernel k;
  std::string err;
  REQUIRE(tesla::assemble("red add u32 g0[$r5] $r6\nexit nop\n", k.target, k.code, err));
  CHECK(!tesla_run::interp_blocks_parallel_safe(k));
  REQUIRE(tesla::assemble("st b32 g0[$r5] $r6\nexit nop\n", k.target, k.code, err));
  CHECK(tesla_run::interp_blocks_parallel_safe(k));
}

TEST_CASE("tesla replay: atomics on one word from many blocks on several host threads") {
  json doc = replay::load_file(examples_dir() / "histogram.json");
  const unsigned blocks = std::getenv("GPURC_TEST_LIGHT") ? 16 : 64, threads = blocks * 128;
  doc["launch"]["grid"] = json::array({blocks});
  doc["state"]["params"]["u32"][3] = threads;
  doc["state"]["const"]["c0"] = {{"u32", {0}}};  // every thread hits bin 0
  doc["memory"][0] = {{"name", "x"}, {"address", "0x100000"}, {"size", 4 * threads}, {"init", {{"iota", "u32"}}}};
  std::vector<uint64_t> bins(16, 0);
  bins[0] = threads;
  doc["expect"]["memory"] = {{{"name", "bins"}, {"u32", bins}}, {{"name", "total"}, {"u32", {threads}}}};
  for (Engine e : host_engines()) {
    CAPTURE(engine_name(e));
    for (int rep = 0; rep < 3; ++rep) {
      replay::ReplayRun r = replay::run_document(doc, examples_dir(), e, 4, false);
      REQUIRE(!r.fault);
      CHECK(replay::check_expect(doc, r).empty());
    }
  }
}

// program.entry: every thread starts at that word (interpreter and JIT).
// Here word 0 is a trap, so starting anywhere else than the entry faults.
TEST_CASE("tesla replay: an integer entry starts every thread at that word") {
  json d = base_doc();
  d["program"]["asm"] = "long trap\n" + d["program"]["asm"].get<std::string>();
  d["program"]["entry"] = 2;
  for (Engine e : host_engines()) {
    CAPTURE(engine_name(e));
    replay::ReplayRun r = run_doc(d, e);
    INFO(r.fault.value_or(""));
    REQUIRE(!r.fault);
    const replay::Observed* o = r.find("memory", "out");
    REQUIRE(o);
    uint32_t v;
    std::memcpy(&v, o->bytes.data() + 4 * 31, 4);
    CHECK(v == 31);
  }
  d["program"]["entry"] = 0;
  for (Engine e : host_engines()) {
    replay::ReplayRun r = run_doc(d, e);
    REQUIRE(r.fault);
    CHECK(r.fault_kind == "trap");
  }
}

namespace {
// Runs `d` on every engine and checks its expect.
void expect_everywhere(const json& d) {
  for (Engine e : host_engines()) {
    CAPTURE(engine_name(e));
    replay::ReplayRun r = run_doc(d, e, 2);
    INFO(r.fault.value_or(""));
    REQUIRE(!r.fault);
    auto mism = replay::check_expect(d, r);
    for (const auto& m : mism) INFO(m.what << ": expected " << m.expected << ", got " << m.actual);
    CHECK(mism.empty());
  }
}
}  // namespace

TEST_CASE("tesla replay: an access below or between buffers faults on every engine (the null pointer too)") {
  // Found by the libFuzzer target diff_tesla: the interpreter kept the
  // linear global memory readable from 0 to the last buffer's end, so a load
  // through a null pointer read zero there and faulted on the JIT tiers.
  const char* loads[] = {"mov b32 $r2 0x0\nld b32 $r6 g0[$r2]\nexit nop\n",       // below the first buffer
                         "mov b32 $r2 0x100010\nld b32 $r6 g14[$r2]\nexit nop\n",  // between the two
                         "mov b32 $r2 0x10001c\nst b32 g0[$r2] $r0\nexit nop\n"};  // straddling an end
  for (const char* code : loads) {
    json d = json::parse(R"({
      "gpurc": 1, "isa": "tesla", "name": "gap",
      "launch": {"grid": [1], "block": [32]},
      "memory": [{"name": "a", "address": "0x100000", "size": 16}, {"name": "b", "address": "0x100020", "size": 16}]
    })");
    d["program"] = {{"asm", code}};
    CAPTURE(code);
    for (Engine e : host_engines()) {
      CAPTURE(engine_name(e));
      replay::ReplayRun r = run_doc(d, e);
      REQUIRE(r.fault);
      CHECK(r.fault_kind == "out-of-bounds");
    }
  }
  // Inside a buffer the same kind of access runs.
  json ok = json::parse(R"({
    "gpurc": 1, "isa": "tesla", "name": "inside",
    "program": {"asm": "mov b32 $r2 0x100024\nld b32 $r6 g0[$r2]\nst b32 g0[$r2] $r6\nexit nop\n"},
    "launch": {"grid": [1], "block": [32]},
    "memory": [{"name": "a", "address": "0x100000", "size": 16}, {"name": "b", "address": "0x100020", "size": 16}]
  })");
  for (Engine e : host_engines()) {
    CAPTURE(engine_name(e));
    CHECK_FALSE(run_doc(ok, e).fault);
  }
}

TEST_CASE("tesla replay: global buffers below 4 GiB are one memory every g[i] sees (CUDA's pointers)") {
  // ptxas addresses global memory as g14[] with 32-bit pointers: a buffer at
  // 0x100000 is g14[0x100000] and g0[0x100000] alike.
  json d = json::parse(R"({
    "gpurc": 1, "isa": "tesla", "name": "g14",
    "program": {"asm": "ld $r1 b32 s[0x10]\nshl b32 $r2 $r0 0x2\nlong add b32 $r1 $r1 $r2\nld b32 $r3 g14[$r1]\nlong add b32 $r3 $r3 $r0\nst b32 g0[$r1] $r3\nexit nop\n"},
    "launch": {"grid": [1], "block": [4]},
    "state": {"params": {"u32": ["0x100000"]}},
    "memory": [{"name": "x", "address": "0x100000", "size": 16, "init": {"u32": [10, 20, 30, 40]}}],
    "expect": {"memory": [{"name": "x", "u32": [10, 21, 32, 43]}]}
  })");
  expect_everywhere(d);
  // A space with its own buffer, (3 << 32) + offset, stays separate: g3[a]
  // reads that buffer, g0[a] the linear memory.
  json s = json::parse(R"({
    "gpurc": 1, "isa": "tesla", "name": "g3",
    "program": {"asm": "shl b32 $r2 $r0 0x2\nld b32 $r3 g3[$r2]\nld b32 $r4 g0[$r2]\nlong add b32 $r3 $r3 $r4\nst b32 g5[$r2] $r3\nexit nop\n"},
    "launch": {"grid": [1], "block": [2]},
    "memory": [{"name": "linear", "address": "0x0", "size": 8, "init": {"u32": [1, 2]}},
               {"name": "own", "address": "0x300000000", "size": 8, "init": {"u32": [100, 200]}}],
    "expect": {"memory": [{"name": "linear", "u32": [101, 202]}, {"name": "own", "u32": [100, 200]}]}
  })");
  expect_everywhere(s);
}

TEST_CASE("tesla replay: shared buffers give every block's s[] initial bytes after the launch block") {
  // out[block * 4 + tid] = s[0x20 + 4 * tid] as the block starts; each
  // thread then overwrites its s[] word, which the other block must not see.
  json d = json::parse(R"({
    "gpurc": 1, "isa": "tesla", "name": "shared",
    "program": {"asm": "shl $a1 $r0 0x2\nld $r4 b32 s[$a1+0x20]\ncvt u32 $r6 u16 u16 s[0xc]\nshl b32 $r6 $r6 0x4\nshl b32 $r2 $r0 0x2\nlong add b32 $r2 $r2 $r6\nld $r1 b32 s[0x10]\nlong add b32 $r1 $r1 $r2\nst b32 s[$a1+0x20] $r6\nst b32 g0[$r1] $r4\nexit nop\n"},
    "launch": {"grid": [2], "block": [4], "shared_bytes": 64},
    "state": {"params": {"u32": ["0x1000"]}},
    "memory": [{"name": "table", "space": "shared", "address": "0x20", "size": 16, "init": {"u32": [5, 6, 7, 8]}},
               {"name": "out", "address": "0x1000", "size": 32}],
    "expect": {"memory": [{"name": "out", "u32": [5, 6, 7, 8, 5, 6, 7, 8]}, {"name": "table", "u32": [5, 6, 7, 8]}]}
  })");
  expect_everywhere(d);
  // Past the block's s[]: an error naming the buffer.
  json big = d;
  big["launch"]["shared_bytes"] = 0x28;
  bool thrown = false;
  try {
    run_doc(big);
  } catch (const replay::ReplayError& e) {
    thrown = true;
    CHECK(std::string(e.what()).find("table") != std::string::npos);
  }
  CHECK(thrown);
}

}  // namespace gpurc_test_tesla_replay
