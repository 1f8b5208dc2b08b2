// Every per-lane op, on every tier, against ir::eval_lane (the exact scalar
// semantics) lane by lane, with edge and random inputs in all 32 lanes.
#include <doctest/doctest.h>

#include <cstdio>

#include "harness.h"
#include "tiers.h"
#include "ir/scalar.h"
#include "op_cases.h"

namespace gpurc_test_backend_ops {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::backend::test;

namespace {

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)v);
  return buf;
}

}  // namespace

TEST_CASE("backend: every per-lane op matches ir::eval_lane on every tier") {
  auto tiers = host_tiers();
  REQUIRE(!tiers.empty());
  int rounds = light() ? 2 : 6;
  std::mt19937_64 rng(20261122);
  size_t cases = 0, lanes_checked = 0, failures = 0;
  for (const OpCase& c : all_op_cases(light())) {
    ir::Function f;
    ir::ValueId opv = build_op_function(c, f);
    ir::LaneOp lop = ir::lane_op(f, opv);
    uint32_t out = uint32_t(c.args.size());
    std::vector<std::unique_ptr<CompiledCode>> jits;
    for (Tier t : tiers) {
      std::string err;
      JitOptions o;
      o.tier = t;
      auto j = compile(f, o, &err);
      if (!j) {
        ++failures;
        FAIL_CHECK(describe(c) << " on " << std::string(tier_name(t)) << ": compile failed: " << err);
      }
      jits.push_back(std::move(j));
    }
    ++cases;
    for (int r = 0; r < rounds; ++r) {
      std::vector<uint8_t> vars(f.vars_bytes(), 0xAB);
      std::vector<std::vector<uint64_t>> in(c.args.size(), std::vector<uint64_t>(32));
      for (size_t i = 0; i < c.args.size(); ++i)
        for (unsigned l = 0; l < 32; ++l) {
          in[i][l] = pick_value(c.args[i], rng, int(i) == c.count_arg);
          set_lane(vars, f, uint32_t(i), l, in[i][l]);
        }
      uint32_t entry = r == 0 ? ~0u : uint32_t(rng());
      for (size_t k = 0; k < jits.size(); ++k) {
        if (!jits[k]) continue;
        std::vector<uint8_t> v = vars;
        ir::WarpContext ctx;
        ir::RunStatus s = run_to_end(*jits[k], f, v, {}, entry, &ctx);
        if (s != ir::RunStatus::Done) {
          ++failures;
          FAIL_CHECK(describe(c) << " on " << std::string(tier_name(tiers[k])) << ": status " << int(s));
          continue;
        }
        for (unsigned l = 0; l < 32; ++l) {
          uint64_t a[4] = {0, 0, 0, 0};
          for (size_t i = 0; i < c.args.size(); ++i) a[i] = in[i][l];
          uint64_t want = ir::eval_lane(lop, a);
          uint64_t got = get_lane(v, f, out, l);
          ++lanes_checked;
          if (got != want) {
            if (++failures <= 40) {
              std::string args;
              for (size_t i = 0; i < c.args.size(); ++i) args += " " + hex(a[i]);
              FAIL_CHECK(describe(c) << " on " << std::string(tier_name(tiers[k])) << " lane " << l << " args" << args
                                     << ": want " << hex(want) << " got " << hex(got));
            }
            break;
          }
        }
      }
    }
  }
  MESSAGE(cases << " op configurations, " << lanes_checked << " lanes checked");
  CHECK(failures == 0);
}

}  // namespace gpurc_test_backend_ops
