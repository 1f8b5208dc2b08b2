// Each tier's declared native ops (HostTier::native_ops) against what its
// code generator does: every single-op function of op_cases.h (and the state
// and vote ops) is compiled on every tier; a form that compiles without a
// helper call must be declared, and every declared op and key type must have
// a form that does. So "no helper call" for an op is a checked fact per tier.
#include <doctest/doctest.h>

#include "harness.h"
#include "op_cases.h"
#include "tiers.h"

namespace gpurc_test_backend_native_ops {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::backend::test;
using ir::Opcode;
using ir::Type;

namespace {

// Cases op_cases.h leaves out: state, uniform and vote ops.
std::vector<ir::Function> extra_functions() {
  std::vector<ir::Function> out;
  for (Type t : {Type::I1, Type::I8, Type::I16, Type::I32, Type::I64, Type::F16, Type::F32, Type::F64}) {
    for (Opcode op : {Opcode::Undef, Opcode::LoadUniform}) {
      ir::Function f;
      f.uniform_bytes = 16;
      f.add_block("entry");
      ir::Builder b(f);
      auto v = b.emit(op, t, {}, 0, 0, 0);
      b.emit(Opcode::StoreVar, Type::Void, {v}, 0, 0, f.add_var("out", t));
      b.ret();
      out.push_back(std::move(f));
    }
  }
  for (Type t : {Type::I32, Type::F32}) {
    ir::Function f;
    f.uniform_bytes = 64;
    f.add_block("entry");
    ir::Builder b(f);
    auto off = b.emit(Opcode::LoadVar, Type::I32, {}, 0, 0, f.add_var("off", Type::I32));
    auto v = b.load_uniform_idx(t, off, 4);
    b.emit(Opcode::StoreVar, Type::Void, {v}, 0, 0, f.add_var("out", t));
    b.ret();
    out.push_back(std::move(f));
  }
  for (Opcode op : {Opcode::EntryMask, Opcode::LaneId}) {
    ir::Function f;
    f.add_block("entry");
    ir::Builder b(f);
    Type t = op == Opcode::LaneId ? Type::I32 : Type::I1;
    auto v = b.emit(op, t, {});
    b.emit(Opcode::StoreVar, Type::Void, {v}, 0, 0, f.add_var("out", t));
    b.ret();
    out.push_back(std::move(f));
  }
  for (Opcode op : {Opcode::Ballot, Opcode::Any, Opcode::All}) {
    ir::Function f;
    f.add_block("entry");
    ir::Builder b(f);
    auto p = b.emit(Opcode::LoadVar, Type::I1, {}, 0, 0, f.add_var("p", Type::I1));
    auto m = b.emit(Opcode::LoadVar, Type::I1, {}, 0, 0, f.add_var("m", Type::I1));
    Type rt = op == Opcode::Ballot ? Type::I32 : Type::I1;
    auto r = b.emit(op, rt, {p, m});
    b.emit(Opcode::StoreVar, Type::Void, {r}, 0, 0, f.add_var("out", rt));
    b.ret();
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace

TEST_CASE("backend: each tier's declared native ops are exactly the ops it compiles without a helper call") {
  std::vector<ir::Function> fns;
  for (const OpCase& c : all_op_cases(light())) {
    ir::Function f;
    build_op_function(c, f);
    fns.push_back(std::move(f));
  }
  for (ir::Function& f : extra_functions()) fns.push_back(std::move(f));
  size_t compiled = 0;
  for (Tier tier : host_tiers()) {
    const std::string tier_name = tier->name;
    CAPTURE(tier_name);
    backend::NativeOps seen{}, tried{};
    for (const ir::Function& f : fns) {
      REQUIRE(ir::verify(f) == "");
      JitOptions o;
      o.tier = tier;
      std::string err;
      auto cf = compile(f, o, &err);
      REQUIRE_MESSAGE(cf, err);
      ++compiled;
      std::vector<Opcode> helpers = cf->helper_ops();
      CHECK(helpers.size() == cf->lane_helper_ops() + cf->warp_helper_ops());
      // Without a helper call every op of the function is native in its form.
      for (ir::ValueId v : f.blocks[0].insts) {
        Opcode op = f.insts[v].op;
        if (ir::op_info(op).terminator) continue;
        uint16_t bit = backend::type_bit(backend::native_key_type(f, v));
        tried[size_t(op)] |= bit;
        if (helpers.empty()) seen[size_t(op)] |= bit;
      }
    }
    for (int op = 0; op < ir::kNumOpcodes; ++op) {
      const std::string op_name(ir::op_name(Opcode(op)));
      CAPTURE(op_name);
      uint16_t declared = (*tier->native_ops)[size_t(op)];
      CHECK_MESSAGE((seen[size_t(op)] & ~declared) == 0,
                    "native but undeclared: " << backend::type_set_name(seen[size_t(op)] & ~declared));
      CHECK_MESSAGE((declared & ~seen[size_t(op)]) == 0,
                    "declared but never compiled without a helper: "
                        << backend::type_set_name(declared & ~seen[size_t(op)]) << "; tried without success: "
                        << backend::type_set_name(tried[size_t(op)] & declared & ~seen[size_t(op)]));
    }
  }
  CHECK(compiled >= fns.size());
}

}  // namespace gpurc_test_backend_native_ops
