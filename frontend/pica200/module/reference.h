// The PICA200 reference interpreter as an rt::launch executable, so the
// reference engine runs through the same launch as the translation (launch.cpp:
// run_vertices / run_geometry, run_reference_each).
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "frontend/pica200/interp.h"
#include "ir/abi.h"

namespace gpurc::pica {

// What a warp's vars hold (the launch's init hook writes it): where its 32
// vertices are (the caller's states, run in place, as are their GsStates)
// and the index of lane 0. The interpreter's state is the VertexState
// itself, so nothing else lives in the vars.
struct ReferenceWarp {
  VertexState* states;
  GsState* gs;  // geometry shaders, else null
  size_t first;
};

// Where the executable reports what the lanes did.
class ReferenceObserver {
 public:
  virtual ~ReferenceObserver() = default;
  // Checked before each vertex: true = run no more vertices (a batch stops
  // once any vertex faulted).
  virtual bool stopped() const = 0;
  // Vertex `vertex` ran (r.ok: to END). True = the warp stops here with a
  // fault (the executable reports it to the launch); false = go on with the
  // next vertex.
  virtual bool lane_done(size_t vertex, const RunResult& r) = 0;
};

// Lanes run one after the other, each from its state to END or a fault.
// Immutable during a launch; thread-safe as long as the observer is.
class ReferenceExecutable final : public ir::Executable {
 public:
  ReferenceExecutable(const Interpreter& it, uint32_t entry, uint64_t budget, ReferenceObserver& observer,
                      std::atomic<uint64_t>* steps)
      : it_(it), entry_(entry), budget_(budget), observer_(observer), steps_(steps) {}
  size_t frame_bytes() const override { return 0; }
  bool frame_needs_zero() const override { return false; }
  // Reads only the ReferenceWarp the init hook writes: nothing to zero.
  bool var_read_ranges(std::vector<std::pair<uint32_t, uint32_t>>& out) const override {
    out.clear();
    return true;
  }
  ir::RunStatus run(ir::WarpContext& ctx) const override;

 private:
  const Interpreter& it_;
  uint32_t entry_;
  uint64_t budget_;
  ReferenceObserver& observer_;
  std::atomic<uint64_t>* steps_;  // executed instructions, summed (null: not counted)
};

}  // namespace gpurc::pica
