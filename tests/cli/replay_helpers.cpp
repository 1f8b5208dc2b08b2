#include <doctest/doctest.h>

#include <cstring>

#include "recompiler/replay.h"

namespace gpurc_test_cli_replay_helpers {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::replay;

TEST_CASE("replay numbers: floats as numbers, inf, nan and bit patterns") {
  CHECK(parse_elem(json(1.5), ElemType::F32, "x") == 0x3FC00000u);
  CHECK(parse_elem(json(-0.0), ElemType::F32, "x") == 0x80000000u);
  CHECK(parse_elem(json("inf"), ElemType::F32, "x") == 0x7F800000u);
  CHECK(parse_elem(json("-inf"), ElemType::F64, "x") == 0xFFF0000000000000ull);
  CHECK(parse_elem(json("nan"), ElemType::F32, "x") == 0x7FC00000u);
  CHECK(parse_elem(json("nan"), ElemType::F16, "x") == 0x7E00u);
  CHECK(parse_elem(json("0x7FC00001"), ElemType::F32, "x") == 0x7FC00001u);
  CHECK(parse_elem(json(1.0), ElemType::F16, "x") == 0x3C00u);
  CHECK(parse_elem(json(0.1), ElemType::F64, "x") == 0x3FB999999999999Aull);
  CHECK_THROWS_AS(parse_elem(json("0x1FFFFFFFF"), ElemType::F32, "x"), ReplayError);
  CHECK_THROWS_AS(parse_elem(json("fast"), ElemType::F32, "x"), ReplayError);
  CHECK_THROWS_AS(parse_elem(json(true), ElemType::F32, "x"), ReplayError);
}

TEST_CASE("replay numbers: integers, ranges and hex") {
  CHECK(parse_elem(json(-1), ElemType::I32, "x") == 0xFFFFFFFFu);
  CHECK(parse_elem(json(-128), ElemType::I8, "x") == 0x80u);
  CHECK(parse_elem(json(255), ElemType::U8, "x") == 0xFFu);
  CHECK(parse_elem(json("0xDEADBEEF"), ElemType::U32, "x") == 0xDEADBEEFu);
  CHECK(parse_elem(json(uint64_t(~0ull)), ElemType::U64, "x") == ~0ull);
  CHECK_THROWS_AS(parse_elem(json(256), ElemType::U8, "x"), ReplayError);
  CHECK_THROWS_AS(parse_elem(json(-129), ElemType::I8, "x"), ReplayError);
  CHECK_THROWS_AS(parse_elem(json(1.5), ElemType::U32, "x"), ReplayError);
  CHECK_THROWS_AS(parse_elem(json("0x1FF"), ElemType::U8, "x"), ReplayError);
  try {
    parse_elem(json("zz"), ElemType::U32, "memory[2].init.u32[7]");
    FAIL("no error");
  } catch (const ReplayError& e) {
    CHECK(std::string(e.what()).find("memory[2].init.u32[7]") == 0);
  }
  CHECK(parse_uint(json("0x10"), "x") == 16);
  CHECK_THROWS_AS(parse_uint(json(-1), "x"), ReplayError);
}

TEST_CASE("replay numbers: printing and tolerant comparison") {
  CHECK(elem_to_json(0x7F800000u, ElemType::F32) == "inf");
  CHECK(elem_to_json(0xFF800000u, ElemType::F32) == "-inf");
  CHECK(elem_to_json(0x7FC00000u, ElemType::F32) == "nan");
  CHECK(elem_to_json(0x7FC00001u, ElemType::F32) == "0x7FC00001");
  CHECK(elem_to_json(0x3FC00000u, ElemType::F32) == 1.5);
  CHECK(elem_to_json(0xFFFFFFFEu, ElemType::I32) == -2);
  CHECK(elem_matches(0x7FC00000u, 0xFFC00000u, ElemType::F32, 0));  // NaN matches NaN
  CHECK_FALSE(elem_matches(0x7FC00000u, 0x7F800000u, ElemType::F32, 5));
  CHECK_FALSE(elem_matches(0x3F800000u, 0x3F800001u, ElemType::F32, 0));
  CHECK(elem_matches(0x3F800000u, 0x3F800001u, ElemType::F32, 1));
  CHECK_FALSE(elem_matches(0x3F800000u, 0x3F800002u, ElemType::F32, 1));
  CHECK(elem_matches(0x80000000u, 0x00000000u, ElemType::F32, 1));      // -0 vs +0
  CHECK_FALSE(elem_matches(0x80000000u, 0x00000000u, ElemType::F32, 0));
  CHECK(elem_matches(0x80000001u, 0x00000001u, ElemType::F32, 2));      // across zero
  CHECK_FALSE(elem_matches(5, 6, ElemType::U32, 10));                   // integers are exact
}

TEST_CASE("replay memory init kinds") {
  CHECK(init_bytes(json::parse(R"({"hex": "01 02, 0x03"})"), 8, "i") == std::vector<uint8_t>{1, 2, 3});
  CHECK(init_bytes(json::parse(R"({"fill": "0xAB"})"), 3, "i") == std::vector<uint8_t>{0xAB, 0xAB, 0xAB});
  CHECK(init_bytes(json::parse(R"({"fill": "0x11223344"})"), 8, "i") ==
        std::vector<uint8_t>{0x44, 0x33, 0x22, 0x11, 0x44, 0x33, 0x22, 0x11});
  CHECK(init_bytes(json::parse(R"({"iota": "u16"})"), 6, "i") == std::vector<uint8_t>{0, 0, 1, 0, 2, 0});
  CHECK(init_bytes(json::parse(R"({"u8": [1, 2]})"), 4, "i") == std::vector<uint8_t>{1, 2});
  auto r1 = init_bytes(json::parse(R"({"random": {"seed": 3, "type": "f32", "min": -1, "max": 1}})"), 4096, "i");
  auto r2 = init_bytes(json::parse(R"({"random": {"seed": 3, "type": "f32", "min": -1, "max": 1}})"), 4096, "i");
  auto r3 = init_bytes(json::parse(R"({"random": {"seed": 4, "type": "f32", "min": -1, "max": 1}})"), 4096, "i");
  CHECK(r1 == r2);
  CHECK(r1 != r3);
  for (size_t i = 0; i < r1.size(); i += 4) {
    float f;
    std::memcpy(&f, &r1[i], 4);
    CHECK((f >= -1.0f && f <= 1.0f));
  }
  auto ints = init_bytes(json::parse(R"({"random": {"type": "i32", "min": -3, "max": 3}})"), 400, "i");
  for (size_t i = 0; i < ints.size(); i += 4) {
    int32_t v;
    std::memcpy(&v, &ints[i], 4);
    CHECK((v >= -3 && v <= 3));
  }
  CHECK_THROWS_AS(init_bytes(json::parse(R"({"u32": [1, 2, 3]})"), 8, "i"), ReplayError);  // too long
  CHECK_THROWS_AS(init_bytes(json::parse(R"({"hex": "123"})"), 8, "i"), ReplayError);
  CHECK_THROWS_AS(init_bytes(json::parse(R"({"zeros": 1})"), 8, "i"), ReplayError);
  CHECK_THROWS_AS(init_bytes(json::parse(R"({"iota": "u33"})"), 8, "i"), ReplayError);
}

TEST_CASE("replay launch and envelope checks") {
  rt::LaunchConfig c = parse_launch(json::parse(R"({"grid": [2, 3], "block": 64, "shared_bytes": "0x100"})"));
  CHECK(c.grid == rt::Dim3{2, 3, 1});
  CHECK(c.block == rt::Dim3{64, 1, 1});
  CHECK(c.shared_bytes == 256);
  CHECK_THROWS_AS(parse_launch(json::parse(R"({"grid": [1, 0]})")), ReplayError);
  CHECK_THROWS_AS(parse_launch(json::parse(R"({"grid": [1, 2, 3, 4]})")), ReplayError);
  CHECK_THROWS_AS(parse_launch(json::parse(R"({"vertices": 3})")), ReplayError);
  CHECK_THROWS_AS(parse_launch(json::parse(R"({"block": [2048, 1024]})")), ReplayError);
  CHECK(has_handler("ir"));
  CHECK(has_handler("bifrost"));
}

}  // namespace gpurc_test_cli_replay_helpers
