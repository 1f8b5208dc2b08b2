// Text .cubin loader, the CUDA 1.x launch ABI end to end, and the CLI's
// isa::IsaModule for tesla.
#include <doctest/doctest.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "frontend/tesla/cubin.h"
#include "frontend/tesla/interp.h"
#include "frontend/tesla/module/reference.h"
#include "recompiler/isa.h"

namespace gpurc_test_tesla_cubin {  // one namespace per file: unity builds (CMakeLists.txt)
using namespace gpurc;
using namespace gpurc::tesla;

static std::string slurp(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST_CASE("tesla cubin: parse and run vecadd over a grid") {
  std::string text = slurp(std::string(GPURC_TEST_DATA) + "/examples/tesla/vecadd.cubin");
  REQUIRE(!text.empty());
  Cubin c;
  std::string err;
  REQUIRE(parse_cubin(text, c, err));
  CHECK(c.architecture == "sm_10");
  REQUIRE(c.consts.size() == 1);
  CHECK(c.consts[0].name == "scale");
  CHECK(c.consts[0].mem == std::vector<uint32_t>{0x3f800000});
  const CubinKernel* k = c.find("vecadd");
  REQUIRE(k);
  CHECK(k->smem == 32);
  CHECK(k->reg == 10);
  CHECK(k->code.size() == 40);

  const unsigned n = 100, bs = 64;
  LaunchMemory mem;
  mem.global[0].assign(0x1000, 0);
  auto putf = [&](uint32_t addr, float v) { std::memcpy(mem.global[0].data() + addr, &v, 4); };
  for (unsigned i = 0; i < n; ++i) {
    putf(0x000 + 4 * i, float(i));
    putf(0x400 + 4 * i, 0.5f * float(i));
  }
  Target t;
  for (unsigned b = 0; b < (n + bs - 1) / bs; ++b) {
    BlockConfig cfg;
    cfg.block[0] = bs;
    cfg.grid[0] = (n + bs - 1) / bs;
    cfg.block_idx[0] = b;
    uint32_t params[4] = {0x000, 0x400, 0x800, n};
    cfg.params.resize(16);
    std::memcpy(cfg.params.data(), params, 16);
    cfg.smem = k->smem;
    cfg.regs = k->reg;
    BlockInterpreter bi(k->code, t, cfg, &mem);
    RunResult r = bi.run();
    INFO(r.message);
    REQUIRE(r.ok());
  }
  for (unsigned i = 0; i < n + 4; ++i) {
    float v;
    std::memcpy(&v, mem.global[0].data() + 0x800 + 4 * i, 4);
    CHECK(v == (i < n ? 1.5f * float(i) : 0.0f));
  }
}

TEST_CASE("tesla cubin: malformed input is an error, not a crash") {
  Cubin c;
  std::string err;
  CHECK_FALSE(parse_cubin("code { name = k bincode { 0x1 0xzz } }", c, err));
  CHECK(err.find("0xzz") != std::string::npos);
  CHECK_FALSE(parse_cubin("code { name = k", c, err));
  CHECK_FALSE(parse_cubin("code { bincode { 0x1 } }", c, err));
  CHECK_FALSE(parse_cubin("code { name = k reg = 500 bincode { 0x1 } }", c, err));
  CHECK_FALSE(parse_cubin("}", c, err));
  CHECK_FALSE(parse_cubin("architecture {sm_10}", c, err));
  CHECK(parse_cubin("code { name = k bincode { 0x10008204 } }", c, err));
}

TEST_CASE("tesla IsaModule: disassemble raw words and cubins, assemble") {
  const isa::IsaModule* isa = find_isa("tesla");
  REQUIRE(isa);
  CHECK(isa->hex_unit_bytes() == 4);
  CHECK(isa->variants().front() == "g200");
  std::vector<uint8_t> bytes;
  std::string err;
  REQUIRE(isa->assemble("mov b32 $r2 $r4\nmov b32 $r3 $r3\nexit nop\n", "g200", bytes, err));
  CHECK(bytes.size() == 16);
  std::string out;
  DisasmOptions o;
  o.variant = "g200";
  o.raw = true;
  REQUIRE(isa->disassemble(bytes, o, out, err));
  CHECK(out == "mov b32 $r2 $r4\nmov b32 $r3 $r3\nexit nop\n");
  o.raw = false;
  REQUIRE(isa->disassemble(bytes, o, out, err));
  CHECK(out.find("00000008: f0000001 e0000781  exit nop") != std::string::npos);
  std::string cub = slurp(std::string(GPURC_TEST_DATA) + "/examples/tesla/vecadd.cubin");
  o.raw = true;
  REQUIRE(isa->disassemble(std::vector<uint8_t>(cub.begin(), cub.end()), o, out, err));
  CHECK(out.find("add rn f32 $r8 $r8 $r9") != std::string::npos);
  o.variant = "g99";
  CHECK_FALSE(isa->disassemble(bytes, o, out, err));
  CHECK_FALSE(isa->disassemble({1, 2, 3}, DisasmOptions{}, out, err));
  CHECK_FALSE(isa->assemble("frobnicate $r1", "", bytes, err));
}

}  // namespace gpurc_test_tesla_cubin
