// `gpurc fuzz --isa bifrost`: random valid programs drawn from the encoding
// tables (the instructions the translation covers, random modifiers, sources
// the masks allow, register writes, uniform/constant/special FAU values, flush
// modes, divergent branches around clauses, cross-lane permutes) run on the
// reference interpreter and, translated to IR, on the IR interpreter and
// every JIT tier; the final registers r0-r15 of every thread (stored to
// memory by the program) compared bit for bit. docs/bifrost.md "Fuzzing".
#include <cstdio>
#include <cstring>
#include <memory>

#include "frontend/bifrost/bifrost.h"
#include "frontend/bifrost/module/launch.h"
#include "frontend/bifrost/module/module.h"
#include "frontend/bifrost/translate.h"
#include "isa/fuzz.h"
#include "isa/fuzz_values.h"
#include "isa/replay_doc.h"

namespace gpurc::bifrost {

namespace {

constexpr uint64_t kIn = 0x100000, kOut = 0x200000;
constexpr unsigned kRowBytes = 64;  // r0-r15 per thread

struct FuzzProgram {
  std::vector<uint8_t> code;
  std::string text;
  unsigned threads = 32;
  std::array<uint32_t, kUniformWords> uniforms{};
  std::vector<uint32_t> input;  // r0-r15 per thread
};

struct Case final : isa::FuzzCase {
  FuzzProgram p;
};
struct Outcome final : isa::FuzzOutcome {
  std::vector<uint8_t> out;
  std::string fault;
};

// The encodings the generator draws from: run by the interpreter and translated.
const std::vector<const Encoding*>& candidates(bool fma) {
  static std::vector<const Encoding*> fmas, adds;
  static bool init = [] {
    static const char* names[] = {
        "*MOV.i32", "+MOV.i32", "*FADD.f32", "+FADD.f32", "*FMA.f32", "*FCMP.f32", "+FCMP.f32", "*CSEL.f32",
        "*CSEL.i32", "*CSEL.s32", "*CSEL.u32", "*LSHIFT_AND.i32", "*LSHIFT_OR.i32", "*LSHIFT_XOR.i32",
        "*RSHIFT_AND.i32", "*RSHIFT_OR.i32", "*RSHIFT_XOR.i32", "*ARSHIFT.i32", "*IMUL.i32", "*POPCOUNT.i32",
        "*BITREV.i32", "*CLZ.u32", "*IADDC.i32", "*ISUBB.i32", "*SHADDXL.u32", "*SHADDXL.s32", "+FMIN.f32",
        "+FMAX.f32", "+IADD.s32", "+IADD.u32", "+ISUB.s32", "+ISUB.u32", "+ICMP.i32", "+ICMP.s32", "+ICMP.u32",
        "+MUX.i32", "+F32_TO_S32", "+F32_TO_U32", "+S32_TO_F32", "+U32_TO_F32", "*MKVEC.v2i16", "+MKVEC.v2i16",
        "*S8_TO_S32", "+S8_TO_S32", "*U8_TO_U32", "+U8_TO_U32", "*S16_TO_S32", "+S16_TO_S32", "*U16_TO_U32",
        "+U16_TO_U32", "*FADD.v2f16", "+FADD.v2f16", "*FMA.v2f16", "+FMIN.v2f16", "+FMAX.v2f16", "*F16_TO_F32",
        "+F16_TO_F32", "*V2F32_TO_V2F16", "+V2F32_TO_V2F16", "+CLPER.i32", "+CLPER_OLD.i32", "*NOP", "+NOP",
        "+IABS.s32", "*MKVEC.v4i8", "+IADD.v2s16", "+IADD.v2u16", "+ISUB.v2s16", "+ISUB.v2u16",
        "*FREXPM.f32", "+FREXPM.f32", "*FREXPE.f32", "+FREXPE.f32", "+FRCP_APPROX.f32", "+FRSQ_APPROX.f32",
        "+FRCP.f32", "+FRSQ.f32", "+LDEXP.f32", "*FROUND.f32", "+FROUND.f32", "*FMA_RSCALE.f32", "+FEXP_TABLE.u4",
        // ops_ext.h: vector integer, fp16, conversion and classification forms
        "+IADD.v4s8", "+IADD.v4u8", "+ISUB.v4s8", "+ISUB.v4u8", "+HADD.s32", "+HADD.u32", "+HADD.v2s16",
        "+HADD.v2u16", "+HADD.v4s8", "+HADD.v4u8", "+IABS.v2s16", "+IABS.v4s8", "+ICMP.v2i16", "+ICMP.v2s16",
        "+ICMP.v2u16", "+ICMP.v4i8", "+ICMP.v4s8", "+ICMP.v4u8", "+ICMPI.i32", "+ICMPI.s32", "+ICMPI.u32",
        "*CSEL.v2i16", "*CSEL.v2s16", "*CSEL.v2u16", "*CSEL.v2f16", "+MUX.v2i16", "+MUX.v4i8", "+SWZ.v2i16",
        "+SWZ.v4i8", "*CLZ.v2u16", "*CLZ.v4u8", "*IMUL.v2i16", "*IMUL.v4i8", "*IDP.v4i8", "+V2S8_TO_V2S16",
        "+V2U8_TO_V2U16", "+V2S8_TO_V2F16", "+V2U8_TO_V2F16", "*LSHIFT_AND.v2i16", "*LSHIFT_OR.v2i16",
        "*LSHIFT_XOR.v2i16", "*RSHIFT_AND.v2i16", "*RSHIFT_OR.v2i16", "*RSHIFT_XOR.v2i16", "*ARSHIFT.v2i16",
        "*LSHIFT_AND.v4i8", "*LSHIFT_OR.v4i8", "*LSHIFT_XOR.v4i8", "*RSHIFT_AND.v4i8", "*RSHIFT_OR.v4i8",
        "*RSHIFT_XOR.v4i8", "*ARSHIFT.v4i8", "+S8_TO_F32", "+U8_TO_F32", "+S16_TO_F32", "+U16_TO_F32",
        "+F16_TO_S32", "+F16_TO_U32", "+V2F16_TO_V2S16", "+V2F16_TO_V2U16", "+V2S16_TO_V2F16", "+V2U16_TO_V2F16",
        "*FCMP.v2f16", "+FCMP.v2f16", "*FROUND.v2f16", "+FROUND.v2f16", "*FREXPM.v2f16", "+FREXPM.v2f16",
        "*FREXPE.v2f16", "+FREXPE.v2f16", "+LDEXP.v2f16", "*QUIET.f32", "+QUIET.f32", "*QUIET.v2f16",
        "+QUIET.v2f16", "+FPCLASS.f32", "+FPCLASS.f16", "+ILOGB.f32", "+ILOGB.v2f16", "+LOGB.f32",
        "+LOGB.v2f16", "+FRCP.f16", "+FRSQ.f16", "+FADD_RSCALE.f32", "*FMA_RSCALE.v2f16", "*LSHIFT_DOUBLE.i32",
        "*RSHIFT_DOUBLE.i32", "*ARSHIFT_DOUBLE.i32", "*LROT_DOUBLE.i32", "*RROT_DOUBLE.i32", "*FLSHIFT_DOUBLE.i32",
        "*FRSHIFT_DOUBLE.i32", "+WMASK", "+FLOG_TABLE.f32", "+FLOGD.f32", "*FADD_LSCALE.f32", "+FEXP.f32",
        "+FSIN_TABLE.u6", "+FCOS_TABLE.u6", "+FATAN_ASSIST.f32", "+FATAN_ASSIST.f16", "+FATAN_TABLE.f32",
        "+FATAN_TABLE.f16", "*CUBEFACE1", "+CUBE_SSEL", "+CUBE_TSEL", "*SEG_ADD",
        "+SEG_ADD", "*SEG_SUB", "+SEG_SUB"};
    for (const Encoding* e : decode_order(true))
      for (const char* n : names)
        if (e->name == n) fmas.push_back(e);
    for (const Encoding* e : decode_order(false))
      for (const char* n : names)
        if (e->name == n) adds.push_back(e);
    return true;
  }();
  (void)init;
  return fma ? fmas : adds;
}

struct TupleState {
  unsigned regs[3];
  unsigned fau_kind;  // 0 uniform, 1 special, 2 constant
  unsigned uniform;   // pair 8..11
  unsigned special;   // 0-3
  uint32_t consts[2];
  bool wide = false;  // a 64-bit clause: registers name pairs (even), writes are whole pairs
};

std::string operand(fuzz::Rng& rng, const TupleState& ts, unsigned v, bool fma) {
  char b[64];
  switch (v) {
    case 0: case 1: case 2: std::snprintf(b, sizeof b, "r%u", ts.wide ? ts.regs[v] & ~1u : ts.regs[v]); return b;
    case 3: return fma ? "#0" : "t";
    case 4: case 5: {
      const bool hi = v == 5;
      if (ts.fau_kind == 0) std::snprintf(b, sizeof b, "u%u.w%u", ts.uniform, hi ? 1u : 0u);
      else if (ts.fau_kind == 1) {
        static const char* names[] = {"#0", "lane_id", "warp_id", "core_id"};
        std::snprintf(b, sizeof b, "%s.%s", names[ts.special], hi ? "y" : "x");
      } else {
        std::snprintf(b, sizeof b, "0x%08x", ts.consts[rng.below(2)]);
      }
      return b;
    }
    case 6: return "t0";
    default: return "t1";
  }
}

std::string mod_text(const ModDesc& m, int v) {
  const std::string& opt = m.opts[size_t(v)];
  if (m.has_default && opt == m.dflt) return "";
  return "." + opt;
}

std::string random_instruction(fuzz::Rng& rng, bool fma, const TupleState& ts, bool allow_write) {
  const auto& list = candidates(fma);
  const Encoding& e = *list[rng.below(uint32_t(list.size()))];
  std::vector<int> mods(e.mods.size(), 0);
  const auto& back = e.back[e.ordered ? rng.below(2) : 0];
  // An encoding without indirect modifiers has one table entry, the empty
  // combination: nothing to choose (and nothing to reject).
  if (!back.empty() && !e.keys.empty()) {
    std::vector<size_t> ok;
    for (size_t p = 0; p < back.size(); ++p)
      if (!back[p].empty()) ok.push_back(p);
    if (ok.empty()) return "";
    const auto& ctx = back[ok[rng.below(uint32_t(ok.size()))]];
    for (size_t k = 0; k < e.keys.size(); ++k) mods[size_t(e.keys[k])] = ctx[k];
  }
  for (size_t i = 0; i < e.mods.size(); ++i) {
    const ModDesc& m = e.mods[i];
    if (m.start < 0) continue;
    std::vector<int> vals;
    for (size_t v = 0; v < m.opts.size(); ++v)
      if (m.opts[v] != "reserved") vals.push_back(int(v));
    if (vals.empty()) return "";
    mods[i] = vals[rng.below(uint32_t(vals.size()))];
  }
  std::string s = e.name;
  for (size_t i = 0; i < e.mods.size(); ++i)
    if (e.mods[i].src < 0) s += mod_text(e.mods[i], mods[i]);
  char b[64];
  const unsigned w = rng.below(6);
  if (allow_write && w < 3) {
    const unsigned r = rng.below(16);
    if (ts.wide) std::snprintf(b, sizeof b, " r%u:%s", r & ~1u, fma ? "t0" : "t1");
    else std::snprintf(b, sizeof b, " r%u:%s%s", r, fma ? "t0" : "t1", w == 0 ? "" : w == 1 ? ".h0" : ".h1");
    s += b;
  } else {
    s += fma ? " t0" : " t1";
  }
  for (size_t i = 0; i < e.srcs.size(); ++i) {
    std::vector<unsigned> vals;
    for (unsigned v = 0; v < 8; ++v)
      if ((e.srcs[i].mask >> v) & 1) vals.push_back(v);
    if (vals.empty()) return "";
    s += ", " + operand(rng, ts, vals[rng.below(uint32_t(vals.size()))], fma);
    for (size_t k = 0; k < e.mods.size(); ++k)
      if (e.mods[k].src == int(i)) s += mod_text(e.mods[k], mods[k]);
  }
  for (const ImmDesc& im : e.imms) {
    std::snprintf(b, sizeof b, ", %s:%u", im.name.c_str(), unsigned(rng.next() & ((1u << im.size) - 1)));
    s += b;
  }
  return s;
}

// One random clause body (tuples) that assembles, with header `head`.
bool random_body(fuzz::Rng& rng, const std::string& head, std::string& body, bool wide = false) {
  const unsigned n = 1 + rng.below(6);
  body.clear();
  for (unsigned t = 0; t < n; ++t) {
    const bool last = t + 1 == n;
    bool placed = false;
    for (int tries = 0; tries < 100 && !placed; ++tries) {
      TupleState ts;
      ts.wide = wide;
      for (unsigned& r : ts.regs) r = rng.below(16);
      ts.fau_kind = rng.below(3);
      ts.uniform = 8 + rng.below(4);
      ts.special = rng.below(4);
      ts.consts[0] = uint32_t(fuzz::interesting_bits(rng, rng.chance(50) ? ir::Type::F32 : ir::Type::I32));
      ts.consts[1] = uint32_t(fuzz::interesting_bits(rng, rng.chance(50) ? ir::Type::F32 : ir::Type::I32));
      std::string f = random_instruction(rng, true, ts, true);
      // The last tuple's writes come from the first tuple's block: one write at most.
      std::string a = random_instruction(rng, false, ts, !last || f.find(':') == std::string::npos);
      if (f.empty() || a.empty()) continue;
      const std::string tuple = "    " + f + "\n    " + a + "\n";
      std::vector<uint8_t> bytes;
      std::string e;
      // Keep the tuple if it packs and the translation takes its modifiers.
      ir::Function fn;
      if (assemble(head + body + tuple + (last ? "" : "    *NOP t0\n    +NOP t1\n") + "}\n", bytes, e) &&
          translate(bytes.data(), bytes.size(), 4, fn, e)) {
        body += tuple;
        placed = true;
      }
    }
    if (!placed) return false;
  }
  return true;
}

std::string hex_of(const std::vector<uint8_t>& v) {
  std::string s;
  char b[4];
  for (uint8_t x : v) {
    std::snprintf(b, sizeof b, "%02x", x);
    s += b;
  }
  return s;
}

class Session final : public isa::FuzzSession {
 public:
  Session(uint64_t seed, unsigned width, std::string variant)
      : rng_(seed), wide_rng_(seed ^ 0x64b17c1a05e5ull), width_(width), variant_(std::move(variant)) {}
  std::vector<std::string> ir_engines() const override { return {"ir-interp"}; }

  std::unique_ptr<isa::FuzzCase> generate(uint64_t index, std::string& err) override {
    (void)index;  // one random stream: programs come in index order
    for (int attempt = 0; attempt < 100; ++attempt) {
      auto c = std::make_unique<Case>();
      if (build(c->p)) return c;
    }
    err = "bifrost: the generator could not draw a program the translation accepts";
    return nullptr;
  }

  std::unique_ptr<isa::FuzzOutcome> run_reference(const isa::FuzzCase& c) override {
    return run(as(c), nullptr);
  }
  bool translate(const isa::FuzzCase& c, ir::Function& out, std::string& err) override {
    const FuzzProgram& p = as(c);
    return bifrost::translate(p.code.data(), p.code.size(), width_, out, err);
  }
  std::unique_ptr<isa::FuzzOutcome> run_translated(const isa::FuzzCase& c, const isa::TranslatedRun& r) override {
    return run(as(c), &r);
  }
  std::string compare(const isa::FuzzCase& c, const isa::FuzzOutcome& ref, const isa::FuzzOutcome& got) override {
    if (!ref.error.empty()) return "reference failed: " + ref.error;
    if (!got.error.empty()) return got.error;
    const Outcome& a = static_cast<const Outcome&>(ref);
    const Outcome& b = static_cast<const Outcome&>(got);
    if (a.fault.empty() != b.fault.empty())
      return "fault: reference '" + a.fault + "', engine '" + b.fault + "'";
    (void)c;
    for (size_t i = 0; i + 4 <= a.out.size(); i += 4) {
      uint32_t x, y;
      std::memcpy(&x, &a.out[i], 4);
      std::memcpy(&y, &b.out[i], 4);
      if (x != y) {
        char m[128];
        std::snprintf(m, sizeof m, "thread %zu r%zu: expected 0x%08x, got 0x%08x", i / kRowBytes, (i % kRowBytes) / 4,
                      x, y);
        return m;
      }
    }
    return "";
  }
  std::string reproducer(const isa::FuzzCase& c, const isa::FuzzOutcome& ref, const std::string& name,
                         const std::string& description) override {
    const FuzzProgram& p = as(c);
    replay::json doc = document(p);
    doc["name"] = name;
    doc["description"] = description;
    const Outcome& o = static_cast<const Outcome&>(ref);
    if (o.error.empty() && o.fault.empty()) {
      replay::json vals = replay::json::array();
      for (size_t i = 0; i + 4 <= o.out.size(); i += 4) {
        uint32_t x;
        std::memcpy(&x, &o.out[i], 4);
        char b[16];
        std::snprintf(b, sizeof b, "0x%08x", x);
        vals.push_back(b);
      }
      doc["expect"] = {{"memory", {{{"name", "out"}, {"u32", vals}}}}};
    }
    return doc.dump(2) + "\n";
  }
  std::string reproducer_stem(uint64_t seed, uint64_t index) const override {
    return "bifrost-seed" + std::to_string(seed) + "-it" + std::to_string(index);
  }

 private:
  static const FuzzProgram& as(const isa::FuzzCase& c) { return static_cast<const Case&>(c).p; }

  BifrostLaunch launch_of(const FuzzProgram& p) const {
    BifrostLaunch L;
    L.code = p.code;
    L.warp_width = width_;
    L.grid = rt::Dim3{1, 1, 1};
    L.block = rt::Dim3{p.threads, 1, 1};
    L.uniforms = p.uniforms;
    L.budget = int64_t(1) << 24;  // straight-line programs: never reached by the interpreter
    return L;
  }
  void memory_of(const FuzzProgram& p, rt::Memory& mem) const {
    std::string err;
    mem.add_buffer("in", ir::Space::Global, kIn, p.input.size() * 4, err);
    std::memcpy(mem.find("in")->data(), p.input.data(), p.input.size() * 4);
    mem.add_buffer("out", ir::Space::Global, kOut, size_t(p.threads) * kRowBytes, err);
  }
  std::unique_ptr<Outcome> run(const FuzzProgram& p, const isa::TranslatedRun* r) {
    auto o = std::make_unique<Outcome>();
    rt::Memory mem;
    memory_of(p, mem);
    BifrostLaunch L = launch_of(p);
    BifrostResult res = r ? run_translation(L, r->translation, r->exe, r->vars_bytes, 1, mem, nullptr)
                          : run_bifrost(L, reference_engine(), mem, 1);
    o->error = res.error;
    if (res.fault) o->fault = rt::fault_kind_name(res.fault->kind);
    const rt::Buffer* out = mem.find("out");
    if (out) o->out.assign(out->data(), out->data() + out->size);
    return o;
  }
  replay::json document(const FuzzProgram& p) const {
    replay::json u = replay::json::object();
    for (unsigned i = 0; i < kUniformWords; ++i)
      if (p.uniforms[i]) {
        char b[16];
        std::snprintf(b, sizeof b, "0x%08x", p.uniforms[i]);
        u["u" + std::to_string(i)] = b;
      }
    replay::json in = replay::json::array();
    for (uint32_t v : p.input) {
      char b[16];
      std::snprintf(b, sizeof b, "0x%08x", v);
      in.push_back(b);
    }
    return {{"gpurc", 1},
            {"isa", "bifrost"},
            {"variant", variant_},
            {"program", {{"bytes", hex_of(p.code)}}},
            {"launch", {{"grid", {1}}, {"block", {p.threads}}}},
            {"state", {{"uniforms", u}}},
            {"memory",
             {{{"name", "in"}, {"space", "global"}, {"address", "0x100000"}, {"size", p.input.size() * 4},
               {"init", {{"u32", in}}}},
              {{"name", "out"}, {"space", "global"}, {"address", "0x200000"}, {"size", p.threads * kRowBytes}}}}};
  }

  // Loads r0-r15 (four 16-byte loads from the thread's row of `in`), a few
  // random clauses (some skipped by a divergent branch), stores r0-r15 to `out`.
  bool build(FuzzProgram& p) {
    p.threads = 1 + rng_.below(32);
    p.input.resize(size_t(p.threads) * 16);
    for (uint32_t& v : p.input) v = uint32_t(fuzz::interesting_bits(rng_, rng_.chance(50) ? ir::Type::F32 : ir::Type::I32));
    for (unsigned k = 0; k < 4; ++k) {
      p.uniforms[2 * k] = uint32_t(kIn + 16 * k);
      p.uniforms[8 + 2 * k] = uint32_t(kOut + 16 * k);
    }
    for (unsigned i = 16; i < 24; ++i)
      p.uniforms[i] = uint32_t(fuzz::interesting_bits(rng_, rng_.chance(50) ? ir::Type::F32 : ir::Type::I32));
    std::vector<std::string> clauses;  // text without the label line
    for (unsigned k = 0; k < 4; ++k)
      clauses.push_back("ds(0) nbb load\n{\n    *SHADDXL.u32 t0, u" + std::to_string(k) + ".w0, r60, shift:6\n" +
                        "    +LOAD.i128 t1, t, u" + std::to_string(k) + ".w1, @r" + std::to_string(4 * k) + "\n}\n");
    static const char* ftz[4] = {"", " ftz_dx11", " ftz_hsa", " ftz_au"};
    const unsigned nbody = 1 + rng_.below(4);
    std::vector<std::string> body;
    for (unsigned i = 0; i < nbody; ++i) {
      const std::string head = std::string("ds(0) nbb") + (rng_.chance(20) ? ftz[1 + rng_.below(3)] : "") + "\n{\n";
      std::string b;
      if (!random_body(rng_, "clause_0:\n" + head, b)) return false;
      body.push_back(head + b + "}\n");
    }
    // A divergent skip: threads whose lane or register bit is 0 branch over the next body clause.
    const int skip = rng_.chance(40) ? int(rng_.below(nbody)) : -1;
    // A 64-bit clause (register pairs) after the body in a third of the
    // programs, drawn from its own stream so that the rest of every program
    // stays what the seed gave before 64-bit clauses existed.
    if (wide_rng_.chance(33)) {
      const std::string head = std::string("ds(0) nbb 64") + (wide_rng_.chance(20) ? ftz[1 + wide_rng_.below(3)] : "") + " regs64\n{\n";
      std::string b;
      if (random_body(wide_rng_, "clause_0:\n" + head, b, true)) body.push_back(head + b + "}\n");
    }
    std::vector<std::string> all = clauses;
    int branch_at = -1;
    for (unsigned i = 0; i < body.size(); ++i) {
      if (int(i) == skip) {
        branch_at = int(all.size());
        char b[160];
        std::snprintf(b, sizeof b, "ds(0) nbb\n{\n    *LSHIFT_AND.i32 t0, r%u, 0x%08x, #0\n    +BRANCHZ.i32.eq t1, t, clause_%%d\n}\n",
                      rng_.chance(50) ? 60u : rng_.below(16), 1u << rng_.below(4));
        all.push_back(b);
      }
      all.push_back(body[i]);
    }
    for (unsigned k = 0; k < 4; ++k)
      all.push_back(std::string("ds(0) ") + (k == 3 ? "eos" : "nbb") + " store\n{\n    *SHADDXL.u32 t0, u" +
                    std::to_string(4 + k) + ".w0, r60, shift:6\n    +STORE.i128 t1, t, u" + std::to_string(4 + k) +
                    ".w1, @r" + std::to_string(4 * k) + "\n}\n");
    // Clause positions (quadwords): assemble each alone.
    std::vector<unsigned> pos(all.size() + 1, 0);
    for (size_t i = 0; i < all.size(); ++i) {
      std::string t = all[i];
      if (int(i) == branch_at) {
        char b[512];
        std::snprintf(b, sizeof b, t.c_str(), 0);
        t = b;
      }
      std::vector<uint8_t> bytes;
      std::string e;
      if (!assemble("clause_0:\n" + t, bytes, e)) return false;
      pos[i + 1] = pos[i] + unsigned(bytes.size() / 16);
    }
    std::string text;
    for (size_t i = 0; i < all.size(); ++i) {
      std::string t = all[i];
      if (int(i) == branch_at) {
        char b[512];
        std::snprintf(b, sizeof b, t.c_str(), int(pos[i + 2]));
        t = b;
      }
      text += "clause_" + std::to_string(pos[i]) + ":\n" + t;
    }
    std::string e;
    p.code.clear();
    if (!assemble(text, p.code, e)) return false;
    p.text = text;
    // Only programs the translation accepts (the interpreter runs a superset).
    ir::Function f;
    return bifrost::translate(p.code.data(), p.code.size(), width_, f, e);
  }

  fuzz::Rng rng_;
  fuzz::Rng wide_rng_;  // the 64-bit clauses' draws
  unsigned width_;
  std::string variant_;
};

}  // namespace

std::unique_ptr<isa::FuzzSession> make_fuzz_session(const fuzz::IsaFuzzOptions& opt, std::string& err) {
  const unsigned w = warp_width_of(opt.variant);
  if (!w) {
    err = "bifrost: unknown variant '" + opt.variant + "'";
    return nullptr;
  }
  return std::make_unique<Session>(opt.seed, w, opt.variant.empty() ? "g72" : opt.variant);
}

}  // namespace gpurc::bifrost
