// Random valid Bifrost clauses, drawn from the encoding data: each tuple is
// written as text (random encoding, modifiers, operands the source masks
// allow, destinations) and packed by the assembler; a tuple the packer
// rejects (too many register reads, an ordering the modifiers cannot use)
// is drawn again. Used by the round-trip tests and the Mesa comparison.
#include <cstdio>

#include "frontend/bifrost/bifrost.h"

namespace gpurc::bifrost {
namespace {

std::string pick_mod_text(const ModDesc& m, int v) {
  const std::string& opt = m.opts[size_t(v)];
  if (m.has_default && opt == m.dflt) return "";
  return "." + opt;
}

struct TupleState {
  unsigned regs[3];
  unsigned fau_kind;  // 0 uniform, 1 special, 2 constant
  unsigned uniform;
  unsigned special;
  uint32_t consts[2];
  int branch_target;  // >= 0: high FAU reads are a branch offset to this clause
};

std::string operand(std::mt19937_64& rng, const TupleState& ts, unsigned v, bool fma) {
  char b[64];
  switch (v) {
    case 0:
    case 1:
    case 2:
      std::snprintf(b, sizeof b, "r%u", ts.regs[v]);
      return b;
    case 3: return fma ? "#0" : "t";
    case 4:
    case 5: {
      bool hi = v == 5;
      if (ts.fau_kind == 0) std::snprintf(b, sizeof b, "u%u.w%u", ts.uniform, hi ? 1u : 0u);
      else if (ts.fau_kind == 1) {
        static const char* names[] = {"#0", "lane_id", "warp_id", "core_id", "framebuffer_size", "atest_datum", "sample"};
        std::string n = ts.special < 7 ? names[ts.special] : "blend_descriptor_" + std::to_string(ts.special - 8);
        std::snprintf(b, sizeof b, "%s.%s", n.c_str(), hi ? "y" : "x");
      } else if (ts.branch_target >= 0) {
        if (hi) std::snprintf(b, sizeof b, "clause_%d", ts.branch_target);
        else std::snprintf(b, sizeof b, "0x%08x", ts.consts[0]);
      } else {
        std::snprintf(b, sizeof b, "0x%08x", ts.consts[rng() % 2]);
      }
      return b;
    }
    case 6: return "t0";
    default: return "t1";
  }
}

std::string random_instruction(std::mt19937_64& rng, bool fma, const TupleState& ts, unsigned staging, bool& write_ok,
                               bool allow_write) {
  const auto& order = decode_order(fma);
  const Encoding& e = *order[rng() % order.size()];
  // Indirect modifiers: a combination the derived fields can express.
  std::vector<int> mods(e.mods.size(), 0);
  const auto& back = e.back[e.ordered ? rng() % 2 : 0];
  if (!back.empty()) {
    std::vector<size_t> ok;
    for (size_t p = 0; p < back.size(); ++p)
      if (!back[p].empty()) ok.push_back(p);
    if (ok.empty()) return "";
    const auto& ctx = back[ok[rng() % ok.size()]];
    for (size_t k = 0; k < e.keys.size(); ++k) mods[size_t(e.keys[k])] = ctx[k];
  }
  for (size_t i = 0; i < e.mods.size(); ++i) {
    const ModDesc& m = e.mods[i];
    if (m.start < 0) continue;
    std::vector<int> vals;
    for (size_t v = 0; v < m.opts.size(); ++v)
      if (m.opts[v] != "reserved") vals.push_back(int(v));
    if (vals.empty()) return "";
    mods[i] = vals[rng() % vals.size()];
  }
  std::string s = e.name;
  for (size_t i = 0; i < e.mods.size(); ++i)
    if (e.mods[i].src < 0) s += pick_mod_text(e.mods[i], mods[i]);
  // Destination.
  char b[64];
  unsigned r = unsigned(rng() % 64);
  unsigned w = unsigned(rng() % 6);
  write_ok = allow_write && w < 3;
  if (write_ok) {
    std::snprintf(b, sizeof b, " r%u:%s%s", r, fma ? "t0" : "t1", w == 0 ? "" : w == 1 ? ".h0" : ".h1");
    s += b;
  } else {
    s += fma ? " t0" : " t1";
  }
  for (size_t i = 0; i < e.srcs.size(); ++i) {
    std::vector<unsigned> vals;
    for (unsigned v = 0; v < 8; ++v)
      if ((e.srcs[i].mask >> v) & 1) vals.push_back(v);
    if (vals.empty()) return "";
    s += ", " + operand(rng, ts, vals[rng() % vals.size()], fma);
    for (size_t k = 0; k < e.mods.size(); ++k)
      if (e.mods[k].src == int(i)) s += pick_mod_text(e.mods[k], mods[k]);
  }
  for (const ImmDesc& im : e.imms) {
    std::snprintf(b, sizeof b, ", %s:%u", im.name.c_str(), unsigned(rng() & ((1u << im.size) - 1)));
    s += b;
  }
  if (!e.staging.empty()) {
    std::snprintf(b, sizeof b, ", @r%u", staging);
    s += b;
  }
  return s;
}

std::string random_header(std::mt19937_64& rng) {
  static const char* flows[8] = {"eos", "nbb br_pc", "nbb r_uncond", "nbb", "bb r_uncond", "bb", "we r_uncond", "we"};
  static const char* msgs[] = {"vary", "attr", "tex", "vartex", "load", "store", "atomic", "barrier",
                               "blend", "tile", "z_stencil", "atest", "job", "64"};
  std::string h = "ds(" + std::to_string(rng() % 8) + ") ";
  if (rng() % 2) h += "osrb ";
  h += flows[rng() % 8];
  h += " ";
  if (rng() % 4 == 0) h += "inf_suppress ";
  if (rng() % 4 == 0) h += "nan_suppress ";
  static const char* ftz[4] = {"", "ftz_dx11 ", "ftz_hsa ", "ftz_au "};
  h += ftz[rng() % 4];
  static const char* fpe[4] = {"", "fpe_ts ", "fpe_pd ", "fpe_psqr "};
  h += fpe[rng() % 4];
  if (rng() % 2) h += std::string(msgs[rng() % 14]) + " ";
  if (rng() % 4 == 0) h += "td ";
  if (rng() % 2) h += "ncph ";
  if (rng() % 2) h += "next_" + std::string(msgs[rng() % 14]) + " ";
  unsigned wait = unsigned(rng() % 256);
  if (rng() % 2 && wait) {
    h += "dwb(";
    bool first = true;
    for (unsigned i = 0; i < 8; ++i)
      if (wait & (1u << i)) {
        h += (first ? "" : ", ") + std::to_string(i);
        first = false;
      }
    h += ") ";
  }
  return h;
}

}  // namespace

bool random_clause(std::mt19937_64& rng, std::vector<uint8_t>& out, std::string& err) {
  for (int attempt = 0; attempt < 50; ++attempt) {
    unsigned n = 1 + unsigned(rng() % 8);
    std::string head = "clause_0:\n" + random_header(rng) + "\n{\n";
    unsigned staging = unsigned(rng() % 64);
    std::string body;
    bool ok = true;
    for (unsigned t = 0; t < n && ok; ++t) {
      bool last = t + 1 == n;
      bool placed = false;
      for (int tries = 0; tries < 200 && !placed; ++tries) {
        TupleState ts;
        for (unsigned& r : ts.regs) r = unsigned(rng() % 64);
        ts.fau_kind = unsigned(rng() % 3);
        ts.uniform = unsigned(rng() % 128);
        static const unsigned specials[] = {0, 1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14, 15};
        ts.special = specials[rng() % 15];
        ts.consts[0] = uint32_t(rng());
        ts.consts[1] = rng() % 4 ? uint32_t(rng()) : ts.consts[0];
        ts.branch_target = ts.fau_kind == 2 && rng() % 4 == 0 ? int(rng() % 24) : -1;
        bool fw = false, aw = false;
        std::string f = random_instruction(rng, true, ts, staging, fw, true);
        std::string a = random_instruction(rng, false, ts, staging, aw, !(last && fw));
        if (f.empty() || a.empty()) continue;
        std::string tuple = "    " + f + "\n    " + a + "\n";
        // Check the prefix; a NOP tuple stands in for the clause's real end
        // so that the first tuple's write rules apply only to the true last tuple.
        std::string text = head + body + tuple + (last ? "" : "    *NOP t0\n    +NOP t1\n") + "}\n";
        std::vector<uint8_t> bytes;
        std::string e;
        if (assemble(text, bytes, e)) {
          body += tuple;
          placed = true;
        }
      }
      if (!placed) ok = false;
    }
    if (!ok) continue;
    std::vector<uint8_t> bytes;
    std::string e;
    if (!assemble(head + body + "}\n", bytes, e)) continue;
    out.insert(out.end(), bytes.begin(), bytes.end());
    return true;
  }
  err = "bifrost: could not draw a valid random clause";
  return false;
}

}  // namespace gpurc::bifrost
