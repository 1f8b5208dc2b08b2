// Bifrost disassembler: Mesa's Bifrost disassembler text, derived from the
// encoding data (isa.h) and the clause layout (clause.h).
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "frontend/bifrost/bifrost.h"

namespace gpurc::bifrost {
namespace {

std::string fmt(const char* f, ...) __attribute__((format(printf, 1, 2)));
std::string fmt(const char* f, ...) {
  char buf[256];
  va_list ap;
  va_start(ap, f);
  std::vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return buf;
}

const char* flow_name(unsigned f) {
  static const char* n[8] = {"eos", "nbb br_pc", "nbb r_uncond", "nbb", "bb r_uncond", "bb", "we r_uncond", "we"};
  return n[f & 7];
}

const char* message_name(unsigned t) {
  static const char* n[16] = {"",     "vary",  "attr", "tex",          "vartex", "load",  "store", "atomic",
                              "barrier", "blend", "tile", "XXX reserved", "z_stencil", "atest", "job",   "64"};
  return t < 16 ? n[t] : "XXX reserved";
}

std::string header_text(const Header& h) {
  std::string s = fmt("ds(%u) ", h.dependency_slot());
  if (h.staging_barrier()) s += "osrb ";
  s += flow_name(h.flow());
  s += " ";
  if (h.suppress_inf()) s += "inf_suppress ";
  if (h.suppress_nan()) s += "nan_suppress ";
  if (h.ftz() == 1) s += "ftz_dx11 ";
  else if (h.ftz() == 2) s += "ftz_hsa ";
  if (h.ftz() == 3) s += "ftz_au ";
  if (h.float_exceptions() == 1) s += "fpe_ts ";
  else if (h.float_exceptions() == 2) s += "fpe_pd ";
  else if (h.float_exceptions() == 3) s += "fpe_psqr ";
  if (h.message_type()) s += std::string(message_name(h.message_type())) + " ";
  if (h.terminate_discarded()) s += "td ";
  if (h.next_prefetch()) s += "ncph ";
  if (h.next_message_type()) s += "next_" + std::string(message_name(h.next_message_type())) + " ";
  if (h.dependency_wait()) {
    s += "dwb(";
    bool first = true;
    for (unsigned i = 0; i < 8; ++i)
      if (h.dependency_wait() & (1u << i)) {
        if (!first) s += ", ";
        s += fmt("%u", i);
        first = false;
      }
    s += ") ";
  }
  return s;
}

std::string const_imm(uint32_t v) {
  float f;
  std::memcpy(&f, &v, 4);
  return fmt("0x%08x /* %f */", v, double(f));
}

// Problems found while printing (a PC-relative offset that is not a whole
// number of quadwords); print_clause turns the first into an error.
thread_local std::string* g_problem = nullptr;

std::string pc_imm(uint64_t imm, unsigned branch_offset, ConstMod mod, bool high32) {
  if (mod == ConstMod::PcHi && !high32) return const_imm(uint32_t(imm));
  int64_t sx64 = int64_t(imm << 4) >> 4;
  int32_t sx32[2] = {int32_t(uint32_t(imm) << 4) >> 4, int32_t(uint32_t(imm >> 32) << 4) >> 4};
  int64_t offs = mod == ConstMod::PcLo ? sx64 : mod == ConstMod::PcHi ? sx32[1] : sx32[high32 ? 1 : 0];
  if ((offs & 15) != 0 && g_problem && g_problem->empty())
    *g_problem = fmt("PC-relative constant offset %" PRId64 " is not a multiple of 16", offs);
  std::string s = fmt("clause_%" PRId64, int64_t(branch_offset) + offs / 16);
  if (mod == ConstMod::PcLo && high32) s += " >> 32";
  if (offs == 0) s += " /* XXX: likely an infinite loop */";
  return s;
}

std::string fau_text(const Clause& c, const RegBlock& r, unsigned branch_offset, bool high32) {
  if (r.fau & 0x80) return fmt("u%u.w%u", r.fau & 0x7f, high32 ? 1u : 0u);
  if (r.fau >= 0x20) {
    int idx = fau_constant_slot(r.fau);
    uint64_t imm = c.consts[idx] | (r.fau & 0xf);
    if (c.mods[idx] != ConstMod::None) return pc_imm(imm, branch_offset, c.mods[idx], high32);
    return const_imm(high32 ? uint32_t(imm >> 32) : uint32_t(imm));
  }
  std::string s;
  switch (r.fau) {
    case 0: s = "#0"; break;
    case 1: s = "lane_id"; break;
    case 2: s = "warp_id"; break;
    case 3: s = "core_id"; break;
    case 4: s = "framebuffer_size"; break;
    case 5: s = "atest_datum"; break;
    case 6: s = "sample"; break;
    default:
      if (r.fau >= 8 && r.fau <= 15) s = fmt("blend_descriptor_%u", r.fau - 8);
      else s = fmt("XXX - reserved%u", r.fau);
  }
  return s + (high32 ? ".y" : ".x");
}

std::string src_text(const Clause& c, const RegBlock& r, unsigned v, bool fma, unsigned branch_offset) {
  RegMode m = decode_regs(r, false);
  switch (v) {
    case 0: return fmt("r%u", m.reg0);
    case 1: return fmt("r%u", m.reg1);
    case 2: return fmt("r%u", r.reg2);
    case 3: return fma ? "#0" : "t";
    case 4: return fau_text(c, r, branch_offset, false);
    case 5: return fau_text(c, r, branch_offset, true);
    case 6: return "t0";
    default: return "t1";
  }
}

const char* mask_suffix(SlotOp op) { return op == SlotOp::WriteLo ? ".h0" : op == SlotOp::WriteHi ? ".h1" : ""; }

std::string dest_text(const RegBlock& next, bool last, bool fma) {
  RegMode m = decode_regs(next, last);
  auto writes = [](SlotOp o) { return o == SlotOp::Write || o == SlotOp::WriteLo || o == SlotOp::WriteHi; };
  if (fma) {
    if (writes(m.slot2)) return fmt("r%u:t0", next.reg2) + mask_suffix(m.slot2);
    if (writes(m.slot3) && m.slot3_fma) return fmt("r%u:t0", next.reg3) + mask_suffix(m.slot3);
    return "t0";
  }
  if (writes(m.slot3) && !m.slot3_fma) return fmt("r%u:t1", next.reg3) + mask_suffix(m.slot3);
  return "t1";
}

std::string mod_text(const ModDesc& m, int v) {
  const std::string& opt = v < 0 ? std::string("reserved") : m.opts[size_t(v)];
  if (m.has_default && opt == m.dflt) return "";
  return "." + opt;
}

}  // namespace

const std::vector<Model>& models() {
  static const std::vector<Model> m = {{"g72", 4}, {"g71", 4}, {"g51", 4}, {"g31", 4}, {"g76", 8}, {"g52", 8}};
  return m;
}

namespace {
// 64-bit clauses printed with pairs (header word `regs64`): rN = rN:rN+1.
std::string dest_text64(uint64_t next_bits, bool fma) {
  using P2 = RegMode64::Port2;
  using P3 = RegMode64::Port3;
  RegMode64 m = decode_regs64(next_bits);
  if (fma) {
    if (m.port2 == P2::WriteFma) return fmt("r%u:t0", m.reg2);
    if (m.port3 == P3::WriteFma) return fmt("r%u:t0", m.reg3);
    return "t0";
  }
  if (m.port2 == P2::WriteAdd) return fmt("r%u:t1", m.reg2);
  if (m.port3 == P3::WriteAdd) return fmt("r%u:t1", m.reg3);
  return "t1";
}
}  // namespace

static std::string print_instruction_impl(const Clause& c, unsigned t, bool fma, unsigned offset_quadwords, bool wide) {
  uint32_t word = fma ? c.tuples[t].fma : c.tuples[t].add;
  const Encoding* e = match(word, fma);
  if (!e) return fmt("INSTR_INVALID_ENC %s %X", fma ? "fma" : "add", word);
  RegBlock regs = RegBlock::from_bits(c.tuples[t].regs);
  bool last = t + 1 == c.ntuples;
  RegBlock next = RegBlock::from_bits(c.tuples[last ? 0 : t + 1].regs);
  std::vector<int> mv = decode_mods(*e, word);
  std::string s = e->name;
  for (size_t i = 0; i < e->mods.size(); ++i)
    if (e->mods[i].src < 0) s += mod_text(e->mods[i], mv[i]);
  s += ' ';
  s += wide ? dest_text64(c.tuples[last ? 0 : t + 1].regs, fma) : dest_text(next, last, fma);
  const RegMode64 m64 = wide ? decode_regs64(c.tuples[t].regs) : RegMode64{};
  for (size_t i = 0; i < e->srcs.size(); ++i) {
    unsigned v = (word >> e->srcs[i].start) & 7;
    if (wide && v <= 2) s += fmt(", r%u", v == 0 ? m64.reg0 : v == 1 ? m64.reg1 : m64.reg2);
    else s += ", " + src_text(c, regs, v, fma, offset_quadwords);
    if (!((e->srcs[i].mask >> v) & 1)) s += "(INVALID)";
    for (size_t k = 0; k < e->mods.size(); ++k)
      if (e->mods[k].src == int(i)) s += mod_text(e->mods[k], mv[k]);
  }
  for (const ImmDesc& im : e->imms) s += fmt(", %s:%u", im.name.c_str(), (word >> im.start) & ((1u << im.size) - 1));
  if (!e->staging.empty()) s += fmt(", @r%u", c.header.staging_register());
  return s;
}

std::string print_instruction(const Clause& c, unsigned t, bool fma, unsigned offset_quadwords) {
  return print_instruction_impl(c, t, fma, offset_quadwords, false);
}

// The tuple at which Mesa's disassembler, reading every block as a 32-bit
// block, first meets a reserved register mode, or -1. It decodes a block
// while printing the previous tuple's destinations: tuple 1's block first,
// ..., the first tuple's (read with the first-tuple rule) last.
static int first_reserved_for_mesa(const Clause& c) {
  for (unsigned k = 1; k <= c.ntuples; ++k) {
    unsigned t = k % c.ntuples;
    if (decode_regs(RegBlock::from_bits(c.tuples[t].regs), t == 0).reserved) return int(t);
  }
  return -1;
}

static std::string clause_body(const Clause& c, unsigned offset_quadwords, bool wide) {
  std::string text;
  for (unsigned t = 0; t < c.ntuples; ++t) {
    text += "    " + print_instruction_impl(c, t, true, offset_quadwords, wide) + "\n";
    text += "    " + print_instruction_impl(c, t, false, offset_quadwords, wide) + "\n";
  }
  return text;
}

bool print_clause(const Clause& c, unsigned offset_quadwords, std::string& out, std::string& err,
                  Clause64Text wide_text) {
  auto where = [&] { return fmt("bifrost: clause at byte 0x%zx: ", c.offset); };
  if (c.header.reserved_low() || c.header.reserved_14()) {
    err = where() + fmt("reserved header bits are set (header 0x%012" PRIx64 ")", c.header.bits);
    return false;
  }
  // A 64-bit clause (message type 15) whose every register block is a valid
  // 64-bit block prints with register pairs and the header word `regs64`:
  // Mesa's tool does not know that block and prints it as 32-bit blocks, a
  // reading that is wrong for such a clause and often not even packable
  // (docs/bifrost.md "64-bit clauses"). Other clauses print Mesa's text, and
  // so does every clause with Clause64Text::Mesa.
  bool wide = false;
  if (c.header.message_type() == kMessage64) {
    wide = true;
    for (unsigned t = 0; t < c.ntuples; ++t) wide = wide && decode_regs64(c.tuples[t].regs).valid;
  }
  for (unsigned t = 0; t < c.ntuples; ++t) {
    RegMode m = decode_regs(RegBlock::from_bits(c.tuples[t].regs), t == 0);
    if (m.reserved && !wide) {
      err = where() + fmt("tuple %u: register block 0x%09" PRIx64 " selects reserved slot mode %u", t,
                          c.tuples[t].regs, m.mode);
      return false;
    }
    RegBlock r = RegBlock::from_bits(c.tuples[t].regs);
    if (r.fau >= 0x20 && r.fau < 0x80 && fau_constant_slot(r.fau) < 0) {
      err = where() + fmt("tuple %u: FAU index 0x%02x names no constant", t, r.fau);
      return false;
    }
  }
  std::string problem;
  g_problem = &problem;
  std::string body = clause_body(c, offset_quadwords, wide);
  g_problem = nullptr;
  if (!problem.empty()) {
    err = where() + problem;
    return false;
  }
  std::string label = fmt("clause_%u:", offset_quadwords);
  if (wide && wide_text == Clause64Text::Mesa) {
    // Mesa's text: the blocks read as 32-bit blocks. Where that reading meets
    // a reserved mode, Mesa's tool stops with an assertion; what it has
    // printed by then depends on its stdio buffering (nothing when its output
    // is a pipe), and a build without assertions prints the mode as no
    // writes. No text is Mesa's there, so the clause becomes a note line
    // (not a comment: the assembler rejects it rather than dropping a clause).
    if (int t = first_reserved_for_mesa(c); t >= 0) {
      RegMode m = decode_regs(RegBlock::from_bits(c.tuples[t].regs), t == 0);
      out += label + fmt(" (64-bit clause; Mesa's disassembler aborts on it: tuple %d's register block read as "
                         "a 32-bit block selects reserved slot mode %u)\n\n",
                         t, m.mode);
      return true;
    }
    wide = false;
    body = clause_body(c, offset_quadwords, false);
  }
  out += label + "\n" + header_text(c.header) + (wide ? "regs64 " : "") + "\n{\n" + body + "}\n\n";
  return true;
}

bool disassemble(const uint8_t* code, size_t size, std::string& out, std::string& err, Clause64Text wide_text) {
  size_t at = 0;
  unsigned offset = 0;
  size_t end = size & ~size_t(3);
  while (at < end) {
    uint32_t w = uint32_t(code[at]) | uint32_t(code[at + 1]) << 8 | uint32_t(code[at + 2]) << 16 |
                 uint32_t(code[at + 3]) << 24;
    if (w == 0) break;  // padding after the last clause
    Clause c;
    if (!unpack_clause(code, size, at, c, err)) return false;
    if (c.ntuples == 0) {
      err = fmt("bifrost: clause at byte 0x%zx has no instruction quadword", at);
      return false;
    }
    if (!print_clause(c, offset, out, err, wide_text)) return false;
    at += size_t(c.quadwords) * 16;
    offset += c.quadwords;
  }
  // Fewer than four bytes left where a clause would start: truncated code, unless it is zero padding.
  if (at >= end)
    for (size_t i = at; i < size; ++i)
      if (code[i]) {
        err = fmt("bifrost: clause at byte 0x%zx: only %zu byte(s) left, too few for a clause", at, size - at);
        return false;
      }
  return true;
}

}  // namespace gpurc::bifrost
