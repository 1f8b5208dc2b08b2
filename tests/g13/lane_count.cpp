// lane_instructions_per_s counts guest instructions per active lane
// (docs/runtime.md, "Bench figures"): on G13 the interpreter counts them for
// every engine. A straight-line example whose count is known by hand.
#include <doctest/doctest.h>

#include <filesystem>

#include "recompiler/isa_engine.h"
#include "recompiler/replay.h"

namespace gpurc_test_g13_lane_count {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;

TEST_CASE("g13 lane instructions: a straight-line kernel counts instructions x launched lanes on every engine") {
  const std::filesystem::path dir = std::filesystem::path(GPURC_TEST_DATA) / "examples" / "g13";
  replay::json doc = replay::load_file(dir / "vector_add.json");
  // vector_add.s: 7 instructions (get_sr, 2 device_load, wait, fadd32,
  // device_store, stop), every launched lane active throughout; 4
  // threadgroups of 100 threads = 4 SIMD-groups each, the last with 4 lanes.
  REQUIRE(doc["launch"]["grid"] == replay::json::array({4}));
  REQUIRE(doc["launch"]["block"] == replay::json::array({100}));
  const uint64_t expected = 7 * 4 * 100;
  std::vector<Engine> engines{Engine::Interp};
  for (Engine e : host_engines()) engines.push_back(e);
  for (Engine e : engines) {
    CAPTURE(engine_name(e));
    replay::ReplayRun r = replay::run_document(doc, dir, e, 1, true);
    CHECK(!r.fault);
    CHECK(r.guest_instructions == expected);
    CHECK(replay::run_document(doc, dir, e, 1, false).guest_instructions == 0);
  }
}

}  // namespace gpurc_test_g13_lane_count
