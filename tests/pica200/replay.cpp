// pica200 replay files: the examples (hand-worked expectations) on every
// engine, the bench kernels compared across engines, and invalid documents.
#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "frontend/pica200/assembler.h"
#include "recompiler/replay.h"

namespace gpurc_test_pica200_replay {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::replay;

namespace {

std::filesystem::path data(const std::string& rel) { return std::filesystem::path(GPURC_TEST_DATA) / rel; }

std::vector<std::filesystem::path> json_files(const std::string& dir) {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::directory_iterator(data(dir)))
    if (e.path().extension() == ".json") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::string mismatch_text(const std::vector<Mismatch>& ms) {
  std::string s;
  for (size_t i = 0; i < ms.size() && i < 8; ++i) s += ms[i].what + ": expected " + ms[i].expected + ", got " + ms[i].actual + "\n";
  return s;
}

// A minimal valid document to break one field at a time.
json base_doc() {
  return json::parse(R"({
    "gpurc": 1, "isa": "pica200",
    "program": {"asm": ".proc main\n mov o0, v0\n add o1, c3, v0\n end\n.end\n"},
    "launch": {"vertices": 2},
    "state": {"float_uniforms": {"c3": [1, 2, 3, 4]}},
    "inputs": {"v0": {"f32x4": [[1, 1, 1, 1], [-1, 0.5, "0x80000000", "inf"]]}},
    "expect": {"outputs": {"o1": {"f32x4": [[2, 3, 4, 5], [0, 2.5, 3, "inf"]]}}}
  })");
}

std::string error_of(const json& doc) {
  try {
    run_document(doc, data("examples/pica200"), Engine::Interp, 1, false);
  } catch (const ReplayError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("pica200 replay: every example passes its expectations on every engine") {
  auto files = json_files("examples/pica200");
  REQUIRE(files.size() >= 5);
  for (const auto& f : files) {
    json doc = load_file(f);
    for (Engine e : host_engines()) {
      CAPTURE(f.filename().string());
      CAPTURE(std::string(engine_name(e)));
      ReplayRun r = run_document(doc, f.parent_path(), e, 0, e == Engine::Interp);
      REQUIRE_MESSAGE(!r.fault, r.fault.value_or(""));
      CHECK(r.items == doc["launch"]["vertices"].get<uint64_t>());
      if (e == Engine::Interp) CHECK(r.guest_instructions > 0);
      auto ms = check_expect(doc, r);
      CHECK_MESSAGE(ms.empty(), mismatch_text(ms));
    }
  }
}

TEST_CASE("pica200 replay: a wrong expectation fails") {
  json doc = base_doc();
  ReplayRun r = run_document(doc, data("examples/pica200"), Engine::Interp, 1, false);
  CHECK(check_expect(doc, r).empty());
  doc["expect"]["outputs"]["o1"]["f32x4"][1][2] = -3;
  auto ms = check_expect(doc, r);
  REQUIRE(ms.size() == 1);
  CHECK(ms[0].what == "outputs o1[6]");
  // -0 + 3 = 3 (not -3), so the mismatch shows the actual value.
  CHECK(ms[0].actual == "3.0");
}

TEST_CASE("pica200 replay: bench kernels agree across engines") {
  for (const auto& f : json_files("bench/pica200")) {
    json doc = load_file(f);
    // The sanitizer run keeps the vertex count small.
    if (std::getenv("GPURC_TEST_LIGHT")) doc["launch"]["vertices"] = 200;
    ReplayRun ref = run_document(doc, f.parent_path(), Engine::Interp, 0, true);
    CAPTURE(f.filename().string());
    REQUIRE_MESSAGE(!ref.fault, ref.fault.value_or(""));
    CHECK(ref.items == doc["launch"]["vertices"].get<uint64_t>());
    CHECK(ref.guest_instructions >= ref.items * 8);
    for (Engine e : host_jit_tiers()) {
      CAPTURE(std::string(engine_name(e)));
      ReplayRun r = run_document(doc, f.parent_path(), e, 0, false);
      REQUIRE_MESSAGE(!r.fault, r.fault.value_or(""));
      auto diffs = compare_runs(ref, r, 16);
      CHECK_MESSAGE(diffs.empty(), mismatch_text(diffs));
    }
  }
}

TEST_CASE("pica200 replay: inputs generate and program sources") {
  json doc = base_doc();
  doc.erase("expect");
  doc["launch"]["vertices"] = 5;
  doc["inputs"]["v0"] = {{"generate", {{"kind", "iota"}}}};
  ReplayRun r = run_document(doc, data("examples/pica200"), Engine::Interp, 1, false);
  const Observed* o0 = r.find("outputs", "o0");
  REQUIRE(o0);
  REQUIRE(o0->bytes.size() == 5 * 16);
  float v;
  std::memcpy(&v, o0->bytes.data() + 3 * 16 + 8, 4);
  CHECK(v == 3.0f);  // vertex 3, component z

  doc["inputs"]["v0"] = {{"generate", {{"kind", "random"}, {"seed", 9}, {"min", -1}, {"max", 1}}}};
  ReplayRun a = run_document(doc, data("examples/pica200"), Engine::Interp, 1, false);
  ReplayRun b = run_document(doc, data("examples/pica200"), Engine::Interp, 1, false);
  CHECK(compare_runs(a, b).empty());  // deterministic
  const Observed* ro = a.find("outputs", "o0");
  bool in_range = true, varied = false;
  for (size_t i = 0; i < 20; ++i) {
    float x;
    std::memcpy(&x, ro->bytes.data() + 4 * i, 4);
    in_range &= x >= -1 && x < 1;
    varied |= x != 0;
  }
  CHECK(in_range);
  CHECK(varied);

  // The same program as raw words + descriptors gives the same outputs.
  json asm_doc = base_doc();
  pica::Shbin shbin;
  std::string err;
  REQUIRE(pica::assemble(asm_doc["program"]["asm"].get<std::string>(), shbin, err));
  json words_doc = asm_doc;
  json words = json::array(), descs = json::array();
  for (uint32_t w : shbin.code) words.push_back(fmt::format("0x{:08X}", w));
  for (uint32_t w : shbin.descs) descs.push_back(fmt::format("0x{:08X}", w));
  words_doc["program"] = {{"words", words}, {"descriptors", descs}, {"entry", shbin.dvles[0].main_offset}};
  ReplayRun from_asm = run_document(asm_doc, data("examples/pica200"), Engine::Interp, 1, false);
  ReplayRun from_words = run_document(words_doc, data("examples/pica200"), Engine::Interp, 1, false);
  CHECK(check_expect(words_doc, from_words).empty());
  CHECK(compare_runs(from_asm, from_words).empty());
  // Without the descriptor table the program faults (named), it does not crash.
  words_doc["program"].erase("descriptors");
  ReplayRun nodesc = run_document(words_doc, data("examples/pica200"), Engine::Interp, 1, false);
  REQUIRE(nodesc.fault);
  CHECK(nodesc.fault->find("descriptor") != std::string::npos);
}

TEST_CASE("pica200 replay: invalid documents name the field") {
  auto expect_error = [](json doc, const std::string& field) {
    std::string e = error_of(doc);
    CAPTURE(e);
    CHECK(e.find(field) != std::string::npos);
  };
  json d = base_doc();
  d["launch"].erase("vertices");
  expect_error(d, "launch.vertices");
  d = base_doc();
  d["launch"]["grid"] = 1;
  expect_error(d, "launch.grid");
  d = base_doc();
  d["state"]["float_uniforms"]["c96"] = {0, 0, 0, 0};
  expect_error(d, "state.float_uniforms.c96");
  d = base_doc();
  d["state"]["int_uniforms"] = {{"i0", {1, 2, 300, 0}}};
  expect_error(d, "state.int_uniforms.i0[2]");
  d = base_doc();
  d["state"]["bool_uniforms"] = {{"b3", 1}};
  expect_error(d, "state.bool_uniforms.b3");
  d = base_doc();
  d["inputs"]["v0"]["f32x4"].erase(1);
  expect_error(d, "inputs.v0.f32x4");
  d = base_doc();
  d["inputs"]["v0"]["f32x4"][0] = {1, 2, 3};
  expect_error(d, "inputs.v0.f32x4[0]");
  d = base_doc();
  d["inputs"]["v16"] = d["inputs"]["v0"];
  expect_error(d, "inputs.v16");
  d = base_doc();
  d["program"]["asm"] = ".proc main\n frobnicate r0\n.end\n";
  expect_error(d, "program");
  d = base_doc();
  d["program"]["entry"] = "nolabel";
  expect_error(d, "program.entry");
  d = base_doc();
  d["program"]["type"] = "pixel";
  expect_error(d, "type");
  d = base_doc();
  d["program"] = {{"words", json::array()}};
  expect_error(d, "program");
  d = base_doc();
  d["program"] = {{"words", std::vector<int>(4097, 0)}};
  expect_error(d, "program.words");
  d = base_doc();
  d["launch"]["vertices"] = uint64_t(1) << 40;
  expect_error(d, "launch.vertices");
  d = base_doc();
  d["expect"]["outputs"]["o1"] = {{"f32x4", {{1, 2, 3}}}};  // a short row: the expect is invalid
  ReplayRun r = run_document(d, data("examples/pica200"), Engine::Interp, 1, false);
  CHECK_THROWS_AS(check_expect(d, r), ReplayError);
}

TEST_CASE("pica200 replay: a fault stops the run with a message naming the address") {
  json d = base_doc();
  d.erase("expect");
  d["program"]["asm"] = ".proc main\nl:\n mov o0, v0\n jmpu !b0, l\n end\n.end\n";
  for (Engine e : host_engines()) {
    CAPTURE(std::string(engine_name(e)));
    ReplayRun r = run_document(d, data("examples/pica200"), e, 1, false);
    REQUIRE(r.fault);
    CHECK_FALSE(r.fault->empty());
    CHECK(r.fault_kind == "watchdog");
  }
}

}  // namespace gpurc_test_pica200_replay
