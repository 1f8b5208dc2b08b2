// The window fast path of load and store (the x64 tiers' general fast path,
// docs/backend_x64.md): over the lanes taking part (mask operand AND
// entry_mask), a check pass tests every lane's address against
// ctx.windows[space], then each of ctx.extra_windows[space] in turn (an empty
// window ends the list); when one window holds every lane, the access pass
// does the loads / stores in lane order straight on its host memory. Anything
// else falls through to the run_warp_op helper, which does the whole op with
// the interpreter's fault semantics; the check pass has no side effects, so
// nothing is done twice. Scalar per lane: the lane loops walk the set bits of
// the taking-part mask (RBIT + CLZ), lowest lane first.
#include <cstddef>

#include "backend_a64/emitter.h"

namespace gpurc::a64 {

using namespace ir;
using namespace asmjit;
using namespace asmjit::a64;

namespace {
#define CTX(field) uint32_t(offsetof(WarpContext, field))
}  // namespace

void Emitter::add_off(const a64::Gp& dst, const a64::Gp& base, uint64_t off) {
  if (off < 4096) {
    a_.add(dst, base, off);
    return;
  }
  mov_imm(dst, off);
  a_.add(dst, base, dst);
}

bool Emitter::emit_memory_fast(ValueId v, const Label& done) {
  const Inst& in = f_.insts[v];
  const bool is_load = in.op == Opcode::Load;
  if (!is_load && in.op != Opcode::Store) return false;
  if ((in.attr & 15) >= kNumSpaces || (in.attr >> 4) > 2) return false;  // the helper faults Unsupported
  if (in.args.size() != (is_load ? 2u : 3u)) return false;
  ir::Type addr_t = f_.insts[in.args[0]].type;
  if (addr_t != ir::Type::I32 && addr_t != ir::Type::I64) return false;
  ir::Type data_t = is_load ? in.type : f_.insts[in.args[1]].type;
  const unsigned bytes = data_t == ir::Type::I1 ? 1 : bit_width(data_t) / 8;
  if (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8) return false;
  const unsigned lb = lane_bytes(data_t), ab = lane_bytes(addr_t);
  const uint32_t data_slot = is_load ? slot(v) : slot(in.args[1]);
  const size_t space = size_t(mem_space(in.attr));
  const uint32_t primary = uint32_t(offsetof(WarpContext, windows) + space * sizeof(MemWindow));
  const uint32_t extra = uint32_t(offsetof(WarpContext, extra_windows) + space * sizeof(MemWindow) * kExtraWindows);
  Label slow = a_.newLabel(), try_window = a_.newLabel(), next_window = a_.newLabel();
  Label check = a_.newLabel(), access = a_.newLabel(), after_primary = a_.newLabel();

  // w11 = lanes taking part; none: nothing to do.
  lane_bits(w11, slot(in.args.back()));
  a_.ldr(w13, at(x19, CTX(entry_mask), 4));
  a_.ands(w11, w11, w13);
  a_.b_eq(done);
  add_off(x6, x20, slot(in.args[0]));  // the address slot
  add_off(x7, x20, data_slot);         // the data slot
  auto lane_address = [&] {            // x0 = address of lane x10
    if (ab == 4) a_.ldr(w0, ptr(x6, x10, lsl(2)));
    else a_.ldr(x0, ptr(x6, x10, lsl(3)));
  };
  auto lowest_lane = [&](const GpW& bits) {  // x10 = its lowest set bit's lane
    a_.rbit(w10, bits);
    a_.clz(w10, w10);
  };
  auto clear_lowest = [&](const GpW& bits) {
    a_.sub(w1, bits, 1);
    a_.ands(bits, bits, w1);
  };

  // x12 walks the space's windows: windows[space], then extra_windows[space][..].
  add_off(x12, x19, primary);
  a_.bind(try_window);
  a_.ldr(x13, ptr(x12, int32_t(offsetof(MemWindow, host))));
  a_.cbz(x13, slow);  // no window (the rest are empty too)
  a_.ldr(x14, ptr(x12, int32_t(offsetof(MemWindow, base))));
  a_.ldr(x15, ptr(x12, int32_t(offsetof(MemWindow, size))));
  a_.subs(x15, x15, bytes);
  a_.b_lo(next_window);  // window smaller than one access
  a_.mov(w17, w11);
  a_.bind(check);  // every lane: 0 <= address - base <= size - bytes
  lowest_lane(w17);
  lane_address();
  a_.subs(x0, x0, x14);
  a_.b_lo(next_window);
  a_.cmp(x0, x15);
  a_.b_hi(next_window);
  clear_lowest(w17);
  a_.b_ne(check);

  a_.sub(x13, x13, x14);  // host address of guest address 0 of the window (mod 2^64)
  a_.mov(w17, w11);
  a_.bind(access);
  lowest_lane(w17);
  lane_address();
  a_.add(x0, x0, x13);
  if (is_load) {
    switch (bytes) {
      case 1: a_.ldrb(w1, ptr(x0)); break;
      case 2: a_.ldrh(w1, ptr(x0)); break;
      case 4: a_.ldr(w1, ptr(x0)); break;
      default: a_.ldr(x1, ptr(x0)); break;
    }
    if (data_t == ir::Type::I1) {
      a_.cmp(w1, 0);
      a_.cset(w1, CondCode::kNE);
    }
    if (lb == 8) a_.str(x1, ptr(x7, x10, lsl(3)));
    else a_.str(w1, ptr(x7, x10, lsl(2)));
  } else {
    if (lb == 8) a_.ldr(x1, ptr(x7, x10, lsl(3)));
    else a_.ldr(w1, ptr(x7, x10, lsl(2)));
    switch (bytes) {
      case 1:
        if (data_t == ir::Type::I1) a_.and_(w1, w1, 1);
        a_.strb(w1, ptr(x0));
        break;
      case 2: a_.strh(w1, ptr(x0)); break;
      case 4: a_.str(w1, ptr(x0)); break;
      default: a_.str(x1, ptr(x0)); break;
    }
  }
  clear_lowest(w17);
  a_.b_ne(access);
  a_.b(done);

  // Some lane is outside this window: the next one, if any.
  a_.bind(next_window);
  add_off(x9, x19, primary);
  a_.cmp(x12, x9);
  a_.b_ne(after_primary);
  add_off(x12, x19, extra);
  a_.b(try_window);
  a_.bind(after_primary);
  a_.add(x12, x12, uint32_t(sizeof(MemWindow)));
  add_off(x9, x19, extra + sizeof(MemWindow) * kExtraWindows);
  a_.cmp(x12, x9);
  a_.b_lo(try_window);
  a_.bind(slow);
  return true;
}

}  // namespace gpurc::a64
