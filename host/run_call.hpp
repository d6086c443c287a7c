// Enqueueing one call, streaming or grouped, in RECORD or CHECKED index
// mode: what scatterptx_scatter_add and scatterptx_scatter_add_grouped share.
#pragma once

#include <cuda.h>

#include "context_state.hpp"
#include "group_plan.hpp"
#include "problem.hpp"

namespace scatterptx::detail {

// The streaming planner's launches for problem.
void run_streaming(const DriverApi& api, ContextState& state, const Problem& problem, CUstream stream);

// Groups problem's index into workspace (plan.workspace.bytes, 256-byte
// aligned) and executes the grouped plan.
void run_grouped(const DriverApi& api, ContextState& state, const Problem& problem, const GroupPlan& plan,
                 CUdeviceptr workspace, CUstream stream);

}  // namespace scatterptx::detail
