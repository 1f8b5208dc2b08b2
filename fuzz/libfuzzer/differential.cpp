// libFuzzer target, one per ISA (fuzz_diff_<isa>): the input is a guest
// program; the ISA module translates it (a refusal is fine: an unimplemented
// or invalid instruction is a clear error) to IR that must verify, then the
// program runs on the ISA's reference interpreter and on every JIT tier this
// host has, with small fixed budgets. Any disagreement is a crash: a tier
// that fails other than with a clear refusal, a fault on one side only, or
// any differing observed value. Runs that end on the watchdog are not
// compared (its units differ between the reference, which counts guest
// steps, and the JIT, which counts IR loop iterations).
//
// Input layout: byte 0 picks the thread (vertex) count, byte 1 the variant
// (and for pica200 the descriptor count and shader type), the rest is code
// (pica200: descriptor words then code words, or a .shbin).
//
// Cost per input (docs/fuzzing.md "Throughput", "Throughput (sixth
// session)"): the code is cut to kMaxCodeBytes, every run has a budget of kBudget guest steps, one block
// (one batch of vertices) runs on the calling thread, guest memory is one
// 4 KiB buffer, and each tier compiles the input once (the code cache is
// emptied after every input, so it neither grows over a long run nor lets a
// repeated input skip the compiler). pica200 runs through the module's
// launch ABI (translate once, compile once per tier) because its replay
// documents have no budget: an endless loop would cost 2^22 steps per
// vertex; the other ISAs run as small replay documents.
//
// LLVMFuzzerInitialize checks that the comparison is live: a small program
// must agree on every engine, and the same program with a disagreement
// injected into the tiers' runs must be reported (else the target aborts).
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "backend_common/tier.h"
#include "frontend/pica200/module/launch.h"
#include "frontend/pica200/shbin.h"
#include "fuzz/libfuzzer/target.h"
#include "ir/ir.h"
#include "ir/owning_executable.h"
#include "ir/verify_policy.h"
#include "recompiler/engine.h"
#include "recompiler/isa_engine.h"
#include "recompiler/replay.h"
#include "runtime/memory.h"

using namespace gpurc;
using replay::json;

namespace {

// Guest steps per warp (reference) or per vertex (pica200): enough for the
// straight-line and short-loop programs mutation makes, and an endless loop
// costs milliseconds instead of seconds.
constexpr uint64_t kBudget = 4096;
// Code bytes taken from an input: each input is compiled on every tier and
// the compilers' cost grows with the program (the Tesla seeds, unsanitized:
// 0.9 ms of CPU each cut to 64 bytes, 1.8 ms at 256, 1.9 ms at 512), so
// inputs stay short; long programs are the
// generated campaigns' (gpurc fuzz --isa). 64 Tesla words, 128 g13 halfwords,
// every former finding (tests/regressions/libfuzzer/) fits.
// scripts/fuzz.sh sets -max_len to match (two selector bytes more).
constexpr size_t kMaxCodeBytes = 256;
// pica200: code words of a raw input (descriptors apart; fuzz.sh's -max_len
// leaves room for 32 descriptors and these), and of a .shbin seed (whole
// example shaders, kept whole so their code is compared, not a cut-off part).
constexpr size_t kMaxPicaRawWords = 128;
constexpr size_t kMaxPicaWords = 256;

uint32_t read_word(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

// The outcome of one input.
struct Verdict {
  enum Kind { Refused, Agree, Disagree } kind = Refused;
  std::string what;  // Disagree: the first difference
  bool faulted = false;  // Agree: the reference faulted (so no state was compared)
};
Verdict refused(std::string why) { return {Verdict::Refused, std::move(why)}; }
Verdict disagree(std::string what) { return {Verdict::Disagree, std::move(what)}; }

// Empties the code cache when an input is done (see the file comment).
struct ClearCodeCache {
  ~ClearCodeCache() { code_cache().clear(); }
};

// ---------------------------------------------------------------- JIT tiers
// Every tier compiles what the pass pipeline makes of the same translation,
// and the pipeline does not depend on the tier: the tiers of one input share
// one run of it (verify, copy, passes) instead of one per tier (compile_ir's
// way, through the code cache). A replay handler translates the code again
// for each tier it is given; that function is compared with the one lowered
// last, field by field, so a translation that differs between calls is
// lowered on its own (and then disagrees like any other).

bool same_function(const ir::Function& a, const ir::Function& b) {
  if (a.name != b.name || a.uniform_bytes != b.uniform_bytes || a.unlaunched_lanes_free != b.unlaunched_lanes_free ||
      a.no_draw_loop != b.no_draw_loop ||
      a.state_vars != b.state_vars || a.vars.size() != b.vars.size() || a.blocks.size() != b.blocks.size() ||
      a.insts.size() != b.insts.size())
    return false;
  for (size_t i = 0; i < a.vars.size(); ++i)
    if (a.vars[i].name != b.vars[i].name || a.vars[i].type != b.vars[i].type) return false;
  for (size_t i = 0; i < a.blocks.size(); ++i)
    if (a.blocks[i].name != b.blocks[i].name || a.blocks[i].insts != b.blocks[i].insts ||
        a.blocks[i].succs != b.blocks[i].succs || a.blocks[i].preds != b.blocks[i].preds)
      return false;
  for (size_t i = 0; i < a.insts.size(); ++i) {
    const ir::Inst &x = a.insts[i], &y = b.insts[i];
    if (x.op != y.op || x.type != y.type || x.attr != y.attr || x.fflags != y.fflags || x.imm != y.imm ||
        x.block != y.block || x.uniform != y.uniform || x.args != y.args)
      return false;
  }
  return true;
}

// The lowered function of the input (the last one lowered; reset per input).
struct SharedLowering {
  std::shared_ptr<const ir::Function> source, lowered;
  // run_pipeline's output for `f`, as compile_ir makes it (verify, copy,
  // passes, the guest vars' layout unchanged); null with `err`.
  std::shared_ptr<const ir::Function> lower(const ir::Function& f, std::string& err) {
    if (source && same_function(*source, f)) return lowered;
    source.reset();
    lowered.reset();
    if (std::string v = ir::verify(f); !v.empty()) fuzz_target::fail("translation does not verify: " + v);
    auto l = std::make_shared<ir::Function>(f);
    if (std::string e = ir::run_pipeline(*l, ir::PassOptions{}); !e.empty()) {
      err = "pass pipeline: " + e;
      return nullptr;
    }
    const std::vector<uint32_t> offsets = f.var_offsets(), lowered_offsets = l->var_offsets();
    const uint32_t state_vars = std::min<uint32_t>(uint32_t(f.vars.size()), f.state_vars);
    for (uint32_t i = 0; i < state_vars; ++i)
      if (i >= l->vars.size() || l->vars[i].type != f.vars[i].type || lowered_offsets[i] != offsets[i]) {
        err = "pass pipeline changed the layout of var '" + f.vars[i].name + "'";
        return nullptr;
      }
    source = std::make_shared<ir::Function>(f);
    lowered = std::move(l);
    return lowered;
  }
};

// A JIT tier as the replay handlers and pica200's launch ABI see it: the
// shared lowering, then the tier's code generator.
class TierHandle final : public isa::EngineHandle {
 public:
  TierHandle(Engine tier, SharedLowering& shared) : tier_(tier), shared_(shared) {}
  std::string name() const override { return engine_name(tier_); }
  bool is_reference() const override { return false; }
  bool compile(const ir::Function& f, const std::string& symbol, isa::Compiled& out, std::string& err) const override {
    std::shared_ptr<const ir::Function> lowered = shared_.lower(f, err);
    if (!lowered) return false;
    const backend::HostTier* tier = tier_.tier();
    if (!tier) fuzz_target::fail(name() + " is not a host tier");
    backend::CompileOptions co;
    co.symbol = symbol;
    std::string e;
    std::unique_ptr<backend::CompiledCode> code = tier->compile(*lowered, co, &e);
    if (!code) {
      err = std::string(tier->name) + ": " + (e.empty() ? "compilation failed" : e);
      return false;
    }
    uint64_t max_step_cost = 1;  // CompiledIr::max_step_cost: the largest budget charge
    for (const ir::Block& b : lowered->blocks)
      for (ir::ValueId v : b.insts)
        if (lowered->insts[v].op == ir::Opcode::Budget) max_step_cost = std::max<uint64_t>(max_step_cost, lowered->insts[v].imm);
    out.exe = std::make_shared<ir::OwningExecutable>(lowered, std::move(code));
    out.vars_bytes = lowered->vars_bytes();
    out.max_step_cost = max_step_cost;
    out.compile_us = 0;
    return true;
  }

 private:
  Engine tier_;
  SharedLowering& shared_;
};

// ---------------------------------------------------------------- generic
// (tesla, g13, bifrost): a replay document of one block and one buffer.

json words_of(const uint8_t* p, size_t n) {
  json w = json::array();
  for (size_t i = 0; i + 4 <= n; i += 4) w.push_back(fmt::format("0x{:08x}", read_word(p + i)));
  return w;
}

std::string hex_of(const uint8_t* p, size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) s += fmt::format("{:02x}", p[i]);
  return s;
}

// The replay document of the input (`inject`: the buffer starts with other
// bytes, the self-check's disagreement), and the code the module translates.
// False when the input is too short to hold a program.
bool document(const isa::IsaModule& m, const uint8_t* data, size_t size, bool inject, json& doc,
              std::vector<uint8_t>& code, std::string& variant) {
  if (size < 2 + 2) return false;  // g13: one 2-byte instruction is a program
  const unsigned threads = 1 + data[0] % 64;
  variant = fuzz_target::pick_variant(m, data[1]);
  if (variant.find(':') != std::string::npos) variant = variant.substr(0, variant.find(':'));
  data += 2;
  size -= 2;
  // Low in the address space: Tesla's reference keeps g[] linear from
  // address 0, so a buffer at 1 MiB would zero a megabyte per input. Not at
  // 0, so a null pointer is outside every buffer (it faults everywhere).
  const char* base = "0x1000";
  const char* second = "0x1800";
  const json init = inject ? json{{"fill", "0x5a5a5a5a"}} : json{{"iota", "u32"}};
  const json buffer = {{"name", "g"}, {"address", base}, {"size", 4096}, {"init", init}};
  doc = {{"gpurc", 1}, {"isa", m.name()}, {"name", "libfuzzer input"}};
  if (!variant.empty()) doc["variant"] = variant;
  const size_t n = std::min(size, kMaxCodeBytes);
  if (m.hex_unit_bytes() == 4) {
    doc["program"] = {{"words", words_of(data, n & ~size_t(3))}};
    doc["state"] = {{"params", {{"u32", {base, second, 16}}}}};
    code.assign(data, data + (n & ~size_t(3)));
  } else {
    doc["program"] = {{"bytes", hex_of(data, n)}};
    doc["state"] = {{"uniforms", {{"u0", base}, {"u1", "0x0"}, {"u2", second}, {"u3", "0x0"}}}};
    code.assign(data, data + n);
  }
  doc["launch"] = {{"grid", {1}}, {"block", {threads}}, {"budget", kBudget}};
  doc["memory"] = json::array({buffer});
  return !code.empty();
}

Verdict run_generic(const isa::IsaModule& m, const uint8_t* data, size_t size, bool inject) {
  json doc, tier_doc;
  std::vector<uint8_t> code;
  std::string variant, err;
  if (!document(m, data, size, false, doc, code, variant)) return refused("too short");
  tier_doc = doc;
  if (inject) document(m, data, size, true, tier_doc, code, variant);
  ir::Function f;
  if (!m.translate(code, variant, f, err)) {
    if (err.empty()) fuzz_target::fail("translate failed without a message");
    return refused("translate: " + err);
  }
  if (std::string v = ir::verify(f); !v.empty()) fuzz_target::fail("translation does not verify: " + v);
  if (!m.has_replay()) return refused("no replay handler");  // no reference run to compare with
  const std::filesystem::path nowhere = "/nonexistent/gpurc-libfuzzer";
  replay::ReplayRun ref;
  try {
    ref = replay::run_document(doc, nowhere, Engine::Interp, 1, false);
  } catch (const std::exception& x) {
    return refused(std::string("reference: ") + x.what());  // the reference refuses the program (e.g. an instruction it does not decode)
  }
  // The reference refusing an instruction when it reaches it (it decodes
  // lazily: "decode", "unsupported") is its verdict on the input, not a
  // run to compare: the translator turns the same words into a trap.
  if (ref.fault_kind == "watchdog" || ref.fault_kind == "unsupported" || ref.fault_kind == "decode")
    return refused("reference: " + ref.fault_kind);
  SharedLowering shared;
  for (Engine tier : host_jit_tiers()) {
    replay::ReplayRun got;
    got.engine = engine_name(tier);
    try {
      // What replay::run_document does, with the tiers' shared lowering.
      const TierHandle handle(tier, shared);
      m.replay(isa::ReplayJob{tier_doc, nowhere, handle, 1, false}, got);
    } catch (const replay::ReplayError& x) {
      // A clear refusal of the program by the JIT's launch path (e.g. g13: a
      // special register a compute launch does not provide, checked up front
      // while the reference only faults if it gets there): not a wrong result.
      return refused(fmt::format("{}: {}", engine_name(tier), x.what()));
    } catch (const std::exception& x) {
      return disagree(fmt::format("the reference ran the program, {} did not: {}", engine_name(tier), x.what()));
    }
    if (got.fault_kind == "watchdog") continue;
    // Fault kinds are not compared: a reference may name a fault otherwise
    // than the translation's trap by design (Tesla: running past the end of
    // the code or branching outside it is out-of-bounds on the reference, a
    // kTrapPastEnd / kTrapBadTarget trap translated; tests/tesla/translate.cpp
    // "guest faults where the interpreter faults" pairs them).
    if (ref.fault.has_value() != got.fault.has_value())
      return disagree(fmt::format("interp {} vs {} {}", ref.fault.value_or("ran to the end"), engine_name(tier),
                                  got.fault.value_or("ran to the end")));
    if (ref.fault) continue;  // the state after a fault depends on the schedule
    std::vector<replay::Mismatch> d = replay::compare_runs(ref, got, 4);
    if (!d.empty())
      return disagree(fmt::format("{}: {}: {} vs {}", engine_name(tier), d.front().what, d.front().expected,
                                  d.front().actual));
  }
  return {Verdict::Agree, {}, ref.fault.has_value()};
}

// ---------------------------------------------------------------- pica200
// Through the launch ABI (frontend/pica200/module/launch.h), with a budget.

struct PicaRun {
  pica::BatchResult result;
  std::vector<pica::VertexState> states;
  std::vector<pica::GsState> gs;
};

// Inputs and uniforms every run starts from: small distinct values, so
// results depend on which register an instruction reads; `inject` changes
// r0 of the first vertex (the self-check's disagreement).
std::vector<pica::VertexState> initial_states(unsigned vertices, bool inject) {
  std::vector<pica::VertexState> s(vertices);
  for (unsigned k = 0; k < vertices; ++k)
    for (unsigned n = 0; n < 16; ++n)
      for (unsigned c = 0; c < 4; ++c) s[k].v[n][c] = float(k) * 0.5f + float(n) - float(c) * 0.25f;
  if (inject) s[0].r[0][0] = 1.0f;
  return s;
}

pica::Uniforms initial_uniforms() {
  pica::Uniforms u;
  for (unsigned n = 0; n < 96; ++n)
    for (unsigned c = 0; c < 4; ++c) u.f[n][c] = float(int(n) - 48) * 0.125f + float(c);
  for (unsigned n = 0; n < 4; ++n) u.i[n] = {uint8_t(n + 1), uint8_t(n), uint8_t(1 + n % 2), 0};
  u.b = 0x5a5a;
  return u;
}

PicaRun run_pica_engine(const pica::PreparedShader& s, bool geometry, unsigned vertices, bool inject) {
  PicaRun run;
  run.states = initial_states(vertices, inject);
  pica::BatchOptions bo;
  bo.threads = 1;
  bo.budget = kBudget;
  const pica::Uniforms u = initial_uniforms();
  run.result = geometry ? pica::run_geometry(s, u, run.states, run.gs, bo) : pica::run_vertices(s, u, run.states, bo);
  return run;
}

bool same_bytes(const void* a, const void* b, size_t n) { return std::memcmp(a, b, n) == 0; }

// The first difference of two runs that both ended without a fault.
std::string pica_difference(const PicaRun& ref, const PicaRun& got) {
  for (size_t k = 0; k < ref.states.size(); ++k) {
    const pica::VertexState &a = ref.states[k], &b = got.states[k];
    for (unsigned n = 0; n < 16; ++n) {
      if (!same_bytes(a.o[n].data(), b.o[n].data(), 16)) return fmt::format("vertex {}: o{}", k, n);
      if (!same_bytes(a.r[n].data(), b.r[n].data(), 16)) return fmt::format("vertex {}: r{}", k, n);
    }
    if (a.a0x != b.a0x || a.a0y != b.a0y) return fmt::format("vertex {}: a0", k);
    if (a.aL != b.aL) return fmt::format("vertex {}: aL", k);
    if (a.cmpx != b.cmpx || a.cmpy != b.cmpy) return fmt::format("vertex {}: cmp", k);
  }
  if (ref.gs.size() != got.gs.size()) return "geometry: invocation count";
  for (size_t k = 0; k < ref.gs.size(); ++k) {
    const auto &pa = ref.gs[k].primitives, &pb = got.gs[k].primitives;
    if (pa.size() != pb.size()) return fmt::format("invocation {}: {} vs {} primitives", k, pa.size(), pb.size());
    for (size_t p = 0; p < pa.size(); ++p) {
      if (pa[p].winding != pb[p].winding) return fmt::format("invocation {}: primitive {} winding", k, p);
      if (!same_bytes(pa[p].vertices.data(), pb[p].vertices.data(), sizeof pa[p].vertices))
        return fmt::format("invocation {}: primitive {} vertices", k, p);
    }
  }
  return {};
}

Verdict run_pica200(const uint8_t* data, size_t size, bool inject) {
  if (size < 2 + 4) return refused("too short");
  // 1-33 vertices: a partial warp, one full warp, two warps.
  const unsigned vertices = 1 + data[0] % 33;
  const uint8_t sel = data[1];
  data += 2;
  size -= 2;
  pica::Program prog;
  pica::TranslateOptions opt;
  opt.geometry = sel & 1;
  pica::Shbin shbin;
  std::string err;
  if (pica::is_shbin(data, size) && pica::parse_shbin(data, size, shbin, err)) {
    // A .shbin (the seeds): its code, descriptors and first entry point.
    if (shbin.code.empty() || shbin.code.size() > kMaxPicaWords || shbin.descs.size() > 128) return refused(".shbin too large");
    prog = pica::program_of(shbin);
    if (!shbin.dvles.empty()) opt.entry = shbin.dvles[0].main_offset;
  } else {
    // sel: bit 0 geometry, bits 1-5 descriptor count - 1; descriptors, then code.
    const size_t descs = std::min<size_t>(1 + (sel >> 1) % 32, size / 4);
    const size_t code_bytes = std::min<size_t>(size - descs * 4, 4 * kMaxPicaRawWords) & ~size_t(3);
    if (code_bytes == 0) return refused("no code");
    for (size_t i = 0; i < descs; ++i) prog.descs.push_back(read_word(data + 4 * i));
    for (size_t i = 0; i < code_bytes; i += 4) prog.code.push_back(read_word(data + descs * 4 + i));
  }
  if (opt.entry >= prog.code.size()) return refused("entry outside the code");
  auto f = std::make_shared<ir::Function>();
  if (!pica::translate(prog, opt, *f, err)) {
    if (err.empty()) fuzz_target::fail("translate failed without a message");
    return refused("translate: " + err);
  }
  if (std::string v = ir::verify(*f); !v.empty()) fuzz_target::fail("translation does not verify: " + v);
  pica::PreparedShader ref_shader;
  if (!pica::prepare_shader(prog, opt, pica::reference_engine(), ref_shader, err)) return refused("reference: " + err);
  const PicaRun ref = run_pica_engine(ref_shader, opt.geometry, vertices, false);
  if (!ref.result.ok && ref.result.fault_kind == "watchdog") return refused("reference: watchdog");
  const std::shared_ptr<const ir::Function> fn = f;
  SharedLowering shared;
  for (Engine tier : host_jit_tiers()) {
    const TierHandle handle(tier, shared);
    isa::Compiled compiled;
    if (!handle.compile(*fn, "gpurc_jit", compiled, err))
      return disagree(fmt::format("{} does not compile IR that verifies: {}", engine_name(tier), err));
    pica::PreparedShader shader;
    if (!pica::prepare_shader(prog, opt, fn, compiled, engine_name(tier), shader, err))
      return disagree(fmt::format("{}: prepare_shader refused what the reference ran: {}", engine_name(tier), err));
    const PicaRun got = run_pica_engine(shader, opt.geometry, vertices, inject);
    if (!got.result.ok && got.result.fault_kind == "watchdog") continue;
    if (ref.result.ok != got.result.ok)
      return disagree(fmt::format("interp {} vs {} {}", ref.result.ok ? "ran to the end" : ref.result.fault,
                                  engine_name(tier), got.result.ok ? "ran to the end" : got.result.fault));
    if (!ref.result.ok) continue;  // the state after a fault depends on the schedule
    if (std::string d = pica_difference(ref, got); !d.empty()) return disagree(fmt::format("{}: {}", engine_name(tier), d));
  }
  return {Verdict::Agree, {}, !ref.result.ok};
}

Verdict run_input(const uint8_t* data, size_t size, bool inject) {
  const ClearCodeCache clear_code_cache;
  const isa::IsaModule& m = fuzz_target::module_of(GPURC_FUZZ_ISA);
  return m.name() == "pica200" ? run_pica200(data, size, inject) : run_generic(m, data, size, inject);
}

// The self-check's program: the shortest one that ends, in the ISA's syntax.
std::string self_check_source(const std::string& isa) {
  if (isa == "pica200") return ".loose_code\nend\n";  // code outside .proc: a gpurc extension
  if (isa == "tesla") return "exit nop\n";
  if (isa == "g13") return "stop\n";
  if (isa == "bifrost") return "clause_0:\nds(0) eos\n{\n    *NOP t0\n    +NOP t1\n}\n";
  return {};
}

// Fails unless the small program runs to its end alike on every engine (so
// its state is compared) and the same
// program with a disagreement injected into the tiers' runs is reported.
void self_check() {
  const isa::IsaModule& m = fuzz_target::module_of(GPURC_FUZZ_ISA);
  if (!m.has_replay() || host_jit_tiers().empty()) return;  // nothing to compare
  const std::string src = self_check_source(m.name());
  if (src.empty()) fuzz_target::fail("self-check: no program for isa " + m.name());
  std::vector<uint8_t> code, input = {3, 0};
  std::string err;
  if (!m.assemble(src, "", code, err)) fuzz_target::fail("self-check: the program does not assemble: " + err);
  input.insert(input.end(), code.begin(), code.end());
  const Verdict plain = run_input(input.data(), input.size(), false);
  if (plain.kind != Verdict::Agree || plain.faulted)
    fuzz_target::fail("self-check: the program does not run to its end alike on every engine: " +
                      std::string(plain.kind == Verdict::Refused ? "refused: " : plain.faulted ? "faulted" : "") +
                      plain.what);
  const Verdict injected = run_input(input.data(), input.size(), true);
  if (injected.kind != Verdict::Disagree)
    fuzz_target::fail("self-check: a disagreement injected into the tiers' runs was not reported");
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  rt::set_memory_limit(uint64_t(16) << 20);  // one 4 KiB buffer per input
  ir::set_verify_built_ir(true);  // every translation verified, whatever the build type
  self_check();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // GPURC_FUZZ_VERDICT=1 prints each input's verdict (why inputs are refused).
  static const bool print_verdict = std::getenv("GPURC_FUZZ_VERDICT") != nullptr;
  const Verdict v = run_input(data, size, false);
  if (print_verdict)
    std::fprintf(stderr, "gpurc fuzz target: %s%s\n",
                 v.kind == Verdict::Refused ? "refused: " : v.kind == Verdict::Agree ? (v.faulted ? "agree (both fault)" : "agree") : "DISAGREE: ",
                 v.what.c_str());
  if (v.kind == Verdict::Disagree) fuzz_target::fail(v.what);
  return 0;
}
