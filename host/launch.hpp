// Launching a plan: tensor maps encoded per launch slice, each kernel's
// argument struct (kernel_params.hpp) filled by name, launch_kernel on the
// caller's stream. A plan over more than 2^31 source rows has several
// slices: all of their parameters are made before the first launch, so a
// failure while making them enqueues nothing; a launch the driver refuses
// after earlier slices were enqueued fails with a message naming the source
// rows of those slices, which stay enqueued.
// No allocation on the device, no synchronisation: capturable in a CUDA graph.
#pragma once

#include <cuda.h>

#include <functional>

#include "context_state.hpp"
#include "launch_gate.hpp"
#include "plan.hpp"
#include "problem.hpp"

namespace scatterptx::detail {

// A plan's launches with every parameter made, tensor maps included, ready
// to enqueue on a stream: a call that queues other work first makes these
// before, so that a failure in making them enqueues nothing. It refers to
// plan and api, which must outlive it.
using PreparedLaunches = std::function<void(CUstream)>;
PreparedLaunches prepare_plan(const DriverApi& api, const ContextState& state, const Problem& problem,
                              const StreamingPlan& plan, CUdeviceptr index_error_slot, const LaunchGate& gate = {});

// prepare_plan, then enqueue on stream.
void launch_plan(const DriverApi& api, const ContextState& state, const Problem& problem, const StreamingPlan& plan,
                 CUdeviceptr index_error_slot, CUstream stream, const LaunchGate& gate = {});

}  // namespace scatterptx::detail
