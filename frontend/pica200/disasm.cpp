#include "frontend/pica200/disasm.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "ir/transc_pica.h"

namespace gpurc::pica {
namespace {

constexpr const char* kComp = "xyzw";

// Shortest picasso swizzle: trailing repeats of the last component are implied.
std::string swizzle_suffix(const Swizzle& s) {
  if (s.identity()) return "";
  int n = 4;
  while (n > 1 && s.comp[size_t(n - 1)] == s.comp[size_t(n - 2)]) --n;
  std::string r = ".";
  for (int i = 0; i < n; ++i) r.push_back(kComp[s.comp[size_t(i)]]);
  return r;
}

std::string mask_suffix(unsigned mask) {
  if (mask == 0xF) return "";
  if (mask == 0) return ".none";
  std::string r = ".";
  for (int c = 0; c < 4; ++c)
    if ((mask >> (3 - c)) & 1) r.push_back(kComp[c]);
  return r;
}

const char* kIndexNames[4] = {"", "a0.x", "a0.y", "aL"};
const char* kCmpNames[8] = {"eq", "ne", "lt", "le", "gt", "ge", "6", "7"};

std::string cond_text(const Instr& in) {
  std::string x = std::string(in.refx ? "" : "!") + "cmp.x";
  std::string y = std::string(in.refy ? "" : "!") + "cmp.y";
  switch (in.condop & 3) {
    case 0: return x + " || " + y;
    case 1: return x + " && " + y;
    case 2: return x;
    default: return y;
  }
}

std::string hex3(uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%03X", v);
  return b;
}

}  // namespace

bool picasso_expressible(const Instr& in, const OperandDesc* d) {
  const Format f = in.format();
  if (f == Format::F2) {  // picasso sets the reference bit of an unused flag
    if ((in.condop == 2 && !in.refy) || (in.condop == 3 && !in.refx)) return false;
    return true;
  }
  if (in.op == Op::SETEMIT) return in.vtxid <= 2;
  if (in.op == Op::LOOP) return in.uniform < 8;
  const unsigned n = num_sources(in.op);
  if (n == 0) return true;
  const unsigned fields[3] = {in.src1, in.src2, in.src3};
  const unsigned wide = wide_source(in.op);
  for (unsigned k = 0; k < n; ++k) {
    if (fields[k] == 0x0F) return false;  // picasso names v0-v14 only
    if (k + 1 == wide && in.idx && fields[k] < 0x20) return false;  // relative addressing reaches c only
  }
  auto distinct_inputs = [](unsigned a, unsigned b) { return a < 0x10 && b < 0x10 && a != b; };
  switch (in.op) {
    case Op::DPHI: case Op::DSTI: case Op::SGEI: case Op::SLTI:
      if (in.src2 < 0x20) return false;  // picasso would choose the plain form
      break;
    case Op::MADI:
      if (in.src3 < 0x20) return false;
      break;
    case Op::CMP:
      if (in.cmpx > 5 || in.cmpy > 5) return false;
      break;
    case Op::MOVA:
      if (d && d->mask != 8 && d->mask != 4 && d->mask != 12) return false;
      break;
    default: break;
  }
  if (f == Format::F1 || f == Format::F1i) {
    if (distinct_inputs(in.src1, in.src2)) return false;
  } else if (f == Format::F5 || f == Format::F5i) {
    if (distinct_inputs(in.src1, in.src2) || distinct_inputs(in.src2, in.src3) || distinct_inputs(in.src3, in.src1))
      return false;
  }
  if (d && has_dst(in.op) && d->mask == 0) return false;  // no picasso spelling of an empty mask
  // o7-o15 are names picasso refuses in a geometry shader; the listing does not know the stage.
  if (has_dst(in.op) && in.dst >= 7 && in.dst < 0x10) return false;
  return true;
}

std::string disasm_instr(const Instr& in, const std::vector<uint32_t>* descs, const TargetNamer& target) {
  const OpInfo& oi = info(in.op);
  std::string name(oi.name);
  const unsigned nsrc = num_sources(in.op);
  if (nsrc == 0) {
    auto tgt = [&](uint32_t a) { return target ? target(a) : hex3(a); };
    if (!picasso_expressible(in, nullptr)) name += "!";
    switch (in.op) {
      case Op::BREAKC: return name + " " + cond_text(in);
      case Op::CALL: return name + " " + tgt(in.target) + ", " + std::to_string(in.num);
      case Op::CALLC:
      case Op::IFC: return name + " " + cond_text(in) + ", " + tgt(in.target) + ", " + std::to_string(in.num);
      case Op::CALLU:
      case Op::IFU: return name + " b" + std::to_string(in.uniform) + ", " + tgt(in.target) + ", " + std::to_string(in.num);
      case Op::LOOP: return name + " i" + std::to_string(in.uniform) + ", " + tgt(in.target);
      case Op::JMPC: return name + " " + cond_text(in) + ", " + tgt(in.target);
      case Op::JMPU:
        return name + " " + std::string((in.num & 1) ? "!" : "") + "b" + std::to_string(in.uniform) + ", " + tgt(in.target);
      case Op::SETEMIT: {
        std::string s = name + " " + std::to_string(in.vtxid);
        if (in.prim || in.winding) {
          s += ",";
          if (in.prim) s += " prim";
          if (in.winding) s += " inv";
        }
        return s;
      }
      default: return name;
    }
  }

  const bool have_desc = descs && in.desc < descs->size();
  OperandDesc d = have_desc ? OperandDesc::decode((*descs)[in.desc]) : OperandDesc{};
  const unsigned wide = wide_source(in.op);
  auto src = [&](unsigned which) {
    unsigned field = which == 1 ? in.src1 : which == 2 ? in.src2 : in.src3;
    const Swizzle& sw = d.src[which - 1];
    std::string s = (sw.negate ? "-" : "") + src_reg_name(field);
    if (which == wide && in.idx) s += std::string("[") + kIndexNames[in.idx] + "]";
    return s + swizzle_suffix(sw);
  };
  // picasso names the operation and picks the inverted form itself (when the
  // second operand, for MAD the third, needs the wide field): the listing
  // writes the operation's name and, where picasso's choice would give
  // another word, the exact form (mnemonic + '!', see assembler.h).
  bool exact = !picasso_expressible(in, have_desc ? &d : nullptr);
  switch (in.op) {
    case Op::DPHI:
    case Op::DSTI:
    case Op::SGEI:
    case Op::SLTI:
      if (!exact) name.pop_back();
      break;
    case Op::MADI:
      if (!exact) name = "mad";
      break;
    default: break;
  }
  std::string s = name + (exact ? "! " : " ");
  if (in.op == Op::MOVA) {
    // a0 alone is picasso's a0.x: the full mask is spelled out.
    s += "a0" + (have_desc && d.mask == 0xF ? std::string(".xyzw") : mask_suffix(d.mask)) + ", " + src(1);
  } else if (in.op == Op::CMP) {
    s += src(1) + ", " + kCmpNames[in.cmpx] + ", " + kCmpNames[in.cmpy] + ", " + src(2);
  } else {
    s += dst_reg_name(in.dst) + mask_suffix(d.mask);
    for (unsigned k = 1; k <= nsrc; ++k) s += ", " + src(k);
  }
  if (!have_desc) s += ", desc[" + std::to_string(in.desc) + "]";
  return s;
}

namespace {

bool listing(const std::vector<uint32_t>& code, const std::vector<uint32_t>* descs, const ListingOptions& opt,
             const std::map<uint32_t, std::string>& names_in, std::string& out, std::string& err) {
  std::vector<Instr> ins;
  for (uint32_t a = 0; a < code.size(); ++a) {
    auto d = decode(code[a], a, &err);
    if (!d) return false;
    ins.push_back(*d);
  }
  std::map<uint32_t, std::string> names = names_in;
  if (!opt.raw) {
    for (const Instr& in : ins) {
      switch (in.format()) {
        case Format::F2:
        case Format::F3:
          if (in.op != Op::BREAKC) {
            char b[16];
            std::snprintf(b, sizeof b, "l_%03x", in.target);
            names.emplace(in.target, b);
          }
          break;
        default: break;
      }
    }
  }
  TargetNamer namer;
  if (!opt.raw) namer = [&](uint32_t a) { return names.at(a); };
  // The listing is code outside any .proc, which picasso rejects: the
  // extension directive makes it assemble.
  if (!opt.raw) out += ".loose_code\n";
  for (uint32_t a = 0; a < ins.size(); ++a) {
    if (!opt.raw) {
      auto it = names.find(a);
      if (it != names.end()) out += it->second + ":\n";
    }
    std::string line = disasm_instr(ins[a], descs, namer);
    if (opt.raw) {
      out += line + "\n";
    } else {
      char c[40];
      std::snprintf(c, sizeof c, "; %03X: %08X", a, code[a]);
      line = "    " + line;
      if (line.size() < 44) line.append(44 - line.size(), ' ');
      out += line + " " + c + "\n";
    }
  }
  if (!opt.raw) {
    // Labels past the last instruction (end of a block at the end of the program).
    for (auto it = names.lower_bound(uint32_t(ins.size())); it != names.end(); ++it) {
      if (it->first > ins.size()) {
        err = "pica200: target " + hex3(it->first) + " lies past the end of the program";
        return false;
      }
      out += it->second + ":\n";
    }
  }
  return true;
}

std::string fmt_float(float f) {
  if (std::isnan(f)) return "nan";
  if (std::isinf(f)) return f > 0 ? "inf" : "-inf";
  char b[32];
  std::snprintf(b, sizeof b, "%.9g", double(f));
  std::string s = b;
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

// Uniform ids as the file holds them (shbin.h) -> picasso's register numbers
// (v 0x00-0x0F, c 0x20-0x7F, i 0x80-0x83, b 0x88-0x97); -1 if none.
int uniform_pos(uint16_t id) {
  if (id < 0x10) return id;
  if (id < 0x70) return id + 0x10;
  if (id >= 0x70 && id < 0x74) return id + 0x10;
  if (id >= 0x78 && id < 0x88) return id + 0x10;
  return -1;
}

bool valid_label_ident(const std::string& s) {
  if (s.empty() || !(std::isalpha((unsigned char)s[0]) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum((unsigned char)c) || c == '_' || c == '.' || c == '$')) return false;
  return true;
}

}  // namespace

bool disasm_words(const std::vector<uint32_t>& code, const std::vector<uint32_t>* descs, const ListingOptions& opt,
                  std::string& out, std::string& err) {
  return listing(code, descs, opt, {}, out, err);
}

bool disasm_shbin(const Shbin& s, const ListingOptions& opt, std::string& out, std::string& err) {
  // Raw mode: the shared code only, one instruction per line, numeric targets.
  if (opt.raw) return listing(s.code, &s.descs, opt, {}, out, err);
  // Label names from the DVLE label tables (first valid, unused name per address).
  std::map<uint32_t, std::string> names;
  std::set<std::string> used;
  for (const Dvle& d : s.dvles)
    for (const ShbinLabel& l : d.labels)
      if (l.offset <= s.code.size() && valid_label_ident(l.name) && !used.count(l.name) && !names.count(l.offset)) {
        names[l.offset] = l.name;
        used.insert(l.name);
      }
  auto name_at = [&](uint32_t a) {
    auto it = names.find(a);
    if (it != names.end()) return it->second;
    char b[16];
    std::snprintf(b, sizeof b, "l_%03x", a);
    names[a] = b;
    return std::string(b);
  };
  // Uniform declarations are replayed through picasso's allocator: shared
  // space (vertex shaders, `.gsh` alone) continues across DVLEs and reuses a
  // name declared before; a `.gsh MODE cN` DVLE allocates from cN. Gaps are
  // filled with hidden (`_`) uniforms, which take registers but no table entry.
  // `.gsh` alone and `.gsh point cN` write the same DVLE bytes; only the
  // uniform registers, of this DVLE and of the ones after it, tell them
  // apart. Bit j of `point` picks `point cN` for the j-th such DVLE.
  auto render = [&](uint64_t point, std::string& head) -> bool {
    std::map<std::string, std::pair<int, int>> shared_names;  // name -> pos, size
    int shared_next[3] = {0x20, 0x80, 0x88};                  // c, i, b
    int gap_id = 0;
    unsigned ambiguous = 0;
    for (size_t k = 0; k < s.dvles.size(); ++k) {
      const Dvle& d = s.dvles[k];
      if (d.main_offset > s.code.size() || d.endmain_offset > s.code.size()) {
        err = "shbin: DVLE " + std::to_string(k) + " entry point lies outside the code";
        return false;
      }
      if (k) head += ".dvle\n";
      head += "; DVLE " + std::to_string(k) + (d.is_geometry ? " (geometry shader)\n" : " (vertex shader)\n");
      head += ".entry " + name_at(d.main_offset) + " " + name_at(d.endmain_offset) + "\n";
      bool has_dummy = false;
      for (const ShbinOutput& o : d.outputs) has_dummy |= o.semantic == kOutDummy;
      std::vector<std::pair<int, const ShbinUniform*>> us;  // picasso position, entry
      int lowest_c = -1;
      for (const ShbinUniform& u : d.uniforms) {
        int pos = uniform_pos(u.start);
        us.push_back({pos, &u});
        if (pos >= 0x20 && pos < 0x80 && (lowest_c < 0 || pos < lowest_c)) lowest_c = pos;
      }
      std::stable_sort(us.begin(), us.end(), [](auto& a, auto& b) { return a.first < b.first; });
      bool gsh_space = false;
      int local_next[3] = {0x20, 0x80, 0x88};
      bool merge_implied = false;
      if (d.is_geometry) {
        static const char* modes[3] = {"point", "variable", "fixed"};
        if (d.gs_mode > 2) {
          err = "shbin: DVLE " + std::to_string(k) + " has unknown geometry shader mode " + std::to_string(d.gs_mode);
          return false;
        }
        bool compat = d.gs_mode == 0 && d.gs_float_start == 0 && d.gs_fully_defined == 0 && d.gs_vertex_count == 0 &&
                      !(has_dummy && d.merge_outmaps);
        // (A dummy output decides by itself: `point cN` would set the merge flag.)
        if (compat && !has_dummy && ambiguous < 64 && (point >> ambiguous++ & 1)) compat = false;
        if (compat) {
          head += ".gsh\n";
        } else {
          gsh_space = true;
          merge_implied = has_dummy;
          int first = lowest_c >= 0 ? lowest_c : 0x20;
          if (d.gs_mode == 2 && first <= 0x20 + d.gs_float_start) first = 0x20 + d.gs_float_start + 1;
          local_next[0] = first;
          head += std::string(".gsh ") + modes[d.gs_mode] + " c" + std::to_string(first - 0x20);
          if (d.gs_mode == 1) head += " " + std::to_string(d.gs_fully_defined);
          if (d.gs_mode == 2) head += " c" + std::to_string(d.gs_float_start) + " " + std::to_string(d.gs_vertex_count);
          head += "\n";
        }
      }
      if (d.merge_outmaps && !merge_implied) head += ".merge_outmaps\n";
      for (const ShbinOutput& o : d.outputs) {
        const char* sem = output_semantic_name(o.semantic);
        if (!sem || (o.mask & 0xF) == 0) {
          head += "; output type " + std::to_string(o.semantic) + " o" + std::to_string(o.reg) + " mask " +
                  std::to_string(o.mask) + " not representable\n";
          continue;
        }
        std::string m;
        if ((o.mask & 0xF) != 0xF)
          for (int c = 0; c < 4; ++c)
            if ((o.mask >> c) & 1) m.push_back(kComp[c]);
        head += ".out - " + std::string(sem) + " o" + std::to_string(o.reg) + (m.empty() ? "" : "." + m) + "\n";
      }
      int* next = gsh_space ? local_next : shared_next;
      for (auto& [pos, up] : us) {
        const ShbinUniform& u = *up;
        std::string n = u.name;
        for (char& c : n)
          if (c == '.') c = '$';
        int size = int(u.end) - int(u.start) + 1;
        if (pos < 0 || size < 1 || !valid_label_ident(n) || n[0] == '_') {
          head += "; uniform '" + u.name + "' with register ids " + std::to_string(u.start) + "-" + std::to_string(u.end) +
                  " not representable\n";
          continue;
        }
        if (pos < 0x10) {
          head += ".in " + n + " v" + std::to_string(pos) + "\n";
          continue;
        }
        int t = pos >= 0x88 ? 2 : pos >= 0x80 ? 1 : 0;
        const char* dir = t == 0 ? ".fvec" : t == 1 ? ".ivec" : ".bool";
        std::string decl = std::string(dir) + " " + n + (size > 1 ? "[" + std::to_string(size) + "]" : "") + "\n";
        if (!gsh_space) {
          auto it = shared_names.find(n);
          if (it != shared_names.end()) {
            if (it->second != std::make_pair(pos, size)) {
              head += "; uniform '" + u.name + "' at another register than before: not representable\n";
              continue;
            }
            head += decl;
            continue;
          }
        }
        if (pos < next[t]) {
          head += "; uniform '" + u.name + "' below the allocation point: not representable\n";
          continue;
        }
        if (pos > next[t]) {
          std::string gap = "_gap" + std::to_string(gap_id++);
          head += std::string(dir) + " " + gap + "[" + std::to_string(pos - next[t]) + "]\n";
          if (!gsh_space) shared_names[gap] = {next[t], pos - next[t]};
        }
        head += decl;
        next[t] = pos + size;
        if (!gsh_space) shared_names[n] = {pos, size};
      }
      for (const ShbinConstant& c : d.constants) {
        if (c.kind == ConstKind::Bool) {
          head += ".setb b" + std::to_string(c.reg) + " " + (c.value[0] ? "true" : "false") + "\n";
        } else if (c.kind == ConstKind::IVec) {
          head += ".seti i" + std::to_string(c.reg) + "(" + std::to_string(c.value[0]) + ", " + std::to_string(c.value[1]) +
                  ", " + std::to_string(c.value[2]) + ", " + std::to_string(c.value[3]) + ")\n";
        } else {
          head += ".setf c" + std::to_string(c.reg) + "(";
          for (int j = 0; j < 4; ++j) head += (j ? ", " : "") + fmt_float(ir::pica_fp::f24_to_f32(c.value[size_t(j)]));
          head += ")\n";
        }
      }
    }
    return true;
  };
  // The reading with the fewest uniforms left out (ties: `.gsh` alone first).
  std::string head;
  size_t best_lost = ~size_t(0);
  for (uint64_t point = 0; point < 256; ++point) {
    std::string h;
    if (!render(point, h)) return false;
    size_t lost = 0;
    for (size_t p = h.find("not representable"); p != std::string::npos; p = h.find("not representable", p + 1)) ++lost;
    if (lost < best_lost) {
      best_lost = lost;
      head = h;
    }
    if (lost == 0) break;
    unsigned n = 0;  // geometry DVLEs that could be either reading: nothing else to try past 2^n
    for (const Dvle& d : s.dvles)
      n += d.is_geometry && d.gs_mode == 0 && d.gs_float_start == 0 && d.gs_fully_defined == 0 && d.gs_vertex_count == 0;
    if (point + 1 >= (uint64_t(1) << std::min(n, 8u))) break;
  }
  // The code follows the last DVLE's header, and picasso's rule makes a
  // vertex DVLE whose code holds a SETEMIT a geometry shader: when the last
  // DVLE is a vertex shader and the shared code has one (another DVLE's),
  // the code goes into a DVLE of its own that is not written.
  bool setemit = false;
  for (uint32_t w : s.code) setemit |= (w >> 26) == 0x2B;
  if (setemit && !s.dvles.empty() && !s.dvles.back().is_geometry) head += ".dvle\n.nodvle\n";
  std::string body;
  if (!listing(s.code, &s.descs, ListingOptions{false}, names, body, err)) return false;
  out += head + body;
  return true;
}

}  // namespace gpurc::pica
