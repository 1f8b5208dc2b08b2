// PICA200 code compiles to vector code only: the three reference shaders
// (bench/pica200-reference/ref_*.json, the published words and descriptors of
// /work/shared/bench/pica200-reference-shaders.md) and every bundled example
// (examples/pica200/*.pica) are translated, run through the pass pipeline
// and compiled on every tier with no per-lane helper call (the geometry
// example's EMIT stores and its overflow trap are warp ops and may call
// their warp helpers).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "frontend/pica200/assembler.h"
#include "frontend/pica200/shbin.h"
#include "frontend/pica200/translate.h"
#include "ir/passes.h"
#include "tiers.h"

using namespace gpurc;
using namespace gpurc::backend::test;

namespace {

struct Shader {
  std::string name;
  pica::Program program;
  pica::TranslateOptions options;
};

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p);
  REQUIRE_MESSAGE(in, "cannot open " << p.string());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<uint32_t> words(const nlohmann::json& a) {
  std::vector<uint32_t> out;
  for (const auto& w : a) out.push_back(uint32_t(std::stoul(w.get<std::string>(), nullptr, 16)));
  return out;
}

std::vector<Shader> shaders() {
  std::vector<Shader> out;
  const std::filesystem::path root = GPURC_TEST_DATA;
  for (const char* name : {"ref_simple", "ref_heavy", "ref_loop"}) {
    nlohmann::json doc = nlohmann::json::parse(read_text(root / "bench/pica200-reference" / (std::string(name) + ".json")));
    Shader s;
    s.name = name;
    s.program.code = words(doc["program"]["words"]);
    s.program.descs = words(doc["program"]["descriptors"]);
    s.options.entry = doc["program"]["entry"].get<uint32_t>();
    out.push_back(std::move(s));
  }
  size_t examples = 0;
  for (const auto& e : std::filesystem::directory_iterator(root / "examples/pica200")) {
    if (e.path().extension() != ".pica") continue;
    pica::Shbin shbin;
    std::string err;
    REQUIRE_MESSAGE(pica::assemble(read_text(e.path()), shbin, err), e.path().string() << ": " << err);
    Shader s;
    s.name = e.path().filename().string();
    s.program = pica::program_of(shbin);
    if (!shbin.dvles.empty()) {
      s.options.entry = shbin.dvles[0].main_offset;
      s.options.geometry = shbin.dvles[0].is_geometry;
    }
    out.push_back(std::move(s));
    ++examples;
  }
  CHECK(examples >= 6);
  return out;
}

}  // namespace

TEST_CASE("backend: the PICA200 reference shaders and every bundled example compile with no per-lane helper call") {
  const std::vector<Shader> all = shaders();
  for (const Shader& s : all) {
    // Both stack translations: the static expansion (Auto picks it for
    // these) and the runtime stacks.
    for (pica::StackMode mode : {pica::StackMode::Static, pica::StackMode::Runtime}) {
      pica::TranslateOptions to = s.options;
      to.stacks = mode;
      ir::Function f;
      std::string err;
      REQUIRE_MESSAGE(pica::translate(s.program, to, f, err), s.name << ": " << err);
      REQUIRE_MESSAGE(ir::run_pipeline(f, ir::PassOptions{}) == "", s.name);
      for (Tier t : host_tiers()) {
        const std::string what =
            s.name + (mode == pica::StackMode::Static ? " (static stacks)" : " (runtime stacks)") + " on " + tier_name(t);
        CAPTURE(what);
        JitOptions o;
        o.tier = t;
        auto code = compile(f, o, &err);
        REQUIRE_MESSAGE(code, err);
        std::string helpers;
        for (ir::Opcode op : code->helper_ops()) helpers += " " + std::string(ir::op_name(op));
        CHECK_MESSAGE(code->lane_helper_ops() == 0, "per-lane helper calls:" << helpers);
      }
    }
  }
}
