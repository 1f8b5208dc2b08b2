// Shifts by a constant count (backend_x64/lower_int.cpp): one shift by an
// immediate, the const itself not materialized when only such counts read
// it. Every count that matters (0, 1, width - 1, width, 31, 32, 33, 255,
// 2^31, ~0), both ShiftModes and the narrow types, on every tier against
// the IR interpreter; one count const is also read by an add, so it keeps
// its register. Likewise constant operands of iadd / isub / and / or / xor
// (and icmp on AVX-512), read from the constant pool when nothing else
// reads the const (issue 13, ninth session).
#include <doctest/doctest.h>

#include "compare.h"

namespace gpurc_test_backend_const_shifts {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::backend::test;
using ir::Opcode;
using ir::ShiftMode;
using ir::Type;

TEST_CASE("shifts by constant counts match the interpreter on every tier") {
  const uint32_t counts[] = {0, 1, 3, 4, 7, 8, 15, 16, 31, 32, 33, 64, 255, 0x80000000u, ~0u};
  for (Type t : {Type::I32, Type::I16, Type::I8}) {
    ir::Function f;
    f.add_var("x", t);
    f.add_block("entry");
    ir::Builder b(f);
    auto x = load_var(b, 0);
    f.add_var("y", Type::I32);
    auto y = load_var(b, 1);
    uint32_t out = 2;
    for (uint32_t c : counts)
      for (ShiftMode m : {ShiftMode::Mask, ShiftMode::Clamp})
        for (Opcode op : {Opcode::Shl, Opcode::LShr, Opcode::AShr}) {
          auto k = b.i32(c);  // counts are i32 whatever the shifted type
          f.add_var("out" + std::to_string(out), t);
          store_var(b, out++, b.binary(op, x, k, uint8_t(m)));
        }
    // A count const that an add reads as well: a register operand of the add.
    auto k5 = b.i32(5);
    f.add_var("shared_shift", t);
    store_var(b, out++, b.shl(x, k5));
    f.add_var("shared_add", Type::I32);
    store_var(b, out++, b.iadd(y, k5));
    b.ret();
    REQUIRE(ir::verify(f) == "");
    std::mt19937_64 rng(41);
    for (int run = 0; run < 8; ++run) {
      RunSpec s;
      s.vars.resize(f.vars_bytes());
      fill_random(s.vars, rng);
      for (unsigned l = 0; l < 4; ++l) set_lane(s.vars, f, 0, l, l == 0 ? 0x80 : l == 1 ? 0x8000 : l == 2 ? ~0ull : 1);
      for (uint32_t v = 0; v < f.vars.size(); ++v)  // keep every var canonical for its type
        for (unsigned l = 0; l < 32; ++l)
          set_lane(s.vars, f, v, l, get_lane(s.vars, f, v, l) & ir::type_mask(f.vars[v].type));
      s.entry_mask = run == 7 ? uint32_t(rng()) | 1u : ~0u;
      check_all_tiers(f, s, "type " + std::string(ir::type_name(t)) + " run " + std::to_string(run));
    }
  }
}

TEST_CASE("constant operands of add, sub, and, or, xor and compares match the interpreter on every tier") {
  const uint32_t consts[] = {0, 1, 10, 0x7f, 0xff, 96, 0x8000, 0x7fffffffu, 0x80000000u, ~0u};
  for (Type t : {Type::I32, Type::I16, Type::I8, Type::I1}) {
    ir::Function f;
    f.add_var("x", t);
    f.add_block("entry");
    ir::Builder b(f);
    auto x = load_var(b, 0);
    uint32_t out = 1;
    auto store = [&](ir::ValueId v) {
      f.add_var("out" + std::to_string(out), f.insts[v].type);
      store_var(b, out++, v);
    };
    for (uint32_t c : consts) {
      if (t == Type::I1 && c > 1) continue;
      // Each const read only from the pool: a fresh const per reader and operand order.
      for (Opcode op : {Opcode::IAdd, Opcode::ISub, Opcode::And, Opcode::Or, Opcode::Xor}) {
        if (t == Type::I1 && (op == Opcode::IAdd || op == Opcode::ISub)) continue;
        store(b.binary(op, x, b.constant(t, c)));
        store(b.binary(op, b.constant(t, c), x));  // isub: the const stays a register operand
      }
      for (uint8_t p = 0; p <= uint8_t(ir::IntPred::Uge); ++p) {
        store(b.icmp(ir::IntPred(p), x, b.constant(t, c)));
        store(b.icmp(ir::IntPred(p), b.constant(t, c), x));
      }
    }
    // One const read from the pool by an add and from a register by a select
    // and a compare of the const with itself: it keeps its register.
    if (t != Type::I1) {
      auto k = b.constant(t, 0x35);
      store(b.iadd(x, k));
      store(b.select(b.icmp(ir::IntPred::Ult, x, k), k, x));
      store(b.icmp(ir::IntPred::Eq, k, k));
    }
    b.ret();
    REQUIRE(ir::verify(f) == "");
    std::mt19937_64 rng(43);
    for (int run = 0; run < 6; ++run) {
      RunSpec s;
      s.vars.resize(f.vars_bytes());
      fill_random(s.vars, rng);
      // Lanes at the edges: 0, 1, the sign bit of the type, all ones, the constants.
      for (unsigned l = 0; l < 32; ++l) {
        const uint64_t edge[] = {0, 1, 0x7f, 0x80, 0x7fff, 0x8000, 0x7fffffffu, 0x80000000u, ~0ull, 96, 95, 0x35};
        if (l < sizeof edge / sizeof edge[0]) set_lane(s.vars, f, 0, l, edge[(l + unsigned(run)) % (sizeof edge / sizeof edge[0])]);
      }
      for (uint32_t v = 0; v < f.vars.size(); ++v)  // keep every var canonical for its type
        for (unsigned l = 0; l < 32; ++l)
          set_lane(s.vars, f, v, l, get_lane(s.vars, f, v, l) & ir::type_mask(f.vars[v].type));
      s.entry_mask = run == 5 ? uint32_t(rng()) | 1u : ~0u;
      check_all_tiers(f, s, "type " + std::string(ir::type_name(t)) + " run " + std::to_string(run));
    }
  }
}

// AVX2 (issue 13, tenth session): a mask-only compare x < C of a 32-bit
// const leaves the complement x > C - 1 (C - 1 from the pool) and its
// selects blend the other way round, with a const false operand read from
// the pool (lower_int.cpp, inverted_mask_cmp). Signed and unsigned (the
// unsigned form only with x known below 2^31: masked), the constants at the
// edges (INT_MIN, where C - 1 would wrap, stays a register compare; 0, where
// x <u 0 is never true), false operands only the selects read, one also read
// by an add, and a compared const also read by an add; against the
// interpreter on every tier.
TEST_CASE("selects of a compare against a constant blend with its complement on AVX2") {
  const uint32_t consts[] = {0x80000000u, 0x80000001u, ~0u, 0, 1, 96, 0x7fffffffu};
  ir::Function f;
  f.add_var("x", Type::I32);
  f.add_var("y", Type::I32);
  f.add_block("entry");
  ir::Builder b(f);
  auto x = load_var(b, 0);
  auto y = load_var(b, 1);
  uint32_t out = 2;
  auto store = [&](ir::ValueId v) {
    f.add_var("out" + std::to_string(out), f.insts[v].type);
    store_var(b, out++, v);
  };
  auto xm = b.binary(Opcode::And, x, b.constant(Type::I32, 0x7f));  // below 2^31 (the unsigned form)
  for (uint32_t c : consts) {
    for (ir::IntPred p : {ir::IntPred::Slt, ir::IntPred::Ult}) {
      for (ir::ValueId lhs : {x, xm}) {
        // Four selects of one compare, as PICA200's c[aL] range check; the
        // false operands: a const read only here (twice), y, and a const
        // that an add reads too.
        auto k = b.constant(Type::I32, c);
        auto one = b.constant(Type::I32, 0x3f800000u);
        auto shared = b.constant(Type::I32, 0x1234u + c);
        auto cmp = b.icmp(p, lhs, k);
        std::vector<ir::ValueId> sel = {b.select(cmp, y, one), b.select(cmp, lhs, one), b.select(cmp, b.constant(Type::I32, 5), y),
                                        b.select(cmp, x, shared)};
        for (ir::ValueId s : sel) store(s);
        store(b.iadd(shared, y));
      }
    }
    // The compared const also read by an add: it keeps its register.
    auto k = b.constant(Type::I32, c);
    auto cmp = b.icmp(ir::IntPred::Slt, y, k);
    auto s1 = b.select(cmp, x, b.constant(Type::I32, 7));
    store(s1);
    store(b.iadd(k, x));
  }
  b.ret();
  REQUIRE(ir::verify(f) == "");
  std::mt19937_64 rng(47);
  for (int run = 0; run < 6; ++run) {
    RunSpec s;
    s.vars.resize(f.vars_bytes());
    fill_random(s.vars, rng);
    for (unsigned l = 0; l < 32; ++l) {  // every constant, its neighbours and the sign edges in some lanes
      const uint64_t edge[] = {0, 1, 2, 95, 96, 97, 0x7e, 0x7f, 0x7ffffffe, 0x7fffffffu, 0x80000000u, 0x80000001u,
                               0x80000002u, ~0ull & 0xffffffffu, 0xfffffffeu, 0x5f};
      const size_t ne = sizeof edge / sizeof edge[0];
      if (l < 2 * ne) set_lane(s.vars, f, l % 2, l / 2 % 32, edge[(l / 2 + unsigned(run)) % ne]);
    }
    s.entry_mask = run == 5 ? uint32_t(rng()) | 1u : ~0u;
    check_all_tiers(f, s, "run " + std::to_string(run));
  }
}

// AVX2 (issue 13, tenth session): iadd / isub / and / or / xor read an
// operand that is only in its frame slot as their memory operand
// (lower_int.cpp, slot_operand). 24 values live at once spill most of them;
// every op then combines two of them in both operand orders, at i32 and at
// narrow types (the result masked to the type), against the interpreter on
// every tier.
TEST_CASE("integer ops with spilled operands read them from the frame and match the interpreter") {
  for (Type t : {Type::I32, Type::I16, Type::I8}) {
    ir::Function f;
    f.add_var("x", Type::I32);
    f.add_block("entry");
    ir::Builder b(f);
    auto x = load_var(b, 0);
    uint32_t out = 1;
    auto store = [&](ir::ValueId v) {
      f.add_var("out" + std::to_string(out), f.insts[v].type);
      store_var(b, out++, v);
    };
    std::vector<ir::ValueId> live;
    for (uint32_t i = 0; i < 24; ++i) {  // distinct values of x, all live to the end
      auto m = b.binary(Opcode::IMul, x, b.constant(Type::I32, 2 * i + 3));
      auto y = b.binary(Opcode::Xor, m, b.constant(Type::I32, 0x9e3779b9u * (i + 1)));
      live.push_back(t == Type::I32 ? y : b.emit(Opcode::Trunc, t, {y}));
    }
    for (size_t i = 0; i < live.size(); ++i) {
      const ir::ValueId p = live[i], q = live[(i * 7 + 5) % live.size()];
      for (Opcode op : {Opcode::IAdd, Opcode::ISub, Opcode::And, Opcode::Or, Opcode::Xor}) {
        store(b.binary(op, p, q));
        store(b.binary(op, q, p));
      }
    }
    for (ir::ValueId v : live) store(v);
    b.ret();
    REQUIRE(ir::verify(f) == "");
    std::mt19937_64 rng(53);
    for (int run = 0; run < 4; ++run) {
      RunSpec s;
      s.vars.resize(f.vars_bytes());
      fill_random(s.vars, rng);
      for (uint32_t v = 0; v < f.vars.size(); ++v)
        for (unsigned l = 0; l < 32; ++l)
          set_lane(s.vars, f, v, l, get_lane(s.vars, f, v, l) & ir::type_mask(f.vars[v].type));
      s.entry_mask = run == 3 ? uint32_t(rng()) | 1u : ~0u;
      check_all_tiers(f, s, "type " + std::string(ir::type_name(t)) + " run " + std::to_string(run));
    }
  }
}

}  // namespace gpurc_test_backend_const_shifts
