// Translation tests: each program runs on the reference interpreter and on
// its translation (IR interpreter, every JIT tier of the host) from the same
// state; the end states (registers, $c, $a, exited, s[], g0[], l[]) must match.
#include "translate_harness.h"

namespace gpurc_test_tesla_translate {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace tesla_tr;

namespace {

// Random edge-valued registers $r0..$r15, random $c, small $a for addressing.
Case random_case(const std::string& src, unsigned threads, uint32_t seed) {
  Case c;
  c.src = src;
  c.threads = threads;
  c.init = [seed](unsigned i, ThreadState& s) {
    std::mt19937 rng(seed * 977 + i);
    for (unsigned r = 0; r < 16; ++r) s.r[r] = edge_value(rng);
    for (unsigned k = 0; k < 4; ++k) s.c[k] = uint8_t(rng() & 15);
    for (unsigned k = 1; k < 5; ++k) s.a[k] = uint16_t((rng() & 7) * 4);
  };
  std::mt19937 rng(seed);
  c.global0.resize(0x200);
  for (auto& b : c.global0) b = uint8_t(rng());
  return c;
}

void check_random(const std::string& src, unsigned rounds = 3) {
  if (light()) rounds = 1;
  for (unsigned s = 1; s <= rounds; ++s) {
    check_case(random_case(src, 32, s));
    check_case(random_case(src, 13 + s, s + 100));  // partial warp
  }
}

}  // namespace

TEST_CASE("tesla translate: integer add family, flags, saturation, 16-bit halves") {
  check_random("add b32 $c0 $r2 $r0 $r1\n"
               "sub b32 $c1 $r3 $r0 $r1\n"
               "add b32 sat $c2 $r4 $r0 $r1\n"
               "addc b32 $c3 $r5 $r0 $r1 $c0\n"
               "long add b16 $r10h $r0l $r1l\n"
               "exit nop\n");
}

TEST_CASE("tesla translate: multiplies, sad, min/max, set, logic, shifts") {
  check_random("mul $c0 $r2 s16 $r0h s16 $r1l\n"
               "long mul $r3 high s24 $r0 $r1\n"
               "long mul $r4 u24 $r0 $r1\n"
               "sad $r7 s32 $r0 $r1 $r1\n"
               "min s32 $r8 $r0 $r1\n"
               "max u32 $r9 $r0 $r1\n"
               "set $c1 $r11 l s32 $r0 $r1\n"
               "set $c2 $r12 ge u32 $r2 $r5\n"
               "xor b32 $r6 not $r0 $r1\n"
               "shl b32 $c3 $r13 $r6 $r7\n"
               "shr s32 $c0 $r14 $r8 $r7\n"
               "shl b32 $r15 $r0 0x2\n"
               "exit nop\n");
}

TEST_CASE("tesla translate: float add/mul/mad, min, slct, flags") {
  check_random("add rn f32 $r2 $r0 $r1\n"
               "add rz f32 $r3 $r0 $r1\n"
               "mul rz f32 $r4 $r0 $r5\n"
               "mul rn f32 $r9 $r10 $r0\n"
               "add f32 $r11 (mul $r12 $r13) $r14\n"
               "min f32 $r6 $r7 $r1\n"
               "slct b32 $r8 $r0 $r1 f32 neg $r5\n"
               "exit nop\n");
}

TEST_CASE("tesla translate: SFU ops share the interpreter's model") {
  check_random("rcp f32 $r2 $r0\n"
               "rsqrt f32 $r3 $r1\n"
               "lg2 f32 $r4 $r5\n"
               "presin f32 $r6 $r0\n"
               "sin f32 $r7 $r6\n"
               "cos f32 $r8 $r6\n"
               "preex2 f32 $r9 $r1\n"
               "ex2 f32 $r10 $r9\n"
               "exit nop\n");
}

TEST_CASE("tesla translate: doubles in four rounding modes") {
  check_random("add rn f64 $r4d $r0d $r2d\n"
               "add rp f64 $r6d $r0d $r2d\n"
               "fma rz f64 $r8d $r0d $r0d $r2d\n"
               "exit nop\n");
}

TEST_CASE("tesla translate: predication, all conditions") {
  std::string src;
  // Every condition (0x00..0x1f minus the undecodable ones), by its envyas name.
  for (const char* cn : {"l", "e", "le", "g", "lg", "ge", "lge", "u", "lu", "eu", "leu", "gu", "lgu", "geu",
                         "o", "c", "a", "s", "ns", "na", "nc", "no"})
    src += std::string("(") + cn + " $c1) add b32 $r2 $r2 $r3\n";
  src += "(never) add b32 $r4 $r4 $r3\n";  // condition 0 prints without a $c register
  src += "exit nop\n";
  check_random(src, 2);
}

TEST_CASE("tesla translate: memory s[] c[] g[] l[] and post-increment") {
  check_random("st b32 s[0x20] $r8\n"
               "st b32 s[$a1++0x4] $r5\n"
               "ld $r7 b32 s[0x20]\n"
               "ld $r1 u16 s[0x2]\n"
               "st b64 l[0x8] $r0d\n"
               "ld b64 $r20d l[0x8]\n"
               "and b32 $r9 $r15 0x1fc\n"
               "ld b32 $r10 g0[$r9]\n"
               "st b32 g0[$r9] $r11\n"
               "mov $r6 $a1\n"
               "exit nop\n");
}

TEST_CASE("tesla translate: atomics and vote") {
  check_random("and b32 $r9 $r15 0xfc\n"
               "ld add u32 $r10 g0[$r9] $r12\n"
               "cas b32 $r13 g0[$r9] $r10 $r12\n"
               "vote any $c1\n"
               "(lg $c0) vote all $c2\n"
               "exit nop\n");
}

TEST_CASE("tesla translate: divergent bra with joinat/join") {
  check_random("joinat #J\n"
               "set $c0 $r4 l u32 $r0 $r1\n"
               "(lg $c0) bra #B\n"
               "mov b32 $r2 $r8\n"
               "bra #J\n"
               "B: mov b32 $r2 $r9\n"
               "J: join add b32 $r3 $r3 $r8\n"
               "exit nop\n");
}

TEST_CASE("tesla translate: loop with prebrk/brk") {
  check_random("and b32 $r1 $r0 0xf\n"
               "mov b32 $r2 0x0\n"
               "mov b32 $r4 0x1\n"
               "breakaddr #OUT\n"
               "L: sub b32 $c0 $r1 $r1 $r4\n"
               "add b32 $r2 $r2 $r3\n"
               "(s $c0) break\n"
               "bra #L\n"
               "OUT: exit nop\n");
}

TEST_CASE("tesla translate: call/ret, limited calls, ret on an empty stack, exit in divergent code") {
  check_random("and b32 $r1 $r0 0x3\n"
               "mov b32 $r7 0x0\n"
               "call #F\n"
               "call lim #F\n"
               "set $c0 $r4 e u32 $r1 $r7\n"
               "exit (lg $c0) nop\n"
               "add b32 $r6 $r6 $r9\n"
               "ret\n"
               "F: add b32 $r5 $r5 $r9\n"
               "ret\n");
}

TEST_CASE("tesla translate: predicated-never join and exit markers still act") {
  check_random("joinat #J\n"
               "(lg $c0) bra #J\n"
               "add b32 $r1 $r1 $r2\n"
               "J: join add b32 $r3 $r3 $r2\n"
               "exit (never) add b32 $r4 $r4 $r2\n"
               "add b32 $r5 $r5 $r2\n");
}

TEST_CASE("tesla translate: barrier across warps") {
  for (unsigned threads : {64u, 40u}) {
    Case c = random_case("st b32 s[$a1+0x40] $r0\n"
                         "bar 0x0 all\n"
                         "ld $r7 b32 s[0x40]\n"
                         "exit nop\n",
                         threads, 7);
    check_case(c);
  }
}

// A thread count that covers the block's warps (rounded up, as the hardware
// counts warps) is the whole block; "inc wait" is the plain form spelled
// out. (Smaller counts and the arrive-only / wait-only forms:
// tests/tesla/barriers.cpp.)
TEST_CASE("tesla translate: bar with the block's thread count (or more) and with inc wait") {
  struct Form {
    const char* bar;
    unsigned threads;
  };
  for (Form fm : {Form{"bar 0x1 0x40", 64}, Form{"bar 0x2 0x28", 40}, Form{"bar inc wait 0x0 0x60", 90},
                  Form{"bar inc wait 0x3 all", 64}, Form{"bar 0x0 0x60", 64}, Form{"bar inc wait 0x0 0xfff", 96}}) {
    INFO(fm.bar);
    Case c = random_case(std::string("st b32 s[$a1+0x40] $r0\n") + fm.bar +
                             "\n"
                             "ld $r7 b32 s[0x40]\n"
                             "exit nop\n",
                         fm.threads, 11);
    check_case(c);
  }
}

TEST_CASE("tesla translate: errors name the instruction and its address") {
  Target t;
  std::string err;
  REQUIRE(parse_target("g200", t, err));
  std::vector<uint32_t> code;
  REQUIRE(assemble("long mov b32 $r1 $r2\nquadon\nexit nop\n", t, code, err));
  TranslateOptions opt;
  opt.target = t;
  gpurc::ir::Function f;
  CHECK_FALSE(translate(code, opt, f, err));
  CHECK(err.find("quadon") != std::string::npos);
  CHECK(err.find("0x2") != std::string::npos);
}

TEST_CASE("tesla translate: launch ABI prologue writes s[0..0x10+params]") {
  Target t;
  std::string err;
  REQUIRE(parse_target("g200", t, err));
  std::vector<uint32_t> code;
  REQUIRE(assemble("ld $r1 u16 s[0x2]\nld $r2 u16 s[0xc]\nld $r3 b32 s[0x10]\nexit nop\n", t, code, err));
  BlockConfig cfg;
  cfg.block[0] = 8;
  cfg.grid[0] = 3;
  cfg.block_idx[0] = 2;
  cfg.smem = 0x40;
  cfg.params = {0x78, 0x56, 0x34, 0x12};
  LaunchMemory m1;
  BlockInterpreter bi(code, t, cfg, &m1);
  REQUIRE(bi.run().ok());
  gpurc::ir::Function f;
  TranslateOptions opt = options_for(cfg, t);
  REQUIRE(translate(code, opt, f, err));
  std::vector<uint8_t> uni = pack_uniforms(cfg);
  REQUIRE(uni.size() == uniform_bytes(opt));
  gpurc::CompiledIr ci;
  REQUIRE(gpurc::compile_ir(f, gpurc::Engine::Interp, {}, ci, err));
  std::vector<uint64_t> vars((ci.vars_bytes + 7) / 8 + 8, 0), frame(ci.exe->frame_bytes() / 8 + 8, 0);
  LaunchMemory m2;
  std::vector<uint8_t> shared(opt.smem, 0);
  std::vector<std::vector<uint8_t>> locals(32);
  TeslaMemory tm(&m2, &shared, &locals);
  for (unsigned l = 0; l < 8; ++l) {
    unsigned tid[3] = {l, 0, 0}, ctaid[2] = {2, 0};
    init_launch_lane(f, reinterpret_cast<uint8_t*>(vars.data()), l, tid, ctaid, 0);
  }
  gpurc::ir::WarpContext ctx;
  ctx.vars = reinterpret_cast<uint8_t*>(vars.data());
  ctx.frame = reinterpret_cast<uint8_t*>(frame.data());
  ctx.uniforms = uni.data();
  ctx.entry_mask = 0xff;
  ctx.memory = &tm;
  REQUIRE(ci.exe->run(ctx) == gpurc::ir::RunStatus::Done);
  for (unsigned l = 0; l < 8; ++l) {
    ThreadState s;
    s.r[0] = l;  // the launch state (read_lane keeps state the code never touches)
    read_lane(f, ctx.vars, l, s);
    CHECK(s.r[0] == bi.thread(l).r[0]);
    CHECK(s.r[1] == bi.thread(l).r[1]);
    CHECK(s.r[2] == bi.thread(l).r[2]);
    CHECK(s.r[3] == bi.thread(l).r[3]);
    CHECK(s.exited);
  }
}

TEST_CASE("tesla translate: cvt integer <-> float, widths, rounding, neg/abs/sat") {
  check_random("cvt rmi s32 $r16 f32 $r1\n"
               "cvt rn f32 $r17 s32 $r8\n"
               "cvt rzi s64 $r18d f64 $r0d\n"
               "cvt rzi u32 $r20 f32 $r1\n"
               "cvt s16 $r21l s32 $r10\n"
               "cvt f32 $r22 f32 $r1\n"
               "cvt rni f32 $r23 f32 $r2\n"
               "cvt sat f32 $r24 f32 $r3\n"
               "cvt neg f32 $r25 f32 $r4\n"
               "cvt abs f32 $r26 f32 $r5\n"
               "cvt rn f16 $r27l f32 $r6\n"
               "cvt f32 $r28 f16 $r7h\n"
               "cvt rn f32 $r29 f64 $r4d\n"
               "cvt f64 $r30d f32 $r9\n"
               "cvt rm f64 $r32d s32 $r11\n"
               "cvt rn f32 $r34 u16 $r8l\n"
               "cvt u8 $r35 s32 $r12\n"
               "cvt neg s32 $r36 s32 $r13\n"
               "cvt abs s32 $r37 s16 $r14h\n"
               "cvt rpi f64 $r38d f64 $r2d\n"
               "cvt rzi s16 $r40l f32 $r15\n"
               "cvt rn f16 $r41l s32 $r3\n"
               "cvt rzi s32 $r42 f64 $r6d\n"
               "cvt rzi u64 $r44d f32 $r10\n"
               "cvt rz f32 $r46 s32 $r0\n"
               "cvt rn f32 $r47 s64 $r4d\n"
               "cvt rz f64 $r48d u64 $r6d\n"
               "cvt rm f32 $r50 u64 $r8d\n"
               "cvt rp f64 $r52d s64 $r10d\n"
               "exit nop\n");
}

// neg/abs of a 64-bit integer source act in infinite precision on the
// interpreter (|INT64_MIN|, -(2^64 - 1)); the translation converts a sign and
// magnitude and mirrors rm/rp for negative results. The random registers are
// edge values, so pairs such as 0x00000000_80000000 (INT64_MIN), all ones and
// zero come up; every mode, both widths, sat and both signednesses.
TEST_CASE("tesla translate: cvt neg/abs of s64/u64 sources to f32/f64 in every mode") {
  check_random("cvt neg rn f32 $r16 s64 $r0d\n"
               "cvt neg rm f32 $r17 s64 $r2d\n"
               "cvt neg rp f32 $r18 s64 $r4d\n"
               "cvt neg rz f32 $r19 s64 $r6d\n"
               "cvt abs rm f32 $r20 s64 $r8d\n"
               "cvt abs rp f64 $r22d s64 $r10d\n"
               "cvt neg abs rm f64 $r24d s64 $r12d\n"
               "cvt neg abs rp f32 $r26 s64 $r14d\n"
               "cvt neg rm f64 $r28d u64 $r0d\n"
               "cvt neg rp f32 $r30 u64 $r2d\n"
               "cvt neg rn f64 $r32d u64 $r4d\n"
               "cvt abs rz f32 $r34 u64 $r6d\n"
               "cvt neg sat rn f32 $r35 u64 $r8d\n"
               "cvt neg sat rm f64 $r36d s64 $r10d\n"
               "cvt abs sat rp f32 $r38 s64 $r12d\n"
               "exit nop\n",
               6);
}

// Random straight-line programs from the encoding tables (every non-control
// row): where the interpreter runs them without a fault and the translator
// accepts them, every engine must reach the same end state; a refusal must
// name an address.
TEST_CASE("tesla translate: random straight-line programs match the interpreter") {
  Target t;
  std::string err;
  REQUIRE(parse_target("g200", t, err));
  std::vector<RowRef> rows;
  for (RowRef r : all_rows(t)) rows.push_back(r);
  std::vector<uint32_t> filler, exit_nop;  // one-word no-op, final exit
  REQUIRE(assemble("mov b32 $r0 $r0\n", t, filler, err));
  REQUIRE(filler.size() == 1);
  REQUIRE(assemble("exit nop\n", t, exit_nop, err));
  std::mt19937_64 rng(12345);
  unsigned programs = light() ? 60 : 600, compared = 0, refused = 0;
  for (unsigned p = 0; p < programs; ++p) {
    std::vector<uint32_t> code;
    for (unsigned k = 0; k < 6; ++k) {
      uint64_t bits = 0;
      unsigned words = 0;
      RowRef r = rows[rng() % rows.size()];
      if (!random_insn(r, t, rng, bits, words)) continue;
      Insn in = decode(reinterpret_cast<const uint32_t*>(&bits), words, 0, t);
      if (in.is_control || in.op == Op::Bar) continue;
      if (words == 2 && code.size() % 2) code.push_back(filler[0]);
      code.push_back(uint32_t(bits));
      if (words == 2) code.push_back(uint32_t(bits >> 32));
    }
    if (code.size() % 2) code.push_back(filler[0]);
    code.insert(code.end(), exit_nop.begin(), exit_nop.end());
    Case c;
    c.threads = 32 - unsigned(p % 3) * 7;
    c.init = [p](unsigned i, ThreadState& s) {
      std::mt19937 r2(p * 31 + i);
      for (unsigned q = 0; q < 128; ++q) s.r[q] = edge_value(r2) & ((q % 4 == 0) ? 0x1fcu : ~0u);
      for (unsigned k = 0; k < 4; ++k) s.c[k] = uint8_t(r2() & 15);
      for (unsigned k = 1; k < 5; ++k) s.a[k] = uint16_t((r2() & 7) * 4);
    };
    c.global0.assign(0x200, 0x5a);
    EndState ref = run_reference(c, code, t);
    if (!ref.ok) {
      if (std::getenv("TESLA_TR_VERBOSE")) MESSAGE("interp: " << ref.error);
      continue;
    }
    EndState got = run_translated(c, code, t, gpurc::Engine::Interp);
    if (!got.ok) {
      INFO(got.error);
      CHECK(got.error.find("at word 0x") != std::string::npos);
      ++refused;
      if (std::getenv("TESLA_TR_VERBOSE")) MESSAGE(got.error);
      continue;
    }
    for (gpurc::Engine eng : gpurc::host_engines()) {
      INFO("program " << p << " engine " << std::string(gpurc::engine_name(eng)));
      std::string listing;
      for (size_t w = 0; w < code.size(); w += decode(code.data(), code.size(), w, t).words)
        listing += format(decode(code.data(), code.size(), w, t)) + "\n";
      INFO(listing);
      EndState e = eng == gpurc::Engine::Interp ? got : run_translated(c, code, t, eng);
      INFO(e.error);
      REQUIRE(e.ok);
      compare_states(c, ref, e);
    }
    ++compared;
  }
  MESSAGE("random programs compared: " << compared << ", refused by translate: " << refused);
  CHECK(compared >= programs / 10);
}

TEST_CASE("tesla translate: guest faults where the interpreter faults") {
  Target t;
  std::string err;
  REQUIRE(parse_target("g200", t, err));
  struct F {
    const char* src;
    FaultKind ref;
    gpurc::ir::FaultKind ir;
    uint64_t code;  // expected trap code (0: any)
  };
  const F cases[] = {
      {"long mov b32 $r1 $r2\nlong trap\n", FaultKind::Trap, gpurc::ir::FaultKind::Trap, uint64_t(kTrapInsn) << 24 | 2},
      {"long mov b32 $r1 $r2\n", FaultKind::OutOfBounds, gpurc::ir::FaultKind::Trap, uint64_t(kTrapPastEnd) << 24 | 2},
      {"long break\nexit nop\n", FaultKind::Stack, gpurc::ir::FaultKind::Trap, uint64_t(kTrapNoBreak) << 24},
      {"long ld $r1 b32 s[0x400]\nexit nop\n", FaultKind::OutOfBounds, gpurc::ir::FaultKind::OutOfBounds, 0},
      {"long ld b32 $r1 l[0x40]\nexit nop\n", FaultKind::OutOfBounds, gpurc::ir::FaultKind::OutOfBounds, 0},
      {"long ld b32 $r1 g0[$r2]\nexit nop\n", FaultKind::OutOfBounds, gpurc::ir::FaultKind::OutOfBounds, 0},
  };
  for (const F& fc : cases) {
    INFO(std::string(fc.src));
    std::vector<uint32_t> code;
    REQUIRE(assemble(fc.src, t, code, err));
    Case c;
    c.threads = 5;
    c.init = [](unsigned i, ThreadState& s) { s.r[2] = 0x1000 + 2 * i; };  // g0[] out of range
    EndState ref = run_reference(c, code, t);
    CHECK(int(ref.ref_fault) == int(fc.ref));
    for (gpurc::Engine eng : gpurc::host_engines()) {
      INFO(std::string(gpurc::engine_name(eng)));
      EndState got = run_translated(c, code, t, eng);
      CHECK_FALSE(got.ok);
      CHECK(int(got.fault) == int(fc.ir));
      if (fc.code) CHECK(got.fault_code == fc.code);
    }
  }
  CHECK(describe_trap(uint64_t(kTrapInsn) << 24 | 0x12) == "trap instruction at word 0x12");
}

TEST_CASE("tesla translate: an undecodable instruction faults only when reached") {
  Target t;
  std::string err;
  REQUIRE(parse_target("g200", t, err));
  std::vector<uint32_t> code;
  REQUIRE(assemble("long set $c0 $r4 e u32 $r1 $r3\nlong (lg $c0) bra #L\nexit nop\nL: exit nop\n", t, code, err));
  // Replace the target of the never-taken branch (L, words 6..7) by a long
  // instruction with an undecodable predicate code (0x14).
  code[6] = 0x00000001u;
  code[7] = 0x00000000u | (0x14u << 7);
  Insn bad = decode(code.data(), code.size(), 6, t);
  REQUIRE(check(bad, 6) != DecodeError::None);
  Case c;
  c.threads = 4;
  c.init = [](unsigned, ThreadState& s) { s.r[1] = 5, s.r[3] = 6; };  // set e gives 0: Z, lg is false
  EndState ref = run_reference(c, code, t);
  REQUIRE(ref.ok);
  for (gpurc::Engine eng : gpurc::host_engines()) {
    EndState got = run_translated(c, code, t, eng);
    CHECK(got.ok);
  }
  c.init = [](unsigned, ThreadState& s) { s.r[1] = 5, s.r[3] = 5; };  // taken: reaches the bad word
  ref = run_reference(c, code, t);
  CHECK(int(ref.ref_fault) == int(FaultKind::Decode));
  for (gpurc::Engine eng : gpurc::host_engines()) {
    EndState got = run_translated(c, code, t, eng);
    CHECK(int(got.fault) == int(gpurc::ir::FaultKind::Trap));
    CHECK(got.fault_code == (uint64_t(kTrapDecode) << 24 | 6));
  }
}

TEST_CASE("tesla translate: Transc::Tesla is the interpreter's SFU model") {
  using gpurc::ir::LaneOp;
  using gpurc::ir::Opcode;
  using gpurc::ir::Type;
  const uint8_t tesla = uint8_t(gpurc::ir::Transc::Tesla);
  LaneOp f64{Opcode::FRcp, Type::F64, Type::F64, tesla, 0, 0};
  CHECK_FALSE(gpurc::ir::lane_op_supported(f64));
  struct M {
    Opcode op;
    Op sfu;
  };
  const M ops[] = {{Opcode::FRcp, Op::Rcp}, {Opcode::FRsqrt, Op::Rsqrt}, {Opcode::FLog2, Op::Lg2},
                   {Opcode::FExp2, Op::Ex2}, {Opcode::FSin, Op::Sin}, {Opcode::FCos, Op::Cos}};
  std::mt19937 rng(3);
  unsigned n = light() ? 200 : 2000;
  for (const M& m : ops) {
    // The flags the translator puts on these ops: Tesla NaNs, FTZ on float inputs only.
    bool float_in = m.op == Opcode::FRcp || m.op == Opcode::FRsqrt || m.op == Opcode::FLog2;
    uint32_t fl = gpurc::ir::with_nan(0, gpurc::ir::NanRule::AllOnes) |
                  (float_in ? gpurc::ir::ff::FtzIn | gpurc::ir::ff::FtzOut : 0);
    LaneOp o{m.op, Type::F32, Type::F32, tesla, fl, 0};
    REQUIRE(gpurc::ir::lane_op_supported(o));
    for (unsigned i = 0; i < n; ++i) {
      uint64_t a = edge_value(rng);
      CHECK(gpurc::ir::eval_lane(o, &a) == sem::sfu(m.sfu, uint32_t(a)));
    }
  }
  LaneOp step{Opcode::FSinStep, Type::F32, Type::F32, tesla, gpurc::ir::with_nan(0, gpurc::ir::NanRule::AllOnes), 0};
  for (unsigned i = 0; i < n; ++i) {
    uint64_t args[2] = {edge_value(rng), 0};
    CHECK(gpurc::ir::eval_lane(step, args) == sem::presin(uint32_t(args[0])));
    args[1] = 0x3f800000u;
    CHECK(gpurc::ir::eval_lane(step, args) == sem::preex2(uint32_t(args[0])));
  }
}

namespace {

uint32_t fbits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// Runs `c` on the interpreter and on every engine, checks `expect` (hand-derived
// values) on each end state and that the engines match the interpreter.
void check_expected(const Case& c, const std::function<void(const EndState&)>& expect) {
  Target t;
  std::string err;
  REQUIRE(parse_target(c.variant, t, err));
  std::vector<uint32_t> code;
  INFO(c.src);
  REQUIRE(assemble(c.src, t, code, err));
  EndState ref = run_reference(c, code, t);
  INFO("reference: " << ref.error);
  REQUIRE(ref.ok);
  expect(ref);
  for (gpurc::Engine eng : gpurc::host_engines()) {
    INFO("engine " << std::string(gpurc::engine_name(eng)));
    EndState got = run_translated(c, code, t, eng);
    INFO(got.error);
    REQUIRE(got.ok);
    expect(got);
    compare_states(c, ref, got);
  }
}

}  // namespace

TEST_CASE("tesla translate: quadop reads lanes of the quad that do not run it") {
  auto init = [](unsigned i, ThreadState& s) {
    s.r[0] = fbits(float(10 * (i + 1)));
    s.r[1] = fbits(1.0f);
    s.r[3] = fbits(float(100 * i + 1));
    s.c[0] = (i & 1) ? 0 : 1;  // "lg $c0" holds in odd lanes only
  };
  SUBCASE("partial warp: lanes 6 and 7 of quad 1 were never launched and read 0") {
    Case c;
    c.threads = 6;
    c.init = init;
    c.src = "quadop f32 add subr sub mov2 $r2 l3 $r0 $r1\n"
            "exit nop\n";
    check_expected(c, [](const EndState& e) {
      CHECK(e.threads[0].r[2] == fbits(40.0f + 1.0f));  // add, lane 3's 40
      CHECK(e.threads[1].r[2] == fbits(1.0f - 40.0f));  // subr
      CHECK(e.threads[2].r[2] == fbits(40.0f - 1.0f));  // sub
      CHECK(e.threads[3].r[2] == fbits(1.0f));          // mov2: own source 3
      CHECK(e.threads[4].r[2] == fbits(0.0f + 1.0f));   // lane 7: never launched
      CHECK(e.threads[5].r[2] == fbits(1.0f - 0.0f));
    });
  }
  SUBCASE("diverged lanes that already exited: their final registers") {
    // The taken side (odd lanes) runs first: it overwrites $r0 and exits;
    // then the even lanes read $r0 of their quad's lane 1 (l1).
    Case c;
    c.threads = 8;
    c.init = init;
    c.src = "long (lg $c0) bra #odd\n"
            "long quadop f32 add add add add $r2 l1 $r0 $r1\n"
            "exit nop\n"
            "odd: long mov b32 $r0 $r3\n"
            "exit nop\n";
    check_expected(c, [](const EndState& e) {
      for (unsigned l = 0; l < 8; l += 2) {
        INFO("lane " << l);
        CHECK(e.threads[l].r[2] == fbits(float(100 * ((l & ~3u) + 1) + 1) + 1.0f));
        CHECK(e.threads[l + 1].r[2] == 0);  // odd lanes did not run quadop
      }
    });
  }
  SUBCASE("diverged lanes still waiting: their registers before the other side runs") {
    // Now the even lanes branch (taken side first) and read l2 (lane 2 of
    // the quad) from even lanes (running it) and ... odd lanes read by l1 hold $r0 as
    // it was: the odd lanes change it only afterwards.
    Case c;
    c.threads = 8;
    c.init = [&](unsigned i, ThreadState& s) {
      init(i, s);
      s.c[0] = (i & 1) ? 1 : 0;  // "lg $c0" holds in even lanes
    };
    c.src = "long (lg $c0) bra #even\n"
            "long mov b32 $r0 $r3\n"
            "exit nop\n"
            "even: long quadop f32 add add add add $r2 l1 $r0 $r1\n"
            "long (lg $c0) quadop f32 sub sub sub sub $r4 l2 $r0 $r1\n"
            "exit nop\n";
    check_expected(c, [](const EndState& e) {
      for (unsigned l = 0; l < 8; l += 2) {
        INFO("lane " << l);
        unsigned q = l & ~3u;
        CHECK(e.threads[l].r[2] == fbits(float(10 * (q + 2)) + 1.0f));
        CHECK(e.threads[l].r[4] == fbits(float(10 * (((l & ~3u) | 2) + 1)) - 1.0f));
        CHECK(e.threads[l + 1].r[0] == fbits(float(100 * (l + 1) + 1)));
      }
    });
  }
}

TEST_CASE("tesla translate: quadop with random operands, predicates and partial warps") {
  check_random("quadop f32 add subr sub mov2 $c0 $r2 l0 $r0 $r1\n"
               "(lg $c1) quadop f32 mov2 add subr sub $r3 dx $r4 $r5\n"
               "quadop f32 sub mov2 add add $c2 $r6 dy $r6 $r7\n"
               "(ge $c3) quadop f32 subr subr mov2 add $r8 l2 $r9 $r8\n"
               "exit nop\n");
}

}  // namespace gpurc_test_tesla_translate
