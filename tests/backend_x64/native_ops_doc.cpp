// docs/backend_x64.md's native-op table is the tiers' declared data
// (backend_x64/native_ops.cpp, itself checked against the code generator by
// tests/backend/native_ops.cpp): the text between the markers must equal
// backend::native_ops_table of the x64 tiers.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "backend_x64/jit.h"

namespace gpurc_test_backend_x64_native_ops_doc {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;

TEST_CASE("x64 jit: docs/backend_x64.md's native-op table is the tiers' declared native ops") {
  std::ifstream in(std::string(GPURC_TEST_DATA) + "/docs/backend_x64.md");
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string doc = ss.str();
  const std::string begin = "<!-- native-ops: generated from backend_x64/native_ops.cpp -->\n";
  const std::string end = "<!-- native-ops end -->";
  size_t b = doc.find(begin), e = doc.find(end);
  REQUIRE(b != std::string::npos);
  REQUIRE(e != std::string::npos);
  size_t n = 0;
  const backend::HostTier* const* tiers = x64::tiers(n);
  std::string want = backend::native_ops_table(std::vector<const backend::HostTier*>(tiers, tiers + n));
  CHECK_MESSAGE(doc.substr(b + begin.size(), e - b - begin.size()) == want,
                "replace the table in docs/backend_x64.md with:\n" << want);
}

}  // namespace gpurc_test_backend_x64_native_ops_doc
