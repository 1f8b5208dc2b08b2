// The PICA200 reference shaders (bench/pica200-reference/ref_*.json: the
// words, descriptors and entry of ../shared/bench/pica200-reference-shaders.md)
// translated to IR, before the pass pipeline, for the x64 code tests.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "frontend/pica200/translate.h"
#include "ir/ir.h"

namespace gpurc::test {

inline std::vector<uint32_t> hex_words(const nlohmann::json& a) {
  std::vector<uint32_t> out;
  for (const auto& w : a) out.push_back(uint32_t(std::stoul(w.get<std::string>(), nullptr, 16)));
  return out;
}

// name: "ref_simple", "ref_heavy" or "ref_loop". draw_only: under the draw
// contract (pica::TranslateOptions::draw_only), as the public API compiles it.
inline ir::Function translate_reference_shader(const std::string& name, bool draw_only = false) {
  const std::filesystem::path file =
      std::filesystem::path(GPURC_TEST_DATA) / "bench/pica200-reference" / (name + ".json");
  std::ifstream in(file);
  REQUIRE_MESSAGE(in, "cannot open " << file.string());
  const nlohmann::json doc = nlohmann::json::parse(in);
  pica::Program prog;
  prog.code = hex_words(doc["program"]["words"]);
  prog.descs = hex_words(doc["program"]["descriptors"]);
  pica::TranslateOptions to;
  to.entry = doc["program"]["entry"].get<uint32_t>();
  to.draw_only = draw_only;
  ir::Function f;
  std::string err;
  REQUIRE_MESSAGE(pica::translate(prog, to, f, err), err);
  return f;
}

}  // namespace gpurc::test
