// The x86-64 emitter shared by both tiers: frame layout, strip loops, the
// vector register cache, control flow, helper calls. Instruction selection
// for individual ops lives in lower_*.cpp (member functions of this class).
#pragma once
#include <xbyak/xbyak.h>

#include <array>
#include <cstring>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "backend_common/exec_memory.h"
#include "backend_common/helpers.h"
#include "backend_common/plan.h"
#include "backend_x64/encoder.h"
#include "backend_x64/jit.h"
#include "ir/ir.h"

namespace gpurc::x64 {

// The backend-neutral parts (backend_common/) this emitter is built on; the
// helper descriptors keep their short rt:: name inside the x64 tier.
namespace rt = backend::rt;
using backend::is_strip_op;
using backend::itof_narrow_source;
using backend::make_plan;
using backend::Plan;
using backend::Segment;
using backend::StripLoop;

struct CompileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The constants the code reads rip-relative, kept ahead of the code: jit.cpp
// reserves bytes below the code buffer, and each constant is written there
// (growing down from the code) the first time the emitter asks for it. Its
// address is known from then on, so a reference is encoded complete, with
// no label for the assembler to track and resolve at the end, and the pool
// and the code are installed as one block (the pool first, the entry after it).
class ConstPool {
 public:
  struct Full {};  // the reserved bytes ran out: jit.cpp compiles again with more
  void reset(uint8_t* low, uint8_t* top);
  // The constant of `bytes` bytes holding `elem`-byte copies of `bits`
  // (`kind` keeps a scalar and a vector of the same bits apart), aligned to
  // min(bytes, 64).
  const uint8_t* get(uint8_t kind, uint64_t bits, unsigned bytes, unsigned elem) {
    ++gets_;
    const size_t mask = table_.size() - 1;
    size_t i = size_t((bits ^ (uint64_t(kind) << 61)) * 0x9E3779B97F4A7C15ull >> 32) & mask;
    for (; table_[i].addr; i = (i + 1) & mask)
      if (table_[i].bits == bits && table_[i].kind == kind) return table_[i].addr;
    return insert(i, kind, bits, bytes, elem);  // (a miss: out of line)
  }
  uint8_t* alloc(unsigned bytes);  // fresh bytes, aligned as get()
  const uint8_t* lowest() const { return top_; }
  // The kind and bits of the constant at `addr` (a get() result); false
  // for any other address. A scan of the table: for rare uses.
  bool find(const uint8_t* addr, uint8_t& kind, uint64_t& bits) const;
  size_t gets() const { return gets_; }  // get() calls so far

 private:
  struct Entry {
    uint64_t bits;
    const uint8_t* addr;  // nullptr: free
    uint8_t kind;
  };
  void grow();
  const uint8_t* insert(size_t i, uint8_t kind, uint64_t bits, unsigned bytes, unsigned elem);  // at free slot i
  uint8_t *low_ = nullptr, *top_ = nullptr;
  std::vector<Entry> table_;  // open addressing, a power of two long
  size_t used_ = 0, gets_ = 0;
};

// A measuring switch of the code generator: on unless the environment
// variable is "0" (GPURC_VAR_HOMES, GPURC_LOAD_HOMES, ...; each caller reads
// it once into a static).
bool env_switch_on(const char* name);

class Emitter : public FastEncoder {
 public:
  // `buffer` (max_code bytes, 64-byte aligned): where the code is assembled,
  // so a compile does not map and unmap a fresh buffer (jit.cpp keeps one per
  // thread); the constant pool (ConstPool) grows down from it to `pool_low`.
  // `plan`: make_plan(f) when the caller has it already (loops.cpp's trial emitter).
  Emitter(const ir::Function& f, Tier tier, size_t max_code, uint8_t* buffer, uint8_t* pool_low,
          const Plan* plan = nullptr);
  // A trial emitter of `parent`'s function (loops.cpp: a loop emitted into a
  // discarded buffer to see which registers it uses). It starts in the state
  // the parent's constructor left, but takes the function-level analyses
  // from the parent instead of making them again (seventeenth session): the
  // plan by reference, the constructor's results (setup_slot_) and the
  // per-value answers made on first use (adopt_lazy_analyses) as copies.
  Emitter(const Emitter& parent, size_t max_code, uint8_t* buffer, uint8_t* pool_low);
  const uint8_t* pool_lowest() const { return pool_.lowest(); }
  void emit_function();
  uint32_t frame_bytes() const { return frame_bytes_; }
  // Byte offset of the warp loop's entry from the code start
  // (ir::Executable::run_warps), or kNoWarpLoop (a function with barriers).
  static constexpr size_t kNoWarpLoop = ~size_t(0);
  size_t warp_loop_entry() const { return warp_loop_entry_; }
  // A vertex shader's per-warp entry for the shared draw-loop stub
  // (ir::Executable::run_draw_loop, draw_loop.cpp): warp_start_, as a byte
  // offset from the code start (valid after ready()), or kNoWarpLoop.
  size_t draw_loop_entry() const {
    return draw_loop_ ? size_t(warp_start_.getAddress() - getCode()) : kNoWarpLoop;
  }
  // The stub of this function's tier and MXCSR mode, emitted on the first
  // call of the getter (InstalledCode::draw_stub), null if it failed.
  using DrawStubGetter = const uint8_t* (*)();
  DrawStubGetter draw_stub_getter() const;
  static std::unique_ptr<backend::ExecMemory> build_draw_stub(Tier tier, bool daz);
  // Descriptors referenced by the code; the compiled function keeps them alive.
  std::vector<std::unique_ptr<rt::EvalOp>> eval_ops;
  std::vector<std::unique_ptr<rt::WarpOp>> warp_ops;

 private:
  friend struct Lowerings;  // lowering.h: the per-op dispatch table names the lower_* members

  // ---- registers of the generated code
  // rbx = WarpContext*, r12 = frame, r13 = vars, r14 = byte offset of the
  // strip's first lane in a 4-byte-per-lane array, r15 = uniforms.
  // Vector registers 0..3 are scratch; 4 and 5 hold Avx2 lane masks (Avx512 uses k2, k3).
  static constexpr int kFirstCacheReg = 6;
  static constexpr size_t kUnrollMaxOps = 6;  // strip segments up to this long are not looped
  // In a function with memory ops (no strip limit: every strip runs), strip
  // segments up to this long are not looped either (sixteenth session): the
  // loop's add / cmp / branch per strip and the index reset cost 7 (Avx512)
  // to 13 (Avx2) instructions per segment and warp, as much as a Tesla
  // MAD's NaN tests; the copies cost code size only.
  static constexpr size_t kUnrollMaxOpsMemory = 48;
  bool has_memory_ops_ = false;
  static constexpr int kM0 = 0, kM1 = 1;  // mask ids for the f* helpers below
  const Xbyak::Xmm& V(int idx) const {  // zmm (Avx512) or ymm (Avx2)
    vtouched_ |= 1u << idx;
    return vregs_[idx];
  }
  // The vector registers V() handed out (a trial emission's record: loops.cpp,
  // loop_scratch_homes_free).
  mutable uint32_t vtouched_ = 0;

  // ---- frame
  uint32_t slot(ir::ValueId v);
  // Per value: the var a load_var reads when its home is that var instead
  // of a frame slot, else -1 (find_var_homes). Such a value is never stored
  // by a spill (the var already holds it: the function writes the var
  // nowhere) and is reloaded from the var; strip_mem(v) is the var.
  std::vector<int32_t> var_home_;
  void find_var_homes();
  static bool var_homes_enabled();
  // Load homes (seventeenth session, memory_fast.cpp, find_load_homes): a
  // 4-byte load whose every reader is a strip op of its block after it that
  // takes operands through use() / strip_mem, with no op between the load
  // and its last reader that can write memory, has a pointer cell in the
  // frame: the host address of lane 0's element when the access took the
  // all-lanes contiguous path (no moves to the slot), else the slot's own
  // address. strip_ref / strip_mem read the cell into the value's GPR
  // (kLoadHomeGprs, distinct per block) and address [gpr + lane offset].
  // Per value: the GPR's index in kLoadHomeGprs, else -1; the cell's offset.
  std::vector<int8_t> load_home_gpr_;
  std::vector<int32_t> load_home_cell_;
  static constexpr int kLoadHomeGprs[6] = {8, 9, 10, 11, 6, 7};  // r8..r11, rsi, rdi: no strip lowering uses them
  void find_load_homes();
  bool has_memory_ops_hint() const;  // a 4-byte load anywhere (find_load_homes's early out)
  static bool load_homes_enabled();
  bool load_home_int_reader(const ir::Inst& u) const;    // an integer strip op reading operands through use()
  std::vector<ir::BlockId> load_home_only_preds() const;  // per block its one predecessor, or kNoBlock
  bool load_home_later_block(ir::BlockId l, ir::BlockId r, const std::vector<ir::BlockId>& only_pred) const;
  bool load_homed(ir::ValueId v) const { return v < load_home_gpr_.size() && load_home_gpr_[v] >= 0; }
  MemRef load_home_ref(ir::ValueId v);  // emits the cell's load into the value's GPR
  // While a homed load's access is emitted: its slot, cell and the label
  // after the cell's default (the slot's address); load_home_take(host,
  // bytes, slot) stores `host` to the cell and jumps there when the access
  // is the homed load's with every lane taking part.
  int32_t load_home_active_cell_ = -1;
  uint32_t load_home_active_slot_ = 0;
  Xbyak::Label* load_home_done_ = nullptr;
  bool load_home_take(const Xbyak::Reg64& host, unsigned bytes, uint32_t data_slot);
  // The homed values whose GPR the current strip segment loaded once, before
  // its strips (kNoValue: none; reloaded after every helper call, call_abs).
  ir::ValueId load_home_hoisted_[std::size(kLoadHomeGprs)] = {};
  void load_home_hoist(const Segment& s);
  void load_home_reload();
  // Store homes (eighteenth session, memory_fast.cpp, find_store_homes): a
  // 4-byte indexed store whose value is computed by the strip segment right
  // before it, read by nothing else. Before that segment's strips a probe
  // (the store's own fast path up to its moves, emit_indexed_fast with
  // store_probe_ set) finds whether every lane takes part in one contiguous
  // span inside a window that no homed load the segment reads overlaps
  // (strip k's store must not change what strip k + 1 reads): then the
  // value's cell (load_home_cell_, GPR load_home_gpr_, as a load home's)
  // gets lane 0's host address and each strip writes its lanes straight to
  // guest memory; else the cell gets the value's slot address, the strips
  // write the slot and the store runs at its place as before. The store
  // tests the cell first and does nothing after a taken probe.
  struct StoreHome {
    ir::ValueId store = ir::kNoValue, data = ir::kNoValue;
    std::vector<ir::ValueId> loads;  // homed loads the segment reads (the overlap test)
  };
  std::map<uint32_t, StoreHome> store_home_of_segment_;  // the value's segment -> its store
  std::vector<uint8_t> store_homed_;                     // per store: it has a store home
  static bool store_homes_enabled();
  void find_store_homes();
  void store_home_probe(const Segment& s, bool uniforms_tested);
  void store_probe_take(const Xbyak::Reg64& host);  // the probe found the span at host: overlap tests, the cell
  void store_home_copy(ir::ValueId v);  // lower_helper: a store home's value from its slot to the cell
  const StoreHome* store_probe_ = nullptr;          // set while the probe is emitted
  bool store_probe_direct_ = false;  // the probe's call-span path: overlap decided per call (call_span_ok)
  // An access's call-span path (emit_indexed_fast): every lane takes part, so
  // emit_span_moves neither reads nor needs ecx (no lane test on AVX-512).
  bool span_all_lanes_ = false;
  Xbyak::Label *store_probe_ok_ = nullptr, *store_probe_fail_ = nullptr;
  uint32_t stage_slot(ir::ValueId phi);
  Xbyak::Address strip_mem(ir::ValueId v, int half = 0);
  Xbyak::Address var_mem(uint32_t var, int half = 0);
  // The same operands as parts (MemRef), for the register cache's loads and
  // stores (vload / vstore below): strip_ref(v).address() is strip_mem(v).
  MemRef strip_ref(ir::ValueId v, int half = 0);
  MemRef var_ref(uint32_t var, int half = 0);
  bool wide(ir::ValueId v) const { return ir::lane_bytes(f_.insts[v].type) == 8; }

  // ---- register cache (valid within one strip segment)
  int use(ir::ValueId v);        // register holding v (loaded if needed), locked until end_op
  int def(ir::ValueId v);        // fresh register for v's result, locked until end_op
  int alloc_reg();
  void spill(int reg);
  void end_op(ir::ValueId v);
  void reset_cache();
  void spill_live_for_call(ir::ValueId at);  // helper calls clobber every vector register

  // ---- structure
  // stub: the draw-loop stub's frame (fifteenth session): no r12 =
  // ctx.frame (the stub sets it before each warp itself), and in the
  // non-DAZ mode MXCSR loaded from the constant pool, not stored to the
  // stack first (no code of the stub's reads [rsp + 16] as an MXCSR word).
  void emit_entry_frame(bool stub = false);
  void emit_exit_frame();
  void emit_prologue();
  static const std::array<bool, ir::kNumOpcodes>& cross_lane_ops();
  void emit_block(ir::BlockId b);
  void emit_strip_segment(const Segment& s);
  void emit_warp_op(ir::ValueId v);
  bool emit_vote(ir::ValueId v);                            // native ballot / any / all
  void emit_cluster_vote(ir::ValueId v);                    // their per-lane results for clusters < 32 lanes
  bool vote_feeds_branch_only(ir::ValueId v) const;          // any/all read only by the cond_br right after it
  bool emit_memory_fast(ir::ValueId v, Xbyak::Label& done);  // window fast path of load / store
  bool lower_uniform_indexed(ir::ValueId v);                 // load_uniform_idx (uniform_indexed.cpp)
  // The offset value whose check edx holds for the next load_uniform_idx
  // (kNoValue: none); uniform_index_note(v) before lowering v drops it
  // unless v leaves edx alone (uniform_indexed.cpp).
  ir::ValueId uidx_cached_ = ir::kNoValue;
  struct UidxLabels {  // cold_label()s: the list keeps their addresses
    Xbyak::Label &done, &gather, &zero, &null_block;
  };
  void uniform_index_check(int a, int d, uint32_t last, int disp, const UidxLabels& lb, bool jump_done);
  void uniform_index_slow(int a, int d, uint32_t last, int disp, const UidxLabels& lb);
  void uniform_index_note(ir::ValueId v);
  bool uniform_index_keeps(ir::ValueId v) const;  // v's lowering leaves edx (and rdx) alone
  // A checked window (thirteenth session): when uidx_window_of_ ==
  // uidx_cached_ (a lane-equal offset), one check covered the loads of that
  // offset at byte displacements uidx_window_lo_ .. +12 (step 4), and rdx is
  // either the offset (all of them in the block) or, after the out-of-line
  // fill, a pointer difference to the frame's copy of the four words
  // (kUidxWindowOffset): each such load is one broadcast from [r15 + rdx + disp].
  ir::ValueId uidx_window_of_ = ir::kNoValue;
  uint32_t uidx_window_lo_ = 0, uidx_window_hi_ = 0;
  // Per load_uniform_idx of a lane-equal offset: the window its check
  // covers (lo <= hi), or lo > hi (none); made once per function, when the
  // first such load is lowered (uniform_index_windows).
  std::vector<std::pair<uint32_t, uint32_t>> uidx_windows_;
  void uniform_index_windows();
  void uniform_index_fill(uint32_t lo, uint32_t hi);
  // A range-checked relative read folded into its load (sixteenth session,
  // plan_uniform_index_folds): select(x <u C, load_uniform_idx(x << s, d), K)
  // with x = y & M (so x << s cannot wrap) is the load of the offset, whose
  // check also sends offsets >= C << s out of line, where the window is filled
  // with K. The select is lowered as the load (lower_uniform_index_fold); the
  // load and the compare are deferred (no code). Per select: its load, else
  // kNoValue.
  struct UidxFold {
    ir::ValueId load = ir::kNoValue, cond = ir::kNoValue;
    uint32_t k = 0;          // the false operand's bits
    uint32_t k_bound = 0;    // offsets above this give K (x >= C)
    bool release_offset = false;             // the last fold reading the offset: its register is freed
    // The offset computed in edx from `root` ((root + add) & mask) << shift,
    // when the offset, x and root + add are read by nothing else (deferred:
    // no vector code; root is read after the last fold, so it stays live).
    ir::ValueId root = ir::kNoValue;
    uint32_t add = 0, mask = 0, shift = 0;
  };
  ir::ValueId uidx_fold_offset_source(ir::ValueId v) const;  // what a fold reads: the offset, or the root
  std::vector<UidxFold> uidx_fold_;
  // The open window's fold: its compare (kNoValue: a plain load's window) and K.
  ir::ValueId uidx_window_fold_ = ir::kNoValue;
  uint32_t uidx_window_k_ = 0;
  void plan_uniform_index_folds();
  bool uidx_fold(ir::ValueId v) const { return v < uidx_fold_.size() && uidx_fold_[v].load != ir::kNoValue; }
  bool lower_uniform_index_fold(ir::ValueId v);
  void uniform_index_fill_const(uint32_t lo, uint32_t hi, uint32_t k);
  // Per value: holds the same bits in all 32 lanes, unlaunched ones
  // included (lane_equal_values, uniform_indexed.cpp): built only from
  // constants, load_uniform and lane-wise ops of such values, through phis
  // whose edge copies keep every lane (the unlaunched-lanes contract). A
  // load_uniform_idx of such an offset needs no all-lanes-equal test. Made
  // only for a function with a load_uniform_idx or a strip-outer loop, the
  // only readers (else empty).
  std::vector<uint8_t> lane_equal_;
  void lane_equal_values();
  // Whether the entry block tests the uniform pointer for null (an in-range
  // load_uniform, which faults without a block, in block 0 of a function
  // without barriers, so every run passes it first): the null tests of
  // every other block are then left out (r15 is constant for the run).
  bool uniforms_tested_at_entry_ = false;
  // A deferred load_uniform of the entry block that only pure strip ops
  // precede: its null test is made at the top of block 0 (kNoValue: none).
  ir::ValueId entry_uniform_test_ = ir::kNoValue;
  ir::BlockId cur_block_ = 0;
  bool below_2_31(ir::ValueId v, int depth = 0) const;  // unsigned lanes < 2^31 (lower_int.cpp)
  ir::ValueId select_mask_of_ = ir::kNoValue;  // whose select mask k1 / vector 0 holds (select_bits)
  // AVX-512: k5..k7 keep the masks of the last compares whose 0/1 lanes were
  // made (kmask_of_[i]: whose mask k5 + i holds; nothing else writes k5..k7),
  // so a select or a loop branch of such a compare reads its mask instead
  // of testing the 0/1 lanes again (vptestmd: a few cycles on the compare's
  // chain). Valid within one run of straight code of one strip: cleared
  // where the register cache is reset (blocks, segments, strips, loop tops)
  // and around every op that is not a 32-bit integer op (helper calls
  // clobber k registers; a memory op's fallback runs its deferred ops on
  // one path only).
  ir::ValueId kmask_of_[3] = {ir::kNoValue, ir::kNoValue, ir::kNoValue};
  int kmask_next_ = 0;
  void kmask_clear() { kmask_of_[0] = kmask_of_[1] = kmask_of_[2] = ir::kNoValue; }
  int kmask_find(ir::ValueId v) const {  // the k register holding v's mask, or -1
    for (int i = 0; i < 3; ++i)
      if (v != ir::kNoValue && kmask_of_[i] == v) return 5 + i;
    return -1;
  }
  int kmask_take(ir::ValueId v) {  // the k register v's mask goes to (the least recently taken)
    const int i = kmask_next_;
    kmask_next_ = (kmask_next_ + 1) % 3;
    kmask_of_[i] = v;
    return 5 + i;
  }
  bool narrow_uniform_in_slot(ir::ValueId v) const;  // a prefilled narrow load_uniform's strip: no load
  bool kmask_keeps(ir::ValueId v) const;  // lower_strip_op: v's lowering leaves k5..k7 as they are
  bool uniforms_known_nonnull() const { return uniforms_tested_at_entry_ && cur_block_ != 0; }
  bool hoistable_uniform(ir::ValueId v) const;  // loops.cpp: a load_uniform pinned like a loop invariant
  // r = bit 0 of each lane of a 4-byte slot; likely_all: Avx2 first tests
  // whether every lane has it (r = all ones then, in 7 instructions)
  void lane_bits(const Xbyak::Reg32& r, uint32_t slot_off, bool likely_all = false);
  // The memory windows of a space: offsets in WarpContext of windows[space]
  // and of extra_windows[space][0]. Both fast paths walk them with r11.
  struct WindowOffsets {
    size_t primary, extra;
  };
  static WindowOffsets window_offsets(uint8_t mem_attr);
  // r11 -> the next window (windows[space], then extra_windows[space][0..])
  // and a jump to try_window; falls through when none is left.
  void emit_next_window(const WindowOffsets& w, Xbyak::Label& try_window);
  // ---- indexed memory fast path (memory_fast.cpp): loads / stores whose
  // i64 address is `base + ((zext|sext i32 x) << s + constant)` with a base computed from
  // uniforms and constants. The address is checked and formed from x in
  // dword lanes; the 64-bit address chain is computed only when the op falls
  // back to the general path ("deferred" values).
  struct IndexedAddress {
    ir::ValueId base = ir::kNoValue;   // i64 tree of const / load_uniform / and / or / xor / iadd / isub
    ir::ValueId index = ir::kNoValue;  // the i32 x
    bool sext = false;
    uint8_t shift = 0;                 // 0..3: the gather scale
    uint64_t disp = 0;                 // constant added inside the scaled part, moved to the base
    bool reads_uniforms = false;       // the base tree has a load_uniform
    // A narrow address (match_narrow) instead: `zext x` or `or (zext x), C`
    // (C's low 32 bits zero, in disp), optionally under Tesla's alignment
    // guard `select (icmp.ne (and x, align_mask), 0), K, .`; base unused.
    bool narrow = false;
    uint32_t align_mask = 0;
    // index_var >= 0: the index is `load_var` of this i32 var, which no
    // store_var writes: the fast paths read it from ctx.vars (no frame slot).
    int index_var = -1;
    // The consecutive-index check shared by the accesses of one block with
    // the same index, mask and element step (plan_sequence_cache): the first
    // (owner) stores its outcome at this frame offset (qword b, dword lanes:
    // 0 = not consecutive), the later ones read it instead of checking again.
    int32_t seq_cache = -1;
    bool seq_owner = false;
    // Narrow accesses of the same address value and size (Tesla's load and
    // store of y[i]) that share a check: the first (host_owner) also stores
    // lane 0's host pointer once a window holds the span (qword at
    // host_cache, 0 = none), the later ones (host_reuse) move straight from it.
    bool host_owner = false, host_reuse = false;
    // The taking-part lanes of a mask value (plan_mask_cache): the first
    // access of that mask (owner) stores them (lane bits AND entry_mask) at
    // this frame offset on every run, before its `no lane` exit; a later
    // access or vote it dominates reads them instead of converting the mask.
    int32_t mask_cache = -1;
    bool mask_owner = false;
    // A narrow index x = iadd (load_uniform u), s (Tesla's `s[0x10] + 4i`):
    // the consecutive check runs on s (seq_index; shared by every access of
    // that s, whatever its u) and u (a uniform dword at addend_off) is added
    // after it. kNoValue: the check runs on x itself.
    ir::ValueId seq_index = ir::kNoValue;
    uint32_t addend_off = 0;
    // The host pointer cache of the same address value and size (host_owner
    // / host_reuse above): its own frame qword, owned by the first access of
    // that address, which need not own the consecutive check.
    int32_t host_cache = -1;
    // The window of the last warp of this call whose consecutive span this
    // access found in one (plan_window_cache): 24 bytes the prologue clears
    // once per call (window_caches_). Indexed path: host + d, Hi, Lo (index
    // units); narrow path: the lowest and highest element address a window
    // holds and host - window base. The windows and the uniforms (so the
    // base) are the same for every warp of a call, so a later warp whose
    // span lies inside those bounds skips the base and the window search.
    int32_t win_cache = -1;
    // An indexed access whose index is the var index_var (a consecutive
    // path): a frame dword the prologue sets once per call (plan_lane_run_flags)
    // when the warp loop writes that var as base + lane in every warp of the
    // call (lane_add 0..31, no lane_keep): then x_l = x_0 + l (mod 2^32) and
    // the consecutive check is one scalar test of x_0. -1: none.
    int32_t run_flag = -1;
    // A narrow access whose checked value (seq_index, else index) is, by an
    // IR walk (plan_narrow_lane_proof), lane 0's plus lane * bytes when the
    // warp loop writes the vars narrow_iota as base + lane and narrow_same
    // alike in every lane: run_flag is then that per-call proof (set by the
    // prologue from the descriptor), and `(x_0 & m) <= m - 31` for each
    // (var, m) of narrow_wraps is tested per warp (an `and x, m` of a
    // base + lane var does not wrap inside the warp).
    std::vector<int> narrow_iota, narrow_same;
    std::vector<std::pair<int, uint32_t>> narrow_wraps;
    std::vector<ir::ValueId> tree;     // every value of the address expression (address first)
    std::vector<ir::ValueId> deferred; // those computed only on fallback, operands before users
  };
  void plan_sequence_cache();          // IndexedAddress::seq_cache of the accesses that share a check
  void plan_mask_cache();              // IndexedAddress::mask_cache, vote_mask_cache_
  void plan_window_cache();            // IndexedAddress::win_cache, window_caches_
  void plan_lane_run_flags();          // IndexedAddress::run_flag, lane_run_flags_
  // A call span (nineteenth step of issue 13, call_span_ok): an indexed
  // access with a run flag, a window cache and the entry mask as its mask
  // keeps at [win_cache + 32] the host + d of a window holding every warp's
  // span of the call, set (once per call) only when all 32 lanes are
  // launched (ctx.entry_mask does not change within a call) and, for a
  // store home's probe, when no homed load of its segment overlaps it for
  // the whole call. Then each warp moves from host + d + x_0 * scale with no
  // lane, window or sequence test.
  bool call_span_ok(ir::ValueId v, const IndexedAddress& a) const;
  static bool call_spans_enabled();  // false with GPURC_CALL_SPANS=0
  const IndexedAddress* probe_load_on_span(ir::ValueId l) const;  // store_probe_'s load tested once per call
  static constexpr int kCallSpanOffset = 32;  // in the 64-byte window cache
  void emit_lane_run_flags();          // in the prologue's once-per-call part
  // A lane-0 var (eighteenth session, plan_lane0_var): an index var whose
  // every load_var is deferred and read only by indexed accesses with a run
  // flag (which read lane 0 only when the flag is set). When the call's
  // descriptor writes it as base + lane (the flag), the warp loop writes
  // lane 0 alone for the call's later warps; every path of those accesses
  // that reads more lanes (the full check, the scattered paths, the
  // fallback) first writes lanes 0..31 as lane 0 + l (lane0_restore).
  int lane0_var_ = -1;
  int32_t lane0_flag_ = -1;     // the var's run flag (frame offset)
  void plan_lane0_var();
  static bool lane0_vars_enabled();  // false with GPURC_LANE0_VARS=0 (every lane written per warp, as before)
  bool lane0_loop() const { return (lane0_var_ >= 0 || !index_lane0_vars_.empty()) && warp_loop_ && !draw_loop_; }
  // Nineteenth session: vars every load_var of which is an op of an index
  // segment (plan_index_segments; its lane-0 version reads the loop's bases,
  // its strips restore the lanes first): the loop writes lane 0 alone.
  std::vector<int> index_lane0_vars_;
  std::map<int, int32_t> index_lane0_record_;  // lane-0 var -> its NarrowRunFlag record (off)
  // Every lane-0 var read directly (a narrow access's no-wrap test) is read
  // from the bases under its own record: then a call whose every entry is a
  // lane-0 var takes the loop's short way (no var written).
  bool index_tight_ok_ = false;
  // The prologue's frame words of the loop's short way (kLoopBasesEndOffset..);
  // r11 = the WarpLoop. Uses rax, rcx.
  void emit_short_way_frame();
  std::vector<uint32_t> index_emitted_;  // segments whose lane-0 version is emitted (proven dword written)
  void index_var_lane0(const Xbyak::Reg32& d, int var, int32_t record, const std::vector<int>& vars);
  void lane0_restore(const IndexedAddress& a);
  const uint8_t* iota32();      // 32 dwords 0..31 in the pool (iota32_, made on the first call)
  std::vector<std::pair<int, int32_t>> lane_run_flags_;  // var, frame offset of its flag
  bool plan_narrow_lane_proof(IndexedAddress& m, unsigned bytes) const;  // narrow_iota, narrow_same, narrow_wraps
  struct NarrowRunFlag {
    int32_t off;                       // frame: the flag (dword), a scratch dword; then per var k (iota, then
                                       // same): off + 8 + 8k its entry's base's place from the next warp's bases
                                       // (bytes, negative), off + 12 + 8k its lane_add[0]
    std::vector<int> iota, same;       // vars the descriptor must write as base + lane / alike in every lane
  };
  std::vector<NarrowRunFlag> narrow_run_flags_;
  // Nineteenth session (memory_fast.cpp, plan_index_segments): a strip
  // segment whose ops are the index chain of narrow accesses with a run
  // flag (Tesla's ntid * ctaid + tid, its bound compare, `<< 2`) gets a
  // second version per warp: lane 0 of each op in a general register, from
  // the warp loop's bases (no read of a var just written by vector stores),
  // the compares decided for all 32 lanes at once from lanes 0 and 31; the
  // slots that anything else reads written as lane 0 + step * l. Any other
  // outcome (no flag, a wrap, a compare that differs across the warp, no
  // uniform block) runs the segment's strips as before.
  struct IndexSegment {
    int32_t flag = -1;                           // the NarrowRunFlag record (its off)
    std::vector<int> vars;                       // the record's iota vars, then its same vars
    size_t n_iota = 0;                           // how many of vars are iota
    std::vector<std::pair<int, uint32_t>> wraps;  // (var, m): (x_0 & m) <= m - 31
    std::vector<ir::ValueId> ops;                // evaluated on lane 0, in segment order
    std::vector<uint32_t> steps;                 // per op: v_l = v_0 + step * l (mod 2^32)
    std::vector<uint32_t> cmp_steps;             // per compare: its first operand's step
    std::vector<int8_t> regs;                    // per op: its GPR (index into kIndexGprs)
    std::vector<uint8_t> read;                   // per op: another evaluated op reads it
    int32_t proven = -1;                         // frame dword: nonzero when this warp's lane-0 version decided it
    int32_t decided_cmp = -1;                    // the one compare op (index into ops), else -1: then the
                                                 // proven dword is 1 + its outcome (2: every lane true)
    std::vector<uint8_t> lazy;                   // per op: only narrow accesses' cold paths read its lanes;
                                                 // the lane-0 version writes lane 0 alone (lazy_lanes)
  };
  // The index segment (emitted before this point) whose lane-0 version writes
  // lane 0 of `v`'s slot alone: a proven warp's reader rebuilds the lanes
  // (rebuild_lazy_lanes) before it reads more than lane 0; else null.
  const IndexSegment* lazy_lanes(ir::ValueId v, uint32_t& step) const;
  void rebuild_lazy_lanes(const IndexSegment& is, ir::ValueId v, uint32_t step);
  void rebuild_lazy_compare(ir::ValueId c);
  std::vector<ir::ValueId> narrow_fast_emitted_;  // accesses emit_narrow_fast emitted, in order
  // The index segment whose proven dword (2) says compare `c` holds in every
  // lane of this warp, when it is emitted before this point; else null.
  const IndexSegment* proven_compare(ir::ValueId c) const;
  std::map<uint32_t, IndexSegment> index_segments_;  // segment index -> its lane-0 version
  std::map<uint32_t, const uint8_t*> step_vectors_;  // step -> 32 dwords step * l in the pool
  static bool index_segments_enabled();              // false with GPURC_INDEX_LANE0=0
  static bool lazy_lanes_enabled();                  // false with GPURC_INDEX_LAZY_LANES=0
  void plan_index_segments();
  bool emit_index_segment(const Segment& s, Xbyak::Label& done);
  const uint8_t* step_vector(uint32_t step);
  void emit_lane_add_test(bool iota);  // CF: the 32 dwords at r8 are 0..31 (iota) / all equal
  void emit_var_entry_scan(uint32_t var_off, bool iota, int32_t verdict, int32_t place = -1,
                           int32_t lane_add0 = -1);  // in emit_lane_run_flags
  bool bitcast_in_place(ir::ValueId v);  // lower_int.cpp: a dying operand's register becomes the bitcast's
  ir::ValueId entry_and_source(ir::ValueId mask) const;  // A of `and A, entry_mask`, else kNoValue
  bool mask_vote(ir::ValueId v) const;                   // a vote emit_vote lowers
  ir::ValueId mask_lanes_value(ir::ValueId mask) const;  // A for a deferred `and A, entry_mask`, else mask
  std::map<ir::ValueId, ir::ValueId> mask_source_;       // deferred masks `and A, entry_mask` -> A
  void clear_window_caches();          // in the prologue's once-per-call part
  std::vector<std::pair<int32_t, bool>> window_caches_;  // frame offset, narrow: the window caches (cleared per call)
  void taking_part_lanes(const IndexedAddress& a, ir::ValueId mask);  // ecx (flags: ZF = none), owner stores it
  std::map<ir::ValueId, int32_t> vote_mask_cache_;  // a vote whose mask lanes a dominating access stored
  // A vote on `not A` that is the not's only reader: the vote reads A's lanes
  // inverted and the not is never computed (plan_vote_nots).
  std::map<ir::ValueId, ir::ValueId> vote_not_source_;
  void plan_vote_nots();
  void no_lane_exit(const IndexedAddress& a, Xbyak::Label& done, Xbyak::Label& general);  // memory_fast.cpp
  void plan_indexed_memory();          // fills indexed_ / deferred_, forces the frame slots the paths read
  bool match_indexed(ir::ValueId addr, IndexedAddress& out) const;
  bool match_uniform_base(ir::ValueId v, int depth, IndexedAddress& out) const;
  bool match_scaled(ir::ValueId v, int depth, IndexedAddress& out) const;
  bool match_narrow(ir::ValueId addr, unsigned bytes, IndexedAddress& out) const;
  // The narrow shape's fast path: consecutive dword x (checked on x's slot,
  // no i64 address computed), aligned, the span in one window: vector moves.
  void emit_narrow_fast(ir::ValueId v, const IndexedAddress& a, Xbyak::Label& done, Xbyak::Label& general);
  void emit_base_gpr(ir::ValueId v, int depth);  // gpr `depth` of {rax, rdx, rsi, rdi} = the uniform base
  void seq_reader_on_owner_span(const IndexedAddress& a, Xbyak::Label& have);
  void emit_indexed_fast(ir::ValueId v, const IndexedAddress& a, Xbyak::Label& done, Xbyak::Label& general);
  void materialize_deferred(const std::vector<ir::ValueId>& values);  // all 32 lanes into their slots
  // ---- run-time address shapes of any load / store (memory_fast.cpp), with
  // ecx = the lanes taking part: one address for all of them (one scalar
  // access), or consecutive elements (masked vector moves instead of
  // gathers / scatters).
  // edx = the lanes l whose 4- or 8-byte slot value equals rsi + (l << step_log2)
  // (modulo 2^(8 lane_bytes)); step_log2 < 0: equals rsi. Avx2 with a step
  // (callers require all 32 lanes there): all ones when every lane matches,
  // else 0. Vector registers 1..5 are scratch.
  // The values are at `base` + slot_off (the frame, or ctx.vars for an index read from its var).
  // fail: on AVX2 with a step (every lane taking part), jump there when a
  // lane is out of sequence instead of returning the lanes in edx.
  void lanes_in_sequence(uint32_t slot_off, unsigned lane_bytes, int step_log2, const Xbyak::Reg64& base = Xbyak::util::r12,
                         Xbyak::Label* fail = nullptr);
  // A load / store whose address is uniform: one access if every taking-part
  // lane holds the same address and it lies in a window; else falls through.
  void emit_uniform_address(ir::ValueId v, Xbyak::Label& done);
  // Masked vector moves of 4- or 8-byte elements between `host` (lane 0's
  // element) and the data slot, for the lanes of ecx (Avx512; Avx2: all 32).
  void emit_contiguous_access(bool is_load, unsigned bytes, uint32_t data_slot, const Xbyak::Reg64& host);
  void emit_sequence_verdict(const IndexedAddress& a, Xbyak::Label& not_in_sequence);
  void emit_span_moves(bool is_load, unsigned bytes, uint32_t data_slot, Xbyak::Label& done);
  static int stream_prefetch_distance();
  void emit_stream_prefetch(bool is_load, unsigned bytes, const Xbyak::Reg64& host);
  void emit_span_window_search(const WindowOffsets& w, unsigned bytes, Xbyak::Label& none, Xbyak::Label& try_window,
                               Xbyak::Label& next_window);
  // A load / store of 4- or 8-byte elements whose taking-part lanes address
  // consecutive elements (lane l at b + l * bytes; Avx2: all 32 lanes): the
  // sequence test first, then one bounds test of the first and last
  // taking-part lanes' elements per window, then emit_contiguous_access.
  // Falls through with ecx kept when the lanes are not consecutive or no
  // window holds the span (the general path decides; faults stay its own).
  void emit_consecutive_access(ir::ValueId v, Xbyak::Label& done);
  std::map<ir::ValueId, IndexedAddress> indexed_;  // per load / store taking the indexed path
  std::vector<uint8_t> deferred_;                  // per value: lowered only by materialize_deferred
  void store_uniform_gpr(uint32_t slot_off, const Xbyak::Reg32& r);  // all 32 lanes of a 4-byte slot = r
  void emit_terminator(ir::BlockId b);
  void emit_edge(ir::BlockId from, size_t succ_index);
  static constexpr int kFirstLaneOffset = 8;  // [rsp+8]: 4 * first launched lane
  static constexpr int kScratchOffset = 16;   // [rsp+16]: a qword free between ops
  // Strip-outer loops (loops.cpp): iterations run by the first launched
  // lane's strip, iterations left for the current strip, which budget op
  // faulted (0: none), the first launched lane's bit within its strip.
  // (qwords: a budget of 2^40 allows more than 2^32 iterations)
  static constexpr int kLoopTripsOffset = 24, kLoopLeftOffset = 32, kLoopFaultOffset = 40, kLoopLaneBitOffset = 44;
  // [rsp+48], [rsp+52]: the MXCSR values of IEEE mode and of DAZ mode
  // (daz_: helper calls and exact compares switch between them).
  static constexpr int kMxcsrIeeeOffset = 48, kMxcsrDazOffset = 52;
  // [rsp+56]: the ir::WarpLoop* of a warp-loop call (warp_loop.cpp), 0 in a
  // single-warp run: the epilogue goes on to the next warp when it is set.
  static constexpr int kWarpLoopOffset = 56;
  // [rsp+64]: with strip_limit_, the byte offset (in a 4-byte-per-lane
  // array) past the last strip holding a launched lane; looped strip
  // segments stop there (emit_strip_segment).
  static constexpr int kStripEndOffset = 64;
  // [rsp+72]: 16 bytes, the words of a load_uniform_idx window whose check
  // failed (uniform_indexed.cpp, uniform_index_fill).
  static constexpr int kUidxWindowOffset = 72;
  // [rsp+88]: a warp-loop call's current warp; [rsp+92]: the warps left in
  // its block (grid loop with shared memory); [rsp+96]: the next warp's
  // lane var bases (warp_loop.cpp).
  static constexpr int kLoopWarpOffset = 88, kLoopBlockLeftOffset = 92, kLoopBasesOffset = 96;
  // [rsp+68]: in a warp-loop call of a function with lane-0 vars
  // (plan_lane0_var, index_lane0_vars_), bit c set: the descriptor entry of
  // countdown value c (nvars - place, 1..31) is written as lane 0 only; bit
  // 0: that var is G13's lane-0 var, the descriptor's only entry, and no
  // var range is zeroed (the loop's short way per warp, warp_loop.cpp).
  static constexpr int kLoopLane0Offset = 68;
  // [rsp+104]: in the short way's mode (bit 0 above), the end of the call's
  // lane var bases (bases + 8 nvars (end_warp - first_warp)); [rsp+112]: the
  // first entry's var offset in the vars; [rsp+116]: the bytes between two
  // warps' bases (8 nvars). Written by the first warp's prologue
  // (emit_lane_run_flags, emit_short_way_frame) with bit 0, read by the
  // loop's short way instead of the descriptor (nineteenth session: loads
  // bounded the warp).
  static constexpr int kLoopBasesEndOffset = 104, kLoopLane0VarOffset = 112, kLoopBasesStepOffset = 116;
  static constexpr int kStackBytes = 120;     // below the pushed registers; keeps rsp 16-byte aligned
  static constexpr uint32_t kZeroSource = ~0u;  // copy_warp source that stores zeros
  static constexpr uint32_t kLaunchMaskBytes = ir::kWarpLanes * 12;
  void copy_warp(uint32_t dst_off, uint32_t src_off, unsigned bytes, bool launched_only);
  // lane < 0: the first launched lane
  void emit_fault_return(ir::FaultKind kind, uint64_t code, uint64_t addr = 0, uint32_t space = 0, int lane = 0);
  void call_abs(const void* fn);

  // ---- strip-outer single-block loops (loops.cpp)
  struct LoopState;
  void emit_strip_loop(const StripLoop& l);
  // counted: for the strips after the first, which run a known number of iterations
  LoopState loop_analyze(const StripLoop& l, const std::vector<ir::ValueId>& register_uses, bool counted,
                         const std::vector<uint8_t>* only = nullptr, const std::vector<uint8_t>* skip = nullptr);
  // Uniform loop control (loops.cpp, twelfth session): the values of the
  // loop computed once per iteration for all strips (`control`) and those
  // the strips then leave out (`uniform_only`); false when the form does not apply.
  bool loop_control_sets(const StripLoop& l, std::vector<uint8_t>& uniform_only, std::vector<uint8_t>& control);
  void emit_control_loop(const StripLoop& l, const std::vector<ir::ValueId>& register_uses, bool trial_called,
                         const std::vector<uint8_t>& uniform_only, const std::vector<uint8_t>& control);
  void loop_store_all_strips(LoopState& s, bool live_out, const std::vector<uint8_t>& uniform_only);  // the control loop's phis and values read later, into every strip's slots
  void emit_counted_pairs(const StripLoop& l, const std::vector<ir::ValueId>& register_uses,
                          const std::vector<uint8_t>& skip);
  void loop_pin(LoopState& s);           // loads phis and pinned values into their registers
  void loop_canonical(LoopState& s);     // the cache state at the top of every iteration
  void loop_body(LoopState& s);
  // While loop_body lowers s's ops (thirteenth session): a back-edge operand
  // moved early into its phi's home register, not reading the phi, is
  // defined in the home itself (def -> loop_def_home): no move.
  const LoopState* def_loop_ = nullptr;
  int loop_def_home(ir::ValueId v);
  void loop_end_op(LoopState& s, ir::ValueId v);
  void loop_back_copy(LoopState& s);     // parallel copy of the back edge into the phis' homes
  bool loop_back_copy_empty(const LoopState& s) const;  // loop_back_copy(s) emits nothing
  void loop_store_phis(LoopState& s);
  void loop_store_live_out(LoopState& s);
  void loop_branch_exit(LoopState& s, Xbyak::Label& exit);  // jump there when the first launched lane leaves
  void emit_loop_exit(const StripLoop& l);  // exit edge or watchdog fault after the loop (both forms)
  void loop_find_first_strip();  // zeroes the trip and fault words; the first launched lane's bit; r14 and eax = its strip
  // The strip at r14 runs kLoopLeftOffset iterations, then its exit or the
  // watchdog fault's state, and jumps to `next` (falls_through: `next`
  // follows). fast: deferred NaN tests, a NaN lane jumps to `rerun`.
  void loop_counted_run(LoopState& so, bool fast, Xbyak::Label& rerun, Xbyak::Label& next, bool falls_through);
  void loop_counted_pair_run(LoopState& sa, LoopState& sb, Xbyak::Label& next);  // the strips at r14 and rbp side by side
  // Deferred NaN tests (loops.cpp, issue 13 twelfth session): a loop
  // accumulator's fused MAD (acc' = a * b + acc, the phi read by nothing
  // else) is emitted without its NaN test in the counted strips' first run;
  // one test of the accumulators after the last iteration finds any NaN
  // lane of any iteration (a NaN stays a NaN to the loop's end), and then
  // the strip reruns the loop from its entry values with every test.
  void loop_defer_nan_tests(LoopState& s, bool trial_called);
  void loop_test_deferred(LoopState& s, Xbyak::Label& rerun, bool at_top);  // jnz rerun: a deferred sum has a NaN lane
  Xbyak::Address loop_save_mem(ir::ValueId phi);  // a slot-homed phi's entry value, kept for the rerun
  static bool loop_defer_enabled();               // GPURC_LOOP_DEFER_NAN=0 (read once) turns it off
  void loop_mark_deferred(LoopState& s);
  // per value: a fused sum emitted without its test (now): 1, or its phi's home register + 2 (written there)
  std::vector<uint8_t> nan_deferred_;
  std::vector<int32_t> loop_save_slot_;           // per phi: frame offset of its saved entry value, -1: none
  std::vector<ir::ValueId>* use_log_ = nullptr;  // values use() put in a register (loop register choice)
  // Strip-interleaved loops (loops.cpp): two strips run each iteration one
  // after the other, each in its own registers [cache_lo_, cache_hi_) and
  // its own cache state; the second strip's lanes are addressed through rbp
  // instead of r14 (strip_alt_), and loop_switch_strip() swaps vals_ with
  // alt_vals_ between the two.
  bool loop_interleavable(const StripLoop& l, const std::vector<ir::ValueId>& register_uses, bool trial_called,
                          const std::vector<uint8_t>* skip = nullptr);
  void emit_interleaved_loop(const StripLoop& l, const std::vector<ir::ValueId>& register_uses,
                             const std::vector<uint8_t>* uniform_only = nullptr);
  void loop_switch_strip();
  void loop_reset_range();               // reset_cache over [cache_lo_, cache_hi_) only
  Xbyak::Address launch_mask_mem();      // the current strip's 4-byte launch mask
  bool strip_alt_ = false;
  // [r12|r13 + (r14|rbp) * (1|2)], made once: strip_mem / var_mem add only
  // the displacement (xbyak's RegExp from two registers is two checked
  // constructions and a merge, for every strip or var operand).
  // Index: [base r13][lane rbp (strip_alt_)][scale 2].
  Xbyak::RegExp lane_exp_[2][2][2];
  int cache_lo_ = kFirstCacheReg, cache_hi_ = 32;  // registers alloc_reg may give out (cache_hi_ <= nregs_)
  bool calls_emitted_ = false;           // call_abs ran (the trial emission of a loop body)
  // AVX2, the counted strips' fast runs (sixteenth session): phis beyond the
  // cache's homes get vector registers 3..5 when a trial of that run touched
  // none of them (loop_scratch_homes_free); loop_analyze reads it.
  bool loop_scratch_homes_ = false;
  static constexpr uint32_t kScratchHomesMask = 0x38;  // vector registers 3, 4, 5
  // loop_analyze's walk of the function for the last loop block it saw
  // (loop_outside_block_): per value, read outside that block; the block's
  // values so read, in the order first read.
  ir::BlockId loop_outside_block_ = ir::kNoBlock;
  std::vector<uint8_t> loop_outside_;
  std::vector<ir::ValueId> loop_live_out_;
  bool loop_scratch_homes_free(const StripLoop& l, const std::vector<ir::ValueId>& register_uses);

  // ---- per-op lowering
  void lower_strip_op(ir::ValueId v);
  void lower_helper(ir::ValueId v);     // eval_lane per lane of the strip
  void emit_eval_call(const rt::EvalOp* d);
  // Dispatch through kOpLowering (lowering.h); false: no native lowering for this op/type.
  bool lower_native(ir::ValueId v);
  bool lower_state(ir::ValueId v);
  bool count_only_const(ir::ValueId v);         // lower_int.cpp: a const read only as an immediate or from the pool
  bool const_operand_position(ir::ValueId u, size_t i);  // u can read operand i from the pool
  Xbyak::Address const_operand(ir::ValueId c);  // that operand
  bool mask_only_cmp(ir::ValueId v);            // an icmp read only by selects of its mask (lower_int.cpp)
  bool inverted_mask_cmp(ir::ValueId v);
  bool pool_const_cmp(ir::ValueId v);  // AVX2: x > C or x < C (as x > C - 1), C read from the pool
  int slot_operand(ir::ValueId u, bool either) const;  // AVX2: an operand read from its slot (lower_int.cpp)        // AVX2: a mask-only x < const leaves !(x > const - 1) (lower_int.cpp)
  std::vector<uint8_t> mask_only_cmp_;          // its per-value answers, computed on first use
  // AVX-512: an i1 `and` of two compares read by nothing else, with no other
  // compare or k-clobbering op between them (lower_int.cpp): the compares
  // leave their masks in k5..k7 only, the `and` is one kandw (kand_pair_:
  // 1 for such an `and`, 2 for its compares; computed on first use). AVX2:
  // pairs of pool_const_cmp compares, whose lanes stay all-ones for a vpand.
  bool kand_pair(ir::ValueId v);
  std::vector<uint8_t> kand_pair_;
  std::vector<uint8_t> count_only_const_;       // its per-value answers, computed on first use
  bool lower_int(ir::ValueId v);
  bool lower_float(ir::ValueId v);
  bool lower_wide(ir::ValueId v);
  bool lower_wide_int(ir::ValueId v);
  // 64-bit lanes (lower_int.cpp): a strip's lanes as two halves of qwords.
  void widen_half(int d, int r, int h, bool sign);  // d = half h of 32-bit register r, zero/sign-extended
  void narrow_halves(int d, int lo, int hi);       // d = low dwords of qword vectors lo, hi (hi clobbered)
  void qword_ones(int d, int shift);                // d = all-ones qwords << shift
  void mul64_avx2(int d, int a, int b);             // Avx2 64-bit multiply (scratch 2, 3)

  // ---- instruction helpers that differ per tier
  void vmov(int d, int s);
  void vload(int d, const Xbyak::Address& a);
  void vstore(const Xbyak::Address& a, int s);
  void vload(int d, const MemRef& m);   // as vload(d, m.address()), without building the address
  void vstore(const MemRef& m, int s);
  void vand(int d, int a, int b);
  void vor(int d, int a, int b);
  void vxor(int d, int a, int b);
  void vandn(int d, int a, int b);           // ~a & b
  void bcast_const(int d, uint32_t bits);    // all lanes = bits
  void bcast_gpr(int d, const Xbyak::Reg32& r);
  void bcast_uniform(int d, const ir::Inst& in);  // an in-range load_uniform (r15 known good) into every lane of d
  void mask_to_width(int d, ir::Type t);     // zero bits above the type's width
  void sext_to32(int d, int s, ir::Type t);  // sign-extend a narrow value to 32 bits
  void bool_from_cmp_avx2(int d, bool invert);  // d holds an all-ones/zero mask -> 0/1
  void bool_from_k(int d, int k);            // Avx512: k mask -> 0/1
  void select_bits(int d, int cond_bool, int if_true, int if_false, ir::ValueId cond = ir::kNoValue);
  void blend_mask(int d, int mask_reg, int if_true);  // d = lane mask (all ones) ? if_true : d
  // Float helpers (lower_float.cpp). A mask id names k2/k3 (Avx512) or
  // vector 4/5 (Avx2).
  void fnan_mask(int m, int x);                 // m = lanes where x is NaN
  void fblend(int d, int m, int src);           // d = m ? src : d
  void fblend_const(int d, int m, uint32_t bits);
  void flush_subnormal(int x);                  // subnormal -> signed zero (uses scratch 0, 1)
  void float_finish(ir::ValueId v, int d, const int* nan_args, int n);  // NaN rule, FtzOut, Sat
  // Tests d and jumps (rel32, not yet bound: the returned offset of the
  // displacement, for bind_forward) to the fix when some lane of d needs float_fix.
  size_t float_test(uint32_t fflags, int d);
  // In DAZ mode (FtzOut, to nearest, a constant NaN rule): d's fixes in line
  // with no test; false (nothing emitted) when the case is not that.
  bool daz_fix_inline(uint32_t fflags, int d);
  // Whether every reader of v is a store (store / store_var): no op waits for
  // v, so a fix in line adds no latency to a dependency chain.
  bool read_by_stores_only(ir::ValueId v);
  // Out-of-line code (lower_float.cpp): cold_ runs after the last block (emit_cold_code).
  Xbyak::Label& cold_label();
  void emit_cold_code();
  std::list<Xbyak::Label> cold_labels_;
  std::vector<std::function<void()>> cold_;
  // The out-of-line fix of one float result (float_finish, lower_daz_arith),
  // kept as a record rather than a closure with two xbyak labels: a heavy
  // shader has hundreds, and each label costs hash-table nodes in xbyak's
  // label manager. Its jumps are encoded as xbyak would encode them with
  // T_NEAR (jcc rel32 to the fix, jmp rel32 back), patched directly.
  // Fixes that do the same thing to the same registers share one stub
  // (emit_cold_code): each site is then `call stub; jmp back`.
  struct ColdFix {
    size_t jump_at;    // offset of the test's rel32 displacement
    size_t back;       // where the fix jumps back to
    uint32_t fflags;
    int8_t d, n;
    bool zero_mul;     // lower_daz_arith: recompute the product with the 0 * inf lanes zeroed
    int8_t args[3];
    // fused (lower_fused_mul_add): product of args[0], args[1] (fflags) into
    // scratch 2, then d = 2 (+|-) rc or rc (+|-) 2 (add_flags); args[2] unused.
    bool fused = false, sub = false, product_first = false;
    int8_t rc = -1;
    uint32_t add_flags = 0;
    int32_t mem = -1;  // AVX2 fused: cold_mem_[mem] is loaded into scratch 3 (an operand only in its slot)
    // AVX2 fused: the sum's other operand, only in its slot, is loaded from
    // cold_mem_[mem_c] into d at the site (rc == d then).
    int32_t mem_c = -1;
    // Two fused sums tested together (lower_fused_pair): the first fix's
    // site goes on into the second's (then_next: no jump back), which has
    // no jump of its own (chained) and jumps back for both.
    bool then_next = false, chained = false;
  };
  std::vector<MemRef> cold_mem_;  // (frame and var slots: strip_ref)
  std::vector<ColdFix> cold_fixes_;
  uint64_t cold_fix_key(const ColdFix& c) const;  // what the fix's code depends on
  static bool cold_fix_moves_operands(const ColdFix& c);  // (shared stubs) operands into scratch 2, 3
  void emit_cold_fix_body(const ColdFix& c, bool moved);
  // emit_cold_fix_body through the per-thread copies of fix code (lower_float.cpp).
  void emit_cold_fix_body_kept(const ColdFix& c, bool moved);
  // The cold code in the order it was asked for: i >= 0 is cold_[i], i < 0 cold_fixes_[~i].
  std::vector<int32_t> cold_order_;
  void push_cold(std::function<void()> fn) {
    cold_order_.push_back(int32_t(cold_.size()));
    cold_.push_back(std::move(fn));
  }
  void push_cold_fix(const ColdFix& c) {
    cold_order_.push_back(~int32_t(cold_fixes_.size()));
    cold_fixes_.push_back(c);
  }
  // Near jumps patched by hand (the encodings of jcc / jmp with T_NEAR).
  // (The bytes xbyak's db / dd would write, one room check per instruction
  // instead of one per byte.)
  uint8_t* code_room(size_t n) {
    if (maxSize_ - size_ < n) throw Xbyak::Error(Xbyak::ERR_CODE_IS_TOO_BIG);
    return top_ + size_;
  }
  void op_rel32(uint8_t op, uint32_t rel) {  // op rel32 (E8 call, E9 jmp)
    uint8_t* p = code_room(5);
    p[0] = op;
    std::memcpy(p + 1, &rel, 4);
    size_ += 5;
  }
  size_t jcc_forward(uint8_t cc) {  // 0F 80+cc rel32; returns the rel32's offset
    uint8_t* p = code_room(6);
    p[0] = 0x0F;
    p[1] = uint8_t(0x80 | cc);
    std::memset(p + 2, 0, 4);
    size_ += 6;
    return size_ - 4;
  }
  void bind_forward(size_t at) {
    const uint32_t rel = uint32_t(size_ - (at + 4));
    std::memcpy(top_ + at, &rel, 4);
  }
  void jmp_back(size_t target) {  // E9 rel32 to an earlier offset
    op_rel32(0xE9, uint32_t(int64_t(target) - int64_t(size_ + 5)));
  }
  void float_fix(uint32_t fflags, int d, const int* nan_args, int n);  // NaN rule, FtzOut (not Sat)
  // DAZ mode (lower_float.cpp): every float op of the function reads its
  // operands flushed (or cannot tell), so the run installs MXCSR.DAZ and
  // FtzIn arithmetic needs no flush of its operands.
  static bool daz_eligible(const ir::Function& f);
  bool lower_daz_arith(ir::ValueId v, const int* r, int d);  // fadd/fsub/fmul (FtzIn) under DAZ
  void lower_mul_rz_avx2(int d, int a, int b, uint32_t fflags);  // AVX2 fmul toward zero without MXCSR
  void lower_mul_rz_step(int d, int a, int b);  // (its step, from the product in scratch 0)
  bool read_by_daz_arith_only(ir::ValueId v);  // every reader is a lower_daz_arith op (lower_float.cpp)
  std::vector<uint8_t> daz_arith_only_;        // its per-value answers, computed on first use (2: and store_var)
  std::vector<uint8_t> stored_only_;           // read_by_stores_only's per-value answers, computed on first use
  bool store_needs_flush(ir::ValueId v);        // a store_var of v flushes it (its FtzOut was left out)
  // A DAZ product read only by one fadd / fsub: both emitted at the product
  // with the sum's test only (lower_float.cpp).
  ir::ValueId fused_add_of(ir::ValueId v);
  bool lower_fused_mul_add(ir::ValueId v, ir::ValueId u);
  // Two such products and sums emitted together at the first product, with
  // one NaN test of both sums (lower_float.cpp); false: not enough free
  // registers here (each is then emitted on its own).
  bool lower_fused_pair(ir::ValueId v, ir::ValueId u, ir::ValueId v2, ir::ValueId u2);
  struct FusedOperands;
  FusedOperands fused_operands(ir::ValueId v, ir::ValueId u);
  ColdFix fused_fix(const FusedOperands& o);
  void fused_emit(const FusedOperands& o);
  std::vector<ir::ValueId> fused_add_;          // per product: its add, kNoValue: not fused
  std::vector<ir::ValueId> fused_partner_;      // per product: a later product to pair with (kNoValue: none)
  std::vector<uint8_t> fused_pending_;          // per add: computed early, skipped at its turn
  // An fneg read only as the addend of the ffma right after it: one vfmsub
  // at the fneg's place, the ffma skipped at its turn (lower_float.cpp).
  ir::ValueId fneg_fma_of(ir::ValueId n);
  std::vector<ir::ValueId> fneg_fma_;           // per fneg: its ffma, kNoValue: not fused
  std::vector<uint8_t> fma_skip_;               // per ffma: emitted with its fneg, skipped at its turn
  bool fma_negated_ = false;                    // lower_float of an ffma at its fneg: addend = the fneg's operand
  // A chain of DAZ sums (a PICA200 DP3 / DP4 / DPH: products summed one
  // after the other, each partial sum read only by the next add): emitted
  // whole at its first op, with one test of the last sum (lower_float.cpp).
  struct DazChain {
    std::vector<ir::ValueId> adds;  // in order: each after the first reads the one before
    std::vector<ir::ValueId> ops;   // every product and add of the chain
  };
  std::vector<DazChain> daz_chains_;
  std::vector<int32_t> daz_chain_first_;        // per value: the chain it is the first op of, -1: none
  std::vector<uint8_t> daz_chain_member_;       // per value: an op of some chain (not paired by fused_add_of)
  bool lower_daz_chain(const DazChain& c, ir::ValueId first);
  void find_daz_chains();  // (fused_add_of, once: after fused_add_, before the pairs)
  void zero_mul_mask_raw(int a, int b);       // k2 (Avx512) / vector 4 (Avx2) = lanes of 0 * inf, subnormals as 0
  void round_begin(ir::Round m);                // Avx2: install the MXCSR rounding mode
  void round_end(ir::Round m);
  void mxcsr_begin(ir::Round m);               // both tiers: MXCSR save, set rounding
  void mxcsr_end(ir::Round m);                 // restore the saved MXCSR
  Xbyak::Xmm rop(int r, ir::Round m) const;     // Avx512: register operand with embedded rounding
  // Rip-relative operands (RipMem: the fast members encode them directly,
  // the others take them as `dword / ptr / qword [rip + constant]`).
  RipMem const_mem(uint32_t bits) { return RipMem{const32_[bits], 4}; }  // a 4-byte constant in the pool
  RipMem const_vec(uint32_t bits) { return RipMem{constvec_[bits], 0}; }  // a vector-width constant in the pool
  RipMem const_mem64(uint64_t bits) { return RipMem{const64_[bits], 8}; }  // an 8-byte constant (Avx512 {1toN} operands)
  RipMem const_vec64(uint64_t bits) { return RipMem{constvec64_[bits], 0}; }  // a vector-width constant of 8-byte lanes
  Xbyak::Address dconst(double v);            // a double operand of a packed-double op on either tier
  // Transc::Pica rcp / rsqrt / exp2 / log2 (lower_float.cpp): the model of
  // ir/transc_pica.h in vector code; x holds the operand, d the result.
  void lower_pica_transc(ir::Opcode op, int d, int x);

  const ir::Function& f_;
  Tier tier_;
  bool z_;          // Avx512
  bool daz_ = false;  // the run installs MXCSR.DAZ (daz_eligible)
  int lanes_;       // lanes per strip
  int vbytes_;      // bytes of a vector register
  int nregs_;       // vector registers available
  // The segment plan: own_plan_ (the constructor's analyses adjust it), or
  // a trial emitter's parent's (read only).
  Plan own_plan_;
  Plan& plan_;
  // The per-emitter state every constructor makes (registers, pool, caches).
  void init_emission_state(uint8_t* buffer, uint8_t* pool_low);
  void analyze_function();  // the constructor's analyses, on plan_
  void coalesce_phi_slots();  // a diamond's phi in its short side's value's slot (emitter.cpp)
  bool edge_is_empty(ir::BlockId from, size_t succ_index);  // emit_edge would emit nothing
  // A trial emitter that took its parent's analyses (set_trial_analyses_shared,
  // jit.h): it hands back the answers it made on first use.
  bool shares_analyses_ = false;
  // The frame as the constructor's analyses left it (their forced slots),
  // kept for trial emitters when the function has strip-outer loops.
  std::vector<int64_t> setup_slot_;
  uint32_t setup_frame_bytes_ = 0;
  // Takes `from`'s per-value answers computed on first use (count_only_const,
  // mask_only_cmp, kand_pair, read_by_daz_arith_only, fused_add_of and the
  // DAZ chains, fneg_fma_of, uniform_index_windows, loop_analyze's walk of
  // the function) that this emitter has not made yet: they depend on the
  // function and the constructor's analyses only, so a trial emitter and its
  // parent share them both ways.
  void adopt_lazy_analyses(const Emitter& from);
  // Inside one strip segment's straight-line body (emit_strip_segment):
  // whether a load_uniform there already tested r15 (the uniform pointer,
  // constant for the run) for null. Later ones in the same body cannot fault
  // and skip the test and its fault block (ref_simple: 16 loads per strip).
  bool in_segment_body_ = false, uniforms_checked_ = false;
  bool hoist_uniform_test(const Segment& s);  // r15's test once before a segment's strips
  void emit_uniform_block_test(ir::ValueId v, uint64_t offset);  // r15 null: v's fault, out of line

  struct ValState { int8_t reg = -1; bool in_frame = false; };
  // pinned: held for a whole strip-outer loop (loops.cpp), never a victim.
  struct RegState { ir::ValueId v = ir::kNoValue; uint32_t stamp = 0; bool locked = false; bool pinned = false; };
  // The register cache where loop code branches, put back for the code the
  // branch skips (with_alt: also the other strip's state of a paired loop).
  struct CacheSnapshot {
    std::vector<ValState> vals, alt_vals;
    std::vector<RegState> regs;
    bool with_alt = false;
  };
  CacheSnapshot cache_snapshot(bool with_alt = false) const;
  void cache_restore(const CacheSnapshot& st);
  std::vector<ValState> vals_;
  std::vector<ValState> alt_vals_;  // the other strip's cache state in a strip-interleaved loop
  RegState regs_[32];
  // A superset of the registers whose RegState::locked is set (alloc_reg,
  // use and the in-place lowerings set a bit with the flag; a restored
  // snapshot sets all): end_op clears only these instead of every register.
  uint32_t locked_mask_ = 0;
  uint32_t clock_ = 0;

  std::vector<int64_t> slot_, stage_slot_;
  std::vector<uint32_t> var_offsets_;  // f_.var_offsets(), once (Function::var_offset walks every var)
  Xbyak::Xmm vregs_[32];  // V(i), made once: the emitter asks for registers millions of times
  uint32_t frame_bytes_ = 0;
  bool has_phis_ = false;
  // Looped strip segments run only the strips up to the last launched lane
  // (a one-vertex draw: one strip of four on AVX2). Only under the
  // unlaunched-lanes contract, in a function whose ops never read another
  // lane's value except votes (which mask with the launched lanes) and with
  // no memory op (whose lanes' addresses a skipped strip would leave stale).
  bool strip_limit_ = false;
  std::vector<ir::ValueId> partial_slots_;  // results written only for some lanes (loads, atomics)
  // Constants of the entry block read by another segment (plan_.escapes):
  // their slots are filled once per run in the prologue (emit_const_slots),
  // so the strips that define them make nothing for them (a reader in a
  // register loads the slot; sixteenth session).
  std::vector<uint8_t> prefilled_;
  void emit_const_slots();
  static bool prefill_consts_enabled();
  static bool unroll_memory_enabled();  // false with GPURC_UNROLL_MEMORY=0 (segments over kUnrollMaxOps looped, as before)  // false with GPURC_PREFILL_CONSTS=0 (the per-strip stores, as before)
  std::map<ir::ValueId, const rt::EvalOp*> eval_op_of_;  // one helper descriptor per value
  std::vector<uint32_t> uses_;               // per value: operand uses by any instruction (phis included)
  ir::ValueId vote_in_eax_ = ir::kNoValue;   // an any/all whose result is in eax for the terminator (nonzero: true)

  // The pool's four kinds of constant, indexed by bits: `ptr[rip + const32_[bits]]`.
  struct PoolKind {
    ConstPool* pool;
    uint8_t kind, bytes, elem;
    const void* operator[](uint64_t bits) const { return pool->get(kind, bits, bytes, elem); }
  };
  ConstPool pool_;
  PoolKind const32_{&pool_, 0, 4, 4}, constvec_{&pool_, 1, 0, 4}, const64_{&pool_, 2, 8, 8}, constvec64_{&pool_, 3, 0, 8};
  const uint8_t* iota_ = nullptr;  // 16 dwords 0..15 in the pool
  const uint8_t* lane_bits_perm_ = nullptr;  // the dword order lane_bits' Avx2 packs need, made when needed
  const uint8_t* iota32_ = nullptr;  // 32 dwords 0..31 in the pool (emit_lane_run_flags), made when needed
  Xbyak::Label epilogue_, fault_return_;
  // emit_fault_return's sites: each is `mov eax, index; jmp fault_common_`,
  // and one stub after the epilogue copies the site's record (a table in the
  // constant pool) into the context, so a site costs 2 instructions, not 10.
  struct FaultSite {
    uint32_t kind, space;
    int32_t lane;  // -1: the first launched lane
    uint32_t unused;
    uint64_t code, addr;
  };
  std::vector<FaultSite> fault_sites_;
  Xbyak::Label fault_common_;
  void emit_fault_common();
  std::vector<Xbyak::Label> block_label_;
  // The warp loop (warp_loop.cpp): a second entry that runs many warps per
  // call; warp_start_ is the per-warp part of the prologue, loop_next_ where
  // the epilogue goes in a warp-loop call.
  bool warp_loop_ = false;
  bool has_budget_ops() const;
  bool touches_shared_memory() const;  // a load/store of Space::Shared or an atomic (warp_loop.cpp)
  size_t warp_loop_entry_ = kNoWarpLoop;
  Xbyak::Label warp_start_, loop_next_;
  // In the warp loop past loop_next_'s status test (seventeenth session): a
  // `return` of a warp-loop call (no draw loop) goes on there directly, the
  // status Done known (no status store: the loop's end stores it).
  Xbyak::Label loop_next_done_;
  // In the per-run prologue, past what is the same for every full warp of a
  // warp-loop call (fault reset, first launched lane, launched-lane masks,
  // resume): the loop's later warps start here, eax = 0 (warp_loop.cpp).
  Xbyak::Label loop_warp_start_;
  void emit_warp_loop();
  // The warp and draw loops' per-warp zeroing of var ranges (warp_loop.cpp).
  void emit_zero_ranges(int count_off, int list_off);
  // The draw loop (draw_loop.cpp): one stub per tier and MXCSR mode
  // (emit_draw_stub), which enters a vertex shader at its per-warp entry;
  // the stub's call marks the kWarpLoopOffset slot with bit 0, and
  // loop_next_ goes on at draw_next_, which jumps back into the stub.
  static bool draw_loop_enabled();  // false with GPURC_DRAW_LOOP=0 (no draw loop emitted)
  static bool strip_limit_enabled();  // false with GPURC_STRIP_LIMIT=0 (every strip of a partial warp runs)
  static bool warp_loop_return_enabled();  // false with GPURC_WARP_LOOP_RETURN=0 (`return` through the epilogue)
  bool draw_loop_ = false;
  Xbyak::Label draw_next_;
  void emit_draw_loop();
  void emit_draw_stub();
};

}  // namespace gpurc::x64
