// Names applegpu prints for enumerated fields, special registers, conditions
// and bitop aliases (one table each, shared by the disassembler and assembler).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace gpurc::g13 {

// Name of value `v` of enum operand `operand` in descriptor `desc`, or null.
const char* enum_name(std::string_view desc, std::string_view operand, uint64_t v);
// Reverse lookup; false if `name` is not one of the operand's names.
bool enum_value(std::string_view desc, std::string_view operand, std::string_view name, uint64_t& v);
const char* sr_name(unsigned n);
bool sr_number(std::string_view name, unsigned& n);
// Condition names: 4-bit ccn:cc; null when unnamed.
const char* cond_name(bool is_float, unsigned v);
bool cond_value(bool is_float, std::string_view name, unsigned& v);
// bitop aliases keyed by the truth-table string tt0 tt1 tt2 tt3.
const char* bitop_binary_alias(std::string_view tt);
const char* bitop_unary_alias(std::string_view tt);
// Reverse: alias -> truth table; `unary` tells whether B = 0 is implied.
bool bitop_alias_table(std::string_view alias, std::string& tt, bool& unary);

}  // namespace gpurc::g13
