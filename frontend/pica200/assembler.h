// PICA200 assembler: picasso syntax (devkitPro picasso 2.7.1) to SHBIN.
//
// For a source picasso accepts the result is byte-identical to picasso's
// (register allocation, operand descriptors, padding NOPs, inverted forms,
// DVLE tables); what picasso rejects is rejected with a message naming the
// file and line. docs/pica200.md lists the behaviour and how it was checked.
//
// Extensions, all spelled so that picasso rejects them (they never change
// the meaning of a picasso source), written by the disassembler so that its
// output reassembles to identical words:
//   - `.loose_code`: instructions outside `.proc` are accepted from there on
//     in that DVLE (without it they are an error naming the line, as in
//     picasso; with no entry procedure the DVLE covers the code);
//   - explicit flow-control forms with targets and counts (`ifu b0, l_010, 3`,
//     `call l_020, 4`, `loop i0, l_00c`, numeric targets);
//   - a mnemonic suffixed `!` ("exact form"): the encoding the mnemonic names
//     (`sgei!` is SGEI even with a narrow second operand), relative
//     addressing and v15 on any source, any `mova a0` mask, comparisons 6/7,
//     `setemit 3`, the unused condition bit left 0;
//   - `desc[N]` as the last operand (raw words without a descriptor table);
//   - `.entry start end` (two symbols), `.dvle` (next DVLE, like a new file
//     but labels stay), `.file NAME` (a new source file, as picasso's next
//     input file), `.merge_outmaps`.
#pragma once
#include <string>
#include <vector>

#include "frontend/pica200/shbin.h"

namespace gpurc::pica {

struct AsmSource {
  std::string name;  // used in messages ("name:line: ...")
  std::string text;
};
struct AsmOptions {
  // picasso inserts a NOP where the hardware needs one; false is picasso -n:
  // no NOP, a warning "a padding NOP is required here" instead.
  bool auto_nop = true;
};

// Several sources share one DVLP (code and descriptors), as picasso's several
// input files do; each source's DVLE(s) follow in order. False with `err`
// ("name:line: ..." or "line N: ..." for an unnamed source) on any problem;
// warnings (picasso's, plus ignored text) go to `warnings` when given.
bool assemble(const std::vector<AsmSource>& sources, const AsmOptions& opt, Shbin& out, std::string& err,
              std::vector<std::string>* warnings = nullptr);
bool assemble(const std::string& text, Shbin& out, std::string& err);

}  // namespace gpurc::pica
