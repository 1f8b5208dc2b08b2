// The NEON tier's native ops, checked on any host: compile() only assembles
// (asmjit emits AArch64 code on x86-64 too), so an x86-64 build checks the
// a64 declaration against the code generator without running the code.
//  - every declared op and key type compiles without a helper in some form of
//    tests/backend/op_cases.h, and no undeclared one does;
//  - the gaps against the x64 tiers (ops and types AVX-512 or AVX2 lower
//    natively that NEON does not) are exactly kGaps below (checked where the
//    x64 tiers are built);
//  - docs/backend_a64.md's tables are these data.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "backend_a64/jit.h"
#include "tests/backend/harness.h"
#include "tests/backend/op_cases.h"
#if GPURC_HAVE_X64
#include "backend_x64/jit.h"
#endif

namespace gpurc_test_backend_a64_native_gaps {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using ir::Opcode;
using ir::Type;
using backend::type_bit;

namespace {

constexpr uint16_t kI64 = type_bit(Type::I64);

// What the x64 tiers (AVX-512 or AVX2) lower natively and the NEON tier runs
// through a helper: the documented gap list (docs/backend_a64.md).
struct Gap {
  Opcode op;
  uint16_t types;
};
constexpr Gap kGaps[] = {
    // NEON has no 64-bit lane multiply (x64: vpmullq, or 32-bit partial products on AVX2).
    {Opcode::IMul, kI64}, {Opcode::IMulWide, kI64}, {Opcode::IMad, kI64},
};

backend::NativeOps gap_table() {
  backend::NativeOps t{};
  for (const Gap& g : kGaps) t[size_t(g.op)] |= g.types;
  return t;
}

const backend::HostTier& neon_tier() {
  size_t n = 0;
  const backend::HostTier* const* t = a64::tiers(n);
  REQUIRE(n == 1);
  return *t[0];
}

std::string read_doc(const char* path) {
  std::ifstream in(std::string(GPURC_TEST_DATA) + "/" + path);
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("a64 jit: the declared native ops are exactly the ops compile() lowers without a helper call") {
  using namespace gpurc::backend::test;
  const backend::HostTier& tier = neon_tier();
  backend::NativeOps seen{}, tried{};
  size_t compiled = 0;
  for (const OpCase& c : all_op_cases(light())) {
    ir::Function f;
    build_op_function(c, f);
    REQUIRE(ir::verify(f) == "");
    std::string err;
    auto cf = tier.compile(f, backend::CompileOptions{}, &err);
    REQUIRE_MESSAGE(cf, describe(c) << ": " << err);
    ++compiled;
    CHECK(cf->helper_ops().size() == cf->lane_helper_ops() + cf->warp_helper_ops());
    for (ir::ValueId v : f.blocks[0].insts) {
      Opcode op = f.insts[v].op;
      if (ir::op_info(op).terminator) continue;
      uint16_t bit = type_bit(backend::native_key_type(f, v));
      tried[size_t(op)] |= bit;
      if (cf->helper_ops().empty()) seen[size_t(op)] |= bit;
    }
  }
  // tests/backend/native_ops.cpp's extra cases (state, uniform, votes) run
  // there on an AArch64 host; the op cases alone exercise every op declared
  // here except these, whose declaration that test checks.
  const Opcode state_only[] = {Opcode::Undef,  Opcode::LoadUniform, Opcode::LoadUniformIdx, Opcode::EntryMask,
                               Opcode::LaneId, Opcode::Ballot,      Opcode::Any,            Opcode::All};
  for (int op = 0; op < ir::kNumOpcodes; ++op) {
    const std::string op_name(ir::op_name(Opcode(op)));
    CAPTURE(op_name);
    uint16_t declared = (*tier.native_ops)[size_t(op)];
    CHECK_MESSAGE((seen[size_t(op)] & ~declared) == 0,
                  "native but undeclared: " << backend::type_set_name(seen[size_t(op)] & ~declared));
    if (std::find(std::begin(state_only), std::end(state_only), Opcode(op)) != std::end(state_only)) continue;
    CHECK_MESSAGE((declared & ~seen[size_t(op)]) == 0,
                  "declared but never compiled without a helper: "
                      << backend::type_set_name(declared & ~seen[size_t(op)]) << "; tried: "
                      << backend::type_set_name(tried[size_t(op)] & declared));
  }
  CHECK(compiled > 100);
}

#if GPURC_HAVE_X64
TEST_CASE("a64 jit: the gaps against the x64 tiers are the documented list") {
  size_t n = 0;
  const backend::HostTier* const* x = x64::tiers(n);
  const backend::NativeOps& neon = *neon_tier().native_ops;
  const backend::NativeOps gaps = gap_table();
  std::string actual_list;
  for (int op = 0; op < ir::kNumOpcodes; ++op) {
    const std::string op_name(ir::op_name(Opcode(op)));
    CAPTURE(op_name);
    uint16_t x64 = 0;
    for (size_t i = 0; i < n; ++i) x64 |= (*x[i]->native_ops)[size_t(op)];
    uint16_t gap = x64 & ~neon[size_t(op)];
    if (gap) actual_list += op_name + ": " + backend::type_set_name(gap) + "\n";
    CHECK_MESSAGE(gap == gaps[size_t(op)], "x64-native, not a64-native: " << backend::type_set_name(gap)
                                                                           << "; listed in kGaps: "
                                                                           << backend::type_set_name(gaps[size_t(op)]));
    CHECK_MESSAGE((neon[size_t(op)] & ~x64) == 0,
                  "a64-native but on neither x64 tier: " << backend::type_set_name(neon[size_t(op)] & ~x64));
  }
  MESSAGE("gaps:\n" << actual_list);
}
#endif

TEST_CASE("a64 jit: docs/backend_a64.md's native-op and gap tables are the declared data") {
  const std::string doc = read_doc("docs/backend_a64.md");
  auto section = [&](const std::string& name) {
    const std::string begin = "<!-- " + name + ": generated -->\n";
    const std::string end = "<!-- " + name + " end -->";
    size_t b = doc.find(begin), e = doc.find(end);
    REQUIRE_MESSAGE(b != std::string::npos, begin);
    REQUIRE_MESSAGE(e != std::string::npos, end);
    return doc.substr(b + begin.size(), e - b - begin.size());
  };
  const backend::HostTier& tier = neon_tier();
  std::string native = backend::native_ops_table({&tier});
  CHECK_MESSAGE(section("native-ops") == native, "replace the native-op table with:\n" << native);
  static const backend::NativeOps gaps = gap_table();
  const backend::HostTier gap_column{"x64 only", "x64", "", 0, nullptr, nullptr, &gaps};
  std::string gap_text = backend::native_ops_table({&gap_column});
  CHECK_MESSAGE(section("gaps") == gap_text, "replace the gap table with:\n" << gap_text);
}

}  // namespace gpurc_test_backend_a64_native_gaps
