#include "recompiler/engine.h"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cstring>

#include "ir/compile_stages.h"
#include "ir/interp.h"
#include "ir/owning_executable.h"

namespace gpurc {

namespace {

// The one call of a tier's code generator (build() and host_code_listing()).
std::unique_ptr<backend::CompiledCode> compile_lowered(const ir::Function& lowered, Engine engine,
                                                       const IrCompileOptions& opt, std::string& error) {
  const backend::HostTier* tier = engine.tier();
  if (!tier) {
    error = std::string("engine ") + engine_name(engine) + " generates no host code";
    return nullptr;
  }
  backend::CompileOptions co;
  co.perf_map = opt.perf_map;
  co.symbol = opt.symbol;
  std::string err;
  std::unique_ptr<backend::CompiledCode> code = tier->compile(lowered, co, &err);
  if (!code) error = std::string(tier->name) + ": " + (err.empty() ? "compilation failed" : err);
  return code;
}

struct Built {
  std::shared_ptr<ir::Executable> exe;
  uint32_t vars_bytes = 0;
  uint64_t max_step_cost = 1;
};

// CompiledIr::max_step_cost of the function an engine runs.
uint64_t max_budget_cost(const ir::Function& f) {
  uint64_t m = 1;
  for (const ir::Block& b : f.blocks)
    for (ir::ValueId v : b.insts)
      if (f.insts[v].op == ir::Opcode::Budget) m = std::max<uint64_t>(m, f.insts[v].imm);
  return m;
}

// Cache entries hold the executable; the vars size rides along in a wrapper.
class CachedIr final : public ir::Executable {
 public:
  CachedIr(std::shared_ptr<ir::Executable> e, uint32_t vars_bytes, uint64_t max_step_cost)
      : exe(std::move(e)), vars_bytes(vars_bytes), max_step_cost(max_step_cost) {}
  size_t frame_bytes() const override { return exe->frame_bytes(); }
  bool frame_needs_zero() const override { return exe->frame_needs_zero(); }
  bool var_read_ranges(std::vector<std::pair<uint32_t, uint32_t>>& out) const override {
    return exe->var_read_ranges(out);
  }
  ir::RunStatus run(ir::WarpContext& ctx) const override { return exe->run(ctx); }
  bool has_warp_loop() const override { return exe->has_warp_loop(); }
  ir::RunStatus run_warps(ir::WarpContext& ctx, ir::WarpLoop& loop) const override {
    return exe->run_warps(ctx, loop);
  }
  bool has_draw_loop() const override { return exe->has_draw_loop(); }
  ir::RunStatus run_draw_loop(ir::WarpContext& ctx, ir::DrawLoop& loop) const override {
    return exe->run_draw_loop(ctx, loop);
  }
  bool draw_loop_code(const uint8_t*& code, const uint8_t*& warp_entry) const override {
    return exe->draw_loop_code(code, warp_entry);
  }
  std::shared_ptr<ir::Executable> exe;
  uint32_t vars_bytes;
  uint64_t max_step_cost;
};

// `take`: null, or &f when the caller gives `f` up (the passes then run on
// it instead of a copy; f is not read after it moves).
bool build(const ir::Function& f, ir::Function* take, Engine engine, const IrCompileOptions& opt, Built& out,
           std::string& error) {
  ir::StageTimer verify_time("verify input IR");
  if (std::string v = opt.input_verified ? std::string() : ir::verify(f); !v.empty()) {
    error = "invalid IR: " + v;
    return false;
  }
  verify_time.stop();
  if (engine == Engine::Interp) {
    // The reference runs the function as written, plus the loop watchdog
    // (budget ops only count; they change no result), so a guest that never
    // ends is a Watchdog fault on every engine.
    auto counted = std::make_shared<ir::Function>(f);
    if (opt.passes.loop_budget) {
      ir::insert_loop_budget(*counted);
      if (!ir::verify(*counted).empty()) *counted = f;
    }
    std::shared_ptr<const ir::Function> fn = counted;
    auto exe = ir::make_ir_interpreter(*fn);
    if (!exe) {
      error = "the IR interpreter rejected the function";
      return false;
    }
    out.vars_bytes = fn->vars_bytes();
    out.max_step_cost = max_budget_cost(*fn);
    out.exe = std::make_shared<ir::OwningExecutable>(fn, std::move(exe));
    return true;
  }
  // Vars private to a run (ir::Function::state_vars) have no place in the
  // layout; the passes must keep the others' types (checked below).
  const uint32_t state_vars = std::min<uint32_t>(uint32_t(f.vars.size()), f.state_vars);
  ir::StageTimer copy_time("copy IR for the passes");
  std::shared_ptr<ir::Function> lowered;
  thread_local std::vector<ir::Type> layout;  // the state vars' types when `f` moves
  if (take) {
    layout.resize(state_vars);
    for (uint32_t i = 0; i < state_vars; ++i) layout[i] = f.vars[i].type;
    lowered = std::make_shared<ir::Function>(std::move(*take));
  } else {
    lowered = std::make_shared<ir::Function>(f);
  }
  copy_time.stop();
  ir::StageTimer pipeline_time("pass pipeline (between passes)");
  if (std::string e = ir::run_pipeline(*lowered, opt.passes); !e.empty()) {
    error = "pass pipeline: " + e;
    return false;
  }
  pipeline_time.stop();
  ir::StageTimer layout_time("var layout check");
  // A var's offset is the sum of the slots of the vars before it
  // (Function::var_offsets), so equal types up to i mean equal offsets up to
  // i: comparing the types checks the layout without computing it twice.
  for (uint32_t i = 0; i < state_vars; ++i)
    if (i >= lowered->vars.size() || lowered->vars[i].type != (take ? layout[i] : f.vars[i].type)) {
      error = "pass pipeline changed the layout of var " +
              (take ? "#" + std::to_string(i) : "'" + f.vars[i].name + "'");
      return false;
    }
  layout_time.stop();
  ir::StageTimer backend_time("backend (outside its stages)");
  std::unique_ptr<backend::CompiledCode> code = compile_lowered(*lowered, engine, opt, error);
  backend_time.stop();
  if (!code) return false;
  ir::StageTimer wrap_time("wrap executable");
  out.vars_bytes = lowered->vars_bytes();
  out.max_step_cost = max_budget_cost(*lowered);
  out.exe = std::make_shared<ir::OwningExecutable>(lowered, std::move(code));
  return true;
}

// The function's identity for the code cache: every field of the function,
// its vars, blocks and instructions in binary form (what ir::print shows and
// more), so equal bytes mean an equal function. Far cheaper than printing.
// Written in two passes, the size first and then the bytes through a
// pointer into a buffer that only grows: appending field by field to a
// std::string was one out-of-line append per field, ~1000 per compile of a
// PICA200 shader (its ~200 vars each have a name).
struct InstRecord {
  uint16_t op;
  uint8_t type, attr;
  uint32_t fflags;
  uint64_t imm;
  uint32_t block;
  uint32_t uniform_and_args;
};
static_assert(sizeof(InstRecord) == 24, "no padding: the key hashes every byte of the record");

// The words write_function_bytes puts after the name: uniform_bytes,
// unlaunched_lanes_free, no_draw_loop, state_vars and the var count (a field
// added there is counted here, or the writer runs past the buffer).
constexpr size_t kFunctionHeaderWords = 5;

size_t function_bytes_size(const ir::Function& f) {
  size_t n = 4 + f.name.size() + 4 * kFunctionHeaderWords + 4 + 4;
  for (const ir::Var& v : f.vars) n += 8 + v.name.size();
  for (const ir::Block& b : f.blocks)
    n += 12 + b.name.size() + (b.insts.size() + b.succs.size()) * sizeof(ir::ValueId);
  for (const ir::Inst& in : f.insts) n += sizeof(InstRecord) + in.args.size() * sizeof(ir::ValueId);
  return n;
}

// Writes the function_bytes_size(f) bytes at out; returns the end.
char* write_function_bytes(const ir::Function& f, char* out) {
  auto put = [&](const void* p, size_t n) {
    if (n == 0) return;  // an empty vector's data() may be null, which memcpy must not get
    std::memcpy(out, p, n);
    out += n;
  };
  auto put32 = [&](uint64_t v) {
    uint32_t w = uint32_t(v);
    put(&w, 4);
  };
  auto put_str = [&](const std::string& s) {
    put32(s.size());
    put(s.data(), s.size());
  };
  put_str(f.name);
  put32(f.uniform_bytes);
  put32(f.unlaunched_lanes_free);
  put32(f.no_draw_loop);
  put32(f.state_vars);
  put32(f.vars.size());
  for (const ir::Var& v : f.vars) {
    put_str(v.name);
    put32(uint32_t(v.type));
  }
  put32(f.blocks.size());
  for (const ir::Block& b : f.blocks) {
    put_str(b.name);
    put32(b.insts.size());
    put(b.insts.data(), b.insts.size() * sizeof(ir::ValueId));
    put32(b.succs.size());
    put(b.succs.data(), b.succs.size() * sizeof(ir::BlockId));
  }
  put32(f.insts.size());
  for (const ir::Inst& in : f.insts) {
    const InstRecord rec{uint16_t(in.op), uint8_t(in.type), in.attr, in.fflags, in.imm, in.block,
                         uint32_t(in.args.size()) << 1 | uint32_t(in.uniform)};
    put(&rec, sizeof rec);
    put(in.args.data(), in.args.size() * sizeof(ir::ValueId));
  }
  return out;
}

bool lower(const ir::Function& f, const IrCompileOptions& opt, ir::Function& lowered, std::string& error) {
  if (std::string v = ir::verify(f); !v.empty()) {
    error = "invalid IR: " + v;
    return false;
  }
  lowered = f;
  if (std::string e = ir::run_pipeline(lowered, opt.passes); !e.empty()) {
    error = "pass pipeline: " + e;
    return false;
  }
  return true;
}

}  // namespace

bool host_code_listing(const ir::Function& f, Engine engine, const IrCompileOptions& opt, std::string& listing,
                       size_t& code_bytes, std::string& error) {
  if (!engine.tier()) {
    error = std::string("engine ") + engine_name(engine) + " generates no host code";
    return false;
  }
  ir::Function lowered;
  if (!lower(f, opt, lowered, error)) return false;
  std::unique_ptr<backend::CompiledCode> code = compile_lowered(lowered, engine, opt, error);
  if (!code) return false;
  listing = code->disassemble();
  code_bytes = code->code_bytes();
  return true;
}

rt::CodeCache& code_cache() {
  static rt::CodeCache cache;
  return cache;
}

std::string compile_options_key(Engine engine, const IrCompileOptions& opt) {
  const ir::PassOptions& p = opt.passes;
  std::string k = std::string("engine=") + engine_name(engine) + ";budget=" + (p.loop_budget ? "1" : "0");
  if (engine != Engine::Interp) {
    k += ";passes=";
    for (bool b : {p.ssa, p.const_fold, p.cse, p.dce, p.sink, p.uniformity, p.divergence, p.loop_budget, p.verify_each})
      k += b ? '1' : '0';
    k += ";perf_map=" + std::to_string(opt.perf_map) + ";symbol=" + opt.symbol;
  }
  return k;
}

namespace {

bool compile_ir_impl(const ir::Function& f, ir::Function* take, Engine engine, const IrCompileOptions& opt,
                     CompiledIr& out, std::string& error) {
  if (engine == Engine::Jit) {
    error = "compile_ir: resolve engine jit to a tier first";
    return false;
  }
  auto t0 = std::chrono::steady_clock::now();
  auto finish = [&](std::shared_ptr<ir::Executable> exe, uint32_t vars_bytes, uint64_t max_step_cost, bool hit) {
    out.exe = std::move(exe);
    out.vars_bytes = vars_bytes;
    out.max_step_cost = max_step_cost;
    out.cache_hit = hit;
    out.compile_us = hit ? 0 : std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  };
  if (!opt.use_cache) {
    Built b;
    if (!build(f, take, engine, opt, b, error)) return false;
    finish(b.exe, b.vars_bytes, b.max_step_cost, false);
    return true;
  }
  ir::StageTimer key_time("IR code cache key");
  rt::CacheKey key;
  if (opt.identity) {
    // The caller's identity (16 bytes: no function's bytes are that short,
    // and the key's length prefix keeps the two kinds apart) with the options.
    key = rt::make_cache_key(opt.identity, sizeof *opt.identity, compile_options_key(engine, opt) + ";identity");
  } else {
    // The function's bytes are its identity: equal bytes, equal function.
    thread_local std::vector<char> bytes;
    const size_t n_bytes = function_bytes_size(f);
    if (bytes.size() < n_bytes) bytes.resize(n_bytes);  // grows only: nothing zeroed per compile
    [[maybe_unused]] const char* end = write_function_bytes(f, bytes.data());
    assert(end == bytes.data() + n_bytes);  // the sanitizer build checks it (assertions on)
    key = rt::make_cache_key(bytes.data(), n_bytes, compile_options_key(engine, opt));
  }
  key_time.stop();
  bool compiled_here = false;
  // The cache's own cost (lookup, insertion, the future): the stages of build() are timed apart.
  ir::StageTimer cache_time("IR code cache lookup and insert");
  auto exe = code_cache().get_or_compile(key, [&](std::string& err) -> std::shared_ptr<ir::Executable> {
    compiled_here = true;
    Built b;
    if (!build(f, take, engine, opt, b, err)) return nullptr;
    ir::StageTimer wrap_time("wrap executable");
    return std::make_shared<CachedIr>(b.exe, b.vars_bytes, b.max_step_cost);
  }, error);
  cache_time.stop();
  if (!exe) return false;
  auto* c = static_cast<CachedIr*>(exe.get());
  finish(exe, c->vars_bytes, c->max_step_cost, !compiled_here);
  return true;
}

}  // namespace

bool compile_ir(const ir::Function& f, Engine engine, const IrCompileOptions& opt, CompiledIr& out,
                std::string& error) {
  return compile_ir_impl(f, nullptr, engine, opt, out, error);
}

bool compile_ir(ir::Function&& f, Engine engine, const IrCompileOptions& opt, CompiledIr& out, std::string& error) {
  return compile_ir_impl(f, &f, engine, opt, out, error);
}

}  // namespace gpurc
