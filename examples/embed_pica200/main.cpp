// How an emulator embeds gpurc's PICA200 engine (docs/pica200-embedding.md):
// load a shader, upload uniforms, run a batch of vertices, read the outputs;
// then the same through DrawState, with the emulator's own buffer layouts, and
// through buffers bound once (DrawState::bind, run_bound).
// Runs the same batch on the JIT and on the reference interpreter and exits
// with status 1 if they disagree, so it doubles as a smoke test.
//
//   example_embed_pica200 [shader.shbin]   (default: a built-in transform shader)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

#include "gpurc/pica200.h"

namespace p = gpurc::pica200;

namespace {

// A game would hand us its SHBIN; here we assemble a small one.
const char* kTransformShader = R"(
.fvec mvp[4] c0
.constf consts(1.0, 0.5, 0.0, 0.0)
.in inPos v0
.in inColor v1
.out outPos position
.out outColor color
.proc main
    mov r0.xyz, inPos
    mov r0.w, consts.x
    dp4 outPos.x, mvp[0], r0
    dp4 outPos.y, mvp[1], r0
    dp4 outPos.z, mvp[2], r0
    dp4 outPos.w, mvp[3], r0
    mul outColor, consts.y, inColor
    end
.end
)";

}  // namespace

int main(int argc, char** argv) {
  try {
    std::vector<uint8_t> shbin;
    if (argc > 1) {
      std::ifstream f(argv[1], std::ios::binary);
      if (!f) {
        std::fprintf(stderr, "cannot open %s\n", argv[1]);
        return 2;
      }
      shbin.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    } else {
      shbin = p::assemble(kTransformShader);
    }

    // 1. Program + constants from the SHBIN (an emulator takes code and
    //    descriptors from its shader-unit registers instead).
    p::Uniforms uniforms;
    p::ShaderSetup setup = p::load_shbin(shbin, 0, &uniforms);
    if (setup.type != p::ShaderType::Vertex) {
      std::fprintf(stderr, "this example runs vertex shaders only\n");
      return 2;
    }

    // 2. Uniforms: a scale-and-translate matrix in c0-c3 (rows).
    uniforms.f[0] = {2, 0, 0, 1};
    uniforms.f[1] = {0, 2, 0, -1};
    uniforms.f[2] = {0, 0, 1, 0};
    uniforms.f[3] = {0, 0, 0, 1};

    // 3. Inputs: what the attribute loader produced, v0-v15 per vertex.
    const size_t n = 1000;
    std::vector<p::InputVertex> in(n);
    for (size_t k = 0; k < n; ++k) {
      float t = float(k) / float(n);
      in[k].v[0] = {t, 1 - t, t * t, 1};
      in[k].v[1] = {1, t, 0, 1};
    }

    // 4. Compile once (cached by content), run on the best JIT and on the interpreter.
    auto jit = p::Shader::compile(setup);
    p::ShaderSetup ref_setup = setup;
    ref_setup.backend = p::Backend::Interpreter;
    auto ref = p::Shader::compile(ref_setup);

    std::vector<p::OutputVertex> out(n), expected(n);
    p::RunResult r = jit->run(uniforms, in, out);
    p::RunResult e = ref->run(uniforms, in, expected);
    if (!r.ok || !e.ok) {
      std::fprintf(stderr, "run failed: %s%s\n", r.error.c_str(), e.error.c_str());
      return 1;
    }

    // 5. Outputs: o0 = position, o1 = colour (the DVLE's output map says so).
    size_t differ = 0;
    for (size_t k = 0; k < n; ++k)
      differ += std::memcmp(out[k].o.data(), expected[k].o.data(), 2 * sizeof(p::Vec4)) != 0;
    const p::Vec4& pos = out[n / 2].o[0];
    std::printf("backend %s: %zu vertices in %.1f us (interpreter %.1f us)\n", jit->backend_name(), n, r.run_us,
                e.run_us);
    std::printf("vertex %zu: position (%g, %g, %g, %g)\n", n / 2, pos[0], pos[1], pos[2], pos[3]);
    // Hand check of vertex n/2 (t = 0.5): x = 2*0.5+1 = 2, y = 2*0.5-1 = 0, z = 0.25, w = 1.
    bool hand_ok = pos[0] == 2.0f && pos[1] == 0.0f && pos[2] == 0.25f && pos[3] == 1.0f;
    std::printf("%zu vertices differ from the interpreter; hand check %s\n", differ, hand_ok ? "ok" : "FAILED");

    // 6. The emulator's way (DrawState): uniforms kept in the compiled
    //    layout and updated per register, inputs read from the attribute
    //    loader's own buffer (v0, v1 packed: 32 bytes per vertex), outputs
    //    written through the output map into the rasteriser's vertex struct.
    struct AttributeBuffer { p::Vec4 v0, v1; };
    struct EmuVertex { float pos[4], color[4], uv[2]; };
    std::vector<AttributeBuffer> attrs(n);
    for (size_t k = 0; k < n; ++k) attrs[k] = {in[k].v[0], in[k].v[1]};
    p::OutputMap map;
    map.slot[0] = {0, 1, 2, 3};  // o0 -> pos
    map.slot[1] = {4, 5, 6, 7};  // o1 -> color
    p::DrawState draw(*jit);
    draw.set_uniforms(uniforms);
    draw.set_float(2, {0, 0, 1, 3});  // the game writes one register: z += 3
    uniforms.f[2] = {0, 0, 1, 3};
    std::vector<EmuVertex> verts(n);
    p::RunResult d = draw.run(p::VertexInputs::records(attrs.data(), sizeof(AttributeBuffer), 0x0003, true),
                              p::VertexOutputs::mapped(verts.data(), sizeof(EmuVertex), map), n);
    if (!d.ok || !ref->run(uniforms, in, expected).ok) {
      std::fprintf(stderr, "draw failed: %s\n", d.error.c_str());
      return 1;
    }
    size_t draw_differ = 0;
    for (size_t k = 0; k < n; ++k)
      draw_differ += std::memcmp(verts[k].pos, expected[k].o[0].data(), 16) != 0 ||
                     std::memcmp(verts[k].color, expected[k].o[1].data(), 16) != 0;
    // Vertex n/2 again: z = 0.25 + 3.
    const bool draw_hand_ok = verts[n / 2].pos[2] == 3.25f;
    std::printf("DrawState: %zu vertices differ from the interpreter; hand check %s\n", draw_differ,
                draw_hand_ok ? "ok" : "FAILED");

    // 7. Buffers that stay put (an emulator's attribute buffer and vertex
    //    buffer): bind them once, then draw vertex ranges by offset and
    //    count; nothing about the streams is checked or compared per draw.
    std::vector<EmuVertex> bound_verts(n);
    if (!draw.bind(p::VertexInputs::records(attrs.data(), sizeof(AttributeBuffer), 0x0003, true),
                   p::VertexOutputs::mapped(bound_verts.data(), sizeof(EmuVertex), map))
             .ok)
      return 1;
    for (size_t first = 0; first < n; first += 96) {
      const p::RunResult b = draw.run_bound(first, std::min<size_t>(96, n - first));
      if (!b.ok) {
        std::fprintf(stderr, "bound draw failed: %s\n", b.error.c_str());
        return 1;
      }
    }
    size_t bound_differ = 0;
    for (size_t k = 0; k < n; ++k) bound_differ += std::memcmp(&bound_verts[k], &verts[k], sizeof(EmuVertex)) != 0;
    std::printf("bound draws of 96 vertices: %zu vertices differ from DrawState::run\n", bound_differ);
    return differ == 0 && hand_ok && draw_differ == 0 && draw_hand_ok && bound_differ == 0 ? 0 : 1;
  } catch (const p::Error& x) {
    std::fprintf(stderr, "error: %s\n", x.what());
    return 2;
  }
}
