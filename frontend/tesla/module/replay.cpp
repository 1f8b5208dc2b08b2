// Replay handler of isa tesla (docs/replay-format.md, docs/tesla.md "Replay"):
// program (words, envyas text, raw words or a text .cubin with a kernel
// name), launch, state.params / state.const, memory buffers in g[] / c[],
// and for vertex/geometry programs (variant ":vp" / ":gp") per-thread a[]
// inputs ("inputs.a") and o[] outputs (observed as outputs "o");
// the run itself is launch.h's.
#include <cctype>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "frontend/tesla/cubin.h"
#include "frontend/tesla/translate.h"
#include "frontend/tesla/module/launch.h"
#include "frontend/tesla/module/module.h"
#include "isa/replay_doc.h"

namespace gpurc::tesla {

using namespace gpurc::replay;

namespace {

void check_fields(const json& obj, const std::vector<std::string>& known, const std::string& where) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    bool ok = false;
    for (const auto& k : known) ok |= it.key() == k;
    if (!ok) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      throw ReplayError(where + it.key() + ": unknown field (" + list + ")");
    }
  }
}

std::vector<uint8_t> read_binary(const std::filesystem::path& p, const std::string& where) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw ReplayError(where + ": cannot open " + p.string());
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  return std::vector<uint8_t>(s.begin(), s.end());
}

// A cubin constant segment as a c[] buffer.
void add_cubin_const(const tesla::CubinConst& c, const std::string& owner, std::vector<tesla_run::Buffer>& out) {
  if (c.segnum < 0 || c.segnum > 15)
    throw ReplayError("program.binary_file: constant segment '" + c.name + "' has segnum " + std::to_string(c.segnum) + " (c0..c15)");
  uint32_t bytes = std::max<uint32_t>(c.bytes, uint32_t(c.mem.size() * 4));
  if (!bytes) return;
  tesla_run::Buffer b;
  b.name = "cubin " + owner + (c.name.empty() ? "" : " " + c.name) + " c" + std::to_string(c.segnum) + "[0x" +
           [&] { char s[16]; std::snprintf(s, sizeof s, "%x", c.offset); return std::string(s); }() + "]";
  b.space = ir::Space::Const;
  b.address = tesla::const_address(unsigned(c.segnum), c.offset);
  b.bytes.assign(bytes, 0);
  if (!c.mem.empty()) std::memcpy(b.bytes.data(), c.mem.data(), std::min<size_t>(bytes, c.mem.size() * 4));  // a reserved segment has no init
  out.push_back(std::move(b));
}

struct Program {
  tesla_run::Kernel kernel;
  std::vector<tesla_run::Buffer> consts;  // from a cubin
  std::map<std::string, size_t> const_symbols;  // named cubin consts -> index in `consts`
  std::vector<tesla::CubinConst> relocs;  // the cubin's __device__ variables
  uint32_t cubin_smem = 0;
};

std::string hex(uint64_t v) {
  char s[24];
  std::snprintf(s, sizeof s, "0x%llx", static_cast<unsigned long long>(v));
  return s;
}

// nvcc 1.0 accesses every global through g14[], and reads a __device__
// variable's address from its reloc slot (c14[offset]).
constexpr unsigned kDeviceSpace = 14;

// Places the cubin's __device__ variables in g14[] after every g14 buffer
// (from 0x100 up, so none sits at the null address; each 16-byte aligned),
// as buffers "cubin module NAME g14", and fills each reloc slot
// c<segnum>[offset] with the variable's 32-bit address (buffer "cubin module
// NAME c14[0x..]"). `symbols` receives name -> buffer index. g14[] is the
// linear global memory below 4 GiB unless the replay binds buffers at
// (14 << 32) + offset (launch.h): then the variables go there.
void place_device_variables(const std::vector<tesla::CubinConst>& relocs, std::vector<tesla_run::Buffer>& buffers,
                            std::map<std::string, size_t>& symbols) {
  if (relocs.empty()) return;
  unsigned space = 0;
  for (const auto& b : buffers)
    if (b.space == ir::Space::Global && (b.address >> 32) == kDeviceSpace) space = kDeviceSpace;
  uint64_t next = 0x100;
  for (const auto& b : buffers)
    if (b.space == ir::Space::Global && (b.address >> 32) == space)
      next = std::max<uint64_t>(next, (b.address & 0xffffffffu) + b.bytes.size());
  for (const auto& r : relocs) {
    next = (next + 15) & ~uint64_t(15);
    uint64_t size = std::max<uint32_t>(r.bytes, 1);
    if (next + size > (uint64_t(1) << 30))
      throw ReplayError("program.binary_file: __device__ variable '" + r.name + "' does not fit below 1 GiB of g14[]");
    tesla_run::Buffer var;
    var.name = "cubin module " + r.name + " g14";
    var.space = ir::Space::Global;
    var.address = tesla::global_address(space, uint32_t(next));
    var.bytes.assign(size_t(size), 0);
    symbols[r.name] = buffers.size();
    buffers.push_back(std::move(var));
    tesla_run::Buffer slot;
    slot.name = "cubin module " + r.name + " c" + std::to_string(r.segnum) + "[" + hex(r.offset) + "]";
    slot.space = ir::Space::Const;
    slot.address = tesla::const_address(unsigned(r.segnum), r.offset);
    slot.bytes.resize(4);
    uint32_t a = uint32_t(next);
    std::memcpy(slot.bytes.data(), &a, 4);
    buffers.push_back(std::move(slot));
    next += size;
  }
}

Program load_program(const json& doc, const std::filesystem::path& dir) {
  Program p;
  std::string variant = doc.contains("variant") ? doc["variant"].get<std::string>() : "g200";
  std::string err;
  if (!tesla::parse_target(variant, p.kernel.target, err)) throw ReplayError("variant: " + err);
  if (p.kernel.target.ptype == tesla::kFP)
    throw ReplayError("variant: fragment programs (:fp) do not run (interp, v[] and discard are not modelled); use :cp, :vp or :gp");
  if (!doc.contains("program") || !doc["program"].is_object()) throw ReplayError("program: missing or not an object");
  const json& prog = doc["program"];
  check_fields(prog, {"asm", "asm_file", "binary_file", "words", "entry", "kernel", "regs", "lmem", "attr_bytes"}, "program.");
  int sources = int(prog.contains("asm")) + int(prog.contains("asm_file")) + int(prog.contains("binary_file")) +
                int(prog.contains("words"));
  if (sources != 1) throw ReplayError("program: give exactly one of asm, asm_file, binary_file, words");
  std::string kernel_name;
  if (prog.contains("kernel")) {
    if (!prog["kernel"].is_string()) throw ReplayError("program.kernel: expected a string");
    kernel_name = prog["kernel"].get<std::string>();
  }
  if (prog.contains("entry")) {
    const json& e = prog["entry"];
    if (e.is_string()) {
      if (!kernel_name.empty() && kernel_name != e.get<std::string>())
        throw ReplayError("program.entry: names another kernel than program.kernel");
      kernel_name = e.get<std::string>();
    } else {
      uint64_t w = parse_uint(e, "program.entry");
      if (w > 0xffffffffu) throw ReplayError("program.entry: word address out of range");
      p.kernel.entry = uint32_t(w);  // checked against the code size below
    }
  }
  if (prog.contains("words")) {
    const json& w = prog["words"];
    if (!w.is_array()) throw ReplayError("program.words: expected an array of 32-bit words");
    for (size_t i = 0; i < w.size(); ++i) {
      uint64_t v = parse_uint(w[i], "program.words[" + std::to_string(i) + "]");
      if (v > 0xffffffffu) throw ReplayError("program.words[" + std::to_string(i) + "]: more than 32 bits");
      p.kernel.code.push_back(uint32_t(v));
    }
  } else if (prog.contains("binary_file")) {
    if (!prog["binary_file"].is_string()) throw ReplayError("program.binary_file: expected a path");
    std::vector<uint8_t> bytes = read_binary(dir / prog["binary_file"].get<std::string>(), "program.binary_file");
    if (tesla::looks_like_cubin(bytes)) {
      tesla::Cubin c;
      if (!tesla::parse_cubin(std::string(bytes.begin(), bytes.end()), c, err))
        throw ReplayError("program.binary_file: " + err);
      if (c.kernels.empty()) throw ReplayError("program.binary_file: the cubin has no kernel");
      const tesla::CubinKernel* k = kernel_name.empty() ? &c.kernels[0] : c.find(kernel_name);
      if (!k) throw ReplayError("program.kernel: the cubin has no kernel named '" + kernel_name + "'");
      if (kernel_name.empty() && c.kernels.size() > 1)
        throw ReplayError("program.kernel: the cubin has several kernels; name one");
      p.kernel.code = k->code;
      p.kernel.lmem = k->lmem;
      if (k->reg) p.kernel.regs = std::min<uint32_t>(k->reg, 128);
      p.cubin_smem = k->smem;
      for (const auto& cc : c.consts) {
        size_t before = p.consts.size();
        add_cubin_const(cc, "module", p.consts);
        if (p.consts.size() > before && !cc.name.empty()) p.const_symbols[cc.name] = before;
      }
      p.relocs = c.relocs;
      for (const auto& cc : k->consts) add_cubin_const(cc, k->name, p.consts);
    } else {
      if (bytes.size() % 4) throw ReplayError("program.binary_file: raw code must be whole 32-bit words");
      p.kernel.code.resize(bytes.size() / 4);
      std::memcpy(p.kernel.code.data(), bytes.data(), bytes.size());
    }
  } else {
    std::string text = program_text(doc, dir);
    if (!tesla::assemble(text, p.kernel.target, p.kernel.code, err)) throw ReplayError("program: " + err);
  }
  if (!kernel_name.empty() && !prog.contains("binary_file"))
    throw ReplayError("program.kernel: a kernel name needs a .cubin binary_file");
  if (p.kernel.code.empty()) throw ReplayError("program: no code");
  if (p.kernel.entry >= p.kernel.code.size()) throw ReplayError("program.entry: outside the code");
  if (prog.contains("regs")) {
    uint64_t r = parse_uint(prog["regs"], "program.regs");
    if (r < 1 || r > 128) throw ReplayError("program.regs: 1..128");
    p.kernel.regs = unsigned(r);
  }
  if (prog.contains("lmem")) {
    uint64_t m = parse_uint(prog["lmem"], "program.lmem");
    if (m > 0x10000) throw ReplayError("program.lmem: l[] addresses are 16-bit (at most 65536 bytes)");
    p.kernel.lmem = uint32_t(m);
  }
  if (prog.contains("attr_bytes")) {
    uint64_t m = parse_uint(prog["attr_bytes"], "program.attr_bytes");
    if (m < 4 || m > 0x10000 || m % 4) throw ReplayError("program.attr_bytes: a multiple of 4 in 4..0x10000 (a[]/o[] addresses are 16-bit)");
    if (!(p.kernel.target.ptype & (tesla::kVP | tesla::kGP)))
      throw ReplayError("program.attr_bytes: a[]/o[] are per-thread spaces of vertex/geometry programs (variant :vp or :gp)");
    p.kernel.attr_bytes = uint32_t(m);
  }
  return p;
}

std::vector<uint8_t> typed_or_hex(const json& v, const std::string& where) {
  if (v.is_array()) {
    TypedValues tv;
    for (size_t i = 0; i < v.size(); ++i) tv.bits.push_back(parse_elem(v[i], ElemType::U32, where + "[" + std::to_string(i) + "]"));
    return to_bytes(tv);
  }
  if (v.is_object() && v.size() == 1 && v.contains("hex")) {
    if (!v["hex"].is_string()) throw ReplayError(where + ".hex: expected a string");
    return parse_hex_bytes(v["hex"].get<std::string>(), where + ".hex");
  }
  if (!v.is_object()) throw ReplayError(where + ": expected {\"u32\": [...]} (any element type), {\"hex\": \"..\"} or a u32 list");
  return to_bytes(parse_typed(v, where));
}

}  // namespace

void replay(const isa::ReplayJob& job, ReplayRun& run) {
  const json& doc = job.doc;
  check_fields(doc, {"gpurc", "isa", "variant", "name", "program", "launch", "state", "inputs", "memory", "expect", "description", "listing"}, "");
  if (doc.contains("variant") && !doc["variant"].is_string()) throw ReplayError("variant: expected a string");
  Program prog = load_program(doc, job.dir);

  rt::LaunchConfig lc = parse_launch(doc.contains("launch") ? doc["launch"] : json::object());
  tesla_run::Launch launch;
  launch.grid = lc.grid;
  launch.block = lc.block;
  launch.budget = doc.contains("launch") && doc["launch"].contains("budget") ? lc.budget : 0;
  if (lc.shared_bytes > 0x10000) throw ReplayError("launch.shared_bytes: s[] addresses are 16-bit (at most 65536 bytes)");
  launch.smem = uint32_t(lc.shared_bytes ? lc.shared_bytes : prog.cubin_smem);

  std::vector<tesla_run::Buffer> buffers = std::move(prog.consts);
  if (doc.contains("state")) {
    const json& st = doc["state"];
    if (!st.is_object()) throw ReplayError("state: expected an object");
    check_fields(st, {"params", "const", "symbols"}, "state.");
    if (st.contains("params")) launch.params = typed_or_hex(st["params"], "state.params");
    if (st.contains("const")) {
      const json& cs = st["const"];
      if (!cs.is_object()) throw ReplayError("state.const: expected {\"c0\": {\"u32\": [...]}, ...}");
      for (auto it = cs.begin(); it != cs.end(); ++it) {
        std::string where = "state.const." + it.key();
        const std::string& k = it.key();
        unsigned idx = 16;
        if (k.size() >= 2 && k.size() <= 3 && k[0] == 'c' && std::isdigit(static_cast<unsigned char>(k[1])) &&
            (k.size() == 2 || std::isdigit(static_cast<unsigned char>(k[2]))))
          idx = unsigned(std::stoul(k.substr(1)));
        if (idx > 15) throw ReplayError(where + ": constant banks are c0..c15");
        tesla_run::Buffer b;
        b.name = k;
        b.space = ir::Space::Const;
        b.address = tesla::const_address(idx, 0);
        b.bytes = typed_or_hex(it.value(), where);
        if (b.bytes.empty()) throw ReplayError(where + ": empty");
        if (b.bytes.size() > 0x10000) throw ReplayError(where + ": more than 64 KiB");
        buffers.push_back(std::move(b));
      }
    }
  }
  if (launch.params.size() % 4) launch.params.resize((launch.params.size() + 3) & ~size_t(3), 0);
  bool attrs = prog.kernel.target.ptype == tesla::kVP || prog.kernel.target.ptype == tesla::kGP;
  if (doc.contains("inputs")) {
    const json& in = doc["inputs"];
    if (!attrs) throw ReplayError("inputs: a[] inputs are for vertex/geometry programs (variant :vp or :gp)");
    if (!in.is_object()) throw ReplayError("inputs: expected {\"a\": {\"f32x4\": [...]}}");
    check_fields(in, {"a"}, "inputs.");
    if (in.contains("a")) {
      // Split evenly over the threads: thread g's a[0..] is the g-th part.
      std::vector<uint8_t> all = typed_or_hex(in["a"], "inputs.a");
      uint64_t threads = launch.grid.count() * launch.block.count();
      if (threads == 0 || all.size() % threads)
        throw ReplayError("inputs.a: " + std::to_string(all.size()) + " bytes do not split evenly over the " +
                          std::to_string(threads) + " threads");
      uint64_t per = all.size() / threads;
      if (threads * prog.kernel.attr_bytes > (uint64_t(1) << 31))
        throw ReplayError("inputs.a: a[] of every thread (threads x program.attr_bytes) exceeds 2 GiB");
      if (per > prog.kernel.attr_bytes)
        throw ReplayError("inputs.a: " + std::to_string(per) + " bytes per thread, a[] holds program.attr_bytes = " +
                          std::to_string(prog.kernel.attr_bytes));
      launch.attr_in.assign(size_t(threads * prog.kernel.attr_bytes), 0);
      for (uint64_t g = 0; g < threads; ++g)
        std::memcpy(launch.attr_in.data() + g * prog.kernel.attr_bytes, all.data() + g * per, size_t(per));
    }
  }

  rt::Memory mem;
  load_memory(doc, mem);
  for (const auto& b : mem.buffers()) {
    tesla_run::Buffer tb;
    tb.name = b->name;
    tb.space = b->space;
    tb.address = b->address;
    tb.bytes.assign(b->data(), b->data() + b->size);
    buffers.push_back(std::move(tb));
  }
  // The cubin's __device__ variables (reloc blocks) after the g14 buffers,
  // then state.symbols: initial contents of named cubin variables.
  std::map<std::string, size_t> symbols = prog.const_symbols;
  place_device_variables(prog.relocs, buffers, symbols);
  if (doc.contains("state") && doc["state"].contains("symbols")) {
    const json& sy = doc["state"]["symbols"];
    if (!sy.is_object()) throw ReplayError("state.symbols: expected {\"name\": {\"u32\": [...]}, ...}");
    for (auto it = sy.begin(); it != sy.end(); ++it) {
      std::string where = "state.symbols." + it.key();
      auto s = symbols.find(it.key());
      if (s == symbols.end())
        throw ReplayError(where + ": the cubin has no named __constant__ (consts) or __device__ (reloc) variable of that name");
      std::vector<uint8_t> bytes = typed_or_hex(it.value(), where);
      tesla_run::Buffer& b = buffers[s->second];
      if (bytes.size() > b.bytes.size())
        throw ReplayError(where + ": " + std::to_string(bytes.size()) + " bytes, the variable has " + std::to_string(b.bytes.size()));
      if (!bytes.empty()) std::memcpy(b.bytes.data(), bytes.data(), bytes.size());
    }
  }
  // Buffers from state.const / the cubin may overlap memory[] const buffers.
  {
    rt::Memory check;
    std::string err;
    for (const auto& b : buffers)
      if (!check.add_buffer(b.name, b.space, b.address, b.bytes.size(), err)) throw ReplayError("memory: " + err);
  }

  tesla_run::Options opt;
  opt.engine = &job.engine;
  opt.threads = job.threads;
  opt.count_instructions = job.count_instructions;
  tesla_run::Outcome out = tesla_run::run(prog.kernel, launch, buffers, opt);
  if (!out.error.empty()) throw ReplayError(out.error);
  run.compile_us = out.compile_us;
  run.run_us = out.run_us;
  run.items = launch.grid.count() * launch.block.count();
  if (job.count_instructions) run.guest_instructions = out.lane_instructions;
  if (out.faulted) {
    run.fault = out.fault_message;
    run.fault_kind = out.fault_kind;
  }
  for (auto& b : buffers)
    run.observed.push_back(Observed{"memory", b.name, b.bytes.size() % 4 ? ElemType::U8 : ElemType::U32, std::move(b.bytes)});
  if (attrs) run.observed.push_back(Observed{"outputs", "o", ElemType::U32, std::move(out.outputs)});
}

}  // namespace gpurc::tesla
