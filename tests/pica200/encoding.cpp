#include <doctest/doctest.h>

#include <random>

#include "frontend/pica200/disasm.h"
#include "frontend/pica200/encoding.h"

namespace gpurc_test_pica200_encoding {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc::pica;

TEST_CASE("pica200 encoding: every opcode value decodes to the table's instruction") {
  // Opcode values 0x00-0x3F: the named ones decode, the gaps are errors naming the address.
  const int known[] = {0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D,
                       0x0E, 0x0F, 0x12, 0x13, 0x18, 0x19, 0x1A, 0x1B, 0x20, 0x21, 0x22, 0x23, 0x24, 0x25,
                       0x26, 0x27, 0x28, 0x29, 0x2A, 0x2B, 0x2C, 0x2D, 0x2E, 0x2F};
  for (int op = 0; op < 64; ++op) {
    bool is_known = op >= 0x30;
    for (int k : known) is_known |= k == op;
    std::string err;
    auto d = decode(uint32_t(op) << 26, 0x123, &err);
    CHECK_MESSAGE(bool(d) == is_known, "opcode " << op);
    if (!is_known) {
      CHECK(err.find("0x123") != std::string::npos);
      CHECK(err.find("unknown opcode") != std::string::npos);
    }
  }
  CHECK(decode(0x2Eu << 26, 0)->op == Op::CMP);
  CHECK(decode(0x2Fu << 26, 0)->op == Op::CMP);
  CHECK(decode(0x30u << 26, 0)->op == Op::MADI);
  CHECK(decode(0x37u << 26, 0)->op == Op::MADI);
  CHECK(decode(0x38u << 26, 0)->op == Op::MAD);
  CHECK(decode(0x3Fu << 26, 0)->op == Op::MAD);
  CHECK(decode(0x07u << 26, 0)->op == Op::LITP);
  CHECK(decode(0x04u << 26, 0)->op == Op::DST);
  CHECK(decode(0x19u << 26, 0)->op == Op::DSTI);
  CHECK(decode(0x20u << 26, 0)->op == Op::BREAK);
}

TEST_CASE("pica200 encoding: field positions of each format") {
  // add r1, v2, c3 (desc 5): op 0, dst 0x11, idx 0, src1 0x23, src2 0x02.
  uint32_t w = (0x00u << 26) | (0x11u << 21) | (0u << 19) | (0x23u << 12) | (0x02u << 7) | 5u;
  auto d = decode(w, 0);
  REQUIRE(d);
  CHECK(d->dst == 0x11);
  CHECK(d->src1 == 0x23);
  CHECK(d->src2 == 0x02);
  CHECK(d->desc == 5);
  CHECK(encode(*d) == w);
  // F1i (sgei): src1 5 bits at 14, src2 7 bits at 7.
  w = (0x1Au << 26) | (0x10u << 21) | (2u << 19) | (0x03u << 14) | (0x40u << 7) | 9u;
  d = decode(w, 0);
  CHECK(d->op == Op::SGEI);
  CHECK(d->src1 == 3);
  CHECK(d->src2 == 0x40);
  CHECK(d->idx == 2);
  CHECK(encode(*d) == w);
  // F1c (cmp): cmpx at 24, cmpy at 21, src1 7 bits at 12, src2 5 bits at 7.
  w = (0x17u << 27) | (4u << 24) | (2u << 21) | (0x25u << 12) | (0x11u << 7) | 1u;
  d = decode(w, 0);
  CHECK(d->op == Op::CMP);
  CHECK(d->cmpx == 4);
  CHECK(d->cmpy == 2);
  CHECK(d->src1 == 0x25);
  CHECK(d->src2 == 0x11);
  // F5 (mad): dst at 24, idx at 22, src1 5 bits at 17, src2 7 bits at 10, src3 5 bits at 5, desc 5 bits.
  w = (0x7u << 29) | (0x12u << 24) | (1u << 22) | (0x04u << 17) | (0x30u << 10) | (0x13u << 5) | 31u;
  d = decode(w, 0);
  CHECK(d->op == Op::MAD);
  CHECK(d->dst == 0x12);
  CHECK(d->idx == 1);
  CHECK(d->src1 == 4);
  CHECK(d->src2 == 0x30);
  CHECK(d->src3 == 0x13);
  CHECK(d->desc == 31);
  // F5i (madi): src2 5 bits at 12, src3 7 bits at 5.
  w = (0x6u << 29) | (0x12u << 24) | (0x04u << 17) | (0x15u << 12) | (0x60u << 5) | 3u;
  d = decode(w, 0);
  CHECK(d->op == Op::MADI);
  CHECK(d->src2 == 0x15);
  CHECK(d->src3 == 0x60);
  // F2 (ifc): refx 25, refy 24, condop 22, target 10, num 0.
  w = (0x28u << 26) | (1u << 25) | (0u << 24) | (2u << 22) | (0x123u << 10) | 7u;
  d = decode(w, 0);
  CHECK(d->refx == 1);
  CHECK(d->refy == 0);
  CHECK(d->condop == 2);
  CHECK(d->target == 0x123);
  CHECK(d->num == 7);
  // F3 (loop): int id in the uniform field, F4 (setemit).
  d = decode((0x29u << 26) | (2u << 22) | (0x40u << 10), 0);
  CHECK(d->uniform == 2);
  CHECK(d->target == 0x40);
  d = decode((0x2Bu << 26) | (2u << 24) | (1u << 23) | (1u << 22), 0);
  CHECK(d->vtxid == 2);
  CHECK(d->prim == 1);
  CHECK(d->winding == 1);
}

TEST_CASE("pica200 encoding: random words of every instruction decode back to it and re-encode identically") {
  std::mt19937_64 rng(7);
  for (size_t k = 0; k < size_t(Op::Count); ++k) {
    Op op = Op(k);
    for (int i = 0; i < 200; ++i) {
      uint32_t w = random_word(op, rng);
      auto d = decode(w, 0);
      REQUIRE(d);
      CHECK(d->op == op);
      // Bits no field covers are don't-care: re-encoding writes them as 0.
      const gpurc::fe::Encoding* e = encoding_table().find(info(op).name);
      uint32_t care = uint32_t(e->mask.w[0]);
      for (auto& f : e->fields)
        for (auto& part : f.parts) care |= ((1u << part.width) - 1) << part.lo;
      CHECK(encode(*d) == (w & care));
    }
  }
}

TEST_CASE("pica200 operand descriptors: swizzles, negation and mask") {
  // mask xyzw, src1 -.yyyy, src2 .xyzw, src3 .wzyx negated
  uint32_t bits = 0xF | (1u << 4) | (0x55u << 5) | (0x1Bu << 14) | (1u << 22) | (0xE4u << 23);
  OperandDesc d = OperandDesc::decode(bits);
  CHECK(d.mask == 0xF);
  CHECK(d.src[0].negate);
  CHECK(d.src[0].comp == std::array<uint8_t, 4>{1, 1, 1, 1});
  CHECK(d.src[1].identity());
  CHECK(!d.src[1].negate);
  CHECK(d.src[2].negate);
  CHECK(d.src[2].comp == std::array<uint8_t, 4>{3, 2, 1, 0});
  CHECK(d.encode() == bits);
  CHECK(d.writes(0));
  OperandDesc m = OperandDesc::decode(0x8);  // x only
  CHECK(m.writes(0));
  CHECK(!m.writes(1));
}

TEST_CASE("pica200 disassembler: hand-made words in picasso syntax") {
  std::vector<uint32_t> descs = {
      0x0006C36F,  // 0: mask xyzw, src1 xyzw, src2 xyzw
      0x8 | (1u << 4) | (0x55u << 5) | (0x1Bu << 14), // 1: mask x, src1 -yyyy
  };
  auto dis = [&](uint32_t w) { return disasm_instr(*decode(w, 0), &descs, nullptr); };
  CHECK(dis((0x00u << 26) | (0x11u << 21) | (0x23u << 12) | (0x02u << 7) | 0) == "add r1, c3, v2");
  CHECK(dis((0x08u << 26) | (0x00u << 21) | (1u << 19) | (0x2Au << 12) | (0x12u << 7) | 1) == "mul o0.x, -c10[a0.x].y, r2");
  CHECK(dis((0x13u << 26) | (0x10u << 21) | (3u << 19) | (0x20u << 12) | 0) == "mov r0, c0[aL]");
  CHECK(dis(0x22u << 26) == "end");
  CHECK(dis((0x1Au << 26) | (0x10u << 21) | (0x03u << 14) | (0x40u << 7) | 0) == "sge r0, v3, c32");
  CHECK(dis((0x1Au << 26) | (0x10u << 21) | (0x03u << 14) | (0x14u << 7) | 0) == "sgei! r0, v3, r4");  // picasso would write SGE for these operands
  CHECK(dis((0x17u << 27) | (4u << 24) | (2u << 21) | (0x25u << 12) | (0x11u << 7)) == "cmp c5, gt, lt, r1");
  CHECK(dis((0x28u << 26) | (1u << 25) | (1u << 24) | (1u << 22) | (0x10u << 10) | 2) ==
        "ifc cmp.x && cmp.y, 0x010, 2");
  CHECK(dis((0x2Du << 26) | (3u << 22) | (0x20u << 10) | 1) == "jmpu !b3, 0x020");
  CHECK(dis((0x2Bu << 26) | (1u << 24) | (1u << 23)) == "setemit 1, prim");
  CHECK(dis((0x12u << 26) | (0x10u << 12) | 0) == "mova! a0.xyzw, r0");  // mask xyzw: no picasso spelling
  CHECK(dis((0x12u << 26) | (0x10u << 12) | 1) == "mova a0.x, -r0.y");
  // Without a descriptor table the index is printed raw.
  CHECK(disasm_instr(*decode((0x13u << 26) | (0x10u << 21) | (0x20u << 12) | 77, 0), nullptr, nullptr) ==
        "mov r0, c0, desc[77]");
}

}  // namespace gpurc_test_pica200_encoding
