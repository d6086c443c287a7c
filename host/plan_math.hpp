// Arithmetic and shared-memory facts the path planners (plan.cpp,
// plan_red.cpp, plan_private.cpp) share.
#pragma once

#include <algorithm>
#include <cstdint>

namespace scatterptx::detail {

constexpr uint32_t kSharedReservedPerCta = 1024;  // sm_90 keeps 1 KB per CTA
constexpr uint32_t kSmemStageAlign = 128;

inline uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// A schedule field's requested value, or the planner's when it is 0.
inline uint32_t pick(uint32_t requested, uint32_t fallback) { return requested != 0 ? requested : fallback; }

inline uint64_t align_up(uint64_t value, uint64_t alignment) { return ceil_div(value, alignment) * alignment; }

inline uint32_t saturate(uint64_t value) { return static_cast<uint32_t>(std::min<uint64_t>(value, UINT32_MAX)); }

}  // namespace scatterptx::detail
