#include "backend_common/tier.h"

#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace gpurc::backend {

ir::Type native_key_type(const ir::Function& f, ir::ValueId v) {
  const ir::Inst& in = f.insts[v];
  char r = ir::op_info(in.op).result;
  bool fixed = r == 'B' || r == 'U' || r == 'V';
  if (fixed && !in.args.empty() && in.args[0] < f.insts.size()) return f.insts[in.args[0]].type;
  return in.type;
}

std::string type_set_name(uint16_t types) {
  std::string s;
  for (unsigned t = 0; t < 16; ++t)
    if (types & (1u << t)) {
      if (!s.empty()) s += ' ';
      s += ir::type_name(ir::Type(t));
    }
  return s.empty() ? "-" : s;
}

std::vector<std::pair<uint32_t, uint32_t>> var_read_ranges_of(const ir::Function& f) {
  std::vector<uint8_t> read(f.vars.size(), 0);
  for (const auto& b : f.blocks)
    for (ir::ValueId v : b.insts)
      if (f.insts[v].op == ir::Opcode::LoadVar && f.insts[v].imm < f.vars.size()) read[f.insts[v].imm] = 1;
  std::vector<uint32_t> offs = f.var_offsets();
  std::vector<std::pair<uint32_t, uint32_t>> out;
  for (size_t i = 0; i < read.size(); ++i) {
    if (!read[i]) continue;
    if (!out.empty() && out.back().second == offs[i]) out.back().second = offs[i + 1];
    else out.emplace_back(offs[i], offs[i + 1]);
  }
  return out;
}

void append_perf_map(const void* addr, size_t size, const std::string& symbol) {
  static std::mutex lock;
  std::lock_guard<std::mutex> g(lock);
  std::string path = "/tmp/perf-" + std::to_string(::getpid()) + ".map";
  if (FILE* f = std::fopen(path.c_str(), "a")) {
    std::fprintf(f, "%" PRIxPTR " %zx %s\n", uintptr_t(addr), size, symbol.c_str());
    std::fclose(f);
  }
}

// GPURC_JIT_LISTINGS=FILE: every function a run installs, appended to FILE
// as "entry <address> <arch>" and its listing (offsets from the entry). The
// static listings of `gpurc bench --static` are compiled without a launch's
// options, so only this one matches the addresses a profiler (callgrind's
// per-instruction counts, scripts/jit-profile.py) reports for a run.
namespace {
// Read at every install (a getenv is nothing beside a compile), so a test
// can turn it on and off.
const char* installed_listings_path() {
  const char* e = std::getenv("GPURC_JIT_LISTINGS");
  return e && *e ? e : nullptr;
}
}  // namespace

bool installed_listings_on() { return installed_listings_path() != nullptr; }

void append_installed_listing(const void* entry, const char* arch, const std::string& listing) {
  const char* path = installed_listings_path();
  if (!path) return;
  static std::mutex lock;
  std::lock_guard<std::mutex> g(lock);
  if (FILE* f = std::fopen(path, "a")) {
    std::fprintf(f, "entry %" PRIxPTR " %s\n", uintptr_t(entry), arch);
    std::fputs(listing.c_str(), f);
    std::fclose(f);
  }
}

}  // namespace gpurc::backend

namespace gpurc::backend {

std::string native_ops_table(const std::vector<const HostTier*>& tiers) {
  std::string s = "| op |";
  for (const HostTier* t : tiers) s += std::string(" ") + t->name + " |";
  s += "\n| --- |";
  for (size_t i = 0; i < tiers.size(); ++i) s += " --- |";
  s += "\n";
  for (int op = 0; op < ir::kNumOpcodes; ++op) {
    bool any = false;
    for (const HostTier* t : tiers) any = any || (*t->native_ops)[size_t(op)] != 0;
    if (!any) continue;
    s += "| " + std::string(ir::op_name(ir::Opcode(op))) + " |";
    for (const HostTier* t : tiers) s += " " + type_set_name((*t->native_ops)[size_t(op)]) + " |";
    s += "\n";
  }
  return s;
}

}  // namespace gpurc::backend
