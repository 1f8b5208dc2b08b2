// Shared helpers of the translation tests: run a program on the reference
// interpreter and on the translation (IR interpreter and every JIT tier of the
// host) from the same initial state and memory, and compare the end states.
#pragma once
#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "frontend/tesla/encoding.h"
#include "frontend/tesla/interp.h"
#include "frontend/tesla/module/reference.h"
#include "frontend/tesla/guest_memory.h"
#include "frontend/tesla/translate.h"
#include "recompiler/engine.h"
#include "ir/scalar.h"
#include "runtime/barrier.h"
#include "runtime/memory.h"

namespace tesla_tr {

using namespace gpurc::tesla;

inline bool light() { return std::getenv("GPURC_TEST_LIGHT") != nullptr; }

struct EndState {
  bool ok = false;
  std::string error;
  std::vector<ThreadState> threads;
  std::vector<uint8_t> shared;
  LaunchMemory mem;
  std::vector<std::vector<uint8_t>> locals;
  std::vector<std::vector<uint8_t>> outs;   // o[] per thread (a[] inputs: attr_pattern)
  gpurc::ir::FaultKind fault = gpurc::ir::FaultKind::None;  // translated runs
  uint64_t fault_code = 0;
  FaultKind ref_fault = FaultKind::None;                     // reference runs
  bool deadlock = false;                                     // translated runs: every warp left waits forever
};

struct Case {
  std::string src;
  unsigned threads = 32;
  std::function<void(unsigned, ThreadState&)> init;  // registers per thread
  std::vector<uint8_t> global0;                     // initial g0[] (and c0[] copy)
  uint32_t smem = 0x100, lmem = 0x40;
  unsigned regs = 128;
  const char* variant = "g200";
};

// Initial a[] byte k of thread t (vertex/geometry programs; o[] starts at 0).
inline uint8_t attr_pattern(unsigned t, unsigned k) { return uint8_t(t * 7 + k * 13 + (k >> 4)); }

inline BlockConfig config(const Case& c) {
  BlockConfig cfg;
  cfg.attr_in.resize(size_t(c.threads) * cfg.attr_bytes);
  for (unsigned t = 0; t < c.threads; ++t)
    for (unsigned k = 0; k < cfg.attr_bytes; ++k) cfg.attr_in[size_t(t) * cfg.attr_bytes + k] = attr_pattern(t, k);
  cfg.block[0] = c.threads;
  cfg.smem = c.smem;
  cfg.lmem = c.lmem;
  cfg.regs = c.regs;
  return cfg;
}

inline std::vector<ThreadState> initial(const Case& c) {
  std::vector<ThreadState> st(c.threads);
  for (unsigned i = 0; i < c.threads; ++i)
    if (c.init) c.init(i, st[i]);
  return st;
}

inline void init_memory(const Case& c, LaunchMemory& m) {
  m.global[0] = c.global0;
  if (m.global[0].size() < 0x200) m.global[0].resize(0x200, 0);
  m.cbuf[0] = m.global[0];
}

inline EndState run_reference(const Case& c, const std::vector<uint32_t>& code, const Target& t) {
  EndState e;
  init_memory(c, e.mem);
  BlockInterpreter bi(code, t, config(c), &e.mem);
  RunResult r = bi.run_with(initial(c));
  e.ok = r.ok();
  e.error = r.message;
  e.ref_fault = r.fault;
  for (unsigned i = 0; i < c.threads; ++i) e.threads.push_back(bi.thread(i));
  e.shared = bi.shared();
  for (unsigned i = 0; i < c.threads; ++i) e.locals.push_back(bi.local(i));
  for (unsigned i = 0; i < c.threads; ++i) e.outs.push_back(bi.out(i));
  return e;
}

// Runs the translated function on one engine, its warps scheduled at
// barriers as rt::launch schedules Tesla code (runtime/barrier.h).
inline EndState run_translated(const Case& c, const std::vector<uint32_t>& code, const Target& t,
                               gpurc::Engine engine) {
  EndState e;
  init_memory(c, e.mem);
  TranslateOptions opt = options_for(config(c), t);
  opt.launch_abi = false;
  gpurc::ir::Function f;
  std::string err;
  if (!translate(code, opt, f, err)) {
    e.error = "translate: " + err;
    return e;
  }
  gpurc::CompiledIr ci;
  gpurc::IrCompileOptions co;
  co.use_cache = false;
  if (!gpurc::compile_ir(f, engine, co, ci, err)) {
    e.error = "compile: " + err;
    return e;
  }
  e.shared.assign(c.smem, 0);
  unsigned nwarps = (c.threads + 31) / 32;
  e.locals.assign(nwarps * 32, std::vector<uint8_t>(c.lmem, 0));
  unsigned attr_bytes = config(c).attr_bytes;
  std::vector<std::vector<uint8_t>> attrs(nwarps * 32, std::vector<uint8_t>(attr_bytes, 0));
  for (unsigned t = 0; t < c.threads; ++t)
    for (unsigned k = 0; k < attr_bytes; ++k) attrs[t][k] = attr_pattern(t, k);
  e.outs.assign(nwarps * 32, std::vector<uint8_t>(attr_bytes, 0));
  TeslaMemory tm(&e.mem, &e.shared, &e.locals, &attrs, &e.outs);
  auto st = initial(c);
  struct W {
    std::vector<uint8_t, std::allocator<uint8_t>> vars_raw, frame_raw;
    uint8_t* vars;
    uint8_t* frame;
    gpurc::ir::WarpContext ctx;
    gpurc::rt::BarrierLanes barrier_seen;
  };
  std::vector<W> ws(nwarps);
  for (unsigned w = 0; w < nwarps; ++w) {
    W& x = ws[w];
    x.vars_raw.assign(ci.vars_bytes + 128, 0);
    x.vars = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(x.vars_raw.data()) + 63) & ~uintptr_t(63));
    x.frame_raw.assign(ci.exe->frame_bytes() + 128, 0);
    x.frame = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(x.frame_raw.data()) + 63) & ~uintptr_t(63));
    uint32_t mask = 0;
    for (unsigned l = 0; l < 32 && w * 32 + l < c.threads; ++l) {
      init_state_lane(f, x.vars, l, st[w * 32 + l], uint64_t(w * 32 + l) * kLocalStride);
      mask |= 1u << l;
    }
    init_attr_warp(attr_slot(f), x.vars, 32, kAttrBase + uint64_t(w) * 32 * kLocalStride, kLocalStride);
    x.ctx.vars = x.vars;
    x.ctx.frame = x.frame;
    x.ctx.entry_mask = mask;
    x.ctx.memory = &tm;
    x.ctx.budget = 1 << 24;
  }
  // The runtime's counted-barrier scheduler, as rt::launch runs Tesla code.
  const uint32_t bar = barrier_slot(f);
  gpurc::rt::CountedEnd end = gpurc::rt::run_counted_barriers(nwarps, [&](uint32_t w) {
    W& x = ws[w];
    gpurc::rt::CountedStep r;
    auto s = ci.exe->run(x.ctx);
    if (s == gpurc::ir::RunStatus::Fault) {
      e.error = "fault " + std::to_string(int(x.ctx.fault)) + " code " + std::to_string(x.ctx.fault_code);
      e.fault = x.ctx.fault;
      e.fault_code = x.ctx.fault_code;
      r.step = gpurc::rt::WarpStep::Stop;
    } else if (s == gpurc::ir::RunStatus::Barrier) {
      r.step = gpurc::rt::WarpStep::Barrier;
      r.word = bar == LaunchSlots::kNoSlot ? 0 : gpurc::rt::take_barrier_word(x.vars + bar, x.barrier_seen);
      if (r.word == 0) {
        e.error = "barrier stop without a descriptor";
        r.step = gpurc::rt::WarpStep::Stop;
      }
    }
    return r;
  });
  if (end == gpurc::rt::CountedEnd::Stopped) return e;
  if (end == gpurc::rt::CountedEnd::Deadlock) {
    e.error = "deadlock";
    e.deadlock = true;
    return e;
  }
  e.outs.resize(c.threads);
  for (unsigned i = 0; i < c.threads; ++i) {
    ThreadState ts = st[i];  // registers the code never names keep their initial value
    read_lane(f, ws[i / 32].vars, i % 32, ts);
    e.threads.push_back(ts);
  }
  e.ok = true;
  return e;
}

inline std::string hex(uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%08x", v);
  return b;
}

// Compares two end states (registers below `regs`, $c, $a1..$a6, exited,
// s[], g0[], every l[] and o[]).
inline void compare_states(const Case& c, const EndState& ref, const EndState& got) {
  for (unsigned i = 0; i < c.threads; ++i) {
    const ThreadState &a = ref.threads[i], &b = got.threads[i];
    INFO("thread " << i);
    for (unsigned r = 0; r < c.regs && r < 128; ++r) {
      INFO("$r" << r << " ref " << hex(a.r[r]) << " got " << hex(b.r[r]));
      CHECK(a.r[r] == b.r[r]);
    }
    for (unsigned k = 0; k < 4; ++k) CHECK(unsigned(a.c[k]) == unsigned(b.c[k]));
    for (unsigned k = 1; k < 7; ++k) CHECK(a.a[k] == b.a[k]);
    CHECK(a.exited == b.exited);
  }
  CHECK(ref.shared == got.shared);
  CHECK(ref.mem.global[0] == got.mem.global[0]);
  for (unsigned i = 0; i < c.threads; ++i) CHECK(ref.locals[i] == got.locals[i]);
  for (unsigned i = 0; i < c.threads; ++i) CHECK(ref.outs[i] == got.outs[i]);
}

// Every instruction in its long form ("long" after an optional label), so
// test programs need no alignment padding.
inline std::string all_long(const std::string& src) {
  std::string out, line;
  for (size_t i = 0; i <= src.size(); ++i) {
    if (i < src.size() && src[i] != '\n') {
      line += src[i];
      continue;
    }
    size_t colon = line.find(": ");
    size_t body = (colon != std::string::npos && line.find(' ') > colon) ? colon + 2 : 0;
    if (!line.empty() && line.compare(body, 5, "long ") != 0) line.insert(body, "long ");
    out += line + "\n";
    line.clear();
  }
  return out;
}

// Runs `c` everywhere and checks every engine reaches the interpreter's end state.
inline void check_case(const Case& c) {
  Target t;
  std::string err;
  REQUIRE(parse_target(c.variant, t, err));
  std::vector<uint32_t> code;
  std::string src = all_long(c.src);
  INFO(src);
  INFO(err);
  REQUIRE(assemble(src, t, code, err));
  EndState ref = run_reference(c, code, t);
  INFO("reference: " << ref.error);
  REQUIRE(ref.ok);
  for (gpurc::Engine eng : gpurc::host_engines()) {
    INFO("engine " << std::string(gpurc::engine_name(eng)));
    EndState got = run_translated(c, code, t, eng);
    INFO(got.error);
    REQUIRE(got.ok);
    compare_states(c, ref, got);
  }
}

// Edge values for register initialisation.
inline uint32_t edge_value(std::mt19937& rng) {
  static const uint32_t edges[] = {0, 1, 2, 0xffffffffu, 0x80000000u, 0x7fffffffu, 0xffff, 0x8000, 0x7fff, 0x10000,
                                   0x3f800000u, 0xbf800000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0x00000001u,
                                   0x80000001u, 0x007fffffu, 0x7f7fffffu, 0x40490fdbu, 0x00800000u, 0x34000000u,
                                   0x4b800000u, 0xcb000000u, 0x1f, 0x20, 0x21, 16, 15, 17};
  std::uniform_int_distribution<int> d(0, int(sizeof edges / sizeof edges[0]) + 9);
  int k = d(rng);
  if (k < int(sizeof edges / sizeof edges[0])) return edges[k];
  return rng();
}

}  // namespace tesla_tr
