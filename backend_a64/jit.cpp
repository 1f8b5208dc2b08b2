// compile(): runs the emitter on an asmjit CodeHolder, installs the code in
// dual-mapped executable memory (backend_common/exec_memory: RW view written,
// RX view run, instruction cache flushed) and wraps it as an ir::Executable;
// plus the listing (asmjit's AArch64 formatter) and the HostTier.
#include "backend_a64/jit.h"

#include <cstdio>
#include <cstring>

#include "backend_a64/emitter.h"
#include "backend_common/installed_code.h"

namespace gpurc::a64 {

bool host_supports_neon() {
#if defined(__aarch64__)
  return true;  // Advanced SIMD is mandatory in AArch64
#else
  return false;
#endif
}

namespace {

// Records asmjit's first error (an operand the encoder rejects, an
// out-of-range branch) so compile() fails with its text.
struct RecordErrors : asmjit::ErrorHandler {
  asmjit::Error first = asmjit::kErrorOk;
  std::string message;
  void handleError(asmjit::Error err, const char* msg, asmjit::BaseEmitter*) override {
    if (first == asmjit::kErrorOk) {
      first = err;
      message = msg ? msg : asmjit::DebugUtils::errorAsString(err);
    }
  }
};

// The listing: asmjit logs an instruction before advancing past it and a
// label when binding it, so both start at the current offset; embedded data
// is logged after it is written, so it starts where the previous item ended.
struct ListingLogger : asmjit::Logger {
  const asmjit::BaseAssembler* a = nullptr;
  std::string out;
  size_t last_end = 0;
  asmjit::Error _log(const char* data, size_t size) noexcept override {
    if (size == SIZE_MAX) size = std::strlen(data);
    std::string text(data, size);
    const size_t end = a->offset();
    size_t pos = 0;
    while (pos < text.size()) {
      size_t nl = text.find('\n', pos);
      std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
      pos = nl == std::string::npos ? text.size() : nl + 1;
      size_t first = line.find_first_not_of(' ');
      if (first == std::string::npos) continue;
      char head[32];
      bool data = line[first] == '.';
      std::snprintf(head, sizeof head, "%8zx  ", data ? last_end : end);
      out += head + line.substr(first) + "\n";
    }
    last_end = end;
    return asmjit::kErrorOk;
  }
};

struct Emitted {
  std::vector<uint8_t> bytes;
  uint32_t frame = 0;
  std::vector<std::unique_ptr<rt::EvalOp>> eval_ops;
  std::vector<std::unique_ptr<rt::WarpOp>> warp_ops;
};

// Emits f; with `listing`, also its text. Returns an error message or "".
std::string emit(const ir::Function& f, Emitted& out, std::string* listing) {
  asmjit::CodeHolder code;
  code.init(asmjit::Environment(asmjit::Arch::kAArch64));
  RecordErrors errors;
  code.setErrorHandler(&errors);
  ListingLogger logger;
  if (listing) {
    logger.addFlags(asmjit::FormatFlags::kHexImms);
    code.setLogger(&logger);
  }
  RegAssembler a(&code);
  logger.a = &a;
  try {
    Emitter e(f, a);
    e.emit_function();
    out.frame = e.frame_bytes();
    out.eval_ops = std::move(e.eval_ops);
    out.warp_ops = std::move(e.warp_ops);
  } catch (const CompileError& ex) {
    return ex.what();
  }
  if (errors.first != asmjit::kErrorOk) return "a64 jit: assembler: " + errors.message;
  code.flatten();
  code.resolveUnresolvedLinks();
  if (errors.first != asmjit::kErrorOk) return "a64 jit: assembler: " + errors.message;
  const asmjit::CodeBuffer& buf = code.textSection()->buffer();
  out.bytes.assign(buf.data(), buf.data() + buf.size());
  if (listing) *listing = std::move(logger.out);
  return "";
}

class JitFunction final : public backend::InstalledCode {
 public:
  ir::Function source;  // for the listing (disassemble re-runs the emitter with asmjit's logger)

  // The emitter is deterministic: the same function gives the same
  // instructions at the same offsets; only the helper descriptors' addresses
  // (movz/movk immediates) are those of the listing's own copies.
  std::string disassemble() const override {
    Emitted again;
    std::string listing;
    std::string err = emit(source, again, &listing);
    if (!err.empty()) return err + "\n";
    if (again.bytes.size() != mem.size()) listing += "(listing size differs from the installed code)\n";
    return listing;
  }
};

}  // namespace

std::unique_ptr<backend::CompiledCode> compile(const ir::Function& f, const backend::CompileOptions& opt,
                                               std::string* error) {
  auto fail = [&](const std::string& msg) -> std::unique_ptr<backend::CompiledCode> {
    if (error) *error = msg;
    return nullptr;
  };
  if (f.blocks.empty()) return fail("a64 jit: function has no blocks");
  for (const auto& b : f.blocks)
    for (ir::ValueId v : b.insts) {
      if (v >= f.insts.size()) return fail("a64 jit: block lists unknown value %" + std::to_string(v));
      const ir::Inst& in = f.insts[v];
      for (ir::ValueId a : in.args)
        if (a >= f.insts.size()) return fail("a64 jit: %" + std::to_string(v) + " reads unknown value");
      if (in.op == ir::Opcode::GetVar || in.op == ir::Opcode::SetVar)
        return fail("a64 jit: %" + std::to_string(v) + ": " + std::string(ir::op_name(in.op)) +
                    " (run ir::run_pipeline first)");
    }
  for (const auto& b : f.blocks)
    for (ir::BlockId s : b.succs)
      if (s >= f.blocks.size()) return fail("a64 jit: branch to unknown block");

  Emitted e;
  std::string err = emit(f, e, nullptr);
  if (!err.empty()) return fail(err);
  auto fn = std::make_unique<JitFunction>();
  if (!fn->mem.install(e.bytes.data(), e.bytes.size(), &err)) return fail(err);
  fn->source = f;
  fn->frame = e.frame;
  fn->var_reads = backend::var_read_ranges_of(f);
  fn->eval_ops = std::move(e.eval_ops);
  fn->warp_ops = std::move(e.warp_ops);
  if (opt.perf_map) backend::append_perf_map(fn->mem.entry(), fn->mem.size(), opt.symbol);
  if (backend::installed_listings_on())
        backend::append_installed_listing(fn->mem.entry(), "a64", fn->disassemble());
  return fn;
}

namespace {

constexpr backend::HostTier kNeonTier{"jit-a64", "a64", "AArch64 Advanced SIMD (NEON)", uint32_t(Emitter::kStripLanes),
                                      host_supports_neon, compile, &kNativeNeon};
constexpr const backend::HostTier* kTiers[] = {&kNeonTier};

}  // namespace

const backend::HostTier* const* tiers(size_t& count) {
  count = std::size(kTiers);
  return kTiers;
}

}  // namespace gpurc::a64
