// Properties of the generated code: the AVX2 tier never uses an EVEX
// (AVX-512) encoding, the AVX-512 tier does, disassembly covers the code,
// perf map lines are written, and bad input is rejected with an error.
#include <doctest/doctest.h>
#include <Zydis/Zydis.h>
#include <unistd.h>
#include <xmmintrin.h>

#include <algorithm>
#include <fstream>

#include "../backend/harness.h"
#include "../backend/op_cases.h"
#include "backend_x64/jit.h"
#include "ir/scalar.h"

namespace gpurc_test_backend_x64_codegen {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::x64;
using namespace gpurc::backend::test;
using ir::Opcode;
using ir::Type;

namespace {

// The x64 tiers of this host; never empty (an x86-64 host without AVX2 has
// nothing these tests can check: a failure, not a pass of zero checks).
std::vector<Tier> host_tiers() {
  std::vector<Tier> t;
  for (Tier x : {Tier::Avx512, Tier::Avx2})
    if (host_supports(x)) t.push_back(x);
  REQUIRE_MESSAGE(!t.empty(), "this x86-64 host has neither AVX-512 nor AVX2");
  return t;
}

// One function holding every per-lane op configuration of a type family
// (each result stored to its own var), so one compile covers every lowering.
ir::Function many_ops_function(bool floats) {
  ir::Function f;
  f.add_block("entry");
  ir::Builder b(f);
  for (const OpCase& c : all_op_cases(true)) {
    bool is_f = ir::is_float(c.type) || (!c.args.empty() && ir::is_float(c.args[0]));
    if (is_f != floats) continue;
    std::vector<ir::ValueId> args;
    for (Type t : c.args) {
      uint32_t var = f.add_var("in", t);
      args.push_back(b.emit(Opcode::LoadVar, t, {}, 0, 0, var));
    }
    ir::ValueId v = append_op(f, c, args);
    uint32_t out = f.add_var("out", c.type);
    b.emit(Opcode::StoreVar, Type::Void, {v}, 0, 0, out);
  }
  b.ret();
  return f;
}

struct EncodingCount {
  size_t evex = 0, total = 0, undecodable = 0;
};

EncodingCount count_encodings(const CompiledFunction& cf) {
  EncodingCount n;
  ZydisDecoder dec;
  ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
  const uint8_t* p = cf.code();
  size_t off = 0;
  // The constant pool follows the code after a 64-byte aligned label; stop at
  // the final ret.
  while (off < cf.code_bytes()) {
    ZydisDecodedInstruction insn;
    ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
    if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, p + off, cf.code_bytes() - off, &insn, ops))) {
      ++n.undecodable;
      break;
    }
    ++n.total;
    if (insn.encoding == ZYDIS_INSTRUCTION_ENCODING_EVEX) ++n.evex;
    off += insn.length;
    if (insn.mnemonic == ZYDIS_MNEMONIC_RET) break;
  }
  return n;
}

}  // namespace

TEST_CASE("x64 jit: the AVX2 tier emits no EVEX instruction; the AVX-512 tier does") {
  for (bool floats : {false, true}) {
    ir::Function f = many_ops_function(floats);
    for (Tier t : host_tiers()) {
      std::string err;
      JitOptions o;
      o.tier = t;
      auto cf = compile(f, o, &err);
      REQUIRE_MESSAGE(cf, err);
      EncodingCount n = count_encodings(*cf);
      CHECK(n.undecodable == 0);
      CHECK(n.total > 1000);
      if (t == Tier::Avx2) CHECK(n.evex == 0);
      else CHECK(n.evex > 100);
      std::string text = cf->disassemble();
      CHECK(text.find("ret") != std::string::npos);
      CHECK(text.find(t == Tier::Avx512 ? "zmm" : "ymm") != std::string::npos);
      if (t == Tier::Avx2) CHECK(text.find("zmm") == std::string::npos);
    }
  }
}

TEST_CASE("x64 jit: var_read_ranges lists exactly the slots load_var reads, merged") {
  auto tiers = host_tiers();
  REQUIRE(!tiers.empty());
  ir::Function f;
  uint32_t a = f.add_var("a", Type::I32);  // stored only
  uint32_t w = f.add_var("w", Type::I64);  // read: bytes 128..384
  uint32_t c = f.add_var("c", Type::I32);  // read: 384..512, merged with w
  f.add_var("d", Type::I32);               // untouched
  uint32_t e = f.add_var("e", Type::I32);  // read: 640..768
  f.add_block("entry");
  ir::Builder b(f);
  ir::ValueId x = b.emit(Opcode::LoadVar, Type::I32, {}, 0, 0, c);
  b.emit(Opcode::LoadVar, Type::I64, {}, 0, 0, w);
  ir::ValueId y = b.emit(Opcode::LoadVar, Type::I32, {}, 0, 0, e);
  b.emit(Opcode::StoreVar, Type::Void, {b.binary(Opcode::IAdd, x, y)}, 0, 0, a);
  b.ret();
  JitOptions o;
  o.tier = tiers[0];
  std::string err;
  auto cf = compile(f, o, &err);
  REQUIRE_MESSAGE(cf, err);
  std::vector<std::pair<uint32_t, uint32_t>> r;
  REQUIRE(cf->var_read_ranges(r));
  using R = std::vector<std::pair<uint32_t, uint32_t>>;
  CHECK(r == R{{f.var_offset(w), f.var_offset(c) + 128}, {f.var_offset(e), f.var_offset(e) + 128}});
  CHECK(f.var_offset(w) == 128);
  CHECK(f.var_offsets() == std::vector<uint32_t>{0, 128, 384, 512, 640, 768});
}

TEST_CASE("x64 jit: perf map lines name the compiled code") {
  auto tiers = host_tiers();
  REQUIRE(!tiers.empty());
  ir::Function f;
  f.add_block("entry");
  ir::Builder b(f);
  b.ret();
  JitOptions o;
  o.tier = tiers[0];
  o.perf_map = true;
  o.symbol = "gpurc_test_symbol_" + std::to_string(::getpid());
  std::string err;
  auto cf = compile(f, o, &err);
  REQUIRE_MESSAGE(cf, err);
  std::ifstream in("/tmp/perf-" + std::to_string(::getpid()) + ".map");
  std::string line, found;
  while (std::getline(in, line))
    if (line.find(o.symbol) != std::string::npos) found = line;
  char want[64];
  std::snprintf(want, sizeof want, "%lx %zx ", (unsigned long)(uintptr_t)cf->code(), cf->code_bytes());
  CHECK(found == std::string(want) + o.symbol);
}

TEST_CASE("x64 jit: unsupported input is a compile error naming the op, not a crash") {
  for (Tier t : host_tiers()) {
    JitOptions o;
    o.tier = t;
    std::string err;
    {  // pre-SSA IR
      ir::Function f;
      f.add_var("x", Type::I32);
      f.add_block("entry");
      ir::Builder b(f);
      b.set_var(0, b.get_var(0));
      b.ret();
      CHECK(compile(f, o, &err) == nullptr);
      CHECK(err.find("get_var") != std::string::npos);
    }
    {  // a transcendental variant eval_lane does not implement
      ir::Function f;
      f.add_var("x", Type::F32);
      f.add_block("entry");
      ir::Builder b(f);
      auto x = b.emit(Opcode::LoadVar, Type::F32, {}, 0, 0, 0);
      auto y = b.emit(Opcode::FSinStep, Type::F32, {x, x}, uint8_t(ir::Transc::Ieee));
      b.emit(Opcode::StoreVar, Type::Void, {y}, 0, 0, 0);
      b.ret();
      err.clear();
      CHECK(compile(f, o, &err) == nullptr);
      CHECK(err.find("fsin_step") != std::string::npos);
    }
    {  // a block without terminator, an out-of-range operand
      ir::Function f;
      f.add_block("entry");
      ir::Builder b(f);
      b.i32(1);
      err.clear();
      CHECK(compile(f, o, &err) == nullptr);
      CHECK(!err.empty());
      f.insts[0].args.push_back(12345);
      err.clear();
      CHECK(compile(f, o, &err) == nullptr);
    }
  }
}

TEST_CASE("x64 jit: results do not depend on the caller's MXCSR, which is preserved") {
  ir::Function f;
  f.add_var("a", Type::F32);
  f.add_var("b", Type::F32);
  f.add_block("entry");
  ir::Builder b(f);
  auto x = b.emit(Opcode::LoadVar, Type::F32, {}, 0, 0, 0);
  auto y = b.emit(Opcode::LoadVar, Type::F32, {}, 0, 0, 1);
  b.emit(Opcode::StoreVar, Type::Void, {b.binary(Opcode::FAdd, x, x)}, 0, 0, 0);
  b.emit(Opcode::StoreVar, Type::Void, {b.binary(Opcode::FAdd, y, b.f32_bits(0x33C00000u))}, 0, 0, 1);
  b.ret();
  for (Tier t : host_tiers()) {
    JitOptions o;
    o.tier = t;
    std::string err;
    auto cf = compile(f, o, &err);
    REQUIRE_MESSAGE(cf, err);
    std::vector<uint8_t> vars(f.vars_bytes());
    for (unsigned l = 0; l < 32; ++l) {
      set_lane(vars, f, 0, l, 1);            // smallest subnormal
      set_lane(vars, f, 1, l, 0x3F800000u);  // 1.0, plus 0.75 ulp below
    }
    unsigned old = _mm_getcsr();
    unsigned odd = (old & ~0x6000u) | 0x8040u | 0x6000u;  // FTZ, DAZ, round toward zero
    _mm_setcsr(odd);
    run_to_end(*cf, f, vars, {}, ~0u);
    unsigned after = _mm_getcsr();
    _mm_setcsr(old);
    CHECK(after == odd);
    CHECK(get_lane(vars, f, 0, 5) == 2u);            // no DAZ/FTZ: subnormal + subnormal
    CHECK(get_lane(vars, f, 1, 3) == 0x3F800001u);   // nearest, not toward zero
  }
}

// Compiles f for tier t (the test fails if it cannot).
static std::unique_ptr<CompiledFunction> compile_for(const ir::Function& f, Tier t) {
  JitOptions o;
  o.tier = t;
  std::string err;
  auto cf = compile(f, o, &err);
  REQUIRE_MESSAGE(cf, err);
  return cf;
}

TEST_CASE("x64 jit: 64-bit integer ops, i32 bfe, i32 itof and ballot/any/all compile without helpers on both tiers") {
  using O = Opcode;
  const O native64[] = {O::IAdd, O::ISub, O::IMul, O::And, O::Or, O::Xor, O::IMin, O::IMax, O::IMad, O::IAddC,
                        O::INeg, O::Not, O::IAbs, O::Shl, O::LShr, O::AShr, O::Select, O::ICmp, O::Zext, O::Sext,
                        O::Trunc, O::IMulWide, O::Const, O::Bitcast};
  size_t checked = 0;
  for (const OpCase& c : all_op_cases(true)) {
    bool i64 = c.type == Type::I64 || (!c.args.empty() && c.args[0] == Type::I64);
    bool ok64 = i64 && std::find(std::begin(native64), std::end(native64), c.op) != std::end(native64);
    bool bfe32 = c.op == O::BfExtract && c.type == Type::I32;
    bool u32tof = c.op == O::IToF && c.type == Type::F32 && c.args[0] == Type::I32;
    if (!ok64 && !bfe32 && !u32tof) continue;
    ir::Function f;
    build_op_function(c, f);
    for (Tier t : host_tiers()) {
      auto cf = compile_for(f, t);
      CHECK_MESSAGE(cf->lane_helper_ops() == 0, describe(c) << " on " << tier_name(t));
      ++checked;
    }
  }
  CHECK(checked > 60);
  for (O op : {O::Ballot, O::Any, O::All})
    for (unsigned width : {1u, 2u, 4u, 8u, 16u, 32u}) {
      ir::Function f;
      f.add_block("entry");
      ir::Builder b(f);
      auto p = b.emit(Opcode::LoadVar, Type::I1, {}, 0, 0, f.add_var("p", Type::I1));
      auto m = b.emit(Opcode::LoadVar, Type::I1, {}, 0, 0, f.add_var("m", Type::I1));
      Type rt = op == O::Ballot ? Type::I32 : Type::I1;
      auto r = b.emit(op, rt, {p, m}, 0, 0, ir::cluster_imm(width));
      b.emit(Opcode::StoreVar, Type::Void, {r}, 0, 0, f.add_var("out", rt));
      b.ret();
      for (Tier t : host_tiers()) {
        auto cf = compile_for(f, t);
        CHECK_MESSAGE(cf->warp_helper_ops() == 0, ir::op_name(op) << " width " << width);
        CHECK(cf->lane_helper_ops() == 0);
      }
    }
}

TEST_CASE("x64 jit: the AVX2 tier's load/store fast path and votes use no EVEX instruction") {
  if (!host_supports(Tier::Avx2)) return;
  ir::Function f;
  f.add_block("entry");
  ir::Builder b(f);
  auto a32 = b.emit(Opcode::LoadVar, Type::I32, {}, 0, 0, f.add_var("a", Type::I32));
  auto a64 = b.emit(Opcode::LoadVar, Type::I64, {}, 0, 0, f.add_var("a64", Type::I64));
  auto m = b.emit(Opcode::LoadVar, Type::I1, {}, 0, 0, f.add_var("m", Type::I1));
  auto x = b.load(Type::I32, ir::Space::Global, ir::AddrClass::Random, a32, m);
  auto y = b.load(Type::I64, ir::Space::Shared, ir::AddrClass::Random, a64, m);
  b.store(ir::Space::Global, ir::AddrClass::Random, a64, x, m);
  b.store(ir::Space::Shared, ir::AddrClass::Random, a32, y, m);
  auto any = b.emit(Opcode::Any, Type::I1, {m, m});
  auto bal = b.emit(Opcode::Ballot, Type::I32, {any, m});
  b.emit(Opcode::StoreVar, Type::Void, {bal}, 0, 0, f.add_var("out", Type::I32));
  // Votes over 4-lane clusters: per-lane shifts of the bit set.
  auto all4 = b.emit(Opcode::All, Type::I1, {m, any}, 0, 0, 4);
  auto bal4 = b.emit(Opcode::Ballot, Type::I32, {all4, m}, 0, 0, 4);
  b.emit(Opcode::StoreVar, Type::Void, {bal4}, 0, 0, f.add_var("out4", Type::I32));
  b.ret();
  auto cf = compile_for(f, Tier::Avx2);
  EncodingCount n = count_encodings(*cf);
  CHECK(n.undecodable == 0);
  CHECK(n.total > 50);
  CHECK(n.evex == 0);
}

}  // namespace gpurc_test_backend_x64_codegen
