// Out-of-range indices: the kernels skip such rows and record the smallest
// offending source position in a per-context slot (context_state.hpp).
// RECORD mode leaves it there for scatterptx_take_index_error(); CHECKED mode
// uses a slot of its own, waits for the launch and reports it at once.
#pragma once

#include <functional>

#include <cuda.h>

#include <cstdint>

#include "context_state.hpp"
#include "plan.hpp"
#include "problem.hpp"

namespace scatterptx::detail {

// Throws INVALID_ARGUMENT for a CHECKED problem on a stream being captured
// (it would wait for the result): called before anything is enqueued or
// allocated for the call.
void refuse_checked_in_capture(const DriverApi& api, const Problem& problem, CUstream stream);

// Runs enqueue(slot) in CHECKED mode: the launches it enqueues on stream
// record bad indices in a cleared slot of their own; synchronises stream,
// then throws INDEX_OUT_OF_RANGE naming the first offending position and its
// value.
void launch_checked(const DriverApi& api, ContextState& state, const Problem& problem,
                    const std::function<void(CUdeviceptr slot)>& enqueue, CUstream stream);

// Throws INDEX_OUT_OF_RANGE for the bad source position `position` (read
// back from a record): names it and its value in problem's index.
[[noreturn]] void fail_index_out_of_range(const DriverApi& api, const Problem& problem, uint64_t position);

// Synchronises the context, then takes the RECORD-mode slot (reads and
// clears it in one atomic exchange on the device): the smallest offending
// position since the last take, or -1.
int64_t take_recorded_index_error(const DriverApi& api, ContextState& state);

}  // namespace scatterptx::detail
