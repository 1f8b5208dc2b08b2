// An emulator taking gpurc as a dependency (docs/pica200-embedding.md,
// "Taking gpurc as a dependency"): it includes only the public header, links
// gpurc::gpurc, and drives the shader unit the way an emulator does: the
// program lives in a 4096-word program memory, uniforms are set per draw,
// vertices run in a batch. Built and run by ctest both through
// find_package(gpurc) against an install prefix and through add_subdirectory.
// Exit status 0 only if the outputs are the values worked out by hand.
#include <cstdio>
#include <vector>

#include "gpurc/pica200.h"

namespace p = gpurc::pica200;

int main() {
  try {
    // The game's shader (here assembled; an emulator reads the words from its
    // GPUREG_VSH_CODETRANSFER_DATA / OPDESCS_DATA writes instead).
    p::ShaderSetup shbin = p::load_shbin(p::assemble(R"(
.fvec scale
.in inPos v0
.out outPos position
.out outSum color
.proc main
    mul outPos, scale, inPos
    add r0, inPos, inPos
    dp4 outSum, r0, inPos
    end
.end
)"));
    std::vector<uint32_t> program_memory(4096, 0);
    for (size_t k = 0; k < shbin.code.size(); ++k) program_memory[k] = shbin.code[k];

    p::ShaderSetup setup;
    setup.code = program_memory;
    setup.descriptors = shbin.descriptors;
    setup.entry = shbin.entry;
    auto shader = p::Shader::compile(setup);                    // throws p::Error
    auto again = p::Shader::compile(setup);                     // the same program: a cache hit
    if (again->compile_us() != 0) {
      std::fprintf(stderr, "the second compile was not a cache hit\n");
      return 1;
    }

    p::Uniforms u;
    u.f[0] = {2, 3, 4, 5};  // scale (c0)
    std::vector<p::InputVertex> in(40);
    for (size_t k = 0; k < in.size(); ++k) in[k].v[0] = {float(k), 1, 2, 0.5f};
    std::vector<p::OutputVertex> out(in.size());
    p::RunResult r = shader->run(u, in, out);
    if (!r.ok) {
      std::fprintf(stderr, "run failed: %s\n", r.error.c_str());
      return 1;
    }
    for (size_t k = 0; k < in.size(); ++k) {
      float x = float(k);
      // outPos = scale * inPos; outSum = dp4(2 * inPos, inPos) = 2 * (x^2 + 1 + 4 + 0.25).
      const p::Vec4 pos = {2 * x, 3, 8, 2.5f};
      const float sum = 2 * (x * x + 5.25f);
      for (int c = 0; c < 4; ++c)
        if (out[k].o[0][c] != pos[c] || out[k].o[1][c] != sum) {
          std::fprintf(stderr, "vertex %zu component %d: got o0 %g o1 %g, expected %g %g\n", k, c, out[k].o[0][c],
                       out[k].o[1][c], pos[c], sum);
          return 1;
        }
    }
    std::printf("emulator_embed: %zu vertices on %s, outputs as expected\n", in.size(), shader->backend_name());
    return 0;
  } catch (const p::Error& e) {
    std::fprintf(stderr, "gpurc error: %s\n", e.what());
    return 1;
  }
}
