// Internal to the PICA200 translation (translate*.cpp): the Translator class
// shared by the per-concern files.
//  translate.cpp          the driver, the vars, faults and flow conditions,
//                         the public translate / trap helpers;
//  translate_static.cpp   StackMode::Static: the CALL/IF/LOOP stacks expanded
//                         at translate time into (address, stack) nodes;
//  translate_runtime.cpp  StackMode::Runtime: per-lane stack vars, the shared
//                         end checks and the pc dispatch;
//  translate_alu.cpp      ALU instructions and the PICA float rules in IR;
//  translate_memory.cpp   source operand reads (registers, c uniforms with
//                         relative addressing, b/i uniforms) and EMIT's
//                         record stores.
// The launch ABI (var layout, state pack/unpack) is abi.h / abi.cpp.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "frontend/pica200/encoding.h"
#include "frontend/pica200/translate.h"
#include "ir/builder.h"

namespace gpurc::pica::detail {

inline std::string hex_addr(uint32_t a) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%03X", a);
  return b;
}

// The translator's IR builder: ir::Builder plus local value numbering within
// the block being filled. A get_var of a var the block has already read or
// written gives that value instead of another get_var, and an i1 / i32 / f32
// constant the block already has is that constant: what construct_ssa and
// cse would do later, done before the instructions exist (a PICA200
// instruction reads each source register component through get_var, and
// straight-line code re-reads the same registers: about half of the IR the
// translator made was get_var). Only the block being filled is known: a
// switch to another block forgets everything, so each block still reads the
// vars it uses once (construct_ssa joins blocks). The function means the
// same, instruction for instruction, as without the cache (each get_var it
// drops would have read the value it is given).
// Kinds of LocalBuilder::memo.
enum : uint32_t { kMemoFlush = 1, kMemoNeg = 2 };

class LocalBuilder : public ir::Builder {
 public:
  explicit LocalBuilder(ir::Function& f) : ir::Builder(f), fn_(f) {}

  ir::ValueId get_var(uint32_t var) {
    Slot& s = slot(var);
    if (s.epoch != epoch_) s = Slot{ir::Builder::get_var(var), epoch_};
    return s.value;
  }
  void set_var(uint32_t var, ir::ValueId v) {
    ir::Builder::set_var(var, v);
    slot(var) = Slot{v, epoch_};
  }
  // The function was emptied (a new translation into it): nothing is known.
  void reset() {
    cache_block_ = ir::kNoBlock;
    ++epoch_;
    consts_.clear();
    memo_.clear();
  }
  // set_var_where is ir::Builder's get_var + select + set_var, which would bypass the cache.
  void set_var_where(ir::ValueId, uint32_t, ir::ValueId) = delete;

  ir::ValueId constant(ir::Type t, uint64_t bits) {
    sync();
    bits &= ir::type_mask(t);
    const uint64_t key = uint64_t(t) << 56 ^ bits;
    for (const auto& [k, v] : consts_)
      if (k == key) return v;
    ir::ValueId v = ir::Builder::constant(t, bits);
    if (bits >> 56 == 0 && consts_.size() < kMaxConsts) consts_.push_back({key, v});
    return v;
  }
  // The result of a pure helper the translator builds from several
  // instructions (flush, a negated source), memoised per block by (kind, x):
  // a swizzle that repeats a component, or a result written to all four
  // components, would otherwise build it once per use.
  template <typename Make>
  ir::ValueId memo(uint32_t kind, ir::ValueId x, Make make) {
    sync();
    const uint64_t key = uint64_t(kind) << 32 | x;
    for (const auto& [k, v] : memo_)
      if (k == key) return v;
    ir::ValueId v = make();
    if (memo_.size() < kMaxMemo) memo_.push_back({key, v});
    return v;
  }
  ir::ValueId i1(bool b) { return constant(ir::Type::I1, b); }
  ir::ValueId i32(uint32_t v) { return constant(ir::Type::I32, v); }
  ir::ValueId f32_bits(uint32_t bits) { return constant(ir::Type::F32, bits); }
  ir::ValueId f32(float x) {
    uint32_t bits;
    std::memcpy(&bits, &x, 4);
    return f32_bits(bits);
  }

 private:
  struct Slot {
    ir::ValueId value = ir::kNoValue;
    uint32_t epoch = 0;  // valid when equal to epoch_
  };
  static constexpr size_t kMaxConsts = 64, kMaxMemo = 64;
  // A new block to fill forgets the previous block's values.
  void sync() {
    if (block() == cache_block_) return;
    cache_block_ = block();
    ++epoch_;
    consts_.clear();
    memo_.clear();
  }
  Slot& slot(uint32_t var) {
    sync();
    if (var >= vars_.size()) vars_.resize(std::max<size_t>(fn_.vars.size(), size_t(var) + 1));
    return vars_[var];
  }
  ir::Function& fn_;
  ir::BlockId cache_block_ = ir::kNoBlock;
  uint32_t epoch_ = 1;
  std::vector<Slot> vars_;
  std::vector<std::pair<uint64_t, ir::ValueId>> consts_, memo_;
};

// ---- StackMode::Static: the node graph (translate_static.cpp)
//
// The PICA200 control stacks (CALL 4, IF 8, LOOP 4) hold only addresses that
// are fixed by the code, so they are expanded statically: the translator
// explores "nodes" = (pc, stack contents) from the entry and gives each its
// IR code. Only the LOOP iteration counters are dynamic (a private I32 var per
// loop depth). A node is either Exec (run the instruction at pc) or LoopEnd
// (the top LOOP frame ends at `pc`: step aL, count down, branch back or fall
// out). Straight-line chains of nodes share one IR block.

struct CallFrame { uint32_t end, ret; };
struct IfFrame { uint32_t end, next; };
struct LoopFrame { uint32_t start, end, ireg; };

struct Stacks {
  std::vector<CallFrame> calls;
  std::vector<IfFrame> ifs;
  std::vector<LoopFrame> loops;
};

enum class NodeKind : uint8_t { Exec, LoopEnd };

struct Node {
  NodeKind kind;
  uint32_t pc;
  Stacks st;
};

// Identity of a node: kind, pc and every stack entry.
std::vector<uint32_t> node_key(const Node& n);

struct KeyHash {
  size_t operator()(const std::vector<uint32_t>& k) const {
    uint64_t h = 1469598103934665603ull;
    for (uint32_t v : k) h = (h ^ v) * 1099511628211ull;
    return size_t(h);
  }
};

// How control leaves a node.
enum class Exit : uint8_t {
  Return,     // END, or a trap (the trap faults the warp first)
  Goto,       // succ[0]
  Branch,     // cond ? succ[0] : succ[1]
};

struct Edge {
  Exit exit = Exit::Return;
  uint32_t succ[2] = {0, 0};
};

constexpr uint32_t kMaxNodes = kMaxStaticStates;

class Translator {
 public:
  Translator(const Program& p, const TranslateOptions& opt, ir::Function& f) : p_(p), opt_(opt), f_(f), b_(f) {}

  bool run(std::string& err);

 private:
  // ---- translate.cpp: vars, faults, flow conditions
  void make_vars();
  // Whether an instruction cannot run (a runtime fault, as in the reference
  // interpreter; fault_reason says which). static_fault: the faults that
  // depend on the instruction alone; fault_of adds the stack overflows of a
  // node. Both decode the word into `dec` (nullopt: not an instruction).
  // A verdict only, no message: asked once per node of the expansion.
  bool static_fault(uint32_t pc, std::optional<Instr>& dec);
  bool fault_of(const Node& n, std::optional<Instr>& dec);
  TrapReason fault_reason(uint32_t pc, const std::optional<Instr>& dec) const;
  ir::ValueId condition(const Instr& in);
  ir::ValueId flow_condition(const Instr& in);

  // ---- translate_static.cpp: StackMode::Static
  bool run_static(std::string& err);
  // phase 1: the node graph
  uint32_t intern(Node n);
  uint32_t after_loop_check(uint32_t next, Stacks st);
  uint32_t arrive(uint32_t next, Stacks st);
  bool successors(uint32_t id, Edge& e, std::string& err);
  // phase 2: the IR of each node
  bool emit_node(uint32_t id, std::string& err);
  void finish(const Edge& e, ir::ValueId cond);

  // ---- translate_runtime.cpp: StackMode::Runtime (see there)
  static constexpr uint32_t kEmptySlot = 0xFFFFFFFFu;
  struct RtStack {
    std::vector<std::vector<uint32_t>> fields;  // fields[f][slot] = var; field 0 is the end address
  };
  bool run_runtime(std::string& err);
  RtStack make_stack(const char* name, unsigned depth, std::initializer_list<const char*> fields,
                     const uint32_t* reuse_last = nullptr);
  ir::ValueId top(const RtStack& st, size_t field) { return b_.get_var(st.fields[field][0]); }
  void overflow_check(const RtStack& st, TrapReason reason, uint32_t here);
  void push(const RtStack& st, std::initializer_list<ir::ValueId> values);
  void pop(const RtStack& st, ir::ValueId cond);
  ir::BlockId addr_block(uint32_t a);
  ir::BlockId arrive_block(uint32_t a);
  void rt_arrive(uint32_t a) { b_.br(arrive_block(a)); }
  // A dynamic next address (already in the pc var) goes through the checks.
  void rt_arrive_dynamic() { b_.br(rt_checks_); }
  // A new block for one side of a conditional branch; emits its body with `fn`.
  template <typename Fn>
  ir::BlockId side_block(Fn fn) {
    ir::BlockId b = f_.add_block(), saved = b_.block();
    b_.set_block(b);
    fn();
    b_.set_block(saved);
    return b;
  }
  void dynamic_target(uint32_t a);
  void emit_checks();
  bool emit_address(uint32_t a, std::string& err);

  // ---- translate_alu.cpp: ALU instructions
  // Flags of the PICA arithmetic: flushed inputs and results, canonical NaN
  // (every b_.fadd / transc carries kArith, every b_.fmul kMul).
  static constexpr uint32_t kArith = ir::ff::FtzIn | ir::ff::FtzOut;
  static constexpr uint32_t kMul = kArith | ir::ff::ZeroMul;

  // fp::out: canonical NaN, flushed; x + -0 is x for every other x.
  ir::ValueId out(ir::ValueId x) { return b_.fadd(x, b_.f32(-0.0f), kArith); }
  ir::ValueId flush(ir::ValueId x);
  ir::ValueId round24(ir::ValueId x);
  bool emit_arith(const Instr& in, uint32_t here, std::string& err);

  // ---- translate_memory.cpp: operand reads, uniforms, EMIT records
  ir::ValueId bool_uniform(unsigned n);
  ir::ValueId const_select(ir::ValueId index, unsigned comp);
  std::array<ir::ValueId, 4> read(unsigned field, bool wide, unsigned idx, const Swizzle& sw);
  ir::ValueId rel_index(unsigned base, unsigned idx);
  void emit_record(uint32_t here);

  const Program& p_;
  const TranslateOptions& opt_;
  ir::Function& f_;
  LocalBuilder b_;
  // StackMode::Static
  std::vector<Node> nodes_;
  std::vector<Edge> edges_;
  std::unordered_map<std::vector<uint32_t>, uint32_t, KeyHash> index_;  // nodes with a non-empty stack
  std::vector<uint32_t> flat_index_;  // empty-stack nodes: [2 pc + (kind == LoopEnd)] -> node + 1, 0: none (intern)
  std::vector<ir::BlockId> block_of_;
  std::vector<std::optional<Instr>> node_instr_;  // per Exec node: its decoded instruction (successors)
  std::vector<uint8_t> node_fault_;               // per Exec node: fault_of found a fault
  uint32_t loop_var_[Interpreter::kLoopDepth] = {};
  // StackMode::Static vertex shaders: per LOOP depth, a var private to the
  // run (Function::state_vars) holding i.z, read at LOOP so the LOOP's end
  // adds a value from before the loop; kNoStepVar: read at the end (geometry
  // shaders, whose private-var numbers the layout fixes).
  static constexpr uint32_t kNoStepVar = ~0u;
  uint32_t loop_step_var_[Interpreter::kLoopDepth] = {kNoStepVar, kNoStepVar, kNoStepVar, kNoStepVar};
  bool too_complex_ = false;
  // StackMode::Runtime
  uint32_t rt_pc_ = 0;
  RtStack rt_calls_, rt_ifs_, rt_loops_;
  std::set<uint32_t> ends_, dispatch_;
  std::map<uint32_t, ir::BlockId> rt_block_, rt_arrive_;
  std::vector<uint32_t> rt_work_;
  ir::BlockId rt_checks_ = ir::kNoBlock, rt_dispatch_ = ir::kNoBlock;
};

}  // namespace gpurc::pica::detail
