// The grid of TMA schedules --sweep runs for each scenario.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "forced_run.hpp"
#include "scatterptx/scatterptx.h"

namespace scatterptx_bench {

// A CTA's pipeline buffers: warps_per_cta * stages * chunk_bytes.
uint64_t schedule_shared_bytes(const scatterptx_schedule& schedule);

// chunk_bytes {512,...,16384} x stages {2,3,4,6} x warps {1,2,4} x
// ctas_per_sm {0 (the planner's), 4, 8, 16}, without the combinations whose
// pipeline buffers exceed kSweepMaxSharedBytes per CTA.
std::vector<scatterptx_schedule> sweep_schedules();

constexpr uint64_t kSweepMaxSharedBytes = 200 * 1024;

// "chunk=1024 stages=4 warps=2 ctas/sm=8"; a zero field prints as "auto".
std::string describe_schedule(const scatterptx_schedule& schedule);

// One point of a sweep.
struct SweepPoint : ForcedRun {
  scatterptx_schedule schedule{};
};

}  // namespace scatterptx_bench
