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

// IEEE half <-> float (round to nearest even on the way down).
float half_to_float(uint16_t h) {
  uint32_t s = (h >> 15) & 1, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  float v;
  if (e == 0) v = std::ldexp(float(m), -24);
  else if (e == 31) v = m ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  else v = std::ldexp(float(m | 0x400), int(e) - 25);
  return s ? -v : v;
}
uint16_t float_to_half(float x) {
  uint32_t u = asu(x);
  uint16_t s = uint16_t((u >> 16) & 0x8000);
  if (std::isnan(x)) return 0x7fff;
  float a = std::fabs(x);
  if (a >= 65520.0f) return s | 0x7c00;
  if (a < std::ldexp(1.0f, -25)) return s;
  int e;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  int exp = e - 1;    // a = 1.x * 2^exp
  if (exp < -14) {
    float m = std::nearbyint(std::ldexp(a, 24));  // denormal units of 2^-24
    return s | uint16_t(m);
  }
  float m = std::nearbyint(std::ldexp(a, 10 - exp));  // 1024..2048
  uint32_t mant = uint32_t(m);
  if (mant >= 2048) {
    mant >>= 1;
    ++exp;
  }
  if (exp > 15) return s | 0x7c00;
  return s | uint16_t(((exp + 15) << 10) | (mant & 0x3ff));
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
  };
  // The bytes of `space` lane `lane` addresses; false for a space the
  // interpreter does not have.
  bool space_span(char space, int idx, Warp& w, unsigned lane, Span& out) {
    const WarpMemory& m = w.memory;
    switch (space) {
      case 's': out = Span{m.shared, size_t(m.shared_bytes)}; return true;
      case 'c': out = Span{m.mem->cbuf[idx & 15].data(), m.mem->cbuf[idx & 15].size()}; return true;
      case 'g': out = Span{m.mem->global[idx & 15].data(), m.mem->global[idx & 15].size()}; return true;
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

  void access(Warp& w, const Insn& in, unsigned lane, const Operand& o, uint64_t addr, unsigned bytes, bool store,
              uint8_t* data) {
    Span span;
    if (!space_span(o.space, o.idx, w, lane, span)) fail(FaultKind::Unsupported, std::string(1, o.space) + "[] space is not supported: " + where(w, in));
    const Span* buf = &span;
    if (addr + bytes > buf->size || addr + bytes < addr) {
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
        uint32_t t = target(w, in);
        uint32_t taken = act & predmask;
        if (taken == act) w.pc = t;
        else if (!taken) w.pc = next;
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
      bool sg = has("s16") || has("s32");
      unsigned bits = (has("u16") || has("s16")) ? 16 : 32;
      uint32_t m = bits == 16 ? 0xffffu : 0xffffffffu;
      const Operand* c = in.addend();
      each([&](unsigned l) {
        uint32_t x = read(w, in, l, s1) & m, y = read(w, in, l, s2) & m, z = read(w, in, l, c) & m;
        int64_t a = sg ? (bits == 16 ? int16_t(x) : int32_t(x)) : int64_t(x);
        int64_t b = sg ? (bits == 16 ? int16_t(y) : int32_t(y)) : int64_t(y);
        uint32_t mres = uint32_t(a > b ? a - b : b - a) & m;
        uint64_t r = uint64_t(mres) + z;
        uint8_t C = uint8_t((r >> bits) & 1);
        uint32_t res = uint32_t(r) & m;
        uint32_t sb = bits - 1;
        uint8_t O = ((mres >> sb & 1) == (z >> sb & 1)) && ((mres >> sb & 1) != (res >> sb & 1));
        write(w, in, l, dst, res);
        set_flags(w, in, l, sem::flags_int(res, bits) | uint8_t(C << 2) | uint8_t(O << 3));
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
        uint64_t ua = 0, ub = 0;
        if (dbl) {
          ua = read64(w, in, l, s1);
          ub = read64(w, in, l, s2);
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
        if (std::isnan(a) && std::isnan(b)) r = dbl ? 0x7fffffffffffffffull : 0x7fffffffu;
        else if (std::isnan(a)) r = ub;
        else if (std::isnan(b)) r = ua;
        else if (a == b) r = mn ? ((ua >> (dbl ? 63 : 31)) ? ua : ub) : ((ua >> (dbl ? 63 : 31)) ? ub : ua);
        else r = ((a < b) == mn) ? ua : ub;
        if (dbl) {
          write64(w, in, l, dst, r);
          double d = asd(r);
          set_flags(w, in, l, uint8_t((std::isnan(d) || d == 0) | ((std::isnan(d) || std::signbit(d)) << 1)));
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
        set_flags(w, in, l, sem::flags_int(r, 32));
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
      each([&](unsigned l) {
        unsigned q = l & 3, from;
        if (sel < 4) from = (l & ~3u) | unsigned(sel);
        else from = l ^ (sel == 4 ? 1u : 2u);
        uint32_t a = src1[from], b = src2[l], r;
        switch (qop[q]) {
          case 0: r = sem::fadd(a, b, false); break;
          case 1: r = sem::fadd(b, a ^ 0x80000000u, false); break;
          case 2: r = sem::fadd(a, b ^ 0x80000000u, false); break;
          default: r = ftz32(b); break;
        }
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
      std::vector<std::string> types;
      for (auto& n : names)
        if (type_bits(n) && types.size() < 2) types.push_back(n);
      if (types.size() < 2) unsupported("without two types");
      const std::string& dt = types[0];
      const std::string& st = types[1];
      int mode = round_mode(in);
      bool rint = round_int(in), n = has("neg"), ab = has("abs"), sat = has("sat");
      each([&](unsigned l) {
        uint64_t raw = type_bits(st) == 64 ? read64(w, in, l, s1) : read(w, in, l, s1);
        bool sfloat = st[0] == 'f', dfloat = dt[0] == 'f';
        int sb = type_bits(st), db = type_bits(dt);
        uint64_t out = 0;
        if (!sfloat) {
          // Integer source: extend, abs, neg in infinite precision.
          __int128 v;
          if (st[0] == 's') v = sb == 64 ? __int128(int64_t(raw)) : __int128(int64_t(raw << (64 - sb)) >> (64 - sb));
          else v = sb == 64 ? __int128(raw) : __int128(raw & ((1ull << sb) - 1));
          if (ab && v < 0) v = -v;
          if (n) v = -v;
          if (!dfloat) {
            __int128 lo = dt[0] == 's' ? -(__int128(1) << (db - 1)) : 0;
            __int128 hi = dt[0] == 's' ? (__int128(1) << (db - 1)) - 1 : (__int128(1) << db) - 1;
            if (v < lo) v = lo;
            if (v > hi) v = hi;
            out = uint64_t(v);
          } else {
            // Exact in long double? Not for 64-bit: round via the host in the mode.
            double d = in_mode(mode, [&] { volatile long double x = (long double)v; return double(x); });
            if (db == 64) {
              if (sat) d = d < 0 ? 0 : d > 1 ? 1 : d;
              out = asu64(d);
            } else {
              float fl = in_mode(mode, [&] { volatile long double x = (long double)v; volatile float y = float(x); return double(y); });
              if (sat) fl = fl < 0 ? 0 : fl > 1 ? 1 : fl;
              out = db == 32 ? ftz32(asu(fl)) : float_to_half(fl);
            }
          }
        } else {
          double v;
          if (sb == 16) v = half_to_float(uint16_t(raw));
          else if (sb == 32) v = asf(ftz32(uint32_t(raw)));
          else v = asd(raw);
          if (ab) v = std::fabs(v);
          if (n) v = -v;
          if (!dfloat) {
            if (std::isnan(v)) out = 0;  // NaN converts to 0
            else {
              double r = rint_mode(v, rint ? mode : FE_TOWARDZERO);
              double lo = dt[0] == 's' ? -std::ldexp(1.0, db - 1) : 0.0;
              double hi = dt[0] == 's' ? std::ldexp(1.0, db - 1) - 1 : std::ldexp(1.0, db) - 1;
              // 64-bit limits are not doubles (2^63 - 1 rounds up): clamp in integers.
              if (r < lo) r = lo;
              if (dt[0] == 's' && db == 64 && r >= std::ldexp(1.0, 63)) out = uint64_t(INT64_MAX);
              else if (dt[0] == 'u' && db == 64 && r >= std::ldexp(1.0, 64)) out = ~0ull;
              else {
                if (r > hi) r = hi;
                out = dt[0] == 's' ? uint64_t(int64_t(r)) : uint64_t(r);
              }
              if (db < 64) out &= (1ull << db) - 1;
            }
          } else {
            if (rint) v = rint_mode(v, mode);
            if (sat && !std::isnan(v)) v = v < 0 ? 0 : v > 1 ? 1 : v;  // sat keeps NaN (envydis note)
            if (db == 64) out = std::isnan(v) ? 0x7fffffffffffffffull : asu64(v);
            else if (db == 32) {
              float fl = sb == 64 ? double_to_float_mode(v, mode) : float(v);
              out = std::isnan(fl) ? 0x7fffffffu : ftz32(asu(fl));
              if (sb == 32 && std::isnan(v)) out = 0x7fffffffu;
            } else {
              float fl = sb == 64 ? double_to_float_mode(v, mode) : float(v);
              out = float_to_half(fl);
            }
          }
        }
        if (db == 64) write64(w, in, l, dst, out);
        else write(w, in, l, dst, uint32_t(out));
        uint8_t fl;
        if (dfloat && db == 32) fl = sem::flags_float(uint32_t(out));
        else if (dfloat && db == 64) {
          double d = asd(out);
          fl = uint8_t((std::isnan(d) || d == 0) | ((std::isnan(d) || std::signbit(d)) << 1));
        } else if (dfloat) {
          uint16_t h = uint16_t(out);
          bool nan = (h & 0x7fff) > 0x7c00;
          fl = uint8_t((nan || (h & 0x7fff) == 0) | ((nan || (h >> 15)) << 1));
        } else {
          fl = sem::flags_int(uint32_t(out), db >= 32 ? 32 : 16);
          if (db == 64) fl = uint8_t((out == 0) | ((out >> 63) << 1));
          if (db == 8) fl = uint8_t(((out & 0xff) == 0) | (((out >> 7) & 1) << 1));
        }
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
      each([&](unsigned l) {
        double a = asd(read64(w, in, l, s1));
        if (n1) a = -a;
        double r;
        if (in.op == Op::DAdd) {
          double b = asd(read64(w, in, l, s3));
          if (n2) b = -b;
          r = in_mode(mode, [&] { volatile double x = a, y = b; return x + y; });
        } else if (in.op == Op::DMul) {
          double b = asd(read64(w, in, l, s2));
          r = in_mode(mode, [&] { volatile double x = a, y = b; return x * y; });
        } else {
          double b = asd(read64(w, in, l, s2)), c = asd(read64(w, in, l, s3));
          if (n2) c = -c;
          r = in_mode(mode, [&] { volatile double x = a, y = b, z = c; return std::fma(x, y, z); });
        }
        uint64_t out = std::isnan(r) ? 0x7fffffffffffffffull : asu64(r);
        write64(w, in, l, dst, out);
        set_flags(w, in, l, uint8_t((std::isnan(r) || r == 0) | ((std::isnan(r) || std::signbit(r)) << 1)));
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
