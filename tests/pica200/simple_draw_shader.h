// The shader of the draw tests (draw_again.cpp, draw_bound.cpp): the shape of
// bench ref_simple, three loaded inputs and three outputs, one of them a
// pass-through copy the draw-loop stub does without the shader.
#pragma once

namespace gpurc::pica::test {

// o0 = c0..c3 * v0 (DP4s), o1 = v1 (a pass-through copy), o2 = v2 + c4.
inline constexpr const char* kSimpleDrawShader = R"(
.fvec m[4]
.fvec k
.in v_pos v0
.in v_col v1
.in v_tex v2
.out o_pos position
.out o_col color
.out o_tex texcoord0
.proc main
    dp4 o_pos.x, m[0], v_pos
    dp4 o_pos.y, m[1], v_pos
    dp4 o_pos.z, m[2], v_pos
    dp4 o_pos.w, m[3], v_pos
    mov o_col, v_col
    add o_tex, k, v_tex
    end
.end
)";

}  // namespace gpurc::pica::test
