// PICA200 geometry shaders on the translation: SETEMIT/EMIT become emit
// records in guest memory (translate.h) that unpack_emits turns back into
// GsState. Every engine (IR interpreter, each JIT tier, and the runner
// run_geometry) must give the reference interpreter's GsState and end
// state bit for bit.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <cstring>
#include <random>

#include "frontend/pica200/assembler.h"
#include "tests/pica200/exact_forms.h"
#include "frontend/pica200/interp.h"
#include "frontend/pica200/module/launch.h"
#include "frontend/pica200/translate.h"
#include "ir/interp.h"
#include "recompiler/engine.h"
#include "recompiler/isa_engine.h"
#include "runtime/memory.h"

namespace gpurc_test_pica200_translate_gs {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::pica;

namespace {

bool light() { return std::getenv("GPURC_TEST_LIGHT") != nullptr; }

Program assemble_program(const std::string& text, uint32_t& entry) {
  Shbin shbin;
  std::string err;
  bool ok = assemble(test::exact_forms(text), shbin, err);
  INFO(err);
  REQUIRE(ok);
  entry = shbin.dvles.empty() ? 0 : shbin.dvles[0].main_offset;
  return program_of(shbin);
}

bool same_bits(const std::array<Vec4, 16>& a, const std::array<Vec4, 16>& b) {
  for (size_t n = 0; n < 16; ++n)
    for (size_t c = 0; c < 4; ++c)
      if (fp::bits(a[n][c]) != fp::bits(b[n][c])) return false;
  return true;
}

// "" when the vertex state and emission state agree bit for bit.
std::string diff(const VertexState& a, const VertexState& b, const GsState& ga, const GsState& gb) {
  if (!same_bits(a.o, b.o) || !same_bits(a.r, b.r) || !same_bits(a.v, b.v)) return "registers";
  if (a.a0x != b.a0x || a.a0y != b.a0y || a.aL != b.aL || a.cmpx != b.cmpx || a.cmpy != b.cmpy) return "a0/aL/cmp";
  if (ga.vtxid != gb.vtxid || ga.prim != gb.prim || ga.winding != gb.winding) return "SETEMIT latch";
  if (ga.emits != gb.emits) return "emits " + std::to_string(ga.emits) + " vs " + std::to_string(gb.emits);
  for (size_t k = 0; k < 4; ++k)
    if (!same_bits(ga.buffer[k], gb.buffer[k])) return "vertex buffer " + std::to_string(k);
  if (ga.primitives.size() != gb.primitives.size())
    return "primitives " + std::to_string(ga.primitives.size()) + " vs " + std::to_string(gb.primitives.size());
  for (size_t p = 0; p < ga.primitives.size(); ++p) {
    if (ga.primitives[p].winding != gb.primitives[p].winding) return "winding of primitive " + std::to_string(p);
    for (size_t v = 0; v < 3; ++v)
      if (!same_bits(ga.primitives[p].vertices[v], gb.primitives[p].vertices[v]))
        return "primitive " + std::to_string(p) + " vertex " + std::to_string(v);
  }
  return {};
}

struct Outcome {
  bool ok = true;
  std::string fault;
};

// Warps of 32 through one executable with the emit record area as the only
// guest memory; independent of frontend/pica200/module/launch.cpp on purpose.
Outcome run_warps(const ir::Function& f, const ir::Executable& exe, size_t vars_bytes, const Uniforms& u,
                  std::vector<VertexState>& states, std::vector<GsState>& gs) {
  gs.assign(states.size(), GsState{});
  std::vector<uint8_t> packed = pack_uniforms(u);
  packed.resize(((std::max<size_t>(packed.size(), f.uniform_bytes) + 63) & ~size_t(63)) + 64, 0);
  size_t vars = (vars_bytes + 63) & ~size_t(63), frame = (exe.frame_bytes() + 63) & ~size_t(63);
  auto storage = rt::allocate_aligned(vars + frame + 64);
  rt::Memory mem;
  std::string err;
  REQUIRE(mem.add_buffer("emits", ir::Space::Global, kEmitBase, kEmitWarpBytes, err));
  for (size_t w = 0; w < states.size(); w += ir::kWarpLanes) {
    std::memset(storage.get(), 0, vars + frame);
    ir::WarpContext ctx;
    ctx.vars = storage.get();
    ctx.frame = storage.get() + vars;
    ctx.uniforms = packed.data();
    ctx.budget = int64_t(1) << 30;
    mem.fill_windows(ctx);
    ctx.memory = &mem;
    uint32_t mask = 0;
    pack_lanes(f, states, w, ctx.vars, mask);
    ctx.entry_mask = mask;
    if (exe.run(ctx) == ir::RunStatus::Fault) {
      Outcome o;
      o.ok = false;
      o.fault = ctx.fault == ir::FaultKind::Trap ? describe_trap(ctx.fault_code)
                                                 : "fault kind " + std::to_string(int(ctx.fault));
      return o;
    }
    unpack_lanes(f, ctx.vars, w, states);
    unpack_emits(f, ctx.vars, mem.find("emits")->data(), w, gs);
  }
  return {};
}

VertexState random_state(std::mt19937_64& rng) {
  VertexState s;
  auto small = [&] { return float(int(rng() % 17) - 8) * 0.5f; };
  for (auto* bank : {&s.v, &s.r, &s.o})
    for (auto& v : *bank)
      for (float& x : v) x = small();
  s.aL = uint8_t(rng());
  s.cmpx = rng() & 1;
  s.cmpy = rng() & 1;
  return s;
}

// Reference interpreter vs IR interpreter vs every JIT tier (own warp loop)
// vs the runner (run_geometry) on each JIT tier, vertex counts 1, 33, 70.
void check_geometry(const std::string& text, int rounds = 2) {
  uint32_t entry = 0;
  Program prog = assemble_program(text, entry);
  TranslateOptions to;
  to.entry = entry;
  to.geometry = true;
  auto f = std::make_shared<ir::Function>();
  std::string err;
  REQUIRE_MESSAGE(translate(prog, to, *f, err), err);
  auto ir_exec = ir::make_ir_interpreter(*f);
  std::vector<std::pair<std::string, CompiledIr>> jits;
  for (Engine e : host_jit_tiers()) {
    CompiledIr c;
    IrCompileOptions co;
    co.passes.verify_each = true;
    REQUIRE_MESSAGE(compile_ir(*f, e, co, c, err), err);
    jits.emplace_back(engine_name(e), std::move(c));
  }
  std::mt19937_64 rng(std::hash<std::string>{}(text));
  if (light()) rounds = 1;
  for (int round = 0; round < rounds; ++round)
    for (size_t n : {size_t(1), size_t(33), size_t(70)}) {
      Uniforms u;
      for (size_t i = 0; i < 96; ++i) u.f[i] = {float(i), -0.5f * float(i), 0.25f, 1};
      u.i[0] = {uint8_t(rng() % 5), 0, 1, 0};
      u.b = uint16_t(rng());
      std::vector<VertexState> init(n);
      for (auto& s : init) s = random_state(rng);
      std::vector<VertexState> ref = init;
      std::vector<GsState> ref_gs(n);
      Interpreter it(prog, u);
      for (size_t k = 0; k < n; ++k) {
        RunResult r = it.run(entry, ref[k], &ref_gs[k]);
        REQUIRE_MESSAGE(r.ok, r.fault);
      }
      REQUIRE(std::any_of(ref_gs.begin(), ref_gs.end(), [](const GsState& g) { return !g.primitives.empty(); }));
      // A run_geometry batch: the hardware sets b15 after every invocation
      // (run_geometry_invocation does the same one at a time).
      std::vector<VertexState> batch = init;
      std::vector<GsState> batch_gs(n);
      {
        Uniforms ub = u;
        for (size_t k = 0; k < n; ++k) {
          RunResult r = run_geometry_invocation(prog, ub, entry, batch[k], batch_gs[k]);
          REQUIRE_MESSAGE(r.ok, r.fault);
        }
      }
      auto compare_with = [&](const std::string& engine, const std::vector<VertexState>& want,
                              const std::vector<GsState>& want_gs, const std::vector<VertexState>& got,
                              const std::vector<GsState>& got_gs) {
        for (size_t k = 0; k < n; ++k) {
          INFO(engine, ", ", n, " invocations, round ", round, ", invocation ", k);
          std::string d = diff(want[k], got[k], want_gs[k], got_gs[k]);
          REQUIRE_MESSAGE(d.empty(), d);
        }
      };
      auto compare = [&](const std::string& engine, const std::vector<VertexState>& got,
                         const std::vector<GsState>& got_gs) { compare_with(engine, ref, ref_gs, got, got_gs); };
      {
        std::vector<VertexState> got = init;
        std::vector<GsState> got_gs;
        Outcome o = run_warps(*f, *ir_exec, f->vars_bytes(), u, got, got_gs);
        REQUIRE_MESSAGE(o.ok, o.fault);
        compare("ir-interp", got, got_gs);
      }
      for (auto& [name, c] : jits) {
        std::vector<VertexState> got = init;
        std::vector<GsState> got_gs;
        Outcome o = run_warps(*f, *c.exe, c.vars_bytes, u, got, got_gs);
        REQUIRE_MESSAGE(o.ok, o.fault);
        compare(name, got, got_gs);
      }
      std::vector<Engine> runners{Engine::Interp};
      for (Engine e : host_jit_tiers()) runners.push_back(e);
      for (Engine e : runners)
        for (bool set_b15 : {true, false}) {
          PreparedShader ps;
          REQUIRE_MESSAGE(prepare_shader(prog, to, EngineAsHandle(e), ps, err), err);
          std::vector<VertexState> got = init;
          std::vector<GsState> got_gs;
          BatchOptions bo;
          bo.threads = 2;
          bo.min_parallel = 32;
          bo.count_instructions = true;
          bo.set_b15 = set_b15;
          BatchResult r = run_geometry(ps, u, got, got_gs, bo);
          REQUIRE_MESSAGE(r.ok, r.fault);
          CHECK(r.instructions > 0);
          std::string name = std::string("run_geometry ") + engine_name(e) + (set_b15 ? "" : " (b15 as given)");
          if (set_b15) compare_with(name, batch, batch_gs, got, got_gs);
          else compare(name, got, got_gs);
        }
    }
}

}  // namespace

TEST_CASE("pica200 translate gs: the hand-worked quad example") {
  std::ifstream in(std::string(GPURC_TEST_DATA) + "/examples/pica200/geometry_quad.pica", std::ios::binary);
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  check_geometry(text.str());
}

TEST_CASE("pica200 translate gs: divergent SETEMIT/EMIT, loops, buffer reuse across primitives") {
  // Lanes take different paths (cmp on random inputs), so latches, emit
  // counts and primitives differ per lane; the loop emits a strip whose length
  // comes from i0; some lanes end with a latch that was never emitted.
  const char* src =
      ".proc main\n"
      "  cmp v0, lt, ge, v1\n"
      "  mov r7, v2\n  mov o0, r7\n"
      "  ifc cmp.x\n"
      "    setemit 1\n    emit\n"
      "    mov o1, v3\n    setemit 3\n    emit\n"
      "  .else\n"
      "    setemit 2, prim inv\n    emit\n"
      "  .end\n"
      "  for i0\n"
      "    add r7, r7, v4\n    mov o0, r7\n"
      "    mov o2, c0[aL]\n"
      "    ifc cmp.y\n      setemit 0, prim\n    .else\n      setemit 2, prim inv\n    .end\n"
      "    emit\n"
      "  .end\n"
      "  callc cmp.x && !cmp.y, tail\n"
      "  end\n"
      ".end\n"
      ".proc tail\n  mul o3, v5, v6\n  setemit 1, inv\n.end\n";
  check_geometry(src);
}

TEST_CASE("pica200 translate gs: b15 is set after every invocation of a batch") {
  // The first invocation takes the b15-false path, every later one the other.
  const char* src =
      ".proc main\n"
      "  ifu b15\n    mov o0, c1\n  .else\n    mov o0, c0\n  .end\n"
      "  setemit 0, prim\n  emit\n"
      "  end\n"
      ".end\n";
  check_geometry(src);
  uint32_t entry = 0;
  Program prog = assemble_program(src, entry);
  TranslateOptions to;
  to.entry = entry;
  to.geometry = true;
  std::vector<Engine> runners{Engine::Interp};
  for (Engine e : host_jit_tiers()) runners.push_back(e);
  for (Engine e : runners)
    for (size_t n : {size_t(1), size_t(2), size_t(33), size_t(70)})
      for (int mode = 0; mode < 3; ++mode) {  // 0: b15 clear, 1: b15 already set, 2: set_b15 off
        PreparedShader ps;
        std::string err;
        REQUIRE_MESSAGE(prepare_shader(prog, to, EngineAsHandle(e), ps, err), err);
        Uniforms u;
        u.f[0] = {1, 1, 1, 1};
        u.f[1] = {2, 2, 2, 2};
        if (mode == 1) u.b = 1u << 15;
        BatchOptions bo;
        bo.set_b15 = mode != 2;
        bo.threads = 2;
        bo.min_parallel = 8;
        std::vector<VertexState> states(n);
        std::vector<GsState> gs;
        BatchResult r = run_geometry(ps, u, states, gs, bo);
        REQUIRE_MESSAGE(r.ok, r.fault);
        for (size_t k = 0; k < n; ++k) {
          CAPTURE(engine_name(e));
          CAPTURE(n);
          CAPTURE(mode);
          CAPTURE(k);
          bool b15 = mode == 1 || (mode == 0 && k > 0);
          REQUIRE(gs[k].primitives.size() == 1);
          CHECK(gs[k].primitives[0].vertices[0][0][0] == (b15 ? 2.0f : 1.0f));
        }
        CHECK((u.b >> 15) == (mode == 1 ? 1u : 0u));  // the caller's uniforms are not changed
      }
}

TEST_CASE("pica200 translate gs: any number of EMITs the interpreter runs runs on every engine") {
  // i0.x = 255: 256 iterations of an inner loop of 4, one EMIT each (1024
  // EMITs, like a particle shader's many quads). The record area the launch
  // starts with holds kEmitMaxPerInvocation per lane; run_geometry grows it.
  const char* src =
      ".proc main\n"
      "  for i0\n    for i1\n      add r0, c0, r0\n      mov o0, r0\n      setemit 0, prim\n      emit\n    .end\n  .end\n"
      "  end\n"
      ".end\n";
  uint32_t entry = 0;
  Program prog = assemble_program(src, entry);
  TranslateOptions to;
  to.entry = entry;
  to.geometry = true;
  Uniforms u;
  u.i[0] = {255, 0, 1, 0};
  u.i[1] = {3, 0, 1, 0};
  u.f[0] = {1, 2, 3, 4};
  std::vector<VertexState> ref(40);
  std::vector<GsState> ref_gs(40);
  for (size_t k = 0; k < ref.size(); ++k) {
    ref[k].r[0] = {float(k), 0, 0, 0};
    REQUIRE(Interpreter(prog, u).run(entry, ref[k], &ref_gs[k]).ok);
  }
  CHECK(ref_gs[0].emits == 1024);
  CHECK(ref_gs[0].primitives.size() == 1024);
  for (Engine e : host_jit_tiers()) {
    PreparedShader ps;
    std::string err;
    REQUIRE_MESSAGE(prepare_shader(prog, to, EngineAsHandle(e), ps, err), err);
    std::vector<VertexState> states(40);
    for (size_t k = 0; k < states.size(); ++k) states[k].r[0] = {float(k), 0, 0, 0};
    std::vector<GsState> gs;
    BatchOptions bo;
    bo.set_b15 = false;
    BatchResult r = run_geometry(ps, u, states, gs, bo);
    CAPTURE(engine_name(e));
    REQUIRE_MESSAGE(r.ok, r.fault);
    for (size_t k = 0; k < states.size(); ++k) {
      CHECK(gs[k].emits == 1024);
      CHECK(diff(ref[k], states[k], ref_gs[k], gs[k]) == "");
    }
  }
}

TEST_CASE("pica200 translate gs: the IR traps naming the EMIT past the record area it was given") {
  // The translation itself, on the default area (kEmitMaxPerInvocation
  // records per lane, pack_uniforms): EMIT number 65 traps at its address.
  const char* src =
      ".proc main\n"
      "  for i0\n    setemit 0, prim\n    emit\n  .end\n"
      "  end\n"
      ".end\n";
  uint32_t entry = 0;
  Program prog = assemble_program(src, entry);
  TranslateOptions to;
  to.entry = entry;
  to.geometry = true;
  Uniforms u;
  u.i[0] = {255, 0, 1, 0};
  ir::Function f;
  std::string err;
  REQUIRE_MESSAGE(translate(prog, to, f, err), err);
  auto ir_exec = ir::make_ir_interpreter(f);
  std::vector<VertexState> st(1);
  std::vector<GsState> gs(1);
  Outcome o = run_warps(f, *ir_exec, f.vars_bytes(), u, st, gs);
  REQUIRE_FALSE(o.ok);
  CHECK(o.fault.find("EMIT limit") != std::string::npos);
  CHECK(o.fault.find("0x002") != std::string::npos);
}

TEST_CASE("pica200 translate gs: exactly the default record area matches the interpreter") {
  const char* src =
      ".proc main\n"
      "  for i0\n    setemit 0, prim\n    emit\n  .end\n"
      "  end\n"
      ".end\n";
  uint32_t entry = 0;
  Program prog = assemble_program(src, entry);
  TranslateOptions to;
  to.entry = entry;
  to.geometry = true;
  Uniforms u;
  // Exactly the limit is fine and matches the interpreter.
  u.i[0] = {uint8_t(kEmitMaxPerInvocation - 1), 0, 1, 0};
  std::vector<VertexState> st(3), ist(3);
  std::vector<GsState> igs(3);
  for (size_t k = 0; k < 3; ++k) REQUIRE(Interpreter(prog, u).run(entry, ist[k], &igs[k]).ok);
  for (Engine e : host_jit_tiers()) {
    PreparedShader ps;
    std::string err;
    REQUIRE(prepare_shader(prog, to, EngineAsHandle(e), ps, err));
    std::vector<VertexState> got(3);
    std::vector<GsState> gs;
    BatchResult r = run_geometry(ps, u, got, gs, {});
    REQUIRE_MESSAGE(r.ok, r.fault);
    for (size_t k = 0; k < 3; ++k) {
      CHECK(gs[k].emits == kEmitMaxPerInvocation);
      CHECK(diff(ist[k], got[k], igs[k], gs[k]) == "");
    }
  }
}

}  // namespace gpurc_test_pica200_translate_gs
