#include "frontend/tesla/disasm.h"

#include <cstdio>

namespace gpurc::tesla {

std::string disassemble_words(const std::vector<uint32_t>& words, const Target& t, bool raw) {
  std::string out;
  size_t pos = 0;
  while (pos < words.size()) {
    Insn i = decode(words.data(), words.size(), pos, t);
    if (!raw) {
      char buf[64];
      if (i.words == 2)
        std::snprintf(buf, sizeof buf, "%08zx: %08x %08x  ", pos * 4, words[pos], words[pos + 1]);
      else
        std::snprintf(buf, sizeof buf, "%08zx: %08x           ", pos * 4, words[pos]);
      out += buf;
    }
    out += format(i);
    out += "\n";
    pos += i.words;
  }
  return out;
}

}  // namespace gpurc::tesla
