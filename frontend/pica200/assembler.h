// PICA200 assembler: picasso syntax (devkitPro picasso manual) to SHBIN.
// Extensions (so disassembly reassembles to identical words, see
// docs/pica200.md): explicit flow-control forms with targets and counts,
// explicit inverted mnemonics (dphi, dsti, sgei, slti, madi), `desc[N]` raw
// descriptor operands, `.entry main endLabel`, explicit registers on
// `.fvec/.ivec/.bool/.in`, `.dvle` to start the next DVLE, `.none` masks.
#pragma once
#include <string>

#include "frontend/pica200/shbin.h"

namespace gpurc::pica {

// False with `err` ("line N: ...") on any problem.
bool assemble(const std::string& text, Shbin& out, std::string& err);

}  // namespace gpurc::pica
