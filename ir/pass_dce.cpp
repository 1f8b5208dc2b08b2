// dce: removes blocks unreachable from the entry (keeping phi operands in
// predecessor order) and pure instructions whose results nothing live uses
// (mark and sweep from effects and terminators, so dead phi cycles go too).
#include "ir/pass_util.h"
#include "ir/passes.h"

namespace gpurc::ir {

using namespace passutil;

void dce(Function& f) {
  if (f.blocks.empty()) return;
  remove_unreachable_blocks(f);
  std::vector<uint8_t> live(f.insts.size(), 0);
  std::vector<ValueId> work;
  for (auto& b : f.blocks)
    for (ValueId v : b.insts)
      if (!op_info(f.insts[v].op).pure) {
        live[v] = 1;
        work.push_back(v);
      }
  while (!work.empty()) {
    ValueId v = work.back();
    work.pop_back();
    for (ValueId a : f.insts[v].args)
      if (!live[a]) {
        live[a] = 1;
        work.push_back(a);
      }
  }
  for (auto& b : f.blocks) {
    std::vector<ValueId> out;
    for (ValueId v : b.insts) {
      if (live[v])
        out.push_back(v);
      else
        kill_inst(f, v);
    }
    b.insts = std::move(out);
  }
}

}  // namespace gpurc::ir
