#include "fuzz/ir_gen.h"

#include <algorithm>

#include "ir/builder.h"
#include "ir/scalar.h"

namespace gpurc::fuzz {

using namespace ir;


namespace {

const Type kIntTypes[] = {Type::I8, Type::I16, Type::I32, Type::I64};
const Type kFloatTypes[] = {Type::F16, Type::F32, Type::F64};
const Type kMemTypes[] = {Type::I8, Type::I16, Type::I32, Type::I64, Type::F16, Type::F32, Type::F64};

// Pure per-lane ops the generator emits (every pure op of opcodes.inc except
// const/undef/phi, which are leaves or control, and the cross-lane group,
// which has its own rules).
const Opcode kPureOps[] = {
    Opcode::Select,    Opcode::IAdd,      Opcode::ISub,     Opcode::IAddC,     Opcode::ICarry,
    Opcode::IOverflow, Opcode::IMul,      Opcode::IMulHi,   Opcode::IMulWide,  Opcode::IMad,
    Opcode::ISad,      Opcode::IMin,      Opcode::IMax,     Opcode::INeg,      Opcode::IAbs,
    Opcode::ICmp,      Opcode::Shl,       Opcode::LShr,     Opcode::AShr,      Opcode::And,
    Opcode::Or,        Opcode::Xor,       Opcode::Not,      Opcode::Lut3,      Opcode::BfExtract,
    Opcode::BfInsert,  Opcode::Popcount,  Opcode::BitReverse, Opcode::FindMsb, Opcode::FindLsb,
    Opcode::Zext,      Opcode::Sext,      Opcode::Trunc,    Opcode::Bitcast,   Opcode::Extract16,
    Opcode::Insert16,  Opcode::FAdd,      Opcode::FSub,     Opcode::FMul,      Opcode::FFma,
    Opcode::FMad,      Opcode::FMin,      Opcode::FMax,     Opcode::FNeg,      Opcode::FAbs,
    Opcode::FCmp,      Opcode::FFloor,    Opcode::FCeil,    Opcode::FTrunc,    Opcode::FRint,
    Opcode::FRcp,      Opcode::FRsqrt,    Opcode::FSqrt,    Opcode::FExp2,     Opcode::FLog2,
    Opcode::FSin,      Opcode::FCos,      Opcode::FSinStep, Opcode::FToI,     Opcode::IToF,      Opcode::FToF,
    Opcode::EntryMask, Opcode::LaneId,
};

unsigned log2_bytes(unsigned bytes) { return bytes == 1 ? 0 : bytes == 2 ? 1 : bytes == 4 ? 2 : 3; }
unsigned mem_bytes(Type t) { return bit_width(t) / 8; }

class Generator {
 public:
  Generator(uint64_t seed, const IrGenOptions& opt) : rng_(seed), opt_(opt), b_(f_) {
    f_.name = "fuzz_" + std::to_string(seed);
  }

  Function run() {
    f_.uniform_bytes = kUniformBytes;
    int nvars = rng_.range(3, 7);
    f_.add_var("r0", Type::I32);
    f_.add_var("r1", Type::F32);
    for (int i = 2; i < nvars; ++i) f_.add_var("r" + std::to_string(i), random_type());
    reserved_.assign(f_.vars.size(), false);
    b_.set_block(f_.add_block("entry"));
    region(rng_.range(opt_.min_insts, opt_.max_insts));
    // Make sure every program leaves something in each ordinary var.
    for (uint32_t v = 0; v < reserved_.size(); ++v)
      if (!reserved_[v] && rng_.chance(50)) b_.set_var(v, pick(f_.vars[v].type));
    b_.ret();
    f_.compute_preds();
    return std::move(f_);
  }

 private:
  struct Val {
    ValueId id;
    Type type;
    bool uniform;  // same value in every lane by construction
    bool top;      // defined at the top level (all running lanes converged)
  };
  struct Loop {
    BlockId latch, exit;
  };

  Type random_type() {
    static const Type kWeighted[] = {Type::I32, Type::I32, Type::I32, Type::F32, Type::F32, Type::I64,
                                     Type::F64, Type::I1,  Type::I16, Type::I8,  Type::F16, Type::I32};
    return kWeighted[rng_.below(std::size(kWeighted))];
  }
  template <size_t N>
  Type one_of(const Type (&ts)[N]) { return ts[rng_.below(N)]; }

  ValueId add(ValueId v, bool uniform) {
    pool_.push_back(Val{v, f_[v].type, uniform, depth_ == 0});
    return v;
  }
  bool is_uniform(ValueId v) const {
    for (const Val& x : pool_)
      if (x.id == v) return x.uniform;
    return false;
  }

  // ---- leaves and operand choice
  ValueId constant(Type t) {
    return add(b_.constant(t, interesting_bits(rng_, t)), true);
  }
  ValueId leaf(Type t) {
    unsigned r = rng_.below(100);
    if (r < 45) {
      std::vector<uint32_t> vs;
      for (uint32_t v = 0; v < f_.vars.size(); ++v)
        if (f_.vars[v].type == t) vs.push_back(v);
      if (!vs.empty()) return add(b_.get_var(rng_.pick(vs)), false);
    }
    if (r < 65 && t != Type::I1) {
      unsigned size = lane_bytes(t) == 8 ? 8 : 4;
      uint32_t off = rng_.below(kUniformBytes / size) * size;
      return add(b_.load_uniform(t, off), true);
    }
    if (r < 72 && t == Type::I32) return add(b_.emit(Opcode::LaneId, Type::I32, {}), false);
    if (r < 75 && t == Type::I1) return add(b_.emit(Opcode::EntryMask, Type::I1, {}), false);
    return constant(t);
  }
  ValueId pick(Type t) {
    if (rng_.chance(70)) {
      std::vector<ValueId> vs;
      for (const Val& v : pool_)
        if (v.type == t) vs.push_back(v.id);
      if (!vs.empty()) return rng_.pick(vs);
    }
    return leaf(t);
  }
  // An i32 derived from any available value: addresses, indices, selectors.
  ValueId pick_i32() {
    if (rng_.chance(60)) return pick(Type::I32);
    Type t = one_of(kIntTypes);
    ValueId v = pick(t);
    if (t == Type::I32) return v;
    return add(b_.convert(bit_width(t) < 32 ? Opcode::Zext : Opcode::Trunc, Type::I32, v), is_uniform(v));
  }
  bool uniform_args(std::initializer_list<ValueId> vs) const {
    for (ValueId v : vs)
      if (!is_uniform(v)) return false;
    return true;
  }
  ValueId emit(Opcode op, Type t, std::initializer_list<ValueId> args, uint8_t attr = 0, uint32_t ff = 0,
               uint64_t imm = 0) {
    bool uni = uniform_args(args) && op != Opcode::LaneId && op != Opcode::EntryMask;
    return add(b_.emit(op, t, args, attr, ff, imm), uni);
  }

  // Float flags, only those the op takes.
  uint32_t fflags(Opcode op) {
    uint32_t f = 0;
    if (op == Opcode::FCmp) return rng_.chance(30) ? ff::FtzIn : 0;
    const bool rounds = op == Opcode::FAdd || op == Opcode::FSub || op == Opcode::FMul || op == Opcode::FFma ||
                        op == Opcode::FMad || op == Opcode::FToI || op == Opcode::IToF || op == Opcode::FToF ||
                        op == Opcode::FRcp || op == Opcode::FSqrt;
    if (op != Opcode::IToF && rng_.chance(30)) f |= ff::FtzIn;
    if (op != Opcode::FToI && rng_.chance(30)) f |= ff::FtzOut;
    if (op != Opcode::FToI && rng_.chance(15)) f |= ff::Sat;
    if ((op == Opcode::FMul || op == Opcode::FFma || op == Opcode::FMad) && rng_.chance(25)) f |= ff::ZeroMul;
    if (op != Opcode::FToI && op != Opcode::IToF) f = with_nan(f, NanRule(rng_.below(3)));
    if (rounds && rng_.chance(30)) f = with_round(f, Round(rng_.below(4)));
    return f;
  }

  // ---- straight-line code
  void pure_op() {
    Opcode op = kPureOps[rng_.below(std::size(kPureOps))];
    switch (op) {
      case Opcode::Select: {
        Type t = random_type();
        ValueId c = pick(Type::I1), a = pick(t), b = pick(t);
        emit(op, t, {c, a, b});
        return;
      }
      case Opcode::IAdd: case Opcode::ISub: case Opcode::IMul: case Opcode::IMin: case Opcode::IMax:
      case Opcode::IMulHi: {
        Type t = one_of(kIntTypes);
        ValueId a = pick(t), b = pick(t);
        uint8_t attr = (op == Opcode::IMin || op == Opcode::IMax || op == Opcode::IMulHi) ? rng_.below(2) : 0;
        emit(op, t, {a, b}, attr);
        return;
      }
      case Opcode::And: case Opcode::Or: case Opcode::Xor: {
        Type t = rng_.chance(20) ? Type::I1 : one_of(kIntTypes);
        ValueId a = pick(t), b = pick(t);
        emit(op, t, {a, b});
        return;
      }
      case Opcode::Not: {
        Type t = rng_.chance(20) ? Type::I1 : one_of(kIntTypes);
        emit(op, t, {pick(t)});
        return;
      }
      case Opcode::INeg: case Opcode::IAbs: case Opcode::BitReverse: {
        Type t = one_of(kIntTypes);
        emit(op, t, {pick(t)});
        return;
      }
      case Opcode::IAddC: {
        Type t = one_of(kIntTypes);
        ValueId a = pick(t), b = pick(t), c = pick(Type::I1);
        emit(op, t, {a, b, c});
        return;
      }
      case Opcode::ICarry: case Opcode::IOverflow: {
        Type t = one_of(kIntTypes);
        ValueId a = pick(t), b = pick(t), c = pick(Type::I1);
        emit(op, Type::I1, {a, b, c});
        return;
      }
      case Opcode::IMulWide: {
        static const Type kNarrow[] = {Type::I8, Type::I16, Type::I32};
        Type t = one_of(kNarrow);
        ValueId a = pick(t), b = pick(t);
        emit(op, int_type(bit_width(t) * 2), {a, b}, rng_.below(2));
        return;
      }
      case Opcode::IMad: case Opcode::ISad: case Opcode::Lut3: {
        Type t = one_of(kIntTypes);
        ValueId a = pick(t), b = pick(t), c = pick(t);
        if (op == Opcode::Lut3) emit(op, t, {a, b, c}, 0, 0, rng_.below(256));
        else emit(op, t, {a, b, c}, op == Opcode::ISad ? rng_.below(2) : 0);
        return;
      }
      case Opcode::ICmp: {
        Type t = one_of(kIntTypes);
        ValueId a = pick(t), b = pick(t);
        emit(op, Type::I1, {a, b}, rng_.below(10));
        return;
      }
      case Opcode::Shl: case Opcode::LShr: case Opcode::AShr: {
        Type t = one_of(kIntTypes);
        ValueId a = pick(t), n = small_i32(bit_width(t) + 8);
        emit(op, t, {a, n}, rng_.below(2));
        return;
      }
      case Opcode::BfExtract: case Opcode::BfInsert: {
        Type t = one_of(kIntTypes);
        ValueId a = pick(t);
        ValueId ins = op == Opcode::BfInsert ? pick(t) : kNoValue;
        ValueId off = small_i32(bit_width(t) + 4), cnt = small_i32(bit_width(t) + 4);
        if (op == Opcode::BfExtract) emit(op, t, {a, off, cnt}, rng_.below(2));
        else emit(op, t, {a, ins, off, cnt});
        return;
      }
      case Opcode::Popcount: case Opcode::FindMsb: case Opcode::FindLsb: {
        Type t = one_of(kIntTypes);
        emit(op, Type::I32, {pick(t)}, op == Opcode::FindMsb ? rng_.below(2) : 0);
        return;
      }
      case Opcode::Zext: case Opcode::Sext: {
        static const Type kFrom[] = {Type::I1, Type::I8, Type::I16, Type::I32};
        Type from = one_of(kFrom);
        std::vector<Type> to;
        for (Type t : kIntTypes)
          if (bit_width(t) > bit_width(from)) to.push_back(t);
        emit(op, rng_.pick(to), {pick(from)});
        return;
      }
      case Opcode::Trunc: {
        static const Type kTo[] = {Type::I1, Type::I8, Type::I16, Type::I32};
        Type to = one_of(kTo);
        std::vector<Type> from;
        for (Type t : kIntTypes)
          if (bit_width(t) > bit_width(to)) from.push_back(t);
        emit(op, to, {pick(rng_.pick(from))});
        return;
      }
      case Opcode::Bitcast: {
        static const Type kPairs[][2] = {{Type::I16, Type::F16}, {Type::I32, Type::F32}, {Type::I64, Type::F64}};
        const auto& p = kPairs[rng_.below(3)];
        bool flip = rng_.chance(50);
        emit(op, p[flip], {pick(p[!flip])});
        return;
      }
      case Opcode::Extract16:
        emit(op, Type::I16, {pick(Type::I32)}, 0, 0, rng_.below(2));
        return;
      case Opcode::Insert16: {
        ValueId a = pick(Type::I32), h = pick(Type::I16);
        emit(op, Type::I32, {a, h}, 0, 0, rng_.below(2));
        return;
      }
      case Opcode::FAdd: case Opcode::FSub: case Opcode::FMul: case Opcode::FMin: case Opcode::FMax: {
        Type t = one_of(kFloatTypes);
        ValueId a = pick(t), b = pick(t);
        uint8_t attr = (op == Opcode::FMin || op == Opcode::FMax) ? rng_.below(3) : 0;
        emit(op, t, {a, b}, attr, fflags(op));
        return;
      }
      case Opcode::FFma: case Opcode::FMad: {
        Type t = one_of(kFloatTypes);
        ValueId a = pick(t), b = pick(t), c = pick(t);
        emit(op, t, {a, b, c}, 0, fflags(op));
        return;
      }
      case Opcode::FNeg: case Opcode::FAbs: {
        Type t = one_of(kFloatTypes);
        emit(op, t, {pick(t)});
        return;
      }
      case Opcode::FCmp: {
        Type t = one_of(kFloatTypes);
        ValueId a = pick(t), b = pick(t);
        emit(op, Type::I1, {a, b}, rng_.below(14), fflags(op));
        return;
      }
      case Opcode::FFloor: case Opcode::FCeil: case Opcode::FTrunc: case Opcode::FRint: {
        Type t = one_of(kFloatTypes);
        emit(op, t, {pick(t)}, 0, fflags(op));
        return;
      }
      case Opcode::FRcp: case Opcode::FRsqrt: case Opcode::FSqrt: case Opcode::FExp2: case Opcode::FLog2:
      case Opcode::FSin: case Opcode::FCos: case Opcode::FSinStep: {
        Type t = one_of(kFloatTypes);
        uint32_t f = fflags(op);
        // Every hardware variant eval_lane implements; the others would only
        // test the "unsupported" error path.
        uint8_t variant = uint8_t(rng_.below(5));
        if (!lane_op_supported(LaneOp{op, t, t, variant, f, 0})) variant = uint8_t(Transc::Ieee);
        if (!lane_op_supported(LaneOp{op, t, t, variant, f, 0})) {
          pure_op();  // no variant defines this op yet (fsin_step): emit another one
          return;
        }
        ValueId a = pick(t);
        if (op == Opcode::FSinStep) emit(op, t, {a, pick(t)}, variant, f);
        else emit(op, t, {a}, variant, f);
        return;
      }
      case Opcode::FToI: {
        Type from = one_of(kFloatTypes), to = one_of(kIntTypes);
        emit(op, to, {pick(from)}, rng_.below(2), fflags(op));
        return;
      }
      case Opcode::IToF: {
        Type from = one_of(kIntTypes), to = one_of(kFloatTypes);
        emit(op, to, {pick(from)}, rng_.below(2), fflags(op));
        return;
      }
      case Opcode::FToF: {
        Type from = one_of(kFloatTypes), to = one_of(kFloatTypes);
        while (to == from) to = one_of(kFloatTypes);
        emit(op, to, {pick(from)}, 0, fflags(op));
        return;
      }
      case Opcode::EntryMask:
        emit(op, Type::I1, {});
        return;
      case Opcode::LaneId:
        emit(op, Type::I32, {});
        return;
      default:
        return;
    }
  }
  // An i32 that is usually in [0, limit) (shift counts, bit offsets) but
  // sometimes anything, to reach the out-of-range rules.
  ValueId small_i32(unsigned limit) {
    if (rng_.chance(50)) return add(b_.i32(rng_.below(limit)), true);
    if (rng_.chance(70)) {
      ValueId v = pick_i32();
      ValueId m = add(b_.i32(63), true);
      return emit(Opcode::And, Type::I32, {v, m});
    }
    return pick_i32();
  }

  void set_var() {
    std::vector<uint32_t> vs;
    for (uint32_t v = 0; v < reserved_.size(); ++v)
      if (!reserved_[v]) vs.push_back(v);
    uint32_t v = rng_.pick(vs);
    b_.set_var(v, pick(f_.vars[v].type));
  }

  // ---- cross-lane ops
  ValueId mask_operand() {
    unsigned r = rng_.below(10);
    if (r < 4) return add(b_.i1(true), true);
    if (r < 6) return add(b_.emit(Opcode::EntryMask, Type::I1, {}), false);
    return pick(Type::I1);
  }
  // Lanes running at this point, as a uniform bit set (ballot under every
  // launched lane: the engine ANDs in the execution mask).
  ValueId running_lanes() {
    ValueId one = add(b_.i1(true), true);
    ValueId em = add(b_.emit(Opcode::EntryMask, Type::I1, {}), false);
    return add(b_.emit(Opcode::Ballot, Type::I32, {one, em}), true);
  }
  // idx if lane (target) is running, else `fallback`: a cross-lane read never
  // looks at a lane whose value is unspecified.
  ValueId guard_lane(ValueId running, ValueId target, ValueId idx, ValueId fallback) {
    ValueId sh = emit(Opcode::LShr, Type::I32, {running, target}, uint8_t(ShiftMode::Mask));
    ValueId one = add(b_.i32(1), true);
    ValueId bit = emit(Opcode::And, Type::I32, {sh, one});
    ValueId zero = add(b_.i32(0), true);
    ValueId ok = emit(Opcode::ICmp, Type::I1, {bit, zero}, uint8_t(IntPred::Ne));
    return emit(Opcode::Select, Type::I32, {ok, idx, fallback});
  }
  ValueId pick_top(Type t) {
    std::vector<ValueId> vs;
    for (const Val& v : pool_)
      if (v.type == t && v.top) vs.push_back(v.id);
    if (!vs.empty() && rng_.chance(75)) return rng_.pick(vs);
    return leaf(t);
  }
  void cross_lane_op() {
    unsigned r = rng_.below(9);
    if (r >= 6 && depth_ > 0) r = rng_.below(6);
    switch (r) {
      case 0: case 1: case 2: {
        Opcode op = r == 0 ? Opcode::Ballot : r == 1 ? Opcode::Any : Opcode::All;
        ValueId p = pick(Type::I1), m = mask_operand();
        emit(op, op == Opcode::Ballot ? Type::I32 : Type::I1, {p, m});
        return;
      }
      case 3: case 4: case 5: {
        Opcode op = r == 3 ? Opcode::Reduce : r == 4 ? Opcode::ScanIncl : Opcode::ScanExcl;
        bool fl = rng_.chance(35);
        Type t = fl ? one_of(kFloatTypes) : one_of(kIntTypes);
        uint8_t rop = fl ? uint8_t(ReduceOp::FAdd) + rng_.below(3) : rng_.below(8);
        uint32_t f = 0;
        if (fl) {
          if (rng_.chance(30)) f |= ff::FtzIn;
          if (rng_.chance(30)) f |= ff::FtzOut;
          f = with_nan(f, NanRule(rng_.below(3)));
        }
        ValueId v = pick(t), m = mask_operand();
        emit(op, t, {v, m}, rop, f);
        return;
      }
      default: {
        // Only at the top level, reading values defined there.
        Opcode op = r == 6 ? Opcode::Shuffle : r == 7 ? Opcode::Broadcast : Opcode::QuadShuffle;
        Type t = random_type();
        ValueId v = pick_top(t);
        ValueId running = running_lanes();
        ValueId first = emit(Opcode::FindLsb, Type::I32, {running});
        ValueId idx;
        if (op == Opcode::Shuffle) {
          ValueId i = pick_top(Type::I32);
          idx = guard_lane(running, i, i, first);
        } else if (op == Opcode::Broadcast) {
          ValueId i = rng_.chance(50) ? add(b_.i32(rng_.below(40)), true) : leaf_uniform_i32();
          idx = guard_lane(running, i, i, first);
        } else {
          ValueId i = pick_top(Type::I32);
          ValueId lane = add(b_.emit(Opcode::LaneId, Type::I32, {}), false);
          ValueId hi = emit(Opcode::And, Type::I32, {lane, add(b_.i32(~3u), true)});
          ValueId lo = emit(Opcode::And, Type::I32, {i, add(b_.i32(3), true)});
          ValueId target = emit(Opcode::Or, Type::I32, {hi, lo});
          idx = guard_lane(running, target, i, lane);
        }
        emit(op, t, {v, idx});
        return;
      }
    }
  }
  ValueId leaf_uniform_i32() {
    return add(b_.load_uniform(Type::I32, rng_.below(kUniformBytes / 4) * 4), true);
  }

  // ---- memory
  ValueId address(ValueId off32) {
    if (rng_.chance(25)) return add(b_.convert(Opcode::Zext, Type::I64, off32), is_uniform(off32));
    return off32;
  }
  // base + ((x & 7) * 32 + lane) * size: this lane's element in the private
  // area; consecutive across lanes when x is uniform.
  ValueId private_address(unsigned size, AddrClass& cls) {
    ValueId x = pick_i32();
    ValueId row = emit(Opcode::And, Type::I32, {x, add(b_.i32(kPrivateRows - 1), true)});
    ValueId rs = emit(Opcode::Shl, Type::I32, {row, add(b_.i32(5), true)});
    ValueId lane = add(b_.emit(Opcode::LaneId, Type::I32, {}), false);
    ValueId idx = emit(Opcode::IAdd, Type::I32, {rs, lane});
    ValueId off = emit(Opcode::Shl, Type::I32, {idx, add(b_.i32(log2_bytes(size)), true)});
    ValueId base = add(b_.i32(uint32_t(kGlobalBase + private_area_offset(size))), true);
    cls = is_uniform(x) ? AddrClass::Consecutive : AddrClass::Random;
    return address(emit(Opcode::IAdd, Type::I32, {off, base}));
  }
  // Any aligned address of the buffer (loads at converged points only).
  ValueId shared_address(unsigned size, uint64_t base_addr, AddrClass& cls) {
    ValueId x = pick_i32();
    ValueId idx = emit(Opcode::And, Type::I32, {x, add(b_.i32(kGlobalSize / size - 1), true)});
    ValueId off = emit(Opcode::Shl, Type::I32, {idx, add(b_.i32(log2_bytes(size)), true)});
    ValueId base = add(b_.i32(uint32_t(base_addr)), true);
    cls = is_uniform(x) ? AddrClass::Uniform : AddrClass::Random;
    return address(emit(Opcode::IAdd, Type::I32, {off, base}));
  }
  void memory_op() {
    unsigned r = rng_.below(10);
    AddrClass cls;
    if (r < 4) {  // load
      Type t = one_of(kMemTypes);
      ValueId a = (depth_ == 0 && rng_.chance(60)) ? shared_address(mem_bytes(t), kGlobalBase, cls)
                                                                    : private_address(mem_bytes(t), cls);
      ValueId m = mask_operand();
      add(b_.load(t, Space::Global, cls, a, m), false);
    } else if (r < 7) {  // store
      Type t = one_of(kMemTypes);
      ValueId a = private_address(mem_bytes(t), cls);
      ValueId v = pick(t), m = mask_operand();
      b_.store(Space::Global, cls, a, v, m);
    } else if (r < 9) {  // atomic read-modify-write
      Type t = rng_.chance(60) ? Type::I32 : Type::I64;
      ValueId a = private_address(mem_bytes(t), cls);
      ValueId v = pick(t), m = mask_operand();
      add(b_.emit(Opcode::AtomicRmw, t, {a, v, m}, rng_.below(12), 0, uint64_t(Space::Global)), false);
    } else {  // compare and swap, half the time with the current value so it succeeds
      Type t = rng_.chance(60) ? Type::I32 : Type::I64;
      ValueId a = private_address(mem_bytes(t), cls);
      ValueId m = mask_operand();
      ValueId cmp = rng_.chance(50) ? add(b_.load(t, Space::Global, cls, a, m), false) : pick(t);
      ValueId v = pick(t);
      add(b_.emit(Opcode::AtomicCas, t, {a, cmp, v, m}, 0, 0, uint64_t(Space::Global)), false);
    }
  }
  // One deliberate guest fault per program, inside a divergent region.
  void fault_op() {
    fault_used_ = true;
    ValueId m = cond();
    if (rng_.chance(50)) {
      b_.emit(Opcode::Trap, Type::Void, {m}, 0, 0, 1 + rng_.below(1000));
    } else {
      Type t = one_of(kMemTypes);
      AddrClass cls;
      ValueId a = shared_address(mem_bytes(t), kOutOfBoundsBase, cls);
      if (rng_.chance(50)) add(b_.load(t, Space::Global, cls, a, m), false);
      else b_.store(Space::Global, cls, a, pick(t), m);
    }
  }

  // ---- control flow
  // A branch condition: mostly varying (often lane-dependent so the warp
  // really splits), sometimes uniform.
  ValueId cond() {
    unsigned r = rng_.below(10);
    if (r < 3) {
      ValueId lane = add(b_.emit(Opcode::LaneId, Type::I32, {}), false);
      ValueId k = add(b_.i32(rng_.below(33)), true);
      return emit(Opcode::ICmp, Type::I1, {lane, k}, rng_.below(10));
    }
    if (r < 4) {
      ValueId u = leaf_uniform_i32();
      return emit(Opcode::ICmp, Type::I1, {u, add(b_.i32(rng_.below(4)), true)}, rng_.below(10));
    }
    if (r < 6) {
      Type t = one_of(kFloatTypes);
      ValueId a = pick(t), b = pick(t);
      return emit(Opcode::FCmp, Type::I1, {a, b}, rng_.below(14), fflags(Opcode::FCmp));
    }
    if (r < 8) {
      Type t = one_of(kIntTypes);
      ValueId a = pick(t), b = pick(t);
      return emit(Opcode::ICmp, Type::I1, {a, b}, rng_.below(10));
    }
    return pick(Type::I1);
  }

  uint32_t control_var() {
    uint32_t v = f_.add_var("c" + std::to_string(f_.vars.size()), Type::I32);
    reserved_.push_back(true);
    return v;
  }

  // Enters a region whose blocks the current block dominates: values defined
  // inside are dropped from the pool at exit.
  struct Scope {
    Generator& g;
    size_t pool_size;
    bool divergent;
    Scope(Generator& gen, bool div) : g(gen), pool_size(gen.pool_.size()), divergent(div) {
      if (divergent) ++g.depth_;
    }
    void reset() { g.pool_.resize(pool_size); }
    ~Scope() {
      reset();
      if (divergent) --g.depth_;
    }
  };

  void if_region(int n, bool with_else) {
    ValueId c = cond();
    bool div = !is_uniform(c);
    BlockId t = f_.add_block(), e = with_else ? f_.add_block() : kNoBlock, j = f_.add_block();
    b_.cond_br(c, t, with_else ? e : j);
    {
      Scope s(*this, div);
      b_.set_block(t);
      region(with_else ? n / 2 : n);
      b_.br(j);
      if (with_else) {
        s.reset();
        b_.set_block(e);
        region(n - n / 2);
        b_.br(j);
      }
    }
    b_.set_block(j);
  }

  // Loops count a per-lane trip counter up to a per-lane bound of 0..7, so
  // lanes leave at different iterations.
  void loop_region(int n) {
    uint32_t cnt = control_var();
    b_.set_var(cnt, add(b_.i32(0), true));
    ValueId x = pick_i32();
    ValueId bound = emit(Opcode::And, Type::I32, {x, add(b_.i32(7), true)});
    bool while_shape = rng_.chance(50);
    BlockId head = while_shape ? f_.add_block() : kNoBlock;
    BlockId body = f_.add_block(), latch = f_.add_block(), exit = f_.add_block();
    b_.br(while_shape ? head : body);
    {
      Scope s(*this, true);
      if (while_shape) {
        b_.set_block(head);
        ValueId i = add(b_.get_var(cnt), false);
        ValueId c = emit(Opcode::ICmp, Type::I1, {i, bound}, uint8_t(IntPred::Ult));
        b_.cond_br(c, body, exit);
      }
      loops_.push_back(Loop{latch, exit});
      b_.set_block(body);
      region(n);
      b_.br(latch);
      loops_.pop_back();
      s.reset();
      b_.set_block(latch);
      ValueId i = add(b_.get_var(cnt), false);
      ValueId i1 = emit(Opcode::IAdd, Type::I32, {i, add(b_.i32(1), true)});
      b_.set_var(cnt, i1);
      if (while_shape) {
        b_.br(head);
      } else {
        ValueId c = emit(Opcode::ICmp, Type::I1, {i1, bound}, uint8_t(IntPred::Ult));
        b_.cond_br(c, body, exit);
      }
    }
    b_.set_block(exit);
  }

  void break_or_continue() {
    const Loop& l = loops_.back();
    ValueId c = cond();
    BlockId next = f_.add_block();
    b_.cond_br(c, rng_.chance(50) ? l.exit : l.latch, next);
    b_.set_block(next);
  }

  void early_return() {
    ValueId c = cond();
    BlockId r = f_.add_block(), next = f_.add_block();
    b_.cond_br(c, r, next);
    b_.set_block(r);
    size_t keep = pool_.size();
    if (rng_.chance(50)) set_var();
    b_.ret();
    pool_.resize(keep);  // values made in the return block do not reach `next`
    b_.set_block(next);
  }

  void switch_region(int n) {
    // The selector is uniform (the op's contract); cases are 2..4 blocks plus default.
    ValueId u = leaf_uniform_i32();
    ValueId sel = emit(Opcode::And, Type::I32, {u, add(b_.i32(3), true)});
    int ncases = rng_.range(2, 4);
    std::vector<BlockId> targets;
    for (int i = 0; i < ncases; ++i) targets.push_back(f_.add_block());
    BlockId j = f_.add_block();
    b_.emit(Opcode::Switch, Type::Void, {sel});
    f_.blocks[b_.block()].succs = targets;
    Scope s(*this, false);
    for (BlockId t : targets) {
      s.reset();
      b_.set_block(t);
      region(n / ncases);
      b_.br(j);
    }
    s.reset();
    b_.set_block(j);
  }

  // Two blocks that branch into each other (a loop with two entries), each
  // lane leaving after at most 8 steps.
  void irreducible_region(int n) {
    uint32_t cnt = control_var();
    ValueId x = pick_i32();
    ValueId start = emit(Opcode::And, Type::I32, {x, add(b_.i32(7), true)});
    b_.set_var(cnt, emit(Opcode::IAdd, Type::I32, {start, add(b_.i32(1), true)}));
    ValueId c0 = cond();
    BlockId a = f_.add_block(), b = f_.add_block(), exit = f_.add_block();
    b_.cond_br(c0, a, b);
    Scope s(*this, true);
    bool saved = no_cross_lane_;
    no_cross_lane_ = true;  // which lanes meet in a or b depends on the scheduling order
    auto side = [&](BlockId self, BlockId other) {
      s.reset();
      b_.set_block(self);
      for (int i = 0; i < n / 2; ++i) straight_op(false);
      ValueId v = add(b_.get_var(cnt), false);
      ValueId dec = emit(Opcode::ISub, Type::I32, {v, add(b_.i32(1), true)});
      b_.set_var(cnt, dec);
      ValueId live = emit(Opcode::ICmp, Type::I1, {dec, add(b_.i32(0), true)}, uint8_t(IntPred::Ne));
      ValueId c = rng_.chance(70) ? emit(Opcode::And, Type::I1, {live, cond()}) : live;
      b_.cond_br(c, other, exit);
    };
    side(a, b);
    side(b, a);
    no_cross_lane_ = saved;
    s.reset();
    b_.set_block(exit);
  }

  void straight_op(bool allow_cross_lane) {
    unsigned r = rng_.below(100);
    if (r < 62) pure_op();
    else if (r < 77) set_var();
    else if (r < 92 && opt_.memory) memory_op();
    else if (allow_cross_lane && opt_.cross_lane && !no_cross_lane_) cross_lane_op();
    else pure_op();
  }

  // Emits about n operations into the current block chain; leaves the current
  // block open (no terminator).
  void region(int n) {
    while (n > 0) {
      unsigned r = rng_.below(100);
      int sub = std::max(1, std::min(n - 1, rng_.range(2, 12)));
      if (r < 80 || n < 3 || !opt_.control_flow) {
        straight_op(true);
        n -= 1;
        continue;
      }
      n -= 1;
      if (depth_ >= opt_.max_depth) {
        straight_op(true);
        continue;
      }
      unsigned k = rng_.below(100);
      if (k < 22) { if_region(sub, false); n -= sub; }
      else if (k < 40) { if_region(sub, true); n -= sub; }
      else if (k < 58) { loop_region(sub); n -= sub; }
      else if (k < 64) { switch_region(sub); n -= sub; }
      else if (k < 69 && opt_.irreducible && !no_cross_lane_) { irreducible_region(std::min(sub, 6)); n -= std::min(sub, 6); }
      else if (k < 77 && depth_ > 0) early_return();
      else if (k < 85 && !loops_.empty() && depth_ > 0) break_or_continue();
      else if (k < 89 && depth_ > 0 && opt_.faults && !fault_used_) fault_op();
      else if (k < 93 && depth_ == 0 && opt_.barriers && barriers_ < 2) {
        ++barriers_;
        BlockId next = f_.add_block();
        b_.barrier(next);
        b_.set_block(next);
      } else straight_op(true);
    }
  }

  Rng rng_;
  IrGenOptions opt_;
  Function f_;
  Builder b_;
  std::vector<Val> pool_;
  std::vector<bool> reserved_;  // per var: a loop counter the random code must not write
  std::vector<Loop> loops_;
  int depth_ = 0;               // divergent nesting; 0 = top level (all running lanes converged)
  int barriers_ = 0;
  bool fault_used_ = false;
  bool no_cross_lane_ = false;  // inside an irreducible region
};

}  // namespace

Function generate_ir(uint64_t seed, const IrGenOptions& opt, std::string* error) {
  Generator g(seed, opt);
  Function f = g.run();
  std::string problem = verify(f);
  if (error) *error = problem.empty() ? std::string() : "generator produced invalid IR (seed " +
                                                            std::to_string(seed) + "): " + problem;
  return f;
}

}  // namespace gpurc::fuzz
