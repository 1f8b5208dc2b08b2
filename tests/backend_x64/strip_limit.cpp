// Partial warps of a vertex shader run only the strips that hold a launched
// lane (Emitter::strip_limit_, issue 13, tenth session): a one-vertex draw
// of the reference shader `simple` runs one 8-lane strip on AVX2 (one
// 16-lane strip on AVX-512), not the warp's four (two). Run on the host's
// tiers: the output var's lanes in strips past the last launched lane keep
// what the caller left there, the launched strips' lanes hold the results.
// Without the limit (GPURC_STRIP_LIMIT=0, or main before the change) every
// lane of every strip is written and the first check fails. A function
// without the unlaunched-lanes contract still runs every strip. A tier the
// host lacks is checked on its listing (the strip loop's bound read from
// the stack slot, JitOptions::listing_only).
#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "backend_x64/jit.h"
#include "frontend/pica200/abi.h"
#include "frontend/pica200/translate.h"
#include "ir/builder.h"
#include "ir/passes.h"
#include "tests/backend_x64/reference_shader.h"
#include "tests/backend_x64/tier_compile.h"

namespace gpurc_test_backend_x64_strip_limit {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::x64;

namespace {

ir::Function ref_simple(bool contract) {
  ir::Function f = test::translate_reference_shader("ref_simple");
  REQUIRE(f.unlaunched_lanes_free);  // a vertex shader's translation
  f.unlaunched_lanes_free = contract;
  REQUIRE(ir::run_pipeline(f, ir::PassOptions{}) == "");
  return f;
}

struct Aligned {
  std::unique_ptr<uint8_t, decltype(&std::free)> p{nullptr, &std::free};
  explicit Aligned(size_t bytes) : p(static_cast<uint8_t*>(std::aligned_alloc(64, (bytes + 127) / 64 * 64)), &std::free) {
    std::memset(p.get(), 0, (bytes + 127) / 64 * 64);
  }
  uint8_t* get() const { return p.get(); }
};

constexpr uint32_t kSentinel = 0x7f7f7f7fu;

// Runs f with `mask` launched: v0.x of lane l = l + 1, c0 = (1, 0, 0, 0), so
// o0.x = v0.x; o0.x's slot starts as kSentinel in every lane. Returns o0.x's 32 lanes.
std::array<uint32_t, 32> run_o0x(const ir::Function& f, const CompiledFunction& cf, uint32_t mask) {
  const std::vector<uint32_t> off = f.var_offsets();
  Aligned vars(f.vars_bytes()), frame(cf.frame_bytes() + 64), uniforms(pica::kUniformBytes + 64);
  const float one = 1.0f;
  std::memcpy(uniforms.get() + pica::kUniformFloat, &one, 4);
  for (uint32_t l = 0; l < 32; ++l) {
    const float x = float(l + 1);
    std::memcpy(vars.get() + off[pica::kVarInput] + 4 * l, &x, 4);
    std::memcpy(vars.get() + off[pica::kVarOutput] + 4 * l, &kSentinel, 4);
  }
  ir::WarpContext ctx;
  ctx.vars = vars.get();
  ctx.frame = frame.get();
  ctx.uniforms = uniforms.get();
  ctx.entry_mask = mask;
  REQUIRE(cf.run(ctx) == ir::RunStatus::Done);
  std::array<uint32_t, 32> o{};
  std::memcpy(o.data(), vars.get() + off[pica::kVarOutput], 128);
  return o;
}

}  // namespace

TEST_CASE("x64 jit: a partial warp of a vertex shader runs only the strips holding launched lanes") {
  const ir::Function f = ref_simple(true), g = ref_simple(false);
  for (Tier t : {Tier::Avx512, Tier::Avx2}) {
    CAPTURE(tier_name(t));
    auto cf = test::compile_for_tier(f, t), cg = test::compile_for_tier(g, t);
    // The strip loop's bound: the stack slot (kStripEndOffset) under the
    // contract, the whole warp's 128 bytes without it.
    CHECK(cf->disassemble().find("cmp r14d, [rsp+0x40]") != std::string::npos);
    CHECK(cg->disassemble().find("cmp r14d, [rsp+0x40]") == std::string::npos);
    if (!host_supports(t)) continue;
    const uint32_t strip = t == Tier::Avx512 ? 16 : 8;
    for (uint32_t mask : {0x1u, 0x3u, 0xffu, 0x100u, 0x101u, 0x80000000u, 0x10001u, 0xffffffffu}) {
      CAPTURE(mask);
      const uint32_t end = (32 - uint32_t(__builtin_clz(mask)) + strip - 1) / strip * strip;
      const std::array<uint32_t, 32> lim = run_o0x(f, *cf, mask), all = run_o0x(g, *cg, mask);
      for (uint32_t l = 0; l < 32; ++l) {
        CAPTURE(l);
        float want = float(l + 1);
        uint32_t bits;
        std::memcpy(&bits, &want, 4);
        // Launched lanes: the result on both; the contract's lanes past the
        // last launched strip: untouched.
        if (mask >> l & 1) CHECK(lim[l] == bits);
        if (l >= end) CHECK(lim[l] == kSentinel);
        else CHECK(lim[l] == bits);  // a strip that runs computes all its lanes
        // Without the contract every lane is written (the launched ones
        // with the result, the others with their old value kept).
        if (mask >> l & 1) CHECK(all[l] == bits);
      }
    }
  }
}

TEST_CASE("x64 jit: a function without strip ops gets no strip limit") {
  // Under the contract and without memory ops, but nothing to run in
  // strips (an empty kernel): the prologue computes no strip end (a bsr of
  // the entry mask per warp before the eighteenth session); the shader
  // beside it keeps it.
  ir::Function f;
  f.unlaunched_lanes_free = true;
  f.add_var("x", ir::Type::I32);
  f.add_block("entry");
  ir::Builder b(f);
  b.ret();
  REQUIRE(ir::verify(f) == "");
  for (Tier t : {Tier::Avx512, Tier::Avx2}) {
    CAPTURE(tier_name(t));
    CHECK(test::compile_for_tier(f, t)->disassemble().find("bsr") == std::string::npos);
    CHECK(test::compile_for_tier(ref_simple(true), t)->disassemble().find("bsr") != std::string::npos);
  }
}

}  // namespace gpurc_test_backend_x64_strip_limit
