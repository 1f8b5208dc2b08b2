// libFuzzer target fuzz_replay_json: arbitrary bytes as a replay document
// (docs/replay-format.md) through JSON parsing, the envelope check, the ISA's
// replay handler (program, state, memory, launch) and a run on the reference
// interpreter, then the expect check. Each step either works or throws a
// ReplayError naming the field: never a crash, hang, sanitizer report or
// an allocation beyond the memory limit (16 MiB here). Launch sizes are
// clamped so each input runs quickly; asm_file / binary_file references
// point nowhere.
#include "fuzz/libfuzzer/target.h"
#include "recompiler/replay.h"
#include "runtime/memory.h"

using namespace gpurc;
using replay::json;

namespace {

// Keeps a run short (docs/fuzzing.md "Throughput"): at most 2 blocks of 64
// threads, or 8 vertices, and a budget of 4096 guest steps per warp.
constexpr uint64_t kMaxBlocks = 2, kMaxBlockThreads = 64, kMaxVertices = 8, kBudget = 4096;

// Scales the dimensions of `dims` (a JSON array) down until their product is
// at most `limit`: each value above 1 becomes 1 from the last one on.
void clamp_dims(json& dims, uint64_t limit) {
  uint64_t product = 1;
  for (json& v : dims) {
    if (!v.is_number_unsigned()) continue;
    uint64_t x = v.get<uint64_t>();
    if (x > limit) v = x = limit;
    if (x && product > limit / x) v = x = std::max<uint64_t>(1, limit / product);
    product *= std::max<uint64_t>(x, 1);
  }
}

void clamp_launch(json& doc) {
  if (!doc.contains("launch") || !doc["launch"].is_object()) return;
  json& l = doc["launch"];
  if (l.contains("grid") && l["grid"].is_array()) clamp_dims(l["grid"], kMaxBlocks);
  if (l.contains("block") && l["block"].is_array()) clamp_dims(l["block"], kMaxBlockThreads);
  if (l.contains("vertices") && l["vertices"].is_number_unsigned() && l["vertices"].get<uint64_t>() > kMaxVertices)
    l["vertices"] = kMaxVertices;
  l["budget"] = kBudget;
  if (doc.value("isa", "") == "pica200") l.erase("budget");  // pica200 launches take vertices only
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Small, so a document asking for large buffers meets the limit's clear
  // error (the hostile-size contract) instead of zeroing megabytes per input.
  rt::set_memory_limit(uint64_t(16) << 20);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  json doc;
  try {
    doc = replay::parse_document(std::string(reinterpret_cast<const char*>(data), size), "input");
  } catch (const replay::ReplayError&) {
    return 0;
  }
  clamp_launch(doc);
  try {
    replay::ReplayRun run = replay::run_document(doc, "/nonexistent/gpurc-libfuzzer", Engine::Interp, 1, false);
    if (!run.fault) (void)replay::check_expect(doc, run);
    for (const char* kind : {"memory", "vars", "outputs", "registers", "emitted"})
      (void)replay::observed_to_json(doc, run, kind);
  } catch (const replay::ReplayError&) {
  } catch (const json::exception&) {
  }
  return 0;
}
