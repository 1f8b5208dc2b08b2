// Tesla reference interpreter: one warp up to its next stop (run_warp); the
// scheduler is rt::launch's (frontend/tesla/module/reference.cpp). Semantics and every choice the seed documents leave open
// are listed in docs/tesla.md.
#include "frontend/tesla/interp.h"

#include <algorithm>
#include <cfenv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>

#include "ir/barrier_word.h"

namespace gpurc::tesla {

namespace {

enum class Entry : uint8_t { Branch = 1, Call = 2, CallLim = 3, PreBrk = 4, QuadOn = 5, JoinAt = 6 };

// One warp's state lives in a WarpState (interp.h), which rt::launch keeps.
using Warp = WarpState;

struct Fault {
  FaultKind kind;
  std::string msg;
};

float asf(uint32_t u) {
  float x;
  std::memcpy(&x, &u, 4);
  return x;
}
uint32_t asu(float x) {
  uint32_t v;
  std::memcpy(&v, &x, 4);
  return v;
}
double asd(uint64_t u) {
  double x;
  std::memcpy(&x, &u, 8);
  return x;
}
uint64_t asu64(double x) {
  uint64_t v;
  std::memcpy(&v, &x, 8);
  return v;
}
uint32_t ftz32(uint32_t a) { return (a & 0x7f800000u) == 0 ? (a & 0x80000000u) : a; }

int type_bits(const std::string& t) {
  if (t == "u8" || t == "s8") return 8;
  if (t == "u16" || t == "s16" || t == "f16") return 16;
  if (t == "u32" || t == "s32" || t == "f32") return 32;
  if (t == "u64" || t == "s64" || t == "f64") return 64;
  return 0;
}

int round_mode(const Insn& in) {
  for (auto& n : in.names()) {
    if (n == "rn" || n == "rni") return FE_TONEAREST;
    if (n == "rm" || n == "rmi") return FE_DOWNWARD;
    if (n == "rp" || n == "rpi") return FE_UPWARD;
    if (n == "rz" || n == "rzi") return FE_TOWARDZERO;
  }
  return FE_TONEAREST;
}
bool round_int(const Insn& in) {
  for (auto& n : in.names())
    if (n == "rni" || n == "rmi" || n == "rpi" || n == "rzi") return true;
  return false;
}

// The rounding field as nvhw numbers it: 0 nearest even, 1 down, 2 up,
// 3 toward zero.
int cvt_round(const Insn& in) {
  for (auto& n : in.names()) {
    if (n == "rn" || n == "rni") return 0;
    if (n == "rm" || n == "rmi") return 1;
    if (n == "rp" || n == "rpi") return 2;
    if (n == "rz" || n == "rzi") return 3;
  }
  return 0;
}
int fe_mode(int rm) {
  static const int modes[4] = {FE_TONEAREST, FE_DOWNWARD, FE_UPWARD, FE_TOWARDZERO};
  return modes[rm & 3];
}
// The mode that rounds a magnitude as `rm` rounds the value when it is negative.
int mirror_round(int rm, bool negative) {
  if (negative && rm == 1) return 2;
  if (negative && rm == 2) return 1;
  return rm;
}

// Rounds a double to an integer-valued double in the given mode.
double rint_mode(double x, int mode) {
  switch (mode) {
    case FE_DOWNWARD: return std::floor(x);
    case FE_UPWARD: return std::ceil(x);
    case FE_TOWARDZERO: return std::trunc(x);
    default: return std::nearbyint(x);  // default environment: to nearest even
  }
}

// Host double arithmetic in a given rounding mode. volatile keeps the
// operations after the mode switch.
template <class F>
double in_mode(int mode, F fn) {
  int old = std::fegetround();
  std::fesetround(mode);
  volatile double r = fn();
  std::fesetround(old);
  return r;
}

float double_to_float_mode(double d, int mode) {
  return float(in_mode(mode, [&] {
    volatile double x = d;
    volatile float y = float(x);
    return double(y);
  }));
}

}  // namespace

// Runs one warp (run_warp): the warp's state is `w` in every member.
struct Runner {
  const WarpProgram& P;

  explicit Runner(const WarpProgram& p) : P(p) {}

  // ---------------------------------------------------------------- state access
  ThreadState& th(Warp& w, unsigned lane) { return w.th[lane]; }
  uint32_t reg(Warp& w, unsigned lane, int n) {
    return unsigned(n) < P.cfg.regs ? th(w, lane).r[n] : 0;
  }
  void set_reg(Warp& w, unsigned lane, int n, uint32_t v) {
    if (unsigned(n) < P.cfg.regs && n < 128) th(w, lane).r[n] = v;
  }
  uint32_t areg(Warp& w, unsigned lane, int n) {
    if (n <= 0 || n == 5 || n == 6) return 0;
    return th(w, lane).a[n];
  }
  void set_areg(Warp& w, unsigned lane, int n, uint32_t v) {
    if (n <= 0 || n == 5 || n == 6) return;
    if (n == 7) {  // $a7 is one register per warp
      for (unsigned l = 0; l < 32; ++l)
        if (w.launched >> l & 1) th(w, l).a[7] = uint16_t(v);
      return;
    }
    th(w, lane).a[n] = uint16_t(v);
  }

  [[noreturn]] void fail(FaultKind k, const std::string& m) { throw Fault{k, m}; }

  std::string where(Warp& w, const Insn& in) {
    char buf[96];
    std::snprintf(buf, sizeof buf, " at word 0x%x (warp %u)", w.pc, w.warp);
    return "'" + format(in) + "'" + buf;
  }

  // ---------------------------------------------------------------- memory
  struct Pending {
    unsigned lane;
    int areg;
    int64_t delta;
  };
  // Post-increments of the current instruction, applied after it (one list
  // per host thread, reused: no allocation per run).
  std::vector<Pending>& pending_pi = pending_list();
  static std::vector<Pending>& pending_list() {
    thread_local std::vector<Pending> list;
    return list;
  }

  struct Span {
    uint8_t* bytes = nullptr;
    size_t size = 0;
    const std::vector<LaunchMemory::Range>* mapped = nullptr;  // g[]/c[]: the buffers' ranges (empty: all)
  };
  // The bytes of `space` lane `lane` addresses; false for a space the
  // interpreter does not have.
  bool space_span(char space, int idx, Warp& w, unsigned lane, Span& out) {
    const WarpMemory& m = w.memory;
    switch (space) {
      case 's': out = Span{m.shared, size_t(m.shared_bytes)}; return true;
      case 'c': out = Span{m.mem->cbuf[idx & 15].data(), m.mem->cbuf[idx & 15].size(), &m.mem->cbuf_mapped[idx & 15]}; return true;
      case 'g': {
        const unsigned g = (P.cfg.own_global_spaces >> (idx & 15) & 1) ? unsigned(idx & 15) : 0u;
        out = Span{m.mem->global[g].data(), m.mem->global[g].size(), &m.mem->global_mapped[g]};
        return true;
      }
      case 'l': out = Span{m.local ? m.local + lane * m.local_stride : nullptr, m.local ? P.cfg.lmem : 0u}; return true;
      case 'a': out = Span{m.attr ? m.attr + lane * m.attr_stride : nullptr, m.attr ? P.cfg.attr_bytes : 0u}; return true;
      case 'o': out = Span{m.out ? m.out + lane * m.attr_stride : nullptr, m.out ? P.cfg.attr_bytes : 0u}; return true;
      default: return false;
    }
  }

  uint64_t address(Warp& w, unsigned lane, const Operand& o) {
    if (o.space == 'g') return reg(w, lane, o.greg);
    uint64_t base = o.areg > 0 ? areg(w, lane, o.areg) : 0;
    if (o.postinc) {
      pending_pi.push_back(Pending{lane, o.areg, o.offset});
      return base & 0xffff;
    }
    // 16-bit address spaces wrap.
    return uint64_t(int64_t(base) + o.offset) & 0xffff;
  }

  static bool inside_mapped(const std::vector<LaunchMemory::Range>& mapped, uint64_t addr, unsigned bytes) {
    for (const LaunchMemory::Range& r : mapped)
      if (addr >= r.begin && addr + bytes <= r.end) return true;
    return false;
  }

  void access(Warp& w, const Insn& in, unsigned lane, const Operand& o, uint64_t addr, unsigned bytes, bool store,
              uint8_t* data) {
    Span span;
    if (!space_span(o.space, o.idx, w, lane, span)) fail(FaultKind::Unsupported, std::string(1, o.space) + "[] space is not supported: " + where(w, in));
    const Span* buf = &span;
    const bool outside = addr + bytes > buf->size || addr + bytes < addr;
    if (outside || (buf->mapped && !buf->mapped->empty() && !inside_mapped(*buf->mapped, addr, bytes))) {
      char m[160];
      std::snprintf(m, sizeof m, "%s access of %u bytes at 0x%llx outside its %zu bytes (lane %u): ",
                    format_operand(o).c_str(), bytes, static_cast<unsigned long long>(addr), buf->size, lane);
      fail(FaultKind::OutOfBounds, m + where(w, in));
    }
    if (addr % bytes) {
      char m[128];
      std::snprintf(m, sizeof m, "misaligned %u-byte access at 0x%llx (lane %u): ", bytes,
                    static_cast<unsigned long long>(addr), lane);
      fail(FaultKind::OutOfBounds, m + where(w, in));
    }
    if (store) std::memcpy(buf->bytes + addr, data, bytes);
    else std::memcpy(data, buf->bytes + addr, bytes);
  }

  // Reads a source operand as a 32-bit value (loads zero/sign-extended by mode).
  uint32_t read(Warp& w, const Insn& in, unsigned lane, const Operand* o) {
    if (!o) fail(FaultKind::Decode, "missing operand in " + where(w, in));
    switch (o->kind) {
      case OKind::Reg:
        if (o->size == RSize::H) return (reg(w, lane, o->reg) >> (o->high ? 16 : 0)) & 0xffff;
        return reg(w, lane, o->reg);
      case OKind::Imm: return uint32_t(o->imm);
      case OKind::AReg: return areg(w, lane, o->reg);
      case OKind::CReg: return th(w, lane).c[o->reg & 3];
      case OKind::Mem: {
        std::string mode = in.name_before(o);
        unsigned bytes = o->access;
        bool sign = false;
        if (o->space == 's' || (o->space == 'c' && (mode == "u8" || mode == "u16" || mode == "s16" || mode == "b32"))) {
          if (mode == "u8") bytes = 1;
          else if (mode == "u16") bytes = 2;
          else if (mode == "s16") bytes = 2, sign = true;
          else if (mode == "b32") bytes = 4;
        }
        uint64_t addr = address(w, lane, *o);
        uint8_t d[4] = {};
        access(w, in, lane, *o, addr, bytes, false, d);
        uint32_t v = uint32_t(d[0]) | uint32_t(d[1]) << 8 | uint32_t(d[2]) << 16 | uint32_t(d[3]) << 24;
        if (sign && bytes == 2) v = uint32_t(int32_t(int16_t(v)));
        return v;
      }
      default: break;
    }
    fail(FaultKind::Unsupported, "operand " + format_operand(*o) + " cannot be read: " + where(w, in));
  }
  uint64_t read64(Warp& w, const Insn& in, unsigned lane, const Operand* o) {
    if (o && o->kind == OKind::Reg && o->size == RSize::D)
      return uint64_t(reg(w, lane, o->reg)) | uint64_t(reg(w, lane, o->reg + 1)) << 32;
    return read(w, in, lane, o);
  }

  void write(Warp& w, const Insn& in, unsigned lane, const Operand* o, uint32_t v) {
    if (!o) return;
    switch (o->kind) {
      case OKind::Reg:
        if (o->size == RSize::H) {
          uint32_t old = reg(w, lane, o->reg);
          uint32_t sh = o->high ? 16 : 0;
          set_reg(w, lane, o->reg, (old & ~(0xffffu << sh)) | ((v & 0xffff) << sh));
        } else {
          set_reg(w, lane, o->reg, v);
        }
        return;
      case OKind::Discard: return;
      case OKind::Mem: {
        // o[] destination: 16-bit results are duplicated into a 32-bit word.
        uint64_t addr = address(w, lane, *o);
        uint32_t val = v;
        if (o->access == 2) {
          addr &= ~3ull;
          val = (v & 0xffff) * 0x10001u;
        }
        uint8_t d[4] = {uint8_t(val), uint8_t(val >> 8), uint8_t(val >> 16), uint8_t(val >> 24)};
        access(w, in, lane, *o, addr, 4, true, d);
        return;
      }
      default: break;
    }
    fail(FaultKind::Unsupported, "operand " + format_operand(*o) + " cannot be written: " + where(w, in));
  }
  void write64(Warp& w, const Insn& in, unsigned lane, const Operand* o, uint64_t v) {
    if (o && o->kind == OKind::Reg && o->size == RSize::D) {
      set_reg(w, lane, o->reg, uint32_t(v));
      set_reg(w, lane, o->reg + 1, uint32_t(v >> 32));
      return;
    }
    write(w, in, lane, o, uint32_t(v));
  }
  void set_flags(Warp& w, const Insn& in, unsigned lane, uint8_t fl) {
    if (const Operand* c = in.find(Role::CDst)) th(w, lane).c[c->reg & 3] = fl & 15;
  }

  // ---------------------------------------------------------------- control flow
  bool has_entry(Warp& w, Entry a, Entry b) {
    for (uint32_t i = 0; i < w.stack_size; ++i)
      if (Entry(w.stack[i].type) == a || Entry(w.stack[i].type) == b) return true;
    return false;
  }

  // The current path has no lanes left: resume the next waiting one.
  void unwind(Warp& w) {
    while (!(w.stack_size == 0)) {
      StackEntry e = w.stack[w.stack_size - 1];
      --w.stack_size;
      uint32_t m = e.mask & ~w.exited;
      if (Entry(e.type) == Entry::QuadOn || !m) continue;
      w.active = m;
      w.pc = e.pc;
      if (Entry(e.type) == Entry::JoinAt) w.join_skip = e.pc;  // these lanes already waited at the join
      return;
    }
    w.active = 0;
    w.done = true;
  }

  void push(Warp& w, Entry t, uint32_t mask, uint32_t pc, const Insn& in) {
    if (w.stack_size >= kMaxStackEntries) fail(FaultKind::Stack, "control-flow stack overflow: " + where(w, in));
    w.stack[w.stack_size++] = StackEntry{uint8_t(t), mask, pc};
  }

  uint32_t target(Warp& w, const Insn& in) {
    for (auto& a : in.atoms)
      if (a.type == Atom::Opnd && a.op.kind == OKind::Imm) {
        uint64_t t = uint64_t(a.op.imm) / 4;
        if (t >= P.code.size()) {
          char m[64];
          std::snprintf(m, sizeof m, "branch target 0x%llx outside the code: ", static_cast<unsigned long long>(a.op.imm));
          fail(FaultKind::OutOfBounds, m + where(w, in));
        }
        return uint32_t(t);
      }
    fail(FaultKind::Decode, "no target in " + where(w, in));
  }

  const Insn& fetch(Warp& w) {
    if (w.pc >= P.code.size()) {
      char m[96];
      std::snprintf(m, sizeof m, "execution ran past the end of the code at word 0x%x (warp %u)", w.pc, w.warp);
      fail(FaultKind::OutOfBounds, m);
    }
    const Insn& in = P.cache.at(w.pc);
    DecodeError e = check(in, w.pc);
    if (e != DecodeError::None) fail(FaultKind::Decode, std::string(decode_error_name(e)) + ": " + where(w, in));
    return in;
  }

  // Returns false when the warp stopped (barrier or done).
  bool step(Warp& w) {
    const Insn& in = fetch(w);
    uint64_t& steps = *w.block_steps;
    ++steps;
    if (steps > P.cfg.max_steps) fail(FaultKind::Watchdog, "watchdog: too many instructions, last " + where(w, in));
    // The join marker acts before its instruction: diverged paths that have
    // not arrived yet run first; the last one restores the joinat mask.
    if (in.join && w.join_skip != w.pc) {
      while (!(w.stack_size == 0)) {
        StackEntry e = w.stack[w.stack_size - 1];
        if (Entry(e.type) == Entry::Branch) {
          --w.stack_size;
          uint32_t m = e.mask & ~w.exited;
          if (!m) continue;
          w.active = m;
          w.pc = e.pc;
          return true;
        }
        if (Entry(e.type) == Entry::JoinAt) {
          --w.stack_size;
          w.active = e.mask & ~w.exited;
        }
        break;
      }
      if (!w.active) {
        unwind(w);
        return !w.done;
      }
    }
    w.join_skip = ~0u;
    w.lane_instructions += unsigned(__builtin_popcount(w.active));
    uint32_t predmask = 0;
    for (unsigned l = 0; l < 32; ++l)
      if ((w.active >> l & 1) && sem::pred(th(w, l).c[in.pred_c], unsigned(in.pred))) predmask |= 1u << l;
    uint32_t next = w.pc + in.words;

    if (in.is_control) return control(w, in, predmask, next);

    pending_pi.clear();
    // vote reads the predicate as its input instead of being predicated.
    uint32_t lanes = (in.op == Op::VoteAny || in.op == Op::VoteAll) ? w.active : w.active & predmask;
    if (lanes) alu(w, in, lanes);
    for (auto& p : pending_pi) set_areg(w, p.lane, p.areg, uint32_t(int64_t(areg(w, p.lane, p.areg)) + p.delta));
    w.pc = next;
    if (in.exit) {  // acts on every active lane whatever the predicate
      w.exited |= w.active;
      for (unsigned l = 0; l < 32; ++l)
        if (w.active >> l & 1) th(w, l).exited = true;
      w.active = 0;
      unwind(w);
      return !w.done;
    }
    return true;
  }

  bool control(Warp& w, const Insn& in, uint32_t predmask, uint32_t next) {
    uint32_t act = w.active;
    switch (in.op) {
      case Op::Bra: {
        uint32_t taken = act & predmask;
        // A branch no lane takes never reaches its target: a target outside
        // the code faults only when taken, as the translation traps only on
        // its taken path (found by fuzz_diff_tesla: a "(never) bra" to
        // 0x80908 faulted here and ran to the end on the JIT).
        if (!taken) {
          w.pc = next;
          return true;
        }
        uint32_t t = target(w, in);
        if (taken == act) w.pc = t;
        else {
          push(w, Entry::Branch, act & ~taken, next, in);  // the taken side runs first
          w.active = taken;
          w.pc = t;
        }
        return true;
      }
      case Op::Call: {
        uint32_t t = target(w, in);
        bool lim = in.has("lim");
        if (lim) {
          unsigned n = 0;
          for (uint32_t i = 0; i < w.stack_size; ++i) n += Entry(w.stack[i].type) == Entry::CallLim;
          if (n >= P.cfg.call_limit) {
            w.pc = next;
            return true;
          }
        }
        push(w, lim ? Entry::CallLim : Entry::Call, act, next, in);
        w.pc = t;
        return true;
      }
      case Op::PreRet: push(w, Entry::Call, act, target(w, in), in); w.pc = next; return true;
      case Op::PreBrk: push(w, Entry::PreBrk, act, target(w, in), in); w.pc = next; return true;
      case Op::JoinAt: push(w, Entry::JoinAt, act, target(w, in), in); w.pc = next; return true;
      case Op::Ret:
      case Op::Brk: {
        uint32_t leaving = act & predmask;
        w.pc = next;
        if (!leaving) return true;
        bool ret = in.op == Op::Ret;
        if (ret && !has_entry(w, Entry::Call, Entry::CallLim)) {
          // ret with nothing to return to ends these threads.
          w.exited |= leaving;
          for (unsigned l = 0; l < 32; ++l)
            if (leaving >> l & 1) th(w, l).exited = true;
        } else if (!ret && !has_entry(w, Entry::PreBrk, Entry::PreBrk)) {
          fail(FaultKind::Stack, "break without a breakaddr entry: " + where(w, in));
        }
        w.active = act & ~leaving;
        if (!w.active) unwind(w);
        return !w.done;
      }
      case Op::QuadOn: {
        push(w, Entry::QuadOn, act, next, in);
        uint32_t m = 0;
        for (unsigned q = 0; q < 32; q += 4)
          if ((act >> q) & 0xf) m |= 0xfu << q;
        w.active = m;
        w.pc = next;
        return true;
      }
      case Op::QuadPop:
        if ((w.stack_size == 0) || Entry(w.stack[w.stack_size - 1].type) != Entry::QuadOn)
          fail(FaultKind::Stack, "quadpop without quadon: " + where(w, in));
        w.active = w.stack[w.stack_size - 1].mask & ~w.exited;
        --w.stack_size;
        w.pc = next;
        if (!w.active) unwind(w);
        return !w.done;
      case Op::Bar: return barrier(w, in, next);
      case Op::Trap: fail(FaultKind::Trap, "trap " + where(w, in));
      case Op::Brkpt: w.pc = next; return true;  // breakpoints are disabled: no effect
      default:
        fail(FaultKind::Unsupported, std::string("unsupported control instruction ") + op_name(in.op) + " " + where(w, in));
    }
  }

  // `bar`: the warp stops with the barrier's descriptor; the scheduler
  // counts the arrival and decides whether it waits (runtime/barrier.h
  // run_counted_barriers: barriers 0..15, arrivals per generation, a stall
  // releases a barrier when its arrivals plus the finished warps reach its
  // count, else the block is deadlocked).
  bool barrier(Warp& w, const Insn& in, uint32_t next) {
    int id = 0;
    int64_t count = -1;  // the whole block
    bool inc = in.has("inc"), wait = in.has("wait");
    if (!inc && !wait) inc = wait = true;  // plain "bar": arrive and wait
    int nimm = 0;
    for (auto& a : in.atoms)
      if (a.type == Atom::Opnd && a.op.kind == OKind::Imm) {
        if (nimm == 0) id = int(a.op.imm);
        else count = int64_t((uint64_t(a.op.imm) + 31) / 32);  // thread count -> warps
        ++nimm;
      }
    // A count of at least the block's threads is the whole block (the
    // scheduler clamps it): CUDA 1.0's nvcc emits __syncthreads() as
    // `bar inc wait 0x0 0xfff` (4095 threads), and its sm_10 cubins run on
    // every sm_1x part (docs/tesla.md).
    w.pc = next;
    w.barrier_word = ir::barrier_word(unsigned(id & 15), inc, wait, count);
    return false;
  }

  // ---------------------------------------------------------------- ALU
  void alu(Warp& w, const Insn& in, uint32_t lanes);
};

// -------------------------------------------------------------------- ALU ops

void Runner::alu(Warp& w, const Insn& in, uint32_t lanes) {
  const Operand* dst = in.find(Role::Dst);
  const Operand* s1 = in.find(Role::Src1);
  const Operand* s2 = in.find(Role::Src2);
  const Operand* s3 = in.find(Role::Src3);
  const Operand* mem = in.find(Role::Mem);
  auto names = in.names();
  auto has = [&](const char* n) { return in.has(n); };
  bool b16 = has("b16") || has("u16") || has("s16");
  auto each = [&](auto fn) {
    for (unsigned l = 0; l < 32; ++l)
      if (lanes >> l & 1) fn(l);
  };
  auto unsupported = [&](const char* why) {
    fail(FaultKind::Unsupported, std::string(op_name(in.op)) + " " + why + ": " + where(w, in));
  };

  switch (in.op) {
    case Op::Mov: {
      // Lane mask (long form): only lanes whose quad position is enabled.
      unsigned lm = 0xf;
      if (in.is_long && !in.is_imm) lm = unsigned((in.bits >> 46) & 0xf);
      each([&](unsigned l) {
        // The source is read (and post-incremented) in every executing lane;
        // the lane mask only gates the write, as for slct's unselected source.
        uint32_t v = read(w, in, l, s1 ? s1 : s2);
        if (!(lm >> (l & 3) & 1)) return;
        write(w, in, l, dst, v);
      });
      return;
    }
    case Op::MovFromC: each([&](unsigned l) { write(w, in, l, dst, th(w, l).c[in.find(Role::Cond)->reg & 3]); }); return;
    case Op::MovFromA: each([&](unsigned l) { write(w, in, l, dst, areg(w, l, in.find(Role::ASrc)->reg)); }); return;
    case Op::MovFromSr:
      each([&](unsigned l) {
        uint32_t v = 0;
        switch (s1->reg) {
          case 0: v = l | (w.warp) << 8; break;  // physid: lane, warp (MP and TPC 0)
          case 1: v = uint32_t(*w.block_steps); break;          // clock: instructions executed by the block so far
          case 3: v = 0x20; break;                     // vstride
          default: v = 0; break;                       // pm counters, sampleid
        }
        write(w, in, l, dst, v);
      });
      return;
    case Op::MovToC: each([&](unsigned l) { th(w, l).c[in.find(Role::CDst)->reg & 3] = read(w, in, l, s1) & 15; }); return;
    case Op::ShlA:
      each([&](unsigned l) {
        uint32_t v = read(w, in, l, s1) << (s2->imm & 31);
        set_areg(w, l, in.find(Role::ADst)->reg, v);
      });
      return;
    case Op::AddA:
      each([&](unsigned l) {
        uint32_t v = areg(w, l, in.find(Role::ASrc)->reg) + uint32_t(s2->imm);
        set_areg(w, l, in.find(Role::ADst)->reg, v);
      });
      return;
    case Op::IAdd:
    case Op::IMad: {
      bool mad = in.op == Op::IMad;
      unsigned bits = (!mad && b16) ? 16 : 32;
      uint32_t m = bits == 16 ? 0xffffu : 0xffffffffu;
      int opk = 0;
      if (has("sub")) opk = 1;
      else if (has("subr")) opk = 2;
      else if (has("addc")) opk = 3;
      bool sat = has("sat");
      const Operand* a = s1;
      const Operand* b = s2 ? s2 : s3;
      const Operand* c = mad ? in.addend() : nullptr;
      if (mad && !in.is_long) b = s2;  // short mad: (mul s1 s2) + dst
      const Operand* cond = in.find(Role::Cond);
      each([&](unsigned l) {
        uint32_t x, y;
        if (mad) {
          uint32_t p1 = read(w, in, l, a), p2 = read(w, in, l, b);
          uint32_t mres;
          if (has("u24") || has("s24")) {
            bool sg = has("s24");
            int64_t v1 = sg ? int64_t(int32_t(p1 << 8) >> 8) : int64_t(p1 & 0xffffff);
            int64_t v2 = sg ? int64_t(int32_t(p2 << 8) >> 8) : int64_t(p2 & 0xffffff);
            uint64_t prod = uint64_t(v1 * v2) & 0xffffffffffffull;
            mres = has("high") ? uint32_t(prod >> 16) : uint32_t(prod);
          } else {
            bool sg = has("s16");
            int32_t v1 = sg ? int16_t(p1) : int32_t(p1 & 0xffff);
            int32_t v2 = sg ? int16_t(p2) : int32_t(p2 & 0xffff);
            mres = uint32_t(v1) * uint32_t(v2);
          }
          x = mres;
          y = read(w, in, l, c);
        } else {
          x = read(w, in, l, a) & m;
          y = read(w, in, l, b) & m;
        }
        uint64_t s1v = x, s2v = y, cin = 0;
        switch (opk) {
          case 1: s2v = ~y & m; cin = 1; break;
          case 2: s1v = ~x & m; cin = 1; break;
          case 3: cin = (th(w, l).c[cond ? cond->reg & 3 : 0] >> 2) & 1; break;
        }
        uint64_t r = s1v + s2v + cin;
        uint8_t C = uint8_t((r >> bits) & 1);
        uint32_t res = uint32_t(r) & m;
        uint32_t sb = bits - 1;
        uint8_t O = ((s1v >> sb & 1) == (s2v >> sb & 1)) && ((s1v >> sb & 1) != (res >> sb & 1));
        if (sat && O) res = (res >> sb & 1) ? (m >> 1) : (1u << sb);
        uint8_t fl = sem::flags_int(res, bits) | uint8_t(C << 2) | uint8_t(O << 3);
        write(w, in, l, dst, res);
        set_flags(w, in, l, fl);
      });
      return;
    }
    case Op::Mul16:
    case Op::Mul24: {
      // Signedness names in print order: source 1's, then source 2's (mul16);
      // one for both (mul24).
      std::vector<std::string> sg;
      for (auto& n : names)
        if (n == "u16" || n == "s16" || n == "u24" || n == "s24") sg.push_back(n);
      each([&](unsigned l) {
        uint32_t p1 = read(w, in, l, s1), p2 = read(w, in, l, s2);
        uint32_t res;
        if (in.op == Op::Mul16) {
          // A s[] source has its own mode name before it; the type names are
          // the ones the instruction's choice fields print.
          bool g1 = !sg.empty() && sg[0] == "s16";
          bool g2 = sg.size() > 1 && sg.back() == "s16";
          if (s1 && s1->kind == OKind::Mem && sg.size() >= 3) g2 = sg[2] == "s16";
          int32_t v1 = g1 ? int16_t(p1) : int32_t(p1 & 0xffff);
          int32_t v2 = g2 ? int16_t(p2) : int32_t(p2 & 0xffff);
          res = uint32_t(v1) * uint32_t(v2);
        } else {
          bool g = !sg.empty() && sg[0] == "s24";
          int64_t v1 = g ? int64_t(int32_t(p1 << 8) >> 8) : int64_t(p1 & 0xffffff);
          int64_t v2 = g ? int64_t(int32_t(p2 << 8) >> 8) : int64_t(p2 & 0xffffff);
          uint64_t prod = uint64_t(v1 * v2) & 0xffffffffffffull;
          res = has("high") ? uint32_t(prod >> 16) : uint32_t(prod);
        }
        write(w, in, l, dst, res);
        set_flags(w, in, l, sem::flags_int(res, 32));
      });
      return;
    }
    case Op::Sad: {
      // The operands are 16 or 32 bits; source 3 (or the destination), the
      // result and its flags always 32 bits (nvhw/hwtest g80_int: the 16-bit
      // difference is zero-extended and added by the 32-bit adder).
      bool sg = has("s16") || has("s32");
      unsigned bits = (has("u16") || has("s16")) ? 16 : 32;
      uint32_t m = bits == 16 ? 0xffffu : 0xffffffffu;
      const Operand* c = in.addend();
      each([&](unsigned l) {
        uint32_t x = read(w, in, l, s1) & m, y = read(w, in, l, s2) & m, z = read(w, in, l, c);
        int64_t a = sg ? (bits == 16 ? int16_t(x) : int32_t(x)) : int64_t(x);
        int64_t b = sg ? (bits == 16 ? int16_t(y) : int32_t(y)) : int64_t(y);
        uint32_t mres = uint32_t(a > b ? a - b : b - a) & m;
        uint64_t r = uint64_t(mres) + z;
        uint8_t C = uint8_t((r >> 32) & 1);
        uint32_t res = uint32_t(r);
        uint8_t O = ((mres >> 31 & 1) == (z >> 31 & 1)) && ((mres >> 31 & 1) != (res >> 31 & 1));
        write(w, in, l, dst, res);
        set_flags(w, in, l, sem::flags_int(res, 32) | uint8_t(C << 2) | uint8_t(O << 3));
      });
      return;
    }
    case Op::IMin:
    case Op::IMax:
    case Op::ISet: {
      bool sg = has("s16") || has("s32");
      unsigned bits = b16 ? 16 : 32;
      uint32_t m = bits == 16 ? 0xffffu : 0xffffffffu;
      unsigned cond = 0;
      static const char* cn[8] = {"never", "l", "e", "le", "g", "lg", "ge", "always"};
      for (unsigned i = 0; i < 8; ++i)
        if (has(cn[i])) cond = i;
      each([&](unsigned l) {
        uint32_t x = read(w, in, l, s1) & m, y = read(w, in, l, s2) & m;
        int64_t a = sg ? (bits == 16 ? int16_t(x) : int32_t(x)) : int64_t(x);
        int64_t b = sg ? (bits == 16 ? int16_t(y) : int32_t(y)) : int64_t(y);
        uint32_t res;
        if (in.op == Op::ISet) {
          unsigned bit = a < b ? 1 : a == b ? 2 : 4;
          res = (cond & bit) ? m : 0;
        } else if (in.op == Op::IMin) {
          res = a < b ? x : y;
        } else {
          res = a < b ? y : x;
        }
        write(w, in, l, dst, res);
        set_flags(w, in, l, sem::flags_int(res, bits));
      });
      return;
    }
    case Op::LogOp: {
      unsigned bits = b16 ? 16 : 32;
      uint32_t m = bits == 16 ? 0xffffu : 0xffffffffu;
      int k = has("and") ? 0 : has("or") ? 1 : has("xor") ? 2 : 3;
      // "not" flags in print order: before source 1, before source 2.
      bool n1 = false, n2 = false;
      {
        bool seen_src1 = false;
        for (auto& a : in.atoms) {
          if (a.type == Atom::Opnd && &a.op == s1) seen_src1 = true;
          if (a.type == Atom::Name && a.name == "not") (seen_src1 ? n2 : n1) = true;
        }
      }
      each([&](unsigned l) {
        uint32_t x = read(w, in, l, s1), y = read(w, in, l, s2);
        if (n1) x = ~x;
        if (n2) y = ~y;
        uint32_t r = k == 0 ? (x & y) : k == 1 ? (x | y) : k == 2 ? (x ^ y) : y;
        r &= m;
        write(w, in, l, dst, r);
        set_flags(w, in, l, sem::flags_int(r, bits));
      });
      return;
    }
    case Op::Shl:
    case Op::Shr: {
      unsigned bits = b16 ? 16 : 32;
      uint32_t m = bits == 16 ? 0xffffu : 0xffffffffu;
      bool sg = has("s16") || has("s32");
      each([&](unsigned l) {
        uint32_t x = read(w, in, l, s1) & m;
        uint32_t n = read(w, in, l, s2);  // shift counts are not masked
        if (s2 && s2->kind == OKind::Reg && s2->size == RSize::H) n &= 0xffff;
        uint32_t res;
        uint8_t C = 0;
        if (in.op == Op::Shl) {
          res = n >= bits ? 0 : (x << n) & m;
          if (n > 0 && n < bits) C = (x >> (bits - n)) & 1;
        } else {
          bool neg = sg && (x >> (bits - 1) & 1);
          if (n >= bits) res = neg ? m : 0;
          else {
            res = x >> n;
            if (neg && n) res |= (m << (bits - n)) & m;
          }
          if (n > 0 && n < bits) C = (x >> (n - 1)) & 1;
        }
        uint8_t O = n == 1 && ((x >> (bits - 1)) & 1) != ((res >> (bits - 1)) & 1);
        write(w, in, l, dst, res);
        set_flags(w, in, l, sem::flags_int(res, bits) | uint8_t(C << 2) | uint8_t(O << 3));
      });
      return;
    }
    case Op::FAdd:
    case Op::FMul:
    case Op::FMad: {
      // neg flags in print order: the first applies to source 1 (or the
      // product), the second to the other source.
      bool n1 = false, n2 = false;
      {
        bool seen = false;
        for (auto& a : in.atoms) {
          if (a.type == Atom::Opnd && (a.op.role == Role::Src1)) seen = true;
          if (a.type == Atom::Name && a.name == "neg") (seen ? n2 : n1) = true;
        }
      }
      bool rz = has("rz"), sat = has("sat");
      const Operand* b = in.op == Op::FAdd ? (s2 ? s2 : s3) : s2;
      const Operand* c = in.op == Op::FMad ? in.addend() : nullptr;
      each([&](unsigned l) {
        uint32_t x = read(w, in, l, s1), y = read(w, in, l, b);
        uint32_t r;
        if (in.op == Op::FMad) {
          uint32_t z = read(w, in, l, c);
          if (n1) x ^= 0x80000000u;  // negates the product
          if (n2) z ^= 0x80000000u;
          r = sem::fmad(x, y, z);
        } else {
          if (n1) x ^= 0x80000000u;
          if (n2) y ^= 0x80000000u;
          r = in.op == Op::FAdd ? sem::fadd(x, y, rz) : sem::fmul(x, y, rz);
        }
        if (sat) r = sem::fsat(r);
        write(w, in, l, dst, r);
        set_flags(w, in, l, sem::flags_float(r));
      });
      return;
    }
    case Op::FSet:
    case Op::FMin:
    case Op::FMax:
    case Op::DSet:
    case Op::DMin:
    case Op::DMax: {
      bool dbl = in.op == Op::DSet || in.op == Op::DMin || in.op == Op::DMax;
      // neg/abs modifiers before source 1 and source 2.
      bool neg[2] = {}, ab[2] = {};
      {
        int side = 0;
        for (auto& a : in.atoms) {
          if (a.type == Atom::Opnd && a.op.role == Role::Src1) side = 1;
          if (a.type == Atom::Name && a.name == "neg") neg[side] = true;
          if (a.type == Atom::Name && a.name == "abs") ab[side] = true;
        }
      }
      static const char* cn[16] = {"never", "l", "e", "le", "g", "lg", "ge", "lge",
                                   "u", "lu", "eu", "leu", "gu", "lgu", "geu", "always"};
      unsigned cond = 0;
      for (unsigned i = 0; i < 16; ++i)
        if (has(cn[i])) cond = i;
      each([&](unsigned l) {
        double a, b;
        uint64_t ua = 0, ub = 0, raw_b = 0;
        if (dbl) {
          ua = read64(w, in, l, s1);
          ub = raw_b = read64(w, in, l, s2);
          if (ab[0]) ua &= ~(1ull << 63);
          if (neg[0]) ua ^= 1ull << 63;
          if (ab[1]) ub &= ~(1ull << 63);
          if (neg[1]) ub ^= 1ull << 63;
          a = asd(ua);
          b = asd(ub);
        } else {
          uint32_t x = ftz32(read(w, in, l, s1)), y = ftz32(read(w, in, l, s2));
          if (ab[0]) x &= 0x7fffffffu;
          if (neg[0]) x ^= 0x80000000u;
          if (ab[1]) y &= 0x7fffffffu;
          if (neg[1]) y ^= 0x80000000u;
          ua = x;
          ub = y;
          a = asf(x);
          b = asf(y);
        }
        if (in.op == Op::FSet || in.op == Op::DSet) {
          unsigned bit = (std::isnan(a) || std::isnan(b)) ? 8 : a < b ? 1 : a == b ? 2 : 4;
          uint32_t r = (cond & bit) ? 0xffffffffu : 0;
          write(w, in, l, dst, r);
          set_flags(w, in, l, sem::flags_int(r, 32));
          return;
        }
        bool mn = in.op == Op::FMin || in.op == Op::DMin;
        uint64_t r;
        // f64 with two NaNs: source 2 as read, quieted (nvhw fp64_minmax;
        // neg/abs do not apply to a NaN).
        if (std::isnan(a) && std::isnan(b)) r = dbl ? (raw_b | (1ull << 51)) : 0x7fffffffu;
        else if (std::isnan(a)) r = ub;
        else if (std::isnan(b)) r = ua;
        else if (a == b) r = mn ? ((ua >> (dbl ? 63 : 31)) ? ua : ub) : ((ua >> (dbl ? 63 : 31)) ? ub : ua);
        else r = ((a < b) == mn) ? ua : ub;
        if (dbl) {
          write64(w, in, l, dst, r);
          set_flags(w, in, l, sem::flags_double(r));
        } else {
          write(w, in, l, dst, uint32_t(r));
          set_flags(w, in, l, sem::flags_float(uint32_t(r)));
        }
      });
      return;
    }
    case Op::FSlct: {
      bool n = has("neg");
      each([&](unsigned l) {
        uint32_t z = read(w, in, l, s3);
        if (n) z ^= 0x80000000u;
        float fz = asf(ftz32(z));
        // Both sources are read (and post-incremented) whichever one is selected.
        uint32_t x = read(w, in, l, s1), y = read(w, in, l, s2);
        uint32_t r = (!std::isnan(fz) && fz >= 0.0f) ? x : y;
        write(w, in, l, dst, r);
        // The integer flags, except that -0 counts as zero (hwtest g80_fp).
        set_flags(w, in, l, sem::flags_int(r == 0x80000000u ? 0u : r, 32));
      });
      return;
    }
    case Op::QuadOp: {
      static const char* ops[4] = {"add", "subr", "sub", "mov2"};
      int qop[4] = {};
      {
        int k = 0;
        for (auto& n : names)
          for (int i = 0; i < 4; ++i)
            if (n == ops[i] && k < 4) qop[k++] = i;
      }
      int sel = has("l1") ? 1 : has("l2") ? 2 : has("l3") ? 3 : has("dx") ? 4 : has("dy") ? 5 : 0;
      // Read every source before writing (the destination may be a source).
      uint32_t src1[32], src2[32];
      for (unsigned l = 0; l < 32; ++l) {
        src1[l] = reg(w, l, s1->reg);
        src2[l] = reg(w, l, s3->reg);
      }
      // dx/dy in a compute program give +0 (hwtest g80_fp, configuration
      // bit clear); other program types read the quad neighbour.
      const bool zero = sel >= 4 && P.target.ptype == kCP;
      each([&](unsigned l) {
        unsigned q = l & 3, from;
        if (sel < 4) from = (l & ~3u) | unsigned(sel);
        else from = l ^ (sel == 4 ? 1u : 2u);
        uint32_t a = src1[from], b = src2[l], r;
        switch (qop[q]) {
          case 0: r = sem::fadd(a, b, false); break;
          case 1: r = sem::fadd(b, a ^ 0x80000000u, false); break;
          case 2: r = sem::fadd(a, b ^ 0x80000000u, false); break;
          default: r = sem::fadd(b, 0, false); break;  // mov2 is source 3 + +0: -0 gives +0, NaN 0x7fffffff
        }
        if (zero) r = 0;
        write(w, in, l, dst, r);
        set_flags(w, in, l, sem::flags_float(r));
      });
      return;
    }
    case Op::Rcp:
    case Op::Rsqrt:
    case Op::Lg2:
    case Op::Sin:
    case Op::Cos:
    case Op::Ex2:
    case Op::PreSin:
    case Op::PreEx2: {
      bool n = has("neg"), ab = has("abs"), sat = has("sat");
      each([&](unsigned l) {
        uint32_t x = read(w, in, l, s1);
        if (ab) x &= 0x7fffffffu;
        if (n) x ^= 0x80000000u;
        uint32_t r = in.op == Op::PreSin ? sem::presin(x) : in.op == Op::PreEx2 ? sem::preex2(x) : sem::sfu(in.op, x);
        if (sat) r = sem::fsat(r);
        write(w, in, l, dst, r);
      });
      return;
    }
    case Op::Cvt: {
      // Two units (docs/tesla.md "cvt"): conversions with a 64-bit type run
      // on G200's f64 unit, the others on the G80 converter; each follows
      // envytools' model of it (nvhw fp.c, hwtest g80_fp / g80_fp64).
      std::vector<std::string> types;
      for (auto& n : names)
        if (type_bits(n) && types.size() < 2) types.push_back(n);
      if (types.size() < 2) unsupported("without two types");
      const std::string& dt = types[0];
      const std::string& st = types[1];
      const int rm = cvt_round(in);
      const bool rint = round_int(in), n = has("neg"), ab = has("abs"), sat = has("sat");
      const bool sfloat = st[0] == 'f', dfloat = dt[0] == 'f';
      const int sb = type_bits(st), db = type_bits(dt);
      const bool f64unit = sb == 64 || db == 64;
      // Integer results set S from the destination register's top bit
      // (u8/s8 go to a 16- or 32-bit register: word 1 bit 26).
      const unsigned dst_bits = db >= 16 ? unsigned(db) : ((in.bits >> 58) & 1) ? 32u : 16u;
      auto flags16 = [](uint16_t h) -> uint8_t {
        if ((h & 0x7fffu) > 0x7c00u) return 3;
        if ((h & 0x7fffu) == 0) return 1;
        return (h >> 15) ? 2 : 0;
      };
      each([&](unsigned l) {
        uint64_t raw = sb == 64 ? read64(w, in, l, s1) : read(w, in, l, s1);
        uint64_t out = 0;
        uint8_t fl = 0;
        if (!sfloat) {
          // Integer source: sign and magnitude; abs clears the sign, neg flips it.
          uint64_t mag;
          bool neg = false;
          if (sb == 64) {
            neg = st[0] == 's' && int64_t(raw) < 0;
            mag = neg ? 0 - raw : raw;
          } else {
            int64_t v = st[0] == 's' ? int64_t(raw << (64 - sb)) >> (64 - sb) : int64_t(raw & ((1ull << sb) - 1));
            neg = v < 0;
            mag = neg ? uint64_t(-v) : uint64_t(v);
          }
          const bool source_negative = neg;
          if (ab) neg = false;
          if (n) neg = !neg;
          if (!dfloat) {
            uint64_t e = mag;
            if (dt[0] == 's') {
              uint64_t limit = 1ull << (db - 1);
              if (neg) e = 0 - std::min(e, limit);
              else if (e >= limit) e = limit - 1;
            } else if (neg) {
              e = 0;
            } else if (e > (1ull << db) - 1) {
              e = (1ull << db) - 1;
            }
            out = e;
            fl = sem::flags_int(uint32_t(out), dst_bits);
          } else if (f64unit) {
            // The f64 unit mirrors directed rounding only for signed
            // sources, and ignores sat; a zero with neg is -0.
            int r = st[0] == 's' ? mirror_round(rm, neg) : rm;
            if (db == 64) {
              out = sem::u64_to_f64(mag, r) | (neg ? 1ull << 63 : 0);
              fl = sem::flags_double(out);
            } else {
              out = sem::u64_to_f32(mag, r) | (neg ? 0x80000000u : 0);
              fl = sem::flags_float_noftz(uint32_t(out));
            }
          } else {
            int r = mirror_round(rm, neg);
            uint32_t m = uint32_t(mag);
            if (db == 16) {
              // The G80 converter's integer -> f16 path loses the top bits of
              // the magnitude (hwtest g80_fp's model of the hardware bug).
              if ((r == 0 || r == 2) && ((m >> 5) & 0x1ffffffu) == 0x1ffffffu) m = 0;
              uint16_t lo = uint16_t(m - (source_negative ? 1u : 0u));
              int k = 2;
              while (lo < 0x8000 && k < 7) {
                lo = uint16_t(lo << 1);
                ++k;
              }
              m = uint32_t(uint64_t(m) << k) >> k;
            }
            uint32_t v = sem::u64_to_f32(m, r) | (neg ? 0x80000000u : 0);
            if (sat) v = sem::fsat(v);
            if (db == 16) {
              uint16_t h = sem::f32_to_f16(v, rm, false);
              out = h;
              fl = flags16(h);
            } else {
              out = v;
              fl = sem::flags_float(v);
            }
          }
        } else if (!dfloat) {
          // Float -> integer: round the magnitude (directed modes mirrored
          // for a negative value), then clamp.
          if (f64unit) {
            const unsigned sbit = sb == 64 ? 63 : 31;
            uint64_t x = raw;
            if (ab) x &= ~(1ull << sbit);
            if (n) x ^= 1ull << sbit;
            bool neg = (x >> sbit) & 1;
            x &= ~(1ull << sbit);
            bool nan = sb == 64 ? x > 0x7ff0000000000000ull : x > 0x7f800000u;
            bool ovf = false;
            uint64_t e;
            if (nan) {
              e = 1ull << (db - 1);  // NaN: the sign bit alone, with O
              ovf = true;
            } else {
              e = sem::float_to_u64(x, sb == 64, mirror_round(rm, neg), false);
              if (e == 0xffffffffull) ovf = true;  // as the model has it
              if (dt[0] == 's') {
                uint64_t limit = 1ull << (db - 1);
                if (neg) {
                  if (e > limit) {
                    e = limit;
                    ovf = true;
                  }
                  e = 0 - e;
                } else if (e >= limit) {
                  e = limit - 1;
                  ovf = true;
                }
              } else {
                if (neg && e) {
                  e = 0;
                  ovf = true;
                }
                if (db == 32 && e >= (1ull << 32)) {
                  e = 0xffffffffull;
                  ovf = true;
                }
              }
            }
            if (db == 32) e &= 0xffffffffull;
            out = e;
            fl = uint8_t((e == 0 ? 1 : ((e >> (db - 1)) & 1) ? 2 : 0) | (ovf ? 8 : 0));
          } else {
            uint32_t x = sb == 16 ? sem::f16_to_f32(uint16_t(raw)) : uint32_t(raw);
            if (ab) x &= 0x7fffffffu;
            if (n) x ^= 0x80000000u;
            bool neg = x >> 31;
            x &= 0x7fffffffu;
            uint64_t t = x > 0x7f800000u ? 0 : sem::float_to_u64(x, false, mirror_round(rm, neg), true);
            if (t >> 32) t = 0xffffffffull;
            uint64_t e = t;
            if (dt[0] == 's') {
              uint64_t limit = 1ull << (db - 1);
              if (neg) e = 0 - std::min(e, limit);
              else if (e >= limit) e = limit - 1;
            } else if (neg) {
              e = 0;
            } else if (db == 16 && e >= 0x10000) {
              e = 0xffff;
            }
            out = e & ((1ull << db) - 1);
            fl = sem::flags_int(uint32_t(out), unsigned(db));
          }
        } else if (f64unit) {
          // Float -> float on the f64 unit: denormals kept, a NaN keeps its
          // sign and payload (quieted), neg/abs do not apply to it.
          uint64_t e;
          if (sb == 64) {
            e = raw;
          } else {
            uint32_t x = uint32_t(raw);
            if ((x & 0x7fffffffu) > 0x7f800000u)
              e = uint64_t(x >> 31) << 63 | 0x7ff0000000000000ull | uint64_t((x & 0x7fffffu) | 0x400000u) << 29;
            else
              e = asu64(double(asf(x)));
          }
          bool nan = (e & 0x7fffffffffffffffull) > 0x7ff0000000000000ull;
          if (nan) {
            e |= 1ull << 51;
          } else {
            if (ab) e &= ~(1ull << 63);
            if (n) e ^= 1ull << 63;
            if (rint && db == 64 && sb == 64) e = asu64(rint_mode(asd(e), fe_mode(rm)));
          }
          if (db == 64) {
            out = e;
            fl = sem::flags_double(e);
          } else {
            uint32_t f;
            if (nan) f = uint32_t(e >> 63) << 31 | 0x7f800000u | uint32_t((e & 0xfffffffffffffull) >> 29) | 0x400000u;
            else f = asu(double_to_float_mode(asd(e), fe_mode(rm)));
            out = f;
            fl = sem::flags_float_noftz(f);
          }
        } else {
          // G80 converter: the value (f16 widened) goes through an add of
          // -0 (flushing, NaN -> 0x7fffffff), then sat, then rni..rzi.
          uint32_t x = sb == 16 ? sem::f16_to_f32(uint16_t(raw)) : uint32_t(raw);
          if (ab) x &= 0x7fffffffu;
          if (n) x ^= 0x80000000u;
          uint32_t e = sem::fadd(x, 0x80000000u, false);
          if (sat) e = sem::fsat(e);
          if (rint && (e & 0x7fffffffu) < 0x7f800000u) e = asu(float(rint_mode(double(asf(e)), fe_mode(rm))));
          if (db == 16) {
            uint16_t h = sem::f32_to_f16(e, rm, rint);
            out = h;
            fl = flags16(h);
          } else {
            out = e;
            fl = sem::flags_float(e);
          }
        }
        if (db == 64) write64(w, in, l, dst, out);
        else write(w, in, l, dst, uint32_t(out));
        set_flags(w, in, l, fl);
      });
      return;
    }
    case Op::DAdd:
    case Op::DMul:
    case Op::DFma: {
      bool n1 = false, n2 = false;
      {
        bool seen = false;
        for (auto& a : in.atoms) {
          if (a.type == Atom::Opnd && a.op.role == Role::Src1) seen = true;
          if (a.type == Atom::Name && a.name == "neg") (seen ? n2 : n1) = true;
        }
      }
      int mode = round_mode(in);
      // NaN operands (nvhw fp64_add/fma/mul): the result is a NaN operand,
      // quieted, with its own sign (neg does not apply to it), checked in
      // the order source 2, source 3, source 1; a NaN made from numbers
      // (inf - inf, 0 * inf) is 0xfff8000000000000.
      each([&](unsigned l) {
        uint64_t ra = read64(w, in, l, s1);
        uint64_t rb = in.op == Op::DAdd ? 0 : read64(w, in, l, s2);
        uint64_t rc = in.op == Op::DMul ? 0 : read64(w, in, l, s3);
        double a = asd(ra);
        if (n1) a = -a;
        double r;
        if (in.op == Op::DAdd) {
          double b = asd(rc);
          if (n2) b = -b;
          r = in_mode(mode, [&] { volatile double x = a, y = b; return x + y; });
        } else if (in.op == Op::DMul) {
          double b = asd(rb);
          r = in_mode(mode, [&] { volatile double x = a, y = b; return x * y; });
        } else {
          double b = asd(rb), c = asd(rc);
          if (n2) c = -c;
          r = in_mode(mode, [&] { volatile double x = a, y = b, z = c; return std::fma(x, y, z); });
        }
        uint64_t out = asu64(r);
        auto nan64 = [](uint64_t v) { return (v & 0x7fffffffffffffffull) > 0x7ff0000000000000ull; };
        const uint64_t quiet = 1ull << 51;
        if (in.op != Op::DAdd && nan64(rb)) out = rb | quiet;
        else if (in.op != Op::DMul && nan64(rc)) out = rc | quiet;
        else if (nan64(ra)) out = ra | quiet;
        else if (std::isnan(r)) out = 0xfff8000000000000ull;
        write64(w, in, l, dst, out);
        set_flags(w, in, l, sem::flags_double(out));
      });
      return;
    }
    case Op::LdC:
    case Op::LdS:
    case Op::LdA:
      each([&](unsigned l) { write(w, in, l, dst, read(w, in, l, mem)); });
      return;
    case Op::StS:
    case Op::StO: {
      unsigned bytes = has("b8") ? 1 : has("b16") ? 2 : 4;
      const Operand* data = s3;
      each([&](unsigned l) {
        uint32_t v = read(w, in, l, data);
        uint64_t addr = address(w, l, *mem);
        uint8_t d[4] = {uint8_t(v), uint8_t(v >> 8), uint8_t(v >> 16), uint8_t(v >> 24)};
        access(w, in, l, *mem, addr, bytes, true, d);
      });
      return;
    }
    case Op::LdL:
    case Op::StL:
    case Op::LdG:
    case Op::StG: {
      static const char* sz[7] = {"u8", "s8", "u16", "s16", "b32", "b64", "b128"};
      static const unsigned bytes_of[7] = {1, 1, 2, 2, 4, 8, 16};
      int k = -1;
      for (int i = 0; i < 7 && k < 0; ++i)
        if (names.size() > 1 && names[1] == sz[i]) k = i;  // "ld SIZE ..." / "st SIZE ..."
      if (k < 0) unsupported("with an unknown size");
      unsigned bytes = bytes_of[k];
      bool store = in.op == Op::StL || in.op == Op::StG;
      each([&](unsigned l) {
        uint64_t addr = address(w, l, *mem);
        uint8_t d[16] = {};
        if (store) {
          for (unsigned i = 0; i < (bytes + 3) / 4; ++i) {
            uint32_t v = reg(w, l, dst->reg + int(i));
            std::memcpy(d + 4 * i, &v, std::min(4u, bytes));
          }
          access(w, in, l, *mem, addr, bytes, true, d);
        } else {
          access(w, in, l, *mem, addr, bytes, false, d);
          if (bytes <= 4) {
            uint32_t v = 0;
            std::memcpy(&v, d, bytes);
            if (k == 1) v = uint32_t(int32_t(int8_t(v)));
            if (k == 3) v = uint32_t(int32_t(int16_t(v)));
            set_reg(w, l, dst->reg, v);
          } else {
            for (unsigned i = 0; i < bytes / 4; ++i) {
              uint32_t v;
              std::memcpy(&v, d + 4 * i, 4);
              set_reg(w, l, dst->reg + int(i), v);
            }
          }
        }
      });
      return;
    }
    case Op::RedG:
    case Op::AtomG: {
      bool is64 = has("u64") || has("b64");
      bool sg = has("s32");
      std::string opn;
      for (auto& n : names)
        if (n == "add" || n == "inc" || n == "dec" || n == "max" || n == "min" || n == "and" || n == "or" ||
            n == "xor" || n == "exch" || n == "cas")
          opn = n;
      // red: data in the "destination" field; atom: old value to it, data from source 2/3.
      const Operand* val = in.op == Op::RedG ? dst : s2;
      const Operand* cmp = opn == "cas" ? s2 : nullptr;
      if (opn == "cas") val = s3;
      each([&](unsigned l) {  // lanes in order: the sequential order of the hardware is unspecified
        uint64_t addr = address(w, l, *mem);
        unsigned bytes = is64 ? 8 : 4;
        uint8_t d[8] = {};
        access(w, in, l, *mem, addr, bytes, false, d);
        uint64_t old = 0;
        std::memcpy(&old, d, bytes);
        uint64_t v = read64(w, in, l, val), nv = old;
        if (!is64) v &= 0xffffffffu;
        if (opn == "add") nv = old + v;
        else if (opn == "inc") nv = uint32_t(old) >= uint32_t(v) ? 0 : old + 1;
        else if (opn == "dec") nv = (uint32_t(old) == 0 || uint32_t(old) > uint32_t(v)) ? v : old - 1;
        else if (opn == "max") nv = sg ? (int32_t(old) > int32_t(v) ? old : v) : (uint32_t(old) > uint32_t(v) ? old : v);
        else if (opn == "min") nv = sg ? (int32_t(old) < int32_t(v) ? old : v) : (uint32_t(old) < uint32_t(v) ? old : v);
        else if (opn == "and") nv = old & v;
        else if (opn == "or") nv = old | v;
        else if (opn == "xor") nv = old ^ v;
        else if (opn == "exch") nv = v;
        else if (opn == "cas") {
          uint64_t c = read64(w, in, l, cmp);
          if (!is64) c &= 0xffffffffu;
          nv = old == c ? v : old;
        }
        std::memcpy(d, &nv, bytes);
        access(w, in, l, *mem, addr, bytes, true, d);
        if (in.op == Op::AtomG) write64(w, in, l, dst, old);
      });
      return;
    }
    case Op::VoteAny:
    case Op::VoteAll: {
      // The predicate is the input (evaluated over the active lanes, not a
      // condition for executing): "true" is written as $c = 0 (not zero), "false" as Z.
      uint32_t act = w.active, p = 0;
      for (unsigned l = 0; l < 32; ++l)
        if ((act >> l & 1) && sem::pred(th(w, l).c[in.pred_c], unsigned(in.pred))) p |= 1u << l;
      bool r = in.op == Op::VoteAny ? p != 0 : p == act;
      for (unsigned l = 0; l < 32; ++l)
        if (act >> l & 1) set_flags(w, in, l, r ? 0 : 1);
      return;
    }
    case Op::Nop:
    case Op::PmEvent: return;
    case Op::LdSLock: unsupported("(s[] locking) is not supported"); return;
    case Op::Tex: unsupported("(texturing) is not supported"); return;
    case Op::Interp: unsupported("(interpolation) is not supported"); return;
    case Op::Emit:
    case Op::Restart: unsupported("(geometry output) is not supported"); return;
    default: unsupported("is not supported"); return;
  }
}

// -------------------------------------------------------------------- driver

void init_warp(WarpState& w, unsigned warp, uint32_t launched, uint32_t entry) {
  w.warp = warp;
  w.launched = w.active = launched;
  w.exited = 0;
  w.pc = entry;
  w.join_skip = ~0u;
  w.lane_instructions = 0;
  w.done = false;
  w.barrier_word = 0;
  w.fault = FaultKind::None;
  w.message[0] = 0;
  w.stack_size = 0;
}

DecodeCache::DecodeCache(const std::vector<uint32_t>& code, const Target& target)
    : code_(code), target_(target), slots_(new std::atomic<const Insn*>[code.size() ? code.size() : 1]) {
  for (size_t i = 0; i < code.size(); ++i) slots_[i].store(nullptr, std::memory_order_relaxed);
}

DecodeCache::~DecodeCache() {
  for (size_t i = 0; i < code_.size(); ++i) delete slots_[i].load(std::memory_order_relaxed);
}

const Insn& DecodeCache::at(uint32_t pc) const {
  std::atomic<const Insn*>& slot = slots_[pc];
  if (const Insn* in = slot.load(std::memory_order_acquire)) return *in;
  // Two threads may decode the same word at once: the first to publish wins.
  auto fresh = std::make_unique<const Insn>(decode(code_.data(), code_.size(), pc, target_));
  const Insn* expected = nullptr;
  if (slot.compare_exchange_strong(expected, fresh.get(), std::memory_order_acq_rel)) return *fresh.release();
  return *expected;
}

WarpStop run_warp(const WarpProgram& p, WarpState& w) {
  if (w.done) return WarpStop::Done;
  Runner r(p);
  try {
    while (r.step(w)) {
    }
  } catch (const Fault& f) {
    w.fault = f.kind;
    std::snprintf(w.message, sizeof w.message, "%s", f.msg.c_str());
    return WarpStop::Fault;
  }
  return w.done ? WarpStop::Done : WarpStop::Barrier;
}

}  // namespace gpurc::tesla
