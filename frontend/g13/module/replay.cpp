// Replay handler of isa g13 (docs/replay-format.md, docs/g13.md "Replay"):
// the program is applegpu-syntax assembly or raw bytes, the uniform registers
// hold buffer addresses and constants, memory is device (global) memory, and
// the launch is a grid of threadgroups of 32-thread SIMD-groups run by
// launch.h (rt::launch) on the engine the job names.
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>

#include "frontend/g13/g13.h"
#include "frontend/g13/module/launch.h"
#include "frontend/g13/module/module.h"
#include "isa/replay_doc.h"

namespace gpurc::g13 {

using namespace replay;

namespace {

std::vector<uint8_t> program_bytes(const json& doc, const std::filesystem::path& dir) {
  return replay::program_bytes(doc, dir, "g13", [](const std::string& text, std::vector<uint8_t>& code, std::string& err) {
    return g13::assemble(text, code, err);
  });
}

uint64_t program_entry(const json& doc, size_t code_size) {
  const json& p = doc["program"];
  if (!p.contains("entry")) return 0;
  if (p["entry"].is_string() && p["entry"].get<std::string>().rfind("0x", 0) != 0)
    throw ReplayError("program.entry: labels are not supported for g13; give a byte offset");
  uint64_t e = parse_uint(p["entry"], "program.entry");
  if (e >= code_size)
    throw ReplayError("program.entry: offset " + std::to_string(e) + " is past the end of the code (" +
                      std::to_string(code_size) + " bytes)");
  return e;
}

// "u7" -> 7; -1 if not a uniform register name u0..u255.
int uniform_index(const std::string& name) {
  if (name.size() < 2 || name.size() > 4 || name[0] != 'u') return -1;
  int n = 0;
  for (size_t i = 1; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return -1;
    n = n * 10 + (name[i] - '0');
  }
  if (name.size() > 2 && name[1] == '0') return -1;
  return n < 256 ? n : -1;
}

// A register an expect may name: "r5" (32-bit), "r5l" / "r5h" (16-bit halves).
struct RegRef {
  std::string name;
  unsigned half = 0;  // first half index (2N or 2N+1)
  bool wide = true;
};

bool parse_reg_ref(const std::string& name, RegRef& out) {
  if (name.size() < 2 || name[0] != 'r') return false;
  size_t i = 1;
  unsigned n = 0;
  while (i < name.size() && name[i] >= '0' && name[i] <= '9') n = n * 10 + unsigned(name[i++] - '0');
  if (i == 1 || n > 127 || (i > 2 && name[1] == '0')) return false;
  out.name = name;
  if (i == name.size()) {
    out.half = 2 * n;
    out.wide = true;
    return true;
  }
  if (i + 1 == name.size() && (name[i] == 'l' || name[i] == 'h')) {
    out.half = 2 * n + (name[i] == 'h');
    out.wide = false;
    return true;
  }
  return false;
}

G13Launch prepare(const isa::ReplayJob& job, std::vector<RegRef>& regs) {
  const json& doc = job.doc;
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    static const char* known[] = {"gpurc", "isa", "variant", "name", "program", "launch", "state", "memory", "expect", "output", "description"};
    bool ok = false;
    for (const char* k : known) ok |= it.key() == k;
    if (!ok) throw ReplayError(it.key() + ": unknown field for isa g13");
  }
  if (doc.contains("variant") && doc["variant"] != "default")
    throw ReplayError("variant: g13 has only the variant \"default\"");
  G13Launch L;
  L.code = program_bytes(doc, job.dir);
  L.entry = program_entry(doc, L.code.size());
  rt::LaunchConfig cfg = parse_launch(doc.contains("launch") ? doc["launch"] : json::object());
  L.grid = cfg.grid;
  L.block = cfg.block;
  L.shared_bytes = cfg.shared_bytes;
  L.budget = cfg.budget;
  if (L.block.count() > 1024) throw ReplayError("launch.block: more than 1024 threads in a threadgroup");
  if (L.shared_bytes > (uint64_t(1) << 16)) throw ReplayError("launch.shared_bytes: more than 64 KiB");
  if (doc.contains("state")) {
    const json& st = doc["state"];
    if (!st.is_object()) throw ReplayError("state: expected an object");
    for (auto it = st.begin(); it != st.end(); ++it)
      if (it.key() != "uniforms" && it.key() != "stack_bytes")
        throw ReplayError("state." + it.key() + ": unknown field for isa g13 (uniforms, stack_bytes)");
    if (st.contains("uniforms")) {
      const json& u = st["uniforms"];
      if (!u.is_object()) throw ReplayError("state.uniforms: expected an object {\"u0\": \"0x...\", ...}");
      for (auto it = u.begin(); it != u.end(); ++it) {
        int n = uniform_index(it.key());
        if (n < 0) throw ReplayError("state.uniforms." + it.key() + ": not a uniform register (u0..u255)");
        uint64_t v = parse_elem(it.value(), ElemType::U32, "state.uniforms." + it.key());
        L.uniforms[size_t(2 * n)] = uint16_t(v);
        L.uniforms[size_t(2 * n + 1)] = uint16_t(v >> 16);
      }
    }
    if (st.contains("stack_bytes")) {
      L.stack_bytes = parse_uint(st["stack_bytes"], "state.stack_bytes");
      if (L.stack_bytes > 65536) throw ReplayError("state.stack_bytes: more than 65536 bytes per thread");
    }
  }
  if (doc.contains("expect") && doc["expect"].is_object() && doc["expect"].contains("registers")) {
    const json& r = doc["expect"]["registers"];
    if (!r.is_object()) throw ReplayError("expect.registers: expected an object {\"r5\": {\"u32\": [...]}}");
    for (auto it = r.begin(); it != r.end(); ++it) {
      RegRef ref;
      if (!parse_reg_ref(it.key(), ref))
        throw ReplayError("expect.registers." + it.key() + ": not a register (r0..r127, r0l, r0h, ...)");
      regs.push_back(ref);
    }
  }
  return L;
}

}  // namespace

void replay(const isa::ReplayJob& job, ReplayRun& run) {
  std::vector<RegRef> regs;
  G13Launch L = prepare(job, regs);
  const uint64_t per_block = L.block.count(), threads = L.grid.count() * per_block;
  if (!regs.empty() && threads * regs.size() * 4 > (uint64_t(1) << 31))
    throw ReplayError("expect.registers: too many threads to observe registers of");
  rt::Memory mem;
  load_memory(job.doc, mem);

  // Final per-thread values of the registers expect names ("registers"),
  // indexed by the global thread id (threadgroup * threads per group + local id).
  std::vector<std::vector<uint8_t>> finals(regs.size());
  for (size_t i = 0; i < regs.size(); ++i) finals[i].assign(size_t(threads * (regs[i].wide ? 4 : 2)), 0);
  auto finish = [&](const rt::WarpInfo& w, const g13::SimdGroup& sg) {
    for (size_t i = 0; i < regs.size(); ++i)
      for (unsigned l = 0; l < w.lanes; ++l) {
        const uint64_t gid = w.block_linear * per_block + w.thread_linear(l);
        if (regs[i].wide) {
          const uint32_t v = sg.r32(regs[i].half / 2, l);
          std::memcpy(finals[i].data() + gid * 4, &v, 4);  // disjoint per thread
        } else {
          const uint16_t v = sg.regs[regs[i].half][l];
          std::memcpy(finals[i].data() + gid * 2, &v, 2);
        }
      }
  };
  const bool count_here = job.count_instructions && job.engine.is_reference();
  // No registers to observe: no finish, so the JIT runner skips unpacking.
  G13Result r = run_g13(L, job.engine, mem, job.threads, regs.empty() ? G13Finish{} : G13Finish(finish), count_here);
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
    run.observed.push_back(Observed{"registers", regs[i].name, regs[i].wide ? ElemType::U32 : ElemType::U16,
                                    std::move(finals[i])});
  if (count_here) {
    run.guest_instructions = r.lane_instructions;
  } else if (job.count_instructions && !r.fault) {
    // Guest instructions are counted by the reference interpreter on a copy of memory.
    rt::Memory scratch;
    load_memory(job.doc, scratch);
    G13Result c = run_g13(L, g13_reference_engine(), scratch, job.threads, {}, true);
    if (c.ok()) run.guest_instructions = c.lane_instructions;
  }
}

}  // namespace gpurc::g13
