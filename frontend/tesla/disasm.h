// Listing of Tesla code in envydis syntax.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "frontend/tesla/encoding.h"

namespace gpurc::tesla {

// One instruction per line. raw: just the text (what `envydis -m g80` prints
// without its address and hex columns); otherwise "AAAAAAAA: WWWWWWWW [WWWWWWWW]  text"
// with the byte address. Sequential decoding, as envydis does: a long
// instruction at an odd word is listed (the executor reports it).
std::string disassemble_words(const std::vector<uint32_t>& words, const Target& t, bool raw);

}  // namespace gpurc::tesla
