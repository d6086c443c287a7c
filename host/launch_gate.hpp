// A device flag that decides whether a launch runs (every row and grouping
// kernel takes one; gen/gate_snippets.py): the default call queues both the
// grouped kernels and the streaming plan, and the index's order picks.
#pragma once

#include <cuda.h>

#include <cstdint>

namespace scatterptx::detail {

// The order flag's value while the index reads in order; the check writes 0.
constexpr uint32_t kIndexInOrder = 0xFFFFFFFFu;

struct LaunchGate {
  CUdeviceptr flag = 0;  // u32; 0: the launch always runs
  uint32_t runs_when = 0;

  template <typename Params>
  void apply(Params& k) const {
    k.gate = flag;
    k.gate_value = runs_when;
  }
};

}  // namespace scatterptx::detail
