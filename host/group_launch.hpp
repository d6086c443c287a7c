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

// The default call's check of the index's order: the workspace's plan
// record cleared and its order flag set, then a sample of the first radix
// pass's tiles clears the flag if the index is out of order.
void launch_order_check(const DriverApi& api, const ContextState& state, const Problem& problem,
                        const GroupPlan& plan, CUdeviceptr workspace, CUstream stream);

// Groups problem.index into the workspace at `workspace`: sorted keys and
// source positions, and the plan's record of a bad index. After the order
// check (launch_order_check queued before), every launch runs only if the
// index was out of order.
void launch_grouping(const DriverApi& api, const ContextState& state, const Problem& problem,
                     const GroupPlan& plan, CUdeviceptr workspace, CUstream stream, bool after_order_check = false);

// Executes a grouped plan on problem's out and src: out[key, :] += the rows
// of each group, and every bad index's source position recorded in
// index_error_slot (the smallest wins), as the streaming paths do.
void launch_grouped_execute(const DriverApi& api, const ContextState& state, const Problem& problem,
                            const GroupPlan& plan, CUdeviceptr workspace, CUdeviceptr index_error_slot,
                            CUstream stream, const LaunchGate& gate = {});

}  // namespace scatterptx::detail
