#include "frontend/tesla/disasm.h"

#include <cstdio>

namespace gpurc::tesla {

namespace {

// v in lower-case hex, at least 8 digits (printf's "%08x"), without printf:
// formatting the columns was a large part of a disassembly's time.
void append_hex8(uint64_t v, std::string& out) {
  char buf[16];
  int n = 0;
  do {
    buf[n++] = "0123456789abcdef"[v & 15];
    v >>= 4;
  } while (v || n < 8);
  while (n) out += buf[--n];
}

}  // namespace

std::string disassemble_words(const std::vector<uint32_t>& words, const Target& t, bool raw) {
  std::string out;
  size_t pos = 0;
  Insn i;  // reused: its atom storage is allocated once, not per word
  while (pos < words.size()) {
    decode(words.data(), words.size(), pos, t, i);
    if (!raw) {
      append_hex8(pos * 4, out);  // at least 8 digits, as "%08zx"
      out += ": ";
      append_hex8(words[pos], out);
      if (i.words == 2) {
        out += ' ';
        append_hex8(words[pos + 1], out);
        out += "  ";
      } else {
        out += "           ";
      }
    }
    format_to(i, out);
    out += '\n';
    pos += i.words;
  }
  return out;
}

}  // namespace gpurc::tesla
