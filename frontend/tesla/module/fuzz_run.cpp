#include "frontend/tesla/module/fuzz_run.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "frontend/tesla/guest_memory.h"
#include "frontend/tesla/module/fuzz.h"
#include "frontend/tesla/module/reference.h"
#include "frontend/tesla/translate.h"
#include "ir/interp.h"
#include "runtime/barrier.h"
#include "runtime/launch.h"
#include "runtime/memory.h"

namespace gpurc::fuzz {

using namespace tesla;

namespace {

// The IR engines' watchdog budget per warp (what the IR fuzzer gives them).
constexpr int64_t kTeslaFuzzBudget = int64_t(1) << 32;

std::string hex_u64(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

const char* interp_fault_name(FaultKind k) { return k == FaultKind::None ? "" : tesla::fault_kind_name(k); }

// The IR fault a Tesla fault becomes: misaligned accesses are routed to an
// unbacked address by the translation, so they are out-of-bounds there too;
// stack faults (break without prebrk, overflow) become traps.
const char* ir_fault_name(ir::FaultKind k) {
  switch (k) {
    case ir::FaultKind::Misaligned: return "out-of-bounds";
    default: return rt::fault_kind_name(k);
  }
}


}  // namespace

TeslaOutcome run_tesla_reference(const TeslaProgram& p) {
  TeslaOutcome out;
  out.mem = p.mem;
  BlockInterpreter bi(p.words, p.target, p.cfg, &out.mem);
  bi.shared() = p.shared;
  RunResult r = bi.run_with(p.threads);
  if (!r.ok()) {
    out.fault = interp_fault_name(r.fault);
    out.fault_message = r.message;
  }
  for (unsigned t = 0; t < p.threads.size(); ++t) {
    out.threads.push_back(bi.thread(t));
    out.locals.push_back(bi.local(t));
    out.outs.push_back(bi.out(t));
  }
  out.shared = bi.shared();
  return out;
}

TeslaTranslation translate_tesla(const TeslaProgram& p) {
  TeslaTranslation t;
  TranslateOptions opt = options_for(p.cfg, p.target);
  opt.launch_abi = false;
  if (!translate(p.words, opt, t.f, t.error) && t.error.empty()) t.error = "translate failed";
  return t;
}

namespace {

// Runs a translated function on the program's warps over copies of `p`'s
// memory (with `extra` as g15[] when not empty), through rt::launch (one
// block, its counted-barrier scheduler, as replay and the API run Tesla
// code) with TeslaMemory as every warp's guest memory. Registers come from
// `p.threads` (run_with mode) or, with `launch_abi`, from the launch ABI
// only.
TeslaOutcome run_ir(const ir::Function& f, uint32_t vars_bytes, const ir::Executable& exe, const TeslaProgram& p,
                    bool launch_abi, const std::vector<uint8_t>& extra) {
  TeslaOutcome out;
  const unsigned nthreads = unsigned(p.threads.size());
  const unsigned nwarps = std::max(1u, (nthreads + 31) / 32);

  auto uniforms = rt::allocate_aligned(std::max<uint64_t>(f.uniform_bytes, 64));
  if (launch_abi) {
    std::vector<uint8_t> u = pack_uniforms(p.cfg);
    std::memcpy(uniforms.get(), u.data(), std::min<size_t>(u.size(), f.uniform_bytes));
  }
  out.mem = p.mem;
  out.shared = p.shared;
  if (!extra.empty()) {  // a reproducer: its prologue copies s[] from g14[] and the registers from g15[]
    out.mem.global[kTeslaReproInitBank] = extra;
    out.mem.global[kTeslaReproSharedBank] = p.shared;
    std::fill(out.shared.begin(), out.shared.end(), uint8_t(0));
  }
  const unsigned slots = nwarps * 32;
  out.locals.assign(slots, std::vector<uint8_t>(p.cfg.lmem, 0));
  // a[] from the program's cfg.attr_in (as the reference), o[] from 0.
  std::vector<std::vector<uint8_t>> attrs(slots, std::vector<uint8_t>(p.cfg.attr_bytes, 0));
  for (unsigned t = 0; t < slots && size_t(t) * p.cfg.attr_bytes < p.cfg.attr_in.size(); ++t)
    std::memcpy(attrs[t].data(), p.cfg.attr_in.data() + size_t(t) * p.cfg.attr_bytes,
                std::min<size_t>(p.cfg.attr_bytes, p.cfg.attr_in.size() - size_t(t) * p.cfg.attr_bytes));
  out.outs.assign(slots, std::vector<uint8_t>(p.cfg.attr_bytes, 0));
  TeslaMemory memory(&out.mem, &out.shared, &out.locals, &attrs, &out.outs);

  // A thread's state before the run: registers the code never names keep it
  // (launch_abi.h), so the finished warps read their lanes over it.
  out.threads.resize(nthreads);
  for (unsigned t = 0; t < nthreads; ++t) {
    if (launch_abi) out.threads[t].r[0] = t;  // tid (t, 0, 0), as the launch ABI sets it
    else out.threads[t] = p.threads[t];
  }

  rt::LaunchConfig cfg;
  cfg.block.x = std::max(1u, nthreads);
  cfg.vars_bytes = vars_bytes;
  cfg.uniforms = uniforms.get();
  cfg.budget = kTeslaFuzzBudget;
  if (uint32_t bar = barrier_slot(f); bar != LaunchSlots::kNoSlot) cfg.barrier_var = bar;
  rt::WarpHooks hooks;
  // The state of every lane of the warp: the lanes past the last thread too
  // (run_with mode: zero registers), as the interpreter's warp has them.
  hooks.init = [&](const rt::WarpInfo& info, uint8_t* vars) {
    for (unsigned lane = 0; lane < 32; ++lane) {
      unsigned t = info.warp * 32 + lane;
      uint64_t local_base = uint64_t(t) * kLocalStride;
      if (launch_abi) {
        const unsigned tid[3] = {t, 0, 0}, ctaid[2] = {0, 0};
        if (t < nthreads) init_launch_lane(f, vars, lane, tid, ctaid, local_base);
        continue;
      }
      ThreadState st{};
      if (t < nthreads) st = p.threads[t];
      init_state_lane(f, vars, lane, st, local_base);
    }
    init_attr_warp(attr_slot(f), vars, 32, kAttrBase + uint64_t(info.warp) * 32 * kLocalStride, kLocalStride);
  };
  // Every space is the interpreter's bytes (TeslaMemory): no inline windows.
  hooks.memory = [&](const rt::WarpInfo&, ir::GuestMemory&, ir::WarpContext& ctx) -> ir::GuestMemory* {
    for (auto& w : ctx.windows) w = ir::MemWindow{};
    for (auto& space : ctx.extra_windows)
      for (auto& w : space) w = ir::MemWindow{};
    return &memory;
  };
  hooks.setup = [&](const rt::WarpInfo&, ir::WarpContext& ctx) {
    if (nthreads == 0) ctx.entry_mask = 0;  // the one warp of an empty launch runs no lane
  };
  hooks.finish = [&](const rt::WarpInfo& info, const uint8_t* vars) {
    for (unsigned lane = 0; lane < 32 && info.warp * 32 + lane < nthreads; ++lane)
      read_lane(f, vars, lane, out.threads[info.warp * 32 + lane]);
  };
  bool engine_fault = false;  // launch's own Unsupported fault (a stop without a barrier word) calls no hook
  hooks.fault = [&](const rt::WarpInfo&, const ir::WarpContext&, rt::LaunchFault&) { engine_fault = true; };
  rt::Memory unused;  // every access goes to TeslaMemory
  const rt::LaunchResult r = rt::launch(exe, unused, cfg, hooks);
  if (!r.error.empty()) {
    out.error = r.error;
    return out;
  }
  if (r.fault && r.fault->deadlock) {  // the interpreter's kind for it
    out.fault = "stack";
    out.fault_message = "deadlock: every remaining warp waits at a barrier that cannot complete";
  } else if (r.fault && !engine_fault) {
    out.error = "barrier stop without a descriptor";
    return out;
  } else if (r.fault) {
    const rt::LaunchFault& x = *r.fault;
    out.fault = ir_fault_name(x.kind);
    out.fault_message = "fault code " + hex_u64(x.code) + " at " + hex_u64(x.addr) + " warp " + std::to_string(x.warp) +
                        " lane " + std::to_string(x.lane);
  }
  out.locals.resize(nthreads);
  out.outs.resize(nthreads);
  if (!extra.empty()) {
    out.mem.global[kTeslaReproInitBank].clear();
    out.mem.global[kTeslaReproSharedBank].clear();
  }
  return out;
}

}  // namespace

TeslaOutcome run_tesla_translated(const TeslaProgram& p, const ir::Function& layout, uint32_t vars_bytes,
                                  const ir::Executable& exe) {
  return run_ir(layout, vars_bytes, exe, p, false, {});
}

TeslaOutcome run_tesla_replay(const TeslaProgram& p) {
  TeslaOutcome out;
  std::vector<uint32_t> words;
  uint32_t entry = 0;
  std::vector<uint8_t> init;
  if (!tesla_replay_prologue(p, words, entry, init, out.error)) return out;
  TranslateOptions opt = options_for(p.cfg, p.target, entry);
  opt.launch_abi = true;
  ir::Function f;
  if (!translate(words, entry, opt, f, out.error)) {
    out.error = "translate: " + out.error;
    return out;
  }
  std::unique_ptr<ir::Executable> exe = ir::make_ir_interpreter(f);
  return run_ir(f, uint32_t(f.vars_bytes()), *exe, p, true, init);
}

std::string compare_tesla(const TeslaProgram& p, const TeslaOutcome& ref, const TeslaOutcome& got) {
  if (!ref.error.empty()) return "reference failed: " + ref.error;
  if (!got.error.empty()) return got.error;
  if (ref.fault != got.fault)
    return "fault: expected " + (ref.fault.empty() ? std::string("none") : ref.fault + " (" + ref.fault_message + ")") +
           ", got " + (got.fault.empty() ? std::string("none") : got.fault + " (" + got.fault_message + ")");
  if (!ref.fault.empty()) return "";
  const unsigned regs = std::min(p.cfg.regs, 128u);
  for (unsigned t = 0; t < ref.threads.size() && t < got.threads.size(); ++t) {
    const ThreadState& a = ref.threads[t];
    const ThreadState& b = got.threads[t];
    std::string lane = " lane " + std::to_string(t) + ": expected ";
    for (unsigned r = 0; r < regs; ++r)
      if (a.r[r] != b.r[r]) return "$r" + std::to_string(r) + lane + hex_u64(a.r[r]) + ", got " + hex_u64(b.r[r]);
    for (unsigned r = 1; r < 8; ++r)
      if (r != 5 && r != 6 && a.a[r] != b.a[r])
        return "$a" + std::to_string(r) + lane + hex_u64(a.a[r]) + ", got " + hex_u64(b.a[r]);
    for (unsigned c = 0; c < 4; ++c)
      if ((a.c[c] & 15) != (b.c[c] & 15)) return "$c" + std::to_string(c) + lane + hex_u64(a.c[c]) + ", got " + hex_u64(b.c[c]);
    if (a.exited != b.exited)
      return "exited" + lane + std::to_string(a.exited) + ", got " + std::to_string(b.exited);
  }
  auto bytes = [](const std::string& what, const std::vector<uint8_t>& x, const std::vector<uint8_t>& y) {
    if (x.size() != y.size()) return what + ": size " + std::to_string(x.size()) + " vs " + std::to_string(y.size());
    for (size_t i = 0; i < x.size(); ++i)
      if (x[i] != y[i]) return what + "[" + hex_u64(i) + "]: expected byte " + hex_u64(x[i]) + ", got " + hex_u64(y[i]);
    return std::string();
  };
  std::string d;
  for (int g = 0; g < 16; ++g)
    if (!(d = bytes("g" + std::to_string(g), ref.mem.global[g], got.mem.global[g])).empty()) return d;
  if (!(d = bytes("s", ref.shared, got.shared)).empty()) return d;
  for (unsigned t = 0; t < ref.locals.size() && t < got.locals.size(); ++t)
    if (!(d = bytes("l(lane " + std::to_string(t) + ")", ref.locals[t], got.locals[t])).empty()) return d;
  for (unsigned t = 0; t < ref.outs.size() && t < got.outs.size(); ++t)
    if (!(d = bytes("o(lane " + std::to_string(t) + ")", ref.outs[t], got.outs[t])).empty()) return d;
  return "";
}


namespace {

// The kind of a difference: its first word ("$r3", "fault", "s[0x10]", ...)
// without lane or address details.
std::string kind_of(const std::string& d) {
  std::string k = d.substr(0, d.find_first_of(" [:"));
  return k;
}

}  // namespace

unsigned minimize_tesla(TeslaProgram& p, const TeslaDifference& difference) {
  uint64_t short_nop = 0, long_nop = 0;
  unsigned n = 0;
  std::string err;
  if (!assemble_one("mov b32 $r30 $r30", p.target, short_nop, n, err) || !assemble_one("nop", p.target, long_nop, n, err))
    return 0;
  const bool ref_may_fault = !run_tesla_reference(p).fault.empty();
  const std::string kind = kind_of(difference(p, ref_may_fault));
  if (kind.empty()) return 0;
  unsigned removed = 0;
  // Control flow stays: removing half of a joinat/bra or prebrk/brk pair
  // makes a program outside the generator's structure, where the reference
  // and the translation may legitimately disagree.
  for (bool progress = true; progress;) {
    progress = false;
    for (size_t pos = 0; pos < p.words.size();) {
      Insn in = decode(p.words.data(), p.words.size(), pos, p.target);
      size_t len = in.words;
      uint64_t nop = len == 2 ? long_nop : short_nop;
      uint64_t cur = len == 2 ? (uint64_t(p.words[pos + 1]) << 32 | p.words[pos]) : p.words[pos];
      // Template instructions that keep loops bounded and addresses in
      // bounds (destinations above the data registers) stay too.
      const Operand* dst = in.find(Role::Dst);
      bool control = in.join || in.exit || in.is_control ||
                     (dst && dst->kind == OKind::Reg && dst->reg >= kTeslaDataRegs);
      if (cur != nop && !control) {
        TeslaProgram q = p;
        q.words[pos] = uint32_t(nop);
        if (len == 2) q.words[pos + 1] = uint32_t(nop >> 32);
        std::string d = difference(q, ref_may_fault);
        if (!d.empty() && kind_of(d) == kind) {
          p.words = std::move(q.words);
          ++removed;
          progress = true;
        }
      }
      pos += len;
    }
  }
  // Refresh the listing.
  p.listing.clear();
  for (size_t pos = 0; pos < p.words.size();) {
    Insn in = decode(p.words.data(), p.words.size(), pos, p.target);
    char b[16];
    std::snprintf(b, sizeof b, "%04zx: ", pos);
    p.listing.push_back(b + format(in));
    pos += in.words;
  }
  return removed;
}

}  // namespace gpurc::fuzz
