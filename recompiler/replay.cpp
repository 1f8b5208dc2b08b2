#include "recompiler/replay.h"

#include "isa/module.h"
#include "recompiler/isa_engine.h"

namespace gpurc::replay {

bool has_handler(const std::string& isa) {
  const isa::IsaModule* m = isa::find_module(isa);
  return m && m->has_replay();
}

std::vector<std::string> handler_isas() {
  std::vector<std::string> out;
  for (const isa::IsaModule* m : isa::all_modules())
    if (m->has_replay()) out.push_back(m->name());
  return out;
}

ReplayRun run_document(const json& doc, const std::filesystem::path& dir, Engine engine, unsigned threads,
                       bool count_instructions) {
  std::string isa = doc["isa"].get<std::string>();
  if (!has_handler(isa)) throw ReplayError("replay of isa " + isa + " is not supported yet");
  Engine resolved;
  std::string err;
  if (!resolve_engine(engine, resolved, err)) throw ReplayError(err);
  const EngineAsHandle handle(resolved);
  isa::ReplayJob job{doc, dir, handle, threads, count_instructions};
  ReplayRun run;
  run.engine = engine_name(resolved);
  isa::find_module(isa)->replay(job, run);
  return run;
}

}  // namespace gpurc::replay
