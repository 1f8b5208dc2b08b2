// The draw loop: `uint32_t draw(ir::WarpContext*, ir::DrawLoop*)` (ir/abi.h),
// which runs the full warps of a draw straight between the caller's vertex
// records and the vars: per warp it zeroes the given var ranges, moves each
// loaded input register from the records into its four var slots (8 or 16
// vertices at a time: 16-byte loads, two or four of them per vector, and an
// in-register 4x4 transpose per 128-bit lane), copies the pass-through
// registers record to record, then enters the function at its per-warp
// entry (DrawLoop::warp_entry). The function's epilogue comes back through
// loop_next_ (the kWarpLoopOffset slot holds the DrawLoop* with bit 0 set)
// and an indirect jump to DrawLoop::next, which moves the output registers
// out with the inverse transposes and runs the post copies. The prologue
// (registers, MXCSR) and the epilogue run once per call, not once per warp.
//
// The loop depends on the descriptors only, not on the shader: it is one
// stub per tier and MXCSR mode (the entry frame's DAZ choice), emitted the
// first time a draw needs it and kept for the process (draw_stub). A
// vertex shader's own code carries only the jump back into the stub
// (emit_draw_loop); the stub enters it at warp_start_, where every warp of
// a warp-loop call starts.
// Until the eighth session every vertex shader emitted the whole loop, which
// cost ~14 us of each one's cold compile (docs/pica200.md).
//
// The stub touches only vector registers 0-7 and general registers the
// function itself sets before use (rbp, the frame pointer, is restored),
// with VEX encodings on AVX2 and EVEX zmm forms on AVX-512.
#include <cstddef>
#include <cstdlib>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "backend_common/exec_memory.h"

#include "backend_x64/emitter.h"
#include "ir/abi.h"
#include "ir/draw_loop_entry.h"

namespace gpurc::x64 {

using namespace ir;
using namespace Xbyak;

namespace {
#define CTX(field) (rbx + int(offsetof(WarpContext, field)))
#define DL(field) (rsi + int(offsetof(DrawLoop, field)))
#define MOVE(field) (rdi + int(offsetof(DrawRegMove, field)))
#define COPY(field) (rdi + int(offsetof(DrawCopy, field)))
static_assert(sizeof(DrawRegMove) == 32 && sizeof(DrawCopy) == 40);
}  // namespace

bool Emitter::draw_loop_enabled() {
  static const bool yes = env_switch_on("GPURC_DRAW_LOOP");
  return yes;
}

// Read once per process, for measurements and for the test that shows the
// limit (tests/backend_x64/strip_limit.cpp).
bool Emitter::strip_limit_enabled() {
  static const bool yes = env_switch_on("GPURC_STRIP_LIMIT");
  return yes;
}

// A vertex shader's part: the way back into the stub after a warp
// (loop_next_ comes here when the kWarpLoopOffset slot has bit 0 set; eax
// holds the warp's status). The stub enters the shader at warp_start_
// (draw_loop_entry()).
void Emitter::emit_draw_loop() {
  if (!draw_loop_) return;
  L(draw_next_);
  mov(rcx, qword[rsp + kWarpLoopOffset]);
  jmp(qword[rcx - 1 + int(offsetof(DrawLoop, next))]);
}

// The stub of one tier and MXCSR mode in executable memory of its own; null
// if it could not be assembled (the draw runner then keeps the C++ warp loop).
std::unique_ptr<backend::ExecMemory> Emitter::build_draw_stub(Tier tier, bool daz) {
  static const ir::Function empty;
  static const Plan no_plan{};
  constexpr size_t kPool = 4096, kCode = 16384;
  std::vector<uint8_t> buf(kPool + kCode + 64);
  uint8_t* code = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(buf.data()) + kPool + 63) & ~uintptr_t(63));
  try {
    Emitter e(empty, tier, kCode, code, buf.data(), &no_plan);
    e.daz_ = daz;
    e.emit_draw_stub();
    e.ready();
    const uint8_t* first = reinterpret_cast<const uint8_t*>(reinterpret_cast<uintptr_t>(e.pool_lowest()) & ~uintptr_t(63));
    const size_t entry = size_t(code - first);
    auto mem = std::make_unique<backend::ExecMemory>();
    std::string err;
    if (!mem->install(first, entry + e.getSize(), &err, entry)) return nullptr;
    return mem;
  } catch (...) {
    return nullptr;
  }
}

namespace {
// Made on the first draw that needs it (a thread-safe static) and kept for
// the process: compiled shaders' code jumps into it.
template <Tier T, bool Daz>
const uint8_t* draw_stub_of() {
  static const std::unique_ptr<backend::ExecMemory> mem = Emitter::build_draw_stub(T, Daz);
  static const uint8_t* const stub = mem ? mem->entry() : nullptr;
  return stub;
}
}  // namespace

Emitter::DrawStubGetter Emitter::draw_stub_getter() const {
  if (tier_ == Tier::Avx512) return daz_ ? &draw_stub_of<Tier::Avx512, true> : &draw_stub_of<Tier::Avx512, false>;
  return daz_ ? &draw_stub_of<Tier::Avx2, true> : &draw_stub_of<Tier::Avx2, false>;
}

void Emitter::emit_draw_stub() {
  // AVX-512: 16 vertices per transpose step in zmm (GPURC_DRAW_YMM=1: the
  // ymm form, for measuring).
  static const bool force_ymm = [] {
    const char* e = std::getenv("GPURC_DRAW_YMM");
    return e && *e == '1';
  }();
  const bool wide = z_ && !force_ymm;
  // Per call (fifteenth session): no r12 = ctx.frame at entry (set below
  // before each warp's pre copies), MXCSR's IEEE word from the constant
  // pool in the non-DAZ mode, and the first warp's check entered past its
  // reload of rsi (which still holds the DrawLoop*): three or four host
  // instructions of every draw.
  // DrawLoop::next first (rax and rsi are the caller's scratch and the
  // argument): the stub entered ir::kDrawLoopKeptNextEntry bytes on skips it.
  Label next;
  lea(rax, ptr[rip + next]);
  mov(qword[DL(next)], rax);
  if (getSize() != ir::kDrawLoopKeptNextEntry) throw std::logic_error("draw stub: DrawLoop::next store size");
  emit_entry_frame(true);
  lea(rax, ptr[rsi + 1]);
  mov(qword[rsp + kWarpLoopOffset], rax);
  // The first warp: end_warp - 1 going down (the draw runner's default),
  // else first_warp (fifteenth session: a cmov, one instruction fewer per
  // call going down than the branch).
  mov(eax, dword[DL(end_warp)]);
  sub(eax, 1);
  cmp(dword[DL(reverse)], 0);
  cmove(eax, dword[DL(first_warp)]);
  mov(dword[DL(warp)], eax);
  Label check, check_rsi, done, exit;
  auto descriptor = [&] {
    mov(rsi, qword[rsp + kWarpLoopOffset]);
    sub(rsi, 1);
  };
  // r11 = the warp's first vertex.
  auto first_vertex = [&] {
    mov(r11d, dword[DL(warp)]);
    shl(r11, 5);
  };
  // rax, rdx, r14, rbp = the vars' x, y, z, w slots of the move at rdi.
  auto slots = [&] {
    const Reg64 regs[4] = {rax, rdx, r14, rbp};
    for (int c = 0; c < 4; ++c) {
      mov(regs[c].cvt32(), dword[MOVE(var) + 4 * c]);
      add(regs[c], r13);
    }
  };
  // For each entry of the list at DL(list) (count DL(count), 32-byte
  // entries): r8 = base + first vertex * stride, r9 = stride, r10 = 3 * stride; body().
  auto each_move = [&](int list_off, int count_off, const std::function<void()>& body) {
    Label each, none;
    mov(ecx, dword[rsi + count_off]);
    test(ecx, ecx);
    jz(none, T_NEAR);
    mov(rdi, qword[rsi + list_off]);
    L(each);
    mov(r9, qword[MOVE(stride)]);
    mov(r8, r9);
    imul(r8, r11);
    add(r8, qword[MOVE(base)]);
    lea(r10, ptr[r9 + r9 * 2]);
    body();
    add(rdi, int(sizeof(DrawRegMove)));
    sub(ecx, 1);
    jnz(each, T_NEAR);
    // rbp back to the entry frame's frame pointer (after its push of rbp,
    // five more pushes and kStackBytes), for unwinders walking frame pointers.
    lea(rbp, ptr[rsp + kStackBytes + 40]);
    L(none);
  };
  // One vertex's `bytes` (16, 32, 48 or 64) from `src` to `dst`, all read
  // before any is written (the bytes of registers k and k + 4).
  auto copy_vertex_at = [&](int bytes, int k, const RegExp& src, const RegExp& dst) {
    if (bytes == 16) {
      vmovups(Xmm(k), ptr[src]);
      vmovups(ptr[dst], Xmm(k));
    } else if (bytes == 32) {
      vmovups(Ymm(k), ptr[src]);
      vmovups(ptr[dst], Ymm(k));
    } else if (bytes == 48) {
      vmovups(Ymm(k), ptr[src]);
      vmovups(Xmm(k + 4), ptr[src + 32]);
      vmovups(ptr[dst], Ymm(k));
      vmovups(ptr[dst + 32], Xmm(k + 4));
    } else if (wide) {
      vmovups(Zmm(k), ptr[src]);
      vmovups(ptr[dst], Zmm(k));
    } else {
      vmovups(Ymm(k), ptr[src]);
      vmovups(Ymm(k + 4), ptr[src + 32]);
      vmovups(ptr[dst], Ymm(k));
      vmovups(ptr[dst + 32], Ymm(k + 4));
    }
  };
  auto copy_vertex = [&](int bytes, int k) { copy_vertex_at(bytes, k, r8, rax); };
  auto copies = [&](int list_off, int count_off) {
    Label each, copied, none;
    mov(ecx, dword[rsi + count_off]);
    test(ecx, ecx);
    jz(none, T_NEAR);
    mov(rdi, qword[rsi + list_off]);
    L(each);
    mov(r9, qword[COPY(src_stride)]);
    mov(r8, r9);
    imul(r8, r11);
    add(r8, qword[COPY(src)]);
    mov(r10, qword[COPY(dst_stride)]);
    mov(rax, r10);
    imul(rax, r11);
    add(rax, qword[COPY(dst)]);
    mov(edx, dword[DL(lanes)]);
    const int widths[4] = {16, 32, 48, 64};
    for (int w = 0; w < 4; ++w) {
      Label other, vertex, one;
      if (w < 3) {
        cmp(dword[COPY(bytes)], widths[w]);
        jne(other, T_NEAR);
      }
      cmp(edx, int(kWarpLanes));
      jne(one, T_NEAR);
      // A full warp: four vertices per step at [r8 + k * stride] (r14, rbp
      // = three strides: free here; rbp is restored below), two pointer
      // steps per four vertices (eleventh session: was two per vertex).
      mov(edx, int(kWarpLanes / 4));
      lea(r14, ptr[r9 + r9 * 2]);
      lea(rbp, ptr[r10 + r10 * 2]);
      L(vertex);
      copy_vertex_at(widths[w], 0, r8, rax);
      copy_vertex_at(widths[w], 1, r8 + r9, rax + r10);
      copy_vertex_at(widths[w], 2, r8 + r9 * 2, rax + r10 * 2);
      copy_vertex_at(widths[w], 3, r8 + r14, rax + rbp);
      lea(r8, ptr[r8 + r9 * 4]);
      lea(rax, ptr[rax + r10 * 4]);
      sub(edx, 1);
      jnz(vertex, T_NEAR);
      lea(rbp, ptr[rsp + kStackBytes + 40]);  // the entry frame's frame pointer, as after each_move
      jmp(copied, T_NEAR);
      L(one);  // a partial warp: its vertices one by one (lanes >= 1)
      copy_vertex(widths[w], 0);
      add(r8, r9);
      add(rax, r10);
      sub(edx, 1);
      jnz(one, T_NEAR);
      jmp(copied, T_NEAR);
      L(other);
    }
    L(copied);
    add(rdi, int(sizeof(DrawCopy)));
    sub(ecx, 1);
    jnz(each, T_NEAR);
    L(none);
  };
  jmp(check_rsi, T_NEAR);

  // From the epilogue: eax = the status of the warp that just ended.
  L(next);
  cmp(eax, uint32_t(RunStatus::Done));
  jne(exit, T_NEAR);
  descriptor();
  first_vertex();
  // Outputs: per 8 vertices the four slots' 8 lanes, transposed per 128-bit
  // half into vertices k (low half) and k + 4 (high half).
  each_move(int(offsetof(DrawLoop, stores)), int(offsetof(DrawLoop, nstores)), [&] {
    slots();
    Label full;
    cmp(dword[DL(lanes)], int(kWarpLanes));
    je(full, T_NEAR);
    {
      // A partial warp: vertex by vertex, the four components gathered from
      // the slots into one 16-byte store; r10 = the lane's byte offset.
      Label one;
      mov(r12d, dword[DL(lanes)]);
      shl(r12d, 2);
      xor_(r10d, r10d);
      L(one);
      vmovss(Xmm(0), ptr[rax + r10]);
      vinsertps(Xmm(0), Xmm(0), ptr[r14 + r10], 0x20);
      vinsertps(Xmm(0), Xmm(0), ptr[rdx + r10], 0x10);
      vinsertps(Xmm(0), Xmm(0), ptr[rbp + r10], 0x30);
      vmovups(ptr[r8], Xmm(0));
      add(r8, r9);
      add(r10d, 4);
      cmp(r10d, r12d);
      jb(one, T_NEAR);
    }
    Label moved;
    jmp(moved, T_NEAR);
    L(full);
    if (wide) {
      // AVX-512: 16 vertices per step, vertices k, k + 4, k + 8, k + 12 in
      // the four 128-bit lanes of one zmm.
      for (int j = 0; j < int(kWarpLanes) / 16; ++j) {
        vmovups(Zmm(0), ptr[rax + 64 * j]);
        vmovups(Zmm(1), ptr[rdx + 64 * j]);
        vmovups(Zmm(2), ptr[r14 + 64 * j]);
        vmovups(Zmm(3), ptr[rbp + 64 * j]);
        vunpcklps(Zmm(4), Zmm(0), Zmm(1));
        vunpckhps(Zmm(5), Zmm(0), Zmm(1));
        vunpcklps(Zmm(6), Zmm(2), Zmm(3));
        vunpckhps(Zmm(7), Zmm(2), Zmm(3));
        vunpcklpd(Zmm(0), Zmm(4), Zmm(6));
        vunpckhpd(Zmm(1), Zmm(4), Zmm(6));
        vunpcklpd(Zmm(2), Zmm(5), Zmm(7));
        vunpckhpd(Zmm(3), Zmm(5), Zmm(7));
        for (int q = 0; q < 4; ++q) {
          if (q == 0) {
            vmovups(ptr[r8], Xmm(0));
            vmovups(ptr[r8 + r9], Xmm(1));
            vmovups(ptr[r8 + r9 * 2], Xmm(2));
            vmovups(ptr[r8 + r10], Xmm(3));
          } else {
            vextractf32x4(ptr[r8], Zmm(0), uint8_t(q));
            vextractf32x4(ptr[r8 + r9], Zmm(1), uint8_t(q));
            vextractf32x4(ptr[r8 + r9 * 2], Zmm(2), uint8_t(q));
            vextractf32x4(ptr[r8 + r10], Zmm(3), uint8_t(q));
          }
          lea(r8, ptr[r8 + r9 * 4]);
        }
      }
      L(moved);
      return;
    }
    for (int j = 0; j < int(kWarpLanes) / 8; ++j) {
      vmovups(Ymm(0), ptr[rax + 32 * j]);
      vmovups(Ymm(1), ptr[rdx + 32 * j]);
      vmovups(Ymm(2), ptr[r14 + 32 * j]);
      vmovups(Ymm(3), ptr[rbp + 32 * j]);
      vunpcklps(Ymm(4), Ymm(0), Ymm(1));  // x0 y0 x1 y1
      vunpckhps(Ymm(5), Ymm(0), Ymm(1));  // x2 y2 x3 y3
      vunpcklps(Ymm(6), Ymm(2), Ymm(3));  // z0 w0 z1 w1
      vunpckhps(Ymm(7), Ymm(2), Ymm(3));  // z2 w2 z3 w3
      vunpcklpd(Ymm(0), Ymm(4), Ymm(6));  // vertex 0 | 4
      vunpckhpd(Ymm(1), Ymm(4), Ymm(6));  // 1 | 5
      vunpcklpd(Ymm(2), Ymm(5), Ymm(7));  // 2 | 6
      vunpckhpd(Ymm(3), Ymm(5), Ymm(7));  // 3 | 7
      vmovups(ptr[r8], Xmm(0));
      vmovups(ptr[r8 + r9], Xmm(1));
      vmovups(ptr[r8 + r9 * 2], Xmm(2));
      vmovups(ptr[r8 + r10], Xmm(3));
      lea(r8, ptr[r8 + r9 * 4]);
      vextractf128(ptr[r8], Ymm(0), 1);
      vextractf128(ptr[r8 + r9], Ymm(1), 1);
      vextractf128(ptr[r8 + r9 * 2], Ymm(2), 1);
      vextractf128(ptr[r8 + r10], Ymm(3), 1);
      lea(r8, ptr[r8 + r9 * 4]);
    }
    L(moved);
  });
  copies(int(offsetof(DrawLoop, post)), int(offsetof(DrawLoop, npost)));
  {
    Label up, stepped;
    cmp(dword[DL(reverse)], 0);
    je(up, T_NEAR);
    sub(dword[DL(warp)], 1);
    jmp(stepped, T_NEAR);
    L(up);
    add(dword[DL(warp)], 1);
    L(stepped);
  }

  L(check);
  descriptor();
  L(check_rsi);
  // warp - first_warp < end_warp - first_warp, unsigned: also ends a reverse
  // run, whose warp falls below first_warp (wrapping at 0).
  mov(eax, dword[DL(warp)]);
  sub(eax, dword[DL(first_warp)]);
  mov(edx, dword[DL(end_warp)]);
  sub(edx, dword[DL(first_warp)]);
  cmp(eax, edx);
  jae(done, T_NEAR);
  {
    // The warp's lanes: 32, or `tail` for the last warp when that is set;
    // the launched-lane mask follows (the function reads it at its entry).
    Label full;
    mov(ecx, int(kWarpLanes));
    add(eax, 1);
    cmp(eax, edx);  // warp - first_warp + 1 == end_warp - first_warp: the last warp
    jne(full, T_NEAR);
    mov(edx, dword[DL(tail)]);
    test(edx, edx);
    cmovnz(ecx, edx);
    L(full);
    mov(dword[DL(lanes)], ecx);
    mov(eax, 1);
    shl(rax, cl);
    sub(rax, 1);
    mov(dword[CTX(entry_mask)], eax);
  }
  mov(rdx, qword[DL(budget)]);
  mov(qword[CTX(budget)], rdx);
  emit_zero_ranges(int(offsetof(DrawLoop, nzero)), int(offsetof(DrawLoop, zero)));
  first_vertex();
  // Inputs: per 8 vertices, vertices k and k + 4 in the halves of one ymm,
  // then the 4x4 transpose of each half gives 8 lanes of x, y, z and w.
  each_move(int(offsetof(DrawLoop, loads)), int(offsetof(DrawLoop, nloads)), [&] {
    slots();
    Label full, no_prefetch;
    cmp(dword[DL(lanes)], int(kWarpLanes));
    je(full, T_NEAR);
    {
      // A partial warp: vertex by vertex, one 16-byte load spread over the
      // four slots; no record past the draw is read. r10 = the lane's byte
      // offset (the lanes not launched keep what they held).
      Label one;
      mov(r12d, dword[DL(lanes)]);
      shl(r12d, 2);
      xor_(r10d, r10d);
      L(one);
      vmovups(Xmm(0), ptr[r8]);
      vmovss(ptr[rax + r10], Xmm(0));
      vextractps(ptr[rdx + r10], Xmm(0), 1);
      vextractps(ptr[r14 + r10], Xmm(0), 2);
      vextractps(ptr[rbp + r10], Xmm(0), 3);
      add(r8, r9);
      add(r10d, 4);
      cmp(r10d, r12d);
      jb(one, T_NEAR);
      jmp(no_prefetch, T_NEAR);
    }
    L(full);
    if (wide) {
      // AVX-512: vertices k, k + 4, k + 8, k + 12 in the 128-bit lanes of one
      // zmm; the in-lane transposes then give 16 lanes of x, y, z, w.
      for (int j = 0; j < int(kWarpLanes) / 16; ++j) {
        vmovups(Xmm(0), ptr[r8]);
        vmovups(Xmm(1), ptr[r8 + r9]);
        vmovups(Xmm(2), ptr[r8 + r9 * 2]);
        vmovups(Xmm(3), ptr[r8 + r10]);
        lea(r12, ptr[r8 + r9 * 4]);  // r12 (the frame) is reloaded below
        for (int q = 1; q < 4; ++q) {
          vinsertf32x4(Zmm(0), Zmm(0), ptr[r12], uint8_t(q));
          vinsertf32x4(Zmm(1), Zmm(1), ptr[r12 + r9], uint8_t(q));
          vinsertf32x4(Zmm(2), Zmm(2), ptr[r12 + r9 * 2], uint8_t(q));
          vinsertf32x4(Zmm(3), Zmm(3), ptr[r12 + r10], uint8_t(q));
          lea(r12, ptr[r12 + r9 * 4]);
        }
        vunpcklps(Zmm(4), Zmm(0), Zmm(1));
        vunpckhps(Zmm(5), Zmm(0), Zmm(1));
        vunpcklps(Zmm(6), Zmm(2), Zmm(3));
        vunpckhps(Zmm(7), Zmm(2), Zmm(3));
        vunpcklpd(Zmm(0), Zmm(4), Zmm(6));
        vunpckhpd(Zmm(1), Zmm(4), Zmm(6));
        vunpcklpd(Zmm(2), Zmm(5), Zmm(7));
        vunpckhpd(Zmm(3), Zmm(5), Zmm(7));
        vmovups(ptr[rax + 64 * j], Zmm(0));
        vmovups(ptr[rdx + 64 * j], Zmm(1));
        vmovups(ptr[r14 + 64 * j], Zmm(2));
        vmovups(ptr[rbp + 64 * j], Zmm(3));
        mov(r8, r12);
      }
    } else {
    for (int j = 0; j < int(kWarpLanes) / 8; ++j) {
      lea(r12, ptr[r8 + r9 * 4]);  // r12 (the frame) is reloaded below
      vmovups(Xmm(0), ptr[r8]);
      vmovups(Xmm(1), ptr[r8 + r9]);
      vmovups(Xmm(2), ptr[r8 + r9 * 2]);
      vmovups(Xmm(3), ptr[r8 + r10]);
      vinsertf128(Ymm(0), Ymm(0), ptr[r12], 1);
      vinsertf128(Ymm(1), Ymm(1), ptr[r12 + r9], 1);
      vinsertf128(Ymm(2), Ymm(2), ptr[r12 + r9 * 2], 1);
      vinsertf128(Ymm(3), Ymm(3), ptr[r12 + r10], 1);
      vunpcklps(Ymm(4), Ymm(0), Ymm(1));  // x0 x1 y0 y1
      vunpckhps(Ymm(5), Ymm(0), Ymm(1));  // z0 z1 w0 w1
      vunpcklps(Ymm(6), Ymm(2), Ymm(3));  // x2 x3 y2 y3
      vunpckhps(Ymm(7), Ymm(2), Ymm(3));  // z2 z3 w2 w3
      vunpcklpd(Ymm(0), Ymm(4), Ymm(6));  // x
      vunpckhpd(Ymm(1), Ymm(4), Ymm(6));  // y
      vunpcklpd(Ymm(2), Ymm(5), Ymm(7));  // z
      vunpckhpd(Ymm(3), Ymm(5), Ymm(7));  // w
      vmovups(ptr[rax + 32 * j], Ymm(0));
      vmovups(ptr[rdx + 32 * j], Ymm(1));
      vmovups(ptr[r14 + 32 * j], Ymm(2));
      vmovups(ptr[rbp + 32 * j], Ymm(3));
      lea(r8, ptr[r12 + r9 * 4]);
    }
    }
    // The next warp's records of this register (prefetches never fault),
    // unless this is the call's last warp.
    cmp(dword[DL(prefetch)], 0);
    je(no_prefetch, T_NEAR);
    {
      Label up, go;  // r8 is the next warp's first record going up; going down, 64 records lower
      mov(eax, dword[DL(warp)]);
      cmp(dword[DL(reverse)], 0);
      je(up, T_NEAR);
      cmp(eax, dword[DL(first_warp)]);
      je(no_prefetch, T_NEAR);
      mov(r12, r9);
      shl(r12, 6);
      sub(r8, r12);
      jmp(go, T_NEAR);
      L(up);
      add(eax, 1);
      cmp(eax, dword[DL(end_warp)]);
      je(no_prefetch, T_NEAR);
      L(go);
    }
    // Unrolled (eleventh session: the counted loop cost 7 instructions per
    // four records, 56 per warp and loaded register; now 39).
    for (int k = 0; k < int(kWarpLanes / 4); ++k) {
      prefetcht0(ptr[r8]);
      prefetcht0(ptr[r8 + r9]);
      prefetcht0(ptr[r8 + r9 * 2]);
      prefetcht0(ptr[r8 + r10]);
      if (k + 1 < int(kWarpLanes / 4)) lea(r8, ptr[r8 + r9 * 4]);
    }
    L(no_prefetch);
  });
  mov(r12, qword[CTX(frame)]);
  copies(int(offsetof(DrawLoop, pre)), int(offsetof(DrawLoop, npre)));
  jmp(qword[DL(warp_entry)]);

  // Done is returned, not stored again (fifteenth session): the function's
  // epilogue stored every warp's status, and a call without warps leaves
  // ctx.status alone (ir::Executable::draw_loop_code).
  L(done);
  mov(eax, uint32_t(RunStatus::Done));
  L(exit);  // eax = the call's status
  emit_exit_frame();
}

}  // namespace gpurc::x64
