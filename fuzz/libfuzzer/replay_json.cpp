// libFuzzer target fuzz_replay_json: arbitrary bytes as a replay document
// (docs/replay-format.md) through JSON parsing, the envelope check, the ISA's
// replay handler (program, state, memory, launch) and a run on the reference
// interpreter, then the expect check. Each step either works or throws a
// ReplayError naming the field: never a crash, hang, sanitizer report or
// an allocation beyond the memory limit. Launch sizes are clamped so each
// input runs quickly; asm_file / binary_file references point nowhere.
#include "fuzz/libfuzzer/target.h"
#include "recompiler/replay.h"
#include "runtime/memory.h"

using namespace gpurc;
using replay::json;

namespace {

// Keeps a run short: at most 64 threads or vertices, budget 20000.
void clamp_launch(json& doc) {
  if (!doc.contains("launch") || !doc["launch"].is_object()) return;
  json& l = doc["launch"];
  for (const char* dim : {"grid", "block"}) {
    if (!l.contains(dim) || !l[dim].is_array()) continue;
    for (json& v : l[dim])
      if (v.is_number_unsigned() && v.get<uint64_t>() > 8) v = 8;
  }
  if (l.contains("vertices") && l["vertices"].is_number_unsigned() && l["vertices"].get<uint64_t>() > 64)
    l["vertices"] = 64;
  l["budget"] = 20000;
  if (doc.value("isa", "") == "pica200") l.erase("budget");  // pica200 launches take vertices only
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  rt::set_memory_limit(uint64_t(256) << 20);
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
