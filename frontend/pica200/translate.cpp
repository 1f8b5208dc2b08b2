// PICA200 -> IR translation: the driver, the vars, faults and flow conditions
// (translate_impl.h lists the other parts; docs/pica200.md "Translation"
// gives the mapping).
#include <string>

#include "frontend/pica200/translate_impl.h"
#include "ir/verify_policy.h"

namespace gpurc::pica {
namespace detail {

bool Translator::run(std::string& err) {
  if (opt_.stacks == StackMode::Runtime) return run_runtime(err);
  if (!run_static(err)) {
    if (opt_.stacks == StackMode::Static || !too_complex_) return false;
    // Too many (address, stack) states: translate with runtime stacks instead.
    nodes_.clear();
    edges_.clear();
    node_instr_.clear();
    node_fault_.clear();
    index_.clear();
    flat_index_.clear();
    block_of_.clear();
    err.clear();
    return run_runtime(err);
  }
  return true;
}

void Translator::make_vars() {
  f_ = ir::Function{};
  b_.reset();
  f_.name = "pica200";
  // The var list is the same for every vertex shader (geometry shaders add
  // two): built once, copied per translation (cheaper than building names).
  static const ir::Function kVars = [] {
    static const char* kComp = "xyzw";
    ir::Function v;
    v.vars.reserve(kNumStateVars + Interpreter::kLoopDepth + 2);
    for (const char* bank : {"v", "o", "r"})
      for (int n = 0; n < 16; ++n)
        for (int c = 0; c < 4; ++c) v.add_var(std::string(bank) + std::to_string(n) + "." + kComp[c], ir::Type::F32);
    v.add_var("a0.x", ir::Type::I32);
    v.add_var("a0.y", ir::Type::I32);
    v.add_var("aL", ir::Type::I32);
    v.add_var("cmp.x", ir::Type::I1);
    v.add_var("cmp.y", ir::Type::I1);
    for (unsigned d = 0; d < Interpreter::kLoopDepth; ++d)
      v.add_var("loop" + std::to_string(d) + ".remaining", ir::Type::I32);
    return v;
  }();
  static_assert(kVarLoopRemaining == kNumStateVars && kVarEmitLatch == kVarLoopRemaining + Interpreter::kLoopDepth &&
                    kVarEmitCount == kVarEmitLatch + 1,
                "translate.h's private var numbers follow the order they are added here");
  // Room for what the translation adds (the static translation's loop step
  // vars, the geometry emit vars, the runtime stacks' first vars) before the
  // copy: growing past it would move every var's name again.
  f_.vars.reserve(kVars.vars.size() + Interpreter::kLoopDepth + 8);
  f_.vars = kVars.vars;
  for (unsigned d = 0; d < Interpreter::kLoopDepth; ++d) loop_var_[d] = kVarLoopRemaining + d;
  if (opt_.geometry) {
    f_.add_var("emit.latch", ir::Type::I32);
    f_.add_var("emit.count", ir::Type::I32);
  }
  f_.uniform_bytes = kUniformBytes;
  // Every runner of a vertex shader (run_draw, run_vertices' launch hooks)
  // moves only launched lanes out of the var area and never reads the
  // others, so their state is don't-care (ir::Function::unlaunched_lanes_free:
  // no select against entry_mask per var store). Geometry shaders keep the
  // default.
  f_.unlaunched_lanes_free = !opt_.geometry;
}

bool Translator::static_fault(uint32_t pc, std::optional<Instr>& dec) {
  if (pc >= p_.code.size()) return true;  // past the end of the program
  dec = decode(p_.code[pc], pc);
  if (!dec) return true;  // invalid instruction
  const Instr& in = *dec;
  if (num_sources(in.op) > 0 && in.desc >= p_.descs.size()) return true;  // descriptor not loaded
  return (in.op == Op::SETEMIT || in.op == Op::EMIT) && !opt_.geometry;  // EMIT outside a geometry shader
}

bool Translator::fault_of(const Node& n, std::optional<Instr>& dec) {
  if (static_fault(n.pc, dec)) return true;
  switch (dec->op) {  // stack overflows
    case Op::CALL: case Op::CALLC: case Op::CALLU: return n.st.calls.size() == Interpreter::kCallDepth;
    case Op::IFU: case Op::IFC: return n.st.ifs.size() == Interpreter::kIfDepth;
    case Op::LOOP: return n.st.loops.size() == Interpreter::kLoopDepth;
    default: return false;
  }
}

// The TrapReason of a fault found by fault_of / static_fault.
TrapReason Translator::fault_reason(uint32_t pc, const std::optional<Instr>& dec) const {
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

ir::ValueId Translator::condition(const Instr& in) {
  ir::ValueId x = b_.icmp(ir::IntPred::Eq, b_.get_var(kVarCmpX), b_.i1(in.refx));
  ir::ValueId y = b_.icmp(ir::IntPred::Eq, b_.get_var(kVarCmpY), b_.i1(in.refy));
  switch (in.condop & 3) {
    case 0: return b_.or_(x, y);
    case 1: return b_.and_(x, y);
    case 2: return x;
    default: return y;
  }
}

// The branch condition of a conditional flow instruction (kNoValue for the others).
ir::ValueId Translator::flow_condition(const Instr& in) {
  switch (in.op) {
    case Op::BREAKC: case Op::CALLC: case Op::IFC: case Op::JMPC: return condition(in);
    case Op::CALLU: case Op::IFU: return bool_uniform(in.uniform);
    case Op::JMPU: {
      // NUM bit 0 set inverts the test: jump when the boolean is false.
      ir::ValueId cond = bool_uniform(in.uniform);
      if (in.num & 1) cond = b_.xor_(cond, b_.i1(true));
      return cond;
    }
    default: return ir::kNoValue;
  }
}

}  // namespace detail

using detail::hex_addr;

uint64_t trap_code(TrapReason r, uint32_t addr) { return (uint64_t(r) << 16) | (addr & 0xFFFF); }

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
    case TrapReason::EmitOverflow: what = "EMIT limit of the JIT exceeded (more EMITs in one invocation than the record area holds)"; break;
  }
  return std::string("pica200: ") + what + " at " + hex_addr(addr);
}

bool translate(const Program& p, const TranslateOptions& opt, ir::Function& out, std::string& err) {
  if (p.code.size() > 4096 || p.descs.size() > 128) {
    err = "pica200: program too large (at most 4096 words and 128 operand descriptors)";
    return false;
  }
  detail::Translator t(p, opt, out);
  if (!t.run(err)) {
    out = ir::Function{};
    return false;
  }
  // Verified unless the build's policy leaves IR built in code unchecked
  // (release builds outside tests and fuzzing: ir/verify_policy.h).
  if (!ir::verify_built_ir()) return true;
  std::string v = ir::verify(out);
  if (!v.empty()) {
    err = "pica200: translation produced invalid IR (a translator bug): " + v;
    out = ir::Function{};
    return false;
  }
  return true;
}

}  // namespace gpurc::pica
