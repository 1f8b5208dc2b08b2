// The host code of the PICA200 reference loop shader's LOOP body (docs/
// pica200.md, "Issue 13, sixth session: the loop shader"): the strips after
// the first run the body as one straight line per iteration. Pins the
// lowering rules that made it short (docs/backend_x64.md): a plain-move back
// edge with each accumulator moved into its phi's home at its definition
// (no launch-mask ANDs, no spills on AVX-512), the loop counter left out of
// the counted strips, one float test per MAD (the fused product and sum),
// the immediate shift of the index and the gather / zero paths of
// load_uniform_idx out of line. Before: 202 (AVX-512) and 256 (AVX2)
// instructions. Ninth session: one NaN test for two MADs' sums, constant
// operands read from the pool. A tier the host lacks is checked on its
// listing (JitOptions::listing_only).
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "backend_x64/jit.h"
#include "frontend/pica200/translate.h"
#include "ir/builder.h"
#include "ir/passes.h"
#include "tests/backend_x64/reference_shader.h"
#include "tests/backend_x64/tier_compile.h"

namespace gpurc_test_backend_x64_loop_code {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::x64;

namespace {

struct Line {
  uint64_t off;
  std::string text;
};

// The listing's instruction lines (offset, text). GPURC_TEST_DUMP_LOOP
// prints them, tagged with `tag`, when a case asks (`dump`).
std::vector<Line> listing_lines(const CompiledFunction& cf, bool dump = false, const std::string& tag = "") {
  std::vector<Line> lines;
  std::istringstream in(cf.disassemble());
  for (std::string l; std::getline(in, l);) {
    std::istringstream ls(l);
    Line x;
    if (!(ls >> std::hex >> x.off)) continue;
    std::getline(ls >> std::ws, x.text);
    if (dump && std::getenv("GPURC_TEST_DUMP_LOOP"))
      std::printf("%s %8llx  %s\n", tag.c_str(), (unsigned long long)x.off, x.text.c_str());
    lines.push_back(x);
  }
  return lines;
}

// The "other strips" iteration: from the target of the jump after the
// trip-count decrement (`sub qword ptr [rsp+0x20], 0x01`, kLoopLeftOffset)
// to that jump (a `jnz` since the thirteenth session: nothing to copy on
// the back edge; before it, `jz` to the exit and a `jmp` back).
std::vector<Line> counted_loop_body(const CompiledFunction& cf) {
  const std::vector<Line> lines = listing_lines(cf);
  const uint64_t base = reinterpret_cast<uint64_t>(cf.code());
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].text.rfind("sub qword ptr [rsp+0x20]", 0) != 0) continue;
    for (size_t j = i; j < lines.size(); ++j) {
      const bool jmp = lines[j].text.rfind("jmp ", 0) == 0, jnz = lines[j].text.rfind("jnz ", 0) == 0;
      if (!jmp && !jnz) continue;
      const uint64_t target = std::stoull(lines[j].text.substr(4), nullptr, 16) - base;
      for (size_t h = 0; h < i; ++h)
        if (lines[h].off == target) return std::vector<Line>(lines.begin() + long(h), lines.begin() + long(j) + 1);
      return {};
    }
  }
  return {};
}

// The code at the counted loop's exit (the target of the iteration's `jz`,
// or the code after its closing `jnz`) up to and including its first `jnz`:
// the deferred NaN test of the accumulators (loops.cpp, loop_test_deferred),
// which jumps to the rerun.
std::vector<Line> counted_loop_exit_test(const CompiledFunction& cf, const std::vector<Line>& body) {
  if (body.empty()) return {};
  const uint64_t base = reinterpret_cast<uint64_t>(cf.code());
  uint64_t target = 0;
  bool after_body = false;
  if (body.back().text.rfind("jnz ", 0) == 0) after_body = true;
  else if (body.size() >= 2 && body[body.size() - 2].text.rfind("jz ", 0) == 0)
    target = std::stoull(body[body.size() - 2].text.substr(3), nullptr, 16) - base;
  else return {};
  const std::vector<Line> lines = listing_lines(cf);
  std::vector<Line> out;
  bool in_test = false, past = false;
  for (const Line& l : lines) {
    if (after_body) {  // the code after the body's last line
      in_test = in_test || past;
      past = past || l.off == body.back().off;
    } else {
      in_test = in_test || l.off == target;
    }
    if (!in_test) continue;
    out.push_back(l);
    if (l.text.rfind("jnz ", 0) == 0 || out.size() > 24) break;
  }
  return out;
}

}  // namespace

TEST_CASE("x64 jit: the PICA200 loop shader's counted iteration is short on both tiers") {
  ir::Function f = test::translate_reference_shader("ref_loop");
  REQUIRE(ir::run_pipeline(f, ir::PassOptions{}) == "");
  if (std::getenv("GPURC_TEST_DUMP_IR")) std::printf("%s\n", ir::print(f).c_str());
  {
    // Twelfth session (ir/pass_fold_selects.cpp): the IFC / else writes r5
    // and o1 as select(c, then, else), not select(c, then, select(!c, else,
    // old)), and their old values are not loaded (24 -> 14 load_vars: the
    // entry block copied 8 of them into value slots per strip; 20 -> 12 selects).
    size_t selects = 0, loads = 0;
    for (const ir::Block& b : f.blocks)
      for (ir::ValueId v : b.insts) {
        selects += f.insts[v].op == ir::Opcode::Select;
        loads += f.insts[v].op == ir::Opcode::LoadVar;
      }
    CHECK(selects == 12);
    CHECK(loads == 14);
  }
  // Eighth session: 101 / 127 -> 85 / 110 (the index read as equal in every
  // lane, no null tests after the entry block's, the accumulators' flush
  // left to the stores after the loop).
  // Ninth session: 81 / 105 -> 66 / 91 (one NaN test for two sums where
  // the registers allow, AVX-512; constant operands from the pool; the
  // range check's compare leaves only its mask for the four selects; AVX2's
  // accumulators without a home register stored into their phis' slots at
  // their definition).
  // Tenth session: AVX2 91 -> 86 (the range check's compare leaves its
  // complement against 95 from the pool, and the four selects read 1.0 from
  // the pool: neither takes a register or a broadcast); 86 -> 85 (the trip
  // count's subtract reads its step from the frame slot as a memory operand).
  // Eleventh session: 66 / 85 -> 63 / 81 (the LOOP counter private to the
  // run, so the counted strips leave it out; i0.z read once at the LOOP, so
  // aL's step is a value from before the loop: pinned on AVX-512, a frame
  // operand of the add on AVX2); AVX2 81 -> 75 (a MAD's accumulator that
  // lives in its phi's slot is the add's memory operand: no load, and the
  // registers freed keep the selected components and v1 out of the frame).
  // Twelfth session: 63 / 75 -> 51 / 51 (the eight accumulators' NaN tests
  // deferred to one test after the loop, which reruns the strip with every
  // test when a lane is a NaN: loops.cpp, loop_defer_nan_tests) -> 43 / 47
  // (an untested sum written straight into its phi's home register: no move).
  // Thirteenth session: 43 / 47 -> 37 / 41 (the four components of c10[aL]
  // share one bounds check, of the largest displacement: uniform_indexed.cpp,
  // the checked windows) -> 36 / 40 (aL's update defined in its phi's home
  // register: no move; loops.cpp, loop_def_home).
  // -> 35 / 39 (the back edge copies nothing: `jnz` back instead of `jz` to
  // the exit and `jmp` back; loops.cpp, loop_back_copy_empty).
  // Sixteenth session: 35 / 39 -> 30 / 34 (the range check folded into the
  // window's offset check: no compare, no blends; uniform_indexed.cpp,
  // plan_uniform_index_folds) -> 30 / 31 (AVX2: three more accumulators in
  // vector registers 3..5, no store to their slots; loops.cpp,
  // loop_scratch_homes_free).
  const std::map<Tier, size_t> bound = {{Tier::Avx512, 30}, {Tier::Avx2, 31}};
  size_t tiers = 0;
  for (Tier t : {Tier::Avx512, Tier::Avx2}) {
    // A tier the host lacks is compiled for its listing only (never run).
    ++tiers;
    auto cf = test::compile_for_tier(f, t);
    // The loop is throughput-bound (many independent MADs per iteration):
    // it stays strip-outer rather than strip-interleaved (loops.cpp).
    CHECK(cf->disassemble().find("xor ebp, 0x") == std::string::npos);
    const std::vector<Line> body = counted_loop_body(*cf);
    CAPTURE(int(t));
    REQUIRE(!body.empty());
    if (std::getenv("GPURC_TEST_DUMP_LOOP"))  // a reading aid: the iteration's listing, tier 0 = AVX-512
      for (const Line& l : body) std::printf("%d %8llx  %s\n", int(t), (unsigned long long)l.off, l.text.c_str());
    CHECK(body.size() <= bound.at(t));
    size_t tests = 0, masked_copies = 0, frame = 0, null_tests = 0, lane_tests = 0, const_bcasts = 0, pair_tests = 0;
    size_t bools = 0, staged = 0, uniform_loads = 0, offset_checks = 0;
    for (const Line& l : body) {
      // A back-edge copy through scratch 0 (a phi's operand spilled, then
      // copied slot to slot): the operands go to the phis' slots early instead.
      staged += l.text.rfind("vmovdqu ymm0, [r12", 0) == 0 || l.text.rfind("vmovdqu32 zmm0, [r12", 0) == 0;
      // The range check's 0/1 lanes (AVX-512: a broadcast of 1 under k1; AVX2:
      // the sign bit shifted down and back up for the blend).
      bools += l.text.find("{k1} {z}") != std::string::npos || l.text.find(", 0x1F") != std::string::npos;
      // A constant broadcast into a register (not a masked bool, not a uniform).
      const_bcasts += l.text.rfind("vpbroadcastd", 0) == 0 && l.text.find("ptr [0x") != std::string::npos &&
                      l.text.find("{k") == std::string::npos;
      if (l.text.rfind("vcmpps", 0) == 0) {  // vcmpps dst, a, b, imm: a test of two sums has a != b
        std::istringstream ops(l.text.substr(7));
        std::string d, a, b;
        std::getline(ops, d, ',');
        std::getline(ops >> std::ws, a, ',');
        std::getline(ops >> std::ws, b, ',');
        pair_tests += a != b;
      }
      uniform_loads += l.text.find("[r15+0x") != std::string::npos && l.text.find("rdx") == std::string::npos;
      null_tests += l.text.rfind("test r15", 0) == 0;
      offset_checks += l.text.rfind("cmp edx", 0) == 0;
      lane_tests += l.text.rfind("vpcmpeqd", 0) == 0 || l.text.rfind("vmovmskps", 0) == 0;
      tests += l.text.rfind("vfpclassps", 0) == 0 || l.text.rfind("vcmpps", 0) == 0;
      masked_copies += l.text.find("[r12+r14*1]") != std::string::npos;  // the launch mask at frame offset 0
      frame += l.text.find("[r12+r14") != std::string::npos;
    }
    // No NaN test in the iteration (before the twelfth session: one per MAD,
    // on AVX-512 one per two MADs): the eight accumulators are tested after
    // the loop, two per unordered compare, ORed, one jump to the rerun.
    CHECK(tests == 0);
    CHECK(pair_tests == 0);
    // The sums whose phis have a home register are added into it (8 on
    // AVX-512, 4 on AVX2), and aL's update is defined in its home (before
    // the thirteenth session: one move): no register-to-register move.
    size_t moves = 0;
    for (const Line& l : body) moves += l.text.rfind("vmovdqa", 0) == 0;
    CHECK(moves == 0);
    const std::vector<Line> exit_test = counted_loop_exit_test(*cf, body);
    size_t unordered = 0, ors = 0;
    for (const Line& l : exit_test) {
      if (std::getenv("GPURC_TEST_DUMP_LOOP")) std::printf("%d exit %8llx  %s\n", int(t), (unsigned long long)l.off, l.text.c_str());
      unordered += l.text.rfind("vcmpps", 0) == 0 && l.text.size() > 6 && l.text.compare(l.text.size() - 6, 6, ", 0x03") == 0;
      ors += l.text.rfind("vorps", 0) == 0 || l.text.rfind("korw", 0) == 0;
    }
    REQUIRE(!exit_test.empty());
    CHECK(exit_test.back().text.rfind("jnz ", 0) == 0);
    CHECK(unordered == 4);
    CHECK(ors == 3);
    // The index's masks (0xff, 0x7f), its offset (10) and the range check's
    // 96 are memory operands: no broadcast of a constant per iteration
    // (AVX2 too since the tenth session: it compares against 95 from the pool
    // and its selects read 1.0 from the pool).
    CHECK(const_bcasts == 0);
    CHECK(bools == 0);  // the four selects blend with the compare's mask (k1 / vector 0)
    CHECK(staged == 0);
    CHECK(masked_copies == 0);
    CHECK(null_tests == 0);  // the entry block's load_uniform tested the uniform pointer
    CHECK(uniform_loads == 0);  // i0.z (aL's step) is read at the LOOP, before the loop (only c10[aL] inside)
    CHECK(lane_tests == 0);  // aL is equal in every lane: no all-lanes-equal test of the offset
    CHECK(offset_checks == 1);  // one check of c10[aL] for its four components (before: four)
    if (t == Tier::Avx512) CHECK(frame == 0);  // every phi, accumulator and component in a register
    // The range check (aL + 10) & 0x7f < 96 is the window check's bound
    // (0x5ff = 96 * 16 - 1, below the block's last offset): no compare and
    // no blend in the iteration (before the sixteenth session: one compare,
    // four blends).
    size_t blends = 0, cmps = 0, bound_checks = 0, slot_stores = 0;
    for (const Line& l : body) {
      blends += l.text.rfind("vblendvps", 0) == 0 || l.text.rfind("vpblendmd", 0) == 0;
      cmps += l.text.rfind("vpcmp", 0) == 0;
      bound_checks += l.text == "cmp edx, 0x5FF";
      slot_stores += l.text.rfind("vmovdqu [r12+r14", 0) == 0;
    }
    CHECK(blends == 0);
    CHECK(cmps == 0);
    CHECK(bound_checks == 1);
    // AVX2: one accumulator left in its slot (before: four), the others in
    // ymm7..10 and ymm3..5.
    CHECK(slot_stores <= (t == Tier::Avx2 ? 1u : 0u));
  }
  CHECK(tiers >= 1);
}

// The draw contract (pica::TranslateOptions::draw_only, fourteenth
// session): the public API's draws read back only o-registers and start
// every register at zero, so the loop shader's exit block stores o0-o2 and
// nothing else (before: r0, r1, r5, aL, cmp.x and cmp.y too, ~34 host
// instructions per strip on AVX2, and r5's four selects and cmp.y's compare
// were computed for those stores only). The counted iteration keeps its
// length. Without the contract the same code stores the state vars.
TEST_CASE("x64 jit: under the draw contract the PICA200 loop shader stores only its outputs") {
  ir::Function draw = test::translate_reference_shader("ref_loop", true);
  ir::Function full = test::translate_reference_shader("ref_loop", false);
  REQUIRE(ir::run_pipeline(draw, ir::PassOptions{}) == "");
  REQUIRE(ir::run_pipeline(full, ir::PassOptions{}) == "");
  // Var byte offsets: 128 per var (32 lanes of 4 bytes); r0 is var 128.
  const uint64_t first_temp = 128 * 128;
  const std::map<Tier, size_t> bound = {{Tier::Avx512, 30}, {Tier::Avx2, 31}};
  for (Tier t : {Tier::Avx512, Tier::Avx2}) {
    CAPTURE(int(t));
    size_t out_stores[2] = {0, 0}, state_stores[2] = {0, 0}, selects[2] = {0, 0};
    for (int which = 0; which < 2; ++which) {
      auto cf = test::compile_for_tier(which == 0 ? draw : full, t);
      bool in_body = true;
      for (const Line& line : listing_lines(*cf, true, std::to_string(int(t)) + " " + std::to_string(which))) {
        const std::string& x = line.text;
        // Selects in the function's own code, before its `ret`: not the
        // out-of-line float fixes after it, nor the in-line NaN fixes of
        // DAZ-mode results (lower_float.cpp, daz_fix_inline: vblendvps x, x,
        // [pool NaN], ymm0), which the full variant has more of.
        in_body = in_body && x != "ret";
        const bool nan_fix = x.rfind("vblendvps", 0) == 0 && x.find(", [0x") != std::string::npos &&
                             x.size() >= 7 && x.compare(x.size() - 7, 7, "], ymm0") == 0;
        selects[which] += in_body && ((x.rfind("vblend", 0) == 0 && !nan_fix) || x.rfind("vpblendm", 0) == 0);
        // A var store: vmovdqu / vmovdqu32 [r13+r14*1+disp], reg.
        if (x.rfind("vmovdqu", 0) != 0 || x.find(" [r13+") == std::string::npos) continue;
        const size_t plus = x.find("+0x", x.find("[r13+"));
        const size_t close = x.find(']', x.find("[r13+"));
        REQUIRE(close != std::string::npos);
        const uint64_t disp = plus != std::string::npos && plus < close ? std::stoull(x.substr(plus + 3), nullptr, 16) : 0;
        (disp >= first_temp ? state_stores : out_stores)[which] += 1;
      }
      if (which == 0) {
        const std::vector<Line> body = counted_loop_body(*cf);
        REQUIRE(!body.empty());
        CHECK(body.size() <= bound.at(t));
      }
    }
    CHECK(state_stores[0] == 0);
    CHECK(out_stores[0] >= 12);       // o0, o1, o2 (o2 = r1)
    CHECK(state_stores[1] >= 15);     // r0, r1, r5, aL, cmp.x, cmp.y
    CHECK(selects[0] < selects[1]);   // r5's selects are gone
  }
}

// The values the loop leaves in r0, r1, o0 and o2 are stored with their
// FtzOut flush (their producers test for NaN only: store_needs_flush). In DAZ
// mode that flush is one add of -0.0 (backend_x64/lower_int.cpp, store_var):
// every store from scratch 2 follows a vaddps into it. Before: a copy into
// scratch 2 and four instructions (AVX2) or two (AVX-512).
TEST_CASE("x64 jit: the PICA200 loop shader's flushed stores add -0.0 on both tiers") {
  ir::Function f = test::translate_reference_shader("ref_loop");
  REQUIRE(ir::run_pipeline(f, ir::PassOptions{}) == "");
  for (Tier t : {Tier::Avx512, Tier::Avx2}) {
    auto cf = test::compile_for_tier(f, t);
    CAPTURE(int(t));
    std::vector<std::string> text;
    for (const Line& line : listing_lines(*cf, true, std::to_string(int(t)))) text.push_back(line.text);
    const std::string reg = t == Tier::Avx512 ? "zmm2" : "ymm2";
    size_t stores = 0, flushed = 0;
    for (size_t i = 1; i < text.size(); ++i) {
      const std::string& l = text[i];
      // (Not the warp loop's lane var writes, [r13+r8]: warp_loop.cpp.)
      if (l.rfind("vmovdqu", 0) != 0 || l.find("[r13+") == std::string::npos || l.size() < reg.size() ||
          l.compare(l.size() - reg.size(), reg.size(), reg) != 0 || l.find("[r13+r8") != std::string::npos)
        continue;
      ++stores;
      flushed += text[i - 1].rfind("vaddps " + reg + ",", 0) == 0;
    }
    CHECK(stores >= 16);  // r0, r1, o0 and o2 (o2 = r1)
    CHECK(flushed == stores);
  }
}

// A DP4 as the PICA200 translation emits it (four DAZ products, then three
// sums, each product and partial sum read only by the next add) is one chain
// (backend_x64/lower_float.cpp, lower_daz_chain): one NaN test of the last
// sum in the hot code instead of five (the fused product + sum saved one of
// six). The fixes are out of line, after the epilogue's ret.
TEST_CASE("x64 jit: a DP4's products and sums are tested once, on both tiers") {
  constexpr uint32_t kMul = ir::ff::FtzIn | ir::ff::FtzOut | ir::ff::ZeroMul;
  constexpr uint32_t kAdd = ir::ff::FtzIn | ir::ff::FtzOut;
  ir::Function f;
  for (int i = 0; i < 9; ++i) f.add_var("v" + std::to_string(i), ir::Type::F32);
  f.add_block("entry");
  ir::Builder b(f);
  std::vector<ir::ValueId> x;
  for (uint32_t i = 0; i < 8; ++i) x.push_back(b.emit(ir::Opcode::LoadVar, ir::Type::F32, {}, 0, 0, i));
  auto pw = b.fmul(x[3], x[7], kMul), pz = b.fmul(x[2], x[6], kMul), py = b.fmul(x[1], x[5], kMul),
       px = b.fmul(x[0], x[4], kMul);
  auto dp = b.fadd(b.fadd(b.fadd(px, py, kAdd), pz, kAdd), pw, kAdd);
  b.emit(ir::Opcode::StoreVar, ir::Type::Void, {dp}, 0, 0, 8);
  b.ret();
  REQUIRE(ir::verify(f) == "");
  for (Tier t : {Tier::Avx512, Tier::Avx2}) {
    auto cf = test::compile_for_tier(f, t);
    CAPTURE(int(t));
    size_t tests = 0, products = 0, sums = 0;
    for (const Line& line : listing_lines(*cf, true, std::to_string(int(t)))) {
      const std::string& text = line.text;
      if (text == "ret") break;  // the cold code follows the epilogue
      tests += text.rfind("vcmpps", 0) == 0 || text.rfind("vfpclassps", 0) == 0;
      products += text.rfind("vmulps", 0) == 0;
      sums += text.rfind("vaddps", 0) == 0;
    }
    CHECK(products == 4);
    CHECK(sums == 3 + 1);  // and the store's flush (x + -0.0)
    CHECK(tests == 1);
  }
}

}  // namespace gpurc_test_backend_x64_loop_code
