// The privatised path's planning: whether its per-target sums fit a CTA on
// this device, whether it pays off against the streaming paths, and its
// launches. make_plan (plan.cpp) chooses among the paths.
#pragma once

#include <cstdint>

#include "plan.hpp"

namespace scatterptx::detail {

constexpr uint32_t kPrivateMaxScheduleWarps = 31;  // with the producer, 1024 threads

// The widest schedule that fits, in *out; false when not even a slice of
// heuristics::privatised::kMinSliceElems columns (or all of them, when fewer) fits.
bool fit_private(const Problem& p, const DeviceLimits& device, PrivateSchedule* out);

// Whether AUTO should privatise: few partial sums next to the source rows.
bool private_pays_off(const Problem& p, const DeviceLimits& device, const PrivateSchedule& s);

// Fills plan with the privatised path on schedule s.
void plan_private(const Problem& p, const DeviceLimits& device, const PrivateSchedule& s, StreamingPlan& plan);

}  // namespace scatterptx::detail
