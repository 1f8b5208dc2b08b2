#include "recompiler/isa_engine.h"

namespace gpurc {

namespace {

bool compile_through(const ir::Function& f, ir::Function* owned, Engine engine, bool input_verified,
                     const rt::CacheKey* identity, const std::string& symbol, isa::Compiled& out, std::string& err) {
  IrCompileOptions opt;
  opt.symbol = symbol;
  opt.input_verified = input_verified;
  opt.identity = identity;
  CompiledIr c;
  if (!(owned ? compile_ir(std::move(*owned), engine, opt, c, err) : compile_ir(f, engine, opt, c, err))) return false;
  out.exe = c.exe;
  out.vars_bytes = c.vars_bytes;
  out.compile_us = c.compile_us;
  out.max_step_cost = c.max_step_cost;
  return true;
}

}  // namespace

bool EngineAsHandle::compile(const ir::Function& f, const std::string& symbol, isa::Compiled& out,
                             std::string& err) const {
  return compile_through(f, nullptr, engine_, input_verified_, identity_, symbol, out, err);
}

bool EngineAsHandle::compile_owned(ir::Function& f, const std::string& symbol, isa::Compiled& out,
                                   std::string& err) const {
  return compile_through(f, &f, engine_, input_verified_, identity_, symbol, out, err);
}

}  // namespace gpurc
