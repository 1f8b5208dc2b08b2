// ARM Mali Bifrost codec: disassembler (Mesa's Bifrost disassembler syntax),
// assembler/packer for that syntax, and a random valid clause generator.
// Encodings: isa.h (data from ISA.xml); clause layout: clause.h.
#pragma once
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "frontend/bifrost/clause.h"
#include "frontend/bifrost/isa.h"

namespace gpurc::bifrost {

// Guest models (the module's variants): warp width for the later interpreter/JIT.
struct Model {
  const char* name;
  unsigned warp_width;
};
const std::vector<Model>& models();

// How a 64-bit clause (message type 15 whose every register block is a valid
// 64-bit block) prints. Pairs: with register pairs and the header word
// `regs64`, text that reassembles to the same bytes (the default). Mesa:
// exactly as Mesa's disassembler prints it, every block read as a 32-bit
// block (`disasm --raw`); where that reading selects a reserved register
// mode (Mesa's tool aborts), one note line for the clause instead:
// "clause_N: (64-bit clause; Mesa's disassembler aborts on it: ...)".
// Every other clause prints Mesa's text either way (docs/bifrost.md "Text").
enum class Clause64Text { Pairs, Mesa };

// Code bytes -> text. Clauses follow one another from byte 0; a zero 32-bit
// word where a clause would start ends the code (padding). False with an
// error naming the clause offset on invalid clause encodings.
bool disassemble(const uint8_t* code, size_t size, std::string& out, std::string& err,
                 Clause64Text wide_text = Clause64Text::Pairs);

// The text of one clause (label line included), as disassemble prints it.
bool print_clause(const Clause& c, unsigned offset_quadwords, std::string& out, std::string& err,
                  Clause64Text wide_text = Clause64Text::Pairs);

// One FMA or ADD instruction of tuple `t` of clause `c` as Mesa prints it
// (without indentation or newline). Unknown encodings print
// "INSTR_INVALID_ENC fma|add <hex>".
std::string print_instruction(const Clause& c, unsigned t, bool fma, unsigned offset_quadwords);

// Text in that syntax -> bytes (packing algorithm of docs/bifrost.md).
bool assemble(const std::string& text, std::vector<uint8_t>& out, std::string& err);

// A random valid clause from the description, packed canonically; bytes
// append to `out`. `offset_quadwords` is where the clause will sit.
bool random_clause(std::mt19937_64& rng, std::vector<uint8_t>& out, std::string& err);

}  // namespace gpurc::bifrost
