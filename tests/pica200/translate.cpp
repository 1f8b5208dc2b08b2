// PICA200 translation: every program runs on the reference interpreter and,
// translated, on the IR interpreter and every JIT tier of the host; the end
// states of all vertices (and faults) must agree bit for bit.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <set>

#include "frontend/pica200/assembler.h"
#include "ir/passes.h"
#include "tests/pica200/exact_forms.h"
#include "frontend/pica200/interp.h"
#include "frontend/pica200/translate.h"
#include "frontend/pica200/shbin.h"
#include "recompiler/engine.h"
#include "recompiler/isa.h"
#include "runtime/memory.h"

namespace gpurc_test_pica200_translate {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::pica;

namespace {

bool light() { return std::getenv("GPURC_TEST_LIGHT") != nullptr; }

// Bit patterns the float rules treat specially.
constexpr uint32_t kEdge[] = {
    0x00000000, 0x80000000, 0x3F800000, 0xBF800000, 0x3F000000, 0x40000000, 0x40600000, 0xC0100000,
    0x00000001, 0x807FFFFF, 0x00400000, 0x00800000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000,
    0x7F800001, 0x7F7FFFFF, 0xFF7FFFFF, 0x42FFFE00, 0x43480000, 0x3FC00000, 0x4B000001, 0xC2F00000,
};

uint32_t random_float_bits(std::mt19937_64& rng) {
  switch (rng() % 4) {
    case 0: case 1: return kEdge[rng() % std::size(kEdge)];
    case 2: return fp::bits(float(int(rng() % 41) - 20) * 0.25f);  // small exact values
    default: return uint32_t(rng());
  }
}

Vec4 random_vec(std::mt19937_64& rng) {
  Vec4 v;
  for (float& x : v) x = fp::from_bits(random_float_bits(rng));
  return v;
}

VertexState random_state(std::mt19937_64& rng) {
  VertexState s;
  for (auto& v : s.v) v = random_vec(rng);
  for (auto& r : s.r) r = random_vec(rng);
  for (auto& o : s.o) o = random_vec(rng);
  static const int32_t kAddr[] = {0, 1, -1, 5, 127, -128, 128, -129, 200, 90, INT32_MIN, INT32_MAX};
  s.a0x = kAddr[rng() % std::size(kAddr)];
  s.a0y = int32_t(rng() % 300) - 150;
  s.aL = uint8_t(rng());
  s.cmpx = rng() & 1;
  s.cmpy = rng() & 1;
  return s;
}

// Compares every field by its bits; "" when equal.
std::string diff(const VertexState& a, const VertexState& b) {
  auto vecs = [](const char* name, const std::array<Vec4, 16>& x, const std::array<Vec4, 16>& y) -> std::string {
    for (int n = 0; n < 16; ++n)
      for (int c = 0; c < 4; ++c)
        if (fp::bits(x[n][c]) != fp::bits(y[n][c])) {
          char buf[96];
          std::snprintf(buf, sizeof buf, "%s%d.%c: 0x%08X vs 0x%08X", name, n, "xyzw"[c], fp::bits(x[n][c]),
                        fp::bits(y[n][c]));
          return buf;
        }
    return {};
  };
  for (auto s : {vecs("v", a.v, b.v), vecs("o", a.o, b.o), vecs("r", a.r, b.r)})
    if (!s.empty()) return s;
  if (a.a0x != b.a0x) return "a0.x " + std::to_string(a.a0x) + " vs " + std::to_string(b.a0x);
  if (a.a0y != b.a0y) return "a0.y " + std::to_string(a.a0y) + " vs " + std::to_string(b.a0y);
  if (a.aL != b.aL) return "aL " + std::to_string(a.aL) + " vs " + std::to_string(b.aL);
  if (a.cmpx != b.cmpx || a.cmpy != b.cmpy) return "cmp flags";
  return {};
}

struct Engines {
  std::vector<Engine> list{Engine::Interp};  // Interp here = the IR interpreter on the translated function
  Engines() {
    for (Engine e : host_jit_tiers()) list.push_back(e);
  }
};
const char* label(Engine e) { return e == Engine::Interp ? "ir-interp" : engine_name(e); }

struct Outcome {
  bool ok = true;
  uint32_t fault_addr = 0;
  std::string fault;
  ir::FaultKind kind = ir::FaultKind::Trap;
};

// Runs all states in warps of 32 on one engine; stops at the first faulting warp.
Outcome run_translated(const ir::Function& f, Engine e, const Uniforms& u, std::vector<VertexState>& states,
                       int64_t budget = int64_t(1) << 26) {
  Outcome out;
  CompiledIr c;
  std::string err;
  IrCompileOptions co;
  co.passes.verify_each = true;
  REQUIRE_MESSAGE(compile_ir(f, e, co, c, err), label(e), ": ", err);
  std::vector<uint8_t> packed = pack_uniforms(u);
  packed.resize(((std::max<size_t>(packed.size(), f.uniform_bytes) + 63) & ~size_t(63)) + 64, 0);
  size_t vars = (c.vars_bytes + 63) & ~size_t(63), frame = (c.exe->frame_bytes() + 63) & ~size_t(63);
  auto storage = rt::allocate_aligned(vars + frame + 64);
  for (size_t w = 0; w < states.size(); w += ir::kWarpLanes) {
    std::memset(storage.get(), 0, vars + frame);
    ir::WarpContext ctx;
    ctx.vars = storage.get();
    ctx.frame = storage.get() + vars;
    ctx.uniforms = packed.data();
    // `budget` counts loop iterations: a watchdog unit is an IR instruction
    // of one, and an iteration costs at most max_step_cost of them.
    ctx.budget = budget * int64_t(c.max_step_cost);
    uint32_t mask = 0;
    pack_lanes(f, states, w, ctx.vars, mask);
    ctx.entry_mask = mask;
    ir::RunStatus st = c.exe->run(ctx);
    if (st == ir::RunStatus::Fault) {
      out.ok = false;
      if (ctx.fault == ir::FaultKind::Trap) {
        out.fault = describe_trap(ctx.fault_code);
        out.fault_addr = uint32_t(ctx.fault_code & 0xFFFF);
      } else {
        out.fault = "fault kind " + std::to_string(int(ctx.fault));
        out.fault_addr = ~0u;
        out.kind = ctx.fault;
      }
      return out;
    }
    REQUIRE(st == ir::RunStatus::Done);
    unpack_lanes(f, ctx.vars, w, states);
  }
  return out;
}

struct Program_ {
  Shbin shbin;
  Program prog;
  uint32_t entry = 0;
  explicit Program_(const std::string& text) {
    std::string err;
    bool ok = assemble({AsmSource{"", test::exact_forms(text)}}, AsmOptions{}, shbin, err);
    INFO(err);
    REQUIRE(ok);
    prog = program_of(shbin);
    if (!shbin.dvles.empty()) entry = shbin.dvles[0].main_offset;
  }
};

Uniforms random_uniforms(std::mt19937_64& rng) {
  Uniforms u;
  for (size_t i = 0; i < 96; ++i) u.f[i] = rng() % 2 ? random_vec(rng) : Vec4{float(i), -float(i), 0.5f * float(i), 1};
  for (auto& iv : u.i) iv = {uint8_t(rng() % 4), uint8_t(rng()), uint8_t(rng() % 5), 0};
  u.b = uint16_t(rng());
  return u;
}

// The comparison: reference interpreter vs every engine, for each vertex count.
ir::Function must_translate(const Program_& p, fp::Options fpo, StackMode mode) {
  TranslateOptions to;
  to.entry = p.entry;
  to.fp = fpo;
  to.stacks = mode;
  ir::Function f;
  std::string err;
  REQUIRE_MESSAGE(translate(p.prog, to, f, err), err);
  return f;
}

// By default both translations of the CALL/IF/LOOP stacks are checked:
// expanded statically and as runtime vars.
void check(const std::string& text, const std::function<void(Uniforms&)>& setup = {},
           const std::function<void(VertexState&, size_t)>& init = {}, fp::Options fpo = {}, int rounds = 3,
           std::vector<StackMode> modes = {StackMode::Static, StackMode::Runtime}) {
  static const Engines engines;
  Program_ p(text);
  for (StackMode mode : modes) {
  ir::Function f = must_translate(p, fpo, mode);
  INFO("stacks ", mode == StackMode::Static ? "static" : mode == StackMode::Runtime ? "runtime" : "auto");
  std::mt19937_64 rng(std::hash<std::string>{}(text));
  std::vector<size_t> counts = light() ? std::vector<size_t>{1, 33} : std::vector<size_t>{1, 31, 32, 33, 70};
  if (light()) rounds = 1;
  for (int round = 0; round < rounds; ++round)
    for (size_t n : counts) {
      Uniforms u = random_uniforms(rng);
      if (setup) setup(u);
      std::vector<VertexState> init_states(n);
      for (size_t k = 0; k < n; ++k) {
        init_states[k] = random_state(rng);
        if (init) init(init_states[k], k);
      }
      std::vector<VertexState> ref = init_states;
      Interpreter it(p.prog, u, fpo);
      RunResult rr;
      size_t failed = 0;
      for (size_t k = 0; k < n && rr.ok; ++k) {
        rr = it.run(p.entry, ref[k]);
        failed = k;
      }
      for (Engine e : engines.list) {
        std::vector<VertexState> got = init_states;
        Outcome o = run_translated(f, e, u, got);
        INFO("engine ", std::string(label(e)), ", ", n, " vertices, round ", round);
        REQUIRE_MESSAGE(o.ok == rr.ok, "reference: ", rr.fault, " / translated: ", o.fault);
        if (!rr.ok) {
          CHECK(o.fault_addr == rr.fault_addr);
          (void)failed;
          continue;
        }
        for (size_t k = 0; k < n; ++k) {
          std::string d = diff(ref[k], got[k]);
          INFO("vertex ", k);
          REQUIRE_MESSAGE(d.empty(), d);
        }
      }
    }
  }
}

}  // namespace

TEST_CASE("pica200 translate: arithmetic, edge floats, swizzles, negation, masks") {
  check("add r0, v0, v1\nmul r1, v2, -v3.yxwz\nmad r2, v4, v5, v6\nmad r3.xz, v1, r2, c5\n"  // mad wide third: madi
        "dp3 r4, v0, v1\ndp4 r5.yw, -c3.wzyx, v2\ndph r6, v0, v1\ndph r7, v0, c7\n"  // dph c: dphi
        "dst r8, v1, v2\ndst r9, v3, c9\nmov o0, r0\nmov o1.xy, -v7.wwxy\nmul r10, r0, r1\nend\n");
  check("ex2 r0, v0\nlg2 r1, v1.y\nrcp r2, -v2.z\nrsq r3.xw, v3.w\nex2 r4, v4.yyyy\nlg2 r5, r0\nrcp r6, v6\n"
        "rsq r7, v7\nflr r8, v8\nflr r9, -v0.wzyx\nend\n");
  check("max r0, v0, v1\nmin r1, v2, v3\nmax r2, c1, v4.x\nmin r3, c2.y, -v5\nsge r4, v0, v1\nslt r5, v2, v3\n"
        "sge r6, v0, c4\nslt r7, v1, c5\nlitp r8, v8\nlitp r9.xz, -v9.wzyx\nmov o3, r8\nend\n");
  check("max r0, v0, v1\nmax r1, c1, v2.x\nend\n", {}, {}, fp::Options{true});
}

namespace {

// One vertex through the reference interpreter and, translated (both stack
// modes), every IR engine: each end state with the engine's name, for tests
// that check exact values rather than agreement.
std::vector<std::pair<std::string, VertexState>> run_everywhere(const std::string& text, const VertexState& init,
                                                                fp::Options fpo = {}) {
  static const Engines engines;
  Program_ p(text);
  std::vector<std::pair<std::string, VertexState>> out;
  VertexState ref = init;
  Uniforms u;
  RunResult rr = Interpreter(p.prog, u, fpo).run(p.entry, ref);
  REQUIRE_MESSAGE(rr.ok, rr.fault);
  out.emplace_back("interp", ref);
  for (StackMode mode : {StackMode::Static, StackMode::Runtime}) {
    ir::Function f = must_translate(p, fpo, mode);
    for (Engine e : engines.list) {
      std::vector<VertexState> st{init};
      Outcome o = run_translated(f, e, u, st);
      REQUIRE_MESSAGE(o.ok, o.fault);
      out.emplace_back(std::string(label(e)) + (mode == StackMode::Static ? "" : " (runtime stacks)"), st[0]);
    }
  }
  CHECK(out.size() == 1 + 2 * engines.list.size());
  return out;
}

}  // namespace

TEST_CASE("pica200 translate: RCP/RSQ special cases, 0 * inf, and both max(0, -inf) readings on every engine") {
  VertexState init;
  init.v[0] = {0.0f, -0.0f, -1.0f, INFINITY};
  init.v[1] = {fp::from_bits(0x00000001), -INFINITY, 4.0f, NAN};  // subnormal, -inf, 4, NaN
  init.v[2] = {0.0f, -INFINITY, 0.0f, 0.0f};
  init.v[3] = {-INFINITY, 0.0f, NAN, -0.0f};
  const char* src =
      "rcp r0, v0.x\nrcp r1, v0.y\nrsq r2, v0.x\nrsq r3, v0.y\nrsq r4, v0.z\nrcp r5, v0.w\nrsq r6, v0.w\n"
      "rcp r7, v1.x\nrsq r8, v1.z\nrcp r9, v1.w\n"
      "mul r10, v0.wxww, v0.xwzx\n"   // inf*0, 0*inf, inf*-1, inf*0
      "mul r11, v1.wwxx, v2\n"        // NaN*0, NaN*-inf, subnormal*0, subnormal*0
      "max r12, v2, v3\nend\n";      // max(0,-inf), max(-inf,0), max(0,NaN), max(0,-0)
  for (bool quirk : {false, true}) {
    fp::Options fpo;
    fpo.max_inf_quirk = quirk;
    for (auto& [engine, s] : run_everywhere(src, init, fpo)) {
      CAPTURE(engine);
      CAPTURE(quirk);
      auto bits = [&](unsigned r, unsigned c) { return fp::bits(s.r[r][c]); };
      for (unsigned c = 0; c < 4; ++c) {
        CHECK(bits(0, c) == 0x7F800000u);  // rcp(+0) = +inf, broadcast
        CHECK(bits(1, c) == 0x7F800000u);  // rcp(-0) = +inf
        CHECK(bits(2, c) == 0x7F800000u);  // rsq(+0) = +inf
        CHECK(bits(3, c) == 0x7F800000u);  // rsq(-0) = +inf
        CHECK(std::isnan(s.r[4][c]));      // rsq(-1) = NaN
        CHECK(bits(5, c) == 0u);           // rcp(inf) = +0
        CHECK(bits(6, c) == 0u);           // rsq(inf) = +0
        CHECK(bits(7, c) == 0x7F800000u);  // rcp(subnormal): flushed to +0 first
        CHECK(bits(8, c) == 0x3F000000u);  // rsq(4) = 0.5
        CHECK(std::isnan(s.r[9][c]));      // rcp(NaN)
      }
      CHECK(bits(10, 0) == 0u);  // inf * 0 = +0
      CHECK(bits(10, 1) == 0u);  // 0 * inf = +0
      CHECK(bits(10, 2) == 0xFF800000u);
      CHECK(bits(10, 3) == 0u);
      CHECK(std::isnan(s.r[11][0]));  // NaN * 0 stays NaN
      CHECK(std::isnan(s.r[11][1]));
      CHECK(bits(11, 2) == 0u);       // subnormal flushed
      CHECK(bits(11, 3) == 0u);
      // max(0, -inf): 0 by default, -inf with the quirk (an infinite second operand wins).
      CHECK(bits(12, 0) == (quirk ? 0xFF800000u : 0u));
      CHECK(bits(12, 1) == 0u);  // max(-inf, 0) = 0 either way
      CHECK(bits(12, 2) == fp::bits(NAN));  // (0 > NaN) is false: the NaN operand
      CHECK(bits(12, 3) == 0x80000000u);    // (0 > -0) is false: -0
    }
  }
}

// The x64 JIT runs PICA200 code with MXCSR.DAZ (docs/backend_x64.md): the
// flushed-operand arithmetic reads subnormals as zeros in hardware, while
// the unflushed CMP and MAX must still see them, products that round to a
// subnormal are still flushed (DAZ without FTZ), and 0 * inf with a
// subnormal zero still gives +0.
TEST_CASE("pica200 translate: subnormal operands of flushed and unflushed ops on every engine") {
  VertexState init;
  const float sub = fp::from_bits(0x00400000), nsub = fp::from_bits(0x807FFFFF);
  init.v[0] = {sub, nsub, 1e30f, INFINITY};
  init.v[1] = {0x1p-100f, 0x1p-30f, 0.0f, -1.0f};
  init.v[2] = {0x1p-63f, fp::from_bits(0x3F7FFFFF), 0x1p-64f, 0x1p-126f};  // 0x3F7FFFFF = 1 - 2^-24
  const char* src =
      "mul r0, v0.xyxy, v0.zzww\n"   // sub*1e30, -sub*1e30, sub*inf, -sub*inf
      "add r1, v0.xyxx, v0.yxzw\n"   // sub + -sub, -sub + sub, sub + 1e30, sub + inf
      "mul r2, v1.xxyw, v1.yyxx\n"   // 2^-130 (subnormal product), 2^-130, 2^-130, -2^-100
      "mul r3, v2.xyzw, v2.xwzx\n"   // 2^-126, (1 - 2^-24) 2^-126 (rounds up to 2^-126), 2^-128, 2^-189
      "max r4, v0.xyxy, v1.zzzz\n"   // unflushed: max(sub, 0) = sub, max(-sub, 0) = 0
      "cmp v0, gt, lt, v1.zzzz\n"    // unflushed: sub > 0, -sub < 0
      "min r5, v0.xyxy, v1.zzzz\n"   // flushed: min(+0, 0), min(-0, 0)
      "end\n";
  for (auto& [engine, s] : run_everywhere(src, init)) {
    CAPTURE(engine);
    auto bits = [&](unsigned r, unsigned c) { return fp::bits(s.r[r][c]); };
    CHECK(bits(0, 0) == 0u);
    CHECK(bits(0, 1) == 0x80000000u);
    CHECK(bits(0, 2) == 0u);  // 0 * inf = +0
    CHECK(bits(0, 3) == 0u);
    CHECK(bits(1, 0) == 0u);  // +0 + -0
    CHECK(bits(1, 1) == 0u);
    CHECK(bits(1, 2) == fp::bits(1e30f));
    CHECK(bits(1, 3) == 0x7F800000u);
    CHECK(bits(2, 0) == 0u);  // a subnormal product is flushed
    CHECK(bits(2, 1) == 0u);
    CHECK(bits(2, 2) == 0u);
    CHECK(bits(2, 3) == fp::bits(-0x1p-100f));
    CHECK(bits(3, 0) == 0x00800000u);  // the smallest normal stays
    CHECK(bits(3, 1) == 0x00800000u);  // tiny before rounding, normal after: stays (x86 FTZ would flush it)
    CHECK(bits(3, 2) == 0u);
    CHECK(bits(3, 3) == 0u);
    CHECK(bits(4, 0) == 0x00400000u);
    CHECK(bits(4, 1) == 0u);
    CHECK(s.cmpx);
    CHECK(s.cmpy);
    CHECK(bits(5, 0) == 0u);
    CHECK(bits(5, 1) == 0u);
  }
}

TEST_CASE("pica200 translate: f24 mode rounds register writes like the interpreter on every engine") {
  fp::Options f24;
  f24.f24 = true;
  check("add r0, v0, v1\nmul r1, v2, -v3.yxwz\nmad r2, v4, v5, v6\ndp4 r3, c3, v2\ndph r4, v0, c7\n"
        "rcp r5, v1\nrsq r6, v2.y\nex2 r7, v3\nlg2 r8, v4\nflr r9, v5\nmax r10, v0, v1\nmin r11, v2, v3\n"
        "litp r12, v6\ndst r13, v1, v2\nmov o0, v7\nmov o1.xy, -v8.wwxy\nsge r14, v0, v1\nend\n",
        {}, {}, f24);
  VertexState init;
  const float ulp = std::ldexp(1.0f, -16);
  init.v[0] = {1.0f, 1.0f, std::ldexp(1.0f, 40), std::ldexp(1.0f, -40)};
  init.v[1] = {3 * ulp / 2, ulp / 4, std::ldexp(1.0f, 40), std::ldexp(1.0f, -40)};
  for (auto& [engine, st] : run_everywhere("add r0, v0, v1\nmul r1, v0, v1\nmov o0, v1\nend\n", init, f24)) {
    CAPTURE(engine);
    CHECK(st.r[0][0] == 1.0f + 2 * ulp);  // tie to even
    CHECK(st.r[0][1] == 1.0f);
    CHECK(std::isinf(st.r[1][2]));        // 2^80 overflows f24
    CHECK(fp::bits(st.r[1][3]) == 0u);    // 2^-80 underflows
    CHECK(st.o[0][0] == 3 * ulp / 2);     // exact in f24
  }
}

TEST_CASE("pica200 translate: CMP (all operators), MOVA and relative addressing") {
  for (const char* ops : {"eq, ne", "lt, le", "gt, ge", "6, 7", "ge, lt"}) {
    std::string src = std::string("cmp v0, ") + ops + ", v1\nend\n";
    check(src);
  }
  check("mova a0.xy, v0\nmov r0, c10[a0.x]\nmov r1, -c20[a0.y].wzyx\nmova a0.x, v1\nadd r2, c90[a0.x], v2\n"
        "mova a0.y, v3\ndp4 r3, c0[a0.y], r0\nmad r4, v1, r1, c3[a0.x]\nend\n",
        {}, [](VertexState& s, size_t k) {
          // Indices that stay in range, wrap, exceed 95 and leave [-128, 127].
          static const float kIdx[] = {0, 1.7f, -2.7f, 70, 100, -100, 127.9f, -128.5f, 200, NAN, INFINITY, -1e10f};
          s.v[0][0] = kIdx[k % 12];
          s.v[0][1] = kIdx[(k * 5 + 3) % 12];
          s.v[1][0] = kIdx[(k * 7 + 1) % 12];
          s.v[3][1] = kIdx[(k * 11 + 2) % 12];
        });
  check("mova a0.x, v0\nmov r0, c95[a0.x]\nend\n");  // random a0 values (huge ones too)
}

TEST_CASE("pica200 translate: uniform control flow (IFU/ELSE, LOOP with aL, CALL, CALLU, JMPU inversion)") {
  const char* src =
      ".proc main\n"
      "  ifu b0\n    mov r0, v0.x\n    ifu b2\n      mov r5, v5\n    .else\n      add r5, v5, v6\n    .end\n"
      "  .else\n    mov r0, v0.y\n  .end\n"
      "  mov r1, v1\n"
      "  for i0\n    add r1, c0[aL], r1\n    for i1\n      mad r2, r2, c1[aL], v2\n    .end\n  .end\n"
      "  call addone\n  callu b3, addone\n  call twice\n"
      "  jmpu !b1, skip\n  mov r3, v0.z\nskip:\n"
      "  jmpu b4, skip2\n  mov r4, v0.w\nskip2:\n"
      "  end\n"
      ".end\n"
      ".proc addone\n  add r6, v0.w, r6\n.end\n"
      ".proc twice\n  call addone\n  call addone\n.end\n";
  for (unsigned bits = 0; bits < 32; bits += light() ? 7 : 1)
    check(src, [&](Uniforms& u) {
      u.b = uint16_t(bits);
      u.i[0][0] = uint8_t(bits % 3);
      u.i[1][0] = uint8_t(bits % 2);
    }, {}, {}, 1);
}

TEST_CASE("pica200 translate: divergent IFC/JMPC/BREAKC/CALLC") {
  const char* src =
      ".proc main\n"
      "  cmp v0, lt, ge, v1\n"
      "  ifc cmp.x\n    mov r0, v2\n    ifc !cmp.y\n      add r0, r0, v3\n    .else\n      mul r0, r0, v3\n    .end\n"
      "  .else\n    mov r0, v4\n  .end\n"
      "  callc cmp.x && cmp.y, f\n"
      "  callc !cmp.x || cmp.y, g\n"
      "  for i0\n    add r1, r1, v5\n    cmp r1, ge, ge, v6\n    breakc cmp.x\n    add r2, c0[aL], r2\n  .end\n"
      "  for i1\n    cmp r1, gt, lt, r2\n    ifc cmp.y\n      breakc cmp.x\n    .end\n    add r3, r3, v7\n  .end\n"
      "  cmp v1, eq, eq, v2\n"
      "  jmpc !cmp.x && !cmp.y, skip\n  mov o0, v8\nskip:\n"
      "  end\n"
      ".end\n"
      ".proc f\n  add r4, r4, v9\n  callc cmp.x, g\n.end\n"
      ".proc g\n  mul r5, r5, v10\n.end\n";
  check(src, [](Uniforms& u) {
    u.i[0] = {9, 0, 1, 0};
    u.i[1] = {6, 250, 3, 0};
  }, [](VertexState& s, size_t k) {
    // Varying loop exits: the sum reaches the bound after k % 7 iterations.
    s.v[5] = {1, 1, 1, 1};
    s.v[6] = {float(k % 7), 3, 3, 3};
    s.r[1] = {0, 0, 0, 0};
    s.r[2] = {float(k % 5), 0, 0, 0};
  });
}

TEST_CASE("pica200 translate: blocks ending on one instruction (LOOP, then IF, then CALL), explicit forms") {
  // Raw forms so several blocks share their last instruction.
  //  0: call 2, 5  -> proc 2..6
  //  1: end
  //  2: ifu b0, 6, 1   (then 2..5, else 6)
  //  3: loop i0, 5     (body 4..5)
  //  4: add r0, r0, v0
  //  5: add r1, c0[aL], r1   <- loop, if and call end here (next = 6)
  //  6: mul r2, r2, v1
  const char* src =
      "call 2, 5\nend\nifu b0, 6, 1\nloop i0, 5\nadd r0, r0, v0\nadd r1, c0[aL], r1\nmul r2, r2, v1\n";
  for (int b = 0; b < 2; ++b)
    check(src, [&](Uniforms& u) {
      u.b = uint16_t(b);
      u.i[0] = {2, 1, 2, 0};
    });
  // IFC whose else part is also a loop end; JMPC backwards (a guest loop).
  check("mov r0, v0\nloop:\nadd r0, c1, r0\ncmp c2, gt, gt, r0\njmpc cmp.x, loop\nend\n", [](Uniforms& u) {
    u.f[1] = {1, 1, 1, 1};
    u.f[2] = {5, 5, 5, 5};
  }, [](VertexState& s, size_t k) { s.v[0] = {float(k % 9) - 2, 0, 0, 0}; });
}

namespace {

// main -> a -> b -> c -> d, each with `k` conditional call sites of the
// next: k^4 distinct CALL stacks reach d. `prologue` starts main; d's body is `leaf`.
std::string nested_calls(int k, const std::string& prologue, const std::string& leaf) {
  std::string src = ".proc main\n" + prologue + "  cmp v0, lt, ge, v1\n";
  auto calls = [&](const char* cond, const char* to) {
    for (int n = 0; n < k; ++n) src += std::string("  callc ") + cond + ", " + to + "\n";
  };
  calls("cmp.x", "a");
  src += "  end\n.end\n.proc a\n";
  calls("cmp.y", "b");
  src += ".end\n.proc b\n";
  calls("cmp.x", "c");
  src += ".end\n.proc c\n";
  calls("cmp.y", "d");
  return src + ".end\n.proc d\n" + leaf + ".end\n";
}

}  // namespace

namespace {

// Static mode refuses `src` with an error containing `why`; Auto falls back
// to runtime stacks, whose translation then matches the interpreter.
// `deep_in_light`: whether, under GPURC_TEST_LIGHT, some vertex still runs
// the calls down to `d`. With runtime stacks a warp runs every call any of
// its lanes takes, so one such vertex makes its warp interpret all k^4 calls
// (seconds for k = 14, minutes under qemu); the release run always does.
void check_fallback(const std::string& src, const char* why, bool deep_in_light = true) {
  Program_ p(src);
  TranslateOptions to;
  to.entry = p.entry;
  to.stacks = StackMode::Static;
  ir::Function f;
  std::string err;
  CHECK(!translate(p.prog, to, f, err));
  CHECK(err.find(why) != std::string::npos);
  to.stacks = StackMode::Auto;
  REQUIRE_MESSAGE(translate(p.prog, to, f, err), err);
  bool runtime = false;
  for (const auto& v : f.vars) runtime |= v.name == "pc";
  CHECK(runtime);
  CHECK(f.insts.size() < kMaxStaticInsts);
  // cmp.x (lt) holds for k % 3 == 0, cmp.y (ge) for odd k (for none when the
  // deep calls are left out): `a` calls `b` only where both hold.
  const bool deep = deep_in_light || !light();
  check(src, {}, [deep](VertexState& s, size_t k) {
    s.v[0] = {float(k % 3), deep ? float(k % 2) : 0.0f, 0, 0};
    s.v[1] = {1, 1, 0, 0};
    s.v[3] = {float(k % 7), 0, 0, 0};
  }, {}, 1, {StackMode::Auto});
}

}  // namespace

TEST_CASE("pica200 translate: too many static stack states fall back to runtime stacks") {
  // 14 conditional call sites per level, 4 levels deep: 14^4 distinct CALL
  // stacks reach `d`, more than kMaxStaticStates (found by the fuzzer as
  // tests/regressions/pica200-static-stack-explosion.json).
  // The deep runtime calls are checked by the next case's 5^4 in light runs.
  check_fallback(nested_calls(14, "", "  add r0, r0, v2\n"), "too complex", false);
}

TEST_CASE("pica200 translate: a static expansion with too much duplicated code falls back to runtime stacks") {
  // 5^4 CALL stacks reach `d`, far below kMaxStaticStates, but the 625
  // copies of d's 16 relative-read ADDs (~45 IR instructions each: the index
  // rule, four load_uniform_idx with the 96-entry select, the adds) pass
  // kMaxStaticInsts. (Each read was a ~500-op select tree before
  // load_uniform_idx; two ADDs were enough then.)
  std::string leaf;
  for (int i = 0; i < 8; ++i) leaf += "  add r0, c0[a0.x], r0\n  add r1, c8[a0.x], r1\n";
  check_fallback(nested_calls(5, "  mova a0.x, v3\n", leaf), "too large");
}

TEST_CASE("pica200 translate: faults match the interpreter (stack overflows, bad words, missing descriptors)") {
  // Recursion overflows the 4-deep CALL stack only for vertices taking the CALLC.
  check(".proc main\n  cmp v0, lt, lt, v1\n  callc cmp.x, main\n  end\n.end\n");
  // IF stack: 9 nested IFUs.
  {
    std::string s;
    for (int i = 0; i < 9; ++i) s += "ifu b0\n";
    s += "mov r0, v0\n";
    for (int i = 0; i < 9; ++i) s += ".end\n";
    s += "end\n";
    check(s, [](Uniforms& u) { u.b = 1; });
  }
  // Running past the end; EMIT in a vertex shader.
  check("mov r0, v0\n");
  check("cmp v0, lt, lt, v1\nifc cmp.x\nemit\n.end\nend\n");
  // An invalid word behind a divergent branch.
  Program_ p("cmp v0, lt, lt, v1\njmpc cmp.x, 4\nmov r0, v0\nend\nnop\nend\n");
  p.prog.code[4] = 0x10u << 26;
  for (StackMode mode : {StackMode::Static, StackMode::Runtime}) {
  TranslateOptions to;
  to.stacks = mode;
  ir::Function f;
  std::string err;
  REQUIRE(translate(p.prog, to, f, err));
  std::vector<VertexState> st(40);
  for (size_t k = 0; k < st.size(); ++k) st[k].v[0][0] = k == 37 ? -1.0f : 1.0f;
  Uniforms u;
  Outcome o = run_translated(f, Engine::Interp, u, st);
  CHECK(!o.ok);
  CHECK(o.fault_addr == 4);
  CHECK(o.fault.find("invalid instruction at 0x004") != std::string::npos);
  // Raw words without descriptors: ALU ops trap.
  Program raw{{p.prog.code[2], p.prog.code[3]}, {}};
  REQUIRE(translate(raw, to, f, err));
  st.assign(3, VertexState{});
  o = run_translated(f, Engine::Interp, u, st);
  CHECK(!o.ok);
  CHECK(o.fault.find("descriptor") != std::string::npos);
  }
}

TEST_CASE("pica200 translate: the IR names the PICA float rules") {
  Program_ p("mul r0, v0, v1\nrcp r1, v2\nend\n");
  ir::Function f;
  std::string err;
  REQUIRE(translate(p.prog, TranslateOptions{}, f, err));
  std::string text = ir::print(f);
  CHECK(text.find("zero_mul") != std::string::npos);
  CHECK(text.find("frcp.pica") != std::string::npos);
  CHECK(f.uniform_bytes == kUniformBytes);
  CHECK(f.vars.size() >= kNumStateVars);
}

// Eleventh session (issue 13, the loop shader): a vertex shader's LOOP
// counters and steps are vars private to the run (ir::Function::state_vars):
// nothing loads them at entry or stores them at an exit, so after the
// pipeline they are gone, and a counted loop's counter only decides its
// branch; i.z is read once at the LOOP, not at every end of the body. Geometry
// shaders keep the counters as state (their emit vars come after them).
// The semantics (nested loops, steps, aL wrapping) are the control-flow
// tests above.
TEST_CASE("pica200 translate: LOOP counters and steps are private to a vertex shader's run") {
  Program_ p(".proc main\n  mov r1, v1\n  for i0\n    add r1, c0[aL], r1\n    for i1\n      mad r2, r2, c1[aL], v2\n"
             "    .end\n  .end\n  end\n.end\n");
  TranslateOptions to;
  to.entry = p.entry;
  to.stacks = StackMode::Static;
  ir::Function f;
  std::string err;
  REQUIRE_MESSAGE(translate(p.prog, to, f, err), err);
  CHECK(f.state_vars == kNumStateVars);
  size_t step_reads = 0;
  for (const ir::Inst& in : f.insts)
    step_reads += in.block != ir::kNoBlock && in.op == ir::Opcode::LoadUniform &&
                  (in.imm - kUniformInt) % 16 == 8 && in.imm >= kUniformInt;
  CHECK(step_reads == 2);  // one per LOOP instruction, at the LOOP
  REQUIRE(ir::run_pipeline(f, ir::PassOptions{}) == "");
  CHECK(f.vars.size() == kNumStateVars);
  for (const ir::Inst& in : f.insts)
    if (in.block != ir::kNoBlock && (in.op == ir::Opcode::StoreVar || in.op == ir::Opcode::LoadVar))
      CHECK(in.imm < kNumStateVars);
  TranslateOptions gs = to;
  gs.geometry = true;
  ir::Function g;
  REQUIRE_MESSAGE(translate(p.prog, gs, g, err), err);
  CHECK(g.state_vars == ir::Function::kAllStateVars);
}

TEST_CASE("pica200 translate: a block reads each register once and makes each constant once") {
  // The translator numbers values within the block it fills (LocalBuilder in
  // translate_impl.h): a register component read again, or read after the
  // block wrote it, is the value it already has, not another get_var; an
  // i1/i32/f32 constant is made once per block. (Before, every source
  // operand was a get_var per component: 196 get_vars for ~20 registers in
  // the heavy reference shader.) The programs still agree with the
  // interpreter on every engine, and a var written in a block reads back what
  // was written.
  const std::string text =
      "mul r0, v0, v0\nadd r1, r0, v0\nmad r2, r1, v0, r0\ndp4 r3, r2, v0\nmin r4, r3, v1\n"
      "max r5, r4, -v1\nmul r0, r0, r5\nadd o0, r0, r1\nmov o1, r0.wzyx\nrcp o2, r0.x\n"
      "mul r6, -v2.xxxx, v0\nmin r7, r3, v1\nmin o3, r7, r6\nend\n";
  check(text);
  for (StackMode mode : {StackMode::Static, StackMode::Runtime}) {
    Program_ p(text);
    TranslateOptions to;
    to.stacks = mode;
    ir::Function f;
    std::string err;
    REQUIRE(translate(p.prog, to, f, err));
    for (const ir::Block& b : f.blocks) {
      std::set<uint64_t> read, consts, negs, casts;
      std::set<uint32_t> written;
      for (ir::ValueId v : b.insts) {
        const ir::Inst& in = f.insts[v];
        if (in.op == ir::Opcode::GetVar) {
          CHECK_MESSAGE(read.insert(in.imm).second, "var ", f.vars[in.imm].name, " read twice in one block");
          CHECK_MESSAGE(!written.count(uint32_t(in.imm)), "var ", f.vars[in.imm].name, " read after its write");
        }
        if (in.op == ir::Opcode::SetVar) written.insert(uint32_t(in.imm));
        // A negated source (-v2.xxxx) and flush() (min's operands; r3 holds one value in all four components)
        // are built once per value.
        if (in.op == ir::Opcode::FNeg) CHECK_MESSAGE(negs.insert(in.args[0]).second, "fneg of one value made twice");
        if (in.op == ir::Opcode::Bitcast)
          CHECK_MESSAGE(casts.insert(uint64_t(in.type) << 32 | in.args[0]).second, "bitcast of one value made twice");
        if (in.op == ir::Opcode::Const && (in.type == ir::Type::I1 || in.type == ir::Type::I32 || in.type == ir::Type::F32))
          CHECK_MESSAGE(consts.insert(uint64_t(in.type) << 32 | in.imm).second, "constant made twice in one block");
      }
    }
  }
}

TEST_CASE("pica200 translate: an endless guest loop stops at the watchdog on every engine") {
  static const Engines engines;
  Program_ p("top:\njmpu !b0, top\nend\n");
  ir::Function f;
  std::string err;
  REQUIRE(translate(p.prog, TranslateOptions{}, f, err));
  Uniforms u;  // b0 false: jump forever
  for (Engine e : engines.list) {
    std::vector<VertexState> st(33);
    Outcome o = run_translated(f, e, u, st, int64_t(1) << 16);
    INFO(std::string(label(e)));
    CHECK(!o.ok);
    CHECK(o.kind == ir::FaultKind::Watchdog);
  }
  CHECK(engines.list.size() == 1 + host_jit_tiers().size());
}

TEST_CASE("pica200 translate: isa::IsaModule::translate takes .shbin (first DVLE's entry) and raw words") {
  Shbin s;
  std::string err;
  REQUIRE(assemble(".proc helper\n  mov r1, v1\n.end\n.proc main\n  call helper\n  mul r0, v0, r1\n  end\n.end\n", s, err));
  std::vector<uint8_t> bytes = write_shbin(s);
  ir::Function f;
  REQUIRE_MESSAGE(find_isa("pica200")->translate(bytes, "", f, err), err);
  // Same IR as translating the program from the DVLE's entry directly.
  ir::Function direct;
  TranslateOptions to;
  to.entry = s.dvles[0].main_offset;
  REQUIRE(translate(program_of(s), to, direct, err));
  CHECK(ir::print(f) == ir::print(direct));
  CHECK(to.entry != 0);
  // Raw words: entry 0; the odd byte count is an error.
  std::vector<uint8_t> raw;
  for (uint32_t w : s.code)
    for (int k = 0; k < 4; ++k) raw.push_back(uint8_t(w >> (8 * k)));
  CHECK(find_isa("pica200")->translate(raw, "", f, err));
  raw.push_back(0);
  CHECK(!find_isa("pica200")->translate(raw, "", f, err));
  CHECK(!find_isa("pica200")->translate(bytes, "nosuchvariant", f, err));
}

}  // namespace gpurc_test_pica200_translate
