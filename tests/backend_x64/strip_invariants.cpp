// Strip invariants and prefilled slots (backend_x64/emitter.cpp, twelfth
// session): a looped strip segment broadcasts the constants and in-range
// load_uniforms its ops read from registers once before its strips (pinned
// registers, broadcast again after a helper call clobbers them), and the
// entry block's constants and 4-byte load_uniforms that other segments read
// get their slots written once per call in the prologue instead of in every
// strip. Checked in the listings of both tiers (AVX-512 through
// listing_only) and against the IR interpreter: with and without the
// uniform block (the load_uniform's fault), both ways out of the entry
// block, a helper call inside the looped segment, random entry masks, and
// a frame full of garbage (no slot may be read before it is written).
#include <doctest/doctest.h>

#include <cstring>
#include <random>
#include <string>

#include "../backend/compare.h"
#include "backend_x64/jit.h"
#include "tests/backend_x64/tier_compile.h"

namespace gpurc_test_backend_x64_strip_invariants {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::backend::test;
using ir::Opcode;
using ir::Type;

namespace {

// entry: a strip segment of more than kUnrollMaxOps ops (a loop over the
// strips) that loads var x first, then reads uniform u (offset 4) and the
// constants c (from a register: imul) and k (and: the pool) several times,
// a zext of a 16-bit uniform and a float product with a bitcast of u (both
// copies of a leaf, broadcast the leaf's way), with a popcount (a helper on
// both tiers) in the middle when `helper`;
// then a uniform branch on uniform word 0. Both successors read c, u and k
// again (so they escape the segment: prefilled slots).
ir::Function invariant_function(bool helper) {
  ir::Function f;
  f.add_var("x", Type::I32);
  f.add_var("out0", Type::I32);
  f.add_var("out1", Type::I32);
  f.add_var("out2", Type::I32);
  f.add_var("out3", Type::I32);
  f.uniform_bytes = 8;
  const ir::BlockId entry = f.add_block("entry");
  const ir::BlockId b1 = f.add_block("taken");
  const ir::BlockId b2 = f.add_block("other");
  ir::Builder b(f);
  b.set_block(entry);
  auto x = b.emit(Opcode::LoadVar, Type::I32, {}, 0, 0, 0);
  auto p = b.binary(Opcode::IAdd, x, b.i32(5));
  auto u = b.load_uniform(Type::I32, 4);
  auto c = b.i32(0x9e3779b9u);
  auto k = b.i32(0x7f800000u);
  auto t1 = b.binary(Opcode::IMul, p, c);
  auto t2 = b.and_(t1, k);
  auto t3 = b.binary(Opcode::Xor, t2, u);
  auto t4 = b.binary(Opcode::IAdd, t3, u);
  auto t5 = helper ? b.binary(Opcode::IAdd, b.popcount(t4), t4) : t4;
  // A zext of a 16-bit uniform and a bitcast of u: pinned copies of leaves.
  auto h = b.zext(Type::I32, b.load_uniform(Type::I16, 6));
  auto t6 = b.binary(Opcode::IMul, b.binary(Opcode::IAdd, b.binary(Opcode::IAdd, t5, c), h), u);
  b.emit(Opcode::StoreVar, Type::Void, {t6}, 0, 0, 1);
  auto fu = b.bitcast(Type::F32, u);
  auto fm = b.fmul(b.bitcast(Type::F32, t3), fu, ir::ff::FtzIn);
  b.emit(Opcode::StoreVar, Type::Void, {b.bitcast(Type::I32, fm)}, 0, 0, 4);
  auto sel = b.icmp(ir::IntPred::Ne, b.load_uniform(Type::I32, 0), b.i32(0));
  b.cond_br(sel, b1, b2);
  b.set_block(b1);
  b.emit(Opcode::StoreVar, Type::Void, {b.binary(Opcode::IAdd, c, u)}, 0, 0, 2);
  b.emit(Opcode::StoreVar, Type::Void, {b.and_(x, k)}, 0, 0, 3);
  b.ret();
  b.set_block(b2);
  b.emit(Opcode::StoreVar, Type::Void, {b.binary(Opcode::ISub, u, c)}, 0, 0, 2);
  b.emit(Opcode::StoreVar, Type::Void, {b.binary(Opcode::Xor, x, k)}, 0, 0, 3);
  b.ret();
  f.compute_preds();
  REQUIRE(ir::verify(f) == "");
  return f;
}

std::string listing(const ir::Function& f, x64::Tier tier) {
  return test::compile_for_tier(f, tier)->disassemble();
}

// The listing's instruction lines from the first `xor r14d, r14d` (the
// entry segment's strips start there) up to the first line reading a var
// lane by lane ([r13+r14...]): the code before the strip loop's body.
std::string before_first_strip(const std::string& text) {
  const size_t from = text.find("xor r14d, r14d");
  if (from == std::string::npos) return "";
  const size_t to = text.find("[r13+r14", from);
  return text.substr(from, to == std::string::npos ? std::string::npos : to - from);
}

// Stores of a whole slot without the strip offset: `vmovdqu [r12+0x..], ymm0`
// (or [r12])
// (AVX2) or `vmovdqu32 [r12+0x..], zmm0` (AVX-512): the prologue's prefill.
size_t prologue_slot_stores(const std::string& text) {
  size_t n = 0;
  for (size_t p = text.find("[r12"); p != std::string::npos; p = text.find("[r12", p + 1)) {
    if (text.compare(p, 5, "[r12]") != 0 && text.compare(p, 7, "[r12+0x") != 0) continue;  // not [r12+r14...]
    const size_t eol = text.find('\n', p);
    const std::string rest = text.substr(p, eol == std::string::npos ? std::string::npos : eol - p);
    const size_t bol = text.rfind('\n', p);
    const std::string head = text.substr(bol == std::string::npos ? 0 : bol + 1, p - (bol == std::string::npos ? 0 : bol + 1));
    if (head.find("vmovdqu") != std::string::npos && (rest.find("], ymm0") != std::string::npos ||
                                                       rest.find("], zmm0") != std::string::npos))
      ++n;
  }
  return n;
}

}  // namespace

TEST_CASE("x64 strip invariants: a looped segment broadcasts its uniform and constant before its strips") {
  for (bool helper : {false, true}) {
    const ir::Function f = invariant_function(helper);
    for (x64::Tier tier : {x64::Tier::Avx512, x64::Tier::Avx2}) {
      const std::string name = std::string(x64::tier_name(tier)) + (helper ? " with a helper" : "");
      const std::string text = listing(f, tier);
      const std::string head = before_first_strip(text);
      // u (offset 4) and c are in registers before the first strip loads x.
      CHECK_MESSAGE(head.find("[r15+0x04]") != std::string::npos, name);
      // The prologue writes the slots of c, k and u (read by the other
      // blocks): two or four vector stores each.
      const size_t per_slot = tier == x64::Tier::Avx512 ? 2 : 4;
      CHECK_MESSAGE(prologue_slot_stores(text) == 3 * per_slot, name << "\n" << text);
    }
  }
}

TEST_CASE("x64 strip invariants: results and faults as the interpreter's") {
  std::mt19937_64 rng(1201);
  for (bool helper : {false, true}) {
    const ir::Function f = invariant_function(helper);
    for (int k = 0; k < 48; ++k) {
      RunSpec s;
      s.vars.resize(f.vars_bytes());
      fill_random(s.vars, rng);
      if (k % 6 != 5) {  // every sixth run: no uniform block (the fault of the first load_uniform)
        s.uniforms.resize(8);
        fill_random(s.uniforms, rng);
        if (k % 2) std::memset(s.uniforms.data(), 0, 4);  // the other way out of the entry block
      }
      s.entry_mask = k < 12 ? ~0u : uint32_t(rng()) | 1u;
      check_all_tiers(f, s, std::string(helper ? "helper " : "") + "case " + std::to_string(k));
    }
  }
}

}  // namespace gpurc_test_backend_x64_strip_invariants
