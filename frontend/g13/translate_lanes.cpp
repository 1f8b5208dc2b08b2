// G13 -> IR: ballots, shuffles, reductions and get_sr (see translate_impl.h).
#include <cstring>
#include <map>
#include <string>

#include "frontend/g13/translate_impl.h"
#include "ir/float_bits.h"
#include "ir/transc_g13.h"

namespace gpurc::g13::detail {

// ---- cross-lane ------------------------------------------------------------

bool Translator::shuffle(const Insn& in, const std::string& n, std::string& why) {
  const Op D = op(in, "D"), A = op(in, "A"), B = op(in, "B");
  const bool quad = n.compare(0, 4, "quad") == 0;
  const uint32_t width = quad ? 4 : 32;
  ValueId a, b64;
  if (!src(A, 32, false, a) || !src(B, 64, false, b64)) return why = "bad source", false;
  // Rotate/xor use the low bits of B; for the others every B >= width acts
  // alike, so B is clamped (a 64-bit B must not wrap around in 32 bits).
  const ValueId b_low = b_.resize(Type::I32, b64);
  const ValueId b = b_.select(b_.icmp(IntPred::Ugt, b64, b_.i64(255)), b_.i32(255), b_low);
  const ValueId ex = exec();
  const ValueId ln = b_.lane_id(), W = b_.i32(width);
  const ValueId base = b_.and_(ln, b_.i32(~(width - 1))), idx = b_.and_(ln, b_.i32(width - 1));
  ValueId s, write_mask = ex;
  if (n.find("_down") != std::string::npos) {
    const ValueId t = b_.iadd(idx, b);
    s = b_.select(b_.icmp(IntPred::Ult, t, W), t, idx);
  } else if (n.find("_rotate_up") != std::string::npos) {
    const ValueId bm = b_.and_(b_low, b_.i32(width - 1));
    s = b_.and_(b_.isub(b_.iadd(idx, W), bm), b_.i32(width - 1));
  } else if (n.find("_up") != std::string::npos) {
    s = b_.select(b_.icmp(IntPred::Ule, b, idx), b_.isub(idx, b), idx);
  } else if (n.find("_xor") != std::string::npos) {
    s = b_.and_(b_.xor_(idx, b_low), b_.i32(width - 1));
  } else {  // out-of-range index: the destination keeps its value
    const ValueId in_range = b_.icmp(IntPred::Ult, b, W);
    write_mask = b_.and_(ex, in_range);
    s = b_.and_(b, b_.i32(width - 1));
  }
  const ValueId src_lane = b_.or_(base, s);
  // Reading a lane that was never launched is an error in the interpreter: trap here.
  b_.trap(b_.and_(write_mask, b_.not_(b_.bit_of(launched_mask(), src_lane))), pc_);
  const ValueId v = b_.shuffle(a, src_lane);
  if (!write(D, v, write_mask)) return why = "bad destination", false;
  return true;
}

// quad_*/simd_* reductions and exclusive prefix scans over active lanes, in
// lane order. Integer simd ops use the IR's reduce/scan; float ops (rounded
// per step) and quad ops fold lane by lane exactly as the interpreter does.
bool Translator::reduce(const Insn& in, const std::string& n, std::string& why) {
  const Op D = op(in, "D"), A = op(in, "A");
  const bool quad = n.compare(0, 4, "quad") == 0;
  const bool prefix = n.find("prefix") != std::string::npos;
  std::string o = n.substr(n.find('_') + 1);
  if (prefix) o = o.substr(o.find('_') + 1);
  const unsigned dbits = D.bits();
  const Type it = ir::int_type(dbits), ft = dbits == 16 ? Type::F16 : Type::F32;
  const bool is_float = o == "fadd" || o == "fmul" || o == "min.f" || o == "max.f";
  ValueId val;
  if (!src(A, dbits, false, val)) return why = "bad source", false;
  const ValueId ex = exec();
  static const std::map<std::string, ir::ReduceOp> int_ops = {
      {"and", ir::ReduceOp::And},   {"or", ir::ReduceOp::Or},       {"xor", ir::ReduceOp::Xor},
      {"iadd", ir::ReduceOp::Add},  {"min.u", ir::ReduceOp::UMin},  {"max.u", ir::ReduceOp::UMax},
      {"min.s", ir::ReduceOp::SMin}, {"max.s", ir::ReduceOp::SMax}};
  if (!is_float && !int_ops.count(o)) return why = "unknown reduction '" + o + "'", false;
  ValueId out;
  if (!quad && !is_float) {
    out = prefix ? b_.scan_excl(int_ops.at(o), val, ex) : b_.reduce(int_ops.at(o), val, ex);
  } else {
    const uint64_t m = dbits == 16 ? 0xFFFF : 0xFFFFFFFF;
    uint64_t identity = 0;
    if (o == "and" || o == "min.u") identity = m;
    else if (o == "min.s") identity = m >> 1;
    else if (o == "max.s") identity = (m >> 1) + 1;
    else if (o == "fmul") identity = dbits == 16 ? 0x3C00 : 0x3F800000;
    else if (o == "fadd") identity = dbits == 16 ? 0x8000 : 0x80000000u;
    else if (o == "min.f") identity = dbits == 16 ? 0x7C00 : 0x7F800000u;
    else if (o == "max.f") identity = dbits == 16 ? 0xFC00 : 0xFF800000u;
    const uint32_t flags = dbits == 32 ? kFtz : 0;
    auto fl = [&](ValueId x) { return b_.bitcast(ft, x); };
    auto in_t = [&](ValueId x) { return b_.bitcast(it, x); };
    auto combine = [&](ValueId acc, ValueId x) -> ValueId {
      if (o == "and") return b_.and_(acc, x);
      if (o == "or") return b_.or_(acc, x);
      if (o == "xor") return b_.xor_(acc, x);
      if (o == "iadd") return b_.iadd(acc, x);
      if (o == "min.u") return b_.imin(ir::Sign::Unsigned, acc, x);
      if (o == "max.u") return b_.imax(ir::Sign::Unsigned, acc, x);
      if (o == "min.s") return b_.imin(ir::Sign::Signed, acc, x);
      if (o == "max.s") return b_.imax(ir::Sign::Signed, acc, x);
      const ValueId fa = fl(acc), fx = fl(x);
      if (o == "fadd") return in_t(b_.fadd(fa, fx, flags));
      if (o == "fmul") return in_t(b_.ffma(fa, fx, b_.fconst(ft, 0.0), flags));
      // min.f/max.f: a NaN loses; otherwise (x < acc) ? x : acc (max: >), then
      // canonicalised like any float result (x * 1: flush, default NaN).
      const uint32_t ftz = flags & ff::FtzIn;  // f16 values are never flushed
      const ValueId a_nan = b_.fcmp(FloatPred::Uno, fa, fa, ftz), x_nan = b_.fcmp(FloatPred::Uno, fx, fx, ftz);
      const ValueId better = b_.fcmp(o == "min.f" ? FloatPred::Olt : FloatPred::Ogt, fx, fa, ftz);
      const ValueId pick = b_.select(a_nan, fx, b_.select(x_nan, fa, b_.select(better, fx, fa)));
      return in_t(b_.fmul(pick, b_.fconst(ft, 1.0), flags));
    };
    const uint32_t width = quad ? 4 : 32;
    const ValueId exm = b_.ballot(b_.i1(true), ex);
    const ValueId ln = b_.lane_id(), idx = b_.and_(ln, b_.i32(width - 1));
    const ValueId base = b_.and_(ln, b_.i32(~(width - 1)));
    ValueId acc = b_.constant(it, identity);
    out = acc;
    for (uint32_t j = 0; j < width; ++j) {
      const ValueId vj = quad ? b_.quad_shuffle(val, b_.i32(j))
                              : b_.broadcast(val, b_.i32(j));
      const ValueId aj = b_.bit_of(exm, quad ? b_.iadd(base, b_.i32(j)) : b_.i32(j));
      if (prefix) out = b_.select(b_.icmp(IntPred::Eq, idx, b_.i32(j)), acc, out);
      acc = b_.select(aj, combine(acc, vj), acc);
    }
    if (!prefix) out = acc;
  }
  if (!write(D, out, ex)) return why = "bad destination", false;
  return true;
}

bool Translator::get_sr(const Insn& in, std::string& why) {
  const Op D = op(in, "D");
  const unsigned sr = unsigned(in.f("SR"));
  const ValueId ex = exec();
  ValueId v;
  if (!derived_sr(sr)) {
    v = b_.get_var(sr_vars_.at(sr));
  } else if (sr == 52) {
    v = b_.lane_id();
  } else if (sr == 63) {
    v = b_.i32(1);  // no helper threads outside fragment shading
  } else {
    const ValueId E = b_.ballot(b_.i1(true), ex), ln = b_.lane_id();
    const ValueId below = b_.isub(b_.shl(b_.i32(1), ln, kClamp), b_.i32(1));
    const ValueId quad = b_.shl(b_.i32(0xF), b_.and_(ln, b_.i32(~3u)));
    ValueId m = E;
    if (sr == 56) m = b_.and_(E, b_.and_(below, quad));
    else if (sr == 57) m = b_.and_(E, quad);
    else if (sr == 58) m = b_.and_(E, below);
    v = b_.popcount(m);
  }
  if (!write(D, v, ex)) return why = "bad destination", false;
  return true;
}

}  // namespace gpurc::g13::detail
