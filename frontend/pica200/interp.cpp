#include "frontend/pica200/interp.h"

#include <cstdio>

#include "frontend/pica200/abi.h"
#include "frontend/pica200/encoding.h"

namespace gpurc::pica {
namespace {

struct CallFrame { uint32_t end, ret; };
struct IfFrame { uint32_t end, next; };
struct LoopFrame { uint32_t start, end; unsigned remaining; uint8_t step; };

template <typename T, unsigned N>
struct Stack {
  T items[N];
  unsigned size = 0;
  bool push(const T& t) {
    if (size == N) return false;
    items[size++] = t;
    return true;
  }
  T& top() { return items[size - 1]; }
  void pop() { --size; }
  bool empty() const { return size == 0; }
};

std::string fault_addr_hex(uint32_t a) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%03X", a);
  return b;
}

bool condition(const Instr& in, const VertexState& st) {
  bool x = st.cmpx == bool(in.refx), y = st.cmpy == bool(in.refy);
  switch (in.condop & 3) {
    case 0: return x || y;
    case 1: return x && y;
    case 2: return x;
    default: return y;
  }
}

}  // namespace

RunResult Interpreter::run(uint32_t entry, VertexState& st, GsState* gs, uint64_t budget) const {
  RunResult res;
  Stack<CallFrame, kCallDepth> calls;
  Stack<IfFrame, kIfDepth> ifs;
  Stack<LoopFrame, kLoopDepth> loops;
  uint32_t pc = entry;
  auto fault = [&](uint32_t at, std::string msg) {
    res.ok = false;
    res.fault = "pica200: " + msg + " at " + fault_addr_hex(at);
    res.fault_addr = at;
    return res;
  };

  // Source operand: register, relative addressing (wide operand only, c
  // registers only), swizzle, negation.
  auto read = [&](unsigned field, bool wide, unsigned idx, const Swizzle& sw) {
    const Vec4* reg;
    static const Vec4 kOnes{1.0f, 1.0f, 1.0f, 1.0f};
    if (field < 0x10) {
      reg = &st.v[field];
    } else if (field < 0x20) {
      reg = &st.r[field - 0x10];
    } else {
      int index = int(field) - 0x20;
      if (wide && idx != 0) {
        int offset;
        if (idx == 3) {
          offset = st.aL;
        } else {
          offset = idx == 1 ? st.a0x : st.a0y;
          if (offset < -128 || offset > 127) offset = 0;
        }
        index = (index + offset) & 0x7F;
      }
      reg = index > 95 ? &kOnes : &uni_.f[size_t(index)];
    }
    Vec4 out;
    for (int i = 0; i < 4; ++i) {
      float f = (*reg)[sw.comp[i]];
      if (sw.negate) f = fp::from_bits(fp::bits(f) ^ 0x80000000u);
      out[i] = f;
    }
    return out;
  };

  while (true) {
    if (res.steps >= budget) return fault(pc, "instruction budget exhausted (endless loop?)");
    if (pc >= prog_.code.size()) return fault(pc, "execution ran past the end of the program");
    ++res.steps;
    std::string err;
    auto dec = decode(prog_.code[pc], pc, &err);
    if (!dec) {
      res.ok = false;
      res.fault = err;
      res.fault_addr = pc;
      return res;
    }
    const Instr& in = *dec;
    const uint32_t here = pc;
    uint32_t next = pc + 1;

    if (num_sources(in.op) > 0) {
      if (in.desc >= prog_.descs.size()) return fault(here, "operand descriptor " + std::to_string(in.desc) + " is not loaded");
      const OperandDesc d = OperandDesc::decode(prog_.descs[in.desc]);
      const unsigned wide = wide_source(in.op);
      Vec4 s1{}, s2{}, s3{};
      s1 = read(in.src1, wide == 1, in.idx, d.src[0]);
      if (num_sources(in.op) >= 2) s2 = read(in.src2, wide == 2, in.idx, d.src[1]);
      if (num_sources(in.op) >= 3) s3 = read(in.src3, wide == 3, in.idx, d.src[2]);

      Vec4 r{};
      bool write = has_dst(in.op);
      switch (in.op) {
        case Op::ADD: for (int i = 0; i < 4; ++i) r[i] = fp::add(s1[i], s2[i]); break;
        case Op::MUL: for (int i = 0; i < 4; ++i) r[i] = fp::mul(s1[i], s2[i]); break;
        case Op::DP3: r.fill(fp::dp3(s1.data(), s2.data())); break;
        case Op::DP4: r.fill(fp::dp4(s1.data(), s2.data())); break;
        case Op::DPH:
        case Op::DPHI: r.fill(fp::dph(s1.data(), s2.data())); break;
        case Op::DST:
        case Op::DSTI:
          r = {1.0f, fp::mul(s1[1], s2[1]), fp::out(s1[2]), fp::out(s2[3])};
          break;
        case Op::EX2: r.fill(fp::ex2(s1[0])); break;
        case Op::LG2: r.fill(fp::lg2(s1[0])); break;
        case Op::RCP: r.fill(fp::rcp(s1[0])); break;
        case Op::RSQ: r.fill(fp::rsq(s1[0])); break;
        case Op::LITP: {
          st.cmpx = s1[0] >= 0.0f;
          st.cmpy = s1[3] >= 0.0f;
          float y = fp::flush(s1[1]);
          y = std::isnan(y) ? y : std::clamp(y, -fp::kLitpLimit, fp::kLitpLimit);
          r = {fp::out(fp::fmax(fp::flush(s1[0]), 0.0f, {})), fp::out(y), 0.0f,
               fp::out(fp::fmax(fp::flush(s1[3]), 0.0f, {}))};
          break;
        }
        case Op::SGE:
        case Op::SGEI: for (int i = 0; i < 4; ++i) r[i] = fp::sge(s1[i], s2[i]); break;
        case Op::SLT:
        case Op::SLTI: for (int i = 0; i < 4; ++i) r[i] = fp::slt(s1[i], s2[i]); break;
        case Op::FLR: for (int i = 0; i < 4; ++i) r[i] = fp::flr(s1[i]); break;
        case Op::MAX: for (int i = 0; i < 4; ++i) r[i] = fp::fmax(s1[i], s2[i], opt_); break;
        case Op::MIN: for (int i = 0; i < 4; ++i) r[i] = fp::fmin(s1[i], s2[i]); break;
        case Op::MOV: r = s1; break;
        case Op::MAD:
        case Op::MADI: for (int i = 0; i < 4; ++i) r[i] = fp::mad(s1[i], s2[i], s3[i]); break;
        case Op::MOVA:
          if (d.writes(0)) st.a0x = fp::to_addr(s1[0]);
          if (d.writes(1)) st.a0y = fp::to_addr(s1[1]);
          break;
        case Op::CMP:
          st.cmpx = fp::compare(in.cmpx, s1[0], s2[0]);
          st.cmpy = fp::compare(in.cmpy, s1[1], s2[1]);
          break;
        default: return fault(here, std::string("no semantics for ") + std::string(info(in.op).name));
      }
      if (write) {
        Vec4& dst = in.dst < 0x10 ? st.o[in.dst] : st.r[in.dst - 0x10];
        for (int i = 0; i < 4; ++i)
          if (d.writes(unsigned(i))) dst[size_t(i)] = opt_.f24 ? fp::round24(r[size_t(i)]) : r[size_t(i)];
      }
    } else {
      switch (in.op) {
        case Op::NOP: break;
        case Op::END: return res;
        case Op::BREAK:
        case Op::BREAKC:
          if (in.op == Op::BREAK || condition(in, st)) {
            if (!loops.empty()) {
              next = loops.top().end;
              loops.pop();
            }
          }
          break;
        case Op::CALL:
        case Op::CALLC:
        case Op::CALLU: {
          bool take = in.op == Op::CALL || (in.op == Op::CALLC ? condition(in, st) : uni_.boolean(in.uniform));
          if (take) {
            if (!calls.push({uint32_t(in.target + in.num), here + 1})) return fault(here, "CALL stack overflow (depth 4)");
            next = in.target;
          }
          break;
        }
        case Op::IFU:
        case Op::IFC: {
          bool take = in.op == Op::IFC ? condition(in, st) : uni_.boolean(in.uniform);
          if (take) {
            if (!ifs.push({in.target, uint32_t(in.target + in.num)})) return fault(here, "IF stack overflow (depth 8)");
          } else {
            next = in.target;
          }
          break;
        }
        case Op::LOOP: {
          const auto& iv = uni_.i[in.uniform & 3];
          st.aL = iv[1];
          if (!loops.push({here + 1, uint32_t(in.target + 1), unsigned(iv[0]) + 1, iv[2]}))
            return fault(here, "LOOP stack overflow (depth 4)");
          break;
        }
        case Op::JMPC:
          if (condition(in, st)) next = in.target;
          break;
        case Op::JMPU: {
          // NUM bit 0 set inverts the test: jump when the boolean is false.
          bool want = (in.num & 1) == 0;
          if (uni_.boolean(in.uniform) == want) next = in.target;
          break;
        }
        case Op::SETEMIT:
          if (!gs) return fault(here, "SETEMIT outside a geometry shader");
          gs->vtxid = in.vtxid;
          gs->prim = in.prim;
          gs->winding = in.winding;
          break;
        case Op::EMIT:
          if (!gs) return fault(here, "EMIT outside a geometry shader");
          // The JIT's record area holds at most kEmitCapacityLimit EMITs per
          // invocation; the reference stops at the same count rather than
          // growing its primitive list without bound (a hostile shader can
          // EMIT millions of times within its step budget).
          if (gs->emits >= kEmitCapacityLimit)
            return fault(here, "EMIT limit exceeded (more than " + std::to_string(kEmitCapacityLimit) +
                                   " EMITs in one invocation)");
          gs->buffer[gs->vtxid & 3] = st.o;
          ++gs->emits;
          if (gs->prim) {
            GsPrimitive p;
            for (int k = 0; k < 3; ++k) p.vertices[size_t(k)] = gs->buffer[size_t(k)];
            p.winding = gs->winding;
            gs->primitives.push_back(p);
          }
          break;
        default: return fault(here, std::string("no semantics for ") + std::string(info(in.op).name));
      }
    }

    // Block ends, checked against the next address in the fixed order LOOP,
    // then IF, then CALL (one check of each stack's top per instruction).
    if (!loops.empty() && next == loops.top().end) {
      LoopFrame& l = loops.top();
      st.aL = uint8_t(st.aL + l.step);
      if (--l.remaining == 0) loops.pop();
      else next = l.start;
    }
    if (!ifs.empty() && next == ifs.top().end) {
      next = ifs.top().next;
      ifs.pop();
    }
    if (!calls.empty() && next == calls.top().end) {
      next = calls.top().ret;
      calls.pop();
    }
    pc = next;
  }
}

RunResult Interpreter::run_batch(uint32_t entry, std::vector<VertexState>& states, size_t* failed) const {
  RunResult total;
  for (size_t k = 0; k < states.size(); ++k) {
    RunResult r = run(entry, states[k]);
    total.steps += r.steps;
    if (!r.ok) {
      r.steps = total.steps;
      if (failed) *failed = k;
      return r;
    }
  }
  return total;
}

Program program_of(const Shbin& s) { return Program{s.code, s.descs}; }

void load_constants(const Dvle& d, Uniforms& u) {
  for (const ShbinConstant& c : d.constants) {
    switch (c.kind) {
      case ConstKind::FVec:
        if (c.reg < 96)
          for (int j = 0; j < 4; ++j) u.f[c.reg][size_t(j)] = fp::f24_to_f32(c.value[size_t(j)]);
        break;
      case ConstKind::IVec:
        if (c.reg < 4)
          for (int j = 0; j < 4; ++j) u.i[c.reg][size_t(j)] = uint8_t(c.value[size_t(j)]);
        break;
      case ConstKind::Bool:
        if (c.reg < 16) u.b = uint16_t(c.value[0] ? (u.b | (1u << c.reg)) : (u.b & ~(1u << c.reg)));
        break;
    }
  }
}

RunResult run_geometry_invocation(const Program& p, Uniforms& u, uint32_t entry, VertexState& st, GsState& gs,
                                  fp::Options opt) {
  Interpreter it(p, u, opt);
  RunResult r = it.run(entry, st, &gs);
  u.b |= 1u << 15;
  return r;
}

}  // namespace gpurc::pica
