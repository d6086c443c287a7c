// One execution with a forced choice (a schedule of the sweep, a path of
// --path-choice): whether the library took it, and if so its plan, check
// and timing.
#pragma once

#include <string>
#include <vector>

#include "reference_check.hpp"
#include "timing.hpp"

namespace scatterptx_bench {

struct ForcedRun {
  bool accepted = false;  // false: the library refused the forced choice for this problem
  std::string rejection;  // its message
  std::string plan;
  CheckResult check;
  TimingResult timing;
};

// The fastest accepted, correct run; nullptr when there is none.
template <typename Run>
const Run* fastest_run(const std::vector<Run>& runs) {
  const Run* best = nullptr;
  for (const Run& run : runs) {
    if (!run.accepted || !run.check.ok) continue;
    if (best == nullptr || run.timing.median_ms < best->timing.median_ms) best = &run;
  }
  return best;
}

}  // namespace scatterptx_bench
