// G13 -> IR translation checked against the G13 reference interpreter: the
// same programs must leave identical registers, memory and stacks (or fault
// alike) on the IR interpreter (pre-SSA and after the pass pipeline) and on
// every JIT tier of the host. Random instructions of every translated
// descriptor run on SIMD-groups filled with float/integer edge values and
// partially launched / partially active lanes; control flow, calls,
// barriers and memory run as assembled programs.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "frontend/g13/interp.h"
#include "frontend/g13/translate.h"
#include "ir/interp.h"
#include "ir/passes.h"
#include "recompiler/engine.h"

namespace gpurc_test_g13_test_g13_translate {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;

namespace {

bool light() { return std::getenv("GPURC_TEST_LIGHT") != nullptr; }

// Flat bounds-checked memory: one buffer per space at a base address.
struct TestMemory final : ir::GuestMemory {
  struct Buf {
    uint64_t base = 0;
    std::vector<uint8_t> bytes;
  };
  std::map<int, Buf> spaces;
  // Space::Local: 32 per-thread stacks of `stack_bytes` each at lane *
  // g13::kStackStride (g13::StackMemory's layout), lane l's at stacks[l * stack_bytes].
  uint64_t stack_bytes = 0;
  std::vector<uint8_t> stacks;
  uint8_t* stack_at(uint64_t addr, unsigned bytes) {
    const uint64_t lane = addr / g13::kStackStride, off = addr % g13::kStackStride;
    if (lane >= 32 || off + bytes > stack_bytes) return nullptr;
    return stacks.data() + lane * stack_bytes + off;
  }
  bool access(Kind kind, ir::Space space, uint64_t addr, unsigned bytes, uint64_t* value, ir::AtomicOp,
              const uint64_t*) override {
    uint8_t* p;
    if (space == ir::Space::Local) {
      p = stack_at(addr, bytes);
      if (!p) return false;
    } else {
      auto it = spaces.find(int(space));
      if (it == spaces.end()) return false;
      Buf& b = it->second;
      if (addr < b.base || addr - b.base > b.bytes.size() || addr - b.base + bytes > b.bytes.size()) return false;
      p = b.bytes.data() + (addr - b.base);
    }
    if (kind == Kind::Load) {
      *value = 0;
      std::memcpy(value, p, bytes);
    } else if (kind == Kind::Store) {
      std::memcpy(p, value, bytes);
    } else {
      return false;
    }
    return true;
  }
  uint8_t* translate(ir::Space, uint64_t, uint64_t) override { return nullptr; }
};

std::vector<uint8_t> asm_ok(const std::string& text) {
  std::vector<uint8_t> out;
  std::string err;
  REQUIRE_MESSAGE(g13::assemble(text, out, err), err);
  return out;
}

struct EndState {
  g13::SimdGroup sg;
  TestMemory mem;
  bool fault = false;
  std::string error;  // interpreter errors (not faults)
};

EndState run_reference(const std::vector<uint8_t>& code, const g13::SimdGroup& start, const TestMemory& mem) {
  EndState e{start, mem, false, {}};
  g13::Interpreter it(code, &e.mem);
  for (;;) {
    const auto r = it.run(e.sg, 100000);
    if (r.kind == g13::StepResult::Kind::Barrier) continue;  // one SIMD-group: the barrier is passed at once
    if (r.kind == g13::StepResult::Kind::Fault) e.fault = true;
    if (r.kind == g13::StepResult::Kind::Error) e.error = r.message;
    return e;
  }
}

EndState run_engine(const ir::Executable& exe, uint32_t vars_bytes, const ir::Function& f,
                    const g13::SimdGroup& start, const TestMemory& mem) {
  EndState e{start, mem, false, {}};
  std::vector<uint8_t> vars_raw(vars_bytes + 128, 0), frame_raw(exe.frame_bytes() + 128, 0), uni(g13::kUniformBytes);
  auto align = [](std::vector<uint8_t>& v) {
    return reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(v.data()) + 63) & ~uintptr_t(63));
  };
  uint8_t* vars = align(vars_raw);
  // Every other run marshals through a VarLayout (what the runner does),
  // with the area prefilled with junk: only the vars the function reads or
  // writes are packed, so a var it uses that the layout missed would show.
  static unsigned runs = 0;
  const bool by_layout = runs++ & 1;
  const g13::VarLayout layout = g13::var_layout(f);
  if (by_layout) {
    REQUIRE(layout.bytes == f.vars_bytes());
    std::memset(vars, 0xA5, layout.bytes);
    g13::pack_vars(e.sg, layout, vars);
  } else {
    g13::pack_vars(e.sg, f, vars);
  }
  g13::pack_uniforms(e.sg, uni.data());
  ir::WarpContext ctx;
  ctx.vars = vars;
  ctx.uniforms = uni.data();
  ctx.frame = align(frame_raw);
  ctx.entry_mask = e.sg.launched;
  ctx.memory = &e.mem;
  ctx.budget = 1 << 24;
  ir::RunStatus st;
  while ((st = exe.run(ctx)) == ir::RunStatus::Barrier) {
  }
  e.fault = st == ir::RunStatus::Fault;
  if (by_layout) g13::unpack_vars(vars, layout, e.sg);
  else g13::unpack_vars(vars, f, e.sg);
  return e;
}

void check_same(const EndState& ref, const EndState& got, const std::string& engine, const std::string& prog) {
  REQUIRE_MESSAGE(ref.fault == got.fault, engine << ": fault " << got.fault << " vs reference " << ref.fault << "\n"
                                                 << prog);
  if (ref.fault) return;  // state after a fault is not compared (access order differs)
  for (unsigned reg = 0; reg < 128; ++reg)
    for (unsigned l = 0; l < 32; ++l)
      if (ref.sg.launched >> l & 1)
        REQUIRE_MESSAGE(got.sg.r32(reg, l) == ref.sg.r32(reg, l),
                        engine << ": r" << reg << " lane " << l << " = 0x" << std::hex << got.sg.r32(reg, l)
                               << ", reference 0x" << ref.sg.r32(reg, l) << "\n" << prog);
  for (unsigned h = 0; h < 512; ++h)
    REQUIRE_MESSAGE(got.sg.uniforms[h] == ref.sg.uniforms[h], engine << ": u-half " << h << " = 0x" << std::hex
                                                                    << got.sg.uniforms[h] << ", reference 0x"
                                                                    << ref.sg.uniforms[h] << "\n" << prog);
  for (const auto& [space, buf] : ref.mem.spaces)
    REQUIRE_MESSAGE(got.mem.spaces.at(space).bytes == buf.bytes, engine << ": memory space " << space << "\n" << prog);
  for (unsigned l = 0; l < 32; ++l)
    REQUIRE_MESSAGE(std::equal(got.mem.stacks.begin() + l * got.mem.stack_bytes,
                               got.mem.stacks.begin() + (l + 1) * got.mem.stack_bytes,
                               ref.mem.stacks.begin() + l * ref.mem.stack_bytes),
                    engine << ": stack of lane " << l << "\n" << prog);
}

// Runs `code` on the reference and on every engine. Returns false (nothing
// compared) when the reference reports an error and `skip_errors` is set.
bool compare_code(const std::vector<uint8_t>& code, const g13::SimdGroup& start, const TestMemory& mem,
                  const std::string& prog, bool skip_errors = false, bool* ref_fault = nullptr,
                  bool known_start = false) {
  const EndState ref = run_reference(code, start, mem);
  if (ref_fault) *ref_fault = ref.fault;
  if (!ref.error.empty()) {
    REQUIRE_MESSAGE(skip_errors, ref.error << "\n" << prog);
    return false;
  }
  ir::Function f;
  std::string err;
  g13::TranslateOptions topt;
  topt.exec_starts_launched = known_start;  // the caller's start state is a launch's: zero registers, exec = launched
  const bool translated = g13::translate(code.data(), code.size(), f, err, topt);
  // An undefined operand the interpreter happened not to read (a compare
  // operand no lane needed) may still stop the translation, with a clear error.
  if (!translated && skip_errors && prog.find("None") != std::string::npos && err.find("pc 0x0") != std::string::npos)
    return false;
  REQUIRE_MESSAGE(translated, err << "\n" << prog);
  for (int lowered = 0; lowered < 2; ++lowered) {
    ir::Function g = f;
    if (lowered) {
      ir::PassOptions opt;
      opt.verify_each = true;
      const std::string e = ir::run_pipeline(g, opt);
      REQUIRE_MESSAGE(e.empty(), e);
    }
    auto exe = ir::make_ir_interpreter(g);
    check_same(ref, run_engine(*exe, g.vars_bytes(), f, start, mem), lowered ? "ir-interp (lowered)" : "ir-interp",
               prog);
  }
  for (Engine tier : host_jit_tiers()) {
    CompiledIr ci;
    IrCompileOptions co;
    REQUIRE_MESSAGE(compile_ir(f, tier, co, ci, err), err);
    check_same(ref, run_engine(*ci.exe, ci.vars_bytes, f, start, mem), engine_name(tier), prog);
  }
  return true;
}

// Returns whether the reference faulted.
bool compare(const std::string& prog, const g13::SimdGroup& start, const TestMemory& mem = {}) {
  bool fault = false;
  compare_code(asm_ok(prog + "\nstop"), start, mem, prog, false, &fault);
  return fault;
}

// Float and integer edge values: zeros, subnormals, infinities, NaNs, extremes.
const uint32_t kEdge32[] = {0x00000000u, 0x80000000u, 0x00000001u, 0x807FFFFFu, 0x00800000u, 0x7F800000u,
                            0xFF800000u, 0x7FC00000u, 0x7FA00001u, 0x7F7FFFFFu, 0x3F800000u, 0xBF800000u,
                            0x3F000000u, 0x40490FDBu, 0x4B7FFFFFu, 0xCF000000u, 0x4F800000u, 0x7FFFFFFFu,
                            0xFFFFFFFFu, 0x0000FFFFu, 0x00008000u, 0x3C003C00u, 0x7C00FC00u, 0x00018001u,
                            0x7E000400u, 0x3FFFFFFFu, 0x40800000u, 0x3E800001u, 31u, 32u, 33u, 63u, 64u, 127u};

uint32_t edge_value(std::mt19937_64& rng) {
  switch (rng() % 4) {
    case 0: return uint32_t(rng());
    case 1: return uint32_t(rng() % 40);
    default: return kEdge32[rng() % (sizeof kEdge32 / sizeof kEdge32[0])];
  }
}

g13::SimdGroup random_state(std::mt19937_64& rng, uint32_t launched, bool edges = false) {
  g13::SimdGroup sg;
  for (unsigned r = 1; r < 128; ++r)
    for (unsigned l = 0; l < 32; ++l)
      sg.set_r32(r, l, edges ? edge_value(rng) : uint32_t(rng() % 7 == 0 ? rng() : rng() % 16));
  for (unsigned l = 0; l < 32; ++l) sg.set_r32(0, l, 0);
  for (unsigned i = 0; i < 512; ++i) sg.uniforms[i] = uint16_t(edges && i % 2 ? edge_value(rng) >> 16 : rng());
  sg.launched = launched;
  sg.recompute_exec();
  return sg;
}

std::string reg(std::mt19937_64& rng, bool half) {
  const unsigned r = 2 + unsigned(rng() % 10);
  return "r" + std::to_string(r) + (half ? (rng() & 1 ? "h" : "l") : "");
}

std::string src(std::mt19937_64& rng, bool half) {
  switch (rng() % 4) {
    case 0: return std::to_string(rng() % 256);
    case 1: return "u" + std::to_string(rng() % 200) + (half ? "l" : "");
    default: return reg(rng, half && rng() % 2);
  }
}

std::string random_alu(std::mt19937_64& rng) {
  const bool half = rng() % 3 == 0;
  const std::string d = reg(rng, half);
  static const char* conds[] = {"ueq", "ult", "ugt", "seq", "slt", "sgt", "nueq", "ugte", "ulte", "nseq", "sgte", "slte"};
  switch (rng() % 4) {
    case 0: {
      std::string s = std::string(rng() & 1 ? "isub " : "iadd ") + d + ", " + src(rng, half) + ", " + src(rng, half);
      if (rng() % 3 == 0) s += ", lsl " + std::to_string(1 + rng() % 4);
      return s;
    }
    case 1: {
      std::string tt;
      for (int i = 0; i < 4; ++i) tt += char('0' + rng() % 2);
      return "bitop " + tt + ", " + d + ", " + src(rng, half) + ", " + src(rng, half);
    }
    case 2: return "icmpsel " + std::string(conds[rng() % 6]) + ", " + d + ", " + src(rng, true) + ", " +
                   src(rng, false) + ", " + std::to_string(rng() % 256) + ", " + reg(rng, half);
    default: return half ? "mov_imm " + d + ", " + std::to_string(rng() % 65536)
                         : "mov_imm " + d + ", " + std::to_string(uint32_t(rng())) + ", 0b0";
  }
}

// Every descriptor the translation covers apart from control flow and memory.
const char* const kAluDescs[] = {
    "mov_imm", "get_sr", "iadd", "imadd", "convert", "bfi", "bfeil", "extr", "shlhi", "shrhi", "asr", "asrh",
    "bitop", "bitrev", "popcount", "intl", "ffs", "fmadd32", "fmadd16", "fadd32", "fadd16", "fmul32", "fmul16",
    "floor", "ceil", "trunc", "rint", "rcp", "rsqrt", "rsqrt_special", "sin_pt_1", "sin_pt_2", "log2", "exp2",
    "dfdx", "dfdy", "icmpsel", "fcmpsel", "icmp_ballot", "icmp_quad_ballot", "fcmp_ballot", "fcmp_quad_ballot",
    "simd_shuffle", "simd_shuffle_down", "simd_shuffle_up", "simd_shuffle_rotate_up", "simd_shuffle_xor",
    "quad_shuffle", "quad_shuffle_down", "quad_shuffle_up", "quad_shuffle_rotate_up", "quad_shuffle_xor",
    "quad_and", "quad_or", "quad_xor", "quad_iadd", "quad_fadd", "quad_fmul", "quad_prefix_iadd",
    "quad_prefix_fadd", "quad_prefix_fmul", "quad_min.u", "quad_max.u", "quad_min.s", "quad_max.s", "quad_min.f",
    "quad_max.f", "simd_and", "simd_or", "simd_xor", "simd_iadd", "simd_fadd", "simd_fmul", "simd_prefix_iadd",
    "simd_prefix_fadd", "simd_prefix_fmul", "simd_prefix_and", "simd_prefix_or", "simd_prefix_xor",
    "simd_prefix_min.s", "simd_prefix_min.u", "simd_prefix_max.s", "simd_prefix_max.u", "simd_min.u",
    "simd_max.u", "simd_min.s", "simd_max.s", "simd_min.f", "simd_max.f", "if_icmp", "if_fcmp", "else_icmp",
    "else_fcmp", "while_icmp", "while_fcmp", "pop_exec", "wait"};

}  // namespace

TEST_CASE("g13 translate: instructions the interpreter cannot run either are clear errors") {
  // uniform_store is modelled for the i16 format with an immediate index only.
  for (const char* text : {"mov_imm r2, 1, 0b0\nuniform_store 2, i32, xy, 0, r6l_r6h, 8\nstop",
                           "mov_imm r2, 1, 0b0\nuniform_store 2, i16, xy, 0, r6l_r6h, r4\nstop"}) {
    const auto code = asm_ok(text);
    ir::Function f;
    std::string err;
    CHECK_FALSE(g13::translate(code.data(), code.size(), f, err));
    CHECK(err.find("uniform_store at pc 0x6") != std::string::npos);
    g13::SimdGroup sg;
    g13::Interpreter it(code, nullptr);
    const auto r = it.run(sg);
    CHECK(r.kind == g13::StepResult::Kind::Error);
    CHECK(r.message.find("uniform_store at pc 0x6") != std::string::npos);
  }
  // convert rounding modes 2 and 3: unobserved, the same reason on both.
  for (const char* text : {"mov_imm r2, 1, 0b0\nconvert f_to_s32, r10, r1, 2\nstop",
                           "mov_imm r2, 1, 0b0\nconvert u32_to_f, r10, r1, 3\nstop"}) {
    const auto code = asm_ok(text);
    ir::Function f;
    std::string err;
    CHECK_FALSE(g13::translate(code.data(), code.size(), f, err));
    CHECK_MESSAGE(err.find("convert at pc 0x6") != std::string::npos, err);
    CHECK_MESSAGE(err.find("unobserved") != std::string::npos, err);
    g13::SimdGroup sg;
    g13::Interpreter it(code, nullptr);
    const auto r = it.run(sg);
    CHECK(r.kind == g13::StepResult::Kind::Error);
    CHECK_MESSAGE(r.message.find("convert at pc 0x6") != std::string::npos, r.message);
    CHECK_MESSAGE(r.message.find("unobserved") != std::string::npos, r.message);
  }
  const auto code = asm_ok("wait_pix 512, 3\nstop");
  ir::Function f;
  std::string err;
  CHECK_FALSE(g13::translate(code.data(), code.size(), f, err));
  CHECK(err.find("wait_pix at pc 0x0") != std::string::npos);
}

TEST_CASE("g13 translate: uniform_store writes u-registers from the first active lane on every engine") {
  std::mt19937_64 rng(41);
  // Full, partially launched, partially active (first active lane 1, not 0), one lane (31).
  const uint32_t launched[] = {0xFFFFFFFFu, 0x00FFFF0Fu, 0xFFFFFFFFu, 0x80000000u};
  const std::string prog =
      "uniform_store 2, i16, xy, 0, r6l_r6h, 8\n"   // u4 = r6
      "uniform_store 2, i16, x, 0, r7h, 11\n"       // u5h = r7h
      "uniform_store 2, i16, xy, 0, r20_r21, 12\n"  // u6_u7 = r20_r21 (two 32-bit registers)
      "iadd r8, u4, 0\n"
      "iadd r9, u5h, 1\n"
      "iadd r16, u5l, 0\n"                          // the half no store touched
      "device_load 0, i32, x, r10, u6_u7, r11, unsigned\n"
      "wait 0\n"
      "if_icmp r0l, ult, r2, 0, 1\n"                // no lane passes
      "uniform_store 2, i16, xy, 0, r3l_r3h, 8\n"   // nobody active: u4 unchanged
      "uniform_store 2, i16, xy, 0, r3l_r3h, 600\n" // out of range, but nobody active: no error
      "pop_exec r0l, 1\n"
      "iadd r12, u4, 0\n"
      "fadd32 r13, u9, r13\n";                        // never written: the uniform block
  for (int i = 0; i < 4; ++i) {
    g13::SimdGroup sg = random_state(rng, launched[i]);
    for (unsigned l = 0; l < 32; ++l) {
      sg.set_r32(6, l, 0x01000101u * (l + 1));
      sg.set_r32(7, l, 0xA0000000u + (l << 16) + l);
      sg.set_r32(20, l, 0x10000 + 4 * l);  // the base: lane l's would point at element l
      sg.set_r32(21, l, 0);
      sg.set_r32(11, l, l);
      if (i == 2 && l == 0) sg.regs[0][l] = 1;  // lane 0 inactive
    }
    sg.recompute_exec();
    const unsigned first = unsigned(__builtin_ctz(sg.exec));
    TestMemory mem;
    mem.spaces[int(ir::Space::Global)].base = 0x10000;
    mem.spaces[int(ir::Space::Global)].bytes.resize(1024);
    for (size_t b = 0; b < 1024; ++b) mem.spaces[int(ir::Space::Global)].bytes[b] = uint8_t(b * 7 + 3);
    const std::vector<uint8_t> code = asm_ok(prog + "stop");
    compare_code(code, sg, mem, prog);
    // The reference itself, against values worked out by hand.
    const EndState ref = run_reference(code, sg, mem);
    REQUIRE(ref.error.empty());
    CHECK(ref.sg.u32(4) == 0x01000101u * (first + 1));
    CHECK(ref.sg.uniforms[11] == uint16_t(0xA000 + first));
    CHECK(ref.sg.uniforms[10] == sg.uniforms[10]);
    CHECK(ref.sg.u32(6) == 0x10000 + 4 * first);
    CHECK(ref.sg.u32(7) == 0);
    for (unsigned l = 0; l < 32; ++l) {
      if (!(sg.exec >> l & 1)) continue;
      CHECK(ref.sg.r32(8, l) == 0x01000101u * (first + 1));
      CHECK(ref.sg.r32(9, l) == uint32_t(0xA000 + first + 1));
      CHECK(ref.sg.r32(12, l) == 0x01000101u * (first + 1));
      const unsigned e = first + l;  // u6_u7 + r11 (= l) elements of 4 bytes
      uint32_t want = 0;
      for (unsigned k = 0; k < 4; ++k) want |= uint32_t(uint8_t((4 * e + k) * 7 + 3)) << (8 * k);
      CHECK(ref.sg.r32(10, l) == want);
    }
  }
}

TEST_CASE("g13 translate: the compute preamble example (uniform_store of computed values) on every engine") {
  std::ifstream in(std::string(GPURC_TEST_DATA) + "/examples/g13/compute_preamble.s");
  REQUIRE(in.good());
  const std::string src((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (uint32_t launched : {0x1u, 0xFFFFFFFFu}) {
    TestMemory mem;
    mem.spaces[int(ir::Space::Global)].base = 0x20000;
    mem.spaces[int(ir::Space::Global)].bytes.assign(64, 0);
    const uint32_t dims[2] = {64, 16};
    std::memcpy(mem.spaces[int(ir::Space::Global)].bytes.data(), dims, 8);
    g13::SimdGroup sg;
    sg.launched = launched;
    sg.recompute_exec();
    sg.set_u64(2, 0x20000);
    const auto code = asm_ok(src);
    compare_code(code, sg, mem, "compute_preamble.s");
    const EndState ref = run_reference(code, sg, mem);
    CHECK(ref.sg.u32(4) == 0x3D000000u);  // 1 / 32
    CHECK(ref.sg.u32(5) == 0x3E000000u);  // 1 / 8
  }
}

TEST_CASE("g13 translate: random instructions of every ALU/float/cross-lane descriptor match the interpreter") {
  std::mt19937_64 rng(2026);
  const int per_desc = light() ? 6 : 40;
  std::map<std::string, int> compared;
  for (const char* name : kAluDescs) {
    std::vector<const g13::Desc*> descs;
    for (const g13::Desc& d : g13::table())
      if (d.name == name) descs.push_back(&d);
    REQUIRE_MESSAGE(!descs.empty(), name);
    for (int i = 0; i < per_desc * 4 && compared[name] < per_desc; ++i) {
      const g13::Desc& d = *descs[size_t(i) % descs.size()];
      std::vector<uint8_t> code;
      if (!g13::random_instruction(d, rng, code)) continue;
      const auto stop = asm_ok("stop");
      code.insert(code.end(), stop.begin(), stop.end());
      // Partially launched, partially active (r0l != 0) SIMD-groups.
      const uint32_t launched = i % 3 == 0 ? 0xFFFFFFFFu : uint32_t(rng()) | 0x11111111u;
      g13::SimdGroup sg = random_state(rng, launched, true);
      for (unsigned l = 0; l < 32; ++l) sg.regs[0][l] = uint16_t(rng() % 4 == 0 ? rng() % 3 : 0);
      sg.recompute_exec();
      for (unsigned sr = 0; sr < (std::string(name) == "get_sr" ? 256u : 0u); ++sr) {
        std::array<uint32_t, 32> v{};
        for (unsigned l = 0; l < 32; ++l) v[l] = uint32_t(rng());
        sg.set_special(sr) = v;
      }
      std::string text;
      fe::Diagnostic dg;
      g13::Insn in;
      REQUIRE(g13::decode(code.data(), code.size(), 0, in, dg));
      text = g13::disassemble(in, 0);
      if (compare_code(code, sg, TestMemory{}, text, true)) ++compared[name];
    }
    CHECK_MESSAGE(compared[name] > 0, std::string(name) << ": no random instruction ran on the interpreter");
  }
}

TEST_CASE("g13 translate: bitop, every truth table, 16- and 32-bit, on every engine") {
  std::mt19937_64 rng(16);
  for (unsigned tt = 0; tt < 16; ++tt) {
    std::string table;
    for (int i = 3; i >= 0; --i) table += char('0' + (tt >> i & 1));
    g13::SimdGroup sg = random_state(rng, 0xFFFF7FFFu, true);
    for (unsigned l = 0; l < 32; ++l) sg.regs[0][l] = uint16_t(l % 5 == 1);  // some lanes inactive
    sg.recompute_exec();
    compare("bitop " + table + ", r2, r3, r4\nbitop " + table + ", r5l, r6h, u7l\nbitop " + table + ", r8, r10, 9",
            sg);
  }
}

TEST_CASE("g13 translate: random straight-line integer code matches the interpreter") {
  std::mt19937_64 rng(77);
  const int n = light() ? 5 : 30;
  for (int i = 0; i < n; ++i) {
    std::string prog;
    for (int k = 0; k < 12; ++k) prog += random_alu(rng) + "\n";
    const uint32_t launched = i % 3 == 0 ? 0xFFFFFFFFu : uint32_t(rng()) | 1;
    compare(prog, random_state(rng, launched));
  }
}

TEST_CASE("g13 translate: if/else/while/pop_exec and jmp_exec_any/none match the interpreter") {
  std::mt19937_64 rng(99);
  const int n = light() ? 3 : 15;
  for (int i = 0; i < n; ++i) {
    g13::SimdGroup sg = random_state(rng, i % 2 ? 0x00FFFF0Fu : 0xFFFFFFFFu);
    compare("if_icmp r0l, ult, r2, 8, 1\n" + random_alu(rng) + "\n" +
                "else_icmp r0l, ugte, r3, 4, 1\n" + random_alu(rng) + "\n" +
                "pop_exec r0l, 1\n" + random_alu(rng) + "\n"
                "mov_imm r12, 0, 0b0\n"
                "and r13, r5, 7\n"  // per-lane trip count 0..7
                "push_exec r0l, 1\n"
                "while_icmp r0l, ult, r12, r13, 1\n"
                "loop:\n"
                "iadd r12, r12, 1\n" + random_alu(rng) + "\n"
                "while_icmp r0l, ult, r12, r13, 1\n"
                "jmp_exec_any loop\n"
                "pop_exec r0l, 1\n"
                "if_icmp r0l, ueq, r12, 200, 1\n"
                "jmp_exec_none skip\n"
                "mov_imm r6, 12345, 0b0\n"
                "skip:\n"
                "pop_exec r0l, 1",
            sg);
  }
}

TEST_CASE("g13 translate: call/ret with r1 as link register, nested, from divergent code") {
  std::mt19937_64 rng(3);
  g13::SimdGroup sg = random_state(rng, 0x7FFFFFF3u);
  compare("if_icmp r0l, ult, r2, 8, 1\n"
          "call fn\n"
          "pop_exec r0l, 1\n"
          "call fn\n"
          "iadd r5, r5, r4\n"
          "jmp_exec_any end\n"
          "fn:\n"
          "iadd r4, r4, 3\n"
          "iadd r6, r1, 0\n"  // the link register value
          "ret r1\n"
          "end:\n"
          "mov_imm r7, 7, 0b0",
          sg);
}

TEST_CASE("g13 translate: device, threadgroup and stack memory with formats, masks, barriers and faults") {
  std::mt19937_64 rng(11);
  const int n = light() ? 2 : 6;
  for (int i = 0; i < n; ++i) {
    g13::SimdGroup sg = random_state(rng, i % 2 ? 0xF0F0FFFFu : 0xFFFFFFFFu, true);
    for (unsigned l = 0; l < 32; ++l) {
      sg.set_r32(8, l, l * 3);          // per-lane element index
      sg.set_r32(9, l, l);
      sg.regs[2 * 10][l] = uint16_t(l * 4);
      if (i % 3 == 2 && l == 5) sg.set_r32(8, l, 100000);  // out of bounds: a fault
      if (i % 2 && l % 7 == 3) {
        sg.regs[0][l] = 1;                  // inactive lane: its out-of-bounds index must not fault
        sg.set_r32(8, l, 0x7FFFFFF0u);
      }
    }
    sg.recompute_exec();
    sg.set_u64(2, 0x10000);  // u2_u3: device base
    TestMemory mem;
    mem.spaces[int(ir::Space::Global)].base = 0x10000;
    mem.spaces[int(ir::Space::Global)].bytes.resize(4096);
    for (auto& b : mem.spaces[int(ir::Space::Global)].bytes) b = uint8_t(rng());
    mem.spaces[int(ir::Space::Shared)].bytes.resize(1024);
    mem.stack_bytes = 64;
    for (unsigned l = 0; l < 32; ++l) mem.stacks.insert(mem.stacks.end(), 64, uint8_t(l));
    const bool faulted = compare("device_load 0, i32, xy, r12_r13, u2_u3, r8, unsigned, lsl 1\n"
            "device_load 0, u8norm, x, r14, u2_u3, r8, signed\n"
            "device_load 0, s16norm, xy, r15l_r15h, u2_u3, r9, signed\n"
            "device_load 0, s8norm, x, r16, u2_u3, 7, signed\n"
            "device_load 0, i16, x, r17h, u2_u3, 300, signed\n"
            "device_store 0, u8norm, x, r3, u2_u3, r9, unsigned, 0\n"
            "device_store 0, s16norm, xy, r4l_r4h, u2_u3, r8, unsigned, 0\n"
            "device_store 0, i32, x, r5, u2_u3, r8, unsigned, 0\n"
            "threadgroup_store i32, x, r5, 0, r10l\n"
            "threadgroup_barrier\n"
            "threadgroup_load i32, x, r18, 0, r10l\n"
            "stack_store i32, 1, 0, x, 4, r6, 20, 0\n"
            "stack_load r19l_r19h, i16, 1, 0, xy, 4, 20, 0\n"
            "wait 0",
            sg, mem);
    CHECK(faulted == (i % 3 == 2));
  }
}

TEST_CASE("g13 translate: packed device_load formats match the interpreter on every engine") {
  // Every lane reads its own word / bytes: words are random plus edge fields
  // (float11/10 exponent 31 with and without fraction, subnormals, rgb9e5
  // exponents 0 and 31); the srgba8 bytes cover all 256 values over the runs.
  std::mt19937_64 rng(77);
  const uint32_t edges[] = {0xF87E03C0u, 0xF7FDF801u, 0xFC0003FFu, 0x000C0001u, 0xFFFFFFFFu, 0, 0x7FC0F801u,
                            0x07FFFFFFu, 0xA00003FFu, 0x3FFFFFFFu};
  for (int i = 0; i < 2; ++i) {
    g13::SimdGroup sg = random_state(rng, i ? 0xFFFF7FFFu : 0xFFFFFFFFu);
    for (unsigned l = 0; l < 32; ++l) {
      sg.set_r32(8, l, l + 32 * i);        // word index
      sg.set_r32(9, l, 4 * l + 128 * i);   // byte index
      if (l % 5 == 1) sg.regs[0][l] = 1;   // inactive
    }
    sg.recompute_exec();
    sg.set_u64(2, 0x10002);  // aligned down to 0x10000 for the word formats
    sg.set_u64(4, 0x10400);
    TestMemory mem;
    mem.spaces[int(ir::Space::Global)].base = 0x10000;
    auto& bytes = mem.spaces[int(ir::Space::Global)].bytes;
    bytes.resize(2048);
    for (auto& b : bytes) b = uint8_t(rng());
    for (unsigned k = 0; k < std::size(edges); ++k) std::memcpy(bytes.data() + 4 * (k * 3 + 32 * i), &edges[k], 4);
    for (unsigned b = 0; b < 256; ++b) bytes[0x400 + b] = uint8_t(b);
    compare("device_load 0, rgb10a2, xyzw, r12_r13_r14_r15, u2_u3, r8, unsigned\n"
            "device_load 0, rgb10a2, x, r16l, u2_u3, r8, unsigned, lsl 1\n"
            "device_load 0, rg11b10f, xyz, r20_r21_r22, u2_u3, r8, unsigned\n"
            "device_load 0, rg11b10f.rtz, xyz, r23l_r23h_r24l, u2_u3, r8, unsigned\n"
            "device_load 0, rgb9e5, xyz, r25_r26_r27, u2_u3, r8, signed\n"
            "device_load 0, rgb9e5.rtz, xyz, r28l_r28h_r29l, u2_u3, r8, signed\n"
            "device_load 0, srgba8, xyzw, r30_r31_r32_r33, u4_u5, r9, unsigned\n"
            "device_load 0, srgba8, xyzw, r34l_r34h_r35l_r35h, u4_u5, r9, unsigned\n"
            "device_load 0, srgba8, xz, r36_r37, u4_u5, r9, unsigned, lsl 1\n"
            "wait 0",
            sg, mem);
  }
  // An out-of-range word faults on every engine as in the interpreter.
  g13::SimdGroup sg = random_state(rng, 0xFFFFFFFFu);
  for (unsigned l = 0; l < 32; ++l) sg.set_r32(8, l, l == 9 ? 4000 : l);
  sg.recompute_exec();
  sg.set_u64(2, 0x10000);
  TestMemory mem;
  mem.spaces[int(ir::Space::Global)].base = 0x10000;
  mem.spaces[int(ir::Space::Global)].bytes.resize(512);
  CHECK(compare("device_load 0, rgb9e5, xyz, r25_r26_r27, u2_u3, r8, signed", sg, mem));
  // Packed stores have no public model: a clear translation error, as in the interpreter.
  const auto code = asm_ok("mov_imm r2, 1, 0b0\ndevice_store 0, rgb10a2, xyzw, r4_r5_r6_r7, u2_u3, 0, signed, 0\nstop");
  ir::Function f;
  std::string err;
  CHECK_FALSE(g13::translate(code.data(), code.size(), f, err));
  CHECK_MESSAGE(err.find("device_store at pc 0x6") != std::string::npos, err);
  CHECK_MESSAGE(err.find("packed format") != std::string::npos, err);
}

TEST_CASE("g13 translate: get_sr special registers come from vars the helpers fill") {
  g13::SimdGroup sg;
  sg.launched = 0x0FFFFFFFu;
  for (unsigned l = 0; l < 32; ++l) {
    sg.set_special(80)[l] = 1000 + l;
    sg.regs[0][l] = l % 5 == 0 ? 1 : 0;
  }
  sg.recompute_exec();
  const auto code = asm_ok("get_sr r3, sr80 (thread_position_in_grid.x)\nget_sr r4, sr58 (active_thread_index_in_simdgroup)\nstop");
  ir::Function f;
  std::string err;
  REQUIRE(g13::translate(code.data(), code.size(), f, err));
  CHECK(g13::special_var(f, 80) == 128);
  CHECK(g13::special_var(f, 58) == -1);
  g13::SimdGroup empty;
  CHECK(g13::missing_special(empty, f) == 80);
  CHECK(g13::missing_special(sg, f) == -1);
  const std::vector<bool> w = g13::written_vars(f);
  CHECK(w[3]);
  CHECK(w[4]);
  CHECK_FALSE(w[5]);
  CHECK_FALSE(w[128]);  // sr80 is only read
  compare_code(code, sg, TestMemory{}, "get_sr");
}

TEST_CASE("g13 translate: pack_vars split into shared ranges (packed once) and per-group vars gives the same bytes") {
  // Registers (read and written, not all adjacent), a uniform var, exec and two special registers.
  const auto code = asm_ok(
      "get_sr r3, sr80 (thread_position_in_grid.x)\n"
      "get_sr r4, sr0 (threadgroup_position_in_grid.x)\n"
      "uniform_store 2, i16, xy, 0, r6l_r6h, 8\n"
      "iadd r8, u4, r9\n"
      "if_icmp r0l, ult, r3, 5, 1\n"
      "iadd r12, r11, r3\n"
      "pop_exec r0l, 1\nstop");
  ir::Function f;
  std::string err;
  REQUIRE(g13::translate(code.data(), code.size(), f, err));
  const g13::VarLayout layout = g13::var_layout(f);
  const auto ranges = g13::shared_var_ranges(layout);
  unsigned kinds[5] = {};
  for (const g13::VarLayout::Var& v : layout.vars)
    if (v.read || v.written) ++kinds[unsigned(v.kind)];
  REQUIRE(kinds[unsigned(g13::VarLayout::Kind::Special)] == 2);
  REQUIRE(kinds[unsigned(g13::VarLayout::Kind::Uniform)] == 1);
  REQUIRE(kinds[unsigned(g13::VarLayout::Kind::Exec)] == 1);
  CHECK(ranges.size() >= 3);  // r0 .. r12 has gaps; the uniform var lies after the registers
  std::mt19937_64 rng(7);
  // One state packed whole; another with the same registers and uniforms but
  // other launched lanes, exec and special registers.
  g13::SimdGroup a = random_state(rng, 0xFFFFFFFFu), b = a;
  b.launched = 0x00FF0F0Fu;
  b.recompute_exec();
  for (unsigned l = 0; l < 32; ++l) {
    a.set_special(80)[l] = uint32_t(rng());
    a.set_special(0)[l] = 3;
    b.set_special(80)[l] = uint32_t(rng());
    b.set_special(0)[l] = 9;
  }
  std::vector<uint8_t> image(layout.bytes, 0), whole(layout.bytes, 0xA5), split(layout.bytes, 0xA5);
  g13::pack_vars(a, layout, image.data());
  g13::pack_vars(b, layout, whole.data());
  for (const auto& [begin, end] : ranges) {
    REQUIRE(end <= layout.bytes);
    std::memcpy(split.data() + begin, image.data() + begin, end - begin);
  }
  g13::pack_group_vars(b, layout, split.data());
  CHECK(split == whole);
  // The group part really differs (so the check above can fail when it is missed).
  std::vector<uint8_t> no_group(layout.bytes, 0xA5);
  for (const auto& [begin, end] : ranges) std::memcpy(no_group.data() + begin, image.data() + begin, end - begin);
  CHECK(no_group != whole);
}

TEST_CASE("g13 translate: interpreter errors are guest traps naming the pc in the JIT") {
  // A divergent return (r5 differs between active lanes), a return to an
  // address that is no instruction, a uniform_store past u255h.
  const struct {
    const char* prog;
    uint64_t pc;
  } cases[] = {{"mov_imm r2, 1, 0b0\nret r5", 6},
               {"mov_imm r5, 4097, 0b0\nret r5", 6},
               {"mov_imm r2, 1, 0b0\nuniform_store 2, i16, xy, 0, r6l_r6h, 511", 6}};  // u-halves 511, 512
  for (const auto& c : cases) {
    g13::SimdGroup sg;
    for (unsigned l = 0; l < 32; ++l) sg.set_r32(5, l, l);
    sg.launched = 0xFFFF00FFu;
    sg.recompute_exec();
    const auto code = asm_ok(std::string(c.prog) + "\nstop");
    const EndState ref = run_reference(code, sg, TestMemory{});
    CHECK((!ref.error.empty() || ref.fault));
    ir::Function f;
    std::string err;
    REQUIRE_MESSAGE(g13::translate(code.data(), code.size(), f, err), err);
    for (Engine tier : host_jit_tiers()) {
      CompiledIr ci;
      REQUIRE_MESSAGE(compile_ir(f, tier, IrCompileOptions{}, ci, err), err);
      std::vector<uint8_t> vars(ci.vars_bytes + 64), frame(ci.exe->frame_bytes() + 64), uni(g13::kUniformBytes);
      uint8_t* v = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(vars.data()) + 63) & ~uintptr_t(63));
      g13::pack_vars(sg, f, v);
      ir::WarpContext ctx;
      ctx.vars = v;
      ctx.uniforms = uni.data();
      ctx.frame = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(frame.data()) + 63) & ~uintptr_t(63));
      ctx.entry_mask = sg.launched;
      CHECK(ci.exe->run(ctx) == ir::RunStatus::Fault);
      CHECK(ctx.fault == ir::FaultKind::Trap);
      CHECK(ctx.fault_code == c.pc);
    }
  }
}

TEST_CASE("g13 translate: exec_starts_launched reads the entry mask only where no instruction writes exec") {
  // A runner that starts every SIMD-group with exec = its launched lanes
  // (TranslateOptions::exec_starts_launched) lets a program without
  // exec-stack instructions use the entry mask instead of the var "exec";
  // with an exec-stack instruction anywhere the var stays.
  auto exec_var_accesses = [](const char* text, bool starts_launched) {
    std::vector<uint8_t> code;
    std::string err;
    REQUIRE_MESSAGE(g13::assemble(text, code, err), err);
    ir::Function f;
    g13::TranslateOptions opt;
    opt.exec_starts_launched = starts_launched;
    REQUIRE_MESSAGE(g13::translate(code.data(), code.size(), f, err, opt), err);
    const g13::VarLayout L = g13::var_layout(f);
    for (const g13::VarLayout::Var& v : L.vars)
      if (v.kind == g13::VarLayout::Kind::Exec) return int(v.read) + int(v.written);
    return -1;
  };
  const char* straight = "get_sr r1, sr80 (thread_position_in_grid.x)\niadd r2, r1, 3\nstop";
  const char* exec_stack =
      "get_sr r1, sr80 (thread_position_in_grid.x)\n"
      "mov_imm r5, 0, 0b0\n"
      "push_exec r0l, 1\n"
      "iadd r2, r1, 3\n"
      "pop_exec r0l, 1\n"
      "stop";
  CHECK(exec_var_accesses(straight, false) > 0);
  CHECK(exec_var_accesses(straight, true) == 0);
  CHECK(exec_var_accesses(exec_stack, false) > 0);
  CHECK(exec_var_accesses(exec_stack, true) > 0);
}

TEST_CASE("g13 translate: with a known start state a uniform jmp_exec_any loop loses its vote") {
  // TranslateOptions::exec_starts_launched with exec-stack instructions: the
  // registers and exec start as constants and register writes select on
  // exec alone, so a loop whose condition every lane computes alike (the
  // bench kernel `alu`, examples/g13/int_hash.s) has a uniform exec;
  // fold_uniform_votes then turns its `jmp_exec_any` vote into the exec
  // value, and the loop is a single block of strip ops (no warp op), which
  // the x64 backend runs strip by strip in registers.
  // The bench kernel itself, so the test follows any change to it.
  std::ifstream file(std::string(GPURC_TEST_DATA) + "/examples/g13/int_hash.s");
  REQUIRE(file.good());
  std::stringstream source;
  source << file.rdbuf();
  const std::string text = source.str();
  std::vector<uint8_t> code;
  std::string err;
  REQUIRE_MESSAGE(g13::assemble(text, code, err), err);
  auto votes_in_loops = [&](bool starts_launched) {
    ir::Function f;
    g13::TranslateOptions opt;
    opt.exec_starts_launched = starts_launched;
    REQUIRE_MESSAGE(g13::translate(code.data(), code.size(), f, err, opt), err);
    REQUIRE(ir::run_pipeline(f, ir::PassOptions{}) == "");
    int loops = 0, votes = 0;
    for (ir::BlockId b = 0; b < f.blocks.size(); ++b) {
      const auto& succs = f.blocks[b].succs;
      if (std::find(succs.begin(), succs.end(), b) == succs.end()) continue;
      ++loops;
      for (ir::ValueId v : f.blocks[b].insts) votes += f.insts[v].op == ir::Opcode::Any;
    }
    CHECK(loops == 1);
    return votes;
  };
  CHECK(votes_in_loops(false) == 1);
  CHECK(votes_in_loops(true) == 0);
}

TEST_CASE("g13 translate: exec_starts_launched with exec-stack code matches the interpreter on partial launches") {
  // The known start state (TranslateOptions::exec_starts_launched): every
  // register the code writes starts at zero, exec at the launched lanes, and
  // lanes that were not launched compute like active ones. The launched
  // lanes' registers, memory and faults must be the reference's, with
  // divergent if/else, a per-lane while loop, a uniform one and
  // jmp_exec_none, on full and partial launches.
  std::mt19937_64 rng(41);
  const int n = light() ? 4 : 16;
  for (int i = 0; i < n; ++i) {
    const uint32_t launched = i % 4 == 0 ? 0xFFFFFFFFu : i % 4 == 1 ? 0x00FFFF0Fu : i % 4 == 2 ? 0x80000001u : uint32_t(rng()) | 1u;
    g13::SimdGroup sg = random_state(rng, launched);
    // The registers the program writes start at zero (a launch's state);
    // r20..r31 stay random and give the lanes different values.
    for (unsigned r = 0; r < 20; ++r)
      for (unsigned l = 0; l < 32; ++l) sg.set_r32(r, l, 0);
    sg.recompute_exec();
    std::string prog;
    for (unsigned r = 2; r < 14; ++r) prog += "iadd r" + std::to_string(r) + ", r" + std::to_string(r + 18) + ", 0\n";
    prog += "if_icmp r0l, ult, r2, 8, 1\n" + random_alu(rng) + "\n" +
            "else_icmp r0l, ugte, r3, 4, 1\n" + random_alu(rng) + "\n" +
            "pop_exec r0l, 1\n" + random_alu(rng) + "\n"
            "mov_imm r12, 0, 0b0\n"
            "and r13, r5, 7\n"  // per-lane trip count 0..7
            "push_exec r0l, 1\n"
            "while_icmp r0l, ult, r12, r13, 1\n"
            "loop:\n"
            "iadd r12, r12, 1\n" + random_alu(rng) + "\n"
            "while_icmp r0l, ult, r12, r13, 1\n"
            "jmp_exec_any loop\n"
            "pop_exec r0l, 1\n"
            "mov_imm r14, 0, 0b0\n"
            "push_exec r0l, 1\n"
            "while_icmp r0l, ult, r14, 5, 1\n"
            "uloop:\n"
            "iadd r14, r14, 1\n" + random_alu(rng) + "\n"
            "while_icmp r0l, ult, r14, 5, 1\n"
            "jmp_exec_any uloop\n"
            "pop_exec r0l, 1\n"
            "if_icmp r0l, ueq, r12, 200, 1\n"
            "jmp_exec_none skip\n"
            "mov_imm r6, 12345, 0b0\n"
            "skip:\n"
            "pop_exec r0l, 1";
    compare_code(asm_ok(prog + "\nstop"), sg, {}, prog, false, nullptr, true);
  }
}

TEST_CASE("g13 translate: fadd32 is one IR add (not an fma by 1.0), bit-exact on edge operands") {
  // The shape: a 32-bit add into a 32-bit (and a 16-bit) register is fadd;
  // an fma by 1.0 made the x64 tiers flush both operands with selects.
  {
    const auto code = asm_ok("fadd32 r4, r2, r3\nfadd32.sat r5, r2, r3\nfadd32 r6l, r2, r3\nstop");
    ir::Function f;
    std::string err;
    REQUIRE_MESSAGE(g13::translate(code.data(), code.size(), f, err), err);
    size_t adds = 0, fmas = 0;
    for (const auto& b : f.blocks)
      for (ir::ValueId v : b.insts) {
        adds += f.insts[v].op == ir::Opcode::FAdd;
        fmas += f.insts[v].op == ir::Opcode::FFma;
      }
    CHECK(adds == 3);
    CHECK(fmas == 0);
  }
  // Every pair of edge values (zeros of both signs, denormals, NaN payloads,
  // infinities, values whose sum cancels or overflows), with and without
  // saturation and into a half register, against the interpreter.
  std::mt19937_64 rng(1327);
  for (int i = 0; i < (light() ? 8 : 40); ++i) {
    g13::SimdGroup sg = random_state(rng, i % 3 ? 0xFFFFFFFFu : 0xF0FF0FF7u, true);
    for (unsigned l = 0; l < 32; ++l) {
      const uint32_t a = sg.r32(2, l);
      switch (rng() % 4) {
        case 0: sg.set_r32(3, l, a ^ 0x80000000u); break;  // x + -x: a zero (its sign)
        case 1: sg.set_r32(3, l, (a ^ 0x80000000u) + 1); break;  // cancels to the last bits
        default: break;
      }
    }
    compare("fadd32 r4, r2, r3\nfadd32.sat r5, r3, r2\nfadd32 r6l, r2, r3\nfadd32 r7, r2, u9", sg);
  }
}

TEST_CASE("g13 translate: fmadd16 with a 32-bit source rounds once, results of either sign") {
  // A 16-bit op with a 32-bit uniform source computes in f64 rounded to odd,
  // then rounds to f16. The f64 sum is inexact only when the addend and the
  // product lie more than 53 bits apart, and the odd bit matters only when
  // the truncated sum sits on an f16 midpoint: an addend that is the midpoint
  // of two large f16 values plus a product of two f16 subnormals. The exact
  // sum is just beyond the midpoint when the product has the addend's sign
  // (round away from it) and just short of it otherwise. The fuzzer found the
  // negative case wrong by one ulp (g13 seed 43, iterations 1153 and 1918).
  std::mt19937_64 rng(4311);
  for (int i = 0; i < (light() ? 8 : 40); ++i) {
    g13::SimdGroup sg = random_state(rng, i % 3 ? 0xFFFFFFFFu : 0x7FFF0FF3u);
    for (unsigned l = 0; l < 32; ++l)
      for (unsigned r = 2; r <= 3; ++r) {
        // Both halves: small f16 subnormals of either sign (never zero), so
        // the product (below 2^-38) is below the f64 sum's last bit.
        const uint32_t lo = uint32_t((rng() % 31 + 1) | (rng() & 1) << 15);
        const uint32_t hi = uint32_t((rng() % 31 + 1) | (rng() & 1) << 15);
        sg.set_r32(r, l, hi << 16 | lo);
      }
    // u8 and u10 (32-bit uniforms): the f32 midpoint between an f16 of
    // exponent 14 or 15 and the next one up, either sign.
    for (unsigned u : {8u, 10u}) {
      const uint32_t h = uint32_t((rng() % 2 + 29) << 10 | (rng() % 0x3FF));  // biased 29, 30; never the top
      const uint32_t mid = ((h >> 10) - 15 + 127) << 23 | (h & 0x3FF) << 13 | 1u << 12;
      const uint32_t bits = mid | uint32_t(rng() & 1) << 31;
      sg.uniforms[2 * u] = uint16_t(bits);  // 16-bit halves: u<n> is halves 2n, 2n + 1
      sg.uniforms[2 * u + 1] = uint16_t(bits >> 16);
    }
    compare("fmadd16 r4l, r2l, r3l, u8\nfmadd16 r4h, r2h, r3l.neg, u8\nfmadd16 r5l, r2l, r3h, u10.neg\n"
            "fmadd16 r5h, r2h.neg, r3h, u10",
            sg);
  }
}

}  // namespace gpurc_test_g13_test_g13_translate
