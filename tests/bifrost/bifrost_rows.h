// Shared by the bifrost test files: run instructions between a clause that
// loads one 16-byte input row per thread into r0..r3 and one that stores r4,
// on the interpreter and every JIT tier of the host (bit for bit).
#pragma once
#include <doctest/doctest.h>

#include <array>
#include <bit>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "recompiler/engine.h"
#include "recompiler/replay.h"

namespace bifrost_rows {

using namespace gpurc;
using replay::json;

inline const std::filesystem::path kExamples = std::filesystem::path(GPURC_TEST_DATA) / "examples" / "bifrost";

inline uint32_t fb(float f) { return std::bit_cast<uint32_t>(f); }

inline std::vector<uint32_t> words(const replay::ReplayRun& r, const std::string& name) {
  const replay::Observed* o = r.find("memory", name);
  REQUIRE(o);
  std::vector<uint32_t> v(o->bytes.size() / 4);
  std::memcpy(v.data(), o->bytes.data(), v.size() * 4);
  return v;
}

inline json hexlist(const std::vector<uint32_t>& v) {
  json a = json::array();
  for (uint32_t x : v) {
    char b[16];
    std::snprintf(b, sizeof b, "0x%08x", x);
    a.push_back(b);
  }
  return a;
}

// Runs `body` (clauses in Mesa syntax, labels from clause_1 on) between a
// clause that loads in[gid] (16 bytes) into r0..r3 and one that stores r4 to
// out[gid]; one thread per input row; on the interpreter and every JIT tier
// (which must agree bit for bit). Returns the interpreter's words.
inline std::vector<uint32_t> run_rows(const std::string& body, const std::vector<std::array<uint32_t, 4>>& rows,
                               const std::string& variant = "g72") {
  const std::string text = std::string("clause_0:\nds(0) nbb load\n{\n    *SHADDXL.u32 t0, u0.w0, r60, shift:4\n"
                                       "    +LOAD.i128 t1, t, u0.w1, @r0\n}\n") +
                           body +
                           "clause_90:\nds(0) eos store\n{\n    *SHADDXL.u32 t0, u1.w0, r60, shift:2\n"
                           "    +STORE.i32 t1, t, u1.w1, @r4\n}\n";
  std::vector<uint32_t> flat;
  for (const auto& r : rows) flat.insert(flat.end(), r.begin(), r.end());
  json doc = {{"gpurc", 1},
              {"isa", "bifrost"},
              {"variant", variant},
              {"program", {{"asm", text}}},
              {"launch", {{"grid", {1}}, {"block", {rows.size()}}}},
              {"state", {{"uniforms", {{"u0", "0x100000"}, {"u1", 0}, {"u2", "0x200000"}, {"u3", 0}}}}},
              {"memory",
               {{{"name", "in"}, {"space", "global"}, {"address", "0x100000"}, {"size", flat.size() * 4},
                 {"init", {{"u32", hexlist(flat)}}}},
                {{"name", "out"}, {"space", "global"}, {"address", "0x200000"}, {"size", rows.size() * 4}}}}};
  replay::ReplayRun r = replay::run_document(doc, kExamples, Engine::Interp, 1, false);
  REQUIRE_MESSAGE(!r.fault, *r.fault);
  // Every other engine of the host runs the translation: bit for bit the same.
  for (Engine e : host_engines()) {
    if (e == Engine::Interp) continue;
    CAPTURE(engine_name(e));
    replay::ReplayRun j = replay::run_document(doc, kExamples, e, 1, false);
    REQUIRE_FALSE(j.fault);
    CHECK(words(j, "out") == words(r, "out"));
  }
  return words(r, "out");
}

// One instruction: `fma` / `add` form the first tuple of a clause whose
// second tuple's block writes the result register r4.
inline std::vector<uint32_t> run_ins(const std::string& fma, const std::string& add,
                              const std::vector<std::array<uint32_t, 4>>& rows) {
  return run_rows("clause_1:\nds(0) nbb\n{\n    " + fma + "\n    " + add + "\n    *NOP t0\n    +NOP t1\n}\n", rows);
}
inline std::vector<uint32_t> fma_op(const std::string& line, const std::vector<std::array<uint32_t, 4>>& rows) {
  return run_ins(line, "+NOP t1", rows);
}
inline std::vector<uint32_t> add_op(const std::string& line, const std::vector<std::array<uint32_t, 4>>& rows) {
  return run_ins("*NOP t0", line, rows);
}

}  // namespace bifrost_rows
