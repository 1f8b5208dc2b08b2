// Replay handler of isa bifrost (docs/replay-format.md, docs/bifrost.md
// "Replay"): the program is Mesa-syntax assembly or raw bytes, uniforms are
// the 32-bit FAU words u0..u255, memory is global memory (and "shared"
// buffers initialise every workgroup's wls), the launch a grid of workgroups
// run by launch.h on the engine the job names.
#include <cstring>
#include <fstream>

#include "frontend/bifrost/bifrost.h"
#include "frontend/bifrost/module/launch.h"
#include "frontend/bifrost/module/module.h"
#include "isa/replay_doc.h"

namespace gpurc::bifrost {

using namespace replay;

namespace {

std::vector<uint8_t> program_bytes(const json& doc, const std::filesystem::path& dir) {
  return replay::program_bytes(doc, dir, "bifrost", [](const std::string& text, std::vector<uint8_t>& code, std::string& err) {
    return assemble(text, code, err);
  });
}

int uniform_index(const std::string& name) {
  if (name.size() < 2 || name.size() > 4 || name[0] != 'u') return -1;
  int n = 0;
  for (size_t i = 1; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return -1;
    n = n * 10 + (name[i] - '0');
  }
  if (name.size() > 2 && name[1] == '0') return -1;
  return n < int(kUniformWords) ? n : -1;
}

int register_index(const std::string& name) {
  if (name.size() < 2 || name.size() > 3 || name[0] != 'r') return -1;
  int n = 0;
  for (size_t i = 1; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return -1;
    n = n * 10 + (name[i] - '0');
  }
  if (name.size() > 2 && name[1] == '0') return -1;
  return n < int(kRegs) ? n : -1;
}

}  // namespace

void replay(const isa::ReplayJob& job, ReplayRun& run) {
  const json& doc = job.doc;
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    static const char* known[] = {"gpurc", "isa", "variant", "name", "program", "launch",
                                  "state", "memory", "expect", "output", "description"};
    bool ok = false;
    for (const char* k : known) ok |= it.key() == k;
    if (!ok) throw ReplayError(it.key() + ": unknown field for isa bifrost");
  }
  BifrostLaunch L;
  const std::string variant = doc.contains("variant") && doc["variant"].is_string() ? doc["variant"].get<std::string>() : "";
  L.warp_width = warp_width_of(variant);
  if (!L.warp_width) throw ReplayError("variant: unknown bifrost variant '" + variant + "' (g72, g71, g51, g31, g76, g52)");
  L.code = program_bytes(doc, job.dir);
  if (doc["program"].contains("entry")) {
    L.entry = parse_uint(doc["program"]["entry"], "program.entry");
    if (L.entry >= L.code.size()) throw ReplayError("program.entry: past the end of the code");
  }
  rt::LaunchConfig cfg = parse_launch(doc.contains("launch") ? doc["launch"] : json::object());
  L.grid = cfg.grid;
  L.block = cfg.block;
  L.shared_bytes = cfg.shared_bytes;
  L.budget = cfg.budget;
  if (L.block.count() > 1024) throw ReplayError("launch.block: more than 1024 threads in a workgroup");
  if (L.shared_bytes > (uint64_t(1) << 16)) throw ReplayError("launch.shared_bytes: more than 64 KiB");
  if (doc.contains("state")) {
    const json& st = doc["state"];
    if (!st.is_object()) throw ReplayError("state: expected an object");
    for (auto it = st.begin(); it != st.end(); ++it)
      if (it.key() != "uniforms") throw ReplayError("state." + it.key() + ": unknown field for isa bifrost (uniforms)");
    if (st.contains("uniforms")) {
      const json& u = st["uniforms"];
      if (!u.is_object()) throw ReplayError("state.uniforms: expected an object {\"u0\": \"0x...\", ...}");
      for (auto it = u.begin(); it != u.end(); ++it) {
        const int n = uniform_index(it.key());
        if (n < 0) throw ReplayError("state.uniforms." + it.key() + ": not a uniform word (u0..u255)");
        L.uniforms[size_t(n)] = uint32_t(parse_elem(it.value(), ElemType::U32, "state.uniforms." + it.key()));
      }
    }
  }
  std::vector<std::pair<std::string, int>> regs;
  if (doc.contains("expect") && doc["expect"].is_object() && doc["expect"].contains("registers")) {
    const json& r = doc["expect"]["registers"];
    if (!r.is_object()) throw ReplayError("expect.registers: expected an object {\"r5\": {\"u32\": [...]}}");
    for (auto it = r.begin(); it != r.end(); ++it) {
      const int n = register_index(it.key());
      if (n < 0) throw ReplayError("expect.registers." + it.key() + ": not a register (r0..r63)");
      regs.push_back({it.key(), n});
    }
  }
  rt::Memory mem;
  load_memory(doc, mem);
  const uint64_t per_block = L.block.count(), threads = L.grid.count() * per_block;
  if (!regs.empty() && threads * regs.size() * 4 > (uint64_t(1) << 31))
    throw ReplayError("expect.registers: too many threads to observe registers of");
  std::vector<std::vector<uint8_t>> finals(regs.size(), std::vector<uint8_t>(size_t(threads * 4), 0));
  auto finish = [&](const rt::WarpInfo& w, const WarpState& st) {
    for (size_t i = 0; i < regs.size(); ++i)
      for (unsigned l = 0; l < w.lanes; ++l) {
        const uint64_t gid = w.block_linear * per_block + w.thread_linear(l);
        std::memcpy(finals[i].data() + gid * 4, &st.regs[regs[i].second][l], 4);
      }
  };
  BifrostResult r = run_bifrost(L, job.engine, mem, job.threads, regs.empty() ? BifrostFinish{} : BifrostFinish(finish));
  if (!r.error.empty()) throw ReplayError(r.error);
  run.compile_us = r.compile_us;
  run.run_us = r.run_us;
  run.items = threads;
  if (r.fault) {
    run.fault = r.fault_message;
    run.fault_kind = rt::fault_kind_name(r.fault->kind);
  }
  for (const auto& b : mem.buffers())
    run.observed.push_back(Observed{"memory", b->name, b->size % 4 ? ElemType::U8 : ElemType::U32,
                                    std::vector<uint8_t>(b->data(), b->data() + b->size)});
  for (size_t i = 0; i < regs.size(); ++i)
    run.observed.push_back(Observed{"registers", regs[i].first, ElemType::U32, std::move(finals[i])});
  if (job.count_instructions) run.guest_instructions = r.lane_instructions;
}

}  // namespace gpurc::bifrost
