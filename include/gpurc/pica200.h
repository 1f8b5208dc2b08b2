// gpurc PICA200 API: run Nintendo 3DS vertex and geometry shaders on the CPU.
// Integration guide: docs/pica200-embedding.md. Example: examples/embed_pica200/.
//
//   gpurc::pica200::ShaderSetup setup;
//   setup.code = {...};  setup.descriptors = {...};  setup.entry = main_offset;
//   auto shader = gpurc::pica200::Shader::compile(setup);      // throws gpurc::pica200::Error
//   gpurc::pica200::Uniforms u;  u.f[0] = {1, 0, 0, 0};  ...
//   std::vector<gpurc::pica200::InputVertex> in(n);           // v0-v15 per vertex
//   std::vector<gpurc::pica200::OutputVertex> out(n);         // o0-o15 per vertex
//   gpurc::pica200::RunResult r = shader->run(u, in, out);    // r.ok / r.error
//
// Errors: an invalid program (too large, entry outside it, an instruction the
// JIT cannot translate) throws Error from compile(). A guest fault while
// running (watchdog, stack overflow, running past the end) is returned in
// RunResult, never thrown; outputs of vertices other than the faulting one
// may or may not have been written then.
//
// Threads: a compiled Shader is immutable; run() may be called from several
// threads at once. One run() spreads large batches over a process-wide pool.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpurc::pica200 {

using Vec4 = std::array<float, 4>;  // x y z w

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class ShaderType { Vertex, Geometry };

// Which executor runs the shader. Auto: the best JIT tier of the host, else
// the reference interpreter. Jit: the best JIT tier (compile throws on a host
// without one). A particular tier is named by ShaderSetup::engine.
enum class Backend { Auto, Interpreter, Jit };

// The engines this host can run, by name: "interp", then its JIT tiers best
// first ("jit-avx512", "jit-avx2" on x86-64; docs/cli.md lists every name).
std::vector<std::string> engines();

// Everything that determines the compiled code. Two setups with equal
// fields share one compilation (cached by content, process-wide; the key
// reads only the program words execution can reach from `entry`, so the rest
// of program memory does not matter and a hit costs well under 1 us).
struct ShaderSetup {
  std::vector<uint32_t> code;         // program words (at most 4096)
  std::vector<uint32_t> descriptors;  // operand descriptors (at most 128)
  uint32_t entry = 0;                 // word address of main
  ShaderType type = ShaderType::Vertex;
  Backend backend = Backend::Auto;
  std::string engine;                 // if not empty: the engine by name ("interp", "jit", "jit-avx2", ...), not `backend`
  bool max_inf_quirk = false;         // MAX(x, -inf) returns -inf like some emulators (docs/pica200.md)
  bool f24 = false;                   // round every register write to float24 (1.7.16), docs/pica200.md
};

// The uniform state of a draw. Not part of the compiled code: change freely between runs.
struct Uniforms {
  std::array<Vec4, 96> f{};                   // c0-c95
  std::array<std::array<uint8_t, 4>, 4> i{};  // i0-i3 (x = loop count - 1, y = aL start, z = aL step)
  uint16_t b = 0;                             // b0-b15, bit n = bn
};

struct InputVertex {
  std::array<Vec4, 16> v{};  // input registers v0-v15 (after the attribute loader)
};
struct OutputVertex {
  std::array<Vec4, 16> o{};  // output registers o0-o15 (apply the output map yourself)
};

// A triangle a geometry shader emitted (SETEMIT ... prim; EMIT).
struct EmittedPrimitive {
  std::array<OutputVertex, 3> vertices;
  bool winding = false;     // SETEMIT's inverted-winding flag
  uint32_t invocation = 0;  // index of the input that produced it
};

struct RunOptions {
  unsigned threads = 0;          // 0: all host cores; 1: only the calling thread
  uint64_t budget = 1u << 22;    // instructions one vertex may execute before the run is stopped
  // Geometry shaders: the inputs of one run_geometry call are one batch; the
  // first invocation sees b15 as given, every later one b15 = 1 (the hardware
  // sets b15 after each invocation). false: every invocation sees `u` as given.
  bool set_b15 = true;
};

struct RunResult {
  bool ok = true;
  std::string error;          // guest fault, naming the instruction address and vertex
  size_t failed_vertex = 0;   // valid when !ok
  double run_us = 0;
};

class Shader {
 public:
  // Compiles (or finds in the cache) the shader. Throws Error. A cache hit
  // returns the same object each time (setup() is that of the first compile).
  static std::shared_ptr<const Shader> compile(const ShaderSetup& setup);

  // Vertex shader: out[k] = outputs of one invocation starting from in[k]
  // (temporaries, address registers and outputs start at zero).
  // out.size() must equal in.size().
  RunResult run(const Uniforms& u, std::span<const InputVertex> in, std::span<OutputVertex> out,
                const RunOptions& opt = {}) const;

  // Geometry shader: one invocation per input (each with a fresh emission
  // buffer); the triangles are appended to `emitted` in input order. b15 is
  // set from the second invocation on (RunOptions::set_b15).
  RunResult run_geometry(const Uniforms& u, std::span<const InputVertex> in, std::vector<EmittedPrimitive>& emitted,
                         const RunOptions& opt = {}) const;

  const ShaderSetup& setup() const { return setup_; }
  // "interp", "jit-avx512" or "jit-avx2": what actually runs.
  const char* backend_name() const;
  double compile_us() const { return compile_us_; }  // 0 when it came from the cache

  struct Impl;
  Shader(ShaderSetup setup, std::shared_ptr<const Impl> impl, double compile_us)
      : setup_(std::move(setup)), impl_(std::move(impl)), compile_us_(compile_us) {}

 private:
  ShaderSetup setup_;
  std::shared_ptr<const Impl> impl_;
  double compile_us_ = 0;
};

// A SHBIN (the 3DS shader container): the setup of DVLE `dvle` (code,
// descriptors, main entry, vertex/geometry type); its constants (.constf,
// .consti, .setb) are written into *constants when given. Throws Error.
ShaderSetup load_shbin(std::span<const uint8_t> bytes, size_t dvle = 0, Uniforms* constants = nullptr);
// Number of DVLEs (shader entries) in a SHBIN. Throws Error.
size_t shbin_entries(std::span<const uint8_t> bytes);
// Assembles picasso text to SHBIN bytes (tools, tests). Throws Error naming the line.
std::vector<uint8_t> assemble(const std::string& picasso_text);

// Number of distinct compiled shaders held by the cache; clear_cache() drops them
// and the internal IR code cache, so the next compile is cold (shaders
// already handed out stay valid).
size_t cached_shaders();
void clear_cache();

}  // namespace gpurc::pica200
