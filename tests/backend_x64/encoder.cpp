// The fast VEX / EVEX encoder (backend_x64/encoder.h) writes exactly xbyak's
// bytes: every row of GPURC_X64_FAST_FORMS is encoded through FastEncoder
// and through a plain Xbyak::CodeGenerator over all registers (0-31 in each
// operand position), xmm / ymm / zmm, opmasks with and without zeroing,
// broadcasts, and addresses over every base, index and scale and
// displacements around the disp8 / EVEX disp8*N limits; both must give the
// same bytes or both reject the operands. Every operand shape the fast path
// claims must be taken by it (not silently left to xbyak), and the shapes it
// leaves to xbyak must come out the same through the fallback.
#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>
#include <array>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "backend_x64/encoder.h"

namespace gpurc_test_backend_x64_encoder {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace Xbyak;
using namespace Xbyak::util;
using gpurc::x64::FastEncoder;

namespace {

constexpr size_t kBuf = 4096;

struct Checker {
  alignas(64) uint8_t fast_buf[kBuf];
  alignas(64) uint8_t ref_buf[kBuf];
  FastEncoder fast{kBuf, fast_buf};
  CodeGenerator ref{kBuf, ref_buf};
  size_t cases = 0, taken = 0, rejected = 0;
  std::string label;

  // emit(g) encodes one instruction on g. expect_fast: the operands are a
  // shape fast_vex handles, so it must have encoded it when xbyak accepts it.
  template <class Emit>
  void run(Emit&& emit, bool expect_fast = true) {
    fast.resetSize();
    ref.resetSize();
    const size_t before = fast.fast_encoded();
    bool fast_err = false, ref_err = false;
    try {
      emit(fast);
    } catch (const Xbyak::Error&) {
      fast_err = true;
    }
    try {
      emit(ref);
    } catch (const Xbyak::Error&) {
      ref_err = true;
    }
    ++cases;
    const bool was_fast = fast.fast_encoded() != before;
    taken += was_fast;
    INFO(label << " case " << cases);
    REQUIRE(fast_err == ref_err);
    if (ref_err) {
      ++rejected;
      REQUIRE(!was_fast);
      return;
    }
    // rip-relative forms address the same offset from each buffer's start.
    REQUIRE(fast.getSize() == ref.getSize());
    REQUIRE(std::memcmp(fast.getCode(), ref.getCode(), fast.getSize()) == 0);
    if (expect_fast) REQUIRE(was_fast);
    else REQUIRE(!was_fast);
  }
};

const Operand::Kind kKinds[] = {Operand::XMM, Operand::YMM, Operand::ZMM};

Xmm vec(Operand::Kind k, int i) { return Xmm(k, i); }

// Register triples: each position over 0..31 with the others spread.
std::vector<std::array<int, 3>> reg_triples() {
  std::vector<std::array<int, 3>> t;
  for (int i = 0; i < 32; ++i) {
    t.push_back({i, (i + 5) % 32, (i + 17) % 32});
    t.push_back({(i + 11) % 32, i, (i + 3) % 32});
    t.push_back({(i + 7) % 32, (i + 19) % 32, i});
  }
  return t;
}

const int64_t kDisps[] = {0,    1,     -1,    3,      4,     8,    12,      16,      32,       48,
                          64,   96,    127,   128,    -128,  -129, 256,     504,     508,      512,
                          1020, 2032,  2048,  4064,   4096,  8128, 8192,    -8192,   -8256,    0x12345,
                          0x7fffffff,   -0x7fffffff - 1,   -4096, -4100, 1016, -1024};

// [base + index * scale + disp] over every base, index and scale, and the
// displacements above; rip-relative targets are offsets from the code start.
struct Mem {
  int base = -1, index = -1, scale = 1;
  int64_t disp = 0;
  bool rip = false;
};
std::vector<Mem> mems() {
  std::vector<Mem> m;
  for (int b = 0; b < 16; ++b)
    for (int64_t d : kDisps) m.push_back({b, -1, 1, d});
  for (int x = 0; x < 16; ++x) {
    if (x == 4) continue;  // rsp cannot be an index
    for (int s : {1, 2, 4, 8})
      for (int64_t d : {0, -72, 4096})
        for (int b : {12, 5, 13, 4}) m.push_back({b, x, s, d});
  }
  for (int64_t d : {0, 100, -3000, 5000}) m.push_back({-1, -1, 1, d, true});
  // The lighter suites (GPURC_TEST_LIGHT: under the sanitizers, whose test
  // drivers build at -O0, and qemu) take every fifth address and every rip
  // target: each base still meets displacements on both sides of the disp8
  // limits, and each index every scale. The release suite takes them all.
  if (std::getenv("GPURC_TEST_LIGHT")) {
    std::vector<Mem> some;
    for (size_t i = 0; i < m.size(); ++i)
      if (i % 5 == 0 || m[i].rip) some.push_back(m[i]);
    m = std::move(some);
  }
  return m;
}

Address make_addr(CodeGenerator& g, const Mem& m, bool bcast) {
  const AddressFrame& f = bcast ? g.ptr_b : g.ptr;
  if (m.rip) return f[rip + (g.getCode() + 2048 + m.disp)];
  RegExp e = Reg64(m.base);
  if (m.index >= 0) e = e + Reg64(m.index) * m.scale;
  return f[e + m.disp];
}

const std::vector<std::array<int, 3>> kTriples = reg_triples();
const std::vector<Mem> kMems = mems();
// The register beside an address: each of the prefix's register bits (3, 4) clear and set.
const int kMemRegs[] = {0, 9, 22, 31};

// The destination with every opmask, with and without zeroing.
template <class T>
T masked(const T& x, int k, bool z) {
  T r = x;
  if (k) r = r | Opmask(k);
  if (z) r = r | T_z;
  return r;
}

// Register operands and addresses for the third operand of a shape; f(g, rm)
// encodes with rm. Registers: `kind` (and, mixed, every other kind).
template <class F>
void each_rm(Checker& c, Operand::Kind kind, bool bcast_ok, F&& f) {
  for (int i = 0; i < 32; ++i) c.run([&](auto& g) { f(g, vec(kind, i)); });
  for (const Mem& m : kMems) {
    c.run([&](auto& g) { f(g, make_addr(g, m, false)); });
    if (bcast_ok) c.run([&](auto& g) { f(g, make_addr(g, m, true)); });
  }
}

}  // namespace

// Each row is checked by the function of its shape; `E` calls the mnemonic.
#define ROW(name, shape, ...)                                                 \
  SUBCASE(#name " " #shape) {                                                 \
    Checker& c = *checker;                                                    \
    c.label = #name " " #shape;                                               \
    const gpurc::x64::VexForm& form = FastEncoder::name##_##shape;            \
    check_##shape(c, form, [](auto& g, auto&&... a) { g.name(a...); });       \
    CHECK(c.taken > 0);                                                       \
  }

namespace {

using gpurc::x64::VexForm;

// FastEncoder's (x, op) against xbyak's (x, x, op).
template <class G, class E, class... A>
void two_operand(G& g, E& e, const Xmm& x, const A&... a) {
  if constexpr (std::is_same_v<G, FastEncoder>) e(g, x, a...);
  else e(g, x, x, a...);
}

template <bool kTwo = true, class E>
void check_kRRM(Checker& c, const VexForm& f, E e) {
  for (auto k : kKinds) {
    for (auto [a, b, r] : kTriples) c.run([&](auto& g) { e(g, vec(k, a), vec(k, b), vec(k, r)); });
    for (int m = 0; m < 8; ++m)
      for (bool z : {false, true}) {
        c.run([&](auto& g) { e(g, masked(vec(k, 3), m, z), vec(k, 20), vec(k, 9)); });
        c.run([&](auto& g) { e(g, masked(vec(k, 17), m, z), vec(k, 1), g.ptr_b[r12 + r14 + 64]); });
      }
    for (int i : kMemRegs) each_rm(c, k, f.bcast != 0, [&](auto& g, const auto& rm) { e(g, vec(k, i), vec(k, 31 - i), rm); });
    if constexpr (kTwo) {  // (x, op) is (x, x, op)
      c.run([&](auto& g) { two_operand(g, e, vec(k, 2), vec(k, 7)); });
      c.run([&](auto& g) { two_operand(g, e, vec(k, 2), g.ptr[rax + 8]); });
    }
  }
  // Left to xbyak: mixed kinds (an error), a base-less address, a 32-bit base.
  c.run([&](auto& g) { e(g, xmm1, ymm2, ymm3); }, false);
  c.run([&](auto& g) { e(g, ymm1, ymm2, g.ptr[r14 * 2 + 8]); }, false);
  c.run([&](auto& g) { e(g, ymm1, ymm2, g.ptr[r14 * 4 + 8]); }, false);
  c.run([&](auto& g) { e(g, ymm1, ymm2, g.ptr[eax + 8]); }, false);
}

template <class E>
void check_kROO(Checker& c, const VexForm& f, E e) {
  check_kRRM(c, f, e);
  // Embedded rounding: xbyak's.
  c.run([&](auto& g) { e(g, zmm1, zmm2, zmm3 | T_rz_sae); }, false);
}

template <class E>
void check_kRRMI(Checker& c, const VexForm& f, E e) {
  for (int imm : {0, 0x5A, 0xFF})
    check_kRRM<false>(c, f, [&](auto& g, auto&&... a) { e(g, a..., uint8_t(imm)); });
}

template <class E>
void check_kBlendV(Checker& c, const VexForm&, E e) {
  for (auto k : {Operand::XMM, Operand::YMM})
    for (auto [a, b, r] : kTriples)
      for (int x4 : {0, 7, 12, 15}) {
        c.run([&](auto& g) { e(g, vec(k, a), vec(k, b), vec(k, r), vec(k, x4)); });
        c.run([&](auto& g) { e(g, vec(k, a & 15), vec(k, b & 15), g.ptr[Reg64(r & 15) + r * 8], vec(k, x4)); });
      }
}

template <class E>
void check_kKRM_imm(Checker& c, const VexForm& f, E e, bool has_imm) {
  auto call = [&](auto& g, const Opmask& k, const Xmm& x, const auto& op) {
    if (has_imm) e(g, k, x, op, uint8_t(5));
    else e(g, k, x, op);
  };
  for (auto kind : kKinds) {
    for (auto [a, b, r] : kTriples) c.run([&](auto& g) { call(g, Opmask(a & 7), vec(kind, b), vec(kind, r)); });
    for (int m = 0; m < 8; ++m)
      c.run([&](auto& g) { call(g, Opmask(2) | Opmask(m), vec(kind, 30), vec(kind, 4)); });
    for (int i : kMemRegs)
      each_rm(c, kind, f.bcast != 0, [&](auto& g, const auto& rm) { call(g, Opmask(i & 7), vec(kind, i), rm); });
  }
  c.run([&](auto& g) { call(g, k1, zmm2, ymm3); }, false);
}
template <class E>
void check_kKRM(Checker& c, const VexForm& f, E e) {
  check_kKRM_imm(c, f, [&](auto& g, auto&&... a) {
    if constexpr (sizeof...(a) == 3) e(g, a...);
  }, false);
}
template <class E>
void check_kKRMI(Checker& c, const VexForm& f, E e) {
  check_kKRM_imm(c, f, [&](auto& g, auto&&... a) {
    if constexpr (sizeof...(a) == 4) e(g, a...);
  }, true);
}

template <class E>
void check_kRM(Checker& c, const VexForm& f, E e) {
  for (auto k : kKinds) {
    for (int i = 0; i < 32; ++i)
      for (auto k2 : kKinds)
        for (int j : {0, 8, 16, 31, i}) c.run([&](auto& g) { e(g, vec(k, i), vec(k2, j)); });
    for (int m = 0; m < 8; ++m)
      for (bool z : {false, true}) c.run([&](auto& g) { e(g, masked(vec(k, 5), m, z), vec(k, 12)); });
    for (int i : kMemRegs) each_rm(c, k, f.bcast != 0, [&](auto& g, const auto& rm) { e(g, vec(k, i), rm); });
  }
}

template <class E>
void check_kRMB(Checker& c, const VexForm&, E e) {
  for (auto k : kKinds) {
    for (int i = 0; i < 32; ++i)
      for (int j : {0, 8, 16, 31, i}) c.run([&](auto& g) { e(g, vec(k, i), Xmm(j)); });
    for (int m = 0; m < 8; ++m)
      for (bool z : {false, true}) c.run([&](auto& g) { e(g, masked(vec(k, 5), m, z), g.ptr[r12 + r14 + 8]); });
    for (int i : kMemRegs)
      for (const Mem& m : kMems) c.run([&](auto& g) { e(g, vec(k, i), make_addr(g, m, false)); });
  }
  c.run([&](auto& g) { e(g, ymm1, ymm2); }, false);  // the source must be xmm or memory: xbyak's error
}

template <class E>
void check_kRG32(Checker& c, const VexForm&, E e) {
  for (auto k : kKinds)
    for (int i = 0; i < 32; ++i)
      for (int r = 0; r < 16; ++r) c.run([&](auto& g) { e(g, vec(k, i), Reg32(r)); });
  for (int m = 0; m < 8; ++m) c.run([&](auto& g) { e(g, masked(zmm9, m, m & 1), eax); });
}

template <class E>
void check_kRMI(Checker& c, const VexForm& f, E e) {
  for (int imm : {0, 0x1B, 0xFF})
    check_kRM(c, f, [&](auto& g, const auto& x, const auto& op) { e(g, x, op, uint8_t(imm)); });
}

template <class E>
void check_kMR(Checker& c, const VexForm& f, E e) {
  for (auto k : kKinds)
    for (int i : kMemRegs)
      for (const Mem& m : kMems) {
        c.run([&](auto& g) { e(g, make_addr(g, m, false), vec(k, i)); });
        for (int mk : {1, 6})
          if (!m.rip) c.run([&](auto& g) { e(g, make_addr(g, m, false) | Opmask(mk), vec(k, i)); });
      }
  (void)f;
}

template <class E>
void check_kShI(Checker& c, const VexForm& f, E e) {
  for (int imm : {0, 3, 31, 200})
    for (auto k : kKinds) {
      for (int i = 0; i < 32; ++i)
        for (int j : {0, 9, 16, 31, i}) c.run([&](auto& g) { e(g, vec(k, i), vec(k, j), uint8_t(imm)); });
      for (int m = 0; m < 8; ++m)
        for (bool z : {false, true}) c.run([&](auto& g) { e(g, masked(vec(k, 21), m, z), vec(k, 2), uint8_t(imm)); });
      for (int i : kMemRegs)
        for (const Mem& m : kMems) {
          c.run([&](auto& g) { e(g, vec(k, i), make_addr(g, m, false), uint8_t(imm)); });
          if (f.bcast) c.run([&](auto& g) { e(g, vec(k, i), make_addr(g, m, true), uint8_t(imm)); });
        }
      c.run([&](auto& g) { two_operand(g, e, vec(k, 4), uint8_t(imm)); });  // (x, imm): (x, x, imm)
    }
}

}  // namespace

TEST_CASE("x64 fast encoder: every form of the table encodes as xbyak does") {
  auto checker = std::make_unique<Checker>();
  GPURC_X64_FAST_FORMS(ROW)
}

TEST_CASE("x64 fast encoder: a full buffer and labels go to xbyak") {
  // A label address: xbyak resolves it later; fast_vex leaves it.
  auto c = std::make_unique<Checker>();
  c->label = "label";
  c->run([&](auto& g) {
    Label l;
    g.vpaddd(ymm1, ymm2, g.ptr[rip + l]);
    g.L(l);
  }, false);
  // Less room left than the longest instruction: xbyak's bounds check decides.
  // 11 bytes each: two fast, the third with 12 bytes left through xbyak, the
  // fourth does not fit.
  alignas(64) static uint8_t small[34];
  FastEncoder f(sizeof(small), small);
  for (int i = 0; i < 3; ++i) f.vpaddd(zmm1, zmm2, f.ptr[r12 + r14 + 0x1004]);
  CHECK(f.fast_encoded() == 2);
  REQUIRE(f.getSize() == 33);
  CHECK(std::memcmp(small, small + 22, 11) == 0);
  CHECK_THROWS_AS(f.vpaddd(zmm1, zmm2, f.ptr[r12 + r14 + 0x1004]), Xbyak::Error);
}

TEST_CASE("x64 fast encoder: general-purpose mov encodes as xbyak does") {
  auto c = std::make_unique<Checker>();
  c->label = "mov";
  auto gpr = [](int bits, int i) -> Reg { return bits == 64 ? Reg(Reg64(i)) : Reg(Reg32(i)); };
  for (int bits : {32, 64}) {
    // Register to register, every pair.
    for (int d = 0; d < 16; ++d)
      for (int s = 0; s < 16; ++s) c->run([&](auto& g) { g.mov(gpr(bits, d), gpr(bits, s)); });
    // Loads and stores over every base, index, scale, displacement and rip.
    for (int r : {0, 3, 4, 5, 8, 12, 13, 15})
      for (const Mem& m : kMems) {
        c->run([&](auto& g) { g.mov(gpr(bits, r), make_addr(g, m, false)); });
        c->run([&](auto& g) { g.mov(make_addr(g, m, false), gpr(bits, r)); });
      }
  }
  // Sized addresses take the same path.
  c->run([&](auto& g) { g.mov(rax, g.qword[r12 + r14 * 8 + 0x40]); });
  c->run([&](auto& g) { g.mov(g.dword[rsp + 12], r9d); });
  // Left to xbyak: 8- and 16-bit registers, mixed sizes (an error), 32-bit
  // and base-less addresses, rip + label, the moffs form, vectors (an error).
  c->run([&](auto& g) { g.mov(al, cl); }, false);
  c->run([&](auto& g) { g.mov(spl, g.ptr[rax]); }, false);
  c->run([&](auto& g) { g.mov(g.ptr[r13 + 4], r10w); }, false);
  c->run([&](auto& g) { g.mov(rax, ecx); }, false);
  c->run([&](auto& g) { g.mov(eax, g.ptr[ecx + 8]); }, false);
  c->run([&](auto& g) { g.mov(rdx, g.ptr[r14 * 2 + 8]); }, false);
  c->run([&](auto& g) { g.mov(rdx, g.ptr[r14 * 4 + 8]); }, false);
  c->run([&](auto& g) { g.mov(rax, g.ptr[0x1234567890ull]); }, false);
  c->run([&](auto& g) { g.mov(xmm1, rax); }, false);
  c->run([&](auto& g) {
    Label l;
    g.mov(rcx, g.ptr[rip + l]);
    g.L(l);
  }, false);
  CHECK(c->taken > 2 * 16 * 16);
  // A full buffer: xbyak's bounds check decides (3 bytes each, 7 of room).
  alignas(64) static uint8_t small[7];
  FastEncoder f(sizeof(small), small);
  f.mov(rax, rcx);
  CHECK(f.fast_encoded() == 0);
  CHECK(f.getSize() == 3);
}

TEST_CASE("x64 fast encoder: arithmetic with an immediate encodes as xbyak does") {
  auto c = std::make_unique<Checker>();
  auto gpr = [](int bits, int i) -> Reg { return bits == 64 ? Reg(Reg64(i)) : Reg(Reg32(i)); };
  const uint32_t imms[] = {0, 1, 4, 0x7F, 0x80, 0xFF, 0x7FFF, 0x8000, 0x12345678, 0x7FFFFFFF, 0x80000000u,
                           0xFFFF8000u, 0xFFFFFF80u, 0xFFFFFF7Fu, 0xFFFFFFFFu};
  auto each = [&](const char* name, auto&& e) {
    c->label = name;
    const size_t taken = c->taken;
    for (int bits : {32, 64}) {
      for (int r = 0; r < 16; ++r)
        for (uint32_t imm : imms) c->run([&](auto& g) { e(g, gpr(bits, r), imm); });
      for (const Mem& m : kMems)
        for (uint32_t imm : {0u, 0x40u, 0x1000u, 0xFFFFFFF0u}) {
          c->run([&](auto& g) {
            const Address a = make_addr(g, m, false);
            e(g, bits == 64 ? g.qword[a.getRegExp(false)] : g.dword[a.getRegExp(false)], imm);
          }, !m.rip);
        }
      // rip-relative sized addresses (the immediate counts in the displacement).
      for (int64_t d : {0, 100, -3000})
        for (uint32_t imm : {3u, 0x1000u}) {
          c->run([&](auto& g) {
            const uint8_t* t = g.getCode() + 2048 + d;
            if (bits == 64) e(g, g.qword[rip + t], imm);
            else e(g, g.dword[rip + t], imm);
          });
        }
    }
    // Left to xbyak: 8- and 16-bit operands, an address without a size
    // (xbyak's error), 32-bit and base-less addresses.
    c->run([&](auto& g) { e(g, al, 5u); }, false);
    c->run([&](auto& g) { e(g, cx, 0x1234u); }, false);
    c->run([&](auto& g) { e(g, g.ptr[rax + 8], 1u); }, false);
    c->run([&](auto& g) { e(g, g.dword[ecx + 8], 1u); }, false);
    c->run([&](auto& g) { e(g, g.qword[r14 * 2 + 8], 1u); }, false);
    CHECK(c->taken - taken > 2 * 16 * 15);
  };
  each("add", [](auto& g, const auto& op, uint32_t imm) { g.add(op, imm); });
  each("or_", [](auto& g, const auto& op, uint32_t imm) { g.or_(op, imm); });
  each("and_", [](auto& g, const auto& op, uint32_t imm) { g.and_(op, imm); });
  each("sub", [](auto& g, const auto& op, uint32_t imm) { g.sub(op, imm); });
  each("xor_", [](auto& g, const auto& op, uint32_t imm) { g.xor_(op, imm); });
  each("cmp", [](auto& g, const auto& op, uint32_t imm) { g.cmp(op, imm); });
}

TEST_CASE("x64 fast encoder: mov of an immediate into a register encodes as xbyak does") {
  auto c = std::make_unique<Checker>();
  c->label = "mov imm";
  const uint64_t imms[] = {0, 1, 0x7F, 0x80, 0x7FFFFFFF, 0x80000000u, 0xFFFFFFFFu, 0x100000000ull,
                           0xFFFFFFFF80000000ull, 0xFFFFFFFF7FFFFFFFull, 0xFFFFFFFFFFFFFFFFull,
                           0x123456789ABCDEF0ull, 0x00007F0012345678ull};
  for (int r = 0; r < 16; ++r)
    for (uint64_t imm : imms) {
      c->run([&](auto& g) { g.mov(Reg64(r), imm); });
      c->run([&](auto& g) { g.mov(Reg32(r), imm); });
    }
  CHECK(c->taken == 2 * 16 * std::size(imms));
  // Left to xbyak: 8- / 16-bit registers, memory destinations. (A label's
  // mov writes the label's absolute address, which differs between the two
  // buffers: not compared here; it is xbyak's own overload.)
  c->run([&](auto& g) { g.mov(cl, 5); }, false);
  c->run([&](auto& g) { g.mov(r9w, 0x1234); }, false);
  c->run([&](auto& g) { g.mov(g.dword[rax + 8], 7); }, false);
  c->run([&](auto& g) { g.mov(g.qword[r12 + r14 * 4 - 8], 0xFFFFFFFFFFFFFFF0ull); }, false);
}

TEST_CASE("x64 fast encoder: an address given as parts (MemRef) encodes as the Address does") {
  // fast_vex_mem on (reg, vvvv, MemRef) against xbyak's member on
  // (reg, vvvv, m.address()): loads, stores, a three-operand form and a
  // form with an immediate, VEX-only and EVEX-only rows, every register
  // and vector width, every base / index / scale of kMems (no rip-relative
  // form: a MemRef has a base). Registers with an opmask are not taken.
  using gpurc::x64::MemRef;
  auto c = std::make_unique<Checker>();
  std::vector<MemRef> refs;
  for (const Mem& m : kMems)
    if (!m.rip && m.disp == int64_t(int32_t(m.disp)))
      refs.push_back(MemRef{uint8_t(m.base), uint8_t(m.index < 0 ? 0 : m.index), uint8_t(m.index < 0 ? 0 : m.scale),
                            int32_t(m.disp)});
  // The address MemRef::address() gives is the one the tests above build.
  for (const MemRef& r : refs) {
    Address want = r.scale ? c->ref.ptr[Reg64(r.base) + Reg64(r.index) * r.scale + r.disp]
                           : c->ref.ptr[Reg64(r.base) + r.disp];
    CHECK(r.address() == want);
  }
  // emit(g, reg, vvvv (nullptr: none), m): the fast entry on FastEncoder
  // (falling back to the member as the emitter does), the member on xbyak.
  auto each = [&](const char* label, const gpurc::x64::VexForm& f, bool three, auto member) {
    c->label = label;
    c->taken = 0;
    for (auto k : kKinds)
      for (int i : {0, 5, 9, 15, 16, 22, 31})
        for (const MemRef& m : refs) {
          const Xmm x = vec(k, i), v = vec(k, i < 16 ? (i + 7) % 16 : 31 - i);
          // Whatever xbyak accepts must be taken (what it rejects, an EVEX
          // operand of a VEX-only form, must not be).
          c->run([&](auto& g) {
            if constexpr (std::is_same_v<std::decay_t<decltype(g)>, FastEncoder>) {
              if (g.fast_vex_mem(f, x, three ? &v : nullptr, m)) return;
            }
            member(g, x, v, m.address());
          });
        }
    // An opmask or zeroing: declined, nothing written (the member decides).
    for (int mask : {0, 2})
      for (bool z : {false, true}) {
        if (!mask && !z) continue;
        const Xmm x = masked(vec(Operand::ZMM, 3), mask, z);
        c->fast.resetSize();
        CHECK(!c->fast.fast_vex_mem(f, x, three ? &x : nullptr, refs[0]));
        CHECK(c->fast.getSize() == 0);
      }
    INFO(c->label);
    CHECK(c->taken > 0);
  };
  each("vmovdqu load", FastEncoder::vmovdqu_kRM, false, [](auto& g, const Xmm& x, const Xmm&, const Address& a) { g.vmovdqu(x, a); });
  each("vmovdqu store", FastEncoder::vmovdqu_kMR, false, [](auto& g, const Xmm& x, const Xmm&, const Address& a) { g.vmovdqu(a, x); });
  each("vmovdqu32 load", FastEncoder::vmovdqu32_kRM, false, [](auto& g, const Xmm& x, const Xmm&, const Address& a) { g.vmovdqu32(x, a); });
  each("vmovdqu32 store", FastEncoder::vmovdqu32_kMR, false, [](auto& g, const Xmm& x, const Xmm&, const Address& a) { g.vmovdqu32(a, x); });
  each("vmovups load", FastEncoder::vmovups_kRM, false, [](auto& g, const Xmm& x, const Xmm&, const Address& a) { g.vmovups(x, a); });
  each("vpaddd", FastEncoder::vpaddd_kRRM, true, [](auto& g, const Xmm& x, const Xmm& v, const Address& a) { g.vpaddd(x, v, a); });
  each("vpand", FastEncoder::vpand_kRRM, true, [](auto& g, const Xmm& x, const Xmm& v, const Address& a) { g.vpand(x, v, a); });
  each("vpandd", FastEncoder::vpandd_kRRM, true, [](auto& g, const Xmm& x, const Xmm& v, const Address& a) { g.vpandd(x, v, a); });
  // A broadcast's source (tuple1 scalar disp8*N).
  each("vpbroadcastd", FastEncoder::vpbroadcastd_kRMB, false, [](auto& g, const Xmm& x, const Xmm&, const Address& a) { g.vpbroadcastd(x, a); });
}

TEST_CASE("x64 fast encoder: a rip-relative constant (RipMem) encodes as the Address does") {
  // The shadowing members' RipMem overloads (fast_vex_rip, the emitter's
  // pool constants) against xbyak's member on `ptr / dword / qword [rip +
  // target]`: every shape with such an overload, every vector width,
  // registers 0-31 (VEX and EVEX), targets on both sides of the code,
  // the two-operand forms. What xbyak rejects must be rejected.
  using gpurc::x64::RipMem;
  auto c = std::make_unique<Checker>();
  // address() is the address the emitter built before (bytes: 0 ptr, 4 dword, 8 qword).
  {
    const uint8_t* t = c->fast_buf + 100;
    CHECK(RipMem{t, 0}.address() == c->ref.ptr[rip + t]);
    CHECK(RipMem{t, 4}.address() == c->ref.dword[rip + t]);
    CHECK(RipMem{t, 8}.address() == c->ref.qword[rip + t]);
  }
  // emit(g, x, v, m): the member with m a RipMem on FastEncoder, its address() on xbyak.
  auto each = [&](const char* label, uint8_t bytes, auto emit) {
    c->label = label;
    c->taken = 0;
    for (auto k : kKinds)
      for (int i : {0, 5, 9, 15, 16, 22, 31})
        for (int64_t d : {0, 100, -3000, 5000}) {
          const Xmm x = vec(k, i), v = vec(k, i < 16 ? (i + 7) % 16 : 31 - i);
          c->run([&](auto& g) {
            const RipMem m{g.getCode() + 2048 + d, bytes};
            if constexpr (std::is_same_v<std::decay_t<decltype(g)>, FastEncoder>) emit(g, x, v, m);
            else emit(g, x, v, m.address());
          });
        }
    INFO(c->label);
    CHECK(c->taken > 0);
  };
  each("vpand", 0, [](auto& g, const Xmm& x, const Xmm& v, const auto& m) { g.vpand(x, v, m); });
  each("vpand (x, m)", 0, [](auto& g, const Xmm& x, const Xmm&, const auto& m) {
    if constexpr (std::is_same_v<std::decay_t<decltype(g)>, FastEncoder>) g.vpand(x, m);
    else g.vpand(x, x, m);
  });
  each("vpcmpeqd", 0, [](auto& g, const Xmm& x, const Xmm& v, const auto& m) { g.vpcmpeqd(x, v, m); });
  each("vpxord", 0, [](auto& g, const Xmm& x, const Xmm& v, const auto& m) { g.vpxord(x, v, m); });
  each("vmulps", 0, [](auto& g, const Xmm& x, const Xmm& v, const auto& m) { g.vmulps(x, v, m); });
  each("vmaxps (x, m)", 0, [](auto& g, const Xmm& x, const Xmm&, const auto& m) { g.vmaxps(x, m); });
  each("vcmpps", 0, [](auto& g, const Xmm& x, const Xmm& v, const auto& m) { g.vcmpps(x, v, m, 0x03); });
  each("vpternlogd", 0, [](auto& g, const Xmm& x, const Xmm& v, const auto& m) { g.vpternlogd(x, v, m, 0xCA); });
  each("vblendvps", 0, [](auto& g, const Xmm& x, const Xmm& v, const auto& m) { g.vblendvps(x, v, m, Xmm(x.getKind(), 4)); });
  each("vmovups", 0, [](auto& g, const Xmm& x, const Xmm&, const auto& m) { g.vmovups(x, m); });
  each("vpshufd", 0, [](auto& g, const Xmm& x, const Xmm&, const auto& m) { g.vpshufd(x, m, 0x1B); });
  each("vpbroadcastd", 4, [](auto& g, const Xmm& x, const Xmm&, const auto& m) { g.vpbroadcastd(x, m); });
  // A register with an opmask or zeroing: fast_vex_rip declines with
  // nothing written, and the member's fallback (the Address) gives xbyak's bytes.
  for (int mask : {0, 2})
    for (bool z : {false, true}) {
      if (!mask && !z) continue;
      const Xmm x = masked(vec(Operand::ZMM, 3), mask, z);
      c->fast.resetSize();
      CHECK(!c->fast.fast_vex_rip(FastEncoder::vpandd_kRRM, x, &x, c->fast_buf + 64));
      CHECK(c->fast.getSize() == 0);
      c->label = "vpandd masked";
      c->run([&](auto& g) {
        const RipMem m{g.getCode() + 64, 0};
        if constexpr (std::is_same_v<std::decay_t<decltype(g)>, FastEncoder>) g.vpandd(x, vec(Operand::ZMM, 7), m);
        else g.vpandd(x, vec(Operand::ZMM, 7), m.address());
      });
    }
}

}  // namespace gpurc_test_backend_x64_encoder
