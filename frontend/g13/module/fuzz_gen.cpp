#include "frontend/g13/module/fuzz_gen.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <set>

#include <nlohmann/json.hpp>

#include "frontend/g13/g13.h"
#include "frontend/g13/reference.h"
#include "frontend/g13/translate.h"
#include "runtime/launch.h"
#include "runtime/memory.h"

namespace gpurc::fuzz {

namespace {

using json = nlohmann::json;

constexpr unsigned kLaneReg = 118, kIndexReg = 119, kFirstCounter = 120, kThreadReg = 123, kSlotReg = 124,
                   kPartnerReg = 125;
constexpr unsigned kMaxLoopDepth = 3, kMaxIfDepth = 4, kMaxExchanges = 4;

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%" PRIX64, v);
  return buf;
}

// Descriptors the structured part of the generator emits itself (control
// flow, memory) or that cannot run in a compute fuzz program.
bool structural(const g13::Desc& d) {
  static const std::set<std::string> names = {
      "pop_exec", "if_icmp", "if_fcmp", "while_icmp", "while_fcmp", "else_icmp", "else_fcmp", "jmp_exec_any",
      "jmp_exec_none", "call", "ret", "stop", "trap", "jmp_incomplete", "threadgroup_barrier", "uniform_store",
      "device_load", "device_store", "threadgroup_load", "threadgroup_store", "stack_load", "stack_store"};
  if (names.count(d.name)) return true;
  for (const auto& op : d.operands)
    if (op.kind == g13::Kind::BranchOffset) return true;
  return false;
}

// Specials of SIMD-group `warp` of a grid [1] x block [threads] compute
// launch: the values launch.h gives such a launch, so a reproducer
// replays the same.
void fill_specials(g13::SimdGroup& sg, uint32_t threads, unsigned warp) {
  auto splat = [&](unsigned sr, uint32_t v) { sg.set_special(sr).fill(v); };
  for (unsigned sr : {0u, 1u, 2u, 20u, 21u, 49u, 50u, 81u, 82u}) splat(sr, 0);
  for (unsigned sr : {5u, 6u, 9u, 10u}) splat(sr, 1);
  splat(4, threads);
  splat(8, threads);
  splat(53, warp);
  for (unsigned sr : {48u, 51u, 80u})
    for (unsigned l = 0; l < 32; ++l) {
      const uint32_t t = 32 * warp + l;
      sg.set_special(sr)[l] = t < threads ? t : 0;
    }
}

// Whether a decoded instruction writes r0 (the exec-mask stack) or a register
// the generator reserves.
bool writes_reserved(const g13::Insn& in) {
  for (const auto& op : in.desc->operands) {
    if (op.name.empty() || op.name[0] != 'D') continue;
    g13::Operand o = g13::decode_operand(in, op, 0);
    unsigned first_half = 0, halves = 0;
    switch (o.type) {
      case g13::OpType::Reg16: first_half = unsigned(o.n); halves = 1; break;
      case g13::OpType::Reg32: first_half = unsigned(o.n) * 2; halves = 2; break;
      case g13::OpType::Reg64: first_half = unsigned(o.n) * 2; halves = 4; break;
      case g13::OpType::Tuple16: first_half = unsigned(o.n); halves = unsigned(o.count); break;
      case g13::OpType::Tuple32: first_half = unsigned(o.n) * 2; halves = 2 * unsigned(o.count); break;
      default: continue;
    }
    if (first_half < 2 || first_half + halves > 2 * kLaneReg) return true;
  }
  return false;
}

// A random encoding is usable if it decodes as its descriptor, writes no
// reserved register, translates, and runs on the interpreter without error.
bool usable(const std::vector<uint8_t>& bytes, const g13::SimdGroup& probe) {
  g13::Insn in;
  fe::Diagnostic d;
  if (!g13::decode(bytes.data(), bytes.size(), 0, in, d) || in.size != bytes.size()) return false;
  if (writes_reserved(in)) return false;
  static const std::vector<uint8_t> stop = [] {
    std::vector<uint8_t> b;
    std::string e;
    g13::assemble_one("stop", 0, b, e);
    return b;
  }();
  std::vector<uint8_t> code = bytes;
  code.insert(code.end(), stop.begin(), stop.end());
  ir::Function f;
  std::string err;
  if (!g13::translate(code.data(), code.size(), f, err)) return false;
  g13::SimdGroup sg = probe;
  g13::Interpreter it(code, nullptr);
  return it.run(sg, 16).kind == g13::StepResult::Kind::Done;
}

g13::SimdGroup probe_group() {
  g13::SimdGroup sg;
  std::mt19937_64 r(7);
  for (auto& half : sg.regs)
    for (auto& v : half) v = uint16_t(r());
  for (auto& l : sg.regs[0]) l = 0;
  for (auto& u : sg.uniforms) u = uint16_t(r());
  fill_specials(sg, 32, 0);
  sg.recompute_exec();
  return sg;
}

struct Candidates {
  std::vector<const g13::Desc*> descs;
  std::vector<bool> cross_lane;  // per descs entry: may read lanes a partial SIMD-group lacks
  g13::SimdGroup probe, probe_one_lane;
};

const Candidates& candidates() {
  static const Candidates c = [] {
    Candidates out;
    out.probe = probe_group();
    out.probe_one_lane = out.probe;
    out.probe_one_lane.launched = 1;
    out.probe_one_lane.recompute_exec();
    std::mt19937_64 rng(1);
    std::vector<uint8_t> bytes;
    for (const g13::Desc& d : g13::table()) {
      if (structural(d)) continue;
      bool any = false, cross = false;
      for (int i = 0; i < 24; ++i)
        if (g13::random_instruction(d, rng, bytes) && usable(bytes, out.probe)) {
          any = true;
          // The interpreter refuses reads of lanes that were never launched
          // (shuffles, quad derivatives): such descriptors only go into
          // programs of full SIMD-groups.
          cross |= !usable(bytes, out.probe_one_lane);
        }
      if (any) {
        out.descs.push_back(&d);
        out.cross_lane.push_back(cross);
      }
    }
    return out;
  }();
  return c;
}

class Generator {
 public:
  Generator(Rng& rng, uint32_t threads, const std::vector<std::string>& exclude)
      : rng_(rng), mt_(rng.next()), partial_(threads % 32 != 0), stride_(32 * ((threads + 31) / 32)),
        exclude_(exclude) {}

  std::vector<uint8_t> run() {
    prologue();
    block(0, 0, -1, 6 + int(rng_.below(20)));
    emit_text("stop");
    for (const Patch& p : patches_) {
      std::vector<uint8_t> b;
      std::string err;
      if (!g13::assemble_one(p.text + " " + hex(p.target), p.pc, b, err) || b.size() != p.size)
        throw std::runtime_error("g13 fuzz generator: cannot patch '" + p.text + "': " + err);
      std::memcpy(code_.data() + p.pc, b.data(), b.size());
    }
    return std::move(code_);
  }

 private:
  struct Patch {
    uint64_t pc, target;
    size_t size;
    std::string text;
  };

  void emit_text(const std::string& text) {
    std::vector<uint8_t> b;
    std::string err;
    if (!g13::assemble_one(text, code_.size(), b, err))
      throw std::runtime_error("g13 fuzz generator: cannot assemble '" + text + "': " + err);
    code_.insert(code_.end(), b.begin(), b.end());
  }

  std::string reg(unsigned lo = 1, unsigned hi = kLaneReg - 1) { return "r" + std::to_string(rng_.range(int(lo), int(hi))); }
  std::string src32() {
    if (rng_.chance(20)) return std::to_string(rng_.below(256));
    return reg(1, 127);
  }

  uint32_t interesting32() {
    static const uint32_t kSpecial[] = {0, 1, 2, 0xFFFFFFFFu, 0x80000000u, 0x7FFFFFFFu, 0x3F800000u, 0xBF800000u,
                                        0x7F800000u, 0xFF800000u, 0x7FC00000u, 0x00000001u, 0x00800000u, 0x80000000u,
                                        0x3C003C00u, 0x7C00FC00u, 0x00010001u, 0x3F000000u, 0x4B000000u, 0x80000001u};
    switch (rng_.below(4)) {
      case 0: return kSpecial[rng_.below(std::size(kSpecial))];
      case 1: return uint32_t(rng_.below(64));
      default: return uint32_t(rng_.next());
    }
  }

  void prologue() {
    emit_text("get_sr r" + std::to_string(kLaneReg) + ", sr52 (thread_index_in_simdgroup)");
    emit_text("get_sr r" + std::to_string(kThreadReg) + ", sr51 (thread_index_in_threadgroup)");
    for (unsigned r = 1; r < kLaneReg; ++r) {
      uint32_t v = interesting32();
      emit_text("mov_imm r" + std::to_string(r) + ", " + std::to_string(v) + ", 0b0");
      if (rng_.chance(40)) emit_text("iadd r" + std::to_string(r) + ", r" + std::to_string(r) + ", r" + std::to_string(kLaneReg));
    }
  }

  void random_alu() {
    const auto& c = candidates();
    if (c.descs.empty()) return;
    std::vector<uint8_t> bytes;
    for (int tries = 0; tries < 64; ++tries) {
      const uint32_t k = rng_.below(uint32_t(c.descs.size()));
      if (partial_ && c.cross_lane[k]) continue;
      const g13::Desc& d = *c.descs[k];
      if (std::find(exclude_.begin(), exclude_.end(), d.name) != exclude_.end()) continue;
      for (int i = 0; i < 16; ++i)
        if (g13::random_instruction(d, mt_, bytes) && usable(bytes, partial_ ? c.probe_one_lane : c.probe)) {
          code_.insert(code_.end(), bytes.begin(), bytes.end());
          return;
        }
    }
  }

  std::string icond() {
    static const char* k[] = {"ueq", "ult", "ugt", "seq", "slt", "sgt", "nueq", "ugte", "ulte", "nseq", "sgte", "slte"};
    return k[rng_.below(std::size(k))];
  }
  std::string fcond() {
    static const char* k[] = {"eq", "lt", "gt", "ltn", "gte", "lte", "gtn", "neq", "nlt", "ngt", "nltn", "ngte", "nlte", "ngtn"};
    return k[rng_.below(std::size(k))];
  }
  std::string condition(const char* icmp, const char* fcmp) {
    const bool no_float = std::find(exclude_.begin(), exclude_.end(), fcmp) != exclude_.end();
    if (rng_.chance(70) || no_float) return std::string(icmp) + " r0l, " + icond() + ", " + reg(1, 127) + ", " + src32() + ", 1";
    return std::string(fcmp) + " r0l, " + fcond() + ", " + reg(1, 127) + ", " + reg(1, 127) + ", 1";
  }

  void memory_op() {
    // r119 = thread + stride * k (stride = 32 per SIMD-group): distinct per
    // thread, so no two threads store to one address.
    // Packed formats are loads only (no store model); the bit-packed ones
    // always write `regs` registers (mask ignored, so the text uses that many).
    static const struct { const char* fmt; unsigned bytes; bool r32; bool load_only; unsigned regs; } kFormats[] = {
        {"i32", 4, true, false, 0}, {"i16", 2, false, false, 0}, {"i8", 1, false, false, 0},
        {"f16", 2, false, false, 0}, {"u8norm", 1, true, false, 0}, {"s16norm", 2, false, false, 0},
        {"rgb10a2", 4, true, true, 4}, {"rgb10a2", 4, false, true, 4}, {"rg11b10f", 4, true, true, 3},
        {"rg11b10f.rtz", 4, false, true, 3}, {"rgb9e5", 4, false, true, 3}, {"rgb9e5.rtz", 4, true, true, 3},
        {"srgba8", 1, true, true, 0}, {"srgba8", 1, false, true, 0}};
    const auto& f = kFormats[rng_.below(std::size(kFormats))];
    static const char* kMasks[] = {"x", "xy", "xyz", "xyzw"};
    const unsigned n = f.regs ? f.regs : 1 + rng_.below(4);
    // Element index thread + stride * k, up to 4 elements of up to 4 bytes:
    // (stride - 1 + stride * k) * 4 * 4 + 16 <= kGlobalSize for k < 256 / stride.
    const unsigned k = rng_.below(256 / stride_ - 1);
    emit_text("iadd r" + std::to_string(kIndexReg) + ", r" + std::to_string(kThreadReg) + ", " +
              std::to_string(stride_ * k));
    const bool store = !f.load_only && rng_.chance(50);
    std::string regs;
    if (f.r32) {
      unsigned r = unsigned(rng_.range(1, int(kLaneReg) - int(n)));
      regs = "r" + std::to_string(r);
      for (unsigned i = 1; i < n; ++i) regs += "_r" + std::to_string(r + i);
    } else {
      unsigned h = unsigned(rng_.range(2, int(2 * kLaneReg) - int(n)));
      auto hname = [](unsigned half) { return "r" + std::to_string(half / 2) + (half % 2 ? "h" : "l"); };
      regs = hname(h);
      for (unsigned i = 1; i < n; ++i) regs += "_" + hname(h + i);
    }
    // Vector element i of thread T sits at (T + stride * k) * 4 + i when the
    // index is shifted by 2 (lsl 2): threads never overlap.
    std::string text = std::string(store ? "device_store" : "device_load") + " 0, " + f.fmt + ", " + kMasks[n - 1] +
                       ", " + regs + ", u0_u1, r" + std::to_string(kIndexReg) + ", unsigned, lsl 2";
    if (store) text += ", 0";
    emit_text(text);
    if (!store) emit_text("wait 0");
  }

  // uniform_store of one or two halves (or two 32-bit registers) into u2..u255
  // (u0_u1 is the device base), often followed by a read of what it stored.
  void uniform_store_op() {
    const bool wide = rng_.chance(25);
    const unsigned halves = wide ? 2 * (1 + rng_.below(2)) : 1 + rng_.below(2);
    const unsigned u_half = 4 + rng_.below(512 - 4 - halves + 1);
    std::string regs;
    if (wide) {
      const unsigned r = unsigned(rng_.range(1, 116));
      regs = "r" + std::to_string(r) + (halves == 4 ? "_r" + std::to_string(r + 1) : "");
    } else {
      const unsigned h = unsigned(rng_.range(2, 2 * 117 - 1));
      auto hname = [](unsigned half) { return "r" + std::to_string(half / 2) + (half % 2 ? "h" : "l"); };
      regs = hname(h) + (halves == 2 ? "_" + hname(h + 1) : "");
    }
    const char* mask = (wide ? halves / 2 : halves) == 2 ? "xy" : "x";
    emit_text("uniform_store 2, i16, " + std::string(mask) + ", 0, " + regs + ", " + std::to_string(u_half));
    if (rng_.chance(60)) {
      const unsigned u = u_half / 2;
      if (rng_.chance(50)) emit_text("iadd " + reg() + ", u" + std::to_string(u) + ", " + reg());
      else emit_text("iadd " + reg() + "l, u" + std::to_string(u) + (rng_.chance(50) ? "h" : "l") + ", 1");
    }
  }

  // Threadgroup exchange (top level only, so every SIMD-group meets the same
  // barriers): each thread stores to its own slot of this exchange's region,
  // threadgroup_barrier, then loads the slot of thread (T + d) mod stride,
  // which may belong to the other SIMD-group (slots of threads that were not
  // launched or did not store read as zero).
  void exchange() {
    // Region k is bytes [4 k stride, 4 (k + 1) stride): i32 element index
    // k stride + slot, i16 element index 2 k stride + slot.
    const unsigned k = exchanges_++;
    const std::string T = "r" + std::to_string(kThreadReg), S = "r" + std::to_string(kSlotReg),
                      P = "r" + std::to_string(kPartnerReg);
    auto half = [&] { return reg() + (rng_.chance(50) ? "h" : "l"); };
    const bool store32 = rng_.chance(50), load32 = rng_.chance(50);
    // Bases up to 2 * 3 * 64 do not fit an 8-bit ALU immediate: mov_imm first.
    emit_text("mov_imm " + S + ", " + std::to_string((store32 ? 1 : 2) * k * stride_) + ", 0b0");
    emit_text("iadd " + S + ", " + S + ", " + T);
    if (store32) emit_text("threadgroup_store i32, x, " + reg() + ", 0, " + S + "l");
    else emit_text("threadgroup_store i16, x, " + half() + ", 0, " + S + "l");
    emit_text("threadgroup_barrier");
    emit_text("iadd " + P + ", " + T + ", " + std::to_string(1 + rng_.below(stride_ - 1)));
    emit_text("and " + P + ", " + P + ", " + std::to_string(stride_ - 1));
    emit_text("mov_imm " + S + ", " + std::to_string((load32 ? 1 : 2) * k * stride_) + ", 0b0");
    emit_text("iadd " + P + ", " + P + ", " + S);
    if (load32) emit_text("threadgroup_load i32, x, " + reg() + ", 0, " + P + "l");
    else emit_text("threadgroup_load i16, x, " + half() + ", 0, " + P + "l");
  }

  // A region of `count` items at if-depth `ifs`, loop-depth `loops`;
  // `ifs_in_loop` is the number of enclosing ifs inside the innermost loop
  // (-1 outside loops), which a break needs to leave the loop.
  void block(unsigned ifs, unsigned loops, int ifs_in_loop, int count) {
    for (int i = 0; i < count && code_.size() < 6000; ++i) {
      unsigned r = rng_.below(100);
      if (r < 51) random_alu();
      else if (r < 61) memory_op();
      else if (r < 63) uniform_store_op();
      else if (r < 65) {
        if (ifs == 0 && loops == 0 && exchanges_ < kMaxExchanges) exchange();
        else random_alu();
      }
      else if (r < 78 && ifs < kMaxIfDepth) if_region(ifs, loops, ifs_in_loop);
      else if (r < 86 && loops < kMaxLoopDepth) loop_region(ifs, loops);
      else if (r < 92 && ifs_in_loop >= 0 && ifs_in_loop + 1 <= int(kMaxIfDepth)) brk(ifs_in_loop);
      else random_alu();
    }
  }

  void if_region(unsigned ifs, unsigned loops, int ifs_in_loop) {
    emit_text(condition("if_icmp", "if_fcmp"));
    const int inner = ifs_in_loop >= 0 ? ifs_in_loop + 1 : -1;
    size_t patch = 0;
    const bool skip = rng_.chance(25);
    if (skip) {
      patch = patches_.size();
      patches_.push_back({code_.size(), 0, 6, "jmp_exec_none"});
      emit_text("jmp_exec_none " + hex(code_.size()));  // placeholder, patched in run()
    }
    block(ifs + 1, loops, inner, 1 + int(rng_.below(5)));
    if (rng_.chance(50)) {
      if (rng_.chance(50)) emit_text("else_fcmp r0l, eq, 0.0, 0.0, 1");  // plain else
      else emit_text(condition("else_icmp", "else_fcmp"));              // else-if
      block(ifs + 1, loops, inner, 1 + int(rng_.below(4)));
    }
    if (skip) patches_[patch].target = code_.size();  // skip to the pop_exec
    emit_text("pop_exec r0l, 1");
  }

  void loop_region(unsigned ifs, unsigned loops) {
    const std::string ctr = "r" + std::to_string(kFirstCounter + loops);
    const std::string limit = std::to_string(1 + rng_.below(4));
    emit_text("mov_imm " + ctr + ", 0, 0b0");
    emit_text("push_exec r0l, 1");
    emit_text("while_icmp r0l, ult, " + ctr + ", " + limit + ", 1");
    const uint64_t top = code_.size();
    block(ifs, loops + 1, 0, 1 + int(rng_.below(5)));
    emit_text("iadd " + ctr + ", " + ctr + ", 1");
    emit_text("while_icmp r0l, ult, " + ctr + ", " + limit + ", 1");
    emit_text("jmp_exec_any " + hex(top));
    emit_text("pop_exec r0l, 1");
  }

  // Break out of the innermost loop from inside `ifs_in_loop` ifs: r0l =
  // ifs + 1, so each enclosing if's pop_exec 1 leaves the lane at 1, outside
  // the loop; pop_exec 0 re-evaluates the exec mask at once.
  void brk(int ifs_in_loop) {
    emit_text(condition("if_icmp", "if_fcmp"));
    emit_text("mov_imm r0l, " + std::to_string(ifs_in_loop + 2));
    // The write of r0l does not change the execution mask: the breaking
    // lanes keep running until pop_exec re-evaluates it.
    if (rng_.chance(40)) random_alu();
    emit_text("pop_exec r0l, 0");
    if (rng_.chance(50)) random_alu();  // runs for nobody who broke
    emit_text("pop_exec r0l, 1");
  }

  Rng& rng_;
  std::mt19937_64 mt_;
  bool partial_;
  unsigned stride_;          // 32 per SIMD-group: slots and memory elements per thread index
  unsigned exchanges_ = 0;
  const std::vector<std::string>& exclude_;
  std::vector<uint8_t> code_;
  std::vector<Patch> patches_;
};

void put_u32(json& doc, const std::string& key, uint32_t v) { doc[key] = hex(v); }

}  // namespace

std::vector<std::string> g13_fuzz_descriptors() {
  std::vector<std::string> out;
  for (const g13::Desc* d : candidates().descs) out.push_back(d->name);
  return out;
}

G13FuzzProgram generate_g13_program(Rng& rng, const std::vector<std::string>& exclude) {
  G13FuzzProgram p;
  // 45 % one full SIMD-group, 30 % one partial, 25 % two (the second often partial).
  const unsigned r = rng.below(100);
  p.threads = r < 45 ? 32 : r < 75 ? 1 + rng.below(31) : 33 + rng.below(32);
  p.shared_bytes = 4 * 32 * p.groups() * kMaxExchanges;
  for (auto& u : p.uniforms) u = uint16_t(rng.next());
  p.uniforms[0] = uint16_t(kGlobalBase);
  p.uniforms[1] = uint16_t(kGlobalBase >> 16);
  p.uniforms[2] = uint16_t(kGlobalBase >> 32);
  p.uniforms[3] = uint16_t(kGlobalBase >> 48);
  p.memory.resize(kGlobalSize);
  for (size_t i = 0; i < p.memory.size(); i += 8) {
    uint64_t v = rng.next();
    std::memcpy(p.memory.data() + i, &v, std::min<size_t>(8, p.memory.size() - i));
  }
  // A program the interpreter refuses (a value-dependent read of an
  // unlaunched lane slipped through) is replaced by the next one.
  for (int attempt = 0;; ++attempt) {
    Generator g(rng, p.threads, exclude);
    p.code = g.run();
    if (attempt >= 16 || run_g13_reference(p).error.empty()) return p;
  }
}

g13::SimdGroup g13_initial_group(const G13FuzzProgram& p, unsigned warp) {
  g13::SimdGroup sg;
  sg.uniforms = p.uniforms;
  const uint32_t lanes = std::min(32u, p.threads - std::min(p.threads, 32 * warp));
  sg.launched = lanes >= 32 ? 0xFFFFFFFFu : (1u << lanes) - 1;
  fill_specials(sg, p.threads, warp);
  sg.recompute_exec();
  return sg;
}

namespace {

// The rounds of a launch, bounded: an engine that reports barriers forever
// is an error, not a hang.
constexpr uint64_t kMaxRounds = 4096;
// The IR budget of a translated run (the IR fuzzer's kFuzzBudget): the
// programs' loops are bounded, so only a runaway translation reaches it.
constexpr int64_t kTranslatedBudget = int64_t(1) << 32;

// A grid [1] x block [threads] launch of the program (its device memory in
// `global`), as its replay file describes it.
rt::LaunchConfig fuzz_config(const G13FuzzProgram& p, int64_t budget) {
  rt::LaunchConfig cfg;
  cfg.grid = {1, 1, 1};
  cfg.block = {p.threads, 1, 1};
  cfg.shared_bytes = p.shared_bytes;
  cfg.budget = budget;
  cfg.max_rounds = kMaxRounds;
  return cfg;
}

bool device_memory(const G13FuzzProgram& p, rt::Memory& global, std::string& err) {
  if (!global.add_buffer("global", ir::Space::Global, kGlobalBase, kGlobalSize, err)) return false;
  std::memcpy(global.find("global")->data(), p.memory.data(), kGlobalSize);
  return true;
}

std::vector<uint8_t> device_bytes(rt::Memory& global) {
  return {global.find("global")->data(), global.find("global")->data() + kGlobalSize};
}

void round_limit(const rt::LaunchResult& r, std::string& error) {
  if (r.fault && r.fault->round_limit) error = "more than " + std::to_string(kMaxRounds) + " barrier rounds";
}

}  // namespace

G13Outcome run_g13_reference(const G13FuzzProgram& p) {
  G13Outcome out;
  rt::Memory global;
  if (!device_memory(p, global, out.error)) return out;
  for (unsigned w = 0; w < p.groups(); ++w) out.groups.push_back(g13_initial_group(p, w));
  g13::ReferenceExecutable exe(p.code);
  rt::LaunchConfig cfg = fuzz_config(p, int64_t(1) << 22);
  cfg.vars_bytes = uint32_t(sizeof(g13::ReferenceState));
  cfg.init_writes_finish_reads = true;  // init copies the whole SimdGroup
  rt::WarpHooks hooks;
  hooks.init = [&](const rt::WarpInfo& w, uint8_t* vars) {
    reinterpret_cast<g13::ReferenceState*>(vars)->sg = out.groups[w.warp];
  };
  hooks.finish = [&](const rt::WarpInfo& w, const uint8_t* vars) {
    out.groups[w.warp] = reinterpret_cast<const g13::ReferenceState*>(vars)->sg;
  };
  hooks.fault = [](const rt::WarpInfo&, const ir::WarpContext& ctx, rt::LaunchFault& f) {
    const g13::ReferenceState& st = *reinterpret_cast<const g13::ReferenceState*>(ctx.vars);
    f.detail = st.message;
  };
  const rt::LaunchResult r = rt::launch(exe, global, cfg, hooks);
  if (r.fault && !r.fault->round_limit) {
    if (r.fault->kind == ir::FaultKind::Unsupported) {
      out.error = "interpreter: " + r.fault->detail;  // an instruction the interpreter cannot run
    } else {
      out.fault = true;
      out.fault_text = r.fault->detail;
    }
  }
  round_limit(r, out.error);
  out.memory = device_bytes(global);
  return out;
}

G13Outcome run_g13_translated(const G13FuzzProgram& p, const ir::Function& translation, uint32_t vars_bytes,
                              const ir::Executable& exe) {
  G13Outcome out;
  rt::Memory global;
  if (!device_memory(p, global, out.error)) return out;
  std::vector<uint8_t> uniforms(std::max<size_t>(g13::kUniformBytes, translation.uniform_bytes) + 64, 0);
  for (unsigned w = 0; w < p.groups(); ++w) out.groups.push_back(g13_initial_group(p, w));
  g13::pack_uniforms(out.groups[0], uniforms.data());
  rt::LaunchConfig cfg = fuzz_config(p, kTranslatedBudget);
  cfg.vars_bytes = std::max(vars_bytes, translation.vars_bytes());
  cfg.uniforms = uniforms.data();
  rt::WarpHooks hooks;
  hooks.init = [&](const rt::WarpInfo& w, uint8_t* vars) { g13::pack_vars(out.groups[w.warp], translation, vars); };
  hooks.finish = [&](const rt::WarpInfo& w, const uint8_t* vars) {
    g13::unpack_vars(vars, translation, out.groups[w.warp]);
  };
  const rt::LaunchResult r = rt::launch(exe, global, cfg, hooks);
  if (r.fault && !r.fault->round_limit) {
    out.fault = true;
    out.fault_text = std::string("fault ") + rt::fault_kind_name(r.fault->kind);
  }
  round_limit(r, out.error);
  out.memory = device_bytes(global);
  return out;
}

std::string compare_g13(const G13FuzzProgram& p, const G13Outcome& ref, const G13Outcome& got) {
  if (!ref.error.empty()) return "reference failed: " + ref.error;
  if (!got.error.empty()) return got.error;
  if (ref.fault != got.fault)
    return "status: expected " + (ref.fault ? ref.fault_text : std::string("done")) + ", got " +
           (got.fault ? got.fault_text : std::string("done"));
  if (ref.fault) return "";
  if (ref.groups.size() != got.groups.size()) return "SIMD-group count differs";
  for (unsigned w = 0; w < ref.groups.size(); ++w) {
    const g13::SimdGroup &a = ref.groups[w], &b = got.groups[w];
    for (unsigned h = 0; h < 256; ++h)
      for (unsigned l = 0; l < 32; ++l)
        if ((a.launched >> l & 1) && a.regs[h][l] != b.regs[h][l])
          return "r" + std::to_string(h / 2) + (h % 2 ? "h" : "l") + " thread " + std::to_string(32 * w + l) +
                 ": expected " + hex(a.regs[h][l]) + ", got " + hex(b.regs[h][l]);
    for (unsigned h = 0; h < 512; ++h)
      if (a.uniforms[h] != b.uniforms[h])
        return "u" + std::to_string(h / 2) + (h % 2 ? "h" : "l") + " of SIMD-group " + std::to_string(w) +
               ": expected " + hex(a.uniforms[h]) + ", got " + hex(b.uniforms[h]);
  }
  for (size_t i = 0; i < ref.memory.size() && i < got.memory.size(); ++i)
    if (ref.memory[i] != got.memory[i])
      return "memory " + hex(kGlobalBase + i) + ": expected byte " + hex(ref.memory[i]) + ", got " + hex(got.memory[i]);
  return "";
}

std::string g13_replay_text(const G13FuzzProgram& p, const G13Outcome& ref, const std::string& name,
                            const std::string& note) {
  static const char* digits = "0123456789abcdef";
  auto to_hex = [&](const std::vector<uint8_t>& b) {
    std::string s;
    for (uint8_t x : b) {
      s += digits[x >> 4];
      s += digits[x & 15];
    }
    return s;
  };
  json doc;
  doc["gpurc"] = 1;
  doc["isa"] = "g13";
  doc["name"] = name;
  doc["description"] = note;
  doc["program"] = {{"bytes", to_hex(p.code)}};
  doc["launch"] = {{"grid", json::array({1})}, {"block", json::array({p.threads})}, {"budget", 1ll << 32}};
  if (p.shared_bytes) doc["launch"]["shared_bytes"] = p.shared_bytes;
  json uniforms = json::object();
  for (unsigned u = 0; u < 256; ++u)
    put_u32(uniforms, "u" + std::to_string(u), uint32_t(p.uniforms[2 * u]) | uint32_t(p.uniforms[2 * u + 1]) << 16);
  doc["state"] = {{"uniforms", uniforms}};
  doc["memory"] = json::array({{{"name", "global"}, {"space", "global"}, {"address", hex(kGlobalBase)},
                                {"size", kGlobalSize}, {"init", {{"hex", to_hex(p.memory)}}}}});
  if (ref.error.empty() && !ref.fault) {
    json regs = json::object();
    for (unsigned r = 1; r < 128; ++r) {
      json lanes = json::array();
      for (unsigned t = 0; t < p.threads; ++t) lanes.push_back(ref.groups[t / 32].r32(r, t % 32));
      regs["r" + std::to_string(r)] = {{"u32", lanes}};
    }
    json mem = {{"name", "global"}, {"u8", ref.memory}};
    doc["expect"] = {{"memory", json::array({mem})}, {"registers", regs}};
  }
  return doc.dump(1) + "\n";
}

}  // namespace gpurc::fuzz
