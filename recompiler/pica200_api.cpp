// The public PICA200 API (include/gpurc/pica200.h) over the module's launch
// ABI (frontend/pica200/module/launch.h).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "frontend/pica200/assembler.h"
#include "frontend/pica200/module/launch.h"
#include "frontend/pica200/reachable.h"
#include "frontend/pica200/shbin.h"
#include "gpurc/pica200.h"
#include "ir/compile_stages.h"
#include "recompiler/engine.h"
#include "recompiler/isa_engine.h"
#include "runtime/code_cache.h"
#include "runtime/memory.h"

namespace gpurc::pica200 {

struct Shader::Impl {
  pica::PreparedShader prepared;
};

namespace {

struct KeyHash {
  size_t operator()(const rt::CacheKey& k) const { return size_t(k.lo ^ (k.hi * 0x9E3779B97F4A7C15ull)); }
};

// Compiled shaders by content. Translation is skipped on a hit; the IR code
// cache under compile_ir would share the host code anyway. A hit returns the
// same Shader object every time (made on the first hit, with compile_us 0),
// so it costs the key and one lookup, not a copy of the setup.
struct CachedShader {
  std::shared_ptr<const Shader::Impl> impl;
  std::shared_ptr<const Shader> hit;
};
struct ShaderCache {
  std::mutex m;
  std::unordered_map<rt::CacheKey, CachedShader, KeyHash> map;
};
ShaderCache& shader_cache() {
  static ShaderCache c;
  return c;
}

Engine engine_of(const ShaderSetup& s) {
  if (!s.engine.empty()) {
    Engine e;
    if (!parse_engine(s.engine, e))
      throw Error("gpurc::pica200: unknown engine '" + s.engine + "' (expected " + engine_names() + ")");
    return e;
  }
  switch (s.backend) {
    case Backend::Auto: return host_jit_tiers().empty() ? Engine::Interp : Engine::Jit;
    case Backend::Interpreter: return Engine::Interp;
    case Backend::Jit: return Engine::Jit;
  }
  return Engine::Interp;
}

// The cache key: what the translation reads (the words execution can reach
// from the entry, pica::append_reachable_code, and the descriptors) and
// every option, never the whole program memory, so that a hit costs well
// under a microsecond whatever the size of the program memory it came in.
rt::CacheKey key_of(const ShaderSetup& s, Engine resolved) {
  thread_local std::vector<uint32_t> words;
  words.clear();
  words.push_back(s.entry);
  words.push_back((s.type == ShaderType::Geometry ? 1u : 0u) | (s.max_inf_quirk ? 2u : 0u) | (s.f24 ? 4u : 0u));
  words.push_back(uint32_t(s.descriptors.size()));
  words.insert(words.end(), s.descriptors.begin(), s.descriptors.end());
  pica::append_reachable_code(s.code, s.entry, words);
  return rt::make_cache_key(words.data(), words.size() * 4, engine_name(resolved));
}

pica::VertexState state_of(const InputVertex& in) {
  pica::VertexState st;
  st.v = in.v;
  return st;
}

RunResult result_of(const pica::BatchResult& b) {
  RunResult r;
  r.ok = b.ok;
  r.error = b.fault;
  r.failed_vertex = b.fault_vertex;
  r.run_us = b.run_us;
  return r;
}

RunResult failure(std::string message) {
  RunResult r;
  r.ok = false;
  r.error = std::move(message);
  return r;
}

pica::Uniforms uniforms_of(const Uniforms& u) {
  pica::Uniforms pu;
  pu.f = u.f;
  pu.i = u.i;
  pu.b = u.b;
  return pu;
}

std::vector<pica::VertexState> states_of(std::span<const InputVertex> in) {
  std::vector<pica::VertexState> states(in.size());
  for (size_t k = 0; k < in.size(); ++k) states[k] = state_of(in[k]);
  return states;
}

pica::BatchOptions batch_options(const RunOptions& o) {
  pica::BatchOptions b;
  b.threads = o.threads;
  b.budget = o.budget;
  b.set_b15 = o.set_b15;
  return b;
}

}  // namespace

std::shared_ptr<const Shader> Shader::compile(const ShaderSetup& setup) {
  Engine resolved;
  std::string err;
  if (!resolve_engine(engine_of(setup), resolved, err)) throw Error("gpurc::pica200: " + err);
  // Programs over the size limits are never cached (the key reads only the
  // reachable words, so it could match a valid program's): prepare_shader
  // rejects them below.
  const bool cacheable = setup.code.size() <= 4096 && setup.descriptors.size() <= 128;
  ir::StageTimer key_time("shader cache key and lookup");
  rt::CacheKey key = cacheable ? key_of(setup, resolved) : rt::CacheKey{};
  ShaderCache& cache = shader_cache();
  if (cacheable) {
    std::lock_guard<std::mutex> g(cache.m);
    if (auto it = cache.map.find(key); it != cache.map.end()) {
      if (!it->second.hit) it->second.hit = std::make_shared<const Shader>(setup, it->second.impl, 0.0);
      return it->second.hit;
    }
  }
  key_time.stop();
  auto t0 = std::chrono::steady_clock::now();
  pica::Program program{setup.code, setup.descriptors};
  pica::TranslateOptions topt;
  topt.entry = setup.entry;
  topt.geometry = setup.type == ShaderType::Geometry;
  topt.fp.max_inf_quirk = setup.max_inf_quirk;
  topt.fp.f24 = setup.f24;
  // A compiled vertex shader runs only through draws (run_draw; the
  // interpreter keeps run_vertices), which start every register at zero and
  // read back only the o-registers: the code need not keep r0-r15, a0, aL
  // and cmp (the draw contract, pica::TranslateOptions::draw_only).
  topt.draw_only = !topt.geometry && pica::draw_only_enabled();
  auto impl = std::make_shared<Shader::Impl>();
  // pica::translate verifies the IR it makes: compile_ir need not again.
  // The translation is made from what `key` hashes (the reachable words, the
  // descriptors, every option; the process-wide switches draw_only_enabled()
  // and pass_through_dropping() are fixed for the process), so the key is
  // also the translation's identity in the IR code cache: compile_ir does
  // not hash the function a second time.
  if (!pica::prepare_shader(std::move(program), topt, EngineAsHandle(resolved, true, cacheable ? &key : nullptr),
                            impl->prepared, err))
    throw Error(err);
  double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  ir::StageTimer insert_time("shader cache insert");
  if (!cacheable) return std::make_shared<const Shader>(setup, impl, us);
  {
    // Two threads compiling the same setup at once both succeed; the first stored wins.
    std::lock_guard<std::mutex> g(cache.m);
    auto [it, inserted] = cache.map.emplace(key, CachedShader{impl, nullptr});
    return std::make_shared<const Shader>(setup, it->second.impl, us);
  }
}

std::vector<std::string> engines() {
  std::vector<std::string> out;
  for (Engine e : host_engines()) out.push_back(engine_name(e));
  return out;
}

const char* Shader::backend_name() const { return impl_->prepared.engine.c_str(); }

namespace {
// Shader::run's run_us by the time-stamp counter (seventeenth session): a
// steady_clock reading cost 40-80 ns on the development VM, and run() took
// two, ~30% of a 32-vertex call. Microseconds per tick come from a
// steady_clock / counter pair taken at the first call and another once
// 2 ms have passed; until then, and on hosts without an invariant counter,
// the steady clock times the run.
double tsc_us_per_tick() {
#if defined(__x86_64__)
  static std::atomic<double> factor{0};
  double f = factor.load(std::memory_order_relaxed);
  if (f > 0) return f;
  static const bool invariant = [] {
    // CPUID 0x80000007 EDX bit 8: invariant TSC (when the extended leaf exists).
    auto cpuid = [](uint32_t leaf, uint32_t& a, uint32_t& d) {
      uint32_t b, c;
      asm volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(leaf), "c"(0));
    };
    uint32_t max_ext, d;
    cpuid(0x80000000u, max_ext, d);
    if (max_ext < 0x80000007u) return false;
    uint32_t a;
    cpuid(0x80000007u, a, d);
    return (d >> 8 & 1) != 0;
  }();
  if (!invariant) return 0;
  static const std::pair<std::chrono::steady_clock::time_point, uint64_t> first{std::chrono::steady_clock::now(),
                                                                               __builtin_ia32_rdtsc()};
  const auto now = std::chrono::steady_clock::now();
  const uint64_t ticks = __builtin_ia32_rdtsc();
  const double us = std::chrono::duration<double, std::micro>(now - first.first).count();
  if (us < 2000 || ticks <= first.second) return 0;
  f = us / double(ticks - first.second);
  factor.store(f, std::memory_order_relaxed);
  return f;
#else
  return 0;
#endif
}

class RunTimer {
 public:
  RunTimer() : us_per_tick_(tsc_us_per_tick()) {
#if defined(__x86_64__)
    if (us_per_tick_ > 0) {
      t0_ = __builtin_ia32_rdtsc();
      return;
    }
#endif
    c0_ = std::chrono::steady_clock::now();
  }
  double elapsed_us() const {
#if defined(__x86_64__)
    if (us_per_tick_ > 0) return double(__builtin_ia32_rdtsc() - t0_) * us_per_tick_;
#endif
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - c0_).count();
  }

 private:
  double us_per_tick_;
  uint64_t t0_ = 0;
  std::chrono::steady_clock::time_point c0_{};
};
}  // namespace

RunResult Shader::run(const Uniforms& u, std::span<const InputVertex> in, std::span<OutputVertex> out,
                      const RunOptions& opt) const {
  if (out.size() != in.size())
    return failure(fmt::format("gpurc::pica200: {} inputs but room for {} outputs", in.size(), out.size()));
  if (setup_.type != ShaderType::Vertex) return failure("gpurc::pica200: run() on a geometry shader (use run_geometry)");
  // A thin layer over DrawState: the calling thread keeps the draw state of
  // the last shader it ran (its scratch and uniform block), so repeated runs
  // allocate nothing; the uniforms are written whole, as this interface
  // passes them whole.
  thread_local std::unique_ptr<DrawState> last;
  thread_local const Impl* last_impl = nullptr;
  if (!last || last_impl != impl_.get()) {
    last = std::make_unique<DrawState>(*this);
    last_impl = impl_.get();
  }
  const RunTimer timer;
  // The block is rewritten only when the uniforms changed (seventeenth
  // session): callers pass the same uniforms call after call, and writing
  // them whole (~1.5 KiB into the mirror and the block) was most of a
  // 32-vertex run()'s fixed cost. Compared bit for bit, field by field (the
  // struct's padding bytes carry nothing).
  const Uniforms& kept = last->uniforms();
  if (std::memcmp(u.f.data(), kept.f.data(), sizeof(u.f)) != 0 || std::memcmp(u.i.data(), kept.i.data(), sizeof(u.i)) != 0 ||
      u.b != kept.b)
    last->set_uniforms(u);
  // The stream descriptions (16 registers each way) of the last call's
  // arrays again when the caller passes the same ones (seventeenth session).
  thread_local const InputVertex* streams_in = nullptr;
  thread_local OutputVertex* streams_out = nullptr;
  thread_local VertexInputs vin;
  thread_local VertexOutputs vout;
  if (in.data() != streams_in || out.data() != streams_out || !streams_in) {
    vin = VertexInputs::records(in.data(), sizeof(InputVertex), 0xFFFF);
    vout = VertexOutputs::records(out.data(), sizeof(OutputVertex), 0xFFFF);
    streams_in = in.data();
    streams_out = out.data();
  }
  RunResult r = last->run(vin, vout, in.size(), opt);
  r.run_us = timer.elapsed_us();
  return r;
}

// ---- DrawState ----------------------------------------------------------------

VertexInputs VertexInputs::records(const void* base, size_t stride, uint16_t mask, bool packed) {
  VertexInputs v;
  v.mask = mask;
  unsigned slot = 0;
  for (unsigned n = 0; n < 16; ++n) {
    if (!(mask >> n & 1)) continue;
    const unsigned at = packed ? slot++ : n;
    v.reg[n] = base ? static_cast<const uint8_t*>(base) + 16 * at : nullptr;
    v.stride[n] = stride;
    v.record_bytes = std::max<size_t>(v.record_bytes, 16 * (at + 1));
  }
  return v;
}

VertexInputs VertexInputs::arrays(const std::array<const Vec4*, 16>& arrays, uint16_t mask, size_t stride) {
  VertexInputs v;
  v.mask = mask;
  for (unsigned n = 0; n < 16; ++n)
    if (mask >> n & 1) {
      v.reg[n] = arrays[n];
      v.stride[n] = stride;
    }
  return v;
}

VertexOutputs VertexOutputs::records(void* base, size_t stride, uint16_t mask, bool packed) {
  VertexOutputs v;
  v.mask = mask;
  unsigned slot = 0;
  for (unsigned n = 0; n < 16; ++n) {
    if (!(mask >> n & 1)) continue;
    const unsigned at = packed ? slot++ : n;
    v.reg[n] = base ? static_cast<uint8_t*>(base) + 16 * at : nullptr;
    v.stride[n] = stride;
    v.record_bytes = std::max<size_t>(v.record_bytes, 16 * (at + 1));
  }
  return v;
}

VertexOutputs VertexOutputs::arrays(const std::array<Vec4*, 16>& arrays, uint16_t mask, size_t stride) {
  VertexOutputs v;
  v.mask = mask;
  for (unsigned n = 0; n < 16; ++n)
    if (mask >> n & 1) {
      v.reg[n] = arrays[n];
      v.stride[n] = stride;
    }
  return v;
}

VertexOutputs VertexOutputs::mapped(void* base, size_t stride, const OutputMap& map) {
  VertexOutputs v;
  for (unsigned n = 0; n < 16; ++n)
    for (unsigned c = 0; c < 4; ++c) {
      const uint8_t slot = map.slot[n][c];
      v.component[n][c] = slot == OutputMap::kUnused ? -1 : int32_t(4 * slot);
      if (slot == OutputMap::kUnused) continue;
      v.mask |= uint16_t(1u << n);
      v.reg[n] = base;
      v.stride[n] = stride;
      v.record_bytes = std::max<size_t>(v.record_bytes, 4 * (size_t(slot) + 1));
    }
  return v;
}

namespace {

// Whether two stream descriptions name the same registers at the same
// places (only the masked registers' entries count).
bool same_streams(const VertexInputs& a, const VertexInputs& b) {
  if (a.mask != b.mask || a.record_bytes != b.record_bytes) return false;
  for (uint32_t m = a.mask; m; m &= m - 1) {
    const unsigned n = unsigned(__builtin_ctz(m));
    if (a.reg[n] != b.reg[n] || a.stride[n] != b.stride[n]) return false;
  }
  return true;
}
bool same_streams(const VertexOutputs& a, const VertexOutputs& b) {
  if (a.mask != b.mask || a.record_bytes != b.record_bytes) return false;
  for (uint32_t m = a.mask; m; m &= m - 1) {
    const unsigned n = unsigned(__builtin_ctz(m));
    if (a.reg[n] != b.reg[n] || a.stride[n] != b.stride[n] || a.component[n] != b.component[n]) return false;
  }
  return true;
}

// Bit g: the mask has a register among 4g .. 4g+3 (same_streams_avx2's
// groups).
uint8_t stream_groups(uint16_t mask) {
  uint8_t g = 0;
  for (unsigned k = 0; k < 4; ++k)
    if (mask >> (4 * k) & 0xF) g = uint8_t(g | 1u << k);
  return g;
}

#if defined(__x86_64__) && defined(__GNUC__)
#define GPURC_STREAMS_AVX2 1
// A quick same_streams (fourteenth session): the whole four-register
// groups that hold a masked register compared byte for byte, in ymm (the
// addresses and strides of four registers in one compare each, their
// output component offsets in two), the differences ORed, one test at the
// end. True means the masked registers are the same (every byte around
// them is too); false only that some compared byte differs, which may be
// an unmasked entry the caller left stale: the caller then decides with
// the exact same_streams. `b` / `bo` are the stored copies; `in_groups` /
// `out_groups` their masks' groups (stream_groups). The scalar loop took
// ~9 host instructions per input and ~17 per output register, ~100 of a
// repeated 32-vertex run() of ref_simple (its whole fixed cost above
// run_bound()). Only on a host with AVX2 (DrawState::Impl::streams_avx2).
// (GCC vector types, no intrinsics header: cmake/include_rules.txt.)
using StreamsV4 = long long __attribute__((vector_size(32)));
__attribute__((target("avx2"), always_inline)) inline StreamsV4 streams_xor(const void* x, const void* y) {
  StreamsV4 a, b;
  std::memcpy(&a, x, 32);
  std::memcpy(&b, y, 32);
  return a ^ b;
}
__attribute__((target("avx2"), noinline)) bool same_streams_avx2(const VertexInputs& a, const VertexOutputs& ao,
                                                                const VertexInputs& b, const VertexOutputs& bo,
                                                                unsigned in_groups, unsigned out_groups) {
  if (a.mask != b.mask || ao.mask != bo.mask || a.record_bytes != b.record_bytes ||
      ao.record_bytes != bo.record_bytes)
    return false;
  // (Streams within v0-v3 and o0-o3 are compared in run() itself,
  // streams_differ_one_group; fifteenth session: the one-group form that
  // was here repeated it, and run_checked no longer comes here after it.)
  StreamsV4 d{};
  for (unsigned m = in_groups; m; m &= m - 1) {
    const unsigned r = 4 * unsigned(__builtin_ctz(m));
    d |= streams_xor(&a.reg[r], &b.reg[r]) | streams_xor(&a.stride[r], &b.stride[r]);
  }
  for (unsigned m = out_groups; m; m &= m - 1) {
    const unsigned r = 4 * unsigned(__builtin_ctz(m));
    d |= streams_xor(&ao.reg[r], &bo.reg[r]) | streams_xor(&ao.stride[r], &bo.stride[r]);
    d |= streams_xor(&ao.component[r], &bo.component[r]) | streams_xor(&ao.component[r + 2], &bo.component[r + 2]);
  }
  return __builtin_ia32_ptestz256(d, d);
}
#endif

#ifdef GPURC_STREAMS_AVX2
// same_streams_avx2's one-group case (v0-v3 and o0-o3) inside run() itself
// (fourteenth session, second part): the six 32-byte compares as inline
// assembly, so the repeated draw's path makes no call before the draw
// loop's and GCC keeps a two-register frame for run() (a call of the
// compare, or a target("avx2") function around it, cost ~45 host
// instructions of frames and argument moves per call). The caller has
// compared the masks. True when some compared byte
// differs (the exact compare then decides). Fifteenth session: the record
// sizes too, both in one 16-byte compare against `b_records` (the stored
// ones side by side). Only on a host with AVX2. The
// upper halves of ymm0-ymm2 are left set (fifteenth session: one
// instruction of every draw): the draw loop's stub clears them on its way
// out (vzeroupper in its exit frame), and a difference goes to
// streams_upper_clear first. Between the compare and the stub's call there
// is integer code only.
inline bool streams_differ_one_group(const VertexInputs& a, const VertexOutputs& ao, const VertexInputs& b,
                                     const VertexOutputs& bo, const size_t (&b_records)[2]) {
  // Each 32-byte block a memory operand of its own, so GCC addresses the
  // stored copies from the state's pointer (fifteenth session: two `lea`s
  // fewer than with their addresses in registers).
  using Block = const char[32];
  auto at = [](const auto& x) -> Block& { return *reinterpret_cast<const char(*)[32]>(&x); };
  bool differ;
  asm("vmovdqu %[ar], %%ymm0\n\t"
      "vpxor %[br], %%ymm0, %%ymm0\n\t"
      "vmovdqu %[as], %%ymm1\n\t"
      "vpxor %[bs], %%ymm1, %%ymm1\n\t"
      "vpor %%ymm1, %%ymm0, %%ymm0\n\t"
      "vmovdqu %[aor], %%ymm1\n\t"
      "vpxor %[bor], %%ymm1, %%ymm1\n\t"
      "vmovdqu %[aos], %%ymm2\n\t"
      "vpxor %[bos], %%ymm2, %%ymm2\n\t"
      "vpor %%ymm2, %%ymm1, %%ymm1\n\t"
      "vpor %%ymm1, %%ymm0, %%ymm0\n\t"
      "vmovdqu %[aoc], %%ymm1\n\t"
      "vpxor %[boc], %%ymm1, %%ymm1\n\t"
      "vmovdqu %[aoc2], %%ymm2\n\t"
      "vpxor %[boc2], %%ymm2, %%ymm2\n\t"
      "vpor %%ymm2, %%ymm1, %%ymm1\n\t"
      "vpor %%ymm1, %%ymm0, %%ymm0\n\t"
      "vmovq %[arec], %%xmm1\n\t"
      "vpinsrq $1, %[aorec], %%xmm1, %%xmm1\n\t"
      "vpxor %[brec], %%xmm1, %%xmm1\n\t"
      "vpor %%ymm1, %%ymm0, %%ymm0\n\t"
      "vptest %%ymm0, %%ymm0"
      : "=@ccnz"(differ)
      : [ar] "m"(at(a.reg[0])), [br] "m"(at(b.reg[0])), [as] "m"(at(a.stride[0])), [bs] "m"(at(b.stride[0])),
        [aor] "m"(at(ao.reg[0])), [bor] "m"(at(bo.reg[0])), [aos] "m"(at(ao.stride[0])),
        [bos] "m"(at(bo.stride[0])), [aoc] "m"(at(ao.component[0])), [boc] "m"(at(bo.component[0])),
        [aoc2] "m"(at(ao.component[2])), [boc2] "m"(at(bo.component[2])), [arec] "m"(a.record_bytes),
        [aorec] "m"(ao.record_bytes), [brec] "m"(b_records)
      : "xmm0", "xmm1", "xmm2");
  return differ;
}

// vzeroupper after streams_differ_one_group when the stub is not called.
inline void streams_upper_clear() { asm volatile("vzeroupper" ::: "xmm0", "xmm1", "xmm2"); }

// The grouped compare unless GPURC_STREAMS_AVX2=0 (read once; measurements).
bool streams_avx2_enabled() {
  static const bool yes = [] {
    const char* e = std::getenv("GPURC_STREAMS_AVX2");
    return __builtin_cpu_supports("avx2") && !(e && *e == '0');
  }();
  return yes;
}
#endif

}  // namespace

struct DrawState::Impl {
  std::shared_ptr<const Shader::Impl> shader;
  Uniforms mirror;  // what the caller wrote (the interpreter runs from it)
  // The uniform block in the compiled code's layout (abi.h), 64-byte aligned.
  std::unique_ptr<uint8_t[], rt::Buffer::AlignedFree> block;
  pica::DrawScratch scratch;
  std::vector<pica::VertexState> states;  // the interpreter's per-vertex states, reused
  // The streams of the last draw whose arguments were checked (ninth
  // session): a draw with the same descriptions (and count > 1 as then)
  // skips the checks and the conversion, and hands run_draw the same
  // streams id so it reuses its set-up too (DrawScratch::streams_id).
  bool streams_valid = false;
  bool streams_multi = false;
  uint64_t streams_id = 0;
  uint64_t ids = 0;  // the last id handed out (run()'s streams and bind()'s share the sequence)
  VertexInputs last_in;
  VertexOutputs last_out;
  pica::DrawStreams is, os;
  // Whether run() compares streams with same_streams_avx2 (an x86-64
  // host with AVX2: every x86-64 host whose JIT draws).
  bool streams_avx2 = false;
  uint8_t in_groups = 0, out_groups = 0;  // stream_groups of last_in, last_out
  // streams_valid, streams_avx2 and in_groups == out_groups == 1: run()
  // compares inline (streams_differ_one_group).
  bool streams_one_group = false;
  // run()'s repeated draw may go straight to the short form once the
  // streams compare equal (fifteenth session): streams_one_group, and the
  // scratch's kept set-up is these streams' and clean (again_clean,
  // setup_id == streams_id). One range test instead of four tests on every
  // call; worked out again (refresh_fast_draw) whenever a path other than
  // run()'s inline one returns, and cleared before such a path starts (so
  // an exception leaves it false). The counts it serves without a thread
  // test: 1 .. fast_n (fast_draw false: fast_n = 0, none; streams checked
  // for one vertex, streams_multi false: 1 only; else 1 .. kDrawParallelMin
  // - 1, where the draw is not split whatever RunOptions::threads says:
  // streams checked for several vertices serve one too, their conversion
  // is the same). The masks are kept side by side for one compare too.
  bool fast_draw = false;
  size_t fast_n = 0;
  uint32_t last_masks = 0;  // last_in.mask | last_out.mask << 16
  // last_in.record_bytes, last_out.record_bytes side by side: run()'s
  // inline compare takes both in one 16-byte compare.
  alignas(16) size_t last_records[2] = {0, 0};
  // The bound streams (bind(), run_bound(); twelfth session): checked and
  // converted once. `bound_id` is their DrawScratch::streams_id;
  // `bound_first` the vertex offset the kept set-up's descriptors were made
  // or moved for (valid while the scratch's set-up is bound_id's).
  bool bound = false, bound_jit = false;
  uint64_t bound_id = 0;
  size_t bound_first = 0;
  VertexInputs bound_in;
  VertexOutputs bound_out;
  pica::DrawStreams bis, bos;

  void refresh_fast_draw() {
    fast_draw = streams_one_group && streams_valid && scratch.again_clean && scratch.setup_id == streams_id;
    fast_n = !fast_draw ? 0 : streams_multi ? pica::kDrawParallelMin - 1 : 1;
    last_masks = uint32_t(last_in.mask) | uint32_t(last_out.mask) << 16;
    last_records[0] = last_in.record_bytes;
    last_records[1] = last_out.record_bytes;
  }
  void clear_fast_draw() { fast_draw = false, fast_n = 0; }

  // Whether `in` / `out` describe the streams of the last draw (last_in,
  // last_out).
  bool same_streams(const VertexInputs& in, const VertexOutputs& out) const {
    return pica200::same_streams(in, last_in) && pica200::same_streams(out, last_out);
  }

  void put(uint32_t at, const void* p, size_t n) {
    if (block) std::memcpy(block.get() + at, p, n);
  }
  void put_float(unsigned n) { put(pica::kUniformFloat + 16 * n, mirror.f[n].data(), 16); }
  void put_int(unsigned n) {
    uint32_t w[4];
    for (unsigned c = 0; c < 4; ++c) w[c] = mirror.i[n][c];
    put(pica::kUniformInt + 16 * n, w, 16);
  }
  void put_bools() {
    const uint32_t b = mirror.b;
    put(pica::kUniformBool, &b, 4);
  }
};

DrawState::DrawState(const Shader& shader) : impl_(std::make_unique<Impl>()) {
  if (shader.setup().type != ShaderType::Vertex)
    throw Error("gpurc::pica200: DrawState runs vertex shaders; a geometry shader runs with Shader::run_geometry");
  impl_->shader = shader.impl_;
#ifdef GPURC_STREAMS_AVX2
  impl_->streams_avx2 = streams_avx2_enabled();
#endif
  const pica::PreparedShader& p = impl_->shader->prepared;
  if (p.draw.valid) {
    const size_t bytes =
        rt::align64(std::max<size_t>(pica::kUniformBytes, p.function ? p.function->uniform_bytes : 0)) + 64;
    impl_->block = rt::allocate_aligned(bytes, true);
    const std::vector<uint8_t> packed = pica::pack_uniforms(pica::Uniforms{});
    std::memcpy(impl_->block.get(), packed.data(), packed.size());
  }
}
DrawState::~DrawState() = default;
DrawState::DrawState(DrawState&&) noexcept = default;
DrawState& DrawState::operator=(DrawState&&) noexcept = default;

void DrawState::set_float(unsigned n, const Vec4& value) {
  if (n >= 96) throw Error(fmt::format("gpurc::pica200: float uniform c{} does not exist (c0-c95)", n));
  impl_->mirror.f[n] = value;
  impl_->put_float(n);
}

void DrawState::set_floats(unsigned first, std::span<const Vec4> values) {
  if (first > 96 || values.size() > 96 - first)
    throw Error(fmt::format("gpurc::pica200: float uniforms c{}-c{} do not exist (c0-c95)", first,
                            first + values.size() - 1));
  for (size_t k = 0; k < values.size(); ++k) impl_->mirror.f[first + k] = values[k];
  if (impl_->block && !values.empty())
    std::memcpy(impl_->block.get() + pica::kUniformFloat + 16 * first, values.data(), 16 * values.size());
}

void DrawState::set_int(unsigned n, const std::array<uint8_t, 4>& value) {
  if (n >= 4) throw Error(fmt::format("gpurc::pica200: integer uniform i{} does not exist (i0-i3)", n));
  impl_->mirror.i[n] = value;
  impl_->put_int(n);
}

void DrawState::set_bool(unsigned n, bool value) {
  if (n >= 16) throw Error(fmt::format("gpurc::pica200: bool uniform b{} does not exist (b0-b15)", n));
  impl_->mirror.b = uint16_t(value ? impl_->mirror.b | (1u << n) : impl_->mirror.b & ~(1u << n));
  impl_->put_bools();
}

void DrawState::set_bools(uint16_t bits) {
  impl_->mirror.b = bits;
  impl_->put_bools();
}

void DrawState::set_uniforms(const Uniforms& u) {
  impl_->mirror = u;
  impl_->put(pica::kUniformFloat, u.f.data(), sizeof(u.f));
  for (unsigned n = 0; n < 4; ++n) impl_->put_int(n);
  impl_->put_bools();
}

const Uniforms& DrawState::uniforms() const { return impl_->mirror; }

const char* DrawState::backend_name() const { return impl_->shader->prepared.engine.c_str(); }

namespace {

std::string register_list(uint16_t mask, char bank) {
  std::string s;
  for (unsigned n = 0; n < 16; ++n)
    if (mask >> n & 1) s += fmt::format("{}{}{}", s.empty() ? "" : ", ", bank, n);
  return s;
}

// Checks a stream description; "" when usable. (Walks the mask's bits
// only: this is part of every draw's fixed cost.)
template <class Ptr>
std::string check_streams(const char* what, char bank, uint16_t mask, const std::array<Ptr, 16>& reg,
                          const std::array<size_t, 16>& stride, size_t record_bytes, size_t count) {
  for (uint32_t m = mask; m; m &= m - 1) {
    const unsigned n = unsigned(__builtin_ctz(m));
    if (!reg[n]) return fmt::format("gpurc::pica200: {} register {}{} has no address (null pointer)", what, bank, n);
    if (count > 1 && stride[n] < 16)
      return fmt::format("gpurc::pica200: {} register {}{}: stride {} is smaller than a register (16 bytes)", what,
                         bank, n, stride[n]);
    if (count > 1 && record_bytes && stride[n] < record_bytes)
      return fmt::format("gpurc::pica200: {} stride {} is smaller than a record holding {} ({} bytes)", what,
                         stride[n], register_list(mask, bank), record_bytes);
  }
  return {};
}

// Checks the streams of a draw of `count` vertices and converts them to the
// draw runner's form; "" when usable. (Out of line: a repeated draw never
// comes here, and the conversion needs a large frame.)
__attribute__((noinline)) std::string convert_streams(const VertexInputs& in, const VertexOutputs& out, size_t count,
                                                      pica::DrawStreams& is, pica::DrawStreams& os) {
  if (std::string e = check_streams("input", 'v', in.mask, in.reg, in.stride, in.record_bytes, count); !e.empty())
    return e;
  if (std::string e = check_streams("output", 'o', out.mask, out.reg, out.stride, out.record_bytes, count); !e.empty())
    return e;
  is.mask = in.mask;
  os.mask = out.mask;
  for (uint32_t m = in.mask; m; m &= m - 1) {
    const unsigned n = unsigned(__builtin_ctz(m));
    is.base[n] = const_cast<uint8_t*>(static_cast<const uint8_t*>(in.reg[n]));
    is.stride[n] = in.stride[n];
    is.comp[n] = {0, 4, 8, 12};
    is.quad[n] = true;
  }
  for (uint32_t m = out.mask; m; m &= m - 1) {
    const unsigned n = unsigned(__builtin_ctz(m));
    const std::array<int32_t, 4>& comp = out.component[n];
    for (unsigned c = 0; c < 4; ++c)
      if (count > 1 && comp[c] >= 0 && size_t(comp[c]) + 4 > out.stride[n])
        return fmt::format("gpurc::pica200: output o{} component {} at byte {} lies outside the {}-byte stride", n,
                           "xyzw"[c], comp[c], out.stride[n]);
    os.base[n] = static_cast<uint8_t*>(out.reg[n]);
    os.stride[n] = out.stride[n];
    os.comp[n] = comp;
    os.quad[n] = comp[0] == 0 && comp[1] == 4 && comp[2] == 8 && comp[3] == 12;
  }
  return {};
}

// `s` with every register moved `first` vertices on (run_bound's offset).
pica::DrawStreams shifted(pica::DrawStreams s, size_t first) {
  for (uint32_t m = s.mask; m; m &= m - 1) {
    const unsigned n = unsigned(__builtin_ctz(m));
    s.base[n] += first * s.stride[n];
  }
  return s;
}
VertexInputs shifted(VertexInputs v, size_t first) {
  for (uint32_t m = v.mask; m; m &= m - 1) {
    const unsigned n = unsigned(__builtin_ctz(m));
    v.reg[n] = static_cast<const uint8_t*>(v.reg[n]) + first * v.stride[n];
  }
  return v;
}
VertexOutputs shifted(VertexOutputs v, size_t first) {
  for (uint32_t m = v.mask; m; m &= m - 1) {
    const unsigned n = unsigned(__builtin_ctz(m));
    v.reg[n] = static_cast<uint8_t*>(v.reg[n]) + first * v.stride[n];
  }
  return v;
}

RunResult run_result_of(pica::DrawResult d) {
  RunResult r;
  r.ok = d.ok;
  r.error = std::move(d.fault);
  r.failed_vertex = d.fault_vertex;
  return r;
}

// The fault of a draw the short form ran (bound or not: `streams_id`).
__attribute__((noinline)) RunResult short_form_fault(DrawState::Impl& m, uint64_t streams_id, uint32_t status) {
  m.scratch.streams_id = streams_id;
  const pica::PreparedShader& p = m.shader->prepared;
  m.clear_fast_draw();
  pica::run_draw_again_failed(p, p.draw, m.block.get(), status, m.scratch);
  m.refresh_fast_draw();
  return run_result_of(std::exchange(m.scratch.again_fault, pica::DrawResult{}));
}
}  // namespace

namespace {
// run()'s cases other than the short form, out of line (thirteenth
// session: the repeated draw's path then keeps a two-register frame):
// the kept set-up through run_draw_again or run_draw when the streams are
// the previous draw's (`same`), else new streams or the interpreter.
__attribute__((noinline)) RunResult run_rest(DrawState::Impl& m, const VertexInputs& in, const VertexOutputs& out,
                                             size_t count, const RunOptions& opt, bool same) {
  if (count == 0) return RunResult{};
  const pica::PreparedShader& p = m.shader->prepared;
  if (same) {
    m.scratch.streams_id = m.streams_id;
    // The previous draw's set-up run again (the usual case: an emulator's
    // draws keep their layout), else run_draw.
    if (const int again = pica::run_draw_again_fast(p, p.draw, m.block.get(), count, opt.threads, opt.budget, m.scratch)) {
      if (again > 0) return RunResult{};
      return run_result_of(std::exchange(m.scratch.again_fault, pica::DrawResult{}));
    }
    return run_result_of(pica::run_draw(p, p.draw, m.block.get(), m.is, m.os, count, opt.threads, opt.budget, m.scratch));
  }
  // New streams (or the interpreter): the stream conversion needs ~3 KiB of stack.
  m.streams_valid = m.streams_one_group = false;
  pica::DrawStreams is, os;
  if (std::string e = convert_streams(in, out, count, is, os); !e.empty()) return failure(e);
  if (p.draw.valid) {
    m.is = is;
    m.os = os;
    m.last_in = in;
    m.last_out = out;
    m.in_groups = stream_groups(in.mask);
    m.out_groups = stream_groups(out.mask);
    m.streams_one_group = m.streams_avx2 && m.in_groups == 1 && m.out_groups == 1;
    m.streams_multi = count > 1;
    m.streams_valid = true;
    m.streams_id = ++m.ids;
    m.scratch.streams_id = m.streams_id;
    return run_result_of(pica::run_draw(p, p.draw, m.block.get(), m.is, m.os, count, opt.threads, opt.budget, m.scratch));
  }
  // The reference interpreter: per-vertex states from the streams, and back.
  std::vector<pica::VertexState>& states = m.states;
  states.resize(count);
  for (size_t k = 0; k < count; ++k) {
    states[k] = pica::VertexState{};
    for (unsigned n = 0; n < 16; ++n)
      if (in.mask >> n & 1) std::memcpy(states[k].v[n].data(), is.base[n] + k * is.stride[n], 16);
  }
  pica::BatchResult b = pica::run_vertices(p, uniforms_of(m.mirror), states, batch_options(opt));
  for (size_t k = 0; k < count; ++k)
    for (unsigned n = 0; n < 16; ++n) {
      if (!(out.mask >> n & 1)) continue;
      for (unsigned c = 0; c < 4; ++c)
        if (os.comp[n][c] >= 0) std::memcpy(os.base[n] + k * os.stride[n] + os.comp[n][c], &states[k].o[n][c], 4);
    }
  RunResult r = result_of(b);
  r.run_us = 0;
  return r;
}
}  // namespace

namespace {
// run() apart from its inline case (below): the streams compared (the
// quick compare's false decided by the exact one), then the short form, or
// run_rest. `quick_differs`: run()'s inline compare (streams_differ_one_group)
// found a difference, so only the exact compare is left to ask.
__attribute__((noinline)) RunResult run_checked(DrawState::Impl& m, const VertexInputs& in, const VertexOutputs& out,
                                                size_t count, const RunOptions& opt, bool quick_differs) {
  // streams_valid: the previous draw ran these streams through the draw
  // runner (never set for the interpreter).
  bool same = count != 0 && m.streams_valid && m.streams_multi == (count > 1);
  if (same) [[likely]] {
#ifdef GPURC_STREAMS_AVX2
    if (m.streams_avx2 && !quick_differs) [[likely]]
      same = same_streams_avx2(in, out, m.last_in, m.last_out, m.in_groups, m.out_groups) || m.same_streams(in, out);
    else
#endif
      same = m.same_streams(in, out);
    // The masked registers are the same but some other compared byte is
    // not (an entry outside the masks the caller changed): the stored copies
    // take the caller's bytes, so the next such call passes the quick compare.
    if (same && quick_differs) {
      m.last_in = in;
      m.last_out = out;
    }
  }
  // The short form (the state's scratch serves its shader's plan only).
  if (same && pica::again_short_form_one_plan(m.streams_id, count, opt.threads, opt.budget, m.scratch)) [[likely]] {
    const uint32_t st = pica::run_again_short(m.block.get(), count, m.scratch);
    if (st == uint32_t(ir::RunStatus::Done)) [[likely]]
      return RunResult{};
    return short_form_fault(m, m.streams_id, st);
  }
  return run_rest(m, in, out, count, opt, same);
}

// run_checked, with DrawState::Impl::fast_draw cleared before and worked out
// after (whatever it ran, the kept set-up may have changed).
__attribute__((noinline)) RunResult run_slow(DrawState::Impl& m, const VertexInputs& in, const VertexOutputs& out,
                                             size_t count, const RunOptions& opt, bool quick_differs) {
  m.clear_fast_draw();
  RunResult r = run_checked(m, in, out, count, opt, quick_differs);
  m.refresh_fast_draw();
  return r;
}
}  // namespace

RunResult DrawState::run(const VertexInputs& in, const VertexOutputs& out, size_t count, const RunOptions& opt) {
  Impl& m = *impl_;
#ifdef GPURC_STREAMS_AVX2
  // The repeated draw of streams within v0-v3 and o0-o3 on an AVX2 host
  // (fourteenth session, second part): compared inline, then the short
  // form, with no call before the draw loop's; anything else goes to
  // run_slow (run_checked), which starts over, told when the inline compare
  // found a difference (then only the exact compare is left). So run()
  // keeps only what the draw loop's call needs across it (the result and
  // the state: a two-register frame). Fifteenth session: the state's,
  // scratch's and count's conditions are one flag and one range test
  // (Impl::fast_draw), and the uniforms pointer the kept context holds is
  // not stored again (every draw of this state passes its own block).
  // (Each test marked likely: with one [[likely]] on the whole chain GCC
  // took the draw for rare and cleared the result with a `rep stosd`.)
  if (__builtin_expect(count - 1 < m.fast_n || (opt.threads == 1 && m.fast_draw && m.streams_multi && count != 0), 1))
    if (__builtin_expect(opt.budget == m.scratch.again_budget, 1))
      if (__builtin_expect((uint32_t(in.mask) | uint32_t(out.mask) << 16) == m.last_masks, 1)) {
          if (__builtin_expect(streams_differ_one_group(in, out, m.last_in, m.last_out, m.last_records), 0)) {
            streams_upper_clear();
            return run_slow(m, in, out, count, opt, true);
          }
          const uint32_t st = pica::run_again_short_kept_uniforms(count, m.scratch);
          if (__builtin_expect(st == uint32_t(ir::RunStatus::Done), 1)) return RunResult{};
          return short_form_fault(m, m.streams_id, st);
        }
#endif
  return run_slow(m, in, out, count, opt, false);
}

RunResult DrawState::bind(const VertexInputs& in, const VertexOutputs& out) {
  Impl& m = *impl_;
  m.bound = m.bound_jit = false;
  // Checked as for a draw of several vertices (the strides matter then).
  if (std::string e = convert_streams(in, out, 2, m.bis, m.bos); !e.empty()) return failure(e);
  m.bound_in = in;
  m.bound_out = out;
  m.bound_id = ++m.ids;
  m.bound_first = 0;
  m.bound = true;
  m.bound_jit = m.shader->prepared.draw.valid;
  return RunResult{};
}

namespace {
// run_bound's other cases (out of line: the repeated draw's path keeps a
// small frame): no vertices, nothing bound, the interpreter, another vertex
// offset, a set-up to make, a split draw, a changed budget.
__attribute__((noinline)) RunResult run_bound_rest(DrawState& self, DrawState::Impl& m, size_t first, size_t count,
                                                   const RunOptions& opt) {
  if (count == 0) return RunResult{};
  if (!m.bound) return failure("gpurc::pica200: run_bound() with no streams bound (call bind() first)");
  if (!m.bound_jit) return self.run(shifted(m.bound_in, first), shifted(m.bound_out, first), count, opt);
  const pica::PreparedShader& p = m.shader->prepared;
  pica::DrawScratch& sc = m.scratch;
  sc.streams_id = m.bound_id;
  // Another vertex offset: the kept set-up's descriptors move with it when
  // its copy order does not depend on where the records are
  // (pica::move_draw_setup), else run_draw makes it again.
  if (first != m.bound_first && sc.setup_id == m.bound_id) {
    if (pica::move_draw_setup(sc, int64_t(first) - int64_t(m.bound_first))) {
      m.bound_first = first;
      if (const int a = pica::run_draw_again_fast(p, p.draw, m.block.get(), count, opt.threads, opt.budget, sc)) {
        if (a > 0) return RunResult{};
        return run_result_of(std::exchange(sc.again_fault, pica::DrawResult{}));
      }
    } else {
      sc.setup_id = 0;
      sc.again_ok = sc.again_clean = false;
    }
  }
  const pica::DrawStreams is = shifted(m.bis, first), os = shifted(m.bos, first);
  RunResult r = run_result_of(pica::run_draw(p, p.draw, m.block.get(), is, os, count, opt.threads, opt.budget, sc));
  if (sc.setup_id == m.bound_id) m.bound_first = first;  // the set-up (kept or made) is for this offset now
  return r;
}

// run_bound_rest with DrawState::Impl::fast_draw cleared before and worked
// out after (the kept set-up may be the bound streams' now).
__attribute__((noinline)) RunResult run_bound_slow(DrawState& self, DrawState::Impl& m, size_t first, size_t count,
                                                   const RunOptions& opt) {
  m.clear_fast_draw();
  RunResult r = run_bound_rest(self, m, first, count, opt);
  m.refresh_fast_draw();
  return r;
}
}  // namespace

RunResult DrawState::run_bound(size_t first, size_t count, const RunOptions& opt) {
  Impl& m = *impl_;
  // bound_jit: bound, and drawn by the draw runner (not the interpreter).
  if (m.bound_jit && first == m.bound_first && count != 0) [[likely]] {
    // The kept set-up run again: nothing to compare (the usual case). The
    // state's scratch serves its shader's plan only.
    pica::DrawScratch& sc = m.scratch;
    if (pica::again_short_form_one_plan(m.bound_id, count, opt.threads, opt.budget, sc)) [[likely]] {
      const uint32_t st = pica::run_again_short_kept_uniforms(count, sc);
      if (st == uint32_t(ir::RunStatus::Done)) [[likely]]
        return RunResult{};
      return short_form_fault(m, m.bound_id, st);
    }
  }
  return run_bound_slow(*this, m, first, count, opt);
}

RunResult Shader::run_geometry(const Uniforms& u, std::span<const InputVertex> in,
                               std::vector<EmittedPrimitive>& emitted, const RunOptions& opt) const {
  if (setup_.type != ShaderType::Geometry)
    return failure("gpurc::pica200: run_geometry() on a vertex shader (use run)");
  std::vector<pica::VertexState> states = states_of(in);
  std::vector<pica::GsState> gs;
  pica::BatchResult b = pica::run_geometry(impl_->prepared, uniforms_of(u), states, gs, batch_options(opt));
  for (size_t k = 0; k < gs.size(); ++k)
    for (const pica::GsPrimitive& p : gs[k].primitives) {
      EmittedPrimitive e;
      for (size_t j = 0; j < 3; ++j) e.vertices[j].o = p.vertices[j];
      e.winding = p.winding;
      e.invocation = uint32_t(k);
      emitted.push_back(e);
    }
  return result_of(b);
}

namespace {
pica::Shbin parse(std::span<const uint8_t> bytes) {
  pica::Shbin s;
  std::string err;
  if (!pica::parse_shbin(bytes.data(), bytes.size(), s, err)) throw Error("gpurc::pica200: SHBIN: " + err);
  return s;
}
}  // namespace

size_t shbin_entries(std::span<const uint8_t> bytes) { return parse(bytes).dvles.size(); }

ShaderSetup load_shbin(std::span<const uint8_t> bytes, size_t dvle, Uniforms* constants) {
  pica::Shbin s = parse(bytes);
  if (dvle >= s.dvles.size())
    throw Error(fmt::format("gpurc::pica200: SHBIN: entry {} requested, the file has {}", dvle, s.dvles.size()));
  const pica::Dvle& d = s.dvles[dvle];
  ShaderSetup setup;
  setup.code = s.code;
  setup.descriptors = s.descs;
  setup.entry = d.main_offset;
  setup.type = d.is_geometry ? ShaderType::Geometry : ShaderType::Vertex;
  if (constants) {
    pica::Uniforms u;
    u.f = constants->f;
    u.i = constants->i;
    u.b = constants->b;
    pica::load_constants(d, u);
    constants->f = u.f;
    constants->i = u.i;
    constants->b = u.b;
  }
  return setup;
}

std::vector<uint8_t> assemble(const std::string& picasso_text) {
  pica::Shbin s;
  std::string err;
  if (!pica::assemble(picasso_text, s, err)) throw Error("gpurc::pica200: assembler: " + err);
  return pica::write_shbin(s);
}

size_t cached_shaders() {
  std::lock_guard<std::mutex> g(shader_cache().m);
  return shader_cache().map.size();
}

void clear_cache() {
  {
    std::lock_guard<std::mutex> g(shader_cache().m);
    shader_cache().map.clear();
  }
  // The IR code cache under the shader cache too, so the next compile is cold.
  code_cache().clear();
}

}  // namespace gpurc::pica200
