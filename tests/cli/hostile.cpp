// Hostile sizes (absurd grids, buffers, vertex counts; --max-memory) fail
// with a clear error before anything is allocated, and every verb's exit
// statuses are the ones docs/cli.md gives.
#include <doctest/doctest.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/builder.h"
#include "ir/ir.h"
#include "recompiler/cli.h"
#include "tests/cli/cli_run.h"
#include "recompiler/cli_verbs.h"
#include "runtime/launch.h"
#include "runtime/memory.h"

namespace gpurc_test_cli_hostile {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

using cli_test::Result;
using cli_test::run;

struct Scratch {
  fs::path dir = fs::temp_directory_path() / ("gpurc-hostile-test-" + std::to_string(getpid()));
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

const char* kReturn = "func \"k\" {\nb0 \"entry\":\n  return\n}\n";

json ir_doc(json launch) { return {{"gpurc", 1}, {"isa", "ir"}, {"program", {{"asm", kReturn}}}, {"launch", launch}}; }

// Runs `gpurc replay` on `doc` and returns the result; the time it took must
// be short (the refusal comes before any allocation or run; generous for a
// loaded machine: running a 2^31-block grid would take hours).
Result replay_quickly(Scratch& s, const json& doc, std::vector<std::string> extra = {}) {
  std::string f = s.write("doc.json", doc.dump());
  std::vector<std::string> args = {"replay", f, "--engine", "interp"};
  args.insert(args.end(), extra.begin(), extra.end());
  auto t0 = std::chrono::steady_clock::now();
  Result r = run(args);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(20));
  return r;
}

}  // namespace

TEST_CASE("hostile sizes: absurd grids, buffers and vertex counts are refused up front") {
  Scratch s;
  // 2^31 blocks (of every ISA with grids), 2^32 threads.
  for (const char* isa : {"ir", "tesla", "g13"}) {
    CAPTURE(isa);
    json doc = ir_doc({{"grid", {65536, 32768}}, {"block", {1}}});
    doc["isa"] = isa;
    if (std::string(isa) == "tesla") doc["program"] = {{"asm", "exit nop\n"}};
    if (std::string(isa) == "g13") doc["program"] = {{"asm", "stop\n"}};
    Result r = replay_quickly(s, doc);
    CHECK(r.rc == 2);
    CHECK(r.err.find("2147483648 threads in the grid") != std::string::npos);
  }
  // A multi-GiB buffer, and buffers that only together exceed the limit.
  json big = ir_doc({{"grid", {1}}, {"block", {1}}});
  big["memory"] = {{{"name", "a"}, {"address", "0x100000"}, {"size", "0x200000000"}}};
  Result r = replay_quickly(s, big);
  CHECK(r.rc == 2);
  CHECK(r.err.find("buffer 'a'") != std::string::npos);
  CHECK(r.err.find("8 GiB") != std::string::npos);
  CHECK(r.err.find("--max-memory") != std::string::npos);
  json many = ir_doc({{"grid", {1}}, {"block", {1}}});
  many["memory"] = json::array();
  for (int i = 0; i < 4; ++i)
    many["memory"].push_back({{"name", "b" + std::to_string(i)}, {"address", 0x100000 + i * 0x10000000}, {"size", 0x100000}});
  CHECK(replay_quickly(s, many).rc == 0);  // 4 MiB in all
  r = replay_quickly(s, many, {"--max-memory", "2M"});
  CHECK(r.rc == 2);
  CHECK(r.err.find("buffer 'b2' with the other buffers needs 3 MiB") != std::string::npos);
  CHECK(r.err.find("memory limit of 2 MiB") != std::string::npos);
  // The limit is per command: the next one has the default again.
  CHECK(rt::memory_limit() >= (uint64_t(256) << 20));
  // Shared memory per block, and the per-thread state of a large grid.
  r = replay_quickly(s, ir_doc({{"grid", {4}}, {"block", {1}}, {"shared_bytes", 1 << 30}}), {"--max-memory", "64M"});
  CHECK(r.rc == 2);
  CHECK(r.err.find("launch.shared_bytes needs 1 GiB") != std::string::npos);
  r = replay_quickly(s, ir_doc({{"grid", {65536}}, {"block", {1024}}}), {"--max-memory", "16M"});
  CHECK(r.rc == 2);
  CHECK(r.err.find("per-thread state of 67108864 threads") != std::string::npos);
  // pica200: 2^20 vertices fit the format's limit, not a small memory limit.
  json pica = {{"gpurc", 1}, {"isa", "pica200"}, {"program", {{"words", {"0x88000000"}}}}, {"launch", {{"vertices", 1 << 20}}}};
  r = replay_quickly(s, pica, {"--max-memory", "64M"});
  CHECK(r.rc == 2);
  CHECK(r.err.find("the state of 1048576 vertices") != std::string::npos);
  // 2^20 EMITs in one geometry invocation: the reference stops at the JIT's
  // limit (2^16) with a fault instead of collecting primitives without bound.
  const char* emits = R"(.gsh point c0
.constf consts(1.0, -1.0, 0.0, 0.5)
.consti la(255, 0, 1, 0)
.consti lb(255, 0, 1, 0)
.consti lc(15, 0, 1, 0)
.out outPos position
.proc main
    mov outPos, consts
    for la
      for lb
        for lc
          setemit 0, prim
          emit
        .end
      .end
    .end
    end
.end
)";
  json gs = {{"gpurc", 1}, {"isa", "pica200"}, {"type", "geometry"}, {"program", {{"asm", emits}}}, {"launch", {{"vertices", 2}}}};
  for (const char* engine : {"interp", "jit"}) {
    CAPTURE(engine);
    r = run({"replay", s.write("gs.json", gs.dump()), "--engine", engine});
    CHECK(r.rc == 3);
    CHECK(r.out.find("EMIT limit") != std::string::npos);
  }
  // Deep nesting: error messages quote values, and printing recurses per level.
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  for (const std::string& text : {"{\"gpurc\": " + deep + ", \"isa\": \"ir\"}",
                                   "{\"gpurc\": 1, \"isa\": \"pica200\", \"variant\": " + deep + "}",
                                   "{\"gpurc\": 1, \"isa\": \"ir\", \"x\": \"[[[[\", \"y\": " + deep + "}"}) {
    r = run({"replay", s.write("deep.json", text)});
    CHECK(r.rc == 2);
    CHECK(r.err.find("nested deeper than 64 levels") != std::string::npos);
  }
  // --max-memory syntax.
  for (const char* bad : {"0", "12Q", "G", "-5", "99999999999999999999", "20000000000T"}) {
    CAPTURE(bad);
    CHECK(run({"replay", "x.json", "--max-memory", bad}).rc == 2);
  }
  uint64_t b = 0;
  std::string e;
  CHECK((cli::parse_size("4G", b, e) && b == (uint64_t(4) << 30)));
  CHECK((cli::parse_size("64KiB", b, e) && b == 65536));
  CHECK((cli::parse_size("512mb", b, e) && b == (uint64_t(512) << 20)));
  CHECK((cli::parse_size("1000", b, e) && b == 1000));
}

TEST_CASE("hostile sizes: rt::launch checks what its blocks allocate against the limit") {
  rt::set_memory_limit(uint64_t(1) << 20);
  rt::Memory mem;
  std::string err;
  CHECK(mem.add_buffer("a", ir::Space::Global, 0x1000, 512 << 10, err));
  CHECK_FALSE(mem.add_buffer("b", ir::Space::Global, 0x100000, 768 << 10, err));
  CHECK(err.find("more than the memory limit of 1 MiB") != std::string::npos);
  CHECK(mem.total_bytes() == (512 << 10));
  rt::LaunchConfig cfg;
  cfg.grid = {1, 1, 1};
  cfg.block = {32, 1, 1};
  cfg.shared_bytes = 768 << 10;  // with the 512 KiB buffer: over 1 MiB
  struct Never : ir::Executable {
    size_t frame_bytes() const override { return 0; }
    ir::RunStatus run(ir::WarpContext&) const override { FAIL("ran"); return ir::RunStatus::Done; }
  } never;
  rt::LaunchResult r = rt::launch(never, mem, cfg, nullptr, nullptr);
  CHECK(r.error.find("launch: the buffers and 1 block(s) of 32 threads at once needs") != std::string::npos);
  rt::set_memory_limit(0);
  CHECK(rt::memory_limit() <= rt::kDefaultMemoryLimit);
  CHECK(rt::format_bytes(1536) == "1.5 KiB");
  CHECK(rt::format_bytes(17) == "17 bytes");
}

TEST_CASE("exit statuses: every verb as docs/cli.md says") {
  Scratch s;
  const std::string root = GPURC_TEST_DATA;
  // Arguments.
  CHECK(run({}).rc == 2);
  CHECK(run({"frobnicate"}).rc == 2);
  CHECK(run({"--help"}).rc == 0);
  for (const char* verb : {"disasm", "asm", "ir", "host", "replay", "fuzz", "bench", "engines"}) {
    CAPTURE(verb);
    CHECK(run({verb, "--help"}).rc == 0);
    CHECK(run({verb, "--no-such-option"}).rc == 2);
  }
  CHECK(run({"fuzz", "merge", "--help"}).rc == 0);
  // disasm / asm.
  std::string words = s.write("w.hex", "0x4e000000\n");
  CHECK(run({"disasm", "--isa", "pica200", "--hex", words}).rc == 0);
  CHECK(run({"disasm", "--isa", "pica200", "--hex", s.write("bad.hex", "0xzz\n")}).rc == 2);
  CHECK(run({"disasm", "--isa", "nope", words}).rc == 2);
  CHECK(run({"disasm", "--isa", "pica200", (s.dir / "missing").string()}).rc == 2);
  CHECK(run({"asm", "--isa", "g13", s.write("ok.s", "stop\n")}).rc == 0);
  CHECK(run({"asm", "--isa", "g13", s.write("bad.s", "frob r1\n")}).rc == 2);
  CHECK(run({"asm", "--isa", "g13", "-o", (s.dir / "no/such/dir/x").string(), s.write("ok2.s", "stop\n")}).rc == 2);
  // ir / host / engines.
  CHECK(run({"ir", root + "/examples/ir/saxpy.ir"}).rc == 0);
  CHECK(run({"ir", s.write("bad.ir", "func {")}).rc == 2);
  CHECK(run({"host", root + "/examples/ir/saxpy.ir", "--engine", "interp"}).rc == 2);
  CHECK(run({"engines"}).rc == 0);
  // replay: 0 ran, 1 expect failed, 2 invalid, 3 guest fault.
  json ok = json::parse(std::ifstream(root + "/examples/ir/saxpy.json"));
  ok["program"] = {{"asm_file", root + "/examples/ir/saxpy.ir"}};
  CHECK(run({"replay", s.write("ok.json", ok.dump())}).rc == 0);
  json wrong = ok;
  wrong["expect"]["memory"][0]["f32"][0] = 12345.0;
  CHECK(run({"replay", s.write("wrong.json", wrong.dump())}).rc == 1);
  CHECK(run({"replay", s.write("invalid.json", "{\"gpurc\": 1}")}).rc == 2);
  json fault = ir_doc({{"grid", {1}}, {"block", {1}}});
  {
    ir::Function trap;
    trap.name = "k";
    trap.add_block();
    ir::Builder b(trap);
    b.emit(ir::Opcode::Trap, ir::Type::Void, {b.emit(ir::Opcode::EntryMask, ir::Type::I1, {})}, 0, 0, 7);
    b.ret();
    trap.compute_preds();
    fault["program"]["asm"] = ir::print(trap);
  }
  Result f = run({"replay", s.write("fault.json", fault.dump())});
  CHECK(f.rc == 3);
  CHECK(run({"replay", s.write("fault2.json", fault.dump()), "--compare", "interp,jit"}).rc == 3);
  CHECK(run({"replay", s.write("ok2.json", ok.dump()), "--compare", "interp"}).rc == 2);
  // fuzz: 0 no mismatch, 2 bad arguments.
  CHECK(run({"fuzz", "--ir", "--iterations", "2", "--out", (s.dir / "f").string()}).rc == 0);
  CHECK(run({"fuzz", "--isa", "nosuch"}).rc == 2);  // an ISA this build does not have
  CHECK(run({"fuzz", "--ir", "--first", "3"}).rc == 2);
  CHECK(run({"fuzz", "--ir", "--iterations", "1", "--json", (s.dir / "no/such/dir.json").string()}).rc == 2);
  // bench: 2 for a bad ISA or folder.
  CHECK(run({"bench", "--isa", "nope"}).rc == 2);
  CHECK(run({"bench", "--dir", (s.dir / "none").string()}).rc == 2);
}

}  // namespace gpurc_test_cli_hostile
