// PICA200 -> IR: source operand reads (registers, c uniforms with relative
// addressing), b/i uniforms and EMIT's record stores (translate_impl.h).
#include <string>
#include <vector>

#include "frontend/pica200/translate_impl.h"

namespace gpurc::pica::detail {

ir::ValueId Translator::bool_uniform(unsigned n) {
  ir::ValueId word = b_.load_uniform(ir::Type::I32, kUniformBool);
  ir::ValueId bit = b_.and_(word, b_.i32(1u << (n & 15)));
  return b_.icmp(ir::IntPred::Ne, bit, b_.i32(0));
}

// c[index].comp for a per-lane index in 0..127 (entries 96..127 read as
// 1.0, as in the interpreter): one indexed uniform load, which the JIT tiers
// lower to a broadcast load when the strip's lanes agree and to a gather
// otherwise (docs/backend_x64.md, "load_uniform_idx").
ir::ValueId Translator::const_select(ir::ValueId index, unsigned comp) {
  ir::ValueId offset = b_.shl(index, b_.i32(4));
  ir::ValueId value = b_.load_uniform_idx(ir::Type::F32, offset, kUniformFloat + 4 * comp);
  ir::ValueId in_file = b_.icmp(ir::IntPred::Ult, index, b_.i32(96));
  return b_.select(in_file, value, b_.f32(1.0f));
}

// A source operand after swizzle and negation: 4 values.
std::array<ir::ValueId, 4> Translator::read(unsigned field, bool wide, unsigned idx, const Swizzle& sw) {
  std::array<ir::ValueId, 4> comp{};
  std::array<ir::ValueId, 4> cache{ir::kNoValue, ir::kNoValue, ir::kNoValue, ir::kNoValue};
  auto base_comp = [&](unsigned c) -> ir::ValueId {
    if (cache[c] != ir::kNoValue) return cache[c];
    ir::ValueId v;
    if (field < 0x10) {
      v = b_.get_var(kVarInput + 4 * field + c);
    } else if (field < 0x20) {
      v = b_.get_var(kVarTemp + 4 * (field - 0x10) + c);
    } else if (wide && idx != 0) {
      v = const_select(rel_index(field - 0x20, idx), c);
    } else {
      unsigned n = field - 0x20;
      v = n > 95 ? b_.f32(1.0f) : b_.load_uniform(ir::Type::F32, kUniformFloat + 16 * n + 4 * c);
    }
    return cache[c] = v;
  };
  for (unsigned i = 0; i < 4; ++i) {
    ir::ValueId v = base_comp(sw.comp[i] & 3);
    comp[i] = sw.negate ? b_.memo(kMemoNeg, v, [&] { return b_.fneg(v); }) : v;
  }
  return comp;
}

// (base + offset) & 0x7F: aL as 0..255, a0.x/a0.y only when in -128..127 (else 0).
ir::ValueId Translator::rel_index(unsigned base, unsigned idx) {
  ir::ValueId offset;
  if (idx == 3) {
    offset = b_.get_var(kVarAL);
  } else {
    ir::ValueId a = b_.get_var(idx == 1 ? kVarA0X : kVarA0Y);
    ir::ValueId in_range =
        b_.and_(b_.icmp(ir::IntPred::Sge, a, b_.i32(uint32_t(-128))), b_.icmp(ir::IntPred::Sle, a, b_.i32(127)));
    offset = b_.select(in_range, a, b_.i32(0));
  }
  return b_.and_(b_.iadd(offset, b_.i32(base)), b_.i32(0x7F));
}

// EMIT: one record (latched header, o0..o15) at the lane's next record slot;
// unpack_emits turns the records into the vertex buffer and primitives.
void Translator::emit_record(uint32_t here) {
  ir::ValueId count = b_.get_var(kVarEmitCount);
  // The area's capacity is a launch parameter: the launch grows it and runs again on overflow.
  ir::ValueId capacity = b_.load_uniform(ir::Type::I32, kUniformEmitCapacity);
  b_.trap(b_.icmp(ir::IntPred::Uge, count, capacity), trap_code(TrapReason::EmitOverflow, here));
  ir::ValueId lane_base = b_.imul(b_.imul(b_.lane_id(), capacity), b_.i32(kEmitRecordBytes));
  ir::ValueId rec = b_.iadd(b_.imul(count, b_.i32(kEmitRecordBytes)), b_.iadd(lane_base, b_.i32(uint32_t(kEmitBase))));
  ir::ValueId all = b_.i1(true);
  auto at = [&](uint32_t offset) { return b_.iadd(rec, b_.i32(offset)); };
  b_.store(ir::Space::Global, ir::AddrClass::Random, rec, b_.get_var(kVarEmitLatch), all);
  for (uint32_t k = 0; k < 64; ++k)
    b_.store(ir::Space::Global, ir::AddrClass::Random, at(kEmitHeaderBytes + 4 * k), b_.get_var(kVarOutput + k), all);
  b_.set_var(kVarEmitCount, b_.iadd(count, b_.i32(1)));
}

}  // namespace gpurc::pica::detail
