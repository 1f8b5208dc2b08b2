#include "ir/cfg_order.h"

#include <algorithm>
#include <utility>

namespace gpurc::ir {

namespace {

// Iterative DFS from the entry over `succs`; returns the post-order and, for
// each retreating edge (to a block still on the stack), its (from, to) pair.
std::vector<BlockId> post_order(const std::vector<std::vector<BlockId>>& succs,
                                std::vector<std::pair<BlockId, BlockId>>* retreating) {
  const size_t nb = succs.size();
  std::vector<BlockId> post;
  if (nb == 0) return post;
  std::vector<uint8_t> state(nb, 0);  // 0 unseen, 1 on stack, 2 done
  std::vector<std::pair<BlockId, size_t>> stack{{0, 0}};
  state[0] = 1;
  while (!stack.empty()) {
    auto& [b, i] = stack.back();
    if (i < succs[b].size()) {
      BlockId s = succs[b][i++];
      if (state[s] == 0) {
        state[s] = 1;
        stack.push_back({s, 0});
      } else if (state[s] == 1 && retreating) {
        retreating->push_back({b, s});
      }
    } else {
      state[b] = 2;
      post.push_back(b);
      stack.pop_back();
    }
  }
  return post;
}

}  // namespace

std::vector<BlockId> schedule_order(const Function& f) {
  const size_t nb = f.blocks.size();
  std::vector<std::vector<BlockId>> succs(nb);
  for (BlockId b = 0; b < nb; ++b)
    for (BlockId s : f.blocks[b].succs)
      if (s < nb) succs[b].push_back(s);

  std::vector<std::pair<BlockId, BlockId>> back;
  std::vector<BlockId> first = post_order(succs, &back);
  if (back.empty()) {
    // No loop: every successor "stays", so the ordered DFS below would visit
    // exactly the successor lists this one did (the common case: PICA200
    // shaders without loops, every pass that asks for an RPO).
    std::reverse(first.begin(), first.end());
    return first;
  }
  std::vector<std::vector<BlockId>> preds(nb);
  for (BlockId b = 0; b < nb; ++b)
    for (BlockId s : succs[b]) preds[s].push_back(b);

  // Loops: for each header, the blocks that reach a retreating edge's source
  // backwards without passing through the header.
  std::vector<BlockId> headers;
  std::vector<std::vector<uint8_t>> body;  // body[k][b]: b is in loop k
  for (auto [from, header] : back) {
    size_t k = std::find(headers.begin(), headers.end(), header) - headers.begin();
    if (k == headers.size()) {
      headers.push_back(header);
      body.emplace_back(nb, 0);
      body.back()[header] = 1;
    }
    std::vector<BlockId> work{from};
    while (!work.empty()) {
      BlockId b = work.back();
      work.pop_back();
      if (body[k][b]) continue;
      body[k][b] = 1;
      for (BlockId p : preds[b]) work.push_back(p);
    }
  }

  // Successors that leave a loop containing the block go first.
  std::vector<std::vector<BlockId>> ordered(nb);
  for (BlockId b = 0; b < nb; ++b) {
    std::vector<BlockId> exits, stays;
    for (BlockId s : succs[b]) {
      bool leaves = false;
      for (size_t k = 0; k < headers.size() && !leaves; ++k) leaves = body[k][b] && !body[k][s];
      (leaves ? exits : stays).push_back(s);
    }
    ordered[b] = std::move(exits);
    ordered[b].insert(ordered[b].end(), stays.begin(), stays.end());
  }
  std::vector<BlockId> order = post_order(ordered, nullptr);
  std::reverse(order.begin(), order.end());
  return order;
}

}  // namespace gpurc::ir
