// Translation quality: the shapes the translator produces for speed (one
// block per straight-line run, if-converted short branches, vars only for the
// registers the code names) keep the interpreter's end state.
#include <cstdio>
#include <cstring>

#include "frontend/tesla/launch_abi.h"
#include "frontend/tesla/module/launch.h"
#include "frontend/tesla/translate.h"
#include "ir/passes.h"
#include "recompiler/isa_engine.h"
#include "translate_harness.h"

namespace gpurc_test_tesla_translate_quality {  // one namespace per file: unity builds (CMakeLists.txt)

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

TEST_CASE("tesla translate quality: vars only for the state the code touches") {
  gpurc::ir::Function f = translated("add b32 $r5 $r1 $r2\nexit nop\n");
  // $r1 $r2 $r5 and exited; no $a, $c, ctaid, local_base (no l[]), no stack vars.
  CHECK(f.vars.size() == 4);
  CHECK(state_var(f, "r5") != kNoStateVar);
  CHECK(state_var(f, "r3") == kNoStateVar);
  CHECK(state_var(f, "c0") == kNoStateVar);
  CHECK(state_var(f, "exited") != kNoStateVar);
  CHECK(state_var(f, "local_base") == kNoStateVar);
  // A 64-bit pair names its second register too; flags name their $c.
  gpurc::ir::Function g = translated("add rn f64 $r6d $r2d $r4d\nadd b32 $c2 $r9 $r1 $r1\nexit nop\n");
  CHECK(state_var(g, "r7") != kNoStateVar);
  for (const char* flag : {"c2z", "c2s", "c2c", "c2o"}) CHECK(state_var(g, flag) != kNoStateVar);
  CHECK(state_var(g, "c1z") == kNoStateVar);
  // State without a var keeps the caller's value in read_lane.
  std::vector<uint8_t> vars(f.vars_bytes() + 64, 0);
  ThreadState st{};
  for (unsigned r = 0; r < 128; ++r) st.r[r] = 0x1000 + r;
  st.c[1] = 9;
  init_state_lane(f, vars.data(), 3, st, 0);
  ThreadState back = st;
  back.r[2] = 0;
  back.r[5] = 0;
  read_lane(f, vars.data(), 3, back);
  CHECK(back.r[2] == 0x1002);
  CHECK(back.r[5] == 0x1005);
  CHECK(back.r[9] == 0x1009);
  CHECK(back.c[1] == 9);
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

namespace {

// Runs `src` as a launch (grid 3 x 2 of 40 threads, params 0x12345678 and
// 0x9abcdef0) on every engine; each thread stores 8 words at g0[tid * 32 + ...].
std::vector<std::vector<uint8_t>> launch_everywhere(const std::string& src) {
  gpurc::tesla_run::Kernel k;
  std::string err;
  REQUIRE(parse_target("g200", k.target, err));
  INFO(err);
  REQUIRE(assemble(src, k.target, k.code, err));
  gpurc::tesla_run::Launch l;
  l.grid = {3, 2, 1};
  l.block = {40, 1, 1};
  l.params = {0x78, 0x56, 0x34, 0x12, 0xf0, 0xde, 0xbc, 0x9a};
  l.smem = 0x40;
  std::vector<std::vector<uint8_t>> outs;
  std::vector<gpurc::Engine> engines{gpurc::Engine::Interp};
  for (gpurc::Engine e : gpurc::host_engines()) engines.push_back(e);
  for (gpurc::Engine e : engines) {
    std::vector<gpurc::tesla_run::Buffer> bufs(1);
    bufs[0].name = "out";
    bufs[0].address = 0x1000;
    bufs[0].bytes.assign(40 * 32, 0xcd);
    gpurc::tesla_run::Options o;
    const gpurc::EngineAsHandle handle(e);
    o.engine = &handle;
    o.threads = 1;
    gpurc::tesla_run::Outcome r = gpurc::tesla_run::run(k, l, bufs, o);
    INFO(gpurc::engine_name(e) << ": " << r.error << r.fault_message);
    REQUIRE(r.ok());
    outs.push_back(bufs[0].bytes);
  }
  return outs;
}

const char* kAbiReads =
    "ld $r1 u16 s[0x2]\n"      // ntid.x
    "ld $r2 u16 s[0xe]\n"      // ctaid.y
    "ld $r3 b32 s[0xc]\n"      // ctaid.x | ctaid.y << 16
    "ld $r4 s16 s[0x16]\n"     // high half of the second param, sign-extended
    "ld $r5 u16 s[0x8]\n"      // nctaid.x
    "ld $r6 b32 s[0x14]\n"     // second param
    "cvt u32 $r7 u16 $r0l\n"   // tid.x
    "shl b32 $r8 $r7 0x5\n"
    "long add b32 $r8 $r8 0x1000\n"
    "%s"
    "st b32 g0[$r8] $r1\n"
    "long add b32 $r8 $r8 0x4\n"
    "st b32 g0[$r8] $r2\n"
    "long add b32 $r8 $r8 0x4\n"
    "st b32 g0[$r8] $r3\n"
    "long add b32 $r8 $r8 0x4\n"
    "st b32 g0[$r8] $r4\n"
    "long add b32 $r8 $r8 0x4\n"
    "st b32 g0[$r8] $r5\n"
    "long add b32 $r8 $r8 0x4\n"
    "st b32 g0[$r8] $r6\n"
    "exit nop\n";

std::string abi_program(const char* extra) {
  char buf[2048];
  std::snprintf(buf, sizeof buf, kAbiReads, extra);
  return buf;
}

}  // namespace

TEST_CASE("tesla translate quality: launch ABI reads from the uniform block match the interpreter") {
  // Without stores to s[] the reads come from the uniform block and ctaid;
  // with one (a store that rewrites ntid.x after the reads) they stay loads.
  for (const char* extra : {"", "long mov b32 $r9 0x7\nst b16 s[0x2] $r9l\nld $r1 u16 s[0x2]\n"}) {
    INFO(extra);
    auto outs = launch_everywhere(abi_program(extra));
    for (size_t i = 1; i < outs.size(); ++i) CHECK(outs[i] == outs[0]);
    // The last block (ctaid 2, 1) wrote last: thread 5's words.
    uint32_t w[6];
    std::memcpy(w, outs[0].data() + 5 * 32, sizeof w);
    CHECK(w[0] == (*extra ? 7u : 40u));
    CHECK(w[1] == 1u);
    CHECK(w[2] == (2u | 1u << 16));
    CHECK(w[3] == 0xffff9abcu);
    CHECK(w[4] == 3u);
    CHECK(w[5] == 0x9abcdef0u);
  }
}

namespace {

// The function tesla_run gives a JIT engine for `src` (launch ABI with two
// params, fresh_launch + discard_state as in frontend/tesla/module/launch.cpp).
gpurc::ir::Function launch_translation(const std::string& src, bool discard_state) {
  Target t;
  std::string err;
  REQUIRE(parse_target("g200", t, err));
  std::vector<uint32_t> code;
  INFO(err);
  REQUIRE(assemble(src, t, code, err));
  BlockConfig cfg;
  cfg.block[0] = 40;
  cfg.params.assign(8, 0);
  cfg.smem = 0x40;
  TranslateOptions opt = options_for(cfg, t);
  opt.fresh_launch = true;
  opt.discard_state = discard_state;
  gpurc::ir::Function f;
  REQUIRE(translate(code, opt, f, err));
  return f;
}

size_t shared_stores(const gpurc::ir::Function& f) {
  size_t n = 0;
  for (const auto& b : f.blocks)
    for (auto v : b.insts)
      n += f.insts[v].op == gpurc::ir::Opcode::Store && gpurc::ir::mem_space(f.insts[v].attr) == gpurc::ir::Space::Shared;
  return n;
}

}  // namespace

TEST_CASE("tesla translate quality: discard_state makes written registers private and drops an unread ABI block") {
  using gpurc::ir::Function;
  // Reads of the ABI block only through the uniform block: every register
  // the code writes is private to the run, the ABI block is not stored.
  Function f = launch_translation(abi_program(""), true);
  REQUIRE(f.state_vars < f.vars.size());
  const uint32_t r0 = state_var(f, "r0"), r8 = state_var(f, "r8"), ctaid = state_var(f, "ctaid");
  REQUIRE(r0 != kNoStateVar);
  REQUIRE(r8 != kNoStateVar);
  REQUIRE(ctaid != kNoStateVar);
  CHECK(r0 < f.state_vars);     // the launch's init writes it
  CHECK(ctaid < f.state_vars);
  CHECK(r8 >= f.state_vars);    // written by the code: private
  CHECK(state_var(f, "abi_writer") == kNoStateVar);
  CHECK(shared_stores(f) == 0);
  // The launch's init writes the state vars at the offsets it finds in
  // the translated function: they must stay in front of the private ones.
  CHECK(launch_slots(f).r0 + 4 * 32 <= f.var_offset(f.state_vars));
  // The text form keeps the mark.
  Function g;
  std::string err;
  REQUIRE(gpurc::ir::parse(gpurc::ir::print(f), g, err));
  CHECK(g.state_vars == f.state_vars);
  // The pass pipeline drops the private vars from the layout and neither
  // loads nor stores them.
  Function lowered = f;
  REQUIRE(gpurc::ir::run_pipeline(lowered, gpurc::ir::PassOptions{}).empty());
  CHECK(lowered.vars.size() == f.state_vars);
  // Without discard_state every var is state and the ABI block is stored.
  Function kept = launch_translation(abi_program(""), false);
  CHECK(kept.state_vars == Function::kAllStateVars);
  CHECK(shared_stores(kept) == 6);  // s[0x0 .. 0x18) in 4-byte words
  // An s[] read the translator cannot serve from the uniform block (a
  // computed address; a store to s[]) keeps the ABI block.
  for (const char* extra : {"long mov b32 $r9 0x2\nshl $a1 $r9 0x2\nld $r3 b32 s[$a1+0x4]\n",
                            "long mov b32 $r9 0x7\nst b16 s[0x2] $r9l\nld $r1 u16 s[0x2]\n"}) {
    INFO(extra);
    CHECK(shared_stores(launch_translation(abi_program(extra), true)) >= 6);
  }
}

TEST_CASE("tesla translate quality: a private-state launch leaves the unlaunched lanes free") {
  // fresh_launch + discard_state without `bar`: no lane's vars are read
  // after the run, so the function carries the unlaunched-lanes contract
  // (no select of the old value at var stores; the x64 tiers copy phis
  // without the launch mask) and says no draw runs it.
  const gpurc::ir::Function f = launch_translation(abi_program(""), true);
  CHECK(f.unlaunched_lanes_free);
  CHECK(f.no_draw_loop);
  size_t entry_masks = 0;
  gpurc::ir::Function lowered = f;
  REQUIRE(gpurc::ir::run_pipeline(lowered, gpurc::ir::PassOptions{}).empty());
  for (const auto& b : lowered.blocks)
    for (auto v : b.insts) entry_masks += lowered.insts[v].op == gpurc::ir::Opcode::EntryMask;
  CHECK(entry_masks <= 1);  // (at most the bound of a masked access; no store's select)
  // The state is read afterwards without discard_state, and a later run of
  // the warp reads it with `bar`: the contract does not hold there.
  CHECK_FALSE(launch_translation(abi_program(""), false).unlaunched_lanes_free);
  CHECK_FALSE(launch_translation(abi_program("bar 0x0 all\n"), true).unlaunched_lanes_free);
}

TEST_CASE("tesla translate quality: an ABI read through a computed s[] address sees the writer's block") {
  // $a1 = 8: s[$a1 + 4] is s[0xc], ctaid.x | ctaid.y << 16, which only the
  // ABI writer (thread 0 of warp 0) stores; both warps of a block read it.
  auto outs = launch_everywhere(abi_program("long mov b32 $r9 0x2\nshl $a1 $r9 0x2\nld $r3 b32 s[$a1+0x4]\n"));
  for (size_t i = 1; i < outs.size(); ++i) CHECK(outs[i] == outs[0]);
  for (unsigned t : {0u, 5u, 39u}) {
    uint32_t w3;
    std::memcpy(&w3, outs[0].data() + t * 32 + 8, 4);
    CHECK(w3 == (2u | 1u << 16));
  }
}

}  // namespace gpurc_test_tesla_translate_quality
