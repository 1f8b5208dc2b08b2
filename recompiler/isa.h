// What the CLI and the public API need from one guest ISA. Each ISA
// implements this in recompiler/isa_<name>.cpp on top of frontend/<name>.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace gpurc {
namespace ir {
struct Function;
}

struct DisasmOptions {
  std::string variant;   // "" = the ISA's default
  bool raw = false;      // one instruction per line, no address or encoding columns
};

class IsaSupport {
 public:
  virtual ~IsaSupport() = default;
  virtual std::string name() const = 0;
  virtual std::vector<std::string> variants() const = 0;  // first = default
  // Whether `--variant v` names something this ISA runs: by default one of
  // variants(); an ISA whose variant strings have parts (tesla's `g200:vp`
  // program types) checks them itself.
  virtual bool accepts_variant(const std::string& v) const {
    for (const auto& x : variants())
      if (x == v) return true;
    return false;
  }
  // Unit of `--hex` text input: 4 = 32-bit words (pica200, tesla), 1 = bytes (g13, bifrost).
  virtual unsigned hex_unit_bytes() const = 0;
  // Code bytes (raw code, or a container such as .shbin / text .cubin, which
  // the ISA recognises itself) -> text. False with `err` on bad input.
  virtual bool disassemble(const std::vector<uint8_t>& code, const DisasmOptions& opt, std::string& out,
                           std::string& err) const = 0;
  // Text in the ISA's assembler syntax -> code bytes (or container bytes where
  // the syntax describes a container, e.g. picasso -> .shbin).
  virtual bool assemble(const std::string& text, const std::string& variant, std::vector<uint8_t>& out,
                        std::string& err) const = 0;
  // Code (as disassemble reads it) -> the pre-SSA IR function the JIT compiles
  // for its default entry point (`gpurc ir --isa`). Default: not supported.
  virtual bool translate(const std::vector<uint8_t>& code, const std::string& variant, ir::Function& out,
                         std::string& err) const;
};

const IsaSupport& pica200_support();
const IsaSupport& tesla_support();
const IsaSupport& g13_support();
const IsaSupport& bifrost_support();
// All ISAs in a fixed order; null if the name is unknown.
const std::vector<const IsaSupport*>& all_isas();
const IsaSupport* find_isa(const std::string& name);

}  // namespace gpurc
