// A host model of what each launch of a plan reads and writes: from the
// plan's launch slices, grids and schedules and the problem, the address
// ranges every kernel touches, each required to lie inside out, src, index
// or the workspace. The kernels themselves guard per element (an index
// outside [0, out_rows) is skipped, the last chunk or vector is clipped to
// the row); this checks that the host hands them pointers, counts and
// layouts for which those guards are enough. A violation prints what and
// aborts, which libFuzzer reports as a crash.
#pragma once

#include <cstdint>

#include "group_plan.hpp"
#include "plan.hpp"
#include "problem.hpp"

namespace scatterptx::fuzz {

// Every launch of a streaming plan for a problem validated with its pointers.
void check_streaming_plan(const detail::Problem& problem, const detail::DeviceLimits& device,
                          const detail::StreamingPlan& plan);

// Every launch of a grouped plan (nothing for STREAMING) for a problem
// validated with its pointers, its workspace at workspace_address.
void check_group_plan(const detail::Problem& problem, const detail::DeviceLimits& device,
                      const detail::GroupPlan& plan, uint64_t workspace_address);

// The workspace layout of a grouped plan, from shapes alone (what
// scatterptx_plan_workspace_size answers): every region's size computed
// without wrapping, 256-aligned, inside workspace.bytes and apart.
void check_workspace_layout(const detail::Problem& problem, const detail::GroupPlan& plan);

// Aborts with the message, printing the problem, when ok is false.
void require(bool ok, const char* what, const detail::Problem& problem);

}  // namespace scatterptx::fuzz
