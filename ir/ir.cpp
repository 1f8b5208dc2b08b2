#include "ir/ir.h"

#include <cstring>

namespace gpurc::ir {

namespace {
constexpr bool has(const char* props, char c) {
  for (; *props; ++props)
    if (*props == c) return true;
  return false;
}
constexpr OpInfo kOps[] = {
#define OPCODE(name, text, res, args, attr, props) \
  {text, #res[0], args, AttrKind::attr, has(props, 'P'), has(props, 'E'), has(props, 'T'), has(props, 'F'), has(props, 'X'), \
   has(props, 'C')},
#include "ir/opcodes.inc"
#undef OPCODE
};
static_assert(sizeof(kOps) / sizeof(kOps[0]) == kNumOpcodes);

constexpr std::string_view kTypeNames[] = {"void", "i1", "i8", "i16", "i32", "i64", "f16", "f32", "f64"};
}  // namespace

const OpInfo& op_info(Opcode op) { return kOps[size_t(op)]; }
std::string_view op_name(Opcode op) { return kOps[size_t(op)].name; }
bool parse_opcode(std::string_view s, Opcode& out) {
  for (int i = 0; i < kNumOpcodes; ++i)
    if (s == kOps[i].name) {
      out = Opcode(i);
      return true;
    }
  return false;
}

std::string_view type_name(Type t) { return kTypeNames[size_t(t)]; }
bool parse_type(std::string_view s, Type& out) {
  for (size_t i = 0; i < std::size(kTypeNames); ++i)
    if (s == kTypeNames[i]) {
      out = Type(i);
      return true;
    }
  return false;
}

BlockId Function::add_block(std::string n) {
  blocks.push_back(Block{std::move(n), {}, {}, {}});
  return BlockId(blocks.size() - 1);
}

uint32_t Function::add_var(std::string n, Type t) {
  vars.push_back(Var{std::move(n), t});
  return uint32_t(vars.size() - 1);
}

void Function::compute_preds() {
  for (auto& b : blocks) b.preds.clear();
  for (BlockId b = 0; b < blocks.size(); ++b)
    for (BlockId s : blocks[b].succs) blocks[s].preds.push_back(b);
}

ValueId Function::terminator(BlockId b) const {
  const auto& bl = blocks[b];
  if (bl.insts.empty()) return kNoValue;
  ValueId last = bl.insts.back();
  return op_info(insts[last].op).terminator ? last : kNoValue;
}

namespace {
// A var's slot: 32 lanes of lane_bytes(type), rounded up to 64 bytes (128 or
// 256). Types are a small enum, so one table lookup instead of lane_bytes'
// switch per var: the layout is walked several times per compile over the
// ~200 vars of a PICA200 function.
struct SlotBytes {
  uint16_t by_type[256] = {};
  constexpr SlotBytes() {
    for (unsigned t = 0; t < 256; ++t) by_type[t] = uint16_t((lane_bytes(Type(t)) * kWarpLanes + 63) & ~63u);
  }
};
constexpr SlotBytes kSlotBytes;
inline uint32_t slot_bytes(Type t) { return kSlotBytes.by_type[uint8_t(t)]; }
}  // namespace

uint32_t Function::var_offset(uint32_t var) const {
  uint32_t off = 0;
  for (uint32_t i = 0; i < var; ++i) off += slot_bytes(vars[i].type);
  return off;
}
std::vector<uint32_t> Function::var_offsets() const {
  std::vector<uint32_t> out(vars.size() + 1);
  uint32_t off = 0;
  for (size_t i = 0; i < vars.size(); ++i) {
    out[i] = off;
    off += slot_bytes(vars[i].type);
  }
  out[vars.size()] = off;
  return out;
}
uint32_t Function::vars_bytes() const { return var_offset(uint32_t(vars.size())); }

}  // namespace gpurc::ir
