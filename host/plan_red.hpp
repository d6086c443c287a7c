// The red path's planning: the access width, grid and L2 hints of
// ptx/row_red.ptx.in for a problem, and whether AUTO should take TMA instead
// for an input both paths can take. make_plan (plan.cpp) chooses among the
// paths.
#pragma once

#include "plan.hpp"

namespace scatterptx::detail {

// Fills plan with the red path.
void plan_red(const Problem& p, const DeviceLimits& device, StreamingPlan& plan);

// Whether the TMA path is the faster streaming path for an input it can take
// (the measurements: docs/tuning.md#red-or-tma).
bool tma_beats_red(const Problem& p, const DeviceLimits& device);

}  // namespace scatterptx::detail
