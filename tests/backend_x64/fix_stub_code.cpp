// The out-of-line float fixes of sites that need the same code on the same
// registers share one stub (backend_x64/lower_float.cpp, emit_cold_code):
// the code of a function repeating every fix combination calls stubs from
// several sites, on both tiers, and every call lands inside the code on a
// stub that ends in a ret. (tests/backend/float_fix_stubs.cpp checks the
// results against the interpreter.)
#include <doctest/doctest.h>
#include <Zydis/Zydis.h>

#include <map>

#include "../backend/float_fix_functions.h"
#include "backend_x64/jit.h"

namespace gpurc_test_backend_x64_fix_stub_code {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::x64;
using namespace gpurc::backend::test;
// x64's own Tier and JitOptions, not those of ../backend/tiers.h (which the
// same unity batch may include).
using gpurc::x64::JitOptions;
using gpurc::x64::Tier;

TEST_CASE("x64 jit: float fixes of equal kind and registers share stubs on both tiers") {
  for (bool daz : {false, true}) {
    ir::Function f = float_fix_function(daz);
    REQUIRE(ir::verify(f) == "");
    int tiers = 0;
    for (Tier t : {Tier::Avx512, Tier::Avx2}) {
      if (!host_supports(t)) continue;
      ++tiers;
      std::string err;
      JitOptions o;
      o.tier = t;
      auto cf = compile(f, o, &err);
      REQUIRE_MESSAGE(cf, err);
      ZydisDecoder dec;
      ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
      const uint8_t* p = cf->code();
      const size_t n = cf->code_bytes();
      std::map<size_t, int> calls;  // direct call target (offset) -> sites
      std::map<size_t, ZydisMnemonic> at;
      size_t off = 0, undecodable = 0;
      while (off < n) {
        ZydisDecodedInstruction insn;
        ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
        if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, p + off, n - off, &insn, ops))) {
          ++undecodable;
          break;
        }
        at[off] = insn.mnemonic;
        if (insn.mnemonic == ZYDIS_MNEMONIC_CALL && ops[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE &&
            ops[0].imm.is_relative) {
          const int64_t target = int64_t(off + insn.length) + ops[0].imm.value.s;
          REQUIRE(target >= 0);
          REQUIRE(size_t(target) < n);
          ++calls[size_t(target)];
        }
        off += insn.length;
      }
      CAPTURE(tier_name(t));
      CAPTURE(daz);
      CHECK(undecodable == 0);
      int shared = 0;
      for (auto [target, sites] : calls) {
        CHECK(sites >= 2);  // a fix of its own is emitted in place, not as a stub
        CHECK(at.count(target) == 1);  // the target is an instruction boundary
        // the stub ends in a ret before any jmp back
        auto it = at.find(target);
        while (it != at.end() && it->second != ZYDIS_MNEMONIC_RET && it->second != ZYDIS_MNEMONIC_JMP) ++it;
        CHECK((it != at.end() && it->second == ZYDIS_MNEMONIC_RET));
        shared += sites;
      }
      CHECK(calls.size() >= 2);
      CHECK(shared >= 10);
    }
    CHECK(tiers > 0);
  }
}

}  // namespace gpurc_test_backend_x64_fix_stub_code
