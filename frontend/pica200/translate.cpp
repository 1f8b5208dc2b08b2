// PICA200 -> IR translation (see translate.h for the layout contract and
// docs/pica200.md "Translation" for the mapping).
#include "frontend/pica200/translate.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstddef>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include "frontend/pica200/encoding.h"
#include "ir/builder.h"

namespace gpurc::pica {

namespace {

void put_u32(uint8_t* p, uint32_t v) { std::memcpy(p, &v, 4); }
uint32_t get_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

}  // namespace

std::vector<uint8_t> pack_uniforms(const Uniforms& u) {
  std::vector<uint8_t> out(kUniformBytes, 0);
  for (unsigned n = 0; n < 96; ++n)
    for (unsigned c = 0; c < 4; ++c) put_u32(&out[kUniformFloat + 16 * n + 4 * c], fp::bits(u.f[n][c]));
  for (unsigned n = 0; n < 4; ++n)
    for (unsigned c = 0; c < 4; ++c) put_u32(&out[kUniformInt + 16 * n + 4 * c], u.i[n][c]);
  put_u32(&out[kUniformBool], u.b);
  return out;
}

// Offsets of the state vars in one pass: Function::var_offset walks every
// earlier var. Same layout rule as ir::Function::var_offset (docs/architecture.md, warp ABI).
static std::array<uint32_t, kNumStateVars> state_var_offsets(const ir::Function& f) {
  std::array<uint32_t, kNumStateVars> off{};
  uint32_t o = 0;
  for (uint32_t i = 0; i < kNumStateVars && i < f.vars.size(); ++i) {
    off[i] = o;
    o += (ir::lane_bytes(f.vars[i].type) * ir::kWarpLanes + 63) & ~63u;
  }
  return off;
}

// VertexState offsets of register n of bank b (0 v, 1 o, 2 r) and of the scalar state vars.
static uint32_t register_offset(uint32_t bank, uint32_t n) {
  size_t base = bank == 0 ? offsetof(VertexState, v) : bank == 1 ? offsetof(VertexState, o) : offsetof(VertexState, r);
  return uint32_t(base + sizeof(Vec4) * n);
}
static LaneMap::Slot scalar_slot(uint32_t var, uint32_t var_offset) {
  switch (var) {
    case kVarA0X: return {var_offset, uint32_t(offsetof(VertexState, a0x)), 0};
    case kVarA0Y: return {var_offset, uint32_t(offsetof(VertexState, a0y)), 0};
    case kVarAL: return {var_offset, uint32_t(offsetof(VertexState, aL)), 1};
    case kVarCmpX: return {var_offset, uint32_t(offsetof(VertexState, cmpx)), 2};
    default: return {var_offset, uint32_t(offsetof(VertexState, cmpy)), 2};
  }
}

static LaneMap make_lane_map(const ir::Function& f, const std::vector<uint8_t>& in, const std::vector<uint8_t>& out) {
  LaneMap m;
  const auto off = state_var_offsets(f);
  for (uint32_t reg = 0; reg < 48 && kVarInput + 4 * reg + 3 < f.vars.size(); ++reg) {
    uint32_t var = kVarInput + 4 * reg;
    LaneMap::Quad q{{off[var], off[var + 1], off[var + 2], off[var + 3]}, register_offset(reg / 16, reg % 16)};
    bool any_in = false, any_out = false;
    for (uint32_t c = 0; c < 4; ++c) {
      any_in |= in[var + c] != 0;
      any_out |= out[var + c] != 0;
    }
    if (any_in || any_out) m.in4.push_back(q);
    if (any_out) m.out4.push_back(q);
  }
  for (uint32_t var = kVarA0X; var < kNumStateVars && var < f.vars.size(); ++var) {
    if (in[var] || out[var]) m.in.push_back(scalar_slot(var, off[var]));
    if (out[var]) m.out.push_back(scalar_slot(var, off[var]));
  }
  return m;
}

LaneMap LaneMap::all(const ir::Function& f) {
  std::vector<uint8_t> every(kNumStateVars, 1);
  return make_lane_map(f, every, every);
}

LaneMap LaneMap::used(const ir::Function& f) {
  std::vector<uint8_t> in(kNumStateVars, 0), out(kNumStateVars, 0);
  for (const ir::Inst& i : f.insts) {
    if (i.block == ir::kNoBlock || i.imm >= kNumStateVars) continue;
    if (i.op == ir::Opcode::GetVar) in[i.imm] = 1;
    if (i.op == ir::Opcode::SetVar) in[i.imm] = out[i.imm] = 1;
  }
  return make_lane_map(f, in, out);
}

// Registers: four lanes at a time as a 4x4 transpose (a Vec4 per lane in,
// one 16-byte row per component out), the rest lane by lane. Lanes are the
// outer loop so the states are read front to back (they are usually far
// from the cache; this order lets the prefetcher stream them).
static void quads_to_vars(const std::vector<LaneMap::Quad>& quads, const VertexState* states, size_t n,
                          uint8_t* vars) {
  size_t lane = 0;
#if defined(__SSE2__)
  for (; lane + 4 <= n; lane += 4)
    for (const LaneMap::Quad& q : quads) {
      auto row = [&](size_t k) {
        return _mm_loadu_ps(reinterpret_cast<const float*>(reinterpret_cast<const uint8_t*>(&states[lane + k]) +
                                                           q.state_offset));
      };
      __m128 r0 = row(0), r1 = row(1), r2 = row(2), r3 = row(3);
      _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
      _mm_storeu_ps(reinterpret_cast<float*>(vars + q.var_offset[0] + 4 * lane), r0);
      _mm_storeu_ps(reinterpret_cast<float*>(vars + q.var_offset[1] + 4 * lane), r1);
      _mm_storeu_ps(reinterpret_cast<float*>(vars + q.var_offset[2] + 4 * lane), r2);
      _mm_storeu_ps(reinterpret_cast<float*>(vars + q.var_offset[3] + 4 * lane), r3);
    }
#endif
  for (; lane < n; ++lane)
    for (const LaneMap::Quad& q : quads) {
      const uint8_t* src = reinterpret_cast<const uint8_t*>(&states[lane]) + q.state_offset;
      for (size_t c = 0; c < 4; ++c) std::memcpy(vars + q.var_offset[c] + 4 * lane, src + 4 * c, 4);
    }
}

static void vars_to_quads(const std::vector<LaneMap::Quad>& quads, const uint8_t* vars, VertexState* states,
                          size_t n) {
  size_t lane = 0;
#if defined(__SSE2__)
  for (; lane + 4 <= n; lane += 4)
    for (const LaneMap::Quad& q : quads) {
      auto col = [&](size_t c) { return _mm_loadu_ps(reinterpret_cast<const float*>(vars + q.var_offset[c] + 4 * lane)); };
      __m128 r0 = col(0), r1 = col(1), r2 = col(2), r3 = col(3);
      _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
      auto dst = [&](size_t k) {
        return reinterpret_cast<float*>(reinterpret_cast<uint8_t*>(&states[lane + k]) + q.state_offset);
      };
      _mm_storeu_ps(dst(0), r0);
      _mm_storeu_ps(dst(1), r1);
      _mm_storeu_ps(dst(2), r2);
      _mm_storeu_ps(dst(3), r3);
    }
#endif
  for (; lane < n; ++lane)
    for (const LaneMap::Quad& q : quads) {
      uint8_t* dst = reinterpret_cast<uint8_t*>(&states[lane]) + q.state_offset;
      for (size_t c = 0; c < 4; ++c) std::memcpy(dst + 4 * c, vars + q.var_offset[c] + 4 * lane, 4);
    }
}

void pack_lanes(const LaneMap& m, const VertexState* states, size_t n, uint8_t* vars, uint32_t& mask) {
  n = std::min<size_t>(n, ir::kWarpLanes);
  mask = n == 32 ? ~0u : (1u << n) - 1;
  quads_to_vars(m.in4, states, n, vars);
  for (const LaneMap::Slot& s : m.in) {
    uint8_t* dst = vars + s.var_offset;
    for (size_t lane = 0; lane < n; ++lane) {
      const uint8_t* src = reinterpret_cast<const uint8_t*>(&states[lane]) + s.state_offset;
      uint32_t v = s.kind == 0 ? get_u32(src) : s.kind == 1 ? uint32_t(*src) : uint32_t(*src != 0);
      put_u32(dst + 4 * lane, v);
    }
  }
}

void unpack_lanes(const LaneMap& m, const uint8_t* vars, VertexState* states, size_t n) {
  n = std::min<size_t>(n, ir::kWarpLanes);
  vars_to_quads(m.out4, vars, states, n);
  for (const LaneMap::Slot& s : m.out) {
    const uint8_t* src = vars + s.var_offset;
    for (size_t lane = 0; lane < n; ++lane) {
      uint8_t* dst = reinterpret_cast<uint8_t*>(&states[lane]) + s.state_offset;
      uint32_t v = get_u32(src + 4 * lane);
      if (s.kind == 0) put_u32(dst, v);
      else if (s.kind == 1) *dst = uint8_t(v);
      else *reinterpret_cast<bool*>(dst) = (v & 1) != 0;
    }
  }
}

void pack_lanes(const ir::Function& f, const std::vector<VertexState>& states, size_t first, uint8_t* vars,
                uint32_t& mask) {
  mask = 0;
  if (first >= states.size()) return;
  pack_lanes(LaneMap::all(f), states.data() + first, states.size() - first, vars, mask);
}

void unpack_lanes(const ir::Function& f, const uint8_t* vars, size_t first, std::vector<VertexState>& states) {
  if (first >= states.size()) return;
  unpack_lanes(LaneMap::all(f), vars, states.data() + first, states.size() - first);
}

void unpack_emits(const ir::Function& f, const uint8_t* vars, const uint8_t* records, size_t first,
                  std::vector<GsState>& gs, size_t lanes) {
  if (f.vars.size() <= kVarEmitCount || f.vars[kVarEmitCount].name != "emit.count") return;  // not a geometry translation
  const uint32_t latch_off = f.var_offset(kVarEmitLatch), count_off = f.var_offset(kVarEmitCount);
  for (unsigned lane = 0; lane < std::min<size_t>(lanes, ir::kWarpLanes) && first + lane < gs.size(); ++lane) {
    GsState& g = gs[first + lane];
    const uint32_t count = std::min(get_u32(vars + count_off + 4 * lane), kEmitMaxPerInvocation);
    const uint8_t* rec = records + lane * kEmitLaneStride;
    // The interpreter's EMIT, replayed record by record.
    for (uint32_t k = 0; k < count; ++k, rec += kEmitRecordBytes) {
      const uint32_t header = get_u32(rec);
      auto& slot = g.buffer[header & 3];
      for (unsigned n = 0; n < 16; ++n)
        for (unsigned c = 0; c < 4; ++c) slot[n][c] = fp::from_bits(get_u32(rec + kEmitHeaderBytes + 16 * n + 4 * c));
      ++g.emits;
      if (header & 0x100) {
        GsPrimitive prim;
        for (size_t v = 0; v < 3; ++v) prim.vertices[v] = g.buffer[v];
        prim.winding = (header >> 9) & 1;
        g.primitives.push_back(prim);
      }
    }
    const uint32_t latch = get_u32(vars + latch_off + 4 * lane);
    g.vtxid = uint8_t(latch & 0xFF);
    g.prim = (latch >> 8) & 1;
    g.winding = (latch >> 9) & 1;
  }
}

// ---------------------------------------------------------------------------
// Translation.
//
// The PICA200 control stacks (CALL 4, IF 8, LOOP 4) hold only addresses that
// are fixed by the code, so they are expanded statically: the translator
// explores "nodes" = (pc, stack contents) from the entry and gives each its
// IR code. Only the LOOP iteration counters are dynamic (a private I32 var per
// loop depth). A node is either Exec (run the instruction at pc) or LoopEnd
// (the top LOOP frame ends at `pc`: step aL, count down, branch back or fall
// out). Straight-line chains of nodes share one IR block.

namespace {

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
std::vector<uint32_t> node_key(const Node& n) {
  std::vector<uint32_t> k{uint32_t(n.kind), n.pc, uint32_t(n.st.calls.size()), uint32_t(n.st.ifs.size())};
  for (auto& c : n.st.calls) k.insert(k.end(), {c.end, c.ret});
  for (auto& i : n.st.ifs) k.insert(k.end(), {i.end, i.next});
  for (auto& l : n.st.loops) k.insert(k.end(), {l.start, l.end, l.ireg});
  return k;
}

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

std::string hex_addr(uint32_t a) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%03X", a);
  return b;
}

class Translator {
 public:
  Translator(const Program& p, const TranslateOptions& opt, ir::Function& f) : p_(p), opt_(opt), f_(f), b_(f) {}

  bool run(std::string& err) {
    if (opt_.stacks == StackMode::Runtime) return run_runtime(err);
    if (!run_static(err)) {
      if (opt_.stacks == StackMode::Static || !too_complex_) return false;
      // Too many (address, stack) states: translate with runtime stacks instead.
      nodes_.clear();
      edges_.clear();
      index_.clear();
      block_of_.clear();
      err.clear();
      return run_runtime(err);
    }
    return true;
  }

 private:
  bool run_static(std::string& err) {
    make_vars();
    nodes_.push_back(Node{NodeKind::Exec, opt_.entry, {}});
    index_.emplace(node_key(nodes_[0]), 0);
    // Phase 1: the node graph.
    for (size_t n = 0; n < nodes_.size(); ++n) {
      Edge e;
      if (!successors(uint32_t(n), e, err)) return false;
      edges_.push_back(e);
      if (nodes_.size() > kMaxNodes) {
        too_complex_ = true;
        err = "pica200: control flow too complex to expand (more than " + std::to_string(kMaxNodes) +
              " (address, stack) states) near " + hex_addr(nodes_[n].pc);
        return false;
      }
    }
    // Phase 2: blocks. A node starts a block unless it has exactly one
    // predecessor and that predecessor falls into it unconditionally.
    std::vector<uint32_t> preds(nodes_.size(), 0);
    std::vector<uint8_t> via_goto(nodes_.size(), 0);
    for (auto& e : edges_) {
      if (e.exit == Exit::Goto) { ++preds[e.succ[0]]; via_goto[e.succ[0]] = 1; }
      if (e.exit == Exit::Branch) { ++preds[e.succ[0]]; ++preds[e.succ[1]]; }
    }
    // A separate entry block, so a jump back to the entry address is an
    // ordinary edge (the entry block of an IR function has no predecessors).
    ir::BlockId entry = f_.add_block("entry");
    block_of_.assign(nodes_.size(), ir::kNoBlock);
    for (uint32_t n = 0; n < nodes_.size(); ++n) {
      bool leader = n == 0 || preds[n] != 1 || !via_goto[n];
      if (leader) block_of_[n] = f_.add_block();
    }
    for (uint32_t n = 0; n < nodes_.size(); ++n) {
      if (block_of_[n] == ir::kNoBlock) continue;
      b_.set_block(block_of_[n]);
      uint32_t cur = n;
      while (true) {
        if (!emit_node(cur, err)) return false;
        const Edge& e = edges_[cur];
        if (e.exit == Exit::Goto && block_of_[e.succ[0]] == ir::kNoBlock) {
          cur = e.succ[0];
          continue;
        }
        break;
      }
    }
    b_.set_block(entry);
    if (opt_.geometry) {
      // A fresh GsState: nothing latched, nothing emitted.
      b_.set_var(kVarEmitLatch, b_.i32(0));
      b_.set_var(kVarEmitCount, b_.i32(0));
    }
    b_.br(block_of_[0]);
    f_.compute_preds();
    // Only worth it when the expansion duplicates code: runtime stacks give
    // every address one copy.
    std::set<uint32_t> pcs;
    for (const Node& n : nodes_) pcs.insert(n.pc);
    if (f_.insts.size() > kMaxStaticInsts && nodes_.size() > 2 * pcs.size()) {
      too_complex_ = true;
      err = "pica200: static control-flow expansion too large (" + std::to_string(f_.insts.size()) +
            " IR instructions, more than " + std::to_string(kMaxStaticInsts) + ")";
      return false;
    }
    return true;
  }

  // ---- phase 1 -----------------------------------------------------------

  uint32_t intern(Node n) {
    auto key = node_key(n);
    auto it = index_.find(key);
    if (it != index_.end()) return it->second;
    uint32_t id = uint32_t(nodes_.size());
    nodes_.push_back(std::move(n));
    index_.emplace(std::move(key), id);
    return id;
  }

  // The IF and CALL end checks (one each, in that order) for `next`.
  uint32_t after_loop_check(uint32_t next, Stacks st) {
    if (!st.ifs.empty() && next == st.ifs.back().end) {
      next = st.ifs.back().next;
      st.ifs.pop_back();
    }
    if (!st.calls.empty() && next == st.calls.back().end) {
      next = st.calls.back().ret;
      st.calls.pop_back();
    }
    return intern(Node{NodeKind::Exec, next, std::move(st)});
  }
  // All end checks for control arriving at `next`.
  uint32_t arrive(uint32_t next, Stacks st) {
    if (!st.loops.empty() && next == st.loops.back().end) return intern(Node{NodeKind::LoopEnd, next, std::move(st)});
    return after_loop_check(next, std::move(st));
  }

  // Why an Exec node cannot run its instruction (a runtime fault, as in the
  // reference interpreter); empty if it can.
  // Faults that depend on the instruction alone (not on the stacks).
  std::string static_fault(uint32_t pc, std::optional<Instr>& dec) {
    if (pc >= p_.code.size()) return "execution ran past the end of the program";
    std::string derr;
    dec = decode(p_.code[pc], pc, &derr);
    if (!dec) return derr.empty() ? "invalid instruction" : derr;
    const Instr& in = *dec;
    if (num_sources(in.op) > 0 && in.desc >= p_.descs.size())
      return "operand descriptor " + std::to_string(in.desc) + " is not loaded";
    if ((in.op == Op::SETEMIT || in.op == Op::EMIT) && !opt_.geometry)
      return std::string(info(in.op).name) + " outside a geometry shader";
    return {};
  }
  std::string fault_of(const Node& n, std::optional<Instr>& dec) {
    std::string why = static_fault(n.pc, dec);
    if (!why.empty()) return why;
    const Instr& in = *dec;
    switch (in.op) {
      case Op::CALL: case Op::CALLC: case Op::CALLU:
        if (n.st.calls.size() == Interpreter::kCallDepth) return "CALL stack overflow (depth 4)";
        break;
      case Op::IFU: case Op::IFC:
        if (n.st.ifs.size() == Interpreter::kIfDepth) return "IF stack overflow (depth 8)";
        break;
      case Op::LOOP:
        if (n.st.loops.size() == Interpreter::kLoopDepth) return "LOOP stack overflow (depth 4)";
        break;
      default: break;
    }
    return {};
  }

  bool successors(uint32_t id, Edge& e, std::string& err) {
    const Node n = nodes_[id];  // copy: intern() may grow nodes_
    if (n.kind == NodeKind::LoopEnd) {
      Stacks out = n.st, back = n.st;
      uint32_t start = back.loops.back().start;
      out.loops.pop_back();
      e.exit = Exit::Branch;
      e.succ[0] = after_loop_check(n.pc, std::move(out));   // counter reached 0
      e.succ[1] = after_loop_check(start, std::move(back));
      return true;
    }
    std::optional<Instr> dec;
    if (!fault_of(n, dec).empty()) {
      e.exit = Exit::Return;
      return true;
    }
    const Instr& in = *dec;
    const uint32_t here = n.pc;
    auto go = [&](uint32_t next, Stacks st) {
      e.exit = Exit::Goto;
      e.succ[0] = arrive(next, std::move(st));
    };
    auto branch = [&](uint32_t t_next, Stacks t_st, uint32_t f_next, Stacks f_st) {
      e.exit = Exit::Branch;
      e.succ[0] = arrive(t_next, std::move(t_st));
      e.succ[1] = arrive(f_next, std::move(f_st));
    };
    Stacks st = n.st;
    switch (in.op) {
      case Op::END: e.exit = Exit::Return; return true;
      case Op::BREAK:
      case Op::BREAKC: {
        Stacks taken = st;
        uint32_t tnext = here + 1;
        if (!taken.loops.empty()) {
          tnext = taken.loops.back().end;
          taken.loops.pop_back();
        }
        if (in.op == Op::BREAK) go(tnext, std::move(taken));
        else branch(tnext, std::move(taken), here + 1, st);
        return true;
      }
      case Op::CALL:
      case Op::CALLC:
      case Op::CALLU: {
        Stacks taken = st;
        taken.calls.push_back({uint32_t(in.target + in.num), here + 1});
        if (in.op == Op::CALL) go(in.target, std::move(taken));
        else branch(in.target, std::move(taken), here + 1, st);
        return true;
      }
      case Op::IFU:
      case Op::IFC: {
        Stacks taken = st;
        taken.ifs.push_back({in.target, uint32_t(in.target + in.num)});
        branch(here + 1, std::move(taken), in.target, st);
        return true;
      }
      case Op::LOOP:
        st.loops.push_back({here + 1, uint32_t(in.target + 1), uint32_t(in.uniform & 3)});
        go(here + 1, std::move(st));
        return true;
      case Op::JMPC:
      case Op::JMPU: branch(in.target, st, here + 1, st); return true;
      default: go(here + 1, std::move(st)); return true;
    }
  }

  // ---- phase 2 -----------------------------------------------------------

  void make_vars() {
    f_ = ir::Function{};
    f_.name = "pica200";
    static const char* kComp = "xyzw";
    for (const char* bank : {"v", "o", "r"})
      for (int n = 0; n < 16; ++n)
        for (int c = 0; c < 4; ++c) f_.add_var(std::string(bank) + std::to_string(n) + "." + kComp[c], ir::Type::F32);
    f_.add_var("a0.x", ir::Type::I32);
    f_.add_var("a0.y", ir::Type::I32);
    f_.add_var("aL", ir::Type::I32);
    f_.add_var("cmp.x", ir::Type::I1);
    f_.add_var("cmp.y", ir::Type::I1);
    for (unsigned d = 0; d < Interpreter::kLoopDepth; ++d)
      loop_var_[d] = f_.add_var("loop" + std::to_string(d) + ".remaining", ir::Type::I32);
    static_assert(kVarLoopRemaining == kNumStateVars && kVarEmitLatch == kVarLoopRemaining + Interpreter::kLoopDepth &&
                      kVarEmitCount == kVarEmitLatch + 1,
                  "translate.h's private var numbers follow the order they are added here");
    if (opt_.geometry) {
      f_.add_var("emit.latch", ir::Type::I32);
      f_.add_var("emit.count", ir::Type::I32);
    }
    f_.uniform_bytes = kUniformBytes;
  }

  // Flags of the PICA arithmetic: flushed inputs and results, canonical NaN.
  static constexpr uint32_t kArith = ir::ff::FtzIn | ir::ff::FtzOut;
  static constexpr uint32_t kMul = kArith | ir::ff::ZeroMul;

  ir::ValueId fconst(float x) { return b_.f32_bits(fp::bits(x)); }
  ir::ValueId fadd(ir::ValueId a, ir::ValueId b) { return b_.binary(ir::Opcode::FAdd, a, b, 0, kArith); }
  ir::ValueId fmul(ir::ValueId a, ir::ValueId b) { return b_.binary(ir::Opcode::FMul, a, b, 0, kMul); }
  // fp::out: canonical NaN, flushed; x + -0 is x for every other x.
  ir::ValueId out(ir::ValueId x) { return fadd(x, fconst(-0.0f)); }
  // fp::flush: subnormal -> zero of the same sign, everything else (NaN payloads too) unchanged.
  ir::ValueId flush(ir::ValueId x) {
    ir::ValueId is_zero = b_.fcmp(ir::FloatPred::Oeq, x, fconst(0.0f), ir::ff::FtzIn);
    ir::ValueId bits = b_.convert(ir::Opcode::Bitcast, ir::Type::I32, x);
    ir::ValueId zero = b_.convert(ir::Opcode::Bitcast, ir::Type::F32, b_.binary(ir::Opcode::And, bits, b_.i32(0x80000000u)));
    return b_.select(is_zero, zero, x);
  }
  // fp::round24 in integer ops on the bits.
  ir::ValueId round24(ir::ValueId x) {
    auto op = [&](ir::Opcode o, ir::ValueId a, ir::ValueId c) { return b_.binary(o, a, c); };
    auto k = [&](uint32_t v) { return b_.i32(v); };
    ir::ValueId bits = b_.convert(ir::Opcode::Bitcast, ir::Type::I32, x);
    ir::ValueId special = b_.icmp(ir::IntPred::Eq, op(ir::Opcode::And, bits, k(0x7F800000u)), k(0x7F800000u));
    ir::ValueId sign = op(ir::Opcode::And, bits, k(0x80000000u));
    ir::ValueId mag = op(ir::Opcode::And, bits, k(0x7FFFFFFFu));
    ir::ValueId odd = op(ir::Opcode::And, op(ir::Opcode::LShr, mag, k(7)), k(1));
    mag = op(ir::Opcode::And, op(ir::Opcode::IAdd, op(ir::Opcode::IAdd, mag, k(0x3F)), odd), k(~0x7Fu));
    ir::ValueId e = op(ir::Opcode::LShr, mag, k(23));
    ir::ValueId r = op(ir::Opcode::Or, sign, mag);
    r = b_.select(b_.icmp(ir::IntPred::Uge, e, k(191)), op(ir::Opcode::Or, sign, k(0x7F800000u)), r);
    r = b_.select(b_.icmp(ir::IntPred::Ult, e, k(65)), sign, r);
    r = b_.select(special, bits, r);
    return b_.convert(ir::Opcode::Bitcast, ir::Type::F32, r);
  }
  ir::ValueId uniform_i32(uint32_t offset) { return b_.load_uniform(ir::Type::I32, offset); }
  ir::ValueId bool_uniform(unsigned n) {
    ir::ValueId word = uniform_i32(kUniformBool);
    ir::ValueId bit = b_.binary(ir::Opcode::And, word, b_.i32(1u << (n & 15)));
    return b_.icmp(ir::IntPred::Ne, bit, b_.i32(0));
  }
  ir::ValueId condition(const Instr& in) {
    ir::ValueId x = b_.icmp(ir::IntPred::Eq, b_.get_var(kVarCmpX), b_.i1(in.refx));
    ir::ValueId y = b_.icmp(ir::IntPred::Eq, b_.get_var(kVarCmpY), b_.i1(in.refy));
    switch (in.condop & 3) {
      case 0: return b_.binary(ir::Opcode::Or, x, y);
      case 1: return b_.binary(ir::Opcode::And, x, y);
      case 2: return x;
      default: return y;
    }
  }

  // c[index].comp for a per-lane index in 0..127: a select tree over the
  // index bits (entries 96..127 read as 1.0, as in the interpreter).
  ir::ValueId const_select(ir::ValueId index, unsigned comp) {
    std::vector<ir::ValueId> level(128);
    ir::ValueId one = fconst(1.0f);
    for (unsigned k = 0; k < 128; ++k)
      level[k] = k < 96 ? b_.load_uniform(ir::Type::F32, kUniformFloat + 16 * k + 4 * comp) : one;
    for (unsigned bit = 0; level.size() > 1; ++bit) {
      ir::ValueId set = b_.icmp(ir::IntPred::Ne, b_.binary(ir::Opcode::And, index, b_.i32(1u << bit)), b_.i32(0));
      std::vector<ir::ValueId> next(level.size() / 2);
      for (size_t k = 0; k < next.size(); ++k)
        next[k] = level[2 * k] == level[2 * k + 1] ? level[2 * k] : b_.select(set, level[2 * k + 1], level[2 * k]);
      level = std::move(next);
    }
    return level[0];
  }

  // A source operand after swizzle and negation: 4 values.
  std::array<ir::ValueId, 4> read(unsigned field, bool wide, unsigned idx, const Swizzle& sw) {
    std::array<ir::ValueId, 4> comp{};
    std::array<ir::ValueId, 4> cache{ir::kNoValue, ir::kNoValue, ir::kNoValue, ir::kNoValue};
    auto base_comp = [&](unsigned c) -> ir::ValueId {
      if (cache[c] != ir::kNoValue) return cache[c];
      ir::ValueId v;
      if (field < 0x10) {
        v = b_.get_var(kVarInput + 4 * field + c);
      } else if (field < 0x20) {
        v = b_.get_var(kVarTemp + 4 * (field - 0x10) + c);
      } else if (wide && idx != 0) {
        v = const_select(rel_index(field - 0x20, idx), c);
      } else {
        unsigned n = field - 0x20;
        v = n > 95 ? fconst(1.0f) : b_.load_uniform(ir::Type::F32, kUniformFloat + 16 * n + 4 * c);
      }
      return cache[c] = v;
    };
    for (unsigned i = 0; i < 4; ++i) {
      ir::ValueId v = base_comp(sw.comp[i] & 3);
      comp[i] = sw.negate ? b_.unary(ir::Opcode::FNeg, v) : v;
    }
    return comp;
  }

  // (base + offset) & 0x7F: aL as 0..255, a0.x/a0.y only when in -128..127 (else 0).
  ir::ValueId rel_index(unsigned base, unsigned idx) {
    ir::ValueId offset;
    if (idx == 3) {
      offset = b_.get_var(kVarAL);
    } else {
      ir::ValueId a = b_.get_var(idx == 1 ? kVarA0X : kVarA0Y);
      ir::ValueId in_range = b_.binary(ir::Opcode::And, b_.icmp(ir::IntPred::Sge, a, b_.i32(uint32_t(-128))),
                                       b_.icmp(ir::IntPred::Sle, a, b_.i32(127)));
      offset = b_.select(in_range, a, b_.i32(0));
    }
    return b_.binary(ir::Opcode::And, b_.binary(ir::Opcode::IAdd, offset, b_.i32(base)), b_.i32(0x7F));
  }

  void trap(uint32_t reason, uint32_t addr) {
    b_.emit(ir::Opcode::Trap, ir::Type::Void, {b_.i1(true)}, 0, 0, trap_code(TrapReason(reason), addr));
  }

  // The TrapReason of a fault found by fault_of / static_fault.
  TrapReason fault_reason(uint32_t pc, const std::optional<Instr>& dec) const {
    if (pc >= p_.code.size()) return TrapReason::PastEnd;
    if (!dec) return TrapReason::InvalidInstruction;
    if (num_sources(dec->op) > 0 && dec->desc >= p_.descs.size()) return TrapReason::MissingDescriptor;
    switch (dec->op) {
      case Op::LOOP: return TrapReason::LoopOverflow;
      case Op::IFU: case Op::IFC: return TrapReason::IfOverflow;
      case Op::CALL: case Op::CALLC: case Op::CALLU: return TrapReason::CallOverflow;
      default: return TrapReason::EmitOutsideGeometry;
    }
  }

  // The branch condition of a conditional flow instruction (kNoValue for the others).
  ir::ValueId flow_condition(const Instr& in) {
    switch (in.op) {
      case Op::BREAKC: case Op::CALLC: case Op::IFC: case Op::JMPC: return condition(in);
      case Op::CALLU: case Op::IFU: return bool_uniform(in.uniform);
      case Op::JMPU: {
        // NUM bit 0 set inverts the test: jump when the boolean is false.
        ir::ValueId cond = bool_uniform(in.uniform);
        if (in.num & 1) cond = b_.binary(ir::Opcode::Xor, cond, b_.i1(true));
        return cond;
      }
      default: return ir::kNoValue;
    }
  }

  bool emit_node(uint32_t id, std::string& err) {
    const Node& n = nodes_[id];
    const Edge& e = edges_[id];
    if (n.kind == NodeKind::LoopEnd) {
      const LoopFrame& l = n.st.loops.back();
      uint32_t depth = uint32_t(n.st.loops.size() - 1);
      ir::ValueId step = uniform_i32(kUniformInt + 16 * l.ireg + 8);
      ir::ValueId al = b_.binary(ir::Opcode::IAdd, b_.get_var(kVarAL), step);
      b_.set_var(kVarAL, b_.binary(ir::Opcode::And, al, b_.i32(0xFF)));
      ir::ValueId left = b_.binary(ir::Opcode::ISub, b_.get_var(loop_var_[depth]), b_.i32(1));
      b_.set_var(loop_var_[depth], left);
      finish(e, b_.icmp(ir::IntPred::Eq, left, b_.i32(0)));
      return true;
    }
    std::optional<Instr> dec;
    std::string why = fault_of(n, dec);
    if (!why.empty()) {
      trap(uint32_t(fault_reason(n.pc, dec)), n.pc);
      b_.ret();
      return true;
    }
    const Instr& in = *dec;
    if (num_sources(in.op) > 0) {
      if (!emit_arith(in, n.pc, err)) return false;
      finish(e, ir::kNoValue);
      return true;
    }
    ir::ValueId cond = flow_condition(in);
    switch (in.op) {
      case Op::LOOP: {
        uint32_t base = kUniformInt + 16 * (in.uniform & 3);
        b_.set_var(loop_var_[n.st.loops.size()],
                   b_.binary(ir::Opcode::IAdd, uniform_i32(base), b_.i32(1)));
        b_.set_var(kVarAL, uniform_i32(base + 4));
        break;
      }
      case Op::SETEMIT: b_.set_var(kVarEmitLatch, b_.i32(emit_header(in.vtxid, in.prim, in.winding))); break;
      case Op::EMIT: emit_record(n.pc); break;
      default: break;  // NOP, END, BREAK, CALL
    }
    finish(e, cond);
    return true;
  }

  // An ALU instruction's effect on the registers (no terminator).
  bool emit_arith(const Instr& in, uint32_t here, std::string& err) {
    const OperandDesc d = OperandDesc::decode(p_.descs[in.desc]);
    const unsigned wide = wide_source(in.op);
    const unsigned nsrc = num_sources(in.op);
    std::array<ir::ValueId, 4> s1 = read(in.src1, wide == 1, in.idx, d.src[0]), s2{}, s3{};
    if (nsrc >= 2) s2 = read(in.src2, wide == 2, in.idx, d.src[1]);
    if (nsrc >= 3) s3 = read(in.src3, wide == 3, in.idx, d.src[2]);
    std::array<ir::ValueId, 4> r{};
    auto each = [&](auto fn) { for (int i = 0; i < 4; ++i) if (d.writes(unsigned(i))) r[size_t(i)] = fn(size_t(i)); };
    auto fill = [&](ir::ValueId v) { r.fill(v); };
    auto dp3 = [&] { return fadd(fadd(fmul(s1[0], s2[0]), fmul(s1[1], s2[1])), fmul(s1[2], s2[2])); };
    auto transc = [&](ir::Opcode op) {
      return b_.emit(op, ir::Type::F32, {s1[0]}, uint8_t(ir::Transc::Pica), kArith);
    };
    auto one_zero = [&](ir::FloatPred p, size_t i) {
      return b_.select(b_.fcmp(p, s1[i], s2[i], ir::ff::FtzIn), fconst(1.0f), fconst(0.0f));
    };
    switch (in.op) {
      case Op::ADD: each([&](size_t i) { return fadd(s1[i], s2[i]); }); break;
      case Op::MUL: each([&](size_t i) { return fmul(s1[i], s2[i]); }); break;
      // fp::mad is a flushed, rounded product and then an add: fmul + fadd
      // (fmad would keep a subnormal product unflushed).
      case Op::MAD: case Op::MADI: each([&](size_t i) { return fadd(fmul(s1[i], s2[i]), s3[i]); }); break;
      case Op::DP3: if (d.mask) fill(dp3()); break;
      case Op::DP4: if (d.mask) fill(fadd(dp3(), fmul(s1[3], s2[3]))); break;
      case Op::DPH: case Op::DPHI: if (d.mask) fill(fadd(dp3(), s2[3])); break;
      case Op::DST: case Op::DSTI:
        r = {fconst(1.0f), d.writes(1) ? fmul(s1[1], s2[1]) : ir::kNoValue, d.writes(2) ? out(s1[2]) : ir::kNoValue,
             d.writes(3) ? out(s2[3]) : ir::kNoValue};
        break;
      case Op::EX2: if (d.mask) fill(transc(ir::Opcode::FExp2)); break;
      case Op::LG2: if (d.mask) fill(transc(ir::Opcode::FLog2)); break;
      case Op::RCP: if (d.mask) fill(transc(ir::Opcode::FRcp)); break;
      case Op::RSQ: if (d.mask) fill(transc(ir::Opcode::FRsqrt)); break;
      case Op::LITP: {
        // cmp flags from the unflushed x and w; x, w = max(flush(v), 0) (NaN -> 0);
        // y = flushed, clamped to +-kLitpLimit, NaN canonical; z = 0.
        b_.set_var(kVarCmpX, b_.fcmp(ir::FloatPred::Oge, s1[0], fconst(0.0f)));
        b_.set_var(kVarCmpY, b_.fcmp(ir::FloatPred::Oge, s1[3], fconst(0.0f)));
        auto pos = [&](ir::ValueId v) {
          return b_.binary(ir::Opcode::FMax, v, fconst(0.0f), uint8_t(ir::MinMaxNan::SecondOnNan), kArith);
        };
        ir::ValueId y = out(s1[1]);
        ir::ValueId lim = fconst(fp::kLitpLimit), nlim = fconst(-fp::kLitpLimit);
        y = b_.select(b_.fcmp(ir::FloatPred::Olt, y, nlim), nlim, y);
        y = b_.select(b_.fcmp(ir::FloatPred::Ogt, y, lim), lim, y);
        r = {d.writes(0) ? pos(s1[0]) : ir::kNoValue, y, fconst(0.0f), d.writes(3) ? pos(s1[3]) : ir::kNoValue};
        break;
      }
      case Op::SGE: case Op::SGEI: each([&](size_t i) { return one_zero(ir::FloatPred::Oge, i); }); break;
      case Op::SLT: case Op::SLTI: each([&](size_t i) { return one_zero(ir::FloatPred::Olt, i); }); break;
      case Op::FLR: each([&](size_t i) { return b_.unary(ir::Opcode::FFloor, s1[i], 0, kArith); }); break;
      case Op::MAX:
        // fp::fmax returns the selected operand unflushed and unchanged (NaN payloads too).
        each([&](size_t i) {
          ir::ValueId v = b_.select(b_.fcmp(ir::FloatPred::Ogt, s1[i], s2[i]), s1[i], s2[i]);
          if (opt_.fp.max_inf_quirk) {
            ir::ValueId inf = b_.fcmp(ir::FloatPred::Oeq, b_.unary(ir::Opcode::FAbs, s2[i]), fconst(INFINITY));
            v = b_.select(inf, s2[i], v);
          }
          return v;
        });
        break;
      case Op::MIN:
        // fp::fmin: both flushed, then (a < b) ? a : b; a NaN b is kept as is.
        each([&](size_t i) {
          ir::ValueId lt = b_.fcmp(ir::FloatPred::Olt, s1[i], s2[i], ir::ff::FtzIn);
          return b_.select(lt, flush(s1[i]), flush(s2[i]));
        });
        break;
      case Op::MOV: each([&](size_t i) { return s1[i]; }); break;
      case Op::MOVA: {
        // Truncation toward zero, NaN -> 0, saturating: ftoi.s with rtz.
        uint32_t rtz = ir::with_round(0, ir::Round::TowardZero);
        if (d.writes(0)) b_.set_var(kVarA0X, b_.convert(ir::Opcode::FToI, ir::Type::I32, s1[0], uint8_t(ir::Sign::Signed), rtz));
        if (d.writes(1)) b_.set_var(kVarA0Y, b_.convert(ir::Opcode::FToI, ir::Type::I32, s1[1], uint8_t(ir::Sign::Signed), rtz));
        break;
      }
      case Op::CMP: {
        // Unflushed compares; operators 6 and 7 are always true.
        static constexpr ir::FloatPred kPred[6] = {ir::FloatPred::Oeq, ir::FloatPred::Une, ir::FloatPred::Olt,
                                                   ir::FloatPred::Ole, ir::FloatPred::Ogt, ir::FloatPred::Oge};
        auto cmp = [&](unsigned op, ir::ValueId a, ir::ValueId b) {
          return (op & 7) >= 6 ? b_.i1(true) : b_.fcmp(kPred[op & 7], a, b);
        };
        ir::ValueId x = cmp(in.cmpx, s1[0], s2[0]), y = cmp(in.cmpy, s1[1], s2[1]);
        b_.set_var(kVarCmpX, x);
        b_.set_var(kVarCmpY, y);
        break;
      }
      default:
        err = "pica200: no translation for " + std::string(info(in.op).name) + " at " + hex_addr(here);
        return false;
    }
    if (has_dst(in.op)) {
      uint32_t base = in.dst < 0x10 ? kVarOutput + 4 * in.dst : kVarTemp + 4 * (in.dst - 0x10u);
      for (unsigned i = 0; i < 4; ++i)
        if (d.writes(i)) b_.set_var(base + i, opt_.fp.f24 ? round24(r[i]) : r[i]);
    }
    return true;
  }

  // EMIT: one record (latched header, o0..o15) at the lane's next record slot;
  // unpack_emits turns the records into the vertex buffer and primitives.
  void emit_record(uint32_t here) {
    ir::ValueId count = b_.get_var(kVarEmitCount);
    b_.emit(ir::Opcode::Trap, ir::Type::Void, {b_.icmp(ir::IntPred::Uge, count, b_.i32(kEmitMaxPerInvocation))}, 0, 0,
            trap_code(TrapReason::EmitOverflow, here));
    ir::ValueId lane_base = b_.binary(ir::Opcode::IMul, b_.emit(ir::Opcode::LaneId, ir::Type::I32, {}),
                                      b_.i32(uint32_t(kEmitLaneStride)));
    ir::ValueId rec = b_.binary(ir::Opcode::IAdd, b_.binary(ir::Opcode::IMul, count, b_.i32(kEmitRecordBytes)),
                                b_.binary(ir::Opcode::IAdd, lane_base, b_.i32(uint32_t(kEmitBase))));
    ir::ValueId all = b_.i1(true);
    auto at = [&](uint32_t offset) { return b_.binary(ir::Opcode::IAdd, rec, b_.i32(offset)); };
    b_.store(ir::Space::Global, ir::AddrClass::Random, rec, b_.get_var(kVarEmitLatch), all);
    for (uint32_t k = 0; k < 64; ++k)
      b_.store(ir::Space::Global, ir::AddrClass::Random, at(kEmitHeaderBytes + 4 * k), b_.get_var(kVarOutput + k), all);
    b_.set_var(kVarEmitCount, b_.binary(ir::Opcode::IAdd, count, b_.i32(1)));
  }

  // ---- StackMode::Runtime ------------------------------------------------
  //
  // Every address has one block; the stacks are per-lane vars. Each stack is
  // a shift register: slot 0 is the top, a push moves every slot one down, a
  // pop one up, and an empty slot has the end address kEmptySlot (no address
  // equals it, so the end checks need no depth). A stack is full when its
  // last slot is in use. When an instruction's next address is one some
  // frame could end at (`ends_`: every LOOP's target+1, IF's target, CALL's
  // target+num in the program), control goes through the shared `checks`
  // block (the interpreter's LOOP, IF, CALL end checks as per-lane selects on
  // the pc var) and the `dispatch` block (compares pc with every address
  // control can reach that way); otherwise it branches to the next address's
  // block directly.

  static constexpr uint32_t kEmptySlot = 0xFFFFFFFFu;
  struct RtStack {
    std::vector<std::vector<uint32_t>> fields;  // fields[f][slot] = var; field 0 is the end address
  };

  RtStack make_stack(const char* name, unsigned depth, std::initializer_list<const char*> fields,
                     const uint32_t* reuse_last = nullptr) {
    RtStack st;
    size_t fi = 0;
    for (const char* field : fields) {
      st.fields.emplace_back();
      for (unsigned k = 0; k < depth; ++k) {
        bool reuse = reuse_last && fi + 1 == fields.size();
        st.fields.back().push_back(reuse ? reuse_last[k]
                                         : f_.add_var(std::string(name) + std::to_string(k) + "." + field, ir::Type::I32));
      }
      ++fi;
    }
    return st;
  }
  ir::ValueId top(const RtStack& st, size_t field) { return b_.get_var(st.fields[field][0]); }
  // Traps with `reason` on the lanes whose stack is full.
  void overflow_check(const RtStack& st, TrapReason reason, uint32_t here) {
    ir::ValueId full = b_.icmp(ir::IntPred::Ne, b_.get_var(st.fields[0].back()), b_.i32(kEmptySlot));
    b_.emit(ir::Opcode::Trap, ir::Type::Void, {full}, 0, 0, trap_code(reason, here));
  }
  void push(const RtStack& st, std::initializer_list<ir::ValueId> values) {
    size_t fi = 0;
    for (ir::ValueId v : values) {
      const auto& slots = st.fields[fi++];
      for (size_t k = slots.size() - 1; k > 0; --k) b_.set_var(slots[k], b_.get_var(slots[k - 1]));
      b_.set_var(slots[0], v);
    }
  }
  // Pops the lanes where `cond` holds (kNoValue: all lanes).
  void pop(const RtStack& st, ir::ValueId cond) {
    for (size_t fi = 0; fi < st.fields.size(); ++fi) {
      const auto& slots = st.fields[fi];
      for (size_t k = 0; k < slots.size(); ++k) {
        ir::ValueId below = k + 1 < slots.size() ? b_.get_var(slots[k + 1]) : b_.i32(fi == 0 ? kEmptySlot : 0);
        b_.set_var(slots[k], cond == ir::kNoValue ? below : b_.select(cond, below, b_.get_var(slots[k])));
      }
    }
  }

  // The block that runs address `a` (scheduled for emission on first use).
  ir::BlockId addr_block(uint32_t a) {
    auto it = rt_block_.find(a);
    if (it != rt_block_.end()) return it->second;
    ir::BlockId b = f_.add_block();
    rt_block_.emplace(a, b);
    rt_work_.push_back(a);
    return b;
  }
  // Where control arriving at `a` goes: a's block, or through the end checks.
  ir::BlockId arrive_block(uint32_t a) {
    if (!ends_.count(a)) return addr_block(a);
    auto it = rt_arrive_.find(a);
    if (it != rt_arrive_.end()) return it->second;
    ir::BlockId b = f_.add_block(), saved = b_.block();
    rt_arrive_.emplace(a, b);
    b_.set_block(b);
    b_.set_var(rt_pc_, b_.i32(a));
    b_.br(rt_checks_);
    b_.set_block(saved);
    dispatch_.insert(a);
    addr_block(a);
    return b;
  }
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
  // A reachable dynamic target: its address block is emitted and dispatched to.
  void dynamic_target(uint32_t a) {
    dispatch_.insert(a);
    addr_block(a);
  }

  bool run_runtime(std::string& err) {
    make_vars();
    const unsigned nl = Interpreter::kLoopDepth;
    rt_pc_ = f_.add_var("pc", ir::Type::I32);
    rt_calls_ = make_stack("call", Interpreter::kCallDepth, {"end", "ret"});
    rt_ifs_ = make_stack("if", Interpreter::kIfDepth, {"end", "next"});
    rt_loops_ = make_stack("loop", nl, {"end", "start", "step", "remaining"}, loop_var_);
    // Every address a frame could end at, from every word that decodes.
    for (uint32_t a = 0; a < p_.code.size(); ++a) {
      std::optional<Instr> in = decode(p_.code[a], a, nullptr);
      if (!in) continue;
      if (in->op == Op::LOOP) ends_.insert(uint32_t(in->target + 1));
      if (in->op == Op::IFU || in->op == Op::IFC) ends_.insert(in->target);
      if (in->op == Op::CALL || in->op == Op::CALLC || in->op == Op::CALLU) ends_.insert(uint32_t(in->target + in->num));
    }
    ir::BlockId entry = f_.add_block("entry");
    rt_checks_ = f_.add_block("checks");
    rt_dispatch_ = f_.add_block("dispatch");
    b_.set_block(entry);
    if (opt_.geometry) {
      b_.set_var(kVarEmitLatch, b_.i32(0));
      b_.set_var(kVarEmitCount, b_.i32(0));
    }
    for (const RtStack* st : {&rt_calls_, &rt_ifs_, &rt_loops_})
      for (size_t fi = 0; fi < st->fields.size(); ++fi)
        for (uint32_t v : st->fields[fi]) b_.set_var(v, b_.i32(fi == 0 ? kEmptySlot : 0));
    b_.set_var(rt_pc_, b_.i32(opt_.entry));
    // The entry address gets no end checks, as in the interpreter.
    b_.br(addr_block(opt_.entry));
    while (!rt_work_.empty()) {
      uint32_t a = rt_work_.back();
      rt_work_.pop_back();
      b_.set_block(rt_block_.at(a));
      if (!emit_address(a, err)) return false;
    }
    emit_checks();
    f_.compute_preds();
    return true;
  }

  // The end checks on the pc var (interp.cpp: LOOP, then IF, then CALL, one
  // each), then the dispatch on it.
  void emit_checks() {
    b_.set_block(rt_checks_);
    ir::ValueId pc = b_.get_var(rt_pc_);
    // LOOP: aL += step; count down; back to the start or pop.
    ir::ValueId hit = b_.icmp(ir::IntPred::Eq, top(rt_loops_, 0), pc);
    ir::ValueId al = b_.binary(ir::Opcode::And, b_.binary(ir::Opcode::IAdd, b_.get_var(kVarAL), top(rt_loops_, 2)),
                               b_.i32(0xFF));
    b_.set_var(kVarAL, b_.select(hit, al, b_.get_var(kVarAL)));
    ir::ValueId left = b_.binary(ir::Opcode::ISub, top(rt_loops_, 3), b_.i32(1));
    b_.set_var(rt_loops_.fields[3][0], b_.select(hit, left, top(rt_loops_, 3)));
    ir::ValueId done = b_.binary(ir::Opcode::And, hit, b_.icmp(ir::IntPred::Eq, left, b_.i32(0)));
    ir::ValueId again = b_.binary(ir::Opcode::And, hit, b_.binary(ir::Opcode::Xor, done, b_.i1(true)));
    pc = b_.select(again, top(rt_loops_, 1), pc);
    pop(rt_loops_, done);
    // IF: continue at the frame's next address.
    hit = b_.icmp(ir::IntPred::Eq, top(rt_ifs_, 0), pc);
    pc = b_.select(hit, top(rt_ifs_, 1), pc);
    pop(rt_ifs_, hit);
    // CALL: return.
    hit = b_.icmp(ir::IntPred::Eq, top(rt_calls_, 0), pc);
    pc = b_.select(hit, top(rt_calls_, 1), pc);
    pop(rt_calls_, hit);
    b_.set_var(rt_pc_, pc);
    b_.br(rt_dispatch_);
    // Dispatch: a chain of compares over the addresses control can reach here.
    b_.set_block(rt_dispatch_);
    std::vector<uint32_t> targets(dispatch_.begin(), dispatch_.end());
    for (size_t k = 0; k + 1 < targets.size(); ++k) {
      ir::BlockId next = f_.add_block();
      b_.cond_br(b_.icmp(ir::IntPred::Eq, b_.get_var(rt_pc_), b_.i32(targets[k])), rt_block_.at(targets[k]), next);
      b_.set_block(next);
    }
    if (targets.empty()) b_.ret();  // unreachable: nothing branches to checks
    else b_.br(rt_block_.at(targets.back()));
  }

  bool emit_address(uint32_t a, std::string& err) {
    std::optional<Instr> dec;
    if (!static_fault(a, dec).empty()) {
      trap(uint32_t(fault_reason(a, dec)), a);
      b_.ret();
      return true;
    }
    const Instr& in = *dec;
    if (num_sources(in.op) > 0) {
      if (!emit_arith(in, a, err)) return false;
      rt_arrive(a + 1);
      return true;
    }
    ir::ValueId cond = flow_condition(in);
    auto brk = [&] {
      // Leave the innermost LOOP (its end address), or fall through outside one.
      ir::ValueId in_loop = b_.icmp(ir::IntPred::Ne, top(rt_loops_, 0), b_.i32(kEmptySlot));
      b_.set_var(rt_pc_, b_.select(in_loop, top(rt_loops_, 0), b_.i32(a + 1)));
      pop(rt_loops_, ir::kNoValue);  // an empty stack pops to empty
      dynamic_target(a + 1);
      rt_arrive_dynamic();
    };
    auto call = [&] {
      overflow_check(rt_calls_, TrapReason::CallOverflow, a);
      push(rt_calls_, {b_.i32(in.target + in.num), b_.i32(a + 1)});
      dynamic_target(a + 1);
      rt_arrive(in.target);
    };
    switch (in.op) {
      case Op::END: b_.ret(); return true;
      case Op::BREAK: brk(); return true;
      case Op::BREAKC: b_.cond_br(cond, side_block(brk), arrive_block(a + 1)); return true;
      case Op::CALL: call(); return true;
      case Op::CALLC: case Op::CALLU: b_.cond_br(cond, side_block(call), arrive_block(a + 1)); return true;
      case Op::IFU: case Op::IFC: {
        ir::BlockId taken = side_block([&] {
          overflow_check(rt_ifs_, TrapReason::IfOverflow, a);
          push(rt_ifs_, {b_.i32(in.target), b_.i32(in.target + in.num)});
          dynamic_target(uint32_t(in.target + in.num));
          rt_arrive(a + 1);
        });
        b_.cond_br(cond, taken, arrive_block(in.target));
        return true;
      }
      case Op::LOOP: {
        overflow_check(rt_loops_, TrapReason::LoopOverflow, a);
        uint32_t base = kUniformInt + 16 * (in.uniform & 3);
        b_.set_var(kVarAL, uniform_i32(base + 4));
        push(rt_loops_, {b_.i32(in.target + 1), b_.i32(a + 1), uniform_i32(base + 8),
                         b_.binary(ir::Opcode::IAdd, uniform_i32(base), b_.i32(1))});
        dynamic_target(a + 1);
        dynamic_target(uint32_t(in.target + 1));
        rt_arrive(a + 1);
        return true;
      }
      case Op::JMPC: case Op::JMPU: b_.cond_br(cond, arrive_block(in.target), arrive_block(a + 1)); return true;
      case Op::SETEMIT: b_.set_var(kVarEmitLatch, b_.i32(emit_header(in.vtxid, in.prim, in.winding))); break;
      case Op::EMIT: emit_record(a); break;
      default: break;  // NOP
    }
    rt_arrive(a + 1);
    return true;
  }

  // The node's terminator, or nothing when the next node continues this block.
  void finish(const Edge& e, ir::ValueId cond) {
    switch (e.exit) {
      case Exit::Return: b_.ret(); break;
      case Exit::Goto:
        if (block_of_[e.succ[0]] != ir::kNoBlock) b_.br(block_of_[e.succ[0]]);
        break;
      case Exit::Branch: b_.cond_br(cond, block_of_[e.succ[0]], block_of_[e.succ[1]]); break;
    }
  }

  const Program& p_;
  const TranslateOptions& opt_;
  ir::Function& f_;
  ir::Builder b_;
  std::vector<Node> nodes_;
  std::vector<Edge> edges_;
  std::unordered_map<std::vector<uint32_t>, uint32_t, KeyHash> index_;
  std::vector<ir::BlockId> block_of_;
  uint32_t loop_var_[Interpreter::kLoopDepth] = {};
  bool too_complex_ = false;
  // StackMode::Runtime
  uint32_t rt_pc_ = 0;
  RtStack rt_calls_, rt_ifs_, rt_loops_;
  std::set<uint32_t> ends_, dispatch_;
  std::map<uint32_t, ir::BlockId> rt_block_, rt_arrive_;
  std::vector<uint32_t> rt_work_;
  ir::BlockId rt_checks_ = ir::kNoBlock, rt_dispatch_ = ir::kNoBlock;
};

}  // namespace

uint64_t trap_code(TrapReason r, uint32_t addr) { return (uint64_t(r) << 16) | (addr & 0xFFFF); }

static_assert(kEmitMaxPerInvocation == 64, "the EmitOverflow message below names the limit");

std::string describe_trap(uint64_t code) {
  uint32_t addr = uint32_t(code & 0xFFFF);
  const char* what = "unknown fault";
  switch (TrapReason(code >> 16)) {
    case TrapReason::InvalidInstruction: what = "invalid instruction"; break;
    case TrapReason::PastEnd: what = "execution ran past the end of the program"; break;
    case TrapReason::MissingDescriptor: what = "operand descriptor is not loaded"; break;
    case TrapReason::CallOverflow: what = "CALL stack overflow (depth 4)"; break;
    case TrapReason::IfOverflow: what = "IF stack overflow (depth 8)"; break;
    case TrapReason::LoopOverflow: what = "LOOP stack overflow (depth 4)"; break;
    case TrapReason::EmitOutsideGeometry: what = "SETEMIT/EMIT outside a geometry shader"; break;
    case TrapReason::EmitOverflow: what = "EMIT limit of the JIT exceeded (more than 64 EMITs in one invocation)"; break;
  }
  return std::string("pica200: ") + what + " at " + hex_addr(addr);
}

bool translate(const Program& p, const TranslateOptions& opt, ir::Function& out, std::string& err) {
  if (p.code.size() > 4096 || p.descs.size() > 128) {
    err = "pica200: program too large (at most 4096 words and 128 operand descriptors)";
    return false;
  }
  Translator t(p, opt, out);
  if (!t.run(err)) {
    out = ir::Function{};
    return false;
  }
  std::string v = ir::verify(out);
  if (!v.empty()) {
    err = "pica200: translation produced invalid IR (a translator bug): " + v;
    out = ir::Function{};
    return false;
  }
  return true;
}

}  // namespace gpurc::pica
