// The indexed memory fast path (backend_x64/memory_fast.cpp): loads and
// stores at `uniform i64 base + (zext|sext i32 x) << s`, checked per window
// on the 32-bit indices and done with dword-index gathers / scatters, the
// 64-bit address chain computed only when the op falls back. Every case is
// compared with the IR interpreter on each host tier (results, memory, fault
// kind / lane / address). The x64 host code of the path:
// tests/backend_x64/memory_indexed_code.cpp.
#include <doctest/doctest.h>

#include "compare.h"

namespace gpurc_test_backend_memory_indexed {  // one namespace per file: unity builds (CMakeLists.txt)

using namespace gpurc;
using namespace gpurc::backend::test;
using ir::Opcode;
using ir::Type;

namespace {

constexpr uint64_t kMemBase = 0x10000;  // TestMemory's base
constexpr size_t kMemBytes = 1024;

// How the uniform base is written: the G13 shape `(u & ~3)`, a bare
// load_uniform, and a deeper tree with the scaled index as the iadd's first
// operand.
enum class BaseForm { AndMask, Bare, Tree };

struct Shape {
  Type t = Type::I32;
  bool sext = false;
  unsigned shift = 2;
  BaseForm base = BaseForm::AndMask;
  bool store_first = false;  // store val, then load out, at the same address value
  // The scaled part as G13 writes a second vector component:
  // ((ext(x) << 1) + 1) << (shift - 1) (shift >= 1; the constant goes to the base).
  bool component = false;
};

// vars idx (i32), val (t), mask (i1), out (t); uniforms: u64 at 0 (and at 8).
ir::Function indexed_function(const Shape& s) {
  ir::Function f;
  f.add_var("idx", Type::I32);
  f.add_var("val", s.t);
  f.add_var("mask", Type::I1);
  f.add_var("out", s.t);
  f.uniform_bytes = 16;
  f.add_block("entry");
  ir::Builder b(f);
  auto var = [&](uint32_t i) { return b.emit(Opcode::LoadVar, f.vars[i].type, {}, 0, 0, i); };
  auto idx = var(0), val = var(1), mask = var(2);
  auto c64 = [&](uint64_t v) { return b.emit(Opcode::Const, Type::I64, {}, 0, 0, v); };
  ir::ValueId base;
  switch (s.base) {
    case BaseForm::AndMask: base = b.binary(Opcode::And, b.load_uniform(Type::I64, 0), c64(~uint64_t(3))); break;
    case BaseForm::Bare: base = b.load_uniform(Type::I64, 0); break;
    default:  // u0 + (u8 - 0x40) + 0x40 - u8 ... = u0, written as a tree of depth 3
      base = b.binary(Opcode::IAdd,
                      b.binary(Opcode::ISub, b.binary(Opcode::Xor, b.load_uniform(Type::I64, 0), c64(0)),
                               b.binary(Opcode::Or, b.load_uniform(Type::I64, 8), c64(0))),
                      b.load_uniform(Type::I64, 8));
      break;
  }
  ir::ValueId scaled = b.emit(s.sext ? Opcode::Sext : Opcode::Zext, Type::I64, {idx});
  if (s.component) {
    REQUIRE(s.shift >= 1);
    auto twice = b.emit(Opcode::Shl, Type::I64, {scaled, b.i32(1)}, uint8_t(ir::ShiftMode::Mask));
    auto plus_one = b.binary(Opcode::IAdd, twice, c64(1));
    scaled = b.emit(Opcode::Shl, Type::I64, {plus_one, b.i32(s.shift - 1)}, uint8_t(ir::ShiftMode::Clamp));
  } else if (s.shift || s.base != BaseForm::Bare)
    scaled = b.emit(Opcode::Shl, Type::I64, {scaled, b.i32(s.shift)}, uint8_t(ir::ShiftMode::Mask));
  auto addr = s.base == BaseForm::Tree ? b.binary(Opcode::IAdd, scaled, base) : b.binary(Opcode::IAdd, base, scaled);
  if (s.store_first) b.store(ir::Space::Global, ir::AddrClass::Random, addr, val, mask);
  auto out = b.load(s.t, ir::Space::Global, ir::AddrClass::Random, addr, mask);
  b.emit(Opcode::StoreVar, Type::Void, {out}, 0, 0, 3);
  b.ret();
  f.compute_preds();
  REQUIRE(ir::verify(f) == "");
  return f;
}

void put_u64(std::vector<uint8_t>& v, size_t at, uint64_t x) { std::memcpy(v.data() + at, &x, 8); }

// Index of lane address `a` from base `b`: the (arithmetic) quotient by the
// scale, truncated to 32 bits as the guest register would hold it.
uint32_t index_for(uint64_t a, uint64_t b, unsigned shift) { return uint32_t(uint64_t(int64_t(a - b) >> shift)); }

std::string shape_text(const Shape& s) {
  return std::string(ir::type_name(s.t)) + (s.sext ? " sext" : " zext") + " << " + std::to_string(s.shift) + " base " +
         std::to_string(int(s.base)) + (s.store_first ? " store+load" : " load") + (s.component ? " component" : "");
}

// Random var lanes and memory bytes over TestMemory's kMemBytes; the window
// and the launch mask are the caller's.
RunSpec random_memory_spec(const ir::Function& f, std::mt19937_64& rng) {
  RunSpec s;
  s.vars.resize(f.vars_bytes());
  fill_random(s.vars, rng);
  s.memory = true;
  s.memory_bytes = kMemBytes;
  s.memory_init.resize(kMemBytes);
  fill_random(s.memory_init, rng);
  return s;
}

}  // namespace

TEST_CASE("backend: indexed fast path at window edges, indices >= 2^31, negative sext indices, partial masks, components") {
  std::mt19937_64 rng(21);
  for (Type t : {Type::I8, Type::I16, Type::I32, Type::F32, Type::I64})
    for (bool sext : {false, true})
      for (unsigned shift : {0u, 1u, 2u, 3u})
        for (BaseForm form : {BaseForm::AndMask, BaseForm::Bare, BaseForm::Tree})
          for (bool store_first : {false, true})
           for (bool component : {false, true}) {
            Shape sh{t, sext, shift, form, store_first, component};
            if (form != BaseForm::AndMask && shift == 1) continue;  // keep the product small; shifts 0, 2, 3 suffice there
            if (component && (shift == 0 || form == BaseForm::Bare)) continue;
            ir::Function f = indexed_function(sh);
            const unsigned bytes = ir::bit_width(t) / 8;
            for (int k = 0; k < 16; ++k) {
              RunSpec s = random_memory_spec(f, rng);
              // Mostly a window (without one, only the helper), which half
              // the time ends where the memory ends: an access past its end
              // must then fault, not read the bytes behind the buffer.
              s.window = k % 8 != 7;
              s.window_offset = 64 * (k % 4);
              s.window_bytes = k % 2 ? 0 : 256 + 8 * (k % 5);
              if (k % 5 == 4) s.extra_windows = {{640, 128}};
              const uint64_t win = kMemBase + s.window_offset;
              const uint64_t win_bytes = s.window_bytes ? s.window_bytes : kMemBytes - s.window_offset;
              // The base: the window's start, its middle (sext reaches below
              // it), its end (d == size), below it, below the memory, and near
              // 2^64 (zext indices wrap the address into the memory).
              uint64_t base;
              switch (rng() % 6) {
                case 0: base = win; break;
                case 1: base = win + (win_bytes / 2 & ~uint64_t(7)); break;
                case 2: base = win + win_bytes; break;
                case 3: base = win - 8; break;
                case 4: base = kMemBase - 32; break;
                default: base = ~uint64_t(0) - 0xFF; break;
              }
              s.uniforms.assign(16, 0);
              if (form == BaseForm::Tree) {
                put_u64(s.uniforms, 0, base);
                put_u64(s.uniforms, 8, rng());
              } else {
                put_u64(s.uniforms, 0, base | (form == BaseForm::AndMask ? rng() % 4 : 0));  // & ~3 drops the low bits
              }
              const bool all_inside = k % 5 == 0;
              s.entry_mask = all_inside ? ~0u : uint32_t(rng()) | 1u << (rng() % 32);
              const uint64_t last = win + win_bytes - bytes;  // the last address an access may start at
              for (unsigned l = 0; l < 32; ++l) {
                uint64_t a;
                uint32_t x;
                switch (all_inside ? 0 : rng() % 8) {
                  case 0: a = win + rng() % (win_bytes - bytes + 1); x = index_for(a, base, shift); break;
                  case 1: x = index_for(last, base, shift); break;                 // the last index inside
                  case 2: x = index_for(last, base, shift) + 1; break;             // one past the end
                  case 3: x = index_for(win, base, shift) - (rng() % 2); break;    // the first index, or one below
                  case 4: x = 0x80000000u + uint32_t(rng() % 4); break;            // >= 2^31 (zext), most negative (sext)
                  case 5: x = 0xFFFFFFFFu - uint32_t(rng() % 8); break;            // 2^32 - small / -small
                  case 6: x = uint32_t(rng() % 64); break;
                  default: x = uint32_t(rng()); break;
                }
                set_lane(s.vars, f, 0, l, x);
                if (all_inside) set_lane(s.vars, f, 2, l, 1);
              }
              check_all_tiers(f, s, shape_text(sh) + " k " + std::to_string(k));
            }
          }
}

TEST_CASE("backend: indexed loads in a loop keep the lanes not taking part (their slot's last value)") {
  // acc += load(base + idx << 2) under mask ^ (i & 1), three iterations: a
  // lane's load result that is not taking part must still hold the value of
  // its last load, as in the interpreter.
  ir::Function f;
  f.add_var("idx", Type::I32);
  f.add_var("mask", Type::I1);
  f.add_var("acc", Type::I32);
  f.uniform_bytes = 8;
  auto entry = f.add_block("entry"), loop = f.add_block("loop"), exit = f.add_block("exit");
  ir::Builder b(f);
  b.set_block(entry);
  auto idx = b.emit(Opcode::LoadVar, Type::I32, {}, 0, 0, 0);
  auto mask = b.emit(Opcode::LoadVar, Type::I1, {}, 0, 0, 1);
  auto zero = b.i32(0);
  b.br(loop);
  b.set_block(loop);
  auto i = b.emit(Opcode::Phi, Type::I32, {zero, zero});
  auto acc = b.emit(Opcode::Phi, Type::I32, {zero, zero});
  auto flip = b.emit(Opcode::Trunc, Type::I1, {b.binary(Opcode::And, i, b.i32(1))});
  auto m = b.binary(Opcode::Xor, mask, flip);
  auto x = b.binary(Opcode::IAdd, idx, i);
  auto base = b.load_uniform(Type::I64, 0);
  auto scaled = b.emit(Opcode::Shl, Type::I64, {b.emit(Opcode::Zext, Type::I64, {x}), b.i32(2)});
  auto v = b.load(Type::I32, ir::Space::Global, ir::AddrClass::Random, b.binary(Opcode::IAdd, base, scaled), m);
  auto acc1 = b.binary(Opcode::IAdd, acc, v);
  auto i1 = b.binary(Opcode::IAdd, i, b.i32(1));
  b.cond_br(b.icmp(ir::IntPred::Ult, i1, b.i32(3)), loop, exit);
  f.insts[i].args[1] = i1;
  f.insts[acc].args[1] = acc1;
  b.set_block(exit);
  b.emit(Opcode::StoreVar, Type::Void, {acc1}, 0, 0, 2);
  b.ret();
  f.compute_preds();
  REQUIRE(ir::verify(f) == "");
  std::mt19937_64 rng(23);
  for (int k = 0; k < 8; ++k) {
    RunSpec s = random_memory_spec(f, rng);
    s.window = true;
    s.entry_mask = k % 2 ? ~0u : uint32_t(rng()) | 1;
    s.uniforms.assign(8, 0);
    put_u64(s.uniforms, 0, kMemBase);
    for (unsigned l = 0; l < 32; ++l) set_lane(s.vars, f, 0, l, uint32_t(rng() % (kMemBytes / 4 - 3)));
    check_all_tiers(f, s, "loop k " + std::to_string(k));
  }
}

TEST_CASE("backend: indexed fast path keeps every lane inline when all lie in a window") {
  // All taking-part lanes inside the window: no call to the GuestMemory, and
  // the results match the interpreter.
  std::mt19937_64 rng(22);
  for (Type t : {Type::I8, Type::I32, Type::I64})
    for (bool sext : {false, true})
      for (bool store_first : {false, true}) {
        Shape sh{t, sext, t == Type::I64 ? 3u : 2u, BaseForm::AndMask, store_first};
        ir::Function f = indexed_function(sh);
        for (int k = 0; k < 6; ++k) {
          RunSpec s = random_memory_spec(f, rng);
          s.window = true;
          s.entry_mask = k % 2 ? ~0u : uint32_t(rng()) | 1;
          const uint64_t base = kMemBase + (sext ? 512 : 0);
          s.uniforms.assign(16, 0);
          put_u64(s.uniforms, 0, base);
          const int64_t span = sext ? 512 : 1024;
          for (unsigned l = 0; l < 32; ++l) {
            int64_t off = int64_t(rng() % uint64_t(span - 8)) - (sext ? int64_t(rng() % 512) : 0);
            set_lane(s.vars, f, 0, l, uint32_t(off >> sh.shift));
          }
          std::string what = "inline " + shape_text(sh) + " k " + std::to_string(k);
          check_all_tiers(f, s, what);
          for (Tier tier : host_tiers()) {
            JitOptions o;
            o.tier = tier;
            std::string err;
            auto jit = compile(f, o, &err);
            REQUIRE_MESSAGE(jit, err);
            CHECK_MESSAGE(run_one(*jit, f, s).memory_calls == 0, what, " tier ", tier_name(tier));
          }
        }
      }
}

TEST_CASE("backend: indexed fast path with null uniforms faults at the load_uniform, as the interpreter") {
  // The load_uniform of the base is deferred to the fallback when nothing but
  // strip ops lies between it and the load: with no uniform block the fault
  // must still name it (value id, offset, Const space), and a store between
  // (store_first) must not happen before it.
  for (bool store_first : {false, true})
    for (BaseForm form : {BaseForm::AndMask, BaseForm::Bare, BaseForm::Tree}) {
      Shape sh{Type::I32, false, 2, form, store_first};
      ir::Function f = indexed_function(sh);
      RunSpec s;
      s.vars.assign(f.vars_bytes(), 0);
      s.memory = true;
      s.window = true;
      for (unsigned l = 0; l < 32; ++l) set_lane(s.vars, f, 2, l, 1);
      check_all_tiers(f, s, "null uniforms " + shape_text(sh));
    }
}

}  // namespace gpurc_test_backend_memory_indexed
