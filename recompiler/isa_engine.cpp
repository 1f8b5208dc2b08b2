#include "recompiler/isa_engine.h"

namespace gpurc {

bool EngineAsHandle::compile(const ir::Function& f, const std::string& symbol, isa::Compiled& out,
                             std::string& err) const {
  IrCompileOptions opt;
  opt.symbol = symbol;
  opt.input_verified = input_verified_;
  CompiledIr c;
  if (!compile_ir(f, engine_, opt, c, err)) return false;
  out.exe = c.exe;
  out.vars_bytes = c.vars_bytes;
  out.compile_us = c.compile_us;
  out.max_step_cost = c.max_step_cost;
  return true;
}

}  // namespace gpurc
