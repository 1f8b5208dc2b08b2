// The MAD's two translations (Translator::fmad): the common case inline and
// the exact rules behind an any() vote, and the straight-line exact form
// inside loops. Each case runs on the reference interpreter and on every
// engine of the host (the IR interpreter, jit-avx512, jit-avx2) from the
// same registers; warps whose lanes all take the common case, mixed warps
// and warps of edge operands only, with operands aimed at the edges of the
// common case's test (products near 2^-100 and 2^127, products rounded up
// to a power of two, sums that cancel to the smallest normals or below,
// denormal and zero sources, NaN, inf and signed zeros).
#include <cmath>
#include <cstring>
#include <map>
#include <utility>

#include "frontend/tesla/translate.h"
#include "ir/passes.h"
#include "ir/scalar.h"
#include "translate_harness.h"

namespace gpurc_test_tesla_mad_paths {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace tesla_tr;

namespace {

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// A float with a random mantissa and sign and an exponent (biased) in [lo, hi].
uint32_t random_float(std::mt19937& rng, unsigned lo, unsigned hi) {
  std::uniform_int_distribution<unsigned> e(lo, hi);
  return (rng() & 0x80000000u) | (e(rng) << 23) | (rng() & 0x7fffffu);
}

// Operands aimed at the edges of the common case (x * y + z in $r1 $r2 $r3).
void edge_operands(std::mt19937& rng, uint32_t& x, uint32_t& y, uint32_t& z) {
  static const uint32_t specials[] = {0x00000000u, 0x80000000u, 0x00000001u, 0x807fffffu, 0x00800000u,
                                      0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffffffffu, 0x7f7fffffu,
                                      0x3f800000u, 0xbf800000u, 0x3f800001u, 0x3f7fffffu, 0x0d800000u};
  auto special = [&] { return specials[rng() % (sizeof specials / sizeof specials[0])]; };
  switch (rng() % 12) {
    case 0:  // special values anywhere
      x = special(), y = special(), z = special();
      break;
    case 1:  // product near 2^-100 (the common case's lower edge), z small
      x = random_float(rng, 60, 80);
      y = random_float(rng, 127 - 100 - (((x >> 23) & 0xff) - 127) - 1, 127 - 100 - (((x >> 23) & 0xff) - 127) + 1);
      z = random_float(rng, 0, 40);
      break;
    case 2:  // product near 2^127 (the upper edge), z large
      x = random_float(rng, 180, 200);
      y = random_float(rng, 127 + 127 - (((x >> 23) & 0xff) - 127) - 1, 127 + 127 - (((x >> 23) & 0xff) - 127) + 1);
      z = random_float(rng, 240, 254);
      break;
    case 3: {  // z = -(x y) rounded: cancellation down to the product's last bits
      x = random_float(rng, 40, 140);
      y = random_float(rng, 40, 140);
      float p;
      float fx, fy;
      std::memcpy(&fx, &x, 4);
      std::memcpy(&fy, &y, 4);
      p = fx * fy;
      z = bits_of(p) ^ 0x80000000u;
      if (rng() & 1) z += (rng() & 3) - 1;
      break;
    }
    case 4:  // results near the smallest normal
      x = random_float(rng, 1, 30);
      y = random_float(rng, 100, 130);
      z = random_float(rng, 0, 3);
      break;
    case 5:  // mantissas of all ones: products that round up to a power of two
      x = (rng() & 0x80000000u) | (random_float(rng, 100, 150) & 0x7f800000u) | 0x7fffffu;
      y = (rng() & 0x80000000u) | (random_float(rng, 100, 150) & 0x7f800000u) | (0x7fffffu - (rng() & 7));
      z = random_float(rng, 80, 150);
      break;
    case 6:  // denormal or zero z
      x = random_float(rng, 100, 150), y = random_float(rng, 100, 150);
      z = (rng() & 0x80000000u) | ((rng() & 1) ? (rng() & 0x7fffffu) : 0u);
      break;
    case 7: {  // ordinary product, z at the edges of its test: inf, NaN, largest and smallest normals
      static const uint32_t zs[] = {0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffffffffu, 0x7f800001u,
                                    0x7f7fffffu, 0xff7fffffu, 0x00800000u, 0x80800000u, 0x7f000000u};
      x = random_float(rng, 100, 154), y = random_float(rng, 100, 154);
      z = zs[rng() % (sizeof zs / sizeof zs[0])];
      break;
    }
    case 8:  // exact ties: y = 1.5 * 2^k, x with its last mantissa bit set (25-bit products)
      x = random_float(rng, 90, 160) | 1u;
      y = (rng() & 0x80000000u) | (random_float(rng, 90, 160) & 0x7f800000u) | 0x400000u;
      z = (rng() & 1) ? random_float(rng, 60, 200) : (x ^ (rng() & 0x80000000u));
      break;
    case 9:  // a denormal factor beside one large enough to bring the unflushed product into range
      x = (rng() & 0x80000000u) | (1u + (rng() & 0x7ffffeu));
      y = random_float(rng, 200, 254);
      z = random_float(rng, 1, 254);
      if (rng() & 1) std::swap(x, y);
      break;
    case 10: {  // (1 + 2^-23) (2 - 2^-22) = 2 - 2^-45 scaled to 2^127 or 2^-100: rounded to nearest, the
                // product is the power of two at the edge; toward zero, the float below it
      const bool upper = rng() & 1;
      const unsigned sum = upper ? 380u : 153u, e1 = upper ? 126u + rng() % 120u : 30u + rng() % 90u;
      x = (rng() & 0x80000000u) | (e1 << 23) | 1u;
      y = (rng() & 0x80000000u) | ((sum - e1) << 23) | 0x7ffffeu;
      if (rng() & 1) std::swap(x, y);
      z = upper ? random_float(rng, 200, 254) : random_float(rng, 1, 60);
      break;
    }
    default:  // ordinary operands
      x = random_float(rng, 100, 154), y = random_float(rng, 100, 154), z = random_float(rng, 100, 154);
      break;
  }
}

// The product of two f32 values rounded toward zero (exact in a double,
// then rounded to nearest and stepped back when that went away from zero).
float product_rz(float a, float b) {
  const double exact = double(a) * double(b);
  float r = float(exact);
  if (std::fabs(double(r)) > std::fabs(exact)) r = std::nextafter(r, 0.0f);
  return r;
}

// One warp (or a partial one) of `program` with $r1..$r3 from `pick`.
void run_mad(const std::string& program, unsigned threads, uint32_t seed, int mode) {
  Case c;
  c.src = program;
  c.threads = threads;
  c.init = [seed, mode](unsigned i, ThreadState& s) {
    std::mt19937 rng(seed * 977 + i);
    uint32_t x, y, z;
    if (mode == 0) {  // every lane in the common case
      x = random_float(rng, 100, 154), y = random_float(rng, 100, 154), z = random_float(rng, 100, 154);
    } else if (mode == 1 && i != seed % 32) {  // one lane off it
      x = random_float(rng, 100, 154), y = random_float(rng, 100, 154), z = random_float(rng, 100, 154);
    } else {
      edge_operands(rng, x, y, z);
    }
    s.r[1] = x, s.r[2] = y, s.r[3] = z;
    s.r[4] = 1 + (i & 3);  // loop count (divergent)
    s.r[9] = 0;
    s.r[10] = 0xffffffffu;
  };
  c.global0.assign(0x200, 0);
  check_case(c);
}

const char* kStraight =
    "add f32 $r5 (mul $r1 $r2) $r3\n"
    "add f32 $r6 neg (mul $r3 $r2) neg $r1\n"
    "add sat f32 $c1 $r7 (mul $r2 $r1) $r3\n"
    "exit nop\n";

// The same with an SFU op, which no host "denormals are zero" mode runs as
// the model says: the function keeps IEEE mode.
const char* kStraightSfu =
    "add f32 $r5 (mul $r1 $r2) $r3\n"
    "rcp f32 $r8 $r1\n"
    "add f32 $r6 neg (mul $r3 $r2) neg $r1\n"
    "add sat f32 $c1 $r7 (mul $r2 $r1) $r3\n"
    "exit nop\n";

// The same MADs in a loop (the straight-line exact form).
const char* kLoop =
    "loop: add f32 $r5 (mul $r1 $r2) $r3\n"
    "add f32 $r6 neg (mul $r3 $r2) neg $r1\n"
    "add b32 $r4 $r4 $r10\n"
    "set $c0 $r8 e u32 $r4 $r9\n"
    "(e $c0) bra #loop\n"
    "exit nop\n";

size_t count_op(const gpurc::ir::Function& f, gpurc::ir::Opcode op) {
  size_t n = 0;
  for (const auto& b : f.blocks)
    for (auto v : b.insts) n += f.insts[v].op == op;
  return n;
}

gpurc::ir::Function translated(const std::string& src) {
  Target t;
  std::string err;
  REQUIRE(parse_target("g200", t, err));
  std::vector<uint32_t> code;
  REQUIRE(assemble(all_long(src), t, code, err));
  TranslateOptions opt;
  opt.target = t;
  opt.launch_abi = false;
  gpurc::ir::Function f;
  INFO(err);
  REQUIRE(translate(code, opt, f, err));
  return f;
}

}  // namespace

TEST_CASE("tesla mad: common case inline, exact rules behind a vote, every engine bit-exact") {
  const uint32_t seeds = light() ? 6 : 40;
  for (uint32_t s = 1; s <= seeds; ++s) {
    INFO("seed " << s);
    for (int mode = 0; mode < 3; ++mode) {
      run_mad(kStraight, 32, s, mode);
      run_mad(kStraight, 5 + s % 27, s + 1000, mode);  // partial warp
      run_mad(kStraightSfu, 32, s + 2000, mode);          // IEEE mode on the x64 tiers
    }
  }
}

TEST_CASE("tesla mad: inside a loop the exact form, bit-exact") {
  for (uint32_t s = 1; s <= (light() ? 3u : 12u); ++s)
    for (int mode = 0; mode < 3; ++mode) run_mad(kLoop, 32, s, mode);
}

// The common case's product (an RN fmul with FtzIn in the block of a vote)
// and the residual fma and sum after it: FtzIn on those two only where the
// rest of the function flushes (`daz`), the sum never flushed on output.
void check_common_case(const gpurc::ir::Function& f, bool daz) {
  using gpurc::ir::Opcode;
  size_t products = 0;
  for (const auto& b : f.blocks) {
    bool has_vote = false;
    for (auto v : b.insts) has_vote = has_vote || f.insts[v].op == Opcode::Any;
    if (!has_vote) continue;
    for (auto v : b.insts) {
      const auto& in = f.insts[v];
      if (in.op != Opcode::FMul || !(in.fflags & gpurc::ir::ff::FtzIn)) continue;
      ++products;
      // No NaN test on these three (their NaN lanes fail the test).
      CHECK(gpurc::ir::nan_rule(in.fflags) == gpurc::ir::NanRule::Any);
      size_t fmas = 0, sums = 0;
      bool seen = false;
      for (auto w : b.insts) {
        const auto& wi = f.insts[w];
        if (w == v) seen = true;
        if (!seen || w == v) continue;
        if (wi.op == Opcode::Any) break;
        if (wi.op == Opcode::FFma || wi.op == Opcode::FAdd) {
          CHECK(((wi.fflags & gpurc::ir::ff::FtzIn) != 0) == daz);
          CHECK((wi.fflags & gpurc::ir::ff::FtzOut) == 0);
          CHECK(gpurc::ir::nan_rule(wi.fflags) == gpurc::ir::NanRule::Any);
          ++(wi.op == Opcode::FFma ? fmas : sums);
        }
      }
      CHECK(fmas == 1);
      CHECK(sums == 1);
    }
  }
  CHECK(products == 3);
  // Every float op of the function flushes its inputs exactly when `daz`
  // says (the exact form's ops too), except the SFU op of the other variant;
  // only the common cases' nine ops have the Any NaN rule.
  size_t any_rule = 0;
  for (const auto& b : f.blocks)
    for (auto v : b.insts) {
      const auto& in = f.insts[v];
      if (in.op == Opcode::FAdd || in.op == Opcode::FMul || in.op == Opcode::FFma || in.op == Opcode::FSub)
        if (daz) CHECK((in.fflags & gpurc::ir::ff::FtzIn) != 0);
      if (gpurc::ir::op_info(in.op).uses_fflags) any_rule += gpurc::ir::nan_rule(in.fflags) == gpurc::ir::NanRule::Any;
    }
  CHECK(any_rule == 9);
}

TEST_CASE("tesla mad: the common case's shape (one vote outside loops, none inside)") {
  using gpurc::ir::Opcode;
  gpurc::ir::Function f = translated(kStraight);
  CHECK(count_op(f, Opcode::Any) == 3);  // one vote per MAD
  CHECK(count_op(f, Opcode::FFma) == 3);
  // Every float op flushes its inputs, so the MADs' ops get FtzIn too (it
  // changes nothing in the lanes that take their results) and the x64 tiers
  // run the function in DAZ mode, where FtzIn is free (mad_daz_flags).
  check_common_case(f, true);
  // An SFU op (not a flushing arithmetic op) keeps the x64 tiers in IEEE
  // mode: then only the product flushes its factors, the residual's fma and
  // the sum read theirs as they are (their lanes that pass the test hold no
  // denormal operand), so the host does not flush the factors twice.
  check_common_case(translated(kStraightSfu), false);
  gpurc::ir::Function g = translated(kLoop);
  CHECK(count_op(g, Opcode::Any) == 0);
  CHECK(count_op(g, Opcode::FFma) == 0);
  // A MAD after the loop: the vote form again.
  gpurc::ir::Function h = translated(std::string(kLoop).replace(std::string(kLoop).find("exit nop"), 8,
                                                                "add f32 $r7 (mul $r1 $r2) $r3\nexit nop"));
  CHECK(count_op(h, Opcode::Any) == 1);
  CHECK(count_op(h, Opcode::FFma) == 1);
}

// A NaN result of an op with the Any NaN rule, as an engine may leave it:
// with `rng`, a random NaN of either sign (recorded in *nans), else the
// interpreter's.
struct AnyNans {
  std::mt19937* rng = nullptr;
  size_t nans = 0;
};

// One lane of value v of the translated (pre-pass) IR, its vars read from
// `vars` (register values by var index); pure ops through ir::eval_lane.
uint64_t eval_value(const gpurc::ir::Function& f, gpurc::ir::ValueId v, const std::map<uint64_t, uint64_t>& vars,
                    std::map<gpurc::ir::ValueId, uint64_t>& memo, AnyNans& any) {
  using gpurc::ir::Opcode;
  if (auto it = memo.find(v); it != memo.end()) return it->second;
  const auto& in = f.insts[v];
  uint64_t r = 0;
  if (in.op == Opcode::LoadVar || in.op == Opcode::GetVar) {
    auto it = vars.find(in.imm);
    REQUIRE_MESSAGE(it != vars.end(), "var " << f.vars[in.imm].name);
    r = it->second;
  } else {
    std::vector<uint64_t> args;
    for (auto a : in.args) args.push_back(eval_value(f, a, vars, memo, any));
    const gpurc::ir::LaneOp op = gpurc::ir::lane_op(f, v);
    std::string why;
    REQUIRE_MESSAGE(gpurc::ir::lane_op_supported(op, &why), why << " op " << int(in.op));
    r = gpurc::ir::eval_lane(op, args.data());
    if (any.rng && in.type == gpurc::ir::Type::F32 && gpurc::ir::op_info(in.op).uses_fflags &&
        gpurc::ir::nan_rule(in.fflags) == gpurc::ir::NanRule::Any && (r & 0x7fffffffu) > 0x7f800000u) {
      r = ((*any.rng)() & 0x80000000u) | 0x7f800000u | (1u + (*any.rng)() % 0x7fffffu);
      ++any.nans;
    }
  }
  memo[v] = r;
  return r;
}

TEST_CASE("tesla mad: the common case's test takes exactly the lanes it should") {
  // The vote's operand (not common), evaluated per lane, against its
  // definition: the product of the flushed factors rounded to nearest in
  // [2^-100, 2^127) and source 3 a finite normal. A test that rejected
  // ordinary lanes would still give exact results (through the exact
  // block), only slowly: this is what catches it. The fast path's ops have
  // the Any NaN rule: their NaN results are drawn at random here (any NaN
  // an engine may leave), and the test must not change with them, nor may
  // a lane that passes it see such a NaN.
  using gpurc::ir::Opcode;
  gpurc::ir::Function f = translated("add f32 $r5 (mul $r1 $r2) $r3\nexit nop\n");
  gpurc::ir::ValueId vote_arg = gpurc::ir::kNoValue;
  for (const auto& b : f.blocks)
    for (auto v : b.insts)
      if (f.insts[v].op == Opcode::Any) vote_arg = f.insts[v].args[0];
  REQUIRE(vote_arg != gpurc::ir::kNoValue);
  gpurc::ir::ValueId sum = gpurc::ir::kNoValue;  // the fast path's fadd
  for (const auto& b : f.blocks)
    for (auto v : b.insts)
      if (f.insts[v].op == Opcode::FAdd && sum == gpurc::ir::kNoValue) sum = v;
  REQUIRE(sum != gpurc::ir::kNoValue);
  REQUIRE(gpurc::ir::nan_rule(f.insts[sum].fflags) == gpurc::ir::NanRule::Any);
  auto var_of = [&](const std::string& n) {
    for (size_t i = 0; i < f.vars.size(); ++i)
      if (f.vars[i].name == n) return uint64_t(i);
    FAIL("no var " << n);
    return uint64_t(0);
  };
  const uint64_t r1 = var_of("r1"), r2 = var_of("r2"), r3 = var_of("r3");
  auto flush = [](uint32_t v) { return (v & 0x7f800000u) == 0 ? v & 0x80000000u : v; };
  std::mt19937 rng(77);
  size_t taken = 0, any_nan_lanes = 0, rounded_up_to_low = 0, rounded_up_to_high = 0;
  const int n = light() ? 4000 : 40000;
  for (int k = 0; k < n; ++k) {
    uint32_t x, y, z;
    if (k % 3 == 0) x = random_float(rng, 100, 154), y = random_float(rng, 100, 154), z = random_float(rng, 1, 254);
    else edge_operands(rng, x, y, z);
    float fx, fy;
    const uint32_t ux = flush(x), uy = flush(y);
    std::memcpy(&fx, &ux, 4);
    std::memcpy(&fy, &uy, 4);
    const uint32_t e = (bits_of(fx * fy) >> 23) & 0xff, ez = (z >> 23) & 0xff;
    // (Products at the test's edges that rounding to nearest took up to it.)
    const uint32_t e_rz = (bits_of(product_rz(fx, fy)) >> 23) & 0xff;
    rounded_up_to_low += e == 0x1b && e_rz == 0x1a;
    rounded_up_to_high += e == 0xfe && e_rz == 0xfd;
    const bool common = e >= 0x1b && e < 0xfe && ez >= 1 && ez < 0xff;
    std::map<gpurc::ir::ValueId, uint64_t> memo;
    AnyNans any{&rng};
    const uint64_t not_common = eval_value(f, vote_arg, {{r1, x}, {r2, y}, {r3, z}}, memo, any);
    // The sum (the fast path's result; evaluated with the same memo, so
    // with the same NaN draws).
    (void)eval_value(f, sum, {{r1, x}, {r2, y}, {r3, z}}, memo, any);
    INFO(std::hex << x << " " << y << " " << z);
    CHECK(not_common == (common ? 0u : 1u));
    if (common) CHECK(any.nans == 0);
    taken += common;
    any_nan_lanes += any.nans != 0;
  }
  CHECK(taken > size_t(n) / 3);  // the ordinary third at least
  CHECK(any_nan_lanes > 0);      // and NaN draws in others
  CHECK(rounded_up_to_low > 0);
  CHECK(rounded_up_to_high > 0);
}

TEST_CASE("tesla mad: after a loop, the common case inline again, bit-exact") {
  std::string src = kLoop;
  src.replace(src.find("exit nop"), 8, "add f32 $r7 (mul $r1 $r2) $r3\nexit nop");
  for (uint32_t s = 1; s <= (light() ? 3u : 12u); ++s)
    for (int mode = 0; mode < 3; ++mode) run_mad(src, 32, s + 500, mode);
}

namespace {

// saxpy's data side (nineteenth session): x and y loaded from g0[], the MAD,
// y stored back. The x64 tiers keep both loads where the access found them
// (load homes: the range tests' integer ops and the exact block read them
// there), so this runs the common case and the exact block from guest
// memory with x and y apart, the same, and overlapping by two elements
// either way (the store over y after both reads).
const char* kLoadedMad =
    "ld b32 $r8 g0[$r6]\n"
    "ld b32 $r9 g0[$r7]\n"
    "add f32 $r9 (mul $r10 $r8) $r9\n"
    "st b32 g0[$r7] $r9\n"
    "exit nop\n";

// The same with an SFU op: IEEE mode on the x64 tiers.
const char* kLoadedMadSfu =
    "ld b32 $r8 g0[$r6]\n"
    "ld b32 $r9 g0[$r7]\n"
    "add f32 $r9 (mul $r10 $r8) $r9\n"
    "st b32 g0[$r7] $r9\n"
    "rcp f32 $r11 $r10\n"
    "exit nop\n";

// mode 0: every element in the common case; 1: one lane off it (at `odd`,
// in x or in y); 2: edge operands everywhere. `shift`: y's base minus x's,
// in elements.
void run_loaded_mad(const char* program, unsigned threads, uint32_t seed, int mode, int shift) {
  std::mt19937 rng(seed * 7919 + uint32_t(mode) * 31 + uint32_t(shift + 8));
  const uint32_t x_base = 0x40, y_base = uint32_t(int(x_base) + 4 * shift);
  Case c;
  c.src = program;
  c.threads = threads;
  c.global0.assign(0x200, 0);
  std::vector<uint32_t> words(0x200 / 4);
  uint32_t a = random_float(rng, 110, 144);
  for (size_t k = 0; k < words.size(); ++k) {
    uint32_t x, y, z;
    if (mode == 2) {
      edge_operands(rng, x, y, z);
      if (k == 0) a = y;
      words[k] = (rng() & 1) ? x : z;
    } else {
      words[k] = random_float(rng, 100, 154);
    }
  }
  if (mode == 1) {  // one element off the common case: a denormal, an inf, a NaN, a zero or a huge value
    static const uint32_t odd_values[] = {0x00000001u, 0x7f800000u, 0x7fc00001u, 0x80000000u, 0x7e000000u, 0x0c000000u};
    const unsigned lane = seed % threads;
    const uint32_t base = (seed & 1) ? x_base : y_base;
    words[(base / 4) + lane] = odd_values[(seed / 2) % std::size(odd_values)];
  }
  std::memcpy(c.global0.data(), words.data(), c.global0.size());
  c.init = [=](unsigned i, ThreadState& st) {
    st.r[6] = x_base + 4 * i;
    st.r[7] = y_base + 4 * i;
    st.r[10] = a;
  };
  check_case(c);
}

}  // namespace

TEST_CASE("tesla mad: loaded operands (x and y apart, the same, overlapping), every engine bit-exact") {
  const uint32_t seeds = light() ? 8 : 40;
  for (uint32_t s = 1; s <= seeds; ++s) {
    INFO("seed " << s);
    for (int mode = 0; mode < 3; ++mode)
      for (int shift : {32, 0, 2, -2}) {
        INFO("mode " << mode << " shift " << shift);
        run_loaded_mad(kLoadedMad, 32, s, mode, shift);
        run_loaded_mad(kLoadedMad, 5 + s % 27, s + 1000, mode, shift);  // partial warp
        run_loaded_mad(kLoadedMadSfu, 32, s + 2000, mode, shift);       // IEEE mode on the x64 tiers
      }
  }
}

}  // namespace gpurc_test_tesla_mad_paths
