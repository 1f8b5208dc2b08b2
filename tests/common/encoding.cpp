#include <doctest/doctest.h>
#include "frontend/common/encoding.h"
#include "ir/ir.h"

namespace gpurc_test_common_encoding {  // one namespace per file: unity builds (CMakeLists.txt)
using namespace gpurc;
TEST_CASE("encoding table: split fields, decode priority, encode round trip") {
  fe::EncodingTable t;
  t.add("wide", 1, "1010 aaaa bbbb aaaa", {{'a', "src"}, {'b', "dst"}});
  t.add("narrow", 2, "1010 1111 bbbb ----", {{'b', "dst"}});
  fe::Bits128 x = t.encode(*t.find("wide"), {{"src", 0x5a}, {"dst", 3}});
  CHECK(x.w[0] == 0xA53A);
  CHECK(t.decode(x)->name == "wide");
  CHECK(t.find("wide")->field("src")->parts.size() == 2);
  CHECK(t.find("wide")->get(x, "src") == 0x5a);
  fe::Bits128 y;
  y.w[0] = 0xAF30;
  CHECK(t.decode(y)->name == "narrow");
}
TEST_CASE("opcode table") {
  CHECK(ir::op_name(ir::Opcode::IAdd) == "iadd");
  ir::Opcode op;
  CHECK(ir::parse_opcode("fma", op) == false);
  CHECK(ir::parse_opcode("ffma", op));
  CHECK(op == ir::Opcode::FFma);
  CHECK(ir::op_info(ir::Opcode::Br).terminator);
}

}  // namespace gpurc_test_common_encoding
