#include "frontend/pica200/reachable.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>

#include "frontend/pica200/encoding.h"

namespace gpurc::pica {

namespace {

// What the scan needs of a word, by its top 6 bits (every PICA200 encoding
// fixes only opcode bits; decode() relies on the same fact): plain (falls
// through), END, an unknown opcode (treated as plain: the translation traps
// there), or a flow instruction with its target and num fields. Derived from
// the encoding table, so the scan agrees with decode().
struct FlowForm {
  enum Kind : uint8_t { Plain, End, Flow } kind = Plain;
  uint8_t target_lo = 0, target_width = 0, num_lo = 0, num_width = 0;
};

const std::array<FlowForm, 64>& flow_forms() {
  static const std::array<FlowForm, 64> t = [] {
    std::array<FlowForm, 64> forms{};
    for (uint32_t top = 0; top < 64; ++top) {
      std::optional<Instr> in = decode(top << 26, 0);
      if (!in) continue;
      FlowForm& f = forms[top];
      if (in->op == Op::END) f.kind = FlowForm::End;
      if (in->format() != Format::F2 && in->format() != Format::F3) continue;
      const fe::Encoding* e = encoding_table().find(info(in->op).name);
      const fe::Field* target = e ? e->field("target") : nullptr;
      const fe::Field* num = e ? e->field("num") : nullptr;
      if (!target || !num || target->parts.size() != 1 || num->parts.size() != 1) {
        // Not a layout this table can describe: every address may be reached.
        f.kind = FlowForm::Flow;
        f.target_width = 0xFF;
        continue;
      }
      f.kind = FlowForm::Flow;
      f.target_lo = uint8_t(target->parts[0].lo);
      f.target_width = target->parts[0].width;
      f.num_lo = uint8_t(num->parts[0].lo);
      f.num_width = num->parts[0].width;
    }
    return forms;
  }();
  return t;
}

// Bit t set: a word with top bits t is END or a flow instruction (a scan
// stops there); clear: it falls through to the next address.
uint64_t special_tops() {
  static const uint64_t m = [] {
    uint64_t bits = 0;
    const std::array<FlowForm, 64>& forms = flow_forms();
    for (uint32_t t = 0; t < 64; ++t)
      if (forms[t].kind != FlowForm::Plain) bits |= 1ull << t;
    return bits;
  }();
  return m;
}

}  // namespace

void append_reachable_code(std::span<const uint32_t> code, uint32_t entry, std::vector<uint32_t>& out) {
  // Targets are 12 bits and num 8, so every address named lies below 4096 + 256.
  constexpr uint32_t kSpace = 4096 + 256 + 64;
  constexpr uint32_t kWords = kSpace / 64;
  uint64_t seen[kWords] = {};
  uint32_t pending[kSpace];  // each address is pushed at most once
  size_t depth = 0;
  auto mark = [&](uint32_t a) {
    if (a >= kSpace || (seen[a >> 6] >> (a & 63) & 1)) return;
    seen[a >> 6] |= 1ull << (a & 63);
    pending[depth++] = a;
  };
  const std::array<FlowForm, 64>& forms = flow_forms();
  const uint32_t size = uint32_t(std::min<size_t>(code.size(), kSpace));
  if (entry >= kSpace) {
    out.insert(out.end(), {entry, entry + 1, 0});
    return;
  }
  const uint64_t special = special_tops();
  // Marks [a, b) reached.
  auto mark_range = [&](uint32_t a, uint32_t b) {
    while (a < b) {
      uint32_t n = std::min(b - a, 64 - (a & 63));
      seen[a >> 6] |= (n == 64 ? ~0ull : ((1ull << n) - 1)) << (a & 63);
      a += n;
    }
  };
  mark(entry);
  while (depth) {
    uint32_t pc = pending[--depth];
    // Straight-line code without the stack: follow the fall-through.
    while (pc < size) {
      uint32_t word = code[pc];
      if (!(special >> (word >> 26) & 1)) {
        // A run of words that fall through: up to the next END or flow
        // instruction, an address already reached, or the end of the
        // program (whose address is then reached: execution runs past it).
        // The reached bits are read a 64-address block at a time, as the
        // scan goes, so a run costs its length whatever the memory size.
        uint32_t q = pc + 1;
        while (q < size) {
          const uint64_t w = seen[q >> 6] >> (q & 63);
          const uint32_t seen_at = w ? q + uint32_t(std::countr_zero(w)) : kSpace;
          const uint32_t limit = std::min({(q | 63) + 1, size, seen_at});
          while (q < limit && !(special >> (code[q] >> 26) & 1)) ++q;
          if (q < limit || q == seen_at) break;  // a special word, or an address already reached
        }
        const bool reached = q < kSpace && (seen[q >> 6] >> (q & 63) & 1);
        if (q < size && !reached) {  // a special word
          mark_range(pc + 1, q + 1);
          pc = q;
          continue;
        }
        mark_range(pc + 1, q);
        if (q == size && q < kSpace && !reached) mark_range(q, q + 1);
        break;
      }
      const FlowForm& f = forms[word >> 26];
      if (f.kind == FlowForm::End) break;
      if (f.kind == FlowForm::Flow) {
        if (f.target_width == 0xFF) {
          for (uint32_t a = 0; a < kSpace; ++a) mark(a);
          break;
        }
        uint32_t target = (word >> f.target_lo) & ((1u << f.target_width) - 1);
        uint32_t num = (word >> f.num_lo) & ((1u << f.num_width) - 1);
        mark(target);
        mark(target + 1);
        mark(target + num);
      }
      uint32_t next = pc + 1;
      if (next >= kSpace || (seen[next >> 6] >> (next & 63) & 1)) break;
      seen[next >> 6] |= 1ull << (next & 63);
      pc = next;
    }
  }
  // Runs of reachable addresses, in address order.
  uint32_t a = 0;
  while (a < kSpace) {
    uint64_t w = seen[a >> 6] >> (a & 63);
    if (!w) {
      a = (a | 63) + 1;
      continue;
    }
    uint32_t begin = a + uint32_t(std::countr_zero(w));
    uint32_t end = begin;
    while (end < kSpace) {
      // Unreached addresses from `end` on, within its 64-bit word (the bits
      // shifted in at the top read as reached; the loop moves to the next word).
      uint64_t unreached = ~seen[end >> 6] >> (end & 63);
      if (unreached) {
        end += uint32_t(std::countr_zero(unreached));
        break;
      }
      end = (end | 63) + 1;
    }
    if (end > kSpace) end = kSpace;
    uint32_t n = begin < size ? std::min(end, size) - begin : 0;
    size_t at = out.size();
    out.resize(at + 3 + n);
    out[at] = begin;
    out[at + 1] = end;
    out[at + 2] = n;
    if (n) std::memcpy(&out[at + 3], &code[begin], n * 4);
    a = end;
  }
}

}  // namespace gpurc::pica
