#include "isa/module.h"

namespace gpurc::isa {

bool IsaModule::accepts_variant(const std::string& v) const {
  for (const auto& x : variants())
    if (x == v) return true;
  return false;
}

bool IsaModule::assemble_with(const std::string& text, const AssembleOptions& opt, std::vector<uint8_t>& out,
                              std::string& err) const {
  if (!opt.padding_nops) {
    err = name() + ": the assembler inserts no padding NOPs (-n is a pica200 option)";
    return false;
  }
  return assemble(text, opt.variant, out, err);
}

bool IsaModule::translate(const std::vector<uint8_t>&, const std::string&, ir::Function&, std::string& err) const {
  err = "translating " + name() + " programs to IR is not supported yet";
  return false;
}

void IsaModule::replay(const ReplayJob&, replay::ReplayRun&) const {
  throw replay::ReplayError("replay of isa " + name() + " is not supported yet");
}

std::unique_ptr<FuzzSession> IsaModule::fuzz_session(const fuzz::IsaFuzzOptions&, std::string& err) const {
  err = "isa " + name() + " has no fuzzer";
  return nullptr;
}

}  // namespace gpurc::isa

namespace gpurc::isa {

bool FuzzSession::generate(uint64_t index, std::vector<std::unique_ptr<FuzzCase>>& out, std::string& err) {
  std::unique_ptr<FuzzCase> c = generate(index, err);
  if (!c) {
    err += " (iteration " + std::to_string(index) + ")";
    return false;
  }
  c->index = index;
  out.push_back(std::move(c));
  return true;
}

std::unique_ptr<FuzzCase> FuzzSession::generate(uint64_t, std::string& err) {
  err = "the fuzz session generates no programs";
  return nullptr;
}

std::string FuzzSession::reproducer_stem(uint64_t seed, uint64_t index) const {
  return "seed" + std::to_string(seed) + "-it" + std::to_string(index);
}

std::string FuzzSession::reproducer(const FuzzCase&, const FuzzOutcome&, const std::string&, const std::string&) {
  return "";
}

}  // namespace gpurc::isa
