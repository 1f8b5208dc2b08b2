// CUDA 1.x/2.x text .cubin files (what nvcc -cubin wrote for sm_1x before
// the ELF format): nested "name { ... }" blocks of "key = value" lines.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace gpurc::tesla {

struct CubinConst {
  std::string name;      // empty for a kernel's anonymous constant segment
  std::string segname;   // "const", "reloc", ...
  int segnum = 0;        // the c[] space index the segment lives in
  uint32_t offset = 0;   // byte offset in that space
  uint32_t bytes = 0;
  std::vector<uint32_t> mem;  // initial contents (may be shorter than bytes)
};

struct CubinKernel {
  std::string name;
  uint32_t lmem = 0, smem = 0, reg = 0, bar = 0;  // local bytes per thread, shared bytes, registers, barriers
  std::vector<uint32_t> code;                     // bincode words
  std::vector<CubinConst> consts;
};

struct Cubin {
  std::string architecture;   // "sm_10" .. "sm_13"
  std::string abiversion, modname;
  std::vector<CubinConst> consts;   // module-level __constant__ data
  // "reloc" blocks: module-level __device__ variables. `bytes` is the
  // variable's size; c<segnum>[offset] (c14 in nvcc 1.0 output) is a 32-bit
  // slot the loader fills with the variable's g[] address (code reads it
  // there, then accesses g14[address]). No initial data.
  std::vector<CubinConst> relocs;
  std::vector<CubinKernel> kernels;
  const CubinKernel* find(const std::string& name) const;
};

bool looks_like_cubin(const std::vector<uint8_t>& bytes);
bool parse_cubin(const std::string& text, Cubin& out, std::string& err);

}  // namespace gpurc::tesla
