// Translation quality: the shapes the translator produces for speed (one
// block per straight-line run, if-converted short branches, vars only for the
// registers the code names) keep the interpreter's end state.
#include "translate_harness.h"

using namespace tesla_tr;

namespace {

Case regs_case(const std::string& src, unsigned threads, uint32_t seed) {
  Case c;
  c.src = src;
  c.threads = threads;
  c.init = [seed](unsigned i, ThreadState& s) {
    std::mt19937 rng(seed * 131 + i);
    for (unsigned r = 0; r < 24; ++r) s.r[r] = edge_value(rng);
    for (unsigned k = 0; k < 4; ++k) s.c[k] = uint8_t(rng() & 15);
  };
  c.global0.assign(0x200, 0);
  return c;
}

void check_everywhere(const std::string& src) {
  for (uint32_t s = 1; s <= (light() ? 1u : 4u); ++s) {
    check_case(regs_case(src, 32, s));
    check_case(regs_case(src, 7 + s, s + 50));  // partial warp
  }
}

gpurc::ir::Function translated(const std::string& src, TranslateOptions opt = {}) {
  Target t;
  std::string err;
  REQUIRE(parse_target("g200", t, err));
  std::vector<uint32_t> code;
  REQUIRE(assemble(all_long(src), t, code, err));
  opt.target = t;
  opt.launch_abi = false;
  gpurc::ir::Function f;
  INFO(err);
  REQUIRE(translate(code, opt, f, err));
  return f;
}

size_t count_op(const gpurc::ir::Function& f, gpurc::ir::Opcode op) {
  size_t n = 0;
  for (const auto& b : f.blocks)
    for (auto v : b.insts) n += f.insts[v].op == op;
  return n;
}

// An if/else whose sides both store to g0[0x10] and a nested skip: the
// warp stack runs the taken side first, so the not-taken lanes' store lands last.
const char* kIfElse =
    "mov b32 $r20 0x10\n"
    "set $c0 $r4 l u32 $r0 $r1\n"
    "joinat #J\n"
    "(lg $c0) bra #B\n"
    "add b32 $r2 $r8 $r9\n"
    "st b32 g0[$r20] $r2\n"
    "set $c1 $r5 l u32 $r2 $r3\n"
    "(lg $c1) bra #S\n"
    "add b32 $r6 $r6 0x7\n"
    "S: mov b32 $r7 $r6\n"
    "bra #J\n"
    "B: st b32 g0[$r20] $r9\n"
    "(e $c0) add b32 $r10 $r10 $r11\n"
    "J: join add b32 $r3 $r3 $r8\n"
    "exit nop\n";

}  // namespace

TEST_CASE("tesla translate quality: if/else and skips become predicated straight-line code") {
  check_everywhere(kIfElse);
  // No divergent branch is left: one block from the entry to the exit.
  gpurc::ir::Function f = translated(kIfElse);
  CHECK(count_op(f, gpurc::ir::Opcode::CondBr) == 0);
  CHECK(f.blocks.size() == 1);
}

TEST_CASE("tesla translate quality: a region entered from outside stays a branch") {
  // #M is a target of the later bra, so the skip over it is not if-converted.
  const char* src =
      "set $c0 $r4 l u32 $r0 $r1\n"
      "mov b32 $r12 0x3\n"
      "mov b32 $r13 0x0\n"
      "(lg $c0) bra #E\n"
      "M: add b32 $r2 $r2 $r8\n"
      "E: add b32 $r12 $r12 0xffffffff\n"
      "set $c1 $r5 lg u32 $r12 $r13\n"
      "(lg $c1) bra #M\n"
      "exit nop\n";
  check_everywhere(src);
  CHECK(count_op(translated(src), gpurc::ir::Opcode::CondBr) == 2);
}

TEST_CASE("tesla translate quality: exits and votes inside a region keep the branch") {
  check_everywhere("set $c0 $r4 l u32 $r0 $r1\n"
                   "(lg $c0) bra #E\n"
                   "add b32 $r2 $r2 $r8\n"
                   "exit add b32 $r3 $r3 $r8\n"
                   "E: (lg $c0) vote any $c1\n"
                   "exit nop\n");
  check_everywhere("set $c0 $r4 l u32 $r0 $r1\n"
                   "joinat #E\n"
                   "(lg $c0) bra #E\n"
                   "(lg $c0) vote all $c1\n"
                   "E: join mov $r2 $c1\n"
                   "exit nop\n");
}

TEST_CASE("tesla translate quality: vars only up to the highest register named") {
  gpurc::ir::Function f = translated("add b32 $r5 $r1 $r2\nexit nop\n");
  CHECK(reg_vars(f) == 6);
  CHECK(f.vars[kVarR + 5].name == "r5");
  // No call/break: no private stack vars either.
  CHECK(f.vars.size() == kVarR + 6);
  // A 64-bit pair names its second register too.
  CHECK(reg_vars(translated("add rn f64 $r6d $r2d $r4d\nexit nop\n")) == 8);
  // Registers without a var keep the caller's value in read_lane.
  std::vector<uint8_t> vars(f.vars_bytes() + 64, 0);
  ThreadState st{};
  for (unsigned r = 0; r < 128; ++r) st.r[r] = 0x1000 + r;
  init_state_lane(f, vars.data(), 3, st, 0);
  ThreadState back = st;
  back.r[2] = 0;
  read_lane(f, vars.data(), 3, back);
  CHECK(back.r[2] == 0x1002);
  CHECK(back.r[9] == 0x1009);
}

TEST_CASE("tesla translate quality: init_launch_warp writes what init_launch_lane writes") {
  gpurc::ir::Function f = translated("add b32 $r1 $r0 $r0\nexit nop\n");
  std::vector<uint8_t> a(f.vars_bytes(), 0), b(f.vars_bytes(), 0);
  unsigned tid[32][3];
  unsigned ctaid[2] = {7, 3};
  for (unsigned l = 0; l < 32; ++l) {
    tid[l][0] = (l + 30) % 64, tid[l][1] = l / 8, tid[l][2] = l % 3;
    init_launch_lane(f, a.data(), l, tid[l], ctaid, 0x400 + 0x40 * l);
  }
  init_launch_warp(launch_slots(f), b.data(), 32, tid, ctaid, 0x400, 0x40);
  CHECK(a == b);
  // A partial warp leaves the other lanes alone.
  std::vector<uint8_t> c(f.vars_bytes(), 0xee), d(f.vars_bytes(), 0xee);
  for (unsigned l = 0; l < 5; ++l) init_launch_lane(f, c.data(), l, tid[l], ctaid, 0x400 + 0x40 * l);
  init_launch_warp(launch_slots(f), d.data(), 5, tid, ctaid, 0x400, 0x40);
  CHECK(c == d);
}
