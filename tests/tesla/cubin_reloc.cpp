// cubin "reloc" blocks (__device__ variables): the loader reads them, the
// replay gives each variable a g14[] buffer and puts its address in the c14
// slot nvcc 1.0 reads; decuda's test36 then runs on every engine with the
// result its CUDA source computes.
#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "frontend/tesla/cubin.h"
#include "recompiler/replay.h"

namespace gpurc_test_tesla_cubin_reloc {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using replay::json;

namespace {

std::filesystem::path real_dir() { return std::filesystem::path(GPURC_TEST_DATA) / "tests" / "tesla" / "real"; }

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<uint32_t> words(const replay::ReplayRun& r, const std::string& name) {
  const replay::Observed* o = r.find("memory", name);
  REQUIRE_MESSAGE(o, name);
  std::vector<uint32_t> v(o->bytes.size() / 4);
  std::memcpy(v.data(), o->bytes.data(), v.size() * 4);
  return v;
}

}  // namespace

TEST_CASE("tesla cubin relocs: reloc blocks are read with name, segment, offset and size") {
  tesla::Cubin c;
  std::string err;
  REQUIRE_MESSAGE(tesla::parse_cubin(read_text(real_dir() / "decuda_test36.cubin"), c, err), err);
  REQUIRE(c.relocs.size() == 2);
  CHECK(c.relocs[0].name == "xx2");
  CHECK(c.relocs[0].segname == "reloc");
  CHECK(c.relocs[0].segnum == 14);
  CHECK(c.relocs[0].offset == 4);
  CHECK(c.relocs[0].bytes == 8);
  CHECK(c.relocs[1].name == "xx");
  CHECK(c.relocs[1].offset == 0);
  CHECK(c.relocs[1].bytes == 4);
  std::string text = "architecture {sm_10}\nreloc {\n name = v\n segname = reloc\n segnum = 14\n offset = 2\n bytes = 4\n}\n"
                     "code {\n name = k\n bincode {\n 0xf0000001 0xe0000001\n }\n}\n";
  CHECK_FALSE(tesla::parse_cubin(text, c, err));  // slot not a 32-bit aligned word
  CHECK(err.find("reloc") != std::string::npos);
  std::string unnamed = "reloc {\n segnum = 14\n offset = 0\n bytes = 4\n}\ncode {\n name = k\n bincode {\n 0xf0000001 0xe0000001\n }\n}\n";
  CHECK_FALSE(tesla::parse_cubin(unnamed, c, err));
}

TEST_CASE("tesla cubin relocs: decuda test36 (__constant__ and __device__ variables) on every engine") {
  // test36.cu (decuda, public):
  //   __constant__ int uu; __constant__ short vv; __constant__ int ww[10];
  //   __device__ int xx; __device__ int *xx2;
  //   f_test(unsigned *data, unsigned char *data2):
  //     for x in 0..9: y = data[x-2]; data2[x] = data[x]; data2[x+2] = y >> 16;
  //     data[0] = uu; data[1] = vv; for x in 0..9: data[x] = ww[x];
  //     xx = uu; xx2 = &xx;
  // data points 8 bytes into the "data" buffer (data[-2], data[-1] are read).
  const uint32_t kData = 0x100, kData2 = 0x200;
  std::vector<uint32_t> in(12);  // data[-2 .. 9]
  for (uint32_t j = 0; j < 12; ++j) in[j] = 0x01000000u * (j + 1) + 0x00110000u * (j + 3) + 0x100u * j + (0x40 + j);
  const uint32_t uu = 0xdeadbeef;
  std::vector<uint32_t> ww(10);
  for (uint32_t i = 0; i < 10; ++i) ww[i] = 1000 + 7 * i;
  json doc = {{"gpurc", 1}, {"isa", "tesla"}, {"variant", "g80"}, {"name", "test36"},
              {"program", {{"binary_file", "decuda_test36.cubin"}, {"kernel", "f_test"}}},
              {"launch", {{"grid", {1}}, {"block", {1}}}},
              {"state", {{"params", {{"u32", {kData + 8, 0, kData2, 0}}}},
                         {"symbols", {{"uu", {{"u32", {uu}}}}, {"vv", {{"i16", {-5}}}}, {"ww", {{"u32", ww}}}}}}},
              {"memory", {{{"name", "data"}, {"address", "0xe00000100"}, {"size", 48}, {"init", {{"u32", in}}}},
                          {{"name", "data2"}, {"address", "0xe00000200"}, {"size", 12}}}}};
  // Hand-derived result: data2[k] = low byte of data[k] for k < 10 (iteration
  // k writes it after iteration k - 2 wrote y >> 16 there); data2[10], [11]
  // = byte (data[6] >> 16), (data[7] >> 16). data[0..9] = ww; data[-2..-1]
  // unchanged. The variables follow the g14 buffers in the file's order:
  // xx2 at 0x210 (the end of data2, 0x20c, 16-byte aligned), xx at 0x220;
  // xx = uu, xx2 = &xx as a 64-bit pointer (0x220, 0). Their c14 slots (xx
  // at c14[0], xx2 at c14[4]) hold 0x220 and 0x210.
  std::vector<uint8_t> data2(12);
  for (unsigned k = 0; k < 10; ++k) data2[k] = uint8_t(in[k + 2]);
  data2[10] = uint8_t(in[6 + 2] >> 16);
  data2[11] = uint8_t(in[7 + 2] >> 16);
  for (Engine e : host_engines()) {
    CAPTURE(engine_name(e));
    replay::ReplayRun r = replay::run_document(doc, real_dir(), e, 1, false);
    INFO(r.fault.value_or(""));
    REQUIRE(!r.fault);
    std::vector<uint32_t> d = words(r, "data");
    CHECK(d[0] == in[0]);
    CHECK(d[1] == in[1]);
    for (unsigned i = 0; i < 10; ++i) CHECK(d[2 + i] == ww[i]);
    const replay::Observed* o2 = r.find("memory", "data2");
    REQUIRE(o2);
    CHECK(o2->bytes == data2);
    CHECK(words(r, "cubin module xx g14") == std::vector<uint32_t>{uu});
    CHECK(words(r, "cubin module xx2 g14") == std::vector<uint32_t>{0x220, 0});
    CHECK(words(r, "cubin module xx c14[0x0]") == std::vector<uint32_t>{0x220});
    CHECK(words(r, "cubin module xx2 c14[0x4]") == std::vector<uint32_t>{0x210});
  }
}

TEST_CASE("tesla cubin relocs: state.symbols names only variables of the cubin and fits them") {
  json doc = {{"gpurc", 1}, {"isa", "tesla"}, {"variant", "g80"}, {"name", "test36"},
              {"program", {{"binary_file", "decuda_test36.cubin"}}},
              {"launch", {{"grid", {1}}, {"block", {1}}}},
              {"state", {{"symbols", {{"nosuch", {{"u32", {1}}}}}}}}};
  CHECK_THROWS_AS(replay::run_document(doc, real_dir(), Engine::Interp, 1, false), replay::ReplayError);
  doc["state"]["symbols"] = {{"uu", {{"u32", {1, 2}}}}};  // uu is 4 bytes
  CHECK_THROWS_AS(replay::run_document(doc, real_dir(), Engine::Interp, 1, false), replay::ReplayError);
}

}  // namespace gpurc_test_tesla_cubin_reloc
