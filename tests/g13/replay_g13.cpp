// The G13 replay handler: every example of examples/g13 on every engine of
// the host (expectations in the files are computed independently by
// examples/g13/make_replays.py), engines agreeing bit for bit, invalid files
// rejected with ReplayError, guest faults reported as faults.
#include <doctest/doctest.h>

#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <filesystem>

#include "frontend/g13/g13.h"
#include "frontend/g13/module/launch.h"
#include "recompiler/isa_engine.h"
#include "recompiler/replay.h"

namespace gpurc_test_g13_replay_g13 {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using replay::json;

namespace {

const std::filesystem::path kExamples = std::filesystem::path(GPURC_TEST_DATA) / "examples" / "g13";

const char* kKernels[] = {"vector_add", "reduction", "nested_if_while", "loop_break",
                          "half_float", "shuffle_ballot", "call_ret", "int64_accum", "int_hash"};

replay::ReplayRun run(const json& doc, Engine e, unsigned threads = 1) {
  return replay::run_document(doc, kExamples, e, threads, false);
}

json minimal(const std::string& asm_text) {
  return json{{"gpurc", 1}, {"isa", "g13"}, {"program", {{"asm", asm_text}}},
              {"launch", {{"grid", {1}}, {"block", {32}}}}};
}

}  // namespace

TEST_CASE("g13 replay: every example passes its expect on the interpreter") {
  for (const char* k : kKernels) {
    CAPTURE(k);
    json doc = replay::load_file(kExamples / (std::string(k) + ".json"));
    replay::ReplayRun r = run(doc, Engine::Interp, 2);
    REQUIRE_MESSAGE(!r.fault, *r.fault);
    auto mm = replay::check_expect(doc, r);
    CHECK_MESSAGE(mm.empty(), (mm.empty() ? "" : mm[0].what + " expected " + mm[0].expected + " got " + mm[0].actual));
  }
}

TEST_CASE("g13 replay: every example on every JIT tier matches the interpreter bit for bit") {
  for (Engine e : host_jit_tiers()) {
    for (const char* k : kKernels) {
      CAPTURE(k);
      CAPTURE(engine_name(e));
      json doc = replay::load_file(kExamples / (std::string(k) + ".json"));
      replay::ReplayRun ref = run(doc, Engine::Interp);
      replay::ReplayRun got;
      try {
        got = run(doc, e, 2);
      } catch (const replay::ReplayError& x) {
        // The translator does not cover the kernel yet: that must be a clear
        // translation error naming the instruction, never a wrong result.
        std::string what = x.what();
        CHECK_MESSAGE(what.find("g13 translate") != std::string::npos, what);
        MESSAGE("not translated yet: " << what);
        continue;
      }
      REQUIRE_MESSAGE(!got.fault, *got.fault);
      auto diff = replay::compare_runs(ref, got, 4);
      CHECK_MESSAGE(diff.empty(), (diff.empty() ? "" : diff[0].what + " expected " + diff[0].expected + " got " + diff[0].actual));
      CHECK(replay::check_expect(doc, got).empty());
    }
  }
}

TEST_CASE("g13 replay: registers, special registers and partial SIMD-groups") {
  // 40 threads in 2 threadgroups: SIMD-group 1 of each has 8 launched lanes.
  json doc = minimal(
      "get_sr r1, sr80 (thread_position_in_grid.x)\n"
      "get_sr r2, sr53 (simdgroup_index_in_threadgroup)\n"
      "get_sr r3l, sr0 (threadgroup_position_in_grid.x)\n"
      "iadd r4, r1, u0\n"
      "stop");
  doc["launch"]["grid"] = {2};
  doc["launch"]["block"] = {40};
  doc["state"] = {{"uniforms", {{"u0", 1000}}}};
  std::vector<uint32_t> r1, r2, r4;
  std::vector<uint16_t> r3l;
  for (uint32_t t = 0; t < 80; ++t) {
    r1.push_back(t);
    r2.push_back(t % 40 / 32);
    r3l.push_back(uint16_t(t / 40));
    r4.push_back(t + 1000);
  }
  doc["expect"] = {{"registers", {{"r1", {{"u32", r1}}}, {"r2", {{"u32", r2}}}, {"r3l", {{"u16", r3l}}}, {"r4", {{"u32", r4}}}}}};
  for (Engine e : host_engines()) {
    CAPTURE(engine_name(e));
    replay::ReplayRun r;
    try {
      r = run(doc, e);
    } catch (const replay::ReplayError& x) {
      CHECK(e != Engine::Interp);
      MESSAGE("not translated yet: " << x.what());
      continue;
    }
    auto mm = replay::check_expect(doc, r);
    CHECK_MESSAGE(mm.empty(), (mm.empty() ? "" : mm[0].what + " expected " + mm[0].expected + " got " + mm[0].actual));
  }
}

TEST_CASE("g13 replay: program from bytes equals program from assembly") {
  json a = replay::load_file(kExamples / "call_ret.json");
  json b = a;
  // "stop" is 88 00; any program given as raw bytes must run the same.
  std::vector<uint8_t> code;
  std::string err;
  REQUIRE(g13::assemble(replay::program_text(a, kExamples), code, err));
  std::string hex;
  for (uint8_t x : code) {
    hex += "0123456789abcdef"[x >> 4];
    hex += "0123456789abcdef"[x & 15];
  }
  b["program"] = {{"bytes", hex}};
  replay::ReplayRun ra = run(a, Engine::Interp), rb = run(b, Engine::Interp);
  CHECK(replay::compare_runs(ra, rb).empty());
  CHECK(replay::check_expect(b, rb).empty());
}

TEST_CASE("g13 replay: invalid files are ReplayErrors naming the field") {
  auto rejects = [](json doc, const std::string& needle) {
    CAPTURE(needle);
    try {
      replay::run_document(doc, kExamples, Engine::Interp, 1, false);
      FAIL("accepted");
    } catch (const replay::ReplayError& x) {
      CHECK_MESSAGE(std::string(x.what()).find(needle) != std::string::npos, x.what());
    }
  };
  json ok = minimal("stop");
  {
    json d = ok;
    d.erase("program");
    rejects(d, "program");
  }
  {
    json d = ok;
    d["program"] = {{"asm", "stop"}, {"bytes", "8800"}};
    rejects(d, "exactly one");
  }
  {
    json d = ok;
    d["program"] = {{"bytes", "zz"}};
    rejects(d, "program.bytes");
  }
  {
    json d = ok;
    d["program"] = {{"bytes", "ffffffff"}};  // no descriptor matches: the interpreter names the offset
    rejects(d, "");
  }
  {
    json d = ok;
    d["program"] = {{"asm", "frobnicate r1"}};
    rejects(d, "program");
  }
  {
    json d = ok;
    d["program"]["entry"] = 100;
    rejects(d, "program.entry");
  }
  {
    json d = ok;
    d["state"] = {{"uniforms", {{"u256", 1}}}};
    rejects(d, "state.uniforms.u256");
  }
  {
    json d = ok;
    d["state"] = {{"uniforms", {{"u1", "nope"}}}};
    rejects(d, "state.uniforms.u1");
  }
  {
    json d = ok;
    d["state"] = {{"vars", {}}};
    rejects(d, "state.vars");
  }
  {
    json d = ok;
    d["expect"] = {{"registers", {{"r128", {{"u32", {0}}}}}}};
    rejects(d, "expect.registers.r128");
  }
  {
    json d = ok;
    d["launch"]["block"] = {2048};
    rejects(d, "launch.block");
  }
  {
    json d = ok;
    d["inputs"] = json::object();
    rejects(d, "inputs");
  }
  {
    json d = minimal("texture_sample 0, 0b1100, 0b0, none, xyzw, 0b00, r4_r5_r6_r7, None, u0, 0, 0, 0, 0, 0, 0, 0");
    // Either the assembler or the interpreter refuses it, naming the instruction.
    try {
      replay::run_document(d, kExamples, Engine::Interp, 1, false);
      FAIL("accepted");
    } catch (const replay::ReplayError& x) {
      CHECK(std::string(x.what()).find("texture") != std::string::npos);
    }
  }
}

TEST_CASE("g13 replay: an out-of-bounds access is a guest fault on every engine") {
  json d = minimal("mov_imm r2, 5, 0b0\ndevice_store 0, i32, x, r2, u0_u1, r2, unsigned, 0\nstop");
  d["state"] = {{"uniforms", {{"u0", "0x100000"}, {"u1", 0}}}};
  d["memory"] = json::array({{{"name", "m"}, {"address", "0x100000"}, {"size", 16}}});
  for (Engine e : host_engines()) {
    CAPTURE(engine_name(e));
    replay::ReplayRun r;
    try {
      r = run(d, e);
    } catch (const replay::ReplayError& x) {
      CHECK(e != Engine::Interp);
      continue;
    }
    REQUIRE(r.fault);
    CHECK(r.fault_kind == "out-of-bounds");
  }
}

TEST_CASE("g13 run: threadgroup barriers order threadgroup memory across SIMD-groups") {
  // Each thread writes its id, barrier, reads the id of thread (63 - id):
  // only correct if all SIMD-groups finished their stores first.
  G13Launch L;
  std::string err;
  REQUIRE(g13::assemble("get_sr r1, sr51 (thread_index_in_threadgroup)\n"
                        "threadgroup_store i32, x, r1, 0, r1l\n"
                        "threadgroup_barrier\n"
                        "mov_imm r2, 63, 0b0\n"
                        "isub r2, r2, r1\n"
                        "threadgroup_load i32, x, r3, 0, r2l\n"
                        "wait 0\n"
                        "stop",
                        L.code, err));
  L.grid = {3, 1, 1};
  L.block = {64, 1, 1};
  L.shared_bytes = 256;
  for (Engine e : host_engines()) {
    CAPTURE(engine_name(e));
    rt::Memory mem;
    std::atomic<int> checked{0}, bad{0};
    G13Result r = run_g13(L, EngineAsHandle(e), mem, 2, [&](const rt::WarpInfo& w, const g13::SimdGroup& sg) {
      for (unsigned l = 0; l < w.lanes; ++l) {
        ++checked;
        if (sg.r32(3, l) != 63 - w.thread_linear(l)) ++bad;
      }
    });
    if (!r.error.empty()) {
      CHECK(e != Engine::Interp);
      MESSAGE("not translated yet: " << r.error);
      continue;
    }
    REQUIRE(r.ok());
    CHECK(checked == 192);
    CHECK(bad == 0);
  }
}

TEST_CASE("g13 run: what finish sees on every engine equals the interpreter (stacks or not, partial SIMD-groups)") {
  // The JIT runner packs from one start state per threadgroup (no stacks)
  // or per-warp SIMD-groups (stacks) and unpacks into a reused result: the
  // registers, uniforms and exec that finish sees must be the interpreter's.
  const char* progs[] = {
      "get_sr r1, sr80 (thread_position_in_grid.x)\n"
      "get_sr r2, sr53 (simdgroup_index_in_threadgroup)\n"
      "get_sr r3, sr51 (thread_index_in_threadgroup)\n"
      "imadd r4, r1, r1, r2\n"
      "uniform_store 2, i16, xy, 0, r4l_r4h, 12\n"
      "iadd r5, u6, r3\n"
      "stop",
      "get_sr r1, sr80 (thread_position_in_grid.x)\n"
      "stack_store i32, 1, 0, x, 4, r1, 8, 0\n"
      "iadd r1, r1, 7\n"
      "stack_load r6, i32, 1, 0, x, 4, 8, 0\n"
      "get_sr r7, sr49 (thread_position_in_threadgroup.y)\n"
      "stop"};
  for (int p = 0; p < 2; ++p) {
    G13Launch L;
    std::string err;
    REQUIRE_MESSAGE(g13::assemble(progs[p], L.code, err), err);
    L.grid = {3, 1, 1};
    L.block = {20, 2, 1};  // 40 threads: SIMD-groups of 32 and 8
    L.stack_bytes = p ? 64 : 0;
    L.uniforms[12] = 0x1234;
    using State = std::vector<uint32_t>;
    std::map<std::pair<uint64_t, uint32_t>, State> ref;
    for (Engine e : host_engines()) {
      CAPTURE(engine_name(e));
      rt::Memory mem;
      std::mutex lock;
      std::map<std::pair<uint64_t, uint32_t>, State> got;
      G13Result r = run_g13(L, EngineAsHandle(e), mem, 2, [&](const rt::WarpInfo& w, const g13::SimdGroup& sg) {
        State s;
        for (unsigned reg = 0; reg < 10; ++reg)
          for (unsigned l = 0; l < w.lanes; ++l) s.push_back(sg.r32(reg, l));
        for (unsigned u = 0; u < 16; ++u) s.push_back(sg.u32(u));
        s.push_back(sg.exec);
        s.push_back(sg.launched);
        std::lock_guard<std::mutex> g(lock);
        got[{w.block_linear, w.warp}] = s;
      });
      REQUIRE_MESSAGE(r.ok(), r.error);
      REQUIRE(got.size() == 6);
      if (e == Engine::Interp) ref = got;
      else CHECK(got == ref);
    }
    CHECK(ref.at({1, 1}).back() == 0xFFu);  // the partial SIMD-group
  }
}

TEST_CASE("g13 run: indexed device loads and stores at buffer edges, signed and unsigned, match the interpreter") {
  // device_load / device_store with a uniform base and a 32-bit index (no
  // lsl) is the x64 backend's indexed fast path: bounds from the index, dword
  // gathers. Index = thread + u4 (may be negative as signed, >= 2^31 as
  // unsigned); the base u0_u1 at the start, the middle or past the end of the
  // input buffer. Memory, fault kind, threadgroup, SIMD-group, lane and
  // address must equal the interpreter's on every engine.
  const char* progs[] = {
      "get_sr r1, sr80 (thread_position_in_grid.x)\n"
      "iadd r2, u4, r1\n"
      "device_load 0, i32, x, r3, u0_u1, r2, signed\n"
      "wait 0\n"
      "iadd r3, r3, r1\n"
      "device_store 0, i32, x, r3, u2_u3, r1, unsigned, 0\n"
      "stop",
      "get_sr r1, sr80 (thread_position_in_grid.x)\n"
      "iadd r2, u4, r1\n"
      "device_load 0, i32, x, r3, u0_u1, r2, unsigned\n"
      "wait 0\n"
      "device_store 0, i32, x, r3, u0_u1, r2, unsigned, 0\n"
      "device_store 0, i32, x, r1, u2_u3, r1, unsigned, 0\n"
      "stop",
      // Two components: the second element's address is (sext r2 + 1) << 2
      // from the base; the store's (lsl 1: no two threads write one element)
      // ((zext r1 << 1) + 1) << 2.
      "get_sr r1, sr80 (thread_position_in_grid.x)\n"
      "iadd r2, u4, r1\n"
      "device_load 0, i32, xy, r3_r4, u0_u1, r2, signed\n"
      "wait 0\n"
      "iadd r3, r3, r4\n"
      "device_store 0, i32, xy, r3_r4, u2_u3, r1, unsigned, lsl 1, 0\n"
      "stop"};
  const uint64_t in_addr = 0x100000, out_addr = 0x200000;
  const uint32_t in_words = 200;  // the launch has 256 threads: the last ones overrun the input
  struct Case { uint64_t base; uint32_t offset; };
  const Case cases[] = {
      {in_addr, 0},                       // threads >= 200 fault past the end
      {in_addr, uint32_t(-56)},           // all inside (signed) / >= 2^31 for the first ones (unsigned)
      {in_addr + 400, uint32_t(-100)},    // middle base, negative signed indices inside
      {in_addr + 400, uint32_t(-140)},    // ... and 40 below the start
      {in_addr + 4 * in_words, uint32_t(-256)},  // base at the end: only negative indices reach the buffer
      {in_addr - 64, 16},                 // base below the buffer
      {in_addr, 0x7fffffffu},             // index 2^31 - 1 + thread: past 2^31 for all but thread 0
      {in_addr, 169},                     // SIMD-group 0: only lane 31 one element past the end
      {in_addr, uint32_t(-1)},            // SIMD-group 0: only lane 0 one element below the start (signed)
  };
  for (int p = 0; p < 3; ++p)
    for (const Case& c : cases) {
      G13Launch L;
      std::string err;
      REQUIRE_MESSAGE(g13::assemble(progs[p], L.code, err), err);
      L.grid = {2, 1, 1};
      L.block = {128, 1, 1};
      L.uniforms[0] = uint16_t(c.base);
      L.uniforms[1] = uint16_t(c.base >> 16);
      L.uniforms[2] = uint16_t(c.base >> 32);
      L.uniforms[3] = uint16_t(c.base >> 48);
      L.uniforms[4] = uint16_t(out_addr);
      L.uniforms[5] = uint16_t(out_addr >> 16);
      L.uniforms[8] = uint16_t(c.offset);
      L.uniforms[9] = uint16_t(c.offset >> 16);
      std::optional<rt::LaunchFault> ref_fault, jit_fault;
      std::vector<uint8_t> ref_in, ref_out;
      for (Engine e : host_engines()) {
        CAPTURE(engine_name(e));
        CAPTURE(p);
        CAPTURE(c.base);
        CAPTURE(c.offset);
        rt::Memory mem;
        REQUIRE(mem.add_buffer("in", ir::Space::Global, in_addr, 4 * in_words, err));
        REQUIRE(mem.add_buffer("out", ir::Space::Global, out_addr, 8 * 256, err));
        for (uint32_t i = 0; i < in_words; ++i) {
          uint32_t v = i * 2654435761u;
          std::memcpy(mem.find("in")->data() + 4 * i, &v, 4);
        }
        G13Result r = run_g13(L, EngineAsHandle(e), mem, 1);
        REQUIRE_MESSAGE(r.error.empty(), r.error);
        std::vector<uint8_t> in(mem.find("in")->data(), mem.find("in")->data() + 4 * in_words);
        std::vector<uint8_t> out(mem.find("out")->data(), mem.find("out")->data() + 8 * 256);
        if (e == Engine::Interp) {
          ref_fault = r.fault;
          ref_in = in;
          ref_out = out;
          continue;
        }
        REQUIRE(ref_in.size() == in.size());
        CHECK(r.fault.has_value() == ref_fault.has_value());
        if (r.fault && ref_fault) {
          CHECK(r.fault->kind == ref_fault->kind);
          CHECK(r.fault->block.x == ref_fault->block.x);
          CHECK(r.fault->warp == ref_fault->warp);
          if (p == 2) {
            // A faulting multi-component load reports the first failing lane
            // of the first failing component on the IR, the first failing
            // lane on the interpreter (docs/g13.md): the tiers must agree.
            if (jit_fault) {
              CHECK(r.fault->lane == jit_fault->lane);
              CHECK(r.fault->addr == jit_fault->addr);
            }
            jit_fault = r.fault;
          } else {
            CHECK(r.fault->lane == ref_fault->lane);
            CHECK(r.fault->addr == ref_fault->addr);
          }
        }
        CHECK(in == ref_in);
        CHECK(out == ref_out);
      }
    }
}

TEST_CASE("g13 run: special registers from lane coordinates without a finish callback, any threadgroup shape") {
  // Without finish the launch leaves WarpInfo::thread unfilled and the JIT
  // runner derives the lane coordinates from the SIMD-group index: SIMD-groups
  // that span rows and planes, partial ones, several threadgroups. Each
  // thread stores its thread_position_in_grid, thread_position_in_threadgroup
  // and thread_index_in_threadgroup at its global index; the values are
  // checked against the launch's numbering computed here, on every engine.
  const char* prog =
      "get_sr r1, sr80 (thread_position_in_grid.x)\n"
      "get_sr r2, sr81 (thread_position_in_grid.y)\n"
      "get_sr r3, sr82 (thread_position_in_grid.z)\n"
      "get_sr r4, sr48 (thread_position_in_threadgroup.x)\n"
      "get_sr r5, sr49 (thread_position_in_threadgroup.y)\n"
      "get_sr r6, sr50 (thread_position_in_threadgroup.z)\n"
      "get_sr r7, sr51 (thread_index_in_threadgroup)\n"
      "get_sr r10, sr0 (threadgroup_position_in_grid.x)\n"
      "get_sr r11, sr1 (threadgroup_position_in_grid.y)\n"
      "imadd r12, r11, u12, r10\n"
      "imadd r13, r12, u13, r7\n"
      "device_store 0, i32, x, r1, u0_u1, r13, unsigned, 0\n"
      "device_store 0, i32, x, r2, u2_u3, r13, unsigned, 0\n"
      "device_store 0, i32, x, r3, u4_u5, r13, unsigned, 0\n"
      "device_store 0, i32, x, r4, u6_u7, r13, unsigned, 0\n"
      "device_store 0, i32, x, r5, u8_u9, r13, unsigned, 0\n"
      "device_store 0, i32, x, r6, u10_u11, r13, unsigned, 0\n"
      "device_store 0, i32, x, r7, u14_u15, r13, unsigned, 0\n"
      "stop";
  const rt::Dim3 shapes[] = {{40, 3, 2}, {7, 5, 3}, {32, 2, 1}, {64, 1, 1}, {1, 33, 1}, {5, 1, 9}};
  const uint32_t buffer_u[7] = {0, 2, 4, 6, 8, 10, 14};
  for (const rt::Dim3& block : shapes) {
    CAPTURE(block.x);
    CAPTURE(block.y);
    CAPTURE(block.z);
    G13Launch L;
    std::string err;
    REQUIRE_MESSAGE(g13::assemble(prog, L.code, err), err);
    L.grid = {3, 2, 1};
    L.block = block;
    const uint32_t count = uint32_t(block.count()), threads = count * 6;
    for (unsigned b = 0; b < 7; ++b) {
      const uint64_t addr = 0x100000 * (b + 1);
      L.uniforms[2 * buffer_u[b]] = uint16_t(addr);
      L.uniforms[2 * buffer_u[b] + 1] = uint16_t(addr >> 16);
    }
    L.uniforms[24] = uint16_t(L.grid.x);  // u12
    L.uniforms[26] = uint16_t(count);     // u13
    // The launch's numbering: threads x-major in a threadgroup, threadgroups x-major in the grid.
    std::vector<uint32_t> want[7];
    for (uint32_t g = 0; g < threads; ++g) {
      const uint32_t tg = g / count, t = g % count, tgx = tg % L.grid.x, tgy = tg / L.grid.x;
      const uint32_t x = t % block.x, y = t / block.x % block.y, z = t / (block.x * block.y);
      const uint32_t v[7] = {tgx * block.x + x, tgy * block.y + y, z, x, y, z, t};
      for (unsigned b = 0; b < 7; ++b) want[b].push_back(v[b]);
    }
    for (Engine e : host_engines()) {
      CAPTURE(engine_name(e));
      rt::Memory mem;
      for (unsigned b = 0; b < 7; ++b)
        REQUIRE(mem.add_buffer("b" + std::to_string(b), ir::Space::Global, 0x100000 * (b + 1), 4 * threads, err));
      G13Result r = run_g13(L, EngineAsHandle(e), mem, e == Engine::Interp ? 1 : 2);
      REQUIRE_MESSAGE(r.ok(), std::string(r.error + r.fault_message));
      for (unsigned b = 0; b < 7; ++b) {
        CAPTURE(b);
        std::vector<uint32_t> got(threads);
        std::memcpy(got.data(), mem.find("b" + std::to_string(b))->data(), 4 * threads);
        CHECK(got == want[b]);
      }
    }
  }
}

}  // namespace gpurc_test_g13_replay_g13
