// The AArch64 emitter: frame layout, strip loops, control flow, helper calls
// (emitter.cpp); instruction selection for individual ops lives in lower.cpp.
// Code is assembled with asmjit's AArch64 assembler.
#pragma once
#include <asmjit/arm.h>
#include <asmjit/arm/a64assembler.h>

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "backend_a64/jit.h"
#include "backend_common/helpers.h"
#include "backend_common/plan.h"
#include "ir/ir.h"

namespace gpurc::a64 {

namespace rt = backend::rt;
using backend::Plan;
using backend::Segment;

// q register r (also its .4s / .16b / .2d views).
inline asmjit::a64::VecV Q(int r) { return asmjit::a64::v(uint32_t(r)); }

struct CompileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Emitter;

// The assembler the emitter writes through: before an instruction that
// writes a vector register is encoded, the emitter's register cache may
// substitute another register for that destination (copy-on-write of a
// cached value or constant a lowering modifies in place, emitter.cpp).
class RegAssembler : public asmjit::a64::Assembler {
 public:
  using asmjit::a64::Assembler::Assembler;
  Emitter* cache = nullptr;
  asmjit::Error _emit(asmjit::InstId id, const asmjit::Operand_& o0, const asmjit::Operand_& o1,
                      const asmjit::Operand_& o2, const asmjit::Operand_* ext) override;
};

class Emitter {
 public:
  Emitter(const ir::Function& f, RegAssembler& a);
  void emit_function();
  uint32_t frame_bytes() const { return frame_bytes_; }
  // Descriptors referenced by the code; the compiled function keeps them alive.
  std::vector<std::unique_ptr<rt::EvalOp>> eval_ops;
  std::vector<std::unique_ptr<rt::WarpOp>> warp_ops;

  // Lanes per strip: one q register holds 4 lanes of a 32-bit value (a warp
  // value is eight of them) or 2 lanes of a 64-bit one.
  static constexpr int kStripLanes = 4;

 private:
  friend struct Lowerings;  // lowering.h: the per-op dispatch table names the lower_* members
  friend class RegAssembler;

  // ---- registers of the generated code (all callee-saved, so helper calls keep them)
  // x19 = WarpContext*, x20 = frame, x21 = vars, x22 = uniforms,
  // x23 = byte offset of the strip's first lane in a 4-byte-per-lane array,
  // x24 = 4 * the first launched lane, x25 = frame + x23 (4-byte slots of the
  // strip), x26 = frame + 2 * x23 (8-byte slots), x27 = vars + x23,
  // x28 = vars + 2 * x23. x9..x15 and x17 are scratch of one op. Vector
  // registers v0..v15 and v24..v31 are the register cache's (values, constants
  // and the temporaries of one op); v16..v23 are scratch of the f64 sequences.
  RegAssembler& a_;

  // ---- register cache (valid within one strip segment; docs/backend_a64.md)
  // Lowerings name their registers by logical number: 0..7 are mapped per op
  // to physical registers of the cache (an operand's logical register is the
  // register its value is cached in; others get a free register when first
  // named), 16..23 are themselves. L(r) is the physical register of logical r.
  static constexpr int kLogical = 8;
  asmjit::a64::VecV L(int r);
  int phys(int r);                      // physical register of logical r (allocated when unmapped)
  int alloc_reg();                      // a free cache register (LRU victim spilled), locked for the op
  void free_reg(int p);
  void spill(int p);                    // store its value if the frame lacks it, forget it
  void reset_cache();
  void begin_op(ir::ValueId v);
  void close_op();                      // unlocks, frees temporaries
  void spill_live_for_call(ir::ValueId at);  // helper calls clobber every vector register
  void ensure_in_frame(ir::ValueId v);
  void map_logical(int r, int p);
  void rebind(int r, int from);         // logical r names logical from's register, from is unmapped       // logical r -> physical p (p locked; previous temporary freed)
  int on_write(uint32_t p);             // before a write to physical p: the register to write instead
  bool dies_here(ir::ValueId a) const;
  // v's slot holds its strip: stored there, or defined outside this segment
  // (such values are always read from their slots).
  bool framed(ir::ValueId v) const { return vals_[v].in_frame || plan_.segment_of[v] != cur_segment_; }  // last read of a in its segment is the current op
  int aliases(int p) const;             // logical registers mapped to physical p
  enum class Owner : uint8_t { Free, Temp, Value, Const };
  struct RegState {
    Owner owner = Owner::Free;
    ir::ValueId v = ir::kNoValue;
    uint64_t key = 0;                   // Const: kind << 62 | bits
    uint32_t stamp = 0;
    bool locked = false;
  };
  struct ValState {
    int8_t reg = -1;
    bool in_frame = false;
    bool clobbered = false;             // its register was overwritten in place by its last reader
  };
  RegState regs_[32];
  std::vector<ValState> vals_;
  std::map<uint64_t, int> const_reg_;   // constant key -> register
  int map_[kLogical];
  uint32_t clock_ = 0;
  bool in_op_ = false;
  bool no_clobber_ = false;             // the current op may read an operand again after writing its register
  ir::ValueId cur_ = ir::kNoValue;
  int32_t cur_segment_ = -1;
  void vconst_key(int r, uint64_t key); // logical r = the cached constant (loaded when absent)

  // ---- frame
  uint32_t slot(ir::ValueId v);
  uint32_t stage_slot(ir::ValueId phi);
  bool wide(ir::ValueId v) const { return ir::lane_bytes(f_.insts[v].type) == 8; }
  // [base + off] for an access of `size` bytes: the scaled immediate form
  // when it fits, else through x9 (or `tmp`).
  asmjit::a64::Mem at(const asmjit::a64::Gp& base, uint64_t off, unsigned size, int tmp = 9);
  void mov_imm(const asmjit::a64::Gp& r, uint64_t bits);

  // A strip's lanes of value v: q register r <- slot (half h of a 64-bit value).
  void vload(int r, ir::ValueId v, int half = 0);
  void vstore(ir::ValueId v, int r, int half = 0);
  void vconst(int r, uint32_t bits);   // all four 32-bit lanes = bits (constant pool)
  void vconst64(int r, uint64_t bits); // both 64-bit lanes = bits
  void viota(int r);                   // lanes 0, 1, 2, 3
  // Constant pool islands (literal loads reach +-1 MiB).
  static constexpr size_t kIslandSpacing = 256 * 1024;
  void flush_pool(bool branch_over);
  void maybe_flush_pool();
  void mask_to_width(int r, ir::Type t);  // zero bits above the type's width (v7 scratch)
  void sext_to32(int d, int s, ir::Type t);
  void bool_from_mask(int r);             // all-ones / zero lanes -> 1 / 0
  void canonicalize_nan(int r, uint32_t nan_bits);  // NaN lanes of r -> nan_bits (v5, v6 scratch)
  void flush_subnormal(int r);  // subnormal f32 lanes of r -> zero of the same sign (v5, v6 scratch)
  void saturate(int r);         // f32 lanes clamped to [+0, 1], NaN -> +0 (v5 scratch)

  // ---- structure
  void emit_prologue();
  void emit_epilogue();
  void emit_block(ir::BlockId b);
  void emit_strip_segment(const Segment& s);
  void set_strip_bases();
  void end_op(ir::ValueId v);
  void emit_warp_op(ir::ValueId v);
  bool emit_vote(ir::ValueId v);  // ballot / any / all over the whole warp
  bool vote_feeds_branch_only(ir::ValueId v) const;  // any/all read only by the cond_br right after it
  // dst = bit i set when bit 0 of lane i of the 4-byte slot at `off` is set
  // (v0, v5, v6, w10 scratch).
  void lane_bits(const asmjit::a64::GpW& dst, uint32_t off);
  // Window fast path of load / store (memory_fast.cpp); falls through to the
  // helper call when it cannot do the access, jumps to `done` when it did.
  bool emit_memory_fast(ir::ValueId v, const asmjit::Label& done);
  void add_off(const asmjit::a64::Gp& dst, const asmjit::a64::Gp& base, uint64_t off);  // dst = base + off
  void emit_terminator(ir::BlockId b);
  void emit_edge(ir::BlockId from, size_t succ_index);
  static constexpr uint32_t kZeroSource = ~0u;
  static constexpr uint32_t kLaunchMaskBytes = ir::kWarpLanes * 12;
  void copy_warp(uint32_t dst_off, uint32_t src_off, unsigned bytes, bool launched_only);
  // lane < 0: the first launched lane
  void emit_fault_return(ir::FaultKind kind, uint64_t code, uint64_t addr = 0, uint32_t space = 0, int lane = 0);
  void call_abs(const void* fn);

  // ---- per-op lowering (lower.cpp)
  void lower_strip_op(ir::ValueId v);
  void lower_helper(ir::ValueId v);  // eval_lane per lane of the strip
  bool lower_native(ir::ValueId v);  // dispatch through kOpLowering (lowering.h)
  bool lower_state(ir::ValueId v);   // const, undef, vars, uniforms, lane id, entry mask, select, fneg/fabs
  bool lower_int(ir::ValueId v);     // integer ops in 32-bit lanes
  bool lower_float(ir::ValueId v);   // f32 arithmetic, compares, conversions
  bool lower_wide(ir::ValueId v);    // 64-bit moves (state, select, bitcast), zext / sext to 64 bits
  bool lower_int64(ir::ValueId v);
  void lower_pica_ex2(int d, int x);  // PICA200 ex2 / lg2 in f64 (ir/transc_pica.h), v16..v23 scratch
  void lower_pica_lg2(int d, int x);   // integer ops on 64-bit lanes (arithmetic, logic, shifts, compares, trunc)

  const ir::Function& f_;
  Plan plan_;
  std::vector<int64_t> slot_, stage_slot_;
  uint32_t frame_bytes_ = 0;
  bool has_phis_ = false;
  std::vector<ir::ValueId> partial_slots_;  // results written only for some lanes (loads, atomics)
  std::map<ir::ValueId, const rt::EvalOp*> eval_op_of_;
  std::vector<uint32_t> uses_;               // per value: operand uses by any instruction (phis included)
  ir::ValueId vote_in_w12_ = ir::kNoValue;   // an any/all whose 0/1 result is in w12 for the terminator

  std::map<uint32_t, asmjit::Label> const32_;
  std::map<uint64_t, asmjit::Label> const64_;
  asmjit::Label iota_, epilogue_;
  bool iota_used_ = false;
  size_t island_offset_ = 0;
  std::vector<asmjit::Label> block_label_;
};

}  // namespace gpurc::a64
