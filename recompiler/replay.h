// Replay files (docs/replay-format.md): running a document on one engine
// through its ISA module (isa/module.h; the module's replay handler), and the
// shared parts every handler uses (isa/replay_doc.h).
#pragma once
#include "isa/replay_doc.h"
#include "recompiler/engine.h"

namespace gpurc::replay {

// Whether some module replays documents of `isa`.
bool has_handler(const std::string& isa);
// The isas with a replay handler, in registry order.
std::vector<std::string> handler_isas();
// Runs a loaded document on one engine through its ISA module's handler; an
// isa without one is a ReplayError ("replay of isa X is not supported yet").
ReplayRun run_document(const json& doc, const std::filesystem::path& dir, Engine engine, unsigned threads,
                       bool count_instructions);

}  // namespace gpurc::replay
