// Outcome::lane_instructions counts guest instructions times the active
// lanes that executed each (docs/tesla.md, "Bench figures"), on every
// engine: a kernel whose count is worked out by hand.
#include <doctest/doctest.h>

#include "frontend/tesla/module/launch.h"
#include "recompiler/isa_engine.h"
#include "translate_harness.h"

namespace gpurc_test_tesla_lane_count {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc::tesla;

TEST_CASE("tesla lane_instructions: guest instructions per active lane, predication and divergence") {
  // Threads with tid.x < 4 branch over two instructions; the others run
  // them. The predicated bra counts for every active lane.
  const char* src =
      "cvt u32 $r1 u16 $r0l\n"           // 0: all
      "long mov b32 $r4 0x4\n"           // 1: all
      "set $c0 $r5 l u32 $r1 $r4\n"      // 2: all; c0 = tid.x < 4
      "(lg $c0) bra #done\n"             // 3: all
      "long add b32 $r1 $r1 0x1\n"       // 4: tid.x >= 4
      "long add b32 $r1 $r1 0x1\n"       // 5: tid.x >= 4
      "done: exit nop\n";                // 6: every lane once (each path)
  gpurc::tesla_run::Kernel k;
  std::string err;
  REQUIRE(parse_target("g200", k.target, err));
  REQUIRE(assemble(src, k.target, k.code, err));
  gpurc::tesla_run::Launch l;
  l.grid = {2, 1, 1};
  l.block = {40, 1, 1};  // warp 0: 32 lanes (4 branch), warp 1: 8 lanes (none branch)
  // Per block: warp 0 = 4 * 32 + 2 * 28 + 32 = 216, warp 1 = 4 * 8 + 2 * 8 + 8 = 56.
  const uint64_t expected = 2 * (216 + 56);
  std::vector<gpurc::Engine> engines{gpurc::Engine::Interp};
  for (gpurc::Engine e : gpurc::host_engines()) engines.push_back(e);
  for (gpurc::Engine e : engines) {
    std::vector<gpurc::tesla_run::Buffer> bufs(1);
    bufs[0].name = "unused";
    bufs[0].address = 0x1000;
    bufs[0].bytes.assign(64, 0);
    gpurc::tesla_run::Options o;
    const gpurc::EngineAsHandle handle(e);
    o.engine = &handle;
    o.threads = 1;
    o.count_instructions = true;
    gpurc::tesla_run::Outcome r = gpurc::tesla_run::run(k, l, bufs, o);
    INFO(gpurc::engine_name(e) << ": " << r.error << r.fault_message);
    REQUIRE(r.ok());
    CHECK(r.lane_instructions == expected);
    // Not requested: not counted.
    o.count_instructions = false;
    CHECK(gpurc::tesla_run::run(k, l, bufs, o).lane_instructions == 0);
  }
}

}  // namespace gpurc_test_tesla_lane_count
