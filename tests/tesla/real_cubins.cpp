// Real sm_1x compiler output, end to end: text cubins written by CUDA 1.0's
// nvcc (sm_10), kept byte for byte in tests/tesla/real/ (origins in the table
// below and in docs/tesla.md, "Real compiler output"). Each one loads,
// disassembles and assembles back to the identical words, and the kernels
// whose CUDA source is public run on every engine of the host with inputs
// and expected results derived here from that source (plain C++ arithmetic
// on the source's expression, never from an engine's output).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <tuple>

#include "frontend/tesla/cubin.h"
#include "frontend/tesla/disasm.h"
#include "frontend/tesla/encoding.h"
#include "recompiler/engine.h"
#include "recompiler/replay.h"

namespace gpurc_test_tesla_real_cubins {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using replay::json;

namespace {

std::filesystem::path real_dir() { return std::filesystem::path(GPURC_TEST_DATA) / "tests" / "tesla" / "real"; }

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Every file comes from github.com/laanwj/decuda (commit cbac31a8), tests/
// <name>.cubin, next to its tests/<name>.cu where one is given.
struct RealCubin {
  const char* file;
  const char* kernel;
  const char* source;  // the CUDA statement of tests/<name>.cu, "" if none is public
  // nvcc paired its short instructions as envyas' layout rule does, so the
  // plain listing (envydis prints no `long`) comes back as the same words.
  bool envyas_layout = true;
};
const RealCubin kReal[] = {
    {"decuda_test.cubin", "my_kernel", "*x = 0x123456"},
    {"decuda_test3.cubin", "my_kernel", "*x = (*y) << 2"},
    {"decuda_test5b.cubin", "my_kernel", "*x = (*y) >> (*x)"},
    {"decuda_test8r.cubin", "my_kernel", "*x = __mul24(*y, *z)"},
    {"decuda_test13.cubin", "my_kernel", "*x = min(*y, 3)"},
    {"decuda_test16.cubin", "my_kernel", "*x = (*y) | 3"},
    {"decuda_test24.cubin", "my_kernel", "*x = 0x12345 - (*y) - z"},
    {"decuda_float1.cubin", "my_kernel", "*x = max(*x, 3.14f)"},
    {"decuda_float2.cubin", "my_kernel", "*x = min(*x, 3.14f)"},
    {"decuda_test30.cubin", "bra_test", "short data[12] = blockIdx, threadIdx, blockDim, gridDim"},
    {"decuda_test35.cubin", "f_test", "two __shared__ char[256] zeroed in loops, __syncthreads, copied to data2"},
    {"decuda_test40.cubin", "my_kernel", "x = 3; while (x < width/2) { sha[x] = 200; out[x] = sha[x+1]; x = out[x+1]; } twice, __syncthreads between"},
    {"decuda_readshared.cubin", "my_kernel", "data[0..3] = x[-8..-5] (extern __shared__ int x[]: the s[] header), data[4..5] = blockDim.x/y"},  // exp/
    {"decuda_test21local2.cubin", "my_kernel", ""},  // 30 loads from g[], stored to l[$a1] (lmem = 1)
    {"decuda_test28.cubin", "my_kernel", ""},        // three samplers, texauto, preex2/ex2, b128 loads and stores
    {"decuda_test36.cubin", "f_test", ""},           // c0 variables without data, c14 relocations, c0[$a1++] loop
    {"decuda_sev1u64.cubin", "my_kernel", ""},       // 64-bit compare through $c chains; "0000000000" in const mem
    // tests/motion_div2.cubin, the first 588 words: joinat/join regions,
    // texauto from two samplers, fmad with s[] sources. nvcc left some
    // instructions long where a short form fits (word 146: a long fmad then
    // two short movs; word 214: a long fmad and a long mov), which no text
    // can show: only the listing with `long` marks comes back identical.
    {"decuda_motion_div2_part.cubin", "motion_copy_2ref", "", false},
};

json g14(const char* name, uint32_t offset, uint32_t size, json init = nullptr) {
  // CUDA 1.0 addresses global memory as g14[] (space index 14): the buffer
  // lives at (14 << 32) + the pointer.
  json b = {{"name", name}, {"address", (uint64_t(14) << 32) + offset}, {"size", size}};
  if (!init.is_null()) b["init"] = init;
  return b;
}

json doc(const char* file, const char* kernel, json params, json memory, json expect, json grid = {2}, json block = {64}) {
  // A braced list of one json value is an array of it with g++ but a copy of
  // the value with clang (nlohmann's initializer-list rule): take both.
  if (memory.is_object()) memory = json::array({memory});
  if (expect.is_object()) expect = json::array({expect});
  return json{{"gpurc", 1},
              {"isa", "tesla"},
              {"variant", "g80"},
              {"name", file},
              {"program", {{"binary_file", file}, {"kernel", kernel}}},
              {"launch", {{"grid", grid}, {"block", block}}},
              {"state", {{"params", {{"u32", params}}}}},
              {"memory", memory},
              {"expect", {{"memory", expect}}}};
}

// Pointer parameters are 8 bytes apart (the cubins come from a 64-bit host):
// x at s[0x10], y at s[0x18], z at s[0x20].
constexpr uint32_t X = 0x100, Y = 0x200, Z = 0x300;

uint32_t f32_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
int32_t s24(uint32_t v) { return int32_t(v << 8) >> 8; }

struct Case {
  std::string what;
  json doc;
};

std::vector<Case> cases() {
  std::vector<Case> c;
  auto scalar1 = [&](const char* file, uint32_t y, uint32_t want, const std::string& what) {
    c.push_back({what, doc(file, "my_kernel", {X, 0, Y, 0}, {g14("x", X, 4), g14("y", Y, 4, {{"u32", {y}}})},
                           {{{"name", "x"}, {"u32", {want}}}})});
  };
  c.push_back({"*x = 0x123456", doc("decuda_test.cubin", "my_kernel", {X, 0}, {g14("x", X, 4)}, {{{"name", "x"}, {"u32", {0x123456u}}}})});
  scalar1("decuda_test3.cubin", 0x12345678u, 0x12345678u << 2, "*x = *y << 2");
  scalar1("decuda_test13.cubin", uint32_t(-5), uint32_t(std::min(-5, 3)), "*x = min(*y, 3), *y = -5 (signed)");
  scalar1("decuda_test13.cubin", 7, uint32_t(std::min(7, 3)), "*x = min(*y, 3), *y = 7");
  scalar1("decuda_test16.cubin", 0x100, 0x100 | 3, "*x = *y | 3");
  {
    // *x = *y >> *x on int: arithmetic shift. 4 is in range; 33 shows the
    // hardware rule for counts >= 32 (not masked, sign fill; C leaves it
    // undefined, the seed's shr pseudocode defines it).
    for (auto [y, n, want] : {std::tuple<int32_t, uint32_t, int32_t>{-256, 4, -256 >> 4}, {-256, 33, -1}, {0x40000000, 40, 0}}) {
      c.push_back({"*x = *y >> *x, " + std::to_string(y) + " >> " + std::to_string(n),
                   doc("decuda_test5b.cubin", "my_kernel", {X, 0, Y, 0},
                       {g14("x", X, 4, {{"u32", {n}}}), g14("y", Y, 4, {{"u32", {uint32_t(y)}}})},
                       {{{"name", "x"}, {"u32", {uint32_t(want)}}}}, {1}, {1})});  // one thread: it reads the *x it writes
    }
  }
  {
    uint32_t y = 0x1000, z = 5;
    c.push_back({"*x = 0x12345 - *y - z", doc("decuda_test24.cubin", "my_kernel", {X, 0, Y, 0, z},
                                              {g14("x", X, 4), g14("y", Y, 4, {{"u32", {y}}})},
                                              {{{"name", "x"}, {"u32", {0x12345u - y - z}}}})});
  }
  {
    // __mul24: the low 32 bits of the product of the sign-extended low 24
    // bits (the top byte of *y is ignored).
    uint32_t y = 0xff923456u, z = uint32_t(-3);
    uint32_t want = uint32_t(int64_t(s24(y)) * int64_t(s24(z)));
    c.push_back({"*x = __mul24(*y, *z)", doc("decuda_test8r.cubin", "my_kernel", {X, 0, Y, 0, Z, 0},
                                             {g14("x", X, 4), g14("y", Y, 4, {{"u32", {y}}}), g14("z", Z, 4, {{"u32", {z}}})},
                                             {{{"name", "x"}, {"u32", {want}}}})});
  }
  for (float v : {1.5f, 7.25f, -100.0f}) {
    c.push_back({"*x = max(*x, 3.14f), *x = " + std::to_string(v),
                 doc("decuda_float1.cubin", "my_kernel", {X, 0}, {g14("x", X, 4, {{"u32", {f32_bits(v)}}})},
                     {{{"name", "x"}, {"u32", {f32_bits(std::max(v, 3.14f))}}}})});
    c.push_back({"*x = min(*x, 3.14f), *x = " + std::to_string(v),
                 doc("decuda_float2.cubin", "my_kernel", {X, 0}, {g14("x", X, 4, {{"u32", {f32_bits(v)}}})},
                     {{{"name", "x"}, {"u32", {f32_bits(std::min(v, 3.14f))}}}})});
  }
  {
    // One thread in one block: every field is defined (more threads or
    // blocks would race on the same shorts). blockIdx.z and gridDim.z are
    // constants in the code (0 and 1).
    std::vector<uint32_t> want16 = {0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1};
    c.push_back({"short data[] = blockIdx, threadIdx, blockDim, gridDim",
                 doc("decuda_test30.cubin", "bra_test", {X, 0}, {g14("data", X, 24, {{"fill", "0xabcd"}})},
                     {{{"name", "data"}, {"u16", want16}}}, {1}, {1})});
  }
  {
    // decuda's exp/readshared: the words of the s[] header as seen through
    // an extern __shared__ array (x = s[0x20]), u16 each: gridflags (not
    // checked: its value is not public), ntid.x/y/z, nctaid.x/y, ctaid.x/y.
    // Blocks differ only in ctaid (data[3]), so that one is not checked.
    c.push_back({"s[] header through x[-8..-5], blockDim",
                 doc("decuda_readshared.cubin", "my_kernel", {X, 0}, {g14("data", X, 24)},
                     {{{"name", "data"}, {"offset", 2}, {"u16", {3, 2, 1, 4, 3}}},
                      {{"name", "data"}, {"offset", 16}, {"u32", {3, 2}}}},
                     {4, 3}, {3, 2})});
  }
  return c;
}

// Kernels whose __syncthreads() is CUDA 1.0's `bar inc wait 0x0 0xfff`.
std::vector<Case> barrier_cases() {
  std::vector<Case> c;
  {
    // data2[y] = x[y] for y < 256 after both shared arrays were zeroed.
    c.push_back({"shared arrays zeroed, barrier, copied out",
                 doc("decuda_test35.cubin", "f_test", {X, 0, Y, 0}, {g14("data", X, 256), g14("data2", Y, 256, {{"fill", "0xff"}})},
                     {{{"name", "data2"}, {"u8", std::vector<uint32_t>(256, 0)}}})});
  }
  {
    // width = 20: x = 3 stores out[3] = sha[4] (never written: not checked)
    // and moves to x = out[4] = 1, which stores out[1] = sha[2] (not checked)
    // and leaves with x = out[2] = 40 >= 10; the second loop does not run.
    // Every other word keeps its value.
    std::vector<uint32_t> out;
    for (uint32_t i = 0; i < 16; ++i) out.push_back(1000 + i);
    out[4] = 1;
    out[2] = 40;
    json d = doc("decuda_test40.cubin", "my_kernel", {X, 0, 20}, {g14("out", X, 64, {{"u32", out}})},
                 {{{"name", "out"}, {"u32", {out[0]}}},
                  {{"name", "out"}, {"offset", 8}, {"u32", {out[2]}}},
                  {{"name", "out"}, {"offset", 16}, {"u32", std::vector<uint32_t>(out.begin() + 4, out.end())}}});
    d["launch"]["shared_bytes"] = 0x20 + 64;  // extern __shared__ int sha[] after the parameters
    c.push_back({"loop over shared and global memory, barrier, ret", d});
    // width = 5: the first loop does not run, every thread passes the
    // barrier and leaves through `(e $c0) ret`.
    json d2 = doc("decuda_test40.cubin", "my_kernel", {X, 0, 5}, {g14("out", X, 64, {{"u32", out}})},
                  {{{"name", "out"}, {"u32", out}}});
    d2["launch"]["shared_bytes"] = 0x20 + 64;
    c.push_back({"loop not entered, barrier, ret", d2});
  }
  return c;
}

void run_case(const Case& k, Engine e, unsigned threads) {
  CAPTURE(k.what);
  std::string engine = engine_name(e);
  CAPTURE(engine);
  CAPTURE(threads);
  replay::ReplayRun r = replay::run_document(k.doc, real_dir(), e, threads, false);
  INFO(r.fault.value_or(""));
  CHECK(!r.fault);
  auto mism = replay::check_expect(k.doc, r);
  std::string diffs;
  for (const auto& m : mism) diffs += m.what + ": expected " + m.expected + ", got " + m.actual + "\n";
  CHECK_MESSAGE(mism.empty(), diffs);
}

}  // namespace

TEST_CASE("tesla real cubins: every kernel loads, and its listing assembles back to the identical words") {
  for (const RealCubin& rc : kReal) {
    CAPTURE(rc.file);
    std::string text = read_text(real_dir() / rc.file);
    REQUIRE(!text.empty());
    tesla::Cubin c;
    std::string err;
    REQUIRE_MESSAGE(tesla::parse_cubin(text, c, err), err);
    CHECK(c.architecture == "sm_10");
    const tesla::CubinKernel* k = c.find(rc.kernel);
    REQUIRE(k);
    REQUIRE(!k->code.empty());
    for (const char* variant : {"g80", "g200"}) {
      CAPTURE(variant);
      tesla::Target t;
      REQUIRE(tesla::parse_target(variant, t, err));
      for (size_t pos = 0; pos < k->code.size();) {
        tesla::Insn in = tesla::decode(k->code.data(), k->code.size(), pos, t);
        CAPTURE(pos);
        CHECK(in.valid);
        CHECK(tesla::check(in, pos) == tesla::DecodeError::None);
        pos += in.words;
      }
      std::string listing = tesla::disassemble_words(k->code, t, true);
      CHECK(listing.find("unknown") == std::string::npos);
      std::vector<uint32_t> back;
      REQUIRE_MESSAGE(tesla::assemble(listing, t, back, err), err);
      if (rc.envyas_layout) CHECK(back == k->code);
      else CHECK(back != k->code);  // the size choices differ (see the table); below, with `long` marks
      // With `long` written where the compiler chose the two-word form of an
      // instruction that has a one-word form, every kernel comes back.
      std::string marked;
      for (size_t pos = 0; pos < k->code.size();) {
        tesla::Insn in = tesla::decode(k->code.data(), k->code.size(), pos, t);
        std::string text = tesla::format(in);
        uint64_t bits = 0;
        unsigned n = 0;
        bool has_short = tesla::assemble_one(text, t, bits, n, err) && n == 1;
        marked += (in.words == 2 && has_short ? "long " : "") + text + "\n";
        pos += in.words;
      }
      std::vector<uint32_t> back_marked;
      REQUIRE_MESSAGE(tesla::assemble(marked, t, back_marked, err), err);
      CHECK(back_marked == k->code);
    }
  }
}

TEST_CASE("tesla real cubins: loader facts of the files") {
  auto load = [](const char* file, tesla::Cubin& c) {
    std::string err;
    REQUIRE_MESSAGE(tesla::parse_cubin(read_text(real_dir() / file), c, err), err);
  };
  {
    // nvcc wrote the zero second word of a control instruction as
    // "0000000000" (no 0x) in bincode.
    tesla::Cubin c;
    load("decuda_test35.cubin", c);
    const tesla::CubinKernel* k = c.find("f_test");
    REQUIRE(k);
    CHECK(k->code.size() == 56);
    CHECK(k->code[32] == 0x861ffe03u);
    CHECK(k->code[33] == 0u);
    CHECK(k->smem == 544);
    CHECK(k->bar == 0);  // as written, though the code has a barrier
    REQUIRE(k->consts.size() == 1);
    CHECK(k->consts[0].segnum == 1);
    CHECK(k->consts[0].mem == std::vector<uint32_t>{0x100});
  }
  {
    tesla::Cubin c;
    load("decuda_test.cubin", c);  // no modname line
    CHECK(c.modname.empty());
    const tesla::CubinKernel* k = c.find("my_kernel");
    REQUIRE(k);
    CHECK(k->code == std::vector<uint32_t>{0x1000c801, 0x0423c780, 0x10168005, 0x00012347, 0xd00e0005, 0xa0c00781});
    CHECK(k->consts.empty());
  }
  {
    tesla::Cubin c;
    load("decuda_test30.cubin", c);
    const tesla::CubinKernel* k = c.find("bra_test");
    REQUIRE(k);
    CHECK(k->reg == 8);
    REQUIRE(k->consts.size() == 1);
    CHECK(k->consts[0].bytes == 8);
    CHECK(k->consts[0].mem == std::vector<uint32_t>{0x3ff, 0x3f});
  }
  {
    // Module-level __constant__ variables without initial data, and the
    // "reloc" blocks (c14: Cubin::relocs, tests/tesla/cubin_reloc.cpp) and
    // "sampler" blocks, which the loader skips.
    tesla::Cubin c;
    load("decuda_test36.cubin", c);
    REQUIRE(c.consts.size() == 3);
    CHECK(c.consts[0].name == "ww");
    CHECK(c.consts[0].segnum == 0);
    CHECK(c.consts[0].offset == 8);
    CHECK(c.consts[0].bytes == 40);
    CHECK(c.consts[0].mem.empty());
    tesla::Cubin s;
    load("decuda_test28.cubin", s);
    CHECK(s.find("my_kernel"));
    tesla::Cubin u;
    load("decuda_sev1u64.cubin", u);
    REQUIRE(u.kernels.size() == 1);
    REQUIRE(u.kernels[0].consts.size() == 1);
    CHECK(u.kernels[0].consts[0].mem == std::vector<uint32_t>{0, 3});
  }
  {
    tesla::Cubin c;
    load("decuda_test21local2.cubin", c);
    const tesla::CubinKernel* k = c.find("my_kernel");
    REQUIRE(k);
    CHECK(k->lmem == 1);
    CHECK(k->reg == 30);
  }
}

TEST_CASE("tesla real cubins: kernels with a public source give its results on every engine") {
  std::vector<unsigned> thread_counts = std::getenv("GPURC_TEST_LIGHT") ? std::vector<unsigned>{4} : std::vector<unsigned>{1, 4};
  for (const Case& k : cases())
    for (Engine e : host_engines())
      for (unsigned threads : thread_counts) run_case(k, e, threads);
}

TEST_CASE("tesla real cubins: CUDA 1.0's __syncthreads (bar with count 0xfff) on the interpreter") {
  for (const Case& k : barrier_cases()) run_case(k, Engine::Interp, 4);
}

// The translator treats a count covering the block as the plain barrier,
// as the interpreter does.
TEST_CASE("tesla real cubins: CUDA 1.0's __syncthreads on the JIT tiers") {
  std::vector<Engine> tiers = host_jit_tiers();
  REQUIRE(!tiers.empty());
  for (const Case& k : barrier_cases())
    for (Engine e : tiers) run_case(k, e, 4);
}

TEST_CASE("tesla real cubins: l[] past lmem is a guest fault, not a crash, on every engine") {
  // decuda's test21local2 stores 30 words to l[$a1] with lmem = 1.
  json d = doc("decuda_test21local2.cubin", "my_kernel", {X, 0}, {g14("x", X, 128, {{"iota", "u32"}})}, json::array(), {1}, {32});
  d.erase("expect");
  for (Engine e : host_engines()) {
    std::string engine = engine_name(e);
    CAPTURE(engine);
    replay::ReplayRun r = replay::run_document(d, real_dir(), e, 1, false);
    REQUIRE(r.fault);
    INFO(*r.fault);
    // The interpreter names the operand (l[...]), the JIT runtime the space.
    CHECK((r.fault->find("l[") != std::string::npos || r.fault->find("local address") != std::string::npos));
  }
}

}  // namespace gpurc_test_tesla_real_cubins
