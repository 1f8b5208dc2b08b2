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
//
// Emulators: DrawState (below) is the per-draw interface: persistent
// uniforms, inputs and outputs in the caller's own memory layout. run() is
// a thin layer over it.
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
  friend class DrawState;
  Shader(ShaderSetup setup, std::shared_ptr<const Impl> impl, double compile_us)
      : setup_(std::move(setup)), impl_(std::move(impl)), compile_us_(compile_us) {}

 private:
  ShaderSetup setup_;
  std::shared_ptr<const Impl> impl_;
  double compile_us_ = 0;
};

// ---- Draws: the shader unit fed the way an emulator's pipeline feeds it ----
//
//   gpurc::pica200::DrawState draw(*shader);            // once per shader (per thread)
//   draw.set_float(4, {1, 0, 0, 0});                    // only the registers the game wrote
//   auto in = gpurc::pica200::VertexInputs::records(attr_buf, 256, 0x0007);   // v0-v2 loaded
//   auto out = gpurc::pica200::VertexOutputs::records(out_buf, 256, 0x0007);  // o0-o2 wanted
//   gpurc::pica200::RunResult r = draw.run(in, out, n);
//
// Inputs are read straight from caller memory and outputs written straight
// to it (no intermediate per-vertex copy); the uniforms live in the state in
// the compiled code's own layout and change only where the caller writes.
// docs/pica200-embedding.md shows an emulator's integration.

// Where a draw's input registers are: register n (bit n of `mask`) of vertex
// k is four floats (x y z w) at reg[n] + k * stride[n]. Registers outside
// `mask` read as zero. Use the factories; any other register layout (one
// array per register, records, ...) can be written into reg/stride directly.
struct VertexInputs {
  uint16_t mask = 0;
  std::array<const void*, 16> reg{};
  std::array<size_t, 16> stride{};
  size_t record_bytes = 0;  // records(): the bytes of a record that hold registers (stride must cover them)

  // Per-vertex records (an emulator's attribute buffer; InputVertex is one):
  // register n at base + k * stride + 16 * n, or with `packed` at
  // base + k * stride + 16 * (number of mask bits below n).
  static VertexInputs records(const void* base, size_t stride, uint16_t mask, bool packed = false);
  // One array per register: register n of vertex k at arrays[n] + k * stride.
  static VertexInputs arrays(const std::array<const Vec4*, 16>& arrays, uint16_t mask, size_t stride = sizeof(Vec4));
};

// Where each output component goes in an output record (GPUREG_SH_OUTMAP_*
// turned into the emulator's vertex layout): component c of o-register n is
// the float at index slot[n][c] of the vertex's record; kUnused: not stored.
struct OutputMap {
  static constexpr uint8_t kUnused = 0xFF;
  std::array<std::array<uint8_t, 4>, 16> slot;
  OutputMap() {
    for (auto& r : slot) r.fill(kUnused);
  }
};

// Where a draw's output registers go: component c of register n (bit n of
// `mask`) of vertex k is the float at reg[n] + k * stride[n] + component[n][c]
// (a negative component offset: not stored). Registers the shader never
// writes are stored as zero (a fresh unit's outputs).
struct VertexOutputs {
  uint16_t mask = 0;
  std::array<void*, 16> reg{};
  std::array<size_t, 16> stride{};
  std::array<std::array<int32_t, 4>, 16> component = identity();
  size_t record_bytes = 0;  // records() / mapped(): the bytes of a record that are written

  // Per-vertex records (OutputVertex is one): like VertexInputs::records.
  static VertexOutputs records(void* base, size_t stride, uint16_t mask, bool packed = false);
  static VertexOutputs arrays(const std::array<Vec4*, 16>& arrays, uint16_t mask, size_t stride = sizeof(Vec4));
  // Records laid out by an output map: the registers with a mapped component are stored.
  static VertexOutputs mapped(void* base, size_t stride, const OutputMap& map);

  static constexpr std::array<std::array<int32_t, 4>, 16> identity() {
    std::array<std::array<int32_t, 4>, 16> a{};
    for (auto& r : a) r = {0, 4, 8, 12};
    return a;
  }
};

// The per-draw state of one vertex shader: the uniforms in the compiled
// code's layout, updated register by register, and the scratch a draw runs
// in (allocated on first use and kept: no allocation per run()). Not
// thread-safe: use one DrawState per thread (they may share the Shader).
// Geometry shaders are not drawn this way: the constructor throws Error
// (use Shader::run_geometry).
class DrawState {
 public:
  explicit DrawState(const Shader& shader);  // keeps the compiled code alive; uniforms start at zero
  ~DrawState();
  DrawState(DrawState&&) noexcept;
  DrawState& operator=(DrawState&&) noexcept;

  // Uniform writes (the registers named change, nothing else is re-encoded).
  // An index out of range throws Error.
  void set_float(unsigned n, const Vec4& value);                // c[n], n < 96
  void set_floats(unsigned first, std::span<const Vec4> values);  // c[first ...]
  void set_int(unsigned n, const std::array<uint8_t, 4>& value);  // i[n], n < 4
  void set_bool(unsigned n, bool value);                         // b[n], n < 16
  void set_bools(uint16_t bits);                                 // b0-b15
  void set_uniforms(const Uniforms& u);                          // everything
  const Uniforms& uniforms() const;

  // Runs vertices 0 .. count-1 from `in` to `out`. Bad arguments (a null
  // register address, a stride smaller than a register or a record) and
  // guest faults return ok = false with the reason (RunResult as for
  // Shader::run; run_us is not measured). RunOptions::threads: 0 splits a
  // draw over all cores only from a size where that pays (docs).
  RunResult run(const VertexInputs& in, const VertexOutputs& out, size_t count, const RunOptions& opt = {});

  // Bound streams, for callers whose attribute and vertex buffers stay put
  // (an emulator's shader unit): bind() checks the streams once (as run()
  // checks them for a draw of more than one vertex) and keeps them;
  // run_bound(first, count) then runs vertices first .. first+count-1 of
  // them: input register n of vertex first+k at in.reg[n] + (first+k) *
  // in.stride[n], the outputs likewise. Nothing is compared per call, so a
  // small draw costs only the shader's own work. The streams stay bound
  // until the next bind() (run() with other streams in between is fine).
  // bind() with bad streams returns ok = false and leaves nothing bound;
  // run_bound() with nothing bound returns ok = false. Uniform writes,
  // budgets and thread counts work as with run().
  RunResult bind(const VertexInputs& in, const VertexOutputs& out);
  RunResult run_bound(size_t first, size_t count, const RunOptions& opt = {});

  const char* backend_name() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
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
