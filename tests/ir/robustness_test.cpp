// Bad input never crashes: mutated text into the parser, unverified random
// functions into the verifier and the interpreter (run this file under the
// sanitizer build to see the full value).
#include <doctest/doctest.h>

#include <cstdlib>

#include "ir_test_util.h"
#include "random_ir.h"

namespace gpurc_test_ir_robustness_test {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc::ir;

TEST_CASE("robustness: mutated text parses or fails cleanly; what parses round-trips") {
  std::mt19937_64 rng(777);
  int n = std::getenv("GPURC_TEST_LIGHT") ? 300 : 3000;
  const char alphabet[] = "%b#[],:{}\"\\ \n.=!0123456789abcdefxiu;";
  int parsed = 0;
  for (int i = 0; i < n; ++i) {
    std::string t = print(irtest::random_function(rng));
    int edits = 1 + int(rng() % 4);
    for (int e = 0; e < edits && !t.empty(); ++e) {
      size_t pos = rng() % t.size();
      switch (rng() % 4) {
        case 0: t[pos] = alphabet[rng() % (sizeof(alphabet) - 1)]; break;
        case 1: t.erase(pos, 1 + rng() % 8); break;
        case 2: t.insert(pos, 1, alphabet[rng() % (sizeof(alphabet) - 1)]); break;
        default: t.resize(pos); break;
      }
    }
    Function g;
    std::string err;
    if (!parse(t, g, err)) {
      CHECK((err.rfind("line ", 0) == 0 || err == "text after the end of the function"));
      continue;
    }
    ++parsed;
    std::string once = print(g);
    Function h;
    REQUIRE_MESSAGE(parse(once, h, err), err);
    CHECK(print(h) == once);
    (void)verify(g);
  }
  CHECK(parsed > 0);  // some mutations (e.g. in names) keep the text valid
}

TEST_CASE("robustness: verifier and interpreter on random unverified functions") {
  std::mt19937_64 rng(4242);
  int n = std::getenv("GPURC_TEST_LIGHT") ? 200 : 2000;
  int done = 0, faults = 0;
  for (int i = 0; i < n; ++i) {
    Function f = irtest::random_function(rng, /*acyclic=*/true);
    (void)verify(f);
    // Same start state twice: identical end states (no reads of stale memory).
    std::vector<uint64_t> results[2];
    for (int k = 0; k < 2; ++k) {
      irtest::Warp w(f, uint32_t(0x0f0f00ffu ^ uint32_t(i)));
      irtest::TestMemory mem(64);
      w.ctx.memory = &mem;
      w.ctx.budget = 50;
      for (size_t v = 0; v < w.vars.size(); ++v) w.vars[v] = 0x0123456789abcdefull * (v + 1);
      RunStatus st = RunStatus::Barrier;
      for (int r = 0; r < 8 && st == RunStatus::Barrier; ++r) st = w.run();
      results[k] = w.vars;
      results[k].push_back(uint64_t(st));
      results[k].push_back(uint64_t(w.ctx.fault));
      results[k].insert(results[k].end(), mem.buf[0].begin(), mem.buf[0].end());
      if (k == 0) (st == RunStatus::Fault ? faults : done) += 1;
    }
    CHECK(results[0] == results[1]);
  }
  CHECK(done > 0);
  CHECK(faults > 0);
}

}  // namespace gpurc_test_ir_robustness_test
