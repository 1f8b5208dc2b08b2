// Enumerated-field names (g13-encodings.md §3.7, §3.9, §3.12, §3.13, §5).
#include "frontend/g13/names.h"

#include <cstring>

namespace gpurc::g13 {
namespace {

struct EnumEntry { uint64_t v; const char* name; };
struct EnumTable {
  const char* desc;      // descriptor name, or "*" for every descriptor
  const char* operand;
  const EnumEntry* entries;
  size_t n;
};

const EnumEntry kConvertMode[] = {{0, "u8_to_f"}, {1, "s8_to_f"}, {4, "f_to_u16"}, {5, "f_to_s16"},
                                  {6, "u16_to_f"}, {7, "s16_to_f"}, {8, "f_to_u32"}, {9, "f_to_s32"},
                                  {10, "u32_to_f"}, {11, "s32_to_f"}};
const EnumEntry kConvertRound[] = {{0, "rtz"}, {1, "rte"}};
const EnumEntry kFormats[] = {{0, "i8"}, {1, "i16"}, {2, "i32"}, {3, "f16"}, {4, "u8norm"}, {5, "s8norm"},
                              {6, "u16norm"}, {7, "s16norm"}, {8, "rgb10a2"}, {10, "srgba8"},
                              {12, "rg11b10f"}, {13, "rgb9e5"}, {14, "rg11b10f.rtz"}, {15, "rgb9e5.rtz"}};
// Memory component masks: 0 (no component) prints nothing, as applegpu's
// MASK_DESCRIPTIONS has it. Texture masks have no name for 0 (printed as 0).
const EnumEntry kMask[] = {{0, ""}, {1, "x"}, {2, "y"}, {3, "xy"}, {4, "z"}, {5, "xz"}, {6, "yz"}, {7, "xyz"},
                           {8, "w"}, {9, "xw"}, {10, "yw"}, {11, "xyw"}, {12, "zw"}, {13, "xzw"},
                           {14, "yzw"}, {15, "xyzw"}};
const EnumEntry kSampleMask[] = {{1, "x"}, {2, "y"}, {3, "xy"}, {4, "z"}, {5, "xz"}, {6, "yz"}, {7, "xyz"},
                                 {8, "w"}, {9, "xw"}, {10, "yw"}, {11, "xyw"}, {12, "zw"}, {13, "xzw"},
                                 {14, "yzw"}, {15, "xyzw"}};
const EnumEntry kSignedness[] = {{0, "signed"}, {1, "unsigned"}};
const EnumEntry kForwarding[] = {{0, ""}, {1, "forward"}};
const EnumEntry kElide[] = {{0, ""}, {1, "elide"}};
const EnumEntry kInterpolation[] = {{0, "center"}, {1, "sample"}, {2, "centroid"}, {3, "sample"}};
const EnumEntry kTexDim[] = {{0, "tex_1d"}, {1, "tex_1d_array"}, {2, "tex_2d"}, {3, "tex_2d_array"},
                             {4, "tex_2d_ms"}, {5, "tex_3d"}, {6, "tex_cube"}, {7, "tex_cube_array"},
                             {8, "tex_2d_ms_array"}};
const EnumEntry kLod[] = {{0, "auto_lod"}, {1, "auto_lod_bias"}, {2, "lod_min"}, {5, "auto_lod_bias"},
                          {6, "lod_min"}, {4, "lod_grad"}, {12, "lod_grad_min"}};
const EnumEntry kGather[] = {{0, "none"}, {1, "compare"}, {2, "gather_r"}, {3, "gather_depth"},
                             {6, "gather_g"}, {10, "gather_b"}, {14, "gather_a"}};
const EnumEntry kAtomicOp[] = {{0, "add"}, {1, "sub"}, {2, "xchg"}, {3, "cmpxchg"}, {4, "umin"}, {5, "imin"},
                               {6, "umax"}, {7, "imax"}, {8, "and"}, {9, "or"}, {10, "xor"}};
const EnumEntry kPbeRound[] = {{0, "rte"}, {1, "rtz"}};
const EnumEntry kAsyncKind[] = {{0, "copy_1d"}, {1, "copy_2d"}};
// Texture op mode bits 30-31: 0 = sample (printed as nothing), 2 = LOD query.
const EnumEntry kTexMode[] = {{0, ""}, {2, "query_lod"}};
const EnumEntry kMapOp[] = {{0, "unmap"}, {1, "map"}};
const EnumEntry kMapTarget[] = {{0, "target0"}, {1, "target1"}};

#define T(d, o, e) EnumTable{d, o, e, sizeof(e) / sizeof(e[0])}
const EnumTable kTables[] = {
    T("convert", "mode", kConvertMode), T("convert", "round", kConvertRound),
    T("*", "F", kFormats), T("*", "mask", kMask), T("*", "Ou", kSignedness),
    T("iter", "forwarding", kForwarding), T("iterproj", "forwarding", kForwarding),
    T("iter", "elide", kElide), T("iterproj", "elide", kElide),
    T("iter", "interpolation", kInterpolation), T("iterproj", "interpolation", kInterpolation),
    T("*", "n", kTexDim), T("*", "lod", kLod), T("*", "q6", kGather),
    T("atomic", "op", kAtomicOp), T("threadgroup_atomic", "op", kAtomicOp),
    T("image_write", "round", kPbeRound), T("image_write_block", "round", kPbeRound),
    T("async_store", "F", kAsyncKind), T("async_load", "F", kAsyncKind), T("map", "target", kMapTarget), T("map", "op", kMapOp),
    T("texture_sample", "mask", kSampleMask), T("texture_load", "mask", kSampleMask),
    T("texture_sample", "mode", kTexMode), T("texture_load", "mode", kTexMode),
};
#undef T

const EnumTable* find_table(std::string_view desc, std::string_view operand) {
  // Descriptor-specific tables win over the "*" ones.
  for (const EnumTable& t : kTables)
    if (operand == t.operand && desc == t.desc) return &t;
  for (const EnumTable& t : kTables)
    if (operand == t.operand && std::strcmp(t.desc, "*") == 0) return &t;
  return nullptr;
}

struct SrName { unsigned n; const char* name; };
const SrName kSr[] = {
    {0, "threadgroup_position_in_grid.x"}, {1, "threadgroup_position_in_grid.y"},
    {2, "threadgroup_position_in_grid.z"}, {4, "threads_per_threadgroup.x"},
    {5, "threads_per_threadgroup.y"}, {6, "threads_per_threadgroup.z"},
    {8, "dispatch_threads_per_threadgroup.x"}, {9, "dispatch_threads_per_threadgroup.y"},
    {10, "dispatch_threads_per_threadgroup.z"}, {20, "core_index"}, {21, "vm_slot"},
    {48, "thread_position_in_threadgroup.x"}, {49, "thread_position_in_threadgroup.y"},
    {50, "thread_position_in_threadgroup.z"}, {51, "thread_index_in_threadgroup"},
    {52, "thread_index_in_simdgroup"}, {53, "simdgroup_index_in_threadgroup"},
    {56, "active_thread_index_in_quadgroup"}, {58, "active_thread_index_in_simdgroup"},
    {60, "internal_coverage_mask"}, {62, "backfacing"}, {63, "is_active_thread"},
    {80, "thread_position_in_grid.x"}, {81, "thread_position_in_grid.y"}, {82, "thread_position_in_grid.z"},
    {124, "input_sample_mask"}, {144, "opfifo_cmd"}, {146, "opfifo_data_l"}, {147, "opfifo_data_h"},
};

const char* const kICond[16] = {"ueq", "ult", "ugt", nullptr, "seq", "slt", "sgt", nullptr,
                                "nueq", "ugte", "ulte", nullptr, "nseq", "sgte", "slte", nullptr};
const char* const kFCond[16] = {"eq", "lt", "gt", "ltn", nullptr, "gte", "lte", "gtn",
                                "neq", "nlt", "ngt", "nltn", nullptr, "ngte", "nlte", "ngtn"};

struct Alias { const char* tt; const char* name; };
const Alias kBinaryAliases[] = {{"0001", "and"}, {"0111", "or"}, {"0110", "xor"}, {"1110", "nand"}, {"1000", "nor"}, {"1001", "xnor"}};
const Alias kUnaryAliases[] = {{"1010", "not"}, {"0101", "mov"}};

}  // namespace

const char* enum_name(std::string_view desc, std::string_view operand, uint64_t v) {
  const EnumTable* t = find_table(desc, operand);
  if (!t) return nullptr;
  for (size_t i = 0; i < t->n; ++i)
    if (t->entries[i].v == v) return t->entries[i].name;
  return nullptr;
}

bool enum_value(std::string_view desc, std::string_view operand, std::string_view name, uint64_t& v) {
  const EnumTable* t = find_table(desc, operand);
  if (!t) return false;
  for (size_t i = 0; i < t->n; ++i)
    if (name == t->entries[i].name) {
      v = t->entries[i].v;
      return true;
    }
  return false;
}

const char* sr_name(unsigned n) {
  for (const SrName& s : kSr)
    if (s.n == n) return s.name;
  return nullptr;
}

bool sr_number(std::string_view name, unsigned& n) {
  for (const SrName& s : kSr)
    if (name == s.name) {
      n = s.n;
      return true;
    }
  return false;
}

const char* cond_name(bool is_float, unsigned v) { return v < 16 ? (is_float ? kFCond : kICond)[v] : nullptr; }

bool cond_value(bool is_float, std::string_view name, unsigned& v) {
  for (unsigned i = 0; i < 16; ++i) {
    const char* n = cond_name(is_float, i);
    if (n && name == n) {
      v = i;
      return true;
    }
  }
  return false;
}

const char* bitop_binary_alias(std::string_view tt) {
  for (const Alias& a : kBinaryAliases)
    if (tt == a.tt) return a.name;
  return nullptr;
}

const char* bitop_unary_alias(std::string_view tt) {
  for (const Alias& a : kUnaryAliases)
    if (tt == a.tt) return a.name;
  return nullptr;
}

bool bitop_alias_table(std::string_view alias, std::string& tt, bool& unary) {
  for (const Alias& a : kBinaryAliases)
    if (alias == a.name) {
      tt = a.tt;
      unary = false;
      return true;
    }
  for (const Alias& a : kUnaryAliases)
    if (alias == a.name) {
      tt = a.tt;
      unary = true;
      return true;
    }
  return false;
}

}  // namespace gpurc::g13
