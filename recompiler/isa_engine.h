// recompiler's engines as the ISA modules see them (isa::EngineHandle), and
// back: the bridge between the engine registry (recompiler/engine.h) and
// isa/module.h, so no module names a tier.
#pragma once
#include "isa/module.h"
#include "recompiler/engine.h"

namespace gpurc {

class EngineAsHandle final : public isa::EngineHandle {
 public:
  explicit EngineAsHandle(Engine resolved) : engine_(resolved) {}
  // `input_verified`: every function given to compile() has passed ir::verify
  // already (the caller's translation verifies its output), so compile_ir
  // skips its own check (IrCompileOptions::input_verified).
  EngineAsHandle(Engine resolved, bool input_verified) : engine_(resolved), input_verified_(input_verified) {}
  // `identity` (kept by pointer: it must outlive the handle's compile calls):
  // the caller's key for the one function this handle will compile
  // (IrCompileOptions::identity); null hashes the function.
  EngineAsHandle(Engine resolved, bool input_verified, const rt::CacheKey* identity)
      : engine_(resolved), input_verified_(input_verified), identity_(identity) {}
  std::string name() const override { return engine_name(engine_); }
  bool is_reference() const override { return engine_ == Engine::Interp; }
  bool compile(const ir::Function& f, const std::string& symbol, isa::Compiled& out, std::string& err) const override;
  bool compile_owned(ir::Function& f, const std::string& symbol, isa::Compiled& out, std::string& err) const override;
  Engine engine() const { return engine_; }

 private:
  Engine engine_;
  bool input_verified_ = false;
  const rt::CacheKey* identity_ = nullptr;
};

}  // namespace gpurc
