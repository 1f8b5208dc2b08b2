// The PICA200 reference shaders (bench/pica200-reference/ref_*.json: the
// program of ../shared/bench/pica200-reference-shaders.md and its uniforms)
// as the public API takes them, for the draw tests.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "gpurc/pica200.h"

namespace gpurc::test {

struct ReferenceDrawCase {
  std::string name;
  pica200::ShaderSetup setup;
  pica200::Uniforms uniforms;
};

// name: "ref_simple", "ref_heavy" or "ref_loop".
inline ReferenceDrawCase load_reference_draw_case(const std::string& name) {
  const std::filesystem::path file =
      std::filesystem::path(GPURC_TEST_DATA) / "bench/pica200-reference" / (name + ".json");
  std::ifstream in(file);
  REQUIRE_MESSAGE(in, "cannot open " << file.string());
  const nlohmann::json doc = nlohmann::json::parse(in);
  auto word = [](const nlohmann::json& j) {
    return j.is_string() ? uint32_t(std::stoul(j.get<std::string>(), nullptr, 0)) : j.get<uint32_t>();
  };
  ReferenceDrawCase c;
  c.name = name;
  for (const auto& w : doc["program"]["words"]) c.setup.code.push_back(word(w));
  for (const auto& w : doc["program"]["descriptors"]) c.setup.descriptors.push_back(word(w));
  c.setup.entry = doc["program"]["entry"].get<uint32_t>();
  const nlohmann::json& st = doc["state"];
  if (st.contains("float_uniforms"))
    for (const auto& [k, v] : st["float_uniforms"].items())
      for (size_t i = 0; i < 4; ++i) c.uniforms.f[std::stoul(k.substr(1))][i] = v[i].get<float>();
  if (st.contains("int_uniforms"))
    for (const auto& [k, v] : st["int_uniforms"].items())
      for (size_t i = 0; i < 4; ++i) c.uniforms.i[std::stoul(k.substr(1))][i] = v[i].get<uint8_t>();
  if (st.contains("bool_uniforms"))
    for (const auto& [k, v] : st["bool_uniforms"].items())
      if (v.get<bool>()) c.uniforms.b |= uint16_t(1u << std::stoul(k.substr(1)));
  return c;
}

}  // namespace gpurc::test
