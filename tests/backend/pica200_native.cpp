// PICA200 code compiles to vector code only: the three reference shaders
// (bench/pica200-reference/ref_*.json, the published words and descriptors of
// /work/shared/bench/pica200-reference-shaders.md), every bundled example
// (examples/pica200/*.pica) and a program using every ALU instruction
// (relative c[] reads through a0.x, a0.y and aL included) are translated,
// run through the pass pipeline and compiled on every tier with no
// per-lane helper call (the geometry example's EMIT stores and its overflow
// trap are warp ops and may call their warp helpers); the all-ALU program
// also with the max_inf_quirk and f24 float options.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "frontend/pica200/assembler.h"
#include "frontend/pica200/shbin.h"
#include "frontend/pica200/translate.h"
#include "ir/passes.h"
#include "tiers.h"

namespace gpurc_test_backend_pica200_native {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::backend::test;

namespace {

struct Shader {
  std::string name;
  pica::Program program;
  pica::TranslateOptions options;
};

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p);
  REQUIRE_MESSAGE(in, "cannot open " << p.string());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<uint32_t> words(const nlohmann::json& a) {
  std::vector<uint32_t> out;
  for (const auto& w : a) out.push_back(uint32_t(std::stoul(w.get<std::string>(), nullptr, 16)));
  return out;
}

// Every ALU instruction of the ISA (the wide-source forms dphi / sgei /
// slti / madi / dsti come from a uniform in the second source), CMP with
// every operator, MOVA, relative reads through a0.x, a0.y and aL.
constexpr const char* kAllAlu = R"(.fvec table[8] c0
.consti loopParams(3, 1, 2, 0)
.constf consts(0.0, 1.0, 0.5, 2.0)
.proc main
    add r0, c11, v0
    mul r1, -c13.yxwz, v2
    mad r2, v4, c15, r1
    mad r3, v1, c9, r2
    dp3 r4.x, c11, v0
    dp4 r4.y, c3, v0
    dph r4.z, v0, c11
    dph r4.w, v0, c7
    dst r5, v1, c12
    dst r6, v3, c9
    ex2 r7.x, v0.x
    lg2 r7.y, v1.y
    rcp r7.z, v2.z
    rsq r7.w, v3.w
    litp r8, v8
    sge r9, v0, c11
    sge r9.x, v0, c4
    slt r10, v1, c12
    slt r10.y, v1, c5
    flr r11, v4
    max r12, c11, v0
    min r13, c13, v2
    mova a0.xy, v5
    mov r14, table[a0.x+1]
    add r14, table[a0.y+2], r14
    for loopParams
        mad r15, v6, table[lcnt], r15
    .end
    cmp c11, eq, ne, v0
    ifc cmp.x || cmp.y
        add r0, consts.yyyy, r0
    .end
    cmp c12, lt, le, v1
    ifc cmp.x && cmp.y
        add r1, consts.zzzz, r1
    .end
    cmp c13, gt, ge, v2
    ifc cmp.x
        add r2, consts.wwww, r2
    .end
    mov o0, r0
    mov o1, r14
    mov o2, r15
    end
.end
)";

std::vector<Shader> shaders() {
  std::vector<Shader> out;
  {
    pica::Shbin shbin;
    std::string err;
    REQUIRE_MESSAGE(pica::assemble(kAllAlu, shbin, err), err);
    for (int variant = 0; variant < 3; ++variant) {
      Shader s;
      s.name = variant == 0 ? "all-alu" : variant == 1 ? "all-alu (max_inf_quirk)" : "all-alu (f24)";
      s.program = pica::program_of(shbin);
      s.options.entry = shbin.dvles.empty() ? 0 : shbin.dvles[0].main_offset;
      s.options.fp.max_inf_quirk = variant == 1;
      s.options.fp.f24 = variant == 2;
      out.push_back(std::move(s));
    }
  }
  const std::filesystem::path root = GPURC_TEST_DATA;
  for (const char* name : {"ref_simple", "ref_heavy", "ref_loop"}) {
    nlohmann::json doc = nlohmann::json::parse(read_text(root / "bench/pica200-reference" / (std::string(name) + ".json")));
    Shader s;
    s.name = name;
    s.program.code = words(doc["program"]["words"]);
    s.program.descs = words(doc["program"]["descriptors"]);
    s.options.entry = doc["program"]["entry"].get<uint32_t>();
    out.push_back(std::move(s));
  }
  size_t examples = 0;
  for (const auto& e : std::filesystem::directory_iterator(root / "examples/pica200")) {
    if (e.path().extension() != ".pica") continue;
    pica::Shbin shbin;
    std::string err;
    REQUIRE_MESSAGE(pica::assemble(read_text(e.path()), shbin, err), e.path().string() << ": " << err);
    Shader s;
    s.name = e.path().filename().string();
    s.program = pica::program_of(shbin);
    if (!shbin.dvles.empty()) {
      s.options.entry = shbin.dvles[0].main_offset;
      s.options.geometry = shbin.dvles[0].is_geometry;
    }
    out.push_back(std::move(s));
    ++examples;
  }
  CHECK(examples >= 6);
  return out;
}

}  // namespace

TEST_CASE("backend: the PICA200 reference shaders and every bundled example compile with no per-lane helper call") {
  const std::vector<Shader> all = shaders();
  for (const Shader& s : all) {
    // Both stack translations: the static expansion (Auto picks it for
    // these) and the runtime stacks.
    for (pica::StackMode mode : {pica::StackMode::Static, pica::StackMode::Runtime}) {
      pica::TranslateOptions to = s.options;
      to.stacks = mode;
      ir::Function f;
      std::string err;
      REQUIRE_MESSAGE(pica::translate(s.program, to, f, err), s.name << ": " << err);
      REQUIRE_MESSAGE(ir::run_pipeline(f, ir::PassOptions{}) == "", s.name);
      for (Tier t : host_tiers()) {
        const std::string what =
            s.name + (mode == pica::StackMode::Static ? " (static stacks)" : " (runtime stacks)") + " on " + tier_name(t);
        CAPTURE(what);
        JitOptions o;
        o.tier = t;
        auto code = compile(f, o, &err);
        REQUIRE_MESSAGE(code, err);
        std::string helpers;
        for (ir::Opcode op : code->helper_ops()) helpers += " " + std::string(ir::op_name(op));
        CHECK_MESSAGE(code->lane_helper_ops() == 0, "per-lane helper calls:" << helpers);
      }
    }
  }
}

// Divergence stays local and relative reads are one indexed load: the loop
// reference shader's IFC (two-instruction arms) becomes selects, so the
// function keeps its CFG (the LOOP stays a plain loop, no any/all votes, no
// masked lowering) and c10[aL] is one load_uniform_idx per component instead
// of a select tree; on every tier no helper call of any kind remains.
TEST_CASE("backend: the PICA200 loop shader runs unmasked with indexed uniform loads") {
  for (const Shader& s : shaders()) {
    if (s.name != "ref_loop" && s.name != "ref_simple" && s.name != "ref_heavy") continue;
    ir::Function f;
    std::string err;
    REQUIRE_MESSAGE(pica::translate(s.program, s.options, f, err), s.name << ": " << err);
    REQUIRE_MESSAGE(ir::run_pipeline(f, ir::PassOptions{}) == "", s.name);
    size_t votes = 0, indexed = 0, selects = 0, branches = 0;
    for (const ir::Block& b : f.blocks)
      for (ir::ValueId v : b.insts) {
        ir::Opcode op = f.insts[v].op;
        votes += op == ir::Opcode::Any || op == ir::Opcode::All || op == ir::Opcode::Ballot;
        indexed += op == ir::Opcode::LoadUniformIdx;
        selects += op == ir::Opcode::Select;
        branches += op == ir::Opcode::CondBr;
      }
    CAPTURE(s.name);
    CHECK(votes == 0);
    if (s.name == "ref_loop") {
      CHECK(indexed == 4);         // both MADs read c10[aL].xyzw: four loads after CSE
      CHECK(branches == 1);        // the LOOP's back edge
      CHECK(selects < 64);         // IFC writes, the 96-entry rule, exit stores: no select tree (~500)
    }
    for (Tier t : host_tiers()) {
      JitOptions o;
      o.tier = t;
      auto code = compile(f, o, &err);
      REQUIRE_MESSAGE(code, err);
      CHECK_MESSAGE(code->helper_ops().empty(), s.name << " on " << tier_name(t) << " calls helpers");
    }
  }
}

// The fixed per-warp part of the generated code (docs/pica200.md, "Where the
// remaining time goes"): a vertex shader's translation carries the
// unlaunched-lanes contract, so its var stores are plain (no entry_mask, no
// select with the old value, no load of it), and the entry block is merged
// into the first guest block, so the inputs the shader reads are loaded where
// they are used (no copies through frame slots). ref_simple is then one
// block of straight-line code on every tier; a geometry shader keeps the
// selects (its translation does not carry the contract).
TEST_CASE("backend: PICA200 vertex shaders store outputs without entry_mask selects, entry merged") {
  size_t geometry = 0;
  for (const Shader& s : shaders()) {
    ir::Function f;
    std::string err;
    REQUIRE_MESSAGE(pica::translate(s.program, s.options, f, err), s.name << ": " << err);
    CAPTURE(s.name);
    CHECK(f.unlaunched_lanes_free == !s.options.geometry);
    ir::PassOptions po;
    po.verify_each = true;
    REQUIRE_MESSAGE(ir::run_pipeline(f, po) == "", s.name);
    // Stores of select(entry_mask, value, old value): construct_ssa's keeping
    // of unlaunched lanes (divergence lowering's own masks may still read
    // entry_mask elsewhere).
    size_t kept_stores = 0, selects = 0, load_vars = 0;
    for (const ir::Block& b : f.blocks)
      for (ir::ValueId v : b.insts) {
        const ir::Inst& in = f.insts[v];
        selects += in.op == ir::Opcode::Select;
        load_vars += in.op == ir::Opcode::LoadVar;
        if (in.op != ir::Opcode::StoreVar) continue;
        const ir::Inst& val = f.insts[in.args[0]];
        kept_stores += val.op == ir::Opcode::Select && f.insts[val.args[0]].op == ir::Opcode::EntryMask;
      }
    if (s.options.geometry) {
      ++geometry;
      CHECK(kept_stores >= 1);
      continue;
    }
    CHECK(kept_stores == 0);
    if (s.name == "ref_simple") {
      CHECK(f.blocks.size() == 1);
      CHECK(selects == 0);
      CHECK(load_vars == 12);  // v0, v1, v2: read once each, nothing loaded to be kept
    }
    if (s.name == "ref_loop") CHECK(selects < 40);  // the IFC's selects and the 96-entry rule only
  }
  CHECK(geometry >= 1);
}

}  // namespace gpurc_test_backend_pica200_native
