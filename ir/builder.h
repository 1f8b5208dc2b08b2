// Typed construction of IR: appends instructions to a current block.
//
// One emitter for every producer of IR (the guest translators, the passes,
// the IR fuzzer, the tests): `emit` is the general form; the named helpers
// below spell each op with its result type, its attribute enum and its float
// flags, so no caller keeps a private mini-emitter or passes a raw uint8_t
// attr. Result types follow the op table (ir/opcodes.inc): same-type ops take
// the type of their first operand, compares give i1, popcount/find_* give
// i32, conversions and loads take the type as their first argument. Nothing
// here folds or reorders: each call is one instruction, in call order (the
// translators' IR stays byte-identical whichever spelling they use). See
// docs/ir.md "Building IR".
#pragma once
#include <cstring>
#include <initializer_list>

#include "ir/float_bits.h"
#include "ir/ir.h"

namespace gpurc::ir {

class Builder {
 public:
  explicit Builder(Function& f) : f_(f) {}
  Function& func() { return f_; }
  void set_block(BlockId b) { block_ = b; }
  BlockId block() const { return block_; }

  // The general form every helper below uses.
  ValueId emit(Opcode op, Type t, std::initializer_list<ValueId> args, uint8_t attr = 0,
               uint32_t fflags = 0, uint64_t imm = 0) {
    Inst in;
    in.op = op;
    in.type = t;
    in.attr = attr;
    in.fflags = fflags;
    in.imm = imm;
    in.block = block_;
    in.args.assign(args);
    f_.insts.push_back(std::move(in));
    ValueId v = ValueId(f_.insts.size() - 1);
    f_.blocks[block_].insts.push_back(v);
    return v;
  }
  Type type(ValueId v) const { return f_.insts[v].type; }

  // ---- constants
  ValueId constant(Type t, uint64_t bits) { return emit(Opcode::Const, t, {}, 0, 0, bits & type_mask(t)); }
  ValueId i1(bool b) { return constant(Type::I1, b); }
  ValueId i16(uint32_t v) { return constant(Type::I16, v); }  // low 16 bits
  ValueId i32(uint32_t v) { return constant(Type::I32, v); }
  ValueId i64(uint64_t v) { return constant(Type::I64, v); }
  ValueId f32_bits(uint32_t bits) { return constant(Type::F32, bits); }
  ValueId f64_bits(uint64_t bits) { return constant(Type::F64, bits); }
  ValueId f32(float x) {  // exact bits of x (NaN payloads too)
    uint32_t bits;
    std::memcpy(&bits, &x, 4);
    return f32_bits(bits);
  }
  // x rounded to nearest even in float type t (exact for every value t holds).
  ValueId fconst(Type t, double x) { return constant(t, fbits::from_double(x, t, Round::NearestEven)); }

  // ---- state
  ValueId get_var(uint32_t var) { return emit(Opcode::GetVar, f_.vars[var].type, {}, 0, 0, var); }
  void set_var(uint32_t var, ValueId v) { emit(Opcode::SetVar, Type::Void, {v}, 0, 0, var); }
  // Writes v where `lanes` holds, keeps the var's value elsewhere (select of the old value).
  void set_var_where(ValueId lanes, uint32_t var, ValueId v) { set_var(var, select(lanes, v, get_var(var))); }
  ValueId load_uniform(Type t, uint32_t offset) { return emit(Opcode::LoadUniform, t, {}, 0, 0, offset); }
  // i32 / f32 at byte `base + offset` (offset an i32 value per lane); 0 where that leaves the block.
  ValueId load_uniform_idx(Type t, ValueId offset, uint32_t base) {
    return emit(Opcode::LoadUniformIdx, t, {offset}, 0, 0, base);
  }
  ValueId lane_id() { return emit(Opcode::LaneId, Type::I32, {}); }
  ValueId entry_mask() { return emit(Opcode::EntryMask, Type::I1, {}); }

  // ---- generic same-type forms (the result has the first operand's type)
  ValueId binary(Opcode op, ValueId a, ValueId b, uint8_t attr = 0, uint32_t fflags = 0) {
    return emit(op, type(a), {a, b}, attr, fflags);
  }
  ValueId unary(Opcode op, ValueId a, uint8_t attr = 0, uint32_t fflags = 0) {
    return emit(op, type(a), {a}, attr, fflags);
  }

  // ---- integer (any int type; both operands of one type, shift counts any int type)
  ValueId iadd(ValueId a, ValueId b) { return binary(Opcode::IAdd, a, b); }
  ValueId isub(ValueId a, ValueId b) { return binary(Opcode::ISub, a, b); }
  ValueId imul(ValueId a, ValueId b) { return binary(Opcode::IMul, a, b); }
  ValueId ineg(ValueId a) { return unary(Opcode::INeg, a); }
  ValueId imin(Sign s, ValueId a, ValueId b) { return binary(Opcode::IMin, a, b, uint8_t(s)); }
  ValueId imax(Sign s, ValueId a, ValueId b) { return binary(Opcode::IMax, a, b, uint8_t(s)); }
  ValueId isad(Sign s, ValueId a, ValueId b, ValueId c) { return emit(Opcode::ISad, type(a), {a, b, c}, uint8_t(s)); }
  ValueId and_(ValueId a, ValueId b) { return binary(Opcode::And, a, b); }
  ValueId or_(ValueId a, ValueId b) { return binary(Opcode::Or, a, b); }
  ValueId xor_(ValueId a, ValueId b) { return binary(Opcode::Xor, a, b); }
  ValueId not_(ValueId a) { return unary(Opcode::Not, a); }
  // ShiftMode::Mask: count mod width; Clamp: counts >= width give 0 (ashr: the sign).
  ValueId shl(ValueId a, ValueId n, ShiftMode m = ShiftMode::Mask) { return binary(Opcode::Shl, a, n, uint8_t(m)); }
  ValueId lshr(ValueId a, ValueId n, ShiftMode m = ShiftMode::Mask) { return binary(Opcode::LShr, a, n, uint8_t(m)); }
  ValueId ashr(ValueId a, ValueId n, ShiftMode m = ShiftMode::Mask) { return binary(Opcode::AShr, a, n, uint8_t(m)); }
  ValueId lut3(ValueId a, ValueId b, ValueId c, uint8_t table) { return emit(Opcode::Lut3, type(a), {a, b, c}, 0, 0, table); }
  ValueId bf_extract(Sign s, ValueId v, ValueId offset, ValueId count) {
    return emit(Opcode::BfExtract, type(v), {v, offset, count}, uint8_t(s));
  }
  ValueId bit_reverse(ValueId a) { return unary(Opcode::BitReverse, a); }
  ValueId popcount(ValueId a) { return emit(Opcode::Popcount, Type::I32, {a}); }
  ValueId find_lsb(ValueId a) { return emit(Opcode::FindLsb, Type::I32, {a}); }
  ValueId find_msb(Sign s, ValueId a) { return emit(Opcode::FindMsb, Type::I32, {a}, uint8_t(s)); }
  ValueId icarry(ValueId a, ValueId b, ValueId carry_in) { return emit(Opcode::ICarry, Type::I1, {a, b, carry_in}); }
  ValueId ioverflow(ValueId a, ValueId b, ValueId carry_in) { return emit(Opcode::IOverflow, Type::I1, {a, b, carry_in}); }
  ValueId extract16(ValueId word, unsigned half) { return emit(Opcode::Extract16, Type::I16, {word}, 0, 0, half); }
  // Bit `idx` of an int as i1 (an index past the width reads 0): mask tests.
  ValueId bit_of(ValueId mask, ValueId idx) { return trunc(Type::I1, lshr(mask, idx, ShiftMode::Clamp)); }
  ValueId insert16(ValueId word, ValueId v16, unsigned half) {
    return emit(Opcode::Insert16, Type::I32, {word, v16}, 0, 0, half);
  }

  // ---- float (fflags: ff::* | with_round | with_nan, as the op table allows)
  ValueId fadd(ValueId a, ValueId b, uint32_t fflags = 0) { return binary(Opcode::FAdd, a, b, 0, fflags); }
  ValueId fsub(ValueId a, ValueId b, uint32_t fflags = 0) { return binary(Opcode::FSub, a, b, 0, fflags); }
  ValueId fmul(ValueId a, ValueId b, uint32_t fflags = 0) { return binary(Opcode::FMul, a, b, 0, fflags); }
  ValueId ffma(ValueId a, ValueId b, ValueId c, uint32_t fflags = 0) { return emit(Opcode::FFma, type(a), {a, b, c}, 0, fflags); }
  ValueId fmad(ValueId a, ValueId b, ValueId c, uint32_t fflags = 0) { return emit(Opcode::FMad, type(a), {a, b, c}, 0, fflags); }
  ValueId fmin(MinMaxNan n, ValueId a, ValueId b, uint32_t fflags = 0) { return binary(Opcode::FMin, a, b, uint8_t(n), fflags); }
  ValueId fmax(MinMaxNan n, ValueId a, ValueId b, uint32_t fflags = 0) { return binary(Opcode::FMax, a, b, uint8_t(n), fflags); }
  ValueId fneg(ValueId a) { return unary(Opcode::FNeg, a); }
  ValueId fabs(ValueId a) { return unary(Opcode::FAbs, a); }
  // ffloor/fceil/ftrunc/frint and other one-operand float ops without a variant.
  ValueId fround(Opcode op, ValueId a, uint32_t fflags = 0) { return unary(op, a, 0, fflags); }
  // frcp/frsqrt/fsqrt/fexp2/flog2/fsin/fcos in a hardware's definition.
  ValueId transc(Opcode op, Transc model, ValueId a, uint32_t fflags = 0) { return unary(op, a, uint8_t(model), fflags); }
  ValueId fsin_step(Transc model, ValueId a, ValueId selector, uint32_t fflags = 0) {
    return emit(Opcode::FSinStep, type(a), {a, selector}, uint8_t(model), fflags);
  }

  // ---- compare and select
  ValueId select(ValueId c, ValueId a, ValueId b) { return emit(Opcode::Select, type(a), {c, a, b}); }
  ValueId icmp(IntPred p, ValueId a, ValueId b) { return emit(Opcode::ICmp, Type::I1, {a, b}, uint8_t(p)); }
  ValueId fcmp(FloatPred p, ValueId a, ValueId b, uint32_t fflags = 0) {
    return emit(Opcode::FCmp, Type::I1, {a, b}, uint8_t(p), fflags);
  }

  // ---- conversions (the result type first)
  ValueId convert(Opcode op, Type to, ValueId a, uint8_t attr = 0, uint32_t fflags = 0) {
    return emit(op, to, {a}, attr, fflags);
  }
  ValueId zext(Type to, ValueId a) { return convert(Opcode::Zext, to, a); }
  ValueId sext(Type to, ValueId a) { return convert(Opcode::Sext, to, a); }
  ValueId trunc(Type to, ValueId a) { return convert(Opcode::Trunc, to, a); }
  // Any int -> int width change: truncation, or zero-/sign-extension per `s`;
  // nothing when the width is already t's.
  ValueId resize(Type to, ValueId a, Sign s = Sign::Unsigned) {
    const unsigned from = bit_width(type(a)), w = bit_width(to);
    if (from == w) return a;
    if (from < w) return convert(s == Sign::Signed ? Opcode::Sext : Opcode::Zext, to, a);
    return trunc(to, a);
  }
  ValueId bitcast(Type to, ValueId a) { return convert(Opcode::Bitcast, to, a); }
  // The bits of a float as the int type of its width.
  ValueId float_bits(ValueId a) { return bitcast(int_type(bit_width(type(a))), a); }
  ValueId itof(Type to, Sign s, ValueId a, uint32_t fflags = 0) { return convert(Opcode::IToF, to, a, uint8_t(s), fflags); }
  ValueId ftoi(Type to, Sign s, ValueId a, uint32_t fflags = 0) { return convert(Opcode::FToI, to, a, uint8_t(s), fflags); }
  ValueId ftof(Type to, ValueId a, uint32_t fflags = 0) { return convert(Opcode::FToF, to, a, 0, fflags); }

  // ---- cross-lane (`mask`: the lanes taking part)
  ValueId ballot(ValueId pred, ValueId mask) { return emit(Opcode::Ballot, Type::I32, {pred, mask}); }
  ValueId any(ValueId pred, ValueId mask) { return emit(Opcode::Any, Type::I1, {pred, mask}); }
  ValueId all(ValueId pred, ValueId mask) { return emit(Opcode::All, Type::I1, {pred, mask}); }
  ValueId shuffle(ValueId v, ValueId lane) { return emit(Opcode::Shuffle, type(v), {v, lane}); }
  ValueId broadcast(ValueId v, ValueId lane) { return emit(Opcode::Broadcast, type(v), {v, lane}); }
  ValueId quad_shuffle(ValueId v, ValueId idx) { return emit(Opcode::QuadShuffle, type(v), {v, idx}); }
  ValueId reduce(ReduceOp op, ValueId v, ValueId mask) { return emit(Opcode::Reduce, type(v), {v, mask}, uint8_t(op)); }
  ValueId scan_incl(ReduceOp op, ValueId v, ValueId mask) { return emit(Opcode::ScanIncl, type(v), {v, mask}, uint8_t(op)); }
  ValueId scan_excl(ReduceOp op, ValueId v, ValueId mask) { return emit(Opcode::ScanExcl, type(v), {v, mask}, uint8_t(op)); }

  // ---- memory
  ValueId load(Type t, Space s, AddrClass c, ValueId addr, ValueId mask) {
    return emit(Opcode::Load, t, {addr, mask}, mem_attr(s, c));
  }
  void store(Space s, AddrClass c, ValueId addr, ValueId value, ValueId mask) {
    emit(Opcode::Store, Type::Void, {addr, value, mask}, mem_attr(s, c));
  }
  ValueId atomic(AtomicOp op, Space s, ValueId addr, ValueId v, ValueId mask) {
    return emit(Opcode::AtomicRmw, type(v), {addr, v, mask}, uint8_t(op), 0, uint64_t(s));
  }
  ValueId atomic_cas(Space s, ValueId addr, ValueId compare, ValueId v, ValueId mask) {
    return emit(Opcode::AtomicCas, type(v), {addr, compare, v, mask}, 0, 0, uint64_t(s));
  }

  // ---- effects
  // Guest fault `code` (the frontend's encoding) if any lane of `lanes` is set.
  void trap(ValueId lanes, uint64_t code) { emit(Opcode::Trap, Type::Void, {lanes}, 0, 0, code); }
  void budget(uint64_t cost) { emit(Opcode::Budget, Type::Void, {}, 0, 0, cost); }

  // Terminators set the block's successors.
  void br(BlockId to) { term(Opcode::Br, {}, {to}); }
  void cond_br(ValueId c, BlockId t, BlockId e) { term(Opcode::CondBr, {c}, {t, e}); }
  void ret() { term(Opcode::Return, {}, {}); }
  void barrier(BlockId next) { term(Opcode::Barrier, {}, {next}); }
  void switch_(ValueId sel, std::initializer_list<BlockId> targets) { term(Opcode::Switch, {sel}, targets); }
  // A switch over a run-time list of targets (the last one is the default).
  void switch_(ValueId sel, const std::vector<BlockId>& targets) {
    emit(Opcode::Switch, Type::Void, {sel});
    f_.blocks[block_].succs = targets;
  }

 private:
  void term(Opcode op, std::initializer_list<ValueId> args, std::initializer_list<BlockId> succs) {
    emit(op, Type::Void, args);
    f_.blocks[block_].succs.assign(succs);
  }
  Function& f_;
  BlockId block_ = 0;
};

}  // namespace gpurc::ir
