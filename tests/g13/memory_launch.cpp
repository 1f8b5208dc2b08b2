// Launches that observe only memory (no finish callback): the registers are
// private to the generated code (TranslateOptions::registers_unobserved) and
// the accesses take the indexed fast path's shapes (consecutive indices with
// the bounds of the first and last lane, unmasked moves when every lane takes
// part, masked moves otherwise, gathers / scatters for other indices). Every
// JIT tier, with the warp loop on and off and with a finish callback (the
// registers observed: the translation without the option), writes the
// interpreter's memory and reports its fault: partial SIMD-groups, inactive
// lanes, accesses at and past either edge of a buffer, signed indices,
// non-consecutive indices.
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "frontend/g13/g13.h"
#include "tests/g13/example_text.h"
#include "frontend/g13/module/launch.h"
#include "frontend/g13/translate.h"
#include "recompiler/engine.h"
#include "recompiler/isa_engine.h"

namespace gpurc_test_g13_memory_launch {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;

namespace {

constexpr uint64_t kA = 0x100000, kB = 0x200000, kC = 0x300000;

// c[i] = a[i] + b[i]: consecutive indices everywhere.
// examples/g13/vector_add.s (the bench kernel `memory`).
const std::string kVectorAddText = gpurc::test::g13_example_text("vector_add.s");
const char* const kVectorAdd = kVectorAddText.c_str();

// c[i] = a[2i] + b[1000 - i]: a stride of two and a descending run.
const char* kScattered =
    "get_sr r1, sr80 (thread_position_in_grid.x)\n"
    "iadd r5, r1, r1\n"
    "mov_imm r7, 1000, 0b0\n"
    "isub r6, r7, r1\n"
    "device_load 0, i32, x, r2, u0_u1, r5, unsigned\n"
    "device_load 0, i32, x, r3, u2_u3, r6, unsigned\n"
    "wait 0\n"
    "iadd r4, r2, r3\n"
    "device_store 0, i32, x, r4, u4_u5, r1, unsigned, 0\n"
    "stop";

// c[i] = a[i - 16] (a signed index: negative for the first 16 threads).
const char* kSigned =
    "get_sr r1, sr80 (thread_position_in_grid.x)\n"
    "isub r5, r1, 16\n"
    "device_load 0, i32, x, r2, u0_u1, r5, signed\n"
    "wait 0\n"
    "device_store 0, i32, x, r2, u4_u5, r5, signed, 0\n"
    "stop";

// c[i] = a[i] for 5 < i < 37 only: inactive lanes at both ends of a run.
const char* kMasked =
    "get_sr r1, sr80 (thread_position_in_grid.x)\n"
    "if_icmp r0l, ugt, r1, 5, 1\n"
    "if_icmp r0l, ult, r1, 37, 1\n"
    "device_load 0, i32, x, r2, u0_u1, r1, unsigned\n"
    "wait 0\n"
    "device_store 0, i32, x, r2, u4_u5, r1, unsigned, 0\n"
    "pop_exec r0l, 1\n"
    "pop_exec r0l, 1\n"
    "stop";

struct Case {
  const char* name;
  const char* src;
  rt::Dim3 grid, block;
  uint64_t a_base;  // u0_u1 (kA plus an offset)
  uint64_t c_base;  // u4_u5
  uint32_t a_bytes, b_bytes, c_bytes;
  bool faults;  // the interpreter reports a fault
};

enum class Mode { NoFinish, NoFinishNoLoop, Finish };

struct Outcome {
  G13Result r;
  std::vector<uint8_t> mem;
};

Outcome run(const Case& c, Engine e, Mode mode) {
  G13Launch L;
  std::string err;
  REQUIRE_MESSAGE(g13::assemble(c.src, L.code, err), err);
  L.grid = c.grid;
  L.block = c.block;
  L.warp_loop = mode != Mode::NoFinishNoLoop;
  const uint64_t bases[3] = {c.a_base, kB, c.c_base};
  for (unsigned i = 0; i < 3; ++i) {
    L.uniforms[4 * i] = uint16_t(bases[i]);
    L.uniforms[4 * i + 1] = uint16_t(bases[i] >> 16);
  }
  rt::Memory mem;
  REQUIRE(mem.add_buffer("a", ir::Space::Global, kA, c.a_bytes, err));
  REQUIRE(mem.add_buffer("b", ir::Space::Global, kB, c.b_bytes, err));
  REQUIRE(mem.add_buffer("c", ir::Space::Global, kC, c.c_bytes, err));
  for (const char* n : {"a", "b"}) {
    auto* b = mem.find(n);
    for (uint32_t i = 0; i + 4 <= b->size; i += 4) {
      const uint32_t v = 0x3f800000u + i * 977u + (n[0] == 'b' ? 0x12345u : 0u);  // finite floats
      std::memcpy(b->data() + i, &v, 4);
    }
  }
  Outcome o;
  G13Finish finish;
  if (mode == Mode::Finish) finish = [](const rt::WarpInfo&, const g13::SimdGroup&) {};
  o.r = run_g13(L, EngineAsHandle(e), mem, 1, finish);
  for (const char* n : {"a", "b", "c"}) {
    const auto* b = mem.find(n);
    o.mem.insert(o.mem.end(), b->data(), b->data() + b->size);
  }
  return o;
}

void check_case(const Case& c) {
  const std::string name = c.name;
  CAPTURE(name);
  CAPTURE(c.block.x);
  CAPTURE(c.block.y);
  const Outcome ref = run(c, Engine::Interp, Mode::NoFinish);
  REQUIRE_MESSAGE(ref.r.error.empty(), ref.r.error);
  REQUIRE(bool(ref.r.fault) == c.faults);
  for (Engine e : host_engines()) {
    if (e == Engine::Interp) continue;
    CAPTURE(engine_name(e));
    std::string jit_fault;
    for (Mode m : {Mode::NoFinish, Mode::NoFinishNoLoop, Mode::Finish}) {
      CAPTURE(int(m));
      const Outcome o = run(c, e, m);
      REQUIRE_MESSAGE(o.r.error.empty(), o.r.error);
      CHECK(o.mem == ref.mem);
      REQUIRE(bool(o.r.fault) == bool(ref.r.fault));
      if (!ref.r.fault) continue;
      CHECK(o.r.fault->kind == ref.r.fault->kind);
      CHECK(o.r.fault->block.x == ref.r.fault->block.x);
      CHECK(o.r.fault->block.y == ref.r.fault->block.y);
      CHECK(o.r.fault->warp == ref.r.fault->warp);
      CHECK(o.r.fault->lane == ref.r.fault->lane);
      CHECK(o.r.fault->addr == ref.r.fault->addr);
      // The same words whether or not the registers are observed.
      if (jit_fault.empty()) jit_fault = o.r.fault_message;
      CHECK(o.r.fault_message == jit_fault);
    }
  }
}

// `source` assembled and translated as a launch translates it (the exec mask
// starts as the launched lanes), with or without registers_unobserved.
ir::Function launch_translation(const char* source, bool unobserved) {
  std::vector<uint8_t> code;
  std::string err;
  REQUIRE_MESSAGE(g13::assemble(source, code, err), err);
  g13::TranslateOptions opt;
  opt.exec_starts_launched = true;
  opt.registers_unobserved = unobserved;
  ir::Function f;
  REQUIRE_MESSAGE(g13::translate(code.data(), code.size(), f, err, opt), err);
  return f;
}

}  // namespace

TEST_CASE("g13 memory launch: consecutive indices, full and partial SIMD-groups, buffer edges") {
  const rt::Dim3 shapes[] = {{256, 1, 1}, {40, 1, 1}, {16, 4, 1}, {96, 1, 1}};
  for (const rt::Dim3& b : shapes) {
    // thread_position_in_grid.x indexes the arrays: rows of a threadgroup share elements.
    const uint32_t n = 3 * b.x, bytes = 4 * n;
    // Every buffer exactly as long as the launch needs: the last lane's access ends at the edge.
    check_case({"exact", kVectorAdd, {3, 1, 1}, b, kA, kC, bytes, bytes, bytes, false});
    // The output one element short: the last thread's store faults at the edge.
    check_case({"store past the end", kVectorAdd, {3, 1, 1}, b, kA, kC, bytes, bytes, bytes - 4, true});
    // An input ending inside the second threadgroup: a load faults mid-launch.
    check_case({"load past the end", kVectorAdd, {3, 1, 1}, b, kA, kC, bytes - 4 * 45, bytes, bytes, true});
    // The input's base 4 bytes before its buffer: the first lane's load faults.
    check_case({"load before the start", kVectorAdd, {3, 1, 1}, b, kA - 4, kC, bytes, bytes, bytes, true});
    // The base inside the buffer, the run ending at its edge.
    check_case({"offset base", kVectorAdd, {3, 1, 1}, b, kA + 64, kC, bytes + 64, bytes, bytes, false});
  }
}

TEST_CASE("g13 memory launch: non-consecutive indices take gathers and scatters") {
  for (const rt::Dim3& b : {rt::Dim3{256, 1, 1}, rt::Dim3{40, 1, 1}}) {
    const uint32_t n = uint32_t(3 * b.count());
    check_case({"stride 2 and descending", kScattered, {3, 1, 1}, b, kA, kC, 8 * n, 4 * 1001, 4 * n, false});
    // The stride-2 input one element short: the last thread's gather faults.
    check_case({"stride 2 past the end", kScattered, {3, 1, 1}, b, kA, kC, 8 * n - 8, 4 * 1001, 4 * n, true});
  }
}

TEST_CASE("g13 memory launch: signed indices below the base") {
  for (const rt::Dim3& b : {rt::Dim3{256, 1, 1}, rt::Dim3{40, 1, 1}}) {
    const uint32_t n = uint32_t(2 * b.count());
    // a[i - 16] with the base 16 elements into the buffer: all inside.
    check_case({"signed inside", kSigned, {2, 1, 1}, b, kA + 64, kC + 64, 4 * n + 64, 4, 4 * n + 64, false});
    // One element less in front of the base: the first thread's load faults at the start.
    check_case({"signed before the start", kSigned, {2, 1, 1}, b, kA + 60, kC + 64, 4 * n + 64, 4, 4 * n + 64, true});
  }
}

TEST_CASE("g13 memory launch: inactive lanes around a consecutive run") {
  for (const rt::Dim3& b : {rt::Dim3{64, 1, 1}, rt::Dim3{40, 1, 1}, rt::Dim3{32, 2, 1}}) {
    const uint32_t n = 3 * b.x;
    check_case({"active 6..36", kMasked, {3, 1, 1}, b, kA, kC, 4 * n, 4, 4 * n, false});
    // Thread 36's load is the last active one and the first past the input's end.
    check_case({"active 6..36, input ends at 36", kMasked, {3, 1, 1}, b, kA, kC, 4 * 36, 4, 4 * n, true});
  }
}

TEST_CASE("g13 memory launch: unobserved registers are private to the translation") {
  for (bool unobserved : {false, true}) {
    CAPTURE(unobserved);
    const ir::Function f = launch_translation(kMasked, unobserved);
    // With the option no register or exec var below state_vars is read or
    // written (no loads at entry, no stores at the exits); without it, r1
    // and r2 are state.
    size_t state_writes = 0, private_writes = 0;
    for (const ir::Inst& in : f.insts) {
      if (in.block == ir::kNoBlock || (in.op != ir::Opcode::SetVar && in.op != ir::Opcode::GetVar)) continue;
      const bool state = in.imm < std::min<uint64_t>(f.state_vars, f.vars.size());
      if (state && g13::special_var(f, 80) != int(in.imm)) ++state_writes;
      if (!state) ++private_writes;
    }
    if (unobserved) {
      CHECK(f.state_vars < f.vars.size());
      CHECK(state_writes == 0);
      CHECK(private_writes > 0);
    } else {
      CHECK(f.state_vars == ir::Function::kAllStateVars);
      CHECK(state_writes > 0);
      CHECK(private_writes == 0);
    }
  }
}

TEST_CASE("g13 memory launch: a compute kernel's code has no draw-loop hooks") {
  // A G13 translation is never run by a draw (ir::Function::no_draw_loop):
  // the x64 tiers then leave the draw loop's hooks out (its test per warp in
  // the warp loop), which they emit for other unlaunched_lanes_free
  // functions (PICA200 vertex shaders). The same function with the flag
  // cleared gets them: the flag, not something else of the kernel, decides.
  std::string err;
  for (bool unobserved : {false, true}) {
    CAPTURE(unobserved);
    const ir::Function f = launch_translation(kVectorAdd, unobserved);
    CHECK(f.no_draw_loop);
    CHECK(f.unlaunched_lanes_free == unobserved);
    ir::Function hooked = f;
    hooked.no_draw_loop = false;
    for (Engine e : host_jit_tiers()) {
      const std::string name = engine_name(e);
      CAPTURE(name);
      CompiledIr plain, with_hooks;
      REQUIRE_MESSAGE(compile_ir(f, e, IrCompileOptions{}, plain, err), err);
      REQUIRE_MESSAGE(compile_ir(hooked, e, IrCompileOptions{}, with_hooks, err), err);
      CHECK_FALSE(plain.exe->has_draw_loop());
      // Only the x64 tiers have a draw loop, and only for unlaunched_lanes_free functions.
      if (name.rfind("jit-avx", 0) == 0) CHECK(with_hooks.exe->has_draw_loop() == unobserved);
    }
  }
}

}  // namespace gpurc_test_g13_memory_launch
