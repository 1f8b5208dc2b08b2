// G13 -> IR translation checked against the G13 reference interpreter: the
// same programs (straight-line integer code and exec-mask control flow over
// partially active SIMD-groups) must leave identical registers, both on the
// pre-SSA IR and after the full pass pipeline.
#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>
#include <random>

#include "frontend/g13/interp.h"
#include "frontend/g13/translate.h"
#include "ir/interp.h"
#include "ir/passes.h"

using namespace gpurc;

namespace {

std::vector<uint8_t> asm_ok(const std::string& text) {
  std::vector<uint8_t> out;
  std::string err;
  REQUIRE_MESSAGE(g13::assemble(text, out, err), err);
  return out;
}

// Runs `code` through the IR interpreter with the state of `sg`; writes the
// final registers back into `sg`.
void run_ir(const ir::Function& f, g13::SimdGroup& sg) {
  auto exe = ir::make_ir_interpreter(f);
  std::vector<uint8_t> vars(f.vars_bytes()), frame(exe->frame_bytes() + 16), uni(g13::kUniformBytes);
  for (uint32_t r = 0; r < 128; ++r)
    for (unsigned l = 0; l < 32; ++l) {
      const uint32_t v = sg.r32(r, l);
      std::memcpy(vars.data() + f.var_offset(r) + l * 4, &v, 4);
    }
  std::memcpy(uni.data(), sg.uniforms.data(), g13::kUniformBytes);
  ir::WarpContext ctx;
  ctx.vars = vars.data();
  ctx.uniforms = uni.data();
  ctx.frame = frame.data();
  ctx.entry_mask = sg.launched;
  REQUIRE(exe->run(ctx) == ir::RunStatus::Done);
  for (uint32_t r = 0; r < 128; ++r)
    for (unsigned l = 0; l < 32; ++l) {
      uint32_t v;
      std::memcpy(&v, vars.data() + f.var_offset(r) + l * 4, 4);
      sg.set_r32(r, l, v);
    }
}

void compare(const std::string& prog, const g13::SimdGroup& start) {
  const auto code = asm_ok(prog + "\nstop");
  g13::SimdGroup ref = start;
  g13::Interpreter it(code, nullptr);
  const auto r = it.run(ref, 100000);
  REQUIRE_MESSAGE(r.kind == g13::StepResult::Kind::Done, r.message);
  ir::Function f;
  std::string err;
  REQUIRE_MESSAGE(g13::translate(code.data(), code.size(), f, err), err);
  for (int lowered = 0; lowered < 2; ++lowered) {
    ir::Function g = f;
    if (lowered) {
      ir::PassOptions opt;
      opt.verify_each = true;
      const std::string e = ir::run_pipeline(g, opt);
      REQUIRE_MESSAGE(e.empty(), e);
    }
    g13::SimdGroup sg = start;
    run_ir(g, sg);
    for (unsigned reg = 0; reg < 16; ++reg)
      for (unsigned l = 0; l < 32; ++l)
        if (start.launched >> l & 1)
          REQUIRE_MESSAGE(sg.r32(reg, l) == ref.r32(reg, l),
                          "r" << reg << " lane " << l << (lowered ? " (lowered)" : " (pre-SSA)") << "\n" << prog);
  }
}

g13::SimdGroup random_state(std::mt19937_64& rng, uint32_t launched) {
  g13::SimdGroup sg;
  for (unsigned r = 1; r < 128; ++r)
    for (unsigned l = 0; l < 32; ++l) sg.set_r32(r, l, uint32_t(rng() % 7 == 0 ? rng() : rng() % 16));
  for (unsigned l = 0; l < 32; ++l) sg.set_r32(0, l, 0);
  for (unsigned i = 0; i < 512; ++i) sg.uniforms[i] = uint16_t(rng());
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

}  // namespace

TEST_CASE("g13 translate: unsupported instructions are clear errors") {
  const auto code = asm_ok("fadd32 r1, r1, 0.5\nstop");
  ir::Function f;
  std::string err;
  CHECK_FALSE(g13::translate(code.data(), code.size(), f, err));
  CHECK(err.find("fadd32") != std::string::npos);
  CHECK(err.find("pc 0x0") != std::string::npos);
}

TEST_CASE("g13 translate: random straight-line integer code matches the interpreter") {
  std::mt19937_64 rng(77);
  const int n = std::getenv("GPURC_TEST_LIGHT") ? 10 : 60;
  for (int i = 0; i < n; ++i) {
    std::string prog;
    for (int k = 0; k < 12; ++k) prog += random_alu(rng) + "\n";
    const uint32_t launched = i % 3 == 0 ? 0xFFFFFFFFu : uint32_t(rng()) | 1;
    compare(prog, random_state(rng, launched));
  }
}

TEST_CASE("g13 translate: if/else/while/pop_exec and jmp_exec_any/none match the interpreter") {
  std::mt19937_64 rng(99);
  const int n = std::getenv("GPURC_TEST_LIGHT") ? 5 : 30;
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

TEST_CASE("g13 translate: float conditions (NaN, ltn/gtn, f16 and f32 sources) match the interpreter") {
  std::mt19937_64 rng(5);
  static const char* conds[] = {"eq", "lt", "gt", "ltn", "gte", "lte", "gtn", "neq", "nlt", "ngt", "ngte", "nlte"};
  static const uint32_t f32s[] = {0x7FC00000u, 0x3F800000u, 0xBF800000u, 0x00000001u, 0x80000000u, 0x7F800000u, 0x40490FDBu};
  static const uint16_t f16s[] = {0x7E00, 0x3C00, 0xBC00, 0x0001, 0x8000, 0x7C00, 0x4248};
  const int n = std::getenv("GPURC_TEST_LIGHT") ? 10 : 60;
  for (int i = 0; i < n; ++i) {
    g13::SimdGroup sg = random_state(rng, 0xFFFFFFFFu);
    for (unsigned l = 0; l < 32; ++l) {
      sg.set_r32(2, l, f32s[rng() % 7]);
      sg.set_r32(3, l, f32s[rng() % 7]);
      sg.regs[8][l] = f16s[rng() % 7];
      sg.regs[9][l] = f16s[rng() % 7];
    }
    const std::string c1 = conds[rng() % 12], c2 = conds[rng() % 12];
    compare("if_fcmp r0l, " + c1 + ", r2, r3.abs, 1\nmov_imm r6, 1, 0b0\n"
            "else_fcmp r0l, " + c2 + ", r4l.neg, r4h, 1\nmov_imm r6, 2, 0b0\npop_exec r0l, 1\n"
            "if_fcmp r0l, " + c2 + ", r4h, 0.5, 1\nmov_imm r7, 3, 0b0\npop_exec r0l, 1",
            sg);
  }
}
