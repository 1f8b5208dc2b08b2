// libFuzzer target, one per ISA (fuzz_diff_<isa>): the input is a guest
// program; the ISA module translates it (a refusal is fine: an unimplemented
// or invalid instruction is a clear error), then the program runs as a small
// replay document (one block, a few threads, one buffer, a small watchdog
// budget) on the ISA's reference interpreter and on every JIT tier this host
// has. Any disagreement is a crash: a tier that fails other than with a
// clear ReplayError, a fault on one side only, or any differing observed
// value. Runs that end on the
// watchdog are not compared (its units differ between the reference, which
// counts guest steps, and the JIT, which counts IR loop iterations).
//
// Input layout: byte 0 picks the thread (vertex) count, byte 1 the variant
// (and for pica200 the descriptor count and shader type), the rest is code
// (pica200: descriptor words then code words, or a .shbin).
#include <fmt/format.h>

#include <cstring>

#include "frontend/pica200/shbin.h"
#include "fuzz/libfuzzer/target.h"
#include "ir/ir.h"
#include "recompiler/replay.h"
#include "runtime/memory.h"

using namespace gpurc;
using replay::json;

namespace {

uint32_t read_word(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

json words_of(const uint8_t* p, size_t n) {
  json w = json::array();
  for (size_t i = 0; i + 4 <= n; i += 4)
    w.push_back(fmt::format("0x{:08x}", uint32_t(p[i]) | uint32_t(p[i + 1]) << 8 | uint32_t(p[i + 2]) << 16 |
                                             uint32_t(p[i + 3]) << 24));
  return w;
}

std::string hex_of(const uint8_t* p, size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) s += fmt::format("{:02x}", p[i]);
  return s;
}

// The replay document of the input, and the code the module translates; false
// when the input is too short to hold a program.
bool document(const std::string& isa, const isa::IsaModule& m, const uint8_t* data, size_t size, json& doc,
              std::vector<uint8_t>& code, std::string& variant) {
  if (size < 2 + 4) return false;
  // pica200's reference has a fixed step budget per vertex (no launch
  // budget), so fewer vertices keep each input fast: 1-33 (a partial warp,
  // one full warp, two warps).
  const unsigned threads = 1 + data[0] % (isa == "pica200" ? 33 : 64);
  const uint8_t sel = data[1];
  data += 2;
  size -= 2;
  const json buffer = {{"name", "g"}, {"address", "0x100000"}, {"size", 4096}, {"init", {{"iota", "u32"}}}};
  doc = {{"gpurc", 1}, {"isa", isa}, {"name", "libfuzzer input"}};
  if (isa == "pica200") {
    pica::Shbin shbin;
    std::string err;
    if (pica::is_shbin(data, size) && pica::parse_shbin(data, size, shbin, err)) {
      // A .shbin (the seeds): its code and descriptors as words.
      if (shbin.code.empty() || shbin.code.size() > 512 || shbin.descs.size() > 128) return false;
      json words = json::array(), descs = json::array();
      for (uint32_t w : shbin.code) words.push_back(fmt::format("0x{:08x}", w));
      for (uint32_t w : shbin.descs) descs.push_back(fmt::format("0x{:08x}", w));
      doc["program"] = {{"words", words}, {"descriptors", descs}, {"type", sel & 1 ? "geometry" : "vertex"}};
      if (!shbin.dvles.empty()) doc["program"]["entry"] = shbin.dvles[0].main_offset;
      doc["launch"] = {{"vertices", threads}};
      code.assign(data, data + size);
      return true;
    }
    // sel: bit 0 geometry, bits 1-5 descriptor count - 1; descriptors, then code.
    const size_t descs = std::min<size_t>(1 + (sel >> 1) % 32, size / 4);
    const size_t code_bytes = std::min<size_t>(size - descs * 4, 4 * 512) & ~size_t(3);
    if (code_bytes == 0) return false;
    doc["program"] = {{"words", words_of(data + descs * 4, code_bytes)},
                      {"descriptors", words_of(data, descs * 4)},
                      {"type", sel & 1 ? "geometry" : "vertex"}};
    doc["launch"] = {{"vertices", threads}};
    // What the module translates: the same program as a .shbin (its
    // translate takes containers; raw words would have no descriptors).
    for (size_t i = 0; i < descs; ++i) shbin.descs.push_back(read_word(data + 4 * i));
    for (size_t i = 0; i < code_bytes; i += 4) shbin.code.push_back(read_word(data + descs * 4 + i));
    shbin.dvles.emplace_back();
    shbin.dvles.back().is_geometry = sel & 1;
    code = pica::write_shbin(shbin);
    return true;
  }
  variant = fuzz_target::pick_variant(m, sel);
  if (variant.find(':') != std::string::npos) variant = variant.substr(0, variant.find(':'));
  if (!variant.empty()) doc["variant"] = variant;
  const size_t n = std::min<size_t>(size, 4096);
  if (m.hex_unit_bytes() == 4) {
    doc["program"] = {{"words", words_of(data, n & ~size_t(3))}};
    doc["state"] = {{"params", {{"u32", {"0x100000", "0x100800", 16}}}}};
    code.assign(data, data + (n & ~size_t(3)));
  } else {
    doc["program"] = {{"bytes", hex_of(data, n)}};
    doc["state"] = {{"uniforms", {{"u0", "0x100000"}, {"u1", "0x0"}, {"u2", "0x100800"}, {"u3", "0x0"}}}};
    code.assign(data, data + n);
  }
  doc["launch"] = {{"grid", {1}}, {"block", {threads}}, {"budget", 20000}};
  doc["memory"] = json::array({buffer});
  return !code.empty();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  rt::set_memory_limit(uint64_t(256) << 20);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string isa = GPURC_FUZZ_ISA;
  const isa::IsaModule& m = fuzz_target::module_of(GPURC_FUZZ_ISA);
  json doc;
  std::vector<uint8_t> code;
  std::string variant, err;
  if (!document(isa, m, data, size, doc, code, variant)) return 0;
  ir::Function f;
  if (!m.translate(code, variant, f, err)) {
    if (err.empty()) fuzz_target::fail("translate failed without a message");
    return 0;
  }
  if (std::string v = ir::verify(f); !v.empty()) fuzz_target::fail("translation does not verify: " + v);
  if (!m.has_replay()) return 0;  // no reference run to compare with (yet)
  const std::filesystem::path nowhere = "/nonexistent/gpurc-libfuzzer";
  replay::ReplayRun ref;
  try {
    ref = replay::run_document(doc, nowhere, Engine::Interp, 1, false);
  } catch (const std::exception&) {
    return 0;  // the reference refuses the program (e.g. an instruction it does not decode)
  }
  // The reference refusing an instruction when it reaches it (it decodes
  // lazily: "decode", "unsupported") is its verdict on the input, not a
  // run to compare: the translator turns the same words into a trap.
  if (ref.fault_kind == "watchdog" || ref.fault_kind == "unsupported" || ref.fault_kind == "decode") return 0;
  for (Engine tier : host_jit_tiers()) {
    replay::ReplayRun got;
    try {
      got = replay::run_document(doc, nowhere, tier, 1, false);
    } catch (const replay::ReplayError&) {
      // A clear refusal of the program by the JIT's launch path (e.g. g13: a
      // special register a compute launch does not provide, checked up front
      // while the reference only faults if it gets there): not a wrong result.
      return 0;
    } catch (const std::exception& x) {
      fuzz_target::fail(fmt::format("the reference ran the program, {} did not: {}", engine_name(tier), x.what()));
    }
    if (got.fault_kind == "watchdog") continue;
    // Fault kinds are not compared: a reference may name a fault otherwise
    // than the translation's trap by design (Tesla: running past the end of
    // the code or branching outside it is out-of-bounds on the reference, a
    // kTrapPastEnd / kTrapBadTarget trap translated; tests/tesla/translate.cpp
    // "guest faults where the interpreter faults" pairs them).
    if (ref.fault.has_value() != got.fault.has_value())
      fuzz_target::fail(fmt::format("interp {} vs {} {}", ref.fault.value_or("ran to the end"), engine_name(tier),
                                    got.fault.value_or("ran to the end")));
    if (ref.fault) continue;  // the state after a fault depends on the schedule
    std::vector<replay::Mismatch> d = replay::compare_runs(ref, got, 4);
    if (!d.empty()) fuzz_target::fail(d.front().what + ": " + d.front().expected + " vs " + d.front().actual);
  }
  return 0;
}
