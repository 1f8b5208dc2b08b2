// compile(): runs the emitter, installs the code, and wraps it as an
// ir::Executable; plus host feature detection, disassembly and the perf map.
#include "backend_x64/jit.h"

#include <Zydis/Zydis.h>
#include <xbyak/xbyak_util.h>

#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "backend_x64/emitter.h"
#include "backend_common/installed_code.h"
#include "ir/compile_stages.h"

namespace gpurc::x64 {

const char* tier_name(Tier t) { return t == Tier::Avx512 ? "avx512" : "avx2"; }

bool host_supports(Tier t) {
  using Xbyak::util::Cpu;
  static const Cpu cpu;  // reads CPUID and XCR0 (OS-enabled register state)
  bool avx2 = cpu.has(Cpu::tAVX2) && cpu.has(Cpu::tFMA);
  if (t == Tier::Avx2) return avx2;
  // GPURC_X64_HIDE_AVX512=1 reports the tier missing: an AVX-512 machine then
  // runs the tests, fuzzers and benchmarks the way a host without it does
  // (AVX-512 code compiled for listings only; docs/testing.md).
  static const bool hidden = [] {
    const char* e = std::getenv("GPURC_X64_HIDE_AVX512");
    return e && *e && std::string_view(e) != "0";
  }();
  return !hidden && avx2 && cpu.has(Cpu::tAVX512F) && cpu.has(Cpu::tAVX512BW) && cpu.has(Cpu::tAVX512DQ) &&
         cpu.has(Cpu::tAVX512VL) && cpu.has(Cpu::tAVX512CD);
}

namespace {

// Disassembled with Zydis; the rest is backend::InstalledCode.
class JitFunction final : public backend::InstalledCode {
 public:
  std::string disassemble() const override {
    std::string out;
    const uint8_t* p = mem.entry();
    size_t off = 0, n = mem.size();
    char line[160];
    while (off < n) {
      ZydisDisassembledInstruction insn;
      if (!ZYAN_SUCCESS(ZydisDisassembleIntel(ZYDIS_MACHINE_MODE_LONG_64, uint64_t(uintptr_t(p + off)), p + off,
                                              n - off, &insn))) {
        std::snprintf(line, sizeof line, "%8zx  db 0x%02x\n", off, p[off]);
        out += line;
        ++off;
        continue;
      }
      std::snprintf(line, sizeof line, "%8zx  %s\n", off, insn.text);
      out += line;
      off += insn.info.length;
    }
    return out;
  }
};

}  // namespace

std::unique_ptr<CompiledFunction> compile(const ir::Function& f, const JitOptions& opt, std::string* error) {
  auto fail = [&](const std::string& msg) -> std::unique_ptr<CompiledFunction> {
    if (error) *error = msg;
    return nullptr;
  };
  if (!host_supports(opt.tier) && !opt.listing_only) return fail(std::string("x64 jit: host lacks ") + tier_name(opt.tier));
  if (f.blocks.empty()) return fail("x64 jit: function has no blocks");
  ir::StageTimer check_time("backend input checks");
  for (const auto& b : f.blocks)
    for (ir::ValueId v : b.insts) {
      if (v >= f.insts.size()) return fail("x64 jit: block lists unknown value %" + std::to_string(v));
      const ir::Inst& in = f.insts[v];
      for (ir::ValueId a : in.args)
        if (a >= f.insts.size()) return fail("x64 jit: %" + std::to_string(v) + " reads unknown value");
      if (in.op == ir::Opcode::GetVar || in.op == ir::Opcode::SetVar)
        return fail("x64 jit: %" + std::to_string(v) + ": " + std::string(ir::op_name(in.op)) +
                    " (run ir::run_pipeline first)");
    }
  for (const auto& b : f.blocks)
    for (ir::BlockId s : b.succs)
      if (s >= f.blocks.size()) return fail("x64 jit: branch to unknown block");

  check_time.stop();
  size_t max_code = 65536 + f.insts.size() * 512;
  // The constant pool sits below the code (ConstPool): room for the
  // lowerings' own constants and a few per IR constant; a function needing
  // more compiles again with twice the room.
  // (Plus a 32-byte record per fault site, Emitter::FaultSite: one per uniform load.)
  size_t consts = 0, uniform_loads = 0;
  for (const ir::Inst& in : f.insts) {
    consts += in.op == ir::Opcode::Const && in.block != ir::kNoBlock;
    uniform_loads += in.op == ir::Opcode::LoadUniform && in.block != ir::kNoBlock;
  }
  size_t pool_bytes = 8192 + consts * 256 + uniform_loads * 32;
  // The assembly buffer is reused by the thread's next compile (the code is
  // copied into executable memory by install), so a compile maps no memory.
  // It is not zeroed: every byte installed is written first (code, pool
  // constants) or is alignment padding that no code reads, and a reused
  // buffer holds the last compile's bytes anyway. (Zeroing the 1-2 MB the
  // first compile of a thread asks for cost ~2% of an average compile.)
  struct AsmBuffer {
    std::unique_ptr<uint8_t[]> data;
    size_t size = 0;
    uint8_t* get(size_t n) {
      if (size < n) {
        data.reset(new uint8_t[n]);  // default-initialised: not zeroed
        size = n;
      }
      return data.get();
    }
  };
  thread_local AsmBuffer buffer;
  for (int attempt = 0; attempt < 8; ++attempt) {
    try {
      // Very large functions assemble in a buffer of their own, not kept.
      constexpr size_t kKeptBuffer = size_t(8) << 20;
      const size_t total = pool_bytes + 64 + max_code;
      AsmBuffer own;
      AsmBuffer& buf = total <= kKeptBuffer ? buffer : own;
      ir::StageTimer setup_time("emitter set-up");
      uint8_t* const base = buf.get(total);
      // The code starts 64-byte aligned; the pool's vector constants keep
      // their alignment in the installed copy (executable memory is
      // allocated in 64-byte granules).
      uint8_t* code = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(base) + pool_bytes + 63) & ~uintptr_t(63));
      Emitter e(f, opt.tier, max_code, code, base);
      setup_time.stop();
      {
        ir::StageTimer t("emit (lowering, register cache)");
        e.emit_function();
      }
      {
        ir::StageTimer t("resolve labels");
        e.ready();
      }
      ir::StageTimer install_time("install in executable memory");
      const uint8_t* first = reinterpret_cast<const uint8_t*>(reinterpret_cast<uintptr_t>(e.pool_lowest()) & ~uintptr_t(63));
      const size_t entry = size_t(code - first);
      auto fn = std::make_unique<JitFunction>();
      std::string err;
      if (!fn->mem.install(first, entry + e.getSize(), &err, entry)) return fail(err);
      install_time.stop();
      ir::StageTimer finish_time("var read ranges, descriptors");
      fn->frame = e.frame_bytes();
      if (e.warp_loop_entry() != Emitter::kNoWarpLoop) fn->warp_loop_entry = e.warp_loop_entry();
      if (e.draw_loop_entry() != Emitter::kNoWarpLoop) {
        fn->draw_loop_entry = e.draw_loop_entry();
        fn->draw_stub = e.draw_stub_getter();
      }
      fn->var_reads = backend::var_read_ranges_of(f);
      fn->eval_ops = std::move(e.eval_ops);
      fn->warp_ops = std::move(e.warp_ops);
      if (opt.perf_map) backend::append_perf_map(fn->mem.entry(), fn->mem.size(), opt.symbol);
      if (backend::installed_listings_on())
        backend::append_installed_listing(fn->mem.entry(), "x64", fn->disassemble());
      return fn;
    } catch (const CompileError& ex) {
      return fail(ex.what());
    } catch (const ConstPool::Full&) {
      pool_bytes *= 2;
    } catch (const Xbyak::Error& ex) {
      if (int(ex) != Xbyak::ERR_CODE_IS_TOO_BIG) return fail(std::string("x64 jit: assembler: ") + ex.what());
      max_code *= 2;
    }
  }
  return fail("x64 jit: function too large");
}

}  // namespace gpurc::x64

namespace gpurc::x64 {

namespace {

template <Tier T>
std::unique_ptr<backend::CompiledCode> compile_tier(const ir::Function& f, const backend::CompileOptions& opt,
                                                    std::string* error) {
  JitOptions jo;
  jo.tier = T;
  jo.perf_map = opt.perf_map;
  jo.symbol = opt.symbol;
  return compile(f, jo, error);
}

// Constant-initialized, so the registry may read them during static initialization.
constexpr backend::HostTier kAvx512Tier{"jit-avx512", "x64", "AVX-512 F/BW/DQ/VL/CD", 16,
                                        [] { return host_supports(Tier::Avx512); }, compile_tier<Tier::Avx512>,
                                        &kNativeAvx512};
constexpr backend::HostTier kAvx2Tier{"jit-avx2", "x64", "AVX2 and FMA", 8, [] { return host_supports(Tier::Avx2); },
                                      compile_tier<Tier::Avx2>, &kNativeAvx2};
constexpr const backend::HostTier* kTiers[] = {&kAvx512Tier, &kAvx2Tier};

}  // namespace

const backend::HostTier* const* tiers(size_t& count) {
  count = std::size(kTiers);
  return kTiers;
}

}  // namespace gpurc::x64
