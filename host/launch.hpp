// Launching a plan: tensor maps encoded per launch slice, parameters packed
// in the order of the manifest, cuLaunchKernel on the caller's stream.
// No allocation, no synchronisation: capturable in a CUDA graph.
#pragma once

#include <cuda.h>

#include "context_state.hpp"
#include "plan.hpp"
#include "problem.hpp"

namespace scatterptx::detail {

void launch_plan(const DriverApi& api, const ContextState& state, const Problem& problem, const Plan& plan,
                 CUdeviceptr index_error_slot, CUstream stream);

// The TMA path over grouped positions: position j reduces src row
// source_rows[j] into out[keys[j]] (u32 each; a key of out_rows or above
// skips the row and records source_rows[j]). plan is a TMA plan of problem
// with a single launch slice; variant a row_tma_gather variant.
void launch_tma_gathered(const DriverApi& api, const ContextState& state, const Problem& problem,
                         const Plan& plan, std::size_t variant, CUdeviceptr keys, CUdeviceptr source_rows,
                         CUdeviceptr index_error_slot, CUstream stream);

}  // namespace scatterptx::detail
