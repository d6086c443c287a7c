// Runs every planner the library has on one validated problem, as the C ABI
// would (streaming, grouped with and without a device, the default call's
// choice), and checks each plan with the address model and each refusal for
// a clear status and message.
#pragma once

#include <cstdint>

#include "plan.hpp"
#include "problem.hpp"
#include "scatterptx/scatterptx.h"

namespace scatterptx::fuzz {

// problem: validate_arguments's (pointers included). options may be NULL.
void plan_everything(const detail::Problem& problem, const detail::DeviceLimits& device,
                     const scatterptx_group_options* options, uint64_t workspace_address);

// A Failure the planners or validation threw: a status of the C ABI other
// than SUCCESS, with a message; an internal error (DRIVER) aborts.
void require_clear_failure(const char* where, scatterptx_status status, const char* message);

}  // namespace scatterptx::fuzz
