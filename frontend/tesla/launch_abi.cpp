// The launch ABI of translated Tesla code (launch_abi.h): the uniform
// block, the per-lane launch values and the explicit state of run_with mode,
// in and out of a translated function's vars.
#include "frontend/tesla/launch_abi.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace gpurc::tesla {

std::string describe_trap(uint64_t code) {
  static const char* what[] = {"trap", "trap instruction", "execution ran past the end of the code",
                               "control-flow stack overflow", "break without a breakaddr entry",
                               "return/break address outside the code", "instruction the hardware refuses (decode error)"};
  uint32_t kind = uint32_t(code >> 24);
  char buf[128];
  std::snprintf(buf, sizeof buf, "%s at word 0x%x", what[kind < 7 ? kind : 0], unsigned(code & 0xffffff));
  return buf;
}

std::vector<uint8_t> pack_uniforms(const BlockConfig& cfg) {
  std::vector<uint8_t> u(std::max<size_t>(0x10 + cfg.params.size(), cfg.shared_image.size()), 0);
  if (!cfg.shared_image.empty()) std::memcpy(u.data(), cfg.shared_image.data(), cfg.shared_image.size());
  uint16_t hdr[8] = {0, uint16_t(cfg.block[0]), uint16_t(cfg.block[1]), uint16_t(cfg.block[2]),
                     uint16_t(cfg.grid[0]), uint16_t(cfg.grid[1]), 0, 0};
  std::memcpy(u.data(), hdr, 16);
  if (!cfg.params.empty()) std::memcpy(u.data() + 0x10, cfg.params.data(), cfg.params.size());
  return u;
}

namespace {
template <class T>
void put(const ir::Function& f, uint8_t* vars, uint32_t var, unsigned lane, T v) {
  std::memcpy(vars + f.var_offset(var) + lane * ir::lane_bytes(f.vars[var].type), &v, sizeof v);
}
uint32_t get32(const ir::Function& f, const uint8_t* vars, uint32_t var, unsigned lane) {
  uint32_t v;
  std::memcpy(&v, vars + f.var_offset(var) + lane * 4, 4);
  return v;
}
}  // namespace

uint32_t state_var(const ir::Function& f, const std::string& name) {
  for (uint32_t v = 0; v < f.vars.size(); ++v)
    if (f.vars[v].name == name) return v;
  return kNoStateVar;
}

LaunchSlots launch_slots(const ir::Function& f) {
  auto slot = [&](const char* name) {
    uint32_t v = state_var(f, name);
    return v == kNoStateVar ? LaunchSlots::kNoSlot : f.var_offset(v);
  };
  return LaunchSlots{slot("r0"), slot("ctaid"), slot("local_base"), slot("abi_writer")};
}

uint32_t attr_slot(const ir::Function& f) {
  uint32_t v = state_var(f, "attr_base");
  return v == kNoStateVar ? LaunchSlots::kNoSlot : f.var_offset(v);
}

uint32_t barrier_slot(const ir::Function& f) {
  uint32_t v = state_var(f, "barrier");
  return v == kNoStateVar ? LaunchSlots::kNoSlot : f.var_offset(v);
}

void init_attr_warp(uint32_t slot, uint8_t* vars, unsigned lanes, uint64_t attr_base, uint64_t stride) {
  if (slot == LaunchSlots::kNoSlot) return;
  lanes = std::min<unsigned>(lanes, ir::kWarpLanes);
  for (unsigned l = 0; l < lanes; ++l) {
    uint64_t a = attr_base + l * stride;
    std::memcpy(vars + slot + l * 8, &a, 8);
  }
}

// The launch ABI's values of one thread: $r0 (tid.x | tid.y << 16 | tid.z <<
// 26), the packed ctaid, and whether it is the thread that writes s[0..0x10).
uint32_t launch_r0(const unsigned tid[3]) { return tid[0] | tid[1] << 16 | tid[2] << 26; }
uint32_t launch_ctaid(const unsigned ctaid[2]) { return (ctaid[0] & 0xffff) | ctaid[1] << 16; }
static uint32_t launch_writer(const unsigned tid[3]) { return (tid[0] | tid[1] | tid[2]) == 0; }

void init_launch_lane(const LaunchSlots& s, uint8_t* vars, unsigned lane, const unsigned tid[3],
                      const unsigned ctaid[2], uint64_t local_base) {
  uint32_t r0 = launch_r0(tid), cta = launch_ctaid(ctaid), writer = launch_writer(tid);
  if (s.r0 != LaunchSlots::kNoSlot) std::memcpy(vars + s.r0 + lane * 4, &r0, 4);
  if (s.ctaid != LaunchSlots::kNoSlot) std::memcpy(vars + s.ctaid + lane * 4, &cta, 4);
  if (s.local_base != LaunchSlots::kNoSlot) std::memcpy(vars + s.local_base + lane * 8, &local_base, 8);
  if (s.abi_writer != LaunchSlots::kNoSlot) std::memcpy(vars + s.abi_writer + lane * 4, &writer, 4);
}

void init_launch_warp(const LaunchSlots& s, uint8_t* vars, unsigned lanes, const unsigned (*tid)[3],
                      const unsigned ctaid[2], uint64_t local_base, uint64_t local_stride) {
  uint32_t r0[ir::kWarpLanes], cta[ir::kWarpLanes], writer[ir::kWarpLanes] = {};
  uint64_t lb[ir::kWarpLanes];
  lanes = std::min<unsigned>(lanes, ir::kWarpLanes);
  uint32_t c = launch_ctaid(ctaid);
  for (unsigned l = 0; l < lanes; ++l) {
    r0[l] = launch_r0(tid[l]);
    cta[l] = c;
    lb[l] = local_base + l * local_stride;
    writer[l] = launch_writer(tid[l]);
  }
  if (s.r0 != LaunchSlots::kNoSlot) std::memcpy(vars + s.r0, r0, 4 * lanes);
  if (s.ctaid != LaunchSlots::kNoSlot) std::memcpy(vars + s.ctaid, cta, 4 * lanes);
  if (s.local_base != LaunchSlots::kNoSlot) std::memcpy(vars + s.local_base, lb, 8 * lanes);
  if (s.abi_writer != LaunchSlots::kNoSlot) std::memcpy(vars + s.abi_writer, writer, 4 * lanes);
}

void init_launch_warp_row(const LaunchSlots& s, uint8_t* vars, unsigned lanes, const unsigned tid0[3],
                          const unsigned ctaid[2], uint64_t local_base, uint64_t local_stride) {
  lanes = std::min<unsigned>(lanes, ir::kWarpLanes);
  if (tid0[0] + lanes > 0x10000) {  // tid.x would carry into tid.y's field: the general form
    unsigned tid[ir::kWarpLanes][3];
    for (unsigned l = 0; l < lanes; ++l) tid[l][0] = tid0[0] + l, tid[l][1] = tid0[1], tid[l][2] = tid0[2];
    init_launch_warp(s, vars, lanes, tid, ctaid, local_base, local_stride);
    return;
  }
  // Whole-warp loops of fixed length (vectorised), then `lanes` lanes copied.
  const uint32_t r00 = launch_r0(tid0), c = launch_ctaid(ctaid);
  uint32_t r0[ir::kWarpLanes], cta[ir::kWarpLanes], writer[ir::kWarpLanes];
  uint64_t lb[ir::kWarpLanes];
  for (unsigned l = 0; l < ir::kWarpLanes; ++l) {
    r0[l] = r00 + l;
    cta[l] = c;
    writer[l] = 0;
    lb[l] = local_base + l * local_stride;
  }
  writer[0] = launch_writer(tid0);  // tid.x + l > 0 in every later lane
  // Through the library's memcpy: inlined copies of a variable size become
  // `rep movsq`, whose start-up cost is most of this function's time. The
  // empty asm hides the size from the compiler.
  size_t n4 = 4 * lanes, n8 = 8 * lanes;
  asm("" : "+r"(n4), "+r"(n8));
  if (s.r0 != LaunchSlots::kNoSlot) std::memcpy(vars + s.r0, r0, n4);
  if (s.ctaid != LaunchSlots::kNoSlot) std::memcpy(vars + s.ctaid, cta, n4);
  if (s.local_base != LaunchSlots::kNoSlot) std::memcpy(vars + s.local_base, lb, n8);
  if (s.abi_writer != LaunchSlots::kNoSlot) std::memcpy(vars + s.abi_writer, writer, n4);
}

void init_launch_lane(const ir::Function& f, uint8_t* vars, unsigned lane, const unsigned tid[3],
                      const unsigned ctaid[2], uint64_t local_base) {
  init_launch_lane(launch_slots(f), vars, lane, tid, ctaid, local_base);
}

// Calls fn(kind, n, var) for every state var of f: kind 'r', 'a' with the
// register number, 'c' with 4 * register + flag (Z S C O), 'x' exited, 'l'
// local_base, 'w' abi_writer.
template <class Fn>
void each_state_var(const ir::Function& f, Fn fn) {
  for (uint32_t v = 0; v < f.vars.size(); ++v) {
    const std::string& nm = f.vars[v].name;
    if (nm == "exited") fn('x', 0u, v);
    else if (nm == "local_base") fn('l', 0u, v);
    else if (nm == "abi_writer") fn('w', 0u, v);
    else if (nm.size() >= 2 && (nm[0] == 'r' || nm[0] == 'a') && nm.find_first_not_of("0123456789", 1) == std::string::npos)
      fn(nm[0], unsigned(std::stoul(nm.substr(1))), v);
    else if (nm.size() == 3 && nm[0] == 'c' && nm[1] >= '0' && nm[1] <= '3')
      for (unsigned k = 0; k < 4; ++k)
        if (nm[2] == kFlagNames[k]) fn('c', unsigned(nm[1] - '0') * 4 + k, v);
  }
}

void init_state_lane(const ir::Function& f, uint8_t* vars, unsigned lane, const ThreadState& st, uint64_t local_base) {
  each_state_var(f, [&](char kind, unsigned n, uint32_t v) {
    switch (kind) {
      case 'r': put<uint32_t>(f, vars, v, lane, st.r[n & 127]); break;
      case 'a': put<uint32_t>(f, vars, v, lane, st.a[n & 7]); break;
      case 'c': put<uint32_t>(f, vars, v, lane, st.c[(n / 4) & 3] >> (n % 4) & 1u); break;
      case 'x': put<uint32_t>(f, vars, v, lane, st.exited); break;
      case 'l': put<uint64_t>(f, vars, v, lane, local_base); break;
      case 'w': put<uint32_t>(f, vars, v, lane, 0); break;
    }
  });
}

void read_lane(const ir::Function& f, const uint8_t* vars, unsigned lane, ThreadState& out) {
  each_state_var(f, [&](char kind, unsigned n, uint32_t v) {
    switch (kind) {
      case 'r': out.r[n & 127] = get32(f, vars, v, lane); break;
      case 'a': out.a[n & 7] = uint16_t(get32(f, vars, v, lane)); break;
      case 'c': {  // one flag bit of $c(n / 4)
        uint8_t& c = out.c[(n / 4) & 3];
        c = uint8_t((c & ~(1u << (n % 4))) | (get32(f, vars, v, lane) & 1u) << (n % 4));
        break;
      }
      case 'x': out.exited = get32(f, vars, v, lane) != 0; break;
    }
  });
}

}  // namespace gpurc::tesla
