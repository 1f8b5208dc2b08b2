// The draw-loop stub (backend_x64/draw_loop.cpp) of both tiers and MXCSR
// modes, as code: it decodes from its entry to its end (the AVX-512 stub
// too, on hosts that cannot run it: it is assembled, never entered), and
// the pass-through copies of a full warp read and write four vertices per
// pointer step, at one, two and three strides (the three-stride registers
// r14 / rbp; eleventh session: the copies stepped both pointers after every
// vertex before). The copies' results are checked against the interpreter
// by tests/pica200/draw.cpp on the tiers the host runs.
#include <doctest/doctest.h>
#include <Zydis/Zydis.h>

#include <cstddef>
#include <string>

#include "backend_common/exec_memory.h"
#include "backend_x64/emitter.h"
#include "backend_x64/jit.h"
#include "ir/abi.h"
#include "ir/draw_loop_entry.h"

namespace gpurc_test_backend_x64_draw_stub_code {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::x64;

TEST_CASE("x64 jit: the draw-loop stub decodes on both tiers and copies four vertices per step") {
  for (Tier t : {Tier::Avx512, Tier::Avx2})
    for (bool daz : {false, true}) {
      const std::string tier = tier_name(t);
      CAPTURE(tier);
      CAPTURE(daz);
      const std::unique_ptr<backend::ExecMemory> stub = Emitter::build_draw_stub(t, daz);
      REQUIRE(stub);
      ZydisDecoder dec;
      ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
      const uint8_t* p = stub->entry();
      const size_t n = stub->size();
      size_t off = 0, undecodable = 0, three_stride_loads = 0, three_stride_stores = 0, zmm_copies = 0;
      while (off < n) {
        ZydisDecodedInstruction insn;
        ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
        if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, p + off, n - off, &insn, ops))) {
          ++undecodable;
          break;
        }
        if (insn.mnemonic == ZYDIS_MNEMONIC_VMOVUPS) {
          // The memory operand and the vector register (EVEX forms also
          // list the mask register k0 among the visible operands).
          const ZydisDecodedOperand* mem = nullptr;
          ZydisRegister vec = ZYDIS_REGISTER_NONE;
          bool store = false;
          for (unsigned i = 0; i < insn.operand_count_visible; ++i) {
            if (ops[i].type == ZYDIS_OPERAND_TYPE_MEMORY) {
              mem = &ops[i];
              store = i == 0;
            } else if (ops[i].type == ZYDIS_OPERAND_TYPE_REGISTER && !(ops[i].reg.value >= ZYDIS_REGISTER_K0 &&
                                                                       ops[i].reg.value <= ZYDIS_REGISTER_K7)) {
              vec = ops[i].reg.value;
            }
          }
          // vmovups vec, [r8 + r14 (+ 32)] / vmovups [rax + rbp (+ 32)], vec
          if (mem && !store && mem->mem.base == ZYDIS_REGISTER_R8 && mem->mem.index == ZYDIS_REGISTER_R14 &&
              mem->mem.scale == 1)
            ++three_stride_loads;
          if (mem && store && mem->mem.base == ZYDIS_REGISTER_RAX && mem->mem.index == ZYDIS_REGISTER_RBP &&
              mem->mem.scale == 1) {
            ++three_stride_stores;
            if (vec >= ZYDIS_REGISTER_ZMM0 && vec <= ZYDIS_REGISTER_ZMM31) ++zmm_copies;
          }
        }
        off += insn.length;
      }
      CHECK(undecodable == 0);
      // Two copy lists (before and after the code) x four widths (16, 32,
      // 48, 64 bytes); 48 bytes and the ymm form of 64 bytes move two
      // vectors per vertex.
      const size_t per_list = t == Tier::Avx512 ? 1 + 1 + 2 + 1 : 1 + 1 + 2 + 2;
      CHECK(three_stride_loads == 2 * per_list);
      CHECK(three_stride_stores == 2 * per_list);
      // AVX-512: 64-byte copies in one zmm per vertex.
      CHECK(zmm_copies == (t == Tier::Avx512 ? 2u : 0u));
    }
}

// The repeated draw enters the stub ir::kDrawLoopKeptNextEntry bytes on
// (fifteenth session): there its store of DrawLoop::next (a lea of the
// return point and a store through rsi, the DrawLoop*) must just have ended,
// on both tiers and in both MXCSR modes.
TEST_CASE("x64 jit: the draw-loop stub's second entry follows its DrawLoop::next store") {
  for (Tier t : {Tier::Avx512, Tier::Avx2})
    for (bool daz : {false, true}) {
      const std::string tier = tier_name(t);
      CAPTURE(tier);
      CAPTURE(daz);
      const std::unique_ptr<backend::ExecMemory> stub = Emitter::build_draw_stub(t, daz);
      REQUIRE(stub);
      ZydisDecoder dec;
      ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
      ZydisDecodedInstruction lea, store;
      ZydisDecodedOperand lea_ops[ZYDIS_MAX_OPERAND_COUNT], store_ops[ZYDIS_MAX_OPERAND_COUNT];
      const uint8_t* p = stub->entry();
      REQUIRE(ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, p, stub->size(), &lea, lea_ops)));
      REQUIRE(ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, p + lea.length, stub->size() - lea.length, &store, store_ops)));
      CHECK(lea.mnemonic == ZYDIS_MNEMONIC_LEA);
      CHECK(lea_ops[0].reg.value == ZYDIS_REGISTER_RAX);
      CHECK(lea_ops[1].mem.base == ZYDIS_REGISTER_RIP);
      CHECK(store.mnemonic == ZYDIS_MNEMONIC_MOV);
      CHECK(store_ops[0].type == ZYDIS_OPERAND_TYPE_MEMORY);
      CHECK(store_ops[0].mem.base == ZYDIS_REGISTER_RSI);
      CHECK(store_ops[0].mem.disp.value == int64_t(offsetof(ir::DrawLoop, next)));
      CHECK(store_ops[1].reg.value == ZYDIS_REGISTER_RAX);
      CHECK(size_t(lea.length) + store.length == ir::kDrawLoopKeptNextEntry);
    }
}

}  // namespace gpurc_test_backend_x64_draw_stub_code
