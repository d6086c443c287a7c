// Which device a call's memory lives on. A launch runs on the current
// context's device; device memory of another GPU would fault there, or reach
// a peer's memory the caller did not mean, so each entry point refuses it
// before anything is enqueued. Host memory (pinned or mapped), managed memory
// and addresses the driver does not know are left to the caller, as before.
#pragma once

#include <cuda.h>

#include "context_state.hpp"
#include "driver_api.hpp"
#include "problem.hpp"

namespace scatterptx::detail {

// Throws INVALID_ARGUMENT naming the first of out, src, index and weights
// that is device memory of another device than state's; an empty problem
// passes whatever its pointers.
void require_pointers_on_device(const DriverApi& api, const ContextState& state, const Problem& p);

}  // namespace scatterptx::detail
