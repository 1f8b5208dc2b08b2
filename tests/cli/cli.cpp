#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "recompiler/cli.h"
#include "tests/cli/cli_run.h"
#include "recompiler/cli_verbs.h"
#include "recompiler/engine.h"

namespace gpurc_test_cli_cli {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

using cli_test::Result;
using cli_test::run;

std::string example(const std::string& name) { return std::string(GPURC_TEST_DATA) + "/examples/ir/" + name; }

// A scratch folder for files the tests write, removed at exit.
struct Scratch {
  fs::path dir = fs::temp_directory_path() / ("gpurc-cli-test-" + std::to_string(getpid()));
  Scratch() { fs::create_directories(dir); }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir / name, std::ios::binary) << text;
    return (dir / name).string();
  }
};

json load(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in);
}

// The saxpy example as a document whose program is inline, so a modified copy
// can live anywhere.
json saxpy_doc() {
  json d = load(example("saxpy.json"));
  std::ifstream in(example("saxpy.ir"));
  std::stringstream ss;
  ss << in.rdbuf();
  d["program"] = {{"asm", ss.str()}};
  return d;
}

}  // namespace

TEST_CASE("cli: --help lists the eight verbs and every verb has --help") {
  Result r = run({"--help"});
  CHECK(r.rc == 0);
  for (const char* verb : {"asm", "disasm", "replay", "fuzz", "bench", "ir", "host", "engines"}) {
    CHECK(r.out.find(verb) != std::string::npos);
    Result h = run({verb, "--help"});
    CHECK(h.rc == 0);
    CHECK(h.out.find("--help") != std::string::npos);
    CHECK(h.out.find(verb) != std::string::npos);
  }
  CHECK(run({"replay", "--help"}).out.find("--compare") != std::string::npos);
}

TEST_CASE("cli: bad arguments exit 2 with a message") {
  CHECK(run({}).rc == 2);
  CHECK(run({"frobnicate"}).rc == 2);
  CHECK(run({"replay"}).rc == 2);  // missing FILE
  Result r = run({"replay", example("saxpy.json"), "--bogus"});
  CHECK(r.rc == 2);
  CHECK_FALSE(r.err.empty());
  r = run({"replay", example("saxpy.json"), "--engine", "warp-drive"});
  CHECK(r.rc == 2);
  CHECK(r.err.find("warp-drive") != std::string::npos);
  CHECK(run({"replay", example("saxpy.json"), "--compare", "interp"}).rc == 2);
  CHECK(run({"replay", example("saxpy.json"), "--threads", "many"}).rc == 2);
  r = run({"disasm", "--isa", "z80", example("saxpy.ir")});
  CHECK(r.rc == 2);
  CHECK(r.err.find("unknown isa") != std::string::npos);
  CHECK(run({"disasm", "--isa", "tesla", "/nonexistent/file.bin"}).rc == 2);
  CHECK(run({"asm", "--isa", "tesla"}).rc == 2);
  CHECK(run({"disasm", "--isa", "tesla", "--variant", "nv50-not-a-variant", example("saxpy.ir")}).rc == 2);
  {
    Scratch sc;
    r = run({"fuzz", "--isa", "bifrost", "--iterations", "3", "--out", sc.dir.string()});
  }
  CHECK(r.rc == 0);
  CHECK(r.out.find("fuzz bifrost: 3 programs") != std::string::npos);
  CHECK(run({"fuzz", "--ir", "--isa", "tesla"}).rc == 2);
  CHECK(run({"fuzz"}).rc == 2);
  CHECK(run({"fuzz", "--ir", "--engines", "sse9"}).rc == 2);
  r = run({"bench", "--isa", "bifrost", "--seconds", "0.01", "--threads", "1"});
  CHECK(r.rc == 0);
  CHECK(r.out.find("bifrost-memory") != std::string::npos);
  CHECK(run({"ir", "/nonexistent.ir"}).rc == 2);
  CHECK(run({"ir", example("saxpy.ir"), "--isa", "tesla"}).rc == 2);
  CHECK(run({"host", example("saxpy.ir"), "--engine", "interp"}).rc == 2);
}

TEST_CASE("cli: hex text input") {
  std::vector<uint8_t> b;
  std::string err;
  REQUIRE(cli::parse_hex_text("0x12345678, 0xAB\n9", 4, b, err));
  CHECK(b == std::vector<uint8_t>{0x78, 0x56, 0x34, 0x12, 0xab, 0, 0, 0, 9, 0, 0, 0});
  REQUIRE(cli::parse_hex_text("0a0B 0x0c,\n0d", 1, b, err));
  CHECK(b == std::vector<uint8_t>{0x0a, 0x0b, 0x0c, 0x0d});
  CHECK_FALSE(cli::parse_hex_text("0x123456789", 4, b, err));
  CHECK_FALSE(cli::parse_hex_text("abc", 1, b, err));
  CHECK_FALSE(cli::parse_hex_text("12 zz", 1, b, err));
  CHECK(err.find("offset") != std::string::npos);
  CHECK(cli::format_hex_text({0x78, 0x56, 0x34, 0x12}, 4) == "0x12345678\n");
  CHECK(cli::format_hex_text({1, 2}, 1) == "01 02\n");

  Scratch s;
  std::string bad = s.write("bad.hex", "0xZZ");
  CHECK(run({"disasm", "--isa", "tesla", "--hex", bad}).rc == 2);
}

TEST_CASE("cli: tesla program types in --variant (chip:vp) select the operand spaces") {
  // A vertex program's a[] source is s[] in compute code (docs/tesla.md,
  // program types): the same words print differently, and asm/disasm take
  // the typed variant the replay and fuzz verbs take.
  Scratch s;
  std::string src = s.write("vp.asm", "mul rn f32 $r0 a[0x4] c0[0x0]\nexit nop\n");
  std::string hex = s.write("vp.hex", "");
  Result a = run({"asm", "--isa", "tesla", "--variant", "g200:vp", "--hex", "-o", hex, src});
  REQUIRE(a.rc == 0);
  Result vp = run({"disasm", "--isa", "tesla", "--variant", "g200:vp", "--hex", "--raw", hex});
  REQUIRE(vp.rc == 0);
  CHECK(vp.out.find("mul rn f32 $r0 a[0x4] c0[0x0]") != std::string::npos);
  Result cp = run({"disasm", "--isa", "tesla", "--hex", "--raw", hex});
  REQUIRE(cp.rc == 0);
  CHECK(cp.out.find("a[") == std::string::npos);
  CHECK(cp.out.find("s[") != std::string::npos);
  CHECK(run({"asm", "--isa", "tesla", "--variant", "g200:vp", src}).rc == 0);
  CHECK(run({"asm", "--isa", "tesla", src}).rc != 0);  // no a[] in compute programs
  CHECK(run({"disasm", "--isa", "tesla", "--variant", "g200:zz", "--hex", hex}).rc == 2);
}

// Expected words: picasso 2.7.1 (devkitPro, built from source) on the same
// text, without and with -n. picasso inserts a NOP (0x84000000) before
// .else where the if part would end on a CALL; -n writes none and warns.
TEST_CASE("cli: asm -n is picasso -n (no padding NOP) for pica200 and refused elsewhere") {
  Scratch s;
  std::string src = s.write("pad.vsh",
                            ".bool b\n.out outpos position\n.proc helper\n    mov outpos, v0\n.end\n"
                            ".proc main\n    ifu b\n        call helper\n    .else\n        mov outpos, v1\n"
                            "    .end\n    end\n.end\n");
  auto words = [](const std::string& hex) {
    std::string w;
    std::istringstream is(hex);
    for (std::string t; is >> t;) w += (w.empty() ? "" : " ") + t.substr(2);
    return w;
  };
  const std::string with_nop =
      "424c5644 00000001 00000054 504c5644 00000000 00000028 00000006 00000040 00000001 00000048 00000000 "
      "00000000 00000000 4c000000 9c001001 90000001 84000000 4c001000 88000000 0000036f 00000000 454c5644 "
      "00001002 00000001 00000006 00010000 00000000 00000040 00000000 00000040 00000000 00000040 00000001 "
      "00000048 00000001 00000050 00000002 00000000 0000000f 00000000 00780078 00000062";
  const std::string without =
      "424c5644 00000001 00000050 504c5644 00000000 00000028 00000005 0000003c 00000001 00000044 00000000 "
      "00000000 00000000 4c000000 9c000c01 90000001 4c001000 88000000 0000036f 00000000 454c5644 00001002 "
      "00000001 00000005 00010000 00000000 00000040 00000000 00000040 00000000 00000040 00000001 00000048 "
      "00000001 00000050 00000002 00000000 0000000f 00000000 00780078 00000062";
  Result a = run({"asm", "--isa", "pica200", src});
  REQUIRE(a.rc == 0);
  CHECK(words(a.out) == with_nop);
  Result n = run({"asm", "--isa", "pica200", "-n", src});
  REQUIRE(n.rc == 0);
  CHECK(words(n.out) == without);
  Result nl = run({"asm", "--isa", "pica200", "--no-nop", src});
  CHECK(words(nl.out) == without);
  Result t = run({"asm", "--isa", "tesla", "-n", s.write("t.asm", "exit nop\n")});
  CHECK(t.rc == 2);
  CHECK(t.err.find("-n is a pica200 option") != std::string::npos);
}

TEST_CASE("cli: replay of every bundled ir example passes on the interpreter and the JIT") {
  std::vector<std::string> engines = {"interp"};
  if (engine_available(Engine::Jit)) engines.push_back("jit");
  for (const char* name : {"saxpy.json", "block_sum.json", "collatz.json"})
    for (const auto& e : engines) {
      CAPTURE(name);
      CAPTURE(e);
      Result r = run({"replay", example(name), "--engine", e});
      CHECK(r.rc == 0);
      CHECK(r.out.find("expect: pass") != std::string::npos);
      if (r.rc != 0) MESSAGE(std::string(r.out + r.err));
    }
}

TEST_CASE("cli: replay --json shape and instruction counting") {
  Result r = run({"replay", example("saxpy.json"), "--engine", "interp", "--json"});
  REQUIRE(r.rc == 0);
  json j = json::parse(r.out);
  CHECK(j["engine"] == "interp");
  CHECK(j["expect"] == "pass");
  CHECK(j["mismatches"].is_array());
  CHECK(j["mismatches"].empty());
  REQUIRE(j["memory"].contains("y"));
  CHECK(j["memory"]["y"]["f32"].size() == 1024);
  CHECK(j["memory"]["y"]["f32"][3] == 6.5);
  // 1024 threads run the 17 instructions of the single block once each.
  CHECK(j["stats"]["guest_instructions"] == 1024 * 17);
  CHECK(j["stats"]["compile_us"].is_number());
  CHECK(j["stats"]["run_us"].is_number());
  CHECK(j["vars"].contains("i"));

  r = run({"replay", example("collatz.json"), "--engine", "interp", "--json"});
  REQUIRE(r.rc == 0);
  j = json::parse(r.out);
  CHECK(j["vars"]["steps"]["u32"][26] == 111);  // 27 takes 111 steps
  CHECK(j["stats"]["guest_instructions"].get<uint64_t>() > 200 * 10);
}

TEST_CASE("cli: replay --compare reports agreement and differences") {
  std::string second = engine_available(Engine::Jit) ? "jit" : "interp";
  Result r = run({"replay", example("saxpy.json"), "--compare", "interp," + second});
  CHECK(r.rc == 0);
  CHECK(r.out.find("engines agree") != std::string::npos);
  r = run({"replay", example("saxpy.json"), "--compare", "interp," + second, "--json"});
  REQUIRE(r.rc == 0);
  json j = json::parse(r.out);
  CHECK(j["runs"].size() == 2);
  CHECK(j["engines_agree"] == true);
  CHECK(j["differences"].empty());
}

TEST_CASE("cli: replay exit statuses for failed expect, guest faults and invalid files") {
  Scratch s;
  json d = saxpy_doc();
  d["expect"]["memory"][0]["f32"][5] = 11.0;  // really 10.5
  Result r = run({"replay", s.write("wrong.json", d.dump()), "--engine", "interp"});
  CHECK(r.rc == 1);
  CHECK(r.out.find("memory y[5]: expected 11.0, got 10.5") != std::string::npos);

  d = saxpy_doc();
  d["expect"]["memory"][0]["f32"][5] = 10.5000009537;  // one ulp above 10.5
  d["expect"]["tolerance"] = {{"ulp", 1}};
  CHECK(run({"replay", s.write("ulp.json", d.dump()), "--engine", "interp"}).rc == 0);

  d = saxpy_doc();
  d["memory"][1]["size"] = 2048;  // y too small: thread 512 stores out of bounds
  d.erase("expect");
  r = run({"replay", s.write("fault.json", d.dump()), "--engine", "interp"});
  CHECK(r.rc == 3);
  CHECK(r.out.find("out-of-bounds") != std::string::npos);
  r = run({"replay", s.write("fault.json", d.dump()), "--engine", "interp", "--json"});
  CHECK(r.rc == 3);
  CHECK(json::parse(r.out)["fault"]["kind"] == "out-of-bounds");

  // A guest that never ends is a watchdog fault on every engine.
  json forever = {{"gpurc", 1}, {"isa", "ir"}, {"launch", {{"grid", {2}}, {"block", {40}}, {"budget", 100000}}},
                  {"program", {{"asm", "func \"forever\" {\n  var \"x\" i32\nb0:\n  br b1\nb1:\n"
                                       "  %0 = get_var i32 #0x0\n  %1 = const i32 #0x1\n  %2 = iadd i32 %0, %1\n"
                                       "  set_var %2, #0x0\n  br b1\n}\n"}}}};
  std::string fpath = s.write("forever.json", forever.dump());
  for (Engine e : host_engines()) {
    CAPTURE(engine_name(e));
    r = run({"replay", fpath, "--engine", engine_name(e)});
    CHECK(r.rc == 3);
    CHECK(r.out.find("watchdog") != std::string::npos);
  }

  auto invalid = [&](json doc, const std::string& needle) {
    Result x = run({"replay", s.write("invalid.json", doc.dump()), "--engine", "interp"});
    CHECK(x.rc == 2);
    CHECK_MESSAGE(x.err.find(needle) != std::string::npos, x.err);
  };
  d = saxpy_doc();
  d["gpurc"] = 2;
  invalid(d, "version");
  d = saxpy_doc();
  d["isa"] = "bifrost";
  invalid(d, "program: bifrost: line 1");  // the saxpy text is not Mesa syntax
  d = saxpy_doc();
  d["launch"]["grid"] = json::array({0});
  invalid(d, "launch.grid");
  d = saxpy_doc();
  d["memory"][0]["init"] = {{"f32", {1.0, "fast"}}};
  invalid(d, "memory[0] (x).init.f32[1]");
  d = saxpy_doc();
  d["memory"][1]["address"] = "0x100800";  // overlaps x
  invalid(d, "overlaps");
  d = saxpy_doc();
  d["state"]["vars"]["nope"] = {{"u32", {1}}};
  invalid(d, "state.vars.nope");
  d = saxpy_doc();
  d["program"]["asm"] = "func \"x\" {\nb0:\n  %0 = frobnicate i32\n}\n";
  invalid(d, "program");
  d = saxpy_doc();
  d["expect"]["memory"][0]["name"] = "zz";
  invalid(d, "zz");
  r = run({"replay", s.write("notjson.json", "{ not json")});
  CHECK(r.rc == 2);
  CHECK(r.err.find("JSON") != std::string::npos);
}

TEST_CASE("cli: ir prints every pass and host prints host code") {
  Result r = run({"ir", example("saxpy.ir")});
  CHECK(r.rc == 0);
  CHECK(r.out.find("== input ==") != std::string::npos);
  CHECK(r.out.find("== construct_ssa ==") != std::string::npos);
  r = run({"ir", example("saxpy.json"), "--no-cse"});  // the program of a replay file
  CHECK(r.rc == 0);
  CHECK(r.out.find("== cse ==") == std::string::npos);
  if (engine_available(Engine::Jit)) {
    r = run({"host", example("saxpy.ir")});
    CHECK(r.rc == 0);
    CHECK(r.out.find("bytes of host code") != std::string::npos);
    CHECK(r.out.find("ret") != std::string::npos);
  }
  // Every registered tier the host lacks is refused; every one it has lists code.
  for (size_t i = 0; i < all_tiers().size(); ++i) {
    Engine t = Engine::tier_at(i);
    CAPTURE(engine_name(t));
    CHECK(run({"host", example("saxpy.ir"), "--engine", engine_name(t)}).rc == (engine_available(t) ? 0 : 2));
  }
  // jit-a64 by name: listed on an ARM64 build, unknown (not registered) on an x86-64 one.
  Engine a64;
  const bool a64_runs = parse_engine("jit-a64", a64) && engine_available(a64);
  CHECK(run({"host", example("saxpy.ir"), "--engine", "jit-a64"}).rc == (a64_runs ? 0 : 2));
}

TEST_CASE("cli: engines lists the registry; fuzz --engines takes registry names and the short aliases") {
  Scratch s;
  Result r = run({"engines"});
  CHECK(r.rc == 0);
  CHECK(r.out.find("interp ") == 0);
  for (size_t i = 0; i < all_tiers().size(); ++i) {
    Engine t = Engine::tier_at(i);
    std::string name = engine_name(t);
    CAPTURE(name);
    CHECK(r.out.find("\n" + name + " ") != std::string::npos);
    Engine back;
    REQUIRE(parse_engine(name, back));
    CHECK(back == t);
    REQUIRE(name.rfind("jit-", 0) == 0);
    REQUIRE(parse_engine(name.substr(4), back));  // the fuzzers' former short name
    CHECK(back == t);
    if (!engine_available(t)) continue;
    for (const std::string& given : {name, name.substr(4)}) {
      Result f = run({"fuzz", "--ir", "--iterations", "3", "--engines", given, "--out", (s.dir / "fuzz").string()});
      CHECK(f.rc == 0);
      CHECK(f.out.find(name) != std::string::npos);  // reports name the tier by its registry name
    }
  }
  CHECK(run({"fuzz", "--ir", "--iterations", "1", "--engines", "interp"}).rc == 2);
  CHECK(run({"fuzz", "--ir", "--iterations", "1", "--engines", "jit-nonexistent"}).rc == 2);
  Result n = run({"engines", "--native-ops"});
  CHECK(n.rc == 0);
  CHECK(n.out.rfind("| op |", 0) == 0);
}

TEST_CASE("cli: fuzz exit status follows its mismatches") {
  Scratch s;
  Result r = run({"fuzz", "--ir", "--iterations", "20", "--seed", "7", "--out", (s.dir / "fuzz").string()});
  CHECK((r.rc == 0 || r.rc == 1));
  CHECK((r.rc == 0) == (r.out.find(", 0 mismatches") != std::string::npos && r.err.empty()));
  CHECK(r.out.find("20 programs") != std::string::npos);
}

// The output shape of bench --json on one tiny kernel (no speed is checked:
// benchmarks are measurements, not tests).
TEST_CASE("cli: GPURC_JIT_LISTINGS lists every installed function with its entry address") {
  if (!engine_available(Engine::Jit)) return;
  Scratch s;
  const fs::path file = s.dir / "installed.txt";
  setenv("GPURC_JIT_LISTINGS", file.c_str(), 1);
  Result r = run({"host", example("saxpy.ir")});
  unsetenv("GPURC_JIT_LISTINGS");
  CHECK(r.rc == 0);
  std::ifstream in(file);
  std::string first, second;
  std::getline(in, first);
  std::getline(in, second);
  // "entry <hex address> <arch>", then the listing from offset 0.
  CHECK(first.rfind("entry ", 0) == 0);
  CHECK((first.find(" x64") != std::string::npos || first.find(" a64") != std::string::npos));
  CHECK(second.find("       0  ") == 0);
  // Unset: nothing more is written.
  const auto size = fs::file_size(file);
  CHECK(run({"host", example("saxpy.ir")}).rc == 0);
  CHECK(fs::file_size(file) == size);
}

TEST_CASE("cli: bench --json lists every host engine per kernel") {
  Scratch s;
  s.write("tiny.json", saxpy_doc().dump());
  Result r = run({"bench", "--json", "--dir", s.dir.string(), "--seconds", "0.01", "--threads", "1"});
  REQUIRE(r.rc == 0);
  json j = json::parse(r.out);
  REQUIRE(j.is_array());
  // Kernel rows, one per engine; the reference rows measured in the same
  // run: two ceiling kernels per JIT tier, one memcpy row per traffic size.
  std::vector<json> kernels, ceilings, copies;
  for (const json& row : j) {
    CHECK(row["isa"] == "ir");
    if (row["row"] == "kernel") kernels.push_back(row);
    else if (row["row"] == "ceiling") ceilings.push_back(row);
    else if (row["row"] == "memcpy") copies.push_back(row);
    else FAIL("unknown row kind " << row.dump());
  }
  CHECK(kernels.size() == host_engines().size());
  CHECK(ceilings.size() == 2 * host_jit_tiers().size());
  REQUIRE(copies.size() == 1);
  const uint64_t traffic = copies[0]["traffic_bytes"].get<uint64_t>();
  CHECK(traffic > 0);
  CHECK(copies[0]["bytes_per_s"].get<double>() > 0);
  for (const json& row : ceilings) CHECK(row["lane_ops_per_s"].get<double>() > 0);
  for (const json& row : kernels) {
    CHECK(row["kernel"] == "saxpy");
    CHECK(row["lane_instructions_per_s"].get<double>() > 0);
    CHECK(row["items_per_s"].get<double>() > 0);
    CHECK(row["compile_us"].is_number());
    CHECK(row["expect"] == "pass");
    CHECK(row["traffic_bytes"].get<uint64_t>() == traffic);
    CHECK(row["memcpy_fraction"].get<double>() ==
          doctest::Approx(row["bytes_per_s"].get<double>() / row["memcpy_bytes_per_s"].get<double>()));
    // JIT rows are compared with their tier's ceiling; the interpreter is not.
    CHECK(row.contains("ceiling_fraction") == (row["engine"] != "interp"));
  }
  CHECK(kernels[0]["engine"] == "interp");
  CHECK(run({"bench", "--dir", (s.dir / "nothing-here").string()}).rc == 2);
}

// The memcpy baseline is sized by the traffic a kernel must move: a buffer
// with no init that the kernel fills counts as written even when no expect
// names it (G13 vector_add: a and b read, c written, 256 KiB each).
TEST_CASE("cli: bench counts a written buffer that no expect names") {
  Scratch s;
  json d = load(std::string(GPURC_TEST_DATA) + "/bench/g13/memory.json");
  d["program"] = {{"asm_file", std::string(GPURC_TEST_DATA) + "/examples/g13/vector_add.s"}};
  REQUIRE_FALSE(d.contains("expect"));
  s.write("memory.json", d.dump());
  Result r = run({"bench", "--isa", "g13", "--json", "--dir", s.dir.string(), "--seconds", "0.01", "--threads", "1"});
  REQUIRE(r.rc == 0);
  bool saw_copy = false;
  for (const json& row : json::parse(r.out))
    if (row["row"] == "memcpy") {
      saw_copy = true;
      CHECK(row["traffic_bytes"].get<uint64_t>() == 3 * 262144);
    } else if (row["row"] == "kernel") {
      CHECK(row["traffic_bytes"].get<uint64_t>() == 3 * 262144);
    }
  CHECK(saw_copy);
}

}  // namespace gpurc_test_cli_cli
