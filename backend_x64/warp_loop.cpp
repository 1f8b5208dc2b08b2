// The warp loop: a second entry of a compiled function,
// `uint32_t loop(ir::WarpContext*, ir::WarpLoop*)` (ir/abi.h), that runs
// warps loop->first_warp .. end_warp - 1 one after the other in the same
// vars and frame; they may span many blocks of a launch (the grid loop,
// docs/runtime.md). The prologue (registers, MXCSR) and the epilogue run once
// per call; per warp the loop sets the watchdog budget, zeroes the block's
// shared memory before each block's first warp (grid loop with shared
// memory), zeroes the vars ranges it was given and writes the lane vars
// (base + per-lane addend, masked), then enters the function: the call's
// first warp at warp_start_, the whole per-run part of the prologue (fault
// reset, first launched lane, launched-lane masks, resume, partial slots),
// the later ones at loop_warp_start_, past what is the same for every full
// warp (only the partial slots are zeroed again). The function's epilogue,
// seeing [rsp + kWarpLoopOffset] set, comes back to loop_next_: Done goes on
// with the next warp, anything else (a fault) returns with loop->warp naming
// the warp that stopped. Functions with barriers get no loop (a warp stopped
// at a barrier needs the runtime's rounds and a slot of its own).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "backend_x64/emitter.h"
#include "ir/abi.h"

namespace gpurc::x64 {

using namespace ir;
using namespace Xbyak;

namespace {
#define CTX(field) (rbx + int(offsetof(WarpContext, field)))
#define LOOP(field) (rsi + int(offsetof(WarpLoop, field)))
#define LANEVAR(field) (rdi + int(offsetof(LaneVarInit, field)))
static_assert(sizeof(LaneVarInit) == 24);
}  // namespace

namespace {
// The warp loop's code depends on the tier, the entry frame's MXCSR mode
// (daz_), whether the function has a draw loop and whether it can touch
// shared memory (the per-block zeroing), on nothing else of the function:
// the first emission of each shape in a thread is kept (bytes and the
// places of its four references to the function's own labels) and later
// functions copy it (replay_warp_loop). Every jump inside the loop is a
// rel32 to a label inside it, so the bytes do not depend on where they go.
struct WarpLoopCopy {
  enum Kind : uint8_t { BindLoopNext, JnzDrawNext, JeWarpStart, JmpLoopWarpStart, BindLoopNextDone };
  struct Point {
    uint32_t at, len;  // offset from the loop's entry, bytes the reference takes
    Kind kind;
  };
  std::vector<uint8_t> bytes;
  std::vector<Point> points;
};
struct WarpLoopCopies {
  WarpLoopCopy shape[128];  // z_ | daz_ << 1 | draw_loop_ << 2 | shared << 3 | lane0_loop() << 4 |
                           // budget-free short way << 5 | short way over several vars << 6
  uint64_t replays = 0;
};
thread_local WarpLoopCopies tl_warp_loops;
bool warp_loop_copies_on = true;
}  // namespace

void set_warp_loop_copies(bool on) {
  warp_loop_copies_on = on;
  tl_warp_loops = WarpLoopCopies{};
}
uint64_t warp_loop_replays() { return tl_warp_loops.replays; }

bool Emitter::warp_loop_return_enabled() {
  static const bool yes = env_switch_on("GPURC_WARP_LOOP_RETURN");
  return yes;
}

void Emitter::emit_warp_loop() {
  if (!warp_loop_) return;
  align(16);
  warp_loop_entry_ = getSize();
  const bool zeroes_shared = touches_shared_memory();
  const bool lane0 = lane0_loop();
  // The short way below leaves ctx.budget alone in a function with no
  // budget op (nothing else reads it): a frame store per warp fewer, which
  // is what bounds a memory kernel's warp on this host (docs/backend_x64.md,
  // nineteenth session). The general way keeps its store (placement: the
  // eighteenth session measured the empty row dropping without it).
  const bool tight_budget_free = lane0 && !zeroes_shared && !has_budget_ops();
  // Tesla's index-segment vars (index_tight_ok_): the short way steps over
  // every entry of the descriptor (the frame's step), G13's over its one var.
  const bool tight_vars = lane0 && index_tight_ok_;
  WarpLoopCopy& copy = tl_warp_loops.shape[(z_ ? 1 : 0) | (daz_ ? 2 : 0) | (draw_loop_ ? 4 : 0) |
                                           (zeroes_shared ? 8 : 0) | (lane0 ? 16 : 0) |
                                           (tight_budget_free ? 32 : 0) | (tight_vars ? 64 : 0)];
  if (warp_loop_copies_on && !copy.bytes.empty() && maxSize_ - size_ >= copy.bytes.size() + 64) {
    // The kept bytes between the points; at each point what the first
    // emission did there, through xbyak (the labels are this function's).
    size_t from = 0;
    for (const WarpLoopCopy::Point& p : copy.points) {
      std::memcpy(top_ + size_, copy.bytes.data() + from, p.at - from);
      size_ += p.at - from;
      const size_t before = size_;
      switch (p.kind) {
        case WarpLoopCopy::BindLoopNext: L(loop_next_); break;
        case WarpLoopCopy::JnzDrawNext: jnz(draw_next_, T_NEAR); break;
        case WarpLoopCopy::JeWarpStart: je(warp_start_, T_NEAR); break;
        case WarpLoopCopy::JmpLoopWarpStart: jmp(loop_warp_start_, T_NEAR); break;
        case WarpLoopCopy::BindLoopNextDone: L(loop_next_done_); break;
      }
      if (size_ - before != p.len) throw CompileError("x64 jit: warp loop copy: a reference changed its length");
      from = p.at + p.len;
    }
    std::memcpy(top_ + size_, copy.bytes.data() + from, copy.bytes.size() - from);
    size_ += copy.bytes.size() - from;
    ++tl_warp_loops.replays;
    return;
  }
  std::vector<WarpLoopCopy::Point> points;
  auto point = [&](WarpLoopCopy::Kind kind, auto&& emit) {
    const size_t at = getSize();
    emit();
    points.push_back({uint32_t(at - warp_loop_entry_), uint32_t(getSize() - at), kind});
  };
  // The prologue's register saves and MXCSR, once per call.
  emit_entry_frame();
  mov(qword[rsp + kWarpLoopOffset], rsi);
  // The warp index and the bases of the next warp live in the entry
  // frame (kLoopWarpOffset, kLoopBasesOffset), loop->warp is written when
  // the call ends: an `add` to the descriptor's field and its reload per
  // warp made a chain through memory that bounded an empty warp's loop.
  mov(eax, dword[LOOP(first_warp)]);
  mov(dword[rsp + kLoopWarpOffset], eax);
  mov(rdx, qword[LOOP(bases)]);
  mov(qword[rsp + kLoopBasesOffset], rdx);
  mov(dword[rsp + kLoopBlockLeftOffset], 0);
  if (lane0) mov(dword[rsp + kLoopLane0Offset], 0);  // every entry whole until the first warp's prologue says
  {
    // Once per call: whether every lane var entry is 4 bytes wide with no
    // lane_keep (Tesla's and G13's launches), for the per-warp writes below.
    Label scan, mixed, set;
    mov(ecx, dword[LOOP(nvars)]);
    mov(rdi, qword[LOOP(vars)]);
    mov(eax, 1);
    test(ecx, ecx);
    jz(set, T_NEAR);
    L(scan);
    cmp(dword[LANEVAR(width)], 4);
    jne(mixed, T_NEAR);
    cmp(qword[LANEVAR(lane_keep)], 0);
    jne(mixed, T_NEAR);
    add(rdi, int(sizeof(LaneVarInit)));
    sub(ecx, 1);
    jnz(scan, T_NEAR);
    jmp(set, T_NEAR);
    L(mixed);
    xor_(eax, eax);
    L(set);
    mov(dword[LOOP(plain_vars)], eax);
  }
  Label check, done, exit;
  mov(eax, dword[rsp + kLoopWarpOffset]);
  jmp(check, T_NEAR);

  // From the epilogue: eax = the status of the warp that just ended.
  point(WarpLoopCopy::BindLoopNext, [&] { L(loop_next_); });
  if (draw_loop_) {  // a draw-loop call (draw_loop.cpp) marks its pointer with bit 0
    test(byte[rsp + kWarpLoopOffset], 1);
    point(WarpLoopCopy::JnzDrawNext, [&] { jnz(draw_next_, T_NEAR); });
  }
  cmp(eax, uint32_t(RunStatus::Done));
  jne(exit, T_NEAR);
  point(WarpLoopCopy::BindLoopNextDone, [&] { L(loop_next_done_); });  // a `return`'s way in (emit_block)
  // A call whose descriptor is the lane-0 var alone, with no var ranges to
  // zero (the first warp's prologue marked it -1, emit_lane_run_flags): the
  // short way below for every later warp.
  Label tight;
  const bool tight_path = lane0 && !zeroes_shared;
  if (tight_path) {
    test(byte[rsp + kLoopLane0Offset], 1);
    jnz(tight, T_NEAR);
  }
  mov(rsi, qword[rsp + kWarpLoopOffset]);
  mov(eax, dword[rsp + kLoopWarpOffset]);
  add(eax, 1);
  mov(dword[rsp + kLoopWarpOffset], eax);

  L(check);  // rsi = the loop descriptor, eax = the warp, on both ways in
  cmp(eax, dword[LOOP(end_warp)]);
  jae(done, T_NEAR);
  mov(rdx, qword[LOOP(budget)]);
  mov(qword[CTX(budget)], rdx);

  // The grid loop's shared memory: zeroed before each block's first warp
  // (the entry frame's kLoopBlockLeftOffset counts the warps left in the
  // block, 0 at the call's start: in the frame, as the warp index, not in
  // loop->block_left).
  // A function that never reads or writes the shared space (no load or
  // store of it, no atomic) cannot tell: then the loop leaves it alone
  // (Tesla's s[] of a kernel that reads its params as uniforms: a `rep
  // stosb` per block, about 3% of saxpy's launch).
  if (zeroes_shared) {
    Label keep, count;
    cmp(qword[LOOP(shared_bytes)], 0);
    je(keep, T_NEAR);
    mov(eax, dword[rsp + kLoopBlockLeftOffset]);
    test(eax, eax);
    jnz(count, T_NEAR);
    mov(rdi, qword[LOOP(shared)]);
    mov(rcx, qword[LOOP(shared_bytes)]);
    rep();
    stosb();  // al = 0 (eax was tested zero)
    mov(eax, dword[LOOP(block_warps)]);
    L(count);
    sub(eax, 1);
    mov(dword[rsp + kLoopBlockLeftOffset], eax);
    L(keep);
  }

  emit_zero_ranges(int(offsetof(WarpLoop, nzero)), int(offsetof(WarpLoop, zero)));

  // Lane vars: lane l = (base + lane_add[l]) & lane_keep[l].
  {
    Label vars, wide, next, none, plain;
    Label stored;
    mov(ecx, dword[LOOP(nvars)]);
    test(ecx, ecx);
    jz(none, T_NEAR);
    mov(rdx, qword[rsp + kLoopBasesOffset]);  // this warp's bases: the previous warp's end
    mov(rdi, qword[LOOP(vars)]);
    // Every entry 4 bytes wide and unmasked (the call's scan above): per
    // var a broadcast of its base and an add and a store per vector, no
    // tests of width and lane_keep (about 7 instructions fewer per var).
    cmp(dword[LOOP(plain_vars)], 0);
    je(vars, T_NEAR);
    Label lane0_only, advance;
    if (lane0) mov(r10d, dword[rsp + kLoopLane0Offset]);
    L(plain);
    mov(r8d, dword[LANEVAR(offset)]);
    if (lane0) {  // the function's lane-0 vars (emitter.h, plan_lane0_var): lane 0 = base (lane_add[0] = 0)
      bt(r10d, ecx);  // (bit c: the entry of countdown c, set only when nvars < 32)
      jc(lane0_only, T_NEAR);
    }
    mov(r9, qword[LANEVAR(lane_add)]);
    vpbroadcastd(V(1), dword[rdx]);
    for (int o = 0; o < 4 * kWarpLanes; o += vbytes_) {
      vpaddd(V(2), V(1), ptr[r9 + o]);
      vstore(ptr[r13 + r8 + o], 2);
    }
    L(advance);
    add(rdx, 8);
    add(rdi, int(sizeof(LaneVarInit)));
    sub(ecx, 1);
    jnz(plain, T_NEAR);
    jmp(stored, T_NEAR);
    if (lane0) {
      L(lane0_only);
      mov(r9d, dword[rdx]);
      mov(dword[r13 + r8], r9d);
      jmp(advance, T_NEAR);
    }
    L(vars);
    mov(r8d, dword[LANEVAR(offset)]);
    add(r8, r13);
    mov(r9, qword[LANEVAR(lane_add)]);
    mov(r10, qword[LANEVAR(lane_keep)]);
    auto write = [&](int bytes, bool q) {
      Label unmasked, written;
      if (q) vpbroadcastq(V(1), qword[rdx]);
      else vpbroadcastd(V(1), dword[rdx]);
      test(r10, r10);
      jz(unmasked, T_NEAR);
      for (int o = 0; o < bytes; o += vbytes_) {
        if (q) vpaddq(V(2), V(1), ptr[r9 + o]);
        else vpaddd(V(2), V(1), ptr[r9 + o]);
        if (z_) vpandd(V(2), V(2), ptr[r10 + o]);
        else vpand(V(2), V(2), ptr[r10 + o]);
        vstore(ptr[r8 + o], 2);
      }
      jmp(written, T_NEAR);
      L(unmasked);
      for (int o = 0; o < bytes; o += vbytes_) {
        if (q) vpaddq(V(2), V(1), ptr[r9 + o]);
        else vpaddd(V(2), V(1), ptr[r9 + o]);
        vstore(ptr[r8 + o], 2);
      }
      L(written);
    };
    cmp(dword[LANEVAR(width)], 8);
    je(wide, T_NEAR);
    write(4 * kWarpLanes, false);
    jmp(next, T_NEAR);
    L(wide);
    write(8 * kWarpLanes, true);
    L(next);
    add(rdx, 8);
    add(rdi, int(sizeof(LaneVarInit)));
    sub(ecx, 1);
    jnz(vars, T_NEAR);
    L(stored);
    mov(qword[rsp + kLoopBasesOffset], rdx);  // the next warp's
    L(none);
  }
  // The call's first warp runs the whole per-run prologue; the others, full
  // warps in the same frame, skip what it wrote for all of them. (eax is
  // still the warp index unless the shared-memory zeroing above used it.)
  if (zeroes_shared) mov(eax, dword[rsp + kLoopWarpOffset]);
  cmp(eax, dword[LOOP(first_warp)]);
  point(WarpLoopCopy::JeWarpStart, [&] { je(warp_start_, T_NEAR); });
  xor_(eax, eax);
  point(WarpLoopCopy::JmpLoopWarpStart, [&] { jmp(loop_warp_start_, T_NEAR); });
  if (tight_path) {
    // The next warp: its budget (with budget ops) and lane 0 of the one var
    // (lane_add[0] = 0), as the general way does for this descriptor, from
    // the frame: the bases pointer is the warp counter (kLoopWarpOffset is
    // not kept in this mode; `exit` derives the warp from the pointer).
    // Four loads and two stores per warp: the frame's loads and stores, not
    // the instruction count, bounded G13 `memory`'s warp on this host.
    Label tight_done;
    L(tight);
    mov(rdx, qword[rsp + kLoopBasesOffset]);
    cmp(rdx, qword[rsp + kLoopBasesEndOffset]);
    jae(tight_done, T_NEAR);
    if (!tight_budget_free) {
      mov(rsi, qword[rsp + kWarpLoopOffset]);
      mov(rcx, qword[LOOP(budget)]);
      mov(qword[CTX(budget)], rcx);
    }
    mov(r9d, dword[rdx]);
    mov(r8d, dword[rsp + kLoopLane0VarOffset]);
    mov(dword[r13 + r8], r9d);
    if (tight_vars) {  // (entries past the first: lane-0 vars read from these bases)
      mov(ecx, dword[rsp + kLoopBasesStepOffset]);
      add(rdx, rcx);
    } else {
      add(rdx, 8);
    }
    mov(qword[rsp + kLoopBasesOffset], rdx);
    xor_(eax, eax);
    point(WarpLoopCopy::JmpLoopWarpStart, [&] { jmp(loop_warp_start_, T_NEAR); });
    L(tight_done);
    mov(rsi, qword[rsp + kWarpLoopOffset]);
    mov(eax, dword[LOOP(end_warp)]);
  }

  L(done);  // eax = end_warp
  mov(dword[LOOP(warp)], eax);
  mov(eax, uint32_t(RunStatus::Done));
  mov(dword[CTX(status)], eax);
  Label leave;
  jmp(leave, T_NEAR);
  L(exit);  // eax = the call's status (ctx.status holds it): the warp that stopped
  mov(rsi, qword[rsp + kWarpLoopOffset]);
  if (tight_path) {
    // The short way's mode (bit 0): warp = first_warp + (next entry -
    // bases) / step - 1, the step 8 nvars (eax, the status, is kept).
    Label counted, stored;
    test(byte[rsp + kLoopLane0Offset], 1);
    jz(counted, T_NEAR);
    mov(r10d, eax);
    mov(rax, qword[rsp + kLoopBasesOffset]);
    sub(rax, qword[LOOP(bases)]);
    xor_(edx, edx);
    mov(ecx, dword[rsp + kLoopBasesStepOffset]);
    div(rcx);
    lea(ecx, ptr[rax - 1]);
    add(ecx, dword[LOOP(first_warp)]);
    mov(eax, r10d);
    jmp(stored, T_NEAR);
    L(counted);
    mov(ecx, dword[rsp + kLoopWarpOffset]);
    L(stored);
  } else {
    mov(ecx, dword[rsp + kLoopWarpOffset]);
  }
  mov(dword[LOOP(warp)], ecx);
  L(leave);
  emit_exit_frame();
  // Every label of the loop's own is bound (xbyak has written their rel32s).
  if (warp_loop_copies_on) {
    copy.bytes.assign(top_ + warp_loop_entry_, top_ + getSize());
    copy.points = std::move(points);
  }
}


// Zeroes the var ranges listed by a loop descriptor at rsi: dword [rsi +
// count_off] (offset, bytes) pairs at qword [rsi + list_off], offsets from
// r13, bytes a multiple of 32. Shared by the warp loop and the draw loop,
// whose descriptors both carry such a list. Uses rcx, rdx, r8, r9, vector 0.
void Emitter::emit_zero_ranges(int count_off, int list_off) {
  Label ranges, range, tail, next, none;
  mov(ecx, dword[rsi + count_off]);
  test(ecx, ecx);
  jz(none, T_NEAR);
  mov(rdx, qword[rsi + list_off]);
  vxor(0, 0, 0);
  L(ranges);
  mov(r8d, dword[rdx]);
  mov(r9d, dword[rdx + 4]);
  add(r8, r13);
  L(range);
  cmp(r9d, vbytes_);
  jb(tail, T_NEAR);
  vstore(ptr[r8], 0);
  add(r8, vbytes_);
  sub(r9d, vbytes_);
  jmp(range, T_NEAR);
  L(tail);
  if (z_) {  // a last 32 bytes
    test(r9d, r9d);
    jz(next, T_NEAR);
    vmovdqu(ptr[r8], Ymm(0));
  }
  L(next);
  add(rdx, 8);
  sub(ecx, 1);
  jnz(ranges, T_NEAR);
  L(none);
}

// Whether the function has a budget op (the watchdog's only reader of
// ctx.budget in generated code; helpers and the runtime do not read it).
bool Emitter::has_budget_ops() const {
  for (const Block& b : f_.blocks)
    for (ValueId v : b.insts)
      if (f_.insts[v].op == Opcode::Budget) return true;
  return false;
}

// Whether any op of the function may access the shared space: a load or
// store of it, or an atomic (of any space: the conservative answer).
bool Emitter::touches_shared_memory() const {
  for (const Block& b : f_.blocks)
    for (ValueId v : b.insts) {
      const Inst& in = f_.insts[v];
      switch (in.op) {
        case Opcode::Load:
        case Opcode::Store:
          if (mem_space(in.attr) == Space::Shared) return true;
          break;
        case Opcode::AtomicRmw:
        case Opcode::AtomicCas: return true;
        default: break;
      }
    }
  return false;
}
}  // namespace gpurc::x64
