// PICA200 disassembler (picasso syntax plus the explicit flow-control forms
// documented in docs/pica200.md; the output reassembles to identical words).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "frontend/pica200/encoding.h"
#include "frontend/pica200/shbin.h"

namespace gpurc::pica {

// Whether picasso syntax can name this exact word (with descriptor `d` when
// known): false for encodings picasso never writes (an inverted form its
// automatic choice would not pick, relative addressing on v/r, v15, an empty
// mask, ...). The disassembler writes those in the exact form (`mnemonic!`).
bool picasso_expressible(const Instr& in, const OperandDesc* d);

// Names a flow-control target (word address).
using TargetNamer = std::function<std::string(uint32_t)>;

// One instruction. With `descs` null (raw words) the descriptor is printed as
// the operand `desc[N]`; otherwise its swizzles, negations and mask are printed.
// An index past the table is also printed as desc[N].
std::string disasm_instr(const Instr& in, const std::vector<uint32_t>* descs, const TargetNamer& target);

struct ListingOptions {
  bool raw = false;  // no labels, no address/encoding comments; numeric targets
};
// Whole programs. False with `err` naming the address of an unknown opcode.
bool disasm_words(const std::vector<uint32_t>& code, const std::vector<uint32_t>* descs, const ListingOptions& opt,
                  std::string& out, std::string& err);
bool disasm_shbin(const Shbin& s, const ListingOptions& opt, std::string& out, std::string& err);

}  // namespace gpurc::pica
