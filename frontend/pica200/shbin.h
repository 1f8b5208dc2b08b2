// SHBIN containers (DVLB): one DVLP (shared code + operand descriptors) and
// one DVLE per shader entry (entry point, constants, labels, outputs,
// uniforms, geometry-shader fields). Layout facts: 3dbrew "SHBIN".
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace gpurc::pica {

enum class ConstKind : uint16_t { Bool = 0, IVec = 1, FVec = 2 };
struct ShbinConstant {
  ConstKind kind = ConstKind::FVec;
  uint16_t reg = 0;                 // index within its register file (c/i/b)
  std::array<uint32_t, 4> value{};  // Bool: value[0]; IVec: 4 bytes; FVec: 4 float24 words
};
struct ShbinLabel {
  uint16_t id = 0;
  uint16_t unk = 1;
  uint32_t offset = 0;  // words
  uint32_t size = 0;    // words
  std::string name;
};
// Output semantics (DVLE output table "type").
enum OutputSemantic : uint16_t {
  kOutPosition = 0, kOutNormalQuat = 1, kOutColor = 2, kOutTexcoord0 = 3, kOutTexcoord0W = 4,
  kOutTexcoord1 = 5, kOutTexcoord2 = 6, kOutView = 8, kOutDummy = 9,
};
struct ShbinOutput {
  uint16_t semantic = 0;
  uint16_t reg = 0;    // o register index
  uint16_t mask = 0xF; // bit 0 = x .. bit 3 = w
  uint16_t unk = 0;
};
// Uniform register ids as the file holds them (picasso, libctru's
// DVLE_GetUniformRegister subtracts 0x10 from c ids): 0x00-0x0F v0-v15,
// 0x10-0x6F c0-c95, 0x70-0x73 i0-i3, 0x78-0x87 b0-b15.
struct ShbinUniform {
  std::string name;
  uint16_t start = 0, end = 0;  // inclusive
};
struct Dvle {
  uint16_t version = 0x1002;
  uint8_t is_geometry = 0;
  uint8_t merge_outmaps = 0;
  uint32_t main_offset = 0, endmain_offset = 0;  // words
  uint16_t input_mask = 0, output_mask = 0;
  uint8_t gs_mode = 0;           // 0 point, 1 variable, 2 fixed
  uint8_t gs_float_start = 0;    // fixed mode: first c register of the vertex array (byte 0x15)
  uint8_t gs_fully_defined = 0;  // variable mode: fully defined vertices
  uint8_t gs_vertex_count = 0;   // fixed mode: vertices per primitive
  std::vector<ShbinConstant> constants;
  std::vector<ShbinLabel> labels;
  std::vector<ShbinOutput> outputs;
  std::vector<ShbinUniform> uniforms;
};
struct Shbin {
  uint32_t dvlp_version = 0;
  std::vector<uint32_t> code;
  std::vector<uint32_t> descs;
  std::vector<Dvle> dvles;
};

bool is_shbin(const uint8_t* data, size_t size);
// Parses every DVLE. False with `err` on malformed input (never reads out of bounds).
bool parse_shbin(const uint8_t* data, size_t size, Shbin& out, std::string& err);
std::vector<uint8_t> write_shbin(const Shbin& s);

const char* output_semantic_name(uint16_t semantic);  // null if unknown
bool parse_output_semantic(const std::string& name, uint16_t& out);

}  // namespace gpurc::pica
