// Stream prefetches (set_stream_prefetch_distance, backend_x64/jit.h; off by
// default): a warp loop's contiguous access prefetches the span the next
// warps of a grid-linear kernel use. A prefetch never faults and writes
// nothing, so the bundled G13 vector_add and Tesla saxpy replays meet their
// expected memory on every x64 tier with distances inside the buffers (64)
// and past their ends (4096, 1 MiB); a tiny buffer's warp prefetches far
// outside it. The listings have prefetcht0 / prefetchw exactly when it is on.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "backend_x64/jit.h"
#include "engines/registry.h"
#include "ir/passes.h"
#include "recompiler/engine.h"
#include "recompiler/replay.h"

namespace gpurc_test_backend_x64_stream_prefetch {  // one namespace per file: unity builds

using namespace gpurc;

namespace {

struct ResetPrefetch {
  ~ResetPrefetch() {
    x64::set_stream_prefetch_distance(0);
    code_cache().clear();
  }
};

std::filesystem::path example(const char* isa, const char* file) {
  return std::filesystem::path(GPURC_TEST_DATA) / "examples" / isa / file;
}

}  // namespace

TEST_CASE("x64 stream prefetch: results and faults unchanged, prefetches only when on") {
  ResetPrefetch reset;
  const std::filesystem::path files[] = {example("g13", "vector_add.json"), example("tesla", "saxpy.json")};
  for (int distance : {0, 64, 4096, 1 << 20}) {
    CAPTURE(distance);
    x64::set_stream_prefetch_distance(distance);
    code_cache().clear();  // (the code cache does not key on the distance)
    for (const auto& file : files) {
      CAPTURE(file.string());
      const replay::json doc = replay::load_file(file);
      for (Engine e : host_jit_tiers()) {
        const std::string name = engine_name(e);
        if (name.rfind("jit-avx", 0) != 0) continue;
        CAPTURE(name);
        for (unsigned threads : {1u, 2u}) {
          replay::ReplayRun run = replay::run_document(doc, file.parent_path(), e, threads, false);
          CHECK_MESSAGE(!run.fault, run.fault.value_or(""));
          for (const auto& m : replay::check_expect(doc, run))
            FAIL_CHECK(m.what << ": expected " << m.expected << ", got " << m.actual);
        }
      }
    }
  }
}

TEST_CASE("x64 stream prefetch: a consecutive load and store get prefetcht0 / prefetchw on both tiers") {
  ResetPrefetch reset;
  // c[i] = a[i] + b[i] over a 64-bit uniform base and a lane index (the
  // G13 shape), after the pass pipeline.
  const char* text = R"(func "vadd" {
  var "i" i32
  uniform_bytes 24
b0 "entry":
  %0 = load_var i32 #0x0
  %1 = entry_mask i1
  %2 = zext i64 %0
  %3 = const i32 #0x2 !uniform
  %4 = shl.mask i64 %2, %3
  %5 = load_uniform i64 #0x0 !uniform
  %6 = iadd i64 %5, %4
  %7 = load.global.random i32 %6, %1
  %8 = load_uniform i64 #0x8 !uniform
  %9 = iadd i64 %8, %4
  %10 = load.global.random i32 %9, %1
  %11 = iadd i32 %7, %10
  %12 = load_uniform i64 #0x10 !uniform
  %13 = iadd i64 %12, %4
  store.global.random %13, %11, %1
  return !uniform
}
)";
  ir::Function f;
  std::string err;
  REQUIRE_MESSAGE(ir::parse(text, f, err), err);
  REQUIRE(ir::run_pipeline(f, IrCompileOptions{}.passes).empty());
  for (int distance : {0, 4096}) {
    CAPTURE(distance);
    x64::set_stream_prefetch_distance(distance);
    for (x64::Tier tier : {x64::Tier::Avx512, x64::Tier::Avx2}) {
      x64::JitOptions o{tier};
      o.listing_only = !x64::host_supports(tier);
      auto cf = x64::compile(f, o, &err);
      REQUIRE_MESSAGE(cf, err);
      const std::string lst = cf->disassemble();
      CHECK((lst.find("prefetcht0") != std::string::npos) == (distance > 0));
      CHECK((lst.find("prefetchw") != std::string::npos) == (distance > 0));
      if (distance > 0) CHECK(lst.find("+0x1000]") != std::string::npos);
    }
  }
}

}  // namespace gpurc_test_backend_x64_stream_prefetch
