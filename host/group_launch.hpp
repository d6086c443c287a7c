// Grouped execution's launches: building the grouping of an index (the
// radix passes) and executing a plan on src and out (the summing kernels).
// Stream-ordered, no allocation, no synchronisation: capturable.
#pragma once

#include <cuda.h>

#include "context_state.hpp"
#include "group_plan.hpp"
#include "launch_gate.hpp"
#include "problem.hpp"

namespace scatterptx::detail {

// Groups problem.index into the workspace at `workspace`: sorted keys and
// source positions, and the plan's record of a bad index. With
// check_order, the first pass also sets the workspace's order flag and
// every later launch runs only if the index was out of order.
void launch_grouping(const DriverApi& api, const ContextState& state, const Problem& problem,
                     const GroupPlan& plan, CUdeviceptr workspace, CUstream stream, bool check_order = false);

// Executes a grouped plan on problem's out and src: out[key, :] += the rows
// of each group, and every bad index's source position recorded in
// index_error_slot (the smallest wins), as the streaming paths do.
void launch_grouped_execute(const DriverApi& api, const ContextState& state, const Problem& problem,
                            const GroupPlan& plan, CUdeviceptr workspace, CUdeviceptr index_error_slot,
                            CUstream stream, const LaunchGate& gate = {});

}  // namespace scatterptx::detail
