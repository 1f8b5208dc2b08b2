// Vertex and geometry programs: per-thread a[] inputs and o[] outputs on the
// interpreter and both JIT tiers, through replay documents (inputs.a,
// outputs o), with values derived by hand from the programs below.
#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>

#include "recompiler/replay.h"
#include "translate_harness.h"

namespace gpurc_test_tesla_vertex {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using replay::json;

namespace {

// attr_bytes 16: thread i has a[] = {10 i + 1, 10 i + 2, 10 i + 3, 10 i + 4}.
json vp_doc(const std::string& asm_text, const char* variant = "g200:vp", unsigned threads = 3) {
  json a = json::array();
  for (unsigned i = 0; i < threads; ++i)
    for (unsigned k = 1; k <= 4; ++k) a.push_back(10 * i + k);
  json d = {{"gpurc", 1}, {"isa", "tesla"}, {"name", "vp"}, {"variant", variant},
            {"program", {{"asm", asm_text}, {"attr_bytes", 16}}},
            {"launch", {{"grid", {1}}, {"block", {threads}}}},
            {"inputs", {{"a", {{"u32", a}}}}}};
  return d;
}

std::vector<uint32_t> outputs(const replay::ReplayRun& r) {
  const replay::Observed* o = r.find("outputs", "o");
  REQUIRE(o);
  std::vector<uint32_t> v(o->bytes.size() / 4);
  std::memcpy(v.data(), o->bytes.data(), v.size() * 4);
  return v;
}

replay::ReplayRun run(const json& d, Engine e) { return replay::run_document(d, std::filesystem::path("."), e, 1, false); }

}  // namespace

TEST_CASE("tesla vertex: a[] sources and o[] destinations, constant and $a-indexed, on every engine") {
  // o[0x0] = a[0x4]; o[0x8] = a[$a1+0xc] with $a1 = 0; o[0xc] = a[0x0] + a[0x8]
  // (integer add with an o[] destination); o[0x4] stays 0.
  json d = vp_doc(
      "mov b32 $r1 a[0x4]\n"
      "mov b32 o[0x0] $r1\n"
      "ld b32 $r2 a[$a1+0xc]\n"
      "st b32 o[$a1+0x8] $r2\n"
      "mov b32 $r3 a[0x0]\n"
      "mov b32 $r4 a[0x8]\n"
      "long add b32 o[0xc] $r3 $r4\n"
      "exit nop\n");
  for (const char* variant : {"g200:vp", "g200:gp", "g80:vp"}) {
    d["variant"] = variant;
    for (Engine e : host_engines()) {
      CAPTURE(variant);
      CAPTURE(engine_name(e));
      replay::ReplayRun r = run(d, e);
      INFO(r.fault.value_or(""));
      REQUIRE(!r.fault);
      std::vector<uint32_t> o = outputs(r);
      REQUIRE(o.size() == 12);
      for (uint32_t i = 0; i < 3; ++i) {
        CHECK(o[4 * i + 0] == 10 * i + 2);
        CHECK(o[4 * i + 1] == 0);
        CHECK(o[4 * i + 2] == 10 * i + 4);
        CHECK(o[4 * i + 3] == (10 * i + 1) + (10 * i + 3));
      }
    }
  }
}

TEST_CASE("tesla vertex: a 16-bit o[] destination writes its value into both halves of the word") {
  // $r1 = 0x12345678 + tid; `mov b16 o[0x6] $r1l` stores (lo16 * 0x10001) at o[0x4].
  json d = vp_doc(
      "long mov b32 $r1 0x12345678\n"
      "long add b32 $r1 $r1 $r0\n"
      "mov b16 o[0x6] $r1l\n"
      "mov b16 o[0x8] $r1h\n"
      "exit nop\n");
  for (Engine e : host_engines()) {
    CAPTURE(engine_name(e));
    replay::ReplayRun r = run(d, e);
    REQUIRE(!r.fault);
    std::vector<uint32_t> o = outputs(r);
    for (uint32_t i = 0; i < 3; ++i) {
      CHECK(o[4 * i + 0] == 0);
      CHECK(o[4 * i + 1] == (0x5678 + i) * 0x10001u);
      CHECK(o[4 * i + 2] == 0x12341234u);
      CHECK(o[4 * i + 3] == 0);
    }
  }
}

TEST_CASE("tesla vertex: $a + offset wraps at 16 bits, past attr_bytes faults on every engine") {
  // $a1 = 0xfffc: a[$a1+0x8] is a[0x4] after the 16-bit wrap.
  json wrap = vp_doc(
      "long mov b32 $r3 0xfffc\n"
      "shl $a1 $r3 0x0\n"
      "ld b32 $r2 a[$a1+0x8]\n"
      "st b32 o[$a1+0x10] $r2\n"  // o[0xc]
      "exit nop\n");
  for (Engine e : host_engines()) {
    CAPTURE(engine_name(e));
    replay::ReplayRun r = run(wrap, e);
    REQUIRE(!r.fault);
    std::vector<uint32_t> o = outputs(r);
    for (uint32_t i = 0; i < 3; ++i) CHECK(o[4 * i + 3] == 10 * i + 2);
  }
  // attr_bytes is 16: a[0x10], o[0x10] and a[$a1+0xc] with $a1 = 4 are outside.
  for (const char* prog : {"mov b32 $r1 a[0x10]\nexit nop\n", "mov b32 o[0x10] $r0\nexit nop\n",
                           "long mov b32 $r3 0x4\nshl $a1 $r3 0x0\nld b32 $r2 a[$a1+0xc]\nexit nop\n",
                           "long mov b32 $r3 0x4\nshl $a1 $r3 0x0\nst b32 o[$a1+0xc] $r0\nexit nop\n"}) {
    for (Engine e : host_engines()) {
      CAPTURE(prog);
      CAPTURE(engine_name(e));
      replay::ReplayRun r = run(vp_doc(prog), e);
      REQUIRE(r.fault);
      CHECK(r.fault_kind == "out-of-bounds");
    }
  }
}

TEST_CASE("tesla vertex: predicated o[] stores write only the lanes whose predicate holds") {
  // $c0 from tid - 1: zero for thread 1 only; (lg $c0) skips that thread's stores.
  json d = vp_doc(
      "long mov b32 $r5 0xffffffff\n"
      "long add b32 $c0 $r1 $r0 $r5\n"
      "mov b32 $r2 a[0x0]\n"
      "(lg $c0) mov b32 o[0x0] $r2\n"
      "(lg $c0) st b32 o[$a1+0x4] $r2\n"
      "exit nop\n");
  for (Engine e : host_engines()) {
    CAPTURE(engine_name(e));
    replay::ReplayRun r = run(d, e);
    INFO(r.fault.value_or(""));
    REQUIRE(!r.fault);
    std::vector<uint32_t> o = outputs(r);
    CHECK(o[0] == 1);
    CHECK(o[1] == 1);
    CHECK(o[4] == 0);
    CHECK(o[5] == 0);
    CHECK(o[8] == 21);
    CHECK(o[9] == 21);
  }
}

TEST_CASE("tesla vertex: replay documents for a[]/o[] are checked") {
  json d = vp_doc("exit nop\n");
  d["inputs"]["a"] = {{"u32", {1, 2, 3, 4}}};  // 16 bytes over 3 threads
  CHECK_THROWS_AS(run(d, Engine::Interp), replay::ReplayError);
  json big = vp_doc("exit nop\n", "g200:vp", 1);
  big["inputs"]["a"] = {{"u32", json::array({1, 2, 3, 4, 5})}};  // 20 bytes > attr_bytes 16
  CHECK_THROWS_AS(run(big, Engine::Interp), replay::ReplayError);
  json cp = vp_doc("exit nop\n", "g200");
  CHECK_THROWS_AS(run(cp, Engine::Interp), replay::ReplayError);  // inputs/attr_bytes need :vp or :gp
  json fp = vp_doc("exit nop\n", "g200:fp");
  CHECK_THROWS_AS(run(fp, Engine::Interp), replay::ReplayError);
  json odd = vp_doc("exit nop\n");
  odd["program"]["attr_bytes"] = 6;
  CHECK_THROWS_AS(run(odd, Engine::Interp), replay::ReplayError);
}

TEST_CASE("tesla vertex: p[] in geometry programs stays a clear unsupported fault naming the instruction") {
  json d = vp_doc("mov b32 $r1 p[0x4]\nexit nop\n", "g200:gp");
  for (Engine e : host_engines()) {
    CAPTURE(engine_name(e));
    replay::ReplayRun r;
    try {
      r = run(d, e);
    } catch (const replay::ReplayError& err) {
      FAIL("p[] did not assemble: " << err.what());
    }
    REQUIRE(r.fault);
    CHECK(r.fault_kind == "unsupported");
    CHECK(r.fault->find("0x0") != std::string::npos);
  }
}

// Random straight-line vertex and geometry programs, at least every other
// instruction with an a[] or o[] operand: where the interpreter runs them
// and the translator accepts them (p[] is refused), the IR interpreter and
// every JIT tier must reach the same end state, o[] of every thread
// included (tests/tesla/translate_harness.h).

TEST_CASE("tesla vertex: random straight-line vp/gp programs with a[]/o[] match the interpreter") {
  using namespace tesla_tr;
  for (const char* variant : {"g200:vp", "g200:gp"}) {
    Target t;
    std::string err;
    REQUIRE(parse_target(variant, t, err));
    std::vector<RowRef> rows = all_rows(t);
    std::vector<uint32_t> filler, exit_nop;
    REQUIRE(assemble("mov b32 $r0 $r0\n", t, filler, err));
    REQUIRE(assemble("exit nop\n", t, exit_nop, err));
    std::mt19937_64 rng(777);
    unsigned programs = light() ? 40 : 300, compared = 0, with_attr = 0;
    for (unsigned p = 0; p < programs; ++p) {
      std::vector<uint32_t> code;
      bool attr_in_program = false;
      for (unsigned k = 0; k < 6; ++k) {
        for (unsigned tries = 0; tries < 200; ++tries) {
          uint64_t bits = 0;
          unsigned words = 0;
          if (!random_insn(rows[rng() % rows.size()], t, rng, bits, words)) continue;
          Insn in = decode(reinterpret_cast<const uint32_t*>(&bits), words, 0, t);
          if (in.is_control || in.op == Op::Bar) continue;
          bool attr = false;
          for (auto& a : in.atoms)
            if (a.type == Atom::Opnd && a.op.kind == OKind::Mem && (a.op.space == 'a' || a.op.space == 'o')) attr = true;
          if (k % 2 == 0 && !attr) continue;
          attr_in_program |= attr;
          if (words == 2 && code.size() % 2) code.push_back(filler[0]);
          code.push_back(uint32_t(bits));
          if (words == 2) code.push_back(uint32_t(bits >> 32));
          break;
        }
      }
      if (code.size() % 2) code.push_back(filler[0]);
      code.insert(code.end(), exit_nop.begin(), exit_nop.end());
      Case c;
      c.variant = variant;
      c.threads = 32 - unsigned(p % 3) * 7;
      c.init = [p](unsigned i, ThreadState& s) {
        std::mt19937 r2(p * 31 + i);
        for (unsigned q = 0; q < 128; ++q) s.r[q] = edge_value(r2) & ((q % 4 == 0) ? 0x1fcu : ~0u);
        for (unsigned k = 0; k < 4; ++k) s.c[k] = uint8_t(r2() & 15);
        for (unsigned k = 1; k < 5; ++k) s.a[k] = uint16_t((r2() & 0x7f) * 4);  // some past attr_bytes
      };
      c.global0.assign(0x200, 0x5a);
      EndState ref = run_reference(c, code, t);
      std::string listing;
      for (size_t w = 0; w < code.size(); w += decode(code.data(), code.size(), w, t).words)
        listing += format(decode(code.data(), code.size(), w, t)) + "\n";
      INFO(std::string(variant) << " program " << p << "\n" << listing);
      for (gpurc::Engine eng : gpurc::host_engines()) {
        INFO("engine " << gpurc::engine_name(eng));
        EndState got = run_translated(c, code, t, eng);
        if (!ref.ok) {
          // The interpreter faults: the translation faults too (same kind),
          // or refuses the program naming an address.
          INFO(ref.error << " / " << got.error);
          CHECK(!got.ok);
          if (got.error.rfind("translate: ", 0) == 0) CHECK(got.error.find("at word 0x") != std::string::npos);
          continue;
        }
        if (!got.ok && got.error.rfind("translate: ", 0) == 0) {
          CHECK(got.error.find("at word 0x") != std::string::npos);
          break;
        }
        INFO(got.error);
        REQUIRE(got.ok);
        compare_states(c, ref, got);
        if (eng == gpurc::host_engines().back()) {
          ++compared;
          with_attr += attr_in_program;
        }
      }
    }
    MESSAGE(std::string(variant) << ": random programs compared: " << compared << " (with a[]/o[]: " << with_attr << ")");
    CHECK(with_attr >= programs / 10);
  }
}

TEST_CASE("tesla vertex: a[]/o[] of a huge launch is an error, not a host allocation") {
  // 65535 x 512 threads x 0x200 bytes = 16 GiB of a[] and as much o[].
  json d = vp_doc("exit nop\n", "g200:vp", 1);
  d.erase("inputs");
  d["program"]["attr_bytes"] = 0x200;
  d["launch"] = {{"grid", {65535}}, {"block", {512}}};
  for (Engine e : host_engines()) {
    CAPTURE(engine_name(e));
    CHECK_THROWS_AS(run(d, e), replay::ReplayError);
  }
}

}  // namespace gpurc_test_tesla_vertex
