// The entry block's constants and in-range load_uniforms that other
// segments read (plan_.escapes): the x64 tiers fill their frame slots once
// per run in the prologue (Emitter::emit_const_slots, sixteenth session)
// instead of storing them in every strip of the defining segment. Each
// case here reads such constants after a memory op (a new strip segment),
// in another block, through a phi and after a barrier (a resumed run
// enters past block 0), with i32, i1,
// f32, i64 and f64 constants and i32 / u16 uniforms (and a run without the
// uniform block: the same fault), on a frame the harness fills with
// garbage: a slot the prologue missed shows up as a wrong result.
// The listing test checks that the strip loop no longer stores them. Last,
// a zext to 32 bits whose operand dies there takes the operand's register
// (lower_int.cpp, as an in-place bitcast).
#include <doctest/doctest.h>

#include <random>
#include <regex>
#include <string>

#include "../backend/compare.h"
#include "backend_x64/jit.h"
#include "tier_compile.h"

namespace gpurc_test_backend_x64_const_slots {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::backend::test;
using ir::Opcode;
using ir::Type;

namespace {

constexpr uint64_t kSlotsMemBase = 0x10000;  // TestMemory's base
constexpr size_t kSlotsMemBytes = 1024;

enum class Tail { Branch, Barrier };

// vars: x (i32, a byte offset into the memory), mask (i1), c (i1), out0
// (i32), out1 (i64), out2 (i32), out3 (f32), out4 (f64), out5 (i32).
// entry: t = x + K1 (K1 also read after the load); v = load [x] under mask;
// out0 = v + K1, out1 = zext v + K2, out3 = bitcast v * K4 (f32), out4 = K5
// (f64, read only by the store_var after the load), out5 = select K6 (i1),
// v, t; then either cond_br c (then: r = v ^ K3; join: out2 = phi [K3, r])
// or a barrier to a block that writes out2 = v ^ K3.
ir::Function slots_function(Tail tail) {
  ir::Function f;
  for (auto [name, t] : {std::pair{"x", Type::I32}, {"mask", Type::I1}, {"c", Type::I1}, {"out0", Type::I32},
                         {"out1", Type::I64}, {"out2", Type::I32}, {"out3", Type::F32}, {"out4", Type::F64},
                         {"out5", Type::I32}})
    f.add_var(name, t);
  const ir::BlockId entry = f.add_block("entry");
  const ir::BlockId then = f.add_block("then");
  const ir::BlockId join = f.add_block("join");
  ir::Builder b(f);
  b.set_block(entry);
  auto var = [&](uint32_t i) { return b.emit(Opcode::LoadVar, f.vars[i].type, {}, 0, 0, i); };
  auto set = [&](uint32_t i, ir::ValueId v) { b.emit(Opcode::StoreVar, Type::Void, {v}, 0, 0, i); };
  const auto k1 = b.i32(0x12345678), k2 = b.i64(0x1122334455667788ull), k3 = b.i32(0xa5a50f0f);
  const auto k4 = b.f32(1.5f), k5 = b.f64_bits(0x400921fb54442d18ull), k6 = b.i1(true);
  f.uniform_bytes = 8;
  auto u = b.load_uniform(Type::I32, 4);                      // read here and after the load
  auto h = b.zext(Type::I32, b.load_uniform(Type::I16, 2));  // read after the load only
  auto x = var(0);
  auto t = b.iadd(b.iadd(x, k1), u);
  auto addr = b.iadd(b.zext(Type::I64, x), b.i64(kSlotsMemBase));
  auto v = b.load(Type::I32, ir::Space::Global, ir::AddrClass::Random, addr, var(1));
  set(3, b.iadd(v, k1));
  set(4, b.iadd(b.zext(Type::I64, v), k2));
  set(6, b.fmul(b.emit(Opcode::Bitcast, Type::F32, {v}), k4));
  set(7, k5);
  set(8, b.select(k6, b.iadd(v, b.xor_(u, h)), t));
  if (tail == Tail::Branch) {
    b.cond_br(var(2), then, join);
    b.set_block(then);
    auto r = b.xor_(v, k3);
    b.br(join);
    b.set_block(join);
    auto p = b.emit(Opcode::Phi, Type::I32, {k3, r});
    set(5, p);
    b.ret();
  } else {
    b.barrier(then);
    b.set_block(then);
    set(5, b.xor_(v, k3));
    b.br(join);
    b.set_block(join);
    b.ret();
  }
  f.compute_preds();
  REQUIRE(ir::verify(f) == "");
  return f;
}

}  // namespace

TEST_CASE("x64 constant slots: escaping entry constants read after a load, in other blocks, through a phi, after a barrier") {
  std::mt19937_64 rng(161);
  for (Tail tail : {Tail::Branch, Tail::Barrier}) {
    const ir::Function f = slots_function(tail);
    for (int k = 0; k < 12; ++k) {
      RunSpec s;
      s.vars.resize(f.vars_bytes());
      fill_random(s.vars, rng);
      s.memory = true;
      s.memory_bytes = kSlotsMemBytes;
      s.memory_init.resize(kSlotsMemBytes);
      fill_random(s.memory_init, rng);
      s.window = true;
      if (k != 5) {  // k 5: no uniform block, the first load_uniform faults
        s.uniforms.resize(8);
        fill_random(s.uniforms, rng);
      }
      s.entry_mask = k % 3 == 0 ? ~0u : k % 3 == 1 ? uint32_t(rng()) | 1u : 0xffff00u;
      const unsigned start = unsigned(rng() % 128) * 4;
      const uint32_t c = uint32_t(k / 2 % 2);  // branch conditions are uniform (the IR's rule)
      for (unsigned l = 0; l < 32; ++l) {
        set_lane(s.vars, f, 0, l, k % 4 == 3 ? uint32_t(rng() % (kSlotsMemBytes / 4)) * 4 : start + 4 * l);
        set_lane(s.vars, f, 1, l, k % 5 == 4 ? uint32_t(rng() % 2) : 1u);
        set_lane(s.vars, f, 2, l, c);
      }
      check_all_tiers(f, s, std::string(tail == Tail::Branch ? "branch" : "barrier") + " k " + std::to_string(k));
    }
  }
}

TEST_CASE("x64 constant slots: the prologue fills them, the strips do not store them") {
  // The wide constants are `mov rax, imm64` where they are made: in the
  // prologue, before the first strip loop (`xor r14d, r14d`), followed by the
  // stores of their slot (`[r12+0x...]`); no strip store (`[r12+r14*1+...]`)
  // writes that slot. Before, they were made and stored in the strip loop.
  const ir::Function f = slots_function(Tail::Branch);
  for (x64::Tier t : {x64::Tier::Avx512, x64::Tier::Avx2}) {
    CAPTURE(int(t));
    auto cf = gpurc::test::compile_for_tier(f, t);
    const std::string lst = cf->disassemble();
    const size_t first_strip = lst.find("xor r14d, r14d");
    REQUIRE(first_strip != std::string::npos);
    for (const char* imm : {"0x1122334455667788", "0x400921FB54442D18"}) {
      CAPTURE(imm);
      const size_t at = lst.find(std::string("mov rax, ") + imm);
      REQUIRE(at != std::string::npos);
      CHECK(at < first_strip);
      CHECK(lst.find(std::string("mov rax, ") + imm, at + 1) == std::string::npos);  // made once
      static const std::regex slot_store(R"(\[r12\+(0x[0-9A-F]+)\], [yz]mm0)");
      std::smatch m;
      const std::string after = lst.substr(at, 400);
      REQUIRE(std::regex_search(after, m, slot_store));
      const std::string strip_form = "[r12+r14*1+" + m[1].str() + "]";
      CHECK(lst.find(strip_form) == std::string::npos);
    }
  }
}

TEST_CASE("x64 zext to 32 bits of an operand read last there takes its register") {
  // out = zext(u16 uniform) * x + zext(i16 var), the zexts' operands dying at
  // them: no register copy (`vmovdqa`) in the strip, where one was made per
  // strip before (Tesla's ntid); the results as the interpreter's, with the
  // i16 var's lanes holding garbage in their upper bits.
  ir::Function f;
  f.add_var("x", Type::I32);
  f.add_var("h", Type::I16);
  f.add_var("out", Type::I32);
  f.uniform_bytes = 4;
  f.add_block("entry");
  ir::Builder b(f);
  auto x = b.emit(Opcode::LoadVar, Type::I32, {}, 0, 0, 0);
  auto h = b.emit(Opcode::LoadVar, Type::I16, {}, 0, 0, 1);
  auto n = b.zext(Type::I32, b.load_uniform(Type::I16, 2));
  b.emit(Opcode::StoreVar, Type::Void, {b.iadd(b.imul(n, x), b.zext(Type::I32, h))}, 0, 0, 2);
  b.ret();
  f.compute_preds();
  REQUIRE(ir::verify(f) == "");
  for (x64::Tier t : {x64::Tier::Avx512, x64::Tier::Avx2}) {
    CAPTURE(int(t));
    const std::string lst = gpurc::test::compile_for_tier(f, t)->disassemble();
    CHECK(lst.find("vmovdqa") == std::string::npos);
  }
  std::mt19937_64 rng(162);
  for (int k = 0; k < 6; ++k) {
    RunSpec s;
    s.vars.resize(f.vars_bytes());
    fill_random(s.vars, rng);
    if (k != 3) {
      s.uniforms.resize(4);
      fill_random(s.uniforms, rng);
    }
    s.entry_mask = k % 2 ? ~0u : uint32_t(rng()) | 1u;
    check_all_tiers(f, s, "zext k " + std::to_string(k));
  }
}

namespace {

// Narrow uniforms read only in their own segment (before a memory op): out =
// zext(u16 @2) * x + zext(u8 @5) + (i1 @6 ? 7 : 3) + load [x]. `first` puts
// the u16 load first in the block (its r15 test is the segment's hoisted
// test, its fault the run's without a uniform block); else an i32 load at
// @8 comes first.
ir::Function narrow_uniform_function(bool first) {
  ir::Function f;
  f.add_var("x", Type::I32);
  f.add_var("out", Type::I32);
  f.uniform_bytes = 12;
  f.add_block("entry");
  ir::Builder b(f);
  auto x = b.emit(Opcode::LoadVar, Type::I32, {}, 0, 0, 0);
  ir::ValueId w = ir::kNoValue;
  if (!first) w = b.load_uniform(Type::I32, 8);
  auto n = b.zext(Type::I32, b.load_uniform(Type::I16, 2));
  auto m = b.zext(Type::I32, b.load_uniform(Type::I8, 5));
  auto c = b.select(b.load_uniform(Type::I1, 6), b.i32(7), b.i32(3));
  auto t = b.iadd(b.iadd(b.imul(n, x), m), c);
  if (w != ir::kNoValue) t = b.xor_(t, w);
  auto addr = b.iadd(b.zext(Type::I64, b.and_(x, b.i32(0xfc))), b.i64(kSlotsMemBase));
  auto v = b.load(Type::I32, ir::Space::Global, ir::AddrClass::Random, addr, b.i1(true));
  b.emit(Opcode::StoreVar, Type::Void, {b.iadd(v, t)}, 0, 0, 1);
  b.ret();
  f.compute_preds();
  REQUIRE(ir::verify(f) == "");
  return f;
}

}  // namespace

TEST_CASE("x64 constant slots: narrow uniforms of the entry block filled once, their strips load nothing") {
  for (bool first : {true, false}) {
    CAPTURE(first);
    const ir::Function f = narrow_uniform_function(first);
    for (x64::Tier t : {x64::Tier::Avx512, x64::Tier::Avx2}) {
      CAPTURE(int(t));
      const std::string lst = gpurc::test::compile_for_tier(f, t)->disassemble();
      const size_t first_strip = lst.find("xor r14d, r14d");
      REQUIRE(first_strip != std::string::npos);
      for (const char* load : {"movzx eax, word ptr [r15+0x02]", "movzx eax, byte ptr [r15+0x05]",
                               "movzx eax, byte ptr [r15+0x06]"}) {
        CAPTURE(load);
        const size_t at = lst.find(load);
        REQUIRE(at != std::string::npos);
        CHECK(at < first_strip);                                 // the prologue's fill
        CHECK(lst.find(load, at + 1) == std::string::npos);      // and no strip's load
      }
    }
    std::mt19937_64 rng(first ? 163 : 164);
    for (int k = 0; k < 8; ++k) {
      RunSpec s;
      s.vars.resize(f.vars_bytes());
      fill_random(s.vars, rng);
      s.memory = true;
      s.memory_bytes = kSlotsMemBytes;
      s.memory_init.resize(kSlotsMemBytes);
      fill_random(s.memory_init, rng);
      s.window = true;
      if (k != 3) {  // k 3: no uniform block, the first load_uniform faults
        s.uniforms.resize(12);
        fill_random(s.uniforms, rng);
        if (k == 5) s.uniforms[6] = 0;  // the i1's false side
      }
      s.entry_mask = k % 2 ? ~0u : k == 2 ? 0xf0f0u : uint32_t(rng()) | 1u;
      check_all_tiers(f, s, std::string(first ? "first" : "after i32") + " k " + std::to_string(k));
    }
  }
}

}  // namespace gpurc_test_backend_x64_const_slots
