// The hardware's numbers: Tesla instructions against envytools' hardware
// models (nvhw fp.c as hwtest g80_fp / g80_fp64 / g80_int drive it, checked
// on G80..GT215 boards). Each vector's expected result and $c were computed
// with those models for the instruction word the text assembles to (ours:
// the words, operand choice and special values come from hwtest's recipe:
// +-0, denormals, NaNs with payloads, +-inf, max/min, 1 + ulp); the same
// program then runs on every engine, which must reach the interpreter's end
// state. See docs/tesla.md "Interpreter semantics" for each rule.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>

#include "tests/tesla/translate_harness.h"

namespace gpurc_test_tesla_hw_numbers {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace tesla_tr;

namespace {

// Registers: sources $r4 $r5 $r6 (f64: $r4d $r6d $r8d), result $r7 (a
// negative number: the half register $h(-n)) or $r10d, flags in $c0
// (0xf: the form writes no flags).
struct Vec32 {
  const char* family;
  const char* text;
  int dst;
  uint32_t s1, s2, s3, expect, cc;
};
struct Vec64 {
  const char* family;
  const char* text;
  int bits;  // 32: the low word of $r10 is the result
  uint64_t s1, s2, s3, expect;
  uint32_t cc;
};

const Vec32 kVec32[] = {
    {"fadd", "add rz f32 $c0 $r7 $r4 $r6", 7, 0x007fffffu, 0x8aee2a81u, 0xfc000000u, 0xfc000000u, 0x2},
    {"fadd", "add rz f32 $c0 $r7 $r4 $r6", 7, 0x00000000u, 0xff800000u, 0x7fffffe1u, 0x7fffffffu, 0x3},
    {"fadd", "add rz f32 $c0 $r7 $r4 $r6", 7, 0xff800000u, 0x00800001u, 0x7ffffff0u, 0x7fffffffu, 0x3},
    {"fadd", "add rz f32 $c0 $r7 $r4 $r6", 7, 0xff800bbbu, 0xbba85349u, 0x3f800001u, 0x7fffffffu, 0x3},
    {"fadd", "add rz f32 $c0 $r7 $r4 $r6", 7, 0x80000020u, 0x807fffffu, 0x80000000u, 0x80000000u, 0x1},
    {"fadd", "add rz f32 $c0 $r7 $r4 $r6", 7, 0x00800001u, 0xa1ae2bb8u, 0x7effffffu, 0x7effffffu, 0x0},
    {"fminmax", "max f32 $c0 $r7 $r4 neg $r5", 7, 0x7effffffu, 0x7f800aaau, 0x007fffffu, 0x7effffffu, 0x0},
    {"fminmax", "max f32 $c0 $r7 $r4 neg $r5", 7, 0x7f000000u, 0x71f39725u, 0x00800001u, 0x7f000000u, 0x0},
    {"fminmax", "max f32 $c0 $r7 $r4 neg $r5", 7, 0xfc000000u, 0x4b22df09u, 0x7f800000u, 0xcb22df09u, 0x2},
    {"fminmax", "max f32 $c0 $r7 $r4 neg $r5", 7, 0x7f800aaau, 0x80000001u, 0x7f000000u, 0x00000000u, 0x1},
    {"fminmax", "max f32 $c0 $r7 $r4 neg $r5", 7, 0x007fffffu, 0xff800000u, 0x7fffffe0u, 0x7f800000u, 0x0},
    {"fminmax", "max f32 $c0 $r7 $r4 neg $r5", 7, 0x7fffffefu, 0xa30a2378u, 0xc0000021u, 0x230a2378u, 0x0},
    {"fminmax", "max f32 $c0 $r7 neg $r4 abs $r5", 7, 0x7f800aaau, 0x7f800000u, 0x01000000u, 0x7f800000u, 0x0},
    {"fminmax", "max f32 $c0 $r7 neg $r4 abs $r5", 7, 0x3f800001u, 0xbf800000u, 0x80000020u, 0x3f800000u, 0x0},
    {"fminmax", "max f32 $c0 $r7 neg $r4 abs $r5", 7, 0x7fffffe1u, 0x6332834eu, 0x7f000000u, 0x6332834eu, 0x0},
    {"fminmax", "max f32 $c0 $r7 neg $r4 abs $r5", 7, 0xbf800000u, 0xb98303deu, 0x7f812345u, 0x3f800000u, 0x0},
    {"fminmax", "max f32 $c0 $r7 neg $r4 abs $r5", 7, 0xc0000021u, 0x007fffffu, 0xfe000001u, 0x40000021u, 0x0},
    {"fminmax", "max f32 $c0 $r7 neg $r4 abs $r5", 7, 0xfe000001u, 0x7fffffe0u, 0x007fffffu, 0x7e000001u, 0x0},
    {"fminmax", "max f32 $c0 $r7 abs $r4 neg $r5", 7, 0x00800001u, 0xfc000000u, 0x80000000u, 0x7c000000u, 0x0},
    {"fminmax", "max f32 $c0 $r7 abs $r4 neg $r5", 7, 0x807fffffu, 0xfe000001u, 0x7f000000u, 0x7e000001u, 0x0},
    {"fminmax", "max f32 $c0 $r7 abs $r4 neg $r5", 7, 0x80000020u, 0x7f800aaau, 0xfc000000u, 0x00000000u, 0x1},
    {"fminmax", "max f32 $c0 $r7 abs $r4 neg $r5", 7, 0x80000021u, 0x3f800000u, 0x7fffffe1u, 0x00000000u, 0x1},
    {"fminmax", "max f32 $c0 $r7 abs $r4 neg $r5", 7, 0x7f800aaau, 0x7aa4e772u, 0x7ffffff0u, 0xfaa4e772u, 0x2},
    {"fminmax", "max f32 $c0 $r7 abs $r4 neg $r5", 7, 0x80000000u, 0x80000000u, 0x7fffffffu, 0x00000000u, 0x1},
    {"fmul", "mul rz f32 $c0 $r7 $r4 neg $r5", 7, 0x7ffffff0u, 0x007fffffu, 0x3f800000u, 0x7fffffffu, 0x3},
    {"fmul", "mul rz f32 $c0 $r7 $r4 neg $r5", 7, 0x80000020u, 0x7f800aaau, 0x7effffffu, 0x7fffffffu, 0x3},
    {"fmul", "mul rz f32 $c0 $r7 $r4 neg $r5", 7, 0xff800bbbu, 0x00000001u, 0x007fffffu, 0x7fffffffu, 0x3},
    {"fmul", "mul rz f32 $c0 $r7 $r4 neg $r5", 7, 0x7fffffffu, 0x4e7faa4fu, 0xff800000u, 0x7fffffffu, 0x3},
    {"fmul", "mul rz f32 $c0 $r7 $r4 neg $r5", 7, 0xbf800000u, 0xa653ffe7u, 0x7fffffefu, 0xa653ffe7u, 0x2},
    {"fmul", "mul rz f32 $c0 $r7 $r4 neg $r5", 7, 0x807fffffu, 0x187e51e1u, 0x807fffffu, 0x00000000u, 0x1},
    {"fmul", "mul sat rn f32 $c0 $r7 neg $r4 neg $r5", 7, 0x80000020u, 0x132733ebu, 0xffffffffu, 0x00000000u, 0x1},
    {"fmul", "mul sat rn f32 $c0 $r7 neg $r4 neg $r5", 7, 0x7ffffff1u, 0x7f812345u, 0xbf800000u, 0x7fffffffu, 0x3},
    {"fmul", "mul sat rn f32 $c0 $r7 neg $r4 neg $r5", 7, 0x7f800aaau, 0x8000001fu, 0x8000001fu, 0x7fffffffu, 0x3},
    {"fmul", "mul sat rn f32 $c0 $r7 neg $r4 neg $r5", 7, 0x3f800000u, 0xffdbffd6u, 0x00000001u, 0x7fffffffu, 0x3},
    {"fmul", "mul sat rn f32 $c0 $r7 neg $r4 neg $r5", 7, 0x00000000u, 0x5ad580e8u, 0x7fffffefu, 0x00000000u, 0x1},
    {"fmul", "mul sat rn f32 $c0 $r7 neg $r4 neg $r5", 7, 0x80000000u, 0x61d66271u, 0x80000021u, 0x00000000u, 0x1},
    {"fmad", "add f32 $c0 $r7 neg (mul $r4 $r5) neg $r6", 7, 0x7f800000u, 0x7effffffu, 0xfe000001u, 0xff800000u, 0x2},
    {"fmad", "add f32 $c0 $r7 neg (mul $r4 $r5) neg $r6", 7, 0x01000000u, 0x2814fd9fu, 0xc0000021u, 0x40000021u, 0x0},
    {"fmad", "add f32 $c0 $r7 neg (mul $r4 $r5) neg $r6", 7, 0x7f800000u, 0x9fa8a4d4u, 0x8000001fu, 0x7f800000u, 0x0},
    {"fmad", "add f32 $c0 $r7 neg (mul $r4 $r5) neg $r6", 7, 0x7ffffff0u, 0xf2310cbau, 0x7f800000u, 0x7fffffffu, 0x3},
    {"fmad", "add f32 $c0 $r7 neg (mul $r4 $r5) neg $r6", 7, 0x00800001u, 0xb0a97f51u, 0x7f800000u, 0xff800000u, 0x2},
    {"fmad", "add f32 $c0 $r7 neg (mul $r4 $r5) neg $r6", 7, 0xffffffffu, 0x1f59feb1u, 0xc0000021u, 0x7fffffffu, 0x3},
    {"fmad", "add f32 $c0 $r7 (mul $r4 $r5) $r6", 7, 0x7fffffffu, 0xc0000021u, 0x8000001fu, 0x7fffffffu, 0x3},
    {"fmad", "add f32 $c0 $r7 (mul $r4 $r5) $r6", 7, 0xc0000021u, 0x00800001u, 0x7ffffff1u, 0x7fffffffu, 0x3},
    {"fmad", "add f32 $c0 $r7 (mul $r4 $r5) $r6", 7, 0x7ffffff0u, 0x8000001fu, 0x01000000u, 0x7fffffffu, 0x3},
    {"fmad", "add f32 $c0 $r7 (mul $r4 $r5) $r6", 7, 0xfdffffffu, 0x01000000u, 0x7f800aaau, 0x7fffffffu, 0x3},
    {"fmad", "add f32 $c0 $r7 (mul $r4 $r5) $r6", 7, 0x00000001u, 0xffffffffu, 0xfdffffffu, 0x7fffffffu, 0x3},
    {"fmad", "add f32 $c0 $r7 (mul $r4 $r5) $r6", 7, 0x00000001u, 0x3f800000u, 0x00000001u, 0x00000000u, 0x1},
    {"fmad", "add f32 $c0 $r7 neg (mul $r4 $r5) neg $r6", 7, 0xfe000001u, 0x80000000u, 0x7effffffu, 0xfeffffffu, 0x2},
    {"fmad", "add f32 $c0 $r7 neg (mul $r4 $r5) neg $r6", 7, 0x8000001fu, 0x3f800000u, 0x00000001u, 0x00000000u, 0x1},
    {"fmad", "add f32 $c0 $r7 neg (mul $r4 $r5) neg $r6", 7, 0xfdffffffu, 0x01000000u, 0x8000001fu, 0x3f7fffffu, 0x0},
    {"fmad", "add f32 $c0 $r7 neg (mul $r4 $r5) neg $r6", 7, 0x80000021u, 0x00000001u, 0x7f800000u, 0xff800000u, 0x2},
    {"fmad", "add f32 $c0 $r7 neg (mul $r4 $r5) neg $r6", 7, 0x7fffffe0u, 0x0f2f6935u, 0x8000001fu, 0x7fffffffu, 0x3},
    {"fmad", "add f32 $c0 $r7 neg (mul $r4 $r5) neg $r6", 7, 0x7fffffe1u, 0x7f800aaau, 0xfdffffffu, 0x7fffffffu, 0x3},
    {"fmad", "add sat f32 $c0 $r7 neg (mul $r4 $r5) neg $r6", 7, 0x7fffffefu, 0x00000001u, 0x807fffffu, 0x7fffffffu, 0x3},
    {"fmad", "add sat f32 $c0 $r7 neg (mul $r4 $r5) neg $r6", 7, 0x7f000000u, 0xffffffffu, 0xffffffffu, 0x7fffffffu, 0x3},
    {"fmad", "add sat f32 $c0 $r7 neg (mul $r4 $r5) neg $r6", 7, 0x7fffffe1u, 0x7effffffu, 0x7fffffe1u, 0x7fffffffu, 0x3},
    {"fmad", "add sat f32 $c0 $r7 neg (mul $r4 $r5) neg $r6", 7, 0x007fffffu, 0xfc000000u, 0x7f800aaau, 0x7fffffffu, 0x3},
    {"fmad", "add sat f32 $c0 $r7 neg (mul $r4 $r5) neg $r6", 7, 0x7f800aaau, 0x7f000000u, 0x3f800000u, 0x7fffffffu, 0x3},
    {"fmad", "add sat f32 $c0 $r7 neg (mul $r4 $r5) neg $r6", 7, 0x7fffffe0u, 0x80000001u, 0x3f800000u, 0x7fffffffu, 0x3},
    {"fadd_s", "add f32 $r6 $r4 neg $r5", 6, 0x7ffffff1u, 0x80000021u, 0xff800bbbu, 0x7fffffffu, 0xf},
    {"fadd_s", "add f32 $r6 $r4 neg $r5", 6, 0x7f800aaau, 0xe2e8513eu, 0x00800001u, 0x7fffffffu, 0xf},
    {"fadd_s", "add f32 $r6 $r4 neg $r5", 6, 0x8000001fu, 0x7f800aaau, 0xff800000u, 0x7fffffffu, 0xf},
    {"fadd_s", "add f32 $r6 $r4 neg $r5", 6, 0x807fffffu, 0x7ffffff0u, 0xbf800000u, 0x7fffffffu, 0xf},
    {"fadd_s", "add f32 $r6 $r4 neg $r5", 6, 0x3f800001u, 0x69cefa9du, 0x7f800000u, 0xe9cefa9du, 0xf},
    {"fadd_s", "add f32 $r6 $r4 neg $r5", 6, 0x7f812345u, 0x7fffffe0u, 0x80000001u, 0x7fffffffu, 0xf},
    {"fadd_s", "add f32 $r6 $r4 $r5", 6, 0x7ffffff1u, 0x8000001fu, 0x80000020u, 0x7fffffffu, 0xf},
    {"fadd_s", "add f32 $r6 $r4 $r5", 6, 0x007fffffu, 0xc0000021u, 0x80000020u, 0xc0000021u, 0xf},
    {"fadd_s", "add f32 $r6 $r4 $r5", 6, 0x00800001u, 0xb8fcaad6u, 0x3f800000u, 0xb8fcaad6u, 0xf},
    {"fadd_s", "add f32 $r6 $r4 $r5", 6, 0x7f800aaau, 0x80000021u, 0x7f812345u, 0x7fffffffu, 0xf},
    {"fadd_s", "add f32 $r6 $r4 $r5", 6, 0x7f800000u, 0x7ffffff1u, 0x00800001u, 0x7fffffffu, 0xf},
    {"fadd_s", "add f32 $r6 $r4 $r5", 6, 0x3f800001u, 0x80000021u, 0x7fffffefu, 0x3f800001u, 0xf},
    {"fmul_s", "mul f32 $r6 neg $r4 $r5", 6, 0x7f800000u, 0x7f800000u, 0x7fffffe1u, 0xff800000u, 0xf},
    {"fmul_s", "mul f32 $r6 neg $r4 $r5", 6, 0x7ffffff0u, 0x80000000u, 0xbf800000u, 0x7fffffffu, 0xf},
    {"fmul_s", "mul f32 $r6 neg $r4 $r5", 6, 0x007fffffu, 0xacacedb0u, 0x8000001fu, 0x00000000u, 0xf},
    {"fmul_s", "mul f32 $r6 neg $r4 $r5", 6, 0x00800001u, 0x3f800001u, 0x80000001u, 0x80800002u, 0xf},
    {"fmul_s", "mul f32 $r6 neg $r4 $r5", 6, 0x7fffffefu, 0x007fffffu, 0x7ffffff1u, 0x7fffffffu, 0xf},
    {"fmul_s", "mul f32 $r6 neg $r4 $r5", 6, 0x80000020u, 0xe5cb3827u, 0xfe000001u, 0x80000000u, 0xf},
    {"fmul_s", "mul sat f32 $r6 $r4 $r5", 6, 0xffffffffu, 0x7fffffefu, 0xbf800000u, 0x7fffffffu, 0xf},
    {"fmul_s", "mul sat f32 $r6 $r4 $r5", 6, 0x80000020u, 0x80000021u, 0x80000021u, 0x00000000u, 0xf},
    {"fmul_s", "mul sat f32 $r6 $r4 $r5", 6, 0xfdffffffu, 0x80000021u, 0xfdffffffu, 0x00000000u, 0xf},
    {"fmul_s", "mul sat f32 $r6 $r4 $r5", 6, 0x7ffffff1u, 0x03a7762au, 0xfdffffffu, 0x7fffffffu, 0xf},
    {"fmul_s", "mul sat f32 $r6 $r4 $r5", 6, 0x7fffffffu, 0x3f800000u, 0x80000000u, 0x7fffffffu, 0xf},
    {"fmul_s", "mul sat f32 $r6 $r4 $r5", 6, 0xfdffffffu, 0x3ad2966au, 0x7fffffefu, 0x00000000u, 0xf},
    {"fmad_s", "add sat f32 $r6 (mul $r4 $r5) neg $r6", 6, 0x7f800aaau, 0x007fffffu, 0x7fffffe1u, 0x7fffffffu, 0xf},
    {"fmad_s", "add sat f32 $r6 (mul $r4 $r5) neg $r6", 6, 0x80000001u, 0x3f800001u, 0x80000001u, 0x00000000u, 0xf},
    {"fmad_s", "add sat f32 $r6 (mul $r4 $r5) neg $r6", 6, 0x3f800001u, 0x807fffffu, 0x00000000u, 0x00000000u, 0xf},
    {"fmad_s", "add sat f32 $r6 (mul $r4 $r5) neg $r6", 6, 0xff800bbbu, 0x7fffffe0u, 0x7f000000u, 0x7fffffffu, 0xf},
    {"fmad_s", "add sat f32 $r6 (mul $r4 $r5) neg $r6", 6, 0x7ffffff1u, 0x00000000u, 0xfdffffffu, 0x7fffffffu, 0xf},
    {"fmad_s", "add sat f32 $r6 (mul $r4 $r5) neg $r6", 6, 0x7fffffe0u, 0x3f800000u, 0x7f812345u, 0x7fffffffu, 0xf},
    {"fmad_s", "add f32 $r6 (mul $r4 $r5) neg $r6", 6, 0x7fffffe1u, 0xff800000u, 0x7ffffff0u, 0x7fffffffu, 0xf},
    {"fmad_s", "add f32 $r6 (mul $r4 $r5) neg $r6", 6, 0xfc000000u, 0xb510341au, 0x7ffffff0u, 0x7fffffffu, 0xf},
    {"fmad_s", "add f32 $r6 (mul $r4 $r5) neg $r6", 6, 0x7fffffe1u, 0x007fffffu, 0x7fffffe1u, 0x7fffffffu, 0xf},
    {"fmad_s", "add f32 $r6 (mul $r4 $r5) neg $r6", 6, 0x8000001fu, 0x00800001u, 0x7fffffe0u, 0x7fffffffu, 0xf},
    {"fmad_s", "add f32 $r6 (mul $r4 $r5) neg $r6", 6, 0x3f800001u, 0xffffffffu, 0xfe000001u, 0x7fffffffu, 0xf},
    {"fmad_s", "add f32 $r6 (mul $r4 $r5) neg $r6", 6, 0x007fffffu, 0x7fffffe0u, 0xff800bbbu, 0x7fffffffu, 0xf},
    {"fmad_s", "add sat f32 $r6 neg (mul $r4 $r5) neg $r6", 6, 0x00000001u, 0xfc000000u, 0xbf800000u, 0x3f800000u, 0xf},
    {"fmad_s", "add sat f32 $r6 neg (mul $r4 $r5) neg $r6", 6, 0x80000021u, 0x5d400479u, 0x7f800000u, 0x00000000u, 0xf},
    {"fmad_s", "add sat f32 $r6 neg (mul $r4 $r5) neg $r6", 6, 0x00000001u, 0xffffffffu, 0x80000001u, 0x7fffffffu, 0xf},
    {"fmad_s", "add sat f32 $r6 neg (mul $r4 $r5) neg $r6", 6, 0xff800000u, 0xc0000021u, 0x00800001u, 0x00000000u, 0xf},
    {"fmad_s", "add sat f32 $r6 neg (mul $r4 $r5) neg $r6", 6, 0x7f800aaau, 0x7fffffffu, 0x7fffffe0u, 0x7fffffffu, 0xf},
    {"fmad_s", "add sat f32 $r6 neg (mul $r4 $r5) neg $r6", 6, 0x807fffffu, 0xb86bd694u, 0x3f800000u, 0x00000000u, 0xf},
    {"i2i", "cvt abs u16 $c0 $r7l s8 $r4l", -14, 0x00000001u, 0x007fffffu, 0x7f800000u, 0x00000001u, 0x0},
    {"i2i", "cvt abs u16 $c0 $r7l s8 $r4l", -14, 0xfdffffffu, 0x3e4c45f0u, 0xbf800000u, 0x00000001u, 0x0},
    {"i2i", "cvt abs u16 $c0 $r7l s8 $r4l", -14, 0x00000001u, 0x80000001u, 0x7ffffff1u, 0x00000001u, 0x0},
    {"i2i", "cvt abs u16 $c0 $r7l s8 $r4l", -14, 0x7f800000u, 0x01000000u, 0x7ffffff1u, 0x00000000u, 0x1},
    {"i2i", "cvt s32 $c0 $r7 s32 $r4", 7, 0x7f812345u, 0xdbc287b9u, 0x807fffffu, 0x7f812345u, 0x0},
    {"i2i", "cvt s32 $c0 $r7 s32 $r4", 7, 0xff800000u, 0x59a6f26bu, 0x807fffffu, 0xff800000u, 0x2},
    {"i2i", "cvt s32 $c0 $r7 s32 $r4", 7, 0xffffffffu, 0x80000000u, 0xc0000021u, 0xffffffffu, 0x2},
    {"i2i", "cvt s32 $c0 $r7 s32 $r4", 7, 0x7ffffff0u, 0xbf800000u, 0xfdffffffu, 0x7ffffff0u, 0x0},
    {"i2i", "cvt neg u16 $c0 $r7l s8 $r4", -14, 0x00000001u, 0xfdffffffu, 0x80000021u, 0x00000000u, 0x1},
    {"i2i", "cvt neg u16 $c0 $r7l s8 $r4", -14, 0x80000001u, 0x7f800aaau, 0x807fffffu, 0x00000000u, 0x1},
    {"i2i", "cvt neg u16 $c0 $r7l s8 $r4", -14, 0xffffffffu, 0xf6be2f97u, 0x80000020u, 0x00000001u, 0x0},
    {"i2i", "cvt neg u16 $c0 $r7l s8 $r4", -14, 0x7f800000u, 0x007fffffu, 0x80000001u, 0x00000000u, 0x1},
    {"i2i", "cvt u8 $c0 $r7 u16 $r4l", 7, 0x807fffffu, 0x80000001u, 0x7fffffffu, 0x000000ffu, 0x0},
    {"i2i", "cvt u8 $c0 $r7 u16 $r4l", 7, 0xbf800000u, 0xff800bbbu, 0xfdffffffu, 0x00000000u, 0x1},
    {"i2i", "cvt u8 $c0 $r7 u16 $r4l", 7, 0x7f800aaau, 0xffffffffu, 0x7fffffffu, 0x000000ffu, 0x0},
    {"i2i", "cvt u8 $c0 $r7 u16 $r4l", 7, 0x7fffffe0u, 0x210f3c29u, 0x807fffffu, 0x000000ffu, 0x0},
    {"i2i", "cvt abs u32 $c0 $r7 u8 $r4l", 7, 0xfc000000u, 0x3f800000u, 0x7ffffff1u, 0x00000000u, 0x1},
    {"i2i", "cvt abs u32 $c0 $r7 u8 $r4l", 7, 0xfdffffffu, 0x7f000000u, 0xff800bbbu, 0x000000ffu, 0x0},
    {"i2i", "cvt abs u32 $c0 $r7 u8 $r4l", 7, 0x7fffffffu, 0x8000001fu, 0xff800000u, 0x000000ffu, 0x0},
    {"i2i", "cvt abs u32 $c0 $r7 u8 $r4l", 7, 0xffffffffu, 0x00000000u, 0x807fffffu, 0x000000ffu, 0x0},
    {"i2f", "cvt rp f32 $c0 $r7 s16 $r4l", 7, 0x80000001u, 0x3f800000u, 0x7ffffff0u, 0x3f800000u, 0x0},
    {"i2f", "cvt rp f32 $c0 $r7 s16 $r4l", 7, 0x7ffffff0u, 0xd6a1e107u, 0x7ffffff1u, 0xc1800000u, 0x2},
    {"i2f", "cvt rp f32 $c0 $r7 s16 $r4l", 7, 0x7fffffffu, 0x00000001u, 0x00800001u, 0xbf800000u, 0x2},
    {"i2f", "cvt rp f32 $c0 $r7 s16 $r4l", 7, 0x80000000u, 0x7fffffffu, 0xfdffffffu, 0x00000000u, 0x1},
    {"i2f", "cvt neg abs rm f16 $c0 $r7l u8 $r4", -14, 0xff800bbbu, 0xc2e170ebu, 0xfe000001u, 0x0000d9d8u, 0x2},
    {"i2f", "cvt neg abs rm f16 $c0 $r7l u8 $r4", -14, 0x7fffffe1u, 0x80000021u, 0xff800bbbu, 0x0000db08u, 0x2},
    {"i2f", "cvt neg abs rm f16 $c0 $r7l u8 $r4", -14, 0x80000000u, 0x7fffffefu, 0xff800000u, 0x00008000u, 0x1},
    {"i2f", "cvt neg abs rm f16 $c0 $r7l u8 $r4", -14, 0xfe000001u, 0x80000020u, 0x80000020u, 0x0000bc00u, 0x2},
    {"i2f", "cvt sat rm f16 $c0 $r7l s8 $r4", -14, 0xff800bbbu, 0x7f800aaau, 0x80000020u, 0x00000000u, 0x1},
    {"i2f", "cvt sat rm f16 $c0 $r7l s8 $r4", -14, 0xfdffffffu, 0x33b117ddu, 0x7f812345u, 0x00000000u, 0x1},
    {"i2f", "cvt sat rm f16 $c0 $r7l s8 $r4", -14, 0xbf800000u, 0x7ffffff0u, 0x7f800000u, 0x00000000u, 0x1},
    {"i2f", "cvt sat rm f16 $c0 $r7l s8 $r4", -14, 0x01000000u, 0x00000000u, 0x80000001u, 0x00000000u, 0x1},
    {"i2f", "cvt sat rn f32 $c0 $r7 s16 $r4l", 7, 0x7fffffffu, 0x80000001u, 0x7fffffe1u, 0x00000000u, 0x1},
    {"i2f", "cvt sat rn f32 $c0 $r7 s16 $r4l", 7, 0x3f800001u, 0x0ccc28bbu, 0x007fffffu, 0x3f800000u, 0x0},
    {"i2f", "cvt sat rn f32 $c0 $r7 s16 $r4l", 7, 0xbf800000u, 0x73b2ba4cu, 0xffffffffu, 0x00000000u, 0x1},
    {"i2f", "cvt sat rn f32 $c0 $r7 s16 $r4l", 7, 0x00800001u, 0xfc000000u, 0xfe000001u, 0x3f800000u, 0x0},
    {"i2f", "cvt neg abs sat rz f32 $c0 $r7 s8 $r4l", 7, 0xfc000000u, 0xbf800000u, 0xfdffffffu, 0x00000000u, 0x1},
    {"i2f", "cvt neg abs sat rz f32 $c0 $r7 s8 $r4l", 7, 0x00000001u, 0x80000021u, 0x7ffffff1u, 0x00000000u, 0x1},
    {"i2f", "cvt neg abs sat rz f32 $c0 $r7 s8 $r4l", 7, 0xfdffffffu, 0xc0000021u, 0xff800000u, 0x00000000u, 0x1},
    {"i2f", "cvt neg abs sat rz f32 $c0 $r7 s8 $r4l", 7, 0x80000000u, 0x7fffffffu, 0xfdffffffu, 0x00000000u, 0x1},
    {"f2i", "cvt abs rzi u32 $c0 $r7 f16 $r4l", 7, 0x01000000u, 0x80000021u, 0x7effffffu, 0x00000000u, 0x1},
    {"f2i", "cvt abs rzi u32 $c0 $r7 f16 $r4l", 7, 0x80000020u, 0x7ffffff0u, 0x00000000u, 0x00000000u, 0x1},
    {"f2i", "cvt abs rzi u32 $c0 $r7 f16 $r4l", 7, 0xbf800000u, 0x7fffffffu, 0x7fffffe1u, 0x00000000u, 0x1},
    {"f2i", "cvt abs rzi u32 $c0 $r7 f16 $r4l", 7, 0x7fffffe1u, 0x7ffffff0u, 0x80000021u, 0x00000000u, 0x1},
    {"f2i", "cvt rni u16 $c0 $r7l f32 $r4", -14, 0xbf800000u, 0xbd94505eu, 0xfdffffffu, 0x00000000u, 0x1},
    {"f2i", "cvt rni u16 $c0 $r7l f32 $r4", -14, 0x3f800000u, 0x00000001u, 0xbf800000u, 0x00000001u, 0x0},
    {"f2i", "cvt rni u16 $c0 $r7l f32 $r4", -14, 0x3f800000u, 0x2455c84eu, 0xffffffffu, 0x00000001u, 0x0},
    {"f2i", "cvt rni u16 $c0 $r7l f32 $r4", -14, 0x7effffffu, 0xc0000021u, 0x807fffffu, 0x0000ffffu, 0x2},
    {"f2i", "cvt neg rpi u32 $c0 $r7 f16 $r4l", 7, 0xc0000021u, 0x807fffffu, 0x807fffffu, 0x00000000u, 0x1},
    {"f2i", "cvt neg rpi u32 $c0 $r7 f16 $r4l", 7, 0xbf800000u, 0xf539f1aeu, 0xff800bbbu, 0x00000000u, 0x1},
    {"f2i", "cvt neg rpi u32 $c0 $r7 f16 $r4l", 7, 0x7fffffefu, 0xff800000u, 0x807fffffu, 0x00000000u, 0x1},
    {"f2i", "cvt neg rpi u32 $c0 $r7 f16 $r4l", 7, 0x01000000u, 0x7fffffefu, 0x7f000000u, 0x00000000u, 0x1},
    {"f2i", "cvt neg abs rmi u16 $c0 $r7l f32 $r4", -14, 0x7fffffffu, 0xe6f62bd9u, 0x7fffffe0u, 0x00000000u, 0x1},
    {"f2i", "cvt neg abs rmi u16 $c0 $r7l f32 $r4", -14, 0x80000001u, 0xf73d52f6u, 0xfdffffffu, 0x00000000u, 0x1},
    {"f2i", "cvt neg abs rmi u16 $c0 $r7l f32 $r4", -14, 0x80000000u, 0xed3072e3u, 0xfc000000u, 0x00000000u, 0x1},
    {"f2i", "cvt neg abs rmi u16 $c0 $r7l f32 $r4", -14, 0x7f000000u, 0xfc000000u, 0x007fffffu, 0x00000000u, 0x1},
    {"f2i", "cvt abs rmi s32 $c0 $r7 f32 $r4", 7, 0x3f800000u, 0x80000020u, 0x7fffffe0u, 0x00000001u, 0x0},
    {"f2i", "cvt abs rmi s32 $c0 $r7 f32 $r4", 7, 0x7fffffffu, 0xfc000000u, 0xffffffffu, 0x00000000u, 0x1},
    {"f2i", "cvt abs rmi s32 $c0 $r7 f32 $r4", 7, 0x7ffffff0u, 0x4ea19d4bu, 0x00000000u, 0x00000000u, 0x1},
    {"f2i", "cvt abs rmi s32 $c0 $r7 f32 $r4", 7, 0xff800bbbu, 0x7ffffff1u, 0x00000001u, 0x00000000u, 0x1},
    {"f2f", "cvt abs sat rni f16 $c0 $r7l f16 $r4l", -14, 0x01000000u, 0xb37e2acau, 0x80000020u, 0x00000000u, 0x1},
    {"f2f", "cvt abs sat rni f16 $c0 $r7l f16 $r4l", -14, 0x7fffffe1u, 0xfdffffffu, 0x7fffffffu, 0x00007fffu, 0x3},
    {"f2f", "cvt abs sat rni f16 $c0 $r7l f16 $r4l", -14, 0x7f812345u, 0x7effffffu, 0x7f000000u, 0x00000000u, 0x1},
    {"f2f", "cvt abs sat rni f16 $c0 $r7l f16 $r4l", -14, 0x007fffffu, 0xfe000001u, 0x7effffffu, 0x00007fffu, 0x3},
    {"f2f", "cvt neg abs sat rp f16 $c0 $r7l f32 $r4", -14, 0x807fffffu, 0x3f800000u, 0x00800001u, 0x00000000u, 0x1},
    {"f2f", "cvt neg abs sat rp f16 $c0 $r7l f32 $r4", -14, 0xffffffffu, 0xffffffffu, 0x3f800000u, 0x00007fffu, 0x3},
    {"f2f", "cvt neg abs sat rp f16 $c0 $r7l f32 $r4", -14, 0x01000000u, 0x7fffffefu, 0x7ffffff0u, 0x00000000u, 0x1},
    {"f2f", "cvt neg abs sat rp f16 $c0 $r7l f32 $r4", -14, 0x00800001u, 0x7fffffffu, 0x007fffffu, 0x00000000u, 0x1},
    {"f2f", "cvt neg abs rpi f32 $c0 $r7 f32 $r4", 7, 0x80000001u, 0xbf800000u, 0x7fffffefu, 0x80000000u, 0x1},
    {"f2f", "cvt neg abs rpi f32 $c0 $r7 f32 $r4", 7, 0x7fffffe0u, 0x7fffffe0u, 0x7effffffu, 0x7fffffffu, 0x3},
    {"f2f", "cvt neg abs rpi f32 $c0 $r7 f32 $r4", 7, 0x3f800001u, 0x7fffffefu, 0x00800001u, 0xbf800000u, 0x2},
    {"f2f", "cvt neg abs rpi f32 $c0 $r7 f32 $r4", 7, 0x7fffffffu, 0xbf800000u, 0x7ffffff0u, 0x7fffffffu, 0x3},
    {"f2f", "cvt abs rzi f32 $c0 $r7 f32 $r4", 7, 0x7fffffffu, 0xfdffffffu, 0xff800bbbu, 0x7fffffffu, 0x3},
    {"f2f", "cvt abs rzi f32 $c0 $r7 f32 $r4", 7, 0x01000000u, 0xdba7896au, 0x7fffffe1u, 0x00000000u, 0x1},
    {"f2f", "cvt abs rzi f32 $c0 $r7 f32 $r4", 7, 0xfc000000u, 0x7ffffff1u, 0x00800001u, 0x7c000000u, 0x0},
    {"f2f", "cvt abs rzi f32 $c0 $r7 f32 $r4", 7, 0x7ffffff0u, 0x80000001u, 0x00000000u, 0x7fffffffu, 0x3},
    {"f2f", "cvt abs sat rm f16 $c0 $r7l f32 $r4", -14, 0x80000021u, 0x00800001u, 0x807fffffu, 0x00000000u, 0x1},
    {"f2f", "cvt abs sat rm f16 $c0 $r7l f32 $r4", -14, 0xff800bbbu, 0x3f800001u, 0x7f800aaau, 0x00007fffu, 0x3},
    {"f2f", "cvt abs sat rm f16 $c0 $r7l f32 $r4", -14, 0x7effffffu, 0xbf800000u, 0xfe000001u, 0x00003c00u, 0x0},
    {"f2f", "cvt abs sat rm f16 $c0 $r7l f32 $r4", -14, 0x80000021u, 0x7fffffefu, 0x00000001u, 0x00000000u, 0x1},
    {"f2f", "cvt neg sat f32 $c0 $r7 f32 $r4", 7, 0x7fffffe1u, 0x4f00a376u, 0x7ffffff0u, 0x7fffffffu, 0x3},
    {"f2f", "cvt neg sat f32 $c0 $r7 f32 $r4", 7, 0xfe000001u, 0x7fffffe0u, 0x7fffffe1u, 0x3f800000u, 0x0},
    {"f2f", "cvt neg sat f32 $c0 $r7 f32 $r4", 7, 0x00000001u, 0x00800001u, 0x80000021u, 0x00000000u, 0x1},
    {"f2f", "cvt neg sat f32 $c0 $r7 f32 $r4", 7, 0x7ffffff1u, 0x00800001u, 0x807fffffu, 0x7fffffffu, 0x3},
    // The examples, by hand through the same models.
    {"mad overflow", "add f32 $c0 $r7 (mul $r4 $r5) $r6", 7, 0xff000000u, 0x7f000000u, 0x3f800000u, 0xff800000u, 0x2},
    {"mad c=0 rounds the product", "add f32 $c0 $r7 (mul $r4 $r5) $r6", 7, 0x3f800001u, 0x3f800001u, 0x00000000u, 0x3f800002u, 0x0},
    {"mad truncated product", "add f32 $c0 $r7 (mul $r4 $r5) $r6", 7, 0x3f800001u, 0x3f800001u, 0xbf800000u, 0x34800000u, 0x0},
    {"mad product below the range", "add f32 $c0 $r7 (mul $r4 $r5) $r6", 7, 0x1c800000u, 0x1c800000u, 0x00800000u, 0x00800200u, 0x0},
    {"mad flushed product + 0", "add f32 $c0 $r7 (mul $r4 $r5) $r6", 7, 0x9c800000u, 0x1c800000u, 0x00000000u, 0x00000000u, 0x1},
    {"mad flushed product + -0", "add f32 $c0 $r7 (mul $r4 $r5) $r6", 7, 0x9c800000u, 0x1c800000u, 0x80000000u, 0x80000000u, 0x1},
    {"mad inf times a tiny factor", "add f32 $c0 $r7 (mul $r4 $r5) $r6", 7, 0x7f800000u, 0x04000000u, 0xff000000u, 0x7f800000u, 0x0},
    {"mad huge product minus max", "add f32 $c0 $r7 (mul $r4 $r5) $r6", 7, 0x7f7fffffu, 0x3fc00000u, 0xff7fffffu, 0x7efffffeu, 0x0},
    {"add sat NaN", "add sat rn f32 $c0 $r7 $r4 $r6", 7, 0x7f800001u, 0, 0x3f800000u, 0x7fffffffu, 0x3},
    {"add neg: x - x", "add rn f32 $c0 $r7 $r4 neg $r6", 7, 0xbf800000u, 0, 0xbf800000u, 0x00000000u, 0x1},
    {"cvt f32 of a negative denormal", "cvt f32 $c0 $r7 f32 $r4", 7, 0x807fffffu, 0, 0, 0x80000000u, 0x1},
    {"cvt rni of a negative fraction", "cvt rni f32 $c0 $r7 f32 $r4", 7, 0xbe99999au, 0, 0, 0x80000000u, 0x1},
    {"cvt neg of an integer 0", "cvt neg rn f32 $c0 $r7 u32 $r4", 7, 0, 0, 0, 0x80000000u, 0x1},
    {"cvt f16 rp", "cvt rp f16 $c0 $r7l f32 $r4", -14, 0x3f800001u, 0, 0, 0x3c01u, 0x0},
    {"cvt f16 rm", "cvt rm f16 $c0 $r7l f32 $r4", -14, 0x3f800001u, 0, 0, 0x3c00u, 0x0},
    {"cvt f16 rz overflow", "cvt rz f16 $c0 $r7l f32 $r4", -14, 0x47800000u, 0, 0, 0x7bffu, 0x0},
    {"cvt f16 rp negative overflow", "cvt rp f16 $c0 $r7l f32 $r4", -14, 0xc7800000u, 0, 0, 0xfbffu, 0x2},
    {"cvt f16 rp below 2^-34", "cvt rp f16 $c0 $r7l f32 $r4", -14, 0x2e800000u, 0, 0, 0x0000u, 0x1},
    {"cvt u8 of u16 sets no S", "cvt u8 $c0 $r7l u16 $r4l", -14, 0x000000ffu, 0, 0, 0x00ffu, 0x0},
    {"cvt u8 of u16 clamps", "cvt u8 $c0 $r7l u16 $r4l", -14, 0x0000ff00u, 0, 0, 0x00ffu, 0x0},
    {"sad u16: low halves, 32-bit sum", "sad $c0 $r7 u16 $r4l $r5l $r6", 7, 0xabcd0001u, 0x1234ffffu, 0x7fffffffu, 0x8000fffdu, 0xa},
    {"sad s16: signed halves", "sad $c0 $r7 s16 $r4l $r5l $r6", 7, 0x00008000u, 0xffff7fffu, 0xffffffffu, 0x0000fffeu, 0x4},
    {"sad s16: carry into bit 16", "sad $c0 $r7 s16 $r4l $r5l $r6", 7, 0x00007fffu, 0x00008000u, 0x00000001u, 0x00010000u, 0x0},
    // Forms added with the JIT comparison (hwtest g80_fp f2f with word 1 bit 27,
    // fcmp, fslct), computed with the models as above.
    {"f2f rni", "cvt neg abs sat rmi f32 $c0 $r7 f16 $r4l", 7, 0xc0000021u, 0x007fffffu, 0x7fffffe0u, 0x00000000u, 0x1},
    {"f2f rni", "cvt neg abs sat rmi f32 $c0 $r7 f16 $r4l", 7, 0x00800001u, 0x7ffffff1u, 0xff800000u, 0x00000000u, 0x1},
    {"f2f rni", "cvt neg abs sat rmi f32 $c0 $r7 f16 $r4l", 7, 0x7fffffffu, 0x3f800000u, 0x00000001u, 0x7fffffffu, 0x3},
    {"f2f rni", "cvt neg abs sat rmi f32 $c0 $r7 f16 $r4l", 7, 0x00000000u, 0x7f800000u, 0x807fffffu, 0x00000000u, 0x1},
    {"f2f rni", "cvt neg abs sat rmi f32 $c0 $r7 f16 $r4l", 7, 0x7f000000u, 0x7fffffefu, 0xff800000u, 0x00000000u, 0x1},
    {"f2f rni", "cvt abs sat rpi f32 $c0 $r7 f16 $r4l", 7, 0x3f800000u, 0x7effffffu, 0x00000000u, 0x00000000u, 0x1},
    {"f2f rni", "cvt abs sat rpi f32 $c0 $r7 f16 $r4l", 7, 0x80000021u, 0xfdffffffu, 0x7ffffff1u, 0x3f800000u, 0x0},
    {"f2f rni", "cvt abs sat rpi f32 $c0 $r7 f16 $r4l", 7, 0x007fffffu, 0x7f800000u, 0xff800000u, 0x7fffffffu, 0x3},
    {"f2f rni", "cvt abs sat rpi f32 $c0 $r7 f16 $r4l", 7, 0x3f800000u, 0x7fffffe1u, 0x3f800001u, 0x00000000u, 0x1},
    {"f2f rni", "cvt abs sat rpi f32 $c0 $r7 f16 $r4l", 7, 0x00000001u, 0xdcb16e15u, 0xff800000u, 0x3f800000u, 0x0},
    {"f2f rni", "cvt neg sat rpi f32 $c0 $r7 f16 $r4l", 7, 0xc0000021u, 0x80000020u, 0x00000001u, 0x00000000u, 0x1},
    {"f2f rni", "cvt neg sat rpi f32 $c0 $r7 f16 $r4l", 7, 0x80000020u, 0x1049331bu, 0xfc000000u, 0x00000000u, 0x1},
    {"fcmp", "set $c0 $r7 lgu f32 neg abs $r4 abs $r5", 7, 0xfdffffffu, 0x280d18d6u, 0xfe000001u, 0xffffffffu, 0x2},
    {"fcmp", "set $c0 $r7 lgu f32 neg abs $r4 abs $r5", 7, 0x00000000u, 0x6f12266cu, 0x7fffffffu, 0xffffffffu, 0x2},
    {"fcmp", "set $c0 $r7 lgu f32 neg abs $r4 abs $r5", 7, 0x7effffffu, 0xbf800000u, 0x7fffffefu, 0xffffffffu, 0x2},
    {"fcmp", "set $c0 $r7 lgu f32 neg abs $r4 abs $r5", 7, 0x80000000u, 0xbe4aa3b9u, 0x7effffffu, 0xffffffffu, 0x2},
    {"fcmp", "set $c0 $r7 lgu f32 neg abs $r4 abs $r5", 7, 0x3f800000u, 0x70f807fdu, 0xfc000000u, 0xffffffffu, 0x2},
    {"fcmp", "set $c0 $r7 lge f32 $r4 neg abs $r5", 7, 0x3f800000u, 0xff800000u, 0xffffffffu, 0xffffffffu, 0x2},
    {"fcmp", "set $c0 $r7 lge f32 $r4 neg abs $r5", 7, 0xff800bbbu, 0x7fffffe1u, 0x807fffffu, 0x00000000u, 0x1},
    {"fcmp", "set $c0 $r7 lge f32 $r4 neg abs $r5", 7, 0x8000001fu, 0xc0000021u, 0xc0000021u, 0xffffffffu, 0x2},
    {"fcmp", "set $c0 $r7 lge f32 $r4 neg abs $r5", 7, 0x7f812345u, 0x7f800aaau, 0xc0000021u, 0x00000000u, 0x1},
    {"fcmp", "set $c0 $r7 lge f32 $r4 neg abs $r5", 7, 0x7f800aaau, 0x00000001u, 0x00000000u, 0x00000000u, 0x1},
    {"fslct", "slct b32 $c0 $r7 $r4 $r5 f32 neg $r6", 7, 0x7f800aaau, 0x7f800000u, 0x7fffffe0u, 0x7f800000u, 0x0},
    {"fslct", "slct b32 $c0 $r7 $r4 $r5 f32 neg $r6", 7, 0x7ffffff1u, 0x80000000u, 0xfe000001u, 0x7ffffff1u, 0x0},
    {"fslct", "slct b32 $c0 $r7 $r4 $r5 f32 neg $r6", 7, 0x00800001u, 0xf58d837cu, 0x80000021u, 0x00800001u, 0x0},
    {"fslct", "slct b32 $c0 $r7 $r4 $r5 f32 neg $r6", 7, 0x8000001fu, 0xc089c021u, 0xfc000000u, 0x8000001fu, 0x2},
    {"fslct", "slct b32 $c0 $r7 $r4 $r5 f32 neg $r6", 7, 0x7fffffe0u, 0x80000000u, 0x8000001fu, 0x7fffffe0u, 0x0},
    {"fslct", "slct b32 $c0 $r7 $r4 $r5 f32 neg $r6", 7, 0x007fffffu, 0xfc000000u, 0x80000020u, 0x007fffffu, 0x0},
    {"fslct", "slct b32 $c0 $r7 $r4 $r5 f32 neg $r6", 7, 0x7fffffefu, 0x48dec75au, 0xff800bbbu, 0x48dec75au, 0x0},
    {"fslct", "slct b32 $c0 $r7 $r4 $r5 f32 neg $r6", 7, 0xbf800000u, 0x8000001fu, 0x7fffffffu, 0x8000001fu, 0x2},
    {"fslct", "slct b32 $c0 $r7 $r4 $r5 f32 neg $r6", 7, 0x7fffffe0u, 0xc0000021u, 0x7f800aaau, 0xc0000021u, 0x2},
    {"fslct", "slct b32 $c0 $r7 $r4 $r5 f32 neg $r6", 7, 0x7ffffff0u, 0x3f800001u, 0xbf800000u, 0x7ffffff0u, 0x0},
    // Word 1 bit 27 on f32 -> f16 (rni..rzi): rounds to an integer, then the
    // half conversion truncates (2048.75 -> 2049 -> 2048) and overflows as
    // the mode says.
    {"f2f rni", "cvt rni f16 $c0 $r7l f32 $r4", -14, 0x3fc00000u, 0, 0, 0x00004000u, 0x0},
    {"f2f rni", "cvt rmi f16 $c0 $r7l f32 $r4", -14, 0xc0200000u, 0, 0, 0x0000c200u, 0x2},
    {"f2f rni", "cvt rpi f16 $c0 $r7l f32 $r4", -14, 0x3f000000u, 0, 0, 0x00003c00u, 0x0},
    {"f2f rni", "cvt rpi f16 $c0 $r7l f32 $r4", -14, 0xbf000000u, 0, 0, 0x00008000u, 0x1},
    {"f2f rni", "cvt rzi f16 $c0 $r7l f32 $r4", -14, 0x47800000u, 0, 0, 0x00007bffu, 0x0},
    {"f2f rni", "cvt rni f16 $c0 $r7l f32 $r4", -14, 0x47800000u, 0, 0, 0x00007c00u, 0x0},
    {"f2f rni", "cvt rni f16 $c0 $r7l f32 $r4", -14, 0x45000c00u, 0, 0, 0x00006800u, 0x0},
    {"f2f rni", "cvt rmi f16 $c0 $r7l f32 $r4", -14, 0x7f812345u, 0, 0, 0x00007fffu, 0x3},
    // slct: the integer flags of the result, but -0 counts as zero.
    {"fslct -0", "slct b32 $c0 $r7 $r4 $r5 f32 $r6", 7, 0x80000000u, 0x3f800000u, 0x00000000u, 0x80000000u, 0x1},
    {"fslct -0", "slct b32 $c0 $r7 $r4 $r5 f32 neg $r6", 7, 0x3f800000u, 0x80000000u, 0x3f800000u, 0x80000000u, 0x1},
};

const Vec64 kVec64[] = {
    {"dfma", "fma rn f64 $c0 $r10d neg $r4d $r6d $r8d", 64, 0x3ff8000000000000ull, 0x8000000000000000ull, 0x000fffffffffffffull, 0x000fffffffffffffull, 0x0},
    {"dfma", "fma rn f64 $c0 $r10d neg $r4d $r6d $r8d", 64, 0xffffffffffffff12ull, 0x0010000000000001ull, 0x8000000000000000ull, 0xffffffffffffff12ull, 0x3},
    {"dfma", "fma rn f64 $c0 $r10d neg $r4d $r6d $r8d", 64, 0x0000000000000002ull, 0xfff0000000000000ull, 0x7fffffffffffffffull, 0x7fffffffffffffffull, 0x3},
    {"dfma", "fma rn f64 $c0 $r10d neg $r4d $r6d $r8d", 64, 0x7fffffffffffffffull, 0x3ff0000000000000ull, 0x0000000000000001ull, 0x7fffffffffffffffull, 0x3},
    {"dfma", "fma rn f64 $c0 $r10d neg $r4d $r6d $r8d", 64, 0x0000000000000000ull, 0xffffffffffffffffull, 0x7ff0000000000000ull, 0xffffffffffffffffull, 0x3},
    {"dfma", "fma rn f64 $c0 $r10d neg $r4d $r6d $r8d", 64, 0x800fffffffffffffull, 0x7fe0000000000000ull, 0xffffffffffffffffull, 0xffffffffffffffffull, 0x3},
    {"dfma", "fma rp f64 $c0 $r10d neg $r4d $r6d neg $r8d", 64, 0x0000000000000123ull, 0xc1e0000000000000ull, 0x8000000000000001ull, 0x0000009180000001ull, 0x0},
    {"dfma", "fma rp f64 $c0 $r10d neg $r4d $r6d neg $r8d", 64, 0x0000000000000001ull, 0x0000000000000001ull, 0x000fffffffffffffull, 0x800fffffffffffffull, 0x2},
    {"dfma", "fma rp f64 $c0 $r10d neg $r4d $r6d neg $r8d", 64, 0xffffffffffffffffull, 0x0000000000001234ull, 0xffffffffffffff12ull, 0xffffffffffffff12ull, 0x3},
    {"dfma", "fma rp f64 $c0 $r10d neg $r4d $r6d neg $r8d", 64, 0xfffffffffffff123ull, 0x1dd0123456789abcull, 0xffffffffffffffffull, 0xffffffffffffffffull, 0x3},
    {"dfma", "fma rp f64 $c0 $r10d neg $r4d $r6d neg $r8d", 64, 0x7ff00aaa00000000ull, 0x0000000000000000ull, 0x800fffffffffffffull, 0x7ff80aaa00000000ull, 0x3},
    {"dfma", "fma rp f64 $c0 $r10d neg $r4d $r6d neg $r8d", 64, 0xffffffffffffffffull, 0x8000000000000001ull, 0x0000000000001234ull, 0xffffffffffffffffull, 0x3},
    {"dfma", "fma rm f64 $c0 $r10d neg $r4d $r6d $r8d", 64, 0x7fe0000000000000ull, 0x0010000000000001ull, 0x3ff0000000000001ull, 0xbff0000000000001ull, 0x2},
    {"dfma", "fma rm f64 $c0 $r10d neg $r4d $r6d $r8d", 64, 0x1dd0123456789abcull, 0x8000000000000001ull, 0x0000000000000000ull, 0x0000000000000000ull, 0x1},
    {"dfma", "fma rm f64 $c0 $r10d neg $r4d $r6d $r8d", 64, 0x0000000000000000ull, 0x0000000000000000ull, 0x7ff0000000000000ull, 0x7ff0000000000000ull, 0x0},
    {"dfma", "fma rm f64 $c0 $r10d neg $r4d $r6d $r8d", 64, 0x000fffffffffffffull, 0x43f0000000000000ull, 0x41f0000000000000ull, 0x41efffffffffffffull, 0x0},
    {"dfma", "fma rm f64 $c0 $r10d neg $r4d $r6d $r8d", 64, 0x41f0000000000000ull, 0x0000000000000123ull, 0x3ff0000000000001ull, 0x3ff0000000000000ull, 0x0},
    {"dfma", "fma rm f64 $c0 $r10d neg $r4d $r6d $r8d", 64, 0xfff00bbb00000000ull, 0x7fdfffffffffffffull, 0x0020000000000000ull, 0xfff80bbb00000000ull, 0x3},
    {"dadd", "add rz f64 $c0 $r10d $r4d $r8d", 64, 0x000fffffffffffffull, 0x3ff8000000000000ull, 0x0000000000000001ull, 0x0010000000000000ull, 0x0},
    {"dadd", "add rz f64 $c0 $r10d $r4d $r8d", 64, 0xc1e0000000000000ull, 0x0000000000000000ull, 0x1dd0123456789abcull, 0xc1dfffffffffffffull, 0x2},
    {"dadd", "add rz f64 $c0 $r10d $r4d $r8d", 64, 0xfff0000000000000ull, 0xfffffffffffff123ull, 0xfff0000000000000ull, 0xfff0000000000000ull, 0x2},
    {"dadd", "add rz f64 $c0 $r10d $r4d $r8d", 64, 0xc1e0000000000000ull, 0x0010000000000001ull, 0x0000000000000123ull, 0xc1dfffffffffffffull, 0x2},
    {"dadd", "add rz f64 $c0 $r10d $r4d $r8d", 64, 0xfff00bbb00000000ull, 0x0000000000000002ull, 0x7ff123456789abcdull, 0x7ff923456789abcdull, 0x3},
    {"dadd", "add rz f64 $c0 $r10d $r4d $r8d", 64, 0x3ff0000000000001ull, 0x0000000000001234ull, 0xc1e0000000000000ull, 0xc1dfffffffbfffffull, 0x2},
    {"dmul", "mul rm f64 $c0 $r10d neg $r4d $r6d", 64, 0x7fe0000000000000ull, 0x8000000000000001ull, 0x0020000000000000ull, 0x3cc0000000000000ull, 0x0},
    {"dmul", "mul rm f64 $c0 $r10d neg $r4d $r6d", 64, 0x7fffffffffffffffull, 0x3ff0000000000001ull, 0x8000000000000000ull, 0x7fffffffffffffffull, 0x3},
    {"dmul", "mul rm f64 $c0 $r10d neg $r4d $r6d", 64, 0x7fffffffffffffffull, 0x0000000000000002ull, 0x7fdfffffffffffffull, 0x7fffffffffffffffull, 0x3},
    {"dmul", "mul rm f64 $c0 $r10d neg $r4d $r6d", 64, 0x3ff0000000000001ull, 0xffffffffffffff12ull, 0x800fffffffffffffull, 0xffffffffffffff12ull, 0x3},
    {"dmul", "mul rm f64 $c0 $r10d neg $r4d $r6d", 64, 0x41f0000000000000ull, 0x41f0000000000000ull, 0xffffffffffffffffull, 0xc3f0000000000000ull, 0x2},
    {"dmul", "mul rm f64 $c0 $r10d neg $r4d $r6d", 64, 0x7ff00aaa00000000ull, 0x7ff123456789abcdull, 0x43f0000000000000ull, 0x7ff923456789abcdull, 0x3},
    {"dmin", "min f64 $c0 $r10d $r4d abs $r6d", 64, 0x3ff0000000000001ull, 0x0000000000000001ull, 0x7ff00aaa00000000ull, 0x0000000000000001ull, 0x0},
    {"dmin", "min f64 $c0 $r10d $r4d abs $r6d", 64, 0x0000000000000001ull, 0x3ff0000000000001ull, 0x7ff00aaa00000000ull, 0x0000000000000001ull, 0x0},
    {"dmin", "min f64 $c0 $r10d $r4d abs $r6d", 64, 0x41f0000000000000ull, 0x8000000000000001ull, 0x0010000000000001ull, 0x0000000000000001ull, 0x0},
    {"dmin", "min f64 $c0 $r10d $r4d abs $r6d", 64, 0x0000000000000123ull, 0xc1e0000000000000ull, 0x43f0000000000000ull, 0x0000000000000123ull, 0x0},
    {"dmin", "min f64 $c0 $r10d $r4d abs $r6d", 64, 0x3ff0000000000000ull, 0xfffffffffffff123ull, 0x0000000000001234ull, 0x3ff0000000000000ull, 0x0},
    {"dmin", "min f64 $c0 $r10d $r4d abs $r6d", 64, 0x0020000000000000ull, 0x0000000000000001ull, 0x7fe0000000000000ull, 0x0000000000000001ull, 0x0},
    {"dmin", "min f64 $c0 $r10d neg abs $r4d neg $r6d", 64, 0x0000000000001234ull, 0x0000000000000000ull, 0x7ff0000000000000ull, 0x8000000000001234ull, 0x2},
    {"dmin", "min f64 $c0 $r10d neg abs $r4d neg $r6d", 64, 0xffffffffffffffffull, 0x0000000000000002ull, 0x0010000000000001ull, 0x8000000000000002ull, 0x2},
    {"dmin", "min f64 $c0 $r10d neg abs $r4d neg $r6d", 64, 0x7ff123456789abcdull, 0xbff0000000000000ull, 0x7ff00aaa00000000ull, 0x3ff0000000000000ull, 0x0},
    {"dmin", "min f64 $c0 $r10d neg abs $r4d neg $r6d", 64, 0x41f0000000000000ull, 0xffffffffffff1234ull, 0xffffffffffff1234ull, 0xc1f0000000000000ull, 0x2},
    {"dmin", "min f64 $c0 $r10d neg abs $r4d neg $r6d", 64, 0x3ff0000000000000ull, 0x7fe0000000000000ull, 0xffffffffffffffffull, 0xffe0000000000000ull, 0x2},
    {"dmin", "min f64 $c0 $r10d neg abs $r4d neg $r6d", 64, 0x0000000000000001ull, 0x0000000000000000ull, 0xfff0000000000000ull, 0x8000000000000001ull, 0x2},
    {"dmax", "max f64 $c0 $r10d neg $r4d abs $r6d", 64, 0x7fffffffffffffffull, 0x7ff0000000000000ull, 0xfffffffffffff123ull, 0x7ff0000000000000ull, 0x0},
    {"dmax", "max f64 $c0 $r10d neg $r4d abs $r6d", 64, 0x3ff0000000000001ull, 0x1dd0123456789abcull, 0xffffffffffffffffull, 0x1dd0123456789abcull, 0x0},
    {"dmax", "max f64 $c0 $r10d neg $r4d abs $r6d", 64, 0x1dd0123456789abcull, 0x43f0000000000000ull, 0xbff0000000000000ull, 0x43f0000000000000ull, 0x0},
    {"dmax", "max f64 $c0 $r10d neg $r4d abs $r6d", 64, 0x7ff0000000000000ull, 0x800fffffffffffffull, 0xfffffffffffff123ull, 0x000fffffffffffffull, 0x0},
    {"dmax", "max f64 $c0 $r10d neg $r4d abs $r6d", 64, 0xbff0000000000000ull, 0x0020000000000000ull, 0xffffffffffffff12ull, 0x3ff0000000000000ull, 0x0},
    {"dmax", "max f64 $c0 $r10d neg $r4d abs $r6d", 64, 0x0010000000000001ull, 0x3ff8000000000000ull, 0x7ff123456789abcdull, 0x3ff8000000000000ull, 0x0},
    {"dmax", "max f64 $c0 $r10d abs $r4d neg abs $r6d", 64, 0x0020000000000000ull, 0x7ff00aaa00000000ull, 0xfff00bbb00000000ull, 0x0020000000000000ull, 0x0},
    {"dmax", "max f64 $c0 $r10d abs $r4d neg abs $r6d", 64, 0x0000000000001234ull, 0xfffffffffffff123ull, 0xfff00bbb00000000ull, 0x0000000000001234ull, 0x0},
    {"dmax", "max f64 $c0 $r10d abs $r4d neg abs $r6d", 64, 0x43f0000000000000ull, 0x7fffffffffffffffull, 0x7ff123456789abcdull, 0x43f0000000000000ull, 0x0},
    {"dmax", "max f64 $c0 $r10d abs $r4d neg abs $r6d", 64, 0x000fffffffffffffull, 0x7fdfffffffffffffull, 0x7fe0000000000000ull, 0x000fffffffffffffull, 0x0},
    {"dmax", "max f64 $c0 $r10d abs $r4d neg abs $r6d", 64, 0x000fffffffffffffull, 0x0010000000000001ull, 0x41f0000000000000ull, 0x000fffffffffffffull, 0x0},
    {"dmax", "max f64 $c0 $r10d abs $r4d neg abs $r6d", 64, 0x7fdfffffffffffffull, 0x8000000000000001ull, 0x7ff00aaa00000000ull, 0x7fdfffffffffffffull, 0x0},
    {"i2f64", "cvt neg abs sat rp f32 $c0 $r10 u64 $r4d", 32, 0x800fffffffffffffull, 0x7ff0000000000000ull, 0x3ff0000000000000ull, 0x00000000df001000ull, 0x2},
    {"i2f64", "cvt neg abs sat rp f32 $c0 $r10 u64 $r4d", 32, 0x0010000000000001ull, 0xffffffffffffffffull, 0xffffffffffffffffull, 0x00000000d9800001ull, 0x2},
    {"i2f64", "cvt neg abs sat rp f32 $c0 $r10 u64 $r4d", 32, 0xffffffffffffffffull, 0x3ff0000000000000ull, 0x0020000000000000ull, 0x00000000df800000ull, 0x2},
    {"i2f64", "cvt neg abs sat rp f32 $c0 $r10 u64 $r4d", 32, 0xffffffffffffffffull, 0xffffffffffffffffull, 0x0000000000000123ull, 0x00000000df800000ull, 0x2},
    {"i2f64", "cvt neg sat rp f64 $c0 $r10d s32 $r4", 64, 0xffffffffffff1234ull, 0x8000000000000000ull, 0x3ff0000000000001ull, 0x40edb98000000000ull, 0x0},
    {"i2f64", "cvt neg sat rp f64 $c0 $r10d s32 $r4", 64, 0x000fffffffffffffull, 0x0000000000001234ull, 0xffffffffffffffffull, 0x3ff0000000000000ull, 0x0},
    {"i2f64", "cvt neg sat rp f64 $c0 $r10d s32 $r4", 64, 0x0000000000000000ull, 0x0000000000000001ull, 0x7ff123456789abcdull, 0x8000000000000000ull, 0x1},
    {"i2f64", "cvt neg sat rp f64 $c0 $r10d s32 $r4", 64, 0xbff0000000000000ull, 0xbff0000000000000ull, 0x8000000000000000ull, 0x8000000000000000ull, 0x1},
    {"i2f64", "cvt neg abs sat rm f64 $c0 $r10d s64 $r4d", 64, 0x41f0000000000000ull, 0xc1e0000000000000ull, 0xffffffffffff1234ull, 0xc3d07c0000000000ull, 0x2},
    {"i2f64", "cvt neg abs sat rm f64 $c0 $r10d s64 $r4d", 64, 0xffffffffffffffffull, 0xfff00bbb00000000ull, 0xc1e0000000000000ull, 0xbff0000000000000ull, 0x2},
    {"i2f64", "cvt neg abs sat rm f64 $c0 $r10d s64 $r4d", 64, 0x0000000000000123ull, 0x0000000000000000ull, 0xc1e0000000000000ull, 0xc072300000000000ull, 0x2},
    {"i2f64", "cvt neg abs sat rm f64 $c0 $r10d s64 $r4d", 64, 0x7fe0000000000000ull, 0x7fdfffffffffffffull, 0x800fffffffffffffull, 0xc3dff80000000000ull, 0x2},
    {"i2f64", "cvt rz f64 $c0 $r10d s64 $r4d", 64, 0xffffffffffffffffull, 0x7ff0000000000000ull, 0x7fe0000000000000ull, 0xbff0000000000000ull, 0x2},
    {"i2f64", "cvt rz f64 $c0 $r10d s64 $r4d", 64, 0x000fffffffffffffull, 0x8000000000000001ull, 0x800fffffffffffffull, 0x432ffffffffffffeull, 0x0},
    {"i2f64", "cvt rz f64 $c0 $r10d s64 $r4d", 64, 0x0000000000000000ull, 0x000fffffffffffffull, 0x0000000000000002ull, 0x0000000000000000ull, 0x1},
    {"i2f64", "cvt rz f64 $c0 $r10d s64 $r4d", 64, 0xffffffffffffffffull, 0xfff00bbb00000000ull, 0x7ff00aaa00000000ull, 0xbff0000000000000ull, 0x2},
    {"f2i64", "cvt neg abs rpi s64 $c0 $r10d f64 $r4d", 64, 0x8000000000000001ull, 0x0010000000000001ull, 0xbff0000000000000ull, 0x0000000000000000ull, 0x1},
    {"f2i64", "cvt neg abs rpi s64 $c0 $r10d f64 $r4d", 64, 0xffffffffffffffffull, 0xffffffffffffff12ull, 0x43f0000000000000ull, 0x8000000000000000ull, 0xa},
    {"f2i64", "cvt neg abs rpi s64 $c0 $r10d f64 $r4d", 64, 0xffffffffffffff12ull, 0x7fdfffffffffffffull, 0x3ff0000000000001ull, 0x8000000000000000ull, 0xa},
    {"f2i64", "cvt neg abs rpi s64 $c0 $r10d f64 $r4d", 64, 0x800fffffffffffffull, 0xffffffffffffffffull, 0x0010000000000001ull, 0x0000000000000000ull, 0x1},
    {"f2i64", "cvt neg rzi u64 $c0 $r10d f64 $r4d", 64, 0x0000000000000000ull, 0x8000000000000000ull, 0x8000000000000001ull, 0x0000000000000000ull, 0x1},
    {"f2i64", "cvt neg rzi u64 $c0 $r10d f64 $r4d", 64, 0x0020000000000000ull, 0x800fffffffffffffull, 0x41f0000000000000ull, 0x0000000000000000ull, 0x1},
    {"f2i64", "cvt neg rzi u64 $c0 $r10d f64 $r4d", 64, 0xfffffffffffff123ull, 0x7ff123456789abcdull, 0x1dd0123456789abcull, 0x8000000000000000ull, 0xa},
    {"f2i64", "cvt neg rzi u64 $c0 $r10d f64 $r4d", 64, 0x0000000000000001ull, 0x8000000000000000ull, 0xfff00bbb00000000ull, 0x0000000000000000ull, 0x1},
    {"f2i64", "cvt abs rzi s64 $c0 $r10d f64 $r4d", 64, 0x7fffffffffffffffull, 0x0020000000000000ull, 0x43f0000000000000ull, 0x8000000000000000ull, 0xa},
    {"f2i64", "cvt abs rzi s64 $c0 $r10d f64 $r4d", 64, 0xfff00bbb00000000ull, 0x0020000000000000ull, 0x3ff8000000000000ull, 0x8000000000000000ull, 0xa},
    {"f2i64", "cvt abs rzi s64 $c0 $r10d f64 $r4d", 64, 0xfff00bbb00000000ull, 0xfffffffffffff123ull, 0xc1e0000000000000ull, 0x8000000000000000ull, 0xa},
    {"f2i64", "cvt abs rzi s64 $c0 $r10d f64 $r4d", 64, 0x0010000000000001ull, 0x0000000000000002ull, 0x0010000000000001ull, 0x0000000000000000ull, 0x1},
    {"f2i64", "cvt neg abs rzi s64 $c0 $r10d f32 $r4", 64, 0x1dd0123456789abcull, 0xfff0000000000000ull, 0xfff0000000000000ull, 0xffffc1d951000000ull, 0x2},
    {"f2i64", "cvt neg abs rzi s64 $c0 $r10d f32 $r4", 64, 0x0010000000000001ull, 0xffffffffffffffffull, 0x8000000000000000ull, 0x0000000000000000ull, 0x1},
    {"f2i64", "cvt neg abs rzi s64 $c0 $r10d f32 $r4", 64, 0xffffffffffffff12ull, 0xffffffffffffff12ull, 0xffffffffffffff12ull, 0x8000000000000000ull, 0xa},
    {"f2i64", "cvt neg abs rzi s64 $c0 $r10d f32 $r4", 64, 0x43f0000000000000ull, 0xfff0000000000000ull, 0x0010000000000001ull, 0x0000000000000000ull, 0x1},
    {"f2f64", "cvt neg abs rp f32 $c0 $r10 f64 $r4d", 32, 0xffffffffffffffffull, 0x3ff0000000000001ull, 0x0000000000001234ull, 0x00000000ffffffffull, 0x3},
    {"f2f64", "cvt neg abs rp f32 $c0 $r10 f64 $r4d", 32, 0xc1e0000000000000ull, 0x3ff8000000000000ull, 0x7fe0000000000000ull, 0x00000000cf000000ull, 0x2},
    {"f2f64", "cvt neg abs rp f32 $c0 $r10 f64 $r4d", 32, 0xffffffffffff1234ull, 0x0000000000000000ull, 0x0000000000000123ull, 0x00000000ffffffffull, 0x3},
    {"f2f64", "cvt neg abs rp f32 $c0 $r10 f64 $r4d", 32, 0x0000000000000002ull, 0x7fdfffffffffffffull, 0xfff00bbb00000000ull, 0x0000000080000000ull, 0x1},
    {"f2f64", "cvt rp f32 $c0 $r10 f64 $r4d", 32, 0x1dd0123456789abcull, 0x3ff0000000000001ull, 0x7ff123456789abcdull, 0x0000000000000001ull, 0x0},
    {"f2f64", "cvt rp f32 $c0 $r10 f64 $r4d", 32, 0xfff00bbb00000000ull, 0x7ff123456789abcdull, 0x0000000000000001ull, 0x00000000ffc05dd8ull, 0x3},
    {"f2f64", "cvt rp f32 $c0 $r10 f64 $r4d", 32, 0xfff00bbb00000000ull, 0x0000000000000001ull, 0xffffffffffffffffull, 0x00000000ffc05dd8ull, 0x3},
    {"f2f64", "cvt rp f32 $c0 $r10 f64 $r4d", 32, 0x0000000000000002ull, 0x3ff8000000000000ull, 0x0020000000000000ull, 0x0000000000000001ull, 0x0},
    {"f2f64", "cvt neg abs rn f32 $c0 $r10 f64 $r4d", 32, 0x7ff123456789abcdull, 0xbff0000000000000ull, 0x3ff0000000000000ull, 0x000000007fc91a2bull, 0x3},
    {"f2f64", "cvt neg abs rn f32 $c0 $r10 f64 $r4d", 32, 0x43f0000000000000ull, 0x000fffffffffffffull, 0xbff0000000000000ull, 0x00000000df800000ull, 0x2},
    {"f2f64", "cvt neg abs rn f32 $c0 $r10 f64 $r4d", 32, 0x0010000000000001ull, 0xbff0000000000000ull, 0xffffffffffffffffull, 0x0000000080000000ull, 0x1},
    {"f2f64", "cvt neg abs rn f32 $c0 $r10 f64 $r4d", 32, 0x7ff123456789abcdull, 0xfffffffffffff123ull, 0xfff00bbb00000000ull, 0x000000007fc91a2bull, 0x3},
    {"f2f64", "cvt f64 $c0 $r10d f64 $r4d", 64, 0xffffffffffff1234ull, 0x0000000000000000ull, 0xfff0000000000000ull, 0xffffffffffff1234ull, 0x3},
    {"f2f64", "cvt f64 $c0 $r10d f64 $r4d", 64, 0x7fe0000000000000ull, 0xfffffffffffff123ull, 0x0010000000000001ull, 0x7fe0000000000000ull, 0x0},
    {"f2f64", "cvt f64 $c0 $r10d f64 $r4d", 64, 0x7ff0000000000000ull, 0x0000000000000000ull, 0x7ff123456789abcdull, 0x7ff0000000000000ull, 0x0},
    {"f2f64", "cvt f64 $c0 $r10d f64 $r4d", 64, 0x0000000000000001ull, 0x8000000000000001ull, 0x7ff00aaa00000000ull, 0x0000000000000001ull, 0x0},
    {"dadd NaN order", "add rn f64 $c0 $r10d $r4d $r8d", 64, 0x7ff0000000000001ull, 0, 0xfff0000000000002ull, 0xfff8000000000002ull, 0x3},
    {"dadd inf - inf", "add rn f64 $c0 $r10d $r4d $r8d", 64, 0x7ff0000000000000ull, 0, 0xfff0000000000000ull, 0xfff8000000000000ull, 0x3},
    {"cvt s32 of an f64 NaN", "cvt rni s32 $c0 $r10 f64 $r4d", 32, 0x7ff123456789abcdull, 0, 0, 0x80000000ull, 0xa},
    {"cvt f32 of an f64 NaN", "cvt rn f32 $c0 $r10 f64 $r4d", 32, 0xfff123456789abcdull, 0, 0, 0xffc91a2bull, 0x3},
    {"cvt f64 of an f32 NaN", "cvt f64 $c0 $r10d f32 $r4", 64, 0x7f812345ull, 0, 0, 0x7ff82468a0000000ull, 0x3},
    // dcmp (hwtest g80_fp64): the 32-bit result and its flags.
    {"dcmp", "set $c0 $r10 gu f64 neg abs $r4d $r6d", 32, 0xfff0000000000000ull, 0x0000000000000000ull, 0x7fe0000000000000ull, 0x0000000000000000ull, 0x1},
    {"dcmp", "set $c0 $r10 gu f64 neg abs $r4d $r6d", 32, 0xffffffffffffffffull, 0xbff0000000000000ull, 0x7ff00aaa00000000ull, 0x00000000ffffffffull, 0x2},
    {"dcmp", "set $c0 $r10 gu f64 neg abs $r4d $r6d", 32, 0x0000000000001234ull, 0x3ff8000000000000ull, 0x0000000000000123ull, 0x0000000000000000ull, 0x1},
    {"dcmp", "set $c0 $r10 gu f64 neg abs $r4d $r6d", 32, 0x41f0000000000000ull, 0x1dd0123456789abcull, 0xc1e0000000000000ull, 0x0000000000000000ull, 0x1},
    {"dcmp", "set $c0 $r10 gu f64 neg abs $r4d $r6d", 32, 0x0000000000000000ull, 0x8000000000000000ull, 0x7ff0000000000000ull, 0x0000000000000000ull, 0x1},
    {"dcmp", "set $c0 $r10 u f64 abs $r4d abs $r6d", 32, 0x800fffffffffffffull, 0x3ff0000000000001ull, 0xffffffffffffffffull, 0x0000000000000000ull, 0x1},
    {"dcmp", "set $c0 $r10 u f64 abs $r4d abs $r6d", 32, 0x8000000000000000ull, 0x3ff0000000000000ull, 0x7fdfffffffffffffull, 0x0000000000000000ull, 0x1},
    {"dcmp", "set $c0 $r10 u f64 abs $r4d abs $r6d", 32, 0x7ff123456789abcdull, 0x0000000000000001ull, 0x7fffffffffffffffull, 0x00000000ffffffffull, 0x2},
    {"dcmp", "set $c0 $r10 u f64 abs $r4d abs $r6d", 32, 0x7fe0000000000000ull, 0xfff0000000000000ull, 0xfff0000000000000ull, 0x0000000000000000ull, 0x1},
    {"dcmp", "set $c0 $r10 u f64 abs $r4d abs $r6d", 32, 0xfffffffffffff123ull, 0xfff00bbb00000000ull, 0x3ff0000000000000ull, 0x00000000ffffffffull, 0x2},
};

// Integer forms (hwtest g80_int: iadd/sub/subr/addc with sat, set, shl/shr,
// mul16/mul24, the integer mad and logop, long, short and immediate):
// sources $r4 $r5 $r6 (halves: the low ones), $c0 = cc_in (addc reads its C),
// the long forms' flags in $c1 (0xf: the form writes none).
struct VecInt {
  const char* family;
  const char* text;
  int dst;
  uint32_t s1, s2, s3, cc_in, expect, cc;
};
const VecInt kVecInt[] = {
    {"iadd", "subr b16 sat $c1 $r7l $r4l $r6l", -14, 0x06e3a766u, 0xffffffb3u, 0x30ef5eceu, 0x1, 0x00007fffu, 0x8},
    {"iadd", "subr b16 sat $c1 $r7l $r4l $r6l", -14, 0x007fffffu, 0x00000032u, 0xffffffcau, 0x8, 0x0000ffcbu, 0x2},
    {"iadd", "subr b16 sat $c1 $r7l $r4l $r6l", -14, 0xfffffffeu, 0x13b40eeeu, 0xd0413adcu, 0x1, 0x00003adeu, 0x0},
    {"iadd", "subr b16 sat $c1 $r7l $r4l $r6l", -14, 0xffffffcau, 0xbfe5c981u, 0xbff6de08u, 0x1, 0x0000de3eu, 0x2},
    {"iadd", "sub b16 sat $c1 $r7l $r4l $r6l", -14, 0xcc95e91bu, 0xffffffb7u, 0x251542a1u, 0x9, 0x0000a67au, 0x6},
    {"iadd", "sub b16 sat $c1 $r7l $r4l $r6l", -14, 0x40366eeau, 0xffffffc6u, 0x0000004du, 0xb, 0x00006e9du, 0x4},
    {"icmp", "set $c1 $r7l le s16 $r4l $r5l", -14, 0x8e6bcd03u, 0x7f000000u, 0x0000000eu, 0x0, 0x0000ffffu, 0x2},
    {"icmp", "set $c1 $r7l le s16 $r4l $r5l", -14, 0x845b75ddu, 0x2aced2abu, 0xff800bbbu, 0x5, 0x00000000u, 0x1},
    {"icmp", "set $c1 $r7l le s16 $r4l $r5l", -14, 0xffffffe5u, 0x0000003au, 0xffffffa4u, 0x2, 0x0000ffffu, 0x2},
    {"icmp", "set $c1 $r7l le s16 $r4l $r5l", -14, 0x7fffffffu, 0x7fffffefu, 0x0000003du, 0xe, 0x00000000u, 0x1},
    {"icmp", "set $c1 $r7 always s32 $r4 $r5", 7, 0xffffffc0u, 0x7f800000u, 0x9177ba80u, 0x9, 0xffffffffu, 0x2},
    {"icmp", "set $c1 $r7 always s32 $r4 $r5", 7, 0xffffffa4u, 0xffffffeau, 0x0000002fu, 0x3, 0xffffffffu, 0x2},
    {"shift", "shr s16 $c1 $r7l $r4l 0x7f", -14, 0x00000043u, 0xffffffdcu, 0xffffffb6u, 0x6, 0x00000000u, 0x1},
    {"shift", "shr s16 $c1 $r7l $r4l 0x7f", -14, 0x0c59aca6u, 0x43e9ec57u, 0x5eb01600u, 0x3, 0x0000ffffu, 0x2},
    {"shift", "shr s16 $c1 $r7l $r4l 0x7f", -14, 0xfffffffeu, 0xffffffbau, 0xffffff9bu, 0xa, 0x0000ffffu, 0x2},
    {"shift", "shr s16 $c1 $r7l $r4l 0x7f", -14, 0x3ae04df8u, 0xfffffff5u, 0x276c2bc1u, 0xb, 0x00000000u, 0x1},
    {"imul", "mul $c1 $r7 u24 $r4 $r5", 7, 0x00000046u, 0x0000007eu, 0x00000069u, 0xb, 0x00002274u, 0x0},
    {"imul", "mul $c1 $r7 u24 $r4 $r5", 7, 0x152066f6u, 0xaf4550b2u, 0x26b16e3au, 0x8, 0xf702770cu, 0x2},
    {"imul", "mul $c1 $r7 u24 $r4 $r5", 7, 0x4760ba1fu, 0x00000034u, 0x01000000u, 0xd, 0x13a5ce4cu, 0x0},
    {"imul", "mul $c1 $r7 u24 $r4 $r5", 7, 0x7f800aaau, 0xb09dc9ffu, 0x0000002eu, 0x4, 0x922c1956u, 0x2},
    {"imad", "addc sat $c1 $r7 (mul high s24 $r4 $r5) $r6 $c0", 7, 0xffffff95u, 0xcdbc17a7u, 0x0000007du, 0x3, 0x00001cdfu, 0x0},
    {"imad", "addc sat $c1 $r7 (mul high s24 $r4 $r5) $r6 $c0", 7, 0xffffffdcu, 0x00000001u, 0x5af0e922u, 0xc, 0x5af0e922u, 0x4},
    {"imad", "addc sat $c1 $r7 (mul high s24 $r4 $r5) $r6 $c0", 7, 0x3a182771u, 0xdfae1bc0u, 0xff800bbbu, 0x9, 0xf7c607cfu, 0x6},
    {"imad", "addc sat $c1 $r7 (mul high s24 $r4 $r5) $r6 $c0", 7, 0xffffffaau, 0x764ecebfu, 0x00000033u, 0x0, 0xffffe5b9u, 0x2},
    {"imad", "addc $c1 $r7 (mul s16 $r4l $r5l) $r6 $c0", 7, 0x87d0e1acu, 0x0000003au, 0x82551f2du, 0xb, 0x824e4025u, 0x6},
    {"imad", "addc $c1 $r7 (mul s16 $r4l $r5l) $r6 $c0", 7, 0x8000001fu, 0x80000000u, 0xbf0192dbu, 0x3, 0xbf0192dbu, 0x2},
    {"logop", "mov2 b16 $c1 $r7l not $r4l $r5l", -14, 0xd41a184fu, 0x0000005du, 0xc811e32du, 0x5, 0x0000005du, 0x0},
    {"logop", "mov2 b16 $c1 $r7l not $r4l $r5l", -14, 0x0000006cu, 0x00000021u, 0xead7e22bu, 0x5, 0x00000021u, 0x0},
    {"logop", "mov2 b16 $c1 $r7l not $r4l $r5l", -14, 0x00000016u, 0x00000064u, 0xffffff9au, 0x1, 0x00000064u, 0x0},
    {"logop", "mov2 b16 $c1 $r7l not $r4l $r5l", -14, 0x00000024u, 0xffffffc3u, 0xffffffddu, 0xc, 0x0000ffc3u, 0x2},
    {"logop", "or b32 $c1 $r7 not $r4 $r5", 7, 0x32ea93d2u, 0x0000007fu, 0xffffff82u, 0x8, 0xcd156c7fu, 0x2},
    {"logop", "or b32 $c1 $r7 not $r4 $r5", 7, 0xdbfaa4f6u, 0x0000006bu, 0x00000020u, 0x4, 0x24055b6bu, 0x0},
    {"iadd_s", "add sat b16 $r6l $r4l $r5l", -12, 0x060f2b8du, 0x00000040u, 0x00000079u, 0xa, 0x00002bcdu, 0xf},
    {"iadd_s", "add sat b16 $r6l $r4l $r5l", -12, 0x00000054u, 0x80000001u, 0x807fffffu, 0x8, 0x00000055u, 0xf},
    {"iadd_s", "add sat b16 $r6l $r4l $r5l", -12, 0xffffffb2u, 0x00000023u, 0xffffffa9u, 0x7, 0x0000ffd5u, 0xf},
    {"iadd_s", "add sat b16 $r6l $r4l $r5l", -12, 0x3f800000u, 0x7fffffefu, 0x85da2df6u, 0x8, 0x0000ffefu, 0xf},
    {"iadd_s", "sub b16 $r6l $r4l $r5l", -12, 0x7f000000u, 0xffffffe9u, 0xb4a68bf5u, 0x9, 0x00000017u, 0xf},
    {"iadd_s", "sub b16 $r6l $r4l $r5l", -12, 0x0000006cu, 0xc8881f91u, 0x80000020u, 0x2, 0x0000e0dbu, 0xf},
    {"imul_s", "mul $r6 high u24 $r4 $r5", 6, 0x05bb9992u, 0xffffffcfu, 0x00000008u, 0xf, 0xbb996e17u, 0xf},
    {"imul_s", "mul $r6 high u24 $r4 $r5", 6, 0xffffffb4u, 0xfffffffdu, 0xdb0a1d0au, 0x4, 0xffffb100u, 0xf},
    {"imul_s", "mul $r6 high u24 $r4 $r5", 6, 0x0000007au, 0xa5c1ffa1u, 0xffffffe4u, 0x0, 0x00005c73u, 0xf},
    {"imul_s", "mul $r6 high u24 $r4 $r5", 6, 0x34ce1097u, 0xa2198eefu, 0x00000042u, 0x4, 0x1492ac54u, 0xf},
    {"imul_s", "mul $r6 high s24 $r4 $r5", 6, 0x0000004eu, 0x28d2bba2u, 0x7c693072u, 0xa, 0xfffff235u, 0xf},
    {"imul_s", "mul $r6 high s24 $r4 $r5", 6, 0xffffff8au, 0x107f76dbu, 0x80000000u, 0x2, 0xffffc53fu, 0xf},
    {"imad_s", "subr $r6 (mul s16 $r4l $r5l) $r6", 6, 0x1365f85du, 0xffffffbcu, 0x340405c3u, 0x9, 0x3401fe77u, 0xf},
    {"imad_s", "subr $r6 (mul s16 $r4l $r5l) $r6", 6, 0x00000073u, 0x00000053u, 0xa8b71d7bu, 0xd, 0xa8b6f832u, 0xf},
    {"imad_s", "subr $r6 (mul s16 $r4l $r5l) $r6", 6, 0x7f800000u, 0x7f812345u, 0xffffffeeu, 0xd, 0xffffffeeu, 0xf},
    {"imad_s", "subr $r6 (mul s16 $r4l $r5l) $r6", 6, 0xffffff83u, 0xffffffaau, 0xffffffcau, 0x9, 0xffffd5ccu, 0xf},
    {"imad_s", "add $r6 (mul u16 $r4l $r5l) $r6", 6, 0xffffffa6u, 0xffffffffu, 0x3535a0cau, 0x4, 0x34daa124u, 0xf},
    {"imad_s", "add $r6 (mul u16 $r4l $r5l) $r6", 6, 0x4b03650eu, 0x00000006u, 0xffffffbcu, 0x8, 0x00025e10u, 0xf},
    {"iadd_i", "subr b32 $r6 $r4 0xd80e7c0f", 6, 0x3fdad69au, 0x00000078u, 0xffffffdcu, 0xf, 0x9833a575u, 0xf},
    {"iadd_i", "subr b32 $r6 $r4 0xd80e7c0f", 6, 0xfc000000u, 0x0000006du, 0xffffffbdu, 0x0, 0xdc0e7c0fu, 0xf},
    {"iadd_i", "subr b32 $r6 $r4 0xd80e7c0f", 6, 0x27773ae0u, 0x2377d98bu, 0x0d07f5abu, 0x6, 0xb097412fu, 0xf},
    {"iadd_i", "subr b32 $r6 $r4 0xd80e7c0f", 6, 0x00000019u, 0xe8c6b73fu, 0x817e975au, 0xa, 0xd80e7bf6u, 0xf},
    {"iadd_i", "add b32 $r6 $r4 0x3783b602", 6, 0xe5e05ad3u, 0xffffffccu, 0x00000007u, 0xc, 0x1d6410d5u, 0xf},
    {"iadd_i", "add b32 $r6 $r4 0x3783b602", 6, 0x00000049u, 0xf4a6141au, 0x45ede177u, 0x3, 0x3783b64bu, 0xf},
    {"imul_i", "mul $r6 u16 $r4l u16 0xe546a78", 6, 0x6d92ec6cu, 0x4b1decb0u, 0x807fffffu, 0x5, 0x62538aa0u, 0xf},
    {"imul_i", "mul $r6 u16 $r4l u16 0xe546a78", 6, 0x80000021u, 0x00000043u, 0xffffffdau, 0x2, 0x000db978u, 0xf},
    {"imul_i", "mul $r6 u16 $r4l u16 0xe546a78", 6, 0xffffffd5u, 0xb6798605u, 0xffffff84u, 0xb, 0x6a661dd8u, 0xf},
    {"imul_i", "mul $r6 u16 $r4l u16 0xe546a78", 6, 0x7f800000u, 0x893b738fu, 0xffffff85u, 0xb, 0x00000000u, 0xf},
    {"imul_i", "mul $r6 u16 $r4l s16 0x300e0e39", 6, 0x724920d2u, 0x22c7c84cu, 0x00000004u, 0xd, 0x01d2cac2u, 0xf},
    {"imul_i", "mul $r6 u16 $r4l s16 0x300e0e39", 6, 0x00000000u, 0x0000005eu, 0x126145f1u, 0xe, 0x00000000u, 0xf},
    {"imad_i", "addc $r6 (mul u24 $r4 0x245540e8) $r6 $c0", 6, 0x00000077u, 0xc64cbd0du, 0x0000000eu, 0x6, 0x27a12be7u, 0xf},
    {"imad_i", "addc $r6 (mul u24 $r4 0x245540e8) $r6 $c0", 6, 0xfdffffffu, 0x7ffffff1u, 0x3052ec10u, 0x7, 0x17fdab29u, 0xf},
    {"imad_i", "addc $r6 (mul u24 $r4 0x245540e8) $r6 $c0", 6, 0x373f5508u, 0x7fffffe0u, 0xffffffffu, 0x8, 0x4a4f0f3fu, 0xf},
    {"imad_i", "addc $r6 (mul u24 $r4 0x245540e8) $r6 $c0", 6, 0x00000037u, 0xfffffff2u, 0x0000001cu, 0x3, 0x1250f1f4u, 0xf},
    {"imad_i", "addc sat $r6 (mul s16 $r4l 0x4ca67723) $r6 $c0", 6, 0x250aea4fu, 0x00000064u, 0xa8028724u, 0xf, 0x9dea48f2u, 0xf},
    {"imad_i", "addc sat $r6 (mul s16 $r4l 0x4ca67723) $r6 $c0", 6, 0xfffffff0u, 0x0000007fu, 0x0000003au, 0x6, 0xfff88e0bu, 0xf},
    {"logop_i", "and b32 $r6 not $r4 0xbed69497", 6, 0x0000003fu, 0x00000003u, 0x02378fc5u, 0x3, 0xbed69480u, 0xf},
    {"logop_i", "and b32 $r6 not $r4 0xbed69497", 6, 0xbc6a9f10u, 0x00000037u, 0x8000001fu, 0x4, 0x02940087u, 0xf},
    {"logop_i", "and b32 $r6 not $r4 0xbed69497", 6, 0x86ce3be3u, 0xffffff94u, 0x00000021u, 0xd, 0x38108414u, 0xf},
    {"logop_i", "and b32 $r6 not $r4 0xbed69497", 6, 0x6933e88du, 0xffffffc8u, 0x0000000cu, 0x8, 0x96c41412u, 0xf},
    {"logop_i", "and b32 $r6 $r4 0x3b204af0", 6, 0x00000008u, 0x0000007du, 0x306ebc08u, 0x0, 0x00000000u, 0xf},
    {"logop_i", "and b32 $r6 $r4 0x3b204af0", 6, 0xffffffceu, 0x00000003u, 0x2c158444u, 0x3, 0x3b204ac0u, 0xf},
};

uint32_t half_or_word(const ThreadState& t, int dst) {
  if (dst >= 0) return t.r[dst];
  unsigned h = unsigned(-dst);
  return (t.r[h / 2] >> (16 * (h & 1))) & 0xffff;
}

std::string program(const char* text) {
  // A short instruction is paired with a short mov so the exit stays aligned.
  return std::string(text) + "\nmov b32 $r0 $r0\nexit nop\n";
}

// Runs `src` on the interpreter with `init` in every thread, checks lane 0
// with `check`, then every engine against the interpreter.
void run_everywhere(const std::string& src, const std::function<void(unsigned, ThreadState&)>& init,
                    const std::function<void(const ThreadState&)>& check) {
  Case c;
  c.src = src;
  c.threads = 32;
  c.init = init;
  Target t;
  std::string err;
  REQUIRE(parse_target(c.variant, t, err));
  std::vector<uint32_t> code;
  INFO(src);
  REQUIRE_MESSAGE(assemble(src, t, code, err), err);
  EndState ref = run_reference(c, code, t);
  INFO("reference: " << ref.error);
  REQUIRE(ref.ok);
  check(ref.threads[0]);
  for (gpurc::Engine eng : gpurc::host_engines()) {
    INFO("engine " << std::string(gpurc::engine_name(eng)));
    EndState got = run_translated(c, code, t, eng);
    INFO(got.error);
    REQUIRE(got.ok);
    compare_states(c, ref, got);
  }
}

}  // namespace

TEST_CASE("tesla hardware numbers: f32, f16 and integer forms match envytools' models") {
  for (const Vec32& v : kVec32) {
    CAPTURE(v.family);
    CAPTURE(v.text);
    INFO("sources " << hex(v.s1) << " " << hex(v.s2) << " " << hex(v.s3));
    run_everywhere(
        program(v.text),
        [&](unsigned, ThreadState& s) {
          s.r[4] = v.s1, s.r[5] = v.s2, s.r[6] = v.s3, s.r[7] = 0xcccccccc;
        },
        [&](const ThreadState& s) {
          CHECK(hex(half_or_word(s, v.dst)) == hex(v.expect));
          if (v.cc != 0xf) CHECK(unsigned(s.c[0]) == v.cc);
        });
  }
}

TEST_CASE("tesla hardware numbers: f64 forms and f64 conversions match envytools' models") {
  for (const Vec64& v : kVec64) {
    CAPTURE(v.family);
    CAPTURE(v.text);
    run_everywhere(
        program(v.text),
        [&](unsigned, ThreadState& s) {
          s.r[4] = uint32_t(v.s1), s.r[5] = uint32_t(v.s1 >> 32);
          s.r[6] = uint32_t(v.s2), s.r[7] = uint32_t(v.s2 >> 32);
          s.r[8] = uint32_t(v.s3), s.r[9] = uint32_t(v.s3 >> 32);
          s.r[10] = 0xcccccccc, s.r[11] = 0xdeadbeef;
        },
        [&](const ThreadState& s) {
          uint64_t got = s.r[10] | (v.bits == 64 ? uint64_t(s.r[11]) << 32 : 0);
          CHECK(got == v.expect);
          CHECK(unsigned(s.c[0]) == v.cc);
        });
  }
}

// Every engine against the interpreter on the special values, lane by lane:
// each lane takes another combination of hwtest's special operands.
TEST_CASE("tesla hardware numbers: every engine agrees on special operands") {
  static const uint32_t special[] = {0x00000000, 0x00000001, 0x007fffff, 0x80000000, 0x80000001, 0x807fffff,
                                     0x7fffffff, 0xffffffff, 0x7f800aaa, 0x7f812345, 0xff800bbb, 0x7f800000,
                                     0xff800000, 0x3f800000, 0x3f800001, 0xbf800000, 0x7f000000, 0x7effffff,
                                     0x01000000, 0x00800001, 0x7f7fffff, 0xff7fffff, 0x0000ffff, 0x00008000};
  const size_t n = sizeof special / sizeof special[0];
  std::vector<std::string> texts;
  for (const Vec32& v : kVec32) texts.push_back(v.text);
  for (const Vec64& v : kVec64) texts.push_back(v.text);
  std::sort(texts.begin(), texts.end());
  texts.erase(std::unique(texts.begin(), texts.end()), texts.end());
  unsigned round = 0;
  for (const std::string& text : texts) {
    CAPTURE(text);
    ++round;
    run_everywhere(
        program(text.c_str()),
        [&](unsigned lane, ThreadState& s) {
          for (unsigned r = 4; r < 12; ++r) s.r[r] = special[(lane * (r + 1) + round * 7 + r) % n];
        },
        [](const ThreadState&) {});
  }
}

// fmad where the product leaves the float range (the translation scales
// those lanes) and where the sum lands next to 2^-126: random lanes
// against the interpreter's exact computation on every engine.
TEST_CASE("tesla hardware numbers: fmad at the ends of the float range on every engine") {
  std::mt19937 rng(14);
  auto make = [&](int exp) {  // a float with a random significand and sign, exponent field `exp`
    return uint32_t(rng() & 0x807fffffu) | uint32_t(std::clamp(exp, 1, 254)) << 23;
  };
  const int rounds = light() ? 6 : 24;
  for (int round = 0; round < rounds; ++round) {
    CAPTURE(round);
    std::vector<uint32_t> a(32), b(32), c(32);
    for (unsigned l = 0; l < 32; ++l) {
      int kind = int(rng() % 4);
      int ea, eb;
      if (kind == 0) {  // product above 2^127
        ea = 190 + int(rng() % 64), eb = 382 - ea + int(rng() % 40);
      } else if (kind == 1) {  // product below 2^-100
        ea = 1 + int(rng() % 40), eb = 1 + int(rng() % 60);
      } else {  // product near 2^-126, source 3 nearly cancelling it
        ea = 60 + int(rng() % 10), eb = 127 - 126 + 127 - ea + int(rng() % 5) - 2;
      }
      a[l] = make(ea);
      b[l] = make(eb);
      int pe = ea + eb - 127;
      if (kind == 2) {
        // c = -(a b) rounded, plus a nudge: the sum falls near 2^-126
        float p = 0;
        float fa, fb;
        std::memcpy(&fa, &a[l], 4);
        std::memcpy(&fb, &b[l], 4);
        p = fa * fb;
        uint32_t pb;
        std::memcpy(&pb, &p, 4);
        c[l] = (pb ^ 0x80000000u) + (rng() % 3) - 1;
      } else {
        c[l] = (rng() % 5 == 0) ? 0u : make(pe + int(rng() % 60) - 30);
      }
    }
    for (const char* text : {"add f32 $c0 $r7 (mul $r4 $r5) $r6", "add sat f32 $c0 $r7 neg (mul $r4 $r5) $r6"}) {
      CAPTURE(text);
      run_everywhere(
          program(text),
          [&](unsigned lane, ThreadState& s) {
            s.r[4] = a[lane], s.r[5] = b[lane], s.r[6] = c[lane], s.r[7] = 0;
          },
          [](const ThreadState&) {});
    }
  }
}

TEST_CASE("tesla hardware numbers: integer forms match envytools' models") {
  for (const VecInt& v : kVecInt) {
    CAPTURE(v.family);
    CAPTURE(v.text);
    INFO("sources " << hex(v.s1) << " " << hex(v.s2) << " " << hex(v.s3) << " $c0 " << v.cc_in);
    run_everywhere(
        program(v.text),
        [&](unsigned, ThreadState& s) {
          s.r[4] = v.s1, s.r[5] = v.s2, s.r[6] = v.s3, s.r[7] = 0;
          s.c[0] = uint8_t(v.cc_in), s.c[1] = 0;
        },
        [&](const ThreadState& s) {
          CHECK(hex(half_or_word(s, v.dst)) == hex(v.expect));
          if (v.cc != 0xf) CHECK(unsigned(s.c[1]) == v.cc);
        });
  }
}

// quadop (hwtest g80_fp fswz): in a compute program dx and dy give +0 and Z;
// mov2 is source 3 + +0 through the adder (-0 and flushed negatives give +0,
// a NaN 0x7fffffff); the other positions read lane l0..l3 of the quad.
TEST_CASE("tesla hardware numbers: quadop in compute programs matches envytools' model") {
  const uint32_t s1v[4] = {0x3f800000u, 0x40000000u, 0x40400000u, 0x40800000u};  // 1 2 3 4 by quad position
  const uint32_t s3v[4] = {0x80000000u, 0x807fffffu, 0x7f812345u, 0x3f800000u};  // -0, -denormal, NaN, 1
  struct Q { const char* text; uint32_t expect[4]; uint8_t cc[4]; };
  const Q qs[] = {
      {"quadop f32 add add add add $c0 $r7 dx $r4 $r6", {0, 0, 0, 0}, {1, 1, 1, 1}},
      {"quadop f32 sub subr mov2 add $c0 $r7 dy $r4 $r6", {0, 0, 0, 0}, {1, 1, 1, 1}},
      {"quadop f32 mov2 mov2 mov2 mov2 $c0 $r7 l2 $r4 $r6", {0, 0, 0x7fffffffu, 0x3f800000u}, {1, 1, 3, 0}},
      // add: 3 + -0, 3 + (flushed) -0, 3 + NaN, 3 + 1; subr: -3 + s3; sub: 3 - s3
      {"quadop f32 add subr sub add $c0 $r7 l2 $r4 $r6", {0x40400000u, 0xc0400000u, 0x7fffffffu, 0x40800000u}, {0, 2, 3, 0}},
  };
  for (const Q& q : qs) {
    CAPTURE(q.text);
    run_everywhere(
        program(q.text),
        [&](unsigned lane, ThreadState& s) {
          s.r[4] = s1v[lane & 3], s.r[6] = s3v[lane & 3], s.r[7] = 0xcccccccc;
        },
        [&](const ThreadState&) {});
    // Lane values: run once more on the reference to look at all four positions.
    Case c;
    c.src = program(q.text);
    c.threads = 32;
    c.init = [&](unsigned lane, ThreadState& s) { s.r[4] = s1v[lane & 3], s.r[6] = s3v[lane & 3], s.r[7] = 0xcccccccc; };
    Target t;
    std::string err;
    REQUIRE(parse_target(c.variant, t, err));
    std::vector<uint32_t> code;
    REQUIRE(assemble(c.src, t, code, err));
    EndState ref = run_reference(c, code, t);
    REQUIRE(ref.ok);
    for (unsigned l = 0; l < 8; ++l) {
      CAPTURE(l);
      CHECK(hex(ref.threads[l].r[7]) == hex(q.expect[l & 3]));
      CHECK(unsigned(ref.threads[l].c[0]) == q.cc[l & 3]);
    }
  }
}

}  // namespace gpurc_test_tesla_hw_numbers
