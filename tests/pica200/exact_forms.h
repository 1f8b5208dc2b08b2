// Test sources that exercise the interpreter and the JIT on encodings picasso
// refuses to write (two different v inputs in one instruction, CMP operators
// 6 and 7, relative addressing on r, setemit 3, an explicit sgei with a narrow
// operand...) mark every instruction with the assembler's exact form
// (`mnemonic!`, assembler.h): the words are what the text says, without
// picasso's checks and automatic choices.
#pragma once
#include <cctype>
#include <sstream>
#include <string>

namespace gpurc::pica::test {

// The sources are bare instruction lists: `.loose_code` lets them stand
// outside a `.proc` (line numbers in messages are one more than the source's).
inline std::string exact_forms(const std::string& text) {
  std::istringstream in(text);
  std::string line, out = ".loose_code\n";
  while (std::getline(in, line)) {
    size_t p = 0;
    for (;;) {  // past labels ("name:")
      while (p < line.size() && std::isspace((unsigned char)line[p])) ++p;
      size_t q = p;
      while (q < line.size() && (std::isalnum((unsigned char)line[q]) || line[q] == '_' || line[q] == '$')) ++q;
      if (q > p && q < line.size() && line[q] == ':') {
        p = q + 1;
        continue;
      }
      if (q > p && std::isalpha((unsigned char)line[p]) && (q == line.size() || line[q] != '!')) line.insert(q, "!");
      break;
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace gpurc::pica::test
