// G13 -> IR: state access, control flow, the driver and the public helpers
// (translate.h); the instruction families live in translate_*.cpp.
#include "frontend/g13/translate.h"

#include <cstring>
#include <map>
#include <set>

#include "frontend/g13/translate_impl.h"

namespace gpurc::g13 {
namespace detail {

bool Translator::src(const Op& o, unsigned bits, bool sign, ValueId& v) {
  const Type t = ir::int_type(bits);
  ValueId x;
  switch (o.type) {
    case OpType::Imm:  // 16 bits, sign-extended only when asked (signed compares, asr)
      v = b_.constant(t, sign ? uint64_t(int64_t(int16_t(uint16_t(o.n)))) : uint64_t(o.n) & 0xFFFF);
      return true;
    case OpType::Reg16:
      if (o.n > 255) return false;
      x = b_.extract16(b_.get_var(uint32_t(o.n >> 1)), uint64_t(o.n & 1));
      break;
    case OpType::Reg32:
      if (o.n > 127) return false;
      x = b_.get_var(uint32_t(o.n));
      break;
    case OpType::Reg64: {
      if (o.n > 126) return false;
      const ValueId lo = b_.resize(Type::I64, b_.get_var(uint32_t(o.n)));
      const ValueId hi = b_.resize(Type::I64, b_.get_var(uint32_t(o.n + 1)));
      x = b_.or_(lo, b_.shl(hi, b_.i32(32)));
      break;
    }
    case OpType::UReg16:
      if (o.n > 511) return false;
      if (written_uniform(unsigned(o.n >> 1)))
        x = b_.extract16(uniform32(unsigned(o.n >> 1)), uint64_t(o.n & 1));
      else
        x = b_.load_uniform(Type::I16, uint32_t(o.n * 2));
      break;
    case OpType::UReg32: if (o.n > 255) return false; x = uniform32(unsigned(o.n)); break;
    case OpType::UReg64: {
      if (o.n > 254) return false;
      const unsigned n = unsigned(o.n);
      if (!written_uniform(n) && !written_uniform(n + 1)) {
        x = b_.load_uniform(Type::I64, uint32_t(n * 4));
        break;
      }
      const ValueId lo = b_.resize(Type::I64, uniform32(n)), hi = b_.resize(Type::I64, uniform32(n + 1));
      x = b_.or_(lo, b_.shl(hi, b_.i32(32)));
      break;
    }
    default: return false;
  }
  v = b_.resize(t, x, signed_if(sign));
  return true;
}

bool Translator::fsrc(const Op& o, Type t, ValueId& v) {
  if (o.type == OpType::Float) {
    v = b_.fconst(t, o.fv);  // minifloats are exact in f16
  } else if (o.type == OpType::Reg16 || o.type == OpType::UReg16) {
    ValueId raw;
    if (!src(o, 16, false, raw)) return false;
    v = b_.bitcast(Type::F16, raw);
    if (t != Type::F16) v = b_.ftof(t, v);
  } else if (o.type == OpType::Reg32 || o.type == OpType::UReg32) {
    if (t == Type::F16) return false;
    ValueId raw;
    if (!src(o, 32, false, raw)) return false;
    v = b_.bitcast(Type::F32, raw);
    if (t == Type::F64) v = b_.ftof(Type::F64, v, ff::FtzIn);
  } else {
    return false;
  }
  if (o.abs) v = b_.fabs(v);
  if (o.neg) v = b_.fneg(v);
  return true;
}

ValueId Translator::uniform32(unsigned n) {
  auto it = u_vars_.find(n);
  return it != u_vars_.end() ? b_.get_var(it->second) : b_.load_uniform(Type::I32, uint32_t(n * 4));
}

// The execution mask is state of its own (var "exec"): only the exec-stack
// instructions set it from r0l (seed: "the only known way to manipulate
// exec_mask"); an ordinary write of r0l changes nothing until then.
ValueId Translator::exec() {
  if (exec_is_entry_) return b_.entry_mask();
  return b_.and_(b_.get_var(exec_var_), b_.entry_mask());
}

// TranslateOptions::exec_starts_launched with an exec-stack instruction: the
// runner starts every register at zero and exec at the launched lanes. The
// translation then starts them as constants, zero and *every* lane, and a
// register write selects on exec alone: a lane that was not launched runs
// like an active one. Nothing observes those lanes (memory accesses, votes,
// reductions, traps and compares' traps use exec() or the entry mask, which
// keep them out; a shuffle from such a lane traps; the runner unpacks only
// launched lanes), and what the launched lanes compute is unchanged. What it
// buys: exec, r0l and counters that start equal and change alike stay
// uniform, so `jmp_exec_any` loops become uniform loops once
// fold_uniform_votes (ir/pass_uniform_votes.cpp) turns `any exec` into exec.
ValueId Translator::write_select_mask(ValueId ex) {
  if (!known_start_ && !regs_private_) return ex;
  const ir::Inst& in = f_.insts[ex];
  // Private registers of a program without exec-stack instructions:
  // exec() is the entry mask itself, and no lane outside it is observed.
  if (in.op == Opcode::EntryMask) return b_.i1(true);
  if (in.op != Opcode::And || in.args.size() != 2) return ex;
  if (f_.insts[in.args[1]].op == Opcode::EntryMask) return in.args[0];
  if (f_.insts[in.args[0]].op == Opcode::EntryMask) return in.args[1];
  return ex;
}

void Translator::start_state_known() {
  std::vector<uint8_t> written(f_.vars.size(), 0);
  for (const ir::Inst& in : f_.insts)
    if (in.block != ir::kNoBlock && in.op == Opcode::SetVar) written[in.imm] = 1;
  std::vector<ValueId> body = std::move(f_.blocks[0].insts);
  f_.blocks[0].insts.clear();
  b_.set_block(0);
  for (uint32_t r = 0; r < kNumGprVars; ++r)
    if (written[r]) b_.set_var(r, b_.i32(0));
  b_.set_var(exec_var_, b_.i1(true));
  f_.blocks[0].insts.insert(f_.blocks[0].insts.end(), body.begin(), body.end());
}

void Translator::make_registers_private() {
  std::vector<uint8_t> used(f_.vars.size(), 0);
  for (const ir::Inst& in : f_.insts)
    if (in.block != ir::kNoBlock && (in.op == Opcode::SetVar || in.op == Opcode::GetVar)) used[in.imm] = 1;
  const uint32_t state = uint32_t(f_.vars.size());
  std::vector<uint32_t> remap(state, ~0u);
  for (uint32_t v = 0; v < state; ++v)
    if (used[v] && (v < kNumGprVars || v == exec_var_)) {
      remap[v] = uint32_t(f_.vars.size());
      f_.add_var("private_" + f_.vars[v].name, f_.vars[v].type);
    }
  for (ir::Inst& in : f_.insts)
    if (in.block != ir::kNoBlock && (in.op == Opcode::SetVar || in.op == Opcode::GetVar) && remap[in.imm] != ~0u)
      in.imm = remap[in.imm];
  f_.state_vars = state;
  // The start values, before everything else of the entry block (a
  // start_state_known() write that follows sets the same value).
  std::vector<ValueId> body = std::move(f_.blocks[0].insts);
  f_.blocks[0].insts.clear();
  b_.set_block(0);
  for (uint32_t v = 0; v < state; ++v) {
    if (remap[v] == ~0u) continue;
    if (v == exec_var_) b_.set_var(remap[v], known_start_ ? b_.i1(true) : b_.entry_mask());
    else b_.set_var(remap[v], b_.i32(0));
  }
  f_.blocks[0].insts.insert(f_.blocks[0].insts.end(), body.begin(), body.end());
}

bool Translator::write(const Op& d, ValueId v, ValueId ex) {
  if (ir::is_float(b_.type(v))) v = b_.bitcast(ir::int_type(ir::bit_width(b_.type(v))), v);
  if (d.type == OpType::Reg32 && d.n <= 127) {
    const ValueId old = b_.get_var(uint32_t(d.n));
    b_.set_var(uint32_t(d.n), b_.select(write_select_mask(ex), b_.resize(Type::I32, v), old));
    return true;
  }
  if (d.type == OpType::Reg64) {
    const ValueId w = b_.resize(Type::I64, v);
    return write_pair(d, b_.resize(Type::I32, w), b_.resize(Type::I32, b_.lshr(w, b_.i32(32))), ex);
  }
  if (d.type == OpType::Reg16 && d.n <= 255) {
    const uint32_t reg = uint32_t(d.n >> 1);
    const ValueId old = b_.get_var(reg);
    const ValueId merged = b_.insert16(old, b_.resize(Type::I16, v), uint64_t(d.n & 1));
    b_.set_var(reg, b_.select(write_select_mask(ex), merged, old));
    return true;
  }
  return false;
}

bool Translator::write_pair(const Op& d, ValueId lo, ValueId hi, ValueId ex) {
  if (d.type != OpType::Reg64 || d.n > 126) return false;
  const ValueId old_lo = b_.get_var(uint32_t(d.n)), old_hi = b_.get_var(uint32_t(d.n + 1));
  ex = write_select_mask(ex);
  b_.set_var(uint32_t(d.n), b_.select(ex, lo, old_lo));
  b_.set_var(uint32_t(d.n + 1), b_.select(ex, hi, old_hi));
  return true;
}

bool Translator::src_halves(const Op& o, bool sign, ValueId& lo, ValueId& hi) {
  if (o.type == OpType::Reg64) {
    if (o.n > 126) return false;
    lo = b_.get_var(uint32_t(o.n));
    hi = b_.get_var(uint32_t(o.n + 1));
    return true;
  }
  if (o.bits() <= 32) {
    if (!src(o, 32, sign, lo)) return false;
    hi = sign ? b_.ashr(lo, b_.i32(31)) : b_.i32(0);
    return true;
  }
  ValueId w;
  if (!src(o, 64, sign, w)) return false;
  lo = b_.resize(Type::I32, w);
  hi = b_.resize(Type::I32, b_.lshr(w, b_.i32(32)));
  return true;
}

// ---- control ---------------------------------------------------------------

void Translator::indirect_jump(ValueId target) {
  // Switch over every instruction address; the last successor traps.
  std::vector<ir::BlockId> succ;
  ValueId sel = b_.i32(uint32_t(insns_.size()));
  for (const auto& [p, in] : insns_) {
    sel = b_.select(b_.icmp(IntPred::Eq, target, b_.i32(uint32_t(p))), b_.i32(uint32_t(succ.size())), sel);
    succ.push_back(block_at(p));
  }
  const ir::BlockId bad = f_.add_block("bad_target_" + hex(pc_));
  succ.push_back(bad);
  b_.switch_(sel, succ);
  b_.set_block(bad);
  b_.trap(b_.entry_mask(), pc_);
  b_.ret();
}

bool Translator::insn(const Insn& in, uint64_t pc, std::string& err) {
  pc_ = pc;
  const std::string& n = in.desc->name;
  const uint64_t next = pc + in.size;
  // Straight-line code stays in one block; a branch only where the next
  // instruction starts a block (or the code ends).
  auto fallthrough = [&] {
    if (blocks_.count(next)) b_.br(block_at(next));
    else if (!insns_.count(next)) b_.br(end_block_);
  };
  std::string why;
  auto done = [&](bool ok) {
    if (!ok) return fail(in, pc, why, err);
    fallthrough();
    return true;
  };

  if (n == "mov_imm") {
    const Op D = op(in, "D");
    const uint64_t v = in.has("imm32") ? in.f("imm32") : in.f("imm16");
    if (!write(D, D.bits() == 32 ? b_.i32(uint32_t(v)) : b_.constant(Type::I16, v & 0xFFFF), exec()))
      return fail(in, pc, "bad destination", err);
    fallthrough();
    return true;
  }
  if (n == "get_sr") return done(get_sr(in, why));
  if (n == "iadd") return done(int_add(in, false, why));
  if (n == "imadd") return done(int_add(in, true, why));
  if (n == "convert") return done(convert(in, why));
  if (n == "bfi" || n == "bfeil" || n == "extr" || n == "shlhi" || n == "shrhi" || n == "asr" || n == "asrh")
    return done(bitfield(in, n, why));
  if (n == "bitrev" || n == "popcount" || n == "ffs" || n == "intl") return done(int_unary(in, n, why));
  if (n == "bitop") {
    const Op D = op(in, "D"), A = op(in, "A"), B = op(in, "B");
    const unsigned bits = D.bits() == 64 ? 64 : 32;
    ValueId a, b;
    if (!src(A, bits, false, a) || !src(B, bits, false, b)) return fail(in, pc, "bad source", err);
    const unsigned tt = unsigned(in.f("tt0") | in.f("tt1") << 1 | in.f("tt2") << 2 | in.f("tt3") << 3);
    ValueId r;
    const Type t = ir::int_type(bits);
    // Bit tt[a + 2b] of the table is the result for input bits a, b. The
    // common tables are plain ops (native on every tier), the rest lut3.
    if (tt == 0xC) r = b_.not_(a);  // table 0011: not A (docs/g13.md)
    else if (tt == 0x3) r = a;                      // table 1100: A
    else if (tt == 0x0) r = b_.constant(t, 0);
    else if (tt == 0xF) r = b_.constant(t, bits == 64 ? ~uint64_t(0) : 0xFFFFFFFFull);
    else if (tt == 0xA) r = a;
    else if (tt == 0x5) r = b_.not_(a);
    else if (tt == 0x8) r = b_.and_(a, b);
    else if (tt == 0xE) r = b_.or_(a, b);
    else if (tt == 0x6) r = b_.xor_(a, b);
    else if (tt == 0x7) r = b_.not_(b_.and_(a, b));
    else if (tt == 0x1) r = b_.not_(b_.or_(a, b));
    else if (tt == 0x9) r = b_.not_(b_.xor_(a, b));
    else {
      // lut3 index = a<<2 | b<<1 | c with c = 0.
      const uint8_t lut = uint8_t((tt & 1) | ((tt >> 1 & 1) << 4) | ((tt >> 2 & 1) << 2) | ((tt >> 3 & 1) << 6));
      r = b_.lut3(a, b, b_.constant(t, 0), lut);
    }
    if (!write(D, r, exec())) return fail(in, pc, "bad destination", err);
    fallthrough();
    return true;
  }
  if (n == "fmadd32" || n == "fmadd16" || n == "fadd32" || n == "fadd16" || n == "fmul32" || n == "fmul16")
    return done(float_arith(in, n, why));
  if (n == "floor" || n == "ceil" || n == "trunc" || n == "rint" || n == "rcp" || n == "rsqrt" ||
      n == "rsqrt_special" || n == "sin_pt_1" || n == "sin_pt_2" || n == "log2" || n == "exp2" || n == "dfdx" ||
      n == "dfdy")
    return done(float_unary(in, n, why));
  if (n == "icmpsel" || n == "fcmpsel") return done(cmpsel(in, n == "fcmpsel", why));
  if (n == "icmp_ballot" || n == "icmp_quad_ballot" || n == "fcmp_ballot" || n == "fcmp_quad_ballot")
    return done(ballot_op(in, n[0] == 'f', n.find("quad") != std::string::npos, why));
  if (n.compare(0, 12, "simd_shuffle") == 0 || n.compare(0, 12, "quad_shuffle") == 0) return done(shuffle(in, n, why));
  if ((n.compare(0, 5, "quad_") == 0 || n.compare(0, 5, "simd_") == 0) && n != "simd_op" && n != "simd_shuf_op" &&
      n.compare(0, 11, "simd_matrix") != 0)
    return done(reduce(in, n, why));
  if (n == "device_load" || n == "device_store" || n == "threadgroup_load" || n == "threadgroup_store" ||
      n == "stack_load" || n == "stack_store")
    return done(memory(in, n, why));
  if (n == "wait") {  // loads complete synchronously
    fallthrough();
    return true;
  }
  if (n == "threadgroup_barrier") {
    b_.barrier(blocks_.count(next) ? block_at(next) : end_block_);
    return true;
  }
  if (n == "trap") {
    b_.trap(b_.entry_mask(), pc);
    fallthrough();
    return true;
  }

  const bool is_icmp = n == "if_icmp" || n == "else_icmp" || n == "while_icmp";
  const bool is_fcmp = n == "if_fcmp" || n == "else_fcmp" || n == "while_fcmp";
  if (is_icmp || is_fcmp) {  // writes_exec(n)
    ValueId c;
    if (!compare(in, is_fcmp, c, why)) return fail(in, pc, why, err);
    // r0l nesting counter update on every launched lane (§4.6).
    const ValueId r0 = b_.get_var(0);
    const ValueId v = b_.extract16(r0, 0);
    const ValueId nn = b_.constant(Type::I16, in.f("n"));
    const ValueId zero = b_.constant(Type::I16, 0), one = b_.constant(Type::I16, 1);
    ValueId nv;
    // Lanes whose counter makes the condition matter (the interpreter evaluates it only there).
    if (n[0] == 'i') need_compare(b_.and_(b_.entry_mask(), b_.icmp(IntPred::Eq, v, zero)));
    else if (n[0] == 'e') need_compare(b_.and_(b_.entry_mask(), b_.icmp(IntPred::Eq, v, one)));
    else need_compare(b_.and_(b_.entry_mask(), b_.icmp(IntPred::Ult, v, nn)));
    if (n == "if_icmp" || n == "if_fcmp") {
      const ValueId busy = b_.icmp(IntPred::Ne, v, zero);
      nv = b_.select(busy, b_.iadd(v, nn), b_.select(c, zero, one));
    } else if (n == "else_icmp" || n == "else_fcmp") {
      const ValueId is0 = b_.icmp(IntPred::Eq, v, zero), is1 = b_.icmp(IntPred::Eq, v, one);
      nv = b_.select(is0, nn, b_.select(is1, b_.select(c, zero, one), v));
    } else {
      const ValueId below = b_.icmp(IntPred::Ult, v, nn);
      nv = b_.select(below, b_.select(c, zero, nn), v);
    }
    const ValueId merged = b_.insert16(r0, nv, 0);
    b_.set_var(0, known_start_ ? merged : b_.select(b_.entry_mask(), merged, r0));
    b_.set_var(exec_var_, b_.icmp(IntPred::Eq, nv, b_.constant(Type::I16, 0)));
    fallthrough();
    return true;
  }
  if (n == "pop_exec") {
    const ValueId r0 = b_.get_var(0);
    const ValueId v = b_.extract16(r0, 0);
    const ValueId nn = b_.constant(Type::I16, in.f("n"));
    const ValueId nv = b_.select(b_.icmp(IntPred::Ugt, v, nn), b_.isub(v, nn), b_.constant(Type::I16, 0));
    const ValueId merged = b_.insert16(r0, nv, 0);
    b_.set_var(0, known_start_ ? merged : b_.select(b_.entry_mask(), merged, r0));
    b_.set_var(exec_var_, b_.icmp(IntPred::Eq, nv, b_.constant(Type::I16, 0)));
    fallthrough();
    return true;
  }
  if (n == "jmp_exec_any" || n == "jmp_exec_none") {
    const uint64_t target = uint64_t(decode_operand(in, in.desc->operands[0], pc).n);
    if (!insns_.count(target)) return fail(in, pc, "branch target " + hex(target) + " is not an instruction", err);
    // any() looks only at the lanes of its mask operand, so the AND with the
    // entry mask is redundant; known_start_ leaves it out so that a uniform
    // exec stays a uniform operand (fold_uniform_votes).
    const ValueId ex = known_start_ ? b_.get_var(exec_var_) : exec();
    const ValueId any = b_.any(ex, b_.entry_mask());
    const ir::BlockId taken = block_at(target), not_taken = blocks_.count(next) ? block_at(next) : end_block_;
    if (n == "jmp_exec_any") b_.cond_br(any, taken, not_taken);
    else b_.cond_br(any, not_taken, taken);
    return true;
  }
  if (n == "call" || n == "ret") {
    const ValueId ex = exec();
    const bool indirect = n == "ret" || in.size == 2;
    ValueId target;
    if (indirect) {
      // The register must agree across the active lanes (or the launched
      // ones when none is active); a divergent return/call traps.
      const unsigned rn = unsigned(in.f("reg32"));
      if (rn > 127) return fail(in, pc, "register out of range", err);
      const ValueId lanes = b_.select(b_.any(ex, b_.entry_mask()), ex, b_.entry_mask());
      const ValueId first = b_.find_lsb(b_.ballot(b_.i1(true), lanes));
      const ValueId r = b_.get_var(rn);
      target = b_.broadcast(r, first);
      b_.trap(b_.and_(lanes, b_.icmp(IntPred::Ne, r, target)), pc);
    }
    if (n == "call") {
      const ValueId old = b_.get_var(1);
      b_.set_var(1, b_.select(write_select_mask(ex), b_.i32(uint32_t(next)), old));  // link register r1
    }
    if (indirect) {
      indirect_jump(target);
      return true;
    }
    const uint64_t dest = uint64_t(decode_operand(in, in.desc->operands[0], pc).n);
    if (!insns_.count(dest)) return fail(in, pc, "call target " + hex(dest) + " is not an instruction", err);
    b_.br(block_at(dest));
    return true;
  }
  if (n == "stop") {
    b_.ret();
    return true;
  }
  if (n == "uniform_store") return done(uniform_store(in, why));
  return fail(in, pc, "not translated (the interpreter does not run it either)", err);
}

// Instructions that begin an IR block: the first, every direct branch or call
// target, and every instruction after one that ends a block (branches,
// call/ret, stop, barrier). A program with an indirect jump (ret, call rN)
// can go to any instruction, so then each instruction is a block.
std::set<uint64_t> Translator::block_starts() const {
  std::set<uint64_t> starts;
  if (insns_.empty()) return starts;
  starts.insert(insns_.begin()->first);
  bool indirect = false;
  for (const auto& [p, in] : insns_) {
    const std::string& n = in.desc->name;
    const bool direct = n == "jmp_exec_any" || n == "jmp_exec_none" || (n == "call" && in.size != 2);
    if (direct) starts.insert(uint64_t(decode_operand(in, in.desc->operands[0], p).n));
    indirect |= n == "ret" || (n == "call" && in.size == 2);
    if (direct || n == "call" || n == "ret" || n == "stop" || n == "threadgroup_barrier") starts.insert(p + in.size);
  }
  if (indirect)
    for (const auto& [p, in] : insns_) starts.insert(p);
  std::set<uint64_t> out;
  for (uint64_t p : starts)
    if (insns_.count(p)) out.insert(p);
  return out;
}

bool Translator::run(const uint8_t* code, size_t size, std::string& err) {
  f_.name = "g13";
  f_.uniform_bytes = kUniformBytes;
  for (unsigned r = 0; r < kNumGprVars; ++r) f_.add_var("r" + std::to_string(r), Type::I32);
  // Decode everything in order; blocks begin only where control can enter
  // (block_starts), so straight-line code is one block for the backends.
  uint64_t pc = 0;
  std::set<unsigned> srs, us;
  bool exec_written = false;
  while (pc < size) {
    Insn in;
    fe::Diagnostic d;
    if (!decode(code + pc, size - pc, pc, in, d)) {
      err = d.message;
      return false;
    }
    if (in.desc->name == "get_sr" && !derived_sr(unsigned(in.f("SR")))) srs.insert(unsigned(in.f("SR")));
    if (in.desc->name == "uniform_store") {
      const UniformStoreShape u = uniform_store_shape(in);
      if (u.unmodelled.empty() && u.in_range())
        for (unsigned i = 0; i < u.halves; ++i) us.insert(unsigned((u.u_half + i) / 2));
    }
    if (writes_exec(in.desc->name)) exec_written = true;
    insns_[pc] = in;
    pc += in.size;
  }
  exec_is_entry_ = options_.exec_starts_launched && !exec_written;
  known_start_ = options_.exec_starts_launched && exec_written;
  // The same contract: the runner unpacks only the launched lanes' registers
  // and exec, so construct_ssa stores the vars without selecting on the entry mask.
  // Registers nobody reads after the run: private to it (make_registers_private).
  regs_private_ = options_.exec_starts_launched && options_.registers_unobserved;
  if (known_start_ || regs_private_) f_.unlaunched_lanes_free = true;
  // A G13 program runs as a compute kernel, never through a draw loop.
  f_.no_draw_loop = true;
  for (unsigned sr : srs) sr_vars_[sr] = f_.add_var("sr" + std::to_string(sr), Type::I32);
  for (unsigned u : us) u_vars_[u] = f_.add_var(std::string(1, 'u').append(std::to_string(u)), Type::I32);
  exec_var_ = f_.add_var("exec", Type::I1);
  const ir::BlockId entry = f_.add_block("entry");
  for (uint64_t p : block_starts()) blocks_[p] = f_.add_block("pc_" + hex(p));
  end_block_ = f_.add_block("end");
  b_.set_block(entry);
  b_.br(insns_.empty() ? end_block_ : blocks_.begin()->second);
  for (const auto& [p, in] : insns_) {
    if (blocks_.count(p)) b_.set_block(block_at(p));  // else the previous instruction's block goes on
    if (!insn(in, p, err)) return false;
  }
  b_.set_block(end_block_);
  b_.ret();  // running off the end behaves like stop
  if (known_start_) start_state_known();
  if (regs_private_) make_registers_private();
  f_.compute_preds();
  const std::string v = ir::verify(f_);
  if (!v.empty()) {
    err = "g13 translate: produced invalid IR: " + v;
    return false;
  }
  return true;
}

}  // namespace detail

using detail::Translator;

bool translate(const uint8_t* code, size_t size, ir::Function& out, std::string& err,
               const TranslateOptions& options) {
  out = ir::Function{};
  Translator t(out, options);
  return t.run(code, size, err);
}

int special_var(const ir::Function& f, unsigned sr) {
  const std::string name = "sr" + std::to_string(sr);
  for (size_t i = kNumGprVars; i < f.vars.size(); ++i)
    if (f.vars[i].name == name) return int(i);
  return -1;
}

int missing_special(const SimdGroup& sg, const ir::Function& f) {
  for (size_t i = kNumGprVars; i < f.vars.size(); ++i) {
    if (f.vars[i].name.compare(0, 2, "sr") != 0) continue;
    const unsigned sr = unsigned(std::stoul(f.vars[i].name.substr(2)));
    if (!sg.has_special(sr)) return int(sr);
  }
  return -1;
}

int uniform_var_reg(const ir::Function& f, size_t var) {
  if (var < kNumGprVars || var >= f.vars.size()) return -1;
  const std::string& n = f.vars[var].name;
  if (n.size() < 2 || n[0] != 'u' || n.find_first_not_of("0123456789", 1) != std::string::npos) return -1;
  return int(std::stoul(n.substr(1)));
}

VarLayout var_layout(const ir::Function& f) {
  VarLayout L;
  L.vars.resize(f.vars.size());
  uint32_t off = 0;
  for (size_t i = 0; i < f.vars.size(); ++i) {
    VarLayout::Var& v = L.vars[i];
    v.offset = off;
    off += (ir::lane_bytes(f.vars[i].type) * ir::kWarpLanes + 63) & ~63u;
    const std::string& n = f.vars[i].name;
    if (i < kNumGprVars) {
      v.kind = VarLayout::Kind::Gpr;
      v.index = uint32_t(i);
    } else if (n == "exec") {
      v.kind = VarLayout::Kind::Exec;
    } else if (int u = uniform_var_reg(f, i); u >= 0) {
      v.kind = VarLayout::Kind::Uniform;
      v.index = uint32_t(u);
    } else if (n.size() > 2 && n.compare(0, 2, "sr") == 0 && n.find_first_not_of("0123456789", 2) == std::string::npos) {
      v.kind = VarLayout::Kind::Special;
      v.index = uint32_t(std::stoul(n.substr(2)));
    }
  }
  L.bytes = off;
  for (const ir::Inst& in : f.insts) {
    if (in.block == ir::kNoBlock || in.imm >= L.vars.size()) continue;
    if (in.op == ir::Opcode::SetVar) L.vars[size_t(in.imm)].written = true;
    if (in.op == ir::Opcode::GetVar) L.vars[size_t(in.imm)].read = true;
  }
  return L;
}

namespace {
void pack_var(const SimdGroup& sg, const VarLayout::Var& v, uint8_t* slot) {
  switch (v.kind) {
    case VarLayout::Kind::Gpr: {
      // Whole-array loops (vectorised) and one copy.
      uint32_t x[SimdGroup::kLanes];
      const uint16_t* lo = sg.regs[2 * v.index].data();
      const uint16_t* hi = sg.regs[2 * v.index + 1].data();
      for (unsigned l = 0; l < SimdGroup::kLanes; ++l) x[l] = uint32_t(lo[l]) | uint32_t(hi[l]) << 16;
      std::memcpy(slot, x, sizeof x);
      break;
    }
    case VarLayout::Kind::Exec: {
      uint32_t x[SimdGroup::kLanes];
      for (unsigned l = 0; l < SimdGroup::kLanes; ++l) x[l] = sg.exec >> l & 1;
      std::memcpy(slot, x, sizeof x);
      break;
    }
    case VarLayout::Kind::Uniform: {
      const uint32_t x = sg.u32(v.index);
      for (unsigned l = 0; l < SimdGroup::kLanes; ++l) std::memcpy(slot + l * 4, &x, 4);
      break;
    }
    case VarLayout::Kind::Special: {
      if (sg.has_special(v.index)) std::memcpy(slot, sg.special(v.index).data(), SimdGroup::kLanes * 4);
      break;
    }
    case VarLayout::Kind::Other:
      break;
  }
}

void unpack_var(const uint8_t* slot, const VarLayout::Var& v, SimdGroup& sg) {
  switch (v.kind) {
    case VarLayout::Kind::Gpr: {
      // A select instead of skipping lanes that were not launched.
      uint16_t* lo = sg.regs[2 * v.index].data();
      uint16_t* hi = sg.regs[2 * v.index + 1].data();
      uint32_t x[SimdGroup::kLanes];
      std::memcpy(x, slot, sizeof x);
      for (unsigned l = 0; l < SimdGroup::kLanes; ++l) {
        const bool on = sg.launched >> l & 1;
        lo[l] = on ? uint16_t(x[l]) : lo[l];
        hi[l] = on ? uint16_t(x[l] >> 16) : hi[l];
      }
      break;
    }
    case VarLayout::Kind::Uniform: {
      // The same in every launched lane; take the lowest.
      const unsigned first = sg.launched ? unsigned(__builtin_ctz(sg.launched)) : 0;
      uint32_t x;
      std::memcpy(&x, slot + first * 4, 4);
      sg.set_u32(v.index, x);
      break;
    }
    case VarLayout::Kind::Exec: {
      uint32_t m = 0;
      for (unsigned l = 0; l < SimdGroup::kLanes; ++l) {
        uint32_t on;
        std::memcpy(&on, slot + l * 4, 4);
        m |= (on & 1) << l;
      }
      sg.exec = m & sg.launched;
      break;
    }
    case VarLayout::Kind::Special:
    case VarLayout::Kind::Other:
      break;
  }
}
}  // namespace

void pack_vars(const SimdGroup& sg, const VarLayout& layout, uint8_t* vars) {
  for (const VarLayout::Var& v : layout.vars)
    if (v.read || v.written) pack_var(sg, v, vars + v.offset);
}

namespace {
bool group_var(const VarLayout::Var& v) { return v.kind == VarLayout::Kind::Exec || v.kind == VarLayout::Kind::Special; }
}  // namespace

std::vector<std::pair<uint32_t, uint32_t>> shared_var_ranges(const VarLayout& layout) {
  std::vector<std::pair<uint32_t, uint32_t>> r;
  constexpr uint32_t kSlot = SimdGroup::kLanes * 4;  // every var of the translation is 32 lanes of 4 bytes
  for (const VarLayout::Var& v : layout.vars) {
    if (!(v.read || v.written) || group_var(v) || v.kind == VarLayout::Kind::Other) continue;
    if (!r.empty() && r.back().second == v.offset) r.back().second += kSlot;
    else r.emplace_back(v.offset, v.offset + kSlot);
  }
  return r;
}

void pack_group_vars(const SimdGroup& sg, const VarLayout& layout, uint8_t* vars) {
  for (const VarLayout::Var& v : layout.vars)
    if ((v.read || v.written) && group_var(v)) pack_var(sg, v, vars + v.offset);
}

void unpack_vars(const uint8_t* vars, const VarLayout& layout, SimdGroup& sg) {
  // Registers first, exec last (as the Function overload always did).
  for (const VarLayout::Var& v : layout.vars)
    if (v.written && v.kind != VarLayout::Kind::Exec) unpack_var(vars + v.offset, v, sg);
  for (const VarLayout::Var& v : layout.vars)
    if (v.written && v.kind == VarLayout::Kind::Exec) unpack_var(vars + v.offset, v, sg);
}

void pack_vars(const SimdGroup& sg, const ir::Function& f, uint8_t* vars) {
  const VarLayout L = var_layout(f);
  std::memset(vars, 0, L.bytes);
  for (const VarLayout::Var& v : L.vars) pack_var(sg, v, vars + v.offset);
}

std::vector<bool> written_vars(const ir::Function& f) {
  std::vector<bool> w(f.vars.size(), false);
  for (const ir::Inst& in : f.insts)
    if (in.op == ir::Opcode::SetVar && in.block != ir::kNoBlock && in.imm < w.size()) w[size_t(in.imm)] = true;
  return w;
}

void unpack_vars(const uint8_t* vars, const ir::Function& f, SimdGroup& sg) {
  unpack_vars(vars, f, sg, std::vector<bool>(f.vars.size(), true));
}

void unpack_vars(const uint8_t* vars, const ir::Function& f, SimdGroup& sg, const std::vector<bool>& written) {
  VarLayout L = var_layout(f);
  for (size_t i = 0; i < L.vars.size(); ++i) L.vars[i].written = i < written.size() && written[i];
  unpack_vars(vars, L, sg);
}

void pack_uniforms(const SimdGroup& sg, uint8_t* uniforms) {
  for (unsigned i = 0; i < 512; ++i) {
    uniforms[2 * i] = uint8_t(sg.uniforms[i]);
    uniforms[2 * i + 1] = uint8_t(sg.uniforms[i] >> 8);
  }
}

bool StackMemory::access(Kind kind, ir::Space space, uint64_t addr, unsigned bytes, uint64_t* value, ir::AtomicOp op,
                         const uint64_t* compare) {
  if (space != ir::Space::Local) return next_ && next_->access(kind, space, addr, bytes, value, op, compare);
  uint8_t* p = translate(space, addr, bytes);
  if (!p || bytes > 8) return false;
  if (kind == Kind::Load) {
    *value = 0;
    std::memcpy(value, p, bytes);  // little-endian host
    return true;
  }
  if (kind == Kind::Store) {
    std::memcpy(p, value, bytes);
    return true;
  }
  return false;  // no atomics on the stack
}

void StackMemory::reset(ir::GuestMemory* next, uint64_t bytes) {
  next_ = next;
  bytes_ = bytes;
  data_.assign(size_t(bytes) * SimdGroup::kLanes, 0);
}

uint8_t* StackMemory::translate(ir::Space space, uint64_t addr, uint64_t bytes) {
  if (space != ir::Space::Local) return next_ ? next_->translate(space, addr, bytes) : nullptr;
  const uint64_t lane = addr / kStackStride, off = addr % kStackStride;
  if (lane >= SimdGroup::kLanes) return nullptr;
  if (off + bytes > bytes_ || bytes > kStackStride) return nullptr;
  return lane_stack(unsigned(lane)) + off;
}

}  // namespace gpurc::g13
