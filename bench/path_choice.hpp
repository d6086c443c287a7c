// --path-choice: every streaming kernel path timed on the same inputs as the
// planner's own choice, to show how far AUTO is from the fastest path.
#pragma once

#include <string>
#include <vector>

#include "forced_run.hpp"
#include "scatterptx/scatterptx.h"

namespace scatterptx_bench {

// The paths a forced run can take, in the order they are timed.
const std::vector<scatterptx_path>& forced_paths();

// One forced path on one scenario.
struct PathPoint : ForcedRun {
  scatterptx_path path = SCATTERPTX_PATH_AUTO;
};

// "tma" from a plan text "path=tma variant=..."; "" when there is no path.
std::string plan_path_name(const std::string& plan);

}  // namespace scatterptx_bench
