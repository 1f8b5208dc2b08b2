// Whether IR that a frontend builds in code (pica::translate's output) is
// verified before it is compiled. IR from text (ir::parse, replays) and
// every function given to compile_ir without IrCompileOptions::input_verified
// is verified whatever this says. docs/architecture.md ("Verifying built IR")
// gives the reasons for the default.
#pragma once

namespace gpurc::ir {

// On in builds with assertions (no NDEBUG) and sanitizer builds, off in
// release builds; the environment variable GPURC_VERIFY_IR=1 (or 0) overrides
// the default, set_verify_built_ir() overrides both. The test runner and
// `gpurc fuzz` turn it on.
bool verify_built_ir();
void set_verify_built_ir(bool on);

}  // namespace gpurc::ir
