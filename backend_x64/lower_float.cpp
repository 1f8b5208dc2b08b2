// Native lowering of f32 ops. Host arithmetic is IEEE with exact subnormals;
// what differs from ir::eval_lane (NaN payloads, FtzIn/FtzOut, Sat, ZeroMul,
// rounding modes) is applied explicitly per lane. The transcendental
// functions are native for Transc::Ieee sqrt/rcp and for Transc::Pica
// rcp/rsqrt/exp2/log2 (the float model of ir/transc_pica.h, computed in
// packed doubles with the model's exact sequence of IEEE operations); other
// float types and variants go through the eval_lane helper.
#include <algorithm>
#include <array>

#include <cstring>
#include <unordered_map>
#include <vector>

#include "backend_x64/emitter.h"
#include "ir/transc_pica.h"

namespace gpurc::x64 {

using namespace ir;
using namespace Xbyak;

namespace {
constexpr uint32_t kCanonicalNan = 0x7FC00000u;
constexpr uint32_t kQuietBit = 0x00400000u;
constexpr uint32_t kOne = 0x3F800000u;
constexpr uint32_t kTwo31 = 0x4F000000u;  // 2^31 as f32

// x86 compare predicates (vcmpps imm) for each FloatPred.
constexpr uint8_t kCmpImm[] = {0x00, 0x0C, 0x11, 0x12, 0x1E, 0x1D, 0x07, 0x03, 0x08, 0x04, 0x19, 0x1A, 0x16, 0x15};
// vroundps / vrndscaleps immediates (precision exception suppressed).
uint8_t round_imm(Round m) {
  switch (m) {
    case Round::TowardZero: return 0x0B;
    case Round::Down: return 0x09;
    case Round::Up: return 0x0A;
    default: return 0x08;
  }
}
uint32_t mxcsr_rc(Round m) {
  switch (m) {
    case Round::TowardZero: return 3;
    case Round::Down: return 1;
    case Round::Up: return 2;
    default: return 0;
  }
}
}  // namespace

void Emitter::fnan_mask(int m, int x) {
  if (z_) vcmpps(Opmask(2 + m), V(x), V(x), 0x03);
  else vcmpps(V(4 + m), V(x), V(x), 0x03);
}

void Emitter::fblend(int d, int m, int src) {
  if (z_) vmovdqa32(V(d) | Opmask(2 + m), V(src));
  else vblendvps(V(d), V(d), V(src), V(4 + m));
}

void Emitter::fblend_const(int d, int m, uint32_t bits) {
  if (z_) vpbroadcastd(V(d) | Opmask(2 + m), const_mem(bits));
  else vblendvps(V(d), V(d), const_vec(bits), V(4 + m));
}

void Emitter::flush_subnormal(int x) {
  if (z_) {
    vptestnmd(k1, V(x), ptr_b[rip + const32_[0x7F800000u]]);
    vpandd(V(x) | k1, V(x), ptr_b[rip + const32_[0x80000000u]]);
  } else {
    vpand(V(0), V(x), const_vec(0x7F800000u));
    vpcmpeqd(V(0), V(0), const_vec(0));
    vpand(V(1), V(x), const_vec(0x80000000u));
    vblendvps(V(x), V(x), V(1), V(0));
  }
}

void Emitter::round_begin(Round m) {
  if (!z_) mxcsr_begin(m);
}

void Emitter::round_end(Round m) {
  if (!z_) mxcsr_end(m);
}

void Emitter::mxcsr_begin(Round m) {
  if (m == Round::NearestEven) return;
  stmxcsr(dword[rsp]);
  mov(eax, dword[rsp]);
  and_(eax, ~0x6000u);
  or_(eax, mxcsr_rc(m) << 13);
  mov(dword[rsp + 4], eax);
  ldmxcsr(dword[rsp + 4]);
}

void Emitter::mxcsr_end(Round m) {
  if (m == Round::NearestEven) return;
  ldmxcsr(dword[rsp]);
}

Xmm Emitter::rop(int r, Round m) const {
  if (!z_) return V(r);
  switch (m) {
    case Round::TowardZero: return V(r) | T_rz_sae;
    case Round::Down: return V(r) | T_rd_sae;
    case Round::Up: return V(r) | T_ru_sae;
    default: return V(r);
  }
}

size_t Emitter::float_test(uint32_t fl, int d) {
  // The jump goes to the fix when some lane needs float_fix (the fixes are
  // out of line, emit_cold_code): jnz (ZF clear) or jnc (CF clear).
  auto clean_jump = [&](bool zf_clean) { return jcc_forward(zf_clean ? 0x5 : 0x3); };
  // One test of the result skips the fixes when no lane needs them, so the
  // usual path adds no latency to the result's dependency chain: a NaN, or
  // when flushing a subnormal. AVX-512 classifies with vfpclassps (in DAZ
  // mode that reads a subnormal as a zero: then the zero lanes with nonzero
  // bits); AVX2 from the bits: an exponent field of 0 or 255 (exponent + 1
  // has no bit above its lowest) with a nonzero mantissa. (Zero results,
  // common, must not take the fixes.)
  if (z_ && daz_ && (fl & ff::FtzOut)) {
    // DAZ mode: vfpclassps calls a subnormal a zero of its sign, so NaN or
    // "zero" lanes whose bits are not a zero.
    vfpclassps(k2, V(d), 0x87);  // QNaN, +0, -0, SNaN
    vptestmd(k1 | k2, V(d), ptr_b[rip + const32_[0x7FFFFFFFu]]);
    kortestw(k1, k1);
    return clean_jump(true);
  } else if (z_) {
    vfpclassps(k1, V(d), uint8_t(0x81 | ((fl & ff::FtzOut) ? 0x20 : 0)));  // QNaN, SNaN, denormal
    kortestw(k1, k1);
    return clean_jump(true);
  } else if (daz_ && (fl & ff::FtzOut)) {
    // DAZ mode: vcmpps reads a subnormal as a zero, so "equal to zero or
    // unordered" flags the NaN, zero and subnormal lanes; the ones among them
    // whose bits without the sign are not zero need the fixes.
    vcmpps(V(0), V(d), const_vec(0), 0x08);       // EQ_UQ
    vpslld(V(1), V(d), 1);
    vptest(V(0), V(1));                           // ZF: no such lane
    return clean_jump(true);
  } else if (fl & ff::FtzOut) {
    vpaddd(V(0), V(d), const_vec(0x00800000u));
    vpand(V(0), V(0), const_vec(0x7F000000u));
    vpcmpeqd(V(0), V(0), const_vec(0));           // exponent 0 or 255
    vpand(V(1), V(d), const_vec(0x007FFFFFu));
    vpcmpeqd(V(1), V(1), const_vec(0));           // mantissa zero
    vptest(V(1), V(0));                           // CF: no lane with exponent 0 / 255 and a mantissa
    return clean_jump(false);
  } else {
    vcmpps(V(0), V(d), V(d), 0x03);
    vptest(V(0), V(0));
    return clean_jump(true);
  }
}

void Emitter::float_fix(uint32_t fl, int d, const int* nan_args, int n) {
  fnan_mask(kM0, d);
  switch (nan_rule(fl)) {
    case NanRule::AllOnes: fblend_const(d, kM0, 0x7FFFFFFFu); break;
    case NanRule::Propagate:
      bcast_const(0, kCanonicalNan);
      for (int i = n - 1; i >= 0; --i) {
        fnan_mask(kM1, nan_args[i]);
        if (z_) vpord(V(1), V(nan_args[i]), ptr_b[rip + const32_[kQuietBit]]);
        else vpor(V(1), V(nan_args[i]), const_vec(kQuietBit));
        fblend(0, kM1, 1);
      }
      fblend(d, kM0, 0);
      break;
    default: fblend_const(d, kM0, kCanonicalNan); break;
  }
  if (fl & ff::FtzOut) flush_subnormal(d);
}

// Labels of out-of-line code (addresses stay put in the list), and the code
// itself, emitted after the function's last block by emit_cold_code: the
// fixes of float results, which almost never run, so the usual path falls
// through its test with no taken branch and the hot code stays short.
Xbyak::Label& Emitter::cold_label() { return cold_labels_.emplace_back(); }

// Whether a fix's operands are moved into fixed registers at its site, so
// its stub does not depend on where they were: every fix that recomputes a
// product (ZeroMul, the fused product + sum) unless a NaN rule propagates an
// operand (that reads the operands' own registers, after the result is
// written). The product's operands go to scratch 2 and 3 (the fix's other
// scratch is 0, 1 and the masks: vectors 4, 5 on AVX2, k1..k4 on AVX-512)
// and the sum's other operand to the sum's own register, whose old value
// the fix recomputes anyway. (The operands are cache registers, never
// scratch, and the result's register is none of them.)
bool Emitter::cold_fix_moves_operands(const ColdFix& c) {
  if (!c.fused && !c.zero_mul) return false;
  return nan_rule(c.fflags) != NanRule::Propagate && (!c.fused || nan_rule(c.add_flags) != NanRule::Propagate);
}

// What a fix's code depends on, packed: equal keys emit equal code.
// float_fix reads only the NaN rule and FtzOut of the flags, and the
// operand registers only for the Propagate rule.
uint64_t Emitter::cold_fix_key(const ColdFix& c) const {
  auto fix_bits = [](uint32_t fl) { return uint64_t((fl & ff::FtzOut) ? 4 : 0) | uint64_t(nan_rule(fl)); };
  auto reg = [](int r) { return uint64_t(r + 1) & 63; };
  uint64_t k = fix_bits(c.fflags) | uint64_t(c.zero_mul) << 3 | reg(c.d) << 4;
  const bool moved = cold_fix_moves_operands(c);
  if (c.fused) {
    k |= uint64_t(1) << 10 | fix_bits(c.add_flags) << 29 | uint64_t(c.sub) << 32 | uint64_t(c.product_first) << 33;
    if (!moved) k |= reg(c.args[0]) << 11 | reg(c.args[1]) << 17 | reg(c.rc) << 23;
    return k;
  }
  if (moved) return k;
  const bool propagate = nan_rule(c.fflags) == NanRule::Propagate;
  if (propagate) k |= uint64_t(c.n & 3) << 34;
  for (int i = 0; i < 3; ++i)
    if (propagate || (c.zero_mul && i < 2)) k |= reg(c.args[i]) << (11 + 6 * i);
  return k;
}

// The fix's code up to its jump back; `moved`: the operands are where
// cold_fix_moves_operands puts them (the site's part, emit_cold_code).
void Emitter::emit_cold_fix_body(const ColdFix& c, bool moved) {
  const int d = c.d;
  if (c.fused) {  // lower_fused_mul_add: the product with its fixes into 2, then the sum's
    const int ra = moved ? 2 : c.args[0], rb = moved ? 3 : c.args[1], rc = moved ? d : c.rc;
    if (c.zero_mul) zero_mul_mask_raw(ra, rb);
    vmulps(V(2), V(ra), V(rb));
    if (c.zero_mul) {
      if (z_) vpxord(V(2) | k2, V(2), V(2));
      else vpandn(V(2), V(4), V(2));
    }
    const int margs[3] = {ra, rb, -1};
    float_fix(c.fflags, 2, margs, 2);
    const int x = c.product_first ? 2 : rc, y = c.product_first ? rc : 2;
    if (c.sub) vsubps(V(d), V(x), V(y));
    else vaddps(V(d), V(x), V(y));
    const int uargs[3] = {x, y, -1};
    float_fix(c.add_flags, d, uargs, 2);
    return;
  }
  const int args[3] = {moved ? 2 : c.args[0], moved ? 3 : c.args[1], c.args[2]};
  if (c.zero_mul) {
    zero_mul_mask_raw(args[0], args[1]);
    vmulps(V(d), V(args[0]), V(args[1]));
    if (z_) vpxord(V(d) | k2, V(d), V(d));
    else vpandn(V(d), V(4), V(d));
  }
  float_fix(c.fflags, d, args, c.n);
}

// Copies of fix code. A fix's code depends only on its shape (its key,
// cold_fix_key, and with its operands not moved, their registers), the tier
// and the MXCSR mode, and on where the constant pool puts the constants it
// reads. Each thread keeps the code of every fix shape it has emitted, with
// the place and constant of each rip-relative operand, and later fixes of
// the same shape (in this or a later function) copy the bytes and point
// those operands at this function's pool, asking the pool for the constants
// in the same order as the emission would (so the pool's layout, and every
// byte, is the same). When a shape is first met its code is emitted twice,
// the second copy right after the first (then dropped): the two may differ
// only in the logged operands' displacements, by the first copy's length,
// each operand must reach a pool constant, and the emission must have asked
// the pool once per operand; otherwise (an operand xbyak encoded, a branch
// out of the code) the shape is emitted every time.
// set_fix_code_copies(false) (jit.h) emits every fix.
namespace {
struct FixCode {
  struct Ref {
    uint32_t disp_at, end_at;  // the disp32's offset and its instruction's end, in bytes
    uint8_t kind;
    uint64_t bits;
  };
  bool usable = false;
  std::vector<uint8_t> bytes;
  std::vector<Ref> refs;
};
struct FixShape {
  uint64_t key, regs;
  bool operator==(const FixShape&) const = default;
};
struct FixShapeHash {
  size_t operator()(const FixShape& s) const { return size_((s.key * 0x9E3779B97F4A7C15ull) ^ (s.regs + (s.regs << 17))); }
  static size_t size_(uint64_t x) { return size_t(x ^ (x >> 29)); }
};
struct FixCodes {
  std::unordered_map<FixShape, FixCode, FixShapeHash> shapes;
  uint64_t replays = 0;
};
thread_local FixCodes tl_fix_codes;
bool fix_code_copies_on = true;
}  // namespace

void set_fix_code_copies(bool on) {
  fix_code_copies_on = on;
  tl_fix_codes = FixCodes{};
}
uint64_t fix_code_replays() { return tl_fix_codes.replays; }

void Emitter::emit_cold_fix_body_kept(const ColdFix& c, bool moved) {
  if (!fix_code_copies_on) {
    emit_cold_fix_body(c, moved);
    return;
  }
  // (cold_fix_key uses bits 0-35; it leaves out the registers of a fix
  // whose operands a shared stub's sites move, which this one may not have)
  FixShape shape{cold_fix_key(c) | uint64_t(moved) << 40 | uint64_t(z_) << 41 | uint64_t(daz_) << 42, 0};
  if (!moved)
    for (int r : {int(c.args[0]), int(c.args[1]), int(c.args[2]), int(c.rc), int(c.n)})
      shape.regs = shape.regs << 8 | uint64_t(uint8_t(r + 1));
  auto [it, fresh] = tl_fix_codes.shapes.try_emplace(shape);
  FixCode& code = it->second;
  if (!fresh) {
    if (!code.usable || maxSize_ - size_ < code.bytes.size() + 16) {
      emit_cold_fix_body(c, moved);
      return;
    }
    const PoolKind* kinds[4] = {&const32_, &constvec_, &const64_, &constvec64_};
    uint8_t* start = top_ + size_;
    std::memcpy(start, code.bytes.data(), code.bytes.size());
    for (const FixCode::Ref& r : code.refs) {
      const uint8_t* target = static_cast<const uint8_t*>((*kinds[r.kind])[r.bits]);
      const int64_t d = int64_t(target - (start + r.end_at));
      if (d != int64_t(int32_t(d))) throw CompileError("x64 jit: a constant out of rip-relative reach");
      const int32_t d32 = int32_t(d);
      std::memcpy(start + r.disp_at, &d32, 4);
    }
    size_ += code.bytes.size();
    ++tl_fix_codes.replays;
    return;
  }
  std::vector<RipRef> log, again;
  const size_t at = size_, gets = pool_.gets();
  try {
    set_rip_log(&log);
    emit_cold_fix_body(c, moved);
    const size_t mid = size_, pool_gets = pool_.gets() - gets;
    set_rip_log(&again);
    emit_cold_fix_body(c, moved);
    set_rip_log(nullptr);
    const size_t len = mid - at;
    const uint8_t* a = top_ + at;
    const uint8_t* b = top_ + mid;
    bool ok = size_ - mid == len && pool_gets == log.size() && again.size() == log.size();
    std::vector<uint8_t> in_disp(len, 0);
    for (size_t i = 0; ok && i < log.size(); ++i) {
      const RipRef& r = log[i];
      const size_t disp_at = size_t(r.disp - a);
      ok = r.absolute && again[i].absolute && again[i].target == r.target && disp_at + 4 <= len &&
           size_t(again[i].disp - b) == disp_at;
      if (!ok) break;
      int32_t d1, d2;
      std::memcpy(&d1, a + disp_at, 4);
      std::memcpy(&d2, b + disp_at, 4);
      ok = int64_t(d1) - int64_t(d2) == int64_t(len);
      FixCode::Ref ref{uint32_t(disp_at), 0, 0, 0};
      const uint64_t end = r.target - uint64_t(int64_t(d1));  // the instruction's end
      ok = ok && end > uint64_t(uintptr_t(a + disp_at)) && end <= uint64_t(uintptr_t(a + len)) &&
           pool_.find(reinterpret_cast<const uint8_t*>(uintptr_t(r.target)), ref.kind, ref.bits);
      ref.end_at = uint32_t(end - uint64_t(uintptr_t(a)));
      for (int k = 0; k < 4; ++k) in_disp[disp_at + size_t(k)] = 1;
      code.refs.push_back(ref);
    }
    for (size_t i = 0; ok && i < len; ++i) ok = a[i] == b[i] || in_disp[i];
    code.usable = ok;
    if (ok) code.bytes.assign(a, a + len);
    else code.refs.clear();
    size_ = mid;  // drop the second copy
  } catch (...) {
    set_rip_log(nullptr);
    tl_fix_codes.shapes.erase(shape);
    throw;
  }
}

// The fixes run only when a lane needs one, so their speed hardly matters,
// but their volume does: a heavy PICA200 shader has ~140, ~10-35
// instructions each, and emitting them was a large part of a compile. Fixes
// with equal keys (cold_fix_key) share one stub: the site moves the
// operands into place (cold_fix_moves_operands) and is `call stub; jmp
// back`; the stub ends in `ret`, and the first site of a key emits it right
// after its own jmp back. A fix whose key occurs once is emitted at its
// site, as it always was. (The stub runs with rsp 8 lower than the code
// around it; it touches no memory through rsp, and the flags it leaves are
// dead: the code after a fix never reads the flags of the test before it.)
void Emitter::emit_cold_code() {
  // Open addressing over the keys: key + 1 (0: free), sites, stub offset.
  struct Slot {
    uint64_t key1;
    uint32_t count;
    size_t stub;
  };
  constexpr size_t kNoStub = ~size_t(0);
  size_t cap = 16;
  while (cap < cold_fixes_.size() * 2) cap <<= 1;
  std::vector<Slot> table(cold_fixes_.empty() ? 0 : cap, Slot{0, 0, kNoStub});
  std::vector<uint32_t> slot_of(cold_fixes_.size());
  for (size_t i = 0; i < cold_fixes_.size(); ++i) {
    const uint64_t k1 = cold_fix_key(cold_fixes_[i]) + 1;
    size_t h = size_t((k1 * 0x9E3779B97F4A7C15ull) >> 40) & (cap - 1);
    while (table[h].key1 != 0 && table[h].key1 != k1) h = (h + 1) & (cap - 1);
    table[h].key1 = k1;
    ++table[h].count;
    slot_of[i] = uint32_t(h);
  }
  for (int32_t i : cold_order_) {
    if (i >= 0) {
      cold_[size_t(i)]();
      continue;
    }
    const ColdFix& c = cold_fixes_[size_t(~i)];
    Slot& s = table[slot_of[size_t(~i)]];
    if (!c.chained) bind_forward(c.jump_at);  // (a chained fix follows the one before it)
    if (c.mem_c >= 0) vload(c.d, cold_mem_[size_t(c.mem_c)]);  // (rc == d)
    const bool moved = s.count >= 2 && cold_fix_moves_operands(c);
    if (moved) {
      // (AVX2 fused: a product operand only in its slot, args[] == 3, is loaded from it)
      if (c.args[0] == 3) vload(2, cold_mem_[size_t(c.mem)]);
      else vmov(2, c.args[0]);
      if (c.args[1] == 3) vload(3, cold_mem_[size_t(c.mem)]);
      else vmov(3, c.args[1]);
      if (c.fused) vmov(c.d, c.rc);
    } else if (c.mem >= 0) {
      vload(3, cold_mem_[size_t(c.mem)]);
    }
    // then_next: the next fix's site follows instead of the jump back.
    if (s.count < 2) {
      emit_cold_fix_body_kept(c, false);
      if (!c.then_next) jmp_back(c.back);
      continue;
    }
    if (s.stub != kNoStub) {  // E8 rel32: call the stub
      op_rel32(0xE8, uint32_t(int64_t(s.stub) - int64_t(getSize() + 5)));
      if (!c.then_next) jmp_back(c.back);
      continue;
    }
    op_rel32(0xE8, 5);  // the stub follows the jmp back (5 bytes)
    size_t over = 0;
    if (c.then_next) {  // a jmp over the stub to the next site
      op_rel32(0xE9, 0);
      over = getSize() - 4;
    } else {
      jmp_back(c.back);
    }
    s.stub = getSize();
    emit_cold_fix_body_kept(c, moved);
    ret();
    if (c.then_next) bind_forward(over);
  }
  cold_order_.clear();
  cold_.clear();
  cold_fixes_.clear();
  cold_mem_.clear();
}

// NanRule::Any without FtzOut: the host's NaN is the rule's and no lane is
// flushed, so the result needs no test and no fix (Tesla's MAD fast path:
// three tests per strip).
static bool fix_free(uint32_t fl) { return nan_rule(fl) == NanRule::Any && !(fl & ff::FtzOut); }

void Emitter::float_finish(ValueId v, int d, const int* nan_args, int n) {
  uint32_t fl = f_.insts[v].fflags;
  if (!fix_free(fl)) {
    ColdFix c{};
    c.jump_at = float_test(fl, d);
    c.back = getSize();
    c.fflags = fl;
    c.d = int8_t(d);
    c.n = int8_t(n);
    for (int i = 0; i < 3; ++i) c.args[i] = int8_t(i < n ? nan_args[i] : -1);
    push_cold_fix(c);
  }
  if (fl & ff::Sat) {
    vmaxps(V(d), V(d), const_vec(0));     // NaN and -0 -> +0
    vminps(V(d), V(d), const_vec(kOne));
  }
}

// ---- DAZ mode
// With MXCSR.DAZ the host reads subnormal operands of arithmetic as zeros of
// the same sign: exactly FtzIn (bit for bit, NaN payloads included, checked
// against flush-then-operate on the host). FTZ is not used: the host decides
// tininess before rounding, FtzOut after (a product that rounds up to the
// smallest normal stays), so outputs keep the explicit check of float_test.
// A function runs in DAZ mode when every op that reads floats as numbers
// either has FtzIn or is unaffected: fcmp without FtzIn switches to IEEE mode
// around its compare when an operand is subnormal, ftoi rounding toward zero
// or to nearest turns a subnormal into 0 either way, the Pica transcendentals
// flush their operand themselves (log2 reads bits), itof reads integers.
// Helper calls run in IEEE mode (call_abs).
bool Emitter::daz_eligible(const ir::Function& f) {
  bool any = false;
  for (const ir::Inst& in : f.insts) {
    if (in.block == kNoBlock) continue;
    const bool ftz = in.fflags & ff::FtzIn;
    switch (in.op) {
      case Opcode::FMad: return false;  // DAZ would flush its rounded product before the add
      case Opcode::FAdd: case Opcode::FSub: case Opcode::FMul: case Opcode::FFma:
      case Opcode::FMin: case Opcode::FMax: case Opcode::FFloor: case Opcode::FCeil: case Opcode::FTrunc:
      case Opcode::FRint:
        if (in.type != ir::Type::F32 || !ftz || ((in.fflags & ff::Sat) && !(in.fflags & ff::FtzOut))) return false;
        any = true;
        break;
      case Opcode::FRcp: case Opcode::FRsqrt: case Opcode::FExp2: case Opcode::FLog2:
        if (in.type != ir::Type::F32 || Transc(in.attr) != Transc::Pica) return false;
        break;
      case Opcode::FCmp:
        if (f.insts[in.args[0]].type != ir::Type::F32) return false;
        break;
      case Opcode::FToI: {
        const Round m = round_mode(in.fflags);
        if (f.insts[in.args[0]].type != ir::Type::F32 || (!ftz && m != Round::TowardZero && m != Round::NearestEven))
          return false;
        break;
      }
      case Opcode::FSqrt: case Opcode::FSin: case Opcode::FCos: case Opcode::FSinStep: case Opcode::FToF:
        return false;
      default: break;
    }
  }
  return any;
}

void Emitter::zero_mul_mask_raw(int a, int b) {
  if (z_) {
    vfpclassps(k2, V(a), 0x26);  // +-0 or subnormal (in DAZ mode vfpclassps calls a subnormal 0)
    vfpclassps(k3, V(b), 0x18);  // +-inf
    kandw(k2, k2, k3);
    vfpclassps(k3, V(a), 0x18);
    vfpclassps(k4, V(b), 0x26);
    kandw(k3, k3, k4);
    korw(k2, k2, k3);
  } else {
    vpand(V(0), V(a), const_vec(0x7FFFFFFFu));
    vpand(V(1), V(b), const_vec(0x7FFFFFFFu));
    vpcmpeqd(V(4), V(0), const_vec(0x7F800000u));  // a inf
    vpand(V(5), V(1), const_vec(0x7F800000u));
    vpcmpeqd(V(5), V(5), const_vec(0));            // b zero or subnormal
    vpand(V(4), V(4), V(5));
    vpand(V(5), V(0), const_vec(0x7F800000u));
    vpcmpeqd(V(5), V(5), const_vec(0));            // a zero or subnormal
    vpcmpeqd(V(0), V(1), const_vec(0x7F800000u));  // b inf
    vpand(V(5), V(5), V(0));
    vpor(V(4), V(4), V(5));
  }
}

// Whether every reader of v is an op lower_daz_arith lowers (fadd / fsub /
// fmul, f32, FtzIn, rounding to nearest: the host op reads a subnormal
// operand as a zero of its sign in DAZ mode, which is what FtzOut's flush of
// v would have made). Such a v needs no FtzOut fix of its own. Only in DAZ
// mode; any other reader (select, phi, var store, compare, ...) sees the bits.
bool Emitter::read_by_daz_arith_only(ValueId v) {
  if (!daz_) return false;
  if (daz_arith_only_.empty()) {
    // Readers that read a subnormal operand as the zero the flush would
    // make: DAZ arithmetic; phis whose own readers are such (a greatest
    // fixed point: a loop's accumulator phi read only by the next
    // iteration's add); and store_var of a value whose FtzOut is dropped
    // here, which then flushes at the store (store_needs_flush: once per
    // strip after a loop instead of a test per iteration).
    const size_t n = f_.insts.size();
    auto daz_reader = [&](const ir::Inst& in) {
      return (in.op == Opcode::FAdd || in.op == Opcode::FSub || in.op == Opcode::FMul) && in.type == ir::Type::F32 &&
             (in.fflags & ff::FtzIn) && round_mode(in.fflags) == Round::NearestEven;
    };
    auto flush_at_store = [&](const ir::Inst& in) {  // a producer whose flush a store can do
      return daz_reader(in) && (in.fflags & ff::FtzOut) && !(in.fflags & ff::Sat);
    };
    std::vector<uint8_t> phi_ok(n, 0);
    bool any_phi = false;
    for (ValueId p = 0; p < n; ++p) {
      phi_ok[p] = f_.insts[p].op == Opcode::Phi && f_.insts[p].block != kNoBlock && f_.insts[p].type == ir::Type::F32;
      any_phi = any_phi || phi_ok[p];
    }
    for (bool changed = any_phi; changed;) {  // (nothing to clear without an f32 phi)
      changed = false;
      for (const ir::Inst& in : f_.insts) {
        if (in.block == kNoBlock || daz_reader(in) || (in.op == Opcode::Phi && phi_ok[&in - f_.insts.data()])) continue;
        for (ValueId a : in.args)
          if (a < n && phi_ok[a]) {
            phi_ok[a] = 0;
            changed = true;
          }
      }
    }
    daz_arith_only_.assign(n, 1);
    for (ValueId v = 0; v < n; ++v) {
      const ir::Inst& in = f_.insts[v];
      if (in.block == kNoBlock || daz_reader(in) || (in.op == Opcode::Phi && phi_ok[v])) continue;
      for (ValueId a : in.args) {
        if (a >= n) continue;
        if (in.op == Opcode::StoreVar && flush_at_store(f_.insts[a]) && daz_arith_only_[a] != 0) daz_arith_only_[a] = 2;
        else daz_arith_only_[a] = 0;
      }
    }
  }
  return v < daz_arith_only_.size() && uses_[v] > 0 && daz_arith_only_[v] != 0;
}

bool Emitter::store_needs_flush(ValueId v) {
  return read_by_daz_arith_only(v) && daz_arith_only_[v] == 2;
}

// The fixes of a result in line, with no test and no branch: in DAZ mode,
// rounding to nearest, with FtzOut and a NaN rule that writes a constant
// (Canonical, AllOnes). What float_test catches there is a NaN lane (quiet,
// any payload and sign: the host op made it) or a subnormal lane (MXCSR has
// DAZ but not FTZ, so the host writes subnormal results; FtzOut flushes the
// rounded result's bits, as flush_subnormal does, so there is no question
// of tininess before or after rounding). The flush is vmaxps x, x, x: DAZ
// reads a subnormal operand as the zero of its sign, the max of two equal
// zeros is the second, and every other x is returned as it is (a NaN as
// the second operand). Then a compare mask puts the rule's NaN in the NaN
// lanes. Three instructions, one memory operand, where the test was three
// (one memory operand) and a branch; a flush by an add of -0 (as at stores,
// flush_at_store) reads a second constant per result and was 5% slower on
// G13 memory. But the form adds its latency (~7 cycles) to the result,
// where the test's branch is predicted and adds none: Tesla hash, a chain
// of dependent ops, ran 20% slower with every such result fixed in line.
// So only results that stores alone read (read_by_stores_only: G13
// memory's sum) take it. (set_daz_fix_inline(false), jit.h, turns it off.)
namespace {
bool fix_inline_on = true;
}  // namespace
void set_daz_fix_inline(bool on) { fix_inline_on = on; }

bool Emitter::daz_fix_inline(uint32_t fl, int d) {
  const NanRule rule = nan_rule(fl);
  if (!fix_inline_on || !daz_ || !(fl & ff::FtzOut) || round_mode(fl) != Round::NearestEven ||
      (rule != NanRule::Canonical && rule != NanRule::AllOnes))
    return false;
  const uint32_t nan_bits = rule == NanRule::AllOnes ? 0x7FFFFFFFu : kCanonicalNan;
  if (z_) {
    vmaxps(V(d), V(d), V(d));
    vcmpps(k1, V(d), V(d), 0x03);  // unordered: the NaN lanes
    vpbroadcastd(V(d) | k1, const_mem(nan_bits));
  } else {
    vmaxps(V(d), V(d), V(d));
    vcmpps(V(0), V(d), V(d), 0x03);
    vblendvps(V(d), V(d), const_vec(nan_bits), V(0));
  }
  return true;
}

bool Emitter::read_by_stores_only(ValueId v) {
  const size_t n = f_.insts.size();
  if (stored_only_.size() != n) {
    // (a bitcast passes its operand on: G13 stores an f32 sum as i32)
    stored_only_.assign(n, 1);
    for (const ir::Inst& in : f_.insts) {
      if (in.block == kNoBlock || in.op == Opcode::Store || in.op == Opcode::StoreVar || in.op == Opcode::Bitcast) continue;
      for (ValueId a : in.args)
        if (a < n) stored_only_[a] = 0;
    }
    for (bool changed = true; changed;) {
      changed = false;
      for (ValueId b = 0; b < n; ++b) {
        const ir::Inst& in = f_.insts[b];
        if (in.block == kNoBlock || in.op != Opcode::Bitcast || stored_only_[b] != 0) continue;
        for (ValueId a : in.args)
          if (a < n && stored_only_[a] != 0) {
            stored_only_[a] = 0;
            changed = true;
          }
      }
    }
  }
  return v < n && uses_[v] > 0 && stored_only_[v] != 0;
}

// fadd / fsub / fmul with FtzIn, rounding to nearest, in DAZ mode: the
// host op on the raw operands, then one test of the result. A lane of 0 * inf
// (ZeroMul) is a NaN there, so it takes the out-of-line fix with the NaN and
// FtzOut lanes: recompute the product with those lanes zeroed, then the NaN
// rule and the flush. (An operand's NaN is still a NaN after the zeroing
// only reaches lanes whose operands are both non-NaN.)
bool Emitter::lower_daz_arith(ValueId v, const int* r, int d) {
  const Inst& in = f_.insts[v];
  const uint32_t fl = in.fflags;
  const bool zero_mul = (fl & ff::ZeroMul) && in.op == Opcode::FMul;
  // A subnormal result that only DAZ arithmetic reads is read as the zero the
  // flush would make (same sign): then only NaN lanes need the fixes.
  const uint32_t test_fl = (fl & ff::FtzOut) && !(fl & ff::Sat) && read_by_daz_arith_only(v) ? fl & ~ff::FtzOut : fl;
  switch (in.op) {
    case Opcode::FAdd: vaddps(V(d), V(r[0]), V(r[1])); break;
    case Opcode::FSub: vsubps(V(d), V(r[0]), V(r[1])); break;
    case Opcode::FMul: vmulps(V(d), V(r[0]), V(r[1])); break;
    default: return false;
  }
  if (!zero_mul && read_by_stores_only(v) && daz_fix_inline(test_fl, d)) {
    // (fixed in line: no test)
  } else if (!fix_free(test_fl) || zero_mul) {
    ColdFix c{};
    c.jump_at = float_test(test_fl, d);
    c.back = getSize();
    c.fflags = test_fl;
    c.d = int8_t(d);
    c.n = int8_t(in.args.size());
    c.zero_mul = zero_mul;
    for (int i = 0; i < 3; ++i) c.args[i] = int8_t(r[i]);
    push_cold_fix(c);
  }
  if (fl & ff::Sat) {
    vmaxps(V(d), V(d), const_vec(0));
    vminps(V(d), V(d), const_vec(kOne));
  }
  return true;
}

// A product and the one add that reads it, in DAZ mode (a PICA200 MAD: fmul
// [ftz_in, ftz_out, zero_mul] read only by fadd [ftz_in, ftz_out]): the
// product's NaN test is left out. A NaN product lane (an operand's NaN, or
// 0 * inf, which the host makes a NaN) makes the sum's lane a NaN, so the
// sum's one test catches it, and its out-of-line fix recomputes the product
// with the product's own fixes (exactly the unfused ones: they change only
// NaN lanes) before the add and the add's fixes. Both are emitted at the
// product's place: the add's other operand is defined before it, and the
// add itself is skipped when its turn comes (fused_pending_).
ValueId Emitter::fused_add_of(ValueId v) {
  if (!daz_) return kNoValue;
  if (fused_add_.empty()) {
    const size_t n = f_.insts.size();
    fused_add_.assign(n, kNoValue);
    fused_pending_.assign(n, 0);
    auto daz_op = [&](const Inst& in) {
      return in.type == ir::Type::F32 && (in.fflags & ff::FtzIn) && !(in.fflags & ff::Sat) &&
             round_mode(in.fflags) == Round::NearestEven && in.args.size() == 2;
    };
    std::vector<ValueId> products;  // the fused products (each is picked by its one reader, at most once)
    for (ValueId u = 0; u < n; ++u) {
      const Inst& ui = f_.insts[u];
      if (ui.block == kNoBlock || (ui.op != Opcode::FAdd && ui.op != Opcode::FSub) || !daz_op(ui)) continue;
      if (ui.args[0] == ui.args[1] || deferred_[u]) continue;
      const int seg = plan_.segment_of[u];
      if (seg < 0 || !plan_.segments[size_t(seg)].strip) continue;
      // The later product operand (the other must be defined before it).
      ValueId pick = kNoValue;
      for (int i = 0; i < 2; ++i) {
        const ValueId m = ui.args[size_t(i)], c = ui.args[size_t(1 - i)];
        if (m >= n || c >= n) continue;
        const Inst& mi = f_.insts[m];
        if (mi.op != Opcode::FMul || !daz_op(mi) || uses_[m] != 1 || deferred_[m]) continue;
        if (plan_.segment_of[m] != seg || plan_.position[m] >= plan_.position[u]) continue;
        if (wide(mi.args[0]) || wide(mi.args[1]) || wide(c)) continue;
        if (plan_.segment_of[c] == seg && plan_.position[c] >= plan_.position[m]) continue;
        if (pick == kNoValue || plan_.position[m] > plan_.position[pick]) pick = m;
      }
      if (pick != kNoValue) {
        fused_add_[pick] = u;
        products.push_back(pick);
      }
    }
    // Pairs (lower_fused_pair): in each strip segment, a fused product and
    // the next one whose sum is also tested for NaN only and whose operands
    // (both of the product, the sum's other one) are defined before the
    // first product, so both can be emitted there.
    fused_partner_.assign(n, kNoValue);
    auto nan_only = [&](ValueId u) {
      const uint32_t fl = f_.insts[u].fflags;
      return !(fl & ff::FtzOut) || read_by_daz_arith_only(u);
    };
    find_daz_chains();
    std::erase_if(products, [&](ValueId m) { return daz_chain_member_[m] != 0; });
    // (segment, position) orders the products totally: the order they were found in does not matter.
    std::sort(products.begin(), products.end(), [&](ValueId a, ValueId b) {
      const int sa = plan_.segment_of[a], sb = plan_.segment_of[b];
      return sa != sb ? sa < sb : plan_.position[a] < plan_.position[b];
    });
    for (size_t i = 0; i + 1 < products.size(); ++i) {
      const ValueId m = products[i], m2 = products[i + 1];
      const int seg = plan_.segment_of[m];
      if (plan_.segment_of[m2] != seg || !nan_only(fused_add_[m]) || !nan_only(fused_add_[m2])) continue;
      const ValueId u2 = fused_add_[m2];
      bool ready = true;
      for (ValueId x : {f_.insts[m2].args[0], f_.insts[m2].args[1], f_.insts[u2].args[0], f_.insts[u2].args[1]})
        if (x != m2 && plan_.segment_of[x] == seg && plan_.position[x] >= plan_.position[m]) ready = false;
      if (!ready) continue;
      fused_partner_[m] = m2;
      ++i;  // m2 is taken
    }
  }
  return v < fused_add_.size() ? fused_add_[v] : kNoValue;
}

struct Emitter::FusedOperands {
  ValueId v, u, c, in_mem;
  int ra, rb, rc, du;  // rc -1: the sum's other operand is `cmem` (AVX2)
  MemRef mem, cmem;  // (strip_ref)
  int pi;  // the product's operand index in the add
  bool sub, zero_mul;
  uint32_t fl_v, fl_u;  // the product's fixes, the sum's test and fixes
};

// The registers of a fused product and sum (the operands locked, the sum's
// register allocated) and their flags.
Emitter::FusedOperands Emitter::fused_operands(ValueId v, ValueId u) {
  const Inst& mi = f_.insts[v];
  const Inst& ai = f_.insts[u];
  const int pi = ai.args[0] == v ? 0 : 1;
  const ValueId c = ai.args[size_t(1 - pi)];
  // AVX2: a product operand that is only in its slot (the loops spill) is read
  // as the memory operand of the multiply, which saves a register and a
  // load; the out-of-line fix loads it into scratch 3 (the fixes use 0, 1,
  // the masks and 2, the product).
  ValueId in_mem = kNoValue;
  for (ValueId x : {mi.args[1], mi.args[0]})
    if (!z_ && in_mem == kNoValue && x != c && mi.args[0] != mi.args[1] && vals_[x].reg < 0 && vals_[x].in_frame)
      in_mem = x;
  const int ra = mi.args[0] == in_mem ? 3 : use(mi.args[0]), rb = mi.args[1] == in_mem ? 3 : use(mi.args[1]);
  const uint32_t fl_u = (ai.fflags & ff::FtzOut) && read_by_daz_arith_only(u) ? ai.fflags & ~ff::FtzOut : ai.fflags;
  // AVX2: the sum's other operand only in its slot (a loop accumulator whose
  // phi has no home register) is the add's memory operand, unless it must be
  // the first operand of an fsub (the add's order does not matter without a
  // NaN: those lanes go to the fix, which loads it into the sum's register;
  // so not with a NaN rule that reads the operands' registers).
  const bool c_in_mem = !z_ && vals_[c].reg < 0 && vals_[c].in_frame && c != mi.args[0] && c != mi.args[1] &&
                        !(ai.op == Opcode::FSub && pi == 1) && nan_rule(fl_u) != NanRule::Propagate &&
                        nan_rule(mi.fflags) != NanRule::Propagate;
  const int rc = c_in_mem ? -1 : use(c);
  return FusedOperands{v, u, c, in_mem, ra, rb, rc, -1, in_mem == kNoValue ? MemRef{} : strip_ref(in_mem),
                       c_in_mem ? strip_ref(c) : MemRef{}, pi, ai.op == Opcode::FSub, bool(mi.fflags & ff::ZeroMul),
                       mi.fflags & ~ff::FtzOut,  // read only by the add (DAZ): NaN lanes only
                       fl_u};
}

// The product into scratch 2 and the sum into o.du (the hot path).
void Emitter::fused_emit(const FusedOperands& o) {
  if (o.in_mem == kNoValue) vmulps(V(2), V(o.ra), V(o.rb));
  else vmulps(V(2), V(o.ra == 3 ? o.rb : o.ra), o.mem);  // (order does not matter without a NaN: those go to the fix)
  if (o.rc < 0) {  // the other operand in memory: the product first (an fadd's order does not matter, above)
    if (o.sub) vsubps(V(o.du), V(2), o.cmem);
    else vaddps(V(o.du), V(2), o.cmem);
    return;
  }
  const int x = o.pi == 0 ? 2 : o.rc, y = o.pi == 0 ? o.rc : 2;  // the add's operand order
  if (o.sub) vsubps(V(o.du), V(x), V(y));
  else vaddps(V(o.du), V(x), V(y));
}

// The out-of-line fix of a fused product and sum (jump_at and back unset).
Emitter::ColdFix Emitter::fused_fix(const FusedOperands& o) {
  ColdFix fix{};
  fix.fused = true;
  fix.fflags = o.fl_v;
  fix.add_flags = o.fl_u;
  fix.zero_mul = o.zero_mul;
  fix.d = int8_t(o.du);
  fix.args[0] = int8_t(o.ra);
  fix.args[1] = int8_t(o.rb);
  fix.args[2] = -1;
  fix.n = 2;
  fix.rc = int8_t(o.rc);
  if (o.rc < 0) {  // loaded from its slot into the sum's register at the site
    fix.rc = int8_t(o.du);
    fix.mem_c = int32_t(cold_mem_.size());
    cold_mem_.push_back(o.cmem);
  }
  fix.sub = o.sub;
  fix.product_first = o.pi == 0;
  if (o.in_mem != kNoValue) {
    fix.mem = int32_t(cold_mem_.size());
    cold_mem_.push_back(o.mem);
  }
  return fix;
}

bool Emitter::lower_fused_mul_add(ValueId v, ValueId u) {
  auto deferred = [&](ValueId x) { return x < nan_deferred_.size() && nan_deferred_[x]; };
  if (ValueId v2 = v < fused_partner_.size() ? fused_partner_[v] : kNoValue; v2 != kNoValue)
    if (!deferred(u) && !deferred(fused_add_[v2]) && lower_fused_pair(v, u, v2, fused_add_[v2])) return true;
  FusedOperands o = fused_operands(v, u);
  if (deferred(u)) {  // a loop accumulator tested after the loop (loops.cpp, loop_defer_nan_tests)
    // Into its phi's home register when the phi, the add's other operand,
    // is there and read by nothing after it (no fix reads it back): the
    // early back-edge move (loops.cpp) then has nothing to move.
    const int home = int(nan_deferred_[u]) - 2;
    if (home >= 0 && o.rc == home && regs_[home].v == o.c) {
      vals_[o.c].reg = -1;
      regs_[home].v = u;
      vals_[u].reg = int8_t(home);
      vals_[u].in_frame = false;
      o.du = home;
    } else {
      o.du = def(u);
    }
    fused_emit(o);
    fused_pending_[u] = 1;
    return true;
  }
  o.du = def(u);
  fused_emit(o);
  ColdFix fix = fused_fix(o);
  fix.jump_at = float_test(o.fl_u, o.du);
  fix.back = getSize();
  push_cold_fix(fix);
  fused_pending_[u] = 1;
  return true;
}

// Two fused products and sums whose sums are tested for NaN only (fused_add_of
// pairs them: the second's operands are all defined before the first
// product): both at the first product's place, then one test of both sums
// (an unordered compare of the two: a lane where either is a NaN). When it
// finds one, both out-of-line fixes run, one after the other: each
// recomputes its product and sum from the operands, which are still in their
// registers (all six were locked together, and the sums' registers are
// distinct from them), so a fix of a sum without a NaN lane gives the same
// sum again. Each sum's move into a phi's home (loops.cpp) comes at its own
// turn, after the test.
bool Emitter::lower_fused_pair(ValueId v, ValueId u, ValueId v2, ValueId u2) {
  // Registers: every operand not in a register and both sums need a free one
  // (no spill for the pairing's sake; the single form needs fewer).
  {
    int needed = 2;
    ValueId seen[8];  // (at most the eight operands)
    size_t n_seen = 0;
    for (ValueId x : {f_.insts[v].args[0], f_.insts[v].args[1], f_.insts[u].args[0], f_.insts[u].args[1],
                      f_.insts[v2].args[0], f_.insts[v2].args[1], f_.insts[u2].args[0], f_.insts[u2].args[1]}) {
      if (x == v || x == v2 || std::find(seen, seen + n_seen, x) != seen + n_seen) continue;
      seen[n_seen++] = x;
      needed += vals_[x].reg < 0;
    }
    int free_regs = 0;
    for (int r = cache_lo_; r < cache_hi_; ++r) free_regs += regs_[r].v == kNoValue && !regs_[r].pinned && !regs_[r].locked;
    if (free_regs < needed) return false;
  }
  FusedOperands a = fused_operands(v, u);
  FusedOperands b = fused_operands(v2, u2);
  a.du = def(u);
  b.du = def(u2);
  fused_emit(a);
  fused_emit(b);
  if (z_) {
    vcmpps(k1, V(a.du), V(b.du), 0x03);  // UNORD_Q
    kortestw(k1, k1);
  } else {
    vcmpps(V(0), V(a.du), V(b.du), 0x03);
    vptest(V(0), V(0));
  }
  ColdFix fa = fused_fix(a), fb = fused_fix(b);
  fa.jump_at = jcc_forward(0x5);  // jnz
  fa.back = getSize();
  fa.then_next = true;
  fb.jump_at = 0;
  fb.back = getSize();
  fb.chained = true;
  push_cold_fix(fa);
  push_cold_fix(fb);
  fused_pending_[u] = 1;
  fused_pending_[v2] = 1;
  fused_pending_[u2] = 1;
  return true;
}

// ---- chains of DAZ sums (a PICA200 DP3 / DP4 / DPH)
//
// s1 = p0 + p1, s2 = s1 + p2, s3 = s2 + p3 (p* products of two values, or
// values from outside the chain), each product and partial sum read only by
// the next add, all DAZ-mode fadd / fsub / fmul (FtzIn, to nearest, no Sat,
// a NaN rule that does not propagate payloads), in one strip segment, with
// every value from outside the chain defined before its first op, and a
// product in every add (a value only beside the first add's product). Tested
// op by op, a DP4 is 4 products and 3 sums with a NaN test each (the fused
// product + sum saves one). But a NaN lane anywhere in the chain is a NaN
// lane of the last sum (NaN operands give NaN results), and where no lane
// is a NaN every host result is the exact one: the host differs from the
// rules only at a NaN (0 * inf, which ZeroMul makes 0, or a payload the rule
// replaces) and at a subnormal, which the next add reads as the zero the
// flush would make (DAZ). So the chain is emitted whole at its first op
// into the last sum's register with one test of that sum (NaN only when
// DAZ arithmetic alone reads it, else also its subnormals), and the
// out-of-line fix recomputes the chain step by step from its operands,
// which stay in their registers up to the test, with every op's own
// fixes: the unfused result bit for bit (the fused product + sum's records,
// each step's sum so far in the last sum's register, so chains share fix
// stubs like the fused MADs). The other ops are skipped at their turns
// (fused_pending_).
void Emitter::find_daz_chains() {
  const size_t n = f_.insts.size();
  daz_chain_first_.assign(n, -1);
  daz_chain_member_.assign(n, 0);
  daz_chains_.clear();
  auto daz_op = [&](ValueId x) {
    const Inst& in = f_.insts[x];
    return in.block != kNoBlock && in.type == ir::Type::F32 && in.args.size() == 2 &&
           (in.op == Opcode::FAdd || in.op == Opcode::FSub || in.op == Opcode::FMul) && (in.fflags & ff::FtzIn) &&
           !(in.fflags & ff::Sat) && round_mode(in.fflags) == Round::NearestEven &&
           nan_rule(in.fflags) != NanRule::Propagate && !deferred_[x] && plan_.segment_of[x] >= 0 &&
           plan_.segments[size_t(plan_.segment_of[x])].strip;
  };
  auto is_add = [&](ValueId x) { return f_.insts[x].op == Opcode::FAdd || f_.insts[x].op == Opcode::FSub; };
  // An op of the chain other than its last sum: one reader, `reader`, in its segment.
  auto inner = [&](ValueId x, ValueId reader) {
    return x < n && daz_op(x) && uses_[x] == 1 && plan_.segment_of[x] == plan_.segment_of[reader] &&
           !plan_.escapes[x] && plan_.direct_phis[x].empty() && !wide(x);
  };
  // The candidate sums, in id order: the roots below and the only readers
  // `reader` needs (a value read once, by a sum of this list; a value read
  // once by anything else is never a partial sum, so its reader is not
  // asked for). One walk of the function instead of one per question.
  std::vector<ValueId> adds;
  for (ValueId v = 0; v < n; ++v)
    if (is_add(v) && daz_op(v)) adds.push_back(v);
  if (adds.empty()) return;
  std::vector<ValueId> reader(n, kNoValue);  // of a value with one use, when that use is a sum of `adds`
  for (ValueId u : adds)
    for (ValueId a : f_.insts[u].args)
      if (a < n && uses_[a] == 1) reader[a] = u;
  DazChain c;
  for (ValueId root : adds) {
    const int seg = plan_.segment_of[root];
    // Not a partial sum of a longer chain.
    if (const ValueId u = reader[root]; u != kNoValue && inner(root, u)) continue;
    c.adds.clear();  // (one scratch chain: no allocation per candidate)
    c.ops.clear();
    bool ok = true;
    ValueId cur = root;
    while (ok) {  // walk back through the partial sums
      c.adds.push_back(cur);
      const Inst& ai = f_.insts[cur];
      ValueId acc = kNoValue;
      for (ValueId a : ai.args)
        if (a != acc && inner(a, cur) && is_add(a) && ai.args[0] != ai.args[1]) {
          if (acc != kNoValue) ok = false;  // two partial sums: a tree, not a chain
          acc = a;
        }
      if (!ok || acc == kNoValue) break;
      cur = acc;
    }
    if (!ok) continue;
    std::reverse(c.adds.begin(), c.adds.end());
    size_t products = 0;
    for (size_t k = 0; k < c.adds.size(); ++k) {
      const Inst& ai = f_.insts[c.adds[k]];
      size_t step_products = 0;
      for (ValueId a : ai.args) {
        if (k > 0 && a == c.adds[k - 1]) continue;
        if (ai.args[0] != ai.args[1] && inner(a, c.adds[k]) && f_.insts[a].op == Opcode::FMul &&
            !wide(f_.insts[a].args[0]) && !wide(f_.insts[a].args[1])) {
          c.ops.push_back(a);
          ++step_products;
        } else if (wide(a)) {
          ok = false;
        }
      }
      // Each add sums a product (the fix's records recompute a product and
      // its sum): a value is allowed only beside the first add's product, and
      // the first add's two products need the first one's ZeroMul record.
      if (step_products == 0) ok = false;
      if (step_products == 2 && !(f_.insts[ai.args[0]].fflags & ff::ZeroMul)) ok = false;
      products += step_products;
      c.ops.push_back(c.adds[k]);
    }
    // Worth it when it saves a test over the fused product + sum: two sums,
    // or one sum of two products.
    if (!ok || (c.adds.size() < 2 && products < 2)) continue;
    int32_t first = INT32_MAX;
    ValueId first_op = kNoValue;
    for (ValueId x : c.ops)
      if (plan_.position[x] < first) {
        first = plan_.position[x];
        first_op = x;
      }
    // Every value from outside the chain is defined before its first op.
    for (ValueId x : c.ops)
      for (ValueId a : f_.insts[x].args)
        if (std::find(c.ops.begin(), c.ops.end(), a) == c.ops.end() && plan_.segment_of[a] == seg &&
            plan_.position[a] >= first)
          ok = false;
    for (ValueId x : c.ops) ok = ok && !daz_chain_member_[x];
    if (!ok) continue;
    for (ValueId x : c.ops) daz_chain_member_[x] = 1;
    daz_chain_first_[first_op] = int32_t(daz_chains_.size());
    daz_chains_.push_back(c);
  }
}

bool Emitter::lower_daz_chain(const DazChain& c, ValueId first) {
  // Registers: every value read, locked together, and the last sum's.
  // (The three lists are per-thread scratch, kept between calls: a heavy
  // shader has dozens of chains, and each list was an allocation per chain.
  // The function does not call itself.)
  thread_local std::vector<ValueId> reads;
  reads.clear();
  for (ValueId x : c.ops)
    for (ValueId a : f_.insts[x].args)
      if (std::find(c.ops.begin(), c.ops.end(), a) == c.ops.end() &&
          std::find(reads.begin(), reads.end(), a) == reads.end())
        reads.push_back(a);
  {
    int avail = 0;
    for (int r = cache_lo_; r < cache_hi_; ++r) avail += !regs_[r].pinned;
    int need = 1;
    for (ValueId a : reads) need += !(vals_[a].reg >= 0 && regs_[vals_[a].reg].pinned);
    if (need > avail) return false;
  }
  auto is_product = [&](ValueId a) { return std::find(c.ops.begin(), c.ops.end(), a) != c.ops.end(); };
  // The fix is a sequence of the fused product + sum's records (ColdFix,
  // chained like a pair's, so equal ones share stubs): step k recomputes its
  // product into scratch 2 and d = 2 (+|-) rc, rc = d holding the sums so
  // far; the first step's other operand is a value's register or, for two
  // products, the first product recomputed into d by a ZeroMul record.
  struct Product {
    int ra, rb;
    int32_t mem;  // AVX2: an operand only in its slot (the multiply's memory operand), else -1
    MemRef addr;  // (strip_ref)
    uint32_t fl;
  };
  auto product = [&](ValueId m) {
    const Inst& mi = f_.insts[m];
    Product p{-1, -1, -1, MemRef{}, mi.fflags & ~ff::FtzOut};  // read only by an add (DAZ): NaN lanes only
    ValueId in_mem = kNoValue;
    for (ValueId x : {mi.args[1], mi.args[0]})
      if (!z_ && in_mem == kNoValue && mi.args[0] != mi.args[1] && vals_[x].reg < 0 && vals_[x].in_frame) in_mem = x;
    p.ra = mi.args[0] == in_mem ? 3 : use(mi.args[0]);
    p.rb = mi.args[1] == in_mem ? 3 : use(mi.args[1]);
    if (in_mem != kNoValue) {
      p.mem = 0;
      p.addr = strip_ref(in_mem);
    }
    return p;
  };
  struct Step {
    Product p;        // the product operand
    Product p0;       // the first step's other product (two_products)
    bool two_products = false;
    int rc = -1;      // the other operand: a value's register, or -1: the sums so far (d)
    bool product_first, sub;
    uint32_t fl;      // the sum's test-and-fix flags
  };
  thread_local std::vector<Step> steps;
  steps.clear();
  for (size_t k = 0; k < c.adds.size(); ++k) {
    const Inst& ai = f_.insts[c.adds[k]];
    Step st{};
    st.sub = ai.op == Opcode::FSub;
    st.fl = ai.fflags & ~ff::FtzOut;  // a partial sum: read only by the next add
    const ValueId a0 = ai.args[0], a1 = ai.args[1];
    const bool acc0 = k > 0 && a0 == c.adds[k - 1], acc1 = k > 0 && a1 == c.adds[k - 1];
    if (k == 0 && is_product(a0) && is_product(a1)) {
      // (the product recomputed by a ZeroMul record: the one that recomputes)
      if (!(f_.insts[a0].fflags & ff::ZeroMul)) return false;
      st.two_products = true;
      st.p0 = product(a0);
      st.p = product(a1);
      st.product_first = false;  // d (the first product) + 2
    } else if (is_product(a1) && (acc0 || (k == 0 && !is_product(a0)))) {
      st.p = product(a1);
      st.product_first = false;
      if (!acc0) st.rc = use(a0);
    } else if (is_product(a0) && (acc1 || (k == 0 && !is_product(a1)))) {
      st.p = product(a0);
      st.product_first = true;
      if (!acc1) st.rc = use(a1);
    } else {
      return false;  // a sum of values: find_daz_chains keeps such chains out (no record recomputes it)
    }
    steps.push_back(st);
  }
  const ValueId root = c.adds.back();
  const uint32_t rfl = f_.insts[root].fflags;
  steps.back().fl = (rfl & ff::FtzOut) && read_by_daz_arith_only(root) ? rfl & ~ff::FtzOut : rfl;
  const int d = def(root);
  auto mul = [&](int dst, const Product& p) {
    if (p.mem < 0) vmulps(V(dst), V(p.ra), V(p.rb));
    else vmulps(V(dst), V(p.ra == 3 ? p.rb : p.ra), p.addr);
  };
  for (const Step& st : steps) {  // the hot path: products and sums, no test
    if (st.two_products) mul(d, st.p0);
    mul(2, st.p);
    const int other = st.two_products || st.rc < 0 ? d : st.rc;
    const int x = st.product_first ? 2 : other, y = st.product_first ? other : 2;
    if (st.sub) vsubps(V(d), V(x), V(y));
    else vaddps(V(d), V(x), V(y));
  }
  const size_t jump_at = float_test(steps.back().fl, d);
  const size_t back = getSize();
  thread_local std::vector<ColdFix> fixes;
  fixes.clear();
  auto record = [&](const Product& p) {
    ColdFix f{};
    f.d = int8_t(d);
    f.args[0] = int8_t(p.ra);
    f.args[1] = int8_t(p.rb);
    f.args[2] = -1;
    f.n = 2;
    f.fflags = p.fl;
    f.zero_mul = (p.fl & ff::ZeroMul) != 0;
    if (p.mem >= 0) {
      f.mem = int32_t(cold_mem_.size());
      cold_mem_.push_back(p.addr);
    }
    return f;
  };
  for (const Step& st : steps) {
    if (st.two_products) fixes.push_back(record(st.p0));  // d = the first product, with its fixes
    ColdFix f = record(st.p);
    f.fused = true;
    f.add_flags = st.fl;
    f.rc = int8_t(st.rc < 0 || st.two_products ? d : st.rc);
    f.sub = st.sub;
    f.product_first = st.product_first;
    fixes.push_back(f);
  }
  for (size_t i = 0; i < fixes.size(); ++i) {
    ColdFix& f = fixes[i];
    f.jump_at = i == 0 ? jump_at : 0;
    f.back = back;
    f.chained = i > 0;
    f.then_next = i + 1 < fixes.size();
    push_cold_fix(f);
  }
  for (ValueId x : c.ops)
    if (x != first) fused_pending_[x] = 1;
  return true;
}

// An fneg whose one reader is the addend of an f32 ffma, the op right after
// it in the same strip segment, whose NaN rule reads no operand's payload
// (Canonical, AllOnes): the pair is emitted at the fneg as one vfmsub of the
// fneg's operand, and the ffma is skipped at its turn (fma_skip_). Exact:
// fma(a, b, -c) = a * b - c, one rounding, in every rounding mode; the
// flush of -c (FtzIn, or DAZ) is the negation of c's flush; a NaN lane gets
// the rule's constant whatever the NaN. The ffma's other operands are
// defined before the fneg (nothing lies between the two), so they are
// ready there. (Tesla's MAD residual `ffma a, x, (fneg (fmul a, x))`: the
// fneg's xor and two register moves per strip.)
ValueId Emitter::fneg_fma_of(ValueId n) {
  if (fneg_fma_.empty()) {
    const size_t cnt = f_.insts.size();
    fneg_fma_.assign(cnt, kNoValue);
    fma_skip_.assign(cnt, 0);
    for (ValueId u = 0; u < cnt; ++u) {
      const Inst& ui = f_.insts[u];
      if (ui.block == kNoBlock || ui.op != Opcode::FFma || ui.type != ir::Type::F32 || ui.args.size() != 3 ||
          deferred_[u] || nan_rule(ui.fflags) == NanRule::Propagate)
        continue;
      const ValueId c = ui.args[2];
      if (c >= cnt || ui.args[0] == c || ui.args[1] == c) continue;
      const Inst& ci = f_.insts[c];
      if (ci.op != Opcode::FNeg || ci.type != ir::Type::F32 || ci.block == kNoBlock || ci.args.size() != 1 ||
          uses_[c] != 1 || deferred_[c] || plan_.escapes[c])
        continue;
      const int seg = plan_.segment_of[u];
      if (seg < 0 || plan_.segment_of[c] != seg || plan_.position[u] != plan_.position[c] + 1) continue;
      if (wide(ui.args[0]) || wide(ui.args[1]) || wide(ci.args[0])) continue;
      fneg_fma_[c] = u;
    }
  }
  return n < fneg_fma_.size() ? fneg_fma_[n] : kNoValue;
}

bool Emitter::lower_float(ValueId v) {
  const Inst& in = f_.insts[v];
  if (v < fused_pending_.size() && fused_pending_[v]) {  // computed with its product (lower_fused_mul_add)
    fused_pending_[v] = 0;
    return true;
  }
  if (v < fma_skip_.size() && fma_skip_[v]) {  // computed at its fneg (fneg_fma_of)
    fma_skip_[v] = 0;
    return true;
  }
  if (in.op == Opcode::FMul || in.op == Opcode::FAdd || in.op == Opcode::FSub) {
    fused_add_of(v);  // (the first call finds the chains)
    if (v < daz_chain_first_.size() && daz_chain_first_[v] >= 0 &&
        lower_daz_chain(daz_chains_[size_t(daz_chain_first_[v])], v))
      return true;
  }
  if (in.op == Opcode::FMul)
    if (ValueId u = fused_add_of(v); u != kNoValue) return lower_fused_mul_add(v, u);
  uint32_t fl = in.fflags;
  Round rm = round_mode(fl);
  bool ftz_in = fl & ff::FtzIn;
  size_t n = in.args.size();
  ir::Type at = n ? f_.insts[in.args[0]].type : ir::Type::Void;
  ValueId arg0 = n ? in.args[0] : kNoValue;
  Sign sign = Sign(in.attr);
  if (ValueId x = itof_narrow_source(f_, v); x != kNoValue) {  // itof of a widened 32-bit value
    sign = f_.insts[in.args[0]].op == Opcode::Zext ? Sign::Unsigned : Sign::Signed;
    arg0 = x;
    at = f_.insts[x].type;
  }

  switch (in.op) {
    case Opcode::FAdd: case Opcode::FSub: case Opcode::FMul: case Opcode::FFma: case Opcode::FMad:
    case Opcode::FMin: case Opcode::FMax: case Opcode::FFloor: case Opcode::FCeil: case Opcode::FTrunc:
    case Opcode::FRint:
      if (in.type != ir::Type::F32) return false;
      break;
    case Opcode::FSqrt:
      if (in.type != ir::Type::F32 || Transc(in.attr) != Transc::Ieee) return false;
      break;
    case Opcode::FRcp:
      if (in.type != ir::Type::F32 || (Transc(in.attr) != Transc::Ieee && Transc(in.attr) != Transc::Pica))
        return false;
      break;
    case Opcode::FRsqrt: case Opcode::FExp2: case Opcode::FLog2:
      if (in.type != ir::Type::F32 || Transc(in.attr) != Transc::Pica) return false;
      break;
    case Opcode::FCmp:
      if (at != ir::Type::F32) return false;
      break;
    case Opcode::FToI:
      if (at != ir::Type::F32 || in.type != ir::Type::I32 || Sign(in.attr) != Sign::Signed) return false;
      break;
    case Opcode::IToF:
      if (in.type != ir::Type::F32) return false;
      break;
    default:
      return false;
  }

  int r[3] = {-1, -1, -1};
  for (size_t i = 0; i < n && i < 3; ++i)
    r[i] = use(i == 0 ? arg0 : i == 2 && fma_negated_ ? f_.insts[in.args[2]].args[0] : in.args[i]);
  int d = def(v);

  if (in.op == Opcode::IToF && at == ir::Type::I32 && sign == Sign::Unsigned) {
    round_begin(rm);
    if (z_) {
      vcvtudq2ps(V(d), rop(r[0], rm));
    } else {  // hi * 65536 and lo are exact in f32: the add is the one rounding
      vpsrld(V(2), V(r[0]), 16);
      vcvtdq2ps(V(2), V(2));
      vmulps(V(2), V(2), const_vec(0x47800000u));  // 65536.0f
      vpand(V(3), V(r[0]), const_vec(0xffffu));
      vcvtdq2ps(V(3), V(3));
      vaddps(V(d), V(2), V(3));
    }
    round_end(rm);
    float_finish(v, d, nullptr, 0);
    return true;
  }
  if (in.op == Opcode::IToF) {
    int src = r[0];
    if (sign == Sign::Signed && bit_width(at) < 32) {
      sext_to32(2, r[0], at);
      src = 2;
    }
    round_begin(rm);
    vcvtdq2ps(V(d), rop(src, rm));
    round_end(rm);
    float_finish(v, d, nullptr, 0);
    return true;
  }

  // Flushed copies of the float operands (NaNs are unchanged by flushing, so
  // the NaN rule still reads the original registers). An operand that can
  // hold no subnormal (plan.h) is used as it is. The PICA model flushes its
  // operand whatever the flags say.
  int x[3] = {r[0], r[1], r[2]};
  if (daz_ && ftz_in && rm == Round::NearestEven &&
      (in.op == Opcode::FAdd || in.op == Opcode::FSub || in.op == Opcode::FMul))
    return lower_daz_arith(v, r, d);
  // DAZ mode compares FtzIn operands as flushed already, and so an fma reads
  // them (with MXCSR's rounding on both tiers), and a product or sum
  // rounding another way than to nearest (lower_daz_arith takes the others):
  // on AVX2 under MXCSR's rounding or lower_mul_rz_avx2, on AVX-512 with an
  // embedded mode, which keeps MXCSR.DAZ (checked on an AMD Zen 5 host:
  // `vmulps {rz-sae}` of a subnormal operand in DAZ mode gives the flushed
  // operand's product; tests/backend_x64/x64_daz_compares.cpp runs it).
  // Not with ZeroMul: its 0 * inf test below reads the operands' bits and
  // takes only an exact zero for zero, so a subnormal factor must be flushed
  // first (MXCSR's DAZ alone made ffma(subnormal, inf) a NaN where the IR
  // says 0: tests/regressions/ir-daz-zero-mul-*.json).
  if (daz_ && !(fl & ff::ZeroMul) &&
      (in.op == Opcode::FCmp || in.op == Opcode::FFma ||
       in.op == Opcode::FAdd || in.op == Opcode::FSub || in.op == Opcode::FMul))
    ftz_in = false;
  const bool pica = (in.op == Opcode::FRcp || in.op == Opcode::FRsqrt || in.op == Opcode::FExp2 ||
                     in.op == Opcode::FLog2) && Transc(in.attr) == Transc::Pica;
  if ((ftz_in || pica) && !(pica && in.op == Opcode::FLog2)) {
    for (int i = 0; i < 2 && i < int(n); ++i) {
      if (plan_.no_subnormal[in.args[i]]) continue;
      vmov(2 + i, r[i]);
      flush_subnormal(2 + i);
      x[i] = 2 + i;
    }
  }

  switch (in.op) {
    case Opcode::FCmp: {
      uint8_t imm = kCmpImm[in.attr];
      Label exact, done;
      if (daz_ && !(fl & ff::FtzIn)) {
        // An unflushed compare in DAZ mode: IEEE mode around the compare
        // when some operand is subnormal.
        if (z_) {  // (vfpclassps reads subnormals as zeros in DAZ mode: the bits)
          vptestnmd(k1, V(x[0]), ptr_b[rip + const32_[0x7F800000u]]);
          vptestmd(k1 | k1, V(x[0]), ptr_b[rip + const32_[0x007FFFFFu]]);
          vptestnmd(k2, V(x[1]), ptr_b[rip + const32_[0x7F800000u]]);
          vptestmd(k2 | k2, V(x[1]), ptr_b[rip + const32_[0x007FFFFFu]]);
          kortestw(k1, k2);
        } else {
          // |x| - 1 <u 0x7FFFFF exactly for subnormals: the unsigned min of both operands' values.
          vpand(V(0), V(x[0]), const_vec(0x7FFFFFFFu));
          vpand(V(1), V(x[1]), const_vec(0x7FFFFFFFu));
          vpaddd(V(0), V(0), const_vec(0xFFFFFFFFu));
          vpaddd(V(1), V(1), const_vec(0xFFFFFFFFu));
          vpminud(V(0), V(0), V(1));
          vpminud(V(1), V(0), const_vec(0x7FFFFEu));
          vpcmpeqd(V(0), V(0), V(1));
          vptest(V(0), V(0));
        }
        jnz(exact, T_NEAR);
      }
      if (z_) {
        vcmpps(k1, V(x[0]), V(x[1]), imm);
        bool_from_k(d, 1);
      } else {
        vcmpps(V(d), V(x[0]), V(x[1]), imm);
        vpsrld(V(d), V(d), 31);
      }
      if (daz_ && !(fl & ff::FtzIn)) {
        jmp(done, T_NEAR);
        L(exact);
        ldmxcsr(dword[rsp + kMxcsrIeeeOffset]);
        if (z_) {
          vcmpps(k1, V(x[0]), V(x[1]), imm);
          bool_from_k(d, 1);
        } else {
          vcmpps(V(d), V(x[0]), V(x[1]), imm);
          vpsrld(V(d), V(d), 31);
        }
        ldmxcsr(dword[rsp + kMxcsrDazOffset]);
        L(done);
      }
      return true;
    }
    case Opcode::FToI: {
      if (z_) vrndscaleps(V(0), V(x[0]), round_imm(rm));
      else vroundps(V(0), V(x[0]), round_imm(rm));
      vcvttps2dq(V(d), V(0));  // out of range and NaN -> 0x80000000
      if (z_) {
        vcmpps(k2, V(0), ptr_b[rip + const32_[kTwo31]], 0x1D);
        vpbroadcastd(V(d) | k2, const_mem(0x7FFFFFFFu));
        vcmpps(k3, V(0), V(0), 0x03);
        vpxord(V(d) | k3, V(d), V(d));
      } else {
        vcmpps(V(4), V(0), const_vec(kTwo31), 0x1D);
        vblendvps(V(d), V(d), const_vec(0x7FFFFFFFu), V(4));
        vcmpps(V(5), V(0), V(0), 0x03);
        vpandn(V(d), V(5), V(d));
      }
      return true;
    }
    case Opcode::FMin: case Opcode::FMax: {
      bool is_max = in.op == Opcode::FMax;
      MinMaxNan rule = MinMaxNan(in.attr);
      if (rule == MinMaxNan::SecondOnNan) {
        // Exactly the x86 semantics: (a < b) ? a : b, b on NaN or equal.
        is_max ? vmaxps(V(d), V(x[0]), V(x[1])) : vminps(V(d), V(x[0]), V(x[1]));
        float_finish(v, d, &r[1], 1);
        return true;
      }
      // Both operand orders, combined bitwise, order -0 below +0.
      if (is_max) {
        vmaxps(V(0), V(x[0]), V(x[1]));
        vmaxps(V(d), V(x[1]), V(x[0]));
        vand(d, d, 0);
      } else {
        vminps(V(0), V(x[0]), V(x[1]));
        vminps(V(d), V(x[1]), V(x[0]));
        vor(d, d, 0);
      }
      if (rule == MinMaxNan::NumberWins) {
        fnan_mask(kM0, x[0]);
        fblend(d, kM0, x[1]);
        fnan_mask(kM1, x[1]);
        fblend(d, kM1, x[0]);
      } else {
        if (z_) vcmpps(k2, V(x[0]), V(x[1]), 0x03);
        else vcmpps(V(4), V(x[0]), V(x[1]), 0x03);
        fblend_const(d, kM0, kCanonicalNan);
      }
      float_finish(v, d, r, 2);
      return true;
    }
    case Opcode::FFloor: case Opcode::FCeil: case Opcode::FTrunc: case Opcode::FRint: {
      uint8_t imm = in.op == Opcode::FFloor ? 0x09 : in.op == Opcode::FCeil ? 0x0A
                  : in.op == Opcode::FTrunc ? 0x0B : round_imm(rm);
      if (z_) vrndscaleps(V(d), V(x[0]), imm);
      else vroundps(V(d), V(x[0]), imm);
      float_finish(v, d, r, 1);
      return true;
    }
    case Opcode::FSqrt:
      round_begin(rm);
      vsqrtps(V(d), rop(x[0], rm));
      round_end(rm);
      float_finish(v, d, r, 1);
      return true;
    case Opcode::FRcp: case Opcode::FRsqrt: case Opcode::FExp2: case Opcode::FLog2:
      if (pica) {
        // FLog2 reads the unflushed bits (its special lanes are found from them).
        lower_pica_transc(in.op, d, in.op == Opcode::FLog2 ? r[0] : x[0]);
        if (!(fl & ff::FtzOut)) flush_subnormal(d);  // the model's results are flushed
        float_finish(v, d, r, 1);
        return true;
      }
      bcast_const(0, kOne);
      round_begin(rm);
      vdivps(V(d), V(0), rop(x[0], rm));
      round_end(rm);
      float_finish(v, d, r, 1);
      return true;
    default: break;
  }

  // add / sub / mul / ffma / fmad
  bool zero_mul = (fl & ff::ZeroMul) &&
                  (in.op == Opcode::FMul || in.op == Opcode::FFma || in.op == Opcode::FMad);
  if (zero_mul) {
    // kM0 = lanes whose product is 0 * inf.
    if (z_) {
      vfpclassps(k2, V(x[0]), 0x18);
      vfpclassps(k3, V(x[1]), 0x06);
      kandw(k2, k2, k3);
      vfpclassps(k3, V(x[0]), 0x06);
      vfpclassps(k4, V(x[1]), 0x18);
      kandw(k3, k3, k4);
      korw(k2, k2, k3);
    } else {
      vpand(V(0), V(x[0]), const_vec(0x7FFFFFFFu));
      vpand(V(1), V(x[1]), const_vec(0x7FFFFFFFu));
      vpcmpeqd(V(4), V(0), const_vec(0x7F800000u));
      vpcmpeqd(V(5), V(1), const_vec(0));
      vpand(V(4), V(4), V(5));
      vpcmpeqd(V(5), V(0), const_vec(0));
      vpcmpeqd(V(0), V(1), const_vec(0x7F800000u));
      vpand(V(5), V(5), V(0));
      vpor(V(4), V(4), V(5));
    }
    if (in.op == Opcode::FFma) {
      // 0 * inf lanes compute (+0 * +0) + c, which is 0.0 + c.
      for (int i = 0; i < 2; ++i) {
        if (x[i] == r[i]) vmov(2 + i, r[i]);
        x[i] = 2 + i;
        if (z_) vpxord(V(x[i]) | k2, V(x[i]), V(x[i]));
        else vpandn(V(x[i]), V(4), V(x[i]));
      }
    }
  }

  if (!z_ && in.op == Opcode::FMul && rm == Round::TowardZero && !zero_mul) {
    lower_mul_rz_avx2(d, x[0], x[1], fl);
    float_finish(v, d, r, int(n));
    return true;
  }
  round_begin(rm);
  switch (in.op) {
    case Opcode::FAdd: vaddps(V(d), V(x[0]), rop(x[1], rm)); break;
    case Opcode::FSub: vsubps(V(d), V(x[0]), rop(x[1], rm)); break;
    case Opcode::FMul: vmulps(V(d), V(x[0]), rop(x[1], rm)); break;
    case Opcode::FFma:
      vmov(d, r[2]);
      if (ftz_in && !plan_.no_subnormal[in.args[2]]) flush_subnormal(d);
      if (z_ && rm != Round::NearestEven) {
        // xbyak 6.68 rejects {er} on vfmadd231ps: use MXCSR for this one.
        mxcsr_begin(rm);
        if (fma_negated_) vfmsub231ps(V(d), V(x[0]), V(x[1]));  // d = a * b - c
        else vfmadd231ps(V(d), V(x[0]), V(x[1]));
        mxcsr_end(rm);
      } else if (fma_negated_) {
        vfmsub231ps(V(d), V(x[0]), rop(x[1], rm));
      } else {
        vfmadd231ps(V(d), V(x[0]), rop(x[1], rm));
      }
      break;
    case Opcode::FMad:
      vmulps(V(d), V(x[0]), rop(x[1], rm));
      if (zero_mul) {
        if (z_) vpxord(V(d) | k2, V(d), V(d));
        else vpandn(V(d), V(4), V(d));
      }
      if (ftz_in && !plan_.no_subnormal[in.args[2]]) {
        vmov(3, r[2]);
        flush_subnormal(3);
        vaddps(V(d), V(d), rop(3, rm));
      } else {
        vaddps(V(d), V(d), rop(r[2], rm));
      }
      break;
    default: break;
  }
  round_end(rm);
  if (zero_mul && in.op == Opcode::FMul) {
    if (z_) vpxord(V(d) | k2, V(d), V(d));
    else vpandn(V(d), V(4), V(d));
  }
  float_finish(v, d, r, int(n));
  return true;
}

// AVX2 f32 product rounded toward zero without switching MXCSR (AVX-512
// has `vmulps {rz-sae}`; two ldmxcsr per strip cost more than this): the
// product p rounded to nearest, stepped one float toward zero (its bits
// minus one, either sign) when it was rounded away from zero. That is when
// |a b| - |p| < 0, computed exactly by one fma and rounded once, as
// fma(a ^ s, b, -(p ^ s)) with s = p's sign bit. Its sign is reliable: an
// exact zero difference is +0, and a nonzero one that underflows keeps its
// sign (-0 for "away"), so small products need no guard; as a signed
// integer, "away" is every value up to the bits of -inf (negative numbers,
// -0, -inf), which err + 0x007fffff turns into the negative ones. The
// other values: positive numbers, +0, +inf, and the NaN of inf * b - inf
// (p = inf from an inf factor: the x86 default NaN 0xffc00000, whose bits
// lie above -inf's) keep p. A product that overflowed to inf steps to the
// largest float (err = -inf); a NaN p stays a NaN (a quiet NaN's bits
// minus one are a NaN; a positive NaN err only comes with a NaN p), which
// float_finish then treats by the op's rule. In DAZ mode the fma reads a
// subnormal p as zero and would keep it: without FtzOut (which flushes
// such results anyway), a lane with a subnormal p sends the strip out of
// line, to the product under MXCSR rounding (DAZ kept: the operands are
// FtzIn there). ZeroMul products keep the MXCSR form (not taken here).
// Scratch: 0, 1, 4, 5 (a and b may be the flushed copies in 2, 3).
void Emitter::lower_mul_rz_avx2(int d, int a, int b, uint32_t fl) {
  vmulps(V(0), V(a), V(b));
  vpand(V(1), V(0), const_vec(0x80000000u));  // s
  vpxor(V(5), V(0), V(1));                    // |p|
  if (daz_ && !(fl & ff::FtzOut)) {
    // DAZ mode: EQ_UQ against zero is true for zeros, subnormals and NaNs;
    // those with a nonzero |p| need the MXCSR product.
    vcmpps(V(4), V(0), const_vec(0), 0x08);
    vptest(V(4), V(5));
    Xbyak::Label& cold = cold_label();
    Xbyak::Label& back = cold_label();
    jnz(cold, T_NEAR);
    push_cold([this, &cold, &back, d, a, b] {
      L(cold);
      mxcsr_begin(Round::TowardZero);
      vmulps(V(d), V(a), V(b));
      mxcsr_end(Round::TowardZero);
      jmp(back, T_NEAR);
    });
    lower_mul_rz_step(d, a, b);
    L(back);
    return;
  }
  lower_mul_rz_step(d, a, b);
}

// (p in scratch 0, its sign bit in 1, |p| in 5)
void Emitter::lower_mul_rz_step(int d, int a, int b) {
  vpxor(V(4), V(a), V(1));                     // a ^ s
  vfmsub231ps(V(5), V(4), V(b));               // |a b| - |p|, rounded once
  vpaddd(V(5), V(5), const_vec(0x007FFFFFu));
  vpsrad(V(5), V(5), 31);                      // -1: rounded away from zero
  vpaddd(V(d), V(0), V(5));
}

// Transc::Pica in vector code, bit for bit the functions of ir/transc_pica.h
// (the caller flushes x, except for log2, and applies the output flags):
//  - rcp: 1.0f / (x + 0.0f) in fp32 (the add turns -0 into +0, so both
//    zeros give +inf);
//  - rsqrt: 1.0 / sqrt(double(x + 0.0f)) rounded to fp32 (a negative x gives
//    NaN from the sqrt);
//  - exp2 / log2: ex2_double / lg2_double step by step in packed doubles;
//    NaN lanes (and log2's zero, negative and infinite lanes) are set
//    afterwards.
// The doubles are computed in two halves of the strip (AVX-512: 2 x 8 lanes
// in zmm, AVX2: 2 x 4 lanes in ymm) and narrowed into d. Scratch: vectors
// 0, 1, 3, 4, 5 (2 may hold the flushed operand), k1..k3.
void Emitter::lower_pica_transc(Opcode op, int d, int x) {
  namespace fp = ir::pica_fp;
  if (op == Opcode::FRcp) {
    vxorps(V(0), V(0), V(0));
    vaddps(V(0), V(x), V(0));
    bcast_const(1, kOne);
    vdivps(V(d), V(1), V(0));
    return;
  }
  // Halves: h = 0 is converted into d directly (d is free until then);
  // h = 1 is inserted above it.
  auto widen_float = [&](int a, int src, int h) {  // a = doubles of half h of fp32 vector src
    if (z_) {
      if (h) {
        vextractf32x8(Ymm(a), Zmm(src), 1);
        vcvtps2pd(Zmm(a), Ymm(a));
      } else {
        vcvtps2pd(Zmm(a), Ymm(src));
      }
    } else {
      if (h) {
        vextractf128(Xmm(a), Ymm(src), 1);
        vcvtps2pd(Ymm(a), Xmm(a));
      } else {
        vcvtps2pd(Ymm(a), Xmm(src));
      }
    }
  };
  auto widen_int = [&](int a, int src, int h) {  // a = doubles of half h of i32 vector src
    if (z_) {
      if (h) {
        vextracti32x8(Ymm(a), Zmm(src), 1);
        vcvtdq2pd(Zmm(a), Ymm(a));
      } else {
        vcvtdq2pd(Zmm(a), Ymm(src));
      }
    } else {
      if (h) {
        vextracti128(Xmm(a), Ymm(src), 1);
        vcvtdq2pd(Ymm(a), Xmm(a));
      } else {
        vcvtdq2pd(Ymm(a), Xmm(src));
      }
    }
  };
  auto narrow = [&](int a, int h) {  // half h of d = fp32 of the doubles in a
    if (z_) {
      if (h) {
        vcvtpd2ps(Ymm(a), Zmm(a));
        vinsertf32x8(Zmm(d), Zmm(d), Ymm(a), 1);
      } else {
        vcvtpd2ps(Ymm(d), Zmm(a));
      }
    } else {
      if (h) {
        vcvtpd2ps(Xmm(a), Ymm(a));
        vinsertf128(Ymm(d), Ymm(d), Xmm(a), 1);
      } else {
        vcvtpd2ps(Xmm(d), Ymm(a));
      }
    }
  };

  if (op == Opcode::FRsqrt) {
    vxorps(V(0), V(0), V(0));
    vaddps(V(0), V(x), V(0));  // -0 -> +0
    for (int h = 0; h < 2; ++h) {
      widen_float(1, 0, h);
      vsqrtpd(V(1), V(1));
      if (z_) vbroadcastsd(Zmm(3), const_mem64(std::bit_cast<uint64_t>(1.0)));
      else vmovapd(V(3), const_vec64(std::bit_cast<uint64_t>(1.0)));
      vdivpd(V(1), V(3), V(1));
      narrow(1, h);
    }
    return;  // NaN lanes (negative or NaN operands) are NaN already
  }

  if (op == Opcode::FExp2) {
    // a = clamp(x), b = nearest(a) -> 2^b, a = a - b, p = poly(a); a = p * 2^b.
    for (int h = 0; h < 2; ++h) {
      widen_float(0, x, h);
      vmaxpd(V(0), V(0), dconst(fp::kEx2Lo));  // NaN -> kEx2Lo: the lane is set below
      vminpd(V(0), V(0), dconst(fp::kEx2Hi));
      if (z_) vrndscalepd(V(1), V(0), 0x08);
      else vroundpd(V(1), V(0), 0x08);
      vsubpd(V(0), V(0), V(1));                  // r, exact
      vaddpd(V(1), V(1), dconst(fp::kEx2Magic));
      vpsllq(V(1), V(1), 52);                    // 2^k
      if (z_) vbroadcastsd(Zmm(3), const_mem64(std::bit_cast<uint64_t>(fp::kEx2Poly.c[13])));
      else vmovapd(V(3), const_vec64(std::bit_cast<uint64_t>(fp::kEx2Poly.c[13])));
      for (int i = 12; i >= 0; --i) vfmadd213pd(V(3), V(0), dconst(fp::kEx2Poly.c[i]));
      vmulpd(V(3), V(3), V(1));
      narrow(3, h);
    }
    fnan_mask(kM0, x);
    fblend_const(d, kM0, kCanonicalNan);
    return;
  }

  // FLog2 from the raw bits of x: vector 4 = m's bits, vector 5 = e (i32).
  vpsrld(V(5), V(x), 23);
  if (z_) {
    vpsubd(V(5), V(5), ptr_b[rip + const32_[127u]]);
    vpandd(V(4), V(x), ptr_b[rip + const32_[0x7FFFFFu]]);
    vpord(V(4), V(4), ptr_b[rip + const32_[0x3F800000u]]);
    vpcmpgtd(k1, V(4), ptr_b[rip + const32_[fp::kLg2SqrtTwoBits]]);
    vpsubd(V(4) | k1, V(4), ptr_b[rip + const32_[0x00800000u]]);
    vpaddd(V(5) | k1, V(5), ptr_b[rip + const32_[1u]]);
  } else {
    vpsubd(V(5), V(5), const_vec(127u));
    vpand(V(4), V(x), const_vec(0x7FFFFFu));
    vpor(V(4), V(4), const_vec(0x3F800000u));
    vpcmpgtd(V(0), V(4), const_vec(fp::kLg2SqrtTwoBits));  // all ones where m > sqrt(2)
    vpand(V(1), V(0), const_vec(0x00800000u));
    vpsubd(V(4), V(4), V(1));
    vpsubd(V(5), V(5), V(0));
  }
  for (int h = 0; h < 2; ++h) {
    // 0 = m, then m + 1, then z; 1 = m - 1, then s; 3 = p; 2 = e, then the
    // result (log2 reads the unflushed x, never vector 2).
    widen_float(0, 4, h);
    vsubpd(V(1), V(0), dconst(1.0));
    vaddpd(V(0), V(0), dconst(1.0));
    vdivpd(V(1), V(1), V(0));      // s
    vmulpd(V(0), V(1), V(1));      // z
    if (z_) vbroadcastsd(Zmm(3), const_mem64(std::bit_cast<uint64_t>(fp::kLg2Poly.c[10])));
    else vmovapd(V(3), const_vec64(std::bit_cast<uint64_t>(fp::kLg2Poly.c[10])));
    for (int k = 9; k >= 0; --k) vfmadd213pd(V(3), V(0), dconst(fp::kLg2Poly.c[k]));
    widen_int(2, 5, h);
    vfmadd231pd(V(2), V(1), V(3));  // s * p + e
    narrow(2, h);
  }
  // Special lanes, from the unflushed bits: +inf -> +inf; negative or NaN
  // -> NaN; zero or subnormal (flushed to a zero of either sign) -> -inf.
  if (z_) {
    vpcmpeqd(k2, V(x), ptr_b[rip + const32_[0x7F800000u]]);
    vpbroadcastd(V(d) | k2, const_mem(0x7F800000u));
    vfpclassps(k2, V(x), 0x81 | 0x40 | 0x10);  // QNaN, SNaN, negative finite, -inf
    vpbroadcastd(V(d) | k2, const_mem(kCanonicalNan));
    vptestnmd(k2, V(x), ptr_b[rip + const32_[0x7F800000u]]);
    vpbroadcastd(V(d) | k2, const_mem(0xFF800000u));
  } else {
    vpcmpeqd(V(4), V(x), const_vec(0x7F800000u));
    vblendvps(V(d), V(d), const_vec(0x7F800000u), V(4));
    // negative (sign set) or NaN: x unordered, or x's bits as i32 < 0
    vcmpps(V(4), V(x), V(x), 0x03);
    vpxor(V(5), V(5), V(5));
    vpcmpgtd(V(5), V(5), V(x));
    vpor(V(4), V(4), V(5));
    vblendvps(V(d), V(d), const_vec(kCanonicalNan), V(4));
    vpand(V(4), V(x), const_vec(0x7F800000u));
    vpcmpeqd(V(4), V(4), const_vec(0));
    vblendvps(V(d), V(d), const_vec(0xFF800000u), V(4));
  }
}

}  // namespace gpurc::x64
