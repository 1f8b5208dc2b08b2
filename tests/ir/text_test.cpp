// Text form: printer output, parser errors, and print/parse round trips.
#include <doctest/doctest.h>

#include <random>

#include "ir/builder.h"
#include "ir/ir.h"
#include "ir/scalar.h"
#include "random_ir.h"

namespace gpurc_test_ir_text_test {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc::ir;

namespace {
Function sample() {
  Function f;
  f.name = "sample";
  BlockId b0 = f.add_block("entry"), b1 = f.add_block(), b2 = f.add_block();
  f.add_var("r0", Type::F32);
  f.uniform_bytes = 16;
  Builder b(f);
  ValueId x = b.get_var(0);
  ValueId one = b.f32_bits(0x3f800000);
  ValueId s = b.binary(Opcode::FAdd, x, one, 0,
                       ff::FtzIn | with_round(with_nan(0, NanRule::AllOnes), Round::TowardZero));
  ValueId c = b.fcmp(FloatPred::Olt, s, one);
  b.cond_br(c, b1, b2);
  b.set_block(b1);
  b.br(b2);
  b.set_block(b2);
  ValueId p = b.emit(Opcode::Phi, Type::F32, {s, one});
  f.insts[p].uniform = true;
  b.set_var(0, p);
  b.ret();
  f.compute_preds();
  (void)b0;
  return f;
}

bool same_inst(const Inst& a, const Inst& b) {
  return a.op == b.op && a.type == b.type && a.attr == b.attr && a.fflags == b.fflags && a.imm == b.imm &&
         a.block == b.block && a.uniform == b.uniform && a.args == b.args;
}
}  // namespace

TEST_CASE("text: printer output is the documented form") {
  Function f = sample();
  CHECK(verify(f) == "");
  std::string t = print(f);
  CHECK(t.find("func \"sample\" {\n") == 0);
  CHECK(t.find("  var \"r0\" f32\n") != std::string::npos);
  CHECK(t.find("  uniform_bytes 16\n") != std::string::npos);
  CHECK(t.find("b0 \"entry\":\n") != std::string::npos);
  CHECK(t.find("  %0 = get_var f32 #0x0\n") != std::string::npos);
  CHECK(t.find("  %1 = const f32 #0x3f800000\n") != std::string::npos);
  CHECK(t.find("  %2 = fadd f32 %0, %1 [ftz_in, nan=allones, rnd=rtz]\n") != std::string::npos);
  CHECK(t.find("  %3 = fcmp.olt i1 %2, %1\n") != std::string::npos);
  CHECK(t.find("  cond_br %3, b1, b2\n") != std::string::npos);
  CHECK(t.find("  %6 = phi f32 [%2, b0], [%1, b1] !uniform\n") != std::string::npos);
  CHECK(t.find("  set_var %6, #0x0\n") != std::string::npos);
  CHECK(print_inst(f, 5) == "br b2");
  CHECK(print_inst(f, 4) == "cond_br %3, b1, b2");
}

TEST_CASE("text: round trip of hand-built functions") {
  Function f = sample();
  Function g;
  std::string err;
  REQUIRE_MESSAGE(parse(print(f), g, err), err);
  CHECK(print(g) == print(f));
  CHECK(verify(g) == "");
  REQUIRE(g.insts.size() == f.insts.size());
  for (ValueId v = 0; v < f.insts.size(); ++v) CHECK(same_inst(f.insts[v], g.insts[v]));
  CHECK(g.blocks[0].name == "entry");
  CHECK(g.blocks[2].preds == f.blocks[2].preds);
}

TEST_CASE("text: the Any NaN rule prints, parses, verifies and evaluates to some NaN") {
  Function f;
  f.add_block("entry");
  f.add_var("r0", Type::F32);
  Builder b(f);
  ValueId x = b.get_var(0);
  ValueId inf = b.f32_bits(0x7f800000);
  ValueId m = b.binary(Opcode::FMul, x, inf, 0, with_nan(ff::FtzIn, NanRule::Any));
  b.set_var(0, m);
  b.ret();
  f.compute_preds();
  CHECK(verify(f) == "");
  const std::string t = print(f);
  CHECK(t.find("fmul f32 %0, %1 [ftz_in, nan=any]") != std::string::npos);
  Function g;
  std::string err;
  REQUIRE_MESSAGE(parse(t, g, err), err);
  CHECK(verify(g) == "");
  CHECK(g.insts[m].fflags == f.insts[m].fflags);
  // The interpreter's NaN for the rule (0 * inf) is the canonical one.
  uint64_t args[2] = {0, 0x7f800000};
  CHECK(eval_lane(lane_op(f, m), args) == 0x7fc00000u);
}

TEST_CASE("text: the launch-contract header lines round trip") {
  for (int flags = 0; flags < 4; ++flags) {
    CAPTURE(flags);
    Function f = sample();
    f.unlaunched_lanes_free = flags & 1;
    f.no_draw_loop = flags & 2;
    const std::string t = print(f);
    CHECK((t.find("  no_draw_loop\n") != std::string::npos) == f.no_draw_loop);
    Function g;
    std::string err;
    REQUIRE_MESSAGE(parse(t, g, err), err);
    CHECK(g.unlaunched_lanes_free == f.unlaunched_lanes_free);
    CHECK(g.no_draw_loop == f.no_draw_loop);
    CHECK(print(g) == t);
  }
  Function g;
  std::string err;
  CHECK_FALSE(parse("func \"x\" {\n  no_draw_loop 1\nb0:\n  return\n}", g, err));
  CHECK(err.find("expected: no_draw_loop") != std::string::npos);
}

TEST_CASE("text: round trip of random functions over every field") {
  std::mt19937_64 rng(12345);
  int n = std::getenv("GPURC_TEST_LIGHT") ? 300 : 3000;
  for (int i = 0; i < n; ++i) {
    Function f = irtest::random_function(rng);
    std::string t = print(f);
    Function g;
    std::string err;
    INFO(t);
    REQUIRE_MESSAGE(parse(t, g, err), err);
    REQUIRE(print(g) == t);
    // Values keep their ids and every field.
    for (ValueId v = 0; v < f.insts.size(); ++v)
      if (f.insts[v].block != kNoBlock && f.insts[v].type != Type::Void) {
        REQUIRE(v < g.insts.size());
        CHECK(same_inst(f.insts[v], g.insts[v]));
      }
    REQUIRE(g.vars.size() == f.vars.size());
    for (size_t k = 0; k < f.vars.size(); ++k) CHECK((g.vars[k].name == f.vars[k].name && g.vars[k].type == f.vars[k].type));
    for (BlockId b = 0; b < f.blocks.size(); ++b) {
      CHECK(g.blocks[b].name == f.blocks[b].name);
      CHECK(g.blocks[b].succs == f.blocks[b].succs);
    }
    CHECK(g.name == f.name);
    CHECK(g.uniform_bytes == f.uniform_bytes);
  }
}

TEST_CASE("text: parser errors name the line") {
  auto err_of = [](std::string_view t) {
    Function g;
    std::string err;
    bool ok = parse(t, g, err);
    CHECK_FALSE(ok);
    return err;
  };
  CHECK(err_of("").find("missing '}'") != std::string::npos);
  CHECK(err_of("fun \"x\" {\n}").find("line 1") == 0);
  CHECK(err_of("func \"x\" {\nb0:\n  %0 = frob i32\n}").find("line 3: unknown op 'frob'") == 0);
  CHECK(err_of("func \"x\" {\nb0:\n  %0 = iadd i32 %1, %1\n  return\n}").find("%1 is not defined") != std::string::npos);
  CHECK(err_of("func \"x\" {\nb0:\n  %0 = const i32 #0x1\n  %0 = const i32 #0x2\n  return\n}").find("defined twice") !=
        std::string::npos);
  CHECK(err_of("func \"x\" {\nb0:\n  %0 = icmp.foo i1 %0, %0\n}").find("bad attribute") != std::string::npos);
  CHECK(err_of("func \"x\" {\nb0:\n  %0 = fadd f32 [wat]\n}").find("bad float flag") != std::string::npos);
  CHECK(err_of("func \"x\" {\nb0:\n  %0 = const i32 #0x1 junk\n}").find("line 3") == 0);
  CHECK(err_of("func \"x\" {\nb0:\n  %99999999999 = const i32 #0x1\n}").find("too large") != std::string::npos);
  CHECK(err_of("func \"x\" {\nb0:\n  br b1\nb1:\n  %0 = phi i32 [%1, b7]\n  %1 = const i32 #0x1\n  return\n}")
            .find("predecessor") != std::string::npos);
  CHECK(err_of("func \"x\" {\n  var \"unterminated f32\n}").find("unterminated") != std::string::npos);
  CHECK(err_of("func \"x\" {\nb0:\n  return\n}\nextra").find("after the end") != std::string::npos);
}

TEST_CASE("text: hand-written text parses, comments and blank lines ignored") {
  const char* t =
      "; a comment\n"
      "func \"hand\" {\n"
      "  var \"a\" i32   ; slot 0\n"
      "\n"
      "b0:\n"
      "  %0 = lane_id i32\n"
      "  %1 = const i32 #10\n"
      "  %2 = icmp.ult i1 %0, %1\n"
      "  cond_br %2, b1, b2\n"
      "b1:\n"
      "  set_var %0, #0\n"
      "  br b2\n"
      "b2:\n"
      "  return\n"
      "}\n";
  Function g;
  std::string err;
  REQUIRE_MESSAGE(parse(t, g, err), err);
  CHECK(verify(g) == "");
  CHECK(g.insts[1].imm == 10);
  CHECK(g.blocks[1].insts.size() == 2);
  CHECK(g.insts[g.blocks[1].insts[0]].op == Opcode::SetVar);
}

}  // namespace gpurc_test_ir_text_test
