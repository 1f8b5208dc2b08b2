#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <cstring>

#include "frontend/pica200/assembler.h"
#include "tests/pica200/exact_forms.h"
#include "frontend/pica200/interp.h"

namespace gpurc_test_pica200_interp {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc::pica;

namespace {

float f(uint32_t b) { return fp::from_bits(b); }
uint32_t b(float x) { return fp::bits(x); }

struct Harness {
  Shbin shbin;
  Program prog;
  Uniforms uni;
  VertexState st;
  fp::Options opt;
  explicit Harness(const std::string& text) {
    std::string err;
    bool ok = assemble(test::exact_forms(text), shbin, err);
    INFO(err);
    REQUIRE(ok);
    prog = program_of(shbin);
    if (!shbin.dvles.empty()) load_constants(shbin.dvles[0], uni);
  }
  RunResult run(GsState* gs = nullptr, uint64_t budget = 1u << 20) {
    Interpreter it(prog, uni, opt);
    uint32_t entry = shbin.dvles.empty() ? 0 : shbin.dvles[0].main_offset;
    return it.run(entry, st, gs, budget);
  }
  void ok_run() {
    RunResult r = run();
    INFO(r.fault);
    REQUIRE(r.ok);
  }
};

}  // namespace

TEST_CASE("pica200 interp: ADD, MUL and the 0 * inf = +0 rule (NaN * 0 stays NaN)") {
  Harness h("mul r0, v0, v1\nadd r1, v0, v1\nend\n");
  h.st.v[0] = {0.0f, INFINITY, NAN, -0.0f};
  h.st.v[1] = {INFINITY, 0.0f, 0.0f, 3.0f};
  h.ok_run();
  CHECK(b(h.st.r[0][0]) == 0u);           // 0 * inf = +0
  CHECK(b(h.st.r[0][1]) == 0u);           // inf * 0 = +0
  CHECK(std::isnan(h.st.r[0][2]));        // NaN * 0 = NaN
  CHECK(b(h.st.r[0][2]) == fp::kCanonicalNan);
  CHECK(b(h.st.r[0][3]) == 0x80000000u);  // -0 * 3 = -0 (ordinary IEEE)
  CHECK(std::isinf(h.st.r[1][0]));
  CHECK(std::isnan(h.st.r[1][2]));
}

TEST_CASE("pica200 interp: MAD is a rounded multiply then an add (not fused)") {
  Harness h("mad r0, v0, v1, v2\nend\n");
  float a = f(0x3F800001);  // 1 + 2^-23
  h.st.v[0] = {a, 0.0f, INFINITY, 2.0f};
  h.st.v[1] = {a, INFINITY, 0.0f, 3.0f};
  float prod = a * a;  // 1 + 2^-22 after rounding
  h.st.v[2] = {-prod, 5.0f, 1.0f, 1.0f};
  h.ok_run();
  CHECK(b(h.st.r[0][0]) == 0u);  // fused would give 2^-46
  CHECK(h.st.r[0][1] == 5.0f);   // 0 * inf + 5
  CHECK(h.st.r[0][2] == 1.0f);
  CHECK(h.st.r[0][3] == 7.0f);
}

TEST_CASE("pica200 interp: dot products sum x, y, z, w in order and DPH homogenises src1") {
  Harness h("dp4 r0, v0, v1\ndp3 r1, v0, v1\ndph r2, v0, v1\ndp4 r3, v2, v3\nend\n");
  h.st.v[0] = {1e20f, 1.0f, -1e20f, 100.0f};
  h.st.v[1] = {1.0f, 1.0f, 1.0f, 0.0f};
  h.st.v[2] = {0.0f, 1.0f, 2.0f, 3.0f};
  h.st.v[3] = {INFINITY, 1.0f, 1.0f, 1.0f};
  h.ok_run();
  CHECK(h.st.r[0][0] == 0.0f);  // ((1e20 + 1) - 1e20) + 0
  CHECK(h.st.r[0][3] == 0.0f);  // broadcast
  CHECK(h.st.r[1][2] == 0.0f);
  CHECK(h.st.r[2][0] == 0.0f);  // src1.w (100) is ignored; src2.w = 0 is added
  CHECK(h.st.r[3][0] == 6.0f);  // 0 * inf = 0 inside the dot product
}

TEST_CASE("pica200 interp: RCP/RSQ/EX2/LG2 read src1.x, broadcast, and their special cases") {
  Harness h(
      "rcp r0, v0\nrcp r1, v0.y\nrsq r2, v0.y\nrsq r3, v0.z\nex2 r4, v0.w\nlg2 r5, v0.x\nlg2 r6, v1\nrsq r7, v1.y\n"
      "rcp r8, v1.z\nend\n");
  h.st.v[0] = {0.0f, -0.0f, -1.0f, 3.0f};
  h.st.v[1] = {-2.0f, 4.0f, INFINITY, 0.0f};
  h.ok_run();
  CHECK(h.st.r[0][0] == INFINITY);
  CHECK(h.st.r[0][3] == INFINITY);
  CHECK(h.st.r[1][0] == INFINITY);  // rcp(-0) = +inf
  CHECK(h.st.r[2][1] == INFINITY);  // rsq(-0) = +inf
  CHECK(std::isnan(h.st.r[3][2]));  // rsq(-1) = NaN
  CHECK(h.st.r[4][0] == 8.0f);
  CHECK(h.st.r[4][3] == 8.0f);
  CHECK(h.st.r[5][1] == -INFINITY);  // lg2(0)
  CHECK(std::isnan(h.st.r[6][0]));   // lg2(-2)
  CHECK(h.st.r[7][0] == 0.5f);
  CHECK(b(h.st.r[8][0]) == 0u);      // rcp(inf) = +0
}

TEST_CASE("pica200 interp: MIN/MAX NaN rule and the max(0, -inf) option") {
  const char* src = "max r0, v0, v1\nmin r1, v0, v1\nmax r2, v1, v0\nend\n";
  Harness h(src);
  h.st.v[0] = {NAN, 2.0f, 0.0f, 1.0f};
  h.st.v[1] = {2.0f, NAN, -INFINITY, INFINITY};
  h.ok_run();
  CHECK(h.st.r[0][0] == 2.0f);         // max(NaN, 2) = second
  CHECK(std::isnan(h.st.r[0][1]));     // max(2, NaN) = second
  CHECK(h.st.r[0][2] == 0.0f);         // default: max(0, -inf) = 0
  CHECK(h.st.r[1][0] == 2.0f);
  CHECK(std::isnan(h.st.r[1][1]));
  CHECK(h.st.r[1][2] == -INFINITY);
  CHECK(h.st.r[0][3] == INFINITY);
  Harness q(src);
  q.opt.max_inf_quirk = true;
  q.st.v[0] = h.st.v[0];
  q.st.v[1] = h.st.v[1];
  q.ok_run();
  CHECK(q.st.r[0][2] == -INFINITY);    // quirk: an infinite second operand wins
  CHECK(q.st.r[2][2] == 0.0f);         // max(-inf, 0) = 0 either way
}

TEST_CASE("pica200 interp: subnormals flush except in CMP and MAX") {
  Harness h("add r0, v0, v1\nmax r1, v0, v1.w\nslt r2, v1, v0\ncmp v0, gt, gt, v1\nmov r3, v0\nmin r4, v0, v1.w\nend\n");
  float sub = f(0x00000005);
  h.st.v[0] = {sub, sub, sub, sub};
  h.st.v[1] = {0.0f, 0.0f, 0.0f, -1.0f};
  h.ok_run();
  CHECK(b(h.st.r[0][0]) == 0u);          // flushed
  CHECK(b(h.st.r[1][0]) == 0x00000005u); // MAX keeps its operand
  CHECK(h.st.r[2][0] == 0.0f);           // 0 < flushed subnormal is false
  CHECK(h.st.cmpx);                      // CMP sees the subnormal: sub > 0
  CHECK(b(h.st.r[3][0]) == 0x00000005u); // MOV moves bits
  CHECK(h.st.r[4][0] == -1.0f);
}

TEST_CASE("pica200 interp: FLR, SGE/SLT, DST, negation and masks") {
  Harness h("flr r0, v0\nsge r1, v0, v1\nslt r2, v0, v1\ndst r3, v0, v1\nmov r4.xz, -v0.wzyx\nend\n");
  h.st.v[0] = {-1.5f, 2.0f, 3.0f, 4.0f};
  h.st.v[1] = {-1.5f, 3.0f, 1.0f, 9.0f};
  h.st.r[4] = {7.0f, 7.0f, 7.0f, 7.0f};
  h.ok_run();
  CHECK(h.st.r[0] == Vec4{-2.0f, 2.0f, 3.0f, 4.0f});
  CHECK(h.st.r[1] == Vec4{1.0f, 0.0f, 1.0f, 0.0f});
  CHECK(h.st.r[2] == Vec4{0.0f, 1.0f, 0.0f, 1.0f});
  CHECK(h.st.r[3] == Vec4{1.0f, 6.0f, 3.0f, 9.0f});
  CHECK(h.st.r[4] == Vec4{-4.0f, 7.0f, -2.0f, 7.0f});
}

TEST_CASE("pica200 interp: LITP results and cmp flags") {
  Harness h("litp r0, v0\nend\n");
  h.st.v[0] = {-0.5f, 500.0f, 9.0f, 2.0f};
  h.ok_run();
  CHECK(h.st.r[0] == Vec4{0.0f, fp::kLitpLimit, 0.0f, 2.0f});
  CHECK(!h.st.cmpx);
  CHECK(h.st.cmpy);
}

TEST_CASE("pica200 interp: MOVA truncation and relative addressing rules") {
  Harness h(
      "mova a0.xy, v0\nmov r0, c10[a0.x]\nmov r1, c10[a0.y]\nmova a0.x, v1\nmov r2, c10[a0.x]\n"
      "mova a0.x, v2\nmov r3, c10[a0.x]\nmov r4, c95[a0.x]\nmova a0.x, v3\nmov r5, c0[a0.x]\nend\n");
  for (int i = 0; i < 96; ++i) h.uni.f[size_t(i)] = {float(i), 0, 0, 0};
  h.st.v[0] = {1.7f, -2.7f, 0, 0};  // a0.x = 1, a0.y = -2
  h.st.v[1] = {200.0f, 0, 0, 0};    // out of [-128, 127]: offset 0
  h.st.v[2] = {100.0f, 0, 0, 0};    // 10 + 100 = 110 > 95: (1,1,1,1); 95 + 100 wraps to 67
  h.st.v[3] = {-1.0f, 0, 0, 0};     // c0 - 1 wraps to 127: (1,1,1,1)
  h.ok_run();
  CHECK(h.st.a0y == -2);
  CHECK(h.st.r[0][0] == 11.0f);
  CHECK(h.st.r[1][0] == 8.0f);
  CHECK(h.st.r[2][0] == 10.0f);
  CHECK(h.st.r[3] == Vec4{1, 1, 1, 1});
  CHECK(h.st.r[4][0] == 67.0f);
  CHECK(h.st.r[5] == Vec4{1, 1, 1, 1});
}

TEST_CASE("pica200 interp: CMP operators, 6 and 7 always true, conditions") {
  Harness h(
      "cmp v0, eq, ne, v1\nifc cmp.x && !cmp.y\nmov r0, v2\n.end\n"
      "cmp v0, 6, 7, v1\nifc cmp.x || cmp.y, l_else, 1\nmov r1, v2\nl_else:\nmov r2, v2\nend\n");
  h.st.v[0] = {1, 2, 0, 0};
  h.st.v[1] = {1, 2, 0, 0};
  h.st.v[2] = {5, 5, 5, 5};
  h.ok_run();
  CHECK(h.st.r[0][0] == 5.0f);  // eq true, ne false
  CHECK(h.st.cmpx);
  CHECK(h.st.cmpy);
  CHECK(h.st.r[1][0] == 5.0f);  // then-part ran
  CHECK(h.st.r[2][0] == 0.0f);  // else-part skipped
}

TEST_CASE("pica200 interp: IFU/ELSE, LOOP with aL, CALL, JMPU inversion") {
  const char* src =
      ".proc main\n"
      "  ifu b0\n    mov r0, v0.x\n  .else\n    mov r0, v0.y\n  .end\n"
      "  mov r1, v1\n"
      "  for i0\n    add r1, c0[aL], r1\n  .end\n"
      "  call addone\n  call addone\n"
      "  jmpu !b1, skip\n  mov r3, v0.z\nskip:\n"
      "  end\n"
      ".end\n"
      ".proc addone\n  add r2, v0.w, r2\n.end\n";
  for (int bval = 0; bval < 2; ++bval) {
    Harness h(src);
    h.uni.b = uint16_t(bval | (bval << 1));
    h.uni.i[0] = {3, 2, 1, 0};  // 4 iterations, aL = 2, 3, 4, 5
    for (int i = 0; i < 96; ++i) h.uni.f[size_t(i)] = {float(i), 0, 0, 0};
    h.st.v[0] = {10, 20, 30, 1};
    h.ok_run();
    CHECK(h.st.r[0][0] == (bval ? 10.0f : 20.0f));
    CHECK(h.st.r[1][0] == 2.0f + 3 + 4 + 5);
    CHECK(h.st.aL == 6);
    CHECK(h.st.r[2][0] == 2.0f);
    CHECK(h.st.r[3][0] == (bval ? 30.0f : 0.0f));  // jmpu !b1 jumps when b1 is false
  }
}

TEST_CASE("pica200 interp: blocks ending on the same instruction (LOOP, then IF, then CALL)") {
  // The loop body, the if body and the procedure all end at the same add.
  Harness h(
      ".proc main\n  call f\n  end\n.end\n"
      ".proc f\n  ifu b0\n    for i0\n      add r0, r0, v0\n    .end\n  .end\n.end\n");
  h.uni.b = 1;
  h.uni.i[0] = {2, 0, 1, 0};
  h.st.v[0] = {1, 1, 1, 1};
  h.ok_run();
  CHECK(h.st.r[0][0] == 3.0f);
}

TEST_CASE("pica200 interp: BREAK and BREAKC leave the loop") {
  Harness h(
      "for i0\n  add r0, r0, v0\n  cmp r0, ge, ge, v1\n  breakc cmp.x\n.end\n"
      "for i1\n  add r1, r1, v0\n  break\n.end\nend\n");
  h.uni.i[0] = {100, 0, 1, 0};
  h.uni.i[1] = {100, 0, 1, 0};
  h.st.v[0] = {1, 1, 1, 1};
  h.st.v[1] = {5, 5, 5, 5};
  h.ok_run();
  CHECK(h.st.r[0][0] == 5.0f);
  CHECK(h.st.r[1][0] == 1.0f);
}

TEST_CASE("pica200 interp: faults are reported, never crash") {
  SUBCASE("call stack overflow") {
    Harness h(".proc main\n  call main, 2\n  end\n.end\n");
    RunResult r = h.run();
    CHECK(!r.ok);
    CHECK(r.fault.find("CALL stack overflow") != std::string::npos);
  }
  SUBCASE("endless loop") {
    Harness h("top:\njmpu !b0, top\nend\n");
    RunResult r = h.run(nullptr, 1000);
    CHECK(!r.ok);
    CHECK(r.fault.find("budget") != std::string::npos);
  }
  SUBCASE("unknown opcode names its address") {
    Harness h("nop\nnop\nend\n");
    h.prog.code[1] = 0x10u << 26;
    RunResult r = h.run();
    CHECK(!r.ok);
    CHECK(r.fault_addr == 1);
    CHECK(r.fault.find("0x001") != std::string::npos);
  }
  SUBCASE("running off the end") {
    Harness h("nop\n");
    CHECK(!h.run().ok);
  }
  SUBCASE("EMIT in a vertex shader") {
    Harness h("emit\nend\n");
    CHECK(!h.run().ok);
  }
}

TEST_CASE("pica200 interp: geometry shader SETEMIT/EMIT, vertex buffer reuse, b15") {
  const char* src =
      ".gsh point c0\n"
      "mov r0, v0\nmov o0, r0\nsetemit 0\nemit\n"
      "add r0, r0, v1\nmov o0, r0\nsetemit 1\nemit\n"
      "add r0, r0, v1\nmov o0, r0\nsetemit 2, prim inv\nemit\n"
      "add r0, r0, v1\nmov o0, r0\nsetemit 0, prim\nemit\nend\n";
  Harness h(src);
  CHECK(h.shbin.dvles[0].is_geometry == 1);
  h.st.v[0] = {0, 0, 0, 0};
  h.st.v[1] = {1, 1, 1, 1};
  GsState gs;
  RunResult r = run_geometry_invocation(h.prog, h.uni, 0, h.st, gs);
  REQUIRE(r.ok);
  CHECK(gs.emits == 4);
  REQUIRE(gs.primitives.size() == 2);
  CHECK(gs.primitives[0].winding);
  CHECK(gs.primitives[0].vertices[0][0][0] == 0.0f);
  CHECK(gs.primitives[0].vertices[1][0][0] == 1.0f);
  CHECK(gs.primitives[0].vertices[2][0][0] == 2.0f);
  CHECK(!gs.primitives[1].winding);
  CHECK(gs.primitives[1].vertices[0][0][0] == 3.0f);  // slot 0 replaced
  CHECK(gs.primitives[1].vertices[2][0][0] == 2.0f);  // slot 2 reused
  CHECK(h.uni.boolean(15));
}

TEST_CASE("pica200 float24 conversions") {
  CHECK(fp::f24_to_f32(fp::f32_to_f24(1.0f)) == 1.0f);
  CHECK(fp::f24_to_f32(fp::f32_to_f24(-3.5f)) == -3.5f);
  CHECK(fp::f24_to_f32(fp::f32_to_f24(0.0f)) == 0.0f);
  CHECK(std::isinf(fp::f24_to_f32(fp::f32_to_f24(1e30f))));  // beyond the 7-bit exponent
  CHECK(fp::f32_to_f24(1.0f) == 0x3F0000u);
}

TEST_CASE("pica200 float24 rounding (f24 mode): the 1.7.16 format's limits and round-to-nearest-even") {
  auto r = [](float x) { return fp::bits(fp::round24(x)); };
  const float ulp = std::ldexp(1.0f, -16);  // f24 mantissa step at 1.0
  CHECK(r(1.0f) == fp::bits(1.0f));
  CHECK(r(1.0f + ulp) == fp::bits(1.0f + ulp));                                     // representable
  CHECK(r(1.0f + ulp / 2) == fp::bits(1.0f));                                       // tie, even stays
  CHECK(r(1.0f + 3 * ulp / 2) == fp::bits(1.0f + 2 * ulp));                         // tie, odd rounds up
  CHECK(r(1.0f + ulp / 2 + std::ldexp(1.0f, -23)) == fp::bits(1.0f + ulp));         // above half
  CHECK(r(-(1.0f + ulp / 2 + std::ldexp(1.0f, -23))) == fp::bits(-(1.0f + ulp)));   // sign kept
  CHECK(r(2.0f - ulp / 4) == fp::bits(2.0f));                                       // carry into the exponent
  // Largest finite f24: 0x7EFFFF = (2 - 2^-16) * 2^63; anything rounding past it is inf.
  const float max24 = fp::f24_to_f32(0x7EFFFF);
  CHECK(max24 == std::ldexp(2.0f - ulp, 63));
  CHECK(r(max24) == fp::bits(max24));
  CHECK(r(std::ldexp(2.0f - ulp / 2, 63)) == 0x7F800000u);
  CHECK(r(std::ldexp(1.0f, 64)) == 0x7F800000u);
  CHECK(r(-1e20f) == 0xFF800000u);  // Citra's f24 tests: 1e20 is out of range
  // Smallest normal f24: 0x010000 = 2^-62; below it a zero of the same sign (no subnormals).
  CHECK(fp::f24_to_f32(0x010000) == std::ldexp(1.0f, -62));
  CHECK(r(std::ldexp(1.0f, -62)) == fp::bits(std::ldexp(1.0f, -62)));
  CHECK(r(std::ldexp(1.0f, -63)) == 0u);
  CHECK(r(-std::ldexp(1.5f, -63)) == 0x80000000u);
  CHECK(r(1e-20f) == 0u);
  CHECK(r(std::ldexp(2.0f - ulp / 4, -63)) == fp::bits(std::ldexp(1.0f, -62)));  // rounds up into range
  CHECK(r(INFINITY) == 0x7F800000u);
  CHECK(r(-INFINITY) == 0xFF800000u);
  CHECK(std::isnan(fp::round24(NAN)));
  // Every f24 value is exact; the f24 word comes back from f32_to_f24.
  std::mt19937 rng(24);
  for (int k = 0; k < 20000; ++k) {
    uint32_t w = rng() & 0xFFFFFF;
    uint32_t e = (w >> 16) & 0x7F;
    if (e == 0 || e == 0x7F) continue;
    float x = fp::f24_to_f32(w);
    REQUIRE(r(x) == fp::bits(x));
    REQUIRE(fp::f32_to_f24(x) == w);
  }
}

TEST_CASE("pica200 interp: f24 mode rounds every register write") {
  Harness h("add r0, v0, v1\nmul r1, v2, v2\nmov r2, v3\nmov o0, v3\nend\n");
  const float ulp = std::ldexp(1.0f, -16);
  h.st.v[0] = {1.0f, 1.0f, 0, 0};
  h.st.v[1] = {3 * ulp / 2, ulp / 4, 0, 0};
  h.st.v[2] = {std::ldexp(1.0f, 40), std::ldexp(1.0f, -40), 3, 0};
  h.st.v[3] = {1.0f + ulp / 2 + std::ldexp(1.0f, -23), 1e-30f, 0, 0};
  Harness g = h;
  h.opt.f24 = true;
  h.ok_run();
  CHECK(h.st.r[0][0] == 1.0f + 2 * ulp);
  CHECK(h.st.r[0][1] == 1.0f);
  CHECK(std::isinf(h.st.r[1][0]));  // 2^80: finite in fp32, beyond f24
  CHECK(h.st.r[1][1] == 0.0f);      // 2^-80
  CHECK(h.st.r[1][2] == 9.0f);
  CHECK(h.st.r[2][0] == 1.0f + ulp);
  CHECK(h.st.r[2][1] == 0.0f);
  CHECK(h.st.o[0][0] == 1.0f + ulp);
  g.ok_run();  // fp32 mode keeps the fp32 results
  CHECK(g.st.r[0][0] == 1.0f + 3 * ulp / 2);
  CHECK(g.st.r[1][0] == std::ldexp(1.0f, 80));
}

}  // namespace gpurc_test_pica200_interp
