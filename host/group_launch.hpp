// Grouped execution's launches: building the grouping of an index (the
// radix passes) and executing a plan on src and out (the summing kernels).
// Stream-ordered, no allocation, no synchronisation: capturable.
#pragma once

#include <cuda.h>

#include "context_state.hpp"
#include "group_plan.hpp"
#include "problem.hpp"

namespace scatterptx::detail {

// Groups problem.index into the workspace at `workspace`: sorted keys and
// source positions, and the plan's record of a bad index.
void launch_grouping(const DriverApi& api, const ContextState& state, const Problem& problem,
                     const GroupPlan& plan, CUdeviceptr workspace, CUstream stream);

// out[key, :] += the rows of each group, with problem's out and src; folds
// the plan's bad-index record into index_error_slot.
void launch_grouped_sums(const DriverApi& api, const ContextState& state, const Problem& problem,
                         const GroupPlan& plan, CUdeviceptr workspace, CUdeviceptr index_error_slot,
                         CUstream stream);

}  // namespace scatterptx::detail
