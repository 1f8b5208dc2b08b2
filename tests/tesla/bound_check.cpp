// A bound check, `(p) bra #done` over the body with `done: exit nop`, in a
// launch whose state is private (tesla_run's JIT runs: fresh_launch +
// discard_state): the body's unpredicated register writes carry no select
// for the exiting lanes (Translator::emit_if, free_writes_under). The
// results must match the interpreter on every engine, with partial warps
// (blocks of 40 threads), lanes exiting in the middle of a warp, predicated
// words and flags in the body, and a body with a quad op, which reads the
// exiting lanes' registers and so keeps the selects.
#include <cstring>

#include "frontend/tesla/module/launch.h"
#include "frontend/tesla/translate.h"
#include "recompiler/isa_engine.h"
#include "translate_harness.h"

namespace gpurc_test_tesla_bound_check {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace tesla_tr;

namespace {

constexpr unsigned kBlocks = 3, kThreads = 40;

// i = ctaid.x * ntid.x + tid.x; lanes with i >= n (the second parameter)
// leave; the others store two words at out[i * 8].
std::string kernel(const std::string& body) {
  return "ld $r1 u16 s[0x2]\n"
         "ld $r2 u16 s[0xc]\n"
         "long mul $r1 u16 $r1l u16 $r2l\n"
         "cvt u32 $r3 u16 $r0l\n"
         "long add b32 $r1 $r1 $r3\n"
         "ld $r4 b32 s[0x14]\n"
         "long mov b32 $r6 0x3f800011\n"  // 1.0 and a bit: quad ops add normal floats

         "set $c0 $r5 ge u32 $r1 $r4\n"
         "(lg $c0) bra #done\n"
         "shl b32 $r7 $r1 0x3\n"
         "ld $r9 b32 s[0x10]\n"
         "long add b32 $r7 $r7 $r9\n" +
         body +
         "st b32 g0[$r7] $r6\n"
         "long add b32 $r7 $r7 0x4\n"
         "st b32 g0[$r7] $r8\n"
         "done: exit nop\n";
}

const char* kPlainBody =
    "long add b32 $r6 $r6 $r1\n"
    "set $c1 $r8 ge u32 $r1 $r2\n"
    "(lg $c1) add b32 $r6 $r6 $r6\n"
    "long add b32 $r8 $r8 $r6\n";

// $r6 of lane (quad base + 3), which may have left at the check.
const char* kQuadBody =
    "long add b32 $r6 $r6 $r1\n"
    "quadop f32 add subr sub mov2 $r8 l3 $r6 $r6\n";

std::vector<std::vector<uint8_t>> run_everywhere(const std::string& src, uint32_t n) {
  gpurc::tesla_run::Kernel k;
  std::string err;
  REQUIRE(parse_target("g200", k.target, err));
  INFO(err);
  REQUIRE(assemble(all_long(src), k.target, k.code, err));
  gpurc::tesla_run::Launch l;
  l.grid = {kBlocks, 1, 1};
  l.block = {kThreads, 1, 1};
  const uint32_t params[2] = {0x1000, n};
  l.params.resize(8);
  std::memcpy(l.params.data(), params, 8);
  l.smem = 0x40;
  std::vector<std::vector<uint8_t>> outs;
  std::vector<gpurc::Engine> engines{gpurc::Engine::Interp};
  for (gpurc::Engine e : gpurc::host_engines()) engines.push_back(e);
  for (gpurc::Engine e : engines) {
    std::vector<gpurc::tesla_run::Buffer> bufs(1);
    bufs[0].name = "out";
    bufs[0].address = 0x1000;
    bufs[0].bytes.assign(kBlocks * kThreads * 8, 0xcd);
    gpurc::tesla_run::Options o;
    const gpurc::EngineAsHandle handle(e);
    o.engine = &handle;
    o.threads = 1;
    gpurc::tesla_run::Outcome r = gpurc::tesla_run::run(k, l, bufs, o);
    INFO(gpurc::engine_name(e) << ": " << r.error << r.fault_message);
    REQUIRE(r.ok());
    outs.push_back(bufs[0].bytes);
  }
  return outs;
}

size_t selects(const std::string& src, bool discard_state) {
  Target t;
  std::string err;
  REQUIRE(parse_target("g200", t, err));
  std::vector<uint32_t> code;
  REQUIRE(assemble(all_long(src), t, code, err));
  BlockConfig cfg;
  cfg.block[0] = kThreads;
  cfg.params.assign(8, 0);
  cfg.smem = 0x40;
  TranslateOptions opt = options_for(cfg, t);
  opt.fresh_launch = true;
  opt.discard_state = discard_state;
  gpurc::ir::Function f;
  INFO(err);
  REQUIRE(translate(code, opt, f, err));
  size_t n = 0;
  for (const auto& b : f.blocks)
    for (auto v : b.insts) n += f.insts[v].op == gpurc::ir::Opcode::Select;
  return n;
}

}  // namespace

TEST_CASE("tesla bound check: exiting lanes' registers need no select, every engine agrees") {
  for (const char* body : {kPlainBody, kQuadBody})
    for (uint32_t n : {0u, 1u, 37u, 45u, 100u, 119u, 120u, 1000u}) {
      INFO("n " << n << " body " << body);
      auto outs = run_everywhere(kernel(body), n);
      for (size_t i = 1; i < outs.size(); ++i) CHECK(outs[i] == outs[0]);
      // Lanes past n stored nothing.
      for (uint32_t i = n; i < kBlocks * kThreads; ++i) CHECK(outs[0][i * 8] == 0xcd);
    }
}

TEST_CASE("tesla bound check: the body's writes lose their selects only with private state and no quad op") {
  const std::string plain = kernel(kPlainBody), quad = kernel(kQuadBody);
  CHECK(selects(plain, true) < selects(plain, false));
  CHECK(selects(quad, true) == selects(quad, false));
}

}  // namespace gpurc_test_tesla_bound_check
