// Tesla kernel launches on the reference interpreter or a JIT tier; see
// launch.h for the memory layout both engines share.
#include "frontend/tesla/module/launch.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>

#include "frontend/tesla/module/reference.h"
#include "frontend/tesla/translate.h"
#include "runtime/memory.h"
#include "runtime/thread_pool.h"

namespace gpurc::tesla_run {

namespace {

using Clock = std::chrono::steady_clock;

double us_since(Clock::time_point t0) { return std::chrono::duration<double, std::micro>(Clock::now() - t0).count(); }

// The interpreter keeps g<i>/c<i> as linear byte vectors from offset 0: a
// buffer far out makes that vector large, so cap it.
constexpr uint64_t kMaxInterpSpaceBytes = uint64_t(1) << 30;
// sm_1x hardware limit (it also keeps tid.x/y/z inside their $r0 fields).
constexpr uint64_t kMaxBlockThreads = 512;
// Per-thread l[] of a JIT launch lives in one Space::Local buffer.
constexpr uint64_t kMaxLocalBytes = uint64_t(1) << 31;

std::string check_buffers(const std::vector<Buffer>& buffers) {
  for (const Buffer& b : buffers) {
    if (b.space != ir::Space::Global && b.space != ir::Space::Const && b.space != ir::Space::Shared)
      return "buffer '" + b.name + "': tesla buffers are in space global (g[]), const (c[]) or shared (initial s[] bytes of every block); l[] is sized by the program's lmem";
    if (b.bytes.empty()) return "buffer '" + b.name + "': size 0";
    if (b.space == ir::Space::Shared) {
      if (b.address + b.bytes.size() > 0x10000)
        return "buffer '" + b.name + "': s[] addresses are 16-bit (ends past 0x10000)";
      continue;
    }
    uint64_t idx = b.address >> 32, off = b.address & 0xffffffffu;
    if (idx > 15) return "buffer '" + b.name + "': address bits 32.. select g0..g15 / c0..c15, got index " + std::to_string(idx);
    if (off + b.bytes.size() > (uint64_t(1) << 32))
      return "buffer '" + b.name + "': crosses the 4 GiB end of its space";
    if (b.space == ir::Space::Const && off + b.bytes.size() > 0x10000)
      return "buffer '" + b.name + "': c[] addresses are 16-bit (ends past 0x10000)";
  }
  return {};
}

uint64_t block_threads(const Launch& l) { return l.block.count(); }

// Shared buffers give every block's s[] initial bytes after the launch
// block and parameters, inside the launch's s[].
std::string check_shared_buffers(const Launch& l, const std::vector<Buffer>& buffers) {
  for (const Buffer& b : buffers) {
    if (b.space != ir::Space::Shared) continue;
    if (b.address < 0x10 + l.params.size())
      return "buffer '" + b.name + "': shared buffers start after the launch block and parameters (at s[" +
             std::to_string(0x10 + l.params.size()) + "] or later)";
    if (b.address + b.bytes.size() > shared_bytes(l))
      return "buffer '" + b.name + "': ends past the block's s[] (launch.shared_bytes = " + std::to_string(shared_bytes(l)) + ")";
  }
  return {};
}

// Global memory the CUDA way: a g<i> space is its own only when a buffer is
// bound at (i << 32) + offset for i >= 1; every other g<i>[] sees the linear
// memory below 4 GiB, so a 32-bit pointer reaches the same buffer through
// g0[] and ptxas' g14[].
uint16_t own_global_spaces(const std::vector<Buffer>& buffers) {
  uint16_t own = 1;
  for (const Buffer& b : buffers)
    if (b.space == ir::Space::Global) own = uint16_t(own | 1u << (b.address >> 32 & 15));
  return own;
}

// Every block's initial s[] from the shared buffers (empty without any).
std::vector<uint8_t> shared_image(const std::vector<Buffer>& buffers) {
  std::vector<uint8_t> image;
  for (const Buffer& b : buffers) {
    if (b.space != ir::Space::Shared) continue;
    if (image.size() < b.address + b.bytes.size()) image.resize(size_t(b.address + b.bytes.size()), 0);
    std::memcpy(image.data() + b.address, b.bytes.data(), b.bytes.size());
  }
  return image;
}

// The interpreter's g<i> / c<i> bytes a (checked) buffer lives in. (Written
// without indexing a conditional expression of two arrays, which GCC 12's
// -fsanitize=bounds misreports.)
std::vector<uint8_t>& space_bytes(tesla::LaunchMemory& mem, const Buffer& b) {
  std::vector<uint8_t>* bank = b.space == ir::Space::Global ? mem.global : mem.cbuf;
  return bank[b.address >> 32];
}

// Vertex and geometry programs have per-thread a[] inputs and o[] outputs.
bool has_attrs(const Kernel& k) { return k.target.ptype == tesla::kVP || k.target.ptype == tesla::kGP; }

tesla::BlockConfig block_config(const Kernel& k, const Launch& l, const std::vector<Buffer>& buffers) {
  tesla::BlockConfig cfg;
  cfg.own_global_spaces = own_global_spaces(buffers);
  cfg.shared_image = shared_image(buffers);
  cfg.block[0] = l.block.x, cfg.block[1] = l.block.y, cfg.block[2] = l.block.z;
  cfg.grid[0] = l.grid.x, cfg.grid[1] = l.grid.y;
  cfg.params = l.params;
  cfg.smem = shared_bytes(l);
  cfg.lmem = k.lmem;
  cfg.regs = k.regs;
  cfg.call_limit = k.call_limit;
  cfg.entry = k.entry;
  cfg.attr_bytes = k.attr_bytes;
  if (l.budget > 0) {
    uint64_t warps = (block_threads(l) + 31) / 32;
    cfg.max_steps = uint64_t(l.budget) > (uint64_t(1) << 62) / warps ? uint64_t(1) << 62 : uint64_t(l.budget) * warps;
  }
  return cfg;
}

// ---------------------------------------------------------------- interp
// The reference interpreter through rt::launch (reference.h): g[]/c[] as the
// interpreter's linear LaunchMemory, s[] the launch's shared memory, l[] its
// per-thread stacks.
Outcome run_interp(const Kernel& k, const Launch& l, std::vector<Buffer>& buffers, const Options& opt) {
  Outcome out;
  tesla::LaunchMemory mem;
  for (const Buffer& b : buffers) {
    if (b.space == ir::Space::Shared) continue;  // BlockConfig::shared_image
    uint64_t end = (b.address & 0xffffffffu) + b.bytes.size();
    if (end > kMaxInterpSpaceBytes) {
      out.error = "buffer '" + b.name + "': the interpreter keeps g[]/c[] linear from 0 and supports ends up to 1 GiB";
      return out;
    }
    std::vector<uint8_t>& v = space_bytes(mem, b);
    if (v.size() < end) v.resize(size_t(end), 0);
    std::memcpy(v.data() + (b.address & 0xffffffffu), b.bytes.data(), b.bytes.size());
    // Only the buffers' own bytes are accessible, as on the JIT engines.
    auto& mapped = (b.space == ir::Space::Global ? mem.global_mapped : mem.cbuf_mapped)[b.address >> 32];
    mapped.push_back({b.address & 0xffffffffu, end});
  }
  tesla::BlockConfig cfg = block_config(k, l, buffers);
  cfg.attr_in = l.attr_in;  // every thread's a[] (global thread g at g * attr_bytes)
  const bool attrs = has_attrs(k);
  if (attrs) out.outputs.assign(size_t(l.grid.count() * block_threads(l) * k.attr_bytes), 0);
  // Blocks run on several host threads only without global atomics (the
  // interpreter's are plain read-modify-writes).
  const unsigned threads = opt.threads != 1 && l.grid.count() > 1 && interp_blocks_parallel_safe(k) ? opt.threads : 1;
  auto t0 = Clock::now();
  tesla::GridResult g =
      tesla::run_reference_grid(k.code, k.target, cfg, mem, threads, attrs, out.outputs, opt.count_instructions);
  out.lane_instructions = g.lane_instructions;
  out.run_us = us_since(t0);
  if (!g.error.empty()) {
    out.error = g.error;
    return out;
  }
  if (!g.result.ok()) {
    out.faulted = true;
    out.fault_kind = tesla::fault_kind_name(g.result.fault);
    out.fault_message = "block (" + std::to_string(g.fault_block % l.grid.x) + "," +
                        std::to_string(g.fault_block / l.grid.x) + "): " + g.result.message;
  }
  for (Buffer& b : buffers) {
    if (b.space == ir::Space::Shared) continue;  // initial bytes of every block: unchanged
    const std::vector<uint8_t>& v = space_bytes(mem, b);
    std::memcpy(b.bytes.data(), v.data() + (b.address & 0xffffffffu), b.bytes.size());
  }
  return out;
}

// ---------------------------------------------------------------- JIT
struct Prepared {
  tesla::BlockConfig cfg;
  ir::Function f;
  std::vector<uint8_t> uniforms;
  uint32_t local_stride = 0;
  uint32_t attr_stride = 0;      // a[]/o[] bytes per thread in their Space::Local buffers; 0 = not used
};

// Translation; false with `err` naming the instruction the translator cannot handle.
bool prepare(const Kernel& k, const Launch& l, const std::vector<Buffer>& buffers, Prepared& p, std::string& err) {
  p.cfg = block_config(k, l, buffers);
  tesla::TranslateOptions topt = tesla::options_for(p.cfg, k.target, k.entry);
  topt.fresh_launch = true;  // run_jit: rt::launch from zeroed vars, no finish reads them
  topt.discard_state = true;  // and run_jit's outputs are the buffers: no finish callback reads the state
  if (!tesla::translate(k.code, topt, p.f, err)) return false;
  p.uniforms = tesla::pack_uniforms(p.cfg);
  if (p.uniforms.size() < p.f.uniform_bytes) p.uniforms.resize(p.f.uniform_bytes, 0);
  p.uniforms.resize((p.uniforms.size() + 63) & ~size_t(63), 0);  // engines may read whole vectors
  p.local_stride = (k.lmem + 15) & ~uint32_t(15);
  if (tesla::attr_slot(p.f) != tesla::LaunchSlots::kNoSlot) p.attr_stride = (k.attr_bytes + 15) & ~uint32_t(15);
  return true;
}

bool build_memory(const Kernel& k, const Launch& l, const Prepared& p, const std::vector<Buffer>& buffers,
                  rt::Memory& mem, std::string& err) {
  for (const Buffer& b : buffers) {
    if (b.space == ir::Space::Shared) continue;  // in the uniform block the ABI writer stores
    if (!mem.add_buffer(b.name, b.space, b.address, b.bytes.size(), err)) return false;
    std::memcpy(mem.find(b.name)->data(), b.bytes.data(), b.bytes.size());
  }
  if (p.local_stride) {
    uint64_t bytes = uint64_t(p.local_stride) * l.grid.count() * block_threads(l);
    if (bytes > kMaxLocalBytes) {
      err = "l[] of every thread (" + std::to_string(bytes) + " bytes) exceeds 2 GiB";
      return false;
    }
    if (!mem.add_buffer(" tesla l[]", ir::Space::Local, 0, bytes, err)) return false;
  }
  if (p.attr_stride) {
    uint64_t threads = l.grid.count() * block_threads(l), bytes = uint64_t(p.attr_stride) * threads;
    if (bytes > kMaxLocalBytes) {
      err = "a[] of every thread (" + std::to_string(bytes) + " bytes) exceeds 2 GiB";
      return false;
    }
    if (!mem.add_buffer(" tesla a[]", ir::Space::Local, tesla::kAttrBase, bytes, err) ||
        !mem.add_buffer(" tesla o[]", ir::Space::Local, tesla::kAttrBase + tesla::kOutDelta, bytes, err))
      return false;
    uint8_t* a = mem.find(" tesla a[]")->data();
    for (uint64_t g = 0; g < threads && g * k.attr_bytes < l.attr_in.size(); ++g)
      std::memcpy(a + g * p.attr_stride, l.attr_in.data() + g * k.attr_bytes,
                  std::min<size_t>(k.attr_bytes, l.attr_in.size() - g * k.attr_bytes));
  }
  return true;
}

// The per-lane addends and masks of the warp loop's lane vars (rt::LaneVarsPlan).
struct alignas(64) LaneArrays {
  uint32_t iota[ir::kWarpLanes], zero[ir::kWarpLanes], lane0[ir::kWarpLanes];
  uint64_t local[ir::kWarpLanes], attr[ir::kWarpLanes];
};

// What init writes into a full warp, as data (the warp loop, docs/runtime.md):
// every full warp of a block lies in one row when block.x is a multiple of
// 32 or the block is one row; otherwise (and for warps stopped at counted
// barriers, which take the per-warp path anyway) no plan.
bool lane_vars_plan(const Launch& l, const Prepared& p, const tesla::LaunchSlots& slots, uint32_t attr,
                    LaneArrays& a, rt::LaneVarsPlan& plan) {
  if (l.block.x % ir::kWarpLanes != 0 && l.block.y * l.block.z != 1) return false;
  for (unsigned i = 0; i < ir::kWarpLanes; ++i) {
    a.iota[i] = i;
    a.zero[i] = 0;
    a.lane0[i] = i == 0 ? ~0u : 0;
    a.local[i] = uint64_t(i) * p.local_stride;
    a.attr[i] = uint64_t(i) * p.attr_stride;
  }
  auto bytes = [](const auto& x) { return reinterpret_cast<const uint8_t*>(x); };
  // The order of `vars` is the order of the bases below.
  const uint32_t none = tesla::LaunchSlots::kNoSlot;
  const uint32_t offsets[5] = {slots.r0, slots.ctaid, slots.local_base, slots.abi_writer, attr};
  const ir::LaneVarInit all[5] = {{slots.r0, 4, bytes(a.iota), nullptr},
                                  {slots.ctaid, 4, bytes(a.zero), nullptr},
                                  {slots.local_base, 8, bytes(a.local), nullptr},
                                  {slots.abi_writer, 4, bytes(a.zero), bytes(a.lane0)},
                                  {attr, 8, bytes(a.attr), nullptr}};
  unsigned which[5], n = 0;
  for (unsigned i = 0; i < 5; ++i)
    if (offsets[i] != none) {
      which[n++] = i;
      plan.vars.push_back(all[i]);
    }
  // The split form (rt::LaneVarsPlan): $r0, abi_writer and the warp's own
  // offsets into l[] / a[] are the same in every block; ctaid and the
  // block's offsets into l[] / a[] are per block.
  const uint64_t per_block = block_threads(l);
  const uint64_t local_stride = p.local_stride, attr_stride = p.attr_stride;
  const uint32_t full = uint32_t(per_block / ir::kWarpLanes);
  plan.warp_bases.reserve(size_t(full) * n);
  unsigned tid0[3] = {0, 0, 0};  // the warp's first thread, counted on (a full warp lies in one row)
  for (uint32_t w = 0; w < full; ++w) {
    if (w != 0) {
      tid0[0] += ir::kWarpLanes;
      if (tid0[0] >= l.block.x) {
        tid0[0] = 0;
        if (++tid0[1] == l.block.y) tid0[1] = 0, ++tid0[2];
      }
    }
    const uint64_t t = uint64_t(w) * ir::kWarpLanes;
    const uint64_t values[5] = {tesla::launch_r0(tid0), 0, t * local_stride, uint64_t((tid0[0] | tid0[1] | tid0[2]) == 0),
                                tesla::kAttrBase + t * attr_stride};
    for (unsigned i = 0; i < n; ++i) plan.warp_bases.push_back(values[which[i]]);
  }
  const rt::Dim3 grid = l.grid;
  plan.block_bases = [=](const rt::Dim3& first, uint64_t linear, uint32_t count, uint64_t* out) {
    rt::Dim3 b = first;
    for (uint32_t k = 0; k < count; ++k, ++linear, rt::next_block(b, grid)) {
      const unsigned ctaid[2] = {b.x, b.y};
      const uint64_t gid0 = linear * per_block;
      const uint64_t values[5] = {0, tesla::launch_ctaid(ctaid), gid0 * local_stride, 0, gid0 * attr_stride};
      for (unsigned i = 0; i < n; ++i) *out++ = values[which[i]];
    }
  };
  return true;
}

rt::LaunchResult launch_function(const Launch& l, const Prepared& p, const ir::Function& layout,
                                 const ir::Executable& exe, uint32_t vars_bytes, rt::Memory& mem, unsigned threads,
                                 const rt::WarpFinish& finish, bool warp_loop, bool grid_loop) {
  rt::LaunchConfig cfg;
  cfg.warp_loop = warp_loop;
  cfg.grid_loop = grid_loop;
  cfg.grid = l.grid;
  cfg.block = l.block;
  cfg.shared_bytes = p.cfg.smem;
  cfg.vars_bytes = vars_bytes;
  cfg.uniforms = p.uniforms.data();
  if (l.budget > 0) cfg.budget = l.budget;
  // Every `bar` form runs on the counted-barrier scheduler, which orders the
  // warps as the interpreter does (runtime/barrier.h).
  if (uint32_t bar = tesla::barrier_slot(layout); bar != tesla::LaunchSlots::kNoSlot) cfg.barrier_var = bar;
  uint64_t per_block = block_threads(l);
  const tesla::LaunchSlots slots = tesla::launch_slots(layout);
  const uint32_t attr = tesla::attr_slot(layout);
  // One call per warp (the lanes' l[] are consecutive: thread_linear is warp * 32 + lane).
  auto init = [&](const rt::WarpInfo& w, uint8_t* vars) {
    unsigned ctaid[2] = {w.block.x, w.block.y};
    uint64_t gid0 = w.block_linear * per_block + w.thread_linear(0);
    const rt::Dim3 &t0 = w.thread[0], &tn = w.thread[w.lanes ? w.lanes - 1 : 0];
    if (tn.y == t0.y && tn.z == t0.z && tn.x - t0.x == (w.lanes ? w.lanes - 1 : 0)) {
      // The usual warp: consecutive tid.x in one row of the block.
      const unsigned tid0[3] = {t0.x, t0.y, t0.z};
      tesla::init_launch_warp_row(slots, vars, w.lanes, tid0, ctaid, gid0 * p.local_stride, p.local_stride);
      tesla::init_attr_warp(attr, vars, w.lanes, tesla::kAttrBase + gid0 * p.attr_stride, p.attr_stride);
      return;
    }
    unsigned tid[ir::kWarpLanes][3];
    for (unsigned lane = 0; lane < w.lanes; ++lane)
      tid[lane][0] = w.thread[lane].x, tid[lane][1] = w.thread[lane].y, tid[lane][2] = w.thread[lane].z;
    tesla::init_launch_warp(slots, vars, w.lanes, tid, ctaid, gid0 * p.local_stride, p.local_stride);
    tesla::init_attr_warp(attr, vars, w.lanes, tesla::kAttrBase + gid0 * p.attr_stride, p.attr_stride);
  };
  rt::WarpHooks hooks;
  hooks.init = init;
  hooks.finish = finish;
  LaneArrays arrays;
  rt::LaneVarsPlan plan;
  if (!finish && cfg.barrier_var == rt::LaunchConfig::kPlainBarriers && lane_vars_plan(l, p, slots, attr, arrays, plan))
    hooks.lane_vars = &plan;
  return rt::launch(exe, mem, cfg, hooks, threads == 1 ? nullptr : &rt::ThreadPool::shared(threads));
}

void set_fault(Outcome& out, const rt::LaunchResult& r) {
  if (!r.error.empty()) out.error = r.error;
  if (r.fault && r.fault->deadlock) {
    // The interpreter's kind and wording for the same stall (frontend/tesla/interp.cpp).
    out.faulted = true;
    out.fault_kind = "stack";
    out.fault_message = "block (" + std::to_string(r.fault->block.x) + "," + std::to_string(r.fault->block.y) +
                        "): deadlock: every remaining warp waits at a barrier that cannot complete";
  } else if (r.fault) {
    out.faulted = true;
    out.fault_kind = rt::fault_kind_name(r.fault->kind);
    out.fault_message = r.fault->describe();
  }
}

// Guest lane-instructions of a launch (Outcome::lane_instructions), counted
// by the reference interpreter on a copy of the initial buffers. 0 if that
// run fails or faults.
uint64_t count_lane_instructions(const Kernel& k, const Launch& l, std::vector<Buffer> buffers, unsigned threads) {
  Options counting;
  counting.threads = threads;
  counting.count_instructions = true;
  Outcome o = run_interp(k, l, buffers, counting);
  return o.ok() ? o.lane_instructions : 0;
}

Outcome run_jit(const Kernel& k, const Launch& l, std::vector<Buffer>& buffers, const Options& opt,
                const Prepared& p) {
  Outcome out;
  isa::Compiled compiled;
  std::string err;
  if (!opt.engine->compile(p.f, "gpurc_jit", compiled, err)) {
    out.error = "compile: " + err;
    return out;
  }
  out.compile_us = compiled.compile_us;
  rt::Memory mem;
  if (!build_memory(k, l, p, buffers, mem, err)) {
    out.error = err;
    return out;
  }
  auto t0 = Clock::now();
  rt::LaunchResult r = launch_function(l, p, p.f, *compiled.exe, compiled.vars_bytes, mem, opt.threads, nullptr,
                                      opt.warp_loop, opt.grid_loop);
  out.run_us = us_since(t0);
  set_fault(out, r);
  for (Buffer& b : buffers)
    if (b.space != ir::Space::Shared) std::memcpy(b.bytes.data(), mem.find(b.name)->data(), b.bytes.size());
  if (has_attrs(k)) {
    uint64_t threads = l.grid.count() * block_threads(l);
    out.outputs.assign(size_t(threads * k.attr_bytes), 0);
    if (p.attr_stride) {
      const uint8_t* o = mem.find(" tesla o[]")->data();
      for (uint64_t g = 0; g < threads; ++g)
        std::memcpy(out.outputs.data() + g * k.attr_bytes, o + g * p.attr_stride, k.attr_bytes);
    }
  }
  return out;
}

}  // namespace

uint32_t shared_bytes(const Launch& l) {
  if (l.smem) return l.smem;
  return uint32_t((0x10 + l.params.size() + 15) & ~size_t(15));
}

std::string check_launch(const Launch& l) {
  if (l.block.count() > kMaxBlockThreads)
    return "block: sm_1x blocks have at most " + std::to_string(kMaxBlockThreads) + " threads";
  if (l.grid.z != 1) return "grid: CUDA 1.x grids are two-dimensional (grid z must be 1)";
  if (l.grid.x >= 0x10000 || l.grid.y >= 0x10000) return "grid: nctaid is a u16 (at most 65535 per dimension)";
  if (l.params.size() > 0x10000 - 0x10) return "params: more than s[] can hold";
  uint32_t smem = shared_bytes(l);
  if (smem < 0x10 + l.params.size())
    return "shared_bytes: s[] must hold the launch block and params (at least " +
           std::to_string(0x10 + l.params.size()) + " bytes)";
  if (smem > 0x10000) return "shared_bytes: s[] addresses are 16-bit (at most 65536 bytes)";
  return {};
}

bool interp_blocks_parallel_safe(const Kernel& k) {
  for (size_t pos = 0; pos < k.code.size();) {
    tesla::Insn in = tesla::decode(k.code.data(), k.code.size(), pos, k.target);
    if (in.op == tesla::Op::RedG || in.op == tesla::Op::AtomG) return false;
    pos += in.words ? in.words : 1;
  }
  return true;
}

Outcome run(const Kernel& k, const Launch& l, std::vector<Buffer>& buffers, const Options& opt) {
  Outcome out;
  if (std::string e = check_launch(l); !e.empty()) {
    out.error = "launch: " + e;
    return out;
  }
  if (std::string e = check_buffers(buffers); !e.empty() || !(e = check_shared_buffers(l, buffers)).empty()) {
    out.error = "memory: " + e;
    return out;
  }
  if (k.code.empty()) {
    out.error = "program: no code";
    return out;
  }
  if (k.attr_bytes == 0 || k.attr_bytes > 0x10000) {
    out.error = "program: attr_bytes must be 1..0x10000 (a[]/o[] offsets are 16-bit)";
    return out;
  }
  if (has_attrs(k) && l.grid.count() * block_threads(l) * k.attr_bytes > kMaxLocalBytes) {
    out.error = "program: a[]/o[] of every thread (threads x attr_bytes) exceed 2 GiB";
    return out;
  }
  const bool reference = !opt.engine || opt.engine->is_reference();
  std::vector<Buffer> initial;
  if (opt.count_instructions && !reference) initial = buffers;
  Prepared p;
  std::string terr;
  bool translated = !reference ? prepare(k, l, buffers, p, terr) : false;
  if (reference) {
    out = run_interp(k, l, buffers, opt);
  } else if (!translated) {
    // The kernel is valid; this engine cannot run it (yet): a guest-level
    // "unsupported" fault naming the instruction, like the interpreter's.
    out.faulted = true;
    out.fault_kind = "unsupported";
    out.fault_message = "tesla translation: " + terr;
    return out;
  } else {
    out = run_jit(k, l, buffers, opt, p);
  }
  // The reference run counted its own; a JIT run is counted on the interpreter.
  if (opt.count_instructions && !reference && out.ok())
    out.lane_instructions = count_lane_instructions(k, l, std::move(initial), opt.threads);
  return out;
}

}  // namespace gpurc::tesla_run
