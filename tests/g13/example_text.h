// The text of an examples/g13 program, read from the source tree
// (GPURC_TEST_DATA), for tests that run the bundled kernels themselves.
#pragma once

#include <fstream>
#include <iterator>
#include <string>

namespace gpurc::test {

inline std::string g13_example_text(const char* name) {
  std::ifstream in(std::string(GPURC_TEST_DATA) + "/examples/g13/" + name);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace gpurc::test
