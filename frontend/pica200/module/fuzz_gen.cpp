#include "frontend/pica200/module/fuzz_gen.h"

#include <algorithm>
#include <bit>
#include <random>

#include "frontend/pica200/encoding.h"
#include "isa/fuzz_values.h"
#include "isa/rng.h"

namespace gpurc::fuzz {

using pica::Format;
using pica::Instr;
using pica::Op;

namespace {

// Hardware stack depths (pica::Interpreter::kCallDepth ...). Loops are kept
// one shallower than the stack allows so nested trip counts stay small.
constexpr int kMaxIfDepth = int(pica::Interpreter::kIfDepth);
constexpr int kMaxLoopDepth = 3;
constexpr int kMaxCallDepth = int(pica::Interpreter::kCallDepth);
// NUM fields (else length, subroutine length) are 8 bits.
constexpr uint32_t kMaxNum = 255;
// Words kept free below a block's limit for the instruction that closes it.
constexpr uint32_t kReserve = 4;

struct Subroutine {
  uint32_t start = 0, length = 0;
  int if_depth = 0, loop_depth = 0, call_depth = 1;  // stack use while it runs, its own CALL frame included
};

struct Context {
  int if_depth = 0, loop_depth = 0, call_depth = 0, region_depth = 0;
  bool loop_body = false;  // the block is directly a LOOP body (BREAK allowed)
};

float special_float(Rng& rng) {
  switch (rng.below(10)) {
    case 0: case 1: case 2: case 3: return std::bit_cast<float>(uint32_t(interesting_bits(rng, ir::Type::F32)));
    case 4: case 5: case 6: return float(rng.range(-4, 100));  // small integers: MOVA, loop-like indices
    default: return float(int(rng.below(2001)) - 1000) / 125.0f;
  }
}

class Generator {
 public:
  Generator(uint64_t seed, const PicaGenOptions& opt) : rng_(seed), mt_(rng_.next()), opt_(opt) {}

  PicaCase run() {
    PicaCase c;
    c.geometry = rng_.below(100) < opt_.geometry_percent;
    geometry_ = c.geometry;
    c.shared_ends = rng_.below(100) < opt_.shared_ends_percent;
    shared_ends_ = c.shared_ends;
    make_descriptors(c.program);
    make_uniforms(c.uniforms);

    // Subroutines first (address 0 up), then the main block; later moved
    // behind the main block half of the time so entry 0 is covered too.
    int subs = int(rng_.below(uint32_t(opt_.max_subroutines + 1)));
    for (int s = 0; s < subs; ++s) {
      Subroutine sub;
      sub.start = uint32_t(code_.size());
      reset_use();
      Context ctx;
      ctx.call_depth = 1;
      gen_block(ctx, std::max(2, opt_.max_statements / 2), sub.start + 60, true);
      sub.length = uint32_t(code_.size()) - sub.start;
      sub.if_depth = max_if_;
      sub.loop_depth = max_loop_;
      sub.call_depth = std::max(1, max_call_);
      subs_.push_back(sub);
    }
    const uint32_t main_start = uint32_t(code_.size());
    reset_use();
    gen_block(Context{}, opt_.max_statements, main_start + 400, true);
    if (!geometry_ && rng_.below(100) < opt_.pass_through_percent) pass_through(c.program);
    emit(plain(Op::END));
    const uint32_t main_len = uint32_t(code_.size()) - main_start;

    c.entry = main_start;
    if (main_start > 0 && rng_.chance(50)) {
      relocate(main_start, main_len);
      c.entry = 0;
    }
    c.program.code = code_;

    unsigned n = 1 + rng_.below(opt_.max_vertices);
    if (rng_.chance(20)) {
      static const unsigned kEdges[] = {1, 31, 32, 33, 64, 65};
      n = std::min(opt_.max_vertices, kEdges[rng_.below(6)]);
    }
    c.inputs.resize(n);
    for (int reg = 0; reg < 16; ++reg)
      for (int comp = 0; comp < 4; ++comp) {
        bool splat = rng_.chance(20);
        float first = special_float(rng_);
        for (auto& vs : c.inputs) vs.v[size_t(reg)][size_t(comp)] = splat ? first : special_float(rng_);
      }
    return c;
  }

 private:
  Rng rng_;
  std::mt19937_64 mt_;  // for pica::random_word (the engine is fully specified by the standard)
  PicaGenOptions opt_;
  bool geometry_ = false;
  bool shared_ends_ = false;
  uint32_t num_descs_ = 1;
  std::vector<uint32_t> code_;
  std::vector<Subroutine> subs_;
  int max_if_ = 0, max_loop_ = 0, max_call_ = 0;

  void reset_use() { max_if_ = max_loop_ = max_call_ = 0; }
  void note_use(int ifs, int loops, int calls) {
    max_if_ = std::max(max_if_, ifs);
    max_loop_ = std::max(max_loop_, loops);
    max_call_ = std::max(max_call_, calls);
  }

  void make_descriptors(pica::Program& p) {
    num_descs_ = rng_.chance(50) ? 1 + rng_.below(32) : 33 + rng_.below(96);
    for (uint32_t d = 0; d < num_descs_; ++d) {
      uint32_t bits = uint32_t(rng_.next()) & 0x7FFFFFFFu;
      // Identity selectors and full masks are what real shaders mostly use.
      for (int s = 0; s < 3; ++s)
        if (rng_.chance(30)) {
          unsigned base = 4 + 9 * unsigned(s);
          bits = (bits & ~(0xFFu << (base + 1))) | (pica::kIdentitySelector << (base + 1));
        }
      if (rng_.chance(30)) bits |= 0xF;
      p.descs.push_back(bits);
    }
  }

  // One to three `mov oN, vM` with a descriptor of their own (identity
  // selector, no negation, full mask) to o-registers no earlier word writes
  // (any decoded word with an o-register destination counts, which only
  // makes fewer candidates). On the paths that reach the main block's END
  // they are the registers' only writes: pass-through registers when every
  // path reaches it, near misses when one ENDs early.
  void pass_through(pica::Program& p) {
    if (p.descs.size() >= 128) return;  // an F1 descriptor index is 7 bits
    uint16_t written = 0;
    for (uint32_t w : code_)
      if (auto in = pica::decode(w, 0); in && in->dst < 16) written |= uint16_t(1u << in->dst);
    std::vector<uint8_t> free_outputs;
    for (uint8_t n = 0; n < 16; ++n)
      if (!(written >> n & 1)) free_outputs.push_back(n);
    if (free_outputs.empty()) return;
    const uint32_t desc = uint32_t(p.descs.size());
    p.descs.push_back((uint32_t(rng_.next()) & 0x7FFFE000u) | (pica::kIdentitySelector << 5) | 0xFu);
    num_descs_ = uint32_t(p.descs.size());
    const unsigned copies = 1 + rng_.below(3);
    for (unsigned k = 0; k < copies && !free_outputs.empty(); ++k) {
      const size_t at = rng_.below(uint32_t(free_outputs.size()));
      Instr in = random_instr(Op::MOV);
      in.dst = free_outputs[at];
      in.src1 = uint8_t(rng_.below(16));  // v0-v15
      in.idx = 0;
      in.desc = uint8_t(desc);
      emit(in);
      free_outputs.erase(free_outputs.begin() + std::ptrdiff_t(at));
    }
  }

  void make_uniforms(pica::Uniforms& u) {
    for (auto& c : u.f)
      for (auto& x : c) x = special_float(rng_);
    for (auto& iv : u.i) {
      iv[0] = uint8_t(rng_.chance(85) ? rng_.below(4) : 4 + rng_.below(12));  // trip count - 1
      iv[1] = uint8_t(rng_.chance(50) ? rng_.below(8) : rng_.below(256));     // aL start
      iv[2] = uint8_t(rng_.chance(50) ? rng_.below(5) : rng_.below(256));     // aL step
      iv[3] = uint8_t(rng_.below(256));
    }
    u.b = uint16_t(rng_.next());
  }

  // A random word of `op` from the encoding table, decoded for editing.
  Instr random_instr(Op op) {
    auto in = pica::decode(pica::random_word(op, mt_), 0);
    return *in;  // random_word always gives a decodable word of `op`
  }
  Instr plain(Op op) { return random_instr(op); }
  uint32_t emit(const Instr& in) {
    code_.push_back(pica::encode(in));
    return uint32_t(code_.size() - 1);
  }
  void patch(uint32_t at, uint32_t target, uint32_t num) {
    Instr in = *pica::decode(code_[at], at);
    in.target = uint16_t(target);
    in.num = uint8_t(num);
    code_[at] = pica::encode(in);
  }

  void alu() {
    static const Op kAlu[] = {Op::ADD, Op::DP3, Op::DP4, Op::DPH, Op::DST, Op::EX2, Op::LG2, Op::LITP, Op::MUL,
                              Op::SGE, Op::SLT, Op::FLR, Op::MAX, Op::MIN, Op::RCP, Op::RSQ, Op::MOVA, Op::MOVA,
                              Op::MOV, Op::MOV, Op::DPHI, Op::DSTI, Op::SGEI, Op::SLTI, Op::CMP, Op::CMP,
                              Op::CMP, Op::MADI, Op::MAD, Op::MAD};
    Instr in = random_instr(kAlu[rng_.below(std::size(kAlu))]);
    const bool mad = in.format() == Format::F5 || in.format() == Format::F5i;
    in.desc = uint8_t(rng_.below(mad ? std::min(num_descs_, 32u) : num_descs_));
    emit(in);
  }

  // Emits one block: a sequence of statements that (unless shared_ends_) never
  // ends in a region, so no inner region ends where the block does. `limit`
  // bounds the block's end.
  void gen_block(const Context& ctx, int max_statements, uint32_t limit, bool nonempty) {
    struct PendingJump { uint32_t at; int remaining; };
    std::vector<PendingJump> jumps;
    const uint32_t start = uint32_t(code_.size());
    const int n = (nonempty ? 1 : 0) + int(rng_.below(uint32_t(max_statements)));
    bool last_was_region = false;
    for (int i = 0; i < n && code_.size() + kReserve < limit; ++i) {
      last_was_region = statement(ctx, limit - kReserve, jumps);
      for (auto& j : jumps)
        if (j.remaining > 0 && --j.remaining == 0) patch(j.at, uint32_t(code_.size()), uint32_t(rng_.below(256)));
    }
    if ((last_was_region && !shared_ends_) || (nonempty && code_.size() == start)) rng_.chance(30) ? (void)emit(plain(Op::NOP)) : alu();
    // Jumps still open go to the end of the block (where the block's own end check runs).
    for (auto& j : jumps)
      if (j.remaining > 0) patch(j.at, uint32_t(code_.size()), uint32_t(rng_.below(256)));
  }

  // One statement; true if it was a region (IF/LOOP/CALL).
  template <class Jumps>
  bool statement(const Context& ctx, uint32_t limit, Jumps& jumps) {
    const int deeper = std::max(2, opt_.max_statements - 2 * (ctx.region_depth + 1));
    const bool can_nest = ctx.region_depth < opt_.max_depth && code_.size() + 2 * kReserve < limit;
    unsigned r = rng_.below(100);
    if (r < 8 && can_nest && ctx.if_depth < kMaxIfDepth) {
      Instr in = random_instr(rng_.chance(50) ? Op::IFC : Op::IFU);
      uint32_t at = emit(in);
      Context inner = ctx;
      ++inner.if_depth;
      ++inner.region_depth;
      inner.loop_body = false;
      note_use(inner.if_depth, inner.loop_depth, inner.call_depth);
      const uint32_t then_limit = std::min(limit, at + 1 + kMaxNum);
      gen_block(inner, deeper, then_limit, !rng_.chance(10));
      const uint32_t else_start = uint32_t(code_.size());
      if (rng_.chance(50) && code_.size() + kReserve < limit)
        gen_block(inner, deeper, std::min(limit, else_start + kMaxNum), true);
      patch(at, else_start, uint32_t(code_.size()) - else_start);
      return true;
    }
    if (r < 14 && can_nest && ctx.loop_depth < kMaxLoopDepth) {
      Instr in = random_instr(Op::LOOP);
      uint32_t at = emit(in);
      Context inner = ctx;
      ++inner.loop_depth;
      ++inner.region_depth;
      inner.loop_body = true;
      note_use(inner.if_depth, inner.loop_depth, inner.call_depth);
      gen_block(inner, deeper, limit, true);
      patch(at, uint32_t(code_.size()) - 1, in.num);
      return true;
    }
    if (r < 20) {
      std::vector<const Subroutine*> ok;
      for (const auto& s : subs_)
        if (ctx.if_depth + s.if_depth <= kMaxIfDepth && ctx.loop_depth + s.loop_depth <= kMaxLoopDepth &&
            ctx.call_depth + s.call_depth <= kMaxCallDepth)
          ok.push_back(&s);
      if (!ok.empty()) {
        const Subroutine& s = *ok[rng_.below(uint32_t(ok.size()))];
        static const Op kCalls[] = {Op::CALL, Op::CALLC, Op::CALLU};
        uint32_t at = emit(random_instr(kCalls[rng_.below(3)]));
        patch(at, s.start, s.length);
        note_use(ctx.if_depth + s.if_depth, ctx.loop_depth + s.loop_depth, ctx.call_depth + s.call_depth);
        return true;
      }
    }
    if (r < 26) {
      uint32_t at = emit(random_instr(rng_.chance(50) ? Op::JMPC : Op::JMPU));
      jumps.push_back({at, 1 + int(rng_.below(4))});
      patch(at, at + 1, 0);  // until patched
      return false;
    }
    if (r < 31 && ctx.loop_body) {
      emit(random_instr(rng_.chance(30) ? Op::BREAK : Op::BREAKC));
      return false;
    }
    if (r < 33) {
      emit(plain(Op::NOP));
      return false;
    }
    if (r < 34) {
      emit(plain(Op::END));
      return false;
    }
    if (r < 44 && geometry_) {
      emit(random_instr(rng_.chance(40) ? Op::SETEMIT : Op::EMIT));
      return false;
    }
    alu();
    return false;
  }

  // Moves the main block [main_start, main_start + main_len) to address 0 and
  // the subroutines behind it, fixing every flow-control target.
  void relocate(uint32_t main_start, uint32_t main_len) {
    std::vector<uint32_t> out(code_.size());
    auto target_of = [&](uint32_t t) { return t < main_start ? t + main_len : t - main_start; };
    for (uint32_t a = 0; a < code_.size(); ++a) {
      const bool in_main = a >= main_start;
      const uint32_t to = in_main ? a - main_start : a + main_len;
      Instr in = *pica::decode(code_[a], a);
      const Format f = in.format();
      if (f == Format::F2 || f == Format::F3) {
        // A subroutine's targets never leave it (ends included) except CALLs
        // to earlier subroutines, which also stay below main_start.
        in.target = uint16_t(in_main ? target_of(in.target) : in.target + main_len);
        out[to] = pica::encode(in);
      } else {
        out[to] = code_[a];
      }
    }
    code_ = std::move(out);
  }
};

}  // namespace

uint64_t pica200_program_seed(uint64_t seed, uint64_t iteration) {
  Rng r(seed * 0x9E3779B97F4A7C15ull + iteration);
  return r.next();
}

PicaCase generate_pica200(uint64_t seed, const PicaGenOptions& opt) { return Generator(seed, opt).run(); }

}  // namespace gpurc::fuzz
