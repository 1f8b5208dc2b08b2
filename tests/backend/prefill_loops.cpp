// An entry-block constant read by a strip-outer loop and after it: program
// 388 of loops.cpp's random strip-outer loops (made only by its full run),
// which the x64 JIT got wrong with the twelfth session's prefilled slots (an
// entry constant's slot written once in the prologue; lane 0 of v1, the xor
// of two constants, one of them prefilled). That change was reverted before
// it landed (docs/testing.md, "Twelfth session"); this keeps the program in
// the light run too, on every tier and five launch masks, against the
// interpreter, unoptimised as the random test compiles it.
#include <doctest/doctest.h>

#include <cstring>
#include <random>
#include <string>

#include "compare.h"
#include "ir/ir.h"

namespace gpurc_test_backend_prefill_loops {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::backend::test;

constexpr const char* kProgram388 = R"(
func "" {
  var "v0" i32
  var "v1" i32
  var "v2" i32
  var "v3" i32
  var "v4" i32
  var "v5" i32
  var "v6" i32
  var "v7" i32
  uniform_bytes 4
b0 "entry":
  %0 = load_var i32 #0x0
  %1 = load_var i32 #0x1
  %2 = load_var i32 #0x2
  %3 = load_var i32 #0x3
  %4 = load_var i32 #0x4
  %5 = load_var i32 #0x5
  %6 = load_var i32 #0x6
  %7 = load_var i32 #0x7
  %8 = const i32 #0xb589e694
  %9 = undef i32
  %10 = const i32 #0x1
  %11 = const i32 #0xf
  %12 = load_uniform i32 #0x0
  %13 = and i32 %12, %11
  %14 = iadd i32 %13, %10
  %15 = const i32 #0x0
  br b1
b1 "loop":
  %17 = phi i32 [%0, b0], [%73, b1]
  %18 = phi i32 [%0, b0], [%35, b1]
  %19 = phi i32 [%5, b0], [%30, b1]
  %20 = phi i32 [%5, b0], [%54, b1]
  %21 = phi i32 [%6, b0], [%70, b1]
  %22 = phi i32 [%7, b0], [%34, b1]
  %23 = phi i32 [%5, b0], [%55, b1]
  %24 = phi i32 [%2, b0], [%34, b1]
  %25 = phi i32 [%6, b0], [%55, b1]
  %26 = phi i32 [%15, b0], [%75, b1]
  budget #0x4
  store_var %0, #0x0
  %29 = icmp.ne i1 %23, %23
  %30 = select i32 %29, %22, %21
  %31 = icmp.ugt i1 %24, %5
  %32 = select i32 %31, %2, %22
  %33 = popcount i32 %8
  %34 = xor i32 %5, %4
  %35 = imul i32 %22, %33
  %36 = isub i32 %24, %34
  %37 = isub i32 %4, %21
  %38 = const i32 #0xa4c2dc18
  %39 = xor i32 %33, %25
  %40 = or i32 %3, %38
  %41 = imul i32 %5, %26
  %42 = xor i32 %38, %8
  %43 = xor i32 %0, %40
  %44 = iadd i32 %32, %30
  %45 = bitcast f32 %0
  %46 = bitcast f32 %17
  %47 = fmul f32 %45, %46 [ftz_in, ftz_out, nan=allones]
  %48 = bitcast i32 %47
  %49 = load_var i32 #0x3
  %50 = xor i32 %48, %38
  store_var %6, #0x4
  %52 = xor i32 %17, %1
  %53 = and i32 %50, %5
  %54 = xor i32 %7, %24
  %55 = const i32 #0x5427d026
  %56 = xor i32 %32, %35
  %57 = bitcast f32 %50
  %58 = bitcast f32 %52
  %59 = fmul f32 %57, %58 [ftz_in, ftz_out, nan=allones]
  %60 = bitcast i32 %59
  %61 = imul i32 %1, %32
  %62 = popcount i32 %26
  %63 = iadd i32 %20, %2
  %64 = bitcast f32 %32
  %65 = bitcast f32 %34
  %66 = fmul f32 %64, %65
  %67 = bitcast i32 %66
  %68 = imul i32 %62, %19
  %69 = icmp.sgt i1 %25, %41
  %70 = select i32 %69, %41, %32
  %71 = isub i32 %18, %0
  %72 = iadd i32 %34, %32
  %73 = or i32 %55, %60
  %74 = const i32 #0x1
  %75 = iadd i32 %26, %74
  %76 = icmp.eq i1 %75, %14
  cond_br %76, b2, b1
b2 "exit":
  store_var %33, #0x0
  store_var %42, #0x1
  store_var %52, #0x2
  store_var %39, #0x3
  store_var %62, #0x4
  store_var %24, #0x5
  store_var %39, #0x6
  store_var %20, #0x7
  store_var %75, #0x0
  return
}
)";

TEST_CASE("backend: an entry constant read in and after a strip-outer loop (random loop program 388)") {
  ir::Function f;
  std::string err;
  REQUIRE_MESSAGE(ir::parse(kProgram388, f, err), err);
  f.compute_preds();
  REQUIRE(ir::verify(f) == "");
  std::mt19937_64 rng(388);
  for (uint32_t mask : {~0u, 1u, 0x80000000u, 0x00ff00f0u, 0xfffffffeu}) {
    RunSpec s;
    s.vars.resize(f.vars_bytes());
    fill_random(s.vars, rng);
    const uint32_t n = uint32_t(rng());
    s.uniforms.resize(4);
    std::memcpy(s.uniforms.data(), &n, 4);
    s.entry_mask = mask;
    s.budget = 1 << 20;
    check_all_tiers(f, s, "mask " + std::to_string(mask));
  }
}

}  // namespace gpurc_test_backend_prefill_loops
