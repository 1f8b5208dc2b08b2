// The shader cache key of the public API (recompiler/pica200_api.cpp) reads
// only the words execution can reach (pica::append_reachable_code): checked
// here against the translator (words outside that set never change the IR)
// and through the API (hits whatever the rest of program memory holds,
// misses when a reachable word changes, every cache cleared by clear_cache).
#include <doctest/doctest.h>

#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include "frontend/pica200/encoding.h"
#include "frontend/pica200/module/fuzz_gen.h"
#include "frontend/pica200/reachable.h"
#include "frontend/pica200/translate.h"
#include "gpurc/pica200.h"
#include "ir/ir.h"
#include "recompiler/engine.h"

namespace gpurc_test_pica200_compile_cache {  // one namespace per file: unity builds (CMakeLists.txt)

namespace p = gpurc::pica200;
using namespace gpurc;

namespace {

std::set<uint32_t> reachable_addresses(const pica::Program& prog, uint32_t entry, bool& past_end) {
  std::vector<uint32_t> words;
  pica::append_reachable_code(prog.code, entry, words);
  std::set<uint32_t> out;
  past_end = false;
  uint32_t last_end = 0;
  for (size_t i = 0; i < words.size();) {
    REQUIRE(i + 3 <= words.size());
    uint32_t begin = words[i], end = words[i + 1], n = words[i + 2];
    CHECK(begin < end);
    CHECK((i == 0 || begin > last_end));  // maximal runs in address order
    last_end = end;
    CHECK(n == (begin < prog.code.size() ? std::min<uint32_t>(end, uint32_t(prog.code.size())) - begin : 0));
    REQUIRE(i + 3 + n <= words.size());
    for (uint32_t k = 0; k < n; ++k) CHECK(words[i + 3 + k] == prog.code[begin + k]);
    for (uint32_t a = begin; a < end; ++a) {
      if (a < prog.code.size()) out.insert(a);
      else past_end = true;
    }
    i += 3 + n;
  }
  return out;
}

std::string translation(const pica::Program& prog, const pica::TranslateOptions& opt) {
  ir::Function f;
  std::string err;
  if (!pica::translate(prog, opt, f, err)) return "error: " + err;
  return ir::print(f);
}

std::string read_text(const std::string& rel) {
  std::ifstream in(std::string(GPURC_TEST_DATA) + "/" + rel, std::ios::binary);
  REQUIRE_MESSAGE(in, "cannot open " << rel);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("pica200 reachable code: words outside it never change the translation") {
  // Fuzz programs have every kind of flow (IF/LOOP/CALL regions, BREAK,
  // JMP, END inside regions, shared region ends); each word the scan leaves
  // out is replaced by a different one, and words are appended after the end
  // when the scan says execution never gets there.
  uint32_t x = 0x2545F491u;
  auto rnd = [&] {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return x;
  };
  int changed_words = 0;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    fuzz::PicaCase c = fuzz::generate_pica200(fuzz::pica200_program_seed(7, seed));
    pica::TranslateOptions opt;
    opt.entry = c.entry;
    opt.geometry = c.geometry;
    bool past_end = false;
    std::set<uint32_t> reach = reachable_addresses(c.program, c.entry, past_end);
    CHECK(reach.count(c.entry) == 1);
    pica::Program other = c.program;
    for (uint32_t a = 0; a < other.code.size(); ++a)
      if (!reach.count(a)) {
        other.code[a] = rnd();
        ++changed_words;
      }
    if (!past_end)
      for (int k = 0; k < 5; ++k) other.code.push_back(rnd());
    for (pica::StackMode m : {pica::StackMode::Auto, pica::StackMode::Runtime}) {
      opt.stacks = m;
      INFO("seed " << seed << ", stacks " << int(m));
      CHECK(translation(c.program, opt) == translation(other, opt));
    }
  }
  CHECK(changed_words > 0);  // the fuzz programs do have words the scan leaves out
}

TEST_CASE("pica200 reachable code: flow targets and the end of the program") {
  // 0: CALL 4 (num 2), 1: END, 2-3: unreachable, 4-5: the subroutine, 6: END
  // (which only the scan's target + num reaches).
  pica::Instr call;
  call.op = pica::Op::CALL;
  call.target = 4;
  call.num = 2;
  pica::Instr end;
  end.op = pica::Op::END;
  pica::Instr nop;
  nop.op = pica::Op::NOP;
  pica::Program prog;
  prog.code = {pica::encode(call), pica::encode(end), 0x12345678u, 0x9ABCDEF0u,
               pica::encode(nop), pica::encode(nop), pica::encode(end)};
  bool past_end = false;
  std::set<uint32_t> reach = reachable_addresses(prog, 0, past_end);
  // The subroutine returns after its last word, 5; the scan also keeps 6 (target + num).
  CHECK(reach == std::set<uint32_t>{0, 1, 4, 5, 6});
  CHECK(!past_end);
  // A program whose flow runs off its end reports it.
  prog.code = {pica::encode(nop), pica::encode(nop)};
  reach = reachable_addresses(prog, 0, past_end);
  CHECK(reach == std::set<uint32_t>{0, 1});
  CHECK(past_end);
}

namespace {

// Every address the scan's runs cover (past the end of the program too).
std::set<uint32_t> run_addresses(const std::vector<uint32_t>& code, uint32_t entry) {
  std::vector<uint32_t> words;
  pica::append_reachable_code(code, entry, words);
  std::set<uint32_t> out;
  for (size_t i = 0; i + 3 <= words.size(); i += 3 + words[i + 2])
    for (uint32_t a = words[i]; a < words[i + 1]; ++a) out.insert(a);
  return out;
}

// The scan's rule one address at a time, from decode(): END stops, an F2/F3
// flow instruction reaches target, target + 1 and target + num, everything
// else (an undecodable word too) falls through; addresses stop at 4096 + 256 + 64.
std::set<uint32_t> reachable_model(const std::vector<uint32_t>& code, uint32_t entry) {
  const uint32_t space = 4096 + 256 + 64;
  std::set<uint32_t> seen;
  std::vector<uint32_t> pending;
  auto mark = [&](uint32_t a) {
    if (a < space && seen.insert(a).second) pending.push_back(a);
  };
  if (entry >= space) return {entry};
  mark(entry);
  while (!pending.empty()) {
    uint32_t pc = pending.back();
    pending.pop_back();
    while (pc < code.size()) {
      std::optional<pica::Instr> in = pica::decode(code[pc], pc);
      if (in && in->op == pica::Op::END) break;
      if (in && (in->format() == pica::Format::F2 || in->format() == pica::Format::F3)) {
        mark(in->target);
        mark(in->target + 1u);
        mark(in->target + in->num);
      }
      uint32_t next = pc + 1;
      if (next >= space || !seen.insert(next).second) break;
      pc = next;
    }
  }
  return seen;
}

}  // namespace

TEST_CASE("pica200 reachable code: the run scan agrees with the address-at-a-time rule") {
  // Fuzz programs placed in program memories of random sizes (filled with
  // random words, some of them flow instructions and ENDs), entered at
  // their entry or at a random address.
  uint64_t x = 0x9E3779B97F4A7C15ull;
  auto rnd = [&] {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return uint32_t(x >> 16);
  };
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    fuzz::PicaCase c = fuzz::generate_pica200(fuzz::pica200_program_seed(11, seed));
    std::vector<uint32_t> code = c.program.code;
    const size_t size = std::max<size_t>(code.size(), rnd() % 4097);
    while (code.size() < size) {
      uint32_t w = rnd();
      if (rnd() % 4 == 0) w = (w & 0x03FFFFFFu) | (uint32_t(0x20 + rnd() % 16) << 26);  // mostly flow / END
      code.push_back(w);
    }
    for (uint32_t entry : {c.entry, uint32_t(rnd() % (size + 8))}) {
      INFO("seed " << seed << ", entry " << entry << ", " << size << " words");
      CHECK(run_addresses(code, entry) == reachable_model(code, entry));
    }
  }
}

TEST_CASE("pica200 api: the cache key ignores program memory the shader cannot reach") {
  p::clear_cache();
  p::ShaderSetup setup = p::load_shbin(p::assemble(read_text("examples/pica200/lighting.pica")));
  const size_t words = setup.code.size();
  auto fill = [&](uint32_t seed) {
    p::ShaderSetup s = setup;
    s.code.resize(4096);
    for (size_t a = words; a < 4096; ++a) s.code[a] = seed = seed * 1664525u + 1013904223u;
    return s;
  };
  for (const std::string& engine : p::engines()) {
    p::ShaderSetup a = fill(1);
    a.engine = engine;
    auto first = p::Shader::compile(a);
    CHECK(first->compile_us() > 0);
    p::ShaderSetup b = fill(2);  // other shaders in the rest of program memory
    b.engine = engine;
    auto hit = p::Shader::compile(b);
    CHECK(hit->compile_us() == 0);
    CHECK(p::Shader::compile(b).get() == hit.get());  // a hit hands out the same object
    // A changed reachable word (the first instruction's destination) is another shader.
    p::ShaderSetup c = b;
    c.code[0] ^= 1u << 21;
    CHECK(p::Shader::compile(c)->compile_us() > 0);
  }
  // Over the size limit is an error even when the first 4096 words are cached.
  p::ShaderSetup big = fill(1);
  big.code.push_back(0);
  CHECK_THROWS_AS(p::Shader::compile(big), p::Error);
  // clear_cache() drops the IR code cache too: the next compile is cold.
  if (p::engines().size() > 1) CHECK(gpurc::code_cache().size() > 0);
  p::clear_cache();
  CHECK(p::cached_shaders() == 0);
  CHECK(gpurc::code_cache().size() == 0);
}

}  // namespace gpurc_test_pica200_compile_cache

namespace gpurc_test_pica200_compile_cache {

// compile_ir with a caller's identity (IrCompileOptions::identity, which the
// PICA200 API sets to its shader cache key): the code cache is keyed on the
// identity and the options, not on the function's bytes; the function given
// up by value (compile_ir(Function&&)) compiles to the same kind of code.
TEST_CASE("pica200 api: the IR code cache keyed by the caller's identity") {
  const std::vector<Engine> tiers = host_jit_tiers();
  if (tiers.empty()) return;
  p::clear_cache();
  p::ShaderSetup setup = p::load_shbin(p::assemble(read_text("examples/pica200/lighting.pica")));
  pica::TranslateOptions to;
  to.entry = setup.entry;
  ir::Function f;
  std::string err;
  REQUIRE_MESSAGE(pica::translate(pica::Program{setup.code, setup.descriptors}, to, f, err), err);
  ir::Function other = f;
  other.name += "_other";  // another function (its bytes differ)
  const rt::CacheKey k1{1, 2}, k2{1, 3};
  IrCompileOptions o1, o2, plain;
  o1.identity = &k1;
  o2.identity = &k2;
  for (Engine e : tiers) {
    CAPTURE(engine_name(e));
    CompiledIr a, b, c, d, g;
    REQUIRE_MESSAGE(compile_ir(f, e, o1, a, err), err);
    CHECK(!a.cache_hit);
    // Same identity: the caller vouches the function is the same, so a hit
    // (even for this other function: only the identity is looked at).
    REQUIRE_MESSAGE(compile_ir(other, e, o1, b, err), err);
    CHECK(b.cache_hit);
    CHECK(b.exe.get() == a.exe.get());
    // Another identity: compiled again.
    ir::Function moved = f;
    REQUIRE_MESSAGE(compile_ir(std::move(moved), e, o2, c, err), err);
    CHECK(!c.cache_hit);
    CHECK(c.exe.get() != a.exe.get());
    CHECK(c.vars_bytes == a.vars_bytes);
    // No identity: keyed on the bytes, apart from every identity key.
    REQUIRE_MESSAGE(compile_ir(f, e, plain, d, err), err);
    CHECK(!d.cache_hit);
    REQUIRE_MESSAGE(compile_ir(f, e, plain, g, err), err);
    CHECK(g.cache_hit);
    CHECK(g.exe.get() == d.exe.get());
  }
  p::clear_cache();
}

}  // namespace gpurc_test_pica200_compile_cache
