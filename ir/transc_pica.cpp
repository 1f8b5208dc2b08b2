// Transc::Pica: the PICA200 RCP/RSQ/EX2/LG2 (f32 only). The definitions are
// those of the reference interpreter, the float model in transc_pica.h
// (pica_fp::rcp etc.), called directly so the interpreter and every IR engine
// agree by construction.
//
// The caller has applied FtzIn; fp:: flushes its input again (idempotent) and
// returns canonical NaNs and flushed results, so the op's flags (canonical NaN
// rule, FtzOut) leave these results unchanged.
#include "ir/transc_pica.h"

#include "ir/transc.h"

namespace gpurc::ir::transc {

bool pica_defines(Opcode op, Type t) {
  if (t != Type::F32) return false;
  return op == Opcode::FRcp || op == Opcode::FRsqrt || op == Opcode::FExp2 || op == Opcode::FLog2;
}

uint64_t pica(const LaneOp& o, uint64_t a, uint64_t) {
  namespace fp = pica_fp;
  float x = fp::from_bits(uint32_t(a));
  float r;
  switch (o.op) {
    case Opcode::FRcp: r = fp::rcp(x); break;
    case Opcode::FRsqrt: r = fp::rsq(x); break;
    case Opcode::FExp2: r = fp::ex2(x); break;
    case Opcode::FLog2: r = fp::lg2(x); break;
    default: return 0;  // pica_defines said no; eval_lane reports it
  }
  return fp::bits(r);
}

}  // namespace gpurc::ir::transc
