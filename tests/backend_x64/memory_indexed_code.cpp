// The x64 host code of the indexed memory fast path (backend_x64/memory_fast.cpp;
// its results on every tier: tests/backend/memory_indexed.cpp): dword-index
// gathers on both tiers, and no EVEX instruction in the AVX2 code.
#include <doctest/doctest.h>

#include <Zydis/Zydis.h>

#include "backend_x64/jit.h"
#include "ir/builder.h"

namespace gpurc_test_backend_x64_memory_indexed_code {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using ir::Opcode;
using ir::Type;

TEST_CASE("x64 jit: indexed loads gather with dword indices on both tiers; the AVX2 code has no EVEX instruction") {
  // out = load i32 [(u64 at uniform 0 & ~3) + zext(idx) << 2] under mask
  ir::Function f;
  f.add_var("idx", Type::I32);
  f.add_var("mask", Type::I1);
  f.add_var("out", Type::I32);
  f.uniform_bytes = 16;
  f.add_block("entry");
  ir::Builder b(f);
  auto idx = b.emit(Opcode::LoadVar, Type::I32, {}, 0, 0, 0);
  auto mask = b.emit(Opcode::LoadVar, Type::I1, {}, 0, 0, 1);
  auto base = b.binary(Opcode::And, b.load_uniform(Type::I64, 0), b.emit(Opcode::Const, Type::I64, {}, 0, 0, ~uint64_t(3)));
  auto scaled = b.emit(Opcode::Shl, Type::I64, {b.emit(Opcode::Zext, Type::I64, {idx}), b.i32(2)},
                       uint8_t(ir::ShiftMode::Mask));
  auto out = b.load(Type::I32, ir::Space::Global, ir::AddrClass::Random, b.binary(Opcode::IAdd, base, scaled), mask);
  b.emit(Opcode::StoreVar, Type::Void, {out}, 0, 0, 2);
  b.ret();
  f.compute_preds();
  REQUIRE(ir::verify(f) == "");
  int tiers = 0;
  for (x64::Tier tier : {x64::Tier::Avx512, x64::Tier::Avx2}) {
    if (!x64::host_supports(tier)) continue;
    ++tiers;
    std::string err;
    auto cf = x64::compile(f, x64::JitOptions{tier}, &err);
    REQUIRE_MESSAGE(cf, err);
    std::string text = cf->disassemble();
    // vpgatherdd: dword indices (the general path gathers with qword
    // addresses on AVX-512 and loads lane by lane on AVX2).
    CHECK_MESSAGE(text.find("vpgatherdd") != std::string::npos, x64::tier_name(tier));
    if (tier != x64::Tier::Avx2) continue;
    ZydisDecoder dec;
    ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
    size_t off = 0, evex = 0;
    while (off < cf->code_bytes()) {
      ZydisDecodedInstruction insn;
      ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
      REQUIRE(ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, cf->code() + off, cf->code_bytes() - off, &insn, ops)));
      if (insn.encoding == ZYDIS_INSTRUCTION_ENCODING_EVEX) ++evex;
      off += insn.length;
      if (insn.mnemonic == ZYDIS_MNEMONIC_RET) break;
    }
    CHECK(evex == 0);
  }
  REQUIRE_MESSAGE(tiers > 0, "this x86-64 host has neither AVX-512 nor AVX2");
}

}  // namespace gpurc_test_backend_x64_memory_indexed_code
